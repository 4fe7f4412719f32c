"""Capture loaders: format detection and dispatch.

Each format lives in its own module (see :mod:`mcptrace.loaders.base` for the
contract) and is listed in :data:`FORMATS` explicitly, so grep finds them all.
Detection looks at content only: every loader rates the first lines and the
highest confident score wins.
"""

from __future__ import annotations

import os

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
from mcptrace.loaders.base import LoadContext, LoaderModule, LoadResult, make_head
from mcptrace.loaders.reader import Content, looks_binary, read_content

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
    if looks_binary(content):
        raise UnknownFormatError(content.source, "binary content, not a text capture")
    head = make_head(content)
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


def detect_file(path: str, *, format: str | None = None) -> tuple[str, Content]:
    """The format of a file (forced or detected) and the content detection read.

    Only the first :data:`STREAM_BYTES` of a big uncompressed file are read
    (``content.partial``); raises :class:`CaptureError` if the file cannot be read.
    """
    if format is not None and format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    content = read_content(path, limit=STREAM_BYTES)
    return (format or detect(content)), content


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
