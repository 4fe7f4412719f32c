"""``mcptrace convert``: write a trace's tables as Parquet, CSV or capture JSONL."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from mcptrace.cli._common import (
    FormatOpt,
    TraceArg,
    TzOpt,
    cannot_write,
    check_output_folder,
    load_or_exit,
    report_input_errors,
    usage_error,
)
from mcptrace.errors import McpTraceError, UsageError
from mcptrace.streaming import StreamStats, write_messages
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
    redact: Annotated[
        bool,
        typer.Option(
            "--redact",
            help="Replace secrets (tokens, keys, passwords, credential headers) with "
            "placeholders, as `mcptrace redact` does with its default policy.",
        ),
    ] = False,
) -> None:
    """Write the messages (mcptrace capture JSONL, Parquet or CSV), calls or sessions table."""
    # imported here: the redactor's regular expressions take ~15 ms to compile, which
    # every other command (lint...) would pay at start
    from mcptrace.redact import redact_trace, write_redacted

    try:
        fmt = output_format(output, to)
    except UsageError as exc:
        raise usage_error(str(exc)) from exc
    check_output_folder(output)
    if table is TableName.messages:
        # the messages table streams: memory stays bounded however big the capture is
        try:
            stats: StreamStats
            if redact:
                stats = write_redacted(traces, output, fmt, format=format, tz=tz)
            else:
                stats = write_messages(traces, output, fmt, format=format, tz=tz)
        except McpTraceError as exc:
            raise usage_error(str(exc)) from exc
        except OSError as exc:
            raise cannot_write(output, exc) from exc
        for source, error in stats.errors:
            typer.echo(f"mcptrace: error: {source}: {error}", err=True)
        typer.echo(
            f"wrote {stats.rows} messages from {stats.files} file(s) to {output} ({fmt})", err=True
        )
        raise typer.Exit(2 if stats.errors else 0)
    trace = load_or_exit(traces, format, tz)
    if redact:
        # calls and sessions are derived from the redacted messages: no secret reaches them
        trace = redact_trace(trace)
    df = trace.calls if table is TableName.calls else trace.sessions
    try:
        n = write_table(df, output, fmt, table=table.value)
    except OSError as exc:
        raise cannot_write(output, exc) from exc
    typer.echo(f"wrote {n} {table.value} records to {output} ({fmt})", err=True)
    raise typer.Exit(report_input_errors(trace))
