"""Exceptions raised by mcptrace.

    McpTraceError
     ├── CaptureError          a file could not be read or its format not recognised
     │    └── UnknownFormatError
     └── UsageError            the caller asked for something that does not exist

Bad *lines* never raise: they become ``invalid`` rows in the messages table.
Only whole files that cannot be read at all produce a :class:`CaptureError`, and
:func:`mcptrace.load` records those in ``Trace.sources`` instead of raising unless
every input failed.
"""

from __future__ import annotations


class McpTraceError(Exception):
    """Base class of every mcptrace error."""


class CaptureError(McpTraceError):
    """A capture file could not be read."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class UnknownFormatError(CaptureError):
    """No loader recognised the file's content."""


class UsageError(McpTraceError):
    """Invalid arguments (unknown format name, no inputs, bad option value)."""
