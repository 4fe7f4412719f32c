"""The rule registry: every rule by code, and selection by code or prefix.

Rules are registered by importing :mod:`mcptrace.linter.rules`, whose
``__init__`` lists every rule module explicitly, so grep finds them all.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcptrace.errors import UsageError
from mcptrace.linter import rules as _rules  # noqa: F401 - importing registers every rule
from mcptrace.linter.rule import Rule, registered


def _build() -> dict[str, Rule]:
    by_code: dict[str, Rule] = {}
    names: set[str] = set()
    for r in registered():
        if r.code in by_code:
            raise RuntimeError(f"duplicate rule code {r.code}")
        if r.name in names:
            raise RuntimeError(f"duplicate rule name {r.name}")
        by_code[r.code] = r
        names.add(r.name)
    return dict(sorted(by_code.items()))


RULES: dict[str, Rule] = _build()
_BY_NAME = {r.name: r for r in RULES.values()}


def get_rule(code_or_name: str) -> Rule:
    """A rule by code (``JR004``) or name (``null-request-id``); raises UsageError."""
    key = code_or_name.strip()
    found = RULES.get(key.upper()) or _BY_NAME.get(key.lower())
    if found is None:
        raise UsageError(f"no such rule: {code_or_name!r} (see `mcptrace rules`)")
    return found


def _matches(rule: Rule, selector: str) -> bool:
    s = selector.strip()
    return rule.code.startswith(s.upper()) or rule.name == s.lower() or s.upper() == "ALL"


def _selectors(given: Iterable[str] | str | None, what: str) -> list[str]:
    # a lone string is one selector: iterated, "JR" would select J... and R... rules
    items = [given] if isinstance(given, str) else list(given or [])
    odd = [item for item in items if not isinstance(item, str)]
    if odd:
        raise UsageError(f"{what} takes rule codes, prefixes or names as strings, not {odd[0]!r}")
    return items


def select_rules(
    select: Iterable[str] | None = None, ignore: Iterable[str] | None = None
) -> list[Rule]:
    """Rules whose code starts with a selected prefix (all when none), minus ignored ones;
    ``select`` and ``ignore`` are lists of codes, prefixes or names (or one of them)."""
    chosen = list(RULES.values())
    sel = [s for s in _selectors(select, "select") if s.strip()]
    ign = [s for s in _selectors(ignore, "ignore") if s.strip()]
    for selector in [*sel, *ign]:
        if not any(_matches(r, selector) for r in RULES.values()):
            raise UsageError(f"{selector!r} selects no rule (see `mcptrace rules`)")
    if sel:
        chosen = [r for r in chosen if any(_matches(r, s) for s in sel)]
    return [r for r in chosen if not any(_matches(r, s) for s in ign)]
