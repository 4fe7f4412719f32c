"""Write the hand-designed sample captures in mcptrace's own formats.

Run ``python scripts/make_sample_traces.py`` to regenerate; the output is
deterministic and a test checks the committed files are up to date. The other
formats' samples (Claude Desktop, VS Code, mcpsnoop, Inspector) are written by
hand in their own tools' shapes and are not generated here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1] / "sample_traces"
START = datetime(2026, 9, 14, 9, 30, 0, tzinfo=UTC)
META = "io.modelcontextprotocol"


class Clock:
    """Capture time that only moves forward, in milliseconds."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, ms: float) -> str:
        self.now += timedelta(milliseconds=ms)
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"


def rpc(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **fields}


def text(s: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": s}]


def healthy_legacy() -> Iterator[dict[str, Any]]:
    """A Claude-like host and a docs server speaking 2025-11-25 over stdio."""
    c = Clock(START)
    s = {"session": "docs-1", "server": "docs", "transport": "stdio"}

    def out(ms: float, d: str, msg: dict[str, Any]) -> dict[str, Any]:
        return {"ts": c.tick(ms), "dir": d, **s, "msg": msg}

    yield out(0, "c2s", rpc(id=0, method="initialize", params={
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}}},
        "clientInfo": {"name": "desk-host", "version": "4.2.0"},
    }))  # fmt: skip
    yield out(38.2, "s2c", rpc(id=0, result={
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": True}, "resources": {"subscribe": True},
                         "prompts": {}, "logging": {}},
        "serverInfo": {"name": "docs-server", "version": "1.8.3"},
        "instructions": "Search before you fetch a page.",
    }))  # fmt: skip
    yield out(1.1, "c2s", rpc(method="notifications/initialized"))
    yield out(2.4, "c2s", rpc(id=1, method="tools/list"))
    yield out(11.9, "s2c", rpc(id=1, result={"tools": [
        {"name": "search_docs", "description": "Full-text search over the handbook",
         "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}},
                         "required": ["query"]}},
        {"name": "fetch_page", "description": "Fetch one handbook page as Markdown",
         "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                         "required": ["path"]}},
    ]}))  # fmt: skip
    yield out(0.8, "c2s", rpc(id=2, method="resources/list"))
    yield out(6.3, "s2c", rpc(id=2, result={"resources": [
        {"uri": "docs://handbook/index", "name": "index", "mimeType": "text/markdown"},
    ]}))  # fmt: skip
    yield out(0.6, "c2s", rpc(id=3, method="logging/setLevel", params={"level": "info"}))
    yield out(2.0, "s2c", rpc(id=3, result={}))
    yield out(4210.0, "c2s", rpc(id=4, method="tools/call", params={
        "name": "search_docs", "arguments": {"query": "rotate api keys"},
        "_meta": {"progressToken": "search-4"},
    }))  # fmt: skip
    yield out(
        45.0,
        "s2c",
        rpc(
            method="notifications/progress",
            params={"progressToken": "search-4", "progress": 1, "total": 3},
        ),
    )
    yield out(
        40.1,
        "s2c",
        rpc(
            method="notifications/message",
            params={"level": "info", "logger": "search", "data": "index warm, 3 shards"},
        ),
    )
    yield out(
        60.2,
        "s2c",
        rpc(
            method="notifications/progress",
            params={"progressToken": "search-4", "progress": 3, "total": 3},
        ),
    )
    yield out(
        12.7,
        "s2c",
        rpc(id=4, result={"content": text("3 results: security/keys.md, ops/rotation.md, faq.md")}),
    )
    yield out(
        1830.0,
        "c2s",
        rpc(
            id=5,
            method="tools/call",
            params={"name": "fetch_page", "arguments": {"path": "security/keys.md"}},
        ),
    )
    yield out(88.4, "s2c", rpc(id=0, method="roots/list"))
    yield out(
        3.1,
        "c2s",
        rpc(id=0, result={"roots": [{"uri": "file:///home/dev/handbook", "name": "handbook"}]}),
    )
    yield out(
        51.6,
        "s2c",
        rpc(
            id=5,
            result={
                "content": text(
                    "# Rotating API keys\n\nKeys expire after 90 days. Rotate with `keyctl rotate`."
                )
            },
        ),
    )
    yield out(
        950.0,
        "c2s",
        rpc(
            id=6,
            method="tools/call",
            params={"name": "fetch_page", "arguments": {"path": "missing/page.md"}},
        ),
    )
    yield out(
        20.5,
        "s2c",
        rpc(id=6, result={"content": text("page not found: missing/page.md"), "isError": True}),
    )
    yield out(700.0, "c2s", rpc(id=7, method="prompts/get", params={"name": "nonexistent"}))
    yield out(
        3.3, "s2c", rpc(id=7, error={"code": -32602, "message": "Unknown prompt: nonexistent"})
    )
    yield out(
        2500.0, "c2s", rpc(id=8, method="resources/read", params={"uri": "docs://handbook/index"})
    )
    yield out(
        9.9,
        "s2c",
        rpc(
            id=8,
            result={
                "contents": [
                    {
                        "uri": "docs://handbook/index",
                        "mimeType": "text/markdown",
                        "text": "# Handbook",
                    }
                ]
            },
        ),
    )
    yield out(5200.0, "c2s", rpc(id=9, method="ping"))
    yield out(0.9, "s2c", rpc(id=9, result={}))


def healthy_modern() -> Iterator[dict[str, Any]]:
    """A stateless 2026-07-28 client over Streamable HTTP, with multi round-trip tool calls."""
    c = Clock(START + timedelta(minutes=5))
    s = {"session": "weather-http-1", "server": "weather", "transport": "http"}
    info = {"name": "agent-cli", "version": "0.9.1"}
    caps = {"elicitation": {"form": {}}, "sampling": {}}
    server_meta = {f"{META}/serverInfo": {"name": "weather-server", "version": "3.0.0"}}

    def meta(**extra: Any) -> dict[str, Any]:
        return {f"{META}/protocolVersion": "2026-07-28", f"{META}/clientCapabilities": caps,
                f"{META}/clientInfo": info, **extra}  # fmt: skip

    def out(ms: float, d: str, msg: dict[str, Any], status: int | None = None) -> dict[str, Any]:
        rec: dict[str, Any] = {"ts": c.tick(ms), "dir": d, **s, "msg": msg}
        if d == "c2s":
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                       "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": msg.get("method")}  # fmt: skip
            params = msg.get("params") or {}
            name = params.get("name") or params.get("uri")  # Mcp-Name: the tool, prompt or resource
            if name:
                headers["Mcp-Name"] = name
            rec["http"] = {"method": "POST", "headers": headers}
        elif status is not None:
            rec["http"] = {"status": status, "headers": {"Content-Type": "application/json"}}
        return rec

    yield out(0, "c2s", rpc(id="d-1", method="server/discover", params={"_meta": meta()}))
    yield out(21.4, "s2c", rpc(id="d-1", result={
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": True}, "resources": {}, "prompts": {}},
        "ttlMs": 600000, "cacheScope": "public", "_meta": server_meta,
    }), 200)  # fmt: skip
    yield out(3.0, "c2s", rpc(id="t-1", method="tools/list", params={"_meta": meta()}))
    yield out(14.2, "s2c", rpc(id="t-1", result={
        "resultType": "complete", "ttlMs": 300000, "cacheScope": "public", "_meta": server_meta,
        "tools": [
            {"name": "forecast", "description": "Forecast for a city",
             "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
            {"name": "book_trip", "description": "Book a trip, asking the user to confirm",
             "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}},
        ],
    }), 200)  # fmt: skip
    yield out(
        1500.0,
        "c2s",
        rpc(
            id="c-1",
            method="tools/call",
            params={
                "name": "forecast",
                "arguments": {"city": "Lisbon"},
                "_meta": meta(progressToken="c-1"),
            },
        ),
    )
    yield out(
        80.0,
        "s2c",
        rpc(
            method="notifications/progress",
            params={"progressToken": "c-1", "progress": 0.5, "message": "radar"},
        ),
    )
    yield out(120.3, "s2c", rpc(id="c-1", result={
        "resultType": "complete", "content": text("Lisbon: 24°C, clear, wind 12 km/h"),
        "_meta": server_meta}), 200)  # fmt: skip
    # multi round-trip: the server needs the user's confirmation, then a retry with a new id
    yield out(
        2300.0,
        "c2s",
        rpc(
            id="c-2",
            method="tools/call",
            params={"name": "book_trip", "arguments": {"city": "Porto"}, "_meta": meta()},
        ),
    )
    yield out(31.7, "s2c", rpc(id="c-2", result={
        "resultType": "input_required", "_meta": server_meta,
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Book 2 nights in Porto for 240 EUR?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                "required": ["ok"]}}}},
        "requestState": "c3RlcDoxO2NpdHk6UG9ydG8",
    }), 200)  # fmt: skip
    yield out(6400.0, "c2s", rpc(id="c-3", method="tools/call", params={
        "name": "book_trip", "arguments": {"city": "Porto"}, "_meta": meta(),
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        "requestState": "c3RlcDoxO2NpdHk6UG9ydG8",
    }))  # fmt: skip
    yield out(
        210.9,
        "s2c",
        rpc(
            id="c-3",
            result={
                "resultType": "complete",
                "content": text("Booked: PRT-88412"),
                "_meta": server_meta,
            },
        ),
        200,
    )
    yield out(
        900.0,
        "c2s",
        rpc(
            id="r-1",
            method="resources/read",
            params={"uri": "weather://stations/unknown", "_meta": meta()},
        ),
    )
    yield out(
        4.4,
        "s2c",
        rpc(
            id="r-1",
            error={
                "code": -32602,
                "message": "Resource not found",
                "data": {"uri": "weather://stations/unknown"},
            },
        ),
        200,
    )
    yield out(1200.0, "c2s", rpc(id="p-1", method="prompts/list", params={"_meta": meta()}))
    yield out(
        7.5,
        "s2c",
        rpc(
            id="p-1",
            result={
                "resultType": "complete",
                "ttlMs": 300000,
                "cacheScope": "public",
                "_meta": server_meta,
                "prompts": [{"name": "daily_brief", "description": "Morning weather brief"}],
            },
        ),
        200,
    )


def _incident_fates(*kinds: str) -> Iterator[str]:
    """The fates of fetch_page calls while the upstream is down, in turn, forever."""
    while True:
        yield from kinds


def _incident_jitter(seed: int, n: int) -> float:
    """A deterministic spread in [0, 1): the golden-ratio sequence."""
    return ((seed + n) * 0.6180339887) % 1.0


def _incident_fate(tool: str, t: float, j: float, fates: Iterator[str]) -> tuple[str, float | None]:
    """How the search server answers a tool call sent ``t`` ms into the incident.

    Returns the outcome (``ok``, ``error``, ``hang`` or ``late``) and the latency in ms
    (``None`` when no answer ever comes). The upstream that ``fetch_page`` reads slows
    down from minute 3, times out from minute 5 (the server gives up after 20 s) and
    comes back, still slow, at minute 7. ``summarize`` reads a page cache that runs dry
    at 5:30, then fails the same way; ``search_docs`` uses a local index and stays fast.
    """
    s = t / 1000
    if tool == "search_docs":
        return "ok", round(45 + 90 * j, 1)
    if tool == "summarize":
        if 330 <= s < 420:
            return "error", round(20000 + 40 * j, 1)
        return "ok", round(140 + 160 * j if s < 330 else 350 + 500 * j, 1)
    if s < 180:
        return "ok", round(70 + 210 * j, 1)
    if s < 300:
        return "ok", round(1000 * 2 ** ((s - 180) / 30) * (0.9 + 0.2 * j), 1)
    if s < 420:
        kind = next(fates)
        return kind, {"error": round(20000 + 30 * j, 1), "late": round(34000 + 500 * j, 1)}.get(
            kind
        )
    return "ok", round(1200 + 1800 * j, 1)


def _incident_call(
    t: float, tool: str, args: dict[str, Any], j: float, fates: Iterator[str], **flags: Any
) -> dict[str, Any]:
    """One planned tool call: when it is sent, how it ends, and when the client moves on
    (at the answer, or after its 30 s timeout)."""
    kind, latency = _incident_fate(tool, t, j, fates)
    answered = kind in ("ok", "error") and latency is not None
    free = t + latency if answered and latency is not None else t + 30000
    return {"t": round(t, 1), "tool": tool, "args": args, "kind": kind, "latency": latency,
            "free": free, **flags}  # fmt: skip


def _incident_worker(
    start: float,
    end: float,
    jobs: list[tuple[str, dict[str, Any], float]],
    seed: int,
    fates: Iterator[str],
    **flags: Any,
) -> list[dict[str, Any]]:
    """A client loop that runs ``jobs`` one after the other: (tool, arguments, pause
    after the answer in ms), from ``start`` until ``end`` ms."""
    calls = []
    t = start
    for n, (tool, args, pause) in enumerate(jobs):
        if t >= end:
            break
        j = _incident_jitter(seed, n)
        call = _incident_call(t, tool, args, j, fates, **flags)
        calls.append(call)
        t = call["free"] + pause * (0.8 + 0.4 * j)
    return calls


def _incident_texts(tool: str, args: dict[str, Any]) -> str:
    if tool == "search_docs":
        return f"3 results for {args['query']!r}"
    path = args["path"]
    title = path.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ").capitalize()
    if tool == "fetch_page":
        return f"# {title}\n\n(page {path}, 4 sections)"
    return f"{title}: 4 sections summarized in {args['max_words']} words."


def _incident_search_session(
    put: Any,
    env: dict[str, Any],
    calls: list[dict[str, Any]],
    first_id: int,
    *,
    reason: str,
    logs: bool = False,
) -> None:
    """Number the calls of one stdio session in send order and emit their messages,
    progress, cancellations and the server's stderr."""
    calls.sort(key=lambda c: c["t"])
    next_id = first_id
    for c in calls:
        if c.get("null_id"):
            c["id"] = None
        elif "reuse" in c:
            c["id"] = c["reuse"]["id"]
        else:
            c["id"] = next_id
            next_id += 1
    upstream = "https://docs-cdn.internal/pages"
    said: set[str] = set()

    def log(ms: float, level: str, data: str, once: str) -> None:
        if logs and once not in said:
            said.add(once)
            put(ms, env, "s2c", rpc(method="notifications/message", params={
                "level": level, "logger": "search.upstream", "data": data}))  # fmt: skip

    for c in calls:
        t, rid, tool, args, latency = c["t"], c["id"], c["tool"], c["args"], c["latency"]
        params: dict[str, Any] = {"name": tool, "arguments": args}
        token = f"{env['session']}-{rid}" if c.get("progress") else None
        if token:
            params["_meta"] = {"progressToken": token}
        put(t, env, "c2s", rpc(id=rid, method="tools/call", params=params))
        if rid is None:
            put(
                t + 0.8, env, "stderr", "WARNING search.server: rejected a request whose id is null"
            )
            put(t + 0.9, env, "s2c", rpc(error={
                "code": -32600, "message": "Invalid Request: id must be a string or an integer"}))  # fmt: skip
            continue
        where = f"{upstream}/{args['path']}" if "path" in args else ""
        if token and tool == "summarize":
            if c["kind"] == "ok" and latency is not None:
                put(t + 0.3 * latency, env, "s2c", rpc(method="notifications/progress", params={
                    "progressToken": token, "progress": 1, "total": 2, "message": "page loaded"}))  # fmt: skip
                put(t + 0.8 * latency, env, "s2c", rpc(method="notifications/progress", params={
                    "progressToken": token, "progress": 2, "total": 2, "message": "summarized"}))  # fmt: skip
            else:
                put(t + 31.5, env, "s2c", rpc(method="notifications/progress", params={
                    "progressToken": token, "progress": 0, "total": 2,
                    "message": "page not cached, fetching from upstream"}))  # fmt: skip
        if c["kind"] == "ok" and latency is not None:
            if tool == "fetch_page" and latency >= 2500:
                put(t + latency - 0.4, env, "stderr",
                    f"WARNING search.upstream: GET {where} took {latency / 1000:.1f}s (budget 1.0s)")  # fmt: skip
                log(t + latency - 0.2, "warning",
                    f"docs-cdn.internal is slow: {latency / 1000:.1f}s for {args['path']}", "slow")  # fmt: skip
            put(
                t + latency,
                env,
                "s2c",
                rpc(id=rid, result={"content": text(_incident_texts(tool, args))}),
            )
        elif c["kind"] == "error" and latency is not None:
            put(t + latency - 0.5, env, "stderr",
                f"ERROR search.tools: {tool} failed: upstream timeout after 20000 ms (GET {where})")  # fmt: skip
            log(
                t + latency - 0.3,
                "error",
                f"upstream timeout after 20000 ms for {args['path']}",
                "error",
            )
            put(t + latency, env, "s2c", rpc(id=rid, error={
                "code": -32603, "message": "Internal error: upstream timeout",
                "data": {"upstream": "docs-cdn.internal", "timeoutMs": 20000}}))  # fmt: skip
        else:  # hang or late: the client gives up after 30 s
            put(t + 30000, env, "c2s", rpc(method="notifications/cancelled", params={
                "requestId": rid, "reason": reason}))  # fmt: skip
            if "stale_cancel" in c:
                put(t + 30000.4, env, "c2s", rpc(method="notifications/cancelled", params={
                    "requestId": c["stale_cancel"], "reason": reason}))  # fmt: skip
            if c["kind"] == "hang":
                put(t + 30001.2, env, "stderr",
                    f"INFO search.server: request {rid} cancelled by the client; GET {where} abandoned")  # fmt: skip
            elif latency is not None:
                put(t + 30001.2, env, "stderr",
                    f"WARNING search.server: cannot abort request {rid}: upstream read in progress")  # fmt: skip
                put(
                    t + latency,
                    env,
                    "s2c",
                    rpc(id=rid, result={"content": text(_incident_texts(tool, args))}),
                )


def _incident_handshake(
    put: Any, env: dict[str, Any], t: float, client: dict[str, Any], caps: dict[str, Any]
) -> None:
    """initialize and its result: the search server's side is the same for every client."""
    put(t, env, "c2s", rpc(id=0, method="initialize", params={
        "protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": client}))  # fmt: skip
    put(t + 41.7, env, "s2c", rpc(id=0, result={
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": False}, "logging": {}},
        "serverInfo": {"name": "search-server", "version": "2.4.1"},
        "instructions": "search_docs first; fetch_page and summarize take a path it returned.",
    }))  # fmt: skip


def _incident_tools_list(put: Any, env: dict[str, Any], t: float, rid: int) -> None:
    def tool(name: str, description: str, **props: str) -> dict[str, Any]:
        return {"name": name, "description": description, "inputSchema": {
            "type": "object", "properties": {k: {"type": v} for k, v in props.items()},
            "required": list(props)[:1]}}  # fmt: skip

    put(t, env, "c2s", rpc(id=rid, method="tools/list"))
    put(t + 8.6, env, "s2c", rpc(id=rid, result={"tools": [
        tool("search_docs", "Full-text search over the handbook", query="string"),
        tool("fetch_page", "Fetch one handbook page as Markdown", path="string"),
        tool("summarize", "Summarize a handbook page", path="string", max_words="integer"),
    ]}))  # fmt: skip


def _incident_billing(put: Any) -> None:
    """The host's 2026-07-28 billing server over Streamable HTTP: healthy all night."""
    env = {"session": "billing-http-1", "server": "billing", "transport": "http"}
    info = {"name": "desk-host", "version": "4.2.0"}
    caps: dict[str, Any] = {"elicitation": {"form": {}}}
    server_meta = {f"{META}/serverInfo": {"name": "billing-server", "version": "1.2.0"}}
    ids = iter(range(1, 100))

    def meta(**extra: Any) -> dict[str, Any]:
        return {f"{META}/protocolVersion": "2026-07-28", f"{META}/clientCapabilities": caps,
                f"{META}/clientInfo": info, **extra}  # fmt: skip

    def post(t: float, method: str, params: dict[str, Any]) -> str:
        rid = f"b-{next(ids)}"
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}  # fmt: skip
        if "name" in params:
            headers["Mcp-Name"] = params["name"]
        put(t, env, "c2s", rpc(id=rid, method=method, params=params),
            {"method": "POST", "headers": headers})  # fmt: skip
        return rid

    def answer(t: float, rid: str, result: dict[str, Any], stream: bool = False) -> None:
        kind = "text/event-stream" if stream else "application/json"
        put(t, env, "s2c", rpc(id=rid, result={"resultType": "complete", **result, "_meta": server_meta}),
            {"status": 200, "headers": {"Content-Type": kind}})  # fmt: skip

    rid = post(1500.0, "server/discover", {"_meta": meta()})
    answer(1523.8, rid, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                         "ttlMs": 600000, "cacheScope": "public"})  # fmt: skip
    rid = post(1526.1, "tools/list", {"_meta": meta()})
    answer(1541.0, rid, {"ttlMs": 300000, "cacheScope": "public", "tools": [
        {"name": "get_usage", "description": "Metered usage of an account this month",
         "inputSchema": {"type": "object", "properties": {"account": {"type": "string"}}}},
        {"name": "get_invoice", "description": "One invoice by number",
         "inputSchema": {"type": "object", "properties": {"invoice": {"type": "string"}}}},
        {"name": "export_invoices", "description": "Export a month of invoices as CSV",
         "inputSchema": {"type": "object", "properties": {"month": {"type": "string"}}}},
    ]})  # fmt: skip
    calls: list[tuple[float, str, dict[str, Any]]] = [
        (s * 1000 + 250 * _incident_jitter(5, n), "get_usage",
         {"account": ("acme-eu", "globex-us", "initech-apac")[n % 3]})
        for n, s in enumerate((31, 97, 158, 243, 301, 362, 418, 466))]  # fmt: skip
    calls += [(204112.5, "export_invoices", {"month": "2026-08"}),
              (334507.3, "get_invoice", {"invoice": "INV-2026-0913"})]  # fmt: skip
    for n, (t, tool, args) in enumerate(sorted(calls)):  # ids in send order
        token = {"progressToken": "b-export"} if tool == "export_invoices" else {}
        rid = post(t, "tools/call", {"name": tool, "arguments": args, "_meta": meta(**token)})
        if tool == "export_invoices":
            for k in (1, 2):
                put(t + 297.7 + 912.7 * (k - 1), env, "s2c", rpc(method="notifications/progress", params={
                    "progressToken": "b-export", "progress": k * 210, "total": 420,
                    "message": f"{k * 210} of 420 invoices"}))  # fmt: skip
            answer(
                t + 1798.2,
                rid,
                {"content": text("exports/invoices-2026-08.csv (420 rows)")},
                stream=True,
            )
        elif tool == "get_invoice":
            answer(
                t + 73.7, rid, {"content": text(f"no invoice {args['invoice']}"), "isError": True}
            )
        else:
            answer(t + 60 + 180 * _incident_jitter(11, n), rid, {"content": text(
                f"{args['account']}: {1200 + 137 * n} API calls, {3 + n % 4}.{n}1 GB egress this month")})  # fmt: skip


def incident() -> Iterator[dict[str, Any]]:
    """Eight minutes of the night the search server's upstream failed, four sessions at once.

    desk-host and two ci-agent jobs talk 2025-11-25 to their own stdio `search` server
    processes, which share one upstream (docs-cdn.internal); desk-host also talks
    2026-07-28 to a `billing` server over HTTP. 0:00-3:00 healthy; from 3:00 fetch_page
    slows down (1 s, 3 s, 8 s, ...); from 5:00 it fails with -32603 after 20 s or never
    answers (the clients cancel after 30 s; one answer comes after its cancel), from 5:30
    summarize fails too; at 7:00 the upstream is back, still slow. The ci-agent is buggy:
    a null id, an id reused in flight, a cancel for an id it never issued in that session
    and a request before notifications/initialized (see sample_traces/README.md).
    """
    t0 = datetime(2026, 9, 15, 22, 40, 0, tzinfo=UTC)
    records: list[tuple[float, int, dict[str, Any]]] = []

    def put(ms: float, env: dict[str, Any], d: str, msg: Any, http: Any = None) -> None:
        ts = (t0 + timedelta(milliseconds=round(ms, 1))).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"
        rec = {"ts": ts, "dir": d, **env, "msg": msg}
        if http is not None:
            rec["http"] = http
        records.append((round(ms, 1), len(records), rec))

    def stdio(session: str) -> dict[str, Any]:
        return {"session": session, "server": "search", "transport": "stdio"}

    def fetch(path: str) -> dict[str, Any]:
        return {"path": path}

    def summarize(path: str, words: int) -> dict[str, Any]:
        return {"path": path, "max_words": words}

    # desk-host: a person asking questions; each turn is search, fetch, summarize
    desk = stdio("search-desk-1")
    _incident_handshake(put, desk, 400.0, {"name": "desk-host", "version": "4.2.0"},
                        {"roots": {"listChanged": True}, "elicitation": {"form": {}}})  # fmt: skip
    put(443.3, desk, "c2s", rpc(method="notifications/initialized"))
    _incident_tools_list(put, desk, 445.0, 1)
    put(456.2, desk, "c2s", rpc(id=2, method="logging/setLevel", params={"level": "warning"}))
    put(457.9, desk, "s2c", rpc(id=2, result={}))
    topics = [("rotate api keys", "security/keys.md"), ("oauth refresh token lifetime", "auth/oauth.md"),
        ("per-tenant rate limits", "ops/rate-limits.md"), ("webhook retry policy", "integrations/webhooks.md"),
        ("saml sso setup", "auth/saml.md"), ("restore from backup", "ops/backups.md"),
        ("export the audit log", "security/audit-log.md"), ("ip allowlist", "security/allowlist.md"),
        ("pagination cursors", "api/pagination.md"), ("delete a workspace", "admin/workspaces.md"),
        ("incident runbook", "ops/runbook.md"), ("eu data residency", "compliance/residency.md"),
        ("scim provisioning", "auth/scim.md"), ("status page", "ops/status.md")]  # fmt: skip
    jobs = [job for q, p in topics for job in (
        ("search_docs", {"query": q}, 1500.0), ("fetch_page", fetch(p), 2200.0),
        ("summarize", summarize(p, 120), 24000.0))]  # fmt: skip
    desk_calls = _incident_worker(6000.0, 468000.0, jobs, 1,
                                  _incident_fates("late", "error", "hang", "error"))  # fmt: skip
    for c in desk_calls:
        c["progress"] = c["tool"] == "summarize"
    _incident_search_session(
        put, desk, desk_calls, 3, reason="Request timed out after 30000ms", logs=True
    )

    # ci-agent job 7731: a link checker (worker A) and a freshness probe (worker B)
    ci1 = stdio("search-ci-7731")
    ci_info = {"name": "ci-agent", "version": "0.3.0"}
    ci_reason = "ci-agent: request exceeded its 30s deadline"
    _incident_handshake(put, ci1, 20000.0, ci_info, {})
    put(20043.9, ci1, "c2s", rpc(method="notifications/initialized"))
    _incident_tools_list(put, ci1, 20044.6, 1)
    pages = ["guides/quickstart.md", "guides/install.md", "api/errors.md", "api/webhooks.md",
             "api/pagination.md", "ops/deploy.md", "ops/monitoring.md", "security/sso.md",
             "security/keys.md", "billing/plans.md", "billing/invoices.md", "admin/roles.md",
             "admin/audit.md", "integrations/slack.md", "integrations/github.md",
             "integrations/jira.md", "compliance/gdpr.md", "compliance/soc2.md",
             "guides/migrate.md", "guides/faq.md", "ops/backups.md", "ops/runbook.md",
             "auth/oauth.md", "auth/tokens.md", "auth/scim.md", "api/limits.md"]  # fmt: skip
    ci1_fates = _incident_fates("error", "hang", "error", "error")
    worker_a = _incident_worker(24000.0, 466000.0, [("fetch_page", fetch(p), 14000.0) for p in pages],
                                2, ci1_fates)  # fmt: skip
    stuck = next(c for c in worker_a if c["t"] >= 240000)  # a slow fetch the probe overlaps
    probes: list[tuple[float, str, dict[str, Any], dict[str, Any]]] = [
        (35000.0, "search_docs", {"query": "broken links"}, {}),
        (85000.0, "search_docs", {"query": "deprecated endpoints"}, {"null_id": True}),
        (140000.0, "summarize", summarize("guides/quickstart.md", 60), {}),
        (195000.0, "search_docs", {"query": "todo"}, {}),
        (stuck["t"] + 1800.0, "search_docs", {"query": "stale screenshots"}, {"reuse": stuck}),
        (300500.0, "summarize", summarize("guides/install.md", 60), {}),
        (351000.0, "summarize", summarize("api/errors.md", 60), {}),
        (401000.0, "search_docs", {"query": "broken links"}, {}),
        (451000.0, "summarize", summarize("ops/deploy.md", 60), {})]  # fmt: skip
    worker_b = [_incident_call(t, tool, args, _incident_jitter(3, n), ci1_fates, **flags)
                for n, (t, tool, args, flags) in enumerate(probes)]  # fmt: skip
    next(c for c in worker_a if c["kind"] == "hang")["stale_cancel"] = 58  # left over from job 7730
    _incident_search_session(put, ci1, worker_a + worker_b, 2, reason=ci_reason)

    # ci-agent job 7732 starts during the slowdown and calls a tool before initialized
    ci2 = stdio("search-ci-7732")
    _incident_handshake(put, ci2, 251300.0, ci_info, {})
    put(251343.5, ci2, "c2s", rpc(id=1, method="tools/call", params={
        "name": "search_docs", "arguments": {"query": "release notes 2026-09"}}))  # fmt: skip
    put(251345.1, ci2, "c2s", rpc(method="notifications/initialized"))
    put(
        251411.0,
        ci2,
        "s2c",
        rpc(id=1, result={"content": text("3 results for 'release notes 2026-09'")}),
    )
    _incident_tools_list(put, ci2, 251413.2, 2)
    checks = [("fetch_page", fetch(p), 10000.0) for p in reversed(pages)]
    ci2_calls = _incident_worker(252500.0, 466000.0, checks, 4,
                                 _incident_fates("hang", "error", "error", "hang"))  # fmt: skip
    _incident_search_session(put, ci2, ci2_calls, 3, reason=ci_reason)

    # the shared upstream, as each live server process saw it
    for env, ms in ((desk, 300200.0), (ci1, 300900.0), (ci2, 301700.0)):
        put(
            ms,
            env,
            "stderr",
            "WARNING search.upstream: connection pool exhausted (16/16 busy, 5 waiting)",
        )
    for env, ms in ((desk, 330000.0), (ci1, 330000.0)):
        put(
            ms, env, "stderr", "WARNING search.cache: 38 page cache entries expired; refresh failed"
        )
    for env, ms in ((desk, 419600.0), (ci1, 419750.0), (ci2, 419900.0)):
        put(
            ms,
            env,
            "stderr",
            "INFO search.upstream: docs-cdn.internal answering again (probe 1.9s);"
            " requests already waiting on it may still time out",
        )
    put(419610.0, desk, "s2c", rpc(method="notifications/message", params={
        "level": "warning", "logger": "search.upstream",
        "data": "docs-cdn.internal is back but slow: expect 1-3 s per page"}))  # fmt: skip

    _incident_billing(put)
    for _, _, rec in sorted(records, key=lambda r: (r[0], r[1])):
        yield rec


def stdio_interleaved() -> Iterator[dict[str, Any]]:
    """What `tee` of a stdio pipe gives: bare messages, both directions, no times."""
    for rec in healthy_legacy():
        yield rec["msg"]


def write_jsonl(path: Path, records: Iterator[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [orjson.dumps(r) for r in records]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return len(lines)


def outputs() -> dict[Path, list[bytes]]:
    """Every generated file and its lines (used by the up-to-date test)."""
    legacy = list(healthy_legacy())
    files = {
        ROOT / "capture" / "healthy-2025-11-25.jsonl": legacy,
        ROOT / "capture" / "healthy-2026-07-28.jsonl": list(healthy_modern()),
        ROOT / "capture" / "incident-2025-11-25.jsonl": list(incident()),
        ROOT / "stdio" / "docs-server.ndjson": list(stdio_interleaved()),
        ROOT / "stdio-pair" / "docs.in.jsonl": [r["msg"] for r in legacy if r["dir"] == "c2s"],
        ROOT / "stdio-pair" / "docs.out.jsonl": [r["msg"] for r in legacy if r["dir"] == "s2c"],
    }
    return {path: [orjson.dumps(r) for r in recs] for path, recs in files.items()}


def main() -> int:
    for path, lines in outputs().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(lines) + b"\n")
        print(f"{path.relative_to(ROOT.parent)}: {len(lines)} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
