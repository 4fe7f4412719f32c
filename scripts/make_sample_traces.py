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
            name = (msg.get("params") or {}).get("name")
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
