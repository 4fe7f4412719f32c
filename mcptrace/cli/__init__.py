"""The ``mcptrace`` command line: thin commands over the public API."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True)


def main() -> None:
    app()
