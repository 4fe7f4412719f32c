"""The mcpproxy-go activity export loader: call records, not messages."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, WriteLines

import mcptrace
from mcptrace.analysis import latency
from mcptrace.loaders import gateway, stdio
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS

SAMPLE = SAMPLES / "mcpproxy-activity" / "activity-export.jsonl"
SID = "mcp-session-3f1c9a0e-77d2-4b4e-9a51-2c0de8b1f6aa"


def record(kind: str = "tool_call", **fields: Any) -> dict[str, Any]:
    """One exported ActivityRecord, keys in the contract's order."""
    out: dict[str, Any] = {"id": "01JRZ8W4Q1ABCDEFGHJKMNPQRS", "type": kind, "source": "mcp"}
    out.update(
        {
            "server_name": "github",
            "tool_name": "search_issues",
            "status": "success",
            "duration_ms": 250,
            "timestamp": "2026-04-09T14:00:10.5Z",
            "session_id": "s-1",
        }
    )
    out.update(fields)
    out["has_sensitive_data"] = False
    return {k: v for k, v in out.items() if v is not None}


def test_sample_is_detected_from_content_not_name(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    shutil.copy(SAMPLE, path)
    trace = mcptrace.load(path)
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["detected"], src["lines"], src["rows"], src["invalid"]) == (
        "mcpproxy-activity",
        "content",
        11,
        3,
        0,
    )
    assert "8 call record(s)" in src["note"]
    assert "1 internal call_tool_* record(s) mirror tool_call records" in src["note"]
    # the records that are not calls are log rows; the calls are call records
    m = trace.messages
    MESSAGES.validate(m)
    assert m["kind"].cast(pl.String).to_list() == ["log", "log", "log"]
    assert m["line"].to_list() == [4, 8, 11]
    assert m["message"].to_list() == [
        "policy_decision blocked filesystem write_file",
        "internal_tool_call success github call_tool_read",
        "system_start success",
    ]
    assert m["session"].to_list() == [SID, SID, "mcpproxy"]
    records = trace.call_records
    CALLS.validate(records)
    # every line is a message row or a call record
    assert sorted(m["line"].to_list() + records["request_line"].to_list()) == list(range(1, 12))


def test_sample_calls() -> None:
    trace = mcptrace.load(SAMPLE)
    calls = trace.calls
    CALLS.validate(calls)
    got = calls.select(
        "session", "server", "client", "method", "target", "request_line", "latency_ms", "outcome"
    )
    assert got.rows() == [
        (SID, "github", "claude-code", "tools/call", "search_issues", 1, 803.0, "ok"),
        (SID, "github", "claude-code", "tools/call", "search_issues", 2, 30001.0, "error"),
        ("filesystem", "filesystem", None, "tools/call", "list_directory", 3, 9.0, "ok"),
        (SID, "github", "claude-code", "tools/call", "create_issue", 5, 1187.0, "ok"),
        (SID, "github", "claude-code", "tools/call", "create_issue", 6, 1340.0, "error"),
        (SID, "filesystem", "claude-code", "tools/call", "read_file", 7, 14.0, "ok"),
        (SID, "github", "claude-code", "tools/call", "search_issues", 9, 612.0, "ok"),
        (SID, "mcpproxy", "claude-code", "tools/call", "retrieve_tools", 10, 38.0, "ok"),
    ]
    first = calls.row(0, named=True)
    # the record is written when the call is over: request time = timestamp - duration_ms
    assert str(first["response_ts"]) == "2026-04-09 14:01:50.318004+00:00"
    assert first["response_ts"] - first["request_ts"] == timedelta(milliseconds=803)
    assert (first["direction"], first["id"], first["response_line"]) == ("c2s", None, 1)
    assert calls["error_message"][1] == "upstream call failed: context deadline exceeded"
    assert calls["request_source"].unique().to_list() == [str(SAMPLE)]
    # a session known only from call records cannot be judged by message rules
    assert trace.call_only_sessions == ["filesystem"]
    sessions = trace.sessions
    SESSIONS.validate(sessions)
    proxy = sessions.filter(pl.col("session") == SID).row(0, named=True)
    assert (proxy["messages"], proxy["client_name"], proxy["format"]) == (
        2,
        "claude-code",
        "mcpproxy-activity",
    )
    stats = latency(trace, by="tool")
    assert stats.filter(pl.col("tool") == "search_issues").select("count", "max").row(0) == (
        3,
        30001.0,
    )
    assert stats.filter(pl.col("tool") == "create_issue")["p50"].item() == pytest.approx(1263.5)


def test_sniff_scores() -> None:
    head = make_head(read_content(SAMPLE))
    assert gateway.sniff(head) == 95
    assert stdio.sniff(head) == 0
    for other in ("mcpsnoop", "mcpspy", "capture"):
        for f in sorted((SAMPLES / other).iterdir()):
            assert gateway.sniff(make_head(read_content(f))) == 0


def test_outcomes(write_lines: WriteLines) -> None:
    is_error = orjson.dumps({"content": [{"type": "text", "text": "no"}], "isError": True})
    path = write_lines(
        [
            record(status="error", error_message="bad value", response=is_error.decode()),
            record(status="error", error_message="Not connected", response="Not connected"),
            record(status="blocked"),
            record(status="rejected", metadata={"rejection_reason": "queue_full"}),
            record(status="exploded"),
            record("prompt_get", tool_name="summarize", status="success"),
            record(duration_ms=None, status="error", error_message="server not found"),
            record(timestamp=None),
        ]
    )
    trace = mcptrace.load(path)
    calls = trace.calls.select("method", "outcome", "error_message", "latency_ms").rows()
    assert calls == [
        ("tools/call", "tool_error", "bad value", 250.0),
        ("tools/call", "error", "Not connected", 250.0),
        ("tools/call", "error", "blocked by an mcpproxy policy", 250.0),
        ("tools/call", "error", "rejected by mcpproxy (queue_full)", 250.0),
        ("tools/call", "error", 'mcpproxy status "exploded"', 250.0),
        ("prompts/get", "ok", None, 250.0),
        # Go omits a zero duration: refused before dispatch
        ("tools/call", "error", "server not found", 0.0),
        # no time: the duration cannot be placed
        ("tools/call", "ok", None, None),
    ]
    assert 'unknown status value(s) "exploded": read as error' in trace.sources["note"].item()
    no_time = trace.calls.row(7, named=True)
    assert (no_time["request_ts"], no_time["response_ts"]) == (None, None)


def test_sessions_fall_back_to_work_session_then_server(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            record(session_id=None, work_session_id="ws-01ABC"),
            record(session_id=None, server_name="notion"),
            record("internal_tool_call", tool_name="code_execution", session_id=None),
        ]
    )
    calls = mcptrace.load(path).calls
    assert calls.select("session", "server").rows() == [
        ("ws-01ABC", "github"),
        ("notion", "notion"),
        ("mcpproxy", "mcpproxy"),
    ]


def test_malformed_lines_are_rows_not_exceptions(tmp_path: Path) -> None:
    lines = [
        orjson.dumps(record()),
        b"{not json",
        b"",
        b"[1, 2]",
        orjson.dumps({"id": "x", "timestamp": "2026-04-09T14:00:00Z"}),
        orjson.dumps(record("config_change", server_name="notion", tool_name=None)),
        b'{"id":"01JRZ","type":"tool_call","status":"succ',
    ]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"\n".join(lines))  # no final newline: the export was cut off
    trace = mcptrace.load(path, format="mcpproxy-activity")
    m = trace.messages
    MESSAGES.validate(m)
    assert m["line"].to_list() == [2, 3, 4, 5, 6, 7]
    assert m["kind"].cast(pl.String).to_list() == [
        "invalid", "blank", "invalid", "invalid", "log", "invalid",
    ]  # fmt: skip
    errors = m["parse_error"].to_list()
    assert errors[0].startswith("activity record is not valid JSON: invalid JSON")
    assert errors[2] == "activity record is a JSON array"
    assert errors[3] == "activity record is without a `type`"
    assert m["message"][4] == "config_change success notion"
    assert errors[5].startswith("activity record is not valid JSON: incomplete last record: ")
    assert trace.call_records["request_line"].to_list() == [1]
    src = trace.sources.row(0, named=True)
    assert src["truncated"] is True
    assert "the last record is incomplete" in src["note"]


def test_an_export_of_calls_only_has_no_message_rows(write_lines: WriteLines) -> None:
    path = write_lines([record(), record(tool_name="create_issue", duration_ms=900)])
    trace = mcptrace.load(path)
    assert trace.messages.height == 0
    assert trace.sources["rows"].item() == 0
    assert trace.calls.height == 2
    assert trace.call_only_sessions == ["s-1"]
    assert trace.sessions.select("session", "requests", "messages").rows() == [("s-1", 2, 0)]


def test_an_impossible_duration_is_unknown_latency_and_said(write_lines: WriteLines) -> None:
    # a duration past ~31 years (here 10^21 ms) or below zero is corruption: it would put
    # the request before any time the table holds, so the latency is left unknown
    path = write_lines([record(duration_ms=1.2e21), record(duration_ms=-5), record(duration_ms=40)])
    trace = mcptrace.load(path)
    calls = trace.calls.select("latency_ms", "request_ts", "response_ts").rows()
    assert [latency for latency, _, _ in calls] == [None, None, 40.0]
    # the record's time is when the call ended; when it started is unknown
    assert calls[0][1] is None and calls[0][2] is not None
    note = trace.sources["note"].item()
    assert "2 call record(s) with a negative or impossibly long duration_ms (line 1, 2)" in note


def test_calls_made_by_code_execution_are_mcpproxy_s(write_lines: WriteLines) -> None:
    # mcpproxy-go since 2026-08 (internal/server/mcp_code_execution.go): the tool calls a
    # code_execution call makes carry `parent_id`; the agent made only code_execution
    meta = {"client_name": "claude-code", "client_version": "2.1.0"}
    path = write_lines(
        [
            record(
                "internal_tool_call",
                server_name=None,
                tool_name="code_execution",
                request_id="exec-77",
                metadata={"internal_tool_name": "code_execution", **meta},
            ),
            record(source="internal", tool_name="list_issues", parent_id="exec-77", metadata=meta),
        ]
    )
    trace = mcptrace.load(path)
    assert trace.calls.select("target", "client").rows() == [
        ("code_execution", "claude-code"),
        ("list_issues", "mcpproxy"),
    ]
    assert "1 call(s) made by mcpproxy's code_execution" in trace.sources["note"][0]
