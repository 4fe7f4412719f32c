"""Shared fixtures (factories live in factories.py, importable from every test)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest
from factories import WriteLines
from hypothesis import settings

# CI must not fail on a random draw that a local run never saw: it replays a fixed
# sequence (local runs keep exploring; a failure they find becomes a fixed test case)
settings.register_profile("ci", derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture
def write_lines(tmp_path: Path) -> WriteLines:
    """Write records (dicts are JSON-encoded, bytes/str written as-is) one per line."""
    counter = iter(range(10**6))

    def write(lines: Iterable[Any], name: str | None = None, *, newline: bytes = b"\n") -> Path:
        path = tmp_path / (name or f"capture{next(counter)}.jsonl")
        chunks = []
        for line in lines:
            if isinstance(line, bytes):
                chunks.append(line)
            elif isinstance(line, str):
                chunks.append(line.encode())
            else:
                chunks.append(orjson.dumps(line))
        path.write_bytes(newline.join(chunks) + (newline if chunks else b""))
        return path

    return write
