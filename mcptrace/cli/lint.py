"""``mcptrace lint``, ``mcptrace rule`` and ``mcptrace rules``.

``lint`` only resolves its options (command line over configuration file over
defaults), calls :func:`mcptrace.linter.lint`, applies a baseline, renders with a
reporter and maps the result to an exit code, as ruff does:

* 0: no finding at or above the ``--fail-on`` level (default ``error``);
* 1: at least one such finding;
* 2: a usage error (unknown option value, rule, revision, bad config) or an input
  file that could not be read; the readable files are still linted and reported.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from mcptrace import _json
from mcptrace.baseline import apply_baseline, write_baseline
from mcptrace.cli._common import (
    IgnoreOpt,
    Progress,
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
from mcptrace.cli._render import table
from mcptrace.config import FAIL_LEVELS, Config, load_config
from mcptrace.errors import McpTraceError, UsageError
from mcptrace.linter import RULES, Rule, get_rule, select_rules
from mcptrace.linter import lint as run_lint
from mcptrace.linter.coverage import catalogue_text, entries_of
from mcptrace.linter.docs import rules_table
from mcptrace.linter.engine import findings_in_window
from mcptrace.linter.groups import lint_in_groups
from mcptrace.linter.shares import lint_in_shares
from mcptrace.protocol import is_known_revision
from mcptrace.reporters import REPORTERS, ReportContext


class ReportFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"
    junit = "junit"
    github = "github"


class FailLevel(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"


class RuleFormat(StrEnum):
    text = "text"
    json = "json"


class RulesFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def default_format(config: Config) -> str:
    """The report format when ``--format`` is not given: the configured one, else github
    annotations inside GitHub Actions (as yamllint's ``auto`` does), else text."""
    if config.format is not None:
        return config.format
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


def failing(findings: pl.DataFrame, fail_on: str) -> bool:
    """True when a finding is at or above ``fail_on`` (error > warning > info)."""
    levels = list(FAIL_LEVELS[: FAIL_LEVELS.index(fail_on) + 1])
    return bool(findings["severity"].cast(pl.String).is_in(levels).any())


def lint(
    traces: TraceArg,
    format: Annotated[
        ReportFormat | None,
        typer.Option(
            "--format",
            help="Report format: text, json, sarif (2.1.0), junit (XML) or github "
            "(workflow annotations; the default when GITHUB_ACTIONS=true).  [default: text]",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the report to this file instead of stdout."),
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    fail_on: Annotated[
        FailLevel | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when a finding has this severity or a higher one.  [default: error]",
            show_default=False,
        ),
    ] = None,
    revision: RevisionOpt = None,
    schema_dir: SchemaDirOpt = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-origin",
            help="An Origin the servers accept (e.g. https://app.example.com); repeatable. "
            "Turns on HT021: a request from any other Origin must be answered 403.",
        ),
    ] = None,
    show_source: Annotated[
        bool | None,
        typer.Option(
            "--show-source",
            help="Quote each finding's capture line under it (text format; also "
            "show-source = true in the configuration).",
            show_default=False,
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="Report only findings not accepted by this baseline file."),
    ] = None,
    write_baseline_to: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline",
            help="Accept every current finding: write them to this baseline file and exit 0.",
        ),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="Read settings from this file (pyproject.toml or mcptrace.toml) instead of "
            "the one found in the current directory or its parents.",
        ),
    ] = None,
    input_format: Annotated[
        str | None,
        typer.Option(
            "--input-format",
            help="Force the capture format of the inputs (see `mcptrace formats`); "
            "detected from content by default.",
        ),
    ] = None,
    tz: TzOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    partitions: Annotated[
        int | None,
        typer.Option(
            "--partitions",
            min=1,
            max=255,
            help="Lint a capture file this many shares of its sessions at a time, to "
            "bound memory (1: load the inputs whole); of several files, each group of "
            "files sharing sessions that holds 64 MiB or more. Same findings either way.  "
            "[default: for an mcptrace capture of 64 MiB or more (gzipped ones are "
            "decompressed to TMPDIR first), as many as keep the peak memory under 1 GiB; "
            "several files, 64 MiB or more in all, a group of files that share sessions "
            "at a time]",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Check captures against the MCP specification of the revision each session speaks.

    With --since/--until, the whole capture is still linted (so the window's edges draw
    no false findings) but only findings on messages captured inside the window are
    reported; untimed ones are left out.

    Exit status: 0 no finding at or above --fail-on, 1 such findings,
    2 usage error or unreadable input (the other files are still linted).

    Settings can also come from pyproject.toml (table tool.mcptrace) or mcptrace.toml,
    found in the current directory or a parent; command-line options override them.
    """
    try:
        config = load_config(config_file)
        chosen_select = selectors(select) if select is not None else config.select
        chosen_ignore = selectors(ignore) if ignore is not None else config.ignore
        rules = {r.code: r for r in select_rules(chosen_select, chosen_ignore)}
    except McpTraceError as exc:
        raise usage_error(str(exc)) from exc
    report_format = format.value if format is not None else default_format(config)
    level = fail_on.value if fail_on is not None else (config.fail_on or "error")
    chosen_revision = revision if revision is not None else config.revision
    if chosen_revision is not None and not is_known_revision(chosen_revision):
        # checked before loading, which can take a while on large captures
        raise usage_error(f"unknown revision {chosen_revision!r}")
    chosen_schema_dir = schema_dir if schema_dir is not None else config.schema_dir
    if chosen_schema_dir is not None and not chosen_schema_dir.is_dir():
        raise usage_error(f"schema directory not found: {chosen_schema_dir}")
    chosen_baseline = baseline if baseline is not None else config.baseline
    start, end = parse_window(since, until)
    if write_baseline_to is not None and (start is not None or end is not None):
        raise usage_error("--write-baseline records every finding: drop --since/--until")

    chosen_origins = tuple(allowed_origin) if allowed_origin else config.allowed_origins
    chosen = {"select": chosen_select, "ignore": chosen_ignore, "allowed_origins": chosen_origins}
    progress = Progress()

    try:
        in_shares = (
            lint_in_shares(
                traces[0],
                shares=partitions,
                format=input_format,
                tz=tz,
                revision=chosen_revision,
                schema_dir=chosen_schema_dir,
                progress=lambda share, total: progress.share(str(traces[0]), share, total),
                **chosen,
            )
            if len(traces) == 1 and partitions != 1
            else None
        )
        if in_shares is None and partitions != 1 and input_format in (None, "capture"):
            # several capture files: a group of them at a time (files sharing a session)
            in_shares = lint_in_groups(
                traces,
                shares=partitions,
                tz=tz,
                revision=chosen_revision,
                schema_dir=chosen_schema_dir,
                progress=progress.share,
                **chosen,
            )
        if in_shares is not None:
            findings, messages, input_status = in_shares.findings, in_shares.messages, 0
            _note_call_only(in_shares.call_only_sessions)
        else:
            trace = load_or_exit(traces, input_format, tz)
            findings = run_lint(
                trace, revision=chosen_revision, schema_dir=chosen_schema_dir, **chosen
            )
            messages = trace.messages
            input_status = report_input_errors(trace)
            _note_call_only(trace.call_only_sessions)
            if trace.messages.is_empty() and trace.call_records.is_empty():
                # "No findings" alone would pass CI on a capture that recorded nothing
                typer.echo(
                    "mcptrace: warning: the inputs hold no messages: there was nothing to lint",
                    err=True,
                )
    except McpTraceError as exc:
        raise usage_error(str(exc)) from exc
    finally:
        progress.done()

    if write_baseline_to is not None:
        # the baseline records everything found now, whatever an older baseline accepted
        try:
            n = write_baseline(findings, write_baseline_to)
        except OSError as exc:
            raise usage_error(f"cannot write {write_baseline_to}: {exc.strerror}") from exc
        typer.echo(f"wrote {_count(n, 'finding')} to baseline {write_baseline_to}", err=True)
        raise typer.Exit(input_status)

    if chosen_baseline is not None:
        try:
            findings, accepted, stale = apply_baseline(findings, chosen_baseline)
        except UsageError as exc:
            raise usage_error(str(exc)) from exc
        note = f"{_count(accepted, 'finding')} accepted by baseline {chosen_baseline}"
        if stale:
            entries = "entry no longer occurs" if stale == 1 else "entries no longer occur"
            note += f"; {stale} baseline {entries} (rewrite it to drop them)"
        typer.echo(note, err=True)

    if start is not None or end is not None:
        findings = findings_in_window(findings, start, end)

    quote = show_source if show_source is not None else bool(config.show_source)
    ctx = ReportContext(rules=rules, messages=messages, root=str(Path.cwd()), show_source=quote)
    report = REPORTERS[report_format](findings, ctx)
    if output is not None:
        try:
            output.write_text(report, encoding="utf-8")
        except OSError as exc:
            raise usage_error(f"cannot write {output}: {exc.strerror}") from exc
    else:
        typer.echo(report, nl=False)
    if input_status:
        raise typer.Exit(input_status)
    raise typer.Exit(1 if failing(findings, level) else 0)


def _note_call_only(call_only: Sequence[str]) -> None:
    if call_only:
        typer.echo(
            f"note: {len(call_only)} session(s) have only call-level records (OpenTelemetry "
            "spans): message and transport rules cannot judge them",
            err=True,
        )


def _rule_dict(r: Rule) -> dict[str, object]:
    return {
        "code": r.code,
        "name": r.name,
        "severity": r.severity,
        "scope": r.scope,
        "revisions": list(r.revisions),
        "summary": r.summary,
        "docs": r.docs,
        "catalogue": [
            {"ref": e.ref, "label": e.label, "status": e.status} for e in entries_of(r.code)
        ],
    }


def rule(
    code: Annotated[str, typer.Argument(help="Rule code (JR004) or name (null-request-id).")],
    format: Annotated[RuleFormat, typer.Option("--format", help="text or json.")] = RuleFormat.text,
) -> None:
    """Print a rule's documentation: what it flags, why, an example and the spec reference."""
    try:
        found = get_rule(code)
    except McpTraceError as exc:
        raise usage_error(str(exc)) from exc
    if format is RuleFormat.json:
        typer.echo(_json.dumpb(_rule_dict(found), pretty=True).decode())
    else:
        typer.echo(found.render() + "\n" + catalogue_text(found.code), nl=False)


def rules(
    format: Annotated[
        RulesFormat, typer.Option("--format", help="text, json or markdown (for docs).")
    ] = RulesFormat.text,
) -> None:
    """List every rule: code, name, severity, scope, revisions and summary."""
    all_rules = list(RULES.values())
    if format is RulesFormat.json:
        typer.echo(_json.dumpb([_rule_dict(r) for r in all_rules], pretty=True).decode())
    elif format is RulesFormat.markdown:
        typer.echo(rules_table(all_rules), nl=False)
    else:
        typer.echo(
            table(
                ["code", "name", "severity", "scope", "revisions", "summary"],
                [
                    (r.code, r.name, r.severity, r.scope, r.revisions_text, r.summary)
                    for r in all_rules
                ],
                indent="",
            )
        )
