"""Moments given by a user (a window's edges, a deploy time) as the tables' UTC times.

The tables' times are time-zone aware UTC. On the command line a moment is ISO 8601
text; in Python or a notebook it may be that text too, a ``datetime`` with or without
a zone, or a ``date``. One reading for all of them: a moment without a zone is UTC
(captures are compared across machines, and UTC is what the tables hold).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time

#: what the functions taking a moment accept
Moment = datetime | date | str


def as_utc(value: Moment, what: str = "time") -> datetime:
    """``value`` as a UTC ``datetime``: ISO 8601 text (``2026-09-15T22:45:00Z``, an
    offset, a space for the ``T``, a bare date), a ``datetime`` (without a zone: UTC) or
    a ``date`` (its midnight, UTC). Raises ValueError for text that is not ISO 8601 and
    TypeError for another type; ``what`` names the value in the message."""
    if isinstance(value, str):
        try:
            # fromisoformat of Python 3.11 reads "Z", offsets, a space or "T", bare dates
            value = datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise ValueError(
                f"{what} {value!r} is not an ISO 8601 time (e.g. 2026-09-15T22:45:00Z)"
            ) from exc
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=UTC)
    raise TypeError(f"{what} must be a datetime, a date or ISO 8601 text, not {value!r}")


def as_utc_or_none(value: Moment | None, what: str = "time") -> datetime | None:
    """:func:`as_utc`, passing None through (an open edge of a window)."""
    return None if value is None else as_utc(value, what)
