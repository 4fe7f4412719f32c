"""Capture loaders: format detection and dispatch.

Each format lives in its own module (see :mod:`mcptrace.loaders.base` for the
contract) and is listed in :data:`FORMATS` explicitly, so grep finds them all.
Detection looks at content only: every loader rates the first lines and the
highest confident score wins.
"""

from __future__ import annotations

import os
from dataclasses import replace

from mcptrace.errors import CaptureError, UnknownFormatError, UsageError
from mcptrace.loaders import (
    capture,
    chunked,
    claude_code,
    claude_desktop,
    cursor,
    gateway,
    har,
    inspector,
    mcpjam,
    mcpsnoop,
    mcpspy,
    otlp,
    recorder,
    stdio,
    vscode,
)
from mcptrace.loaders.base import (
    Head,
    LoadContext,
    LoaderModule,
    LoadResult,
    make_head,
    make_head_of_start,
)
from mcptrace.loaders.reader import HEAD_BYTES, Content, looks_binary, read_content

#: every loader, in tie-break order (more specific formats first)
FORMATS: dict[str, LoaderModule] = {
    capture.NAME: capture,
    mcpsnoop.NAME: mcpsnoop,
    mcpjam.NAME: mcpjam,
    recorder.NAME: recorder,
    mcpspy.NAME: mcpspy,
    gateway.NAME: gateway,
    claude_code.NAME: claude_code,
    inspector.NAME: inspector,
    har.NAME: har,
    otlp.NAME: otlp,
    claude_desktop.NAME: claude_desktop,
    cursor.NAME: cursor,
    vscode.NAME: vscode,
    stdio.NAME: stdio,
}

#: below this score a loader's claim is not trusted
_MIN_SCORE = 40


def register(module: LoaderModule, *, before: str | None = None) -> None:
    """Add a loader module to :data:`FORMATS` (optionally ahead of another in tie-breaks)."""
    if before is None or before not in FORMATS:
        FORMATS[module.NAME] = module
        return
    items = list(FORMATS.items())
    index = [name for name, _ in items].index(before)
    items.insert(index, (module.NAME, module))
    FORMATS.clear()
    FORMATS.update(items)


def detect(content: Content) -> str:
    """Name of the format of ``content``; raises :class:`UnknownFormatError`."""
    if not content.data.strip():
        # an empty capture is still a capture: it contributes no rows
        return stdio.NAME
    return _format_of_head(content, make_head(content))


def _format_of_head(content: Content, head: Head) -> str:
    """:func:`detect` of content that is not blank, whose head is ``head``."""
    if looks_binary(content):
        raise UnknownFormatError(content.source, "binary content, not a text capture")
    scores = [(module.sniff(head), -i, name) for i, (name, module) in enumerate(FORMATS.items())]
    score, _, name = max(scores)
    if score < _MIN_SCORE:
        sample = head.lines[0][:80] if head.lines else ""
        raise UnknownFormatError(
            content.source,
            f"unrecognised capture format (first line: {sample!r}); "
            # every command takes --input-format; some also call it --format
            f"force one with --input-format: {', '.join(FORMATS)}",
        )
    return name


#: files larger than this are not read into memory whole: only their head is,
#: for detection, and line formats are then streamed from disk in chunks
STREAM_BYTES = 64 << 20


def detect_file(
    path: str, *, format: str | None = None, keep: int | None = None
) -> tuple[str, Content]:
    """The format of a file (forced or detected) and the content detection read.

    Only the first :data:`STREAM_BYTES` of a big uncompressed file are read
    (``content.partial``); raises :class:`CaptureError` if the file cannot be read.

    With ``keep``, the content of a file read as it is on disk (see
    ``Content.as_on_disk``) is cut to its first ``keep`` bytes, and marked ``partial``,
    when it is longer: the loaders then read the file from disk. Detection then reads
    only the start of such a file (at least the :data:`HEAD_BYTES` whose lines are
    sniffed, and the 8 KiB ``looks_binary`` judges) when that start decides the format
    as the first :data:`STREAM_BYTES` would: when it is not blank and the file cannot
    be one JSON document, which is parsed whole (see :func:`make_head_of_start`). Else
    those are read: 64 MiB read only to learn that a big file is JSON Lines took
    ~35 ms before a 0.5 GB capture could start loading.
    """
    if format is not None and format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    # a byte order mark (3 bytes) more, and one byte more than kept, to tell a longer file
    start_bytes = max(keep or 0, HEAD_BYTES) + 3 + 1
    if keep is not None and start_bytes < STREAM_BYTES:
        start = read_content(path, limit=start_bytes)
        # a start that is the whole file (or its whole content, decompressed) is what
        # the bigger read gives; a partial one is exactly as long as it, and longer
        # than keep, so cut the same
        if not start.partial:
            return (format or detect(start)), _kept(start, keep)
        if format is not None:
            return format, _kept(start, keep)
        head = make_head_of_start(start)
        if head is not None:
            return _format_of_head(start, head), _kept(start, keep)
    content = read_content(path, limit=STREAM_BYTES)
    name = format or detect(content)
    return name, content if keep is None else _kept(content, keep)


def _kept(content: Content, keep: int) -> Content:
    """``content`` itself when at most ``keep`` bytes or not the file's own bytes
    (decompressed, decoded or read from standard input: they cannot be read again
    cheaply, or at all), else only its head, marked ``partial``."""
    if not content.as_on_disk or len(content.data) <= keep:
        return content
    return replace(content, data=content.data[:keep], partial=True, _lines=None)


def parse_file(path: str, name: str, content: Content, *, tz: str | None = None) -> LoadResult:
    """Parse a file whose format is known, streaming it from disk when it is big."""
    module = FORMATS[name]
    ctx = LoadContext(source=path, tz=tz)
    if chunked.is_chunked(module):
        if content.partial:
            return chunked.load_path(module, path, ctx)  # type: ignore[arg-type]
        return chunked.load_bytes(module, content.data, ctx)  # type: ignore[arg-type]
    if content.partial:
        content = read_content(path)
    return module.load(content, ctx)


def content_bytes(path: str, content: Content) -> int:
    """Size of the (decompressed) content of a file, also when only its head was read."""
    return os.path.getsize(path) if content.partial else len(content.data)


def load_file(
    path: str, *, format: str | None = None, tz: str | None = None
) -> tuple[str, LoadResult, Content]:
    """Detect and parse one file; raises :class:`CaptureError` if it cannot be read at all."""
    name, content = detect_file(path, format=format)
    return name, parse_file(path, name, content, tz=tz), content


__all__ = [
    "FORMATS",
    "CaptureError",
    "LoadContext",
    "LoadResult",
    "detect",
    "load_file",
    "register",
]
