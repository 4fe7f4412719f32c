"""How the engine schedules rules on its threads: every rule runs once, families stay
together, and the families run while the calls are paired need no calls."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest
from factories import load_generator

import mcptrace
from mcptrace.linter import RULES
from mcptrace.linter.context import LintContext
from mcptrace.linter.engine import EARLY_FAMILIES, _run, _Schedule, lint
from mcptrace.linter.registry import select_rules
from mcptrace.schema import FINDINGS


def test_early_families_read_no_calls(tmp_path: Path) -> None:
    # they run on one thread while another pairs the calls: a rule of theirs that read
    # the calls on ordinary traffic would wait for the pairing (the findings would stay
    # the same, the time would not)
    capture = tmp_path / "capture.jsonl"
    load_generator().generate_capture(capture, messages=3_000, seed=7, sessions=20)
    trace = mcptrace.load(capture)
    ctx = LintContext(trace)
    ctx.prepare_frames()
    early = [rule for rule in RULES.values() if rule.family in EARLY_FAMILIES]
    assert {rule.family for rule in early} == set(EARLY_FAMILIES)
    for rule in early:
        _run(rule, ctx)
    assert "calls" not in vars(ctx)
    assert "calls" not in vars(trace)


def _drain(schedule: _Schedule, queues: list[deque[int]], turns: list[int]) -> list[list[int]]:
    """The rules each queue's thread gets when the threads ask in the order ``turns``
    (indexes into ``queues``), then in turn until every rule is taken."""
    taken: list[list[int]] = [[] for _ in queues]
    for turn in [*turns, *range(len(queues))] * 1000:
        i = schedule.next(queues[turn])
        if i is not None:
            taken[turn].append(i)
    return taken


@pytest.mark.parametrize("turns", [[], [0] * 3, [1] * 40, [0, 1] * 10])
def test_every_rule_is_taken_once(turns: list[int]) -> None:
    rules = select_rules(None, None)
    schedule = _Schedule(rules)
    queues = [schedule.queue(), schedule.queue()]
    taken = _drain(schedule, queues, turns)
    assert sorted(taken[0] + taken[1]) == list(range(len(rules)))


def test_families_stay_together_until_the_end() -> None:
    rules = select_rules(None, None)
    schedule = _Schedule(rules)
    queues = [schedule.queue(), schedule.queue()]
    # one thread takes everything: family by family, early families first
    (alone,) = _drain(schedule, queues[:1], [])
    families = [rules[i].family for i in alone]
    runs = [f for k, f in enumerate(families) if k == 0 or families[k - 1] != f]
    assert len(runs) == len(set(runs))
    assert runs[: len(EARLY_FAMILIES)] == list(EARLY_FAMILIES)
    assert schedule.next(queues[1]) is None


def test_an_idle_thread_takes_the_last_rules_of_the_busiest_family() -> None:
    rules = [r for r in select_rules(None, None) if r.family in ("RS", "MT")]
    schedule = _Schedule(rules)
    first, second = schedule.queue(), schedule.queue()
    a, b = schedule.next(first), schedule.next(second)
    assert a is not None and b is not None
    assert rules[a].family != rules[b].family
    # the second thread's family is left whole to it; once it is done, the other family's
    # last rule is taken from its back
    while second:
        schedule.next(second)
    stolen = schedule.next(second)
    assert stolen is not None and rules[stolen].family == rules[a].family
    assert stolen == max(i for i, r in enumerate(rules) if r.family == rules[a].family)


def test_findings_of_untimed_messages_of_unknown_revision(tmp_path: Path) -> None:
    # the engine gathers where each finding is from the messages' columns: with the
    # times and the revisions all null, each column keeps its own (a lazy query's common
    # subexpressions once took both from one column and failed)
    capture = tmp_path / "capture.jsonl"
    capture.write_text('{"jsonrpc":"1.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1}\n')
    found = lint(mcptrace.load(capture))
    assert "JR001" in found["code"].to_list()
    assert found["ts"].is_null().all() and found["revision"].is_null().all()
    assert found.schema == FINDINGS.schema
