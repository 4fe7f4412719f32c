"""The method catalogue: every JSON-RPC method of every MCP revision.

This module owns, per revision, which methods exist, whether each is a request or a
notification, which way it may travel, which capability gates it, which schema.json
definitions describe its params and result, and the 2026-07-28 properties (embedded
input requests, cacheable results, multi round-trip requests). The tables follow
SPEC_RULES.md §1 and were checked against the ``ClientRequest`` / ``ServerRequest`` /
``ClientNotification`` / ``ServerNotification`` (and 2026 ``InputRequest``) unions of
each revision's official schema.json (tests/protocol/test_catalogue.py re-checks them).

Conventions:

* ``c2s`` = client to server, ``s2c`` = server to client.
* ``params_def`` names a schema.json definition. Where a revision defines the params
  object inline inside the message definition (all of 2024-11-05 … 2025-06-18, and a
  few methods later), it names that enclosing ``*Request`` / ``*Notification``
  definition and the params live at ``properties.params``; see
  :func:`params_schema_pointer`.
* ``status`` is relative to the previous revision: ``"base"`` = carried over (or present
  in the first revision), ``"added"`` = new in this revision, ``"deprecated"`` = still
  valid but deprecated in this revision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from .capabilities import Side
from .revisions import REVISIONS, SCHEMA_DEFINITIONS_KEY, require_revision, revision_index

__all__ = [
    "CACHEABLE_METHODS",
    "MESSAGE_DEFS",
    "METHODS",
    "MRTR_METHODS",
    "REQUEST_TARGET_PARAM",
    "TASK_AUGMENTATION_GATES",
    "Direction",
    "GateSide",
    "MethodKind",
    "MethodSpec",
    "MethodStatus",
    "added_in",
    "any_revision_directions",
    "gate_for_direction",
    "method_spec",
    "methods_in",
    "params_schema_pointer",
    "removed_in",
    "result_response_def",
    "revisions_of",
    "wire_methods_in",
]

#: Which way a message travels.
Direction = Literal["c2s", "s2c"]
#: JSON-RPC message kind of a method.
MethodKind = Literal["request", "notification"]
#: Status of a method in a revision, relative to the previous revision.
MethodStatus = Literal["base", "added", "deprecated"]
#: Whose capability gates a method. ``"receiver"`` is used only by the bidirectional
#: 2025-11-25 ``tasks/list`` and ``tasks/cancel``, which are gated by the capability of
#: whichever side receives the request; resolve it with :func:`gate_for_direction`.
GateSide = Literal["server", "client", "receiver"]

_C2S: Final[frozenset[Direction]] = frozenset({"c2s"})
_S2C: Final[frozenset[Direction]] = frozenset({"s2c"})
_BOTH: Final[frozenset[Direction]] = frozenset({"c2s", "s2c"})


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """What one revision says about one method.

    ``gate`` is a dotted capability path (see :mod:`mcptrace.protocol.capabilities`)
    that must have been declared by ``gate_side`` for the message to be legitimate;
    ``None`` means no capability gate (the method may still need state, e.g. a
    ``progressToken`` or an open subscription). ``embedded`` marks 2026-07-28 input
    requests that never travel as JSON-RPC messages, only inside
    ``InputRequiredResult.inputRequests``. ``cacheable`` marks 2026-07-28 methods whose
    complete results MUST carry ``ttlMs``/``cacheScope``; ``mrtr`` marks 2026-07-28
    methods that may answer with ``resultType: "input_required"``.
    """

    name: str
    kind: MethodKind
    directions: frozenset[Direction]
    gate: str | None
    gate_side: GateSide | None
    status: MethodStatus
    embedded: bool
    params_def: str | None
    result_def: str | None
    cacheable: bool = False
    mrtr: bool = False


_Gate = tuple[GateSide, str]


def _srv(path: str) -> _Gate:
    return ("server", path)


def _cli(path: str) -> _Gate:
    return ("client", path)


def _rcv(path: str) -> _Gate:
    return ("receiver", path)


def _req(
    name: str,
    directions: frozenset[Direction],
    gate: _Gate | None,
    params_def: str,
    result_def: str,
    *,
    status: MethodStatus = "base",
    embedded: bool = False,
    cacheable: bool = False,
    mrtr: bool = False,
) -> MethodSpec:
    return MethodSpec(
        name=name,
        kind="request",
        directions=directions,
        gate=None if gate is None else gate[1],
        gate_side=None if gate is None else gate[0],
        status=status,
        embedded=embedded,
        params_def=params_def,
        result_def=result_def,
        cacheable=cacheable,
        mrtr=mrtr,
    )


def _note(
    name: str,
    directions: frozenset[Direction],
    gate: _Gate | None,
    params_def: str,
    *,
    status: MethodStatus = "base",
) -> MethodSpec:
    return MethodSpec(
        name=name,
        kind="notification",
        directions=directions,
        gate=None if gate is None else gate[1],
        gate_side=None if gate is None else gate[0],
        status=status,
        embedded=False,
        params_def=params_def,
        result_def=None,
    )


def _table(*specs: MethodSpec) -> Mapping[str, MethodSpec]:
    table = {spec.name: spec for spec in specs}
    if len(table) != len(specs):
        raise RuntimeError("duplicate method in catalogue table")
    return MappingProxyType(table)


# --- 2024-11-05 (draft-07; every params object is inline in its message definition) ---
# completion/complete has no capability gate yet: the `completions` server capability
# only appears in 2025-03-26 (SPEC_RULES §1.1; 2024-11-05 schema ServerCapabilities).
_R2024_11_05: Final = _table(
    _req("initialize", _C2S, None, "InitializeRequest", "InitializeResult"),
    _req("ping", _BOTH, None, "PingRequest", "EmptyResult"),
    _req("resources/list", _C2S, _srv("resources"), "ListResourcesRequest", "ListResourcesResult"),
    _req(
        "resources/templates/list",
        _C2S,
        _srv("resources"),
        "ListResourceTemplatesRequest",
        "ListResourceTemplatesResult",
    ),
    _req("resources/read", _C2S, _srv("resources"), "ReadResourceRequest", "ReadResourceResult"),
    _req(
        "resources/subscribe", _C2S, _srv("resources.subscribe"), "SubscribeRequest", "EmptyResult"
    ),
    _req(
        "resources/unsubscribe",
        _C2S,
        _srv("resources.subscribe"),
        "UnsubscribeRequest",
        "EmptyResult",
    ),
    _req("prompts/list", _C2S, _srv("prompts"), "ListPromptsRequest", "ListPromptsResult"),
    _req("prompts/get", _C2S, _srv("prompts"), "GetPromptRequest", "GetPromptResult"),
    _req("tools/list", _C2S, _srv("tools"), "ListToolsRequest", "ListToolsResult"),
    _req("tools/call", _C2S, _srv("tools"), "CallToolRequest", "CallToolResult"),
    _req("logging/setLevel", _C2S, _srv("logging"), "SetLevelRequest", "EmptyResult"),
    _req("completion/complete", _C2S, None, "CompleteRequest", "CompleteResult"),
    _req(
        "sampling/createMessage",
        _S2C,
        _cli("sampling"),
        "CreateMessageRequest",
        "CreateMessageResult",
    ),
    _req("roots/list", _S2C, _cli("roots"), "ListRootsRequest", "ListRootsResult"),
    _note("notifications/initialized", _C2S, None, "InitializedNotification"),
    _note("notifications/cancelled", _BOTH, None, "CancelledNotification"),
    _note("notifications/progress", _BOTH, None, "ProgressNotification"),
    _note(
        "notifications/roots/list_changed",
        _C2S,
        _cli("roots.listChanged"),
        "RootsListChangedNotification",
    ),
    _note(
        "notifications/resources/list_changed",
        _S2C,
        _srv("resources.listChanged"),
        "ResourceListChangedNotification",
    ),
    # Also needs a prior resources/subscribe of the URI (stateful; not modelled here).
    _note(
        "notifications/resources/updated",
        _S2C,
        _srv("resources.subscribe"),
        "ResourceUpdatedNotification",
    ),
    _note(
        "notifications/prompts/list_changed",
        _S2C,
        _srv("prompts.listChanged"),
        "PromptListChangedNotification",
    ),
    _note(
        "notifications/tools/list_changed",
        _S2C,
        _srv("tools.listChanged"),
        "ToolListChangedNotification",
    ),
    _note("notifications/message", _S2C, _srv("logging"), "LoggingMessageNotification"),
)

# --- 2025-03-26: same methods; completion/complete gains the new `completions` gate ----
# (2025-03-26 server/utilities/completion.mdx#capabilities). JSON-RPC batches are new in
# this revision but are not a method, so they are not catalogued here.
_R2025_03_26: Final = _table(
    *(
        _req("completion/complete", _C2S, _srv("completions"), "CompleteRequest", "CompleteResult")
        if spec.name == "completion/complete"
        else spec
        for spec in _R2024_11_05.values()
    )
)

# --- 2025-06-18: adds elicitation/create (2025-06-18 client/elicitation.mdx) -----------
_R2025_06_18: Final = _table(
    *_R2025_03_26.values(),
    _req(
        "elicitation/create",
        _S2C,
        _cli("elicitation"),
        "ElicitRequest",
        "ElicitResult",
        status="added",
    ),
)

# --- 2025-11-25 (2020-12; params get named *Params definitions) ------------------------
# Tasks are new (2025-11-25 basic/utilities/tasks.mdx): tasks/* travel both ways
# (requestor -> receiver); tasks/get and tasks/result need no capability, only a task
# the receiver created, while tasks/list and tasks/cancel are gated by the receiver's
# `tasks.list` / `tasks.cancel`. tools/call, sampling/createMessage and
# elicitation/create may be task-augmented (see TASK_AUGMENTATION_GATES); a
# task-augmented request is answered with `CreateTaskResult` instead of `result_def`.
# notifications/elicitation/complete is gated by the client's `elicitation.url`: it only
# follows a URL-mode elicitation (client/elicitation.mdx), a necessary condition.
_R2025_11_25: Final = _table(
    _req("initialize", _C2S, None, "InitializeRequestParams", "InitializeResult"),
    _req("ping", _BOTH, None, "RequestParams", "EmptyResult"),
    _req(
        "resources/list", _C2S, _srv("resources"), "PaginatedRequestParams", "ListResourcesResult"
    ),
    _req(
        "resources/templates/list",
        _C2S,
        _srv("resources"),
        "PaginatedRequestParams",
        "ListResourceTemplatesResult",
    ),
    _req(
        "resources/read", _C2S, _srv("resources"), "ReadResourceRequestParams", "ReadResourceResult"
    ),
    _req(
        "resources/subscribe",
        _C2S,
        _srv("resources.subscribe"),
        "SubscribeRequestParams",
        "EmptyResult",
    ),
    _req(
        "resources/unsubscribe",
        _C2S,
        _srv("resources.subscribe"),
        "UnsubscribeRequestParams",
        "EmptyResult",
    ),
    _req("prompts/list", _C2S, _srv("prompts"), "PaginatedRequestParams", "ListPromptsResult"),
    _req("prompts/get", _C2S, _srv("prompts"), "GetPromptRequestParams", "GetPromptResult"),
    _req("tools/list", _C2S, _srv("tools"), "PaginatedRequestParams", "ListToolsResult"),
    _req("tools/call", _C2S, _srv("tools"), "CallToolRequestParams", "CallToolResult"),
    _req("logging/setLevel", _C2S, _srv("logging"), "SetLevelRequestParams", "EmptyResult"),
    _req(
        "completion/complete", _C2S, _srv("completions"), "CompleteRequestParams", "CompleteResult"
    ),
    _req("tasks/get", _BOTH, None, "GetTaskRequest", "GetTaskResult", status="added"),
    _req(
        "tasks/result", _BOTH, None, "GetTaskPayloadRequest", "GetTaskPayloadResult", status="added"
    ),
    _req(
        "tasks/list",
        _BOTH,
        _rcv("tasks.list"),
        "PaginatedRequestParams",
        "ListTasksResult",
        status="added",
    ),
    _req(
        "tasks/cancel",
        _BOTH,
        _rcv("tasks.cancel"),
        "CancelTaskRequest",
        "CancelTaskResult",
        status="added",
    ),
    _req(
        "sampling/createMessage",
        _S2C,
        _cli("sampling"),
        "CreateMessageRequestParams",
        "CreateMessageResult",
    ),
    _req("roots/list", _S2C, _cli("roots"), "RequestParams", "ListRootsResult"),
    _req("elicitation/create", _S2C, _cli("elicitation"), "ElicitRequestParams", "ElicitResult"),
    _note("notifications/initialized", _C2S, None, "NotificationParams"),
    _note("notifications/cancelled", _BOTH, None, "CancelledNotificationParams"),
    _note("notifications/progress", _BOTH, None, "ProgressNotificationParams"),
    _note(
        "notifications/tasks/status", _BOTH, None, "TaskStatusNotificationParams", status="added"
    ),
    _note(
        "notifications/roots/list_changed", _C2S, _cli("roots.listChanged"), "NotificationParams"
    ),
    _note(
        "notifications/resources/list_changed",
        _S2C,
        _srv("resources.listChanged"),
        "NotificationParams",
    ),
    _note(
        "notifications/resources/updated",
        _S2C,
        _srv("resources.subscribe"),
        "ResourceUpdatedNotificationParams",
    ),
    _note(
        "notifications/prompts/list_changed",
        _S2C,
        _srv("prompts.listChanged"),
        "NotificationParams",
    ),
    _note(
        "notifications/tools/list_changed", _S2C, _srv("tools.listChanged"), "NotificationParams"
    ),
    _note("notifications/message", _S2C, _srv("logging"), "LoggingMessageNotificationParams"),
    _note(
        "notifications/elicitation/complete",
        _S2C,
        _cli("elicitation.url"),
        "ElicitationCompleteNotification",
        status="added",
    ),
)

# --- 2026-07-28 (stateless; no ServerRequest union at all) -----------------------------
# Servers never send JSON-RPC requests (2026-07-28 basic/patterns/index.mdx); the former
# server->client requests survive only as embedded input requests inside
# InputRequiredResult.inputRequests (basic/patterns/mrtr.mdx), direction s2c, gated by
# the client capabilities in the same request's _meta. Cacheable results: caching.mdx
# #cacheable-results (the six *Result definitions that require ttlMs/cacheScope). MRTR:
# only prompts/get, resources/read, tools/call (mrtr.mdx#supported-requests; only their
# *ResultResponse admits InputRequiredResult). notifications/cancelled goes s2c only to
# end a subscriptions/listen stream (patterns/cancellation.mdx); notifications/progress
# is s2c only. list_changed/updated notifications only flow on a listen stream, and are
# still gated by the server's *.listChanged / resources.subscribe capability.
# Deprecated: Logging, Sampling, Roots (2026-07-28 changelog "Deprecated" 1).
_R2026_07_28: Final = _table(
    _req(
        "server/discover",
        _C2S,
        None,
        "RequestParams",
        "DiscoverResult",
        status="added",
        cacheable=True,
    ),
    _req(
        "resources/list",
        _C2S,
        _srv("resources"),
        "PaginatedRequestParams",
        "ListResourcesResult",
        cacheable=True,
    ),
    _req(
        "resources/templates/list",
        _C2S,
        _srv("resources"),
        "PaginatedRequestParams",
        "ListResourceTemplatesResult",
        cacheable=True,
    ),
    _req(
        "resources/read",
        _C2S,
        _srv("resources"),
        "ReadResourceRequestParams",
        "ReadResourceResult",
        cacheable=True,
        mrtr=True,
    ),
    _req(
        "subscriptions/listen",
        _C2S,
        None,
        "SubscriptionsListenRequestParams",
        "SubscriptionsListenResult",
        status="added",
    ),
    _req(
        "prompts/list",
        _C2S,
        _srv("prompts"),
        "PaginatedRequestParams",
        "ListPromptsResult",
        cacheable=True,
    ),
    _req(
        "prompts/get", _C2S, _srv("prompts"), "GetPromptRequestParams", "GetPromptResult", mrtr=True
    ),
    _req(
        "tools/list",
        _C2S,
        _srv("tools"),
        "PaginatedRequestParams",
        "ListToolsResult",
        cacheable=True,
    ),
    _req("tools/call", _C2S, _srv("tools"), "CallToolRequestParams", "CallToolResult", mrtr=True),
    _req(
        "completion/complete", _C2S, _srv("completions"), "CompleteRequestParams", "CompleteResult"
    ),
    _note("notifications/cancelled", _BOTH, None, "CancelledNotificationParams"),
    _note("notifications/progress", _S2C, None, "ProgressNotificationParams"),
    _note(
        "notifications/message",
        _S2C,
        _srv("logging"),
        "LoggingMessageNotificationParams",
        status="deprecated",
    ),
    _note(
        "notifications/subscriptions/acknowledged",
        _S2C,
        None,
        "SubscriptionsAcknowledgedNotificationParams",
        status="added",
    ),
    _note(
        "notifications/tools/list_changed", _S2C, _srv("tools.listChanged"), "NotificationParams"
    ),
    _note(
        "notifications/prompts/list_changed",
        _S2C,
        _srv("prompts.listChanged"),
        "NotificationParams",
    ),
    _note(
        "notifications/resources/list_changed",
        _S2C,
        _srv("resources.listChanged"),
        "NotificationParams",
    ),
    _note(
        "notifications/resources/updated",
        _S2C,
        _srv("resources.subscribe"),
        "ResourceUpdatedNotificationParams",
    ),
    _req(
        "elicitation/create",
        _S2C,
        _cli("elicitation"),
        "ElicitRequestParams",
        "ElicitResult",
        embedded=True,
    ),
    _req(
        "sampling/createMessage",
        _S2C,
        _cli("sampling"),
        "CreateMessageRequestParams",
        "CreateMessageResult",
        status="deprecated",
        embedded=True,
    ),
    # The 2026 ListRootsRequest defines its params ({_meta?}) inline.
    _req(
        "roots/list",
        _S2C,
        _cli("roots"),
        "ListRootsRequest",
        "ListRootsResult",
        status="deprecated",
        embedded=True,
    ),
)

#: Method catalogue: ``METHODS[revision][method]``. Read-only.
METHODS: Final[Mapping[str, Mapping[str, MethodSpec]]] = MappingProxyType(
    {
        "2024-11-05": _R2024_11_05,
        "2025-03-26": _R2025_03_26,
        "2025-06-18": _R2025_06_18,
        "2025-11-25": _R2025_11_25,
        "2026-07-28": _R2026_07_28,
    }
)

#: Name of the schema.json definition of the whole message (the member of the
#: Client*/Server* unions, or of 2026 ``InputRequest``), the same in every revision
#: that has the method. In 2024-11-05 … 2025-06-18 request definitions lack the
#: ``jsonrpc``/``id`` envelope (SPEC_RULES §6); validate them together with
#: ``JSONRPCRequest`` / ``JSONRPCNotification``.
MESSAGE_DEFS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "completion/complete": "CompleteRequest",
        "elicitation/create": "ElicitRequest",
        "initialize": "InitializeRequest",
        "logging/setLevel": "SetLevelRequest",
        "notifications/cancelled": "CancelledNotification",
        "notifications/elicitation/complete": "ElicitationCompleteNotification",
        "notifications/initialized": "InitializedNotification",
        "notifications/message": "LoggingMessageNotification",
        "notifications/progress": "ProgressNotification",
        "notifications/prompts/list_changed": "PromptListChangedNotification",
        "notifications/resources/list_changed": "ResourceListChangedNotification",
        "notifications/resources/updated": "ResourceUpdatedNotification",
        "notifications/roots/list_changed": "RootsListChangedNotification",
        "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
        "notifications/tasks/status": "TaskStatusNotification",
        "notifications/tools/list_changed": "ToolListChangedNotification",
        "ping": "PingRequest",
        "prompts/get": "GetPromptRequest",
        "prompts/list": "ListPromptsRequest",
        "resources/list": "ListResourcesRequest",
        "resources/read": "ReadResourceRequest",
        "resources/subscribe": "SubscribeRequest",
        "resources/templates/list": "ListResourceTemplatesRequest",
        "resources/unsubscribe": "UnsubscribeRequest",
        "roots/list": "ListRootsRequest",
        "sampling/createMessage": "CreateMessageRequest",
        "server/discover": "DiscoverRequest",
        "subscriptions/listen": "SubscriptionsListenRequest",
        "tasks/cancel": "CancelTaskRequest",
        "tasks/get": "GetTaskRequest",
        "tasks/list": "ListTasksRequest",
        "tasks/result": "GetTaskPayloadRequest",
        "tools/call": "CallToolRequest",
        "tools/list": "ListToolsRequest",
    }
)

#: Params key that names the object a request acts on (for grouping, MRTR retry
#: matching and reporting). ``completion/complete``'s ``ref`` is an object
#: (prompt or resource-template reference), the others are strings.
REQUEST_TARGET_PARAM: Final[Mapping[str, str]] = MappingProxyType(
    {
        "completion/complete": "ref",
        "prompts/get": "name",
        "resources/read": "uri",
        "resources/subscribe": "uri",
        "resources/unsubscribe": "uri",
        "tasks/cancel": "taskId",
        "tasks/get": "taskId",
        "tasks/result": "taskId",
        "tools/call": "name",
    }
)

#: 2025-11-25 task augmentation: method -> (side whose capability gates it, path).
#: Requestors SHOULD only add ``params.task`` when the receiver declared the path
#: (2025-11-25 basic/utilities/tasks.mdx#capability-negotiation).
TASK_AUGMENTATION_GATES: Final[Mapping[str, tuple[Side, str]]] = MappingProxyType(
    {
        "tools/call": ("server", "tasks.requests.tools.call"),
        "sampling/createMessage": ("client", "tasks.requests.sampling.createMessage"),
        "elicitation/create": ("client", "tasks.requests.elicitation.create"),
    }
)

#: 2026-07-28 methods whose ``resultType: "complete"`` results MUST carry caching hints.
CACHEABLE_METHODS: Final[frozenset[str]] = frozenset(
    name for name, spec in _R2026_07_28.items() if spec.cacheable
)

#: 2026-07-28 methods that may answer with an ``InputRequiredResult``.
MRTR_METHODS: Final[frozenset[str]] = frozenset(
    name for name, spec in _R2026_07_28.items() if spec.mrtr
)

# Derived indexes, computed once.
_WIRE: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        rev: frozenset(name for name, spec in table.items() if not spec.embedded)
        for rev, table in METHODS.items()
    }
)
_ALL: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {rev: frozenset(table) for rev, table in METHODS.items()}
)


def _wire_directions() -> Mapping[str, frozenset[Direction]]:
    acc: dict[str, frozenset[Direction]] = {}
    for table in METHODS.values():
        for name, spec in table.items():
            if not spec.embedded:
                acc[name] = acc.get(name, frozenset()) | spec.directions
    return MappingProxyType(acc)


_ANY_DIRECTIONS: Final = _wire_directions()


def method_spec(revision: str, method: str) -> MethodSpec | None:
    """The spec of ``method`` in ``revision``; ``None`` if either is unknown."""
    table = METHODS.get(revision)
    return None if table is None else table.get(method)


def methods_in(revision: str) -> frozenset[str]:
    """Every method of ``revision``, including 2026 embedded input requests.

    Raises :class:`~mcptrace.protocol.revisions.UnknownRevisionError` if unknown.
    """
    return _ALL[require_revision(revision)]


def wire_methods_in(revision: str) -> frozenset[str]:
    """Methods of ``revision`` that travel as JSON-RPC messages (not embedded)."""
    return _WIRE[require_revision(revision)]


def revisions_of(method: str) -> tuple[str, ...]:
    """Revisions (oldest first) in which ``method`` exists as a wire method."""
    return tuple(rev for rev in REVISIONS if method in _WIRE[rev])


def any_revision_directions(method: str) -> frozenset[Direction]:
    """Union of the wire directions of ``method`` over all revisions.

    Meant for orienting raw captures whose line directions are unknown: a method that
    is ``{"s2c"}`` here (e.g. ``roots/list``) fixes the orientation whatever the
    revision. Empty for unknown methods.
    """
    return _ANY_DIRECTIONS.get(method, frozenset())


def added_in(revision: str) -> frozenset[str]:
    """Wire methods of ``revision`` that the previous revision lacked.

    For the first revision this is every method. Embedded 2026 input requests are not
    wire methods, so e.g. ``roots/list`` is *removed* in 2026-07-28, not added.
    """
    i = revision_index(revision)
    current = _WIRE[revision]
    return current if i == 0 else current - _WIRE[REVISIONS[i - 1]]


def removed_in(revision: str) -> frozenset[str]:
    """Wire methods of the previous revision that ``revision`` no longer has."""
    i = revision_index(revision)
    return frozenset() if i == 0 else _WIRE[REVISIONS[i - 1]] - _WIRE[revision]


def gate_for_direction(spec: MethodSpec, direction: Direction) -> tuple[Side, str] | None:
    """The (side, capability path) gating ``spec`` when it travels in ``direction``.

    Resolves ``gate_side == "receiver"`` (the server for ``c2s``, the client for
    ``s2c``). ``None`` when the method has no capability gate.
    """
    if spec.gate is None or spec.gate_side is None:
        return None
    if spec.gate_side == "receiver":
        return ("server" if direction == "c2s" else "client", spec.gate)
    return (spec.gate_side, spec.gate)


def params_schema_pointer(revision: str, method: str) -> str | None:
    """JSON pointer (``#/definitions/…`` or ``#/$defs/…``) to the params schema.

    Follows the inline convention: when ``params_def`` is the message definition
    itself, the pointer goes to its ``properties/params``. ``None`` for unknown
    methods/revisions.
    """
    spec = method_spec(revision, method)
    if spec is None or spec.params_def is None:
        return None
    base = f"#/{SCHEMA_DEFINITIONS_KEY[revision]}/{spec.params_def}"
    if spec.params_def == MESSAGE_DEFS.get(method):
        return f"{base}/properties/params"
    return base


def result_response_def(revision: str, method: str) -> str | None:
    """2026-07-28 whole-response definition (``<X>ResultResponse``) for a request.

    The 2026 schema has one per wire request; for MRTR methods it also admits
    ``InputRequiredResult``. ``None`` for other revisions, notifications and embedded
    requests (SPEC_RULES §6).
    """
    spec = method_spec(revision, method)
    if revision != "2026-07-28" or spec is None or spec.kind != "request" or spec.embedded:
        return None
    return f"{spec.result_def}Response"
