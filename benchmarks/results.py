"""Where a benchmark's figures go: a JSON file (kept in benchmarks/out for comparing runs)
and a line on stdout for the person who ran it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson


def publish(dest: Path, report: dict[str, Any], summary: str) -> int:
    """Write ``report`` to ``dest`` as indented JSON, print ``summary``; the exit status."""
    dest.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    print(summary)
    return 0
