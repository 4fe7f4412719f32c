"""``_meta`` keys: reserved names, key-name grammar, reserved prefixes, result types.

This module owns what each revision says about ``_meta``: which keys the specification
reserves and where they go (request params, notification params, results), the key-name
grammar introduced in 2025-06-18, the reserved-prefix rule (which changed between
2025-06-18 and 2025-11-25), the 2026-07-28 extension-identifier rule, and the core
``resultType`` values. Sources: SPEC_RULES.md §3, ``basic/index.mdx#meta`` (2025-06-18:
``#_meta`` under "General fields") of each revision, and the 2026-07-28
``RequestMetaObject`` / ``NotificationMetaObject`` / ``ResultMetaObject`` definitions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from .revisions import REVISIONS, require_revision, revision_index

__all__ = [
    "BAGGAGE_KEY",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "MODEL_IMMEDIATE_RESPONSE_KEY",
    "PROGRESS_TOKEN_KEY",
    "PROTOCOL_VERSION_KEY",
    "RELATED_TASK_KEY",
    "RESERVED_META_KEYS",
    "RESULT_TYPES",
    "RESULT_TYPE_COMPLETE",
    "RESULT_TYPE_INPUT_REQUIRED",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_ID_KEY",
    "TRACEPARENT_KEY",
    "TRACESTATE_KEY",
    "MetaLocation",
    "ReservedMetaKey",
    "has_reserved_prefix",
    "is_reserved_meta_key",
    "is_valid_extension_id",
    "is_valid_meta_key",
    "reserved_meta_keys",
    "split_meta_key",
]

PROGRESS_TOKEN_KEY: Final = "progressToken"
PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"
RELATED_TASK_KEY: Final = "io.modelcontextprotocol/related-task"
MODEL_IMMEDIATE_RESPONSE_KEY: Final = "io.modelcontextprotocol/model-immediate-response"
TRACEPARENT_KEY: Final = "traceparent"
TRACESTATE_KEY: Final = "tracestate"
BAGGAGE_KEY: Final = "baggage"

#: Core 2026-07-28 ``resultType`` values (basic/index.mdx#resulttype). Extensions
#: advertised in capabilities may add more; anything else MUST be treated as invalid.
RESULT_TYPE_COMPLETE: Final = "complete"
RESULT_TYPE_INPUT_REQUIRED: Final = "input_required"
RESULT_TYPES: Final[frozenset[str]] = frozenset({RESULT_TYPE_COMPLETE, RESULT_TYPE_INPUT_REQUIRED})

#: Where a ``_meta`` object sits: ``params._meta`` of a request or notification, or
#: ``result._meta``.
MetaLocation = Literal["request", "notification", "result"]


@dataclass(frozen=True, slots=True)
class ReservedMetaKey:
    """A ``_meta`` key the specification names, and where and when it applies.

    ``required`` means the key MUST be present at every ``locations`` entry in the
    listed revisions (only the 2026 per-request protocol fields); conditional
    obligations are described in ``usage``.
    """

    key: str
    revisions: tuple[str, ...]
    locations: frozenset[MetaLocation]
    required: bool
    usage: str


_ALL_LOCATIONS: Final[frozenset[MetaLocation]] = frozenset({"request", "notification", "result"})
_REQUEST: Final[frozenset[MetaLocation]] = frozenset({"request"})
_RESULT: Final[frozenset[MetaLocation]] = frozenset({"result"})
_TASKS_REVS: Final = ("2025-11-25",)
_MODERN: Final = ("2026-07-28",)


def _key(
    key: str,
    revisions: tuple[str, ...],
    locations: frozenset[MetaLocation],
    usage: str,
    *,
    required: bool = False,
) -> tuple[str, ReservedMetaKey]:
    return key, ReservedMetaKey(key, revisions, locations, required, usage)


#: Every reserved ``_meta`` key of every revision.
RESERVED_META_KEYS: Final[Mapping[str, ReservedMetaKey]] = MappingProxyType(
    dict(
        [
            _key(
                PROGRESS_TOKEN_KEY,
                REVISIONS,
                _REQUEST,
                "string|integer; opts the request into notifications/progress",
            ),
            # 2025-11-25 basic/utilities/tasks.mdx#related-task-metadata: MUST on
            # task-related messages and on tasks/result responses; SHOULD NOT on
            # tasks/get, tasks/list, tasks/cancel, notifications/tasks/status.
            _key(
                RELATED_TASK_KEY,
                _TASKS_REVS,
                _ALL_LOCATIONS,
                "{taskId}; associates a message with a task",
            ),
            # Only on CreateTaskResult._meta; optional, non-binding (tasks.mdx).
            _key(
                MODEL_IMMEDIATE_RESPONSE_KEY,
                _TASKS_REVS,
                _RESULT,
                "string; immediate text for the model while a task runs (CreateTaskResult)",
            ),
            _key(
                PROTOCOL_VERSION_KEY,
                _MODERN,
                _REQUEST,
                "string; protocol version of this request",
                required=True,
            ),
            _key(
                CLIENT_CAPABILITIES_KEY,
                _MODERN,
                _REQUEST,
                "ClientCapabilities for this request ({} = none)",
                required=True,
            ),
            _key(
                CLIENT_INFO_KEY,
                _MODERN,
                _REQUEST,
                "Implementation; clients SHOULD send it on every request",
            ),
            _key(
                LOG_LEVEL_KEY,
                _MODERN,
                _REQUEST,
                "LoggingLevel; without it no notifications/message (deprecated)",
            ),
            _key(
                SERVER_INFO_KEY,
                _MODERN,
                _RESULT,
                "Implementation; servers SHOULD send it on every result",
            ),
            # MUST on every listen-stream notification and REQUIRED on the
            # SubscriptionsListenResult; absent elsewhere (patterns/subscriptions.mdx).
            _key(
                SUBSCRIPTION_ID_KEY,
                _MODERN,
                frozenset({"notification", "result"}),
                "RequestId of the subscriptions/listen request",
            ),
            # OpenTelemetry keys, an explicit exception to the prefix requirement
            # (2026-07-28 basic/index.mdx#meta); values MUST follow W3C formats.
            _key(TRACEPARENT_KEY, _MODERN, _ALL_LOCATIONS, "W3C Trace Context traceparent"),
            _key(TRACESTATE_KEY, _MODERN, _ALL_LOCATIONS, "W3C Trace Context tracestate"),
            _key(BAGGAGE_KEY, _MODERN, _ALL_LOCATIONS, "W3C Baggage"),
        ]
    )
)

# Key grammar (2025-06-18+ basic/index.mdx, "Key name format"): an optional prefix of
# dot-separated labels followed by "/", then a name. Labels start with a letter and end
# with a letter or digit, with letters, digits and hyphens inside. The name, unless
# empty, starts and ends with an ASCII alphanumeric and may hold "-", "_", "." inside.
# So "" and "com.example/" are valid keys (empty name), as the text allows.
_LABEL: Final = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_PREFIX_RE: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_NAME_RE: Final = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?")
_RESERVED_LABELS: Final = frozenset({"modelcontextprotocol", "mcp"})
# First revision with the grammar and a reserved-prefix rule.
_GRAMMAR_SINCE: Final = revision_index("2025-06-18")
# First revision with the "second label" reserved-prefix rule.
_SECOND_LABEL_SINCE: Final = revision_index("2025-11-25")


def split_meta_key(key: str) -> tuple[str | None, str]:
    """Split ``key`` at its first ``/`` into ``(prefix, name)``; prefix excludes the slash.

    ``None`` means no prefix. Purely lexical: no validation.
    """
    prefix, slash, name = key.partition("/")
    return (prefix, name) if slash else (None, key)


def _grammar_ok(key: str) -> bool:
    prefix, name = split_meta_key(key)
    if prefix is not None and _PREFIX_RE.fullmatch(prefix) is None:
        return False
    return _NAME_RE.fullmatch(name) is not None


def is_valid_meta_key(key: str, revision: str) -> bool:
    """True if ``key`` is a well-formed ``_meta`` key name in ``revision``.

    2024-11-05 and 2025-03-26 define no key grammar (they only reserve ``_meta``
    itself), so every string is valid there. Unknown revisions raise
    :class:`~mcptrace.protocol.revisions.UnknownRevisionError`.
    """
    if revision_index(revision) < _GRAMMAR_SINCE:
        return True
    return _grammar_ok(key)


def has_reserved_prefix(key: str, revision: str) -> bool:
    """True if ``key`` has a syntactically valid prefix that ``revision`` reserves for MCP.

    * 2025-06-18: "any prefix beginning with zero or more valid labels, followed by
      ``modelcontextprotocol`` or ``mcp``, followed by any valid label" — so a reserved
      label must be followed by at least one more label: ``mcp.dev/`` and
      ``com.example.mcp.tools/`` are reserved, but, read literally, neither ``mcp/``
      nor ``io.modelcontextprotocol/`` is.
    * 2025-11-25 and later: the *second* label is ``modelcontextprotocol`` or ``mcp``:
      ``io.modelcontextprotocol/``, ``dev.mcp/``, ``com.mcp.tools/`` are reserved,
      ``com.example.mcp/`` and ``mcp.dev/`` are not.
    * Earlier revisions reserve no prefixes.

    Labels are compared case-insensitively (derived: prefixes are DNS-style names,
    and DNS names are case-insensitive; the spec does not say).
    """
    index = revision_index(revision)
    prefix, _ = split_meta_key(key)
    if index < _GRAMMAR_SINCE or prefix is None or _PREFIX_RE.fullmatch(prefix) is None:
        return False
    labels = [label.lower() for label in prefix.split(".")]
    if index >= _SECOND_LABEL_SINCE:
        return len(labels) >= 2 and labels[1] in _RESERVED_LABELS
    return any(label in _RESERVED_LABELS for label in labels[:-1])


def reserved_meta_keys(revision: str) -> frozenset[str]:
    """The ``_meta`` keys that ``revision`` names explicitly."""
    require_revision(revision)
    return frozenset(k for k, info in RESERVED_META_KEYS.items() if revision in info.revisions)


def is_reserved_meta_key(key: str, revision: str) -> bool:
    """True if ``revision`` reserves ``key``: named by the spec, or under a reserved prefix.

    A key that is reserved but not in :func:`reserved_meta_keys` (e.g.
    ``io.modelcontextprotocol/unknown`` in 2025-11-25) is one a linter may flag: only
    the specification (or an official extension) may define keys there.
    """
    return key in reserved_meta_keys(revision) or has_reserved_prefix(key, revision)


def is_valid_extension_id(extension_id: str) -> bool:
    """2026-07-28 extension identifier rule (keys of ``capabilities.extensions``).

    Identifiers "MUST follow the ``_meta`` key naming rules, with a mandatory prefix"
    (2026-07-28 schema ``ClientCapabilities.extensions``), e.g.
    ``io.modelcontextprotocol/tasks``.
    """
    prefix, _ = split_meta_key(extension_id)
    return prefix is not None and _grammar_ok(extension_id)
