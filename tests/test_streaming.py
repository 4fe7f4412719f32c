"""Big captures: chunked and multi-process parsing, and streaming writers, give the
same rows as a plain load."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from factories import SAMPLES, load_generator

import mcptrace
from mcptrace.loaders import capture, chunked, stdio
from mcptrace.loaders.base import LoadContext
from mcptrace.loaders.reader import read_content
from mcptrace.streaming import write_messages

gen = load_generator()
COMPARE = [
    "source", "line", "ordinal", "ts", "session", "direction", "kind", "id", "id_type",
    "method", "target", "error_code", "result_type", "message", "raw", "parse_error",
]  # fmt: skip


@pytest.fixture(scope="module")
def big_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "capture.jsonl"
    gen.generate_capture(path, messages=6000, seed=3)
    # an unreadable line in the middle must survive chunking too
    lines = path.read_bytes().splitlines()
    lines.insert(
        2500, b'{"ts": "2026-08-01T00:00:00Z", "dir": "c2s", "msg": {"jsonrpc": "2.0", "id": '
    )
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture(scope="module")
def big_stdio(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "stream.ndjson"
    gen.generate_capture(path, messages=6000, seed=4, fmt="stdio")
    return path


@pytest.mark.parametrize("parallel", [False, True])
def test_chunked_parsing_matches_one_chunk(
    big_capture: Path, monkeypatch: pytest.MonkeyPatch, parallel: bool
) -> None:
    ctx = LoadContext(source=str(big_capture))
    whole = capture.load(read_content(big_capture), ctx).messages
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(chunked, "SCANNER_CHUNK_BYTES", 64 * 1024)
    spans, lines = chunked.spans_of_file(str(big_capture), 64 * 1024)
    assert len(spans) > 20 and lines == 6001
    result = chunked.load_path(capture, str(big_capture), ctx, parallel=parallel)
    assert result.lines == 6001
    assert result.messages.equals(whole)
    assert result.messages.filter(pl.col("kind") == "invalid")["line"].to_list() == [2501]


def test_parallel_stdio_keeps_direction_inference(big_stdio: Path) -> None:
    ctx = LoadContext(source=str(big_stdio))
    sequential = chunked.load_path(stdio, str(big_stdio), ctx, parallel=False).messages
    parallel = chunked.load_path(stdio, str(big_stdio), ctx, parallel=True).messages
    assert parallel.equals(sequential)
    assert (sequential["direction"] != "unknown").mean() > 0.9  # type: ignore[operator]


@pytest.mark.parametrize("suffix", ["parquet", "csv", "jsonl"])
def test_streaming_writer_matches_load(
    tmp_path: Path, big_capture: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(chunked, "SCANNER_CHUNK_BYTES", 64 * 1024)
    out = tmp_path / f"out.{suffix}"
    stats = write_messages([big_capture], out, suffix)  # type: ignore[arg-type]
    loaded = mcptrace.load(big_capture).messages
    assert stats.rows == loaded.height == 6001
    if suffix == "parquet":
        assert pl.read_parquet(out).select(COMPARE).equals(loaded.select(COMPARE))
    elif suffix == "csv":
        assert pl.read_csv(out, infer_schema=False).height == loaded.height
    else:
        again = mcptrace.load(out).messages
        cols = ["ts", "session", "direction", "kind", "id", "method"]
        valid = loaded.filter(pl.col("kind") != "invalid").select(cols)
        assert again.filter(pl.col("kind") != "invalid").select(cols).equals(valid)


def test_connections_of_a_stream_are_named_alike_loaded_or_streamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # forty connections one after another (a log kept across restarts), cut into many
    # chunks: each chunk's rows before its first initialize carry the session before
    path = tmp_path / "stream.ndjson"
    path.write_bytes((SAMPLES / "stdio" / "docs-server.ndjson").read_bytes() * 40)
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 4 * 1024)
    monkeypatch.setattr(chunked, "SCANNER_CHUNK_BYTES", 4 * 1024)
    ctx = LoadContext(source=str(path))
    sequential = chunked.load_path(stdio, str(path), ctx, parallel=False).messages
    parallel = chunked.load_path(stdio, str(path), ctx, parallel=True).messages
    assert parallel.equals(sequential)
    names = sequential["session"].unique(maintain_order=True).to_list()
    assert len(names) == 40 and names[0] == "stream"
    assert len(chunked.spans_of_file(str(path), 4 * 1024)[0]) > 20
    assert all(name.startswith("stream@") for name in names[1:])
    out = tmp_path / "out.parquet"
    write_messages([path], out, "parquet")
    streamed = pl.read_parquet(out)["session"]
    assert streamed.to_list() == mcptrace.load(path).messages["session"].to_list()


@pytest.mark.parametrize("interpreter", ["/bin/false", "/nonexistent/python"])
def test_a_failed_worker_costs_time_not_rows(
    big_capture: Path, monkeypatch: pytest.MonkeyPatch, interpreter: str
) -> None:
    ctx = LoadContext(source=str(big_capture))
    expected = chunked.load_path(capture, str(big_capture), ctx, parallel=False).messages
    monkeypatch.setattr(chunked.sys, "executable", interpreter)
    got = chunked.load_path(capture, str(big_capture), ctx, parallel=True).messages
    assert got.equals(expected)


def test_scanner_chunks_are_big_but_shared_by_every_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the scanner's threads read big chunks (fewer chunks in the table), two a thread at
    # least; never smaller than the chunks of the other paths
    monkeypatch.setattr(chunked, "workers", lambda: 2)
    mib = 1 << 20
    assert chunked._scanner_chunk_bytes(540 * mib) == chunked.SCANNER_CHUNK_BYTES == 64 * mib
    assert chunked._scanner_chunk_bytes(100 * mib) == 25 * mib
    assert chunked._scanner_chunk_bytes(10 * mib) == chunked.CHUNK_BYTES
    assert chunked._scanner_chunk_bytes(0) == chunked.CHUNK_BYTES


def test_a_big_capture_loads_in_few_chunks(
    big_capture: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunked, "workers", lambda: 2)
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 16 * 1024)
    size = big_capture.stat().st_size
    ctx = LoadContext(source=str(big_capture))
    messages = chunked.load_path(capture, str(big_capture), ctx).messages
    # four chunks of a quarter of the file, not one per 16 KiB
    assert size > 16 * 16 * 1024
    assert messages.n_chunks() == 4
    assert messages.equals(capture.load(read_content(big_capture), ctx).messages)
