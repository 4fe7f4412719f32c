"""Error breakdown by category and code, and the error rate."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from factories import SAMPLES

import mcptrace
from mcptrace.analysis import error_breakdown, error_rate
from mcptrace.protocol.errors import JSONRPC_STANDARD_CODES, error_code_info
from mcptrace.schema import CALLS, MESSAGES

MakeTrace = Any


def C(method: str, ms: float = 10.0, **kw: Any) -> dict[str, Any]:
    return {"method": method, "ms": ms, **kw}


def test_categories_and_names_per_revision(make_trace: MakeTrace) -> None:
    legacy = [
        C("tools/call", at=1, target="t", outcome="error", code=-32601),
        C("tools/call", at=2, target="t", outcome="error", code=-32601),
        C("resources/read", at=3, target="file:///x", outcome="error", code=-32002),
        C("tools/call", at=4, target="t", outcome="error", code=-32000),
        C("tools/call", at=5, target="t", outcome="error", code=-32020),
        C("tools/call", at=6, target="t", outcome="error", code=42),
    ]
    modern = [
        C("tools/call", at=7, target="t", outcome="error", code=-32020, session="m"),
        C("tools/call", at=8, target="t", outcome="error", code=-32603, session="m"),
        C("tools/call", at=9, target="t", outcome="error", code=-32050, session="m"),
    ]
    trace = make_trace(legacy + modern, revisions={"s1": "2025-11-25", "m": "2026-07-28"})
    out = error_breakdown(trace, by="revision")
    assert out.columns == ["revision", "category", "code", "name", "count", "share_of_calls"]
    got = {(r, cat, code): (name, n) for r, cat, code, name, n, _ in out.rows()}
    assert got == {
        ("2025-11-25", "jsonrpc", -32601): ("Method not found", 2),
        ("2025-11-25", "legacy-mcp", -32002): ("ResourceNotFound", 1),
        ("2025-11-25", "implementation", -32000): ("Server error", 1),
        # -32020 is HeaderMismatch only from 2026-07-28 on
        ("2025-11-25", "implementation", -32020): ("Server error", 1),
        ("2025-11-25", "application", 42): ("Application error", 1),
        ("2026-07-28", "mcp", -32020): ("HeaderMismatch", 1),
        ("2026-07-28", "jsonrpc", -32603): ("Internal error", 1),
        ("2026-07-28", "reserved-undefined", -32050): ("Reserved", 1),
    }
    # categories come from error_code_info, read with the session's revision
    for (revision, category, code), _ in got.items():
        assert error_code_info(code, revision).category == category
    # largest count first within a group; shares are of all calls of the group
    first = out.row(0, named=True)
    assert first["code"] == -32601
    assert first["share_of_calls"] == pytest.approx(2 / (len(legacy) + 1))  # + initialize


def test_jsonrpc_names_are_the_specifications() -> None:
    calls = CALLS.from_columns(
        {
            "method": ["x"] * 5,
            "outcome": ["error"] * 5,
            "error_code": sorted(JSONRPC_STANDARD_CODES),
        }
    )
    names = dict(error_breakdown(calls, by=()).select("code", "name").rows())
    assert names == {
        -32700: "Parse error",
        -32603: "Internal error",
        -32602: "Invalid params",
        -32601: "Method not found",
        -32600: "Invalid Request",
    }


def test_outcome_categories_and_http_statuses(make_trace: MakeTrace) -> None:
    calls = [
        C("tools/call", at=1, target="a"),
        C("tools/call", at=2, target="a", outcome="tool_error"),
        C("tools/call", at=3, target="a", outcome="tool_error"),
        C("tools/call", at=4, target="b", outcome="unanswered", http=404),
        C("tools/call", at=5, target="b", outcome="cancelled"),
        C("tools/call", at=6, target="b", outcome="error", code=-32601, http=404),
        C("tools/call", at=7, target="b", outcome="error", code=-32020, http=400),
        C("ping", at=8, http=200),
    ]
    trace = make_trace(calls)
    out = error_breakdown(trace, by="tool")
    rows = {(t, cat, code): (name, n, share) for t, cat, code, name, n, share in out.rows()}
    assert rows[("a", "tool_error", None)] == ("Tool error (isError: true)", 2, 2 / 3)
    assert rows[("b", "unanswered", None)] == ("No response", 1, 1 / 4)
    assert rows[("b", "cancelled", None)] == ("Cancelled, no response", 1, 1 / 4)
    # the HTTP status counts the calls again, next to their JSON-RPC category
    assert rows[("b", "http", 404)] == ("HTTP 404 Not Found", 2, 2 / 4)
    assert rows[("b", "http", 400)] == ("HTTP 400 Bad Request", 1, 1 / 4)
    assert rows[("b", "jsonrpc", -32601)][1] == 1
    assert len(rows) == 7  # a 200 is no error; the ok call has no row
    # a bare calls table has no HTTP statuses, unless the messages are given
    bare = error_breakdown(trace.calls, by="tool")
    assert "http" not in bare["category"].to_list()
    assert error_breakdown(trace.calls, by="tool", messages=trace.messages).equals(out)


def test_malformed_error_codes() -> None:
    calls = CALLS.from_columns({"method": ["x"], "outcome": ["error"], "error_code": [None]})
    row = error_breakdown(calls).row(0, named=True)
    assert (row["category"], row["code"], row["name"]) == (
        "malformed",
        None,
        "Missing or non-integer code",
    )


def test_error_rate_definition(make_trace: MakeTrace) -> None:
    calls = [
        *(C("tools/call", at=i, target="a") for i in range(6)),
        C("tools/call", at=6, target="a", outcome="error"),
        C("tools/call", at=7, target="a", outcome="tool_error"),
        C("tools/call", at=8, target="a", outcome="unanswered"),
        C("tools/call", at=70, target="a", outcome="cancelled"),
        C("ping", at=71),
        C("ping", at=72, outcome="error"),
    ]
    trace = make_trace(calls)
    assert error_rate(trace).row(0) == (12, 2, 1, 1, 1, 5 / 12)
    by_method = error_rate(trace, by="method")
    assert by_method.columns == [
        "method",
        "calls",
        "errors",
        "tool_errors",
        "unanswered",
        "cancelled",
        "error_rate",
    ]
    assert by_method.rows() == [("ping", 2, 1, 0, 0, 0, 0.5), ("tools/call", 10, 1, 1, 1, 1, 0.4)]
    bucketed = error_rate(trace, every="1m")
    assert bucketed.select(pl.col("bucket").dt.minute(), "calls", "error_rate").rows() == [
        (0, 9, 3 / 9),
        (1, 3, 2 / 3),
    ]
    errors_per_minute = error_breakdown(trace, by=(), every="1m")
    assert errors_per_minute.columns[0] == "bucket"
    assert errors_per_minute.filter(pl.col("category") == "cancelled")["share_of_calls"].item() == (
        pytest.approx(1 / 3)
    )


def test_orphans_and_input_required_are_not_failures() -> None:
    calls = CALLS.from_columns(
        {"method": ["a", None, "a"], "outcome": ["input_required", "orphan", "ok"]}
    )
    assert error_rate(calls).row(0) == (2, 0, 0, 0, 0, 0.0)
    assert error_breakdown(calls).height == 0


def test_untimed_capture(make_trace: MakeTrace) -> None:
    trace = make_trace([C("ping", at=None), C("ping", at=None, outcome="error")])
    assert error_rate(trace).row(0) == (2, 1, 0, 0, 0, 0.5)
    assert error_rate(trace, every="1m")["bucket"].to_list() == [None]


@pytest.mark.parametrize("table", [CALLS, MESSAGES])
def test_empty_inputs(table: Any) -> None:
    assert error_rate(table.empty()).height == 0
    assert error_rate(table.empty(), by="server", every="1m").columns[:2] == ["server", "bucket"]
    out = error_breakdown(table.empty())
    assert out.height == 0
    assert out.columns == ["method", "category", "code", "name", "count", "share_of_calls"]


def test_sample_capture() -> None:
    trace = mcptrace.load(SAMPLES / "capture" / "healthy-2025-11-25.jsonl")
    out = error_breakdown(trace)
    assert out.select("method", "category", "code", "name", "count").rows() == [
        ("prompts/get", "jsonrpc", -32602, "Invalid params", 1),
        ("tools/call", "tool_error", None, "Tool error (isError: true)", 1),
    ]
    assert out["share_of_calls"].to_list() == [1.0, pytest.approx(1 / 3)]
