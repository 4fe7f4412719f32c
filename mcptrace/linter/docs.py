"""The rule reference, ``docs/rules.md``, generated from the registry.

Every fact comes from the rules themselves (code, name, severity, scope,
revisions, docstring), so the page cannot drift from the code; a test
regenerates it and compares. Regenerate with::

    python -m mcptrace.linter.docs > docs/rules.md

``python -m mcptrace.linter.docs --check docs/rules.md`` exits 1 when the file is stale.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from importlib import import_module

from mcptrace.linter.registry import RULES
from mcptrace.linter.rule import Rule

HEADER = (
    "# mcptrace rules\n\n"
    "Generated from the rule registry by `python -m mcptrace.linter.docs`; do not edit by hand.\n"
    "`mcptrace rule CODE` prints one rule, `mcptrace rules` lists them all.\n\n"
    "Severity follows the spec keyword: **error** for MUST / MUST NOT, **warning** for\n"
    "SHOULD / SHOULD NOT, **info** for derived or informational checks. A rule applies only to\n"
    "sessions speaking one of its revisions; sessions of unknown revision get only the rules\n"
    "that apply to every revision (`--revision` judges all sessions by one revision).\n"
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def anchor(rule: Rule) -> str:
    """The GitHub anchor of the rule's heading (``### JR004 null-request-id``)."""
    return f"{rule.code.lower()}-{rule.name}"


def rules_table(rules: Iterable[Rule], *, links: bool = False) -> str:
    """A markdown table of ``rules``: code, name, severity, scope, revisions, summary."""
    lines = [
        "| code | name | severity | scope | revisions | summary |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules:
        code = f"[{r.code}](#{anchor(r)})" if links else r.code
        lines.append(
            f"| {code} | `{r.name}` | {r.severity} | {r.scope} | {_cell(r.revisions_text)} "
            f"| {_cell(r.summary)} |"
        )
    return "\n".join(lines) + "\n"


def _demote(docs: str, levels: int) -> str:
    """Headings in a rule's docs moved ``levels`` down, code fences left alone."""
    out = []
    fenced = False
    for line in docs.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            line = "#" * levels + line  # noqa: PLW2901 - the demoted line replaces the original
        out.append(line)
    return "\n".join(out)


def _module_title(module: str) -> tuple[str, str]:
    """(short name, first docstring line) of a rule module."""
    doc = (import_module(module).__doc__ or "").strip()
    return module.rsplit(".", 1)[-1], doc.split("\n", 1)[0] if doc else ""


def rule_section(rule: Rule) -> str:
    return (
        f"### {rule.code} {rule.name}\n\n"
        f"severity: **{rule.severity}** · scope: {rule.scope} · "
        f"revisions: {rule.revisions_text}\n\n"
        f"{_demote(rule.docs.strip(), 2)}\n"
    )


def rules_markdown(rules: Sequence[Rule] | None = None) -> str:
    """The whole reference page: an index table, then every rule grouped by module."""
    chosen = list(RULES.values()) if rules is None else list(rules)
    groups: dict[str, list[Rule]] = {}
    for r in chosen:
        groups.setdefault(r.check.__module__, []).append(r)
    parts = [HEADER, f"{len(chosen)} rules.\n", rules_table(chosen, links=True)]
    for module, members in groups.items():
        name, title = _module_title(module)
        families = ", ".join(dict.fromkeys(r.family for r in members))
        parts.append(f"## {name} ({families})\n" + (f"\n{title}\n" if title else ""))
        parts.extend(rule_section(r) for r in members)
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcptrace.linter.docs", description=__doc__)
    parser.add_argument("--check", metavar="FILE", help="exit 1 if FILE is not up to date")
    args = parser.parse_args(argv)
    return publish(rules_markdown(), args.check, "mcptrace.linter.docs")


def publish(text: str, check: str | None, module: str) -> int:
    """Write a generated page to stdout, or with ``check`` (a file) say whether that file
    is the page as ``python -m module`` generates it now (0) or stale (1)."""
    if check:
        with open(check, encoding="utf-8") as fh:
            current = fh.read()
        if current != text:
            print(f"{check} is stale: run python -m {module} > {check}")
            return 1
        return 0
    # bytes, so the page is UTF-8 whatever the locale of the shell redirecting it
    sys.stdout.buffer.write(text.encode())
    return 0


if __name__ == "__main__":  # pragma: no cover - documentation generator
    raise SystemExit(main())
