"""Every registered rule is complete: code, name, docs, revisions."""

from __future__ import annotations

import pytest

from mcptrace.linter import RULES
from mcptrace.linter.rule import CODE_PATTERN, NAME_PATTERN, REQUIRED_SECTIONS
from mcptrace.protocol import REVISIONS

FAMILIES = {
    "JR": "envelope",
    "PR": "pairing",
    "LC": "lifecycle",
    "MT": "meta",
    "RS": "results",
    "ER": "errors",
    "CP": "capabilities",
    "PG": "progress",
    "CN": "cancellation",
    "LG": "logging",
    "MD": "methods",
    "HT": "transport",
    "ST": "stdio",
    "SC": "schema",
    "SB": "subscriptions",
    "CF": "client",
    "TL": "tools",
    "TK": "tasks",
}


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_metadata_and_docs(code: str) -> None:
    rule = RULES[code]
    assert CODE_PATTERN.match(code)
    assert rule.family in FAMILIES, f"unknown family prefix {rule.family}"
    assert NAME_PATTERN.match(rule.name), rule.name
    assert rule.revisions and set(rule.revisions) <= set(REVISIONS)
    assert list(rule.revisions) == sorted(rule.revisions)
    assert rule.severity in ("error", "warning", "info")
    assert rule.scope in ("message", "pairing", "session", "transport")
    missing = [s for s in REQUIRED_SECTIONS if s not in rule.docs]
    assert not missing, f"{code} docs lack {missing}"
    assert rule.summary and len(rule.summary) < 200
    # the reference names a revision or a spec page
    reference = rule.docs.split("## Reference", 1)[1]
    assert ".mdx" in reference or "schema" in reference.lower()


def test_codes_and_names_are_unique() -> None:
    names = [r.name for r in RULES.values()]
    assert len(names) == len(set(names))
