"""Two sets of calls side by side: ``analysis.compare``, ``split_at`` and ``mcptrace compare``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
import polars as pl
import pytest
from factories import SAMPLES, err, rec, req, res, ts
from typer.testing import CliRunner

import mcptrace
from mcptrace import analysis
from mcptrace.cli import app

INCIDENT = SAMPLES / "capture" / "incident-2025-11-25.jsonl"
HEALTHY = SAMPLES / "capture" / "healthy-2025-11-25.jsonl"
runner = CliRunner()


def _calls(method: str, latencies: list[float], outcomes: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"method": [method] * len(latencies), "outcome": outcomes, "latency_ms": latencies}
    )


def test_each_group_side_by_side_with_its_changes() -> None:
    old = pl.concat(
        [
            _calls("tools/call", [10.0, 20.0, 30.0, 40.0], ["ok"] * 4),
            _calls("ping", [1.0], ["ok"]),
        ]
    )
    new = pl.concat(
        [
            _calls("tools/call", [100.0, 200.0, 300.0, 400.0], ["ok", "ok", "error", "ok"]),
            _calls("tools/list", [5.0], ["error"]),
        ]
    )
    out = analysis.compare(old, new)
    rows = {r["method"]: r for r in out.iter_rows(named=True)}
    call = rows["tools/call"]
    assert (call["calls_before"], call["calls_after"]) == (4, 4)
    assert (call["p50_before"], call["p50_after"]) == (25.0, 250.0)
    # linear quantiles: 30 + 0.85 * 10 and ten times that
    assert call["p95_before"] == pytest.approx(38.5)
    assert call["p95_ratio"] == pytest.approx(10.0)
    assert (call["error_rate_before"], call["error_rate_after"]) == (0.0, 0.25)
    assert call["error_rate_change"] == 0.25
    # a group on one side only: zero calls and null measures on the other
    gone, appeared = rows["ping"], rows["tools/list"]
    assert (gone["calls_after"], gone["p50_after"], gone["error_rate_change"]) == (0, None, None)
    assert (appeared["calls_before"], appeared["error_rate_after"]) == (0, 1.0)


def test_most_regressed_first_failures_then_slowness_then_the_rest() -> None:
    old = pl.concat(
        [
            _calls("a/slower", [10.0, 10.0], ["ok", "ok"]),
            _calls("b/same", [10.0, 10.0], ["ok", "ok"]),
            _calls("c/failing", [10.0, 10.0], ["ok", "ok"]),
            _calls("d/much-slower", [10.0, 10.0], ["ok", "ok"]),
            _calls("e/failing-more", [10.0, 10.0], ["ok", "ok"]),
        ]
    )
    new = pl.concat(
        [
            _calls("a/slower", [20.0, 20.0], ["ok", "ok"]),
            _calls("b/same", [10.0, 10.0], ["ok", "ok"]),
            _calls("c/failing", [10.0, 10.0], ["ok", "error"]),
            _calls("d/much-slower", [90.0, 90.0], ["ok", "ok"]),
            _calls("e/failing-more", [10.0, 10.0], ["error", "unanswered"]),
            _calls("f/new-and-failing", [10.0, 10.0], ["ok", "error"]),
        ]
    )
    order = analysis.compare(old, new)["method"].to_list()
    assert order == [
        "e/failing-more",  # +100 pp
        "c/failing",  # +50 pp
        "f/new-and-failing",  # appeared failing half the time: +50 pp, after c by name
        "d/much-slower",  # p95 x9
        "a/slower",  # p95 x2
        "b/same",
    ]


def test_one_row_over_all_calls_and_empty_sides() -> None:
    old = _calls("x", [10.0, 30.0], ["ok", "error"])
    overall = analysis.compare(old, old.head(0), ())
    assert overall.columns[0] == "calls_before"
    assert overall.select("calls_before", "calls_after", "error_rate_before").row(0) == (
        2,
        0,
        0.5,
    )
    assert analysis.compare(old.head(0), old.head(0)).is_empty()


def test_split_at_a_moment_puts_each_call_on_one_side() -> None:
    trace = mcptrace.load(INCIDENT)
    moment = datetime(2026, 9, 15, 22, 44, tzinfo=UTC)
    before, after, untimed = analysis.split_at(trace, moment)
    requests = trace.calls.filter(pl.col("outcome") != "orphan")
    assert before.height + after.height + untimed == requests.height
    assert (before["request_ts"] < moment).all() and (after["request_ts"] >= moment).all()
    by_tool = analysis.compare(before, after, "tool")
    top = by_tool.row(0, named=True)
    # the incident: fetch_page starts failing after 22:44 (its timeouts)
    assert by_tool.filter(pl.col("tool") == "fetch_page")["error_rate_change"].item() > 0.3
    assert top["error_rate_change"] is None or top["error_rate_change"] >= 0.3


def test_the_command_splits_one_capture_at_a_moment() -> None:
    result = runner.invoke(
        app, ["compare", str(INCIDENT), "--at", "2026-09-15T22:44Z", "--by", "tool"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Before: calls requested before 2026-09-15T22:44Z"
    assert lines[2].startswith("Overall: 54 -> 46 calls; error rate 1.9% -> 28.3% (+26.4 pp)")
    table = lines[lines.index("By tool, most regressed first") + 1 :]
    assert table[0].split()[:3] == ["tool", "calls", "before"]
    assert table[1].split()[0] == "get_invoice"  # appeared, and failed every time
    assert table[2].split()[:3] == ["fetch_page", "23", "22"]
    assert table[2].split()[7] == "11.53"  # the p95 ratio with two decimals


def test_the_command_compares_two_captures_as_json_and_csv() -> None:
    result = runner.invoke(app, ["compare", str(HEALTHY), str(INCIDENT), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.output)
    assert doc["before"] == str(HEALTHY) and doc["after"] == str(INCIDENT)
    assert (doc["overall"]["calls_before"], doc["overall"]["calls_after"]) == (11, 100)
    assert doc["groups"][0]["method"] == "tools/call"  # x128 slower at p95
    csv = runner.invoke(app, ["compare", str(HEALTHY), str(INCIDENT), "--format", "csv"])
    header = csv.output.splitlines()[0]
    assert header.startswith("method,calls_before,calls_after,p50_before")


def test_the_command_refuses_unclear_sides_and_reports_unreadable_files(tmp_path: Path) -> None:
    assert runner.invoke(app, ["compare", str(INCIDENT)]).exit_code == 2
    both = runner.invoke(app, ["compare", str(HEALTHY), str(INCIDENT), "--at", "2026-09-15"])
    assert both.exit_code == 2 and "either two captures" in both.output
    bad_time = runner.invoke(app, ["compare", str(INCIDENT), "--at", "soon"])
    assert bad_time.exit_code == 2 and "--at 'soon'" in bad_time.output
    folder = tmp_path / "after"
    folder.mkdir()
    lines = [
        rec(req(1, "tools/call", {"name": "x"}), ts=ts(0)),
        rec(err(1, -32603, "boom"), dir="s2c", ts=ts(0.5)),
        rec(req(2, "tools/call", {"name": "x"}), ts=ts(1)),
        rec(res(2), dir="s2c", ts=ts(1.2)),
    ]
    (folder / "c.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    (folder / "junk.bin").write_bytes(b"\x00\x01\x02")
    result = runner.invoke(app, ["compare", str(HEALTHY), str(folder)])
    assert result.exit_code == 2
    assert "junk.bin" in result.output
    assert "Overall: 11 -> 2 calls" in result.output


def test_the_command_draws_the_changes_when_asked(tmp_path: Path) -> None:
    image = tmp_path / "changes.png"
    args = ["compare", str(INCIDENT), "--at", "2026-09-15T22:44Z", "--by", "tool"]
    result = runner.invoke(app, [*args, "--plot", str(image)])
    assert result.exit_code == 0, result.output
    assert image.read_bytes().startswith(b"\x89PNG")
    refused = runner.invoke(app, [*args, "--plot", str(tmp_path / "changes.gif")])
    assert refused.exit_code == 2 and "must end in .png or .svg" in refused.output
