"""JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure Pipelines).

One ``testsuite`` per capture file and one failing ``testcase`` per finding: the
failure's ``type`` is the rule code, its ``message`` the finding, its text the
offending capture line. Without findings a single passing test case is written,
because several CI parsers reject a report with no test cases at all.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import polars as pl

from mcptrace.reporters._context import ReportContext, display_path

# XML 1.0 cannot carry these code points even escaped; capture text is untrusted and
# may hold them (a method name with \u0001), so they are shown as \xNN instead
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def render(findings: pl.DataFrame, ctx: ReportContext) -> str:
    """The JUnit report as an XML document (UTF-8 declaration included)."""
    root = ET.Element(
        "testsuites",
        name="mcptrace",
        tests=str(max(findings.height, 1)),
        failures=str(findings.height),
    )
    suites: dict[str, list[dict[str, Any]]] = {}
    for row in findings.with_columns(_raw=ctx.raw_of(findings)).iter_rows(named=True):
        suites.setdefault(display_path(row["source"], ctx.root), []).append(row)
    if not suites:
        suite = ET.SubElement(root, "testsuite", name="mcptrace", tests="1", failures="0")
        ET.SubElement(suite, "testcase", name="no findings", classname="mcptrace")
    for path, found in suites.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=_xml_text(path),
            tests=str(len(found)),
            failures=str(len(found)),
            errors="0",
        )
        for row in found:
            where = f" at line {row['line']}" if row["line"] is not None else ""
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{row['code']} {row['name']}{where}",
                classname=_xml_text(path),
                file=_xml_text(path),
            )
            if row["line"] is not None:
                case.set("line", str(row["line"]))
            failure = ET.SubElement(
                case, "failure", type=row["code"], message=_xml_text(row["message"] or "")
            )
            raw = row["_raw"]
            failure.text = _xml_text(raw if raw is not None else f"{path}:{row['line']}")
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
