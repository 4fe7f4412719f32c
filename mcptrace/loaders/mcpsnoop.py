"""mcpsnoop session logs: JSON Lines, one ``proxy.Envelope`` per line.

    {"session_id": "server-filesystem-48213-7f3a1c9e2b04", "server_label": "server-filesystem",
     "seq": 8, "ts": "2025-11-03T14:07:22.92347+01:00", "direction": "c2s",
     "transport": "stdio", "raw": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}

mcpsnoop (github.com/kerlenton/mcpsnoop) writes ``<base>/sessions/<session_id>.jsonl``;
a ``--trace-file`` that is reused holds several sessions, so every row takes its
session from ``session_id`` and its server from ``server_label``.

``direction`` is ``c2s``/``s2c`` (protocol frames), ``stderr`` (a server stderr
line in ``text``; no ``text`` for an empty line) or ``meta`` (the first record of
a stdio session: ``raw`` = ``{"command": [...], "cwd": ...}``; a ``log`` row here).
A protocol frame carries the message inline in ``raw`` (re-encoded by Go, so it
is compact JSON, not the wire bytes), or ``text`` when the frame was not JSON
(stdout pollution, or a frame cut at the 16 MiB cap with ``truncated``), or only
``status`` for an HTTP response without a body (202, 401, the proxy's own 502):
a ``transport`` row. The HTTP routing headers mcpsnoop records (``mcp_method``,
``mcp_name``, ``mcp_protocol_version``, ``mcp_param_headers``) and
``auth_challenge`` (``WWW-Authenticate``) go into ``http_headers``; ``status``
into ``http_status``. ``conn_id`` (the HTTP client's address) has no column.

``seq`` is mcpsnoop's per-session order; ``ts`` may disagree with it and HTTP
sessions may even be written out of ``seq`` order. Rows stay in file order (so
line numbers hold) and the load notes where ``seq`` goes backwards. A missing
``seq`` (a gap) means mcpsnoop dropped records: the file is marked truncated.
HTTP batch elements (``"batch": true``) are numbered in the order written, per
connection; a new batch starts at any other record of that connection.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.loaders.base import Head, LoadContext, LoadResult, line_list
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw

NAME = "mcpsnoop"
DESCRIPTION = (
    'mcpsnoop session JSONL: {"session_id", "seq", "ts", "direction", "raw"|"text"} per line'
)

_PROTOCOL = {"c2s": "c2s", "s2c": "s2c"}
_TRANSPORTS = {"stdio", "http"}
_HEADER_FIELDS = (
    ("mcp_method", "Mcp-Method"),
    ("mcp_name", "Mcp-Name"),
    ("mcp_protocol_version", "MCP-Protocol-Version"),
)
_TRUNCATED_NOTE = "frame cut by mcpsnoop at its 16 MiB capture cap"
_REDACTED_NOTE = "values redacted by mcpsnoop"


def _is_record(o: dict[str, Any]) -> bool:
    return "session_id" in o and "direction" in o and "seq" in o


def sniff(head: Head) -> int:
    objs = head.json_objects()
    if not objs:
        return 0
    hits = sum(1 for o in objs if _is_record(o))
    return 95 if hits == len(objs) else (70 if hits * 2 > len(objs) else 0)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if type(value) is str else _json.dumps(value)


def _headers(rec: dict[str, Any]) -> str | None:
    headers: dict[str, Any] = {}
    for key, name in _HEADER_FIELDS:
        value = rec.get(key)
        if type(value) is str:
            headers[name] = value
    params = rec.get("mcp_param_headers")
    if type(params) is list:
        for p in params:
            if type(p) is dict and type(p.get("name")) is str:
                headers[p["name"]] = p.get("value")
    challenge = rec.get("auth_challenge")
    if type(challenge) is str:
        headers["WWW-Authenticate"] = challenge
    return _json.dumps(headers) if headers else None


def _envelope(rec: dict[str, Any], direction: str) -> Envelope:
    ts = rec.get("ts")
    session = rec.get("session_id")
    label = rec.get("server_label")
    transport = rec.get("transport")
    env = Envelope(
        ts_text=ts if type(ts) is str else None,
        session=session if type(session) is str else _text(session),
        server=label if type(label) is str else _text(label),
        direction=direction,
        transport=transport if type(transport) is str and transport in _TRANSPORTS else None,
    )
    if transport == "stdio":
        return env  # the common case: no HTTP facts
    status = rec.get("status")
    env.http_status = status if type(status) is int else None
    env.http_headers = _headers(rec)
    if env.transport is None and (env.http_status is not None or env.http_headers is not None):
        env.transport = "http"
    if env.transport == "http" and direction == "c2s":
        # mcpsnoop observes request bodies of POSTs only
        env.http_method = "POST"
    return env


class _SeqCheck:
    """Per session: where ``seq`` goes backwards, and which values are missing."""

    def __init__(self) -> None:
        self.last: dict[str | None, int] = {}
        self.seen: dict[str | None, set[int]] = {}
        self.backwards: dict[str | None, list[int]] = {}

    def add(self, session: str | None, seq: Any, line: int) -> None:
        if type(seq) is not int:
            return
        last = self.last.get(session)
        if last is not None and seq <= last:
            self.backwards.setdefault(session, []).append(line)
        self.last[session] = seq
        self.seen.setdefault(session, set()).add(seq)

    def notes(self) -> tuple[bool, list[str]]:
        truncated = False
        notes = []
        for session, lines in self.backwards.items():
            where = line_list(lines)
            notes.append(
                f"session {session}: `seq` is not increasing in file order (line {where}); "
                "rows are kept in file order, mcpsnoop's `seq` order may differ"
            )
        for session, seen in self.seen.items():
            # mcpsnoop numbers every session's records from 1
            missing = max(seen) - len(seen)
            if missing > 0:
                truncated = True
                notes.append(
                    f"session {session}: {missing} record(s) missing (`seq` gaps): "
                    "mcpsnoop dropped them, the capture is incomplete"
                )
        return truncated, notes


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(source=ctx.source, tz=ctx.tz, format=NAME, default_session=ctx.stem)
    loads = _json.loads_mending
    seqs = _SeqCheck()
    truncated_frames = 0
    conn_ids: dict[str | None, set[str]] = {}
    # (session, conn_id) -> (direction, status, next index) while a batch is open
    open_batches: dict[tuple[str | None, Any], tuple[str, Any, int]] = {}
    batch_rows: list[tuple[int, int]] = []
    incomplete_last = False
    n_lines = len(content.lines)
    for lineno, data in enumerate(content.lines, 1):
        raw, utf8_problem = decode_raw(data)
        if not raw.strip():
            rows.add_other(lineno, raw, "blank")
            continue
        try:
            rec, _, mend_note = loads(data)
        except _json.JSONDecodeError as exc:
            problem = utf8_problem or _json.describe_error(exc)
            if lineno == n_lines and not content.data.endswith(b"\n"):
                # mcpsnoop ends every record with a newline: the writer was stopped mid-line
                incomplete_last = True
                problem = f"incomplete last record: {problem}"
            rows.add_invalid(lineno, raw, f"mcpsnoop record is not valid JSON: {problem}")
            continue
        if type(rec) is not dict or "direction" not in rec:
            rows.add_invalid(lineno, raw, "mcpsnoop record without a `direction` member")
            continue
        d = rec["direction"]
        direction = _PROTOCOL.get(d, "unknown") if type(d) is str else "unknown"
        env = _envelope(rec, direction)
        seqs.add(env.session, rec.get("seq"), lineno)
        notes = [_REDACTED_NOTE] if rec.get("redacted") is True else []
        if mend_note is not None:
            notes.append(mend_note)
        conn = rec.get("conn_id")
        if type(conn) is str:
            conn_ids.setdefault(env.session, set()).add(conn)
        batch_key = (env.session, conn)
        is_batch = rec.get("batch") is True
        if open_batches and not is_batch:
            open_batches.pop(batch_key, None)

        if direction == "unknown":
            if d == "stderr":
                text = rec.get("text")
                rows.add_other(
                    lineno, raw, "stderr", env, "; ".join(notes) or None, text=_text(text) or ""
                )
            else:
                if d != "meta":
                    notes.append(f"unknown mcpsnoop direction {_json.dumps(d)}")
                text = _text(rec["raw"]) if "raw" in rec else _text(rec.get("text"))
                rows.add_other(lineno, raw, "log", env, "; ".join(notes) or None, text=text)
            continue

        if "raw" in rec:
            msg = rec["raw"]
            if is_batch and type(msg) is not list:
                status = rec.get("status")
                prev = open_batches.get(batch_key)
                first = direction == "c2s" and "mcp_method" in rec  # routing headers: 1st only
                same = prev is not None and prev[:2] == (direction, status) and not first
                index = prev[2] if prev is not None and same else 0
                batch_rows.append((len(rows), index))
                open_batches[batch_key] = (direction, status, index + 1)
            # Go re-encodes `raw` (whitespace dropped), so it is not the wire text
            rows.add_parsed(lineno, raw, msg, None, env, "; ".join(notes) or None)
            continue
        if is_batch:
            open_batches.pop(batch_key, None)  # a batch element without a message ends it
        text = rec.get("text")
        if text is not None:
            if rec.get("truncated") is True:
                truncated_frames += 1
                notes.insert(0, _TRUNCATED_NOTE)
            # a frame that was not JSON: stdout pollution or a cut frame
            rows.add_text(lineno, raw, _text(text) or "", env, "; ".join(notes) or None)
        elif env.http_status is not None:
            rows.add_other(
                lineno,
                raw,
                "transport",
                env,
                "; ".join(notes) or None,
                text=f"HTTP {env.http_status}",
            )
        else:
            rows.add_invalid(
                lineno, raw, "mcpsnoop frame with neither `raw`, `text` nor `status`", env
            )

    messages = rows.frame()
    if batch_rows:
        positions: list[int | None] = messages["batch_index"].to_list()
        for row, k in batch_rows:
            positions[row] = k
        series = pl.Series(positions, dtype=pl.Int32)
        messages = messages.with_columns(batch_index=series, batched=series.is_not_null())
    truncated, notes = seqs.notes()
    if truncated_frames:
        truncated = True
        notes.append(f"{truncated_frames} frame(s) cut at mcpsnoop's 16 MiB capture cap")
    if incomplete_last:
        truncated = True
        notes.append("the last record is incomplete (mcpsnoop stopped while writing it)")
    for session, conns in conn_ids.items():
        if len(conns) > 1:
            notes.append(
                f"session {session}: {len(conns)} HTTP client connections (`conn_id`) share "
                "one session, and so one id space for pairing"
            )
    return LoadResult(messages=messages, lines=n_lines, truncated=truncated, notes=notes)
