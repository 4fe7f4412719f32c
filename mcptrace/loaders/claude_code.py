"""Claude Code MCP logs: ``mcp-logs-<server>/<ISO time>.jsonl`` and ``claude --debug`` logs.

Claude Code (closed source) writes, per project and MCP server, one JSON Lines file
per session under ``~/.cache/claude-cli-nodejs/<cwd slug>/mcp-logs-<server>/``
(``~/Library/Caches/...`` on macOS), named by the session's start time::

    {"debug":"Starting connection with timeout of 30000ms",
     "timestamp":"2026-07-07T12:47:33.016Z","sessionId":"6c47fe2e-...","cwd":"/home/dev/app"}
    {"error":"Server stderr: weather server running on stdio","timestamp":...}
    {"debug":"Successfully connected to stdio server in 1064ms","timestamp":...}
    {"debug":"Calling MCP tool: a2a_send","timestamp":"2026-07-07T12:49:41.279Z",...}
    {"debug":"Tool 'a2a_send' completed successfully in 505ms",
     "timestamp":"2026-07-07T12:49:41.783Z",...}
    {"debug":"Tool 'lazy_show' failed after 0s: {\\"error\\":\\"Task not found\\"}",...}

(entries shown wrapped; each is one line).

No specification exists; the shape comes from public descriptions of real files:
``anthropics/claude-code`` issue #72 (where the logs are); code and notes in public
repositories that quote file contents (found by the quoted strings; their repository
names were not recoverable from the search index): a TypeScript scanner reading the
shipped 2.1.227 binary (an ``{"error": text}`` entry echoed by ``Tool '<name>'
failed after <d>: <same text>`` is a tool result with ``isError``, not a transport
failure), a test with "lines copied from Claude Code v2.1.285 client MCP logs"
(``Tool 'get' completed successfully in 8s``, ``Connection established with
capabilities: {...}``) and a research note listing the fields (``debug`` or
``error``, ``timestamp``, ``sessionId``, ``cwd``) and the lifecycle lines
(``Starting connection with timeout of Nms``, ``Successfully connected to stdio
server in Nms``, ``Connection failed after Nms: MCP error -32000: Connection
closed``, ``Sending SIGINT to MCP server process``); and the debug-log lines quoted
in ``Apicurio/apicurio-registry-vscode-plugin-poc``
(``docs/ai-integration/debugging/HOW_TO_VIEW_CLAUDE_CODE_LOGS.md``). Durations are
``Nms`` below a second and whole seconds (``8s``) above, so latencies measured from
them alone are coarse.

The ``claude --debug`` log (``~/.claude/debug/<session id>.txt``) carries the same
texts for every server, one line each: ``<ISO time> [DEBUG] MCP server "<name>":
<text>``; lines without a time continue the line above (a ``Server stderr:`` line's
continuations are more of the server's stderr). It is read too (its other
lines are ``log`` rows of session ``claude-code@<tag>``, with no server). Older
releases wrote ``<time>.txt`` files; that they held a JSON array of the same entries
is a guess, read as such.

Rows: every line is a row: ``Server stderr: ...`` entries are ``stderr`` rows (the
server's stderr, prefix removed), everything else ``log`` rows (blank and
unreadable lines ``blank``/``invalid``). The tool-call lines also become call
records (:attr:`LoadResult.calls`): method ``tools/call``, target the tool, client
``claude-code``; requested at the matching earlier ``Calling MCP tool: <name>``
line (first in, first out per tool) or, without one, at the completion time minus
the logged duration; answered at the completion line. The latency is the time
between the two lines when both have a time, else the logged duration. ``completed
successfully`` is ok, ``failed after`` is ``tool_error`` when the failure text was
logged as the tool's result (see above), else ``error`` (with the code of an
``MCP error -32001: ...`` text). A call with no completion line is ``unanswered``.

Sessions: each ``Starting connection`` line starts ``<server>#<n>@<tag>`` (n = 1,
2, ... per server; ``#0`` before the first), the tag being the first 8 characters
of Claude Code's ``sessionId`` (else the file name, cut to 8 characters when it is
a session UUID, as debug logs are named) so that files of different
Claude Code sessions never share a key. The server is named by the debug line, else
by the ``mcp-logs-<server>`` folder the file is in. ``Successfully connected to
<transport> server`` (from 2.1.222: ``Successfully connected (transport: <transport>)``)
sets the session's transport (stdio, or http for sse/http).
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import PurePath
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.loaders.base import MAX_DURATION_MS, Head, LoadContext, LoadResult, line_list
from mcptrace.loaders.mcpjam import value_lines
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw, json_type
from mcptrace.loaders.tool_calls import ToolCall as _Call
from mcptrace.loaders.tool_calls import calls_frame

NAME = "claude-code"
DESCRIPTION = (
    "Claude Code MCP logs: mcp-logs-<server>/*.jsonl ({debug|error, timestamp, sessionId}) "
    "and claude --debug logs"
)

CLIENT = "claude-code"

#: a debug-log line; the console's copy (``claude --debug`` on a terminal) has no time
_DEBUG_LINE = re.compile(
    r"(?:(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) )?\[(?P<level>[A-Z]+)\] "
    r"(?P<text>.*)$"
)
#: where Claude Code writes its debug logs, and how it names them (the session's UUID)
_DEBUG_FOLDER = re.compile(r"[/\\]\.claude[/\\]debug[/\\]")
_MCP_PREFIX = re.compile(r'MCP server "(?P<server>[^"]*)":? ?')
_START = re.compile(r"Starting connection\b")
#: ``Successfully connected to stdio server in 12ms``; from 2.1.222 ``Successfully
#: connected (transport: stdio) in 60ms``
_CONNECTED = re.compile(
    r"Successfully connected (?:to (?P<transport>[\w-]+(?: \w+)?) server\b"
    r"|\(transport: (?P<named>[\w-]+)\))"
)
_CALLING = re.compile(r"Calling MCP tool: (?P<tool>.+?)\s*$")
_COMPLETED = re.compile(
    r"Tool '(?P<tool>[^']*)' completed successfully in (?P<dur>[\d.hms ]+?)\s*$"
)
_FAILED = re.compile(
    r"Tool '(?P<tool>[^']*)' failed after (?P<dur>[\d.hms ]+?): (?P<why>.*)$", re.S
)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|h|m|s)")
_STDERR = "Server stderr: "
_FOLDER = re.compile(r"^mcp-logs-(?P<server>.+)$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_UNIT_MS = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


def _is_entry(value: Any) -> bool:
    return (
        type(value) is dict
        and (type(value.get("debug")) is str or type(value.get("error")) is str)
        and ("timestamp" in value or "sessionId" in value or "cwd" in value)
        and "method" not in value
        and "jsonrpc" not in value
    )


def sniff(head: Head) -> int:
    whole = head.whole
    if type(whole) is list and whole and all(_is_entry(e) for e in whole[:5]):
        return 95
    objs = head.json_objects()
    if objs and len(objs) * 2 > len(head.lines):
        hits = sum(1 for o in objs if _is_entry(o))
        return 95 if hits == len(objs) else (70 if hits * 2 > len(objs) else 0)
    # `claude --debug` text: the grammar alone is common; MCP server lines make it ours
    lines = [m for m in map(_DEBUG_LINE.match, head.lines) if m is not None]
    if lines and any(_MCP_PREFIX.match(m["text"]) for m in lines):
        return 85
    # a debug log may start with dozens of lines about plugins and settings before its
    # first MCP line: its place and name (the session's UUID) tell it then
    name = PurePath(head.source).name.removesuffix(".txt")
    timed = sum(1 for m in lines if m["ts"] is not None)
    if timed * 2 > len(head.lines) and (
        _DEBUG_FOLDER.search(head.source) or (_UUID.match(name) and head.source.endswith(".txt"))
    ):
        return 80
    return 0


def parse_duration(text: str) -> float | None:
    """Milliseconds of a Claude Code duration (``119ms``, ``8s``, ``2m 3s``), else None."""
    parts = _DURATION.findall(text)
    if not parts or _DURATION.sub("", text).strip():
        return None
    return sum(float(n) * _UNIT_MS[unit] for n, unit in parts)


def _micros(ts: str | None) -> int | None:
    if ts is None:
        return None
    try:
        dt = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // _US


@dataclass
class _Entry:
    """One log line, whatever the file's shape."""

    line: int
    raw: str
    ts: str | None
    server: str | None
    is_error: bool
    text: str
    tag: str | None = None
    #: a warning kept on the row, or the problem of an ``invalid`` line
    note: str | None = None
    #: entry (a log entry of an MCP server), blank, invalid, other (a debug-log line
    #: about something else) or cont (the next line of a multi-line debug record)
    role: str = "entry"


@dataclass
class _State:
    default_server: str | None
    default_tag: str
    count: dict[str, int] = field(default_factory=dict)
    sessions: dict[str, str] = field(default_factory=dict)
    transports: dict[str, str] = field(default_factory=dict)
    pending: dict[tuple[str, str], deque[_Call]] = field(default_factory=dict)
    calls: list[_Call] = field(default_factory=list)
    #: per server: texts of `error` entries, and of `Tool '...' failed after ...: <text>`
    error_texts: dict[str, set[str]] = field(default_factory=dict)
    failure_texts: dict[str, set[str]] = field(default_factory=dict)
    last: Envelope | None = None
    #: the row kind of the latest debug-log line, which its continuation lines share
    last_kind: str = "log"
    #: lines of completions whose duration is longer than :data:`MAX_DURATION_MS`
    impossible_durations: list[int] = field(default_factory=list)

    def tool_result(self, server: str | None, text: str) -> bool:
        """An `error` entry repeated by a tool-failure line: the tool's isError result."""
        key = server or ""
        return text in self.error_texts.get(key, ()) and text in self.failure_texts.get(key, ())

    def session(self, server: str | None, tag: str | None, start: bool) -> str:
        name = server or self.default_server or "mcp"
        label = tag or self.default_tag
        key = f"{name}@{label}"
        if start:
            self.count[key] = self.count.get(key, 0) + 1
        n = self.count.get(key, 0)
        return f"{name}#{n}@{label}"


def _folder_server(source: str) -> str | None:
    parent = PurePath(source).parent.name
    m = _FOLDER.match(parent)
    return m["server"] if m else None


def _entries_jsonl(content: Content, server: str | None) -> list[_Entry]:
    out: list[_Entry] = []
    n_lines = len(content.lines)
    for lineno, data in enumerate(content.lines, 1):
        raw, utf8_problem = decode_raw(data)
        if not raw.strip():
            out.append(_Entry(lineno, raw, None, server, False, "", role="blank"))
            continue
        try:
            rec, _, mend_note = _json.loads_mending(data)
        except _json.JSONDecodeError as exc:
            problem = utf8_problem or _json.describe_error(exc)
            if lineno == n_lines and not content.data.endswith(b"\n"):
                problem = f"incomplete last entry (the log is written live): {problem}"
            out.append(_Entry(lineno, raw, None, server, False, "", note=problem, role="invalid"))
            continue
        out.append(_entry_of(rec, lineno, raw, server, utf8_problem or mend_note))
    return out


def _entry_of(rec: Any, line: int, raw: str, server: str | None, note: str | None) -> _Entry:
    if type(rec) is not dict or not ("debug" in rec or "error" in rec):
        why = "without `debug` or `error`" if type(rec) is dict else f"a JSON {json_type(rec)}"
        return _Entry(
            line, raw, None, server, False, "", note=f"log entry is {why}", role="invalid"
        )
    is_error = "error" in rec and "debug" not in rec
    text = rec["error"] if is_error else rec["debug"]
    ts = rec.get("timestamp")
    sid = rec.get("sessionId")
    return _Entry(
        line,
        raw,
        ts if type(ts) is str else None,
        server,
        is_error,
        text if type(text) is str else _json.dumps(text),
        tag=sid[:8] if type(sid) is str and sid else None,
        note=note,
    )


def _entries_array(content: Content, doc: list[Any], server: str | None) -> list[_Entry]:
    where = value_lines(content.data, 1)
    out = []
    for i, rec in enumerate(doc):
        out.append(_entry_of(rec, where.get((i,), i + 2), _json.dumps(rec), server, None))
    return out


def _entries_debug(content: Content) -> list[_Entry]:
    out: list[_Entry] = []
    last: _Entry | None = None
    for lineno, data in enumerate(content.lines, 1):
        raw, utf8_problem = decode_raw(data)
        m = _DEBUG_LINE.match(raw)
        if m is None:
            if not raw.strip():
                out.append(_Entry(lineno, raw, None, None, False, "", role="blank"))
                continue
            # the continuation of a multi-line record (e.g. a JSON dump)
            server = last.server if last else None
            out.append(
                _Entry(lineno, raw, last.ts if last else None, server, False, raw, role="cont")
            )
            continue
        text = m["text"]
        p = _MCP_PREFIX.match(text)
        server = None
        if p is not None:
            server, text = p["server"], text[p.end() :]
        level = m["level"]
        entry = _Entry(lineno, raw, m["ts"], server, level == "ERROR", text, note=utf8_problem)
        if server is None:
            entry.role = "other"  # not an MCP line
        out.append(entry)
        last = entry
    return out


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(source=ctx.source, tz=ctx.tz, format=NAME, default_session=ctx.stem)
    n_lines = len(content.lines)
    folder = _folder_server(ctx.source)
    entries: list[_Entry]
    stripped = content.data.lstrip()
    mend_note: str | None = None
    if stripped[:1] == b"[":
        try:
            doc, _, mend_note = _json.loads_mending(content.data)
        except _json.JSONDecodeError:
            doc = None
        if type(doc) is list:
            entries = _entries_array(content, doc, folder)
        elif _DEBUG_LINE.match(
            next(ln for ln in content.lines if ln.strip()).decode("utf-8", "replace")
        ):
            # `[DEBUG] MCP server "x": ...`: the console's copy of a debug log
            entries = _entries_debug(content)
        else:
            entries = _entries_jsonl(content, folder)
    elif stripped[:1] == b"{" or not stripped:
        entries = _entries_jsonl(content, folder)
    else:
        entries = _entries_debug(content)

    tag = ctx.stem[:8] if _UUID.match(ctx.stem) else ctx.stem
    state = _State(default_server=folder, default_tag=tag)
    # the error texts a tool-failure line repeats: those `error` entries were tool results
    for e in entries:
        if e.role not in ("entry", "cont"):
            continue
        m = _FAILED.match(e.text)
        if m is not None:
            state.failure_texts.setdefault(e.server or "", set()).add(m["why"].strip())
        elif e.is_error:
            state.error_texts.setdefault(e.server or "", set()).add(e.text.strip())
    for e in entries:
        _add(rows, state, e)

    # pending calls never completed
    for queue in state.pending.values():
        state.calls.extend(queue)
    messages = rows.frame()
    if state.transports:
        mapping = pl.DataFrame(
            {"session": list(state.transports), "_t": list(state.transports.values())}
        )
        messages = (
            messages.join(mapping, on="session", how="left")
            .with_columns(
                transport=pl.coalesce(
                    pl.col("_t").cast(messages.schema["transport"]), pl.col("transport")
                )
            )
            .drop("_t")
        )
    notes = [mend_note] if mend_note else []
    if folder is None and not any(e.server for e in entries):
        notes.append(
            "no server name: the file is not in an mcp-logs-<server> folder and its lines "
            "do not name one"
        )
    derived = sum(1 for c in state.calls if c.derived_request)
    if derived:
        notes.append(
            f"{derived} call(s) without a `Calling MCP tool` line: request time derived from "
            "the logged duration"
        )
    if state.impossible_durations:
        lines = state.impossible_durations
        notes.append(
            f"{len(lines)} call(s) logged with an impossibly long duration "
            f"(line {line_list(lines)}): "
            "their latency is unknown"
        )
    return LoadResult(
        messages=messages,
        lines=n_lines,
        notes=notes,
        calls=calls_frame(state.calls, ctx.source, CLIENT),
    )


def _add(rows: RowBuilder, state: _State, e: _Entry) -> None:
    if e.role == "blank":
        rows.add_other(e.line, e.raw, "blank", note=e.note)
        return
    if e.role == "invalid":
        rows.add_invalid(e.line, e.raw, e.note or "unreadable log line")
        return
    text = e.text
    if e.role == "cont":
        # the next line of a multi-line debug record: same session, same time
        env = state.last or Envelope(session=f"{CLIENT}@{state.default_tag}")
        # a server's stderr of several lines goes on after its `Server stderr:` line
        rows.add_other(e.line, e.raw, state.last_kind, env, text=text)
        return
    state.last_kind = "log"
    if e.role == "other":
        # a debug-log line about something else than MCP servers: the file's own session
        env = Envelope(ts_text=e.ts, session=f"{CLIENT}@{state.default_tag}")
        state.last = env
        rows.add_other(e.line, e.raw, "log", env, text=text)
        return
    start = _START.match(text) is not None
    session = state.session(e.server, e.tag, start)
    server = e.server or state.default_server
    env = Envelope(ts_text=e.ts, session=session, server=server)
    state.last = env
    note = e.note
    if e.is_error and text.startswith(_STDERR):
        rows.add_other(e.line, e.raw, "stderr", env, note, text=text[len(_STDERR) :])
        state.last_kind = "stderr"
        return
    if e.is_error and state.tool_result(e.server, text.strip()):
        note = "; ".join(filter(None, [note, "a tool's isError result, as Claude Code logs it"]))
    rows.add_other(e.line, e.raw, "log", env, note, text=text)
    m = _CONNECTED.match(text)
    if m is not None:
        word = (m["transport"] or m["named"]).lower()
        state.transports[session] = "stdio" if word == "stdio" else "http"
        return
    m = _CALLING.match(text)
    if m is not None:
        call = _Call(session, server, m["tool"], request_line=e.line, request_ts=_micros(e.ts))
        state.pending.setdefault((session, call.tool), deque()).append(call)
        return
    done = _COMPLETED.match(text)
    failed = _FAILED.match(text) if done is None else None
    m = done or failed
    if m is None:
        return
    tool = m["tool"]
    queue = state.pending.get((session, tool))
    call = queue.popleft() if queue else _Call(session, server, tool)
    call.response_line, call.response_ts = e.line, _micros(e.ts)
    duration = parse_duration(m["dur"])
    if duration is not None and duration > MAX_DURATION_MS:
        # corrupt: it would put the request before any time the tables hold
        state.impossible_durations.append(e.line)
        duration = None
    if call.request_ts is not None and call.response_ts is not None:
        call.latency_ms = (call.response_ts - call.request_ts) / 1000
    else:
        call.latency_ms = duration
        if call.request_line is None:
            call.request_line = e.line
            call.derived_request = True
            if call.response_ts is not None and duration is not None:
                call.request_ts = call.response_ts - round(duration * 1000)
    if done is not None:
        call.outcome = "ok"
    else:
        why = m["why"].strip()
        if state.tool_result(e.server, why):
            call.outcome = "tool_error"
        else:
            call.failed(why)
    state.calls.append(call)
