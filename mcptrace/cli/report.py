"""``mcptrace report``: write the post-mortem HTML report of captures.

A thin shell over :func:`mcptrace.report.write_report`: it checks the options, loads
the captures, lints them as ``mcptrace lint`` would (the rules chosen by the same
configuration file and the same options) and writes one
self-contained HTML file. Matplotlib is imported only while the report is built.
Exit codes: 0, or 2 for a usage error or an input file that could not be read (after
writing the report of the files that could).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mcptrace.cli._common import (
    IgnoreOpt,
    InputFormatOpt,
    RevisionOpt,
    SchemaDirOpt,
    SelectOpt,
    SinceOpt,
    TraceArg,
    TzOpt,
    UntilOpt,
    load_or_exit,
    parse_window,
    report_input_errors,
    selectors,
    usage_error,
)
from mcptrace.config import load_config
from mcptrace.errors import McpTraceError
from mcptrace.linter import select_rules
from mcptrace.protocol import is_known_revision


def report(
    traces: TraceArg,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="The HTML file to write.", show_default=False),
    ],
    since: SinceOpt = None,
    until: UntilOpt = None,
    session: Annotated[
        list[str] | None,
        typer.Option("--session", help="Report only this session key; repeat for several."),
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    revision: RevisionOpt = None,
    schema_dir: SchemaDirOpt = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-origin",
            help="An Origin the servers accept; repeatable. Turns on HT021 among the "
            "findings, as in `mcptrace lint`.",
        ),
    ] = None,
    title: Annotated[
        str | None,
        typer.Option("--title", help="Title of the page.  [default: after the first input]"),
    ] = None,
    input_format: InputFormatOpt = None,
    tz: TzOpt = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="Read the lint settings (select, ignore, revision, schema-dir, "
            "allowed-origins) from this file instead of the one `mcptrace lint` finds in the "
            "current directory or its parents.",
        ),
    ] = None,
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
    lines, latency, errors, slowest calls, error bursts and the session timeline.

    The findings are those `mcptrace lint` reports with the same settings: `select`,
    `ignore`, `revision`, `schema-dir` and `allowed-origins` are read from `[tool.mcptrace]`
    in pyproject.toml or from mcptrace.toml (found as `mcptrace lint` finds them, or given
    with --config), and the options of the same names override them. A baseline is not
    applied: a post-mortem shows every finding of the incident.
    """
    start, end = parse_window(since, until)
    try:
        config = load_config(config_file)
        chosen_select = selectors(select) if select is not None else config.select
        chosen_ignore = selectors(ignore) if ignore is not None else config.ignore
        # an unknown rule is refused now, not after the captures are loaded
        select_rules(chosen_select, chosen_ignore)
    except McpTraceError as exc:
        raise usage_error(str(exc)) from exc
    chosen_revision = revision if revision is not None else config.revision
    if chosen_revision is not None and not is_known_revision(chosen_revision):
        raise usage_error(f"unknown revision {chosen_revision!r}")
    if schema_dir is None:
        schema_dir = config.schema_dir
    if schema_dir is not None and not schema_dir.is_dir():
        raise usage_error(f"schema directory not found: {schema_dir}")
    origins = tuple(allowed_origin) if allowed_origin else config.allowed_origins
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
            raise usage_error(
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
            allowed_origins=origins,
            select=chosen_select,
            ignore=chosen_ignore,
            revision=chosen_revision,
            settings=config.path,
        )
    except McpTraceError as exc:
        raise usage_error(str(exc)) from exc
    except OSError as exc:
        raise usage_error(f"cannot write {output}: {exc.strerror or exc}") from exc
    typer.echo(f"wrote report to {output}", err=True)
    raise typer.Exit(report_input_errors(trace))
