"""The trace model end to end on small inline captures: messages, calls, sessions."""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, WriteLines, err, note, rec, req, res, ts
from typer.testing import CliRunner

import mcptrace
from mcptrace import _json
from mcptrace.cli import app
from mcptrace.errors import CaptureError, UsageError
from mcptrace.inputs import expand_paths
from mcptrace.schema import CALLS, MESSAGES, SESSIONS, SOURCES


def _init(session: str = "s1", version: str = "2025-11-25") -> list[dict[str, object]]:
    return [
        rec(
            req(0, "initialize", {"protocolVersion": version, "capabilities": {"roots": {}},
                                  "clientInfo": {"name": "host", "version": "1.0"}}),
            session=session, ts=ts(0),
        ),
        rec(
            res(0, {"protocolVersion": version, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "srv", "version": "2.0"}}),
            dir="s2c", session=session, ts=ts(0.1),
        ),
        rec(note("notifications/initialized"), session=session, ts=ts(0.2)),
    ]  # fmt: skip


def test_schemas_hold_at_every_stage(write_lines: WriteLines) -> None:
    path = write_lines(
        [*_init(), rec(req(1, "tools/list"), ts=ts(1)), rec(res(1), dir="s2c", ts=ts(1.5))]
    )
    trace = mcptrace.load(path)
    MESSAGES.validate(trace.messages)
    CALLS.validate(trace.calls)
    SESSIONS.validate(trace.sessions)
    SOURCES.validate(trace.sources)


@pytest.mark.parametrize("pure", [False, True], ids=["scanner", "pure-python"])
def test_integer_ids_beyond_64_bits_stay_exact(
    write_lines: WriteLines, monkeypatch: pytest.MonkeyPatch, pure: bool
) -> None:
    if pure:
        monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1")
    big, near, small = "123456789012345678901", "123456789012345678902", "-9223372036854775809"
    path = write_lines(
        [
            f'{{"dir":"c2s","msg":{{"jsonrpc":"2.0","id":{big},"method":"ping"}}}}',
            f'{{"dir":"c2s","msg":{{"jsonrpc":"2.0","id":{near},"method":"ping"}}}}',
            f'{{"dir":"s2c","msg":{{"jsonrpc":"2.0","id":{near},"result":{{}}}}}}',
            f'{{"dir":"s2c","msg":{{"jsonrpc":"2.0","id":{big},"result":{{"n":{small}}}}}}}',
        ]
    )
    trace = mcptrace.load(path)
    m = trace.messages
    # as floats both ids would read 1.2345678901234568e+20: one id, "fractional", reused
    assert m["id"].to_list() == [big, near, near, big]
    assert m["id_type"].cast(pl.String).to_list() == ["integer"] * 4
    assert m["message"][3] == f'{{"jsonrpc":"2.0","id":{big},"result":{{"n":{small}}}}}'
    assert trace.calls.select("request_line", "response_line").rows() == [(1, 4), (2, 3)]
    assert mcptrace.lint(trace, select=["JR", "PR"]).is_empty()


def test_integers_beyond_64_bits_are_written_back_exactly(
    write_lines: WriteLines, tmp_path: Path
) -> None:
    # orjson writes no integer beyond 64 bits: every writer falls back to exact digits
    big = "123456789012345678901"
    deep = "[" * 300 + "1" + "]" * 300  # deeper than orjson writes, too
    path = write_lines(
        [
            f'{{"dir":"c2s","msg":{{"jsonrpc":"2.0","id":{big},"method":"tools/call",'
            f'"params":{{"name":"x","arguments":{{"n":{big},"deep":{deep}}}}}}}}}',
            f'{{"dir":"s2c","msg":{{"jsonrpc":"2.0","id":{big},"result":{{"content":[]}}}}}}',
        ]
    )
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    again = mcptrace.load(out)
    assert again.messages["id"].to_list() == [big, big]
    assert again.messages["message"].to_list() == mcptrace.load(path).messages["message"].to_list()
    shown = CliRunner().invoke(app, ["show", str(path), "--body"])
    assert shown.exit_code == 0, shown.output
    assert f'"id": {big},' in shown.output and f'"n": {big},' in shown.output
    pretty = _json.dumpb({"b": [2**70, {}], "a": []}, pretty=True, sort_keys=True).decode()
    assert pretty == '{\n  "a": [],\n  "b": [\n    1180591620717411303424,\n    {}\n  ]\n}'


def test_ids_keep_their_json_type(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            rec(req(5, "tools/list"), ts=ts(1)),
            rec(req("5", "tools/list"), ts=ts(2)),
            rec(res("5"), dir="s2c", ts=ts(3)),
            rec({"jsonrpc": "2.0", "id": None, "method": "ping"}, ts=ts(4)),
            rec(note("notifications/initialized"), ts=ts(5)),
        ]
    )
    m = mcptrace.load(path).messages
    assert m["id"].to_list() == ["5", '"5"', '"5"', "null", None]
    assert m["id_type"].cast(pl.String).to_list() == ["integer", "string", "string", "null", None]
    calls = mcptrace.load(path).calls
    by_id = dict(
        zip(calls["id"].to_list(), calls["outcome"].cast(pl.String).to_list(), strict=True)
    )
    # the string-id response must not answer the integer-id request
    assert by_id == {"5": "unanswered", '"5"': "ok", "null": "unanswered"}


def test_pairing_outcomes_and_latency(write_lines: WriteLines) -> None:
    tool_error = {"content": [{"type": "text", "text": "no"}], "isError": True}
    path = write_lines(
        [
            *_init(),
            rec(req(1, "tools/call", {"name": "ok_tool"}), ts=ts(1)),
            rec(res(1, {"content": []}), dir="s2c", ts=ts(1.25)),
            rec(req(2, "tools/call", {"name": "bad_tool"}), ts=ts(2)),
            rec(res(2, tool_error), dir="s2c", ts=ts(2.5)),
            rec(req(3, "tools/call", {"name": "broken"}), ts=ts(3)),
            rec(err(3, -32603, "internal"), dir="s2c", ts=ts(3.1)),
            rec(req(4, "tools/call", {"name": "slow"}), ts=ts(4)),
            rec(note("notifications/cancelled", {"requestId": 4}), ts=ts(9)),
            rec(req(5, "tools/call", {"name": "lost"}), ts=ts(5)),
            rec(res(99), dir="s2c", ts=ts(10)),
        ]
    )
    calls = mcptrace.load(path).calls
    got = calls.select("id", "target", "outcome", "latency_ms", "error_code").rows()
    assert got == [
        ("0", None, "ok", 100.0, None),
        ("1", "ok_tool", "ok", 250.0, None),
        ("2", "bad_tool", "tool_error", 500.0, None),
        ("3", "broken", "error", 100.0, -32603),
        ("4", "slow", "cancelled", None, None),
        ("5", "lost", "unanswered", None, None),
        ("99", None, "orphan", None, None),
    ]
    assert calls.filter(pl.col("id") == "4")["cancel_line"].item() == 11


def test_id_reuse_after_completion_and_duplicate_response(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            rec(req(1, "tools/list"), ts=ts(1)),
            rec(res(1), dir="s2c", ts=ts(2)),
            rec(req(1, "prompts/list"), ts=ts(3)),
            rec(res(1), dir="s2c", ts=ts(5)),
            rec(res(1), dir="s2c", ts=ts(6)),
        ]
    )
    calls = mcptrace.load(path).calls
    assert calls.select("method", "outcome", "latency_ms", "duplicate").rows() == [
        ("tools/list", "ok", 1000.0, None),
        ("prompts/list", "ok", 2000.0, None),
        (None, "orphan", None, True),
    ]


def test_both_sides_have_separate_id_spaces(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            rec(req(1, "tools/call", {"name": "t"}), ts=ts(1)),
            rec(req(1, "roots/list"), dir="s2c", ts=ts(2)),
            rec(res(1, {"roots": []}), dir="c2s", ts=ts(3)),
            rec(res(1, {"content": []}), dir="s2c", ts=ts(4)),
        ]
    )
    calls = mcptrace.load(path).calls
    assert calls.select("direction", "method", "latency_ms").rows() == [
        ("c2s", "tools/call", 3000.0),
        ("s2c", "roots/list", 1000.0),
    ]


def test_a_2026_probe_the_server_only_refused_over_http_speaks_no_revision(
    write_lines: WriteLines,
) -> None:
    """A legacy server answers a 2026-07-28 server/discover probe with a 4xx and no modern
    error (versioning.mdx: "Anything else identifies a legacy server"): the session speaks
    no revision. A modern error (-32022), any normal answer or a refused request other
    than the probe keeps the 2026 revision, and a refused legacy session keeps the
    revision its header names."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    discover = req(1, "server/discover", {"_meta": meta})

    def http(status: int) -> dict[str, Any]:
        return {"transport": "http", "http": {"method": "POST", "status": status}}

    refusal = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request"}}
    modern = err(1, -32022, "Unsupported protocol version")
    old_header = {
        "transport": "http",
        "http": {"method": "GET", "status": 400, "headers": {"MCP-Protocol-Version": "2025-06-18"}},
    }
    path = write_lines(
        [
            rec(discover, session="refused", **http(400)),
            rec(refusal, dir="s2c", session="refused", **http(400)),
            rec(discover, session="modern-error", **http(400)),
            rec(modern, dir="s2c", session="modern-error", **http(400)),
            # a refused tools/list is more likely a broken request to a modern server
            rec(req(2, "tools/list", {"_meta": meta}), session="broken", **http(406)),
            rec(refusal, dir="s2c", session="broken", **http(406)),
            rec(discover, session="answered", **http(200)),
            rec(err(1, -32601, "nope"), dir="s2c", session="answered", **http(200)),
            rec("HTTP GET /mcp (no body)", kind="transport", session="legacy", **old_header),
            rec(refusal, dir="s2c", session="legacy", **old_header),
        ]
    )
    got = mcptrace.load(path).sessions.select("session", "revision", "revision_source").rows()
    assert got == [
        ("refused", None, "unknown"),
        ("modern-error", "2026-07-28", "meta"),
        ("broken", "2026-07-28", "meta"),
        ("answered", "2026-07-28", "meta"),
        ("legacy", "2025-06-18", "http_header"),
    ]


def test_sessions_revision_and_identity(write_lines: WriteLines) -> None:
    modern_meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-host", "version": "3"},
    }
    path = write_lines(
        [
            *_init("legacy", "2025-06-18"),
            rec(req("a", "tools/list", {"_meta": modern_meta}), session="modern", ts=ts(1)),
            rec(
                res("a", {"tools": [], "resultType": "complete"}),
                dir="s2c",
                session="modern",
                ts=ts(2),
            ),
            rec(req(1, "tools/list"), session="nothing", ts=None),
        ]
    )
    s = mcptrace.load(path).sessions
    got = s.select("session", "revision", "revision_source", "client_name", "server_name").rows()
    assert got == [
        ("legacy", "2025-06-18", "initialize", "host", "srv"),
        ("modern", "2026-07-28", "meta", "modern-host", None),
        ("nothing", None, "unknown", None, None),
    ]
    legacy = s.row(0, named=True)
    assert legacy["client_capabilities"] == '{"roots":{}}'
    assert legacy["server_capabilities"] == '{"tools":{}}'
    assert legacy["duration_s"] == pytest.approx(0.2)
    assert s.filter(pl.col("session") == "nothing")["ts_quality"].item() == "none"


def test_every_line_is_a_row(write_lines: WriteLines) -> None:
    path = write_lines(
        [rec(req(1, "tools/list")), b"{broken", b"", b"[1, 2", rec(res(1), dir="s2c"), b"   "]
    )
    trace = mcptrace.load(path)
    m = trace.messages
    assert m.height == 6
    assert m["line"].to_list() == [1, 2, 3, 4, 5, 6]
    assert m["kind"].cast(pl.String).to_list() == [
        "request", "invalid", "blank", "invalid", "response", "blank",
    ]  # fmt: skip
    assert "char" in m["parse_error"][1]
    # rows without a session of their own stay in the session around them
    assert m["session"].unique().to_list() == ["s1"]
    assert trace.sources.row(0, named=True)["invalid"] == 2


def test_time_window_keeps_identity_and_whole_calls(write_lines: WriteLines) -> None:
    from datetime import UTC, datetime

    path = write_lines(
        [
            *_init(),  # 0 .. 0.2 s: before the window
            rec(req(1, "tools/list"), ts=ts(1)),  # asked before the window,
            rec(res(1), dir="s2c", ts=ts(11)),  # answered inside it
            rec(req(2, "tools/list"), ts=ts(12)),  # asked inside,
            rec(res(2), dir="s2c", ts=ts(25)),  # answered after it ends
            rec(req(3, "tools/call", {"name": "t"}), ts=ts(13)),  # never answered
            rec(res(9), dir="s2c", ts=ts(14)),  # an orphan inside the window
        ]
    )
    trace = mcptrace.load(path)
    window = trace.filter(
        since=datetime(2026, 8, 1, 10, 0, 10, tzinfo=UTC),
        until=datetime(2026, 8, 1, 10, 0, 20, tzinfo=UTC),
    )
    assert window.messages["line"].to_list() == [5, 6, 8, 9]
    # the handshake is outside the window; the session still speaks its revision
    assert window.sessions.select("revision", "revision_source", "client_name").row(0) == (
        "2025-11-25",
        "initialize",
        "host",
    )
    calls = window.calls.sort("request_line", nulls_last=True)
    assert calls.select("id", "outcome", "latency_ms").rows() == [
        ("2", "ok", 13000.0),  # answered after the window: not "unanswered"
        ("3", "unanswered", None),
        ("9", "orphan", None),
    ]
    # call 1 started before the window: neither kept nor turned into an orphan
    assert "1" not in window.calls["id"].to_list()
    # a session filter alone still keeps everything of that session, untimed rows too
    assert trace.filter(session="s1").messages.height == trace.messages.height
    assert trace.filter(session="other").calls.is_empty()


def test_linting_a_window_judges_it_with_the_whole_capture(write_lines: WriteLines) -> None:
    """A window that starts mid-session has no handshake of its own: linted alone it
    would draw lifecycle findings. lint() of a window lints the whole capture and keeps
    the findings on the window's messages, as `mcptrace lint --since/--until` does."""
    from datetime import UTC, datetime

    from mcptrace.linter import lint

    path = write_lines(
        [
            *_init(),  # before the window
            rec(req(1, "tools/list"), ts=ts(11)),
            rec(req(1, "tools/list"), ts=ts(12)),  # id 1 reused in flight: an error
            rec(res(1), dir="s2c", ts=ts(13)),
            rec(req(None, "tools/list"), ts=ts(30)),  # null id, after the window
        ]
    )
    trace = mcptrace.load(path)
    since = datetime(2026, 8, 1, 10, 0, 10, tzinfo=UTC)
    until = datetime(2026, 8, 1, 10, 0, 20, tzinfo=UTC)
    whole = lint(trace)
    found = lint(trace.filter(since=since, until=until))
    assert set(found["line"]) == {4, 5}  # the reuse and its victim; not the null id (7)
    assert not found["code"].str.starts_with("LC").any()
    inside = whole.filter(pl.col("ts").is_between(since, until))
    assert found.equals(inside)
    assert lint(trace.filter(session="s1", since=since, until=until)).equals(inside)
    assert lint(trace.filter(session="nobody", since=since)).is_empty()


def test_id_reused_in_flight_pairs_each_response_with_a_waiting_request(
    write_lines: WriteLines,
) -> None:
    path = write_lines(
        [
            rec(req(7, "tools/call", {"name": "a"}), ts=ts(1)),  # line 1
            rec(req(7, "tools/list"), ts=ts(2)),  # line 2: id 7 reused while 1 is open
            rec(res(7), dir="s2c", ts=ts(3)),  # answers line 2 (the latest with id 7)
            rec(res(7), dir="s2c", ts=ts(4)),  # answers line 1, still waiting
            rec(res(7), dir="s2c", ts=ts(5)),  # nothing waits any more: a duplicate
            rec(req(8, "tools/list"), ts=ts(6)),  # line 6: never answered
            rec(req(8, "prompts/list"), ts=ts(7)),  # line 7: id 8 reused while 6 is open,
            rec(res(8), dir="s2c", ts=ts(8)),  # answers line 7: line 6 keeps waiting
            rec(req(7, "tools/list"), ts=ts(9)),  # line 9: id 7 reused after completion
            rec(res(7), dir="s2c", ts=ts(10)),
        ]
    )
    calls = mcptrace.load(path).calls
    rows = calls.select("request_line", "response_line", "outcome", "duplicate").rows()
    assert rows == [
        (1, 4, "ok", None),
        (2, 3, "ok", None),
        (None, 5, "orphan", True),
        (6, None, "unanswered", None),
        (7, 8, "ok", None),
        (9, 10, "ok", None),
    ]


def test_paths_given_as_a_generator_are_read_once_and_named_in_errors(tmp_path: Path) -> None:
    bad = tmp_path / "garbage.bin"
    bad.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(CaptureError, match=rf"^{re.escape(str(bad))}: no capture could be read"):
        mcptrace.load(p for p in [bad])
    empty = tmp_path / "empty"
    empty.mkdir()
    named = f"no capture files found in {empty / 'none-*.jsonl'}, {empty}"
    with pytest.raises(UsageError, match=re.escape(named)):
        mcptrace.load(p for p in [empty / "none-*.jsonl", empty])


def test_a_directory_of_small_captures_is_one_chunk_big_files_keep_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every query pays for each chunk of a column (a regex is compiled for each), so
    # 1,000 small files left as 1,000 chunks made lint take seconds on 15,000 messages
    import mcptrace.trace as trace_module

    lines = [rec(req(1, "ping")), rec(res(1, {}), dir="s2c")]
    for i in range(40):
        body = b"\n".join(orjson.dumps({**r, "session": f"s{i}"}) for r in lines) + b"\n"
        (tmp_path / f"c{i:02d}.jsonl").write_bytes(body)
    whole = mcptrace.load(tmp_path)
    assert whole.messages.height == 80
    assert whole.messages.n_chunks() == 1
    assert whole.calls["outcome"].cast(pl.String).to_list() == ["ok"] * 40
    # small files are joined a run of about _SMALL_FILE_ROWS rows at a time
    monkeypatch.setattr(trace_module, "_SMALL_FILE_ROWS", 10)
    runs = mcptrace.load(tmp_path)
    assert runs.messages.n_chunks() == 8
    assert runs.messages.equals(whole.messages)
    # a file whose chunks are big enough is not copied: its chunks stay
    monkeypatch.setattr(trace_module, "_SMALL_CHUNK_ROWS", 1)
    kept = mcptrace.load(tmp_path)
    assert kept.messages.n_chunks() == 40
    assert kept.messages.equals(whole.messages)


def test_a_folder_of_big_files_is_read_from_disk_at_each_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the plans of every input live until the last is loaded: a big file's bytes read
    # for detection are not kept, only its head, and the loader reads it again
    import mcptrace.trace as trace_module

    monkeypatch.setattr(trace_module, "_KEPT_BYTES", 64)
    body = b"".join(
        orjson.dumps({**rec(req(i, "ping")), "session": "s"}) + b"\n" for i in range(50)
    )
    (tmp_path / "a.jsonl").write_bytes(body)
    (tmp_path / "b.jsonl").write_bytes(b'{"jsonrpc":"2.0","id":1}\n')
    plans, _ = trace_module.plan_files(sorted(str(p) for p in tmp_path.iterdir()))
    assert [len(p.content.data) for p in plans] == [64, 25]
    assert [p.content.partial for p in plans] == [True, False]
    trace = mcptrace.load(tmp_path)
    assert trace.sources["bytes"].to_list() == [len(body), 25]
    assert trace.messages.filter(pl.col("source").str.ends_with("a.jsonl")).height == 50


@pytest.mark.parametrize("pure", [False, True])
def test_times_without_a_zone_are_read_as_local_wall_clock_times(
    write_lines: WriteLines, monkeypatch: pytest.MonkeyPatch, pure: bool
) -> None:
    # a writer that drops the zone of RFC 3339 times: the times are kept, read in --tz
    # (UTC without it) and marked local, instead of being dropped without a word
    monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1" if pure else "0")
    path = write_lines(
        [
            rec(req(1, "ping"), ts="2026-09-14T09:30:00.000000"),
            rec(res(1, {}), dir="s2c", ts="2026-09-14 09:30:00.250"),
            rec(req(2, "ping"), ts="2026-09-14T09:30:01Z"),
            rec(res(2, {}), dir="s2c", ts="not a time"),
        ]
    )
    m = mcptrace.load(path).messages
    assert m["ts_quality"].cast(pl.String).to_list() == ["local", "local", "exact", "none"]
    assert [t.isoformat() if t else None for t in m["ts"].to_list()] == [
        "2026-09-14T09:30:00+00:00",
        "2026-09-14T09:30:00.250000+00:00",
        "2026-09-14T09:30:01+00:00",
        None,
    ]
    lisbon = mcptrace.load(path, tz="Europe/Lisbon").messages["ts"].to_list()
    assert lisbon[0].isoformat() == "2026-09-14T08:30:00+00:00"  # WEST is UTC+1
    assert lisbon[2].isoformat() == "2026-09-14T09:30:01+00:00"  # a zone given is kept


def test_a_rotated_log_is_read_oldest_file_first() -> None:
    from mcptrace.inputs import rotation_order

    listed = [
        "d/a.jsonl",
        "d/capture.jsonl",
        "d/capture.jsonl.1",
        "d/capture.jsonl.2.gz",
        "d/capture.jsonl.10.gz",
        "d/z.log",
        "d/z.log-20261130.gz",
        "d/z.log-20261201",
        "e/capture.jsonl.1",
        "e/session.jsonl",
    ]
    assert rotation_order(listed) == [
        "d/a.jsonl",
        "d/capture.jsonl.10.gz",
        "d/capture.jsonl.2.gz",
        "d/capture.jsonl.1",
        "d/capture.jsonl",
        "d/z.log-20261130.gz",
        "d/z.log-20261201",
        "d/z.log",
        "e/capture.jsonl.1",
        "e/session.jsonl",
    ]


def test_a_session_that_crossed_a_rotation_reads_forwards(tmp_path: Path) -> None:
    # logrotate: capture.jsonl is being written, capture.jsonl.1.gz came before it; in
    # name order the response would come before its request
    first = orjson.dumps({**rec(req(1, "tools/list")), "session": "s"}) + b"\n"
    second = orjson.dumps({**rec(res(1, {"tools": []}), dir="s2c"), "session": "s"}) + b"\n"
    (tmp_path / "capture.jsonl.1.gz").write_bytes(gzip.compress(first))
    (tmp_path / "capture.jsonl").write_bytes(second)
    trace = mcptrace.load(tmp_path)
    assert [Path(s).name for s in trace.sources["source"]] == [
        "capture.jsonl.1.gz",
        "capture.jsonl",
    ]
    assert trace.calls["outcome"].cast(pl.String).to_list() == ["ok"]
    assert [Path(p).name for p in expand_paths(str(tmp_path / "capture.jsonl*"))] == [
        "capture.jsonl.1.gz",
        "capture.jsonl",
    ]


def test_a_records_raw_text_is_the_message_only_when_it_is_the_json_of_msg(
    write_lines: WriteLines,
) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    spelled = '{ "jsonrpc" : "2.0", "method": "ping", "id": 1.0 }'  # the wire's own spelling
    path = write_lines(
        [
            {"dir": "c2s", "session": "s", "msg": ping, "raw": spelled},
            {"dir": "c2s", "session": "s", "msg": ping, "raw": "x"},
            {"dir": "c2s", "session": "s", "msg": ping, "raw": '{"jsonrpc":"2.0","id":9}'},
            {"dir": "c2s", "session": "s", "msg": ping, "raw": 5},
        ]
    )
    m = mcptrace.load(path).messages
    compact = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert m["message"].to_list() == [spelled, compact, compact, compact]
    assert m["kind"].cast(pl.String).to_list() == ["request"] * 4
    problem = "`raw` is not the JSON text of `msg`: the message is read from `msg`"
    assert m["parse_error"].to_list() == [None, problem, problem, problem]


def test_sessions_count_every_call_of_the_calls_table() -> None:
    # formats that log calls rather than messages (Claude Code, OpenTelemetry, mcpproxy)
    # once showed 0 calls for sessions whose calls table rows were right there
    trace = mcptrace.load(SAMPLES)
    counted = (
        trace.calls.filter(pl.col("outcome") != "orphan")
        .group_by("session")
        .agg(pl.len().cast(pl.Int64).alias("expected"))
    )
    sessions = trace.sessions.join(counted, on="session", how="left").with_columns(
        pl.col("expected").fill_null(0)
    )
    assert sessions["calls"].to_list() == sessions["expected"].to_list()
    claude_code = sessions.filter(pl.col("format") == "claude-code")
    assert claude_code["calls"].sum() > 0
    assert claude_code["requests"].sum() == 0  # no request rows: the calls are records
