"""SARIF 2.1.0, for GitHub code scanning and other static-analysis dashboards.

Written to the OASIS "Static Analysis Results Interchange Format Version 2.1.0"
standard: one ``run`` whose ``tool.driver.rules`` lists only the rules that occur in
the results (as ruff's emitter does, so the file stays small), each result pointing
at its rule by ``ruleId`` and ``ruleIndex`` and at the capture line by
``physicalLocation.region.startLine``; the other messages its message names (the
findings table's ``related``) are its ``relatedLocations``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import polars as pl

from mcptrace import _json
from mcptrace.linter.rule import Rule
from mcptrace.reporters._context import ReportContext, display_path

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
#: severity -> SARIF ``level`` (SARIF has no "info"; "note" is its informational level)
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(source: str | None, root: str | None) -> str:
    """A URI reference for the capture file: relative with forward slashes when possible."""
    path = display_path(source, root)
    if path.startswith("/"):
        return "file://" + quote(path)
    if re.match(r"^[A-Za-z]:/", path):  # a Windows absolute path
        return "file:///" + quote(path, safe="/:")
    return quote(path)


def _section(docs: str, heading: str) -> str:
    match = re.search(rf"^{re.escape(heading)}\s*\n(.*?)(?=^## |\Z)", docs, re.S | re.M)
    return " ".join(match.group(1).split()) if match else ""


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    why = _section(rule.docs, "## Why is this bad?")
    full = f"{rule.summary} {why}".strip()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": rule.docs, "markdown": rule.docs},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"revisions": list(rule.revisions), "scope": rule.scope},
    }


def _physical(source: str | None, line: int | None, ctx: ReportContext) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(source, ctx.root)}}
    if line is not None:
        location["region"] = {"startLine": line}
    return location


def _result(row: dict[str, Any], index: int, ctx: ReportContext) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": row["code"],
        "ruleIndex": index,
        "level": LEVELS[row["severity"]],
        "message": {"text": row["message"] or ""},
        "locations": [{"physicalLocation": _physical(row["source"], row["line"], ctx)}],
    }
    # the other messages the message names (the request a response answers...), so a
    # viewer can open them next to the finding
    related = [
        {"id": i, "physicalLocation": _physical(other["source"], other["line"], ctx)}
        for i, other in enumerate(row.get("related") or [], 1)
    ]
    if related:
        result["relatedLocations"] = related
    result["properties"] = {"session": row["session"], "revision": row["revision"]}
    return result


def report(findings: pl.DataFrame, ctx: ReportContext) -> dict[str, Any]:
    """The SARIF log as a dict (``render`` serialises it)."""
    codes = sorted(findings["code"].unique().to_list()) if not findings.is_empty() else []
    index = {code: i for i, code in enumerate(codes)}
    driver = {
        "name": "mcptrace",
        "version": ctx.version,
        "informationUri": ctx.information_uri,
        "rules": [_rule_descriptor(ctx.rule(code)) for code in codes],
    }
    results = [_result(row, index[row["code"]], ctx) for row in findings.iter_rows(named=True)]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results}],
    }


def render(findings: pl.DataFrame, ctx: ReportContext) -> str:
    """The SARIF log, pretty-printed."""
    return _json.dumpb(report(findings, ctx), pretty=True).decode() + "\n"
