"""JSON: an array of finding objects, keys in the order of the findings table.

The objects are exactly the rows of :data:`mcptrace.schema.FINDINGS`, with ``ts`` as
an RFC 3339 UTC text (``2026-08-01T10:00:00.250000Z``): a consumer rebuilds the table by
parsing it (``pl.col("ts").str.to_datetime(time_zone="UTC")``) and casting the rest to
``FINDINGS.schema``.
"""

from __future__ import annotations

import polars as pl

from mcptrace import _json
from mcptrace.reporters._context import ReportContext
from mcptrace.schema import FINDINGS


def render(findings: pl.DataFrame, ctx: ReportContext) -> str:
    """The findings as a pretty-printed JSON array (``[]`` when there are none)."""
    del ctx  # the table carries everything this format shows
    data = (
        FINDINGS.conform(findings)
        .with_columns(pl.col("ts").dt.strftime("%Y-%m-%dT%H:%M:%S.%6fZ"))
        .iter_rows(named=True)
    )
    return _json.dumpb(list(data), pretty=True).decode() + "\n"
