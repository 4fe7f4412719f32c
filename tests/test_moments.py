"""Moments a user gives (window edges, a deploy time) in any of the usual spellings."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from factories import SAMPLES

import mcptrace
from mcptrace.analysis import split_at
from mcptrace.moments import as_utc

INCIDENT = SAMPLES / "capture" / "incident-2025-11-25.jsonl"
T = datetime(2026, 9, 15, 22, 45, tzinfo=UTC)


@pytest.mark.parametrize(
    "given",
    [
        "2026-09-15T22:45:00Z",
        "2026-09-15 22:45",
        " 2026-09-15T23:45:00+01:00 ",
        datetime(2026, 9, 15, 22, 45),  # no zone: UTC
        datetime(2026, 9, 15, 20, 45, tzinfo=timezone(timedelta(hours=-2))),
    ],
)
def test_every_spelling_of_a_moment_is_the_same_utc_time(given: object) -> None:
    moment = as_utc(given)  # type: ignore[arg-type]
    assert moment == T and moment.tzinfo == UTC


def test_a_date_is_its_midnight_and_bad_values_say_what_they_are() -> None:
    assert as_utc(date(2026, 9, 15)) == datetime(2026, 9, 15, tzinfo=UTC)
    with pytest.raises(ValueError, match="since 'noon' is not an ISO 8601 time"):
        as_utc("noon", "since")
    with pytest.raises(TypeError, match="at must be a datetime, a date or ISO 8601 text"):
        as_utc(5, "at")  # type: ignore[arg-type]


def test_a_notebook_can_cut_a_window_and_split_calls_with_text() -> None:
    trace = mcptrace.load(INCIDENT)
    by_text = trace.filter(since="2026-09-15T22:45:00Z")
    by_datetime = trace.filter(since=T)
    assert by_text.messages.height == by_datetime.messages.height > 0
    assert by_text.calls.height == by_datetime.calls.height
    naive = trace.filter(since=datetime(2026, 9, 15, 22, 45), until="2026-09-15T22:46:00Z")
    assert naive.messages["ts"].min() >= T  # type: ignore[operator]
    before, after, _ = split_at(trace, "2026-09-15T22:44:00Z")
    assert (before.height, after.height) == (54, 46)
