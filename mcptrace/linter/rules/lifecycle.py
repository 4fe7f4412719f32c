"""LC: the legacy lifecycle (initialize handshake, version negotiation, ping) and era checks.

Most rules here follow a session through its handshake (scope ``session``):
the first ``initialize`` request, its response, and the client's
``notifications/initialized``. Sessions whose two directions were captured in
separate files without a common clock (``Trace.unordered_sessions``) have no
reliable order between a client message and a server message, so rules that
compare the two directions skip them.
"""

from __future__ import annotations

import polars as pl

from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import ALL_REVISIONS, LEGACY, findings, line_of, rule
from mcptrace.message_text import json_paths
from mcptrace.protocol import REVISIONS

#: a tuple, not a Series: `is_in` with a Series of the column's own type is deprecated
_KNOWN = tuple(REVISIONS)
#: JSON-RPC errors only a 2026-07-28 (modern) server returns (basic/transports: the
#: header mismatch, missing client capability and unsupported version errors).
_MODERN_ERROR_CODES = (-32020, -32021, -32022)
#: error codes answering `initialize` that only a modern-only server sends: method not
#: found (every legacy revision requires `initialize`) and the 2026 unsupported version
_MODERN_ONLY_CODES = (-32601, -32022)
#: a protocol version as MCP spells them (YYYY-MM-DD)
_VERSION_TEXT = r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b"


def ordered(ctx: LintContext) -> pl.Expr:
    """True for rows of sessions whose client and server messages are in capture order."""
    if ctx.unordered_sessions.is_empty():
        return pl.lit(True)  # the usual case: no per-direction files, nothing to test per row
    return ~pl.col("session").is_in(ctx.unordered_sessions.implode())


#: an ordinal after every message: the bound of a session without one
_NEVER = 2**62


def initialize_calls(ctx: LintContext) -> pl.DataFrame:
    """Every ``initialize`` request with its response: session, request_ordinal,
    response_ordinal (null when unanswered), outcome, proposed and agreed version."""
    return ctx.memo("lifecycle.initialize_calls", _build_initialize_calls)


def _build_initialize_calls(ctx: LintContext) -> pl.DataFrame:
    # the columns taken first: a filter moves every column it is given
    calls = (
        ctx.calls.select("session", "request_ordinal", "response_ordinal", "outcome", "method")
        .filter(pl.col("method") == "initialize")
        .drop("method")
    )
    calls = ctx.lookup(calls, "request_ordinal", proposed="protocol_version")
    return ctx.lookup(calls, "response_ordinal", agreed="protocol_version").sort("request_ordinal")


def handshake(ctx: LintContext) -> pl.DataFrame:
    """Per session with a successful ``initialize``: its request and response ordinals
    (the first successful one) and ``initialized_ordinal``, the client's first
    ``notifications/initialized`` after that request (null when never sent)."""
    return ctx.memo("lifecycle.handshake", _build_handshake)


def _build_handshake(ctx: LintContext) -> pl.DataFrame:
    ok = (
        initialize_calls(ctx)
        .filter(pl.col("outcome") == "ok")
        .group_by("session")
        .agg(
            pl.col("request_ordinal").first().alias("init_ordinal"),
            pl.col("response_ordinal").first().alias("result_ordinal"),
        )
    )
    initialized = (
        ctx.part("notifications", "session", "ordinal", "method", "direction")
        .filter((pl.col("method") == "notifications/initialized") & (pl.col("direction") != "s2c"))
        .select("session", "ordinal")
        .join(ok.select("session", "init_ordinal"), on="session")
        .filter(pl.col("ordinal") > pl.col("init_ordinal"))
        .group_by("session")
        .agg(pl.col("ordinal").min().alias("initialized_ordinal"))
    )
    return ok.join(initialized, on="session", how="left")


def _describe() -> pl.Expr:
    """Short words for a protocol row: ``tools/list request``, ``response id 3``."""
    return (
        pl.when(pl.col("method").is_not_null())
        .then(fmt("{} {}", "method", "kind"))
        .otherwise(fmt("{} id {}", "kind", pl.col("id").fill_null("null")))
    )


@rule(
    code="LC001", name="initialize-not-first", severity="error", revisions=LEGACY, scope="session"
)
def initialize_not_first(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags the first message of a session that precedes its `initialize` request.

    Pings are allowed before the handshake, and so is a dual-era client's modern probe
    (`server/discover` or a request carrying the 2026 `_meta` protocol version) with
    the replies to it.

    ## Why is this bad?
    Until the handshake has happened neither side knows the protocol version or the
    peer's capabilities. A legacy server may reject or misinterpret anything sent
    before `initialize`, and a client that skips the handshake has negotiated nothing.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    ```

    ## Reference
    "The initialization phase MUST be the first interaction between client and server."
    — basic/lifecycle.mdx#initialization (2024-11-05 to 2025-11-25). The probe exception:
    2026-07-28 basic/transports/stdio.mdx#backward-compatibility.
    """
    first_init = (
        ctx.part("requests", "session", "ordinal", "method")
        .filter(pl.col("method") == "initialize")
        .group_by("session")
        .agg(pl.col("ordinal").min().alias("init_ordinal"))
    )

    # A dual-era client's modern attempts before falling back to initialize.
    def is_probe(kind: str, method: str, version: str) -> pl.Expr:
        return (pl.col(kind) == "request") & (
            (pl.col(method) == "server/discover")
            | ((pl.col(method) != "initialize") & pl.col(version).is_not_null())
        )

    probe = is_probe("kind", "method", "protocol_version")
    columns = ("session", "ordinal", "direction", "kind", "method", "id", "protocol_version")
    # each row's session's first initialize (a mapping, not a join of every column); no
    # row precedes it in a session without one
    init_ordinal = ctx.of_session(first_init, "init_ordinal", missing=-1)
    early = (
        ctx.part("protocol", *columns)
        .filter(pl.col("ordinal") < init_ordinal)
        .with_columns(init_ordinal=init_ordinal)
        # without a common clock, only the client's own messages can be compared
        .filter(ordered(ctx) | (pl.col("direction") == "c2s"))
    )
    if early.is_empty():
        # what most captures have: nothing precedes initialize (the queries below, on no
        # rows, cost ~2 ms)
        return findings(early, "")
    # the few early responses: those answering a ping or a probe are allowed
    answers = early.filter(pl.col("kind").is_in(["response", "error"])).select("ordinal")
    answers = answers.join(
        ctx.part("responses", "ordinal", "request_method", "request_ordinal"),
        on="ordinal",
        how="left",
    )
    answers = ctx.lookup(
        answers, "request_ordinal", _kind="kind", _method="method", _version="protocol_version"
    )
    answered_ping_or_probe = answers.filter(
        (pl.col("request_method") == "ping") | is_probe("_kind", "_method", "_version")
    ).select("ordinal")
    before = (
        early.filter(
            ~((pl.col("kind") == "request") & (pl.col("method") == "ping"))
            & ~probe
            & ~pl.col("ordinal").is_in(answered_ping_or_probe["ordinal"].implode())
            & pl.col("method").ne_missing("notifications/cancelled")
        )
        .sort("ordinal")
        .group_by("session")
        .agg(
            pl.col("ordinal").first(),
            _describe().first().alias("what"),
            pl.len().alias("count"),
            pl.col("init_ordinal").first(),
        )
    )
    more = (
        pl.when(pl.col("count") > 1)
        .then(fmt(" ({} messages precede it)", "count"))
        .otherwise(pl.lit(""))
    )
    return findings(
        before,
        fmt("{} precedes the initialize request at {}{}", "what", line_of("init_ordinal"), more),
    )


@rule(
    code="LC002",
    name="initialize-missing-fields",
    severity="error",
    revisions=LEGACY,
    scope="message",
)
def initialize_missing_fields(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an `initialize` request or InitializeResult that lacks a required field.

    The request needs `protocolVersion`, `capabilities` and `clientInfo` (with `name`
    and `version`); the result needs `protocolVersion`, `capabilities` and `serverInfo`
    (with `name` and `version`).

    ## Why is this bad?
    These fields are the whole handshake: the version to negotiate, what each side
    supports and who it is. A peer missing one cannot negotiate; SDKs reject such a
    message as invalid params.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
     "capabilities": {}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    ## Reference
    "The client MUST initiate this phase by sending an `initialize` request containing:"
    and "The server MUST respond with its own capabilities and information:" —
    basic/lifecycle.mdx#initialization (2024-11-05 to 2025-11-25). Schema:
    `InitializeRequest`, `InitializeResult`, `Implementation`.
    """

    def missing(frame: pl.DataFrame, prefix: str, info: str, what: str) -> pl.DataFrame:
        # one parse of each distinct message body (see json_paths: a server sends the same
        # InitializeResult to every client), then small ones of the extracted objects: of
        # each distinct one (a client or server sends the same one every time)
        body = json_paths(frame, _object=f"$.{prefix}").select(
            "ordinal", _body=pl.col("_object").fill_null("")
        )
        parts = (
            body.select(pl.col("_body").unique())
            .with_columns(
                _version=pl.col("_body").str.json_path_match("$.protocolVersion"),
                _caps=pl.col("_body").str.json_path_match("$.capabilities").fill_null(""),
                _info=pl.col("_body").str.json_path_match(f"$.{info}").fill_null(""),
            )
            .with_columns(
                _name=pl.col("_info").str.json_path_match("$.name"),
                _info_version=pl.col("_info").str.json_path_match("$.version"),
            )
        )
        has_info = pl.col("_info").str.starts_with("{")
        return body.join(parts, on="_body", how="left", maintain_order="left").select(
            "ordinal",
            what=pl.lit(what),
            missing=pl.concat_list(
                pl.when(pl.col("_version").is_null()).then(pl.lit("protocolVersion")),
                pl.when(~pl.col("_caps").str.starts_with("{")).then(pl.lit("capabilities")),
                pl.when(~has_info).then(pl.lit(info)),
                pl.when(has_info & pl.col("_name").is_null()).then(pl.lit(f"{info}.name")),
                pl.when(has_info & pl.col("_info_version").is_null()).then(
                    pl.lit(f"{info}.version")
                ),
            ).list.drop_nulls(),
        )

    requests = ctx.part("requests", "ordinal", "method", "parse_error", "message").filter(
        (pl.col("method") == "initialize") & pl.col("parse_error").is_null()
    )
    # the answers to initialize, looked up from its few calls: no test of the answered
    # method of every response
    answers = initialize_calls(ctx).select(ordinal="response_ordinal").drop_nulls()
    results = (
        ctx.lookup(answers, "ordinal", inner=True, kind="kind", parse_error="parse_error")
        .filter((pl.col("kind") == "response") & pl.col("parse_error").is_null())
        .sort("ordinal")
    )
    results = ctx.lookup(results, "ordinal", message="message")
    bad = pl.concat(
        [
            missing(requests, "params", "clientInfo", "initialize request"),
            missing(results, "result", "serverInfo", "InitializeResult"),
        ]
    ).filter(pl.col("missing").list.len() > 0)
    return findings(bad, fmt("{} lacks {}", "what", pl.col("missing").list.join(", ")))


@rule(
    code="LC003",
    name="initialized-notification-missing",
    severity="error",
    revisions=LEGACY,
    scope="session",
)
def initialized_notification_missing(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags the client's first request (other than `ping`) after a successful
    InitializeResult when the client never sends `notifications/initialized`.

    A session that ends (or only pings) after the result is not flagged: the client
    never began normal operation. A notification sent late is LC014's business.

    ## Why is this bad?
    The notification tells the server the handshake is complete and normal operation
    may begin. Servers that wait for it may hold back their own requests, list-change
    notifications or logging, or refuse requests, and the session stalls.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}}, "serverInfo": {"name": "srv", "version": "2.0"}}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    ```

    ## Reference
    "After successful initialization, the client MUST send an `initialized` notification
    to indicate it is ready to begin normal operations:" — basic/lifecycle.mdx#initialization
    (2024-11-05 to 2025-11-25).
    """
    found = _requests_before_initialized(ctx).filter(pl.col("initialized_ordinal").is_null())
    return findings(
        found,
        fmt(
            "{} sent after the InitializeResult at {}, "
            "but the client never sent notifications/initialized{}",
            "method",
            line_of("result_ordinal"),
            _more_requests(),
        ),
    )


def _requests_before_initialized(ctx: LintContext) -> pl.DataFrame:
    """Per session: the client's first non-ping request after the successful
    InitializeResult and before its ``notifications/initialized`` (if any), with
    ``count``, ``result_ordinal`` and ``initialized_ordinal``."""
    return ctx.memo("lifecycle.before_initialized", _build_requests_before_initialized)


def _build_requests_before_initialized(ctx: LintContext) -> pl.DataFrame:
    shaken = handshake(ctx)
    # after the result and before the notification (no bound without one); a session
    # without a handshake has no such request
    after = ctx.of_session(shaken, "result_ordinal", missing=_NEVER)
    before = ctx.of_session(shaken, "initialized_ordinal", missing=_NEVER)
    return (
        ctx.part("requests", "session", "ordinal", "method", "direction")
        # the typed tests first: the method is compared on the few rows they leave
        .filter(
            (pl.col("direction") == "c2s")
            & ordered(ctx)
            & pl.col("ordinal").is_between(after, before, closed="none")
        )
        .filter(~pl.col("method").is_in(["ping", "initialize"]))
        .drop("direction")
        .with_columns(
            result_ordinal=ctx.of_session(shaken, "result_ordinal"),
            initialized_ordinal=ctx.of_session(shaken, "initialized_ordinal"),
        )
        .sort("ordinal")
        .group_by("session")
        .agg(
            pl.col("ordinal", "method", "result_ordinal", "initialized_ordinal").first(),
            pl.len().alias("count"),
        )
    )


def _more_requests() -> pl.Expr:
    return (
        pl.when(pl.col("count") > 1)
        .then(fmt(" ({} requests in all)", "count"))
        .otherwise(pl.lit(""))
    )


@rule(
    code="LC004",
    name="request-before-initialize-result",
    severity="warning",
    revisions=LEGACY,
    scope="session",
)
def request_before_initialize_result(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags client requests other than `ping` sent after `initialize` but before the
    server answered it.

    ## Why is this bad?
    Until the InitializeResult arrives the client does not know the agreed protocol
    version or the server's capabilities, so it cannot know whether the request is
    valid. Servers commonly reject requests that arrive before the handshake completes.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}}, "serverInfo": {"name": "srv", "version": "2.0"}}}
    ```

    Use instead: wait for the result, send `notifications/initialized`, then
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    ```

    ## Reference
    "The client SHOULD NOT send requests other than pings before the server has responded
    to the `initialize` request." — basic/lifecycle.mdx#initialization (2024-11-05 to
    2025-11-25).
    """
    inits = (
        initialize_calls(ctx)
        .filter(pl.col("response_ordinal").is_not_null())
        .select("session", pl.col("request_ordinal").alias("init_ordinal"), "response_ordinal")
    )
    # only a request after a session's first initialize and before its last answer can
    # be early: these bounds leave few requests to sort and match
    bounds = inits.group_by("session").agg(
        pl.col("init_ordinal").min(), pl.col("response_ordinal").max()
    )
    early = (
        ctx.part("requests", "session", "ordinal", "method", "direction")
        .filter(
            (pl.col("direction") == "c2s")
            & ordered(ctx)
            & pl.col("ordinal").is_between(
                ctx.of_session(bounds, "init_ordinal", missing=_NEVER),
                ctx.of_session(bounds, "response_ordinal", missing=-1),
                closed="none",
            )
        )
        .filter(pl.col("method") != "ping")
        .drop("direction")
    )
    if early.is_empty():
        return findings(early, "")  # the usual case: no query on no rows
    early = (
        early.sort("ordinal")
        .join_asof(
            inits.sort("init_ordinal"),
            left_on="ordinal",
            right_on="init_ordinal",
            by="session",
            strategy="backward",
            check_sortedness=False,
            allow_exact_matches=False,
        )
        .filter(pl.col("ordinal") < pl.col("response_ordinal"))
    )
    return findings(
        early,
        fmt(
            "{} sent before the server answered initialize (response at {})",
            "method",
            line_of("response_ordinal"),
        ),
    )


@rule(
    code="LC005",
    name="server-request-before-initialized",
    severity="warning",
    revisions=LEGACY,
    scope="session",
)
def server_request_before_initialized(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags server requests other than `ping` sent during the handshake, before the
    client's `notifications/initialized` arrived.

    ## Why is this bad?
    The client announces with `notifications/initialized` that it is ready. A request
    such as `roots/list` or `sampling/createMessage` that arrives earlier may be
    rejected or dropped by a client still finishing its own setup. Log notifications
    are allowed.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
     "serverInfo": {"name": "srv", "version": "2.0"}}}
    {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ```

    Use instead: send `roots/list` after `notifications/initialized` has arrived.
    ```json
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
    ```

    ## Reference
    "The server SHOULD NOT send requests other than pings and logging before receiving
    the `initialized` notification." — basic/lifecycle.mdx#initialization (2024-11-05 to
    2025-11-25).
    """
    hs = handshake(ctx).filter(pl.col("initialized_ordinal").is_not_null())
    early = (
        ctx.part("requests", "session", "ordinal", "method", "direction")
        # the typed tests first: the method is compared on the few server requests
        .filter((pl.col("direction") == "s2c") & ordered(ctx))
        .filter(pl.col("method") != "ping")
        .join(hs, on="session")
        .filter(
            pl.col("ordinal").is_between(
                pl.col("init_ordinal"), pl.col("initialized_ordinal"), closed="none"
            )
        )
    )
    return findings(
        early,
        fmt(
            "server sent {} before the client's notifications/initialized ({})",
            "method",
            line_of("initialized_ordinal"),
        ),
    )


@rule(
    code="LC006",
    name="initialize-result-unknown-version",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def initialize_result_unknown_version(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an InitializeResult whose `protocolVersion` is no published MCP revision and
    not the client's proposal either.

    Published revisions are 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and
    2026-07-28; `"draft"`, `"1.0"` or a date no revision has are not. A server that
    echoes the client's own proposal (`2024-10-07`, a pre-release version some SDKs
    still list) does what the negotiation asks of a server that supports the requested
    version: the proposal is LC007's finding, not the answer's.

    ## Why is this bad?
    The server must answer with the version the client asked for or another version it
    supports; a counter-offer that names no revision leaves both peers without an
    agreed set of rules, and the client cannot support a version nobody published. The
    session's revision is then unknown, so only revision-independent rules can judge
    it. The rule applies whatever the session's revision, because that revision is
    exactly what the bad answer makes unknown.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06", "capabilities": {},
     "serverInfo": {"name": "srv", "version": "2.0"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {},
     "serverInfo": {"name": "srv", "version": "2.0"}}}
    ```

    ## Reference
    "If the server supports the requested protocol version, it MUST respond with the same
    version. Otherwise, the server MUST respond with another protocol version it supports."
    — basic/lifecycle.mdx#version-negotiation (2024-11-05 to 2025-11-25).
    """
    bad = initialize_calls(ctx).filter(
        (pl.col("outcome") == "ok")
        & pl.col("agreed").is_not_null()
        & ~pl.col("agreed").is_in(_KNOWN)
        & pl.col("agreed").ne_missing(pl.col("proposed"))
    )
    return findings(
        bad.rename({"response_ordinal": "ordinal"}),
        fmt(
            'InitializeResult protocolVersion "{}" is not a published MCP revision '
            '(the client proposed "{}")',
            "agreed",
            pl.col("proposed").fill_null("nothing"),
        ),
    )


@rule(
    code="LC007",
    name="initialize-request-unknown-version",
    severity="info",
    revisions=ALL_REVISIONS,
    scope="message",
)
def initialize_request_unknown_version(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an `initialize` request whose `protocolVersion` is not a published MCP revision.

    ## Why is this bad?
    The client must propose a version it supports, normally its latest. A string that
    names no revision (`"draft"`, `"2025-06"`, `"latest"`) cannot be honoured, so the
    server has to counter-offer one of its own versions; it usually reveals a client
    built against an unreleased draft or a typo. The session is judged by whatever the
    server answers, so the rule applies to every revision.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "draft",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    ## Reference
    "In the `initialize` request, the client MUST send a protocol version it supports."
    — basic/lifecycle.mdx#version-negotiation (2024-11-05 to 2025-11-25).
    """
    # the version (a 2026 request's `_meta` has one too) is looked up on the few
    # initialize requests only
    bad = (
        ctx.part("requests", "ordinal", "method", "protocol_version")
        .filter(pl.col("method") == "initialize")
        .filter(
            pl.col("protocol_version").is_not_null() & ~pl.col("protocol_version").is_in(_KNOWN)
        )
    )
    return findings(
        bad,
        fmt(
            'initialize proposes protocolVersion "{}", which is not a published MCP revision',
            "protocol_version",
        ),
    )


@rule(
    code="LC008",
    name="initialize-version-counter-offer",
    severity="info",
    revisions=LEGACY,
    scope="session",
)
def initialize_version_counter_offer(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports an InitializeResult whose `protocolVersion` differs from the one the client
    proposed, in a session the client then continued under the server's version.

    ## Why is this bad?
    It is legal (the server does not support the proposal and offers another version),
    but the session now speaks a version the client did not ask for: features of the
    proposed revision are unavailable and the client must really support the answered
    one, or it should have disconnected. Worth knowing when a feature seems to be ignored.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-03-26", "capabilities": {},
     "serverInfo": {"name": "srv", "version": "2.0"}}}
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ```

    Use instead: upgrade the server (or pin the client) so both speak the same revision,
    and the server echoes the proposal:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
     "serverInfo": {"name": "srv", "version": "2.1"}}}
    ```

    ## Reference
    "If the client does not support the version in the server's response, it SHOULD
    disconnect." — basic/lifecycle.mdx#version-negotiation (2024-11-05 to 2025-11-25).
    """
    offers = initialize_calls(ctx).filter(
        (pl.col("outcome") == "ok")
        & pl.col("agreed").is_in(_KNOWN)
        & pl.col("proposed").is_not_null()
        & (pl.col("agreed") != pl.col("proposed"))
    )
    if offers.is_empty():
        return findings(offers.rename({"response_ordinal": "ordinal"}), "")
    continued = (
        ctx.part("protocol", "session", "direction", "ordinal")
        .filter(pl.col("session").is_in(offers["session"].implode()))
        .filter((pl.col("direction") == "c2s") & ordered(ctx))
        .select("session", pl.col("ordinal").alias("later"))
        .join(offers.select("session", "response_ordinal"), on="session")
        .filter(pl.col("later") > pl.col("response_ordinal"))
        .select("response_ordinal")
        .unique()
    )
    found = offers.join(continued, on="response_ordinal", how="semi").rename(
        {"response_ordinal": "ordinal"}
    )
    return findings(
        found,
        fmt(
            "server answered protocolVersion {} to the proposed {}, "
            "and the client continued with {}",
            "agreed",
            "proposed",
            "agreed",
        ),
    )


@rule(
    code="LC009",
    name="initialize-version-downgrade-inconsistent",
    severity="error",
    revisions=LEGACY,
    scope="pairing",
)
def initialize_version_downgrade_inconsistent(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an InitializeResult that downgrades a proposal the same server accepted elsewhere.

    "The same server" is the same `serverInfo` name and version, in another session of
    the trace, answering the very same proposed version with that version.

    ## Why is this bad?
    A server that supports the requested version must answer with it. Having accepted
    it elsewhere shows the server does support it, so the downgrade is a negotiation
    bug that silently takes features away from the client.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {},
     "serverInfo": {"name": "srv", "version": "1.2"}}}
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-03-26", "capabilities": {},
     "serverInfo": {"name": "srv", "version": "1.2"}}}
    ```
    (both answering a proposal of `2025-06-18`, in two sessions)

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {},
     "serverInfo": {"name": "srv", "version": "1.2"}}}
    ```

    ## Reference
    "If the server supports the requested protocol version, it MUST respond with the same
    version." — basic/lifecycle.mdx#version-negotiation (2024-11-05 to 2025-11-25).
    """
    servers = ctx.sessions.select("session", "server_name", "server_version")
    answered = (
        initialize_calls(ctx)
        .filter(
            (pl.col("outcome") == "ok")
            & pl.col("agreed").is_not_null()
            & pl.col("proposed").is_not_null()
        )
        .join(servers, on="session")
        .filter(pl.col("server_name").is_not_null() & pl.col("server_version").is_not_null())
    )
    accepted = (
        answered.filter(pl.col("agreed") == pl.col("proposed"))
        .group_by("server_name", "server_version", "proposed")
        .agg(pl.col("session").first().alias("accepted_in"))
    )
    bad = (
        answered.filter(pl.col("agreed") != pl.col("proposed"))
        .join(accepted, on=["server_name", "server_version", "proposed"])
        .rename({"response_ordinal": "ordinal"})
    )
    return findings(
        bad,
        fmt(
            "{} {} answered {} to the proposed {}, although it accepted {} in session {}",
            "server_name",
            "server_version",
            "agreed",
            "proposed",
            "proposed",
            "accepted_in",
        ),
    )


@rule(
    code="LC010", name="initialize-cancelled", severity="error", revisions=LEGACY, scope="session"
)
def initialize_cancelled(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a client `notifications/cancelled` whose `requestId` names the client's
    `initialize` request.

    ## Why is this bad?
    Cancelling the handshake leaves the connection in an undefined state: the server may
    already have committed to a version and capabilities. A client that gives up on
    `initialize` should close the connection (and start a new one) instead.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1,
     "reason": "timeout"}}
    ```

    Use instead: close the transport (end the stdio process, drop the HTTP session)
    and reconnect.

    ## Reference
    "The `initialize` request MUST NOT be cancelled by clients" —
    basic/utilities/cancellation.mdx#behavior-requirements (2024-11-05 to 2025-11-25).
    """
    cancels = (
        ctx.part("notifications", "session", "ordinal", "cancel_id", "method", "direction")
        .filter(
            (pl.col("method") == "notifications/cancelled")
            & (pl.col("direction") == "c2s")
            & pl.col("cancel_id").is_not_null()
        )
        .select("session", "ordinal", "cancel_id")
    )
    requests = ctx.part("requests", "session", "id", "ordinal", "method", "direction")
    # only a cancel naming the id of an initialize request can be one (usually none): the
    # others are not matched at all
    initialize_ids = requests.filter(
        (pl.col("method") == "initialize") & (pl.col("direction") == "c2s")
    ).select("session", cancel_id="id")
    cancels = cancels.join(initialize_ids, on=["session", "cancel_id"], how="semi")
    if cancels.is_empty():  # the usual case: no client request needs looking at
        return findings(cancels, "")
    requests = requests.filter(pl.col("direction") == "c2s")
    # only requests whose (session, id) some cancel names can match it
    client_requests = (
        requests.select(
            "session",
            pl.col("id").alias("cancel_id"),
            pl.col("ordinal").alias("request_ordinal"),
            "method",
        )
        .join(
            cancels.select("session", "cancel_id").unique(), on=["session", "cancel_id"], how="semi"
        )
        .sort("request_ordinal")
    )
    cancels = (
        cancels.sort("ordinal")
        .join_asof(
            client_requests,
            left_on="ordinal",
            right_on="request_ordinal",
            by=["session", "cancel_id"],
            strategy="backward",
            check_sortedness=False,
        )
        .drop("method")
        .join(client_requests.select("request_ordinal", "method"), on="request_ordinal", how="left")
        .filter(pl.col("method") == "initialize")
    )
    return findings(
        cancels,
        fmt("client cancelled its initialize request ({})", line_of("request_ordinal")),
    )


@rule(
    code="LC011", name="ping-result-not-empty", severity="error", revisions=LEGACY, scope="pairing"
)
def ping_result_not_empty(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a successful response to `ping` whose `result` has members other than `_meta`.

    ## Why is this bad?
    Ping exists only to prove liveness; its answer is the empty result. Extra members
    are not part of any schema, and peers that validate the result strictly reject
    the response and may treat the connection as broken.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": "p1", "result": {"pong": true}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": "p1", "result": {}}
    ```

    ## Reference
    "The receiver MUST respond promptly with an empty response:" —
    basic/utilities/ping.mdx#behavior-requirements (2024-11-05 to 2025-11-25). Schema:
    `EmptyResult`.
    """
    result = pl.col("message").str.json_path_match("$.result")
    meta = pl.col("message").str.json_path_match("$.result._meta")
    # the compact empty result most pings get is settled without a parse
    empty = pl.lit('{"jsonrpc":"2.0","id":') + pl.col("id") + pl.lit(',"result":{}}')
    bad = (
        ctx.part("responses", "ordinal", "id", "request_method", "kind", "parse_error", "message")
        .filter(
            (pl.col("request_method") == "ping")
            & (pl.col("kind") == "response")
            & pl.col("parse_error").is_null()
        )
        .filter(pl.col("message").ne_missing(empty))
        .filter(
            result.is_not_null()
            & (result != "{}")
            & (meta.is_null() | (result != pl.concat_str(pl.lit('{"_meta":'), meta, pl.lit("}"))))
        )
    )
    return findings(bad, fmt("ping answered with a non-empty result {}", result.str.slice(0, 80)))


@rule(
    code="LC012",
    name="session-revision-unknown",
    severity="info",
    revisions=ALL_REVISIONS,
    scope="session",
)
def session_revision_unknown(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports a session whose protocol revision could not be determined, or is not a
    published revision, at its first protocol message.

    ## Why is this bad?
    Most rules depend on the revision (which methods exist, which fields are required).
    Without one only the rules that hold in every revision were applied, so the
    session may have problems this lint did not look for. The revision comes from the
    `initialize` handshake, the 2026 `_meta` protocol version, the `MCP-Protocol-Version`
    header or a revision-specific feature; a capture that starts mid-session has none.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search",
     "arguments": {}}}
    ```
    (first line of a capture that starts after the handshake)

    Use instead: capture the session from its start (with `initialize`), or name the
    revision with `mcptrace lint --revision 2025-11-25`.
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    ## Reference
    "The initialization phase MUST be the first interaction between client and server."
    — basic/lifecycle.mdx#initialization (2024-11-05 to 2025-11-25); per-request version:
    2026-07-28 basic/index.mdx#meta. Known revisions: schema/<rev>/schema.json.
    """
    unknown = ctx.session_revisions.filter(
        pl.col("revision").is_null() | ~pl.col("revision").is_in(_KNOWN)
    )
    first = (
        ctx.part("protocol", "session", "ordinal")
        .join(unknown.select("session", "revision"), on="session")
        .group_by("session")
        .agg(pl.col("ordinal").min(), pl.col("revision").first())
    )
    return findings(
        first,
        pl.when(pl.col("revision").is_null())
        .then(
            pl.lit(
                "the protocol revision of this session could not be determined; "
                "only revision-independent rules were applied"
            )
        )
        .otherwise(
            fmt(
                'session revision "{}" is not a published MCP revision; '
                "only revision-independent rules were applied",
                "revision",
            )
        ),
    )


@rule(
    code="LC013",
    name="initialize-after-modern-reply",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="session",
)
def initialize_after_modern_reply(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an `initialize` request sent after the server already answered like a 2026-07-28 server.

    Modern answers are a result with `resultType` (such as a `DiscoverResult`) or a
    modern error (-32020 header mismatch, -32021 missing client capability, -32022
    unsupported protocol version) earlier in the same session.

    ## Why is this bad?
    Falling back to the legacy handshake is only for servers that turned out to be
    legacy. A modern server that rejected the requested version listed the versions it
    supports; the client should retry with one of them. Sending `initialize` instead
    gets an error or, on a dual-era server, a needlessly stateful legacy session. The
    handshake decides the session's judged revision, so the rule applies to every
    revision.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
     "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2027-01-01",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022,
     "message": "Unsupported protocol version", "data": {"supported": ["2026-07-28"],
     "requested": "2027-01-01"}}}
    {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "server/discover",
     "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    ```

    ## Reference
    "Use one of the versions in its advertised `supported` list. Do not fall back to
    `initialize`." — 2026-07-28 basic/transports/stdio.mdx#backward-compatibility.
    """
    inits = ctx.part("requests", "session", "ordinal", "method").filter(
        (pl.col("method") == "initialize") & ordered(ctx)
    )
    # only sessions that send initialize at all can fall back to it
    modern = (
        ctx.part(
            "responses", "session", "ordinal", "direction", "kind", "result_type", "error_code"
        )
        .filter(pl.col("session").is_in(inits["session"].implode()))
        .filter(
            (pl.col("direction") != "c2s")
            & (
                ((pl.col("kind") == "response") & pl.col("result_type").is_not_null())
                | ((pl.col("kind") == "error") & pl.col("error_code").is_in(_MODERN_ERROR_CODES))
            )
        )
        .group_by("session")
        .agg(
            pl.col("ordinal").min().alias("modern_ordinal"),
            pl.col("error_code").sort_by("ordinal").first().alias("modern_code"),
        )
    )
    again = inits.join(modern, on="session").filter(pl.col("ordinal") > pl.col("modern_ordinal"))
    evidence = (
        pl.when(pl.col("modern_code").is_null())
        .then(pl.lit("a result with resultType"))
        .otherwise(fmt("error {}", "modern_code"))
    )
    return findings(
        again,
        fmt(
            "initialize sent after the server answered like a 2026-07-28 server ({} at {})",
            evidence,
            line_of("modern_ordinal"),
        ),
    )


@rule(
    code="LC014",
    name="request-before-initialized",
    severity="warning",
    revisions=LEGACY,
    scope="session",
)
def request_before_initialized(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags the client's first request (other than `ping`) sent after a successful
    InitializeResult but before its own, later, `notifications/initialized`.

    ## Why is this bad?
    The notification announces that the client is ready for normal operation, so
    operation should start after it. A server that enforces the order (several SDKs
    queue or reject requests until `initialized`) answers the early request late or
    with an error, and the race shows up as flaky start-up. A client that never sends
    the notification is LC003's business.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"logging": {}}, "serverInfo": {"name": "srv", "version": "2.0"}}}
    {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "debug"}}
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "debug"}}
    ```

    ## Reference
    "After successful initialization, the client MUST send an `initialized` notification
    to indicate it is ready to begin normal operations:" — basic/lifecycle.mdx#initialization
    (2024-11-05 to 2025-11-25); the lifecycle diagram puts it before the operation phase.
    """
    found = _requests_before_initialized(ctx).filter(pl.col("initialized_ordinal").is_not_null())
    return findings(
        found,
        fmt(
            "{} sent after the InitializeResult at {} but before notifications/initialized ({}){}",
            "method",
            line_of("result_ordinal"),
            line_of("initialized_ordinal"),
            _more_requests(),
        ),
    )


@rule(
    code="LC015",
    name="initialize-error-without-versions",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def initialize_error_without_versions(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an error answering an `initialize` request that names no protocol version the
    server supports.

    A version is named by a non-empty `error.data.supported` list, or by a version
    string (`YYYY-MM-DD`) in `error.message` or anywhere else in `error.data`. A legacy
    version that only repeats the client's proposal (`"Unsupported protocol version
    2025-06-18"`, `data.requested`) does not count: a server that supports only modern
    versions supports no legacy one.

    Only errors from a server that is evidently modern-only are judged: in a session of
    2026-07-28, or with code `-32601` (method not found: every earlier revision requires
    `initialize`) or `-32022` (the 2026 unsupported-version error) in a session of any
    revision. The session a legacy client opens is judged by the version it proposed, so
    the code is what shows that the server is a modern one.

    ## Why is this bad?
    A legacy client that reaches a modern-only server has no way forward: it cannot
    discover the server's versions, and the error is all it can show its user. An error
    such as `Method not found` reads like a broken server; one that names `2026-07-28`
    tells the user to upgrade the client.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601,
     "message": "initialize is not supported; this server speaks MCP 2026-07-28",
     "data": {"supported": ["2026-07-28"], "requested": "2025-06-18"}}}
    ```

    ## Reference
    "A server that supports only modern versions SHOULD name the protocol versions it
    supports in any error it returns to an `initialize` request, on any transport: legacy
    clients have no fall-forward mechanism, and this message may be the only diagnostic
    they can surface to users." —
    docs/specification/2026-07-28/basic/versioning.mdx#backward-compatibility-with-initialization-based-versions
    (2026-07-28). The spec names no field; `data.supported` is the field of
    `UnsupportedProtocolVersionError` (schema).
    """
    errors = initialize_calls(ctx).filter(
        (pl.col("outcome") == "error") & pl.col("response_ordinal").is_not_null()
    )
    if errors.is_empty():
        return findings(errors.rename({"response_ordinal": "ordinal"}), "")
    errors = ctx.lookup(
        errors.select("response_ordinal", "proposed"),
        "response_ordinal",
        inner=True,
        _kind="kind",
        _parse_error="parse_error",
        _code="error_code",
        _text="error_message",
        _message="message",
        _modern="modern",
    ).filter(
        (pl.col("_kind") == "error")
        & pl.col("_parse_error").is_null()
        & (pl.col("_modern") | pl.col("_code").is_in(_MODERN_ONLY_CODES))
    )
    data = pl.col("_message").str.json_path_match("$.error.data")
    errors = errors.with_columns(
        _supported=pl.col("_message").str.json_path_match("$.error.data.supported"),
        _named=pl.concat_list(
            pl.col("_text").str.extract_all(_VERSION_TEXT).fill_null([]),
            data.str.extract_all(_VERSION_TEXT).fill_null([]),
        ),
    )
    # a legacy proposal echoed back names nothing the modern-only server supports
    echo = pl.concat_list(pl.when(pl.col("proposed") < "2026-07-28").then(pl.col("proposed")))
    bad = errors.filter(
        ~(pl.col("_supported").str.starts_with("[") & (pl.col("_supported") != "[]")).fill_null(
            False
        )
        & (pl.col("_named").list.set_difference(echo).list.len() == 0)
    ).rename({"response_ordinal": "ordinal"})
    code = pl.col("_code").cast(pl.String).fill_null("?")
    text = pl.col("_text").fill_null("").str.slice(0, 80)
    return findings(
        bad,
        fmt(
            'error {} ("{}") answering initialize names no protocol version the server supports',
            code,
            text,
        ),
    )


@rule(
    code="LC016",
    name="dual-era-client-not-probing",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="session",
)
def dual_era_client_not_probing(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags the first request of a dual-era client that is not a `server/discover` probe.

    A client shows it speaks both eras when, in one session, it sends `initialize` and
    also requests carrying the 2026 `_meta` protocol version (or `server/discover`).
    Such a client should open the session with `server/discover`; its first request is
    flagged when it is anything else (a modern `tools/call`, `initialize`, `ping`).

    Left alone: a client whose first request is modern and which probes with
    `server/discover` before its first `initialize`, or whose first request is
    `initialize` and whose first modern request is `server/discover`: versioning.mdx
    lets a client cache the server's era across restarts (MAY) and re-probe when the
    cached assumption fails. Streamable HTTP sessions are left alone too: there a
    dual-era client MAY try any modern request first. Only the client's own messages
    are compared, so captures split by direction are judged as well.

    A session with `initialize` is usually judged by the revision it negotiates (a
    legacy one) and one without by its `_meta` version, so the rule applies to every
    revision: the evidence is the traffic itself, not the judged revision.

    ## Why is this bad?
    Without the probe the client learns the server's era by trial: a modern request
    sent first may be processed under legacy semantics by a legacy server that does not
    check for `initialize` (an era-ambiguous `tools/call` runs with no negotiated
    version or capabilities), and an `initialize` sent first to a modern server sets up
    a needlessly stateful legacy session or fails. The probe gives a deterministic
    answer before anything else happens.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search",
     "arguments": {}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
     "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    ## Reference
    "A client that supports both modern (per-request-metadata) MCP versions and a
    legacy version that requires an `initialize` handshake **SHOULD** probe with
    [`server/discover`][server-discover] before sending any other request, setting its
    preferred modern version in `_meta`." —
    docs/specification/2026-07-28/basic/transports/stdio.mdx#backward-compatibility
    (2026-07-28). The cache: "Clients **SHOULD** cache the result for the lifetime of
    the server process (stdio) or origin (HTTP), and **MAY** persist it across restarts
    of the same server configuration, re-probing if the cached assumption later fails."
    — basic/versioning.mdx#backward-compatibility-with-initialization-based-versions.
    """
    inits = initialize_calls(ctx)
    if inits.is_empty():
        return findings(inits.rename({"request_ordinal": "ordinal"}), "")
    modern = (pl.col("protocol_version").is_not_null() & (pl.col("method") != "initialize")) | (
        pl.col("method") == "server/discover"
    )
    client = pl.col("direction") != "s2c"
    columns = ("session", "ordinal", "direction", "method", "protocol_version")
    # sessions with an initialize and a modern request of the client: usually none
    dual = (
        ctx.part("requests", *columns)
        .filter(pl.col("session").is_in(inits["session"].unique().implode()) & modern & client)
        .select(pl.col("session").unique())
    )
    if dual.is_empty():
        return findings(dual.with_columns(ordinal=pl.lit(None, pl.Int64)), "")
    rows = ctx.part("requests", *columns).filter(
        pl.col("session").is_in(dual["session"].implode()) & client
    )
    # Streamable HTTP lets the client try any modern request first
    rows = (
        ctx.lookup(rows, "ordinal", _transport="transport")
        .filter(pl.col("_transport") != "http")
        .sort("ordinal")
    )

    def first(condition: pl.Expr, alias: str) -> pl.Expr:
        return pl.col("ordinal").filter(condition).min().alias(alias)

    sessions = rows.group_by("session").agg(
        pl.col("ordinal").first(),
        pl.col("method").first(),
        modern.first().alias("first_modern"),
        first(pl.col("method") == "initialize", "init_ordinal"),
        first(modern, "modern_ordinal"),
        first(pl.col("method") == "server/discover", "discover_ordinal"),
    )
    discover = pl.col("discover_ordinal")
    # a cached era that turned out wrong, then the re-probe versioning.mdx allows
    reprobed = (pl.col("first_modern") & (discover < pl.col("init_ordinal"))) | (
        (pl.col("method") == "initialize") & (discover == pl.col("modern_ordinal"))
    )
    bad = sessions.filter((pl.col("method") != "server/discover") & ~reprobed.fill_null(False))
    return findings(
        bad,
        fmt(
            "the client's first request is {}, not a server/discover probe, though it speaks "
            "both eras (initialize at {}, 2026 `_meta` request at {})",
            "method",
            line_of("init_ordinal"),
            line_of("modern_ordinal"),
        ),
    )


def reopenings(ctx: LintContext) -> pl.DataFrame:
    """The client's `initialize` requests that open a session anew: session, ordinal and
    ``previous`` (the request ordinal of the session's latest earlier `initialize`, which
    succeeded). An `initialize` must open a session, so one sent after a successful
    handshake opens another: two connections recorded under one session name
    (`mcptrace record --session` run twice), each numbering its ids from 0. A retry
    after a refused or unanswered `initialize` is the same session's negotiation."""
    return ctx.memo("pairing.reopenings", _build_reopenings)


def _build_reopenings(ctx: LintContext) -> pl.DataFrame:
    # sorted by session and ordinal, a request's predecessor in its session is the row
    # above it (a window over the sessions cost ~2 ms on a thousand rows)
    inits = (
        ctx.calls.select("session", "outcome", "method", "direction", ordinal="request_ordinal")
        .filter((pl.col("method") == "initialize") & (pl.col("direction") != "s2c"))
        .filter(pl.col("ordinal").is_not_null())
        .sort("session", "ordinal")
    )
    return (
        inits.with_columns(previous=pl.col("ordinal").shift(1))
        .filter(
            pl.col("session").eq_missing(pl.col("session").shift(1))
            & (pl.col("outcome").shift(1) == "ok")
        )
        .select("session", "ordinal", "previous")
        .sort("ordinal")
    )


@rule(
    code="LC017",
    name="initialize-repeated",
    severity="info",
    revisions=LEGACY,
    scope="session",
)
def initialize_repeated(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Notes an `initialize` request sent after the session's handshake had succeeded.

    A retry after a refused or unanswered `initialize` is the handshake's own
    negotiation and is not noted. From the noted `initialize` on, the session counts as
    opened anew: PR001 compares request ids only within one opening.

    ## Why is this bad?
    Initialization is the first interaction of a session, once. A second handshake is
    either a client starting over on the same connection, which the server may refuse
    or which resets what was negotiated, or, far more often in captures, a second
    connection recorded under the same session name (`mcptrace record --session NAME`
    run twice, files of two runs given one name). Everything judged per session (ids,
    capabilities, subscriptions, log levels) then mixes two sessions.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {...}}
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", ...}}
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {...}}
    ```

    Use instead: record each connection under its own session name (the default of
    `mcptrace record`), or open a new connection to start over.

    ## Reference
    "The initialization phase MUST be the first interaction between client and server."
    — basic/lifecycle.mdx#initialization (2024-11-05 to 2025-11-25).
    """
    again = reopenings(ctx)
    return findings(
        again,
        fmt(
            "initialize sent again after the successful handshake at {}: from here the "
            "session is judged as opened anew (two connections under one session name?)",
            line_of("previous"),
        ),
    )
