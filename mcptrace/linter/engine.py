"""Running rules over a trace: the findings table.

For each selected rule the engine runs its check once over the whole trace,
keeps the findings on messages whose revision the rule applies to (sessions of
unknown revision get only the rules that apply to every revision), and stamps
code, name, severity, scope, location and revision on each.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl

from mcptrace.linter.context import LintContext
from mcptrace.linter.registry import select_rules
from mcptrace.linter.rule import ALL_REVISIONS, Rule
from mcptrace.protocol import is_known_revision
from mcptrace.schema import FINDINGS
from mcptrace.trace import Trace


def _run(rule: Rule, ctx: LintContext) -> pl.DataFrame:
    found = rule.check(ctx)
    if found.is_empty():
        return FINDINGS.empty()
    applies = pl.col("revision").is_in(list(rule.revisions))
    if rule.revisions == ALL_REVISIONS:
        applies = (
            applies | pl.col("revision").is_null() | ~pl.col("revision").is_in(list(ALL_REVISIONS))
        )
    # where each finding points: gathered by position, not joined with every message
    found = found.select(pl.col("ordinal").cast(pl.Int64), "message")
    located = (
        ctx.lookup(
            found,
            "ordinal",
            inner=True,
            source="source",
            line="line",
            ts="ts",
            session="session",
            revision="revision",
        )
        .filter(applies)
        .with_columns(
            code=pl.lit(rule.code),
            name=pl.lit(rule.name),
            severity=pl.lit(rule.severity),
            scope=pl.lit(rule.scope),
        )
    )
    return FINDINGS.conform(located)


def lint(
    trace: Trace,
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    revision: str | None = None,
    schema_dir: str | Path | None = None,
) -> pl.DataFrame:
    """Lint a trace; returns the findings table (see :data:`mcptrace.schema.FINDINGS`).

    ``select``/``ignore`` take rule codes, code prefixes (``JR``, ``JR0``) or names;
    ``revision`` judges every session by that revision instead of the detected one;
    ``schema_dir`` (layout ``DIR/<revision>/schema.json``) turns on validation against the
    official JSON Schemas (the SC rules).
    """
    if revision is not None and not is_known_revision(revision):
        from mcptrace.errors import UsageError

        raise UsageError(f"unknown revision {revision!r}")
    ctx = LintContext(
        trace, revision_override=revision, schema_dir=Path(schema_dir) if schema_dir else None
    )
    return merge_findings([_run(rule, ctx) for rule in select_rules(select, ignore)])


def merge_findings(parts: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """Findings tables as one, in capture order (by ordinal, then code), each finding once."""
    found = [p for p in parts if not p.is_empty()]
    if not found:
        return FINDINGS.empty()
    return (
        pl.concat(found)
        .unique(["code", "ordinal", "message"], maintain_order=True)
        .sort("ordinal", "code", maintain_order=True)
    )
