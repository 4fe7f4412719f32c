"""Bad input never crashes a command: real captures with values of the wrong JSON type.

Every bundled sample and the spec's example messages are mutated the way broken
producers break them (a string where an object belongs, a member dropped, a number
too big for 64 bits, a subtree moved elsewhere), seeded so a failure replays. The
loaders, the linter (with the official schemas) and every command must take them:
each command may report the input as bad (exit status 2) but never raise.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, SHARED_SPEC
from typer.testing import CliRunner

import mcptrace
from mcptrace import _json
from mcptrace.cli import app
from mcptrace.schema import FINDINGS
from mcptrace.writers import capture_records

runner = CliRunner()
EXAMPLES = SHARED_SPEC / "2026-07-28" / "examples"

#: what a broken producer puts where a value belongs
ODD_VALUES: list[Any] = [
    None,
    [],
    {},
    "",
    "x",
    0,
    -1,
    1.5,
    -0.0,
    True,
    False,
    1e300,
    -1e300,
    2**63 - 1,
    -(2**63),
    2**70,
    "9" * 40,
    "2026-07-28",
    "notifications/cancelled",
    "\u0000\u00e9\ud7ff",
    # lone UTF-16 surrogates: written as `\ud83d` escapes, which orjson refuses to read
    "cut \ud83d",
    "\udc00",
    {"a": {"b": [1, {"c": None}]}},
    [None, 1, "a"],
    {"_meta": {"bad key": 1}},
    {"progressToken": {}},
]

Path_ = tuple[str | int, ...]


def _paths(value: Any, at: Path_ = ()) -> Iterator[Path_]:
    yield at
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*at, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _paths(child, (*at, i))


def _get(value: Any, at: Path_) -> Any:
    for step in at:
        value = value[step]
    return value


def mutate(rng: random.Random, value: Any) -> Any:
    """``value`` with one to eight of its values replaced, dropped or swapped."""
    value = copy.deepcopy(value)
    for _ in range(rng.randint(1, 8)):
        at = rng.choice(list(_paths(value)))
        roll = rng.random()
        if roll < 0.6:
            new = copy.deepcopy(rng.choice(ODD_VALUES))
        elif roll < 0.8 and at:
            parent = _get(value, at[:-1])
            if isinstance(parent, dict):
                del parent[at[-1]]
            continue
        else:
            new = copy.deepcopy(_get(value, rng.choice(list(_paths(value)))))
        if not at:
            value = new
        else:
            _get(value, at[:-1])[at[-1]] = new
    return value


def _dump(value: Any) -> bytes:
    # mcptrace's writer: orjson alone writes no integer beyond 64 bits
    try:
        return _json.dumpb(value)
    except TypeError:
        # a lone surrogate, which orjson does not write: escaped as JavaScript writes it
        return json.dumps(value, separators=(",", ":")).encode()


def mutated_copy(rng: random.Random, path: Path) -> bytes:
    """The file with its JSON mutated: the whole document, or half of its JSON lines."""
    data = path.read_bytes()
    try:
        return _dump(mutate(rng, orjson.loads(data)))
    except orjson.JSONDecodeError:
        pass
    out = []
    for line in data.splitlines():
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(line)
            continue
        out.append(_dump(mutate(rng, value)) if rng.random() < 0.5 else line)
    return b"\n".join(out) + b"\n"


def _samples() -> list[Path]:
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "README.md")


@pytest.mark.parametrize("seed", [0, 1])
def test_every_command_takes_mutated_samples_of_every_format(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    folder = tmp_path / "in"
    samples = _samples()
    assert len(samples) > 20  # every format's samples, not an empty glob
    for i, sample in enumerate(samples):
        # each in a folder named like the sample's own: some loaders read the name
        into = folder / f"{i:02d}" / sample.parent.name
        into.mkdir(parents=True)
        (into / sample.name).write_bytes(mutated_copy(rng, sample))
    out = tmp_path / "out"
    out.mkdir()
    commands = [
        ["summary", "--json", str(folder)],
        ["show", str(folder), "--body"],
        ["lint", str(folder), "--show-source"],
        ["lint", str(folder), "--format", "sarif", "--schema-dir", str(SHARED_SPEC)],
        ["stats", "--errors", str(folder)],
        ["report", str(folder), "-o", str(out / "report.html")],
        ["plot", "-k", "timeline", str(folder), "-o", str(out / "timeline.svg")],
        ["convert", str(folder), "-o", str(out / "all.jsonl")],
        ["compare", str(folder), str(out / "all.jsonl")],
    ]
    for args in commands:
        result = runner.invoke(app, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            args,
            result.exception,
        )
        assert result.exit_code in (0, 1, 2), (args, result.output)
    # nothing is dropped: every file is listed, read or reported
    trace = mcptrace.load(folder)
    assert trace.sources.height == len(samples)


def _example_messages() -> list[Any]:
    found = []
    for folder in sorted(EXAMPLES.iterdir()):
        if folder.name.endswith(("Request", "Notification", "ResultResponse", "Error")):
            found += [orjson.loads(f.read_bytes()) for f in sorted(folder.glob("*.json"))]
    return found


def test_the_linter_takes_mutated_messages_of_every_kind(tmp_path: Path) -> None:
    rng = random.Random(7)
    seeds = _example_messages()
    records = [
        orjson.loads(line)
        for f in sorted((SAMPLES / "capture").glob("*.jsonl"))
        for line in f.read_bytes().splitlines()
    ]
    # HTTP traffic as capture records: headers, statuses, `raw` wire texts to break too
    http = mcptrace.load(SAMPLES / "har").messages
    records += [orjson.loads(line) for line in capture_records(http)]
    assert len(seeds) > 40 and len(records) > 100
    assert any("http" in r for r in records) and any("raw" in r for r in records)
    lines = []
    for i in range(400):
        if rng.random() < 0.5:
            record = mutate(rng, rng.choice(records))
        else:
            record = {
                "ts": f"2026-09-14T09:30:{i % 60:02d}.000000Z",
                "dir": rng.choice(["c2s", "s2c", "c2s"]),
                "session": f"s{i % 4}",
                "transport": rng.choice(["stdio", "http"]),
                "msg": mutate(rng, rng.choice(seeds)),
            }
        lines.append(_dump(record))
    path = tmp_path / "fuzzed.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    trace = mcptrace.load(path)
    assert trace.messages["line"].n_unique() == len(lines)
    for revision in (None, "2024-11-05", "2026-07-28"):
        found = mcptrace.lint(trace, revision=revision, schema_dir=SHARED_SPEC)
        FINDINGS.validate(found)
        # every finding points at a line of the capture
        assert found.filter(~pl.col("line").is_between(1, len(lines))).is_empty()
        assert not found.is_empty()
