"""The MCPSpy loader: eBPF-captured MCP events, one JSON object per line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, WriteLines, err, note, req, res

import mcptrace
from mcptrace import _json
from mcptrace.analysis import latency
from mcptrace.loaders import FORMATS, claude_code, mcpspy, stdio
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS

SAMPLE = SAMPLES / "mcpspy" / "mcpspy-2026-03-17.jsonl"
STDIO = "claude:31877->weather-server:31902"
HTTP = "claude:31877->mcp.linear.example"
CLIENT, SERVER = (4100, "node"), (4122, "notes-server")


def event(
    msg: Any,
    sec: float,
    *,
    pids: tuple[tuple[int, str], tuple[int, str]] | None = (CLIENT, SERVER),
    http: dict[str, Any] | None = None,
    raw: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """One MCPEvent as MCPSpy's JSONL writer marshals it (``pids``: from, to)."""
    out: dict[str, Any] = {
        "timestamp": f"2026-03-17T14:00:{sec:09.6f}123+02:00",
        "transport_type": "http" if http is not None else "stdio",
    }
    if http is not None:
        out["http_transport"] = http
    elif pids is not None:
        (a, a_comm), (b, b_comm) = pids
        out["stdio_transport"] = {
            "from_pid": a,
            "from_comm": a_comm,
            "to_pid": b,
            "to_comm": b_comm,
        }
    kind = (
        "request"
        if "id" in msg and "method" in msg
        else "notification"
        if "method" in msg
        else "response"
    )
    out["type"] = kind
    for key in ("id", "method", "params", "result"):
        if key in msg:
            out[key] = msg[key]
    out["error"] = msg.get("error", {})
    if raw:
        out["raw"] = _json.dumps(msg)
    out.update(extra)
    return out


def up(msg: Any, sec: float, **kw: Any) -> dict[str, Any]:
    return event(msg, sec, pids=(CLIENT, SERVER), **kw)


def down(msg: Any, sec: float, **kw: Any) -> dict[str, Any]:
    return event(msg, sec, pids=(SERVER, CLIENT), **kw)


def kinds(df: pl.DataFrame) -> list[str]:
    return df["kind"].cast(pl.String).to_list()


def test_sample_is_detected_from_content_not_name(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    shutil.copy(SAMPLE, path)
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["detected"], src["lines"], src["rows"], src["invalid"]) == (
        "mcpspy",
        "content",
        19,
        19,
        0,
    )
    assert src["note"] is None
    assert m["line"].to_list() == list(range(1, 20))
    assert m["session"].unique(maintain_order=True).to_list() == [STDIO, HTTP]
    stdio_rows = m.filter(pl.col("session") == STDIO)
    http_rows = m.filter(pl.col("session") == HTTP)
    assert stdio_rows["server"].unique().to_list() == ["weather-server"]
    assert stdio_rows["transport"].cast(pl.String).unique().to_list() == ["stdio"]
    assert http_rows["server"].unique().to_list() == ["mcp.linear.example"]
    assert http_rows["transport"].cast(pl.String).unique().to_list() == ["http"]
    # roles come from the initialize handshake: nothing is inferred
    assert not m["direction_inferred"].any()
    assert stdio_rows["direction"].cast(pl.String).to_list()[:5] == [
        "c2s", "s2c", "c2s", "c2s", "s2c",
    ]  # fmt: skip
    # the only header MCPSpy keeps is the request's Host; requests are POSTs
    # MCPSpy keeps the host, no header: the rows claim no headers for the HTTP rules to
    # judge (they would all be "missing"); the host is the server
    assert http_rows["http_headers"].unique().to_list() == [None]
    assert http_rows["http_method"].unique().to_list() == [None]
    assert http_rows["server"].unique().to_list() == ["mcp.linear.example"]
    assert mcptrace.lint(mcptrace.load(SAMPLE), select=["HT"]).is_empty()
    # Go's RFC 3339 with nanoseconds and a +02:00 offset, to the microsecond in UTC
    assert str(m["ts"][1]) == "2026-03-17 12:02:09.038512+00:00"
    # the message is MCPSpy's `raw` text, the bytes as sent, not its re-encoding
    line2 = orjson.loads(SAMPLE.read_text().splitlines()[1])
    assert m["message"][1] == line2["raw"]
    assert line2["error"] == {} and m["kind"][1] == "response"
    SESSIONS.validate(trace.sessions)
    assert trace.sessions.select("session", "revision", "client_name", "server_name").rows() == [
        (STDIO, "2025-06-18", "claude-code", "weather"),
        (HTTP, "2025-06-18", "claude-code", "linear-mcp"),
    ]


def test_sample_calls_and_latency() -> None:
    trace = mcptrace.load(SAMPLE)
    calls = trace.calls
    CALLS.validate(calls)
    got = calls.select(
        "session", "id", "method", "target", "request_line", "response_line", "outcome"
    )
    assert got.rows() == [
        (STDIO, "0", "initialize", None, 1, 2, "ok"),
        (STDIO, "1", "tools/list", None, 4, 5, "ok"),
        (HTTP, "0", "initialize", None, 6, 7, "ok"),
        (STDIO, "2", "tools/call", "get_forecast", 9, 11, "ok"),
        (HTTP, "1", "tools/call", "search_issues", 12, 13, "ok"),
        (STDIO, "3", "tools/call", "get_alerts", 14, 15, "tool_error"),
        (STDIO, "4", "tools/call", "get_alerts", 16, 17, "ok"),
        (STDIO, "5", "resources/read", "weather://stations/KSFO", 18, 19, "error"),
    ]
    assert calls["latency_ms"][0] == pytest.approx(38.512)
    assert calls.filter(pl.col("outcome") == "error")["error_code"].item() == -32601
    stats = latency(trace, by="tool")
    assert stats["tool"].to_list() == ["get_alerts", "get_forecast", "search_issues"]
    assert stats.filter(pl.col("tool") == "get_forecast")["p50"].item() == pytest.approx(907.325)


def test_sniff_scores() -> None:
    head = make_head(read_content(SAMPLE))
    assert mcpspy.sniff(head) == 95
    assert stdio.sniff(head) == 80  # every line has `method`/`error`: MCPSpy must win
    assert claude_code.sniff(head) == 0
    assert list(FORMATS).index("mcpspy") < list(FORMATS).index("stdio")
    other = make_head(read_content(SAMPLES / "mcpsnoop" / next(
        p.name for p in (SAMPLES / "mcpsnoop").iterdir()
    )))  # fmt: skip
    assert mcpspy.sniff(other) == 0


def test_roles_from_one_way_methods_are_marked_inferred(write_lines: WriteLines) -> None:
    call = req(3, "tools/call", {"name": "search", "arguments": {}})
    path = write_lines([down(res(2), 1.0), up(call, 2.0), down(res(3), 3.5)])
    m = mcptrace.load(path).messages
    assert m["session"].unique().to_list() == ["node:4100->notes-server:4122"]
    assert m["server"].unique().to_list() == ["notes-server"]
    assert m["direction"].cast(pl.String).to_list() == ["s2c", "c2s", "s2c"]
    assert m["direction_inferred"].to_list() == [True, True, True]


def test_a_pair_without_roles_stays_unknown_and_is_noted(write_lines: WriteLines) -> None:
    path = write_lines([up(req(1, "ping"), 1.0), down(res(1), 1.2)])
    trace = mcptrace.load(path)
    m = trace.messages
    assert m["session"].unique().to_list() == ["node:4100<->notes-server:4122"]
    assert m["server"].to_list() == [None, None]
    # ping goes both ways: the catalogue cannot settle it either
    assert m["direction"].cast(pl.String).to_list() == ["unknown", "unknown"]
    assert "1 stdio process pair(s) without an initialize" in trace.sources["note"].item()


def test_a_second_initialize_starts_a_new_session(write_lines: WriteLines) -> None:
    init = req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    host = {"pid": 900, "comm": "python3", "host": "api.example.com"}
    path = write_lines(
        [
            event(init, 1.0, http=dict(host, is_request=True)),
            event(res(0, {"protocolVersion": "2025-06-18"}), 1.1, http=host),
            event(init, 5.0, http=dict(host, is_request=True)),
            event(res(0, {"protocolVersion": "2025-06-18"}), 5.1, http=host),
        ]
    )
    trace = mcptrace.load(path)
    base = "python3:900->api.example.com"
    assert trace.messages["session"].to_list() == [base, base, f"{base}#2", f"{base}#2"]
    assert trace.calls.select("session", "outcome").rows() == [(base, "ok"), (f"{base}#2", "ok")]


def test_events_without_raw_are_rebuilt(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            up(req(1, "tools/list"), 1.0, raw=False),
            down(res(1, {"tools": []}), 1.1, raw=False),
            down(err(2, -32601, "Method not found"), 1.2, raw=False),
            up(note("notifications/initialized"), 1.3, raw=False),
            {k: v for k, v in up({}, 1.4, raw=False).items() if k != "type"},
        ]
    )
    m = mcptrace.load(path).messages
    assert kinds(m) == ["request", "response", "error", "notification", "invalid"]
    rebuilt = "no `raw` message text: rebuilt from the fields MCPSpy parsed"
    assert m["parse_error"].to_list()[:4] == [rebuilt] * 4
    assert orjson.loads(m["message"][1]) == {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    assert m["error_code"][2] == -32601
    assert m["parse_error"][4] == "MCPSpy event with neither `raw` nor a parsed message"


def test_other_mcpspy_events_are_log_rows(write_lines: WriteLines) -> None:
    call = req(7, "tools/call", {"name": "fetch", "arguments": {"url": "http://x"}})
    alert = {
        "timestamp": "2026-03-17T14:00:03.5+02:00",
        "mcp_event": up(call, 3.0),
        "risk_level": "high",
        "risk_score": 0.82,
        "category": "injection",
        "analyzed_text": "ignore previous instructions",
    }
    llm = {
        "session_id": 12,
        "timestamp": "2026-03-17T14:00:04+02:00",
        "message_type": "request",
        "pid": 4100,
        "comm": "node",
        "host": "api.anthropic.com",
        "path": "/v1/messages",
        "model": "claude-sonnet-4",
    }
    tool = {
        "session_id": 12,
        "timestamp": "2026-03-17T14:00:05+02:00",
        "usage_type": "invocation",
        "tool_name": "mcp__notes__fetch",
        "pid": 4100,
        "comm": "node",
        "host": "api.anthropic.com",
    }
    path = write_lines([up(call, 3.0), alert, llm, tool])
    trace = mcptrace.load(path)
    m = trace.messages
    assert trace.sources["format"].item() == "mcpspy"
    assert kinds(m) == ["request", "log", "log", "log"]
    assert m["message"].to_list()[1:] == [
        "security alert: high risk of injection (score 0.82) in tools/call",
        "LLM request api.anthropic.com/v1/messages model=claude-sonnet-4",
        "LLM tool invocation: mcp__notes__fetch",
    ]
    # the alert belongs to the MCP session of the message it is about
    assert m["session"][1] == m["session"][0] == "node:4100->notes-server:4122"
    assert m["session"][2] == "node:4100->api.anthropic.com"


def test_malformed_lines_are_rows_not_exceptions(tmp_path: Path) -> None:
    good = orjson.dumps(up(req(1, "tools/list"), 1.0))
    bad_raw = dict(up(req(2, "ping"), 1.5), raw='{"jsonrpc":"2.0","id":2,"meth')
    lines = [
        good,
        b"{not json",
        b"",
        b"[1, 2]",
        orjson.dumps({"hello": "world"}),
        orjson.dumps(bad_raw),
        b'{"timestamp":"2026-03-17T14:00:02+02:00","transport_type":"stdio","stdio_transport":{',
    ]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"\n".join(lines))  # no final newline: MCPSpy was stopped mid-write
    trace = mcptrace.load(path, format="mcpspy")
    m = trace.messages
    MESSAGES.validate(m)
    assert m["line"].to_list() == list(range(1, 8))
    assert kinds(m) == ["request", "invalid", "blank", "invalid", "invalid", "invalid", "invalid"]
    errors = m["parse_error"].to_list()
    assert errors[1].startswith("MCPSpy event is not valid JSON: invalid JSON")
    assert errors[3] == "MCPSpy event is a JSON array, not an object"
    assert errors[4] == "not an MCPSpy event (no `transport_type`)"
    assert errors[5].startswith("invalid JSON")
    assert m["message"][5] == '{"jsonrpc":"2.0","id":2,"meth'
    assert errors[6].startswith("MCPSpy event is not valid JSON: incomplete last event: ")
    src = trace.sources.row(0, named=True)
    assert src["truncated"] is True
    assert "the last event is incomplete" in src["note"]


def test_a_capture_starting_with_llm_chunks_is_known(write_lines: WriteLines) -> None:
    # with --llm MCPSpy writes an event per streamed chunk (pkg/output/jsonl.go): a busy
    # capture starts with more of them than the head holds
    chunk = {
        "session_id": 7,
        "timestamp": "2026-01-16T09:00:00.000+02:00",
        "message_type": "stream_chunk",
        "pid": 4100,
        "comm": "claude",
        "host": "api.anthropic.com",
        "content": "tok",
    }
    lines = [orjson.dumps(chunk)] * 30 + [
        orjson.dumps(up(req(1, "tools/list"), 1.0)),
        orjson.dumps(down(res(1, {"tools": []}), 1.2)),
    ]
    trace = mcptrace.load(write_lines(lines))
    assert trace.sources["format"].to_list() == ["mcpspy"]
    assert trace.calls["outcome"].to_list() == ["ok"]


def test_requests_left_without_response_are_explained(write_lines: WriteLines) -> None:
    # MCPSpy drops a response more than 5 s after its request (pkg/mcp/parser.go)
    path = write_lines([orjson.dumps(up(req(1, "tools/call", {"name": "slow"}), 1.0))])
    note = mcptrace.load(path, format="mcpspy").sources["note"][0]
    assert note is not None and "1 request(s) without a response" in note
    assert "more than 5 s after its request" in note
