"""The MCPJam Inspector loader: web log downloads and the CLI's ``_rpcLogs``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, err, initialize, initialize_result, note, req, res

import mcptrace
from mcptrace.analysis import latency
from mcptrace.loaders import FORMATS, detect, inspector, mcpjam, stdio
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS

WEB = SAMPLES / "mcpjam" / "json-rpc-logs-2026-05-04T10-16-09-270Z.json"
CLI = SAMPLES / "mcpjam" / "mcpjam-cli-tools-call.json"
INIT = initialize("2025-11-25", client=("mcpjam-inspector", "2.4.1"))
INIT_RESULT = initialize_result("2025-11-25", server=("notes", "1.0.0"))


def item(ms: int, direction: str, payload: Any, *, server: str = "notes", **extra: Any) -> dict:
    """One item of the web download, as ``serializeLogs`` writes it."""
    out: dict[str, Any] = {
        "timestamp": f"2026-05-04T10:00:{ms // 1000:02d}.{ms % 1000:03d}Z",
        "source": "mcp-server",
        "serverId": server,
        "direction": direction,
        "method": "x",
        "payload": payload,
    }
    out.update(extra)
    return out


def web(tmp_path: Path, items: list[Any], name: str = "json-rpc-logs.json") -> Path:
    """Write items newest first, pretty-printed like ``JSON.stringify(_, null, 2)``."""
    path = tmp_path / name
    path.write_text(json.dumps(items, indent=2))
    return path


def kinds(df: pl.DataFrame) -> list[str]:
    return df["kind"].cast(pl.String).to_list()


def entry_lines(path: Path) -> list[int]:
    """Lines where the download's entries start (``  {``), in file order."""
    return [i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln == "  {"]


def test_web_sample_is_detected_from_content_and_put_in_time_order(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    shutil.copy(WEB, path)
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["detected"], src["lines"], src["rows"], src["invalid"]) == (
        "mcpjam",
        "content",
        549,
        27,
        0,
    )
    assert src["note"] == "the export lists the newest entry first: rows are in time order"
    # newest first in the file: the rows run backwards through it, one per entry
    assert m["line"].to_list() == entry_lines(WEB)[::-1]
    assert m["ts"].is_sorted()
    assert str(m["ts"][0]) == "2026-05-04 10:15:22.481000+00:00"
    assert m["ts_quality"].cast(pl.String).unique().to_list() == ["exact"]
    assert kinds(m)[:4] == ["request", "response", "notification", "request"]
    assert m["session"].unique(maintain_order=True).to_list() == ["weather#1", "linear#1"]
    assert m["server"].unique(maintain_order=True).to_list() == ["weather", "linear"]
    # SEND is the Inspector (the client) sending
    first = m.row(0, named=True)
    assert (first["direction"], first["method"], first["id"]) == ("c2s", "initialize", "0")
    assert not m["direction_inferred"].any()
    # the HTTP exchange items: transport rows, and the session is known to be HTTP
    http = m.filter(pl.col("kind") == "transport")
    assert http["http_status"].to_list() == [200, 202, 200]
    assert http["http_method"].unique().to_list() == ["POST"]
    assert http["message"][1] == "POST https://mcp.linear.example/mcp -> 202"
    headers = orjson.loads(http["http_headers"][1])
    assert headers["mcp-protocol-version"] == "2025-11-25"
    assert headers["authorization"] == "Bearer <redacted>"
    by_session = m.group_by("session").agg(pl.col("transport").cast(pl.String).unique())
    transports = dict(zip(*by_session.to_dict(as_series=False).values(), strict=True))
    assert transports == {"weather#1": ["unknown"], "linear#1": ["http"]}
    SESSIONS.validate(trace.sessions)
    assert trace.sessions.select("session", "revision", "client_name", "server_name").rows() == [
        ("weather#1", "2025-11-25", "mcpjam-inspector", "weather-server"),
        ("linear#1", "2025-11-25", "mcpjam-inspector", "linear-mcp"),
    ]


def test_web_sample_calls_and_latency() -> None:
    trace = mcptrace.load(WEB)
    calls = trace.calls
    CALLS.validate(calls)
    got = calls.select("session", "direction", "id", "method", "target", "latency_ms", "outcome")
    assert got.rows() == [
        ("weather#1", "c2s", "0", "initialize", None, 412.0, "ok"),
        ("weather#1", "c2s", "1", "tools/list", None, 27.0, "ok"),
        ("weather#1", "c2s", "2", "resources/list", None, 18.0, "ok"),
        ("linear#1", "c2s", "0", "initialize", None, 286.0, "ok"),
        ("weather#1", "c2s", "3", "tools/call", "get_forecast", 884.0, "ok"),
        ("linear#1", "c2s", "1", "tools/call", "search_issues", 1221.0, "ok"),
        ("weather#1", "c2s", "4", "tools/call", "get_alerts", 31.0, "tool_error"),
        ("weather#1", "c2s", "5", "tools/call", "get_alerts", 771.0, "ok"),
        ("weather#1", "c2s", "6", "resources/read", "weather://stations/KPDX", 23.0, "error"),
        ("weather#1", "s2c", "0", "ping", None, 1.0, "ok"),
    ]
    assert calls.filter(pl.col("outcome") == "error")["error_code"].to_list() == [-32002]
    # a request's line is after its response's in a newest-first file
    initialize = calls.row(0, named=True)
    assert initialize["request_line"] > initialize["response_line"]
    stats = latency(trace, by="tool")
    assert stats["tool"].to_list() == ["get_alerts", "get_forecast", "search_issues"]
    assert stats.filter(pl.col("tool") == "get_alerts")["count"].item() == 2
    assert stats.filter(pl.col("tool") == "get_forecast")["p50"].item() == pytest.approx(884.0)


def test_cli_rpc_logs() -> None:
    trace = mcptrace.load(CLI)
    m = trace.messages
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["lines"], src["rows"], src["note"]) == ("mcpjam", 1, 5, None)
    assert m["line"].unique().to_list() == [1]
    target = "https://mcp.linear.example/mcp"
    assert m["server"].unique().to_list() == [target]
    assert m["session"].unique().to_list() == [f"{target}#1"]
    # the CLI's target is a URL: Streamable HTTP
    assert m["transport"].cast(pl.String).unique().to_list() == ["http"]
    assert m["direction"].cast(pl.String).to_list() == ["c2s", "s2c", "c2s", "c2s", "s2c"]
    calls = trace.calls.select("method", "target", "latency_ms", "outcome").rows()
    assert calls == [("initialize", None, 311.0, "ok"), ("tools/call", "get_issue", 557.0, "ok")]
    assert trace.sessions["client_name"].item() == "mcpjam"


def test_cli_command_target_is_stdio_and_pretty_layout_lines(tmp_path: Path) -> None:
    events = [
        {
            "serverId": "__cli__",
            "serverName": "node server.js",
            "direction": d,
            "timestamp": f"2026-05-06T08:00:0{i}.000Z",
            "message": msg,
        }
        for i, (d, msg) in enumerate(
            [("send", INIT), ("receive", INIT_RESULT), ("send", req(1, "tools/list"))]
        )
    ]
    path = tmp_path / "doctor.json"
    path.write_text(json.dumps({"status": "ready", "_rpcLogs": events}, indent=2))
    m = mcptrace.load(path).messages
    assert m["transport"].cast(pl.String).unique().to_list() == ["stdio"]
    lines = path.read_text().splitlines()
    starts = [i for i, ln in enumerate(lines, 1) if ln == "    {"]
    assert m["line"].to_list() == starts
    assert m["session"].unique().to_list() == ["node server.js#1"]


def test_sniff_scores_and_order() -> None:
    for sample in (WEB, CLI):
        head = make_head(read_content(sample))
        assert mcpjam.sniff(head) == 95
        assert inspector.sniff(head) == 0
        assert stdio.sniff(head) == 0
    inspector_head = make_head(read_content(SAMPLES / "inspector" / "inspector-export.json"))
    assert mcpjam.sniff(inspector_head) == 0
    assert list(FORMATS).index("mcpjam") < list(FORMATS).index("inspector")


def test_a_bare_array_of_cli_events_is_not_taken_for_an_inspector_export(tmp_path: Path) -> None:
    # {direction, timestamp, message} is also what the MCP Inspector's sniffer looks for
    events = [
        {"serverId": "s", "direction": "send", "timestamp": "2026-05-06T08:00:00Z", "message": INIT}
    ]
    path = tmp_path / "logs.json"
    path.write_text(json.dumps(events))
    head = make_head(read_content(path))
    assert inspector.sniff(head) == 95 and mcpjam.sniff(head) == 95
    assert detect(read_content(path)) == "mcpjam"


def test_other_sources_and_entry_problems(tmp_path: Path) -> None:
    items = [
        item(
            9000,
            "UI→HOST",
            {"jsonrpc": "2.0", "id": 1, "method": "ui/open-link"},
            source="mcp-apps",
        ),
        item(
            8000,
            "OAUTH",
            {"step": "discovery", "status": "success"},
            source="oauth",
            method="Discovery",
        ),
        item(
            7000,
            "HTTP",
            {
                "request": {"method": "POST", "url": "http://x/mcp", "headers": {}},
                "error": "ECONNRESET",
            },
            source="http",
        ),
        item(6000, "SIDEWAYS", note("notifications/initialized")),
        item(5000, "RECEIVE", "not an object"),
        {
            "source": "mcp-server",
            "serverId": "notes",
            "direction": "SEND",
            "payload": req(2, "ping"),
        },
        item(3000, "SEND", INIT),
        item(2000, "RECEIVE", [res(7), res(8)]),
        ["not", "an", "entry"],
        item(1000, "SEND", req(9, "tools/list")),
    ]
    trace = mcptrace.load(web(tmp_path, items), format="mcpjam")
    m = trace.messages
    MESSAGES.validate(m)
    # every entry is a row (the batch two): nothing dropped
    assert m.height == 11
    # time order; entries without a time stay after the entry before them in the file
    assert kinds(m) == [
        "request", "invalid", "response", "response", "request", "request", "invalid",
        "notification", "transport", "log", "log",
    ]  # fmt: skip
    errors = m["parse_error"].to_list()
    assert errors[1] == "MCPJam log entry is a JSON array, not an object"
    assert m["batch_index"].to_list()[2:4] == [0, 1]
    assert errors[5] == "entry without a `timestamp`"
    assert m["ts"][5] is None
    assert errors[6] == "the message is a JSON string, not an object"
    assert m["direction"][7] == "unknown" and errors[7] == 'unknown `direction` "SIDEWAYS"'
    assert m["message"][8] == "POST http://x/mcp (error: ECONNRESET)"
    assert m["message"][9] == 'Discovery: {"step":"discovery","status":"success"}'
    assert errors[10] == "MCP Apps view/host message (UI→HOST), not server traffic"
    # the initialize starts notes#1; traffic before it is notes#0
    assert m["session"].to_list() == ["notes#0"] * 4 + ["notes#1"] * 7
    assert mcptrace.load(web(tmp_path, items), format="mcpjam").sources["invalid"].item() == 2


def test_newest_first_ties_keep_the_order_they_happened_in(tmp_path: Path) -> None:
    # the UI prepends each new item, so for equal times the later one comes first
    items = [
        item(2000, "RECEIVE", res(1)),
        item(1000, "SEND", req(1, "tools/list")),
        item(1000, "RECEIVE", INIT_RESULT),
        item(0, "SEND", INIT),
    ]
    m = mcptrace.load(web(tmp_path, items)).messages
    assert m["id"].to_list() == ["0", "0", "1", "1"]
    assert kinds(m) == ["request", "response", "request", "response"]
    assert m["line"].to_list() == entry_lines(tmp_path / "json-rpc-logs.json")[::-1]


def test_oldest_first_files_keep_their_order(tmp_path: Path) -> None:
    items = [item(0, "SEND", INIT), item(10, "RECEIVE", INIT_RESULT), item(10, "SEND", note("x"))]
    trace = mcptrace.load(web(tmp_path, items))
    assert trace.messages["line"].to_list() == entry_lines(tmp_path / "json-rpc-logs.json")
    assert trace.sources["note"].item() is None


def test_a_full_log_is_marked_truncated(tmp_path: Path) -> None:
    items = [item(i, "SEND", req(i, "ping")) for i in range(mcpjam.MAX_ITEMS)][::-1]
    src = mcptrace.load(web(tmp_path, items)).sources.row(0, named=True)
    assert src["truncated"] is True
    assert "keeps the latest 1,000 items" in src["note"]


def test_bad_documents_are_invalid_rows_not_exceptions(tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_text('[\n  {\n    "timestamp": "2026')
    trace = mcptrace.load(cut, format="mcpjam")
    assert kinds(trace.messages) == ["invalid"]
    assert trace.messages["parse_error"][0].startswith("MCPJam log is not valid JSON: ")
    other = tmp_path / "other.json"
    other.write_text('{"content": []}')
    m = mcptrace.load(other, format="mcpjam").messages
    assert m["parse_error"][0] == (
        "MCPJam log is an object without an `_rpcLogs` array, not a list of log entries"
    )
    empty = tmp_path / "empty.json"
    empty.write_text("")
    assert mcptrace.load(empty, format="mcpjam").messages.height == 0


def test_value_lines_finds_nested_values() -> None:
    data = b'{\n  "a": [\n    1,\n    {"b": 2},\n    [3]\n  ],\n  "c": "x, y"\n}'
    lines = mcpjam.value_lines(data, 2)
    assert lines[()] == 1
    assert lines[("a",)] == 2
    assert [lines[("a", i)] for i in range(3)] == [3, 4, 5]
    assert lines[("c",)] == 7
    assert ("a", 1, "b") not in lines


def test_error_responses_and_ids(tmp_path: Path) -> None:
    items = [
        item(30, "RECEIVE", err("5", -32601, "Method not found")),
        item(20, "SEND", req("5", "prompts/list")),
        item(10, "RECEIVE", INIT_RESULT),
        item(0, "SEND", INIT),
    ]
    calls = mcptrace.load(web(tmp_path, items)).calls
    assert calls.select("id", "id_type", "outcome", "error_code").rows() == [
        ("0", "integer", "ok", None),
        ('"5"', "string", "error", -32601),
    ]
