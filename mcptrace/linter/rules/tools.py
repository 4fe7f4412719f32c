"""TL: tools -- tool definitions in ``tools/list`` results (the order of the list, their
``inputSchema`` and ``outputSchema``, the ``x-mcp-header`` annotations of 2026-07-28) and
what ``tools/call`` does with them (``structuredContent`` against ``outputSchema``,
``Mcp-Param-*`` headers on HTTP).

A tool's definition is the one in the latest earlier successful ``tools/list`` result
of the same session that lists the tool by name (any page). Each distinct result body
is parsed once (:func:`tool_definitions`); the rules then work on the few rows that name a
tool defined there.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections import Counter
from decimal import Decimal, InvalidOperation

import jsonschema_rs
import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.linter.context import LintContext, computed_where, settle
from mcptrace.linter.rule import (
    MODERN,
    SHOWN_CHARS,
    findings,
    line_of,
    quoted,
    rule,
    shown,
    since,
)
from mcptrace.linter.rules.transport import BASE64_VALUE, CONTROL_CHAR, client_http, needs_base64
from mcptrace.linter.schemas import json_path
from mcptrace.message_text import ENVELOPE
from mcptrace.protocol import INVALID_PARAMS

_LIST_CHANGED = "notifications/tools/list_changed"
#: RFC 9110 section 5.6.2: token = 1*tchar
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: the property types an `x-mcp-header` may annotate
_HEADER_TYPES = frozenset({"integer", "string", "boolean"})
#: keywords whose value maps names to subschemas
_SCHEMA_MAPS = ("patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
#: keywords whose value is a subschema or an array of subschemas
_SCHEMA_KEYWORDS = (
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
)
#: problems spelled out in one finding
_PROBLEMS_SHOWN = 8


def _joined(problems: list[str]) -> str:
    more = len(problems) - _PROBLEMS_SHOWN
    return "; ".join(problems[:_PROBLEMS_SHOWN]) + (f"; and {more} more" if more > 0 else "")


def _cut(text: pl.Expr) -> pl.Expr:
    """``text`` cut after :data:`SHOWN_CHARS` characters, ending in ``…`` when cut."""
    return (
        pl.when(text.str.len_chars() > SHOWN_CHARS)
        .then(text.str.slice(0, SHOWN_CHARS - 1) + "…")
        .otherwise(text)
    )


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 2 * SHOWN_CHARS else flat[: 2 * SHOWN_CHARS - 1] + "…"


# --- tool definitions --------------------------------------------------------------


def _pointer(parts: tuple[str | int, ...]) -> str:
    """A JSON pointer into `inputSchema` (``/properties/a``; ``/`` for the root)."""
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _annotations(
    schema: object,
) -> list[tuple[object, tuple[str | int, ...], tuple[str, ...] | None, object]]:
    """Every `x-mcp-header` in the (sub)schemas of ``schema``: its value, where it is (a
    pointer's parts), the property path when only `properties` lead there (else None) and
    the annotated schema's `type` (None when absent). Values of `enum`, `const`,
    `default` and other non-schema keywords are data, not schemas, and are not read."""
    found: list[tuple[object, tuple[str | int, ...], tuple[str, ...] | None, object]] = []
    stack: list[tuple[object, tuple[str | int, ...], tuple[str, ...] | None]] = [(schema, (), ())]
    while stack:
        node, where, chain = stack.pop()
        if not isinstance(node, dict):
            continue
        if "x-mcp-header" in node:
            found.append((node["x-mcp-header"], where, chain, node.get("type")))
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                deeper = None if chain is None else (*chain, name)
                stack.append((sub, (*where, "properties", name), deeper))
        for key in _SCHEMA_MAPS:
            value = node.get(key)
            if isinstance(value, dict):
                stack.extend((sub, (*where, key, k), None) for k, sub in value.items())
        for key in _SCHEMA_KEYWORDS:
            value = node.get(key)
            if isinstance(value, list):
                stack.extend((sub, (*where, key, i), None) for i, sub in enumerate(value))
            elif isinstance(value, dict):
                stack.append((value, (*where, key), None))
    found.sort(key=lambda a: [str(p) for p in a[1]])  # document order is lost; be stable
    return found


def _type_allowed(declared: object) -> bool:
    """The annotated property's `type` is integer, string or boolean (a list of these,
    null allowed beside them); an absent `type` is not judged."""
    if declared is None:
        return True
    if isinstance(declared, str):
        return declared in _HEADER_TYPES
    if isinstance(declared, list) and all(isinstance(k, str) for k in declared):
        kinds = set(declared)
        return kinds <= _HEADER_TYPES | {"null"} and bool(kinds - {"null"})
    return False


def _header_check(input_schema: object) -> tuple[str | None, str | None]:
    """What is wrong with the `x-mcp-header` annotations of one `inputSchema` (None when
    nothing is), and the headers to mirror as JSON text ``[[[property path], name], ...]``
    (None when there are none or any annotation is invalid)."""
    annotations = _annotations(input_schema)
    if not annotations:
        return None, None
    problems = []
    for value, where, chain, declared in annotations:
        at = _pointer(where)
        if not isinstance(value, str):
            problems.append(f"{shown(value)} at {at} is not a string")
            continue
        if not value:
            problems.append(f"the value at {at} is empty")
        elif CONTROL_CHAR.search(value):
            problems.append(f"{shown(value)} at {at} has control characters")
        elif not _TOKEN.fullmatch(value):
            problems.append(f"{shown(value)} at {at} is not an HTTP token")
        if chain is None:
            problems.append(f"{shown(value)} at {at} is not reached through properties alone")
        elif not chain:
            problems.append(f"{shown(value)} is on the schema root, not on a property")
            continue
        if not _type_allowed(declared):
            problems.append(f"{shown(value)} at {at} is on a property of type {shown(declared)}")
    names = [v for v, *_ in annotations if isinstance(v, str) and v]
    counts = Counter(v.lower() for v in names)
    for lowered, count in counts.items():
        if count > 1:
            same = [shown(v) for v in dict.fromkeys(v for v in names if v.lower() == lowered)]
            problems.append(
                f"{same[0]} is used {count} times"
                if len(same) == 1
                else f"{' and '.join(same)} are one header name (case is ignored)"
            )
    if problems:
        return _joined(problems), None
    mirrored = [[list(chain or ()), value] for value, _, chain, _ in annotations]
    return None, _json.dumps(mirrored)


#: the validator classes jsonschema-rs picks for each dialect it knows, by name
_DIALECTS: dict[type[jsonschema_rs.Validator], str] = {
    jsonschema_rs.Draft4Validator: "draft-04",
    jsonschema_rs.Draft6Validator: "draft-06",
    jsonschema_rs.Draft7Validator: "draft-07",
    jsonschema_rs.Draft201909Validator: "2019-09",
    jsonschema_rs.Draft202012Validator: "2020-12",
}
#: with a registry, meta-validation never fetches: a `$schema` naming a meta-schema
#: jsonschema-rs does not bundle raises ReferencingError instead of going to the network
_OFFLINE = jsonschema_rs.Registry([])


def _not_a_schema(schema: object) -> str | None:
    """Why ``schema`` is not a valid JSON Schema of its dialect (its `$schema`, 2020-12
    when absent); None when it is, or when `$schema` names a dialect not known here (a
    consumer must then report the dialect unsupported, which says nothing of the
    schema). ``ValidationError`` is a ``ValueError``: it is caught first."""
    if not isinstance(schema, dict | bool):
        return f"is {shown(schema)}, not a JSON Schema"
    try:
        jsonschema_rs.meta.validate(schema, registry=_OFFLINE)
    except jsonschema_rs.ValidationError as error:
        dialect = _DIALECTS.get(jsonschema_rs.validator_cls_for(schema), "2020-12")
        return (
            f"is not a valid JSON Schema ({dialect}) at {_pointer(tuple(error.instance_path))}: "
            f"{_one_line(error.message)}"
        )
    except jsonschema_rs.ReferencingError:
        return None
    except ValueError:  # what jsonschema-rs cannot take in (nested too deep) is not judged
        return None
    return None


def _schema_problems(tool: dict[str, object]) -> str | None:
    """What is wrong with the `inputSchema` and `outputSchema` of one tool definition: the
    input schema must be there, a JSON object, with `"type": "object"` at its root, and
    valid in its dialect; an output schema, when there, valid in its dialect."""
    problems = []
    if "inputSchema" not in tool:
        problems.append("no inputSchema")
    else:
        schema = tool["inputSchema"]
        if schema is None:
            problems.append("inputSchema is null")
        elif not isinstance(schema, dict):
            problems.append(f"inputSchema is {shown(schema)}, not an object")
        else:
            if "type" not in schema:
                problems.append('inputSchema has no "type": "object" at its root')
            elif schema["type"] != "object":
                problems.append(
                    f'inputSchema has "type": {shown(schema["type"])} at its root, not "object"'
                )
            invalid = _not_a_schema(schema)
            if invalid:
                problems.append(f"inputSchema {invalid}")
    if "outputSchema" in tool:
        invalid = _not_a_schema(tool["outputSchema"])
        if invalid:
            problems.append(f"outputSchema {invalid}")
    return ", ".join(problems) if problems else None


_ToolRow = tuple[int, str, str | None, str | None, str | None, str | None, str | None]


def _tools_of(body: str) -> list[_ToolRow]:
    """The tools of one `tools/list` result message: position, name, `outputSchema` as JSON
    text, `x-mcp-header` problems, headers to mirror (see :func:`_header_check`), schema
    problems (see :func:`_schema_problems`) and `execution.taskSupport` (when a string)."""
    try:
        doc = _json.loads(body)
    except _json.JSONDecodeError:
        return []
    result = doc.get("result") if isinstance(doc, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        return []
    out = []
    for position, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        schema = tool.get("outputSchema")
        output = _json.dumps(schema) if isinstance(schema, dict | bool) else None
        problem, mirrored = _header_check(tool.get("inputSchema"))
        execution = tool.get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        out.append(
            (
                position,
                tool["name"],
                output,
                problem,
                mirrored,
                _schema_problems(tool),
                support if isinstance(support, str) else None,
            )
        )
    return out


_DEFINITION_SCHEMA = {
    "list": pl.Int64,
    "position": pl.Int64,
    "tool": pl.String,
    "output_schema": pl.String,
    "header_problem": pl.String,
    "mirrored": pl.String,
    "schema_problem": pl.String,
    "task_support": pl.String,
}


def tool_lists(ctx: LintContext) -> pl.DataFrame:
    """Successful `tools/list` results: ordinal, session, request_ordinal, message and
    list: the ordinal of the first result with the same body, which joins stand on
    (hashing an integer, not the text). Results of one ``list`` have the same value at
    every path under ``$.result``, read with orjson or with ``str.json_path_match`` (RS016
    reads one result per list)."""
    return ctx.memo("tools.lists", _build_lists)


def _build_lists(ctx: LintContext) -> pl.DataFrame:
    rows = (
        ctx.part(
            "responses",
            "ordinal",
            "session",
            "kind",
            "request_method",
            "request_ordinal",
            "parse_error",
            "message",
        )
        .filter(pl.col("request_method") == "tools/list")
        .filter(pl.col("kind") == "response", pl.col("parse_error").is_null())
        .select("ordinal", "session", "request_ordinal", "message")
    )
    # a server sends the same list again and again, under a new id: the text from the
    # `"result":` member on is the same (cheaper to cut than the envelope to replace).
    # An id, a string without raw quotes, cannot hold that key; a text where `result`
    # comes first merely keeps its id and dedupes less. Two valid texts with the same
    # cut have the same top-level `result` (every `"result":` key is in the cut, at the
    # same depth in both). The cut is made only within the first 128 bytes: what comes
    # before it then nests less than serde_json's limit of 128 (json_path_match reads
    # null past it), so no text of a list fails to parse where another parses
    start = pl.col("message").str.find('"result":', literal=True)
    body = pl.col("message").str.slice(pl.when(start < 128).then(start).otherwise(0))
    return rows.with_columns(list=pl.col("ordinal").first().over(body))


def _tools(ctx: LintContext) -> pl.DataFrame:
    """Per distinct `tools/list` body (column ``list``), one row per tool (see
    :data:`_DEFINITION_SCHEMA`)."""
    return ctx.memo("tools.tools", _build_tools)


def _build_tools(ctx: LintContext) -> pl.DataFrame:
    bodies = tool_lists(ctx).select("list", "message").unique("list")
    rows = [(key, *tool) for key, body in bodies.iter_rows() for tool in _tools_of(body)]
    return pl.DataFrame(rows, schema=_DEFINITION_SCHEMA, orient="row")


def tool_definitions(ctx: LintContext) -> pl.DataFrame:
    """Every tool of every successful `tools/list` result: session, ordinal (of the
    result), tool, output_schema, header_problem, mirrored, task_support; by ordinal."""
    return ctx.memo(
        "tools.definitions",
        lambda ctx: (
            tool_lists(ctx)
            .join(_tools(ctx), on="list")
            .select(
                "session",
                "ordinal",
                "tool",
                "output_schema",
                "header_problem",
                "mirrored",
                "task_support",
            )
            .sort("ordinal")
        ),
    )


def defined_at(rows: pl.DataFrame, defs: pl.DataFrame, *columns: str) -> pl.DataFrame:
    """``rows`` (with session, ordinal, tool) plus ``columns`` of the tool's definition in
    the latest earlier `tools/list` result of its session (nulls when there is none)."""
    right = defs.select("session", "tool", pl.col("ordinal").alias("_defined"), *columns)
    return rows.sort("ordinal").join_asof(
        right,
        left_on="ordinal",
        right_on="_defined",
        by=["session", "tool"],
        strategy="backward",
        check_sortedness=False,
    )


# --- TL001 -------------------------------------------------------------------------


def _validator(
    schema: str, cache: dict[str, jsonschema_rs.Validator | None]
) -> jsonschema_rs.Validator | None:
    """The compiled ``schema`` (None when it does not compile), compiled once."""
    if schema not in cache:
        try:
            # offline: a capture is linted without the network; a remote $ref then fails
            cache[schema] = jsonschema_rs.validator_for(_json.loads(schema), offline=True)
        except Exception:  # any schema the validator refuses is skipped
            cache[schema] = None
    return cache[schema]


_MISSING = object()
_NOT_JUDGED = object()


def _structured(body: str) -> object:
    """`result.structuredContent` of a `tools/call` result body: :data:`_MISSING` when
    absent, :data:`_NOT_JUDGED` when the result is no tool result (a 2025-11-25 task
    handle) or cannot be read."""
    try:
        doc = _json.loads(body)
    except _json.JSONDecodeError:
        return _NOT_JUDGED
    result = doc.get("result") if isinstance(doc, dict) else None
    if not isinstance(result, dict) or ("task" in result and "content" not in result):
        return _NOT_JUDGED
    return result.get("structuredContent", _MISSING)


def _conformance(pairs: pl.DataFrame) -> list[str | None]:
    """For each (output_schema, _body) row: why the body's structuredContent does not
    conform to the schema, None when it does or cannot be judged."""
    validators: dict[str, jsonschema_rs.Validator | None] = {}
    verdicts: dict[tuple[str, str], str | None] = {}
    out: list[str | None] = []
    for schema, body in pairs.iter_rows():
        value = _structured(body)
        if value is _NOT_JUDGED:
            out.append(None)
            continue
        if value is _MISSING:
            out.append("has no structuredContent, but the tool declares an outputSchema")
            continue
        validator = _validator(schema, validators)
        if validator is None:
            out.append(None)
            continue
        key = (schema, _json.dumps(value))
        if key not in verdicts:
            try:
                error = next(iter(validator.iter_errors(value)), None)
            except Exception:  # a value the validator cannot take is not judged
                error = None
            verdicts[key] = (
                None
                if error is None
                else f"has structuredContent that fails its outputSchema at "
                f"{json_path(error.instance_path)}: {_one_line(error.message)}"
            )
        out.append(verdicts[key])
    return out


@rule(
    code="TL001",
    name="structured-content-mismatch",
    severity="error",
    revisions=since("2025-06-18"),
    scope="pairing",
)
def structured_content_mismatch(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a successful `tools/call` result without `structuredContent`, or with one that
    does not validate against the tool's `outputSchema`.

    The tool's definition is the one in the latest earlier `tools/list` result of the
    same session that lists it; a tool no earlier result lists, or one listed without
    an `outputSchema`, is not judged. Tool execution errors (`isError: true`),
    `input_required` results and 2025-11-25 task handles (`CreateTaskResult`) are not
    tool output and are not judged either. The finding gives the first validation
    error and the path of the offending value. An `outputSchema` the validator cannot
    compile, or one with a `$ref` to another document (nothing is fetched), is skipped.

    ## Why is this bad?
    The `outputSchema` is a promise: clients hand `structuredContent` to code and models
    typed after it, and are told to validate it. A result that breaks the schema is
    rejected or, worse, read with the wrong types; a missing `structuredContent` leaves
    the client with only the text to parse.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "weather",
     "inputSchema": {"type": "object"}, "outputSchema": {"type": "object",
     "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]}}]}}
    {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hot"}],
     "structuredContent": {"temperature": "hot"}}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text",
     "text": "{\\"temperature\\": 31.5}"}], "structuredContent": {"temperature": 31.5}}}
    ```

    ## Reference
    "Servers MUST provide structured results that conform to this schema." —
    docs/specification/2026-07-28/server/tools.mdx#output-schema (the same words in
    2025-06-18 and 2025-11-25; 2025-03-26 and earlier have no `outputSchema`).
    """
    defs = tool_definitions(ctx)
    sessions = defs.filter(pl.col("output_schema").is_not_null())["session"].unique()
    if sessions.is_empty():
        return findings(defs.clear(), "")
    columns = ("ordinal", "session", "kind", "request_method", "request_ordinal", "tool_error")
    rows = (
        ctx.part("responses", *columns, "result_type", "parse_error", "message")
        .filter(pl.col("session").is_in(sessions.implode()))
        .filter(
            pl.col("request_method") == "tools/call",
            pl.col("kind") == "response",
            pl.col("parse_error").is_null(),
            ~pl.col("tool_error").fill_null(False),
            pl.col("result_type").fill_null("") != "input_required",
        )
    )
    rows = ctx.lookup(rows, "request_ordinal", tool="target").filter(pl.col("tool").is_not_null())
    rows = defined_at(rows, defs, "output_schema").filter(pl.col("output_schema").is_not_null())
    if rows.is_empty():
        return findings(rows, "")
    rows = rows.with_columns(_body=pl.col("message").str.replace(ENVELOPE, "{"))
    pairs = rows.select("output_schema", "_body").unique()
    pairs = pairs.with_columns(pl.Series("_problem", _conformance(pairs), dtype=pl.String)).filter(
        pl.col("_problem").is_not_null()
    )
    bad = rows.join(pairs, on=["output_schema", "_body"], maintain_order="left")
    return findings(bad, fmt("result of tool {} {}", quoted(bad, "tool"), "_problem"))


# --- TL002 -------------------------------------------------------------------------


@rule(
    code="TL002",
    name="tools-order-changed",
    severity="warning",
    revisions=MODERN,
    scope="session",
)
def tools_order_changed(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `tools/list` result that lists the same tool names as the session's previous
    one, in another order, with no `notifications/tools/list_changed` between the two.

    Only whole lists and first pages are compared (results to a request without a
    `cursor`): a later page starts wherever the server's cursor says. Each result is
    compared with the previous one of its session; the later one is flagged. Lists
    with different names, or the same names after a `list_changed` notification, are
    not judged, nor is a result whose request is not in the capture.

    ## Why is this bad?
    Clients cache the tool list and put it in the model's context; the same tools in a
    new order look like a changed list, spoil the client's cache and the model
    provider's prompt cache, and can change which tool a model picks.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": [
      {"name": "a", "inputSchema": {"type": "object"}},
      {"name": "b", "inputSchema": {"type": "object"}}], "ttlMs": 0, "cacheScope": "public"}}
    {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "tools": [
      {"name": "b", "inputSchema": {"type": "object"}},
      {"name": "a", "inputSchema": {"type": "object"}}], "ttlMs": 0, "cacheScope": "public"}}
    ```

    Use instead: return the tools in a fixed order, e.g. sorted by name, every time.
    ```json
    {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "tools": [
      {"name": "a", "inputSchema": {"type": "object"}},
      {"name": "b", "inputSchema": {"type": "object"}}], "ttlMs": 0, "cacheScope": "public"}}
    ```

    ## Reference
    "Servers SHOULD return tools in a deterministic order (i.e., the same ordering across
    requests when the underlying set of tools has not changed)." —
    docs/specification/2026-07-28/server/tools.mdx#capabilities (new in 2026-07-28).
    """
    lists = tool_lists(ctx)
    names = _tools(ctx).sort("position").group_by("list").agg(_names=pl.col("tool"))
    # only lists whose names some other distinct list has in another order can matter
    mixed = names.filter(pl.col("_names").n_unique().over(pl.col("_names").list.sort()) > 1)
    if mixed.is_empty():
        return findings(lists.clear(), "")
    sessions = lists.filter(pl.col("list").is_in(mixed["list"].implode()))["session"].unique()
    lists = ctx.lookup(
        lists.filter(pl.col("session").is_in(sessions.implode())),
        "request_ordinal",
        _request="message",
    )
    cursor = pl.when(pl.col("_request").str.contains('"cursor"', literal=True)).then(
        pl.col("_request").str.json_path_match("$.params.cursor")
    )
    first = lists.filter(pl.col("_request").is_not_null(), cursor.is_null())
    first = (
        first.join(names, on="list", how="left")
        .with_columns(pl.col("_names").fill_null(pl.lit([], dtype=pl.List(pl.String))))
        .sort("ordinal")
        .with_columns(
            _before=pl.col("_names").shift(1).over("session"),
            _before_ordinal=pl.col("ordinal").shift(1).over("session"),
        )
    )
    moved = first.filter(
        pl.col("_before").is_not_null(),
        pl.col("_names") != pl.col("_before"),
        pl.col("_names").list.sort() == pl.col("_before").list.sort(),
    )
    if moved.is_empty():
        return findings(moved, "")
    changed = (
        ctx.part("notifications", "ordinal", "session", "method")
        .filter(pl.col("session").is_in(moved["session"].unique().implode()))
        .filter(pl.col("method") == _LIST_CHANGED)
        .select("session", _changed="ordinal")
        .sort("_changed")
    )
    moved = moved.join_asof(
        changed,
        left_on="ordinal",
        right_on="_changed",
        by="session",
        strategy="backward",
        check_sortedness=False,
    ).filter(pl.col("_changed").is_null() | (pl.col("_changed") < pl.col("_before_ordinal")))
    return findings(
        moved,
        fmt(
            "tools/list lists the same {} tools as the result on {} in another order "
            "({}; was {}) with no {} in between",
            pl.col("_names").list.len(),
            line_of("_before_ordinal"),
            _names_shown("_names"),
            _names_shown("_before"),
            pl.lit(_LIST_CHANGED),
        ),
    )


def _names_shown(column: str) -> pl.Expr:
    """A list of tool names as ``a, b, c``, cut after :data:`SHOWN_CHARS` characters."""
    return _cut(pl.col(column).list.join(", "))


# --- TL003 -------------------------------------------------------------------------


@rule(
    code="TL003",
    name="x-mcp-header-invalid",
    severity="error",
    revisions=MODERN,
    scope="message",
)
def x_mcp_header_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `tools/list` result with a tool whose `inputSchema` has an `x-mcp-header`
    annotation that breaks the rules for these values.

    The value must be a non-empty string, an HTTP token (RFC 9110 `1*tchar`, so no
    control characters such as CR or LF), and no other `x-mcp-header` of the same
    `inputSchema` may have the same value ignoring case. It must sit on a property
    reached from the schema root through `properties` alone (not through `items`,
    `anyOf`, `allOf`, `oneOf`, `not`, `if`/`then`/`else`, `$defs` or any other
    keyword), and that property's `type` must be `integer`, `string` or `boolean` (a
    list of these, `null` allowed beside them). A property with no `type` is not
    judged, and the range of integer values is a matter for the calls. One finding per
    result names every offending tool and what is wrong.

    ## Why is this bad?
    An HTTP client must drop a tool whose annotations break these rules from the list it
    shows, so the tool silently disappears for every client on Streamable HTTP. Values
    that are not header names, or two properties mapped to one header, would let a
    proxy route or authorise on a header that does not say what the body says.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": [
      {"name": "query", "inputSchema": {"type": "object", "properties": {
       "a": {"type": "number", "x-mcp-header": "Zone"},
       "b": {"type": "string", "x-mcp-header": "zone"}}}}],
     "ttlMs": 0, "cacheScope": "public"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": [
      {"name": "query", "inputSchema": {"type": "object", "properties": {
       "a": {"type": "integer", "x-mcp-header": "Shard"},
       "b": {"type": "string", "x-mcp-header": "Zone"}}}}],
     "ttlMs": 0, "cacheScope": "public"}}
    ```

    ## Reference
    "Clients using the Streamable HTTP transport MUST reject tool definitions where any
    `x-mcp-header` value violates these constraints." after the constraints ("MUST NOT
    be empty", "MUST match HTTP field-name token syntax", "MUST NOT contain control
    characters", "MUST be case-insensitively unique among all `x-mcp-header` values in
    the `inputSchema`", "MUST only be applied to parameters with primitive types
    (integer, string, boolean)", "MUST only be applied to properties that are
    _statically reachable_ from the schema root") —
    docs/specification/2026-07-28/server/tools.mdx#x-mcp-header; reachability: "reachable
    via a chain consisting solely of `properties` keys" —
    docs/specification/2026-07-28/basic/transports/streamable-http.mdx#schema-extension
    (both new in 2026-07-28).
    """
    tools = _tools(ctx).filter(pl.col("header_problem").is_not_null())
    if tools.is_empty():
        return findings(tool_lists(ctx).clear(), "")
    by_body: dict[int, list[str]] = {}
    for body, tool, problem in (
        tools.sort("position").select("list", "tool", "header_problem").iter_rows()
    ):
        by_body.setdefault(body, []).append(f"tool {shown(tool)}: {problem}")
    verdicts = pl.DataFrame(
        {"list": list(by_body), "_problem": [_joined(p) for p in by_body.values()]},
        schema={"list": pl.Int64, "_problem": pl.String},
    )
    bad = tool_lists(ctx).join(verdicts, on="list", maintain_order="left")
    return findings(
        bad, fmt("tools/list result has invalid x-mcp-header annotations: {}", "_problem")
    )


# --- TL004 -------------------------------------------------------------------------


def _same_number(text: str, value: float) -> bool:
    try:
        return Decimal(text.strip()) == Decimal(repr(value))
    except InvalidOperation:
        return False


def _mismatch(value: object, sent: object) -> str | None:
    """Why header value ``sent`` does not carry argument ``value``; None when it does
    (or when ``value`` is an object or array, which has no header form)."""
    if isinstance(sent, list) and len(sent) == 1:
        sent = sent[0]
    if not isinstance(sent, str):
        return "is not a single string, for"
    encoded = BASE64_VALUE.fullmatch(sent)
    if encoded:
        try:
            text = base64.b64decode(encoded.group(1), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return "is not valid Base64 of UTF-8 text, for"
    else:
        text = sent
        if isinstance(value, str) and needs_base64(value) and text == value:
            return "is not Base64-encoded, as it must be for"
    if isinstance(value, bool):
        same = text == ("true" if value else "false")
    elif isinstance(value, int | float):
        same = _same_number(text, value)
    elif isinstance(value, str):
        same = text == value
    else:
        return None
    return None if same else "does not match"


def _mirror_problems(mirrored: str, arguments: str | None, headers: str) -> str | None:
    """What is wrong with the `Mcp-Param-*` headers ``headers`` (JSON text) of a call with
    ``arguments`` (JSON text) to a tool whose annotations are ``mirrored``."""
    try:
        spec = _json.loads(mirrored)
        args = _json.loads(arguments) if arguments is not None else {}
        sent = _json.loads(headers)
    except _json.JSONDecodeError:
        return None
    if not isinstance(sent, dict):
        return None
    by_name: dict[str, object] = {}
    for key, text in sent.items():
        by_name.setdefault(key.lower(), text)
    problems = []
    for path, name in spec:
        value: object = args
        for key in path:
            value = value.get(key, _MISSING) if isinstance(value, dict) else _MISSING
        header = f"Mcp-Param-{name}"
        if value is _MISSING or value is None:
            # the header must then be left out
            if header.lower() in by_name:
                what = "absent" if value is _MISSING else "null"
                problems.append(f"{header} header sent, but argument {'.'.join(path)} is {what}")
            continue
        argument = f"argument {'.'.join(path)} = {shown(value)}"
        if header.lower() not in by_name:
            problems.append(f"no {header} header for {argument}")
            continue
        why = _mismatch(value, by_name[header.lower()])
        if why:
            problems.append(f"{header} {shown(by_name[header.lower()])} {why} {argument}")
    return _joined(problems) if problems else None


@rule(
    code="TL004",
    name="x-mcp-header-not-mirrored",
    severity="error",
    revisions=MODERN,
    scope="transport",
)
def x_mcp_header_not_mirrored(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an HTTP `tools/call` request without the `Mcp-Param-{Name}` header, or with a
    wrong value in it, for an argument the tool annotates with `x-mcp-header: Name`.

    The tool's definition is the one in the latest earlier `tools/list` result of the
    session; a tool with invalid annotations (see TL003) is not judged, as the client
    must not use it. Header names are compared ignoring case. A value of the form
    `=?base64?…?=` is decoded first; a string that needs that form (non-ASCII text,
    control characters, leading or trailing whitespace, the sentinel form itself) sent
    plain is flagged. Integers and other numbers are compared as numbers (`42` and
    `42.0` match), booleans as `true`/`false`. An argument that is absent or `null` must
    have no header (one sent is flagged), objects and arrays only need one to be there,
    and a request whose headers were not captured is not judged.

    ## Why is this bad?
    Load balancers, gateways and firewalls route and authorise on these headers without
    reading the body. A missing or different header sends the request to the wrong
    place or past the wrong policy, and a conforming server rejects it with `400` and
    `HeaderMismatch` (`-32020`).

    ## Example
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/call", "Mcp-Name": "execute_sql"}},
     "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
      "name": "execute_sql", "arguments": {"region": "us-west1", "query": "SELECT 1"},
      "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    Use instead: add `"Mcp-Param-Region": "us-west1"` to the headers (the tool's
    `region` property has `"x-mcp-header": "Region"`).
    ```json
    {"dir": "c2s", "http": {"method": "POST", "headers": {"MCP-Protocol-Version": "2026-07-28",
     "Mcp-Method": "tools/call", "Mcp-Name": "execute_sql", "Mcp-Param-Region": "us-west1"}},
     "msg": {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
      "name": "execute_sql", "arguments": {"region": "us-west1", "query": "SELECT 1"},
      "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {}}}}}
    ```

    ## Reference
    "When a server's tool definition includes `x-mcp-header` annotations, conforming
    clients MUST mirror the designated parameter values into HTTP headers." —
    docs/specification/2026-07-28/basic/transports/streamable-http.mdx#custom-headers-from-tool-parameters;
    "Clients MUST encode parameter values before including them in HTTP headers" and
    "clients MUST use Base64 encoding of the UTF-8 representation" — same page,
    #value-encoding (new in 2026-07-28); "Parameter value is `null`" and "Parameter not
    in arguments": "Client MUST omit the header" — same page, the table of edge cases.
    """
    defs = tool_definitions(ctx)
    sessions = defs.filter(pl.col("mirrored").is_not_null())["session"].unique()
    if sessions.is_empty():
        return findings(defs.clear(), "")
    rows = (
        client_http(ctx)
        .filter(pl.col("session").is_in(sessions.implode()))
        .filter(
            pl.col("method") == "tools/call",
            pl.col("http_headers").is_not_null(),
            pl.col("parse_error").is_null(),
            pl.col("target").is_not_null(),
        )
        .select("ordinal", "session", "http_headers", "message", tool="target")
    )
    rows = defined_at(rows, defs, "mirrored").filter(pl.col("mirrored").is_not_null())
    if rows.is_empty():
        return findings(rows, "")
    rows = rows.with_columns(_arguments=pl.col("message").str.json_path_match("$.params.arguments"))
    keys = ["mirrored", "_arguments", "http_headers"]
    distinct = rows.select(keys).unique()
    distinct = distinct.with_columns(
        pl.Series(
            "_problem",
            [_mirror_problems(*key) for key in distinct.iter_rows()],
            dtype=pl.String,
        )
    ).filter(pl.col("_problem").is_not_null())
    bad = rows.join(distinct, on=keys, nulls_equal=True, maintain_order="left")
    return findings(bad, fmt("HTTP tools/call of {}: {}", quoted(bad, "tool"), "_problem"))


# --- TL005 -------------------------------------------------------------------------


@rule(
    code="TL005",
    name="tool-input-schema-invalid",
    severity="error",
    revisions=since("2025-11-25"),
    scope="message",
)
def tool_input_schema_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a `tools/list` result with a tool whose `inputSchema` is missing, `null`, not an
    object, not of `"type": "object"` or not a valid JSON Schema, or whose `outputSchema`
    is invalid.

    Valid means valid against the meta-schema of the schema's dialect: the one its
    `$schema` names (draft-04, draft-06, draft-07, 2019-09 or 2020-12), 2020-12 when it
    has none. A schema whose `$schema` names another dialect is checked for its root
    `type` only, and nothing is fetched. The meta-schemas do not check what their
    `format` annotations describe (a `pattern` that is no regular expression), nor
    whether a `$ref` resolves. `"type": "object"` is required of the `inputSchema` root
    exactly (both revisions' `schema.json` make it a constant; `["object"]` does not
    count). Of an `outputSchema` only validity is checked (a boolean schema passes; the
    root `"type": "object"` the 2025-11-25 `schema.json` asks of it is left to schema
    validation, SC). One finding per result names every offending tool and what is
    wrong; tools without a string `name` are left to schema validation too.

    ## Why is this bad?
    Clients validate arguments against `inputSchema` and hand it to the model as the
    tool's signature. A schema that is `null`, a string, or broken (`"properties": 5`)
    makes a strict client reject the tool or the whole list, and a lenient one guess,
    or call the tool with arguments the server cannot read. A root that is not
    `"type": "object"` cannot describe arguments, which are always a JSON object. A
    broken `outputSchema` leaves the client unable to check `structuredContent`.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
      {"name": "get_time", "inputSchema": null},
      {"name": "search", "inputSchema": {"type": "object", "properties": 5}}]}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
      {"name": "get_time", "inputSchema": {"type": "object", "additionalProperties": false}},
      {"name": "search", "inputSchema": {"type": "object",
       "properties": {"query": {"type": "string"}}}}]}}
    ```

    ## Reference
    `inputSchema` "MUST be a valid JSON Schema object (not `null`)" —
    docs/specification/2026-07-28/server/tools.mdx#tool (the same words in 2025-11-25,
    docs/specification/2025-11-25/server/tools.mdx#tool); both schemas follow the JSON
    Schema usage guidelines, where "Schemas MUST be valid according to their declared or
    default dialect" — docs/specification/2026-07-28/basic/index.mdx#schema-validation
    (2025-11-25 and 2026-07-28); the `Tool.inputSchema` definition of both revisions'
    `schema.json` requires `"type": "object"`.
    """
    tools = _tools(ctx).filter(pl.col("schema_problem").is_not_null())
    if tools.is_empty():
        return findings(tool_lists(ctx).clear(), "")
    by_body: dict[int, list[str]] = {}
    for body, tool, problem in (
        tools.sort("position").select("list", "tool", "schema_problem").iter_rows()
    ):
        by_body.setdefault(body, []).append(f"tool {shown(tool)}: {problem}")
    verdicts = pl.DataFrame(
        {"list": list(by_body), "_problem": [_joined(p) for p in by_body.values()]},
        schema={"list": pl.Int64, "_problem": pl.String},
    )
    bad = tool_lists(ctx).join(verdicts, on="list", maintain_order="left")
    return findings(bad, fmt("tools/list result has invalid tool schemas: {}", "_problem"))


@rule(
    code="TL006",
    name="tool-input-error-as-protocol-error",
    severity="warning",
    revisions=("2025-11-25",),
    scope="pairing",
)
def tool_input_error_as_protocol_error(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a well-formed `tools/call` of a listed tool answered with the protocol error
    `-32602` (Invalid params) instead of a result with `isError: true`.

    The arguments did not satisfy the tool, which 2025-11-25 counts as a tool execution
    error, reported in a result. The tool is listed when the latest earlier `tools/list`
    result of the session names it; the request is well formed when its `arguments` is
    an object or absent. An unknown tool, or a request whose `arguments` is not an
    object, is rightly answered with `-32602` and is not flagged, nor is a call made as
    a task (`params.task`), which a tool may refuse with a protocol error; other error codes
    (`-32603` for a failure of the server) are not judged. Only 2025-11-25 is judged:
    2026-07-28 lists "Invalid input data" among tool execution errors too, but its own
    schema example answers invalid tool arguments with `-32602`, so that revision
    contradicts itself.

    ## Why is this bad?
    A tool execution error carries actionable feedback the client hands to the model, so
    the model can correct its arguments and call again; clients need not show protocol
    errors to the model at all. Answered as a protocol error, a missing or out-of-range
    argument ends the tool call instead of being fixed.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "get_forecast", "arguments": {"days": 40}}}
    {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602,
     "message": "Invalid arguments for tool get_forecast: days must be at most 7"}}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "result": {"isError": true, "content": [{"type": "text",
     "text": "days must be at most 7"}]}}
    ```

    ## Reference
    "Any errors that originate from the tool SHOULD be reported inside the result object,
    with `isError` set to true, _not_ as an MCP protocol-level error response." —
    schema/2025-11-25/schema.ts (`CallToolResult.isError`); "**Tool Execution Errors**:
    Reported in tool results with `isError: true`: [...] Input validation errors (e.g.,
    date in wrong format, value out of range)" —
    docs/specification/2025-11-25/server/tools.mdx#error-handling (2025-11-25).
    """
    # only the columns read are filtered (the calls table has ~30), by the error code
    # first: a test of integers that leaves few rows for the others
    calls = (
        ctx.calls.select(
            "session",
            "direction",
            "method",
            "target",
            "error_code",
            "error_message",
            "request_ordinal",
            "response_ordinal",
        )
        .filter(pl.col("error_code") == INVALID_PARAMS)
        .filter(
            (pl.col("method") == "tools/call")
            & (pl.col("direction") == "c2s")
            & pl.col("target").is_not_null()
            & pl.col("response_ordinal").is_not_null()
            # "the latest earlier tools/list result" needs both directions in one order
            & ~pl.col("session").is_in(ctx.unordered_sessions.implode())
        )
        .select(
            "session",
            "response_ordinal",
            "error_message",
            ordinal="request_ordinal",
            tool="target",
            request_ordinal="request_ordinal",
        )
    )
    if calls.is_empty():
        return findings(pl.DataFrame(schema={"ordinal": pl.Int64}), "")
    listed = defined_at(calls, tool_definitions(ctx)).filter(pl.col("_defined").is_not_null())
    listed = ctx.lookup(listed, "ordinal", _request="message", parse_error="parse_error").filter(
        pl.col("parse_error").is_null()
    )
    request = pl.col("_request")
    arguments = request.str.json_path_match("$.params.arguments")
    # well formed: `arguments` an object or absent. A text that spells the key once (no
    # escape can hide another), with an object after it, is well formed without a parse:
    # params.arguments is that object, or absent when the key is not params'
    one_object = (
        request.str.contains('"arguments":{', literal=True)
        & (request.str.count_matches('"arguments"', literal=True) == 1)
        & ~request.str.contains("\\", literal=True)
    )
    well_formed = settle(listed, one_object, arguments.is_null() | arguments.str.starts_with("{"))
    # a task-augmented call of a tool that does not take tasks is refused with an error
    # (the spec asks for -32601; TK rules judge the code), not a tool execution error.
    # Only a text that spells `"task"`, or hides a key behind an escape, can have one
    spelled = request.str.contains(r'"task"|\\')
    bad = (
        computed_where(
            listed.filter(well_formed), spelled, _task=request.str.json_path_match("$.params.task")
        )
        .filter(pl.col("_task").is_null())
        .with_columns(ordinal="response_ordinal")
    )
    return findings(
        bad.sort("ordinal"),
        fmt(
            'tools/call of the listed tool "{}" ({}) answered with protocol error -32602'
            ' "{}": an input validation error belongs in a result with isError: true',
            "tool",
            line_of("request_ordinal"),
            _cut(pl.col("error_message").fill_null("")),
        ),
    )
