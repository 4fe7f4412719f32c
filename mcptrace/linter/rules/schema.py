"""SC: whole messages against the official JSON Schemas (only with ``--schema-dir``).

The four rules share one validation pass (:func:`mcptrace.linter.schemas.validate_messages`),
run once per lint and split by check: the JSON-RPC envelope (SC001), the method's
request or notification definition (SC002), the result type of the answered request
(SC003) and the definition dedicated to an error code (SC004). Without
``--schema-dir`` they find nothing.
"""

from __future__ import annotations

import polars as pl

from mcptrace._format import fmt
from mcptrace.linter.context import LintContext, computed_where
from mcptrace.linter.rule import ALL_REVISIONS, findings, rule
from mcptrace.linter.schemas import VALIDATION_SCHEMA, validate_messages
from mcptrace.protocol import TASK_AUGMENTATION_GATES


def _input(ctx: LintContext) -> pl.DataFrame:
    """Protocol rows with a parsed body, plus what responses need from their request."""
    rows = ctx.protocol.filter(pl.col("parse_error").is_null())
    answered = ctx.responses.filter(pl.col("request_ordinal").is_not_null()).select(
        "ordinal", "request_method", "request_ordinal"
    )
    # 2025-11-25 task augmentation: the answer is a CreateTaskResult or, where the
    # receiver did not accept the task (no capability for the request's type, or a tool
    # without task support), the request's usual result. The answer's shape (a `task`
    # member) picks the definition; whether it should have been a CreateTaskResult is
    # TK006's finding, not a schema error.
    tasks = ctx.requests.filter(
        (pl.col("revision") == "2025-11-25")
        & pl.col("method").is_in(list(TASK_AUGMENTATION_GATES))
        & pl.col("message").str.json_path_match("$.params.task").is_not_null()
    ).select(request_ordinal="ordinal", augmented=pl.lit(True))
    rows = rows.join(answered, on="ordinal", how="left").join(
        tasks, on="request_ordinal", how="left"
    )
    created = computed_where(
        rows,
        pl.col("augmented").fill_null(False),
        _created=pl.col("message").str.json_path_match("$.result.task").is_not_null(),
    )["_created"]
    return rows.with_columns(request_task=created.fill_null(False)).drop("augmented")


def _validation(ctx: LintContext) -> pl.DataFrame:
    if ctx.schema_dir is None:
        return pl.DataFrame(schema=VALIDATION_SCHEMA)
    schema_dir = ctx.schema_dir
    # one validation serves SC001-SC004
    return ctx.memo("schema.validation", lambda ctx: validate_messages(_input(ctx), schema_dir))


def _more() -> pl.Expr:
    return (
        pl.when(pl.col("errors") > 1)
        .then(fmt(" (first of {} errors)", "errors"))
        .otherwise(pl.lit(""))
    )


@rule(
    code="SC001",
    name="schema-envelope-invalid",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def schema_envelope_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    With `--schema-dir`, flags messages that fail the official schema of their JSON-RPC
    envelope.

    The definitions come from `DIR/<revision>/schema.json` of the session's revision:
    `JSONRPCRequest`, `JSONRPCNotification`, and for responses
    `JSONRPCResponse`/`JSONRPCError` (up to 2025-06-18) or
    `JSONRPCResultResponse`/`JSONRPCErrorResponse` (2025-11-25 and later).

    ## Why is this bad?
    The envelope is what every peer parses first: a missing `"jsonrpc": "2.0"`, an id that
    is neither a string nor an integer, a non-object `params` or `result`, or an error
    without an integer `code` and a string `message` makes the message unusable before its
    method is even looked at. In 2026-07-28 the result envelope also requires `resultType`.
    Up to 2025-06-18 `JSONRPCError` requires an `id`, so an id-less error fails there
    (SPEC_RULES §6 quirk 8). The `"id": null` JSON-RPC prescribes for a parse error
    (-32700) or invalid request (-32600) is not flagged, though no MCP schema admits it.
    Formats such as `uri` are not checked.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 3, "error": {"code": "-32601", "message": "Method not found"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "Method not found"}}
    ```

    ## Reference
    "All messages between MCP clients and servers **MUST** follow the JSON-RPC 2.0
    specification." — basic/index.mdx#messages (all revisions). The JSON Schema
    `schema/<revision>/schema.json`, generated from the TypeScript schema that "is the source
    of truth for all protocol messages and structures" (basic/index.mdx#schema): definitions
    `JSONRPCRequest`, `JSONRPCNotification`, `JSONRPCResponse`, `JSONRPCError`,
    `JSONRPCResultResponse`, `JSONRPCErrorResponse`.
    """
    bad = _validation(ctx).filter(pl.col("check") == "envelope")
    return findings(bad, fmt("{} fails at {}: {}{}", "definition", "path", "error", _more()))


@rule(
    code="SC002",
    name="schema-message-invalid",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def schema_message_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    With `--schema-dir`, flags requests and notifications that fail the official schema
    definition of their method.

    The definition is the method's in the session's revision (`CallToolRequest` for
    `tools/call`, `ProgressNotification` for `notifications/progress`, ...). Methods the
    revision does not define are left to the envelope check (SC001). Where the JSON Schema
    says `integer` but the TypeScript schema it is generated from says `number`, in data
    that is anyone's (2026-07-28 `JSONValue`, such as experimental capabilities, which also
    take `null`; the answers in an elicitation's `content`), any number passes.

    ## Why is this bad?
    The receiver decodes `params` by the method's definition: a missing required member
    (a tool call without `name`, a 2026-07-28 request without the `_meta` protocol version
    and client capabilities), a member of the wrong type or an unknown enum value is
    rejected or misread. Problems the envelope already reports are not repeated here.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": {"q": "x"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
     "params": {"name": "search", "arguments": {"q": "x"}}}
    ```

    ## Reference
    The TypeScript schema "is the source of truth for all protocol messages and structures"
    — basic/index.mdx#schema (all revisions); checked against its JSON Schema
    `schema/<revision>/schema.json`, definition `<X>Request` / `<X>Notification` of the
    method (up to 2025-06-18 they lack the `jsonrpc`/`id` envelope, which SC001 checks).
    """
    bad = _validation(ctx).filter(pl.col("check") == "message")
    return findings(bad, fmt("{} fails at {}: {}{}", "definition", "path", "error", _more()))


@rule(
    code="SC003",
    name="schema-result-invalid",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def schema_result_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    With `--schema-dir`, flags success responses whose result does not match the official
    result type of the request they answer.

    The check is `msg.result` against `<X>Result` up to 2025-11-25
    (`CreateTaskResult` for an answer with a `task` member to a task-augmented 2025-11-25
    request; whether a plain answer should have been one is TK006's), the whole message against
    `<X>ResultResponse` in 2026-07-28. A 2026-07-28 result that says
    `"resultType": "complete"` is checked against `<X>Result` itself, because
    `<X>ResultResponse` also admits any object as an `InputRequiredResult`. The answers in
    an `ElicitResult`'s `content` may be any number, as the TypeScript schema says
    (`3.14` typed into a `"type": "number"` field), where the JSON Schema generated from
    it narrows them to integers; the same holds for 2026-07-28 `JSONValue`.

    ## Why is this bad?
    The requester decodes the result by the method it called: a `tools/call` result without
    `content`, a `tools/list` result whose tools lack an `inputSchema`, or a resource
    content without `uri` breaks the client. The generic result check of the envelope
    accepts any object, so only the pairing shows which type was due.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "search"}]}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
      {"name": "search", "inputSchema": {"type": "object"}}]}}
    ```

    ## Reference
    The TypeScript schema "is the source of truth for all protocol messages and structures"
    — basic/index.mdx#schema (all revisions); checked against its JSON Schema
    `schema/<revision>/schema.json`: `<X>Result` of the answered method, or
    `<X>ResultResponse` (2026-07-28).
    """
    bad = _validation(ctx).filter(pl.col("check") == "result")
    if bad.is_empty():  # always, without --schema-dir: no need to read the responses
        return findings(bad, "")
    bad = bad.join(ctx.part("responses", "ordinal", "request_method"), on="ordinal", how="left")
    return findings(
        bad,
        fmt(
            "result of {} fails {} at {}: {}{}",
            "request_method",
            "definition",
            "path",
            "error",
            _more(),
        ),
    )


@rule(
    code="SC004",
    name="schema-error-invalid",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def schema_error_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    With `--schema-dir`, flags error responses that fail the official schema definition
    dedicated to their error code.

    These are 2025-11-25 `URLElicitationRequiredError` (-32042);
    2026-07-28 `HeaderMismatchError` (-32020), `MissingRequiredClientCapabilityError`
    (-32021) and `UnsupportedProtocolVersionError` (-32022) on the whole message, and
    `ParseError`, `InvalidRequestError`, `MethodNotFoundError`, `InvalidParamsError`,
    `InternalError` on the `error` member. Other codes and revisions have no such
    definition.

    ## Why is this bad?
    These codes promise structured `data` a client acts on, e.g. the `supported` and
    `requested` versions of an unsupported-version error or the elicitations a
    -32042 error asks for; without them the client cannot recover.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022,
     "message": "Unsupported protocol version", "data": {"requested": "1900-01-01"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022,
     "message": "Unsupported protocol version",
     "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"}}}
    ```

    ## Reference
    The TypeScript schema "is the source of truth for all protocol messages and structures"
    — basic/index.mdx#schema; checked against `schema/<revision>/schema.json`:
    `URLElicitationRequiredError` (2025-11-25), and in 2026-07-28 the definitions listed
    above (basic/index.mdx#error-codes).
    """
    bad = _validation(ctx).filter(pl.col("check") == "error")
    if bad.is_empty():  # always, without --schema-dir: no need to read the messages
        return findings(bad, "")
    bad = ctx.lookup(bad, "ordinal", error_code="error_code")
    return findings(
        bad,
        fmt("error {} fails {} at {}: {}{}", "error_code", "definition", "path", "error", _more()),
    )
