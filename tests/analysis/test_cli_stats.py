"""``mcptrace stats``: tables, groupings, buckets, errors and machine output."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import polars as pl
import pytest
from factories import SAMPLES, load_generator
from typer.testing import CliRunner

import mcptrace
from mcptrace import analysis
from mcptrace.cli import app

runner = CliRunner()
LEGACY = str(SAMPLES / "capture" / "healthy-2025-11-25.jsonl")
#: tools/call latencies of the sample, read off its timestamps (ms)
SAMPLE_TOOLS = [158.0, 143.1, 20.5]


def run(*args: str, code: int = 0) -> str:
    result = runner.invoke(app, ["stats", *args])
    assert result.exit_code == code, result.output
    return result.stdout


def test_default_table_on_the_sample() -> None:
    out = run(LEGACY)
    lines = out.splitlines()
    assert lines[0] == "Latency (ms) by method"
    header = lines[1].split()
    assert header == ["method", "count", "p50", "p90", "p95", "p99", "max", "mean"]
    row = next(line for line in lines if line.strip().startswith("tools/call"))
    expected = [np.quantile(SAMPLE_TOOLS, q) for q in (0.5, 0.9, 0.95, 0.99)]
    expected += [max(SAMPLE_TOOLS), np.mean(SAMPLE_TOOLS)]
    assert row.split()[1:] == ["3", *(f"{v:.1f}" for v in expected)]
    # numbers are right-aligned under their header
    assert lines[1].index("mean") + len("mean") == len(row)
    assert "Error rate: 18.2% of 11 calls (1 error, 1 tool error, 0 unanswered, 0 cancelled)" in out
    assert "without latency" not in out  # every call of the sample has one


def test_by_and_every() -> None:
    out = run(LEGACY, "--by", "tool")
    assert out.splitlines()[0] == "Latency (ms) by tool"
    assert {line.split()[0] for line in out.splitlines()[2:5] if line.strip()} == {
        "fetch_page",
        "search_docs",
    }
    two = run(LEGACY, "--by", "server", "--by", "prompt")
    assert two.splitlines()[1].split()[:2] == ["server", "prompt"]
    assert two.splitlines()[2].split()[:3] == ["docs", "nonexistent", "1"]
    bucketed = run(LEGACY, "--every", "10s")
    assert bucketed.splitlines()[0] == "Latency (ms) by method, every 10s"
    assert bucketed.splitlines()[1].split()[:2] == ["method", "bucket"]
    assert "ping              2026-09-14 09:30:10.000" in bucketed


def test_errors_table() -> None:
    out = run(LEGACY, "--errors")
    lines = out.splitlines()
    assert lines[0] == "Failed calls"
    assert lines[1].split() == ["method", "category", "code", "name", "count", "%", "of", "calls"]
    assert "prompts/get  jsonrpc     -32602  Invalid params" in out
    assert "tools/call   tool_error       -  Tool error (isError: true)" in out
    assert lines[3].endswith("1        33.3")
    assert "Error rate: 18.2%" in out


def test_json_and_csv() -> None:
    data = orjson.loads(run(LEGACY, "--format", "json"))
    assert set(data) == {"latency", "error_rate", "coverage"}
    tools = next(r for r in data["latency"] if r["method"] == "tools/call")
    assert tools["p90"] == pytest.approx(np.quantile(SAMPLE_TOOLS, 0.9), abs=1e-6)
    assert data["error_rate"]["calls"] == 11
    assert data["coverage"]["without_latency"] == 0
    errors = orjson.loads(run(LEGACY, "--errors", "--format", "json", "--every", "1m"))
    assert errors["errors"][0]["bucket"] == "2026-09-14T09:30:00.000000Z"
    csv = pl.read_csv(io.StringIO(run(LEGACY, "--format", "csv", "--by", "tool")))
    assert csv.columns[0] == "tool" and csv["count"].to_list() == [2, 1]
    errors_csv = pl.read_csv(io.StringIO(run(LEGACY, "--errors", "--format", "csv")))
    assert errors_csv["name"].to_list() == ["Invalid params", "Tool error (isError: true)"]


def test_coverage_note_and_input_errors(tmp_path: Path, capture_file: Any) -> None:
    path = capture_file(
        [
            {"method": "ping", "at": 0},
            *({"method": "ping", "at": 1 + i, "outcome": "unanswered"} for i in range(10)),
            *({"method": "ping", "at": 20 + i, "outcome": "cancelled"} for i in range(2)),
            {"method": "ping", "at": 30},
        ]
    )
    result = runner.invoke(app, ["stats", str(path), str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 2
    assert "12 calls without latency: 2 cancelled, 10 unanswered" in result.stdout
    assert "Error rate: 85.7% of 14 calls" in result.stdout
    assert "missing.jsonl" in result.stderr


def test_local_time_note() -> None:
    out = run(str(SAMPLES / "vscode"))
    assert "from wall-clock timestamps: approximate if the clock changed" in out


def test_usage_errors() -> None:
    result = runner.invoke(app, ["stats", LEGACY, "--every", "soon"])
    assert result.exit_code == 2 and "invalid interval 'soon'" in result.stderr
    result = runner.invoke(app, ["stats", LEGACY, "--by", "colour"])
    assert result.exit_code == 2


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gen") / "gen.jsonl"
    load_generator().generate_capture(path, messages=5000, seed=11)
    return path


def test_generated_capture(generated: Path) -> None:
    trace = mcptrace.load(generated)
    out = run(str(generated))
    assert "tools/call" in out and "without latency" in out
    data = orjson.loads(run(str(generated), "--format", "json"))
    expected = analysis.latency(trace)
    assert [r["method"] for r in data["latency"]] == expected["method"].to_list()
    assert sum(r["count"] for r in data["latency"]) == data["coverage"]["with_latency"]
    csv = pl.read_csv(io.StringIO(run(str(generated), "--format", "csv", "--by", "server")))
    direct = analysis.latency(trace, by="server")
    assert csv["server"].to_list() == direct["server"].to_list()
    assert np.allclose(csv["p99"].to_numpy(), direct["p99"].to_numpy(), atol=1e-6)
    errors = run(str(generated), "--errors", "--by", "tool", "--every", "5m")
    assert errors.splitlines()[1].split()[:3] == ["tool", "bucket", "category"]
    assert "tool_error" in errors
