"""Reporters: the findings table rendered for people, CI systems and code-scanning tools.

Each format is one small module with one pure function
``render(findings, ctx) -> str``: no I/O, no printing, no reading of the
environment. The CLI picks a reporter and writes the string. Inputs are the
findings table (:data:`mcptrace.schema.FINDINGS`) and a :class:`ReportContext`
carrying what the table does not hold (rule metadata, raw capture lines, the
tool version).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from mcptrace.reporters import github, json, junit, sarif, text
from mcptrace.reporters._context import ReportContext

Reporter = Callable[[pl.DataFrame, ReportContext], str]

#: format name -> reporter; the names are the values of ``mcptrace lint --format``
REPORTERS: dict[str, Reporter] = {
    "text": text.render,
    "json": json.render,
    "sarif": sarif.render,
    "junit": junit.render,
    "github": github.render,
}

__all__ = ["REPORTERS", "ReportContext", "Reporter"]
