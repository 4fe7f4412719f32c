"""GitHub Actions workflow commands: findings become annotations on the pull request.

    ::error file=traces/a.jsonl,line=4,title=JR004 null-request-id::request tools/list has a null id

Escaping follows the Actions toolkit (``@actions/core`` ``command.ts``): in the
message ``%``, CR and LF are percent-encoded; in property values ``:`` and ``,``
as well, since they separate the properties.
"""

from __future__ import annotations

import polars as pl

from mcptrace._text import one_line
from mcptrace.reporters._context import ReportContext, display_path

#: severity -> workflow command (GitHub has no "info" annotation; "notice" is the closest)
COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(findings: pl.DataFrame, ctx: ReportContext) -> str:
    """One workflow command per finding; empty output when there are none."""
    out = []
    for row in findings.iter_rows(named=True):
        props = [f"file={escape_property(display_path(row['source'], ctx.root))}"]
        if row["line"] is not None:
            props.append(f"line={row['line']}")
        title = f"{row['code']} {row['name']}"
        props.append(f"title={escape_property(title)}")
        command = COMMANDS[row["severity"]]
        # one line, without control characters: a capture's text must not forge commands
        message = escape_data(one_line(row["message"] or ""))
        out.append(f"::{command} {','.join(props)}::{message}")
    return "".join(line + "\n" for line in out)
