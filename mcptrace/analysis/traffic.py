"""Traffic over time: message throughput, calls in flight, the slowest calls, error bursts.

Everything here is measured on capture timestamps; rows without one are left out
(a capture without timestamps gives empty frames, never an error). This module
never reads files or prints.
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from mcptrace.analysis._common import (
    BUCKET,
    FAILED_OUTCOMES,
    calls_of,
    check_every,
    fill_buckets,
    messages_of,
    ratio,
    requests_of,
)
from mcptrace.schema import CALLS, MESSAGES
from mcptrace.trace import Trace

__all__ = ["concurrency", "error_bursts", "slowest_calls", "throughput"]

_TS = MESSAGES.schema["ts"]
#: the JSON-RPC kinds :func:`throughput` counts, in the order of its columns
_KINDS = ("request", "notification", "response", "error")
#: the columns of :func:`error_bursts`, also its zero-row result
_BURSTS_SCHEMA = pl.Schema(
    {
        "start": _TS,
        "end": _TS,
        "calls": pl.Int64(),
        "errors": pl.Int64(),
        "error_rate": pl.Float64(),
        "baseline_rate": pl.Float64(),
        "first_line": pl.Int64(),
        "last_line": pl.Int64(),
        "source": pl.String(),
        "last_source": pl.String(),
        "methods": pl.List(pl.String()),
    }
)
#: the count columns of :func:`throughput`, after ``bucket``
_THROUGHPUT_COUNTS = (
    "messages",
    "requests",
    "notifications",
    "responses",
    "errors",
    "calls_started",
    "calls_completed",
)


def throughput(trace_or_messages: Trace | pl.DataFrame, every: str = "1m") -> pl.DataFrame:
    """Messages and calls per time bucket.

    Parameters
    ----------
    trace_or_messages
        A :class:`~mcptrace.trace.Trace` or a messages table (paired here for the call
        counts).
    every
        Bucket width, a Polars duration ("10s", "1m", "1h"); buckets are aligned to
        multiples of it (``dt.truncate``).

    Returns
    -------
    polars.DataFrame
        Columns ``[bucket, messages, requests, notifications, responses, errors,
        calls_started, calls_completed]``, one row per bucket from the first to the last
        timestamped message, empty buckets included as zeros. ``messages`` counts
        JSON-RPC messages (requests, notifications, responses and errors; not stderr, log
        or unparseable lines), ``responses`` success responses and ``errors`` error
        responses. ``calls_started`` counts requests by their time and
        ``calls_completed`` calls by the time of the response that answered them
        (orphan and duplicate responses excluded).

    Examples
    --------
    >>> import mcptrace
    >>> trace = mcptrace.load("sample_traces/capture/healthy-2025-11-25.jsonl")
    >>> throughput(trace, "10s").select("bucket", "messages", "requests").rows()[0][1:]
    (22, 9)
    """
    every = check_every(every)
    messages = messages_of(trace_or_messages)
    if messages is None:
        raise TypeError("throughput needs a Trace or a messages table")
    kind = pl.col("kind").cast(pl.String)
    counted = (
        messages.filter(pl.col("ts").is_not_null() & kind.is_in(_KINDS))
        .group_by(pl.col("ts").dt.truncate(every).alias(BUCKET))
        .agg(
            pl.len().cast(pl.Int64).alias("messages"),
            *((kind == k).sum().cast(pl.Int64).alias(f"{k}s") for k in _KINDS),
        )
    )
    calls = requests_of(trace_or_messages)
    started = (
        calls.filter(pl.col("request_ts").is_not_null())
        .group_by(pl.col("request_ts").dt.truncate(every).alias(BUCKET))
        .agg(pl.len().cast(pl.Int64).alias("calls_started"))
    )
    completed = (
        calls.filter(pl.col("response_ordinal").is_not_null() & pl.col("response_ts").is_not_null())
        .group_by(pl.col("response_ts").dt.truncate(every).alias(BUCKET))
        .agg(pl.len().cast(pl.Int64).alias("calls_completed"))
    )
    out = (
        counted.join(started, on=BUCKET, how="full", coalesce=True)
        .join(completed, on=BUCKET, how="full", coalesce=True)
        .with_columns(pl.col(BUCKET).cast(_TS))
        .with_columns(pl.col(_THROUGHPUT_COUNTS).fill_null(0))
    )
    out = fill_buckets(out, every, _THROUGHPUT_COUNTS).sort(BUCKET)
    return out.select(BUCKET, *_THROUGHPUT_COUNTS)


def concurrency(
    calls: Trace | pl.DataFrame,
    every: str | None = None,
) -> pl.DataFrame:
    """Requests in flight over time: a step function, or its maximum per time bucket.

    A call is in flight from its request time until its response time. A cancelled
    call (``notifications/cancelled``, never answered) ends at its cancellation when the
    messages are at hand (a Trace or a messages table), else at the end of the
    capture; an unanswered call stays in flight until the end of the capture. Calls
    answered by a response without a time, and calls without a request time, are left
    out (when they ended is unknown). A response timed before its request (clocks of
    two files) ends the call at the request time.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace` (whose last message time is the end of the
        capture), its calls table or its messages table.
    every
        None for the step function; a Polars duration ("1m") for the largest number in
        flight at any moment of each bucket.

    Returns
    -------
    polars.DataFrame
        Without ``every``: columns ``[ts, in_flight]``, one row per moment the number
        changes (requests and responses at the same instant are applied together), each
        value holding until the next row; a last row at the end of the capture repeats
        the final value, so a plot reaches it. With ``every``: columns ``[bucket,
        in_flight]``, every bucket from the first request to the end of the capture.

    Examples
    --------
    >>> import polars as pl
    >>> from datetime import datetime, UTC
    >>> t = [datetime(2026, 8, 1, 10, 0, s, tzinfo=UTC) for s in range(4)]
    >>> calls = pl.DataFrame({
    ...     "outcome": ["ok", "ok"],
    ...     "request_ts": [t[0], t[1]],
    ...     "response_ordinal": [1, 3],
    ...     "response_ts": [t[2], t[3]],
    ... })
    >>> concurrency(calls)["in_flight"].to_list()
    [1, 2, 1, 0]
    """
    if every is not None:
        check_every(every)
    frame = _with_cancel_ts(requests_of(calls), messages_of(calls))
    # a bare frame without ordinals: a response time is the only sign of an answer
    answered = pl.col(
        "response_ordinal" if "response_ordinal" in frame.columns else "response_ts"
    ).is_not_null()
    ended = pl.when(answered).then(pl.col("response_ts")).otherwise(pl.col("_cancel_ts"))
    timed = frame.filter(pl.col("request_ts").is_not_null() & ~(answered & ended.is_null())).select(
        pl.col("request_ts").cast(_TS),
        # max_horizontal ignores nulls, so keep "still in flight" null explicitly
        pl.when(ended.is_not_null())
        .then(pl.max_horizontal(pl.col("request_ts"), ended))
        .cast(_TS)
        .alias("end_ts"),
    )
    starts = timed.select(ts="request_ts", delta=pl.lit(1, pl.Int64))
    ends = timed.filter(pl.col("end_ts").is_not_null()).select(
        ts="end_ts", delta=pl.lit(-1, pl.Int64)
    )
    steps = (
        pl.concat([starts, ends])
        .group_by("ts")
        .agg(pl.col("delta").sum())
        # a response and a request at the same instant leave the number unchanged
        .filter(pl.col("delta") != 0)
        .sort("ts")
        .select("ts", in_flight=pl.col("delta").cum_sum())
    )
    if steps.is_empty():
        return steps if every is None else steps.rename({"ts": BUCKET})
    end = _capture_end(calls, steps)
    if end > steps["ts"][-1]:
        steps = pl.concat(
            [
                steps,
                pl.DataFrame(
                    {"ts": [end], "in_flight": [steps["in_flight"][-1]]}, schema=steps.schema
                ),
            ]
        )
    if every is None:
        return steps
    per_bucket = steps.group_by(pl.col("ts").dt.truncate(every).alias(BUCKET)).agg(
        pl.col("in_flight").max().alias("_peak")
    )
    grid = steps.select(
        pl.datetime_range(pl.col("ts").min().dt.truncate(every), pl.lit(end, _TS), every)
        .cast(_TS)
        .alias(BUCKET)
    )
    # the value held when a bucket starts counts too: a long call spans quiet buckets
    carried = grid.join_asof(
        steps.rename({"ts": BUCKET, "in_flight": "_held"}), on=BUCKET, strategy="backward"
    )
    return (
        carried.join(per_bucket, on=BUCKET, how="left")
        .select(
            BUCKET,
            in_flight=pl.max_horizontal(pl.col("_held").fill_null(0), pl.col("_peak")).cast(
                pl.Int64
            ),
        )
        .sort(BUCKET)
    )


def _with_cancel_ts(frame: pl.DataFrame, messages: pl.DataFrame | None) -> pl.DataFrame:
    """Add ``_cancel_ts``: the time of the ``notifications/cancelled`` that named the call.

    The calls table keeps its line (``cancel_line``); the notification travels the same
    way as the request, so it is in the request's file.
    """
    if messages is None or "cancel_line" not in frame.columns:
        return frame.with_columns(_cancel_ts=pl.lit(None, _TS))
    # a batch puts several rows on one line, all with the line's time
    times = (
        messages.filter(pl.col("method") == "notifications/cancelled")
        .group_by("source", "line")
        .agg(pl.col("ts").first().alias("_cancel_ts"))
    )
    return frame.join(
        times,
        left_on=["request_source", "cancel_line"],
        right_on=["source", "line"],
        how="left",
    )


def _capture_end(data: Trace | pl.DataFrame, steps: pl.DataFrame) -> datetime:
    """The last time of the capture: of any message when known, else of any step."""
    last: datetime = steps["ts"].max()  # type: ignore[assignment]
    messages = messages_of(data)
    if messages is not None:
        latest = messages["ts"].max()
        if isinstance(latest, datetime) and latest > last:
            return latest
    return last


def slowest_calls(calls: Trace | pl.DataFrame, n: int = 20) -> pl.DataFrame:
    """The ``n`` calls with the longest latency, slowest first.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table.
    n
        How many calls to return at most.

    Returns
    -------
    polars.DataFrame
        Columns ``[session, method, target, latency_ms, outcome, request_source,
        request_line, response_line, request_ts]``; only calls with a latency; ties in
        capture order.

    Examples
    --------
    >>> import mcptrace
    >>> trace = mcptrace.load("sample_traces/capture/healthy-2025-11-25.jsonl")
    >>> slowest_calls(trace, 1).select("method", "target", "latency_ms").row(0)
    ('tools/call', 'search_docs', 158.0)
    """
    frame = calls_of(calls)
    if frame.is_empty():
        frame = CALLS.conform(frame)
    order = "request_ordinal" if "request_ordinal" in frame.columns else None
    frame = frame.filter(pl.col("latency_ms").is_not_null())
    frame = (
        frame.sort(["latency_ms", order], descending=[True, False])
        if order
        else frame.sort("latency_ms", descending=True, maintain_order=True)
    )
    columns = [
        "session",
        "method",
        "target",
        "latency_ms",
        "outcome",
        "request_source",
        "request_line",
        "response_line",
        "request_ts",
    ]
    return CALLS.conform(frame.head(max(n, 0))).select(columns)


def error_bursts(
    calls: Trace | pl.DataFrame,
    window: str = "1m",
    *,
    min_errors: int = 3,
    factor: float = 3.0,
) -> pl.DataFrame:
    """Periods where calls failed much more often than usual.

    Method: the calls with a request time are cut into consecutive windows of
    ``window`` (aligned to multiples of it, as ``dt.truncate`` does). The baseline is
    the failure rate of the whole capture: failed calls / calls, where a call fails as
    in :func:`mcptrace.analysis.error_rate` (JSON-RPC error, tool error, unanswered or
    cancelled), except that an unanswered request sent after the last response of its
    session is left out altogether: it was pending when the capture stopped, so its
    outcome is unknown. A window is *hot* when it has at least ``min_errors`` failed calls and
    its rate is above ``factor`` times the baseline. Hot windows that follow each other are
    merged into one burst. A capture with no failures, or where failures are so
    common that ``factor`` times the baseline reaches 100 %, has no bursts. Because windows
    are fixed, a burst that straddles a boundary may be split below ``min_errors`` in
    both halves; a smaller ``window`` finds it.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table.
    window
        Window width, a Polars duration ("10s", "1m", "5m").
    min_errors
        Fewest failed calls a window needs to be hot.
    factor
        How many times the baseline rate a window's rate must exceed.

    Returns
    -------
    polars.DataFrame
        Columns ``[start, end, calls, errors, error_rate, baseline_rate, first_line,
        last_line, source, last_source, methods]``, one row per burst in time order.
        ``start`` and ``end`` bound the merged windows; ``calls`` and ``errors`` are their
        calls and failed calls; ``first_line``/``last_line`` are the request lines of the
        first and last failed call and ``source``/``last_source`` their files (two files
        when a log rotated during the burst); ``methods`` lists the methods of the failed
        calls (sorted).

    Examples
    --------
    >>> import polars as pl
    >>> from datetime import datetime, timedelta, UTC
    >>> t0 = datetime(2026, 8, 1, tzinfo=UTC)
    >>> calls = pl.DataFrame({
    ...     "method": ["ping"] * 60,
    ...     "outcome": ["error" if 42 <= i < 46 else "ok" for i in range(60)],
    ...     "request_ts": [t0 + timedelta(seconds=10 * i) for i in range(60)],
    ...     "request_line": list(range(1, 61)),
    ... })
    >>> error_bursts(calls).select("start", "errors", "first_line").rows()[0][1:]
    (4, 43)
    """
    window = check_every(window)
    frame = CALLS.conform(requests_of(calls))
    # a request sent after the last response of its session was still pending when the
    # capture stopped: its outcome is unknown, and counting it would put a false burst at
    # the end of every capture cut mid-call
    last_answer = pl.col("response_ts").max().over("session")
    pending = (pl.col("outcome") == "unanswered") & (
        last_answer.is_null() | (pl.col("request_ts") > last_answer)
    )
    frame = frame.filter(pl.col("request_ts").is_not_null() & ~pending)
    frame = frame.with_columns(
        _failed=pl.col("outcome").cast(pl.String).is_in(FAILED_OUTCOMES),
        start=pl.col("request_ts").dt.truncate(window),
    )
    calls_total = frame.height
    failed_total = int(frame["_failed"].sum())
    if calls_total == 0 or failed_total == 0:
        return pl.DataFrame(schema=_BURSTS_SCHEMA)
    baseline = failed_total / calls_total
    windows = (
        frame.group_by("start")
        .agg(pl.len().cast(pl.Int64).alias("calls"), pl.col("_failed").sum().alias("errors"))
        .filter(
            (pl.col("errors") >= min_errors)
            & (pl.col("errors") / pl.col("calls") > factor * baseline)
        )
        .sort("start")
        .with_columns(end=pl.col("start").dt.offset_by(window))
        # a window not starting where the previous hot one ended opens a new burst
        .with_columns(_burst=(pl.col("start") != pl.col("end").shift(1)).fill_null(True).cum_sum())
    )
    failed = pl.col("_failed")
    bursts = (
        frame.join(windows.select("start", "end", "_burst"), on="start")
        .sort("request_ordinal", "request_ts", nulls_last=True)
        .group_by("_burst")
        .agg(
            pl.col("start").min(),
            pl.col("end").max(),
            pl.len().cast(pl.Int64).alias("calls"),
            failed.sum().cast(pl.Int64).alias("errors"),
            pl.col("request_line").filter(failed).first().alias("first_line"),
            pl.col("request_line").filter(failed).last().alias("last_line"),
            pl.col("request_source").filter(failed).first().alias("source"),
            pl.col("request_source").filter(failed).last().alias("last_source"),
            pl.col("method").filter(failed).drop_nulls().unique().sort().alias("methods"),
        )
        .sort("start")
        .with_columns(
            error_rate=ratio(pl.col("errors"), pl.col("calls")),
            baseline_rate=pl.lit(baseline, pl.Float64),
        )
    )
    return bursts.select(list(_BURSTS_SCHEMA)).cast(_BURSTS_SCHEMA)
