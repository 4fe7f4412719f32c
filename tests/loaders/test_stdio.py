"""Raw stdio NDJSON: direction inference and per-direction file pairs."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from factories import SAMPLES, WriteLines

import mcptrace

INTERLEAVED = [
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
    b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},'
    b'"serverInfo":{"name":"s","version":"1"}}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"p"}}}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}',
    b'{"jsonrpc":"2.0","id":0,"method":"roots/list"}',
    b'{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
    b'{"jsonrpc":"2.0","id":7,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":7,"result":{}}',
    b"Starting server on stdout (oops)",
]


def test_directions_are_inferred_from_methods_and_pairing(write_lines: WriteLines) -> None:
    trace = mcptrace.load(write_lines(INTERLEAVED))
    m = trace.messages
    assert trace.sources["format"][0] == "stdio"
    assert m["direction"].cast(pl.String).to_list() == [
        "c2s",  # initialize: client only
        "s2c",  # answers a c2s request
        "c2s",
        "c2s",
        "s2c",  # progress for the token of a c2s request
        "s2c",  # roots/list: server only
        "c2s",  # answers the s2c roots/list, although id 0 was also the client's initialize
        "c2s",  # cancels the client's request 1
        "unknown",  # ping goes both ways: ambiguous
        "unknown",
        "unknown",  # not JSON
    ]
    assert m["direction_inferred"].to_list() == [True] * 8 + [False] * 3
    assert m["transport"].cast(pl.String).unique().to_list() == ["stdio"]
    assert m["kind"][-1] == "invalid"
    calls = trace.calls.select("direction", "method", "outcome").rows()
    assert ("s2c", "roots/list", "ok") in calls
    assert ("c2s", "tools/call", "cancelled") in calls


def test_per_direction_files_form_one_unordered_session(tmp_path: Path) -> None:
    (tmp_path / "srv.stdin.jsonl").write_bytes(
        b"\n".join([INTERLEAVED[0], INTERLEAVED[2], INTERLEAVED[3], INTERLEAVED[6]]) + b"\n"
    )
    (tmp_path / "srv.stdout.jsonl").write_bytes(
        b"\n".join([INTERLEAVED[1], INTERLEAVED[4], INTERLEAVED[5],
                    b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}']) + b"\n"
    )  # fmt: skip
    trace = mcptrace.load(tmp_path)
    assert trace.messages["session"].unique().to_list() == ["srv"]
    by_file = trace.messages.group_by("source").agg(pl.col("direction").cast(pl.String).unique())
    assert {Path(s).name: d for s, d in by_file.iter_rows()} == {
        "srv.stdin.jsonl": ["c2s"],
        "srv.stdout.jsonl": ["s2c"],
    }
    calls = trace.calls
    # roots/list (in stdout) is answered from stdin, which comes first in capture order
    assert calls.select("direction", "method", "outcome").sort("method").rows() == [
        ("c2s", "initialize", "ok"),
        ("s2c", "roots/list", "ok"),
        ("c2s", "tools/call", "ok"),
    ]
    assert calls["latency_ms"].null_count() == calls.height
    assert "order of messages across the two files is unknown" in trace.sources["note"][0]


def test_sample_interleaved_and_pair_agree() -> None:
    single = mcptrace.load(SAMPLES / "stdio" / "docs-server.ndjson")
    pair = mcptrace.load(SAMPLES / "stdio-pair")
    cols = ["method", "target", "outcome"]
    assert single.calls.select(cols).sort(cols).rows() == pair.calls.select(cols).sort(cols).rows()
    assert (
        single.sessions["revision"].to_list()
        == pair.sessions["revision"].to_list()
        == ["2025-11-25"]
    )


def test_a_stream_appended_to_by_a_restarted_server_is_one_session_a_connection(
    write_lines: WriteLines,
) -> None:
    # a log kept across restarts: the second connection numbers its ids from 0 again,
    # which in one session would read as ids reused (PR001) and answers mispaired
    once = [*INTERLEAVED[:4], b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}']
    path = write_lines([*once, b"server restarting", *once, *once], name="srv.ndjson")
    trace = mcptrace.load(path)
    sessions = trace.messages.select("line", "session").rows()
    assert [s for line, s in sessions if line in (1, 5, 6, 7, 11, 12, 16)] == [
        "srv", "srv", "srv", "srv@7", "srv@7", "srv@12", "srv@12",
    ]  # fmt: skip
    assert trace.sessions["revision"].to_list() == ["2025-06-18"] * 3
    assert trace.calls["outcome"].cast(pl.String).to_list() == ["ok"] * 6
    assert "PR001" not in mcptrace.lint(trace)["code"].to_list()


def test_a_stream_of_one_connection_keeps_the_file_name(write_lines: WriteLines) -> None:
    # the initialize that opens the stream opens no second session, even after junk
    path = write_lines([b"booting...", *INTERLEAVED[:3]], name="one.ndjson")
    assert mcptrace.load(path).messages["session"].unique().to_list() == ["one"]


def test_a_stdout_mostly_banner_before_the_server_spoke_is_still_stdio(
    write_lines: WriteLines,
) -> None:
    banner = [f"[boot] loading plugin {i} of 12".encode() for i in range(12)]
    path = write_lines([*banner, *INTERLEAVED[:4]], name="server.out")
    trace = mcptrace.load(path)
    assert trace.sources["format"].to_list() == ["stdio"]
    kinds = trace.messages["kind"].to_list()
    assert kinds.count("invalid") == 12 and kinds.count("request") == 2
    # the banner is stream pollution, which the linter reports line by line
    found = mcptrace.lint(trace)
    assert sorted(found.filter(pl.col("code") == "ST001")["line"].to_list()) == list(range(1, 13))


def test_half_json_rpc_is_stdio_and_the_bad_line_is_reported(write_lines: WriteLines) -> None:
    path = write_lines([INTERLEAVED[8], b"{bad"], name="two.jsonl")
    trace = mcptrace.load(path)
    assert trace.sources["format"].to_list() == ["stdio"]
    assert trace.messages["kind"].to_list() == ["request", "invalid"]
    assert trace.messages["line"].to_list() == [1, 2]


def test_other_json_lines_with_a_json_rpc_line_among_them_are_not_claimed(
    write_lines: WriteLines,
) -> None:
    others = [b'{"level":"info","msg":"started"}', b'{"level":"info","msg":"ready"}']
    path = write_lines([*others, b"plain text", INTERLEAVED[8]], name="app.jsonl")
    with pytest.raises(mcptrace.CaptureError, match="unrecognised capture format"):
        mcptrace.load(path)
