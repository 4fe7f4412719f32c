"""The packet-list view of a trace: one descriptive line per message.

Used by ``mcptrace show`` and handy in notebooks. Responses are labelled with
the method of the request they answer and their latency, so filtering by
method keeps both halves of each call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from mcptrace.trace import Trace

_TEXT_LIMIT = 120


def short_names(sources: Sequence[str]) -> dict[str, str]:
    """Each input by its file name when no two inputs share one, else by its full path."""
    names = [Path(s).name for s in sources]
    if len(set(names)) != len(names):
        return {s: s for s in sources}
    return dict(zip(sources, names, strict=True))


def message_list(
    trace: Trace,
    *,
    sessions: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Columns: source, line, ts, session, direction, kind, id, method, what."""
    calls = trace.calls.filter(pl.col("response_ordinal").is_not_null()).select(
        ordinal="response_ordinal",
        call_method="method",
        call_target="target",
        call_latency="latency_ms",
    )
    m = trace.messages.join(calls, on="ordinal", how="left").with_columns(
        method_or_call=pl.coalesce("method", "call_method"),
    )
    if sessions:
        m = m.filter(pl.col("session").is_in(list(sessions)))
    if methods:
        m = m.filter(pl.col("method_or_call").is_in(list(methods)))
    if kinds:
        m = m.filter(pl.col("kind").cast(pl.String).is_in(list(kinds)))
    kind = pl.col("kind")
    latency = (
        pl.when(pl.col("call_latency").is_not_null())
        .then(pl.format(" ({} ms)", pl.col("call_latency").round(1)))
        .otherwise(pl.lit(""))
    )
    answered = pl.coalesce(pl.format("{} {}", "call_method", "call_target"), "call_method")
    answered = (
        pl.when(answered.is_not_null()).then(pl.format(" to {}", answered)).otherwise(pl.lit(""))
    )
    text = pl.coalesce("message", "raw").str.slice(0, _TEXT_LIMIT)
    outcome = (
        pl.when(pl.col("tool_error").fill_null(False))
        .then(pl.lit("tool error"))
        .when(pl.col("result_type").is_not_null() & (pl.col("result_type") != "complete"))
        .then(pl.col("result_type"))
        .otherwise(pl.lit("result"))
    )
    what = (
        pl.when(kind.is_in(["request", "notification"]))
        .then(pl.concat_str([pl.col("method"), pl.col("target")], separator=" ", ignore_nulls=True))
        .when(kind == "response")
        .then(pl.concat_str([outcome, answered, latency]))
        .when(kind == "error")
        .then(
            pl.concat_str(
                [
                    pl.lit("error "),
                    pl.col("error_code").cast(pl.String).fill_null("?"),
                    pl.lit(" "),
                    pl.col("error_message").fill_null(""),
                    answered,
                    latency,
                ]
            )
        )
        .when(kind == "invalid")
        .then(pl.format("INVALID: {}", pl.col("parse_error")))
        .when(kind == "blank")
        .then(pl.lit("(blank line)"))
        .otherwise(pl.format("[{}] {}", kind.cast(pl.String), text))
    )
    batch = (
        pl.when(pl.col("batched"))
        .then(pl.format("[batch {}] ", "batch_index"))
        .otherwise(pl.lit(""))
    )
    return m.select(
        "source",
        "line",
        "ts",
        "session",
        pl.col("direction").cast(pl.String),
        pl.col("kind").cast(pl.String),
        "id",
        method="method_or_call",
        what=pl.concat_str([batch, what]),
    )
