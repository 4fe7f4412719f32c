"""``mcptrace report`` and :mod:`mcptrace.report`: content, focus, escaping, offline-ness,
and the page as a real browser renders it.

The incident sample's figures are checked against the sample's README (the slowest call
is fetch_page, JR004 is at line 55, the failures start at 22:45). A capture full of
markup checks that capture text reaches the page only as text. The browser tests run
headless Chromium on the written file; they are skipped only when no ``chromium`` is
installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import orjson
import polars as pl
import pytest
from factories import SAMPLES, WriteLines, err, note, rec, req, res, ts
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app
from mcptrace.cli._common import parse_time
from mcptrace.errors import UsageError
from mcptrace.linter import lint
from mcptrace.report import SECTIONS, build_report, write_report
from mcptrace.report._assets import CSP, OUTCOME_CSS_COLORS
from mcptrace.trace import Trace

INCIDENT = SAMPLES / "capture" / "incident-2025-11-25.jsonl"
#: 22:45 to 22:47 UTC of the incident night: the failures (sample README)
SINCE = datetime(2026, 9, 15, 22, 45, tzinfo=UTC)
UNTIL = datetime(2026, 9, 15, 22, 47, tzinfo=UTC)
runner = CliRunner()


# ---------------------------------------------------------------------------
# reading the page
# ---------------------------------------------------------------------------

_VOID = {"meta", "img", "br", "hr", "wbr", "col", "link", "input"}


class _Page(HTMLParser):
    """Every start tag with its attributes, the ids, and a check that tags balance."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.headings: list[str] = []
        self._in_h2 = False
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in _VOID:
            self.stack.append(tag)
        if tag == "h2":
            self._in_h2 = True
            self.headings.append("")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data: str) -> None:
        if self._in_h2:
            self.headings[-1] += data

    @property
    def ids(self) -> list[str]:
        return [a["id"] for _, a in self.tags if a.get("id")]

    def attrs(self, name: str) -> list[str]:
        return [v for _, a in self.tags for k, v in a.items() if k == name and v is not None]


def _section(page: str, key: str) -> str:
    match = re.search(rf'<section id="{key}" class="part">(.*?)</section>', page, re.S)
    assert match, f"no section #{key}"
    return match.group(1)


def _finding(page: str, code: str) -> str:
    for match in re.finditer(r'<article id="finding-\d+"[^>]*>(.*?)</article>', page, re.S):
        if f"<code>{code}</code>" in match.group(1):
            return match.group(0)
    raise AssertionError(f"no finding {code}")


def _card(page: str, label: str) -> str:
    match = re.search(
        rf'<div class="label">{re.escape(label)}</div><div class="value">([^<]*)</div>', page
    )
    assert match, f"no card {label!r}"
    return match.group(1)


def _images(html_text: str) -> list[bytes]:
    prefix = "data:image/png;base64,"
    return [
        base64.b64decode(src[len(prefix) :])
        for src in re.findall(r'<img src="([^"]*)"', html_text)
        if src.startswith(prefix)
    ]


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def incident() -> Trace:
    return mcptrace.load(INCIDENT)


@pytest.fixture(scope="module")
def page(incident: Trace) -> str:
    return build_report(incident)


@pytest.fixture(scope="module")
def window_page(incident: Trace) -> str:
    return build_report(incident, since=SINCE, until=UNTIL)


# ---------------------------------------------------------------------------
# content of the incident report
# ---------------------------------------------------------------------------


def test_every_section_in_order_with_its_heading(page: str) -> None:
    parsed = _Page(page)
    assert not parsed.problems
    assert not parsed.stack
    assert [i for i in parsed.ids if i in SECTIONS] == list(SECTIONS)
    assert parsed.headings == list(SECTIONS.values())
    assert page.startswith("<!DOCTYPE html>")


def test_every_link_in_the_page_points_into_it(page: str) -> None:
    parsed = _Page(page)
    ids = set(parsed.ids)
    assert len(ids) == len(parsed.ids), "duplicate ids"
    links = parsed.attrs("href")
    assert links
    assert all(h.startswith("#") and h[1:] in ids for h in links), links


def test_overview_names_sources_sessions_and_how_revisions_are_known(page: str) -> None:
    overview = _section(page, "overview")
    assert "sample_traces/capture/incident-2025-11-25.jsonl" in overview
    for session in ("search-desk-1", "billing-http-1", "search-ci-7731", "search-ci-7732"):
        assert session in overview
    assert "<code>2026-07-28</code>" in overview and "_meta protocolVersion" in overview
    assert overview.count("initialize handshake") == 3
    assert _card(page, "Sessions") == "4"
    assert _card(page, "Calls") == "100"
    assert _card(page, "Failed calls") == "14.0 %"
    assert _card(page, "Time span (UTC)") == "7 min 46 s"
    # what stands out: the burst, the slowest call and the worst tool
    assert "22:45:00 to 22:47:00 UTC: 13 of 21 calls failed" in overview
    assert "<code>tools/call fetch_page</code> took 34.4 s" in overview


def test_findings_summary_links_to_details_with_raw_lines(page: str) -> None:
    findings = _section(page, "findings")
    codes = {"JR004", "PR001", "LC014", "CN001", "CN003"}
    for code in codes:
        assert f"<code>{code}</code>" in findings
    assert len(re.findall(r'<article id="finding-\d+"', findings)) == len(codes)
    jr004 = _finding(page, "JR004")
    number = re.search(r'id="finding-(\d+)"', jr004)
    assert number and f'href="#finding-{number.group(1)}"' in findings
    assert "null-request-id" in jr004
    assert "Flags requests whose <code>id</code> is <code>null</code>." in jr004
    assert "incident-2025-11-25.jsonl:55" in jr004
    assert "badge sev-error" in jr004
    # the raw capture line itself, escaped (quotes become &quot;)
    assert "&quot;id&quot;:null,&quot;method&quot;:&quot;tools/call&quot;" in jr004


def test_a_finding_shows_the_lines_its_message_names(page: str) -> None:
    # CN003 at line 205: "response to request id 34 (line 190) sent after its
    # cancellation at line 200"
    cn003 = _finding(page, "CN003")
    labels = re.findall(r'<div class="raw-label">([^<]*)', cn003)
    assert labels == [
        "incident-2025-11-25.jsonl:190",
        "incident-2025-11-25.jsonl:200",
        "incident-2025-11-25.jsonl:205",
    ]
    assert cn003.count('class="raw flagged"') == 1
    assert "badge sev-warning" in cn003


def test_a_finding_shows_the_lines_it_names_in_another_file(tmp_path: Path) -> None:
    # a legacy client reuses id 3 across a log rotation: the reused request is line 1 of
    # the newer file, the first use line 1 of the older one
    logs = tmp_path / "logs"
    logs.mkdir()
    older = [rec(req(3, "tools/list"), ts=ts(1)), rec(res(3, {"tools": []}), dir="s2c", ts=ts(2))]
    (logs / "x.jsonl.1").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in older))
    (logs / "x.jsonl").write_bytes(orjson.dumps(rec(req(3, "prompts/list"), ts=ts(3))) + b"\n")
    trace = mcptrace.load(logs)
    page = build_report(trace, select=["PR001"], revision="2025-11-25")
    pr001 = _finding(page, "PR001")
    labels = re.findall(r'<div class="raw-label">([^<]*)', pr001)
    assert labels == ["x.jsonl.1:1", "x.jsonl:1"]
    assert "&quot;method&quot;:&quot;tools/list&quot;" in pr001  # the older file's line 1


def test_findings_given_without_related_show_the_lines_their_text_names(
    tmp_path: Path,
) -> None:
    # a findings table read back from an older JSON report has no `related`: the lines
    # its messages name are taken to be in the finding's own file
    records = [
        rec(req(3, "tools/list"), ts=ts(1)),
        rec(res(3, {"tools": []}), dir="s2c", ts=ts(2)),
        rec(req(3, "prompts/list"), ts=ts(3)),
    ]
    path = tmp_path / "one.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    trace = mcptrace.load(path)
    given = lint(trace, select=["PR001"], revision="2025-11-25").drop("related")
    pr001 = _finding(build_report(trace, findings=given), "PR001")
    assert re.findall(r'<div class="raw-label">([^<]*)', pr001) == ["one.jsonl:1", "one.jsonl:3"]


def test_latency_tables_and_plots(page: str) -> None:
    latency = _section(page, "latency")
    assert "<h3>By method</h3>" in latency and "<h3>By tool</h3>" in latency
    row = re.search(r"<td class=\"wrap mono\">fetch_page</td>(.*?)</tr>", latency, re.S)
    assert row
    cells = re.findall(r'<td class="num">([^<]*)</td>', row.group(1))
    assert cells[0] == "42"  # calls
    assert cells[-2] == "34,388.5"  # max, the answer after the cancel
    assert "3 cancelled, 1 unanswered" in latency
    images = _images(latency)
    assert len(images) == 2
    assert all(_png_size(i)[0] >= 1000 for i in images)


def test_errors_table_rate_and_plots(page: str) -> None:
    errors = _section(page, "errors")
    assert "Error rate 14.0 %" in errors
    assert "14 of 100 calls failed" in errors
    assert "-32603" in errors and "Internal error" in errors
    assert "Cancelled, no response" in errors
    assert len(_images(errors)) == 2


def test_slowest_calls_come_with_their_request_and_response(page: str) -> None:
    slowest = _section(page, "slowest")
    first_row = re.search(r"<tbody><tr>(.*?)</tr>", slowest, re.S)
    assert first_row
    assert "tools/call fetch_page" in first_row.group(1)
    assert "34.4 s" in first_row.group(1)
    assert "190 \N{RIGHTWARDS ARROW} 205" in first_row.group(1)
    detail = re.search(r'<details id="slow-1" open>(.*?)</details>', slowest, re.S)
    assert detail
    assert "request  incident-2025-11-25.jsonl:190" in detail.group(1)
    assert "response incident-2025-11-25.jsonl:205" in detail.group(1)
    assert "&quot;id&quot;:34,&quot;method&quot;:&quot;tools/call&quot;" in detail.group(1)
    assert "# Runbook" in detail.group(1)
    assert slowest.count("<details ") == 10


def test_bursts_give_times_and_line_ranges(page: str) -> None:
    bursts = _section(page, "bursts")
    assert "22:45:00.000" in bursts and "22:47:00.000" in bursts
    assert "186\N{EN DASH}237" in bursts
    assert "61.9 %" in bursts and "14.0 %" in bursts


def test_timeline_and_concurrency_plots(page: str) -> None:
    assert len(_images(_section(page, "timeline"))) == 2


def test_footer_names_version_inputs_and_parameters(page: str) -> None:
    footer = re.search(r'<footer class="page">(.*?)</footer>', page, re.S)
    assert footer
    assert f"mcptrace {mcptrace.__version__}" in footer.group(1)
    assert "incident-2025-11-25.jsonl" in footer.group(1)
    assert "whole capture" in footer.group(1)
    assert "mcptrace lint, all rules" in footer.group(1)


# ---------------------------------------------------------------------------
# focus: window and sessions
# ---------------------------------------------------------------------------


def test_window_narrows_the_counts(incident: Trace, window_page: str) -> None:
    requested = pl.col("request_ts")
    expected = incident.calls.filter((requested >= SINCE) & (requested <= UNTIL)).height
    assert 0 < expected < 100
    assert _card(window_page, "Calls") == str(expected)
    assert 'class="focus"' in window_page
    assert "2026-09-15 22:45:00.000 to 2026-09-15 22:47:00.000 UTC" in window_page
    findings = _section(window_page, "findings")
    # JR004 (line 55) is before the window, CN003 (line 205) inside it
    assert "<code>JR004</code>" not in findings
    assert "<code>CN003</code>" in findings


def test_window_keeps_session_revisions_and_late_answers(window_page: str) -> None:
    # the handshakes are before 22:45: the sessions still speak 2025-11-25, and the
    # linter does not complain that it cannot tell
    overview = _section(window_page, "overview")
    assert "unknown" not in overview
    assert "LC012" not in window_page
    # a call asked inside the window keeps the latency of its answer after it
    assert "34.4 s" in _section(window_page, "slowest")
    # the burst is measured against the whole capture, not against the window's own rate
    assert "61.9 %" in _section(window_page, "bursts")


def test_session_filter(incident: Trace) -> None:
    page = build_report(incident, session="billing-http-1")
    overview = _section(page, "overview")
    assert "billing-http-1" in overview
    assert "search-desk-1" not in overview
    assert "fetch_page" not in _section(page, "slowest")
    assert _card(page, "Sessions") == "1"


def test_a_window_is_compared_with_the_time_before_it(incident: Trace, window_page: str) -> None:
    latency = _section(window_page, "latency")
    assert "Before the window and in it" in latency
    start = latency.index("Before the window and in it")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", latency[start:]))
    # fetch_page: 31 calls before 22:45, 10 in the window, 9 of which failed
    assert re.search(r"fetch_page 31 10 249\.4 20,017\.9 .* 0\.0 % 90\.0 %", text)
    assert text.index("get_invoice") < text.index("fetch_page") < text.index("search_docs")
    # without a window start there is nothing before to compare with
    assert "Before the window" not in _section(build_report(incident), "latency")
    assert "Before the window" not in _section(build_report(incident, until=UNTIL), "latency")
    early = build_report(incident, since=datetime(2026, 9, 15, 22, 0, tzinfo=UTC))
    assert "No calls were requested before the window" in _section(early, "latency")


def test_empty_window_still_gives_every_section(incident: Trace) -> None:
    page = build_report(incident, since=datetime(2030, 1, 1))
    assert [i for i in _Page(page).ids if i in SECTIONS] == list(SECTIONS)
    assert "No calls." in _section(page, "latency")
    assert "No findings" in _section(page, "findings")


def test_findings_given_by_the_caller(incident: Trace) -> None:
    page = build_report(incident, findings=lint(incident, select=["JR"]), title="JR only")
    findings = _section(page, "findings")
    assert "<code>JR004</code>" in findings and "<code>PR001</code>" not in findings
    assert "supplied by the caller" in page
    assert "<title>JR only</title>" in page


def test_a_failing_lint_fails_the_report(incident: Trace) -> None:
    # the lint runs on a thread of its own while plots are drawn: its error still
    # reaches the caller, not a page without findings
    with pytest.raises(UsageError, match="unknown revision"):
        build_report(incident, revision="2099-01-01")


def test_command_passes_allowed_origins_to_the_linter(
    write_lines: WriteLines, tmp_path: Path
) -> None:
    headers = {"Origin": "https://evil.example", "MCP-Protocol-Version": "2025-11-25"}
    http = {"method": "POST", "status": 200, "headers": headers}
    capture = write_lines([rec(req(1, "tools/list"), transport="http", http=http, session="web")])
    out = tmp_path / "report.html"
    base = ["report", str(capture), "-o", str(out)]
    assert runner.invoke(app, base).exit_code == 0
    assert "<code>HT021</code>" not in _section(out.read_text(encoding="utf-8"), "findings")
    result = runner.invoke(app, [*base, "--allowed-origin", "https://app.example.com"])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "<code>HT021</code>" in _section(page, "findings")
    assert "allowed origins https://app.example.com" in page


def test_command_reads_the_lint_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the incident sample draws JR004, PR001 and others; the project ignores JR
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.mcptrace]\nignore = ["JR"]\nallowed-origins = ["https://app.example.com"]\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(INCIDENT), "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    findings = _section(page, "findings")
    assert "<code>JR004</code>" not in findings and "<code>PR001</code>" in findings
    assert "rules ignore JR" in page and "allowed origins https://app.example.com" in page
    assert f"settings from {project / 'pyproject.toml'}" in page
    # --config names another file; a command-line option still wins over it
    other = tmp_path / "mcptrace.toml"
    other.write_text('select = ["JR"]\nrevision = "2025-11-25"\n', encoding="utf-8")
    result = runner.invoke(
        app,
        ["report", str(INCIDENT), "-o", str(out), "--config", str(other)],
    )
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    findings = _section(page, "findings")
    assert "<code>JR004</code>" in findings and "<code>PR001</code>" not in findings
    assert "every session judged by 2025-11-25" in page
    # the rule and revision options override the file, as lint's do
    result = runner.invoke(
        app,
        [
            "report", str(INCIDENT), "-o", str(out), "--config", str(other),
            "--select", "PR001,CN", "--ignore", "CN003", "--revision", "2025-06-18",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    codes = set(re.findall(r"<code>([A-Z]{2}\d{3})</code>", _section(page, "findings")))
    assert codes == {"PR001", "CN001"}
    assert "every session judged by 2025-06-18" in page
    # a broken configuration is a usage error, as for lint
    other.write_text('revision = "2099-01-01"\n', encoding="utf-8")
    result = runner.invoke(app, ["report", str(INCIDENT), "-o", str(out), "--config", str(other)])
    assert result.exit_code == 2
    assert "revision must be one of" in result.output


# ---------------------------------------------------------------------------
# untrusted capture text
# ---------------------------------------------------------------------------

EVIL_TOOL = "<script>alert(1)</script>"
EVIL_SESSION = "<img src=x onerror=alert(2)>"
EVIL_ERROR = "</pre><script>alert(3)</script>"
MATH_TOOL = "$\\frac{a}{$x^"


@pytest.fixture
def evil_capture(write_lines: WriteLines) -> Path:
    s = EVIL_SESSION
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
    client = {"name": "<b>client</b>", "version": "1"}
    lines = [
        rec(req(0, "initialize", {**hello, "clientInfo": client}), session=s, ts=ts(0)),
        rec(res(0, {**hello, "serverInfo": {"name": "srv", "version": "1"}}),
            dir="s2c", session=s, ts=ts(0.1)),
        rec(note("notifications/initialized"), session=s, ts=ts(0.2)),
        rec(req(1, "tools/call", {"name": EVIL_TOOL}), session=s, ts=ts(1)),
        rec(err(1, -32603, EVIL_ERROR), dir="s2c", session=s, ts=ts(2)),
        rec(req(2, "tools/call", {"name": MATH_TOOL}), session=s, ts=ts(3)),
        rec(res(2, {"content": []}), dir="s2c", session=s, ts=ts(3.5)),
        # a null id: a finding whose raw line carries the markup too
        rec(req(None, "tools/call", {"name": EVIL_TOOL}), session=s, ts=ts(4)),
    ]  # fmt: skip
    return write_lines(lines, name="evil<b>name.jsonl")


def _assert_only_escaped(text: str) -> None:
    for raw in (EVIL_TOOL, EVIL_SESSION, "<b>client", "<b>name", "</pre><script>"):
        assert raw not in text, raw
    assert "<img src=x" not in text and '<img src="x"' not in text


def test_capture_text_is_escaped_everywhere(evil_capture: Path) -> None:
    trace = mcptrace.load(evil_capture)
    assert EVIL_TOOL in trace.calls["target"].to_list()  # the capture really says so
    page = build_report(trace, title="<script>alert(4)</script>")
    _assert_only_escaped(page)
    assert page.count("<script") == 1  # ours, at the end of the body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;" in page
    assert "&lt;script&gt;alert(4)&lt;/script&gt;" in page
    assert "evil&lt;b&gt;name.jsonl" in page
    assert "&lt;b&gt;client&lt;/b&gt;" in page
    # the finding on the null id shows its raw line, as text
    assert "<code>JR004</code>" in page
    assert "&quot;name&quot;: &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;" in page or (
        "&quot;name&quot;:&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;" in page
    )
    parsed = _Page(page)
    assert not parsed.problems and not parsed.stack
    assert [t for t, _ in parsed.tags].count("script") == 1
    # every image is one of our plots, and every plot was drawn, the TeX-like name too
    assert all(src.startswith("data:image/png;base64,") for src in parsed.attrs("src"))
    assert "could not be drawn" not in page
    assert len(_images(page)) == 6


def test_the_page_loads_nothing_from_anywhere(page: str) -> None:
    parsed = _Page(page)
    for name in ("src", "href", "action", "srcset", "poster", "data", "formaction"):
        for value in parsed.attrs(name):
            assert not re.match(r"\s*(https?:|//|file:|ftp:)", value, re.I), (name, value)
    assert all(s.startswith("data:image/png;base64,") for s in parsed.attrs("src"))
    assert all(h.startswith("#") for h in parsed.attrs("href"))
    assert not [t for t, a in parsed.tags if t in ("link", "iframe", "object", "embed", "base")]
    assert not [t for t, a in parsed.tags if t == "script" and "src" in a]
    assert "@import" not in page and "url(" not in page
    csp = [a["content"] for t, a in parsed.tags if a.get("http-equiv") == "Content-Security-Policy"]
    assert csp == [CSP]
    assert "default-src 'none'" in CSP and "img-src data:" in CSP


def test_csp_allows_exactly_the_page_style_and_script(page: str) -> None:
    for tag in ("style", "script"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", page, re.S)
        assert body
        digest = base64.b64encode(hashlib.sha256(body.group(1).encode()).digest()).decode()
        assert f"'sha256-{digest}'" in CSP


def test_table_colours_match_the_plots() -> None:
    from mcptrace import plots

    assert plots.OUTCOME_COLORS == OUTCOME_CSS_COLORS


def test_importing_the_report_does_not_import_matplotlib() -> None:
    code = (
        "import sys, mcptrace.report, mcptrace.cli.report, mcptrace.cli; "
        "sys.exit('matplotlib' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ---------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------


def test_command_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(INCIDENT), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert [i for i in _Page(text).ids if i in SECTIONS] == list(SECTIONS)


def test_command_window_and_sessions(tmp_path: Path) -> None:
    out = tmp_path / "window.html"
    result = runner.invoke(
        app,
        [
            "report", str(INCIDENT), "-o", str(out),
            "--since", "2026-09-15T22:45", "--until", "2026-09-16T00:47:00+02:00",
            "--session", "search-desk-1", "--session", "search-ci-7731",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "2026-09-15 22:45:00.000 to 2026-09-15 22:47:00.000 UTC" in text
    assert "search-ci-7732" not in _section(text, "overview")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "not an ISO 8601 time"),
        (["--since", "2026-09-15T23:00Z", "--until", "2026-09-15T22:00Z"], "is after --until"),
        (["--session", "nope"], "no session 'nope'"),
        (["--schema-dir", "/nonexistent/schemas"], "schema directory not found"),
        (["--select", "ZZ999"], "'ZZ999' selects no rule"),
        (["--revision", "2099-01-01"], "unknown revision '2099-01-01'"),
    ],
)
def test_command_usage_errors(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(INCIDENT), "-o", str(out), *args])
    assert result.exit_code == 2
    assert message in result.output
    assert not out.exists()


def test_command_exits_2_on_an_unreadable_input_after_writing(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    missing = tmp_path / "missing.jsonl"
    result = runner.invoke(app, ["report", str(INCIDENT), str(missing), "-o", str(out)])
    assert result.exit_code == 2
    assert "missing.jsonl" in result.output
    text = out.read_text(encoding="utf-8")
    assert 'class="alert"' in text and "missing.jsonl" in _section(text, "overview")


def test_parse_time_reads_utc_by_default() -> None:
    assert parse_time("2026-09-15T22:45", "--since") == SINCE
    assert parse_time("2026-09-15 22:45:00Z", "--since") == SINCE
    assert parse_time("2026-09-16T00:45:00+02:00", "--since") == SINCE
    assert parse_time("2026-09-15", "--since") == datetime(2026, 9, 15, tzinfo=UTC)


# ---------------------------------------------------------------------------
# a real browser
# ---------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed (apt-get install chromium; .ci/run does)",
)


def _chromium(tmp_path: Path, target: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
        target.resolve().as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def _console(stderr: str) -> list[str]:
    """The page's console messages (script errors, CSP violations) in Chromium's log."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory, incident: Trace) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("browser") / "incident report.html"
    write_report(path, incident)
    yield path


@needs_chromium
def test_browser_log_would_show_a_script_error(tmp_path: Path) -> None:
    # the control of the tests below: an uncaught error does reach the log they read
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><p>x</p><script>throw new Error('boom')</script>")
    result = _chromium(tmp_path, page, "--dump-dom")
    assert any("Uncaught" in line for line in _console(result.stderr)), result.stderr


@needs_chromium
def test_browser_renders_every_section_and_runs_the_script(
    tmp_path: Path, report_file: Path
) -> None:
    result = _chromium(tmp_path, report_file, "--dump-dom")
    assert result.returncode == 0, result.stderr
    dom = result.stdout
    parsed = _Page(dom)
    for key, heading in SECTIONS.items():
        assert key in parsed.ids
        assert heading in parsed.headings
    assert "finding-1" in parsed.ids and "slow-1" in parsed.ids
    # the script ran (its hash matches the policy) and made the buttons usable
    assert re.search(r'<html[^>]*class="js"', dom)
    assert not [a for t, a in parsed.tags if t == "button" and "hidden" in a]
    # nothing went wrong: no uncaught error, no style or script refused by the policy
    assert _console(result.stderr) == []


@needs_chromium
def test_browser_page_reads_without_script(tmp_path: Path, report_file: Path) -> None:
    # headless Chromium serialises the DOM and takes screenshots with script, so its
    # scriptEnabled=false switch gives no output: the page without its one <script>
    # element is what a reader with script turned off gets
    text = report_file.read_text(encoding="utf-8")
    bare, removed = re.subn(r"<script>.*?</script>", "", text, flags=re.S)
    assert removed == 1
    page = tmp_path / "no-script.html"
    page.write_text(bare, encoding="utf-8")
    result = _chromium(tmp_path, page, "--dump-dom")
    assert result.returncode == 0, result.stderr
    parsed = _Page(result.stdout)
    assert [i for i in parsed.ids if i in SECTIONS] == list(SECTIONS)
    assert not re.search(r'<html[^>]*class="js"', result.stdout)
    # the expand/collapse buttons cannot work without script, so they stay hidden; the
    # collapsed blocks are <details>, which open without script
    buttons = [a for t, a in parsed.tags if t == "button"]
    assert buttons and all("hidden" in a for a in buttons)
    assert len(_images(result.stdout)) == 6
    assert _console(result.stderr) == []


@needs_chromium
def test_browser_screenshot(tmp_path: Path, report_file: Path) -> None:
    shot = tmp_path / "shot.png"
    result = _chromium(
        tmp_path,
        report_file,
        f"--screenshot={shot}",
        "--window-size=1280,2000",
        "--hide-scrollbars",
    )
    assert result.returncode == 0, result.stderr
    data = shot.read_bytes()
    assert _png_size(data) == (1280, 2000)
    assert len(data) > 50_000  # a rendered page, not a blank one
    assert _console(result.stderr) == []


@needs_chromium
def test_browser_shows_capture_markup_as_text(tmp_path: Path, evil_capture: Path) -> None:
    out = write_report(tmp_path / "evil.html", mcptrace.load(evil_capture))
    result = _chromium(tmp_path, out, "--dump-dom")
    assert result.returncode == 0, result.stderr
    dom = result.stdout
    _assert_only_escaped(dom)
    parsed = _Page(dom)
    assert [t for t, _ in parsed.tags].count("script") == 1
    assert all(src.startswith("data:image/png;base64,") for src in parsed.attrs("src"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert _console(result.stderr) == []


def test_highest_p95_of_tied_groups_is_the_first_by_name(write_lines: WriteLines) -> None:
    """Two tools as slow as each other: the highlights name the first by name, whichever
    comes first in the capture."""
    lines = []
    for i, tool in enumerate(["zeta", "alpha"] * 3):
        lines += [
            rec(req(i, "tools/call", {"name": tool}), ts=ts(10 * i)),
            rec(res(i, {"content": []}), dir="s2c", ts=ts(10 * i + 2)),
        ]
    html = build_report(mcptrace.load(write_lines(lines)))
    assert re.search(r"Highest p95 latency by tool</a>: <code>alpha</code>", html)
