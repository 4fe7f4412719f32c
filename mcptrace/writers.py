"""Writing tables out: Parquet, CSV, and the mcptrace capture JSONL format.

Writing capture JSONL turns any loaded trace back into mcptrace's own format,
so a Claude Desktop log or an Inspector export can be kept, shared and re-read
losslessly: every row becomes one record, non-protocol rows included (blank
lines excepted, which carry nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import polars as pl

from mcptrace import _json
from mcptrace.errors import UsageError
from mcptrace.schema import MESSAGES

OutputFormat = Literal["parquet", "csv", "jsonl"]
_BY_SUFFIX: dict[str, OutputFormat] = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}


def output_format(path: str | Path, explicit: str | None = None) -> OutputFormat:
    """The output format named explicitly or by the file suffix."""
    if explicit is not None:
        if explicit not in ("parquet", "csv", "jsonl"):
            raise UsageError(f"unknown output format {explicit!r}: use parquet, csv or jsonl")
        return explicit  # type: ignore[return-value]
    suffix = Path(path).suffix.lower()
    if suffix not in _BY_SUFFIX:
        raise UsageError(
            f"cannot tell the output format from {str(path)!r}: use .parquet, .csv or .jsonl"
        )
    return _BY_SUFFIX[suffix]


def capture_records(messages: pl.DataFrame) -> Iterator[bytes]:
    """Each messages row as one mcptrace capture JSONL line (without newline)."""
    MESSAGES.validate(messages)
    cols = ["ts", "direction", "session", "server", "transport", "kind", "message", "raw",
            "http_method", "http_status", "http_headers", "batched", "unordered"]  # fmt: skip
    for row in messages.select(cols).iter_rows(named=True):
        kind = row["kind"]
        if kind == "blank":
            continue
        rec: dict[str, Any] = {}
        if row["ts"] is not None:
            rec["ts"] = row["ts"].isoformat().replace("+00:00", "Z")
        if kind in ("stderr", "log"):
            rec["dir"] = kind
        elif row["direction"] != "unknown":
            rec["dir"] = row["direction"]
        rec["session"] = row["session"]
        if row["server"] is not None:
            rec["server"] = row["server"]
        if row["transport"] != "unknown":
            rec["transport"] = row["transport"]
        if row["unordered"]:
            # one direction of a per-direction capture, or a HAR stream event placed by
            # mcptrace: the order across directions, which this file's line order seems
            # to give, was never captured
            rec["unordered"] = True
        text = row["message"] if row["message"] is not None else row["raw"]
        if kind in ("request", "notification", "response", "error"):
            rec["msg"] = _json.loads(text)
            if not row["batched"] and text != _json.dumps(rec["msg"]):
                rec["raw"] = text  # the wire text differs from compact JSON: keep it exactly
        else:
            rec["msg"] = text
            if kind == "transport":
                # a transport event (an HTTP 202 without a body, a stream closing): not a
                # message whose JSON failed, which is what a bare string `msg` means
                rec["kind"] = "transport"
        if row["http_method"] or row["http_status"] is not None or row["http_headers"]:
            http: dict[str, Any] = {}
            if row["http_method"]:
                http["method"] = row["http_method"]
            if row["http_status"] is not None:
                http["status"] = row["http_status"]
            if row["http_headers"]:
                http["headers"] = _json.loads(row["http_headers"])
            rec["http"] = http
        yield _json.dumpb(rec)


def _csv_safe(df: pl.DataFrame) -> pl.DataFrame:
    # CSV has no nested types: lists become JSON-ish text
    lists = [name for name, dtype in df.schema.items() if isinstance(dtype, pl.List)]
    return df.with_columns(pl.col(name).list.join(",") for name in lists)


def write_table(
    df: pl.DataFrame, path: str | Path, fmt: OutputFormat, *, table: str = "messages"
) -> int:
    """Write ``df`` to ``path``; returns the number of records written."""
    if fmt == "parquet":
        df.write_parquet(path)
        return df.height
    if fmt == "csv":
        _csv_safe(df).write_csv(path)
        return df.height
    if table != "messages":
        df.write_ndjson(path)
        return df.height
    n = 0
    with open(path, "wb") as out:
        for line in capture_records(df):
            out.write(line + b"\n")
            n += 1
    return n
