"""Two sets of calls side by side: what got slower, what started failing.

A post-mortem's first question is what changed: between yesterday's capture and
today's, or before and after the deploy at 22:40 in one capture (:func:`split_at`).
:func:`compare` puts the calls of the two sides next to each other per group: how many
there were, their median and 95th-percentile latency, and their error rate, with the
change of each. Groups found on one side only are kept (a method that appeared, a tool
no longer called): their other side is null.

Rows come most regressed first: the groups whose error rate rose, by how much (a group
that appeared rises by its whole error rate); then those whose 95th percentile got
slower, by how many times; then the others, by their keys. A change measured on a handful of
calls is noise as often as news: the counts are in the table to be read with it.

This module never reads files or prints.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from mcptrace.analysis._common import (
    FAILED_OUTCOMES,
    drop_constant,
    ratio,
    requests_of,
    with_keys,
)
from mcptrace.moments import Moment, as_utc
from mcptrace.trace import Trace

__all__ = ["compare", "split_at"]

_LATENCY = pl.col("latency_ms")
#: measured on each side, in the order the output shows them
_MEASURES = ("calls", "p50", "p95", "error_rate")


def split_at(calls: Trace | pl.DataFrame, at: Moment) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """The calls requested before a moment, and those requested from it on.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table (orphan
        responses are not calls and are left out).
    at
        The moment (a deploy, the first alert): a ``datetime``, a date or ISO 8601 text;
        a time without a zone is UTC.

    Returns
    -------
    tuple[polars.DataFrame, polars.DataFrame, int]
        The calls requested before ``at``, those requested at or after it (both with the
        calls table's columns), and how many calls have no request time: they are on
        neither side.

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> import mcptrace
    >>> trace = mcptrace.load("sample_traces/capture/incident-2025-11-25.jsonl")
    >>> before, after, untimed = split_at(trace, datetime(2026, 9, 15, 22, 44, tzinfo=timezone.utc))
    >>> before.height, after.height, untimed
    (54, 46, 0)
    """
    frame = requests_of(calls)
    when = pl.col("request_ts")
    at = as_utc(at, "at")
    before = frame.filter(when < at)
    after = frame.filter(when >= at)
    return before, after, int(frame["request_ts"].null_count())


def _side(calls: Trace | pl.DataFrame, by: str | Sequence[str]) -> tuple[pl.DataFrame, list[str]]:
    """Calls, latency quantiles and error rate per group of one side, and the key columns."""
    frame, keys = with_keys(requests_of(calls), by, None)
    failed = pl.col("outcome").cast(pl.String).is_in(list(FAILED_OUTCOMES))
    measured = (
        frame.group_by(keys)
        .agg(
            pl.len().cast(pl.Int64).alias("calls"),
            _LATENCY.quantile(0.5, interpolation="linear").alias("p50"),
            _LATENCY.quantile(0.95, interpolation="linear").alias("p95"),
            failed.sum().cast(pl.Int64).alias("_failed"),
        )
        .with_columns(error_rate=ratio(pl.col("_failed"), pl.col("calls")))
        .drop("_failed")
    )
    return measured, keys


def compare(
    before: Trace | pl.DataFrame,
    after: Trace | pl.DataFrame,
    by: str | Sequence[str] = ("method",),
) -> pl.DataFrame:
    """The calls of ``before`` and ``after`` side by side, per group.

    Parameters
    ----------
    before, after
        Each a :class:`~mcptrace.trace.Trace`, its calls table or its messages table
        (orphan responses are not calls and are left out).
    by
        Grouping dimensions, as for :func:`mcptrace.analysis.latency`; ``()`` for one row
        over all calls.

    Returns
    -------
    polars.DataFrame
        Columns ``[*by, calls_before, calls_after, p50_before, p50_after, p95_before,
        p95_after, p95_ratio, error_rate_before, error_rate_after, error_rate_change]``:
        latencies in milliseconds (over the calls that have one), ``p95_ratio`` after
        over before (null when either is null or before is 0), ``error_rate_change``
        after minus before (a share: 0.1 is ten percentage points). A group missing on
        one side has 0 calls and null measures there. Most regressed first (see the
        module docstring).

    Examples
    --------
    >>> import polars as pl
    >>> old = pl.DataFrame({"method": ["tools/call"] * 2, "outcome": ["ok", "ok"],
    ...                     "latency_ms": [10.0, 20.0]})
    >>> new = pl.DataFrame({"method": ["tools/call"] * 2, "outcome": ["ok", "error"],
    ...                     "latency_ms": [40.0, 80.0]})
    >>> compare(old, new).select("p50_before", "p50_after", "error_rate_change").row(0)
    (15.0, 60.0, 0.5)
    """
    old, keys = _side(before, by)
    new, _ = _side(after, by)
    joined = old.join(
        new, on=keys, how="full", coalesce=True, nulls_equal=True, suffix="_after"
    ).rename({m: f"{m}_before" for m in _MEASURES})
    out = joined.with_columns(
        pl.col("calls_before").fill_null(0),
        pl.col("calls_after").fill_null(0),
        p95_ratio=ratio(pl.col("p95_after"), pl.col("p95_before")),
        error_rate_change=pl.col("error_rate_after") - pl.col("error_rate_before"),
    )
    real = [k for k in keys if k != "_all"]
    # a group that appeared only after rises by its whole error rate
    rise = pl.coalesce("error_rate_change", "error_rate_after")
    slower = pl.col("p95_ratio")
    tier = pl.when(rise > 0).then(0).when(slower > 1).then(1).otherwise(2)
    score = pl.when(rise > 0).then(rise).when(slower > 1).then(slower)
    out = out.sort(
        [tier, score, *real],
        descending=[False, True, *([False] * len(real))],
        nulls_last=True,
    )
    return drop_constant(
        out.select(
            *keys,
            "calls_before",
            "calls_after",
            "p50_before",
            "p50_after",
            "p95_before",
            "p95_after",
            "p95_ratio",
            "error_rate_before",
            "error_rate_after",
            "error_rate_change",
        )
    )
