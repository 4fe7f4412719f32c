"""mcptrace: offline analysis of Model Context Protocol (MCP) traffic.

Load captures into Polars tables (messages, calls, sessions), lint them against
the protocol revision each session speaks, and measure them.

>>> import mcptrace
>>> trace = mcptrace.load("sample_traces/")          # doctest: +SKIP
>>> trace.sessions.select("session", "revision")     # doctest: +SKIP
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from mcptrace.errors import CaptureError, McpTraceError, UnknownFormatError, UsageError
from mcptrace.loaders import FORMATS
from mcptrace.schema import CALLS, MESSAGES, SESSIONS, SOURCES
from mcptrace.trace import Trace, load

try:
    __version__ = version("mcptrace")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = [
    "CALLS",
    "FORMATS",
    "MESSAGES",
    "SESSIONS",
    "SOURCES",
    "CaptureError",
    "McpTraceError",
    "Trace",
    "UnknownFormatError",
    "UsageError",
    "__version__",
    "load",
]
