"""Per-session overview, and the analysis package's public surface."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
from factories import SAMPLES

import mcptrace
from mcptrace import analysis
from mcptrace.analysis import session_overview

MakeTrace = Any


def C(method: str, ms: float = 10.0, **kw: Any) -> dict[str, Any]:
    return {"method": method, "ms": ms, **kw}


def test_session_overview(make_trace: MakeTrace) -> None:
    a_latencies = [5.0, 50.0, 500.0, 20.0]
    calls = [
        *(C("tools/call", ms, at=i, target="t", session="a") for i, ms in enumerate(a_latencies)),
        C("tools/call", 8.0, at=5, target="t", session="a", outcome="error"),
        C("tools/call", 9.0, at=6, target="t", session="a", outcome="tool_error"),
        C("ping", at=7, session="a", outcome="cancelled"),
        C("ping", at=8, session="b", outcome="unanswered", server="web"),
    ]
    trace = make_trace(calls, revisions={"a": "2025-11-25"}, clients={"a": "desk"})
    out = session_overview(trace)
    assert out.columns == [
        "session",
        "server",
        "client",
        "revision",
        "revision_source",
        "first_ts",
        "duration_s",
        "calls",
        "errors",
        "error_rate",
        "p95_ms",
        "unanswered",
    ]
    a, b = out.rows(named=True)
    assert (a["session"], a["client"], a["revision"], a["revision_source"]) == (
        "a",
        "desk",
        "2025-11-25",
        "initialize",
    )
    # the capture labels b's server only; a's label is filled from its neighbour by
    # the loader, so a's own serverInfo name is checked on a capture of a alone below
    assert a["server"] is not None
    assert (a["calls"], a["errors"], a["unanswered"]) == (8, 2, 1)  # initialize included
    assert a["error_rate"] == pytest.approx(3 / 8)
    init = trace.calls.filter(method="initialize")["latency_ms"].item()
    expected = np.quantile([init, *a_latencies, 8.0, 9.0], 0.95)
    assert a["p95_ms"] == pytest.approx(expected, abs=1e-6)
    assert (b["session"], b["server"], b["calls"], b["unanswered"], b["error_rate"]) == (
        "b",
        "web",
        1,
        1,
        1.0,
    )
    assert b["p95_ms"] is None and b["revision_source"] == "unknown"


def test_server_falls_back_to_server_info(make_trace: MakeTrace) -> None:
    trace = make_trace([C("ping", session="a")], revisions={"a": "2025-11-25"})
    assert session_overview(trace)["server"].to_list() == ["srv"]  # serverInfo.name
    labelled = make_trace([C("ping", session="a", server="docs")], revisions={"a": "2025-11-25"})
    assert session_overview(labelled)["server"].to_list() == ["docs"]  # the capture's label


def test_overview_of_samples() -> None:
    out = session_overview(mcptrace.load(SAMPLES))
    assert out.height == mcptrace.load(SAMPLES).sessions.height
    assert out["calls"].min() >= 0


def test_public_surface() -> None:
    assert "analysis" in mcptrace.__all__ and mcptrace.analysis is analysis
    assert analysis.__all__ == sorted(analysis.__all__)
    functions = [
        "compare",
        "concurrency",
        "error_breakdown",
        "error_bursts",
        "error_rate",
        "latency",
        "latency_coverage",
        "session_overview",
        "slowest_calls",
        "split_at",
        "throughput",
    ]
    for name in functions:
        assert name in analysis.__all__
        doc = inspect.getdoc(getattr(analysis, name)) or ""
        for section in ("Parameters", "Returns", "Examples"):
            assert section in doc, (name, section)


@pytest.mark.parametrize(
    "module", ["__init__", "compare", "errors", "latency", "overview", "traffic"]
)
def test_docstring_examples_run(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import doctest
    import importlib

    monkeypatch.chdir(SAMPLES.parent)  # the examples read sample_traces/
    name = "mcptrace.analysis" + ("" if module == "__init__" else f".{module}")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
