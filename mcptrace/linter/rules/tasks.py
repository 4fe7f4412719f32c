"""TK: 2025-11-25 task-augmented requests (statuses, cancellation, related-task metadata).

A task lives at its receiver, the side that answered a request carrying `params.task`
with a `CreateTaskResult`. Every message that reports a task's status comes from that
side: the `CreateTaskResult` (`result.task`), the results of `tasks/get`, `tasks/cancel`
and `tasks/list`, and `notifications/tasks/status`. A task is therefore known by its
session, the direction of those messages and its `taskId`; and its statuses, all sent
the same way, keep their order even where a capture cannot order the two directions
against each other.

2026-07-28 moved tasks out of the core protocol into the `io.modelcontextprotocol/tasks`
extension, which redefines the methods (no `tasks/result` or `tasks/list`; cancellation
is cooperative): these rules apply to 2025-11-25 only.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import and_more, findings, line_of, quoted, rule, shown
from mcptrace.linter.rules.cancellation import matched_cancels, sent_well_after_response
from mcptrace.linter.rules.tools import defined_at, tool_definitions
from mcptrace.message_text import json_paths
from mcptrace.protocol import TASK_AUGMENTATION_GATES, has_capability

_TASKS_2025 = ("2025-11-25",)
_STATUS = "notifications/tasks/status"
_TERMINAL = ("completed", "failed", "cancelled")
_STATUSES = ("working", "input_required", *_TERMINAL)
_RELATED = "io.modelcontextprotocol/related-task"
#: columns of :func:`_statuses`
_OBSERVED = {
    "session": pl.UInt32,
    "direction": pl.String,
    "task_id": pl.String,
    "status": pl.String,
    "updated": pl.String,
    "ordinal": pl.Int64,
    "what": pl.String,
    "request_ordinal": pl.Int64,
}


def _statuses(ctx: LintContext) -> pl.DataFrame:
    """Every status a task is reported in, in capture order (see the module docstring)."""
    return ctx.memo("tasks.statuses", _build_statuses)


def _list_entries(texts: pl.Series) -> pl.DataFrame:
    """``tasks`` arrays of `tasks/list` results (JSON texts) as rows: ``_tasks`` (the
    text), task_id, status, updated. Entries without a string taskId and status are left
    out. Parsed in Python once per distinct text: such results are few."""
    rows: list[tuple[str, str, str, str | None]] = []
    for text in texts.unique().drop_nulls().to_list():
        try:
            entries: Any = _json.loads(text)
        except _json.JSONDecodeError:
            continue
        if not isinstance(entries, list):
            continue
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            task_id, status = entry.get("taskId"), entry.get("status")
            updated = entry.get("lastUpdatedAt")
            if isinstance(task_id, str) and isinstance(status, str):
                rows.append((text, task_id, status, updated if isinstance(updated, str) else None))
    return pl.DataFrame(
        rows,
        schema={
            "_tasks": pl.String,
            "task_id": pl.String,
            "status": pl.String,
            "updated": pl.String,
        },
        orient="row",
    )


def _created(ctx: LintContext) -> pl.DataFrame:
    """The success responses to task-augmented requests (`params.task`; `"task"` is a rare
    marker, so only a few request texts are read), with the task they report: session,
    direction, ordinal of the response, request_ordinal, task_id, status, updated."""
    requests = (
        ctx.part("requests", "rare", "modern", "parse_error", "ordinal", "message")
        # 2026-07-28 has no core tasks: its requests (the rare marker is common there) are
        # left out early, as the engine would drop what they led to
        .filter(pl.col("rare") & ~pl.col("modern") & pl.col("parse_error").is_null())
        .filter(pl.col("message").str.contains('"task"', literal=True))
        .filter(pl.col("message").str.json_path_match("$.params.task").is_not_null())
        .select(request_ordinal="ordinal")
    )
    if requests.is_empty():
        return pl.DataFrame(schema=_OBSERVED)
    answered = ctx.call_lookup(requests, "request_ordinal", ordinal="response_ordinal").filter(
        pl.col("ordinal").is_not_null()
    )
    return (
        ctx.lookup(
            answered,
            "ordinal",
            inner=True,
            kind="kind",
            parse_error="parse_error",
            session="session",
            direction="direction",
            message="message",
        )
        .filter((pl.col("kind") == "response") & pl.col("parse_error").is_null())
        .pipe(
            json_paths,
            task_id="$.result.task.taskId",
            status="$.result.task.status",
            updated="$.result.task.lastUpdatedAt",
        )
    )


def _build_statuses(ctx: LintContext) -> pl.DataFrame:
    """session, direction (as text), task_id, status, updated (`lastUpdatedAt` text),
    ordinal, what (the kind of message) and request_ordinal (of the request a response
    answers), sorted by ordinal. Only the five statuses of the spec."""
    where = ("session", "direction", "ordinal")
    # responses to tasks/*: a typed test (the texts of tasks/get results have no marker)
    responses = (
        ctx.part("responses", "request_method", "kind", "parse_error", *where, "message")
        .filter(pl.col("request_method").str.starts_with("tasks/"))
        .filter((pl.col("kind") == "response") & pl.col("parse_error").is_null())
        .with_columns(request_ordinal=pl.lit(None, pl.Int64))
    )
    notified = (
        ctx.part("notifications", "method", "parse_error", *where, "message")
        .filter(pl.col("method") == _STATUS)
        .filter(pl.col("parse_error").is_null())
    )
    created = _created(ctx)
    if responses.is_empty() and notified.is_empty() and created.is_empty():
        return pl.DataFrame(schema=_OBSERVED)
    method = pl.col("request_method")
    single = responses.filter(method.is_in(["tasks/get", "tasks/cancel"])).pipe(
        json_paths,
        task_id="$.result.taskId",
        status="$.result.status",
        updated="$.result.lastUpdatedAt",
    )
    lists = responses.filter(method == "tasks/list").pipe(json_paths, _tasks="$.result.tasks")
    listed = lists.join(_list_entries(lists["_tasks"]), on="_tasks", maintain_order="left")
    notified = notified.pipe(
        json_paths,
        task_id="$.params.taskId",
        status="$.params.status",
        updated="$.params.lastUpdatedAt",
    ).with_columns(request_ordinal=pl.lit(None, pl.Int64))
    parts = [
        created.with_columns(what=pl.lit("CreateTaskResult")),
        single.with_columns(what=fmt("{} result", "request_method")),
        listed.with_columns(what=pl.lit("tasks/list result")),
        notified.with_columns(what=pl.lit(_STATUS)),
    ]
    return (
        pl.concat(
            [p.select(pl.col(c).cast(t) for c, t in _OBSERVED.items()) for p in parts],
            how="vertical",
        )
        .filter(pl.col("task_id").is_not_null() & pl.col("status").is_in(_STATUSES))
        .sort("ordinal", maintain_order=True)
    )


def _receiver(direction: pl.Expr) -> pl.Expr:
    """The direction the receiver's messages travel, given a request's direction."""
    return direction.cast(pl.String).replace_strict(
        {"c2s": "s2c", "s2c": "c2s"}, default="unknown", return_dtype=pl.String
    )


@rule(
    code="TK001",
    name="task-cancelled-by-notification",
    severity="error",
    revisions=_TASKS_2025,
    scope="session",
)
def task_cancelled_by_notification(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/cancelled` naming a task-augmented request (one with
    `params.task`) that was answered with a task (a `CreateTaskResult`), sent clearly
    after that answer.

    Clearly after means more than 100 ms after it, or (without timestamps) after the
    canceller had sent other messages since: a cancel that crossed the answer on the wire
    was sent before the requestor knew of the task, and is not reported (the same race
    tolerance as CN002). A cancel sent before the answer is not reported either.

    ## Why is this bad?
    Once a request has become a task, the request itself is over: its response (the
    `CreateTaskResult`) has been sent, and the work goes on as the task. The receiver
    ignores a cancel notification for a request it already answered, so the task keeps
    running; `tasks/cancel` is the only way to stop it, and its answer says what state
    the task ended in.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "export", "task": {"ttl": 60000}}}
    {"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "t-1", "status": "working",
     "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
     "ttl": 60000}}}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tasks/cancel", "params": {"taskId": "t-1"}}
    ```

    ## Reference
    "For task-augmented requests, the `tasks/cancel` request MUST be used instead of the
    `notifications/cancelled` notification." —
    docs/specification/2025-11-25/basic/utilities/cancellation.mdx#behavior-requirements
    (2025-11-25); schema/2025-11-25/schema.ts `CancelledNotificationParams.requestId`:
    "This MUST NOT be used for cancelling tasks (use the `tasks/cancel` request instead)."
    """
    tasks = _statuses(ctx).filter(pl.col("what") == "CreateTaskResult")
    empty = findings(pl.DataFrame(schema={"ordinal": pl.Int64}), "")
    if tasks.is_empty():
        return empty
    tasks = tasks.unique("request_ordinal", keep="first").select("request_ordinal", "task_id")
    unordered = ctx.unordered_sessions.implode()
    cancels = (
        matched_cancels(ctx)
        .join(tasks, on="request_ordinal")
        .filter(
            (pl.col("response_ordinal") < pl.col("ordinal"))
            & ~pl.col("session").is_in(unordered)
            & (pl.col("direction") != "unknown")
        )
    )
    if cancels.is_empty():
        return empty
    late = sent_well_after_response(ctx, cancels)
    return findings(
        late.sort("ordinal"),
        fmt(
            "notifications/cancelled names request id {} ({}), which became task {} at {}: "
            "a task is cancelled with tasks/cancel",
            "id",
            line_of("request_ordinal"),
            "task_id",
            line_of("response_ordinal"),
        ),
    )


@rule(
    code="TK002",
    name="task-status-transition",
    severity="error",
    revisions=_TASKS_2025,
    scope="session",
)
def task_status_transition(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a message reporting a task in another status after the task had reached a
    terminal status (`completed`, `failed` or `cancelled`).

    A task's statuses are read, in capture order, from its `CreateTaskResult` (the answer
    to a request with `params.task`), the results
    of `tasks/get`, `tasks/cancel` and `tasks/list`, and `notifications/tasks/status`.
    One finding per task, at the first message leaving the terminal status. A report
    whose `lastUpdatedAt` is earlier than that of the terminal report (both ISO 8601 with
    an offset) is a snapshot taken before the task ended, sent late: not reported.

    Every other move between the five statuses is allowed (`working` and
    `input_required` may each move to any status). Not checked: that a task begins in
    `working` (its `CreateTaskResult` reports the status at the time of the answer, which
    may have moved on already), and statuses outside the five (a schema matter).

    ## Why is this bad?
    A terminal status is final: the requestor stops polling, fetches the result with
    `tasks/result` and may drop what it held for the task. A task that comes back to
    life (or a cancelled task that later reports `completed`) leaves the requestor with
    a result it cannot trust and work it believed stopped still running.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 3, "result": {"taskId": "t-1", "status": "completed",
     "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:40:00Z",
     "ttl": 60000}}
    {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"taskId": "t-1",
     "status": "working", "createdAt": "2025-11-25T10:30:00Z",
     "lastUpdatedAt": "2025-11-25T10:41:00Z", "ttl": 60000}}
    ```

    Use instead: once `t-1` is `completed`, report it as `completed` from then on.

    ## Reference
    "Tasks with a `completed`, `failed`, or `cancelled` status are in a terminal state and
    MUST NOT transition to any other status" —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#task-status-lifecycle
    (2025-11-25); also "Once a task is cancelled, it MUST remain in `cancelled` status even
    if execution continues to completion or fails." —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#task-cancellation.
    """
    statuses = _statuses(ctx)
    if statuses.is_empty():
        return findings(statuses, "")
    key = ["session", "direction", "task_id"]
    ended = (
        statuses.filter(pl.col("status").is_in(_TERMINAL))
        .group_by(key, maintain_order=True)
        .agg(pl.all().first())
        .select(
            *key,
            _end_ordinal="ordinal",
            _end_status="status",
            _end_updated="updated",
            _end_what="what",
        )
    )
    if ended.is_empty():
        return findings(ended.rename({"_end_ordinal": "ordinal"}), "")
    time = pl.Datetime("us", "UTC")

    def parsed(column: str) -> pl.Expr:
        return pl.col(column).str.to_datetime("%+", time_zone="UTC", strict=False).cast(time)

    later = (
        statuses.join(ended, on=key)
        .filter(
            (pl.col("ordinal") > pl.col("_end_ordinal"))
            & (pl.col("status") != pl.col("_end_status"))
        )
        .filter(~(parsed("updated") < parsed("_end_updated")).fill_null(False))
        .sort("ordinal")
        .group_by(key, maintain_order=True)
        .agg(pl.all().first(), _count=pl.len())
    )
    more = and_more()
    return findings(
        later,
        fmt(
            "{} reports task {} as {}, but it was already {} ({} at {}), a terminal status{}",
            "what",
            "task_id",
            "status",
            "_end_status",
            "_end_what",
            line_of("_end_ordinal"),
            more,
        ),
    )


@rule(
    code="TK003",
    name="task-cancel-terminal-not-rejected",
    severity="error",
    revisions=_TASKS_2025,
    scope="pairing",
)
def task_cancel_terminal_not_rejected(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a successful result to `tasks/cancel` for a task that had already been reported
    in a terminal status (`completed`, `failed` or `cancelled`) before the request.

    The terminal status is any earlier report from the receiver (see TK002 for the
    messages read). Error responses are not checked here, whatever their code. Captures
    that cannot order the two directions (per-direction stdio files) are skipped.

    ## Why is this bad?
    A task in a terminal status can no longer be cancelled. Answering with a result
    (typically the task as `cancelled`) tells the requestor the cancel worked and
    may rewrite a `completed` or `failed` task as `cancelled`, so the requestor discards
    a result that exists, or believes a failure was a cancellation. The error `-32602`
    tells it the task had already ended.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 5, "result": {"taskId": "t-1", "status": "completed",
     "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:40:00Z",
     "ttl": 60000}}
    {"jsonrpc": "2.0", "id": 6, "method": "tasks/cancel", "params": {"taskId": "t-1"}}
    {"jsonrpc": "2.0", "id": 6, "result": {"taskId": "t-1", "status": "cancelled",
     "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:41:00Z",
     "ttl": 60000}}
    ```
    (the first line answers a `tasks/get` for `t-1`)

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 6, "error": {"code": -32602,
     "message": "Cannot cancel task: already in terminal status 'completed'"}}
    ```

    ## Reference
    "Receivers MUST reject cancellation requests for tasks already in a terminal status
    (`completed`, `failed`, or `cancelled`) with error code `-32602` (Invalid params)." —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#task-cancellation (2025-11-25).
    """
    statuses = _statuses(ctx).filter(pl.col("status").is_in(_TERMINAL))
    empty = findings(pl.DataFrame(schema={"ordinal": pl.Int64}), "")
    if statuses.is_empty():  # the usual case: the requests are not searched for cancels
        return empty
    cancels = ctx.part(
        "requests", "method", "parse_error", "session", "direction", "ordinal", "message"
    ).filter((pl.col("method") == "tasks/cancel") & pl.col("parse_error").is_null())
    if cancels.is_empty():
        return empty
    unordered = ctx.unordered_sessions.implode()
    cancels = (
        cancels.filter(~pl.col("session").is_in(unordered))
        .pipe(json_paths, task_id="$.params.taskId")
        .select(
            "session",
            "task_id",
            direction=_receiver(pl.col("direction")),
            request_ordinal="ordinal",
        )
    )
    cancels = (
        ctx.call_lookup(cancels, "request_ordinal", response_ordinal="response_ordinal")
        .filter(pl.col("response_ordinal").is_not_null() & pl.col("task_id").is_not_null())
        .pipe(ctx.lookup, "response_ordinal", _kind="kind")
        .filter(pl.col("_kind") == "response")
        .sort("request_ordinal")
    )
    ended = statuses.select(
        "session",
        "direction",
        "task_id",
        _end_ordinal="ordinal",
        _end_status="status",
    )
    late = cancels.join_asof(
        ended,
        left_on="request_ordinal",
        right_on="_end_ordinal",
        by=["session", "direction", "task_id"],
        strategy="backward",
        check_sortedness=False,
    ).filter(pl.col("_end_ordinal").is_not_null())
    return findings(
        late.with_columns(ordinal="response_ordinal"),
        fmt(
            "tasks/cancel ({}) for task {}, already {} at {}, answered with a result "
            "instead of error -32602",
            line_of("request_ordinal"),
            "task_id",
            "_end_status",
            line_of("_end_ordinal"),
        ),
    )


@rule(
    code="TK004",
    name="task-result-without-related-task",
    severity="error",
    revisions=_TASKS_2025,
    scope="pairing",
)
def task_result_without_related_task(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a successful `tasks/result` response whose `result._meta` lacks
    `io.modelcontextprotocol/related-task`, or whose `taskId` there is not the `taskId`
    the request asked for.

    Error responses are not checked (they have no `_meta`). Not checked either: the
    related-task metadata other messages of a task must carry (such as an
    `elicitation/create` sent while the task is `input_required`: which task they belong
    to is not in the message), and the metadata that `tasks/get`, `tasks/list`,
    `tasks/cancel` and `notifications/tasks/status` should not carry (a SHOULD NOT).

    ## Why is this bad?
    A `tasks/result` result is exactly the result of the underlying request (a
    `CallToolResult`, say), with no field naming the task. The related-task metadata is
    the only thing in the message that ties the payload to its task, for a requestor
    that matches results to tasks or a proxy that routes them.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": "t-1"}}
    {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "done"}],
     "isError": false}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "done"}],
     "isError": false,
     "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-1"}}}}
    ```

    ## Reference
    "The `tasks/result` operation MUST include this metadata in its response, as the
    result structure itself does not contain the task ID." —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#related-task-metadata
    (2025-11-25); the value is "an object with a `taskId` matching the associated task
    ID" — tasks.mdx#associating-task-related-messages.
    """
    responses = ctx.part(
        "responses",
        "kind",
        "request_method",
        "parse_error",
        "request_ordinal",
        "ordinal",
        "message",
    ).filter(
        (pl.col("request_method") == "tasks/result")
        & (pl.col("kind") == "response")
        & pl.col("parse_error").is_null()
    )
    if responses.is_empty():
        return findings(responses, "")
    meta = f'$.result._meta["{_RELATED}"]'
    rows = (
        responses.pipe(json_paths, _related=meta, _related_id=meta + ".taskId")
        .pipe(ctx.lookup, "request_ordinal", _request="message")
        .with_columns(_asked=pl.col("_request").str.json_path_match("$.params.taskId"))
    )
    missing = pl.col("_related").is_null()
    wrong = pl.col("_related_id").is_null() | (
        pl.col("_asked").is_not_null() & (pl.col("_related_id") != pl.col("_asked"))
    )
    bad = rows.filter(missing | wrong)
    return findings(
        bad,
        pl.when(missing)
        .then(
            fmt(
                'tasks/result response (request at {}) has no _meta["{}"]',
                line_of("request_ordinal"),
                pl.lit(_RELATED),
            )
        )
        .when(pl.col("_related_id").is_null())
        .then(fmt('_meta["{}"] of a tasks/result response has no taskId', pl.lit(_RELATED)))
        .otherwise(
            fmt(
                '_meta["{}"] of a tasks/result response names task {}, but the request ({}) '
                "asked for task {}",
                pl.lit(_RELATED),
                "_related_id",
                line_of("request_ordinal"),
                "_asked",
            )
        ),
    )


def _task_gates(texts: list[str], paths: list[str]) -> pl.DataFrame:
    """``text`` (a capabilities object, JSON), ``gate`` (a path of ``paths``),
    ``declared`` and ``tasks`` (whether it declares `tasks` at all), for each text that
    is a JSON object: one parse per distinct text, as in capabilities.py."""
    rows: list[tuple[str, str, bool, bool]] = []
    for text in texts:
        try:
            caps: Any = _json.loads(text)
        except _json.JSONDecodeError:
            continue
        if isinstance(caps, dict):
            tasks = has_capability(caps, "tasks")
            rows.extend((text, path, has_capability(caps, path), tasks) for path in paths)
    return pl.DataFrame(
        rows,
        schema={"text": pl.String, "gate": pl.String, "declared": pl.Boolean, "tasks": pl.Boolean},
        orient="row",
    )


#: columns of :func:`_augmented`
_AUGMENTED = {
    "ordinal": pl.Int64,
    "session": pl.UInt32,
    "method": pl.String,
    "direction": pl.String,
    "side": pl.String,
    "gate": pl.String,
    "declared": pl.Boolean,
    "tasks": pl.Boolean,
}


def _augmented(ctx: LintContext) -> pl.DataFrame:
    """The task-augmented requests (`params.task` set) of the methods a task capability
    gates, sent to a receiver whose capabilities are in the capture: ordinal, session,
    method, direction (as text), side (the receiver: client or server), gate (the
    capability path), declared (the receiver declares it) and tasks (it declares `tasks`
    at all)."""
    return ctx.memo("tasks.augmented", _build_augmented)


def _build_augmented(ctx: LintContext) -> pl.DataFrame:
    gates = pl.DataFrame(
        [(method, side, path) for method, (side, path) in TASK_AUGMENTATION_GATES.items()],
        schema={"method": pl.String, "side": pl.String, "gate": pl.String},
        orient="row",
    )
    requests = (
        ctx.part(
            "requests",
            "rare",
            "modern",
            "parse_error",
            "method",
            "session",
            "direction",
            "ordinal",
            "message",
        )
        # `"task"` is a rare marker; 2026-07-28 has no core tasks (see _created)
        .filter(pl.col("rare") & ~pl.col("modern") & pl.col("parse_error").is_null())
        .filter(pl.col("method").is_in(gates["method"].implode()))
        .filter(pl.col("message").str.contains('"task"', literal=True))
        .filter(pl.col("message").str.json_path_match("$.params.task").is_not_null())
    )
    if requests.is_empty():
        return pl.DataFrame(schema=_AUGMENTED)
    # the receiver: the server for requests the client sends, else the client
    sender = pl.when(pl.col("side") == "server").then(pl.lit("c2s")).otherwise(pl.lit("s2c"))
    requests = (
        requests.select(
            "ordinal", "session", "method", direction=pl.col("direction").cast(pl.String)
        )
        .join(gates, on="method", maintain_order="left")
        .filter((pl.col("direction") == sender) | (pl.col("direction") == "unknown"))
    )
    known = (
        ctx.sessions.filter(pl.col("session").is_in(requests["session"].unique().implode()))
        .unpivot(
            ["client_capabilities", "server_capabilities"],
            index="session",
            variable_name="side",
            value_name="text",
        )
        .with_columns(pl.col("side").str.strip_suffix("_capabilities"))
        .filter(pl.col("text").is_not_null())
    )
    declared = known.join(
        _task_gates(known["text"].unique().to_list(), gates["gate"].to_list()), on="text"
    )
    return requests.join(declared, on=["session", "side", "gate"], maintain_order="left").select(
        pl.col(c).cast(t) for c, t in _AUGMENTED.items()
    )


@rule(
    code="TK005",
    name="task-without-capability",
    severity="warning",
    revisions=_TASKS_2025,
    scope="session",
)
def task_without_capability(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a task-augmented request (one with `params.task`) sent to a receiver whose
    capabilities do not declare task support for that request type.

    The capability is `tasks.requests.tools.call` of the server for `tools/call`, and
    `tasks.requests.sampling.createMessage` or `tasks.requests.elicitation.create` of
    the client for `sampling/createMessage` and `elicitation/create`; a value of `false`
    or `null` on the path does not declare it. Only sessions whose receiver's
    capabilities are in the capture (its side of the `initialize` exchange) are judged.
    Not checked: a tool's own `execution.taskSupport`, and task-augmented requests of
    other methods.

    ## Why is this bad?
    The set of capabilities in `capabilities.tasks.requests` is exhaustive: a request
    type not listed there does not support task augmentation. A receiver that did not
    declare it may ignore `params.task` and answer with a plain result, or reject the
    request, while the requestor waits for a `CreateTaskResult` and a task to poll.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}}, "serverInfo": {"name": "srv", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "export", "arguments": {}, "task": {"ttl": 60000}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
     "serverInfo": {"name": "srv", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "export", "arguments": {}, "task": {"ttl": 60000}}}
    ```
    (or call the tool without `task`)

    ## Reference
    "Requestors **SHOULD** only augment requests with a task if the corresponding
    capability has been declared by the receiver." —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#capability-negotiation
    (2025-11-25); for `tools/call`, tasks.mdx#tool-level-negotiation adds "If a server's
    capabilities do not include `tasks.requests.tools.call`, then clients **MUST NOT**
    attempt to use task augmentation on that server's tools".
    """
    bad = _augmented(ctx).filter(~pl.col("declared"))
    why = (
        pl.when(pl.col("tasks"))
        .then(fmt("its tasks capability has no {}", "gate"))
        .otherwise(pl.lit("it declared no tasks capability"))
    )
    return findings(
        bad,
        fmt(
            "{} request carries params.task, but the {} did not declare task support for it ({})",
            "method",
            "side",
            why,
        ),
    )


#: a member missing from a JSON object (``None`` stands for JSON null)
_ABSENT = object()
#: `execution.taskSupport` values that let a client call a tool as a task
_TASK_TOOLS = ("optional", "required")


def _not_created(request: str, response: str) -> str | None:
    """What the ``response`` (JSON text) to ``request`` has instead of a `CreateTaskResult`
    (a `result` with a `task` object), None when it has one; also None when the request's
    `params.task` is no object (such a request is not task-augmented in any usable way)."""
    try:
        asked, answered = _json.loads(request), _json.loads(response)
    except _json.JSONDecodeError:
        return None
    params = asked.get("params") if isinstance(asked, dict) else None
    result = answered.get("result") if isinstance(answered, dict) else None
    if not isinstance(params, dict) or not isinstance(params.get("task"), dict):
        return None
    if not isinstance(result, dict):
        return None
    task = result.get("task", _ABSENT)
    if isinstance(task, dict):
        return None
    if task is _ABSENT:
        members = ", ".join(sorted(result)) or "none"
        return f"its result has no task object (members: {members})"
    return f"its result has task {shown(task)}, not a task object"


def _task_tools_only(ctx: LintContext, rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (request_ordinal, session, method, tool) without the `tools/call`
    requests of a tool whose definition, in the latest earlier `tools/list` result of the
    session, does not offer task execution (`execution.taskSupport` absent or
    `forbidden`). Calls of a tool no earlier result lists are kept."""
    calls = rows.filter(pl.col("method") == "tools/call")
    if calls.is_empty():
        return rows
    listed = defined_at(
        calls.select("session", "tool", ordinal="request_ordinal"),
        tool_definitions(ctx),
        "task_support",
    )
    offered = pl.col("task_support").is_in(_TASK_TOOLS).fill_null(False)
    refused = listed.filter(pl.col("_defined").is_not_null() & ~offered)["ordinal"]
    return rows.filter(~pl.col("request_ordinal").is_in(refused.implode()))


def _answers(ctx: LintContext, requests: pl.DataFrame, **columns: str) -> pl.DataFrame:
    """``requests`` (with ``request_ordinal``) that were answered, with ``ordinal`` and
    ``kind`` of the readable answer and its ``columns`` (name=messages column)."""
    return (
        ctx.call_lookup(requests, "request_ordinal", ordinal="response_ordinal")
        .filter(pl.col("ordinal").is_not_null())
        .pipe(ctx.lookup, "ordinal", inner=True, kind="kind", parse_error="parse_error", **columns)
        .filter(pl.col("parse_error").is_null())
        .drop("parse_error")
    )


@rule(
    code="TK006",
    name="task-create-result-missing",
    severity="error",
    revisions=_TASKS_2025,
    scope="pairing",
)
def task_create_result_missing(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a successful response to a task-augmented request (`params.task`) that is not
    a `CreateTaskResult`, when the receiver declared task support for that request type.

    A `CreateTaskResult` is a result with a `task` object; a request is task-augmented
    when its `params.task` is an object. The capability is the one TK005 reads
    (`tasks.requests.tools.call` of the server, `tasks.requests.sampling.createMessage`
    or `tasks.requests.elicitation.create` of the client); only sessions whose
    receiver's capabilities are in the capture are judged. A receiver that did not
    declare it must process the request normally, ignoring `task`: its plain result is
    right (TK005 flags the requestor). Error responses are not results and are not
    judged, nor is a `tools/call` of a tool whose definition (in the latest earlier
    `tools/list` result of the session) has `execution.taskSupport` absent or
    `forbidden`: the client must not call it as a task (TK007), and the server should
    answer with `-32601`. Whether the `task` object itself is well formed is left to schema
    validation (SC003).

    ## Why is this bad?
    A requestor that augments a request with a task waits for a task: it reads
    `result.task.taskId`, polls `tasks/get` and fetches the outcome with `tasks/result`.
    Given the operation's result instead, it finds no task to follow, and may throw the
    result away as malformed, or wait for a task that was never created.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
     "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
     "serverInfo": {"name": "srv", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "export", "arguments": {}, "task": {"ttl": 60000}}}
    {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "done"}]}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "t-1", "status": "working",
     "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
     "ttl": 60000}}}
    ```
    (the tool's result then comes from `tasks/result`)

    ## Reference
    "Receivers that accept a task-augmented request MUST return a `CreateTaskResult` as
    the response." — docs/specification/2025-11-25/basic/utilities/tasks.mdx#result-retrieval
    (2025-11-25); the exemptions: "Receivers that do not declare the task capability for
    a request type MUST process requests of that type normally, ignoring any
    task-augmentation metadata if present." — tasks.mdx#task-support-and-handling; "If
    `execution.taskSupport` is not present or `"forbidden"`, clients MUST NOT attempt to
    invoke the tool as a task. Servers SHOULD return a `-32601` (Method not found) error
    if a client attempts to do so." — tasks.mdx#tool-level-negotiation.
    """
    requests = _augmented(ctx).filter(pl.col("declared"))
    if requests.is_empty():
        return findings(pl.DataFrame(schema={"ordinal": pl.Int64}), "")
    rows = (
        _answers(
            ctx,
            requests.select("session", "method", "side", "gate", request_ordinal="ordinal"),
            response="message",
        )
        .filter(pl.col("kind") == "response")
        .pipe(ctx.lookup, "request_ordinal", request="message", tool="target")
        .pipe(lambda rows: _task_tools_only(ctx, rows))
    )
    problems = [_not_created(*pair) for pair in rows.select("request", "response").iter_rows()]
    bad = rows.with_columns(pl.Series("_problem", problems, dtype=pl.String)).filter(
        pl.col("_problem").is_not_null()
    )
    return findings(
        bad.sort("ordinal"),
        fmt(
            "response to a task-augmented {} ({}) is not a CreateTaskResult, though the "
            "{} declared {}: {}",
            "method",
            line_of("request_ordinal"),
            "side",
            "gate",
            "_problem",
        ),
    )


#: the server capability under which a tool's `execution.taskSupport` is binding
_TOOLS_CALL_GATE = TASK_AUGMENTATION_GATES["tools/call"][1]
#: columns of :func:`_judged_tool_calls`
_TOOL_CALLS = {
    "ordinal": pl.Int64,
    "session": pl.UInt32,
    "tool": pl.String,
    "task_support": pl.String,
    "list_ordinal": pl.Int64,
    "augmented": pl.Boolean,
    "malformed": pl.String,
}


def _params_task(request: str) -> tuple[bool, str | None]:
    """Whether the ``request`` (JSON text) is task-augmented (its `params.task` is an
    object), and the `params.task` shown (see :func:`_shown`) when it is there but is
    no object (None otherwise)."""
    try:
        doc = _json.loads(request)
    except _json.JSONDecodeError:
        return False, None
    params = doc.get("params") if isinstance(doc, dict) else None
    task = params.get("task", _ABSENT) if isinstance(params, dict) else _ABSENT
    if isinstance(task, dict):
        return True, None
    return False, None if task is _ABSENT else shown(task)


def _tool_task_sessions(ctx: LintContext) -> pl.Series:
    """Codes of the sessions whose server declared `tasks.requests.tools.call`."""
    servers = ctx.sessions.select("session", text="server_capabilities").filter(
        pl.col("text").str.contains('"tasks"', literal=True)
    )
    if servers.is_empty():
        return servers["session"]
    gates = _task_gates(servers["text"].unique().to_list(), [_TOOLS_CALL_GATE])
    declared = gates.filter(pl.col("declared"))["text"]
    return servers.filter(pl.col("text").is_in(declared.implode()))["session"]


def _judged_tool_calls(ctx: LintContext) -> pl.DataFrame:
    """The client's `tools/call` requests that a tool's `execution.taskSupport` binds and
    may be breaking: in a session whose server declared `tasks.requests.tools.call`, of a
    tool defined in the latest earlier `tools/list` result of the session, and either
    naming `"task"` while the tool offers no task execution or calling a tool whose
    taskSupport is `required`. Columns: ordinal, session, tool, task_support (when a
    string), list_ordinal (of that `tools/list` result), augmented (`params.task` is an
    object) and malformed (a `params.task` there but no object, shown)."""
    return ctx.memo("tasks.judged_tool_calls", _build_judged_tool_calls)


def _build_judged_tool_calls(ctx: LintContext) -> pl.DataFrame:
    empty = pl.DataFrame(schema=_TOOL_CALLS)
    # a handful of sessions at most (usually none) declare the capability: everything
    # below runs on their requests only
    sessions = _tool_task_sessions(ctx)
    if sessions.is_empty():
        return empty
    calls = (
        ctx.part(
            "requests",
            "method",
            "session",
            "modern",
            "parse_error",
            "direction",
            "target",
            "ordinal",
            "message",
        )
        .filter(pl.col("method") == "tools/call")
        .filter(pl.col("session").is_in(sessions.implode()))
        # "the latest earlier tools/list result" needs both directions in one order
        .filter(~pl.col("session").is_in(ctx.unordered_sessions.implode()))
        .filter(
            # 2026-07-28 has no core tasks (see _created)
            ~pl.col("modern")
            & pl.col("parse_error").is_null()
            & pl.col("target").is_not_null()
            & (pl.col("direction").cast(pl.String) != "s2c")
        )
        .select("session", "ordinal", "message", tool="target")
    )
    if calls.is_empty():
        return empty
    listed = defined_at(calls, tool_definitions(ctx), "task_support").filter(
        pl.col("_defined").is_not_null()
    )
    offered = pl.col("task_support").is_in(_TASK_TOOLS).fill_null(False)
    mentions = pl.col("message").str.contains('"task"', literal=True)
    listed = listed.filter((~offered & mentions) | (pl.col("task_support") == "required"))
    if listed.is_empty():
        return empty
    texts = listed.filter(mentions)["message"].unique().to_list()
    tasks = pl.DataFrame(
        [(text, *_params_task(text)) for text in texts],
        schema={"message": pl.String, "augmented": pl.Boolean, "malformed": pl.String},
        orient="row",
    )
    return (
        listed.join(tasks, on="message", how="left", maintain_order="left")
        .with_columns(pl.col("augmented").fill_null(False))
        .rename({"_defined": "list_ordinal"})
        .select(pl.col(c).cast(t) for c, t in _TOOL_CALLS.items())
    )


@rule(
    code="TK007",
    name="tool-task-support-ignored",
    severity="error",
    revisions=_TASKS_2025,
    scope="session",
)
def tool_task_support_ignored(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a client's `tools/call` that breaks the tool's `execution.taskSupport`: a
    task-augmented call of a tool that forbids tasks, or a plain call of one that
    requires them.

    Judged only when the server declared `tasks.requests.tools.call`. A call is
    task-augmented when its `params.task` is an object; it breaks a taskSupport that is
    absent or `"forbidden"` when it is, and one that is `"required"` when it is not.
    The tool's definition is the one in the latest earlier `tools/list` result of the
    session (a tool re-listed with another taskSupport is judged by its latest
    definition); a call of a tool no earlier result lists is not judged, nor are
    sessions whose server's capabilities are not in the capture, or whose two directions
    the capture cannot order (per-direction stdio files). Only `"optional"` and
    `"required"` let a client call a tool as a task: a taskSupport outside the three
    values (a schema error) counts as absent, like one that is not a string. A
    `params.task` that is there but is no object (`null`, a string) is no task
    augmentation: for a `"required"` tool the call is flagged as not made as a task.
    Without the server capability, a task-augmented call is TK005's finding, not this
    one's.

    ## Why is this bad?
    A tool's taskSupport is the server's word on how the tool can run, given to the
    client before it calls. A tool that cannot run as a task may be rejected with
    `-32601` (Method not found), or run to completion while the client waits for a
    `CreateTaskResult` that never comes; a tool that requires a task (long-running work
    whose result is fetched later) is rejected with `-32601` when called plainly.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "export",
     "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
     {"name": "lookup", "inputSchema": {"type": "object"}}]}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "export", "arguments": {}}}
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "lookup", "arguments": {}, "task": {"ttl": 60000}}}
    ```
    (the server declared `tasks.requests.tools.call`)

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "export", "arguments": {}, "task": {"ttl": 60000}}}
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "lookup", "arguments": {}}}
    ```

    ## Reference
    "If a server's capabilities include `tasks.requests.tools.call`, then clients consider
    the value of `execution.taskSupport`, and handle it accordingly", then "If
    `execution.taskSupport` is not present or `"forbidden"`, clients **MUST NOT** attempt
    to invoke the tool as a task." and "If `execution.taskSupport` is `"required"`,
    clients **MUST** invoke the tool as a task." —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#tool-level-negotiation
    (2025-11-25).
    """
    calls = _judged_tool_calls(ctx)
    offered = pl.col("task_support").is_in(_TASK_TOOLS).fill_null(False)
    required = (pl.col("task_support") == "required").fill_null(False)
    augmented = pl.col("augmented")
    bad = calls.filter((augmented & ~offered) | (required & ~augmented))
    support = (
        pl.when(pl.col("task_support").is_null())
        .then(pl.lit("no execution.taskSupport"))
        .otherwise(fmt("execution.taskSupport {}", quoted(bad, "task_support")))
    )
    did = (
        pl.when(augmented)
        .then(pl.lit("is task-augmented"))
        .when(pl.col("malformed").is_null())
        .then(pl.lit("has no params.task"))
        .otherwise(fmt("has params.task {}, not a task object", "malformed"))
    )
    need = (
        pl.when(augmented)
        .then(pl.lit("the client must not call it as a task"))
        .otherwise(pl.lit("the client must call it as a task"))
    )
    return findings(
        bad,
        fmt(
            "tools/call of tool {} {}, but the tool has {} (tools/list result at {}): {}",
            quoted(bad, "tool"),
            did,
            support,
            line_of("list_ordinal"),
            need,
        ),
    )


@rule(
    code="TK008",
    name="required-task-tool-not-rejected",
    severity="error",
    revisions=_TASKS_2025,
    scope="pairing",
)
def required_task_tool_not_rejected(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an answer other than error `-32601` (Method not found) to a `tools/call`
    without `params.task` of a tool whose `execution.taskSupport` is `"required"`.

    A result is flagged (a tool error too), and so is an error with another code. The
    calls judged are those TK007 flags as not made as a task (same conditions: the
    server declared `tasks.requests.tools.call`, the tool's definition is in the latest
    earlier `tools/list` result of the session), except a call whose `params.task` is
    there but is no object: the server may as well reject it as invalid params. The
    `-32601` a server should return to a task-augmented call of a tool whose
    taskSupport is absent or `"forbidden"` is TK009's (a SHOULD).

    ## Why is this bad?
    A tool that requires a task cannot run as a plain request: its result comes through
    `tasks/result`, after polling. Running it anyway, or failing with an unrelated error,
    hides from the client that it called the tool the wrong way; `-32601` is the answer
    clients are told to expect, and lets them retry the call as a task.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "export",
     "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}]}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "export", "arguments": {}}}
    {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "done"}]}}
    ```
    (the server declared `tasks.requests.tools.call`)

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601,
     "message": "Tool 'export' must be invoked as a task"}}
    ```

    ## Reference
    "If `execution.taskSupport` is `"required"`, clients **MUST** invoke the tool as a
    task. Servers **MUST** return a `-32601` (Method not found) error if a client does
    not attempt to do so." —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#tool-level-negotiation
    (2025-11-25).
    """
    calls = _judged_tool_calls(ctx).filter(
        (pl.col("task_support") == "required")
        & ~pl.col("augmented")
        & pl.col("malformed").is_null()
    )
    if calls.is_empty():
        return findings(pl.DataFrame(schema={"ordinal": pl.Int64}), "")
    bad = _not_method_not_found(ctx, calls, "tool", "list_ordinal")
    return findings(
        bad.sort("ordinal"),
        fmt(
            "answer to a tools/call of tool {} without params.task ({}) is {}, not error "
            '-32601, though the tool\'s execution.taskSupport is "required" (tools/list result '
            "at {})",
            quoted(bad, "tool"),
            line_of("request_ordinal"),
            _answer_words(),
            line_of("list_ordinal"),
        ),
    )


def _not_method_not_found(ctx: LintContext, calls: pl.DataFrame, *keep: str) -> pl.DataFrame:
    """The readable answers to ``calls`` (rows of :func:`_judged_tool_calls`) other than
    error -32601: ordinal and kind of the answer, its error_code, request_ordinal and the
    ``keep`` columns of the call."""
    answers = _answers(
        ctx, calls.select(*keep, request_ordinal="ordinal"), error_code="error_code"
    ).filter(pl.col("kind").is_in(["response", "error"]))
    return answers.filter(
        (pl.col("kind") == "response") | (pl.col("error_code") != -32601).fill_null(True)
    )


def _answer_words() -> pl.Expr:
    """What an answer of :func:`_not_method_not_found` is, in words."""
    return (
        pl.when(pl.col("kind") == "response")
        .then(pl.lit("a result"))
        .when(pl.col("error_code").is_null())
        .then(pl.lit("an error without an integer code"))
        .otherwise(fmt("error {}", "error_code"))
    )


@rule(
    code="TK009",
    name="forbidden-task-tool-not-rejected",
    severity="warning",
    revisions=_TASKS_2025,
    scope="pairing",
)
def forbidden_task_tool_not_rejected(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an answer other than error `-32601` (Method not found) to a task-augmented
    `tools/call` of a tool whose `execution.taskSupport` is absent or `"forbidden"`.

    A result is flagged (a `CreateTaskResult` or a plain one), and so is an error with
    another code, such as the `-32602` the reference "everything" server sends. The
    calls judged are those TK007 flags as task-augmented calls of a tool that offers no
    task execution (same conditions: the server declared `tasks.requests.tools.call`,
    the tool's definition is in the latest earlier `tools/list` result of the session).

    ## Why is this bad?
    The client broke the tool's contract (TK007), and `-32601` is the answer clients
    are told to expect for it: with another error the client cannot tell a task it
    must not ask for from arguments it got wrong, and a result runs as a task a tool
    whose author said it cannot be one.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "echo",
     "inputSchema": {"type": "object"}, "execution": {"taskSupport": "forbidden"}}]}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "echo", "arguments": {}, "task": {"ttl": 60000}}}
    {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602,
     "message": "Invalid task creation result"}}
    ```
    (the server declared `tasks.requests.tools.call`)

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601,
     "message": "Tool 'echo' does not support task execution"}}
    ```

    ## Reference
    "If `execution.taskSupport` is not present or `"forbidden"`, clients **MUST NOT**
    attempt to invoke the tool as a task. Servers **SHOULD** return a `-32601` (Method
    not found) error if a client attempts to do so." —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#tool-level-negotiation
    (2025-11-25).
    """
    offered = pl.col("task_support").is_in(_TASK_TOOLS).fill_null(False)
    calls = _judged_tool_calls(ctx).filter(pl.col("augmented") & ~offered)
    if calls.is_empty():
        return findings(pl.DataFrame(schema={"ordinal": pl.Int64}), "")
    bad = _not_method_not_found(ctx, calls, "tool", "list_ordinal", "task_support")
    support = (
        pl.when(pl.col("task_support").is_null())
        .then(pl.lit("has no execution.taskSupport"))
        .otherwise(fmt("has execution.taskSupport {}", quoted(bad, "task_support")))
    )
    return findings(
        bad.sort("ordinal"),
        fmt(
            "answer to a task-augmented tools/call of tool {} ({}) is {}, not error -32601, "
            "though the tool {} (tools/list result at {})",
            quoted(bad, "tool"),
            line_of("request_ordinal"),
            _answer_words(),
            support,
            line_of("list_ordinal"),
        ),
    )


#: where each kind of status message (see :func:`_statuses`) carries `pollInterval`
_POLL_INTERVAL = {
    "CreateTaskResult": "$.result.task.pollInterval",
    "tasks/get result": "$.result.pollInterval",
    "tasks/cancel result": "$.result.pollInterval",
    _STATUS: "$.params.pollInterval",
}
#: how much sooner than `pollInterval` a poll may come before it counts as ignoring it:
#: timers fire late and early by a few percent
_POLL_SLACK = 0.9


@rule(
    code="TK010",
    name="task-poll-interval-ignored",
    severity="warning",
    revisions=_TASKS_2025,
    scope="session",
)
def task_poll_interval_ignored(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `tasks/get` sent sooner after the requester's previous `tasks/get` of the same
    task than the `pollInterval` the task's receiver last gave for it.

    The interval is the one of the latest message before the poll that reported the task
    with a `pollInterval`: its `CreateTaskResult`, a `tasks/get` or `tasks/cancel` result,
    or a `notifications/tasks/status`. A poll counts as too soon when it comes less than
    nine tenths of the interval after the one before (timers are not exact). Not judged:
    polls without timestamps, a poll after a report of the task other than a poll's own
    answer came between the two (a `notifications/tasks/status`, the result of a
    `tasks/cancel` or `tasks/list`: a reason to look again), and sessions whose two
    directions a capture cannot order.

    ## Why is this bad?
    The receiver sets `pollInterval` to say how often checking is worthwhile; polling
    faster only loads it (each `tasks/get` is a request it must answer) and learns nothing
    sooner. Servers that run many tasks rely on it to pace their clients.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "t-1", "status": "working",
     "createdAt": "2025-11-25T10:00:00Z", "lastUpdatedAt": "2025-11-25T10:00:00Z",
     "ttl": 60000, "pollInterval": 5000}}}
    {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "t-1"}}
    {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "t-1"}}
    ```
    (the two polls half a second apart)

    Use instead: wait `pollInterval` (5 s) between two `tasks/get` of the task.

    ## Reference
    "Requestors **SHOULD** respect the `pollInterval` provided in responses when
    determining polling frequency." —
    docs/specification/2025-11-25/basic/utilities/tasks.mdx#getting-tasks (2025-11-25);
    "Receivers **MAY** include a `pollInterval` value (in milliseconds) in `tasks/get`
    responses to suggest polling intervals. Requestors **SHOULD** respect this value when
    provided." (#task-polling).
    """
    empty = pl.DataFrame(schema={"ordinal": pl.Int64})
    statuses = _statuses(ctx).filter(pl.col("what").is_in(list(_POLL_INTERVAL)))
    if statuses.is_empty():  # the usual case: the requests are not searched for polls
        return findings(empty, "")
    polls = (
        ctx.part("requests", "method", "parse_error", "modern", "session", "direction", "ordinal")
        .filter(
            (pl.col("method") == "tasks/get")
            & pl.col("parse_error").is_null()
            & ~pl.col("modern")
            & pl.col("direction").is_in(["c2s", "s2c"])
        )
        .drop("method", "parse_error", "modern")
    )
    if polls.is_empty():
        return findings(empty, "")
    polls = (
        ctx.lookup(polls, "ordinal", ts="ts", message="message")
        .filter(
            pl.col("ts").is_not_null()
            & ctx.in_place()
            & ~pl.col("session").is_in(ctx.unordered_sessions.implode())
        )
        .pipe(json_paths, task_id="$.params.taskId")
        .filter(pl.col("task_id").is_not_null())
        .with_columns(
            reports=_receiver(pl.col("direction")), direction=pl.col("direction").cast(pl.String)
        )
        .drop("message")
        .sort("ordinal")
    )
    # each poll with the one before it, of the same task by the same requester
    key = ["session", "direction", "task_id"]
    polls = polls.with_columns(
        previous=pl.col("ordinal").shift().over(key),
        previous_ts=pl.col("ts").shift().over(key),
    ).filter(pl.col("previous").is_not_null())
    advice = ctx.lookup(statuses, "ordinal", message="message")
    advice = pl.concat(
        [
            advice.filter(pl.col("what") == what).pipe(json_paths, _poll=path)
            for what, path in _POLL_INTERVAL.items()
        ]
    ).select(
        "session",
        pl.col("direction").alias("reports"),
        "task_id",
        pl.col("ordinal").alias("advised"),
        pl.col("what"),
        poll_ms=pl.col("_poll").cast(pl.Float64, strict=False),
    )
    interval = advice.filter(pl.col("poll_ms").is_not_null() & (pl.col("poll_ms") > 0)).sort(
        "advised"
    )
    # a report of the task other than a poll's own answer (a status notification, the
    # result of the requester's tasks/cancel or tasks/list) is a reason to look again
    notified = (
        _statuses(ctx)
        .filter(pl.col("what") != "tasks/get result")
        .select("session", pl.col("direction").alias("reports"), "task_id", notified="ordinal")
        .sort("notified")
    )
    on = ["session", "reports", "task_id"]
    judged = (
        polls.join_asof(
            interval,
            left_on="ordinal",
            right_on="advised",
            by=on,
            strategy="backward",
            check_sortedness=False,
        )
        .join_asof(
            notified,
            left_on="ordinal",
            right_on="notified",
            by=on,
            strategy="backward",
            check_sortedness=False,
        )
        .filter(
            pl.col("poll_ms").is_not_null()
            & ~(pl.col("notified") > pl.col("previous")).fill_null(False)
        )
        .with_columns(gap_ms=(pl.col("ts") - pl.col("previous_ts")).dt.total_microseconds() / 1000)
        .filter((pl.col("gap_ms") >= 0) & (pl.col("gap_ms") < _POLL_SLACK * pl.col("poll_ms")))
    )
    return findings(
        judged,
        fmt(
            "tasks/get of task {} {} ms after the previous one ({}), though its pollInterval is "
            "{} ms ({} at {})",
            quoted(judged, "task_id"),
            pl.col("gap_ms").round(0).cast(pl.Int64),
            line_of("previous"),
            pl.col("poll_ms").cast(pl.Int64),
            "what",
            line_of("advised"),
        ),
    )
