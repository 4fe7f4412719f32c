"""A seeded generator of large, realistic MCP captures (for benchmarks and tests).

    python benchmarks/generate.py OUT --messages 1000000 --seed 0 [--format capture|stdio]

The output imitates what a multi-connection proxy records: several sessions are
active at once and their messages are interleaved line by line in timestamp
order. Sessions speak either revision 2025-11-25 (initialize handshake, both
sides send requests) or 2026-07-28 (``server/discover`` first, ``_meta`` on
every request, ``resultType`` on every result, multi-round-trip
``input_required`` retries). Tool calls dominate; results vary in size
(log-normal, ~50 B to ~20 KB of text); some calls report progress, fail with a
JSON-RPC error, return ``isError: true`` or are cancelled and never answered.

Everything, timestamps included, is drawn from ``random.Random(seed)``, so one
seed always gives byte-identical output; the wall clock is never read.

This file is a script, not part of the ``mcptrace`` package: the benchmark
imports it from its own directory and the tests load it by path.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import calendar
import heapq
import itertools
import math
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from random import Random
from statistics import NormalDist
from typing import Any, Literal, TypeVar

import orjson

Format = Literal["capture", "stdio"]
_T = TypeVar("_T")
Json = dict[str, Any]
#: (timestamp in µs since the epoch, direction, JSON-RPC kind, message)
Event = tuple[int, str, str, Json]

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
_PV = "io.modelcontextprotocol/protocolVersion"
_CAPS = "io.modelcontextprotocol/clientCapabilities"
_CINFO = "io.modelcontextprotocol/clientInfo"
_SINFO = "io.modelcontextprotocol/serverInfo"

C2S, S2C = "c2s", "s2c"
REQ, RES, ERR, NOTE = "request", "response", "error", "notification"

#: bump when the output for a given seed changes, so cached benchmark captures are rebuilt
VERSION = 1
#: mean lines per session when the caller does not say how many sessions
LINES_PER_SESSION = 500
#: sessions open at the same time in a capture (a proxy in front of a busy host)
CONCURRENCY = 8
#: 2026-08-01T00:00:00Z; the seed shifts the start within the following 30 days
_EPOCH_US = calendar.timegm((2026, 8, 1, 0, 0, 0, 0, 0, 0)) * 1_000_000
_MS = 1000
_S = 1_000_000

# ---------------------------------------------------------------------------
# Static catalogue: clients, servers, their tools, resources and prompts
# ---------------------------------------------------------------------------

_CLIENTS = (
    ("claude-code", "2.1.4"),
    ("Claude Desktop", "1.4.2"),
    ("cursor-vscode", "1.7.3"),
    ("Visual Studio Code", "1.106.0"),
    ("mcp-inspector", "0.17.2"),
    ("goose", "1.12.0"),
)

_WORD_TEXT = (
    "the request returned file function error value user data table index query result "
    "commit branch issue token cache latency server client session timeout retry config "
    "module import export build test passed failed warning info debug trace span metric "
    "path directory record column row schema migration deploy release version patch "
    "payload header status response stream buffer offset cursor page limit total count "
    "café naïve résumé 東京 数据 ✓ → — «quoted» "
)
#: a little non-ASCII keeps the UTF-8 paths of loaders honest
_WORDS = tuple(_WORD_TEXT.split())

_SNIPPETS = (
    'def handler(event, context):\n    return {"status": 200, "body": event["id"]}',
    "SELECT id, name, created_at FROM users WHERE active = true ORDER BY id LIMIT 50;",
    "ERROR 2026-07-31 12:00:01 worker[42]: connection reset by peer (retrying in 2s)",
    '{"id": 17, "title": "Fix flaky test", "labels": ["bug", "ci"], "state": "open"}',
    "\t at com.example.Service.call(Service.java:118)\n\t at java.base/Thread.run",
    "| region | p50 ms | p99 ms |\n|---|---|---|\n| eu-west | 41 | 380 |",
)


@dataclass(frozen=True)
class _Param:
    name: str
    type: str
    description: str
    samples: tuple[Any, ...]


@dataclass(frozen=True)
class _Tool:
    name: str
    description: str
    params: tuple[_Param, ...]
    required: tuple[str, ...]


@dataclass(frozen=True)
class _Server:
    name: str
    version: str
    tools: tuple[_Tool, ...]
    resources: tuple[tuple[str, str, str], ...] = ()  # uri, name, mimeType
    prompts: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # name, description, args
    logging: bool = False


def _p(name: str, type_: str, description: str, *samples: Any) -> _Param:
    return _Param(name, type_, description, samples)


_PATHS = ("/src/app.py", "/src/db/models.py", "/README.md", "/docs/api.md", "/tests/test_api.py")
_REPOS = ("mcptrace", "polars", "typescript-sdk", "inspector", "servers")

_SERVERS = (
    _Server(
        "filesystem",
        "2025.11.3",
        (
            _Tool(
                "read_text_file",
                "Read the complete contents of a file as text.",
                (_p("path", "string", "Path of the file", *_PATHS),),
                ("path",),
            ),
            _Tool(
                "list_directory",
                "List files and directories at a path.",
                (_p("path", "string", "Directory path", "/", "/src", "/tests", "/docs"),),
                ("path",),
            ),
            _Tool(
                "search_files",
                "Recursively search for files matching a pattern.",
                (
                    _p("path", "string", "Start directory", "/", "/src"),
                    _p("pattern", "string", "Glob pattern", "*.py", "*.md", "test_*"),
                ),
                ("path", "pattern"),
            ),
            _Tool(
                "write_file",
                "Create or overwrite a file.",
                (
                    _p("path", "string", "Path of the file", *_PATHS),
                    _p("content", "string", "New content", "print('hi')\n", "# TODO\n"),
                ),
                ("path", "content"),
            ),
        ),
        tuple((f"file://{p}", p.rsplit("/", 1)[-1], "text/plain") for p in _PATHS),
    ),
    _Server(
        "github",
        "0.21.0",
        (
            _Tool(
                "search_repositories",
                "Search for GitHub repositories.",
                (
                    _p("query", "string", "Search query", "mcp server", "polars", "lint"),
                    _p("perPage", "number", "Results per page", 10, 30, 100),
                ),
                ("query",),
            ),
            _Tool(
                "get_issue",
                "Get the details of an issue.",
                (
                    _p("owner", "string", "Repository owner", "modelcontextprotocol", "pola-rs"),
                    _p("repo", "string", "Repository name", *_REPOS),
                    _p("issue_number", "number", "Issue number", 12, 431, 1088, 2051),
                ),
                ("owner", "repo", "issue_number"),
            ),
            _Tool(
                "list_pull_requests",
                "List pull requests of a repository.",
                (
                    _p("owner", "string", "Repository owner", "modelcontextprotocol"),
                    _p("repo", "string", "Repository name", *_REPOS),
                    _p("state", "string", "open, closed or all", "open", "closed", "all"),
                ),
                ("owner", "repo"),
            ),
            _Tool(
                "get_file_contents",
                "Get the contents of a file in a repository.",
                (
                    _p("owner", "string", "Repository owner", "modelcontextprotocol"),
                    _p("repo", "string", "Repository name", *_REPOS),
                    _p("path", "string", "File path", *_PATHS),
                ),
                ("owner", "repo", "path"),
            ),
        ),
        tuple((f"repo://modelcontextprotocol/{r}", r, "application/json") for r in _REPOS),
        (("summarize_pr", "Summarise a pull request", ("pr_url",)),),
    ),
    _Server(
        "postgres",
        "0.6.2",
        (
            _Tool(
                "query",
                "Run a read-only SQL query.",
                (
                    _p(
                        "sql",
                        "string",
                        "SQL text",
                        "SELECT count(*) FROM orders",
                        "SELECT * FROM users LIMIT 20",
                        "SELECT status, count(*) FROM jobs GROUP BY 1",
                    ),
                ),
                ("sql",),
            ),
            _Tool(
                "describe_table",
                "Describe the columns of a table.",
                (_p("table", "string", "Table name", "users", "orders", "jobs", "events"),),
                ("table",),
            ),
        ),
        tuple(
            (f"postgres://db/{t}/schema", f"{t} schema", "application/json")
            for t in ("users", "orders", "jobs", "events")
        ),
        (("explain_query", "Explain a query plan", ("sql",)),),
        logging=True,
    ),
    _Server(
        "weather",
        "1.2.0",
        (
            _Tool(
                "get_forecast",
                "Get the weather forecast for a location.",
                (
                    _p("latitude", "number", "Latitude", 48.85, 35.68, 40.71, -33.87),
                    _p("longitude", "number", "Longitude", 2.35, 139.69, -74.0, 151.21),
                ),
                ("latitude", "longitude"),
            ),
            _Tool(
                "get_alerts",
                "Get weather alerts for a US state.",
                (_p("state", "string", "Two-letter state code", "CA", "NY", "TX", "WA"),),
                ("state",),
            ),
        ),
        logging=True,
    ),
    _Server(
        "playwright",
        "0.0.41",
        (
            _Tool(
                "browser_navigate",
                "Navigate to a URL.",
                (
                    _p(
                        "url",
                        "string",
                        "The URL",
                        "https://example.com",
                        "https://docs.pola.rs",
                        "https://modelcontextprotocol.io/specification",
                    ),
                ),
                ("url",),
            ),
            _Tool("browser_snapshot", "Capture an accessibility snapshot of the page.", (), ()),
            _Tool(
                "browser_click",
                "Click an element of the page.",
                (
                    _p("element", "string", "Element description", "Sign in button", "Next"),
                    _p("ref", "string", "Element reference", "e12", "e47", "e101"),
                ),
                ("element", "ref"),
            ),
        ),
    ),
    _Server(
        "sentry",
        "0.18.0",
        (
            _Tool(
                "search_issues",
                "Search Sentry issues.",
                (
                    _p("organization", "string", "Organisation slug", "acme", "example-org"),
                    _p("query", "string", "Search query", "is:unresolved", "level:error"),
                ),
                ("organization",),
            ),
            _Tool(
                "get_issue_details",
                "Get the details and latest event of an issue.",
                (_p("issueId", "string", "Issue id", "ACME-1Z3", "ACME-42", "WEB-7Q"),),
                ("issueId",),
            ),
        ),
        prompts=(("triage_issue", "Triage a Sentry issue", ("issue_id",)),),
        logging=True,
    ),
)

_TOOL_ERROR_TEXTS = (
    "Error: ENOENT: no such file or directory",
    "Error: rate limit exceeded, retry after 60 seconds",
    "Error: permission denied for relation users",
    "Error: navigation timed out after 30000 ms",
    "Error: upstream API returned HTTP 502",
)
_INTERNAL_ERRORS = (
    "Internal error",
    "Internal error: upstream request timed out",
    "Internal error: connection reset by peer",
)
_CANCEL_REASONS = ("User requested cancellation", "Request timed out", "Superseded by new request")
_LOG_LEVELS = ("debug", "info", "info", "info", "notice", "warning", "error")

# ---------------------------------------------------------------------------
# Precomputed material shared by every session of one generation
# ---------------------------------------------------------------------------


@dataclass
class _ServerRuntime:
    """A server's listings as JSON, built once, plus argument variants for its tools."""

    spec: _Server
    tools_json: list[Json]
    resources_json: list[Json]
    prompts_json: list[Json]
    args: list[list[Json]]  # per tool, several argument objects to pick from


class _World:
    """Text corpora and server runtimes, built once per generation from its seed."""

    def __init__(self, rng: Random) -> None:
        # one long text to slice result bodies from: slicing is far cheaper than
        # building text per message, and random offsets keep results distinct
        lines: list[str] = []
        size = 0
        while size < 160_000:
            if rng.random() < 0.08:
                line = rng.choice(_SNIPPETS)
            else:
                line = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 16)))
            lines.append(line)
            size += len(line) + 1
        self.corpus = "\n".join(lines)
        self.b64 = base64.b64encode(rng.randbytes(24_000)).decode()
        self.servers = [self._runtime(spec, rng) for spec in _SERVERS]

    @staticmethod
    def _runtime(spec: _Server, rng: Random) -> _ServerRuntime:
        tools_json = []
        args = []
        for tool in spec.tools:
            props = {p.name: {"type": p.type, "description": p.description} for p in tool.params}
            schema: Json = {"type": "object", "properties": props}
            if tool.required:
                schema["required"] = list(tool.required)
            tools_json.append(
                {"name": tool.name, "description": tool.description, "inputSchema": schema}
            )
            variants = []
            for _ in range(16):
                variants.append(
                    {
                        p.name: rng.choice(p.samples)
                        for p in tool.params
                        if p.name in tool.required or rng.random() < 0.5
                    }
                )
            args.append(variants)
        resources_json = [
            {"uri": uri, "name": name, "mimeType": mime} for uri, name, mime in spec.resources
        ]
        prompts_json = [
            {
                "name": name,
                "description": desc,
                "arguments": [{"name": a, "required": True} for a in prompt_args],
            }
            for name, desc, prompt_args in spec.prompts
        ]
        return _ServerRuntime(spec, tools_json, resources_json, prompts_json, args)

    def text(self, rng: Random, mu: float = 5.5, sigma: float = 1.25) -> str:
        """A slice of the corpus of log-normal length, clipped to 50 B .. 20 KB."""
        size = min(20_000, max(50, int(math.exp(mu + sigma * _normal(rng)))))
        start = int(rng.random() * (len(self.corpus) - size))
        return self.corpus[start : start + size]

    def token(self, rng: Random, size: int = 32) -> str:
        start = int(rng.random() * (len(self.b64) - size))
        return self.b64[start : start + size]


# ---------------------------------------------------------------------------
# One session: a generator of events in non-decreasing time order
# ---------------------------------------------------------------------------


#: standard normal quantiles at 4096 evenly spaced probabilities: indexing this with
#: random() is several times faster than gauss() and reaches ±3.5 sigma, enough here
#: (slow outliers are drawn separately)
_Z = tuple(NormalDist().inv_cdf((i + 0.5) / 4096) for i in range(4096))


def _normal(rng: Random) -> float:
    return _Z[int(rng.random() * 4096)]


def _lognormal_us(rng: Random, median_ms: float, sigma: float) -> int:
    """A log-normal duration in µs (at least 0.3 ms) with the given median."""
    return max(300, int(median_ms * _MS * math.exp(sigma * _normal(rng))))


def _pick(rng: Random, items: Sequence[_T]) -> _T:
    # random() * n is cheaper than choice()/randrange() on the hot path
    return items[int(rng.random() * len(items))]


def _ts_key(event: Event) -> int:
    return event[0]


#: what the client does next, with relative weights, per revision family
_LEGACY_ACTIONS = (
    ("tools", 80.0),
    ("read", 7.0),
    ("prompt", 2.5),
    ("complete", 1.0),
    ("list", 1.5),
    ("ping", 1.5),
    ("server_request", 1.5),
    ("log", 4.0),
    ("list_changed", 0.5),
)
_MODERN_ACTIONS = (
    ("tools", 84.0),
    ("read", 8.0),
    ("prompt", 3.5),
    ("complete", 1.5),
    ("list", 2.0),
)


def _cumulative(actions: Sequence[tuple[str, float]]) -> tuple[list[str], list[float]]:
    names = [a for a, _ in actions]
    cum = list(itertools.accumulate(w for _, w in actions))
    return names, [c / cum[-1] for c in cum]


_LEGACY_CHOICE = _cumulative(_LEGACY_ACTIONS)
_MODERN_CHOICE = _cumulative(_MODERN_ACTIONS)


class _Session:
    """One connection between a client and a server, producing its messages in time order."""

    def __init__(
        self,
        world: _World,
        rng: Random,
        *,
        srv: _ServerRuntime,
        sid: str,
        modern: bool,
        start_us: int,
        budget: int,
    ) -> None:
        self.world = world
        self.rng = rng
        self.sid = sid
        self.modern = modern
        self.revision = MODERN if modern else LEGACY
        self.budget = budget
        self.t = start_us
        self.written = False
        self.srv = srv
        spec = self.srv.spec
        self.server = spec.name
        # 2026 is stateless HTTP first; legacy local servers are mostly stdio
        self.transport = "http" if rng.random() < (0.8 if modern else 0.4) else "stdio"
        name, version = _CLIENTS[rng.randrange(len(_CLIENTS))]
        self.client_info: Json = {"name": name, "version": version}
        self.server_info: Json = {"name": f"{spec.name}-mcp", "version": spec.version}
        # integer ids (TypeScript/Python SDKs) or string ids (some hosts, numeric-looking too)
        self.int_ids = rng.random() < 0.7
        self.id_prefix = rng.choice(("req-", "", f"{rng.getrandbits(32):08x}-"))
        self.next_id = rng.choice((-1, 0))  # first id 0 or 1
        self.next_server_id = 0
        self.next_token = 0
        self.elicitation = rng.random() < 0.75
        self.sampling = rng.random() < 0.4
        self.roots = not modern and rng.random() < 0.6
        caps: Json = {}
        if self.roots:
            caps["roots"] = {"listChanged": True}
        if self.sampling:
            caps["sampling"] = {}
        if self.elicitation:
            caps["elicitation"] = {}
        self.client_caps = caps
        server_caps: Json = {"tools": {"listChanged": True}}
        if spec.resources:
            server_caps["resources"] = {"listChanged": True}
        if spec.prompts:
            server_caps["prompts"] = {"listChanged": False}
            server_caps["completions"] = {}
        self.logging = spec.logging and not modern  # logging is deprecated in 2026
        if self.logging:
            server_caps["logging"] = {}
        self.server_caps = server_caps
        self.meta: Json = {_PV: MODERN, _CAPS: caps, _CINFO: self.client_info}
        self.result_meta: Json = {_SINFO: self.server_info}
        self.choice = _MODERN_CHOICE if modern else _LEGACY_CHOICE
        env = orjson.dumps({"session": sid, "server": self.server, "transport": self.transport})
        #: the envelope members after ``dir``, ready to splice: ``,"session":...,"msg":``
        self.envelope_tail = b"," + env[1:-1] + b',"msg":'

    # -- message builders ------------------------------------------------------

    def _id(self) -> int | str:
        self.next_id += 1
        n = self.next_id
        return n if self.int_ids else f"{self.id_prefix}{n}"

    def _token(self) -> int | str:
        self.next_token += 1
        n = self.next_token
        return n if self.rng.random() < 0.5 else f"{self.sid[-6:]}-p{n}"

    def _request(
        self, rid: int | str, method: str, params: Json | None, token: int | str | None = None
    ) -> Json:
        if self.modern:
            meta = self.meta if token is None else {**self.meta, "progressToken": token}
            params = {"_meta": meta, **(params or {})}
        elif token is not None:
            params = {"_meta": {"progressToken": token}, **(params or {})}
        msg: Json = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        return msg

    def _result(self, rid: int | str, body: Json, *, cacheable: bool = False) -> Json:
        if self.modern:
            body = {"resultType": "complete", **body}
            if cacheable:
                body["ttlMs"] = 300_000
                body["cacheScope"] = "private"
            body["_meta"] = self.result_meta
        return {"jsonrpc": "2.0", "id": rid, "result": body}

    @staticmethod
    def _error(rid: int | str, code: int, message: str) -> Json:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}

    @staticmethod
    def _note(method: str, params: Json | None = None) -> Json:
        msg: Json = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return msg

    # -- steps -------------------------------------------------------------------

    def events(self) -> Iterator[Event]:
        """The session's messages, in non-decreasing time, until its line budget is used."""
        emitted = 0
        rng = self.rng
        names, cum = self.choice
        first = True
        while emitted < self.budget:
            out: list[Event] = []
            if first:
                self._handshake(out)
                first = False
            else:
                action = names[bisect.bisect_left(cum, rng.random())]
                getattr(self, "_do_" + action)(out)
            # calls of one step overlap in time; a proxy logs them in arrival order
            out.sort(key=_ts_key)
            yield from out
            emitted += len(out)
            # the host thinks (an LLM turn) before its next move
            self.t = out[-1][0] + min(120 * _S, _lognormal_us(rng, 900, 1.1))

    def _simple_call(
        self, out: list[Event], t: int, method: str, params: Json | None, body: Json, **kw: bool
    ) -> int:
        rid = self._id()
        out.append((t, C2S, REQ, self._request(rid, method, params)))
        t += _lognormal_us(self.rng, 12, 0.8)
        out.append((t, S2C, RES, self._result(rid, body, **kw)))
        return t

    def _listings(self, out: list[Event], t: int) -> int:
        srv = self.srv
        t = self._simple_call(out, t, "tools/list", None, {"tools": srv.tools_json}, cacheable=True)
        if srv.resources_json:
            t += _lognormal_us(self.rng, 1, 0.5)
            body = {"resources": srv.resources_json}
            t = self._simple_call(out, t, "resources/list", None, body, cacheable=True)
        if srv.prompts_json:
            t += _lognormal_us(self.rng, 1, 0.5)
            body = {"prompts": srv.prompts_json}
            t = self._simple_call(out, t, "prompts/list", None, body, cacheable=True)
        return t

    def _handshake(self, out: list[Event]) -> None:
        rng = self.rng
        t = self.t
        if self.modern:
            body: Json = {
                "supportedVersions": [MODERN],
                "capabilities": self.server_caps,
                "instructions": f"Tools for {self.server}.",
            }
            t = self._simple_call(out, t, "server/discover", None, body, cacheable=True)
        else:
            rid = self._id()
            params = {
                "protocolVersion": LEGACY,
                "capabilities": self.client_caps,
                "clientInfo": self.client_info,
            }
            out.append((t, C2S, REQ, self._request(rid, "initialize", params)))
            t += _lognormal_us(rng, 40, 0.9)
            result = {
                "protocolVersion": LEGACY,
                "capabilities": self.server_caps,
                "serverInfo": self.server_info,
                "instructions": f"Tools for {self.server}.",
            }
            out.append((t, S2C, RES, self._result(rid, result)))
            t += _lognormal_us(rng, 0.8, 0.5)
            out.append((t, C2S, NOTE, self._note("notifications/initialized")))
        self._listings(out, t + _lognormal_us(rng, 2, 0.6))

    def _do_tools(self, out: list[Event]) -> None:
        # agents often issue several tool calls of one turn in parallel
        r = self.rng.random()
        k = 1 if r < 0.75 else 2 if r < 0.9 else 3 if r < 0.97 else 4
        t = self.t
        for _ in range(k):
            self._tool_call(out, t)
            t += _lognormal_us(self.rng, 0.5, 0.7)

    def _tool_call(self, out: list[Event], t: int) -> None:
        rng = self.rng
        srv = self.srv
        i = int(rng.random() * len(srv.tools_json))
        name = srv.spec.tools[i].name
        args = _pick(rng, srv.args[i])
        r = rng.random()
        latency = _lognormal_us(rng, 150, 1.0)
        if rng.random() < 0.015:  # slow outliers: builds, crawls, big queries
            latency *= rng.randint(10, 60)
        if r < 0.02:
            outcome = "cancel"
        elif r < 0.045:
            outcome = "invalid"
            latency = _lognormal_us(rng, 3, 0.6)
            if rng.random() < 0.5:
                name = f"{name}_v2"  # a hallucinated tool name
        elif r < 0.06:
            outcome = "internal"
        elif r < 0.11:
            outcome = "tool_error"
        elif self.modern and self.elicitation and r < 0.17:
            outcome = "input_required"
            latency = _lognormal_us(rng, 25, 0.7)
        else:
            outcome = "ok"
        progress = rng.random() < (0.6 if latency > 2 * _S else 0.08)
        token = self._token() if progress else None
        rid = self._id()
        params: Json = {"name": name, "arguments": args}
        out.append((t, C2S, REQ, self._request(rid, "tools/call", params, token)))
        end = t + latency
        if outcome == "cancel":
            end = t + max(200, int(latency * rng.uniform(0.2, 0.9)))
            reason = _pick(rng, _CANCEL_REASONS)
            out.append(
                (
                    end,
                    C2S,
                    NOTE,
                    self._note("notifications/cancelled", {"requestId": rid, "reason": reason}),
                )
            )
        if token is not None:
            self._progress(out, token, t, end)
        if outcome == "cancel":
            return
        if outcome == "invalid":
            if name.endswith("_v2"):
                text = f"Unknown tool: {name}"
            else:
                prop = srv.spec.tools[i].required[0] if srv.spec.tools[i].required else "input"
                text = f"Invalid arguments for tool {name}: Missing required property '{prop}'"
            out.append((end, S2C, ERR, self._error(rid, -32602, text)))
        elif outcome == "internal":
            text = _pick(rng, _INTERNAL_ERRORS)
            out.append((end, S2C, ERR, self._error(rid, -32603, text)))
        elif outcome == "tool_error":
            text = _pick(rng, _TOOL_ERROR_TEXTS)
            body: Json = {"content": [{"type": "text", "text": text}], "isError": True}
            out.append((end, S2C, RES, self._result(rid, body)))
        elif outcome == "input_required":
            self._input_required(out, rid, params, end)
        else:
            out.append((end, S2C, RES, self._result(rid, self._tool_result())))

    def _tool_result(self) -> Json:
        rng = self.rng
        world = self.world
        content: list[Json] = [{"type": "text", "text": world.text(rng)}]
        r = rng.random()
        if r < 0.08:
            content.append({"type": "text", "text": world.text(rng, 4.5, 0.8)})
        elif r < 0.1:
            size = min(len(world.b64) - 1, int(math.exp(7.5 + 0.6 * _normal(rng))))
            content.append(
                {"type": "image", "data": world.token(rng, size), "mimeType": "image/png"}
            )
        body: Json = {"content": content}
        if rng.random() < 0.1:
            body["structuredContent"] = {"count": int(rng.random() * 200), "truncated": r < 0.05}
        body["isError"] = False
        return body

    def _progress(self, out: list[Event], token: int | str, start: int, end: int) -> None:
        """Progress notifications strictly between the request and its end."""
        steps = 1 + int(self.rng.random() * 6)
        span = end - start
        for j in range(1, steps + 1):
            params: Json = {
                "progressToken": token,
                "progress": j * 100 // (steps + 1),
                "total": 100,
            }
            if j % 2:
                params["message"] = f"step {j} of {steps + 1}"
            ts = start + max(1, span * j // (steps + 1))
            if ts >= end:
                break
            out.append((ts, S2C, NOTE, self._note("notifications/progress", params)))

    def _input_required(self, out: list[Event], rid: int | str, params: Json, t: int) -> None:
        """2026 multi-round-trip request: input_required, then a retry with a new id."""
        rng = self.rng
        state = self.world.token(rng, rng.randint(24, 64))
        if self.sampling and rng.random() < 0.3:
            key = "summary"
            request: Json = {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [
                        {"role": "user", "content": {"type": "text", "text": "Summarise the diff"}}
                    ],
                    "maxTokens": 400,
                },
            }
            response: Json = {
                "role": "assistant",
                "content": {"type": "text", "text": self.world.text(rng, 5.0, 0.5)},
                "model": "claude-sonnet-4-5",
                "stopReason": "endTurn",
            }
        else:
            key = "confirm"
            request = {
                "method": "elicitation/create",
                "params": {
                    "message": f"Allow {params['name']} to proceed?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"confirm": {"type": "boolean"}},
                        "required": ["confirm"],
                    },
                },
            }
            response = {"action": "accept", "content": {"confirm": True}}
        body = {
            "resultType": "input_required",
            "inputRequests": {key: request},
            "requestState": state,
            "_meta": self.result_meta,
        }
        out.append((t, S2C, RES, {"jsonrpc": "2.0", "id": rid, "result": body}))
        # the user answers the elicitation (seconds), then the client retries
        t += _lognormal_us(rng, 3000, 0.8)
        retry_id = self._id()
        retry = {**params, "inputResponses": {key: response}, "requestState": state}
        out.append((t, C2S, REQ, self._request(retry_id, "tools/call", retry)))
        t += _lognormal_us(rng, 150, 1.0)
        out.append((t, S2C, RES, self._result(retry_id, self._tool_result())))

    def _do_read(self, out: list[Event]) -> None:
        srv = self.srv
        if not srv.resources_json:
            self._do_tools(out)
            return
        rng = self.rng
        res = _pick(rng, srv.resources_json)
        rid = self._id()
        t = self.t
        out.append((t, C2S, REQ, self._request(rid, "resources/read", {"uri": res["uri"]})))
        t += _lognormal_us(rng, 20, 0.9)
        if rng.random() < 0.03:
            # 2026 requires -32602 for a missing resource; legacy servers use -32002
            code = -32602 if self.modern else -32002
            out.append((t, S2C, ERR, self._error(rid, code, "Resource not found")))
            return
        item = {"uri": res["uri"], "mimeType": res["mimeType"], "text": self.world.text(rng)}
        out.append((t, S2C, RES, self._result(rid, {"contents": [item]}, cacheable=True)))

    def _do_prompt(self, out: list[Event]) -> None:
        srv = self.srv
        if not srv.prompts_json:
            self._do_tools(out)
            return
        rng = self.rng
        name, desc, prompt_args = _pick(rng, srv.spec.prompts)
        args = {a: self.world.token(rng, 12) for a in prompt_args}
        rid = self._id()
        t = self.t
        out.append(
            (t, C2S, REQ, self._request(rid, "prompts/get", {"name": name, "arguments": args}))
        )
        t += _lognormal_us(rng, 15, 0.7)
        text = self.world.text(rng, 5.0, 0.8)
        body = {
            "description": desc,
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }
        out.append((t, S2C, RES, self._result(rid, body)))

    def _do_complete(self, out: list[Event]) -> None:
        srv = self.srv
        if not srv.prompts_json:
            self._do_tools(out)
            return
        rng = self.rng
        name, _, prompt_args = srv.spec.prompts[0]
        params = {
            "ref": {"type": "ref/prompt", "name": name},
            "argument": {"name": prompt_args[0], "value": self.world.token(rng, 3)},
        }
        values = [self.world.token(rng, 10) for _ in range(rng.randint(0, 5))]
        body = {"completion": {"values": values, "total": len(values), "hasMore": False}}
        self._simple_call(out, self.t, "completion/complete", params, body)

    def _do_list(self, out: list[Event]) -> None:
        self._listings(out, self.t)

    def _do_ping(self, out: list[Event]) -> None:
        self._simple_call(out, self.t, "ping", None, {})

    def _do_server_request(self, out: list[Event]) -> None:
        """Legacy only: the server asks the client (roots/list when declared, else ping)."""
        rng = self.rng
        rid = self.next_server_id
        self.next_server_id += 1
        t = self.t
        if self.roots:
            out.append((t, S2C, REQ, {"jsonrpc": "2.0", "id": rid, "method": "roots/list"}))
            body: Json = {"roots": [{"uri": "file:///home/dev/project", "name": "project"}]}
        else:
            out.append((t, S2C, REQ, {"jsonrpc": "2.0", "id": rid, "method": "ping"}))
            body = {}
        t += _lognormal_us(rng, 2, 0.6)
        out.append((t, C2S, RES, {"jsonrpc": "2.0", "id": rid, "result": body}))

    def _do_log(self, out: list[Event]) -> None:
        if not self.logging:
            self._do_tools(out)
            return
        rng = self.rng
        t = self.t
        for _ in range(rng.randint(1, 4)):
            params = {
                "level": _pick(rng, _LOG_LEVELS),
                "logger": self.server,
                "data": self.world.text(rng, 4.3, 0.6),
            }
            out.append((t, S2C, NOTE, self._note("notifications/message", params)))
            t += _lognormal_us(rng, 5, 1.0)

    def _do_list_changed(self, out: list[Event]) -> None:
        t = self.t
        out.append((t, S2C, NOTE, self._note("notifications/tools/list_changed")))
        t += _lognormal_us(self.rng, 3, 0.6)
        self._simple_call(out, t, "tools/list", None, {"tools": self.srv.tools_json})


# ---------------------------------------------------------------------------
# Interleaving sessions and writing lines
# ---------------------------------------------------------------------------


_DIR_BYTES = {C2S: b'","dir":"c2s"', S2C: b'","dir":"s2c"'}

#: heap entry: (ts, tie-breaker, event, session, its event iterator); the tie-breaker
#: is unique, so comparisons never reach the members that cannot be compared
_Entry = tuple[int, int, Event, _Session, Iterator[Event]]


@dataclass(frozen=True)
class GenerationStats:
    """What was written: exact counts, so tests can check a loader against them."""

    path: str
    format: str
    seed: int
    lines: int
    bytes: int
    sessions: int  # sessions with at least one line in the output
    requests: int
    responses: int  # success responses (``result``)
    errors: int  # JSON-RPC error responses
    notifications: int
    revisions: dict[str, int] = field(default_factory=dict)  # sessions per revision
    first_ts: str | None = None
    last_ts: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _budgets(rng: Random, messages: int, sessions: int) -> list[int]:
    """Per-session line budgets: log-normal sizes (a few long sessions) summing to ~messages."""
    weights = [rng.lognormvariate(0.0, 0.7) for _ in range(sessions)]
    total = sum(weights)
    return [max(12, round(messages * w / total)) for w in weights]


def generate_capture(
    path: str | Path,
    *,
    messages: int,
    seed: int = 0,
    sessions: int | None = None,
    fmt: Format = "capture",
) -> GenerationStats:
    """Write exactly ``messages`` lines of a synthetic capture to ``path``.

    ``sessions`` defaults to ``messages // 500`` (at least 1) for the capture format.
    A raw stdio stream can only be one connection, so for ``fmt="stdio"`` it
    defaults to 1 and sessions follow each other instead of overlapping. The last
    sessions are cut wherever the line count runs out, as in a capture that was
    stopped; a session whose share of lines falls after that point never starts.
    """
    if messages < 0:
        raise ValueError("messages must be >= 0")
    if fmt not in ("capture", "stdio"):
        raise ValueError(f"unknown format {fmt!r}: use capture or stdio")
    rng = Random(seed)
    stdio = fmt == "stdio"
    n_sessions = (
        sessions
        if sessions is not None
        else (1 if stdio else max(1, messages // LINES_PER_SESSION))
    )
    if n_sessions < 1:
        raise ValueError("sessions must be >= 1")
    world = _World(rng)
    budgets = _budgets(rng, messages, n_sessions)
    fallback_budget = max(12, messages // n_sessions)
    concurrency = 1 if stdio else min(CONCURRENCY, n_sessions)
    used_ids: set[str] = set()
    started = 0

    def new_session(start_us: int) -> _Session:
        nonlocal started
        srng = Random(rng.getrandbits(64))
        # the first two sessions fix one of each revision, so even tiny captures have both
        modern = (started % 2 == 1) if started < 2 else srng.random() < 0.45
        srv = _pick(srng, world.servers)
        sid = ""
        while not sid or sid in used_ids:
            sid = f"{srv.spec.name}-{srng.getrandbits(48):012x}"
        used_ids.add(sid)
        budget = budgets[started] if started < len(budgets) else fallback_budget
        started += 1
        return _Session(
            world, srng, srv=srv, sid=sid, modern=modern, start_us=start_us, budget=budget
        )

    heap: list[_Entry] = []
    seq = itertools.count()

    def push(session: _Session) -> None:
        it = session.events()
        ev = next(it)
        heapq.heappush(heap, (ev[0], next(seq), ev, session, it))

    t0 = _EPOCH_US + rng.randrange(30 * 86_400 * _S)
    for _ in range(concurrency):
        push(new_session(t0))
        t0 += _lognormal_us(rng, 3000, 1.0)

    counts = {REQ: 0, RES: 0, ERR: 0, NOTE: 0}
    revisions: dict[str, int] = {}
    sessions_written = 0
    lines = nbytes = 0
    last_sec = -1
    prefix = ""
    first_ts: str | None = None
    ts_text = ""
    dumps = orjson.dumps
    newline = orjson.OPT_APPEND_NEWLINE
    buf: list[bytes] = []
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        while lines < messages:
            ts, _, ev, session, it = heap[0]
            _, direction, kind, msg = ev
            if stdio:
                data = dumps(msg, option=newline)
            else:
                sec, us = divmod(ts, _S)
                if sec != last_sec:
                    # formatting the seconds once per second keeps timestamps cheap
                    last_sec = sec
                    prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec))
                ts_text = f"{prefix}.{us:06d}Z"
                if first_ts is None:
                    first_ts = ts_text
                # byte-identical to orjson.dumps({"ts", "dir", "session", "server",
                # "transport", "msg"}) but the envelope tail is serialised once per session
                data = b"".join(
                    (
                        b'{"ts":"',
                        ts_text.encode(),
                        _DIR_BYTES[direction],
                        session.envelope_tail,
                        dumps(msg),
                        b"}\n",
                    )
                )
            buf.append(data)
            nbytes += len(data)
            lines += 1
            counts[kind] += 1
            if not session.written:
                # a flag on the session, not id(): ids of finished sessions get reused
                session.written = True
                sessions_written += 1
                revisions[session.revision] = revisions.get(session.revision, 0) + 1
            if len(buf) >= 4096:
                f.write(b"".join(buf))
                buf.clear()
            nxt = next(it, None)
            if nxt is None:
                heapq.heappop(heap)
                gap = _lognormal_us(rng, 2000, 1.0)
                push(new_session(ts + gap))
            else:
                heapq.heapreplace(heap, (nxt[0], next(seq), nxt, session, it))
        f.write(b"".join(buf))
    return GenerationStats(
        path=str(path),
        format=fmt,
        seed=seed,
        lines=lines,
        bytes=nbytes,
        sessions=sessions_written,
        requests=counts[REQ],
        responses=counts[RES],
        errors=counts[ERR],
        notifications=counts[NOTE],
        revisions=dict(sorted(revisions.items())),
        first_ts=first_ts,
        last_ts=ts_text or None,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="output file (.jsonl)")
    parser.add_argument("--messages", type=int, required=True, help="lines to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sessions", type=int, default=None, help="default: messages/500")
    parser.add_argument("--format", choices=("capture", "stdio"), default="capture")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    stats = generate_capture(
        args.out, messages=args.messages, seed=args.seed, sessions=args.sessions, fmt=args.format
    )
    elapsed = time.perf_counter() - started
    print(orjson.dumps(stats.as_dict(), option=orjson.OPT_INDENT_2).decode())
    print(
        f"{stats.lines} lines, {stats.bytes / 1e6:.1f} MB in {elapsed:.2f} s "
        f"({stats.lines / max(elapsed, 1e-9):,.0f} lines/s, "
        f"{stats.bytes / max(stats.lines, 1):.0f} B/line)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
