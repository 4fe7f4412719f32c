"""SC rules: whole messages against the official JSON Schemas (``schema_dir``).

The generic case runner cannot pass ``schema_dir``, so the SC rules are tested here
against the schemas in ``shared/spec/<revision>/schema.json``:

* the oracle: every official 2026-07-28 example, linted alone as it travels on the
  wire, draws no finding from any message-scope rule of the registry nor any SC rule;
* the healthy sample captures validate clean;
* crafted messages draw the right SC code at the right JSON path, for the draft-07
  (2025-06-18) and 2020-12 (2025-11-25, 2026-07-28) schemas.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

import mcptrace
from mcptrace.errors import UsageError
from mcptrace.linter import RULES, lint
from mcptrace.linter.schemas import json_path, validate_messages
from mcptrace.protocol.methods import MESSAGE_DEFS, METHODS, method_spec, result_response_def

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec"
EXAMPLES = SPEC / "2026-07-28" / "examples"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces" / "capture"
MODERN = "2026-07-28"

pytestmark = pytest.mark.skipif(
    not (SPEC / MODERN / "schema.json").is_file(),
    reason=f"official schemas not found at {SPEC} (shared/spec/<revision>/schema.json)",
)

Line = tuple[str, dict[str, Any]]

#: 2026-07-28 request metadata every modern request must carry (RequestParams._meta).
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "test-host", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _trace(tmp_path: Path, lines: list[Line]) -> mcptrace.Trace:
    path = tmp_path / "capture.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"dir": d, "msg": m}) + b"\n" for d, m in lines))
    return mcptrace.load(path)


def _sc(tmp_path: Path, revision: str, lines: list[Line]) -> list[tuple[int, str, str]]:
    """(line, code, message) of every SC finding, judged as ``revision``."""
    found = lint(_trace(tmp_path, lines), select=["SC"], revision=revision, schema_dir=SPEC)
    return found.select("line", "code", "message").rows()


# --- (a) the oracle: official examples ------------------------------------------------

_BY_MESSAGE_DEF = {name: method for method, name in MESSAGE_DEFS.items()}
_BY_RESULT_RESPONSE = {
    name: method
    for method in METHODS[MODERN]
    if (name := result_response_def(MODERN, method)) is not None
}
#: Official examples that fail a check on purpose, with why. The test also asserts that
#: they still fail, so a fixed example shows up here.
KNOWN_FAILURES = {
    (
        "ReadResourceResultResponse/read-resource-result-response.json",
        "SC003",
    ): "a complete resources/read result without the ttlMs/cacheScope that ReadResourceResult "
    "requires (caching.mdx: servers MUST include caching hints on complete results); it "
    "passes ReadResourceResultResponse only as an InputRequiredResult, whose resultType has "
    "no const (SPEC_RULES §6 quirk 4). Its sibling read-resource-result-response-with-ttl.json "
    "is the valid form.",
}


def _first_example(folder: str) -> dict[str, Any]:
    path = sorted((EXAMPLES / folder).glob("*.json"))[0]
    loaded: dict[str, Any] = orjson.loads(path.read_bytes())
    return loaded


def _as_wire(folder: str, example: dict[str, Any]) -> list[Line]:
    """The capture an official example travels in (see the module docstring)."""
    if folder.endswith("Request"):
        method = _BY_MESSAGE_DEF[folder]
        spec = method_spec(MODERN, method)
        assert spec is not None, folder
        if not spec.embedded:
            return [("c2s", example)]
        # 2026 sampling/elicitation/roots requests only travel inside an
        # InputRequiredResult (mrtr.mdx); the ListRootsRequest example's stray "id"
        # (SPEC_RULES §6 quirk 11) is harmless there.
        carrier = _first_example("CallToolRequest")
        result = {"resultType": "input_required", "inputRequests": {"input-1": example}}
        return [
            ("c2s", carrier),
            ("s2c", {"jsonrpc": "2.0", "id": carrier["id"], "result": result}),
        ]
    if folder.endswith("Notification"):
        return [("c2s" if folder == "CancelledNotification" else "s2c", example)]
    if folder.endswith("ResultResponse"):
        # Answer the official request example of the same method, given the response's id.
        request = {**_first_example(MESSAGE_DEFS[_BY_RESULT_RESPONSE[folder]]), "id": example["id"]}
        return [("c2s", request), ("s2c", example)]
    assert folder.endswith("Error"), folder
    if "jsonrpc" not in example:  # a bare `error` object (ParseError, InvalidParamsError...)
        example = {"jsonrpc": "2.0", "id": 1, "error": example}
    return [("s2c", example)]


def _examples() -> list[tuple[str, Path]]:
    suffixes = ("Request", "Notification", "ResultResponse", "Error")
    if not EXAMPLES.is_dir():
        return []
    return [
        (folder.name, path)
        for folder in sorted(EXAMPLES.iterdir())
        if folder.is_dir() and folder.name.endswith(suffixes)
        for path in sorted(folder.glob("*.json"))
    ]


def test_official_examples_draw_no_finding(tmp_path: Path) -> None:
    examples = _examples()
    assert len(examples) >= 40, f"expected the official examples under {EXAMPLES}"
    codes = [code for code, r in RULES.items() if r.scope == "message" or r.family == "SC"]
    unexpected: list[str] = []
    known_seen: set[tuple[str, str]] = set()
    for i, (folder, path) in enumerate(examples):
        lines = _as_wire(folder, orjson.loads(path.read_bytes()))
        case = tmp_path / str(i)
        case.mkdir()
        found = lint(_trace(case, lines), select=codes, revision=MODERN, schema_dir=SPEC)
        name = f"{folder}/{path.name}"
        for line, code, message in found.select("line", "code", "message").iter_rows():
            if (name, code) in KNOWN_FAILURES:
                known_seen.add((name, code))
            else:
                unexpected.append(f"{name} (capture line {line}): {code} {message}")
    assert not unexpected, "official examples drew findings:\n" + "\n".join(unexpected)
    assert known_seen == set(KNOWN_FAILURES), "a known failure no longer fails: update the list"


# --- (b) the healthy samples -------------------------------------------------------------


@pytest.mark.parametrize("name", ["healthy-2025-11-25.jsonl", "healthy-2026-07-28.jsonl"])
def test_healthy_samples_validate_clean(name: str) -> None:
    trace = mcptrace.load(SAMPLES / name)
    found = lint(trace, select=["SC"], schema_dir=SPEC)
    assert found.is_empty(), found.select("line", "code", "message").rows()
    # the revision was detected and every protocol message was looked at
    assert trace.sessions["revision"].is_in(["2025-11-25", MODERN]).all()


def test_every_sample_trace_validates_clean() -> None:
    found = lint(mcptrace.load(SAMPLES.parent), select=["SC"], schema_dir=SPEC)
    # the incident sample's buggy client sends one request with a null id on purpose
    # (sample_traces/README.md lists its deliberate violations)
    expected = [("incident-2025-11-25.jsonl", 55, "SC001")]
    got = [
        (Path(s).name, line, code)
        for s, line, code in found.select("source", "line", "code").rows()
    ]
    assert got == expected, found.select("source", "line", "code", "message").rows()


# --- (c) crafted messages, per rule and dialect -------------------------------------------


def test_sc001_envelope_draft07(tmp_path: Path) -> None:
    lines: list[Line] = [
        ("c2s", {"jsonrpc": "1.0", "id": 1, "method": "tools/list"}),
        ("c2s", {"id": 2, "method": "tools/call", "params": {"name": "search"}}),
        ("s2c", {"jsonrpc": "2.0", "id": 2, "error": {"code": "-32601", "message": "No"}}),
        # passing: a well-formed request, result and error
        ("c2s", {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        ("s2c", {"jsonrpc": "2.0", "id": 3, "result": {"tools": []}}),
        ("s2c", {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "No"}}),
        # JSON-RPC's null id for an unreadable request is not held against the sender
        ("s2c", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse"}}),
    ]
    assert _sc(tmp_path, "2025-06-18", lines) == [
        (1, "SC001", 'JSONRPCRequest fails at $.jsonrpc: "2.0" was expected'),
        (2, "SC001", 'JSONRPCRequest fails at $: "jsonrpc" is a required property'),
        (3, "SC001", 'JSONRPCError fails at $.error.code: "-32601" is not of type "integer"'),
    ]


@pytest.mark.parametrize("code", [{"nested": 1}, [-32700], "-32700", -32700.0, True, None])
def test_an_error_with_a_null_id_and_a_code_of_any_type_is_judged(
    tmp_path: Path, code: object
) -> None:
    """The null id is excused for parse and invalid-request errors only; a code of another
    JSON type (an object cannot even be looked up) is judged, not a crash."""
    lines: list[Line] = [
        ("s2c", {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": "m"}})
    ]
    found = _sc(tmp_path, "2025-06-18", lines)
    assert [c for _, c, _ in found] == ([] if code == -32700.0 else ["SC001"]), found


def test_sc001_envelope_2020_12(tmp_path: Path) -> None:
    lines_2025: list[Line] = [
        ("c2s", {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}),
        # the 2025-11-25 CallToolRequest includes the envelope: reported once, as SC001
        ("c2s", {"id": 2, "method": "tools/call", "params": {"name": "search"}}),
        # an unknown method: envelope only
        ("c2s", {"jsonrpc": "2.0", "id": 3, "method": "vendor/reindex", "params": 3}),
        ("c2s", {"jsonrpc": "2.0", "id": 4, "method": "vendor/reindex", "params": {"x": 1}}),
        # an id-less error is legitimate from 2025-11-25 on
        ("s2c", {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}),
    ]
    assert _sc(tmp_path, "2025-11-25", lines_2025) == [
        (1, "SC001", 'JSONRPCRequest fails at $.id: 1.5 is not of types "integer", "string"'),
        (2, "SC001", 'JSONRPCRequest fails at $: "jsonrpc" is a required property'),
        (3, "SC001", 'JSONRPCRequest fails at $.params: 3 is not of type "object"'),
    ]
    lines_2026: list[Line] = [
        (
            "c2s",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"_meta": META, "name": "a"},
            },
        ),
        # 2026 results must say their resultType: the envelope says so, SC003 stays quiet
        ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
        ("s2c", {"jsonrpc": "2.0", "id": 9, "error": {"code": -32601, "message": 5}}),
    ]
    assert _sc(tmp_path, MODERN, lines_2026) == [
        (
            2,
            "SC001",
            'JSONRPCResultResponse fails at $.result: "resultType" is a required property',
        ),
        (3, "SC001", 'JSONRPCErrorResponse fails at $.error.message: 5 is not of type "string"'),
    ]


def test_sc002_method_definition_draft07(tmp_path: Path) -> None:
    progress = {"progressToken": 1.5, "progress": "half"}
    lines: list[Line] = [
        ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}),
        ("s2c", {"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}),
        # passing
        ("c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "a"}}),
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1},
            },
        ),
    ]
    assert _sc(tmp_path, "2025-06-18", lines) == [
        (1, "SC002", 'CallToolRequest fails at $.params: "name" is a required property'),
        (
            2,
            "SC002",
            'ProgressNotification fails at $.params.progressToken: 1.5 is not of types "integer", '
            '"string" (first of 2 errors)',
        ),
    ]


def test_sc002_method_definition_2020_12(tmp_path: Path) -> None:
    bad_level = {"level": "loud", "data": "x"}
    lines_2025: list[Line] = [
        ("s2c", {"jsonrpc": "2.0", "method": "notifications/message", "params": bad_level}),
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "x"},
            },
        ),
    ]
    [(line, code, message)] = _sc(tmp_path, "2025-11-25", lines_2025)
    assert (line, code) == (1, "SC002")
    assert message.startswith("LoggingMessageNotification fails at $.params.level: ")
    no_caps = {"io.modelcontextprotocol/protocolVersion": MODERN}
    lines_2026: list[Line] = [
        ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),  # quirk 5: _meta needed
        ("c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": no_caps}}),
        ("c2s", {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}),
    ]
    assert _sc(tmp_path, MODERN, lines_2026) == [
        (1, "SC002", 'ListToolsRequest fails at $: "params" is a required property'),
        (
            2,
            "SC002",
            "ListToolsRequest fails at $.params._meta: "
            '"io.modelcontextprotocol/clientCapabilities" is a required property',
        ),
    ]


def test_sc003_result_type_draft07(tmp_path: Path) -> None:
    lines: list[Line] = [
        ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "search"}]}}),
        ("c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]},
            },
        ),
        # an orphan result has no type to check against
        ("s2c", {"jsonrpc": "2.0", "id": 77, "result": {"tools": 3}}),
    ]
    assert _sc(tmp_path, "2025-06-18", lines) == [
        (
            2,
            "SC003",
            "result of tools/list fails ListToolsResult at $.result.tools[0]: "
            '"inputSchema" is a required property',
        ),
    ]


def test_sc003_result_type_2025_11_25(tmp_path: Path) -> None:
    call = {"name": "build"}
    task_call = {"name": "build", "task": {"ttl": 60000}}
    task = {
        "taskId": "t-1",
        "status": "working",
        "createdAt": "2025-11-25T10:00:00Z",
        "lastUpdatedAt": "2025-11-25T10:00:00Z",
        "ttl": 60000,
    }
    lines: list[Line] = [
        ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}),
        # the content block's type says text, so TextContent is the alternative meant
        ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text"}]}}),
        # an answer to a task-augmented call is checked as what it is: a CreateTaskResult
        # when it has a `task` member (a broken one fails), else the usual result (whether
        # the server should have created a task is TK006's question, not the schema's)
        ("c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": task_call}),
        ("s2c", {"jsonrpc": "2.0", "id": 2, "result": {"content": [], "task": {"ttl": 1}}}),
        ("c2s", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": task_call}),
        ("s2c", {"jsonrpc": "2.0", "id": 3, "result": {"task": task}}),
        ("c2s", {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}),
        (
            "s2c",
            {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "ok"}]}},
        ),
    ]
    assert _sc(tmp_path, "2025-11-25", lines) == [
        (
            2,
            "SC003",
            "result of tools/call fails CallToolResult at $.result.content[0]: "
            '"text" is a required property',
        ),
        (
            4,
            "SC003",
            "result of tools/call fails CreateTaskResult at $.result.task: "
            '"createdAt" is a required property (first of 4 errors)',
        ),
    ]


def test_sc003_result_type_2026(tmp_path: Path) -> None:
    call = {"_meta": META, "name": "book"}
    listing = {"_meta": META}
    elicit = {"method": "elicitation/create", "params": {"mode": "form"}}
    lines: list[Line] = [
        ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": listing}),
        ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": []}}),
        # "complete" is checked against CallToolResult: CallToolResultResponse alone would
        # accept it as an InputRequiredResult
        ("c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
        ("s2c", {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete"}}),
        ("c2s", {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}),
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": 3,
                "result": {"resultType": "input_required", "inputRequests": {"confirm": elicit}},
            },
        ),
        # passing: a complete result and a well-formed input_required one
        ("c2s", {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}),
        ("s2c", {"jsonrpc": "2.0", "id": 4, "result": {"resultType": "complete", "content": []}}),
        ("c2s", {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": call}),
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": 5,
                "result": {"resultType": "input_required", "requestState": "s1"},
            },
        ),
    ]
    found = _sc(tmp_path, MODERN, lines)
    assert [(line, code) for line, code, _ in found] == [(2, "SC003"), (4, "SC003"), (6, "SC003")]
    assert found[0][2] == (
        "result of tools/list fails ListToolsResultResponse at $.result: "
        '"cacheScope" is a required property (first of 2 errors)'
    )
    assert found[1][2] == (
        'result of tools/call fails CallToolResult at $.result: "content" is a required property'
    )
    assert found[2][2].startswith(
        "result of tools/call fails CallToolResultResponse at "
        '$.result.inputRequests.confirm.params: "message" is a required property'
    )


@pytest.mark.parametrize("revision", ["2025-06-18", "2025-11-25", MODERN])
def test_numbers_schema_ts_allows_are_not_narrowed_to_integers(
    tmp_path: Path, revision: str
) -> None:
    """schema.json says integer where schema.ts says number (the generator's
    --defaultNumberType integer): a decimal typed into a number field of a form, and in
    2026-07-28 a decimal or null anywhere JSONValue is (experimental capabilities), pass;
    what schema.ts does not allow still fails."""
    modern = revision == MODERN
    form = {
        "message": "How much?",
        "requestedSchema": {
            "type": "object",
            "properties": {"ratio": {"type": "number", "minimum": 0, "default": 0.5}},
        },
    }
    answer = {"action": "accept", "content": {"ratio": 3.14, "name": "x", "ok": True}}
    bad = {"action": "accept", "content": {"ratio": {"value": 3.14}}}
    experimental = {"x.example/feature": {"ratio": 0.5, "fallback": None, "depth": [1.5]}}
    if modern:
        # a 2026 form travels inside an input_required result; its answer in the retry
        elicit = {"method": "elicitation/create", "params": {"mode": "form", **form}}
        capabilities = {"elicitation": {}, "experimental": experimental}
        caps = {**META, "io.modelcontextprotocol/clientCapabilities": capabilities}
        call = {"_meta": caps, "name": "book"}
        lines: list[Line] = [
            ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}),
            (
                "s2c",
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "result": {"resultType": "input_required", "inputRequests": {"r": elicit}},
                },
            ),
            *[
                (
                    "c2s",
                    {
                        "jsonrpc": "2.0",
                        "id": n,
                        "method": "tools/call",
                        "params": {**call, "inputResponses": {"r": given}},
                    },
                )
                for n, given in ((2, answer), (3, bad))
            ],
        ]
        found = _sc(tmp_path, revision, lines)
        assert [(line, code) for line, code, _ in found] == [(4, "SC002")]
        assert "inputResponses.r.content.ratio" in found[0][2]
        return
    lines = [
        ("s2c", {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": form}),
        ("c2s", {"jsonrpc": "2.0", "id": 1, "result": answer}),
        ("s2c", {"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": form}),
        ("c2s", {"jsonrpc": "2.0", "id": 2, "result": bad}),
    ]
    found = _sc(tmp_path, revision, lines)
    assert [(line, code) for line, code, _ in found] == [(4, "SC003")]
    assert found[0][2].startswith(
        "result of elicitation/create fails ElicitResult at $.result.content.ratio"
    )


def test_sc004_error_definition(tmp_path: Path) -> None:
    unsupported = {"code": -32022, "message": "Unsupported protocol version"}
    lines_2026: list[Line] = [
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "error": {**unsupported, "data": {"requested": "1900-01-01"}},
            },
        ),
        (
            "s2c",
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32021, "message": "Needs elicitation"}},
        ),
        # passing: the required data, and standard codes checked on the error member
        (
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {
                    **unsupported,
                    "data": {"supported": [MODERN], "requested": "1900-01-01"},
                },
            },
        ),
        ("s2c", {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Unknown tool"}}),
        (
            "s2c",
            {"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "Boom", "data": 1}},
        ),
    ]
    assert _sc(tmp_path, MODERN, lines_2026) == [
        (
            1,
            "SC004",
            "error -32022 fails UnsupportedProtocolVersionError at $.error.data: "
            '"supported" is a required property',
        ),
        (
            2,
            "SC004",
            'error -32021 fails MissingRequiredClientCapabilityError at $.error: "data" is a '
            "required property",
        ),
    ]
    url_required = {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32042, "message": "Open a URL", "data": {}},
    }
    assert _sc(tmp_path, "2025-11-25", [("s2c", url_required)]) == [
        (
            1,
            "SC004",
            "error -32042 fails URLElicitationRequiredError at $.error.data: "
            '"elicitations" is a required property',
        ),
    ]
    # before 2025-11-25 -32042 is an ordinary implementation code: no definition
    assert _sc(tmp_path, "2025-06-18", [("s2c", url_required)]) == []


# --- plumbing --------------------------------------------------------------------------------


def test_without_schema_dir_the_rules_find_nothing(tmp_path: Path) -> None:
    trace = _trace(tmp_path, [("c2s", {"jsonrpc": "1.0", "id": 1, "method": "tools/list"})])
    assert lint(trace, select=["SC"], revision="2025-06-18").is_empty()
    assert not lint(trace, select=["SC"], revision="2025-06-18", schema_dir=SPEC).is_empty()


def test_unknown_revision_rows_are_skipped() -> None:
    frame = pl.DataFrame(
        {
            "ordinal": [0, 1],
            "kind": ["request", "request"],
            "method": ["tools/list", "tools/list"],
            "revision": [None, "draft"],
            "message": ['{"id": 1, "method": "tools/list"}'] * 2,
            "request_method": [None, None],
        },
        schema_overrides={"revision": pl.String, "request_method": pl.String},
    )
    assert validate_messages(frame, SPEC).is_empty()
    with_revision = frame.with_columns(revision=pl.lit("2025-06-18"))
    assert validate_messages(with_revision, SPEC)["check"].to_list() == ["envelope"] * 2


def test_schema_dir_without_schemas_is_a_usage_error(tmp_path: Path) -> None:
    trace = _trace(tmp_path, [("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})])
    with pytest.raises(UsageError, match=r"no <revision>/schema\.json"):
        lint(trace, select=["SC"], revision="2025-06-18", schema_dir=tmp_path)


def test_json_path() -> None:
    assert json_path([]) == "$"
    assert json_path(["params", "_meta", "io.modelcontextprotocol/protocolVersion"]) == (
        '$.params._meta["io.modelcontextprotocol/protocolVersion"]'
    )
    assert json_path(["result", "content", 0, "text"]) == "$.result.content[0].text"


def test_a_record_whose_raw_text_is_not_json_is_not_validated_and_not_a_crash(
    tmp_path: Path,
) -> None:
    # `raw` claims to be the message's wire text; one that does not parse leaves the
    # validator nothing to judge (it raised ValueError on the unparsed placeholder)
    msg = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
    records = [
        {"dir": "s2c", "session": "s", "msg": msg, "raw": "x"},
        {
            "dir": "c2s",
            "session": "s",
            "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}},
        },
    ]
    path = tmp_path / "capture.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    found = lint(mcptrace.load(path), schema_dir=SPEC, revision=MODERN, select=["SC"])
    # the second line is still judged
    assert found.filter(pl.col("line") == 1).is_empty()
    assert not found.filter(pl.col("line") == 2).is_empty()
