"""``mcptrace formats``: the capture formats mcptrace reads."""

from __future__ import annotations

import typer

from mcptrace.loaders import FORMATS


def formats() -> None:
    """List the capture formats and what each one is."""
    width = max(len(name) for name in FORMATS)
    for name, module in FORMATS.items():
        typer.echo(f"{name:<{width}}  {module.DESCRIPTION}")
