"""Smoke tests of mcptrace.plots and ``mcptrace plot``: what is drawn, not how it looks.

Each plot is checked for its title, labels and legend, and for drawing as many lanes,
bars or lines as the data has, on the incident sample and on a small inline capture.
No pixel comparisons (a Matplotlib upgrade moves pixels, not meaning).
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # before anything imports pyplot; the plots never need a display

import matplotlib.dates as mdates
import polars as pl
import pytest
from factories import ROOT, SAMPLES, WriteLines, err, note, rec, req, res, ts
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex, to_rgb
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from typer.testing import CliRunner

import mcptrace
from mcptrace import plots
from mcptrace.cli import app
from mcptrace.schema import CALLS
from mcptrace.trace import Trace

INCIDENT = SAMPLES / "capture" / "incident-2025-11-25.jsonl"
UNTIMED = SAMPLES / "stdio" / "docs-server.ndjson"
runner = CliRunner()


@pytest.fixture(scope="module")
def incident() -> Trace:
    return mcptrace.load(INCIDENT)


def _init(client: str, at: float, session: str) -> list[dict[str, Any]]:
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
    return [
        rec(req(0, "initialize", {**hello, "clientInfo": {"name": client, "version": "1"}}),
            session=session, ts=ts(at)),
        rec(res(0, {**hello, "serverInfo": {"name": "srv", "version": "1"}}),
            dir="s2c", session=session, ts=ts(at + 0.05)),
    ]  # fmt: skip


@pytest.fixture
def small(write_lines: WriteLines) -> Trace:
    """Two sessions, eight calls, one of each failure.

    s1 (client host): initialize, tool a ok (100 ms), tool b -32603 after 2 s, tool a
    isError (200 ms). s2 (client agent): initialize, tool a cancelled after 3 s, tool b
    never answered, a progress notification, ping ok; the capture ends at 9.01 s.
    """
    s1 = {"session": "s1"}
    s2 = {"session": "s2"}
    back1 = {"dir": "s2c", "session": "s1"}
    records = [
        *_init("host", 0, "s1"),
        *_init("agent", 0.5, "s2"),
        rec(req(1, "tools/call", {"name": "a"}), **s1, ts=ts(1)),
        rec(res(1), **back1, ts=ts(1.1)),
        rec(req(2, "tools/call", {"name": "b"}), **s1, ts=ts(2)),
        rec(req(3, "tools/call", {"name": "a"}), **s1, ts=ts(3)),
        rec(res(3, {"content": [], "isError": True}), **back1, ts=ts(3.2)),
        rec(err(2, -32603, "Internal error"), **back1, ts=ts(4)),
        rec(req(1, "tools/call", {"name": "a"}), **s2, ts=ts(5)),
        rec(req(2, "tools/call", {"name": "b"}), **s2, ts=ts(6)),
        rec(note("notifications/progress", {"progressToken": 1, "progress": 1}),
            dir="s2c", session="s2", ts=ts(7)),
        rec(note("notifications/cancelled", {"requestId": 1}), **s2, ts=ts(8)),
        rec(req(3, "ping"), **s2, ts=ts(9)),
        rec(res(3), dir="s2c", session="s2", ts=ts(9.01)),
    ]  # fmt: skip
    return mcptrace.load(write_lines(records))


def t(seconds: float) -> float:
    """The date number of ``seconds`` after the inline capture's start."""
    return float(mdates.date2num(datetime(2026, 8, 1, 10, tzinfo=UTC))) + seconds / 86_400


def legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None
    return [text.get_text() for text in legend.get_texts()]


def bars(ax: Axes) -> list[BarContainer]:
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def texts(ax: Axes) -> list[str]:
    return [text.get_text() for text in ax.texts]


# ---------------------------------------------------------------------------
# the package
# ---------------------------------------------------------------------------


def test_public_api_is_sorted_and_documented() -> None:
    assert plots.__all__ == sorted(plots.__all__)
    for name in plots.__all__:
        obj = getattr(plots, name)
        if callable(obj):
            doc = inspect.getdoc(obj) or ""
            for section in ("Parameters", "Returns", "Examples"):
                assert section in doc, (name, section)
            assert "ax" in inspect.signature(obj).parameters, name


@pytest.mark.parametrize(
    "module", ["__init__", "changes", "errors", "latency", "sessions", "traffic"]
)
def test_docstring_examples_run(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the package example reads sample_traces/
    name = "mcptrace.plots" + ("" if module == "__init__" else f".{module}")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


# ---------------------------------------------------------------------------
# latency_changes
# ---------------------------------------------------------------------------


def test_latency_changes_before_and_after_the_incident(incident: Trace) -> None:
    from matplotlib.text import Annotation

    from mcptrace import analysis

    moment = datetime(2026, 9, 15, 22, 44, tzinfo=UTC)
    before, after, _ = analysis.split_at(incident, moment)
    ax = plots.latency_changes(before, after, by="tool").axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # most regressed at the top (ticks are listed from the top row down)
    assert labels[0] == "fetch_page\n23 → 22 calls, failed 0% → 41%"
    assert [t.get_position()[1] for t in ax.get_yticklabels()] == [4, 3, 2, 1]
    assert [label.split("\n")[0] for label in labels] == [
        "fetch_page",
        "summarize",
        "get_usage",
        "search_docs",
    ]  # get_invoice and export_invoices have calls on one side only
    arrows = [a for a in ax.get_children() if isinstance(a, Annotation)]
    assert len(arrows) == 2 * len(labels)  # p95 and p50 of each group
    colors = {a.arrow_patch.get_edgecolor()[:3] for a in arrows if a.arrow_patch is not None}
    assert len(colors) == 2  # slower and faster
    assert ax.get_xscale() == "log"
    top2 = plots.latency_changes(before, after, by="tool", top=2).axes[0]
    assert top2.get_title() == "Latency before and after, by tool (2 of 4 groups)"
    assert len(top2.get_yticklabels()) == 2


# ---------------------------------------------------------------------------
# latency_distribution
# ---------------------------------------------------------------------------


def test_latency_ecdf_on_the_incident(incident: Trace) -> None:
    fig = plots.latency_distribution(incident, by="tool")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "Latency by tool"
    assert ax.get_xlabel() == "latency (ms)"
    assert ax.get_xscale() == "log"
    labels = legend_texts(ax)
    # slowest p95 first: fetch_page and summarize both time out at 20 s
    assert labels[0] == "fetch_page (n=42, p95 20 s)"
    assert labels[-1] == "get_invoice (n=1, p95 74 ms)"
    assert len(labels) == 6
    # one ECDF per tool plus the p95 rule; each ECDF ends at 1 with one step per call
    lines = ax.get_lines()
    assert len(lines) == 7
    fetch = lines[0]
    assert len(fetch.get_ydata()) == 42 + 1
    assert fetch.get_ydata()[-1] == 1.0


def test_latency_box_and_top(incident: Trace) -> None:
    fig = plots.latency_distribution(incident, by="tool", kind="box", top=3)
    ax = fig.axes[0]
    # slowest at the top (highest y)
    ticks = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])
    labels = [t.get_text() for t in ticks]
    assert labels == [
        "fetch_page\nn=42, p95 20 s",
        "summarize\nn=17, p95 20 s",
        "export_invoices\nn=1, p95 1.8 s",
    ]
    assert ax.get_title() == "Latency by tool (the 3 slowest of 6 by p95)"
    assert legend_texts(ax) == ["p95"]
    with pytest.raises(ValueError, match="unknown kind"):
        plots.latency_distribution(incident, kind="violin")  # type: ignore[arg-type]


def test_latency_distribution_of_a_bare_calls_table(small: Trace) -> None:
    fig = plots.latency_distribution(small.calls)
    assert legend_texts(fig.axes[0]) == [
        "tools/call (n=3, p95 1.8 s)",
        "initialize (n=2, p95 50 ms)",
        "ping (n=1, p95 10 ms)",
    ]


# ---------------------------------------------------------------------------
# latency_over_time
# ---------------------------------------------------------------------------


def test_latency_over_time_marks_failures(small: Trace) -> None:
    fig = plots.latency_over_time(small, every="1m")
    ax = fig.axes[0]
    assert ax.get_title() == "Latency over time"
    assert ax.get_ylabel() == "latency (ms)"
    assert ax.get_xlabel() == "time (UTC)"
    assert ax.get_yscale() == "log"
    assert [line.get_label() for line in ax.get_lines()] == ["p95 per 1m", "p50 per 1m"]
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    # answered calls, then each failure outcome in its own colour
    assert [len(c.get_offsets()) for c in points] == [4, 1, 1, 1, 1]
    colors = [to_hex(c.get_facecolor()[0]) for c in points[1:]]
    assert colors == [plots.OUTCOME_COLORS[o].lower() for o in
                      ("error", "tool_error", "cancelled", "unanswered")]  # fmt: skip
    # the -32603 at its latency; the cancelled call at the time waited until its cancel
    assert points[1].get_offsets()[0][1] == pytest.approx(2000.0)
    assert points[3].get_offsets()[0][1] == pytest.approx(3000.0)
    # the unanswered call waited from 6 s until the end of the capture, 9.01 s
    assert points[4].get_offsets()[0][1] == pytest.approx(3010.0)
    assert legend_texts(ax) == [
        "answered call",
        "error (JSON-RPC)",
        "tool error (isError)",
        "cancelled (time waited)",
        "unanswered (time waited)",
        "p95 per 1m",
        "p50 per 1m",
    ]


def test_latency_over_time_by_tool(incident: Trace) -> None:
    fig = plots.latency_over_time(incident, by="tool", every="1m", quantiles=(0.95,))
    ax = fig.axes[0]
    assert ax.get_title() == "Latency over time by tool"
    labels = legend_texts(ax)
    tools = ["fetch_page", "search_docs", "summarize", "get_usage", "export_invoices",
             "get_invoice"]  # fmt: skip
    assert labels == [*tools, "error / tool error", "no answer (time waited)", "p95 per 1m"]
    # one p95 line per tool, each in its tool's colour
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == [f"{tool} p95" for tool in tools]
    legend = ax.get_legend()
    assert legend is not None
    for line, handle in zip(lines, legend.legend_handles, strict=False):
        assert to_rgb(line.get_color()) == to_rgb(handle.get_markerfacecolor())  # type: ignore[union-attr]
    # fetch_page's p95 per minute, held across each minute: ~230 ms until 22:43, then
    # 2.7 s, 11 s and 33 s, as mcptrace.analysis.latency computes it
    expected = mcptrace.analysis.latency(incident, "tool", "1m").filter(
        pl.col("tool") == "fetch_page"
    )
    held = lines[0].get_ydata()[::2]
    assert list(held) == pytest.approx(expected["p95"].to_list())
    assert held[2] < 300 and 2000 < held[3] < 3000 and 10_000 < held[4] < 12_000


def test_latency_over_time_rejects_bad_arguments(small: Trace) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        plots.latency_over_time(small, quantiles=(95,))
    with pytest.raises(ValueError, match="invalid interval"):
        plots.latency_over_time(small, every="minute")


# ---------------------------------------------------------------------------
# error_distribution
# ---------------------------------------------------------------------------


def test_errors_by_method(small: Trace) -> None:
    fig = plots.error_distribution(small)
    ax = fig.axes[0]
    assert ax.get_title() == "Failed calls by method: 4 of 8 calls (50%)"
    assert ax.get_xlabel() == "failed calls"
    kinds = ["-32603 Internal error", "tool error", "cancelled", "unanswered"]
    assert legend_texts(ax) == kinds
    containers = bars(ax)
    # one segment per kind, stacked left to right on the one method with failures
    assert [len(c) for c in containers] == [1, 1, 1, 1]
    lefts = [c.patches[0].get_x() for c in containers]
    assert lefts == [0, 1, 2, 3]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["tools/call"]
    assert texts(ax) == ["  4 of 5 (80%)"]
    assert containers[3].patches[0].get_hatch()  # unanswered is hatched
    assert (
        to_hex(containers[1].patches[0].get_facecolor())
        == plots.OUTCOME_COLORS["tool_error"].lower()
    )


def test_errors_by_tool_on_the_incident(incident: Trace) -> None:
    fig = plots.error_distribution(incident, by="tool")
    ax = fig.axes[0]
    assert ax.get_title() == "Failed calls by tool: 14 of 91 calls (15%)"
    # most failures at the top
    ticks = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])
    assert [t.get_text() for t in ticks] == [
        "fetch_page",
        "summarize",
        "get_invoice",
        "search_docs",
    ]
    segments = sum(len(c) for c in bars(ax))
    assert segments == 5  # rows of error_breakdown by tool, without HTTP rows
    assert "  9 of 45 (20%)" in texts(ax)


def test_errors_over_time(incident: Trace) -> None:
    fig = plots.error_distribution(incident, every="1m")
    ax = fig.axes[0]
    assert ax.get_title() == "Failed calls per 1m: 14 of 100 calls (14%)"
    assert ax.get_xlabel() == "time (UTC)"
    assert ax.get_ylabel() == "calls per 1m"
    labels = legend_texts(ax)
    assert labels[0] == "all calls"
    assert labels[1:] == ["-32603 Internal error", "tool error", "cancelled", "unanswered"]
    outline, internal, *_ = bars(ax)
    assert len(outline) == 8  # 22:40 to 22:47, every minute had calls
    # the -32603 errors fall in the minutes 22:45 and 22:46
    assert [mdates.num2date(p.get_x()).strftime("%H:%M") for p in internal] == ["22:45", "22:46"]
    assert [p.get_height() for p in internal] == [4, 5]


def test_errors_without_failures(write_lines: WriteLines) -> None:
    calls = [(req(i, "ping"), res(i)) for i in range(1, 4)]
    records = [r for q, a in calls for r in (rec(q), rec(a, dir="s2c"))]
    fig = plots.error_distribution(mcptrace.load(write_lines(records)))
    assert texts(fig.axes[0]) == ["no failed calls among 3 calls"]
    assert not bars(fig.axes[0])


# ---------------------------------------------------------------------------
# timeline
# ---------------------------------------------------------------------------


def _outcome_of(container: BarContainer) -> str:
    face = to_hex(container.patches[0].get_facecolor(), keep_alpha=False)
    return next(o for o, c in plots.OUTCOME_COLORS.items() if c.lower() == face)


def test_timeline_lanes_and_bars(small: Trace) -> None:
    fig = plots.timeline(small, notifications=True)
    ax = fig.axes[0]
    assert ax.get_title() == "Calls per session: 8 calls in 2 sessions"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["s1 (host)", "s2 (agent)"]
    assert ax.get_xlabel() == "time (UTC)"
    containers = bars(ax)
    per_outcome = {_outcome_of(c): len(c) for c in containers}
    assert per_outcome == {
        "ok": 4,
        "error": 1,
        "tool_error": 1,
        "cancelled": 1,
        "unanswered": 1,
    }
    assert sum(len(c) for c in containers) == small.calls.height
    by_outcome = {_outcome_of(c): c for c in containers}

    def span(outcome: str) -> tuple[float, float]:
        patch: Rectangle = by_outcome[outcome].patches[0]
        return patch.get_x(), patch.get_x() + patch.get_width()

    assert span("error") == pytest.approx((t(2), t(4)), abs=1e-8)
    assert span("cancelled") == pytest.approx((t(5), t(8)), abs=1e-8)  # ends at the cancellation
    assert span("unanswered") == pytest.approx(
        (t(6), t(9.01)), abs=1e-8
    )  # to the end of the capture
    assert by_outcome["unanswered"].patches[0].get_hatch()
    assert not by_outcome["cancelled"].patches[0].get_hatch()
    # lanes: s1's calls around y=0, s2's around y=1
    assert abs(by_outcome["error"].patches[0].get_center()[1]) < 0.5
    assert abs(by_outcome["cancelled"].patches[0].get_center()[1] - 1) < 0.5
    assert legend_texts(ax) == [
        "ok",
        "error (JSON-RPC)",
        "tool error (isError)",
        "cancelled",
        "unanswered (to end of capture)",
        "notification",
    ]
    ticks = [c for c in ax.collections if c.get_label() == "notification"]
    assert len(ticks[0].get_offsets()) == 2  # progress and cancelled


def test_timeline_on_the_incident(incident: Trace) -> None:
    fig = plots.timeline(incident)
    ax = fig.axes[0]
    lanes = [t.get_text() for t in ax.get_yticklabels()]
    assert lanes == [
        "search-desk-1 (desk-host)",
        "billing-http-1 (desk-host)",
        "search-ci-7731 (ci-agent)",
        "search-ci-7732 (ci-agent)",
    ]
    requests = incident.calls.filter(pl.col("outcome") != "orphan")
    assert sum(len(c) for c in bars(ax)) == requests.height
    counts = requests.group_by("outcome").len().rows()
    drawn: dict[str, int] = {}
    for c in bars(ax):
        drawn[_outcome_of(c)] = drawn.get(_outcome_of(c), 0) + len(c)
    assert drawn == {str(o): n for o, n in counts}
    assert fig.get_size_inches()[0] == 10


def test_timeline_selects_sessions(incident: Trace) -> None:
    few = plots.timeline(incident, max_sessions=2).axes[0]
    assert len(few.get_yticklabels()) == 2
    assert few.get_title().endswith("(2 more sessions not shown)")
    chosen = plots.timeline(incident, sessions=["search-ci-7732"]).axes[0]
    assert [t.get_text() for t in chosen.get_yticklabels()] == ["search-ci-7732 (ci-agent)"]
    assert chosen.get_title() == "Calls per session: 12 calls in 1 session"


# ---------------------------------------------------------------------------
# concurrency
# ---------------------------------------------------------------------------


def test_concurrency(small: Trace, incident: Trace) -> None:
    ax = plots.concurrency(small).axes[0]
    assert ax.get_ylabel() == "requests in flight"
    assert ax.get_xlabel() == "time (UTC)"
    (line,) = ax.get_lines()
    steps = mcptrace.analysis.concurrency(small)
    assert list(line.get_ydata()) == steps["in_flight"].to_list()
    assert ax.get_title() == f"Requests in flight (peak {max(steps['in_flight'])})"
    per_minute = plots.concurrency(incident, every="1m").axes[0]
    assert per_minute.get_title() == "Most requests in flight per 1m (peak 6)"
    assert "peak 6" in texts(per_minute)


def test_concurrency_of_many_calls_is_drawn_per_column_of_time() -> None:
    """More steps than a figure has pixels are drawn as columns of time, each a stroke
    from the least to the most in flight during it: the picture the exact line paints,
    in a fraction of the time (10^6 calls took 14 s to save)."""
    import numpy as np

    from mcptrace.plots import traffic

    rng = np.random.default_rng(7)
    n = 6_000
    start = np.sort(rng.uniform(0, 3_600, n))
    t0 = datetime(2026, 8, 1, tzinfo=UTC)

    def at(seconds: np.ndarray) -> pl.Series:
        micros = pl.Series((seconds * 1e6).astype(np.int64)).cast(pl.Duration("us"))
        return pl.Series([t0] * n) + micros

    calls = pl.DataFrame(
        {
            "outcome": ["ok"] * n,
            "request_ts": at(start),
            "response_ts": at(start + rng.exponential(4, n)),
            "response_ordinal": range(n),
        }
    )
    steps = mcptrace.analysis.concurrency(calls)
    assert steps.height > 4 * traffic._COLUMNS
    ax = plots.concurrency(calls).axes[0]
    (line,) = ax.get_lines()
    drawn = np.asarray(line.get_ydata())
    assert len(drawn) == 2 * traffic._COLUMNS
    peak = int(steps["in_flight"].max())  # type: ignore[arg-type]
    assert drawn.max() == peak and ax.get_title() == f"Requests in flight (peak {peak})"
    assert drawn.min() == int(steps["in_flight"].min())  # type: ignore[arg-type]

    # each column spans exactly the values the step line takes in it
    x = np.array([0.0, 1.0, 2.5, 2.6, 7.0, 8.0])
    y = np.array([1, 4, 0, 3, 2, 2])
    edges, low, high = traffic._columns(x, y, 4)  # columns of 2: [0,2) [2,4) [4,6) [6,8]
    assert edges.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert low.tolist() == [1, 0, 3, 2] and high.tolist() == [4, 4, 3, 3]


# ---------------------------------------------------------------------------
# every plot: ax=, empty and untimed input
# ---------------------------------------------------------------------------

PLOTS: dict[str, Callable[..., Figure]] = {
    "latency_distribution": plots.latency_distribution,
    "latency_over_time": plots.latency_over_time,
    "latency_changes": lambda data, **kw: plots.latency_changes(data, data, **kw),
    "error_distribution": lambda data, **kw: plots.error_distribution(data, every="1m", **kw),
    "timeline": plots.timeline,
    "concurrency": plots.concurrency,
}


@pytest.mark.parametrize("name", PLOTS)
def test_draws_into_the_given_axes(name: str, incident: Trace) -> None:
    fig = Figure(figsize=(12, 8), layout="constrained")
    grid = fig.subplots(2, 2)
    target = grid[1, 0]
    got = PLOTS[name](incident, ax=target)
    assert got is fig
    assert len(fig.axes) == 4
    assert target.get_title()
    assert target.has_data()
    assert not any(other.has_data() for other in grid.flat if other is not target)


def test_axes_in_a_subfigure_return_the_whole_figure(small: Trace) -> None:
    fig = Figure()
    sub = fig.subfigures(1, 2)[1]
    assert plots.timeline(small, ax=sub.add_subplot()) is fig


@pytest.mark.parametrize("name", PLOTS)
def test_empty_input(name: str) -> None:
    fig = PLOTS[name](CALLS.empty())
    ax = fig.axes[0]
    assert ax.get_title()
    message = " ".join(texts(ax))
    assert message in ("no timestamped calls", "no calls")


@pytest.mark.parametrize("name", PLOTS)
def test_untimed_input(name: str) -> None:
    fig = PLOTS[name](mcptrace.load(UNTIMED))
    assert texts(fig.axes[0]) == ["no timestamped calls"]


def test_untimed_failures_still_count_per_group() -> None:
    # counting failures by method needs no time
    ax = plots.error_distribution(mcptrace.load(UNTIMED)).axes[0]
    assert sum(len(c) for c in bars(ax)) == 2  # the tool error and the -32602


def test_timed_calls_without_latency() -> None:
    # requests with a time but no answer: nothing to distribute, and the plot says why
    calls = pl.DataFrame(
        {
            "method": ["tools/call"],
            "outcome": ["unanswered"],
            "request_ts": [datetime(2026, 8, 1, tzinfo=UTC)],
            "latency_ms": [None],
        },
        schema_overrides={"latency_ms": pl.Float64},
    )
    ax = plots.latency_distribution(calls).axes[0]
    assert texts(ax)[0].startswith("no call has a latency")


# ---------------------------------------------------------------------------
# mcptrace plot
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "suffix", "extra"),
    [
        ("latency", ".png", ["--by", "tool"]),
        ("latency-time", ".svg", ["--by", "tool", "--every", "30s"]),
        ("errors", ".png", ["--every", "1m"]),
        ("timeline", ".svg", []),
        ("concurrency", ".png", []),
    ],
)
def test_cli_writes_png_and_svg(kind: str, suffix: str, extra: list[str], tmp_path: Path) -> None:
    out = tmp_path / f"plot{suffix}"
    result = runner.invoke(app, ["plot", str(INCIDENT), "--kind", kind, "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert b"<svg" in data[:1000]
    assert len(data) > 5000
    assert f"wrote {kind} plot to {out}" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kind", "latency", "-o", "plot.pdf"], "must end in .png or .svg"),
        (["--kind", "latency", "-o", "plot"], "must end in .png or .svg"),
        (["--kind", "timeline", "-o", "p.png", "--by", "tool"], "--by does not apply"),
        (["--kind", "latency", "-o", "p.png", "--every", "1m"], "--every does not apply"),
        (["--kind", "errors", "-o", "p.png", "--every", "minute"], "invalid interval"),
    ],
)
def test_cli_usage_errors(args: list[str], message: str, tmp_path: Path) -> None:
    args = [a if not a.startswith(("plot", "p.")) else str(tmp_path / a) for a in args]
    result = runner.invoke(app, ["plot", str(INCIDENT), *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert not list(tmp_path.iterdir())


def test_cli_unreadable_input_exits_2(tmp_path: Path) -> None:
    out = tmp_path / "t.png"
    result = runner.invoke(
        app,
        ["plot", str(INCIDENT), str(tmp_path / "missing.jsonl"), "-k", "timeline", "-o", str(out)],
    )
    assert result.exit_code == 2
    assert out.stat().st_size > 0  # the readable file is still plotted


def test_other_commands_do_not_import_matplotlib() -> None:
    code = "import sys, mcptrace.cli; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_dollar_signs_in_capture_text_are_drawn_literally(tmp_path: Path) -> None:
    # matplotlib would read "$...$" as mathtext; a hostile tool name must not break a plot
    lines = [
        '{"ts":"2026-08-01T10:00:00Z","dir":"c2s","session":"$s$","msg":{"jsonrpc":"2.0",'
        '"id":1,"method":"tools/call","params":{"name":"$\\\\frac{a}{$x^"}}}',
        '{"ts":"2026-08-01T10:00:01Z","dir":"s2c","session":"$s$","msg":{"jsonrpc":"2.0",'
        '"id":1,"error":{"code":-32603,"message":"boom"}}}',
    ]
    path = tmp_path / "dollar.jsonl"
    path.write_text("\n".join(lines) + "\n")
    trace = mcptrace.load(path)
    for fig in (
        plots.latency_distribution(trace, by="tool"),
        plots.latency_over_time(trace, by="tool"),
        plots.error_distribution(trace, by="tool"),
        plots.timeline(trace),
        plots.concurrency(trace),
    ):
        fig.savefig(tmp_path / "out.png")
