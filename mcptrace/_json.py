"""The only module that touches orjson.

Everything else in mcptrace parses and writes JSON through these helpers, so the
error type, the float/int behaviour and the output options are decided once.
"""

from __future__ import annotations

from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError

#: orjson refuses integers outside the signed/unsigned 64-bit range unless asked;
#: captures are untrusted, so a huge id must not make serialisation fail.
_DUMP_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON document (raises :data:`JSONDecodeError`)."""
    return orjson.loads(data)


def dumps(obj: Any) -> str:
    """Serialise compactly to text; falls back to ``str`` for exotic values."""
    return orjson.dumps(obj, default=str, option=_DUMP_OPTIONS).decode()


def dumpb(obj: Any, *, pretty: bool = False, sort_keys: bool = False) -> bytes:
    """Serialise to UTF-8 bytes (for writers)."""
    option = _DUMP_OPTIONS
    if pretty:
        option |= orjson.OPT_INDENT_2
    if sort_keys:
        option |= orjson.OPT_SORT_KEYS
    return orjson.dumps(obj, default=str, option=option)


def describe_error(exc: Exception) -> str:
    """A short, positioned description of a decode error, for ``parse_error``."""
    msg = str(exc)
    pos = getattr(exc, "pos", None)
    if pos is not None and "char" not in msg:
        msg = f"{msg} (char {pos})"
    return f"invalid JSON: {msg}"
