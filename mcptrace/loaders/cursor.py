"""Cursor's MCP logs: the "MCP Logs" / "MCP user-<server>" output channels.

Cursor (a VS Code fork) writes them in VS Code's output-log grammar, a local
wall-clock time (no zone) and a level, under
``<Cursor>/logs/<session>/window<N>/exthost/``: ``anysphere.cursor-always-local/Cursor
MCP.log`` (early 2025), ``anysphere.cursor-retrieval/MCP Logs.log`` (mid 2025), one
``anysphere.cursor-mcp/MCP user-<server>.log`` per server (Cursor 2)::

    2025-02-25 01:21:18.278 [info] db10: Calling tool 'getConsoleLogs'
    2025-05-12 15:48:10.684 [error] user-mysql: 2025-05-12 15:48:10,683 - mcp.server - INFO - ...
    2025-12-09 11:34:34.842 [info] Calling tool 'codex' with toolCallId: toolu_0184...

Cursor logs what it does with each server, not the JSON-RPC messages, so every line
is a ``log`` row, except the server's stderr, which Cursor copies at level
``error`` (``[error]`` lines that are not Cursor's own, and the lines without a time
that continue them): ``stderr`` rows. ``Client error for command <JSON.parse
error>`` is Cursor failing to parse a line of the server's stdout (``Unexpected
token 'S', "Starting MCP server" is not valid JSON``): an invalid row from the
server, stdout pollution on stdio.

The server: the line's prefix, ``user-<name>:`` (mid 2025) or the last four
characters of that identifier (``ysql:`` for ``user-mysql``, early 2025), matched to
the longer prefixes in the file; Cursor 2 writes none and the file is named after
the server (``MCP user-<name>.log``, ``mcp-server-user-<name>.log``). ``user-`` (a
server of the user's own configuration) is left out of the name.

Sessions: each ``Handling CreateClient action`` (or ``ReloadClient``) starts
``<server>#<n>`` (n = 1, 2, ... per server; ``#0`` before the first), and so does a
``Starting new stdio process with command:`` or ``Connecting to <transport> server``
that follows no such line (a restart Cursor logs without one); ``Successfully
connected to <transport> server`` gives its transport (``stdio``; ``sse`` and
``streamableHttp`` are http).

Calls: ``Calling tool '<tool>'`` (Cursor 2 adds ``with toolCallId: <id>``, kept as
the call's id) is a ``tools/call`` request, answered by the next ``Successfully called
tool '<tool>'`` (ok) or ``Error calling tool '<tool>': <why>`` (error, with the code of
an ``MCP error -32000: ...`` text) of that session, first in first out per tool; a
call never answered is ``unanswered``. They become call records
(:attr:`LoadResult.calls`), client ``cursor``, timed by their lines.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import PurePath

import polars as pl

from mcptrace import _json
from mcptrace.loaders.base import Head, LoadContext, LoadResult
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw
from mcptrace.loaders.tool_calls import ToolCall, calls_frame
from mcptrace.loaders.vscode import LINE, TS_FORMAT, marked_lines

NAME = "cursor"
DESCRIPTION = "Cursor MCP logs (MCP Logs.log, MCP user-<server>.log): tool calls and stderr"

CLIENT = "cursor"

#: ``user-mysql: `` or ``ysql: ``: the server prefix, before Cursor 2
_PREFIX = re.compile(r"(?P<prefix>user-[^:\s]+|[\w.-]{4}): ")
#: what Cursor itself says about a server (its lines, not the server's stderr)
_OWN = re.compile(
    r"Handling \w+ action|Calling tool '|Successfully called tool '|Error calling tool '"
    r"|Starting new stdio process|getOrCreateClient|Reusing existing|Client closed for command"
    r"|Client error for command|Error in MCP:|Failed to \w+ client|No server info found"
    r"|Successfully connected to \w+ server|Connecting to \w+ server|Creating \w+ transport"
    r"|Storing \w+ client|CreateClient completed|Connected to \w+ server|Found \d+ tools"
    r"|listOfferings|Deleting client|Shutting down"
)
#: lines only Cursor writes: enough to claim a file
_MARKERS = re.compile(
    r"Handling (?:CreateClient|ReloadClient|CallTool|ListOfferings|GetInstructions) action"
    r"|Calling tool '|Successfully called tool '|Error calling tool '"
    r"|Starting new stdio process with command|Client closed for command|Client error for command"
    r"|Successfully connected to (?:stdio|sse|streamableHttp) server"
)
#: a client for the server is created: a new session
_CREATE = re.compile(r"Handling (?:CreateClient|ReloadClient) action")
#: the process is started or the connection opened: a new session unless the latest
#: one (just created) has none yet
_LAUNCH = re.compile(r"Starting new stdio process with command|Connecting to \w+ server")
_CONNECTED = re.compile(r"Successfully connected to (?P<transport>\w+) server")
_CALLING = re.compile(r"Calling tool '(?P<tool>[^']*)'(?: with toolCallId: (?P<id>\S+))?")
_CALLED = re.compile(r"Successfully called tool '(?P<tool>[^']*)'")
_CALL_FAILED = re.compile(r"Error calling tool '(?P<tool>[^']*)': ?(?P<why>.*)$", re.S)
_CLIENT_ERROR = "Client error for command "
#: JavaScript's JSON.parse errors: the stdout line Cursor could not read
_PARSE_ERROR = re.compile(
    r"is not valid JSON|Unexpected token|in JSON at position|Unexpected end of JSON input"
)
_FILE = re.compile(r"^(?:MCP |mcp-server-)(?P<id>.+?)(?:\.\d+)?$")


def _cursor_line(msg: str) -> bool:
    prefix = _PREFIX.match(msg)
    return _MARKERS.match(msg, prefix.end() if prefix else 0) is not None


def sniff(head: Head) -> int:
    hits, markers = marked_lines(head, _cursor_line)
    # above the VS Code loader's 90 for the same grammar: these lines are Cursor's own
    return 92 if markers and hits * 2 > len(head.lines) else 0


def _name(identifier: str) -> str:
    return identifier.removeprefix("user-")


@dataclass
class _Sessions:
    count: dict[str, int] = field(default_factory=dict)
    current: dict[str, str] = field(default_factory=dict)
    transports: dict[str, str] = field(default_factory=dict)
    #: sessions whose process was started (or connection opened)
    launched: set[str] = field(default_factory=set)

    def launch(self, server: str) -> None:
        key = self.current.get(server)
        if key is None or key in self.launched:
            key = self.start(server)
        self.launched.add(key)

    def key(self, server: str) -> str:
        return self.current.get(server) or f"{server}#0"

    def start(self, server: str) -> str:
        n = self.count.get(server, 0) + 1
        self.count[server] = n
        self.current[server] = key = f"{server}#{n}"
        return key


def _prefixes(lines: list[bytes]) -> dict[str, str]:
    """Each line prefix of the file -> its server: the long ``user-<name>`` prefixes,
    and the four-character ones that end exactly one of them."""
    found: set[str] = set()
    for data in lines:
        m = LINE.match(data.decode("utf-8", errors="replace"))
        msg = m["msg"] or "" if m is not None else ""
        p = _PREFIX.match(msg)
        # a short prefix only before Cursor's own words: "INFO: " may start a stderr line
        if p is not None and (p["prefix"].startswith("user-") or _OWN.match(msg, p.end())):
            found.add(p["prefix"])
    full = {p for p in found if p.startswith("user-")}
    names = {p: _name(p) for p in full}
    for short in found - full:
        ends = [p for p in full if p.endswith(short)]
        names[short] = _name(ends[0]) if len(ends) == 1 else short
    return names


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(
        source=ctx.source,
        format=NAME,
        default_session=ctx.stem,
        transport="stdio",
        ts_format=TS_FORMAT,
        ts_quality="local",
        tz=ctx.tz,
    )
    lines = content.lines
    prefixes = _prefixes(lines)
    m_file = _FILE.match(PurePath(ctx.source).name.removesuffix(".log"))
    file_server = _name(m_file["id"]) if m_file else ctx.stem
    sessions = _Sessions()
    pending: dict[tuple[str, str], deque[ToolCall]] = {}
    calls: list[ToolCall] = []
    record: Envelope | None = None
    record_kind = "log"
    for lineno, data in enumerate(lines, 1):
        raw, utf8_problem = decode_raw(data)
        m = LINE.match(raw)
        if m is None:
            # a line of a multi-line record (the server's stderr, a stack): part of it
            env = Envelope(
                ts_text=record.ts_text if record and raw.strip() else None,
                session=record.session if record else sessions.key(file_server),
                server=record.server if record else file_server,
            )
            kind = record_kind if raw.strip() else "blank"
            rows.add_other(lineno, raw, kind, env, utf8_problem, text=raw if raw.strip() else None)
            continue
        msg = m["msg"] or ""
        prefix = _PREFIX.match(msg)
        server = file_server
        if prefix is not None and prefix["prefix"] in prefixes:
            server = prefixes[prefix["prefix"]]
            msg = msg[prefix.end() :]
        if _CREATE.match(msg):
            sessions.start(server)
        elif _LAUNCH.match(msg):
            sessions.launch(server)
        session = sessions.key(server)
        env = Envelope(ts_text=m["ts"], session=session, server=server)
        record = env
        own = _OWN.match(msg) is not None
        record_kind = "stderr" if m["level"] == "error" and not own else "log"
        if msg.startswith(_CLIENT_ERROR) and _PARSE_ERROR.search(msg):
            env.direction = "s2c"
            problem = (
                "the server wrote a line to stdout that is not JSON (Cursor: "
                f"{msg[len(_CLIENT_ERROR) :]})"
            )
            rows.add_invalid(lineno, raw, problem, env, message=msg[len(_CLIENT_ERROR) :])
            continue
        rows.add_other(lineno, raw, record_kind, env, utf8_problem, text=msg)
        if (connected := _CONNECTED.match(msg)) is not None:
            word = connected["transport"]
            sessions.transports[session] = "stdio" if word == "stdio" else "http"
        elif (calling := _CALLING.match(msg)) is not None:
            # Cursor's toolCallId, a string: kept as JSON text, as every id is
            rid = _json.dumps(calling["id"]) if calling["id"] else None
            call = ToolCall(session, server, calling["tool"], id=rid, request_line=lineno)
            pending.setdefault((session, call.tool), deque()).append(call)
        elif (ended := _CALLED.match(msg) or _CALL_FAILED.match(msg)) is not None:
            queue = pending.get((session, ended["tool"]))
            call = queue.popleft() if queue else ToolCall(session, server, ended["tool"])
            call.response_line = lineno
            if ended.re is _CALLED:
                call.outcome = "ok"
            else:
                call.failed(ended["why"].strip())
            calls.append(call)
    for queue in pending.values():
        calls.extend(queue)  # never answered
    messages = rows.frame()
    return LoadResult(
        messages=_with_transports(messages, sessions.transports),
        lines=len(lines),
        calls=_timed(calls_frame(calls, ctx.source, CLIENT), messages),
    )


def _with_transports(messages: pl.DataFrame, transports: dict[str, str]) -> pl.DataFrame:
    if not transports:
        return messages
    http = [s for s, t in transports.items() if t == "http"]
    return messages.with_columns(
        transport=pl.when(pl.col("session").is_in(http))
        .then(pl.lit("http"))
        .otherwise(pl.col("transport"))
        .cast(messages.schema["transport"])
    )


def _timed(calls: pl.DataFrame, messages: pl.DataFrame) -> pl.DataFrame:
    """The calls timed by the rows of their lines (their local times read as the rows'
    are) and their latency: the time between the two lines. Every line is one row, in
    line order, so a line's row is found by position."""
    if calls.is_empty():
        return calls
    ts = messages["ts"]
    return calls.with_columns(
        request_ts=ts.gather(calls["request_line"] - 1),
        response_ts=ts.gather(calls["response_line"] - 1),
    ).with_columns(
        latency_ms=(pl.col("response_ts") - pl.col("request_ts")).dt.total_microseconds() / 1000
    )
