"""Streaming the messages table of captures too big to hold in memory.

:func:`iter_messages` yields the messages table chunk by chunk, with the same
rows, ordinals and session keys :func:`mcptrace.load` would give, except for
two whole-file steps that need more than one chunk: in raw stdio captures a
response whose request lies in an earlier chunk keeps an unknown direction,
and a line without a session of its own is filled from the rows before it
only. :func:`write_messages` writes such a stream to Parquet, CSV or capture
JSONL with memory bounded by the chunk size, not the capture size.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from mcptrace.errors import CaptureError, UsageError
from mcptrace.inputs import PathLike, describe_paths, expand_inputs, input_list
from mcptrace.loaders import FORMATS, LoadContext, parse_file
from mcptrace.loaders import chunked as _chunked
from mcptrace.loaders.rows import fill_context
from mcptrace.schema import MESSAGES
from mcptrace.trace import apply_plan, plan_files
from mcptrace.writers import OutputFormat, capture_records


@dataclass
class StreamStats:
    """What a streaming run read and wrote."""

    rows: int = 0
    files: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)


def iter_messages(
    paths: PathLike | Iterable[PathLike],
    *,
    format: str | None = None,
    tz: str | None = None,
    stats: StreamStats | None = None,
) -> Iterator[pl.DataFrame]:
    """Yield the messages table of the captures in chunks (see the module docstring)."""
    paths = input_list(paths)
    inputs = expand_inputs(paths)
    if not inputs.files and not inputs.skipped:
        raise UsageError(f"no capture files found in {describe_paths(paths)}")
    stats = stats if stats is not None else StreamStats()
    plans, failed = plan_files(inputs.files, format=format)
    stats.errors.extend((str(r["source"]), str(r["error"])) for r in failed)
    stats.errors.extend(inputs.skipped)
    ordinal = 0
    for plan in plans:
        stats.files += 1
        module = FORMATS[plan.format]
        ctx = LoadContext(source=plan.source, tz=tz)
        if _chunked.is_chunked(module) and plan.content.as_on_disk:
            chunks = _stream_chunks(module, plan.source, ctx)  # type: ignore[arg-type]
        else:
            chunks = iter([parse_file(plan.source, plan.format, plan.content, tz=tz).messages])
        for i, frame in enumerate(chunks):
            df = apply_plan(frame, plan, first_chunk=i == 0).with_columns(
                ordinal=pl.int_range(ordinal, ordinal + frame.height, dtype=pl.Int64)
            )
            ordinal += df.height
            stats.rows += df.height
            yield MESSAGES.conform(df)
    if not plans:
        reasons = "; ".join(f"{s}: {e}" for s, e in stats.errors)
        raise CaptureError(describe_paths(paths), f"no capture could be read ({reasons})")


def _stream_chunks(
    module: _chunked.ChunkedLoader, path: str, ctx: LoadContext
) -> Iterator[pl.DataFrame]:
    session: str | None = None
    server: str | None = None
    line = 1
    for span in _chunked.boundaries_of_file(path, _chunked.CHUNK_BYTES):
        data = _chunked.read_span(path, span)
        df = module.parse_chunk(data, line, ctx)
        line += _chunked.line_count(data)
        # carry the session and server of the previous chunk into this one's first rows
        df = df.with_columns(
            session=pl.col("session").forward_fill().fill_null(pl.lit(session, pl.String)),
            server=pl.col("server").forward_fill().fill_null(pl.lit(server, pl.String)),
        )
        df = module.finish(fill_context(df, ctx.stem), ctx)
        if df.height:
            session, server = df["session"][-1], df["server"][-1]
        yield df


def write_messages(
    paths: PathLike | Iterable[PathLike],
    output: str | Path,
    fmt: OutputFormat,
    *,
    format: str | None = None,
    tz: str | None = None,
) -> StreamStats:
    """Stream the messages table of the captures to ``output`` (parquet, csv or jsonl)."""
    stats = StreamStats()
    write_frames(iter_messages(paths, format=format, tz=tz, stats=stats), output, fmt)
    return stats


def write_frames(chunks: Iterable[pl.DataFrame], output: str | Path, fmt: OutputFormat) -> None:
    """Write messages-table chunks to one file: capture JSONL line by line; Parquet and
    CSV through Arrow IPC parts that Polars streams into one file, so no more than one
    chunk is held in memory."""
    if fmt == "jsonl":
        with open(output, "wb") as out:
            for df in chunks:
                for line in capture_records(df):
                    out.write(line + b"\n")
        return
    with tempfile.TemporaryDirectory(prefix="mcptrace-stream-") as tmp:
        parts = []
        for i, df in enumerate(chunks):
            part = Path(tmp) / f"{i:06d}.arrow"
            df.write_ipc(part, compression="lz4")
            parts.append(str(part))
        lazy = pl.scan_ipc(parts) if parts else MESSAGES.empty().lazy()
        if fmt == "parquet":
            lazy.sink_parquet(output)
        else:
            lazy.sink_csv(output)
