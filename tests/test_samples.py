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
}


@pytest.mark.parametrize("folder", sorted(EXPECTED_FORMAT))
def test_sample_folder_loads_with_its_format(folder: str) -> None:
    trace = mcptrace.load(SAMPLES / folder)
    assert trace.errors.is_empty()
    assert set(trace.sources["format"].to_list()) == {EXPECTED_FORMAT[folder]}
    # every line is accounted for
    for row in trace.sources.iter_rows(named=True):
        lines = trace.messages.filter(pl.col("source") == row["source"])["line"]
        if row["format"] != "inspector":  # one row per entry of a pretty-printed document
            assert lines.n_unique() == row["lines"]
    sessions = trace.sessions
    assert sessions["revision"].null_count() == 0
    assert (sessions["revision_source"] == "initialize").all() or folder == "capture"
    assert trace.calls.filter(pl.col("outcome") == "ok").height > 0


def test_whole_sample_folder_keeps_sessions_of_different_files_apart() -> None:
    trace = mcptrace.load(SAMPLES)
    per_session = trace.messages.group_by("session").agg(pl.col("source").unique())
    shared = per_session.filter(pl.col("source").list.len() > 1)["session"].to_list()
    assert shared == ["docs"]  # only the per-direction stdio pair shares a session, on purpose
    assert trace.sessions.height == 16
