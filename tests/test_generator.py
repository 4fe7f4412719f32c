"""The benchmark capture generator: deterministic, exact, and realistic enough to load.

``benchmarks/`` is a directory of scripts, not a package (and not installed), so the
generator is loaded by path under a private module name. That keeps a generic name
like ``generate`` out of ``sys.path`` for every other test, and needs no
``benchmarks/__init__.py``. It is registered in ``sys.modules`` because dataclasses
look their module up there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import load_generator

import mcptrace
from mcptrace.protocol.methods import method_spec

_RFC3339_US = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
_ENVELOPE = ["ts", "dir", "session", "server", "transport", "msg"]
LEGACY, MODERN = "2025-11-25", "2026-07-28"


gen = load_generator()


def _records(path: Path) -> list[Any]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


# -- determinism and exact size ---------------------------------------------------


@pytest.mark.parametrize("fmt", ["capture", "stdio"])
def test_same_seed_gives_identical_bytes(tmp_path: Path, fmt: str) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    stats_a = gen.generate_capture(a, messages=3000, seed=7, fmt=fmt)
    stats_b = gen.generate_capture(b, messages=3000, seed=7, fmt=fmt)
    gen.generate_capture(c, messages=3000, seed=8, fmt=fmt)
    assert a.read_bytes() == b.read_bytes()
    assert {**stats_a.as_dict(), "path": ""} == {**stats_b.as_dict(), "path": ""}
    assert a.read_bytes() != c.read_bytes()


@pytest.mark.parametrize(
    ("messages", "sessions", "fmt"),
    [(0, None, "capture"), (1, None, "capture"), (7, None, "capture"), (999, 3, "capture"),
     (2500, None, "capture"), (1234, None, "stdio"), (1500, 4, "stdio")],
)  # fmt: skip
def test_writes_exactly_n_lines(
    tmp_path: Path, messages: int, sessions: int | None, fmt: str
) -> None:
    path = tmp_path / "out.jsonl"
    stats = gen.generate_capture(path, messages=messages, seed=1, sessions=sessions, fmt=fmt)
    data = path.read_bytes()
    assert data.count(b"\n") == messages == stats.lines
    assert not data or data.endswith(b"\n")
    assert stats.bytes == len(data)
    assert stats.requests + stats.responses + stats.errors + stats.notifications == messages


def test_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="messages"):
        gen.generate_capture(tmp_path / "x", messages=-1)
    with pytest.raises(ValueError, match="sessions"):
        gen.generate_capture(tmp_path / "x", messages=10, sessions=0)
    with pytest.raises(ValueError, match="format"):
        gen.generate_capture(tmp_path / "x", messages=10, fmt="har")


def test_cli_writes_the_same_file(tmp_path: Path) -> None:
    lib, cli = tmp_path / "lib.jsonl", tmp_path / "cli.jsonl"
    gen.generate_capture(lib, messages=800, seed=3, fmt="stdio")
    assert gen.main([str(cli), "--messages", "800", "--seed", "3", "--format", "stdio"]) == 0
    assert cli.read_bytes() == lib.read_bytes()


# -- well-formed records -----------------------------------------------------------


def test_every_line_is_a_valid_capture_record(tmp_path: Path) -> None:
    path = tmp_path / "cap.jsonl"
    stats = gen.generate_capture(path, messages=5000, seed=2)
    kinds = {"request": 0, "response": 0, "error": 0, "notification": 0}
    last_ts = ""
    for line in path.read_bytes().splitlines():
        rec = orjson.loads(line)
        assert list(rec) == _ENVELOPE
        # the writer splices envelope bytes by hand; it must equal plain orjson output
        assert orjson.dumps(rec) == line
        assert _RFC3339_US.match(rec["ts"]), rec["ts"]
        assert rec["ts"] >= last_ts  # a proxy logs in arrival order
        last_ts = rec["ts"]
        assert rec["dir"] in ("c2s", "s2c")
        assert rec["transport"] in ("stdio", "http")
        assert rec["session"].startswith(rec["server"] + "-")
        msg = rec["msg"]
        assert msg["jsonrpc"] == "2.0"
        if "method" in msg:
            kinds["request" if "id" in msg else "notification"] += 1
        else:
            assert type(msg["id"]) in (int, str)
            kinds["error" if "error" in msg else "response"] += 1
    assert kinds == {
        "request": stats.requests,
        "response": stats.responses,
        "error": stats.errors,
        "notification": stats.notifications,
    }
    assert stats.first_ts is not None and stats.last_ts == last_ts


def test_stdio_format_is_bare_messages(tmp_path: Path) -> None:
    path = tmp_path / "stdio.jsonl"
    gen.generate_capture(path, messages=2000, seed=4, fmt="stdio")
    msgs = _records(path)
    assert all(m["jsonrpc"] == "2.0" and "msg" not in m for m in msgs)
    assert msgs[0]["method"] == "initialize"  # one connection, from its start
    trace = mcptrace.load(path)
    assert trace.sources["format"].to_list() == ["stdio"]
    assert trace.messages.height == 2000
    assert (trace.messages["kind"] == "invalid").sum() == 0


# -- loaded by mcptrace --------------------------------------------------------------


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, mcptrace.Trace]:
    path = tmp_path_factory.mktemp("gen") / "capture-20k.jsonl"
    stats = gen.generate_capture(path, messages=20_000, seed=0)
    return stats, mcptrace.load(path)


def test_loads_every_line_without_invalid_rows(big: tuple[Any, mcptrace.Trace]) -> None:
    stats, trace = big
    m = trace.messages
    assert m.height == stats.lines == 20_000
    assert trace.sources["format"].to_list() == ["capture"]
    assert trace.sources["invalid"].to_list() == [0]
    assert m["parse_error"].null_count() == m.height
    counts = dict(m.group_by("kind").len().iter_rows())
    assert counts == {
        "request": stats.requests,
        "response": stats.responses,
        "error": stats.errors,
        "notification": stats.notifications,
    }
    # mean line length in the range the benchmark is meant to exercise
    assert 400 <= stats.bytes / stats.lines <= 650


def test_sessions_interleave_and_speak_both_revisions(big: tuple[Any, mcptrace.Trace]) -> None:
    stats, trace = big
    sessions = trace.sessions
    assert sessions.height == stats.sessions >= 20_000 // gen.LINES_PER_SESSION
    pairs = sessions.select("revision", pl.col("revision_source").cast(pl.String)).unique()
    assert set(pairs.iter_rows()) == {(LEGACY, "initialize"), (MODERN, "meta")}
    counts = dict(sessions.group_by("revision").len().iter_rows())
    assert counts == stats.revisions
    assert sessions["client_name"].null_count() == 0
    assert sessions["server_name"].null_count() == 0
    # several sessions active at once: consecutive lines keep changing session
    switches = int((trace.messages["session"] != trace.messages["session"].shift(1)).sum())
    assert switches > 10 * sessions.height


def test_methods_fit_their_revision_and_direction(big: tuple[Any, mcptrace.Trace]) -> None:
    _, trace = big
    rev = trace.sessions.select("session", "revision")
    used = (
        trace.messages.filter(pl.col("method").is_not_null())
        .join(rev, on="session")
        .group_by("revision", "method", pl.col("direction").cast(pl.String))
        .len()
    )
    for revision, method, direction, _ in used.iter_rows():
        spec = method_spec(revision, method)
        assert spec is not None and not spec.embedded, (revision, method)
        assert direction in spec.directions, (revision, method, direction)
    modern = trace.messages.join(rev.filter(pl.col("revision") == MODERN), on="session")
    requests = modern.filter(pl.col("kind") == "request")
    assert (requests["protocol_version"] == MODERN).all()
    assert modern.filter(pl.col("kind") == "response")["result_type"].null_count() == 0
    legacy = trace.messages.join(rev.filter(pl.col("revision") == LEGACY), on="session")
    assert legacy["result_type"].null_count() == legacy.height


def test_calls_have_latencies_and_every_outcome(big: tuple[Any, mcptrace.Trace]) -> None:
    _, trace = big
    calls = trace.calls
    outcomes = set(calls["outcome"].cast(pl.String).to_list())
    assert {"ok", "error", "tool_error", "cancelled", "input_required"} <= outcomes
    assert "orphan" not in outcomes
    answered = calls.filter(pl.col("response_ordinal").is_not_null())
    assert answered["latency_ms"].null_count() == 0
    assert (answered["latency_ms"] > 0).all()
    ok = answered.filter(pl.col("method") == "tools/call")["latency_ms"]
    assert 20 < ok.median() < 1000  # type: ignore[operator]
    assert ok.max() > 10 * ok.median()  # type: ignore[operator]  # slow outliers
    assert set(calls["error_code"].drop_nulls().to_list()) >= {-32602, -32603}
    assert calls["id_type"].cast(pl.String).unique().sort().to_list() == ["integer", "string"]
    # every input_required call is retried with a new id, except where the capture ends
    retries = trace.messages.filter(
        (pl.col("kind") == "request") & pl.col("message").str.contains('"requestState"')
    ).height
    required = int((calls["outcome"] == "input_required").sum())
    assert required - gen.CONCURRENCY <= retries <= required
    # progress notifications only name tokens their session's requests carried
    m = trace.messages
    tokens = m.filter(pl.col("kind") == "request").select("session", "progress_token")
    progress = m.filter(pl.col("method") == "notifications/progress").select(
        "session", "progress_token"
    )
    assert progress.height > 0
    assert progress.join(tokens, on=["session", "progress_token"], how="anti").is_empty()
