"""The C scanner (:mod:`mcptrace._scan`) seen from Python: chunks in, message rows out.

The scanner takes the lines it can turn into rows exactly as the Python path
would (see the comment at the top of ``mcptrace/_scan.c``) and returns the others
by position; the loaders parse those with orjson as before and merge the two in
line order. Results are therefore the same with or without the extension: it is
built when a C compiler is present at install time, and ``MCPTRACE_PURE_PYTHON=1``
turns it off (the tests compare both paths).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Literal

import polars as pl

from mcptrace.loaders.base import LoadContext
from mcptrace.loaders.reader import split_lines
from mcptrace.loaders.rows import read_times
from mcptrace.schema import MESSAGES, Timestamp

#: the interface of ``_scan`` this module is written for (``SCAN_INTERFACE`` in ``_scan.c``)
SCAN_INTERFACE = 6

_scan: ModuleType | None
try:
    _scan = importlib.import_module("mcptrace._scan")
except ImportError:  # built without a C compiler: the pure-Python path does all the work
    _scan = None
if _scan is not None and getattr(_scan, "INTERFACE", None) != SCAN_INTERFACE:
    # built from an older checkout and not rebuilt since (an editable install builds it
    # once): its columns are not the ones read below, so the pure-Python path is used
    _scan = None

Mode = Literal["capture", "stdio"]
#: (line number, start, end) of a line the scanner left to the Python path
SlowLine = tuple[int, int, int]
#: view offsets in the scanner's columns are 32-bit
_MAX_CHUNK = (1 << 31) - 2


def available() -> bool:
    """Whether the C scanner is built and not turned off by ``MCPTRACE_PURE_PYTHON``."""
    return _scan is not None and os.environ.get("MCPTRACE_PURE_PYTHON", "") in ("", "0")


def sessions(data: bytes | memoryview, quick: bool = False) -> tuple[bytes, bytes]:
    """The scanner's light pass over capture lines (see ``sessions`` in ``_scan.c``): a
    state byte per line (0 no session of its own, 1 its own, 2 unsure) and the 64-bit
    hash of each own session. ``quick`` reads the session of a line that looks whole
    from the members before ``msg`` (see :mod:`mcptrace.loaders.partition` for how a
    line misread so is caught). Needs the scanner (check :func:`available`)."""
    assert _scan is not None
    states: bytes
    hashes: bytes
    states, hashes = _scan.sessions(data, int(quick))
    return states, hashes


def keep_freed(on: bool) -> None:
    """While ``on``, the scanner keeps the blocks that are freed (a share's text and the
    columns it mostly filled, as the share is dropped) for its next allocations of the
    same kind, instead of giving them back to the system: fresh pages cost the kernel
    far more than what fills them (see ``keep_freed`` in ``_scan.c``). :func:`drop_kept`
    gives back what was not reused; :func:`kept` says how much is kept."""
    if _scan is not None:
        _scan.keep_freed(on)


def kept(text: bool) -> int:
    """Bytes kept by :func:`keep_freed`: of text (``text``) or of columns."""
    if _scan is None:
        return 0
    count: int = _scan.kept(text)
    return count


def drop_kept() -> int:
    """Give the blocks kept by :func:`keep_freed` back to the system; their bytes."""
    if _scan is None:
        return 0
    dropped: int = _scan.drop_kept()
    return dropped


def lines(data: bytes | memoryview) -> int:
    """The lines in ``data``, counted as :func:`mcptrace.loaders.chunked.line_count` counts
    them, without holding the GIL. Needs the scanner (check :func:`available`)."""
    assert _scan is not None
    count: int = _scan.lines(data)
    return count


def read(fd: int, offset: int, length: int) -> memoryview | None:
    """Up to ``length`` bytes of the open file ``fd`` from ``offset`` (fewer where the file
    ends), read without the GIL into memory that :func:`scan` keeps as it is instead of
    copying; None when the scanner cannot read files (not built, turned off, or a
    platform without ``pread``)."""
    if _scan is None or not available() or not hasattr(_scan, "read"):
        return None
    return memoryview(_scan.read(fd, offset, length))


def map_file(fd: int, offset: int, length: int) -> memoryview | None:
    """As :func:`read`, but the bytes are the file's pages, mapped (private, read-only)
    rather than copied: no copy and no fresh memory. None when that cannot be done (the
    scanner not built or turned off, a platform other than Linux, the mapping refused),
    and then :func:`read` does. A page cut from the file while it is mapped reads as
    zeros instead of killing the process (SIGBUS) and counts in :func:`cut_faults`: the
    caller must check that count (and the file) before it trusts what it read, and
    must not keep the bytes longer than it needs them (see ``map`` in ``_scan.c``)."""
    if _scan is None or not available() or not hasattr(_scan, "map"):
        return None
    chunk = _scan.map(fd, offset, length)
    return None if chunk is None else memoryview(chunk)


def cut_faults() -> int:
    """How many mapped pages (:func:`map_file`) were found cut from their file so far."""
    if _scan is None:
        return 0
    count: int = _scan.cut_faults()
    return count


def session_hash(session: str) -> int:
    """The hash :func:`sessions` gives a line whose session is ``session``."""
    assert _scan is not None
    value: int = _scan.fnv(session.encode())
    return value


def scan(
    data: bytes | memoryview,
    first_line: int,
    mode: Mode,
    *,
    source: str,
    format: str,
    transport: str = "unknown",
    select: bytes | None = None,
    wanted: int = 0,
    tz: str | None = None,
) -> tuple[pl.DataFrame, list[SlowLine]] | None:
    """Rows for the lines of ``data`` the scanner takes (messages schema, sessions not
    yet filled) and the lines it leaves; None when the scanner cannot be used. With
    ``select`` (a byte per line), only the lines whose byte is ``wanted`` are read.
    ``tz`` is the zone of times written without one (UTC when None)."""
    if _scan is None or not available() or len(data) > _MAX_CHUNK:
        return None
    columns, _lines, slow = _scan.scan(
        data, first_line, _scan.CAPTURE if mode == "capture" else _scan.STDIO, select, wanted
    )
    if not columns.rows():
        # no line taken (an HTTP capture's lines all carry headers, which the scanner
        # leaves to Python): the empty frame is shared, not built (~2 ms) for each file
        return _EMPTY, slow
    rows = pl.DataFrame([_column(columns, i) for i in range(_scan.NCOLS)])
    n = rows.height
    # the scanner reads the common RFC 3339 form itself, and keeps the text only of the
    # times it could not read: Polars parses those
    ts = rows["ts_us"].cast(Timestamp)
    unread = rows["ts_text"].is_not_null().arg_true()
    local: pl.Series | None = None
    if len(unread):
        others, zoneless = read_times(rows["ts_text"].gather(unread), tz=tz)
        ts = ts.scatter(unread, others)
        if zoneless is not None:
            local = _constant(False, pl.Boolean(), n).scatter(unread, zoneless)
    untimed = ts.null_count()
    derived: dict[str, pl.Series] = {
        # one copy of the path, gathered: a repeated long string costs ~200 bytes a row
        "source": pl.Series([source], dtype=pl.String).gather(_constant(0, pl.UInt32(), n)),
        "format": _constant(format, pl.String(), n),
        "ordinal": _constant(None, pl.Int64(), n),
        "ts": ts,
        "ts_quality": (
            _constant("exact", _SCHEMA["ts_quality"], n)
            if not untimed and local is None
            else _constant("none", _SCHEMA["ts_quality"], n)
            if untimed == n
            else pl.select(
                pl.when(pl.lit(ts).is_null())
                .then(pl.lit("none"))
                .when(pl.lit(local if local is not None else False))
                .then(pl.lit("local"))
                .otherwise(pl.lit("exact"))
            ).to_series()
        ),
        "direction_inferred": _constant(False, pl.Boolean(), n),
        "unordered": _constant(False, pl.Boolean(), n),
        "direction": _decode(rows["direction"]),
        "kind": _decode(rows["kind"]),
        "id_type": _decode(rows["id_type"]),
        # a line without a transport of its own has the file's
        "transport": _decode(rows["transport"], transport),
        "batch_index": _constant(None, pl.Int32(), n),
        "batched": _constant(False, pl.Boolean(), n),
        # the lines the scanner takes carry no HTTP exchanges
        "exchange": _constant(None, pl.Int64(), n),
        "parse_error": _constant(None, pl.String(), n),
    }

    def column(name: str, dtype: pl.DataType) -> pl.Series:
        s = derived[name] if name in derived else rows[name]
        # most columns come out of the scanner in their final type: a cast is a query
        return (s if s.dtype == dtype else s.cast(dtype)).alias(name)

    frame = pl.DataFrame([column(name, dtype) for name, dtype in _SCHEMA.items()])
    assert frame.height == n
    return frame, slow


#: the messages schema, built once (each ``MESSAGES.schema`` builds it anew)
_SCHEMA = MESSAGES.schema
_EMPTY = pl.DataFrame(schema=_SCHEMA)
#: the words of each Enum column the scanner writes as codes (see ``T_CODE`` in
#: ``_scan.c``), and the Enum column to gather each column's rows from, per word for null
_CODES: dict[str, tuple[str, ...]] = _scan.CODES if _scan is not None else {}
_WORDS: dict[tuple[str, str | None], pl.Series] = {}
#: long constant columns, sliced for each chunk (see :func:`_constant`)
_CONSTANTS: dict[tuple[object, pl.DataType], pl.Series] = {}


def _constant(value: str | bool | int | None, dtype: pl.DataType, n: int) -> pl.Series:
    """``value`` ``n`` times: a slice of one long column kept for the purpose, which every
    chunk shares (building it anew costs ~0.15 ms, ten times a chunk). A materialised
    column, not a broadcast literal: the chunks of a file are concatenated, and a
    literal would become one chunk beside the others' many, which Polars realigns
    (copying every string column) on the first query."""
    key = (value, dtype)
    whole = _CONSTANTS.get(key)
    if whole is None or whole.len() < n:
        # two threads may both build it: either copy will do
        whole = _CONSTANTS[key] = pl.repeat(value, max(n, 1 << 17), dtype=dtype, eager=True)
    return whole.slice(0, n)


def _decode(codes: pl.Series, null: str | None = None) -> pl.Series:
    """An Enum column of the scanner's codes (``codes.name`` is the column): code 0, no
    value, reads as ``null``, code k as the column's k-th word."""
    key = (codes.name, null)
    words = _WORDS.get(key)
    if words is None:
        words = _WORDS[key] = pl.Series([null, *_CODES[codes.name]], dtype=_SCHEMA[codes.name])
    return words.gather(codes)


class _Capsules:
    """One exported column, for Polars' Arrow PyCapsule import."""

    def __init__(self, schema: object, array: object) -> None:
        self._pair = (schema, array)

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self._pair


def numbers(data: bytes | memoryview, width: Literal[1, 8]) -> pl.Series:
    """The bytes of ``data`` as a column of unsigned integers ``width`` bytes wide (UInt8
    or UInt64, this machine's byte order), copied. Needs the scanner (check
    :func:`available`)."""
    assert _scan is not None
    return pl.Series(_Capsules(*_scan.numbers(data, width)))


def bytes_of(column: pl.Series) -> bytes:
    """A UInt8 column without nulls as bytes, a byte a value (``select`` of :func:`scan`).
    Needs the scanner (check :func:`available`)."""
    assert _scan is not None
    out: bytes = _scan.bytes_of(column.__arrow_c_stream__())
    return out


def _column(columns: object, index: int) -> pl.Series:
    name, schema, array = columns.column(index)  # type: ignore[attr-defined]
    return pl.Series(_Capsules(schema, array)).alias(name)


#: a loader's pure-Python parser: numbered lines (and, when they are all of a chunk, the
#: chunk and its first line number) to message rows
LineParser = Callable[..., pl.DataFrame]


def parse_chunk(
    data: bytes | memoryview,
    first_line: int,
    ctx: LoadContext,
    mode: Mode,
    parse_lines: LineParser,
    *,
    format: str,
    transport: str = "unknown",
    select: bytes | None = None,
    wanted: int = 0,
) -> pl.DataFrame:
    """A chunk's rows: the scanner's, merged in line order with those ``parse_lines``
    makes of the lines it left; all of them from ``parse_lines`` without the scanner.
    With ``select`` (a byte per line), only the lines whose byte is ``wanted``."""
    scanned = scan(
        data,
        first_line,
        mode,
        source=ctx.source,
        format=format,
        transport=transport,
        select=select,
        wanted=wanted,
        tz=ctx.tz,
    )
    if scanned is None:
        data = bytes(data)
        every = enumerate(split_lines(data), first_line)
        if select is not None:
            return parse_lines(
                (
                    (line, text)
                    for line, text in every
                    if line - first_line < len(select) and select[line - first_line] == wanted
                ),
                ctx,
            )
        return parse_lines(every, ctx, data, first_line)
    fast, slow = scanned
    if not slow:
        return fast
    # bytes() copies the few slow lines of a mapped file; of bytes, it is the slice itself
    numbered: Iterable[tuple[int, bytes]] = ((line, bytes(data[a:b])) for line, a, b in slow)
    rest = parse_lines(numbered, ctx)
    if fast.is_empty():
        return rest
    return pl.concat([fast, rest]).sort("line", maintain_order=True)


__all__ = [
    "LineParser",
    "SlowLine",
    "available",
    "bytes_of",
    "cut_faults",
    "drop_kept",
    "keep_freed",
    "kept",
    "map_file",
    "numbers",
    "parse_chunk",
    "read",
    "scan",
    "session_hash",
    "sessions",
]
