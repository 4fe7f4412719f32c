"""What changed between two sets of calls, drawn: each group's p50 and p95, before and after.

The picture of :func:`mcptrace.analysis.compare`: one row per group, most regressed
first, with an arrow from the latency before to the latency after (p95 the thick one,
p50 the thin one) on a log scale, so that a tenfold slowdown is as long anywhere on it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mcptrace.analysis.compare import compare
from mcptrace.plots._common import (
    FLOOR_MS,
    NO_TIMESTAMPS,
    group_label,
    latency_axis,
    literal_text,
    new_axes,
    no_data,
)
from mcptrace.trace import Trace

__all__ = ["latency_changes"]

#: slower and faster (Okabe and Ito's vermillion and bluish green, as the outcomes)
_SLOWER, _FASTER = "#D55E00", "#009E73"


@literal_text
def latency_changes(
    before: Trace | pl.DataFrame,
    after: Trace | pl.DataFrame,
    by: str | Sequence[str] = "method",
    top: int = 12,
    *,
    ax: Axes | None = None,
) -> Figure:
    """Each group's p50 and p95 latency before and after, most regressed first.

    Parameters
    ----------
    before, after
        Each a :class:`~mcptrace.trace.Trace`, its calls table or its messages table (see
        :func:`mcptrace.analysis.compare`; :func:`mcptrace.analysis.split_at` cuts one
        capture at a moment).
    by
        The grouping dimension, as for :func:`mcptrace.analysis.latency`.
    top
        Draw at most this many groups, in :func:`~mcptrace.analysis.compare`'s order
        (failing more, then slower); the title says how many more there are. Groups
        without a latency on both sides cannot be drawn and are left out too.
    ax
        Draw into this Axes; a new figure when None.

    Returns
    -------
    matplotlib.figure.Figure
        One row per group, top to bottom: a thick arrow from p95 before (hollow) to p95
        after (filled) and a thin one for p50, red when slower, green when faster. The
        tick labels give the calls and the share that failed on each side.

    Examples
    --------
    >>> import polars as pl
    >>> old = pl.DataFrame({"method": ["tools/call"] * 2, "outcome": ["ok", "ok"],
    ...                     "latency_ms": [10.0, 20.0]})
    >>> new = pl.DataFrame({"method": ["tools/call"] * 2, "outcome": ["ok", "error"],
    ...                     "latency_ms": [400.0, 800.0]})
    >>> fig = latency_changes(old, new)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['tools/call\\n2 → 2 calls, failed 0% → 50%']
    """
    keys = [by] if isinstance(by, str) else list(by)
    title = "Latency before and after, by " + ", ".join(keys)
    changes = compare(before, after, keys)
    drawable = changes.filter(
        pl.col("p95_before").is_not_null() & pl.col("p95_after").is_not_null()
    )
    # a row of a fixed height per group drawn, so that a few groups are not stretched
    fig, ax = new_axes(ax, (10.0, 1.4 + 0.75 * max(1, min(top, drawable.height))))
    if drawable.is_empty():
        # read off the comparison: each side's calls are paired only once
        if changes.is_empty():
            return no_data(fig, ax, title, "no calls")
        timed = changes.select(pl.col("p50_before", "p50_after").is_not_null().any()).row(0)
        message = (
            NO_TIMESTAMPS if not any(timed) else "no group has a latency both before and after"
        )
        return no_data(fig, ax, title, message)
    hidden = max(drawable.height - top, 0)
    rows = drawable.head(top).rows(named=True)
    if hidden:
        title += f" ({len(rows)} of {len(rows) + hidden} groups)"
    # the most regressed at the top: rows are drawn from the bottom up
    ys = np.arange(len(rows), 0, -1, dtype=float)
    for y, row in zip(ys, rows, strict=True):
        for low, high, width, offset in (
            ("p95_before", "p95_after", 2.4, 0.12),
            ("p50_before", "p50_after", 1.0, -0.12),
        ):
            start = max(float(row[low]), FLOOR_MS)
            end = max(float(row[high]), FLOOR_MS)
            color = _SLOWER if end > start else _FASTER
            ax.annotate(
                "",
                xy=(end, y + offset),
                xytext=(start, y + offset),
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": color,
                    "lw": width,
                    "shrinkA": 0,
                    "shrinkB": 0,
                },
            )
            ax.plot([start], [y + offset], "o", mfc="white", mec=color, ms=4 + width)
            ax.plot([end], [y + offset], "o", color=color, ms=4 + width)
    ax.set_yticks(ys, [_label(row, keys) for row in rows])
    ax.set_ylim(0.4, len(rows) + 0.6)
    latency_axis(ax, "x")
    ax.grid(True, which="major", axis="x", alpha=0.3)
    ax.legend(
        handles=[
            Line2D(
                [], [], color="0.3", lw=2.4, marker="o", mfc="white", label="p95 before → after"
            ),
            Line2D(
                [], [], color="0.3", lw=1.0, marker="o", mfc="white", label="p50 before → after"
            ),
            Line2D([], [], color=_SLOWER, lw=2, label="slower"),
            Line2D([], [], color=_FASTER, lw=2, label="faster"),
        ],
        loc="lower right",
        fontsize="small",
    )
    ax.set_title(title)
    return fig


def _label(row: dict[str, object], keys: list[str]) -> str:
    name = ", ".join(group_label(row[k]) for k in keys)

    def pct(value: object) -> str:
        return "-" if not isinstance(value, float) else f"{value * 100:.0f}%"

    return (
        f"{name}\n{row['calls_before']} → {row['calls_after']} calls, "
        f"failed {pct(row['error_rate_before'])} → {pct(row['error_rate_after'])}"
    )
