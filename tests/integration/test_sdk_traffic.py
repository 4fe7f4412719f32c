"""Real MCP traffic: the official Python SDK client and server, recorded by ``mcptrace record``.

The SDK client (``stdio_client`` + ``ClientSession``) launches
``python -m mcptrace record -o capture.jsonl -- python sdk_server.py`` as its
"server", so every line crosses the recorder exactly as it would for a real host.
Two sessions are recorded into one capture file:

* ``legacy``: the ``initialize`` handshake, negotiating 2025-11-25;
* ``modern``: 2026-07-28, stateless: ``server/discover`` first, then the
  per-request ``_meta`` envelope on every request (no ``initialize``, and no
  ``ping``, which 2026-07-28 removed).

Each session covers tools/list, tools/call (ok, a tool error, progress, a call
cancelled from the client side), resources/list + read and prompts/list + get.

SDK checked: ``mcp`` 2.3.0 with ``mcp-types`` 2.3.0, whose ``mcp_types.version``
lists ``KNOWN_PROTOCOL_VERSIONS`` 2024-11-05 … 2026-07-28, with
``HANDSHAKE_PROTOCOL_VERSIONS`` up to 2025-11-25 (``LATEST_HANDSHAKE_VERSION``) and
``MODERN_PROTOCOL_VERSIONS = ("2026-07-28",)``. Its stdio server serves both eras
(``serve_dual_era_loop`` picks the era from the first request), so the 2026-07-28
session is real SDK traffic, not a hand-made imitation.

The capture is then loaded and linted with every rule. The findings must equal
:data:`EXPECTED` exactly; each entry there is a real deviation of the SDK, with the
spec sentence that makes it one. Findings that look like false positives of our rules
are not listed: they fail this test until the rule is fixed.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from factories import ROOT, SHARED_SPEC

import mcptrace
from mcptrace import _json
from mcptrace.linter import lint

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None,
    reason="the official MCP SDK (`mcp`, in the dev extra) is not installed",
)

SERVER = Path(__file__).with_name("sdk_server.py")
READY = "sdk_server: ready"  # sdk_server.READY; the server runs in its own process
SERVER_LABEL = "sdk-server"

LEGACY_REVISION = "2025-11-25"
MODERN_REVISION = "2026-07-28"

#: Generous per-request bound: only a hang should ever reach it.
REQUEST_TIMEOUT_S = 20.0
#: Bound on a whole session, start-up of recorder and server included.
SESSION_TIMEOUT_S = 60.0

#: Every call of each session in order: (method, target, outcome).
CALLS_BOTH = [
    ("tools/list", None, "ok"),
    ("tools/call", "echo", "ok"),
    ("tools/call", "fail", "tool_error"),
    ("tools/call", "count", "ok"),
    ("tools/call", "slow", "cancelled"),
    ("resources/list", None, "ok"),
    ("resources/read", "mcptrace://greeting", "ok"),
    ("prompts/list", None, "ok"),
    ("prompts/get", "summarize", "ok"),
]
EXPECTED_CALLS = {
    "legacy": [("initialize", None, "ok"), *CALLS_BOTH, ("ping", None, "ok")],
    "modern": [("server/discover", None, "ok"), *CALLS_BOTH],
}

#: The exact findings of ``lint(trace)`` (every rule) over the capture, as (session, code,
#: message), where ``message`` names the linted message (see :func:`_describe`). Each entry
#: must be a real deviation of the SDK, with the spec sentence and page that make it one.
#:
#: Empty: with mcp 2.3.0 on both sides, no rule finds anything in either session. (The SDK
#: does deviate from one SHOULD that no rule checks: tools returning a plain value get
#: ``structuredContent: {"result": "hi"}`` with ``content`` text ``hi``, while
#: ``server/tools.mdx#structured-content`` says "For backwards compatibility, a tool that
#: returns structured content SHOULD also return the serialized JSON in a TextContent
#: block." A finding for it would belong here once a rule covers it.)
EXPECTED: list[tuple[str, str, str]] = []

#: The same, for the SC rules: every message against the official ``schema.json`` of its
#: revision. Empty: every message of both sessions validates.
EXPECTED_SCHEMA: list[tuple[str, str, str]] = []


# --------------------------------------------------------------------------- recording


def _recorder_params(capture: Path, session: str) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "mcptrace",
            "record",
            "-o",
            str(capture),
            "--session",
            session,
            "--server",
            SERVER_LABEL,
            "--",
            sys.executable,
            str(SERVER),
        ],
        # the source tree, so `-m mcptrace` is this checkout even without an install
        cwd=str(ROOT),
    )


async def _drive(capture: Path, session: str, errpath: Path) -> dict[str, Any]:
    """One client session through the recorder; what the client saw, for the assertions."""
    import anyio
    from mcp import ClientSession, stdio_client

    seen: dict[str, Any] = {}
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    with anyio.fail_after(SESSION_TIMEOUT_S), errpath.open("w") as errlog:
        async with (
            stdio_client(_recorder_params(capture, session), errlog=errlog) as (read, write),
            ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as client,
        ):
            # The SDK gives `server/discover` a fixed 10 s before it gives up; start-up of
            # two Pythons (recorder, server) on a loaded CI machine must not count against it.
            while READY not in errpath.read_text():
                await anyio.sleep(0.05)
            if session == "legacy":
                await client.initialize()
            else:
                await client.discover()
            seen["version"] = client.protocol_version
            seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            seen["echo"] = await client.call_tool("echo", {"text": "hi"})
            seen["fail"] = await client.call_tool("fail", {"reason": "testing"})
            seen["count"] = await client.call_tool(
                "count", {"steps": 3}, progress_callback=on_progress
            )
            seen["count_progress"] = list(progress)
            seen["cancelled"] = await _cancel_slow_call(client)
            seen["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
            seen["resource"] = await client.read_resource("mcptrace://greeting")
            seen["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
            seen["prompt"] = await client.get_prompt("summarize", {"topic": "tracing"})
            if session == "legacy":  # ping is gone in 2026-07-28
                seen["ping"] = await client.send_ping()
    return seen


async def _cancel_slow_call(client: Any) -> bool:
    """Start ``slow``, wait for its "started" progress, then cancel it from the client side.

    Cancelling the task that awaits the call is what makes the SDK send
    ``notifications/cancelled``; waiting for the progress notification (rather than
    sleeping) guarantees the server is running the call when the cancel arrives.
    """
    import anyio

    started = anyio.Event()
    finished = False

    async def on_progress(_value: float, _total: float | None, _message: str | None) -> None:
        started.set()

    async def call() -> None:
        nonlocal finished
        await client.call_tool("slow", {"seconds": 60}, progress_callback=on_progress)
        finished = True

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        with anyio.fail_after(REQUEST_TIMEOUT_S):
            await started.wait()
        group.cancel_scope.cancel()
    return not finished


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Record both sessions into one capture file (once for the module)."""
    import anyio

    tmp = tmp_path_factory.mktemp("sdk")
    capture = tmp / "capture.jsonl"
    seen: dict[str, Any] = {}

    async def drive(session: str) -> None:
        seen[session] = await _drive(capture, session, tmp / f"{session}.stderr")

    async def both() -> None:
        # Concurrently, to halve the wall time: the two recorders append to the same file,
        # which their one-write-per-record O_APPEND writes are made for.
        async with anyio.create_task_group() as group:
            # The SDK client imports jsonschema (seconds) at the first tool result with an
            # outputSchema; in a thread it overlaps the start-up of the four processes.
            group.start_soon(anyio.to_thread.run_sync, importlib.import_module, "jsonschema")
            for session in ("legacy", "modern"):
                group.start_soon(drive, session)

    anyio.run(both)
    stderr = {session: (tmp / f"{session}.stderr").read_text() for session in seen}
    return {"capture": capture, "stderr": stderr, "seen": seen}


# --------------------------------------------------------------------------- helpers


def _records(capture: Path) -> list[dict[str, Any]]:
    return [_json.loads(line) for line in capture.read_bytes().splitlines()]


def _describe(trace: mcptrace.Trace, ordinal: int | None) -> str:
    """A stable name for a linted message: direction, kind, method and target, never a line.

    Line numbers shift with the interleaving of stderr lines; this does not.
    """
    if ordinal is None:
        return "session"
    row = trace.messages.filter(pl.col("ordinal") == ordinal).row(0, named=True)
    kind, direction = row["kind"], row["direction"]
    method, target = row["method"], row["target"]
    if kind in ("response", "error"):
        call = trace.calls.filter(pl.col("response_ordinal") == ordinal)
        if call.height:
            method, target = call["method"][0], call["target"][0]
        kind = f"{kind} to"
    return " ".join(str(p) for p in (direction, kind, method, target) if p is not None)


# --------------------------------------------------------------------------- tests


def test_client_saw_the_server_through_the_recorder(recorded: dict[str, Any]) -> None:
    for session, version in (("legacy", LEGACY_REVISION), ("modern", MODERN_REVISION)):
        seen = recorded["seen"][session]
        assert seen["version"] == version
        assert seen["tools"] == ["count", "echo", "fail", "slow"]
        assert not seen["echo"].is_error and seen["echo"].content[0].text == "hi"
        assert (
            seen["fail"].is_error and "failed on purpose: testing" in seen["fail"].content[0].text
        )
        assert seen["count"].content[0].text == "counted to 3"
        assert seen["count_progress"] == [(i, 3, f"step {i}/3") for i in (1, 2, 3)]
        assert seen["cancelled"] is True
        assert seen["resources"] == ["mcptrace://greeting"]
        assert seen["resource"].contents[0].text == "hello from the sdk server"
        assert seen["prompts"] == ["summarize"]
        assert "tracing" in seen["prompt"].messages[0].content.text
        # the recorder passes the server's stderr on to its own
        assert recorded["stderr"][session].count(READY) == 1
    assert "ping" in recorded["seen"]["legacy"]


def test_capture_records(recorded: dict[str, Any]) -> None:
    records = _records(recorded["capture"])
    assert {r["session"] for r in records} == {"legacy", "modern"}
    assert all(r["transport"] == "stdio" and r["server"] == SERVER_LABEL for r in records)
    for session in ("legacy", "modern"):
        mine = [r for r in records if r["session"] == session]
        # ts are RFC 3339 UTC with microseconds, and never go backwards within a recording
        stamps = [r["ts"] for r in mine]
        assert all(len(t) == 27 and t.endswith("Z") for t in stamps)
        assert stamps == sorted(stamps)
        assert [r["msg"] for r in mine if r["dir"] == "stderr"][:1] == [READY]
        protocol = [r for r in mine if r["dir"] in ("c2s", "s2c")]
        # the SDK writes compact JSON, so no record needs the exact wire text
        assert all(isinstance(r["msg"], dict) and "raw" not in r for r in protocol)
        # records are written before relaying, so each response follows its request
        position = {(r["dir"], r["msg"].get("id")): i for i, r in enumerate(protocol)}
        for (direction, ident), i in position.items():
            if direction == "s2c" and ident is not None:
                assert position[("c2s", ident)] < i


def test_sessions_have_the_right_revision(recorded: dict[str, Any]) -> None:
    trace = mcptrace.load(recorded["capture"])
    assert trace.errors.is_empty()
    sessions = {row["session"]: row for row in trace.sessions.iter_rows(named=True)}
    assert set(sessions) == {"legacy", "modern"}
    legacy, modern = sessions["legacy"], sessions["modern"]
    assert (legacy["revision"], legacy["revision_source"]) == (LEGACY_REVISION, "initialize")
    assert legacy["requested_revision"] == LEGACY_REVISION
    assert (modern["revision"], modern["revision_source"]) == (MODERN_REVISION, "meta")
    for row in (legacy, modern):
        assert row["server"] == SERVER_LABEL and row["transport"] == "stdio"
        assert (row["server_name"], row["server_version"]) == ("mcptrace-sdk-server", "1.0.0")
        assert row["client_name"] == "mcp"
        assert row["invalid"] == 0 and row["orphans"] == 0
        assert row["revisions_seen"] == [row["revision"]]
    # stateless 2026-07-28: every client request carries the version in its own _meta
    requests = trace.messages.filter(
        (pl.col("session") == "modern") & (pl.col("kind") == "request")
    )
    assert requests.height == len(EXPECTED_CALLS["modern"])
    assert requests["protocol_version"].to_list() == [MODERN_REVISION] * requests.height


def test_calls_have_the_expected_outcomes(recorded: dict[str, Any]) -> None:
    trace = mcptrace.load(recorded["capture"])
    for session, expected in EXPECTED_CALLS.items():
        calls = trace.calls.filter(pl.col("session") == session).sort("request_ordinal")
        got = list(zip(calls["method"], calls["target"], calls["outcome"], strict=True))
        assert got == expected, session
        answered = calls.filter(pl.col("outcome") != "cancelled")
        assert answered["latency_ms"].null_count() == 0
        assert (answered["latency_ms"] > 0).all()
        cancelled = calls.filter(pl.col("outcome") == "cancelled").row(0, named=True)
        assert cancelled["cancelled"] and cancelled["latency_ms"] is None
    # progress: three steps for `count`, one "started" for `slow`, each on its own token
    progress = trace.messages.filter(pl.col("method") == "notifications/progress")
    assert progress.group_by("session").len().sort("session").rows() == [
        ("legacy", 4),
        ("modern", 4),
    ]


def _findings(trace: mcptrace.Trace, found: pl.DataFrame) -> tuple[Counter[Any], str]:
    """The findings as a multiset of (session, code, message), and a listing for failures."""
    got = Counter(
        (row["session"], row["code"], _describe(trace, row["ordinal"]))
        for row in found.iter_rows(named=True)
    )
    listing = "\n".join(
        f"  {row['session']} {row['code']} {row['name']} line {row['line']}: {row['message']}"
        for row in found.iter_rows(named=True)
    )
    return got, f"findings:\n{listing}"


def test_lint_findings_are_exactly_the_known_sdk_deviations(recorded: dict[str, Any]) -> None:
    trace = mcptrace.load(recorded["capture"])
    got, listing = _findings(trace, lint(trace))
    assert got == Counter(EXPECTED), listing


@pytest.mark.skipif(
    not all(
        (SHARED_SPEC / rev / "schema.json").is_file() for rev in (LEGACY_REVISION, MODERN_REVISION)
    ),
    reason=f"official schemas not found at {SHARED_SPEC} (<revision>/schema.json)",
)
def test_messages_validate_against_the_official_schemas(recorded: dict[str, Any]) -> None:
    trace = mcptrace.load(recorded["capture"])
    got, listing = _findings(trace, lint(trace, select=["SC"], schema_dir=SHARED_SPEC))
    assert got == Counter(EXPECTED_SCHEMA), listing
