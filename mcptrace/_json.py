"""The only module that touches orjson.

Everything else in mcptrace parses and writes JSON through these helpers, so the
error type, the float/int behaviour and the output options are decided once.
"""

from __future__ import annotations

import json as _stdlib_json  # noqa: TID251 - exact huge integers, see loads()
import re
from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError

#: orjson refuses integers outside the signed/unsigned 64-bit range unless asked;
#: captures are untrusted, so a huge id must not make serialisation fail.
_DUMP_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME


#: maps every digit to "0": a run of 19 zeros in the result is a run of 19 digits
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
#: the shortest integer outside the 64-bit range orjson keeps exact (-2**63 - 1) has 19
#: digits
_LONG_DIGIT_RUN = b"0" * 19


def _may_hold_huge_integer(data: bytes | bytearray | memoryview | str) -> bool:
    """Whether the text has a run of 19 digits (cheap: no regex, ~1 GB/s)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    elif isinstance(data, memoryview):
        data = bytes(data)
    return _LONG_DIGIT_RUN in data.translate(_DIGITS_TO_ZERO)


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON document (raises :data:`JSONDecodeError`).

    orjson reads an integer beyond the 64-bit range as a float, losing digits: request
    id ``123456789012345678901`` would become ``1.2345678901234568e+20``, a different
    (and fractional-looking) id. A document that may hold one is parsed again by the
    standard library, which keeps every integer exact; orjson has already checked it
    is strict JSON, so the two parsers agree on everything else.
    """
    value = orjson.loads(data)
    if _may_hold_huge_integer(data):
        try:
            return _stdlib_json.loads(bytes(data) if isinstance(data, memoryview) else data)
        except RecursionError:
            # nested deeper than Python's parser recurses (orjson reads 1,024 levels):
            # keep orjson's reading rather than fail on a valid document
            return value
    return value


#: what :func:`mend_surrogates` writes in its notes (the JR016 rule looks for it)
LONE_SURROGATE = "lone UTF-16 surrogate escape"

#: in JSON text: an escaped surrogate pair (kept), a lone surrogate escape (group 1), or
#: any other escape — matched whole, so that in ``\\ud800`` (an escaped backslash, then
#: text) no escape is seen
_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
    r"|\\.",
    re.DOTALL,
)


def mend_surrogates(text: str) -> tuple[str, str] | None:
    """``text`` with each lone UTF-16 surrogate escape (``\\ud83d`` without its pair, as
    JavaScript writes a string cut between the two halves of an emoji) written
    ``\\ufffd``, and a note saying where; None when it has none.

    JSON's grammar allows such escapes, but they denote no Unicode text: orjson, the
    official Python SDK (pydantic) and serde_json refuse the message. mcptrace reads it
    with U+FFFD in their place so that the rest of the message is still analysed. The
    replacement has the escape's length: positions in the text stay the same."""
    found: list[tuple[int, str]] = []

    def replace(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return match.group(0)
        found.append((match.start(), match.group(1)))
        return "\\ufffd"

    mended = _ESCAPE.sub(replace, text)
    if not found:
        return None
    pos, escape = found[0]
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return mended, (
        f"{LONE_SURROGATE} `{escape}` at line {line} column {column}{more} read as U+FFFD"
    )


def loads_mending(data: bytes | bytearray | memoryview | str) -> tuple[Any, str | None, str | None]:
    """Like :func:`loads`, but a text refused only for lone surrogate escapes is read
    with U+FFFD in their place (see :func:`mend_surrogates`): returns the value, the
    mended text (None when the text was fine) and the note to keep on the row."""
    try:
        return loads(data), None, None
    except JSONDecodeError as exc:
        if "surrogate" not in str(exc):
            raise
        try:
            text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise exc from None
        mended = mend_surrogates(text)
        if mended is None:
            raise
    # a text with another fault too raises that fault's error, at the same position
    return loads(mended[0]), mended[0], mended[1]


def dumps(obj: Any) -> str:
    """Serialise compactly to text; falls back to ``str`` for exotic values."""
    try:
        return orjson.dumps(obj, default=str, option=_DUMP_OPTIONS).decode()
    except TypeError as exc:
        # orjson parses up to 1,024 levels but writes only 254, and writes no integer
        # beyond 64 bits (which :func:`loads` keeps exact)
        if "ecursion" not in str(exc) and "64-bit" not in str(exc):
            raise
        return _dumps_deep(obj)


class _Token(str):
    """Literal output text on :func:`_dumps_deep`'s stack (as opposed to a value)."""


def _dumps_deep(obj: Any, *, pretty: bool = False, sort_keys: bool = False) -> str:
    """JSON of a value nested deeper than orjson writes (or holding integers beyond 64
    bits), without recursion; the other leaves are still written by orjson. Compact, or
    laid out as orjson's ``OPT_INDENT_2`` lays it out with ``pretty``."""
    out: list[str] = []
    # each value on the stack with its depth, which only indentation needs
    stack: list[tuple[Any, int]] = [(obj, 0)]
    colon = ": " if pretty else ":"

    def newline(depth: int) -> str:
        return "\n" + "  " * depth if pretty else ""

    while stack:
        item, depth = stack.pop()
        if type(item) is _Token:
            out.append(item)
        elif type(item) is dict:
            if not item:
                out.append("{}")
                continue
            out.append("{")
            stack.append((_Token(newline(depth) + "}"), depth))
            members = sorted(item.items(), key=lambda kv: str(kv[0])) if sort_keys else item.items()
            for i, (key, value) in reversed(list(enumerate(members))):
                stack.append((value, depth + 1))
                name = orjson.dumps(key if type(key) is str else str(key)).decode()
                stack.append((_Token(("," if i else "") + newline(depth + 1) + name + colon), 0))
        elif type(item) is list:
            if not item:
                out.append("[]")
                continue
            out.append("[")
            stack.append((_Token(newline(depth) + "]"), depth))
            for i, value in reversed(list(enumerate(item))):
                stack.append((value, depth + 1))
                stack.append((_Token(("," if i else "") + newline(depth + 1)), 0))
        elif type(item) is int:
            out.append(str(item))  # exact at any size
        else:
            out.append(orjson.dumps(item, default=str, option=_DUMP_OPTIONS).decode())
    return "".join(out)


def dumpb(obj: Any, *, pretty: bool = False, sort_keys: bool = False) -> bytes:
    """Serialise to UTF-8 bytes (for writers); like :func:`dumps`, any depth orjson
    reads and integers of any size are written."""
    option = _DUMP_OPTIONS
    if pretty:
        option |= orjson.OPT_INDENT_2
    if sort_keys:
        option |= orjson.OPT_SORT_KEYS
    try:
        return orjson.dumps(obj, default=str, option=option)
    except TypeError as exc:
        if "ecursion" not in str(exc) and "64-bit" not in str(exc):
            raise
        return _dumps_deep(obj, pretty=pretty, sort_keys=sort_keys).encode()


def describe_error(exc: Exception) -> str:
    """A short, positioned description of a decode error, for ``parse_error``."""
    msg = str(exc)
    pos = getattr(exc, "pos", None)
    if pos is not None and "char" not in msg:
        msg = f"{msg} (char {pos})"
    return f"invalid JSON: {msg}"
