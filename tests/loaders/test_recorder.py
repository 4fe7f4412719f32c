"""The mcp-recorder cassette loader."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from factories import SAMPLES, err, note, req, res

import mcptrace
from mcptrace.analysis import latency
from mcptrace.loaders import inspector, mcpjam, recorder, stdio
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS

HTTP = SAMPLES / "mcp-recorder" / "calculator_http.json"
STDIO = SAMPLES / "mcp-recorder" / "notes_stdio.json"
INIT = req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
INIT_RESULT = res(0, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"}})


def interaction(request: Any, response: Any, latency_ms: Any = 5, **extra: Any) -> dict[str, Any]:
    kind = (
        "notification" if isinstance(request, dict) and "id" not in request else "jsonrpc_request"
    )
    out = {
        "type": kind,
        "request": request,
        "response": response,
        "response_is_sse": False,
        "response_status": 200,
        "latency_ms": latency_ms,
        "http_method": None,
        "http_path": None,
    }
    out.update(extra)
    return out


def cassette(
    tmp_path: Path,
    interactions: list[Any],
    name: str = "session.json",
    **metadata: Any,
) -> Path:
    meta = {
        "recorded_at": "2026-02-17T20:25:23.000000+00:00",
        "server_url": "http://127.0.0.1:8000",
        "transport_type": "http",
    }
    meta.update(metadata)
    path = tmp_path / name
    doc = {"version": "1.0", "metadata": meta, "interactions": interactions}
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def kinds(df: pl.DataFrame) -> list[str]:
    return df["kind"].cast(pl.String).to_list()


def key_lines(path: Path, key: str) -> list[int]:
    """Lines of an interaction-level key (``      "request": ...``) in save_cassette's layout."""
    prefix = f'      "{key}": '
    return [i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.startswith(prefix)]


def test_http_sample_is_detected_from_content_not_name(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    shutil.copy(HTTP, path)
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["detected"], src["lines"], src["rows"], src["invalid"]) == (
        "mcp-recorder",
        "content",
        258,
        13,
        0,
    )
    assert "laid end to end from recorded_at" in src["note"]
    assert kinds(m) == [
        "request", "response", "notification", "transport", "request", "response", "request",
        "response", "request", "response", "request", "error", "transport",
    ]  # fmt: skip
    assert m["direction"].cast(pl.String).to_list()[:4] == ["c2s", "s2c", "c2s", "s2c"]
    # rows point at their "request": / "response": lines
    requests = key_lines(HTTP, "request")
    responses = key_lines(HTTP, "response")
    assert m.filter(pl.col("direction") == "c2s")["line"].to_list() == requests[:6]
    assert m.filter(pl.col("kind").is_in(["response", "error"]))["line"].to_list() == [
        responses[i] for i in (0, 2, 3, 4, 5)
    ]
    # the session is the cassette; the server its target URL; Streamable HTTP
    assert m["session"].unique().to_list() == ["x"]
    assert m["server"].unique().to_list() == ["http://127.0.0.1:8000"]
    assert m["transport"].cast(pl.String).unique().to_list() == ["http"]
    # a cassette keeps no request headers: its rows claim none, and no header rule fires
    sent = m.filter((pl.col("direction") == "c2s") & (pl.col("kind") != "transport"))
    assert sent["http_method"].unique().to_list() == [None]
    assert sent["http_headers"].unique().to_list() == [None]
    assert (
        not mcptrace.lint(mcptrace.load(HTTP), select=["HT"])["code"]
        .is_in(["HT001", "HT008", "HT009"])
        .any()
    )
    assert m["http_status"].to_list()[1] == 200
    assert m["http_headers"][1] == '{"Content-Type":"text/event-stream"}'
    assert m["message"][3] == "HTTP 202"
    lifecycle = m.row(12, named=True)
    assert (lifecycle["message"], lifecycle["http_method"], lifecycle["http_status"]) == (
        "DELETE /mcp -> 200",
        "DELETE",
        200,
    )
    # every time is derived: recorded_at, then each latency after the one before
    assert m["ts_quality"].cast(pl.String).unique().to_list() == ["derived"]
    assert str(m["ts"][0]) == "2026-02-17 20:25:23.855390+00:00"
    assert str(m["ts"][1]) == "2026-02-17 20:25:23.862390+00:00"  # + 7 ms
    assert m["ts"][2] == m["ts"][1]
    assert m["ts"].is_sorted()
    SESSIONS.validate(trace.sessions)
    session = trace.sessions.row(0, named=True)
    assert (session["revision"], session["client_name"], session["server_name"]) == (
        "2025-11-25",
        "mcp",
        "Test Calculator",
    )
    assert session["ts_quality"] == "derived"


def test_http_sample_calls_have_the_recorded_latencies() -> None:
    trace = mcptrace.load(HTTP)
    calls = trace.calls
    CALLS.validate(calls)
    assert calls.select("id", "method", "target", "latency_ms", "outcome").rows() == [
        ("0", "initialize", None, 7.0, "ok"),
        ("1", "tools/list", None, 4.0, "ok"),
        ("2", "tools/call", "add", 12.0, "ok"),
        ("3", "tools/call", "divide", 9.0, "tool_error"),
        ("4", "prompts/get", "explain_step", 3.0, "error"),
    ]
    assert calls["error_code"][4] == -32602
    stats = latency(trace, by="tool")
    assert stats.select("tool", "count", "p50").rows() == [("add", 1, 12.0), ("divide", 1, 9.0)]


def test_stdio_sample() -> None:
    trace = mcptrace.load(STDIO)
    m = trace.messages
    assert m["transport"].cast(pl.String).unique().to_list() == ["stdio"]
    assert m["server"].unique().to_list() == ["stdio://node dist/index.js"]
    # no HTTP layer: no status, no transport row for the notification
    assert m["http_status"].null_count() == m.height
    assert "transport" not in kinds(m)
    assert trace.calls.select("method", "latency_ms").rows() == [
        ("initialize", 231.0),
        ("resources/list", 5.0),
        ("resources/read", 18.0),
        ("tools/call", 44.0),
    ]


def test_sniff_scores() -> None:
    for sample in (HTTP, STDIO):
        head = make_head(read_content(sample))
        assert recorder.sniff(head) == 95
        assert inspector.sniff(head) == 0
        assert mcpjam.sniff(head) == 0
        assert stdio.sniff(head) == 0
    for other in (SAMPLES / "inspector" / "inspector-export.json", SAMPLES / "mcpjam"):
        files = [other] if other.is_file() else sorted(other.iterdir())
        for f in files:
            assert recorder.sniff(make_head(read_content(f))) == 0


def test_own_timestamps_relaunches_and_odd_interactions(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        [
            interaction(INIT, INIT_RESULT, 10, timestamp="2026-02-17T21:00:00Z"),
            interaction(req(1, "tools/list"), "not an object", 3),
            ["not", "an", "interaction"],
            interaction(None, None, 2),
            interaction(note("notifications/initialized"), None, "fast", response_status=202),
            interaction(INIT, INIT_RESULT, 8, type="handshake"),
            interaction(req(1, "ping"), None, 1),
        ],
        name="relaunch.json",
    )
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    assert kinds(m) == [
        "request", "response", "request", "invalid", "invalid", "invalid", "transport",
        "notification", "transport", "request", "response", "request", "transport",
    ]  # fmt: skip
    errors = m["parse_error"].to_list()
    assert errors[3] == "`response` is a JSON string, not an object"
    assert errors[4] == "cassette interaction is a JSON array, not an object"
    assert errors[5] == "interaction without a `request`"
    assert m["message"][6] == "HTTP 200"
    assert errors[7] == "interaction without a numeric `latency_ms`"
    assert errors[9] == 'unknown interaction type "handshake"'
    # an interaction's own time is exact; what follows it is laid out from there
    assert m["ts_quality"].cast(pl.String).to_list()[:2] == ["exact", "derived"]
    assert str(m["ts"][0]) == "2026-02-17 21:00:00+00:00"
    assert str(m["ts"][2]) == "2026-02-17 21:00:00.010000+00:00"
    # a notification without a latency has no response time
    assert m["ts"][8] is None
    # the second initialize starts a second session
    assert m["session"].to_list() == ["relaunch"] * 9 + ["relaunch#2"] * 4
    calls = trace.calls.select("session", "method", "outcome").rows()
    assert calls == [
        ("relaunch", "initialize", "ok"),
        ("relaunch", "tools/list", "unanswered"),
        ("relaunch#2", "initialize", "ok"),
        ("relaunch#2", "ping", "unanswered"),
    ]


def test_no_recorded_at_means_no_times(tmp_path: Path) -> None:
    path = cassette(tmp_path, [interaction(INIT, INIT_RESULT, 10)], recorded_at=None)
    trace = mcptrace.load(path)
    assert trace.messages["ts"].null_count() == 2
    assert trace.messages["ts_quality"].cast(pl.String).unique().to_list() == ["none"]
    assert "no readable `metadata.recorded_at`" in trace.sources["note"].item()
    assert trace.calls["latency_ms"].to_list() == [None]


def test_server_and_transport_without_metadata_fields(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        [interaction(INIT, INIT_RESULT), interaction(req(1, "x"), err(1, -32601), 2)],
        server_url="",
        transport_type=None,
        server_info={"name": "Calc"},
    )
    m = mcptrace.load(path).messages
    assert m["server"].unique().to_list() == ["Calc"]
    assert m["transport"].cast(pl.String).unique().to_list() == ["unknown"]
    stdio_url = cassette(tmp_path, [interaction(INIT, INIT_RESULT)], name="s.json",
                         server_url="stdio://uv run server.py", transport_type=None)  # fmt: skip
    assert mcptrace.load(stdio_url).messages["transport"].cast(pl.String).unique().to_list() == [
        "stdio"
    ]


def test_bad_documents_are_invalid_rows_not_exceptions(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": "1.0", "interactions": [')
    trace = mcptrace.load(broken, format="mcp-recorder")
    assert kinds(trace.messages) == ["invalid"]
    assert trace.messages["parse_error"][0].startswith("cassette is not valid JSON: ")
    array = tmp_path / "array.json"
    array.write_text("[1, 2]")
    m = mcptrace.load(array, format="mcp-recorder").messages
    assert m["parse_error"][0] == "cassette is a JSON array, not a recorded session"
    newer = cassette(tmp_path, [interaction(INIT, INIT_RESULT)], name="v2.json")
    doc = json.loads(newer.read_text())
    doc["version"] = "2.0"
    newer.write_text(json.dumps(doc))
    note_text = mcptrace.load(newer).sources["note"].item()
    assert 'cassette format version "2.0": read as 1.x' in note_text


@pytest.mark.parametrize("layout", [None, 4])
def test_other_layouts_still_find_lines(tmp_path: Path, layout: int | None) -> None:
    path = tmp_path / "c.json"
    doc = json.loads(HTTP.read_text())
    path.write_text(json.dumps(doc, indent=layout))
    m = mcptrace.load(path).messages
    assert m.height == 13
    if layout is None:
        assert m["line"].unique().to_list() == [1]
    else:
        assert m["line"].is_sorted() and m["line"].n_unique() == 13


def test_a_latency_ending_after_the_year_9999_leaves_the_time_unknown(tmp_path: Path) -> None:
    path = cassette(
        tmp_path,
        [
            interaction(INIT, INIT_RESULT, 5000, timestamp="9999-12-31T23:59:59Z"),
            interaction(req(1, "tools/list"), res(1, {"tools": []}), 1e300),
        ],
    )
    m = mcptrace.load(path).messages
    assert m["ts"].to_list()[:2] == [datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), None]
    # the interaction's problems are said on its request
    assert m["parse_error"][0] == (
        "`latency_ms` ends the exchange after the year 9999: its time is unknown"
    )
