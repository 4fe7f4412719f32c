"""``mcptrace scan``: list the secrets left in captures, without printing them.

Exit codes: 0 no secret found, 1 secrets found, 2 usage or input error (an unreadable
file; the readable ones are still scanned and reported).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer

from mcptrace import _json
from mcptrace.cli._common import TraceArg, TzOpt
from mcptrace.cli.redact import (
    EmailsOpt,
    InputFormatOpt,
    IpsOpt,
    KeyOpt,
    PathOpt,
    RegexOpt,
    policy_or_exit,
)
from mcptrace.errors import McpTraceError


class ScanFormat(StrEnum):
    text = "text"
    json = "json"


def scan(
    traces: TraceArg,
    format: Annotated[
        ScanFormat, typer.Option("--format", help="Report format: text or json.")
    ] = ScanFormat.text,
    key: KeyOpt = None,
    path: PathOpt = None,
    regex: RegexOpt = None,
    emails: EmailsOpt = False,
    ips: IpsOpt = False,
    input_format: InputFormatOpt = None,
    tz: TzOpt = None,
) -> None:
    """Report secrets left in captures as `file:line: kind (column) fingerprint`.

    The secret itself is never printed: its fingerprint is a short hash salted per scan,
    equal for equal secrets within one report. Exit 1 when any is found.
    """
    # imported here: it brings the redactor, whose regular expressions take ~15 ms to
    # compile, which every other command (lint...) would pay at start
    from mcptrace.scan import scan_paths

    policy = policy_or_exit(key, path, regex, emails, ips)
    try:
        found, stats = scan_paths(traces, policy, format=input_format, tz=tz)
    except McpTraceError as exc:
        typer.echo(f"mcptrace: error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if format is ScanFormat.json:
        sys.stdout.write(_json.dumpb(found.to_dicts(), pretty=True).decode() + "\n")
    else:
        for row in found.iter_rows(named=True):
            kept = "  [protocol structure: redact keeps it]" if row["structural"] else ""
            typer.echo(
                f"{row['source']}:{row['line']}: {row['kind']} ({row['column']}) "
                f"{row['fingerprint']}{kept}"
            )
        distinct = found["fingerprint"].n_unique() if found.height else 0
        if found.height:
            typer.echo(f"\n{found.height} secret(s) ({distinct} distinct) in {stats.files} file(s)")
        else:
            typer.echo(f"no secrets found in {stats.files} file(s)")
    for source, error in stats.errors:
        typer.echo(f"mcptrace: error: {source}: {error}", err=True)
    raise typer.Exit(2 if stats.errors else 1 if found.height else 0)
