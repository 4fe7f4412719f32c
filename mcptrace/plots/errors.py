"""Failure plots: failed calls by kind, per group or over time.

The counts are those of :func:`mcptrace.analysis.error_breakdown`, without its
``http`` rows: an HTTP status is counted *in addition to* the JSON-RPC failure of the
same call, and stacking both would count the call twice. This module draws and
returns figures; it never shows or saves them.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from mcptrace._format import fmt
from mcptrace.analysis import error_breakdown, error_rate
from mcptrace.analysis._common import BUCKET, check_every
from mcptrace.plots._common import (
    NO_TIMESTAMPS,
    OPEN_HATCH,
    OUTCOME_COLORS,
    date_nums,
    group_label,
    literal_text,
    new_axes,
    no_data,
    plural,
    time_axis,
)
from mcptrace.trace import Trace

__all__ = ["error_distribution"]

#: Failure kinds without an error code, drawn after the codes in this order.
_CODELESS = {
    "tool_error": "tool error",
    "cancelled": "cancelled",
    "unanswered": "unanswered",
}
#: Colours of the error codes, most frequent first: reds and browns, so the codes read
#: as one family apart from the code-less kinds (which keep their outcome colours).
_CODE_COLORS = ("#D55E00", "#8C2D04", "#F16913", "#A50F15", "#FDAE6B", "#7F2704", "#E6550D")


@literal_text
def error_distribution(
    calls: Trace | pl.DataFrame,
    by: str = "method",
    every: str | None = None,
    *,
    top: int = 10,
    ax: Axes | None = None,
) -> Figure:
    """Failed calls stacked by kind: per group, or per time interval.

    A kind is a JSON-RPC error code with its name ("-32603 Internal error"), "tool
    error" (``isError: true``), "cancelled" or "unanswered" (hatched), as
    :func:`mcptrace.analysis.error_breakdown` classifies them.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table.
    by
        The grouping dimension (``method``, ``tool``, ``server``, ``session``...). Without
        ``every``, one horizontal bar per group with failures, the ``top`` groups with
        the most failures, most at the top, each labelled "failed of calls (rate)".
        With ``every``, the groups are added up; ``tool``, ``prompt`` and ``resource``
        still keep only the calls of their methods.
    every
        A Polars duration ("1m"): one vertical bar per interval of request times, with
        the outline of all calls sent in the interval behind it.
    top
        Most groups drawn without ``every``.
    ax
        Draw into this Axes; a new 10x5 in figure when None.

    Returns
    -------
    matplotlib.figure.Figure
        One bar segment per (group or interval, kind) with at least one failure.

    Examples
    --------
    >>> import polars as pl
    >>> calls = pl.DataFrame({
    ...     "method": ["tools/call"] * 3 + ["ping"],
    ...     "outcome": ["ok", "error", "cancelled", "ok"],
    ...     "error_code": [None, -32603, None, None],
    ...     "revision": ["2025-11-25"] * 4,
    ... })
    >>> fig = error_distribution(calls)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['-32603 Internal error', 'cancelled']
    """
    if every is not None:
        check_every(every)
    breakdown = error_breakdown(calls, by, every).filter(pl.col("category") != "http")
    totals = error_rate(calls, by, every)
    title = f"Failed calls by {by}" if every is None else f"Failed calls per {every}"
    fig, ax = new_axes(ax)
    if every is not None:
        timed = totals.filter(pl.col(BUCKET).is_not_null())
        if timed.is_empty():
            return no_data(fig, ax, title, NO_TIMESTAMPS)
        breakdown = breakdown.filter(pl.col(BUCKET).is_not_null())
    if totals.is_empty():
        return no_data(fig, ax, title, "no calls")
    n_calls = int(totals["calls"].sum())
    if breakdown.is_empty():
        return no_data(fig, ax, title, f"no failed calls among {plural(n_calls, 'call')}")
    breakdown = breakdown.with_columns(kind=_kind_label())
    kinds = _kind_order(breakdown)
    colors = _kind_colors(kinds)
    failed = int(breakdown["count"].sum())
    title += f": {failed} of {plural(n_calls, 'call')} ({failed / n_calls:.0%})"
    if every is None:
        title = _by_group(ax, breakdown, totals, by, kinds, colors, top, title)
    else:
        _over_time(ax, breakdown, totals, every, kinds, colors)
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", title="kind")
    return fig


def _kind_label() -> pl.Expr:
    category = pl.col("category")
    label = fmt("{} {}", pl.col("code"), pl.col("name"))
    for name, text in _CODELESS.items():
        label = pl.when(category == name).then(pl.lit(text)).otherwise(label)
    # an error response whose code is missing or not an integer has no code to show
    return pl.when(category == "malformed").then(pl.lit("error without code")).otherwise(label)


def _kind_order(breakdown: pl.DataFrame) -> list[str]:
    """Error codes by total count (largest first), then the code-less kinds."""
    totals = (
        breakdown.group_by("kind")
        .agg(pl.col("count").sum())
        .sort(["count", "kind"], descending=[True, False])
    )
    names: list[str] = totals["kind"].to_list()
    codeless = list(_CODELESS.values())
    return [k for k in names if k not in codeless] + [k for k in codeless if k in names]


def _kind_colors(kinds: list[str]) -> dict[str, str]:
    codeless = {text: OUTCOME_COLORS[name] for name, text in _CODELESS.items()}
    codes = [k for k in kinds if k not in codeless]
    colors = {k: _CODE_COLORS[i % len(_CODE_COLORS)] for i, k in enumerate(codes)}
    return colors | {k: codeless[k] for k in kinds if k in codeless}


def _by_group(
    ax: Axes,
    breakdown: pl.DataFrame,
    totals: pl.DataFrame,
    by: str,
    kinds: list[str],
    colors: dict[str, str],
    top: int,
    title: str,
) -> str:
    """Horizontal stacked bars, one per group; the title, completed."""
    per_group = (
        breakdown.group_by(by)
        .agg(pl.col("count").sum().alias("failed"))
        .join(totals.select(by, "calls"), on=by, how="left", nulls_equal=True)
        .sort(["failed", by], descending=[True, False], nulls_last=True)
    )
    hidden = max(per_group.height - top, 0)
    per_group = per_group.head(top)
    groups = per_group[by].to_list()
    # most failures at the top: bars are drawn from the bottom up
    position = {g: len(groups) - i for i, g in enumerate(groups)}
    left = dict.fromkeys(groups, 0)
    for kind in kinds:
        rows = breakdown.filter(pl.col("kind") == kind).select(by, "count").rows()
        rows = [(g, n) for g, n in rows if g in position]
        if not rows:
            continue
        ax.barh(
            [position[g] for g, _ in rows],
            [n for _, n in rows],
            left=[left[g] for g, _ in rows],
            height=0.6,
            color=colors[kind],
            hatch=OPEN_HATCH if kind == "unanswered" else None,
            edgecolor="white",
            linewidth=0.5,
            label=kind,
        )
        for g, n in rows:
            left[g] += n
    for g, failed, calls in per_group.select(by, "failed", "calls").rows():
        ax.text(
            failed,
            position[g],
            f"  {failed} of {calls} ({failed / calls:.0%})",
            va="center",
            fontsize="small",
        )
    ax.set_yticks(list(position.values()), [group_label(g) for g in position])
    # room on the right for the "failed of calls" labels
    ax.set_xlim(0, max(left.values()) * 1.3)
    ax.set_xlabel("failed calls")
    ax.set_ylabel(by)
    ax.grid(True, axis="x", alpha=0.3)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if hidden:
        title += f"; {plural(hidden, 'more ' + by)} not shown"
    return title


def _over_time(
    ax: Axes,
    breakdown: pl.DataFrame,
    totals: pl.DataFrame,
    every: str,
    kinds: list[str],
    colors: dict[str, str],
) -> None:
    """Vertical stacked bars per interval, over the outline of all calls of the interval."""
    calls = (
        totals.group_by(BUCKET)
        .agg(pl.col("calls").sum())
        .with_columns(end=pl.col(BUCKET).dt.offset_by(every))
        .sort(BUCKET)
    )
    starts = date_nums(calls[BUCKET])
    widths = date_nums(calls["end"]) - starts
    # a gap between bars keeps neighbouring intervals apart
    width = float(np.min(widths)) * 0.85
    ax.bar(
        starts,
        calls["calls"].to_numpy(),
        width=width,
        align="edge",
        fill=False,
        edgecolor="0.55",
        linewidth=0.8,
        label="all calls",
    )
    per_kind = breakdown.group_by(BUCKET, "kind").agg(pl.col("count").sum())
    bottom: dict[float, int] = {}
    for kind in kinds:
        rows = per_kind.filter(pl.col("kind") == kind).sort(BUCKET)
        x = date_nums(rows[BUCKET])
        counts = rows["count"].to_list()
        ax.bar(
            x,
            counts,
            width=width,
            bottom=[bottom.get(v, 0) for v in x],
            align="edge",
            color=colors[kind],
            hatch=OPEN_HATCH if kind == "unanswered" else None,
            edgecolor="white",
            linewidth=0.5,
            label=kind,
        )
        for v, n in zip(x, counts, strict=True):
            bottom[v] = bottom.get(v, 0) + n
    time_axis(ax)
    ax.set_ylabel(f"calls per {every}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
