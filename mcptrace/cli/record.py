"""``mcptrace record``: run a stdio MCP server and record its traffic while relaying it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mcptrace.record import record_stdio

#: The server's arguments are its own: ``mcptrace record -o x.jsonl node server.js --port 3``
#: must not parse ``--port`` as ours, with or without ``--``.
CONTEXT_SETTINGS = {"allow_interspersed_args": False, "ignore_unknown_options": True}


def record(
    command: Annotated[
        list[str],
        typer.Argument(help="The server command and its arguments (after --).", show_default=False),
    ],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Capture file to append to (mcptrace capture JSONL)."),
    ],
    session: Annotated[
        str | None,
        typer.Option("--session", help="Session name (default: `<command>-<UTC start>-<pid>`)."),
    ] = None,
    server: Annotated[
        str | None, typer.Option("--server", help="Server name to put on every record.")
    ] = None,
) -> None:
    """Run COMMAND as a stdio MCP server, relay stdin/stdout, record every line.

    Put it in place of the server in a client's configuration, e.g.
    `mcptrace record -o trace.jsonl -- npx my-server`.

    Exits with the server's exit code (128+N if signal N killed it;
    127 if the command is not found, 126 if it cannot be run).
    Nothing but the server's own output is written to stdout.
    """
    try:
        code = record_stdio(command, output, session=session, server=server)
    except OSError as exc:
        typer.echo(f"mcptrace: error: {exc}", err=True)
        raise typer.Exit(_spawn_error_code(exc, output)) from exc
    # shell convention for a signal death, since exit codes cannot be negative
    raise typer.Exit(128 - code if code < 0 else code)


def _spawn_error_code(exc: OSError, output: Path) -> int:
    """2 when the capture file is the problem; else the shell's codes for a bad command."""
    if exc.filename is not None and str(exc.filename) == str(output):
        return 2
    if isinstance(exc, FileNotFoundError):
        return 127
    return 126 if isinstance(exc, PermissionError) else 2
