"""MD: methods and directions per revision, the 2026 one-way request rule, deprecations.

The catalogue in :mod:`mcptrace.protocol` says, per revision, which methods exist as
JSON-RPC messages, whether each is a request or a notification, and which way it
travels. These rules compare every request and notification with it.

A request is judged by the session's revision, except a non-``initialize`` request
that carries its own published revision in the 2026 ``_meta`` protocol version: a
dual-era client's modern probe (``server/discover`` before falling back to
``initialize``) is judged by the revision it names. Objects without a ``jsonrpc``
member are not JSON-RPC messages (JR rules report them); they are also the shape
of 2026 embedded input requests when a capture logs one alone, so the method and
direction rules leave them out.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import polars as pl

from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import ALL_REVISIONS, MODERN, findings, rule
from mcptrace.linter.rules.envelope import plain_jsonrpc
from mcptrace.protocol import METHODS, REVISIONS, revisions_of

#: a tuple, not a Series: `is_in` with a Series of the column's own type is deprecated
_KNOWN = tuple(REVISIONS)
_META = "io.modelcontextprotocol"


@cache
def _wire() -> pl.DataFrame:
    """judge, method, spec_kind, directions: every wire method of every revision."""
    rows = [
        (rev, name, spec.kind, sorted(spec.directions))
        for rev, table in METHODS.items()
        for name, spec in table.items()
        if not spec.embedded
    ]
    return pl.DataFrame(
        rows,
        schema={
            "judge": pl.String,
            "method": pl.String,
            "spec_kind": pl.String,
            "directions": pl.List(pl.String),
        },
        orient="row",
    )


@cache
def _defined_in() -> dict[str, str]:
    """method -> the revisions that define it as a JSON-RPC message, as text."""
    names = {name for table in METHODS.values() for name in table}
    out = {}
    for name in sorted(names):
        revs = revisions_of(name)
        out[name] = ", ".join(revs) if revs else "none (only embedded in input_required results)"
    return out


@cache
def _every_method() -> pl.Series:
    return pl.Series(
        sorted({name for table in METHODS.values() for name in table}), dtype=pl.String
    )


def times(column: str) -> pl.Expr:
    """``once`` or ``N times`` for a count column."""
    return pl.when(pl.col(column) == 1).then(pl.lit("once")).otherwise(fmt("{} times", column))


def _judged(ctx: LintContext) -> pl.DataFrame:
    """Requests and notifications with a readable body and a ``jsonrpc`` member, plus
    ``judge``: the revision each is judged by (see the module docstring)."""
    return ctx.memo("methods.judged", _build_judged)


def _judge() -> pl.Expr:
    """The revision a row of the protocol part is judged by (see the module docstring)."""
    own = (
        (pl.col("kind") == "request")
        & (pl.col("method") != "initialize")
        & pl.col("protocol_version").is_in(_KNOWN)
    )
    return pl.when(own).then(pl.col("protocol_version")).otherwise(pl.col("revision"))


def _rows(ctx: LintContext) -> pl.DataFrame:
    """By row of the protocol part: ``named`` (a request or notification with a method)
    and ``judged`` (one of those that :func:`_judged` has)."""
    return ctx.memo("methods.rows", _build_rows)


def _build_rows(ctx: LintContext) -> pl.DataFrame:
    flags = ctx.part("protocol", "kind", "method", "parse_error").select(
        named=(
            pl.col("kind").is_in(["request", "notification"]) & pl.col("method").is_not_null()
        ).fill_null(False),
        readable=pl.col("parse_error").is_null(),
    )
    # A substring test is enough: a stray "jsonrpc" inside params only means the row is judged.
    wanted = flags["named"] & flags["readable"]
    # compact JSON starts with the member: scan the text only of the other rows
    keep = wanted & plain_jsonrpc(ctx).fill_null(False)
    rest = wanted & ~keep
    if rest.any():
        spelled = ctx.part("protocol", "message").filter(rest)["message"]
        keep = keep.scatter(rest.arg_true(), spelled.str.contains('"jsonrpc"', literal=True))
    return pl.DataFrame([flags["named"], keep.alias("judged")])


def _build_judged(ctx: LintContext) -> pl.DataFrame:
    columns = ("ordinal", "session", "kind", "method", "direction", "id", "revision")
    # one filter of the typed columns, not of the text
    return (
        ctx.part("protocol", *columns, "protocol_version")
        .filter(_rows(ctx)["judged"])
        .with_columns(judge=_judge())
    )


#: what the verdicts of MD001, MD003 and MD007 depend on
_KEY = ["judge", "method", "kind", "direction"]


def _keys(ctx: LintContext) -> pl.DataFrame:
    """The distinct keys (a few hundred) of every request and notification with a method,
    found once for the rules, in no particular order, with ``judged`` (whether
    :func:`_judged` has rows of the key). The judge is null when it is no revision the
    catalogue has: no rule judges those (MD001 keeps known revisions only, MD003 and MD007
    join the catalogue)."""
    return ctx.memo("methods.keys", _build_keys)


def _known_code(column: str) -> pl.Expr:
    """The position in _KNOWN of the revision in ``column`` (null for any other text)."""
    # a comparison with each revision (short texts, held within the column's views)
    # costs less than hashing every text, as a cast to an Enum or a replace would
    code = pl.lit(None, dtype=pl.UInt8)
    for i, revision in enumerate(_KNOWN):
        code = pl.when(pl.col(column) == revision).then(pl.lit(i, dtype=pl.UInt8)).otherwise(code)
    return code


def _build_keys(ctx: LintContext) -> pl.DataFrame:
    # from the key's own columns, not from :func:`_judged`: most captures have no bad
    # key, and then its rows (every request and notification) are never built. The
    # judge is found by code (the session's gathered by session code): choosing between
    # two text columns on every row cost more than the unique. The lazy engine filters
    # and finds the distinct keys in one pass (its unique costs half of the eager one's)
    version = _known_code("protocol_version")
    own = (pl.col("kind") == "request") & (pl.col("method") != "initialize") & version.is_not_null()
    of_session = ctx.session_revisions.select("session", judge=_known_code("revision"))
    keys = (
        ctx.part("protocol", "session", "kind", "method", "direction", "protocol_version")
        .with_columns(_rows(ctx).get_columns())
        .lazy()
        .filter("named")
        .select(
            pl.when(own)
            .then(version)
            .otherwise(ctx.of_session(of_session, "judge"))
            .alias("judge"),
            "method",
            "kind",
            "direction",
            "judged",
        )
        .unique()
        .collect()
    )
    return keys.with_columns(pl.lit(pl.Series(_KNOWN)).gather(pl.col("judge")).alias("judge"))


def _by_key(ctx: LintContext, verdict: Callable[[pl.DataFrame], pl.DataFrame]) -> pl.DataFrame:
    """The rows of :func:`_judged` whose key is in ``verdict`` of its distinct keys (with
    the columns ``verdict`` adds): a few hundred keys are judged, not every message."""
    bad = verdict(_keys(ctx).filter("judged").drop("judged"))
    if bad.is_empty():  # the usual case: no findings, and no rows of every message built
        return bad
    return _judged(ctx).join(bad, on=_KEY, nulls_equal=True, maintain_order="left")


def _server_request_in_modern() -> pl.Expr:
    """A server-sent request judged by 2026-07-28: MD004 reports every one of them."""
    return (
        (pl.col("judge") >= "2026-07-28")
        & (pl.col("kind") == "request")
        & (pl.col("direction") == "s2c")
    )


@rule(
    code="MD001",
    name="method-not-in-revision",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def method_not_in_revision(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a request or notification whose MCP method does not exist in the session's revision.

    Examples: `ping`, `initialize`, `logging/setLevel`, `resources/subscribe` or
    `tasks/get` in a 2026-07-28 session; `server/discover` or `subscriptions/listen`
    before 2026-07-28; `elicitation/create` before 2025-06-18. Methods no revision
    defines are MD002's business; server requests in 2026-07-28 are MD004's.

    ## Why is this bad?
    The peer implements the revision that was negotiated. A method from another
    revision is at best answered with -32601 (Method not found) and at worst
    interpreted with different semantics; it usually means one side is built against
    a different revision than the one it announced.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "ping",
     "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    ```
    (in a 2026-07-28 session, which has no `ping`)

    Use instead: a method of the revision, e.g. a cheap cacheable request:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
     "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    ```

    ## Reference
    "The full specification of the protocol is defined as a TypeScript schema." —
    docs/specification/2026-07-28/basic/index.mdx#schema; the methods of each revision
    are the `ClientRequest`, `ServerRequest`, `ClientNotification` and
    `ServerNotification` unions of schema/<rev>/schema.json (all revisions).
    """
    rows = _by_key(
        ctx,
        lambda keys: (
            keys.filter(
                pl.col("method").is_in(_every_method().implode()) & pl.col("judge").is_in(_KNOWN)
            )
            .filter(~_server_request_in_modern())
            .join(_wire().select("judge", "method"), on=["judge", "method"], how="anti")
        ),
    )
    return findings(
        rows,
        fmt(
            "{} is not a method of revision {} (defined in: {})",
            "method",
            "judge",
            pl.col("method").replace_strict(_defined_in(), default=""),
        ),
    )


@rule(
    code="MD002", name="non-mcp-method", severity="info", revisions=ALL_REVISIONS, scope="session"
)
def non_mcp_method(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports, once per session and method, a request or notification method that no MCP
    revision defines.

    ## Why is this bad?
    Custom or vendor methods are legal JSON-RPC, but they are not MCP: a peer that
    does not know them answers -32601 (Method not found) or drops the notification.
    It is informational; a misspelled standard method (`tools/lists`,
    `notification/initialized`) shows up here too.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/lists"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
    ```

    ## Reference
    "The full specification of the protocol is defined as a TypeScript schema." —
    docs/specification/2026-07-28/basic/index.mdx#schema (every revision's
    schema/<rev>/schema.json lists its methods).
    """
    # the methods no revision defines, found among the distinct keys: usually none, and
    # then no row is read
    unknown = _keys(ctx).filter(~pl.col("method").is_in(_every_method().implode()))
    if unknown.is_empty():
        return findings(unknown, "")
    # the requests' and notifications' own columns (kept for the other rules): no test of
    # every message's kind first
    rows = (
        pl.concat(
            [
                ctx.part(part, "session", "ordinal", "method").filter(
                    pl.col("method").is_in(unknown["method"].implode())
                )
                for part in ("requests", "notifications")
            ]
        )
        .sort("ordinal")
        .group_by("session", "method")
        .agg(pl.col("ordinal").first(), pl.len().alias("uses"))
    )
    return findings(
        rows,
        fmt(
            'method "{}" is not defined by any MCP revision (used {} in this session)',
            "method",
            times("uses"),
        ),
    )


@rule(
    code="MD003",
    name="method-wrong-direction",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def method_wrong_direction(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a request or notification sent in a direction its revision does not allow.

    Examples: a server sending `tools/call`, a client sending
    `notifications/tools/list_changed`, or, in 2026-07-28, a client sending
    `notifications/progress`. Rows of unknown direction are skipped.

    ## Why is this bad?
    Each method belongs to one side's vocabulary (the client and server request and
    notification unions of the schema). The receiver has no handler for a method it
    is supposed to send itself, and answers -32601 or ignores it; often the capture's
    directions are swapped, or one peer confuses its role.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    ```
    (sent by the server)

    Use instead: only the client calls tools; a server asks the client with its own
    methods, e.g.
    ```json
    {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
    ```

    ## Reference
    "Requests are sent from the client to the server or vice versa, to initiate an
    operation." — docs/specification/2025-11-25/basic/index.mdx#requests; the directions
    are the schema.json unions (`ClientRequest`, `ServerRequest`, `ClientNotification`,
    `ServerNotification`) of every revision.
    """
    rows = _by_key(
        ctx,
        lambda keys: (
            keys.filter(pl.col("direction").is_in(["c2s", "s2c"]) & ~_server_request_in_modern())
            .join(_wire(), on=["judge", "method"])
            .filter(~pl.col("directions").list.contains(pl.col("direction").cast(pl.String)))
        ),
    )
    side = {"c2s": "client to server", "s2c": "server to client"}
    return findings(
        rows,
        fmt(
            "{} sent {}; in {} it only travels {}",
            "method",
            pl.col("direction").cast(pl.String).replace_strict(side),
            "judge",
            pl.col("directions").list.first().replace_strict(side),
        ),
    )


@rule(
    code="MD004",
    name="server-request-in-modern",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def server_request_in_modern(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags any JSON-RPC request sent by the server in a 2026-07-28 session.

    ## Why is this bad?
    The 2026 protocol is one-way: only clients send requests. A server that needs input
    (elicitation, sampling, roots) returns an `input_required` result with
    `inputRequests`, and the client retries. A modern client has no handler for
    server requests, so `ping`, `roots/list` or `sampling/createMessage` from the
    server will never be answered.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {"messages": [],
     "maxTokens": 10}}
    ```

    Use instead: ask inside the result of the client's request
    ```json
    {"jsonrpc": "2.0", "id": 3, "result": {"resultType": "input_required",
     "inputRequests": {"s1": {"method": "sampling/createMessage", "params": {"messages": [],
     "maxTokens": 10}}}}}
    ```

    ## Reference
    "Servers MUST NOT initiate JSON-RPC requests, and clients do not send JSON-RPC
    responses." — docs/specification/2026-07-28/basic/patterns/index.mdx (2026-07-28).
    """
    # in 2026 sessions only: the others' server requests, found and then dropped, cost
    # more than the test of the typed column
    rows = ctx.part("requests", "ordinal", "method", "direction", "modern").filter(
        (pl.col("direction") == "s2c") & pl.col("modern")
    )
    return findings(
        rows,
        fmt("server sent a {} request; 2026-07-28 servers never send requests", "method"),
    )


@rule(
    code="MD005",
    name="client-response-in-modern",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def client_response_in_modern(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a JSON-RPC response or error sent by the client in a 2026-07-28 session.

    ## Why is this bad?
    In 2026-07-28 servers never send requests, so there is nothing for a client to
    answer: input for the server travels in `inputResponses` of a retried request.
    A client response means the client still runs the legacy request/response
    pattern, or answers a server request that should not exist.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}
    ```

    Use instead: send the answer in the retry of the original request
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "scan",
     "inputResponses": {"s1": {"roots": []}},
     "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {"roots": {}}}}}
    ```

    ## Reference
    "The client MUST NOT write JSON-RPC _responses_." —
    docs/specification/2026-07-28/basic/transports/stdio.mdx#sending-messages (2026-07-28;
    streamable-http.mdx#sending-messages says the same for HTTP).
    """
    # in 2026 sessions only (as MD004)
    rows = ctx.part("responses", "ordinal", "kind", "id", "direction", "modern").filter(
        (pl.col("direction") == "c2s") & pl.col("modern")
    )
    return findings(
        rows,
        fmt(
            "client sent a JSON-RPC {} (id {}); 2026-07-28 clients never respond",
            "kind",
            pl.col("id").fill_null("null"),
        ),
    )


@rule(
    code="MD006", name="deprecated-feature-used", severity="info", revisions=MODERN, scope="session"
)
def deprecated_feature_used(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports, once per session and feature, the first use of a feature deprecated in 2026-07-28.

    Detected uses: Logging (`notifications/message`, the `io.modelcontextprotocol/logLevel`
    request `_meta`), Roots and Sampling (`roots/list`, `sampling/createMessage` in
    `inputRequests`) and `includeContext: "thisServer"`/`"allServers"` in sampling.

    ## Why is this bad?
    Deprecated features still work but are scheduled for removal (earliest in the first
    revision after 2027-07-28): new implementations should not adopt them and existing
    ones should migrate, e.g. log to stderr or OpenTelemetry, pass directories as tool
    parameters, call the LLM provider directly.

    ## Example
    ```json
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info",
     "data": "indexing"}}
    ```

    Use instead: write the log line to stderr (stdio) or emit an OpenTelemetry span event.

    ## Reference
    "A Deprecated feature remains part of the specification but is scheduled for removal:
    new implementations SHOULD NOT adopt it, and existing implementations SHOULD migrate
    before the feature's earliest removal." — docs/specification/2026-07-28/deprecated.mdx
    (2026-07-28).
    """
    # only 2026 sessions are judged (a finding's session is its message's): the typed
    # `modern` column first, before any text is read
    in_requests = {
        "Roots (roots/list input request)": r'"method":"roots/list"',
        "Sampling (sampling/createMessage input request)": r'"method":"sampling/createMessage"',
        'sampling includeContext "thisServer"/"allServers"': (
            r'"includeContext":"(thisServer|allServers)"'
        ),
    }
    # the input requests' three tests in one query, a column each, then a row per test
    # passed: in the order of the tests, as one filter per test would give
    input_required = (
        ctx.input_required.filter(pl.col("modern"))
        .select(
            "session",
            "ordinal",
            *(pl.col("inputs").str.contains(p).alias(f) for f, p in in_requests.items()),
        )
        .unpivot(index=["session", "ordinal"], variable_name="feature")
        .filter(pl.col("value"))
    )
    uses = [
        ctx.part("notifications", "session", "ordinal", "method", "direction", "modern")
        .filter(
            (pl.col("method") == "notifications/message")
            & (pl.col("direction") != "c2s")
            & pl.col("modern")
        )
        .with_columns(feature=pl.lit("Logging (notifications/message)")),
        # a cheap substring test first: parsing every request's JSON is what costs
        ctx.part("requests", "session", "ordinal", "modern", "rare", "message")
        .filter(pl.col("modern") & pl.col("rare"))
        .filter(pl.col("message").str.contains("/logLevel", literal=True))
        .filter(
            pl.col("message")
            .str.json_path_match(f'$.params._meta["{_META}/logLevel"]')
            .is_not_null()
        )
        .with_columns(feature=pl.lit(f"Logging ({_META}/logLevel)")),
        input_required,
    ]
    rows = (
        pl.concat([u.select("session", "ordinal", "feature") for u in uses])
        .sort("ordinal")
        # in order of first use (and of `uses` for one message): a stable report order
        .group_by("session", "feature", maintain_order=True)
        .agg(pl.col("ordinal").first(), pl.len().alias("uses"))
    )
    return findings(
        rows, fmt("uses deprecated {} (used {} in this session)", "feature", times("uses"))
    )


@rule(
    code="MD007",
    name="request-method-without-id",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def request_method_without_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a message that names a request method (such as `tools/list`) but has no `id`.

    The opposite, a notification method sent with an `id`, is JR005's business.

    ## Why is this bad?
    Without an `id` the message is a notification, and notifications are never
    answered: the receiver either ignores it or performs the operation with no way to
    return the result, and the sender waits for an answer that cannot come.

    ## Example
    ```json
    {"jsonrpc": "2.0", "method": "tools/list"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
    ```

    ## Reference
    "Requests MUST include a string or integer ID." —
    docs/specification/2025-11-25/basic/index.mdx#requests (all revisions;
    basic/messages.mdx#requests in 2024-11-05). Schema: `JSONRPCRequest`.
    """
    rows = _by_key(
        ctx,
        lambda keys: (
            keys.filter(pl.col("kind") == "notification")
            .join(_wire().select("judge", "method", "spec_kind"), on=["judge", "method"])
            .filter(pl.col("spec_kind") == "request")
        ),
    )
    return findings(
        rows, fmt("{} is a request in {} but was sent without an id", "method", "judge")
    )
