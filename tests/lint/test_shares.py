"""Linting a capture file a share of its sessions at a time gives the findings of
linting it whole: the same rows, in the same order, with the file's ordinals.

The equality is checked on the injected capture (every violation kind, in sessions of
its own, among clean ones) and on a capture of awkward lines: invalid JSON, blank
lines, lines without a session, sessions spelt with escapes or as numbers, batches,
CRLF endings. A line whose session the light pass cannot read right must make the
share plan give up (the file is then linted whole), never change a finding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from factories import load_generator, load_injector, with_batches
from polars.testing import assert_frame_equal
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app
from mcptrace.linter import lint
from mcptrace.linter.shares import lint_file, lint_in_shares, shares_for
from mcptrace.loaders import accel, partition
from mcptrace.loaders.base import LoadContext
from mcptrace.loaders.partition import PlanMismatch, load_share, own_session, plan

inj = load_injector()
needs_scanner = pytest.mark.skipif(not accel.available(), reason="the C scanner is not built")


def _whole(path: Path) -> pl.DataFrame:
    return lint(mcptrace.load(path))


def _same(shared: pl.DataFrame, whole: pl.DataFrame) -> None:
    assert_frame_equal(shared, whole)


@pytest.fixture(scope="module")
def injected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("shares")
    clean, out = folder / "clean.jsonl", folder / "injected.jsonl"
    load_generator().generate_capture(clean, messages=6_000, seed=11, sessions=40)
    inj.inject_violations(clean, out, seed=2)
    return out


@needs_scanner
@pytest.mark.parametrize("shares", [2, 3, 7])
def test_shares_find_what_the_whole_file_does(injected: Path, shares: int) -> None:
    seen: list[tuple[int, int]] = []
    done = lint_in_shares(injected, shares=shares, progress=lambda i, n: seen.append((i, n)))
    assert done is not None and done.shares == shares
    assert seen == [(i, shares) for i in range(shares)]
    whole = _whole(injected)
    assert whole["code"].n_unique() > 40  # every kind of violation is there
    _same(done.findings, whole)
    # what reporters read: the verbatim line of every message a finding points at
    trace = mcptrace.load(injected)
    expected = (
        trace.messages.filter(pl.col("ordinal").is_in(whole["ordinal"].implode()))
        .select("ordinal", "raw")
        .sort("ordinal")
    )
    assert_frame_equal(done.messages.sort("ordinal"), expected)


@needs_scanner
def test_shares_hold_whole_sessions_of_about_equal_size(injected: Path) -> None:
    ctx = LoadContext(source=str(injected))
    share_plan = plan(str(injected), 3, ctx)
    assert share_plan is not None
    sizes = share_plan.share_sizes()
    assert sum(sizes) == share_plan.lines and min(sizes) > 0.6 * max(sizes)
    whole = mcptrace.load(injected).messages
    seen: set[str] = set()
    for share in range(3):
        rows = load_share(share_plan, share, ctx)
        sessions = set(rows["session"].unique().to_list())
        assert not sessions & seen, "a session split across shares"
        seen |= sessions
        # the rows are the whole file's rows of those sessions, ordinals aside
        expected = whole.filter(pl.col("session").is_in(sorted(sessions))).drop("ordinal")
        assert_frame_equal(rows.drop("ordinal"), expected)
        assert rows["ordinal"].to_list() == list(range(rows.height))
    assert seen == set(whole["session"].unique().to_list())


@needs_scanner
def test_groups_of_one_share_are_read_without_a_copy_to_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # many short sessions in small chunks: some groups of chunks hold lines of one share
    # only (read whole, the scanner keeping the text it was given), others lines of
    # several (read with a selection, the scanner copying the share's lines)
    path = tmp_path / "short.jsonl"
    load_generator().generate_capture(path, messages=6_000, seed=3, sessions=300)
    monkeypatch.setattr(partition, "CHUNK_BYTES", 16 << 10)
    ctx = LoadContext(source=str(path))
    share_plan = plan(str(path), 3, ctx)
    assert share_plan is not None and len(share_plan.spans) > 30
    read_whole = partition._read_whole
    whole_reads: list[int] = []

    def counted(path: str, start: int, end: int) -> memoryview | None:
        whole_reads.append(start)
        return read_whole(path, start, end)

    monkeypatch.setattr(partition, "_read_whole", counted)
    whole = mcptrace.load(path).messages
    for share in range(3):
        rows = load_share(share_plan, share, ctx)
        expected = whole.filter(pl.col("session").is_in(rows["session"].unique().implode()))
        assert_frame_equal(rows.drop("ordinal"), expected.drop("ordinal"))
    groups = len(range(0, len(share_plan.spans), 3))
    assert 0 < len(whole_reads) < groups
    done = lint_in_shares(path, shares=3)
    assert done is not None
    _same(done.findings, _whole(path))


@needs_scanner
def test_shares_of_many_short_sessions_each_hold_a_stretch_of_the_file(tmp_path: Path) -> None:
    # dealt in the order they start, so that loading a share reads only its stretch
    path = tmp_path / "short.jsonl"
    load_generator().generate_capture(path, messages=6_000, seed=3, sessions=300)
    share_plan = plan(str(path), 3, LoadContext(source=str(path)))
    assert share_plan is not None
    sizes = share_plan.share_sizes()
    assert min(sizes) > 0.9 * max(sizes)
    starts = []
    for share in range(3):
        lines = [i for i, mine in enumerate(share_plan.share) if mine == share]
        # between its first and last line, few lines belong to other shares
        assert (lines[-1] - lines[0] + 1) < 1.3 * len(lines)
        starts.append(lines[0])
    assert starts == sorted(starts)


@needs_scanner
@pytest.mark.parametrize("hashed", [False, True])
def test_a_share_reads_runs_of_the_spans_holding_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hashed: bool
) -> None:
    # every span with a line of the share is read once, in order, in runs that are
    # either all the share's lines (read whole) or mixed; no run much over a chunk
    path = tmp_path / "short.jsonl"
    load_generator().generate_capture(path, messages=6_000, seed=3, sessions=300)
    monkeypatch.setattr(partition, "CHUNK_BYTES", 16 << 10)
    monkeypatch.setattr(partition, "_scanner_chunk_bytes", lambda _: 64 << 10)
    if hashed:  # dealt by hash: most spans mixed
        monkeypatch.setattr(partition, "_BALANCE_MAX_SESSIONS", 10)
        monkeypatch.setattr(partition, "_CONTIGUOUS_SLACK", 0.0)
    share_plan = plan(str(path), 3, LoadContext(source=str(path)))
    assert share_plan is not None
    longest = max(span.end - span.start for span in share_plan.spans)
    for share in range(3):
        runs = partition._reads(share_plan, share)
        read = [i for spans, _ in runs for i in spans]
        held = []
        for i in range(len(share_plan.spans)):
            first = share_plan.first_lines[i] - 1
            mine = [s == share for s in share_plan.share[first : first + share_plan.line_counts[i]]]
            assert (i in read) == any(mine)
            held.append(all(mine))
        assert read == sorted(set(read))
        for spans, whole in runs:
            assert all(held[i] == whole for i in spans)
            bytes_read = share_plan.spans[spans[-1]].end - share_plan.spans[spans[0]].start
            assert bytes_read < (64 << 10) + longest
        assert any(len(spans) > 1 for spans, _ in runs)
        assert any(not whole for _, whole in runs)
        assert hashed or any(whole for _, whole in runs)


def test_sessions_are_dealt_in_the_order_they_start_in_equal_cuts() -> None:
    # 300 sessions of 10 lines, each overlapping the next
    # (lines of sessions 2k+1 and 2k+2 alternate)
    session = [2 * (i // 20) + 1 + i % 2 for i in range(3000)]
    dealt = partition._deal(pl.Series(session, dtype=pl.UInt64), 3)
    assert dealt.dtype == pl.UInt8
    assert dealt.value_counts(sort=True)["count"].to_list() == [1000, 1000, 1000]
    assert dealt.is_sorted()


def test_a_session_too_big_for_an_ordered_cut_makes_the_deal_balance_by_size() -> None:
    # one session holds 60% of the lines: cut in order, a share would get far more than
    # a third, so the big session gets a share of its own and the others are balanced
    session = [1] * 600 + [2 + i // 10 for i in range(400)]
    dealt = partition._deal(pl.Series(session, dtype=pl.UInt64), 3)
    sizes = [dealt.to_list().count(share) for share in range(3)]
    assert sizes[dealt[0]] == 600
    assert sorted(sizes) == [200, 200, 600]


AWKWARD = [
    # leading lines without a session take the first session (backward fill)
    b"",
    b"this is not JSON",
    b'{"ts":"2026-01-01T00:00:00Z","dir":"c2s","session":"a","msg":{"jsonrpc":"2.0",'
    b'"id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}}',
    b'{"ts":"2026-01-01T00:00:00.1Z","dir":"c2s","session":"b","msg":{"jsonrpc":"2.0",'
    b'"id":1,"method":"tools/list"}}',
    # an invalid line belongs to the session before it (b), whatever it says inside
    b'{"ts":"2026-01-01T00:00:00.2Z","dir":"s2c","session":"a","msg":{"jsonrpc":"2.0",',
    b'{"ts":"2026-01-01T00:00:00.3Z","dir":"s2c","session":"b","msg":{"jsonrpc":"2.0",'
    b'"id":1,"result":{"tools":[]}}}\r',
    # the same session spelt with an escape, and a session given as a number
    b'{"ts":"2026-01-01T00:00:00.4Z","dir":"s2c","session":"\\u0061","msg":{"jsonrpc":'
    b'"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},'
    b'"serverInfo":{"name":"s","version":"1"}}}}',
    b'{"ts":"2026-01-01T00:00:00.5Z","dir":"c2s","session":7,"msg":{"jsonrpc":"2.0",'
    b'"id":null,"method":"ping"}}',
    # a batch (two rows on one line), a record without msg, text on stderr
    b'{"ts":"2026-01-01T00:00:00.6Z","dir":"c2s","session":"a","msg":[{"jsonrpc":"2.0",'
    b'"id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]}',
    b'{"ts":"2026-01-01T00:00:00.7Z","dir":"c2s","session":"b"}',
    b'{"ts":"2026-01-01T00:00:00.8Z","dir":"stderr","session":"7","msg":"warming up"}',
    # a session member that is null, and one named twice (the last counts)
    b'{"ts":"2026-01-01T00:00:00.9Z","dir":"c2s","session":null,"msg":{"jsonrpc":"2.0",'
    b'"method":"notifications/initialized"}}',
    b'{"ts":"2026-01-01T00:00:01Z","dir":"c2s","session":"b","session":"a","msg":'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}}',
    b'{ "ts" : "2026-01-01T00:00:01.1Z" , "dir":"c2s" , "session" : "b" , "msg" : '
    b'{ "jsonrpc" : "2.0" , "id" : 9 , "method" : "tools/call" , "params" : '
    b'{ "name" : "x{" } } }',
]


@needs_scanner
@pytest.mark.parametrize("shares", [2, 3, 5])
def test_awkward_lines_land_where_the_loader_puts_them(tmp_path: Path, shares: int) -> None:
    path = tmp_path / "awkward.jsonl"
    path.write_bytes(b"\n".join(AWKWARD * 3) + b"\n")
    done = lint_in_shares(path, shares=shares)
    assert done is not None
    whole = _whole(path)
    assert not whole.is_empty()
    _same(done.findings, whole)


@needs_scanner
@pytest.mark.parametrize("shares", [2, 3])
def test_findings_on_batch_elements_keep_their_place_in_shares(
    injected: Path, tmp_path: Path, shares: int
) -> None:
    path = tmp_path / "batches.jsonl"
    path.write_bytes(b"".join(with_batches(injected.read_bytes().splitlines(keepends=True))))
    trace = mcptrace.load(path)
    whole = lint(trace)
    later = trace.messages.filter(pl.col("batch_index") >= 1)["ordinal"]
    assert whole["ordinal"].is_in(later.implode()).sum() > 20  # findings after a line's first row
    done = lint_in_shares(path, shares=shares)
    assert done is not None
    _same(done.findings, whole)
    expected = (
        trace.messages.filter(pl.col("ordinal").is_in(whole["ordinal"].implode()))
        .select("ordinal", "raw")
        .sort("ordinal")
    )
    assert_frame_equal(done.messages.sort("ordinal"), expected)
    assert done.rows == trace.messages.height


@needs_scanner
@pytest.mark.parametrize("block", [7, 64, 300])
@pytest.mark.parametrize("last_newline", [True, False])
def test_the_light_pass_reads_blocks_shorter_than_lines_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int, last_newline: bool
) -> None:
    """Blocks that cut lines (a line longer than a block, an unsure line in a later
    block, a last line without a newline) give the states and hashes one read of the
    whole span gives, and the same findings."""
    path = tmp_path / "awkward.jsonl"
    path.write_bytes(b"\n".join(AWKWARD * 3) + (b"\n" if last_newline else b""))
    span = partition.Span(start=0, end=path.stat().st_size, line=0)
    whole_states, whole_hashes = partition._line_sessions(str(path), span)
    assert partition._UNSURE not in whole_states  # every unsure line was decided
    assert len(whole_states) == len(AWKWARD) * 3
    monkeypatch.setattr(partition, "_PLAN_BLOCK", block)
    states, hashes = partition._line_sessions(str(path), span)
    assert states == whole_states
    assert hashes == whole_hashes
    # a span that starts and ends inside the file
    middle = AWKWARD * 3
    start = sum(len(line) + 1 for line in middle[:5])
    end = sum(len(line) + 1 for line in middle[:20])
    part_states, _ = partition._line_sessions(str(path), partition.Span(start, end, 0))
    assert part_states == whole_states[5:20]
    done = lint_in_shares(path, shares=3)
    assert done is not None
    _same(done.findings, _whole(path))


def test_own_session_reads_lines_as_the_loader_does() -> None:
    assert own_session(b'{"session":"s","msg":{}}') == "s"
    assert own_session(b'{"session":"\\u0073","msg":{}}') == "s"
    assert own_session(b'{"session":[1],"msg":{}}') == "[1]"
    assert own_session(b'{"session":"s"}') is None  # no msg: not a capture record
    assert own_session(b'{"session":null,"msg":{}}') is None
    assert own_session(b"[1]") is None
    assert own_session(b"{") is None


def _repeated(path: Path, lines: list[bytes]) -> tuple[Path, LoadContext]:
    """A capture of ``lines`` four times over, and its load context."""
    path.write_bytes(b"\n".join(lines * 4) + b"\n")
    return path, LoadContext(source=str(path))


def _fails_to_load(share_plan: partition.SharePlan, ctx: LoadContext) -> None:
    """Loading the plan's shares finds a row whose session is not the planned one."""
    with pytest.raises(PlanMismatch):
        for share in range(share_plan.shares):
            load_share(share_plan, share, ctx)


@needs_scanner
def test_a_line_the_light_pass_misreads_makes_the_plan_give_up(tmp_path: Path) -> None:
    """Invalid UTF-8 inside the message: the light pass reads session "b", the loader
    rejects the line and gives it the session before it ("a")."""
    lines = [
        b'{"dir":"c2s","session":"a","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
        b'{"dir":"c2s","session":"b","msg":{"jsonrpc":"2.0","id":1,"method":"p\xffng"}}',
        b'{"dir":"c2s","session":"b","msg":{"jsonrpc":"2.0","id":2,"method":"ping"}}',
    ]
    path, ctx = _repeated(tmp_path / "bad-utf8.jsonl", lines)
    share_plan = plan(str(path), 2, ctx)
    assert share_plan is not None
    _fails_to_load(share_plan, ctx)
    assert lint_in_shares(path, shares=2) is None
    _same(lint_file(path, shares=2), _whole(path))


@needs_scanner
def test_a_line_the_quick_pass_misreads_is_planned_again_exactly(tmp_path: Path) -> None:
    """The quick light pass reads a whole-looking line's session from the members before
    `msg`; the loader keeps the last member of a name ("b"), and a line broken inside
    `msg` gets the session before it. Loading a share by the quick plan fails; the exact
    plan reads both lines as the loader does, and the file is still linted in shares."""
    lines = [
        b'{"dir":"c2s","session":"a","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
        b'{"dir":"c2s","session":"a","msg":{"jsonrpc":"2.0","id":2,"method":"ping"},"session":"b"}',
        b'{"dir":"c2s","session":"b","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
        b'{"dir":"c2s","session":"c","msg":{"jsonrpc":"2.0","params":{}}',
    ]
    path, ctx = _repeated(tmp_path / "twice.jsonl", lines)
    quick = plan(str(path), 2, ctx, quick=True)
    exact = plan(str(path), 2, ctx)
    assert quick is not None and exact is not None and quick.quick and not exact.quick
    _fails_to_load(quick, ctx)
    rows = pl.concat([load_share(exact, share, ctx) for share in range(2)])
    assert rows.height == len(lines) * 4
    done = lint_in_shares(path, shares=2)
    assert done is not None and done.shares == 2
    _same(done.findings, _whole(path))


def test_files_that_are_not_plain_captures_are_linted_whole(tmp_path: Path) -> None:
    stdio = Path("sample_traces/stdio").glob("*.jsonl")
    for path in stdio:
        assert lint_in_shares(path, shares=3) is None
        _same(lint_file(path, shares=3), _whole(path))
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(
        b"\xef\xbb\xbf" + Path("sample_traces/capture/healthy-2026-07-28.jsonl").read_bytes()
    )
    assert lint_in_shares(bom, shares=3) is None
    assert lint_in_shares(tmp_path / "missing.jsonl", shares=3) is None
    # one share: nothing to gain
    assert lint_in_shares("sample_traces/capture/healthy-2026-07-28.jsonl") is None
    # the 10^6-message benchmark capture; one of as many bytes in small messages; one of
    # 2*10^6 short messages (115 bytes a line), whose rows weigh more than its bytes
    assert shares_for(10, 1) == 1
    assert shares_for(540_641_948, 1_000_000) == 2
    assert shares_for(540_641_948, 5_000_000) == 8
    assert shares_for(228_400_110, 1_980_000) == 4


def test_without_the_scanner_files_are_linted_whole(
    monkeypatch: pytest.MonkeyPatch, injected: Path
) -> None:
    monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1")
    assert lint_in_shares(injected, shares=3) is None


@needs_scanner
def test_shares_leave_the_collectors_frozen_objects_as_they_were(injected: Path) -> None:
    """Objects older than the first share are set aside (frozen) while the collector runs
    between shares, and given back after; a caller's own frozen objects stay frozen."""
    import gc

    assert gc.get_freeze_count() == 0
    assert lint_in_shares(injected, shares=3) is not None
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert lint_in_shares(injected, shares=3) is not None
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def _keeps_no_text(tmp_path: Path) -> bool:
    """Nothing is kept for a next share, and a text block freed now is not kept either."""
    if accel.drop_kept():
        return False
    path = tmp_path / "block.bin"
    path.write_bytes(b"x" * (1 << 20))
    with path.open("rb") as f:
        chunk = accel.read(f.fileno(), 0, 1 << 20)
    del chunk
    return accel.drop_kept() == 0


@needs_scanner
def test_shares_give_back_the_text_they_keep_between_shares(
    injected: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each share but the last keeps its text for the next share's load; when the shares
    are done, or one fails to load, none is kept and keeping is off again."""
    kept: list[int] = []
    real_load = partition.load_share

    def load_and_count(share_plan: partition.SharePlan, share: int, ctx: LoadContext) -> Any:
        kept.append(accel.drop_kept())  # what the share before left (taken back here)
        return real_load(share_plan, share, ctx)

    monkeypatch.setattr(partition, "load_share", load_and_count)
    assert lint_in_shares(injected, shares=3) is not None
    assert kept[0] == 0 and all(k > 0 for k in kept[1:]), kept
    assert _keeps_no_text(tmp_path)

    def fail_second(share_plan: partition.SharePlan, share: int, ctx: LoadContext) -> Any:
        if share == 1:
            raise PlanMismatch("as if a line were misread")
        return real_load(share_plan, share, ctx)

    monkeypatch.setattr(partition, "load_share", fail_second)
    assert lint_in_shares(injected, shares=3) is None  # loaded whole instead
    assert _keeps_no_text(tmp_path)


@needs_scanner
@pytest.mark.skipif(not hasattr(accel._scan, "map"), reason="files are mapped on Linux only")
def test_a_file_cut_while_a_share_is_linted_gives_the_findings_of_what_is_left(
    injected: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A share's text is the file's mapped pages while it is linted: a file cut meanwhile
    (a log truncated by its rotation) neither kills the process (SIGBUS) nor leaves
    findings of text that is gone: the shares are linted anew, from what is left."""
    from mcptrace.linter import shares as shares_module

    # each session's lines together, read in small spans: most spans then hold the
    # lines of one share only, which is what is mapped (spans shared are read)
    lines = injected.read_bytes().splitlines(keepends=True)
    text = b"".join(sorted(lines, key=lambda line: own_session(line) or ""))
    monkeypatch.setattr(partition, "CHUNK_BYTES", 1 << 16)
    path = tmp_path / "rotated.jsonl"
    path.write_bytes(text)
    kept = text[: text.index(b"\n", len(text) // 3) + 1]
    real_lint = shares_module.lint
    calls: list[int] = []

    def cut_then_lint(trace: mcptrace.Trace, **options: Any) -> pl.DataFrame:
        # as the last share is linted: no later share's load is there to see the cut
        calls.append(accel.cut_faults())
        if len(calls) == 2:
            with path.open("r+b") as f:
                f.truncate(len(kept))
        return real_lint(trace, **options)

    monkeypatch.setattr(shares_module, "lint", cut_then_lint)
    done = lint_in_shares(path, shares=2)
    assert accel.cut_faults() > calls[1]  # the lint did read pages that were cut
    assert path.read_bytes() == kept
    monkeypatch.setattr(shares_module, "lint", real_lint)
    expected = _whole(path)
    assert expected.height > 0
    assert done is not None  # planned anew, exactly, and linted in shares
    _same(done.findings, expected)


@needs_scanner
def test_linting_in_shares_needs_no_numpy(injected: Path) -> None:
    """NumPy costs ~0.04 s to import, and its BLAS threads then spin for a while on the
    cores the lint uses: the lint in shares does without it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from mcptrace.linter.shares import lint_in_shares\n"
        "done = lint_in_shares(sys.argv[1], shares=3)\n"
        "assert done is not None and done.findings.height > 0\n"
        "print('numpy' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code, str(injected)], capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "False"


@needs_scanner
def test_cli_reports_the_same_with_and_without_shares(injected: Path) -> None:
    runner = CliRunner()
    outputs = []
    for option in (["--partitions", "1"], ["--partitions", "4"]):
        result = runner.invoke(app, ["lint", str(injected), "--format", "sarif", *option])
        assert result.exit_code == 1, result.output
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert '"startLine"' in outputs[0]
    bad = runner.invoke(app, ["lint", str(injected), "--partitions", "0"])
    assert bad.exit_code == 2


@needs_scanner
def test_a_file_changed_after_planning_is_not_read_by_the_plan(tmp_path: Path) -> None:
    path = tmp_path / "growing.jsonl"
    path.write_bytes(b"\n".join(AWKWARD) + b"\n")
    ctx = LoadContext(source=str(path))
    share_plan = plan(str(path), 2, ctx)
    assert share_plan is not None
    with path.open("ab") as f:  # a capture still being written
        f.write(AWKWARD[2] + b"\n")
    with pytest.raises(PlanMismatch, match="changed"):
        load_share(share_plan, 0, ctx)
    path.write_bytes(b"")  # and cut short: mapping the planned spans would fail
    with pytest.raises(PlanMismatch):
        load_share(share_plan, 0, ctx)


@needs_scanner
def test_a_file_cut_while_a_share_is_read_is_an_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # cut to nothing while the scanner works on a share, as a log truncated by its
    # rotation: with the file mapped, the scan would touch pages that no longer exist
    # and the process would die (SIGBUS)
    path = tmp_path / "rotated.jsonl"
    path.write_bytes(b"\n".join(AWKWARD * 40) + b"\n")
    ctx = LoadContext(source=str(path))
    share_plan = plan(str(path), 2, ctx)
    assert share_plan is not None
    real_parse = partition.capture.parse_chunk

    def cut_then_parse(data: bytes | memoryview, *args: Any, **kwargs: Any) -> pl.DataFrame:
        path.write_bytes(b"")
        return real_parse(data, *args, **kwargs)

    monkeypatch.setattr(partition.capture, "parse_chunk", cut_then_parse)
    rows = load_share(share_plan, 0, ctx)  # the bytes read before the cut
    assert rows.height > 0
    monkeypatch.setattr(partition.capture, "parse_chunk", real_parse)
    with pytest.raises(PlanMismatch):  # and after it, nothing as planned
        load_share(share_plan, 1, ctx)


@needs_scanner
def test_cli_baseline_and_window_work_the_same_in_shares(injected: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    baselines = []
    for shares in ("1", "3"):
        dest = tmp_path / f"baseline-{shares}.json"
        result = runner.invoke(
            app, ["lint", str(injected), "--partitions", shares, "--write-baseline", str(dest)]
        )
        assert result.exit_code == 0, result.output
        baselines.append(dest.read_bytes())
        accepted = runner.invoke(
            app, ["lint", str(injected), "--partitions", shares, "--baseline", str(dest)]
        )
        assert accepted.exit_code == 0, accepted.output
    assert baselines[0] == baselines[1]
    ts = _whole(injected)["ts"].drop_nulls().sort()
    since, until = ts[len(ts) // 3].isoformat(), ts[2 * len(ts) // 3].isoformat()
    window = ["--format", "json", "--since", since, "--until", until]
    windows = [
        runner.invoke(app, ["lint", str(injected), "--partitions", shares, *window]).stdout
        for shares in ("1", "3")
    ]
    assert windows[0] == windows[1] and windows[0].count('"code"') > 3


@needs_scanner
def test_a_gzip_capture_is_linted_in_shares_from_a_temporary_copy(
    injected: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compressed capture is decompressed into a temporary file and linted in shares:
    the findings are those of loading it whole, and name the .gz file; the copy is gone
    afterwards. Its members may be several (appended logs), split anywhere."""
    import gzip
    import tempfile

    data = injected.read_bytes()
    packed = tmp_path / "injected.jsonl.gz"
    half = data.rfind(b"\n", 0, len(data) // 2) + 1
    packed.write_bytes(gzip.compress(data[:half]) + gzip.compress(data[half:]))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    done = lint_in_shares(packed, shares=3)
    assert done is not None and done.shares == 3
    whole = _whole(packed)
    assert set(whole["source"].unique()) == {str(packed)}
    _same(done.findings, whole)
    assert list((tmp_path / "tmp").iterdir()) == []  # the decompressed copy is removed
    # a cut stream is loaded whole, which reports what was lost
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[:-100])
    assert lint_in_shares(cut, shares=3) is None
    _same(lint_file(cut, shares=3), _whole(cut))
    # small compressed files are not worth a temporary copy
    assert lint_in_shares(packed) is None
    # nor are other formats: their start tells, and nothing is decompressed to disk
    from mcptrace.linter import shares as shares_module

    def no_copy(*_: Any) -> tuple[int, str | None]:
        raise AssertionError("decompressed a file that is not a capture")

    monkeypatch.setattr(shares_module, "gunzip_into", no_copy)
    stdio = tmp_path / "server.jsonl.gz"
    stdio.write_bytes(gzip.compress(Path("sample_traces/stdio/docs-server.ndjson").read_bytes()))
    assert lint_in_shares(stdio, shares=3) is None
    assert lint_in_shares(packed, shares=3, format="stdio") is None
    assert list((tmp_path / "tmp").iterdir()) == []

    # a disk too full for the copy: the file is loaded whole instead, and what was
    # written so far is removed
    def disk_full(read: Any, write: Any) -> tuple[int, str | None]:
        write(b"partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shares_module, "gunzip_into", disk_full)
    assert lint_in_shares(packed, shares=3) is None
    assert list((tmp_path / "tmp").iterdir()) == []
    _same(lint_file(packed, shares=3), whole)
