"""``mcptrace report``: write the post-mortem HTML report of captures.

A thin shell over :func:`mcptrace.report.write_report`: it checks the options, loads
the captures, lints them (with ``--schema-dir`` when given) and writes one
self-contained HTML file. Matplotlib is imported only while the report is built.
Exit codes: 0, or 2 for a usage error or an input file that could not be read (after
writing the report of the files that could).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from mcptrace.cli._common import (
    InputFormatOpt,
    SchemaDirOpt,
    TraceArg,
    TzOpt,
    load_or_exit,
    report_input_errors,
)
from mcptrace.errors import McpTraceError


def _usage_error(message: str) -> typer.Exit:
    typer.echo(f"mcptrace: error: {message}", err=True)
    return typer.Exit(2)


def parse_time(value: str, option: str) -> datetime:
    """An ISO 8601 time in UTC; one without a zone is taken to be UTC."""
    text = value.strip()
    try:
        # fromisoformat of Python 3.11 reads "Z", offsets, a space or "T", and bare dates
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise _usage_error(
            f"{option} {value!r} is not an ISO 8601 time (e.g. 2026-09-15T22:45:00Z)"
        ) from exc
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def report(
    traces: TraceArg,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="The HTML file to write.", show_default=False),
    ],
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            help="Start of the incident window, ISO 8601 (UTC when no zone is given).",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until", help="End of the incident window, ISO 8601 (UTC when no zone is given)."
        ),
    ] = None,
    session: Annotated[
        list[str] | None,
        typer.Option("--session", help="Report only this session key; repeat for several."),
    ] = None,
    schema_dir: SchemaDirOpt = None,
    title: Annotated[
        str | None,
        typer.Option("--title", help="Title of the page.  [default: after the first input]"),
    ] = None,
    input_format: InputFormatOpt = None,
    tz: TzOpt = None,
    redact: Annotated[
        bool,
        typer.Option(
            "--redact",
            help="Replace secrets (tokens, keys, passwords, credential headers) with "
            "placeholders before building the report, as `mcptrace redact` does.",
        ),
    ] = False,
) -> None:
    """Write a self-contained HTML post-mortem: overview, lint findings with their capture
    lines, latency, errors, slowest calls, error bursts and the session timeline."""
    # checked before loading, so a typo does not wait for a large capture
    start = parse_time(since, "--since") if since is not None else None
    end = parse_time(until, "--until") if until is not None else None
    if start is not None and end is not None and start > end:
        raise _usage_error(f"--since {since} is after --until {until}")
    if schema_dir is not None and not schema_dir.is_dir():
        raise _usage_error(f"schema directory not found: {schema_dir}")
    trace = load_or_exit(traces, input_format, tz)
    if redact:
        from mcptrace.redact import redact_trace

        # everything the page shows (messages, findings, calls) comes from the redacted trace
        trace = redact_trace(trace)
    if session:
        known = set(trace.messages["session"].drop_nulls().unique().to_list())
        known |= set(trace.call_records["session"].drop_nulls().unique().to_list())
        missing = [s for s in session if s not in known]
        if missing:
            listed = ", ".join(sorted(known)[:20]) or "none"
            raise _usage_error(
                f"no session {', '.join(map(repr, missing))} in the captures (sessions: {listed})"
            )
    # imported here: building a report imports the linter, the analysis and Matplotlib
    from mcptrace.report import write_report

    try:
        write_report(
            output,
            trace,
            since=start,
            until=end,
            session=session or None,
            title=title,
            schema_dir=schema_dir,
        )
    except McpTraceError as exc:
        raise _usage_error(str(exc)) from exc
    except OSError as exc:
        raise _usage_error(f"cannot write {output}: {exc.strerror or exc}") from exc
    typer.echo(f"wrote report to {output}", err=True)
    raise typer.Exit(report_input_errors(trace))
