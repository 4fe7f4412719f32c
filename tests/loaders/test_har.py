"""The HAR (HTTP Archive) loader: Streamable HTTP exchanges as message rows."""

from __future__ import annotations

import base64
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, err, initialize, initialize_result, note, req, res

import mcptrace
from mcptrace.linter import lint
from mcptrace.loaders import FORMATS, detect, har
from mcptrace.loaders.base import NOT_JSON, Head, make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS
from mcptrace.writers import capture_records

LEGACY = SAMPLES / "har" / "streamable-http-2025-11-25.har"
MODERN = SAMPLES / "har" / "streamable-http-2026-07-28.har"
URL = "https://mcp.example.org/mcp"
T0 = "2026-08-01T10:00:00.000Z"


def exchange(
    body: Any = None,
    *,
    status: int = 200,
    response: Any = None,
    mime: str = "application/json",
    method: str = "POST",
    url: str = URL,
    headers: dict[str, str] | None = None,
    resp_headers: dict[str, str] | None = None,
    started: str = T0,
    time: float = 25.0,
    encoding: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One HAR entry; dict/list bodies are JSON-encoded, strings written as they are."""
    request: dict[str, Any] = {
        "method": method,
        "url": url,
        "httpVersion": "HTTP/1.1",
        "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()],
    }
    if body is not None:
        text = body if isinstance(body, str) else orjson.dumps(body).decode()
        request["postData"] = {"mimeType": "application/json", "text": text}
    content: dict[str, Any] = {"mimeType": mime}
    if response is not None:
        text = response if isinstance(response, str) else orjson.dumps(response).decode()
        content["text"] = text
        content["size"] = len(text)
    if encoding is not None:
        content["encoding"] = encoding
    entry: dict[str, Any] = {
        "startedDateTime": started,
        "time": time,
        "request": request,
        "response": {
            "status": status,
            "statusText": "",
            "headers": [{"name": k, "value": v} for k, v in (resp_headers or {}).items()],
            "content": content,
        },
        "timings": {"send": 0, "wait": time, "receive": 0},
    }
    entry.update(extra)
    return entry


def write_har(path: Path, entries: list[Any], *, indent: bool = True) -> Path:
    doc = {
        "log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}
    }
    option = orjson.OPT_INDENT_2 if indent else 0
    path.write_bytes(orjson.dumps(doc, option=option))
    return path


def load(tmp_path: Path, entries: list[Any], **kw: Any) -> mcptrace.Trace:
    return mcptrace.load(write_har(tmp_path / "capture.har", entries, **kw))


def kinds(df: pl.DataFrame) -> list[str]:
    return df["kind"].cast(pl.String).to_list()


def directions(df: pl.DataFrame) -> list[str]:
    return df["direction"].cast(pl.String).to_list()


def headers_of(row: dict[str, Any]) -> dict[str, str]:
    value: dict[str, str] = orjson.loads(row["http_headers"])
    return value


# -- the samples ----------------------------------------------------------------------


def test_legacy_sample_is_detected_from_content_not_name(tmp_path: Path) -> None:
    path = tmp_path / "export.txt"
    shutil.copy(LEGACY, path)
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    CALLS.validate(trace.calls)
    SESSIONS.validate(trace.sessions)
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["detected"], src["rows"], src["invalid"]) == (
        "har",
        "content",
        20,
        0,
    )
    assert src["note"] == (
        "3 entries without JSON-RPC (not MCP) skipped; 1 server stream event(s) placed "
        "where they may have been, between the messages they must follow and precede (a "
        "HAR keeps no time per event): rules that judge order leave them out, and a server "
        "request among them has no latency"
    )
    assert not src["truncated"]
    assert kinds(m) == [
        "request", "response",  # initialize
        "notification", "transport",  # notifications/initialized -> 202
        "transport", "transport",  # GET stream opened: priming event
        "request", "response",  # tools/list (base64 body)
        "request", "transport", "notification", "notification", "response",  # SSE
        "request", "transport",  # 401
        "request", "response",
        # DELETE, and the GET stream's list_changed where the stream ended (09:41:27.766),
        # before the DELETE's answer (a HAR has no time per event)
        "transport", "notification", "transport",
    ]  # fmt: skip
    assert directions(m)[:4] == ["c2s", "s2c", "c2s", "s2c"]
    # only the list_changed's place is chosen: the priming event opens the stream
    assert m.filter(pl.col("unordered"))["method"].to_list() == ["notifications/tools/list_changed"]
    assert trace.unordered_sessions == frozenset()
    assert m["transport"].cast(pl.String).unique().to_list() == ["http"]
    # the initialize request has no session header yet: its response issues the id
    assert m["session"].unique().to_list() == ["c9a1f3e2-5b7d-4e8a-9f10-2d3c4b5a6e7f"]
    assert m["server"].unique().to_list() == ["docs-mcp.example.net"]
    s = trace.sessions.row(0, named=True)
    assert (s["revision"], s["revision_source"], s["client_name"]) == (
        "2025-11-25",
        "initialize",
        "docs-web-agent",
    )


def test_legacy_sample_rows_carry_http_facts() -> None:
    m = mcptrace.load(LEGACY).messages
    rows = m.to_dicts()
    init_req, init_res, initialized, accepted = rows[:4]
    assert (init_req["http_method"], init_req["http_status"]) == ("POST", 200)
    assert headers_of(init_req)["accept"] == "application/json, text/event-stream"
    assert "mcp-session-id" not in headers_of(init_req)
    assert headers_of(init_res)["mcp-session-id"] == "c9a1f3e2-5b7d-4e8a-9f10-2d3c4b5a6e7f"
    # the status of the exchange is on the request row too
    assert (initialized["http_status"], accepted["http_status"]) == (202, 202)
    assert accepted["message"] == "HTTP 202 Accepted (no body)"
    assert headers_of(initialized)["mcp-protocol-version"] == "2025-11-25"
    unauthorized = m.filter((pl.col("http_status") == 401) & (pl.col("kind") == "transport"))
    text = unauthorized["message"].item()
    assert text.startswith('HTTP 401 Unauthorized: {"error":"invalid_token"')
    assert "www-authenticate" in headers_of(unauthorized.row(0, named=True))
    delete = m.filter(pl.col("http_method") == "DELETE")
    assert delete["message"].to_list() == ["HTTP DELETE /mcp (no body)", "HTTP 200 OK (no body)"]


def test_legacy_sample_lines_point_at_entries() -> None:
    m = mcptrace.load(LEGACY).messages
    text = LEGACY.read_text().split("\n")
    doc = orjson.loads(LEGACY.read_bytes())
    lines = m["line"].unique(maintain_order=True).to_list()
    assert len(lines) == len(doc["log"]["entries"]) - 3  # the MCP entries
    for line in lines:
        assert text[line - 1] == "      {", line  # log.entries[i] at indent 2
    # rows of one entry share its line: request, then its response
    assert m["line"][:4].to_list() == [lines[0], lines[0], lines[1], lines[1]]


def test_legacy_sample_times_and_calls() -> None:
    trace = mcptrace.load(LEGACY)
    m = trace.messages
    # request at startedDateTime, response at startedDateTime + time (derived)
    assert str(m["ts"][0]) == "2025-12-04 09:41:17.204000+00:00"
    assert str(m["ts"][1]) == "2025-12-04 09:41:17.245300+00:00"
    quality = m["ts_quality"].cast(pl.String).to_list()
    assert quality == ["exact" if d == "c2s" else "derived" for d in directions(m)]
    calls = trace.calls.select("id", "method", "target", "latency_ms", "outcome")
    assert calls.rows() == [
        ("0", "initialize", None, 41.3, "ok"),
        ("1", "tools/list", None, 12.6, "ok"),
        ("2", "tools/call", "search_docs", 412.7, "ok"),
        ("3", "tools/call", "fetch_page", None, "unanswered"),  # 401: no JSON-RPC answer
        ("4", "tools/call", "fetch_page", 58.9, "ok"),
    ]
    # every SSE event of one stream is timed at the end of the stream
    sse = m.filter(pl.col("line") == m.filter(pl.col("id") == "2")["line"][0])
    assert sse["ts"][1:].n_unique() == 1


def test_legacy_sample_sse_events() -> None:
    m = mcptrace.load(LEGACY).messages
    call = m.filter(pl.col("line") == m.filter(pl.col("id") == "2")["line"][0])
    # priming event (id, empty data) is a transport row; the keep-alive comment no row
    assert call["message"][1] == "SSE event (id 2f6d0c1e-0) without data"
    assert call["raw"][1] == "id: 2f6d0c1e-0\ndata: "
    # a message split over two data: lines is joined with a newline
    progress = call.filter(pl.col("method") == "notifications/progress")["message"].to_list()
    assert progress[1] == (
        '{"jsonrpc":"2.0","method":"notifications/progress",\n'
        ' "params":{"progressToken":"p-2","progress":2,"total":3,"message":"ranking"}}'
    )
    assert call.filter(pl.col("kind") == "notification")["progress_token"].to_list() == [
        '"p-2"',
        '"p-2"',
    ]


def test_modern_sample_lint_flags_the_header_body_mismatch() -> None:
    trace = mcptrace.load(MODERN)
    m = trace.messages
    assert m["session"].unique().to_list() == ["https://weather.example.com/mcp"]
    note_text = trace.sources["note"][0]
    assert "keyed by their endpoint: https://weather.example.com/mcp" in note_text
    s = trace.sessions.row(0, named=True)
    assert (s["revision"], s["revision_source"]) == ("2026-07-28", "meta")
    findings = mcptrace.lint(trace)
    ht = findings.filter(pl.col("code").str.starts_with("HT"))
    assert ht.select("code", "line").rows() == [("HT004", 321)]
    assert ht["message"][0] == 'Mcp-Name header "forecast" does not match body value "alerts"'
    # the -32022 and -32020 rejections use 400, as 2026-07-28 requires: no HT006
    errors = m.filter(pl.col("kind") == "error").select("error_code", "http_status").rows()
    assert errors == [(-32020, 400), (-32022, 400)]
    text = MODERN.read_text().split("\n")
    assert text[320] == "            {"  # log.entries[i] at indent 4


# -- detection ------------------------------------------------------------------------


def test_sniff_needs_log_entries(tmp_path: Path) -> None:
    path = write_har(tmp_path / "a.json", [exchange(req(1, "ping"), response=res(1))])
    assert detect(read_content(path)) == "har"
    head = make_head(read_content(path))
    assert har.sniff(head) == 95
    others = [
        {"log": {"entries": {}}},
        {"log": "x"},
        {"resourceSpans": []},
        [{"log": {"version": "1.2", "entries": []}}],
    ]
    for doc in others:
        p = tmp_path / "b.json"
        p.write_bytes(orjson.dumps(doc))
        assert har.sniff(make_head(read_content(p))) == 0, doc
    no_version = tmp_path / "c.json"
    no_version.write_bytes(orjson.dumps({"log": {"entries": []}}))
    assert har.sniff(make_head(read_content(no_version))) == 70


def test_sniff_reads_the_head_of_a_document_too_big_to_parse() -> None:
    lines = ["{", '  "log": {', '    "version": "1.2",', '    "creator": {']
    assert har.sniff(Head(source="x", lines=lines, parsed=[NOT_JSON] * 4, whole=NOT_JSON)) == 75
    other = ["{", '  "data": {']
    assert har.sniff(Head(source="x", lines=other, parsed=[NOT_JSON] * 2, whole=NOT_JSON)) == 0


def test_format_is_listed() -> None:
    assert FORMATS["har"] is har
    assert "HAR" in har.DESCRIPTION


# -- bodies ---------------------------------------------------------------------------


def test_json_request_and_response_and_202(tmp_path: Path) -> None:
    m = load(
        tmp_path,
        [
            exchange(req(1, "tools/list"), response=res(1, {"tools": []})),
            exchange(note("notifications/initialized"), status=202, response="", mime="x-unknown"),
        ],
    ).messages
    assert kinds(m) == ["request", "response", "notification", "transport"]
    assert directions(m) == ["c2s", "s2c", "c2s", "s2c"]
    assert m["message"][0] == '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    assert m["raw"][0] == m["message"][0]  # the request body as captured
    assert m["message"][3] == "HTTP 202 Accepted (no body)"
    assert m["http_status"].to_list() == [200, 200, 202, 202]
    assert m["http_method"].to_list() == ["POST"] * 4


def test_batches_on_both_sides(tmp_path: Path) -> None:
    m = load(
        tmp_path,
        [
            exchange(
                [req(1, "tools/list"), note("notifications/initialized")],
                response=[res(1)],
            )
        ],
    ).messages
    assert kinds(m) == ["request", "notification", "response"]
    assert m["batch_index"].to_list() == [0, 1, 0]
    assert m["batched"].all()


def test_base64_bodies_are_decoded(tmp_path: Path) -> None:
    body = orjson.dumps(res(1, {"tools": [{"name": "café"}]}))
    entries = [
        exchange(req(1, "tools/list"), response=base64.b64encode(body).decode(), encoding="base64"),
        exchange(req(2, "tools/list"), response="not base64!", encoding="base64"),
        exchange(req(3, "tools/list"), response=res(3), encoding="gzip"),
    ]
    m = load(tmp_path, entries).messages
    assert m["message"][1] == body.decode()
    assert kinds(m) == ["request", "response", "request", "invalid", "request", "response"]
    assert m["parse_error"][3].startswith("`content.text` is not valid base64 (kept as it is)")
    assert m["parse_error"][5] == 'unknown `content.encoding` "gzip": body read as text'


def test_headers_are_a_json_object_per_side(tmp_path: Path) -> None:
    entry = exchange(
        req(1, "tools/list"),
        response=res(1),
        headers={"Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"},
        resp_headers={"Content-Type": "application/json"},
    )
    entry["response"]["headers"].append({"name": "Vary", "value": "Origin"})
    entry["response"]["headers"].append({"name": "Vary", "value": "Accept"})
    m = load(tmp_path, [entry]).messages
    assert headers_of(m.row(0, named=True)) == {
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    assert headers_of(m.row(1, named=True)) == {
        "Content-Type": "application/json",
        "Vary": "Origin, Accept",
    }


def test_a_header_repeated_with_the_same_value_is_kept_once(tmp_path: Path) -> None:
    """chrome-har writes each header twice: the exchange stays in its session. Different
    values of one name are still joined as HTTP joins them."""
    entries = [
        exchange(
            initialize("2025-11-25"),
            response=initialize_result("2025-11-25"),
            resp_headers={"Mcp-Session-Id": "s1"},
        ),
        exchange(req(1, "tools/list"), response=res(1, {"tools": []})),
    ]
    repeated = [
        {"name": "Mcp-Session-Id", "value": "s1"},
        {"name": "Mcp-Session-Id", "value": "s1"},
        {"name": "Accept", "value": "application/json"},
        {"name": "Accept", "value": "text/event-stream"},
    ]
    entries[1]["request"]["headers"] = repeated
    trace = load(tmp_path, entries)
    assert trace.messages["session"].unique().to_list() == ["s1"]
    headers = orjson.loads(trace.messages["http_headers"][2])
    assert headers == {"Mcp-Session-Id": "s1", "Accept": "application/json, text/event-stream"}


def test_a_request_body_the_har_did_not_save_is_a_lost_message(tmp_path: Path) -> None:
    """A body kept only as its size (omitted content) or as form params (chrome-har) is
    a message cut from the capture: an invalid row saying so, not a bodiless request,
    and its response is then no orphan (PR003). A GET has no body to lose."""
    sid = {"Mcp-Session-Id": "s1"}

    def streamed(*messages: Any) -> str:
        return "".join(f"data: {orjson.dumps(m).decode()}\n\n" for m in messages)

    def progress(token: str) -> dict[str, Any]:
        return note("notifications/progress", {"progressToken": token, "progress": 1})

    entries = [
        exchange(
            initialize("2025-11-25"), response=initialize_result("2025-11-25"), resp_headers=sid
        ),
        # the lost request carried the token its progress names: no PG003 for it
        exchange(req(2, "tools/list"), headers=sid, mime="text/event-stream",
                 response=streamed(progress("t2"), res(2, {"tools": []}))),
        exchange(req(3, "ping"), headers=sid, response=res(3)),
        exchange(method="GET", headers=sid, status=405),
    ]  # fmt: skip
    entries[1]["request"]["postData"]["text"] = ""
    entries[1]["request"]["bodySize"] = 45
    entries[2]["request"]["postData"] = {
        "mimeType": "application/json",
        "params": [{"name": "id", "value": "3"}],
    }
    trace = load(tmp_path, entries)
    client = trace.messages.filter(pl.col("direction") == "c2s")
    assert kinds(client) == ["request", "invalid", "invalid", "transport"]
    assert lint(trace, select=["PG003"]).is_empty()
    assert client["parse_error"].to_list()[1:3] == [
        "the request body (45 bytes) was not saved in the HAR: the message it carried is cut "
        "from the capture",
        "the request body was saved as form parameters, not as its text: the message it "
        "carried is cut from the capture",
    ]
    assert lint(trace, select=["PR003"]).is_empty()


def test_a_2026_request_is_not_grouped_by_a_session_id_the_server_ignored(
    tmp_path: Path,
) -> None:
    """2026-07-28 has no sessions: an Mcp-Session-Id the client sends anyway (the server
    must ignore it) does not split its exchanges off the others; one the server answers
    with, as a legacy server does, still groups them."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    modern = {"MCP-Protocol-Version": "2026-07-28"}
    entries = [
        exchange(req(1, "tools/list", {"_meta": meta}), headers=modern, response=res(1)),
        exchange(
            req(2, "tools/list", {"_meta": meta}),
            headers={**modern, "Mcp-Session-Id": "abc"},
            response=res(2),
        ),
        exchange(
            req(3, "tools/list"),
            headers={"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "s-9"},
            response=res(3),
            resp_headers={"Mcp-Session-Id": "s-9"},
        ),
    ]
    sessions = load(tmp_path, entries).messages["session"].to_list()
    assert sessions == [URL, URL, URL, URL, "s-9", "s-9"]


def test_a_response_still_arriving_when_the_har_was_written(tmp_path: Path) -> None:
    # Playwright closes a context with a GET stream open: size -1, no text
    entry = exchange(method="GET", headers={"Mcp-Session-Id": "s1"}, mime="text/event-stream")
    entry["response"]["content"]["size"] = -1
    row = load(tmp_path, [entry]).messages.row(1, named=True)
    assert row["message"] == "HTTP 200 OK (unfinished: what it carried is not in the HAR)"
    assert row["parse_error"] == "the response was still arriving when the HAR was written"


def _attached_entries() -> list[dict[str, Any]]:
    """Two exchanges whose bodies Playwright kept as files (``content: "attach"``)."""
    entries = [
        exchange(initialize("2025-11-25"), response=initialize_result("2025-11-25")),
        exchange(req(2, "tools/list"), response=res(2, {"tools": []})),
    ]
    entries[1]["request"]["postData"] = {"mimeType": "application/json", "text": "",
                                         "_file": "aa11.json"}  # fmt: skip
    entries[1]["response"]["content"] = {"mimeType": "application/json", "size": 30,
                                         "_file": "bb22.json"}  # fmt: skip
    return entries


ATTACHED = {
    "aa11.json": orjson.dumps(req(2, "tools/list")),
    "bb22.json": orjson.dumps(res(2, {"tools": []})),
}


def test_bodies_kept_as_files_beside_the_har_are_read(tmp_path: Path) -> None:
    path = write_har(tmp_path / "capture.har", _attached_entries())
    for name, data in ATTACHED.items():
        (tmp_path / name).write_bytes(data)
    trace = mcptrace.load(path)
    assert trace.calls["outcome"].to_list() == ["ok", "ok"]
    # a file that is not there: the loss is said, once for the file
    (tmp_path / "aa11.json").unlink()
    trace = mcptrace.load(path)
    assert kinds(trace.messages)[2] == "invalid"  # the request, of its size only
    note = trace.sources["note"].item()
    assert "1 body kept as separate files (`_file`) not found beside the HAR" in note


def test_a_playwright_har_zip_archive_is_read_with_its_attachments(tmp_path: Path) -> None:
    import zipfile

    har_text = write_har(tmp_path / "x.har", _attached_entries()).read_bytes()
    archive = tmp_path / "recording.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("har.har", har_text)
        for name, data in ATTACHED.items():
            zf.writestr(name, data)
    trace = mcptrace.load(archive)
    assert trace.calls["outcome"].to_list() == ["ok", "ok"]
    assert trace.sources["format"].item() == "har"
    assert "read har.har from the zip archive" in trace.sources["note"].item()
    # a zip without a HAR is no capture
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("a.txt", "hello")
    with pytest.raises(mcptrace.errors.CaptureError, match="binary content"):
        mcptrace.load(other)


def test_http_sse_posts_whose_stream_was_not_saved(tmp_path: Path) -> None:
    """The MCP Inspector's proxy over a browser: the old HTTP+SSE transport, whose GET
    stream a browser does not save while it is open. The POSTs to
    `/message?sessionId=...` are told apart by that id, their `202 Accepted` text bodies
    are transport rows, and the sessions are judged as that transport (no Streamable
    HTTP Accept rule, HT008)."""
    url = "http://localhost:6277/message?sessionId={}&other=1"
    accept = {"Accept": "application/json"}
    entries = [
        exchange(initialize("2024-11-05"), url=url.format("a"), headers=accept, status=202,
                 response="Accepted", mime="text/plain"),
        exchange(initialize("2024-11-05"), url=url.format("b"), headers=accept, status=202,
                 response="Accepted", mime="text/plain"),
    ]  # fmt: skip
    trace = load(tmp_path, entries)
    m = trace.messages
    assert m["session"].unique(maintain_order=True).to_list() == [
        "http://localhost:6277/message?sessionId=a",
        "http://localhost:6277/message?sessionId=b",
    ]
    assert kinds(m) == ["request", "transport", "request", "transport"]
    assert m["message"][1] == "HTTP 202 Accepted: Accepted"
    found = lint(trace)
    assert "HT008" not in found["code"].to_list()
    assert "PR001" not in found["code"].to_list()


def test_a_lost_stream_is_a_capture_cut_and_empty_bodies_lose_nothing(tmp_path: Path) -> None:
    """A GET stream the HAR did not finish carried the server's roots/list: the client's
    answer to it is no orphan (PR003). A 202 whose reading the SDK cancelled (the browser
    records ERR_ABORTED) lost nothing: one row, no failure."""
    sid = {"Mcp-Session-Id": "s1"}
    entries = [
        exchange(
            initialize("2025-06-18"), response=initialize_result("2025-06-18"), resp_headers=sid
        ),
        exchange(method="GET", headers=sid, mime="text/event-stream"),
        exchange(res(0, {"roots": []}), headers=sid, status=202),
    ]
    entries[1]["response"]["content"]["size"] = -1
    entries[1]["response"]["_failureText"] = "net::ERR_ABORTED"
    entries[2]["response"]["_failureText"] = "net::ERR_ABORTED"
    entries[2]["response"]["content"]["size"] = -1
    trace = load(tmp_path, entries)
    texts = trace.messages.filter(pl.col("kind") == "transport")["message"].to_list()
    assert texts == [
        "HTTP GET /mcp (no body)",
        "HTTP 200 OK (unfinished: what it carried is not in the HAR)",
        "HTTP exchange failed after its response began (net::ERR_ABORTED): what it carried "
        "is not in the HAR",
        "HTTP 202 Accepted (no body)",
    ]
    assert lint(trace, select=["PR003"]).is_empty()


def test_unanswered_requests_name_the_http_exchange(tmp_path: Path) -> None:
    """PR006 on a HAR: a request whose exchange got no HTTP response says so (the client
    gave up on it, or it failed); one refused with an HTTP error status was answered."""
    sid = {"Mcp-Session-Id": "s-1"}
    entries = [
        exchange(
            initialize("2025-11-25"), response=initialize_result("2025-11-25"), resp_headers=sid
        ),
        exchange(
            req(1, "tools/call", {"name": "slow"}),
            headers=sid,
            status=0,
            _error="net::ERR_ABORTED",
        ),
        exchange(req(2, "tools/call", {"name": "x"}), headers=sid, status=400, response="Bad"),
        exchange(req(3, "tools/call", {"name": "y"}), headers=sid, status=202),
        exchange(req(4, "tools/list"), headers=sid, response=res(4, {"tools": []})),
    ]
    found = lint(load(tmp_path, entries), select=["PR006"])
    assert found["message"].to_list() == [
        "request tools/call id 1 was never answered, although the server kept sending "
        "messages; its HTTP exchange broke off before the answer (failed, or abandoned by "
        "the client without notifications/cancelled)",
        "request tools/call id 3 was never answered, although the server kept sending messages",
    ]


def test_error_responses(tmp_path: Path) -> None:
    entries = [
        # a JSON-RPC error sent with an HTTP error status
        exchange(req(1, "tools/call"), status=400, response=err(1, -32602, "bad")),
        # a proxy's HTML page
        exchange(req(2, "tools/list"), status=502, response="<html>Bad gateway</html>"),
        # a 2xx whose body is not JSON: the client cannot read it
        exchange(req(3, "tools/list"), response="OK", mime="text/plain"),
        # the request never got an answer (status 0, as browsers record it)
        exchange(req(4, "tools/list"), status=0, _error="net::ERR_CONNECTION_RESET"),
    ]
    trace = load(tmp_path, entries)
    m = trace.messages
    assert kinds(m) == [
        "request", "error", "request", "transport", "request", "invalid", "request", "transport",
    ]  # fmt: skip
    assert m["message"][3] == "HTTP 502 Bad Gateway: <html>Bad gateway</html>"
    assert m["parse_error"][5].startswith("invalid JSON")
    assert m["message"][7] == (
        "no HTTP response (the request failed or was cancelled: net::ERR_CONNECTION_RESET)"
    )
    assert m["http_status"][6] is None
    assert trace.calls.filter(pl.col("id") == "1")["error_code"].item() == -32602


def test_requests_without_body_and_bad_request_bodies(tmp_path: Path) -> None:
    mcp = {"Mcp-Session-Id": "s-1"}
    entries = [
        exchange(method="GET", headers=mcp, response="", mime="text/event-stream"),
        exchange("{not json", headers=mcp, status=400, response=""),
        exchange({"foo": 1}, headers=mcp, status=400, response=""),
    ]
    m = load(tmp_path, entries).messages
    assert kinds(m) == ["transport", "transport", "invalid", "transport", "invalid", "transport"]
    assert m["message"][0] == "HTTP GET /mcp (no body)"
    assert m["parse_error"][2].startswith("invalid JSON")
    assert m["parse_error"][4].startswith("not a JSON-RPC message")
    assert m["session"].unique().to_list() == ["s-1"]


# -- SSE ------------------------------------------------------------------------------


def sse_exchange(stream: str, **kw: Any) -> dict[str, Any]:
    return exchange(
        req(1, "tools/call", {"name": "t"}), response=stream, mime="text/event-stream", **kw
    )


def test_sse_events_are_split_by_the_sse_rules(tmp_path: Path) -> None:
    progress = orjson.dumps(note("notifications/progress", {"progressToken": 1, "progress": 1}))
    stream = (
        ": connected\r\n\r\n"  # a comment: no row
        "retry: 3000\n\n"  # no data: not an event
        f"event: message\nid: 7\ndata: {progress.decode()}\n\n"
        'data:{"jsonrpc":"2.0",\ndata:"id":1,\n'  # no space after the colon is fine too
        ": heartbeat inside an event\n"
        'data: "result":{}}\n\n'
        "event: endpoint\ndata: /messages?sessionId=abc\n\n"
    )
    m = load(tmp_path, [sse_exchange(stream)]).messages
    assert kinds(m) == ["request", "notification", "response", "transport"]
    assert m["message"][2] == '{"jsonrpc":"2.0",\n"id":1,\n"result":{}}'
    assert m["raw"][1] == f"event: message\nid: 7\ndata: {progress.decode()}"
    assert m["message"][3] == "SSE event `endpoint`: /messages?sessionId=abc"
    assert m["parse_error"].null_count() == m.height


def test_sse_stream_cut_before_the_end_of_an_event(tmp_path: Path) -> None:
    stream = 'data: {"jsonrpc":"2.0","id":1,"result":{}}'  # no blank line after it
    trace = load(tmp_path, [sse_exchange(stream)])
    m = trace.messages
    assert kinds(m) == ["request", "response"]
    assert m["parse_error"][1] == "SSE event not ended by a blank line: the stream was cut"
    src = trace.sources.row(0, named=True)
    assert src["truncated"]
    assert "1 SSE event(s) cut before their end" in src["note"]


def test_sse_stream_without_events(tmp_path: Path) -> None:
    m = load(tmp_path, [sse_exchange(": ping\n\n: ping\n\n")]).messages
    assert kinds(m) == ["request", "transport"]
    assert m["message"][1] == "HTTP 200 OK: SSE stream without events"


def test_sse_module_function() -> None:
    events = har.sse_events("data: a\ndata: b\n\nid: 3\ndata:\n\n:c\n\ndata: x")
    assert [(e.data, e.id, e.complete) for e in events] == [
        ("a\nb", None, True),
        ("", "3", True),
        ("x", None, False),
    ]


# -- times, sessions, skipped entries ---------------------------------------------------


def test_response_time_is_derived_from_time_or_timings(tmp_path: Path) -> None:
    no_time = exchange(req(2, "ping"), response=res(2), started="2026-08-01T10:00:01.000+02:00")
    del no_time["time"]
    no_time["timings"] = {"blocked": -1, "send": 1.5, "wait": 10, "receive": 0.5}
    nothing = exchange(req(3, "ping"), response=res(3), started="2026-08-01T10:00:02")
    del nothing["time"]
    del nothing["timings"]
    entries = [exchange(req(1, "ping"), response=res(1), time=12.5), no_time, nothing]
    m = load(tmp_path, entries).messages
    ts = [str(t) for t in m["ts"].to_list()]
    assert ts[:4] == [
        "2026-08-01 10:00:00+00:00",
        "2026-08-01 10:00:00.012500+00:00",
        "2026-08-01 08:00:01+00:00",
        "2026-08-01 08:00:01.012000+00:00",
    ]
    assert m["ts_quality"].cast(pl.String).to_list() == [
        "exact", "derived", "exact", "derived", "local", "none",
    ]  # fmt: skip
    assert m["parse_error"][5] == "entry without `time` or `timings`: the response time is unknown"


def test_sessions_from_headers_else_the_endpoint(tmp_path: Path) -> None:
    entries = [
        exchange(req(0, "initialize"), response=res(0), resp_headers={"Mcp-Session-Id": "abc"}),
        exchange(req(1, "ping"), response=res(1), headers={"mcp-session-id": "abc"}),
        exchange(req(1, "ping"), response=res(1), url="https://gw.example.org:8443/mcp/a?x=1"),
        exchange(req(1, "ping"), response=res(1), url="https://gw.example.org:8443/mcp/b"),
    ]
    trace = load(tmp_path, entries)
    assert trace.messages["session"].unique(maintain_order=True).to_list() == [
        "abc",
        "https://gw.example.org:8443/mcp/a",
        "https://gw.example.org:8443/mcp/b",
    ]
    assert trace.messages["server"][-1] == "gw.example.org:8443"
    # two servers behind one gateway keep their id spaces apart
    assert trace.calls["outcome"].cast(pl.String).to_list() == ["ok"] * 4


# -- the 2024-11-05 HTTP+SSE transport --------------------------------------------------

SSE_URL = "https://mcp.example.org/sse"
STARTS = [f"2024-12-02T10:00:0{i}.000Z" for i in range(10)]


def sse(*events: tuple[str, Any]) -> str:
    """An event stream: (event type, data) pairs; dict data is JSON-encoded."""
    parts = []
    for etype, data in events:
        text = data if isinstance(data, str) else orjson.dumps(data).decode()
        parts.append(f"event: {etype}\ndata: {text}\n\n")
    return "".join(parts)


def http_sse_session(
    stream: list[tuple[str, Any]], posts: list[Any], *, session_id: str = "5f0c1a", start: int = 0
) -> list[dict[str, Any]]:
    """A GET stream announcing `/messages?sessionId=...` first, then one POST per message
    (each answered `202 Accepted` with the body `Accepted`, as the SDKs answer)."""
    announced = ("endpoint", f"/messages?sessionId={session_id}")
    get = exchange(
        method="GET",
        url=SSE_URL,
        response=sse(announced, *stream),
        mime="text/event-stream",
        started=STARTS[start],
        time=9000,
    )
    post_url = f"https://mcp.example.org/messages?sessionId={session_id}"
    return [get] + [
        exchange(
            body,
            url=post_url,
            status=202,
            response="Accepted",
            mime="text/plain",
            started=STARTS[start + 1 + i],
            time=20,
        )
        for i, body in enumerate(posts)
    ]


INITIALIZE = initialize("2024-11-05")
INITIALIZED_RESULT = initialize_result("2024-11-05", capabilities={"tools": {"listChanged": True}})


def test_http_sse_stream_and_its_posts_are_one_session_in_causal_order(tmp_path: Path) -> None:
    stream = [
        ("message", INITIALIZED_RESULT),
        ("message", res(1, {"tools": []})),
        ("message", note("notifications/progress", {"progressToken": "p1", "progress": 1})),
        ("message", req("s1", "ping")),
        ("message", res(2, {"content": []})),
        ("message", note("notifications/tools/list_changed")),
    ]
    posts = [
        INITIALIZE,
        note("notifications/initialized"),
        req(1, "tools/list"),
        req(2, "tools/call", {"name": "t", "arguments": {}, "_meta": {"progressToken": "p1"}}),
        res("s1"),
    ]
    trace = load(tmp_path, http_sse_session(stream, posts))
    m = trace.messages
    assert m["session"].unique().to_list() == ["https://mcp.example.org/messages?sessionId=5f0c1a"]
    shown = [
        (d, k, i or method or text.split(":")[0])
        for d, k, i, method, text in m.select(
            pl.col("direction").cast(pl.String),
            pl.col("kind").cast(pl.String),
            "id",
            "method",
            "message",
        ).rows()
    ]
    accepted = ("s2c", "transport", "HTTP 202 Accepted")
    assert shown == [
        ("c2s", "transport", "HTTP GET /sse (no body)"),
        ("s2c", "transport", "SSE event `endpoint`"),  # before the client posts to it
        ("c2s", "request", "0"), accepted, ("s2c", "response", "0"),
        ("c2s", "notification", "notifications/initialized"), accepted,
        ("c2s", "request", "1"), accepted, ("s2c", "response", "1"),
        ("c2s", "request", "2"), accepted,
        # during the call: its progress, a server request answered by the next POST
        ("s2c", "notification", "notifications/progress"),
        ("s2c", "request", '"s1"'),
        ("s2c", "response", "2"),
        ("s2c", "notification", "notifications/tools/list_changed"),
        ("c2s", "response", '"s1"'), accepted,
    ]  # fmt: skip
    # the POSTs' `Accepted` bodies are acknowledgements, not broken messages
    assert m.filter(pl.col("kind") == "invalid").is_empty()
    assert m.filter(pl.col("http_status") == 202, pl.col("direction") == "s2c")[
        "message"
    ].unique().to_list() == ["HTTP 202 Accepted: Accepted"]
    # a HAR has no time per event: the moved events have none rather than a made-up one
    events = m.filter(pl.col("http_method") == "GET", pl.col("direction") == "s2c")
    assert events["ts"].null_count() == events.height == 7
    assert events["ts_quality"].cast(pl.String).unique().to_list() == ["none"]
    calls = trace.calls.select("id", "method", "outcome", "latency_ms")
    assert calls.rows() == [
        ("0", "initialize", "ok", None),
        ("1", "tools/list", "ok", None),
        ("2", "tools/call", "ok", None),
        ('"s1"', "ping", "ok", None),
    ]
    s = trace.sessions.row(0, named=True)
    assert (s["revision"], s["revision_source"]) == ("2024-11-05", "initialize")
    assert "1 HTTP+SSE stream(s)" in (trace.sources["note"][0] or "")
    assert mcptrace.lint(trace).is_empty()


def test_http_sse_sessions_of_one_server_stay_apart(tmp_path: Path) -> None:
    # two clients of one server: the same request ids, streams listed before the POSTs
    first = http_sse_session([("message", INITIALIZED_RESULT)], [INITIALIZE], session_id="a1")
    second = http_sse_session(
        [("message", INITIALIZED_RESULT)], [INITIALIZE], session_id="b2", start=2
    )
    trace = load(tmp_path, [first[0], second[0], first[1], second[1]])
    assert trace.sessions["session"].sort().to_list() == [
        "https://mcp.example.org/messages?sessionId=a1",
        "https://mcp.example.org/messages?sessionId=b2",
    ]
    assert trace.calls["outcome"].cast(pl.String).to_list() == ["ok", "ok"]
    # each response right after the POST of its own session's request
    m = trace.messages.with_row_index()
    for name in trace.sessions["session"]:
        rows = m.filter(pl.col("session") == name, pl.col("kind").is_in(["request", "response"]))
        assert rows["kind"].cast(pl.String).to_list() == ["request", "response"]
        assert rows["index"].diff()[1] == 2  # the request, its 202, the response


def test_http_sse_response_before_its_request_was_posted_stays_in_stream_order(
    tmp_path: Path,
) -> None:
    # the server answers id 1 before id 0 although 0 was posted first: each response
    # still follows its own request, and the stream's order is kept
    stream = [("message", res(1, {})), ("message", INITIALIZED_RESULT)]
    trace = load(tmp_path, http_sse_session(stream, [INITIALIZE, req(1, "ping")]))
    ids = trace.messages.filter(pl.col("kind").is_in(["request", "response"]))
    assert ids.select(pl.col("kind").cast(pl.String), "id").rows() == [
        ("request", "0"),
        ("request", "1"),
        ("response", "1"),
        ("response", "0"),
    ]
    assert trace.calls["outcome"].cast(pl.String).to_list() == ["ok", "ok"]


def test_streamable_get_stream_events_are_placed_among_the_exchanges(tmp_path: Path) -> None:
    # the GET stream opens right after initialize and lasts until the end; its events
    # came after exchanges listed later in the HAR, which has no time per event
    session = {"Mcp-Session-Id": "s-1"}
    stream = "id: p0\ndata: \n\n" + "".join(
        f"data: {orjson.dumps(m).decode()}\n\n"
        for m in [
            note("notifications/progress", {"progressToken": "t2", "progress": 1}),
            req("srv-1", "ping"),
            note("notifications/resources/updated", {"uri": "file:///a"}),
        ]
    )
    entries = [
        exchange(req(0, "initialize"), response=res(0), resp_headers=session, started=STARTS[0]),
        exchange(
            method="GET",
            headers=session,
            response=stream,
            mime="text/event-stream",
            started=STARTS[1],
            time=8000,  # ends at 10:00:09
        ),
        exchange(req(1, "resources/subscribe", {"uri": "file:///a"}), response=res(1),
                 headers=session, started=STARTS[2]),
        exchange(req(2, "tools/call", {"name": "t", "_meta": {"progressToken": "t2"}}),
                 response=res(2), headers=session, started=STARTS[3], time=2000),
        exchange(res("srv-1"), status=202, headers=session, started=STARTS[4]),
        exchange(req(3, "tools/list"), response=res(3), headers=session, started=STARTS[5]),
    ]  # fmt: skip
    m = load(tmp_path, entries).messages
    shown = [
        (d, i or method or text.split(" (")[0])
        for d, i, method, text in m.select(
            pl.col("direction").cast(pl.String), "id", "method", "message"
        ).rows()
    ]
    assert shown == [
        ("c2s", "0"), ("s2c", "0"),
        ("c2s", "HTTP GET /mcp"), ("s2c", "SSE event"),  # the priming event opens it
        ("c2s", "1"), ("s2c", "1"),
        # progress while call 2 runs, before its result
        ("c2s", "2"), ("s2c", "notifications/progress"), ("s2c", "2"),
        ("s2c", '"srv-1"'),  # the server's ping, right before the POST answering it
        ("c2s", '"srv-1"'), ("s2c", "HTTP 202 Accepted"),
        ("c2s", "3"), ("s2c", "3"),
        # the update: after the subscribe, at most where the stream ended (after tools/list)
        ("s2c", "notifications/resources/updated"),
    ]  # fmt: skip
    # Streamable HTTP events keep the time the stream ended
    assert m.filter(pl.col("http_method") == "GET", pl.col("direction") == "s2c")[
        "ts"
    ].unique().to_list() == [datetime(2024, 12, 2, 10, 0, 9, tzinfo=UTC)]
    trace = mcptrace.load(tmp_path / "capture.har")
    assert mcptrace.lint(trace, select=["CP", "PG", "PR", "CN"]).is_empty()


def _stream_after_unsubscribe() -> list[dict[str, Any]]:
    """A session whose GET stream carries a resource update and an info log, sent (the
    HAR cannot say when) while the client subscribed to the resource at debug level and
    then unsubscribed and raised the level to warning; and a server ping on the stream."""
    session = {"Mcp-Session-Id": "s-2"}
    stream = "".join(
        f"data: {orjson.dumps(m).decode()}\n\n"
        for m in [
            note("notifications/resources/updated", {"uri": "file:///a"}),
            note("notifications/message", {"level": "info", "data": "reindexed"}),
            req("srv-1", "ping"),
        ]
    )
    capabilities = {"resources": {"subscribe": True}, "logging": {}}
    result = initialize_result("2025-11-25", capabilities=capabilities)
    return [
        exchange(initialize("2025-11-25"), response=result, resp_headers=session,
                 started=STARTS[0]),
        exchange(note("notifications/initialized"), status=202, headers=session, started=STARTS[1]),
        exchange(method="GET", headers=session, response=stream, mime="text/event-stream",
                 started=STARTS[2], time=6000),  # ends at 10:00:08
        exchange(req(1, "resources/subscribe", {"uri": "file:///a"}), response=res(1),
                 headers=session, started=STARTS[3]),
        exchange(req(2, "logging/setLevel", {"level": "debug"}), response=res(2),
                 headers=session, started=STARTS[4]),
        exchange(req(3, "resources/unsubscribe", {"uri": "file:///a"}), response=res(3),
                 headers=session, started=STARTS[5]),
        exchange(req(4, "logging/setLevel", {"level": "warning"}), response=res(4),
                 headers=session, started=STARTS[6]),
        exchange(res("srv-1"), status=202, headers=session, started=STARTS[7]),
    ]  # fmt: skip


def test_stream_events_placed_between_bounds_are_not_judged_by_order(tmp_path: Path) -> None:
    # placed as late as the stream allows, the update and the log would come after the
    # unsubscribe and the warning level: whether they did, the HAR cannot say
    trace = load(tmp_path, _stream_after_unsubscribe())
    m = trace.messages
    placed = m.filter(pl.col("unordered"))
    assert placed["method"].to_list() == [
        "notifications/resources/updated",
        "notifications/message",
        "ping",
    ]
    assert trace.unordered_sessions == frozenset()  # the rest of the session keeps its order
    assert mcptrace.lint(trace).filter(pl.col("code").is_in(["CP008", "LG003"])).is_empty()
    # the same messages in that order in a capture that records it are judged
    records = [
        {"session": "s", "dir": row["direction"], "msg": orjson.loads(row["message"])}
        for row in m.filter(pl.col("kind").is_in(["request", "response", "notification"]))
        .select(pl.col("direction").cast(pl.String), "message")
        .to_dicts()
    ]
    path = tmp_path / "ordered.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    found = mcptrace.lint(mcptrace.load(path))
    assert sorted(found.filter(pl.col("code").is_in(["CP008", "LG003"]))["code"]) == [
        "CP008",
        "LG003",
    ]
    # the server's ping: its place is chosen and its time is the stream's end, after
    # the client's answer: no latency, and the reason is said
    ping = trace.calls.filter(pl.col("method") == "ping").row(0, named=True)
    assert ping["response_ts"] < ping["request_ts"] and ping["latency_ms"] is None
    coverage = mcptrace.analysis.latency_coverage(trace, by="method")
    assert coverage.filter(pl.col("method") == "ping")["reversed"].item() == 1
    # a capture written from the HAR keeps which places were chosen
    out = tmp_path / "converted.jsonl"
    out.write_bytes(b"".join(line + b"\n" for line in capture_records(m)))
    again = mcptrace.load(out)
    assert again.messages["unordered"].to_list() == m["unordered"].to_list()
    assert again.unordered_sessions == frozenset()
    assert mcptrace.lint(again).filter(pl.col("code").is_in(["CP008", "LG003"])).is_empty()


def test_a_server_request_stamped_after_its_answer_has_no_latency(tmp_path: Path) -> None:
    # a tool call's SSE response carries the server's roots/list; the HAR stamps every
    # event with the stream's end, after the client POSTed its answer
    session = {"Mcp-Session-Id": "s-3"}
    stream = "".join(
        f"data: {orjson.dumps(m).decode()}\n\n"
        for m in [req("srv-1", "roots/list"), res(1, {"content": []})]
    )
    entries = [
        exchange(req(1, "tools/call", {"name": "t"}), response=stream, mime="text/event-stream",
                 headers=session, started=STARTS[0], time=3000),
        exchange(res("srv-1", {"roots": []}), status=202, headers=session, started=STARTS[1]),
    ]  # fmt: skip
    trace = load(tmp_path, entries)
    roots = trace.calls.filter(pl.col("method") == "roots/list").row(0, named=True)
    assert roots["outcome"] == "ok" and roots["latency_ms"] is None
    row = mcptrace.analysis.latency_coverage(trace).row(0, named=True)
    assert row["reversed"] == 1
    assert "1 with the response stamped before the request" in row["reason"]
    call = trace.calls.filter(pl.col("method") == "tools/call")["latency_ms"].item()
    assert call == 3000.0


@pytest.mark.parametrize("revision", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("closed", ["stream", "exchange", "broke off"])
@pytest.mark.parametrize("indent", [True, False])
def test_a_post_stream_closed_before_the_response(
    tmp_path: Path, revision: str, closed: str, indent: bool
) -> None:
    # the client gave up on call 2 by closing its POST's event stream (progress came,
    # no result), or before any response came (the browser's ERR_ABORTED), then called
    # again: 2026-07-28 calls that a cancellation, earlier revisions say a disconnection
    # is none
    modern = revision >= "2026-07-28"
    meta = {
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientCapabilities": {},
    }

    def call(i: int, name: str) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": {}}
        params["_meta"] = {**meta, "progressToken": i} if modern else {"progressToken": i}
        return req(i, "tools/call", params)

    progress = note("notifications/progress", {"progressToken": 2, "progress": 1})
    stream = f"data: {orjson.dumps(progress).decode()}\n\n" * 2
    session = {} if modern else {"Mcp-Session-Id": "s-4"}
    result = res(3, {"content": []})
    agreed = initialize_result(revision, capabilities={"tools": {}})
    entries = [] if modern else [
        exchange(initialize(revision), response=agreed, resp_headers={"Mcp-Session-Id": "s-4"},
                 started=STARTS[0]),
        exchange(note("notifications/initialized"), status=202, headers=session, started=STARTS[1]),
    ]  # fmt: skip
    # (Playwright's abort after the headers: a status, then a failure, no events saved)
    slow_call = {
        "stream": exchange(call(2, "slow"), response=stream, mime="text/event-stream",
                           headers=session, started=STARTS[2], time=1000),
        "exchange": exchange(call(2, "slow"), status=0, headers=session, started=STARTS[2],
                             _error="net::ERR_ABORTED"),
        "broke off": exchange(call(2, "slow"), mime="text/event-stream", headers=session,
                              started=STARTS[2]),
    }[closed]  # fmt: skip
    if closed == "broke off":
        slow_call["response"]["_failureText"] = "net::ERR_ABORTED"
    # a call answered with an empty 200 is no closed stream: it stays unanswered, also
    # in a HAR written on one line (every entry on line 1)
    entries += [
        slow_call,
        exchange(call(3, "fast"), response=result, headers=session, started=STARTS[4]),
        exchange(call(4, "mute"), response="", headers=session, started=STARTS[5]),
    ]  # fmt: skip
    trace = mcptrace.load(write_har(tmp_path / "capture.har", entries, indent=indent))
    assert trace.calls.filter(pl.col("target") == "mute")["outcome"].item() == "unanswered"
    slow = trace.calls.filter(pl.col("target") == "slow").row(0, named=True)
    found = mcptrace.lint(trace, select=["PR006"])
    found = found.filter(pl.col("message").str.contains("tools/call id 2 "))
    if modern:
        assert (slow["outcome"], slow["cancelled"], slow["cancel_line"]) == (
            "cancelled",
            True,
            None,
        )
        assert found.is_empty()
    else:
        assert (slow["outcome"], slow["cancelled"]) == ("unanswered", False)
        # an exchange that broke off after its status lost what came after it, perhaps
        # the answer: a capture cut, no PR006 (as after a line the capture tool cut)
        assert found["code"].to_list() == ([] if closed == "broke off" else ["PR006"])


@pytest.mark.parametrize("seed", [*range(40), 291])  # 291: an unbounded event after a bounded one
def test_stream_placement_only_reorders_rows(tmp_path: Path, seed: int) -> None:
    # random sessions of both transports, streams with any events, answers out of
    # order, missing times: the rows are those of the HAR read entry by entry, each
    # stream's events keep their order, and every other row keeps its order
    import random

    rng = random.Random(seed)
    messages = [
        req(1, "tools/list"), res(1), res(2), err(3), req("s1", "ping"), res("s1"),
        note("notifications/progress", {"progressToken": "t", "progress": 1}),
        note("notifications/resources/updated", {"uri": "file:///a"}), "not json",
    ]  # fmt: skip

    def stream() -> str:
        events = [("message", rng.choice(messages)) for _ in range(rng.randrange(0, 6))]
        if rng.random() < 0.5:
            events.insert(rng.randrange(len(events) + 1), ("endpoint", "/messages?sessionId=x"))
        return sse(*events)

    entries = []
    for i in range(rng.randrange(3, 12)):
        headers = {"Mcp-Session-Id": "m"} if rng.random() < 0.5 else {}
        if rng.random() < 0.4:
            entries.append(
                exchange(
                    method="GET",
                    url=rng.choice([SSE_URL, URL]),
                    headers=headers,
                    response=stream(),
                    mime="text/event-stream",
                    started=STARTS[i % 10],
                    time=rng.choice([10, 9000]),
                )
            )
        else:
            body = rng.choice(
                [
                    req(1, "tools/list"),
                    req(2, "tools/call", {"name": "t", "_meta": {"progressToken": "t"}}),
                    res("s1"),
                    note("notifications/initialized"),
                ]
            )
            url = rng.choice([URL, "https://mcp.example.org/messages?sessionId=x"])
            entries.append(
                exchange(
                    body,
                    url=url,
                    headers=headers,
                    status=rng.choice([200, 202]),
                    response=rng.choice(["Accepted", res(1), None]),
                    started=STARTS[i % 10],
                )
            )
    if rng.random() < 0.3:
        del entries[0]["startedDateTime"]
    m = load(tmp_path, entries).messages
    # each entry read alone (its stream's events then stay in place); an entry without
    # JSON-RPC gives no rows, and the others keep the order of their lines
    alone = [
        mcptrace.load(write_har(tmp_path / f"one-{i}.har", [e])).messages
        for i, e in enumerate(entries)
    ]
    alone = [one for one in alone if not one.is_empty()]
    lines = sorted(m["line"].unique().to_list())
    assert len(lines) == len(alone)
    for line, one in zip(lines, alone, strict=True):
        mine = m.filter(pl.col("line") == line).select("direction", "raw")
        assert mine.rows() == one.select("direction", "raw").rows()
    # the rows outside the streams keep their order
    kept = m.filter((pl.col("http_method") != "GET") | (pl.col("direction") == "c2s"))
    assert kept["line"].is_sorted()


def test_a_stream_without_endpoint_event_is_keyed_by_its_url(tmp_path: Path) -> None:
    get = exchange(
        method="GET",
        url=SSE_URL,
        response=sse(("message", note("notifications/tools/list_changed"))),
        mime="text/event-stream",
    )
    trace = load(tmp_path, [get])
    assert trace.messages["session"].unique().to_list() == [SSE_URL]
    assert trace.messages["ts"].null_count() == 0  # events keep the stream's end time


def test_non_mcp_entries_are_skipped_and_counted(tmp_path: Path) -> None:
    entries = [
        exchange(
            method="GET", url="https://app.example.org/", response="<html/>", mime="text/html"
        ),
        exchange({"event": "click"}, url="https://app.example.org/api", status=204),
        exchange(req(1, "ping"), response=res(1)),
    ]
    trace = load(tmp_path, entries)
    assert trace.messages.height == 2
    assert trace.sources["note"][0].startswith("2 entries without JSON-RPC (not MCP) skipped; ")
    one = load(tmp_path, entries[1:])
    assert one.sources["note"][0].startswith("1 entry without JSON-RPC (not MCP) skipped; ")


def test_a_response_body_not_saved(tmp_path: Path) -> None:
    entry = exchange(req(1, "tools/list"))
    entry["response"]["content"]["size"] = 812
    trace = load(tmp_path, [entry])
    m = trace.messages
    assert m["message"][1] == "HTTP 200 OK (body not saved: what it carried is not in the HAR)"
    assert m["parse_error"][1] == "the response body (812 bytes) was not saved in the HAR"
    assert trace.sources["truncated"][0]


# -- line numbers and malformed documents -----------------------------------------------


def test_lines_of_a_minified_har_and_of_odd_layouts(tmp_path: Path) -> None:
    entries = [exchange(req(1, "ping"), response=res(1)), exchange(req(2, "ping"), response=res(2))]
    assert load(tmp_path, entries, indent=False).messages["line"].to_list() == [1, 1, 1, 1]
    # keys named "log" / "entries" deeper inside do not confuse the tokenizer
    doc = {
        "log": {
            "creator": {"log": {"entries": [1, 2, 3]}, "x": '"entries": ['},
            "version": "1.2",
            "entries": entries,
        }
    }
    path = tmp_path / "odd.har"
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    m = mcptrace.load(path).messages
    text = path.read_text().split("\n")
    assert [text[n - 1] for n in m["line"].unique(maintain_order=True)] == ["      {", "      {"]


@pytest.mark.parametrize("layout", ["indent2", "indent4", "tabs", "crlf", "compact", "mixed"])
def test_entry_lines_by_layout_equal_the_tokenizer(layout: str) -> None:
    import json

    entries = [exchange(req(i, "ping"), response=res(i)) for i in range(5)]
    doc = {"log": {"version": "1.2", "pages": [{"id": "p"}], "entries": entries, "x": [{}]}}
    text = {
        "indent2": json.dumps(doc, indent=2),
        "indent4": json.dumps(doc, indent=4),
        "tabs": json.dumps(doc, indent="\t"),
        "crlf": json.dumps(doc, indent=2).replace("\n", "\r\n"),
        "compact": json.dumps(doc),
        # entries glued to each other (`}, {`): not a layout the shortcut takes
        "mixed": json.dumps(doc, indent=2).replace("},\n      {", "}, {"),
    }[layout]
    data = text.encode()
    assert har._entry_lines(data, 5) == har._entry_lines_tokenized(data, 5)
    if layout != "mixed":
        assert har._entry_lines_by_layout(data, 5) is not None
    else:
        assert har._entry_lines_by_layout(data, 5) is None


def test_entry_lines_fall_back_to_the_entry_index() -> None:
    assert har._entry_lines_tokenized(b'{"log": {"entries": [{}, {}]}}', 3) == [1, 2, 3]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b'{"log": {"version": "1.2", "entries": [', "HAR document is not valid JSON"),
        (b'{"log": {"version": "1.2"}}', "not a HAR document: an object without `log.entries`"),
        (b"[1, 2]", "not a HAR document: a JSON array without `log.entries`"),
    ],
)
def test_malformed_documents_are_one_invalid_row(tmp_path: Path, data: bytes, problem: str) -> None:
    path = tmp_path / "bad.har"
    path.write_bytes(data)
    trace = mcptrace.load(path, format="har")
    m = trace.messages
    assert kinds(m) == ["invalid"]
    assert m["parse_error"][0].startswith(problem)
    assert trace.errors.is_empty()


def test_a_cut_document_is_marked_truncated(tmp_path: Path) -> None:
    path = write_har(tmp_path / "cut.har", [exchange(req(1, "ping"), response=res(1))])
    path.write_bytes(path.read_bytes()[:-40])
    trace = mcptrace.load(path)  # still detected from its head
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["invalid"], src["truncated"]) == ("har", 1, True)
    assert src["note"] == "the HAR document ends in the middle: it was cut"


def _four_exchanges() -> list[dict[str, Any]]:
    # the third response's text holds brackets and quotes: a cut inside it must not be
    # taken for the end of an entry
    tricky = res(3, {"content": [{"type": "text", "text": 'x}]}, "y": [{'}]})
    return [
        exchange(req(1, "ping"), response=res(1)),
        exchange(req(2, "tools/list"), response=res(2, {"tools": []})),
        exchange(req(3, "tools/call", {"name": "t"}), response=tricky),
        exchange(req(4, "ping"), response=res(4)),
    ]


@pytest.mark.parametrize("indent", [True, False])
@pytest.mark.parametrize("inside", ["request", "tricky text", "timings"])
def test_a_document_cut_inside_an_entry_keeps_the_whole_entries(
    tmp_path: Path, indent: bool, inside: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an export stopped by a crash, or a copy cut short: the entries before the cut
    # are read, the cut one is reported where it starts
    whole = write_har(tmp_path / "whole.har", _four_exchanges(), indent=indent)
    data = whole.read_bytes()
    third = data.index(b"tools/call")
    at = {
        "request": third,
        "tricky text": data.index(b"x}]}", third) + 4,
        "timings": data.index(b'"timings"', data.index(b"x}]}")),
    }[inside]
    cut = tmp_path / "cut.har"
    cut.write_bytes(data[:at])
    expected = mcptrace.load(whole).messages
    if indent:
        # an indented document's entry ends are read from its layout, from the end:
        # the bracket-by-bracket scan (seconds for a 100 MB HAR) is not needed
        def no_scan(data: bytes, opening: int) -> tuple[list[int], bool]:
            raise AssertionError("scanned bracket by bracket")

        monkeypatch.setattr(har, "_entry_ends_scanned", no_scan)
    trace = mcptrace.load(cut)
    m = trace.messages
    assert kinds(m) == ["request", "response", "request", "response", "invalid"]
    assert m.head(4).drop("source").equals(expected.head(4).drop("source"))
    third_line = expected["line"][4]
    assert m["line"][4] == third_line
    assert m["parse_error"][4] == "HAR document cut in the middle of entry 3: 2 whole entries read"
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["invalid"], src["truncated"]) == ("har", 1, True)
    assert "it was cut; the 2 whole entries before the cut are read" in src["note"]
    # the cut draws its JR014 and nothing else: the lost exchange was not read at all
    found = sorted(mcptrace.lint(trace)["code"].to_list())
    assert found == sorted([*mcptrace.lint(mcptrace.load(whole))["code"].to_list(), "JR014"])


def test_a_document_cut_after_its_entries_keeps_them_all(tmp_path: Path) -> None:
    whole = write_har(tmp_path / "whole.har", _four_exchanges())
    cut = tmp_path / "cut.har"
    cut.write_bytes(whole.read_bytes().rstrip()[:-1])  # the document's closing brace
    m = mcptrace.load(cut).messages
    assert kinds(m) == ["request", "response"] * 4 + ["invalid"]
    assert m["parse_error"][8] == "HAR document cut after its entries: 4 whole entries read"


def test_entries_that_are_not_objects(tmp_path: Path) -> None:
    m = load(tmp_path, [42, exchange(req(1, "ping"), response=res(1)), None]).messages
    assert kinds(m) == ["invalid", "request", "response", "invalid"]
    assert m["parse_error"][0] == "HAR entry is a JSON integer"


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.har"
    path.write_bytes(b"")
    trace = mcptrace.load(path, format="har")
    assert trace.messages.height == 0


def test_a_time_ending_after_the_year_9999_leaves_the_response_untimed(tmp_path: Path) -> None:
    entry = exchange(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        response={"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
        started="9999-12-31T23:59:59.000Z",
        time=5000,
    )
    m = load(tmp_path, [entry]).messages
    assert kinds(m) == ["request", "response"]
    assert m["ts"][0] is not None and m["ts"][1] is None
    assert m["parse_error"][1] == (
        "`time` of 5000 ms ends after the year 9999: the response time is unknown"
    )
