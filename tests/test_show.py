"""``mcptrace show`` from a finding to the traffic around it: --id, --line, --context, --body."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from factories import SAMPLES, rec, req, res
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app
from mcptrace.errors import UsageError
from mcptrace.listing import LineSpan, message_list, parse_lines

INCIDENT = SAMPLES / "capture" / "incident-2025-11-25.jsonl"
runner = CliRunner()


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def test_parse_lines_reads_what_lint_prints() -> None:
    assert parse_lines("137") == LineSpan(None, 137, 137)
    assert parse_lines("130-145") == LineSpan(None, 130, 145)
    assert parse_lines("traces/a.jsonl:137:") == LineSpan("traces/a.jsonl", 137, 137)
    assert parse_lines(r"C:\logs\a.jsonl:5-9") == LineSpan(r"C:\logs\a.jsonl", 5, 9)
    for bad in ("", "x", "a.jsonl:", "0", "9-3", "1-"):
        with pytest.raises(UsageError):
            parse_lines(bad)


def test_an_id_finds_its_request_its_cancellation_and_its_response() -> None:
    listing = message_list(mcptrace.load(INCIDENT), ids=["34"])
    assert listing["line"].to_list() == [190, 200, 205]
    assert listing["what"][1] == "notifications/cancelled"
    # a string id, typed bare or quoted
    trace = mcptrace.load(INCIDENT)
    for given in ("b-7", '"b-7"'):
        assert message_list(trace, ids=[given])["line"].to_list() == [135, 136]


def test_context_shows_the_messages_around_each_line_and_marks_the_line() -> None:
    trace = mcptrace.load(INCIDENT)
    listing = message_list(trace, lines=[LineSpan(None, 137, 137)], context=2)
    assert listing["line"].to_list() == [135, 136, 137, 138, 139]
    assert listing["hit"].to_list() == [False, False, True, False, False]
    # overlapping stretches are shown once; the first line has nothing before it
    listing = message_list(trace, lines=[LineSpan(None, 1, 1), LineSpan(None, 3, 4)], context=1)
    assert listing["line"].to_list() == [1, 2, 3, 4, 5]
    assert listing["hit"].to_list() == [True, False, True, True, False]


def test_context_stays_within_the_file_of_its_line(tmp_path: Path) -> None:
    for name, first in (("a.jsonl", 1), ("b.jsonl", 10)):
        records = [rec(req(first + i, "ping")) for i in range(3)]
        (tmp_path / name).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    trace = mcptrace.load(tmp_path)
    listing = message_list(trace, lines=[LineSpan("b.jsonl", 1, 1)], context=5)
    assert [(Path(s).name, n) for s, n in listing.select("source", "line").rows()] == [
        ("b.jsonl", 1),
        ("b.jsonl", 2),
        ("b.jsonl", 3),
    ]
    # without a file, line 3 is line 3 of each file
    assert message_list(trace, lines=[LineSpan(None, 3, 3)])["id"].to_list() == ["3", "12"]


def test_the_command_takes_a_place_copied_from_a_lint_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(SAMPLES.parent)
    place = runner.invoke(app, ["lint", str(INCIDENT), "--select", "PR001"]).output.split(" ")[0]
    # lint names the file relative to the working folder; show is given its full path
    assert (
        place.endswith("capture/incident-2025-11-25.jsonl:137:") and not Path(place).is_absolute()
    )
    result = runner.invoke(app, ["show", str(INCIDENT), "--line", place, "-C", "1"])
    assert result.exit_code == 0, result.output
    shown = _lines(result.output)
    assert len(shown) == 3
    assert shown[1].startswith(">") and "137" in shown[1] and "tools/call search_docs" in shown[1]
    assert not shown[0].startswith(">") and not shown[2].startswith(">")


def test_body_prints_each_message_json_under_its_line(tmp_path: Path) -> None:
    records = [rec(req(1, "tools/list")), rec(res(1, {"tools": []}), dir="s2c")]
    capture = tmp_path / "c.jsonl"
    capture.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records) + b"{oops\n")
    result = runner.invoke(app, ["show", str(capture), "--body"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert '        {\n          "jsonrpc": "2.0",\n          "id": 1,' in out
    assert '"tools": []' in out
    assert "        {oops" in out  # a line that is not JSON, as it is


def test_a_malformed_line_option_is_a_usage_error() -> None:
    result = runner.invoke(app, ["show", str(INCIDENT), "--line", "12-3"])
    assert result.exit_code == 2
    assert "--line '12-3'" in result.output


def test_a_line_in_a_file_not_among_the_inputs_is_a_usage_error() -> None:
    # a mistyped file name must not read as "no messages on that line"
    result = runner.invoke(app, ["show", str(SAMPLES / "capture"), "--line", "incidnt.jsonl:3"])
    assert result.exit_code == 2
    assert "no input file is named incidnt.jsonl" in result.output
    assert "incident-2025-11-25.jsonl" in result.output


def test_limit_and_context_must_not_be_negative() -> None:
    for option in ("--limit", "--context"):
        result = runner.invoke(app, ["show", str(INCIDENT), option, "-3"])
        assert result.exit_code == 2, option


def test_times_carry_their_date_when_the_capture_spans_days(tmp_path: Path) -> None:
    records = [
        rec(req(1, "ping"), ts="2026-08-01T23:59:59.500Z"),
        rec(res(1), dir="s2c", ts="2026-08-02T00:00:00.250Z"),
    ]
    capture = tmp_path / "midnight.jsonl"
    capture.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    shown = _lines(runner.invoke(app, ["show", str(capture), "--line", "2"]).output)
    assert shown == [
        "     2  2026-08-02 00:00:00.250  s1       <-       1  result to ping (750.0 ms)"
    ]
    same_day = _lines(runner.invoke(app, ["show", str(INCIDENT), "--line", "1"]).output)
    assert same_day[0].split()[1] == "22:40:00.400"


@pytest.mark.parametrize(
    "options",
    [{}, {"methods": ["tools/call"]}, {"kinds": ["response"]}, {"ids": ["34"], "context": 2}],
)
def test_a_limited_listing_is_the_head_of_the_whole_one(options: dict[str, Any]) -> None:
    # the limit is applied before the calls' columns are joined: the same rows either way
    trace = mcptrace.load(INCIDENT)
    whole = message_list(trace, **options)
    for limit in (0, 3, 10_000):
        assert message_list(trace, limit=limit, **options).equals(whole.head(limit))


def test_show_of_call_records_only_points_to_the_calls() -> None:
    # OpenTelemetry spans hold calls, not messages: nothing to list, and the user is told
    # where the calls are
    result = CliRunner().invoke(app, ["show", str(SAMPLES / "otel")])
    assert result.exit_code == 0
    assert "(no messages match)" in result.stderr
    assert "call records only (21 calls)" in result.stderr
    assert "mcptrace stats" in result.stderr
