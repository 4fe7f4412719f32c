"""``mcptrace redact``: write a copy of captures with every secret replaced.

The options that shape the policy (``--key``, ``--path``, ``--regex``, ``--emails``,
``--ips``) are shared with ``mcptrace scan``, so a scan finds what a redaction with
the same options would replace.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mcptrace.cli._common import (
    TraceArg,
    TzOpt,
    cannot_write,
    check_output_folder,
    usage_error,
)
from mcptrace.errors import McpTraceError, UsageError
from mcptrace.inputs import expand_paths
from mcptrace.writers import output_format

if TYPE_CHECKING:
    from mcptrace.redact import RedactionPolicy

KeyOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--key",
        "-k",
        help="Also redact values under this JSON key, text key or HTTP header (any case, "
        "-/_ ignored); repeatable. `--key Mcp-Session-Id` redacts session ids.",
        show_default=False,
    ),
]
PathOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--path",
        help="Also redact the value at this JSON path of a message "
        "($.params.arguments.ssn, $..ssn, $.result.items[*].email); repeatable.",
        show_default=False,
    ),
]
RegexOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--regex",
        help="Also redact matches of this Python regex (only its `secret` group, or group 1, "
        "when it has groups); repeatable.",
        show_default=False,
    ),
]
EmailsOpt = Annotated[bool, typer.Option("--emails", help="Also mask e-mail addresses.")]
IpsOpt = Annotated[bool, typer.Option("--ips", help="Also mask IPv4 and IPv6 addresses.")]
InputFormatOpt = Annotated[
    str | None,
    typer.Option("--input-format", "-f", help="Force the capture format (see `mcptrace formats`)."),
]


def policy_or_exit(
    key: list[str] | None,
    path: list[str] | None,
    regex: list[str] | None,
    emails: bool,
    ips: bool,
) -> RedactionPolicy:
    """The policy the options describe; a bad path or regex is a usage error (exit 2)."""
    # imported here: its detectors' regular expressions take ~15 ms to compile, which
    # every other command (lint...) would pay at start
    from mcptrace.redact import RedactionPolicy

    try:
        return RedactionPolicy(
            keys=key or (), paths=path or (), regexes=regex or (), emails=emails, ips=ips
        )
    except UsageError as exc:
        raise usage_error(str(exc)) from exc


def redact(
    traces: TraceArg,
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Output file: mcptrace capture JSONL (.jsonl), or the messages table as "
            ".parquet or .csv.",
        ),
    ],
    key: KeyOpt = None,
    path: PathOpt = None,
    regex: RegexOpt = None,
    emails: EmailsOpt = False,
    ips: IpsOpt = False,
    input_format: InputFormatOpt = None,
    tz: TzOpt = None,
) -> None:
    """Write the captures with secrets replaced by [REDACTED:kind:id:length] placeholders.

    Tokens, keys, passwords, credential headers, JWTs and private keys are found by
    shape and by name; the protocol structure (ids, methods, tool names, error codes,
    progress tokens) is never changed, so the copy lints and measures like the original.
    The same secret gets the same placeholder throughout one run.
    """
    from mcptrace.redact import write_redacted  # see policy_or_exit

    policy = policy_or_exit(key, path, regex, emails, ips)
    try:
        fmt = output_format(output)
        inputs = {Path(p).resolve() for p in expand_paths(traces)}
        if output.resolve() in inputs:
            raise UsageError(f"{output} is also an input: write the redacted copy elsewhere")
        check_output_folder(output)
        stats = write_redacted(traces, output, fmt, policy, format=input_format, tz=tz)
    except McpTraceError as exc:
        raise usage_error(str(exc)) from exc
    except OSError as exc:
        raise cannot_write(output, exc) from exc
    for source, error in stats.errors:
        typer.echo(f"mcptrace: error: {source}: {error}", err=True)
    distinct = len(stats.fingerprints)
    typer.echo(
        f"wrote {stats.rows} messages from {stats.files} file(s) to {output} ({fmt}): "
        f"{stats.replaced} secret(s) replaced ({distinct} distinct)",
        err=True,
    )
    if stats.kept:
        typer.echo(
            f"mcptrace: warning: {stats.kept} secret-looking value(s) kept in protocol "
            f"structure (ids, tool names, Mcp-* headers, session keys); "
            f"`mcptrace scan {output}` lists them",
            err=True,
        )
    raise typer.Exit(2 if stats.errors else 0)
