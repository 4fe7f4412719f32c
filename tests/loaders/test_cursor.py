"""Cursor's MCP logs: tool calls, the server's stderr and stdout pollution, no messages."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from factories import SAMPLES

import mcptrace
from mcptrace.loaders import cursor, vscode
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES

FOLDER = SAMPLES / "cursor"
AGGREGATE = FOLDER / "MCP Logs.log"
PER_SERVER = FOLDER / "MCP user-weather.log"


def _kinds(m: pl.DataFrame) -> list[str]:
    return m["kind"].cast(pl.String).to_list()


def test_samples_are_detected_and_only_cursor_claims_them() -> None:
    for path in (AGGREGATE, PER_SERVER):
        head = make_head(read_content(path))
        assert cursor.sniff(head) > vscode.sniff(head)
    for other in sorted((SAMPLES / "vscode").iterdir()):
        assert cursor.sniff(make_head(read_content(other))) == 0
    trace = mcptrace.load(FOLDER)
    MESSAGES.validate(trace.messages)
    CALLS.validate(trace.calls)
    assert set(trace.sources["format"].to_list()) == {"cursor"}


def test_calls_are_paired_per_session_and_tool_with_their_outcomes() -> None:
    calls = mcptrace.load(PER_SERVER).calls
    assert calls.select("session", "target", "outcome", "error_code", "latency_ms").rows() == [
        ("weather#1", "get_forecast", "ok", None, 752.0),
        ("weather#1", "get_alerts", "error", -32602, 154.0),
        ("weather#2", "get_forecast", "ok", None, 601.0),
        ("weather#2", "get_forecast", "unanswered", None, None),
    ]
    # Cursor's toolCallId is the call's id
    assert calls["id"][0] == '"toolu_01KqW7yG3fTn2vXb8cRz4mPd"'
    assert calls["id"].null_count() == 0
    assert set(calls["client"].to_list()) == {"cursor"}
    assert calls["error_message"][1] == "Unknown region: Atlantis"
    assert (calls["request_line"].to_list(), calls["response_line"].to_list()) == (
        [10, 13, 21, 24],
        [11, 14, 22, None],
    )


def test_times_are_local_wall_clock_read_in_the_given_zone() -> None:
    utc = mcptrace.load(PER_SERVER)
    paris = mcptrace.load(PER_SERVER, tz="Europe/Paris")
    shift = (utc.calls["request_ts"] - paris.calls["request_ts"]).unique().to_list()
    assert [s.total_seconds() for s in shift] == [3600.0]
    assert (utc.messages["ts_quality"].cast(pl.String) == "local").all()


def test_server_prefixes_stderr_pollution_and_transports() -> None:
    trace = mcptrace.load(AGGREGATE)
    m = trace.messages
    assert set(m["server"].to_list()) == {"github", "notes"}
    # the server's stderr comes at level error; a traceback goes on without times
    stderr = m.filter(pl.col("kind") == "stderr")
    assert stderr["line"].to_list() == [7, 20, 21, 22, 23]
    assert stderr["message"][0] == "Starting notes-mcp 0.4.1 (vault: /home/dev/notes)"
    # Cursor's own [error] lines are logs, not stderr
    assert m.filter(pl.col("line") == 29)["kind"].cast(pl.String).item() == "log"
    bad = m.filter(pl.col("kind") == "invalid").row(0, named=True)
    assert (bad["line"], bad["direction"], bad["transport"]) == (8, "s2c", "stdio")
    sessions = trace.sessions.select("session", "transport").rows()
    assert sessions == [("github#1", "http"), ("notes#1", "stdio")]
    found = mcptrace.lint(trace)
    assert found.select("line", "code").rows() == [(8, "ST001")]


def test_short_prefixes_resolve_to_the_long_ones(tmp_path: Path) -> None:
    # early 2025: Cursor's own lines carry the identifier's last four characters, the
    # server's stderr the whole one (designcomputer/mysql_mcp_server#49); "INFO: " at
    # the start of a stderr line is no prefix
    path = tmp_path / "Cursor MCP.log"
    path.write_text(
        "2025-05-12 15:48:10.683 [info] ysql: Handling CallTool action for tool 'q'\n"
        "2025-05-12 15:48:10.683 [info] ysql: Calling tool 'q'\n"
        "2025-05-12 15:48:10.684 [error] user-mysql: INFO: processing CallToolRequest\n"
        "2025-05-12 15:48:10.700 [error] INFO: something else\n"
        "2025-05-12 15:48:10.753 [info] ysql: Client closed for command\n"
        "2025-05-12 15:48:10.753 [error] ysql: Error calling tool 'q': MCP error -32000: "
        "Connection closed\n"
    )
    trace = mcptrace.load(path)
    assert (
        trace.messages["server"].to_list()
        == ["mysql", "mysql", "mysql", "Cursor MCP"] + ["mysql"] * 2
    )
    assert _kinds(trace.messages) == ["log", "log", "stderr", "stderr", "log", "log"]
    assert trace.calls.select("outcome", "error_code", "error_message").rows() == [
        ("error", -32000, "Connection closed")
    ]
