"""The ``mcptrace`` command line: thin commands over the public API.

Each command lives in its own module and only parses options, calls the
library and renders. Exit codes: 0 success, 1 findings at or above the fail
level (lint), 2 usage or input error (an unreadable or unrecognised file).
"""

from __future__ import annotations

import gc
import os
import sys
import traceback
from typing import Annotated

import typer

from mcptrace import __version__
from mcptrace.cli import (
    compare,
    convert,
    formats,
    lint,
    plot,
    record,
    redact,
    report,
    scan,
    show,
    stats,
    summary,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Offline analysis of Model Context Protocol (MCP) traffic captures.",
    pretty_exceptions_enable=False,
    # Markdown: a docstring's lines are joined into paragraphs and rewrapped to the
    # terminal (the rich mode keeps each line break, ragged on an 80-column terminal)
    rich_markup_mode="markdown",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcptrace {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Offline analysis of Model Context Protocol (MCP) traffic captures."""


app.command("summary")(summary.summary)
app.command("show")(show.show)
app.command("convert")(convert.convert)
app.command("formats")(formats.formats)
app.command("record", context_settings=record.CONTEXT_SETTINGS)(record.record)
app.command("lint")(lint.lint)
app.command("rule")(lint.rule)
app.command("rules")(lint.rules)
app.command("stats")(stats.stats)
app.command("compare")(compare.compare)
app.command("plot")(plot.plot)
app.command("report")(report.report)
app.command("redact")(redact.redact)
app.command("scan")(scan.scan)


#: the exit status of a crash (0, 1 and 2 are verdicts and usage errors)
INTERNAL_ERROR = 3


def main() -> None:
    # The commands do no linear algebra; NumPy's OpenBLAS threads (NumPy comes with the
    # lint shares and Matplotlib) would spin on both cores for ~0.1 s after import.
    # Set before any command imports NumPy; a user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        app()
    except (SystemExit, KeyboardInterrupt):
        # The process ends now. Its last garbage collections would traverse every object
        # left (Polars, Pydantic, the rules, ...: ~60 ms of CPU, even after a lint of a
        # small capture); frozen, they are skipped. What must run at exit still runs:
        # atexit handlers, and objects freed as their modules are torn down.
        gc.freeze()
        raise
    except BaseException:  # a Rust panic in Polars is a BaseException, not an Exception
        # A bug, not the input's fault. Python would exit 1, which `mcptrace lint` uses
        # for "findings": CI must not take a crash for a verdict on the capture.
        traceback.print_exc()
        sys.stderr.write(
            "mcptrace: internal error: this is a bug in mcptrace, not a problem of the "
            "input; please report it with the traceback above\n"
        )
        sys.exit(INTERNAL_ERROR)
