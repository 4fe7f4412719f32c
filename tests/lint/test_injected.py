"""The linter against seeded, labelled violations injected into a large generated capture.

``benchmarks/inject.py`` gives every kind of violation a session of its own in a
20 000-message capture from ``benchmarks/generate.py`` and says where each rule must
fire. Linting the result with every rule must find each label at its line, and must
find no error at all in the sessions left untouched: a clean generated session that
draws an error means the generator or the rule is wrong. Within a touched session,
every error must be one the injection labelled, so each kind trips exactly the rules
it says it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from factories import load_generator, load_injector

import mcptrace
from mcptrace.linter import lint

MESSAGES = 20_000
#: ~200 lines a session: enough sessions for one per kind and many left untouched
SESSIONS = 100
GENERATOR_SEED = 3


inj = load_injector()


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("injected") / "clean.jsonl"
    load_generator().generate_capture(
        path, messages=MESSAGES, seed=GENERATOR_SEED, sessions=SESSIONS
    )
    return path


def _show(frame: pl.DataFrame) -> str:
    return "\n".join(
        f"  {session} line {line}: {code} {message}"
        for session, line, code, message in frame.select(
            "session", "line", "code", "message"
        ).iter_rows()
    )


def _check(path: Path, labels: Sequence[Any], untouched: frozenset[str]) -> None:
    findings = lint(mcptrace.load(path))
    found = set(zip(findings["code"], findings["line"], strict=True))
    missing = [label for label in labels if (label.code, label.line) not in found]
    near = findings.filter(pl.col("line").is_in([label.line for label in missing]))
    assert not missing, f"labels not found: {missing}\nfindings on those lines:\n{_show(near)}"

    errors = findings.filter(pl.col("severity") == "error")
    clean_errors = errors.filter(pl.col("session").is_in(sorted(untouched)))
    assert clean_errors.is_empty(), f"errors in untouched sessions:\n{_show(clean_errors)}"

    labelled = {(label.code, label.line) for label in labels}
    touched = {label.session for label in labels}
    stray = errors.filter(
        pl.col("session").is_in(sorted(touched))
        & ~pl.struct("code", "line").is_in(
            [{"code": code, "line": line} for code, line in sorted(labelled)]
        )
    )
    assert stray.is_empty(), f"errors no injection labelled:\n{_show(stray)}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_injected_violation_is_found(tmp_path: Path, clean: Path, seed: int) -> None:
    out = tmp_path / "injected.jsonl"
    labels = inj.inject_violations(clean, out, seed=seed)

    # one session per kind, every code of every kind labelled
    assert sorted(labels.sessions) == sorted(inj.KINDS)
    assert len(set(labels.sessions.values())) == len(inj.KINDS)
    expected = {(kind.name, code) for kind in inj.KINDS.values() for code in kind.codes}
    assert {(label.kind, label.code) for label in labels} == expected
    assert len(labels.untouched) >= SESSIONS - len(inj.KINDS) - 5

    _check(out, labels, labels.untouched)


def test_injection_is_deterministic(tmp_path: Path, clean: Path) -> None:
    kinds = ["null-request-id", "batch-in-legacy", "progress-after-completion"]
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    labels_a = inj.inject_violations(clean, a, seed=5, kinds=kinds)
    labels_b = inj.inject_violations(clean, b, seed=5, kinds=kinds)
    inj.inject_violations(clean, c, seed=6, kinds=kinds)
    assert a.read_bytes() == b.read_bytes()
    assert list(labels_a) == list(labels_b)
    assert a.read_bytes() != c.read_bytes()
    # everything but the touched sessions' lines is the clean capture, byte for byte
    kept = [
        line
        for line in clean.read_bytes().splitlines()
        if not any(sid.encode() in line for sid in labels_a.sessions.values())
    ]
    kept_set = set(kept)
    assert [line for line in a.read_bytes().splitlines() if line in kept_set] == kept


def test_small_capture_gets_sessions_of_its_own(tmp_path: Path) -> None:
    """Two sessions cannot host every kind: the injector synthesises the missing ones."""
    small, out = tmp_path / "small.jsonl", tmp_path / "out.jsonl"
    load_generator().generate_capture(small, messages=400, seed=1, sessions=2)
    labels = inj.inject_violations(small, out, seed=4)
    assert not labels.untouched
    assert len(set(labels.sessions.values())) == len(inj.KINDS)
    _check(out, labels, frozenset())


def test_unknown_kind_is_refused(tmp_path: Path, clean: Path) -> None:
    with pytest.raises(ValueError, match="unknown kinds"):
        inj.inject_violations(clean, tmp_path / "x.jsonl", seed=0, kinds=["no-such-kind"])
