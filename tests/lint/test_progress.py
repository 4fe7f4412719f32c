"""The compact-text fast path of PG004 against the parse it stands for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from factories import load_generator, load_injector

from mcptrace.linter.rules.progress import _compact_progress

_HEAD = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":'


def test_compact_progress_reads_only_texts_it_copied_whole() -> None:
    # the copy strips trailing NULs: a text that loses one is no compact text, even
    # when what is left would be one, and is left to the parse
    texts = [
        _HEAD + '"p","progress":5,"total":10}}',
        _HEAD + '"p","progress":5,"total":10}}\x00',
        _HEAD + '"q","progress":5}}',  # another token than the row's
        _HEAD + '"p","progress":5,"extra":1}}',
    ]
    frame = pl.DataFrame({"token": ['"p"', '"p"', '"p"', '"p"'], "message": texts})
    assert _compact_progress(frame).to_list() == ["5", None, None, None]


@pytest.mark.slow
def test_progress_after_completion_lints_under_any_thread_count(tmp_path: Path) -> None:
    """Two injected captures linted together under 8 Polars threads: PG005's late progress
    rows came out of a filter with an empty chunk between them, and formatting their
    message panicked (under 2 threads the rows were in one chunk)."""
    generate, inject = load_generator(), load_injector()
    paths = []
    for seed, size in ((4, 20_000), (3, 5_000)):
        clean, injected = tmp_path / f"clean-{seed}.jsonl", tmp_path / f"injected-{seed}.jsonl"
        generate.generate_capture(clean, messages=size, seed=seed)
        inject.inject_violations(clean, injected, seed=seed)
        paths.append(str(injected))
    env = dict(os.environ, POLARS_MAX_THREADS="8")
    lint = [sys.executable, "-m", "mcptrace", "lint", "--format", "json", "--select", "PG005"]
    root = Path(__file__).resolve().parents[2]  # this tree's mcptrace, not an installed one
    done = subprocess.run(
        [*lint, *paths], cwd=root, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert {f["code"] for f in json.loads(done.stdout)} == {"PG005"}
