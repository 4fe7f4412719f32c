"""Every rule against its case file: tests/lint/cases/<CODE>.toml.

A case file holds named captures (mcptrace capture JSONL) and the lines where the
rule must fire; ``expect = []`` is a passing case. ``revision`` judges the case's
sessions by that revision, as ``mcptrace lint --revision`` does; ``schemas = true``
validates against the official schemas in ``../shared/spec`` (``--schema-dir``);
``allowed_origins`` is ``--allowed-origin``; ``messages``, when given, holds a text
each finding's message must contain, in line order.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from factories import SHARED_SPEC

import mcptrace
from mcptrace.linter import RULES, lint

CASES = Path(__file__).parent / "cases"


def _load_cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(CASES.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        assert data["rule"] == path.stem, f"{path.name} names rule {data['rule']}"
        for case in data["case"]:
            out.append((data["rule"], case))
    return out


ALL_CASES = _load_cases()


@pytest.mark.parametrize(
    ("code", "case"), ALL_CASES, ids=[f"{code}-{case['name']}" for code, case in ALL_CASES]
)
def test_rule_case(tmp_path: Path, code: str, case: dict[str, Any]) -> None:
    path = tmp_path / "case.jsonl"
    path.write_text(case["capture"].strip() + "\n")
    schema_dir = None
    if case.get("schemas"):
        if not SHARED_SPEC.is_dir():
            pytest.skip(f"official schemas not found at {SHARED_SPEC}")
        schema_dir = SHARED_SPEC
    trace = mcptrace.load(path, format=case.get("format"))
    found = lint(
        trace,
        select=[code],
        revision=case.get("revision"),
        schema_dir=schema_dir,
        allowed_origins=case.get("allowed_origins"),
    )
    lines = sorted(found["line"].to_list())
    assert lines == sorted(case["expect"]), found.select("line", "message").rows()
    if "messages" in case:
        said = found.sort("line")["message"].to_list()
        assert len(said) == len(case["messages"]), said
        for text, wanted in zip(said, case["messages"], strict=True):
            assert wanted in text, (wanted, text)


def test_every_rule_has_failing_and_passing_cases() -> None:
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for code, case in ALL_CASES:
        by_rule.setdefault(code, []).append(case)
    missing = sorted(set(RULES) - set(by_rule))
    assert not missing, f"rules without tests/lint/cases/<CODE>.toml: {missing}"
    for code, cases in by_rule.items():
        assert code in RULES, f"case file for unknown rule {code}"
        assert any(c["expect"] for c in cases), f"{code}: no failing case"
        assert any(not c["expect"] for c in cases), f"{code}: no passing case"
