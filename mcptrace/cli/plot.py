"""``mcptrace plot``: draw one plot of captures into a PNG or SVG file.

A thin shell over :mod:`mcptrace.plots`: it checks the options, loads the captures,
calls one plot function and saves the figure. Matplotlib is imported only inside the
command, so the other commands (``lint`` in CI above all) never pay for it. Exit codes:
0, or 2 for a usage error or an input file that could not be read (after plotting the
files that could).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mcptrace.analysis._common import check_every
from mcptrace.cli._common import (
    InputFormatOpt,
    SinceOpt,
    TraceArg,
    TzOpt,
    UntilOpt,
    image_format,
    load_or_exit,
    report_input_errors,
    save_figure,
    usage_error,
)
from mcptrace.cli.stats import By
from mcptrace.trace import Trace

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class Kind(StrEnum):
    latency = "latency"
    latency_time = "latency-time"
    errors = "errors"
    timeline = "timeline"
    concurrency = "concurrency"


#: The kinds each option applies to; elsewhere it is refused rather than silently ignored.
_TAKES_BY = (Kind.latency, Kind.latency_time, Kind.errors)
_TAKES_EVERY = (Kind.latency_time, Kind.errors, Kind.concurrency)


def plot(
    traces: TraceArg,
    kind: Annotated[
        Kind,
        typer.Option(
            "--kind",
            "-k",
            help="latency: distribution per group (ECDF); latency-time: each call's latency "
            "over time with p50/p95 lines; errors: failed calls by kind; timeline: calls "
            "per session; concurrency: requests in flight.",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Output file: .png or .svg.", show_default=False),
    ],
    by: Annotated[
        By | None,
        typer.Option(
            "--by",
            help="Group by this dimension (latency, latency-time, errors); by default "
            "method, and no grouping for latency-time.",
            show_default=False,
        ),
    ] = None,
    every: Annotated[
        str | None,
        typer.Option(
            "--every",
            help="Interval of the percentile lines (latency-time, default 1m) or of the "
            "bars over time (errors, concurrency): 10s, 1m, 1h.",
        ),
    ] = None,
    input_format: InputFormatOpt = None,
    tz: TzOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
) -> None:
    """Plot latency, failures, the session timeline or concurrency into a PNG or SVG file."""
    fmt = image_format(output)
    problem = None
    if fmt is None:
        problem = f"cannot write {output}: the output file must end in .png or .svg"
    elif by is not None and kind not in _TAKES_BY:
        problem = f"--by does not apply to --kind {kind.value}"
    elif every is not None and kind not in _TAKES_EVERY:
        problem = f"--every does not apply to --kind {kind.value}"
    elif every is not None:
        try:
            check_every(every)
        except ValueError as exc:
            problem = str(exc)
    # checked before loading, so a typo does not wait for a large capture
    if problem is not None or fmt is None:
        raise usage_error(str(problem))
    trace = load_or_exit(traces, input_format, tz, since=since, until=until)
    figure = _draw(trace, kind, None if by is None else by.value, every)
    save_figure(figure, output, fmt)
    typer.echo(f"wrote {kind.value} plot to {output}", err=True)
    raise typer.Exit(report_input_errors(trace))


def _draw(trace: Trace, kind: Kind, by: str | None, every: str | None) -> Figure:
    # imported here: Matplotlib takes a noticeable share of a second to import
    from mcptrace import plots

    if kind is Kind.latency:
        return plots.latency_distribution(trace, by=by or "method")
    if kind is Kind.latency_time:
        return plots.latency_over_time(trace, by=by, every=every or "1m")
    if kind is Kind.errors:
        return plots.error_distribution(trace, by=by or "method", every=every)
    if kind is Kind.timeline:
        return plots.timeline(trace)
    return plots.concurrency(trace, every=every)
