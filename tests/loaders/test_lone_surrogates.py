"""Lone UTF-16 surrogate escapes (`\\ud83d` without its low half): JSON's grammar allows
them, orjson refuses them. A message holding one is still read, with U+FFFD in its
place, and the row (or, for one-document formats, the file) says so; JR016 reports it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from factories import WriteLines

import mcptrace
from mcptrace import _json

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
CALL = (
    rb'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
    rb'"params":{"name":"q","arguments":{"s":"a\ud83d"}}}'
)
ANSWER = rb'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\udc00b"}]}}'


def _notes(trace: mcptrace.Trace) -> list[str]:
    return [n for n in trace.messages["parse_error"].to_list() if n]


def test_mend_replaces_only_lone_halves_and_keeps_positions() -> None:
    text = r'{"a":"x\ud83d\ude00 \\ud800 \ud800","b":"\udc00"}'
    mended = _json.mend_surrogates(text)
    assert mended is not None
    fixed, note = mended
    assert fixed == r'{"a":"x\ud83d\ude00 \\ud800 \ufffd","b":"\ufffd"}'
    assert len(fixed) == len(text)
    assert note == f"{_json.LONE_SURROGATE} `\\ud800` at line 1 column 29 and 1 more read as U+FFFD"
    assert _json.mend_surrogates(r'{"a":"\ud83d\ude00 \\udc00"}') is None


def test_loads_mending_reads_the_value_and_reports_other_faults() -> None:
    value, fixed, note = _json.loads_mending(b'{"a":"x\\ud800"}')
    assert value == {"a": "x\ufffd"} and fixed == '{"a":"x\\ufffd"}' and note
    assert _json.loads_mending(b'{"a":1}') == ({"a": 1}, None, None)
    # a text with another fault still fails, at that fault's position
    with pytest.raises(_json.JSONDecodeError, match="char 14"):
        _json.loads_mending(r'{"a":"\ud800",]')


@pytest.mark.parametrize("pure", [False, True], ids=["scanner", "pure-python"])
def test_stdio_message_with_a_lone_half_is_read_and_paired(
    write_lines: WriteLines, monkeypatch: pytest.MonkeyPatch, pure: bool
) -> None:
    if pure:
        monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1")
    trace = mcptrace.load(write_lines([CALL, ANSWER]), format="stdio")
    assert trace.messages["kind"].cast(pl.String).to_list() == ["request", "response"]
    assert trace.calls["outcome"].to_list() == ["ok"]
    assert trace.messages["raw"].to_list() == [CALL.decode(), ANSWER.decode()]
    # the text rules read is the mended one (Polars reads no JSON with a lone half)
    texts = trace.messages["message"]
    assert texts.str.json_path_match("$.id").to_list() == ["1", "1"]
    assert "\\ufffd" in texts[0] and "\\ufffd" in texts[1]
    notes = _notes(trace)
    assert len(notes) == 2 and all(_json.LONE_SURROGATE in n for n in notes)
    found = mcptrace.lint(trace, select=["JR016", "ST", "JR014"])
    assert found["code"].to_list() == ["JR016", "JR016"]
    assert "`\\ud83d`" in found["message"][0]


@pytest.mark.parametrize("pure", [False, True], ids=["scanner", "pure-python"])
def test_capture_record_with_a_lone_half(
    write_lines: WriteLines, monkeypatch: pytest.MonkeyPatch, pure: bool
) -> None:
    if pure:
        monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1")
    lines = [
        b'{"ts":"2026-01-01T00:00:00Z","dir":"c2s","session":"s","msg":' + CALL + b"}",
        b'{"ts":"2026-01-01T00:00:01Z","dir":"s2c","session":"s","msg":' + ANSWER + b"}",
    ]
    trace = mcptrace.load(write_lines(lines))
    assert trace.sources["format"].to_list() == ["capture"]
    assert trace.calls["outcome"].to_list() == ["ok"]
    assert trace.messages["direction"].cast(pl.String).to_list() == ["c2s", "s2c"]
    assert len(_notes(trace)) == 2
    assert mcptrace.lint(trace, select=["JR016"]).height == 2


def test_capture_raw_text_with_a_lone_half_is_the_message_text(write_lines: WriteLines) -> None:
    # the writer kept the wire text in `raw`; its `msg` holds U+FFFD where the wire had
    # the lone half (what a writer that mended it stores)
    wire = (
        r'{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "\udc00b"}]}}'
    )
    msg = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "\ufffdb"}]}}
    line = json.dumps({"dir": "s2c", "msg": msg, "raw": wire}, ensure_ascii=False).encode()
    trace = mcptrace.load(write_lines([line]))
    assert trace.messages["parse_error"].to_list() == [None]
    assert trace.messages["message"][0].startswith('{"jsonrpc": "2.0"')


def test_one_line_file_is_recognised(write_lines: WriteLines) -> None:
    trace = mcptrace.load(write_lines([CALL]))
    assert trace.sources["format"].to_list() == ["stdio"]
    assert trace.messages["method"].to_list() == ["tools/call"]


def test_vscode_log_line_with_a_lone_half(tmp_path: Path) -> None:
    path = tmp_path / "mcp.log"
    path.write_bytes(
        b"2026-01-12 10:05:11.252 [debug] [editor -> server] " + CALL + b"\n"
        b"2026-01-12 10:05:12.640 [debug] [server -> editor] " + ANSWER + b"\n"
    )
    trace = mcptrace.load(path, format="vscode")
    assert trace.messages["kind"].cast(pl.String).to_list() == ["request", "response"]
    assert len(_notes(trace)) == 2
    assert mcptrace.lint(trace, select=["JR016"]).height == 2


def test_mcpspy_wire_text_with_a_lone_half(tmp_path: Path) -> None:
    first = json.loads((SAMPLES / "mcpspy" / "mcpspy-2026-03-17.jsonl").read_text().splitlines()[0])
    first["raw"] = first["raw"].replace('"2.1.72"', '"2.1.72 \\ud83d"')
    path = tmp_path / "spy.jsonl"
    path.write_text(json.dumps(first) + "\n")
    trace = mcptrace.load(path, format="mcpspy")
    assert trace.messages["kind"].cast(pl.String).to_list() == ["request"]
    assert mcptrace.lint(trace, select=["JR016"]).height == 1


def _first_message(value: Any) -> dict[str, Any] | None:
    """The first JSON-RPC request or notification object in a parsed document."""
    if isinstance(value, dict):
        if "jsonrpc" in value and "method" in value:
            return value
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        found = _first_message(child)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize(
    "sample",
    [
        "inspector/inspector-export.json",
        "mcpjam/mcpjam-cli-tools-call.json",
        "mcp-recorder/notes_stdio.json",
    ],
)
def test_one_document_formats_read_the_file_and_note_it(tmp_path: Path, sample: str) -> None:
    source = SAMPLES / sample
    before = mcptrace.load(source)
    doc = json.loads(source.read_text())
    message = _first_message(doc)
    if message is None:  # a format keeping messages as text: the lone half is in a field
        doc = {"_comment": "cut \ud83d", **doc} if isinstance(doc, dict) else doc
    else:
        message.setdefault("params", {})["_note"] = "cut \ud83d"
    path = tmp_path / Path(sample).name
    path.write_text(json.dumps(doc))  # ensure_ascii: the lone half is written `\ud83d`
    assert "\\ud83d" in path.read_text()
    after = mcptrace.load(path)
    assert after.sources["format"].to_list() == before.sources["format"].to_list()
    assert after.messages.height == before.messages.height
    kinds = after.messages["kind"].cast(pl.String)
    assert (kinds == "invalid").sum() == (
        before.messages["kind"].cast(pl.String) == "invalid"
    ).sum()
    note = after.sources["note"][0]
    assert note is not None and _json.LONE_SURROGATE in note


def test_har_body_with_a_lone_half(tmp_path: Path) -> None:
    source = SAMPLES / "har" / "streamable-http-2025-11-25.har"
    doc = json.loads(source.read_text())
    posted = [
        e
        for e in doc["log"]["entries"]
        if "tools/call" in e["request"].get("postData", {}).get("text", "")
    ]
    body = posted[0]["request"]["postData"]
    body["text"] = body["text"].replace('"arguments":{', '"arguments":{"cut":"x\\ud83d",', 1)
    assert "\\ud83d" in body["text"]
    path = tmp_path / "x.har"
    path.write_text(json.dumps(doc))
    trace = mcptrace.load(path)
    before = mcptrace.load(source)
    assert trace.calls["outcome"].to_list() == before.calls["outcome"].to_list()
    found = mcptrace.lint(trace, select=["JR016"])
    assert found.height == 1
