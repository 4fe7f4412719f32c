"""The Claude Code MCP log loader: per-server JSONL logs and ``claude --debug`` logs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES

import mcptrace
from mcptrace.analysis import latency
from mcptrace.loaders import FORMATS, claude_code, claude_desktop, stdio
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES

JSONL = SAMPLES / "claude-code" / "mcp-logs-weather" / "2026-07-07T12-47-32-359Z.jsonl"
DEBUG = SAMPLES / "claude-code" / "debug" / "0b8e41d2-5a7c-4f09-9d3e-71c2a4e6f810.txt"
SID = "9d1f0c4e-2b7a-4c55-8e0f-3a6b5c4d2e1f"


def entry(text: str, ms: int | None = 0, *, error: bool = False, **extra: Any) -> dict[str, Any]:
    """One log entry as Claude Code writes it; ``ms`` after 2026-07-07T10:00:00Z."""
    out: dict[str, Any] = {"error" if error else "debug": text}
    if ms is not None:
        out["timestamp"] = f"2026-07-07T10:{ms // 60000:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}Z"
    out.update({"sessionId": SID, "cwd": "/home/dev/app"})
    out.update(extra)
    return out


def server_log(tmp_path: Path, entries: list[Any], server: str = "notes") -> Path:
    folder = tmp_path / f"mcp-logs-{server}"
    folder.mkdir(exist_ok=True)
    path = folder / "2026-07-07T10-00-00-000Z.jsonl"
    chunks = [e if isinstance(e, bytes) else orjson.dumps(e) for e in entries]
    path.write_bytes(b"\n".join(chunks) + b"\n")
    return path


def kinds(df: pl.DataFrame) -> list[str]:
    return df["kind"].cast(pl.String).to_list()


def test_jsonl_sample_is_detected_from_content(tmp_path: Path) -> None:
    # keep the mcp-logs-<server> folder (it names the server), not the file name
    folder = tmp_path / "mcp-logs-weather"
    folder.mkdir()
    path = folder / "x.txt"
    shutil.copy(JSONL, path)
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["detected"], src["lines"], src["rows"], src["invalid"]) == (
        "claude-code",
        "content",
        26,
        26,
        0,
    )
    assert m["line"].to_list() == list(range(1, 27))
    assert kinds(m).count("stderr") == 3 and kinds(m).count("log") == 23
    assert m.filter(pl.col("kind") == "stderr")["message"][0] == (
        "INFO:     weather MCP server 1.9.4 starting (stdio)\n"
    )
    assert m["server"].unique().to_list() == ["weather"]
    # each Starting connection line starts a session, tagged with Claude Code's sessionId
    assert m["session"].to_list() == ["weather#1@6c47fe2e"] * 19 + ["weather#2@6c47fe2e"] * 7
    assert m["transport"].cast(pl.String).unique().to_list() == ["stdio"]
    assert m["direction"].cast(pl.String).unique().to_list() == ["unknown"]
    assert str(m["ts"][0]) == "2026-07-07 12:47:33.016000+00:00"
    # the error entry that the failure line repeats is the tool's isError result
    assert m["parse_error"][8] == "a tool's isError result, as Claude Code logs it"
    assert m["parse_error"].null_count() == 25


def test_jsonl_sample_calls() -> None:
    trace = mcptrace.load(JSONL)
    calls = trace.calls
    CALLS.validate(calls)
    got = calls.select(
        "session", "target", "request_line", "response_line", "latency_ms", "outcome"
    )
    assert got.rows() == [
        ("weather#1@6c47fe2e", "get_forecast", 6, 7, 506.0, "ok"),
        ("weather#1@6c47fe2e", "get_alerts", 8, 10, 19.0, "tool_error"),
        ("weather#1@6c47fe2e", "get_alerts", 11, 12, 1451.0, "ok"),
        ("weather#1@6c47fe2e", "get_forecast", 13, 16, 45003.0, "error"),
        ("weather#2@6c47fe2e", "get_forecast", 23, 24, 2232.0, "ok"),
    ]
    assert calls["method"].unique().to_list() == ["tools/call"]
    assert calls["client"].unique().to_list() == ["claude-code"]
    assert calls["direction"].cast(pl.String).unique().to_list() == ["c2s"]
    timeout = calls.row(3, named=True)
    assert (timeout["error_code"], timeout["error_message"]) == (-32001, "Request timed out")
    assert calls["error_message"][1] is None  # a tool error is not a JSON-RPC error
    # the sessions have rows, so they are not call-only
    assert trace.call_only_sessions == []
    sessions = trace.sessions
    assert sessions.select("session", "server", "transport", "client_name").rows() == [
        ("weather#1@6c47fe2e", "weather", "stdio", "claude-code"),
        ("weather#2@6c47fe2e", "weather", "stdio", "claude-code"),
    ]
    stats = latency(trace, by="tool")
    assert stats.select("tool", "count").rows() == [("get_alerts", 2), ("get_forecast", 3)]
    assert stats.filter(pl.col("tool") == "get_forecast")["max"].item() == 45003.0


def test_debug_sample() -> None:
    trace = mcptrace.load(DEBUG)
    m = trace.messages
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["lines"], src["rows"], src["invalid"]) == ("claude-code", 31, 31, 0)
    assert m["line"].to_list() == list(range(1, 32))
    sessions = m.group_by("session", maintain_order=True).agg(
        pl.len(), pl.col("transport").cast(pl.String).first()
    )
    assert sessions.rows() == [
        ("claude-code@0b8e41d2", 5, "unknown"),
        ("weather#1@0b8e41d2", 9, "stdio"),
        ("linear#1@0b8e41d2", 17, "http"),
    ]
    # the lines of the multi-line error stay with their record
    assert m["session"].to_list()[16:25] == ["linear#1@0b8e41d2"] * 9
    assert m["ts"][17] == m["ts"][16]
    assert m["message"][5 - 1] == "INFO:     weather MCP server 1.9.4 starting (stdio)"
    assert kinds(m)[4] == "stderr"
    calls = trace.calls.select("session", "target", "latency_ms", "outcome", "error_code")
    assert calls.rows() == [
        ("linear#1@0b8e41d2", "search_issues", 881.0, "ok", None),
        ("weather#1@0b8e41d2", "get_forecast", 440.0, "ok", None),
        ("linear#1@0b8e41d2", "create_issue", 633.0, "error", -32602),
        ("linear#1@0b8e41d2", "create_issue", 1336.0, "ok", None),
        ("weather#1@0b8e41d2", "get_alerts", None, "unanswered", None),
    ]


def test_sniff_scores() -> None:
    assert claude_code.sniff(make_head(read_content(JSONL))) == 95
    assert claude_code.sniff(make_head(read_content(DEBUG))) == 85
    assert claude_desktop.sniff(make_head(read_content(DEBUG))) == 30
    assert stdio.sniff(make_head(read_content(JSONL))) < 95
    assert list(FORMATS).index("claude-code") < list(FORMATS).index("stdio")
    for other in ("claude-desktop", "vscode", "mcpspy", "mcpsnoop", "capture"):
        for f in sorted((SAMPLES / other).iterdir()):
            assert claude_code.sniff(make_head(read_content(f))) == 0, f


def test_a_file_outside_its_folder_has_no_server(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    shutil.copy(JSONL, path)
    trace = mcptrace.load(path)
    assert trace.messages["server"].null_count() == 26
    assert trace.messages["session"][0] == "mcp#1@6c47fe2e"
    assert "no server name" in trace.sources["note"].item()


def test_completion_without_a_calling_line_derives_the_request_time(tmp_path: Path) -> None:
    path = server_log(
        tmp_path,
        [
            entry("Starting connection with timeout of 30000ms", 0),
            entry("Successfully connected to sse server in 120ms", 120),
            entry("Tool 'sync' completed successfully in 2m 3s", 200_000),
            entry("Tool 'sync' failed after 0s: MCP error -32000: Connection closed", 201_000),
            entry("Calling MCP tool: lookup", None),
            entry("Tool 'lookup' completed successfully in 42ms", None),
        ],
    )
    trace = mcptrace.load(path)
    calls = trace.calls
    got = calls.select("target", "request_line", "response_line", "latency_ms", "outcome")
    assert got.rows() == [
        ("sync", 3, 3, 123_000.0, "ok"),
        ("sync", 4, 4, 0.0, "error"),
        ("lookup", 5, 6, 42.0, "ok"),
    ]
    first = calls.row(0, named=True)
    assert str(first["request_ts"]) == "2026-07-07 10:01:17+00:00"  # 10:03:20 - 123 s
    assert (calls["error_code"][1], calls["error_message"][1]) == (-32000, "Connection closed")
    assert (calls["request_ts"][2], calls["response_ts"][2]) == (None, None)
    assert trace.messages["transport"].cast(pl.String).unique().to_list() == ["http"]
    assert "2 call(s) without a `Calling MCP tool` line" in trace.sources["note"].item()


def test_an_error_entry_not_echoed_is_not_a_tool_result(tmp_path: Path) -> None:
    path = server_log(
        tmp_path,
        [
            entry("Calling MCP tool: lookup", 0),
            entry("Connection failed: spawn notes ENOENT", 10, error=True),
            entry("Tool 'lookup' failed after 0s: Not connected", 20),
        ],
    )
    trace = mcptrace.load(path)
    assert trace.messages["parse_error"].null_count() == 3
    assert trace.calls.select("outcome", "error_message").rows() == [("error", "Not connected")]


@pytest.mark.parametrize(
    ("text", "ms"),
    [("119ms", 119.0), ("8s", 8000.0), ("0s", 0.0), ("1.5s", 1500.0), ("2m 3s", 123000.0)],
)
def test_parse_duration(text: str, ms: float) -> None:
    assert claude_code.parse_duration(text) == ms


def test_parse_duration_rejects_other_text() -> None:
    assert claude_code.parse_duration("soon") is None
    assert claude_code.parse_duration("3 parsecs") is None


def test_a_json_array_of_entries_is_read_too(tmp_path: Path) -> None:
    folder = tmp_path / "mcp-logs-notes"
    folder.mkdir()
    path = folder / "2025-03-01T09-00-00-000Z.txt"
    entries = [
        entry("Starting connection with timeout of 30000ms", 0),
        entry("Calling MCP tool: lookup", 1000),
        entry("Tool 'lookup' completed successfully in 250ms", 1250),
    ]
    path.write_text(json.dumps(entries, indent=2))
    trace = mcptrace.load(path)
    assert trace.sources["format"].item() == "claude-code"
    m = trace.messages
    assert m["line"].to_list() == [2, 8, 14]
    assert trace.calls.select("request_line", "response_line", "latency_ms").rows() == [
        (8, 14, 250.0)
    ]


def test_malformed_lines_are_rows_not_exceptions(tmp_path: Path) -> None:
    folder = tmp_path / "mcp-logs-notes"
    folder.mkdir()
    path = folder / "2026-07-07T10-00-00-000Z.jsonl"
    lines = [
        orjson.dumps(entry("Starting connection with timeout of 30000ms", 0)),
        b"{not json",
        b"",
        b"[1, 2]",
        orjson.dumps({"timestamp": "2026-07-07T10:00:01Z", "level": "info"}),
        orjson.dumps(entry("Calling MCP tool: lookup", 2000)),
        b'{"debug":"Tool \'lookup\' completed success',
    ]
    path.write_bytes(b"\n".join(lines))  # the log is written live: a torn last line
    trace = mcptrace.load(path, format="claude-code")
    m = trace.messages
    MESSAGES.validate(m)
    assert m["line"].to_list() == list(range(1, 8))
    assert kinds(m) == ["log", "invalid", "blank", "invalid", "invalid", "log", "invalid"]
    errors = m["parse_error"].to_list()
    assert errors[1].startswith("invalid JSON")
    assert errors[3] == "log entry is a JSON array"
    assert errors[4] == "log entry is without `debug` or `error`"
    assert errors[6].startswith("incomplete last entry (the log is written live): ")
    # rows without a session of their own stay in the one around them
    assert m["session"].unique().to_list() == ["notes#1@9d1f0c4e"]
    assert trace.calls.select("target", "outcome").rows() == [("lookup", "unanswered")]


def test_an_error_code_too_long_for_the_table_stays_in_the_message(tmp_path: Path) -> None:
    big = "-" + "9" * 25
    path = server_log(
        tmp_path,
        [
            entry("Calling MCP tool: sync", 0),
            entry(f"Tool 'sync' failed after 0s: MCP error {big}: Connection closed", 10),
        ],
    )
    calls = mcptrace.load(path).calls
    assert calls.select("outcome", "error_code", "error_message").row(0) == (
        "error",
        None,
        f"MCP error {big}: Connection closed",
    )


def test_an_impossibly_long_duration_is_unknown_latency_and_said(tmp_path: Path) -> None:
    path = server_log(
        tmp_path,
        [
            entry("Starting connection with timeout of 30000ms", 0),
            entry("Tool 'sync' completed successfully in 99999999999999h", 200_000),
            entry("Tool 'sync' completed successfully in 3s", 201_000),
        ],
    )
    trace = mcptrace.load(path)
    calls = trace.calls.select("request_ts", "response_ts", "latency_ms").rows()
    assert calls[0][0] is None and calls[0][1] is not None and calls[0][2] is None
    assert calls[1][2] == 3000.0
    note = trace.sources["note"].item()
    assert "1 call(s) logged with an impossibly long duration (line 2)" in note


def test_the_newer_connected_wording_sets_the_transport(tmp_path: Path) -> None:
    # from 2.1.222: "Successfully connected (transport: stdio) in 60ms"
    path = server_log(
        tmp_path,
        [
            entry("Starting connection with timeout of 30000ms"),
            entry("Successfully connected (transport: http) in 14ms", 14),
        ],
    )
    trace = mcptrace.load(path)
    assert trace.sessions["transport"].cast(pl.String).to_list() == ["http"]


def test_a_servers_stderr_of_several_lines_stays_stderr(tmp_path: Path) -> None:
    # anthropics/claude-code#30147: the server's stderr lines after the first have no time
    path = tmp_path / "0b8e41d2-5a7c-4f09-9d3e-71c2a4e6f810.txt"
    path.write_text(
        '2026-03-03T18:44:15.100Z [DEBUG] MCP server "meterian": Starting connection\n'
        '2026-03-03T18:44:15.900Z [ERROR] MCP server "meterian" Server stderr: booting...\n'
        "[MCP SERVER] ready\n"
        "18:44:16 MCP - stdin end\n"
        '2026-03-03T18:44:17.000Z [DEBUG] MCP server "meterian": Connection closed\n'
        "  at a continuation of a debug line\n"
    )
    m = mcptrace.load(path).messages
    assert kinds(m) == ["log", "stderr", "stderr", "stderr", "log", "log"]
    assert m["message"][2] == "[MCP SERVER] ready"
    assert set(m["session"].to_list()) == {"meterian#1@0b8e41d2"}


def test_the_console_copy_of_a_debug_log_has_no_times(tmp_path: Path) -> None:
    # `claude --debug` on a terminal (anthropics/claude-code#1611, 2025-07)
    path = tmp_path / "console.txt"
    path.write_text(
        '[DEBUG] MCP server "firecrawl": Connection failed: Error: timed out after 30000ms\n'
        "    at Timeout._onTimeout (cli.js:1383:5751)\n"
        '[DEBUG] MCP server "github": Starting connection with timeout of 30000ms\n'
    )
    trace = mcptrace.load(path)
    assert trace.sources["format"].to_list() == ["claude-code"]
    m = trace.messages
    assert kinds(m) == ["log", "log", "log"]
    assert m["server"].to_list() == ["firecrawl", "firecrawl", "github"]
    assert m["ts"].null_count() == 3


def test_a_debug_log_is_known_by_its_place_before_its_first_mcp_line(tmp_path: Path) -> None:
    # real 2.1 debug logs start with many lines about plugins and API requests
    lines = [f"2026-06-21T15:17:{i:02d}.000Z [DEBUG] Loading plugin {i}" for i in range(30)]
    lines.append('2026-06-21T15:18:00.000Z [DEBUG] MCP server "notes": Starting connection')
    text = "\n".join(lines) + "\n"
    folder = tmp_path / ".claude" / "debug"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text(text)
    (tmp_path / "9d1f0c4e-2b7a-4c55-8e0f-3a6b5c4d2e1f.txt").write_text(text)
    (tmp_path / "other.txt").write_text(text)
    for path in (folder / "notes.txt", tmp_path / "9d1f0c4e-2b7a-4c55-8e0f-3a6b5c4d2e1f.txt"):
        assert mcptrace.load(path).messages["server"][-1] == "notes"
    with pytest.raises(mcptrace.errors.CaptureError):
        mcptrace.load(tmp_path / "other.txt")  # the grammar alone is too common to claim
