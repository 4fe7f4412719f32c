"""Claude Desktop MCP logs: ``mcp-server-NAME.log`` (one server) and ``mcp.log`` (all).

Host lines start with a JavaScript ``toISOString()`` time (UTC, ``Z``) and two
bracket fields whose order depends on the file::

    2026-01-12T09:41:03.561Z [weather] [info] Message from client: {...} { metadata: undefined }
    2026-01-12T09:41:03.561Z [info] [weather] Message from client: {...}
    2024-12-02T10:00:00.000Z [info] Attempting to connect to MCP server weather...

The level is whichever bracket holds a level word (``info``, ``error``...), not a
position. ``Message from client:`` is host to server (c2s), ``Message from
server:`` server to host (s2c); the sender, not the message kind. Builds from
about 2025-07 append `` { metadata: undefined }`` (stripped before parsing), cut
long messages in the middle (``...[N chars truncated]...``, an invalid row) and,
from about 2026-07, log only a summary (``method="tools/call" id=2 params``,
``id=2 result(1 blocks)``), from which a minimal message is reconstructed.

Every other host line is a ``log`` row. Lines without a timestamp are the
server's stderr in a per-server file, except the continuation lines of a
multi-line host record (the ``Using MCP server command: ... {`` ... ``} %o``
dump), which are ``log`` rows of that record; in ``mcp.log`` every such line is
a continuation (stderr is not written there).

Sessions: each ``Initializing server...`` (oldest ``mcp.log``: ``Attempting to
connect to MCP server X...``) starts session ``<server>#<n>``, n = 1, 2, ... per
server in the file; earlier rows are ``<server>#0``. Rows of different servers
interleave in ``mcp.log``, so sessions are tracked per server (in the oldest
``mcp.log``, a line naming its server, ``Connected to MCP server X!`` or ``MCP server
X disconnected.``, goes to that server; other lines to the latest attempt's). When a server is
launched again before its previous launch exchanged any message or ended (the
host sometimes starts two processes within a second, both using id 0), the
traffic of the two processes cannot be told apart: it all goes to the newer
session and the file gets a note (not in the oldest ``mcp.log``, which logs no
traffic).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.loaders import accel
from mcptrace.loaders.base import Head, LoadContext, LoadResult
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import (
    Envelope,
    RowBuilder,
    decode_raw,
    fill_context,
    read_times,
)
from mcptrace.schema import MESSAGES

NAME = "claude-desktop"
DESCRIPTION = "Claude Desktop MCP logs: mcp.log and mcp-server-NAME.log (stderr kept)"

_LEVELS = frozenset({"info", "error", "warn", "warning", "debug", "trace", "verbose", "fatal"})
_HOST = re.compile(
    r"(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z) "
    r"\[(?P<a>[^\]]*)\](?: \[(?P<b>[^\]]*)\])?(?: (?P<msg>.*))?$"
)
_MESSAGE = re.compile(r"Message from (?P<who>client|server): ?(?P<body>.*)$")
#: host lines saying a launch is over (so a relaunch right after it is no overlap)
_ENDED = (
    "Client transport closed",
    "Server transport closed",
    "Shutting down server",
    "Server disconnected",
)
_TRAILER = " { metadata: undefined }"
_TRUNCATED = re.compile(r"\.\.\.\[(?P<n>\d+) chars truncated\]\.\.\.")
_ID = r'(?P<id>"(?:[^"\\]|\\.)*"|\S+)'
#: content-less summaries (2026-07 onward): ``method="x" id=2 params`` / ``id=2 result(1 blocks)``
_SUMMARY_METHOD = re.compile(r'method="(?P<method>[^"]*)"(?: id=' + _ID + r")?(?: .*)?$")
_SUMMARY_REPLY = re.compile(r"id=" + _ID + r" (?P<kind>result|error)\b.*$")
_ATTEMPT = re.compile(r"Attempting to connect to MCP server (?P<server>.+?)\.\.\.$")
#: oldest mcp.log lines that name their server (launches of several interleave)
_NAMED = re.compile(
    r"Connected to MCP server (?P<server>.+?)!$|MCP server (?P<gone>.+?) disconnected\."
)
_DUMP_END = re.compile(r"\}(?: %o)?\s*$")
_FILE_SERVER = re.compile(r"mcp-server-(?P<name>.+?)(?:\.log)?(?:\.\d+)?$")
_MARKERS = re.compile(
    r"Message from (?:client|server):|Initializing server|Server started and connected"
    r"|Using MCP server command|Using built-in Node\.js for MCP server|Shutting down server"
    r"|(?:Client|Server) transport closed|Server disconnected|Attempting to connect to MCP server"
    r"|Connected to MCP server"
)
_DIRECTIONS = {"client": "c2s", "server": "s2c"}
_RECONSTRUCTED = "content not logged by Claude Desktop; reconstructed from the summary line"


def sniff(head: Head) -> int:
    hits = markers = 0
    for line in head.lines:
        m = _HOST.match(line)
        if m is None:
            continue
        b = m["b"]
        if m["a"].lower() not in _LEVELS and (b is None or b.lower() not in _LEVELS):
            continue
        hits += 1
        if _MARKERS.match(m["msg"] or ""):
            markers += 1
    if markers:
        return 90
    # the grammar alone fits other Node apps' logs too: not enough to claim the file
    return 30 if hits * 2 > len(head.lines) else 0


def _level_first(a: str, b: str | None, hint: bool | None) -> bool | None:
    """Whether bracket ``a`` is the level (``[level] [server]``); None when undecidable."""
    a_level = a.lower() in _LEVELS
    if b is None:
        return True if a_level else None
    b_level = b.lower() in _LEVELS
    if a_level != b_level:
        return a_level
    return hint


def _file_shape(lines: list[bytes]) -> bool | None:
    """True for ``mcp.log`` (level first or no server field), False for a per-server file."""
    for data in lines:
        m = _HOST.match(data.decode("utf-8", errors="replace"))
        if m is None:
            continue
        first = _level_first(m["a"], m["b"], None)
        if first is not None:
            return first
    return None


@dataclass
class _Sessions:
    """Session keys per server: ``<server>#<n>``, ``#0`` before the first launch."""

    default: str
    count: dict[str, int] = field(default_factory=dict)
    current: dict[str, str] = field(default_factory=dict)
    started_at: dict[str, int] = field(default_factory=dict)
    exchanged: set[str] = field(default_factory=set)
    ended: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def key(self, server: str | None) -> str:
        if server is None:
            return self.default
        return self.current.get(server) or f"{server}#0"

    def start(self, server: str, lineno: int, *, messages_here: bool = True) -> str:
        """A new session of ``server``. ``messages_here``: the file logs the traffic (the
        oldest mcp.log does not, so a launch there never looks as if it exchanged any)."""
        previous = self.current.get(server)
        n = self.count.get(server, 0) + 1
        key = f"{server}#{n}"
        overlap = previous not in self.exchanged and previous not in self.ended
        if previous is not None and overlap and messages_here:
            self.notes.append(
                f"server {server!r} was launched again at line {lineno} before the launch at "
                f"line {self.started_at[server]} exchanged any message (overlapping launches): "
                f"the traffic of both processes is attributed to session {key!r}"
            )
        self.count[server] = n
        self.current[server] = key
        self.started_at[server] = lineno
        return key


def _summary_message(body: str) -> dict[str, Any] | None:
    """The minimal message a content-less summary line stands for, or None."""
    m = _SUMMARY_METHOD.match(body)
    if m is not None:
        msg: dict[str, Any] = {"jsonrpc": "2.0"}
        if m["id"] is not None:
            msg["id"] = _summary_id(m["id"])
        msg["method"] = m["method"]
        return msg
    m = _SUMMARY_REPLY.match(body)
    if m is not None:
        return {"jsonrpc": "2.0", "id": _summary_id(m["id"]), m["kind"]: {}}
    return None


def _summary_id(text: str) -> Any:
    """``2`` is the integer 2 and ``"abc"`` the string abc; anything else is kept as text."""
    try:
        return _json.loads(text)
    except _json.JSONDecodeError:
        return text


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(
        source=ctx.source, tz=ctx.tz, format=NAME, default_session=ctx.stem, transport="stdio"
    )
    lines = content.lines
    aggregate = bool(_file_shape(lines))
    m_file = _FILE_SERVER.match(ctx.stem)
    file_server: str | None = m_file["name"] if m_file else None
    if not aggregate:
        # a per-server file holds one server: name it from its first host line
        for data in lines:
            m = _HOST.match(data.decode("utf-8", errors="replace"))
            if m is not None and _level_first(m["a"], m["b"], False) is False:
                file_server = m["a"]
                break
    sessions = _Sessions(default=ctx.stem)
    bodies = _Bodies()
    old_server: str | None = None  # oldest mcp.log: the server of the latest connect attempt
    record: Envelope | None = None  # the latest host record, for its continuation lines
    in_dump = False
    truncated = reconstructed = 0
    host_match = _HOST.match
    for lineno, data in enumerate(lines, 1):
        raw, utf8_problem = decode_raw(data)
        m = host_match(raw)
        if m is None:
            if aggregate or in_dump:
                # mcp.log has no stderr: a line without a timestamp continues the record above
                env = Envelope(
                    ts_text=record.ts_text if record and raw.strip() else None,
                    session=record.session if record else sessions.key(file_server),
                    server=record.server if record else file_server,
                )
            else:
                env = Envelope(session=sessions.key(file_server), server=file_server)
            if in_dump or (aggregate and raw.strip()):
                if in_dump and _DUMP_END.match(raw):
                    in_dump = False
                rows.add_other(lineno, raw, "log", env, utf8_problem, text=raw)
            elif not raw.strip():
                rows.add_other(lineno, raw, "blank", env, utf8_problem)
            else:
                rows.add_other(lineno, raw, "stderr", env, utf8_problem, text=raw)
            continue

        in_dump = False
        a, b = m["a"], m["b"]
        msg = m["msg"] or ""
        first = _level_first(a, b, aggregate)
        if b is None:
            # ``[level] msg`` (oldest mcp.log) or, rarely, ``[server] msg``
            server = (old_server or file_server) if first else a
        elif first:
            server = b
        else:
            server = a
        if b is None and first:
            attempt = _ATTEMPT.match(msg)
            named = _NAMED.match(msg) if attempt is None else None
            if attempt is not None:
                server = old_server = attempt["server"]
                sessions.start(server, lineno, messages_here=False)
            elif named is not None:
                # several servers launch at once: the line's own server, not the latest
                server = named["server"] or named["gone"]
                if named["gone"] is not None:
                    sessions.ended.add(sessions.key(server))
        elif server is not None and msg.startswith("Initializing server"):
            sessions.start(server, lineno)
        if server is None:
            server = file_server
        session = sessions.key(server)
        env = Envelope(ts_text=m["ts"], session=session, server=server)

        message = _MESSAGE.match(msg)
        if message is None:
            rows.add_other(lineno, raw, "log", env, utf8_problem, text=msg)
            record = env
            if msg.startswith(_ENDED):
                sessions.ended.add(session)
            in_dump = msg.rstrip().endswith("{")
            continue

        record = env
        # a new Envelope, not dataclasses.replace: replace cost a fifth of the load
        env = Envelope(
            ts_text=env.ts_text,
            session=session,
            server=server,
            direction=_DIRECTIONS[message["who"]],
        )
        sessions.exchanged.add(session)
        body = message["body"].removesuffix(_TRAILER)
        if body[:1] in ("{", "["):
            cut = _TRUNCATED.search(body)
            if cut is None and utf8_problem is None:
                bodies.add(lineno, body, env)
                continue
            note = utf8_problem
            if cut is not None:
                truncated += 1
                note = "; ".join(
                    filter(
                        None,
                        [
                            utf8_problem,
                            f"Claude Desktop cut {cut['n']} characters from the middle of this "
                            f"message (at char {cut.start()})",
                        ],
                    )
                )
            rows.add_text(lineno, raw, body, env, note)
            continue
        summary = _summary_message(body)
        if summary is None:
            rows.add_text(lineno, raw, body, env, utf8_problem)
            continue
        reconstructed += 1
        rows.add_parsed(lineno, raw, summary, None, env, _RECONSTRUCTED)

    notes = sessions.notes
    if truncated:
        notes.append(
            f"{truncated} message(s) cut in the middle by Claude Desktop "
            "(`...[N chars truncated]...`): their content is incomplete and, where the cut "
            "crosses JSON structure, they are invalid rows"
        )
    if reconstructed:
        notes.append(
            f"{reconstructed} message(s) logged without content (summary lines): "
            "reconstructed from their method and id"
        )
    scanned = bodies.scanned(rows, ctx, content)
    # the messages were added after the other lines: back in line order before the
    # sessions of the rows without one are filled from the rows around them
    frames = [rows.frame(fill=False), *([scanned] if scanned is not None else [])]
    messages = pl.concat(frames).sort("line", maintain_order=True)
    return LoadResult(messages=fill_context(messages, ctx.stem), lines=len(lines), notes=notes)


@dataclass
class _Bodies:
    """The JSON messages of ``Message from`` lines, parsed together by the C scanner once
    every line is read: a message per line through orjson and the row builder was most
    of the load (a 94 MB log of 200,000 messages took 2.8 s). The messages wait as one
    buffer of lines, and their envelopes as plain lists: a string and an object per
    message held till the end took as much memory again as the file."""

    lines: list[int] = field(default_factory=list)
    ts: list[str | None] = field(default_factory=list)
    sessions: list[str | None] = field(default_factory=list)
    servers: list[str | None] = field(default_factory=list)
    directions: list[str] = field(default_factory=list)
    data: bytearray = field(default_factory=bytearray)
    #: where each message starts in ``data``
    starts: list[int] = field(default_factory=list)

    def add(self, lineno: int, body: str, env: Envelope) -> None:
        self.lines.append(lineno)
        self.ts.append(env.ts_text)
        self.sessions.append(env.session)
        self.servers.append(env.server)
        self.directions.append(env.direction)
        self.starts.append(len(self.data))
        self.data += body.encode()
        self.data += b"\n"

    def _envelope(self, i: int) -> Envelope:
        return Envelope(
            ts_text=self.ts[i],
            session=self.sessions[i],
            server=self.servers[i],
            direction=self.directions[i],
        )

    def _python(self, i: int, rows: RowBuilder, content: Content) -> None:
        """Message ``i`` added to ``rows`` as the Python path adds it."""
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.data) - 1
        body = self.data[self.starts[i] : end].decode()
        raw, _ = decode_raw(content.lines[self.lines[i] - 1])
        rows.add_text(self.lines[i], raw, body, self._envelope(i))

    def scanned(self, rows: RowBuilder, ctx: LoadContext, content: Content) -> pl.DataFrame | None:
        """The rows of the messages the scanner takes (sessions not filled); the others
        go to ``rows``, as the Python path adds them. None when the scanner is not built
        (then every message went to ``rows``)."""
        found = (
            accel.scan(
                memoryview(self.data),
                1,
                "stdio",
                source=ctx.source,
                format=NAME,
                transport="stdio",
                tz=ctx.tz,
            )
            if self.lines
            else None
        )
        if found is None:
            for i in range(len(self.lines)):
                self._python(i, rows, content)
            return None
        frame, slow = found
        for line, _, _ in slow:
            self._python(line - 1, rows, content)
        if frame.is_empty():
            return frame
        # the scanner numbered the messages 1, 2, ...: the envelope of each is theirs
        at = frame["line"] - 1
        lines = pl.Series(self.lines, dtype=pl.Int64).gather(at)
        # the lines as they are: a message line that is not valid UTF-8 was left to the
        # Python path (splitting the whole text in Polars held half a GiB more)
        every = content.lines
        raw = pl.Series([every[n - 1] for n in lines.to_list()], dtype=pl.Binary).cast(pl.String)
        ts, zoneless = read_times(pl.Series(self.ts, dtype=pl.String).gather(at), tz=ctx.tz)
        read_local = zoneless if zoneless is not None else pl.repeat(False, len(ts), eager=True)
        quality = (
            pl.when(pl.lit(ts.is_null()))
            .then(pl.lit("none"))
            .when(pl.lit(read_local))
            .then(pl.lit("local"))
            .otherwise(pl.lit("exact"))
        )
        return frame.with_columns(
            line=lines,
            raw=raw.alias("raw"),
            session=pl.Series(self.sessions, dtype=pl.String).gather(at),
            server=pl.Series(self.servers, dtype=pl.String).gather(at),
            direction=pl.Series(self.directions, dtype=MESSAGES.schema["direction"]).gather(at),
            ts=ts,
            ts_quality=quality.cast(MESSAGES.schema["ts_quality"]),
        )
