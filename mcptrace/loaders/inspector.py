"""MCP Inspector v2 protocol export: one JSON array of message entries.

    [
      {
        "id": "3f6c1a52-9d4e-4b7a-8f21-6e0d2c9b14a7",
        "timestamp": "2025-12-04T09:41:17.204Z",
        "direction": "request",
        "origin": "client",
        "message": {"jsonrpc": "2.0", "id": 0, "method": "initialize", ...},
        "response": {"jsonrpc": "2.0", "id": 0, "result": {...}},
        "duration": 41
      },
      ...
    ]

The Inspector's web client (``modelcontextprotocol/inspector``, v2) downloads its
protocol log as ``JSON.stringify(entries, null, 2)``. ``origin`` says who sent
``message`` (``client`` -> c2s, ``server`` -> s2c; entries without it get their
direction inferred). A request's answer is folded into its entry as ``response``
with ``duration`` in ms; it is unfolded into a second row going the other way,
timed ``timestamp + duration`` (``ts_quality`` derived). Responses that could
not be folded are entries of their own. ``clientError`` (the Inspector rejected
the response) is kept as a warning in ``parse_error``.

One file is one session (the Inspector clears its log on disconnect), keyed by
the file name; the server is taken from an Inspector download name
(``inspector-protocol-<server>-<time>.json``; ``inspector-history-...`` from about
2026-05 to 2026-07) when the file still has it. The
transport is not recorded. The Inspector keeps the latest 1,000 entries only,
so an export of 1,000 entries, or one that does not start with ``initialize``,
is marked truncated.

Line numbers: a message row points at the line where its entry's ``{`` is, a
response row at the entry's ``"response":`` line. In the Inspector's own layout
(entries are the lines that are exactly ``  {``) these are found with one regex
pass over the bytes. When the layout differs (re-indented, minified, entries
that are not objects), a tokenizer finds where each array element starts and
both rows of an entry point there; if even that disagrees with the parsed
document, the entry's 1-based index + 1 is used (line 1 being the ``[``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote

from mcptrace import _json
from mcptrace.loaders.base import MAX_US, Head, LoadContext, LoadResult
from mcptrace.loaders.directions import infer_directions
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw, json_type

NAME = "inspector"
DESCRIPTION = "MCP Inspector v2 protocol export: a JSON array of {timestamp, origin, message, ...}"

#: the Inspector's MessageLogState default ``maxMessages`` (oldest entries dropped)
MAX_ENTRIES = 1000

_ORIGINS = {"client": "c2s", "server": "s2c"}
_FLIP = {"c2s": "s2c", "s2c": "c2s", "unknown": "unknown"}
_ENTRY_DIRECTIONS = {"request", "response", "notification"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
#: beyond this a time is not a date (and would not fit the ts column)

#: entry starts and entry-level ``"response"`` keys in JSON.stringify(_, null, 2) output
_PRETTY = re.compile(rb'^(?:  \{\r?$|    "response": )', re.MULTILINE)
#: JSON tokens: strings, structural characters, and runs of anything else (scalars)
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},]|[^\s\[\]{},"]+', re.DOTALL)
_OPEN, _CLOSE, _COMMA = frozenset(b"[{"), frozenset(b"]}"), ord(",")
_DOWNLOAD_NAME = re.compile(
    r"^inspector-(?:protocol|history)(?:-pinned|-unpinned)?-(?P<server>.+)"
    r"-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(?:\.\d+)?Z$"
)


def _is_entry(value: Any) -> bool:
    return (
        type(value) is dict
        and "direction" in value
        and "timestamp" in value
        and ("origin" in value or "message" in value)
    )


def sniff(head: Head) -> int:
    whole = head.whole
    if type(whole) is not list or not whole:
        return 0
    first = whole[:5]
    hits = sum(1 for e in first if _is_entry(e))
    return 95 if hits == len(first) else (60 if hits * 2 > len(first) else 0)


def _entry_lines(data: bytes, count: int) -> tuple[list[int], dict[int, int]]:
    """Start line of each of ``count`` array elements, and entry index -> response line."""
    starts: list[int] = []
    responses: dict[int, int] = {}
    line, pos = 1, 0
    for m in _PRETTY.finditer(data):
        line += data.count(b"\n", pos, m.start())
        pos = m.start()
        if data[pos + 2] == ord("{"):
            starts.append(line)
        elif starts:
            responses[len(starts) - 1] = line
    if len(starts) == count:
        return starts, responses
    starts = _element_lines(data)
    if len(starts) == count:
        return starts, {}
    return [i + 2 for i in range(count)], {}


def _element_lines(data: bytes) -> list[int]:
    """Start line of each element of the top-level JSON array, whatever the layout."""
    starts: list[int] = []
    depth, expect = 0, False
    line, pos = 1, 0
    for m in _TOKENS.finditer(data):
        c = data[m.start()]
        if depth == 1 and expect and c not in _CLOSE and c != _COMMA:
            line += data.count(b"\n", pos, m.start())
            pos = m.start()
            starts.append(line)
            expect = False
        if c in _OPEN:
            depth += 1
            expect = depth == 1
        elif c in _CLOSE:
            depth -= 1
        elif c == _COMMA and depth == 1:
            expect = True
    return starts


def _timestamp(value: Any) -> tuple[int | None, str | None, str | None]:
    """Microseconds since the epoch, quality override (naive times are local), problem."""
    if value is None:
        return None, None, "entry without a `timestamp`"
    if type(value) in (int, float):
        # epoch milliseconds: not what the Inspector writes, but what fixtures often use
        us = round(value * 1000)
        if abs(us) < MAX_US:
            return us, None, None
        return None, None, f"`timestamp` {value} is out of range"
    if type(value) is str:
        try:
            dt = datetime.fromisoformat(value)
            if dt.tzinfo is None:
                # a wall-clock time: read as UTC, like other zone-less captures
                return (dt.replace(tzinfo=UTC) - _EPOCH) // _US, "local", None
            return (dt - _EPOCH) // _US, None, None
        except (ValueError, OverflowError):
            return None, None, f"unreadable `timestamp` {_json.dumps(value)}"
    return None, None, f"`timestamp` is a JSON {json_type(value)}, not a string"


def _server_name(stem: str) -> str | None:
    m = _DOWNLOAD_NAME.match(stem)
    return unquote(m["server"]) if m else None


def _first_is_initialize(entries: list[Any]) -> bool:
    first = entries[0]
    if type(first) is not dict:
        return False
    msg = first.get("message")
    return type(msg) is dict and msg.get("method") == "initialize" and "id" in msg


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(source=ctx.source, tz=ctx.tz, format=NAME, default_session=ctx.stem)
    n_lines = len(content.lines)
    if not content.data.strip():
        return LoadResult(messages=rows.frame(), lines=n_lines)
    try:
        doc, _, mend_note = _json.loads_mending(content.data)
    except _json.JSONDecodeError as exc:
        first, _ = decode_raw(content.lines[0])
        rows.add_invalid(
            1, first, f"Inspector export is not valid JSON: {_json.describe_error(exc)}"
        )
        return LoadResult(messages=rows.frame(), lines=n_lines)
    if type(doc) is not list:
        rows.add_invalid(
            1,
            _json.dumps(doc),
            f"Inspector export is a JSON {json_type(doc)}, not an array of entries",
        )
        return LoadResult(messages=rows.frame(), lines=n_lines)

    starts, response_lines = _entry_lines(content.data, len(doc))
    server = _server_name(ctx.stem)
    for i, entry in enumerate(doc):
        line = starts[i]
        raw = _json.dumps(entry)
        if type(entry) is not dict:
            rows.add_invalid(
                line, raw, f"Inspector entry is a JSON {json_type(entry)}, not an object"
            )
            continue
        ts_us, quality, problem = _timestamp(entry.get("timestamp"))
        notes = [problem] if problem else []
        origin = entry.get("origin")
        direction = _ORIGINS.get(origin, "unknown") if type(origin) is str else "unknown"
        if origin is not None and direction == "unknown":
            notes.append(f"unknown `origin` {_json.dumps(origin)}")
        kind = entry.get("direction")
        if kind is not None and not (type(kind) is str and kind in _ENTRY_DIRECTIONS):
            notes.append(f"unknown entry `direction` {_json.dumps(kind)}")
        env = Envelope(ts_us=ts_us, session=ctx.stem, server=server, direction=direction)
        client_error = entry.get("clientError")
        rejected = (
            f"the Inspector rejected the response: {_text(client_error)}"
            if client_error is not None
            else None
        )
        has_response = "response" in entry
        if rejected and not has_response:
            notes.append(rejected)

        start = len(rows)
        if "message" not in entry:
            rows.add_invalid(
                line, raw, "; ".join([*notes, "Inspector entry without a `message`"]), env
            )
        else:
            msg = entry["message"]
            if type(msg) is dict:
                rows.add_parsed(line, raw, msg, None, env, "; ".join(notes) or None)
            else:
                why = f"`message` is a JSON {json_type(msg)}, not an object"
                rows.add_invalid(line, raw, "; ".join([*notes, why]), env, message=_text(msg))
        if quality:
            rows.override_ts_quality(start, quality)
        if not has_response:
            continue

        # the folded answer: sent the other way, timed by the Inspector's duration
        resp = entry["response"]
        duration = entry.get("duration")
        resp_notes = [rejected] if rejected else []
        resp_ts: int | None = None
        if isinstance(duration, int | float) and type(duration) is not bool and ts_us is not None:
            resp_ts = ts_us + round(duration * 1000)
            if abs(resp_ts) >= MAX_US:
                resp_ts = None
                resp_notes.append(f"`duration` {duration} is out of range")
        elif ts_us is not None:
            resp_notes.append("folded `response` without a numeric `duration`: its time is unknown")
        resp_env = Envelope(
            ts_us=resp_ts, session=ctx.stem, server=server, direction=_FLIP[direction]
        )
        resp_line = response_lines.get(i, line)
        start = len(rows)
        if type(resp) is dict:
            rows.add_parsed(resp_line, raw, resp, None, resp_env, "; ".join(resp_notes) or None)
        else:
            why = f"`response` is a JSON {json_type(resp)}, not an object"
            rows.add_invalid(
                resp_line, raw, "; ".join([*resp_notes, why]), resp_env, message=_text(resp)
            )
        rows.override_ts_quality(start, "derived")

    truncated = False
    file_notes: list[str] = [mend_note] if mend_note else []
    if len(doc) >= MAX_ENTRIES:
        truncated = True
        file_notes.append(
            f"{len(doc)} entries: the Inspector keeps the latest {MAX_ENTRIES:,} and drops the "
            "oldest, so the start of the session is probably missing"
        )
    if doc and not _first_is_initialize(doc):
        truncated = True
        file_notes.append(
            "the export does not start with an initialize request: the start of the session "
            f"was dropped (the Inspector keeps the latest {MAX_ENTRIES:,} entries) or cleared"
        )
    messages = infer_directions(rows.frame())
    return LoadResult(messages=messages, lines=n_lines, truncated=truncated, notes=file_notes)


def _text(value: Any) -> str:
    return value if type(value) is str else _json.dumps(value)
