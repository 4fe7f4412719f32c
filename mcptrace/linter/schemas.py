"""Whole-message validation against the official MCP JSON Schemas (``--schema-dir``).

The folder given by ``--schema-dir`` holds one ``<revision>/schema.json`` per
revision (the files published in the specification repository under
``schema/<revision>/``). 2024-11-05 … 2025-06-18 are JSON Schema draft-07 with
their definitions under ``definitions``; 2025-11-25 and later are 2020-12 with
``$defs``. None has a root type, so a definition ``X`` is checked by wrapping the
whole document as ``{**schema, "$ref": "#/<definitions-key>/X"}``.

Which definitions a message is checked against (SPEC_RULES §6):

``envelope``
    ``JSONRPCRequest`` / ``JSONRPCNotification`` for requests and notifications;
    ``JSONRPCResponse`` / ``JSONRPCError`` for responses up to 2025-06-18,
    ``JSONRPCResultResponse`` / ``JSONRPCErrorResponse`` from 2025-11-25.
``message``
    the method's ``<X>Request`` / ``<X>Notification`` (:data:`MESSAGE_DEFS`) when the
    revision knows the method as that kind. Up to 2025-06-18 these lack
    ``jsonrpc``/``id``, hence the separate envelope check.
``result``
    the result type of the request the response answers: up to 2025-11-25
    ``msg.result`` against ``<X>Result`` (``CreateTaskResult`` for a 2025-11-25
    task-augmented request); in 2026-07-28 the whole message against
    ``<X>ResultResponse``. For the multi round-trip methods that definition admits
    any result through ``InputRequiredResult`` (which lacks a ``resultType`` const,
    SPEC_RULES §6 quirk 4), so a result that says ``"resultType": "complete"`` is
    checked against ``<X>Result`` itself: every result that passes it also passes
    ``<X>ResultResponse``.
``error``
    the definition dedicated to the error code, if the revision has one
    (:func:`error_schema_def`): whole-message definitions (-32020…-32022 in
    2026-07-28, -32042 in 2025-11-25) against the message, the 2026-07-28
    ``ParseError`` … ``InternalError`` against ``msg.error``.

Two definitions are widened to what ``schema.ts`` says, since the spec names it "the
source of truth for all protocol messages and structures" (basic/index.mdx) and the
JSON is generated from it with ``--defaultNumberType integer``, which turned every
unannotated TypeScript ``number`` into ``integer`` (:data:`WIDENED`): the values of an
``ElicitResult``'s ``content`` (what a user typed into a ``"type": "number"`` field,
``3.14`` say) and, in 2026-07-28, ``JSONValue`` (any JSON: experimental capabilities,
which also lost their ``null``). Counts, sizes, codes, ids and ``ttlMs`` stay integers,
as their prose says they are.

Formats (``uri``, ``uri-template``, ``byte``) are not asserted, in either dialect
(SPEC_RULES §6 quirk 10). Errors a later check shares with the envelope check
(same place, same reason) are reported once, by the envelope. The one error not
reported is an ``"id": null`` on a -32700/-32600 error response: JSON-RPC 2.0 requires
it when the request's id could not be read, but no MCP schema admits a null id.

The validator is ``jsonschema-rs``; validators are built once per schema file and
definition. Choosing the definitions is vectorised (one plan per distinct
revision/kind/method/code combination); validation itself needs one Python call per
message and definition, in a tight loop per definition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, Literal

import jsonschema_rs
import polars as pl

from mcptrace import _json
from mcptrace.errors import UsageError
from mcptrace.protocol import REVISIONS
from mcptrace.protocol.errors import error_schema_def
from mcptrace.protocol.methods import (
    MESSAGE_DEFS,
    TASK_AUGMENTATION_GATES,
    method_spec,
    result_response_def,
)

__all__ = [
    "VALIDATION_SCHEMA",
    "Check",
    "available_revisions",
    "definitions",
    "json_path",
    "validate_messages",
    "validator",
]

#: Which SC check a validation row belongs to (SC001 … SC004).
Check = Literal["envelope", "message", "result", "error"]
#: Which part of the message a definition describes.
Part = Literal["message", "result", "error"]

#: Columns of :func:`validate_messages`' result: one row per message and failing
#: definition; ``path`` and ``error`` describe the first error, ``errors`` counts them.
VALIDATION_SCHEMA: Final = pl.Schema(
    {
        "ordinal": pl.Int64(),
        "check": pl.String(),
        "definition": pl.String(),
        "path": pl.String(),
        "error": pl.String(),
        "errors": pl.Int64(),
    }
)

_PROTOCOL_KINDS: Final = ("request", "notification", "response", "error")
#: Envelope definitions per kind, most specific first; the first one the schema defines
#: is used (2025-11-25 still has ``JSONRPCResponse``, as the result/error union).
_ENVELOPES: Final[Mapping[str, tuple[str, ...]]] = {
    "request": ("JSONRPCRequest",),
    "notification": ("JSONRPCNotification",),
    "response": ("JSONRPCResultResponse", "JSONRPCResponse"),
    "error": ("JSONRPCErrorResponse", "JSONRPCError"),
}
_MAX_REASON: Final = 200
# Plan keys: every column a plan depends on, as strings ("" = null) so joins match.
_KEYS: Final = ("revision", "kind", "method", "request_method", "request_task", "code", "rtype")


# --- schema files and validators ----------------------------------------------------


def _schema_file(schema_dir: Path, revision: str) -> Path:
    return schema_dir / revision / "schema.json"


def available_revisions(schema_dir: Path) -> tuple[str, ...]:
    """Known revisions that have ``schema_dir/<revision>/schema.json``.

    Raises :class:`UsageError` when ``schema_dir`` is not a folder or holds none.
    """
    if not schema_dir.is_dir():
        raise UsageError(f"--schema-dir {schema_dir}: not a directory")
    found = tuple(r for r in REVISIONS if _schema_file(schema_dir, r).is_file())
    if not found:
        raise UsageError(
            f"--schema-dir {schema_dir}: no <revision>/schema.json "
            f"for any of {', '.join(REVISIONS)}"
        )
    return found


def _stamp(path: Path) -> tuple[str, int]:
    """Cache key of a schema file: its resolved path and modification time."""
    resolved = path.resolve()
    return str(resolved), resolved.stat().st_mtime_ns


@lru_cache(maxsize=16)
def _document(path: str, mtime_ns: int) -> tuple[dict[str, Any], str]:
    """The parsed schema.json and its definitions key (``$defs`` or ``definitions``)."""
    try:
        doc = _json.loads(Path(path).read_bytes())
    except (OSError, _json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read schema {path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise UsageError(f"schema {path} is not a JSON object")
    key = "$defs" if isinstance(doc.get("$defs"), dict) else "definitions"
    if not isinstance(doc.get(key), dict):
        raise UsageError(f"schema {path} has neither $defs nor definitions")
    return {**doc, key: _with_numbers_widened(doc[key])}, key


#: Definitions whose numbers schema.json narrows to integers where schema.ts allows any
#: number (see the module doc), and the part of each to widen: definition -> (path of
#: members to the part, whether the part also takes ``null``)
WIDENED: Final[Mapping[str, tuple[tuple[str, ...], bool]]] = {
    # schema.ts: content?: { [key: string]: string | number | boolean | string[] }
    "ElicitResult": (("properties", "content"), False),
    # schema.ts: string | number | boolean | null | JSONObject | JSONArray
    "JSONValue": ((), True),
}


def _widened(node: Any, with_null: bool) -> Any:
    """``node`` with each ``"type"`` that admits ``integer`` admitting any number (and
    ``null`` when ``with_null``) instead; a new value, ``node`` is left as it is."""
    if isinstance(node, list):
        return [_widened(item, with_null) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _widened(value, with_null) for key, value in node.items()}
    kinds = node.get("type")
    listed = [kinds] if isinstance(kinds, str) else kinds
    if isinstance(listed, list) and "integer" in listed:
        widened = ["number" if kind == "integer" else kind for kind in listed]
        if with_null and "null" not in widened:
            widened.append("null")
        out["type"] = widened if len(widened) > 1 else widened[0]
    return out


def _widened_at(node: Any, path: tuple[str, ...], with_null: bool) -> Any:
    """``node`` with its part at ``path`` (members from it) widened by :func:`_widened`."""
    if not path:
        return _widened(node, with_null)
    if not isinstance(node, dict) or path[0] not in node:
        return node
    return {**node, path[0]: _widened_at(node[path[0]], path[1:], with_null)}


def _with_numbers_widened(defs: Mapping[str, Any]) -> dict[str, Any]:
    """``defs`` with the parts named by :data:`WIDENED` widened."""
    out = dict(defs)
    for name, (path, with_null) in WIDENED.items():
        if name in out:
            out[name] = _widened_at(out[name], path, with_null)
    return out


def definitions(schema_dir: Path, revision: str) -> Mapping[str, Any]:
    """The definitions map of ``schema_dir/<revision>/schema.json`` (cached)."""
    doc, key = _document(*_stamp(_schema_file(schema_dir, revision)))
    defs: Mapping[str, Any] = doc[key]
    return defs


@lru_cache(maxsize=1024)
def _validator(path: str, mtime_ns: int, definition: str) -> jsonschema_rs.Validator:
    doc, key = _document(path, mtime_ns)
    wrapped = {**doc, "$ref": f"#/{key}/{definition}"}
    # The draft comes from the document's $schema; formats are annotations only.
    return jsonschema_rs.validator_for(wrapped, validate_formats=False)


def validator(schema_dir: Path, revision: str, definition: str) -> jsonschema_rs.Validator:
    """A validator for one definition of one revision's schema (cached)."""
    return _validator(*_stamp(_schema_file(schema_dir, revision)), definition)


# --- which definitions a message is checked against --------------------------------


@dataclass(frozen=True)
class _Step:
    check: Check
    definition: str
    part: Part


def _plan(defs: Mapping[str, Any], key: Mapping[str, str]) -> list[_Step]:
    """The definitions to check one kind of message against (see the module doc)."""
    revision, kind = key["revision"], key["kind"]
    envelope = next((name for name in _ENVELOPES[kind] if name in defs), None)
    steps = [] if envelope is None else [_Step("envelope", envelope, "message")]
    if kind in ("request", "notification"):
        spec = method_spec(revision, key["method"])
        name = MESSAGE_DEFS.get(key["method"])
        if spec is not None and spec.kind == kind and name is not None and name in defs:
            steps.append(_Step("message", name, "message"))
    elif kind == "response":
        spec = method_spec(revision, key["request_method"])
        if spec is None or spec.kind != "request" or spec.result_def is None:
            return steps
        whole = result_response_def(revision, spec.name)
        if whole is not None:
            if spec.mrtr and key["rtype"] == "complete" and spec.result_def in defs:
                steps.append(_Step("result", spec.result_def, "result"))
            elif whole in defs:
                steps.append(_Step("result", whole, "message"))
        else:
            name = spec.result_def
            if key["request_task"] == "1" and spec.name in TASK_AUGMENTATION_GATES:
                name = "CreateTaskResult"
            if name in defs:
                steps.append(_Step("result", name, "result"))
    elif kind == "error" and key["code"].lstrip("-").isdigit():
        name = error_schema_def(int(key["code"]), revision)
        if name is not None and name in defs:
            whole_message = "error" in (defs[name].get("properties") or {})
            steps.append(_Step("error", name, "message" if whole_message else "error"))
    return steps


def _keys(rows: pl.DataFrame) -> pl.DataFrame:
    """The plan keys of each row, as strings with "" for null."""

    def text(name: str) -> pl.Expr:
        if name in rows.columns:
            return pl.col(name).cast(pl.String)
        return pl.lit(None, pl.String)

    if "error_code" in rows.columns:
        code = pl.col("error_code").cast(pl.String)
        if "error_code_is_int" in rows.columns:
            code = pl.when(pl.col("error_code_is_int")).then(code)
    else:
        code = pl.col("message").str.json_path_match("$.error.code")
    if "result_type" in rows.columns:
        rtype = pl.col("result_type")
    else:
        rtype = pl.col("message").str.json_path_match("$.result.resultType")
    task = (
        pl.col("request_task").cast(pl.Boolean).cast(pl.Int8).cast(pl.String)
        if "request_task" in rows.columns
        else pl.lit(None, pl.String)
    )
    is_error = pl.col("kind") == "error"
    is_response = pl.col("kind") == "response"
    return rows.select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("_row"),
        pl.col("revision").cast(pl.String),
        pl.col("kind").cast(pl.String),
        text("method").alias("method"),
        pl.when(is_response).then(text("request_method")).alias("request_method"),
        pl.when(is_response).then(task).alias("request_task"),
        pl.when(is_error).then(code).alias("code"),
        pl.when(is_response).then(rtype).alias("rtype"),
    ).with_columns(pl.col(k).fill_null("") for k in _KEYS)


# --- reporting ---------------------------------------------------------------------

_IDENT: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def json_path(parts: Iterable[str | int]) -> str:
    """``$.params._meta["io.modelcontextprotocol/clientInfo"].name``-style path."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part and set(part) <= _IDENT and not part[0].isdigit():
            out.append(f".{part}")
        else:
            out.append(f"[{_json.dumps(part)}]")
    return "".join(out)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_REASON else flat[: _MAX_REASON - 1] + "…"


_KIND = jsonschema_rs.ValidationErrorKind
_UNIONS: Final = (_KIND.AnyOf, _KIND.OneOfNotValid)
#: Where an error is (absolute path in the message) and why, as reported.
Reason = tuple[tuple[str | int, ...], str]


def _score(branch: list[jsonschema_rs.ValidationError]) -> tuple[bool, int, int]:
    """Lower is likelier the alternative the sender meant: its ``const``/``enum``
    discriminators matched, it got deepest into the value, it has the fewest errors."""
    return (
        any(isinstance(e.kind, _KIND.Constant | _KIND.Enum) for e in branch),
        -max(len(e.instance_path) for e in branch),
        len(branch),
    )


def _explain(error: jsonschema_rs.ValidationError, depth: int = 0) -> jsonschema_rs.ValidationError:
    """Descend into an ``anyOf``/``oneOf`` failure when one alternative is clearly meant.

    E.g. a text content block without ``text`` fails every ``ContentBlock`` alternative,
    but only ``TextContent`` matched the ``type``; its error is the reason. When the best
    alternatives tie, their shared first error is the reason if they agree, else the union
    error itself (e.g. a value that is neither of two plain types).
    """
    context = getattr(error.kind, "context", None)
    branches = [b for b in context or () if b]
    if not branches or depth > 16:
        return error
    ranked = sorted(branches, key=_score)
    best = _score(ranked[0])
    tied = [b for b in ranked if _score(b) == best]
    if len({(tuple(b[0].instance_path), b[0].message) for b in tied}) > 1:
        return error
    return _explain(ranked[0][0], depth + 1)


def _reason(prefix: tuple[str, ...], error: jsonschema_rs.ValidationError) -> Reason:
    """The explained error: its absolute path and a one-line reason."""
    e = _explain(error)
    if isinstance(e.kind, _UNIONS):
        text = _json.dumps(e.instance)
        what = text if len(text) <= 40 else f"this {type(e.instance).__name__} value"
        keyword = "anyOf" if isinstance(e.kind, _KIND.AnyOf) else "oneOf"
        message = f"{what} matches none of the alternatives of its '{keyword}'"
    else:
        message = _one_line(e.message)
    return (*prefix, *e.instance_path), message


#: JSON-RPC 2.0 requires ``"id": null`` when the request's id could not be read (parse
#: error, invalid request); no MCP schema admits a null id, so that one error is not
#: reported for these two codes.
_NULL_ID_CODES: Final = frozenset({-32700, -32600})


def _null_id_tolerated(doc: Any) -> bool:
    if not isinstance(doc, dict) or "id" not in doc or doc["id"] is not None:
        return False
    error = doc.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    # (a code of any JSON type may come: an object or array one cannot be looked up)
    return isinstance(code, int | float) and code in _NULL_ID_CODES


_MISSING: Final = object()


def _part(doc: Any, part: Part) -> Any:
    if part == "message" or doc is _MISSING:
        return doc
    if isinstance(doc, dict) and part in doc:
        return doc[part]
    return _MISSING


# --- the validation ------------------------------------------------------------------


def validate_messages(frame: pl.DataFrame, schema_dir: Path) -> pl.DataFrame:
    """Validate protocol messages against the official schemas of their revision.

    ``frame`` has ``ordinal``, ``kind``, ``method``, ``revision``, ``message`` and, for
    responses, ``request_method`` (the answered request's method); optional
    ``request_task`` (the request was task-augmented), ``error_code`` /
    ``error_code_is_int`` and ``result_type`` (else read from ``message``). Rows of
    other kinds, of a revision without a schema file, or without a message are
    skipped. Returns :data:`VALIDATION_SCHEMA` rows: the checks that failed.
    """
    if frame.is_empty():
        return pl.DataFrame(schema=VALIDATION_SCHEMA)
    have = available_revisions(schema_dir)
    rows = frame.filter(
        pl.col("kind").cast(pl.String).is_in(_PROTOCOL_KINDS)
        & pl.col("revision").is_in(have)
        & pl.col("message").is_not_null()
    )
    if rows.is_empty():
        return pl.DataFrame(schema=VALIDATION_SCHEMA)
    keys = _keys(rows)
    plans: dict[str, list[Any]] = {k: [] for k in (*_KEYS, "step", "check", "definition", "part")}
    for combo in keys.select(_KEYS).unique().iter_rows(named=True):
        for i, step in enumerate(_plan(definitions(schema_dir, combo["revision"]), combo)):
            for k in _KEYS:
                plans[k].append(combo[k])
            plans["step"].append(i)
            plans["check"].append(step.check)
            plans["definition"].append(step.definition)
            plans["part"].append(step.part)
    plan = pl.DataFrame(
        plans,
        schema={**dict.fromkeys(_KEYS, pl.String), "step": pl.Int64}
        | dict.fromkeys(("check", "definition", "part"), pl.String),
    )
    groups = (
        keys.join(plan, on=list(_KEYS), how="inner")
        .group_by("revision", "step", "check", "definition", "part")
        .agg(pl.col("_row"))
        .sort("step", "revision", "definition")  # envelope (step 0) first
    )
    ordinals = rows.get_column("ordinal").to_list()
    docs = _parse_all(rows.get_column("message").to_list())
    envelope_reasons: dict[int, set[Reason]] = {}
    out: dict[str, list[Any]] = {name: [] for name in VALIDATION_SCHEMA}

    for revision, _step, check, definition, part, members in groups.iter_rows():
        v = validator(schema_dir, revision, definition)
        prefix: tuple[str, ...] = () if part == "message" else (part,)
        # a part the message lacks, or a text that does not parse (a capture record's
        # `raw` that is not JSON), is not the validator's to judge: it cannot take it
        present = [(r, x) for r in members if (x := _part(docs[r], part)) is not _MISSING]
        # the tight loop: one native call per message; only failures come back to Python
        verdicts = map(v.is_valid, (instance for _, instance in present))
        for (r, instance), ok in zip(present, verdicts, strict=True):
            if ok:
                continue
            reasons = [_reason(prefix, e) for e in v.iter_errors(instance)]
            if check == "envelope":
                if _null_id_tolerated(docs[r]):
                    reasons = [x for x in reasons if x[0] != ("id",)]
                envelope_reasons[r] = set(reasons)
            elif r in envelope_reasons:
                seen = envelope_reasons[r]
                reasons = [x for x in reasons if x not in seen]
            if not reasons:
                continue
            path, message = reasons[0]
            out["ordinal"].append(ordinals[r])
            out["check"].append(check)
            out["definition"].append(definition)
            out["path"].append(json_path(path))
            out["error"].append(message)
            out["errors"].append(len(reasons))
    return pl.DataFrame(out, schema=VALIDATION_SCHEMA).sort("ordinal", "check")


def _parse_all(messages: list[str]) -> list[Any]:
    """Every message parsed once; ``_MISSING`` for the (unexpected) unparseable ones."""
    try:
        return list(map(_json.loads, messages))
    except _json.JSONDecodeError:
        return [_parse_one(m) for m in messages]


def _parse_one(message: str) -> Any:
    try:
        return _json.loads(message)
    except _json.JSONDecodeError:
        return _MISSING
