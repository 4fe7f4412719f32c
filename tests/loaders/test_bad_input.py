"""Bad input never crashes the tool and is never silently dropped."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import polars as pl
import pytest
from factories import WriteLines, rec, req, res
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import mcptrace
from mcptrace.errors import CaptureError

GOOD = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}',
    b'{"jsonrpc":"2.0","id":1,"result":{"content":[]}}',
    b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}',
    b'{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"nope"}}',
]


def _kinds(trace: mcptrace.Trace) -> list[str]:
    return trace.messages["kind"].cast(pl.String).to_list()


def test_malformed_and_truncated_json_become_invalid_rows(write_lines: WriteLines) -> None:
    path = write_lines(
        [GOOD[0], b'{"jsonrpc":"2.0","id":2,"method":"tools/ca', GOOD[1], b"}{", b"nul"]
    )
    trace = mcptrace.load(path, format="stdio")
    assert _kinds(trace) == ["request", "invalid", "response", "invalid", "invalid"]
    errors = trace.messages["parse_error"].to_list()
    assert errors[1] is not None and "char" in errors[1]
    assert trace.messages["raw"][1] == '{"jsonrpc":"2.0","id":2,"method":"tools/ca'


def test_invalid_utf8_is_reported_with_its_offset(write_lines: WriteLines) -> None:
    path = write_lines([GOOD[0], b'{"jsonrpc":"2.0","method":"x\xff\xfe"}', GOOD[1]])
    trace = mcptrace.load(path, format="stdio")
    assert _kinds(trace) == ["request", "invalid", "response"]
    assert trace.messages["parse_error"][1] == "invalid UTF-8 at byte 28"
    assert "\\xff" in trace.messages["raw"][1]


@pytest.mark.parametrize("capture", [False, True])
def test_nul_bytes_and_binary_junk_in_a_text_capture_are_invalid_lines(
    write_lines: WriteLines, capture: bool
) -> None:
    # a crash leaves a run of NUL bytes where the file was extended but never written;
    # detection must not refuse the whole file for it (the lines are those of stdio
    # NDJSON or of an mcptrace capture, detected, not forced)
    lines = [GOOD[0], b"\x00" * 3000, GOOD[1], b"\x89PNG\x1a\x00\xff junk", GOOD[3]]
    if capture:
        lines = [orjson.dumps(rec(orjson.loads(g))) if g in GOOD else g for g in lines]
    trace = mcptrace.load(write_lines(lines))
    assert trace.errors.is_empty()
    assert trace.sources["format"][0] == ("capture" if capture else "stdio")
    assert _kinds(trace) == ["request", "invalid", "response", "invalid", "error"]
    assert trace.messages.filter(pl.col("kind") == "invalid")["line"].to_list() == [2, 4]


def test_a_short_text_file_is_unrecognised_not_binary(tmp_path: Path) -> None:
    (tmp_path / "todo.txt").write_text("ok\nfix it\n")
    with pytest.raises(CaptureError, match="unrecognised capture format"):
        mcptrace.load(tmp_path / "todo.txt")


def test_bom_crlf_and_blank_lines(write_lines: WriteLines) -> None:
    path = write_lines([b"\xef\xbb\xbf" + GOOD[0], b"", GOOD[1], b"   "], newline=b"\r\n")
    trace = mcptrace.load(path)
    assert trace.sources["format"][0] == "stdio"
    assert _kinds(trace) == ["request", "blank", "response", "blank"]
    assert trace.messages["raw"][0] == GOOD[0].decode()  # no BOM, no CR
    assert "byte order mark" in (trace.messages["parse_error"][0] or "")
    assert trace.calls["outcome"].cast(pl.String).to_list() == ["ok"]


def test_a_50_mb_line(write_lines: WriteLines) -> None:
    big = orjson.dumps(res(1, {"content": [{"type": "text", "text": "x" * 50_000_000}]}))
    path = write_lines(
        [rec(req(1, "tools/call", {"name": "dump"})), rec(orjson.loads(big), dir="s2c")]
    )
    trace = mcptrace.load(path)
    assert _kinds(trace) == ["request", "response"]
    assert len(trace.messages["raw"][1]) > 50_000_000


def test_deeply_nested_json(write_lines: WriteLines) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    deep_obj = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
    path = write_lines([GOOD[0], deep, deep_obj, GOOD[1]])
    trace = mcptrace.load(path, format="stdio")
    assert _kinds(trace) == ["request", "invalid", "invalid", "response"]
    assert "depth limit" in trace.messages["parse_error"][1]


def test_deep_json_with_a_huge_integer_is_still_read(write_lines: WriteLines) -> None:
    # orjson reads 1,000 levels; the exact re-parse of huge integers (mcptrace._json) is
    # Python's own parser, which recurses: it must not turn a valid line into a crash
    nested = b"[" * 1_000 + b"123456789012345678901" + b"]" * 1_000
    line = b'{"jsonrpc":"2.0","id":1,"result":{"deep":' + nested + b"}}"
    path = write_lines([GOOD[0], line])
    trace = mcptrace.load(path, format="stdio")
    assert _kinds(trace) == ["request", "response"]
    assert trace.messages["parse_error"][1] is None


def test_empty_file_contributes_no_rows_but_is_listed(
    tmp_path: Path, write_lines: WriteLines
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    trace = mcptrace.load([empty, write_lines([GOOD[0]])])
    src = trace.sources.row(0, named=True)
    assert (src["status"], src["lines"], src["rows"]) == ("ok", 0, 0)
    assert trace.messages.height == 1


def test_binary_and_unrecognised_files_are_errors_others_still_load(
    tmp_path: Path, write_lines: WriteLines
) -> None:
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (tmp_path / "notes.txt").write_text("dear diary,\ntoday the server was slow\n")
    good = write_lines([GOOD[0], GOOD[1]], name="good.jsonl")
    trace = mcptrace.load(tmp_path)
    status = dict(
        zip(trace.sources["source"].to_list(), trace.sources["status"].to_list(), strict=True)
    )
    assert status == {
        str(good): "ok",
        str(tmp_path / "image.png"): "error",
        str(tmp_path / "notes.txt"): "error",
    }
    errors = dict(trace.errors.iter_rows())
    assert "binary" in errors[str(tmp_path / "image.png")]
    assert "unrecognised capture format" in errors[str(tmp_path / "notes.txt")]
    assert trace.messages.height == 2


def test_nothing_readable_raises_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(CaptureError, match=r"nope\.jsonl"):
        mcptrace.load(missing)


def test_gzip_is_read_transparently_and_truncation_is_reported(tmp_path: Path) -> None:
    body = b"\n".join(GOOD * 2000) + b"\n"
    whole = tmp_path / "capture.gz"
    whole.write_bytes(gzip.compress(body))
    assert mcptrace.load(whole).messages.height == 8000
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(body)[:-400])
    trace = mcptrace.load(cut)
    src = trace.sources.row(0, named=True)
    assert src["truncated"] is True
    assert "truncated gzip" in src["error"]
    assert 0 < trace.messages.height <= 8000
    # the last, cut-off line is an invalid row, not lost
    assert trace.messages["kind"][-1] in ("invalid", "request", "response", "notification", "error")


def test_directory_with_mixed_formats(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "raw.log").write_bytes(b"\n".join(GOOD) + b"\n")
    capture_lines = [orjson.dumps(rec(req(1, "tools/list"))), orjson.dumps(rec(res(1), dir="s2c"))]
    (tmp_path / "b.txt").write_bytes(b"\n".join(capture_lines) + b"\n")
    trace = mcptrace.load(tmp_path)
    assert sorted(trace.sources["format"].to_list()) == ["capture", "stdio"]
    assert trace.messages.height == 6


#: byte order marks of UTF-16 and UTF-32 (the UTF-32LE one starts with the UTF-16LE one)
WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")

_line = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(str.encode),
    st.sampled_from(GOOD),
    st.tuples(st.sampled_from(GOOD), st.integers(0, 120), st.binary(max_size=5)).map(
        lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :]
    ),
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**63 - 1)
        | st.floats(allow_nan=False)
        | st.text(max_size=10),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
        ),
        max_leaves=20,
    ).map(orjson.dumps),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_line, min_size=1, max_size=30), fmt=st.sampled_from(["stdio", "capture"]))
def test_random_and_mutated_lines_never_crash_and_are_all_accounted_for(
    tmp_path: Path, lines: list[bytes], fmt: str
) -> None:
    data = b"\n".join(line.replace(b"\n", b" ").replace(b"\r", b" ") for line in lines) + b"\n"
    # a file opening with a UTF-16/32 byte order mark is decoded from that encoding, so
    # its lines are not these byte lines (b"\xfe\xff\n\n" is one UTF-16BE character)
    assume(not data.startswith(WIDE_BOMS))
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    trace = mcptrace.load(path, format=fmt)
    m = trace.messages
    n_lines = trace.sources["lines"][0]
    assert n_lines == len(lines)
    # every line is at least one row (a batch is one row per element)
    assert m["line"].unique().sort().to_list() == list(range(1, n_lines + 1))
    invalid = m.filter(pl.col("kind") == "invalid")
    assert invalid["parse_error"].null_count() == 0
    # derived tables build on anything that loads
    assert trace.calls.height >= 0 and trace.sessions.height >= 1


def test_every_member_of_a_multi_member_gzip_is_read(tmp_path: Path) -> None:
    """Members bigger than the 1 MiB read chunk, one after another (appended logs): all
    of them are decompressed (an earlier reader kept only the part of the second member
    in the first member's last chunk, and called the stream truncated)."""
    import gzip
    import os

    from mcptrace.loaders.reader import read_content

    first, second = os.urandom(1_500_000), os.urandom(1_500_000)
    path = tmp_path / "two.gz"
    path.write_bytes(gzip.compress(first) + gzip.compress(second))
    content = read_content(path)
    assert content.compressed and not content.warnings
    assert content.data == first + second


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 4096])
def test_gzip_streams_read_in_any_chunks_give_the_same_bytes(chunk: int) -> None:
    """Decompressing chunk by chunk (how a compressed capture is linted in shares) gives
    the bytes and the warning of reading the file whole, wherever the chunks cut, even
    through a member's magic bytes."""
    import gzip
    import io

    from mcptrace.loaders import reader

    members = [gzip.compress(b"a" * 5000), gzip.compress(b"b\n" * 300), gzip.compress(b"")]
    for raw in (b"".join(members), b"".join(members)[:-7], members[0] + b"garbage"):
        whole, warning = reader._gunzip(raw)
        out = bytearray()
        source = io.BytesIO(raw)

        def read(n: int, source: io.BytesIO = source) -> bytes:
            return source.read(min(n, chunk))

        written, streamed = reader.gunzip_into(read, out.extend)
        assert (bytes(out), streamed) == (whole, warning)
        assert written == len(whole)


def test_a_highly_compressed_member_is_decompressed_in_bounded_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each decompression step gives at most a bounded number of bytes, however well
    the input compresses; the bytes are the same as in one step."""
    import gzip
    import io

    from mcptrace.loaders import reader

    monkeypatch.setattr(reader, "_OUT_MAX", 1000)
    data = b"x" * 300_000 + b"y\n" * 1000
    raw = gzip.compress(data) + gzip.compress(data)
    steps: list[int] = []

    def write(out: bytes) -> None:
        steps.append(len(out))

    written, warning = reader.gunzip_into(io.BytesIO(raw).read, write)
    assert (written, warning) == (2 * len(data), None)
    assert max(steps) <= 1000
    assert reader._gunzip(raw) == (data + data, None)


def test_times_outside_years_1_to_9999_are_unknown() -> None:
    # a loader's arithmetic (a start plus a corrupt duration) can leave the years a
    # datetime holds: such a time is unknown rather than a crash wherever it is read
    from mcptrace.loaders.rows import parse_timestamps

    micros = pl.Series([253_402_300_800_000_000, -62_135_596_801_000_000, 0], dtype=pl.Int64)
    texts = pl.Series([None, None, None], dtype=pl.String)
    ts = parse_timestamps(texts, micros)
    assert ts.to_list()[:2] == [None, None]
    assert str(ts[2]) == "1970-01-01 00:00:00+00:00"
