"""Latency of calls: quantiles per group and time bucket, and why some calls have none.

A call's latency is ``calls.latency_ms``: response time minus request time, as
captured. It is null when the call was never answered, when the capture has no
timestamps, or when the two directions cannot be ordered against each other
(per-direction stdio files). :func:`latency` summarises the calls that have one;
:func:`latency_coverage` counts the others and says why.

Quantiles are the *linear* quantiles of Polars ``quantile(q, interpolation="linear")``:
for ``n`` sorted latencies ``x[0] <= ... <= x[n-1]`` the ``q`` quantile is
``x[i] + (h - i) * (x[i+1] - x[i])`` with ``h = q * (n - 1)`` and ``i = floor(h)``. This is
type 7 of Hyndman and Fan (1996), the default of ``numpy.quantile`` and
``statistics.quantiles(data, n=100, method="inclusive")``. A group of one call has every
quantile equal to its latency.

This module never reads files or prints.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import polars as pl

from mcptrace._format import fmt
from mcptrace.analysis._common import (
    drop_constant,
    messages_of,
    requests_of,
    sort_keys,
    with_keys,
)
from mcptrace.trace import Trace

__all__ = ["QUANTILES", "latency", "latency_coverage"]

#: Output column -> quantile, in the order the columns appear.
QUANTILES: dict[str, float] = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}

_LATENCY = pl.col("latency_ms")

#: why a call has no latency (see :func:`latency_coverage`), in the words reports use
REASONS = {
    "cancelled": "cancelled",
    "unanswered": "unanswered",
    "no_timestamps": "without timestamps",
    "reversed": "with the response stamped before the request",
    "unordered": "whose order against each other the capture does not record",
}


def latency(
    calls: Trace | pl.DataFrame,
    by: str | Sequence[str] = ("method",),
    every: str | None = None,
    *,
    outcomes: Collection[str] | None = None,
) -> pl.DataFrame:
    """Latency quantiles of calls, per group and optionally per time bucket.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table.
        Orphan responses (no request) are not calls and are ignored.
    by
        Grouping dimensions, any of ``method``, ``tool`` (target of ``tools/call``),
        ``prompt`` (target of ``prompts/get``), ``resource`` (target of ``resources/*``),
        ``target``, ``server``, ``session``, ``client``, ``revision``, ``outcome``,
        ``direction``; ``()`` for one row over all calls. ``tool``, ``prompt`` and
        ``resource`` keep only the calls of their methods.
    every
        A Polars duration ("10s", "1m", "1h"): adds a ``bucket`` column, the request time
        truncated to that interval. Calls without a request time fall in a null bucket.
    outcomes
        Keep only calls with these outcomes (e.g. ``("ok",)``); all outcomes when None.

    Returns
    -------
    polars.DataFrame
        Columns ``[*by, bucket (when every is set), count, without_latency, p50, p90, p95,
        p99, max, mean]``, one row per group with at least one call, sorted by the keys.
        ``count`` is the number of calls with a latency (the quantiles are over those),
        ``without_latency`` the calls of the group that have none (see
        :func:`latency_coverage` for why). Latencies are milliseconds; quantiles are
        linear (see the module docstring) and null when ``count`` is 0.

    Examples
    --------
    >>> import polars as pl
    >>> calls = pl.DataFrame({
    ...     "method": ["tools/call"] * 4 + ["ping"],
    ...     "outcome": ["ok"] * 5,
    ...     "latency_ms": [10.0, 20.0, 30.0, None, 1.0],
    ... })
    >>> latency(calls).select("method", "count", "without_latency", "p50", "max").rows()
    [('ping', 1, 0, 1.0, 1.0), ('tools/call', 3, 1, 20.0, 30.0)]
    """
    frame = requests_of(calls)
    if outcomes is not None:
        frame = frame.filter(pl.col("outcome").cast(pl.String).is_in(list(outcomes)))
    frame, keys = with_keys(frame, by, every)
    out = frame.group_by(keys).agg(
        _LATENCY.count().cast(pl.Int64).alias("count"),
        _LATENCY.null_count().cast(pl.Int64).alias("without_latency"),
        *(_LATENCY.quantile(q, interpolation="linear").alias(n) for n, q in QUANTILES.items()),
        _LATENCY.max().alias("max"),
        _LATENCY.mean().alias("mean"),
    )
    return drop_constant(sort_keys(out, keys))


def latency_coverage(
    calls: Trace | pl.DataFrame,
    by: str | Sequence[str] = (),
    *,
    messages: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """How many calls have a latency and, for the others, why not.

    Each call without a latency is counted under exactly one reason, the first that
    applies: ``cancelled`` (a ``notifications/cancelled`` named it and no response came),
    ``unanswered`` (no response), ``no_timestamps`` (the request or the response has no
    capture time), ``reversed`` (the response is stamped before the request: a capture
    that stamps messages when their stream ended, as a HAR does a server request on an
    SSE stream), ``unordered`` (both have a time but the capture does not order the two
    against each other: per-direction stdio files, whose clocks are not comparable, or
    a HAR's server stream event placed by mcptrace). ``approximate`` counts calls that
    *have* a latency computed from wall-clock times (``ts_quality`` local, e.g. VS Code
    logs, whether read with ``--tz`` or as UTC): the difference is right unless the clock
    was changed (daylight saving, NTP) between request and response.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table.
    by
        Grouping dimensions, as for :func:`latency`; ``()`` (the default) for one row.
    messages
        The messages table, needed for ``approximate`` when ``calls`` is a bare calls
        table (a Trace or a messages table brings its own).

    Returns
    -------
    polars.DataFrame
        Columns ``[*by, count, with_latency, without_latency, cancelled, unanswered,
        no_timestamps, reversed, unordered, approximate, reason]``. ``without_latency``
        is the sum of the five reasons; ``approximate`` is null when the messages are not
        available; ``reason`` says it in words ("10 unanswered, 2 cancelled"), null when
        every call has an exact latency. Zero rows when there are no calls.

    Examples
    --------
    >>> import polars as pl
    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 8, 1, tzinfo=UTC)
    >>> calls = pl.DataFrame({
    ...     "outcome": ["ok", "unanswered", "cancelled", "ok"],
    ...     "request_ts": [t, t, t, None],
    ...     "response_ts": [t, None, None, None],
    ...     "latency_ms": [0.0, None, None, None],
    ... })
    >>> latency_coverage(calls)["reason"].item()
    '1 cancelled, 1 unanswered, 1 without timestamps'
    """
    frame = requests_of(calls)
    msgs = messages if messages is not None else messages_of(calls)
    if msgs is not None:
        quality = msgs.select("ordinal", local=pl.col("ts_quality") == "local")
        frame = (
            frame.join(
                quality.rename({"ordinal": "request_ordinal", "local": "_req_local"}),
                on="request_ordinal",
                how="left",
            )
            .join(
                quality.rename({"ordinal": "response_ordinal", "local": "_resp_local"}),
                on="response_ordinal",
                how="left",
            )
            .with_columns(
                _local=pl.col("_req_local").fill_null(False)
                | pl.col("_resp_local").fill_null(False)
            )
        )
    else:
        frame = frame.with_columns(_local=pl.lit(None, pl.Boolean))
    outcome = pl.col("outcome").cast(pl.String)
    missing = _LATENCY.is_null()
    untimed = pl.col("request_ts").is_null() | pl.col("response_ts").is_null()
    reason = (
        pl.when(~missing)
        .then(None)
        .when(outcome == "cancelled")
        .then(pl.lit("cancelled"))
        .when(outcome == "unanswered")
        .then(pl.lit("unanswered"))
        .when(untimed)
        .then(pl.lit("no_timestamps"))
        .when(pl.col("response_ts") < pl.col("request_ts"))
        .then(pl.lit("reversed"))
        .otherwise(pl.lit("unordered"))
    )
    frame, keys = with_keys(frame.with_columns(_reason=reason), by, None)

    def count_of(name: str) -> pl.Expr:
        return (pl.col("_reason") == name).sum().cast(pl.Int64).alias(name)

    out = frame.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("count"),
        _LATENCY.count().cast(pl.Int64).alias("with_latency"),
        _LATENCY.null_count().cast(pl.Int64).alias("without_latency"),
        *(count_of(n) for n in REASONS),
        # null when unknown (no messages), else the count: sum() of all-null gives 0
        pl.when(pl.col("_local").is_null().all())
        .then(None)
        .otherwise((pl.col("_local") & ~missing).sum())
        .cast(pl.Int64)
        .alias("approximate"),
    )
    return drop_constant(sort_keys(out.with_columns(reason=_reason_text()), keys))


def _reason_text() -> pl.Expr:
    """'2 cancelled, 10 unanswered; 3 approximate (local-time timestamps)' or null."""

    def part(column: str, words: str) -> pl.Expr:
        return pl.when(pl.col(column) > 0).then(fmt("{} " + words, pl.col(column)))

    missing = pl.concat_str(
        [part(name, words) for name, words in REASONS.items()],
        separator=", ",
        ignore_nulls=True,
    )
    approx = part("approximate", "approximate (local-time timestamps)")
    text = pl.concat_str(
        [pl.when(pl.col("without_latency") > 0).then(missing), approx],
        separator="; ",
        ignore_nulls=True,
    )
    return pl.when(text != "").then(text).otherwise(None)
