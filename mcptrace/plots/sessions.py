"""The session timeline: every call as a bar from its request to its end, one lane per session.

This module draws and returns figures; it never shows or saves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.collections import PatchCollection
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator

from mcptrace.analysis._common import messages_of, requests_of
from mcptrace.analysis.traffic import _with_cancel_ts
from mcptrace.plots._common import (
    NO_TIMESTAMPS,
    OPEN_HATCH,
    OUTCOME_COLORS,
    OUTCOME_LABELS,
    capture_end,
    date_nums,
    literal_text,
    new_axes,
    no_data,
    plural,
    time_axis,
)
from mcptrace.schema import CALLS
from mcptrace.trace import Trace

__all__ = ["timeline"]

_TS = pl.Datetime("us", "UTC")
_Floats = npt.NDArray[np.float64]
#: Overlapping calls of one session are drawn in up to this many tracks of its lane;
#: beyond that, bars overlap (they stay visible through their transparency).
_MAX_TRACKS = 6
#: Share of a lane's height its bars fill (the rest separates lanes).
_LANE_FILL = 0.8


@literal_text
def timeline(
    calls: Trace | pl.DataFrame,
    sessions: Sequence[str] | None = None,
    max_sessions: int = 30,
    *,
    notifications: bool = False,
    ax: Axes | None = None,
) -> Figure:
    """One lane per session, one bar per call from its request to its end, coloured by outcome.

    A call ends at its response; a cancelled call at its ``notifications/cancelled``
    when the messages give its time; an unanswered call (or a cancelled one whose
    cancellation has no time) is drawn hatched up to the end of the capture. Calls that
    overlap in a session are spread over tracks within its lane, so a long call does
    not hide the short ones sent meanwhile. Calls too short to see are drawn about one
    pixel wide; calls without a request time are left out (the title says how many).

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace` (which also gives cancellation times, the end of
        the capture and the notifications), its calls table or its messages table.
    sessions
        Session keys to draw, in any order; all sessions when None.
    max_sessions
        Most lanes: the sessions that started first. The title says how many more there
        are.
    notifications
        Also mark each notification (progress, log, cancellation...) as a tick at the
        top of its session's lane; needs the messages (a Trace or a messages table).
    ax
        Draw into this Axes; a new figure 10 in wide, taller with more lanes, when None.

    Returns
    -------
    matplotlib.figure.Figure
        Lanes top to bottom in order of each session's first request, labelled with the
        session key and client name; one bar per call in one bar container per outcome
        (open-ended calls in a hatched container of their own).

    Examples
    --------
    >>> import polars as pl
    >>> from datetime import datetime, timedelta, UTC
    >>> t0 = datetime(2026, 8, 1, tzinfo=UTC)
    >>> calls = pl.DataFrame({
    ...     "session": ["a", "a", "b"],
    ...     "client": ["host", "host", "agent"],
    ...     "outcome": ["ok", "error", "unanswered"],
    ...     "request_ts": [t0, t0 + timedelta(seconds=1), t0 + timedelta(seconds=2)],
    ...     "response_ts": [t0 + timedelta(seconds=3), t0 + timedelta(seconds=2), None],
    ... })
    >>> fig = timeline(calls)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a (host)', 'b (agent)']
    """
    frame = _with_cancel_ts(CALLS.conform(requests_of(calls)), messages_of(calls))
    if sessions is not None:
        frame = frame.filter(pl.col("session").is_in(list(sessions)))
    timed = frame.filter(pl.col("request_ts").is_not_null())
    untimed = frame.height - timed.height
    title = "Calls per session"
    if timed.is_empty():
        fig, ax = new_axes(ax)
        return no_data(fig, ax, title, NO_TIMESTAMPS)
    lanes = (
        timed.group_by("session")
        .agg(pl.col("request_ts").min().alias("first"), pl.col("client").drop_nulls().first())
        .sort("first", "session", nulls_last=True)
    )
    hidden = max(lanes.height - max_sessions, 0)
    lanes = lanes.head(max_sessions)
    height = min(max(5.0, 1.5 + 0.45 * lanes.height), 16.0)
    fig, ax = new_axes(ax, (10.0, height))
    lane_of = {s: i for i, s in enumerate(lanes["session"].to_list())}
    end = capture_end(calls, [timed["_cancel_ts"]])
    bars = _bars(timed.filter(pl.col("session").is_in(list(lane_of))), end)
    starts = date_nums(bars["request_ts"])
    ends = date_nums(bars["end_ts"])
    span = float(np.nanmax(ends) - np.nanmin(starts)) or 1 / 86_400
    # about one pixel of a 10 in figure at 100 dpi: an instant call stays visible
    widths = np.maximum(ends - starts, span / 900)
    lane = np.array([lane_of[s] for s in bars["session"].to_list()], dtype=np.float64)
    # tracks follow the real ends: instant calls drawn a pixel wide still share a track
    y, track_height = _tracks(lane, starts, ends)
    outcome = bars["outcome"].cast(pl.String).to_numpy()
    open_ended = bars["open"].to_numpy()
    handles: list[Artist | BarContainer] = []
    for name, color in OUTCOME_COLORS.items():
        for is_open in (False, True):
            sel = (outcome == name) & (open_ended == is_open)
            if not sel.any():
                continue
            drawn = _barh(
                ax,
                y[sel],
                widths[sel],
                left=starts[sel],
                height=track_height[sel] * 0.85,
                color=color,
                alpha=0.85,
                hatch=OPEN_HATCH if is_open else None,
                edgecolor="white" if is_open else "none",
                linewidth=0,
                label=_outcome_label(name, is_open=is_open),
                # failures over successes where tracks run out and bars overlap
                zorder=2 if name == "ok" else 3,
            )
            handles.append(drawn)
    if notifications:
        handles += _notification_ticks(ax, calls, lane_of)
    labels = [f"{s} ({c})" if c else str(s) for s, c in lanes.select("session", "client").rows()]
    ax.set_yticks(range(lanes.height), labels, fontsize="small" if lanes.height > 12 else None)
    ax.yaxis.set_minor_locator(FixedLocator([i + 0.5 for i in range(lanes.height - 1)]))
    ax.grid(True, axis="y", which="minor", color="0.85")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    ax.tick_params(axis="y", which="minor", length=0)
    ax.set_ylim(lanes.height - 0.5, -0.5)
    margin = span * 0.01
    ax.set_xlim(float(np.nanmin(starts)) - margin, float(np.nanmax(ends)) + margin)
    time_axis(ax)
    ax.set_ylabel("session (client)")
    ax.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="small",
        title="outcome",
    )
    title += f": {plural(bars.height, 'call')} in {plural(lanes.height, 'session')}"
    notes = []
    if hidden:
        notes.append(f"{plural(hidden, 'more session')} not shown")
    if untimed:
        notes.append(f"{plural(untimed, 'call')} without a time not shown")
    if notes:
        title += " (" + "; ".join(notes) + ")"
    ax.set_title(title)
    return fig


def _barh(
    ax: Axes,
    y: _Floats,
    width: _Floats,
    *,
    left: _Floats,
    height: _Floats,
    label: str,
    **style: Any,
) -> BarContainer:
    """What ``ax.barh`` returns (a bar container of rectangles centred on ``y``), drawn
    as one collection. Matplotlib handles each patch artist on its own: adding one
    updated the data limits (~0.9 ms a bar), and saving a figure of 10^4 bars (drawing
    each, and the layout asking each for its extent) took seconds. The rectangles stay
    in the container for whoever inspects the figure; the collection draws them. The
    caller sets the data limits."""
    # as in barh, `color` fills the bar and leaves its edge to `edgecolor`
    style["facecolor"] = style.pop("color")
    bars = [
        Rectangle((x0, y0 - h / 2), w, h, **style)
        for x0, y0, w, h in zip(
            left.tolist(), y.tolist(), width.tolist(), height.tolist(), strict=True
        )
    ]
    drawn = PatchCollection(bars, match_original=True, zorder=style.get("zorder"))
    if style.get("hatch"):
        drawn.set_hatch(style["hatch"])
    ax.add_collection(drawn, autolim=False)
    container = BarContainer(bars, orientation="horizontal", label=label)
    ax.add_container(container)
    return container


def _bars(frame: pl.DataFrame, end: object) -> pl.DataFrame:
    """Add ``end_ts`` (where each bar stops) and ``open`` (no known end)."""
    capture_end_ts = pl.lit(end, _TS)
    response = pl.col("response_ts")
    cancelled_at = pl.when(pl.col("outcome") == "cancelled").then(pl.col("_cancel_ts"))
    # answered: a response row exists, even when it has no time
    answered = pl.col("response_ordinal").is_not_null() | response.is_not_null()
    stop = (
        pl.when(response.is_not_null())
        .then(response)
        .when(cancelled_at.is_not_null())
        .then(cancelled_at)
        .when(answered)
        .then(pl.col("request_ts"))
        .otherwise(capture_end_ts)
    )
    return frame.with_columns(
        # a response timed before its request (two files' clocks) ends the bar at once
        end_ts=pl.max_horizontal(pl.col("request_ts"), stop),
        open=~answered & cancelled_at.is_null(),
    ).sort("request_ts")


def _tracks(lane: _Floats, starts: _Floats, ends: _Floats) -> tuple[_Floats, _Floats]:
    """The y centre and height of each bar: overlapping calls of a lane go to separate
    tracks, first free track first (bars arrive sorted by start)."""
    track = np.zeros(len(lane), dtype=np.int64)
    busy: dict[float, list[float]] = {}
    for i, (ln, start, stop) in enumerate(zip(lane, starts, ends, strict=True)):
        until = busy.setdefault(float(ln), [])
        free = next((k for k, t in enumerate(until) if t <= start), None)
        if free is None and len(until) < _MAX_TRACKS:
            until.append(stop)
            free = len(until) - 1
        elif free is None:
            # every track busy: share the one that frees first
            free = int(np.argmin(until))
        until[free] = max(until[free], stop)
        track[i] = free
    count = np.array([len(busy[float(ln)]) for ln in lane], dtype=np.float64)
    height = _LANE_FILL / count
    y = lane - _LANE_FILL / 2 + (track + 0.5) * height
    return y, height


def _outcome_label(name: str, *, is_open: bool) -> str:
    if not is_open:
        return OUTCOME_LABELS[name]
    if name == "unanswered":
        return "unanswered (to end of capture)"
    return f"{OUTCOME_LABELS[name]} (end unknown)"


def _notification_ticks(
    ax: Axes, data: Trace | pl.DataFrame, lane_of: dict[str, int]
) -> list[Artist]:
    """Mark each notification of a drawn session; the legend handle, if any was drawn."""
    messages = messages_of(data)
    if messages is None:
        return []
    notes = messages.filter(
        (pl.col("kind") == "notification")
        & pl.col("ts").is_not_null()
        & pl.col("session").is_in(list(lane_of))
    )
    if notes.is_empty():
        return []
    y = [lane_of[s] - _LANE_FILL / 2 - 0.04 for s in notes["session"].to_list()]
    ticks = ax.scatter(
        date_nums(notes["ts"]),
        y,
        marker="|",
        s=30,
        color="0.25",
        linewidths=0.8,
        label="notification",
        zorder=4,
    )
    return [ticks]
