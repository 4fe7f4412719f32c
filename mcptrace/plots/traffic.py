"""Traffic plots: requests in flight over time.

The numbers are those of :func:`mcptrace.analysis.concurrency`. This module draws and
returns figures; it never shows or saves them.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from mcptrace import analysis
from mcptrace.analysis._common import BUCKET, check_every
from mcptrace.plots._common import (
    NO_TIMESTAMPS,
    date_nums,
    literal_text,
    new_axes,
    no_data,
    time_axis,
)
from mcptrace.trace import Trace

__all__ = ["concurrency"]

#: a figure is at most ~2,000 pixels wide (10 in at 200 dpi): with many more steps than
#: that, each of this many columns of time is drawn at the most in flight during it, the
#: upper edge of what the exact line would paint there (drawing 10^6 steps took 14 s)
_COLUMNS = 2_000


@literal_text
def concurrency(
    calls: Trace | pl.DataFrame,
    every: str | None = None,
    *,
    ax: Axes | None = None,
) -> Figure:
    """Requests in flight over time, as a step line, with its peak marked.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace` (whose last message is the end of the capture,
        and which gives cancellation times), its calls table or its messages table. A
        call is in flight from its request until its response, its cancellation, or the
        end of the capture when neither came (see :func:`mcptrace.analysis.concurrency`).
    every
        None: the exact number at every moment. A Polars duration ("1m"): the largest
        number in flight during each interval, held across it.
    ax
        Draw into this Axes; a new 10x5 in figure when None.

    Returns
    -------
    matplotlib.figure.Figure
        One step line (the area under it shaded) and the peak annotated. With far more
        steps than the figure has pixels, the line is drawn per column of time (2,000
        columns), each a stroke from the least to the most in flight during it: the
        picture the exact line paints, drawn in a fraction of the time; the peak is exact.

    Examples
    --------
    >>> import polars as pl
    >>> from datetime import datetime, UTC
    >>> t = [datetime(2026, 8, 1, 10, 0, s, tzinfo=UTC) for s in range(4)]
    >>> calls = pl.DataFrame({
    ...     "outcome": ["ok", "ok"],
    ...     "request_ts": [t[0], t[1]],
    ...     "response_ordinal": [1, 3],
    ...     "response_ts": [t[2], t[3]],
    ... })
    >>> fig = concurrency(calls)
    >>> fig.axes[0].get_title()
    'Requests in flight (peak 2)'
    """
    if every is not None:
        check_every(every)
    steps = analysis.concurrency(calls, every)
    title = "Requests in flight" if every is None else f"Most requests in flight per {every}"
    fig, ax = new_axes(ax)
    if steps.is_empty():
        return no_data(fig, ax, title, NO_TIMESTAMPS)
    if every is None:
        x = date_nums(steps["ts"])
    else:
        # each bucket's value holds until the bucket ends: add the last bucket's end
        steps = steps.rename({BUCKET: "ts"})
        last = steps.tail(1).with_columns(pl.col("ts").dt.offset_by(every))
        steps = pl.concat([steps, last])
        x = date_nums(steps["ts"])
    y = steps["in_flight"].to_numpy()
    if len(x) > 4 * _COLUMNS and x[-1] > x[0]:
        # as the exact line would paint it: in each column a stroke from the least to
        # the most in flight during it, the area shaded up to the most
        edges, low, high = _columns(x, y, _COLUMNS)
        middle = (edges[:-1] + edges[1:]) / 2
        ax.plot(
            np.repeat(middle, 2),
            np.column_stack([low, high]).ravel(),
            color="C0",
            linewidth=1.4,
            label="in flight",
        )
        ax.fill_between(
            edges, np.append(high, high[-1]), step="post", color="C0", alpha=0.2, linewidth=0
        )
    else:
        ax.step(x, y, where="post", color="C0", linewidth=1.4, label="in flight")
        ax.fill_between(x, y, step="post", color="C0", alpha=0.2, linewidth=0)
    peak = int(y.max())
    i = int(np.argmax(y))
    # over the middle of the step that reaches the peak (a whole interval with every)
    at = float(x[i] + x[i + 1]) / 2 if i + 1 < len(x) else float(x[i])
    ax.annotate(
        f"peak {peak}",
        xy=(at, peak),
        xytext=(0, 6),
        textcoords="offset points",
        ha="center",
        fontsize="small",
    )
    ax.set_ylim(0, peak * 1.15 + 0.5)
    margin = float(x[-1] - x[0]) * 0.01
    ax.set_xlim(float(x[0]) - margin, float(x[-1]) + margin)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("requests in flight")
    ax.grid(True, alpha=0.3)
    time_axis(ax)
    ax.set_title(f"{title} (peak {peak})")
    return fig


def _columns(
    x: np.ndarray, y: np.ndarray, columns: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A step line (``y[i]`` from ``x[i]`` to ``x[i + 1]``, ``x`` rising) cut into
    ``columns`` equal columns of time: their edges, and the least and the most the line
    is in each (the steps that start in it and the one already running when it begins)."""
    edges = np.linspace(float(x[0]), float(x[-1]), columns + 1)
    column = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, columns - 1)
    running = y[np.searchsorted(x, edges[:-1], side="right") - 1]
    high, low = running.copy(), running.copy()
    np.maximum.at(high, column, y)
    np.minimum.at(low, column, y)
    return edges, low, high
