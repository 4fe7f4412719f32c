"""HAR 1.2 (HTTP Archive) of Streamable HTTP and HTTP+SSE traffic: browser devtools, proxies.

    {"log": {"version": "1.2", "creator": {...}, "entries": [
      {"startedDateTime": "2025-12-04T09:41:17.204Z", "time": 41.3,
       "request": {"method": "POST", "url": "https://api.example.com/mcp",
                   "headers": [{"name": "Mcp-Session-Id", "value": "..."}, ...],
                   "postData": {"mimeType": "application/json", "text": "{\\"jsonrpc\\": ...}"}},
       "response": {"status": 200, "statusText": "OK", "headers": [...],
                    "content": {"mimeType": "text/event-stream", "text": "...",
                                "encoding": "base64"}},
       "timings": {...}},
      ...]}}

Every entry is one HTTP exchange. An entry is MCP traffic when its request or
response body holds JSON-RPC, or when a header names MCP (``Mcp-Session-Id``,
``MCP-Protocol-Version``, ``Mcp-Method``, ...). Other entries (the page, its
scripts, analytics calls) are skipped, and the load notes how many.

Rows of an MCP entry:

* the request body (``postData.text``) becomes ``c2s`` rows: one message, or one row
  per element of a JSON array (a batch); a request without a body (the GET that
  opens a server stream, the DELETE that ends a session) is one ``transport`` row;
* the response becomes ``s2c`` rows: a JSON body is one message (or a batch); a
  ``text/event-stream`` body is split into events by the SSE rules (``data:`` lines
  of one event joined with newlines; comments such as heartbeats are not rows) and
  each event is one row, ``transport`` when its data is not JSON; an empty body
  (``202 Accepted``), an error status whose body is not JSON-RPC (``401`` with an
  OAuth error, an HTML page from a proxy) or a failed request (status 0) is one
  ``transport`` row saying so. ``content.encoding: base64`` bodies are decoded.

HTTP facts go on every row: ``http_method``; ``http_status`` (the response's,
also on the request rows, so rules and statistics can judge a request by the
answer it got); ``http_headers`` as a JSON object text, the request headers on
``c2s`` rows and the response headers on ``s2c`` rows, names as captured (repeated
headers joined with ``, ``). Transport is ``http``; ``server`` is the URL's host.

Times: request rows are timed ``startedDateTime``; response rows
``startedDateTime + time`` (the end of the exchange, ``ts_quality`` derived). A
HAR keeps no time per SSE event, so every event of one stream carries the time the
stream ended (the HTTP+SSE transport's, none: below). Rows are in entry order (HAR
orders entries by start time), except the events of a ``GET`` stream: they are moved
among the exchanges they came between, as far as the capture tells
(:mod:`mcptrace.loaders.har_streams`).

Sessions: the ``Mcp-Session-Id`` header of the request, else of the response (the
initialize response issues it); a 2026-07-28 request's own is left out when the
response names none (that revision has no sessions, and the server must ignore the
header). Exchanges without one (2026-07-28 is stateless,
and legacy servers may not issue ids) are keyed by their MCP endpoint,
``scheme://host[:port]/path`` without the query but for a ``sessionId`` parameter (an
HTTP+SSE endpoint's, which tells connections apart): the origin alone would merge two
servers behind one gateway, whose request ids would then collide in pairing.
The 2024-11-05 HTTP+SSE transport (a ``GET`` stream whose ``endpoint`` event names
the URL the client then ``POST``s to) is one session keyed by that announced URL,
query included (it carries the server's session id), with the stream's events moved
among the ``POST`` exchanges and their ``Accepted`` bodies kept as transport rows:
see :mod:`mcptrace.loaders.har_streams`.

Line numbers: a HAR is one pretty-printed document; every row of an entry points
at the line where the entry's ``{`` is (found with a tokenizer, whatever the
layout), or at the entry's 1-based index when that fails; in a HAR written on one
line (Playwright's) that is line 1 for every entry, so the ``exchange`` column (the
entry's index) is what tells exchanges apart. ``raw`` holds what the
row was read from: the request body, the response body, or the SSE event's lines.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mcptrace import _json
from mcptrace.loaders.base import MAX_US, NOT_JSON, Head, LoadContext, LoadResult
from mcptrace.loaders.har_streams import Stream, interleave, normalized_url, placed_events
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw, json_type

NAME = "har"
DESCRIPTION = (
    "HAR 1.2 (browser devtools, proxies) of Streamable HTTP or HTTP+SSE: JSON-RPC request "
    "bodies, JSON and SSE responses"
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
#: JSON tokens: strings, structural characters, and runs of anything else (scalars)
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},:]|[^\s\[\]{},:"]+', re.DOTALL)
_OPEN, _CLOSE = frozenset(b"[{"), frozenset(b"]}")
_OBJECT, _ARRAY, _COMMA, _COLON = ord("{"), ord("["), ord(","), ord(":")
_QUOTE = ord('"')
_SSE_LINES = re.compile(r"\r\n|\r|\n")
#: the start of a HAR document that is too big (or too damaged) to parse for sniffing
_HEAD_LOG = re.compile(r'^\s*\{?\s*"log"\s*:\s*\{', re.MULTILINE)
_HEAD_HAR_KEYS = re.compile(r'"(?:version|creator|entries)"\s*:')
#: a few characters of a non-JSON-RPC body are shown in its transport row
_BODY_PREVIEW = 200


def sniff(head: Head) -> int:
    whole = head.whole
    if type(whole) is dict:
        log = whole.get("log")
        if type(log) is dict and type(log.get("entries")) is list:
            return 95 if "version" in log else 70
        return 0
    if whole is NOT_JSON and head.lines:
        text = "\n".join(head.lines[:10])
        if _HEAD_LOG.search(text) and _HEAD_HAR_KEYS.search(text):
            return 75
    return 0


# -- line numbers ---------------------------------------------------------------


def _entry_lines(data: bytes, count: int) -> list[int]:
    """Start line of each of ``count`` elements of ``log.entries``, whatever the layout;
    the 1-based entry index when the tokenizer disagrees with the parsed document."""
    by_layout = _entry_lines_by_layout(data, count)
    return by_layout if by_layout is not None else _entry_lines_tokenized(data, count)


#: the `entries` member's array opening (a quote inside a JSON string is escaped, so
#: this never matches inside one)
_ENTRIES_ARRAY = re.compile(rb'"entries"\s*:\s*\[')
_NOT_SPACE = re.compile(rb"\S")


def _entry_lines_by_layout(data: bytes, count: int) -> list[int] | None:
    """The entry lines of a document laid out as HAR writers do, found without
    tokenizing it (which takes seconds for a 100 MB HAR): either everything from the
    entries array on is one line, or each entry starts a line with its ``{`` at one
    indentation, after a comma, and no other line starts so before the line that closes
    the array at its key's indentation. None for any other layout."""
    if count == 0:
        return []
    for found in _ENTRIES_ARRAY.finditer(data):
        opening = found.end() - 1
        newline = data.find(b"\n", opening)
        if newline == -1 or not data[newline:].strip():
            return [data.count(b"\n", 0, opening) + 1] * count
        first = _NOT_SPACE.search(data, opening + 1)
        if first is None or data[first.start()] != _OBJECT:
            continue  # a member named `entries` elsewhere, or not a list of objects
        start = first.start()
        line_start = data.rfind(b"\n", 0, start) + 1
        indent = data[line_start:start]
        if indent.strip():
            continue  # the first entry does not start its line
        # the array ends at a `]` starting a line at the indentation of its key's line
        key_line = data.rfind(b"\n", 0, found.start()) + 1
        key_indent = data[key_line : found.start()]
        end = data.find(b"\n" + key_indent + b"]", start) if not key_indent.strip() else -1
        positions = [start]
        needle = b"\n" + indent + b"{"
        at = data.find(needle, start, end if end != -1 else len(data))
        while at != -1 and len(positions) <= count:
            positions.append(at + len(needle) - 1)
            at = data.find(needle, at + len(needle), end if end != -1 else len(data))
        if len(positions) != count:
            continue
        # the text between two entries ends in a comma, then the line break and indent
        window = len(indent) + 8
        if any(data[max(0, p - window) : p].rstrip()[-1:] != b"," for p in positions[1:]):
            continue
        lines = [data.count(b"\n", 0, positions[0]) + 1]
        for before, after in itertools.pairwise(positions):
            lines.append(lines[-1] + data.count(b"\n", before, after))
        return lines
    return None


def _entry_lines_tokenized(data: bytes, count: int) -> list[int]:
    """:func:`_entry_lines` by following the document's tokens: any layout, but slow."""
    starts: list[int] = []
    kinds: list[int] = []  # '{' or '[' per open container
    keys: list[bytes | None] = []  # per open object: its key being read
    expect_key: list[bool] = []
    entries_depth = -1
    line, pos = 1, 0
    for m in _TOKENS.finditer(data):
        c = data[m.start()]
        if c == _COLON:
            continue
        if c == _COMMA:
            if kinds and kinds[-1] == _OBJECT:
                expect_key[-1] = True
            continue
        if c in _CLOSE:
            if kinds:
                kinds.pop()
                keys.pop()
                expect_key.pop()
            if len(kinds) < entries_depth:
                entries_depth = -1
            continue
        if kinds and kinds[-1] == _OBJECT and expect_key[-1]:
            keys[-1] = m.group()
            expect_key[-1] = False
            continue
        # a value starts here
        depth = len(kinds)
        if depth == entries_depth:
            line += data.count(b"\n", pos, m.start())
            pos = m.start()
            starts.append(line)
        if c in _OPEN:
            if (
                c == _ARRAY
                and depth == 2
                and kinds == [_OBJECT, _OBJECT]
                and keys == [b'"log"', b'"entries"']
            ):
                entries_depth = depth + 1
            kinds.append(c)
            keys.append(None)
            expect_key.append(c == _OBJECT)
    if len(starts) == count:
        return starts
    return [i + 1 for i in range(count)]


# -- a cut document -------------------------------------------------------------

#: a JSON string, or a bracket outside one
_BRACKETS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
#: what closes `entries`, `log` and the document after the last whole entry
_CLOSING = b"]}}"
#: element ends tried, from the last one back, before giving up on a cut document
_SALVAGE_TRIES = 3


@dataclass(frozen=True)
class _Salvaged:
    """What is left of a HAR document cut in the middle of ``log.entries``."""

    #: the document closed after its last whole entry
    doc: dict[str, Any]
    #: that text, whose entry lines are the cut file's
    text: bytes
    #: line of the entry the cut fell in (or of the first text after the last whole one)
    cut_line: int
    #: the cut fell after the entries array had closed: no entry was lost
    after_entries: bool = False


def _salvage(data: bytes) -> _Salvaged | None:
    """A HAR document cut inside ``log.entries`` (an export stopped by a crash, a copy
    cut short), closed after its last whole entry, so that the entries before the cut
    are read; None when the cut is elsewhere or no entry is whole."""
    opening = _ENTRIES_ARRAY.search(data)
    if opening is None:
        return None
    ends, closed = _entry_ends(data, opening.end() - 1)
    for end in ends:
        text = data[:end] + _CLOSING
        try:
            doc = _json.loads(text)
        except _json.JSONDecodeError:
            continue
        log = doc.get("log") if type(doc) is dict else None
        if type(log) is not dict or type(log.get("entries")) is not list:
            return None  # `entries` is not the HAR's: the document was cut elsewhere
        # the cut entry starts after the comma that follows the last whole one
        after = _NOT_SPACE.search(data, end)
        if after is not None and data[after.start()] == _COMMA:
            after = _NOT_SPACE.search(data, after.start() + 1)
        cut = after.start() if after is not None else len(data)
        return _Salvaged(doc, text, data.count(b"\n", 0, cut) + 1, closed and end == ends[0])
    return None


def _entry_ends(data: bytes, opening: int) -> tuple[list[int], bool]:
    """Offsets just after the last few whole elements of the array opened at
    ``opening``, the last first, and whether the array closes: read from the layout of
    an indented document when it has one, else by following its brackets."""
    by_layout = _entry_ends_by_layout(data, opening)
    return by_layout if by_layout is not None else _entry_ends_scanned(data, opening)


def _entry_ends_by_layout(data: bytes, opening: int) -> tuple[list[int], bool] | None:
    """:func:`_entry_ends` of a document laid out as HAR writers indent it: each entry
    starts a line with its ``{`` at one indentation and ends a line with its ``}`` at
    the same one, which no text inside an entry can do (a JSON string holds no line
    break). Found from the end, without reading the entries before the last few (a
    100 MB HAR took seconds to scan bracket by bracket). None for any other layout."""
    first = _NOT_SPACE.search(data, opening + 1)
    if first is None or data[first.start()] != _OBJECT:
        return None
    line_start = data.rfind(b"\n", 0, first.start()) + 1
    indent = data[line_start : first.start()]
    if not indent or indent.strip():
        return None  # the entries do not start their lines
    closing = b"\n" + indent + b"}"
    ends: list[int] = []
    at = len(data)
    while len(ends) < _SALVAGE_TRIES:
        at = data.rfind(closing, opening, at)
        if at == -1:
            break
        ends.append(at + len(closing))
    if not ends:
        return None
    key_line = data[data.rfind(b"\n", 0, opening) + 1 : opening]
    key_indent = key_line[: len(key_line) - len(key_line.lstrip())]
    closed = data.find(b"\n" + key_indent + b"]", ends[0]) != -1
    return ends, closed


def _entry_ends_scanned(data: bytes, opening: int) -> tuple[list[int], bool]:
    """:func:`_entry_ends` of any layout, by following the brackets. Brackets inside
    strings are not counted; a string the cut leaves open can fake an end after the
    last whole element, which the parse of the closed document then rejects."""
    ends: list[int] = []
    depth = 0
    for m in _BRACKETS.finditer(data, opening + 1):
        c = data[m.start()]
        if c == _QUOTE:
            continue
        if c in _OPEN:
            depth += 1
        elif depth == 0:
            return ends[::-1][:_SALVAGE_TRIES], True  # cut after the array
        else:
            depth -= 1
            if depth == 0:
                ends.append(m.end())
    return ends[::-1][:_SALVAGE_TRIES], False


# -- pieces of an entry -----------------------------------------------------------


def _headers(value: Any) -> dict[str, str]:
    """HAR ``[{name, value}]`` as ``{name: value}``; repeated names joined with ``, ``,
    except a repeat of the same name and value, kept once: exporters that merge two
    sources of headers (chrome-har) write each twice, and ``Mcp-Session-Id: s1, s1``
    would split an exchange off its session."""
    out: dict[str, str] = {}
    if type(value) is not list:
        return out
    for h in value:
        if type(h) is not dict or type(h.get("name")) is not str:
            continue
        v = h.get("value")
        text = v if type(v) is str else ("" if v is None else _json.dumps(v))
        name = h["name"]
        if name not in out:
            out[name] = text
        elif text not in out[name].split(", "):
            out[name] = f"{out[name]}, {text}"
    return out


def _header(headers: Mapping[str, str], name: str) -> str | None:
    lower = name.lower()
    for k, v in headers.items():
        if k.lower() == lower:
            return v
    return None


def _names_mcp(headers: Mapping[str, str]) -> bool:
    return any(k.lower().startswith("mcp-") for k in headers)


def _body(obj: Any, what: str) -> tuple[str | None, str | None]:
    """The text of a ``postData`` or ``content`` object (base64 decoded), and a problem."""
    if type(obj) is not dict:
        return None, None
    text = obj.get("text")
    if text is None:
        return None, None
    if type(text) is not str:
        return None, f"`{what}.text` is a JSON {json_type(text)}, not a string"
    encoding = obj.get("encoding")
    if encoding is None or encoding == "":
        return text, None
    if type(encoding) is str and encoding.lower() == "base64":
        try:
            data = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            return text, f"`{what}.text` is not valid base64 (kept as it is)"
        decoded, problem = decode_raw(data)
        return decoded, (f"base64 body: {problem}" if problem else None)
    return text, f"unknown `{what}.encoding` {_json.dumps(encoding)}: body read as text"


def _stateless(headers: Mapping[str, str]) -> bool:
    """The request speaks 2026-07-28 or later (its ``MCP-Protocol-Version``), which has no
    sessions: an ``Mcp-Session-Id`` it sends anyway (the server must ignore it) does not
    group it, unless the server answers with one."""
    version = (_header(headers, "MCP-Protocol-Version") or "").strip()
    return re.fullmatch(r"\d{4}-\d{2}-\d{2}", version) is not None and version >= "2026-07-28"


def _attachments(content: Content, ctx: LoadContext) -> Callable[[str], bytes | None]:
    """Where the bodies a HAR keeps as separate files (Playwright's ``content: "attach"``:
    ``_file`` instead of ``text``) are: the other members of its zip archive, else files
    in the HAR's folder, named without any folder part."""
    if content.attachment is not None:
        return content.attachment
    folder = None if content.stdin else Path(ctx.source).parent

    def beside(name: str) -> bytes | None:
        if folder is None or Path(name).name != name or name in ("", ".", ".."):
            return None
        try:
            return (folder / name).read_bytes()
        except OSError:
            return None

    return beside


def _with_attachments(
    entries: list[Any], attached: Callable[[str], bytes | None]
) -> tuple[list[Any], int]:
    """``entries`` with each body kept as a file read into its ``text`` (copies of the
    entries that change), and how many such files were not found."""
    missing = 0

    def filled(part: Any) -> Any:
        nonlocal missing
        if type(part) is not dict or type(part.get("_file")) is not str or part.get("text"):
            return part
        data = attached(part["_file"])
        if data is None:
            missing += 1
            return part
        text, _ = decode_raw(data)
        return {**part, "text": text}

    out = []
    for entry in entries:
        if type(entry) is not dict:
            out.append(entry)
            continue
        request, response = entry.get("request"), entry.get("response")
        request = request if type(request) is dict else {}
        response = response if type(response) is dict else {}
        post, body = request.get("postData"), response.get("content")
        new_post, new_body = filled(post), filled(body)
        if new_post is post and new_body is body:
            out.append(entry)
            continue
        copy = dict(entry)
        if new_post is not post:
            copy["request"] = {**request, "postData": new_post}
        if new_body is not body:
            copy["response"] = {**response, "content": new_body}
        out.append(copy)
    return out, missing


def _unsaved_request(request: dict[str, Any]) -> str | None:
    """Why a request without body text had one the HAR did not save (exporters that omit
    bodies keep their size; chrome-har keeps a JSON body as form ``params``; an attached
    file went missing), or None."""
    post = request.get("postData")
    if type(post) is dict and type(post.get("_file")) is str:
        return f"the request body was kept as the file {post['_file']}, which is not there"
    if type(post) is dict and type(post.get("params")) is list and post["params"]:
        return "the request body was saved as form parameters, not as its text"
    size = request.get("bodySize")
    if type(size) is int and size > 0:
        return f"the request body ({size} bytes) was not saved in the HAR"
    return None


def _parse(text: str | None) -> Any:
    if text is None or not text.strip():
        return NOT_JSON
    try:
        return _json.loads(text)
    except _json.JSONDecodeError:
        return NOT_JSON


def _is_rpc(value: Any) -> bool:
    """Whether a parsed value looks like a JSON-RPC message or batch (not: is valid)."""
    if type(value) is dict:
        return "jsonrpc" in value or (
            "id" in value and ("method" in value or "result" in value or "error" in value)
        )
    if type(value) is list:
        return any(_is_rpc(v) for v in value)
    return False


@dataclass
class _Event:
    """One dispatched SSE event: its data, type and id, and the lines it was read from."""

    data: str
    type: str
    id: str | None
    raw: str
    complete: bool = True


def sse_events(text: str) -> list[_Event]:
    """Split an event stream by the SSE parsing rules.

    ``data:`` lines of one event are joined with newlines; a single space after the
    colon is dropped; comments (``:`` lines) and ``retry:`` are not events; a blank
    line ends an event, and an event without any ``data`` line is not dispatched. A
    last event cut before its blank line is kept, marked incomplete.
    """
    events: list[_Event] = []
    data: list[str] = []
    raw: list[str] = []
    etype = ""
    eid: str | None = None
    for ln in _SSE_LINES.split(text):
        if not ln:
            if data:
                events.append(_Event("\n".join(data), etype, eid, "\n".join(raw)))
            data, raw, etype, eid = [], [], "", None
            continue
        raw.append(ln)
        if ln.startswith(":"):
            continue
        name, colon, value = ln.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            etype = value
        elif name == "id" and "\0" not in value:
            eid = value
    if data:
        events.append(_Event("\n".join(data), etype, eid, "\n".join(raw), complete=False))
    return events


def _timestamp(value: Any) -> tuple[int | None, str | None, str | None]:
    """Microseconds since the epoch, quality override (zone-less times are local), problem."""
    if value is None:
        return None, None, "entry without `startedDateTime`"
    if type(value) is not str:
        return None, None, f"`startedDateTime` is a JSON {json_type(value)}, not a string"
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None, None, f"unreadable `startedDateTime` {_json.dumps(value)}"
    quality = None
    if dt.tzinfo is None:
        dt, quality = dt.replace(tzinfo=UTC), "local"
    us = (dt - _EPOCH) // _US
    if abs(us) >= MAX_US:
        return None, None, f"`startedDateTime` {value} is out of range"
    return us, quality, None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _elapsed_ms(entry: dict[str, Any]) -> float | None:
    """``time``, else the sum of the known ``timings`` (HAR defines ``time`` as that sum)."""
    t: Any = entry.get("time")
    if _number(t) and t >= 0:
        return float(t)
    timings = entry.get("timings")
    if type(timings) is dict:
        parts = [v for v in timings.values() if _number(v) and v >= 0]
        if parts:
            return float(sum(parts))
    return None


def _endpoint(url: str | None) -> tuple[str | None, str | None]:
    """(``scheme://host[:port]/path``, host) of a request URL; a ``sessionId`` (or
    ``session_id``) query parameter is kept in the path's key."""
    if not url:
        return None, None
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return url, None
    if not parts.scheme or host is None:
        return url, None
    netloc = host if port is None else f"{host}:{port}"
    # a session id in the query (the HTTP+SSE transport's endpoint carries one) tells
    # connections apart, even where the stream that announced it was not saved
    session = [
        f"{key}={value}"
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if key.lower().replace("_", "") == "sessionid"
    ]
    query = f"?{'&'.join(session)}" if session else ""
    return f"{parts.scheme}://{netloc}{parts.path or '/'}{query}", netloc


def _path(url: Any) -> str:
    try:
        return urlsplit(url).path if type(url) is str else ""
    except ValueError:
        return ""


def _reason(status: int | None, text: Any) -> str:
    """`` OK`` after a status: the captured reason phrase, else the standard one
    (HTTP/2 has none, so browsers record an empty ``statusText``)."""
    if type(text) is str and text:
        return f" {text}"
    try:
        return f" {HTTPStatus(status).phrase}" if status is not None else ""
    except ValueError:
        return ""


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _BODY_PREVIEW else flat[:_BODY_PREVIEW] + "..."


@dataclass
class _Counts:
    skipped: int = 0
    no_body: int = 0
    no_session: set[str] = field(default_factory=set)
    cut_events: int = 0
    #: the server streams (`GET`) among the rows
    streams: list[Stream] = field(default_factory=list)


@dataclass(frozen=True)
class _HttpSse:
    """The 2024-11-05 HTTP+SSE transport in a HAR: the ``GET`` streams (by entry index)
    that announced an endpoint, and each announced URL; both key the session."""

    streams: dict[int, str]
    endpoints: frozenset[str]


def _http_sse(entries: list[Any]) -> _HttpSse:
    """The entries that opened an HTTP+SSE stream: a ``GET`` answered 2xx with an event
    stream whose events include ``endpoint``, with the URL it announced (resolved
    against the ``GET``'s)."""
    streams: dict[int, str] = {}
    for index, entry in enumerate(entries):
        if type(entry) is not dict:
            continue
        request, response = entry.get("request"), entry.get("response")
        if type(request) is not dict or type(response) is not dict:
            continue
        url, status = request.get("url"), response.get("status")
        if request.get("method") != "GET" or type(url) is not str:
            continue
        if type(status) is not int or not 200 <= status < 300:
            continue
        content = response.get("content")
        body, _ = _body(content, "content")
        # most streams are Streamable HTTP ones, which name no endpoint: the text test
        # spares parsing their events twice (the entry's rows parse them again)
        if not body or "endpoint" not in body:
            continue
        if not _is_event_stream(content, _headers(response.get("headers"))):
            continue
        for event in sse_events(body):
            if event.type == "endpoint" and event.data.strip():
                announced = normalized_url(event.data.strip(), url)
                if announced is not None:
                    streams[index] = announced
                break
    return _HttpSse(streams, frozenset(streams.values()))


def _is_event_stream(content: Any, headers: Mapping[str, str]) -> bool:
    """Whether a response body is an SSE stream: by the HAR's ``mimeType``, else by the
    ``Content-Type`` header."""
    mime = content.get("mimeType") if type(content) is dict else None
    content_type = mime if type(mime) is str and mime else _header(headers, "Content-Type")
    return content_type is not None and "text/event-stream" in content_type.lower()


# -- one entry ---------------------------------------------------------------------


def _add_entry(
    rows: RowBuilder,
    entry: Any,
    line: int,
    ctx: LoadContext,
    counts: _Counts,
    http_sse: str | None,
    exchange: int,
) -> None:
    """The rows of entry number ``exchange``; ``http_sse`` is the session of the HTTP+SSE
    transport the entry belongs to (its stream, or a ``POST`` to the endpoint the stream
    announced)."""
    if type(entry) is not dict:
        rows.add_invalid(line, _json.dumps(entry), f"HAR entry is a JSON {json_type(entry)}")
        return
    request = entry.get("request")
    response = entry.get("response")
    req = request if type(request) is dict else {}
    resp = response if type(response) is dict else {}
    req_headers = _headers(req.get("headers"))
    resp_headers = _headers(resp.get("headers"))
    req_body, req_problem = _body(req.get("postData"), "postData")
    content = resp.get("content")
    resp_body, resp_problem = _body(content, "content")
    is_sse = _is_event_stream(content, resp_headers)
    events = sse_events(resp_body) if is_sse and resp_body else []
    req_msg = _parse(req_body)
    resp_msg = NOT_JSON if is_sse else _parse(resp_body)
    is_mcp = (
        _is_rpc(req_msg)
        or _is_rpc(resp_msg)
        or any(_is_rpc(_parse(e.data)) for e in events)
        or _names_mcp(req_headers)
        or _header(resp_headers, "Mcp-Session-Id") is not None
        # an HTTP+SSE stream whose only event announced the endpoint: it opens a session
        or http_sse is not None
    )
    if not is_mcp:
        counts.skipped += 1
        return

    method = req.get("method")
    http_method = method if type(method) is str else None
    url = req.get("url")
    endpoint, host = _endpoint(url if type(url) is str else None)
    raw_status = resp.get("status")
    status = raw_status if type(raw_status) is int and raw_status > 0 else None
    reason = _reason(status, resp.get("statusText"))
    issued = _header(resp_headers, "Mcp-Session-Id")
    sent = (
        None
        if _stateless(req_headers) and issued is None
        else _header(req_headers, "Mcp-Session-Id")
    )
    session = sent or issued
    if session is None:
        session = http_sse or endpoint or ctx.stem
        if http_sse is None:
            counts.no_session.add(session)
    else:
        http_sse = None

    start_us, quality, ts_problem = _timestamp(entry.get("startedDateTime"))
    elapsed = _elapsed_ms(entry)
    end_us: int | None = None
    end_problem = None
    if start_us is not None and elapsed is not None:
        end_us = start_us + round(elapsed * 1000)
        if abs(end_us) >= MAX_US:
            end_us = None
            end_problem = (
                f"`time` of {elapsed:g} ms ends after the year 9999: the response time is unknown"
            )
    elif start_us is not None:
        end_problem = "entry without `time` or `timings`: the response time is unknown"

    # -- the request --------------------------------------------------------------
    entry_start = len(rows)
    env = Envelope(
        ts_us=start_us,
        session=session,
        server=host,
        direction="c2s",
        transport="http",
        http_method=http_method,
        http_status=status,
        http_headers=_json.dumps(req_headers) if req_headers else None,
        exchange=exchange,
    )
    notes = [p for p in (ts_problem, req_problem) if p]
    note = "; ".join(notes) or None
    start = len(rows)
    unsaved = _unsaved_request(req) if req_body is None or not req_body.strip() else None
    if unsaved is not None:
        # the client sent a body the HAR did not keep: a message lost from the capture
        what = f"{http_method or 'HTTP'} {url if type(url) is str else ''}".strip()
        problem = f"{unsaved}: the message it carried is cut from the capture"
        rows.add_invalid(line, what, "; ".join([*notes, problem]), env)
    elif req_body is None or not req_body.strip():
        path = _path(url)
        rows.add_other(
            line,
            f"{http_method or 'HTTP'} {url if type(url) is str else ''}".strip(),
            "transport",
            env,
            note,
            text=f"HTTP {http_method or 'request'} {path or '/'} (no body)",
        )
    elif req_msg is NOT_JSON:
        rows.add_text(line, req_body, req_body, env, note)
    else:
        rows.add_parsed(line, req_body, req_msg, req_body, env, note)
    if quality:
        rows.override_ts_quality(start, quality)

    # -- the response ---------------------------------------------------------------
    env = Envelope(
        ts_us=end_us,
        session=session,
        server=host,
        direction="s2c",
        transport="http",
        http_method=http_method,
        http_status=status,
        http_headers=_json.dumps(resp_headers) if resp_headers else None,
        exchange=exchange,
    )
    notes = [p for p in (end_problem, resp_problem) if p]
    start = len(rows)
    body = _Body(resp_body, resp_msg, is_sse, events, http_sse is not None)
    _add_response(rows, line, entry, resp, status, reason, body, env, notes)
    failure = _failure(entry, resp) if status is not None else None
    if failure is not None and not _empty_by_design(status, resp):
        # the response began (a status came) and then the exchange broke off: whatever
        # else the server sent on it is not in the HAR
        rows.add_other(
            line,
            failure,
            "transport",
            env,
            None,
            text=f"{EXCHANGE_FAILED} ({failure}): {LOST_CONTENT}",
        )
    if http_method == "GET" and events:
        counts.streams.append(Stream(session, entry_start, len(rows), http_sse is not None))
    counts.cut_events += sum(1 for e in events if not e.complete)
    if status is not None and resp_body is None and _size(content) > 0:
        counts.no_body += 1
    rows.override_ts_quality(start, "derived")


@dataclass
class _Body:
    """A response body: its text, its JSON value (or NOT_JSON), and its SSE events."""

    text: str | None
    parsed: Any
    sse: bool
    events: list[_Event]
    #: the body answers a POST of the HTTP+SSE transport, whose answers come on its
    #: stream: a 2xx body here is the server's acknowledgement (`Accepted`), not a message
    http_sse: bool = False


def _size(content: Any) -> int:
    if type(content) is not dict:
        return 0
    size = content.get("size")
    return size if type(size) is int else 0


#: the text of the transport row that follows the response of an exchange that failed
#: after its status came (a browser's ``net::ERR_ABORTED`` when the page gave up on it)
EXCHANGE_FAILED = "HTTP exchange failed after its response began"
#: what the transport rows of a response whose content the HAR lost end with (a body not
#: saved, a stream unfinished or broken off): the rules take it as a capture cut
LOST_CONTENT = "what it carried is not in the HAR"


def _empty_by_design(status: int | None, resp: dict[str, Any]) -> bool:
    """A response with nothing to lose: ``202 Accepted``, ``204``, or ``Content-Length:
    0``. SDKs cancel reading such a body, which browsers then record as aborted."""
    if status in (202, 204):
        return True
    length = _header(_headers(resp.get("headers")), "Content-Length")
    return length is not None and length.strip() == "0"


def _failure(entry: dict[str, Any], resp: dict[str, Any]) -> str | None:
    """Why the browser says the exchange failed: DevTools' ``_error``, Playwright's
    ``response._failureText``; None when it did not."""
    for value in (entry.get("_error"), resp.get("_error"), resp.get("_failureText")):
        if type(value) is str and value:
            return value
    return None


def _add_response(
    rows: RowBuilder,
    line: int,
    entry: dict[str, Any],
    resp: dict[str, Any],
    status: int | None,
    reason: str,
    parts: _Body,
    env: Envelope,
    notes: list[str],
) -> None:
    note = "; ".join(notes) or None
    body, msg, events = parts.text, parts.parsed, parts.events
    error = _failure(entry, resp)
    if status is None:
        why = f": {error}" if error else ""
        rows.add_other(
            line,
            _json.dumps(resp) if resp else "",
            "transport",
            env,
            note,
            text=f"no HTTP response (the request failed or was cancelled{why})",
        )
        return
    if events:
        for e in events:
            event_notes = list(notes)
            if not e.complete:
                event_notes.append("SSE event not ended by a blank line: the stream was cut")
            event_note = "; ".join(event_notes) or None
            parsed = _parse(e.data)
            if parsed is NOT_JSON:
                label = f"SSE event `{e.type}`" if e.type else "SSE event"
                if e.id is not None:
                    label += f" (id {e.id})"
                text = f"{label}: {e.data}" if e.data else f"{label} without data"
                rows.add_other(line, e.raw, "transport", env, event_note, text=text)
            else:
                rows.add_parsed(line, e.raw, parsed, e.data, env, event_note)
        return
    if parts.sse and body is not None and body.strip():
        text = f"HTTP {status}{reason}: SSE stream without events"
        rows.add_other(line, body, "transport", env, note, text=text)
        return
    if body is None or not body.strip():
        size = _size(resp.get("content"))
        if size > 0 and body is None:
            notes.append(f"the response body ({size} bytes) was not saved in the HAR")
            text = f"HTTP {status}{reason} (body not saved: {LOST_CONTENT})"
        elif size < 0 and body is None and not _empty_by_design(status, resp):
            # Playwright's mark of a response still arriving when the HAR was written
            # (a GET stream left open): whatever it carried is not in the file
            notes.append("the response was still arriving when the HAR was written")
            text = f"HTTP {status}{reason} (unfinished: {LOST_CONTENT})"
        else:
            text = f"HTTP {status}{reason} (no body)"
        rows.add_other(line, body or "", "transport", env, "; ".join(notes) or None, text=text)
        return
    if _is_rpc(msg) or (status < 300 and msg is not NOT_JSON):
        rows.add_parsed(line, body, msg, body, env, note)
    elif status < 300 and status != 202 and not parts.http_sse:
        rows.add_text(line, body, body, env, note)  # not JSON: an invalid row says why
    else:
        text = f"HTTP {status}{reason}: {_preview(body)}"
        rows.add_other(line, body, "transport", env, note, text=text)


# -- the document --------------------------------------------------------------------


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(
        source=ctx.source, tz=ctx.tz, format=NAME, default_session=ctx.stem, transport="http"
    )
    n_lines = len(content.lines)
    if not content.data.strip():
        return LoadResult(messages=rows.frame(), lines=n_lines)
    salvaged: _Salvaged | None = None
    mend_note: str | None = None
    try:
        doc, _, mend_note = _json.loads_mending(content.data)
    except _json.JSONDecodeError as exc:
        cut = exc.pos is not None and exc.pos >= len(content.data.rstrip()) - 1
        salvaged = _salvage(content.data) if cut else None
        if salvaged is None:
            first, _ = decode_raw(content.lines[0])
            problem = _json.describe_error(exc)
            rows.add_invalid(1, first, f"HAR document is not valid JSON: {problem}")
            cut_note = ["the HAR document ends in the middle: it was cut"] if cut else []
            return LoadResult(messages=rows.frame(), lines=n_lines, truncated=cut, notes=cut_note)
        doc = salvaged.doc
    log = doc.get("log") if type(doc) is dict else None
    entries = log.get("entries") if type(log) is dict else None
    if type(entries) is not list:
        first, _ = decode_raw(content.lines[0])
        what = "an object" if type(doc) is dict else f"a JSON {json_type(doc)}"
        rows.add_invalid(1, first, f"not a HAR document: {what} without `log.entries`")
        return LoadResult(messages=rows.frame(), lines=n_lines)

    starts = _entry_lines(salvaged.text if salvaged else content.data, len(entries))
    entries, missing = _with_attachments(entries, _attachments(content, ctx))
    counts = _Counts()
    http_sse = _http_sse(entries)
    for i, entry in enumerate(entries):
        _add_entry(rows, entry, starts[i], ctx, counts, _http_sse_session(http_sse, i, entry), i)

    notes: list[str] = [mend_note] if mend_note else []
    if missing:
        notes.append(
            f"{missing} bod{'y' if missing == 1 else 'ies'} kept as separate files "
            "(`_file`) not found beside the HAR: those messages are not in the capture"
        )
    if salvaged is not None:
        line = min(salvaged.cut_line, n_lines)
        raw, _ = decode_raw(content.lines[line - 1])
        whole = f"{len(entries)} whole {'entry' if len(entries) == 1 else 'entries'}"
        where = (
            "after its entries"
            if salvaged.after_entries
            else f"in the middle of entry {len(entries) + 1}"
        )
        rows.add_invalid(line, raw, f"HAR document cut {where}: {whole} read")
        notes.append(
            f"the HAR document ends in the middle: it was cut; the {whole} before the cut are read"
        )
    if counts.skipped:
        what = "entry" if counts.skipped == 1 else "entries"
        notes.append(f"{counts.skipped} {what} without JSON-RPC (not MCP) skipped")
    if counts.no_session:
        keys = ", ".join(sorted(counts.no_session))
        notes.append(f"exchanges without Mcp-Session-Id are keyed by their endpoint: {keys}")
    if counts.no_body:
        notes.append(
            f"{counts.no_body} response body(ies) not saved in the HAR: their messages are missing"
        )
    if counts.cut_events:
        notes.append(f"{counts.cut_events} SSE event(s) cut before their end")
    if any(stream.http_sse for stream in counts.streams):
        http_sse_streams = sum(stream.http_sse for stream in counts.streams)
        notes.append(
            f"{http_sse_streams} HTTP+SSE stream(s) (the 2024-11-05 transport), each a "
            "session with the POSTs to the endpoint it announced (keyed by that URL); a HAR "
            "keeps no time per event, so each response event is placed after the POST of "
            "its request, without a time"
        )
    truncated = bool(counts.no_body or counts.cut_events or salvaged)
    messages = interleave(rows.frame(), counts.streams)
    placed = placed_events(messages)
    if placed:
        notes.append(
            f"{placed} server stream event(s) placed where they may have been, between the "
            "messages they must follow and precede (a HAR keeps no time per event): rules "
            "that judge order leave them out, and a server request among them has no latency"
        )
    return LoadResult(messages=messages, lines=n_lines, truncated=truncated, notes=notes)


def _http_sse_session(http_sse: _HttpSse, index: int, entry: Any) -> str | None:
    """The HTTP+SSE session of entry ``index``: the URL its stream announced, or the one
    it posts to when a stream announced it; None for other entries."""
    if index in http_sse.streams:
        return http_sse.streams[index]
    if not http_sse.endpoints or type(entry) is not dict:
        return None
    request = entry.get("request")
    url = request.get("url") if type(request) is dict else None
    if type(url) is not str:
        return None
    posted = normalized_url(url)
    return posted if posted in http_sse.endpoints else None
