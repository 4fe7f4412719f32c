"""The command line: output, exit codes and error reporting."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest
import typer
from factories import SAMPLES, WriteLines, rec, req, res
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app

runner = CliRunner()
LEGACY = SAMPLES / "capture" / "healthy-2025-11-25.jsonl"


def test_version_and_help() -> None:
    assert runner.invoke(app, ["--version"]).output.strip() == f"mcptrace {mcptrace.__version__}"
    for args in (["--help"], ["summary", "--help"], ["show", "-h"], ["convert", "--help"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "Usage" in result.output


def test_starting_the_command_line_does_not_import_numpy() -> None:
    # NumPy costs ~75 ms to import and its BLAS threads spin after import: only the
    # commands that need it (lint in shares, plots) bring it in
    code = "import sys, mcptrace.cli; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_summary_text() -> None:
    result = runner.invoke(app, ["summary", str(LEGACY)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "docs-1" in out and "2025-11-25" in out and "initialize" in out
    assert "desk-host 4.2.0" in out and "docs-server 1.8.3" in out
    assert "tools/call" in out
    assert "Unanswered requests: 0   orphan responses: 0" in out
    assert "Invalid lines: 0" in out


def test_summary_json_counts() -> None:
    result = runner.invoke(app, ["summary", "--json", str(LEGACY)])
    assert result.exit_code == 0
    data = orjson.loads(result.output)
    assert data["messages"] == 26
    assert data["kinds"] == {"request": 11, "response": 10, "notification": 4, "error": 1}
    assert data["outcomes"] == {"ok": 9, "tool_error": 1, "error": 1}
    assert data["sessions"][0]["revision_source"] == "initialize"


def test_show_lists_messages_with_arrows_and_filters() -> None:
    result = runner.invoke(app, ["show", str(LEGACY), "--method", "tools/call"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == 6  # three calls, each request and response
    assert "->" in lines[0] and "tools/call search_docs" in lines[0]
    assert "<-" in lines[1] and "result to tools/call search_docs (158.0 ms)" in lines[1]
    assert "tool error to tools/call fetch_page" in result.output
    errors = runner.invoke(app, ["show", str(LEGACY), "--kind", "error"]).output
    assert "error -32602 Unknown prompt: nonexistent to prompts/get" in errors


def test_show_names_the_file_of_each_line_when_there_are_several(tmp_path: Path) -> None:
    # a session crossing a log rotation: each file has a line 1
    records = [
        rec(req(1, "tools/list"), session="s1"),
        rec(res(1, {"tools": []}), dir="s2c", session="s1"),
        rec(req(2, "prompts/list"), session="s1"),
    ]
    (tmp_path / "x.jsonl.1").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records[:2]))
    (tmp_path / "x.jsonl").write_bytes(orjson.dumps(records[2]) + b"\n")
    lines = runner.invoke(app, ["show", str(tmp_path)]).output.splitlines()
    assert [line.split()[0] for line in lines] == ["x.jsonl.1:1", "x.jsonl.1:2", "x.jsonl:1"]
    one = runner.invoke(app, ["show", str(LEGACY), "--limit", "1"]).output
    assert one.startswith("     1  ")  # one file: the line alone, as before


def test_unreadable_file_exits_2_but_others_are_analysed(tmp_path: Path) -> None:
    bad = tmp_path / "garbage.bin"
    bad.write_bytes(bytes(range(256)) * 10)
    result = runner.invoke(app, ["summary", str(LEGACY), str(bad)])
    assert result.exit_code == 2
    assert "docs-1" in result.stdout
    assert f"{bad}: binary content" in result.stderr
    missing = runner.invoke(app, ["summary", str(tmp_path / "missing.jsonl")])
    assert missing.exit_code == 2
    assert "missing.jsonl" in missing.stderr
    # nothing readable at all: the inputs are named as typed, not as a Python list
    neither = runner.invoke(app, ["lint", str(bad), str(tmp_path / "missing.jsonl")])
    assert neither.exit_code == 2
    assert f"error: {bad}, {tmp_path / 'missing.jsonl'}: no capture could be read (" in (
        neither.stderr
    )
    assert "PosixPath" not in neither.stderr
    (tmp_path / "empty").mkdir()
    nothing = runner.invoke(app, ["lint", str(tmp_path / "empty")])
    assert nothing.exit_code == 2
    assert f"no capture files found in {tmp_path / 'empty'}\n" in nothing.stderr


def test_unknown_format_is_a_usage_error() -> None:
    result = runner.invoke(app, ["summary", "--format", "pcap", str(LEGACY)])
    assert result.exit_code == 2
    assert "unknown format 'pcap'" in result.stderr


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize("table", ["messages", "calls", "sessions"])
def test_convert_tables(tmp_path: Path, suffix: str, table: str) -> None:
    out = tmp_path / f"out{suffix}"
    result = runner.invoke(app, ["convert", str(LEGACY), "-o", str(out), "--table", table])
    assert result.exit_code == 0, result.output
    df = pl.read_parquet(out) if suffix == ".parquet" else pl.read_csv(out)
    expected = getattr(mcptrace.load(LEGACY), table)
    assert df.height == expected.height
    assert df.columns == expected.columns


def test_convert_to_capture_round_trips(tmp_path: Path, write_lines: WriteLines) -> None:
    src = write_lines(
        [
            rec(req(1, "tools/list"), ts="2026-08-01T10:00:00.5Z"),
            rec(
                res(1),
                dir="s2c",
                ts="2026-08-01T10:00:01Z",
                raw='{"jsonrpc": "2.0", "id": 1, "result": {}}',
            ),
            rec("{not json", dir="s2c"),
            rec("server warming up", dir="stderr"),
        ]
    )
    out = tmp_path / "round.jsonl"
    assert runner.invoke(app, ["convert", str(src), "-o", str(out)]).exit_code == 0
    before, after = mcptrace.load(src), mcptrace.load(out)
    cols = ["ts", "session", "direction", "kind", "id", "method", "message"]
    assert after.messages.select(cols).equals(before.messages.select(cols))
    assert after.calls.select("latency_ms", "outcome").rows() == [(500.0, "ok")]
    # a stdio capture becomes a capture file with the inferred directions written down
    stdio_out = tmp_path / "from-stdio.jsonl"
    runner.invoke(
        app, ["convert", str(SAMPLES / "stdio" / "docs-server.ndjson"), "-o", str(stdio_out)]
    )
    first = orjson.loads(stdio_out.read_bytes().splitlines()[0])
    assert first["dir"] == "c2s" and first["msg"]["method"] == "initialize"


def test_convert_keeps_transport_events(tmp_path: Path) -> None:
    # a HAR capture has transport rows (an HTTP 202 without a body): written as capture
    # records they must come back as transport rows, not as lines that were not JSON
    har = SAMPLES / "har"
    out = tmp_path / "har.jsonl"
    assert runner.invoke(app, ["convert", str(har), "-o", str(out)]).exit_code == 0
    before, after = mcptrace.load(har), mcptrace.load(out)
    cols = ["direction", "kind", "id", "method", "http_status"]
    assert before.messages["kind"].cast(pl.String).to_list().count("transport") > 0
    assert after.messages.select(cols).equals(before.messages.select(cols))
    codes = sorted(mcptrace.lint(after)["code"].to_list())
    assert "JR014" not in codes
    assert codes == sorted(mcptrace.lint(before)["code"].to_list())


def test_convert_keeps_the_order_of_a_per_direction_pair_unknown(tmp_path: Path) -> None:
    # x.in.jsonl + x.out.jsonl: the order across the two files was never captured. One
    # capture file seems to give one; its records must say it does not, or the pairing
    # and lifecycle rules judge an order that was never seen (they drew LC004 and PR003)
    pair = SAMPLES / "stdio-pair"
    out = tmp_path / "pair.jsonl"
    assert runner.invoke(app, ["convert", str(pair), "-o", str(out)]).exit_code == 0
    before, after = mcptrace.load(pair), mcptrace.load(out)
    assert before.unordered_sessions == after.unordered_sessions == frozenset({"docs"})
    assert after.messages["unordered"].all()
    assert after.calls["latency_ms"].null_count() == after.calls.height
    codes = sorted(mcptrace.lint(after)["code"].to_list())
    assert codes == sorted(mcptrace.lint(before)["code"].to_list())
    assert "LC004" not in codes and "PR003" not in codes
    # a record that says nothing of order is ordered as written
    line = out.read_text().splitlines()[0].replace(',"unordered":true', "")
    plain = tmp_path / "plain.jsonl"
    plain.write_text(line + "\n")
    assert not mcptrace.load(plain).unordered_sessions


def test_formats_lists_every_loader() -> None:
    out = runner.invoke(app, ["formats"]).output
    for name in mcptrace.FORMATS:
        assert name in out


def test_every_command_reading_captures_takes_the_input_format_the_hint_names(
    tmp_path: Path,
) -> None:
    # the hint for an unrecognised file names --input-format: every command that reads
    # captures must take it, whatever else its --format means there
    odd = tmp_path / "odd.jsonl"
    odd.write_text("[]\n{}\n")
    result = runner.invoke(app, ["lint", str(odd)])
    assert result.exit_code == 2
    assert "force one with --input-format: capture," in result.output
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    readers = [
        name
        for name, command in group.commands.items()
        if any(p.name == "traces" for p in command.params)
    ]
    assert {
        "summary",
        "show",
        "convert",
        "lint",
        "stats",
        "plot",
        "report",
        "redact",
        "scan",
    } <= set(readers)
    for name in readers:
        options = {o for p in group.commands[name].params for o in getattr(p, "opts", [])}
        assert "--input-format" in options, name
    forced = runner.invoke(app, ["show", "--input-format", "stdio", str(odd)])
    assert forced.exit_code == 0, forced.output


INCIDENT = SAMPLES / "capture" / "incident-2025-11-25.jsonl"
WINDOW = ("--since", "2026-09-15T22:45:00Z", "--until", "2026-09-15T22:46:00Z")


def test_stats_show_summary_and_plot_take_the_incident_window(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from mcptrace import analysis

    since = datetime(2026, 9, 15, 22, 45, tzinfo=UTC)
    until = datetime(2026, 9, 15, 22, 46, tzinfo=UTC)
    whole = mcptrace.load(INCIDENT)
    window = whole.filter(since=since, until=until)
    assert 0 < window.messages.height < whole.messages.height

    stats = runner.invoke(app, ["stats", str(INCIDENT), "--format", "json", *WINDOW])
    assert stats.exit_code == 0, stats.output
    rate = orjson.loads(stats.output)["error_rate"]
    assert rate["calls"] == analysis.error_rate(window)["calls"][0]
    assert rate["calls"] < analysis.error_rate(whole)["calls"][0]

    show = runner.invoke(app, ["show", str(INCIDENT), *WINDOW])
    assert show.exit_code == 0, show.output
    lines = [int(row.split()[0]) for row in show.output.splitlines()]
    assert lines == window.messages["line"].to_list()

    summary = runner.invoke(app, ["summary", "--json", str(INCIDENT), *WINDOW])
    assert summary.exit_code == 0, summary.output
    assert orjson.loads(summary.output)["messages"] == window.messages.height

    out = tmp_path / "timeline.svg"
    plot = runner.invoke(
        app, ["plot", str(INCIDENT), "-o", str(out), "--kind", "timeline", *WINDOW]
    )
    assert plot.exit_code == 0, plot.output
    assert out.read_text().startswith("<?xml")


@pytest.mark.parametrize("command", ["stats", "show", "summary"])
def test_a_bad_window_is_a_usage_error(command: str) -> None:
    result = runner.invoke(app, [command, str(INCIDENT), "--since", "yesterday"])
    assert result.exit_code == 2
    assert "--since 'yesterday' is not an ISO 8601 time" in result.output


def test_a_dash_reads_the_capture_from_standard_input() -> None:
    data = INCIDENT.read_bytes()
    from_file = runner.invoke(app, ["lint", str(INCIDENT), "--format", "json"])
    piped = runner.invoke(app, ["lint", "-", "--format", "json"], input=data)
    assert piped.exit_code == from_file.exit_code == 1
    found = orjson.loads(piped.output)
    assert [(f["line"], f["code"]) for f in found] == [
        (f["line"], f["code"]) for f in orjson.loads(from_file.output)
    ]
    assert {f["source"] for f in found} == {"-"}
    # a capture without session keys of its own takes the name of where it came from
    stdio = (SAMPLES / "stdio" / "docs-server.ndjson").read_bytes()
    sessions = runner.invoke(app, ["summary", "--json", "-"], input=stdio)
    assert [s["session"] for s in orjson.loads(sessions.output)["sessions"]] == ["stdin"]
    # compressed on the way in, and through the streaming commands (which otherwise
    # read big files again from disk by offset)
    packed = gzip.compress(data)
    summary = runner.invoke(app, ["summary", "--json", "-"], input=packed)
    assert orjson.loads(summary.output)["messages"] == data.count(b"\n")
    scan = runner.invoke(app, ["scan", "-"], input=data)
    assert scan.exit_code == 0, scan.output
    assert "in 1 file(s)" in scan.output


def test_a_dash_on_a_terminal_is_refused_instead_of_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    with pytest.raises(mcptrace.CaptureError, match="standard input is a terminal"):
        mcptrace.load("-")


def test_summary_notes_agree_in_number(write_lines: WriteLines) -> None:
    ping = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'
    one = runner.invoke(app, ["summary", str(write_lines([ping], name="one.ndjson"))])
    assert "1 protocol message has no known direction" in one.output
    two = runner.invoke(app, ["summary", str(write_lines([ping, ping], name="two.ndjson"))])
    assert "2 protocol messages have no known direction" in two.output


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "-o", "{out}/x.jsonl"],
        ["convert", "-o", "{out}/x.parquet"],
        ["convert", "--table", "calls", "-o", "{out}/x.csv"],
        ["redact", "-o", "{out}/x.jsonl"],
    ],
)
def test_writing_into_a_missing_folder_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "no-such-folder"
    result = runner.invoke(app, [args[0], str(LEGACY), *(a.format(out=out) for a in args[1:])])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"cannot write {out}" in result.output and "there is no folder" in result.output
    assert not out.exists()


@pytest.mark.parametrize("command", [["stats"], ["compare", str(LEGACY)]])
def test_a_dimension_given_twice_is_a_usage_error(command: list[str]) -> None:
    result = runner.invoke(app, [*command, str(LEGACY), "--by", "method", "--by", "method"])
    assert result.exit_code == 2
    assert "names a dimension twice" in result.output


def test_capture_text_never_reaches_the_terminal_as_control_characters(tmp_path: Path) -> None:
    # an escape sequence in a capture (ESC [2J clears the screen, U+009B is the eight-bit
    # CSI) is shown escaped, whichever command prints it
    path = tmp_path / "capture.jsonl"
    record = {
        "ts": "2026-09-14T09:30:02Z",
        "dir": "c2s",
        "session": "s\x1b[31m",
        "msg": {
            "jsonrpc": "2.0",
            "id": "\x9b2J",
            "method": "x\x1b]0;t\x07",
            "params": {"k": "\x7f"},
        },
    }
    path.write_bytes(orjson.dumps(record) + b"\n" + b"not json \x1b[2J\n")
    for args in (["show", "--body"], ["summary"], ["stats"], ["lint", "--show-source"]):
        result = runner.invoke(app, [args[0], str(path), *args[1:]])
        printed = result.output
        for control in ("\x1b", "\x9b", "\x07", "\x7f"):
            assert control not in printed, (args, control)
        assert "\\x1b" in printed, args


@pytest.mark.parametrize("error", ["ZeroDivisionError()", "type('Panic', (BaseException,), {})()"])
def test_a_crash_exits_3_not_1_which_lint_uses_for_findings(error: str) -> None:
    # a crash must not read as "findings" in CI; a Rust panic in Polars is a BaseException
    code = (
        "import sys, mcptrace.cli.summary as s\n"
        "def boom(*args, **kwargs):\n"
        f"    raise {error}\n"
        "s.summarize = boom\n"
        f"sys.argv = ['mcptrace', 'summary', {str(LEGACY)!r}]\n"
        "from mcptrace.cli import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 3
    assert "Traceback" in done.stderr
    assert "mcptrace: internal error: this is a bug in mcptrace" in done.stderr
