"""One row per session: who talked, for how long, how many calls failed, how slow.

This module never reads files or prints.
"""

from __future__ import annotations

import polars as pl

from mcptrace.analysis._common import FAILED_OUTCOMES, ratio
from mcptrace.trace import Trace

__all__ = ["session_overview"]


def session_overview(trace: Trace) -> pl.DataFrame:
    """Per session: identity, time span, calls, failures and the 95th latency percentile.

    Parameters
    ----------
    trace
        A :class:`~mcptrace.trace.Trace` (the sessions table needs the whole trace).

    Returns
    -------
    polars.DataFrame
        Columns ``[session, server, client, revision, revision_source, first_ts,
        duration_s, calls, errors, error_rate, p95_ms, unanswered]`` in order of first
        appearance. ``server`` is the capture's label for the server, else the
        ``serverInfo`` name; ``client`` the ``clientInfo`` name. ``calls`` counts requests
        (both directions; orphan responses excluded), ``errors`` JSON-RPC error responses
        and tool errors (``isError: true``), ``unanswered`` requests never answered,
        cancelled ones included. ``error_rate`` is ``(errors + unanswered) / calls``, the
        same definition as :func:`mcptrace.analysis.error_rate` (null without calls).
        ``p95_ms`` is the linear 95th percentile of the calls' latencies (see
        :mod:`mcptrace.analysis.latency`), null when none has a latency.

    Examples
    --------
    >>> import mcptrace
    >>> trace = mcptrace.load("sample_traces/capture/healthy-2025-11-25.jsonl")
    >>> session_overview(trace).select("session", "calls", "errors", "unanswered").row(0)
    ('docs-1', 11, 2, 0)
    """
    outcome = pl.col("outcome").cast(pl.String)
    per_call = (
        trace.calls.filter(outcome != "orphan")
        .group_by("session")
        .agg(
            pl.len().cast(pl.Int64).alias("calls"),
            outcome.is_in(["error", "tool_error"]).sum().cast(pl.Int64).alias("errors"),
            outcome.is_in(["unanswered", "cancelled"]).sum().cast(pl.Int64).alias("unanswered"),
            outcome.is_in(FAILED_OUTCOMES).sum().alias("_failed"),
            pl.col("latency_ms").quantile(0.95, interpolation="linear").alias("p95_ms"),
        )
    )
    # sessions has its own `errors` (error rows) and `unanswered`: keep only what is used
    sessions = trace.sessions.select(
        "session", "server", "server_name", "client_name", "revision", "revision_source",
        "first_ts", "duration_s",
    )  # fmt: skip
    return (
        sessions.join(per_call, on="session", how="left", maintain_order="left")
        .with_columns(pl.col("calls", "errors", "unanswered", "_failed").fill_null(0))
        .select(
            "session",
            pl.coalesce("server", "server_name").alias("server"),
            pl.col("client_name").alias("client"),
            "revision",
            "revision_source",
            "first_ts",
            "duration_s",
            "calls",
            "errors",
            ratio(pl.col("_failed"), pl.col("calls")).alias("error_rate"),
            "p95_ms",
            "unanswered",
        )
    )
