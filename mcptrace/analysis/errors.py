"""Errors of calls: which kinds, how many, and the error rate.

A call *fails* when its response is a JSON-RPC error (outcome ``error``), a tool result
with ``isError: true`` (``tool_error``), or when no response came (``unanswered``, or
``cancelled``: a ``notifications/cancelled`` named it and it was never answered). The
error rate of a group is failed calls / calls. Orphan responses (no request) are not
calls and are ignored; ``input_required`` (a 2026-07-28 multi-round-trip step) is not a
failure.

JSON-RPC error codes are classified by :func:`mcptrace.protocol.errors.error_code_info`
as the revision of the call's session reads them: ``jsonrpc`` (the five JSON-RPC 2.0
codes), ``mcp`` (2026-07-28 codes), ``legacy-mcp`` (-32002, -32042), ``implementation``
(the server-error range), ``reserved-undefined``, ``jsonrpc-reserved`` and
``application`` (everything else). This module never reads files or prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from http import HTTPStatus

import polars as pl

from mcptrace.analysis._common import (
    FAILED_OUTCOMES,
    drop_constant,
    messages_of,
    ratio,
    requests_of,
    sort_keys,
    with_keys,
)
from mcptrace.protocol import is_known_revision
from mcptrace.protocol.errors import error_code_info
from mcptrace.trace import Trace

__all__ = ["error_breakdown", "error_rate"]

#: The JSON-RPC 2.0 specification's own names for its five codes (section 5.1); the
#: other codes are named as :func:`~mcptrace.protocol.errors.error_code_info` names them.
_JSONRPC_NAMES = {
    -32700: "Parse error",
    -32600: "Invalid Request",
    -32601: "Method not found",
    -32602: "Invalid params",
    -32603: "Internal error",
}

#: Categories of the failures that carry no error code, with their name.
_OUTCOME_CATEGORIES = {
    "tool_error": "Tool error (isError: true)",
    "unanswered": "No response",
    "cancelled": "Cancelled, no response",
}

_SCHEMA = {"category": pl.String, "code": pl.Int64, "name": pl.String}


def error_breakdown(
    calls: Trace | pl.DataFrame,
    by: str | Sequence[str] = ("method",),
    every: str | None = None,
    *,
    messages: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Failed calls by category and error code, per group and optionally per time bucket.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table.
    by
        Grouping dimensions, as for :func:`mcptrace.analysis.latency`.
    every
        A Polars duration ("1m"): adds a ``bucket`` column (request time truncated).
    messages
        The messages table, for HTTP statuses when ``calls`` is a bare calls table (a
        Trace or a messages table brings its own).

    Returns
    -------
    polars.DataFrame
        Columns ``[*by, bucket (when every is set), category, code, name, count,
        share_of_calls]``; one row per kind of failure seen in a group, sorted by the keys
        then by count, largest first. ``category`` is an error-code category (see the
        module docstring), ``malformed`` (an error whose code is missing or not an
        integer), ``tool_error``, ``unanswered``, ``cancelled``, or ``http``: the HTTP
        status (>= 400) of the exchange that carried the call, taken from the response's
        row, else the request's. An HTTP row counts calls *in addition to* their JSON-RPC
        row (a -32601 error sent with status 404 appears under both), so shares of one
        group can add up to more than its error rate. ``code`` is the JSON-RPC code or
        HTTP status (null for the code-less outcomes); ``name`` e.g. "Method not found",
        "HeaderMismatch", "Application error", "HTTP 404 Not Found". ``share_of_calls``
        is count / all calls of the group (and bucket).

    Examples
    --------
    >>> import polars as pl
    >>> calls = pl.DataFrame({
    ...     "method": ["tools/call", "tools/call", "tools/call", "ping"],
    ...     "outcome": ["ok", "error", "tool_error", "ok"],
    ...     "error_code": [None, -32601, None, None],
    ...     "revision": ["2025-11-25"] * 4,
    ... })
    >>> error_breakdown(calls).select("category", "name", "count").rows()
    [('jsonrpc', 'Method not found', 1), ('tool_error', 'Tool error (isError: true)', 1)]
    """
    frame = requests_of(calls)
    frame = _with_http_status(frame, messages if messages is not None else messages_of(calls))
    frame, keys = with_keys(frame, by, every)
    totals = frame.group_by(keys).agg(pl.len().cast(pl.Int64).alias("_calls"))
    outcome = pl.col("outcome").cast(pl.String)
    rows = [
        _classify(frame.filter(outcome == "error")),
        *(
            frame.filter(outcome == name).with_columns(
                category=pl.lit(name), code=pl.lit(None, pl.Int64), name=pl.lit(label)
            )
            for name, label in _OUTCOME_CATEGORIES.items()
        ),
        _http_rows(frame.filter(pl.col("_http_status") >= 400)),
    ]
    failures = pl.concat(
        [r.select(*keys, *(pl.col(c).cast(t) for c, t in _SCHEMA.items())) for r in rows]
    )
    out = (
        failures.group_by([*keys, *_SCHEMA])
        .agg(pl.len().cast(pl.Int64).alias("count"))
        .join(totals, on=keys, how="left", nulls_equal=True)
        .with_columns(share_of_calls=pl.col("count") / pl.col("_calls"))
        .drop("_calls")
    )
    real = [k for k in keys if k != "_all"]
    out = out.sort(
        [*real, "count", "category", "code"],
        descending=[*(False for _ in real), True, False, False],
        nulls_last=True,
    )
    return drop_constant(out)


def error_rate(
    calls: Trace | pl.DataFrame,
    by: str | Sequence[str] = (),
    every: str | None = None,
) -> pl.DataFrame:
    """Calls, failures by kind and the error rate, per group and optionally per time bucket.

    ``error_rate = (errors + tool_errors + unanswered + cancelled) / calls``: the share of
    calls that did not get a successful answer. ``errors`` are JSON-RPC error responses,
    ``tool_errors`` results with ``isError: true``, ``unanswered`` requests without a
    response and ``cancelled`` requests cancelled and never answered (the four are
    disjoint). A capture stopped while calls were in flight counts those as unanswered.

    Parameters
    ----------
    calls
        A :class:`~mcptrace.trace.Trace`, its calls table or its messages table.
    by
        Grouping dimensions, as for :func:`mcptrace.analysis.latency`; ``()`` (the default)
        for one row over all calls.
    every
        A Polars duration ("1m"): adds a ``bucket`` column (request time truncated).

    Returns
    -------
    polars.DataFrame
        Columns ``[*by, bucket (when every is set), calls, errors, tool_errors, unanswered,
        cancelled, error_rate]``, sorted by the keys; zero rows when there are no calls.

    Examples
    --------
    >>> import polars as pl
    >>> calls = pl.DataFrame({"outcome": ["ok", "ok", "error", "unanswered"]})
    >>> error_rate(calls).row(0)
    (4, 1, 0, 1, 0, 0.5)
    """
    frame, keys = with_keys(requests_of(calls), by, every)
    outcome = pl.col("outcome").cast(pl.String)

    def count(name: str, alias: str) -> pl.Expr:
        return (outcome == name).sum().cast(pl.Int64).alias(alias)

    out = frame.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("calls"),
        count("error", "errors"),
        count("tool_error", "tool_errors"),
        count("unanswered", "unanswered"),
        count("cancelled", "cancelled"),
        outcome.is_in(FAILED_OUTCOMES).sum().alias("_failed"),
    )
    out = out.with_columns(error_rate=ratio(pl.col("_failed"), pl.col("calls"))).drop("_failed")
    return drop_constant(sort_keys(out, keys))


def _with_http_status(frame: pl.DataFrame, messages: pl.DataFrame | None) -> pl.DataFrame:
    """Add ``_http_status``: the status on the response's row, else on the request's.

    Captures record the status of an HTTP exchange on the server's message when it has
    one; a request rejected without a JSON-RPC body (e.g. 404 for an expired session)
    only has it on the client's row.
    """
    if messages is None or "http_status" not in messages.columns:
        return frame.with_columns(_http_status=pl.lit(None, pl.Int64))
    status = messages.select("ordinal", "http_status").filter(pl.col("http_status").is_not_null())
    return (
        frame.join(
            status.rename({"ordinal": "response_ordinal", "http_status": "_resp"}),
            on="response_ordinal",
            how="left",
        )
        .join(
            status.rename({"ordinal": "request_ordinal", "http_status": "_req"}),
            on="request_ordinal",
            how="left",
        )
        .with_columns(_http_status=pl.coalesce("_resp", "_req"))
        .drop("_resp", "_req")
    )


def _classify(errors: pl.DataFrame) -> pl.DataFrame:
    """Add category, code and name to error calls (one Python call per distinct code)."""
    revision = pl.col("revision") if "revision" in errors.columns else pl.lit(None, pl.String)
    errors = errors.with_columns(code=pl.col("error_code"), _rev=revision.cast(pl.String))
    pairs = errors.select("code", "_rev").unique().drop_nulls("code")
    table = pl.DataFrame(
        [_code_row(code, rev) for code, rev in pairs.iter_rows()],
        schema={"code": pl.Int64, "_rev": pl.String, "category": pl.String, "name": pl.String},
        orient="row",
    )
    return (
        errors.join(table, on=["code", "_rev"], how="left", nulls_equal=True)
        .with_columns(
            category=pl.col("category").fill_null("malformed"),
            name=pl.col("name").fill_null("Missing or non-integer code"),
        )
        .drop("_rev")
    )


def _code_row(code: int, revision: str | None) -> tuple[int, str | None, str, str]:
    # an unknown or missing revision is read by the newest rules, as error_code_info does
    known = revision if revision is not None and is_known_revision(revision) else None
    info = error_code_info(code, known)
    return code, revision, info.category, _JSONRPC_NAMES.get(code, info.name)


def _http_rows(frame: pl.DataFrame) -> pl.DataFrame:
    statuses = frame["_http_status"].unique().drop_nulls().to_list()
    names = pl.DataFrame(
        {"code": statuses, "name": [_http_name(s) for s in statuses]},
        schema={"code": pl.Int64, "name": pl.String},
    )
    return frame.with_columns(code=pl.col("_http_status"), category=pl.lit("http")).join(
        names, on="code", how="left"
    )


def _http_name(status: int) -> str:
    try:
        return f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"
