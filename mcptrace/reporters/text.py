"""Plain text for terminals: one line per finding, then counts by rule and a total.

traces/a.jsonl:4: JR004 [error] request tools/list has a null id (2025-11-25)

JR004 null-request-id  1
1 finding (1 error, 0 warnings, 0 info) in 1 session

With ``show_source`` each finding's capture line is quoted under it (cut at
:data:`SOURCE_CHARS`), so that a CI log explains itself without the capture at hand::

    traces/a.jsonl:4: JR004 [error] request tools/list has a null id (2025-11-25)
        | {"ts":"2026-08-01T10:00:00Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":null,...
"""

from __future__ import annotations

import polars as pl

from mcptrace._text import one_line
from mcptrace.reporters._context import ReportContext, display_path


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


#: how much of a capture line ``show_source`` quotes
SOURCE_CHARS = 240


def _quoted(raw: str) -> str:
    text = one_line(raw)
    return "    | " + (text if len(text) <= SOURCE_CHARS else text[:SOURCE_CHARS] + "…")


def render(findings: pl.DataFrame, ctx: ReportContext) -> str:
    """Findings in capture order, a per-rule count (most frequent first) and a total."""
    if findings.is_empty():
        return "No findings.\n"
    raw = ctx.raw_lines(findings) if ctx.show_source else {}
    out = []
    for row in findings.iter_rows(named=True):
        where = display_path(row["source"], ctx.root)
        line = "" if row["line"] is None else f":{row['line']}"
        out.append(
            f"{where}{line}: {row['code']} [{row['severity']}] {one_line(row['message'] or '')} "
            f"({row['revision'] or 'unknown'})"
        )
        quoted = raw.get(row["ordinal"])
        if quoted is not None:
            out.append(_quoted(quoted))
    counts = (
        findings.group_by("code", "name")
        .len()
        .sort(["len", "code"], descending=[True, False])
        .rows()
    )
    label_width = max(len(f"{code} {name}") for code, name, _ in counts)
    count_width = max(len(str(n)) for *_, n in counts)
    out.append("")
    out.extend(f"{f'{code} {name}':<{label_width}}  {n:>{count_width}}" for code, name, n in counts)
    severities = findings["severity"].cast(pl.String).value_counts()
    by_severity = dict(severities.rows())
    sessions = findings["session"].drop_nulls().n_unique()
    out.append(
        f"{_plural(findings.height, 'finding')} ("
        f"{_plural(by_severity.get('error', 0), 'error')}, "
        f"{_plural(by_severity.get('warning', 0), 'warning')}, "
        f"{by_severity.get('info', 0)} info) in {_plural(sessions, 'session')}"
    )
    return "\n".join(out) + "\n"
