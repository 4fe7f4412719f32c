"""Big line-oriented captures: read in chunks, parsed on every core.

Formats whose lines can be parsed independently (a module with ``parse_chunk``
and ``finish``) are split into chunks of whole lines. Worker processes read
their chunks straight from the file (compressed files are decompressed here and
the chunks sent), each returns a messages frame, and the frames are joined in
order before the whole-file steps (session filling, direction inference) run.

Why processes: parsing JSON with orjson holds the GIL, so threads would not
use the second core. Why fresh ``python -m`` processes rather than
multiprocessing: forking a process that holds Polars' thread pool can deadlock
the child, and multiprocessing's spawn re-runs the caller's main script, which
breaks every script without a ``__main__`` guard.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import polars as pl

from mcptrace import _json
from mcptrace.loaders import accel
from mcptrace.loaders.base import LoadContext, LoadResult
from mcptrace.loaders.rows import fill_context

#: chunks are about this big: small enough to keep per-chunk Python objects few,
#: large enough that the per-chunk frame overhead does not show
CHUNK_BYTES = 8 << 20
#: below this a file is parsed in this process: starting worker processes costs more
PARALLEL_MIN_BYTES = 48 << 20
#: The C scanner's threads make no Python object per line, so their chunks can be far
#: bigger: each chunk's frame costs time to assemble, and every query over the messages
#: table crosses its chunks (at 10^6 messages, 9 chunks instead of 65 took a tenth off
#: load + lint). Each thread still gets two chunks at least, to share the work evenly.
SCANNER_CHUNK_BYTES = 64 << 20
_BOM = b"\xef\xbb\xbf"


class ChunkedLoader(Protocol):
    NAME: str
    #: True when ``parse_chunk`` spends its time outside the GIL (the C scanner), so
    #: threads can share the work without starting worker processes
    GIL_FREE: bool

    def parse_chunk(
        self, data: bytes | memoryview, first_line: int, ctx: LoadContext
    ) -> pl.DataFrame: ...

    def finish(self, messages: pl.DataFrame, ctx: LoadContext) -> pl.DataFrame: ...


@dataclass(frozen=True)
class Span:
    """A run of whole lines: bytes [start, end) of the file, the first one numbered ``line``."""

    start: int
    end: int
    line: int


def spans_of_file(path: str, chunk_bytes: int = CHUNK_BYTES) -> tuple[list[Span], int]:
    """Chunk boundaries at line ends, found by streaming the file; and the line count."""
    spans: list[Span] = []
    line = 1
    start = 0
    with open(path, "rb") as f:
        buffered = b""
        offset = 0  # file offset of buffered[0]
        while True:
            block = f.read(chunk_bytes)
            if not block:
                break
            buffered += block
            cut = buffered.rfind(b"\n")
            if cut == -1:
                continue
            end = offset + cut + 1
            spans.append(Span(start, end, line))
            line += buffered.count(b"\n", 0, cut + 1)
            buffered = buffered[cut + 1 :]
            offset = end
            start = end
        if buffered:
            spans.append(Span(start, offset + len(buffered), line))
            line += 1
    return spans, line - 1


def boundaries_of_file(path: str, chunk_bytes: int = CHUNK_BYTES) -> list[Span]:
    """Chunk boundaries at line ends found by seeking, without reading the file through.

    Line numbers are not known yet (``line`` is 0): they are counted as chunks are parsed.
    """
    size = os.path.getsize(path)
    spans: list[Span] = []
    start = 0
    with open(path, "rb") as f:
        while start < size:
            end = start + chunk_bytes
            if end >= size:
                end = size
            else:
                f.seek(end - 1)
                while True:
                    block = f.read(1 << 16)
                    if not block:
                        end = size
                        break
                    nl = block.find(b"\n")
                    if nl != -1:
                        end = f.tell() - len(block) + nl + 1
                        break
            spans.append(Span(start, end, 0))
            start = end
    return spans


def line_count(data: bytes | memoryview) -> int:
    """Lines in a chunk, counted the way :func:`~mcptrace.loaders.reader.split_lines` cuts."""
    if accel.available():
        # bytes.count holds the GIL (a quarter second for 0.5 GB): parsing threads wait
        return accel.lines(data)
    data = bytes(data)
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def spans_of_bytes(data: bytes, chunk_bytes: int = CHUNK_BYTES) -> tuple[list[Span], int]:
    spans: list[Span] = []
    line, start, n = 1, 0, len(data)
    while start < n:
        end = min(start + chunk_bytes, n)
        if end < n:
            nl = data.find(b"\n", end - 1)
            end = n if nl == -1 else nl + 1
        spans.append(Span(start, end, line))
        line += data.count(b"\n", start, end)
        start = end
    lines = line - 1 + (1 if data and not data.endswith(b"\n") else 0)
    return spans, lines


_Data = TypeVar("_Data", bytes, memoryview)


def _without_bom(data: _Data, span: Span) -> _Data:
    """The bytes of ``span``, less the byte order mark that may open the file."""
    if span.start == 0 and data[: len(_BOM)] == _BOM:
        # of a chunk the scanner read, a slice: it copies that one, as it would bytes
        return data[len(_BOM) :]
    return data


def read_span(path: str, span: Span) -> bytes:
    with open(path, "rb") as f:
        f.seek(span.start)
        data = f.read(span.end - span.start)
    return _without_bom(data, span)


def read_chunk(module: ChunkedLoader, path: str, span: Span) -> bytes | memoryview:
    """:func:`read_span` for ``module``'s ``parse_chunk``. For the loaders the C scanner
    serves, the span is read into memory the scanner keeps as the text its columns
    point into, so that it is neither copied nor faulted in twice."""
    if not _threads_suffice(module):
        return read_span(path, span)
    with open(path, "rb") as f:
        data = accel.read(f.fileno(), span.start, span.end - span.start)
    return read_span(path, span) if data is None else _without_bom(data, span)


def _parse_spans(
    module: ChunkedLoader, path: str, spans: list[Span], ctx: LoadContext, first_line: int = 1
) -> tuple[list[pl.DataFrame], int]:
    """Parse consecutive spans, numbering their lines from ``first_line``; also returns
    the number of lines they hold."""
    frames = []
    line = first_line
    for span in spans:
        data = read_chunk(module, path, span)
        frames.append(module.parse_chunk(data, line, ctx))
        line += line_count(data)
    return frames, line - first_line


def workers() -> int:
    """Processes to parse with: every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _try_start_worker(
    fmt: str, path: str, spans: list[Span], ctx: LoadContext, out: str
) -> subprocess.Popen[bytes] | None:
    try:
        return _start_worker(fmt, path, spans, ctx, out)
    except OSError:
        return None


def _start_worker(
    fmt: str, path: str, spans: list[Span], ctx: LoadContext, out: str
) -> subprocess.Popen[bytes]:
    job = {
        "format": fmt,
        "path": path,
        "spans": [[s.start, s.end, s.line] for s in spans],
        "source": ctx.source,
        "tz": ctx.tz,
        "out": out,
    }
    # the worker must import this very mcptrace, installed or not
    package_parent = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-m", "mcptrace.loaders.chunked", _json.dumps(job)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _parse_parallel(
    module: ChunkedLoader, path: str, spans: list[Span], ctx: LoadContext
) -> tuple[list[pl.DataFrame], int]:
    """This process parses the first share of the spans while worker processes parse the
    others into Arrow IPC files. Workers number lines from 1 and report how many they
    read; their rows are renumbered here once the lines before them are known."""
    n = min(workers(), len(spans))
    shares = [spans[i * len(spans) // n : (i + 1) * len(spans) // n] for i in range(n)]
    with tempfile.TemporaryDirectory(prefix="mcptrace-") as tmp:
        outs = [str(Path(tmp) / f"part{i}.arrow") for i in range(1, n)]
        procs = [
            _try_start_worker(module.NAME, path, share, ctx, out)
            for share, out in zip(shares[1:], outs, strict=True)
        ]  # started first, so that they run while this process parses its own share
        frames, lines = _parse_spans(module, path, shares[0], ctx)
        for proc, out, share in zip(procs, outs, shares[1:], strict=True):
            reported = proc.communicate()[0] if proc is not None else b""
            if proc is not None and proc.returncode == 0 and Path(out).exists():
                part = pl.read_ipc(out).with_columns(pl.col("line") + lines)
                frames.append(part)
                lines += int(reported.strip() or 0)
            else:
                # a worker that could not run (no interpreter, killed) costs time, not rows
                more, count = _parse_spans(module, path, share, ctx, lines + 1)
                frames.extend(more)
                lines += count
    return frames, lines


def _parse_threaded(
    module: ChunkedLoader, path: str, spans: list[Span], ctx: LoadContext
) -> tuple[list[pl.DataFrame], int]:
    """Parse every span on a thread pool (the scanner releases the GIL); each chunk is
    numbered from 1 and renumbered once the lines before it are counted."""

    def parse(span: Span) -> tuple[pl.DataFrame, int]:
        data = read_chunk(module, path, span)
        return module.parse_chunk(data, 1, ctx), line_count(data)

    frames: list[pl.DataFrame] = []
    lines = 0
    with ThreadPoolExecutor(max_workers=min(workers(), len(spans))) as pool:
        for frame, count in pool.map(parse, spans):
            frames.append(frame.with_columns(pl.col("line") + lines) if lines else frame)
            lines += count
    return frames, lines


def _threads_suffice(module: ChunkedLoader) -> bool:
    return bool(getattr(module, "GIL_FREE", False)) and accel.available()


def _scanner_chunk_bytes(size: int) -> int:
    """The chunk size for the scanner's threads on ``size`` bytes: see
    :data:`SCANNER_CHUNK_BYTES`."""
    even = -(-size // (2 * max(1, workers())))
    return max(CHUNK_BYTES, min(SCANNER_CHUNK_BYTES, even))


def load_path(
    module: ChunkedLoader, path: str, ctx: LoadContext, *, parallel: bool | None = None
) -> LoadResult:
    """Parse an uncompressed file chunk by chunk, in parallel when it is big."""
    # threads cost next to nothing to start: a file of two chunks is worth them (a
    # folder of 13 MB captures loaded in 1.7 s on one core)
    threads = (parallel if parallel is not None else workers() > 1) and _threads_suffice(module)
    size = os.path.getsize(path)
    spans = boundaries_of_file(path, _scanner_chunk_bytes(size) if threads else CHUNK_BYTES)
    use_pool = parallel if parallel is not None else (size >= PARALLEL_MIN_BYTES and workers() > 1)
    if threads and len(spans) > 1:
        frames, lines = _parse_threaded(module, path, spans, ctx)
    elif use_pool and len(spans) > 1:
        frames, lines = _parse_parallel(module, path, spans, ctx)
    else:
        frames, lines = _parse_spans(module, path, spans, ctx)
    return LoadResult(messages=join(module, frames, ctx), lines=lines)


def load_bytes(
    module: ChunkedLoader, data: bytes, ctx: LoadContext, *, parallel: bool | None = None
) -> LoadResult:
    """The same for content already in memory (decompressed files)."""
    use_pool = (
        parallel if parallel is not None else (len(data) >= PARALLEL_MIN_BYTES and workers() > 1)
    )
    threads = use_pool and _threads_suffice(module)
    spans, lines = spans_of_bytes(data, _scanner_chunk_bytes(len(data)) if threads else CHUNK_BYTES)
    if threads and len(spans) > 1:
        with ThreadPoolExecutor(max_workers=min(workers(), len(spans))) as pool:
            frames = list(
                pool.map(lambda s: module.parse_chunk(data[s.start : s.end], s.line, ctx), spans)
            )
    elif use_pool and len(spans) > 1:
        # workers read from a file: give them the decompressed bytes as one
        with tempfile.NamedTemporaryFile(prefix="mcptrace-", suffix=".jsonl") as tmp:
            tmp.write(data)
            tmp.flush()
            frames, _ = _parse_parallel(module, tmp.name, spans, ctx)
    else:
        frames = [module.parse_chunk(data[s.start : s.end], s.line, ctx) for s in spans]
    return LoadResult(messages=join(module, frames, ctx), lines=lines)


def join(
    module: ChunkedLoader,
    frames: list[pl.DataFrame],
    ctx: LoadContext,
    fill: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """A file's messages from its chunks' rows, in order: ordinals within the file,
    sessions and servers filled in (by ``fill``, default
    :func:`~mcptrace.loaders.rows.fill_context`), then the format's whole-file step."""
    if not frames:
        frames = [module.parse_chunk(b"", 1, ctx)]
    # ordinals within the file, set chunk by chunk so that the column is chunked like
    # the others (the trace offsets them by the files before)
    numbered, rows = [], 0
    for frame in frames:
        ordinal = pl.int_range(rows, rows + frame.height, dtype=pl.Int64, eager=True)
        numbered.append(frame.with_columns(ordinal=ordinal))
        rows += frame.height
    frames.clear()
    joined = pl.concat(numbered, how="vertical", rechunk=False)
    filled = fill(joined) if fill is not None else fill_context(joined, ctx.stem)
    return module.finish(filled, ctx)


def is_chunked(module: object) -> bool:
    return hasattr(module, "parse_chunk") and hasattr(module, "finish")


def _worker_main(argv: list[str]) -> int:
    """Entry point of a parser worker: parse the given spans, write one Arrow IPC file."""
    from mcptrace.loaders import FORMATS

    job = _json.loads(argv[0])
    module: ChunkedLoader = FORMATS[job["format"]]  # type: ignore[assignment]
    ctx = LoadContext(source=job["source"], tz=job["tz"])
    spans = [Span(*s) for s in job["spans"]]
    frames, lines = _parse_spans(module, job["path"], spans, ctx)
    pl.concat(frames, how="vertical", rechunk=False).write_ipc(
        job["out"], compression="uncompressed"
    )
    print(lines)  # the parent renumbers this worker's rows after the lines before them
    return 0


__all__ = ["CHUNK_BYTES", "PARALLEL_MIN_BYTES", "is_chunked", "load_bytes", "load_path"]

if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))
