"""``mcptrace stats``: latency quantiles and error rates of the calls in captures.

A thin shell over :mod:`mcptrace.analysis`: it resolves options, calls
:func:`~mcptrace.analysis.latency` (or :func:`~mcptrace.analysis.error_breakdown`
with ``--errors``) and renders a table, JSON or CSV. Exit codes: 0, or 2 for a usage
error or an input file that could not be read (after printing the statistics of the
files that could).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import polars as pl
import typer

from mcptrace import _json, analysis
from mcptrace.analysis._common import check_every, dimensions
from mcptrace.analysis.latency import REASONS
from mcptrace.cli._common import (
    InputFormatOpt,
    SinceOpt,
    TraceArg,
    TzOpt,
    UntilOpt,
    load_or_exit,
    report_input_errors,
)
from mcptrace.cli._render import plain_values, table
from mcptrace.trace import Trace


class By(StrEnum):
    method = "method"
    tool = "tool"
    prompt = "prompt"
    resource = "resource"
    server = "server"
    session = "session"
    client = "client"
    revision = "revision"


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


def stats(
    traces: TraceArg,
    by: Annotated[
        list[By] | None,
        typer.Option(
            "--by",
            help="Group by this dimension; repeat for several (--by server --by tool).  "
            "[default: method]",
            show_default=False,
        ),
    ] = None,
    every: Annotated[
        str | None,
        typer.Option(
            "--every", help="Also split by request time into buckets of this width (10s, 1m, 1h)."
        ),
    ] = None,
    errors: Annotated[
        bool,
        typer.Option("--errors", help="Break the failed calls down by category and code."),
    ] = False,
    format: Annotated[
        OutputFormat,
        typer.Option("--format", help="Output: an aligned table, JSON or CSV (one table)."),
    ] = OutputFormat.table,
    input_format: InputFormatOpt = None,
    tz: TzOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
) -> None:
    """Latency quantiles (ms) per method, the error rate and how many calls had no latency;
    with --errors, failed calls by kind and error code."""
    keys = [b.value for b in by] if by else ["method"]
    # checked before loading, so a typo does not wait for a large capture
    try:
        dimensions(keys)
        if every is not None:
            check_every(every)
    except ValueError as exc:
        typer.echo(f"mcptrace: error: {exc}", err=True)
        raise typer.Exit(2) from exc
    trace = load_or_exit(traces, input_format, tz, since=since, until=until)
    typer.echo(render(trace, keys, every, errors=errors, fmt=format.value))
    raise typer.Exit(report_input_errors(trace))


def render(trace: Trace, by: list[str], every: str | None, *, errors: bool, fmt: str) -> str:
    """The output of ``mcptrace stats`` for a loaded trace, as text."""
    rate = analysis.error_rate(trace)
    coverage = analysis.latency_coverage(trace)
    main = (
        analysis.error_breakdown(trace, by, every) if errors else analysis.latency(trace, by, every)
    )
    if fmt == "csv":
        return plain_values(main).write_csv().rstrip("\n")
    if fmt == "json":
        name = "errors" if errors else "latency"
        doc = {
            name: _rows(main),
            "error_rate": _rows(rate)[0] if rate.height else None,
            "coverage": _rows(coverage)[0] if coverage.height else None,
        }
        return _json.dumpb(doc, pretty=True).decode()
    out = [_error_table(main) if errors else _latency_table(main, by, every)]
    out.append("")
    out.append(_rate_line(rate))
    note = _coverage_note(coverage)
    if note:
        out.append(note)
    return "\n".join(out)


def _latency_table(frame: pl.DataFrame, by: list[str], every: str | None) -> str:
    title = "Latency (ms) by " + ", ".join(by) + (f", every {every}" if every else "")
    if frame.is_empty():
        return f"{title}\n  no calls"
    shown = frame.drop("without_latency")
    return f"{title}\n" + table(shown.columns, shown.rows())


def _error_table(frame: pl.DataFrame) -> str:
    if frame.is_empty():
        return "Failed calls\n  none"
    shown = frame.with_columns((pl.col("share_of_calls") * 100).alias("% of calls")).drop(
        "share_of_calls"
    )
    return "Failed calls\n" + table(shown.columns, shown.rows())


def _rate_line(rate: pl.DataFrame) -> str:
    if rate.is_empty():
        return "Error rate: no calls"
    r = rate.row(0, named=True)
    parts = ", ".join(
        [
            _count(r["errors"], "error"),
            _count(r["tool_errors"], "tool error"),
            f"{r['unanswered']} unanswered",
            f"{r['cancelled']} cancelled",
        ]
    )
    return f"Error rate: {r['error_rate'] * 100:.1f}% of {_count(r['calls'], 'call')} ({parts})"


def _coverage_note(coverage: pl.DataFrame) -> str | None:
    if coverage.is_empty():
        return None
    r = coverage.row(0, named=True)
    lines = []
    if r["without_latency"]:
        reasons = ", ".join(
            f"{r[column]} {words}" for column, words in REASONS.items() if r.get(column)
        )
        lines.append(f"{_count(r['without_latency'], 'call')} without latency: {reasons}")
    if r["approximate"]:
        lines.append(
            f"{_count(r['approximate'], 'latency', 'latencies')} from wall-clock timestamps: "
            "approximate if the clock changed during a call"
        )
    return "\n".join(lines) or None


def _count(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def _rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return plain_values(frame).to_dicts()
