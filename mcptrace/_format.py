"""Text built from a template and columns: ``pl.format`` without its Polars 2.1 crash.

``pl.format`` panics (``binview/mod.rs: assertion failed: i < self.len()``) on a column
with rows after an empty chunk other than the first. A filter by a mask leaves such
columns, and how many chunks a column has depends on the number of Polars threads: a
rule's message crashed the lint under ``POLARS_MAX_THREADS=8`` only. ``pl.concat_str``
has no such bug, so :func:`fmt` spells the template with it (ruff bans ``pl.format``).
"""

from __future__ import annotations

import polars as pl


def fmt(template: str, *args: pl.Expr | str) -> pl.Expr:
    """``template`` with each ``{}`` replaced by the next of ``args`` (a column name or an
    expression, cast to text): null where any of them is null, as ``pl.format`` gives."""
    pieces = template.split("{}")
    if len(pieces) != len(args) + 1:
        raise ValueError(f"{len(pieces) - 1} placeholders in {template!r} for {len(args)} values")
    parts: list[pl.Expr] = []
    for piece, arg in zip(pieces, [*args, None], strict=True):
        if piece:
            parts.append(pl.lit(piece))
        if arg is not None:
            parts.append(pl.col(arg) if isinstance(arg, str) else arg)
    if not parts:
        return pl.lit("")
    return pl.concat_str(parts, separator="", ignore_nulls=False)
