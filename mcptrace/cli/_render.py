"""Plain-text rendering helpers: aligned tables and human durations."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import polars as pl
import polars.selectors as cs

from mcptrace._text import one_line


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], indent: str = "  ") -> str:
    """Left-aligned columns; numbers right-aligned; None shown as '-'."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], len(value))
    numeric = [
        all(isinstance(r[i], int | float) or r[i] is None for r in rows)
        for i in range(len(headers))
    ]

    def fmt(values: Sequence[str]) -> str:
        parts = [
            v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]) for i, v in enumerate(values)
        ]
        return (indent + "  ".join(parts)).rstrip()

    return "\n".join([fmt(list(headers)), *(fmt(r) for r in cells)])


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, datetime):
        return ts(value)
    return one_line(str(value))  # names and ids come from the capture


def ts(value: datetime | None) -> str:
    if value is None:
        return "-"
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def plain_values(frame: pl.DataFrame) -> pl.DataFrame:
    """Times as RFC 3339 text, lists joined and floats rounded, for CSV and JSON."""
    return frame.with_columns(
        cs.datetime().dt.to_string("%Y-%m-%dT%H:%M:%S%.6fZ"),
        cs.by_dtype(pl.List(pl.String)).list.join(", "),
        # latencies have microsecond resolution; more digits are float noise (3.3000000000000003)
        cs.float().round(6),
    )
