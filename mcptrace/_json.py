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
    try:
        return orjson.dumps(obj, default=str, option=_DUMP_OPTIONS).decode()
    except TypeError as exc:
        # orjson parses up to 1,024 levels but writes only 254: a capture line between the
        # two must still get its message text
        if "ecursion" not in str(exc):
            raise
        return _dumps_deep(obj)


class _Token(str):
    """Literal output text on :func:`_dumps_deep`'s stack (as opposed to a value)."""


def _dumps_deep(obj: Any) -> str:
    """Compact JSON of a value nested deeper than orjson writes, without recursion;
    the leaves are still written by orjson."""
    out: list[str] = []
    stack: list[Any] = [obj]
    while stack:
        item = stack.pop()
        if type(item) is _Token:
            out.append(item)
        elif type(item) is dict:
            out.append("{")
            stack.append(_Token("}"))
            for i, (key, value) in reversed(list(enumerate(item.items()))):
                stack.append(value)
                name = orjson.dumps(key if type(key) is str else str(key)).decode()
                stack.append(_Token(("," if i else "") + name + ":"))
        elif type(item) is list:
            out.append("[")
            stack.append(_Token("]"))
            for i, value in reversed(list(enumerate(item))):
                stack.append(value)
                if i:
                    stack.append(_Token(","))
        else:
            out.append(orjson.dumps(item, default=str, option=_DUMP_OPTIONS).decode())
    return "".join(out)


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
