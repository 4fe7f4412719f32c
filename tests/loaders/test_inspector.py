"""The MCP Inspector v2 protocol export loader."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, err, note, req, res

import mcptrace
from mcptrace import _json
from mcptrace.errors import UnknownFormatError
from mcptrace.loaders import FORMATS, capture, detect, inspector, mcpsnoop, stdio
from mcptrace.loaders.base import make_head
from mcptrace.loaders.reader import read_content
from mcptrace.schema import CALLS, MESSAGES, SESSIONS

SAMPLE = SAMPLES / "inspector" / "inspector-export.json"

INIT_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"sampling": {}, "roots": {"listChanged": True}},
    "clientInfo": {"name": "mcp-inspector", "version": "0.0.0"},
}
INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": True}},
    "serverInfo": {"name": "notes-server", "version": "1.2.0"},
}


def entry(
    message: Any,
    ms: int,
    *,
    origin: str | None = "client",
    direction: str | None = None,
    response: Any = None,
    duration: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    """One MessageEntry, keys in the Inspector's order; ``ms`` after 2025-12-04T09:41:17Z."""
    if direction is None:
        is_req = isinstance(message, dict) and "method" in message and "id" in message
        is_note = isinstance(message, dict) and "method" in message
        direction = "request" if is_req else "notification" if is_note else "response"
    out: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "timestamp": f"2025-12-04T09:41:{17 + ms // 1000:02d}.{ms % 1000:03d}Z",
        "direction": direction,
    }
    if origin is not None:
        out["origin"] = origin
    out["message"] = message
    if response is not None:
        out["response"] = response
    if duration is not None:
        out["duration"] = duration
    out.update(extra)
    return out


def initialize(ms: int = 0) -> dict[str, Any]:
    return entry(req(0, "initialize", INIT_PARAMS), ms, response=res(0, INIT_RESULT), duration=41)


def write_export(path: Path, entries: Any) -> Path:
    """Write as the Inspector does: JSON.stringify(entries, null, 2), no final newline."""
    path.write_bytes(orjson.dumps(entries, option=orjson.OPT_INDENT_2))
    return path


def kinds(df: pl.DataFrame) -> list[str]:
    return df["kind"].cast(pl.String).to_list()


def directions(df: pl.DataFrame) -> list[str]:
    return df["direction"].cast(pl.String).to_list()


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
        "inspector",
        "content",
        384,
        17,
    )
    assert (src["invalid"], src["truncated"], src["note"]) == (0, False, None)
    # 10 entries, 7 of them with a folded response: each response is a row of its own
    assert kinds(m) == [
        "request", "response", "notification", "request", "response", "request", "response",
        "notification", "notification", "request", "response", "request", "response",
        "request", "response", "request", "error",
    ]  # fmt: skip
    assert directions(m) == [
        "c2s", "s2c", "c2s", "c2s", "s2c", "c2s", "s2c", "s2c", "s2c", "c2s", "s2c", "c2s",
        "s2c", "s2c", "c2s", "c2s", "s2c",
    ]  # fmt: skip
    assert not m["direction_inferred"].any()
    assert m["session"].unique().to_list() == ["x"]
    assert m["transport"].cast(pl.String).unique().to_list() == ["unknown"]
    assert m["server"].null_count() == m.height
    quality = m["ts_quality"].cast(pl.String).to_list()
    assert quality == ["derived" if k in ("response", "error") else "exact" for k in kinds(m)]
    assert str(m["ts"][0]) == "2025-12-04 09:41:17.204000+00:00"
    assert str(m["ts"][1]) == "2025-12-04 09:41:17.245000+00:00"  # + 41 ms


def test_sample_lines_point_at_entries_and_responses() -> None:
    m = mcptrace.load(SAMPLE).messages
    text = SAMPLE.read_text().split("\n")
    for row in m.iter_rows(named=True):
        at = text[row["line"] - 1]
        expected = '    "response": {' if row["kind"] in ("response", "error") else "  {"
        assert at == expected, row["line"]
    # both rows of one entry carry the entry as compact JSON
    doc = orjson.loads(SAMPLE.read_bytes())
    assert m["raw"][0] == m["raw"][1] == _json.dumps(doc[0])
    assert m["message"][0] == _json.dumps(doc[0]["message"])
    assert m["message"][1] == _json.dumps(doc[0]["response"])
    assert m["line"][:3].to_list() == [2, 49, 70]


def test_sample_calls_outcomes_and_latency() -> None:
    trace = mcptrace.load(SAMPLE)
    got = trace.calls.select("direction", "id", "method", "target", "latency_ms", "outcome")
    assert got.rows() == [
        ("c2s", "0", "initialize", None, 41.0, "ok"),
        ("c2s", "1", "tools/list", None, 9.0, "ok"),
        ("c2s", "2", "tools/call", "search_notes", 312.0, "ok"),
        ("c2s", "3", "tools/call", "get_note", 27.0, "ok"),
        ("c2s", "4", "tools/call", "create_note", 18.0, "tool_error"),
        ("s2c", "0", "ping", None, 2.0, "ok"),
        ("c2s", "5", "tools/call", "delete_note", 6.0, "error"),
    ]
    assert trace.calls.filter(pl.col("id") == "5")["error_code"].item() == -32602
    s = trace.sessions.row(0, named=True)
    assert (s["revision"], s["client_name"], s["server_name"]) == (
        "2025-11-25",
        "mcp-inspector",
        "notes-server",
    )
    assert s["ts_quality"] == "derived"


def test_sniff_scores(tmp_path: Path) -> None:
    head = make_head(read_content(SAMPLE))
    assert inspector.sniff(head) == 95
    assert capture.sniff(head) == 0
    assert stdio.sniff(head) == 0
    assert mcpsnoop.sniff(head) == 0
    for doc in ([], {"messages": []}, [1, 2], [req(1, "ping")]):
        p = tmp_path / "d.json"
        p.write_bytes(orjson.dumps(doc))
        assert inspector.sniff(make_head(read_content(p))) == 0, doc
    assert list(FORMATS).index("inspector") < list(FORMATS).index("stdio")


def test_server_requests_standalone_responses_and_ids(tmp_path: Path) -> None:
    path = write_export(
        tmp_path / "export.json",
        [
            initialize(),
            entry(note("notifications/initialized"), 50),
            # server -> client request, the Inspector's reply folded in
            entry(
                req("srv-1", "roots/list"),
                100,
                origin="server",
                response=res("srv-1", {"roots": []}),
                duration=3,
            ),
            entry(req(1, "tools/call", {"name": "a"}), 200, response=err(1), duration=15),
            entry(req("1", "tools/call", {"name": "b"}), 300),  # never answered
            entry(res(99, {}), 400, origin="server"),  # a response that could not be folded
            entry(res("1", {"content": []}), 500, origin="server"),  # answers the string id
        ],
    )
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    assert kinds(m) == [
        "request", "response", "notification", "request", "response", "request", "error",
        "request", "response", "response",
    ]  # fmt: skip
    assert directions(m) == ["c2s", "s2c", "c2s", "s2c", "c2s", "c2s", "s2c", "c2s", "s2c", "s2c"]
    assert m["id"].to_list() == [
        "0", "0", None, '"srv-1"', '"srv-1"', "1", "1", '"1"', "99", '"1"',
    ]  # fmt: skip
    assert m["id_type"].cast(pl.String).to_list()[3] == "string"
    got = trace.calls.select("direction", "id", "method", "target", "latency_ms", "outcome")
    assert got.rows() == [
        ("c2s", "0", "initialize", None, 41.0, "ok"),
        ("s2c", '"srv-1"', "roots/list", None, 3.0, "ok"),
        ("c2s", "1", "tools/call", "a", 15.0, "error"),
        ("c2s", '"1"', "tools/call", "b", 200.0, "ok"),
        ("c2s", "99", None, None, None, "orphan"),  # answers a c2s request, if any
    ]
    assert trace.sources["truncated"].item() is False


def test_missing_origin_is_inferred(tmp_path: Path) -> None:
    path = write_export(
        tmp_path / "old.json",
        [
            entry(req(0, "initialize", INIT_PARAMS), 0, origin=None, response=res(0), duration=5),
            entry(
                req(1, "tools/call", {"name": "t", "_meta": {"progressToken": "p1"}}),
                10,
                origin=None,
                response=res(1, {"content": []}),
                duration=9,
            ),
            entry(note("notifications/progress", {"progressToken": "p1"}), 12, origin=None),
            entry(req(9, "ping"), 20, origin=None),  # both ways: stays unknown
        ],
    )
    m = mcptrace.load(path).messages
    assert directions(m) == ["c2s", "s2c", "c2s", "s2c", "s2c", "unknown"]
    assert m["direction_inferred"].to_list() == [True] * 5 + [False]


def test_entry_problems_are_warnings(tmp_path: Path) -> None:
    path = write_export(
        tmp_path / "e.json",
        [
            initialize(),
            # a folded response without a duration has no time of its own
            entry(req(1, "tools/list"), 10, response=res(1, {"tools": []})),
            entry(
                req(2, "tools/call", {"name": "t"}),
                20,
                response=res(2, {"content": "oops"}),
                duration=4,
                clientError="Invalid tools/call result: content must be an array",
            ),
            entry(req(3, "ping"), 30, origin="browser"),
            entry(req(4, "ping"), 40, timestamp="yesterday"),
            entry(req(5, "ping"), 50, timestamp="2025-12-04T09:42:00.000"),  # no zone
            entry(req(6, "ping"), 60, timestamp=1764841337204),  # epoch ms
        ],
    )
    m = mcptrace.load(path).messages
    MESSAGES.validate(m)
    assert kinds(m) == ["request", "response"] + ["request", "response"] * 2 + ["request"] * 4
    errors = m["parse_error"].to_list()
    assert errors[3] == "folded `response` without a numeric `duration`: its time is unknown"
    assert m["ts"][3] is None
    assert m["ts_quality"].cast(pl.String)[3] == "none"
    assert errors[4] is None
    assert errors[5] == (
        "the Inspector rejected the response: Invalid tools/call result: content must be an array"
    )
    assert errors[6] == 'unknown `origin` "browser"'
    assert m["direction"].cast(pl.String)[6] == "unknown"  # ping goes both ways
    assert errors[7] == 'unreadable `timestamp` "yesterday"'
    assert m["ts"][7] is None
    assert m["ts_quality"].cast(pl.String).to_list()[8:] == ["local", "exact"]
    assert str(m["ts"][8]) == "2025-12-04 09:42:00+00:00"
    assert str(m["ts"][9]) == "2025-12-04 09:42:17.204000+00:00"


def test_truncated_exports(tmp_path: Path) -> None:
    mid = write_export(
        tmp_path / "mid.json",
        [entry(req(41, "tools/call", {"name": "t"}), 0, response=res(41), duration=2)],
    )
    src = mcptrace.load(mid).sources.row(0, named=True)
    assert src["truncated"] is True
    assert src["note"].startswith("the export does not start with an initialize request")
    assert "dropped" in src["note"]
    assert mcptrace.load(mid).sessions["truncated"].item() is True

    full = [initialize()] + [
        entry(note("notifications/message", {"level": "info", "data": i}), i, origin="server")
        for i in range(999)
    ]
    capped = write_export(tmp_path / "capped.json", full)
    result = mcptrace.load(capped)
    src = result.sources.row(0, named=True)
    assert src["truncated"] is True
    assert src["note"].startswith("1000 entries: the Inspector keeps the latest 1,000")
    assert result.messages.height == 1001
    text = capped.read_text().split("\n")
    assert result.messages["line"].to_list()[-1] == len(text) - text[::-1].index("  {")

    complete = write_export(tmp_path / "ok.json", full[:999])
    assert mcptrace.load(complete).sources["truncated"].item() is False


def test_bad_entries_become_invalid_rows(tmp_path: Path) -> None:
    entries = [
        initialize(),
        42,
        {"id": "x", "timestamp": "2025-12-04T09:41:18.000Z", "direction": "request"},
        entry([req(1, "ping")], 100),
        entry(req(2, "ping"), 200, response="ok", duration=1),
        entry(req(3, "tools/list"), 300, response=res(3), duration=1),
    ]
    path = write_export(tmp_path / "bad.json", entries)
    trace = mcptrace.load(path)
    m = trace.messages
    MESSAGES.validate(m)
    assert kinds(m) == [
        "request", "response", "invalid", "invalid", "invalid", "request", "invalid",
        "request", "response",
    ]  # fmt: skip
    errors = m["parse_error"].to_list()
    assert errors[2] == "Inspector entry is a JSON integer, not an object"
    assert errors[3] == "Inspector entry without a `message`"
    assert errors[4] == "`message` is a JSON array, not an object"
    assert errors[6] == "`response` is a JSON string, not an object"
    assert m["message"][6] == "ok"
    # a bare 42 breaks the Inspector's layout; the tokenizer still finds every entry
    text = path.read_text().split("\n")
    for line, kind in zip(m["line"].to_list(), kinds(m), strict=True):
        assert text[line - 1].strip() in ("{", "42,"), (line, kind)
    assert text[m["line"][2] - 1] == "  42,"
    assert trace.sources["invalid"].item() == 4
    assert trace.calls.select("id", "outcome").rows() == [
        ("0", "ok"), ("2", "unanswered"), ("3", "ok"),
    ]  # fmt: skip


def test_other_layouts_still_find_entry_lines(tmp_path: Path) -> None:
    entries = [initialize(), entry(req(1, "tools/list"), 10, response=res(1), duration=2)]
    one_line = tmp_path / "min.json"
    one_line.write_bytes(orjson.dumps(entries))
    m = mcptrace.load(one_line).messages
    assert m["line"].to_list() == [1, 1, 1, 1]

    # one entry per line, as a hand-made fixture would have it
    per_line = tmp_path / "lines.json"
    per_line.write_bytes(b"[\n" + b",\n".join(orjson.dumps(e) for e in entries) + b"\n]\n")
    m = mcptrace.load(per_line).messages
    assert m["line"].to_list() == [2, 2, 3, 3]
    assert kinds(m) == ["request", "response", "request", "response"]


def test_not_json_is_rejected_by_sniff_and_invalid_when_forced(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_bytes(SAMPLE.read_bytes()[:2000])  # a cut download
    content = read_content(broken)
    assert inspector.sniff(make_head(content)) == 0
    with pytest.raises(UnknownFormatError):
        detect(content)
    trace = mcptrace.load(broken, format="inspector")
    m = trace.messages
    MESSAGES.validate(m)
    assert kinds(m) == ["invalid"]
    assert m["line"].item() == 1
    assert m["parse_error"].item().startswith("Inspector export is not valid JSON: invalid JSON")

    wrapped = tmp_path / "wrapped.json"
    wrapped.write_bytes(orjson.dumps({"messages": [initialize()]}))
    m = mcptrace.load(wrapped, format="inspector").messages
    assert m["parse_error"].item() == "Inspector export is a JSON object, not an array of entries"

    empty = tmp_path / "empty.json"
    empty.write_bytes(b"[]")
    trace = mcptrace.load(empty, format="inspector")
    assert trace.messages.height == 0
    assert trace.sources["truncated"].item() is False


@pytest.mark.parametrize(
    "name",
    [
        "inspector-protocol-notes%20server-2025-12-04T09-42-30.118Z.json",
        # the Inspector's name for its downloads from about 2026-05 to 2026-07
        "inspector-history-pinned-notes%20server-2026-06-01T10-00-42.123Z.json",
    ],
)
def test_server_from_download_name(tmp_path: Path, name: str) -> None:
    path = write_export(tmp_path / name, [initialize()])
    m = mcptrace.load(path).messages
    assert m["server"].unique().to_list() == ["notes server"]
    assert m["session"].unique().to_list() == [name.removesuffix(".json")]
