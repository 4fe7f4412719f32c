"""JR: the JSON-RPC envelope of MCP messages (version, ids, result/error shape).

Rules here look at one message at a time (scope ``message``); the batch rules
look at the elements of one JSON array line together.
"""

from __future__ import annotations

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.linter.context import LintContext, settle
from mcptrace.linter.rule import ALL_REVISIONS, findings, line_of, rule, since
from mcptrace.linter.rules.stdio import is_pollution
from mcptrace.message_text import ENVELOPE
from mcptrace.protocol import METHODS

#: every method any revision's catalogue knows as a notification
NOTIFICATION_METHODS: tuple[str, ...] = tuple(
    sorted(
        {
            name
            for table in METHODS.values()
            for name, spec in table.items()
            if spec.kind == "notification"
        }
    )
)

#: (revision, method) of input requests, which travel embedded in a result, without `jsonrpc`
_EMBEDDED = pl.DataFrame(
    [
        (rev, name)
        for rev, table in METHODS.items()
        for name, spec in table.items()
        if spec.embedded
    ],
    schema={"revision": pl.String, "method": pl.String},
    orient="row",
)

#: the JSON text of the value after a member name (first occurrence in the text)
_TOKEN = r'\s*:\s*("(?:[^"\\]|\\.)*"|[^,}\]\s]+)'


def is_notification_method(method: pl.Expr | str = "method") -> pl.Expr:
    """A method named like a notification (``notifications/...``) or known as one."""
    col = pl.col(method) if isinstance(method, str) else method
    return col.str.starts_with("notifications/") | col.is_in(NOTIFICATION_METHODS)


#: the start of a compact JSON-RPC message: most texts start with it
PLAIN_JSONRPC = '{"jsonrpc":"2.0"'


def plain_jsonrpc(ctx: LintContext) -> pl.Series:
    """By row of ``ctx.part("protocol")``: whether the text starts with
    :data:`PLAIN_JSONRPC` (null without text). Reading the start of every text costs a
    pass through memory: JR001 and the MD rules share this one."""
    return ctx.memo("envelope.plain_jsonrpc", _build_plain_jsonrpc)["plain_jsonrpc"]


def _build_plain_jsonrpc(ctx: LintContext) -> pl.DataFrame:
    return ctx.part("protocol", "message").select(
        plain_jsonrpc=pl.col("message").str.starts_with(PLAIN_JSONRPC)
    )


def _readable(frame: pl.DataFrame) -> pl.DataFrame:
    """Rows whose message text is the message itself (not reconstructed or cut)."""
    return frame.filter(pl.col("parse_error").is_null() & pl.col("message").is_not_null())


def _json_type(first_char: pl.Expr) -> pl.Expr:
    """JSON type name from the first character of a value's JSON text."""
    return (
        pl.when(first_char == "{")
        .then(pl.lit("object"))
        .when(first_char == "[")
        .then(pl.lit("array"))
        .when(first_char == '"')
        .then(pl.lit("string"))
        .when(first_char.is_in(["t", "f"]))
        .then(pl.lit("boolean"))
        .when(first_char == "n")
        .then(pl.lit("null"))
        .otherwise(pl.lit("number"))
    )


def _member_type(member: str, text: str = "message") -> pl.Expr:
    """JSON type of the (first) ``member`` in the JSON text of column ``text``."""
    return _json_type(pl.col(text).str.extract(rf'"{member}"\s*:\s*(\S)', 1))


@rule(
    code="JR001",
    name="wrong-jsonrpc-version",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def wrong_jsonrpc_version(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags JSON-RPC messages whose `jsonrpc` member is missing or is not the string `"2.0"`
    (for example `"1.0"`, or the number `2.0`).

    2026-07-28 input requests (`elicitation/create`, `sampling/createMessage`,
    `roots/list`) without any `jsonrpc` member are left alone: they are embedded in
    results, not sent as messages.

    ## Why is this bad?
    MCP messages are JSON-RPC 2.0 messages, and JSON-RPC 2.0 requires the member to be
    exactly the string `"2.0"`. Strict SDKs reject anything else, so the message is dropped
    or answered with an Invalid Request error instead of being processed.

    ## Example
    ```json
    {"jsonrpc": "1.0", "id": 1, "method": "tools/list"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    ```

    ## Reference
    "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
    specification." — basic/index.mdx#messages (2025-03-26 and later;
    basic/messages.mdx in 2024-11-05). Schema: every `JSONRPC*` definition has
    `jsonrpc: {"const": "2.0"}`.
    """
    # the plain form first: cheap, and it settles nearly every message. Compact JSON
    # starts with it, which settles most rows without scanning their text.
    rows = (
        _readable(
            ctx.part(
                "protocol", "ordinal", "kind", "method", "revision", "parse_error", "message"
            ).with_columns(_plain=plain_jsonrpc(ctx))
        )
        .filter(~pl.col("_plain"))
        .filter(~pl.col("message").str.contains(r'"jsonrpc"\s*:\s*"2\.0"'))
    )
    if rows.is_empty():
        return findings(rows, "")
    token = pl.col("message").str.extract(r'"jsonrpc"' + _TOKEN, 1)
    rows = rows.with_columns(
        _value=pl.col("message").str.json_path_match("$.jsonrpc"), _token=token
    )
    # "2\u002e0" is the string "2.0" too; the number 2.0 also reads back as "2.0"
    fine = (pl.col("_value") == "2.0") & pl.col("_token").str.starts_with('"')
    bad = rows.filter(~fine.fill_null(False))
    # a 2026 input request shown on its own (as the spec's examples do) has no envelope
    bare_input = bad.filter(pl.col("_token").is_null()).join(
        _EMBEDDED, on=["revision", "method"], how="semi"
    )
    bad = bad.join(bare_input.select("ordinal"), on="ordinal", how="anti")
    message = (
        pl.when(pl.col("_token").is_null())
        .then(fmt("{} has no `jsonrpc` member", "kind"))
        .otherwise(fmt('`jsonrpc` is {}, not the string "2.0"', "_token"))
    )
    return findings(bad, message)


@rule(
    code="JR002",
    name="params-not-object",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def params_not_object(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags requests and notifications whose `params` member is present but is not a JSON
    object: an array (JSON-RPC by-position parameters), a string, a number, a boolean or
    `null`.

    ## Why is this bad?
    Base JSON-RPC allows by-position parameters, MCP does not: every MCP method takes named
    parameters, and `_meta` can only live in an object. A receiver looks the arguments up
    by name and fails with Invalid params, or worse, treats them as absent.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": ["get_weather", {"city": "Paris"}]}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    ```

    ## Reference
    "Requests are sent from the client to the server or vice versa, to initiate an
    operation." — basic/index.mdx#requests (2025-11-25; the same section in every
    revision), whose message shape types `params` as `{ [key: string]: unknown }`.
    Schema: `JSONRPCRequest.params` and `JSONRPCNotification.params` are `"type": "object"`
    in every revision.
    """
    # a request or notification with a target, a progress token, a cancelled id or a
    # protocol version (columns the loader read from its parsed `params`) has object
    # params, which the JSON path below reads back alike (the last of duplicate members,
    # names unescaped; alike up to ~126 levels of nesting, where the path's parser gives
    # up), so its text is not searched: ~5% of them are left at 10^6 messages (text
    # search ~45 ms -> ~8). Only a text with some `"params":` not followed by `{` can
    # have non-object params
    known = ("target", "progress_token", "cancel_id", "protocol_version")
    rows = _readable(
        ctx.messages.select("ordinal", "kind", "method", "parse_error", *known, "message")
        .filter(
            pl.col("kind").is_in(["request", "notification"]),
            *(pl.col(column).is_null() for column in known),
        )
        .filter(pl.col("message").str.contains(r'"params"\s*:\s*[^{\s]'))
    )
    if rows.is_empty():
        return findings(rows, "")
    value = pl.col("message").str.json_path_match("$.params")
    rows = rows.with_columns(_value=value, _type=_member_type("params"))
    explicit_null = pl.col("message").str.contains(r'"params"\s*:\s*null')
    bad = rows.filter(
        (pl.col("_value").is_not_null() & ~pl.col("_value").str.starts_with("{"))
        | (pl.col("_value").is_null() & explicit_null)
    )
    return findings(bad, fmt("params of {} is a JSON {}, not an object", "method", "_type"))


@rule(
    code="JR003",
    name="request-id-wrong-type",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def request_id_wrong_type(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags requests whose `id` is a fractional number, a boolean, an object or an array.

    ## Why is this bad?
    MCP requires request ids to be a string or an integer. Peers and SDKs key their
    pending-request maps by id; a float such as `1.5` or an object cannot be matched
    reliably, so the response may never reach the caller.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    ```

    ## Reference
    "Requests MUST include a string or integer ID." — basic/index.mdx#requests
    (2025-03-26 and later; basic/messages.mdx#requests in 2024-11-05). Schema: `RequestId`.
    """
    bad = ctx.part("requests", "ordinal", "id", "id_type").filter(
        pl.col("id_type").is_in(["number", "boolean", "object", "array"])
    )
    return findings(
        bad, fmt("request id {} is a JSON {}, not a string or integer", "id", "id_type")
    )


@rule(
    code="JR004", name="null-request-id", severity="error", revisions=ALL_REVISIONS, scope="message"
)
def null_request_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags requests whose `id` is `null`.

    ## Why is this bad?
    Base JSON-RPC tolerates a null id, MCP does not: the response to such a request
    cannot be told apart from an error about an unreadable request, whose id is null.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": null, "method": "tools/list"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    ```

    ## Reference
    "Unlike base JSON-RPC, the ID MUST NOT be `null`." — basic/index.mdx#requests (all
    revisions; basic/messages.mdx#requests in 2024-11-05).
    """
    bad = ctx.part("requests", "ordinal", "method", "id_type").filter(pl.col("id_type") == "null")
    return findings(bad, fmt("request {} has a null id", "method"))


@rule(
    code="JR005",
    name="notification-with-id",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def notification_with_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags notifications that carry an `id`: messages whose method is a notification
    (`notifications/...`, or one the catalogue knows as a notification) but which have an
    `id` member, even `null`.

    ## Why is this bad?
    In JSON-RPC a message with an `id` is a request and must be answered. The receiver either
    answers a message that is not supposed to have an answer, or ignores it and leaves the
    sender with a request that never completes.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 3, "method": "notifications/initialized"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ```

    ## Reference
    "Notifications MUST NOT include an ID." — basic/index.mdx#notifications (2025-03-26 and
    later; basic/messages.mdx#notifications in 2024-11-05).
    """
    # the loader classifies method + id as a request, so notifications are known by name
    bad = ctx.part("requests", "ordinal", "method", "id").filter(is_notification_method())
    return findings(bad, fmt("notification {} carries an id ({})", "method", "id"))


@rule(
    code="JR006",
    name="result-and-error",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def result_and_error(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags responses that carry both a `result` and an `error` member.

    ## Why is this bad?
    A response reports either success or failure. With both members the receiver must
    guess: some SDKs take the result and silently drop the error, others the reverse.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": -32603, "message": "boom"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "boom"}}
    ```

    ## Reference
    "Either a `result` or an `error` MUST be set. A response MUST NOT set both." —
    basic/index.mdx#responses (2025-03-26, 2025-06-18; basic/messages.mdx#responses in
    2024-11-05). 2025-11-25 and later split the text into result responses and error
    responses (basic/index.mdx#result-responses, #error-responses). The schemas do not
    enforce it.
    """
    # the loader makes every message with an `error` member an error row
    rows = _readable(
        ctx.part("responses", "ordinal", "kind", "id", "parse_error", "message").filter(
            pl.col("kind") == "error"
        )
    )
    rows = rows.filter(pl.col("message").str.contains('"result"', literal=True))
    has_result = pl.col("message").str.json_path_match("$.result").is_not_null() | pl.col(
        "message"
    ).str.contains(r'[{,]\s*"result"\s*:\s*null')
    bad = rows.filter(has_result)
    return findings(bad, fmt("response to id {} has both `result` and `error`", "id"))


@rule(
    code="JR007",
    name="result-not-object",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def result_not_object(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags success responses whose `result` is not a JSON object: an array, a string, a
    number, a boolean or `null`.

    ## Why is this bad?
    Every MCP result is an object (even the empty result of `ping` is `{}`), so that it can
    carry `_meta` and grow new fields. A receiver that reads named fields from the result
    fails on anything else.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": ["get_weather", "get_forecast"]}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "get_weather", "inputSchema": {}}]}}
    ```

    ## Reference
    "Result responses MUST include a `result` field." — basic/index.mdx#result-responses
    (2025-11-25 and later). Schema: `Result` is `"type": "object"` in every revision
    (2024-11-05 to 2025-06-18 say "Results MAY follow any JSON object structure").
    """
    # a response whose result has a `resultType` or `"isError": true` (columns the
    # loader read from the parsed message) has an object result, which the JSON path
    # below reads back alike (the last of duplicate members, names unescaped; alike up
    # to ~126 levels of nesting, where the path's parser gives up), so its text is not
    # read: 2026-07-28 results all have a resultType
    columns = ("ordinal", "kind", "id", "parse_error", "message")
    rows = _readable(
        ctx.part("responses", *columns, "result_type", "tool_error").filter(
            pl.col("kind") == "response",
            pl.col("result_type").is_null(),
            pl.col("tool_error").is_null(),
        )
    )
    # an object result always reads `"result": {`: only the others need parsing. Compact
    # JSON starts with it right after the id (a prefix test settles most rows); a plain
    # search settles most others, and the pattern with spaces is looked for in the rest.
    compact = pl.lit('{"jsonrpc":"2.0","id":') + pl.col("id") + pl.lit(',"result":{')
    has_object = settle(
        rows,
        pl.col("message").str.starts_with(compact),
        pl.col("message").str.contains('"result":{', literal=True),
    )
    rows = rows.filter(~has_object)
    rows = rows.filter(~pl.col("message").str.contains(r'"result"\s*:\s*\{'))
    value = pl.col("message").str.json_path_match("$.result")
    rows = rows.with_columns(_value=value, _type=_member_type("result"))
    bad = rows.filter(pl.col("_value").is_null() | ~pl.col("_value").str.starts_with("{"))
    return findings(
        bad, fmt("result of the response to id {} is a JSON {}, not an object", "id", "_type")
    )


def _errors(ctx: LintContext) -> pl.DataFrame:
    """Readable error rows that JR008 or JR009 may flag, with ``_obj`` (the error is an
    object), ``_code`` (JSON text of its `code`, null when absent) and ``_type`` (JSON type
    of the `error` member)."""
    return ctx.memo("envelope.errors", _build_errors)


def _build_errors(ctx: LintContext) -> pl.DataFrame:
    # most errors are plainly fine: the loader read an integer code and a string message
    # from the parsed `error` (the last of duplicate members, as the JSON path below
    # reads it, up to ~126 levels of nesting, where its parser gives up), and the text
    # starts with a compact envelope whose id (a number or a string: no member inside)
    # is followed by `"error":{`, the first `error` member, whose type is read below.
    # Their bodies are not made (a regex replace, ~7 ms at 10^6 messages)
    compact = pl.lit('{"jsonrpc":"2.0","id":') + pl.col("id") + pl.lit(',"error":{')
    fine = (
        pl.col("error_code_is_int")
        & pl.col("error_message").is_not_null()
        & pl.col("id_type").is_in(["integer", "string"])
        & pl.col("message").str.starts_with(compact)
    )
    columns = ("ordinal", "kind", "id", "id_type", "parse_error", "message")
    rows = _readable(
        ctx.part("responses", *columns, "error_code_is_int", "error_message").filter(
            pl.col("kind") == "error"
        )
    ).filter(~fine.fill_null(False))
    # the same error goes to many requests: each distinct body (the text with its compact
    # envelope set aside, as json_paths does) is parsed and typed once. The envelope holds
    # no `"error":`, so the first such member of the body is the text's
    body = rows.select(pl.col("message").str.replace(ENVELOPE, "{").alias("_body"))["_body"]
    distinct = (
        body.unique()
        .to_frame()
        .with_columns(
            _error=pl.col("_body").str.json_path_match("$.error"),
            _type=_member_type("error", "_body"),
        )
        .with_columns(
            _obj=pl.col("_type") == "object",
            _code=pl.col("_error").str.extract(r'"code"' + _TOKEN, 1),
        )
    )
    return (
        rows.with_columns(body)
        .join(distinct, on="_body", how="left", maintain_order="left")
        .drop("_body")
    )


@rule(
    code="JR008",
    name="error-code-not-integer",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def error_code_not_integer(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags error responses whose `error.code` is present but is not a JSON integer: a
    string such as `"-32601"`, a number written `-32601.0` or `-3.2e4`, or `null`. A missing
    code is JR009.

    ## Why is this bad?
    Receivers branch on the error code (method not found, invalid params, ...). Strict SDKs
    reject the whole response when the code is not an integer, and lenient ones compare it
    as a string and miss every known code.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": "-32601", "message": "Method not found"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}
    ```

    ## Reference
    "Error codes MUST be integers." — basic/index.mdx#error-responses (2025-11-25 and
    later). Earlier revisions: schema `JSONRPCError.error.code` is `"type": "integer"`.
    """
    bad = _errors(ctx).filter(
        pl.col("_obj")
        & pl.col("_code").is_not_null()
        & ~pl.col("error_code_is_int").fill_null(False)
    )
    return findings(bad, fmt("error code {} is not an integer", "_code"))


@rule(
    code="JR009",
    name="error-without-code-or-message",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def error_without_code_or_message(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags error responses whose `error` is not an object, or has no `code`, or has no
    string `message`.

    ## Why is this bad?
    The code tells the receiver what failed and the message tells the user. Without them the
    receiver cannot classify the failure, and some SDKs reject the response outright, leaving
    the request pending.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}
    ```

    ## Reference
    "Error responses MUST include an `error` field with a `code` and `message`." —
    basic/index.mdx#error-responses (2025-11-25 and later; "errors MUST include an error
    code and message at minimum" in basic/index.mdx#responses of 2025-03-26 and 2025-06-18).
    Schema: `code` and `message` are required in every revision.
    """
    rows = _errors(ctx)
    no_code = pl.col("_code").is_null()
    no_message = pl.col("error_message").is_null()
    bad = rows.filter(~pl.col("_obj") | no_code | no_message)
    message = (
        pl.when(~pl.col("_obj"))
        .then(fmt("`error` is a JSON {}, not an object with code and message", "_type"))
        .when(no_code & no_message)
        .then(pl.lit("error object has neither a `code` nor a string `message`"))
        .when(no_code)
        .then(pl.lit("error object has no `code`"))
        .otherwise(pl.lit("error object has no string `message`"))
    )
    return findings(bad, message)


def _batches(ctx: LintContext) -> pl.DataFrame:
    """One row per JSON array (see :func:`batch_elements`): the first element's ordinal, ``_size``
    (elements), ``_requests`` (requests and notifications) and ``_responses``."""
    return ctx.memo("envelope.batches", _build_batches)


def batch_elements(ctx: LintContext, *columns: str) -> pl.DataFrame:
    """The rows of JSON-RPC batches (``columns`` of them), in capture order, with
    ``_batch``: a number per batch. A batch is the elements of one JSON array: on one
    line (a raw stream, a capture), or on lines of their own (mcpsnoop writes each
    element of an HTTP batch as a record), which ``batch_index`` 0 starts."""
    return (
        ctx.messages.select(*columns, "ordinal", "batch_index", "batched")
        .filter(pl.col("batched"))
        .sort("ordinal")
        .with_columns(_batch=(pl.col("batch_index").fill_null(0) == 0).cum_sum())
    )


def _build_batches(ctx: LintContext) -> pl.DataFrame:
    rows = batch_elements(ctx, "source", "kind")
    return (
        rows.group_by("source", "_batch")
        .agg(
            pl.col("ordinal").min(),
            _size=pl.len(),
            _requests=pl.col("kind").is_in(["request", "notification"]).sum(),
            _responses=pl.col("kind").is_in(["response", "error"]).sum(),
        )
        .sort("ordinal")
    )


@rule(
    code="JR010",
    name="batch-message",
    severity="error",
    revisions=since("2025-06-18"),
    scope="message",
)
def batch_message(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags JSON-RPC batches (a JSON array of messages on one line or in one HTTP body) in
    revisions that have no batches: 2025-06-18 and later.

    ## Why is this bad?
    2025-06-18 removed batching. A peer implementing the current revision reads only single
    messages; it rejects the array with a parse or invalid-request error, or drops it, so
    none of the batched requests is processed.

    ## Example
    ```json
    [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
     {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}]
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    ```
    followed by a separate message `{"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}`.

    ## Reference
    "The body of the POST request MUST be a single JSON-RPC _request_, _notification_, or
    _response_." — basic/transports.mdx#sending-messages-to-the-server (2025-06-18 and
    2025-11-25; the 2025-06-18 changelog: "Remove support for JSON-RPC batching"). Schema:
    `JSONRPCMessage` has no array form from 2025-06-18 on.
    """
    batches = _batches(ctx)
    message = fmt("JSON-RPC batch of {} message(s); batches were removed in 2025-06-18", "_size")
    return findings(batches, message)


@rule(
    code="JR011",
    name="batch-message-unmodelled",
    severity="info",
    revisions=("2024-11-05",),
    scope="message",
)
def batch_message_unmodelled(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports JSON-RPC batches in 2024-11-05 sessions, where MCP neither allows nor forbids
    them.

    ## Why is this bad?
    JSON-RPC 2.0 has batches, but the 2024-11-05 MCP schema has no array form and its text
    never mentions them; many SDKs of that time do not accept them. Sending batches to such a
    peer is likely to fail.

    ## Example
    ```json
    [{"jsonrpc": "2.0", "id": 1, "method": "ping"},
     {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    ```
    then `{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}` as its own message.

    ## Reference
    "All messages in MCP MUST follow the JSON-RPC 2.0 specification." — basic/messages.mdx
    (2024-11-05). Schema: the 2024-11-05 `JSONRPCMessage` is a single request,
    notification, response or error (no batch definitions).
    """
    batches = _batches(ctx)
    return findings(
        batches,
        fmt("JSON-RPC batch of {} message(s), which 2024-11-05 does not model", "_size"),
    )


@rule(
    code="JR012",
    name="initialize-in-batch",
    severity="error",
    revisions=("2025-03-26",),
    scope="message",
)
def initialize_in_batch(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an `initialize` request sent inside a JSON-RPC batch.

    ## Why is this bad?
    Nothing else may happen before initialization has completed, so there is nothing an
    `initialize` request could legitimately be batched with; a server may process the other
    elements before the handshake and reject them.

    ## Example
    ```json
    [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {…}},
     {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {…}}
    ```
    and `notifications/initialized` on its own after the InitializeResult arrived.

    ## Reference
    "The initialize request MUST NOT be part of a JSON-RPC batch, as other requests and
    notifications are not possible until initialization has completed." —
    basic/lifecycle.mdx#initialization (2025-03-26, the only revision with batches).
    """
    bad = ctx.part("requests", "ordinal", "batched", "method").filter(
        pl.col("batched") & (pl.col("method") == "initialize")
    )
    return findings(bad, "initialize request is part of a JSON-RPC batch")


@rule(
    code="JR013", name="mixed-batch", severity="error", revisions=("2025-03-26",), scope="message"
)
def mixed_batch(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags JSON-RPC batches that mix requests or notifications with responses.

    ## Why is this bad?
    A batch is either a batch of requests and notifications or a batch of responses. A
    receiver that dispatches the array as a request batch mishandles the responses in it
    (and the reverse), so some of the elements are lost.

    ## Example
    ```json
    [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 9, "result": {}}]
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 9, "result": {}}
    ```
    with the `ping` request sent as its own message (or in a batch of requests).

    ## Reference
    "The body of the POST request MUST be one of the following:" (a single message, an
    array of requests and/or notifications, or an array of responses) —
    basic/transports.mdx#sending-messages-to-the-server (2025-03-26). Schema:
    `JSONRPCBatchRequest` and `JSONRPCBatchResponse` are separate arrays.
    """
    batches = _batches(ctx).filter((pl.col("_requests") > 0) & (pl.col("_responses") > 0))
    message = fmt(
        "JSON-RPC batch mixes {} request(s)/notification(s) with {} response(s)",
        "_requests",
        "_responses",
    )
    return findings(batches, message)


@rule(
    code="JR014",
    name="invalid-message-line",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def invalid_message_line(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags every line that could not be read as a JSON-RPC message, with the loader's reason.

    That is text that is not JSON (or was cut off), invalid UTF-8, a JSON value that is
    not an object, an object with no `method`, `result` or `error`, an empty batch, or a
    capture record without a message. The reason gives the position of the problem.
    Non-JSON text on a stdio stream is reported as pollution by ST001/ST002 instead. A
    line the capture tool itself cut (mcpsnoop's `truncated` frames at its size cap,
    Claude Desktop's `...[N chars truncated]...`, a log's last line cut while being
    written, a HAR document cut short, a request body a HAR did not keep) is reported
    too, its reason saying so: the capture lost that message. Its consequences are not
    reported again: the request it most likely answered is no PR006, the response to
    the request it held no PR003, progress for the token it carried no PG003.

    ## Why is this bad?
    The peer cannot parse such a line either: on stdio it is stream pollution that breaks
    framing, and a request hidden in it is never answered. Every message MCP exchanges is a
    JSON-RPC 2.0 object.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_weather"
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_weather"}}
    ```

    ## Reference
    "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0
    specification." — basic/index.mdx#messages (2025-03-26 and later; basic/messages.mdx
    in 2024-11-05). Schema: `JSONRPCMessage`.
    """
    # stdio stream pollution is reported by the more specific ST001/ST002 instead
    bad = ctx.messages.select(
        "ordinal", "kind", "transport", "message", "batched", "parse_error"
    ).filter(pl.col("kind") == "invalid")
    bad = bad.filter(~is_pollution())
    reason = pl.col("parse_error").fill_null("no JSON-RPC message")
    message = (
        pl.when(reason.str.starts_with("not a JSON-RPC message"))
        .then(reason)
        .otherwise(fmt("not a JSON-RPC message: {}", reason))
    )
    return findings(bad, message)


#: the errors JSON-RPC 2.0 answers an unusable batch with: invalid request, parse error
_BATCH_REJECTIONS = (-32600, -32700)


@rule(
    code="JR015",
    name="batch-rejected-as-whole",
    severity="error",
    revisions=("2025-03-26",),
    scope="pairing",
)
def batch_rejected_as_whole(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a single error (-32600 or -32700, null id) that answers a well-formed
    JSON-RPC batch instead of responses to its requests.

    A batch is well-formed when every element of the array is a readable request or
    notification (requests with a string or integer id), none is `initialize`, and at
    least one is a request. The error is tied to the batch by position: it is the first
    message the other side sends after the batch, its id is null (or missing), and
    none of the batch's requests is ever answered. Sessions whose two directions have
    no common order (per-direction files) are skipped.

    ## Why is this bad?
    2025-03-26 requires every implementation to accept batches. A receiver that rejects
    the array as a whole leaves each of the batched requests without an answer: the
    sender cannot match the null-id error to any of them, so they stay pending until
    they time out.

    ## Example
    ```json
    [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
     {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}]
    {"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
     "message": "Batches not supported"}}
    ```

    Use instead:
    ```json
    [{"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
     {"jsonrpc": "2.0", "id": 2, "result": {"prompts": []}}]
    ```
    (or the two responses as separate messages).

    ## Reference
    "MCP implementations **MAY** support sending JSON-RPC batches, but **MUST** support
    receiving JSON-RPC batches." — docs/specification/2025-03-26/basic/index.mdx#batching
    (2025-03-26, the only revision with batches).
    """
    empty = pl.DataFrame(schema={"ordinal": pl.Int64})
    if not ctx.messages["batched"].any():
        return findings(empty, "")
    elements = batch_elements(
        ctx, "session", "source", "line", "direction", "kind", "method", "id_type", "parse_error"
    )
    fine = (
        pl.col("parse_error").is_null()
        & pl.col("kind").is_in(["request", "notification"])
        & pl.col("method").ne_missing("initialize")
        & ((pl.col("kind") != "request") | pl.col("id_type").is_in(["integer", "string"]))
    )
    batches = (
        elements.group_by("source", "_batch")
        .agg(
            pl.col("session").first(),
            pl.col("direction").first().cast(pl.String),
            pl.col("ordinal").min().alias("first"),
            pl.col("ordinal").max().alias("last"),
            pl.col("ordinal").filter(pl.col("kind") == "request").alias("requests"),
            fine.all().alias("fine"),
        )
        .filter(
            pl.col("fine")
            & (pl.col("requests").list.len() > 0)
            & pl.col("direction").is_in(["c2s", "s2c"])
        )
    )
    if not ctx.unordered_sessions.is_empty():
        batches = batches.filter(~pl.col("session").is_in(ctx.unordered_sessions.implode()))
    if batches.is_empty():
        return findings(empty, "")
    # the first message of the other side after each batch
    other = pl.when(pl.col("direction") == "c2s").then(pl.lit("s2c")).otherwise(pl.lit("c2s"))
    batches = batches.with_columns(_other=other).sort("last")
    replies = (
        ctx.part("protocol", "session", "ordinal", "direction")
        .filter(pl.col("session").is_in(batches["session"].unique().implode()))
        .with_columns(_other=pl.col("direction").cast(pl.String))
        .sort("ordinal")
    )
    tied = batches.join_asof(
        replies.select("session", "_other", pl.col("ordinal").alias("_next"), "ordinal"),
        left_on="last",
        right_on="_next",
        by=["session", "_other"],
        strategy="forward",
        check_sortedness=False,  # both sorted by ordinal above; `by` stops the check
    ).filter(pl.col("ordinal").is_not_null())
    tied = ctx.lookup(tied, "ordinal", _kind="kind", _id_type="id_type", _code="error_code").filter(
        (pl.col("_kind") == "error")
        # `"id": null` has id_type "null"; a missing id has none
        & (pl.col("_id_type").is_null() | (pl.col("_id_type") == "null"))
        & pl.col("_code").is_in(_BATCH_REJECTIONS)
    )
    if tied.is_empty():
        return findings(empty, "")
    # ... and the batch's requests were never answered
    asked = tied.select("ordinal", pl.col("requests").alias("request")).explode("request")
    answered = (
        ctx.call_lookup(asked, "request", _response="response_ordinal")
        .group_by("ordinal")
        .agg(pl.col("_response").is_not_null().any().alias("_answered"))
    )
    bad = tied.join(answered, on="ordinal").filter(~pl.col("_answered"))
    return findings(
        bad,
        fmt(
            "error {} with a null id rejects the JSON-RPC batch at {} as a whole; "
            "none of its {} request(s) was answered",
            "_code",
            # any element names the batch's line: they all share it
            line_of("first"),
            pl.col("requests").list.len(),
        ),
    )


@rule(
    code="JR016",
    name="lone-surrogate-escape",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="message",
)
def lone_surrogate_escape(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags messages with a string holding a lone UTF-16 surrogate escape: `\\ud83d` not
    followed by its low half, or a `\\udc00`-`\\udfff` escape on its own.

    mcptrace reads the message with U+FFFD in its place (the loader's note says where), so
    the rest of it is still analysed.

    It is what a JavaScript server writes when it cuts a string between the two halves of
    an emoji (`text.slice(0, 1000)`) or passes on DOM text holding half a pair:
    `JSON.stringify` escapes the lone half rather than failing. Cut text at a code point
    boundary instead, or write U+FFFD for a lone half (`String.prototype.toWellFormed`).

    ## Why is this bad?
    Such an escape denotes no Unicode character, and RFC 8259 §8.2 warns that how a
    receiver handles it is unpredictable. Many refuse the whole message: the official
    Python SDK's parser (pydantic), serde_json in Rust SDKs and orjson report invalid JSON,
    so the request is never answered, or the result never reaches the model. Others let it
    through and fail later, when the text is forwarded to an LLM API.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 7,
     "result": {"content": [{"type": "text", "text": "Deploy done \\ud83d"}]}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 7,
     "result": {"content": [{"type": "text", "text": "Deploy done"}]}}
    ```

    ## Reference
    RFC 8259 §8.2 (strings with unpaired surrogates; "the behavior of software that
    receives JSON texts containing such values is unpredictable"); "JSON-RPC messages MUST
    be UTF-8 encoded" — basic/transports.mdx (2025-03-26 to 2025-11-25),
    basic/transports/index.mdx#messages (2026-07-28): a lone surrogate has no UTF-8
    encoding.
    """
    bad = (
        ctx.messages.select("ordinal", "kind", "parse_error")
        .filter(pl.col("parse_error").is_not_null())
        .filter(pl.col("kind").is_in(["request", "notification", "response", "error"]))
        .with_columns(
            _escape=pl.col("parse_error").str.extract(rf"{_json.LONE_SURROGATE} `([^`]*)`", 1),
            _more=pl.col("parse_error").str.extract(r"column \d+ and (\d+) more read as", 1),
        )
        .filter(pl.col("_escape").is_not_null())
    )
    return findings(
        bad,
        fmt(
            "a string holds the lone UTF-16 surrogate escape `{}`{} (half of a character "
            "such as an emoji): strict JSON parsers, the Python SDK's among them, refuse "
            "the message",
            "_escape",
            pl.when(pl.col("_more").is_not_null())
            .then(fmt(" and {} more", "_more"))
            .otherwise(pl.lit("")),
        ),
    )
