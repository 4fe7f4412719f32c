"""JSON: an array of finding objects, keys in the order of the findings table.

The objects are exactly the rows of :data:`mcptrace.schema.FINDINGS`, so a
consumer can rebuild the table with ``pl.DataFrame(data, schema=FINDINGS.schema)``.
"""

from __future__ import annotations

import polars as pl

from mcptrace import _json
from mcptrace.reporters._context import ReportContext
from mcptrace.schema import FINDINGS


def render(findings: pl.DataFrame, ctx: ReportContext) -> str:
    """The findings as a pretty-printed JSON array (``[]`` when there are none)."""
    del ctx  # the table carries everything this format shows
    data = FINDINGS.conform(findings).iter_rows(named=True)
    return _json.dumpb(list(data), pretty=True).decode() + "\n"
