"""Linting several capture files a group of them at a time, in bounded memory.

``mcptrace lint DIR`` used to load every file of a directory into one table, so its
memory grew with the files' total size: ten 500 MB captures took some 14 GiB. No
rule relates two sessions, so files that share no session can be linted apart.
Each file's sessions are found with the C scanner's light pass (the one that plans
shares, :func:`mcptrace.loaders.partition.plan`); files that share a session (a log
rotated in the middle of its sessions, say) form one group. A big group is linted a
share of its sessions at a time (:mod:`mcptrace.linter.shares`), its sessions dealt
across its files when it has several; a small one is loaded and linted whole. Peak
memory then follows the biggest share, not the inputs' total size.

The findings are those of linting all the files loaded together, row for row: each
group's ordinals (numbered within the group) are turned into the ordinals the whole
load gives, which number the files' rows one file after another in the order the
files are read.

Files of other formats name their sessions from what their loader reads, which the
light pass does not know: they are loaded first, together, and the captures that
share a session with them join their group, which is loaded whole. Compressed
captures (a rotated log's older files) are first decompressed into a temporary
folder, which the light pass and the shares read; their rows keep their own names.
"""

from __future__ import annotations

import gc
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from mcptrace.errors import CaptureError
from mcptrace.inputs import PathLike, expand_inputs, input_list
from mcptrace.linter.engine import lint, merge_findings
from mcptrace.linter.shares import (
    MAX_GZIP_RATIO,
    MIN_SHARED_BYTES,
    FileLint,
    LintOptions,
    _detached,
    _SharesLint,
    lint_copy_in_shares,
    lint_group_in_shares,
    looks_like_a_capture,
)
from mcptrace.loaders import accel
from mcptrace.loaders.base import LoadContext
from mcptrace.loaders.chunked import workers
from mcptrace.loaders.reader import STDIN, gunzip_into, is_gzip
from mcptrace.schema import FINDINGS
from mcptrace.trace import Trace, load, plan_files

if TYPE_CHECKING:
    from mcptrace.loaders.partition import SharePlan


#: a plan costs 18 bytes a line and is held until its file's turn: the plans kept
#: for the shares are those of up to this many lines (36 MB), the others' files are
#: planned again at their turn (about 0.25 s for 540 MB)
KEPT_PLAN_LINES = 2_000_000


def file_groups(
    files: Sequence[str],
    tz: str | None = None,
    *,
    readable: Sequence[str] | None = None,
    joined: Mapping[int, Iterable[str]] | None = None,
    plans_out: dict[int, SharePlan] | None = None,
) -> list[list[int]] | None:
    """Indexes of ``files`` in groups that share no session, each group in file order,
    the groups in the order of their first file; None when the files cannot be grouped
    this way (not all uncompressed mcptrace captures or empty files, unreadable, or the
    C scanner is not built). An empty file (a log just rotated, say) is a group of its
    own: it has no rows, and no format to tell. ``readable`` are the files'
    uncompressed copies, when some of them are compressed. ``joined`` are files of
    other formats, with the sessions loading them gave: they are one group, with every
    capture that shares a session with any of them. ``plans_out`` receives the light
    pass's plans of the first files, up to :data:`KEPT_PLAN_LINES` lines in all, which
    spares the shares another light pass."""
    from mcptrace.loaders.partition import plan

    others = dict(joined) if joined is not None else {}
    paths = list(readable) if readable is not None else list(files)
    try:
        plans, failed = plan_files(paths)
    except CaptureError:
        return None
    if failed or len(plans) != len(files):
        return None
    for i, p in enumerate(plans):
        if i in others:
            continue  # loaded whole, by its own loader
        content = p.content
        if p.format != "capture" and not _empty(p.source):
            return None
        if not content.as_on_disk or content.bom or content.warnings:
            return None
    # union-find over files, joined by each session hash they share
    parent = list(range(len(files)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[int, int] = {}
    kept = 0

    def share(i: int, hashes: Iterable[int]) -> None:
        for h in hashes:
            j = owner.setdefault(int(h), i)
            if j != i:
                parent[root(i)] = root(j)

    if others:
        first = min(others)
        for i, sessions in others.items():
            parent[root(i)] = root(first)
            share(i, {accel.session_hash(name) for name in sessions})
    for i, path in enumerate(paths):
        if _empty(path) or i in others:
            continue
        # named as the file given: its name is the default session of its rows
        ctx = LoadContext(source=files[i], tz=tz)
        share_plan = plan(path, 1, ctx)
        if share_plan is None:
            return None
        if plans_out is not None and kept + share_plan.lines <= KEPT_PLAN_LINES:
            plans_out[i] = share_plan
            kept += share_plan.lines
        # the file's default session too: a file whose every line the loader rejected
        # would get it, though the light pass read sessions from those lines
        share(i, {*share_plan.session.to_list(), accel.session_hash(ctx.stem)})
    groups: dict[int, list[int]] = {}
    for i in range(len(files)):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def _empty(path: str) -> bool:
    try:
        return os.path.getsize(path) == 0
    except OSError:
        return False  # the load reports it


def lint_in_groups(
    paths: PathLike | Iterable[PathLike],
    *,
    shares: int | None = None,
    tz: str | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    revision: str | None = None,
    schema_dir: str | Path | None = None,
    allowed_origins: Iterable[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> FileLint | None:
    """Lint several capture files a group at a time (see the module docstring); the
    options are :func:`~mcptrace.linter.lint`'s. A group of
    :data:`~mcptrace.linter.shares.MIN_SHARED_BYTES` or more is linted in ``shares``
    shares (default: as many as keep the peak under 1 GiB; 1 loads the inputs whole);
    smaller ones are loaded whole. ``progress(path, share, shares)`` is called before
    each group (``path`` its first file) and each share of a big group.

    None when the inputs should be loaded whole: fewer than two files, standard input
    among them, less than :data:`~mcptrace.linter.shares.MIN_SHARED_BYTES` in all, a
    file that cannot be read, or files that form one group too small to cut into shares
    (nothing to gain)."""
    if shares == 1:
        return None
    inputs = expand_inputs(input_list(paths))
    if inputs.skipped:
        return None  # the whole load reports them
    files = inputs.files
    if len(files) < 2 or STDIN in files:
        return None  # standard input can be read only once: by the whole load
    if len(set(files)) != len(files):
        return None  # a file given twice: the whole load reads it twice
    try:
        packed = [is_gzip(f) for f in files]
        sizes = [os.path.getsize(f) for f in files]
    except OSError:
        return None
    # a gzip file may hold many times its size: told from its compressed size here,
    # from the decompressed one once it is decompressed
    if sum(n * (MAX_GZIP_RATIO if p else 1) for n, p in zip(sizes, packed, strict=True)) < (
        MIN_SHARED_BYTES
    ):
        return None
    # a compressed file of another format is read by its loader, not decompressed here
    packed = [p and looks_like_a_capture(f, None) for f, p in zip(files, packed, strict=True)]
    options = LintOptions(
        select=list(select) if select is not None else None,
        ignore=list(ignore) if ignore is not None else None,
        revision=revision,
        schema_dir=schema_dir,
        allowed_origins=list(allowed_origins) if allowed_origins is not None else None,
    )
    if not any(packed):
        return _lint_groups(files, files, shares, tz, options, progress)
    # compressed captures (a rotated log's older files, say) are decompressed into a
    # temporary folder, a chunk at a time, as lint_in_shares does for one: their light
    # pass and shares read them there
    with tempfile.TemporaryDirectory(prefix="mcptrace-") as folder:
        readable = _decompressed(files, packed, Path(folder))
        if readable is None:
            return None
        return _lint_groups(files, readable, shares, tz, options, progress)


def _decompressed(files: list[str], packed: list[bool], folder: Path) -> list[str] | None:
    """The files, each compressed one replaced by its copy decompressed into ``folder``;
    None when one cannot be read whole (its warning is the whole load's to report)."""

    def unpack(i: int) -> str | None:
        path = files[i]
        if not packed[i]:
            return path
        copy = folder / str(i) / Path(path).name.removesuffix(".gz")
        try:
            copy.parent.mkdir()
            with open(path, "rb") as source, open(copy, "wb") as target:
                written, warning = gunzip_into(source.read, target.write)
        except OSError:
            return None
        return str(copy) if warning is None and written else None

    # zlib lets go of the GIL while it inflates: one file per core
    with ThreadPoolExecutor(max_workers=max(1, min(workers(), sum(packed)))) as pool:
        out = list(pool.map(unpack, range(len(files))))
    if any(path is None for path in out):
        return None
    return [path for path in out if path is not None]


def _lint_groups(
    files: list[str],
    readable: list[str],
    shares: int | None,
    tz: str | None,
    options: LintOptions,
    progress: Callable[[str, int, int], None] | None,
) -> FileLint | None:
    """:func:`lint_in_groups` of ``files``, read from ``readable`` (their uncompressed
    copies, or themselves)."""
    try:
        total = sum(os.path.getsize(f) for f in readable)
        plans, failed = plan_files(readable)
    except (OSError, CaptureError):
        return None
    if total < MIN_SHARED_BYTES or failed or len(plans) != len(files):
        return None
    # files of other formats are loaded (together) first: their sessions tell which
    # captures go with them
    others = [i for i, p in enumerate(plans) if p.format != "capture" and not _empty(p.source)]
    del plans
    rest: Trace | None = None
    joined: dict[int, set[str]] = {}
    if others:
        rest = load([files[i] for i in others], tz=tz, among_others=True)
        if not rest.errors.is_empty():
            return None  # the whole load reports it
        names = {
            *rest.messages["session"].drop_nulls().unique().to_list(),
            *rest.call_records["session"].drop_nulls().unique().to_list(),
        }
        joined = dict.fromkeys(others, names)
    planned: dict[int, SharePlan] = {}
    groups = file_groups(files, tz, readable=readable, joined=joined, plans_out=planned)
    if groups is None:
        return None
    if others:
        # the group of the files loaded already goes first: they are not held meanwhile
        groups.sort(key=lambda group: group[0] not in joined)
    call_only: list[str] = []

    def told(path: str) -> Callable[[int, int], None]:
        def shares(share: int, total: int) -> None:
            if progress is not None:
                progress(path, share, total)

        return shares

    rows = [0] * len(files)
    found: list[pl.DataFrame] = []
    pointed: list[pl.DataFrame] = []
    for n, group in enumerate(groups):
        members = [files[i] for i in group]
        copies = [readable[i] for i in group]
        if progress is not None:
            progress(members[0], n, len(groups))
        try:
            size = sum(os.path.getsize(path) for path in copies)
        except OSError:
            return None
        if size == 0:
            continue  # an empty file: no rows, nothing to lint
        big = size >= MIN_SHARED_BYTES
        if any(i in joined for i in group):
            shared = None  # files of other formats: loaded whole
        elif len(members) == 1:
            # the number of shares asked for is for big groups: a small file is loaded whole
            done = lint_copy_in_shares(
                copies[0],
                members[0],
                shares=shares if big else None,
                format=None,
                tz=tz,
                options=options,
                progress=told(members[0]),
                planned=planned.pop(group[0], None),
            )
            if done is None and len(groups) == 1:
                return None
            shared = (
                _SharesLint(done.findings, done.messages, [done.rows], done.shares)
                if done is not None
                else None
            )
        else:
            # a log rotated in the middle of its sessions: dealt into shares across files
            shared = (
                lint_group_in_shares(
                    members,
                    readable=copies,
                    shares=shares,
                    tz=tz,
                    options=options,
                    progress=told(members[0]),
                    planned=(
                        [planned.pop(i) for i in group]
                        if all(i in planned for i in group)
                        else None
                    ),
                )
                if big
                else None
            )
            if shared is None and len(groups) == 1:
                return None  # one group, loaded together: nothing to gain
        if shared is not None:
            counts = shared.rows
            findings, messages = shared.findings, shared.messages
        else:
            if rest is not None and group == others:
                trace, rest = rest, None  # loaded already, alone
            else:
                rest = None
                trace = load(members, tz=tz, among_others=True)
            if not trace.errors.is_empty():
                return None  # a file unreadable now: the whole load reports it
            call_only.extend(trace.call_only_sessions)
            by_source = dict(zip(trace.sources["source"], trace.sources["rows"], strict=True))
            counts = [int(by_source[path]) for path in members]
            findings = lint(trace, **asdict(options))
            messages = trace.messages.filter(
                pl.col("ordinal").is_in(findings["ordinal"].implode())
            ).select("ordinal", "raw", "source")
            # the group's table goes before the next is loaded; what is kept of it gets
            # buffers of its own (a filtered text column still points into the table's)
            findings, messages = _detached(findings), _detached(messages)
            del trace
            gc.collect()
        for i in group:
            planned.pop(i, None)  # a group loaded whole did not need its plans
        local, before = [], 0
        for i, path, count in zip(group, members, counts, strict=True):
            rows[i] = count
            local.append((path, before))
            before += count
        found.append(_renumbered(findings, local))
        pointed.append(_renumbered(messages.select("ordinal", "raw", *_source(messages)), local))
    # the whole load numbers the files' rows one file after another
    starts, at = {}, 0
    for path, count in zip(files, rows, strict=True):
        starts[path] = at
        at += count
    first = pl.DataFrame({"_file": list(starts), "_start": list(starts.values())})
    findings = merge_findings(_placed(f, first) for f in found)
    messages = (
        pl.concat([_placed(p, first).select("ordinal", "raw") for p in pointed])
        if pointed
        else pl.DataFrame(schema={"ordinal": pl.Int64, "raw": pl.String})
    )
    return FileLint(
        findings=FINDINGS.conform(findings),
        messages=messages,
        shares=len(groups),
        rows=at,
        call_only_sessions=tuple(sorted(call_only)),
    )


def _source(messages: pl.DataFrame) -> list[str]:
    return ["source"] if "source" in messages.columns else []


def _renumbered(frame: pl.DataFrame, local: list[tuple[str, int]]) -> pl.DataFrame:
    """``frame`` with ``_file`` (its file) and ``ordinal`` made the row's place within
    that file: the group numbered its files' rows from ``local``'s starts."""
    starts = pl.DataFrame(
        {"_file": [p for p, _ in local], "_before": [b for _, b in local]},
        schema={"_file": pl.String, "_before": pl.Int64},
    )
    if "source" in frame.columns:
        keyed = frame.with_columns(_file=pl.col("source"))
    else:
        keyed = frame.with_columns(_file=pl.lit(local[0][0]))
    return (
        keyed.join(starts, on="_file", how="left", maintain_order="left")
        .with_columns(ordinal=pl.col("ordinal") - pl.col("_before"))
        .drop("_before")
    )


def _placed(frame: pl.DataFrame, first: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (of :func:`_renumbered`) with the ordinals of the whole load."""
    return (
        frame.join(first, on="_file", how="left", maintain_order="left")
        .with_columns(ordinal=pl.col("ordinal") + pl.col("_start"))
        .drop("_file", "_start")
    )


__all__ = ["file_groups", "lint_in_groups"]
