"""Shared plumbing of the analysis functions: inputs, grouping dimensions, time buckets.

Every analysis function accepts a :class:`~mcptrace.trace.Trace` or a bare table and
turns it into the frame it needs here, so the functions themselves stay a few Polars
expressions long. Nothing here reads files or prints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from mcptrace.calls import build_calls
from mcptrace.schema import CALLS, MESSAGES
from mcptrace.trace import Trace

#: Outcomes that count against a call in every error rate of this package: the
#: request failed (JSON-RPC error or ``isError: true``) or was never answered.
FAILED_OUTCOMES = ("error", "tool_error", "unanswered", "cancelled")

#: Name of the time-bucket column added when ``every`` is given.
BUCKET = "bucket"

_REQUEST_METHOD = pl.col("method")

#: Grouping dimension -> (the key expression, the calls it applies to or None for all).
#: ``tool``/``prompt``/``resource`` only make sense for the methods that name one, so
#: grouping by them also restricts the calls to those methods.
DIMENSIONS: dict[str, tuple[pl.Expr, pl.Expr | None]] = {
    "method": (pl.col("method"), None),
    "tool": (pl.col("target"), _REQUEST_METHOD == "tools/call"),
    "prompt": (pl.col("target"), _REQUEST_METHOD == "prompts/get"),
    "resource": (
        pl.col("target"),
        _REQUEST_METHOD.str.starts_with("resources/") & pl.col("target").is_not_null(),
    ),
    "target": (pl.col("target"), None),
    "server": (pl.col("server"), None),
    "session": (pl.col("session"), None),
    "client": (pl.col("client"), None),
    "revision": (pl.col("revision"), None),
    "outcome": (pl.col("outcome"), None),
    "direction": (pl.col("direction"), None),
}

# A Polars duration string: one or more <integer><unit> parts ("1m", "1h30m", "500ms").
_DURATION = re.compile(r"^(\d+(ns|us|ms|s|m|h|d|w|mo|q|y))+$")


def calls_of(data: Trace | pl.DataFrame) -> pl.DataFrame:
    """The calls table of ``data``: a Trace's, a calls frame as is, or a messages frame paired.

    A messages frame is paired without session identity, so ``client`` and ``revision``
    stay null; pass the Trace when grouping by them.
    """
    if isinstance(data, Trace):
        return data.calls
    if "outcome" in data.columns:
        return data
    if "kind" in data.columns:
        return build_calls(MESSAGES.conform(data))
    raise TypeError("expected a Trace, a calls table or a messages table")


def messages_of(data: Trace | pl.DataFrame | None) -> pl.DataFrame | None:
    """The messages table of a Trace, a messages frame as is, or None (not available)."""
    if isinstance(data, Trace):
        return data.messages
    if data is not None and "kind" in data.columns:
        return data
    return None


def requests_of(data: Trace | pl.DataFrame) -> pl.DataFrame:
    """Calls that are requests: orphan responses (no request) are a pairing problem, not a
    call, and are left to ``mcptrace lint`` and ``summary``."""
    calls = calls_of(data)
    if calls.is_empty():
        return CALLS.conform(calls)
    return calls.filter(pl.col("outcome") != "orphan")


def dimensions(by: str | Sequence[str]) -> list[str]:
    """``by`` as a list of known dimension names (a single name is accepted too)."""
    names = [by] if isinstance(by, str) else list(by)
    unknown = [n for n in names if n not in DIMENSIONS]
    if unknown:
        raise ValueError(
            f"unknown grouping {', '.join(map(repr, unknown))}; known: {', '.join(DIMENSIONS)}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"grouping {names} names a dimension twice")
    return names


def check_every(every: str) -> str:
    """Return ``every`` if it is a Polars duration string ("10s", "1m", "1h"), else raise."""
    if not _DURATION.match(every) or not re.search(r"[1-9]", every):
        # a zero interval ("0s") would put every call in a bucket of its own
        raise ValueError(
            f"invalid interval {every!r}: use a Polars duration such as 10s, 1m, 1h or 1d"
        )
    return every


def with_keys(
    frame: pl.DataFrame,
    by: str | Sequence[str],
    every: str | None,
    ts: str = "request_ts",
) -> tuple[pl.DataFrame, list[str]]:
    """Add the key columns of ``by`` (and the time bucket of ``ts`` when ``every`` is set).

    Returns the frame, restricted to the calls the dimensions apply to, and the key
    column names. With no key at all a constant column keeps ``group_by`` usable (and
    gives zero groups, not one, on an empty frame); :func:`drop_constant` removes it.
    """
    names = dimensions(by)
    cond = pl.lit(True)
    exprs = []
    for name in names:
        key, applies = DIMENSIONS[name]
        exprs.append(key.alias(name))
        if applies is not None:
            cond &= applies
    keys = list(names)
    if every is not None:
        exprs.append(pl.col(ts).dt.truncate(check_every(every)).alias(BUCKET))
        keys.append(BUCKET)
    if not keys:
        exprs.append(pl.lit(0).alias("_all"))
        keys.append("_all")
    return frame.filter(cond).with_columns(exprs), keys


def drop_constant(frame: pl.DataFrame) -> pl.DataFrame:
    """Remove the constant key column :func:`with_keys` adds when there is no key."""
    return frame.drop("_all", strict=False)


def sort_keys(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Sort by the key columns, nulls (no method, no time) last."""
    real = [k for k in keys if k != "_all"]
    return frame.sort(real, nulls_last=True) if real else frame


def ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """``numerator / denominator`` as a float; null (not NaN or inf) when the denominator is 0."""
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(None)


def fill_buckets(frame: pl.DataFrame, every: str, counts: Sequence[str]) -> pl.DataFrame:
    """Add zero-count rows for the empty buckets between the first and the last one, so a
    time series has no silent gaps."""
    if frame.is_empty():
        return frame
    bucket = pl.col(BUCKET)
    grid = frame.select(pl.datetime_range(bucket.min(), bucket.max(), every).alias(BUCKET))
    full = grid.join(frame, on=BUCKET, how="left")
    return full.with_columns(pl.col(list(counts)).fill_null(0))
