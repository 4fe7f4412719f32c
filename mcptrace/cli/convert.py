"""``mcptrace convert``: write a trace's tables as Parquet, CSV or capture JSONL."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from mcptrace.cli._common import FormatOpt, TraceArg, TzOpt, load_or_exit, report_input_errors
from mcptrace.errors import UsageError
from mcptrace.writers import output_format, write_table


class TableName(StrEnum):
    messages = "messages"
    calls = "calls"
    sessions = "sessions"


def convert(
    traces: TraceArg,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Output file (.parquet, .csv, .jsonl).")
    ],
    table: Annotated[
        TableName, typer.Option("--table", "-t", help="Which table to write.")
    ] = TableName.messages,
    to: Annotated[
        str | None,
        typer.Option("--to", help="Output format (parquet, csv, jsonl); default from the suffix."),
    ] = None,
    format: FormatOpt = None,
    tz: TzOpt = None,
) -> None:
    """Write the messages (mcptrace capture JSONL, Parquet or CSV), calls or sessions table."""
    try:
        fmt = output_format(output, to)
    except UsageError as exc:
        typer.echo(f"mcptrace: error: {exc}", err=True)
        raise typer.Exit(2) from exc
    trace = load_or_exit(traces, format, tz)
    df = {"messages": trace.messages, "calls": trace.calls, "sessions": trace.sessions}[table.value]
    n = write_table(df, output, fmt, table=table.value)
    typer.echo(f"wrote {n} {table.value} records to {output} ({fmt})", err=True)
    raise typer.Exit(report_input_errors(trace))
