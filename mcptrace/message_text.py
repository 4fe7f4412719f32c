"""Values read out of messages' JSON text with Polars, for frames of many messages.

The session identity (:mod:`mcptrace.sessions`) and the linter's rules both read a few
JSON paths of many message texts; both parse each distinct body once.
"""

from __future__ import annotations

import polars as pl

#: an id as :data:`ENVELOPE` reads it: an integer, or a string without escapes
PLAIN_ID = r'(?:-?(?:0|[1-9][0-9]*)|"[^"\\\x00-\x1f]*")'

#: the start of a compact message up to its id: `{"jsonrpc":"2.0","id":ID,`
ENVELOPE = rf'^\{{"jsonrpc":"2\.0","id":{PLAIN_ID},'


def json_paths(frame: pl.DataFrame, /, text: str = "message", **paths: str) -> pl.DataFrame:
    """``frame`` plus one column per JSON path (``name=path``) of the JSON in ``text``
    (objects and arrays come back as JSON text).

    Servers send the same result (a tool list, an error) to many requests, and clients
    the same handshake to every session: with the compact envelope (``jsonrpc`` and
    ``id`` members, which no path here reads) set aside, each distinct body is parsed
    once. Paths must not read ``$.jsonrpc``/``$.id``.
    """
    body = frame.select(pl.col(text).str.replace(ENVELOPE, "{").alias("_body"))["_body"]
    parsed = (
        body.unique()
        .to_frame()
        .with_columns(**{name: pl.col("_body").str.json_path_match(p) for name, p in paths.items()})
    )
    return (
        frame.with_columns(body)
        .join(parsed, on="_body", how="left", maintain_order="left")
        .drop("_body")
    )


__all__ = ["ENVELOPE", "PLAIN_ID", "json_paths"]
