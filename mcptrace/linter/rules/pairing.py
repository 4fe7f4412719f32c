"""PR: pairing requests with responses (id reuse, orphan and duplicate responses,
unanswered requests).

Rules here read the calls table, where pairing is already done per session and per
direction of the request: client-issued and server-issued ids are separate spaces,
and `5` and `"5"` are different ids. Requests and responses of unknown direction
draw no finding, and neither do notifications that wrongly carry an id (JR005).
"""

from __future__ import annotations

import polars as pl

from mcptrace._format import fmt
from mcptrace.calls import broken_off, key_hash
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import ALL_REVISIONS, LEGACY, MODERN, findings, line_of, rule
from mcptrace.linter.rules.envelope import is_notification_method
from mcptrace.linter.rules.lifecycle import reopenings
from mcptrace.linter.rules.stdio import capture_cuts, first_cuts

_KEY = ["session", "direction", "id"]
#: requests the protocol answers only when they end: never "unanswered"
_LONG_LIVED = ("subscriptions/listen",)
#: error codes about a request whose id could not be read
_UNREADABLE_CODES = (-32700, -32600)
_FLIP = {"c2s": "s2c", "s2c": "c2s"}
#: by the direction of a request: who received it, who sent it
_PEER_NAME = {"c2s": "server", "s2c": "client"}
_SENDER_NAME = {"c2s": "client", "s2c": "server"}
#: in-flight packing: (end ordinal << 31) | request ordinal, both below 2**31
_SHIFT = 2**31
_OPEN = _SHIFT - 1


def _issued(ctx: LintContext) -> pl.DataFrame:
    """Calls of real requests with a usable id and a known direction, by request order."""
    return ctx.memo("pairing.issued", _build_issued)


def _build_issued(ctx: LintContext) -> pl.DataFrame:
    return (
        ctx.calls.select(
            "session",
            "direction",
            "id",
            "id_type",
            "method",
            "request_ordinal",
            "request_line",
            "response_ordinal",
            "outcome",
        )
        .filter(
            pl.col("request_ordinal").is_not_null()
            & (pl.col("direction") != "unknown")
            & pl.col("id").is_not_null()
            & (pl.col("id_type") != "null")
            & ~is_notification_method().fill_null(False)
        )
        .sort("request_ordinal")
    )


def _reused(ctx: LintContext) -> pl.DataFrame:
    """The rows of :func:`_issued` whose key (session, direction, id) other requests
    share too: the only ones PR001 and PR002 can flag (usually very few)."""
    return ctx.memo("pairing.reused", _build_reused)


def _build_reused(ctx: LintContext) -> pl.DataFrame:
    issued = _issued(ctx)
    # rows sharing a key share its hash: only the rows whose hash repeats (found by
    # sorting integers, far cheaper than is_duplicated on keys with text) are tested.
    # One thread sorts them: split over threads the sort took twice the CPU (~12 ms, ~5
    # at 10^6 messages), and the rules already run on two threads
    hashed = key_hash(*_KEY)
    hashes = issued.select(hashed).to_series().sort(multithreaded=False)
    repeated = hashes.filter(hashes == hashes.shift(1))
    return issued.filter(hashed.is_in(repeated.implode())).filter(pl.struct(_KEY).is_duplicated())


def _handshakes_before(ctx: LintContext, requests: pl.DataFrame) -> pl.DataFrame:
    """``requests`` (sorted by ``request_ordinal``) plus ``_handshake``: how many times
    its session was opened anew (see :func:`reopenings`) up to it; ids are compared
    within one opening."""
    if requests.is_empty():
        return requests.with_columns(_handshake=pl.lit(0, pl.UInt32))
    opened = (
        reopenings(ctx)
        .filter(pl.col("session").is_in(requests["session"].unique().implode()))
        .select("session", _opened="ordinal")
        .with_columns(_handshake=pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("session"))
    )
    return requests.join_asof(
        opened,
        left_on="request_ordinal",
        right_on="_opened",
        by="session",
        strategy="backward",
        check_sortedness=False,
    ).with_columns(pl.col("_handshake").fill_null(0))


@rule(code="PR001", name="request-id-reused", severity="error", revisions=LEGACY, scope="session")
def request_id_reused(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a request whose id its sender already used for an earlier request in the same
    session, even if that request was answered long ago.

    Client-issued and server-issued ids are counted separately, and `5` and `"5"` are
    different ids. An `initialize` sent after a successful handshake opens a new
    session: ids used before it are not compared with those after it (two connections
    recorded under one session name each number their requests from 0; LC017 notes
    them).

    ## Why is this bad?
    Before 2026-07-28 an id names one request for the whole session. Peers that log,
    cancel or correlate progress by id (and late responses to a timed-out request) get
    attributed to the wrong request when an id comes back.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}
    {"jsonrpc": "2.0", "id": 7, "method": "prompts/list"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 8, "method": "prompts/list"}
    ```

    ## Reference
    "The request ID MUST NOT have been previously used by the requestor within the same
    session." — basic/index.mdx#requests (2025-03-26 to 2025-11-25;
    basic/messages.mdx#requests in 2024-11-05).
    """
    # a request whose key no other request has is its key's first use: only reused keys
    req = _handshakes_before(ctx, _reused(ctx))
    req = req.with_columns(_first=pl.col("request_ordinal").first().over(*_KEY, "_handshake"))
    bad = req.filter(pl.col("request_ordinal") != pl.col("_first")).rename(
        {"request_ordinal": "ordinal"}
    )
    message = fmt(
        "request {} reuses id {}, first used by this sender at {}",
        "method",
        "id",
        line_of("_first"),
    )
    return findings(bad, message)


@rule(
    code="PR002",
    name="request-id-reused-in-flight",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def request_id_reused_in_flight(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a request whose id equals the id of an earlier request of the same sender that
    has not been answered yet: its response comes later in the capture, or never.

    Reusing an id after its response arrived is allowed in this revision. A request
    cancelled but never answered counts as still in flight.

    ## Why is this bad?
    The response carries only the id. With two requests in flight under one id the
    requester cannot tell which one a response answers, and one of the two callers gets
    the other's result.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "a", "_meta": {…}}}
    {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": {…}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": {…}}}
    ```

    ## Reference
    "The request ID MUST NOT match the ID of any other request the sender has issued and
    not yet received a response for." — basic/index.mdx#requests (2026-07-28).
    """
    req = _reused(ctx).filter(~pl.col("session").is_in(ctx.unordered_sessions.implode()))
    # the earlier request with this id that ends last, packed so cum_max finds it
    end = pl.col("response_ordinal").fill_null(_OPEN)
    packed = end * _SHIFT + pl.col("request_ordinal")
    blocker = packed.shift(1).cum_max().over(_KEY)
    req = req.with_columns(_blocker=blocker)
    bad = req.filter((pl.col("_blocker") // _SHIFT) > pl.col("request_ordinal")).with_columns(
        _earlier=pl.col("_blocker") % _SHIFT,
        _answered=(pl.col("_blocker") // _SHIFT).replace(_OPEN, None),
    )
    when = (
        pl.when(pl.col("_answered").is_null())
        .then(pl.lit("never answered"))
        .otherwise(fmt("answered only at {}", line_of("_answered")))
    )
    message = fmt(
        "request {} reuses id {} while the request at {} is still in flight ({})",
        "method",
        "id",
        line_of("_earlier"),
        when,
    )
    return findings(bad.rename({"request_ordinal": "ordinal"}), message)


def _orphans(ctx: LintContext, duplicate: bool) -> pl.DataFrame:
    """Orphan responses (of a known direction) with their message row's kind."""
    calls = ctx.calls.filter(
        (pl.col("outcome") == "orphan")
        & (pl.col("duplicate").fill_null(False) == duplicate)
        & (pl.col("direction") != "unknown")
    )
    return ctx.lookup(calls, "response_ordinal", kind="kind")


@rule(
    code="PR003",
    name="response-without-request",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def response_without_request(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags responses whose id matches no earlier request sent the other way in the same
    session, including success responses without an id.

    Error responses without an id are left to PR005 (they are allowed for unreadable
    requests); second responses to one request are PR004. A response after a line of the
    other side that the capture tool cut (see JR014), or after a HAR response of the other
    side whose content the HAR lost (a stream left unfinished, a body not saved), most
    likely holding its request, is not flagged.

    ## Why is this bad?
    A response answers exactly one request and carries that request's id. A response with
    an unknown id is dropped by the receiver, so the request it was meant for waits
    forever; often it points at an id rewritten by a proxy or a counter mix-up.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    {"jsonrpc": "2.0", "id": 2, "result": {"tools": []}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    ```

    ## Reference
    "Result responses MUST include the same ID as the request they correspond to." —
    basic/index.mdx#result-responses (2025-11-25 and later; "Responses MUST include the
    same ID as the request they correspond to." in basic/index.mdx#responses of 2025-03-26
    and 2025-06-18 and basic/messages.mdx#responses of 2024-11-05).
    """
    orphans = _orphans(ctx, duplicate=False)
    if orphans.is_empty():
        return findings(orphans, "")
    no_id = pl.col("id").is_null() | (pl.col("id_type") == "null")
    # the requester sent a line before it that the capture tool cut: its request, likely
    bad = (
        orphans.join(
            first_cuts(ctx), on=["session", "direction"], how="left", maintain_order="left"
        )
        .filter(~(pl.col("_first_cut") < pl.col("response_ordinal")).fill_null(False))
        .filter(~(no_id & (pl.col("kind") == "error")))
        .rename({"response_ordinal": "ordinal"})
    )
    what = pl.when(pl.col("kind") == "error").then(pl.lit("error")).otherwise(pl.lit("response"))
    message = (
        pl.when(pl.col("id").is_null())
        .then(fmt("{} has no id, so it answers no request", what))
        .otherwise(
            fmt(
                "{} to id {} matches no earlier request from the {}",
                what,
                "id",
                pl.col("direction").cast(pl.String).replace_strict(_SENDER_NAME, default="peer"),
            )
        )
    )
    return findings(bad, message)


@rule(
    code="PR004",
    name="duplicate-response",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def duplicate_response(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a second (or later) response to a request that was already answered.

    A response to an id its sender reused while the first request was still in flight
    (PR002) answers that earlier request if it is still waiting: only a response with
    no request left to answer is a duplicate.

    ## Why is this bad?
    A request gets exactly one response. The extra one reaches a requester that has
    already completed the request: it is dropped at best, and at worst it is taken as the
    answer to a later request that reused the id.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_weather"}}
    {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}
    {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "Internal error"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}
    ```
    and nothing more for id 3.

    ## Reference
    "Responses MUST include the same ID as the request they correspond to." —
    basic/index.mdx#responses (2025-03-26, 2025-06-18; basic/messages.mdx#responses in
    2024-11-05; #result-responses and #error-responses from 2025-11-25): each response
    corresponds to one request, and JSON-RPC 2.0 answers a request with one response.
    """
    dups = _orphans(ctx, duplicate=True).sort("response_ordinal")
    if dups.is_empty():
        return findings(dups.rename({"response_ordinal": "ordinal"}), "")
    answered = (
        ctx.calls.filter(
            pl.col("request_ordinal").is_not_null() & pl.col("response_ordinal").is_not_null()
        )
        .select(*_KEY, _asked="request_ordinal", _answer="response_ordinal")
        .sort("_answer")
    )
    found = dups.join_asof(
        answered,
        left_on="response_ordinal",
        right_on="_answer",
        by=_KEY,
        strategy="backward",
        check_sortedness=False,
    ).rename({"response_ordinal": "ordinal"})
    message = fmt(
        "another response to the request at {} (id {}), already answered at {}",
        line_of("_asked"),
        "id",
        line_of("_answer"),
    )
    return findings(found, message)


@rule(
    code="PR005",
    name="error-without-id",
    severity="error",
    revisions=("2025-11-25", "2026-07-28"),
    scope="pairing",
)
def error_without_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags error responses with no `id` (absent or `null`) whose code says the request was
    read: anything but -32700 (Parse error) and -32600 (Invalid Request).

    The body of an HTTP error status (`4xx`, `5xx`) is not flagged: Streamable HTTP lets
    a server that cannot accept a `POST` answer with an HTTP error whose body "MAY
    comprise a JSON-RPC error response that has no `id`", and such a body also answers a
    refused `GET`.

    ## Why is this bad?
    Only an error about a request too malformed to read its id may go without one. Any
    other error (method not found, invalid params, internal error) concerns a request whose
    id the server knew; without it the requester cannot tell which call failed, and that
    call never completes.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope"}}
    {"jsonrpc": "2.0", "error": {"code": -32602, "message": "Unknown tool: nope"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Unknown tool: nope"}}
    ```

    ## Reference
    "Error responses MUST include the same ID as the request they correspond to (except in
    error cases where the ID could not be read due a malformed request)." —
    basic/index.mdx#error-responses (2025-11-25, 2026-07-28). Earlier schemas require `id`
    on every `JSONRPCError`. "If the server cannot accept the input, it MUST return an HTTP
    error status code (e.g., 400 Bad Request). The HTTP response body MAY comprise a
    JSON-RPC error response that has no `id`." — basic/transports.mdx#sending-messages-to-
    the-server (2025-11-25; basic/transports/streamable-http.mdx in 2026-07-28).
    """
    bad = ctx.messages.select(
        "ordinal", "kind", "parse_error", "id", "id_type", "error_code", "http_status"
    ).filter(
        (pl.col("kind") == "error")
        & pl.col("parse_error").is_null()
        & (pl.col("id").is_null() | (pl.col("id_type") == "null"))
        & pl.col("error_code").is_not_null()
        & ~pl.col("error_code").is_in(_UNREADABLE_CODES)
        & ~(pl.col("http_status") >= 400).fill_null(False)
    )
    message = fmt(
        "error {} has no id, although only errors about unreadable requests "
        "(-32700, -32600) may omit it",
        "error_code",
    )
    return findings(bad, message)


def _unanswered(ctx: LintContext) -> pl.DataFrame:
    """Unanswered, uncancelled requests with ``_peer_last``: the ordinal of the last
    JSON-RPC message the receiver sent in the session (null when it sent none), and
    ``_unordered`` for sessions whose two directions cannot be ordered."""
    return ctx.memo("pairing.unanswered", _build_unanswered)


def _last_sent(rows: pl.DataFrame, sessions: pl.Series, alias: str) -> pl.DataFrame:
    """Per session of ``sessions`` and requester (``_requester``, as text): the ordinal
    (``alias``) of the last of ``rows`` that the other side sent."""
    return (
        rows.filter(pl.col("session").is_in(sessions))
        .filter(pl.col("direction") != "unknown")
        .group_by("session", "direction")
        .agg(pl.col("ordinal").max().alias(alias))
        .select(
            "session",
            pl.col("direction").cast(pl.String).replace_strict(_FLIP).alias("_requester"),
            alias,
        )
    )


def _build_unanswered(ctx: LintContext) -> pl.DataFrame:
    # the method (text) is compared only on the few unanswered calls
    calls = (
        _issued(ctx)
        .filter(pl.col("outcome") == "unanswered")
        .filter(~pl.col("method").is_in(_LONG_LIVED))
    )
    # an HTTP error status on the exchange that carried the request is its answer, and
    # its body (if any) an error without an id: transports.mdx, "If the server cannot
    # accept the input, it MUST return an HTTP error status code"
    calls = ctx.lookup(calls, "request_ordinal", _http_status="http_status").filter(
        ~(pl.col("_http_status") >= 400).fill_null(False)
    )
    sessions = calls["session"].unique().implode()
    # the last message of the receiver, only in the sessions that have such calls
    peer = _last_sent(
        ctx.part("protocol", "session", "direction", "ordinal"), sessions, "_peer_last"
    )
    # the last line of the receiver that the capture tool cut: the answer, it may be
    cut = _last_sent(capture_cuts(ctx), sessions, "_peer_cut")
    return (
        calls.with_columns(_requester=pl.col("direction").cast(pl.String))
        .join(peer, on=["session", "_requester"], how="left")
        .join(cut, on=["session", "_requester"], how="left")
        .with_columns(
            _unordered=pl.col("session").is_in(ctx.unordered_sessions.implode()),
            _peer=pl.col("_requester").replace_strict(_PEER_NAME),
        )
    )


@rule(
    code="PR006",
    name="unanswered-request",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def unanswered_request(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags requests that never got a response although the receiver kept sending messages
    after them, and that the sender never cancelled.

    Requests answered only when they end (`subscriptions/listen`) are not flagged;
    requests followed by nothing from the receiver are PR007. A request after which the
    receiver sent a line the capture tool cut (see JR014) or a HAR response whose content
    the HAR lost, most likely holding its answer, is not flagged, nor one whose HTTP
    `POST` the server refused with a `4xx` or `5xx` status: that status is its answer (a
    legacy server refusing a 2026-07-28 request, say, whose error body has no `id`). In
    a HAR, which keeps each exchange whole, a request whose exchange got no HTTP response
    says so: most often the client abandoned it without the `notifications/cancelled` it
    owes.

    ## Why is this bad?
    The receiver is alive but lost or ignored the request, and the sender neither got an
    answer nor gave up on it with a cancellation: a caller hangs, a tool call silently never
    happens. Every request is owed a result or an error.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "slow_report"}}
    {"jsonrpc": "2.0", "id": 6, "method": "tools/list"}
    {"jsonrpc": "2.0", "id": 6, "result": {"tools": []}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "Report failed"}}
    ```
    or, from the requester after its timeout,
    `{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}`.

    ## Reference
    "Responses are sent in reply to requests, containing the result or error of the
    operation." — basic/index.mdx#responses (2025-03-26 and later). "When the request has
    not received a success or error response within the timeout period, the sender SHOULD
    issue a cancellation notification for that request and stop waiting for a response." —
    basic/lifecycle.mdx#timeouts (2025-03-26 to 2025-11-25; basic/patterns/cancellation.mdx
    #timeouts in 2026-07-28, where closing the HTTP response stream also cancels).
    """
    rows = _unanswered(ctx).filter(
        ~pl.col("_unordered")
        & (pl.col("_peer_last") > pl.col("request_ordinal"))
        # the receiver sent a line after it that the capture tool cut: its answer, likely
        & ~(pl.col("_peer_cut") > pl.col("request_ordinal")).fill_null(False)
    )
    # a HAR keeps each exchange whole: it shows one that got no HTTP response or broke
    # off, most often because the client gave up on it (the browser's ERR_ABORTED)
    # (the message is made after request_ordinal is renamed ordinal)
    dropped = pl.col("ordinal").is_in(
        broken_off(ctx.messages).implode()
        if not rows.is_empty()
        else pl.Series([], dtype=pl.Int64).implode()
    )
    message = fmt(
        "request {} id {} was never answered, although the {} kept sending messages{}",
        "method",
        "id",
        "_peer",
        pl.when(dropped)
        .then(
            pl.lit(
                "; its HTTP exchange broke off before the answer (failed, or abandoned by the "
                "client without notifications/cancelled)"
            )
        )
        .otherwise(pl.lit("")),
    )
    return findings(rows.rename({"request_ordinal": "ordinal"}), message)


@rule(
    code="PR007",
    name="unanswered-at-end-of-capture",
    severity="info",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def unanswered_at_end_of_capture(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Reports requests without a response after which the receiver sent nothing more in the
    session: the capture (or the receiver) ended while they were pending.

    Cancelled requests, `subscriptions/listen` and requests whose HTTP `POST` the server
    refused with a `4xx` or `5xx` status (their answer) are not reported.

    ## Why is this bad?
    Often harmless (the capture was stopped mid-call), but it is also what a crashed or
    hung server looks like: check whether the receiver died on this request.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "get_forecast"}}
    ```
    (end of capture)

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "Sunny"}]}}
    ```
    before the session ends, or a `notifications/cancelled` for id 9 from the requester.

    ## Reference
    "Responses are sent in reply to requests, containing the result or error of the
    operation." — basic/index.mdx#responses (2025-03-26 and later;
    basic/messages.mdx#responses in 2024-11-05).
    """
    rows = _unanswered(ctx).filter(
        pl.col("_unordered")
        | pl.col("_peer_last").is_null()
        | (pl.col("_peer_last") < pl.col("request_ordinal"))
    )
    message = (
        pl.when(pl.col("_unordered"))
        .then(
            fmt(
                "request {} id {} has no response in the capture (the two per-direction "
                "files cannot be ordered)",
                "method",
                "id",
            )
        )
        .otherwise(
            fmt(
                "request {} id {} unanswered at end of capture: the {} sent nothing after it",
                "method",
                "id",
                "_peer",
            )
        )
    )
    return findings(rows.rename({"request_ordinal": "ordinal"}), message)
