"""ER: JSON-RPC error codes, judged by the revision that partitions and reserves them.

Codes are classified with :func:`mcptrace.protocol.error_code_info`, once per distinct
code in the trace; the rules then filter error responses by that classification.
"""

from __future__ import annotations

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.jsontext import content, json_tokens, path
from mcptrace.linter.rule import ALL_REVISIONS, LEGACY, MODERN, findings, line_of, rule
from mcptrace.protocol import ERROR_CODE_NAMES, INVALID_PARAMS, PRERELEASE_CODES, error_code_info

_RESOURCE_NOT_FOUND = -32002
_URL_ELICITATION_REQUIRED = -32042
#: wording of a "resource not found" error message (derived heuristic)
_NOT_FOUND = (
    r"(?i)\b(?:not\s+found|no\s+such|does\s*n[o']t\s+exist|unknown\s+resource|missing\s+resource)\b"
)


def _error_rows(ctx: LintContext) -> pl.DataFrame:
    """Error responses with an integral code (the columns the ER rules read)."""
    # from the responses part, which error rows are in: a filter of fewer rows
    return ctx.memo(
        "errors.rows",
        lambda ctx: ctx.part("responses", "ordinal", "kind", "error_code", "modern").filter(
            (pl.col("kind") == "error") & pl.col("error_code").is_not_null()
        ),
    )


def _classified(ctx: LintContext, revision: str) -> pl.DataFrame:
    """Error responses with ``category`` and ``note`` of their code in ``revision``."""
    return ctx.memo(f"errors.classified.{revision}", lambda ctx: _classify(ctx, revision))


def _classify(ctx: LintContext, revision: str) -> pl.DataFrame:
    errs = _error_rows(ctx)
    codes = errs["error_code"].unique().to_list()
    infos = [error_code_info(c, revision) for c in codes]  # distinct codes, not rows
    table = pl.DataFrame(
        {
            "error_code": pl.Series(codes, dtype=pl.Int64),
            "category": pl.Series([i.category for i in infos], dtype=pl.String),
            "note": pl.Series([i.note for i in infos], dtype=pl.String),
        }
    )
    return errs.join(table, on="error_code", how="left")


def _modern_errors(ctx: LintContext) -> pl.DataFrame:
    """The classified error responses of 2026-07-28 sessions (five rules read them)."""
    return ctx.memo(
        "errors.modern", lambda ctx: _classified(ctx, "2026-07-28").filter(pl.col("modern"))
    )


@rule(
    code="ER001",
    name="reserved-range-undefined-code",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def reserved_range_undefined_code(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 errors whose code lies in -32023..-32099, the part of the sub-range
    -32020..-32099 that the specification reserves for itself and has not defined.

    ## Why is this bad?
    Codes in that sub-range are allocated only by the MCP specification, one after the
    other from -32020. A code an implementation picks there today will collide with the
    meaning a future revision gives it, and clients will misread the error.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32050, "message": "Quota exceeded"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": 1001, "message": "Quota exceeded"}}
    ```

    ## Reference
    "Implementations MUST NOT emit any code from this sub-range that is not defined by
    this specification and MUST use defined codes only with their specified meanings." —
    docs/specification/2026-07-28/basic/index.mdx#error-codes (2026-07-28).
    """
    bad = _modern_errors(ctx).filter(pl.col("category") == "reserved-undefined")
    return findings(
        bad,
        fmt(
            "error code {} is reserved for the MCP specification (-32020..-32099) "
            "but not defined by it",
            "error_code",
        ),
    )


@rule(
    code="ER002", name="legacy-subrange-code", severity="warning", revisions=MODERN, scope="message"
)
def legacy_subrange_code(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 errors whose code lies in the legacy sub-range -32000..-32019, except
    -32002 (ER004) and the pre-release numbers -32001, -32003 and -32004 (ER003).

    ## Why is this bad?
    Codes in that sub-range were picked by implementations before MCP partitioned the
    range, so they mean different things to different peers; receivers must not assume
    any meaning for them, and the error becomes an opaque failure.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "Connection closed"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Connection closed"}}
    ```

    ## Reference
    "New codes MUST NOT be allocated in this sub-range, and new implementations SHOULD
    NOT use codes from this sub-range at all." —
    docs/specification/2026-07-28/basic/index.mdx#error-codes (2026-07-28).
    """
    bad = _modern_errors(ctx).filter(
        (pl.col("error_code") >= -32019)
        & (pl.col("error_code") <= -32000)
        & (pl.col("error_code") != _RESOURCE_NOT_FOUND)
        & ~pl.col("error_code").is_in(list(PRERELEASE_CODES))
    )
    return findings(
        bad,
        fmt(
            "error code {} is in the legacy sub-range -32000..-32019, "
            "which receivers give no meaning",
            "error_code",
        ),
    )


@rule(
    code="ER003",
    name="prerelease-error-code",
    severity="warning",
    revisions=MODERN,
    scope="message",
)
def prerelease_error_code(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 errors with code -32001, -32003 or -32004, the pre-release numbers of the
    2026 error codes.

    Early drafts of 2026-07-28 gave them to HeaderMismatch (now -32020),
    MissingRequiredClientCapability (now -32021) and UnsupportedProtocolVersion (now -32022).

    ## Why is this bad?
    The codes were renumbered before publication. An implementation still sending the
    draft numbers is not understood by clients built on the published revision, which
    see only an unknown legacy-range code instead of, say, a version mismatch they could
    recover from. (Some SDKs also use -32001 for timeouts; either way the code is in the
    legacy sub-range that new implementations should not use.)

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "error": {
        "code": -32004, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2025-01-01"}
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2025-01-01"}
      }
    }
    ```

    ## Reference
    "New codes MUST NOT be allocated in this sub-range, and new implementations SHOULD
    NOT use codes from this sub-range at all." —
    docs/specification/2026-07-28/basic/index.mdx#error-codes (2026-07-28); the
    renumbering is minor change 12 of docs/specification/2026-07-28/changelog.mdx.
    """
    final = pl.DataFrame(
        {
            "error_code": pl.Series(list(PRERELEASE_CODES), dtype=pl.Int64),
            "_final": pl.Series(list(PRERELEASE_CODES.values()), dtype=pl.Int64),
            "_name": pl.Series(
                [ERROR_CODE_NAMES[v] for v in PRERELEASE_CODES.values()], dtype=pl.String
            ),
        }
    )
    bad = _modern_errors(ctx).join(final, on="error_code")
    return findings(
        bad,
        fmt(
            "error code {} is the pre-release number of {}, published as {}",
            "error_code",
            "_name",
            "_final",
        ),
    )


@rule(
    code="ER004",
    name="forbidden-legacy-error-code",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def forbidden_legacy_error_code(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 errors with code -32002 (resource not found, 2025-11-25 and earlier) or
    -32042 (URL elicitation required, 2025-11-25 only).

    ## Why is this bad?
    2026-07-28 retired both codes: unknown resources are reported with -32602, and URL
    elicitation goes through `input_required` results. The codes stay reserved so that
    old meanings are never reused; a 2026 server sending them speaks a mix of revisions.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 5,
      "error": {"code": -32002, "message": "Resource not found", "data": {"uri": "file:///x"}}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 5,
      "error": {"code": -32602, "message": "Resource not found", "data": {"uri": "file:///x"}}
    }
    ```

    ## Reference
    "Implementations of this protocol version MUST NOT emit these codes:" —
    docs/specification/2026-07-28/basic/index.mdx#error-codes (2026-07-28).
    """
    bad = _modern_errors(ctx).filter(
        pl.col("error_code").is_in([_RESOURCE_NOT_FOUND, _URL_ELICITATION_REQUIRED])
    )
    msg = (
        pl.when(pl.col("error_code") == _RESOURCE_NOT_FOUND)
        .then(
            pl.lit(
                "error code -32002 (ResourceNotFound) was retired by 2026-07-28, which uses -32602"
            )
        )
        .otherwise(pl.lit("error code -32042 (URLElicitationRequired) was retired by 2026-07-28"))
    )
    return findings(bad, msg)


@rule(
    code="ER005",
    name="code-in-jsonrpc-reserved-range",
    severity="warning",
    revisions=MODERN,
    scope="message",
)
def code_in_jsonrpc_reserved_range(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 error codes in the JSON-RPC reserved range -32768..-32000 that neither
    JSON-RPC nor MCP defines.

    The JSON-RPC standard codes (-32700, -32600..-32603) and the server-error range
    -32099..-32000 (judged by ER001..ER004) are not flagged.

    ## Why is this bad?
    JSON-RPC keeps that range for errors it defines itself; an application code there
    (such as -32500) may collide with a future standard code and misleads generic
    JSON-RPC tooling. Application errors belong outside the range, e.g. positive codes.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32500, "message": "Upstream failure"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": 5000, "message": "Upstream failure"}}
    ```

    ## Reference
    "New error codes for purposes not defined by this specification SHOULD be allocated
    outside the JSON-RPC reserved range (`-32768` to `-32000`); the remainder of the
    integer space is available for application-defined errors." —
    docs/specification/2026-07-28/basic/index.mdx#error-codes (2026-07-28).
    """
    bad = _modern_errors(ctx).filter(pl.col("category") == "jsonrpc-reserved")
    return findings(
        bad,
        fmt(
            "error code {} is in the JSON-RPC reserved range -32768..-32000 "
            "but is no standard or MCP code",
            "error_code",
        ),
    )


@rule(
    code="ER006",
    name="legacy-code-in-jsonrpc-reserved-range",
    severity="info",
    revisions=LEGACY,
    scope="message",
)
def legacy_code_in_jsonrpc_reserved_range(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Notes legacy-revision error codes in the JSON-RPC reserved range -32768..-32000 that
    JSON-RPC does not define.

    The standard codes and the implementation-defined server-error range -32099..-32000 are
    not noted.

    ## Why is this bad?
    These revisions set no allocation policy of their own, but JSON-RPC 2.0 reserves the
    range for errors it pre-defines; an application code there may collide with a
    future standard code. 2026-07-28 turns this into a SHOULD (ER005).

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32500, "message": "Upstream failure"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": 5000, "message": "Upstream failure"}}
    ```

    ## Reference
    Derived from JSON-RPC 2.0 §5.1 ("The error codes from and including -32768 to -32000
    are reserved for pre-defined errors"), which MCP adopts: "All messages between MCP
    clients and servers MUST follow the JSON-RPC 2.0 specification." —
    docs/specification/2025-11-25/basic/index.mdx#messages (2024-11-05 to 2025-11-25;
    the top of basic/index.mdx in 2024-11-05).
    """
    bad = _classified(ctx, "2025-11-25").filter(
        ~pl.col("modern") & (pl.col("category") == "jsonrpc-reserved")
    )
    return findings(
        bad,
        fmt("error code {} is in the JSON-RPC reserved range -32768..-32000", "error_code"),
    )


def _resources_read_errors(ctx: LintContext) -> pl.DataFrame:
    """Readable error responses to resources/read (ER007 and ER008 share them)."""
    return ctx.memo("errors.resources_read", _build_resources_read_errors)


def _build_resources_read_errors(ctx: LintContext) -> pl.DataFrame:
    columns = ("ordinal", "modern", "error_code", "error_message")
    # the typed tests first: the method's text is compared on the error rows only
    return (
        ctx.part("responses", "kind", "parse_error", "request_method", *columns)
        .filter((pl.col("kind") == "error") & pl.col("parse_error").is_null())  # as content()
        .filter(pl.col("request_method") == "resources/read")
        .select(columns)
    )


@rule(
    code="ER007",
    name="resource-not-found-wrong-code",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def resource_not_found_wrong_code(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 `resources/read` errors that report an unknown resource with a code other
    than -32602.

    That is code -32002, or an error message saying "not found" (or "no such", "does not
    exist") with another code.

    The message test is a heuristic: an error about a missing resource whose message
    says so in other words is not recognised.

    ## Why is this bad?
    2026-07-28 folds "resource not found" into -32602 (Invalid params). A client built on
    it recognises a missing resource only by that code; -32002 is retired and other
    codes (-32603, -32601) suggest a server failure or a missing feature instead.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 7, "method": "resources/read",
      "params": {
        "uri": "file:///nope",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "Resource not found"}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 7,
      "error": {"code": -32602, "message": "Resource not found", "data": {"uri": "file:///nope"}}
    }
    ```

    ## Reference
    "If the requested resource does not exist, servers MUST return a JSON-RPC error with
    code `-32602` (Invalid Params)." —
    docs/specification/2026-07-28/server/resources.mdx#error-handling (2026-07-28).
    """
    rows = _resources_read_errors(ctx).filter(pl.col("modern"))
    says_not_found = pl.col("error_message").fill_null("").str.contains(_NOT_FOUND)
    bad = rows.filter(
        (pl.col("error_code") == _RESOURCE_NOT_FOUND)
        | (
            says_not_found
            & (pl.col("error_code").is_null() | (pl.col("error_code") != INVALID_PARAMS))
        )
    )
    code = pl.col("error_code").cast(pl.String).fill_null("a non-integer code")
    return findings(
        bad, fmt("resources/read reports a missing resource with {} instead of -32602", code)
    )


@rule(
    code="ER008",
    name="legacy-resource-not-found-code",
    severity="warning",
    revisions=LEGACY,
    scope="pairing",
)
def legacy_resource_not_found_code(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    In revisions up to 2025-11-25, flags errors answering `resources/read` whose message
    says the resource was not found (or "no such", "does not exist") but whose code is
    not -32002.

    The message test is a heuristic: an error about a missing resource whose message
    says so in other words is not recognised.

    ## Why is this bad?
    Legacy clients tell a missing resource from other failures by code -32002; with
    another code they cannot, for example, drop a stale resource from their list. (The
    2026-07-28 revision moves this case to -32602; a dual-era server should answer each
    session in its own revision.)

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "file:///nope"}}
    {"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "Resource not found"}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 5,
      "error": {"code": -32002, "message": "Resource not found", "data": {"uri": "file:///nope"}}
    }
    ```

    ## Reference
    "Servers SHOULD return standard JSON-RPC errors for common failure cases:" followed by
    "Resource not found: `-32002`" —
    docs/specification/2025-11-25/server/resources.mdx#error-handling
    (2024-11-05 to 2025-11-25).
    """
    rows = _resources_read_errors(ctx).filter(~pl.col("modern"))
    bad = rows.filter(
        pl.col("error_message").fill_null("").str.contains(_NOT_FOUND)
        & (pl.col("error_code").is_null() | (pl.col("error_code") != _RESOURCE_NOT_FOUND))
    )
    code = pl.col("error_code").cast(pl.String).fill_null("a non-integer code")
    return findings(
        bad, fmt("resources/read reports a missing resource with {} instead of -32002", code)
    )


@rule(
    code="ER009",
    name="url-elicitation-required-error-malformed",
    severity="error",
    revisions=("2025-11-25",),
    scope="message",
)
def url_elicitation_required_error_malformed(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags -32042 (URLElicitationRequired) errors whose `error.data.elicitations` is
    missing or empty, or holds an elicitation that is not URL mode (`"mode": "url"`) or
    has no `elicitationId`.

    ## Why is this bad?
    The client can only make progress by opening the listed URLs and waiting for the
    matching `notifications/elicitation/complete`; without URL-mode entries and their
    `elicitationId`s it has nothing to open and nothing to wait for.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 2,
      "error": {
        "code": -32042, "message": "Need auth",
        "data": {
          "elicitations": [
            {
              "mode": "form", "message": "x",
              "requestedSchema": {"type": "object", "properties": {}}
            }
          ]
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 2,
      "error": {
        "code": -32042, "message": "Need auth",
        "data": {
          "elicitations": [
            {
              "mode": "url", "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
              "url": "https://mcp.example.com/connect",
              "message": "Authorize access to your files."
            }
          ]
        }
      }
    }
    ```

    ## Reference
    "Any elicitations returned in the error MUST be URL mode elicitations and have an
    `elicitationId` property." —
    docs/specification/2025-11-25/client/elicitation.mdx#url-elicitation-required-error
    (2025-11-25). Schema: `URLElicitationRequiredError`.
    """
    # the typed test first: a test of the parse error first would move most texts
    rows = (
        ctx.part("responses", "ordinal", "kind", "error_code", "parse_error", "message")
        .filter((pl.col("kind") == "error") & (pl.col("error_code") == _URL_ELICITATION_REQUIRED))
        .pipe(content)
    )
    if rows.is_empty():  # the usual case: no such error, nothing to take apart
        return findings(rows, "")
    rows = rows.with_columns(_list=path("$.error.data.elicitations"))
    whole = rows.with_columns(
        _p=pl.when(~pl.col("_list").fill_null("").str.starts_with("["))
        .then(pl.lit("has no data.elicitations list"))
        .when(pl.col("_list") == "[]")
        .then(pl.lit("lists no elicitations"))
    ).filter(pl.col("_p").is_not_null())
    toks = json_tokens(
        rows.filter(pl.col("_list").str.starts_with("[") & (pl.col("_list") != "[]")), "_list"
    )
    elements = toks.filter((pl.col("depth") == 1) & ~pl.col("tok").is_in([",", "]"])).select(
        "ordinal", "row", "member", _start="tok"
    )
    fields = (
        toks.filter(pl.col("is_key") & (pl.col("depth") == 2))
        .group_by("row", "member")
        .agg(
            _mode=pl.col("value").filter(pl.col("tok") == '"mode"').first(),
            _eid=pl.col("value").filter(pl.col("tok") == '"elicitationId"').first(),
        )
    )
    per_element = (
        elements.join(fields, on=["row", "member"], how="left")
        .with_columns(
            _p=pl.when(pl.col("_start") != "{")
            .then(fmt("elicitations[{}] is not an object", "member"))
            .when(pl.col("_mode").fill_null("") != '"url"')
            .then(fmt("elicitations[{}] is not URL mode", "member"))
            .when(~pl.col("_eid").fill_null("").str.starts_with('"'))
            .then(fmt("elicitations[{}] has no elicitationId", "member"))
        )
        .filter(pl.col("_p").is_not_null())
        .group_by("ordinal", maintain_order=True)
        .agg(pl.col("_p").str.join(", "))
    )
    bad = pl.concat([whole.select("ordinal", "_p"), per_element.select("ordinal", "_p")])
    return findings(bad, fmt("URLElicitationRequired error {}", "_p"))


def _prompt_listing(body: str | None) -> dict[str, list[str]] | None:
    """The prompts of one `prompts/list` result message, each with the names of its
    required arguments; None when it is no complete listing (not a result with a
    `prompts` array, or a page with a `nextCursor`: a prompt may be on a page the client
    did not fetch)."""
    try:
        doc = _json.loads(body) if body is not None else None
    except _json.JSONDecodeError:
        return None
    result = doc.get("result") if isinstance(doc, dict) else None
    if not isinstance(result, dict) or result.get("nextCursor") is not None:
        return None
    prompts = result.get("prompts")
    if not isinstance(prompts, list):
        return None
    listing: dict[str, list[str]] = {}
    for prompt in prompts:
        if not isinstance(prompt, dict) or not isinstance(prompt.get("name"), str):
            continue
        arguments = prompt.get("arguments")
        listing[prompt["name"]] = [
            a["name"]
            for a in (arguments if isinstance(arguments, list) else [])
            if isinstance(a, dict) and isinstance(a.get("name"), str) and a.get("required") is True
        ]
    return listing


def _missing_arguments(prompts: dict[str, list[str]], name: str, request: str | None) -> str | None:
    """The required arguments of prompt ``name`` in ``prompts`` (a complete listing, see
    :func:`_prompt_listing`) that the `prompts/get` ``request`` does not give, joined;
    None when the listing does not name the prompt, "" when none is missing."""
    if name not in prompts:
        return None
    try:
        doc = _json.loads(request) if request is not None else None
    except _json.JSONDecodeError:
        doc = None
    params = doc.get("params") if isinstance(doc, dict) else None
    given = params.get("arguments") if isinstance(params, dict) else None
    keys = given if isinstance(given, dict) else {}
    return ", ".join(a for a in prompts[name] if a not in keys)


def _prompt_errors(ctx: LintContext) -> pl.DataFrame:
    """Errors other than -32602 answering a client's `prompts/get` whose latest earlier
    `prompts/list` result of the session is a complete listing with no
    `notifications/prompts/list_changed` since: session, request_ordinal,
    response_ordinal, error_code, name, ``_listed`` (that result's ordinal) and
    ``_missing``: null when the listing does not name the prompt, else its required
    arguments the request does not give (joined; empty when none)."""
    return ctx.memo("errors.prompt_errors", _build_prompt_errors)


def _build_prompt_errors(ctx: LintContext) -> pl.DataFrame:
    gets = ctx.calls.filter(
        (pl.col("method") == "prompts/get")
        & (pl.col("direction") == "c2s")
        & (pl.col("outcome") == "error")
        & pl.col("target").is_not_null()
        & pl.col("error_code").is_not_null()
        & (pl.col("error_code") != INVALID_PARAMS)
        # "the latest earlier prompts/list result" needs both directions in one order
        & ~pl.col("session").is_in(ctx.unordered_sessions.implode())
    ).select("session", "request_ordinal", "response_ordinal", "error_code", name="target")
    empty = gets.with_columns(
        _listed=pl.lit(None, pl.Int64), _missing=pl.lit(None, pl.String)
    ).clear()
    if gets.is_empty():  # the usual case
        return empty
    sessions = gets["session"].unique().implode()
    listings = ctx.calls.filter(
        (pl.col("method") == "prompts/list")
        & (pl.col("outcome") == "ok")
        & pl.col("session").is_in(sessions)
    ).select("session", "request_ordinal", "response_ordinal")
    listings = ctx.lookup(listings, "request_ordinal", _asked="message")
    listings = ctx.lookup(listings, "response_ordinal", _answer="message")
    # each listing parsed once, by its ordinal; one that is not complete still is the
    # latest one, and leaves the requests after it unjudged
    parsed = {
        at: _prompt_listing(text)
        for at, text in listings.select("response_ordinal", "_answer").iter_rows()
    }
    complete = [parsed[at] is not None for at in listings["response_ordinal"].to_list()]
    paged = pl.col("_asked").str.json_path_match("$.params.cursor").is_not_null()
    listings = (
        listings.with_columns(
            _complete=pl.Series(complete, dtype=pl.Boolean) & ~paged.fill_null(False)
        )
        .select("session", "_complete", _listed="response_ordinal")
        .sort("_listed")
    )
    changes = (
        ctx.part("notifications", "session", "ordinal", "method", "direction")
        .filter(
            (pl.col("method") == "notifications/prompts/list_changed")
            & (pl.col("direction") == "s2c")
            & pl.col("session").is_in(sessions)
        )
        .select("session", _changed="ordinal")
        .sort("_changed")
    )
    judged = (
        gets.sort("request_ordinal")
        .join_asof(
            listings,
            left_on="request_ordinal",
            right_on="_listed",
            by="session",
            strategy="backward",
            check_sortedness=False,
        )
        .filter(pl.col("_complete").fill_null(False))
        .join_asof(
            changes,
            left_on="request_ordinal",
            right_on="_changed",
            by="session",
            strategy="backward",
            check_sortedness=False,
        )
        .filter(pl.col("_changed").is_null() | (pl.col("_changed") < pl.col("_listed")))
    )
    if judged.is_empty():
        return empty
    judged = ctx.lookup(judged, "request_ordinal", _request="message")
    missing = [
        _missing_arguments(parsed[listed] or {}, name, request)
        for listed, name, request in judged.select("_listed", "name", "_request").iter_rows()
    ]
    return judged.with_columns(_missing=pl.Series(missing, dtype=pl.String)).select(empty.columns)


@rule(
    code="ER010",
    name="prompt-not-found-wrong-code",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def prompt_not_found_wrong_code(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an error answering a `prompts/get` of a prompt the server does not have, whose
    code is not `-32602` (Invalid params).

    A prompt is one the server does not have when the latest earlier `prompts/list`
    result of the session is a complete listing (asked without a cursor, answered
    without `nextCursor`) that does not name it, and no
    `notifications/prompts/list_changed` came between. Errors without an integer code
    are JR008's, a missing required argument is ER011's; successful answers are not
    judged.

    ## Why is this bad?
    `-32602` is the code clients are told to expect for a prompt name they got wrong,
    so they can tell it from a server failure (`-32603`) and refresh their list instead
    of retrying. Code `0` or an internal error for an unknown name sends them the
    wrong way.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 2, "result": {"prompts": [{"name": "summarize"}]}}
    {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "sumarize"}}
    {"jsonrpc": "2.0", "id": 3, "error": {"code": 0, "message": "Unknown prompt: sumarize"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
     "message": "Unknown prompt: sumarize"}}
    ```

    ## Reference
    "Servers **SHOULD** return standard JSON-RPC errors for common failure cases: -
    Invalid prompt name: `-32602` (Invalid params)" — server/prompts.mdx#error-handling
    (2024-11-05 to 2026-07-28).
    """
    bad = _prompt_errors(ctx).filter(pl.col("_missing").is_null())
    return findings(
        bad.with_columns(ordinal="response_ordinal").sort("ordinal"),
        fmt(
            'prompts/get of "{}" ({}), a prompt the prompts/list result at {} does not name, '
            "answered with error {} instead of -32602 (Invalid params)",
            "name",
            line_of("request_ordinal"),
            line_of("_listed"),
            "error_code",
        ),
    )


@rule(
    code="ER011",
    name="prompt-missing-argument-wrong-code",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def prompt_missing_argument_wrong_code(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an error answering a `prompts/get` that lacks a required argument of the
    prompt, whose code is not `-32602` (Invalid params).

    The prompt's required arguments are those its definition marks `required: true` in
    the latest earlier `prompts/list` result of the session, when that result is a
    complete listing (asked without a cursor, answered without `nextCursor`) and no
    `notifications/prompts/list_changed` came between. Errors without an integer code
    are JR008's; an unknown prompt is ER010's.

    ## Why is this bad?
    A missing argument is the client's mistake, and `-32602` tells the client so: it can
    ask the user for the value and try again. An internal error (`-32603`) or an
    "Invalid Request" (`-32600`, which means the message is not a valid request at all)
    blames the wrong side.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 2, "result": {"prompts": [{"name": "greet",
     "arguments": [{"name": "name", "required": true}]}]}}
    {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "greet"}}
    {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "name: Required"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
     "message": "Missing required argument: name"}}
    ```

    ## Reference
    "Servers **SHOULD** return standard JSON-RPC errors for common failure cases: …
    Missing required arguments: `-32602` (Invalid params)" —
    server/prompts.mdx#error-handling (2024-11-05 to 2026-07-28).
    """
    bad = _prompt_errors(ctx).filter(pl.col("_missing").fill_null("") != "")
    return findings(
        bad.with_columns(ordinal="response_ordinal").sort("ordinal"),
        fmt(
            'prompts/get of "{}" ({}) without its required argument(s) {} (prompts/list '
            "result at {}) answered with error {} instead of -32602 (Invalid params)",
            "name",
            line_of("request_ordinal"),
            "_missing",
            line_of("_listed"),
            "error_code",
        ),
    )
