"""Reporters: golden outputs for one fixed findings fixture, plus structure and escaping.

The fixture is a small inline capture with known JR003/JR004 violations in two files
and two sessions (one of unknown revision), one of them on a request whose method
holds characters every format must escape. Regenerate the golden files after an
intended change with ``MCPTRACE_UPDATE_GOLDEN=1 pytest tests/reporters``.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import rec, req, res, ts

import mcptrace
from mcptrace.linter import RULES, lint
from mcptrace.reporters import REPORTERS, ReportContext
from mcptrace.reporters.github import escape_data, escape_property
from mcptrace.reporters.sarif import artifact_uri
from mcptrace.schema import FINDINGS

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_FILES = {
    "text": "text.txt",
    "json": "findings.json",
    "sarif": "findings.sarif",
    "junit": "junit.xml",
    "github": "github.txt",
}
UPDATE = os.environ.get("MCPTRACE_UPDATE_GOLDEN") == "1"
#: a method name that needs escaping in every format: %, comma, colon, <&>, newline, quote
AWKWARD_METHOD = 'x/50%,a:b<&>\n"q"'

DEMO = [
    rec(
        req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}),
        ts=ts(1),
    ),
    rec(res(0, {"protocolVersion": "2025-11-25", "capabilities": {}}), dir="s2c", ts=ts(2)),
    rec({"jsonrpc": "2.0", "method": "notifications/initialized"}, ts=ts(3)),
    rec(req(None, "tools/list"), ts=ts(4)),  # line 4: JR004
    rec(req(1.5, "tools/list"), ts=ts(5)),  # line 5: JR003
    rec(req(None, AWKWARD_METHOD), ts=ts(6)),  # line 6: JR004
]
OTHER = [  # no initialize (the session's revision is unknown) and no times
    rec(req(True, "ping"), session="s2", ts=None),  # line 1: JR003
    rec(req(None, "ping"), session="s2", ts=None),  # line 2: JR004
]
EXPECTED_LOCATIONS = [
    ("traces/demo.jsonl", 4, "JR004"),
    ("traces/demo.jsonl", 5, "JR003"),
    ("traces/demo.jsonl", 6, "JR004"),
    ("traces/other.jsonl", 1, "JR003"),
    ("traces/other.jsonl", 2, "JR004"),
]


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


@pytest.fixture
def linted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[pl.DataFrame, ReportContext]:
    """The findings of the fixed capture and a context with a fixed version and root."""
    _write(tmp_path / "traces" / "demo.jsonl", DEMO)
    _write(tmp_path / "traces" / "other.jsonl", OTHER)
    monkeypatch.chdir(tmp_path)  # relative paths in, so sources are stable across runs
    trace = mcptrace.load(["traces/demo.jsonl", "traces/other.jsonl"])
    findings = lint(trace, select=["JR003", "JR004"])
    ctx = ReportContext(
        messages=trace.messages,
        version="9.9.9",
        root=str(tmp_path),
        information_uri="https://example.org/mcptrace",
    )
    return findings, ctx


def test_fixture_has_the_known_violations(linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, _ = linted
    assert findings.select("source", "line", "code").rows() == EXPECTED_LOCATIONS
    assert findings["revision"].to_list() == ["2025-11-25"] * 3 + [None, None]


@pytest.mark.parametrize("fmt", sorted(REPORTERS))
def test_golden(fmt: str, linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, ctx = linted
    out = REPORTERS[fmt](findings, ctx)
    golden = GOLDEN / GOLDEN_FILES[fmt]
    if UPDATE:
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8"), (
        f"{golden.name} differs; if intended: MCPTRACE_UPDATE_GOLDEN=1 pytest tests/reporters"
    )


def test_reporters_are_pure(linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, ctx = linted
    before = findings.clone()
    for render in REPORTERS.values():
        assert render(findings, ctx) == render(findings, ctx)
    assert findings.equals(before)


def test_text_lines_summary_and_empty(linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, ctx = linted
    lines = REPORTERS["text"](findings, ctx).splitlines()
    assert (
        lines[0]
        == "traces/demo.jsonl:4: JR004 [error] request tools/list has a null id (2025-11-25)"
    )
    # untrusted text stays on one line
    assert lines[2].startswith('traces/demo.jsonl:6: JR004 [error] request x/50%,a:b<&>\\n"q"')
    assert lines[3].endswith("(unknown)")
    assert lines[5] == ""
    assert lines[6].split() == ["JR004", "null-request-id", "3"]  # most frequent first
    assert lines[7].split() == ["JR003", "request-id-wrong-type", "2"]
    assert lines[8] == "5 findings (5 errors, 0 warnings, 0 info) in 2 sessions"
    assert REPORTERS["text"](FINDINGS.empty(), ctx) == "No findings.\n"
    one = findings.head(1).with_columns(
        severity=pl.lit("warning").cast(FINDINGS.schema["severity"])
    )
    assert REPORTERS["text"](one, ctx).endswith(
        "1 finding (0 errors, 1 warning, 0 info) in 1 session\n"
    )


def test_text_show_source_quotes_each_capture_line_on_one_line(
    linted: tuple[pl.DataFrame, ReportContext],
) -> None:
    from dataclasses import replace

    from mcptrace.reporters.text import SOURCE_CHARS

    findings, ctx = linted
    lines = REPORTERS["text"](findings, replace(ctx, show_source=True)).splitlines()
    assert lines[0].startswith("traces/demo.jsonl:4: JR004")
    assert lines[1] == "    | " + orjson.dumps(DEMO[3]).decode()
    # the awkward method's newline stays escaped: the quote is one line
    assert lines[5].startswith("    | ") and "\\n" in lines[5]
    assert len([line for line in lines if line.startswith("    | ")]) == findings.height
    # a long line is cut
    long = findings.head(1)
    raw = "x" * (SOURCE_CHARS + 50)
    messages = pl.DataFrame({"ordinal": long["ordinal"], "raw": [raw]})
    cut = REPORTERS["text"](long, replace(ctx, messages=messages, show_source=True))
    assert cut.splitlines()[1] == "    | " + "x" * SOURCE_CHARS + "…"
    # without the messages there is nothing to quote
    bare = REPORTERS["text"](findings, replace(ctx, messages=None, show_source=True))
    assert bare == REPORTERS["text"](findings, ctx)


def test_json_has_every_column_in_table_order(linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, ctx = linted
    data = orjson.loads(REPORTERS["json"](findings, ctx))
    assert [list(d) for d in data] == [FINDINGS.names] * findings.height
    rebuilt = pl.DataFrame(data).with_columns(pl.col("ts").str.to_datetime(time_zone="UTC"))
    assert FINDINGS.conform(rebuilt).equals(findings)
    assert findings["ts"].null_count() < findings.height  # the times are really there
    assert all(d["ts"] is None or d["ts"].endswith("Z") for d in data)
    assert data[2]["message"] == f"request {AWKWARD_METHOD} has a null id"
    assert orjson.loads(REPORTERS["json"](FINDINGS.empty(), ctx)) == []


def test_sarif_structure(linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, ctx = linted
    log = orjson.loads(REPORTERS["sarif"](findings, ctx))
    assert log["version"] == "2.1.0"
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mcptrace" and driver["version"] == "9.9.9"
    # only the rules that occur, although the context knows them all
    assert len(ctx.rules) > 2
    assert [r["id"] for r in driver["rules"]] == ["JR003", "JR004"]
    jr004 = driver["rules"][1]
    assert jr004["shortDescription"]["text"] == RULES["JR004"].summary
    assert jr004["help"]["markdown"] == RULES["JR004"].docs
    assert jr004["defaultConfiguration"]["level"] == "error"
    assert jr004["properties"]["scope"] == "message"
    got = []
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        loc = result["locations"][0]["physicalLocation"]
        got.append((loc["artifactLocation"]["uri"], loc["region"]["startLine"], result["ruleId"]))
    assert got == EXPECTED_LOCATIONS  # region.startLine is the capture line
    assert run["results"][0]["properties"] == {"session": "s1", "revision": "2025-11-25"}


def test_sarif_related_locations_are_the_messages_a_finding_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a legacy client reuses id 3 across a log rotation: line 1 of the newer file reuses
    # the id of line 1 of the older one
    older = [
        rec(req(3, "tools/list"), ts=ts(1)),
        rec(res(3, {"tools": []}), dir="s2c", ts=ts(2)),
    ]
    _write(tmp_path / "logs" / "x.jsonl.1", older)
    _write(tmp_path / "logs" / "x.jsonl", [rec(req(3, "prompts/list"), ts=ts(3))])
    monkeypatch.chdir(tmp_path)
    trace = mcptrace.load("logs")
    findings = lint(trace, select=["PR001"], revision="2025-11-25")
    ctx = ReportContext(messages=trace.messages, version="9.9.9", root=str(tmp_path))
    (result,) = orjson.loads(REPORTERS["sarif"](findings, ctx))["runs"][0]["results"]
    assert result["message"]["text"].endswith("first used by this sender at line 1 of x.jsonl.1")
    assert result["relatedLocations"] == [
        {
            "id": 1,
            "physicalLocation": {
                "artifactLocation": {"uri": "logs/x.jsonl.1"},
                "region": {"startLine": 1},
            },
        }
    ]
    (record,) = orjson.loads(REPORTERS["json"](findings, ctx))
    assert record["related"] == [{"source": str(Path("logs") / "x.jsonl.1"), "line": 1}]


def test_sarif_and_github_levels(linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, ctx = linted
    mixed = findings.head(3).with_columns(
        severity=pl.Series(["error", "warning", "info"]).cast(FINDINGS.schema["severity"])
    )
    log = orjson.loads(REPORTERS["sarif"](mixed, ctx))
    assert [r["level"] for r in log["runs"][0]["results"]] == ["error", "warning", "note"]
    commands = [line.split(" ", 1)[0] for line in REPORTERS["github"](mixed, ctx).splitlines()]
    assert commands == ["::error", "::warning", "::notice"]


def test_sarif_uris_are_relative_with_forward_slashes() -> None:
    assert artifact_uri("/srv/repo/traces/a.jsonl", "/srv/repo") == "traces/a.jsonl"
    assert artifact_uri("traces\\sub\\a.jsonl", None) == "traces/sub/a.jsonl"
    assert artifact_uri("C:\\ci\\traces\\a.jsonl", "C:\\ci") == "traces/a.jsonl"
    assert artifact_uri("my traces/a b.jsonl", None) == "my%20traces/a%20b.jsonl"
    assert artifact_uri("/elsewhere/a.jsonl", "/srv/repo") == "file:///elsewhere/a.jsonl"


def test_junit_parses_and_carries_raw_lines(linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, ctx = linted
    root = ET.fromstring(REPORTERS["junit"](findings, ctx))
    assert root.tag == "testsuites" and root.get("failures") == "5"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["traces/demo.jsonl", "traces/other.jsonl"]
    assert [s.get("tests") for s in suites] == ["3", "2"]
    failures = root.findall(".//failure")
    assert [f.get("type") for f in failures] == [code for *_, code in EXPECTED_LOCATIONS]
    assert failures[2].get("message") == f"request {AWKWARD_METHOD} has a null id"
    raw = orjson.loads(failures[2].text or "")
    assert raw["msg"]["method"] == AWKWARD_METHOD  # the verbatim capture line
    empty = ET.fromstring(REPORTERS["junit"](FINDINGS.empty(), ctx))
    assert empty.get("failures") == "0" and len(empty.findall(".//testcase")) == 1


def test_junit_survives_characters_xml_cannot_hold(
    linted: tuple[pl.DataFrame, ReportContext],
) -> None:
    findings, ctx = linted
    nasty = findings.head(1).with_columns(message=pl.lit("bell \x07 and nul \x00"))
    failure = ET.fromstring(REPORTERS["junit"](nasty, ctx)).find(".//failure")
    assert failure is not None and failure.get("message") == "bell \\x07 and nul \\x00"


def test_github_escapes(linted: tuple[pl.DataFrame, ReportContext]) -> None:
    findings, ctx = linted
    lines = REPORTERS["github"](findings, ctx).splitlines()
    assert len(lines) == findings.height  # the newline in a message did not split a command
    assert lines[0] == (
        "::error file=traces/demo.jsonl,line=4,title=JR004 null-request-id::"
        "request tools/list has a null id"
    )
    # capture text is shown on one line, as in the text report: a newline or an escape
    # sequence in it can neither forge a second command nor act on the log viewer
    assert lines[2].endswith('::request x/50%25,a:b<&>\\n"q" has a null id')
    escaped = findings.head(1).with_columns(message=pl.lit("m\x1b[2J\x9b\r::error::x"))
    assert REPORTERS["github"](escaped, ctx).endswith("::m\\x1b[2J\\x9b\\r::error::x\n")
    assert escape_data("100%\r\n") == "100%25%0D%0A"
    assert escape_property("C:\\a,b.jsonl") == "C%3A\\a%2Cb.jsonl"
    odd = findings.head(1).with_columns(source=pl.lit("dir,x/a:b.jsonl"))
    assert REPORTERS["github"](odd, ReportContext()).startswith(
        "::error file=dir%2Cx/a%3Ab.jsonl,line=4,"
    )
    assert REPORTERS["github"](FINDINGS.empty(), ctx) == ""
