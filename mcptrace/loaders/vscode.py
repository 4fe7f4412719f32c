"""VS Code MCP output logs: the "MCP: <label>" channel, ``mcpServer.<id>.log``.

Every record starts with a local wall-clock time (no zone) and a level::

    2026-01-12 10:05:11.252 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,...}
    2026-01-12 10:05:12.608 [warning] [server stderr] octo-mcp 0.9.3 ready on stdio
    2026-01-12 10:09:46.871 [warning] Failed to parse message: "debug: token cache warmed"

``[editor -> server]`` is c2s and ``[server -> editor]`` s2c (VS Code 1.99:
``[Client Says]`` / ``[Server Says]``); they are only written when the channel
is at Debug or Trace (or the server runs in dev mode). VS Code writes a message
there only once it has parsed it, so one whose text is not JSON is a log line cut
or damaged (an invalid row that says so, not the server's fault). ``[server
stderr]`` lines are the server's stderr, one per line. ``Failed to parse message:
"<line>"`` is text the server sent that is not JSON (a stdout line of a stdio
server): an invalid row holding the unquoted line. Everything else is a ``log``
row; lines without a timestamp continue the record above them.

Transport: ``http`` when the log shows VS Code reaching the server over HTTP
(``405 status sending message to http://...``, ``Error sending message to http...``,
``Fetching http... with options``, ``Error reading from async stream``, ``Populated
auth metadata``), else ``stdio``. A log is one server's channel.

Times are read in ``ctx.tz`` (``--tz``), else as UTC, with quality ``local``.
Sessions: each ``Starting server <label>`` (not ``Starting server from ...
extension host``) starts ``<label>#<n>``, n = 1, 2, ... per label; earlier rows
are ``<server>#0``, the server named by the first ``Starting server`` line, else
by the file name (``mcpServer.<collection>.<name>.log``, ``mcp-<name>.log``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mcptrace import _json
from mcptrace.loaders.base import Head, LoadContext, LoadResult
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw

NAME = "vscode"
DESCRIPTION = "VS Code MCP output log (mcpServer.*.log, channel at Debug for traffic)"

#: VS Code's output-log line (Cursor's logs, a fork's, share it)
LINE = re.compile(
    r"(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}) \[(?P<level>[a-z]+)\](?: (?P<msg>.*))?$"
)
TS_FORMAT = "%Y-%m-%d %H:%M:%S%.3f"
_TRAFFIC = re.compile(
    r"\[(?P<marker>editor -> server|server -> editor|Client Says|Server Says)\] ?(?P<body>.*)$"
)
_DIRECTIONS = {
    "editor -> server": "c2s",
    "Client Says": "c2s",
    "server -> editor": "s2c",
    "Server Says": "s2c",
}
_STDERR = re.compile(r"\[server stderr\] ?(?P<text>.*)$")
_PARSE_FAILED = "Failed to parse message: "
_START = re.compile(r"Starting server (?P<label>.+?)\s*$")
_FROM_HOST = re.compile(r"from .+ extension host$")
_MARKERS = re.compile(
    r"\[(?:editor -> server|server -> editor|Client Says|Server Says|server stderr)\]"
    r"|Connection state: |Starting server |Stopping server |Server command line: "
    r"|Waiting for server to respond|Discovered \d+ tools|Failed to parse message: "
    r"|Error reading from async stream|\d{3} status sending message to |Populated auth metadata"
    r"|Server exited before responding|Tool list changed, refreshing tools"
)
#: what VS Code logs only for a server it reaches over HTTP (Streamable HTTP or SSE):
#: its requests, the SSE fallback, the stream it reads, OAuth discovery
_HTTP = re.compile(
    rb"\] (?:\d{3} status sending message to https?://|Error sending message to https?://"
    rb"|Fetching https?://\S+ with options|Error reading from async stream"
    rb"|Populated auth metadata)"
)
_LOG_FILE = re.compile(r"mcpServer\..*\.(?P<name>[^.]+)$")


def marked_lines(head: Head, marked: Callable[[str], bool]) -> tuple[int, int]:
    """How many head lines are in VS Code's log grammar, and how many of those have a
    message that is ``marked``."""
    hits = markers = 0
    for line in head.lines:
        m = LINE.match(line)
        if m is not None:
            hits += 1
            markers += marked(m["msg"] or "")
    return hits, markers


def sniff(head: Head) -> int:
    hits, markers = marked_lines(head, lambda msg: _MARKERS.match(msg) is not None)
    if markers:
        return 90
    # every VS Code output channel uses this grammar: not enough to claim the file
    return 30 if hits * 2 > len(head.lines) else 0


def _start_label(msg: str) -> str | None:
    """The label of a ``Starting server <label>`` line (not ``... extension host``)."""
    m = _START.match(msg)
    if m is None or _FROM_HOST.match(m["label"]):
        return None
    return m["label"]


def _file_server(ctx: LoadContext) -> str:
    stem = ctx.stem
    m = _LOG_FILE.match(stem)
    if m is not None:
        return m["name"]
    if stem.startswith("mcp-") and len(stem) > 4:
        return stem[4:]
    return stem


def _unquote(text: str) -> str:
    """The line VS Code JSON-quoted in ``Failed to parse message: "..."``."""
    try:
        value = _json.loads(text)
    except _json.JSONDecodeError:
        value = None
    if type(value) is str:
        return value
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


def load(content: Content, ctx: LoadContext) -> LoadResult:
    http = _HTTP.search(content.data) is not None
    rows = RowBuilder(
        source=ctx.source,
        format=NAME,
        default_session=ctx.stem,
        transport="http" if http else "stdio",
        ts_format=TS_FORMAT,
        ts_quality="local",
        tz=ctx.tz,
    )
    lines = content.lines
    server = None
    for data in lines:
        m = LINE.match(data.decode("utf-8", errors="replace"))
        if m is not None and (label := _start_label(m["msg"] or "")) is not None:
            server = label
            break
    if server is None:
        server = _file_server(ctx)
    counts: dict[str, int] = {}
    session = f"{server}#0"
    record: Envelope | None = None  # the latest record, for its continuation lines
    record_kind = "log"
    line_match = LINE.match
    for lineno, data in enumerate(lines, 1):
        raw, utf8_problem = decode_raw(data)
        m = line_match(raw)
        if m is None:
            if not raw.strip():
                env = Envelope(session=session, server=server)
                rows.add_other(lineno, raw, "blank", env, utf8_problem)
            else:
                # a multi-line record (an Error with its stack): part of the record above
                env = Envelope(
                    ts_text=record.ts_text if record else None, session=session, server=server
                )
                rows.add_other(lineno, raw, record_kind, env, utf8_problem, text=raw)
            continue

        msg = m["msg"] or ""
        label = _start_label(msg)
        if label is not None:
            server = label
            counts[label] = counts.get(label, 0) + 1
            session = f"{label}#{counts[label]}"
        env = Envelope(ts_text=m["ts"], session=session, server=server)
        record = env
        record_kind = "log"

        traffic = _TRAFFIC.match(msg)
        if traffic is not None:
            env.direction = _DIRECTIONS[traffic["marker"]]
            body = traffic["body"]
            try:
                _json.loads_mending(body)
            except _json.JSONDecodeError as exc:
                # VS Code logs a message once parsed: unreadable here, the log was damaged
                why = _json.describe_error(exc)
                problem = f"log line cut or damaged: VS Code logs only messages it parsed ({why})"
                if utf8_problem:
                    problem = f"{utf8_problem}; {problem}"
                rows.add_invalid(lineno, raw, problem, env, message=body)
                continue
            rows.add_text(lineno, raw, body, env, utf8_problem)
            continue
        stderr = _STDERR.match(msg)
        if stderr is not None:
            record_kind = "stderr"
            rows.add_other(lineno, raw, "stderr", env, utf8_problem, text=stderr["text"])
            continue
        if msg.startswith(_PARSE_FAILED):
            line = _unquote(msg[len(_PARSE_FAILED) :])
            try:
                _json.loads(line)
            except _json.JSONDecodeError as exc:
                why = _json.describe_error(exc)
                problem = (
                    f"the server sent text that is not JSON ({why})"
                    if http
                    else f"the server wrote a line to stdout that is not JSON ({why})"
                )
            else:
                problem = (
                    "the server sent a message VS Code could not parse"
                    if http
                    else "the server wrote a line to stdout that VS Code could not parse"
                )
            if utf8_problem:
                problem = f"{utf8_problem}; {problem}"
            env.direction = "s2c"
            rows.add_invalid(lineno, raw, problem, env, message=line)
            continue
        rows.add_other(lineno, raw, "log", env, utf8_problem, text=msg)
    return LoadResult(messages=rows.frame(), lines=len(lines))
