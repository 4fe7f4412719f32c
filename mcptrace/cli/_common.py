"""Options and helpers shared by the commands: loading with progress, input errors."""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import mcptrace
from mcptrace.errors import McpTraceError
from mcptrace.moments import as_utc
from mcptrace.trace import Trace

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TraceArg = Annotated[
    list[Path],
    typer.Argument(
        help="Capture files, directories (read recursively) or globs; `-` reads standard input.",
        show_default=False,
    ),
]
#: where ``--format`` is free (no report format to choose), it names the capture format too
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--input-format",
        "--format",
        "-f",
        help="Force the capture format (see `mcptrace formats`).",
    ),
]
InputFormatOpt = Annotated[
    str | None,
    typer.Option("--input-format", help="Force the capture format (see `mcptrace formats`)."),
]
SchemaDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--schema-dir",
        help="Folder of official schemas as `<revision>/schema.json`; enables the SC rules.",
    ),
]
SelectOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        help="Only these rules: codes (JR004), prefixes (JR, JR0) or names; "
        "repeatable or comma-separated.  [default: all]",
        show_default=False,
    ),
]
IgnoreOpt = Annotated[
    list[str] | None,
    typer.Option("--ignore", help="Skip these rules (codes, prefixes or names); repeatable."),
]
RevisionOpt = Annotated[
    str | None,
    typer.Option(
        "--revision",
        help="Judge every session by this protocol revision (e.g. 2025-11-25) instead "
        "of the one it negotiated.",
    ),
]
TzOpt = Annotated[
    str | None,
    typer.Option(
        "--tz",
        help="IANA zone of timestamps written without one (VS Code logs; elsewhere, a time "
        "that lacks its zone); UTC by default.",
    ),
]
SinceOpt = Annotated[
    str | None,
    typer.Option(
        "--since", help="Start of the incident window, ISO 8601 (UTC when no zone is given)."
    ),
]
UntilOpt = Annotated[
    str | None,
    typer.Option(
        "--until", help="End of the incident window, ISO 8601 (UTC when no zone is given)."
    ),
]


def usage_error(message: str) -> typer.Exit:
    """Print ``message`` as mcptrace's usage error; the exit (status 2) to raise."""
    typer.echo(f"mcptrace: error: {message}", err=True)
    return typer.Exit(2)


def parse_time(value: str, option: str) -> datetime:
    """An ISO 8601 time in UTC; one without a zone is taken to be UTC."""
    try:
        return as_utc(value, option)
    except ValueError as exc:
        raise usage_error(str(exc)) from exc


def parse_window(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    """``--since``/``--until`` as UTC times (checked before loading, so that a typo does
    not wait for a large capture)."""
    start = parse_time(since, "--since") if since is not None else None
    end = parse_time(until, "--until") if until is not None else None
    if start is not None and end is not None and start > end:
        raise usage_error(f"--since {since} is after --until {until}")
    return start, end


_BIG_FILE = 32 << 20


class Progress:
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

    def share(self, path: str, index: int, total: int) -> None:
        """Before each share of a file linted share by share (see ``mcptrace lint``)."""
        if not self.enabled:
            return
        self.shown = True
        sys.stderr.write(f"\r\x1b[Klinting {path}: share {index + 1}/{total}")
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def load_or_exit(
    paths: list[Path],
    fmt: str | None,
    tz: str | None,
    *,
    since: str | None = None,
    until: str | None = None,
) -> Trace:
    """Load the inputs; on failure print the reason and exit 2. With ``since``/``until``
    (the ``--since``/``--until`` texts, checked before loading), the incident window of
    them: see :meth:`Trace.filter`."""
    start, end = parse_window(since, until)
    progress = Progress()
    try:
        trace = mcptrace.load(paths, format=fmt, tz=tz, progress=progress)
    except McpTraceError as exc:
        progress.done()
        typer.echo(f"mcptrace: error: {exc}", err=True)
        raise typer.Exit(2) from exc
    progress.done()
    if start is None and end is None:
        return trace
    return trace.filter(since=start, until=end)


def report_input_errors(trace: Trace) -> int:
    """Print each unreadable file to stderr; the exit code the command should use (0 or 2)."""
    errors = trace.errors
    for row in errors.iter_rows(named=True):
        typer.echo(f"mcptrace: error: {row['source']}: {row['error']}", err=True)
    return 2 if errors.height else 0


def selectors(values: list[str] | None) -> tuple[str, ...] | None:
    """``--select JR --select LC001,LC002`` -> ("JR", "LC001", "LC002")."""
    if values is None:
        return None
    return tuple(s.strip() for v in values for s in v.split(",") if s.strip())


def check_output_folder(path: Path) -> None:
    """Exit 2 when ``path`` cannot be written because its folder does not exist: said
    before the inputs are read, not after a long conversion."""
    folder = path.parent
    if not folder.is_dir():
        raise usage_error(f"cannot write {path}: there is no folder {folder}")


def cannot_write(path: Path, exc: OSError) -> typer.Exit:
    """The usage error for a write of ``path`` that failed with ``exc``."""
    return usage_error(f"cannot write {path}: {exc.strerror or exc}")


#: image file suffix -> Matplotlib format, for the commands that draw
IMAGE_FORMATS = {".png": "png", ".svg": "svg"}


def image_format(path: Path) -> str | None:
    """The Matplotlib format of an image file named ``path``; None for another suffix."""
    return IMAGE_FORMATS.get(path.suffix.lower())


def save_figure(figure: Figure, path: Path, fmt: str) -> None:
    """Write ``figure`` to ``path`` (PNG at 150 dpi); a write error exits 2."""
    try:
        figure.savefig(path, format=fmt, dpi=150 if fmt == "png" else "figure")
    except OSError as exc:
        raise usage_error(f"cannot write {path}: {exc.strerror or exc}") from exc
