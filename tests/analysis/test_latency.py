"""Latency quantiles and coverage, checked against numpy and the statistics module."""

from __future__ import annotations

import statistics
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import polars as pl
import pytest
from factories import SAMPLES

import mcptrace
from mcptrace.analysis import DIMENSIONS, QUANTILES, latency, latency_coverage
from mcptrace.schema import CALLS, MESSAGES

MakeTrace = Any

#: latencies (ms) of tool "search" and "fetch": irregular, with ties and a far outlier
SEARCH = [12.5, 3.0, 40.0, 7.25, 100.0, 55.0, 18.0, 1.0, 64.0, 33.0, 18.0]
FETCH = [250.0, 251.5, 900.0, 260.0]


def C(method: str, ms: float = 10.0, **kw: Any) -> dict[str, Any]:
    return {"method": method, "ms": ms, **kw}


def tool_calls() -> list[dict[str, Any]]:
    calls = [C("tools/call", ms, target="search", at=i * 2.0) for i, ms in enumerate(SEARCH)]
    calls += [C("tools/call", ms, target="fetch", at=30 + i * 2.0) for i, ms in enumerate(FETCH)]
    return calls


def expected(values: list[float]) -> dict[str, float]:
    """The linear (type 7) quantiles, computed by numpy independently of Polars."""
    out = {name: float(np.quantile(values, q)) for name, q in QUANTILES.items()}
    out["max"], out["mean"] = max(values), statistics.fmean(values)
    return out


def test_quantiles_match_numpy_and_statistics(make_trace: MakeTrace) -> None:
    trace = make_trace(tool_calls())
    got = latency(trace, by="tool").rows_by_key("tool", named=True, unique=True)
    for tool, values in (("search", SEARCH), ("fetch", FETCH)):
        row = got[tool]
        assert row["count"] == len(values) and row["without_latency"] == 0
        for column, value in expected(values).items():
            assert row[column] == pytest.approx(value, abs=1e-6), (tool, column)
        # the same definition as statistics.quantiles(method="inclusive")
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        for column, q in QUANTILES.items():
            assert row[column] == pytest.approx(cuts[round(q * 100) - 1], abs=1e-6)


def test_single_call_quantiles_equal_its_latency(make_trace: MakeTrace) -> None:
    row = latency(make_trace([C("ping", 4.5)])).row(0, named=True)
    assert row["method"] == "ping" and row["count"] == 1
    assert {row[c] for c in ("p50", "p90", "p95", "p99", "max", "mean")} == {4.5}


def test_by_method_counts_calls_without_latency(make_trace: MakeTrace) -> None:
    calls = [
        *tool_calls(),
        C("ping", 1.0, at=50),
        C("ping", at=51, outcome="unanswered"),
        C("tools/call", at=52, target="search", outcome="cancelled"),
        C("tools/call", 7.0, at=53, target="search", outcome="error"),
    ]
    out = latency(make_trace(calls))
    assert out.columns == [
        "method",
        "count",
        "without_latency",
        "p50",
        "p90",
        "p95",
        "p99",
        "max",
        "mean",
    ]
    rows = out.rows_by_key("method", named=True, unique=True)
    assert rows["ping"]["count"] == 1 and rows["ping"]["without_latency"] == 1
    tools = [*SEARCH, *FETCH, 7.0]  # the error call has a latency too
    assert rows["tools/call"]["count"] == len(tools)
    assert rows["tools/call"]["without_latency"] == 1
    assert rows["tools/call"]["p95"] == pytest.approx(np.quantile(tools, 0.95), abs=1e-6)
    only_ok = latency(make_trace(calls), outcomes=["ok"]).filter(pl.col("method") == "tools/call")
    assert only_ok["count"].item() == len(SEARCH) + len(FETCH)


def test_time_buckets(make_trace: MakeTrace) -> None:
    first = [5.0, 9.0, 1.0]
    second = [100.0, 300.0]
    third = [42.0]
    calls = [C("ping", ms, at=10 + i) for i, ms in enumerate(first)]
    calls += [C("ping", ms, at=65 + i) for i, ms in enumerate(second)]
    calls += [C("ping", ms, at=185) for ms in third]  # minute 3; minute 2 is empty
    out = latency(make_trace(calls), by=(), every="1m")
    assert out.columns[0] == "bucket" and out.schema["bucket"] == MESSAGES.schema["ts"]
    minutes = [b.minute for b in out["bucket"]]
    assert minutes == [0, 1, 3]
    for row, values in zip(out.iter_rows(named=True), (first, second, third), strict=True):
        assert row["count"] == len(values)
        assert row["p90"] == pytest.approx(np.quantile(values, 0.9), abs=1e-6)
        assert row["mean"] == pytest.approx(statistics.fmean(values), abs=1e-6)
    # groups and buckets together: keys first, then the bucket
    both = latency(make_trace(calls), by="method", every="10m")
    assert both.columns[:2] == ["method", "bucket"] and both["count"].to_list() == [6]


def test_every_rejects_a_bad_interval(make_trace: MakeTrace) -> None:
    with pytest.raises(ValueError, match="invalid interval"):
        latency(make_trace([C("ping")]), every="one minute")
    for zero in ("0s", "0m0s"):  # a bucket per call, not an interval
        with pytest.raises(ValueError, match="invalid interval"):
            latency(make_trace([C("ping")]), every=zero)
    with pytest.raises(ValueError, match="unknown grouping 'tools'"):
        latency(make_trace([C("ping")]), by="tools")


DIMENSION_CALLS = [
    C("tools/call", 5.0, target="search", server="docs", session="a"),
    C("tools/call", 7.0, target="fetch", server="docs", session="a", at=1),
    C("prompts/get", 3.0, target="summarise", server="docs", session="a", at=2),
    C("resources/read", 2.0, target="file:///a", server="docs", session="a", at=3),
    C("resources/list", 2.5, server="docs", session="a", at=4),
    C("ping", 1.0, server="web", session="b", at=5),
    C("tools/call", 9.0, target="search", server="web", session="b", at=6, outcome="error"),
    C("roots/list", 0.5, session="b", dir="s2c", at=7, server="web"),
]


@pytest.mark.parametrize("dim", sorted(DIMENSIONS))
def test_group_by_each_dimension(make_trace: MakeTrace, dim: str) -> None:
    trace = make_trace(
        DIMENSION_CALLS,
        revisions={"a": "2025-11-25", "b": "2026-07-28"},
        clients={"a": "desk", "b": "cli"},
    )
    calls = trace.calls
    out = latency(trace, by=dim)
    assert out.columns[0] == dim
    column, applies = DIMENSIONS[dim]
    kept = calls if applies is None else calls.filter(applies)
    expected_groups = kept.group_by(column.alias(dim)).agg(pl.col("latency_ms").sort())
    assert out.height == expected_groups.height
    for key, values in expected_groups.iter_rows():
        row = out.filter(pl.col(dim).eq_missing(key)).row(0, named=True)
        assert row["count"] == len(values)
        assert row["p50"] == pytest.approx(float(np.quantile(values, 0.5)), abs=1e-6)


def test_dimension_values(make_trace: MakeTrace) -> None:
    trace = make_trace(
        DIMENSION_CALLS,
        revisions={"a": "2025-11-25", "b": "2026-07-28"},
        clients={"a": "desk", "b": "cli"},
    )

    def keys(dim: str) -> list[Any]:
        return latency(trace, by=dim)[dim].cast(pl.String).to_list()

    assert keys("tool") == ["fetch", "search"]
    assert keys("prompt") == ["summarise"]
    assert keys("resource") == ["file:///a"]
    assert keys("server") == ["docs", "web"]
    assert keys("client") == ["cli", "desk"]
    assert keys("revision") == ["2025-11-25", "2026-07-28"]
    assert keys("direction") == ["c2s", "s2c"]
    assert keys("outcome") == ["ok", "error"]  # Enum order of the outcomes
    two = latency(trace, by=("server", "tool"))
    assert two.select("server", "tool", "count").rows() == [
        ("docs", "fetch", 1),
        ("docs", "search", 1),
        ("web", "search", 1),
    ]


def test_coverage_reasons(make_trace: MakeTrace) -> None:
    calls = [
        C("ping", 1.0),
        C("ping", at=1, outcome="unanswered"),
        C("ping", at=2, outcome="unanswered"),
        C("tools/call", at=3, target="x", outcome="cancelled"),
        C("tools/call", 20.0, at=4, target="x"),
    ]
    out = latency_coverage(make_trace(calls))
    row = out.row(0, named=True)
    assert row == {
        "count": 5,
        "with_latency": 2,
        "without_latency": 3,
        "cancelled": 1,
        "unanswered": 2,
        "no_timestamps": 0,
        "reversed": 0,
        "unordered": 0,
        "approximate": 0,
        "reason": "1 cancelled, 2 unanswered",
    }
    by_method = latency_coverage(make_trace(calls), by="method")
    assert by_method.select("method", "without_latency").rows() == [("ping", 2), ("tools/call", 1)]


def test_untimed_capture_gives_partial_frames(make_trace: MakeTrace) -> None:
    trace = make_trace([C("ping", at=None), C("tools/call", target="x", at=None)])
    out = latency(trace)
    assert out["count"].to_list() == [0, 0] and out["without_latency"].to_list() == [1, 1]
    assert out["p50"].null_count() == 2
    row = latency_coverage(trace).row(0, named=True)
    assert row["no_timestamps"] == 2 and row["reason"] == "2 without timestamps"
    assert latency(trace, every="1m")["bucket"].to_list() == [None, None]


def test_unordered_capture_reason() -> None:
    # both times known but not comparable (per-direction files): the pairing leaves
    # latency null, which only a bare calls table can show with timestamps present
    t = datetime(2026, 8, 1, tzinfo=UTC)
    calls = CALLS.from_columns(
        {
            "method": ["ping", "ping"],
            "outcome": ["ok", "ok"],
            "request_ts": [t, t],
            "response_ts": [t, t],
            "latency_ms": [None, 0.0],
        }
    )
    row = latency_coverage(calls).row(0, named=True)
    assert row["unordered"] == 1 and row["with_latency"] == 1
    assert row["approximate"] is None  # no messages: unknown
    assert row["reason"] == "1 whose order against each other the capture does not record"


def test_reversed_stamps_and_unordered_messages_give_no_latency(tmp_path: Path) -> None:
    # call 1's response is stamped before its request (a clock that stepped back, or a
    # HAR stamping a stream's events with its end); call 2's response has a place the
    # capture does not record; call 3 is measured
    def line(ts: str, direction: str, msg: dict[str, Any], **extra: Any) -> bytes:
        record = {"ts": f"2026-08-01T10:00:{ts}Z", "dir": direction, "session": "s", "msg": msg}
        return orjson.dumps({**record, **extra}) + b"\n"

    ping = {"jsonrpc": "2.0", "method": "ping"}
    path = tmp_path / "capture.jsonl"
    path.write_bytes(
        line("05", "c2s", {**ping, "id": 1})
        + line("04", "s2c", {"jsonrpc": "2.0", "id": 1, "result": {}})
        + line("06", "c2s", {**ping, "id": 2})
        + line("07", "s2c", {"jsonrpc": "2.0", "id": 2, "result": {}}, unordered=True)
        + line("08", "c2s", {**ping, "id": 3})
        + line("08.250", "s2c", {"jsonrpc": "2.0", "id": 3, "result": {}})
    )
    trace = mcptrace.load(path)
    assert trace.unordered_sessions == frozenset()
    assert trace.calls["latency_ms"].to_list() == [None, None, 250.0]
    row = latency_coverage(trace).row(0, named=True)
    assert (row["reversed"], row["unordered"], row["with_latency"]) == (1, 1, 1)
    assert row["reason"] == (
        "1 with the response stamped before the request, "
        "1 whose order against each other the capture does not record"
    )


def test_stdio_pair_has_no_latency() -> None:
    trace = mcptrace.load(SAMPLES / "stdio-pair")
    row = latency_coverage(trace).row(0, named=True)
    assert row["with_latency"] == 0 and row["no_timestamps"] == row["count"] > 0


def test_local_time_latencies_are_approximate() -> None:
    trace = mcptrace.load(SAMPLES / "vscode")
    row = latency_coverage(trace).row(0, named=True)
    assert row["with_latency"] > 0 and row["approximate"] == row["with_latency"]
    assert "approximate (local-time timestamps)" in row["reason"]
    # --tz places wall-clock times in a zone, but they stay wall-clock times
    zoned = mcptrace.load(SAMPLES / "vscode", tz="Europe/Paris")
    assert latency_coverage(zoned)["approximate"].item() == row["approximate"]


@pytest.mark.parametrize("table", [CALLS, MESSAGES])
def test_empty_inputs(table: Any) -> None:
    empty = table.empty()
    assert latency(empty).height == 0
    assert latency(empty, by=(), every="1m").columns == [
        "bucket",
        "count",
        "without_latency",
        *QUANTILES,
        "max",
        "mean",
    ]
    coverage = latency_coverage(empty, by="tool")
    assert coverage.height == 0 and coverage.columns[:2] == ["tool", "count"]


def test_messages_frame_is_paired() -> None:
    trace = mcptrace.load(SAMPLES / "capture" / "healthy-2025-11-25.jsonl")
    assert (
        latency(trace.messages)
        .drop("without_latency")
        .equals(latency(trace).drop("without_latency"))
    )
    with pytest.raises(TypeError):
        latency(pl.DataFrame({"x": [1]}))
