"""The VS Code MCP output-log loader, on the sample and on inline logs."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from factories import SAMPLES, WriteLines

import mcptrace
from mcptrace.loaders import claude_desktop, detect, stdio, vscode
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS

SAMPLE = SAMPLES / "vscode" / "mcp-github.log"


def _kinds(m: pl.DataFrame) -> list[str]:
    return m["kind"].cast(pl.String).to_list()


def _by_line(m: pl.DataFrame, line: int) -> dict[str, object]:
    return m.filter(pl.col("line") == line).row(0, named=True)


def _load(path: Path, tz: str | None = None) -> mcptrace.Trace:
    trace = mcptrace.load(path, tz=tz)
    MESSAGES.validate(trace.messages)
    CALLS.validate(trace.calls)
    SESSIONS.validate(trace.sessions)
    return trace


def _utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# -- detection -------------------------------------------------------------------


def test_detected_by_content_not_name(tmp_path: Path) -> None:
    neutral = tmp_path / "x.txt"
    shutil.copy(SAMPLE, neutral)
    assert detect(read_content(neutral)) == "vscode"
    trace = _load(neutral)
    assert trace.sources["format"].to_list() == ["vscode"]
    # the server name comes from the Starting line, not the (neutral) file name
    assert set(trace.messages["server"].to_list()) == {"github"}


def test_sniff(write_lines: WriteLines) -> None:
    head = make_head(read_content(SAMPLE))
    assert vscode.sniff(head) == 90
    assert claude_desktop.sniff(head) == 0
    assert stdio.sniff(head) == 0
    # an info-level channel (no traffic lines) is still recognised by its lifecycle lines
    quiet = write_lines(
        [
            "2026-01-12 10:05:11.204 [info] Starting server github",
            "2026-01-12 10:05:11.204 [info] Connection state: Starting",
            "2026-01-12 10:05:11.252 [info] Connection state: Running",
        ]
    )
    assert detect(read_content(quiet)) == "vscode"
    # another VS Code output channel has the grammar but none of the markers
    other = write_lines(["2026-01-12 10:05:11.204 [info] Extension host started"] * 3)
    assert vscode.sniff(make_head(read_content(other))) < 40


# -- the sample ----------------------------------------------------------------------


def test_sample_rows_sessions_and_kinds() -> None:
    trace = _load(SAMPLE)
    m = trace.messages
    assert m.height == SAMPLE.read_bytes().count(b"\n") == 50
    assert m["line"].to_list() == list(range(1, 51))
    assert dict(m.group_by("session").len().iter_rows()) == {"github#1": 29, "github#2": 21}
    assert _by_line(m, 29)["session"] == "github#1"  # Connection state: Stopped
    assert _by_line(m, 30)["session"] == "github#2"  # Starting server github
    # "Starting server from LocalProcess extension host" does not start a session
    assert _by_line(m, 32)["session"] == "github#2"
    assert set(m["server"].to_list()) == {"github"}
    assert set(m["transport"].cast(pl.String).to_list()) == {"stdio"}
    kinds = m.group_by("kind").len().sort("kind")
    assert dict(zip(kinds["kind"].cast(pl.String), kinds["len"], strict=True)) == {
        "request": 11,
        "notification": 5,
        "response": 11,
        "invalid": 1,
        "stderr": 4,
        "log": 18,
    }
    stderr = m.filter(pl.col("kind") == "stderr")
    assert stderr["line"].to_list() == [8, 25, 28, 38]
    assert stderr["message"][2] == "stdin closed, shutting down"
    assert stderr["ts"].null_count() == 0
    # the rendered notifications/message is a log row after the raw message
    assert _by_line(m, 20)["method"] == "notifications/message"
    assert _by_line(m, 21)["message"] == "octo.api: rate limit remaining: 4971/5000"


def test_sample_directions_and_ids() -> None:
    m = _load(SAMPLE).messages
    assert _by_line(m, 7)["direction"] == "c2s"
    assert _by_line(m, 9)["direction"] == "s2c"
    roots = _by_line(m, 14)
    assert (roots["method"], roots["direction"], roots["id"]) == ("roots/list", "s2c", "1")
    assert _by_line(m, 15)["direction"] == "c2s"
    assert not m["direction_inferred"].any()
    assert _by_line(m, 18)["progress_token"] == '"6b0f3c2e-9a41-4d7e-8c55-2f1d0e7a9b13"'
    assert _by_line(m, 18)["target"] == "search_repositories"


def test_failed_to_parse_is_an_invalid_server_row() -> None:
    m = _load(SAMPLE).messages
    row = _by_line(m, 39)
    assert row["kind"] == "invalid"
    assert row["direction"] == "s2c"
    assert row["message"] == "debug: token cache warmed (2 entries)"
    assert row["parse_error"].startswith("the server wrote a line to stdout that is not JSON")
    assert "char 0" in row["parse_error"]
    assert row["session"] == "github#2"


def test_sample_calls_paired_per_session() -> None:
    calls = _load(SAMPLE).calls
    assert calls.select("session", "direction", "id", "method", "outcome", "latency_ms").rows() == [
        ("github#1", "c2s", "1", "initialize", "ok", 1388.0),
        ("github#1", "c2s", "2", "logging/setLevel", "ok", 4.0),
        ("github#1", "c2s", "3", "tools/list", "ok", 9.0),
        ("github#1", "s2c", "1", "roots/list", "ok", 0.0),
        ("github#1", "c2s", "4", "tools/call", "ok", 1226.0),
        ("github#1", "c2s", "5", "tools/call", "tool_error", 373.0),
        ("github#2", "c2s", "1", "initialize", "ok", 6671.0),
        ("github#2", "c2s", "2", "logging/setLevel", "ok", 4.0),
        ("github#2", "c2s", "3", "tools/list", "ok", 8.0),
        ("github#2", "s2c", "1", "roots/list", "ok", 0.0),
        ("github#2", "c2s", "4", "tools/call", "ok", 458.0),
    ]


def test_sample_sessions_identity() -> None:
    s = _load(SAMPLE).sessions.sort("session")
    assert s.select("session", "revision", "client_name", "server_name", "ts_quality").rows() == [
        ("github#1", "2025-11-25", "Visual Studio Code", "octo-mcp", "local"),
        ("github#2", "2025-11-25", "Visual Studio Code", "octo-mcp", "local"),
    ]


# -- time zones ------------------------------------------------------------------------


def test_times_without_tz_are_read_as_utc() -> None:
    m = _load(SAMPLE).messages
    first = m.row(0, named=True)
    assert first["ts"] == _utc(2026, 1, 12, 10, 5, 11, 204000)
    assert first["ts_quality"] == "local"
    assert set(m["ts_quality"].cast(pl.String).to_list()) == {"local"}


def test_times_are_shifted_from_the_given_zone() -> None:
    m = _load(SAMPLE, tz="Europe/Berlin").messages
    assert m.row(0, named=True)["ts"] == _utc(2026, 1, 12, 9, 5, 11, 204000)
    assert set(m["ts_quality"].cast(pl.String).to_list()) == {"local"}
    # the server's own zoned stderr timestamp agrees with the shifted time
    stderr = _by_line(m, 25)
    assert "10:07:59.103+01:00" in stderr["message"]
    assert stderr["ts"] == _utc(2026, 1, 12, 9, 7, 59, 104000)


@pytest.mark.parametrize(
    ("tz", "expected"),
    [
        (None, _utc(2026, 7, 1, 12, 0, 0, 500000)),
        ("Europe/Berlin", _utc(2026, 7, 1, 10, 0, 0, 500000)),  # summer time: UTC+2
        ("America/New_York", _utc(2026, 7, 1, 16, 0, 0, 500000)),
    ],
)
def test_summer_time(write_lines: WriteLines, tz: str | None, expected: datetime) -> None:
    path = write_lines(["2026-07-01 12:00:00.500 [info] Connection state: Running"])
    assert _load(path, tz=tz).messages["ts"].to_list() == [expected]


# -- inline logs ----------------------------------------------------------------------


def test_old_client_says_server_says(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            "2025-03-23 16:37:58.001 [info] Starting server validator",
            '2025-03-23 16:38:00.970 [info] [Client Says] {"jsonrpc":"2.0","id":"4","method":'
            '"tools/call","params":{"name":"validate_username","arguments":{"username":"x"}}}',
            '2025-03-23 16:38:00.989 [info] [Server Says] {"jsonrpc":"2.0","id":"4","result":'
            '{"content":[],"isError":false}}',
        ]
    )
    trace = _load(path)
    m = trace.messages
    assert m["direction"].cast(pl.String).to_list() == ["unknown", "c2s", "s2c"]
    assert m["id"].to_list() == [None, '"4"', '"4"']
    assert m["id_type"].cast(pl.String).to_list() == [None, "string", "string"]
    assert trace.calls.select("session", "target", "latency_ms").rows() == [
        ("validator#1", "validate_username", 19.0)
    ]


def test_continuations_blank_stderr_and_bad_json(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            "2026-02-01 09:00:00.000 [info] Starting server My Docs (beta)",
            "2026-02-01 09:00:00.100 [error] Error: spawn uvx ENOENT",
            "    at ChildProcess._handle.onexit (node:internal/child_process:285:19)",
            "    at onErrorNT (node:internal/child_process:483:16)",
            "2026-02-01 09:00:00.200 [warning] [server stderr] ",
            "2026-02-01 09:00:00.300 [warning] [server stderr] Traceback (most recent call last):",
            '2026-02-01 09:00:00.400 [debug] [server -> editor] {"jsonrpc":"2.0","id":1,"res',
            "",
            "2026-02-01 09:00:00.500 [info] Connection state: Error Process exited with code 1",
        ]
    )
    m = _load(path).messages
    assert _kinds(m) == [
        "log", "log", "log", "log", "stderr", "stderr", "invalid", "blank", "log",
    ]  # fmt: skip
    assert set(m["session"].to_list()) == {"My Docs (beta)#1"}
    # continuation lines share the time of their record
    assert m["ts"][2] == m["ts"][3] == m["ts"][1]
    assert m["message"][2].startswith("    at ChildProcess")
    assert m["message"][4] == ""
    assert m["message"][5] == "Traceback (most recent call last):"
    bad = m.row(6, named=True)
    assert bad["direction"] == "s2c"
    # VS Code logs a message once parsed: a marked line that is not JSON was cut in the log
    assert bad["parse_error"].startswith("log line cut or damaged")
    assert "invalid JSON" in bad["parse_error"] and "char" in bad["parse_error"]
    assert m["ts"][7] is None


def test_server_name_from_file_name(write_lines: WriteLines) -> None:
    lines = [
        '2026-02-01 09:00:00.000 [debug] [editor -> server] {"jsonrpc":"2.0","id":7,'
        '"method":"ping"}',
        '2026-02-01 09:00:00.004 [debug] [server -> editor] {"jsonrpc":"2.0","id":7,"result":{}}',
    ]
    for name, server in [
        ("mcpServer.mcp.config.usrlocal.AWS Documentation.log", "AWS Documentation"),
        ("mcp-github.log", "github"),
        ("notes.txt", "notes"),
    ]:
        trace = _load(write_lines(lines, name))
        assert trace.messages["server"].to_list() == [server, server]
        assert trace.messages["session"].to_list() == [f"{server}#0"] * 2
        assert trace.calls["latency_ms"].to_list() == [4.0]


def test_label_change_and_preamble(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            "2026-02-01 08:59:59.000 [warning] Extension host shut down, server will stop.",
            "2026-02-01 09:00:00.000 [info] Starting server octo",
            "2026-02-01 09:00:00.010 [info] Starting server from Remote extension host",
            "2026-02-01 09:05:00.000 [info] Stopping server octo",
            "2026-02-01 09:05:01.000 [info] Starting server GitHub",
            "2026-02-01 09:06:00.000 [info] Starting server octo",
        ],
        "mcpServer.mcp.config.usrlocal.github.log",
    )
    m = _load(path).messages
    # the preamble is named by the first Starting line: the file holds one server
    assert m["session"].to_list() == [
        "octo#0", "octo#1", "octo#1", "octo#1", "GitHub#1", "octo#2",
    ]  # fmt: skip
    assert m["server"].to_list() == ["octo"] * 4 + ["GitHub", "octo"]


def test_a_server_reached_over_http_is_no_stdio_server(write_lines: WriteLines) -> None:
    # microsoft/vscode#246753 (1.100): the SSE fallback; what VS Code failed to parse came
    # from the event stream, not from a stdout: no ST001, and no ST002 for a cut line
    path = write_lines(
        [
            "2025-04-16 14:13:05.400 [info] Starting server weather",
            "2025-04-16 14:13:05.469 [info] 405 status sending message to "
            "http://localhost:19193/sse, will attempt to fall back to legacy SSE",
            '2025-04-16 14:13:05.500 [warning] Failed to parse message: "/messages/?session_id=7f"',
            '2025-04-16 14:13:05.600 [debug] [editor -> server] {"jsonrpc":"2.0","id":1,"meth',
        ]
    )
    trace = _load(path)
    assert trace.messages["transport"].cast(pl.String).unique().to_list() == ["http"]
    assert trace.messages["parse_error"][2] == (
        "the server sent text that is not JSON (invalid JSON: unexpected character, expected "
        "a JSON value: line 1 column 1 (char 0))"
    )
    found = mcptrace.lint(trace)
    assert set(found["code"].to_list()) == {"JR014"}
    # on stdio, the same unparsed text is the server's stdout pollution, the cut line not
    stdio_lines = [ln for i, ln in enumerate(path.read_text().splitlines()) if i != 1]
    trace = _load(write_lines(stdio_lines, "stdio-server.log"))
    found = mcptrace.lint(trace)
    assert found.select("line", "code").rows() == [(2, "ST001"), (3, "JR014")]


def test_vscode_s_own_mcp_lines_make_a_log_known(write_lines: WriteLines) -> None:
    # bitovi/cascade-mcp specs/043-timeout.md: a log holding none of the usual lines
    path = write_lines(
        [
            "2026-01-29 10:30:16.056 [info] Analyzing Figma: 3 screen(s)",
            "2026-01-29 10:31:11.266 [info] Error reading from async stream, we will "
            "reconnect: TypeError: terminated",
        ]
    )
    trace = _load(path)
    assert trace.sources["format"].to_list() == ["vscode"]
    assert trace.messages["transport"].cast(pl.String).unique().to_list() == ["http"]
