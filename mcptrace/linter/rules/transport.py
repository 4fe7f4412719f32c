"""HT: the Streamable HTTP envelope (headers and status codes around each message).

These rules only look at rows that carry HTTP facts: `http_method`, `http_status` or
`http_headers` (capture records with an `http` member, mcpsnoop HTTP sessions).
A client row with `http_method` or `http_headers` is taken to show the request's
headers as sent, so a header missing from it was not sent. Header names are compared
case-insensitively; values are compared exactly. mcpsnoop records only the MCP
routing headers (`Mcp-*`, `MCP-Protocol-Version`), so rules about `Accept` and
`Content-Type` only judge a missing header when the row also shows other headers.

The session rules (HT011 to HT014) also read bodyless rows (a `GET` or `DELETE`
recorded as a `transport` row). The status a client request was answered with is the
one on its own row (an exchange record), else the one on the JSON-RPC response paired
with it, else the one on the next HTTP row of the session when that is a server row
answering no request by id (a bodyless `202`/`404`, an error with `"id": null`).

The stream rules (HT016, HT018 to HT020) need the SSE stream each server message came
on. A HAR capture shows it: every row of one HTTP exchange (the request, and one row per
event of its answer) carries the entry's index in ``exchange``, so (source, exchange) is
one stream. The capture format keeps no exchange, so HT018 to HT020 judge HAR captures
only.

Sessions of the 2024-11-05 HTTP+SSE transport (a `GET` whose stream announced an
`endpoint` event; see :func:`_http_sse_sessions`) are judged by HT019 only: that
transport has none of Streamable HTTP's headers, statuses, session ids or streams per
request, whatever revision the session negotiated over it (servers of the SDKs still
offer it, with later revisions).
"""

from __future__ import annotations

import re

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import LEGACY, MODERN, SHOWN_CHARS, findings, line_of, rule, since
from mcptrace.linter.rules.lifecycle import initialize_calls, ordered
from mcptrace.linter.rules.subscriptions import sid_text, stream_notifications
from mcptrace.protocol import LOG_LEVEL_KEY, REVISIONS

_NAMED_METHODS = ("tools/call", "resources/read", "prompts/get")
#: a Base64-encoded header value, `=?base64?...?=` (streamable-http.mdx#value-encoding)
BASE64_VALUE = re.compile(r"=\?base64\?(.*)\?=", re.S)
#: a control character, which no header value may hold
CONTROL_CHAR = re.compile(r"[\x00-\x1f\x7f]")


def needs_base64(value: str) -> bool:
    """A string value that cannot travel as a plain header value (streamable-http.mdx
    #value-encoding): other than visible ASCII, space and tab, leading or trailing
    whitespace, or the Base64 sentinel form itself."""
    return (
        any(not (" " <= c <= "~" or c == "\t") for c in value)
        or value != value.strip(" \t")
        or BASE64_VALUE.fullmatch(value) is not None
    )


def _header_literal(name: str) -> pl.Expr:
    """The JSON string literal (quotes and escapes kept) of header ``name`` (any case)."""
    literal = rf'(?i)"{re.escape(name)}"\s*:\s*("(?:[^"\\]|\\.)*")'
    return pl.col("http_headers").str.extract(literal, 1)


def _header(name: str) -> pl.Expr:
    """The string value of header ``name`` (any case) in ``http_headers``, else null."""
    return _header_literal(name).str.json_decode(pl.String)


def _has_header(name: str) -> pl.Expr:
    """Whether ``http_headers`` names header ``name`` (any case), whatever its value."""
    return pl.col("http_headers").str.contains(rf'(?i)"{re.escape(name)}"\s*:').fill_null(False)


#: the row shows headers beyond the MCP routing ones (mcpsnoop records only those)
_GENERAL_HEADERS = (
    pl.col("http_headers")
    .str.contains(r'(?i)[{,]\s*"(?:[^m"]|m[^c"]|mc[^p"]|mcp[^-"])[^"]*"\s*:')
    .fill_null(False)
)


def _media_type_listed(value: pl.Expr, media_type: str) -> pl.Expr:
    """``value`` (a header such as Accept) lists ``media_type``, with or without parameters."""
    return value.str.contains(rf"(?i)(?:^|,)\s*{re.escape(media_type)}\s*(?:;|,|$)")


#: an SSE `endpoint` event (a HAR row says "SSE event `endpoint`: ...", the wire
#: "event: endpoint"): the GET opened the 2024-11-05 HTTP+SSE transport's stream
_ENDPOINT_EVENT = r"(?i)\bevent\b[\s`:]*endpoint\b"


def _http_sse_sessions(ctx: LintContext) -> pl.Series:
    """Codes of the sessions of the 2024-11-05 HTTP+SSE transport: a ``GET`` stream in
    them announced an ``endpoint`` event (the HAR loader puts that stream and the
    ``POST`` requests to the endpoint in one session), or, where the stream was not
    saved (a browser keeps no body of a stream still open), a ``POST`` carrying a
    request was answered ``202 Accepted``: Streamable HTTP answers a request with its
    response, the old transport on the stream."""
    return ctx.memo("transport.http_sse_sessions", _build_http_sse_sessions)["session"]


def _http_messages(ctx: LintContext, *columns: str) -> pl.DataFrame:
    """:attr:`LintContext.messages`, or none of its rows when no message has a value in
    any of ``columns``: most captures record no HTTP at all, and the null count of a column
    is known without a pass over its rows, where every filter here tests them all."""
    messages = ctx.messages
    if all(messages[column].null_count() == messages.height for column in columns):
        return messages.clear()
    return messages


def _build_http_sse_sessions(ctx: LintContext) -> pl.DataFrame:
    messages = _http_messages(ctx, "http_method")
    http = messages["http_method"].is_not_null()
    if not http.any():
        return pl.DataFrame(schema={"session": pl.UInt32})
    rows = messages.select(
        "session", "direction", "kind", "message", "http_method", "http_status"
    ).filter(http)
    announced = rows.filter(
        (pl.col("http_method") == "GET")
        & (pl.col("direction") == "s2c")
        & (pl.col("kind") == "transport")
        & pl.col("message").str.contains(_ENDPOINT_EVENT).fill_null(False)
    )
    accepted = rows.filter(
        (pl.col("http_method") == "POST")
        & (pl.col("direction") == "c2s")
        & (pl.col("kind") == "request")
        & (pl.col("http_status") == 202)
    )
    return pl.concat([announced.select("session"), accepted.select("session")]).unique()


def _streamable(ctx: LintContext) -> pl.Expr:
    """True for rows outside the HTTP+SSE transport's sessions (see the module docstring)."""
    sessions = _http_sse_sessions(ctx)
    if sessions.is_empty():
        return pl.lit(True)
    return ~pl.col("session").is_in(sessions.implode())


def client_http(ctx: LintContext) -> pl.DataFrame:
    """Client-to-server protocol rows whose HTTP request was captured (Streamable HTTP:
    not of an HTTP+SSE session)."""
    return ctx.memo(
        "transport.client_http",
        # all columns, but only the rows of captures that record HTTP (usually few)
        lambda ctx: (
            _http_messages(ctx, "http_method", "http_headers")
            .filter(
                pl.col("kind").is_in(["request", "notification", "response", "error"])
                & (pl.col("transport") == "http")
                & (pl.col("direction") == "c2s")
                & (pl.col("http_method").is_not_null() | pl.col("http_headers").is_not_null())
            )
            .filter(_streamable(ctx))
        ),
    )


def _server_http(ctx: LintContext) -> pl.DataFrame:
    """Server-to-client rows of any kind that carry an HTTP status or headers (Streamable
    HTTP: not of an HTTP+SSE session)."""
    return ctx.memo(
        "transport.server_http",
        lambda ctx: (
            _http_messages(ctx, "http_status", "http_headers")
            .filter(
                (pl.col("transport") == "http")
                & (pl.col("direction") == "s2c")
                & (pl.col("http_status").is_not_null() | pl.col("http_headers").is_not_null())
            )
            .filter(_streamable(ctx))
        ),
    )


@rule(
    code="HT001",
    name="http-protocol-version-header-missing",
    severity="error",
    revisions=since("2025-06-18"),
    scope="transport",
)
def http_protocol_version_header_missing(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an HTTP POST without an `MCP-Protocol-Version` header.

    In 2025-06-18 and 2025-11-25 this is any POST after the `initialize` request; in
    2026-07-28, every request (the spec leaves header rules for 2026 notification POSTs
    undefined).

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    On HTTP each POST stands alone; the header tells the server (and proxies) which
    revision the message speaks. Without it a legacy server falls back to 2025-03-26
    semantics, and a 2026 server that does not serve old clients must reject the request.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"Mcp-Method": "tools/list"}},
     "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
      "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/list"}},
     "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
      "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    ## Reference
    "If using HTTP, the client MUST include the `MCP-Protocol-Version: <protocol-version>`
    HTTP header on all subsequent requests to the MCP server" —
    basic/transports.mdx#protocol-version-header (2025-06-18, 2025-11-25); "Every POST
    request to the MCP endpoint MUST include an `MCP-Protocol-Version` header." —
    basic/transports/streamable-http.mdx#protocol-version-header (2026-07-28).
    """
    rows = client_http(ctx).filter(
        ~_has_header("MCP-Protocol-Version") & (pl.col("method") != "initialize")
    )
    if rows.is_empty():
        return findings(rows, "")
    first_init = (
        ctx.part("requests", "session", "ordinal", "method")
        .filter(pl.col("method") == "initialize")
        .group_by("session")
        .agg(_init=pl.col("ordinal").min())
    )
    rows = rows.join(first_init, on="session", how="left")
    legacy = ~pl.col("modern") & (pl.col("_init").is_null() | (pl.col("ordinal") > pl.col("_init")))
    modern = pl.col("modern") & (pl.col("kind") == "request")
    bad = rows.filter(legacy | modern)
    what = pl.coalesce(pl.col("method"), fmt("{} id {}", "kind", "id"))
    return findings(bad, fmt("HTTP POST of {} has no MCP-Protocol-Version header", what))


@rule(
    code="HT002",
    name="http-protocol-version-header-mismatch",
    severity="error",
    revisions=MODERN,
    scope="transport",
)
def http_protocol_version_header_mismatch(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a 2026-07-28 HTTP request whose `MCP-Protocol-Version` header differs from the
    `io.modelcontextprotocol/protocolVersion` in the body's `_meta`.

    ## Why is this bad?
    Proxies and load balancers route on the header while the server executes the body;
    if they disagree, the two act on different revisions. The server must reject such a
    request with `400` and `HeaderMismatch` (`-32020`).

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/list"}},
     "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
      "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/list"}},
     "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
      "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    ## Reference
    "The header value MUST match the `io.modelcontextprotocol/protocolVersion` field
    carried in the request body's `_meta`." —
    basic/transports/streamable-http.mdx#protocol-version-header (2026-07-28).
    """
    rows = (
        client_http(ctx)
        .filter(
            (pl.col("kind") == "request")
            & (pl.col("method") != "initialize")
            & pl.col("protocol_version").is_not_null()
        )
        .with_columns(header=_header("MCP-Protocol-Version"))
    )
    bad = rows.filter(
        pl.col("header").is_not_null() & (pl.col("header") != pl.col("protocol_version"))
    )
    return findings(
        bad,
        fmt(
            'MCP-Protocol-Version header "{}" does not match _meta protocolVersion "{}"',
            "header",
            "protocol_version",
        ),
    )


@rule(
    code="HT003",
    name="http-standard-header-missing",
    severity="error",
    revisions=MODERN,
    scope="transport",
)
def http_standard_header_missing(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a 2026-07-28 HTTP request without `Mcp-Method`, and a `tools/call`,
    `resources/read` or `prompts/get` request without `Mcp-Name` (the tool or prompt
    name, or the resource URI).

    ## Why is this bad?
    These headers let gateways route, authorise and rate-limit without parsing the body;
    a missing one breaks routing, and the server must reject the request with `400` and
    `HeaderMismatch` (`-32020`).

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "resources/read"}},
     "msg": {"jsonrpc": "2.0", "id": 4, "method": "resources/read",
      "params": {"uri": "file:///a.md",
      "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "resources/read", "Mcp-Name": "file:///a.md"}},
     "msg": {"jsonrpc": "2.0", "id": 4, "method": "resources/read",
      "params": {"uri": "file:///a.md",
      "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    ## Reference
    "These headers are REQUIRED for compliance." —
    basic/transports/streamable-http.mdx#standard-request-headers (2026-07-28):
    `Mcp-Method` for all requests, `Mcp-Name` for `tools/call`, `resources/read` and
    `prompts/get`.
    """
    rows = client_http(ctx).filter(
        (pl.col("kind") == "request") & (pl.col("method") != "initialize")
    )
    no_method = ~_has_header("Mcp-Method")
    no_name = (
        pl.col("method").is_in(_NAMED_METHODS)
        & pl.col("target").is_not_null()
        & ~_has_header("Mcp-Name")
    )
    bad = rows.filter(no_method | no_name)
    missing = (
        pl.when(no_method & no_name)
        .then(pl.lit("Mcp-Method and Mcp-Name headers"))
        .when(no_method)
        .then(pl.lit("Mcp-Method header"))
        .otherwise(pl.lit("Mcp-Name header"))
    )
    return findings(bad, fmt("HTTP request {} has no {}", "method", missing))


@rule(
    code="HT004",
    name="http-header-body-mismatch",
    severity="error",
    revisions=MODERN,
    scope="transport",
)
def http_header_body_mismatch(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a 2026-07-28 HTTP POST whose `Mcp-Method` or `Mcp-Name` header differs from the
    body.

    `Mcp-Method` must equal `method`; `Mcp-Name`, after decoding a `=?base64?…?=` value,
    must equal `params.name` (`tools/call`, `prompts/get`) or `params.uri`
    (`resources/read`). A name that itself has the `=?base64?…?=` form, sent verbatim,
    is left to HT015 (it should have been encoded). How the server answered such a
    request is HT017's.

    ## Why is this bad?
    A gateway that authorises `Mcp-Name: read_file` while the server runs the body's
    `delete_file` is a security hole; that is why the server must reject any mismatch
    with `400` and `HeaderMismatch` (`-32020`). Values are case-sensitive.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/call", "Mcp-Name": "read_file"}},
     "msg": {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "delete_file",
      "arguments": {}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/call", "Mcp-Name": "delete_file"}},
     "msg": {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "delete_file",
      "arguments": {}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    ## Reference
    "Servers that process the request body MUST reject requests where the values
    specified in the headers do not match the corresponding values in the request body."
    — basic/transports/streamable-http.mdx#server-validation (2026-07-28).
    """
    mismatches = _header_body_mismatches(ctx)
    return findings(mismatches, pl.col("mismatch"))


def _header_body_mismatches(ctx: LintContext) -> pl.DataFrame:
    """Client HTTP rows whose `Mcp-Method` or `Mcp-Name` header differs from the body
    (HT004's findings, which HT017 judges the server's answer to): ``ordinal``, ``kind``,
    ``id``, ``method`` and ``mismatch``, what differs, in words."""
    return ctx.memo("transport.header_body_mismatches", _build_header_body_mismatches)


def _build_header_body_mismatches(ctx: LintContext) -> pl.DataFrame:
    columns = ("ordinal", "kind", "id", "method")
    rows = client_http(ctx).filter(
        pl.col("http_headers").is_not_null() & pl.col("method").is_not_null()
    )
    if rows.is_empty():
        return rows.select(*columns, mismatch=pl.lit(None, pl.String))
    rows = rows.with_columns(mcp_method=_header("Mcp-Method"), mcp_name=_header("Mcp-Name"))
    encoded = pl.col("mcp_name").str.extract(f"^{BASE64_VALUE.pattern}$", 1)
    name_bytes = (
        pl.when(encoded.is_not_null())
        .then(encoded.str.decode("base64", strict=False))
        .otherwise(pl.col("mcp_name").cast(pl.Binary))
    )
    method_differs = pl.col("mcp_method").is_not_null() & (pl.col("mcp_method") != pl.col("method"))
    name_differs = (
        pl.col("method").is_in(_NAMED_METHODS)
        & pl.col("mcp_name").is_not_null()
        & pl.col("target").is_not_null()
        & (name_bytes != pl.col("target").cast(pl.Binary)).fill_null(True)
        # the body's own sentinel-shaped name sent verbatim: an encoding fault (HT015)
        & (pl.col("mcp_name") != pl.col("target"))
    )
    bad = rows.filter(method_differs | name_differs)
    mismatch = (
        pl.when(method_differs)
        .then(fmt('Mcp-Method header "{}" does not match body method "{}"', "mcp_method", "method"))
        .otherwise(fmt('Mcp-Name header "{}" does not match body value "{}"', "mcp_name", "target"))
    )
    return bad.select(*columns, mismatch=mismatch)


@rule(
    code="HT005",
    name="http-session-id-in-modern-session",
    severity="warning",
    revisions=MODERN,
    scope="transport",
)
def http_session_id_in_modern_session(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a server HTTP response carrying an `Mcp-Session-Id` header in a 2026-07-28
    session.

    ## Why is this bad?
    2026-07-28 Streamable HTTP is stateless: sessions were removed. A server that mints
    or echoes session ids invites clients to pin state to one replica, which breaks
    load balancing and suggests the server still runs legacy session logic.

    ## Example
    ```json
    {"dir": "s2c", "http": {"status": 200, "headers": {"Content-Type": "application/json",
     "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": "t-1", "result": {"resultType": "complete", "tools": []}}}
    ```

    Use instead:
    ```json
    {"dir": "s2c", "http": {"status": 200, "headers": {"Content-Type": "application/json"}},
     "msg": {"jsonrpc": "2.0", "id": "t-1", "result": {"resultType": "complete", "tools": []}}}
    ```

    ## Reference
    "An `Mcp-Session-Id` header on a request: ignore it, and do not mint or echo session
    IDs." — basic/transports/streamable-http.mdx#earlier-streamable-http-revisions
    (2026-07-28; a SHOULD).
    """
    bad = _server_http(ctx).filter(_has_header("Mcp-Session-Id"))
    return findings(
        bad, "HTTP response carries an Mcp-Session-Id header, but 2026-07-28 has no sessions"
    )


@rule(
    code="HT006",
    name="http-error-status-mismatch",
    severity="error",
    revisions=MODERN,
    scope="transport",
)
def http_error_status_mismatch(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a 2026-07-28 JSON-RPC error sent with the wrong HTTP status.

    `-32020`
    (HeaderMismatch), `-32021` (MissingRequiredClientCapability) and `-32022`
    (UnsupportedProtocolVersion) need `400 Bad Request`, `-32601` (Method not found)
    needs `404 Not Found`.

    ## Why is this bad?
    Clients probing a server's era decide on the status first: a modern server's `400`
    with a recognised body means "correct and retry", a `404` with `-32601` means the
    method is missing, not the endpoint. Under `200` these errors look like ordinary
    results and the probe and retry logic misfires.

    ## Example
    ```json
    {"dir": "s2c", "http": {"status": 200, "headers": {"Content-Type": "application/json"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}}
    ```

    Use instead:
    ```json
    {"dir": "s2c", "http": {"status": 404, "headers": {"Content-Type": "application/json"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}}
    ```

    ## Reference
    "If the server does not implement the requested RPC method, it MUST respond with
    `404 Not Found` and a JSON-RPC error with code `-32601` (`Method not found`)." —
    basic/transports/streamable-http.mdx#protocol-version-header (2026-07-28), which also
    requires `400` for `-32022` and, in #server-validation, for `-32020`; `-32021`:
    basic/index.mdx#meta ("On HTTP, the response status MUST be `400 Bad Request`").
    """
    expected = (
        pl.when(pl.col("error_code").is_in([-32020, -32021, -32022]))
        .then(pl.lit(400))
        .when(pl.col("error_code") == -32601)
        .then(pl.lit(404))
    )
    rows = _server_http(ctx).filter(
        (pl.col("kind") == "error") & pl.col("http_status").is_not_null()
    )
    bad = rows.with_columns(expected=expected).filter(
        pl.col("expected").is_not_null() & (pl.col("http_status") != pl.col("expected"))
    )
    return findings(
        bad,
        fmt(
            "JSON-RPC error {} sent with HTTP status {}, not {}",
            "error_code",
            "http_status",
            "expected",
        ),
    )


@rule(
    code="HT007",
    name="http-notification-not-answered-202",
    severity="error",
    revisions=since("2025-03-26"),
    scope="transport",
)
def http_notification_not_answered_202(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a notification (or legacy response) POST accepted with a 2xx other than `202`.

    The POST carries a notification (or, before 2026-07-28, a response) and the server
    accepted it with another 2xx status. Only captures that record the status on the
    client's row (the exchange's `http.status`) are judged.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    A notification or response has no reply. `202` with no body tells the client the
    message was taken; a `200` (often with a `{}` body) makes clients wait for or try to
    parse a JSON-RPC reply that will never come.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "status": 200,
     "headers": {"MCP-Protocol-Version": "2025-11-25"}},
     "msg": {"jsonrpc": "2.0", "method": "notifications/initialized"}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "status": 202,
     "headers": {"MCP-Protocol-Version": "2025-11-25"}},
     "msg": {"jsonrpc": "2.0", "method": "notifications/initialized"}}
    ```

    ## Reference
    "If the server accepts the input, the server MUST return HTTP status code 202 Accepted
    with no body." — basic/transports.mdx#sending-messages-to-the-server (2025-03-26 to
    2025-11-25); 2026-07-28: basic/transports/streamable-http.mdx#sending-messages.
    """
    bodyless = (pl.col("kind") == "notification") | (
        ~pl.col("modern") & pl.col("kind").is_in(["response", "error"])
    )
    status = pl.col("http_status")
    bad = client_http(ctx).filter(
        bodyless & status.is_not_null() & (status >= 200) & (status < 300) & (status != 202)
    )
    what = pl.coalesce(pl.col("method"), fmt("{} id {}", "kind", "id"))
    return findings(bad, fmt("HTTP POST of {} was answered {}, not 202 Accepted", what, status))


@rule(
    code="HT008",
    name="http-accept-header-incomplete",
    severity="error",
    revisions=since("2025-03-26"),
    scope="transport",
)
def http_accept_header_incomplete(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a client HTTP POST whose `Accept` header does not list both `application/json`
    and `text/event-stream`, or that has no `Accept` header although its other headers
    were captured.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    The server chooses per request between a single JSON body and an SSE stream. A
    client that does not accept both can be answered in a form it refuses; servers
    commonly reject such POSTs with `406 Not Acceptable`. A wildcard does not count as
    listing the types.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"Content-Type": "application/json",
     "Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"Content-Type": "application/json",
     "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    ```

    ## Reference
    "The client MUST include an `Accept` header, listing both `application/json` and
    `text/event-stream` as supported content types." —
    basic/transports.mdx#sending-messages-to-the-server (2025-03-26 to 2025-11-25);
    basic/transports/streamable-http.mdx#sending-messages (2026-07-28).
    """
    rows = client_http(ctx).filter(pl.col("http_headers").is_not_null())
    if rows.is_empty():
        return findings(rows, "")
    rows = rows.with_columns(accept=_header("Accept"))
    json_ok = _media_type_listed(pl.col("accept"), "application/json")
    sse_ok = _media_type_listed(pl.col("accept"), "text/event-stream")
    absent = ~_has_header("Accept") & _GENERAL_HEADERS
    incomplete = pl.col("accept").is_not_null() & ~(json_ok & sse_ok)
    bad = rows.filter(absent | incomplete)
    message = (
        pl.when(absent)
        .then(pl.lit("HTTP POST has no Accept header"))
        .otherwise(
            fmt(
                'HTTP POST Accept header "{}" does not list both application/json'
                " and text/event-stream",
                "accept",
            )
        )
    )
    return findings(bad, message)


@rule(
    code="HT009",
    name="http-request-content-type-not-json",
    severity="info",
    revisions=since("2025-03-26"),
    scope="transport",
)
def http_request_content_type_not_json(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports a client HTTP POST whose `Content-Type` is not `application/json` (parameters
    such as `charset=utf-8` are fine), or that has none although its other headers were
    captured.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    Every POST body is one JSON-RPC message, that is JSON, and every example in the spec
    sends `Content-Type: application/json`. Servers and gateways that check the media
    type (many SDKs answer `415 Unsupported Media Type`) reject anything else. The spec
    has no sentence requiring it, so this is reported as information.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"Content-Type": "text/plain",
     "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"Content-Type": "application/json",
     "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    ```

    ## Reference
    Derived: "JSON-RPC messages MUST be UTF-8 encoded." — basic/transports.mdx
    (2025-03-26 to 2025-11-25), basic/transports/index.mdx#messages (2026-07-28); the
    request examples in basic/transports/streamable-http.mdx#standard-request-headers
    send `Content-Type: application/json`.
    """
    rows = client_http(ctx).filter(pl.col("http_headers").is_not_null())
    if rows.is_empty():
        return findings(rows, "")
    rows = rows.with_columns(content_type=_header("Content-Type"))
    absent = ~_has_header("Content-Type") & _GENERAL_HEADERS
    wrong = pl.col("content_type").is_not_null() & ~_media_type_listed(
        pl.col("content_type"), "application/json"
    )
    bad = rows.filter(absent | wrong)
    message = (
        pl.when(absent)
        .then(pl.lit("HTTP POST has no Content-Type header"))
        .otherwise(fmt('HTTP POST Content-Type is "{}", not application/json', "content_type"))
    )
    return findings(bad, message)


@rule(
    code="HT010",
    name="http-response-content-type-invalid",
    severity="error",
    revisions=since("2025-03-26"),
    scope="transport",
)
def http_response_content_type_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a server's successful (2xx) HTTP answer to a request whose `Content-Type` is
    neither `application/json` nor `text/event-stream`.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    Clients handle exactly two shapes: one JSON object, or an SSE stream of messages.
    Anything else (`text/plain`, `text/html` from a proxy, a missing charset-only value)
    cannot be parsed and the request fails even though the server answered it.

    ## Example
    ```json
    {"dir": "s2c", "http": {"status": 200, "headers": {"Content-Type": "text/plain"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}}
    ```

    Use instead:
    ```json
    {"dir": "s2c", "http": {"status": 200, "headers": {"Content-Type": "application/json"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}}
    ```

    ## Reference
    "If the input is a JSON-RPC _request_, the server MUST either return
    `Content-Type: text/event-stream`, to initiate an SSE stream, or
    `Content-Type: application/json`, to return one JSON object." —
    basic/transports.mdx#sending-messages-to-the-server (2025-03-26 to 2025-11-25);
    basic/transports/streamable-http.mdx#sending-messages (2026-07-28).
    """
    status = pl.col("http_status")
    rows = _server_http(ctx).filter(
        pl.col("kind").is_in(["response", "error"])
        & status.is_not_null()
        & (status >= 200)
        & (status < 300)
        & (status != 202)
        & pl.col("http_headers").is_not_null()
    )
    if rows.is_empty():
        return findings(rows, "")
    rows = rows.with_columns(content_type=_header("Content-Type"))
    ok = _media_type_listed(pl.col("content_type"), "application/json") | _media_type_listed(
        pl.col("content_type"), "text/event-stream"
    )
    bad = rows.filter(pl.col("content_type").is_not_null() & ~ok)
    return findings(
        bad,
        fmt(
            'HTTP {} answer to a request has Content-Type "{}", not application/json'
            " or text/event-stream",
            "http_status",
            "content_type",
        ),
    )


# --- sessions and the status each client request was answered with (HT011-HT014) ---

_SESSION_ID = "Mcp-Session-Id"
#: HTTP drops the optional whitespace around a field value; a capture may keep it
_OWS = " \t"
#: statuses another MUST of the spec can demand for a request whatever its version
#: header: 401 (authorization), 403 (invalid Origin), 404 (terminated session), 405
#: (GET or DELETE not offered)
_OTHER_MANDATED = (401, 403, 404, 405)


def _header_values(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    """``text`` (the JSON string literal of header ``name`` in each row, see
    :func:`_header_literal`) and ``value`` (its string, optional whitespace stripped),
    both null where the row has no such header. Each distinct literal is decoded once:
    ids and versions repeat on every request of a session."""
    text = frame.select(_header_literal(name).alias("text"))["text"]
    distinct = text.unique().drop_nulls()
    decoded = distinct.str.json_decode(pl.String).str.strip_chars(_OWS)
    value = text.replace_strict(distinct, decoded, default=None, return_dtype=pl.String)
    return pl.DataFrame([text, value.alias("value")])


def _http_rows(ctx: LintContext) -> pl.DataFrame:
    """Client and server rows of any kind with an HTTP fact, in capture order, with only
    the columns the session rules read, plus ``sid_text`` and ``sid``: the
    `Mcp-Session-Id` header (see :func:`_header_values`)."""
    return ctx.memo("transport.http_rows", _build_http_rows)


def _build_http_rows(ctx: LintContext) -> pl.DataFrame:
    rows = (
        _http_messages(ctx, "http_method", "http_status", "http_headers")
        .select(
            "ordinal",
            "session",
            "ts",
            "direction",
            "transport",
            "kind",
            "id",
            "method",
            "http_method",
            "http_status",
            "http_headers",
        )
        .filter(
            (pl.col("transport") == "http")
            & pl.col("direction").is_in(["c2s", "s2c"])
            & (
                pl.col("http_method").is_not_null()
                | pl.col("http_status").is_not_null()
                | pl.col("http_headers").is_not_null()
            )
        )
    )
    rows = rows.filter(_streamable(ctx))
    sid = _header_values(rows, _SESSION_ID).rename({"text": "sid_text", "value": "sid"})
    return pl.concat([rows, sid], how="horizontal")


#: the client row is an HTTP request: a JSON-RPC message POSTed, or a bodyless request
_CLIENT_REQUEST = (pl.col("direction") == "c2s") & (
    pl.col("kind").is_in(["request", "notification", "response", "error"])
    | pl.col("http_method").is_not_null()
)


def _exchanges(ctx: LintContext) -> pl.DataFrame:
    """Client HTTP requests (see :data:`_CLIENT_REQUEST`) with ``status``, the HTTP status
    they were answered with (null when unknown), and ``answer_ordinal``/``answer_ts``,
    the row that shows it: the server's row when there is one, else the request's own."""
    return ctx.memo("transport.http_exchanges", _build_exchanges)


def _build_exchanges(ctx: LintContext) -> pl.DataFrame:
    rows = _http_rows(ctx)
    # the next HTTP row of the session, when it is a server row that answers no request
    # by id (a bodyless status, an error with a null id, a message of an SSE answer)
    by_id = pl.col("kind").is_in(["response", "error"]) & (pl.col("id").fill_null("null") != "null")
    answers = (pl.col("direction") == "s2c") & pl.col("http_status").is_not_null() & ~by_id
    following = rows.select(
        "session", _next=answers & ordered(ctx), _ord="ordinal", _ts="ts", _st="http_status"
    ).select(pl.all().shift(-1).over("session"))
    adjacent = pl.col("_next").fill_null(False)
    rows = (
        pl.concat([rows, following.drop("session")], how="horizontal")
        .filter(_CLIENT_REQUEST)
        .with_columns(
            adj_status=pl.when(adjacent).then("_st"),
            adj_ordinal=pl.when(adjacent).then("_ord"),
            adj_ts=pl.when(adjacent).then("_ts"),
        )
        .drop("_next", "_ord", "_ts", "_st")
    )
    rows = ctx.call_lookup(rows, "ordinal", resp_ordinal="response_ordinal")
    rows = ctx.lookup(rows, "resp_ordinal", resp_status="http_status", resp_ts="ts")
    status = pl.coalesce("http_status", "resp_status", "adj_status")
    from_response = pl.col("resp_status").is_not_null() & (pl.col("resp_status") == status)
    from_next = pl.col("adj_status").is_not_null() & (pl.col("adj_status") == status)
    return rows.with_columns(status=status).with_columns(
        answer_ordinal=pl.when(from_response)
        .then("resp_ordinal")
        .when(from_next)
        .then("adj_ordinal")
        .otherwise("ordinal"),
        answer_ts=pl.when(from_response)
        .then("resp_ts")
        .when(from_next)
        .then("adj_ts")
        .otherwise("ts"),
    )


def _assignments(ctx: LintContext) -> pl.DataFrame:
    """Each successful `initialize`: session, ``at`` (the response's ordinal), ``at_ts``
    and ``assigned``, the `Mcp-Session-Id` its answer set (null when it set none or its
    headers were not captured: either way, no id is known from then on)."""
    inits = (
        initialize_calls(ctx)
        .filter((pl.col("outcome") == "ok") & pl.col("response_ordinal").is_not_null())
        .select("session", at="response_ordinal")
    )
    inits = ctx.lookup(inits, "at", inner=True, at_ts="ts", http_headers="http_headers")
    assigned = _header_values(inits, _SESSION_ID)["value"].alias("assigned")
    return inits.select("session", "at", "at_ts").with_columns(assigned).sort("at")


def _sent_after(answer_ts: str) -> pl.Expr:
    """The request was not sent before the answer in ``answer_ts`` arrived: a capture
    that orders rows by when requests started (HAR) puts a request sent while an earlier
    one was in flight after that one's answer. Rows without a time are taken in order."""
    ts, at = pl.col("ts"), pl.col(answer_ts)
    return ts.is_null() | at.is_null() | (ts > at)


def _request_label() -> pl.Expr:
    """``HTTP POST of tools/list``, ``HTTP POST of response id 3``, ``HTTP GET``."""
    what = (
        pl.when(pl.col("kind").is_in(["request", "notification"]))
        .then(pl.col("method"))
        .when(pl.col("kind").is_in(["response", "error"]))
        .then(fmt("response id {}", "id"))
    )
    verb = pl.concat_str(pl.lit("HTTP"), pl.col("http_method").fill_null("request"), separator=" ")
    return pl.concat_str(verb, pl.lit(" of ") + what, ignore_nulls=True)


@rule(
    code="HT011",
    name="http-session-id-charset",
    severity="error",
    revisions=since("2025-03-26", "2025-11-25"),
    scope="transport",
)
def http_session_id_charset(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an HTTP message whose `Mcp-Session-Id` header holds a character outside
    visible ASCII (`0x21` to `0x7E`): a space, a control character, anything non-ASCII.

    Both the server response that assigns such an id and every client request that
    echoes it are flagged. Whitespace around the value is not part of it in HTTP and is
    ignored.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    The id travels back in every request header. Spaces, control characters and
    non-ASCII bytes are mangled, rejected or re-encoded by HTTP libraries and proxies,
    so the client cannot echo the id faithfully: the session breaks, or different hops
    see different ids.

    ## Example
    ```json
    {"dir": "s2c", "http": {"status": 200, "headers": {"Content-Type": "application/json",
     "Mcp-Session-Id": "sess 42"}},
     "msg": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "serverInfo": {"name": "srv", "version": "1.0"}}}}
    ```

    Use instead:
    ```json
    {"dir": "s2c", "http": {"status": 200, "headers": {"Content-Type": "application/json",
     "Mcp-Session-Id": "sess-42"}},
     "msg": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "serverInfo": {"name": "srv", "version": "1.0"}}}}
    ```

    ## Reference
    "The session ID MUST only contain visible ASCII characters (ranging from 0x21 to
    0x7E)." — basic/transports.mdx#session-management (2025-03-26 to 2025-11-25).
    """
    bad = _http_rows(ctx).filter(pl.col("sid").str.contains(r"[^\x21-\x7E]"))
    whose = (
        pl.when(pl.col("direction") == "s2c")
        .then(pl.lit("HTTP response sets"))
        .otherwise(pl.lit("HTTP request carries"))
    )
    return findings(
        bad,
        fmt(
            "{} Mcp-Session-Id {}, which has a character outside visible ASCII (0x21-0x7E)",
            whose,
            "sid_text",
        ),
    )


@rule(
    code="HT012",
    name="http-session-id-not-echoed",
    severity="error",
    revisions=since("2025-03-26", "2025-11-25"),
    scope="transport",
)
def http_session_id_not_echoed(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a client HTTP request, after the server set `Mcp-Session-Id` on its answer to
    `initialize`, that has no `Mcp-Session-Id` header or carries a different id.

    Requests after the latest successful `initialize` of the session are judged against
    the id that answer set. Not judged: a new `initialize` request (it must go without
    an id), a request timed before that answer, a request whose headers were not
    captured, and sessions whose `initialize` answer has no captured headers or sets no
    id. Bodyless `GET` and `DELETE` requests count when the capture has them as rows.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    A server that assigned an id keys its session state on it: without the header (or
    with another session's id) the request is rejected with `400` or `404`, or worse,
    runs against the wrong session.

    ## Example
    ```json
    {"dir": "s2c", "http": {"status": 200, "headers": {"Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "serverInfo": {"name": "srv", "version": "1.0"}}}}
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2025-11-25"}},
     "msg": {"jsonrpc": "2.0", "method": "notifications/initialized"}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2025-11-25",
     "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "method": "notifications/initialized"}}
    ```

    ## Reference
    "If an `MCP-Session-Id` is returned by the server during initialization, clients
    using the Streamable HTTP transport MUST include it in the `MCP-Session-Id`
    header on all of their subsequent HTTP requests." —
    basic/transports.mdx#session-management (2025-11-25; 2025-03-26 and 2025-06-18 spell
    the header `Mcp-Session-Id`).
    """
    rows = _http_rows(ctx).filter(
        _CLIENT_REQUEST
        & pl.col("http_headers").is_not_null()
        & ~((pl.col("kind") == "request") & (pl.col("method") == "initialize"))
    )
    servers = _http_rows(ctx).filter(pl.col("direction") == "s2c")
    if rows.is_empty() or servers["sid"].is_null().all():
        return findings(rows.clear(), "")
    assignments = _assignments(ctx)
    rows = rows.filter(ordered(ctx)).join_asof(
        assignments,
        left_on="ordinal",
        right_on="at",
        by="session",
        strategy="backward",
        allow_exact_matches=False,
        check_sortedness=False,
    )
    bad = rows.filter(
        pl.col("assigned").is_not_null()
        & (pl.col("sid").is_null() | (pl.col("sid") != pl.col("assigned")))
        & _sent_after("at_ts")
    )
    message = (
        pl.when(pl.col("sid").is_null())
        .then(
            fmt(
                '{} has no Mcp-Session-Id header; initialize assigned "{}"',
                _request_label(),
                "assigned",
            )
        )
        .otherwise(
            fmt(
                '{} carries Mcp-Session-Id "{}", not the "{}" initialize assigned',
                _request_label(),
                "sid",
                "assigned",
            )
        )
    )
    return findings(bad, message)


@rule(
    code="HT013",
    name="http-unsupported-version-not-400",
    severity="error",
    revisions=since("2025-06-18", "2025-11-25"),
    scope="transport",
)
def http_unsupported_version_not_400(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a client HTTP request whose `MCP-Protocol-Version` header names no protocol
    revision, answered with a status other than `400 Bad Request`.

    Such values are `1999-01-01`, `draft`, `latest` or an empty one. Only a value that
    is no published revision counts as unsupported: which known revisions a server
    serves cannot be told from a capture, so a known revision that differs from the
    negotiated one is not judged (and a revision newer than mcptrace knows would be
    taken as unsupported). Statuses another requirement can demand of the same request
    are accepted too: `401` (authorization), `403` (invalid `Origin`), `404` (terminated
    session) and `405` (`GET` or `DELETE` not offered). Requests whose answer's status
    was not captured are not judged.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    A server that serves a request under a version it does not speak answers with
    semantics the client did not ask for. The `400` tells the client to fix the header
    (or fall back) instead of trusting a result of unknown shape.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "status": 200,
     "headers": {"MCP-Protocol-Version": "1999-01-01", "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "status": 400,
     "headers": {"MCP-Protocol-Version": "1999-01-01", "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    ```

    ## Reference
    "If the server receives a request with an invalid or unsupported
    `MCP-Protocol-Version`, it MUST respond with `400 Bad Request`." —
    basic/transports.mdx#protocol-version-header (2025-06-18, 2025-11-25).
    """
    rows = _http_rows(ctx).filter(_CLIENT_REQUEST & pl.col("http_headers").is_not_null())
    if rows.is_empty():
        return findings(rows, "")
    version = _header_values(rows, "MCP-Protocol-Version")
    unknown = pl.concat([rows.select("ordinal"), version], how="horizontal").filter(
        pl.col("text").is_not_null() & ~pl.col("value").is_in(REVISIONS)
    )
    if unknown.is_empty():
        return findings(unknown, "")
    status = pl.col("status")
    bad = (
        _exchanges(ctx)
        .join(unknown.select("ordinal", "text"), on="ordinal", how="inner", maintain_order="left")
        .filter(status.is_not_null() & (status != 400) & ~status.is_in(_OTHER_MANDATED))
    )
    return findings(
        bad,
        fmt(
            "{} with unsupported MCP-Protocol-Version {} was answered {}, not 400 Bad Request",
            _request_label(),
            "text",
            status,
        ),
    )


def _origin_key(origin: str) -> str:
    """An origin as compared: scheme and host are case-insensitive, and a trailing ``/``
    (which a serialized origin has not, but a hand-written allow-list may) is dropped."""
    return origin.strip().rstrip("/").lower()


def _origin_key_expr(column: str) -> pl.Expr:
    """:func:`_origin_key` of each origin in ``column``."""
    return pl.col(column).str.strip_chars().str.strip_chars_end("/").str.to_lowercase()


@rule(
    code="HT021",
    name="http-disallowed-origin-not-forbidden",
    severity="error",
    revisions=since("2025-11-25"),
    scope="transport",
)
def http_disallowed_origin_not_forbidden(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    With `--allowed-origin` (or `allowed-origins` in the configuration), flags an HTTP
    request whose `Origin` header is not one of the allowed origins and that was not
    answered `403 Forbidden`.

    One finding per session and origin, at its first such request, says how many others
    there were.

    Which origins a server accepts is its configuration, not something a capture shows:
    without an allow-list this rule judges nothing. Origins are compared without regard
    to the case of scheme and host (`null`, the origin of sandboxed pages and local
    files, is disallowed unless listed). A request without `Origin` (most non-browser
    clients send none) and one whose answer's status was not captured are not judged.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    Validating `Origin` is what stops DNS rebinding: a web page on another site that
    resolves its own name to `127.0.0.1` can otherwise drive a local MCP server from the
    user's browser, calling its tools with the user's files and credentials. A server
    that answers such a request with anything but `403` processed or at least entertained
    it.

    ## Example
    With `--allowed-origin https://app.example.com`:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"Origin": "https://evil.example",
     "MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
      "params": {"name": "read_file", "arguments": {"path": "~/.ssh/id_rsa"}}}}
    {"dir": "s2c", "http": {"status": 200}, "msg": {"jsonrpc": "2.0", "id": 7,
     "result": {"content": [{"type": "text", "text": "-----BEGIN OPENSSH..."}]}}}
    ```

    Use instead:
    ```json
    {"dir": "s2c", "http": {"status": 403}, "msg": {"jsonrpc": "2.0",
     "error": {"code": -32600, "message": "Origin not allowed"}}}
    ```

    ## Reference
    "If the `Origin` header is present and invalid, servers **MUST** respond with HTTP
    403 Forbidden." —
    docs/specification/2025-11-25/basic/transports.mdx#security-warning (2025-11-25;
    docs/specification/2026-07-28/basic/transports/streamable-http.mdx#security--endpoint
    in 2026-07-28). Earlier revisions say only that servers must validate `Origin`.
    """
    if ctx.allowed_origins is None:
        return findings(pl.DataFrame(schema={"ordinal": pl.Int64}), "")
    allowed = sorted({_origin_key(origin) for origin in ctx.allowed_origins})
    rows = _http_rows(ctx).filter(_CLIENT_REQUEST & pl.col("http_headers").is_not_null())
    if rows.is_empty():
        return findings(rows, "")
    origin = _header_values(rows, "Origin")
    foreign = pl.concat([rows.select("ordinal"), origin], how="horizontal").filter(
        pl.col("value").is_not_null()
        & ~_origin_key_expr("value").is_in(pl.Series(allowed, dtype=pl.String).implode())
    )
    if foreign.is_empty():
        return findings(foreign, "")
    status = pl.col("status")
    # one finding per session and origin, at its first request: a page on a foreign site
    # that drives a local server sends many, and one is enough to show the server lets
    # it through
    bad = (
        _exchanges(ctx)
        .join(
            foreign.select("ordinal", "text", _origin=_origin_key_expr("value")),
            on="ordinal",
            how="inner",
            maintain_order="left",
        )
        .filter(status.is_not_null() & (status != 403))
        .sort("ordinal")
        .with_columns(_count=pl.len().over("session", "_origin"))
        .unique(["session", "_origin"], keep="first", maintain_order=True)
    )
    more = (
        pl.when(pl.col("_count") > 1)
        .then(fmt(" (and {} more requests from it in this session)", pl.col("_count") - 1))
        .otherwise(pl.lit(""))
    )
    return findings(
        bad,
        fmt(
            "{} from Origin {}, which is not an allowed origin, was answered {}, not 403"
            " Forbidden{}",
            _request_label(),
            "text",
            status,
            more,
        ),
    )


@rule(
    code="HT014",
    name="http-session-reused-after-404",
    severity="error",
    revisions=since("2025-03-26", "2025-11-25"),
    scope="transport",
)
def http_session_reused_after_404(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a client HTTP request that carries an `Mcp-Session-Id` after a request with
    that id was answered `404 Not Found`.

    After the `404` the client must start a new session: an `initialize` request with no
    id.

    Only the first such request per session id is flagged. A request sent before the
    `404` arrived (by timestamp, when both rows have one) is not, and neither is one
    after a later `initialize` answer assigned the same id again.

    A Streamable HTTP rule: sessions of the 2024-11-05 HTTP+SSE transport (a `GET` stream
    that announced an `endpoint` event) are not judged, whatever revision they speak.

    ## Why is this bad?
    A `404` to a request with a session id means the server ended that session; every
    further request with it fails the same way. A client that keeps the dead id loops
    on errors instead of re-initializing, and its user sees a broken connection.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "status": 404,
     "headers": {"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
      "params": {"name": "get_weather", "arguments": {}}}}
    {"dir": "c2s", "http": {"method": "POST",
     "headers": {"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
      "params": {"name": "get_weather", "arguments": {}}}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"Content-Type": "application/json",
     "Accept": "application/json, text/event-stream"}},
     "msg": {"jsonrpc": "2.0", "id": 6, "method": "initialize",
      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
      "clientInfo": {"name": "agent", "version": "1.0"}}}}
    ```

    ## Reference
    "When a client receives HTTP 404 in response to a request containing an
    `MCP-Session-Id`, it MUST start a new session by sending a new
    `InitializeRequest` without a session ID attached." —
    basic/transports.mdx#session-management (2025-11-25; 2025-03-26 and 2025-06-18 spell
    the header `Mcp-Session-Id`).
    """
    if _http_rows(ctx).filter(_CLIENT_REQUEST & pl.col("sid").is_not_null()).is_empty():
        return findings(_http_rows(ctx).clear(), "")
    carrying = _exchanges(ctx).filter(pl.col("sid").is_not_null() & ordered(ctx))
    gone = carrying.filter(pl.col("status") == 404).select(
        "session", "sid", at="answer_ordinal", at_ts="answer_ts", dead=pl.lit(True)
    )
    if gone.is_empty():
        return findings(carrying.clear(), "")
    revived = (
        _assignments(ctx)
        .filter(pl.col("assigned").is_not_null())
        .select("session", sid="assigned", at="at", at_ts="at_ts", dead=pl.lit(False))
    )
    events = pl.concat([gone, revived]).sort("at")
    later = carrying.sort("ordinal").join_asof(
        events,
        left_on="ordinal",
        right_on="at",
        by=["session", "sid"],
        strategy="backward",
        allow_exact_matches=False,
        check_sortedness=False,
    )
    bad = (
        later.filter(pl.col("dead").fill_null(False) & _sent_after("at_ts"))
        .sort("ordinal")
        .unique(["session", "sid"], keep="first", maintain_order=True)
    )
    return findings(
        bad,
        fmt(
            '{} carries Mcp-Session-Id "{}" after a request with it was answered 404;'
            " start a new session with initialize",
            _request_label(),
            "sid",
        ),
    )


# --- HT015 ---------------------------------------------------------------------------


def _plain_name_problem(value: str) -> str | None:
    """Why ``value``, a name sent verbatim as `Mcp-Name`, needed the Base64 form (None
    when it did not). The verdict is TL004's test for `Mcp-Param-*` values; the rest
    only words the finding."""
    if not needs_base64(value):
        return None
    reasons = [
        why
        for why, applies in (
            ("has the =?base64?…?= sentinel form", BASE64_VALUE.fullmatch(value) is not None),
            ("has leading or trailing whitespace", value != value.strip(" \t")),
            (
                "contains control characters",
                CONTROL_CHAR.search(value.replace("\t", "")) is not None,
            ),
            ("contains non-ASCII characters", any(c > "\x7f" for c in value)),
        )
        if applies
    ]
    return " and ".join(reasons) or "is not a plain header value"


@rule(
    code="HT015",
    name="mcp-name-not-base64",
    severity="error",
    revisions=MODERN,
    scope="transport",
)
def mcp_name_not_base64(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a 2026-07-28 HTTP request whose `Mcp-Name` header carries the body's name or
    URI as is, although that value must be sent Base64-encoded (`=?base64?…?=`).

    A value must be encoded when it is not a plain ASCII header value: it contains
    non-ASCII characters or control characters, has leading or trailing whitespace, or
    itself has the sentinel form `=?base64?…?=`. The test is the one TL004 applies to
    `Mcp-Param-*` headers (which TL004 judges). Only requests whose header equals the
    body's `params.name` (`tools/call`, `prompts/get`) or `params.uri`
    (`resources/read`) verbatim are judged: any other difference is HT004's, and a
    missing header HT003's. Encoding a value that did not need it is allowed.

    ## Why is this bad?
    HTTP field values are visible ASCII, space and tab. Non-ASCII or control bytes are
    rejected, mangled or re-encoded by HTTP libraries and proxies, and whitespace at
    either end is dropped, so gateways route on a name other than the one the server
    executes, and header injection becomes possible. A plain value of the sentinel form
    is decoded by the server and then no longer matches the body: the request is
    rejected with `HeaderMismatch`.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "prompts/get", "Mcp-Name": "Hello, 世界"}},
     "msg": {"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": {"name": "Hello, 世界",
      "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    Use instead:
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "prompts/get", "Mcp-Name": "=?base64?SGVsbG8sIOS4lueVjA==?="}},
     "msg": {"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": {"name": "Hello, 世界",
      "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    ## Reference
    "If the `Mcp-Name` source value cannot be safely represented as a plain ASCII header
    value, clients **MUST** encode it using the Base64 sentinel format described in
    [Value Encoding](#value-encoding)." —
    docs/specification/2026-07-28/basic/transports/streamable-http.mdx#standard-request-headers;
    "When a value cannot be safely represented as a plain ASCII header value (e.g., it
    contains non-ASCII characters, control characters, or has leading/trailing
    whitespace), clients **MUST** use Base64 encoding of the UTF-8 representation",
    "The same encoding rule applies to the `Mcp-Name` header value." and "To avoid
    ambiguity, clients **MUST** also Base64-encode any plain-ASCII value that matches
    the sentinel pattern (i.e., starts with `=?base64?` and ends with `?=`)." — same
    page, #value-encoding (new in 2026-07-28).
    """
    rows = client_http(ctx).filter(
        (pl.col("kind") == "request")
        & pl.col("method").is_in(_NAMED_METHODS)
        & pl.col("target").is_not_null()
        & _has_header("Mcp-Name")
    )
    if rows.is_empty():
        return findings(rows, "")
    rows = (
        rows.select("ordinal", "method", "target", _text=_header_literal("Mcp-Name"))
        .with_columns(_name=pl.col("_text").str.json_decode(pl.String))
        .filter(pl.col("_name") == pl.col("target"))
    )
    # names repeat from call to call: judge each distinct one once
    names = rows["target"].unique()
    problems = pl.DataFrame(
        {
            "target": names,
            "_problem": pl.Series([_plain_name_problem(n) for n in names], dtype=pl.String),
        }
    ).filter(pl.col("_problem").is_not_null())
    bad = rows.join(problems, on="target", maintain_order="left")
    return findings(
        bad,
        fmt(
            "HTTP {} sends Mcp-Name {} plain, but it {}: it must be sent as =?base64?…?=",
            "method",
            "_text",
            "_problem",
        ),
    )


# --- HT016: responses on the server's GET stream -------------------------------------

_RESUMPTION_HEADER = "Last-Event-ID"


@rule(
    code="HT016",
    name="http-response-on-get-stream",
    severity="error",
    revisions=since("2025-03-26", "2025-11-25"),
    scope="transport",
)
def http_response_on_get_stream(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a JSON-RPC response or error the server sent on the SSE stream of an HTTP
    `GET`, when that `GET` was not a resumption (it had no `Last-Event-ID` header).

    The `GET` is the client row of the same exchange (a HAR entry's request) or, when
    the capture keeps no exchanges (the capture format), the
    session's latest `GET` before the response: then every earlier `GET` of the session
    must show no `Last-Event-ID`, since the response may come on any stream still open.
    Not judged: a `GET` whose request headers were not captured, or that shows only the
    `Mcp-*` routing headers (a resumption cannot be told apart), responses of sessions
    whose `GET` stream announced an `endpoint` event (the 2024-11-05 HTTP+SSE
    transport, where every response comes on the `GET` stream, whatever revision was
    negotiated over it), sessions captured as per-direction files, and the body of a
    `GET` the server refused with an HTTP error status (`4xx`, `5xx`): no stream was opened.

    ## Why is this bad?
    The `GET` stream is for server-initiated requests and notifications. A response
    belongs on the stream of the `POST` that carried its request, which the client is
    reading for exactly that answer; a response elsewhere may be missed, leaving the
    client waiting on the `POST` stream until it times out. Only a stream resumed with
    `Last-Event-ID` replays the undelivered answers of the stream it continues.

    ## Example
    ```json
    {"dir": "c2s", "kind": "transport", "http": {"method": "GET",
     "headers": {"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-11-25",
     "Mcp-Session-Id": "1868a90c"}}, "msg": "HTTP GET /mcp (no body)"}
    {"dir": "s2c", "http": {"method": "GET", "status": 200,
     "headers": {"Content-Type": "text/event-stream"}},
     "msg": {"jsonrpc": "2.0", "id": 4, "result": {"tools": []}}}
    ```

    Use instead:
    ```json
    {"dir": "s2c", "http": {"method": "POST", "status": 200,
     "headers": {"Content-Type": "text/event-stream"}},
     "msg": {"jsonrpc": "2.0", "id": 4, "result": {"tools": []}}}
    ```

    ## Reference
    "The server MUST NOT send a JSON-RPC _response_ on the stream unless resuming a
    stream associated with a previous client request." —
    docs/specification/2025-11-25/basic/transports.mdx#listening-for-messages-from-the-server
    (2025-03-26 to 2025-11-25; 2026-07-28 has no `GET` stream, and on 2024-11-05's
    HTTP+SSE transport every response comes on it).
    """
    # the mask alone first: most captures have no GET at all
    messages = _http_messages(ctx, "http_method")
    on_get = (messages["http_method"] == "GET").fill_null(False)
    rows = messages.select(
        "ordinal",
        "session",
        "source",
        "exchange",
        "direction",
        "kind",
        "id",
        "http_headers",
        "http_status",
        "message",
    )
    if not on_get.any():
        return findings(rows.clear(), "")
    rows = rows.filter(on_get)
    # the body of a refused GET (an HTTP error status) is no message on a stream
    responses = rows.filter(
        (pl.col("direction") == "s2c")
        & pl.col("kind").is_in(["response", "error"])
        & ~(pl.col("http_status") >= 400).fill_null(False)
    )
    if responses.is_empty():
        return findings(responses, "")
    responses = responses.filter(_streamable(ctx))
    # a GET surely not a resumption: headers beyond the routing ones captured, and
    # no Last-Event-ID among them
    gets = rows.filter(pl.col("direction") == "c2s").select(
        "ordinal",
        "session",
        "source",
        "exchange",
        plain=pl.col("http_headers").is_not_null()
        & _GENERAL_HEADERS
        & ~_has_header(_RESUMPTION_HEADER),
    )
    exchange = ["session", "source", "exchange"]
    same_exchange = (
        gets.filter(pl.col("exchange").is_not_null())
        .select(*exchange, "plain", get_ordinal="ordinal")
        .unique(exchange, keep="first")
    )
    responses = responses.join(same_exchange, on=exchange, how="left", maintain_order="left")
    on_own_line = responses.filter(pl.col("get_ordinal").is_not_null())
    # every GET so far in the session was plain: no stream open then was a resumption
    so_far = gets.select(
        "session",
        at="ordinal",
        get_ordinal="ordinal",
        plain=(~pl.col("plain")).cum_sum().over("session") == 0,
    )
    elsewhere = (
        responses.filter(pl.col("get_ordinal").is_null() & ordered(ctx))
        .drop("get_ordinal", "plain")
        .join_asof(
            so_far,
            left_on="ordinal",
            right_on="at",
            by="session",
            strategy="backward",
            check_sortedness=False,
        )
        .drop("at")
    )
    bad = (
        pl.concat([on_own_line, elsewhere], how="diagonal_relaxed")
        .filter(pl.col("plain").fill_null(False))
        .sort("ordinal")
    )
    what = pl.when(pl.col("kind") == "error").then(pl.lit("error")).otherwise(pl.lit("response"))
    return findings(
        bad,
        fmt(
            "server sent the JSON-RPC {} to id {} on the stream of the GET at {},"
            " which resumed no stream (no Last-Event-ID header): a response goes on the"
            " POST stream of its request",
            what,
            pl.col("id").fill_null("null"),
            line_of("get_ordinal"),
        ),
    )


# --- HT017: a header mismatch the server did not reject ------------------------------

_HEADER_MISMATCH = -32020
#: error codes another MUST of the spec demands for a request whatever its headers: a
#: server that answers one of them has rejected the request for that reason first
#: (-32021 missing client capability, -32022 unsupported protocol version, -32601
#: method not found)
_OTHER_REJECTIONS = (-32021, -32022, -32601)
#: statuses of a request refused before its body was read (authorization, Origin): the
#: rule is for "servers that process the request body"
_REFUSED_UNREAD = (401, 403)


@rule(
    code="HT017",
    name="http-header-mismatch-accepted",
    severity="error",
    revisions=MODERN,
    scope="transport",
)
def http_header_mismatch_accepted(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a server that did not reject a request whose `Mcp-Method` or `Mcp-Name`
    header differs from its body with `400 Bad Request` and `HeaderMismatch` (`-32020`).

    The requests are those HT004 flags; the answer is a result (the request was
    processed, even if the result is a tool error or asks for input), or an error with
    another code (its status is named too when it is not `400`). `Mcp-Name` values of
    the `=?base64?…?=` form are decoded before comparing, as HT004 does. Not judged: a
    request with no answer in the capture (an intermediary may reject with a bare
    `400`), errors another MUST demands whatever the headers (`-32021` missing client
    capability, `-32022` unsupported protocol version, `-32601` method not found), and
    errors sent with `401` or `403` (refused before the body was read). A `-32020` sent
    with another status than `400` is HT006's finding, not this rule's.

    ## Why is this bad?
    Gateways route, authorise and rate-limit on the headers while the server executes
    the body. A server that runs `delete_file` on a request whose `Mcp-Name` said
    `read_file` lets a client slip past every policy the gateway enforced; the
    rejection is what makes the headers trustworthy. The exact status and code tell the
    client to fix its headers rather than fall back to an older protocol.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/call", "Mcp-Name": "read_file"}},
     "msg": {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "delete_file",
      "arguments": {}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    {"dir": "s2c", "http": {"status": 200, "headers": {"Content-Type": "application/json"}},
     "msg": {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete",
      "content": [{"type": "text", "text": "deleted"}]}}}
    ```

    Use instead:
    ```json
    {"dir": "s2c", "http": {"status": 400, "headers": {"Content-Type": "application/json"}},
     "msg": {"jsonrpc": "2.0", "id": 7, "error": {"code": -32020,
      "message": "Header mismatch: Mcp-Name 'read_file' does not match 'delete_file'"}}}
    ```

    ## Reference
    "Servers that process the request body MUST reject requests where the values
    specified in the headers do not match the corresponding values in the request body."
    and "When rejecting a request due to header validation failure, servers MUST return
    HTTP status `400 Bad Request` and MUST include a JSON-RPC error response using the
    following error code:" (`-32020`, `HeaderMismatch`) —
    docs/specification/2026-07-28/basic/transports/streamable-http.mdx#server-validation
    (2026-07-28).
    """
    requests = _header_body_mismatches(ctx).filter(pl.col("kind") == "request")
    if requests.is_empty():
        return findings(requests, "")
    answered = ctx.call_lookup(
        requests, "ordinal", answer="response_ordinal", outcome="outcome", code="error_code"
    ).filter(pl.col("answer").is_not_null())
    answered = ctx.lookup(answered, "ordinal", request_status="http_status")
    answered = ctx.lookup(answered, "answer", answer_status="http_status")
    # the exchange's status first, as for the other status rules (see _exchanges)
    status = pl.coalesce("request_status", "answer_status")
    rejected = pl.col("outcome") == "error"
    wrong_code = rejected & (pl.col("code").fill_null(0) != _HEADER_MISMATCH)
    wrong_status = rejected & status.is_not_null() & (status != 400)
    excused = rejected & (
        pl.col("code").is_in(_OTHER_REJECTIONS).fill_null(False)
        | status.is_in(_REFUSED_UNREAD).fill_null(False)
    )
    # the finding points at the answer; a HeaderMismatch sent with another status than
    # 400 is HT006's finding (the status of every -32020), not reported twice
    bad = answered.with_columns(status=status, request_ordinal="ordinal", ordinal="answer").filter(
        (~rejected | wrong_code) & ~excused
    )
    error = (
        pl.when(pl.col("code").is_null())
        .then(pl.lit("an error without a code"))
        .otherwise(fmt("error {}", "code"))
    )
    verdict = (
        pl.when(~rejected)
        .then(pl.lit("was answered with a result"))
        .when(wrong_status)
        .then(fmt("was rejected with {} and HTTP status {}", error, "status"))
        .otherwise(fmt("was rejected with {}", error))
    )
    return findings(
        bad,
        fmt(
            "{} request id {} ({}), whose {}, {}: a header mismatch must be rejected"
            " with 400 Bad Request and HeaderMismatch (-32020)",
            "method",
            "id",
            line_of("request_ordinal"),
            "mismatch",
            verdict,
        ),
    )


# --- HT018-HT020: the SSE streams of HAR captures ------------------------------------
#
# A HAR entry is one HTTP exchange, and every row of it (the request's c2s rows, one s2c
# row per SSE event of the response) has the entry's index in `exchange`: (source,
# exchange) is one stream (not the entry's line: a HAR written on one line, as
# Playwright writes it, has every entry on line 1). The capture format records no
# exchange (each row is its own line), so these rules judge HAR rows only.

_HAR_COLUMNS = (
    "ordinal",
    "session",
    "source",
    "line",
    "exchange",
    "direction",
    "kind",
    "id",
    "id_type",
    "method",
    "http_method",
    "http_status",
    "http_headers",
    "progress_token",
    "cancel_id",
    "message",
)
_EXCHANGE = ("source", "exchange")
_SSE_TYPE = "text/event-stream"
#: an SSE event whose data is empty (a reconnection primer): the SSE rules do not
#: dispatch it, the HAR loader keeps it as a transport row saying so
_EMPTY_EVENT = r"^SSE event(?: `[^`]*`)?(?: \(id [^)]*\))? without data$"
#: the data of an SSE event the HAR loader keeps as a transport row (not JSON)
_EVENT_DATA = r"(?s)^SSE event(?: `[^`]*`)?(?: \(id [^)]*\))?: (.*)$"


def _har_rows(ctx: LintContext) -> pl.DataFrame:
    """Rows of HAR captures that belong to an HTTP exchange, in capture order, with the
    columns the stream rules read."""
    return ctx.memo("transport.har_rows", _build_har_rows)


def _build_har_rows(ctx: LintContext) -> pl.DataFrame:
    messages = _http_messages(ctx, "http_method")
    if messages.is_empty():
        return messages.select(_HAR_COLUMNS)
    return (
        messages.select(*_HAR_COLUMNS, "format")
        .filter(pl.col("http_method").is_not_null() & (pl.col("format") == "har"))
        .drop("format")
    )


def _same_value_key(text: str) -> str:
    """A text equal for JSON texts of the same value, whatever their member order and
    spacing (the text itself when it is not JSON, or holds what cannot be written back,
    such as an integer beyond 64 bits)."""
    try:
        return _json.dumpb(_json.loads(text), sort_keys=True).decode()
    except (_json.JSONDecodeError, TypeError, RecursionError):
        return text


@rule(
    code="HT018",
    name="http-message-broadcast",
    severity="error",
    revisions=since("2025-03-26", "2025-11-25"),
    scope="transport",
)
def http_message_broadcast(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a server request, response or error that the server sent again, as the same
    message, on another stream of the session.

    Every copy on a stream other than the first copy's (the copy on the stream opened
    first: a HAR has no time per event) is flagged. Only HAR captures
    are judged: there every row of one HTTP exchange carries the same `exchange`, which
    identifies the stream (the capture format records no exchange). Messages are the
    same when their JSON values are equal (member order and spacing aside), which takes
    the same kind, id and method and the same content. A response's own stream (the
    `POST` that carried a request with its id) always holds the copy that counts, so a
    copy elsewhere is flagged even when it comes first in the capture.
    Not judged: notifications (they carry no id, and the same notification may
    rightly be sent twice, e.g. two `list_changed` events), messages that merely share
    an id (PR001, PR004), streams opened by a request with `Last-Event-ID` (a
    resumption replays the messages of the stream it resumes), exchanges with no
    `Mcp-Session-Id` on the request or the response (the HAR loader then keys the
    session by endpoint, so two clients' streams cannot be told apart), sessions of
    the 2024-11-05 HTTP+SSE transport (an `endpoint` event: each `GET` is a connection
    of its own there), and copies in different HAR files.

    ## Why is this bad?
    A client listening on several streams processes every message it receives. A
    request sent on two streams is handled twice (the user is asked twice to approve a
    sampling call, or roots are listed twice); a response on two streams completes a
    request that is already complete, and a client that reused the id for a new
    request may take the copy as its answer.

    ## Example
    ```json
    {"dir": "s2c", "http": {"method": "GET", "status": 200,
     "headers": {"Content-Type": "text/event-stream", "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": "s7", "method": "roots/list"}}
    {"dir": "s2c", "http": {"method": "POST", "status": 200,
     "headers": {"Content-Type": "text/event-stream", "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": "s7", "method": "roots/list"}}
    ```
    (two SSE events of two HAR entries: the `GET` stream and a `POST` stream)

    Use instead:
    ```json
    {"dir": "s2c", "http": {"method": "GET", "status": 200,
     "headers": {"Content-Type": "text/event-stream", "Mcp-Session-Id": "1868a90c"}},
     "msg": {"jsonrpc": "2.0", "id": "s7", "method": "roots/list"}}
    ```
    (on one stream only; a resumable stream covers the risk of losing it)

    ## Reference
    "The server MUST send each of its JSON-RPC messages on only one of the connected
    streams; that is, it MUST NOT broadcast the same message across multiple streams."
    — docs/specification/2025-11-25/basic/transports.mdx#multiple-connections
    (2025-03-26 to 2025-11-25).
    """
    rows = _har_rows(ctx)
    key = ["source", "session", "kind", "id"]
    copies = rows.filter(
        (pl.col("direction") == "s2c")
        & pl.col("kind").is_in(["request", "response", "error"])
        & pl.col("id").is_not_null()
        & (pl.col("id_type") != "null")
    ).select(
        "ordinal",
        "session",
        "source",
        "exchange",
        "kind",
        "id",
        "method",
        "http_headers",
        "message",
    )
    # an id seen on one exchange only cannot be a broadcast: usually nothing is left
    copies = copies.filter(pl.col("exchange").n_unique().over(key) > 1)
    if copies.is_empty():
        return findings(copies, "")
    copies = copies.filter(_streamable(ctx))
    exchanges = copies.select(_EXCHANGE).unique()
    clients = rows.filter(pl.col("direction") == "c2s").join(exchanges, on=_EXCHANGE, how="semi")
    streams = clients.group_by(_EXCHANGE).agg(
        resumed=_has_header(_RESUMPTION_HEADER).any(),
        client_sid=_has_header(_SESSION_ID).any(),
        verb=pl.col("http_method").first(),
        # when the stream was opened: the HAR loader places a GET stream's events where
        # they may have come (it has no time per event), so its rows' order says little
        opened=pl.col("ordinal").min(),
    )
    # the POST that carried a request with the response's id: the response's own stream
    homes = (
        clients.filter(pl.col("kind") == "request")
        .select(*_EXCHANGE, "id", home=pl.lit(True))
        .unique()
    )
    copies = (
        copies.join(streams, on=_EXCHANGE, how="left", maintain_order="left")
        .join(homes, on=[*_EXCHANGE, "id"], how="left", maintain_order="left")
        .filter(
            ~pl.col("resumed").fill_null(False)
            & (pl.col("client_sid").fill_null(False) | _has_header(_SESSION_ID))
        )
        .with_columns(
            home=pl.col("home").fill_null(False) & pl.col("kind").is_in(["response", "error"]),
            verb=pl.col("verb").fill_null("HTTP request"),
        )
    )
    if copies.is_empty():
        return findings(copies, "")
    texts = copies["message"].unique()
    values = pl.Series([_same_value_key(t) for t in texts], dtype=pl.String)
    group = ["source", "session", "_value"]
    copies = (
        copies.with_columns(
            _value=pl.col("message").replace_strict(texts, values, return_dtype=pl.String)
        )
        .filter(pl.col("exchange").n_unique().over(group) > 1)
        # the copy that counts: on the response's own stream, else on the stream opened
        # first
        .sort(~pl.col("home"), "opened", "ordinal", nulls_last=True)
        .with_columns(
            first_exchange=pl.col("exchange").first().over(group),
            first_ordinal=pl.col("ordinal").first().over(group),
            first_verb=pl.col("verb").first().over(group),
        )
    )
    bad = copies.filter((pl.col("exchange") != pl.col("first_exchange")) & ~pl.col("home")).sort(
        "ordinal"
    )
    what = (
        pl.when(pl.col("kind") == "request")
        .then(fmt("request {} (id {})", "method", "id"))
        .when(pl.col("kind") == "error")
        .then(fmt("error to id {}", "id"))
        .otherwise(fmt("response to id {}", "id"))
    )
    return findings(
        bad,
        fmt(
            "server sent the {} on this stream and on the stream of the {} at {}:"
            " each message goes on one stream only",
            what,
            "first_verb",
            line_of("first_ordinal"),
        ),
    )


def _event_type(raw: str | None) -> str | None:
    """The type of the SSE event read from ``raw`` (its lines), `message` when it names
    none; None when there is no dispatched event in it."""
    from mcptrace.loaders.har import sse_events

    if raw is None:
        return None
    events = sse_events(raw + "\n\n")
    return (events[0].type or "message") if events else None


@rule(
    code="HT019",
    name="http-sse-endpoint-event-missing",
    severity="error",
    revisions=LEGACY,
    scope="transport",
)
def http_sse_endpoint_event_missing(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags the first event of an HTTP+SSE stream (the 2024-11-05 transport's `GET`)
    when it is not the `endpoint` event that tells the client where to `POST`.

    Only HAR captures are judged (there the rows of one HTTP exchange share a line,
    which identifies the stream and its first event). A `GET` is taken to open the
    HTTP+SSE transport's stream when nothing shows the Streamable HTTP transport: the
    request carries neither `Mcp-Session-Id` nor `Last-Event-ID`, the answer is a 2xx
    `text/event-stream` that sets no `Mcp-Session-Id`, and no earlier `POST` of the
    session was accepted (a Streamable HTTP client initializes with a `POST` to the
    same endpoint before it listens; an HTTP+SSE client connects first). Events without
    data are skipped (the SSE rules do not dispatch them). The session must be judged
    by a revision up to 2025-11-25 (SDK servers still offer this transport with later
    revisions, whose backwards-compatibility sections expect the same first event): the
    HAR loader puts a stream that announced an endpoint in one session with the `POST`s
    to it (whose `initialize` tells the revision), and keys any other `GET` without
    `Mcp-Session-Id` by its URL, a session of its own whose revision comes from the
    `initialize` result the server streams on it. Not judged: a stream whose body the
    HAR did not keep (browsers often drop `EventSource` bodies), a stream whose session
    shows no revision (no `initialize` result on it), and a reconnecting `GET` on the
    path the client also `POST`s to.

    ## Why is this bad?
    An HTTP+SSE client cannot send anything until it knows where to `POST`: the
    `endpoint` event carries that URI. A client waiting for it drops or misreads
    whatever comes first, and one probing for the transport (a `GET` after a failed
    Streamable HTTP `POST`) decides which transport the server speaks by that first
    event.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "GET", "headers": {"Accept": "text/event-stream"}},
     "kind": "transport", "msg": "HTTP GET /sse (no body)"}
    {"dir": "s2c", "http": {"method": "GET", "status": 200,
     "headers": {"Content-Type": "text/event-stream"}},
     "msg": {"jsonrpc": "2.0", "method": "notifications/message",
      "params": {"level": "info", "data": "ready"}}}
    ```
    (a HAR entry `GET /sse` whose first SSE event is a `message` event)

    Use instead:
    ```json
    {"dir": "s2c", "http": {"method": "GET", "status": 200,
     "headers": {"Content-Type": "text/event-stream"}},
     "kind": "transport", "msg": "SSE event `endpoint`: /messages?sessionId=5f0c1a"}
    ```
    (`event: endpoint` and `data: /messages?sessionId=5f0c1a` as the first event)

    ## Reference
    "When a client connects, the server MUST send an `endpoint` event containing a URI
    for the client to use for sending messages." —
    docs/specification/2024-11-05/basic/transports.mdx#http-with-sse (2024-11-05); a
    client probing for that transport issues a `GET` "expecting that this will open an
    SSE stream and return an `endpoint` event as the first event" —
    docs/specification/2025-03-26/basic/transports.mdx#backwards-compatibility.
    """
    rows = _har_rows(ctx)
    gets = rows.filter((pl.col("direction") == "c2s") & (pl.col("http_method") == "GET"))
    if gets.is_empty():
        return findings(gets, "")
    # a POST of the session accepted before the GET: a Streamable HTTP session
    accepted = (
        rows.filter(
            (pl.col("direction") == "c2s")
            & (pl.col("http_method") != "GET")
            & pl.col("http_status").is_between(200, 299)
        )
        .group_by("session")
        .agg(accepted_at=pl.col("ordinal").min())
    )
    gets = (
        gets.join(accepted, on="session", how="left")
        .filter(
            ~_has_header(_SESSION_ID)
            & ~_has_header(_RESUMPTION_HEADER)
            & (pl.col("accepted_at").is_null() | (pl.col("accepted_at") > pl.col("ordinal")))
        )
        .select(*_EXCHANGE, path=pl.col("message").str.extract(r"^HTTP GET (\S+)", 1))
        .unique(_EXCHANGE)
    )
    events = (
        rows.filter(pl.col("direction") == "s2c")
        .join(gets, on=_EXCHANGE, how="inner", maintain_order="left")
        .filter(
            pl.col("http_status").is_between(200, 299)
            & _media_type_listed(_header("Content-Type"), _SSE_TYPE).fill_null(False)
            & ~_has_header(_SESSION_ID)
            & ~(
                (pl.col("kind") == "transport")
                & pl.col("message").str.contains(_EMPTY_EVENT).fill_null(False)
            )
        )
        .with_columns(
            endpoint_later=(
                (pl.col("kind") == "transport")
                & pl.col("message").str.contains(_ENDPOINT_EVENT).fill_null(False)
            )
            .any()
            .over(_EXCHANGE)
        )
    )
    first = events.unique(_EXCHANGE, keep="first", maintain_order=True)
    if first.is_empty():
        return findings(first, "")
    raw = ctx.trace.messages["raw"].gather(ctx.positions(first["ordinal"]))
    event_type = pl.Series("event_type", [_event_type(r) for r in raw], dtype=pl.String)
    bad = first.with_columns(event_type).filter(
        pl.col("event_type").is_not_null() & (pl.col("event_type") != "endpoint")
    )
    carrying = (
        pl.when(pl.col("kind").is_in(["request", "notification"]))
        .then(fmt("{} {}", "kind", "method"))
        .when(pl.col("kind") == "response")
        .then(fmt("the response to id {}", pl.col("id").fill_null("null")))
        .when(pl.col("kind") == "error")
        .then(fmt("an error to id {}", pl.col("id").fill_null("null")))
        .when(pl.col("kind") == "transport")
        .then(
            fmt(
                'data "{}"',
                pl.col("message")
                .str.extract(_EVENT_DATA, 1)
                .str.replace_all(r"\s+", " ")
                .str.slice(0, SHOWN_CHARS),
            )
        )
        .otherwise(pl.lit("data that is no JSON-RPC message"))
    )
    later = (
        pl.when(pl.col("endpoint_later"))
        .then(pl.lit("it comes later in the stream"))
        .otherwise(pl.lit("the stream has none"))
    )
    return findings(
        bad,
        fmt(
            "the HTTP+SSE stream of GET {} starts with a `{}` event ({}), not the `endpoint`"
            " event with the URI to POST to ({})",
            pl.col("path").fill_null("/"),
            "event_type",
            carrying,
            later,
        ),
    )


@rule(
    code="HT020",
    name="http-stream-notification-unrelated",
    severity="error",
    revisions=MODERN,
    scope="transport",
)
def http_stream_notification_unrelated(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a notification on the response stream of a 2026-07-28 `POST` that belongs to
    another request than the one the `POST` carried.

    What ties a notification to a request: `notifications/progress` carries the
    request's `_meta.progressToken` (a token the request did not carry is another's, or
    nobody's); `notifications/cancelled` names a request by `requestId`; a stream
    notification's `_meta` `io.modelcontextprotocol/subscriptionId` names the
    `subscriptions/listen` request whose stream it belongs to; and a
    `notifications/message` may travel only on the stream of a request that asked for
    logs with `io.modelcontextprotocol/logLevel`. Only HAR captures are judged: there
    the rows of one HTTP exchange (the `POST` and the events of its answer) share a
    line (the capture format records no exchange). Not judged: other notifications
    (nothing in them names a request; a change notification without `subscriptionId`
    is SB001's), and a `POST` whose body is no single request. Other rules judge the
    same fields without streams, so a finding here may come with theirs: a token no
    request carried (PG003), a `subscriptionId` naming no open listen request (SB002),
    a log message while no request in flight asked for logs (LG001). What concerns the
    stream's own request stays theirs: a `subscriptionId` or a server cancel naming it
    when it is no listen request (SB002, SB006), a log level below the one it asked
    for (LG003).

    ## Why is this bad?
    A response stream is scoped to one request: the client shows what arrives on it as
    that request's progress and logs, and closes it when the response comes. A
    notification for another request lands in the wrong place (a progress bar jumps, a
    log line is attributed to the wrong call) and is lost for the request it was meant
    for, whose own stream never carries it.

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/call", "Mcp-Name": "build"}},
     "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build",
      "arguments": {}, "_meta": {"progressToken": "a",
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    {"dir": "s2c", "http": {"method": "POST", "status": 200,
     "headers": {"Content-Type": "text/event-stream"}},
     "msg": {"jsonrpc": "2.0", "method": "notifications/progress",
      "params": {"progressToken": "b", "progress": 1}}}
    ```
    (one HAR entry: the `POST` and an event of its SSE answer)

    Use instead:
    ```json
    {"dir": "s2c", "http": {"method": "POST", "status": 200,
     "headers": {"Content-Type": "text/event-stream"}},
     "msg": {"jsonrpc": "2.0", "method": "notifications/progress",
      "params": {"progressToken": "a", "progress": 1}}}
    ```

    ## Reference
    "These notifications MUST relate to the originating client request." —
    docs/specification/2026-07-28/basic/transports/streamable-http.mdx#receiving-messages
    (2026-07-28); for log messages: "the server MUST NOT deliver it on a
    `subscriptions/listen` stream or on any stream other than the one carrying the
    response to the request that set the log level." —
    docs/specification/2026-07-28/server/utilities/logging.mdx#per-request-log-level.
    """
    rows = _har_rows(ctx)
    posted = rows.filter((pl.col("direction") == "c2s") & (pl.col("http_method") == "POST"))
    # the POST's one message, a request: the stream's originating request
    origins = posted.filter((pl.len().over(_EXCHANGE) == 1) & (pl.col("kind") == "request")).select(
        *_EXCHANGE,
        req_id="id",
        req_method="method",
        req_token="progress_token",
        req_text="message",
    )
    notes = (
        rows.filter(
            (pl.col("direction") == "s2c")
            & (pl.col("http_method") == "POST")
            & (pl.col("kind") == "notification")
        )
        .select("ordinal", *_EXCHANGE, "method", "progress_token", "cancel_id")
        .join(origins, on=_EXCHANGE, how="inner", maintain_order="left")
    )
    if notes.is_empty():
        return findings(notes, "")
    subscription = stream_notifications(ctx).select("ordinal", sid=sid_text())
    notes = notes.join(subscription, on="ordinal", how="left", maintain_order="left")
    logging = pl.col("method") == "notifications/message"
    asked = (
        pl.col("req_text").str.contains(f'"{LOG_LEVEL_KEY}"', literal=True).fill_null(False)
        & pl.col("req_text").str.json_path_match(f"$.params._meta['{LOG_LEVEL_KEY}']").is_not_null()
    )
    notes = notes.with_columns(
        asked=pl.when(logging).then(asked).otherwise(pl.lit(True)).fill_null(False)
    )
    progress = (pl.col("method") == "notifications/progress") & pl.col(
        "progress_token"
    ).is_not_null()
    wrong_token = progress & (
        pl.col("req_token").is_null() | (pl.col("progress_token") != pl.col("req_token"))
    )
    cancels = pl.col("cancel_id").is_not_null() & (pl.col("cancel_id") != pl.col("req_id"))
    other_listen = pl.col("sid").is_not_null() & (pl.col("sid") != pl.col("req_id"))
    unasked = logging & ~pl.col("asked")
    stream = fmt("the stream of the {} request id {}", "req_method", "req_id")
    token_of = (
        pl.when(pl.col("req_token").is_null())
        .then(pl.lit("that request carries no progressToken"))
        .otherwise(fmt("that request's is {}", "req_token"))
    )
    problem = (
        pl.when(cancels)
        .then(fmt("notifications/cancelled on {} names request {}", stream, "cancel_id"))
        .when(wrong_token)
        .then(
            fmt(
                "notifications/progress on {} carries progressToken {}, but {}",
                stream,
                "progress_token",
                token_of,
            )
        )
        .when(other_listen)
        .then(
            fmt(
                "{} on {} carries subscriptionId {}, which names another request",
                "method",
                stream,
                "sid",
            )
        )
        .when(unasked)
        .then(
            fmt(
                "notifications/message on {}, which did not ask for logs (no {} in its _meta)",
                stream,
                pl.lit(LOG_LEVEL_KEY),
            )
        )
    )
    bad = notes.with_columns(_problem=problem).filter(pl.col("_problem").is_not_null())
    return findings(
        bad,
        fmt("{}: a notification on a request's stream must relate to that request", "_problem"),
    )
