"""Configuration discovery, validation and paths (mcptrace/config.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptrace.config import Config, find_config, load_config, read_config
from mcptrace.errors import UsageError


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_pyproject_is_found_from_a_subdirectory(tmp_path: Path) -> None:
    pyproject = _write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "x"\n\n[tool.mcptrace]\nselect = ["JR"]\nfail-on = "warning"\n',
    )
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) == pyproject
    config = load_config(start=deep)
    assert config == Config(path=pyproject, select=("JR",), fail_on="warning")


def test_mcptrace_toml_uses_top_level_keys_and_beats_pyproject(tmp_path: Path) -> None:
    _write(tmp_path / "pyproject.toml", '[tool.mcptrace]\nselect = ["LC"]\n')
    toml = _write(tmp_path / "mcptrace.toml", 'select = ["JR004"]\nformat = "sarif"\n')
    config = load_config(start=tmp_path)
    assert config.path == toml
    assert config.select == ("JR004",) and config.format == "sarif"


def test_the_nearest_file_wins_and_nothing_above_it_is_read(tmp_path: Path) -> None:
    _write(tmp_path / "mcptrace.toml", 'fail-on = "info"\nrevision = "2025-06-18"\n')
    child = _write(tmp_path / "proj" / "pyproject.toml", '[tool.mcptrace]\nignore = ["JR003"]\n')
    config = load_config(start=child.parent)
    assert config.path == child
    assert config.ignore == ("JR003",)
    assert config.fail_on is None and config.revision is None  # the parent file is not merged


def test_pyproject_without_a_mcptrace_table_is_skipped(tmp_path: Path) -> None:
    parent = _write(tmp_path / "mcptrace.toml", 'fail-on = "info"\n')
    _write(tmp_path / "proj" / "pyproject.toml", '[project]\nname = "x"\n')
    assert find_config(tmp_path / "proj") == parent


def test_no_config_anywhere(tmp_path: Path) -> None:
    # tmp_path's parents hold no mcptrace configuration on a test machine
    assert load_config(start=tmp_path) == Config()


def test_explicit_file_skips_discovery(tmp_path: Path) -> None:
    _write(tmp_path / "mcptrace.toml", 'fail-on = "info"\n')
    other = _write(tmp_path / "ci" / "strict.toml", 'fail-on = "warning"\n')
    assert load_config(other, start=tmp_path).fail_on == "warning"
    # an explicit pyproject is read through its [tool.mcptrace] table; without one it is empty
    bare = _write(tmp_path / "x" / "pyproject.toml", "[project]\n")
    assert read_config(bare) == Config(path=bare)
    with pytest.raises(UsageError, match="config file not found"):
        load_config(tmp_path / "missing.toml")


def test_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    toml = _write(
        tmp_path / "mcptrace.toml",
        'baseline = "ci/baseline.json"\nschema-dir = "/opt/spec/schema"\n',
    )
    config = read_config(toml)
    assert config.baseline == tmp_path / "ci" / "baseline.json"
    assert config.schema_dir == Path("/opt/spec/schema")


def test_every_key_is_accepted(tmp_path: Path) -> None:
    toml = _write(
        tmp_path / "mcptrace.toml",
        'select = ["JR", "null-request-id"]\nignore = ["JR003"]\nfail-on = "error"\n'
        'revision = "2026-07-28"\nbaseline = "b.json"\nschema-dir = "schemas"\nformat = "junit"\n'
        'allowed-origins = ["https://app.example.com"]\nshow-source = true\n',
    )
    config = read_config(toml)
    assert config.show_source is True
    assert config.select == ("JR", "null-request-id")
    assert config.revision == "2026-07-28" and config.format == "junit"
    assert config.allowed_origins == ("https://app.example.com",)


def test_unknown_key_names_the_key_and_the_file(tmp_path: Path) -> None:
    toml = _write(tmp_path / "mcptrace.toml", 'fail_on = "warning"\n')
    with pytest.raises(UsageError) as info:
        read_config(toml)
    message = str(info.value)
    assert str(toml) in message and "'fail_on'" in message and "did you mean 'fail-on'" in message
    pyproject = _write(tmp_path / "p" / "pyproject.toml", "[tool.mcptrace]\ncolour = true\n")
    with pytest.raises(UsageError, match=r"pyproject\.toml: unknown key 'colour'"):
        read_config(pyproject)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('select = "JR"', r"select must be a list of strings"),
        ("ignore = [1]", r'ignore must be a list of strings, e\.g\. ignore = \["JR"\]'),
        (
            'allowed-origins = "x"',
            r'allowed-origins = \["https://app\.example\.com"\]',
        ),
        ('fail-on = "fatal"', r"fail-on must be one of error, warning, info, not 'fatal'"),
        ('format = "xml"', r"format must be one of text, json, sarif, junit, github"),
        ('revision = "draft"', r"revision must be one of 2024-11-05"),
        ("baseline = 3", r"baseline must be a path"),
        ('show-source = "yes"', r"show-source must be true or false, not 'yes'"),
        ('select = ["ZZ9"]', r"'ZZ9' selects no rule"),
        ("select = [", r"invalid TOML"),
    ],
)
def test_bad_values_name_the_file(tmp_path: Path, text: str, error: str) -> None:
    toml = _write(tmp_path / "mcptrace.toml", text + "\n")
    with pytest.raises(UsageError, match=error) as info:
        read_config(toml)
    assert str(toml) in str(info.value)
