"""What a report looks at: some sessions and an incident window of a trace.

The window is cut with :meth:`Trace.filter`, which pairs calls and identifies sessions
on the whole capture (restricted to the chosen sessions) and only then keeps what
happened in the window:

* messages timed inside the window (untimed rows are dropped);
* calls whose *request* is inside it, with their real outcome and latency even when the
  answer came later;

and the report keeps the findings (linted on the whole capture, never on the cut
window: its edges would read as missing handshakes) on messages inside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import polars as pl

from mcptrace.moments import Moment, as_utc_or_none
from mcptrace.trace import Trace

__all__ = ["Focus", "focus"]


@dataclass(frozen=True)
class Focus:
    """The report's view of a trace."""

    #: the windowed trace every table and plot is drawn from
    view: Trace
    #: the chosen sessions over the whole capture: linted, and the source of raw lines
    context: Trace
    since: datetime | None
    until: datetime | None
    sessions: tuple[str, ...] | None

    @property
    def windowed(self) -> bool:
        return self.since is not None or self.until is not None

    def in_window(self, ts: pl.Expr) -> pl.Expr:
        """True for times inside the window (always true without one, null-safe)."""
        cond = pl.lit(True)
        if self.since is not None:
            cond &= ts >= self.since
        if self.until is not None:
            cond &= ts <= self.until
        return cond.fill_null(False) if self.windowed else cond


def focus(
    trace: Trace,
    *,
    since: Moment | None = None,
    until: Moment | None = None,
    session: str | Sequence[str] | None = None,
) -> Focus:
    """Restrict ``trace`` to some sessions and a time window (see the module docstring)."""
    since, until = as_utc_or_none(since, "since"), as_utc_or_none(until, "until")
    sessions = (
        None if session is None else tuple([session] if isinstance(session, str) else session)
    )
    context = trace if sessions is None else trace.filter(session=list(sessions))
    result = Focus(context, context, since, until, sessions)
    if not result.windowed:
        return result
    view = context.filter(since=since, until=until)
    return Focus(view, context, since, until, sessions)
