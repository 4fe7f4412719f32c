"""A big capture file loaded a share of its sessions at a time.

Why: linting holds the messages table and the frames the rules build, about
1.5 GiB at 10^6 messages. No rule relates two sessions, so a capture can be
linted share by share: its sessions are dealt into ``shares`` groups of about
equal size, and each group is loaded (and linted) alone. Peak memory then
follows the share, not the file.

Two passes over the file:

1. :func:`plan` finds each line's session with the C scanner's light pass
   (``sessions`` in ``_scan.c``), which follows the structure of a line without
   reading its values; the lines it is unsure about are read with orjson, as the
   loader reads them. Lines without a session of their own (invalid lines, blank
   lines) are given the session around them, exactly as
   :func:`~mcptrace.loaders.rows.fill_context` gives it to their rows, so every
   line's share is known before anything is loaded.
2. :func:`load_share` scans only the lines of one share (the scanner skips the
   others and keeps only the text of its own), numbers the rows from 0 and fills
   the missing sessions from the plan. Stretches of the file whose lines are all
   the share's are mapped, not read: the share's text is then the file's pages
   for as long as the share is loaded and linted. A page cut from the file
   meanwhile reads as zeros instead of killing the process (see ``map`` in
   ``_scan.c``); :func:`load_share`, and the lint after it, see the cut and raise
   :class:`PlanMismatch`.

The light pass does not validate values: a line it reads a session from that the
loader then rejects (invalid UTF-8 inside the message, say) would put the plan
out of step with the rows. :func:`load_share` checks every row against the plan
and raises :class:`PlanMismatch`; callers then load the file whole. A *quick*
plan also trusts a line that looks whole (it has its newline and ends in a
brace) to name its session once, before its message, which it then does not
follow through (a third of the pass's time); a caller whose quick plan fails
plans again without that trust before it gives up on shares.
"""

from __future__ import annotations

import itertools
import mmap
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace

import polars as pl

from mcptrace import _json
from mcptrace.loaders import accel, capture
from mcptrace.loaders.base import LoadContext
from mcptrace.loaders.chunked import (
    CHUNK_BYTES,
    ChunkedLoader,
    Span,
    _scanner_chunk_bytes,
    boundaries_of_file,
    join,
    workers,
)
from mcptrace.loaders.reader import split_lines
from mcptrace.loaders.rows import fill_servers

#: states of a line in the light pass (see ``sessions`` in ``_scan.c``)
_NONE, _OWN, _UNSURE = 0, 1, 2
#: with more sessions than this, shares are dealt by hash rather than balanced by size
_BALANCE_MAX_SESSIONS = 20_000
#: sessions are dealt in the order they start when none is bigger than this share of
#: an equal cut: no share then exceeds the equal cut by more than that
_CONTIGUOUS_SLACK = 0.1
MAX_SHARES = 255


class PlanMismatch(Exception):
    """A row's session is not the one the plan gave its line."""


@dataclass(frozen=True)
class SharePlan:
    """Which share each line of a capture file belongs to.

    Columns (and bytes) are indexed by line number - 1. They are Polars columns, not
    NumPy arrays: the lint in shares would otherwise import NumPy (~0.04 s), whose BLAS
    threads then spin for a while on the cores the lint uses."""

    source: str
    spans: list[Span]
    #: the first line number of each span
    first_lines: list[int]
    #: lines in each span
    line_counts: list[int]
    #: _NONE or _OWN: whether the line names its own session (UInt8)
    states: pl.Series
    #: hash of the line's own session, 0 when it has none (UInt64)
    own: pl.Series
    #: hash of the session the line's rows end up in (UInt64)
    session: pl.Series
    #: the share of each line, a byte a line (what the scanner selects lines by)
    share: bytes
    shares: int
    #: the file's size and modification time when it was planned
    stamp: tuple[int, int]
    #: planned by the quick light pass (see the module docstring)
    quick: bool = False

    @property
    def lines(self) -> int:
        return len(self.share)

    def share_sizes(self) -> list[int]:
        """Lines in each share."""
        return [self.share.count(share) for share in range(self.shares)]


def own_session(line: bytes) -> str | None:
    """The session a capture line's rows get from the line itself, as the loader reads
    it: the ``session`` member (JSON text when it is not a string), or None for a line
    that is not a capture record or has no session."""
    try:
        rec = _json.loads(line)
    except _json.JSONDecodeError:
        return None
    if type(rec) is not dict or "msg" not in rec:
        return None
    session = rec.get("session")
    if session is None:
        return None
    return session if type(session) is str else _json.dumps(session)


#: the light pass reads a span this much at a time (more when a line is longer): a block
#: read into a small buffer is still in the cache when the pass reads it, where a whole
#: span went to memory and back (a quarter less CPU), and the buffer costs no fresh pages
_PLAN_BLOCK = 1 << 20


def _line_sessions(path: str, span: Span, quick: bool = False) -> tuple[bytes, bytes]:
    """States (a byte a line) and own-session hashes (8 bytes a line) of a span's lines,
    the unsure ones decided (by the quick light pass: see the module docstring). Raises
    ``ValueError`` when the file ends before the span does (it was cut)."""
    states: list[bytes] = []
    hashes: list[bytes] = []
    buffer = bytearray(_PLAN_BLOCK)
    held = 0  # bytes of a line begun in the previous block, at the buffer's start
    at = span.start
    with open(path, "rb") as f:
        f.seek(at)
        while at < span.end or held:
            if held == len(buffer):  # a line longer than the buffer: make room
                buffer.extend(bytes(len(buffer)))
            want = min(len(buffer) - held, span.end - at)
            with memoryview(buffer) as whole:
                got = f.readinto(whole[held : held + want]) if want else 0
                if got != want:
                    raise ValueError(f"read {got} of {want} bytes at offset {at}: the file was cut")
                at += got
                filled = held + got
                # whole lines only, but for the span's end (the file's last line may
                # have no newline)
                end = filled if at >= span.end else buffer.rfind(b"\n", 0, filled) + 1
                if end == 0:
                    held = filled  # no newline yet: read on
                    continue
                with whole[:end] as lines:
                    block_states, block_hashes = accel.sessions(lines, quick)
                    if _UNSURE in block_states:
                        block_states, block_hashes = _decided(
                            bytes(lines), block_states, block_hashes
                        )
                states.append(block_states)
                hashes.append(block_hashes)
                held = filled - end
                whole[:held] = buffer[end:filled]  # a copy: the two may overlap
    return b"".join(states), b"".join(hashes)


def _decided(data: bytes, raw_states: bytes, raw_hashes: bytes) -> tuple[bytes, bytes]:
    """The light pass's states and hashes of ``data``'s lines with the unsure lines read
    as the loader reads them."""
    states, hashes = bytearray(raw_states), bytearray(raw_hashes)
    lines = split_lines(data)
    with memoryview(hashes) as raw, raw.cast("Q") as slots:
        i = states.find(_UNSURE)
        while i >= 0:
            session = own_session(lines[i])
            states[i] = _NONE if session is None else _OWN
            slots[i] = 0 if session is None else accel.session_hash(session)
            i = states.find(_UNSURE, i + 1)
    return bytes(states), bytes(hashes)


def _deal(session: pl.Series, shares: int) -> pl.Series:
    """The share of each line: whole sessions, each share about as many lines.

    Sessions of a capture mostly live in one stretch of the file. Dealt in the order
    they start, each share's lines then sit in a stretch of their own, and loading a
    share skips most of the file's chunks unread (:func:`load_share`). A share gets at
    most one session's lines more than an equal cut; where a session is too big for
    that to be small, the sessions are dealt largest first, each to the share with
    the fewest lines so far (or by hash when there are too many to deal one by one).
    """
    lines = session.alias("h")
    sizes = (
        lines.to_frame()
        .with_row_index("first")
        .group_by("h")
        .agg(pl.col("first").first(), n=pl.len())
        .sort("first")
    )
    total = len(session)
    if total == 0:
        return pl.Series("share", [], dtype=pl.UInt8)
    largest: int = sizes.select(pl.col("n").max()).item()
    if largest * shares <= total * _CONTIGUOUS_SLACK:
        before = sizes["n"].cum_sum() - sizes["n"]
        share_of = (before.cast(pl.UInt64) * shares // total).cast(pl.UInt8)
        return lines.replace_strict(sizes["h"], share_of, return_dtype=pl.UInt8)
    sizes = sizes.sort("n", "h", descending=[True, False])
    if sizes.height > _BALANCE_MAX_SESSIONS:
        return (lines % shares).cast(pl.UInt8)
    share_of_list: list[int] = []
    load = [0] * shares
    for n in sizes["n"]:
        target = load.index(min(load))
        share_of_list.append(target)
        load[target] += n
    return lines.replace_strict(sizes["h"], share_of_list, return_dtype=pl.UInt8)


def plan(
    path: str, shares: int | Callable[[int], int], ctx: LoadContext, *, quick: bool = False
) -> SharePlan | None:
    """Deal the sessions of an uncompressed capture file (without a byte order mark)
    into ``shares`` shares (or as many as ``shares(lines)`` says, once the lines are
    counted), by the ``quick`` light pass or the exact one (see the module docstring);
    None without the C scanner (the light pass is in C)."""
    if not accel.available():
        return None
    try:
        stamp = _stamp(path)
        spans = boundaries_of_file(path, CHUNK_BYTES)
        with ThreadPoolExecutor(max_workers=max(1, min(workers(), len(spans)))) as pool:
            parts = list(pool.map(lambda span: _line_sessions(path, span, quick), spans))
        if _stamp(path) != stamp:
            return None  # written to while it was read: load it whole, as it is now
    except (OSError, ValueError):  # gone, or cut shorter than its spans
        return None
    counts = [len(states) for states, _ in parts]
    wanted = shares(sum(counts)) if callable(shares) else shares
    shares = max(1, min(wanted, MAX_SHARES))
    first_lines = list(itertools.accumulate([1, *counts[:-1]])) if counts else []
    states = accel.numbers(b"".join(s for s, _ in parts), 1)
    own = accel.numbers(b"".join(h for _, h in parts), 8)
    # fill_context: forward fill, then backward fill, then the file's default session
    has_own = states == _OWN
    if has_own.any():
        session = pl.select(
            pl.when(pl.lit(has_own)).then(pl.lit(own)).forward_fill().backward_fill()
        ).to_series()
    else:
        session = pl.repeat(accel.session_hash(ctx.stem), len(states), dtype=pl.UInt64, eager=True)
    return SharePlan(
        source=path,
        spans=spans,
        first_lines=first_lines,
        line_counts=counts,
        states=states,
        own=own,
        session=session,
        share=accel.bytes_of(_deal(session, shares)),
        shares=shares,
        stamp=stamp,
        quick=quick,
    )


def deal(plans: Sequence[SharePlan], shares: int) -> list[SharePlan]:
    """The plans of several files dealt together into ``shares`` shares: the lines of a
    session that crosses from one file to the next go to one share, whichever file they
    are in. Sessions are told apart by name hash, as within one file: files naming the
    same session (or, for their lines without one, with the same file name) share it,
    as when they are loaded together."""
    shares = max(1, min(shares, MAX_SHARES))
    dealt = accel.bytes_of(_deal(pl.concat([p.session for p in plans]), shares))
    out, at = [], 0
    for p in plans:
        out.append(replace(p, share=dealt[at : at + p.lines], shares=shares))
        at += p.lines
    return out


def _stamp(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


def still_as_planned(share_plan: SharePlan) -> bool:
    """Whether the planned file still has the size and modification time it was planned
    with (False when it is gone)."""
    try:
        return _stamp(share_plan.source) == share_plan.stamp
    except OSError:
        return False


def _check_and_fill(df: pl.DataFrame, share_plan: SharePlan, ctx: LoadContext) -> pl.DataFrame:
    """The share's rows with the sessions the whole file would give them: each row's own
    session checked against the plan, the missing ones filled from it."""
    index = df["line"] - 1
    names = df["session"].drop_nulls().unique().to_list()
    hashes = [accel.session_hash(name) for name in names]
    if len(set(hashes)) != len(hashes):
        raise PlanMismatch("two sessions of the share have the same hash")
    row_hash = df.select(
        pl.col("session").replace_strict(names, hashes, default=0, return_dtype=pl.UInt64)
    ).to_series()
    has = df["session"].is_not_null()
    expected = share_plan.states.gather(index)
    ok = pl.select(
        pl.when(pl.lit(has))
        .then(
            (pl.lit(expected) == _OWN) & (pl.lit(row_hash) == pl.lit(share_plan.own.gather(index)))
        )
        .otherwise(pl.lit(expected) == _NONE)
    ).to_series()
    if not ok.all():
        line = int(df["line"][int(ok.not_().arg_true()[0])])
        raise PlanMismatch(f"line {line}: its session is not the one the light pass read")
    if has.all():
        return fill_servers(df)
    known = dict(zip(hashes, names, strict=True))
    known.setdefault(accel.session_hash(ctx.stem), ctx.stem)
    sessions = share_plan.session.gather(index)
    wanted = sessions.filter(has.not_()).unique().to_list()
    if any(h not in known for h in wanted):
        raise PlanMismatch("a row takes a session that has no row of its own in the share")
    filled = sessions.replace_strict(
        wanted, [known[h] for h in wanted], default=None, return_dtype=pl.String
    )
    return fill_servers(df.with_columns(session=pl.col("session").fill_null(filled)))


_buffers = threading.local()


@contextmanager
def _read(path: str, start: int, end: int) -> Iterator[memoryview]:
    """Bytes [start, end) of a file, read into a buffer this thread reuses: a share
    reads every line of the file to skip most of them, and fresh memory for each read
    cost more than the scan (the scanner copies the lines it keeps, so the buffer is
    free again once the scan returns). The buffer is anonymous mapped memory, so that
    it goes back to the system with its thread (freed to the heap, it stayed in the
    process: ~0.1 GiB more at the peak of a 10^6-message lint). A file cut shorter
    under the reader (a log truncated by its rotation, say) makes the read come back
    short, which raises ``ValueError``. (Mapping these runs would spare the read, but
    needs the SIGBUS guard of :func:`_read_whole`, for text the scanner copies anyway.)"""
    size = end - start
    buffer: mmap.mmap | None = getattr(_buffers, "buffer", None)
    if buffer is None or len(buffer) < size:
        if buffer is not None:
            buffer.close()
        buffer = _buffers.buffer = mmap.mmap(-1, size)
    with memoryview(buffer) as whole, whole[:size] as view:
        with open(path, "rb") as f:
            f.seek(start)
            got = f.readinto(view)
        if got != size:
            raise ValueError(f"read {got} of {size} bytes at offset {start}: the file was cut")
        yield view


def _read_whole(path: str, start: int, end: int) -> memoryview | None:
    """Bytes [start, end) of a file as text the scanner keeps without a copy: the file's
    pages mapped (:func:`~mcptrace.loaders.accel.map_file`: neither a copy nor fresh
    memory, ~0.1 s less a share at 10^6 messages) or else read into memory of their own
    (:func:`~mcptrace.loaders.accel.read`); None when the scanner can do neither.
    Raises ``ValueError`` when the file is cut shorter, as :func:`_read` does. A page
    cut from a mapped file later reads as zeros and counts in
    :func:`~mcptrace.loaders.accel.cut_faults`, which :func:`load_share` and the lint in
    shares check before they trust what they read."""
    with open(path, "rb") as f:
        data = accel.map_file(f.fileno(), start, end - start)
        if data is None:
            data = accel.read(f.fileno(), start, end - start)
    if data is not None and len(data) != end - start:
        raise ValueError(
            f"read {len(data)} of {end - start} bytes at offset {start}: the file was cut"
        )
    return data


def _reads(share_plan: SharePlan, share: int) -> list[tuple[range, bool]]:
    """The runs of the plan's spans that loading ``share`` reads, each with whether every
    line of it is the share's.

    A run whose lines are all the share's is read into memory the scanner keeps as the
    text its columns point into (no copy of the lines); a run that also holds other
    shares' lines is read into a buffer its thread reuses, and the scanner copies the
    share's lines out of it. Runs are cut where that changes, at spans without a line
    of the share (not read at all), and once they are as big as the whole load's
    chunks of the share's bytes would be (:func:`~mcptrace.loaders.chunked.load_path`):
    every query over the share's table crosses its chunks, and runs of ``shares``
    spans made 17 chunks a share at 10^6 messages, against 5 now (~0.1 CPU-s less).
    """
    if not share_plan.spans:
        return []
    # the share's lines in each span, and its bytes, estimated span by span by its part
    # of the span's lines
    mine = [
        share_plan.share.count(share, first - 1, first - 1 + count)
        for first, count in zip(share_plan.first_lines, share_plan.line_counts, strict=True)
    ]
    sizes = [span.end - span.start for span in share_plan.spans]
    totals = share_plan.line_counts
    target = _scanner_chunk_bytes(
        sum(size * n // total for size, n, total in zip(sizes, mine, totals, strict=True) if total)
    )
    runs: list[tuple[range, bool]] = []
    start, whole, read = -1, False, 0
    for i, (n, total, size) in enumerate(zip(mine, totals, sizes, strict=True)):
        if start >= 0 and (n == 0 or (n == total) != whole or read >= target):
            runs.append((range(start, i), whole))
            start = -1
        if n == 0:
            continue
        if start < 0:
            start, whole, read = i, n == total, 0
        read += size
    if start >= 0:
        runs.append((range(start, len(share_plan.spans)), whole))
    return runs


def load_share(share_plan: SharePlan, share: int, ctx: LoadContext) -> pl.DataFrame:
    """The messages of one share: its lines' rows, ordinals from 0 in line order, sessions
    as loading the whole file gives them. Raises :class:`PlanMismatch` when a row's
    session is not the plan's (see the module docstring)."""
    module: ChunkedLoader = sys.modules[capture.__name__]

    def parse(run: tuple[range, bool]) -> pl.DataFrame:
        spans, whole = run
        first = share_plan.first_lines[spans[0]]
        start, end = share_plan.spans[spans[0]].start, share_plan.spans[spans[-1]].end
        if whole:
            # every line is the share's (most runs, where sessions were dealt in the
            # order they start): read into memory the scanner keeps as the text its
            # columns point into, which spares copying the lines it keeps (~0.1 CPU-s
            # at 10^6 messages) and holds no more than that copy would
            data = _read_whole(share_plan.source, start, end)
            if data is not None:
                return capture.parse_chunk(data, first, ctx)
        count = sum(share_plan.line_counts[i] for i in spans)
        select = share_plan.share[first - 1 : first - 1 + count]
        with _read(share_plan.source, start, end) as data:
            return capture.parse_chunk(data, first, ctx, select=select, wanted=share)

    runs = _reads(share_plan, share)
    cuts = accel.cut_faults()
    try:
        if _stamp(share_plan.source) != share_plan.stamp:
            raise PlanMismatch("the file changed since its shares were planned")
        with ThreadPoolExecutor(max_workers=max(1, min(workers(), len(runs)))) as pool:
            frames = list(pool.map(parse, runs))
    except (OSError, ValueError) as exc:
        raise PlanMismatch(f"the file cannot be read as planned: {exc}") from exc
    if accel.cut_faults() != cuts:
        raise PlanMismatch("the file was cut while it was read")
    return join(module, frames, ctx, fill=lambda df: _check_and_fill(df, share_plan, ctx))


__all__ = [
    "MAX_SHARES",
    "PlanMismatch",
    "SharePlan",
    "deal",
    "load_share",
    "own_session",
    "plan",
    "still_as_planned",
]
