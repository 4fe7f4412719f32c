"""Statistics over the trace tables: latency, errors, traffic, sessions, and two sets of
calls compared.

Every function is pure: it takes a :class:`~mcptrace.trace.Trace` or one of its tables
(see each docstring) and returns Polars DataFrames, never reads files, prints or
raises on empty input (zero rows with the documented columns instead). Grouping
dimensions (``by``) and time buckets (``every``, a Polars duration such as ``"1m"``)
work the same way everywhere; quantiles are linear (``numpy.quantile``'s default,
see :mod:`mcptrace.analysis.latency`).

>>> import mcptrace
>>> from mcptrace import analysis
>>> trace = mcptrace.load("sample_traces/capture/healthy-2025-11-25.jsonl")
>>> analysis.error_rate(trace)["error_rate"].round(3).item()
0.182
"""

from __future__ import annotations

from mcptrace.analysis._common import DIMENSIONS, FAILED_OUTCOMES
from mcptrace.analysis.compare import compare, split_at
from mcptrace.analysis.errors import error_breakdown, error_rate
from mcptrace.analysis.latency import QUANTILES, latency, latency_coverage
from mcptrace.analysis.overview import session_overview
from mcptrace.analysis.traffic import concurrency, error_bursts, slowest_calls, throughput

__all__ = [
    "DIMENSIONS",
    "FAILED_OUTCOMES",
    "QUANTILES",
    "compare",
    "concurrency",
    "error_breakdown",
    "error_bursts",
    "error_rate",
    "latency",
    "latency_coverage",
    "session_overview",
    "slowest_calls",
    "split_at",
    "throughput",
]
