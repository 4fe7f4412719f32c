"""A finding's message names other messages by line; when a session crosses files (a
rotated log), the line of a message in another file says which file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import share_every_group

import mcptrace
from mcptrace.linter import lint
from mcptrace.linter.context import LintContext
from mcptrace.linter.engine import spelled_places
from mcptrace.linter.groups import lint_in_groups
from mcptrace.linter.rule import PLACE_CLOSE, PLACE_OPEN, line_of
from mcptrace.loaders import accel

needs_scanner = pytest.mark.skipif(not accel.available(), reason="the C scanner is not built")
RULES = Path(mcptrace.__file__).parent / "linter" / "rules"

#: a legacy client reusing id 3: lines 4 and 5 name line 1 (PR001); line 3 is a second
#: response to line 1, already answered at line 2 (PR004)
EXCHANGE = [
    {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}},
    {"dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}},
    {"dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}},
    {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}},
    {"dir": "c2s", "msg": {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"}},
]


#: PR001 applies to legacy revisions; the exchange has no handshake to tell one
LEGACY_PAIRING: dict[str, Any] = {"select": ["PR001", "PR004"], "revision": "2025-11-25"}


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps({"session": "s1", **r}) + b"\n" for r in records))
    return path


def _said(found: pl.DataFrame) -> list[tuple[str, int, str, str]]:
    return [
        (Path(source).name, line, code, message)
        for source, line, code, message in found.select(
            "source", "line", "code", "message"
        ).iter_rows()
    ]


def _rotated(tmp_path: Path) -> Path:
    """The exchange as a rotated log: lines 1-2 in the older file, 3-5 in the newer."""
    folder = tmp_path / "logs"
    _write(folder / "x.jsonl.1", EXCHANGE[:2])
    _write(folder / "x.jsonl", EXCHANGE[2:])
    return folder


def test_a_line_in_the_findings_own_file_is_a_bare_line(tmp_path: Path) -> None:
    found = lint(mcptrace.load(_write(tmp_path / "x.jsonl", EXCHANGE)), **LEGACY_PAIRING)
    assert _said(found) == [
        (
            "x.jsonl",
            3,
            "PR004",
            "another response to the request at line 1 (id 3), already answered at line 2",
        ),
        (
            "x.jsonl",
            4,
            "PR001",
            "request tools/list reuses id 3, first used by this sender at line 1",
        ),
        (
            "x.jsonl",
            5,
            "PR001",
            "request prompts/list reuses id 3, first used by this sender at line 1",
        ),
    ]


def test_a_line_in_another_file_of_the_folder_names_that_file(tmp_path: Path) -> None:
    found = lint(mcptrace.load(_rotated(tmp_path)), **LEGACY_PAIRING)
    assert _said(found) == [
        (
            "x.jsonl",
            1,
            "PR004",
            "another response to the request at line 1 of x.jsonl.1 (id 3), "
            "already answered at line 2 of x.jsonl.1",
        ),
        (
            "x.jsonl",
            2,
            "PR001",
            "request tools/list reuses id 3, first used by this sender at line 1 of x.jsonl.1",
        ),
        (
            "x.jsonl",
            3,
            "PR001",
            "request prompts/list reuses id 3, first used by this sender at line 1 of x.jsonl.1",
        ),
    ]


@needs_scanner
def test_related_gives_the_file_and_line_of_each_message_named(tmp_path: Path) -> None:
    folder = _rotated(tmp_path)
    older = str(folder / "x.jsonl.1")
    found = lint(mcptrace.load(folder), **LEGACY_PAIRING)
    assert found["related"].to_list() == [
        [{"source": older, "line": 1}, {"source": older, "line": 2}],
        [{"source": older, "line": 1}],
        [{"source": older, "line": 1}],
    ]
    single = _write(tmp_path / "one" / "x.jsonl", EXCHANGE)
    found = lint(mcptrace.load(single), revision="2025-11-25")
    keys = found["code"] + ":" + found["line"].cast(pl.String)
    named = dict(zip(keys, found["related"], strict=True))
    assert named["PR004:3"].to_list() == [
        {"source": str(single), "line": 1},
        {"source": str(single), "line": 2},
    ]
    # a message naming no other message relates to none
    assert named["PR007:5"].to_list() == []


def test_shares_spell_lines_in_other_files_as_the_whole_load_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    share_every_group(monkeypatch, 2)
    folder = _rotated(tmp_path)
    files = [str(folder / "x.jsonl.1"), str(folder / "x.jsonl")]
    seen: list[tuple[int, int]] = []
    done = lint_in_groups(
        files, revision="2025-11-25", progress=lambda path, i, n: seen.append((i, n))
    )
    assert done is not None
    assert seen == [(0, 1), (0, 2), (1, 2)], "not linted in shares"
    whole = lint(mcptrace.load(files), revision="2025-11-25")
    assert _said(done.findings) == _said(whole)
    assert any(" of x.jsonl.1" in m for m in whole["message"])


def test_a_file_in_another_folder_is_named_by_its_path(tmp_path: Path) -> None:
    older = _write(tmp_path / "old" / "x.jsonl", EXCHANGE[:2])
    newer = _write(tmp_path / "new" / "x.jsonl", EXCHANGE[2:])
    found = lint(mcptrace.load([older, newer]), select=["PR001"], revision="2025-11-25")
    assert set(found["message"]) == {
        f"request {m} reuses id 3, first used by this sender at line 1 of {older}"
        for m in ("tools/list", "prompts/list")
    }


def test_places_are_spelled_where_a_message_names_several_or_none(tmp_path: Path) -> None:
    folder = _rotated(tmp_path)
    ctx = LintContext(mcptrace.load(folder))
    # ordinals 0-1 are in x.jsonl.1 (lines 1-2), 2-4 in x.jsonl (lines 1-3)
    rows = pl.DataFrame(
        {"ordinal": [2, 3, 4], "source": [str(folder / "x.jsonl")] * 3, "at": [0, 4, None]}
    )
    marked = rows.with_columns(
        message=pl.format("from {} to {} ({}%)", line_of("at"), line_of("ordinal"), pl.lit(50))
    )
    marked = marked.with_columns(
        pl.when(pl.col("ordinal") == 3)
        .then(pl.lit("no place"))
        .otherwise("message")
        .alias("message")
    )
    spelled = spelled_places(marked, ctx)
    assert spelled["message"].to_list() == [
        "from line 1 of x.jsonl.1 to line 1 (50%)",
        "no place",
        None,
    ]
    assert spelled["related"].to_list() == [
        [
            {"source": str(folder / "x.jsonl.1"), "line": 1},
            {"source": str(folder / "x.jsonl"), "line": 1},
        ],
        [],
        [],
    ]


def test_no_rule_quotes_a_bare_capture_line() -> None:
    """A rule that formats ``line {}`` itself would name the wrong message when the
    line is in another file: every quoted line goes through ``line_of``."""
    bare = re.compile(r"\blines? \{\}")
    offenders = [
        f"{path.name}:{number}: {text.strip()}"
        for path in sorted(RULES.glob("*.py"))
        for number, text in enumerate(path.read_text().splitlines(), 1)
        if bare.search(text)
    ]
    assert offenders == []


@pytest.mark.parametrize("mark", [PLACE_OPEN, PLACE_CLOSE])
def test_no_rule_text_holds_the_placeholder_marks(mark: str) -> None:
    # the marks only come from line_of: a literal one in a rule would be taken for a place
    assert not any(mark in path.read_text() for path in RULES.glob("*.py"))
