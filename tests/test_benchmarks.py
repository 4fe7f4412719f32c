"""The benchmark scripts still run (tiny sizes; the figures are not judged here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]


def test_bench_files_runs_and_finds_the_same_on_both_inputs(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "bench_files.py"
    args = ["--messages", "400", "--files", "12", "--repeat", "1", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    report = orjson.loads((tmp_path / "bench_files.json").read_bytes())
    assert report["messages"] == 400
    assert 1 < report["files"] <= 12
    assert report["same_findings"] is True
    assert report["one_file_s"] > 0 and report["directory_s"] > 0


def test_bench_rotated_runs_and_finds_the_same_on_every_input(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "bench_rotated.py"
    args = ["--messages", "600", "--files", "3", "--repeat", "1", "--partitions", "2"]
    done = subprocess.run(
        [sys.executable, str(script), *args, "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = orjson.loads((tmp_path / "bench_rotated.json").read_bytes())
    assert report["files"] == 3 and report["compressed_files"] == 2
    assert report["findings"] > 0
    assert report["same_findings"] is True
    assert report["rotated_peak_mib"] > 0 and report["one_file_s"] > 0


def test_bench_lint_runs_every_measurement(tmp_path: Path) -> None:
    script = ROOT / "benchmarks" / "bench_lint.py"
    args = ["--messages", "2000", "--repeat", "1", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    report = orjson.loads((tmp_path / "bench_lint.json").read_bytes())
    measured = report["measurements"]
    modes = {"baseline", "baseline_cmd", "naive", "lint", "shares", "cli"}
    assert set(measured) == modes, measured
    assert all("error" not in measured[mode] for mode in modes)
    # every lint finds the same, and the command is set against the loop as a command
    assert measured["lint"]["findings"] == measured["shares"]["findings"] > 0
    assert measured["cli"]["ratio_best"] == (
        measured["cli"]["best_s"] / measured["baseline_cmd"]["best_s"]
    )
    assert report["families"]["total_s"] > 0
