"""Shared plumbing of the plots: figures, time and latency axes, colours, the empty plot.

The plots use Matplotlib's explicit ``Figure``/``Axes`` interface and never pyplot: a
library that opened pyplot figures would keep every one of them alive in pyplot's
registry (and warn after twenty), and would depend on the interactive backend of
whoever imports it. A bare :class:`~matplotlib.figure.Figure` still renders inline in
Jupyter and saves with ``fig.savefig``. Nothing here shows or saves a figure.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import ParamSpec, TypeVar

import matplotlib
import matplotlib.dates as mdates
import numpy as np
import numpy.typing as npt
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from mcptrace.analysis._common import calls_of, messages_of
from mcptrace.trace import Trace

#: Colour of each call outcome, the same in every plot. Okabe and Ito's palette, which
#: stays distinguishable with the common colour-vision deficiencies; failures are the
#: warm colours, "never answered" is grey (and hatched where it is drawn as a bar).
OUTCOME_COLORS: dict[str, str] = {
    "ok": "#009E73",
    "error": "#D55E00",
    "tool_error": "#E69F00",
    "input_required": "#56B4E9",
    "cancelled": "#CC79A7",
    "unanswered": "#7F7F7F",
}

#: Legend text of each outcome.
OUTCOME_LABELS: dict[str, str] = {
    "ok": "ok",
    "error": "error (JSON-RPC)",
    "tool_error": "tool error (isError)",
    "input_required": "input required",
    "cancelled": "cancelled",
    "unanswered": "unanswered",
}

#: Hatch of what has no known end (a call still waiting when the capture stopped).
OPEN_HATCH = "////"

#: Default size in inches: wide enough for a time axis and a legend beside it.
FIGSIZE = (10.0, 5.0)

#: Latencies are drawn on a log scale, where 0 has no place: a call answered within the
#: clock's resolution (0 ms) is drawn at this floor instead of disappearing.
FLOOR_MS = 0.01

NO_TIMESTAMPS = "no timestamped calls"

_US_PER_DAY = 86_400_000_000


P = ParamSpec("P")
R = TypeVar("R")


def literal_text(fn: Callable[P, R]) -> Callable[P, R]:
    """Draw capture text (tool names, session keys) literally: matplotlib would read a
    `$` in a tool name as mathtext, and a hostile name could make it raise."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with matplotlib.rc_context({"text.parse_math": False}):
            return fn(*args, **kwargs)

    return wrapper


def new_axes(ax: Axes | None, size: tuple[float, float] = FIGSIZE) -> tuple[Figure, Axes]:
    """The caller's Axes and its figure, or a new figure of ``size`` with one Axes."""
    if ax is not None:
        return root_figure(ax), ax
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def root_figure(ax: Axes) -> Figure:
    """The Figure that holds ``ax``: the one to save, even when ``ax`` is in a SubFigure."""
    fig = ax.figure
    return fig if isinstance(fig, Figure) else fig.figure


def no_data(fig: Figure, ax: Axes, title: str, message: str) -> Figure:
    """Write ``message`` in the middle of an otherwise empty ``ax``; return ``fig``."""
    ax.set_title(title)
    ax.text(
        0.5,
        0.5,
        message,
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=13,
        color="0.35",
    )
    ax.set_xticks([])
    ax.set_yticks([])
    return fig


def date_nums(series: pl.Series) -> npt.NDArray[np.float64]:
    """Matplotlib date numbers (days since its epoch) of a datetime Series; NaN for null.

    Vectorised through epoch microseconds: ``date2num`` on a list of datetimes costs a
    Python call per value, noticeable on captures of 100k calls.
    """
    offset = float(mdates.date2num(datetime(1970, 1, 1, tzinfo=UTC)))  # type: ignore[no-untyped-call]
    micros = series.dt.epoch("us").cast(pl.Float64).to_numpy()
    return np.asarray(micros / _US_PER_DAY + offset, dtype=np.float64)


def day_fraction(micros: float) -> float:
    """A duration in microseconds as a date-number width (days)."""
    return micros / _US_PER_DAY


def time_axis(ax: Axes) -> None:
    """Format the x axis as UTC times (concise ticks, the date once in the corner)."""
    locator = mdates.AutoDateLocator(tz=UTC, minticks=4, maxticks=10)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    # matplotlib.dates has no type hints
    formatter = mdates.ConciseDateFormatter(locator, tz=UTC)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_formatter(formatter)
    ax.set_xlabel("time (UTC)")


def latency_axis(ax: Axes, axis: str = "y") -> None:
    """Log scale in milliseconds with plain tick labels (10, 100, 1,000 ms, not 10^3)."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    if axis == "y":
        ax.set_yscale("log")
        ax.set_ylabel("latency (ms)")
    else:
        ax.set_xscale("log")
        ax.set_xlabel("latency (ms)")
    target.set_major_formatter(FuncFormatter(_ms_tick))
    # ticks between the decades would crowd the labels; gridlines still show them
    target.set_minor_formatter(NullFormatter())


def _ms_tick(value: float, _pos: int | None = None) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def fmt_ms(ms: float) -> str:
    """A latency for a legend: "0.4 ms", "230 ms", "2.9 s", "20 s"."""
    if ms >= 10_000:
        return f"{ms / 1000:.0f} s"
    if ms >= 1000:
        return f"{ms / 1000:.1f} s"
    if ms >= 10:
        return f"{ms:.0f} ms"
    return f"{ms:.1f} ms"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def group_label(value: object) -> str:
    """A group key as legend text; calls without one (no method, no tool) say so."""
    return "(none)" if value is None else str(value)


def capture_end(data: Trace | pl.DataFrame, extra: Sequence[pl.Series] = ()) -> datetime | None:
    """The last time of the capture: of any message when the messages are at hand, else of
    any request or response of the calls (and of the ``extra`` times, e.g. cancellations).

    An unanswered call is drawn as waiting until this moment: the capture says nothing
    about it after that.
    """
    times: list[object] = []
    messages = messages_of(data)
    if messages is not None:
        times.append(messages["ts"].max())
    calls = calls_of(data)
    times.extend(
        calls[name].max() for name in ("request_ts", "response_ts") if name in calls.columns
    )
    times.extend(s.max() for s in extra)
    known = [t for t in times if isinstance(t, datetime)]
    return max(known) if known else None
