"""The mcpsnoop loader: session JSONL written by the mcpsnoop proxy."""

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
from mcptrace.loaders import FORMATS, capture, inspector, mcpsnoop, stdio
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS

SAMPLE = SAMPLES / "mcpsnoop" / "session-server-filesystem-48213-7f3a1c9e2b04.jsonl"
SID = "server-filesystem-48213-7f3a1c9e2b04"
HTTP = "localhost:3000-7788-aabbccddeeff"


def env(
    seq: int,
    direction: str,
    *,
    session: str = "weather.py-9121-0a1b2c3d4e5f",
    label: str = "weather.py",
    transport: str = "stdio",
    ts: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One mcpsnoop envelope, keys in mcpsnoop's own order."""
    out: dict[str, Any] = {
        "session_id": session,
        "server_label": label,
        "seq": seq,
        "ts": ts or f"2025-11-03T09:00:{seq:02d}.5+01:00",
        "direction": direction,
        "transport": transport,
    }
    out.update(extra)
    return out


def http(seq: int, direction: str, ts: str | None = None, **extra: Any) -> dict[str, Any]:
    return env(
        seq,
        direction,
        session=HTTP,
        label="localhost:3000",
        transport="http",
        ts=ts or f"2025-11-03T09:05:{seq:02d}.000412Z",
        **extra,
    )


def kinds(df: pl.DataFrame) -> list[str]:
    return df["kind"].cast(pl.String).to_list()


def test_sample_is_detected_from_content_not_name(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    shutil.copy(SAMPLE, path)
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    CALLS.validate(trace.calls)
    SESSIONS.validate(trace.sessions)
    src = trace.sources.row(0, named=True)
    assert (src["format"], src["detected"], src["lines"], src["rows"]) == (
        "mcpsnoop",
        "content",
        20,
        20,
    )
    assert (src["invalid"], src["truncated"], src["note"]) == (0, False, None)
    assert m["line"].to_list() == list(range(1, 21))
    assert kinds(m) == [
        "log", "request", "stderr", "response", "notification", "request", "response",
        "request", "response", "request", "notification", "response", "request", "stderr",
        "response", "request", "error", "request", "response", "stderr",
    ]  # fmt: skip
    # the file name is irrelevant: session and server come from the records
    assert m["session"].unique().to_list() == [SID]
    assert m["server"].unique().to_list() == ["server-filesystem"]
    assert m["transport"].cast(pl.String).unique().to_list() == ["stdio"]
    assert m.filter(pl.col("kind") == "stderr")["message"].to_list() == [
        "Secure MCP Filesystem Server running on stdio",
        "[warn] denied access outside allowed directories: /etc/shadow",
        "Client disconnected (stdin closed), shutting down",
    ]
    meta = m.row(0, named=True)
    assert orjson.loads(meta["message"]) == {
        "command": [
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/home/dev/projects/demo",
        ],
        "cwd": "/home/dev/projects/demo",
    }
    assert meta["direction"] == "unknown"
    # RFC 3339 with a +01:00 offset and nanoseconds, read as UTC (to the microsecond)
    assert str(m["ts"][1]) == "2025-11-03 13:07:22.105182+00:00"
    assert m["ts_quality"].cast(pl.String).unique().to_list() == ["exact"]
    # Go re-encodes `raw`, so the message is compact JSON of it; raw keeps the whole line
    line9 = SAMPLE.read_text().splitlines()[8]
    assert m["raw"][8] == line9
    assert m["message"][8] == _json.dumps(orjson.loads(line9)["raw"])
    assert "<draft> & todo" in m["message"][11]


def test_sample_calls_pair_both_directions() -> None:
    trace = mcptrace.load(SAMPLE)
    calls = trace.calls
    got = calls.select("direction", "id", "method", "request_line", "response_line", "outcome")
    assert got.rows() == [
        ("c2s", "0", "initialize", 2, 4, "ok"),
        ("s2c", "0", "roots/list", 6, 7, "ok"),
        ("c2s", "1", "tools/list", 8, 9, "ok"),
        ("c2s", "2", "tools/call", 10, 12, "ok"),
        ("c2s", "3", "tools/call", 13, 15, "tool_error"),
        ("c2s", "4", "resources/list", 16, 17, "error"),
        ("s2c", "1", "ping", 18, 19, "ok"),
    ]
    assert calls["latency_ms"][0] == pytest.approx(808.844)
    assert calls.filter(pl.col("id") == "4")["error_code"].item() == -32601
    session = trace.sessions.row(0, named=True)
    assert (session["session"], session["server"], session["revision"]) == (
        SID,
        "server-filesystem",
        "2025-06-18",
    )
    assert (session["client_name"], session["server_name"]) == (
        "example-host",
        "secure-filesystem-server",
    )
    assert session["other"] == 4  # meta + 3 stderr


def test_sniff_scores() -> None:
    head = make_head(read_content(SAMPLE))
    assert mcpsnoop.sniff(head) == 95
    assert capture.sniff(head) == 0
    assert stdio.sniff(head) == 0
    assert inspector.sniff(head) == 0
    assert list(FORMATS).index("mcpsnoop") < list(FORMATS).index("stdio")


def test_sniff_ignores_other_jsonl(write_lines: WriteLines) -> None:
    plain = write_lines([req(1, "tools/list"), res(1)])
    assert mcpsnoop.sniff(make_head(read_content(plain))) == 0
    mixed = write_lines([env(1, "c2s", raw=req(1, "ping")), {"session_id": "x", "seq": 2}])
    assert mcpsnoop.sniff(make_head(read_content(mixed))) == 0


def test_http_status_headers_and_transport_rows(write_lines: WriteLines) -> None:
    call = req(2, "tools/call", {"name": "get_forecast", "arguments": {"city": "Oslo"}})
    path = write_lines(
        [
            http(
                1,
                "c2s",
                raw=call,
                mcp_method="tools/call",
                mcp_name="get_forecast",
                mcp_protocol_version="2025-11-25",
                mcp_param_headers=[
                    {"name": "Mcp-Param-City", "value": "Oslo"},
                    {"name": "Mcp-Param-Token", "value": "[REDACTED]", "redacted": True},
                ],
                conn_id="127.0.0.1:53412",
                redacted=True,
            ),
            http(2, "s2c", raw=res(2, {"content": []}), conn_id="127.0.0.1:53412", status=200),
            http(3, "c2s", raw=note("notifications/initialized"), conn_id="127.0.0.1:53412"),
            http(4, "s2c", conn_id="127.0.0.1:53412", status=202),
            http(
                5,
                "s2c",
                conn_id="127.0.0.1:53420",
                status=401,
                auth_challenge='Bearer resource_metadata="http://localhost:3000/.well-known/x"',
            ),
            http(6, "s2c", conn_id="127.0.0.1:53420", status=502),
        ]
    )
    result = mcptrace.load(path)
    m = result.messages
    MESSAGES.validate(m)
    assert kinds(m) == [
        "request",
        "response",
        "notification",
        "transport",
        "transport",
        "transport",
    ]
    assert m["direction"].cast(pl.String).to_list() == ["c2s", "s2c", "c2s", "s2c", "s2c", "s2c"]
    assert m["transport"].cast(pl.String).unique().to_list() == ["http"]
    assert m["http_status"].to_list() == [None, 200, None, 202, 401, 502]
    assert m["http_method"].to_list() == ["POST", None, "POST", None, None, None]
    assert m["message"].to_list()[3:] == ["HTTP 202", "HTTP 401", "HTTP 502"]
    assert orjson.loads(m["http_headers"][0]) == {
        "Mcp-Method": "tools/call",
        "Mcp-Name": "get_forecast",
        "MCP-Protocol-Version": "2025-11-25",
        "Mcp-Param-City": "Oslo",
        "Mcp-Param-Token": "[REDACTED]",
    }
    assert list(orjson.loads(m["http_headers"][0])) == [
        "Mcp-Method", "Mcp-Name", "MCP-Protocol-Version", "Mcp-Param-City", "Mcp-Param-Token",
    ]  # fmt: skip
    assert m["http_headers"][1] is None
    assert orjson.loads(m["http_headers"][4]) == {
        "WWW-Authenticate": 'Bearer resource_metadata="http://localhost:3000/.well-known/x"'
    }
    assert m["parse_error"][0] == "values redacted by mcpsnoop"
    assert m["session"].unique().to_list() == [HTTP]
    assert m["server"].unique().to_list() == ["localhost:3000"]
    # no meta record on HTTP, no missing seq; two client connections share the session
    src = result.sources.row(0, named=True)
    assert src["truncated"] is False
    assert "2 HTTP client connections" in src["note"]
    calls = result.calls
    assert calls.select("id", "outcome", "latency_ms").rows() == [("2", "ok", 1000.0)]
    assert result.sessions["revision"].item() == "2025-11-25"


def test_non_json_frames_become_invalid_rows(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            env(1, "c2s", raw=req(1, "tools/list")),
            env(2, "s2c", text="DEBUG: oops printed to stdout"),
            env(3, "s2c", text='{"jsonrpc":"2.0","id":1,"result":{"tools":[{"na', truncated=True),
            env(4, "stderr"),  # an empty stderr line: no `text`
            env(5, "c2s"),  # nothing at all
        ]
    )
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    assert kinds(m) == ["request", "invalid", "invalid", "stderr", "invalid"]
    assert m["direction"].cast(pl.String).to_list() == ["c2s", "s2c", "s2c", "unknown", "c2s"]
    assert m["message"][1] == "DEBUG: oops printed to stdout"
    assert m["parse_error"][1].startswith("invalid JSON")
    assert m["parse_error"][2].startswith("frame cut by mcpsnoop at its 16 MiB capture cap; ")
    assert "invalid JSON" in m["parse_error"][2]
    assert m["message"][3] == ""
    assert m["parse_error"][4] == "mcpsnoop frame with neither `raw`, `text` nor `status`"
    src = trace.sources.row(0, named=True)
    assert src["truncated"] is True
    assert "1 frame(s) cut at mcpsnoop's 16 MiB capture cap" in src["note"]
    assert src["invalid"] == 3
    assert trace.calls.select("id", "outcome").rows() == [("1", "unanswered")]


def test_ids_keep_their_json_type(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            env(1, "c2s", raw=req(5, "tools/list")),
            env(2, "c2s", raw=req("5", "prompts/list")),
            env(3, "s2c", raw=res("5", {"prompts": []})),
            env(4, "s2c", raw=err(5, -32601, "Method not found")),
            env(5, "c2s", raw=req("req-\u00e9", "ping")),
        ]
    )
    m = mcptrace.load(path).messages
    assert m["id"].to_list() == ["5", '"5"', '"5"', "5", '"req-\u00e9"']
    assert m["id_type"].cast(pl.String).to_list() == [
        "integer",
        "string",
        "string",
        "integer",
        "string",
    ]
    calls = mcptrace.load(path).calls
    assert calls.select("id", "method", "outcome").rows() == [
        ("5", "tools/list", "error"),
        ('"5"', "prompts/list", "ok"),
        ('"req-\u00e9"', "ping", "unanswered"),
    ]


def test_seq_out_of_order_keeps_file_order_and_notes_it(write_lines: WriteLines) -> None:
    # HTTP sessions may be written out of seq order (and ts may disagree with seq)
    path = write_lines(
        [
            http(1, "c2s", raw=req(1, "tools/list")),
            http(3, "c2s", raw=req(2, "prompts/list"), ts="2025-11-03T09:05:01Z"),
            http(2, "s2c", raw=res(1, {"tools": []}), status=200, ts="2025-11-03T09:05:02Z"),
            http(4, "s2c", raw=res(2, {"prompts": []}), status=200, ts="2025-11-03T09:05:03Z"),
        ]
    )
    trace = mcptrace.load(path)
    m = trace.messages
    assert m["line"].to_list() == [1, 2, 3, 4]
    assert m["id"].to_list() == ["1", "2", "1", "2"]
    src = trace.sources.row(0, named=True)
    assert src["truncated"] is False  # every seq is there
    assert f"session {HTTP}: `seq` is not increasing in file order (line 3)" in src["note"]
    assert trace.calls.select("id", "outcome").rows() == [("1", "ok"), ("2", "ok")]


def test_seq_gap_means_dropped_records(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            env(1, "meta", raw={"command": ["uv", "run", "weather.py"]}),
            env(2, "c2s", raw=req(1, "tools/list")),
            env(5, "s2c", raw=res(1, {"tools": []})),
        ]
    )
    src = mcptrace.load(path).sources.row(0, named=True)
    assert src["truncated"] is True
    assert "2 record(s) missing (`seq` gaps)" in src["note"]
    assert "not increasing" not in src["note"]


def test_reused_trace_file_holds_several_sessions(write_lines: WriteLines) -> None:
    a = {"session": "weather.py-9121-0a1b2c3d4e5f", "label": "weather.py"}
    b = {"session": "notes.js-9300-ffeeddccbbaa", "label": "notes.js"}
    path = write_lines(
        [
            env(1, "meta", raw={"command": ["uv", "run", "weather.py"], "cwd": "/srv"}, **a),
            env(2, "c2s", raw=req(0, "ping"), **a),
            env(3, "s2c", raw=res(0), **a),
            env(1, "meta", raw={"command": ["node", "notes.js"]}, **b),  # seq restarts
            env(2, "c2s", raw=req(0, "ping"), **b),
            env(3, "s2c", raw=err(0), **b),
        ]
    )
    trace = mcptrace.load(path)
    assert trace.sources["note"].item() is None
    assert trace.messages["server"].to_list() == ["weather.py"] * 3 + ["notes.js"] * 3
    assert trace.messages["message"][0] == '{"command":["uv","run","weather.py"],"cwd":"/srv"}'
    calls = trace.calls
    assert calls.select("session", "server", "outcome").rows() == [
        (a["session"], "weather.py", "ok"),
        (b["session"], "notes.js", "error"),
    ]
    assert trace.sessions["session"].to_list() == [a["session"], b["session"]]


def test_batches(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            # stdio: a batch line stays one record with an array in raw
            env(1, "c2s", raw=[req(1, "tools/list"), note("notifications/initialized")]),
            # http: mcpsnoop splits the body, one record per element, routing headers on the 1st
            http(2, "c2s", raw=req(7, "tools/list"), batch=True, conn_id="c", mcp_method="x"),
            http(3, "c2s", raw=req(8, "prompts/list"), batch=True, conn_id="c"),
            http(4, "s2c", raw=res(7), batch=True, conn_id="c", status=200),
            http(5, "s2c", raw=res(8), batch=True, conn_id="c", status=200),
            http(6, "c2s", raw=req(9, "ping"), conn_id="c"),
        ]
    )
    m = mcptrace.load(path).messages
    MESSAGES.validate(m)
    assert m["line"].to_list() == [1, 1, 2, 3, 4, 5, 6]
    assert m["batch_index"].to_list() == [0, 1, 0, 1, 0, 1, None]
    assert m["batched"].to_list() == [True] * 6 + [False]
    # three batches of two, whether on one line or on a line per element
    found = mcptrace.lint(mcptrace.load(path), revision="2025-11-25", select=["JR010"])
    assert found["line"].to_list() == [1, 2, 4]
    assert set(found["message"].to_list()) == {
        "JSON-RPC batch of 2 message(s); batches were removed in 2025-06-18"
    }


def test_malformed_lines_are_rows_not_exceptions(tmp_path: Path) -> None:
    good = orjson.dumps(env(1, "c2s", raw=req(1, "tools/list")))
    lines = [
        good,
        b"{not json",
        b"",
        b"[1, 2]",
        orjson.dumps({"session_id": "s", "seq": 3}),
        orjson.dumps(env(4, "telemetry", raw={"x": 1})),
        orjson.dumps(env(5, "c2s", raw="just a string")),
        b'{"session_id":"weather.py-9121-0a1b2c3d4e5f","seq":6,"direction":"s2c","raw":{"json',
    ]
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"\n".join(lines))  # no final newline: the writer was stopped mid-record
    trace = mcptrace.load(path, format="mcpsnoop")
    m = trace.messages
    MESSAGES.validate(m)
    assert m["line"].to_list() == list(range(1, 9))
    assert kinds(m) == [
        "request",
        "invalid",
        "blank",
        "invalid",
        "invalid",
        "log",
        "invalid",
        "invalid",
    ]
    errors = m["parse_error"].to_list()
    assert errors[1].startswith("mcpsnoop record is not valid JSON: invalid JSON")
    assert errors[3] == "mcpsnoop record without a `direction` member"
    assert errors[4] == "mcpsnoop record without a `direction` member"
    assert errors[5] == 'unknown mcpsnoop direction "telemetry"'
    assert m["message"][5] == '{"x":1}'
    assert errors[6] == "not a JSON-RPC message: a JSON string, not an object"
    assert errors[7].startswith("mcpsnoop record is not valid JSON: incomplete last record")
    src = trace.sources.row(0, named=True)
    assert src["truncated"] is True
    assert "the last record is incomplete" in src["note"]
    # rows without a session of their own stay in the one around them
    assert m["session"].unique().to_list() == ["weather.py-9121-0a1b2c3d4e5f"]


def test_go_timestamps(write_lines: WriteLines) -> None:
    stamps = [
        "2025-11-03T14:07:21.482913507+01:00",  # nanoseconds, local offset
        "2025-11-03T14:07:22.92347+01:00",  # trailing zeros trimmed
        "2025-11-03T13:07:23Z",  # a whole second: no fraction at all
        "not a time",
    ]
    path = write_lines([env(i + 1, "stderr", text=f"line {i}", ts=t) for i, t in enumerate(stamps)])
    m = mcptrace.load(path).messages
    assert [str(t) for t in m["ts"].to_list()] == [
        "2025-11-03 13:07:21.482913+00:00",
        "2025-11-03 13:07:22.923470+00:00",
        "2025-11-03 13:07:23+00:00",
        "None",
    ]
    assert m["ts_quality"].cast(pl.String).to_list() == ["exact", "exact", "exact", "none"]


def test_fields_of_the_wrong_type_are_unknown_not_a_crash(write_lines: WriteLines) -> None:
    # an object where mcpsnoop writes a string: the envelope keeps the message, its
    # transport unknown
    odd = env(1, "c2s", raw=req(1, "tools/list"))
    odd["transport"] = {"kind": "stdio"}
    listed = env(2, "s2c", raw=res(1, {"tools": []}))
    listed["transport"] = ["http"]
    trace = mcptrace.load(write_lines([odd, listed]))
    m = trace.messages
    assert m["kind"].to_list() == ["request", "response"]
    assert m["transport"].cast(pl.String).to_list() == ["unknown", "unknown"]
    assert trace.calls["outcome"].to_list() == ["ok"]


def test_frames_mcpsnoop_cut_are_no_faults_of_the_traffic(write_lines: WriteLines) -> None:
    # mcpsnoop cuts frames at its capture cap: each cut line is reported once (JR014,
    # saying so), not again as the request it most likely answered (PR006) or the
    # response whose request it was (PR003)
    cut_answer = '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"na'
    cut_request = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","argu'
    path = write_lines(
        [
            env(1, "c2s", raw=req(1, "tools/list")),
            env(2, "s2c", text=cut_answer, truncated=True),
            env(3, "c2s", text=cut_request, truncated=True),
            env(4, "s2c", raw=res(2, {"content": []})),
            env(5, "c2s", raw=req(3, "tools/list")),
            env(6, "s2c", raw=res(3, {"tools": []})),
        ]
    )
    trace = mcptrace.load(path)
    outcomes = dict(trace.calls.select("id", "outcome").iter_rows())
    assert outcomes == {"1": "unanswered", "2": "orphan", "3": "ok"}
    found = mcptrace.lint(trace, revision="2025-11-25", select=["JR014", "PR"])
    assert found.select("line", "code").rows() == [(2, "JR014"), (3, "JR014")]
    assert "frame cut by mcpsnoop" in found["message"][0]
    # the same lines whole but unreadable are faults of the traffic
    broken = write_lines(
        [
            env(1, "c2s", raw=req(1, "tools/list")),
            env(2, "s2c", text=cut_answer),
            env(5, "c2s", raw=req(3, "tools/list")),
            env(6, "s2c", raw=res(3, {"tools": []})),
        ],
        "broken.jsonl",
    )
    found = mcptrace.lint(mcptrace.load(broken), revision="2025-11-25", select=["PR", "ST"])
    assert found.select("line", "code").rows() == [(1, "PR006"), (2, "ST001")]
