"""OpenTelemetry traces as OTLP/JSON: MCP spans become call records.

    {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name",
        "value": {"stringValue": "weather-mcp"}}]},
      "scopeSpans": [{"scope": {"name": "..."}, "spans": [
        {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
         "parentSpanId": "...", "name": "tools/call get_forecast", "kind": 2,
         "startTimeUnixNano": "1764841277204000000", "endTimeUnixNano": "...",
         "attributes": [{"key": "mcp.method.name", "value": {"stringValue": "tools/call"}},
                        ...],
         "status": {"code": 2, "message": "..."}}]}]}]}

A file is one such export request, or JSON Lines of them (the collector's file
exporter writes one request per line). Spans have no message frames, so the load
returns no message rows (only ``invalid`` rows for lines that are not export
requests) and one call record per MCP request span (``LoadResult.calls``, in the
calls table's schema). Sessions known only from such records are listed by
``Trace.call_only_sessions``: message and transport rules cannot judge them.

A span is an MCP span when it has ``mcp.method.name`` (the OpenTelemetry MCP
semantic conventions, Sentry's MCP instrumentation, the official SDKs' own spans),
else Sentry's ``mcp.tool.name`` / ``mcp.prompt.name`` / ``mcp.resource.uri``, else
``rpc.method`` naming an MCP method with ``rpc.system`` (or ``rpc.system.name``)
``jsonrpc`` (Logfire), else, in OpenLLMetry's ``opentelemetry.instrumentation.mcp``
scopes, a ``{tool}.tool`` span (``traceloop.span.kind`` tool: a tool call) or a
``{method}.mcp`` span, else a name of the form ``{method} {target}`` whose method is
an MCP method (``tools/call get_weather``), also after the prefixes ``MCP send ``
(the Python SDK's client spans), ``MCP request: `` and ``MCP server handle
request: `` (Logfire). Other spans (HTTP, database, GenAI model calls) are skipped
and counted in a note; so are notification spans, which are not calls.

Columns of a record:

* ``session``: ``mcp.session.id`` (or Sentry's ``mcp.session_id``), else the span's
  trace id (a trace groups one operation's calls);
* ``direction``: ``s2c`` for methods only servers send (``sampling/createMessage``,
  ``roots/list``, ``elicitation/create``); for methods both parties send (``ping``,
  ``tasks/get``), ``s2c`` when the sending (``CLIENT``) span's service is an MCP
  server, or the receiving (``SERVER``) span's an MCP client, as that service's spans
  of one-way methods show; else ``c2s``;
* ``server`` / ``client``: ``mcp.server.name`` / ``mcp.client.name`` when set, else
  the ``service.name`` of the side that recorded the span (a ``SERVER`` span of a
  ``c2s`` call is recorded by the MCP server; Sentry's ``sentry.op`` ``mcp.server``
  counts as server side), else that name from the other side's spans of the same
  session in the file, else (server) ``server.address[:server.port]``;
* ``revision``: ``mcp.protocol.version`` (revision source ``telemetry``);
* ``id``: ``jsonrpc.request.id`` (Sentry: ``mcp.request.id``, ``mcp.request_id``) as
  JSON text: an integer attribute stays bare, a string attribute is quoted. The
  conventions record the id as a string, so ``"3"`` may have been ``3`` on the wire:
  it is kept as the string it was recorded as (``id_type`` string);
* ``method``, ``target`` (``gen_ai.tool.name``, ``gen_ai.prompt.name``,
  ``mcp.resource.uri``, Sentry's ``mcp.tool.name`` / ``mcp.prompt.name``, else the
  span name's second word);
* ``request_source`` / ``response_source``: the file; ``request_line`` /
  ``response_line``: the line of the export request (1 for a document);
  ``request_ts`` / ``response_ts``: the span's start and end (UTC);
  ``latency_ms``: end - start;
* ``outcome``: ``tool_error`` when ``error.type`` is ``tool_error`` (or Sentry's
  ``mcp.tool.result.is_error``), ``cancelled`` when Sentry's ``mcp.request.outcome``
  says so, ``error`` when ``error.type``, ``rpc.response.status_code`` or
  ``rpc.jsonrpc.error_code`` is set (Sentry sets only the status code for a caller's
  mistakes such as -32602) or the status is ``ERROR``, else ``ok``; ``error_code``
  from ``rpc.response.status_code`` (else ``error.type``, else
  ``rpc.jsonrpc.error_code``) when it is an integer; ``error_message`` from the status
  message, else ``rpc.jsonrpc.error_message``, else an ``error.type`` that names an
  exception type (the C# SDK's, when there is no JSON-RPC code);
* ``trace_id`` / ``span_id``: the span's ids (hex; base64 ids are converted).

The client's and the server's span of one call are both kept, as two records with
the same id and their own ``span_id``: the client's latency includes the transport,
the server's does not.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.loaders.base import MAX_US, Head, LoadContext, LoadResult
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import RowBuilder, decode_raw, json_type
from mcptrace.schema import CALLS, Timestamp

NAME = "otlp"
DESCRIPTION = (
    "OpenTelemetry OTLP/JSON traces (a document or collector file-exporter JSONL): "
    "MCP spans become call records"
)

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_INT = re.compile(r"^-?\d+$")
_HEAD = re.compile(r'^\s*\{?\s*"resourceSpans"\s*:')
_KINDS = {0: None, 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_STATUS = {0: "unset", 1: "ok", 2: "error"}
_SIDES = {"mcp.server": "server", "mcp.client": "client"}
#: attribute names, preferred first
_SESSION_KEYS = ("mcp.session.id", "mcp.session_id")
_ID_KEYS = ("jsonrpc.request.id", "mcp.request.id", "mcp.request_id")
_TARGET_KEYS = (
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "mcp.resource.uri",
    "mcp.tool.name",
    "mcp.prompt.name",
)
_CODE_KEYS = ("rpc.response.status_code", "error.type", "rpc.jsonrpc.error_code")
#: attributes that hold a JSON-RPC error code and nothing else (``error.type`` may also
#: name an exception type, or be ``_OTHER`` or ``tool_error``)
_NUMERIC_CODE_KEYS = ("rpc.response.status_code", "rpc.jsonrpc.error_code")
#: ``error.type`` values that are no error code and say nothing a message would
_NON_CODE_TYPES = ("_OTHER", "tool_error")
_BOTH_WAYS = frozenset({"c2s", "s2c"})
#: the instrumentation scopes of OpenLLMetry's (Traceloop's) MCP package
_OPENLLMETRY = "opentelemetry.instrumentation.mcp"
#: what instrumentations put before ``{method} {target}`` in a span's name: the official
#: Python SDK's client spans, Logfire's client and server spans
_NAME_PREFIXES = ("MCP send ", "MCP request: ", "MCP server handle request: ")
#: Sentry's per-kind attributes name the method when ``mcp.method.name`` is missing
_SENTRY_METHODS = (
    ("mcp.tool.name", "tools/call"),
    ("mcp.prompt.name", "prompts/get"),
    ("mcp.resource.uri", "resources/read"),
)


def _is_export(value: Any) -> bool:
    return type(value) is dict and type(value.get("resourceSpans")) is list


def sniff(head: Head) -> int:
    if type(head.whole) is dict:
        return 95 if _is_export(head.whole) else 0
    objs = head.json_objects()
    if objs:
        hits = sum(1 for o in objs if _is_export(o))
        return 95 if hits == len(objs) else (70 if hits * 2 > len(objs) else 0)
    # a line too long for the head, or a document too big to parse whole
    text = "\n".join(head.lines[:3])
    return 80 if _HEAD.search(text) else 0


# -- OTLP/JSON values --------------------------------------------------------------


def _any_value(v: Any) -> Any:
    """The Python value of an OTLP ``AnyValue`` (int64 may be a decimal string)."""
    if type(v) is not dict:
        return None
    if "stringValue" in v:
        s = v["stringValue"]
        return s if type(s) is str else None
    if "intValue" in v:
        i = v["intValue"]
        if type(i) is int:
            return i
        if type(i) is str and _INT.match(i):
            return int(i)
        return None
    if "boolValue" in v:
        b = v["boolValue"]
        return b if type(b) is bool else None
    if "doubleValue" in v:
        d = v["doubleValue"]
        return float(d) if type(d) in (int, float) else d
    if "arrayValue" in v:
        arr = v["arrayValue"]
        values = arr.get("values") if type(arr) is dict else None
        return [_any_value(x) for x in values] if type(values) is list else []
    if "kvlistValue" in v:
        kv = v["kvlistValue"]
        values = kv.get("values") if type(kv) is dict else None
        return _attributes(values)
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _attributes(value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if type(value) is list:
        for kv in value:
            if type(kv) is dict and type(kv.get("key")) is str:
                out[kv["key"]] = _any_value(kv.get("value"))
    return out


def _field(obj: dict[str, Any], camel: str, snake: str) -> Any:
    """A field by its OTLP/JSON name, or by the proto name some writers use."""
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _hex_id(value: Any, size: int) -> str | None:
    """A trace or span id as lowercase hex; base64 ids (protobuf JSON) are converted."""
    if type(value) is not str or not value:
        return None
    if len(value) == size * 2 and _HEX.match(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) == size else value


#: times at or beyond 10000-01-01, in ns since the epoch
_MAX_NS = MAX_US * 1000


def _nanos(value: Any) -> int | None:
    """A span time in ns since the epoch; None when absent, not a positive integer, or
    out of range (see :func:`_out_of_range`)."""
    if type(value) is str and _INT.match(value):
        value = int(value)
    if type(value) is int and 0 < value < _MAX_NS:
        return value
    return None


def _out_of_range(value: Any) -> bool:
    """Whether a span time is an integer (or integer text) too big to be a time."""
    if type(value) is str and _INT.match(value):
        value = int(value)
    return type(value) is int and value >= _MAX_NS


def _enum(value: Any, names: Mapping[int, str | None], prefix: str) -> str | None:
    """An OTLP enum given as its number (the OTLP/JSON rule) or its name."""
    if type(value) is int:
        return names.get(value)
    if type(value) is str:
        name = value.lower().removeprefix(prefix)
        return name if name in names.values() else None
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if type(value) is str else _json.dumps(value)


def _first(attrs: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            return value
    return None


def _int_code(value: Any) -> int | None:
    """An error code attribute as an integer (JSON-RPC codes are 32-bit: one beyond the
    64-bit range the table holds is None, and counted by the caller)."""
    if type(value) is str and _INT.match(value.strip()):
        value = int(value.strip())
    if type(value) is int and -(2**63) <= value < 2**63:
        return value
    return None


# -- spans --------------------------------------------------------------------------


@dataclass
class _Counts:
    not_mcp: int = 0
    #: spans of an MCP instrumentation that name no MCP method (a server's span around
    #: its whole run, a stream writer's)
    mcp_without_method: int = 0
    notifications: int = 0
    without_session: int = 0
    #: of those, spans without a trace id either
    without_trace: int = 0
    #: spans with a start or end time beyond the year 9999
    out_of_range: int = 0
    #: error code attributes that are not a 64-bit integer
    unreadable_codes: int = 0


@dataclass
class _Records:
    """Call records as column lists, plus who recorded each one (for filling names)."""

    cols: dict[str, list[Any]] = field(default_factory=dict)
    #: per record: the span's side of the call, "server" (it received the request),
    #: "client" (it sent it) or None (not known)
    side: list[str | None] = field(default_factory=list)
    #: per record: the recording service's name
    service: list[str | None] = field(default_factory=list)
    #: per record, set by :func:`_settle`: "server" (recorded by the MCP server),
    #: "client" or None
    recorder: list[str | None] = field(default_factory=list)

    def add(self, side: str | None, service: str | None, **values: Any) -> None:
        for k, v in values.items():
            self.cols.setdefault(k, []).append(v)
        self.side.append(side)
        self.service.append(service)


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _spans(request: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str, dict[str, Any]]]:
    """(resource attributes, scope name, span) of every span of one export request."""
    for rs in _list(_field(request, "resourceSpans", "resource_spans")):
        if type(rs) is not dict:
            continue
        resource = rs.get("resource")
        res_attrs = _attributes(resource.get("attributes")) if type(resource) is dict else {}
        for ss in _list(_field(rs, "scopeSpans", "scope_spans")):
            if type(ss) is not dict:
                continue
            scope = ss.get("scope")
            scope_name = scope.get("name") if type(scope) is dict else None
            for span in _list(ss.get("spans")):
                if type(span) is dict:
                    yield res_attrs, scope_name if type(scope_name) is str else "", span


def _directions(method: str) -> frozenset[str]:
    # imported here: the method catalogue is only needed once spans are read
    from mcptrace.protocol import any_revision_directions

    return frozenset(any_revision_directions(method))


def _mcp_method(value: Any) -> str | None:
    return value if type(value) is str and _directions(value) else None


def _openllmetry(name: str, attrs: dict[str, Any]) -> tuple[str | None, Any]:
    """Method and target of an OpenLLMetry (Traceloop) MCP span: ``{tool}.tool`` for a
    tool call (``traceloop.span.kind`` tool), ``{method}.mcp`` for the other requests."""
    if attrs.get("traceloop.span.kind") == "tool" and name.endswith(".tool"):
        return "tools/call", attrs.get("traceloop.entity.name") or name.removesuffix(".tool")
    if name.endswith(".mcp"):
        return _mcp_method(name.removesuffix(".mcp")), None
    return None, None


def _method_target(
    span: dict[str, Any], attrs: dict[str, Any], scope: str
) -> tuple[str | None, str | None]:
    method = attrs.get("mcp.method.name")
    target = _first(attrs, _TARGET_KEYS)
    name = span.get("name")
    name = name if type(name) is str else ""
    for prefix in _NAME_PREFIXES:
        if name.startswith(prefix):
            name = name.removeprefix(prefix)
            break
    words = name.split(None, 1)
    if type(method) is not str:
        method = None
        for key, m in _SENTRY_METHODS:
            if attrs.get(key) is not None:
                method = m
                break
        if method is None and attrs.get("rpc.system.name", attrs.get("rpc.system")) == "jsonrpc":
            method = _mcp_method(attrs.get("rpc.method"))
        if method is None and scope.startswith(_OPENLLMETRY):
            method, found = _openllmetry(name, attrs)
            target = target if target is not None else found
        if method is None and words:
            method = _mcp_method(words[0])
    if target is None and method is not None and len(words) == 2 and words[0] == method:
        target = words[1]
    return method, _text(target)


def _add_span(
    records: _Records,
    res_attrs: dict[str, Any],
    scope: str,
    span: dict[str, Any],
    source: str,
    line: int,
    counts: _Counts,
    default_session: str,
) -> None:
    attrs = _attributes(span.get("attributes"))
    method, target = _method_target(span, attrs, scope)
    if method is None:
        if scope.startswith(_OPENLLMETRY):
            counts.mcp_without_method += 1
        else:
            counts.not_mcp += 1
        return
    if method.startswith("notifications/"):
        counts.notifications += 1
        return
    trace_id = _hex_id(_field(span, "traceId", "trace_id"), 16)
    span_id = _hex_id(_field(span, "spanId", "span_id"), 8)
    session = _text(_first(attrs, _SESSION_KEYS))
    if session is None:
        counts.without_session += 1
        session = trace_id
    if session is None:
        # no trace id either: the file's own session, as loaders give lines without one
        counts.without_trace += 1
        session = default_session
    dirs = _directions(method)
    direction = "s2c" if dirs and "c2s" not in dirs else "c2s"

    kind = _enum(span.get("kind"), _KINDS, "span_kind_")
    side = kind if kind in ("server", "client") else _SIDES.get(attrs.get("sentry.op") or "")
    service = _text(res_attrs.get("service.name"))

    raw_id = _first(attrs, _ID_KEYS)
    if raw_id is None:
        rid = id_type = None
    elif type(raw_id) is int:
        rid, id_type = str(raw_id), "integer"
    else:
        rid, id_type = _json.dumps(raw_id), json_type(raw_id)

    start_value = _field(span, "startTimeUnixNano", "start_time_unix_nano")
    end_value = _field(span, "endTimeUnixNano", "end_time_unix_nano")
    start, end = _nanos(start_value), _nanos(end_value)
    if _out_of_range(start_value) or _out_of_range(end_value):
        counts.out_of_range += 1
    latency = (
        (end - start) / 1e6 if start is not None and end is not None and end >= start else None
    )

    status = span.get("status")
    status = status if type(status) is dict else {}
    code = _enum(status.get("code"), _STATUS, "status_code_")
    message = status.get("message")
    error_type = attrs.get("error.type")
    # an error code alone marks an error: Sentry sets only rpc.response.status_code for
    # the caller's mistakes (-32602, ...), with no error.type and no ERROR status
    numeric = any(attrs.get(key) is not None for key in _NUMERIC_CODE_KEYS)
    if error_type == "tool_error" or attrs.get("mcp.tool.result.is_error") is True:
        outcome = "tool_error"
    elif attrs.get("mcp.request.outcome") == "cancelled":
        outcome = "cancelled"  # Sentry: the client cancelled the request
    elif error_type is not None or code == "error" or numeric:
        outcome = "error"
    else:
        outcome = "ok"
    error_code = None
    if outcome == "error":
        given = [(key, attrs[key]) for key in _CODE_KEYS if attrs.get(key) is not None]
        error_code = next((c for _, v in given if (c := _int_code(v)) is not None), None)
        # unreadable: a code attribute that is no integer, or an integer too big; an
        # error.type of another kind is an exception type, not a code
        if error_code is None and any(
            key in _NUMERIC_CODE_KEYS or type(v) is int or _INT.match(str(v).strip())
            for key, v in given
        ):
            counts.unreadable_codes += 1
    error_message = None
    if outcome != "ok":
        error_message = message if type(message) is str and message else None
        if error_message is None:
            error_message = _text(attrs.get("rpc.jsonrpc.error_message"))
        if (
            error_message is None
            and type(error_type) is str
            and error_type not in _NON_CODE_TYPES
            and _int_code(error_type) is None
        ):
            # an exception type (the C# SDK's System.Threading.Tasks.TaskCanceledException)
            error_message = error_type

    records.add(
        side,
        service,
        session=session,
        server=_text(attrs.get("mcp.server.name")),
        client=_text(attrs.get("mcp.client.name")),
        revision=_text(attrs.get("mcp.protocol.version")),
        direction=direction,
        id=rid,
        id_type=id_type,
        method=method,
        target=target,
        request_source=source,
        request_line=line,
        request_ts=start // 1000 if start is not None else None,
        response_source=source,
        response_line=line,
        response_ts=end // 1000 if end is not None else None,
        latency_ms=latency,
        outcome=outcome,
        error_code=error_code,
        error_message=error_message,
        trace_id=trace_id,
        span_id=span_id,
        _address=_address(attrs),
    )


def _address(attrs: dict[str, Any]) -> str | None:
    host = attrs.get("server.address")
    if type(host) is not str or not host:
        return None
    port = attrs.get("server.port")
    return f"{host}:{port}" if type(port) is int else host


def _recorder(side: str | None, direction: str) -> str | None:
    """Which MCP party recorded a span of that side of a call in that direction: the
    receiver of a c2s request is the server, of an s2c request the client."""
    if side is None:
        return None
    return "server" if (side == "server") == (direction == "c2s") else "client"


def _settle(records: _Records) -> None:
    """Directions of the methods both parties send (ping, tasks/get): a span a service
    sends is s2c when that service is an MCP server, as its spans of one-way methods
    show (the server's own ping is a CLIENT span of the server's service); then who
    recorded each call, and the names the recording service gives."""
    cols = records.cols
    if not cols:
        return
    one_way = [_directions(m) != _BOTH_WAYS for m in cols["method"]]
    servers: set[str] = set()
    clients: set[str] = set()
    for fixed, side, service, direction in zip(
        one_way, records.side, records.service, cols["direction"], strict=True
    ):
        if fixed and service is not None:
            party = _recorder(side, direction)
            if party == "server":
                servers.add(service)
            elif party == "client":
                clients.add(service)
    for i, (fixed, side, service) in enumerate(
        zip(one_way, records.side, records.service, strict=True)
    ):
        if fixed or service is None:
            continue
        # a service known as one party only sends (CLIENT span) or receives (SERVER)
        if (side == "client" and service in servers - clients) or (
            side == "server" and service in clients - servers
        ):
            cols["direction"][i] = "s2c"
    records.recorder = [
        _recorder(side, direction)
        for side, direction in zip(records.side, cols["direction"], strict=True)
    ]
    for i, (party, service) in enumerate(zip(records.recorder, records.service, strict=True)):
        if party == "server" and cols["server"][i] is None:
            cols["server"][i] = service
        elif party == "client" and cols["client"][i] is None:
            cols["client"][i] = service


def _fill_names(records: _Records) -> None:
    """Give records the server (client) name that other spans of their session state."""
    cols = records.cols
    if not cols:
        return
    servers: dict[str, str] = {}
    clients: dict[str, str] = {}
    for session, recorder, service in zip(
        cols["session"], records.recorder, records.service, strict=True
    ):
        if service is None or session is None:
            continue
        if recorder == "server":
            servers.setdefault(session, service)
        elif recorder == "client":
            clients.setdefault(session, service)
    for i, session in enumerate(cols["session"]):
        if cols["server"][i] is None:
            cols["server"][i] = servers.get(session) or cols["_address"][i]
        if cols["client"][i] is None:
            cols["client"][i] = clients.get(session)
    del cols["_address"]


def _frame(records: _Records) -> pl.DataFrame:
    if not records.cols:
        return CALLS.empty()
    cols: dict[str, Any] = dict(records.cols)
    for name in ("request_ts", "response_ts"):
        micros = pl.Series(name, cols.pop(name), dtype=pl.Int64)
        cols[name] = pl.from_epoch(micros, time_unit="us").dt.replace_time_zone("UTC")
    df = pl.DataFrame(cols, strict=False)
    return CALLS.conform(df.with_columns(pl.col("request_ts", "response_ts").cast(Timestamp)))


def _both_sides(calls: pl.DataFrame, recorders: list[str | None]) -> int:
    """Calls (session, direction, id, method) recorded by both a client and a server span."""
    if calls.is_empty():
        return 0
    keyed = calls.select("session", "direction", "id", "method").with_columns(
        _rec=pl.Series(recorders, dtype=pl.String)
    )
    sides = (
        keyed.filter(pl.col("id").is_not_null() & pl.col("_rec").is_not_null())
        .group_by("session", "direction", "id", "method")
        .agg(pl.col("_rec").n_unique().alias("n"))
    )
    return int((sides["n"] > 1).sum())


# -- the file ------------------------------------------------------------------------


def _not_export(value: Any) -> str:
    what = "an object" if type(value) is dict else f"a JSON {json_type(value)}"
    return f"not an OTLP export request: {what} without `resourceSpans`"


def _load_lines(
    rows: RowBuilder,
    records: _Records,
    counts: _Counts,
    content: Content,
    ctx: LoadContext,
    whole_error: Exception,
) -> None:
    """JSON Lines of export requests; a document that is not valid JSON is one row."""
    lines = content.lines
    first = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
    try:
        _json.loads(lines[first])
    except _json.JSONDecodeError:
        raw, _ = decode_raw(lines[first])
        problem = _json.describe_error(whole_error)
        rows.add_invalid(first + 1, raw, f"OTLP document is not valid JSON: {problem}")
        return
    for lineno, data in enumerate(lines, 1):
        if not data.strip():
            continue
        raw, utf8_problem = decode_raw(data)
        try:
            request = _json.loads(data)
        except _json.JSONDecodeError as exc:
            problem = utf8_problem or _json.describe_error(exc)
            rows.add_invalid(lineno, raw, f"OTLP export line is not valid JSON: {problem}")
            continue
        if not _is_export(request):
            rows.add_invalid(lineno, raw, _not_export(request))
            continue
        for res_attrs, scope, span in _spans(request):
            _add_span(records, res_attrs, scope, span, ctx.source, lineno, counts, ctx.stem)


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(source=ctx.source, tz=ctx.tz, format=NAME, default_session=ctx.stem)
    n_lines = len(content.lines)
    records = _Records()
    counts = _Counts()
    if content.data.strip():
        try:
            whole = _json.loads(content.data)
        except _json.JSONDecodeError as exc:
            _load_lines(rows, records, counts, content, ctx, exc)
        else:
            # one export request (also a JSON Lines file of a single line)
            if _is_export(whole):
                for res_attrs, scope, span in _spans(whole):
                    _add_span(records, res_attrs, scope, span, ctx.source, 1, counts, ctx.stem)
            else:
                first, _ = decode_raw(content.lines[0])
                rows.add_invalid(1, first, _not_export(whole))

    _settle(records)
    _fill_names(records)
    calls = _frame(records)
    notes: list[str] = []
    if counts.not_mcp:
        notes.append(f"{counts.not_mcp} span(s) without MCP attributes skipped (not MCP)")
    if counts.mcp_without_method:
        notes.append(
            f"{counts.mcp_without_method} span(s) of OpenLLMetry's MCP instrumentation that "
            "name no MCP method skipped (not calls: a server's span around its run, a "
            "stream writer's)"
        )
    if counts.notifications:
        notes.append(
            f"{counts.notifications} MCP notification span(s) skipped: notifications are not calls"
        )
    both = _both_sides(calls, records.recorder)
    if both:
        notes.append(
            f"{both} call(s) recorded by both a client and a server span: each span is a call "
            "record of its own (see span_id); the client's latency includes the transport"
        )
    if counts.without_session:
        notes.append(
            f"{counts.without_session} MCP span(s) without mcp.session.id: their session is "
            "their trace id (one trace per operation, so one MCP session may show as several"
            + (
                f"; {counts.without_trace} without a trace id either: the file's name)"
                if counts.without_trace
                else ")"
            )
        )
    if counts.unreadable_codes:
        notes.append(
            f"{counts.unreadable_codes} error code attribute(s) that are not a 64-bit "
            "integer: that code is left unknown"
        )
    if counts.out_of_range:
        notes.append(
            f"{counts.out_of_range} span(s) with a start or end time beyond the year 9999: "
            "that time is left unknown"
        )
    return LoadResult(messages=rows.frame(), lines=n_lines, notes=notes, calls=calls)
