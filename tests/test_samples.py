"""Every bundled sample loads with the right loader and sensible tables."""

from __future__ import annotations

import polars as pl
import pytest
from factories import SAMPLES

import mcptrace

EXPECTED_FORMAT = {
    "capture": "capture",
    "stdio": "stdio",
    "stdio-pair": "stdio",
    "claude-desktop": "claude-desktop",
    "vscode": "vscode",
    "mcpsnoop": "mcpsnoop",
    "inspector": "inspector",
    "mcpjam": "mcpjam",
    "mcpspy": "mcpspy",
    "mcp-recorder": "mcp-recorder",
    "mcpproxy-activity": "mcpproxy-activity",
    "claude-code": "claude-code",
    "cursor": "cursor",
    "har": "har",
    "otel": "otlp",
}
#: single JSON documents: one row per entry (or per message of an entry), not per line
DOCUMENT_FORMATS = {"inspector", "mcpjam", "mcp-recorder", "har", "otlp"}
#: call-level formats: no handshake, so no revision; their call records account for lines
CALL_LEVEL_FOLDERS = {"mcpproxy-activity", "claude-code", "cursor"}


@pytest.mark.parametrize("folder", sorted(EXPECTED_FORMAT))
def test_sample_folder_loads_with_its_format(folder: str) -> None:
    trace = mcptrace.load(SAMPLES / folder)
    assert trace.errors.is_empty()
    assert set(trace.sources["format"].to_list()) == {EXPECTED_FORMAT[folder]}
    # every line is accounted for
    for row in trace.sources.iter_rows(named=True):
        lines = trace.messages.filter(pl.col("source") == row["source"])["line"]
        records = trace.call_records.filter(pl.col("request_source") == row["source"])
        covered = set(lines.to_list()) | set(records["request_line"].to_list())
        if row["format"] not in DOCUMENT_FORMATS:  # one row per entry of a document
            assert len(covered) == row["lines"]
    sessions = trace.sessions
    if folder not in CALL_LEVEL_FOLDERS:
        assert sessions["revision"].null_count() == 0
        # har: 2026-07-28 is known from _meta; otel: from the spans' mcp.protocol.version
        assert (sessions["revision_source"] == "initialize").all() or folder in (
            "capture",
            "har",
            "otel",
        )
    assert trace.calls.filter(pl.col("outcome") == "ok").height > 0


def test_whole_sample_folder_keeps_sessions_of_different_files_apart() -> None:
    trace = mcptrace.load(SAMPLES)
    per_session = trace.messages.group_by("session").agg(pl.col("source").unique())
    shared = per_session.filter(pl.col("source").list.len() > 1)["session"].to_list()
    assert shared == ["docs"]  # only the per-direction stdio pair shares a session, on purpose
    # + mcpjam 3, mcpspy 2, mcp-recorder 2, mcpproxy-activity 3, claude-code 5, cursor 4;
    # har 3, otel 3
    assert trace.sessions.height == 16 + 19 + 6
