"""RS: results -- 2026 ``resultType``, multi round-trip requests (MRTR), caching hints,
the size of completion results, tool names in ``tools/list`` results and pagination
cursors.
"""

from __future__ import annotations

from collections import Counter

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.calls import key_hash
from mcptrace.linter.context import LintContext, computed_where, settle
from mcptrace.linter.jsontext import content, json_tokens, path, unquote
from mcptrace.linter.rule import ALL_REVISIONS, MODERN, findings, line_of, rule, since
from mcptrace.linter.rules.lifecycle import ordered
from mcptrace.linter.rules.tools import tool_lists
from mcptrace.message_text import PLAIN_ID, json_paths
from mcptrace.protocol import (
    CACHEABLE_METHODS,
    CLIENT_CAPABILITIES_KEY,
    METHODS,
    MRTR_METHODS,
    RESULT_TYPE_COMPLETE,
    RESULT_TYPES,
)

#: Methods an ``inputRequests`` value may carry (2026 ``InputRequest``).
_INPUT_METHODS = sorted(m for m, spec in METHODS["2026-07-28"].items() if spec.embedded)
_MRTR = sorted(MRTR_METHODS)


def _modern_results(ctx: LintContext) -> pl.DataFrame:
    """Success responses of 2026 sessions sent by the server (or of unknown direction)."""
    return ctx.memo("results.modern", _build_modern_results)


def _build_modern_results(ctx: LintContext) -> pl.DataFrame:
    keep = (
        ctx.part("responses", "modern", "kind", "direction", "parse_error")
        .select(
            pl.col("modern")
            & (pl.col("kind") == "response")
            & (pl.col("direction") != "c2s")
            & pl.col("parse_error").is_null()  # content(): the body is available
        )
        .to_series()
    )
    # the columns the RS rules read, so that their filters move little data
    part = ctx.part(
        "responses",
        "ordinal",
        "session",
        "line",
        "kind",
        "direction",
        "modern",
        "parse_error",
        "result_type",
        "request_method",
        "request_ordinal",
        "rare",
        "message",
    )
    return part.filter(keep)


def _modern_input_required(ctx: LintContext) -> pl.DataFrame:
    """The ``input_required`` rows of :func:`_modern_results`, with ``inputs`` (the JSON
    text of `result.inputRequests`)."""
    return ctx.input_required.filter(
        pl.col("modern"), pl.col("kind") == "response", pl.col("direction") != "c2s"
    )


@rule(
    code="RS001",
    name="result-missing-result-type",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def result_missing_result_type(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 success responses whose `result` object has no `resultType`.

    ## Why is this bad?
    `resultType` tells the client how to read the result: a final answer (`complete`) or
    a request for more input (`input_required`). Clients treat a missing value as
    `complete` only for the sake of legacy servers, so a 2026 server that omits it
    makes its input requests look like final answers.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}]}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {"resultType": "complete", "content": [{"type": "text", "text": "hi"}]}
    }
    ```

    ## Reference
    "The `result` MUST include a `resultType` field to indicate the type of the result." —
    docs/specification/2026-07-28/basic/index.mdx#result-responses (2026-07-28). Schema:
    `Result.resultType` (required).
    """
    rows = _modern_results(ctx).filter(pl.col("result_type").is_null())
    bad = rows.filter(path("$.result.resultType").is_null() & path("$.result").str.starts_with("{"))
    what = pl.when(pl.col("request_method").is_not_null()).then(
        fmt("{} result has no resultType", "request_method")
    )
    return findings(bad, what.otherwise(pl.lit("result has no resultType")))


@rule(code="RS002", name="unknown-result-type", severity="error", revisions=MODERN, scope="message")
def unknown_result_type(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags 2026 results whose `resultType` is not a string or neither `"complete"` nor
    `"input_required"`.

    Results to requests whose client capabilities declare extensions are skipped, since an
    extension may define more values.

    ## Why is this bad?
    A client MUST treat an unrecognised `resultType` as invalid, so the whole result is
    lost: a misspelt `"completed"` or an invented `"partial"` turns a successful call into
    a failure on the client.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "partial", "content": []}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}}
    ```

    ## Reference
    "A `resultType` of any value unrecognized by the client MUST be considered invalid." —
    docs/specification/2026-07-28/basic/index.mdx#resulttype (2026-07-28).
    """
    # the typed test first: the texts searched are then only those without a known type
    rows = (
        _modern_results(ctx)
        .filter((~pl.col("result_type").is_in(sorted(RESULT_TYPES))).fill_null(True))
        .filter(
            pl.col("result_type").is_not_null()
            | pl.col("message").str.contains('"resultType"', literal=True)
        )
    )
    if rows.is_empty():
        return findings(rows, "")
    rows = rows.with_columns(_rt=path("$.result.resultType")).filter(pl.col("_rt").is_not_null())
    ext = pl.col("_request").str.json_path_match(
        f'$.params._meta["{CLIENT_CAPABILITIES_KEY}"].extensions'
    )
    requests = ctx.lookup(
        rows.select("request_ordinal"), "request_ordinal", inner=True, _request="message"
    ).select("request_ordinal", _ext=ext)
    rows = rows.join(requests, on="request_ordinal", how="left").filter(
        pl.col("_ext").is_null() | (pl.col("_ext") == "{}")
    )
    msg = (
        pl.when(pl.col("result_type").is_null())
        .then(fmt("resultType {} is not a string", "_rt"))
        .otherwise(fmt('resultType "{}" is neither "complete" nor "input_required"', "result_type"))
    )
    return findings(rows, msg)


@rule(
    code="RS003",
    name="input-required-on-unsupported-method",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def input_required_on_unsupported_method(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `resultType: "input_required"` results answering a request other than
    `tools/call`, `prompts/get` or `resources/read`.

    ## Why is this bad?
    Only those three requests have a retry path (`inputResponses`, `requestState` in
    their params); a client that receives an input request for `tools/list` has no way
    to answer it and no final result.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 3, "method": "tools/list",
      "params": {
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {"jsonrpc": "2.0", "id": 3, "result": {"resultType": "input_required", "requestState": "x"}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 3,
      "result": {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public"}
    }
    ```

    ## Reference
    "Servers MUST NOT send `InputRequiredResult` responses on any other client requests." —
    docs/specification/2026-07-28/basic/patterns/mrtr.mdx#supported-requests (2026-07-28).
    """
    # the input_required results are found already: not a test of every result
    bad = _modern_input_required(ctx).filter(
        pl.col("request_method").is_not_null() & ~pl.col("request_method").is_in(_MRTR)
    )
    return findings(
        bad,
        fmt(
            "input_required result answers {}, which does not support multi round-trip requests",
            "request_method",
        ),
    )


@rule(
    code="RS004",
    name="input-required-without-inputs",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def input_required_without_inputs(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `input_required` results that carry neither a non-empty `inputRequests` map
    nor a `requestState`.

    ## Why is this bad?
    Such a result asks the client for nothing and gives it nothing to send back: the
    client can only retry the identical request and get the same answer, or give up.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {"resultType": "input_required", "requestState": "eyJzdGVwIjoyfQ"}
    }
    ```

    ## Reference
    "Servers MUST include at least one of `inputRequests` or `requestState` in every
    `InputRequiredResult` response." —
    docs/specification/2026-07-28/basic/patterns/mrtr.mdx#server-requirements-basic-workflow
    (2026-07-28).
    """
    rows = _modern_input_required(ctx).rename({"inputs": "_ir"})
    empty = pl.col("_ir").is_null() | pl.col("_ir").is_in(["{}", "[]"])
    # the requestState matters only without input requests: parse it only there
    rows = computed_where(rows, empty, _rs=path("$.result.requestState"))
    bad = rows.filter(empty & pl.col("_rs").is_null())
    msg = pl.when(pl.col("_ir").is_null()).then(
        pl.lit("input_required result has neither inputRequests nor requestState")
    )
    return findings(
        bad,
        msg.otherwise(
            pl.lit("input_required result has an empty inputRequests and no requestState")
        ),
    )


@rule(
    code="RS005",
    name="input-request-unsupported-method",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def input_request_unsupported_method(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `inputRequests` entries of an `input_required` result that are not request
    objects whose `method` is `elicitation/create`, `sampling/createMessage` or
    `roots/list`.

    ## Why is this bad?
    Clients know how to fulfil only those three kinds of input; anything else (a
    `tools/call`, a typo such as `elicitation/request`, a bare string) cannot be
    answered, so the retry can never be built.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {
        "resultType": "input_required",
        "inputRequests": {"k": {"method": "tools/call", "params": {"name": "x"}}}
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {
        "resultType": "input_required",
        "inputRequests": {
          "k": {
            "method": "elicitation/create",
            "params": {
              "message": "Your name?",
              "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }
          }
        }
      }
    }
    ```

    ## Reference
    "`inputRequests` values are request objects that MUST be one of `ElicitRequest`,
    `CreateMessageRequest`, or `ListRootsRequest`" —
    docs/specification/2026-07-28/basic/patterns/mrtr.mdx#server-requirements-basic-workflow
    (2026-07-28). Schema: `InputRequests`, `InputRequest`.
    """
    rows = (
        _modern_input_required(ctx)
        .select("ordinal", _ir="inputs")
        .filter(pl.col("_ir").str.starts_with("{") & (pl.col("_ir") != "{}"))
    )
    # the verdict depends on the text alone, and servers repeat the same input requests:
    # tokenize each distinct text once (numbered like ordinals), then map back to rows
    texts = rows.select("_ir").unique(maintain_order=True).with_row_index("ordinal")
    toks = json_tokens(texts.with_columns(pl.col("ordinal").cast(pl.Int64)), "_ir")
    members = toks.filter(pl.col("is_key") & (pl.col("depth") == 1)).select(
        "ordinal", "row", "member", _v="value"
    )
    methods = toks.filter(
        pl.col("is_key") & (pl.col("depth") == 2) & (pl.col("tok") == '"method"')
    ).select("row", "member", _m="value")
    entries = members.join(methods, on=["row", "member"], how="left").with_columns(
        _key=unquote(pl.col("member")), _method=unquote(pl.col("_m"))
    )
    problem = (
        pl.when(pl.col("_v") != "{")
        .then(fmt('input request "{}" is not a request object', "_key"))
        .when(pl.col("_m").is_null())
        .then(fmt('input request "{}" has no method', "_key"))
        .when(~pl.col("_m").str.starts_with('"') | ~pl.col("_method").is_in(_INPUT_METHODS))
        .then(fmt('input request "{}" has method {}', "_key", "_m"))
    )
    bad = entries.with_columns(_p=problem).filter(pl.col("_p").is_not_null())
    if bad.is_empty():  # the usual case: no text is grouped, nor the rows joined
        return findings(bad, "")
    per_text = bad.group_by("ordinal", maintain_order=True).agg(pl.col("_p").str.join("; "))
    per_text = per_text.join(texts.with_columns(pl.col("ordinal").cast(pl.Int64)), on="ordinal")
    per_msg = rows.join(per_text.drop("ordinal"), on="_ir", maintain_order="left")
    allowed = ", ".join(_INPUT_METHODS)
    return findings(per_msg, fmt("{} (allowed: {})", "_p", pl.lit(allowed)))


def mrtr_retries(ctx: LintContext) -> pl.DataFrame:
    """:func:`_find_mrtr_retries`, computed once per lint run (RS006-RS008, RS013 and CF002
    read it)."""
    return ctx.memo("results.mrtr_retries", _find_mrtr_retries)


def _input_required_calls(ctx: LintContext) -> pl.DataFrame:
    """``input_required`` results of multi round-trip methods with the request they answered.

    Columns: session, ir_state and ir_inputs (JSON text of the result's ``requestState``
    and ``inputRequests``), first_id and first_ordinal (the answered request), _tkey (its
    target, "" without one), ir_ordinal, method; sorted by ir_ordinal.
    """
    return ctx.memo("results.input_required_calls", _build_input_required_calls)


#: a `requestState` member whose value is a string without escapes (the quote after the
#: name closes a key: a match ends with the member's whole value, the string it blanks)
_PLAIN_STATE = r'"requestState":"[^"\\]*"'


def _ir_request_states(ctx: LintContext, rows: pl.DataFrame) -> pl.Series:
    """``result.requestState`` (as :func:`path` reads it) of the ``input_required`` results
    ``rows`` (with ordinal, message and ``inputs``), parsed only where the text's start
    cannot tell it.

    Each `requestState` is distinct, so no parse is shared; but the compact results most
    captures hold spell out the members before it: `{"jsonrpc":"2.0","id":ID,"result":{`
    (ID an integer or a string without escapes), `"resultType":"input_required",
    "inputRequests":` and the value already read (``inputs``: a JSON value ends where its
    text does; and its reader read the whole text, so it is not nested too deep for
    :func:`path`). A text that starts so and goes on `,"requestState":"X"` has that
    member in `result`, and X is its value when the rest of the text has no escape (so
    X has none and no key is spelled otherwise) nor `"requestState"` or `"result"` (a
    second member, or a second `result`, would win).
    """
    text = pl.col("message")
    head = pl.concat_str(
        pl.lit('{"jsonrpc":"2.0","id":'),
        pl.when(pl.col("id").str.contains(rf"^{PLAIN_ID}$")).then("id"),
        pl.lit(',"result":{"resultType":"input_required","inputRequests":'),
        pl.col("inputs"),
        pl.lit(',"requestState":"'),
    )
    # three queries: in one, the head and the rest would be built once per use each
    told = (
        ctx.lookup(rows.select("ordinal", "message", "inputs"), "ordinal", id="id")
        .select("message", _head=head)
        .select(
            "message",
            _rest=pl.when(text.str.starts_with(pl.col("_head"))).then(
                text.str.slice(pl.col("_head").str.len_chars())
            ),
        )
        .select(
            "message",
            _told=pl.when(~pl.col("_rest").str.contains(r'\\|"re(?:questState|sult)"')).then(
                pl.col("_rest").str.extract('^([^"]*)"', 1)
            ),
        )
    )
    parsed = computed_where(told, pl.col("_told").is_null(), _read=path("$.result.requestState"))
    return parsed.select(pl.coalesce("_told", "_read")).to_series()


def _build_input_required_calls(ctx: LintContext) -> pl.DataFrame:
    # `inputs` (result.inputRequests) is parsed there already, once per distinct body
    rows = _modern_input_required(ctx).filter(pl.col("request_method").is_in(_MRTR))
    return (
        rows.with_columns(ir_state=_ir_request_states(ctx, rows), ir_inputs="inputs")
        # the answered request (always a message: its method is known)
        .pipe(
            ctx.lookup,
            "request_ordinal",
            inner=True,
            first_id="id",
            _tkey="target",
        )
        .with_columns(pl.col("_tkey").fill_null(""))
        .select(
            "session",
            "ir_state",
            "ir_inputs",
            "first_id",
            "_tkey",
            first_ordinal="request_ordinal",
            ir_ordinal="ordinal",
            method="request_method",
        )
        .sort("ir_ordinal")
    )


def _find_mrtr_retries(ctx: LintContext) -> pl.DataFrame:
    """Each input_required result paired with the client's retry of the request it answered.

    The retry is the next request of the session with the same method and target
    (tool name, prompt name or resource URI) after the input_required result, if that
    request carries ``inputResponses`` or ``requestState`` (without either it is a fresh
    call: the client abandoned the round trip, which it may). When parallel calls of the
    same target get input_required results, one request is the candidate retry of each
    of them: ``n`` counts them, and ``is_match`` / ``n_match`` say which carry the
    requestState the retry sends (both absent counts as a match).

    Columns: those of :func:`_input_required_calls`, then ordinal, id, line, state
    and _inputs (``requestState`` and ``inputResponses`` of the retry), is_match, n,
    n_match.
    """
    ir = _input_required_calls(ctx)
    # one filter (typed columns and the sessions' codes) moves the requests' columns once;
    # only the few retries found get their id and line
    candidates = (
        ctx.part(
            "requests",
            "ordinal",
            "session",
            "method",
            "target",
            "modern",
            "direction",
            "parse_error",
        )
        .filter(
            pl.col("modern"),
            pl.col("direction") != "s2c",
            pl.col("session").is_in(ir["session"].unique().implode()),
            pl.col("method").is_in(_MRTR),
            pl.col("parse_error").is_null(),  # content(): the body is available
        )
        .select("ordinal", "session", "method", _tkey=pl.col("target").fill_null(""))
        .sort("ordinal")
    )
    pairs = _next_candidate(ir, candidates).filter(pl.col("ordinal").is_not_null())
    # the requestState of the retries that spell it out is parsed once, for RS014 too; a
    # text that does not can hold one only behind an escape (`"\u0072equestState"`)
    retries = ctx.lookup(
        pairs, "ordinal", inner=True, id="id", line="line", message="message"
    ).join(
        _sent_states(ctx).select("ordinal", "state", _spelled=pl.lit(True)),
        on="ordinal",
        how="left",
        maintain_order="left",
    )
    escaped = pl.col("_spelled").is_null() & pl.col("message").str.contains("\\", literal=True)
    # a client sends the same answers again and again, each time with another
    # requestState: with the states blanked (`"requestState":""`), each distinct text is
    # parsed once for the inputResponses. Blanking changes no other value: an answer it
    # changed holds `"requestState"` and is read from the text itself
    blanked = json_paths(
        retries.select(pl.col("message").str.replace_all(_PLAIN_STATE, '"requestState":""')),
        _blank="$.params.inputResponses",
    )["_blank"]
    changed = pl.col("_blank").str.contains('"requestState"', literal=True).fill_null(False)
    return (
        computed_where(
            retries.with_columns(blanked),
            escaped | changed,
            _escaped=path("$.params.requestState"),
            _read=path("$.params.inputResponses"),
        )
        .with_columns(
            state=pl.coalesce("state", "_escaped"),
            _inputs=pl.when(changed).then("_read").otherwise("_blank"),
        )
        .drop("_spelled", "_escaped", "_blank", "_read")
        .filter(pl.col("state").is_not_null() | pl.col("_inputs").is_not_null())
        .with_columns(is_match=pl.col("state").eq_missing(pl.col("ir_state")))
        .with_columns(n=pl.len().over("ordinal"), n_match=pl.col("is_match").sum().over("ordinal"))
        .sort("ordinal", "ir_ordinal")
    )


#: what a retry repeats of the request it retries: session, method and target
_CALL_GROUP = ("session", "method", "_tkey")


def _next_candidate(ir: pl.DataFrame, candidates: pl.DataFrame) -> pl.DataFrame:
    """``ir`` plus ``ordinal``: that of the first row of ``candidates`` (sorted by
    ordinal) of the same :data:`_CALL_GROUP` after each ``ir_ordinal``; null if none.

    The group is matched by one 64-bit number (an as-of join by the three columns, two
    of them text, costs twice as much at 10^5 candidates). A match of the number found
    in a group of another key (two keys sharing a number) is caught by checking the key
    itself, and the groups are then matched by their columns."""
    hashed = key_hash(*_CALL_GROUP)
    found = ir.with_columns(_key=hashed).join_asof(
        candidates.with_columns(_key=hashed),
        left_on="ir_ordinal",
        right_on="ordinal",
        by="_key",
        strategy="forward",
        check_sortedness=False,
    )
    same = pl.all_horizontal(pl.col(c).eq_missing(pl.col(f"{c}_right")) for c in _CALL_GROUP)
    if found.select((same | pl.col("ordinal").is_null()).all()).item():
        return found.drop("_key", *(f"{c}_right" for c in _CALL_GROUP))
    return ir.join_asof(
        candidates,
        left_on="ir_ordinal",
        right_on="ordinal",
        by=list(_CALL_GROUP),
        strategy="forward",
        check_sortedness=False,
    )


def _sent_states(ctx: LintContext) -> pl.DataFrame:
    """Requests of 2026 sessions, not sent by the server, whose text spells out
    `"requestState"`: ordinal, session, method, _tkey (the target, "" without one) and
    state (`params.requestState`). RS014 and :func:`mrtr_retries` read it."""
    return ctx.memo("results.sent_states", _build_sent_states)


def _build_sent_states(ctx: LintContext) -> pl.DataFrame:
    # `"requestState"` is a rare marker (see LintContext.part)
    return ctx.modern_marked(
        "requests", '"requestState"', "s2c", "ordinal", "session", "method", "target"
    ).select(
        "ordinal",
        "session",
        "method",
        _tkey=pl.col("target").fill_null(""),
        state=path("$.params.requestState"),
    )


@rule(
    code="RS006", name="mrtr-retry-reuses-id", severity="error", revisions=MODERN, scope="session"
)
def mrtr_retry_reuses_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a multi round-trip retry that reuses the JSON-RPC id of the original request.

    The retry is the next request of the session with the same method and target after an
    `input_required` result, if it carries `inputResponses` or `requestState` (without
    either, the client abandoned the round trip and sent a fresh call, which it may).

    ## Why is this bad?
    The original request and its retry are independent requests. A reused id makes
    late or duplicated responses to the first request indistinguishable from the
    answer to the retry, and defeats id-based logging and deduplication. The general
    rule on in-flight ids does not catch it, because the first request has already
    been answered.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {
        "name": "book",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
      }
    }
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "s1"}}
    {
      "jsonrpc": "2.0", "id": 1, "method": "tools/call",
      "params": {
        "name": "book", "requestState": "s1",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "book", "requestState": "s1",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
      }
    }
    ```

    ## Reference
    "The JSON-RPC `id` MUST be different between the initial request and the retry, as
    they are independent requests." —
    docs/specification/2026-07-28/basic/patterns/mrtr.mdx#client-requirements-basic-workflow
    (2026-07-28).
    """
    # the original request: the only candidate, or the only one whose requestState matches
    pairs = mrtr_retries(ctx).filter(
        (pl.col("n") == 1) | (pl.col("is_match") & (pl.col("n_match") == 1))
    )
    bad = pairs.filter(pl.col("id") == pl.col("first_id"))
    return findings(
        bad,
        fmt(
            "retry of the {} request at {} reuses its id {}",
            "method",
            line_of("first_ordinal"),
            "id",
        ),
    )


@rule(
    code="RS007",
    name="mrtr-request-state-not-echoed",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def mrtr_request_state_not_echoed(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a multi round-trip retry that omits or alters the `requestState` of the
    `input_required` result.

    The retry is the next request of the session with the same method and target after the
    `input_required` result, if it carries `inputResponses` or `requestState` (without
    either, the client abandoned the round trip and sent a fresh call, which it may).

    ## Why is this bad?
    `requestState` is where a stateless server keeps its progress through the round
    trips; a retry without it (or with a modified copy) makes the server start over,
    reject the retry, or act on state the client forged.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {
        "resultType": "input_required", "requestState": "abc",
        "inputRequests": {
          "ok": {
            "method": "elicitation/create",
            "params": {
              "message": "Book it?", "requestedSchema": {"type": "object", "properties": {}}
            }
          }
        }
      }
    }
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "book", "inputResponses": {"ok": {"action": "accept"}},
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "book", "inputResponses": {"ok": {"action": "accept"}}, "requestState": "abc",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
      }
    }
    ```

    ## Reference
    "If an `InputRequiredResult` contains the `requestState` field, the client MUST echo
    back the exact value of that field when retrying the original request." —
    docs/specification/2026-07-28/basic/patterns/mrtr.mdx#client-requirements-basic-workflow
    (2026-07-28).
    """
    # no candidate result issued the state the retry sends; cite the latest one with a state
    bad = (
        mrtr_retries(ctx)
        .filter((pl.col("n_match") == 0) & pl.col("ir_state").is_not_null())
        .group_by("ordinal", maintain_order=True)
        .last()
    )
    how = pl.when(pl.col("state").is_null()).then(pl.lit("omits")).otherwise(pl.lit("alters"))
    return findings(
        bad,
        fmt(
            "retry of the {} request at {} {} the requestState of the input_required result at {}",
            "method",
            line_of("first_ordinal"),
            how,
            line_of("ir_ordinal"),
        ),
    )


@rule(
    code="RS008",
    name="mrtr-unsolicited-request-state",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def mrtr_unsolicited_request_state(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a multi round-trip retry that carries a `requestState` the `input_required` result
    did not give.

    The retry is the next request of the session with the same method and target after the
    `input_required` result, if it carries `inputResponses` or `requestState`.

    ## Why is this bad?
    `requestState` is opaque server data; a value the server never issued is either
    left over from another round trip or made up, and the server must treat it as
    attacker-controlled input.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {
        "resultType": "input_required",
        "inputRequests": {
          "ok": {
            "method": "elicitation/create",
            "params": {
              "message": "Book it?", "requestedSchema": {"type": "object", "properties": {}}
            }
          }
        }
      }
    }
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "book", "inputResponses": {"ok": {"action": "accept"}}, "requestState": "made-up",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "book", "inputResponses": {"ok": {"action": "accept"}},
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        }
      }
    }
    ```

    ## Reference
    "If the `InputRequiredResult` does not contain a `requestState` field, the client
    MUST NOT include one in the retry." —
    docs/specification/2026-07-28/basic/patterns/mrtr.mdx#client-requirements-basic-workflow
    (2026-07-28).
    """
    # a state on the retry while no candidate result issued any
    bad = (
        mrtr_retries(ctx)
        .filter(pl.col("state").is_not_null())
        .filter(pl.col("ir_state").is_null().all().over("ordinal"))
        .group_by("ordinal", maintain_order=True)
        .last()
    )
    return findings(
        bad,
        fmt(
            "retry of the {} request at {} sends a requestState "
            "the input_required result at {} did not give",
            "method",
            line_of("first_ordinal"),
            line_of("ir_ordinal"),
        ),
    )


def _cache_hints(ctx: LintContext) -> pl.DataFrame:
    """The modern results RS009, RS010 and RS015 read: cacheable complete results
    (``_cacheable``) and those whose text has `"ttlMs"`, with ``_ttl`` and ``_scope``,
    the JSON text of their `result.ttlMs` and `result.cacheScope`."""
    return ctx.memo("results.cache_hints", _build_cache_hints)


def _build_cache_hints(ctx: LintContext) -> pl.DataFrame:
    # `"ttlMs"` is a rare marker (see LintContext.part): only the rows with a rare
    # marker or a cacheable result can be kept, and a cacheable one is kept whatever its
    # text: only the texts of the others are searched
    rows = (
        _modern_results(ctx)
        .with_columns(
            _cacheable=(pl.col("result_type") == RESULT_TYPE_COMPLETE)
            & pl.col("request_method").is_in(sorted(CACHEABLE_METHODS))
        )
        .filter(pl.col("rare") | pl.col("_cacheable"))
    )
    keep = settle(
        rows.select("_cacheable", "message"),
        pl.col("_cacheable"),
        pl.col("_cacheable") | pl.col("message").str.contains('"ttlMs"', literal=True),
    )
    # a list result is sent again and again: parse each distinct body once
    return json_paths(rows.filter(keep), _ttl="$.result.ttlMs", _scope="$.result.cacheScope")


@rule(
    code="RS009",
    name="cacheable-result-missing-hints",
    severity="error",
    revisions=MODERN,
    scope="pairing",
)
def cacheable_result_missing_hints(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags `complete` results of `server/discover`, `tools/list`, `prompts/list`,
    `resources/list`, `resources/templates/list` and `resources/read` that lack
    `ttlMs` or `cacheScope`.

    ## Why is this bad?
    Without `ttlMs` the client must assume the result is stale at once and re-fetch it
    on every use; without `cacheScope` a shared cache cannot know whether the result is
    user-specific, and may either leak it across users or never cache it.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 5, "method": "resources/read",
      "params": {
        "uri": "file:///a",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    {
      "jsonrpc": "2.0", "id": 5,
      "result": {"resultType": "complete", "contents": [{"uri": "file:///a", "text": "x"}]}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 5,
      "result": {
        "resultType": "complete", "contents": [{"uri": "file:///a", "text": "x"}], "ttlMs": 60000,
        "cacheScope": "private"
      }
    }
    ```

    ## Reference
    "Servers MUST include caching hints on results with `resultType: "complete"` returned
    by the following operations:" —
    docs/specification/2026-07-28/server/utilities/caching.mdx#cacheable-results
    (2026-07-28). Schema: `CacheableResult` (`ttlMs`, `cacheScope` required).
    """
    rows = (
        _cache_hints(ctx)
        .filter(pl.col("_cacheable"))
        .with_columns(_ttl=pl.col("_ttl").is_null(), _scope=pl.col("_scope").is_null())
    )
    bad = rows.filter(pl.col("_ttl") | pl.col("_scope"))
    missing = (
        pl.when(pl.col("_ttl") & pl.col("_scope"))
        .then(pl.lit("ttlMs and cacheScope"))
        .when(pl.col("_ttl"))
        .then(pl.lit("ttlMs"))
        .otherwise(pl.lit("cacheScope"))
    )
    return findings(bad, fmt("{} result lacks {}", "request_method", missing))


@rule(code="RS010", name="negative-ttl", severity="error", revisions=MODERN, scope="message")
def negative_ttl(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags results whose `ttlMs` caching hint is negative.

    ## Why is this bad?
    A negative time-to-live has no meaning; clients are told to ignore it and treat the
    result as immediately stale, so the server's intent is lost and caches disagree on
    how to read it.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {"resultType": "complete", "tools": [], "ttlMs": -1, "cacheScope": "public"}
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public"}
    }
    ```

    ## Reference
    "Servers MUST provide a `ttlMs` value that is `>= 0`." —
    docs/specification/2026-07-28/server/utilities/caching.mdx#time-to-live-ttl-field
    (2026-07-28). Schema: `CacheableResult.ttlMs` (minimum 0).
    """
    # the negative values first, then the text: only a result whose text spells the key
    # out is judged, and _cache_hints keeps a cacheable one without searching its text
    rows = _cache_hints(ctx).filter(pl.col("_ttl").cast(pl.Float64, strict=False) < 0)
    bad = rows.filter(pl.col("message").str.contains('"ttlMs"', literal=True))
    return findings(bad, fmt("ttlMs is {}; it must be 0 or more", "_ttl"))


@rule(
    code="RS011",
    name="completion-too-many-values",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def completion_too_many_values(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags completion results whose `completion.values` list has more than 100 items.

    ## Why is this bad?
    Clients size their suggestion UIs and buffers on the 100-item limit; a longer list
    may be truncated arbitrarily or rejected. Servers with more candidates should send
    the best 100 and set `hasMore` (and optionally `total`).

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 9, "result": {"completion": {"values": ["a1", "a2", "...", "a150"]}}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 9,
      "result": {
        "completion": {"values": ["a1", "a2", "...", "a100"], "total": 150, "hasMore": true}
      }
    }
    ```

    ## Reference
    "Maximum 100 items per response" —
    docs/specification/2026-07-28/server/utilities/completion.mdx#completion-results (all
    revisions: server/utilities/completion.mdx; schema `CompleteResult.completion.values`,
    `maxItems: 100` in 2026-07-28).
    """
    rows = (
        content(ctx.part("responses", "ordinal", "kind", "parse_error", "rare", "message"))
        .filter(pl.col("kind") == "response", pl.col("rare"))
        # only texts with a rare marker (see LintContext.part) can have this one
        .filter(pl.col("message").str.contains('"completion"', literal=True))
        .filter(pl.col("message").str.count_matches(",", literal=True) >= 100)
        .with_columns(_values=path("$.result.completion.values"))
        .filter(pl.col("_values").str.starts_with("["))
    )
    if rows.is_empty():
        return findings(rows, "")
    toks = json_tokens(rows, "_values")
    counts = (
        toks.filter((pl.col("depth") == 1) & ~pl.col("tok").is_in([",", "]"]))
        .group_by("ordinal")
        .agg(_n=pl.len())
        .filter(pl.col("_n") > 100)
    )
    return findings(counts, fmt("completion result lists {} values; the maximum is 100", "_n"))


@rule(
    code="RS012",
    name="input-required-with-cache-hints",
    severity="info",
    revisions=MODERN,
    scope="message",
)
def input_required_with_cache_hints(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Notes `input_required` results that carry `ttlMs` or `cacheScope` caching hints.

    ## Why is this bad?
    An interim `input_required` result is not cacheable: it only asks for input that the
    retry will carry. Hints on it suggest the server treats it as a final, cacheable
    answer, and a client that caches it would replay a stale request for input.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 5,
      "result": {
        "resultType": "input_required", "requestState": "s", "ttlMs": 60000,
        "cacheScope": "public"
      }
    }
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 5, "result": {"resultType": "input_required", "requestState": "s"}}
    ```

    ## Reference
    "Interim results with `resultType: "input_required"` (see multi round-trip requests)
    are not cacheable and carry no caching hints." —
    docs/specification/2026-07-28/server/utilities/caching.mdx#cacheable-results
    (2026-07-28).
    """
    # without a backslash, a text can only hold these keys spelled out (the `rare` column
    # would not narrow it: input_required results carry "requestState", a rare marker)
    text = pl.col("message").str
    spelled = (
        text.contains('"ttlMs"', literal=True)
        | text.contains('"cacheScope"', literal=True)
        | text.contains("\\", literal=True)
    )
    rows = computed_where(
        _modern_input_required(ctx),
        spelled,
        _ttl=path("$.result.ttlMs"),
        _scope=path("$.result.cacheScope"),
    ).with_columns(_ttl=pl.col("_ttl").is_not_null(), _scope=pl.col("_scope").is_not_null())
    bad = rows.filter(pl.col("_ttl") | pl.col("_scope"))
    which = (
        pl.when(pl.col("_ttl") & pl.col("_scope"))
        .then(pl.lit("ttlMs and cacheScope"))
        .when(pl.col("_ttl"))
        .then(pl.lit("ttlMs"))
        .otherwise(pl.lit("cacheScope"))
    )
    return findings(bad, fmt("input_required result carries {}, though it is not cacheable", which))


def _request_name(method: str, target: str) -> pl.Expr:
    """``tools/call book_trip``: the method, then the target when there is one."""
    return (
        pl.when(pl.col(target) == "").then(pl.col(method)).otherwise(fmt("{} {}", method, target))
    )


def _object_keys(text: str | None) -> frozenset[str] | None:
    """The member names of the JSON object in ``text``; None when it is not one."""
    if text is None:
        return None
    try:
        value = _json.loads(text)
    except _json.JSONDecodeError:
        return None
    return frozenset(value) if isinstance(value, dict) else None


@rule(
    code="RS013",
    name="mrtr-input-responses-incomplete",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def mrtr_input_responses_incomplete(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a multi round-trip retry whose `inputResponses` lacks an answer to one of the
    `inputRequests` of the `input_required` result it retries.

    The retry is the next request of the session with the same method and target after the
    `input_required` result, if it carries `inputResponses` or `requestState`. When parallel
    calls of one target got `input_required` results, the retry is judged against the
    result whose `requestState` it echoes, and not at all when that is ambiguous.

    ## Why is this bad?
    Each key of `inputRequests` names an input the server needs to go on; the retry's
    `inputResponses` answers them under the same keys. A missing answer leaves the server
    unable to finish: it asks again (another round trip) or fails the request. A declined
    elicitation is still an answer (`{"action": "decline"}`), so leaving one out is never
    how a client says no.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {
        "resultType": "input_required",
        "inputRequests": {
          "confirm": {
            "method": "elicitation/create",
            "params": {
              "message": "Book it?", "requestedSchema": {"type": "object", "properties": {}}
            }
          },
          "roots": {"method": "roots/list"}
        }
      }
    }
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "book", "inputResponses": {"confirm": {"action": "accept"}},
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "roots": {}}
        }
      }
    }
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "book",
        "inputResponses": {
          "confirm": {"action": "accept"},
          "roots": {"roots": [{"uri": "file:///home/me/trips"}]}
        },
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "roots": {}}
        }
      }
    }
    ```

    ## Reference
    "If a client receives an `InputRequiredResult` that contains the `inputRequests` field,
    the client MUST construct the requested inputs before retrying the original request." —
    docs/specification/2026-07-28/basic/patterns/mrtr.mdx#client-requirements-basic-workflow
    (2026-07-28). Schema: `InputResponses` ("Keys correspond to the keys in the
    InputRequests map").
    """
    retries = mrtr_retries(ctx).filter(
        pl.col("ir_inputs").is_not_null()
        & ((pl.col("n") == 1) | (pl.col("is_match") & (pl.col("n_match") == 1)))
    )
    pairs = retries.select("ir_inputs", "_inputs").unique()
    # servers ask for the same inputs over and over: each distinct request is read once
    asked_keys = {text: _object_keys(text) for text in pairs["ir_inputs"].unique().to_list()}
    missing: list[str | None] = []
    for asked, given in pairs.iter_rows():  # distinct (asked, answered) pairs, not rows
        wanted = asked_keys[asked]
        if not wanted:  # not an object, or an empty one: nothing can be missing
            missing.append(None)
            continue
        lacking = sorted(wanted - (_object_keys(given) or frozenset()))
        missing.append('", "'.join(lacking) if lacking else None)
    verdicts = pairs.with_columns(_missing=pl.Series(missing, dtype=pl.String)).filter(
        pl.col("_missing").is_not_null()
    )
    if verdicts.is_empty():  # the usual case: the retries are not joined with the pairs
        return findings(verdicts, "")
    bad = retries.join(
        verdicts, on=["ir_inputs", "_inputs"], nulls_equal=True, maintain_order="left"
    )
    return findings(
        bad,
        fmt(
            'retry of the {} request at {} has no inputResponses for "{}", asked for by '
            "the input_required result at {}",
            "method",
            line_of("first_ordinal"),
            "_missing",
            line_of("ir_ordinal"),
        ),
    )


@rule(
    code="RS014",
    name="mrtr-request-state-cross-use",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def mrtr_request_state_cross_use(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a request that carries the `requestState` of an `input_required` result given to a
    different request: another method, tool, prompt or resource.

    A state is accepted when any earlier `input_required` result of the session that issued
    it answered a request with the same method and target.

    ## Why is this bad?
    The inputs and `requestState` of an `input_required` result belong to the one request
    it answered. Sent with another request (say, a parallel call of another tool), the
    state makes the server resume the wrong operation, or act on answers the user gave
    for something else: a confirmation to book a trip must not approve a payment.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 1,
      "result": {"resultType": "input_required", "requestState": "trip-42"}
    }
    {
      "jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {
        "name": "pay_invoice", "requestState": "trip-42",
        "_meta": {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    }
    ```
    (request 1 was a `tools/call` of `book_trip`)

    Use instead: send `trip-42` only with the retry of the `book_trip` call, and call
    `pay_invoice` without a `requestState` (or with the one its own result gave).

    ## Reference
    "They MUST NOT be used for any other request that the client may be sending in
    parallel." (they: the `inputRequests` and `requestState` of an `InputRequiredResult`)
    — docs/specification/2026-07-28/basic/patterns/mrtr.mdx#client-requirements-basic-workflow
    (2026-07-28).
    """
    issued = (
        _input_required_calls(ctx)
        .filter(pl.col("ir_state").is_not_null())
        .select(
            "session",
            "ir_ordinal",
            "first_ordinal",
            "_tkey",
            "ir_state",
            ir_method="method",
        )
    )
    if issued.is_empty():
        return findings(issued.rename({"ir_ordinal": "ordinal"}), "")
    candidates = (
        _sent_states(ctx)
        .join(issued, left_on=["session", "state"], right_on=["session", "ir_state"])
        .filter(pl.col("ir_ordinal") < pl.col("ordinal"))
    )
    own = (pl.col("ir_method") == pl.col("method")) & (pl.col("_tkey_right") == pl.col("_tkey"))
    bad = (
        candidates.filter(~own.any().over("ordinal"))
        .sort("ordinal", "ir_ordinal")
        .group_by("ordinal", maintain_order=True)
        .last()
    )
    return findings(
        bad,
        fmt(
            "{} request carries the requestState of the input_required result at {}, "
            "which answered the {} request at {}",
            _request_name("method", "_tkey"),
            line_of("ir_ordinal"),
            _request_name("ir_method", "_tkey_right"),
            line_of("first_ordinal"),
        ),
    )


@rule(
    code="RS015",
    name="cache-scope-differs-across-pages",
    severity="error",
    revisions=MODERN,
    scope="session",
)
def cache_scope_differs_across_pages(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a page of a paginated list result (`tools/list`, `resources/list`,
    `resources/templates/list`, `prompts/list`) whose `cacheScope` differs from the page
    before it.

    The page before is the latest earlier result of the same method in the session whose
    `nextCursor` is the `cursor` this page's request sent.

    ## Why is this bad?
    The pages are parts of one list. A client, or a shared cache between client and
    server, that stores one page as `public` and the next as `private` ends up serving
    part of one user's list to another, or assembling a list from pages cached under
    different rules.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": [],
     "nextCursor": "c2", "ttlMs": 60000, "cacheScope": "private"}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "c2",
     "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
       "io.modelcontextprotocol/clientCapabilities": {}}}}
    {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "tools": [],
     "ttlMs": 60000, "cacheScope": "public"}}
    ```

    Use instead: `"cacheScope": "private"` on every page of that list.

    ## Reference
    "Servers MUST apply the same `cacheScope` to all response pages for a given list
    request." —
    docs/specification/2026-07-28/server/utilities/caching.mdx#interaction-with-pagination
    (2026-07-28).
    """
    pages = _cache_hints(ctx).filter(
        pl.col("_cacheable") & pl.col("request_method").str.ends_with("/list")
    )
    # a page that follows another was asked with a cursor: find those requests first
    asked = ctx.lookup(
        pages.select("ordinal", "request_ordinal"), "request_ordinal", _request="message"
    ).filter(pl.col("_request").str.contains('"cursor"', literal=True))
    if asked.is_empty():
        return findings(asked, "")
    follow = (
        asked.with_columns(_link=pl.col("_request").str.json_path_match("$.params.cursor"))
        .filter(pl.col("_link").is_not_null())
        .select("ordinal", "_link")
        .join(
            pages.select("ordinal", "session", "request_method", "request_ordinal", "_scope"),
            on="ordinal",
        )
        .sort("request_ordinal")
    )
    before = (
        pages.filter(pl.col("message").str.contains('"nextCursor"', literal=True))
        .pipe(json_paths, _link="$.result.nextCursor")
        .filter(pl.col("_link").is_not_null())
        .select(
            "session",
            "request_method",
            "_link",
            _prev="ordinal",
            _prev_scope="_scope",
        )
        .sort("_prev")
    )
    linked = follow.join_asof(
        before,
        left_on="request_ordinal",
        right_on="_prev",
        by=["session", "request_method", "_link"],
        strategy="backward",
        check_sortedness=False,
    )
    bad = linked.filter(
        pl.col("_scope").is_not_null()
        & pl.col("_prev_scope").is_not_null()
        & (pl.col("_scope") != pl.col("_prev_scope"))
    )
    return findings(
        bad,
        fmt(
            'cacheScope "{}" differs from "{}" on the previous page of this {} ({})',
            "_scope",
            "_prev_scope",
            "request_method",
            line_of("_prev"),
        ),
    )


#: the characters a tool name should be made of (2025-11-25 server/tools.mdx#tool-names)
_TOOL_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
_TOOL_NAME_MAX = 128
#: offending names a finding spells out; more are counted
_NAMES_SHOWN = 10


def _shown(name: str) -> str:
    """A tool name as a JSON string, cut after 40 characters."""
    return _json.dumps(name if len(name) <= 40 else name[:40] + "…")


def _tool_name_problems(tools_text: str) -> str | None:
    """What is wrong with the tool names of the JSON array ``tools_text`` (a `tools/list`
    result's `tools`), one clause per offending name; None when nothing is."""
    try:
        tools = _json.loads(tools_text)
    except _json.JSONDecodeError:
        return None
    if not isinstance(tools, list):
        return None
    # a missing or non-string name is the schema's business
    names = [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
    counts = Counter(names)
    problems = []
    for name, count in counts.items():  # first appearance order
        issues = []
        if not name:
            issues.append("is empty")
        elif len(name) > _TOOL_NAME_MAX:
            issues.append(f"is {len(name)} characters long (at most {_TOOL_NAME_MAX})")
        odd = dict.fromkeys(c for c in name if c not in _TOOL_NAME_CHARS)
        if odd:
            chars = ", ".join(_json.dumps(c) for c in list(odd)[:8])
            issues.append(f"has characters other than A-Z a-z 0-9 _ - . ({chars})")
        if count > 1:
            issues.append(f"is listed {count} times")
        if issues:
            problems.append(f"{_shown(name)} {', '.join(issues)}")
    if not problems:
        return None
    more = len(problems) - _NAMES_SHOWN
    tail = f"; and {more} more" if more > 0 else ""
    return "; ".join(problems[:_NAMES_SHOWN]) + tail


@rule(
    code="RS016",
    name="tool-name-format",
    severity="warning",
    revisions=since("2025-11-25"),
    scope="message",
)
def tool_name_format(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `tools/list` result with a tool name that is empty, longer than 128
    characters, has characters other than ASCII letters, digits, `_`, `-` and `.`, or is
    listed twice in the same result.

    One finding per result names every offending tool. Names are case-sensitive, so
    `search` and `Search` are two names. A name repeated on another page of a paginated
    list is not looked for, and a tool without a string `name` is left to the schema
    rules.

    ## Why is this bad?
    Clients and models call a tool by its name alone. Many clients and model APIs accept
    only this set of characters in a function name, so a tool named with a space, a
    slash or an accented letter is dropped or renamed on the way; an overlong name is
    cut, and of two tools with the same name only one can ever be called.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 2, "result": {"tools": [
      {"name": "get weather!", "inputSchema": {"type": "object"}},
      {"name": "search", "inputSchema": {"type": "object"}},
      {"name": "search", "inputSchema": {"type": "object"}}]}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "result": {"tools": [
      {"name": "get_weather", "inputSchema": {"type": "object"}},
      {"name": "search", "inputSchema": {"type": "object"}},
      {"name": "search.archive", "inputSchema": {"type": "object"}}]}}
    ```

    ## Reference
    "Tool names SHOULD be between 1 and 128 characters in length (inclusive).", "The
    following SHOULD be the only allowed characters: uppercase and lowercase ASCII letters
    (A-Z, a-z), digits (0-9), underscore (_), hyphen (-), and dot (.)" and "Tool names
    SHOULD be unique within a server." — docs/specification/2025-11-25/server/tools.mdx#tool-names
    and docs/specification/2026-07-28/server/tools.mdx#tool-names (the same words in both;
    earlier revisions set no rules for tool names).
    """
    # a server sends the same list again and again: the results of one list (see
    # tool_lists, which the TL rules read too) have one tools array, read from one of
    # them (the text without the envelope, as json_paths has it) and judged once
    lists = tool_lists(ctx)
    if lists.is_empty():
        return findings(lists, "")
    distinct = json_paths(
        lists.filter(pl.col("ordinal") == pl.col("list")).select("list", "message"),
        _tools="$.result.tools",
    )
    texts = distinct.filter(pl.col("_tools").str.starts_with("["))["_tools"].unique()
    verdicts = pl.DataFrame(
        [texts, pl.Series("_problem", [_tool_name_problems(t) for t in texts], dtype=pl.String)]
    ).filter(pl.col("_problem").is_not_null())
    if verdicts.is_empty():
        return findings(lists.clear(), "")
    at_fault = distinct.join(verdicts, on="_tools").select("list", "_problem")
    bad = lists.join(at_fault, on="list", maintain_order="left")
    return findings(bad, fmt("tools/list result breaks the tool naming rules: {}", "_problem"))


#: the list methods with `cursor`/`nextCursor` pagination in some revision (PaginatedRequest)
_PAGINATED = sorted(
    {
        method
        for table in METHODS.values()
        for method, spec in table.items()
        if spec.params_def == "PaginatedRequestParams"
    }
)
#: longest cursor a finding spells out in full
_CURSOR_SHOWN = 60
#: a member named nextCursor with a string value, and the part before the value
_NEXT_CURSOR = r'"nextCursor"\s*:\s*"(?:[^"\\]|\\.)*"'
_NEXT_CURSOR_KEY = r'^"nextCursor"\s*:\s*'


def _unissued_cursors(ctx: LintContext) -> pl.DataFrame:
    """List requests whose cursor no earlier result of that list returned (see RS017):
    ordinal, session, method, direction, cursor, and ``other``/``other_ordinal`` (the
    list whose nextCursor it is, when another list of the session returned it)."""
    return ctx.memo("results.unissued_cursors", _build_unissued_cursors)


def _build_unissued_cursors(ctx: LintContext) -> pl.DataFrame:
    # a suffix test first: cheaper than is_in over every request's method. A key spelled
    # with escapes (`"\\u0063ursor"`) is not looked for: such a request goes unjudged,
    # which can cost a finding, never make a false one. (A regex finds the key faster
    # than a literal search here.)
    sent = (
        ctx.part("requests", "ordinal", "session", "method", "direction", "parse_error", "message")
        .filter(pl.col("method").str.ends_with("/list"))
        .filter(
            pl.col("method").is_in(_PAGINATED),
            pl.col("parse_error").is_null(),
            pl.col("message").str.contains('"cursor"'),
        )
        .with_columns(cursor=path("$.params.cursor"))
        .filter(pl.col("cursor").is_not_null())
        .select("ordinal", "session", "method", "direction", "cursor")
    )
    if sent.is_empty():
        return sent.with_columns(
            other=pl.lit(None, pl.String), other_ordinal=pl.lit(None, pl.Int64)
        )
    answers = ctx.part(
        "responses",
        "ordinal",
        "session",
        "kind",
        "request_method",
        "request_ordinal",
        "parse_error",
        "message",
    )
    answers = answers.filter(pl.col("request_method").str.ends_with("/list")).filter(
        pl.col("request_method").is_in(_PAGINATED),
        pl.col("kind") == "response",
        pl.col("parse_error").is_null(),
        pl.col("session").is_in(sent["session"].unique().implode()),
    )
    # who asked (tasks/list goes both ways) and when the result counts as seen: in a
    # session without a common order of its two directions, before everything
    answers = ctx.lookup(answers, "request_ordinal", direction="direction").with_columns(
        method="request_method",
        seen=pl.when(ordered(ctx)).then(pl.col("ordinal")).otherwise(pl.lit(-1, pl.Int64)),
    )
    keys = ["session", "method", "direction"]
    # every string member named nextCursor in each result, at any depth: a superset of
    # its `result.nextCursor` that a regex finds at a third of the cost of parsing the
    # text (pages are many and rarely repeat). As a cursor of the same list it can only
    # hide a finding; as one of another list it is confirmed below. Outside strings a
    # member name is always quoted as such, and in a string `"nextCursor":` cannot occur
    # unescaped
    issued = (
        answers.select(
            *keys,
            "seen",
            "ordinal",
            cursor=pl.col("message").str.extract_all(_NEXT_CURSOR),
        )
        .explode("cursor")
        .filter(pl.col("cursor").is_not_null())
        .with_columns(pl.col("cursor").str.replace(_NEXT_CURSOR_KEY, ""))
    )
    escaped = pl.col("cursor").str.contains("\\", literal=True)
    issued = (
        issued.with_columns(
            cursor=pl.when(escaped)
            .then(pl.col("cursor").str.json_decode(pl.String))
            .otherwise(pl.col("cursor").str.slice(1, pl.col("cursor").str.len_chars() - 2))
        )
        .select(*keys, "cursor", "seen", issued_ordinal=pl.col("ordinal"))
        .sort("seen")
    )

    def earlier(frame: pl.DataFrame, by: list[str], **columns: str) -> pl.DataFrame:
        """``frame`` plus ``columns`` of the latest cursor of ``issued`` (matched on ``by``)
        seen before each request; nulls when there is none."""
        right = issued.select(*by, "seen", **columns)
        return frame.join_asof(
            right,
            left_on="ordinal",
            right_on="seen",
            by=by,
            strategy="backward",
            allow_exact_matches=False,
            check_sortedness=False,
        ).drop("seen")

    sent = sent.sort("ordinal")
    # the same cursor of the same list issued earlier: fine
    sent = earlier(sent, [*keys, "cursor"], own="issued_ordinal").filter(pl.col("own").is_null())
    # the same cursor issued earlier by another list: flagged whatever the capture missed,
    # once a parse of that result (few rows) confirms it is its nextCursor
    sent = earlier(
        sent, ["session", "direction", "cursor"], other="method", other_ordinal="issued_ordinal"
    )
    sent = ctx.lookup(sent, "other_ordinal", _issuer="message")
    confirmed = pl.col("_issuer").str.json_path_match("$.result.nextCursor") == pl.col("cursor")
    sent = computed_where(sent, pl.col("other").is_not_null(), _confirmed=confirmed)
    sent = sent.with_columns(
        pl.when(pl.col("_confirmed")).then(pl.col(c)).alias(c) for c in ("other", "other_ordinal")
    )
    # otherwise judged only if the capture saw a result of this list before the request
    first_seen = answers.group_by(keys).agg(pl.col("seen").min().alias("first_seen"))
    return sent.join(first_seen, on=keys, how="left").filter(
        pl.col("other").is_not_null() | (pl.col("first_seen") < pl.col("ordinal"))
    )


@rule(
    code="RS017",
    name="cursor-not-issued",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="session",
)
def cursor_not_issued(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a list request whose `params.cursor` is not a `nextCursor` that an earlier
    result of the same method returned in the same session.

    The paginated lists are `tools/list`, `resources/list`, `resources/templates/list`,
    `prompts/list` and, in 2025-11-25, `tasks/list`. A cursor is good only for the
    method whose result returned it, so a `resources/list` cursor sent with
    `resources/templates/list` is flagged. Otherwise a request is not judged when its
    session has no earlier successful result of that method at all, as in a capture
    that starts in the middle of a pagination. Every string is a cursor, the empty
    string too (2026-07-28 makes `""` a valid cursor). `tasks/list`, which either side
    may send, takes cursors from the results to that side's own requests. In a session
    captured as two per-direction files, with no order between them, any result of the
    session counts as earlier.

    ## Why is this bad?
    A cursor is opaque: only the server knows what it encodes. A client that builds or
    edits one (`page=3`), keeps one from an earlier session or sends one list's cursor
    with another list asks for a position the server never gave out, and gets skipped
    or repeated items, an `Invalid params` error or, where the cursor encodes more than a
    position, someone else's listing.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a",
     "inputSchema": {"type": "object"}}], "nextCursor": "eyJwYWdlIjogMn0="}}
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "eyJwYWdlIjogM30="}}
    ```

    Use instead: send back exactly the `nextCursor` of the previous page.
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "eyJwYWdlIjogMn0="}}
    ```

    ## Reference
    "Clients MUST treat cursors as opaque tokens:" followed by "Don't attempt to parse or
    modify cursors" and "Don't persist cursors across sessions" —
    docs/specification/2026-07-28/server/utilities/pagination.mdx#implementation-guidelines
    (the same in every revision; 2026-07-28 adds "an empty string is a valid cursor and
    thus MUST NOT be treated as the end of results"). A cursor continues the listing that
    returned it: "After receiving a cursor, the client can continue paginating by issuing
    a request including that cursor" — same page, #request-format.
    """
    bad = _unissued_cursors(ctx)
    if bad.is_empty():
        return findings(bad, "")
    shown = (
        pl.when(pl.col("cursor").str.len_chars() > _CURSOR_SHOWN)
        .then(pl.col("cursor").str.slice(0, _CURSOR_SHOWN) + "…")
        .otherwise(pl.col("cursor"))
    )
    where = (
        pl.when(pl.col("other").is_not_null())
        .then(
            fmt(" (it is the nextCursor of the {} result at {})", "other", line_of("other_ordinal"))
        )
        .otherwise(pl.lit(""))
    )
    return findings(
        bad,
        fmt(
            '{} request sends cursor "{}", which no earlier {} result of this session '
            "returned as its nextCursor{}",
            "method",
            shown,
            "method",
            where,
        ),
    )


@rule(
    code="RS018",
    name="invalid-cursor-wrong-error",
    severity="warning",
    revisions=ALL_REVISIONS,
    scope="pairing",
)
def invalid_cursor_wrong_error(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an error answering a list request with a cursor the server could not have
    issued, or whose message says the cursor is at fault, when its code is not `-32602`.

    A cursor counts as not issued when RS017 says so: no earlier result of that list in
    the session returned it. An error whose message mentions the cursor (in any case)
    is judged whatever the cursor was. Errors without an integer code are JR008's.

    ## Why is this bad?
    `-32602` (Invalid params) is how a client tells a bad cursor from a failure of the
    server: on it the client can restart the listing from the first page. Another code,
    such as `-32603` (Internal error), reads as a broken server, so the client gives up
    or retries the same cursor.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "garbage"}}
    {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "bad cursor"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Invalid cursor"}}
    ```

    ## Reference
    "Invalid cursors SHOULD result in an error with code -32602 (Invalid params)." —
    server/utilities/pagination.mdx#error-handling (every revision).
    """
    # the typed tests first, on the part's own columns, which leave few rows for the test
    # of the method (the answered request's columns are cut into other chunks: a test
    # over a frame holding them costs more)
    typed = ctx.part("responses", "kind", "error_code", "parse_error").select(
        (pl.col("kind") == "error")
        & pl.col("parse_error").is_null()
        & pl.col("error_code").is_not_null()
        & (pl.col("error_code") != -32602)
    )
    errors = (
        ctx.part(
            "responses",
            "ordinal",
            "kind",
            "request_method",
            "request_ordinal",
            "error_code",
            "error_message",
            "parse_error",
        )
        .filter(typed.to_series())
        .filter(pl.col("request_method").is_in(_PAGINATED))
    )
    if errors.is_empty():
        return findings(errors, "")
    unissued = _unissued_cursors(ctx).select(request_ordinal="ordinal", _unissued=pl.lit(True))
    errors = errors.join(unissued, on="request_ordinal", how="left")
    blamed = pl.col("error_message").str.to_lowercase().str.contains("cursor", literal=True)
    errors = errors.filter(pl.col("_unissued").fill_null(False) | blamed.fill_null(False))
    # a message blaming the cursor counts only where the request sent one
    errors = ctx.lookup(errors, "request_ordinal", _request="message").with_columns(
        _cursor=pl.col("_request").str.json_path_match("$.params.cursor")
    )
    bad = errors.filter(pl.col("_cursor").is_not_null())
    why = (
        pl.when(pl.col("_unissued").fill_null(False))
        .then(pl.lit("a cursor no earlier result returned"))
        .otherwise(pl.lit("an invalid cursor"))
    )
    return findings(
        bad,
        fmt(
            "error {} answers the {} request with {}: invalid cursors should get -32602"
            " (Invalid params)",
            "error_code",
            "request_method",
            why,
        ),
    )
