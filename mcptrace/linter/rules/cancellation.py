"""CN: `notifications/cancelled` (what it names, what follows it, how it is sent).

A cancellation is matched to the latest earlier request of the same sender, in the
same session, with the id it names (`5` and `"5"` differ). The cancel and its
request travel the same way, so that match needs no cross-direction order; the
rules comparing a cancel with the response (which travels the other way) skip
captures that cannot order the two directions (per-direction stdio files).

Race tolerance (CN002, CN003, CN006, CN007): a cancel and a response cross on the wire
all the time. When both have timestamps, an order is only reported when they are more
than 100 ms apart. Without timestamps, it is reported only when the side that should
have known better sent at least one other message in between (the canceller after
the response, for CN002; the responder after the cancel, for CN003, CN006 and CN007).
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from mcptrace._format import fmt
from mcptrace.calls import key_hash
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import (
    ALL_REVISIONS,
    LEGACY,
    MODERN,
    and_more,
    findings,
    line_of,
    rule,
)
from mcptrace.linter.rules.progress import attributed_progress, token_requests
from mcptrace.linter.rules.subscriptions import sid_text, stream_notifications

_CANCELLED = "notifications/cancelled"
#: cancels and responses closer than this cross on the wire: not reported
_RACE = timedelta(milliseconds=100)
#: an ordinal after every message
_NEVER = 1 << 62


def matched_cancels(ctx: LintContext) -> pl.DataFrame:
    return ctx.memo("cancellation.matched", _build_matched_cancels)


def _build_matched_cancels(ctx: LintContext) -> pl.DataFrame:
    """Readable cancels naming an id, with the request they cancel and its response.

    Columns of the cancel (session, direction, ordinal, line, ts, modern, id) plus
    request_ordinal, request_method (null when no earlier request of the sender had that
    id) and response_ordinal, response_ts.
    """
    cancels = ctx.keyed_notifications(_CANCELLED, "cancel_id", "id")
    # only requests with a (session, id) some cancel names can be matched: keep those.
    # Joining every request on the pair costs about twice a test of one number per
    # request: the pair's hash finds the few candidates first (one whose hash merely
    # collides is then left out by the join of the few)
    named = cancels.select("session", "id").unique()
    number = key_hash("session", "id")
    requests = (
        ctx.part("requests", "session", "id", "direction", "ordinal", "method")
        .filter(number.is_in(named.select(number).to_series().implode()))
        .filter(pl.col("id").is_not_null())
        .join(named, on=["session", "id"], how="semi")
        .select(
            "session",
            "id",
            _sender=pl.col("direction").cast(pl.String),
            request_ordinal="ordinal",
            request_method="method",
        )
    )
    # `_dir`: the direction of a cancel that may name this request; a request or a
    # cancel of unknown direction may belong to either side. (The copies for them are
    # made only when there are such cancels or requests.)
    known = pl.col("_sender") != "unknown"
    parts = [requests.with_columns(_dir=pl.col("_sender"))]
    if (cancels["direction"] == "unknown").any():
        parts.append(requests.filter(known).with_columns(_dir=pl.lit("unknown")))
    if (requests["_sender"] == "unknown").any():
        parts += [
            requests.filter(~known).with_columns(_dir=pl.lit("c2s")),
            requests.filter(~known).with_columns(_dir=pl.lit("s2c")),
        ]
    keyed = pl.concat(parts).sort("request_ordinal")
    matched = (
        cancels.with_columns(_dir=pl.col("direction"))
        .sort("ordinal")
        .join_asof(
            keyed,
            left_on="ordinal",
            right_on="request_ordinal",
            by=["session", "_dir", "id"],
            strategy="backward",
            check_sortedness=False,
        )
        .drop("_dir", "_sender")
    )
    return ctx.call_lookup(
        matched,
        "request_ordinal",
        response_ordinal="response_ordinal",
        response_ts="response_ts",
    )


def _key_base(ctx: LintContext) -> int:
    """A number above every ordinal of the trace: ``session * base + ordinal`` orders
    messages by session, then by ordinal."""
    top = ctx.messages["ordinal"].max()
    return int(top) + 1 if isinstance(top, int) else 1


def _numbered(ctx: LintContext, direction: str) -> pl.DataFrame:
    """``_key`` (see :func:`_key_base`) of the protocol messages travelling
    ``direction``, sorted."""
    base = _key_base(ctx)
    keys = (
        ctx.part("protocol", "session", "direction", "ordinal")
        .filter(pl.col("direction") == direction)
        .select((pl.col("session").cast(pl.Int64) * base + pl.col("ordinal")).alias("_key"))
    )
    # on one thread: rules run two at a time, and a sort of ~0.5 M keys split between
    # the threads took twice the time (and the CPU) of one thread's sort
    return keys.with_columns(keys["_key"].sort(multithreaded=False))


def _count_before(ctx: LintContext, frame: pl.DataFrame, at: str, direction: str) -> pl.DataFrame:
    """``frame`` plus ``_n_<at>``: how many protocol messages travelling ``direction``
    its session had before ordinal ``at`` (0 where ``at`` is null)."""
    if frame.is_empty():  # nothing to count: the keys of every message sent are not built
        return frame.with_columns(pl.lit(0, pl.Int64).alias(f"_n_{at}"))
    sent = ctx.memo(f"cancellation.sent.{direction}", lambda ctx: _numbered(ctx, direction))
    keys = sent["_key"]
    # a binary search in the sorted keys per row, not a join of every message sent: the
    # messages of the session before ``at`` are the keys from its first one up to ``at``
    base = _key_base(ctx)
    session = frame["session"].cast(pl.Int64) * base
    upto = session + frame[at].fill_null(0).clip(0, base)
    before = keys.search_sorted(upto, side="left").cast(pl.Int64) - keys.search_sorted(
        session, side="left"
    ).cast(pl.Int64)
    return frame.with_columns(before.alias(f"_n_{at}"))


def _well_after(first_ts: str, then_ts: str, between: pl.Expr) -> pl.Expr:
    """``then`` happened clearly after ``first``: by the clock when both have one,
    else because messages were sent in between."""
    gap = pl.col(then_ts) - pl.col(first_ts)
    has_times = pl.col(then_ts).is_not_null() & pl.col(first_ts).is_not_null()
    return pl.when(has_times).then(gap > _RACE).otherwise(between > 0)


def _sent_well_after(
    ctx: LintContext, frame: pl.DataFrame, *, at: str, at_ts: str, since: str, since_ts: str
) -> pl.DataFrame:
    """The rows of ``frame`` (messages of a known ``direction``, at ordinal ``at`` and time
    ``at_ts``) sent clearly after ordinal ``since`` (time ``since_ts``): by the clock, or
    after other messages of their sender (see :func:`_well_after`)."""
    parts = []
    for sender in ("c2s", "s2c"):
        mine = frame.filter(pl.col("direction") == sender)
        if mine.is_empty():
            continue
        mine = _count_before(ctx, mine, at, sender)
        mine = _count_before(ctx, mine, since, sender)
        # the message itself is not counted: only the sender's messages strictly between
        between = pl.col(f"_n_{at}") - pl.col(f"_n_{since}")
        parts.append(mine.filter(_well_after(since_ts, at_ts, between)))
    return pl.concat(parts) if parts else frame.clear()


def _binding_cancels(ctx: LintContext, which: pl.Expr) -> pl.DataFrame:
    """The first cancel (matched, ``which`` holds) of each request still unanswered when it
    came, in sessions whose two directions are in one order: the one the receiver had to
    honour. A request answered before the cancel was not running any more (CN002)."""
    return (
        matched_cancels(ctx)
        .filter(
            which
            & pl.col("request_ordinal").is_not_null()
            & ~(pl.col("response_ordinal") < pl.col("ordinal")).fill_null(False)
            & ~pl.col("session").is_in(ctx.unordered_sessions.implode())
        )
        .sort("ordinal")
        .unique("request_ordinal", keep="first", maintain_order=True)
    )


def sent_well_after_response(ctx: LintContext, cancels: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``cancels`` (matched cancels with ``response_ordinal``/``response_ts``,
    of a known direction) sent clearly after the cancelled request's response."""
    return _sent_well_after(
        ctx, cancels, at="ordinal", at_ts="ts", since="response_ordinal", since_ts="response_ts"
    )


@rule(
    code="CN001",
    name="cancel-for-unknown-request",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="session",
)
def cancel_for_unknown_request(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/cancelled` whose `requestId` matches no earlier request sent
    by the same side in the same session (ids `5` and `"5"` differ).

    ## Why is this bad?
    A cancellation may only name a request its sender issued. An id the sender never
    used, a request of the other side, or an id whose type changed on the way is
    ignored by the receiver, so the operation the user wanted to stop keeps running.
    (2026-07-28 server-sent cancellations, which end a `subscriptions/listen` stream,
    are checked by the SB family.)

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "build"}}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "3"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "build"}}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
    ```

    ## Reference
    "Cancellation notifications MUST only reference requests that:" … "Were previously
    issued in the same direction" — basic/utilities/cancellation.mdx#behavior-requirements
    (2024-11-05 to 2025-11-25); 2026-07-28: "Were previously issued by the client",
    basic/patterns/cancellation.mdx#behavior-requirements.
    """
    cancels = matched_cancels(ctx)
    unknown = cancels.filter(
        pl.col("request_ordinal").is_null() & ~(pl.col("modern") & (pl.col("direction") == "s2c"))
    )
    sender = (
        pl.when(pl.col("direction") == "unknown")
        .then(pl.lit("in this session"))
        .otherwise(pl.lit("from the same sender"))
    )
    return findings(
        unknown,
        fmt(
            "notifications/cancelled names request id {}, which no earlier request {} had",
            "id",
            sender,
        ),
    )


@rule(
    code="CN002",
    name="cancel-after-response",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="session",
)
def cancel_after_response(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/cancelled` sent clearly after the response to the request it
    names.

    Clearly after means more than 100 ms after it, or (without timestamps) after the
    canceller had already sent other messages. Cancelling `initialize` is the LC family's finding.
    A cancel whose place the capture does not record (an event of a HAR's server
    stream, placed by mcptrace) is not judged.

    ## Why is this bad?
    A cancellation is for a request "believed to still be in-progress". Cancelling one
    whose answer the sender already had is harmless to a tolerant receiver, but it
    shows the sender lost track of its requests (a stale timeout, a wrong id) and a
    receiver that reused the id could stop the wrong work. Near-simultaneous cancels
    and responses are normal races and are not reported.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "build"}}
    {"jsonrpc": "2.0", "id": 5, "result": {"content": []}}
    {"jsonrpc": "2.0", "id": 6, "method": "tools/list"}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "build"}}
    {"jsonrpc": "2.0", "id": 5, "result": {"content": []}}
    {"jsonrpc": "2.0", "id": 6, "method": "tools/list"}
    ```

    ## Reference
    "Cancellation notifications MUST only reference requests that:" … "Are believed to
    still be in-progress" — basic/utilities/cancellation.mdx#behavior-requirements
    (2024-11-05 to 2025-11-25), basic/patterns/cancellation.mdx#behavior-requirements
    (2026-07-28). Reported as a warning because of the races the spec allows for.
    """
    unordered = ctx.unordered_sessions.implode()
    cancels = matched_cancels(ctx).filter(
        (pl.col("response_ordinal") < pl.col("ordinal"))
        & (pl.col("request_method") != "initialize")
        & ~pl.col("session").is_in(unordered)
        & (pl.col("direction") != "unknown")
        & ctx.in_place()
    )
    if cancels.is_empty():
        return findings(cancels, "")
    late = sent_well_after_response(ctx, cancels)
    return findings(
        late,
        fmt(
            "notifications/cancelled names request id {} ({}), already answered at {}",
            "id",
            line_of("request_ordinal"),
            line_of("response_ordinal"),
        ),
    )


@rule(
    code="CN003",
    name="response-after-cancel",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="session",
)
def response_after_cancel(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a response sent clearly after its request was cancelled. (In 2026-07-28 a
    server must not send anything more for a cancelled request: CN006, an error.)

    Clearly after means more than 100 ms after the `notifications/cancelled`, or (without
    timestamps) after the responder had already sent other messages following the cancel.

    ## Why is this bad?
    A receiver of a cancellation should stop the work and not answer. The canceller has
    already given up on the request (often after a timeout) and ignores the late answer,
    so the work was wasted, and side effects the user tried to stop still happened.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "create_note"}}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5,
     "reason": "timeout"}}
    {"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "created"}]}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "create_note"}}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5,
     "reason": "timeout"}}
    ```

    ## Reference
    "Receivers of cancellation notifications SHOULD:" … "Not send a response for the
    cancelled request" — basic/utilities/cancellation.mdx#behavior-requirements
    (2024-11-05 to 2025-11-25); 2026-07-28 says "Servers receiving cancellation
    notifications SHOULD:", basic/patterns/cancellation.mdx#behavior-requirements.
    """
    unordered = ctx.unordered_sessions.implode()
    cancels = (
        matched_cancels(ctx)
        .filter(
            (pl.col("response_ordinal") > pl.col("ordinal"))
            # 2026-07-28 forbids it outright: CN006
            & ~pl.col("modern")
            & (pl.col("request_method") != "initialize")
            & ~pl.col("session").is_in(unordered)
            & (pl.col("direction") != "unknown")
        )
        .sort("ordinal")
        .unique("request_ordinal", keep="first", maintain_order=True)
    )
    parts = []
    for sender, responder in (("c2s", "s2c"), ("s2c", "c2s")):
        mine = cancels.filter(pl.col("direction") == sender)
        if mine.is_empty():
            continue
        mine = _count_before(ctx, mine, "ordinal", responder)
        mine = _count_before(ctx, mine, "response_ordinal", responder)
        between = pl.col("_n_response_ordinal") - pl.col("_n_ordinal")
        parts.append(mine.filter(_well_after("ts", "response_ts", between)))
    late = pl.concat(parts) if parts else cancels.clear()
    return findings(
        late.with_columns(cancel_ordinal="ordinal", ordinal="response_ordinal"),
        fmt(
            "response to request id {} ({}) sent after its cancellation at {}",
            "id",
            line_of("request_ordinal"),
            line_of("cancel_ordinal"),
        ),
    )


@rule(
    code="CN004",
    name="cancel-without-request-id",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def cancel_without_request_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/cancelled` without `params.requestId`.

    In 2025-11-25 the schema makes the field optional, but only because tasks are not
    cancelled with this notification at all (they take `tasks/cancel`): cancelling any
    other request still needs the id, so a cancel without one is wrong there too.

    ## Why is this bad?
    The request id is the only thing that says what to cancel. Without it the receiver
    cannot stop anything and must drop the notification, so the work goes on.

    ## Example
    ```json
    {"jsonrpc": "2.0", "method": "notifications/cancelled",
     "params": {"reason": "User requested cancellation"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "123",
     "reason": "User requested cancellation"}}
    ```

    ## Reference
    Schema: `CancelledNotification` (2024-11-05 to 2025-06-18) and
    `CancelledNotificationParams` (2026-07-28) list `requestId` as required; 2025-11-25
    made it optional: "This MUST be provided for cancelling non-task requests. This MUST
    NOT be used for cancelling tasks (use the `tasks/cancel` request instead)." —
    schema/2025-11-25/schema.ts#CancelledNotificationParams.
    """
    bad = ctx.part("notifications", "ordinal", "method", "cancel_id", "parse_error").filter(
        (pl.col("method") == _CANCELLED)
        & pl.col("cancel_id").is_null()
        & pl.col("parse_error").is_null()
    )
    return findings(bad, "notifications/cancelled has no requestId")


@rule(
    code="CN005",
    name="cancel-notification-over-http",
    severity="info",
    revisions=MODERN,
    scope="transport",
)
def cancel_notification_over_http(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports a client `notifications/cancelled` sent over Streamable HTTP in a 2026-07-28
    session.

    ## Why is this bad?
    In 2026-07-28 every request has its own response stream, and closing it is the
    cancellation: the server must treat the disconnect as cancel. A cancel notification
    POSTed separately is neither required nor expected, so the request keeps its stream
    (and the server its work) unless the client also closes the stream.

    ## Example
    ```json
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c-7"}}
    ```
    (POSTed to the MCP endpoint while the SSE stream of request `c-7` stays open)

    Use instead: close the SSE response stream of request `c-7`; send nothing.

    ## Reference
    "Closing the SSE response stream is the cancellation signal." —
    basic/patterns/cancellation.mdx#transport-specific-cancellation (2026-07-28); see also
    basic/transports/streamable-http.mdx#sending-messages ("no `notifications/cancelled`
    message is expected").
    """
    bad = (
        ctx.part("notifications", "ordinal", "method", "transport", "direction")
        # the typed tests first: the method's text is compared on the client's HTTP rows only
        .filter((pl.col("transport") == "http") & (pl.col("direction") == "c2s"))
        .filter(pl.col("method") == _CANCELLED)
    )
    return findings(
        bad,
        "notifications/cancelled sent over Streamable HTTP, where closing the request's stream"
        " cancels it",
    )


@rule(
    code="CN006",
    name="message-after-cancel",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def message_after_cancel(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a server message for a request the client had cancelled, sent clearly after the
    `notifications/cancelled`.

    Such messages are the response, a `notifications/progress` with the request's
    progress token, and notifications of the `subscriptions/listen` stream it opened.

    One finding per cancelled request, at the first such message. Clearly after means
    more than 100 ms after the cancel, or (without timestamps) after the server had
    already sent other messages following it: messages that crossed the cancel on the
    wire are not reported. Cancels sent over Streamable HTTP are left out: there the
    cancel is the closing of the request's stream, and a `notifications/cancelled` does
    not oblige the server to stop (CN005). Before 2026-07-28 a late response is CN003's
    business.

    ## Why is this bad?
    A cancelled request is over for the client, which has released what it held for it;
    in 2026-07-28 the protocol is stateless, so nothing else tells the client the request
    is still running. Messages for it are at best dropped and at worst taken for another
    request that reuses the id, or shown as progress of work the user stopped.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
     "params": {"name": "export", "_meta": {"progressToken": "p9",
       "io.modelcontextprotocol/protocolVersion": "2026-07-28",
       "io.modelcontextprotocol/clientCapabilities": {}}}}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
    {"jsonrpc": "2.0", "method": "notifications/progress",
     "params": {"progressToken": "p9", "progress": 3}}
    ```
    (the progress notification sent seconds after the cancel)

    Use instead: stop the work and send nothing more for request 9.

    ## Reference
    "Servers SHOULD stop work on a cancelled request as soon as practical and MUST NOT
    send any further messages for it." —
    docs/specification/2026-07-28/basic/transports/stdio.mdx#cancellation (2026-07-28);
    on Streamable HTTP the cancel is the closing of the request's stream, after which
    nothing can be sent on it.
    """
    cancels = (
        _binding_cancels(ctx, pl.col("modern") & (pl.col("direction") == "c2s"))
        .select(
            "session",
            "id",
            "request_ordinal",
            "request_method",
            "response_ordinal",
            "response_ts",
            cancel_ordinal="ordinal",
            cancel_ts="ts",
        )
        # over Streamable HTTP closing the request's stream is the cancel; a cancel
        # notification there (CN005) does not oblige the server to stop
        .pipe(ctx.lookup, "cancel_ordinal", _transport="transport")
        .filter(pl.col("_transport") != "http")
        .drop("_transport")
    )
    if cancels.is_empty():
        return findings(cancels.rename({"cancel_ordinal": "ordinal"}), "")
    responses = cancels.filter(pl.col("response_ordinal").is_not_null()).select(
        "request_ordinal",
        _at="response_ordinal",
        _ts="response_ts",
        _what=pl.lit("the response"),
    )
    tokens = ctx.lookup(cancels, "request_ordinal", _token="progress_token").filter(
        pl.col("_token").is_not_null()
    )
    progress = (
        _progress_with(ctx, tokens)
        .filter(pl.col("direction") == "s2c")
        .join(tokens.select("session", "_token", "request_ordinal"), on=["session", "_token"])
        .filter(pl.col("ordinal") > pl.col("request_ordinal"))
        .select("request_ordinal", _at="ordinal", _ts="ts", _what=pl.lit("notifications/progress"))
    )
    listens = cancels.filter(pl.col("request_method") == "subscriptions/listen")
    stream = progress.clear()
    # only for a cancelled listen: every stream's notifications are a costly frame to build
    if not listens.is_empty():
        stream = (
            stream_notifications(ctx)
            .with_columns(id=sid_text())
            .join(listens.select("session", "id", "request_ordinal"), on=["session", "id"])
            .filter(pl.col("ordinal") > pl.col("request_ordinal"))
            .select("request_ordinal", _at="ordinal", _what="method")
            .pipe(ctx.lookup, "_at", _ts="ts")
            .select(progress.columns)
        )
    later = (
        pl.concat([responses, progress, stream])
        .join(cancels, on="request_ordinal")
        .filter(pl.col("_at") > pl.col("cancel_ordinal"))
    )
    later = _count_before(ctx, later, "cancel_ordinal", "s2c")
    later = _count_before(ctx, later, "_at", "s2c")
    between = pl.col("_n__at") - pl.col("_n_cancel_ordinal")
    late = (
        later.filter(_well_after("cancel_ts", "_ts", between))
        .sort("_at")
        .group_by("request_ordinal", maintain_order=True)
        .agg(pl.all().first(), _count=pl.len())
    )
    more = and_more()
    return findings(
        late.with_columns(ordinal="_at"),
        fmt(
            "{} for request id {} ({}) sent after its cancellation at {}{}",
            "_what",
            "id",
            line_of("request_ordinal"),
            line_of("cancel_ordinal"),
            more,
        ),
    )


def _progress_with(ctx: LintContext, tokens: pl.DataFrame) -> pl.DataFrame:
    """Readable notifications/progress of a session and a token of ``tokens`` (columns
    session and ``_token``; not necessarily together): session, direction (as text),
    ordinal, ts and ``_token``. The progress notifications of every request are many:
    the few sessions and tokens looked for first spare joining them all on their texts."""
    sessions, wanted = tokens["session"].unique().implode(), tokens["_token"].unique().implode()
    return (
        # every readable progress notification with a token (the PG family's frame,
        # built once per lint)
        attributed_progress(ctx)
        # only the columns read: a filter moves every column it is given
        .select("session", "direction", "ordinal", "ts", _token="token")
        # the session codes first: the tokens' texts are then looked up in those
        # sessions' notifications only
        .filter(pl.col("session").is_in(sessions))
        .filter(pl.col("_token").is_in(wanted))
    )


def _next_with_token(ctx: LintContext, tokens: pl.DataFrame) -> pl.DataFrame:
    """``tokens`` (cancelled requests with ``_token``) plus ``_next``: the ordinal of the
    requester's next request carrying the same token (null when none): the token's
    progress from then on is that request's."""
    later = (
        # the requests that carry a token (the PG family's frame, built once per lint)
        token_requests(ctx)
        # the few sessions and tokens looked for first, not every request's joined; the
        # session codes before the tokens' texts
        .filter(pl.col("session").is_in(tokens["session"].unique().implode()))
        .filter(pl.col("token").is_in(tokens["_token"].unique().implode()))
        .select(
            "session",
            _token="token",
            _canceller="request_direction",
            _later="request_ordinal",
        )
        .join(
            tokens.select("session", "_token", "_canceller", "request_ordinal"),
            on=[
                "session",
                "_token",
                "_canceller",
            ],
        )
        .filter(pl.col("_later") > pl.col("request_ordinal"))
        .group_by("request_ordinal")
        .agg(_next=pl.col("_later").min())
    )
    return tokens.join(later, on="request_ordinal", how="left")


@rule(
    code="CN007",
    name="progress-after-cancel",
    severity="warning",
    revisions=LEGACY,
    scope="session",
)
def progress_after_cancel(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `notifications/progress` for a request sent clearly after its requester
    cancelled it, while the request was still unanswered (2024-11-05 to 2025-11-25;
    2026-07-28 is CN006's).

    Clearly after means more than 100 ms after the cancel or, without timestamps, after
    the receiver had sent other messages since the cancel. One finding per cancelled
    request, at its first late progress, counting the others; progress after the
    response is PG005's. Requests made as tasks (2025-11-25 `params.task`), which are
    cancelled with `tasks/cancel`, are left out, as is progress whose place the capture
    does not record (an event of a HAR's server stream, placed by mcptrace).

    ## Why is this bad?
    The receiver of a cancellation should stop working on the request. Progress
    seconds after the cancel shows it carried on: it spends resources on a result
    nobody waits for, and a requester that has dropped the token sees progress for an
    operation it no longer knows.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 19, "method": "tools/call",
     "params": {"name": "longRunningOperation", "_meta": {"progressToken": 19}}}
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 19}}
    {"jsonrpc": "2.0", "method": "notifications/progress",
     "params": {"progressToken": 19, "progress": 4, "total": 10}}
    ```
    (the progress sent two seconds after the cancel)

    Use instead: stop the work when the cancel arrives, and send nothing more for it.

    ## Reference
    "Receivers of cancellation notifications SHOULD: Stop processing the cancelled
    request" — basic/utilities/cancellation.mdx#behavior-requirements (2024-11-05 to
    2025-11-25); "Progress notifications MUST only reference tokens that: … Are
    associated with an in-progress operation" —
    basic/utilities/progress.mdx#behavior-requirements. Reported as a warning: the
    cancel is a request to stop, and races are allowed for.
    """
    cancels = _binding_cancels(ctx, ~pl.col("modern") & (pl.col("direction") != "unknown")).select(
        "session",
        "id",
        "request_ordinal",
        "response_ordinal",
        _canceller="direction",
        cancel_ordinal="ordinal",
        cancel_ts="ts",
    )
    tokens = ctx.lookup(cancels, "request_ordinal", _token="progress_token").filter(
        pl.col("_token").is_not_null()
    )
    # the requests' texts only for those with a token: they lie scattered among every
    # message's, and most cancelled requests carry none
    tokens = ctx.lookup(tokens, "request_ordinal", _request="message")
    tokens = tokens.filter(pl.col("_request").str.json_path_match("$.params.task").is_null())
    if tokens.is_empty():
        return findings(cancels.clear().rename({"cancel_ordinal": "ordinal"}), "")
    tokens = _next_with_token(ctx, tokens.drop("_request"))
    progress = (
        _progress_with(ctx, tokens)
        .filter(ctx.in_place())
        .select("session", "direction", "_token", _at="ordinal", _ts="ts")
        .join(tokens, on=["session", "_token"])
        .filter(
            (pl.col("direction") != pl.col("_canceller"))
            & (pl.col("_at") > pl.col("cancel_ordinal"))
            & (pl.col("_at") < pl.col("response_ordinal").fill_null(_NEVER))
            & (pl.col("_at") < pl.col("_next").fill_null(_NEVER))
        )
    )
    late = (
        _sent_well_after(
            ctx, progress, at="_at", at_ts="_ts", since="cancel_ordinal", since_ts="cancel_ts"
        )
        .sort("_at")
        .group_by("request_ordinal", maintain_order=True)
        .agg(pl.all().first(), _count=pl.len())
    )
    return findings(
        late.with_columns(ordinal="_at"),
        fmt(
            "notifications/progress for request id {} ({}) sent after its cancellation at {}{}",
            "id",
            line_of("request_ordinal"),
            line_of("cancel_ordinal"),
            and_more(),
        ),
    )
