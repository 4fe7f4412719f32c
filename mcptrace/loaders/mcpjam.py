"""MCPJam Inspector logs: the web UI's JSON-RPC log download and the CLI's ``_rpcLogs``.

Two shapes, both single JSON documents (sources: ``MCPJam/inspector``):

* the web Inspector's "download logs" button (``LoggerView.downloadLogs`` in
  ``mcpjam-inspector/client/src/components/logger-view.tsx``; older trees:
  ``client/src/components/logging/json-rpc-logger-view.tsx``) saves
  ``json-rpc-logs-<ISO time>.json``, ``JSON.stringify(items, null, 2)`` of::

      [{"timestamp": "2026-05-04T10:15:22.481Z", "source": "mcp-server",
        "serverId": "weather", "serverName": "weather", "direction": "SEND",
        "method": "tools/call", "payload": {"jsonrpc": "2.0", "id": 3, ...}}, ...]

  ``direction`` is the SDK's ``send``/``receive`` upper-cased (``RpcLogEvent`` in
  ``sdk/src/mcp-client-manager/types.ts``): ``SEND`` is the Inspector (the client)
  sending, so c2s; ``RECEIVE`` is s2c. The list is the UI's view, **newest first**
  (``allItems`` sorted by time descending) and filtered by what the search box and
  source filter showed; the stores keep the latest 1,000 items each
  (``MAX_ITEMS`` in ``mcpjam-inspector/client/src/stores/traffic-log-store.ts``).
  Other ``source`` values: ``mcp-apps`` (``HOST→UI`` / ``UI→HOST`` postMessage
  traffic between a widget and the host, not the server connection: ``log``
  rows), ``oauth`` (OAuth debugger steps, direction ``OAUTH``: ``log`` rows) and
  ``http`` (direction ``HTTP``, the payload an ``HttpExchangeLogEvent`` of
  ``sdk/src/mcp-client-manager/http-exchange-log.ts``: request method, url and
  headers, response status and headers: ``transport`` rows with those columns).
  ``serverName`` may be missing (``JSON.stringify`` drops undefined).

* the CLI (``cli/src/lib/rpc-logs.ts``): with ``--rpc`` the JSON result of a command
  (``mcpjam --rpc tools call ...``, ``server doctor --out``; written compact by
  ``writeResult`` in ``cli/src/lib/output.ts``, or by ``writeDebugArtifact``) gets
  ``"_rpcLogs": [{"serverId": "__cli__", "serverName": <target>, "direction":
  "send"|"receive", "timestamp": ..., "message": {...}}]`` in capture order, with
  credentials replaced by ``[REDACTED]``. The CLI names its one server ``__cli__``;
  its ``serverName`` (the URL or command) is used as the server instead.

Rows are put in time order (the web export is reversed, ties keep their order),
so line numbers may run backwards; each row points at the line where its entry
starts. Sessions: per server, each ``initialize`` request the client sends starts
``<server>#<n>``; traffic before the first (the export's filter or the 1,000-item
cap cut it) is ``<server>#0``. The transport is not recorded: a session with
``http`` items is Streamable HTTP, a CLI session is HTTP when its target is a URL and
stdio when it is a command; the others stay ``unknown``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.loaders.base import Head, LoadContext, LoadResult
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw, json_type

NAME = "mcpjam"
DESCRIPTION = "MCPJam Inspector: web log download (json-rpc-logs-*.json) and CLI --rpc `_rpcLogs`"

#: the traffic-log store's ``MAX_ITEMS`` (oldest items dropped beyond it)
MAX_ITEMS = 1000

_DIRECTIONS = {"send": "c2s", "receive": "s2c"}
_APPS = {"host→ui", "ui→host", "host-to-ui", "ui-to-host"}
_SOURCES = {"mcp-server", "mcp-apps", "oauth", "http"}
_CLI_SERVER_ID = "__cli__"

# -- line numbers of the values of a JSON document -----------------------------

#: JSON tokens: strings, structural characters, and runs of anything else (scalars)
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},:]|[^\s\[\]{},:"]+', re.DOTALL)
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")
_QUOTE, _COMMA, _COLON, _BRACE = ord('"'), ord(","), ord(":"), ord("{")

JsonPath = tuple[str | int, ...]


def value_lines(data: bytes, max_depth: int) -> dict[JsonPath, int]:
    """The 1-based line where each value of the JSON document ``data`` starts, by path
    (object keys and array indexes), for paths of at most ``max_depth`` steps.

    A tokenizer, not a parser: it assumes ``data`` parsed (the caller checks) and
    reports whatever it can of a document that did not.
    """
    out: dict[JsonPath, int] = {}
    # one frame per open container: [is object, key or index, expecting a key]
    stack: list[list[Any]] = []
    line, pos = 1, 0
    for m in _TOKENS.finditer(data):
        start = m.start()
        c = data[start]
        if c in _CLOSE:
            if stack:
                stack.pop()
            continue
        top = stack[-1] if stack else None
        if c == _COMMA:
            if top is not None:
                if top[0]:
                    top[2] = True
                elif type(top[1]) is int:
                    top[1] += 1
            continue
        if c == _COLON:
            if top is not None:
                top[2] = False
            continue
        if top is not None and top[0] and top[2]:
            # an object key: remembered only where paths still count
            if len(stack) <= max_depth and c == _QUOTE:
                try:
                    top[1] = _json.loads(m.group())
                except _json.JSONDecodeError:
                    top[1] = m.group().decode("utf-8", "replace")
            continue
        # a value starts here
        path = tuple(f[1] for f in stack)
        if len(path) <= max_depth:
            line += data.count(b"\n", pos, start)
            pos = start
            out[path] = line
        if c in _OPEN:
            stack.append([c == _BRACE, 0, c == _BRACE])
    return out


# -- detection --------------------------------------------------------------------


def _is_web_item(value: Any) -> bool:
    return (
        type(value) is dict
        and "timestamp" in value
        and "direction" in value
        and "payload" in value
        and ("serverId" in value or _word(value.get("source")) in _SOURCES)
    )


def _is_cli_event(value: Any) -> bool:
    return (
        type(value) is dict
        and "serverId" in value
        and "timestamp" in value
        and "message" in value
        and type(value.get("direction")) is str
        and value["direction"].lower() in _DIRECTIONS
    )


def sniff(head: Head) -> int:
    whole = head.whole
    if type(whole) is dict:
        logs = whole.get("_rpcLogs")
        if type(logs) is list:
            first = logs[:5]
            if not first or all(_is_cli_event(e) for e in first):
                return 95
            return 60
        return 0
    if type(whole) is not list or not whole:
        return 0
    first = whole[:5]
    hits = sum(1 for e in first if _is_web_item(e) or _is_cli_event(e))
    return 95 if hits == len(first) else (60 if hits * 2 > len(first) else 0)


# -- loading ----------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC) - _EPOCH


def _micros(value: Any) -> int | None:
    """Epoch microseconds of an ISO time (for ordering only; rows keep the text)."""
    if type(value) is not str:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // _ONE_US


def _time_order(entries: list[Any]) -> tuple[list[int], bool]:
    """Entry indexes in time order, and whether the file was newest first.

    The web download lists the newest item first; a list whose first time is later
    than its last is reversed (so equal times keep the order they happened in),
    then sorted stably by time. Entries without a readable time stay next to the
    entry before them.
    """
    times = [_micros(e.get("timestamp")) if type(e) is dict else None for e in entries]
    known = [t for t in times if t is not None]
    newest_first = len(known) > 1 and known[0] > known[-1]
    order = list(range(len(entries)))
    if newest_first:
        order.reverse()
    keys: list[int] = []
    last = -(2**62)
    for i in order:
        t = times[i]
        if t is not None:
            last = t
        keys.append(last)
    ranked = sorted(range(len(order)), key=keys.__getitem__)
    return [order[k] for k in ranked], newest_first


def _word(value: Any) -> str | None:
    """A string field's value; anything else (objects too: unhashable) is None."""
    return value if type(value) is str else None


def _text(value: Any) -> str:
    return value if type(value) is str else _json.dumps(value)


def _http_row(payload: Any) -> tuple[str, str | None, int | None, str | None]:
    """Message text, method, status and headers of an ``http`` item's exchange."""
    if type(payload) is not dict:
        return _text(payload), None, None, None
    request = payload.get("request")
    response = payload.get("response")
    method = url = None
    headers: dict[str, Any] = {}
    if type(request) is dict:
        method = request.get("method") if type(request.get("method")) is str else None
        url = request.get("url") if type(request.get("url")) is str else None
        if type(request.get("headers")) is dict:
            headers.update(request["headers"])
    status = None
    if type(response) is dict:
        s = response.get("status")
        status = s if type(s) is int else None
    text = f"{method or '?'} {url or '?'}"
    if status is not None:
        text += f" -> {status}"
    error = payload.get("error")
    if type(error) is str:
        text += f" (error: {error})"
    return text, method, status, (_json.dumps(headers) if headers else None)


class _Sessions:
    """``<server>#<n>``: each client ``initialize`` request starts the next one."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}
        #: session -> transport, where the log shows it (HTTP exchanges, a CLI target)
        self.transports: dict[str, str] = {}

    def key(self, server: str) -> str:
        return f"{server}#{self.count.get(server, 0)}"

    def start(self, server: str) -> str:
        self.count[server] = self.count.get(server, 0) + 1
        return self.key(server)


def _is_initialize(msg: Any) -> bool:
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
        rows.add_invalid(1, first, f"MCPJam log is not valid JSON: {_json.describe_error(exc)}")
        return LoadResult(messages=rows.frame(), lines=n_lines)

    prefix: JsonPath
    if type(doc) is dict and type(doc.get("_rpcLogs")) is list:
        entries: list[Any] = doc["_rpcLogs"]
        prefix = ("_rpcLogs",)
    elif type(doc) is list:
        entries, prefix = doc, ()
    else:
        why = (
            "an object without an `_rpcLogs` array"
            if type(doc) is dict
            else f"a JSON {json_type(doc)}"
        )
        rows.add_invalid(1, _json.dumps(doc), f"MCPJam log is {why}, not a list of log entries")
        return LoadResult(messages=rows.frame(), lines=n_lines)

    where = value_lines(content.data, len(prefix) + 1)
    order, newest_first = _time_order(entries)
    sessions = _Sessions()
    counts: dict[str, int] = {}
    for i in order:
        entry = entries[i]
        line = where.get((*prefix, i), len(prefix) + 1 + i)
        _add_entry(rows, entry, line, sessions, counts)
    messages = _with_transports(rows.frame(), sessions.transports)

    notes: list[str] = [mend_note] if mend_note else []
    truncated = False
    if newest_first:
        notes.append("the export lists the newest entry first: rows are in time order")
    server_items = counts.get("mcp-server", 0) + counts.get("oauth", 0) + counts.get("http", 0)
    if server_items >= MAX_ITEMS or counts.get("mcp-apps", 0) >= MAX_ITEMS:
        truncated = True
        notes.append(
            f"{len(entries)} entries: the Inspector keeps the latest {MAX_ITEMS:,} items per "
            "log and drops older ones, so the start of the traffic is probably missing"
        )
    return LoadResult(messages=messages, lines=n_lines, truncated=truncated, notes=notes)


def _with_transports(messages: pl.DataFrame, transports: dict[str, str]) -> pl.DataFrame:
    """Rows of a session whose transport is known take it (it is not per message)."""
    if not transports:
        return messages
    known = pl.DataFrame({"session": list(transports), "_t": list(transports.values())})
    dtype = messages.schema["transport"]
    return (
        messages.join(known, on="session", how="left", maintain_order="left")
        .with_columns(transport=pl.coalesce(pl.col("_t").cast(dtype), pl.col("transport")))
        .drop("_t")
    )


def _add_entry(
    rows: RowBuilder, entry: Any, line: int, sessions: _Sessions, counts: dict[str, int]
) -> None:
    raw = _json.dumps(entry)
    if type(entry) is not dict:
        rows.add_invalid(line, raw, f"MCPJam log entry is a JSON {json_type(entry)}, not an object")
        return
    ts = entry.get("timestamp")
    server_id = entry.get("serverId")
    server_name = entry.get("serverName")
    if type(server_name) is str and (server_id == _CLI_SERVER_ID or not server_id):
        server: str | None = server_name
    elif type(server_id) is str:
        server = server_name if type(server_name) is str and server_name else server_id
    else:
        server = None
    label = server or "mcpjam"
    d = entry.get("direction")
    direction_word = d.lower() if type(d) is str else ""
    source = _word(entry.get("source"))
    if source not in _SOURCES:
        # CLI and hosted events carry no `source`: their direction says it
        if direction_word in _APPS:
            source = "mcp-apps"
        elif direction_word in ("http", "oauth"):
            source = direction_word
        else:
            source = "mcp-server"
    counts[source] = counts.get(source, 0) + 1
    payload = entry["payload"] if "payload" in entry else entry.get("message")
    has_payload = "payload" in entry or "message" in entry
    notes = []
    if type(ts) is not str:
        notes.append("entry without a `timestamp`" if ts is None else "`timestamp` is not a string")

    if source == "mcp-server":
        direction = _DIRECTIONS.get(direction_word, "unknown")
        if direction == "unknown":
            notes.append(f"unknown `direction` {_json.dumps(d)}")
        if direction == "c2s" and _is_initialize(payload):
            session = sessions.start(label)
        else:
            session = sessions.key(label)
        if server_id == _CLI_SERVER_ID and server is not None:
            # the CLI's target is a URL (Streamable HTTP) or a command (stdio)
            http = server.startswith(("http://", "https://"))
            sessions.transports[session] = "http" if http else "stdio"
        env = Envelope(
            ts_text=ts if type(ts) is str else None,
            session=session,
            server=server,
            direction=direction,
        )
        if not has_payload:
            rows.add_invalid(line, raw, "; ".join([*notes, "entry without a message"]), env)
        elif type(payload) is dict or type(payload) is list:
            rows.add_parsed(line, raw, payload, None, env, "; ".join(notes) or None)
        else:
            why = f"the message is a JSON {json_type(payload)}, not an object"
            rows.add_invalid(line, raw, "; ".join([*notes, why]), env, message=_text(payload))
        return

    env = Envelope(
        ts_text=ts if type(ts) is str else None, session=sessions.key(label), server=server
    )
    if source == "http":
        text, method, status, headers = _http_row(payload)
        env.transport = "http"
        env.http_method, env.http_status, env.http_headers = method, status, headers
        if env.session is not None:
            sessions.transports[env.session] = "http"
        rows.add_other(line, raw, "transport", env, "; ".join(notes) or None, text=text)
        return
    if source == "mcp-apps":
        notes.append(f"MCP Apps view/host message ({d}), not server traffic")
        rows.add_other(line, raw, "log", env, "; ".join(notes), text=_text(payload))
        return
    # OAuth debugger steps: the step's title (`method`) and its payload
    title = entry.get("method")
    text = _text(payload)
    if type(title) is str:
        text = f"{title}: {text}"
    rows.add_other(line, raw, "log", env, "; ".join(notes) or None, text=text)
