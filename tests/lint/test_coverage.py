"""The coverage table of the spec rule catalogue (``mcptrace.linter.coverage``).

Its entries must be the catalogue's (``SPEC_RULES.md`` §4, in the shared design
material: read when at hand, as the official schemas are), name only rules that exist,
explain every gap, and together with :data:`BEYOND` account for every rule.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcptrace.linter import RULES
from mcptrace.linter.coverage import BEYOND, CATALOGUE, coverage_markdown, entries_of, main

ROOT = Path(__file__).resolve().parents[2]
SPEC_RULES = ROOT.parent / "shared" / "SPEC_RULES.md"


@pytest.mark.skipif(not SPEC_RULES.exists(), reason=f"catalogue not found at {SPEC_RULES}")
def test_entries_are_the_catalogue_index() -> None:
    index = re.findall(
        r"^\| (R\d{3}) \| `([^`]+)` \|", SPEC_RULES.read_text(encoding="utf-8"), re.MULTILINE
    )
    assert len(index) > 100
    assert [(e.ref, e.label) for e in CATALOGUE] == index


def test_entries_name_existing_rules_and_explain_gaps() -> None:
    for e in CATALOGUE:
        assert all(code in RULES for code in e.codes), e
        if e.status == "uncovered":
            assert not e.codes and e.note, e
        else:
            assert e.codes, e
        if e.status == "partial":
            assert e.note, e


def test_every_rule_is_accounted_for() -> None:
    used = {code for e in CATALOGUE for code in e.codes}
    assert not used & BEYOND.keys(), "a rule in BEYOND checks a catalogue rule"
    assert used | BEYOND.keys() == set(RULES), sorted(set(RULES) - used - BEYOND.keys())


def test_entries_of_a_rule() -> None:
    assert [e.ref for e in entries_of("JR004")] == ["R004"]
    assert entries_of("SC001") == []


def test_published_page_is_current(tmp_path: Path) -> None:
    published = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    assert published == coverage_markdown(), (
        "run: python -m mcptrace.linter.coverage > docs/coverage.md"
    )
    stale = tmp_path / "coverage.md"
    stale.write_text("old\n", encoding="utf-8")
    assert main(["--check", str(stale)]) == 1
    assert main(["--check", str(ROOT / "docs" / "coverage.md")]) == 0
