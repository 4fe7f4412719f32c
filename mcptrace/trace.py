"""``mcptrace.load``: capture files in, a :class:`Trace` of tables out.

A trace is the messages table of every input file (in the order the files were
given, a directory's in name order but a rotated log's oldest first; then line order),
plus the per-file ``sources`` table. The calls and
sessions tables are derived on first access and cached.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import polars as pl

from mcptrace._format import fmt
from mcptrace._once import once_property
from mcptrace.calls import identify_calls, pair_calls
from mcptrace.errors import CaptureError, UsageError
from mcptrace.inputs import PathLike, describe_paths, expand_inputs, input_list
from mcptrace.loaders import FORMATS, LoadResult, content_bytes, detect_file, parse_file
from mcptrace.loaders.reader import Content
from mcptrace.moments import Moment, as_utc_or_none
from mcptrace.schema import CALLS, MESSAGES, SOURCES
from mcptrace.sessions import build_sessions, identify

ProgressCallback = Callable[[str, int, int], None]

#: a direction token in a file name marks one half of a per-direction stdio capture
_DIRECTION_TOKEN = re.compile(
    r"(?<![a-z0-9])(c2s|s2c|in|out|stdin|stdout|client|server|requests?|responses?|tx|rx)(?![a-z0-9])",
    re.IGNORECASE,
)
_TOKEN_DIRECTION = {
    **dict.fromkeys(("c2s", "in", "stdin", "client", "request", "requests", "tx"), "c2s"),
    **dict.fromkeys(("s2c", "out", "stdout", "server", "response", "responses", "rx"), "s2c"),
}


@dataclass
class Trace:
    """The tables of one or more capture files.

    ``messages`` and ``sources`` are loaded; ``calls`` and ``sessions`` are derived
    on first access. Table schemas are documented in :mod:`mcptrace.schema`.
    """

    messages: pl.DataFrame
    sources: pl.DataFrame
    unordered_sessions: frozenset[str] = field(default_factory=frozenset)
    #: calls of formats without message frames (OpenTelemetry spans, gateway logs)
    call_records: pl.DataFrame = field(default_factory=CALLS.empty)
    #: for a time window cut by :meth:`filter`: the trace it was cut from and the window
    #: (since, until), so that the linter can judge the window with the whole capture
    window_of: tuple[Trace, datetime | None, datetime | None] | None = field(
        default=None, repr=False, compare=False
    )

    @once_property
    def identity(self) -> pl.DataFrame:
        """Per-session revision and identity (the first columns of ``sessions``)."""
        return identify(self.messages, self.call_records)

    @once_property
    def calls(self) -> pl.DataFrame:
        """One row per request joined with its response; orphans appended; then the
        call records of call-level formats."""
        # the pairing needs no identity: the identity is found meanwhile, on a thread of
        # its own (each is mostly one core's work, and both take a while on big captures)
        with ThreadPoolExecutor(max_workers=1) as pool:
            identity = pool.submit(lambda: self.identity)
            pairs = pair_calls(self.messages, unordered_sessions=self.unordered_sessions)
            paired = identify_calls(pairs, self.messages, identity.result())
        if self.call_records.is_empty():
            return paired
        known = self.identity.select(
            "session", pl.col("client").alias("_c"), pl.col("revision").alias("_r")
        )
        records = (
            self.call_records.join(known, on="session", how="left", maintain_order="left")
            .with_columns(
                client=pl.coalesce("client", "_c"), revision=pl.coalesce("revision", "_r")
            )
            .drop("_c", "_r")
        )
        return pl.concat([paired, CALLS.conform(records)])

    @once_property
    def sessions(self) -> pl.DataFrame:
        """One row per session."""
        truncated = self.sources.filter(pl.col("truncated"))["source"].to_list()
        return build_sessions(
            self.messages,
            self.calls,
            self.identity,
            truncated_sources=truncated,
            source_formats=self.sources.select("source", "format"),
        )

    @property
    def call_only_sessions(self) -> list[str]:
        """Sessions known only from call-level records: message rules cannot judge them."""
        with_messages = set(self.messages["session"].unique().to_list())
        return sorted(set(self.call_records["session"].unique().to_list()) - with_messages)

    @property
    def errors(self) -> pl.DataFrame:
        """Files that could not be read, with the reason."""
        return self.sources.filter(pl.col("status") == "error").select("source", "error")

    def filter(
        self,
        *,
        session: str | Sequence[str] | None = None,
        since: Moment | None = None,
        until: Moment | None = None,
    ) -> Trace:
        """A trace restricted to some sessions and/or a time window.

        A window keeps the messages timed inside it (rows without time are dropped) but
        judges them with what the whole capture knows, so that its edges do not invent
        problems: sessions keep the identity (revision, client, server, capabilities)
        found on the whole capture, even when their handshake came before the window;
        and the calls are those whose request is inside the window (an orphan response
        counts by its own time), paired on the whole capture, so a call answered after
        the window ends keeps its real outcome and latency instead of looking
        unanswered, and one asked before it starts does not become an orphan.
        :func:`mcptrace.lint` of a window lints the whole capture (its sessions, when
        ``session`` is given) and keeps the findings on messages inside the window, so a
        window that starts mid-session draws no lifecycle findings for its handshake.

        ``since`` and ``until`` are ``datetime`` objects, dates or ISO 8601 text
        (``"2026-09-15T22:45:00Z"``); a time without a zone is UTC.
        """
        since, until = as_utc_or_none(since, "since"), as_utc_or_none(until, "until")
        context = self
        if session is not None:
            names = [session] if isinstance(session, str) else list(session)
            context = Trace(
                self.messages.filter(pl.col("session").is_in(names)),
                self.sources,
                self.unordered_sessions,
                self.call_records.filter(pl.col("session").is_in(names)),
            )
        if since is None and until is None:
            return context

        def in_window(ts: pl.Expr) -> pl.Expr:
            cond = pl.lit(True)
            if since is not None:
                cond &= ts >= since
            if until is not None:
                cond &= ts <= until
            return cond.fill_null(False)

        view = Trace(
            context.messages.filter(in_window(pl.col("ts"))),
            self.sources,
            self.unordered_sessions,
            context.call_records.filter(in_window(pl.col("request_ts"))),
            window_of=(context, since, until),
        )
        # once_property keeps its value in the instance dict: setting it gives the
        # window the whole capture's session identity and pairing
        vars(view)["identity"] = context.identity
        vars(view)["calls"] = context.calls.filter(
            in_window(pl.coalesce("request_ts", "response_ts"))
        )
        return view

    def __repr__(self) -> str:
        return (
            f"<Trace {self.sources.height} file(s), {self.messages.height} messages, "
            f"{self.messages['session'].n_unique()} session(s)>"
        )


@dataclass
class FilePlan:
    """One input file: its format and how its rows are placed in the trace.

    Decided from file names and formats before any row is parsed, so that
    :func:`load` and the streaming writers produce the same session keys.
    """

    source: str
    format: str
    content: Content
    #: per-direction stdio file: the shared session key and this file's direction
    session: str | None = None
    direction: str | None = None
    #: prefix for session keys derived from file structure (``weather#1``)
    prefix: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """Problems met while reading the file as a whole (BOM, truncated gzip)."""
        out = list(self.content.warnings)
        if self.content.bom:
            out.append("UTF-8 byte order mark at start of file (ignored)")
        return out


#: formats whose session keys come from the file's structure (``weather#1``), so
#: the same key in two files names two different sessions
_STRUCTURAL_SESSION_FORMATS = frozenset({"claude-desktop", "vscode", "mcpjam"})


#: a plan keeps the bytes detection read only up to this size: every input's plan lives
#: until the last file is loaded, so a directory of forty 13 MB captures held 0.5 GB more
#: at the peak. A file read by offset from disk is read again at its turn, which the
#: chunked loaders do for big files anyway (and detection then reads only its start,
#: when that tells the format: see :func:`~mcptrace.loaders.detect_file`).
_KEPT_BYTES = 1 << 20


def _skipped_rows(skipped: Iterable[tuple[str, str]]) -> list[dict[str, object]]:
    """``sources`` rows of the files found but not read (see :class:`~mcptrace.inputs.Inputs`)."""
    return [
        {"source": path, "status": "error", "error": reason, "truncated": False}
        for path, reason in skipped
    ]


def plan_files(
    files: Sequence[str], *, format: str | None = None, among_others: bool = False
) -> tuple[list[FilePlan], list[dict[str, object]]]:
    """Detect every file's format and decide session keys; unreadable files are returned
    as ``sources`` rows with the reason. ``among_others``: see :func:`load`."""
    plans: list[FilePlan] = []
    failed: list[dict[str, object]] = []
    for path in files:
        try:
            name, content = detect_file(path, format=format, keep=_KEPT_BYTES)
        except CaptureError as exc:
            failed.append(
                {"source": path, "status": "error", "error": exc.reason, "truncated": False}
            )
            continue
        plans.append(FilePlan(source=path, format=name, content=content))
    _plan_direction_pairs(plans)
    if len(plans) > 1 or among_others:
        for plan in plans:
            if plan.format in _STRUCTURAL_SESSION_FORMATS:
                plan.prefix = Path(plan.source).name
    return plans, failed


def _plan_direction_pairs(plans: list[FilePlan]) -> None:
    """Per-direction stdio files (``x.in.jsonl`` + ``x.out.jsonl``) become one session."""
    groups: dict[tuple[str, str], list[tuple[FilePlan, str]]] = {}
    for plan in plans:
        if plan.format != "stdio":
            continue
        name = Path(plan.source).name
        tokens = _DIRECTION_TOKEN.findall(name)
        if len(tokens) != 1:
            continue
        key = (str(Path(plan.source).parent), _DIRECTION_TOKEN.sub("*", name))
        groups.setdefault(key, []).append((plan, _TOKEN_DIRECTION[tokens[0].lower()]))
    for (_, pattern), members in groups.items():
        if len(members) != 2 or {d for _, d in members} != {"c2s", "s2c"}:
            continue
        stem = re.sub(r"(\.(jsonl|ndjson|json|log|txt|gz))+$", "", pattern, flags=re.IGNORECASE)
        session = re.sub(r"[._-]*\*[._-]*", "-", stem).strip("-") or pattern
        for plan, direction in members:
            plan.session, plan.direction = session, direction
            plan.notes.append(
                f"one direction ({direction}) of session {session!r}: the order of messages "
                "across the two files is unknown, so latencies cannot be measured"
            )


def apply_plan(df: pl.DataFrame, plan: FilePlan, *, first_chunk: bool = True) -> pl.DataFrame:
    """Place a file's rows (or a chunk of them) as the plan says."""
    if plan.session is not None and plan.direction is not None:
        df = df.with_columns(
            session=pl.lit(plan.session),
            direction=pl.lit(plan.direction).cast(MESSAGES.schema["direction"]),
            direction_inferred=pl.lit(False),
            unordered=pl.lit(True),
        )
    if plan.prefix is not None:
        df = df.with_columns(session=fmt("{}:{}", pl.lit(plan.prefix), pl.col("session")))
    warnings = plan.warnings
    if first_chunk and warnings and df.height:
        df = df.with_columns(
            parse_error=pl.when(pl.int_range(pl.len()) == 0)
            .then(pl.coalesce("parse_error", pl.lit("; ".join(warnings))))
            .otherwise("parse_error")
        )
    return df


def source_row(
    plan: FilePlan, result: LoadResult, df: pl.DataFrame, *, forced: bool
) -> dict[str, object]:
    """The ``sources`` table row of a loaded file."""
    warnings = plan.warnings
    return {
        "source": plan.source,
        "format": plan.format,
        "detected": "forced" if forced else "content",
        "status": "ok",
        "error": "; ".join(warnings) or None,
        "bytes": content_bytes(plan.source, plan.content),
        "lines": result.lines,
        "rows": df.height,
        "invalid": int((df["kind"] == "invalid").sum()),
        "truncated": result.truncated or bool(plan.content.warnings),
        "note": "; ".join([*plan.content.notes, *result.notes, *plan.notes]) or None,
    }


def _load_planned(
    plan: FilePlan,
    tz: str | None,
    records: list[pl.DataFrame],
    source_rows: list[dict[str, object]],
    *,
    forced: bool,
) -> pl.DataFrame:
    """One planned file's messages; its call records and ``sources`` row are appended to
    the lists given. (A function of its own so that nothing else keeps the file's
    frames alive once they are joined.)"""
    result = parse_file(plan.source, plan.format, plan.content, tz=tz)
    df = apply_plan(result.messages, plan)
    if result.calls is not None and not result.calls.is_empty():
        records.append(CALLS.conform(result.calls))
    source_rows.append(source_row(plan, result, df, forced=forced))
    return df


def unordered_sessions_of(messages: pl.DataFrame) -> set[str]:
    """The sessions whose two directions have no common order: every row of them is
    ``unordered`` (per-direction files, and converted captures of them). A session with
    only some such rows (a HAR's server stream events placed between bounds) keeps its
    order: only those rows' places are unknown."""
    if not messages["unordered"].any():
        return set()
    every = messages.group_by("session").agg(pl.col("unordered").all())
    return set(every.filter(pl.col("unordered"))["session"].drop_nulls().to_list())


def _with_ordinals(df: pl.DataFrame, first: int) -> pl.DataFrame:
    """``ordinal`` numbered from ``first``: the file's own ordinals offset when its loader
    set them chunk by chunk (keeping the column chunked like the others, so Polars never
    realigns the frame), else a fresh range."""
    ordinal = df["ordinal"]
    if df.height and ordinal.null_count() == 0:
        return df.with_columns(pl.col("ordinal") + first) if first else df
    return df.with_columns(ordinal=pl.int_range(first, first + df.height, dtype=pl.Int64))


#: a file whose chunks hold fewer rows than this, on average, is joined with the small
#: files next to it into one chunk: a table cut into thousands of small chunks makes
#: every later query pay for each chunk (a regex is compiled anew for every one), which
#: made a directory of 1,000 small captures lint in seconds instead of a fraction of one
_SMALL_CHUNK_ROWS = 4096
#: rows of each chunk such joined files make (a chunk of every small file of a
#: directory in one would be copied at once, doubling the text held at that moment)
_SMALL_FILE_ROWS = 50_000


class _Coalescer:
    """Files' frames, in order, with each run of small ones (see
    :data:`_SMALL_CHUNK_ROWS`) copied into chunks of about :data:`_SMALL_FILE_ROWS`
    rows as it fills; the others are kept as they are (their chunks are large, and
    copying them would cost time and memory)."""

    def __init__(self) -> None:
        self.done: list[pl.DataFrame] = []
        self._run: list[pl.DataFrame] = []
        self._rows = 0

    def add(self, frame: pl.DataFrame) -> None:
        if frame.height < _SMALL_CHUNK_ROWS * max(frame.n_chunks("all")):
            self._run.append(frame)
            self._rows += frame.height
            if self._rows >= _SMALL_FILE_ROWS:
                self._flush()
            return
        self._flush()
        self.done.append(frame)

    def _flush(self) -> None:
        if len(self._run) > 1:
            self.done.append(pl.concat(self._run, how="vertical", rechunk=True))
        elif self._run:
            # concat of one frame returns it as it is, rechunk or not; and a frame's
            # columns may be cut differently (the first one, which n_chunks() reads,
            # whole where the others are not)
            frame = self._run[0]
            self.done.append(frame.rechunk() if max(frame.n_chunks("all")) > 1 else frame)
        self._run, self._rows = [], 0

    def frames(self) -> list[pl.DataFrame]:
        self._flush()
        return self.done


def _coalesced(frames: list[pl.DataFrame]) -> list[pl.DataFrame]:
    """``frames`` through a :class:`_Coalescer`."""
    joined = _Coalescer()
    for frame in frames:
        joined.add(frame)
    return joined.frames()


def load(
    paths: PathLike | Iterable[PathLike],
    *,
    format: str | None = None,
    tz: str | None = None,
    progress: ProgressCallback | None = None,
    among_others: bool = False,
) -> Trace:
    """Load capture files into a :class:`Trace`.

    Parameters
    ----------
    paths
        A file, a directory (read recursively), a glob, or a list of these.
    format
        Force a loader (see :data:`mcptrace.loaders.FORMATS`); detected from content if None.
    tz
        IANA zone of wall-clock timestamps: those of formats that lack one (VS Code
        logs), and times written without their zone where RFC 3339 is expected. Without
        it such times are read as UTC. Either way they are marked ``local``.
    progress
        Called as ``progress(path, index, total)`` before each file.
    among_others
        The files are a part of larger inputs loaded a part at a time (as ``mcptrace
        lint`` loads a big folder): sessions named from a file's structure (Claude
        Desktop, VS Code, MCPJam) then get the file's name as a prefix even when only
        one file is given, as they do when several files are loaded together.

    Files that cannot be read are listed in ``Trace.sources`` with the reason;
    :class:`~mcptrace.errors.CaptureError` is raised only when no file could be read.
    """
    if format is not None and format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    paths = input_list(paths)
    inputs = expand_inputs(paths)
    files = inputs.files
    if not files and not inputs.skipped:
        raise UsageError(f"no capture files found in {describe_paths(paths)}")
    plans, source_rows = plan_files(files, format=format, among_others=among_others)
    source_rows.extend(_skipped_rows(inputs.skipped))
    # small files are joined as they come: each run's files are then dropped as soon
    # as it is copied
    frames = _Coalescer()
    records: list[pl.DataFrame] = []
    rows = 0
    for i, plan in enumerate(plans):
        if progress is not None:
            progress(plan.source, i, len(plans))
        df = _load_planned(plan, tz, records, source_rows, forced=format is not None)
        frames.add(_with_ordinals(df, rows))
        rows += df.height
        del df
    if not plans:
        reasons = "; ".join(f"{r['source']}: {r['error']}" for r in source_rows)
        raise CaptureError(describe_paths(paths), f"no capture could be read ({reasons})")
    order = {path: i for i, path in enumerate([*files, *(path for path, _ in inputs.skipped)])}
    source_rows.sort(key=lambda r: order[str(r["source"])])
    messages = MESSAGES.conform(pl.concat(frames.frames(), how="vertical"))
    del frames
    sources = SOURCES.from_columns({c: [r.get(c) for r in source_rows] for c in SOURCES.names})
    # per-direction files, and converted captures of them (their records say so)
    unordered = {p.session for p in plans if p.session is not None}
    unordered.update(unordered_sessions_of(messages))
    return Trace(
        messages=messages,
        sources=sources,
        unordered_sessions=frozenset(unordered),
        call_records=pl.concat(records) if records else CALLS.empty(),
    )
