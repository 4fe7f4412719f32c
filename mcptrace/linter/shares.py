"""Linting a big capture file a share of its sessions at a time, in bounded memory.

A capture file's sessions are dealt into shares (:mod:`mcptrace.loaders.partition`);
each share is loaded, linted and dropped before the next. No rule relates two
sessions, so the findings are those of linting the whole file: the shares'
findings are joined and their ordinals (numbered within the share) turned into
the file's, so the result equals ``lint(load(path))`` row for row. Peak memory
follows the share: at 10^6 messages (540 MB), two shares peak at 0.9 GiB and
three at 0.7 GiB, where the whole file takes 1.5 GiB; each share costs a read of
the chunks holding its lines (sessions are dealt in the order they start, so mostly
its own stretch of the file) and the rules' fixed cost again (about 0.3 s), so a
capture is cut into as few shares as keep the peak under 1 GiB. The number
of shares is chosen from the file's size *and* lines (:func:`shares_for`): a
capture of small messages holds more rows a byte, and rows cost memory too.
"""

from __future__ import annotations

import gc
import math
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from mcptrace.errors import CaptureError
from mcptrace.linter.engine import lint, merge_findings
from mcptrace.loaders import detect, detect_file
from mcptrace.loaders.base import LoadContext
from mcptrace.loaders.reader import Content, gunzip_into, is_gzip
from mcptrace.schema import FINDINGS, MESSAGES, SOURCES
from mcptrace.trace import Trace, load

if TYPE_CHECKING:
    import numpy as np

    from mcptrace.loaders.partition import SharePlan

#: files smaller than this are linted whole: they fit in well under 1 GiB
MIN_SHARED_BYTES = 64 << 20
#: what linting a share holds at its peak, fitted on the peaks of generated captures of
#: 540 bytes a line (10^6 lines in two shares: 0.88 GiB, in three: 0.68 GiB) and 115
#: bytes a line (2*10^6 lines in three shares: 0.92 GiB): ~0.56 MiB a MB of text plus
#: ~0.92 MiB a thousand rows (the table, the calls and the rules' columns), over ~0.28
#: GiB of runtime and share plan
MIB_PER_MB, MIB_PER_KILOROW = 0.56, 0.92
#: what a share may cost by that estimate: the peak stays under ~0.9 GiB (the 10^6-message
#: capture takes two shares, 0.6 s sooner than three; the short-message one four, 0.70 GiB)
SHARE_BUDGET_MIB = 640
#: JSON captures seldom compress more than this: a smaller gzip file is loaded whole
_MAX_GZIP_RATIO = 16
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


def shares_for(size: int, lines: int) -> int:
    """How many shares a capture of ``size`` bytes and ``lines`` lines is linted in by
    default: as many as keep each share within :data:`SHARE_BUDGET_MIB`. Rows count as
    much as bytes: a capture of small messages needs more shares than its size says."""
    need = MIB_PER_MB * size / 1e6 + MIB_PER_KILOROW * lines / 1e3
    return max(1, math.ceil(need / SHARE_BUDGET_MIB))


def _share_trace(messages: pl.DataFrame, path: str, size: int, lines: int) -> Trace:
    sources = SOURCES.from_columns(
        {
            "source": [path],
            "format": ["capture"],
            "detected": ["content"],
            "status": ["ok"],
            "error": [None],
            "bytes": [size],
            "lines": [lines],
            "rows": [messages.height],
            "invalid": [int((messages["kind"] == "invalid").sum())],
            "truncated": [False],
            "note": [None],
        }
    )
    unordered = messages.filter(pl.col("unordered"))["session"].unique().to_list()
    return Trace(
        messages=MESSAGES.conform(messages),
        sources=sources,
        unordered_sessions=frozenset(unordered),
    )


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
    #: line, _offset and raw of the messages the findings point at
    messages: pl.DataFrame
    #: rows of each line of the file (0 for other shares' lines)
    rows_per_line: np.ndarray


def _lint_share(
    share_plan: SharePlan, share: int, ctx: LoadContext, size: int, options: LintOptions
) -> _ShareLint | None:
    import numpy as np

    from mcptrace.loaders.partition import load_share

    messages = load_share(share_plan, share, ctx)
    if messages.is_empty():
        return None
    rows_per_line = np.bincount(messages["line"].to_numpy(), minlength=share_plan.lines + 1)
    findings = lint(
        _share_trace(messages, ctx.source, size, share_plan.lines),
        select=options.select,
        ignore=options.ignore,
        revision=options.revision,
        schema_dir=options.schema_dir,
        allowed_origins=options.allowed_origins,
    )
    # where each finding's message sits among the rows of its line (a batch line has
    # several): the file's ordinal is the line's first plus that
    first = (
        messages.filter(pl.col("line").is_in(findings["line"].unique().implode()))
        .group_by("line")
        .agg(_first=pl.col("ordinal").min())
    )
    located = findings.join(first, on="line", how="left", maintain_order="left").with_columns(
        _offset=pl.col("ordinal") - pl.col("_first")
    )
    pointed = (
        messages.filter(pl.col("ordinal").is_in(findings["ordinal"].implode()))
        .join(first, on="line", how="left")
        .select("line", "raw", _offset=pl.col("ordinal") - pl.col("_first"))
    )
    return _ShareLint(_detached(located.drop("_first")), _detached(pointed), rows_per_line)


def _detached(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its text in buffers of its own. A filtered or gathered text column
    still points into the buffers it came from, here the share's whole capture text."""
    text = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    return frame.with_columns(pl.concat_str(pl.col(name), pl.lit("")).alias(name) for name in text)


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
        return _lint_capture(
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
    if shares is None and Path(source).stat().st_size < MIN_SHARED_BYTES // _MAX_GZIP_RATIO:
        return None  # small enough to load whole, however well it was compressed
    if not _looks_like_a_capture(source, format):
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


def _looks_like_a_capture(source: str, format: str | None) -> bool:
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


def _lint_capture(
    readable: str,
    source: str,
    *,
    shares: int | None,
    format: str | None,
    tz: str | None,
    options: LintOptions,
    progress: Callable[[int, int], None] | None,
) -> FileLint | None:
    """:func:`lint_in_shares` of the uncompressed file ``readable``, whose rows and findings
    name ``source`` (the file as given, when ``readable`` is its decompressed copy)."""
    try:
        name, content = detect_file(readable, format=format)
    except CaptureError:
        return None
    if name != "capture" or not content.as_on_disk or content.bom or content.warnings:
        return None
    del content  # the head read for detection (up to 64 MiB)
    size = Path(readable).stat().st_size
    if (shares is None and size < MIN_SHARED_BYTES) or (shares is not None and shares < 2):
        return None
    ctx = LoadContext(source=source, tz=tz)
    # imported here: they bring NumPy, which a capture too small to share, the usual
    # case, would pay for at start
    import numpy as np

    from mcptrace.loaders.partition import PlanMismatch, plan

    share_plan = plan(
        readable, shares if shares is not None else (lambda lines: shares_for(size, lines)), ctx
    )
    if share_plan is None or share_plan.shares < 2:
        return None
    rows_per_line = np.zeros(share_plan.lines + 1, dtype=np.int64)
    found: list[pl.DataFrame] = []
    pointed: list[pl.DataFrame] = []
    for share in range(share_plan.shares):
        if progress is not None:
            progress(share, share_plan.shares)
        try:
            done = _lint_share(share_plan, share, ctx, size, options)
        except PlanMismatch:
            return None
        # the share's frames are dropped before the next is loaded; lint keeps some in
        # reference cycles, which only the collector frees
        gc.collect()
        if done is None:
            continue
        rows_per_line += done.rows_per_line
        if not done.findings.is_empty():
            found.append(done.findings)
            pointed.append(done.messages)
    # ordinal of a line's first row in the whole file: the rows of the lines before it
    first_of_line = pl.Series(np.cumsum(rows_per_line) - rows_per_line, dtype=pl.Int64)

    def place(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.with_columns(
            ordinal=first_of_line.gather(frame["line"]) + frame["_offset"]
        ).drop("_offset")

    findings = merge_findings(place(f) for f in found)
    messages = (
        pl.concat([place(p) for p in pointed]).select("ordinal", "raw")
        if pointed
        else pl.DataFrame(schema={"ordinal": pl.Int64, "raw": pl.String})
    )
    return FileLint(
        findings=FINDINGS.conform(findings),
        messages=messages,
        shares=share_plan.shares,
        rows=int(rows_per_line.sum()),
    )


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
    group of files that share sessions at a time (:mod:`mcptrace.linter.groups`)."""
    chosen: dict[str, Any] = {
        "select": select,
        "ignore": ignore,
        "revision": revision,
        "schema_dir": schema_dir,
        "allowed_origins": allowed_origins,
    }
    done = lint_in_shares(path, shares=shares, format=format, tz=tz, **chosen)
    if done is None and shares is None and format in (None, "capture") and Path(path).is_dir():
        from mcptrace.linter.groups import lint_in_groups

        done = lint_in_groups(path, tz=tz, **chosen)
    if done is not None:
        return done.findings
    return lint(load(path, format=format, tz=tz), **chosen)


__all__ = [
    "MIN_SHARED_BYTES",
    "SHARE_BUDGET_MIB",
    "FileLint",
    "lint_file",
    "lint_in_shares",
    "shares_for",
]
