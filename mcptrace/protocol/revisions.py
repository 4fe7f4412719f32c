"""Protocol revision identifiers and their ordering.

This module owns the list of published MCP revision strings, their era (legacy
``initialize``-based sessions vs. the modern stateless protocol), and small helpers
for comparing and slicing revisions. It also records, per revision, which JSON Schema
dialect and definitions key the official ``schema.json`` uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = [
    "LATEST_REVISION",
    "LEGACY_REVISIONS",
    "MODERN_REVISIONS",
    "REVISIONS",
    "SCHEMA_DEFINITIONS_KEY",
    "UnknownRevisionError",
    "is_known_revision",
    "is_legacy",
    "is_modern",
    "require_revision",
    "revision_before",
    "revision_index",
    "revisions_between",
]

#: Every published revision, oldest first. Revision strings are ISO dates, so the
#: tuple order is also their lexical order.
REVISIONS: Final[tuple[str, ...]] = (
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
)

# Why "draft" is deliberately NOT a known revision: in the specification repository
# `draft` is only a folder name for the revision under construction. It never travels
# on the wire: the draft schema.ts sets LATEST_PROTOCOL_VERSION = "2026-07-28", so an
# implementation built from the draft announces "2026-07-28" in `protocolVersion`.
# At the spec commit we track (b0f60ba5) the draft schema.json is byte-identical to
# 2026-07-28, but the folder is a moving target; a trace line carrying the literal
# string "draft" is therefore an unknown version, exactly like any other string.

#: Revisions that use the ``initialize`` handshake and sessions.
LEGACY_REVISIONS: Final[tuple[str, ...]] = REVISIONS[:4]

#: Revisions of the stateless protocol (per-request ``_meta``, no ``initialize``).
MODERN_REVISIONS: Final[tuple[str, ...]] = ("2026-07-28",)

#: The newest published revision.
LATEST_REVISION: Final[str] = REVISIONS[-1]

#: Key under which each revision's schema.json keeps its definitions: the first three
#: revisions are JSON Schema draft-07 (``definitions``), later ones 2020-12 (``$defs``).
SCHEMA_DEFINITIONS_KEY: Final[Mapping[str, str]] = MappingProxyType(
    {
        "2024-11-05": "definitions",
        "2025-03-26": "definitions",
        "2025-06-18": "definitions",
        "2025-11-25": "$defs",
        "2026-07-28": "$defs",
    }
)

_INDEX: Final[Mapping[str, int]] = MappingProxyType({rev: i for i, rev in enumerate(REVISIONS)})


class UnknownRevisionError(KeyError, ValueError):
    """Raised when a helper that needs a known revision is given any other string.

    It is both a ``KeyError`` (a failed lookup) and a ``ValueError`` (a bad argument)
    so callers may catch whichever reads better at the call site.
    """

    def __init__(self, revision: object) -> None:
        super().__init__(revision)
        self.revision = revision

    def __str__(self) -> str:
        return f"unknown MCP revision {self.revision!r}; known: {', '.join(REVISIONS)}"


def is_known_revision(s: str | None) -> bool:
    """Return True if ``s`` is exactly one of :data:`REVISIONS` (``"draft"`` is not)."""
    return s is not None and s in _INDEX


def require_revision(revision: str) -> str:
    """Return ``revision`` unchanged if known, else raise :class:`UnknownRevisionError`."""
    if revision not in _INDEX:
        raise UnknownRevisionError(revision)
    return revision


def revision_index(rev: str) -> int:
    """Position of ``rev`` in :data:`REVISIONS` (0 = oldest).

    Raises :class:`UnknownRevisionError` (a ``KeyError`` and ``ValueError``) if unknown.
    """
    try:
        return _INDEX[rev]
    except KeyError:
        raise UnknownRevisionError(rev) from None


def revisions_between(first: str, last: str) -> tuple[str, ...]:
    """Revisions from ``first`` to ``last``, both inclusive, oldest first.

    Returns an empty tuple when ``first`` is newer than ``last``. Raises
    :class:`UnknownRevisionError` if either bound is unknown.
    """
    lo = revision_index(first)
    hi = revision_index(last)
    return REVISIONS[lo : hi + 1]


def is_modern(rev: str) -> bool:
    """True for stateless-era revisions (2026-07-28). Unknown strings give False."""
    return rev in MODERN_REVISIONS


def is_legacy(rev: str) -> bool:
    """True for ``initialize``-era revisions (2024-11-05 … 2025-11-25). Unknown gives False."""
    return rev in LEGACY_REVISIONS


def revision_before(revision: str, other: str) -> bool:
    """True if ``revision`` is strictly older than ``other``; unknown revisions raise."""
    return revision_index(revision) < revision_index(other)
