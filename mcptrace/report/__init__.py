"""``mcptrace report``: a post-mortem of captures as one self-contained HTML page.

The page gathers what the other commands show one at a time: an overview of the
inputs and sessions, the lint findings with the capture lines they point at, latency
and error tables and plots, the slowest calls with their raw request and response,
error bursts and the session timeline. It is a single file (inline style, plots as
embedded PNG images, a few lines of optional script) that any browser opens offline.

Everything taken from a capture is escaped (see :mod:`mcptrace.report._html`), and
the page's Content Security Policy lets nothing load from the network. Matplotlib is
imported only while a report is built.

>>> import mcptrace
>>> from mcptrace.report import build_report
>>> trace = mcptrace.load("sample_traces/capture/healthy-2025-11-25.jsonl")
>>> page = build_report(trace)                  # doctest: +SKIP
>>> 'id="finding-1"' in page                   # doctest: +SKIP
True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from mcptrace.moments import Moment
from mcptrace.report._build import SECTIONS, build_report
from mcptrace.trace import Trace

__all__ = ["SECTIONS", "build_report", "write_report"]


def write_report(
    path: str | os.PathLike[str],
    trace: Trace,
    *,
    since: Moment | None = None,
    until: Moment | None = None,
    session: str | Sequence[str] | None = None,
    findings: pl.DataFrame | None = None,
    title: str | None = None,
    schema_dir: str | Path | None = None,
    allowed_origins: Sequence[str] | None = None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    revision: str | None = None,
    settings: str | Path | None = None,
) -> Path:
    """Write :func:`build_report`'s page to ``path`` (UTF-8); returns the path.

    The page is built before the file is opened, so a failure leaves no half-written
    report behind.
    """
    page = build_report(
        trace,
        since=since,
        until=until,
        session=session,
        findings=findings,
        title=title,
        schema_dir=schema_dir,
        allowed_origins=allowed_origins,
        select=select,
        ignore=ignore,
        revision=revision,
        settings=settings,
    )
    out = Path(path)
    out.write_text(page, encoding="utf-8")
    return out
