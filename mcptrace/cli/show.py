"""``mcptrace show``: the messages, one line each, like a packet list."""

from __future__ import annotations

from typing import Annotated

import polars as pl
import typer

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace._text import one_line, without_controls
from mcptrace.cli._common import (
    FormatOpt,
    SinceOpt,
    TraceArg,
    TzOpt,
    UntilOpt,
    load_or_exit,
    report_input_errors,
    usage_error,
)
from mcptrace.errors import UsageError
from mcptrace.listing import message_list, parse_lines, short_names

_ARROWS = {"c2s": "->", "s2c": "<-", "unknown": "??"}


def show(
    traces: TraceArg,
    session: Annotated[
        list[str] | None, typer.Option("--session", "-s", help="Only these sessions.")
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option("--method", "-m", help="Only these methods (responses follow their request)."),
    ] = None,
    kind: Annotated[
        list[str] | None,
        typer.Option(
            "--kind",
            "-k",
            help="Only these kinds (request, response, error, invalid, stderr, ...).",
        ),
    ] = None,
    id: Annotated[
        list[str] | None,
        typer.Option(
            "--id",
            help="Only messages with this JSON-RPC id (34, b-7 or '\"b-7\"'), and the "
            "cancellations naming it.",
        ),
    ] = None,
    line: Annotated[
        list[str] | None,
        typer.Option(
            "--line",
            "-l",
            help="Only the messages on these lines: N, N-M, or FILE:N as lint prints it.",
        ),
    ] = None,
    context: Annotated[
        int,
        typer.Option(
            "--context",
            "-C",
            min=0,
            help="Also this many messages before and after each one shown (of its file); "
            "the ones asked for are marked with >.",
        ),
    ] = 0,
    body: Annotated[
        bool,
        typer.Option("--body", "-b", help="Print each message's JSON under its line."),
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=0, help="At most this many lines.")
    ] = None,
    format: FormatOpt = None,
    tz: TzOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
) -> None:
    """One line per message in capture order: time, session, direction, id, method or outcome."""
    try:
        spans = [parse_lines(text) for text in line or ()]
    except UsageError as exc:
        raise usage_error(str(exc)) from exc
    trace = load_or_exit(traces, format, tz, since=since, until=until)
    sources = trace.sources.select("source")
    for span, text in zip(spans, line or (), strict=True):
        if span.file is not None and sources.filter(span.names()).is_empty():
            inputs = list(short_names(sources["source"].to_list()).values())
            more = f" and {len(inputs) - 5} more" if len(inputs) > 5 else ""
            listed = ", ".join(inputs[:5]) + more
            raise usage_error(
                f"--line {text!r}: no input file is named {span.file} (the inputs: {listed})"
            )
    listing = message_list(
        trace,
        sessions=session,
        methods=method,
        kinds=kind,
        ids=id,
        lines=spans,
        context=context,
        limit=limit,
    )
    width = max([len(one_line(s)) for s in listing["session"].unique().to_list()] + [7])
    # from several files a bare line number is ambiguous (a session crossing a log
    # rotation shows line 1 twice): each line then names its file
    if listing["source"].n_unique() > 1:
        names = short_names(trace.sources["source"].to_list())
        file = pl.col("source").replace_strict(names, default=pl.col("source"))
        place = fmt("{}:{}", file, "line")
    else:
        place = pl.col("line").cast(pl.String).str.pad_start(6)
    places = listing.select(place.fill_null("?")).to_series().to_list()
    # the time of day alone, unless the capture spans more than one UTC day
    days = trace.messages["ts"].dt.date().drop_nulls().n_unique()
    clock = "%Y-%m-%d %H:%M:%S.%f" if days > 1 else "%H:%M:%S.%f"
    untimed = "--:--:--.---" if days <= 1 else "----------- --:--:--.---"
    place_width = max([len(p) for p in places] + [6])
    for place, row in zip(places, listing.iter_rows(named=True), strict=True):
        when = row["ts"].strftime(clock)[:-3] if row["ts"] is not None else untimed
        arrow = _ARROWS[row["direction"]]
        ident = row["id"] if row["id"] is not None else ""
        mark = ("> " if row["hit"] else "  ") if context else ""
        who, ident, what = (one_line(v) for v in (row["session"], ident, row["what"]))
        typer.echo(
            f"{mark}{one_line(place):<{place_width}}  {when}  {who:<{width}}  {arrow}  "
            f"{ident:>6}  {what}".rstrip()
        )
        if body and row["body"] is not None:
            typer.echo(_indented(row["body"]))
    if listing.is_empty():
        typer.echo("(no messages match)", err=True)
        if trace.messages.is_empty() and trace.call_only_sessions:
            # OpenTelemetry spans and gateway activity logs hold calls, not messages
            typer.echo(
                f"the inputs hold call records only ({trace.calls.height} calls): see them "
                "with `mcptrace stats` or `mcptrace convert ... --table calls -o calls.csv`",
                err=True,
            )
    raise typer.Exit(report_input_errors(trace))


def _indented(text: str) -> str:
    """A message's JSON pretty-printed (its text as it is when it is not JSON), indented
    under its line."""
    # not JSON (an invalid line, stderr): as it is, on one line
    try:
        # JSON escapes C0 controls in strings, not DEL or the C1 ones
        text = without_controls(_json.dumpb(_json.loads(text), pretty=True).decode())
    except _json.JSONDecodeError:
        text = one_line(text)
    return "\n".join("        " + part for part in text.splitlines()) + "\n"
