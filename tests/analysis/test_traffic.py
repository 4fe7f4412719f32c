"""Throughput, calls in flight, slowest calls and error bursts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from factories import SAMPLES, load_generator, note, rec, ts

import mcptrace
from mcptrace.analysis import concurrency, error_bursts, slowest_calls, throughput
from mcptrace.schema import CALLS, MESSAGES

MakeTrace = Any
T0 = datetime(2026, 8, 1, 10, 0, tzinfo=UTC)


def C(method: str, ms: float = 10.0, **kw: Any) -> dict[str, Any]:
    return {"method": method, "ms": ms, **kw}


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# -- throughput -------------------------------------------------------------------


def test_throughput_counts_per_bucket(make_trace: MakeTrace, write_lines: Any) -> None:
    calls = [
        C("ping", 500.0, at=1),  # answered in the same minute
        C("tools/call", 70_000.0, at=50, target="slow"),  # answered two minutes later
        C("ping", at=55, outcome="error"),
        C("ping", at=200, outcome="unanswered"),  # minute 3
    ]
    trace = make_trace(calls)
    out = throughput(trace, "1m")
    assert out.columns == [
        "bucket",
        "messages",
        "requests",
        "notifications",
        "responses",
        "errors",
        "calls_started",
        "calls_completed",
    ]
    assert out.select(pl.col("bucket").dt.minute(), pl.exclude("bucket")).rows() == [
        (0, 5, 3, 0, 1, 1, 3, 2),
        (1, 0, 0, 0, 0, 0, 0, 0),  # an empty minute is a row of zeros
        (2, 1, 0, 0, 1, 0, 0, 1),
        (3, 1, 1, 0, 0, 0, 1, 0),
    ]
    assert throughput(trace.messages, "1m").equals(out)
    # notifications, and non-protocol rows left out of `messages`
    path = write_lines(
        [
            rec(note("notifications/initialized"), ts=ts(1)),
            {"dir": "stderr", "msg": "server log line", "ts": ts(2)},
        ]
    )
    row = throughput(mcptrace.load(path), "1m").row(0, named=True)
    assert row["messages"] == 1 and row["notifications"] == 1


def test_throughput_untimed_and_empty(make_trace: MakeTrace) -> None:
    assert throughput(make_trace([C("ping", at=None)])).height == 0
    assert throughput(MESSAGES.empty()).height == 0
    with pytest.raises(TypeError):
        throughput(CALLS.empty())


# -- concurrency ------------------------------------------------------------------


def overlap_calls() -> list[dict[str, Any]]:
    """A 0-10 s, B 2-5 s, E 3 s cancelled at 4 s, C 5-12 s, D 11 s never answered.

    In flight: 1 at 0, 2 at 2, 3 at 3, 2 at 4, (B ends and C starts at 5: still 2),
    1 at 10, 2 at 11, 1 at 12.
    """
    return [
        C("tools/call", 10_000.0, at=0, target="A"),
        C("tools/call", 3_000.0, at=2, target="B"),
        C("tools/call", at=3, target="E", outcome="cancelled", cancel_after=1.0),
        C("tools/call", 7_000.0, at=5, target="C"),
        C("tools/call", at=11, target="D", outcome="unanswered"),
    ]


def test_concurrency_step_function(make_trace: MakeTrace) -> None:
    trace = make_trace(overlap_calls())
    out = concurrency(trace)
    assert out.columns == ["ts", "in_flight"]
    assert out.rows() == [
        (at(0), 1),
        (at(2), 2),
        (at(3), 3),
        (at(4), 2),
        (at(10), 1),
        (at(11), 2),
        (at(12), 1),  # D is still in flight at the end of the capture
    ]
    # without the messages the cancellation time is unknown: E stays in flight
    bare = concurrency(trace.calls)
    assert bare.filter(pl.col("ts") == at(4)).height == 0
    assert bare["in_flight"].to_list()[-1] == 2


def test_concurrency_per_bucket(make_trace: MakeTrace) -> None:
    out = concurrency(make_trace(overlap_calls()), every="5s")
    assert out.columns == ["bucket", "in_flight"]
    # [0,5): peak 3; [5,10): 2 held from before; [10,15): 1 then 2
    assert out.rows() == [(at(0), 3), (at(5), 2), (at(10), 2)]


def test_concurrency_holds_across_quiet_buckets(make_trace: MakeTrace) -> None:
    trace = make_trace([C("tools/call", 185_000.0, at=10, target="long"), C("ping", at=190)])
    out = concurrency(trace, every="1m")
    assert out["in_flight"].to_list() == [1, 1, 1, 2]


def test_concurrency_extends_to_the_end_of_the_capture(write_lines: Any) -> None:
    from factories import req

    path = write_lines(
        [
            rec(req(1, "ping"), ts=ts(0)),
            rec(note("notifications/message", {"level": "info"}), dir="s2c", ts=ts(30)),
        ]
    )
    assert concurrency(mcptrace.load(path)).rows() == [(at(0), 1), (at(30), 1)]


def test_concurrency_untimed_and_empty(make_trace: MakeTrace) -> None:
    assert concurrency(make_trace([C("ping", at=None)])).height == 0
    assert concurrency(CALLS.empty(), every="1m").columns == ["bucket", "in_flight"]
    assert concurrency(MESSAGES.empty()).columns == ["ts", "in_flight"]


# -- slowest calls ----------------------------------------------------------------


def test_slowest_calls(make_trace: MakeTrace) -> None:
    calls = [
        C("ping", 5.0, at=0),
        C("tools/call", 900.0, at=1, target="slow"),
        C("tools/call", 40.0, at=3, target="mid", outcome="tool_error"),
        C("ping", at=4, outcome="unanswered"),
        C("ping", 40.0, at=5),
    ]
    trace = make_trace(calls)
    out = slowest_calls(trace, n=3)
    assert out.columns == [
        "session",
        "method",
        "target",
        "latency_ms",
        "outcome",
        "request_source",
        "request_line",
        "response_line",
        "request_ts",
    ]
    assert out.select("target", "latency_ms", "outcome").rows() == [
        ("slow", 900.0, "ok"),
        ("mid", 40.0, "tool_error"),
        (None, 40.0, "ok"),  # ties in capture order
    ]
    first = out.row(0, named=True)
    assert first["request_source"] == trace.sources["source"][0]
    assert first["request_line"] < first["response_line"]
    assert first["request_ts"] == at(1)
    assert slowest_calls(trace).height == 4
    assert slowest_calls(make_trace([C("ping", at=None)])).height == 0
    assert slowest_calls(CALLS.empty()).height == 0


# -- error bursts -----------------------------------------------------------------


def steady(n: int = 600, burst: range = range(0)) -> list[dict[str, Any]]:
    """One call a second; every 20th fails, and so does every call in ``burst``."""
    return [
        C(
            "tools/call" if i % 2 else "resources/read",
            20.0,
            at=float(i),
            target="t" if i % 2 else "file:///r",
            outcome="error" if i % 20 == 0 or i in burst else "ok",
        )
        for i in range(n)
    ]


def test_no_bursts_in_a_steady_capture(make_trace: MakeTrace) -> None:
    out = error_bursts(make_trace(steady()))
    assert out.height == 0
    assert out.columns == [
        "start",
        "end",
        "calls",
        "errors",
        "error_rate",
        "baseline_rate",
        "first_line",
        "last_line",
        "source",
        "last_source",
        "methods",
    ]


def test_a_burst_across_a_log_rotation_names_both_files(capture_file: Any, tmp_path: Path) -> None:
    lines = capture_file(steady(burst=range(365, 385))).read_bytes().splitlines(keepends=True)
    # the log rotates in the middle of the burst: minute 6 starts near line 720
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "x.jsonl.1").write_bytes(b"".join(lines[:750]))
    (logs / "x.jsonl").write_bytes(b"".join(lines[750:]))
    trace = mcptrace.load(logs)
    (burst,) = error_bursts(trace).iter_rows(named=True)
    files = (str(logs / "x.jsonl.1"), str(logs / "x.jsonl"))
    assert (burst["source"], burst["last_source"]) == files
    first, last = burst["first_line"], burst["last_line"]
    assert last < first  # numbered in its own file
    # the report's highlight and bursts table say which file each line is in
    from mcptrace.report import build_report

    page = build_report(trace)
    assert f"request lines x.jsonl.1:{first}\u2013x.jsonl:{last}." in page
    assert f'<td class="num">{first}\u2013x.jsonl:{last}</td>' in page


def test_burst_found_where_injected(make_trace: MakeTrace) -> None:
    trace = make_trace(steady(burst=range(365, 385)))
    out = error_bursts(trace)
    assert out.height == 1
    burst = out.row(0, named=True)
    # minute 6 (calls 360-419): 20 injected + 360, 400 failing every 20th
    assert (burst["start"], burst["end"]) == (at(360), at(420))
    assert (burst["calls"], burst["errors"]) == (60, 22)
    failures = sum(1 for i in range(600) if i % 20 == 0 or 365 <= i < 385)
    assert burst["baseline_rate"] == pytest.approx(failures / 600)
    assert burst["error_rate"] == pytest.approx(22 / 60)
    lines = trace.calls.filter(pl.col("outcome") == "error").sort("request_ts")
    in_burst = lines.filter(pl.col("request_ts").is_between(at(360), at(419)))
    assert burst["first_line"] == in_burst["request_line"][0]
    assert burst["last_line"] == in_burst["request_line"][-1]
    assert burst["source"] == burst["last_source"] == trace.sources["source"][0]
    assert burst["methods"] == ["resources/read", "tools/call"]
    # stricter thresholds find nothing
    assert error_bursts(trace, min_errors=23).height == 0
    assert error_bursts(trace, factor=5.0).height == 0


def test_adjacent_hot_windows_merge(make_trace: MakeTrace) -> None:
    out = error_bursts(make_trace(steady(burst=range(360, 480))))
    # minutes 6 and 7 fail entirely: two hot windows, one burst
    assert out.select("start", "end", "calls", "errors").rows() == [(at(360), at(480), 120, 120)]


def test_calls_pending_at_the_end_are_not_a_burst(make_trace: MakeTrace) -> None:
    tail = [C("tools/call", at=600 + i / 10, target="t", outcome="unanswered") for i in range(8)]
    assert error_bursts(make_trace([*steady(), *tail]), window="10s").height == 0
    # the same calls followed by more answers did fail: that is a burst
    after = [C("ping", 1.0, at=602 + i / 10) for i in range(3)]
    out = error_bursts(make_trace([*steady(), *tail, *after]), window="10s")
    assert out.height == 1 and out["errors"].item() == 8


def test_bursts_untimed_and_empty(make_trace: MakeTrace) -> None:
    assert error_bursts(make_trace([C("ping", at=None, outcome="error")] * 5)).height == 0
    assert error_bursts(CALLS.empty()).height == 0
    assert error_bursts(MESSAGES.empty()).schema["methods"] == pl.List(pl.String)


# -- the generated capture --------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> mcptrace.Trace:
    path: Path = tmp_path_factory.mktemp("gen") / "gen.jsonl"
    load_generator().generate_capture(path, messages=5000, seed=3)
    return mcptrace.load(path)


def test_generated_capture(generated: mcptrace.Trace) -> None:
    calls = generated.calls.filter(pl.col("outcome") != "orphan")
    per_minute = throughput(generated, "1m")
    assert per_minute["messages"].sum() == generated.messages.height
    assert per_minute["calls_started"].sum() == calls.height
    answered = calls.filter(pl.col("response_ordinal").is_not_null()).height
    assert per_minute["calls_completed"].sum() == answered
    steps = concurrency(generated)
    assert steps["in_flight"].min() >= 0
    assert concurrency(generated, every="1m")["in_flight"].max() == steps["in_flight"].max()
    slow = slowest_calls(generated, n=5)
    assert slow["latency_ms"].to_list() == sorted(calls["latency_ms"].drop_nulls())[::-1][:5]
    assert error_bursts(generated).height == 0  # a steady synthetic load
    assert throughput(mcptrace.load(SAMPLES / "stdio"), "1m").height == 0  # no timestamps
