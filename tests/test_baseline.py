"""Baselines (mcptrace/baseline.py): accepted findings survive unrelated capture edits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import WriteLines, rec, req, res

import mcptrace
from mcptrace.baseline import BASELINE_VERSION, apply_baseline, write_baseline
from mcptrace.errors import UsageError
from mcptrace.linter import lint
from mcptrace.schema import FINDINGS

HANDSHAKE = [
    rec(req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})),
    rec(res(0, {"protocolVersion": "2025-11-25", "capabilities": {}}), dir="s2c"),
]
NULL_ID = rec(req(None, "tools/list"))  # JR004
FLOAT_ID = rec(req(1.5, "tools/list"))  # JR003
UNRELATED = [rec(req(7, "ping")), rec(res(7), dir="s2c")]


def _findings(write_lines: WriteLines, records: list[Any], name: str) -> pl.DataFrame:
    path = write_lines(records, name)
    return lint(mcptrace.load(path), select=["JR003", "JR004"])


def test_written_file_is_versioned_sorted_json(tmp_path: Path, write_lines: WriteLines) -> None:
    findings = _findings(write_lines, [*HANDSHAKE, NULL_ID, FLOAT_ID, NULL_ID], "cap.jsonl")
    out = tmp_path / "baseline.json"
    assert write_baseline(findings, out) == 3
    data = orjson.loads(out.read_bytes())
    assert data["version"] == BASELINE_VERSION
    entries = data["findings"]
    assert [(e["code"], e["count"]) for e in entries] == [("JR003", 1), ("JR004", 2)]
    assert entries[1] == {
        "code": "JR004",
        "source": "cap.jsonl",  # the file name only: the folder may differ next time
        "session": "s1",
        "message": "request tools/list has a null id",
        "count": 2,
    }
    assert "line" not in entries[0]
    # writing again gives the same bytes (stable under version control)
    first = out.read_bytes()
    write_baseline(findings.reverse(), out)
    assert out.read_bytes() == first


def test_unrelated_lines_keep_findings_accepted(tmp_path: Path, write_lines: WriteLines) -> None:
    before = _findings(write_lines, [*HANDSHAKE, NULL_ID, FLOAT_ID], "cap.jsonl")
    baseline = tmp_path / "baseline.json"
    write_baseline(before, baseline)
    after = _findings(
        write_lines, [*HANDSHAKE, *UNRELATED, NULL_ID, *UNRELATED, FLOAT_ID], "cap.jsonl"
    )
    assert after["line"].to_list() != before["line"].to_list()  # the violations moved
    new, accepted, stale = apply_baseline(after, baseline)
    assert new.is_empty() and accepted == 2 and stale == 0


def test_a_new_violation_is_reported(tmp_path: Path, write_lines: WriteLines) -> None:
    baseline = tmp_path / "baseline.json"
    write_baseline(_findings(write_lines, [*HANDSHAKE, NULL_ID], "cap.jsonl"), baseline)
    # the same violation once more (occurrence 2) and a different one
    after = _findings(write_lines, [*HANDSHAKE, NULL_ID, FLOAT_ID, NULL_ID], "cap.jsonl")
    new, accepted, stale = apply_baseline(after, baseline)
    assert accepted == 1 and stale == 0
    assert new.select("line", "code").rows() == [(4, "JR003"), (5, "JR004")]
    assert new.columns == after.columns


def test_a_fixed_violation_is_counted_stale(tmp_path: Path, write_lines: WriteLines) -> None:
    baseline = tmp_path / "baseline.json"
    write_baseline(_findings(write_lines, [*HANDSHAKE, NULL_ID, FLOAT_ID], "cap.jsonl"), baseline)
    new, accepted, stale = apply_baseline(
        _findings(write_lines, [*HANDSHAKE, FLOAT_ID], "cap.jsonl"), baseline
    )
    assert new.is_empty() and accepted == 1 and stale == 1


def test_the_fingerprint_ignores_the_folder_but_not_the_file_name_or_session(
    tmp_path: Path, write_lines: WriteLines
) -> None:
    baseline = tmp_path / "baseline.json"
    write_baseline(_findings(write_lines, [*HANDSHAKE, NULL_ID], "cap.jsonl"), baseline)
    moved = tmp_path / "elsewhere" / "cap.jsonl"
    moved.parent.mkdir()
    moved.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [*HANDSHAKE, NULL_ID]))
    _, accepted, _ = apply_baseline(lint(mcptrace.load(moved), select=["JR004"]), baseline)
    assert accepted == 1
    renamed = _findings(write_lines, [*HANDSHAKE, NULL_ID], "renamed.jsonl")
    assert apply_baseline(renamed, baseline)[1:] == (0, 1)
    other_session = _findings(
        write_lines, [rec(req(None, "tools/list"), session="s9")], "cap.jsonl"
    )
    assert apply_baseline(other_session, baseline)[0].height == 1


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "cannot read baseline"),
        (b"{not json", "is not JSON"),
        (b'{"version": 99, "findings": []}', "not a version 1 mcptrace baseline"),
        (b'{"version": 1, "findings": 5}', "`findings` must be a list of accepted findings"),
        (b'{"version": 1, "findings": [{"code": "JR004"}]}', "finding 1 needs `source`"),
        (b'{"version": 1, "findings": [null]}', "finding 1 is a JSON null, not an object"),
        (
            b'{"version": 1, "findings": [{"source": "a", "session": "s", "code": "JR004",'
            b' "message": "m", "count": 0}]}',
            "finding 1 has a `count` that is not a positive integer",
        ),
    ],
)
def test_bad_baseline_files(tmp_path: Path, content: bytes | None, error: str) -> None:
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UsageError, match=error):
        apply_baseline(FINDINGS.empty(), path)
