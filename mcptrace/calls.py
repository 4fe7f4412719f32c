"""Pairing requests with responses: the calls table.

Pairing is per session and per direction of the request (in legacy revisions
both sides send requests, and the two id spaces are independent). A response
answers the latest earlier request of its session, with its id, sent the other
way; a second response to the same request is a duplicate. This handles ids
reused after completion (legacy clients that restart their counters) without
guessing. Where a capture cannot order the two directions against each other
(per-direction stdio files), the k-th response with an id answers the k-th
request with that id.

This module only reads the messages table; it never parses JSON.
"""

from __future__ import annotations

from collections.abc import Collection

import polars as pl

from mcptrace.schema import CALLS, MESSAGES

_FLIP = {"c2s": "s2c", "s2c": "c2s", "unknown": "unknown"}
_DIRECTION = MESSAGES.schema["direction"]
_KEY = ["session", "direction", "id"]


def _requests(messages: pl.DataFrame) -> pl.DataFrame:
    return messages.filter(pl.col("kind") == "request").select(
        "session",
        "server",
        "direction",
        "id",
        "id_type",
        "method",
        "target",
        request_source="source",
        request_line="line",
        request_ordinal="ordinal",
        request_ts="ts",
        progress_token="progress_token",
    )


def _responses(messages: pl.DataFrame) -> pl.DataFrame:
    return messages.filter(pl.col("kind").is_in(["response", "error"])).select(
        "session",
        "server",
        pl.col("direction")
        .cast(pl.String)
        .replace_strict(_FLIP, return_dtype=pl.String)
        .cast(_DIRECTION)
        .alias("direction"),
        "id",
        "id_type",
        response_source="source",
        response_line="line",
        response_ordinal="ordinal",
        response_ts="ts",
        response_kind="kind",
        error_code="error_code",
        error_message="error_message",
        result_type="result_type",
        tool_error="tool_error",
    )


def _match_ordered(req: pl.DataFrame, resp: pl.DataFrame) -> pl.DataFrame:
    """For each response, the ordinal of the latest earlier request with its key."""
    keyed = resp.filter(pl.col("id").is_not_null())
    right = req.select(*_KEY, "request_ordinal").sort("request_ordinal")
    matched = keyed.sort("response_ordinal").join_asof(
        right,
        left_on="response_ordinal",
        right_on="request_ordinal",
        by=_KEY,
        strategy="backward",
        check_sortedness=False,
    )
    return pl.concat([matched, resp.filter(pl.col("id").is_null())], how="diagonal_relaxed")


def _match_by_rank(req: pl.DataFrame, resp: pl.DataFrame) -> pl.DataFrame:
    """For captures without a common order: k-th response to the k-th request of a key."""
    rank = pl.int_range(pl.len()).over(_KEY)
    left = resp.sort("response_ordinal").with_columns(_k=rank)
    right = req.sort("request_ordinal").with_columns(_k=rank).select(*_KEY, "_k", "request_ordinal")
    return left.join(right, on=[*_KEY, "_k"], how="left", nulls_equal=False).drop("_k")


def _cancellations(messages: pl.DataFrame, req: pl.DataFrame) -> pl.DataFrame:
    cancels = messages.filter(
        (pl.col("method") == "notifications/cancelled") & pl.col("cancel_id").is_not_null()
    ).select("session", "direction", id="cancel_id", cancel_ordinal="ordinal", cancel_line="line")
    if cancels.is_empty():
        return pl.DataFrame(schema={"request_ordinal": pl.Int64, "cancel_line": pl.Int64})
    right = req.select(*_KEY, "request_ordinal").sort("request_ordinal")
    return (
        cancels.sort("cancel_ordinal")
        .join_asof(
            right,
            left_on="cancel_ordinal",
            right_on="request_ordinal",
            by=_KEY,
            strategy="backward",
            check_sortedness=False,
        )
        .filter(pl.col("request_ordinal").is_not_null())
        .group_by("request_ordinal")
        .agg(pl.col("cancel_line").sort_by("cancel_ordinal").first())
    )


def build_calls(
    messages: pl.DataFrame,
    identity: pl.DataFrame | None = None,
    *,
    unordered_sessions: Collection[str] = (),
) -> pl.DataFrame:
    """Build the calls table from a messages table.

    ``identity`` (session, client, revision) adds those columns; ``unordered_sessions``
    names sessions whose directions cannot be ordered against each other.
    """
    MESSAGES.validate(messages)
    req = _requests(messages)
    resp = _responses(messages)
    unordered = list(unordered_sessions)
    in_unordered = pl.col("session").is_in(unordered)
    matched = pl.concat(
        [
            _match_ordered(req.filter(~in_unordered), resp.filter(~in_unordered)),
            _match_by_rank(req.filter(in_unordered), resp.filter(in_unordered)),
        ],
        how="diagonal_relaxed",
    )
    # the first response to a request answers it; later ones are duplicates
    first = pl.col("response_ordinal") == pl.col("response_ordinal").min().over("request_ordinal")
    matched = matched.with_columns(
        _answer=pl.col("request_ordinal").is_not_null() & first,
    )
    answers = matched.filter("_answer").drop(
        "session", "server", "direction", "id", "id_type", "_answer"
    )
    orphans = matched.filter(~pl.col("_answer")).with_columns(
        duplicate=pl.col("request_ordinal").is_not_null(),
        request_ordinal=pl.lit(None, pl.Int64),
    )
    cancels = _cancellations(messages, req)

    calls = (
        req.join(answers, on="request_ordinal", how="left")
        .join(cancels, on="request_ordinal", how="left")
        .with_columns(
            cancelled=pl.col("cancel_line").is_not_null(), duplicate=pl.lit(None, pl.Boolean)
        )
    )
    calls = pl.concat([calls, orphans], how="diagonal_relaxed")
    outcome = (
        pl.when(pl.col("request_ordinal").is_null())
        .then(pl.lit("orphan"))
        .when(pl.col("response_ordinal").is_null() & pl.col("cancelled"))
        .then(pl.lit("cancelled"))
        .when(pl.col("response_ordinal").is_null())
        .then(pl.lit("unanswered"))
        .when(pl.col("response_kind") == "error")
        .then(pl.lit("error"))
        .when(pl.col("tool_error").fill_null(False))
        .then(pl.lit("tool_error"))
        .when(pl.col("result_type") == "input_required")
        .then(pl.lit("input_required"))
        .otherwise(pl.lit("ok"))
    )
    # timestamps have microsecond resolution: round away binary float noise below it
    latency = (
        (pl.col("response_ts") - pl.col("request_ts")).dt.total_microseconds() / 1000.0
    ).round(3)
    calls = calls.with_columns(
        outcome=outcome,
        latency_ms=pl.when(in_unordered).then(None).otherwise(latency),
        cancelled=pl.col("cancelled").fill_null(False),
    )
    if identity is not None and not identity.is_empty():
        calls = calls.join(
            identity.select("session", "client", "revision"), on="session", how="left"
        )
    order = pl.coalesce("request_ordinal", "response_ordinal")
    return CALLS.conform(calls.sort(order))
