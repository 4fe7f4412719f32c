"""The ``mcptrace`` command line: thin commands over the public API.

Each command lives in its own module and only parses options, calls the
library and renders. Exit codes: 0 success, 1 findings at or above the fail
level (lint), 2 usage or input error (an unreadable or unrecognised file).
"""

from __future__ import annotations

import functools
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Iterable
from typing import Annotated

import typer
from typer.core import TyperCommand, TyperGroup

import mcptrace

_command_class: type[TyperCommand]
_group_class: type[TyperGroup]
try:
    from mcptrace.cli._params import PlainCommand, PlainGroup

    _command_class, _group_class = PlainCommand, PlainGroup
except ImportError:  # a Typer that converts values without Pydantic: nothing to spare
    _command_class, _group_class = TyperCommand, TyperGroup

#: command -> (its module in mcptrace.cli, its function), in the order of `mcptrace --help`.
#: A command's module is imported only when the command is built: each brings in what it
#: runs (the linter, the statistics, the redaction...), which the others do not need.
COMMANDS: dict[str, tuple[str, str]] = {
    "summary": ("summary", "summary"),
    "show": ("show", "show"),
    "convert": ("convert", "convert"),
    "formats": ("formats", "formats"),
    "record": ("record", "record"),
    "lint": ("lint", "lint"),
    "rule": ("lint", "rule"),
    "rules": ("lint", "rules"),
    "stats": ("stats", "stats"),
    "compare": ("compare", "compare"),
    "plot": ("plot", "plot"),
    "report": ("report", "report"),
    "redact": ("redact", "redact"),
    "scan": ("scan", "scan"),
}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mcptrace {mcptrace.__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Offline analysis of Model Context Protocol (MCP) traffic captures."""


def build_app(commands: Iterable[str]) -> typer.Typer:
    """The command line with these of :data:`COMMANDS` (in the order given)."""
    app = typer.Typer(
        cls=_group_class,
        add_completion=False,
        no_args_is_help=True,
        context_settings={"help_option_names": ["-h", "--help"]},
        help="Offline analysis of Model Context Protocol (MCP) traffic captures.",
        pretty_exceptions_enable=False,
        # Markdown: a docstring's lines are joined into paragraphs and rewrapped to the
        # terminal (the rich mode keeps each line break, ragged on an 80-column terminal)
        rich_markup_mode="markdown",
    )
    app.callback()(_root)
    for name in commands:
        module_name, function = COMMANDS[name]
        module = importlib.import_module(f"mcptrace.cli.{module_name}")
        # record hands its server's arguments over untouched (see record.CONTEXT_SETTINGS)
        settings = module.CONTEXT_SETTINGS if name == "record" else None
        app.command(name, cls=_command_class, context_settings=settings)(getattr(module, function))
    return app


@functools.cache
def full_app() -> typer.Typer:
    """The command line with every command."""
    return build_app(COMMANDS)


def __getattr__(name: str) -> typer.Typer:
    # ``app``, every command, is built on first use: main() builds only the one it runs
    if name == "app":
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the exit status of a crash (0, 1 and 2 are verdicts and usage errors)
INTERNAL_ERROR = 3


def main() -> None:
    # The commands do no linear algebra; NumPy's OpenBLAS threads (NumPy comes with the
    # lint shares and Matplotlib) would spin on both cores for ~0.1 s after import.
    # Set before any command imports NumPy; a user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Typer makes a Click command of every command it holds (~1 ms each), and each
    # command's module imports what that command runs (the statistics, the redaction...):
    # a run that names its command first (`mcptrace lint ...`) builds that command alone.
    # Anything else (`--help`, `--version`, a misspelt command to suggest a name for)
    # gets them all.
    command = sys.argv[1] if len(sys.argv) > 1 else None
    app = build_app([command]) if command in COMMANDS else full_app()
    try:
        app()
    except (SystemExit, KeyboardInterrupt):
        # The process ends now. Its last garbage collections would traverse every object
        # left (Polars, the rules, ...: ~60 ms of CPU, even after a lint of a
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
