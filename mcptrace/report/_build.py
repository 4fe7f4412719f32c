"""The sections of the post-mortem report, assembled into one HTML page.

Each ``_section_*`` function turns tables of :mod:`mcptrace.analysis` (and the lint
findings) into markup with :mod:`mcptrace.report._html`, which escapes every string
it is given: nothing here formats capture text into markup by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from mcptrace import analysis
from mcptrace.listing import short_names
from mcptrace.moments import Moment
from mcptrace.report._assets import CSP, SCRIPT, STYLE
from mcptrace.report._focus import Focus, focus
from mcptrace.report._html import Child, Html, el, join, raw_markup
from mcptrace.schema import FINDINGS, PROTOCOL_KINDS
from mcptrace.trace import Trace

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from mcptrace.linter.rule import Rule

__all__ = ["SECTIONS", "build_report"]

#: Section ids and headings, in page order; the ids are stable (links, tests).
SECTIONS: dict[str, str] = {
    "overview": "Overview",
    "findings": "Findings",
    "latency": "Latency",
    "errors": "Errors",
    "slowest": "Slowest calls",
    "bursts": "Error bursts",
    "timeline": "Timeline",
}

#: Shown for a missing value, and between the ends of a range.
_DASH = "\N{EN DASH}"
_TIMES = "\N{MULTIPLICATION SIGN}"

#: How many slowest calls the report lists (with their raw messages).
SLOWEST = 10
#: Findings shown in full; a capture with thousands repeats the same few problems, and
#: the summary table still counts every one.
MAX_FINDING_DETAILS = 200
#: Sessions listed in the overview (the rest are counted); a gateway log can hold thousands.
MAX_SESSIONS = 100
#: Raw lines longer than this are cut in the page (a tools/list result can be huge).
MAX_RAW_CHARS = 4000
#: Raw-message blocks of the slowest calls shown open; the rest are one click away.
OPEN_SLOWEST = 3
#: Widths of the time buckets of the plots over time, the first that gives at most
#: about a dozen buckets over the span shown.
_EVERY = (
    ("1s", 1), ("2s", 2), ("5s", 5), ("10s", 10), ("15s", 15), ("30s", 30),
    ("1m", 60), ("2m", 120), ("5m", 300), ("10m", 600), ("15m", 900), ("30m", 1800),
    ("1h", 3600), ("2h", 7200), ("6h", 21600), ("12h", 43200), ("1d", 86400), ("7d", 604800),
)  # fmt: skip
_BUCKETS = 12

#: How a session's revision was known, in words (sessions.revision_source).
_REVISION_SOURCES = {
    "override": "set with --revision",
    "initialize": "initialize handshake",
    "meta": "_meta protocolVersion",
    "http_header": "MCP-Protocol-Version header",
    "fingerprint": "guessed from message shapes",
    "unknown": "unknown",
}

#: "line 137", "lines 138 and 143", "lines 3, 4 and 9" in a finding's message.
_LINE_REFS = re.compile(r"\blines?\s+(\d+(?:\s*(?:,|and|&)\s*\d+)*)")


# ---------------------------------------------------------------------------
# formatting
# ---------------------------------------------------------------------------


def _count(n: int) -> str:
    return f"{n:,}"


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def _ms(value: float | None) -> str:
    return _DASH if value is None else f"{value:,.1f}"


def _duration(ms: float | None) -> str:
    """A latency in words: "0.4 ms", "230 ms", "2.9 s", "34.4 s", "2.5 min"."""
    if ms is None:
        return _DASH
    if ms >= 120_000:
        return f"{ms / 60_000:.1f} min"
    if ms >= 1000:
        return f"{ms / 1000:.1f} s"
    if ms >= 10:
        return f"{ms:.0f} ms"
    return f"{ms:.1f} ms"


def _span(seconds: float) -> str:
    """A time span in words: "45.2 s", "7 min 46 s", "2 h 5 min", "3 d 4 h"."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s"


def _pct(ratio: float | None) -> str:
    return _DASH if ratio is None else f"{ratio * 100:.1f} %"


@dataclass(frozen=True)
class _Clock:
    """Formats times: with the date only when the report spans more than one UTC day."""

    one_day: bool

    def __call__(self, value: datetime | None, *, date: bool | None = None, ms: bool = True) -> str:
        if value is None:
            return _DASH
        with_date = not self.one_day if date is None else date
        stamp = value.astimezone(UTC).strftime(
            ("%Y-%m-%d " if with_date else "") + ("%H:%M:%S.%f" if ms else "%H:%M:%S")
        )
        return stamp[:-3] if ms else stamp


def _every(first: datetime | None, last: datetime | None) -> str:
    seconds = (last - first).total_seconds() if first and last else 0.0
    for name, width in _EVERY:
        if seconds / width <= _BUCKETS:
            return name
    return _EVERY[-1][0]


# ---------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Col:
    header: str
    num: bool = False
    wrap: bool = False
    mono: bool = False
    nowrap: bool = False

    def cls(self) -> str | None:
        flags = (
            ("num", self.num),
            ("wrap", self.wrap),
            ("mono", self.mono),
            ("nowrap", self.nowrap),
        )
        return " ".join(n for n, on in flags if on) or None


def _table(
    cols: Sequence[_Col], rows: Iterable[Sequence[Child]], caption: str | None = None
) -> Html:
    head = el(
        "tr", [el("th", c.header, class_="num" if c.num else None, scope="col") for c in cols]
    )
    body = [
        el("tr", [el("td", value, class_=c.cls()) for c, value in zip(cols, row, strict=True)])
        for row in rows
    ]
    return el(
        "div",
        el(
            "table",
            el("caption", caption) if caption else None,
            el("thead", head),
            el("tbody", body),
        ),
        class_="table-wrap",
    )


def _badge(severity: str) -> Html:
    return el("span", severity, class_=f"badge sev-{severity}")


def _outcome(outcome: str | None) -> Html:
    name = outcome or "unknown"
    return el("span", name.replace("_", " "), class_=f"outcome outcome-{name}")


def _note(*children: Child) -> Html:
    return el("p", *children, class_="note")


def _where(source: str | None, line: int | None, names: dict[str, str] | None = None) -> str:
    """``file:line``, the file by its short name when ``names`` gives one."""
    if source is None:
        return _DASH if line is None else f"line {line}"
    shown = (names or {}).get(source, source)
    return shown if line is None else f"{shown}:{line}"


def _burst_lines(d: _Data, burst: dict[str, Any], *, named: bool) -> str:
    """``A-B`` (with an en dash), the request lines of a burst's first and last failure;
    ``named`` adds their file (``A-B of FILE``). When a log rotated during the burst the
    two lines are in different files, and the last one always says which."""
    first, last = burst["first_line"], burst["last_line"]
    source, last_source = burst["source"], burst.get("last_source")
    if last_source is not None and last_source != source:
        start = _where(source, first, d.names) if named else str(first)
        return f"{start}{_DASH}{_where(last_source, last, d.names)}"
    span = f"{first}{_DASH}{last}"
    return f"{span} of {d.names.get(source, source)}" if named and source else span


def _line_of(d: _Data, source: str | None, line: int | None) -> str:
    """``line N``, or ``file:N`` when the report has several files (a line number alone
    would not say which)."""
    return _where(source, line, d.names) if d.several_files else f"line {line}"


def _inline_code(value: str) -> Html:
    """A rule summary with its `backticked` parts as code (the text itself is escaped)."""
    parts = value.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: show the text as it is
        return el("span", value)
    return join(el("code", p) if i % 2 else p for i, p in enumerate(parts))


def _section(key: str, *children: Child) -> Html:
    return el(
        "section",
        el("h2", SECTIONS[key]),
        *children,
        id=key,
        class_="part",
    )


def _figure(draw: Callable[[], Figure], alt: str, caption: Child) -> Html:
    from mcptrace.report._figures import render

    pic = render(draw)
    if pic.uri is None:
        return el("div", f"This plot could not be drawn ({pic.problem}).", class_="plot-missing")
    # not loading="lazy": a printed or saved page must have every plot in it
    image = el("img", src=pic.uri, alt=alt, width=pic.width, height=pic.height)
    return el("figure", image, el("figcaption", caption))


class _RawLines:
    """Verbatim capture lines by (file, line), looked up in bulk from the messages."""

    def __init__(self, messages: pl.DataFrame) -> None:
        self._messages = messages.select("source", "line", "raw")
        self._found: dict[tuple[str, int], str] = {}

    def load(self, keys: Iterable[tuple[str | None, int | None]]) -> None:
        wanted = {(s, n) for s, n in keys if s is not None and n is not None} - set(self._found)
        if not wanted:
            return
        frame = pl.DataFrame(
            {"source": [s for s, _ in wanted], "line": [n for _, n in wanted]},
            schema={"source": pl.String, "line": pl.Int64},
        )
        # a batch puts several rows on one line, all with the same raw text
        rows = (
            self._messages.join(frame, on=["source", "line"], how="semi")
            .filter(pl.col("raw").is_not_null())
            .unique(["source", "line"], keep="first")
        )
        self._found.update({(s, n): r for s, n, r in rows.iter_rows()})

    def get(self, source: str | None, line: int | None) -> str | None:
        if source is None or line is None:
            return None
        return self._found.get((source, line))


def _raw_block(label: Child, raw: str | None, *, flagged: bool = False) -> Html:
    if raw is None:
        body: Html = el("pre", "(raw line not available)", class_="raw")
    else:
        shown = raw
        if len(raw) > MAX_RAW_CHARS:
            more = len(raw) - MAX_RAW_CHARS
            shown = f"{raw[:MAX_RAW_CHARS]}… ({more:,} more characters)"
        body = el("pre", shown, class_="raw flagged" if flagged else "raw")
    return join([el("div", label, class_="raw-label"), body])


# ---------------------------------------------------------------------------
# the data every section shares
# ---------------------------------------------------------------------------


@dataclass
class _Data:
    focus: Focus
    #: the findings and the note on how they were found: the lint runs on a thread of
    #: its own while the sections that do not show findings are built
    linted: Future[tuple[pl.DataFrame, str]]
    raw: _RawLines
    clock: _Clock
    first: datetime | None
    last: datetime | None
    has_tools: bool
    #: input path -> the name shown in locations (the file name when unambiguous)
    names: dict[str, str]
    rate: pl.DataFrame
    bursts: pl.DataFrame
    slowest: pl.DataFrame

    @property
    def view(self) -> Trace:
        return self.focus.view

    @property
    def findings(self) -> pl.DataFrame:
        return self.linted.result()[0]

    @property
    def findings_note(self) -> str:
        return self.linted.result()[1]

    @property
    def several_files(self) -> bool:
        """More than one input: tables need a file column (else the overview names it)."""
        return len(self.names) > 1


@dataclass(frozen=True)
class LintSettings:
    """How the report lints when no findings are given (see :func:`build_report`)."""

    schema_dir: str | Path | None = None
    allowed_origins: Sequence[str] | None = None
    select: Sequence[str] | None = None
    ignore: Sequence[str] | None = None
    revision: str | None = None
    #: the configuration file the settings came from, named in the report
    source: str | Path | None = None

    def describe(self) -> str:
        """The settings in words, for the findings section."""
        rules = "all rules"
        if self.select is not None or self.ignore is not None:
            chosen = [
                f"{word} {', '.join(codes)}"
                for word, codes in (("select", self.select), ("ignore", self.ignore))
                if codes is not None
            ]
            rules = "rules " + "; ".join(chosen)
        note = f"mcptrace lint, {rules}"
        if self.revision is not None:
            note += f", every session judged by {self.revision}"
        if self.schema_dir is not None:
            note += f", official schemas from {self.schema_dir}"
        if self.allowed_origins is not None:
            note += f", allowed origins {', '.join(self.allowed_origins)}"
        if self.source is not None:
            note += f" (settings from {self.source})"
        return note


def _findings(
    f: Focus, given: pl.DataFrame | None, settings: LintSettings
) -> tuple[pl.DataFrame, str]:
    if given is None:
        from mcptrace.linter import lint

        found = lint(
            f.context,
            select=settings.select,
            ignore=settings.ignore,
            revision=settings.revision,
            schema_dir=settings.schema_dir,
            allowed_origins=settings.allowed_origins,
        )
        note = settings.describe()
        if f.windowed:
            note += "; linted over the whole capture, findings inside the window shown"
    else:
        found = FINDINGS.conform(given)
        note = "supplied by the caller"
    if f.sessions is not None:
        found = found.filter(pl.col("session").is_in(list(f.sessions)))
    if f.windowed:
        # findings given by the caller may lack times: take them from the messages
        times = f.context.messages.select("ordinal", _ts="ts")
        found = (
            found.join(times, on="ordinal", how="left", maintain_order="left")
            .with_columns(ts=pl.coalesce("ts", "_ts"))
            .drop("_ts")
        )
        found = found.filter(f.in_window(pl.col("ts")))
    return found, note


def _bursts(f: Focus) -> pl.DataFrame:
    """Error bursts against the whole capture's failure rate, those touching the window.

    Measured inside the window alone, the baseline would be the incident's own failure
    rate, and the incident would hide itself.
    """
    bursts = analysis.error_bursts(f.context)
    if f.since is not None:
        bursts = bursts.filter(pl.col("end") > f.since)
    if f.until is not None:
        bursts = bursts.filter(pl.col("start") <= f.until)
    return bursts


def _collect(
    trace: Trace,
    since: Moment | None,
    until: Moment | None,
    session: str | Sequence[str] | None,
    findings: pl.DataFrame | None,
    settings: LintSettings,
    pool: ThreadPoolExecutor,
) -> _Data:
    f = focus(trace, since=since, until=until, session=session)
    # what both threads read, built here once rather than by whichever asks first
    _ = f.context.calls, f.context.identity, f.view.calls
    linted = pool.submit(_findings, f, findings, settings)
    times = f.view.messages["ts"].drop_nulls()
    first = times.min() if times.len() else None
    last = times.max() if times.len() else None
    assert first is None or isinstance(first, datetime)
    assert last is None or isinstance(last, datetime)
    one_day = first is None or last is None or first.date() == last.date()
    calls = f.view.calls
    has_tools = bool((calls["method"] == "tools/call").any())
    return _Data(
        focus=f,
        linted=linted,
        # the full trace: a finding may point at a line outside the chosen sessions' window
        raw=_RawLines(trace.messages),
        clock=_Clock(one_day),
        first=first,
        last=last,
        has_tools=has_tools,
        names=short_names(trace.sources["source"].to_list()),
        rate=analysis.error_rate(f.view),
        bursts=_bursts(f),
        slowest=analysis.slowest_calls(f.view, SLOWEST),
    )


# ---------------------------------------------------------------------------
# overview
# ---------------------------------------------------------------------------


def _card(label: str, value: str, detail: Child = None, *, bad: bool = False) -> Html:
    return el(
        "div",
        el("div", label, class_="label"),
        el("div", value, class_="value"),
        el("div", detail, class_="detail") if detail is not None else None,
        class_="card bad" if bad else "card",
    )


def _focus_banner(d: _Data) -> Html | None:
    f = d.focus
    if not f.windowed and f.sessions is None:
        return None
    parts: list[Child] = [el("strong", "Focused report. ")]
    if f.windowed:
        start = d.clock(f.since, date=True) if f.since else "the start"
        end = d.clock(f.until, date=True) if f.until else "the end"
        parts.append(
            f"Only messages from {start} to {end} UTC and calls requested in that window "
            "are counted; calls keep their outcome and latency even when answered after it. "
        )
    if f.sessions is not None:
        parts.append("Sessions: ")
        parts.append(join([el("code", s) for s in f.sessions], ", "))
        parts.append(".")
    return el("div", *parts, class_="focus")


def _highlights(d: _Data) -> list[Html]:
    out: list[Html] = []
    for burst in d.bursts.head(3).iter_rows(named=True):
        ratio = burst["error_rate"] / burst["baseline_rate"] if burst["baseline_rate"] else None
        out.append(
            el(
                "li",
                el("a", "Error burst", href="#bursts"),
                f" from {d.clock(burst['start'], ms=False)} to {d.clock(burst['end'], ms=False)}"
                f" UTC: "
                f"{burst['errors']} of {_plural(burst['calls'], 'call')} failed "
                f"({_pct(burst['error_rate'])}"
                + (
                    f", {ratio:.1f}{_TIMES} the capture's {_pct(burst['baseline_rate'])}"
                    if ratio
                    else ""
                )
                + f"), request lines {_burst_lines(d, burst, named=d.several_files)}.",
            )
        )
    if d.slowest.height:
        s = d.slowest.row(0, named=True)
        what = f"{s['method']} {s['target']}" if s["target"] else (s["method"] or "?")
        out.append(
            el(
                "li",
                el("a", "Slowest call", href="#slowest"),
                ": ",
                el("code", what),
                f" took {_duration(s['latency_ms'])} (session ",
                el("code", s["session"] or "?"),
                f", {_line_of(d, s['request_source'], s['request_line'])}, "
                f"{(s['outcome'] or '?').replace('_', ' ')}).",
            )
        )
    by = "tool" if d.has_tools else "method"
    # of groups with the same p95, the first by name: the same report on every run
    worst = (
        analysis.latency(d.view, by)
        .drop_nulls("p95")
        .sort(["p95", by], descending=[True, False], nulls_last=True)
        .head(1)
    )
    if worst.height:
        w = worst.row(0, named=True)
        out.append(
            el(
                "li",
                el("a", f"Highest p95 latency by {by}", href="#latency"),
                ": ",
                el("code", w[by] or "(none)"),
                f", {_duration(w['p95'])} over {_plural(w['count'], 'call')} "
                f"(p50 {_duration(w['p50'])}).",
            )
        )
    kinds = analysis.error_breakdown(d.view, ()).filter(pl.col("category") != "http")
    if kinds.height:
        k = kinds.row(0, named=True)
        label = f"{k['code']} {k['name']}" if k["code"] is not None else k["name"]
        out.append(
            el(
                "li",
                el("a", "Most frequent failure", href="#errors"),
                ": ",
                label,
                f", {_plural(k['count'], 'call')} ({_pct(k['share_of_calls'])} of all calls).",
            )
        )
    if d.findings.height:
        sev = dict(d.findings["severity"].cast(pl.String).value_counts().rows())
        first = d.findings.row(0, named=True)
        out.append(
            el(
                "li",
                el("a", _plural(d.findings.height, "lint finding"), href="#findings"),
                f": {_plural(sev.get('error', 0), 'error')}, "
                f"{_plural(sev.get('warning', 0), 'warning')}, {sev.get('info', 0)} info; "
                f"the first is {first['code']} {first['name']} at ",
                el("a", _where(first["source"], first["line"], d.names), href="#finding-1"),
                ".",
            )
        )
    return out


def _sources_table(d: _Data) -> Html:
    cols = [
        _Col("File (notes)", wrap=True),
        _Col("Format", nowrap=True),
        _Col("Status"),
        _Col("Lines", num=True),
        _Col("Rows", num=True),
        _Col("Invalid", num=True),
        _Col("Truncated"),
    ]
    rows = [
        [
            join(
                [
                    el("code", r["source"]),
                    # the loader's remarks are sentences: under the name, not in a column
                    el("span", "; ".join(x for x in (r["error"], r["note"]) if x), class_="sub")
                    if r["error"] or r["note"]
                    else None,
                ]
            ),
            join(
                [
                    r["format"] or _DASH,
                    el("span", "forced", class_="sub") if r["detected"] == "forced" else None,
                ]
            ),
            el("span", r["status"], class_="badge sev-error") if r["status"] == "error" else "ok",
            _count(r["lines"]) if r["lines"] is not None else _DASH,
            _count(r["rows"]) if r["rows"] is not None else _DASH,
            _count(r["invalid"]) if r["invalid"] is not None else _DASH,
            "yes" if r["truncated"] else "no",
        ]
        for r in d.view.sources.iter_rows(named=True)
    ]
    caption = "Whole files, not only the window." if d.focus.windowed else None
    return _table(cols, rows, caption)


def _sessions_table(d: _Data) -> Html:
    overview = analysis.session_overview(d.view)
    if overview.is_empty():
        return _note("No session has a message in this report.")
    extra = d.view.sessions.select("session", "transport", "truncated")
    frame = overview.join(extra, on="session", how="left", maintain_order="left")
    hidden = max(frame.height - MAX_SESSIONS, 0)
    frame = frame.head(MAX_SESSIONS)
    cols = [
        _Col("Session (client)", mono=True, wrap=True),
        _Col("Server", wrap=True),
        _Col("Revision", nowrap=True),
        _Col("Active", num=True),
        _Col("Calls", num=True),
        _Col("Errors", num=True),
        _Col("No answer", num=True),
        _Col("Error rate", num=True),
        _Col("p95 (ms)", num=True),
    ]
    rows = [
        [
            join(
                [
                    r["session"] or _DASH,
                    " (truncated)" if r["truncated"] else "",
                    el("span", r["client"] or "client unknown", class_="sub"),
                ]
            ),
            join([r["server"] or _DASH, el("span", r["transport"] or "", class_="sub")]),
            join(
                [
                    el("code", r["revision"]) if r["revision"] else "unknown",
                    el(
                        "span",
                        _REVISION_SOURCES.get(r["revision_source"] or "", r["revision_source"]),
                        class_="sub",
                    ),
                ]
            ),
            join(
                [
                    _span(r["duration_s"]) if r["duration_s"] is not None else _DASH,
                    el("span", f"from {d.clock(r['first_ts'], ms=False)}", class_="sub"),
                ]
            ),
            _count(r["calls"]),
            _count(r["errors"]),
            _count(r["unanswered"]),
            _pct(r["error_rate"]),
            _ms(r["p95_ms"]),
        ]
        for r in frame.iter_rows(named=True)
    ]
    table = _table(
        cols,
        rows,
        "Errors are JSON-RPC errors and tool errors (isError); no answer counts unanswered and "
        "cancelled calls.",
    )
    if not hidden:
        return table
    more = _note(
        f"The first {MAX_SESSIONS} sessions in capture order; {_plural(hidden, 'more session')} "
        "not listed (mcptrace summary lists them all, --session focuses the report)."
    )
    return join([table, more])


def _section_overview(d: _Data) -> Html:
    view = d.view
    kinds = view.messages["kind"].cast(pl.String)
    protocol = int(kinds.is_in(PROTOCOL_KINDS).sum())
    other = view.messages.height - protocol
    rate = d.rate.row(0, named=True) if d.rate.height else None
    total = analysis.latency(view, ())
    p95 = total["p95"][0] if total.height else None
    sev = dict(d.findings["severity"].cast(pl.String).value_counts().rows())
    span = (
        _span((d.last - d.first).total_seconds()) if d.first is not None and d.last else "no times"
    )
    period = None
    if d.first is not None and d.last is not None:
        period = f"{d.clock(d.first, date=True, ms=False)} → {d.clock(d.last, ms=False)}"
    cards = [
        _card("Time span (UTC)", span, period),
        _card("Sessions", _count(view.sessions.height)),
        _card(
            "Messages",
            _count(protocol),
            f"+ {_plural(other, 'other line')} (stderr, logs, invalid)" if other else None,
        ),
        _card("Calls", _count(rate["calls"]) if rate else "0"),
        _card(
            "Failed calls",
            _pct(rate["error_rate"]) if rate else _DASH,
            _plural(
                rate["errors"] + rate["tool_errors"] + rate["unanswered"] + rate["cancelled"],
                "call",
            )
            if rate
            else None,
            bad=bool(rate and rate["error_rate"]),
        ),
        _card("p95 latency", _duration(p95), "all calls with a latency"),
        _card(
            "Findings",
            _count(d.findings.height),
            f"{_plural(sev.get('error', 0), 'error')}, "
            f"{_plural(sev.get('warning', 0), 'warning')}, {sev.get('info', 0)} info",
            bad=bool(sev.get("error")),
        ),
    ]
    unreadable = view.errors
    alert = None
    if unreadable.height:
        alert = el(
            "div",
            el("strong", f"{_plural(unreadable.height, 'input')} could not be read: "),
            join(
                [
                    join([el("code", r["source"]), f" ({r['error']})"])
                    for r in unreadable.iter_rows(named=True)
                ],
                "; ",
            ),
            class_="alert",
        )
    highlights = _highlights(d)
    return _section(
        "overview",
        alert,
        _focus_banner(d),
        el("div", cards, class_="cards"),
        el("h3", "What stands out") if highlights else None,
        el("ul", highlights, class_="highlights") if highlights else None,
        el("h3", "Sources"),
        _sources_table(d),
        el("h3", "Sessions"),
        _sessions_table(d),
    )


# ---------------------------------------------------------------------------
# findings
# ---------------------------------------------------------------------------


def _referenced_lines(message: str | None) -> list[int]:
    if not message:
        return []
    return [int(n) for m in _LINE_REFS.finditer(message) for n in re.findall(r"\d+", m.group(1))]


def _named(r: dict[str, Any]) -> list[tuple[str | None, int | None]]:
    """File and line of the other messages a finding's message names: its ``related``,
    or, in a findings table given without that column, the lines its text names (taken
    to be in the finding's own file)."""
    related = r.get("related")
    if related is not None:
        return [(other["source"], other["line"]) for other in related]
    return [(r["source"], n) for n in _referenced_lines(r["message"])]


def _section_findings(d: _Data) -> Html:
    from mcptrace.linter import RULES

    found = d.findings
    if found.is_empty():
        return _section("findings", _note(f"No findings ({d.findings_note})."))
    numbered = found.with_row_index("n", offset=1)
    shown = numbered.head(MAX_FINDING_DETAILS)
    summary = (
        numbered.group_by("code", "name", "severity", maintain_order=True)
        .agg(pl.len().alias("count"), pl.col("n"))
        .sort(["severity", "count", "code"], descending=[False, True, False])
    )
    cols = [
        _Col("Code", nowrap=True),
        _Col("Rule", nowrap=True),
        _Col("Severity"),
        _Col("Count", num=True),
        _Col("What it checks", wrap=True),
        _Col("Findings", wrap=True),
    ]
    rows = []
    for r in summary.iter_rows(named=True):
        rule = RULES.get(r["code"])
        links = [
            el("a", f"#{n}", href=f"#finding-{n}") for n in r["n"][:12] if n <= MAX_FINDING_DETAILS
        ]
        more = len(r["n"]) - len(links)
        rows.append(
            [
                el("code", r["code"]),
                r["name"] or "",
                _badge(str(r["severity"])),
                _count(r["count"]),
                _inline_code(rule.summary) if rule else "",
                join([join(links, " "), f" and {more} more" if more else ""]),
            ]
        )
    d.raw.load(
        place
        for r in shown.iter_rows(named=True)
        for place in [(r["source"], r["line"]), *_named(r)]
    )
    details = [_finding_detail(d, r, RULES.get(r["code"])) for r in shown.iter_rows(named=True)]
    cut = (
        _note(
            f"The first {MAX_FINDING_DETAILS} of {_count(found.height)} findings are shown in "
            "full; run mcptrace lint for all of them."
        )
        if found.height > MAX_FINDING_DETAILS
        else None
    )
    return _section(
        "findings",
        _note(f"Findings: {d.findings_note}. Severity: error (MUST), warning (SHOULD), info."),
        _table(cols, rows),
        el("h3", "Details"),
        cut,
        details,
    )


def _finding_detail(d: _Data, r: dict[str, Any], rule: Rule | None) -> Html:
    severity = str(r["severity"])
    own = (r["source"], r["line"])
    # in capture order: the files as loaded, then the lines
    order = {source: i for i, source in enumerate(d.names)}
    places = sorted(
        {place for place in [own, *_named(r)] if place[1] is not None},
        key=lambda p: (order.get(p[0] or "", len(order)), p[0] or "", p[1] or 0),
    )
    blocks = [
        _raw_block(
            [
                _where(source, n, d.names),
                el("span", "  ← flagged", class_="flag") if (source, n) == own else None,
            ],
            d.raw.get(source, n),
            flagged=(source, n) == own,
        )
        for source, n in places
    ]
    where = el(
        "p",
        el("code", _where(r["source"], r["line"], d.names)),
        " · session ",
        el("code", r["session"] or _DASH),
        " · revision ",
        r["revision"] or "unknown",
        " · scope ",
        str(r["scope"] or _DASH),
        class_="where",
    )
    return el(
        "article",
        el(
            "h3",
            f"{r['n']}.",
            el("code", r["code"]),
            r["name"] or "",
            _badge(severity),
        ),
        el("p", _inline_code(rule.summary), class_="rule-summary muted") if rule else None,
        # rule messages quote names in backticks as the summaries do; still escaped text
        el("p", _inline_code(r["message"] or ""), class_="message"),
        where,
        blocks,
        id=f"finding-{r['n']}",
        class_=f"finding sev-{severity}-edge",
    )


# ---------------------------------------------------------------------------
# latency
# ---------------------------------------------------------------------------

_LATENCY_COLS = [
    _Col("Calls", num=True),
    _Col("No latency", num=True),
    _Col("p50", num=True),
    _Col("p90", num=True),
    _Col("p95", num=True),
    _Col("p99", num=True),
    _Col("Max", num=True),
    _Col("Mean", num=True),
]


def _latency_table(frame: pl.DataFrame, key: str, header: str) -> Html:
    cols = [_Col(header, wrap=True, mono=True), *_LATENCY_COLS]
    rows = [
        [
            r[key] if r[key] is not None else "(none)",
            _count(r["count"]),
            _count(r["without_latency"]),
            *(_ms(r[c]) for c in ("p50", "p90", "p95", "p99", "max", "mean")),
        ]
        for r in frame.iter_rows(named=True)
    ]
    return _table(cols, rows, "Milliseconds; quantiles over the calls with a latency.")


#: groups shown in the comparison with the time before the window (most regressed first)
MAX_CHANGES = 15


def _before_the_window(d: _Data, by: str) -> list[Child]:
    """The window's calls against those of the same sessions requested before it: what
    changed when the incident started (only for a window with a start)."""
    f = d.focus
    if f.since is None:
        return []
    before, _, _ = analysis.split_at(f.context, f.since)
    heading = el("h3", "Before the window and in it")
    if before.is_empty():
        return [heading, _note("No calls were requested before the window: nothing to compare.")]
    changes = analysis.compare(before, f.view, by)
    if changes.is_empty():
        return []
    header = by.capitalize()
    cols = [
        _Col(header, wrap=True, mono=True),
        _Col("Calls before", num=True),
        _Col("In window", num=True),
        _Col("p50 before", num=True),
        _Col("In window", num=True),
        _Col("p95 before", num=True),
        _Col("In window", num=True),
        _Col("p95 " + _TIMES, num=True),
        _Col("Failed before", num=True),
        _Col("In window", num=True),
    ]
    rows = [
        [
            r[by] if r[by] is not None else "(none)",
            _count(r["calls_before"]),
            _count(r["calls_after"]),
            _ms(r["p50_before"]),
            _ms(r["p50_after"]),
            _ms(r["p95_before"]),
            _ms(r["p95_after"]),
            _DASH if r["p95_ratio"] is None else f"{r['p95_ratio']:,.1f}",
            _pct(r["error_rate_before"]),
            _pct(r["error_rate_after"]),
        ]
        for r in changes.head(MAX_CHANGES).iter_rows(named=True)
    ]
    more = changes.height - len(rows)
    caption = (
        f"The calls of these sessions requested before {d.clock(f.since)} against those in "
        "the window: milliseconds, and the share of calls that failed; most regressed "
        "first (failing more, then slower)."
        + (f" {_plural(more, 'more group')} not shown." if more > 0 else "")
    )
    return [heading, _table(cols, rows, caption)]


def _section_latency(d: _Data) -> Html:
    from mcptrace import plots

    view = d.view
    by_method = analysis.latency(view, "method")
    if by_method.is_empty():
        return _section("latency", _note("No calls."))
    coverage = analysis.latency_coverage(view)
    reason = coverage["reason"][0] if coverage.height else None
    by = "tool" if d.has_tools else "method"
    every = _every(d.first, d.last)
    parts: list[Child] = [
        _note(f"Calls without a latency: {reason}.") if reason else None,
        el("h3", "By method"),
        _latency_table(by_method, "method", "Method"),
    ]
    if d.has_tools:
        parts += [
            el("h3", "By tool"),
            _latency_table(analysis.latency(view, "tool"), "tool", "Tool"),
        ]
    parts += _before_the_window(d, by)
    parts += [
        _figure(
            lambda: plots.latency_distribution(view, by=by),
            f"Latency distribution by {by}",
            f"Latency distribution by {by}: for each latency, the share of the {by}'s calls "
            "that took at most that long (log scale; the dotted line is p95).",
        ),
        _figure(
            lambda: plots.latency_over_time(view, by=by if d.has_tools else None, every=every),
            "Latency over time",
            f"Each call's latency at its request time; lines are p50 and p95 per {every}. "
            "Crosses are failed answers, triangles calls never answered (time waited).",
        ),
    ]
    return _section("latency", *parts)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def _section_errors(d: _Data) -> Html:
    from mcptrace import plots

    view = d.view
    if d.rate.is_empty():
        return _section("errors", _note("No calls."))
    r = d.rate.row(0, named=True)
    failed = r["errors"] + r["tool_errors"] + r["unanswered"] + r["cancelled"]
    line = el(
        "p",
        el("strong", f"Error rate {_pct(r['error_rate'])}"),
        f": {_count(failed)} of {_plural(r['calls'], 'call')} failed — "
        f"{_plural(r['errors'], 'JSON-RPC error')}, {_plural(r['tool_errors'], 'tool error')}, "
        f"{_count(r['unanswered'])} unanswered, {_count(r['cancelled'])} cancelled.",
    )
    per_method = analysis.error_rate(view, "method")
    rate_cols = [
        _Col("Method", wrap=True, mono=True),
        _Col("Calls", num=True),
        _Col("Errors", num=True),
        _Col("Tool errors", num=True),
        _Col("Unanswered", num=True),
        _Col("Cancelled", num=True),
        _Col("Error rate", num=True),
    ]
    rate_rows = [
        [
            m["method"] or "(none)",
            _count(m["calls"]),
            _count(m["errors"]),
            _count(m["tool_errors"]),
            _count(m["unanswered"]),
            _count(m["cancelled"]),
            el("span", _pct(m["error_rate"]), class_="hot") if m["error_rate"] else "0.0 %",
        ]
        for m in per_method.iter_rows(named=True)
    ]
    parts: list[Child] = [line, el("h3", "Error rate by method"), _table(rate_cols, rate_rows)]
    breakdown = analysis.error_breakdown(view, "method")
    if breakdown.is_empty():
        parts.append(_note("No call failed."))
        return _section("errors", *parts)
    cols = [
        _Col("Method", wrap=True, mono=True),
        _Col("Category"),
        _Col("Code", num=True),
        _Col("Name", wrap=True),
        _Col("Count", num=True),
        _Col("% of calls", num=True),
    ]
    rows = [
        [
            b["method"] or "(none)",
            b["category"],
            str(b["code"]) if b["code"] is not None else _DASH,
            b["name"] or "",
            _count(b["count"]),
            _pct(b["share_of_calls"]),
        ]
        for b in breakdown.iter_rows(named=True)
    ]
    by = "tool" if d.has_tools and _failures_are_tool_calls(view) else "method"
    every = _every(d.first, d.last)
    parts += [
        el("h3", "Failed calls by kind"),
        _table(
            cols,
            rows,
            "HTTP rows count calls in addition to their JSON-RPC row; % of the method's calls.",
        ),
        _figure(
            lambda: plots.error_distribution(view, by=by),
            f"Failed calls by {by}",
            f"Failed calls per {by}, stacked by kind (most failures at the top).",
        ),
        _figure(
            lambda: plots.error_distribution(view, by="method", every=every),
            "Failed calls over time",
            f"Failed calls per {every} by kind, against the outline of all calls sent then.",
        ),
    ]
    return _section("errors", *parts)


def _failures_are_tool_calls(view: Trace) -> bool:
    calls = view.calls.filter(pl.col("outcome").cast(pl.String).is_in(analysis.FAILED_OUTCOMES))
    return bool(calls.height) and bool((calls["method"] == "tools/call").all())


# ---------------------------------------------------------------------------
# slowest calls
# ---------------------------------------------------------------------------


def _section_slowest(d: _Data) -> Html:
    slow = d.slowest
    if slow.is_empty():
        return _section("slowest", _note("No call has a latency."))
    calls = d.view.calls.select(
        "request_source", "request_line", "response_source", "response_line"
    ).unique(["request_source", "request_line"], keep="first")
    slow = slow.join(
        calls, on=["request_source", "request_line"], how="left", maintain_order="left"
    ).with_row_index("n", offset=1)
    d.raw.load(
        key
        for r in slow.iter_rows(named=True)
        for key in (
            (r["request_source"], r["request_line"]),
            (r["response_source"], r["response_line"]),
        )
    )
    files = d.several_files
    cols = [
        _Col("#", num=True),
        _Col("Latency", num=True),
        _Col("Call", wrap=True, mono=True),
        _Col("Outcome"),
        _Col("Session", mono=True, nowrap=True),
        _Col("Requested (UTC)", nowrap=True),
        *([_Col("File", wrap=True, mono=True)] if files else []),
        _Col("Lines", num=True),
    ]
    rows = [
        [
            el("a", str(r["n"]), href=f"#slow-{r['n']}"),
            _duration(r["latency_ms"]),
            " ".join(x for x in (r["method"], r["target"]) if x) or _DASH,
            _outcome(r["outcome"]),
            r["session"] or _DASH,
            d.clock(r["request_ts"]),
            *([d.names.get(r["request_source"], r["request_source"]) or _DASH] if files else []),
            # a response in another file (per-direction captures) is named in the raw block
            f"{r['request_line']} \N{RIGHTWARDS ARROW} {r['response_line'] or '?'}",
        ]
        for r in slow.iter_rows(named=True)
    ]
    details = [
        el(
            "details",
            el(
                "summary",
                f"{r['n']}. {r['method'] or '?'} {r['target'] or ''} — "
                f"{_duration(r['latency_ms'])}, {(r['outcome'] or '?').replace('_', ' ')}",
            ),
            _raw_block(
                f"request  {_where(r['request_source'], r['request_line'], d.names)}",
                d.raw.get(r["request_source"], r["request_line"]),
            ),
            _raw_block(
                f"response {_where(r['response_source'], r['response_line'], d.names)}",
                d.raw.get(r["response_source"], r["response_line"]),
            ),
            id=f"slow-{r['n']}",
            open=r["n"] <= OPEN_SLOWEST,
        )
        for r in slow.iter_rows(named=True)
    ]
    return _section(
        "slowest",
        _note(f"The {_plural(slow.height, 'call')} with the longest latency, slowest first."),
        _table(cols, rows),
        el("h3", "Request and response"),
        details,
    )


# ---------------------------------------------------------------------------
# error bursts
# ---------------------------------------------------------------------------


def _section_bursts(d: _Data) -> Html:
    method = _note(
        "A burst is a run of 1-minute windows with at least 3 failed calls and a failure "
        "rate above 3 times the baseline: the rate of the whole capture (of the chosen "
        "sessions, even when the report shows a window of it). Calls still pending when "
        "the capture stopped are not counted."
    )
    if d.bursts.is_empty():
        return _section("bursts", method, _note("No error burst."))
    cols = [
        _Col("Start (UTC)", nowrap=True),
        _Col("End (UTC)", nowrap=True),
        _Col("Calls", num=True),
        _Col("Failed", num=True),
        _Col("Error rate", num=True),
        _Col("Baseline", num=True),
        _Col("Request lines", num=True),
        *([_Col("File", wrap=True, mono=True)] if d.several_files else []),
        _Col("Methods", wrap=True, mono=True),
    ]
    rows = [
        [
            d.clock(b["start"]),
            d.clock(b["end"]),
            _count(b["calls"]),
            _count(b["errors"]),
            el("span", _pct(b["error_rate"]), class_="hot"),
            _pct(b["baseline_rate"]),
            _burst_lines(d, b, named=False),
            *([d.names.get(b["source"], b["source"]) or _DASH] if d.several_files else []),
            ", ".join(b["methods"] or []),
        ]
        for b in d.bursts.iter_rows(named=True)
    ]
    return _section("bursts", method, _table(cols, rows))


# ---------------------------------------------------------------------------
# timeline
# ---------------------------------------------------------------------------


def _section_timeline(d: _Data) -> Html:
    from mcptrace import plots

    view = d.view
    if view.calls.is_empty():
        return _section("timeline", _note("No calls."))
    return _section(
        "timeline",
        _figure(
            lambda: plots.timeline(view),
            "Calls per session over time",
            "One lane per session, one bar per call from its request to its answer, coloured "
            "by outcome; hatched bars were still waiting when the capture ended.",
        ),
        _figure(
            lambda: plots.concurrency(view),
            "Requests in flight",
            "Requests in flight at each moment (all sessions), with the peak marked.",
        ),
    )


# ---------------------------------------------------------------------------
# the page
# ---------------------------------------------------------------------------


def _default_title(trace: Trace) -> str:
    names = [Path(s).name for s in trace.sources["source"].to_list()]
    if not names:
        return "MCP trace report"
    more = f" and {_plural(len(names) - 1, 'more file')}" if len(names) > 1 else ""
    return f"MCP trace report: {names[0]}{more}"


def _toc(d: _Data, title: str) -> Html:
    failed = 0
    if d.rate.height:
        r = d.rate.row(0, named=True)
        failed = r["errors"] + r["tool_errors"] + r["unanswered"] + r["cancelled"]
    counts: dict[str, tuple[int | None, bool]] = {
        "findings": (d.findings.height, bool((d.findings["severity"] == "error").any())),
        "errors": (failed, bool(failed)),
        "slowest": (d.slowest.height, False),
        "bursts": (d.bursts.height, bool(d.bursts.height)),
    }
    items = []
    for key, heading in SECTIONS.items():
        n, bad = counts.get(key, (None, False))
        badge = (
            el("span", _count(n), class_="count bad" if bad else "count") if n is not None else None
        )
        items.append(el("li", el("a", el("span", heading), badge, href=f"#{key}")))
    controls = el(
        "div",
        el("button", "Expand all", type="button", data_details="open", hidden=True),
        el("button", "Collapse all", type="button", data_details="close", hidden=True),
        class_="controls",
    )
    return el(
        "nav",
        el("p", "mcptrace report", class_="brand"),
        el("p", title, class_="sub"),
        el("ol", items),
        controls,
        class_="toc",
        aria_label="Contents",
    )


def _footer(d: _Data, version: str) -> Html:
    f = d.focus
    window = "whole capture"
    if f.windowed:
        start = d.clock(f.since, date=True) if f.since else "start"
        end = d.clock(f.until, date=True) if f.until else "end"
        window = f"{start} to {end} UTC"
    generated = datetime.now(UTC).replace(microsecond=0).strftime("%Y-%m-%d %H:%M:%S UTC")
    meta = [
        ("Generated", f"{generated} by mcptrace {version}"),
        ("Inputs", join([el("code", s) for s in d.view.sources["source"].to_list()], ", ")),
        ("Window", window),
        ("Sessions", join([el("code", s) for s in f.sessions], ", ") if f.sessions else "all"),
        ("Findings", d.findings_note),
        ("Viewing", "self-contained page: no network access, script optional"),
    ]
    return el(
        "footer",
        el("dl", [join([el("dt", k), el("dd", v)]) for k, v in meta], class_="meta"),
        class_="page",
    )


def build_report(
    trace: Trace,
    *,
    since: Moment | None = None,
    until: Moment | None = None,
    session: str | Sequence[str] | None = None,
    findings: pl.DataFrame | None = None,
    title: str | None = None,
    schema_dir: str | Path | None = None,
    allowed_origins: Sequence[str] | None = None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    revision: str | None = None,
    settings: str | Path | None = None,
) -> str:
    """The post-mortem report of ``trace`` as one self-contained HTML page.

    Parameters
    ----------
    trace
        The loaded captures.
    since, until
        An incident window (inclusive; a time without a zone is UTC): only messages in
        it and calls requested in it are reported. Calls are paired and sessions
        identified over the whole capture first, so a call answered after ``until``
        keeps its latency and each session its revision.
    session
        Report only this session key, or these.
    findings
        A findings table (:data:`mcptrace.schema.FINDINGS`) to show instead of running
        :func:`mcptrace.linter.lint` over the chosen sessions; restricted to the
        sessions and window like everything else.
    title
        The page title; by default named after the first input file.
    schema_dir
        Passed to :func:`~mcptrace.linter.lint` when ``findings`` is None (SC rules).
    allowed_origins
        Passed to :func:`~mcptrace.linter.lint` likewise (HT021: the Origins the servers
        accept).
    select, ignore, revision
        Passed to :func:`~mcptrace.linter.lint` likewise: the rules to run (codes,
        prefixes or names) and the revision to judge every session by.
    settings
        The configuration file these came from, named in the findings section.

    Returns
    -------
    str
        The HTML text: sections ``#overview``, ``#findings`` (details ``#finding-N``),
        ``#latency``, ``#errors``, ``#slowest``, ``#bursts`` and ``#timeline``, plots as
        embedded PNG images, inline style, and a small optional script. Every text taken
        from the capture is escaped.
    """
    from mcptrace import __version__

    lint_settings = LintSettings(schema_dir, allowed_origins, select, ignore, revision, settings)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcptrace-report-lint") as pool:
        d = _collect(trace, since, until, session, findings, lint_settings, pool)
        # The sections without findings first: their plots are drawn while the lint
        # runs (Polars releases the GIL; Matplotlib stays on this thread). At 10^6
        # messages this took the report from 9.4 s to 6.5-7.6 s on two cores.
        later = [
            _section_latency(d),
            _section_errors(d),
            _section_slowest(d),
            _section_bursts(d),
            _section_timeline(d),
        ]
        sections = [_section_overview(d), _section_findings(d), *later]
    heading = title or _default_title(trace)
    subtitle = (
        f"{d.clock(d.first, date=True)} to {d.clock(d.last, date=True)} UTC · "
        f"{_plural(d.view.sessions.height, 'session')} · "
        f"{_plural(d.rate['calls'][0] if d.rate.height else 0, 'call')}"
        if d.first
        else "no timestamped messages"
    )
    head = el(
        "head",
        el("meta", charset="utf-8"),
        el("meta", name="viewport", content="width=device-width, initial-scale=1"),
        el("meta", http_equiv="Content-Security-Policy", content=CSP),
        el("meta", name="generator", content=f"mcptrace {__version__}"),
        el("title", heading),
        el("style", raw_markup(STYLE)),
    )
    body = el(
        "body",
        el(
            "div",
            _toc(d, heading),
            el(
                "main",
                el("header", el("h1", heading), el("p", subtitle), class_="page"),
                sections,
                _footer(d, __version__),
            ),
            class_="layout",
        ),
        el("script", raw_markup(SCRIPT)),
    )
    return "<!DOCTYPE html>\n" + el("html", head, body, lang="en") + "\n"
