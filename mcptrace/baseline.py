"""Baselines: accept the findings a capture already has, report only new ones.

A baseline file lists the findings present when it was written. Linting with it
reports only findings that are not in it, so a team can adopt a rule set on old
captures and still fail CI on regressions.

Each finding is identified by a fingerprint that survives unrelated edits to the
capture: rule code, session, message text and the *file name* of the source
(without its folder, so a baseline written in one checkout or temp directory
applies in another). The line is deliberately left out: inserting or removing
unrelated lines moves every later finding. Identical fingerprints (the same
violation repeated in a session) are counted: a baseline holding two accepts the
first two occurrences, in capture order, and reports a third.

The file is JSON, written through :mod:`mcptrace._json` with sorted entries, so
that it diffs well under version control::

    {"version": 1, "findings": [
      {"code": "JR004", "source": "a.jsonl", "session": "s1",
       "message": "request tools/list has a null id", "count": 2}]}
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path, PurePosixPath, PureWindowsPath

import polars as pl

from mcptrace import _json
from mcptrace.errors import UsageError
from mcptrace.loaders.rows import json_type

#: format of the baseline file; bumped when the fingerprint changes
BASELINE_VERSION = 1

Fingerprint = tuple[str, str, str, str]  # (source file name, session, code, message)


def _file_name(source: str | None) -> str:
    if source is None:
        return ""
    # a baseline written on Windows must match on Linux: take the last part either way
    return PureWindowsPath(source).name if "\\" in source else PurePosixPath(source).name


def fingerprints(findings: pl.DataFrame) -> list[Fingerprint]:
    """One fingerprint per finding, in the frame's order (see the module docstring)."""
    return [
        (_file_name(source), session or "", code, message or "")
        for source, session, code, message in findings.select(
            "source", "session", "code", "message"
        ).iter_rows()
    ]


def write_baseline(findings: pl.DataFrame, path: str | Path) -> int:
    """Write every finding of ``findings`` to a baseline file; returns how many."""
    counts = Counter(fingerprints(findings))
    entries = [
        {"code": code, "source": source, "session": session, "message": message, "count": n}
        for (source, session, code, message), n in sorted(counts.items())
    ]
    data = {"version": BASELINE_VERSION, "findings": entries}
    Path(path).write_bytes(_json.dumpb(data, pretty=True) + b"\n")
    return findings.height


def _entry_problem(entry: object) -> str | None:
    """What is wrong with one entry of a baseline's findings, if anything."""
    if not isinstance(entry, dict):
        return f"is a JSON {json_type(entry)}, not an object"
    for key in ("source", "session", "code", "message"):
        if not isinstance(entry.get(key), str):
            return f"needs `{key}` as a string"
    count = entry.get("count", 1)
    if type(count) is not int or count < 1:
        return "has a `count` that is not a positive integer"
    return None


def read_baseline(path: str | Path) -> Counter[Fingerprint]:
    """Accepted occurrences per fingerprint; raises UsageError for a missing or bad file."""
    try:
        data = _json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise UsageError(f"cannot read baseline {path}: {exc.strerror or exc}") from exc
    except _json.JSONDecodeError as exc:
        raise UsageError(f"baseline {path} is not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION:
        raise UsageError(
            f"baseline {path} is not a version {BASELINE_VERSION} mcptrace baseline; "
            "write a new one with --write-baseline"
        )
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise UsageError(f"baseline {path}: `findings` must be a list of accepted findings")
    accepted: Counter[Fingerprint] = Counter()
    for number, entry in enumerate(entries, start=1):
        problem = _entry_problem(entry)
        if problem is not None:
            raise UsageError(f"baseline {path}: finding {number} {problem}")
        key = (entry["source"], entry["session"], entry["code"], entry["message"])
        accepted[key] += entry.get("count", 1)
    return accepted


def apply_baseline(findings: pl.DataFrame, path: str | Path) -> tuple[pl.DataFrame, int, int]:
    """Drop the findings the baseline accepts.

    Returns ``(new_findings, accepted_count, stale_count)``: the findings not in the
    baseline (in their original order), how many were accepted, and how many baseline
    entries matched nothing (violations since fixed; rewrite the baseline to drop them).
    """
    remaining = read_baseline(path)
    keep: list[bool] = []
    for fp in fingerprints(findings):
        if remaining[fp] > 0:
            remaining[fp] -= 1
            keep.append(False)
        else:
            keep.append(True)
    new = findings.filter(pl.Series(keep, dtype=pl.Boolean)) if keep else findings
    accepted = keep.count(False)
    stale = sum(n for n in remaining.values() if n > 0)
    return new, accepted, stale
