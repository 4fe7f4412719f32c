"""What a trace contains, in numbers: the data behind ``mcptrace summary``.

Pure functions over the trace tables; rendering is the CLI's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from mcptrace.trace import Trace

#: how many invalid lines the summary lists by location
INVALID_SAMPLE = 20


@dataclass
class Summary:
    """Everything ``mcptrace summary`` reports; ``as_dict`` is its JSON form."""

    sources: list[dict[str, Any]]
    sessions: list[dict[str, Any]]
    kinds: dict[str, int]
    methods: dict[str, int]
    outcomes: dict[str, int]
    first_ts: datetime | None
    last_ts: datetime | None
    messages: int
    untimed: int
    unanswered: int
    orphans: int
    invalid: int
    invalid_lines: list[dict[str, Any]]
    direction_inferred: int
    direction_unknown: int
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
            "untimed": self.untimed,
            "kinds": self.kinds,
            "methods": self.methods,
            "outcomes": self.outcomes,
            "unanswered": self.unanswered,
            "orphans": self.orphans,
            "invalid": self.invalid,
            "invalid_lines": self.invalid_lines,
            "direction_inferred": self.direction_inferred,
            "direction_unknown": self.direction_unknown,
            "sources": self.sources,
            "sessions": self.sessions,
            "notes": self.notes,
        }


def _many(n: int, one: str, more: str) -> str:
    """``n`` and the words that agree with it: ``1 message has``, ``2 messages have``."""
    return f"{n} {one if n == 1 else more}"


def _counts(series: pl.Series) -> dict[str, int]:
    counts = series.drop_nulls().cast(pl.String).value_counts(sort=True)
    return {str(k): int(v) for k, v in counts.iter_rows()}


def summarize(trace: Trace) -> Summary:
    """Count what the trace holds: per file, per session, per kind, method and outcome."""
    m = trace.messages
    calls = trace.calls
    sessions = trace.sessions
    invalid = m.filter(pl.col("kind") == "invalid")
    protocol = m.filter(pl.col("kind").is_in(["request", "notification", "response", "error"]))
    notes: list[str] = []
    for row in trace.sources.iter_rows(named=True):
        if row["note"]:
            notes.append(f"{row['source']}: {row['note']}")
    untimed = int(m["ts"].null_count())
    if m.height and untimed == m.height:
        notes.append("no timestamps in the capture: latencies and time spans are unknown")
    local = int((m["ts_quality"] == "local").sum())
    if local:
        notes.append(
            f"{_many(local, 'timestamp is a', 'timestamps are')} local wall-clock "
            f"{'time' if local == 1 else 'times'} without a zone "
            "(read as UTC unless --tz was given)"
        )
    unknown_dir = int((protocol["direction"] == "unknown").sum())
    if unknown_dir:
        notes.append(
            f"{_many(unknown_dir, 'protocol message has', 'protocol messages have')} no known "
            "direction: the capture does not record it and the method and id pairing could "
            "not settle it (ambiguous)"
        )
    return Summary(
        sources=trace.sources.to_dicts(),
        sessions=sessions.drop("client_capabilities", "server_capabilities").to_dicts(),
        kinds=_counts(m["kind"]),
        methods=_counts(m["method"]),
        outcomes=_counts(calls["outcome"]),
        first_ts=m["ts"].min(),  # type: ignore[arg-type]
        last_ts=m["ts"].max(),  # type: ignore[arg-type]
        messages=m.height,
        untimed=untimed,
        unanswered=int(calls["outcome"].is_in(["unanswered", "cancelled"]).sum()),
        orphans=int((calls["outcome"] == "orphan").sum()),
        invalid=invalid.height,
        invalid_lines=invalid.head(INVALID_SAMPLE)
        .select("source", "line", "parse_error")
        .to_dicts(),
        direction_inferred=int(m["direction_inferred"].sum()),
        direction_unknown=unknown_dir,
        notes=notes,
    )
