"""The OTLP/JSON loader: OpenTelemetry spans of MCP calls as call records."""

from __future__ import annotations

import base64
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, WriteLines
from typer.testing import CliRunner

import mcptrace
from mcptrace import _json
from mcptrace.analysis import error_rate, latency
from mcptrace.cli import app
from mcptrace.loaders import FORMATS, detect, otlp
from mcptrace.loaders.base import NOT_JSON, Head, make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, SESSIONS
from mcptrace.summary import summarize

COLLECTOR = SAMPLES / "otel" / "collector-export.jsonl"
SENTRY = SAMPLES / "otel" / "sentry-spans.json"
T0 = 1_785_578_400_000_000_000  # 2026-08-01T10:00:00Z in ns
TRACE = "5b8efff798038103d269b633813fc60c"
runner = CliRunner()


def attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def span(
    name: str,
    attrs: dict[str, Any],
    *,
    kind: Any = 2,
    start_ms: float = 0,
    ms: float = 10,
    status: dict[str, Any] | None = None,
    span_id: str = "eee19b7ec3c1b174",
    trace_id: str = TRACE,
) -> dict[str, Any]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(T0 + round(start_ms * 1e6)),
        "endTimeUnixNano": str(T0 + round((start_ms + ms) * 1e6)),
        "attributes": [attr(k, v) for k, v in attrs.items()],
        "status": status or {},
    }


def export(service: str, *spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [attr("service.name", service)]},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": list(spans)}],
            }
        ]
    }


def call(
    method: str = "tools/call", tool: str | None = "get_weather", rid: Any = "1", **more: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"mcp.method.name": method, "mcp.session.id": "sess-1"}
    if rid is not None:
        out["jsonrpc.request.id"] = rid
    if tool is not None:
        out["gen_ai.tool.name"] = tool
    out.update(more)
    return out


def load_calls(write_lines: WriteLines, *requests: Any) -> tuple[mcptrace.Trace, pl.DataFrame]:
    trace = mcptrace.load(write_lines(list(requests), "spans.jsonl"))
    return trace, trace.calls


# -- the samples ------------------------------------------------------------------------


def test_collector_sample_is_detected_from_content(tmp_path: Path) -> None:
    path = tmp_path / "export.log"
    shutil.copy(COLLECTOR, path)
    trace = mcptrace.load(path)
    CALLS.validate(trace.calls)
    SESSIONS.validate(trace.sessions)
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["detected"], src["lines"], src["rows"]) == ("otlp", "content", 5, 0)
    assert src["note"] == (
        "2 span(s) without MCP attributes skipped (not MCP); 1 MCP notification span(s) "
        "skipped: notifications are not calls; 6 call(s) recorded by both a client and a server "
        "span: each span is a call record of its own (see span_id); the client's latency "
        "includes the transport"
    )
    assert trace.messages.height == 0
    calls = trace.calls
    assert calls.height == 15
    assert calls["request_source"].unique().to_list() == [str(path)]
    assert calls["request_line"].to_list() == [1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5]
    assert (calls["response_line"] == calls["request_line"]).all()
    assert calls["direction"].cast(pl.String).unique().to_list() == ["c2s"]
    assert trace.call_only_sessions == sorted(
        ["8267461134f24305af708e66b8eda71a", "3b9c0de4f2a14c7e9a61d0b5e27f8c11"]
    )
    sessions = trace.sessions.select(
        "session", "format", "server", "revision", "revision_source", "client_name", "requests"
    )
    assert sessions.rows() == [
        ("8267461134f24305af708e66b8eda71a", "otlp", "weather-mcp", "2025-11-25", "telemetry",
         "travel-agent", 12),
        ("3b9c0de4f2a14c7e9a61d0b5e27f8c11", "otlp", "weather-mcp", "2025-11-25", "telemetry",
         None, 3),
    ]  # fmt: skip


def test_client_and_server_spans_are_kept_apart() -> None:
    calls = mcptrace.load(COLLECTOR).calls
    session = pl.col("session") == "8267461134f24305af708e66b8eda71a"
    forecast = calls.filter(session & (pl.col("id") == '"2"')).select(
        "server", "client", "latency_ms", "trace_id", "span_id", "request_line"
    )
    assert forecast.height == 2
    client, server = forecast.rows(named=True)
    assert client["latency_ms"] == 142.6 and server["latency_ms"] == 118.3
    assert client["trace_id"] == server["trace_id"] and len(client["trace_id"]) == 32
    assert client["span_id"] != server["span_id"] and len(server["span_id"]) == 16
    # the client span's line comes from the client service, the server span's from the server
    assert (client["request_line"], server["request_line"]) == (3, 4)
    # both sides name both peers: the server's service.name reaches the client's record
    assert (client["server"], client["client"]) == ("weather-mcp", "travel-agent")
    assert (server["server"], server["client"]) == ("weather-mcp", "travel-agent")


def test_statistics_work_on_spans() -> None:
    trace = mcptrace.load(COLLECTOR)
    by_tool = latency(trace, by="tool").select("tool", "count", "max")
    assert by_tool.rows() == [
        ("book_trip", 2, 211.5),
        ("get_alerts", 3, 2874.5),
        ("get_forecast", 5, 4318.4),
    ]
    rates = error_rate(trace, by="tool").select("tool", "calls", "errors", "tool_errors")
    assert rates.rows() == [
        ("book_trip", 2, 0, 2),
        ("get_alerts", 3, 3, 0),
        ("get_forecast", 5, 0, 0),
    ]
    failed = trace.calls.filter(pl.col("outcome") == "error")
    assert failed.select("error_code", "error_message").unique(maintain_order=True).rows() == [
        (-32602, "Unknown region: Atlantis"),
        (-32603, "Internal error: upstream timeout"),
    ]
    first = trace.calls.row(0, named=True)
    assert first["request_ts"] == datetime(2025, 12, 4, 14, 2, 11, tzinfo=UTC)
    assert str(first["response_ts"]) == "2025-12-04 14:02:11.048200+00:00"


def test_sentry_sample(tmp_path: Path) -> None:
    path = tmp_path / "spans"
    shutil.copy(SENTRY, path)
    trace = mcptrace.load(path)
    assert trace.sources["format"][0] == "otlp"
    assert (
        trace.sources["note"][0]
        == "1 MCP notification span(s) skipped: notifications are not calls"
    )
    calls = trace.calls.select(
        "id", "method", "target", "outcome", "server", "client", "request_line"
    )
    assert calls.rows() == [
        ('"0"', "initialize", None, "ok", "docs-server", "claude-code", 1),
        ('"1"', "tools/list", None, "ok", "docs-server", "claude-code", 1),
        ('"2"', "tools/call", "search", "ok", "docs-server", "claude-code", 1),
        ('"3"', "tools/call", "fetch", "tool_error", "docs-server", "claude-code", 1),
        ('"4"', "resources/read", "docs://guides/retries", "ok", "docs-server", "claude-code", 1),
        ('"5"', "prompts/get", "summarize", "error", "docs-server", "claude-code", 1),
    ]
    s = trace.sessions.row(0, named=True)
    assert (s["session"], s["revision"], s["revision_source"]) == (
        "f2c1d7a0-8e3b-4c59-b1a6-7d9e0c4f2b18",
        "2025-06-18",
        "telemetry",
    )


# -- detection ----------------------------------------------------------------------------


def test_sniff(tmp_path: Path) -> None:
    doc = tmp_path / "a.json"
    doc.write_bytes(
        orjson.dumps(
            export("svc", span("initialize", call("initialize", None))), option=orjson.OPT_INDENT_2
        )
    )
    assert detect(read_content(doc)) == "otlp"
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_bytes(orjson.dumps(export("a")) + b"\n" + orjson.dumps(export("b")) + b"\n")
    assert detect(read_content(jsonl)) == "otlp"
    assert otlp.sniff(make_head(read_content(jsonl))) == 95
    other = tmp_path / "c.json"
    other.write_bytes(b'{"resourceLogs": []}')
    assert otlp.sniff(make_head(read_content(other))) == 0
    # an export line longer than the head, or a document too big to parse whole
    long = Head(
        source="x", lines=['{"resourceSpans":[{"resource":'], parsed=[NOT_JSON], whole=NOT_JSON
    )
    assert otlp.sniff(long) == 80
    pretty = Head(
        source="x", lines=["{", '  "resourceSpans": ['], parsed=[NOT_JSON] * 2, whole=NOT_JSON
    )
    assert otlp.sniff(pretty) == 80
    assert FORMATS["otlp"] is otlp


# -- span contents --------------------------------------------------------------------------


def test_ids_keep_the_attribute_type(write_lines: WriteLines) -> None:
    _, calls = load_calls(
        write_lines,
        export(
            "srv",
            span("tools/call a", call(rid="7"), span_id="0000000000000001"),
            span("tools/call a", call(rid=7), span_id="0000000000000002"),
            span("tools/call a", call(rid=None), span_id="0000000000000003"),
        ),
    )
    assert calls.select("id", "id_type").rows() == [
        ('"7"', "string"),
        ("7", "integer"),
        (None, None),
    ]


def test_outcomes_and_error_codes(write_lines: WriteLines) -> None:
    error = {"code": 2, "message": "boom"}
    _, calls = load_calls(
        write_lines,
        export(
            "srv",
            span("a", call(**{"error.type": "tool_error"}), status={"code": 2}),
            span(
                "b",
                call(**{"error.type": "-32602", "rpc.response.status_code": "-32602"}),
                status=error,
            ),
            span("c", call(**{"error.type": "timeout"}), status=error),
            span("d", call(), status={"code": "STATUS_CODE_ERROR", "message": "failed"}),
            span("e", call(**{"error.type": "-32601"})),
            span("f", call(**{"mcp.tool.result.is_error": True})),
            span("g", call(), status={"code": 1}),
        ),
    )
    assert calls.select("outcome", "error_code", "error_message").rows() == [
        ("tool_error", None, None),
        ("error", -32602, "boom"),
        ("error", None, "boom"),
        ("error", None, "failed"),
        ("error", -32601, None),
        ("tool_error", None, None),
        ("ok", None, None),
    ]


def test_sentry_attribute_spellings_and_span_names(write_lines: WriteLines) -> None:
    sentry = {
        "sentry.op": "mcp.server",
        "mcp.method.name": "tools/call",
        "mcp.tool.name": "search",
        "mcp.request_id": "4",
        "mcp.session_id": "s-9",
        "mcp.transport": "http",
    }
    _, calls = load_calls(
        write_lines,
        export(
            "docs",
            span("tools/call search", sentry, kind=1),
            # no mcp.method.name: the span name says it
            span("tools/call get_weather", {"jsonrpc.request.id": "5"}, kind="SPAN_KIND_CLIENT"),
            # only Sentry's per-kind attribute
            span("x", {"mcp.prompt.name": "summarize", "mcp.request.id": "6"}, kind=0),
            # not MCP
            span("GET /health", {"http.request.method": "GET"}),
            span("POST /mcp", {"http.request.method": "POST"}),
        ),
    )
    assert calls.select("session", "id", "method", "target", "server", "client").rows() == [
        ("s-9", '"4"', "tools/call", "search", "docs", None),
        (TRACE, '"5"', "tools/call", "get_weather", None, "docs"),
        # side unknown: names only from other spans of its session
        (TRACE, '"6"', "prompts/get", "summarize", None, "docs"),
    ]


def test_session_falls_back_to_the_trace_id(write_lines: WriteLines) -> None:
    trace, calls = load_calls(
        write_lines,
        export(
            "srv", span("tools/list", {"mcp.method.name": "tools/list", "jsonrpc.request.id": "1"})
        ),
    )
    assert calls["session"].to_list() == [TRACE]
    assert (
        "1 MCP span(s) without mcp.session.id: their session is their trace id"
        in (trace.sources["note"][0])
    )


def test_without_session_or_trace_id_the_session_is_the_file(write_lines: WriteLines) -> None:
    lost = span("tools/list", {"mcp.method.name": "tools/list", "jsonrpc.request.id": "1"})
    del lost["traceId"]
    kept = span("tools/list", {"mcp.method.name": "tools/list", "jsonrpc.request.id": "2"})
    trace, calls = load_calls(write_lines, export("srv", lost, kept))
    assert sorted(calls["session"].to_list()) == sorted(["spans", TRACE])
    assert trace.call_only_sessions == sorted(["spans", TRACE])
    assert (
        "2 MCP span(s) without mcp.session.id: their session is their trace id "
        "(one trace per operation, so one MCP session may show as several; "
        "1 without a trace id either: the file's name)" in trace.sources["note"][0]
    )


def test_server_requests_go_s2c_and_name_the_right_peers(write_lines: WriteLines) -> None:
    sampling = call("sampling/createMessage", None, "s1")
    _, calls = load_calls(
        write_lines,
        # the MCP server sends sampling/createMessage: its span is a CLIENT span
        export(
            "weather-mcp",
            span("sampling/createMessage", sampling, kind=3, span_id="00000000000000aa"),
        ),
        # the host receives it: a SERVER span recorded by the MCP client
        export(
            "desktop-host",
            span("sampling/createMessage", sampling, kind=2, span_id="00000000000000bb"),
        ),
    )
    assert calls.select("direction", "server", "client").rows() == [
        ("s2c", "weather-mcp", "desktop-host"),
        ("s2c", "weather-mcp", "desktop-host"),
    ]


def test_server_address_when_no_span_names_the_server(write_lines: WriteLines) -> None:
    attrs = call(**{"server.address": "weather.internal", "server.port": 8080})
    _, calls = load_calls(
        write_lines, export("agent", span("tools/call get_weather", attrs, kind=3))
    )
    assert calls.select("server", "client").rows() == [("weather.internal:8080", "agent")]


def test_otlp_json_variants(write_lines: WriteLines) -> None:
    """Base64 ids (protobuf JSON mapping), numbers for int64, proto field names."""
    s = span("tools/call a", call())
    s["traceId"] = base64.b64encode(bytes.fromhex(TRACE)).decode()
    s["spanId"] = base64.b64encode(bytes.fromhex("eee19b7ec3c1b174")).decode()
    s["startTimeUnixNano"] = T0
    del s["endTimeUnixNano"]
    s["end_time_unix_nano"] = str(T0 + 2_500_000)
    s["attributes"].append({"key": "server.port", "value": {"intValue": 8080}})
    doc = export("srv", s)
    doc["resourceSpans"][0]["scope_spans"] = doc["resourceSpans"][0].pop("scopeSpans")
    _, calls = load_calls(write_lines, doc)
    row = calls.row(0, named=True)
    assert (row["trace_id"], row["span_id"], row["latency_ms"]) == (TRACE, "eee19b7ec3c1b174", 2.5)


def test_a_span_without_end_has_no_latency(write_lines: WriteLines) -> None:
    s = span("tools/call a", call())
    s["endTimeUnixNano"] = "0"
    _, calls = load_calls(write_lines, export("srv", s))
    row = calls.row(0, named=True)
    assert (row["response_ts"], row["latency_ms"], row["outcome"]) == (None, None, "ok")


# -- malformed input -------------------------------------------------------------------------


def test_bad_lines_are_invalid_rows_and_the_rest_loads(write_lines: WriteLines) -> None:
    path = write_lines(
        [export("srv", span("tools/call a", call())), b"{not json", b"", {"resourceLogs": []}, [1]],
        "spans.jsonl",
    )
    trace = mcptrace.load(path, format="otlp")
    m = trace.messages
    assert m["kind"].cast(pl.String).to_list() == ["invalid"] * 3
    assert m["line"].to_list() == [2, 4, 5]
    assert m["parse_error"][0].startswith("OTLP export line is not valid JSON: invalid JSON")
    assert m["parse_error"][1] == "not an OTLP export request: an object without `resourceSpans`"
    assert m["parse_error"][2] == "not an OTLP export request: a JSON array without `resourceSpans`"
    assert trace.calls.height == 1
    assert trace.sources["invalid"][0] == 3


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{\n  "resourceSpans": [\n    {', "OTLP document is not valid JSON: invalid JSON"),
        (b'{"resourceLogs": []}', "not an OTLP export request: an object without `resourceSpans`"),
    ],
)
def test_malformed_documents_are_one_invalid_row(tmp_path: Path, data: bytes, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    trace = mcptrace.load(path, format="otlp")
    assert trace.messages["kind"].cast(pl.String).to_list() == ["invalid"]
    assert trace.messages["parse_error"][0].startswith(problem)
    assert trace.calls.is_empty()


def test_odd_structures_are_skipped_not_fatal(write_lines: WriteLines) -> None:
    doc = {
        "resourceSpans": [
            1,
            {"resource": [], "scopeSpans": [2, {"spans": "x"}, {"spans": [3, {"name": 4}]}]},
        ]
    }
    trace, calls = load_calls(write_lines, doc)
    assert calls.is_empty()
    assert trace.messages.is_empty()
    assert trace.sources["note"][0] == "1 span(s) without MCP attributes skipped (not MCP)"


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    trace = mcptrace.load(path, format="otlp")
    assert trace.calls.is_empty() and trace.messages.is_empty()


# -- commands on call-only sessions -------------------------------------------------------------


def test_lint_says_which_sessions_it_cannot_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    result = runner.invoke(app, ["lint", str(SAMPLES / "otel")])
    assert result.exit_code == 0, result.output
    note = (
        "note: 3 session(s) have only call-level records (OpenTelemetry spans): "
        "message and transport rules cannot judge them"
    )
    assert result.stderr.count(note) == 1
    # a capture with message frames gets no such note
    plain = runner.invoke(app, ["lint", str(SAMPLES / "har" / "streamable-http-2025-11-25.har")])
    assert "call-level records" not in plain.stderr


def test_summary_lists_call_only_sessions() -> None:
    s = summarize(mcptrace.load(SENTRY))
    rows = [(r["session"], r["revision_source"]) for r in s.sessions]
    assert rows == [("f2c1d7a0-8e3b-4c59-b1a6-7d9e0c4f2b18", "telemetry")]
    result = runner.invoke(app, ["summary", str(SENTRY)])
    assert result.exit_code == 0
    assert "telemetry" in result.stdout


def test_times_and_codes_too_big_for_the_table_are_unknown_and_said(
    write_lines: WriteLines,
) -> None:
    # 10^40 ns is far beyond the year 9999, the last time the tables hold
    late = span("tools/call a", call(rid="1"))
    late["endTimeUnixNano"] = "9" * 40
    early = span("tools/call b", call(rid="2"))
    early["startTimeUnixNano"] = 10**30
    huge_code = span("tools/call c", call(rid="3", **{"error.type": "9" * 30}), status={"code": 2})
    # written by mcptrace's own JSON writer: orjson writes no integer beyond 64 bits
    trace, calls = load_calls(write_lines, _json.dumps(export("srv", late, early, huge_code)))
    rows = calls.select("id", "request_ts", "response_ts", "latency_ms", "error_code").rows()
    assert rows[0][1] is not None and rows[0][2:4] == (None, None)
    assert rows[1][1] is None and rows[1][2] is not None and rows[1][3] is None
    assert rows[2][4] is None
    note = trace.sources["note"].item()
    assert "2 span(s) with a start or end time beyond the year 9999" in note
    assert "1 error code attribute(s) that are not a 64-bit integer" in note


# -- what instrumentations write (facts from their sources, named per test) --------------


def _scoped(service: str, scope: str, *spans: dict[str, Any]) -> dict[str, Any]:
    doc = export(service, *spans)
    doc["resourceSpans"][0]["scopeSpans"][0]["scope"] = {"name": scope, "version": "0.47.0"}
    return doc


def test_an_error_code_alone_is_an_error_and_cancelled_is_cancelled(
    write_lines: WriteLines,
) -> None:
    # Sentry's MCP server integration (outcome.ts): a caller's mistake (-32602, -32002)
    # sets only rpc.response.status_code, with no error.type and no ERROR status; a
    # request the client cancelled carries mcp.request.outcome "cancelled"
    spans = [
        span("tools/call a", call(rid="1", **{"rpc.response.status_code": "-32602"})),
        span(
            "resources/read",
            call("resources/read", None, "2", **{"rpc.response.status_code": "-32002"}),
        ),
        span("tools/call b", call(rid="3", **{"mcp.request.outcome": "cancelled"})),
        span("tools/call c", call(rid="4")),
    ]
    _, calls = load_calls(write_lines, export("srv", *spans))
    assert calls.select("id", "outcome", "error_code").rows() == [
        ('"1"', "error", -32602),
        ('"2"', "error", -32002),
        ('"3"', "cancelled", None),
        ('"4"', "ok", None),
    ]


def test_an_exception_type_is_the_error_message_not_an_unreadable_code(
    write_lines: WriteLines,
) -> None:
    # the C# SDK sets error.type to the exception's type when there is no JSON-RPC code,
    # and _OTHER for an isError result of another method than tools/call
    cancelled = call(rid="1", **{"error.type": "System.Threading.Tasks.TaskCanceledException"})
    other = call("prompts/get", None, "2", **{"error.type": "_OTHER"})
    trace, calls = load_calls(
        write_lines,
        export(
            "agent", span("tools/call a", cancelled, kind=3), span("prompts/get", other, kind=3)
        ),
    )
    assert calls.select("outcome", "error_code", "error_message").rows() == [
        ("error", None, "System.Threading.Tasks.TaskCanceledException"),
        ("error", None, None),
    ]
    assert "not a 64-bit integer" not in (trace.sources["note"][0] or "")


def test_targets_after_a_prefix_and_methods_from_rpc_attributes(write_lines: WriteLines) -> None:
    # the official Python SDK names its client spans "MCP send {method} {target}" and sets
    # only mcp.method.name and jsonrpc.request.id; Logfire names them "MCP request:
    # {method} {target}" with rpc.system jsonrpc and rpc.method, and no mcp.* attribute
    sdk = span(
        "MCP send tools/call get_weather",
        {"mcp.method.name": "tools/call", "jsonrpc.request.id": "1"},
        kind=3,
    )
    logfire = span(
        "MCP request: tools/call get_alerts",
        {"rpc.system": "jsonrpc", "rpc.method": "tools/call"},
        kind=1,
    )
    handled = span("MCP server handle request: tools/list", {"rpc.method": "tools/list"}, kind=1)
    http = span("POST /mcp", {"rpc.system": "jsonrpc", "rpc.method": "POST"}, kind=2)
    trace, calls = load_calls(write_lines, export("agent", sdk, logfire, handled, http))
    assert calls.select("method", "target").rows() == [
        ("tools/call", "get_weather"),
        ("tools/call", "get_alerts"),
        ("tools/list", None),
    ]
    assert "1 span(s) without MCP attributes skipped (not MCP)" in trace.sources["note"][0]


def test_openllmetry_spans(write_lines: WriteLines) -> None:
    # traceloop's opentelemetry-instrumentation-mcp: "{tool}.tool" spans (traceloop.span.kind
    # tool) for tool calls, "{method}.mcp" for the other requests; the FastMCP server's
    # "mcp.server" span and "ResponseStreamWriter" are no calls
    client = _scoped(
        "travel-agent",
        "opentelemetry.instrumentation.mcp.instrumentation",
        span("tools/list.mcp", {}, kind=1),
        span(
            "get_weather.tool",
            {"traceloop.span.kind": "tool", "traceloop.entity.name": "get_weather"},
            kind=1,
        ),
        span(
            "get_weather.tool",
            {"traceloop.span.kind": "tool", "error.type": "tool_error"},
            kind=1,
            status={"code": 2, "message": "city not found"},
        ),
    )
    server = _scoped(
        "weather-mcp",
        "opentelemetry.instrumentation.mcp.fastmcp_instrumentation",
        span("mcp.server", {"traceloop.span.kind": "server"}, kind=1),
        span("ResponseStreamWriter", {"mcp.request.id": "2"}, kind=1),
    )
    trace, calls = load_calls(write_lines, client, server)
    assert calls.select("method", "target", "outcome").rows() == [
        ("tools/list", None, "ok"),
        ("tools/call", "get_weather", "ok"),
        ("tools/call", "get_weather", "tool_error"),
    ]
    note = trace.sources["note"][0]
    assert "2 span(s) of OpenLLMetry's MCP instrumentation that name no MCP method" in note
    assert "not MCP" not in note


def test_a_server_s_own_ping_goes_s2c(write_lines: WriteLines) -> None:
    # the C# SDK and the Python SDK record every request a party sends as a CLIENT span,
    # the server's pings too: a CLIENT span of the service that received tools/call is s2c
    server = export(
        "WeatherServer",
        span("tools/call a", call(rid="1"), kind=2, span_id="00000000000000a1"),
        span("ping", call("ping", None, "9"), kind=3, span_id="00000000000000a2"),
    )
    client = export(
        "TravelAgent",
        span("tools/call a", call(rid="1"), kind=3, span_id="00000000000000b1"),
        span("ping", call("ping", None, "9"), kind=2, span_id="00000000000000b2"),
        span("ping", call("ping", None, "5"), kind=3, span_id="00000000000000b3"),
    )
    _, calls = load_calls(write_lines, server, client)
    assert calls.select("method", "id", "direction", "server", "client").rows() == [
        ("tools/call", '"1"', "c2s", "WeatherServer", "TravelAgent"),
        ("ping", '"9"', "s2c", "WeatherServer", "TravelAgent"),
        ("tools/call", '"1"', "c2s", "WeatherServer", "TravelAgent"),
        ("ping", '"9"', "s2c", "WeatherServer", "TravelAgent"),
        ("ping", '"5"', "c2s", "WeatherServer", "TravelAgent"),
    ]
