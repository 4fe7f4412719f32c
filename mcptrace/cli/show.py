"""``mcptrace show``: the messages, one line each, like a packet list."""

from __future__ import annotations

from typing import Annotated

import polars as pl
import typer

from mcptrace.cli._common import (
    FormatOpt,
    SinceOpt,
    TraceArg,
    TzOpt,
    UntilOpt,
    load_or_exit,
    report_input_errors,
)
from mcptrace.listing import message_list, short_names

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
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", help="At most this many lines.")
    ] = None,
    format: FormatOpt = None,
    tz: TzOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
) -> None:
    """One line per message in capture order: time, session, direction, id, method or outcome."""
    trace = load_or_exit(traces, format, tz, since=since, until=until)
    listing = message_list(trace, sessions=session, methods=method, kinds=kind)
    if limit is not None:
        listing = listing.head(limit)
    width = max([len(s) for s in listing["session"].unique().to_list()] + [7])
    # from several files a bare line number is ambiguous (a session crossing a log
    # rotation shows line 1 twice): each line then names its file
    if listing["source"].n_unique() > 1:
        names = short_names(trace.sources["source"].to_list())
        file = pl.col("source").replace_strict(names, default=pl.col("source"))
        place = pl.format("{}:{}", file, "line")
    else:
        place = pl.col("line").cast(pl.String).str.pad_start(6)
    places = listing.select(place.fill_null("?")).to_series().to_list()
    place_width = max([len(p) for p in places] + [6])
    for place, row in zip(places, listing.iter_rows(named=True), strict=True):
        when = row["ts"].strftime("%H:%M:%S.%f")[:-3] if row["ts"] is not None else "--:--:--.---"
        arrow = _ARROWS[row["direction"]]
        ident = row["id"] if row["id"] is not None else ""
        typer.echo(
            f"{place:<{place_width}}  {when}  {row['session']:<{width}}  {arrow}  "
            f"{ident:>6}  {row['what']}".rstrip()
        )
    if listing.is_empty():
        typer.echo("(no messages match)", err=True)
    raise typer.Exit(report_input_errors(trace))
