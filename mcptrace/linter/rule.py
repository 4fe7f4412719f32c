"""What a lint rule is: a check function with its metadata and documentation on it.

A rule is a plain function decorated with :func:`rule`. The decorator records
the stable code, the kebab-case name, the severity, the protocol revisions it
applies to and its scope; the function's docstring *is* the rule's
documentation (printed by ``mcptrace rule CODE``, embedded in SARIF), with the
sections ``## What it does``, ``## Why is this bad?``, ``## Example``,
``Use instead:`` and ``## Reference``.

The check receives a :class:`~mcptrace.linter.context.LintContext` and returns a
frame with at least an ``ordinal`` column (the message the finding points at)
and a ``message`` column (what is wrong, one sentence). The engine keeps only
findings on messages whose revision the rule applies to, and adds location,
session and revision; rules never filter by revision themselves.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.protocol import REVISIONS

if TYPE_CHECKING:
    from mcptrace.linter.context import LintContext

Severity = Literal["error", "warning", "info"]
Scope = Literal["message", "pairing", "session", "transport"]
Check = Callable[["LintContext"], pl.DataFrame]

ALL_REVISIONS: tuple[str, ...] = tuple(REVISIONS)
LEGACY: tuple[str, ...] = tuple(r for r in REVISIONS if r < "2026-07-28")
MODERN: tuple[str, ...] = ("2026-07-28",)

REQUIRED_SECTIONS = (
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "Use instead:",
    "## Reference",
)
CODE_PATTERN = re.compile(r"^[A-Z]{2}\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def since(first: str, last: str | None = None) -> tuple[str, ...]:
    """The revisions from ``first`` to ``last`` (inclusive; default: the latest)."""
    end = last or REVISIONS[-1]
    return tuple(r for r in REVISIONS if first <= r <= end)


@dataclass(frozen=True)
class Rule:
    """A lint rule: metadata, documentation and its check."""

    code: str
    name: str
    severity: Severity
    revisions: tuple[str, ...]
    scope: Scope
    summary: str
    docs: str
    check: Check

    @property
    def family(self) -> str:
        return self.code[:2]

    @property
    def revisions_text(self) -> str:
        if self.revisions == ALL_REVISIONS:
            return "all revisions"
        if len(self.revisions) > 1 and self.revisions == since(
            self.revisions[0], self.revisions[-1]
        ):
            return f"{self.revisions[0]} to {self.revisions[-1]}"
        return ", ".join(self.revisions)

    def missing_sections(self) -> list[str]:
        return [s for s in REQUIRED_SECTIONS if s not in self.docs]

    def render(self) -> str:
        """The text ``mcptrace rule CODE`` prints."""
        head = (
            f"{self.code} {self.name}\n"
            f"severity: {self.severity}   scope: {self.scope}   revisions: {self.revisions_text}\n"
        )
        return head + "\n" + self.docs.strip() + "\n"


def _clean_doc(fn: Callable[..., object]) -> str:
    return inspect.cleandoc(fn.__doc__ or "")


def _summary(docs: str) -> str:
    """First sentence under ``## What it does``."""
    match = re.search(r"## What it does\s*\n(.+?)(?:\n\s*\n|\n##|$)", docs, re.S)
    return " ".join((match.group(1) if match else docs.split("\n", 1)[0]).split())


_REGISTERED: list[Rule] = []


def rule(
    *,
    code: str,
    name: str,
    severity: Severity,
    revisions: Iterable[str],
    scope: Scope,
) -> Callable[[Check], Check]:
    """Register the decorated check as a rule (see the module docstring)."""

    def wrap(fn: Check) -> Check:
        docs = _clean_doc(fn)
        _REGISTERED.append(
            Rule(
                code=code,
                name=name,
                severity=severity,
                revisions=tuple(revisions),
                scope=scope,
                summary=_summary(docs),
                docs=docs,
                check=fn,
            )
        )
        return fn

    return wrap


def registered() -> list[Rule]:
    """Every rule registered so far, in registration order."""
    return list(_REGISTERED)


#: longest JSON value a finding's message spells out
SHOWN_CHARS = 60


def shown(value: object) -> str:
    """``value`` as compact JSON, cut after :data:`SHOWN_CHARS` characters: a value quoted
    in a finding's message."""
    text = _json.dumps(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def quoted(frame: pl.DataFrame, column: str) -> pl.Expr:
    """Column ``column`` of ``frame`` as :func:`shown` spells each value (each distinct
    value converted once)."""
    values = frame[column].unique().drop_nulls()
    spelled = pl.Series([shown(v) for v in values], dtype=pl.String)
    return pl.col(column).replace_strict(values, spelled, default=None, return_dtype=pl.String)


#: A finding's message names another message by its ordinal between these two
#: characters; the engine spells it as :func:`line_of` says. (Control characters that no
#: rule's text uses: quoted values are JSON, which escapes them.)
PLACE_OPEN = "\x1e"
PLACE_CLOSE = "\x1f"


def line_of(ordinal: str | pl.Expr) -> pl.Expr:
    """Where the message whose ordinal is in ``ordinal`` is, for a finding's message:
    ``line N`` when it is in the finding's own file, else ``line N of FILE``. A session
    can cross files (a rotated log), so a bare line number could name the wrong message.

    The expression is a placeholder the engine spells once the finding's own file is
    known; it is null where ``ordinal`` is null, as :func:`~mcptrace._format.fmt` would
    make a message quoting a null line."""
    column = pl.col(ordinal) if isinstance(ordinal, str) else ordinal
    return fmt(PLACE_OPEN + "{}" + PLACE_CLOSE, column.cast(pl.Int64))


def and_more(count: str = "_count") -> pl.Expr:
    """`` (and N more)`` when column ``count`` says a finding stands for several offending
    messages (N = count - 1), else the empty string: a suffix for the finding's message."""
    return (
        pl.when(pl.col(count) > 1)
        .then(fmt(" (and {} more)", pl.col(count) - 1))
        .otherwise(pl.lit(""))
    )


def findings(frame: pl.DataFrame, message: pl.Expr | str) -> pl.DataFrame:
    """Shape a rule's result: the ``ordinal`` of each offending row and a message.

    ``message`` is an expression (or a constant string) evaluated on ``frame``.
    """
    if frame.is_empty():
        # what most rules return on most captures: a query per rule (its message planned
        # for no rows) cost ~8 ms of a lint of a small capture
        return _NO_FINDINGS.clone()
    expr = pl.lit(message) if isinstance(message, str) else message
    return frame.select(pl.col("ordinal").cast(pl.Int64), expr.cast(pl.String).alias("message"))


_NO_FINDINGS = pl.DataFrame(schema={"ordinal": pl.Int64, "message": pl.String})
