"""What a reporter may need besides the findings table, and helpers they share."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath, PurePosixPath, PureWindowsPath

import polars as pl

from mcptrace._text import one_line
from mcptrace.linter.registry import RULES
from mcptrace.linter.rule import Rule

#: used when the installed package metadata names no project URL
DEFAULT_INFORMATION_URI = "https://pypi.org/project/mcptrace/"


def _tool_version() -> str:
    from mcptrace import __version__

    return __version__


def _information_uri() -> str:
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls: list[str] = metadata("mcptrace").get_all("Project-URL") or []
    except PackageNotFoundError:
        return DEFAULT_INFORMATION_URI
    # entries look like "Homepage, https://..."; prefer the homepage, else the first one
    pairs = [(label.strip(), url.strip()) for label, _, url in (u.partition(",") for u in urls)]
    pairs = [(label, url) for label, url in pairs if url]
    for label, url in pairs:
        if label.lower() in ("homepage", "home", "repository", "source"):
            return url
    return pairs[0][1] if pairs else DEFAULT_INFORMATION_URI


@dataclass(frozen=True)
class ReportContext:
    """Everything a reporter needs that the findings table does not carry."""

    #: rules by code; must hold every code present in the findings (default: all rules)
    rules: Mapping[str, Rule] = field(default_factory=lambda: RULES)
    #: the trace's messages table (only ``ordinal`` and ``raw`` are read), for reporters
    #: that quote the offending capture line; None when the caller has no trace
    messages: pl.DataFrame | None = None
    #: tool version written into SARIF and JUnit
    version: str = field(default_factory=_tool_version)
    #: absolute source paths under this folder are shown relative to it (CI annotations
    #: and SARIF need repository-relative paths); None shows paths as given
    root: str | None = None
    information_uri: str = field(default_factory=_information_uri)
    #: the text report quotes each finding's capture line under it (needs ``messages``)
    show_source: bool = False

    def rule(self, code: str) -> Rule:
        found = self.rules.get(code) or RULES.get(code)
        if found is None:
            raise KeyError(f"no metadata for rule {code}")
        return found

    def raw_of(self, findings: pl.DataFrame) -> pl.Series:
        """The verbatim capture line of each finding's message, row by row (null where
        there is none)."""
        if self.messages is None or findings.is_empty():
            return pl.Series("raw", [None] * findings.height, dtype=pl.String)
        wanted = findings.select("ordinal").unique()
        known = (
            self.messages.select("ordinal", "raw")
            .join(wanted, on="ordinal", how="semi")
            .drop_nulls("raw")
            .unique("ordinal", keep="last", maintain_order=True)
        )
        located = findings.select("ordinal").join(
            known, on="ordinal", how="left", maintain_order="left"
        )
        return located["raw"]


def _pure(path: str) -> PurePath:
    # paths in a trace come from the machine that linted it; a Windows drive path keeps
    # its meaning (and gets forward slashes) even when reported elsewhere
    if re.match(r"^[A-Za-z]:[\\/]", path) or "\\" in path:
        return PureWindowsPath(path)
    return PurePosixPath(path)


def display_path(source: str | None, root: str | None) -> str:
    """``source`` relative to ``root`` when it lies under it, always with forward slashes."""
    if source is None:
        return ""
    path = _pure(source)
    if root is not None and path.is_absolute():
        base = _pure(root)
        if type(base) is type(path):
            with contextlib.suppress(ValueError):  # not under root: keep it absolute
                path = path.relative_to(base)
    return path.as_posix()


def display_paths(sources: pl.Series, root: str | None) -> pl.Series:
    """:func:`display_path` of each of ``sources``: worked out once for each distinct
    source (a report names a few files, thousands of times)."""
    distinct = sources.drop_nulls().unique(maintain_order=True)
    shown = [display_path(source, root) for source in distinct]
    return sources.replace_strict(distinct, shown, default="", return_dtype=pl.String)


#: what :func:`~mcptrace._text.one_line` changes: CR, LF and the control characters
#: it spells out (every C0 control but tab, DEL and the C1 controls)
_NOT_ONE_LINE = r"[\x00-\x08\x0a-\x1f\x7f-\x9f]"


def one_lines(texts: pl.Series) -> pl.Series:
    """:func:`~mcptrace._text.one_line` of each of ``texts`` (nulls stay null): only the
    distinct texts it would change go through it, the rest are kept as they are."""
    changed = texts.filter(texts.str.contains(_NOT_ONE_LINE)).unique(maintain_order=True)
    if changed.is_empty():
        return texts
    return texts.replace(changed, [one_line(text) for text in changed])


def rows(findings: pl.DataFrame) -> list[dict[str, object]]:
    """The findings as dicts in capture order (reporters never reorder)."""
    return list(findings.iter_rows(named=True))
