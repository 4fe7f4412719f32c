"""HT: the Streamable HTTP envelope (headers and status codes around each message).

These rules only look at rows that carry HTTP facts: `http_method`, `http_status` or
`http_headers` (capture records with an `http` member, mcpsnoop HTTP sessions).
A client row with `http_method` or `http_headers` is taken to show the request's
headers as sent, so a header missing from it was not sent. Header names are compared
case-insensitively; values are compared exactly. mcpsnoop records only the MCP
routing headers (`Mcp-*`, `MCP-Protocol-Version`), so rules about `Accept` and
`Content-Type` only judge a missing header when the row also shows other headers.
"""

from __future__ import annotations

import re

import polars as pl

from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import MODERN, findings, rule, since

_NAMED_METHODS = ("tools/call", "resources/read", "prompts/get")
_BASE64 = r"^=\?base64\?(.*)\?=$"


def _header(name: str) -> pl.Expr:
    """The string value of header ``name`` (any case) in ``http_headers``, else null."""
    literal = rf'(?i)"{re.escape(name)}"\s*:\s*("(?:[^"\\]|\\.)*")'
    return pl.col("http_headers").str.extract(literal, 1).str.json_decode(pl.String)


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


def _client_http(ctx: LintContext) -> pl.DataFrame:
    """Client-to-server protocol rows whose HTTP request was captured."""
    return ctx.memo(
        "transport.client_http",
        # all columns, but only the rows of captures that record HTTP (usually few)
        lambda ctx: ctx.messages.filter(
            pl.col("kind").is_in(["request", "notification", "response", "error"])
            & (pl.col("transport") == "http")
            & (pl.col("direction") == "c2s")
            & (pl.col("http_method").is_not_null() | pl.col("http_headers").is_not_null())
        ),
    )


def _server_http(ctx: LintContext) -> pl.DataFrame:
    """Server-to-client rows of any kind that carry an HTTP status or headers."""
    return ctx.memo(
        "transport.server_http",
        lambda ctx: ctx.messages.filter(
            (pl.col("transport") == "http")
            & (pl.col("direction") == "s2c")
            & (pl.col("http_status").is_not_null() | pl.col("http_headers").is_not_null())
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
    rows = _client_http(ctx).filter(
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
    what = pl.coalesce(pl.col("method"), pl.format("{} id {}", "kind", "id"))
    return findings(bad, pl.format("HTTP POST of {} has no MCP-Protocol-Version header", what))


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
        _client_http(ctx)
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
        pl.format(
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
    rows = _client_http(ctx).filter(
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
    return findings(bad, pl.format("HTTP request {} has no {}", "method", missing))


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
    (`resources/read`).

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
    rows = _client_http(ctx).filter(
        pl.col("http_headers").is_not_null() & pl.col("method").is_not_null()
    )
    if rows.is_empty():
        return findings(rows, "")
    rows = rows.with_columns(mcp_method=_header("Mcp-Method"), mcp_name=_header("Mcp-Name"))
    encoded = pl.col("mcp_name").str.extract(_BASE64, 1)
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
    )
    bad = rows.filter(method_differs | name_differs)
    message = (
        pl.when(method_differs)
        .then(
            pl.format(
                'Mcp-Method header "{}" does not match body method "{}"', "mcp_method", "method"
            )
        )
        .otherwise(
            pl.format('Mcp-Name header "{}" does not match body value "{}"', "mcp_name", "target")
        )
    )
    return findings(bad, message)


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
        pl.format(
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
    bad = _client_http(ctx).filter(
        bodyless & status.is_not_null() & (status >= 200) & (status < 300) & (status != 202)
    )
    what = pl.coalesce(pl.col("method"), pl.format("{} id {}", "kind", "id"))
    return findings(
        bad, pl.format("HTTP POST of {} was answered {}, not 202 Accepted", what, status)
    )


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
    rows = _client_http(ctx).filter(pl.col("http_headers").is_not_null())
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
            pl.format(
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
    rows = _client_http(ctx).filter(pl.col("http_headers").is_not_null())
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
        .otherwise(
            pl.format('HTTP POST Content-Type is "{}", not application/json', "content_type")
        )
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
        pl.format(
            'HTTP {} answer to a request has Content-Type "{}", not application/json'
            " or text/event-stream",
            "http_status",
            "content_type",
        ),
    )
