"""mcptrace: offline analysis of Model Context Protocol (MCP) traffic.

Load captures into Polars tables (messages, calls, sessions), lint them against
the protocol revision each session speaks, and measure them.

>>> import mcptrace
>>> trace = mcptrace.load("sample_traces/")          # doctest: +SKIP
>>> trace.sessions.select("session", "revision")     # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcptrace.errors import CaptureError, McpTraceError, UnknownFormatError, UsageError
from mcptrace.listing import message_list
from mcptrace.loaders import FORMATS
from mcptrace.schema import CALLS, MESSAGES, SESSIONS, SOURCES
from mcptrace.trace import Trace, load

if TYPE_CHECKING:
    from mcptrace import analysis, plots

    __version__: str
    from mcptrace.linter import lint
    from mcptrace.linter.shares import lint_file


def __getattr__(name: str) -> Any:
    # the linter (every rule), the statistics and the plots (matplotlib) load on first
    # use: `mcptrace record` and the parser workers start without them
    if name == "lint":
        from mcptrace.linter import lint

        return lint
    if name == "lint_file":
        from mcptrace.linter.shares import lint_file

        return lint_file
    if name in ("analysis", "plots"):
        return importlib.import_module(f"mcptrace.{name}")
    if name == "__version__":
        # looked up on first use: importlib.metadata and the search of the installed
        # distributions cost every command ~20 ms at start
        globals()["__version__"] = _installed_version()
        return globals()["__version__"]
    raise AttributeError(f"module 'mcptrace' has no attribute {name!r}")


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcptrace")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0.0.0+unknown"


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
    "analysis",
    "lint",
    "lint_file",
    "load",
    "message_list",
    "plots",
]
