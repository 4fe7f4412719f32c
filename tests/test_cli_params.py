"""Option values converted without Pydantic (mcptrace.cli._params) and the command line
built for the one command run: same values, same errors, a quicker start."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from factories import SAMPLES
from typer import _click
from typer._coercion import build_runtime_param
from typer.core import TyperGroup, _TyperParameter
from typer.main import get_command

from mcptrace.cli import COMMANDS, full_app
from mcptrace.cli._params import _PlainRuntimeParam
from mcptrace.cli.lint import ReportFormat, RuleFormat

INCIDENT = SAMPLES / "capture" / "incident-2025-11-25.jsonl"

#: what a command line can hand an option: texts Typer takes as they are, texts Pydantic
#: reads more loosely than int() (" 5", "1_0"), refused ones, and values that are not text
VALUES: list[Any] = [
    "",
    "x",
    "-",
    "0",
    "1",
    "5",
    "007",
    "255",
    "256",
    " 5",
    "1_0",
    "+3",
    "-1",
    "\u0663",  # an Arabic-Indic three: a digit to str.isdigit, not to Pydantic
    "abc",
    "text",
    "JSON",
    "json",
    "warning",
    "markdown",
    str(SAMPLES),
    str(INCIDENT),
    "/nonexistent/x.jsonl",
    "a\x00b",
    5,
    True,
    ReportFormat.sarif,
    RuleFormat.json,
    ("a", "b"),
    (str(INCIDENT), "-", "1"),
    (),
]


def _outcome(convert: Any, value: Any, param: _TyperParameter, ctx: _click.Context) -> Any:
    try:
        result = convert(value, param, ctx)
    except Exception as exc:  # the error a user would read
        return ("refused", type(exc).__name__, str(exc))
    return ("taken", type(result).__name__, result)


def _parameters() -> dict[str, tuple[_click.Command, _TyperParameter]]:
    group = get_command(full_app())
    assert isinstance(group, TyperGroup)
    commands = {"mcptrace": group} | {name: group.commands[name] for name in COMMANDS}
    return {
        f"{name} {p.name}": (command, p)
        for name, command in commands.items()
        for p in command.params
        if isinstance(p, _TyperParameter)
    }


PARAMETERS = _parameters()


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_every_option_value_is_converted_as_typer_converts_it(name: str) -> None:
    # the plain conversion must give Typer's value or hand over to Typer, which refuses
    # with its own words: " 5" is 5 to Pydantic, "\u0663" is not, whatever int() says
    command, param = PARAMETERS[name]
    descriptor = param.type_descriptor
    ctx = _click.Context(command)
    typer_own = build_runtime_param(descriptor)
    for value in VALUES:
        plain = _PlainRuntimeParam(
            parameter_info=descriptor.parameter_info,
            annotation=descriptor.annotation,
            descriptor=descriptor,
        )
        expected = _outcome(typer_own._coerce_value, value, param, ctx)
        assert _outcome(plain._coerce_value, value, param, ctx) == expected, (name, value)


def test_a_lint_converts_its_options_without_pydantic_and_builds_no_other_command() -> None:
    # Pydantic (~40 ms to import) and the other commands' modules (the statistics...)
    # would be most of the start of a lint of a small capture
    code = (
        "import sys\n"
        f"sys.argv = ['mcptrace', 'lint', {str(INCIDENT)!r}, '--format', 'json', "
        "'--select', 'JR,PR', '--partitions', '2', '--fail-on', 'warning']\n"
        "from mcptrace.cli import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    loaded = [m for m in ('pydantic', 'mcptrace.cli.stats', 'mcptrace.analysis') "
        "if m in sys.modules]\n"
        "    print(loaded, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == "[]"
