"""SB: 2026 ``subscriptions/listen`` streams and the notifications they carry.

A listen stream is identified by the JSON-RPC id of its ``subscriptions/listen``
request; every message on it carries that id in ``_meta`` under
``io.modelcontextprotocol/subscriptionId``. The rules resolve that value to the
client's request with the same id (same JSON type: ``1`` is not ``"1"``) issued
before the message in the same session.

Limits of a capture: on stdio all streams share one channel, so stream membership is
known only from ``subscriptionId``; a capture that starts after the listen request
was sent cannot show which request opened a stream, so rules that need the listen
request skip messages that precede every client request of the session.
"""

from __future__ import annotations

import re

import polars as pl

from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.jsontext import content, json_tokens, path, unquote
from mcptrace.linter.rule import MODERN, findings, line_of, rule
from mcptrace.protocol import SUBSCRIPTION_ID_KEY

_LISTEN = "subscriptions/listen"
_ACK = "notifications/subscriptions/acknowledged"
#: notification -> the SubscriptionFilter field that requests it
_LIST_CHANGED = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}
_UPDATED = "notifications/resources/updated"
#: notifications that 2026 delivers only on a listen stream
_STREAM_ONLY = sorted([*_LIST_CHANGED, _UPDATED, _ACK])


def _sid(where: str) -> dict[str, pl.Expr]:
    """``sid`` and ``sid_str`` of the subscriptionId in ``<where>._meta``: the value as it
    appears inside its JSON text (a string without its quotes, escapes kept) and whether
    it is a JSON string, to compare with the ``id`` column."""
    meta = path(f"$.{where}._meta")
    value = path(f'$.{where}._meta["{SUBSCRIPTION_ID_KEY}"]')
    return {
        "sid": value.str.replace_all("\\", "\\\\", literal=True).str.replace_all(
            '"', '\\"', literal=True
        ),
        "sid_str": meta.str.contains(f'"{re.escape(SUBSCRIPTION_ID_KEY)}":"'),
    }


def sid_text() -> pl.Expr:
    """The subscriptionId as JSON text (as the ``id`` column spells request ids)."""
    return pl.when(pl.col("sid_str")).then(fmt('"{}"', "sid")).otherwise(pl.col("sid"))


def stream_notifications(ctx: LintContext) -> pl.DataFrame:
    """Server notifications of 2026 sessions that carry a subscriptionId."""
    return ctx.memo("subscriptions.stream_notifications", _build_stream_notifications)


def _build_stream_notifications(ctx: LintContext) -> pl.DataFrame:
    # the subscriptionId key is a rare marker (see LintContext.part)
    return (
        ctx.modern_marked(
            "notifications",
            SUBSCRIPTION_ID_KEY,
            "c2s",
            "ordinal",
            "session",
            "method",
            "modern",
            "direction",
            "parse_error",
            "rare",
            "message",
        )
        .with_columns(**_sid("params"))
        .filter(pl.col("sid").is_not_null())
    )


def _client_requests(ctx: LintContext, sessions: pl.DataFrame) -> pl.DataFrame:
    """Client requests of ``sessions`` (a frame with a ``session`` column) with their id
    as (``sid``, ``sid_str``) for subscriptionId lookups, and ``closed_at`` (ordinal of
    their response, if any)."""
    keep = sessions["session"].unique().implode()
    requests = (
        ctx.part("requests", "session", "ordinal", "method", "id", "id_type", "direction")
        .filter(pl.col("session").is_in(keep))
        .filter(pl.col("direction") != "s2c", pl.col("id").is_not_null())
        .select(
            "session",
            req_ordinal="ordinal",
            req_method="method",
            sid=pl.when(pl.col("id_type") == "string")
            .then(pl.col("id").str.slice(1, pl.col("id").str.len_chars() - 2))
            .otherwise(pl.col("id")),
            sid_str=pl.col("id_type") == "string",
        )
    )
    # closed: where the request's response is, if it has one
    return ctx.call_lookup(requests, "req_ordinal", closed_at="response_ordinal").sort(
        "req_ordinal"
    )


#: the columns :func:`_resolve` adds
_RESOLVED = {
    "req_ordinal": pl.Int64,
    "req_method": pl.String,
    "closed_at": pl.Int64,
    "_first_req": pl.Int64,
    "seen_client": pl.Boolean,
}


def _resolve(ctx: LintContext, frame: pl.DataFrame) -> pl.DataFrame:
    """Attach to each row of ``frame`` (with session, ordinal, sid, sid_str) the latest
    earlier client request of the session with that id, and ``seen_client`` (the session
    showed a client request before the row)."""
    if frame.is_empty():  # the usual case: nothing names a subscription, no request is read
        return frame.with_columns(
            pl.lit(None, dtype).alias(name) for name, dtype in _RESOLVED.items()
        )
    reqs = _client_requests(ctx, frame)
    first = reqs.group_by("session").agg(_first_req=pl.col("req_ordinal").min())
    return (
        frame.sort("ordinal")
        .join_asof(
            reqs,
            left_on="ordinal",
            right_on="req_ordinal",
            by=["session", "sid", "sid_str"],
            strategy="backward",
            check_sortedness=False,
        )
        .join(first, on="session", how="left")
        .with_columns(
            seen_client=pl.col("_first_req").fill_null(pl.col("ordinal")) < pl.col("ordinal")
        )
    )


@rule(
    code="SB001",
    name="stream-notification-missing-subscription-id",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def stream_notification_missing_subscription_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 list-changed, resource-updated and acknowledgment notifications without a
    `subscriptionId` in `_meta`.

    In 2026, `notifications/tools/list_changed`, `notifications/prompts/list_changed`,
    `notifications/resources/list_changed`, `notifications/resources/updated` and
    `notifications/subscriptions/acknowledged` are only ever delivered on a
    `subscriptions/listen` stream, so each must carry `io.modelcontextprotocol/subscriptionId`
    in `params._meta`.

    ## Why is this bad?
    A client may hold several subscriptions at once, and on stdio they all share one
    channel: the subscription id is the only way to tell which stream, and so which
    filter, a notification belongs to. (Some prose examples in the specification omit
    it for brevity; the official example messages carry it.)

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "method": "notifications/resources/updated",
      "params": {"uri": "file:///project/config.json"}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "method": "notifications/resources/updated",
      "params": {
        "uri": "file:///project/config.json",
        "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}
      }
    }
    ```

    ## Reference
    "On notifications delivered via a `subscriptions/listen` stream, the server MUST
    include `io.modelcontextprotocol/subscriptionId` in `_meta` so the client can
    correlate the notification with the originating subscription request." —
    docs/specification/2026-07-28/basic/index.mdx#meta (2026-07-28). Schema:
    `NotificationMetaObject`.
    """
    rows = content(
        ctx.part(
            "notifications", "ordinal", "method", "modern", "direction", "parse_error", "message"
        )
    ).filter(pl.col("modern"), pl.col("direction") != "c2s", pl.col("method").is_in(_STREAM_ONLY))
    bad = rows.with_columns(**_sid("params")).filter(pl.col("sid").is_null())
    return findings(bad, fmt("{} carries no {} in _meta", "method", pl.lit(SUBSCRIPTION_ID_KEY)))


@rule(
    code="SB002",
    name="subscription-id-not-open-listen",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def subscription_id_not_open_listen(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags server notifications whose `subscriptionId` does not name an open
    `subscriptions/listen` request.

    The value names another kind of request, a listen request the server already closed
    with its response, a listen id of another JSON type (`1` vs `"1"`), or no request at all.

    Notifications that come before any client request of the session are skipped (the
    capture probably started after the listen request was sent). A listen request the
    client cancelled is still treated as open, since notifications already in flight
    may cross the cancellation.

    ## Why is this bad?
    The client routes each notification to the subscription whose request id it carries;
    a value that matches no open subscription is dropped or, worse, delivered to the
    wrong consumer.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {
      "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-2"}
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}
      }
    }
    ```

    ## Reference
    "The value is the JSON-RPC ID of the `subscriptions/listen` request." —
    docs/specification/2026-07-28/basic/patterns/subscriptions.mdx#receiving-notifications
    (2026-07-28).
    """
    notes = stream_notifications(ctx)
    if notes.is_empty():  # the usual case: no subscriptionId anywhere
        return findings(notes, "")
    rows = _resolve(ctx, notes.select("ordinal", "session", "sid", "sid_str"))
    # same value, other JSON type: the latest listen request whose id differs only by type
    listens = _client_requests(ctx, rows).filter(pl.col("req_method") == _LISTEN)
    other_type = (
        rows.filter(pl.col("req_ordinal").is_null())
        .select("ordinal", "session", "sid")
        .sort("ordinal")
        .join_asof(
            listens.select("session", "sid", _tstr="sid_str", _to="req_ordinal"),
            left_on="ordinal",
            right_on="_to",
            by=["session", "sid"],
            strategy="backward",
            check_sortedness=False,
        )
        .select("ordinal", "_to", "_tstr")
    )
    rows = rows.join(other_type, on="ordinal", how="left").with_columns(_shown=sid_text())
    problem = (
        pl.when(pl.col("req_ordinal").is_not_null() & (pl.col("req_method") != _LISTEN))
        .then(
            fmt(
                "names the {} request at {}, not a subscriptions/listen request",
                "req_method",
                line_of("req_ordinal"),
            )
        )
        .when(pl.col("req_ordinal").is_not_null() & (pl.col("closed_at") < pl.col("ordinal")))
        .then(
            fmt(
                "names the subscriptions/listen request at {}, which the server closed at {}",
                line_of("req_ordinal"),
                line_of("closed_at"),
            )
        )
        .when(pl.col("req_ordinal").is_null() & pl.col("_to").is_not_null())
        .then(
            fmt(
                "is a {} but the subscriptions/listen request at {} has a {} id",
                pl.when(pl.col("sid_str")).then(pl.lit("string")).otherwise(pl.lit("number")),
                line_of("_to"),
                pl.when(pl.col("_tstr")).then(pl.lit("string")).otherwise(pl.lit("number")),
            )
        )
        .when(pl.col("req_ordinal").is_null() & pl.col("seen_client"))
        .then(pl.lit("names no request of the session"))
    )
    bad = rows.with_columns(_p=problem).filter(pl.col("_p").is_not_null())
    return findings(bad, fmt("subscriptionId {} {}", "_shown", "_p"))


def _listen_stream(ctx: LintContext) -> pl.DataFrame:
    """Messages carrying a subscriptionId that names a visible listen request:
    notifications and the listen result, with ``req_ordinal`` of that request."""
    return ctx.memo("subscriptions.listen_stream", _build_listen_stream)


def _listen_results(ctx: LintContext) -> pl.DataFrame:
    """Readable results of 2026 sessions that answer a subscriptions/listen request (SB005
    and :func:`_listen_stream` read them)."""
    return ctx.memo("subscriptions.listen_results", _build_listen_results)


def _build_listen_results(ctx: LintContext) -> pl.DataFrame:
    # the method alone picks the few rows first: a test over a frame holding the answered
    # request's columns costs more (they are cut into other chunks than the part's own)
    listen = ctx.part("responses", "request_method").select(pl.col("request_method") == _LISTEN)
    return content(
        ctx.part(
            "responses",
            "ordinal",
            "session",
            "id",
            "modern",
            "kind",
            "request_method",
            "parse_error",
            "message",
        ).filter(listen.to_series())
    ).filter(pl.col("modern"), pl.col("kind") == "response")


def _build_listen_stream(ctx: LintContext) -> pl.DataFrame:
    notes = stream_notifications(ctx).select("ordinal", "session", "method", "sid", "sid_str")
    results = (
        _listen_results(ctx)
        .with_columns(**_sid("result"))
        .filter(pl.col("sid").is_not_null())
        .select("ordinal", "session", "sid", "sid_str", method=pl.lit("result"))
    )
    rows = _resolve(ctx, pl.concat([notes, results.select(notes.columns)]))
    return rows.filter(pl.col("req_method") == _LISTEN)


@rule(
    code="SB003",
    name="listen-acknowledgment-not-first",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def listen_acknowledgment_not_first(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags listen-stream messages the server sends before acknowledging the subscription.

    These are notifications, or the closing listen result, carrying the subscription's id
    before `notifications/subscriptions/acknowledged` for it, or on a subscription that is
    never acknowledged. Streams are told apart by `subscriptionId`, so other subscriptions'
    messages may interleave, as the specification allows on stdio.

    ## Why is this bad?
    The acknowledgment tells the client which part of its filter the server honours and
    that the stream is live; notifications arriving before it cannot be checked against
    the agreed filter, and the client cannot tell whether it missed changes made
    between its request and the acknowledgment.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {
      "jsonrpc": "2.0", "method": "notifications/tools/list_changed",
      "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}}
    }
    {
      "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {"io.modelcontextprotocol/subscriptionId": 1}
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {"io.modelcontextprotocol/subscriptionId": 1}
      }
    }
    {
      "jsonrpc": "2.0", "method": "notifications/tools/list_changed",
      "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}}
    }
    ```

    ## Reference
    "The server MUST send `notifications/subscriptions/acknowledged` as the first message
    carrying the subscription's ID in `_meta` under `io.modelcontextprotocol/subscriptionId`,
    and MUST NOT send any notification on the subscription before it." —
    docs/specification/2026-07-28/basic/patterns/subscriptions.mdx#acknowledgment
    (2026-07-28).
    """
    rows = _listen_stream(ctx)
    if rows.is_empty():
        return findings(rows, "")
    rows = rows.with_columns(
        _ack=pl.col("ordinal").filter(pl.col("method") == _ACK).min().over("req_ordinal")
    )
    bad = rows.filter(
        (pl.col("method") != _ACK)
        & (pl.col("_ack").is_null() | (pl.col("ordinal") < pl.col("_ack")))
    )
    what = (
        pl.when(pl.col("method") == "result")
        .then(pl.lit("listen result"))
        .otherwise(pl.col("method"))
    )
    when = pl.when(pl.col("_ack").is_null()).then(pl.lit("which is never acknowledged"))
    return findings(
        bad,
        fmt(
            "{} sent on the subscription of the request at {} before its acknowledgment{}",
            what,
            line_of("req_ordinal"),
            fmt(" ({})", when).fill_null(""),
        ),
    )


@rule(
    code="SB004",
    name="listen-notification-not-requested",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def listen_notification_not_requested(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags list-changed and resource-updated notifications that the listen request's filter
    did not ask for.

    That is `toolsListChanged`, `promptsListChanged` or `resourcesListChanged` not `true` for
    the matching list-changed notification, or a `notifications/resources/updated` URI that
    is neither one of `resourceSubscriptions` nor below one of them.

    ## Why is this bad?
    Every notification type is opt-in. A client that asked only for tool changes has
    no handler for prompt changes, and resource updates it never subscribed to cost it
    a re-read for nothing (or leak the existence of resources it did not ask about).

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {
      "jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
      "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "method": "notifications/tools/list_changed",
      "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}}
    }
    ```

    ## Reference
    "The server MUST NOT send notification types the client has not explicitly
    requested." — docs/specification/2026-07-28/basic/patterns/subscriptions.mdx#opening-a-stream
    (2026-07-28). Schema: `SubscriptionFilter`.
    """
    rows = _listen_stream(ctx).filter(pl.col("method").is_in([*_LIST_CHANGED, _UPDATED]))
    if rows.is_empty():
        return findings(rows, "")
    filters = (
        ctx.lookup(
            rows.select("req_ordinal").unique(), "req_ordinal", inner=True, message="message"
        )
        .with_columns(
            **{
                field: path(f"$.params.notifications.{field}") == "true"
                for field in _LIST_CHANGED.values()
            },
            _subs=path("$.params.notifications.resourceSubscriptions"),
        )
        .drop("message")
    )
    rows = rows.join(filters, on="req_ordinal", how="left")
    wanted = pl.lit(False)
    for method, field in _LIST_CHANGED.items():
        wanted = (
            pl.when(pl.col("method") == method)
            .then(pl.col(field).fill_null(False))
            .otherwise(wanted)
        )
    list_bad = rows.filter(pl.col("method").is_in(list(_LIST_CHANGED)) & ~wanted)
    field_of = pl.col("method").replace_strict(_LIST_CHANGED, default=None)
    list_bad = list_bad.with_columns(
        _p=fmt("the listen request at {} did not set {}", line_of("req_ordinal"), field_of)
    )

    updated = ctx.lookup(
        rows.filter(pl.col("method") == _UPDATED), "ordinal", inner=True, message="message"
    ).with_columns(_uri=path("$.params.uri"))
    subs = json_tokens(
        filters.filter(pl.col("_subs").str.starts_with("[")).rename({"req_ordinal": "ordinal"}),
        "_subs",
    )
    subs = subs.filter((pl.col("depth") == 1) & pl.col("tok").str.starts_with('"')).select(
        req_ordinal="ordinal", _s=unquote(pl.col("tok"))
    )
    covered = (
        updated.select("ordinal", "req_ordinal", "_uri")
        .join(subs, on="req_ordinal")
        .filter(
            (pl.col("_uri") == pl.col("_s"))
            | pl.col("_uri").str.starts_with(fmt("{}/", pl.col("_s").str.strip_suffix("/")))
        )
        .select("ordinal")
        .unique()
    )
    upd_bad = updated.join(covered, on="ordinal", how="anti").with_columns(
        _p=fmt(
            "{} is not among the resourceSubscriptions of the listen request at {}",
            "_uri",
            line_of("req_ordinal"),
        )
    )
    bad = pl.concat(
        [list_bad.select("ordinal", "method", "_p"), upd_bad.select("ordinal", "method", "_p")]
    )
    return findings(bad, fmt("{} not requested: {}", "method", "_p"))


@rule(
    code="SB005",
    name="listen-result-missing-subscription-id",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def listen_result_missing_subscription_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags the success result that closes a `subscriptions/listen` stream when its
    `result._meta` lacks `io.modelcontextprotocol/subscriptionId`, or names another
    subscription than the request it answers.

    ## Why is this bad?
    The closing result is a message on the stream like any other; on stdio the
    subscription id is how the client knows which subscription ended, and the schema
    requires it.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": "listen-1", "result": {"resultType": "complete"}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": "listen-1",
      "result": {
        "resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}
      }
    }
    ```

    ## Reference
    "Like every other message on the stream, the response carries
    `io.modelcontextprotocol/subscriptionId` in `_meta`, identifying which subscription it
    closes." — docs/specification/2026-07-28/basic/patterns/subscriptions.mdx#graceful-closure
    (2026-07-28). Schema: `SubscriptionsListenResult._meta` (required).
    """
    rows = _listen_results(ctx).with_columns(**_sid("result"))
    bad = rows.filter(pl.col("sid").is_null() | (sid_text() != pl.col("id")))
    missing = fmt("subscriptions/listen result carries no {} in _meta", pl.lit(SUBSCRIPTION_ID_KEY))
    other = fmt(
        "subscriptions/listen result names subscription {} but answers request id {}",
        sid_text(),
        "id",
    )
    return findings(bad, pl.when(pl.col("sid").is_null()).then(missing).otherwise(other))


@rule(
    code="SB006",
    name="server-cancel-not-for-listen",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def server_cancel_not_for_listen(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags server-sent `notifications/cancelled` that does not reference a
    `subscriptions/listen` request.

    It names another client request, has no `requestId`, or names an id no client request
    of the session used (skipped when the notification precedes every client request, as in
    a capture started mid-stream). Notifications of unknown direction are not judged.

    ## Why is this bad?
    In 2026 servers never cancel client requests; the only server-sent cancellation ends
    a listen stream. A server that wants to abandon a `tools/call` must answer it (for
    example with an error), otherwise the client waits for a response that may never be
    sent.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 5, "method": "tools/call",
      "params": {
        "name": "slow",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {
      "jsonrpc": "2.0", "method": "notifications/cancelled",
      "params": {"requestId": 5, "reason": "shutting down"}
    }
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "Server shutting down"}}
    ```

    ## Reference
    "Servers MUST NOT send `notifications/cancelled` for any other purpose." —
    docs/specification/2026-07-28/basic/patterns/cancellation.mdx (2026-07-28; the
    preceding sentence: servers send it to tear down a `subscriptions/listen` stream).
    """
    cancels = content(
        ctx.part(
            "notifications",
            "ordinal",
            "session",
            "method",
            "cancel_id",
            "modern",
            "direction",
            "parse_error",
        )
    ).filter(
        pl.col("modern"),
        pl.col("direction") == "s2c",
        pl.col("method") == "notifications/cancelled",
    )
    if cancels.is_empty():
        return findings(cancels, "")
    # only the sessions of those cancels matter (usually none)
    reqs = (
        ctx.part("requests", "session", "id", "ordinal", "method", "direction")
        .filter(pl.col("session").is_in(cancels["session"].unique().implode()))
        .filter(pl.col("direction") != "s2c", pl.col("id").is_not_null())
        .select("session", cancel_id="id", req_ordinal="ordinal", req_method="method")
        .sort("req_ordinal")
    )
    first = reqs.group_by("session").agg(_first=pl.col("req_ordinal").min())
    named = (
        cancels.filter(pl.col("cancel_id").is_not_null())
        .select("ordinal", "session", "cancel_id")
        .sort("ordinal")
        .join_asof(
            reqs,
            left_on="ordinal",
            right_on="req_ordinal",
            by=["session", "cancel_id"],
            strategy="backward",
            check_sortedness=False,
        )
        .join(first, on="session", how="left")
    )
    problem = (
        pl.when(pl.col("req_ordinal").is_not_null() & (pl.col("req_method") != _LISTEN))
        .then(fmt("names the {} request at {}", "req_method", line_of("req_ordinal")))
        .when(pl.col("req_ordinal").is_null() & (pl.col("_first") < pl.col("ordinal")))
        .then(fmt("names request id {}, which no client request of the session used", "cancel_id"))
    )
    bad_named = (
        named.with_columns(_p=problem).filter(pl.col("_p").is_not_null()).select("ordinal", "_p")
    )
    no_id = cancels.filter(pl.col("cancel_id").is_null()).select(
        "ordinal", _p=pl.lit("has no requestId")
    )
    bad = pl.concat([bad_named, no_id])
    return findings(
        bad,
        fmt(
            "server-sent notifications/cancelled {}; "
            "servers may only end subscriptions/listen streams",
            "_p",
        ),
    )


@rule(
    code="SB007",
    name="listen-acknowledgment-exceeds-request",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def listen_acknowledgment_exceeds_request(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `notifications/subscriptions/acknowledged` whose `notifications` filter grants
    more than the `subscriptions/listen` request asked for.

    That is a `toolsListChanged`, `promptsListChanged` or `resourcesListChanged` set to
    `true` that the request did not set, or a `resourceSubscriptions` URI the request did
    not list. Derived: the acknowledged filter is the subset of the request the server
    agreed to honour.

    ## Why is this bad?
    The client reads the acknowledgment to learn which of its subscriptions are live; a
    filter wider than the request announces notifications the client never asked for
    and may not handle, which the server must not send anyway.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {
      "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
      "params": {
        "notifications": {"toolsListChanged": true, "promptsListChanged": true},
        "_meta": {"io.modelcontextprotocol/subscriptionId": 1}
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
      "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {"io.modelcontextprotocol/subscriptionId": 1}
      }
    }
    ```

    ## Reference
    "The `notifications` field in the acknowledgment reflects the subset the server agreed
    to honor." — docs/specification/2026-07-28/basic/patterns/subscriptions.mdx#acknowledgment
    (2026-07-28). Schema: `SubscriptionsAcknowledgedNotificationParams`.
    """
    acks = _listen_stream(ctx).filter(pl.col("method") == _ACK).select("ordinal", "req_ordinal")
    if acks.is_empty():
        return findings(acks, "")
    fields = list(_LIST_CHANGED.values())

    def filter_of(frame: pl.DataFrame, key: str, prefix: str) -> pl.DataFrame:
        return ctx.lookup(frame, key, inner=True, message="message").select(
            key,
            *[(path(f"$.params.notifications.{f}") == "true").alias(prefix + f) for f in fields],
            **{f"{prefix}subs": path("$.params.notifications.resourceSubscriptions")},
        )

    rows = acks.join(filter_of(acks, "ordinal", "a_"), on="ordinal").join(
        filter_of(acks.select("req_ordinal").unique(), "req_ordinal", "r_"), on="req_ordinal"
    )
    granted = pl.concat_list(
        [
            pl.when(pl.col("a_" + f).fill_null(False) & ~pl.col("r_" + f).fill_null(False)).then(
                pl.lit(f)
            )
            for f in fields
        ]
    ).list.drop_nulls()
    flags = rows.with_columns(_g=granted.list.join(", ")).filter(pl.col("_g") != "")
    flags = flags.select("ordinal", "req_ordinal", _p=fmt("grants {}", "_g"))

    def uris(frame: pl.DataFrame, col: str, key: str) -> pl.DataFrame:
        listed = frame.filter(pl.col(col).str.starts_with("[")).select(ordinal=key, _l=col)
        toks = json_tokens(listed, "_l")
        return toks.filter((pl.col("depth") == 1) & pl.col("tok").str.starts_with('"')).select(
            pl.col("ordinal").alias(key), _uri=unquote(pl.col("tok"))
        )

    # (in the order the acknowledgement lists them: the message names them so)
    acked = uris(rows, "a_subs", "ordinal").join(
        rows.select("ordinal", "req_ordinal"), on="ordinal", maintain_order="left"
    )
    asked = uris(rows.unique("req_ordinal"), "r_subs", "req_ordinal")
    extra = (
        acked.join(asked, on=["req_ordinal", "_uri"], how="anti", maintain_order="left")
        .group_by("ordinal", "req_ordinal", maintain_order=True)
        .agg(pl.col("_uri").str.join(", "))
        .select("ordinal", "req_ordinal", _p=fmt("subscribes {}", "_uri"))
    )
    bad = (
        pl.concat([flags, extra])
        .group_by("ordinal", "req_ordinal", maintain_order=True)
        .agg(pl.col("_p").str.join(" and "))
    )
    return findings(
        bad,
        fmt(
            "acknowledgment {}, which the listen request at {} did not ask for",
            "_p",
            line_of("req_ordinal"),
        ),
    )
