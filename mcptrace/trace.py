"""``mcptrace.load``: capture files in, a :class:`Trace` of tables out.

A trace is the messages table of every input file (in the order the files were
given, then line order), plus the per-file ``sources`` table. The calls and
sessions tables are derived on first access and cached.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path

import polars as pl

from mcptrace.calls import build_calls
from mcptrace.errors import CaptureError, UsageError
from mcptrace.loaders import FORMATS, load_file
from mcptrace.schema import MESSAGES, SOURCES
from mcptrace.sessions import build_sessions, identify

PathLike = str | os.PathLike[str]
ProgressCallback = Callable[[str, int, int], None]

_GLOB_CHARS = re.compile(r"[*?\[]")
#: a direction token in a file name marks one half of a per-direction stdio capture
_DIRECTION_TOKEN = re.compile(
    r"(?<![a-z0-9])(c2s|s2c|in|out|stdin|stdout|client|server|requests?|responses?|tx|rx)(?![a-z0-9])",
    re.IGNORECASE,
)
_TOKEN_DIRECTION = {
    **dict.fromkeys(("c2s", "in", "stdin", "client", "request", "requests", "tx"), "c2s"),
    **dict.fromkeys(("s2c", "out", "stdout", "server", "response", "responses", "rx"), "s2c"),
}


def expand_paths(paths: PathLike | Iterable[PathLike]) -> list[str]:
    """Files named by ``paths``: files as given, directories recursively, globs expanded."""
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    out: list[str] = []
    for item in items:
        text = os.fspath(item)
        if Path(text).is_dir():
            out.extend(
                str(p)
                for p in sorted(Path(text).rglob("*"))
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(text).parts)
                and p.name != "README.md"
            )
        elif _GLOB_CHARS.search(text) and not Path(text).exists():
            out.extend(sorted(p for p in glob.glob(text, recursive=True) if Path(p).is_file()))
        else:
            out.append(text)
    return list(dict.fromkeys(out))


@dataclass
class Trace:
    """The tables of one or more capture files.

    ``messages`` and ``sources`` are loaded; ``calls`` and ``sessions`` are derived
    on first access. Table schemas are documented in :mod:`mcptrace.schema`.
    """

    messages: pl.DataFrame
    sources: pl.DataFrame
    unordered_sessions: frozenset[str] = field(default_factory=frozenset)

    @cached_property
    def identity(self) -> pl.DataFrame:
        """Per-session revision and identity (the first columns of ``sessions``)."""
        return identify(self.messages)

    @cached_property
    def calls(self) -> pl.DataFrame:
        """One row per request joined with its response; orphans appended."""
        return build_calls(self.messages, self.identity, unordered_sessions=self.unordered_sessions)

    @cached_property
    def sessions(self) -> pl.DataFrame:
        """One row per session."""
        truncated = self.sources.filter(pl.col("truncated"))["source"].to_list()
        return build_sessions(self.messages, self.calls, self.identity, truncated_sources=truncated)

    @property
    def errors(self) -> pl.DataFrame:
        """Files that could not be read, with the reason."""
        return self.sources.filter(pl.col("status") == "error").select("source", "error")

    def filter(
        self,
        *,
        session: str | Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Trace:
        """A trace restricted to some sessions and/or a time window (rows without time are kept
        only when no window is given)."""
        cond = pl.lit(True)
        if session is not None:
            cond &= pl.col("session").is_in(
                [session] if isinstance(session, str) else list(session)
            )
        if since is not None:
            cond &= pl.col("ts") >= since
        if until is not None:
            cond &= pl.col("ts") <= until
        return Trace(self.messages.filter(cond), self.sources, self.unordered_sessions)

    def __repr__(self) -> str:
        return (
            f"<Trace {self.sources.height} file(s), {self.messages.height} messages, "
            f"{self.messages['session'].n_unique()} session(s)>"
        )


def _pair_direction_files(
    loaded: list[tuple[str, str, pl.DataFrame]],
) -> tuple[dict[str, pl.DataFrame], set[str], dict[str, str]]:
    """Per-direction stdio files (``x.in.jsonl`` + ``x.out.jsonl``) become one session."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for source, fmt, _ in loaded:
        if fmt != "stdio":
            continue
        name = Path(source).name
        tokens = _DIRECTION_TOKEN.findall(name)
        if len(tokens) != 1:
            continue
        key = (str(Path(source).parent), _DIRECTION_TOKEN.sub("*", name))
        groups.setdefault(key, []).append((source, _TOKEN_DIRECTION[tokens[0].lower()]))
    replaced: dict[str, pl.DataFrame] = {}
    sessions: set[str] = set()
    notes: dict[str, str] = {}
    frames = {source: df for source, _, df in loaded}
    for (_, pattern), members in groups.items():
        if len(members) != 2 or {d for _, d in members} != {"c2s", "s2c"}:
            continue
        stem = re.sub(r"(\.(jsonl|ndjson|json|log|txt|gz))+$", "", pattern, flags=re.IGNORECASE)
        session = re.sub(r"[._-]*\*[._-]*", "-", stem).strip("-") or pattern
        for source, direction in members:
            replaced[source] = frames[source].with_columns(
                session=pl.lit(session),
                direction=pl.lit(direction).cast(MESSAGES.schema["direction"]),
                direction_inferred=pl.lit(False),
            )
            notes[source] = (
                f"one direction ({direction}) of session {session!r}: the order of messages "
                "across the two files is unknown, so latencies cannot be measured"
            )
        sessions.add(session)
    return replaced, sessions, notes


#: formats whose session keys are derived from file structure (``weather#1``), not
#: recorded ids; the same derived key in two files names two different sessions
_DERIVED_SESSION_FORMATS = frozenset({"claude-desktop", "vscode", "inspector", "stdio"})


def _disambiguate_sessions(loaded: list[tuple[str, str, pl.DataFrame]]) -> list[pl.DataFrame]:
    """Prefix derived session keys with the file name where another file has the same key."""
    owners: dict[str, set[str]] = {}
    for source, _, df in loaded:
        for key in df["session"].unique().to_list():
            owners.setdefault(key, set()).add(source)
    frames = []
    for source, fmt, frame in loaded:
        clashing = [k for k in frame["session"].unique().to_list() if len(owners[k]) > 1]
        if fmt in _DERIVED_SESSION_FORMATS and clashing:
            prefix = Path(source).name
            frame = frame.with_columns(  # noqa: PLW2901 - the renamed frame replaces the loaded one
                session=pl.when(pl.col("session").is_in(clashing))
                .then(pl.format("{}:{}", pl.lit(prefix), pl.col("session")))
                .otherwise(pl.col("session"))
            )
        frames.append(frame)
    return frames


def load(
    paths: PathLike | Iterable[PathLike],
    *,
    format: str | None = None,
    tz: str | None = None,
    progress: ProgressCallback | None = None,
) -> Trace:
    """Load capture files into a :class:`Trace`.

    Parameters
    ----------
    paths
        A file, a directory (read recursively), a glob, or a list of these.
    format
        Force a loader (see :data:`mcptrace.loaders.FORMATS`); detected from content if None.
    tz
        IANA zone of wall-clock timestamps in formats that lack one (VS Code logs).
        Without it such times are read as UTC and marked ``local``.
    progress
        Called as ``progress(path, index, total)`` before each file.

    Files that cannot be read are listed in ``Trace.sources`` with the reason;
    :class:`~mcptrace.errors.CaptureError` is raised only when no file could be read.
    """
    if format is not None and format not in FORMATS:
        raise UsageError(f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
    files = expand_paths(paths)
    if not files:
        raise UsageError(f"no capture files found in {paths!r}")
    loaded: list[tuple[str, str, pl.DataFrame]] = []
    source_rows: list[dict[str, object]] = []
    for i, path in enumerate(files):
        if progress is not None:
            progress(path, i, len(files))
        try:
            name, result, content = load_file(path, format=format, tz=tz)
        except CaptureError as exc:
            source_rows.append(
                {"source": path, "status": "error", "error": exc.reason, "truncated": False}
            )
            continue
        df = result.messages
        warnings = list(content.warnings)
        if content.bom:
            warnings.append("UTF-8 byte order mark at start of file (ignored)")
        if warnings and df.height:
            df = df.with_columns(
                parse_error=pl.when(pl.int_range(pl.len()) == 0)
                .then(pl.coalesce("parse_error", pl.lit("; ".join(warnings))))
                .otherwise("parse_error")
            )
        loaded.append((path, name, df))
        source_rows.append(
            {
                "source": path,
                "format": name,
                "detected": "forced" if format else "content",
                "status": "ok",
                "error": "; ".join(warnings) or None,
                "bytes": len(content.data),
                "lines": result.lines,
                "rows": df.height,
                "invalid": int((df["kind"] == "invalid").sum()),
                "truncated": result.truncated or bool(content.warnings),
                "note": "; ".join(result.notes) or None,
            }
        )
    if not loaded:
        reasons = "; ".join(f"{r['source']}: {r['error']}" for r in source_rows)
        raise CaptureError(str(paths), f"no capture could be read ({reasons})")
    replaced, unordered, notes = _pair_direction_files(loaded)
    # paired per-direction files share their session on purpose
    frames = _disambiguate_sessions(
        [(s, "paired" if s in replaced else f, replaced.get(s, df)) for s, f, df in loaded]
    )
    messages = pl.concat(frames, how="vertical").with_columns(
        ordinal=pl.int_range(pl.len(), dtype=pl.Int64)
    )
    for row in source_rows:
        note = notes.get(str(row["source"]))
        if note:
            row["note"] = "; ".join(filter(None, [row.get("note"), note]))  # type: ignore[list-item]
    sources = SOURCES.from_columns({c: [r.get(c) for r in source_rows] for c in SOURCES.names})
    return Trace(
        messages=MESSAGES.conform(messages),
        sources=sources,
        unordered_sessions=frozenset(unordered),
    )
