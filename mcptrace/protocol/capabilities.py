"""Capability names per revision and the test for "is this capability declared".

This module owns the set of capability paths (dotted, e.g. ``"resources.subscribe"``)
that each side can declare in each revision, as read from the ``ClientCapabilities`` and
``ServerCapabilities`` definitions of every revision's schema.json, and the helpers that
decide whether a concrete capabilities object declares a given path or extension.

Where capabilities come from is an era question that callers answer: in legacy revisions
from ``initialize`` params (client) and result (server); in 2026-07-28 the server's from
the ``server/discover`` result and the client's from each request's
``_meta["io.modelcontextprotocol/clientCapabilities"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal

from .revisions import require_revision

__all__ = [
    "CLIENT_CAPABILITIES",
    "SERVER_CAPABILITIES",
    "Side",
    "capability_paths",
    "has_capability",
    "has_extension",
    "is_known_capability",
]

#: The two peers of an MCP connection.
Side = Literal["client", "server"]

# Capability paths shared by several revisions. "experimental" (all revisions) and
# "extensions" (2026-07-28) are open maps whose keys are free-form, so only the
# top-level name is listed; use has_extension() for extension identifiers, which
# contain dots and slashes and so cannot be addressed by a dotted path.
_CLIENT_2024: Final = frozenset({"experimental", "roots", "roots.listChanged", "sampling"})
# 2025-06-18 adds client `elicitation` (2025-06-18 changelog; schema ClientCapabilities).
_CLIENT_2025_06: Final = _CLIENT_2024 | {"elicitation"}
# 2025-11-25 adds elicitation modes, sampling tool use / context, and tasks
# (2025-11-25 client/elicitation.mdx, client/sampling.mdx, basic/utilities/tasks.mdx).
_CLIENT_2025_11: Final = _CLIENT_2025_06 | {
    "elicitation.form",
    "elicitation.url",
    "sampling.context",
    "sampling.tools",
    "tasks",
    "tasks.cancel",
    "tasks.list",
    "tasks.requests",
    "tasks.requests.elicitation",
    "tasks.requests.elicitation.create",
    "tasks.requests.sampling",
    "tasks.requests.sampling.createMessage",
}
# 2026-07-28: tasks leave the core (now the io.modelcontextprotocol/tasks extension),
# `extensions` appears, and `roots.listChanged` disappears together with
# notifications/roots/list_changed (2026-07-28 changelog, major 5/6, minor 1).
_CLIENT_2026: Final = frozenset(
    {
        "elicitation",
        "elicitation.form",
        "elicitation.url",
        "experimental",
        "extensions",
        "roots",
        "sampling",
        "sampling.context",
        "sampling.tools",
    }
)

_SERVER_2024: Final = frozenset(
    {
        "experimental",
        "logging",
        "prompts",
        "prompts.listChanged",
        "resources",
        "resources.listChanged",
        "resources.subscribe",
        "tools",
        "tools.listChanged",
    }
)
# `completions` is new in 2025-03-26 (2025-03-26 server/utilities/completion.mdx).
_SERVER_2025_03: Final = _SERVER_2024 | {"completions"}
_SERVER_2025_11: Final = _SERVER_2025_03 | {
    "tasks",
    "tasks.cancel",
    "tasks.list",
    "tasks.requests",
    "tasks.requests.tools",
    "tasks.requests.tools.call",
}
# 2026-07-28 keeps resources.subscribe as the gate for resources/updated on a
# subscriptions/listen stream even though resources/subscribe itself is gone.
_SERVER_2026: Final = _SERVER_2025_03 | {"extensions"}

#: Capability paths a client can declare, per revision.
CLIENT_CAPABILITIES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "2024-11-05": _CLIENT_2024,
        "2025-03-26": _CLIENT_2024,
        "2025-06-18": _CLIENT_2025_06,
        "2025-11-25": _CLIENT_2025_11,
        "2026-07-28": _CLIENT_2026,
    }
)

#: Capability paths a server can declare, per revision.
SERVER_CAPABILITIES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "2024-11-05": _SERVER_2024,
        "2025-03-26": _SERVER_2025_03,
        "2025-06-18": _SERVER_2025_03,
        "2025-11-25": _SERVER_2025_11,
        "2026-07-28": _SERVER_2026,
    }
)


def capability_paths(side: Side, revision: str) -> frozenset[str]:
    """All capability paths ``side`` can declare in ``revision`` (unknown revision raises)."""
    table = CLIENT_CAPABILITIES if side == "client" else SERVER_CAPABILITIES
    return table[require_revision(revision)]


def is_known_capability(side: Side, path: str, revision: str) -> bool:
    """True if ``path`` is a capability the schema of ``revision`` defines for ``side``."""
    return path in capability_paths(side, revision)


def _declared(value: object) -> bool:
    # JSON `false` and `null` mean "not declared"; anything else (including `{}`, the
    # usual "declared, no options" value, and `true`) counts as declared. Identity
    # checks keep 0 (== False in Python) from being mistaken for JSON false.
    return value is not None and value is not False


def has_capability(caps: Mapping[str, object] | None, path: str) -> bool:
    """True if ``caps`` declares the dotted capability ``path``.

    A capability counts as declared when every key on the path is present, every
    intermediate value is an object, and no value on the path is ``False``/``None``.
    So ``{"resources": {"subscribe": True}}`` has ``"resources"`` and
    ``"resources.subscribe"``; ``{"resources": {"subscribe": False}}`` has only
    ``"resources"``. Raises ``ValueError`` for a malformed path (empty segment).
    """
    parts = path.split(".")
    if any(not part for part in parts):
        raise ValueError(f"malformed capability path {path!r}")
    node: object = caps
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
        if not _declared(node):
            return False
    return True


def has_extension(caps: Mapping[str, object] | None, extension_id: str) -> bool:
    """True if ``caps["extensions"]`` declares ``extension_id`` (2026-07-28).

    Extension identifiers such as ``"io.modelcontextprotocol/tasks"`` contain dots, so
    they cannot be looked up with :func:`has_capability`.
    """
    if caps is None:
        return False
    extensions = caps.get("extensions")
    if not isinstance(extensions, Mapping) or extension_id not in extensions:
        return False
    return _declared(extensions[extension_id])
