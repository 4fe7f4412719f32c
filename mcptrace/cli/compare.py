"""``mcptrace compare``: two captures, or a capture before and after a moment, side by side.

A thin shell over :func:`mcptrace.analysis.compare`: it loads the sides, resolves
options and renders a table, JSON or CSV. Exit codes: 0, or 2 for a usage error or an
input file that could not be read (after printing what the readable files show).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import polars as pl
import typer

from mcptrace import _json, analysis
from mcptrace.analysis._common import dimensions
from mcptrace.cli._common import (
    InputFormatOpt,
    SinceOpt,
    TzOpt,
    UntilOpt,
    image_format,
    load_or_exit,
    parse_time,
    report_input_errors,
    save_figure,
    usage_error,
)
from mcptrace.cli._render import plain_values, table
from mcptrace.cli.stats import By, OutputFormat

_SHOWN = {
    "calls_before": "calls before",
    "calls_after": "after",
    "p50_before": "p50 before",
    "p50_after": "after",
    "p95_before": "p95 before",
    "p95_after": "after",
    "p95_ratio": "p95 x",
    "error_rate_before": "err% before",
    "error_rate_after": "after",
    "error_rate_change": "err change",
}


def compare(
    before: Annotated[
        Path,
        typer.Argument(
            help="The capture before: a file, a directory (read recursively) or a glob.",
            show_default=False,
        ),
    ],
    after: Annotated[
        Path | None,
        typer.Argument(
            help="The capture after; omit it and give --at to split BEFORE at a moment.",
            show_default=False,
        ),
    ] = None,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            help="Compare the calls of one capture requested before this moment (ISO 8601, "
            "UTC when no zone is given: a deploy, the first alert) with those from it on.",
        ),
    ] = None,
    by: Annotated[
        list[By] | None,
        typer.Option(
            "--by",
            help="Group by this dimension; repeat for several.  [default: method]",
            show_default=False,
        ),
    ] = None,
    format: Annotated[
        OutputFormat,
        typer.Option("--format", help="Output: an aligned table, JSON or CSV."),
    ] = OutputFormat.table,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Also draw each group's p50 and p95 before and after into this .png or .svg file.",
        ),
    ] = None,
    input_format: InputFormatOpt = None,
    tz: TzOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
) -> None:
    """Calls, p50/p95 latency and error rate per method (or --by) of two captures side by
    side, most regressed first: what got slower, what started failing."""
    if (after is None) == (at is None):
        raise usage_error("give either two captures (BEFORE AFTER) or one and --at TIME")
    image = image_format(plot) if plot is not None else None
    if plot is not None and image is None:
        raise usage_error(f"cannot write {plot}: the plot file must end in .png or .svg")
    moment = parse_time(at, "--at") if at is not None else None
    keys = [b.value for b in by] if by else ["method"]
    try:
        dimensions(keys)  # checked before loading: a typo does not wait for the captures
    except ValueError as exc:
        raise usage_error(str(exc)) from exc
    first = load_or_exit([before], input_format, tz, since=since, until=until)
    status = report_input_errors(first)
    if moment is not None:
        old, new, untimed = analysis.split_at(first, moment)
        names = (f"calls requested before {at}", f"calls requested from {at} on")
    else:
        assert after is not None
        second = load_or_exit([after], input_format, tz, since=since, until=until)
        status = max(status, report_input_errors(second))
        old, new, untimed = first.calls, second.calls, 0
        names = (str(before), str(after))
    typer.echo(_render(old, new, keys, names, untimed, format.value))
    if plot is not None and image is not None:
        from mcptrace import plots

        save_figure(plots.latency_changes(old, new, keys), plot, image)
        typer.echo(f"wrote the latency changes plot to {plot}", err=True)
    raise typer.Exit(status)


def _render(
    old: Any, new: Any, keys: list[str], names: tuple[str, str], untimed: int, fmt: str
) -> str:
    groups = analysis.compare(old, new, keys)
    overall = analysis.compare(old, new, ())
    if fmt == "csv":
        return plain_values(groups).write_csv().rstrip("\n")
    if fmt == "json":
        doc = {
            "before": names[0],
            "after": names[1],
            "overall": plain_values(overall).to_dicts()[0] if overall.height else None,
            "groups": plain_values(groups).to_dicts(),
            "untimed_calls": untimed,
        }
        return _json.dumpb(doc, pretty=True).decode()
    out = [f"Before: {names[0]}", f"After:  {names[1]}"]
    if overall.height:
        out.append(_overall_line(overall.row(0, named=True)))
    if untimed:
        out.append(f"{untimed} call(s) without a request time are on neither side")
    out.append("")
    title = "By " + ", ".join(keys) + ", most regressed first"
    if groups.is_empty():
        out.append(f"{title}\n  no calls")
    else:
        shown = groups.with_columns(
            (pl.col(c) * 100).round(1)
            for c in ("error_rate_before", "error_rate_after", "error_rate_change")
        )
        headers = [*keys, *(_SHOWN[c] for c in shown.columns if c in _SHOWN)]
        out.append(f"{title}\n" + table(headers, _with_ratios(shown)))
        out.append("  (err% in percent; err change in percentage points; p95 x = after / before)")
    return "\n".join(out)


def _overall_line(row: dict[str, Any]) -> str:
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value * 100:.1f}%"

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f} ms"

    change = row["error_rate_change"]
    points = "" if change is None else f" ({change * 100:+.1f} pp)"
    times = "" if row["p95_ratio"] is None else f" (x{row['p95_ratio']:.2f})"
    return (
        f"Overall: {row['calls_before']:,} -> {row['calls_after']:,} calls; error rate "
        f"{pct(row['error_rate_before'])} -> {pct(row['error_rate_after'])}{points}; "
        f"p95 {ms(row['p95_before'])} -> {ms(row['p95_after'])}{times}"
    )


def _with_ratios(shown: pl.DataFrame) -> list[list[Any]]:
    """The rows, their p95 ratio with two decimals (a tenfold speed-up is 0.10, which the
    table's one decimal would show as 0.1), padded so that the column aligns right."""
    at = shown.columns.index("p95_ratio")
    texts = ["-" if r[at] is None else f"{r[at]:.2f}" for r in shown.rows()]
    width = max(len(t) for t in texts)
    return [
        [*row[:at], text.rjust(width), *row[at + 1 :]]
        for row, text in zip(shown.rows(), texts, strict=True)
    ]
