"""The packet-list view of a trace: one descriptive line per message.

Used by ``mcptrace show`` and handy in notebooks. Responses are labelled with
the method of the request they answer and their latency, so filtering by
method keeps both halves of each call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.errors import UsageError
from mcptrace.trace import Trace

_TEXT_LIMIT = 120
_LINES = re.compile(r"^(?:(?P<file>.+):)?(?P<first>\d+)(?:-(?P<last>\d+))?$")


@dataclass(frozen=True)
class LineSpan:
    """Lines ``first`` to ``last`` of the file ``file`` (any file when None), as
    :func:`parse_lines` reads ``137``, ``130-145`` or ``capture.jsonl:137``."""

    file: str | None
    first: int
    last: int

    def names(self) -> pl.Expr:
        """Whether a row's ``source`` is this span's file: the same path, or a path that
        ends with it (``capture.jsonl`` names ``traces/capture.jsonl``)."""
        if self.file is None:
            return pl.lit(True)
        file = self.file.replace("\\", "/")
        source = pl.col("source").str.replace_all("\\", "/", literal=True)
        return (source == file) | source.str.ends_with("/" + file.lstrip("/"))


def parse_lines(text: str) -> LineSpan:
    """``N``, ``N-M``, or either after ``FILE:`` (the place ``mcptrace lint`` prints)."""
    # "capture.jsonl:137:" as copied from a lint report works too
    m = _LINES.match(text.strip().removesuffix(":"))
    if m is None:
        raise UsageError(f"--line {text!r}: expected N, N-M or FILE:N (as lint prints it)")
    first = int(m["first"])
    last = int(m["last"]) if m["last"] else first
    if first < 1 or last < first:
        raise UsageError(f"--line {text!r}: lines count from 1, and a range runs upwards")
    return LineSpan(m["file"] or None, first, last)


def _id_texts(ids: Sequence[str]) -> list[str]:
    """The ``id`` column's texts an id given on the command line may stand for: as typed
    (``34``, ``"b-7"``) and as a JSON string (``b-7`` is the id ``"b-7"``)."""
    texts = []
    for given in ids:
        texts.append(given)
        if not given.startswith('"'):
            texts.append(_json.dumps(given))
    return texts


def _around(m: pl.DataFrame, hit: pl.Expr, context: int) -> pl.Series:
    """Rows of ``m`` (in capture order) where ``hit`` holds, or that are within ``context``
    rows of one in the same file."""
    if context <= 0:
        return m.select(hit.fill_null(False)).to_series()
    rows = m.select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_row"),
        "source",
        hit.fill_null(False).alias("_hit"),
    ).with_columns(
        _lo=pl.col("_row").min().over("source"),
        _hi=pl.col("_row").max().over("source"),
    )
    hits = rows.filter("_hit")
    # each hit opens a stretch of rows and closes it after its last row: a row is shown
    # when more stretches have opened than closed before it
    edges = pl.concat(
        [
            hits.select(_at=pl.max_horizontal(pl.col("_row") - context, "_lo"), _d=pl.lit(1)),
            hits.select(_at=pl.min_horizontal(pl.col("_row") + context, "_hi") + 1, _d=pl.lit(-1)),
        ]
    )
    steps = edges.group_by("_at").agg(pl.col("_d").sum())
    return (
        rows.join(steps, left_on="_row", right_on="_at", how="left", maintain_order="left")
        .select(pl.col("_d").fill_null(0).cum_sum() > 0)
        .to_series()
    )


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
    ids: Sequence[str] | None = None,
    lines: Sequence[LineSpan] | None = None,
    context: int = 0,
    limit: int | None = None,
) -> pl.DataFrame:
    """Columns: source, line, ts, session, direction, kind, id, method, what, hit, body.

    ``ids`` keeps the messages with one of those JSON-RPC ids (``34``, ``b-7`` or
    ``"b-7"``), the cancellations naming one included; ``lines`` the messages on those
    lines. ``context`` adds that many messages before and after each one kept (of its
    file, whatever the other filters say), as ``grep -C`` does; ``hit`` tells the ones
    kept from their context. ``body`` is the message's JSON text (the line's text for
    rows that are not JSON-RPC messages). ``limit`` keeps the first that many rows."""
    calls = trace.calls.filter(pl.col("response_ordinal").is_not_null()).select(
        ordinal="response_ordinal",
        call_method="method",
        call_target="target",
        call_latency="latency_ms",
    )

    def with_calls(frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` plus the method, target and latency of the call each response answers."""
        return frame.join(calls, on="ordinal", how="left", maintain_order="left").with_columns(
            method_or_call=pl.coalesce("method", "call_method")
        )

    m = trace.messages
    if methods:
        # a response is listed under the method of the request it answers
        m = with_calls(m)
    hit = pl.lit(True)
    if sessions:
        hit &= pl.col("session").is_in(list(sessions))
    if methods:
        hit &= pl.col("method_or_call").is_in(list(methods))
    if kinds:
        hit &= pl.col("kind").cast(pl.String).is_in(list(kinds))
    if ids:
        texts = _id_texts(ids)
        hit &= pl.col("id").is_in(texts) | pl.col("cancel_id").is_in(texts)
    if lines:
        hit &= pl.any_horizontal(
            [span.names() & pl.col("line").is_between(span.first, span.last) for span in lines]
        )
    m = m.with_columns(hit=hit)
    if context > 0:
        m = m.filter(_around(m, pl.col("hit"), context))
    else:
        m = m.filter(pl.col("hit").fill_null(False))
    if limit is not None:
        m = m.head(limit)
    # the calls' columns only on the rows listed: a whole capture of 10^6 messages joined
    # with its calls took a second for `show --limit 5`
    if not methods:
        m = with_calls(m)
    kind = pl.col("kind")
    latency = (
        pl.when(pl.col("call_latency").is_not_null())
        .then(fmt(" ({} ms)", pl.col("call_latency").round(1)))
        .otherwise(pl.lit(""))
    )
    answered = pl.coalesce(fmt("{} {}", "call_method", "call_target"), "call_method")
    answered = pl.when(answered.is_not_null()).then(fmt(" to {}", answered)).otherwise(pl.lit(""))
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
        .then(fmt("INVALID: {}", pl.col("parse_error")))
        .when(kind == "blank")
        .then(pl.lit("(blank line)"))
        .otherwise(fmt("[{}] {}", kind.cast(pl.String), text))
    )
    batch = pl.when(pl.col("batched")).then(fmt("[batch {}] ", "batch_index")).otherwise(pl.lit(""))
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
        hit=pl.col("hit").fill_null(False),
        body=pl.coalesce("message", "raw"),
    )
