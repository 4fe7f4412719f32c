"""Latency plots: the distribution per group, and latency against time.

Latencies are ``calls.latency_ms`` (see :mod:`mcptrace.analysis.latency`); quantiles
are the same linear quantiles as there. This module draws and returns figures; it never
shows or saves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import matplotlib
import numpy as np
import numpy.typing as npt
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mcptrace.analysis._common import check_every, messages_of, requests_of, with_keys
from mcptrace.analysis.traffic import _with_cancel_ts
from mcptrace.plots._common import (
    FLOOR_MS,
    NO_TIMESTAMPS,
    OUTCOME_COLORS,
    OUTCOME_LABELS,
    capture_end,
    date_nums,
    fmt_ms,
    group_label,
    latency_axis,
    literal_text,
    new_axes,
    no_data,
    time_axis,
)
from mcptrace.trace import Trace

__all__ = ["latency_distribution", "latency_over_time"]

_LATENCY = pl.col("latency_ms")
_OUTCOME = pl.col("outcome").cast(pl.String)
#: outcomes whose latency is that of a failure (drawn as crosses)
_FAILED_ANSWERS = ("error", "tool_error")
#: outcomes without an answer (drawn as triangles at the time waited)
_NO_ANSWER = ("cancelled", "unanswered")
_Floats = npt.NDArray[np.float64]
_LineStyle = Literal["-", "--", ":", "-."]
#: line styles of the quantiles, largest quantile first: the tail is the solid line
_STYLES: tuple[_LineStyle, ...] = ("-", "--", ":", "-.")
_MPL_3_10 = tuple(int(p) for p in matplotlib.__version__.split(".")[:2]) >= (3, 10)


@literal_text
def latency_distribution(
    calls: Trace | pl.DataFrame,
    by: str = "method",
    kind: Literal["ecdf", "box"] = "ecdf",
    top: int = 10,
    *,
    ax: Axes | None = None,
) -> Figure:
    """Latency distribution per group: an ECDF (or a box plot) on a log scale.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table. Calls
        without a latency (unanswered, untimed) are left out.
    by
        The grouping dimension, as for :func:`mcptrace.analysis.latency` (``method``,
        ``tool``, ``server``, ``session``, ...).
    kind
        ``"ecdf"``: for each latency, the share of the group's calls that took at most
        that long, one line per group. ``"box"``: quartiles, whiskers at 1.5 IQR and the
        outliers, one box per group, with the p95 marked.
    top
        Draw at most this many groups: the slowest by p95. The title says how many
        more there are.
    ax
        Draw into this Axes; a new 10x5 in figure when None.

    Returns
    -------
    matplotlib.figure.Figure
        Groups in order of p95, slowest first (at the top of a box plot); the legend
        (or tick labels) give each group's number of calls and p95.

    Examples
    --------
    >>> import polars as pl
    >>> calls = pl.DataFrame({
    ...     "method": ["tools/call"] * 3 + ["ping"],
    ...     "outcome": ["ok"] * 4,
    ...     "latency_ms": [10.0, 20.0, 900.0, 1.0],
    ... })
    >>> fig = latency_distribution(calls)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['tools/call (n=3, p95 812 ms)', 'ping (n=1, p95 1.0 ms)']
    """
    if kind not in ("ecdf", "box"):
        raise ValueError(f"unknown kind {kind!r}: use 'ecdf' or 'box'")
    frame, _ = with_keys(requests_of(calls), by, None)
    title = f"Latency by {by}"
    fig, ax = new_axes(ax)
    timed = frame.filter(_LATENCY.is_not_null())
    if timed.is_empty():
        return no_data(fig, ax, title, _no_latency_message(frame))
    groups = (
        timed.group_by(by)
        .agg(
            pl.len().alias("count"),
            _LATENCY.quantile(0.95, interpolation="linear").alias("p95"),
            _LATENCY.sort().alias("values"),
        )
        .sort(["p95", by], descending=[True, False], nulls_last=True)
    )
    hidden = max(groups.height - top, 0)
    groups = groups.head(top)
    if hidden:
        title += f" (the {top} slowest of {groups.height + hidden} by p95)"
    rows = groups.rows(named=True)
    if kind == "ecdf":
        for row in rows:
            values = np.maximum(np.asarray(row["values"], dtype=float), FLOOR_MS)
            # start from 0 at the fastest call, so a group of one call is a visible riser
            x = np.concatenate([values[:1], values])
            y = np.arange(len(values) + 1) / len(values)
            ax.step(x, y, where="post", linewidth=1.6, label=_legend_text(row, by))
        # the p95 of a group is where its line crosses this rule
        ax.axhline(0.95, color="0.6", linestyle=":", linewidth=1)
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("share of calls at most this slow")
        ax.legend(title=by, loc="lower right", fontsize="small")
    else:
        data = [np.maximum(np.asarray(r["values"], dtype=float), FLOOR_MS) for r in rows]
        labels = [f"{group_label(r[by])}\nn={r['count']}, p95 {fmt_ms(r['p95'])}" for r in rows]
        # slowest at the top: boxes are drawn from the bottom up
        positions = np.arange(len(rows), 0, -1)
        style = {"orientation": "horizontal"} if _MPL_3_10 else {"vert": False}
        ax.boxplot(
            data,
            positions=positions,
            tick_labels=labels,
            widths=0.6,
            flierprops={"markersize": 3, "alpha": 0.6},
            medianprops={"color": "black"},
            **style,
        )
        p95 = [r["p95"] for r in rows]
        ax.plot(p95, positions, "D", color="#D55E00", markersize=5, label="p95")
        ax.legend(loc="lower right", fontsize="small")
        ax.tick_params(axis="y", labelsize="small")
        ax.set_ylabel(by)
    latency_axis(ax, "x")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title)
    return fig


@literal_text
def latency_over_time(
    calls: Trace | pl.DataFrame,
    by: str | None = None,
    every: str = "1m",
    quantiles: Sequence[float] = (0.5, 0.95),
    *,
    top: int = 8,
    ax: Axes | None = None,
) -> Figure:
    """Each call's latency at its request time (log scale), with percentiles per interval.

    Answered calls are dots; calls answered with a failure (JSON-RPC error or tool
    error) are crosses at their latency; calls never answered (unanswered, cancelled)
    are triangles at the time they were waited for: until the cancellation when it is
    known, else until the end of the capture. Lines are the ``quantiles`` of the
    latencies of the calls sent in each ``every`` interval, drawn across the interval.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace` (which also gives cancellation times and the
        end of the capture), its calls table or its messages table.
    by
        None: every call in one colour (failures in their outcome's colour). A grouping
        dimension (``tool``, ``method``, ``session``...): one colour per group, the
        ``top`` groups with the most calls; the others are grey, as "other".
    every
        Width of the percentile intervals, a Polars duration ("30s", "1m", "5m").
    quantiles
        Quantiles to draw as lines, each in ``[0, 1]``; ``()`` for none. The largest is
        solid, the others dashed or dotted.
    top
        Most groups drawn in their own colour.
    ax
        Draw into this Axes; a new 10x5 in figure when None.

    Returns
    -------
    matplotlib.figure.Figure
        One line per quantile (per group with ``by``).

    Examples
    --------
    >>> import polars as pl
    >>> from datetime import datetime, timedelta, UTC
    >>> t0 = datetime(2026, 8, 1, tzinfo=UTC)
    >>> calls = pl.DataFrame({
    ...     "method": ["tools/call"] * 4,
    ...     "outcome": ["ok", "ok", "error", "ok"],
    ...     "request_ts": [t0 + timedelta(seconds=20 * i) for i in range(4)],
    ...     "latency_ms": [12.0, 15.0, 20_000.0, 11.0],
    ... })
    >>> fig = latency_over_time(calls)
    >>> [line.get_label() for line in fig.axes[0].get_lines()]
    ['p95 per 1m', 'p50 per 1m']
    """
    check_every(every)
    for q in quantiles:
        if not 0 <= q <= 1:
            raise ValueError(f"quantile {q} is not between 0 and 1")
    frame = requests_of(calls)
    if by is not None:
        frame, _ = with_keys(frame, by, None)
        frame = frame.with_columns(_group=pl.col(by).cast(pl.String))
    else:
        frame = frame.with_columns(_group=pl.lit(None, pl.String))
    frame = _with_cancel_ts(frame, messages_of(calls))
    timed = frame.filter(pl.col("request_ts").is_not_null())
    title = "Latency over time" + (f" by {by}" if by else "")
    fig, ax = new_axes(ax)
    if timed.is_empty():
        return no_data(fig, ax, title, NO_TIMESTAMPS)
    end = capture_end(calls, [timed["_cancel_ts"]])
    assert end is not None  # there is a timed request
    waited_until = pl.coalesce(pl.col("_cancel_ts"), pl.lit(end, pl.Datetime("us", "UTC")))
    waited = (waited_until - pl.col("request_ts")).dt.total_microseconds() / 1000
    points = timed.with_columns(
        _y=pl.when(_LATENCY.is_not_null())
        .then(_LATENCY)
        .when(_OUTCOME.is_in(_NO_ANSWER))
        .then(waited)
        .clip(lower_bound=FLOOR_MS)
    ).filter(pl.col("_y").is_not_null())
    if points.is_empty():
        return no_data(fig, ax, title, _no_latency_message(timed))
    colors = _group_colors(points, by, top)
    handles = _scatter(ax, points, by, colors)
    handles += _quantile_lines(ax, points, every, quantiles, by, colors)
    latency_axis(ax, "y")
    time_axis(ax)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title)
    ax.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="small",
        title=by,
    )
    return fig


def _legend_text(row: dict[str, object], by: str) -> str:
    p95 = row["p95"]
    assert isinstance(p95, float)
    return f"{group_label(row[by])} (n={row['count']}, p95 {fmt_ms(p95)})"


def _no_latency_message(frame: pl.DataFrame) -> str:
    if frame.is_empty() or frame["request_ts"].is_null().all():
        return NO_TIMESTAMPS
    return "no call has a latency (none answered, or the capture cannot order them)"


def _group_colors(points: pl.DataFrame, by: str | None, top: int) -> dict[str | None, str]:
    """Colour of each group drawn on its own: the ``top`` groups with the most calls."""
    if by is None:
        return {None: "C0"}
    counts = points.group_by("_group").len().sort(["len", "_group"], descending=[True, False])
    names: list[str | None] = counts["_group"].head(top).to_list()
    return {name: f"C{i % 10}" for i, name in enumerate(names)}


def _scatter(
    ax: Axes, points: pl.DataFrame, by: str | None, colors: dict[str | None, str]
) -> list[Line2D]:
    """Draw the calls; the legend handles that explain colours and markers."""
    x = date_nums(points["request_ts"])
    y = points["_y"].to_numpy()
    outcome = points["outcome"].cast(pl.String).to_numpy()
    group = points["_group"].to_numpy()
    failed = np.isin(outcome, _FAILED_ANSWERS)
    unanswered = np.isin(outcome, _NO_ANSWER)
    answered = ~failed & ~unanswered
    handles: list[Line2D] = []
    if by is None:
        ax.scatter(x[answered], y[answered], s=16, color="C0", alpha=0.6, linewidths=0)
        handles.append(_marker("o", "C0", "answered call"))
        for name in (*_FAILED_ANSWERS, *_NO_ANSWER):
            sel = outcome == name
            if sel.any():
                marker = "X" if name in _FAILED_ANSWERS else "^"
                color = OUTCOME_COLORS[name]
                ax.scatter(
                    x[sel],
                    y[sel],
                    s=46,
                    marker=marker,
                    color=color,
                    edgecolors="black",
                    linewidths=0.4,
                    zorder=3,
                )
                handles.append(_marker(marker, color, _failure_label(name)))
        return handles
    other = ~np.isin(group, [g for g in colors if g is not None])
    for key, color in [*colors.items(), (None, "0.6")]:
        sel = other if key is None else group == key
        if not sel.any():
            continue
        ax.scatter(x[sel & answered], y[sel & answered], s=16, color=color, alpha=0.6, linewidths=0)
        for mask, marker in ((failed, "X"), (unanswered, "^")):
            ax.scatter(
                x[sel & mask],
                y[sel & mask],
                s=46,
                marker=marker,
                color=color,
                edgecolors="black",
                linewidths=0.5,
                zorder=3,
            )
        label = "other" if key is None else key
        handles.append(_marker("o", color, label))
    if failed.any():
        handles.append(_marker("X", "white", "error / tool error"))
    if unanswered.any():
        handles.append(_marker("^", "white", "no answer (time waited)"))
    return handles


def _failure_label(outcome: str) -> str:
    if outcome in _NO_ANSWER:
        return f"{OUTCOME_LABELS[outcome]} (time waited)"
    return OUTCOME_LABELS[outcome]


def _marker(marker: str, color: str, label: str) -> Line2D:
    return Line2D(
        [],
        [],
        marker=marker,
        linestyle="none",
        markerfacecolor=color,
        markeredgecolor="black" if marker != "o" else color,
        markersize=7,
        label=label,
    )


def _quantile_lines(
    ax: Axes,
    points: pl.DataFrame,
    every: str,
    quantiles: Sequence[float],
    by: str | None,
    colors: dict[str | None, str],
) -> list[Line2D]:
    """One step line per group and quantile across each interval; the legend handles."""
    if not quantiles:
        return []
    ordered = sorted(set(quantiles), reverse=True)
    styles: dict[float, _LineStyle] = {q: _STYLES[i % len(_STYLES)] for i, q in enumerate(ordered)}
    names = {q: f"p{q * 100:g}" for q in ordered}
    latencies = points.filter(_LATENCY.is_not_null()).filter(
        pl.col("_group").is_in([g for g in colors if g is not None]) if by is not None else True
    )
    per_bucket = (
        latencies.group_by("_group", pl.col("request_ts").dt.truncate(every).alias("start"))
        .agg(*(_LATENCY.quantile(q, interpolation="linear").alias(names[q]) for q in ordered))
        .with_columns(end=pl.col("start").dt.offset_by(every))
        .sort("_group", "start", nulls_last=True)
    )
    handles: list[Line2D] = []
    for q in ordered:
        for name, color in colors.items():
            rows = per_bucket.filter(
                pl.col("_group").is_null() if name is None else pl.col("_group") == name
            )
            if rows.is_empty():
                continue
            x, y = _steps(
                date_nums(rows["start"]), date_nums(rows["end"]), rows[names[q]].to_numpy()
            )
            ax.plot(
                x,
                np.maximum(y, FLOOR_MS),
                linestyle=styles[q],
                color="0.15" if by is None else color,
                linewidth=1.8,
                label=f"{names[q]} per {every}" if by is None else f"{name} {names[q]}",
                zorder=4,
            )
        handles.append(
            Line2D([], [], color="0.15", linestyle=styles[q], label=f"{names[q]} per {every}")
        )
    return handles


def _steps(starts: _Floats, ends: _Floats, values: _Floats) -> tuple[_Floats, _Floats]:
    """Points of a line holding each value from its interval's start to its end, broken
    (NaN) where an interval without calls lies between two others."""
    xs: list[float] = []
    ys: list[float] = []
    for i, (start, end, value) in enumerate(zip(starts, ends, values, strict=True)):
        if i and start != ends[i - 1]:
            xs.append(np.nan)
            ys.append(np.nan)
        xs += [start, end]
        ys += [value, value]
    return np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
