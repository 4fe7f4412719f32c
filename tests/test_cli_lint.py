"""``mcptrace lint``, ``rule`` and ``rules``: exit codes, options, formats, config, baseline."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import ROOT, SAMPLES, WriteLines, rec, req, res
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app
from mcptrace.cli import lint as lint_cli
from mcptrace.linter import RULES
from mcptrace.linter.docs import main as docs_main
from mcptrace.linter.docs import rules_markdown
from mcptrace.schema import FINDINGS

runner = CliRunner()
HEALTHY = SAMPLES / "capture" / "healthy-2025-11-25.jsonl"
JR = ["--select", "JR003,JR004"]  # the rules these tests rely on, whatever else exists
HANDSHAKE = [
    rec(req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})),
    rec(res(0, {"protocolVersion": "2025-11-25", "capabilities": {}}), dir="s2c"),
]
BAD = [*HANDSHAKE, rec(req(None, "tools/list")), rec(req(1.5, "tools/list"))]  # 3: JR004, 4: JR003


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty folder (no config to discover) and outside GitHub Actions."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


@pytest.fixture
def bad(write_lines: WriteLines) -> Path:
    return write_lines(BAD, "bad.jsonl")


def _lint(*args: str | Path) -> Any:
    return runner.invoke(app, ["lint", *map(str, args)])


def test_clean_capture_exits_0() -> None:
    result = _lint(HEALTHY, *JR)
    assert result.exit_code == 0, result.output
    assert result.stdout == "No findings.\n"


def test_findings_exit_1_in_capture_order(bad: Path) -> None:
    result = _lint(bad, *JR)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "bad.jsonl:3: JR004 [error] request tools/list has a null id (2025-11-25)"
    assert lines[1].startswith("bad.jsonl:4: JR003 [error]")
    assert lines[-1] == "2 findings (2 errors, 0 warnings, 0 info) in 1 session"


def test_unreadable_input_exits_2_after_linting_the_rest(bad: Path, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 10)
    result = _lint(bad, garbage, tmp_path / "missing.jsonl", *JR)
    assert result.exit_code == 2
    assert "bad.jsonl:3: JR004" in result.stdout
    assert "garbage.bin: binary content" in result.stderr
    assert "missing.jsonl" in result.stderr
    assert _lint(tmp_path / "missing.jsonl").exit_code == 2  # nothing readable at all


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--select", "ZZ"], "'ZZ' selects no rule"),
        (["--ignore", "nope-rule"], "'nope-rule' selects no rule"),
        (["--revision", "2099-01-01"], "unknown revision '2099-01-01'"),
        (["--input-format", "pcap"], "unknown format 'pcap'"),
        (["--schema-dir", "no/such/dir"], "schema directory not found"),
        (["--baseline", "no-such-baseline.json"], "cannot read baseline"),
        (["--config", "no-such.toml"], "config file not found"),
        (["--since", "yesterday"], "--since 'yesterday' is not an ISO 8601 time"),
        (["--since", "2026-08-02", "--until", "2026-08-01"], "is after --until"),
        (["--write-baseline", "b.json", "--since", "2026-08-01"], "drop --since/--until"),
    ],
)
def test_usage_errors_exit_2(bad: Path, args: list[str], error: str) -> None:
    result = _lint(bad, *args)
    assert result.exit_code == 2, result.output
    assert error in result.stderr
    assert result.stdout == ""


def test_invalid_option_values_exit_2(bad: Path) -> None:
    for args in (["--format", "xml"], ["--fail-on", "fatal"]):
        assert _lint(bad, *args).exit_code == 2


def _downgrade(monkeypatch: pytest.MonkeyPatch, severity: str) -> None:
    """Make every finding ``severity`` (the shipped JR rules are all errors)."""
    real = lint_cli.run_lint

    def fake(*args: Any, **kwargs: Any) -> pl.DataFrame:
        found = real(*args, **kwargs)
        return found.with_columns(severity=pl.lit(severity).cast(FINDINGS.schema["severity"]))

    monkeypatch.setattr(lint_cli, "run_lint", fake)


@pytest.mark.parametrize(
    ("severity", "fail_on", "code"),
    [
        ("error", None, 1),
        ("warning", None, 0),
        ("warning", "warning", 1),
        ("warning", "error", 0),
        ("info", "warning", 0),
        ("info", "info", 1),
        ("error", "info", 1),
    ],
)
def test_fail_on(
    bad: Path, monkeypatch: pytest.MonkeyPatch, severity: str, fail_on: str | None, code: int
) -> None:
    _downgrade(monkeypatch, severity)
    args = ["--fail-on", fail_on] if fail_on else []
    result = _lint(bad, *JR, *args)
    assert result.exit_code == code, result.output
    assert f"[{severity}]" in result.stdout  # findings below the level are still reported


def _codes(result: Any) -> list[str]:
    return [f["code"] for f in orjson.loads(result.stdout)]


def test_select_and_ignore_take_prefixes_names_and_lists(bad: Path) -> None:
    json = ["--format", "json"]
    assert _codes(_lint(bad, *json, "--select", "JR00", "--ignore", "JR003")) == ["JR004"]
    assert _codes(_lint(bad, *json, "--select", "null-request-id")) == ["JR004"]
    assert _codes(_lint(bad, *json, "--select", "JR004", "--select", "JR003")) == [
        "JR004",
        "JR003",
    ]
    assert _codes(_lint(bad, *json, "--select", "JR003,null-request-id")) == ["JR004", "JR003"]
    nothing = _lint(bad, "--select", "JR00", "--ignore", "JR")
    assert nothing.exit_code == 0 and nothing.stdout == "No findings.\n"


def test_every_format(bad: Path) -> None:
    outputs = {fmt: _lint(bad, *JR, "--format", fmt) for fmt in lint_cli.ReportFormat}
    assert all(r.exit_code == 1 for r in outputs.values())
    assert [f["line"] for f in orjson.loads(outputs["json"].stdout)] == [3, 4]
    sarif = orjson.loads(outputs["sarif"].stdout)
    assert sarif["version"] == "2.1.0"
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == "bad.jsonl"  # relative to the working folder
    assert region["region"]["startLine"] == 3
    junit = ET.fromstring(outputs["junit"].stdout)
    assert [f.get("type") for f in junit.iter("failure")] == ["JR004", "JR003"]
    assert outputs["github"].stdout.startswith("::error file=bad.jsonl,line=3,title=JR004 ")
    assert outputs["text"].stdout.startswith("bad.jsonl:3: JR004")


def test_output_file(bad: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.sarif"
    result = _lint(bad, *JR, "--format", "sarif", "-o", out)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert orjson.loads(out.read_bytes())["runs"][0]["results"][0]["ruleId"] == "JR004"


def test_github_format_is_the_default_in_github_actions(
    bad: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert _lint(bad, *JR).stdout.startswith("::error ")
    assert _lint(bad, *JR, "--format", "text").stdout.startswith("bad.jsonl:3:")
    (tmp_path / "mcptrace.toml").write_text('format = "json"\n')
    assert orjson.loads(_lint(bad, *JR).stdout)[0]["code"] == "JR004"  # configured wins
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    (tmp_path / "mcptrace.toml").unlink()
    assert _lint(bad, *JR).stdout.startswith("bad.jsonl:3:")


def test_config_is_discovered_and_the_command_line_overrides_it(
    bad: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mcptrace]\nselect = ["JR004"]\nfail-on = "warning"\nformat = "json"\n'
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)  # found in a parent folder
    assert _codes(_lint(bad)) == ["JR004"]
    assert _codes(_lint(bad, "--select", "JR003")) == ["JR003"]
    _downgrade(monkeypatch, "warning")
    assert _lint(bad).exit_code == 1  # configured fail-on = warning
    assert _lint(bad, "--fail-on", "error").exit_code == 0
    explicit = tmp_path / "ci.toml"
    explicit.write_text('select = ["JR003"]\n')
    result = _lint(bad, "--config", explicit)
    assert result.stdout.startswith(f"{bad}:4: JR003")  # not under the working folder


def test_bad_config_exits_2_naming_file_and_key(bad: Path, tmp_path: Path) -> None:
    (tmp_path / "mcptrace.toml").write_text('fail_on = "warning"\n')
    result = _lint(bad)
    assert result.exit_code == 2
    assert "mcptrace.toml" in result.stderr and "unknown key 'fail_on'" in result.stderr


def test_baseline_workflow(write_lines: WriteLines, tmp_path: Path) -> None:
    capture = write_lines(BAD, "cap.jsonl")
    baseline = tmp_path / "mcptrace-baseline.json"
    wrote = _lint(capture, *JR, "--write-baseline", baseline)
    assert wrote.exit_code == 0 and wrote.stdout == ""
    assert "wrote 2 findings" in wrote.stderr
    accepted = _lint(capture, *JR, "--baseline", baseline)
    assert accepted.exit_code == 0, accepted.output
    assert accepted.stdout == "No findings.\n"
    assert "2 findings accepted" in accepted.stderr
    # unrelated lines added, one violation fixed, one new: only the new one fails
    lines = [
        *HANDSHAKE,
        rec(req(7, "ping")),
        rec(req(None, "tools/list")),
        rec(req(True, "tools/list")),
    ]
    write_lines(lines, "cap.jsonl")
    (tmp_path / "mcptrace.toml").write_text(f'baseline = "{baseline.name}"\n')  # configured
    result = _lint(capture, *JR)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0].startswith("cap.jsonl:5: JR003")
    assert "1 finding accepted" in result.stderr and "1 baseline entry no longer occurs" in (
        result.stderr
    )


def test_window_reports_findings_inside_it_from_the_whole_capture() -> None:
    incident = SAMPLES / "capture" / "incident-2025-11-25.jsonl"
    everything = _lint(incident, "--format", "json")
    all_findings = orjson.loads(everything.stdout)
    assert {f["line"] for f in all_findings} >= {55, 137, 205}
    # 22:44 to 22:50 UTC: the null id at line 55 (22:41) is before the window; the session
    # handshakes are before it too, and still no lifecycle finding appears at its edge
    result = _lint(
        incident,
        "--format",
        "json",
        "--since",
        "2026-09-15T22:44:00Z",
        "--until",
        "2026-09-15 22:50",
    )
    assert result.exit_code == 1, result.output
    inside = orjson.loads(result.stdout)
    assert inside == [
        f for f in all_findings if "2026-09-15T22:44" <= f["ts"] <= "2026-09-15T22:50"
    ]
    assert {f["line"] for f in inside} == {137, 150, 205, 215}
    # an offset is converted to UTC; a window with no finding exits 0
    quiet = _lint(
        incident, "--since", "2026-09-16T00:30:00+02:00", "--until", "2026-09-16T00:40+02:00"
    )
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout == "No findings.\n"


def test_rule_command() -> None:
    result = runner.invoke(app, ["rule", "JR004"])
    assert result.exit_code == 0
    printed = (
        RULES["JR004"].render()
        + "\nCatalogue (docs/coverage.md): R004 request-id-not-null (covered)\n"
    )
    assert result.stdout == printed
    assert runner.invoke(app, ["rule", "null-request-id"]).stdout == printed
    beyond = runner.invoke(app, ["rule", "SC001"]).stdout
    assert beyond.endswith("none; official schema validation (catalogue §6), with --schema-dir\n")
    data = orjson.loads(runner.invoke(app, ["rule", "jr003", "--format", "json"]).stdout)
    assert data["code"] == "JR003" and data["name"] == "request-id-wrong-type"
    assert data["catalogue"] == [{"ref": "R003", "label": "request-id-type", "status": "covered"}]
    assert data["docs"] == RULES["JR003"].docs and "2025-11-25" in data["revisions"]
    missing = runner.invoke(app, ["rule", "XX999"])
    assert missing.exit_code == 2 and "no such rule: 'XX999'" in missing.stderr


def test_rules_command() -> None:
    text = runner.invoke(app, ["rules"])
    assert text.exit_code == 0
    assert text.stdout.split()[:6] == ["code", "name", "severity", "scope", "revisions", "summary"]
    for code, r in RULES.items():
        assert f"{code}  {r.name}" in text.stdout
    data = orjson.loads(runner.invoke(app, ["rules", "--format", "json"]).stdout)
    assert [d["code"] for d in data] == list(RULES)
    markdown = runner.invoke(app, ["rules", "--format", "markdown"]).stdout
    assert markdown.startswith("| code | name | severity | scope | revisions | summary |\n")
    assert len(markdown.splitlines()) == len(RULES) + 2


def test_help_documents_the_options() -> None:
    result = runner.invoke(app, ["lint", "--help"])
    assert result.exit_code == 0
    for option in ("--format", "--input-format", "--fail-on", "--baseline", "--write-baseline"):
        assert option in result.output


def test_help_keeps_placeholders_and_defaults_written_in_the_text() -> None:
    # help texts are Markdown: `<revision>` must not be taken for an HTML tag, nor the
    # "[default: ...]" written in a help for markup, and a docstring's lines are rewrapped
    result = runner.invoke(app, ["lint", "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    flat = " ".join(result.output.replace("│", " ").split())
    assert "<revision>/schema.json" in flat
    assert "[default: for an mcptrace capture of 64 MiB or more" in flat
    assert "the window's edges draw no false findings" in flat


def test_lint_is_public_api() -> None:
    assert "lint" in mcptrace.__all__
    found = mcptrace.lint(mcptrace.load(HEALTHY), select=["JR"])
    FINDINGS.validate(found)


def test_rules_doc_is_generated_from_the_registry() -> None:
    published = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert published == rules_markdown(), "run: python -m mcptrace.linter.docs > docs/rules.md"


def test_rules_doc_check_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "rules.md"
    page.write_text(rules_markdown(), encoding="utf-8")
    assert docs_main(["--check", str(page)]) == 0
    page.write_text("# stale\n", encoding="utf-8")
    assert docs_main(["--check", str(page)]) == 1
    assert "is stale" in capsys.readouterr().out
    assert "### JR004 null-request-id" in rules_markdown()
    assert "#### What it does" in rules_markdown()  # rule headings nest under the rule


def test_allowed_origins_from_the_command_line_or_the_config(
    write_lines: WriteLines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two sessions, so --partitions 2 lints each in a share of its own: the allow-list
    # must reach the rules either way
    def request(session: str, origin: str) -> dict[str, Any]:
        http = {"method": "POST", "status": 200, "headers": {"Origin": origin}}
        return rec(req(1, "tools/list"), session=session, transport="http", http=http)

    path = write_lines(
        [request("a", "https://evil.example"), request("b", "https://app.example.com")]
    )
    monkeypatch.chdir(tmp_path)
    args = [path, "--format", "json", "--select", "HT021", "--revision", "2025-11-25"]
    assert _codes(_lint(*args)) == []  # no allow-list: nothing to judge by
    for partitions in ("1", "2"):
        result = _lint(
            *args, "--allowed-origin", "https://app.example.com", "--partitions", partitions
        )
        assert [f["line"] for f in orjson.loads(result.stdout)] == [1], partitions
    (tmp_path / "mcptrace.toml").write_text('allowed-origins = ["https://app.example.com"]\n')
    assert _codes(_lint(*args)) == ["HT021"]
    # the command line replaces the configured list
    assert _codes(_lint(*args, "--allowed-origin", "https://evil.example")) == ["HT021"]
    assert [
        f["line"]
        for f in orjson.loads(_lint(*args, "--allowed-origin", "https://evil.example").stdout)
    ] == [2]


def test_show_source_quotes_the_capture_lines_from_the_option_or_the_config(
    tmp_path: Path, write_lines: WriteLines, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_lines(BAD)
    monkeypatch.chdir(tmp_path)
    plain = runner.invoke(app, ["lint", str(path), *JR]).output
    assert "    | " not in plain
    shown = runner.invoke(app, ["lint", str(path), *JR, "--show-source"]).output.splitlines()
    assert shown[0].endswith("JR004 [error] request tools/list has a null id (2025-11-25)")
    assert shown[1] == "    | " + orjson.dumps(BAD[2]).decode()
    assert shown[3] == "    | " + orjson.dumps(BAD[3]).decode()
    (tmp_path / "mcptrace.toml").write_text("show-source = true\n")
    assert runner.invoke(app, ["lint", str(path), *JR]).output.splitlines()[1].startswith("    | ")
    # with the configuration on, the option changes nothing
    assert runner.invoke(app, ["lint", str(path), *JR, "--show-source"]).output.count("    | ") == 2


def test_show_source_quotes_lines_of_a_capture_linted_in_shares(tmp_path: Path) -> None:
    records = [*HANDSHAKE, rec(req(None, "tools/list"))]
    records += [rec(req(i, "ping"), session=f"s{i}") for i in range(2, 40)]
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    args = ["lint", str(path), *JR, "--show-source"]
    whole = runner.invoke(app, [*args, "--partitions", "1"]).output
    shared = runner.invoke(app, [*args, "--partitions", "3"]).output
    assert shared == whole
    assert whole.splitlines()[1] == "    | " + orjson.dumps(records[2]).decode()


def test_an_input_without_messages_is_said_not_just_passed(tmp_path: Path) -> None:
    empty = tmp_path / "capture.jsonl"
    empty.write_bytes(b"")
    result = runner.invoke(app, ["lint", str(empty)])
    assert result.exit_code == 0
    assert "the inputs hold no messages: there was nothing to lint" in result.output
    # a capture with messages and no findings says nothing of the kind
    clean = runner.invoke(app, ["lint", str(SAMPLES / "capture" / "healthy-2025-11-25.jsonl")])
    assert "nothing to lint" not in clean.output
