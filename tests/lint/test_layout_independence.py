"""The findings do not depend on how the messages table is laid out in memory.

The linter looks rows up by position when ordinals are row positions (every loaded
trace) and falls back to joins when they are not (a ``Trace.filter`` result, or a
table built by hand); it rechunks the table it reads. Both paths, and tables split
into many chunks, must give the same findings.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from factories import SAMPLES, load_generator, load_injector
from polars.testing import assert_frame_equal

import mcptrace
from mcptrace._format import fmt
from mcptrace.linter import engine, lint
from mcptrace.linter.rule import PLACE_CLOSE, PLACE_OPEN, findings, line_of
from mcptrace.trace import Trace

_SHIFT = 1_000
SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec"


@pytest.fixture(scope="module")
def trace() -> Trace:
    return mcptrace.load(SAMPLES)


def _relaid(trace: Trace, messages: pl.DataFrame) -> Trace:
    return Trace(
        messages=messages,
        sources=trace.sources,
        unordered_sessions=trace.unordered_sessions,
        call_records=trace.call_records,
    )


@pytest.mark.parametrize("revision", [None, "2025-06-18"])
def test_many_chunks_and_sparse_ordinals_give_the_same_findings(
    trace: Trace, revision: str | None
) -> None:
    expected = lint(trace, revision=revision)
    assert not expected.is_empty()

    messages = trace.messages
    # the same rows in many small chunks, as a loader may leave them
    chunked = pl.concat(
        [messages.slice(start, 7) for start in range(0, messages.height, 7)], rechunk=False
    )
    assert chunked.n_chunks() > 1
    found = lint(_relaid(trace, chunked), revision=revision)
    assert found.equals(expected)

    # ordinals that are not row positions: every lookup takes the join path
    sparse = messages.with_columns(pl.col("ordinal") + _SHIFT)
    found = lint(_relaid(trace, sparse), revision=revision)
    assert found.with_columns(pl.col("ordinal") - _SHIFT).equals(expected)


def test_rules_side_by_side_find_what_rules_one_by_one_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the engine runs rules on threads that share the context's memos: the findings
    # must not depend on which rule got to a shared frame first
    clean, injected = tmp_path / "clean.jsonl", tmp_path / "injected.jsonl"
    load_generator().generate_capture(clean, messages=4_000, seed=5, sessions=30)
    load_injector().inject_violations(clean, injected, seed=3)
    monkeypatch.setattr(engine, "RULE_THREADS", 1)
    # with the official schemas too: their validators are shared by the SC rules
    one_by_one = lint(mcptrace.load(injected), schema_dir=SPEC)
    assert one_by_one["code"].n_unique() > 40  # every kind of violation is there
    assert one_by_one["code"].str.starts_with("SC").any()
    monkeypatch.setattr(engine, "RULE_THREADS", 8)
    monkeypatch.setattr(engine, "workers", lambda: 8)
    for _ in range(3):
        assert_frame_equal(lint(mcptrace.load(injected), schema_dir=SPEC), one_by_one)


def test_linting_draws_no_warning(trace: Trace, monkeypatch: pytest.MonkeyPatch) -> None:
    """No rule draws a warning, deprecations of Polars included (warned from Rust, they do
    not fail a test by themselves: they are recorded here). One rule at a time, so that
    each warning is raised where it is recorded."""
    import warnings

    monkeypatch.setattr(engine, "RULE_THREADS", 1)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        lint(trace, schema_dir=SPEC if SPEC.is_dir() else None)
        lint(trace, revision="2026-07-28")
    assert [f"{w.filename}:{w.lineno}: {w.message}" for w in seen] == []


def test_rules_of_revisions_no_session_speaks_are_not_run(
    trace: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # judged as 2025-06-18 throughout, a rule of 2026-07-28 alone could only find what
    # the engine drops: it is skipped, and the findings are the same as when it runs
    import dataclasses

    from mcptrace.linter import registry
    from mcptrace.linter.rule import MODERN, Rule

    expected = lint(trace, revision="2025-06-18")
    ran: list[str] = []

    def spied(rule: Rule) -> Rule:
        def check(ctx: object) -> pl.DataFrame:
            ran.append(rule.code)
            return rule.check(ctx)  # type: ignore[arg-type]

        return dataclasses.replace(rule, check=check)

    every = [spied(r) for r in registry.select_rules(None, None)]
    modern_only = sorted(r.code for r in every if r.revisions == MODERN)
    assert modern_only
    monkeypatch.setattr(engine, "select_rules", lambda select, ignore: every)
    assert lint(trace, revision="2025-06-18").equals(expected)
    assert ran and not set(ran) & set(modern_only)
    ran.clear()
    lint(trace, revision="2026-07-28")
    assert set(modern_only) <= set(ran)


def test_a_finding_message_is_spelled_from_rows_in_any_chunks() -> None:
    """A rule's offending rows, filtered from columns in several chunks, can follow an
    empty chunk other than the first (how many chunks depends on the thread count), where
    pl.format panicked: PG005 crashed the lint under POLARS_MAX_THREADS=8 only. Rules
    spell their messages with mcptrace._format.fmt instead."""
    parts = [pl.DataFrame({"ordinal": range(i * 10, i * 10 + 10)}) for i in range(3)]
    frame = pl.concat(parts, rechunk=False).with_columns(token=fmt("t{}", "ordinal"))
    # (a filter by a mask keeps the empty chunk between the two rows)
    offending = frame.filter(pl.Series([i in (3, 25) for i in range(frame.height)]))
    assert [len(c) for c in offending["ordinal"].get_chunks()] == [1, 0, 1]
    found = findings(offending, fmt("token {} after {}", "token", line_of("ordinal")))
    assert found.rows() == [
        (3, f"token t3 after {PLACE_OPEN}3{PLACE_CLOSE}"),
        (25, f"token t25 after {PLACE_OPEN}25{PLACE_CLOSE}"),
    ]


def test_fmt_spells_what_pl_format_does() -> None:
    """fmt is pl.format's template language: {} takes the next value (a column name or an
    expression, cast to text), and a null value makes the text null."""
    frame = pl.DataFrame({"i": [1, None], "s": ["a", "b"], "f": [1.5, 2.0]})
    for template, args in (("<{}>", ["i"]), ("{}|{} x", ["s", pl.col("f") * 2]), ("plain", [])):
        assert frame.select(fmt(template, *args).alias("x")).equals(
            frame.select(pl.format(template, *args).alias("x"))
        )
    with pytest.raises(ValueError, match="placeholders"):
        fmt("{} and {}", "i")
