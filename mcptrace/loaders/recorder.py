"""mcp-recorder cassettes: one JSON document per recorded session.

    {"version": "1.0",
     "metadata": {"recorded_at": "2026-02-17T20:25:23.855390+00:00",
                  "server_url": "http://127.0.0.1:8000", "transport_type": "http",
                  "protocol_version": "2025-11-25", "server_info": {...}},
     "interactions": [
       {"type": "jsonrpc_request", "request": {...}, "response": {...},
        "response_is_sse": true, "response_status": 200, "latency_ms": 7,
        "http_method": null, "http_path": null}, ...]}

Sources (``devhelmhq/mcp-recorder``): the pydantic models ``Cassette``,
``CassetteMetadata`` and ``CassetteInteraction`` in ``src/mcp_recorder/_types.py``
(``type`` is ``jsonrpc_request``, ``notification`` or ``lifecycle``), written by
``save_cassette`` in ``src/mcp_recorder/_utils.py`` (``json.dumps(indent=2)``);
how interactions are made in ``src/mcp_recorder/proxy.py``; the format section
of ``README.md`` and ``tests/cassettes/mock_session.json``.

An interaction is one exchange, appended when it completed: a request and its
response (the first SSE event when the answer was a stream), a notification
(``response`` null; HTTP status 202), or a ``lifecycle`` HTTP call (``GET``/
``DELETE`` on the endpoint: a ``transport`` row). Each becomes a request row (c2s)
and a response row (s2c); a notification sent over HTTP gets a ``transport`` row
for its HTTP status. ``response_status`` goes into ``http_status`` and
``response_is_sse`` into ``http_headers`` as ``Content-Type: text/event-stream``
(the only header facts a cassette keeps); requests over HTTP are POSTs.

Times: a cassette records when the recording started (``metadata.recorded_at``)
and each exchange's ``latency_ms`` (an integer, measured by the proxy), but not
when each exchange happened. mcptrace lays the exchanges end to end from
``recorded_at`` (an interaction that carries its own ``timestamp`` -- not part of
the format, a guess at future cassettes -- starts there instead) and puts each
response ``latency_ms`` after its request. Every time is therefore ``derived``:
latencies are the recorder's own, positions on the clock are approximate.
Without ``recorded_at`` nothing has a time and latencies are lost.

Session: the cassette, keyed by its file name; a later ``initialize`` starts
``<name>#2``. The server is ``metadata.server_url`` (``stdio://<command>`` for
stdio recordings; the path may be ``[REDACTED]``), else ``server_info.name``.
Line numbers point at the ``"request":`` and ``"response":`` lines of each
interaction (at the interaction when the layout differs).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mcptrace import _json
from mcptrace.loaders.base import MAX_US, Head, LoadContext, LoadResult
from mcptrace.loaders.mcpjam import value_lines
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw, json_type

NAME = "mcp-recorder"
DESCRIPTION = "mcp-recorder cassettes: {metadata, interactions: [{request, response, latency_ms}]}"

_TYPES = {"jsonrpc_request", "notification", "lifecycle"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_SSE = _json.dumps({"Content-Type": "text/event-stream"})


def _is_interaction(value: Any) -> bool:
    return type(value) is dict and (
        _kind(value.get("type")) in _TYPES or ("request" in value and "latency_ms" in value)
    )


def _kind(value: Any) -> str | None:
    return value if type(value) is str else None


def sniff(head: Head) -> int:
    whole = head.whole
    if type(whole) is not dict or type(whole.get("interactions")) is not list:
        return 0
    first = whole["interactions"][:5]
    hits = sum(1 for i in first if _is_interaction(i))
    if not first:
        return 90 if type(whole.get("metadata")) is dict else 40
    return 95 if hits == len(first) else (60 if hits * 2 > len(first) else 0)


def _micros(value: Any) -> int | None:
    if type(value) is not str:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    us = (dt - _EPOCH) // _US
    return us if abs(us) < MAX_US else None


def _latency_us(value: Any) -> int | None:
    if isinstance(value, int | float) and type(value) is not bool and value >= 0:
        return round(value * 1000)
    return None


def _transport(meta: dict[str, Any]) -> str:
    t = meta.get("transport_type")
    if t in ("http", "stdio"):
        return str(t)
    url = meta.get("server_url")
    if type(url) is str:
        if url.startswith("stdio://"):
            return "stdio"
        if url.startswith(("http://", "https://")):
            return "http"
    return "unknown"


def _server(meta: dict[str, Any]) -> str | None:
    url = meta.get("server_url")
    if type(url) is str and url:
        return url
    info = meta.get("server_info")
    if type(info) is dict and type(info.get("name")) is str:
        return str(info["name"])
    return None


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(
        source=ctx.source, format=NAME, default_session=ctx.stem, ts_quality="derived"
    )
    n_lines = len(content.lines)
    if not content.data.strip():
        return LoadResult(messages=rows.frame(), lines=n_lines)
    try:
        doc, _, mend_note = _json.loads_mending(content.data)
    except _json.JSONDecodeError as exc:
        first, _ = decode_raw(content.lines[0])
        rows.add_invalid(1, first, f"cassette is not valid JSON: {_json.describe_error(exc)}")
        return LoadResult(messages=rows.frame(), lines=n_lines)
    if type(doc) is not dict or type(doc.get("interactions")) is not list:
        what = "an object without an `interactions` array" if type(doc) is dict else None
        rows.add_invalid(
            1,
            _json.dumps(doc),
            f"cassette is {what or 'a JSON ' + json_type(doc)}, not a recorded session",
        )
        return LoadResult(messages=rows.frame(), lines=n_lines)

    meta: dict[str, Any] = doc["metadata"] if type(doc.get("metadata")) is dict else {}
    notes: list[str] = [mend_note] if mend_note else []
    version = doc.get("version")
    if version is not None and not (type(version) is str and version.split(".")[0] == "1"):
        notes.append(f"cassette format version {_json.dumps(version)}: read as 1.x")
    transport = _transport(meta)
    rows.transport = transport
    server = _server(meta)
    cursor = _micros(meta.get("recorded_at"))
    if cursor is None:
        notes.append(
            "no readable `metadata.recorded_at`: the cassette has no times, so latencies "
            "cannot be placed on a clock and are lost"
        )
    else:
        notes.append(
            "a cassette records each exchange's latency_ms but not when it happened: "
            "exchanges are laid end to end from recorded_at (times derived)"
        )

    where = value_lines(content.data, 3)
    sessions = 0
    session = ctx.stem
    for i, inter in enumerate(doc["interactions"]):
        line = where.get(("interactions", i), 2 + i)
        raw = _json.dumps(inter)
        if type(inter) is not dict:
            env = Envelope(session=session, server=server)
            why = f"cassette interaction is a JSON {json_type(inter)}, not an object"
            rows.add_invalid(line, raw, why, env)
            continue
        request = inter.get("request")
        if type(request) is dict and request.get("method") == "initialize" and "id" in request:
            sessions += 1
            session = ctx.stem if sessions == 1 else f"{ctx.stem}#{sessions}"
        own = _micros(inter.get("timestamp"))
        start = own if own is not None else cursor
        latency = _latency_us(inter.get("latency_ms"))
        end = start + latency if start is not None and latency is not None else None
        problems = []
        if end is not None and abs(end) >= MAX_US:
            end = None
            problems.append(
                "`latency_ms` ends the exchange after the year 9999: its time is unknown"
            )
        if end is not None:
            cursor = end
        if latency is None:
            problems.append("interaction without a numeric `latency_ms`")
        status = inter.get("response_status")
        status = status if type(status) is int else None
        kind = inter.get("type")
        if kind == "lifecycle":
            method = inter.get("http_method")
            path = inter.get("http_path")
            env = Envelope(
                ts_us=start,
                session=session,
                server=server,
                transport="http",
                http_method=method if type(method) is str else None,
                http_status=status,
                http_headers=_SSE if inter.get("response_is_sse") is True else None,
            )
            text = f"{method or '?'} {path or '?'}" + (f" -> {status}" if status else "")
            rows.add_other(line, raw, "transport", env, "; ".join(problems) or None, text=text)
            continue
        if kind is not None and _kind(kind) not in _TYPES:
            problems.append(f"unknown interaction type {_json.dumps(kind)}")
        http = transport == "http"
        req_env = Envelope(
            ts_us=start,
            session=session,
            server=server,
            direction="c2s",
            # no http_method: a cassette keeps no request headers, and a row with a
            # method is taken to show the headers it was sent with
        )
        req_line = where.get(("interactions", i, "request"), line)
        first_row = len(rows)
        if type(request) is dict:
            rows.add_parsed(req_line, raw, request, None, req_env, "; ".join(problems) or None)
        else:
            why = (
                "interaction without a `request`"
                if request is None
                else f"`request` is a JSON {json_type(request)}, not an object"
            )
            rows.add_invalid(req_line, raw, "; ".join([*problems, why]), req_env)
        if own is not None:
            rows.override_ts_quality(first_row, "exact")
        response = inter.get("response")
        resp_env = Envelope(
            ts_us=end,
            session=session,
            server=server,
            direction="s2c",
            http_status=status if http else None,
            http_headers=_SSE if inter.get("response_is_sse") is True else None,
        )
        resp_line = where.get(("interactions", i, "response"), line)
        if type(response) is dict or type(response) is list:
            rows.add_parsed(resp_line, raw, response, None, resp_env)
        elif response is not None:
            why = f"`response` is a JSON {json_type(response)}, not an object"
            rows.add_invalid(resp_line, raw, why, resp_env, message=_json.dumps(response))
        elif http and status is not None:
            # a notification's (or an unanswered POST's) HTTP answer: no JSON-RPC body
            rows.add_other(resp_line, raw, "transport", resp_env, text=f"HTTP {status}")
    return LoadResult(messages=rows.frame(), lines=n_lines, notes=notes)
