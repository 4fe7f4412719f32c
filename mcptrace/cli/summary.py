"""``mcptrace summary``: what a capture holds, at a glance."""

from __future__ import annotations

from typing import Annotated

import typer

from mcptrace import _json
from mcptrace._text import one_line
from mcptrace.cli._common import (
    FormatOpt,
    SinceOpt,
    TraceArg,
    TzOpt,
    UntilOpt,
    load_or_exit,
    report_input_errors,
)
from mcptrace.cli._render import duration, table, ts
from mcptrace.summary import Summary, summarize


def summary(
    traces: TraceArg,
    format: FormatOpt = None,
    tz: TzOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Formats, sessions with their revision, counts by kind and method, time span,
    unpaired requests, orphan responses and invalid lines."""
    trace = load_or_exit(traces, format, tz, since=since, until=until)
    result = summarize(trace)
    if json:
        typer.echo(_json.dumpb(result.as_dict(), pretty=True).decode())
    else:
        typer.echo(render(result))
    raise typer.Exit(report_input_errors(trace))


def render(s: Summary) -> str:
    out: list[str] = []
    out.append(f"Sources ({len(s.sources)})")
    out.append(
        table(
            ["file", "format", "lines", "rows", "invalid", "status"],
            [
                (
                    r["source"],
                    r["format"],
                    r["lines"],
                    r["rows"],
                    r["invalid"],
                    r["status"] if r["status"] == "ok" else f"error: {r['error']}",
                )
                for r in s.sources
            ],
        )
    )
    span = "-"
    if s.first_ts is not None and s.last_ts is not None:
        span = (
            f"{ts(s.first_ts)} .. {ts(s.last_ts)} UTC "
            f"({duration((s.last_ts - s.first_ts).total_seconds())})"
        )
    out.append("")
    out.append(f"Messages: {s.messages}   time span: {span}")
    if s.untimed and s.untimed != s.messages:
        out.append(f"  {s.untimed} rows have no timestamp")
    out.append("  by kind: " + ", ".join(f"{k} {v}" for k, v in s.kinds.items()))
    out.append("")
    out.append(f"Sessions ({len(s.sessions)})")
    out.append(
        table(
            [
                "session",
                "revision",
                "known from",
                "client",
                "server",
                "msgs",
                "calls",
                "unanswered",
                "orphans",
                "duration",
            ],
            [
                (
                    r["session"],
                    r["revision"],
                    r["revision_source"],
                    _name(r["client_name"], r["client_version"]),
                    _name(r["server_name"] or r["server"], r["server_version"]),
                    r["messages"],
                    r["calls"],
                    r["unanswered"],
                    r["orphans"],
                    duration(r["duration_s"]),
                )
                for r in s.sessions
            ],
        )
    )
    if s.methods:
        out.append("")
        out.append("Methods")
        out.append(table(["method", "count"], list(s.methods.items())))
    if s.outcomes:
        out.append("")
        out.append("Calls by outcome: " + ", ".join(f"{k} {v}" for k, v in s.outcomes.items()))
    # as in the sessions table, a request cancelled and never answered is unanswered too
    cancelled = s.outcomes.get("cancelled", 0)
    them = f" ({cancelled} of them cancelled)" if cancelled else ""
    out.append(f"Unanswered requests: {s.unanswered}{them}   orphan responses: {s.orphans}")
    if s.direction_inferred:
        out.append(
            f"Directions inferred (not recorded in the capture): {s.direction_inferred} rows"
        )
    out.append(f"Invalid lines: {s.invalid}")
    for row in s.invalid_lines:
        out.append(one_line(f"  {row['source']}:{row['line']}: {row['parse_error']}"))
    if s.invalid > len(s.invalid_lines):
        out.append(f"  ... and {s.invalid - len(s.invalid_lines)} more")
    if s.notes:
        out.append("")
        out.append("Notes")
        out.extend(f"  - {one_line(n)}" for n in s.notes)
    return "\n".join(out)


def _name(name: str | None, version: str | None) -> str | None:
    if name is None:
        return None
    return f"{name} {version}" if version else name
