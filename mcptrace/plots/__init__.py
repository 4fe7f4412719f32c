"""Plots of the trace tables: latency, failures, session timelines, concurrency, and what
changed between two sets of calls.

Every function takes a :class:`~mcptrace.trace.Trace` or its calls table (as the
:mod:`mcptrace.analysis` functions do), draws into ``ax`` when given (else into a new
figure) and returns the :class:`~matplotlib.figure.Figure`. Nothing here shows or saves
a figure: the caller does (``fig.savefig("latency.png")``, or Jupyter displays it).
Input without timestamps gives a figure that says so, never an exception.

This is the only package of mcptrace that imports Matplotlib; the command line imports
it only inside ``mcptrace plot``.

>>> import mcptrace
>>> from mcptrace import plots
>>> trace = mcptrace.load("sample_traces/capture/healthy-2025-11-25.jsonl")
>>> plots.timeline(trace).axes[0].get_title()
'Calls per session: 11 calls in 1 session'
"""

from __future__ import annotations

from mcptrace.plots._common import OUTCOME_COLORS
from mcptrace.plots.changes import latency_changes
from mcptrace.plots.errors import error_distribution
from mcptrace.plots.latency import latency_distribution, latency_over_time
from mcptrace.plots.sessions import timeline
from mcptrace.plots.traffic import concurrency

__all__ = [
    "OUTCOME_COLORS",
    "concurrency",
    "error_distribution",
    "latency_changes",
    "latency_distribution",
    "latency_over_time",
    "timeline",
]
