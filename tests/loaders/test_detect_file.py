"""Detection of a big file from its start: the same format, errors and content as from
the first STREAM_BYTES, or that read is made."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from factories import rec, req, res

import mcptrace
from mcptrace import loaders
from mcptrace.errors import CaptureError
from mcptrace.loaders.reader import HEAD_BYTES, Content, read_content

INSPECTOR = Path(__file__).parents[2] / "sample_traces" / "inspector" / "inspector-export.json"
#: past the start detection reads of a file whose plan keeps 64 bytes
BIG = HEAD_BYTES + (64 << 10)
LINE = orjson.dumps(rec(req(1, "ping"))) + b"\n" + orjson.dumps(rec(res(1, {}), dir="s2c")) + b"\n"


def _outcome(path: Path, keep: int | None) -> tuple[str, Content | None]:
    """What detection makes of ``path``: the format (or the error) and the content, cut
    to ``keep`` bytes as a plan keeps it, read from the file's first STREAM_BYTES when
    ``keep`` is None and, with it, from as little of them as tells the same."""
    try:
        name, content = loaders.detect_file(str(path), keep=keep)
    except CaptureError as exc:
        return f"{type(exc).__name__}: {exc}", None
    return name, content


def _assert_start_decides_as_the_whole(path: Path, keep: int = 64) -> tuple[str, list[int]]:
    """Detection with ``keep`` agrees with the full read cut to ``keep``; returns the
    format and the limits of the reads it made."""
    name, full = _outcome(path, None)
    reads: list[int] = []
    read = read_content

    def counted(p: str, limit: int | None = None) -> Content:
        reads.append(-1 if limit is None else limit)
        return read(p, limit=limit)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loaders, "read_content", counted)
        fast_name, fast = _outcome(path, keep)
    assert fast_name == name
    if full is not None:
        assert fast == loaders._kept(full, keep)
    return name, reads


def _inspector_export(entries: int, *, indent: bool) -> bytes:
    doc = orjson.loads(INSPECTOR.read_bytes())
    many = (doc * (entries // len(doc) + 1))[:entries]
    return orjson.dumps(many, option=orjson.OPT_INDENT_2 if indent else 0)


@pytest.mark.parametrize("indent", [True, False])
def test_a_big_json_document_is_detected_from_the_whole_of_it(tmp_path: Path, indent: bool) -> None:
    # one document spanning lines (or one long line) is parsed whole: its start alone
    # does not parse, and would read as no known format
    path = tmp_path / "export.json"
    data = _inspector_export(2000, indent=indent)
    assert len(data) > BIG
    path.write_bytes(data)
    name, reads = _assert_start_decides_as_the_whole(path)
    assert name == "inspector"
    assert reads[-1] == loaders.STREAM_BYTES
    assert mcptrace.load(path).sources["format"].to_list() == ["inspector"]


def test_a_json_value_with_only_blank_lines_after_it_in_the_start_is_parsed_whole(
    tmp_path: Path,
) -> None:
    # a first line that is a whole value makes JSON Lines only when more text follows:
    # here none does within the start, nor after it, and the document is parsed whole
    path = tmp_path / "export.json"
    path.write_bytes(_inspector_export(20, indent=False) + b"\n" * BIG)
    name, reads = _assert_start_decides_as_the_whole(path)
    assert name == "inspector"
    assert reads[-1] == loaders.STREAM_BYTES


def test_a_value_then_json_lines_after_a_blank_start_are_read_as_lines(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    path.write_bytes(LINE[: LINE.index(b"\n") + 1] + b"\n" * BIG + LINE * 10)
    _, reads = _assert_start_decides_as_the_whole(path)
    assert reads[-1] == loaders.STREAM_BYTES


@pytest.mark.parametrize("rest", ["", "lines", "document"])
def test_a_blank_start_is_read_further(tmp_path: Path, rest: str) -> None:
    # blank all through, a file is an empty capture (of the stdio format); blank at its
    # start only, it is judged by what follows: a document is parsed whole (but lines
    # after the first lines detection looks at are not seen)
    after = {"": b"", "lines": LINE * 10, "document": _inspector_export(20, indent=True)}
    path = tmp_path / "capture.jsonl"
    path.write_bytes(b"\n" * BIG + after[rest])
    name, reads = _assert_start_decides_as_the_whole(path)
    assert reads[-1] == loaders.STREAM_BYTES
    expected = {"": "stdio", "lines": "UnknownFormatError", "document": "inspector"}[rest]
    assert name.startswith(expected)


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("keep", [64, 1 << 20])
def test_json_lines_are_detected_from_their_start_alone(
    tmp_path: Path, bom: bytes, keep: int
) -> None:
    path = tmp_path / "capture.jsonl"
    path.write_bytes(bom + LINE * (2 * max(BIG, keep) // len(LINE)))
    name, reads = _assert_start_decides_as_the_whole(path, keep)
    assert name == "capture"
    assert reads == [max(keep, HEAD_BYTES) + 4]


@pytest.mark.parametrize("keep", [64, 1 << 20])
def test_a_file_as_long_as_its_start_is_read_whole(tmp_path: Path, keep: int) -> None:
    # a file of exactly the start's length, one byte more or less, with a byte order
    # mark or not: cut (or not) as the full read is
    start = max(keep, HEAD_BYTES) + 4
    for size in (start - 5, start - 4, start - 1, start, start + 1):
        for bom in (b"", b"\xef\xbb\xbf"):
            body = (LINE * (size // len(LINE) + 1))[: size - len(bom)]
            path = tmp_path / f"capture-{size}-{len(bom)}.jsonl"
            path.write_bytes(bom + body[: body.rindex(b"\n") + 1].ljust(size - len(bom), b" "))
            _assert_start_decides_as_the_whole(path, keep)


def test_compressed_and_binary_files_decide_as_before(tmp_path: Path) -> None:
    import gzip

    packed = tmp_path / "capture.jsonl.gz"
    packed.write_bytes(gzip.compress(LINE * (BIG // len(LINE))))
    assert _assert_start_decides_as_the_whole(packed)[0] == "capture"
    binary = tmp_path / "capture.bin"
    binary.write_bytes(bytes(range(256)) * (BIG // 256 + 1))
    assert _assert_start_decides_as_the_whole(binary)[0].startswith("UnknownFormatError")


def test_a_forced_format_reads_only_the_start(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(_inspector_export(2000, indent=True))
    reads: list[int | None] = []
    read = read_content

    def counted(p: str, limit: int | None = None) -> Content:
        reads.append(limit)
        return read(p, limit=limit)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(loaders, "read_content", counted)
        name, content = loaders.detect_file(str(path), format="inspector", keep=64)
    assert (name, len(content.data), content.partial) == ("inspector", 64, True)
    assert reads == [HEAD_BYTES + 4]
