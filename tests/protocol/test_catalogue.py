"""Checks ``mcptrace.protocol`` against the official schema.json files and the spec rules.

The schema-driven tests read ``<project>/../shared/spec/<revision>/schema.json`` and skip
when that directory is absent. The rest (error codes, ``_meta`` grammar, capabilities,
revision helpers) need nothing but the package.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from mcptrace import protocol
from mcptrace.protocol import (
    CACHEABLE_METHODS,
    CLIENT_CAPABILITIES,
    CLIENT_CAPABILITIES_KEY,
    ERROR_CODE_NAMES,
    LATEST_REVISION,
    LEGACY_REVISIONS,
    MESSAGE_DEFS,
    METHODS,
    MODERN_REVISIONS,
    MRTR_METHODS,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
    RELATED_TASK_KEY,
    REQUEST_TARGET_PARAM,
    RESERVED_META_KEYS,
    RESULT_TYPES,
    REVISIONS,
    SCHEMA_DEFINITIONS_KEY,
    SERVER_CAPABILITIES,
    TASK_AUGMENTATION_GATES,
    MethodSpec,
    UnknownRevisionError,
    added_in,
    any_revision_directions,
    capability_paths,
    error_code_info,
    error_schema_def,
    gate_for_direction,
    has_capability,
    has_extension,
    has_reserved_prefix,
    is_known_revision,
    is_modern,
    is_reserved_meta_key,
    is_valid_extension_id,
    is_valid_meta_key,
    method_spec,
    methods_in,
    params_schema_pointer,
    removed_in,
    reserved_meta_keys,
    result_response_def,
    revision_before,
    revision_index,
    revisions_between,
    revisions_of,
    wire_methods_in,
)

JSON = dict[str, Any]

SPEC_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "spec"

# Union name -> (message kind, direction) it implies (SPEC_RULES §1, R061).
UNIONS: Mapping[str, tuple[str, str]] = {
    "ClientRequest": ("request", "c2s"),
    "ServerRequest": ("request", "s2c"),
    "ClientNotification": ("notification", "c2s"),
    "ServerNotification": ("notification", "s2c"),
}


# --------------------------------------------------------------------------- helpers


@cache
def _load_schema(revision: str) -> JSON | None:
    path = SPEC_DIR / revision / "schema.json"
    if not path.is_file():
        return None
    data: JSON = json.loads(path.read_text(encoding="utf-8"))
    return data


def schema(revision: str) -> JSON:
    data = _load_schema(revision)
    if data is None:
        pytest.skip(f"official schema not available: {SPEC_DIR / revision / 'schema.json'}")
    return data


def defs(revision: str) -> JSON:
    section: JSON = schema(revision)[SCHEMA_DEFINITIONS_KEY[revision]]
    return section


def ref_name(node: JSON) -> str | None:
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return None
    assert ref.startswith("#/"), ref
    return ref.rsplit("/", 1)[-1]


def resolve(revision: str, node: JSON) -> tuple[str | None, JSON]:
    """Follow local ``$ref`` chains; return (last definition name, resolved node)."""
    name: str | None = None
    while (target := ref_name(node)) is not None:
        name = target
        node = defs(revision)[target]
    return name, node


def properties(revision: str, node: JSON) -> JSON:
    """Properties of a node, merging ``allOf`` branches (after ``$ref`` resolution)."""
    _, node = resolve(revision, node)
    merged: JSON = dict(node.get("properties", {}))
    for branch in node.get("allOf", []):
        merged.update(properties(revision, branch))
    return merged


def union_members(revision: str, union: str) -> list[tuple[str | None, str]]:
    """(definition name or None when inlined, method const) for each union member."""
    node = defs(revision)[union]
    branches = node.get("anyOf") or node.get("oneOf") or [node]
    out: list[tuple[str | None, str]] = []
    for branch in branches:
        name, member = resolve(revision, branch)
        method = properties(revision, member)["method"]["const"]
        out.append((name, method))
    return out


def schema_wire_methods(revision: str) -> dict[str, tuple[set[str], set[str]]]:
    """method -> (kinds, directions) as implied by the four message unions."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for union, (kind, direction) in UNIONS.items():
        if union not in defs(revision):
            continue
        for _, method in union_members(revision, union):
            kinds, directions = found.setdefault(method, (set(), set()))
            kinds.add(kind)
            directions.add(direction)
    return found


def union_def_names(revision: str, union: str) -> set[str]:
    return {name for name, _ in union_members_any(revision, union) if name is not None}


def union_members_any(revision: str, union: str) -> list[tuple[str | None, JSON]]:
    """Members of a union that need not be messages (e.g. result unions)."""
    node = defs(revision)[union]
    branches = node.get("anyOf") or node.get("oneOf") or [node]
    return [resolve(revision, branch) for branch in branches]


def resolve_pointer(revision: str, pointer: str) -> Any:
    assert pointer.startswith("#/"), pointer
    node: Any = schema(revision)
    for part in pointer[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def capability_walk(revision: str, definition: str) -> set[str]:
    paths: set[str] = set()

    def walk(node: JSON, prefix: str) -> None:
        for key, child in properties(revision, node).items():
            path = prefix + key
            paths.add(path)
            walk(child, path + ".")

    walk(defs(revision)[definition], "")
    return paths


# --------------------------------------------------------------------------- revisions


def test_revision_order_and_eras() -> None:
    assert REVISIONS == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
    assert tuple(sorted(REVISIONS)) == REVISIONS
    assert REVISIONS[:4] == LEGACY_REVISIONS
    assert MODERN_REVISIONS == ("2026-07-28",)
    assert LATEST_REVISION == "2026-07-28"
    assert tuple(METHODS) == REVISIONS
    assert [is_modern(r) for r in REVISIONS] == [False, False, False, False, True]
    assert not is_modern("2099-01-01")


@pytest.mark.parametrize("value", ["draft", "DRAFT", "2026-07-29", "", " 2025-06-18", None])
def test_unknown_revision_strings(value: str | None) -> None:
    assert not is_known_revision(value)


def test_known_revision_strings() -> None:
    assert all(is_known_revision(r) for r in REVISIONS)


def test_revision_index_and_ranges() -> None:
    assert [revision_index(r) for r in REVISIONS] == [0, 1, 2, 3, 4]
    with pytest.raises(KeyError):
        revision_index("draft")
    with pytest.raises(ValueError, match="unknown MCP revision"):
        revision_index("2030-01-01")
    assert revisions_between("2025-03-26", "2025-11-25") == (
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
    )
    assert revisions_between("2026-07-28", "2026-07-28") == ("2026-07-28",)
    assert revisions_between("2026-07-28", "2024-11-05") == ()
    assert revision_before("2024-11-05", "2025-03-26")
    assert not revision_before("2025-03-26", "2025-03-26")
    with pytest.raises(UnknownRevisionError):
        revisions_between("draft", "2026-07-28")


@pytest.mark.parametrize("revision", REVISIONS)
def test_schema_dialect(revision: str) -> None:
    data = schema(revision)
    dialect = data["$schema"]
    if SCHEMA_DEFINITIONS_KEY[revision] == "definitions":
        assert "draft-07" in dialect
    else:
        assert "2020-12" in dialect
    assert SCHEMA_DEFINITIONS_KEY[revision] in data


# --------------------------------------------------------------------------- methods vs schema


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_union_method_is_catalogued(revision: str) -> None:
    for union, (kind, direction) in UNIONS.items():
        if union not in defs(revision):
            continue
        for _, method in union_members(revision, union):
            spec = method_spec(revision, method)
            assert spec is not None, f"{revision} {union}: {method} missing from METHODS"
            assert not spec.embedded, (revision, method)
            assert spec.kind == kind, (revision, method)
            assert direction in spec.directions, (revision, union, method)


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_wire_method_is_in_a_union(revision: str) -> None:
    found = schema_wire_methods(revision)
    assert set(found) == set(wire_methods_in(revision))
    for name in wire_methods_in(revision):
        spec = METHODS[revision][name]
        kinds, directions = found[name]
        assert kinds == {spec.kind}, (revision, name)
        # Exact: the catalogue may neither widen nor narrow what the unions allow.
        assert directions == set(spec.directions), (revision, name)


def test_2026_has_no_server_request_union() -> None:
    assert "ServerRequest" not in defs("2026-07-28")
    for revision in LEGACY_REVISIONS:
        assert "ServerRequest" in defs(revision)
    assert not any(
        "s2c" in spec.directions and spec.kind == "request" and not spec.embedded
        for spec in METHODS["2026-07-28"].values()
    )


def test_2026_client_notification_is_inlined_cancel() -> None:
    node = defs("2026-07-28")["ClientNotification"]
    assert "$ref" not in node
    assert "anyOf" not in node
    assert union_members("2026-07-28", "ClientNotification") == [(None, "notifications/cancelled")]


@pytest.mark.parametrize("revision", REVISIONS)
def test_embedded_input_requests(revision: str) -> None:
    embedded = {name for name, spec in METHODS[revision].items() if spec.embedded}
    if "InputRequest" not in defs(revision):
        assert embedded == set()
        return
    members = union_members(revision, "InputRequest")
    assert {method for _, method in members} == embedded
    assert embedded == {"elicitation/create", "sampling/createMessage", "roots/list"}
    for def_name, method in members:
        spec = METHODS[revision][method]
        assert spec.kind == "request"
        assert spec.directions == frozenset({"s2c"})
        assert spec.gate_side == "client"
        assert def_name == MESSAGE_DEFS[method]
        # Embedded input requests carry no JSON-RPC envelope (SPEC_RULES R045).
        assert "id" not in properties(revision, defs(revision)[def_name])


@pytest.mark.parametrize("revision", REVISIONS)
def test_message_defs_match_unions(revision: str) -> None:
    for union in (*UNIONS, "InputRequest"):
        if union not in defs(revision):
            continue
        for def_name, method in union_members(revision, union):
            if def_name is not None:
                assert MESSAGE_DEFS[method] == def_name, (revision, method)


@pytest.mark.parametrize("revision", REVISIONS)
def test_params_defs_match_schema(revision: str) -> None:
    for name, spec in METHODS[revision].items():
        message = defs(revision)[MESSAGE_DEFS[name]]
        params = properties(revision, message)["params"]
        target = ref_name(params)
        expected = target if target is not None else MESSAGE_DEFS[name]
        assert spec.params_def == expected, (revision, name)
        pointer = params_schema_pointer(revision, name)
        assert pointer is not None
        assert (
            resolve(revision, resolve_pointer(revision, pointer))[1] == resolve(revision, params)[1]
        )


@pytest.mark.parametrize("revision", LEGACY_REVISIONS)
def test_legacy_result_defs_are_in_result_unions(revision: str) -> None:
    server_results = union_def_names(revision, "ServerResult")
    client_results = union_def_names(revision, "ClientResult")
    for name, spec in METHODS[revision].items():
        if spec.kind == "notification":
            assert spec.result_def is None
            continue
        assert spec.result_def is not None
        assert spec.result_def in defs(revision), (revision, name)
        if spec.result_def == "EmptyResult":
            # EmptyResult is an alias of Result, which both result unions contain.
            assert ref_name(defs(revision)["EmptyResult"]) == "Result"
            continue
        if "c2s" in spec.directions:
            assert spec.result_def in server_results, (revision, name)
        if "s2c" in spec.directions:
            assert spec.result_def in client_results, (revision, name)


def test_2026_result_defs_and_response_defs() -> None:
    revision = "2026-07-28"
    input_responses = union_def_names(revision, "InputResponse")
    for name, spec in METHODS[revision].items():
        if spec.kind == "notification":
            assert spec.result_def is None
            assert result_response_def(revision, name) is None
            continue
        if spec.embedded:
            assert spec.result_def in input_responses, name
            assert result_response_def(revision, name) is None
            continue
        response = result_response_def(revision, name)
        assert response is not None
        assert response in defs(revision), name
        result_node = properties(revision, defs(revision)[response])["result"]
        branches = {
            ref_name(branch)
            for branch in result_node.get("anyOf", [result_node])
            if ref_name(branch) is not None
        }
        expected = {spec.result_def} | ({"InputRequiredResult"} if spec.mrtr else set())
        assert branches == expected, name


def test_2026_cacheable_flags_match_schema() -> None:
    revision = "2026-07-28"
    for name, spec in METHODS[revision].items():
        if spec.kind != "request" or spec.embedded:
            assert not spec.cacheable and not spec.mrtr, name
            continue
        required = set(defs(revision)[str(spec.result_def)].get("required", []))
        assert spec.cacheable == ({"ttlMs", "cacheScope"} <= required), name
    assert {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    } == CACHEABLE_METHODS
    assert {"prompts/get", "resources/read", "tools/call"} == MRTR_METHODS


@pytest.mark.parametrize("revision", LEGACY_REVISIONS)
def test_legacy_revisions_have_no_2026_flags(revision: str) -> None:
    for spec in METHODS[revision].values():
        assert not (spec.embedded or spec.cacheable or spec.mrtr), (revision, spec.name)
        assert spec.status != "deprecated", (revision, spec.name)


def test_task_augmentation_matches_schema() -> None:
    revision = "2025-11-25"
    augmentable = {
        name
        for name, spec in METHODS[revision].items()
        if spec.params_def is not None
        and spec.params_def in defs(revision)
        and any(
            "task" in properties(revision, member)
            for _, member in union_members_any(revision, spec.params_def)
        )
    }
    assert augmentable == set(TASK_AUGMENTATION_GATES)
    for name, (side, path) in TASK_AUGMENTATION_GATES.items():
        assert path in capability_paths(side, revision), name


@pytest.mark.parametrize("revision", REVISIONS)
def test_request_target_params_exist(revision: str) -> None:
    for name, key in REQUEST_TARGET_PARAM.items():
        spec = method_spec(revision, name)
        if spec is None:
            continue
        assert spec.kind == "request"
        pointer = params_schema_pointer(revision, name)
        assert pointer is not None
        assert key in properties(revision, resolve_pointer(revision, pointer)), (revision, name)


def test_request_target_methods_are_known() -> None:
    for name in REQUEST_TARGET_PARAM:
        assert revisions_of(name), name


# --------------------------------------------------------------------------- methods, pure


def test_method_counts() -> None:
    assert {rev: len(METHODS[rev]) for rev in REVISIONS} == {
        "2024-11-05": 24,
        "2025-03-26": 24,
        "2025-06-18": 25,
        "2025-11-25": 31,
        "2026-07-28": 21,
    }
    assert len(wire_methods_in("2026-07-28")) == 18
    assert methods_in("2026-07-28") - wire_methods_in("2026-07-28") == {
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    }


def test_spec_keys_match_names() -> None:
    for revision, table in METHODS.items():
        for name, spec in table.items():
            assert spec.name == name, revision
            assert spec.directions, (revision, name)
            assert (spec.gate is None) == (spec.gate_side is None), (revision, name)
            assert (spec.kind == "notification") == (spec.result_def is None), (revision, name)
            assert name in MESSAGE_DEFS


def test_removed_in_2026() -> None:
    assert removed_in("2026-07-28") == {
        "initialize",
        "notifications/initialized",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "notifications/roots/list_changed",
        "notifications/elicitation/complete",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
        "notifications/tasks/status",
        # Former server->client requests survive only as embedded input requests.
        "sampling/createMessage",
        "roots/list",
        "elicitation/create",
    }
    assert added_in("2026-07-28") == {
        "server/discover",
        "subscriptions/listen",
        "notifications/subscriptions/acknowledged",
    }


def test_added_and_removed_in_legacy() -> None:
    assert added_in("2024-11-05") == wire_methods_in("2024-11-05")
    assert removed_in("2024-11-05") == frozenset()
    assert added_in("2025-03-26") == frozenset()
    assert added_in("2025-06-18") == {"elicitation/create"}
    assert added_in("2025-11-25") == {
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
        "notifications/tasks/status",
        "notifications/elicitation/complete",
    }
    for revision in LEGACY_REVISIONS:
        assert removed_in(revision) == frozenset()


@pytest.mark.parametrize("revision", REVISIONS[1:])
def test_status_added_matches_added_in(revision: str) -> None:
    flagged = {
        name
        for name, spec in METHODS[revision].items()
        if spec.status == "added" and not spec.embedded
    }
    assert flagged == added_in(revision)


def test_2026_deprecations() -> None:
    deprecated = {n for n, s in METHODS["2026-07-28"].items() if s.status == "deprecated"}
    assert deprecated == {"notifications/message", "sampling/createMessage", "roots/list"}


def test_completion_gate_history() -> None:
    assert METHODS["2024-11-05"]["completion/complete"].gate is None
    for revision in REVISIONS[1:]:
        spec = METHODS[revision]["completion/complete"]
        assert (spec.gate, spec.gate_side) == ("completions", "server")


def test_direction_helpers() -> None:
    assert any_revision_directions("roots/list") == {"s2c"}
    assert any_revision_directions("elicitation/create") == {"s2c"}
    assert any_revision_directions("tools/call") == {"c2s"}
    assert any_revision_directions("server/discover") == {"c2s"}
    assert any_revision_directions("notifications/progress") == {"c2s", "s2c"}
    assert any_revision_directions("ping") == {"c2s", "s2c"}
    assert any_revision_directions("tasks/get") == {"c2s", "s2c"}
    assert any_revision_directions("notifications/tools/list_changed") == {"s2c"}
    assert any_revision_directions("no/such/method") == frozenset()
    # 2026 narrows progress to server->client only.
    assert METHODS["2026-07-28"]["notifications/progress"].directions == {"s2c"}


def test_revisions_of() -> None:
    assert revisions_of("tools/call") == REVISIONS
    assert revisions_of("ping") == LEGACY_REVISIONS
    assert revisions_of("elicitation/create") == ("2025-06-18", "2025-11-25")
    assert revisions_of("server/discover") == ("2026-07-28",)
    assert revisions_of("no/such/method") == ()


def test_lookup_helpers() -> None:
    assert method_spec("draft", "tools/call") is None
    assert method_spec("2026-07-28", "ping") is None
    spec = method_spec("2025-06-18", "tools/call")
    assert isinstance(spec, MethodSpec)
    assert (spec.gate, spec.gate_side) == ("tools", "server")
    with pytest.raises(UnknownRevisionError):
        methods_in("draft")
    with pytest.raises(KeyError):
        wire_methods_in("2027-01-01")
    assert result_response_def("2025-11-25", "tools/call") is None
    assert result_response_def("2026-07-28", "tools/call") == "CallToolResultResponse"
    assert params_schema_pointer("2024-11-05", "tools/call") == (
        "#/definitions/CallToolRequest/properties/params"
    )
    assert params_schema_pointer("2025-11-25", "tools/call") == "#/$defs/CallToolRequestParams"
    assert params_schema_pointer("2026-07-28", "ping") is None


def test_receiver_gates_resolve_by_direction() -> None:
    spec = METHODS["2025-11-25"]["tasks/list"]
    assert spec.gate_side == "receiver"
    assert gate_for_direction(spec, "c2s") == ("server", "tasks.list")
    assert gate_for_direction(spec, "s2c") == ("client", "tasks.list")
    assert gate_for_direction(METHODS["2025-11-25"]["ping"], "c2s") is None
    roots = METHODS["2024-11-05"]["roots/list"]
    assert gate_for_direction(roots, "s2c") == ("client", "roots")


@pytest.mark.parametrize("revision", REVISIONS)
def test_gates_are_declarable_capabilities(revision: str) -> None:
    for name, spec in METHODS[revision].items():
        for direction in spec.directions:
            gate = gate_for_direction(spec, direction)
            if gate is not None:
                side, path = gate
                assert path in capability_paths(side, revision), (revision, name, direction)


def test_catalogue_is_immutable() -> None:
    spec = METHODS["2026-07-28"]["tools/call"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        METHODS["2026-07-28"]["x"] = spec  # type: ignore[index]
    with pytest.raises(TypeError):
        METHODS["x"] = {}  # type: ignore[index]


# --------------------------------------------------------------------------- capabilities


@pytest.mark.parametrize("revision", REVISIONS)
def test_capability_paths_match_schema(revision: str) -> None:
    assert capability_walk(revision, "ClientCapabilities") == CLIENT_CAPABILITIES[revision]
    assert capability_walk(revision, "ServerCapabilities") == SERVER_CAPABILITIES[revision]


def test_capability_history() -> None:
    assert "completions" not in SERVER_CAPABILITIES["2024-11-05"]
    assert "completions" in SERVER_CAPABILITIES["2025-03-26"]
    assert "elicitation" in CLIENT_CAPABILITIES["2025-06-18"]
    assert "elicitation.url" in CLIENT_CAPABILITIES["2025-11-25"]
    assert "tasks.requests.tools.call" in SERVER_CAPABILITIES["2025-11-25"]
    assert "tasks" not in SERVER_CAPABILITIES["2026-07-28"]
    assert "roots.listChanged" not in CLIENT_CAPABILITIES["2026-07-28"]
    assert "extensions" in CLIENT_CAPABILITIES["2026-07-28"]
    with pytest.raises(UnknownRevisionError):
        capability_paths("client", "draft")


def test_has_capability() -> None:
    caps: dict[str, object] = {"resources": {"subscribe": True}, "tools": {}, "logging": {}}
    assert has_capability(caps, "resources")
    assert has_capability(caps, "resources.subscribe")
    assert not has_capability(caps, "resources.listChanged")
    assert has_capability(caps, "tools")
    assert not has_capability(caps, "tools.listChanged")
    assert not has_capability(caps, "prompts")
    assert has_capability(caps, "logging")
    assert not has_capability(None, "tools")
    assert not has_capability({}, "tools")


@pytest.mark.parametrize(
    ("caps", "path", "expected"),
    [
        ({"resources": {"subscribe": False}}, "resources", True),
        ({"resources": {"subscribe": False}}, "resources.subscribe", False),
        ({"resources": {"subscribe": None}}, "resources.subscribe", False),
        ({"resources": None}, "resources", False),
        ({"resources": False}, "resources", False),
        ({"resources": None}, "resources.subscribe", False),
        ({"resources": True}, "resources", True),
        ({"resources": True}, "resources.subscribe", False),
        ({"sampling": {"tools": {}}}, "sampling.tools", True),
        ({"tasks": {"requests": {"tools": {"call": {}}}}}, "tasks.requests.tools.call", True),
        ({"tasks": {"requests": {"tools": {}}}}, "tasks.requests.tools.call", False),
        ({"tools": {"listChanged": 0}}, "tools.listChanged", True),
    ],
)
def test_has_capability_edges(caps: dict[str, object], path: str, expected: bool) -> None:
    assert has_capability(caps, path) is expected


@pytest.mark.parametrize("path", ["", ".", "tools.", ".tools", "a..b"])
def test_has_capability_rejects_malformed_paths(path: str) -> None:
    with pytest.raises(ValueError, match="malformed"):
        has_capability({"tools": {}}, path)


def test_has_extension() -> None:
    caps: dict[str, object] = {
        "extensions": {"io.modelcontextprotocol/tasks": {}, "com.example/off": None}
    }
    assert has_extension(caps, "io.modelcontextprotocol/tasks")
    assert not has_extension(caps, "com.example/off")
    assert not has_extension(caps, "io.modelcontextprotocol/ui")
    assert not has_extension({"extensions": True}, "io.modelcontextprotocol/tasks")
    assert not has_extension(None, "io.modelcontextprotocol/tasks")


# --------------------------------------------------------------------------- error codes


@pytest.mark.parametrize(
    ("code", "revision", "category"),
    [
        (-32700, None, "jsonrpc"),
        (-32600, "2024-11-05", "jsonrpc"),
        (-32601, "2026-07-28", "jsonrpc"),
        (-32602, None, "jsonrpc"),
        (-32603, "2025-06-18", "jsonrpc"),
        # JSON-RPC reserved range boundaries.
        (-32768, None, "jsonrpc-reserved"),
        (-32768, "2024-11-05", "jsonrpc-reserved"),
        (-32769, None, "application"),
        (-32604, None, "jsonrpc-reserved"),
        (-32699, "2026-07-28", "jsonrpc-reserved"),
        (-32100, None, "jsonrpc-reserved"),
        (-32100, "2025-06-18", "jsonrpc-reserved"),
        (-31999, None, "application"),
        # 2026 legacy sub-range -32000..-32019.
        (-32000, None, "implementation"),
        (-32000, "2026-07-28", "implementation"),
        (-32019, "2026-07-28", "implementation"),
        (-32019, "2024-11-05", "implementation"),
        (-32001, "2026-07-28", "implementation"),
        # MCP-defined 2026 codes; implementation-defined before 2026.
        (-32020, None, "mcp"),
        (-32020, "2026-07-28", "mcp"),
        (-32020, "2025-11-25", "implementation"),
        (-32021, "2026-07-28", "mcp"),
        (-32022, "2026-07-28", "mcp"),
        # Reserved-but-undefined 2026 sub-range.
        (-32023, None, "reserved-undefined"),
        (-32023, "2026-07-28", "reserved-undefined"),
        (-32023, "2025-06-18", "implementation"),
        (-32050, "2026-07-28", "reserved-undefined"),
        (-32099, "2026-07-28", "reserved-undefined"),
        (-32099, "2024-11-05", "implementation"),
        # Legacy MCP codes.
        (-32002, None, "legacy-mcp"),
        (-32002, "2024-11-05", "legacy-mcp"),
        (-32002, "2026-07-28", "legacy-mcp"),
        (-32042, None, "legacy-mcp"),
        (-32042, "2025-11-25", "legacy-mcp"),
        (-32042, "2026-07-28", "legacy-mcp"),
        (-32042, "2025-06-18", "implementation"),
        # Application space.
        (-1, None, "application"),
        (-1, "2024-11-05", "application"),
        (0, None, "application"),
        (1, "2026-07-28", "application"),
        (32000, None, "application"),
        (-32000 - 10**9, None, "application"),
    ],
)
def test_error_code_categories(code: int, revision: str | None, category: str) -> None:
    info = error_code_info(code, revision)
    assert info.code == code
    assert info.category == category
    assert info.name


def test_resource_not_found_code_by_revision() -> None:
    info = error_code_info(-32002)
    assert info.name == "ResourceNotFound"
    assert info.defined_in == LEGACY_REVISIONS
    assert info.forbidden_in == ("2026-07-28",)
    assert error_code_info(-32002, "2025-03-26") == info
    assert error_code_info(-32002, "2026-07-28") == info


def test_url_elicitation_required_code() -> None:
    info = error_code_info(-32042, "2025-11-25")
    assert info.name == "URLElicitationRequired"
    assert info.defined_in == ("2025-11-25",)
    assert info.forbidden_in == ("2026-07-28",)


def test_reserved_undefined_codes_are_forbidden_in_2026() -> None:
    info = error_code_info(-32023, "2026-07-28")
    assert info.forbidden_in == ("2026-07-28",)
    assert info.defined_in == ()
    assert error_code_info(-32023, "2025-11-25").forbidden_in == ()


def test_2026_mcp_codes() -> None:
    for code, name in [
        (-32020, "HeaderMismatch"),
        (-32021, "MissingRequiredClientCapability"),
        (-32022, "UnsupportedProtocolVersion"),
    ]:
        info = error_code_info(code, "2026-07-28")
        assert (info.name, info.defined_in, info.forbidden_in) == (name, ("2026-07-28",), ())
        assert ERROR_CODE_NAMES[code] == name


@pytest.mark.parametrize(
    ("code", "target"),
    [
        (-32001, "HeaderMismatch"),
        (-32003, "MissingRequiredClientCapability"),
        (-32004, "UnsupportedProtocolVersion"),
    ],
)
def test_prerelease_codes_are_noted(code: int, target: str) -> None:
    info = error_code_info(code, "2026-07-28")
    assert info.category == "implementation"
    assert "pre-release" in info.note
    assert target in info.note
    assert "pre-release" not in error_code_info(-32005, "2026-07-28").note


def test_jsonrpc_codes_defined_everywhere() -> None:
    for code in (-32700, -32600, -32601, -32602, -32603):
        info = error_code_info(code)
        assert info.defined_in == REVISIONS
        assert info.forbidden_in == ()


def test_named_codes_are_never_application() -> None:
    for code, name in ERROR_CODE_NAMES.items():
        info = error_code_info(code)
        assert info.category != "application"
        assert info.name == name


def test_error_code_info_rejects_bad_input() -> None:
    with pytest.raises(TypeError):
        error_code_info(True)
    with pytest.raises(TypeError):
        error_code_info(-32601.0)  # type: ignore[arg-type]
    with pytest.raises(UnknownRevisionError):
        error_code_info(-32601, "draft")


def _schema_error_codes(revision: str) -> dict[int, str]:
    """Error code constants found in the schema's error definitions."""
    found: dict[int, str] = {}
    for name, node in defs(revision).items():
        props = properties(revision, node)
        code = props.get("code", {}).get("const")
        if code is None and "error" in props:
            code = properties(revision, props["error"]).get("code", {}).get("const")
        if isinstance(code, int):
            found[code] = name
    return found


@pytest.mark.parametrize("revision", REVISIONS)
def test_error_schema_defs_match_schema(revision: str) -> None:
    found = _schema_error_codes(revision)
    assert found == dict(protocol.ERROR_SCHEMA_DEFS[revision])
    for code, name in found.items():
        assert error_schema_def(code, revision) == name
        assert error_code_info(code, revision).category in {"jsonrpc", "mcp", "legacy-mcp"}


def test_code_ranges() -> None:
    assert -32000 in protocol.LEGACY_SUBRANGE
    assert -32019 in protocol.LEGACY_SUBRANGE
    assert -32020 not in protocol.LEGACY_SUBRANGE
    assert -32020 in protocol.MCP_RESERVED_SUBRANGE
    assert -32099 in protocol.MCP_RESERVED_SUBRANGE
    assert -32100 not in protocol.JSONRPC_SERVER_ERROR_RANGE
    assert -32768 in protocol.JSONRPC_RESERVED_RANGE
    assert True not in protocol.JSONRPC_RESERVED_RANGE
    assert "x" not in protocol.JSONRPC_RESERVED_RANGE


# --------------------------------------------------------------------------- _meta keys

VALID_KEYS = [
    "progressToken",
    "",
    "a",
    "a1",
    "x-1.y_2",
    "com.example/",
    "com.example/key",
    "com.ex-ample.a1/na.me",
    "io.modelcontextprotocol/related-task",
    "a/b",
    "traceparent",
]
INVALID_KEYS = [
    "-bad",
    "bad-",
    "_x",
    "x_",
    ".x",
    "a b",
    "1com.example/x",
    "com-.example/x",
    "com.-example/x",
    "com..example/x",
    ".com/x",
    "/x",
    "com.example//x",
    "com.example/x/y",
    "com_example/x",
    "ünï/x",
    "naïve",
    "key\n",
]


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_meta_key_grammar(revision: str) -> None:
    for key in VALID_KEYS:
        assert is_valid_meta_key(key, revision), (revision, key)
    for key in INVALID_KEYS:
        assert not is_valid_meta_key(key, revision), (revision, key)


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_meta_key_grammar_absent_before_2025_06_18(revision: str) -> None:
    for key in VALID_KEYS + INVALID_KEYS:
        assert is_valid_meta_key(key, revision), (revision, key)
        assert not has_reserved_prefix(key, revision)
    assert is_reserved_meta_key(PROGRESS_TOKEN_KEY, revision)
    assert not is_reserved_meta_key("io.modelcontextprotocol/x", revision)
    assert reserved_meta_keys(revision) == {PROGRESS_TOKEN_KEY}


@pytest.mark.parametrize(
    ("key", "reserved_2025_06", "reserved_2025_11"),
    [
        # The examples of 2025-06-18 basic/index.mdx (any label run, then mcp|modelcontextprotocol,
        # then one more label).
        ("modelcontextprotocol.io/x", True, False),
        ("mcp.dev/x", True, False),
        ("api.modelcontextprotocol.org/x", True, True),
        ("tools.mcp.com/x", True, True),
        # The examples of 2025-11-25 basic/index.mdx (second label).
        ("io.modelcontextprotocol/x", False, True),
        ("dev.mcp/x", False, True),
        ("org.modelcontextprotocol.api/x", True, True),
        ("com.mcp.tools/x", True, True),
        ("com.example.mcp/x", False, False),
        # Others.
        ("com.example.mcp.tools/x", True, False),
        ("mcp/x", False, False),
        ("com.example/x", False, False),
        ("IO.MCP/x", False, True),
        ("io.mcpx/x", False, False),
        ("x", False, False),
        ("io.mcp-/x", False, False),  # invalid prefix: never "reserved"
    ],
)
def test_reserved_prefixes(key: str, reserved_2025_06: bool, reserved_2025_11: bool) -> None:
    assert has_reserved_prefix(key, "2025-06-18") is reserved_2025_06
    assert has_reserved_prefix(key, "2025-11-25") is reserved_2025_11
    assert has_reserved_prefix(key, "2026-07-28") is reserved_2025_11


def test_reserved_named_keys() -> None:
    assert reserved_meta_keys("2025-06-18") == {PROGRESS_TOKEN_KEY}
    assert RELATED_TASK_KEY in reserved_meta_keys("2025-11-25")
    assert protocol.MODEL_IMMEDIATE_RESPONSE_KEY in reserved_meta_keys("2025-11-25")
    assert RELATED_TASK_KEY not in reserved_meta_keys("2026-07-28")
    modern = reserved_meta_keys("2026-07-28")
    assert {
        PROGRESS_TOKEN_KEY,
        PROTOCOL_VERSION_KEY,
        CLIENT_CAPABILITIES_KEY,
        protocol.CLIENT_INFO_KEY,
        protocol.LOG_LEVEL_KEY,
        protocol.SERVER_INFO_KEY,
        protocol.SUBSCRIPTION_ID_KEY,
        "traceparent",
        "tracestate",
        "baggage",
    } == modern
    assert is_reserved_meta_key("traceparent", "2026-07-28")
    assert not is_reserved_meta_key("traceparent", "2025-11-25")
    assert is_reserved_meta_key("io.modelcontextprotocol/unknown", "2025-11-25")
    assert not is_reserved_meta_key("com.example/x", "2026-07-28")
    with pytest.raises(UnknownRevisionError):
        is_reserved_meta_key("x", "draft")
    with pytest.raises(UnknownRevisionError):
        is_valid_meta_key("x", "draft")


def test_reserved_keys_obey_their_grammar() -> None:
    for key, info in RESERVED_META_KEYS.items():
        assert info.key == key
        assert info.locations
        for revision in info.revisions:
            assert is_valid_meta_key(key, revision), (key, revision)
            assert is_reserved_meta_key(key, revision), (key, revision)


@pytest.mark.parametrize(
    ("definition", "location"),
    [
        ("RequestMetaObject", "request"),
        ("NotificationMetaObject", "notification"),
        ("ResultMetaObject", "result"),
        ("SubscriptionsListenResultMetaObject", "result"),
    ],
)
def test_2026_meta_objects_match_reserved_keys(definition: str, location: str) -> None:
    revision = "2026-07-28"
    node = defs(revision)[definition]
    required = set(node.get("required", []))
    for key in properties(revision, node):
        info = RESERVED_META_KEYS[key]
        assert revision in info.revisions, key
        assert location in info.locations, key
        if definition == "RequestMetaObject":
            assert info.required == (key in required), key


def test_extension_ids() -> None:
    assert is_valid_extension_id("io.modelcontextprotocol/tasks")
    assert is_valid_extension_id("com.example/my-ext")
    assert not is_valid_extension_id("tasks")
    assert not is_valid_extension_id("bad prefix/x")
    assert not is_valid_extension_id("com.example/-x")


def test_result_types() -> None:
    assert {"complete", "input_required"} == RESULT_TYPES


# --------------------------------------------------------------------------- package surface


def test_public_surface() -> None:
    names = protocol.__all__
    assert len(names) == len(set(names))
    for name in names:
        assert hasattr(protocol, name), name
    for module in (
        protocol.revisions,
        protocol.methods,
        protocol.errors,
        protocol.meta,
        protocol.capabilities,
    ):
        assert set(module.__all__) <= set(names), module.__name__
