"""Which files a folder or glob names: links followed, and nothing met left unsaid."""

from __future__ import annotations

import gzip
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from factories import SAMPLES, rec, req, res, ts
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app
from mcptrace.inputs import expand_inputs, expand_paths
from mcptrace.streaming import StreamStats, iter_messages

LEGACY = SAMPLES / "capture" / "healthy-2025-11-25.jsonl"
runner = CliRunner()

needs_fifos = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fails the test, rather than hanging the suite, if it waits on a pipe."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError("blocked: a named pipe was opened for reading")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _capture(path: Path, id: int = 1) -> Path:
    lines = [rec(req(id, "tools/list")), rec(res(id), dir="s2c")]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def _sources(trace: mcptrace.Trace) -> dict[str, tuple[str, str | None]]:
    return {
        Path(r["source"]).name: (r["status"], r["error"])
        for r in trace.sources.iter_rows(named=True)
    }


def test_a_broken_link_and_a_link_loop_in_a_folder_are_reported_not_dropped(
    tmp_path: Path,
) -> None:
    _capture(tmp_path / "a.jsonl")
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "rotated-away.jsonl")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    trace = mcptrace.load(tmp_path)
    sources = _sources(trace)
    assert sources["a.jsonl"] == ("ok", None)
    status, error = sources["gone.jsonl"]
    assert status == "error" and error is not None and "cannot read" in error
    for name in ("loop1", "loop2"):
        status, error = sources[name]
        assert status == "error" and error is not None and "cannot read" in error
    assert trace.messages.height == 2  # the readable file is still analysed


@needs_fifos
def test_a_named_pipe_in_a_folder_is_listed_as_not_read_without_blocking(
    tmp_path: Path, deadline: None
) -> None:
    _capture(tmp_path / "a.jsonl")
    os.mkfifo(tmp_path / "live.pipe")
    found = expand_inputs(tmp_path)
    assert [Path(f).name for f in found.files] == ["a.jsonl"]
    [(path, reason)] = found.skipped
    assert Path(path).name == "live.pipe" and "named pipe" in reason
    trace = mcptrace.load(tmp_path)
    status, error = _sources(trace)["live.pipe"]
    assert status == "error" and error is not None
    assert "name it on the command line" in error
    assert trace.messages.height == 2


@needs_fifos
def test_a_named_pipe_given_by_name_is_read(tmp_path: Path, deadline: None) -> None:
    pipe = tmp_path / "capture.pipe"
    os.mkfifo(pipe)
    body = LEGACY.read_bytes()

    def write() -> None:
        with open(pipe, "wb") as f:
            f.write(body)

    writer = threading.Thread(target=write)
    writer.start()
    trace = mcptrace.load(pipe)
    writer.join()
    assert trace.messages.height == mcptrace.load(LEGACY).messages.height


def test_links_to_folders_are_followed_and_each_folder_is_read_once(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _capture(elsewhere / "b.jsonl", id=2)
    root = tmp_path / "root"
    root.mkdir()
    _capture(root / "a.jsonl")
    (root / "linked").symlink_to(elsewhere)
    (root / "up").symlink_to(root)  # a link back up the tree is not a loop
    (root / "again").symlink_to(elsewhere)  # the same folder by a second link
    files = [Path(p).relative_to(root).as_posix() for p in expand_paths(root)]
    assert files == ["a.jsonl", "again/b.jsonl"]
    assert mcptrace.load(root).messages.height == 4


def test_hidden_entries_and_readmes_are_left_out_of_a_folder(tmp_path: Path) -> None:
    _capture(tmp_path / "a.jsonl")
    _capture(tmp_path / ".partial.jsonl")
    (tmp_path / ".git").mkdir()
    _capture(tmp_path / ".git" / "x.jsonl")
    (tmp_path / "README.md").write_text("# captures\n")
    found = expand_inputs(tmp_path)
    assert [Path(f).name for f in found.files] == ["a.jsonl"] and not found.skipped


def test_a_glob_that_matches_a_folder_reads_the_folder(tmp_path: Path) -> None:
    (tmp_path / "run-1").mkdir()
    _capture(tmp_path / "run-1" / "a.jsonl")
    _capture(tmp_path / "run-2.jsonl", id=2)
    matched = expand_paths(str(tmp_path / "run-*"))
    files = [Path(p).relative_to(tmp_path).as_posix() for p in matched]
    assert files == ["run-1/a.jsonl", "run-2.jsonl"]


@needs_fifos
def test_the_commands_report_a_pipe_in_a_folder_and_exit_2(tmp_path: Path, deadline: None) -> None:
    (tmp_path / "a.jsonl").write_bytes(LEGACY.read_bytes())
    os.mkfifo(tmp_path / "live.pipe")
    result = runner.invoke(app, ["lint", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "live.pipe: not read: a named pipe" in result.output
    result = runner.invoke(app, ["summary", str(tmp_path)])
    assert result.exit_code == 2 and "live.pipe" in result.output
    stats = StreamStats()
    rows = sum(frame.height for frame in iter_messages(tmp_path, stats=stats))
    assert rows == 26
    assert [Path(p).name for p, _ in stats.errors] == ["live.pipe"]


def _timed_capture(path: Path, at: float, id: int = 1) -> None:
    body = orjson.dumps(rec(req(id, "ping"), ts=ts(at))) + b"\n"
    path.write_bytes(gzip.compress(body) if path.suffix == ".gz" else body)


def test_a_rotated_log_is_ordered_by_the_first_time_of_each_file(tmp_path: Path) -> None:
    # logrotate's convention: the higher the number, the older
    _timed_capture(tmp_path / "app.log.2.gz", 0)
    _timed_capture(tmp_path / "app.log.1", 10)
    _timed_capture(tmp_path / "app.log", 20)
    # parts numbered upwards as they were written: the names' convention would reverse them
    _timed_capture(tmp_path / "dump.jsonl.1", 0)
    _timed_capture(tmp_path / "dump.jsonl.2", 10)
    _timed_capture(tmp_path / "dump.jsonl.3", 20)
    names = [Path(p).name for p in expand_paths(tmp_path)]
    assert names == [
        "app.log.2.gz",
        "app.log.1",
        "app.log",
        "dump.jsonl.1",
        "dump.jsonl.2",
        "dump.jsonl.3",
    ]


def test_without_a_time_in_every_file_the_names_decide(tmp_path: Path) -> None:
    _timed_capture(tmp_path / "dump.jsonl.1", 0)
    (tmp_path / "dump.jsonl.2").write_bytes(orjson.dumps(rec(req(1, "ping"), ts=None)) + b"\n")
    _timed_capture(tmp_path / "dump.jsonl.3", 20)
    # two files starting at the same time say nothing either
    _timed_capture(tmp_path / "same.jsonl.1", 5)
    (tmp_path / "same.jsonl.2").write_bytes(  # the same time, written another way
        orjson.dumps(rec(req(1, "ping"), ts="2026-08-01 10:00:05")) + b"\n"
    )
    names = [Path(p).name for p in expand_paths(tmp_path)]
    assert names == ["dump.jsonl.3", "dump.jsonl.2", "dump.jsonl.1", "same.jsonl.2", "same.jsonl.1"]


def test_a_path_under_the_home_folder_is_expanded_in_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no shell expands ~ in a notebook: load("~/captures/x.jsonl") must still read it
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "captures").mkdir()
    (tmp_path / "captures" / "x.jsonl").write_bytes(orjson.dumps(rec(req(1, "ping"))) + b"\n")
    trace = mcptrace.load("~/captures/x.jsonl")
    assert trace.sources["source"].to_list() == [str(tmp_path / "captures" / "x.jsonl")]
    assert expand_paths("~/captures") == [str(tmp_path / "captures" / "x.jsonl")]
    # a file really named ~x is read as it is
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~x.jsonl").write_bytes(orjson.dumps(rec(req(1, "ping"))) + b"\n")
    assert expand_paths("~x.jsonl") == ["~x.jsonl"]
