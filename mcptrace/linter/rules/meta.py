"""MT: ``_meta`` (2026 per-request protocol fields, key names, trace context) and
version negotiation."""

from __future__ import annotations

import re
from collections.abc import Callable

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.linter.context import LintContext, settle
from mcptrace.linter.jsontext import content, json_tokens, path, unquote
from mcptrace.linter.rule import MODERN, findings, line_of, rule, since
from mcptrace.linter.rules.envelope import is_notification_method
from mcptrace.message_text import json_paths
from mcptrace.protocol import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    INVALID_PARAMS,
    LATEST_REVISION,
    LEGACY_REVISIONS,
    LOG_LEVEL_KEY,
    METHOD_NOT_FOUND,
    METHODS,
    PROTOCOL_VERSION_KEY,
    REVISIONS,
    SERVER_INFO_KEY,
    is_valid_extension_id,
    is_valid_meta_key,
    wire_methods_in,
)


def _meta_key(key: str, where: str = "params") -> str:
    return f'$.{where}._meta["{key}"]'


# Methods a 2026 client never sends with modern `_meta`: the legacy handshake and
# other methods the revision removed (a legacy fallback; other rules judge them),
# and the embedded input requests that only travel inside InputRequiredResult.
_LEGACY_ONLY = frozenset().union(*(wire_methods_in(r) for r in LEGACY_REVISIONS)) - wire_methods_in(
    "2026-07-28"
)
_EMBEDDED = frozenset(m for m, spec in METHODS["2026-07-28"].items() if spec.embedded)
_NOT_MODERN_CLIENT_REQUESTS = sorted(_LEGACY_ONLY | _EMBEDDED)

_LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def _modern_client_requests(ctx: LintContext) -> pl.DataFrame:
    """Requests of 2026 sessions that are client requests needing the 2026 `_meta`.

    A notification that wrongly carries an id is loaded as a request; it is JR005's
    business, not a request missing its `_meta`.
    """
    return ctx.memo("meta.modern_client_requests", _build_modern_client_requests)


def _build_modern_client_requests(ctx: LintContext) -> pl.DataFrame:
    columns = (
        "ordinal",
        "session",
        "method",
        "target",
        "protocol_version",
        "rare",
        "message",
    )
    # the typed columns first: the method (text) is tested only on the rows they keep
    return (
        content(ctx.part("requests", *columns, "modern", "direction", "parse_error"))
        .filter(pl.col("modern"), pl.col("direction") != "s2c")
        .filter(~pl.col("method").is_in(_NOT_MODERN_CLIENT_REQUESTS), ~is_notification_method())
        .select(columns)
    )


def _marked_requests(ctx: LintContext) -> pl.DataFrame:
    """:func:`_modern_client_requests` plus ``_caps_object`` (the text has the
    clientCapabilities key followed by an object) and ``_client_info`` (the text names
    clientInfo): the cheap tests that clear most requests of MT001 and MT004."""
    return ctx.memo("meta.marked_requests", _build_marked_requests)


def _build_marked_requests(ctx: LintContext) -> pl.DataFrame:
    requests = _modern_client_requests(ctx)
    # These texts lie scattered among the other messages', and reading them there is
    # what a search costs: copied side by side first (which costs less than one search in
    # place), each search of the copy costs a fifth of one in place. Stripping a leading
    # \x01 writes each text anew at two thirds of the cost of adding "", and cannot change
    # a match: neither key holds that byte.
    copy = requests.select(pl.col("message").str.strip_prefix("\x01"))
    # Most texts have both, in this order (compact `_meta`: capabilities, then clientInfo):
    # one search settles both tests there; only the other texts are searched for each key.
    caps_compact = re.escape(f'"{CLIENT_CAPABILITIES_KEY}":{{')
    usual = copy.select(
        pl.col("message").str.contains(rf"{caps_compact}(?s:.*){re.escape(CLIENT_INFO_KEY)}")
    ).to_series()
    caps_object = rf'"{re.escape(CLIENT_CAPABILITIES_KEY)}"\s*:\s*\{{'
    return requests.with_columns(
        _caps_object=settle(copy, pl.lit(usual), pl.col("message").str.contains(caps_object)),
        _client_info=settle(
            copy, pl.lit(usual), pl.col("message").str.contains(CLIENT_INFO_KEY, literal=True)
        ),
    )


def _required_meta_problems(ctx: LintContext) -> pl.DataFrame:
    """Modern client requests lacking a required `_meta` field, with ``problem``."""
    return ctx.memo("meta.required_problems", _build_required_meta_problems)


def _build_required_meta_problems(ctx: LintContext) -> pl.DataFrame:
    # cheap pass first: a string protocol version in `_meta` (loader column) and a
    # capabilities object somewhere; only the other requests are parsed
    suspects = (
        _marked_requests(ctx)
        .filter(pl.col("protocol_version").is_null() | ~pl.col("_caps_object"))
        .drop("_caps_object", "_client_info")
    )
    reqs = suspects.with_columns(
        _meta=path("$.params._meta"),
        _pv=path(_meta_key(PROTOCOL_VERSION_KEY)),
        _caps=path(_meta_key(CLIENT_CAPABILITIES_KEY)),
    )
    pv, caps = PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY
    parts = pl.concat_list(
        pl.when(pl.col("_pv").is_null()).then(pl.lit(f"lacks {pv}")),
        pl.when(pl.col("_pv").is_not_null() & pl.col("protocol_version").is_null()).then(
            pl.lit(f"has a non-string {pv}")
        ),
        pl.when(pl.col("_caps").is_null()).then(pl.lit(f"lacks {caps}")),
        pl.when(pl.col("_caps").is_not_null() & ~pl.col("_caps").str.starts_with("{")).then(
            pl.lit(f"has a non-object {caps}")
        ),
    ).list.drop_nulls()
    problem = (
        pl.when(pl.col("_meta").is_null())
        .then(pl.lit(f"has no params._meta (it needs {pv} and {caps})"))
        .otherwise(parts.list.join(" and "))
    )
    return reqs.with_columns(problem=problem).filter(pl.col("problem") != "")


# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------


@rule(
    code="MT001",
    name="request-meta-missing-required-field",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def request_meta_missing_required_field(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 client requests whose `params._meta` lacks
    `io.modelcontextprotocol/protocolVersion` or `io.modelcontextprotocol/clientCapabilities`
    (or carries them with the wrong JSON type).

    ## Why is this bad?
    A 2026 server keeps no connection state: each request must say which protocol
    version it speaks and which client capabilities apply to it. Without them the
    server cannot process the request and must reject it with -32602. Even
    `tools/list`, which has no other parameters, needs `params._meta`.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/list",
      "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/list",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    ```

    ## Reference
    "Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`;
    fields marked as required MUST be included on every request." —
    docs/specification/2026-07-28/basic/index.mdx#meta (2026-07-28). Schema:
    `RequestParams`, `RequestMetaObject`.
    """
    bad = _required_meta_problems(ctx)
    return findings(bad, fmt("request {} {}", "method", "problem"))


@rule(
    code="MT002",
    name="malformed-request-not-rejected",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def malformed_request_not_rejected(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags the server's response to a 2026 request that lacks a required `_meta` field
    when the response is a success result or an error other than -32602.

    ## Why is this bad?
    A request without its protocol version or client capabilities is malformed. A
    server that still serves it is guessing the version and capabilities (often from
    earlier requests, which the stateless 2026 protocol forbids), and a client cannot
    tell its mistake from any other failure unless the server answers -32602.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public"}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "error": {"code": -32602, "message": "Missing io.modelcontextprotocol/protocolVersion"}
    }
    ```

    ## Reference
    "A request missing any required field is malformed; the server MUST reject it with
    JSON-RPC error code `-32602` (Invalid params)." —
    docs/specification/2026-07-28/basic/index.mdx#meta (2026-07-28).
    """
    bad = _required_meta_problems(ctx).select(
        request_ordinal="ordinal", method="method", problem="problem"
    )
    if bad.is_empty():
        return findings(bad, "")
    answered = ctx.call_lookup(bad, "request_ordinal", ordinal="response_ordinal").filter(
        pl.col("ordinal").is_not_null()
    )
    out = ctx.lookup(answered, "ordinal", inner=True, kind="kind", error_code="error_code").filter(
        (pl.col("kind") == "response")
        | ((pl.col("kind") == "error") & (pl.col("error_code").fill_null(0) != INVALID_PARAMS))
    )
    how = (
        pl.when(pl.col("kind") == "response")
        .then(pl.lit("a success result"))
        .otherwise(
            fmt(
                "error {}",
                pl.col("error_code").cast(pl.String).fill_null("without an integer code"),
            )
        )
    )
    msg = fmt(
        "answered the {} request at {}, which {}, with {} instead of error -32602",
        "method",
        line_of("request_ordinal"),
        "problem",
        how,
    )
    return findings(out, msg)


@rule(
    code="MT003",
    name="unknown-protocol-version",
    severity="info",
    revisions=MODERN,
    scope="message",
)
def unknown_protocol_version(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 requests whose `_meta` `io.modelcontextprotocol/protocolVersion` is not a
    published MCP revision.

    ## Why is this bad?
    It is not forbidden to ask for a version the server may not know (the server then
    answers -32022 with the versions it supports), but a version string that no
    revision defines usually means a typo, a date format mistake or a client built on
    a draft. Published revisions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25,
    2026-07-28.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/list",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-7-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/list",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    ```

    ## Reference
    "Every request declares the protocol version it is using in its `_meta` field." —
    docs/specification/2026-07-28/basic/versioning.mdx#protocol-version-negotiation
    (2026-07-28).
    """
    bad = _modern_client_requests(ctx).filter(
        pl.col("protocol_version").is_not_null()
        & ~pl.col("protocol_version").is_in(list(REVISIONS))
    )
    return findings(
        bad,
        fmt(
            'request {} declares protocol version "{}", which is not a published MCP revision',
            "method",
            "protocol_version",
        ),
    )


@rule(
    code="MT004",
    name="request-missing-client-info",
    severity="warning",
    revisions=MODERN,
    scope="message",
)
def request_missing_client_info(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 client requests whose `_meta` has no `io.modelcontextprotocol/clientInfo`.
    Requests with no `_meta` at all are left to MT001.

    ## Why is this bad?
    With no handshake, `clientInfo` on each request is the only way a server (and its
    logs) can tell which client software sent it; debugging and support depend on it.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/list",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/list",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": {"name": "my-client", "version": "1.2.0"}
        }
      }
    }
    ```

    ## Reference
    "Clients SHOULD include `io.modelcontextprotocol/clientInfo` on every request unless
    specifically configured not to do so." — docs/specification/2026-07-28/basic/index.mdx#meta
    (2026-07-28).
    """
    suspects = _marked_requests(ctx).filter(~pl.col("_client_info"))
    bad = suspects.filter(
        path("$.params._meta").is_not_null() & path(_meta_key(CLIENT_INFO_KEY)).is_null()
    )
    return findings(
        bad, fmt("request {} carries no {} in _meta", "method", pl.lit(CLIENT_INFO_KEY))
    )


@rule(
    code="MT005",
    name="result-missing-server-info",
    severity="warning",
    revisions=MODERN,
    scope="session",
)
def result_missing_server_info(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 results without `io.modelcontextprotocol/serverInfo` in `result._meta`,
    in sessions where the server does include it on other results.

    A server that never sends `serverInfo` may be configured not to (the
    specification's own response examples omit it): MT015 reports that once per session,
    as information; this rule flags only inconsistent servers.

    ## Why is this bad?
    Without a handshake, `serverInfo` on each result is how a client (and its logs)
    identifies the server software behind a response, for instance behind a load
    balancer. A server that sends it on some results but not others leaves gaps
    exactly where identification is needed.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {
        "resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "weather", "version": "3.0.0"}}
      }
    }
    {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "content": []}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 2,
      "result": {
        "resultType": "complete", "content": [],
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "weather", "version": "3.0.0"}}
      }
    }
    ```

    ## Reference
    "Servers SHOULD include the following `io.modelcontextprotocol/*` field in every
    result's `_meta`, unless specifically configured not to do so, to identify themselves
    without relying on any prior connection state:" —
    docs/specification/2026-07-28/basic/index.mdx#meta (2026-07-28). Schema:
    `ResultMetaObject`.
    """
    results = _server_info_results(ctx)
    # the few results without it first: only their sessions are looked for in the others
    # (a window over every result's session costs twenty times more; nulls are equal, as
    # in a window)
    lacking = results.filter(~pl.col("_has"))
    in_lacking = pl.col("session").is_in(lacking["session"].implode(), nulls_equal=True)
    sending = results.filter(pl.col("_has") & in_lacking)
    bad = lacking.filter(pl.col("session").is_in(sending["session"].implode(), nulls_equal=True))
    return findings(
        bad,
        pl.lit(
            f"result carries no {SERVER_INFO_KEY} in _meta although other results of this server do"
        ),
    )


def _server_info_results(ctx: LintContext) -> pl.DataFrame:
    """ordinal, session and ``_has`` (the text names serverInfo) of the readable results
    servers sent in sessions judged 2026-07-28, in capture order (MT005, MT015)."""
    return ctx.memo("meta.server_info_results", _build_server_info_results)


def _build_server_info_results(ctx: LintContext) -> pl.DataFrame:
    columns = ("ordinal", "session", "modern", "kind", "direction", "parse_error", "message")
    results = ctx.part("responses", *columns).filter(
        pl.col("modern"),
        pl.col("kind") == "response",
        pl.col("direction") != "c2s",
        pl.col("parse_error").is_null(),
    )
    has = settle(
        results,
        pl.col("message").str.ends_with(_usual_ending(ctx, results)),
        pl.col("message").str.contains(SERVER_INFO_KEY, literal=True),
    )
    return results.select("ordinal", "session", _has=has)


def _usual_ending(ctx: LintContext, results: pl.DataFrame) -> pl.Expr:
    """By row of ``results``: the end of its session's first result from the last
    serverInfo key on. A server ends its results alike, `_meta` last: testing the last
    bytes of a text settles most results, where a search for the key reads it all. (The
    first rows are picked and their endings gathered by session code: a group_by and a
    join on session cost a quarter of the whole memo.)"""
    key = f'"{SERVER_INFO_KEY}"'
    first = results.filter(pl.col("session").is_first_distinct())
    ending = pl.lit(key) + pl.col("message").str.split(key, literal=True).list.last()
    return ctx.of_session(first.select("session", _ending=ending), "_ending")


@rule(
    code="MT015",
    name="server-info-never-sent",
    severity="info",
    revisions=MODERN,
    scope="session",
)
def server_info_never_sent(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports a 2026 session in which the server identified itself on none of its results:
    no result carries `io.modelcontextprotocol/serverInfo` in `result._meta`.

    One finding per session, on its first result, with the number of results. It is
    information, not a warning: the specification lets a server be configured not to
    send `serverInfo`, and a capture cannot show that configuration. A server that sends
    it on some results but not others is MT005's finding.

    ## Why is this bad?
    Without a handshake there is no `initialize` result to name the server: `serverInfo`
    on each result is how a client, its logs and a post-mortem tell which server software
    (and which version) answered, for instance behind a load balancer. Where no result
    carries it, every answer of the session is anonymous.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": [],
     "ttlMs": 0, "cacheScope": "public"}}
    {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "content": []}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": [],
     "ttlMs": 0, "cacheScope": "public",
     "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "weather", "version": "3.0.0"}}}}
    ```

    ## Reference
    "Servers SHOULD include the following `io.modelcontextprotocol/*` field in every
    result's `_meta`, unless specifically configured not to do so, to identify themselves
    without relying on any prior connection state:" —
    docs/specification/2026-07-28/basic/index.mdx#meta (2026-07-28). Schema:
    `ResultMetaObject`.
    """
    results = _server_info_results(ctx)
    silent = (
        results.group_by("session")
        .agg(
            pl.col("ordinal").min(),
            pl.len().alias("results"),
            pl.col("_has").any().alias("_any"),
        )
        .filter(~pl.col("_any"))
    )
    return findings(
        silent,
        fmt(
            "none of the {} results of this session carries {} in _meta: the server never "
            "identifies itself (it SHOULD, unless configured not to)",
            "results",
            pl.lit(SERVER_INFO_KEY),
        ),
    )


@rule(
    code="MT006",
    name="unsupported-version-error-malformed",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def unsupported_version_error_malformed(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags -32022 (UnsupportedProtocolVersion) errors whose `error.data` lacks the
    `supported` list of version strings or the `requested` version string, or lists the
    requested version as supported.

    ## Why is this bad?
    The client picks the version to retry with from `data.supported`; without it the
    client can only give up or guess. An error that names the requested version as
    supported contradicts itself.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "error": {"code": -32022, "message": "Unsupported protocol version"}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"}
      }
    }
    ```

    ## Reference
    "If the server does not implement the requested version (...), it MUST respond with
    an `UnsupportedProtocolVersionError` listing the versions it does support:" —
    docs/specification/2026-07-28/basic/versioning.mdx#protocol-version-negotiation
    (2026-07-28). Schema: `UnsupportedProtocolVersionError`.
    """
    string_list = r'^\[(?:"(?:[^"\\]|\\.)*"(?:,"(?:[^"\\]|\\.)*")*)?\]$'
    errs = (
        content(
            ctx.messages.select("ordinal", "modern", "kind", "error_code", "parse_error", "message")
        )
        .filter(pl.col("modern"), pl.col("kind") == "error", pl.col("error_code") == -32022)
        .with_columns(
            _data=path("$.error.data"),
            _sup=path("$.error.data.supported"),
            _req=path("$.error.data.requested"),
        )
        .with_columns(_req_is_str=pl.col("_data").str.contains(r'"requested":"'))
    )
    parts = pl.concat_list(
        pl.when(pl.col("_sup").is_null()).then(pl.lit("has no data.supported")),
        pl.when(pl.col("_sup").is_not_null() & ~pl.col("_sup").str.contains(string_list)).then(
            pl.lit("has a data.supported that is not a list of strings")
        ),
        pl.when(pl.col("_req").is_null()).then(pl.lit("has no data.requested")),
        pl.when(pl.col("_req").is_not_null() & ~pl.col("_req_is_str")).then(
            pl.lit("has a data.requested that is not a string")
        ),
        pl.when(
            pl.col("_req_is_str")
            & pl.col("_sup").str.contains(fmt('"{}"', pl.col("_req")), literal=True)
        ).then(fmt('lists the requested version "{}" as supported', pl.col("_req"))),
    ).list.drop_nulls()
    problem = (
        pl.when(pl.col("_data").is_null())
        .then(pl.lit("has no data (it needs data.supported and data.requested)"))
        .otherwise(parts.list.join(" and "))
    )
    bad = errs.with_columns(problem=problem).filter(pl.col("problem") != "")
    return findings(bad, fmt("UnsupportedProtocolVersion error {}", "problem"))


@rule(
    code="MT007",
    name="version-retry-not-from-supported",
    severity="warning",
    revisions=MODERN,
    scope="session",
)
def version_retry_not_from_supported(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a client retry after a -32022 error that uses a protocol version the error did not
    list as supported.

    The retry is the client's next request of the same method and target after the
    UnsupportedProtocolVersion error; its `_meta` protocol version must be one of
    `data.supported`.

    ## Why is this bad?
    The server has just said which versions it accepts; a retry with any other version
    (often the same rejected one) can only fail again, and a client looping on it
    floods the server.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2027-01-01"}
      }
    }
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/list",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2027-01-01",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/list",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    ```

    ## Reference
    "The client SHOULD select a mutually supported version from the `supported` list and
    retry the request, or surface an error to the user if no compatible version exists." —
    docs/specification/2026-07-28/basic/versioning.mdx#protocol-version-negotiation
    (2026-07-28).
    """
    errs = (
        content(
            ctx.part(
                "responses",
                "ordinal",
                "session",
                "modern",
                "kind",
                "error_code",
                "request_method",
                "request_ordinal",
                "parse_error",
                "message",
            )
        )
        .filter(pl.col("modern"), pl.col("kind") == "error", pl.col("error_code") == -32022)
        .filter(pl.col("request_method").is_not_null())
        .with_columns(_sup=path("$.error.data.supported"))
        .filter(pl.col("_sup").str.starts_with("["))
        .pipe(ctx.lookup, "request_ordinal", _target="target")
        .select(
            "session",
            "_sup",
            error_ordinal="ordinal",
            method="request_method",
            _tkey=pl.col("_target").fill_null(""),
        )
        .sort("error_ordinal")
    )
    if errs.is_empty():
        return findings(errs, "")
    reqs = (
        _modern_client_requests(ctx)
        # only the sessions with such an error (an integer test) can have a retry
        .filter(pl.col("session").is_in(errs["session"].implode()))
        .select(
            "ordinal", "session", "method", "protocol_version", _tkey=pl.col("target").fill_null("")
        )
        .sort("ordinal")
    )
    retry = errs.join_asof(
        reqs,
        left_on="error_ordinal",
        right_on="ordinal",
        by=["session", "method", "_tkey"],
        strategy="forward",
        check_sortedness=False,
    )
    bad = retry.filter(
        pl.col("ordinal").is_not_null()
        & pl.col("protocol_version").is_not_null()
        & ~pl.col("_sup").str.contains(fmt('"{}"', pl.col("protocol_version")), literal=True)
    )
    return findings(
        bad,
        fmt(
            'request retried with protocol version "{}", which the -32022 error at {} '
            "did not list (supported: {})",
            "protocol_version",
            line_of("error_ordinal"),
            "_sup",
        ),
    )


@rule(
    code="MT008",
    name="server-discover-not-implemented",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def server_discover_not_implemented(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a -32601 (method not found) answer to `server/discover` from a server that
    otherwise answers in the 2026-07-28 style (some result of the session carries
    `resultType`).

    A legacy server legitimately answers -32601 to a dual-era client's probe; that is
    how the client learns to fall back to `initialize`, so servers showing no 2026
    result are not flagged.

    ## Why is this bad?
    `server/discover` is how clients learn a 2026 server's versions and capabilities; a
    modern server that lacks it looks like a legacy server to probing clients, which then
    fall back to the `initialize` handshake it may not support.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": "d1", "method": "server/discover",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {"jsonrpc": "2.0", "id": "d1", "error": {"code": -32601, "message": "Method not found"}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": "d1",
      "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}}, "ttlMs": 3600000, "cacheScope": "public"
      }
    }
    ```

    ## Reference
    "Servers MUST implement `server/discover`." —
    docs/specification/2026-07-28/basic/versioning.mdx#protocol-version-negotiation
    (2026-07-28).
    """
    # the few -32601 answers to server/discover first: the modern servers are looked for
    # only in their sessions
    bad = (
        ctx.part(
            "responses", "ordinal", "session", "modern", "kind", "error_code", "request_method"
        )
        .filter(
            pl.col("modern")
            & (pl.col("kind") == "error")
            & (pl.col("error_code") == METHOD_NOT_FOUND)
        )
        .filter(pl.col("request_method") == "server/discover")
    )
    modern_server = (
        ctx.part("responses", "session", "modern", "result_type")
        .filter(pl.col("modern") & pl.col("session").is_in(bad["session"].implode()))
        .filter(pl.col("result_type").is_not_null())
        .select("session")
        .unique()
    )
    bad = bad.join(modern_server, on="session", how="semi")
    return findings(bad, "server answered server/discover with -32601 (method not found)")


@rule(
    code="MT009",
    name="invalid-log-level-accepted",
    severity="warning",
    revisions=MODERN,
    scope="pairing",
)
def invalid_log_level_accepted(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a success result to a 2026 request whose `_meta`
    `io.modelcontextprotocol/logLevel` is not one of the eight log levels.

    ## Why is this bad?
    A server that silently accepts `"verbose"` or `"WARN"` leaves the client believing
    it set a log level when nothing will be logged as it expects; rejecting the request
    with -32602 makes the client's mistake visible.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 4, "method": "tools/call",
      "params": {
        "name": "fetch",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/logLevel": "verbose"
        }
      }
    }
    {"jsonrpc": "2.0", "id": 4, "result": {"resultType": "complete", "content": []}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Invalid log level: verbose"}}
    ```

    ## Reference
    "If the `io.modelcontextprotocol/logLevel` value carried in a request's `_meta` is not
    a recognized log level, the server SHOULD reject that request with a standard JSON-RPC
    error:" — docs/specification/2026-07-28/server/utilities/logging.mdx#error-handling
    (2026-07-28). Levels: schema `LoggingLevel`.
    """
    reqs = (
        _modern_client_requests(ctx)
        # only texts with a rare marker (see LintContext.part) can have this one
        .filter(pl.col("rare"))
        .filter(pl.col("message").str.contains(LOG_LEVEL_KEY, literal=True))
        .with_columns(_level=path(_meta_key(LOG_LEVEL_KEY)))
        .filter(pl.col("_level").is_not_null() & ~pl.col("_level").is_in(_LOG_LEVELS))
        .select(request_ordinal="ordinal", _level="_level")
    )
    if reqs.is_empty():  # the usual case: the responses are not read
        return findings(reqs, "")
    bad = (
        ctx.part("responses", "ordinal", "kind", "request_ordinal")
        .filter(pl.col("kind") == "response")
        .join(reqs, on="request_ordinal")
    )
    return findings(
        bad,
        fmt(
            'server accepted the request at {} although its logLevel "{}" is not a log level',
            line_of("request_ordinal"),
            "_level",
        ),
    )


def _top_level_keys(frame: pl.DataFrame, text: str) -> pl.DataFrame:
    """ordinal, key (unquoted) for the members of the JSON object in column ``text``."""
    toks = json_tokens(frame, text)
    return toks.filter(pl.col("is_key") & (pl.col("depth") == 1)).select(
        "ordinal", "tok", key=unquote(pl.col("tok"))
    )


def _invalid_keys(keys: pl.DataFrame, valid: Callable[[str], bool]) -> pl.DataFrame:
    """Rows of ``keys`` (with a ``tok`` column) whose decoded key fails ``valid``."""
    distinct = keys.select("tok").unique()
    verdict = []
    for tok in distinct["tok"].to_list():  # distinct key names, not rows
        try:
            name = _json.loads(tok)
        except _json.JSONDecodeError:
            name = tok
        verdict.append(isinstance(name, str) and valid(name))
    table = distinct.with_columns(_ok=pl.Series(verdict, dtype=pl.Boolean))
    return keys.join(table, on="tok").filter(~pl.col("_ok"))


def _modern_rare(ctx: LintContext) -> pl.DataFrame:
    """ordinal, message and ``_copy`` (the same texts, side by side: search this one) of
    the readable 2026 messages whose text has a rare marker (see LintContext.part): only
    they can have the keys MT010 and MT012 look for."""
    return ctx.memo("meta.modern_rare", _build_modern_rare)


def _build_modern_rare(ctx: LintContext) -> pl.DataFrame:
    rows = content(ctx.part("protocol", "ordinal", "modern", "parse_error", "rare", "message"))
    # As in _build_marked_requests: copied once (a leading \x01, which no pattern
    # searched for matches, stripped), each rule's search of the copy costs a fifth of
    # one in place. The JSON paths read the texts themselves.
    return rows.filter(pl.col("modern") & pl.col("rare")).select(
        "ordinal", "message", _copy=pl.col("message").str.strip_prefix("\x01")
    )


@rule(code="MT010", name="extension-id-format", severity="error", revisions=MODERN, scope="message")
def extension_id_format(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `capabilities.extensions` keys that are not prefixed `_meta`-style names, such as
    `tasks` for `io.modelcontextprotocol/tasks`.

    Both the client's map (in `_meta` `io.modelcontextprotocol/clientCapabilities`) and the
    server's (in the `server/discover` result) are checked.

    ## Why is this bad?
    Extension identifiers are namespaced so that independent vendors cannot collide; a
    bare name cannot be matched by the peer against the extensions it knows, so the
    extension is silently not negotiated.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"extensions": {"tasks": {}}}, "ttlMs": 0, "cacheScope": "public"
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"],
        "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}, "ttlMs": 0,
        "cacheScope": "public"
      }
    }
    ```

    ## Reference
    "Extension identifiers MUST follow the `_meta` key naming rules, with a mandatory
    prefix." — docs/specification/2026-07-28/basic/versioning.mdx#extension-negotiation
    (2026-07-28). Schema: `ClientCapabilities.extensions`, `ServerCapabilities.extensions`.
    """
    rows = (
        _modern_rare(ctx)
        .filter(pl.col("_copy").str.contains('"extensions"', literal=True))
        .with_columns(
            _ext=pl.coalesce(
                path(f'$.params._meta["{CLIENT_CAPABILITIES_KEY}"].extensions'),
                path("$.result.capabilities.extensions"),
            )
        )
        .filter(pl.col("_ext").str.starts_with("{"))
    )
    if rows.is_empty():
        return findings(rows, "")
    bad = _invalid_keys(_top_level_keys(rows, "_ext"), is_valid_extension_id)
    per_msg = bad.group_by("ordinal").agg(
        pl.col("key").unique(maintain_order=True).str.join('", "')
    )
    return findings(
        per_msg,
        fmt(
            'extension identifier "{}" lacks a valid prefix/name form such as io.example/name',
            "key",
        ),
    )


# A string followed by `:` whose text is NOT a valid `_meta` key name (and is not
# `_meta`): the complement of the key grammar (see mcptrace.protocol.meta), written as
# the ways a key can fail it. Used only to pick messages worth tokenizing.
_BAD_KEY_TEXT = "|".join(
    [
        r'[^"]*[^A-Za-z0-9._/\-"][^"]*',  # a character the grammar never allows
        r'[^"]*/[^"]*/[^"]*',  # two slashes
        # name without prefix starting with `.`, `-` or `_` (but not `_meta` itself)
        r'(?:[.\-][^"/]*|_(?:|[^m"/][^"/]*|m(?:|[^e"/][^"/]*|e(?:|[^t"/][^"/]*'
        r'|t(?:|[^a"/][^"/]*|a[^"/]+)))))',
        r'[^"]*[._\-]',  # name ending in `.`, `_` or `-`
        r'[^"]*/[._\-][^"]*',  # name after the prefix starting with `.`, `_` or `-`
        r'[^"/]*_[^"/]*/[^"]*',  # `_` in the prefix
        r'(?:[0-9._\-][^"/]*)?/[^"]*',  # empty prefix, or prefix not starting with a letter
        r'[^"/]*\.(?:[^A-Za-z"/][^"/]*)?/[^"]*',  # a prefix label not starting with a letter
        r'[^"/]*-(?:\.[^"/]*)?/[^"]*',  # a prefix label ending in `-`
    ]
)
_BAD_KEY = rf'"(?:{_BAD_KEY_TEXT})"\s*:'

# MT011's first pass: the same question asked only of the direct keys of each `_meta`
# object, so that the regex engine stops reading at the end of the object instead of
# going on to the end of the text (the literal `"_meta"` takes it to the next object).
# A string, a scalar character or a container up to three levels deep is skipped
# whole; a deeper container, a key with an escape (which `_BAD_KEY` may judge by a
# fragment) or a `_meta` key (invalid, though `_BAD_KEY` spares it) makes the text a
# candidate anyway. It keeps every text with an invalid `_meta` key, so testing its
# candidates with `_BAD_KEY` keeps exactly the texts that test alone kept.
_STRING = r'"(?:[^"\\]|\\.)*"'
_FLAT = r'[^{}\[\]"]'
_OPEN, _CLOSE = r"[{\[]", r"[}\]]"
_AT_3 = rf"(?:{_FLAT}|{_STRING})"
_AT_2 = rf"(?:{_FLAT}|{_STRING}|{_OPEN}{_AT_3}*{_CLOSE})"
_AT_1 = rf"(?:{_FLAT}|{_STRING}|{_OPEN}{_AT_2}*{_CLOSE})"
_ESCAPED_KEY = r'"(?:[^"\\]|\\.)*\\'
_TOO_DEEP = rf"{_OPEN}{_AT_2}*?{_OPEN}{_AT_3}*{_OPEN}"
_META_BAD_KEY = (
    rf'(?s)"_meta"\s*:\s*\{{{_AT_1}*?(?:{_BAD_KEY}|"_meta"\s*:|{_ESCAPED_KEY}|{_TOO_DEEP})'
)


def _meta_keys_grammar_ok(key: str) -> bool:
    return is_valid_meta_key(key, LATEST_REVISION)


@rule(
    code="MT011",
    name="meta-key-format",
    severity="error",
    revisions=since("2025-06-18"),
    scope="message",
)
def meta_key_format(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `_meta` keys whose name breaks the key grammar of 2025-06-18 and later.

    A key is an optional prefix of dot-separated labels ending in `/`, then a name that
    starts and ends with a letter or digit. Every `_meta` object of a message is checked:
    params, results, tools, resources, content blocks.

    ## Why is this bad?
    The grammar is what keeps vendor keys (`com.example/trace`) apart from keys MCP
    reserves (`io.modelcontextprotocol/...`); keys such as `my key`, `-flag` or
    `example.com:id` cannot be classified and may be rejected by strict peers.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "x", "_meta": {"-bad key-": 1}}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {"name": "x", "_meta": {"com.example/bad-key": 1}}
    }
    ```

    ## Reference
    "Key name format: valid `_meta` key names have two segments: an optional prefix, and a
    name." — docs/specification/2026-07-28/basic/index.mdx#meta (2025-06-18 and later;
    `#_meta` under "General fields" in 2025-06-18).
    """
    # Cheap prefilter: from the first `_meta` on, some string followed by `:` is not a
    # valid key name (or is `_meta`'s own key); only those few messages are tokenized.
    # One regex pass does both: `"_meta"` and, somewhere after it, such a key. The
    # first pass, which reads only the `_meta` objects, leaves it few texts to read.
    # (Which rows apply is a question about their session's revision: answered once per
    # session and gathered by code, not asked of a million revision texts; when every
    # session is judged, as in most captures, no row is tested.)
    judged = ctx.session_revisions.select(
        "session",
        _judged=pl.col("revision").is_in(list(since("2025-06-18")))
        | (pl.col("revision") >= "2026-07-28").fill_null(False),
    )
    rows = content(ctx.part("protocol", "ordinal", "session", "parse_error", "message"))
    if not judged["_judged"].fill_null(False).all() or rows["session"].has_nulls():
        rows = rows.filter(ctx.of_session(judged, "_judged"))
    rows = rows.filter(pl.col("message").str.contains(_META_BAD_KEY))
    rows = rows.filter(pl.col("message").str.contains(r'(?s)"_meta".*?' + _BAD_KEY))
    if rows.is_empty():  # the usual case: every key is well formed
        return findings(rows, "")
    toks = json_tokens(rows, "message")
    # the key that owns each object: `"_meta"` `:` `{`
    opener = pl.col("tok").is_in(["{", "["])
    owner_is_meta = (
        (pl.col("tok") == "{")
        & (pl.col("tok").shift(2).over("row") == '"_meta"')
        & (pl.col("tok").shift(1).over("row") == ":")
    )
    toks = toks.with_columns(
        _lvl=pl.when(opener).then(pl.col("depth") + 1).otherwise(pl.col("depth")),
        _in_meta=pl.when(opener).then(owner_is_meta),
    ).with_columns(_in_meta=pl.col("_in_meta").forward_fill().over("row", "_lvl"))
    keys = toks.filter(pl.col("is_key") & pl.col("_in_meta").fill_null(False)).select(
        "ordinal", "tok", key=unquote(pl.col("tok"))
    )
    bad = _invalid_keys(keys, _meta_keys_grammar_ok)
    per_msg = bad.group_by("ordinal").agg(
        pl.col("key").unique(maintain_order=True).str.join('", "')
    )
    return findings(per_msg, fmt('_meta key not in the key name format: "{}"', "key"))


# W3C Trace Context level 1: version-traceid-parentid-flags, lowercase hex; version ff is
# invalid, all-zero ids are invalid; versions above 00 may append fields.
_TRACEPARENT = r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-[^\s]*)?$"
_TS_KEY = r"(?:[a-z0-9][_0-9a-z*/-]{0,255}|[a-z0-9][_0-9a-z*/-]{0,240}@[a-z][_0-9a-z*/-]{0,13})"
_TS_VALUE = r"[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]"
_TS_MEMBER = rf"(?:[ \t]*{_TS_KEY}={_TS_VALUE}[ \t]*|[ \t]*)"
_TRACESTATE = rf"^{_TS_MEMBER}(?:,{_TS_MEMBER}){{0,31}}$"
# W3C Baggage: comma-separated `key=value` members, each with optional `;property`
# parts; keys are RFC 9110 tokens, values baggage-octets (no space, `"`, `,`, `;`, `\`)
_BG_KEY = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_BG_VALUE = r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*"
_BG_OWS = r"[ \t]*"
_BG_PROPERTY = rf"{_BG_KEY}(?:{_BG_OWS}={_BG_OWS}{_BG_VALUE})?"
_BG_MEMBER = rf"{_BG_KEY}{_BG_OWS}={_BG_OWS}{_BG_VALUE}(?:{_BG_OWS};{_BG_OWS}{_BG_PROPERTY})*"
_BAGGAGE = rf"^{_BG_OWS}{_BG_MEMBER}(?:{_BG_OWS},{_BG_OWS}{_BG_MEMBER})*{_BG_OWS}$"


@rule(
    code="MT012", name="trace-context-format", severity="error", revisions=MODERN, scope="message"
)
def trace_context_format(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `traceparent`, `tracestate` and `baggage` values in `_meta` that do not follow the
    W3C Trace Context and Baggage formats.

    `traceparent` is `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, lowercase, with
    ids not all zero; `tracestate` is up to 32 comma-separated `key=value` members; `baggage`
    is comma-separated `key=value` members (keys are tokens, values have no spaces, quotes,
    commas, semicolons or backslashes; each may carry `;property` parts). Only
    `params._meta` and `result._meta` are checked; the size limits of Baggage are not.

    ## Why is this bad?
    These keys are unprefixed only so that OpenTelemetry tooling can read them as they
    are; a malformed value breaks trace propagation, and W3C parsers discard it (and may
    restart the trace), so spans no longer join up across client and server.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "get_weather",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "traceparent": "0af7651916cd43dd8448eb211c80319c"
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "get_weather",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
        }
      }
    }
    ```

    ## Reference
    "When present, their values MUST follow W3C Trace Context and W3C Baggage formats
    respectively." — docs/specification/2026-07-28/basic/index.mdx#meta (2026-07-28).
    """
    rows = (
        _modern_rare(ctx)
        # a pattern starting with `"` stops the search at every quote of the text: the
        # names without it first, which settles most texts at a third of the cost
        .filter(pl.col("_copy").str.contains('(?:trace(?:parent|state)|baggage)"'))
        .filter(pl.col("_copy").str.contains('"(?:trace(?:parent|state)|baggage)"'))
        .with_columns(
            _tp=pl.coalesce(path("$.params._meta.traceparent"), path("$.result._meta.traceparent")),
            _ts=pl.coalesce(path("$.params._meta.tracestate"), path("$.result._meta.tracestate")),
            _bg=pl.coalesce(path("$.params._meta.baggage"), path("$.result._meta.baggage")),
        )
    )
    if rows.is_empty():  # the usual case: the W3C patterns below are not even compiled
        return findings(rows, "")
    tp_bad = pl.col("_tp").is_not_null() & (
        ~pl.col("_tp").str.contains(_TRACEPARENT)
        | pl.col("_tp").str.starts_with("ff-")
        | (pl.col("_tp").str.starts_with("00-") & (pl.col("_tp").str.len_chars() != 55))
        | (pl.col("_tp").str.slice(3, 32) == "0" * 32)
        | (pl.col("_tp").str.slice(36, 16) == "0" * 16)
    )
    ts_bad = pl.col("_ts").is_not_null() & ~pl.col("_ts").str.contains(_TRACESTATE)
    bg_bad = pl.col("_bg").is_not_null() & ~pl.col("_bg").str.contains(_BAGGAGE)
    bad = rows.filter(tp_bad | ts_bad | bg_bad)
    msg = (
        pl.when(tp_bad)
        .then(fmt('traceparent "{}" is not a W3C Trace Context traceparent', "_tp"))
        .when(ts_bad)
        .then(fmt('tracestate "{}" is not a W3C Trace Context tracestate', "_ts"))
        .otherwise(fmt('baggage "{}" is not a W3C Baggage value', "_bg"))
    )
    return findings(bad, msg)


def _covers(declared: object, required: object) -> bool:
    """``declared`` (a capability value) already grants what ``required`` asks for: every
    member ``required`` names is there, at any depth; other values must be equal. (A loop,
    not recursion: a capture may nest capability objects 1,000 levels deep.)"""
    pending = [(declared, required)]
    while pending:
        have, want = pending.pop()
        if isinstance(want, dict):
            if not isinstance(have, dict) or not want.keys() <= have.keys():
                return False
            pending.extend((have[key], value) for key, value in want.items())
        elif have != want:
            return False
    return True


def _declared_anyway(required: str | None, declared: str | None) -> str | None:
    """The capabilities of the JSON object ``required`` that ``declared`` grants, joined
    for a message (None when there are none or a text is not a JSON object)."""
    try:
        asked = _json.loads(required) if required is not None else None
        given = _json.loads(declared) if declared is not None else {}
    except _json.JSONDecodeError:
        return None
    if not isinstance(asked, dict) or not isinstance(given, dict):
        return None
    try:
        granted = [n for n, value in asked.items() if n in given and _covers(given[n], value)]
    except RecursionError:  # lists nested too deep for Python's `==`: no verdict
        return None
    return '", "'.join(granted) if granted else None


@rule(
    code="MT013",
    name="missing-capability-error-invalid",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def missing_capability_error_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags -32021 (MissingRequiredClientCapability) errors without a
    `data.requiredCapabilities` object, or naming a capability the request declared.

    Declared means present in the request's `_meta`
    `io.modelcontextprotocol/clientCapabilities` with every member the error asks for.

    ## Why is this bad?
    The error tells the client what to add before it retries: without the list it cannot
    know, and a capability it already declared sends it into a retry that fails the
    same way (or shows the user a false reason). Servers must judge each request by the
    capabilities that request carries, not by what earlier requests declared.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "book", "_meta": {
       "io.modelcontextprotocol/protocolVersion": "2026-07-28",
       "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}}
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "needs elicitation",
     "data": {"requiredCapabilities": {"elicitation": {}}}}}
    ```

    Use instead: process the request (the client declared `elicitation`), or name the
    capability that is really missing:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "needs sampling",
     "data": {"requiredCapabilities": {"sampling": {}}}}}
    ```

    ## Reference
    "If processing a request requires a capability the client did not include in
    `io.modelcontextprotocol/clientCapabilities`, the server MUST return a
    `MissingRequiredClientCapabilityError` (`-32021`) whose `data.requiredCapabilities`
    lists the missing capabilities." — docs/specification/2026-07-28/basic/index.mdx#meta
    (2026-07-28). Schema: `MissingRequiredClientCapabilityError`.
    """
    errs = content(
        ctx.part(
            "responses",
            "ordinal",
            "modern",
            "kind",
            "error_code",
            "parse_error",
            "request_ordinal",
            "message",
        )
    ).filter(pl.col("modern"), pl.col("kind") == "error", pl.col("error_code") == -32021)
    if errs.is_empty():
        return findings(errs, "")
    errs = (
        errs.with_columns(_required=path("$.error.data.requiredCapabilities"))
        .pipe(ctx.lookup, "request_ordinal", _request="message")
        .with_columns(
            _declared=pl.col("_request").str.json_path_match(
                f'$.params._meta["{CLIENT_CAPABILITIES_KEY}"]'
            )
        )
    )
    pairs = (
        errs.filter(pl.col("_required").str.starts_with("{"))
        .select("_required", "_declared")
        .unique()
    )
    verdicts = pairs.with_columns(
        _granted=pl.Series(
            [_declared_anyway(r, d) for r, d in pairs.iter_rows()],  # distinct pairs, not rows
            dtype=pl.String,
        )
    )
    judged = errs.join(verdicts, on=["_required", "_declared"], how="left", nulls_equal=True)
    problem = (
        pl.when(pl.col("_required").is_null())
        .then(pl.lit("has no data.requiredCapabilities"))
        .when(~pl.col("_required").str.starts_with("{"))
        .then(pl.lit("has a data.requiredCapabilities that is not an object"))
        .when(pl.col("_granted").is_not_null() & pl.col("_request").is_not_null())
        .then(fmt('lists "{}", which the request declared in its clientCapabilities', "_granted"))
    )
    bad = judged.with_columns(_problem=problem).filter(pl.col("_problem").is_not_null())
    return findings(bad, fmt("MissingRequiredClientCapability error {}", "_problem"))


@rule(
    code="MT014",
    name="discover-result-incomplete",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def discover_result_incomplete(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `server/discover` result without its `supportedVersions` list of strings or
    its `capabilities` object, or whose list leaves out the version the request was sent
    with.

    (Its `resultType`, `ttlMs` and `cacheScope` are judged by RS001 and RS009.)

    ## Why is this bad?
    Discovery is how a 2026 client picks the version and features of every later
    request. Without the list it cannot choose a version; without the capabilities it
    must guess which features exist. A server that answers a discover request sent
    with a version it does not list should have refused that version with -32022.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": "d1", "method": "server/discover", "params": {"_meta": {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}
    {"jsonrpc": "2.0", "id": "d1", "result": {"resultType": "complete", "capabilities": {},
     "ttlMs": 3600000, "cacheScope": "public"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": "d1", "result": {"resultType": "complete",
     "supportedVersions": ["2026-07-28"], "capabilities": {}, "ttlMs": 3600000,
     "cacheScope": "public"}}
    ```

    ## Reference
    "The server replies with its supported protocol versions, capabilities, and
    identity." — docs/specification/2026-07-28/server/discover.mdx#response (2026-07-28).
    Schema: `DiscoverResult` requires `supportedVersions` (array of strings) and
    `capabilities`.
    """
    string_list = r'^\[(?:"(?:[^"\\]|\\.)*"(?:,"(?:[^"\\]|\\.)*")*)?\]$'
    rows = (
        content(
            ctx.part(
                "responses",
                "ordinal",
                "modern",
                "kind",
                "parse_error",
                "request_method",
                "request_ordinal",
                "message",
            )
        )
        .filter(
            pl.col("modern"),
            pl.col("kind") == "response",
            pl.col("request_method") == "server/discover",
        )
        # a server answers discovery alike: each distinct body is parsed once
        .pipe(json_paths, _sup="$.result.supportedVersions", _caps="$.result.capabilities")
        .pipe(ctx.lookup, "request_ordinal", _asked="protocol_version")
    )
    is_list = pl.col("_sup").str.contains(string_list)
    problems = pl.concat_list(
        pl.when(pl.col("_sup").is_null()).then(pl.lit("has no supportedVersions")),
        pl.when(pl.col("_sup").is_not_null() & ~is_list).then(
            pl.lit("has a supportedVersions that is not a list of strings")
        ),
        pl.when(
            is_list
            & pl.col("_asked").is_not_null()
            & ~pl.col("_sup").str.contains(fmt('"{}"', "_asked"), literal=True)
        ).then(fmt('does not list "{}", the version the request was sent with', "_asked")),
        pl.when(pl.col("_caps").is_null()).then(pl.lit("has no capabilities")),
        pl.when(pl.col("_caps").is_not_null() & ~pl.col("_caps").str.starts_with("{")).then(
            pl.lit("has capabilities that are not an object")
        ),
    ).list.drop_nulls()
    bad = rows.with_columns(_problem=problems.list.join(" and ")).filter(pl.col("_problem") != "")
    return findings(bad, fmt("server/discover result {}", "_problem"))
