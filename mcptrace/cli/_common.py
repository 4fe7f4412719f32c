"""Options and helpers shared by the commands: loading with progress, input errors."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

import mcptrace
from mcptrace.errors import McpTraceError
from mcptrace.trace import Trace

TraceArg = Annotated[
    list[Path],
    typer.Argument(
        help="Capture files, directories (read recursively) or globs.", show_default=False
    ),
]
FormatOpt = Annotated[
    str | None,
    typer.Option("--format", "-f", help="Force the capture format (see `mcptrace formats`)."),
]
InputFormatOpt = Annotated[
    str | None,
    typer.Option("--input-format", help="Force the capture format (see `mcptrace formats`)."),
]
SchemaDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--schema-dir",
        help="Folder of official schemas as <revision>/schema.json; enables the SC rules.",
    ),
]
TzOpt = Annotated[
    str | None,
    typer.Option("--tz", help="IANA zone of wall-clock timestamps without one (VS Code logs)."),
]


_BIG_FILE = 32 << 20


class _Progress:
    """A one-line progress report on stderr, shown only on a terminal and after a moment."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.shown = False

    def __call__(self, path: str, index: int, total: int) -> None:
        if not self.enabled:
            return
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        # a big file takes a moment by itself: say so before it starts, not after
        if size < _BIG_FILE and time.monotonic() - self.start < 0.5:
            return
        self.shown = True
        sys.stderr.write(f"\r\x1b[Kloading {index + 1}/{total}: {path} ({size / 1e6:,.0f} MB)")
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def load_or_exit(paths: list[Path], fmt: str | None, tz: str | None) -> Trace:
    """Load the inputs; on failure print the reason and exit 2."""
    progress = _Progress()
    try:
        trace = mcptrace.load(paths, format=fmt, tz=tz, progress=progress)
    except McpTraceError as exc:
        progress.done()
        typer.echo(f"mcptrace: error: {exc}", err=True)
        raise typer.Exit(2) from exc
    progress.done()
    return trace


def report_input_errors(trace: Trace) -> int:
    """Print each unreadable file to stderr; the exit code the command should use (0 or 2)."""
    errors = trace.errors
    for row in errors.iter_rows(named=True):
        typer.echo(f"mcptrace: error: {row['source']}: {row['error']}", err=True)
    return 2 if errors.height else 0
