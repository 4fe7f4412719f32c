"""Linting a big capture file a share of its sessions at a time, in bounded memory.

A capture file's sessions are dealt into shares (:mod:`mcptrace.loaders.partition`);
each share is loaded, linted and dropped before the next. No rule relates two
sessions, so the findings are those of linting the whole file: the shares'
findings are joined and their ordinals (numbered within the share) turned into
the file's, so the result equals ``lint(load(path))`` row for row. Peak memory
follows the share: at 10^6 messages (540 MB), two shares peak at 0.8 GiB and
three at 0.6 GiB, where the whole file takes 1.3 GiB; each share costs a read of
the chunks holding its lines (sessions are dealt in the order they start, so mostly
its own stretch of the file, which is mapped rather than read: see
:mod:`mcptrace.loaders.partition`) and a lint's fixed cost again (about 0.1 s), so a
capture is cut into as few shares as keep the peak under 1 GiB. The number
of shares is chosen from the file's size *and* lines (:func:`shares_for`): a
capture of small messages holds more rows a byte, and rows cost memory too.
"""

from __future__ import annotations

import gc
import itertools
import math
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from mcptrace.errors import CaptureError
from mcptrace.linter.engine import lint, merge_findings
from mcptrace.loaders import accel, detect, detect_file
from mcptrace.loaders.base import LoadContext
from mcptrace.loaders.reader import Content, gunzip_into, is_gzip
from mcptrace.schema import FINDINGS, MESSAGES, SOURCES
from mcptrace.trace import Trace, _coalesced, _with_ordinals, load, unordered_sessions_of

if TYPE_CHECKING:
    from mcptrace.loaders.partition import SharePlan

#: files smaller than this are linted whole: they fit in well under 1 GiB
MIN_SHARED_BYTES = 64 << 20
#: what linting a share holds at its peak, fitted on the peaks of generated captures of
#: 540 bytes a line (10^6 lines in two shares: 0.88 GiB, in three: 0.68 GiB) and 115
#: bytes a line (2*10^6 lines in three shares: 0.92 GiB): ~0.56 MiB a MB of text plus
#: ~0.92 MiB a thousand rows (the table, the calls and the rules' columns), over ~0.28
#: GiB of runtime and share plan. (Measured at 9a0379a; shares now peak lower, at 0.78-0.82
#: and 0.57 GiB for the first capture, so the fit errs on the safe side.)
MIB_PER_MB, MIB_PER_KILOROW = 0.56, 0.92
#: what a share may cost by that estimate: the peak stays under ~0.9 GiB (the 10^6-message
#: capture takes two shares, 0.6 s sooner than three; the short-message one four, 0.70 GiB)
SHARE_BUDGET_MIB = 640
#: JSON captures seldom compress more than this: a smaller gzip file is loaded whole
MAX_GZIP_RATIO = 16
#: how much of a gzip file's start is decompressed to tell its format
_HEAD_BYTES = 1 << 20


@dataclass(frozen=True)
class FileLint:
    """The findings of a capture file linted in shares."""

    findings: pl.DataFrame
    #: ``ordinal`` and ``raw`` of the messages the findings point at (what reporters read)
    messages: pl.DataFrame
    shares: int
    #: rows of the file, as loading it whole gives them
    rows: int = 0
    #: sessions known only from call-level records (see :attr:`Trace.call_only_sessions`)
    call_only_sessions: tuple[str, ...] = ()


def shares_for(size: int, lines: int) -> int:
    """How many shares a capture of ``size`` bytes and ``lines`` lines is linted in by
    default: as many as keep each share within :data:`SHARE_BUDGET_MIB`. Rows count as
    much as bytes: a capture of small messages needs more shares than its size says."""
    need = MIB_PER_MB * size / 1e6 + MIB_PER_KILOROW * lines / 1e3
    return max(1, math.ceil(need / SHARE_BUDGET_MIB))


@dataclass(frozen=True)
class _Member:
    """One file of what is linted in shares, with the plan of its lines."""

    #: the uncompressed file the plan reads
    plan: SharePlan
    #: names the rows' ``source`` (the file as given, when the plan reads its copy)
    ctx: LoadContext
    size: int


def _share_trace(parts: list[tuple[_Member, pl.DataFrame]]) -> Trace:
    """The trace of one share: its rows of each file, numbered one file after another as
    :func:`mcptrace.load` numbers them."""
    frames, before = [], 0
    for _, rows in parts:
        frames.append(_with_ordinals(rows, before))
        before += rows.height
    messages = MESSAGES.conform(pl.concat(_coalesced(frames), how="vertical"))
    sources = SOURCES.from_columns(
        {
            "source": [m.ctx.source for m, _ in parts],
            "format": ["capture"] * len(parts),
            "detected": ["content"] * len(parts),
            "status": ["ok"] * len(parts),
            "error": [None] * len(parts),
            "bytes": [m.size for m, _ in parts],
            "lines": [m.plan.lines for m, _ in parts],
            "rows": [rows.height for _, rows in parts],
            "invalid": [int((rows["kind"] == "invalid").sum()) for _, rows in parts],
            "truncated": [False] * len(parts),
            "note": [None] * len(parts),
        }
    )
    unordered = unordered_sessions_of(messages)
    return Trace(messages=messages, sources=sources, unordered_sessions=frozenset(unordered))


@dataclass(frozen=True)
class LintOptions:
    select: Iterable[str] | None
    ignore: Iterable[str] | None
    revision: str | None
    schema_dir: str | Path | None
    allowed_origins: Iterable[str] | None = None


@dataclass(frozen=True)
class _ShareLint:
    #: findings with ``_offset``: their message's place among the rows of its line
    findings: pl.DataFrame
    #: source, line, _offset and raw of the messages the findings point at
    messages: pl.DataFrame
    #: by file: its rows in the share
    rows: list[int]
    #: by file: the line of each of its rows in the share that is not its line's first
    #: (the elements of a batch after the first), sorted
    later_rows: list[pl.Series]


def _lint_share(
    members: list[_Member], share: int, options: LintOptions, *, keep_blocks: bool = False
) -> _ShareLint | None:
    """Load and lint one share. With ``keep_blocks``, the scanner keeps the share's
    blocks (its text read, its columns) as they are dropped (as this returns) for the
    next share's load to fill (:func:`~mcptrace.loaders.accel.keep_freed`; the caller
    turns that off again)."""
    from mcptrace.loaders.partition import PlanMismatch, load_share, still_as_planned

    cuts = accel.cut_faults()
    parts = [(m, load_share(m.plan, share, m.ctx)) for m in members]
    # what the previous share left for this load and it did not take: held through the
    # lint, it would only add to the peak
    accel.drop_kept()
    # A line's rows are one, or a batch's elements numbered from 0 by batch_index: a
    # row's place among its line's is its batch_index, and the rows before a line are
    # the lines before it plus their batch elements after the first. (So no count per
    # line of the file is kept: the rows of each file are checked against that instead.)
    later_rows = []
    for m, rows in parts:
        later = rows.filter(pl.col("batch_index") >= 1)["line"].sort()
        if rows.height != m.plan.share.count(share) + later.len():
            raise PlanMismatch("a line of the share gave no row, or rows other than a batch's")
        later_rows.append(later)
    counted = [rows.height for _, rows in parts]
    parts = [(m, rows) for m, rows in parts if not rows.is_empty()]
    if not parts:
        return None
    trace = _share_trace(parts)
    del parts
    messages = trace.messages
    findings = lint(
        trace,
        select=options.select,
        ignore=options.ignore,
        revision=options.revision,
        schema_dir=options.schema_dir,
        allowed_origins=options.allowed_origins,
    )
    if accel.cut_faults() != cuts or not all(still_as_planned(m.plan) for m in members):
        # the share's text is the file's pages (see partition.load_share): the file
        # changed while they were linted, so they may not hold what was loaded
        raise PlanMismatch("the file changed while a share of it was linted")
    batch_index = messages["batch_index"]

    def offset(frame: pl.DataFrame) -> pl.Series:
        # (a share's ordinals are its rows' positions)
        ordinal = frame["ordinal"]
        place = batch_index.gather(ordinal).fill_null(0)
        return pl.select(pl.when(pl.lit(ordinal).is_not_null()).then(pl.lit(place))).to_series()

    located = findings.with_columns(offset(findings).alias("_offset"))
    pointed = messages.select("source", "line", "raw", "ordinal").gather(
        findings["ordinal"].drop_nulls().unique().sort()
    )
    pointed = pointed.select("source", "line", "raw", offset(pointed).alias("_offset"))
    done = _ShareLint(_detached(located), _detached(pointed), counted, later_rows)
    if keep_blocks:
        accel.keep_freed(True)
    return done


def _detached(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its text in buffers of its own. A filtered or gathered text column
    still points into the buffers it came from, here the share's whole capture text."""
    text = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    frame = frame.with_columns(pl.concat_str(pl.col(name), pl.lit("")).alias(name) for name in text)
    if "related" not in frame.columns:
        return frame
    named = pl.element().struct
    return frame.with_columns(
        pl.col("related").list.eval(
            pl.struct(
                source=pl.concat_str(named.field("source"), pl.lit("")), line=named.field("line")
            )
        )
    )


@dataclass(frozen=True)
class _SharesLint:
    """What linting files in shares found, numbered as loading them all numbers rows."""

    findings: pl.DataFrame
    #: ordinal, raw and source of the messages the findings point at
    messages: pl.DataFrame
    #: rows of each file
    rows: list[int]
    shares: int


def _lint_members(
    members: list[_Member],
    shares: int,
    options: LintOptions,
    progress: Callable[[int, int], None] | None,
) -> _SharesLint:
    """Lint ``members`` (their plans dealt into ``shares`` shares) a share at a time.
    Raises :class:`~mcptrace.loaders.partition.PlanMismatch` when a file is not as
    planned."""
    rows = [0] * len(members)
    later_rows: list[list[pl.Series]] = [[] for _ in members]
    found: list[pl.DataFrame] = []
    pointed: list[pl.DataFrame] = []
    # The collector runs between shares (below). Objects older than the first share
    # (modules, mostly) are set aside while it does, unless the caller froze some
    # itself: walking them made each collection ~25 ms, ~3 ms without them.
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    try:
        for share in range(shares):
            if progress is not None:
                progress(share, shares)
            more = share + 1 < shares
            # the scanner's blocks of every share but the last are kept for the next
            # one's load as the share is dropped: fresh pages cost the kernel several
            # times what fills them (see accel.keep_freed)
            done = _lint_share(members, share, options, keep_blocks=more)
            if more:
                # the share's frames are dropped before the next is loaded: any that
                # lint left in reference cycles only the collector frees (not after
                # the last share, whose memory no later share needs)
                gc.collect()
                accel.keep_freed(False)
            if done is None:
                continue
            for i, (counted, later) in enumerate(zip(done.rows, done.later_rows, strict=True)):
                rows[i] += counted
                later_rows[i].append(later)
            if not done.findings.is_empty():
                found.append(done.findings)
                pointed.append(done.messages)
    finally:
        accel.keep_freed(False)
        accel.drop_kept()
        if freeze:
            gc.unfreeze()
    # the ordinal of a row in the whole load: the lines before its line (in the files
    # before its file too), the rows before its line that are not their line's first,
    # and its place among its line's rows. Those rows are found by their file and line,
    # as one sorted key (file << 32 | line)
    later = pl.concat(
        [
            pl.concat(parts, rechunk=False).cast(pl.Int64) + (i << 32)
            for i, parts in enumerate(later_rows)
            if parts
        ]
        or [pl.Series([], dtype=pl.Int64)]
    ).sort()
    lines_before = list(itertools.accumulate([0, *[m.plan.lines for m in members[:-1]]]))
    base_of = pl.DataFrame(
        {
            "source": [m.ctx.source for m in members],
            "_file": list(range(len(members))),
            "_lines_before": lines_before,
        },
        schema={"source": pl.String, "_file": pl.Int64, "_lines_before": pl.Int64},
    )

    def place(frame: pl.DataFrame) -> pl.DataFrame:
        based = frame.join(base_of, on="source", how="left", maintain_order="left")
        key = based["_file"] * (1 << 32) + based["line"]
        before = later.search_sorted(key, side="left").cast(pl.Int64)
        return based.with_columns(
            ordinal=pl.col("_lines_before")
            + pl.col("line")
            - 1
            + pl.lit(before)
            + pl.col("_offset")
        ).drop("_offset", "_file", "_lines_before")

    findings = merge_findings(place(f) for f in found)
    messages = (
        pl.concat([place(p) for p in pointed]).select("ordinal", "raw", "source")
        if pointed
        else pl.DataFrame(schema={"ordinal": pl.Int64, "raw": pl.String, "source": pl.String})
    )
    return _SharesLint(FINDINGS.conform(findings), messages, rows, shares)


def lint_in_shares(
    path: str | os.PathLike[str],
    *,
    shares: int | None = None,
    format: str | None = None,
    tz: str | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    revision: str | None = None,
    schema_dir: str | Path | None = None,
    allowed_origins: Iterable[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> FileLint | None:
    """Lint one capture file a share of its sessions at a time (``shares`` of them, by
    default :func:`shares_for` its size and lines, for files of :data:`MIN_SHARED_BYTES`
    or more); the options are :func:`~mcptrace.linter.lint`'s.
    ``progress(share, shares)`` is called before each share is loaded.

    A gzip-compressed capture is first decompressed, a chunk at a time, into a
    temporary file (in ``TMPDIR``, removed afterwards): memory then stays bounded as for
    an uncompressed one, where loading it whole needs its decompressed size and more.

    None when the file is not linted this way, and should be loaded whole: it is not a
    file in the mcptrace capture format, reading it drew a warning (a byte order mark,
    a cut or corrupt gzip stream), one share would do, the C scanner is not built, or a
    line's session could not be told before loading it (see
    :mod:`mcptrace.loaders.partition`).
    """
    source = os.fspath(path)
    if not Path(source).is_file():
        return None
    options = LintOptions(select, ignore, revision, schema_dir, allowed_origins)

    def in_shares(readable: str) -> FileLint | None:
        return lint_copy_in_shares(
            readable,
            source,
            shares=shares,
            format=format,
            tz=tz,
            options=options,
            progress=progress,
        )

    try:
        compressed = is_gzip(source)
    except OSError:
        return None
    if not compressed:
        return in_shares(source)
    if shares is None and Path(source).stat().st_size < MIN_SHARED_BYTES // MAX_GZIP_RATIO:
        return None  # small enough to load whole, however well it was compressed
    if not looks_like_a_capture(source, format):
        return None  # not worth decompressing to disk: it is loaded whole
    with tempfile.TemporaryDirectory(prefix="mcptrace-") as folder:
        plain = Path(folder) / Path(source).name.removesuffix(".gz")
        try:
            with open(source, "rb") as packed, open(plain, "wb") as out:
                written, warning = gunzip_into(packed.read, out.write)
        except OSError:
            return None
        if warning is not None or not written:
            return None  # loaded whole, which keeps the warning
        return in_shares(str(plain))


def looks_like_a_capture(source: str, format: str | None) -> bool:
    """Whether the start of the gzip file ``source`` reads as an mcptrace capture (or
    ``format`` says it is one)."""
    if format is not None:
        return format == "capture"
    try:
        with open(source, "rb") as f:
            head = zlib.decompressobj(wbits=47).decompress(f.read(_HEAD_BYTES), _HEAD_BYTES)
    except (OSError, zlib.error):
        return False
    # whole lines only: a cut last line would not read as JSON
    head = head[: head.rfind(b"\n") + 1] or head
    try:
        return detect(Content(source=source, data=head, compressed=True)) == "capture"
    except CaptureError:
        return False


def lint_copy_in_shares(
    readable: str,
    source: str,
    *,
    shares: int | None,
    format: str | None,
    tz: str | None,
    options: LintOptions,
    progress: Callable[[int, int], None] | None,
    planned: SharePlan | None = None,
) -> FileLint | None:
    """:func:`lint_in_shares` of the uncompressed file ``readable``, whose rows and findings
    name ``source`` (the file as given, when ``readable`` is its decompressed copy, or
    ``readable`` itself). ``planned`` is its plan from an earlier light pass (with any
    number of shares: they are dealt anew), which spares another."""
    try:
        size = Path(readable).stat().st_size
    except OSError:
        return None
    whole = (shares is None and size < MIN_SHARED_BYTES) or (shares is not None and shares < 2)
    if whole and format is None:
        # not detected here: loading it whole detects its format (reading up to 64 MiB)
        # anew. (A format given is checked first, so that an unknown one raises.)
        return None
    try:
        # keep=0: only the start that decides the format is read (no text is kept)
        name, content = detect_file(readable, format=format, keep=0)
    except CaptureError:
        return None
    if whole or name != "capture" or not content.as_on_disk or content.bom or content.warnings:
        return None
    del content
    ctx = LoadContext(source=source, tz=tz)
    # imported here: it brings NumPy, which a capture too small to share, the usual
    # case, would pay for at start
    from mcptrace.loaders.partition import PlanMismatch, deal, plan

    share_plan = (
        deal([planned], shares if shares is not None else shares_for(size, planned.lines))[0]
        if planned is not None
        else plan(
            readable,
            shares if shares is not None else (lambda lines: shares_for(size, lines)),
            ctx,
            quick=True,
        )
    )
    if share_plan is None or share_plan.shares < 2:
        return None

    def lint_by(share_plan: SharePlan) -> _SharesLint:
        return _lint_members([_Member(share_plan, ctx, size)], share_plan.shares, options, progress)

    try:
        done = lint_by(share_plan)
    except PlanMismatch:
        # a line the quick pass trusted is not whole, or names its session twice: the
        # exact pass reads such lines as the loader does
        exact = plan(readable, share_plan.shares, ctx) if share_plan.quick else None
        if exact is None:
            return None
        try:
            done = lint_by(exact)
        except PlanMismatch:
            return None
    return FileLint(
        findings=done.findings,
        messages=done.messages.select("ordinal", "raw"),
        shares=done.shares,
        rows=done.rows[0],
    )


def lint_group_in_shares(
    files: Sequence[str],
    *,
    readable: Sequence[str] | None = None,
    shares: int | None = None,
    tz: str | None = None,
    options: LintOptions,
    progress: Callable[[int, int], None] | None = None,
    planned: Sequence[SharePlan] | None = None,
) -> _SharesLint | None:
    """Lint several capture files whose sessions cross from one to another (a log rotated
    in the middle of its sessions) a share of their sessions at a time, as one file is
    linted in shares: each session whole in one share, wherever its lines are.
    ``readable`` are the files' uncompressed copies, when some are compressed (rows are
    named by ``files``). ``shares`` is how many (default: :func:`shares_for` their size
    and lines); ``progress(share, shares)`` is called before each share is loaded.
    ``planned`` are their plans from an earlier light pass, which spares another.

    The files (or their copies) must be uncompressed mcptrace captures without a byte
    order mark or a warning, as :func:`~mcptrace.linter.groups.file_groups` checks. The
    result numbers rows as loading the files together, in this order, does. None when
    they should be loaded together instead: less than :data:`MIN_SHARED_BYTES` in all,
    one share would do, a file listed twice, the C scanner not built, or a file not as
    planned."""
    if len(set(files)) != len(files):
        return None  # the whole load reads it twice, with a row for each time
    paths = list(readable) if readable is not None else list(files)
    try:
        sizes = [Path(f).stat().st_size for f in paths]
    except OSError:
        return None
    if (shares is None and sum(sizes) < MIN_SHARED_BYTES) or (shares is not None and shares < 2):
        return None
    from mcptrace.loaders.partition import PlanMismatch, deal, plan

    contexts = [LoadContext(source=f, tz=tz) for f in files]
    plans = (
        list(planned)
        if planned is not None
        else [plan(f, 1, ctx) for f, ctx in zip(paths, contexts, strict=True)]
    )
    if any(p is None for p in plans):
        return None
    planned = [p for p in plans if p is not None]
    count = shares if shares is not None else shares_for(sum(sizes), sum(p.lines for p in planned))
    if count < 2:
        return None
    members = [
        _Member(p, ctx, size)
        for p, ctx, size in zip(deal(planned, count), contexts, sizes, strict=True)
    ]
    try:
        return _lint_members(members, members[0].plan.shares, options, progress)
    except PlanMismatch:
        return None


def lint_file(
    path: str | os.PathLike[str],
    *,
    shares: int | None = None,
    format: str | None = None,
    tz: str | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    revision: str | None = None,
    schema_dir: str | Path | None = None,
    allowed_origins: Iterable[str] | None = None,
) -> pl.DataFrame:
    """The findings of one capture file, equal to ``lint(load(path))``: linted a share of
    its sessions at a time when it is a big mcptrace capture (bounded memory), else
    loaded whole. ``path`` may also be a directory: its capture files are then linted a
    group of files that share sessions at a time (:mod:`mcptrace.linter.groups`), each
    big group in ``shares`` shares. ``shares=1`` loads the inputs whole."""
    chosen: dict[str, Any] = {
        "select": select,
        "ignore": ignore,
        "revision": revision,
        "schema_dir": schema_dir,
        "allowed_origins": allowed_origins,
    }
    done = lint_in_shares(path, shares=shares, format=format, tz=tz, **chosen)
    if done is None and shares != 1 and format in (None, "capture") and Path(path).is_dir():
        from mcptrace.linter.groups import lint_in_groups

        done = lint_in_groups(path, shares=shares, tz=tz, **chosen)
    if done is not None:
        return done.findings
    return lint(load(path, format=format, tz=tz), **chosen)


__all__ = [
    "MAX_GZIP_RATIO",
    "MIN_SHARED_BYTES",
    "SHARE_BUDGET_MIB",
    "FileLint",
    "LintOptions",
    "lint_copy_in_shares",
    "lint_file",
    "lint_group_in_shares",
    "lint_in_shares",
    "looks_like_a_capture",
    "shares_for",
]
