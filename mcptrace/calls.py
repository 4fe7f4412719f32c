"""Pairing requests with responses: the calls table.

Pairing is per session and per direction of the request (in legacy revisions
both sides send requests, and the two id spaces are independent). A response
answers the latest earlier request of its session, with its id, sent the other
way, unless that request is answered already: then it answers the earliest earlier
request with its id still unanswered (ids reused while in flight), and only when there
is none is it a duplicate. This handles ids reused after completion (legacy clients
that restart their counters) without guessing. Where a capture cannot order the two
directions against each other (per-direction stdio files), the k-th response with an
id answers the k-th request with that id.

This module only reads the messages table; it never parses JSON.
"""

from __future__ import annotations

from collections.abc import Collection

import polars as pl

from mcptrace.schema import CALLS, MESSAGES, Outcome

_DIRECTION = MESSAGES.schema["direction"]
_KEY = ["session", "direction", "id"]


# The parts are made one chunk per column: the table is then assembled by position,
# and gathers over many chunks (as a loader may leave them) are slower.


def _located(prefix: str) -> dict[str, str]:
    """Where a message is, as ``{prefix}_source``, ``_line``, ``_ordinal``, ``_ts``."""
    return {f"{prefix}_{name}": name for name in ("source", "line", "ordinal", "ts")}


def _part(messages: pl.DataFrame, rows: pl.Expr, *columns: str, **named: str) -> pl.DataFrame:
    """The ``rows`` of ``messages`` (a test of each): its ``columns``, and the columns
    ``named`` as ``name=column``. Only those columns are filtered (the table has ~30),
    each on its own: a query shares the columns' pieces among the threads for its filter
    and its rechunk, which costs more CPU time in all (and the sessions' identity is being
    found on the other thread meanwhile)."""
    keep = messages.select(rows).to_series()
    picked = {c: c for c in columns} | named
    return pl.DataFrame([messages[c].filter(keep).rechunk().alias(n) for n, c in picked.items()])


def _requests(messages: pl.DataFrame) -> pl.DataFrame:
    return _part(
        messages,
        pl.col("kind") == "request",
        "session",
        "server",
        "direction",
        "id",
        "id_type",
        "method",
        "target",
        "progress_token",
        **_located("request"),
    )


def _responses(messages: pl.DataFrame) -> pl.DataFrame:
    return _part(
        messages,
        pl.col("kind").is_in(["response", "error"]),
        "session",
        "server",
        "direction",
        "id",
        "id_type",
        **_located("response"),
        response_kind="kind",
        error_code="error_code",
        error_message="error_message",
        result_type="result_type",
        tool_error="tool_error",
    ).with_columns(
        # the direction of the request it answers (compared as enums: no strings)
        pl.when(pl.col("direction") == "c2s")
        .then(pl.lit("s2c", _DIRECTION))
        .when(pl.col("direction") == "s2c")
        .then(pl.lit("c2s", _DIRECTION))
        .otherwise(pl.col("direction"))
        .alias("direction"),
    )


def _sorted(frame: pl.DataFrame, column: str) -> pl.DataFrame:
    """``frame`` sorted by ``column``; a loaded table's rows are in ordinal order
    already, so this is usually a cheap check, not a sort."""
    return frame if frame[column].is_sorted() else frame.sort(column)


def key_hash(*columns: str) -> pl.Expr:
    """One 64-bit number for the values of ``columns`` (a null is a value too): rows with
    equal keys have equal numbers, so a test of one integer finds the few rows a join or
    a duplicate test on the key itself can keep (keys with text cost more to compare).
    Different keys may share a number: it only narrows, the key decides."""
    hashed = pl.col(columns[0]).hash(1)
    for seed, column in enumerate(columns[1:], start=2):
        hashed = hashed ^ pl.col(column).hash(seed)
    return hashed


def _hashed_key() -> pl.Expr:
    """:func:`key_hash` of ``_KEY``; null where a part of the key is null (such a key
    names no request, as in a join)."""
    return pl.when(pl.all_horizontal(pl.col(_KEY).is_not_null())).then(key_hash(*_KEY))


def _latest_requests(req: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """For each row of ``rows`` (``_KEY`` and an ordinal ``at``), the latest earlier
    request with that key: its ``request_ordinal`` and its row ``_req`` in ``req``
    (the rows in no particular order).

    Keys are matched by a hash (one integer: joining on the key's columns, two of them
    text, costs more): most keys name one request, found by a join; the few that name
    more (ids reused) take an as-of join. Every match is then checked on the key itself;
    should two keys share a hash, the key's columns are joined instead."""
    # `_pos`: the request's row in `req` (which may be a part of the requests)
    right = req.select(
        "request_ordinal", "_req", _k=_hashed_key(), _pos=pl.int_range(pl.len(), dtype=pl.UInt32)
    )
    left = rows.with_columns(_k=_hashed_key())
    try:
        # usually no key names two requests: a join that checks so (failing otherwise)
        # costs no more than the join alone, where finding the repeated keys first
        # hashed every key once more
        found = left.join(right, on="_k", how="left", maintain_order="left", validate="m:1")
        repeated = None
    except pl.exceptions.ComputeError:  # some key names more than one request
        repeated = right["_k"].is_duplicated()
        found = left.join(right.filter(~repeated), on="_k", how="left", maintain_order="left")
    found = found.with_columns(
        pl.when(pl.col("request_ordinal") < pl.col("at")).then(
            pl.col("request_ordinal", "_req", "_pos")
        )
    )
    if repeated is not None and repeated.any():
        many = right.filter(repeated)
        in_many = pl.col("_k").is_in(many["_k"].implode()).fill_null(False)
        latest = _sorted(left.filter(in_many), "at").join_asof(
            _sorted(many, "request_ordinal"),
            left_on="at",
            right_on="request_ordinal",
            by="_k",
            strategy="backward",
            check_sortedness=False,
        )
        found = pl.concat([found.filter(~in_many), latest])
    matched = found.filter(pl.col("_pos").is_not_null())
    if not matched.select(_KEY).equals(req.select(_KEY).gather(matched["_pos"])):
        return _latest_requests_by_text(req, rows)
    return found.drop("_k", "_pos")


def _latest_requests_by_text(req: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """:func:`_latest_requests` by an as-of join on the key's columns themselves."""
    right = _sorted(req.select(*_KEY, "request_ordinal", "_req"), "request_ordinal")
    return _sorted(rows, "at").join_asof(
        right,
        left_on="at",
        right_on="request_ordinal",
        by=_KEY,
        strategy="backward",
        check_sortedness=False,
    )


def _keyed_responses(resp: pl.DataFrame) -> pl.DataFrame:
    """Responses with an id (``_row``, ``_KEY``, ``at``): those without match nothing."""
    return resp.filter(pl.col("id").is_not_null()).select("_row", *_KEY, at="response_ordinal")


def _match_by_rank(req: pl.DataFrame, resp: pl.DataFrame) -> pl.DataFrame:
    """For captures without a common order: k-th response to the k-th request of a key."""
    rank = pl.int_range(pl.len()).over(_KEY)
    left = resp.select("_row", *_KEY, "response_ordinal").sort("response_ordinal")
    left = left.with_columns(_k=rank)
    right = (
        req.sort("request_ordinal")
        .with_columns(_k=rank)
        .select(*_KEY, "_k", "request_ordinal", "_req")
    )
    return left.join(right, on=[*_KEY, "_k"], how="left", nulls_equal=False).select(
        "_row", "request_ordinal", "_req"
    )


def _cancel_rows(messages: pl.DataFrame) -> pl.DataFrame:
    """notifications/cancelled naming a request: ``_row``, ``_KEY`` (the id it names),
    ``at`` (its ordinal) and ``cancel_line``."""
    # the few rows with a cancel_id first (a test of validity alone): the method's text
    # is then compared on those only; made one chunk (as the parts are), for the pairing
    # hashes their keys with the responses', and hashes text in many chunks slower
    return (
        messages.select(
            "session", "direction", "method", id="cancel_id", at="ordinal", cancel_line="line"
        )
        .filter(pl.col("id").is_not_null())
        .filter(pl.col("method") == "notifications/cancelled")
        .drop("method")
        .rechunk()
        .with_row_index("_row")
    )


def _first_cancel(matched: pl.DataFrame) -> pl.DataFrame:
    """Per cancelled request (``_req``): the line of the first cancel that named it."""
    return (
        matched.filter(pl.col("request_ordinal").is_not_null())
        .group_by("_req")
        .agg(pl.col("cancel_line").sort_by("at").first())
    )


def _late_answers(
    req: pl.DataFrame, resp: pl.DataFrame, answer: pl.Series, unordered: list[str]
) -> pl.DataFrame:
    """Second responses to a request that answer an earlier request with the same id.

    When a sender reuses an id while its first request is still in flight (a violation
    the linter reports), both responses find the newer request first. A response whose
    request is already answered therefore answers the earliest earlier request with its
    id that is still unanswered; only when there is none is it a duplicate. Each such
    response (``_row``) gets its request (``_req``, ``request_ordinal``).

    Greedy first-in-first-out matching per key, without a loop: with the i-th second
    response of a key preceded by R_i unanswered requests of that key, the number
    matched so far is M_i = min(R_i, M_(i-1) + 1) = i + min(0, min over j <= i of
    (R_j - j)), and the i-th response takes unanswered request number M_i when
    M_i > M_(i-1).
    """
    second = resp.filter(pl.col("request_ordinal").is_not_null() & ~answer)
    if unordered:  # without a common order, "earlier" means nothing
        second = second.filter(~pl.col("session").is_in(unordered))
    empty = pl.DataFrame(schema={"_row": pl.UInt32, "_req": pl.UInt32, "request_ordinal": pl.Int64})
    if second.is_empty():
        return empty
    answered = resp.filter(answer)["_req"]
    keys = second.select(_KEY).unique()
    waiting = (
        req.filter(~pl.col("_req").is_in(answered.implode()))
        .join(keys, on=_KEY, how="semi", nulls_equal=False)
        .select(*_KEY, "request_ordinal", "_req")
        .sort("request_ordinal")
        .with_columns(_k=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(_KEY))
    )
    if waiting.is_empty():
        return empty
    rows = (
        second.select("_row", *_KEY, at="response_ordinal")
        .sort("at")
        .join_asof(
            waiting.select(*_KEY, "request_ordinal", _before="_k"),
            left_on="at",
            right_on="request_ordinal",
            by=_KEY,
            strategy="backward",
            check_sortedness=False,
        )
        .with_columns(
            _i=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(_KEY),
            _before=pl.col("_before").fill_null(0),
        )
        .with_columns(
            _m=pl.col("_i")
            + pl.min_horizontal(pl.lit(0), (pl.col("_before") - pl.col("_i")).cum_min().over(_KEY))
        )
        .filter(pl.col("_m") > pl.col("_m").shift(1, fill_value=0).over(_KEY))
    )
    return rows.join(
        waiting.select(*_KEY, "_k", "_req", "request_ordinal"),
        left_on=[*_KEY, "_m"],
        right_on=[*_KEY, "_k"],
    ).select("_row", "_req", "request_ordinal")


def _scattered(size: int, at: pl.Series, values: pl.Series) -> pl.Series:
    """A column of ``size`` nulls with ``values`` at positions ``at``."""
    return pl.repeat(None, size, dtype=values.dtype, eager=True).scatter(at, values)


#: the first revision in which closing a request's SSE stream cancels the request
STREAM_CLOSE_CANCELS = "2026-07-28"


def broken_off(messages: pl.DataFrame) -> pl.Series:
    """Ordinals of the HAR requests whose exchange got no HTTP response at all, or broke
    off after its status came (the HAR loader's transport row says so): what a browser
    records when the client gave up on a request, or the network failed."""
    from mcptrace.loaders.har import EXCHANGE_FAILED

    har = messages.filter(pl.col("format") == "har")
    if har.is_empty():
        return pl.Series("ordinal", [], dtype=pl.Int64)
    failed = (
        har.filter(
            (pl.col("kind") == "transport") & pl.col("message").str.starts_with(EXCHANGE_FAILED)
        )
        .select("source", "exchange")
        .unique()
    )
    requests = har.filter((pl.col("kind") == "request") & (pl.col("direction") == "c2s"))
    return pl.concat(
        [
            requests.filter(pl.col("http_method").is_not_null() & pl.col("http_status").is_null())[
                "ordinal"
            ],
            requests.join(failed, on=["source", "exchange"], how="semi")["ordinal"],
        ]
    )


def _cancelled_by_closing(calls: pl.DataFrame, messages: pl.DataFrame) -> pl.DataFrame:
    """``calls`` with the 2026-07-28 requests whose POST stream a HAR shows closed before
    their response marked cancelled.

    2026-07-28 cancels a request over Streamable HTTP by closing the SSE stream of its
    ``POST`` ("Closing the SSE response stream is the cancellation signal"): no
    notification is sent. A HAR holds each exchange whole, as one entry whose rows share
    its ``exchange``: a request whose entry carries the server's messages (an event
    stream) but not its response had its stream closed before the answer, by the client or by the
    network, which the HAR cannot tell apart; so had a request whose exchange got no HTTP
    response at all, or broke off after its status came (a browser's ``ERR_ABORTED``:
    "The server MUST treat a client disconnect as cancellation of that request").
    Earlier revisions say a disconnection is no cancellation, so there such a request
    stays unanswered."""
    # only a HAR shows a stream closed: most captures have no HAR row, and then nothing
    # below can mark a call (a test of one column, not filters of the whole table)
    if not (messages["format"] == "har").any():
        return calls
    waiting = (pl.col("outcome") == "unanswered") & (
        pl.col("revision").fill_null("") >= STREAM_CLOSE_CANCELS
    )
    if not calls.select(waiting.any()).item():
        return calls
    # the exchanges (HAR entries) whose response stream carried a server message
    streamed = (
        messages.filter(
            (pl.col("format") == "har")
            & (pl.col("direction") == "s2c")
            & pl.col("kind").is_in(["request", "notification"])
            & pl.col("exchange").is_not_null()
        )
        .select("source", "exchange")
        .unique()
    )
    requests = messages.filter(
        (pl.col("format") == "har") & (pl.col("kind") == "request") & (pl.col("direction") == "c2s")
    ).join(streamed, on=["source", "exchange"], how="semi")
    dropped = broken_off(messages)
    closed = calls.select(
        pl.col("request_ordinal").is_in(requests["ordinal"].implode()).fill_null(False)
        | pl.col("request_ordinal").is_in(dropped.implode()).fill_null(False)
    ).to_series()
    closed = calls.select(waiting & closed).to_series()
    if not closed.any():
        return calls
    return calls.with_columns(
        outcome=pl.when(closed).then(pl.lit("cancelled")).otherwise("outcome").cast(Outcome),
        cancelled=pl.col("cancelled") | closed,
    )


def build_calls(
    messages: pl.DataFrame,
    identity: pl.DataFrame | None = None,
    *,
    unordered_sessions: Collection[str] = (),
) -> pl.DataFrame:
    """Build the calls table from a messages table.

    ``identity`` (session, client, revision) adds those columns; ``unordered_sessions``
    names sessions whose directions cannot be ordered against each other.
    """
    calls = pair_calls(messages, unordered_sessions=unordered_sessions)
    return calls if identity is None else identify_calls(calls, messages, identity)


def _one_response_each(req: pl.DataFrame, marked: pl.Series, matched: int) -> bool:
    """Whether no two responses matched the same request: the ``matched`` responses'
    rows scattered to the rows of ``req`` they matched (``marked``) fill as many rows as
    there are responses, and the ordinals of ``req`` increase (as in every loaded trace),
    so no two have the same ``request_ordinal`` either. Counted by marking each matched
    row of ``req``, not by hashing the ordinals."""
    if req.height - marked.null_count() != matched:
        return False
    ordinals = req["request_ordinal"]
    return ordinals.null_count() == 0 and bool((ordinals.diff().drop_nulls() > 0).all())


def pair_calls(messages: pl.DataFrame, *, unordered_sessions: Collection[str] = ()) -> pl.DataFrame:
    """The calls table of a messages table without the sessions' identity: ``client`` and
    ``revision`` are null (see :func:`identify_calls`). The pairing needs no identity, so
    the two can be found side by side."""
    MESSAGES.validate(messages)
    # `_req` and `_row`: row numbers of the requests and the responses
    req = _requests(messages).with_row_index("_req")
    resp = _responses(messages).with_row_index("_row")
    unordered = list(unordered_sessions)
    in_unordered = pl.col("session").is_in(unordered)
    cancels = _cancel_rows(messages)
    # The table is assembled by position, not by joining wide frames: each response
    # gets the ordinal of the request it matches, the first response of a request
    # answers it (its columns go to the request's row), and the others are orphans
    # (duplicates when they matched a request). A cancel matches the latest earlier
    # request of its sender with the id it names, in every session.
    if unordered:
        pairs = pl.concat(
            [
                _latest_requests(
                    req.filter(~in_unordered), _keyed_responses(resp.filter(~in_unordered))
                ).select("_row", "request_ordinal", "_req"),
                _match_by_rank(req.filter(in_unordered), resp.filter(in_unordered)),
            ]
        )
        cancelled = _latest_requests(req, cancels)
    else:
        # responses and cancels look up the same requests: one pass for both
        both = _latest_requests(
            req,
            pl.concat(
                [
                    _keyed_responses(resp).with_columns(_cancel=pl.lit(False)),
                    cancels.drop("cancel_line").with_columns(_cancel=pl.lit(True)),
                ]
            ),
        )
        pairs = both.filter(~pl.col("_cancel")).select("_row", "request_ordinal", "_req")
        cancelled = cancels.join(
            both.filter(pl.col("_cancel")).select("_row", "request_ordinal", "_req"), on="_row"
        )
    if pairs.height == resp.height and pairs["_row"].is_sorted():
        # the usual case: every response has an id, and the pairs are in response order
        # (each response is in them once, so its row is its position): no scatter
        resp = resp.with_columns(pairs["request_ordinal"].rechunk(), pairs["_req"].rechunk())
    else:
        resp = resp.with_columns(
            request_ordinal=_scattered(resp.height, pairs["_row"], pairs["request_ordinal"]),
            _req=_scattered(resp.height, pairs["_row"], pairs["_req"]),
        )
    # each matched response's row, at the row of its request: where each answer's
    # columns go when no two responses matched one request (then each answers its own)
    matched = resp.select("_req", "_row").filter(pl.col("_req").is_not_null())
    answer_row = _scattered(req.height, matched["_req"], matched["_row"])
    one_each = _one_response_each(req, answer_row, matched.height)
    # the first response to a request answers it; later ones are duplicates
    if one_each:
        first = pl.lit(True)  # the usual case: no hash of the matched ordinals
    elif resp["response_ordinal"].is_sorted():
        first = pl.col("request_ordinal").is_first_distinct()
    else:
        first = pl.col("response_ordinal") == pl.col("response_ordinal").min().over(
            "request_ordinal"
        )
    answer = resp.select(pl.col("request_ordinal").is_not_null() & first).to_series()
    late = _late_answers(req, resp, answer, unordered)
    if not late.is_empty():
        resp = resp.with_columns(
            resp["request_ordinal"].scatter(late["_row"], late["request_ordinal"]),
            resp["_req"].scatter(late["_row"], late["_req"]),
        )
        answer = answer.scatter(late["_row"], True)
    if not one_each:
        # each answer's columns go to the row of the request it answers
        answers = resp.select("_req", "_row").filter(answer)
        answer_row = _scattered(req.height, answers["_req"], answers["_row"])
    response_columns = (
        "response_source",
        "response_line",
        "response_ordinal",
        "response_ts",
        "response_kind",
        "error_code",
        "error_message",
        "result_type",
        "tool_error",
    )
    # A column most responses leave null (an error's code and message, a tool's
    # isError) is scattered from the few answers that have a value: a gather reads
    # every row, and costs about twice as much on a column with nulls.
    sparse = [c for c in response_columns if 2 * resp[c].null_count() > resp.height]
    # one query: the other columns are gathered side by side
    gathered = resp.select(
        pl.col(c for c in response_columns if c not in sparse).gather(answer_row)
    )
    answered: dict[str, pl.Series] = {}
    for column in sparse:
        given = resp.select("_req", column).filter(answer & resp[column].is_not_null())
        answered[column] = _scattered(req.height, given["_req"], given[column]).alias(column)
    first_cancels = _first_cancel(cancelled)
    cancel_line = _scattered(req.height, first_cancels["_req"], first_cancels["cancel_line"])
    calls = req.with_columns(
        *(answered[c] if c in sparse else gathered[c] for c in response_columns),
        cancel_line=cancel_line,
        cancelled=cancel_line.is_not_null(),
        duplicate=pl.lit(None, pl.Boolean),
    )
    orphans = (
        resp.filter(~answer)
        .drop("_row", "_req")
        .with_columns(
            duplicate=pl.col("request_ordinal").is_not_null(),
            request_ordinal=pl.lit(None, pl.Int64),
        )
    )
    if not orphans.is_empty():
        calls = pl.concat([calls, orphans], how="diagonal_relaxed")
    # built as the Enum it is stored as: no column of strings to cast afterwards
    outcome = (
        pl.when(pl.col("request_ordinal").is_null())
        .then(pl.lit("orphan", Outcome))
        .when(pl.col("response_ordinal").is_null() & pl.col("cancelled"))
        .then(pl.lit("cancelled", Outcome))
        .when(pl.col("response_ordinal").is_null())
        .then(pl.lit("unanswered", Outcome))
        .when(pl.col("response_kind") == "error")
        .then(pl.lit("error", Outcome))
        .when(pl.col("tool_error").fill_null(False))
        .then(pl.lit("tool_error", Outcome))
        .when(pl.col("result_type") == "input_required")
        .then(pl.lit("input_required", Outcome))
        .otherwise(pl.lit("ok", Outcome))
    )
    # timestamps have microsecond resolution: round away binary float noise below it
    latency = (
        (pl.col("response_ts") - pl.col("request_ts")).dt.total_microseconds() / 1000.0
    ).round(3)
    # A response stamped before its request is no measurement: a capture that stamps
    # messages when their stream ended (a HAR's SSE events) stamps a server request
    # after the client's answer to it. Nor is the time of a message whose place the
    # capture does not record (see messages.unordered).
    latency = pl.when(latency >= 0).then(latency)
    placed = messages["ordinal"].filter(messages["unordered"])
    if not placed.is_empty():
        placed_side = pl.col("request_ordinal").is_in(placed.implode()) | pl.col(
            "response_ordinal"
        ).is_in(placed.implode())
        latency = pl.when(placed_side.fill_null(False)).then(None).otherwise(latency)
    calls = calls.with_columns(
        outcome=outcome,
        latency_ms=pl.when(in_unordered).then(None).otherwise(latency) if unordered else latency,
        cancelled=pl.col("cancelled").fill_null(False),
    )
    order = pl.coalesce("request_ordinal", "response_ordinal")
    if not orphans.is_empty() or not calls.select(order.is_sorted()).item():
        calls = calls.sort(order)
    return CALLS.conform(calls)


def identify_calls(
    calls: pl.DataFrame, messages: pl.DataFrame, identity: pl.DataFrame
) -> pl.DataFrame:
    """``calls`` (from :func:`pair_calls` of ``messages``) with the ``client`` and
    ``revision`` of their sessions in ``identity`` (session, client, revision), and the
    requests a HAR shows cancelled by closing their stream (which depends on the revision)."""
    if identity.is_empty():
        return calls
    # join the session column alone: the other columns stay as they are
    known = calls.select("session").join(
        identity.select("session", "client", "revision"),
        on="session",
        how="left",
        maintain_order="left",
    )
    calls = calls.with_columns(known["client"], known["revision"])
    return CALLS.conform(_cancelled_by_closing(calls, messages))
