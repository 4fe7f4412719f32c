"""MCPSpy JSONL (``mcpspy -o events.jsonl``): MCP traffic seen by eBPF, one event per line.

    {"timestamp": "2025-11-29T21:54:51.585900784+02:00", "transport_type": "stdio",
     "stdio_transport": {"from_pid": 54777, "from_comm": "python", "to_pid": 54778,
     "to_comm": "weather-server"}, "type": "request", "id": 0, "method": "initialize",
     "params": {...}, "error": {}, "raw": "{\\"method\\":\\"initialize\\",...}"}

Sources (``alex-ilgayev/MCPSpy``): the event struct ``MCPEvent`` in
``pkg/event/mcp.go`` (``timestamp``, ``transport_type``, ``stdio_transport`` with
``from_pid``/``from_comm``/``to_pid``/``to_comm``, ``http_transport`` with ``pid``,
``comm``, ``host``, ``is_request``; the parsed JSON-RPC fields flattened in:
``type``, ``id``, ``method``, ``params``, ``result``, ``error``, ``request``; and
``raw``), written with ``json.Marshal`` by ``pkg/output/jsonl.go``; examples in
``tests/expected_output_stdio.jsonl`` and ``tests/expected_output_http.jsonl``;
how events are made in ``pkg/mcp/parser.go``.

The message is ``raw`` (the JSON text MCPSpy decoded, as sent). The flattened
fields are MCPSpy's re-encoding and are not trusted: ``error`` is always there
(``{}`` on success) because Go's ``omitempty`` does not drop structs. Only when
``raw`` is missing or empty (early releases) is the message rebuilt from them.

stdio: every event names the writing and the reading process. The two processes
of a pair are one session; the client is the process that sends ``initialize``
(else the sender of a request only clients send, e.g. ``tools/call``; that
direction is marked inferred), the server's ``comm`` (the kernel's 15-character
process name) is the server label, and the session key is
``<client comm>:<pid>-><server comm>:<pid>``. A pair whose roles cannot be told
keeps ``unknown`` directions, settled later from the method catalogue.

HTTP (``transport_type`` ``http``; ``sse`` is read the same): MCPSpy hooks the
TLS library inside the client, so ``pid``/``comm`` are the client's; ``host`` is
the request's ``Host`` header and the server label (``http_headers`` and
``http_method`` stay null: MCPSpy keeps no other header, so the HTTP rules have none
to judge); ``is_request`` true means the message went in
the request body (c2s), false or absent that it came back in a response or SSE
event (s2c). Session key ``<comm>:<pid>-><host>``. Within a pair a second
``initialize`` starts ``...#2`` and so on.

Other events MCPSpy writes to the same file are ``log`` rows: LLM API messages
(``message_type``, with ``--llm``), tool usage seen in LLM traffic
(``usage_type``, with ``--tools``) and prompt-injection alerts (``risk_level``
with the offending ``mcp_event``, with ``--security``).

Caveats from the source: times are taken when MCPSpy parsed the message in user
space, not when it crossed the pipe or socket; MCPSpy drops duplicate messages
and responses whose request it did not see, so orphans never appear; it can only
see traffic of processes that started while it was running.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.loaders.base import Head, LoadContext, LoadResult
from mcptrace.loaders.directions import infer_directions
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw, json_type

NAME = "mcpspy"
DESCRIPTION = (
    "MCPSpy eBPF JSONL: {timestamp, transport_type, stdio_transport|http_transport, raw} per line"
)

_HTTP_TYPES = {"http", "sse"}
_REBUILT = "no `raw` message text: rebuilt from the fields MCPSpy parsed"


def _kind(o: dict[str, Any]) -> str | None:
    """Which MCPSpy event an object is, or None."""
    if "transport_type" in o and ("raw" in o or "stdio_transport" in o or "http_transport" in o):
        return "mcp"
    if "risk_level" in o and "mcp_event" in o:
        return "alert"
    if "usage_type" in o and "tool_name" in o:
        return "tool"
    if "message_type" in o and "session_id" in o and "comm" in o:
        return "llm"
    return None


def _without_response(messages: pl.DataFrame) -> int:
    """Requests with no response of the same id in their session."""
    requests = messages.filter(pl.col("kind") == "request").select("session", "id")
    answers = messages.filter(pl.col("kind").is_in(["response", "error"])).select("session", "id")
    return requests.join(answers, on=["session", "id"], how="anti", nulls_equal=False).height


def sniff(head: Head) -> int:
    objs = head.json_objects()
    if not objs:
        return 0
    kinds = [_kind(o) for o in objs]
    hits = sum(1 for k in kinds if k is not None)
    mcp = "mcp" in kinds or "alert" in kinds
    if hits == len(objs):
        # a capture with --llm writes an event per streamed chunk: dozens of LLM events
        # may come before the first MCP one, and they are MCPSpy's own too
        return 95 if mcp else 80
    return 70 if mcp and hits * 2 > len(objs) else 0


@dataclass
class _Pair:
    """One stdio process pair: who is the client, as far as the capture tells."""

    client: int | None = None
    from_initialize: bool = False
    initializes: int = 0


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


def _str(value: Any) -> str:
    return value if type(value) is str else ""


def _message_of(rec: dict[str, Any]) -> tuple[Any, str | None, str | None, str | None]:
    """The parsed message, its wire text (when ``raw`` has it), a problem that makes the
    row invalid, and a note for a valid one (lone surrogate escapes read as U+FFFD)."""
    raw = rec.get("raw")
    if type(raw) is str and raw.strip():
        try:
            parsed, mended, note = _json.loads_mending(raw)
        except _json.JSONDecodeError as exc:
            return None, raw, _json.describe_error(exc), None
        return parsed, mended or raw, None, note
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    if "id" in rec:
        msg["id"] = rec["id"]
    kind = rec.get("type")
    if type(rec.get("method")) is str and rec["method"]:
        msg["method"] = rec["method"]
        if "params" in rec:
            msg["params"] = rec["params"]
    elif kind == "response":
        error = rec.get("error")
        if type(error) is dict and error:
            msg["error"] = error
        else:
            msg["result"] = rec.get("result")
    else:
        return None, None, "MCPSpy event with neither `raw` nor a parsed message", None
    return msg, None, None, None


def _sender_role(msg: Any) -> str | None:
    """``client`` or ``server`` when the message alone says who sent it."""
    if type(msg) is not dict:
        return None
    method = msg.get("method")
    if type(method) is not str:
        return None
    if method == "initialize" and "id" in msg:
        return "client"
    from mcptrace.protocol import any_revision_directions

    dirs = any_revision_directions(method)
    if dirs == {"c2s"}:
        return "client"
    if dirs == {"s2c"}:
        return "server"
    return None


def _stdio_pair(rec: dict[str, Any]) -> tuple[int, int, str, str] | None:
    st = rec.get("stdio_transport")
    if type(st) is not dict:
        return None
    a, b = _int(st.get("from_pid")), _int(st.get("to_pid"))
    if a is None or b is None:
        return None
    return a, b, _str(st.get("from_comm")), _str(st.get("to_comm"))


def _roles(records: list[tuple[int, dict[str, Any], Any]]) -> dict[frozenset[int], _Pair]:
    """First pass over stdio events: which process of each pair is the client."""
    pairs: dict[frozenset[int], _Pair] = {}
    for _, rec, msg in records:
        p = _stdio_pair(rec)
        if p is None:
            continue
        pair = pairs.setdefault(frozenset(p[:2]), _Pair())
        if pair.from_initialize:
            continue
        role = _sender_role(msg)
        if role is None:
            continue
        client = p[0] if role == "client" else p[1]
        if type(msg) is dict and msg.get("method") == "initialize":
            pair.client, pair.from_initialize = client, True
        elif pair.client is None:
            pair.client = client
    return pairs


class _Keys:
    """Session keys: ``base`` for the first connection of a pair, ``base#n`` after."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}

    def key(self, base: str, starts: bool) -> str:
        n = self.count.get(base, 0)
        if starts or n == 0:
            n += 1
            self.count[base] = n
        return base if n == 1 else f"{base}#{n}"


def _envelope(
    rec: dict[str, Any], msg: Any, pairs: dict[frozenset[int], _Pair], keys: _Keys
) -> tuple[Envelope, bool]:
    """Envelope of an MCP event, and whether its direction was inferred."""
    ts = rec.get("timestamp")
    env = Envelope(ts_text=ts if type(ts) is str else None)
    starts = type(msg) is dict and msg.get("method") == "initialize" and "id" in msg
    transport = rec.get("transport_type")
    p = _stdio_pair(rec)
    if p is not None:
        env.transport = "stdio"
        from_pid, to_pid, from_comm, to_comm = p
        pair = pairs.get(frozenset((from_pid, to_pid)), _Pair())
        if pair.client is None:
            lo, hi = sorted([(from_pid, from_comm), (to_pid, to_comm)])
            base = f"{lo[1]}:{lo[0]}<->{hi[1]}:{hi[0]}"
            inferred = False
        else:
            sent_by_client = from_pid == pair.client
            env.direction = "c2s" if sent_by_client else "s2c"
            client = (from_comm, from_pid) if sent_by_client else (to_comm, to_pid)
            server = (to_comm, to_pid) if sent_by_client else (from_comm, from_pid)
            env.server = server[0] or None
            base = f"{client[0]}:{client[1]}->{server[0]}:{server[1]}"
            inferred = not pair.from_initialize
        env.session = keys.key(base, starts and env.direction == "c2s")
        return env, inferred
    ht = rec.get("http_transport")
    if (type(transport) is str and transport in _HTTP_TYPES) or type(ht) is dict:
        env.transport = "http"
        ht = ht if type(ht) is dict else {}
        host = _str(ht.get("host"))
        headers: dict[str, Any] = {}
        for name in ("headers", "request_headers", "response_headers"):
            extra = ht.get(name, rec.get(name))
            if type(extra) is dict:
                headers.update(extra)
        # MCPSpy keeps the host alone, no header: a row claiming headers would have the
        # linter judge every header as missing (MCP-Protocol-Version, Accept, ...)
        if headers:
            env.http_headers = _json.dumps({"Host": host, **headers} if host else headers)
        env.server = host or None
        is_request = ht.get("is_request") is True
        env.direction = "c2s" if is_request else ("s2c" if ht else "unknown")
        if is_request and headers:
            env.http_method = "POST"
        base = f"{_str(ht.get('comm')) or '?'}:{_int(ht.get('pid')) or '?'}->{host or '?'}"
        env.session = keys.key(base, starts and is_request)
        return env, False
    return env, False


def _log_text(kind: str, rec: dict[str, Any]) -> str:
    if kind == "llm":
        parts = [f"LLM {_str(rec.get('message_type')) or 'message'}"]
        where = _str(rec.get("host")) + _str(rec.get("path"))
        if where:
            parts.append(where)
        if rec.get("model"):
            parts.append(f"model={_str(rec.get('model'))}")
        if rec.get("error"):
            parts.append(f"error={_str(rec.get('error'))}")
        return " ".join(parts)
    if kind == "tool":
        text = f"LLM tool {_str(rec.get('usage_type')) or 'usage'}: {_str(rec.get('tool_name'))}"
        return text + (" (error)" if rec.get("is_error") is True else "")
    # security alert
    event = rec.get("mcp_event")
    method = _str(event.get("method")) if type(event) is dict else ""
    score = rec.get("risk_score")
    return (
        f"security alert: {_str(rec.get('risk_level'))} risk of "
        f"{_str(rec.get('category')) or 'injection'} (score {score})"
        + (f" in {method}" if method else "")
    )


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(source=ctx.source, tz=ctx.tz, format=NAME, default_session=ctx.stem)
    n_lines = len(content.lines)
    # pass 1: parse every line (stdio roles need the whole file)
    parsed: list[tuple[int, str, str | None, Any]] = []
    mcp: list[tuple[int, dict[str, Any], Any]] = []
    for lineno, data in enumerate(content.lines, 1):
        raw, utf8_problem = decode_raw(data)
        if not raw.strip():
            parsed.append((lineno, raw, utf8_problem, None))
            continue
        try:
            rec = _json.loads(data)
        except _json.JSONDecodeError as exc:
            parsed.append((lineno, raw, utf8_problem or _json.describe_error(exc), None))
            continue
        parsed.append((lineno, raw, utf8_problem, rec))
        if type(rec) is dict:
            if _kind(rec) == "mcp":
                mcp.append((lineno, rec, _message_of(rec)[0]))
            elif _kind(rec) == "alert" and type(rec.get("mcp_event")) is dict:
                event = rec["mcp_event"]
                mcp.append((lineno, event, _message_of(event)[0]))
    pairs = _roles(mcp)
    keys = _Keys()

    inferred_rows: list[int] = []
    incomplete_last = False
    for lineno, raw, problem, rec in parsed:
        if rec is None:
            if not raw.strip():
                rows.add_other(lineno, raw, "blank", note=problem)
                continue
            why = f"MCPSpy event is not valid JSON: {problem}"
            if lineno == n_lines and not content.data.endswith(b"\n"):
                incomplete_last = True
                why = f"MCPSpy event is not valid JSON: incomplete last event: {problem}"
            rows.add_invalid(lineno, raw, why)
            continue
        if type(rec) is not dict:
            rows.add_invalid(lineno, raw, f"MCPSpy event is a JSON {json_type(rec)}, not an object")
            continue
        kind = _kind(rec)
        if kind == "mcp":
            msg, text, bad, mend_note = _message_of(rec)
            env, inferred = _envelope(rec, msg, pairs, keys)
            if inferred:
                inferred_rows.append(len(rows))
            if bad is not None:
                rows.add_invalid(lineno, raw, bad, env, message=text)
            elif text is not None:
                note = "; ".join(n for n in (problem, mend_note) if n) or None
                rows.add_parsed(lineno, raw, msg, text, env, note)
            else:
                rows.add_parsed(lineno, raw, msg, None, env, problem or _REBUILT)
            continue
        if kind is None:
            rows.add_invalid(lineno, raw, "not an MCPSpy event (no `transport_type`)")
            continue
        env = Envelope(ts_text=rec.get("timestamp") if type(rec.get("timestamp")) is str else None)
        if kind == "alert" and type(rec.get("mcp_event")) is dict:
            event = rec["mcp_event"]
            event_env, _ = _envelope(event, None, pairs, keys)
            env.session, env.server, env.transport = (
                event_env.session,
                event_env.server,
                event_env.transport,
            )
        elif kind in ("llm", "tool"):
            env.transport = "http"
            env.server = _str(rec.get("host")) or None
            env.session = f"{_str(rec.get('comm')) or '?'}:{rec.get('pid')}->{env.server or '?'}"
        rows.add_other(lineno, raw, "log", env, problem, text=_log_text(kind, rec))

    messages = rows.frame()
    if inferred_rows:
        flags = messages["direction_inferred"].to_list()
        for i in inferred_rows:
            flags[i] = True
        messages = messages.with_columns(direction_inferred=pl.Series(flags, dtype=pl.Boolean))
    messages = infer_directions(messages)
    notes: list[str] = []
    pairs_only = messages.filter(pl.col("session").str.contains("<->", literal=True))
    unsure = sorted(set(pairs_only["session"].to_list()))
    if unsure:
        notes.append(
            f"{len(unsure)} stdio process pair(s) without an initialize or a one-way request: "
            "which process is the server is unknown"
        )
    if incomplete_last:
        notes.append("the last event is incomplete (MCPSpy stopped while writing it)")
    waiting = _without_response(messages)
    if waiting:
        notes.append(
            f"{waiting} request(s) without a response: MCPSpy drops a response that comes "
            "more than 5 s after its request (its request cache expires), so a slow call "
            "shows as unanswered"
        )
    return LoadResult(messages=messages, lines=n_lines, truncated=incomplete_last, notes=notes)
