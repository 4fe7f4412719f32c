"""What every loader module provides, and what it gets.

A loader module (one per capture format) defines:

* ``NAME`` -- the format name users pass to ``--format``;
* ``DESCRIPTION`` -- one line for ``mcptrace formats`` and the README;
* ``sniff(head: Head) -> int`` -- confidence 0..100 that the file is in this
  format, judged from the first lines' content only (never the file name);
* ``load(content: Content, ctx: LoadContext) -> LoadResult``.

Loaders never raise on bad lines: each one becomes an ``invalid`` row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Protocol

import polars as pl

from mcptrace import _json
from mcptrace.loaders.reader import HEAD_BYTES, STDIN, Content

#: times from 10000-01-01 on (in microseconds since the epoch) fit neither the tables'
#: times nor a Python datetime: a loader leaves them unknown and says so
MAX_US = 253_402_300_800_000_000
#: the longest duration a loader takes as one (about 31 years): a longer one is corrupt,
#: and would put a request before any time the tables hold
MAX_DURATION_MS = 1e12


def line_list(lines: list[int], most: int = 5) -> str:
    """Line numbers for a note: ``4, 9, 12``, the first ``most`` and ``...`` after."""
    return ", ".join(map(str, lines[:most])) + (", ..." if len(lines) > most else "")


@dataclass(frozen=True)
class LoadContext:
    """Options that apply to every file of one load() call."""

    source: str
    tz: str | None = None

    @property
    def stem(self) -> str:
        """File name without directories and capture suffixes, for default session keys
        (``stdin`` for standard input, the path ``-``)."""
        if self.source == STDIN:
            return "stdin"
        name = PurePath(self.source).name
        for suffix in (".gz", ".jsonl", ".ndjson", ".json", ".log", ".txt", ".har"):
            name = name.removesuffix(suffix)
        return name or self.source


@dataclass
class LoadResult:
    """A loader's output: message rows plus facts about the file as a whole."""

    messages: pl.DataFrame
    lines: int
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    #: call-level records of formats that have no message frames (OpenTelemetry spans,
    #: gateway activity logs), in the calls table's schema (``CALLS.conform``)
    calls: pl.DataFrame | None = None


@dataclass
class Head:
    """The first non-blank lines of a file, decoded and (where possible) parsed."""

    source: str
    lines: list[str]
    parsed: list[Any]  # the JSON value of each line, or a _NotJson marker
    whole: Any  # the whole document parsed as JSON (for single-document formats), or NOT_JSON

    def json_objects(self) -> list[dict[str, Any]]:
        return [p for p in self.parsed if isinstance(p, dict)]


_NON_SPACE = re.compile(rb"\S")


class _NotJson:
    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Any = _NotJson()


def _parsed_lines(content: Content, max_lines: int) -> tuple[list[str], list[Any]]:
    """The first non-blank lines of ``content``, decoded, and the JSON value of each."""
    lines = [ln.decode("utf-8", errors="replace") for ln in content.head(max_lines)]
    parsed: list[Any] = []
    for ln in lines:
        try:
            # a lone surrogate escape does not hide what format a line is in
            parsed.append(_json.loads_mending(ln)[0])
        except _json.JSONDecodeError:
            parsed.append(NOT_JSON)
    return lines, parsed


def _one_document(data: bytes, parsed: list[Any]) -> bool:
    """Whether ``data`` (whose first lines parse to ``parsed``) may be one JSON document
    that spans lines, as single-document formats (Inspector export, HAR) are: it starts
    with [ or {, and its first line is not a whole JSON value followed by more text
    (that is JSON Lines, and parsing the whole of it again would cost a full pass over
    up to 64 MiB)."""
    first = _NON_SPACE.search(data)
    if first is None or data[first.start() : first.start() + 1] not in (b"[", b"{"):
        return False
    first_is_value = bool(parsed) and parsed[0] is not NOT_JSON
    return not (first_is_value and _NON_SPACE.search(data, data.find(b"\n") + 1 or len(data)))


def make_head(content: Content, max_lines: int = 20) -> Head:
    lines, parsed = _parsed_lines(content, max_lines)
    whole: Any = NOT_JSON
    if _one_document(content.data, parsed) and len(content.data) <= 64 * 1024 * 1024:
        try:
            whole = _json.loads_mending(content.data)[0]
        except _json.JSONDecodeError:
            whole = NOT_JSON
    return Head(source=content.source, lines=lines, parsed=parsed, whole=whole)


def make_head_of_start(content: Content, max_lines: int = 20) -> Head | None:
    """The head :func:`make_head` makes of any file that starts with ``content`` (at
    least :data:`~mcptrace.loaders.reader.HEAD_BYTES` of it), or None when the rest of
    the file could make it differ: when the start is blank, or when the file may be one
    JSON document, which is parsed whole."""
    if len(content.data) < HEAD_BYTES or _NON_SPACE.search(content.data) is None:
        return None
    lines, parsed = _parsed_lines(content, max_lines)
    if _one_document(content.data, parsed):
        return None
    return Head(source=content.source, lines=lines, parsed=parsed, whole=NOT_JSON)


class LoaderModule(Protocol):
    NAME: str
    DESCRIPTION: str

    def sniff(self, head: Head) -> int: ...

    def load(self, content: Content, ctx: LoadContext) -> LoadResult: ...
