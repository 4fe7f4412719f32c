"""The mcptrace capture format: JSON Lines, one envelope per line.

    {"ts": "2026-08-01T10:00:00.123456Z", "dir": "c2s", "session": "s1",
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {...}}}

Required: ``msg`` (the JSON-RPC message; a string when the line on the wire was
not valid JSON). Recommended: ``ts`` (RFC 3339, UTC), ``dir`` (``c2s`` or ``s2c``;
``stderr`` and ``log`` mark non-protocol lines whose text is in ``msg``),
``session``. Optional: ``raw`` (the exact wire text of the message), ``server``,
``transport`` (``stdio`` or ``http``), ``http`` (``{"method", "status",
"headers"}``), ``kind`` (``transport`` marks a transport event such as an HTTP 202
without a body, its description in ``msg``, rather than a line that was not JSON),
``unordered`` (``true``: the message's order against the other direction is unknown:
every line of a session captured as two per-direction streams, or a HAR's server stream
event placed by mcptrace; written when such a capture is converted; a session all of
whose lines say so has no order across directions at all).
Unknown members are ignored, so the format can grow.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.loaders import accel, chunked
from mcptrace.loaders.base import Head, LoadContext, LoadResult
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import (
    Envelope,
    RowBuilder,
    decode_raw,
    rpc_fields,
    text_lines,
)

#: parse_chunk runs the C scanner, which releases the GIL (see loaders.chunked)
GIL_FREE = True
NAME = "capture"
DESCRIPTION = 'mcptrace capture JSONL: {"ts", "dir", "session", "msg", ...} per line'

_DIRECTIONS = {"c2s": "c2s", "s2c": "s2c"}
_TEXT_KINDS = {"stderr": "stderr", "log": "log"}
_TRANSPORTS = {"stdio", "http"}


def sniff(head: Head) -> int:
    objs = head.json_objects()
    if not objs:
        return 0
    hits = sum(1 for o in objs if "msg" in o and ("dir" in o or "ts" in o or "session" in o))
    return 95 if hits == len(objs) else (70 if hits * 2 > len(objs) else 0)


def _wire_text(wire: Any, msg: Any) -> tuple[str | None, str | None]:
    """The record's ``raw`` as the message's text when it is the JSON of ``msg`` (its
    exact wire spelling), else None and why: rules read the message's text, and one
    that is not ``msg`` (junk, another message) would be judged instead of it."""
    if wire is None:
        return None, None
    if type(wire) is str:
        try:
            value, mended, _ = _json.loads_mending(wire)
            if value == msg:
                # with lone surrogate escapes, `msg` holds U+FFFD in their place (the
                # record's writer mended them, or the record's own escapes were)
                return mended or wire, None
        except _json.JSONDecodeError:
            pass
    return None, "`raw` is not the JSON text of `msg`: the message is read from `msg`"


def _envelope(rec: dict[str, Any]) -> tuple[Envelope, str | None]:
    problems = []
    ts = rec.get("ts")
    if ts is not None and type(ts) is not str:
        problems.append("`ts` is not a string")
        ts = None
    d = rec.get("dir")
    direction = _DIRECTIONS.get(d, "unknown") if type(d) is str else "unknown"
    if d is not None and direction == "unknown" and not (type(d) is str and d in _TEXT_KINDS):
        problems.append(f"unknown `dir` {_json.dumps(d)}")
    session = rec.get("session")
    server = rec.get("server")
    transport = rec.get("transport")
    env = Envelope(
        ts_text=ts,
        session=session
        if type(session) is str
        else (None if session is None else _json.dumps(session)),
        server=server if type(server) is str else None,
        direction=direction,
        transport=transport if type(transport) is str and transport in _TRANSPORTS else None,
        unordered=rec.get("unordered") is True,
    )
    http = rec.get("http")
    if type(http) is dict:
        method, status, headers = http.get("method"), http.get("status"), http.get("headers")
        env.http_method = method if type(method) is str else None
        env.http_status = status if type(status) is int else None
        env.http_headers = _json.dumps(headers) if type(headers) is dict else None
        if env.transport is None:
            env.transport = "http"
    return env, "; ".join(problems) or None


_FAST_KEYS = frozenset(("ts", "dir", "session", "msg", "raw", "server", "transport"))


def load(content: Content, ctx: LoadContext) -> LoadResult:
    messages = chunked.join(sys.modules[__name__], [parse_chunk(content.data, 1, ctx)], ctx)
    return LoadResult(messages=messages, lines=len(content.lines))


def finish(messages: pl.DataFrame, ctx: LoadContext) -> pl.DataFrame:
    """Whole-file steps after the chunks are joined: none for this format."""
    return messages


def parse_chunk(
    data: bytes | memoryview,
    first_line: int,
    ctx: LoadContext,
    *,
    select: bytes | None = None,
    wanted: int = 0,
) -> pl.DataFrame:
    """Rows for the lines in ``data`` (numbered from ``first_line``), session gaps unfilled;
    with ``select`` (a byte per line), only of the lines whose byte is ``wanted``.

    The C scanner takes the common lines; the rest (and everything, when it is not
    built) go through :func:`parse_lines`, which gives the same rows.
    """
    return accel.parse_chunk(
        data, first_line, ctx, "capture", parse_lines, format=NAME, select=select, wanted=wanted
    )


def parse_lines(
    numbered: Iterable[tuple[int, bytes]],
    ctx: LoadContext,
    data: bytes | None = None,
    first_line: int = 1,
) -> pl.DataFrame:
    """Rows for numbered lines, in pure Python (orjson). When the lines are all of
    ``data``, its ``raw`` column is split from it in one go rather than line by line."""
    rows = RowBuilder(source=ctx.source, tz=ctx.tz, format=NAME, default_session=ctx.stem)
    if data is not None:
        rows.raw_lines, rows.first_line = text_lines(data), first_line
    fast_raw = rows.raw_lines is not None  # raw comes from raw_lines: no decoding per line
    loads, dumps = _json.loads, _json.dumps
    append_row, sparse = rows.append_row, rows.sparse
    servers, transports = sparse["server"], sparse["transport"]
    dense_lines = rows.cols["line"]
    for lineno, line in numbered:
        mend_note: str | None = None
        try:
            rec = loads(line)
        except _json.JSONDecodeError as exc:
            text, utf8_problem = decode_raw(line)
            if not text.strip():
                rows.add_other(lineno, text, "blank")
                continue
            problem = utf8_problem or _json.describe_error(exc)
            if utf8_problem is None:
                try:
                    rec, _, mend_note = _json.loads_mending(text)
                except _json.JSONDecodeError as error:
                    problem = _json.describe_error(error)
            if mend_note is None:
                rows.add_invalid(lineno, text, f"capture record is not valid JSON: {problem}")
                continue
        # orjson accepted the line, so it is valid UTF-8
        raw: str | None = None if fast_raw else line.decode()
        if type(rec) is not dict or "msg" not in rec:
            rows.add_invalid(lineno, line.decode(), "capture record without a `msg` member")
            continue
        msg = rec["msg"]
        d = rec.get("dir")
        ts = rec.get("ts")
        session = rec.get("session")
        # the common record takes the hot path: no Envelope object, sparse extras
        if (
            type(msg) is dict
            and type(d) is str
            and d in _DIRECTIONS
            and (ts is None or type(ts) is str)
            and (session is None or type(session) is str)
            and _FAST_KEYS.issuperset(rec)
            # a record with its wire text is checked against `msg` (rare: the writer adds
            # `raw` only where the wire text differs from compact JSON)
            and "raw" not in rec
            and mend_note is None
        ):
            fields = rpc_fields(msg)
            text = dumps(msg)
            index = len(dense_lines)
            append_row(lineno, ts, session, d, fields, text, raw, fields[13])
            server = rec.get("server")
            if type(server) is str:
                servers[index] = server
            transport = rec.get("transport")
            if type(transport) is str and transport in _TRANSPORTS:
                transports[index] = transport
            continue
        raw = raw if raw is not None else line.decode()
        env, note = _envelope(rec)
        if mend_note is not None:
            # the record's lone surrogate escapes (U+FFFD now in `msg`)
            note = f"{note}; {mend_note}" if note else mend_note
        if type(d) is str and d in _TEXT_KINDS:
            text = msg if type(msg) is str else dumps(msg)
            rows.add_other(lineno, raw, _TEXT_KINDS[d], env, note, text=text)
            continue
        if rec.get("kind") == "transport" and type(msg) is str:
            rows.add_other(lineno, raw, "transport", env, note, text=msg)
            continue
        if type(msg) is str:
            # the original line was not valid JSON: keep its text and report why
            rows.add_text(lineno, raw, msg, env, note)
        else:
            spelled, mismatch = _wire_text(rec.get("raw"), msg)
            if mismatch is not None:
                note = f"{note}; {mismatch}" if note else mismatch
            rows.add_parsed(lineno, raw, msg, spelled, env, note)
    return rows.frame(fill=False)
