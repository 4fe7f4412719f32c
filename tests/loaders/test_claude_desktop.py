"""The Claude Desktop loader: mcp.log and mcp-server-NAME.log, on the samples and inline logs."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from factories import SAMPLES, WriteLines
from polars.testing import assert_frame_equal

import mcptrace
from mcptrace.loaders import claude_desktop, detect, stdio, vscode
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS

PER_SERVER = SAMPLES / "claude-desktop" / "mcp-server-weather.log"
AGGREGATE = SAMPLES / "claude-desktop" / "mcp.log"
TRAILER = " { metadata: undefined }"

INIT = (
    '{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
    '"clientInfo":{"name":"claude-ai","version":"0.1.0"}},"jsonrpc":"2.0","id":0}'
)
INIT_RESULT = (
    '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},'
    '"serverInfo":{"name":"s","version":"1"}}}'
)


def _kinds(m: pl.DataFrame) -> list[str]:
    return m["kind"].cast(pl.String).to_list()


def _by_line(m: pl.DataFrame, line: int) -> dict[str, object]:
    return m.filter(pl.col("line") == line).row(0, named=True)


def _load(path: Path) -> mcptrace.Trace:
    trace = mcptrace.load(path)
    MESSAGES.validate(trace.messages)
    CALLS.validate(trace.calls)
    SESSIONS.validate(trace.sessions)
    return trace


# -- detection -------------------------------------------------------------------


@pytest.mark.parametrize("sample", [PER_SERVER, AGGREGATE])
def test_detected_by_content_not_name(sample: Path, tmp_path: Path) -> None:
    neutral = tmp_path / "x.txt"
    shutil.copy(sample, neutral)
    assert detect(read_content(neutral)) == "claude-desktop"
    trace = _load(neutral)
    assert trace.sources["format"].to_list() == ["claude-desktop"]


def test_sniff_leaves_other_formats_alone(write_lines: WriteLines) -> None:
    vs = make_head(read_content(SAMPLES / "vscode" / "mcp-github.log"))
    assert claude_desktop.sniff(vs) == 0
    ours = make_head(read_content(PER_SERVER))
    assert vscode.sniff(ours) == 0
    assert stdio.sniff(ours) == 0
    ndjson = write_lines([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
    assert claude_desktop.sniff(make_head(read_content(ndjson))) == 0
    # a Node app log of the same shape but without any Claude Desktop marker is not claimed
    other = write_lines(["2026-01-12T09:41:03.518Z [api] [info] listening on :8080"] * 3)
    assert claude_desktop.sniff(make_head(read_content(other))) < 40


# -- the per-server sample ----------------------------------------------------------


def test_per_server_sample_rows_sessions_and_stderr() -> None:
    trace = _load(PER_SERVER)
    m = trace.messages
    lines = PER_SERVER.read_bytes().count(b"\n")
    assert m.height == lines == 93
    assert m["line"].to_list() == list(range(1, 94))
    assert trace.sources.row(0, named=True)["lines"] == 93
    assert set(m["server"].to_list()) == {"weather"}
    assert set(m["transport"].cast(pl.String).to_list()) == {"stdio"}
    counts = dict(m.group_by("session").len().iter_rows())
    assert counts == {"weather#1": 42, "weather#2": 51}
    assert _by_line(m, 42)["session"] == "weather#1"
    assert _by_line(m, 43)["session"] == "weather#2"  # Initializing server... starts #2
    stderr = m.filter(pl.col("kind") == "stderr")
    assert stderr["line"].to_list() == [
        4, 10, 11, 12, 17, 18, 20, 23, 26, 29, 30, 31, 32, 33, 34, 35, 36, 37,
        65, 71, 72, 73, 74, 79, 80, 83, 84, 92,
    ]  # fmt: skip
    # server stderr has no time of its own; it belongs to the latest launch
    assert stderr["ts"].null_count() == stderr.height
    assert set(stderr["ts_quality"].cast(pl.String).to_list()) == {"none"}
    assert stderr.filter(pl.col("line") == 92)["session"].item() == "weather#2"
    # the Python traceback: one stderr row per line, text kept verbatim
    tb = stderr.filter(pl.col("line").is_between(31, 37))
    assert tb["message"].to_list()[0] == "Traceback (most recent call last):"
    assert tb["message"].to_list()[-1] == "KeyError: '47.61,-122.33'"
    assert tb["message"].to_list()[5] == "           ~~~~~~~~~~~^^^^^"


def test_per_server_command_dump_is_one_log_record() -> None:
    m = _load(PER_SERVER).messages
    dump = m.filter(pl.col("line").is_between(44, 62))
    assert set(_kinds(dump)) == {"log"}
    assert set(dump["session"].to_list()) == {"weather#2"}
    # continuation lines carry the time of the record they belong to
    assert dump["ts"].n_unique() == 1
    assert set(dump["ts_quality"].cast(pl.String).to_list()) == {"exact"}
    assert dump["message"][0].startswith("Using MCP server command: /Users/dana/.local/bin/uv")
    assert dump["message"][-1] == "} %o"
    # the Rich-wrapped stderr after the dump is stderr again
    assert _by_line(m, 71)["kind"] == "stderr"


def test_per_server_messages_trailer_and_truncation() -> None:
    m = _load(PER_SERVER).messages
    init = _by_line(m, 64)
    assert init["kind"] == "request"
    assert init["method"] == "initialize"
    assert init["direction"] == "c2s"
    assert init["message"] == INIT  # the JSON part, trailer stripped
    assert init["raw"].endswith(TRAILER)
    assert init["parse_error"] is None
    assert init["protocol_version"] == "2025-11-25"
    # host lines keep their text as written (the trailer is only stripped from messages)
    assert _by_line(m, 43)["message"] == "Initializing server..." + TRAILER
    assert _by_line(m, 1)["message"] == "Initializing server..."
    # the cut fell inside one string: still a valid response, with a warning
    cut = _by_line(m, 81)
    assert cut["kind"] == "response"
    assert cut["id"] == "4"
    assert "cut 2573 characters" in cut["parse_error"]
    assert "[2573 chars truncated]" in cut["message"]
    assert not cut["message"].endswith(TRAILER)
    assert (m["kind"] == "invalid").sum() == 0


def test_per_server_calls_are_paired_per_session() -> None:
    trace = _load(PER_SERVER)
    calls = trace.calls
    got = calls.select("session", "id", "method", "outcome", "latency_ms").rows()
    assert got[:8] == [
        ("weather#1", "0", "initialize", "ok", 763.0),
        ("weather#1", "1", "tools/list", "ok", 9.0),
        ("weather#1", "2", "prompts/list", "ok", 9.0),
        ("weather#1", "3", "resources/list", "ok", 10.0),
        ("weather#1", "4", "tools/call", "ok", 834.0),
        ("weather#1", "5", "tools/call", "tool_error", 4.0),
        ("weather#1", "6", "tools/call", "error", 4.0),
        ("weather#1", "7", "tools/call", "unanswered", None),
    ]
    assert got[8] == ("weather#2", "0", "initialize", "ok", 816.0)
    assert calls.filter(pl.col("session") == "weather#2")["outcome"].to_list() == ["ok"] * 8
    assert set(calls["direction"].cast(pl.String).to_list()) == {"c2s"}
    s = trace.sessions.sort("session")
    assert s.select("session", "revision", "client_name", "server_name").rows() == [
        ("weather#1", "2025-06-18", "claude-ai", "weather"),
        ("weather#2", "2025-11-25", "claude-ai", "weather"),
    ]


# -- the mcp.log sample -----------------------------------------------------------------


def test_aggregate_sample_sessions_per_server() -> None:
    trace = _load(AGGREGATE)
    m = trace.messages
    assert m.height == 55
    assert m["line"].to_list() == list(range(1, 56))
    assert (m["kind"] == "stderr").sum() == 0  # mcp.log has no server stderr
    counts = dict(m.group_by("session").len().iter_rows())
    assert counts == {"notes#1": 22, "weather#1": 33}
    assert dict(zip(m["session"], m["server"], strict=True)) == {
        "notes#1": "notes",
        "weather#1": "weather",
    }
    # the mcp.log form of the dump (no metadata wrapper, ends with `}`): log rows of weather
    dump = m.filter(pl.col("line").is_between(4, 14))
    assert set(_kinds(dump)) == {"log"}
    assert set(dump["session"].to_list()) == {"weather#1"}
    assert dump["message"][-1] == "}"
    assert _by_line(m, 15)["message"] == "Server started and connected successfully"
    # [level] [server]: the level is never taken for the server
    assert "info" not in m["server"].to_list()


def test_aggregate_sample_pairs_interleaved_servers() -> None:
    calls = _load(AGGREGATE).calls
    notes = calls.filter(pl.col("session") == "notes#1")
    assert notes.select("id", "method", "outcome", "latency_ms").rows() == [
        ("0", "initialize", "ok", 221.0),
        ("1", "tools/list", "ok", 6.0),
        ("2", "prompts/list", "error", 6.0),
        ("3", "resources/list", "error", 6.0),
        ("4", "tools/call", "ok", 46.0),
        ("5", "tools/call", "ok", 67341.0),  # answered after the host gave up
        ("6", "resources/list", "error", 2.0),
    ]
    late = notes.filter(pl.col("id") == "5").row(0, named=True)
    assert late["cancelled"] is True
    assert late["cancel_line"] == 42
    weather = calls.filter(pl.col("session") == "weather#1")
    assert weather.filter(pl.col("id") == "0")["latency_ms"].item() == 816.0
    assert weather.height == 8
    assert weather["outcome"].to_list() == ["ok"] * 8


# -- inline logs ----------------------------------------------------------------------


def test_both_field_orders_and_the_oldest_mcp_log(write_lines: WriteLines) -> None:
    per_server = write_lines(
        [
            "2025-03-01T10:00:00.000Z [my server (ext)] [info] Initializing server...",
            f"2025-03-01T10:00:00.010Z [my server (ext)] [info] Message from client: {INIT}",
        ],
        "a.log",
    )
    aggregate = write_lines(
        [
            "2025-03-01T10:00:00.000Z [info] [my server (ext)] Initializing server...",
            f"2025-03-01T10:00:00.010Z [info] [my server (ext)] Message from client: {INIT}",
        ],
        "b.log",
    )
    for path in (per_server, aggregate):
        m = _load(path).messages
        assert m["server"].to_list() == ["my server (ext)"] * 2
        assert m["session"].to_list() == ["my server (ext)#1"] * 2
        assert _kinds(m) == ["log", "request"]
    oldest = write_lines(
        [
            "2024-12-02T10:00:00.000Z [info] Attempting to connect to MCP server weather...",
            "2024-12-02T10:00:00.200Z [info] Connected to MCP server weather!",
            "2024-12-02T10:05:00.000Z [error] Error in MCP connection to server weather: boom",
            "2024-12-02T10:06:00.000Z [info] Attempting to connect to MCP server weather...",
        ],
        "mcp.log",
    )
    m = _load(oldest).messages
    assert m["session"].to_list() == ["weather#1"] * 3 + ["weather#2"]
    assert m["server"].to_list() == ["weather"] * 4
    assert m["message"][2] == "Error in MCP connection to server weather: boom"


def test_oldest_mcp_log_lines_name_their_own_server(write_lines: WriteLines) -> None:
    # Claude Desktop 2024-11/12 (modelcontextprotocol/servers#106, #405): the launches
    # of all servers interleave, and this file logs no messages, so a relaunch days
    # later (the app restarted) is no overlap
    path = write_lines(
        [
            "2024-11-28T09:27:43.719Z [info] Attempting to connect to MCP server neo4j...",
            "2024-11-28T09:27:43.720Z [info] Attempting to connect to MCP server memory...",
            "2024-11-28T09:27:43.731Z [info] Connected to MCP server neo4j!",
            "2024-11-28T09:27:43.734Z [info] Connected to MCP server memory!",
            "2024-11-28T09:30:00.000Z [info] MCP server neo4j disconnected. For "
            "troubleshooting guidance, please visit our [debugging documentation]"
            "(https://modelcontextprotocol.io/docs/tools/debugging)",
            "2024-11-30T08:00:00.000Z [info] Attempting to connect to MCP server memory...",
        ],
        "mcp.log",
    )
    trace = _load(path)
    m = trace.messages
    assert m["server"].to_list() == ["neo4j", "memory", "neo4j", "memory", "neo4j", "memory"]
    assert m["session"].to_list() == [
        "neo4j#1",
        "memory#1",
        "neo4j#1",
        "memory#1",
        "neo4j#1",
        "memory#2",
    ]
    assert trace.sources["note"][0] is None


def test_levels_are_recognised_by_value_not_position(write_lines: WriteLines) -> None:
    # the first line fixes the order; a server literally named "debug" stays a server
    path = write_lines(
        [
            "2025-07-01T10:00:00.000Z [info] [weather] Initializing server...",
            "2025-07-01T10:00:00.000Z [info] [debug] Initializing server...",
            "2025-07-01T10:00:01.000Z [warn] [debug] Server transport closed",
        ]
    )
    m = _load(path).messages
    assert m["server"].to_list() == ["weather", "debug", "debug"]
    assert m["session"].to_list() == ["weather#1", "debug#1", "debug#1"]


def test_truncated_json_is_an_invalid_row_with_position(write_lines: WriteLines) -> None:
    body = (
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"Lo'
        "...[11759 chars truncated]..."
        'nputSchema":{"type":"object"}}]}}'
    )
    path = write_lines(
        [
            "2026-03-01T10:00:00.000Z [big] [info] Initializing server..." + TRAILER,
            '2026-03-01T10:00:00.100Z [big] [info] Message from client: {"method":"tools/list",'
            '"params":{},"jsonrpc":"2.0","id":1}' + TRAILER,
            f"2026-03-01T10:00:00.300Z [big] [info] Message from server: {body}" + TRAILER,
        ],
        "mcp-server-big.log",
    )
    trace = _load(path)
    row = _by_line(trace.messages, 3)
    assert row["kind"] == "invalid"
    assert row["direction"] == "s2c"
    assert row["message"] == body
    assert row["parse_error"].startswith(
        "Claude Desktop cut 11759 characters from the middle of this message (at char 72); "
        "invalid JSON"
    )
    assert "char" in row["parse_error"].split("invalid JSON", 1)[1]
    assert trace.sources["invalid"].to_list() == [1]
    assert "cut in the middle" in trace.sources["note"][0]
    assert trace.calls["outcome"].to_list() == ["unanswered"]


def test_content_less_summary_lines_are_reconstructed(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            "2026-08-01T10:00:00.000Z [info] [files] Initializing server...",
            '2026-08-01T10:00:00.100Z [info] [files] Message from client: method="initialize" id=0'
            " params",
            "2026-08-01T10:00:00.300Z [info] [files] Message from server: id=0 result",
            '2026-08-01T10:00:00.301Z [info] [files] Message from client: method="notifications/'
            'initialized"',
            '2026-08-01T10:00:01.000Z [info] [files] Message from client: method="tools/call" id=2'
            " params",
            "2026-08-01T10:00:01.250Z [info] [files] Message from server: id=2 result(1 blocks)",
            '2026-08-01T10:00:02.000Z [info] [files] Message from client: method="tools/call"'
            ' id="a b" params',
            '2026-08-01T10:00:02.500Z [info] [files] Message from server: id="a b" error',
        ]
    )
    trace = _load(path)
    m = trace.messages
    assert _kinds(m) == [
        "log", "request", "response", "notification", "request", "response", "request", "error",
    ]  # fmt: skip
    assert m["id"].to_list() == [None, "0", "0", None, "2", "2", '"a b"', '"a b"']
    assert m["id_type"].cast(pl.String).to_list()[4:] == ["integer"] * 2 + ["string"] * 2
    assert m["method"].to_list()[1:5] == [
        "initialize",
        None,
        "notifications/initialized",
        "tools/call",
    ]
    assert m["message"][4] == '{"jsonrpc":"2.0","id":2,"method":"tools/call"}'
    notes = m["parse_error"].to_list()
    assert notes[0] is None
    assert set(notes[1:]) == {
        "content not logged by Claude Desktop; reconstructed from the summary line"
    }
    assert "reconstructed" in trace.sources["note"][0]
    calls = trace.calls
    assert calls.select("id", "method", "outcome", "latency_ms").rows() == [
        ("0", "initialize", "ok", 200.0),
        ("2", "tools/call", "ok", 250.0),
        ('"a b"', "tools/call", "error", 500.0),
    ]


def test_rows_before_any_launch_and_unnamed_files(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            "leftover stderr from an earlier run",
            "2026-01-12T09:00:00.000Z [weather] [info] Client transport closed",
            "2026-01-12T09:00:01.000Z [weather] [info] Initializing server...",
            "ready",
        ],
        "mcp-server-weather.log",
    )
    m = _load(path).messages
    assert _kinds(m) == ["stderr", "log", "log", "stderr"]
    assert m["session"].to_list() == ["weather#0", "weather#0", "weather#1", "weather#1"]
    assert m["server"].to_list() == ["weather"] * 4
    # only stderr and nothing else: the file name still names the server
    only_stderr = write_lines(["Traceback (most recent call last):", "  boom"], "mcp-server-x.log")
    m = mcptrace.load(only_stderr, format="claude-desktop").messages
    assert m["session"].to_list() == ["x#0", "x#0"]
    assert _kinds(m) == ["stderr", "stderr"]
    unnamed = write_lines(["just text"], "capture.log")
    m = mcptrace.load(unnamed, format="claude-desktop").messages
    assert m["session"].to_list() == ["capture"]
    assert m["server"].to_list() == [None]


def test_overlapping_launches_go_to_the_newer_session(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            "2025-04-01T10:00:00.000Z [dup] [info] Initializing server...",
            "2025-04-01T10:00:00.020Z [dup] [info] Server started and connected successfully",
            "2025-04-01T10:00:00.400Z [dup] [info] Initializing server...",
            "2025-04-01T10:00:00.420Z [dup] [info] Server started and connected successfully",
            f"2025-04-01T10:00:00.500Z [dup] [info] Message from client: {INIT}",
            f"2025-04-01T10:00:00.510Z [dup] [info] Message from client: {INIT}",
            f"2025-04-01T10:00:00.900Z [dup] [info] Message from server: {INIT_RESULT}",
            f"2025-04-01T10:00:00.950Z [dup] [info] Message from server: {INIT_RESULT}",
            "2025-04-01T10:10:00.000Z [dup] [info] Initializing server...",
        ]
    )
    trace = _load(path)
    m = trace.messages
    assert m["session"].to_list() == ["dup#1"] * 2 + ["dup#2"] * 6 + ["dup#3"]
    note = trace.sources["note"][0]
    assert "launched again at line 3 before the launch at line 1 exchanged any message" in note
    # the later relaunch (after traffic) is an ordinary new session: no second note
    assert note.count("launched again") == 1
    assert m.filter(pl.col("kind") == "request")["id"].to_list() == ["0", "0"]


def test_relaunch_after_an_early_crash_is_no_overlap(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            "2025-04-01T10:00:00.000Z [w] [info] Initializing server...",
            "Usage: w [OPTIONS]",
            "2025-04-01T10:00:00.300Z [w] [info] Server transport closed",
            "2025-04-01T10:00:00.301Z [w] [error] Server disconnected. For troubleshooting "
            "guidance, please visit our [debugging documentation](https://x) "
            '{"context":"connection"}',
            "2025-04-01T10:00:03.000Z [w] [info] Initializing server...",
        ]
    )
    trace = _load(path)
    assert trace.messages["session"].to_list() == ["w#1"] * 4 + ["w#2"]
    assert trace.messages["message"][3].endswith('{"context":"connection"}')
    assert trace.sources["note"].to_list() == [None]


def test_multi_line_error_trailer_is_not_stderr(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            "2026-02-01T10:00:00.000Z [w] [info] Initializing server..." + TRAILER,
            "2026-02-01T10:00:01.000Z [w] [error] Server disconnected. For troubleshooting "
            "guidance, please visit our [debugging documentation](https://x) {",
            "  metadata: { context: 'connection', stack: undefined }",
            "} %o",
            "npm warn exec The following package was not found",
            "",
        ],
        "mcp-server-w.log",
    )
    m = _load(path).messages
    assert _kinds(m) == ["log", "log", "log", "log", "stderr", "blank"]
    assert m["ts"][2] == m["ts"][1]
    assert m["ts"][4] is None
    assert set(m["session"].to_list()) == {"w#1"}


def _edge_log() -> bytes:
    ts = "2026-01-12T09:41:03.561Z"
    host = f"{ts} [weather] [info]"
    lines = [
        f"{host} Initializing server...",
        f"{host} Message from client: {INIT}{TRAILER}",
        f"{host} Message from server: {INIT_RESULT}",
        # not compact: the scanner leaves these to the Python path, which keeps the text
        f'{host} Message from client: {{"method": "tools/list", "jsonrpc": "2.0", "id": 1}}',
        f'{host} Message from client: [{{"jsonrpc":"2.0","id":2,"method":"ping"}},'
        '{"jsonrpc":"2.0","method":"notifications/initialized"}]',
        f'{host} Message from server: {{"jsonrpc":"2.0","id":2,"result":{{"t":"h\\u00e9 ☃"}}}}',
        f"{host} Message from server: "
        '{"jsonrpc":"2.0","id":99999999999999999999999,"result":{}}',
        f'{host} Message from client: {{"jsonrpc":"2.0","id":3,"method":',
        f'{host} Message from client: {{"jsonrpc":"2.0","id":3,...[12 chars truncated]...}}',
        f'{host} Message from client: method="tools/call" id=4 params',
        f"{host} Message from server: id=4 result(1 blocks)",
        "plain stderr of the server",
        "",
        f"{host} Message from server: "
        '{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"m"}}',
    ]
    body = "\n".join(lines).encode() + b"\n"
    # a message line whose bytes are not UTF-8
    return (
        body
        + f"{host} Message from client: ".encode()
        + b'{"jsonrpc":"2.0","id":"\xff","method":"x"}\n'
    )


@pytest.mark.parametrize("which", ["per-server", "aggregate", "edge"])
def test_the_scanner_path_gives_the_python_paths_rows(
    which: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # message lines are parsed together by the C scanner once the file is read; the rows
    # must be those the Python path makes, line by line
    from mcptrace.loaders import accel

    if not accel.available():
        pytest.skip("the C scanner is not built")
    if which == "edge":
        path = tmp_path / "mcp-server-weather.log"
        path.write_bytes(_edge_log())
    else:
        path = PER_SERVER if which == "per-server" else AGGREGATE
    fast = mcptrace.load(path).messages
    monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1")
    assert not accel.available()
    pure = mcptrace.load(path).messages
    assert_frame_equal(fast, pure)
    assert fast["line"].is_sorted()
    if which == "edge":
        assert set(_kinds(fast)) >= {"request", "response", "error", "invalid", "stderr"}
