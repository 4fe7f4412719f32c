"""Raw stdio NDJSON: the byte stream itself, one JSON-RPC message per line.

There is no envelope, so there is no time and no direction. Directions are
inferred afterwards (:mod:`mcptrace.loaders.directions`): from the method
catalogue, then from id pairing. Lines that are not JSON stay as ``invalid``
rows: on a stdio server's stdout they are stream pollution the linter reports.

A stream is one session, named after the file, unless it holds several
connections: a log that a restarted server (or client) kept appending to. An
``initialize`` request opens a connection, so each one after the stream's first
message starts a session of its own, named after the file and the line it is on
(``docs-server@27``). Otherwise the second connection's requests, numbered from
the start again, would read as ids reused within one session.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.loaders import accel, chunked
from mcptrace.loaders.base import NOT_JSON, Head, LoadContext, LoadResult
from mcptrace.loaders.directions import infer_directions
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import RowBuilder, decode_raw, rpc_fields, text_lines
from mcptrace.schema import PROTOCOL_KINDS

#: parse_chunk runs the C scanner, which releases the GIL (see loaders.chunked)
GIL_FREE = True
NAME = "stdio"
DESCRIPTION = "raw stdio NDJSON: one bare JSON-RPC message per line, no envelope"

_RPC_KEYS = ("jsonrpc", "method", "result", "error")


def _is_rpc(value: object) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_is_rpc(v) for v in value)
    return isinstance(value, dict) and any(k in value for k in _RPC_KEYS) and "msg" not in value


def sniff(head: Head) -> int:
    if not head.parsed:
        return 0
    hits = sum(1 for p in head.parsed if _is_rpc(p))
    if hits == len(head.parsed):
        return 80
    # a polluted stdout still is a stdio capture when most lines are JSON-RPC
    if hits * 2 > len(head.parsed):
        return 50
    # or when a server printed a banner or its log to stdout before it spoke: lines of
    # text and JSON-RPC messages, and no JSON of another kind (another tool's JSON Lines)
    spoke = any(isinstance(p, dict) and p.get("jsonrpc") == "2.0" for p in head.parsed)
    other_json = any(p is not NOT_JSON and not _is_rpc(p) for p in head.parsed)
    return 40 if spoke and not other_json else 0


def load(content: Content, ctx: LoadContext) -> LoadResult:
    messages = chunked.join(sys.modules[__name__], [parse_chunk(content.data, 1, ctx)], ctx)
    return LoadResult(messages=messages, lines=len(content.lines))


def finish(messages: pl.DataFrame, ctx: LoadContext) -> pl.DataFrame:
    """Whole-file step after the chunks are joined: infer who sent each line, and name
    each connection after the stream's first as a session of its own."""
    return _connections(infer_directions(messages), ctx.stem)


def _connections(rows: pl.DataFrame, stem: str) -> pl.DataFrame:
    """``rows`` with each ``initialize`` request after the stream's first message
    starting a session ``<stem>@<line>`` that runs to the next one (see the module
    docstring). Also right for a chunk of a file streamed chunk by chunk, whose rows
    before its first ``initialize`` carry the session the chunk before ended in."""
    opens = ((rows["kind"] == "request") & (rows["method"] == "initialize")).fill_null(False)
    if rows.height and rows["line"][0] == 1:
        # the initialize that opens the stream is the first connection's, named after
        # the file, as a stream of one connection is
        protocol = rows["kind"].is_in(PROTOCOL_KINDS).arg_true()
        if len(protocol) and opens[protocol[0]]:
            opens = opens.scatter(protocol[0], False)
    if not opens.any():
        return rows
    started = pl.when(opens).then(fmt("{}@{}", pl.lit(stem), pl.col("line")))
    return rows.with_columns(session=started.forward_fill().fill_null(pl.col("session")))


def parse_chunk(data: bytes | memoryview, first_line: int, ctx: LoadContext) -> pl.DataFrame:
    """Rows for the lines in ``data`` (numbered from ``first_line``), session gaps unfilled.

    The C scanner takes the common lines; the rest (and everything, when it is not
    built) go through :func:`parse_lines`, which gives the same rows.
    """
    return accel.parse_chunk(
        data, first_line, ctx, "stdio", parse_lines, format=NAME, transport="stdio"
    )


def parse_lines(
    numbered: Iterable[tuple[int, bytes]],
    ctx: LoadContext,
    data: bytes | None = None,
    first_line: int = 1,
) -> pl.DataFrame:
    """Rows for numbered lines, in pure Python (orjson). When the lines are all of
    ``data``, its ``raw`` column is split from it in one go rather than line by line."""
    rows = RowBuilder(
        source=ctx.source,
        format=NAME,
        default_session=ctx.stem,
        transport="stdio",
        message_is_raw=True,
    )
    if data is not None:
        rows.raw_lines, rows.first_line = text_lines(data), first_line
    fast_raw = rows.raw_lines is not None  # raw (and message) come from raw_lines
    loads = _json.loads
    add_parsed, append_row = rows.add_parsed, rows.append_row
    for lineno, line in numbered:
        try:
            msg = loads(line)
        except _json.JSONDecodeError:
            raw, utf8_problem = decode_raw(line)
            if utf8_problem:
                rows.add_invalid(lineno, raw, utf8_problem, message=raw)
            elif not raw.strip():
                rows.add_other(lineno, raw, "blank", text=raw)
            else:
                try:
                    msg, mended, note = _json.loads_mending(raw)
                except _json.JSONDecodeError as error:
                    rows.add_invalid(lineno, raw, _json.describe_error(error), message=raw)
                else:
                    rows.add_parsed(lineno, raw, msg, mended, note=note)
            continue
        if fast_raw and type(msg) is dict:
            # message stays null and is filled with the raw line (message_is_raw)
            fields = rpc_fields(msg)
            append_row(lineno, None, None, "unknown", fields, None, None, fields[13])
            continue
        raw = line.decode()  # orjson accepted it, so it is valid UTF-8
        add_parsed(lineno, raw, msg, raw)
    return rows.frame(fill=False)
