"""Linting several capture files a group at a time (files that share a session together)
gives the findings of loading them all and linting the lot: the same rows, in the same
order, with the whole load's ordinals."""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import polars as pl
import pytest
from click.testing import Result
from factories import load_generator, load_injector, share_every_group, with_batches
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app
from mcptrace.linter import groups, lint, shares
from mcptrace.linter.groups import file_groups, lint_in_groups
from mcptrace.loaders import accel

needs_scanner = pytest.mark.skipif(not accel.available(), reason="the C scanner is not built")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The injected capture (every violation kind) cut into files: six holding whole
    sessions, and two holding the halves of a rotated log (sessions cross them)."""
    work = tmp_path_factory.mktemp("groups")
    clean, injected = work / "clean.jsonl", work / "injected.jsonl"
    load_generator().generate_capture(clean, messages=4_000, seed=5, sessions=24)
    load_injector().inject_violations(clean, injected, seed=3)
    out = work / "captures"
    out.mkdir()
    by_session: dict[str, list[bytes]] = {}
    lines = injected.read_bytes().splitlines(keepends=True)
    for line in lines:
        try:
            key = str(orjson.loads(line).get("session"))
        except orjson.JSONDecodeError:
            key = "unreadable"
        by_session.setdefault(key, []).append(line)
    # lines without a session of their own (unreadable ones among them) go with the
    # rotated log, whose sessions they then join
    odd = [key for key in by_session if key in ("unreadable", "None")]
    names = [key for key in sorted(by_session) if key not in odd]
    rotated = [line for key in [*names[:3], *odd] for line in by_session[key]]
    (out / "rotated.1.jsonl").write_bytes(b"".join(rotated[: len(rotated) // 2]))
    (out / "rotated.2.jsonl").write_bytes(b"".join(rotated[len(rotated) // 2 :]))
    # the other sessions dealt to six files, each session whole in one of them
    for i in range(6):
        dealt = [line for key in names[3 + i :: 6] for line in by_session[key]]
        (out / f"s{i:03d}.jsonl").write_bytes(b"".join(dealt))
    return out


def _expected(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    trace = mcptrace.load(path)
    found = lint(trace)
    pointed = (
        trace.messages.filter(pl.col("ordinal").is_in(found["ordinal"].implode()))
        .select("ordinal", "raw")
        .sort("ordinal")
    )
    return found, pointed


def _reported_as_the_whole_load(path: Path, *options: str) -> Result:
    """``mcptrace lint PATH --format json`` with ``options``, checked to report what
    ``--partitions 1`` (the whole load) does; its result."""
    runner = CliRunner()
    done = runner.invoke(app, ["lint", str(path), "--format", "json", *options])
    whole = runner.invoke(app, ["lint", str(path), "--format", "json", "--partitions", "1"])
    assert done.exit_code == whole.exit_code
    assert orjson.loads(done.stdout) == orjson.loads(whole.stdout)
    assert done.stderr == whole.stderr
    return done


def _spied(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    note: Callable[[Any, tuple[Any, ...], dict[str, Any]], Any],
    module: ModuleType = groups,
) -> list[Any]:
    """``note(result, args, kwargs)`` of each call of ``module.<name>`` from now on, in a
    list that fills as the calls come."""
    seen: list[Any] = []
    real = getattr(module, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        done = real(*args, **kwargs)
        seen.append(note(done, args, kwargs))
        return done

    monkeypatch.setattr(module, name, spy)
    return seen


@needs_scanner
def test_files_that_share_a_session_are_one_group(folder: Path) -> None:
    files = sorted(str(p) for p in folder.glob("*.jsonl"))
    found = file_groups(files)
    assert found is not None
    names = [[Path(files[i]).name for i in group] for group in found]
    assert ["rotated.1.jsonl", "rotated.2.jsonl"] in names
    assert len(names) == len(files) - 1


@needs_scanner
@pytest.mark.parametrize("split", [False, True])
def test_groups_find_what_the_whole_load_does(
    folder: Path, monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    if split:
        # the single-file groups linted in shares too
        monkeypatch.setattr(shares, "MIN_SHARED_BYTES", 0)
        monkeypatch.setattr(shares, "shares_for", lambda size, lines: 2)
    seen: list[str] = []
    done = lint_in_groups(folder, progress=lambda path, i, n: seen.append(Path(path).name))
    assert done is not None and done.shares == len(list(folder.glob("*.jsonl"))) - 1
    assert seen[0] == "rotated.1.jsonl"
    found, pointed = _expected(folder)
    assert found["code"].n_unique() > 30
    assert_frame_equal(done.findings, found)
    assert_frame_equal(done.messages.sort("ordinal"), pointed)
    assert done.rows == mcptrace.load(folder).messages.height


@needs_scanner
def test_files_of_other_formats_are_one_group_with_the_captures_they_share_sessions_with(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for p in sorted(folder.glob("s00*.jsonl"))[:3]:
        (mixed / p.name).write_bytes(p.read_bytes())
    # raw stdio names its session from the file: "s001", as the capture s001.jsonl's
    # default session, so the two go together; the others are groups of their own
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1,"result":{}}\n'
    (mixed / "s001.ndjson").write_bytes(ping)
    (mixed / "other.ndjson.gz").write_bytes(gzip.compress(ping))
    (mixed / "desktop").mkdir()
    for p in Path("sample_traces/claude-desktop").iterdir():
        (mixed / "desktop" / p.name).write_bytes(p.read_bytes())
    seen: list[str] = []
    done = lint_in_groups(mixed, progress=lambda path, i, n: seen.append(Path(path).name))
    assert done is not None
    trace = mcptrace.load(mixed)
    found = lint(trace)
    assert_frame_equal(done.findings, found)
    assert done.rows == trace.messages.height
    # the files of other formats with s001.jsonl (loaded first), then the other captures
    assert seen == ["mcp-server-weather.log", "s000.jsonl", "s002.jsonl"]
    assert found.filter(pl.col("source").str.ends_with("mcp.log")).height > 0


@needs_scanner
def test_the_command_notes_call_only_sessions_of_a_folder_linted_in_groups(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    for p in sorted(folder.glob("s00*.jsonl"))[:2]:
        (tmp_path / p.name).write_bytes(p.read_bytes())
    spans = Path("sample_traces/otel/collector-export.jsonl")
    (tmp_path / spans.name).write_bytes(spans.read_bytes())
    calls = _spied(monkeypatch, "file_groups", lambda _, args, __: len(args[0]))
    grouped = _reported_as_the_whole_load(tmp_path)
    assert calls == [3]
    assert "only call-level records" in grouped.stderr


@needs_scanner
def test_one_group_too_small_to_share_is_loaded_whole(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    rotated = sorted(str(p) for p in folder.glob("rotated.*"))
    assert lint_in_groups(rotated) is None  # one group, too small to share: nothing to gain
    assert lint_in_groups(folder / "s000.jsonl") is None


@needs_scanner
def test_batch_elements_of_a_rotated_log_keep_their_place_in_shares(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows after a line's first (a batch's elements) in files linted as one group in
    shares: each finding and pointed message has the ordinal of the whole load."""
    share_every_group(monkeypatch, 3)
    lines = with_batches((folder.parent / "injected.jsonl").read_bytes().splitlines(keepends=True))
    rotated = []
    for i in range(3):
        part = folder.parent / f"batches.{i}.jsonl"
        part.write_bytes(b"".join(lines[i * len(lines) // 3 : (i + 1) * len(lines) // 3]))
        rotated.append(str(part))
    done = lint_in_groups(rotated)
    assert done is not None
    trace = mcptrace.load(rotated)
    found = lint(trace)
    later = trace.messages.filter(pl.col("batch_index") >= 1)["ordinal"]
    assert found["ordinal"].is_in(later.implode()).sum() > 10
    assert_frame_equal(done.findings, found)
    pointed = trace.messages.filter(pl.col("ordinal").is_in(found["ordinal"].implode()))
    assert_frame_equal(done.messages.sort("ordinal"), pointed.select("ordinal", "raw"))
    assert done.rows == trace.messages.height


@needs_scanner
@pytest.mark.parametrize("count", [2, 3])
def test_a_rotated_log_is_linted_in_shares_dealt_across_its_files(
    folder: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    share_every_group(monkeypatch, count)
    # the whole injected capture, rotated twice: most sessions cross into the next file
    lines = (folder.parent / "injected.jsonl").read_bytes().splitlines(keepends=True)
    rotated = []
    for i in range(3):
        part = folder.parent / f"rotation.{i}.jsonl"
        part.write_bytes(b"".join(lines[i * len(lines) // 3 : (i + 1) * len(lines) // 3]))
        rotated.append(str(part))
    seen: list[tuple[int, int]] = []
    done = lint_in_groups(rotated, progress=lambda path, i, n: seen.append((i, n)))
    assert done is not None
    # the group, then each of its shares
    assert seen == [(0, 1), *[(i, count) for i in range(count)]]
    trace = mcptrace.load(rotated)
    found = lint(trace)
    assert found["code"].n_unique() > 30
    assert_frame_equal(done.findings, found)
    pointed = trace.messages.filter(pl.col("ordinal").is_in(found["ordinal"].implode()))
    assert_frame_equal(done.messages.sort("ordinal"), pointed.select("ordinal", "raw"))
    assert done.rows == trace.messages.height


@needs_scanner
def test_the_command_lints_a_rotated_log_in_shares_with_the_same_report(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    share_every_group(monkeypatch, 2)
    lines = (folder.parent / "injected.jsonl").read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    (tmp_path / "server.log.1").write_bytes(b"".join(lines[:half]))
    (tmp_path / "server.log.2").write_bytes(b"".join(lines[half:]))
    calls = _spied(monkeypatch, "lint_group_in_shares", lambda done, *_: done.shares if done else 0)
    shared = _reported_as_the_whole_load(tmp_path)
    assert calls == [2], "the rotated log was not linted in shares"
    assert shared.exit_code == 1


@needs_scanner
def test_partitions_applies_to_each_big_group_of_a_folder(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every group counts as big here: each is linted in the three shares asked for
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    one = _spied(monkeypatch, "lint_copy_in_shares", lambda _, __, kw: ("file", kw["shares"]))
    many = _spied(monkeypatch, "lint_group_in_shares", lambda _, __, kw: ("files", kw["shares"]))
    shared = _reported_as_the_whole_load(folder, "--partitions", "3")
    # the whole load (--partitions 1) asked for nothing
    assert sorted(one + many) == [("file", 3)] * 6 + [("files", 3)]
    assert shared.exit_code == 1
    # lint_file of a folder takes the same number
    one.clear()
    many.clear()
    found = mcptrace.lint_file(folder, shares=3)
    assert sorted(one + many) == [("file", 3)] * 6 + [("files", 3)]
    assert_frame_equal(found, _expected(folder)[0])


@needs_scanner
def test_an_empty_file_among_the_captures_is_a_group_of_its_own(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # logrotate leaves an empty file behind; it has no format to tell (raw stdio, by
    # default), and used to send the whole folder to the whole load
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    for p in [*folder.glob("rotated.*"), *folder.glob("s00[01].jsonl")]:
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "rotated.3.jsonl").write_bytes(b"")
    files = sorted(str(p) for p in tmp_path.glob("*.jsonl"))
    assert file_groups(files) == [[0, 1], [2], [3], [4]]
    done = lint_in_groups(files)
    assert done is not None
    trace = mcptrace.load(files)
    assert_frame_equal(done.findings, lint(trace))
    assert done.rows == trace.messages.height


@needs_scanner
@pytest.mark.parametrize("split", [False, True])
def test_compressed_captures_are_grouped_from_their_decompressed_copies(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    # logrotate compresses a log's older files: the folder is still linted in groups,
    # and the findings name the compressed files as the whole load does
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    if split:
        monkeypatch.setattr(shares, "MIN_SHARED_BYTES", 0)
        monkeypatch.setattr(shares, "shares_for", lambda size, lines: 2)
    for p in [*folder.glob("rotated.*"), *folder.glob("s00[01].jsonl")]:
        data = p.read_bytes()
        if p.name in ("rotated.1.jsonl", "s001.jsonl"):
            (tmp_path / f"{p.name}.gz").write_bytes(gzip.compress(data))
        else:
            (tmp_path / p.name).write_bytes(data)
    seen: list[str] = []
    done = lint_in_groups(tmp_path, progress=lambda path, i, n: seen.append(Path(path).name))
    assert done is not None
    assert "rotated.1.jsonl.gz" in seen and "s001.jsonl.gz" in seen
    trace = mcptrace.load(tmp_path)
    found = lint(trace)
    assert found.filter(pl.col("source").str.ends_with(".gz")).height > 0
    assert_frame_equal(done.findings, found)
    assert done.rows == trace.messages.height
    # a compressed file of another format is read by its loader, in a group of its own
    (tmp_path / "raw.ndjson.gz").write_bytes(
        gzip.compress(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    )
    done = lint_in_groups(tmp_path)
    assert done is not None
    assert_frame_equal(done.findings, lint(mcptrace.load(tmp_path)))


@needs_scanner
@pytest.mark.parametrize("seed", range(6))
def test_random_cuts_of_a_capture_lint_as_the_whole_load_does(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    # the injected capture cut at random lines into the files of a rotated log, some
    # compressed, maybe an empty one, next to files of other formats, linted in a random
    # number of shares: always the whole load's findings
    rng = random.Random(seed)
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    monkeypatch.setattr(shares, "MIN_SHARED_BYTES", 0)
    count = rng.choice([None, 2, 3, 5])
    if count is not None:
        monkeypatch.setattr(shares, "shares_for", lambda size, lines: count)
    lines = (folder.parent / "injected.jsonl").read_bytes().splitlines(keepends=True)
    cuts = sorted(rng.sample(range(1, len(lines)), rng.randint(1, 6)))
    for i, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(lines)], strict=True)):
        data = b"".join(lines[a:b])
        # as logrotate names them: the file being written has no number
        age = len(cuts) - i
        name = tmp_path / (f"log.jsonl.{age}" if age else "log.jsonl")
        if age and rng.random() < 0.3:
            (tmp_path / f"{name.name}.gz").write_bytes(gzip.compress(data))
        else:
            name.write_bytes(data)
    if rng.random() < 0.5:
        (tmp_path / "other.jsonl").write_bytes(b"")
    samples = [
        p
        for p in Path("sample_traces").rglob("*")
        if p.is_file() and p.parent.name != "capture" and p.name != "README.md"
    ]
    for p in rng.sample(sorted(samples), rng.randint(0, 2)):
        (tmp_path / "other").mkdir(exist_ok=True)
        (tmp_path / "other" / p.name).write_bytes(p.read_bytes())
    trace = mcptrace.load(tmp_path)
    found = lint(trace)
    done = lint_in_groups(tmp_path)
    if done is None:  # every file in one group, linted whole: nothing to compare
        assert count is None
        return
    assert_frame_equal(done.findings, found)
    pointed = trace.messages.filter(pl.col("ordinal").is_in(found["ordinal"].implode()))
    assert_frame_equal(done.messages.sort("ordinal"), pointed.select("ordinal", "raw"))
    assert done.rows == trace.messages.height


@needs_scanner
@pytest.mark.parametrize("kept", [0, 10**9])
def test_the_light_pass_that_groups_files_plans_their_shares_too(
    folder: Path, monkeypatch: pytest.MonkeyPatch, kept: int
) -> None:
    from mcptrace.loaders import partition

    share_every_group(monkeypatch, 2)
    monkeypatch.setattr(groups, "KEPT_PLAN_LINES", kept)
    planned = _spied(monkeypatch, "plan", lambda _, args, __: Path(args[0]).name, partition)
    done = lint_in_groups(folder)
    assert done is not None
    files = sorted(p.name for p in folder.glob("*.jsonl"))
    # each file read once by the light pass when its plan is kept, else twice
    assert sorted(planned) == sorted(files * (1 if kept else 2))
    assert_frame_equal(done.findings, _expected(folder)[0])


@needs_scanner
def test_sessions_that_cross_files_are_dealt_whole(folder: Path) -> None:
    from mcptrace.loaders.base import LoadContext
    from mcptrace.loaders.partition import deal, plan

    rotated = sorted(str(p) for p in folder.glob("rotated.*"))
    plans = [plan(path, 1, LoadContext(source=path)) for path in rotated]
    assert all(p is not None for p in plans)
    dealt = deal([p for p in plans if p is not None], 3)
    frame = pl.DataFrame(
        {
            "session": [h for p in dealt for h in p.session.to_list()],
            "share": [s for p in dealt for s in p.share],
            "file": [i for i, p in enumerate(dealt) for _ in range(p.lines)],
        }
    )
    per_session = frame.group_by("session").agg(
        shares=pl.col("share").n_unique(), files=pl.col("file").n_unique()
    )
    assert per_session["shares"].max() == 1
    assert per_session["files"].max() == 2  # some sessions do cross the files
    assert sorted(frame["share"].unique()) == [0, 1, 2]


@needs_scanner
def test_a_file_listed_twice_is_left_to_the_whole_load(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    share_every_group(monkeypatch, 2)
    twice = [str(folder / "rotated.1.jsonl")] * 2
    assert lint_in_groups(twice) is None


@needs_scanner
def test_the_command_lints_a_folder_in_groups_with_the_same_report(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    calls = _spied(monkeypatch, "file_groups", lambda _, args, __: len(args[0]))
    grouped = _reported_as_the_whole_load(folder)
    assert calls, "the folder was not linted in groups"
    assert grouped.exit_code == 1


@needs_scanner
def test_a_file_whose_lines_the_loader_rejects_joins_the_files_of_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the light pass reads session s1 from lines whose message is not valid UTF-8; the
    # loader rejects them, and their rows take the file's default session, its name,
    # which the other `logs.jsonl` gives its rows too: one session across both files
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    bad = b'{"dir":"c2s","session":"s1","msg":{"jsonrpc":"2.0","id":1,"method":"x\xff"}}\n'
    good = b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}\n'
    (tmp_path / "a" / "logs.jsonl").write_bytes(good + bad * 3)
    (tmp_path / "b" / "logs.jsonl").write_bytes(good * 2)
    (tmp_path / "b" / "other.jsonl").write_bytes(good.replace(b'"dir"', b'"session":"o","dir"'))
    files = sorted(str(p) for p in tmp_path.rglob("*.jsonl"))
    assert mcptrace.load(tmp_path).messages["session"].unique().sort().to_list() == ["logs", "o"]
    assert file_groups(files) == [[0, 1], [2]]
    done = lint_in_groups(tmp_path)
    assert done is not None
    assert_frame_equal(done.findings, lint(mcptrace.load(tmp_path)))


@needs_scanner
def test_lint_file_of_a_folder_lints_it_in_groups(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    calls = _spied(monkeypatch, "lint_in_groups", lambda *_: 1)
    found = mcptrace.lint_file(folder)
    assert calls == [1]
    assert_frame_equal(found, _expected(folder)[0])


def test_standard_input_among_the_files_is_left_to_the_whole_load(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    first = sorted(folder.glob("s00*.jsonl"))[0]
    runner = CliRunner()
    piped = runner.invoke(
        app, ["lint", "-", str(first), "--format", "json"], input=first.read_bytes()
    )
    found = orjson.loads(piped.output)
    # read once, by the load: both copies of the file are there
    assert {f["source"] for f in found} == {"-", str(first)}
