"""LG: log message notifications (`notifications/message`) and log levels.

Legacy revisions set one minimum level per session with `logging/setLevel`; it is
taken to be in force from the server's successful response onwards (that response
and the log messages travel the same way, so their order is reliable). 2026-07-28
scopes logging to requests: the server may log only while a client request that
asked for it (`_meta` `io.modelcontextprotocol/logLevel`) is in flight, at or above
that level. A request is in flight from its line to its response's line; that spans
both directions, so sessions without a common order of the two directions
(per-direction stdio files) are skipped by the 2026 checks. `subscriptions/listen`
requests do not count: log messages must not travel on a listen stream.

Race tolerance (LG003, legacy): a log message in the same batch line as the
setLevel response, or within 1 ms of it, is not reported.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from mcptrace._format import fmt
from mcptrace.linter.context import LintContext, computed_where
from mcptrace.linter.rule import ALL_REVISIONS, MODERN, findings, line_of, rule

_MESSAGE = "notifications/message"
_SET_LEVEL = "logging/setLevel"
_LISTEN = "subscriptions/listen"
#: RFC 5424 severities, least severe first (schema `LoggingLevel`)
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_RANK = {level: i for i, level in enumerate(LEVELS)}
_LOG_LEVEL_PATH = "$.params._meta['io.modelcontextprotocol/logLevel']"
_SUBSCRIPTION_PATH = "$.params._meta['io.modelcontextprotocol/subscriptionId']"
_RACE = timedelta(milliseconds=1)

#: A JSON string without `\u` escapes (one may spell a key or a lone surrogate: such
#: texts are left to the parse)
_PLAIN_STRING = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt])*"'
#: A log message in the compact form most captures hold is this text, the level (a
#: string without escapes: its text is its value) and then only optional `logger` and
#: `data` strings. A text that matches :data:`_COMPACT_LOG` whole is a JSON object with
#: no other member, so its level is its text up to the next quote: no JSON parse needed.
_COMPACT_HEAD = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"'
_COMPACT_LOG = (
    r'^\{"jsonrpc":"2\.0","method":"notifications/message","params":\{"level":"[^"\\\x00-\x1f]*"'
    r'(?:,"logger":' + _PLAIN_STRING + r')?(?:,"data":' + _PLAIN_STRING + r")?\}\}$"
)


def _rank(text: pl.Expr) -> pl.Expr:
    return text.replace_strict(_RANK, default=None, return_dtype=pl.Int8)


def _levelled(ctx: LintContext) -> pl.DataFrame:
    """Readable notifications/message and logging/setLevel rows (requests and
    notifications) with ``level``, their `params.level`, parsed once for the LG rules."""
    return ctx.memo("logging.levelled", _build_levelled)


def _build_levelled(ctx: LintContext) -> pl.DataFrame:
    # the few rows are found by method in the requests and notifications parts (not in
    # every message, which a filter of all the columns read below would move), then
    # looked up; sorted by ordinal, they are in the capture's order again
    keys = ("ordinal", "method", "parse_error")
    found = pl.concat(
        ctx.part(part, *keys).filter(
            pl.col("method").is_in([_MESSAGE, _SET_LEVEL]) & pl.col("parse_error").is_null()
        )
        for part in ("requests", "notifications")
    ).sort("ordinal")
    return (
        ctx.lookup(
            found,
            "ordinal",
            session="session",
            source="source",
            line="line",
            ts="ts",
            kind="kind",
            direction="direction",
            modern="modern",
            message="message",
        )
        .select(
            "ordinal",
            "session",
            "source",
            "line",
            "ts",
            "kind",
            "method",
            "direction",
            "modern",
            "parse_error",
            "message",
        )
        .pipe(_with_level)
    )


def _with_level(rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` plus ``level``, the `params.level` of each ``message``. A compact log
    message (see :data:`_COMPACT_LOG`) is cut, which costs about half its parse (at 10^6
    messages, ~4 ms instead of ~8 ms); the others are parsed."""
    text = pl.col("message")
    compact = rows.select(text.str.contains(_COMPACT_LOG).fill_null(False)).to_series()
    level = rows.select(
        pl.when(compact).then(
            text.str.slice(len(_COMPACT_HEAD)).str.split_exact('"', 1).struct.field("field_0")
        )
    ).to_series()
    rest = ~compact
    if rest.any():
        parsed = rows.filter(rest).select(text.str.json_path_match("$.params.level")).to_series()
        level = level.scatter(rest.arg_true(), parsed)
    return rows.with_columns(level.alias("level"))


def _log_messages(ctx: LintContext) -> pl.DataFrame:
    """Readable server log notifications with ``level`` (text) and ``rank``."""
    return (
        _levelled(ctx)
        .filter(
            (pl.col("kind") == "notification")
            & (pl.col("method") == _MESSAGE)
            & (pl.col("direction") == "s2c")
        )
        .with_columns(rank=_rank(pl.col("level")))
    )


def _modern_log_state(ctx: LintContext) -> pl.DataFrame:
    """2026-07-28 log notifications with what was in flight when each was sent.

    Adds ``subscription`` (the notification names a listen stream), ``open`` (client
    requests in flight, listen excluded), ``asked`` (those with a logLevel) and
    ``min_asked`` (rank of the lowest level asked for, null if none).
    """
    return ctx.memo("logging.modern_state", _build_modern_log_state)


def _build_modern_log_state(ctx: LintContext) -> pl.DataFrame:
    unordered = ctx.unordered_sessions.implode()
    logs = (
        _log_messages(ctx)
        .filter(pl.col("modern") & ~pl.col("session").is_in(unordered))
        .with_columns(
            subscription=pl.col("message").str.json_path_match(_SUBSCRIPTION_PATH).is_not_null()
        )
    )
    if logs.is_empty():
        return logs.with_columns(
            open=pl.lit(0, pl.Int64), asked=pl.lit(0, pl.Int64), min_asked=pl.lit(None, pl.Int8)
        )
    requests = ctx.part(
        "requests", "session", "ordinal", "modern", "direction", "method", "message"
    ).filter(
        pl.col("modern")
        & (pl.col("direction") == "c2s")
        & (pl.col("method") != _LISTEN)
        & pl.col("session").is_in(logs["session"].unique().to_list())
    )
    # the logLevel key can only be there if the text spells it, or uses an escape
    spelled = pl.col("message").str.contains(r'\\|"io\.modelcontextprotocol/logLevel"')
    requests = computed_where(
        requests, spelled, _want=pl.col("message").str.json_path_match(_LOG_LEVEL_PATH)
    ).select("session", request_ordinal="ordinal", want=_rank(pl.col("_want")))
    requests = ctx.call_lookup(requests, "request_ordinal", response_ordinal="response_ordinal")
    # a sweep over request/response events: +1 when a request starts, -1 when answered;
    # le<k> counts requests that asked for level k or lower
    deltas = [
        pl.lit(1, pl.Int64).alias("open"),
        pl.col("want").is_not_null().cast(pl.Int64).alias("asked"),
        *[
            (pl.col("want") <= k).fill_null(False).cast(pl.Int64).alias(f"le{k}")
            for k in _RANK.values()
        ],
    ]
    counters = ["open", "asked", *[f"le{k}" for k in _RANK.values()]]
    starts = requests.select("session", pl.col("request_ordinal").alias("_at"), *deltas)
    ends = requests.filter(pl.col("response_ordinal").is_not_null()).select(
        "session",
        pl.col("response_ordinal").alias("_at"),
        *[(-d).alias(d.meta.output_name()) for d in deltas],
    )
    state = (
        pl.concat([starts, ends])
        .sort("_at")
        .with_columns(pl.col(c).cum_sum().over("session") for c in counters)
    )
    lowest = pl.coalesce(
        [pl.when(pl.col(f"le{k}") > 0).then(pl.lit(k, pl.Int8)) for k in _RANK.values()]
    )
    return (
        logs.sort("ordinal")
        .join_asof(
            state,
            left_on="ordinal",
            right_on="_at",
            by="session",
            strategy="backward",
            check_sortedness=False,
        )
        .with_columns(pl.col(c).fill_null(0) for c in counters)
        .with_columns(min_asked=lowest)
    )


@rule(
    code="LG001",
    name="log-message-not-requested",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def log_message_not_requested(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a 2026-07-28 `notifications/message` sent while client requests are in flight
    but none of them carries `io.modelcontextprotocol/logLevel` in its `_meta`.

    ## Why is this bad?
    In 2026-07-28 logging is opt-in per request: a client that did not ask for logs on
    a request has no place to show them and may treat the stream as polluted. Log
    messages sent with no request in flight at all are LG002's finding.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build",
     "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}}}}
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info",
     "data": "compiling"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build",
     "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
     "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "info"}}}
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info",
     "data": "compiling"}}
    ```

    ## Reference
    "The server MUST NOT emit `notifications/message` for a request that does not include
    this field." — server/utilities/logging.mdx#per-request-log-level (2026-07-28).
    """
    state = _modern_log_state(ctx)
    bad = state.filter((pl.col("open") > 0) & (pl.col("asked") == 0) & ~pl.col("subscription"))
    return findings(
        bad,
        fmt(
            "log message sent while none of the {} request(s) in flight asked for logs "
            "(no io.modelcontextprotocol/logLevel in _meta)",
            "open",
        ),
    )


@rule(
    code="LG002",
    name="log-message-outside-request",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def log_message_outside_request(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a 2026-07-28 `notifications/message` sent outside the response stream of a request.

    That is one sent while no client request (other than `subscriptions/listen`) is in
    flight, or one carrying a `subscriptionId` in its `_meta`, i.e. delivered on a listen
    stream.

    ## Why is this bad?
    2026-07-28 log messages belong to the response stream of the request that asked for
    them and must come before its final response. Outside any request (after the
    response, or on a listen stream) the client cannot attribute them; on Streamable
    HTTP there is no stream that may carry them at all.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}}
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info",
     "data": "done"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info",
     "data": "done"}}
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}}
    ```

    ## Reference
    "`notifications/message` is request-scoped: the server MUST NOT deliver it on a
    `subscriptions/listen` stream or on any stream other than the one carrying the
    response to the request that set the log level." —
    server/utilities/logging.mdx#per-request-log-level (2026-07-28).
    """
    state = _modern_log_state(ctx)
    bad = state.filter((pl.col("open") == 0) | pl.col("subscription"))
    return findings(
        bad,
        pl.when(pl.col("subscription"))
        .then(
            pl.lit(
                "log message carries a subscriptionId: it was sent on a subscriptions/listen stream"
            )
        )
        .otherwise(pl.lit("log message sent while no client request was in flight")),
    )


@rule(
    code="LG003",
    name="log-message-below-requested-level",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="session",
)
def log_message_below_requested_level(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/message` whose `level` is below the minimum the client asked for.

    The minimum is the level of the last successful `logging/setLevel` (legacy revisions),
    or, in 2026-07-28, the lowest `io.modelcontextprotocol/logLevel` of the requests in
    flight. A message whose place the capture does not record (an event of a HAR's
    server stream, placed by mcptrace) is not judged.

    ## Why is this bad?
    The client sets a level to cut noise; messages below it are what it asked not to
    get. They cost bandwidth and, in hosts that show server logs, bury the messages
    that matter. The spec defines the level as a minimum and allows messages "at or
    above" it; this rule reports what falls below.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "error"}}
    {"jsonrpc": "2.0", "id": 3, "result": {}}
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "debug",
     "data": "cache miss"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "error"}}
    {"jsonrpc": "2.0", "id": 3, "result": {}}
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "error",
     "data": "index corrupt"}}
    ```

    ## Reference
    "To configure the minimum log level, clients MAY send a `logging/setLevel` request" —
    server/utilities/logging.mdx#setting-log-level (2024-11-05 to 2025-11-25);
    "the server MAY send `notifications/message` notifications at or above the requested
    level" — server/utilities/logging.mdx#per-request-log-level (2026-07-28).
    """
    logs = _log_messages(ctx).filter(pl.col("rank").is_not_null() & ctx.in_place())
    if logs.is_empty():
        return findings(logs, "")
    # legacy: the last setLevel answered successfully before the message
    levels = ctx.part("requests", "ordinal", "method", "message").filter(
        pl.col("method") == _SET_LEVEL
    )
    levels = levels.select(
        request_ordinal="ordinal",
        set_level=pl.col("message").str.json_path_match("$.params.level"),
    )
    applied = (
        ctx.calls.select(
            "method",
            "outcome",
            "session",
            "request_ordinal",
            "response_ordinal",
            "response_ts",
            "response_source",
            "response_line",
        )
        .filter((pl.col("method") == _SET_LEVEL) & (pl.col("outcome") == "ok"))
        .select(
            "session",
            "request_ordinal",
            "response_ordinal",
            "response_ts",
            "response_source",
            "response_line",
        )
        .join(levels, on="request_ordinal", how="inner")
        .with_columns(set_rank=_rank(pl.col("set_level")))
        .filter(pl.col("set_rank").is_not_null())
        .sort("response_ordinal")
    )
    legacy = (
        logs.filter(~pl.col("modern"))
        .sort("ordinal")
        .join_asof(
            applied,
            left_on="ordinal",
            right_on="response_ordinal",
            by="session",
            strategy="backward",
            check_sortedness=False,
        )
    )
    same_line = (pl.col("response_source") == pl.col("source")) & (
        pl.col("response_line") == pl.col("line")
    )
    close = ((pl.col("ts") - pl.col("response_ts")) <= _RACE).fill_null(False)
    legacy_bad = legacy.filter((pl.col("rank") < pl.col("set_rank")) & ~same_line & ~close).select(
        "ordinal",
        message=fmt(
            'log message at level "{}" is below the minimum level "{}" set by logging/setLevel'
            " at {}",
            "level",
            "set_level",
            line_of("request_ordinal"),
        ),
    )
    # 2026-07-28: below every level asked for by the requests in flight
    modern = _modern_log_state(ctx).filter(
        pl.col("rank").is_not_null()
        & (pl.col("asked") > 0)
        & (pl.col("rank") < pl.col("min_asked"))
    )
    modern_bad = modern.select(
        "ordinal",
        message=fmt(
            'log message at level "{}" is below the lowest level "{}" the requests in flight'
            " asked for",
            "level",
            pl.col("min_asked").replace_strict(dict(enumerate(LEVELS)), return_dtype=pl.String),
        ),
    )
    return findings(pl.concat([legacy_bad, modern_bad]), pl.col("message"))


@rule(
    code="LG004",
    name="invalid-log-level",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def invalid_log_level(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `notifications/message` or `logging/setLevel` whose `level` is not a log level.

    The levels are the eight syslog names `debug`, `info`, `notice`, `warning`, `error`,
    `critical`, `alert`, `emergency` (lower case, as strings).

    ## Why is this bad?
    Levels are an enumeration, not free text: a receiver filters and colours messages by
    comparing levels, and `"WARN"`, `"verbose"` or `3` compare to nothing. A server
    should reject a `logging/setLevel` with such a level (`-32602`); a log message with
    one is shown at the wrong severity or dropped.

    ## Example
    ```json
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "WARN",
     "data": "disk almost full"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning",
     "data": "disk almost full"}}
    ```

    ## Reference
    "The protocol follows the standard syslog severity levels specified in RFC 5424" —
    server/utilities/logging.mdx#log-levels (all revisions). Schema: `LoggingLevel`
    (an enum of the eight names).
    """
    rows = _levelled(ctx)
    bad = rows.filter(pl.col("level").is_not_null() & ~pl.col("level").is_in(LEVELS))
    return findings(
        bad,
        fmt("{} has level {}, which is not a log level", "method", pl.col("level")),
    )
