"""CP: capability gates: requests, notifications and input requests against declared capabilities.

Where capabilities come from is an era question (SPEC_RULES §1):

* legacy revisions: the server's from the InitializeResult, the client's from the
  ``initialize`` params;
* 2026-07-28: the server's from the ``server/discover`` result, the client's from the
  ``_meta["io.modelcontextprotocol/clientCapabilities"]`` of each request.

The sessions table holds the handshake's capabilities as JSON text. Sessions are few,
so their capability objects are parsed once in Python (one per distinct text) and
turned into a small ``session, side, gate, declared`` frame that the message rows
join; the messages themselves stay in Polars. A check applies only when the
capabilities are known (the handshake or discovery is in the capture).
"""

from __future__ import annotations

from functools import cache

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import ALL_REVISIONS, LEGACY, MODERN, findings, rule, since
from mcptrace.linter.rules.lifecycle import ordered
from mcptrace.message_text import json_paths
from mcptrace.protocol import CLIENT_CAPABILITIES_KEY, METHODS, has_capability

#: 2026 input requests and the client capability each needs (mrtr.mdx; SPEC_RULES R046).
_INPUT_REQUEST_GATES = (
    ("elicitation/create", "elicitation"),
    ("sampling/createMessage", "sampling"),
    ("roots/list", "roots"),
)


@cache
def _gates() -> pl.DataFrame:
    """revision, method, kind, directions, gate_side, gate: every gated wire method."""
    rows = [
        (rev, name, spec.kind, sorted(spec.directions), spec.gate_side, spec.gate)
        for rev, table in METHODS.items()
        for name, spec in table.items()
        if spec.gate is not None and not spec.embedded
    ]
    return pl.DataFrame(
        rows,
        schema={
            "revision": pl.String,
            "method": pl.String,
            "spec_kind": pl.String,
            "directions": pl.List(pl.String),
            "gate_side": pl.String,
            "gate": pl.String,
        },
        orient="row",
    )


@cache
def _kind_gates(kind: str, side: str | None) -> pl.DataFrame:
    """revision, method, direction, gate, side: the gates of ``kind`` methods (of ``side``
    only, when given), a row per direction the method travels (the same for every lint:
    built once)."""
    gates = (
        _gates()
        .filter(pl.col("spec_kind") == kind)
        .explode("directions")
        .select(
            "revision",
            "method",
            pl.col("directions").alias("direction"),
            "gate",
            side=pl.when(pl.col("gate_side") != "receiver")
            .then(pl.col("gate_side"))
            .when(pl.col("directions") == "c2s")
            .then(pl.lit("server"))
            .otherwise(pl.lit("client")),
        )
    )
    return gates if side is None else gates.filter(pl.col("side") == side)


@cache
def _gate_paths() -> tuple[str, ...]:
    return tuple(
        sorted({spec.gate for table in METHODS.values() for spec in table.values() if spec.gate})
    )


def _declared(ctx: LintContext) -> pl.DataFrame:
    """session, revision, side, gate, declared: for every session whose capabilities are
    known."""
    return ctx.memo("capabilities.declared", _build_declared)


def _build_declared(ctx: LintContext) -> pl.DataFrame:
    """See :func:`_declared`.

    The client side is left out for sessions judged 2026-07-28, where client
    capabilities are per request, not per session.
    """
    sides = (
        ctx.sessions.select("session", "client_capabilities", "server_capabilities")
        .join(ctx.session_revisions.select("session", "revision"), on="session", how="left")
        .unpivot(
            ["client_capabilities", "server_capabilities"],
            index=["session", "revision"],
            variable_name="side",
            value_name="text",
        )
        .with_columns(pl.col("side").str.strip_suffix("_capabilities"))
        .filter(
            pl.col("text").is_not_null()
            & ((pl.col("side") == "server") | (pl.col("revision").fill_null("") < "2026-07-28"))
        )
    )
    # one parse per distinct capabilities text: sessions of one host/server repeat them
    rows: list[tuple[str, str, bool]] = []
    for text in sides["text"].unique().to_list():
        try:
            caps = _json.loads(text)
        except _json.JSONDecodeError:
            continue
        if isinstance(caps, dict):
            rows.extend((text, path, has_capability(caps, path)) for path in _gate_paths())
    table = pl.DataFrame(
        rows,
        schema={"text": pl.String, "gate": pl.String, "declared": pl.Boolean},
        orient="row",
    )
    return sides.join(table, on="text").select("session", "revision", "side", "gate", "declared")


def _undeclared(
    frame: pl.DataFrame, ctx: LintContext, kind: str, side: str | None = None
) -> pl.DataFrame:
    """Rows of ``frame`` (of one ``kind``) whose method is gated in their revision, that
    travel a direction the method allows, and whose gate is known not to be declared
    (unknown capabilities are kept out), with ``side`` (whose capability gates it) and
    ``gate``. ``side`` keeps only the gates of that side."""
    return _gated(frame, ctx, kind, side, declared=False)


def _gated(
    frame: pl.DataFrame, ctx: LintContext, kind: str, side: str | None, *, declared: bool
) -> pl.DataFrame:
    """As :func:`_undeclared`, keeping the rows whose gate is known to be ``declared``
    or known not to be. A row's ``revision`` must be its session's, as in every frame of
    the context (the messages', the calls'); a ``frame`` without one gets its session's
    (the parts' ``revision`` column, filtered from every message's, need not be built)."""
    gates = _kind_gates(kind, side)
    # the verdict depends only on the session (its capabilities and its revision), the
    # method and the direction: the keys to keep come from the small tables (a few
    # thousand rows), and only the rows of their methods are joined with them, not every
    # request on four columns
    keys = (
        _declared(ctx)
        .filter(pl.col("declared") == declared)
        .join(gates, on=["revision", "side", "gate"])
        .select(
            "session",
            "revision",
            "method",
            pl.col("direction").cast(frame.schema["direction"]),
            "side",
            "gate",
        )
    )
    keep = [c for c in ("ordinal", "response_ordinal") if c in frame.columns]
    own = [c for c in ("revision",) if c in frame.columns]
    rows = frame.select(*keep, "session", *own, "method", "direction").filter(
        pl.col("method").is_in(keys["method"].unique().implode())
    )
    return rows.join(keys.drop(own), on=["session", "method", "direction"]).select(
        *keep, "session", "revision", "method", "direction", "side", "gate"
    )


def _modern_probe() -> pl.Expr:
    """A legacy session's request that carries the 2026 ``_meta`` version: a dual-era probe."""
    return (
        ~pl.col("modern")
        & (pl.col("method") != "initialize")
        & pl.col("protocol_version").is_not_null()
    )


def _undeclared_requests(ctx: LintContext) -> pl.DataFrame:
    return ctx.memo("capabilities.undeclared_requests", _build_undeclared_requests)


def _build_undeclared_requests(ctx: LintContext) -> pl.DataFrame:
    requests = ctx.part(
        "requests",
        "ordinal",
        "session",
        "method",
        "direction",
        "modern",
        "protocol_version",
    ).filter(~_modern_probe())
    return _undeclared(requests, ctx, "request")


def _request_message() -> pl.Expr:
    return fmt(
        "{} needs the {} capability `{}`, which {} did not declare",
        "method",
        "side",
        "gate",
        pl.col("side").replace_strict(
            {"server": "the server's InitializeResult", "client": "the client's initialize"}
        ),
    )


@rule(
    code="CP001",
    name="request-capability-not-negotiated",
    severity="error",
    revisions=since("2025-06-18", "2025-11-25"),
    scope="session",
)
def request_capability_not_negotiated(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a request that needs a capability the receiving side did not declare in the handshake.

    Client requests need the server's capability (`tools/call` needs `tools`,
    `resources/subscribe` needs `resources.subscribe`, `completion/complete` needs
    `completions`); server requests need the client's (`roots/list` needs `roots`,
    `sampling/createMessage` needs `sampling`, `elicitation/create` needs
    `elicitation`). Sessions without a captured handshake are not judged.

    ## Why is this bad?
    Capabilities are the contract of the session: a peer that did not declare a feature
    has no handler for it and answers -32601 (Method not found) or an error, and the
    caller wastes a round trip or fails a user action.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}}, "serverInfo": {"name": "srv", "version": "2.0"}}}
    {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}
    ```

    Use instead: only call what the server declared
    ```json
    {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
    ```

    ## Reference
    "Only use capabilities that were successfully negotiated" (a MUST since 2025-06-18) —
    basic/lifecycle.mdx#operation (2025-06-18, 2025-11-25). The gates: §1 of SPEC_RULES,
    from each feature page's Capabilities section.
    """
    return findings(_undeclared_requests(ctx), _request_message())


@rule(
    code="CP002",
    name="request-capability-not-negotiated-pre-2025-06-18",
    severity="warning",
    revisions=since("2024-11-05", "2025-03-26"),
    scope="session",
)
def request_capability_not_negotiated_early(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a request that needs a capability the receiving side did not declare, in
    2024-11-05 and 2025-03-26.

    The same check as CP001; these revisions made it a SHOULD, hence a warning.
    Sessions without a captured handshake are not judged.

    ## Why is this bad?
    A peer that did not declare a feature has no handler for it: the request fails
    with -32601 (Method not found) or an error after a wasted round trip.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-03-26",
     "capabilities": {}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {"messages": [],
     "maxTokens": 10}}
    ```

    Use instead: only send `sampling/createMessage` to a client that declared it
    ```json
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-03-26",
     "capabilities": {"sampling": {}}, "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    ## Reference
    "Only use capabilities that were successfully negotiated" (under "Both parties
    SHOULD:") — basic/lifecycle.mdx#operation (2024-11-05, 2025-03-26).
    """
    return findings(_undeclared_requests(ctx), _request_message())


@rule(
    code="CP003",
    name="undeclared-server-feature-served",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def undeclared_server_feature_served(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a successful server answer to a request whose feature the server never declared.

    For example a `tools/call` result from a server whose InitializeResult (legacy) or
    `server/discover` result (2026-07-28) has no `tools` capability. Error answers are
    fine: that is how an undeclared feature should be refused.

    ## Why is this bad?
    The server evidently supports the feature but hides it: clients that respect
    capabilities never offer it to users, and the ones that use it anyway rely on
    behaviour nothing promised.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": "d", "result": {"resultType": "complete",
     "supportedVersions": ["2026-07-28"], "capabilities": {"resources": {}}, "ttlMs": 0,
     "cacheScope": "public"}}
    {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "content": [{"type": "text",
     "text": "ok"}]}}
    ```
    (the second answers a `tools/call`)

    Use instead: declare the feature
    ```json
    {"jsonrpc": "2.0", "id": "d", "result": {"resultType": "complete",
     "supportedVersions": ["2026-07-28"], "capabilities": {"resources": {}, "tools": {}},
     "ttlMs": 0, "cacheScope": "public"}}
    ```

    ## Reference
    "Servers that support tools MUST declare the `tools` capability:" —
    server/tools.mdx#capabilities (all revisions; likewise prompts, resources,
    completions and logging on their pages).
    """
    # the requests CP001/CP002 found undeclared, kept where the server answered them
    # (each request has one call): usually none, so no call of the capture is looked at
    requests = _undeclared_requests(ctx).filter(
        (pl.col("side") == "server") & (pl.col("direction") == "c2s")
    )
    bad = ctx.call_lookup(
        requests, "ordinal", response_ordinal="response_ordinal", outcome="outcome"
    ).filter(
        pl.col("response_ordinal").is_not_null()
        & pl.col("outcome").is_in(["ok", "tool_error", "input_required"])
    )
    bad = bad.with_columns(ordinal=pl.col("response_ordinal"))
    return findings(
        bad,
        fmt(
            "server answered {} successfully but never declared the `{}` capability",
            "method",
            "gate",
        ),
    )


@rule(
    code="CP009",
    name="declared-capability-method-not-found",
    severity="info",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def declared_capability_method_not_found(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Notes an error `-32601` (Method not found) answering a request whose capability the
    answering side declared.

    For example `resources/subscribe` refused by a server that declared
    `resources.subscribe`, `logging/setLevel` by one that declared `logging`, or
    `roots/list` by a client that declared `roots`. Capabilities come from the handshake
    (legacy revisions) or the `server/discover` result (2026-07-28); sessions without
    them are not judged. `tools/call` is left out: `-32601` is how 2025-11-25 refuses a
    call that breaks a tool's task support (TK008, TK009).

    ## Why is this bad?
    A capability says the feature is there, and the peer plans on it: a client that saw
    `subscribe` counts on update notifications, a server that saw `roots` asks for them.
    "Method not found" contradicts the declaration, so either the declaration or the
    handler is wrong. No sentence of the spec requires the two to agree, hence a note.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18",
     "capabilities": {"resources": {"subscribe": true}}, "serverInfo": {"name": "srv",
     "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe", "params": {"uri": "file:///a"}}
    {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "Method not found"}}
    ```

    Use instead: declare only what is handled
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18",
     "capabilities": {"resources": {}}, "serverInfo": {"name": "srv", "version": "1.0"}}}
    ```

    ## Reference
    "Clients and servers establish which optional protocol features will be available
    during the session" (basic/lifecycle.mdx#capability-negotiation, legacy revisions);
    `resources.subscribe`: "Whether the client can subscribe to be notified of changes to
    individual resources" (server/resources.mdx#capabilities, every revision). JSON-RPC
    2.0 §5.1: -32601 "The method does not exist / is not available."
    """
    refused = ctx.calls.filter(
        (pl.col("outcome") == "error")
        & (pl.col("error_code") == -32601)
        & (pl.col("method") != "tools/call")
        & pl.col("response_ordinal").is_not_null()
    ).select("response_ordinal", "session", "revision", "method", "direction")
    if refused.is_empty():
        return findings(refused, "")
    bad = _gated(refused, ctx, "request", None, declared=True)
    answerer = (
        pl.when(pl.col("side") == "server").then(pl.lit("server")).otherwise(pl.lit("client"))
    )
    return findings(
        bad.with_columns(ordinal=pl.col("response_ordinal")),
        fmt(
            "{} answered {} with -32601 (Method not found) but declared the `{}` capability",
            answerer,
            "method",
            "gate",
        ),
    )


@rule(
    code="CP004",
    name="request-capability-not-discovered",
    severity="info",
    revisions=MODERN,
    scope="session",
)
def request_capability_not_discovered(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports a 2026 client request whose feature the session's `server/discover` result did
    not declare.

    Only sessions with a `server/discover` result in the capture are judged.

    ## Why is this bad?
    The client asked the server what it supports and then used something else. The
    server should refuse it with -32601 (Method not found); if it answers, CP003
    reports the server. Either way the client ignored the capabilities it discovered.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete",
     "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "ttlMs": 0,
     "cacheScope": "public"}}
    {"jsonrpc": "2.0", "id": 2, "method": "prompts/list",
     "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    ```

    Use instead: call only what `capabilities` lists
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list",
     "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    ```

    ## Reference
    "The server replies with its supported protocol versions, capabilities, and identity."
    — docs/specification/2026-07-28/server/discover.mdx#response; each feature is gated,
    e.g. "Servers that support tools MUST declare the `tools` capability:" —
    server/tools.mdx#capabilities (2026-07-28).
    """
    # the requests CP001/CP002 found undeclared: they leave out only legacy sessions'
    # probes, and findings outside 2026 sessions are dropped anyway
    bad = _undeclared_requests(ctx).filter(pl.col("side") == "server")
    return findings(
        bad,
        fmt(
            "{} needs the server capability `{}`, which the server/discover result did not declare",
            "method",
            "gate",
        ),
    )


@rule(
    code="CP005",
    name="input-request-capability-not-declared",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def input_request_capability_not_declared(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an `input_required` result asking for input the request's client capabilities do
    not cover.

    `elicitation/create` needs `elicitation`, `sampling/createMessage` needs `sampling`
    and `roots/list` needs `roots`, in the `io.modelcontextprotocol/clientCapabilities`
    of the very request being answered (not of earlier ones).

    ## Why is this bad?
    The client said, on this request, what it can do. It cannot satisfy an input request
    it has no support for, so the retry never comes and the tool call fails; the server
    should have answered -32021 (missing required client capability) or done without.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "login",
     "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required",
     "inputRequests": {"a": {"method": "elicitation/create", "params": {"message": "User?",
     "requestedSchema": {"type": "object", "properties": {}}}}}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32021, "message": "Elicitation required",
     "data": {"requiredCapabilities": {"elicitation": {}}}}}
    ```

    ## Reference
    "Servers MUST NOT send an `inputRequests` that the client has not declared support for
    in its capabilities." —
    docs/specification/2026-07-28/basic/patterns/mrtr.mdx#server-requirements-basic-workflow
    (2026-07-28).
    """
    answered = (
        ctx.input_required.filter(pl.col("direction") != "c2s")
        .filter(pl.col("inputs").is_not_null())
        .select("ordinal", "request_ordinal", "inputs")
    )
    # the answered requests' texts, looked up by ordinal and parsed only for these rows
    # (each distinct body once: retries and parallel calls repeat them)
    answered = (
        ctx.lookup(answered, "request_ordinal", _request="message")
        .pipe(
            json_paths,
            text="_request",
            client_caps=f'$.params._meta["{CLIENT_CAPABILITIES_KEY}"]',
        )
        .drop("_request")
        .filter(pl.col("client_caps").str.starts_with("{"))
    )

    def missing(method: str, capability: str) -> pl.Expr:
        value = pl.col("client_caps").str.json_path_match(f"$.{capability}")
        asked = pl.col("inputs").str.contains(f'"method":"{method}"', literal=True)
        declared = value.is_not_null() & (value != "false")
        return pl.when(asked & ~declared).then(pl.lit(f"{method} (needs `{capability}`)"))

    # the verdict depends only on the two texts, which clients and servers repeat
    texts = ["client_caps", "inputs"]
    verdicts = (
        answered.select(texts)
        .unique()
        .with_columns(
            missing=pl.concat_list(
                [missing(m, c) for m, c in _INPUT_REQUEST_GATES]
            ).list.drop_nulls()
        )
        .filter(pl.col("missing").list.len() > 0)
    )
    bad = answered.join(verdicts, on=texts, maintain_order="left")
    return findings(
        bad,
        fmt(
            "input_required asks for {} that the request's clientCapabilities do not declare",
            pl.col("missing").list.join(", "),
        ),
    )


def _undeclared_notifications(ctx: LintContext) -> pl.DataFrame:
    """:func:`_undeclared` of every notification, found once: CP006 reads the logs among
    them, CP007 the others."""
    return ctx.memo("capabilities.undeclared_notifications", _build_undeclared_notifications)


def _build_undeclared_notifications(ctx: LintContext) -> pl.DataFrame:
    notifications = ctx.part("notifications", "ordinal", "session", "method", "direction")
    return _undeclared(notifications, ctx, "notification")


def _first_per_session(rows: pl.DataFrame) -> pl.DataFrame:
    return (
        rows.sort("ordinal")
        .group_by("session", "method", "side", "gate")
        .agg(pl.col("ordinal").first(), pl.len().alias("uses"))
    )


def _times() -> pl.Expr:
    return pl.when(pl.col("uses") == 1).then(pl.lit("once")).otherwise(fmt("{} times", "uses"))


@rule(
    code="CP006",
    name="log-without-logging-capability",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="session",
)
def log_without_logging_capability(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports, once per session, `notifications/message` from a server that did not declare `logging`.

    Legacy capabilities come from the InitializeResult, 2026 ones from the
    `server/discover` result; sessions where neither is captured are not judged.

    ## Why is this bad?
    Clients decide from the capability whether to offer log levels (`logging/setLevel`,
    the 2026 `logLevel` `_meta`) and whether to expect log traffic. Undeclared logs may
    be dropped, and the client had no way to turn their level down.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}}, "serverInfo": {"name": "srv", "version": "2.0"}}}
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}, "logging": {}}, "serverInfo": {"name": "srv", "version": "2.0"}}}
    ```

    ## Reference
    "Servers that emit log message notifications MUST declare the `logging` capability:"
    — server/utilities/logging.mdx#capabilities (all revisions).
    """
    logs = _undeclared_notifications(ctx).filter(pl.col("method") == "notifications/message")
    if logs.is_empty():
        return findings(logs, "")
    bad = _first_per_session(logs)
    return findings(
        bad,
        fmt(
            "server sent notifications/message {} in this session without declaring `logging`",
            _times(),
        ),
    )


@rule(
    code="CP007",
    name="notification-capability-not-declared",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="session",
)
def notification_capability_not_declared(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports, once per session and method, a change notification sent without the capability
    that announces it.

    `notifications/tools/list_changed`, `.../prompts/list_changed` and
    `.../resources/list_changed` need the server's `listChanged` sub-capability;
    `notifications/resources/updated` needs `resources.subscribe`;
    `notifications/roots/list_changed` needs the client's `roots.listChanged`;
    `notifications/elicitation/complete` needs the client's `elicitation.url`.
    `notifications/message` is CP006's. Unknown capabilities are not judged.

    ## Why is this bad?
    `listChanged` is the promise to send these notifications; without it a client
    polls or caches the list and may not listen for changes at all, so the update is
    lost. Sending them anyway uses a capability that was never negotiated.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}}, "serverInfo": {"name": "srv", "version": "2.0"}}}
    {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {"listChanged": true}}, "serverInfo": {"name": "srv",
     "version": "2.0"}}}
    ```

    ## Reference
    "When the list of available tools changes, servers that declared the `listChanged`
    capability SHOULD send a notification:" — server/tools.mdx#list-changed-notification
    (all revisions); with "Only use capabilities that were successfully negotiated" —
    basic/lifecycle.mdx#operation (2024-11-05 to 2025-11-25).
    """
    notes = _undeclared_notifications(ctx).filter(pl.col("method") != "notifications/message")
    bad = _first_per_session(notes)
    return findings(
        bad,
        fmt(
            "{} sent {} in this session, but the {} did not declare `{}`",
            "method",
            _times(),
            "side",
            "gate",
        ),
    )


@rule(
    code="CP008",
    name="resource-updated-without-subscription",
    severity="error",
    revisions=LEGACY,
    scope="session",
)
def resource_updated_without_subscription(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `notifications/resources/updated` for a URI the client has not subscribed to.

    A subscription starts with the client's `resources/subscribe` of the URI (or of a
    parent: the notified URI may be a sub-resource) unless the server refused it with
    an error, and ends when a `resources/unsubscribe` of it is answered. Sessions
    captured without their `initialize` are not judged, nor are updates whose place the
    capture does not record (events of a HAR's server stream, placed by mcptrace).

    ## Why is this bad?
    Update notifications are strictly opt-in per resource. Unrequested ones cost the
    client work (it typically re-reads the resource) and leak what else the server is
    watching; after an unsubscribe they show the server ignores the client's request.

    ## Example
    ```json
    {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}}
    ```
    (no `resources/subscribe` of `file:///a` earlier in the session)

    Use instead: notify only subscribed URIs
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe", "params": {"uri": "file:///a"}}
    {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}}
    ```

    ## Reference
    "The protocol supports optional subscriptions to resource changes." —
    server/resources.mdx#subscriptions (2024-11-05 to 2025-11-25); schema
    `ResourceUpdatedNotification`: "This might be a sub-resource of the one that the
    client actually subscribed to."
    """
    started = (
        ctx.part("requests", "session", "ordinal", "method")
        .filter(pl.col("method") == "initialize")
        .group_by("session")
        .agg(pl.col("ordinal").min().alias("init_ordinal"))
    )
    # the target of these few notifications only, not the column of every notification
    updates = (
        ctx.part("notifications", "session", "ordinal", "method", "direction")
        .filter(
            (pl.col("method") == "notifications/resources/updated")
            & (pl.col("direction") == "s2c")
            & ordered(ctx)
            & ctx.in_place()
        )
        .pipe(ctx.lookup, "ordinal", target="target")
        .filter(pl.col("target").is_not_null())
        .join(started, on="session")
        .filter(pl.col("ordinal") > pl.col("init_ordinal"))
        .select("session", "ordinal", pl.col("target").alias("uri"))
    )
    if updates.is_empty():
        return findings(updates, "")
    client_calls = ctx.calls.filter(
        pl.col("method").is_in(["resources/subscribe", "resources/unsubscribe"])
        & (pl.col("direction") == "c2s")
        & pl.col("target").is_not_null()
    )
    subscribes = client_calls.filter(
        (pl.col("method") == "resources/subscribe") & (pl.col("outcome") != "error")
    ).select(
        "session", pl.col("target").alias("sub_uri"), pl.col("request_ordinal").alias("sub_ordinal")
    )
    unsubscribes = (
        client_calls.filter(
            (pl.col("method") == "resources/unsubscribe") & (pl.col("outcome") == "ok")
        )
        .select(
            "session",
            pl.col("target").alias("sub_uri"),
            pl.col("response_ordinal").alias("unsub_ordinal"),
        )
        .sort("unsub_ordinal")
    )
    covered = (
        updates.join(subscribes, on="session")
        .filter(
            (pl.col("sub_ordinal") < pl.col("ordinal"))
            & pl.col("uri").str.starts_with(pl.col("sub_uri"))
        )
        .sort("ordinal")
        .join_asof(
            unsubscribes,
            left_on="ordinal",
            right_on="unsub_ordinal",
            by=["session", "sub_uri"],
            strategy="backward",
            check_sortedness=False,
        )
        .filter(
            pl.col("unsub_ordinal").is_null() | (pl.col("unsub_ordinal") < pl.col("sub_ordinal"))
        )
        .select("ordinal")
    )
    bad = updates.join(covered, on="ordinal", how="anti")
    return findings(
        bad,
        fmt("resources/updated for {} without an active resources/subscribe of it", "uri"),
    )
