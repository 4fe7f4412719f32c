"""Call-level formats (spans, gateway logs) feed the calls and sessions tables directly."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from factories import WriteLines, rec, req, res, ts

import mcptrace
from mcptrace.schema import CALLS, SESSIONS, SOURCES


def _records() -> pl.DataFrame:
    t0 = datetime(2026, 8, 1, 10, 0, tzinfo=UTC)
    t1 = datetime(2026, 8, 1, 10, 0, 1, tzinfo=UTC)
    return CALLS.conform(
        pl.DataFrame(
            {
                "session": ["otel-1", "otel-1"],
                "server": ["weather", "weather"],
                "client": ["agent", None],
                "revision": ["2025-11-25", "2025-11-25"],
                "direction": ["c2s", "c2s"],
                "id": ["1", '"a"'],
                "method": ["tools/call", "tools/call"],
                "target": ["forecast", "forecast"],
                "request_source": ["spans.json", "spans.json"],
                "request_ts": [t0, t0],
                "response_ts": [t1, None],
                "latency_ms": [1000.0, None],
                "outcome": ["ok", "unanswered"],
            }
        )
    )


def test_call_records_join_messages_in_calls_and_sessions(write_lines: WriteLines) -> None:
    loaded = mcptrace.load(
        write_lines([rec(req(1, "tools/list"), ts=ts(1)), rec(res(1), dir="s2c", ts=ts(2))])
    )
    trace = mcptrace.Trace(
        messages=loaded.messages,
        sources=pl.concat(
            [loaded.sources, SOURCES.from_columns({"source": ["spans.json"], "format": ["otlp"]})]
        ),
        call_records=_records(),
    )
    CALLS.validate(trace.calls)
    SESSIONS.validate(trace.sessions)
    assert trace.calls.height == 3
    otel = trace.sessions.filter(pl.col("session") == "otel-1").row(0, named=True)
    assert (otel["revision"], otel["revision_source"], otel["format"]) == (
        "2025-11-25",
        "telemetry",
        "otlp",
    )
    assert (otel["requests"], otel["messages"], otel["unanswered"], otel["client_name"]) == (
        2,
        0,
        1,
        "agent",
    )
    assert trace.call_only_sessions == ["otel-1"]
    # client filled in from the session for the record that lacked it
    assert trace.calls.filter(pl.col("session") == "otel-1")["client"].to_list() == [
        "agent",
        "agent",
    ]
    # filtering keeps the call records of the chosen sessions only
    assert trace.filter(session="otel-1").calls.height == 2
    assert trace.filter(session="s1").calls.height == 1
