"""Raw stdio NDJSON: the byte stream itself, one JSON-RPC message per line.

There is no envelope, so there is no time and no direction. Directions are
inferred afterwards (:mod:`mcptrace.loaders.directions`): from the method
catalogue, then from id pairing. Lines that are not JSON stay as ``invalid``
rows: on a stdio server's stdout they are stream pollution the linter reports.
"""

from __future__ import annotations

from mcptrace import _json
from mcptrace.loaders.base import Head, LoadContext, LoadResult
from mcptrace.loaders.directions import infer_directions
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import RowBuilder, decode_raw

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
    return 50 if hits * 2 > len(head.parsed) else 0


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(source=ctx.source, format=NAME, default_session=ctx.stem, transport="stdio")
    loads = _json.loads
    add_parsed = rows.add_parsed
    for lineno, data in enumerate(content.lines, 1):
        try:
            msg = loads(data)
        except _json.JSONDecodeError as exc:
            raw, utf8_problem = decode_raw(data)
            if utf8_problem:
                rows.add_invalid(lineno, raw, utf8_problem, message=raw)
            elif not raw.strip():
                rows.add_other(lineno, raw, "blank")
            else:
                rows.add_invalid(lineno, raw, _json.describe_error(exc), message=raw)
            continue
        raw = data.decode()  # orjson accepted it, so it is valid UTF-8
        add_parsed(lineno, raw, msg, raw)
    messages = infer_directions(rows.frame())
    return LoadResult(messages=messages, lines=len(content.lines))
