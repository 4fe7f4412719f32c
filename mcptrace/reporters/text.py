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

from mcptrace._format import fmt
from mcptrace.reporters._context import ReportContext, display_paths, one_lines


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


#: how much of a capture line ``show_source`` quotes
SOURCE_CHARS = 240


def _quoted(raw: pl.Expr) -> pl.Expr:
    """Each capture line quoted on one line, cut at :data:`SOURCE_CHARS` characters."""
    cut = pl.when(raw.str.len_chars() <= SOURCE_CHARS).then(raw)
    return "    | " + cut.otherwise(raw.str.slice(0, SOURCE_CHARS) + "…")


def render(findings: pl.DataFrame, ctx: ReportContext) -> str:
    """Findings in capture order, a per-rule count (most frequent first) and a total."""
    if findings.is_empty():
        return "No findings.\n"
    # built a column at a time (formatting row by row took ~90 ms at 5,728 findings);
    # a missing code or severity is spelled as the f-strings before spelled it
    parts = findings.select(
        where=display_paths(findings["source"], ctx.root),
        line=pl.concat_str(pl.lit(":"), pl.col("line")).fill_null(""),
        code=pl.col("code").fill_null("None"),
        severity=pl.col("severity").cast(pl.String).fill_null("None"),
        message=one_lines(findings["message"].fill_null("")),
        revision=pl.when(pl.col("revision").is_null() | (pl.col("revision") == ""))
        .then(pl.lit("unknown"))
        .otherwise(pl.col("revision")),
        raw=one_lines(ctx.raw_of(findings)) if ctx.show_source else pl.lit(None, pl.String),
    )
    lines = parts.select(
        pl.concat_str(
            fmt("{}{}: {} [{}] {} ({})", *parts.columns[:-1]),
            _quoted(pl.col("raw")),
            separator="\n",
            ignore_nulls=True,
        )
    ).to_series()
    out = lines.to_list()
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
