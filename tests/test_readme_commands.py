"""Every ``mcptrace`` command the README shows runs as written.

The README's commands name the bundled samples or stand-in paths (``traces/``,
``capture.log``, ``big-capture.jsonl``...). They run here, in the order the README gives
them, in a scratch folder where each stand-in is a copy of a sample, so that what a new
user copies from the README works: a wrong option name, a dropped command or a sample
moved away fails this test.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
from factories import ROOT, SAMPLES
from typer.testing import CliRunner

from mcptrace.cli import app

README = ROOT / "README.md"
CAPTURES = SAMPLES / "capture"
#: the README's stand-in paths, and the sample each is a copy of
STAND_INS: dict[str, Path] = {
    "traces": CAPTURES,
    "captures": CAPTURES,
    "traces/incident.jsonl": CAPTURES / "incident-2025-11-25.jsonl",
    "capture.log": SAMPLES / "stdio" / "docs-server.ndjson",
    "mcp-server-x.log": SAMPLES / "claude-desktop" / "mcp-server-weather.log",
    "big-capture.jsonl": CAPTURES / "incident-2025-11-25.jsonl",
}


def readme_commands() -> list[str]:
    """The ``mcptrace`` command lines of the README's ``sh`` blocks, variables expanded,
    continuation lines joined, in order."""
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.DOTALL):
        variables: dict[str, str] = {}
        for line in block.replace("\\\n", " ").splitlines():
            assignment = re.match(r"^([A-Z]+)=(\S+)$", line.strip())
            if assignment:
                variables[assignment[1]] = assignment[2]
                continue
            if not line.startswith(".venv/bin/mcptrace "):
                continue  # make, jupyter
            expanded = line
            for name, value in variables.items():
                expanded = expanded.replace(f"${name}", value)
            commands.append(expanded)
    return commands


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "sample_traces").symlink_to(SAMPLES, target_is_directory=True)
    for name, sample in STAND_INS.items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if sample.is_dir():
            shutil.copytree(sample, target, dirs_exist_ok=True)
        else:
            shutil.copyfile(sample, target)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return tmp_path


def test_the_readme_shows_the_commands_of_every_section() -> None:
    commands = " ".join(readme_commands())
    for command in ("summary", "show", "convert", "formats", "stats", "compare", "plot"):
        assert f"mcptrace {command} " in commands or commands.endswith(f"mcptrace {command}")
    for command in ("report", "lint", "rule", "rules", "scan", "redact"):
        assert f"mcptrace {command}" in commands


def test_every_readme_command_runs_as_written(workspace: Path) -> None:
    runner = CliRunner()
    ran = 0
    for line in readme_commands():
        args = shlex.split(line, comments=True)[1:]
        result = runner.invoke(app, args)
        # 1 is lint's and scan's "found something", which the samples are there to show
        assert result.exit_code in (0, 1), (line, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), line
        if "# exit 0" in line:
            assert result.exit_code == 0, (line, result.output)
        ran += 1
    assert ran >= 40
    # what the commands said they wrote is there
    for written in ("capture.parquet", "calls.csv", "x.jsonl", "latency.png", "errors.svg"):
        assert (workspace / written).stat().st_size > 0, written
    for written in ("report.html", "mcptrace.sarif", "mcptrace-baseline.json", "shared.jsonl"):
        assert (workspace / written).stat().st_size > 0, written


def test_the_readme_python_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert blocks
    monkeypatch.chdir(ROOT)  # the README's paths are the repository's
    for block in blocks:
        names: dict[str, Any] = {}
        exec(compile(block, "README.md", "exec"), names)  # our own README's code
    # the names it promises hold what it says
    assert names["window"].messages.height > 0
    assert names["incident"].messages["session"].unique().to_list() == ["docs-1"]
