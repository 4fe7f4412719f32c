"""Reading capture files into lines: gzip, BOM, CRLF, binary detection.

The reader never interprets content. It hands loaders the decompressed bytes
split into lines, and says what it had to work around (a BOM, a truncated gzip
stream) so the loader can record it instead of losing it.
"""

from __future__ import annotations

import codecs
import io
import re
import sys
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mcptrace.errors import CaptureError

#: the path that names standard input, as in most command-line tools
STDIN = "-"
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"
_BOM = b"\xef\xbb\xbf"
#: byte order marks of the wide encodings a capture may be saved in (Windows PowerShell's
#: `>` and `Out-File` write UTF-16LE): (mark, codec, name); UTF-32 first, as its
#: little-endian mark starts like UTF-16's
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le", "UTF-32LE"),
    (b"\x00\x00\xfe\xff", "utf-32-be", "UTF-32BE"),
    (b"\xff\xfe", "utf-16-le", "UTF-16LE"),
    (b"\xfe\xff", "utf-16-be", "UTF-16BE"),
)
_WIDE_MARKS = tuple(mark for mark, _, _ in _WIDE_BOMS)
_CHUNK = 1 << 20
#: the bytes :meth:`Content.head` looks at for the first lines
HEAD_BYTES = 256 * 1024
#: the most bytes one decompression step gives
_OUT_MAX = 16 << 20


@dataclass
class Content:
    """A capture file's bytes, decompressed, with what was noticed while reading."""

    source: str
    data: bytes
    compressed: bool = False
    bom: bool = False
    #: only the start of the file was read (see ``read_content(limit=...)``)
    partial: bool = False
    warnings: list[str] = field(default_factory=list)
    #: the encoding the file was decoded from into UTF-8 (``UTF-16LE``), None for UTF-8
    transcoded: str | None = None
    #: remarks on reading that are no problem (the sources table's ``note``)
    notes: list[str] = field(default_factory=list)
    #: read from standard input (the path ``-``): there is no file to read again
    stdin: bool = False
    #: the other members of the zip archive ``data`` was taken from, by name (a
    #: Playwright HAR archive keeps bodies as files beside ``har.har``); None otherwise
    attachment: Callable[[str], bytes | None] | None = None
    _lines: list[bytes] | None = None

    @property
    def as_on_disk(self) -> bool:
        """Whether ``data`` holds the file's own bytes, neither decompressed nor decoded:
        only then may a loader read parts of the file from disk by offset."""
        return not self.compressed and self.transcoded is None and not self.stdin

    @property
    def lines(self) -> list[bytes]:
        """Lines without their terminator (``\\n`` or ``\\r\\n``); a final newline adds no line."""
        if self._lines is None:
            self._lines = split_lines(self.data)
        return self._lines

    def head(self, max_lines: int = 20, max_bytes: int = HEAD_BYTES) -> list[bytes]:
        """The first non-blank lines, for format sniffing."""
        chunk = self.data[:max_bytes]
        out = []
        for line in split_lines(chunk):
            if line.strip():
                out.append(line)
                if len(out) >= max_lines:
                    break
        return out


def split_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if data.find(b"\r") != -1:
        lines = [ln[:-1] if ln.endswith(b"\r") else ln for ln in lines]
    return lines


def gunzip_into(
    read: Callable[[int], bytes], write: Callable[[bytes], object]
) -> tuple[int, str | None]:
    """Decompress every gzip member of the stream ``read(n)`` gives into ``write``, a
    chunk at a time (memory does not grow with the file); returns the bytes written and
    a warning when the stream is corrupt or cut short (what came before it is kept)."""
    written = 0
    pending = read(_CHUNK)
    while True:
        while len(pending) < len(_GZIP_MAGIC):  # a member may start at a chunk's very end
            more = read(_CHUNK)
            if not more:
                break
            pending += more
        if not pending.startswith(_GZIP_MAGIC):
            return written, None  # trailing bytes that are no gzip member are ignored
        d = zlib.decompressobj(wbits=47)
        try:
            while True:
                # at most _OUT_MAX bytes a step: a chunk of a highly compressed file
                # could otherwise come out as a gigabyte at once
                out = d.decompress(pending, _OUT_MAX)
                write(out)
                written += len(out)
                if d.eof:
                    break
                if d.unconsumed_tail or len(out) == _OUT_MAX:
                    pending = d.unconsumed_tail  # zlib may still hold output for b""
                    continue
                pending = read(_CHUNK)
                if not pending:
                    break
        except zlib.error as exc:
            return written, f"corrupt gzip data after {written} decompressed bytes ({exc})"
        if not d.eof:
            return written, f"truncated gzip stream: kept the first {written} decompressed bytes"
        pending = d.unused_data


def is_gzip(path: str | Path) -> bool:
    """Whether the file starts like a gzip stream."""
    with open(path, "rb") as f:
        return f.read(len(_GZIP_MAGIC)) == _GZIP_MAGIC


def _gunzip(raw: bytes) -> tuple[bytes, str | None]:
    """Decompress every gzip member; keep what can be read of a truncated stream."""
    out = bytearray()
    _, warning = gunzip_into(io.BytesIO(raw).read, out.extend)
    return bytes(out), warning


def _unzip_har(content: Content) -> None:
    """``content`` holding a zip archive with one ``.har`` member (what Playwright writes
    when asked to record a HAR into a ``.zip``) reads as that HAR, its other members
    kept as the attachments its entries name. Any other zip is left as it is."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content.data))
        hars = [i for i in archive.infolist() if i.filename.lower().endswith(".har")]
        if len(hars) != 1:
            return
        data = archive.read(hars[0])
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError, EOFError, zlib.error):
        return
    members = {i.filename for i in archive.infolist() if not i.is_dir()}

    def attachment(name: str) -> bytes | None:
        if name not in members:
            return None
        try:
            return archive.read(name)
        except (zipfile.BadZipFile, OSError, RuntimeError, ValueError, EOFError, zlib.error):
            return None

    content.data, content.compressed, content.attachment = data, True, attachment
    content.notes.append(f"read {hars[0].filename} from the zip archive")


def read_content(path: str | Path, limit: int | None = None) -> Content:
    """Read a capture file; raises :class:`CaptureError` when it cannot be read at all.

    With ``limit``, an uncompressed file larger than that is read only up to it
    (``partial`` is set): enough to detect the format of a file that will be
    streamed. Compressed and wide-encoded (UTF-16, UTF-32) files are always read whole.
    """
    source = str(path)
    if source == STDIN:
        return _from_bytes(source, _read_stdin(), stdin=True)
    partial = False
    try:
        with open(path, "rb") as f:
            raw = f.read(limit) if limit is not None else f.read()
            if limit is not None and not raw.startswith((_GZIP_MAGIC, _ZIP_MAGIC, *_WIDE_MARKS)):
                partial = bool(f.read(1))
            elif limit is not None:
                raw += f.read()
    except OSError as exc:
        raise CaptureError(source, f"cannot read: {exc.strerror or exc}") from exc
    return _from_bytes(source, raw, partial=partial)


def _read_stdin() -> bytes:
    """All of standard input; refused when it is a terminal, which would wait for typing."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        raise CaptureError(STDIN, "standard input is a terminal: pipe a capture into it")
    try:
        return stream.buffer.read()
    except OSError as exc:
        raise CaptureError(STDIN, f"cannot read standard input: {exc.strerror or exc}") from exc


def _from_bytes(source: str, raw: bytes, *, partial: bool = False, stdin: bool = False) -> Content:
    """The content of ``raw``: decompressed, decoded to UTF-8, its BOM set aside."""
    content = Content(source=source, data=raw, partial=partial, stdin=stdin)
    if raw.startswith(_ZIP_MAGIC):
        _unzip_har(content)
    if raw.startswith(_GZIP_MAGIC):
        data, warning = _gunzip(raw)
        if data or warning is None:
            content.data, content.compressed = data, True
            if warning:
                content.warnings.append(warning)
        # else: two bytes that look like gzip but nothing decompresses: read it as it is

    for mark, codec, name in _WIDE_BOMS:
        if content.data.startswith(mark):
            content.data, note = _to_utf8(content.data[len(mark) :], codec, name)
            content.transcoded = name
            content.notes.append(note)
            break
    if content.data.startswith(_BOM):
        content.data = content.data[len(_BOM) :]
        content.bom = True
    return content


def _to_utf8(data: bytes, codec: str, name: str) -> tuple[bytes, str]:
    """``data`` decoded from ``codec`` and encoded as UTF-8, and the note saying so. What
    cannot be decoded (a lone surrogate, a cut last unit) becomes U+FFFD, and the note
    counts it: every line is still read."""
    try:
        return data.decode(codec).encode("utf-8"), f"decoded from {name}"
    except UnicodeDecodeError:
        text = data.decode(codec, errors="replace")
    # the U+FFFD the file holds itself are in both decodings; the others replaced a unit
    replaced = text.count("\ufffd") - data.decode(codec, errors="ignore").count("\ufffd")
    units = "code unit" if replaced == 1 else "code units"
    return text.encode(
        "utf-8"
    ), f"decoded from {name} ({replaced} undecodable {units} replaced with U+FFFD)"


#: control bytes, which text lines do not hold (tab, CR and form feed aside)
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0e-\x1f]")
#: a line this long that reads as text does not occur in binary data by chance: each byte
#: of random data is printable ASCII or part of valid UTF-8 with odds of about 0.4
_MIN_TEXT_LINE = 16


def _is_text(line: bytes) -> bool:
    if _CONTROL.search(line):
        return False
    try:
        # not final: the head may end inside a character
        codecs.getincrementaldecoder("utf-8")().decode(line, final=False)
    except UnicodeDecodeError:
        return False
    return True


def looks_binary(content: Content) -> bool:
    """Not a text capture: some line in the first 8 KiB is not text (UTF-8 without control
    characters) and no line of some length is. Judged line by line, not on the whole
    head, so that a text capture with a corrupt line (the NUL bytes a crash leaves, a
    stray binary write) is still read, its corrupt lines reported as invalid, instead of
    the whole file being refused."""
    head = content.data[:8192]
    if not head:
        return False
    lines = head.split(b"\n")
    text = [_is_text(line) for line in lines]
    if all(text):
        return False
    return not any(ok and len(line) >= _MIN_TEXT_LINE for ok, line in zip(text, lines, strict=True))
