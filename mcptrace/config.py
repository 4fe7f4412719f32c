"""Configuration of ``mcptrace lint`` (and of the findings of ``mcptrace report``):
``[tool.mcptrace]`` in pyproject.toml, or mcptrace.toml.

Discovery starts in the current directory and walks up through its parents; the
first directory holding a ``mcptrace.toml`` (top-level keys) or a ``pyproject.toml``
with a ``[tool.mcptrace]`` table wins, and nothing further up is read (ruff and
black do the same, so nested projects can differ). In one directory
``mcptrace.toml`` takes precedence over ``pyproject.toml``. ``--config FILE``
skips discovery. Options given on the command line replace the configured value
of the same key.

.. code-block:: toml

    [tool.mcptrace]
    select = ["JR", "LC"]          # codes, code prefixes or rule names
    ignore = ["JR004"]
    fail-on = "warning"            # error (default) | warning | info
    revision = "2025-11-25"        # judge every session by this revision
    baseline = "mcptrace-baseline.json"
    schema-dir = "../spec/schema"  # <revision>/schema.json, for the SC rules
    format = "text"                # text | json | sarif | junit | github
    show-source = true             # text: quote each finding's capture line under it
    allowed-origins = ["https://app.example.com"]  # what the servers accept (HT021)

Relative paths are relative to the directory of the file they are written in.
This module validates everything it reads, so a typo fails with the file and key
named instead of being silently ignored.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcptrace.errors import McpTraceError, UsageError

#: the keys a configuration may hold
KEYS = (
    "select",
    "ignore",
    "fail-on",
    "revision",
    "baseline",
    "schema-dir",
    "format",
    "show-source",
    "allowed-origins",
)
#: ``fail-on`` values, most severe first
FAIL_LEVELS = ("error", "warning", "info")
#: report formats (the names of :data:`mcptrace.reporters.REPORTERS`; kept here so that
#: reading a config does not import the reporters)
REPORT_FORMATS = ("text", "json", "sarif", "junit", "github")


@dataclass(frozen=True)
class Config:
    """Lint settings from a configuration file; ``None`` means "not configured"."""

    #: the file the settings were read from; None when no configuration was found
    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    fail_on: str | None = None
    revision: str | None = None
    baseline: Path | None = None
    schema_dir: Path | None = None
    format: str | None = None
    show_source: bool | None = None
    allowed_origins: tuple[str, ...] | None = None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror or exc}") from exc


def _table(path: Path, data: dict[str, Any]) -> dict[str, Any] | None:
    """The mcptrace settings in a parsed file, None when a pyproject has none."""
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool")
    section = tool.get("mcptrace") if isinstance(tool, dict) else None
    if section is None:
        return None
    if not isinstance(section, dict):
        raise UsageError(f"{path}: [tool.mcptrace] must be a table")
    return section


def find_config(start: Path | None = None) -> Path | None:
    """The configuration file that applies in ``start`` (default: the current directory)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "mcptrace.toml"
        if candidate.is_file():
            return candidate
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _table(candidate, _read_toml(candidate)) is not None:
            return candidate
    return None


#: what each list key's example shows (rule codes, unless the key holds something else)
_LIST_EXAMPLES = {"allowed-origins": '"https://app.example.com"'}


def _strings(path: Path, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        example = _LIST_EXAMPLES.get(key, '"JR"')
        raise UsageError(f"{path}: {key} must be a list of strings, e.g. {key} = [{example}]")
    return tuple(value)


def _bool(path: Path, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{path}: {key} must be true or false, not {value!r}")
    return value


def _choice(path: Path, key: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UsageError(f"{path}: {key} must be one of {', '.join(choices)}, not {value!r}")
    return str(value)


def _path(path: Path, key: str, value: object) -> Path:
    if not isinstance(value, str) or not value:
        raise UsageError(f"{path}: {key} must be a path (a string)")
    return path.parent / Path(value).expanduser()


def parse_config(path: Path, table: dict[str, Any]) -> Config:
    """Validate the settings read from ``path`` (see the module docstring for the keys)."""
    for key in table:
        if key not in KEYS:
            close = difflib.get_close_matches(key.replace("_", "-"), KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(
                f"{path}: unknown key {key!r} in mcptrace configuration{hint}; "
                f"known keys: {', '.join(KEYS)}"
            )
    values: dict[str, Any] = {"path": path}
    if "select" in table:
        values["select"] = _strings(path, "select", table["select"])
    if "ignore" in table:
        values["ignore"] = _strings(path, "ignore", table["ignore"])
    if "fail-on" in table:
        values["fail_on"] = _choice(path, "fail-on", table["fail-on"], FAIL_LEVELS)
    if "format" in table:
        values["format"] = _choice(path, "format", table["format"], REPORT_FORMATS)
    if "show-source" in table:
        values["show_source"] = _bool(path, "show-source", table["show-source"])
    if "revision" in table:
        from mcptrace.protocol import REVISIONS

        values["revision"] = _choice(path, "revision", table["revision"], REVISIONS)
    if "baseline" in table:
        values["baseline"] = _path(path, "baseline", table["baseline"])
    if "schema-dir" in table:
        values["schema_dir"] = _path(path, "schema-dir", table["schema-dir"])
    if "allowed-origins" in table:
        values["allowed_origins"] = _strings(path, "allowed-origins", table["allowed-origins"])
    config = Config(**values)
    if config.select is not None or config.ignore is not None:
        from mcptrace.linter.registry import select_rules

        try:
            select_rules(config.select, config.ignore)
        except McpTraceError as exc:
            raise UsageError(f"{path}: {exc}") from exc
    return config


def read_config(path: Path) -> Config:
    """The settings in ``path``: a pyproject.toml's ``[tool.mcptrace]``, else top-level keys."""
    if not path.is_file():
        raise UsageError(f"config file not found: {path}")
    table = _table(path, _read_toml(path))
    return Config(path=path) if table is None else parse_config(path, table)


def load_config(explicit: Path | None = None, *, start: Path | None = None) -> Config:
    """The settings from ``explicit`` if given, else from the discovered file, else none."""
    if explicit is not None:
        return read_config(explicit)
    found = find_config(start)
    return read_config(found) if found is not None else Config()
