"""PG: progress notifications (token type, token lifetime, increasing progress).

A progress token lives from the request that carries it in `_meta.progressToken`
to that request's response. `notifications/progress` travel the other way: in
legacy revisions either side may ask for progress, in 2026-07-28 only the client.
Each notification is attributed to the latest earlier request of the peer, in the
same session, that carried its token (a token may be reused once its request is
done). Where a capture cannot order the two directions against each other
(per-direction stdio files), any request of the session counts as earlier, and
tokens used by several requests are left alone.

Race tolerance (PG005): a notification that follows the response of its request
is not reported when both are elements of the same line (a batch), or when both
have timestamps no more than 1 ms apart: at that granularity the capture cannot
say which was written first. Without timestamps the capture order decides.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from mcptrace._format import fmt
from mcptrace.calls import key_hash
from mcptrace.linter.context import LintContext, computed_where
from mcptrace.linter.rule import ALL_REVISIONS, findings, line_of, rule
from mcptrace.linter.rules.stdio import first_cuts

_PROGRESS = "notifications/progress"
#: a notification this close after the response is a race, not a violation
_RACE = timedelta(milliseconds=1)
#: end of an unanswered request's lifetime: after every ordinal
_OPEN_END = 1 << 62

# A number whose JSON text a JSON path query returns unchanged (integers up to 15
# digits; decimals with at most 11 significant digits and no trailing zero).
_NUMBER = r"(?:0|-?[1-9][0-9]{0,14}|-?(?:0|[1-9][0-9]{0,5})\.[0-9]{0,4}[1-9])"
#: A progress notification in the compact form most captures hold is this text, its
#: token's JSON text, `,"progress":`, then a tail matching :data:`_COMPACT_TAIL`, which
#: starts with the `params.progress` text, up to the first `,` or `}`: no JSON parse
#: needed. (A prefix test and a regex over the short tail cost a little less than one
#: regex over the whole text; a match test and a cut cost less than a capture group.)
_COMPACT_HEAD = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":'
_COMPACT_TAIL = r"^" + _NUMBER + r'(?:,"total":' + _NUMBER + r')?(?:,"message":"[^"\\]*")?\}\}$'


def _compact_progress(progress: pl.DataFrame) -> pl.Series:
    """``_quick``: the ``params.progress`` text of each notification of ``progress``
    (columns token, message) whose text is in the compact form (see
    :data:`_COMPACT_HEAD`), null for the others.

    The notifications' texts lie scattered through the buffers of every message's text,
    and reading them there costs several times what the same work costs on texts side
    by side (at 10^6 messages, ~15 ms instead of ~4 ms for the head alone): they are
    read there once, into a copy. The copy strips trailing NULs, which no compact
    text ends with: a text that loses any is left to the parse. The tails after the
    head repeat (a few values of progress, total and message), so each distinct one is
    matched once."""
    texts = progress["message"]
    copied = texts.str.strip_chars_end("\x00")
    head = pl.lit(_COMPACT_HEAD) + pl.col("token") + pl.lit(',"progress":')
    tails = pl.DataFrame({"token": progress["token"], "_text": copied}).select(
        # a text that does not start with the head is left whole, and the text of a JSON
        # object (`{...`) never matches the tail
        _tail=pl.when(copied.str.len_bytes() == texts.str.len_bytes()).then(
            pl.col("_text").str.strip_prefix(head)
        )
    )
    tail = pl.col("_tail")
    verdicts = tails.unique().with_columns(
        # the number is ASCII: its length in characters is the offset of `,` or `}`
        _quick=pl.when(tail.str.contains(_COMPACT_TAIL)).then(tail.str.head(tail.str.find("[,}]")))
    )
    return tails.join(verdicts, on="_tail", how="left", maintain_order="left")["_quick"]


def token_requests(ctx: LintContext) -> pl.DataFrame:
    """Requests carrying `_meta.progressToken`, with their first response (if any): session,
    request_direction (as text), token, request_ordinal, task, response_ordinal and
    response_ts. The CN family reads them too."""
    return ctx.memo("progress.token_requests", _build_token_requests)


def _build_token_requests(ctx: LintContext) -> pl.DataFrame:
    requests = ctx.part(
        "requests", "session", "direction", "progress_token", "ordinal", "rare"
    ).filter(pl.col("progress_token").is_not_null())
    # 2025-11-25 task-augmented requests keep their token until the task ends; parse only
    # the few messages that mention a task (a rare marker: see LintContext.part), whose
    # texts alone are looked up
    tasks = (
        ctx.lookup(requests.filter(pl.col("rare")), "ordinal", message="message")
        .filter(pl.col("message").str.contains('"task"', literal=True))
        .select(
            request_ordinal="ordinal",
            task=pl.col("message").str.json_path_match("$.params.task").is_not_null(),
        )
    )
    requests = requests.select(
        "session",
        pl.col("direction").cast(pl.String).alias("request_direction"),
        token="progress_token",
        request_ordinal="ordinal",
    )
    if tasks.is_empty():  # the usual case: no task-augmented request to join
        requests = requests.with_columns(task=pl.lit(False, pl.Boolean))
    else:
        requests = requests.join(
            tasks, on="request_ordinal", how="left", maintain_order="left"
        ).with_columns(pl.col("task").fill_null(False))
    # where the response is (its source and line), which PG005 alone reads, it looks up
    # for its few rows
    return ctx.call_lookup(
        requests, "request_ordinal", response_ordinal="response_ordinal", response_ts="response_ts"
    )


def attributed_progress(ctx: LintContext) -> pl.DataFrame:
    """Every readable `notifications/progress` with the request its token belongs to.

    Columns of the notification (session, direction, ordinal, line, ts, token, modern,
    message; not its source, which PG005 alone reads, of a few rows) plus those of
    :func:`token_requests` (null when no earlier request of the peer carried the token)
    and ``ambiguous`` (unordered session where several requests used the token).
    """
    return ctx.memo("progress.attributed", _build_attributed_progress)


def _build_attributed_progress(ctx: LintContext) -> pl.DataFrame:
    progress = ctx.keyed_notifications(_PROGRESS, "progress_token", "token", "message")
    requests = token_requests(ctx)
    unordered = ctx.unordered_sessions.implode()
    if not ctx.unordered_sessions.is_empty():
        requests = requests.with_columns(
            _at=pl.when(pl.col("session").is_in(unordered)).then(-1).otherwise("request_ordinal"),
            ambiguous=pl.col("session").is_in(unordered)
            & (pl.len().over("session", "request_direction", "token") > 1),
        )
    else:  # the usual case: every request is at its own place, and none is ambiguous
        requests = requests.with_columns(
            _at=pl.col("request_ordinal"), ambiguous=pl.lit(False, pl.Boolean)
        )
    # `_dir`: the direction a notification for this request may travel. A request or a
    # notification of unknown direction may belong to either side. (The copies for
    # notifications of unknown direction are made only when there are such notifications.)
    known = pl.col("request_direction") != "unknown"
    parts = [
        requests.filter(known).with_columns(
            _dir=pl.col("request_direction").replace_strict({"c2s": "s2c", "s2c": "c2s"})
        )
    ]
    if (progress["direction"] == "unknown").any():
        parts.append(requests.with_columns(_dir=pl.lit("unknown")))
    parts += [
        requests.filter(~known).with_columns(_dir=pl.lit("c2s")),
        requests.filter(~known).with_columns(_dir=pl.lit("s2c")),
    ]
    keyed = pl.concat(parts).sort("_at")
    return (
        progress.with_columns(_dir=pl.col("direction"))
        .sort("ordinal")
        .join_asof(
            keyed,
            left_on="ordinal",
            right_on="_at",
            by=["session", "_dir", "token"],
            strategy="backward",
            check_sortedness=False,
        )
        .drop("_dir", "_at")
    )


def _token_type(token: pl.Expr) -> pl.Expr:
    """JSON type name of a token given as JSON text."""
    first = token.str.slice(0, 1)
    return (
        pl.when(first == "{")
        .then(pl.lit("object"))
        .when(first == "[")
        .then(pl.lit("array"))
        .when(token.is_in(["true", "false"]))
        .then(pl.lit("boolean"))
        .when(token == "null")
        .then(pl.lit("null"))
        .otherwise(pl.lit("number"))
    )


@rule(
    code="PG001",
    name="progress-token-wrong-type",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def progress_token_wrong_type(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `progressToken` (in a request's `_meta` or in `notifications/progress`)
    that is not a string or an integer: a fraction, a boolean, null, an object or an array.

    ## Why is this bad?
    Both sides key their progress handlers by token. A token of another type is
    rejected by schema-validating peers, and one that round-trips through a JSON
    library as a different value (`1.0` read back as `1`) never finds its handler.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "build", "_meta": {"progressToken": {"t": 1}}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "build", "_meta": {"progressToken": "build-1"}}}
    ```

    ## Reference
    "Progress tokens MUST be a string or integer value" —
    basic/patterns/progress.mdx#progress-flow (2026-07-28; basic/utilities/progress.mdx
    in earlier revisions). Schema: `ProgressToken` (all revisions).
    """
    token = pl.col("progress_token")
    bad = (
        ctx.part("protocol", "ordinal", "kind", "progress_token", "parse_error")
        .filter(
            pl.col("kind").is_in(["request", "notification"])
            & token.is_not_null()
            & pl.col("parse_error").is_null()
        )
        # the tokens' texts are tested on the rows that have one, not on every row; the
        # pattern only on those that are not strings (a prefix test)
        .filter(~token.str.starts_with('"'))
        .filter(~token.str.contains(r"^-?\d+$"))
    )
    return findings(
        bad,
        fmt("progressToken {} is a JSON {}, not a string or integer", token, _token_type(token)),
    )


@rule(
    code="PG002",
    name="progress-token-reused-in-flight",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="session",
)
def progress_token_reused_in_flight(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a request whose `_meta.progressToken` is already carried by another request
    of the same sender that has not been answered yet.

    ## Why is this bad?
    A progress notification names only the token. With two active requests sharing
    it, the receiver cannot tell which operation advanced, and the first response
    unregisters the handler the other request still needs. Reusing a token after
    its request completed is fine; this rule only looks at overlapping requests.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a",
     "_meta": {"progressToken": "p"}}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "b",
     "_meta": {"progressToken": "p"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a",
     "_meta": {"progressToken": "p1"}}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "b",
     "_meta": {"progressToken": "p2"}}}
    ```

    ## Reference
    "Progress tokens can be chosen by the client using any means, but MUST be unique
    across all active requests." — basic/patterns/progress.mdx#progress-flow (2026-07-28;
    earlier revisions, basic/utilities/progress.mdx, say "chosen by the sender").
    """
    unordered = ctx.unordered_sessions.implode()
    key = ["session", "request_direction", "token"]
    requests = (
        token_requests(ctx)
        # the lifetime spans both directions: it needs a common order, and a known sender
        .filter((pl.col("request_direction") != "unknown") & ~pl.col("session").is_in(unordered))
        # a token no other request of the sender used cannot be in use already: the
        # key's hash (one number) finds the candidates, the key itself decides
        .filter(key_hash(*key).is_duplicated())
        .filter(pl.struct(key).is_duplicated())
    )
    if requests.is_empty():  # the usual case: no sender used a token twice
        return findings(requests, "")
    requests = (
        requests.sort("request_ordinal")
        .with_columns(
            _end=pl.coalesce("response_ordinal", pl.lit(_OPEN_END) + pl.col("request_ordinal"))
        )
        .with_columns(_open=pl.col("_end").cum_max().shift(1).over(key))
    )
    holders = requests.select(*key, _open="_end", holder_ordinal="request_ordinal")
    bad = (
        requests.filter(pl.col("_open") > pl.col("request_ordinal"))
        .join(holders, on=[*key, "_open"], how="left")
        .rename({"request_ordinal": "ordinal"})
    )
    return findings(
        bad,
        fmt(
            "progressToken {} is already used by the request at {}, which is still in flight",
            "token",
            line_of("holder_ordinal"),
        ),
    )


@rule(
    code="PG003",
    name="progress-for-unknown-token",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="session",
)
def progress_for_unknown_token(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/progress` whose `progressToken` was not carried by any earlier
    request of the peer in the same session (tokens `5` and `"5"` differ).

    Not flagged after the peer sent a line the capture lost (JR014 reports it: a HAR
    that did not keep a request body, a line the capture tool cut), which most likely
    carried the token.

    ## Why is this bad?
    Progress may only be reported for a token the other side handed out with a request.
    A notification for an unknown token (a typo, a token invented by the server, the
    other side's token, or one sent before its request) is dropped by the receiver,
    so the user sees no progress.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "search",
     "_meta": {"progressToken": "search-4"}}}
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "search-5",
     "progress": 1}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "search",
     "_meta": {"progressToken": "search-4"}}}
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "search-4",
     "progress": 1}}
    ```

    ## Reference
    "Progress notifications MUST only reference tokens that: Were provided in an active
    request" — basic/patterns/progress.mdx#behavior-requirements (2026-07-28;
    basic/utilities/progress.mdx#behavior-requirements in earlier revisions).
    """
    progress = attributed_progress(ctx)
    # client-to-server progress in 2026-07-28 is a wrong direction: the MD family's finding
    unknown = progress.filter(
        pl.col("request_ordinal").is_null() & ~(pl.col("modern") & (pl.col("direction") == "c2s"))
    )
    if not unknown.is_empty():
        # the requester sent a line before it that the capture lost (JR014): the request
        # that carried the token, likely
        cut = first_cuts(ctx).select(
            "session",
            pl.col("direction")
            .cast(pl.String)
            .replace_strict({"c2s": "s2c", "s2c": "c2s"}, default="unknown")
            .alias("_sender"),
            "_first_cut",
        )
        unknown = (
            unknown.with_columns(_sender=pl.col("direction").cast(pl.String))
            .join(cut, on=["session", "_sender"], how="left", maintain_order="left")
            .filter(~(pl.col("_first_cut") < pl.col("ordinal")).fill_null(False))
        )
    sender = (
        pl.when(pl.col("direction") == "unknown")
        .then(pl.lit("in this session"))
        .otherwise(pl.lit("from the other side"))
    )
    return findings(
        unknown,
        fmt(
            "progress notification for token {}, which no earlier request {} carried",
            "token",
            sender,
        ),
    )


@rule(
    code="PG004",
    name="progress-not-increasing",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="session",
)
def progress_not_increasing(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/progress` whose `progress` value is not greater than the
    previous notification's for the same request (same token, same request instance).

    ## Why is this bad?
    `progress` must grow with every notification, even when `total` is unknown: that
    is the only way a client can show the operation is advancing. A value that repeats
    or goes back makes progress bars jump backwards, and a client that resets its
    timeout on progress may wait forever on a server that is stuck.

    ## Example
    ```json
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p",
     "progress": 50, "total": 100}}
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p",
     "progress": 50, "total": 100}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p",
     "progress": 50, "total": 100}}
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p",
     "progress": 75, "total": 100}}
    ```

    ## Reference
    "The `progress` value MUST increase with each notification, even if the total is
    unknown." — basic/patterns/progress.mdx#progress-flow (2026-07-28;
    basic/utilities/progress.mdx#progress-flow in earlier revisions).
    """
    progress = (
        attributed_progress(ctx)
        # only the columns read: a filter moves every column it is given
        .select("ordinal", "request_ordinal", "token", "message", "ambiguous")
        .filter(pl.col("request_ordinal").is_not_null() & ~pl.col("ambiguous"))
        .drop("ambiguous")
    )
    progress = progress.with_columns(_quick=_compact_progress(progress))
    text = pl.col("_quick")
    if progress["_quick"].has_nulls():  # texts not in the compact form (usually none)
        text = pl.coalesce(
            text,
            computed_where(
                progress,
                text.is_null(),
                _parsed=pl.col("message").str.json_path_match("$.params.progress"),
            )["_parsed"],
        )
    # each notification against the previous one of its request, in capture order:
    # sorted by request then ordinal, the previous row is that one when it has the
    # same request. The rows come in ordinal order (the memo's join keeps its sort), so
    # a stable sort by request alone orders them, on one integer key (on one thread:
    # rules run two at a time, and a sort split between the threads cost more)
    ranked = (
        progress.select("ordinal", "request_ordinal", "token", value_text=text)
        .with_columns(value=pl.col("value_text").cast(pl.Float64, strict=False))
        .filter(pl.col("value").is_not_null())
        .sort("request_ordinal", maintain_order=True, multithreaded=False)
    )
    # the rows that do not increase first, then the previous row's columns for those
    # few only, gathered by position
    prev = pl.int_range(pl.len(), dtype=pl.Int64) - 1
    bad = ranked.with_columns(_prev=prev).filter(
        (pl.col("request_ordinal") == pl.col("request_ordinal").shift(1))
        & (pl.col("value") <= pl.col("value").shift(1))
    )
    bad = bad.with_columns(
        ranked.select(prev=pl.col("value"), prev_text="value_text", prev_ordinal="ordinal").gather(
            bad["_prev"]
        )
    ).drop("_prev")
    return findings(
        bad,
        fmt(
            "progress {} for token {} does not increase on the previous notification ({}: {})",
            "value_text",
            "token",
            line_of("prev_ordinal"),
            "prev_text",
        ),
    )


@rule(
    code="PG005",
    name="progress-after-completion",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="session",
)
def progress_after_completion(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/progress` sent after the response to the request that carried
    its token.

    A notification in the same batch line as the response, or within 1 ms of
    it (when both have timestamps), is treated as a race and not reported. 2025-11-25
    task-augmented requests are skipped: their token lives until the task ends.

    ## Why is this bad?
    Once the response is out the token is dead: the receiver has dropped its handler,
    so late progress is noise at best, and at worst is attributed to a new request that
    reused the token.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p1",
     "progress": 100}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p1",
     "progress": 100}}
    {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
    ```

    ## Reference
    "Progress notifications MUST stop after completion" —
    basic/patterns/progress.mdx#implementation-notes (2026-07-28;
    basic/utilities/progress.mdx#implementation-notes in earlier revisions).
    """
    progress = attributed_progress(ctx)
    close = ((pl.col("ts") - pl.col("response_ts")) <= _RACE).fill_null(False)
    late = progress.filter(
        (pl.col("response_ordinal") < pl.col("ordinal"))
        & ~pl.col("ambiguous")
        & ~pl.col("task")
        & ~close
    )
    if late.is_empty():
        return findings(late, "")
    # the sources (and the response's line) of these few rows only: that of every
    # progress notification is a column of text filtered from every message's
    same_line = (pl.col("response_source") == pl.col("source")) & (
        pl.col("response_line") == pl.col("line")
    )
    late = ctx.call_lookup(
        ctx.lookup(late, "ordinal", source="source"),
        "request_ordinal",
        response_source="response_source",
        response_line="response_line",
    ).filter(~same_line)
    return findings(
        late,
        fmt(
            "progress notification for token {} after the response to its request ({})",
            "token",
            line_of("response_ordinal"),
        ),
    )
