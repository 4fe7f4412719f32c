"""JSON-RPC / MCP error codes: names, partitions, and per-revision classification.

This module owns what every integer error code means in each MCP revision: the five
JSON-RPC 2.0 standard codes, MCP's own codes (the legacy -32002 and -32042, the 2026
-32020…-32022), the 2026-07-28 partition of the JSON-RPC server-error range, and the
pre-release numbers that early 2026 drafts used. Sources: SPEC_RULES.md §2, the
2026-07-28 ``basic/index.mdx#error-codes`` page, the 2026-07-28 changelog (minor 6 and
12), and the error definitions of the schema.json files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from .revisions import (
    LEGACY_REVISIONS,
    REVISIONS,
    is_modern,
    require_revision,
    revision_before,
)

__all__ = [
    "ERROR_CODE_NAMES",
    "ERROR_SCHEMA_DEFS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JSONRPC_RESERVED_RANGE",
    "JSONRPC_SERVER_ERROR_RANGE",
    "JSONRPC_STANDARD_CODES",
    "LEGACY_SUBRANGE",
    "MCP_RESERVED_SUBRANGE",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "PRERELEASE_CODES",
    "CodeRange",
    "ErrorCategory",
    "ErrorCodeInfo",
    "error_code_info",
    "error_schema_def",
]

#: Classification of an error code (see :func:`error_code_info`).
ErrorCategory = Literal[
    "jsonrpc",
    "mcp",
    "legacy-mcp",
    "implementation",
    "reserved-undefined",
    "jsonrpc-reserved",
    "application",
]


@dataclass(frozen=True, slots=True)
class CodeRange:
    """An inclusive integer range of error codes; supports ``code in RANGE``."""

    low: int
    high: int

    def __contains__(self, code: object) -> bool:
        # bool is an int subclass, but JSON true/false are never error codes.
        return (
            isinstance(code, int) and not isinstance(code, bool) and (self.low <= code <= self.high)
        )


#: JSON-RPC 2.0 reserves -32768…-32000 for pre-defined errors.
JSONRPC_RESERVED_RANGE: Final = CodeRange(-32768, -32000)
#: JSON-RPC 2.0 "server error" range, implementation-defined until 2026-07-28.
JSONRPC_SERVER_ERROR_RANGE: Final = CodeRange(-32099, -32000)
#: 2026-07-28 partition: grandfathered implementation codes (SHOULD NOT be used).
LEGACY_SUBRANGE: Final = CodeRange(-32019, -32000)
#: 2026-07-28 partition: defined only by the MCP specification.
MCP_RESERVED_SUBRANGE: Final = CodeRange(-32099, -32020)

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

#: The JSON-RPC 2.0 standard codes, valid in every revision.
JSONRPC_STANDARD_CODES: Final[frozenset[int]] = frozenset(
    {PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR}
)

_RESOURCE_NOT_FOUND: Final = -32002
_URL_ELICITATION_REQUIRED: Final = -32042
_MCP_2026_CODES: Final[frozenset[int]] = frozenset({-32020, -32021, -32022})

#: Names of every code that some revision (or JSON-RPC itself) names.
ERROR_CODE_NAMES: Final[Mapping[int, str]] = MappingProxyType(
    {
        PARSE_ERROR: "ParseError",
        INVALID_REQUEST: "InvalidRequest",
        METHOD_NOT_FOUND: "MethodNotFound",
        INVALID_PARAMS: "InvalidParams",
        INTERNAL_ERROR: "InternalError",
        _RESOURCE_NOT_FOUND: "ResourceNotFound",
        _URL_ELICITATION_REQUIRED: "URLElicitationRequired",
        -32020: "HeaderMismatch",
        -32021: "MissingRequiredClientCapability",
        -32022: "UnsupportedProtocolVersion",
    }
)

#: Pre-release numbers of the 2026 codes, renumbered before publication
#: (2026-07-28 changelog, minor change 12). Seeing one in a trace hints at an
#: implementation built on an early draft; in 2026 they are plain legacy-sub-range codes.
PRERELEASE_CODES: Final[Mapping[int, int]] = MappingProxyType(
    {-32001: -32020, -32003: -32021, -32004: -32022}
)

#: Schema definitions dedicated to an error code, per revision. 2026-07-28's
#: ParseError … InternalError describe the ``error`` member only, while
#: HeaderMismatchError, MissingRequiredClientCapabilityError,
#: UnsupportedProtocolVersionError and 2025-11-25's URLElicitationRequiredError describe
#: the whole response (SPEC_RULES §2, §6 quirk 6).
ERROR_SCHEMA_DEFS: Final[Mapping[str, Mapping[int, str]]] = MappingProxyType(
    {
        "2024-11-05": MappingProxyType({}),
        "2025-03-26": MappingProxyType({}),
        "2025-06-18": MappingProxyType({}),
        "2025-11-25": MappingProxyType({_URL_ELICITATION_REQUIRED: "URLElicitationRequiredError"}),
        "2026-07-28": MappingProxyType(
            {
                PARSE_ERROR: "ParseError",
                INVALID_REQUEST: "InvalidRequestError",
                METHOD_NOT_FOUND: "MethodNotFoundError",
                INVALID_PARAMS: "InvalidParamsError",
                INTERNAL_ERROR: "InternalError",
                -32020: "HeaderMismatchError",
                -32021: "MissingRequiredClientCapabilityError",
                -32022: "UnsupportedProtocolVersionError",
            }
        ),
    }
)

_MODERN_ONLY: Final[tuple[str, ...]] = ("2026-07-28",)


@dataclass(frozen=True, slots=True)
class ErrorCodeInfo:
    """What an error code means.

    ``defined_in`` lists the revisions that define the code with a specific meaning
    (empty for unnamed codes); ``forbidden_in`` the revisions whose text says
    implementations MUST NOT emit it. ``note`` carries extra guidance, e.g. the
    pre-release numbering of -32001/-32003/-32004.
    """

    code: int
    name: str
    category: ErrorCategory
    defined_in: tuple[str, ...]
    forbidden_in: tuple[str, ...]
    note: str = ""


def error_schema_def(code: int, revision: str) -> str | None:
    """Schema definition dedicated to ``code`` in ``revision``, if any."""
    return ERROR_SCHEMA_DEFS[require_revision(revision)].get(code)


def error_code_info(code: int, revision: str | None = None) -> ErrorCodeInfo:
    """Classify any integer error code, optionally as seen by one revision.

    With ``revision=None`` the code is classified by the newest rules (2026-07-28
    partition) while ``defined_in``/``forbidden_in`` still span all revisions. With a
    legacy revision, the whole -32000…-32099 server-error range is
    ``"implementation"`` (JSON-RPC's implementation-defined server errors) except the
    codes that revision itself defines (-32002 everywhere, -32042 in 2025-11-25).
    Raises :class:`~mcptrace.protocol.revisions.UnknownRevisionError` for an unknown
    revision and ``TypeError`` for a non-integer (JSON-RPC requires integer codes).
    """
    if not isinstance(code, int) or isinstance(code, bool):
        raise TypeError(f"error codes are integers, got {type(code).__name__}")
    if revision is not None:
        require_revision(revision)
    modern_view = revision is None or is_modern(revision)
    name = ERROR_CODE_NAMES.get(code, "")

    if code in JSONRPC_STANDARD_CODES:
        return ErrorCodeInfo(code, name, "jsonrpc", REVISIONS, ())

    if code == _RESOURCE_NOT_FOUND:
        # Legacy resources.mdx#error-handling: SHOULD use -32002; 2026-07-28 replaces it
        # by -32602 and forbids emitting it (basic/index.mdx#error-codes), though clients
        # SHOULD still accept it from legacy servers.
        return ErrorCodeInfo(
            code,
            name,
            "legacy-mcp",
            LEGACY_REVISIONS,
            _MODERN_ONLY,
            "2026-07-28 uses -32602 for unknown resources; clients still accept -32002",
        )

    if code == _URL_ELICITATION_REQUIRED:
        if revision is not None and revision_before(revision, "2025-11-25"):
            return ErrorCodeInfo(
                code,
                "Server error",
                "implementation",
                ("2025-11-25",),
                _MODERN_ONLY,
                f"implementation-defined in {revision}; URLElicitationRequired from 2025-11-25",
            )
        return ErrorCodeInfo(
            code,
            name,
            "legacy-mcp",
            ("2025-11-25",),
            _MODERN_ONLY,
            "URL elicitation required (2025-11-25 only); MUST NOT be emitted in 2026-07-28",
        )

    if code in _MCP_2026_CODES:
        if modern_view:
            return ErrorCodeInfo(code, name, "mcp", _MODERN_ONLY, ())
        return ErrorCodeInfo(
            code,
            "Server error",
            "implementation",
            _MODERN_ONLY,
            (),
            f"implementation-defined in {revision}; {name} from 2026-07-28",
        )

    if code in LEGACY_SUBRANGE:
        if not modern_view:
            return ErrorCodeInfo(code, "Server error", "implementation", (), ())
        # 2026-07-28 basic/index.mdx#error-codes: grandfathered, SHOULD NOT be used, and
        # receivers MUST NOT assume a meaning (a warning, never "forbidden").
        note = "legacy sub-range: new implementations SHOULD NOT use it"
        if code in PRERELEASE_CODES:
            target = PRERELEASE_CODES[code]
            note = (
                f"pre-release number of {ERROR_CODE_NAMES[target]} ({target}) in early "
                f"2026-07-28 drafts; {note}"
            )
        return ErrorCodeInfo(code, "Server error", "implementation", (), (), note)

    if code in MCP_RESERVED_SUBRANGE:
        if modern_view:
            return ErrorCodeInfo(
                code,
                "Reserved",
                "reserved-undefined",
                (),
                _MODERN_ONLY,
                "reserved for the MCP specification but undefined; MUST NOT be emitted",
            )
        return ErrorCodeInfo(code, "Server error", "implementation", (), ())

    if code in JSONRPC_RESERVED_RANGE:
        return ErrorCodeInfo(
            code,
            "Reserved",
            "jsonrpc-reserved",
            (),
            (),
            "reserved by JSON-RPC 2.0; application codes SHOULD be allocated outside it",
        )

    return ErrorCodeInfo(code, "Application error", "application", (), ())
