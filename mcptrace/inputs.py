"""Which files a command reads: paths, folders and globs expanded, in reading order.

A folder is read recursively in name order, leaving out hidden files and folders and
``README.md``, and following symbolic links to folders (each folder once, so a link
back up the tree is not a loop). A glob is expanded the same way; a folder it matches
is read as a folder. A rotated log's files are put oldest first (see
:func:`rotation_order`).

Nothing met on the way is dropped without a word: a broken symbolic link is kept as a
file, so that reading it reports why it cannot be read, and a named pipe, socket or
device found in a folder is listed in :attr:`Inputs.skipped` with the reason it is
not read (reading a named pipe nobody writes to would wait for ever). Named on the
command line, such a file is read: that is how ``<(zcat capture.gz)`` reaches a
command.
"""

from __future__ import annotations

import glob
import os
import re
import stat
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PathLike = str | os.PathLike[str]

_GLOB_CHARS = re.compile(r"[*?\[]")
#: files a folder holds that are not captures
_NOT_CAPTURES = frozenset({"README.md"})


@dataclass(frozen=True)
class Inputs:
    """The files named by a command's inputs, and what was found but not read."""

    #: files to read, in reading order
    files: list[str] = field(default_factory=list)
    #: (path, reason) of the named pipes, sockets and devices found in folders and globs
    skipped: list[tuple[str, str]] = field(default_factory=list)


def input_list(paths: PathLike | Iterable[PathLike]) -> list[str]:
    """The inputs as given (one path or several), read once: a generator of paths is
    then both expanded and named in messages."""
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    return [os.fspath(item) for item in items]


def describe_paths(paths: PathLike | Iterable[PathLike]) -> str:
    """The inputs as a user typed them, for messages: ``a.jsonl, logs/``."""
    return ", ".join(input_list(paths)) or "(no inputs)"


def _home(text: str) -> str:
    """``~/x`` (or ``~user/x``) as the shell would expand it: in Python or a notebook a
    path is not expanded by a shell, as it is on the command line. A file whose name
    starts with ``~`` is taken as it is."""
    if text.startswith("~") and not Path(text).exists():
        return os.path.expanduser(text)
    return text


def expand_paths(paths: PathLike | Iterable[PathLike]) -> list[str]:
    """The files to read of ``paths`` (see :func:`expand_inputs`)."""
    return expand_inputs(paths).files


def expand_inputs(paths: PathLike | Iterable[PathLike]) -> Inputs:
    """Files named by ``paths``: files as given, folders recursively and globs expanded,
    each in name order except for rotated logs (see :func:`rotation_order`); each file
    once, where it first comes."""
    found = Inputs()
    for given in input_list(paths):
        text = _home(given)
        if Path(text).is_dir():
            _expand_found(_walk(text), found)
        elif _GLOB_CHARS.search(text) and not Path(text).exists():
            matches = sorted(glob.glob(text, recursive=True), key=Path)
            walked = _Walk()
            for match in matches:
                if Path(match).is_dir():
                    _walk(match, walked)
                else:
                    walked.add(Path(match))
            _expand_found(walked, found)
        else:
            found.files.append(text)
    files = list(dict.fromkeys(found.files))
    skipped = list(dict.fromkeys(found.skipped))
    return Inputs(files=files, skipped=skipped)


@dataclass
class _Walk:
    """What a walk found: the files (broken links included) and the entries not read."""

    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: (device, inode) of every folder entered: a link back up is not followed again
    seen: set[tuple[int, int]] = field(default_factory=set)

    def add(self, path: Path) -> None:
        try:
            mode = path.stat().st_mode
        except OSError:
            # a broken link, or a link loop: kept, so that reading it says which
            self.files.append(path)
            return
        if stat.S_ISREG(mode):
            self.files.append(path)
        elif not stat.S_ISDIR(mode):
            self.skipped.append((str(path), _not_read(mode)))


def _not_read(mode: int) -> str:
    kind = (
        "a named pipe"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    return (
        f"not read: {kind} met in a folder or glob (reading it could block for ever); "
        "name it on the command line to read it"
    )


def _walk(folder: str, walked: _Walk | None = None) -> _Walk:
    """Every entry under ``folder`` that is not a folder, hidden ones left out; links to
    folders followed, each folder entered once."""
    walked = walked if walked is not None else _Walk()
    for root, folders, names in os.walk(folder, followlinks=True):
        try:
            here = os.stat(root)
        except OSError:
            folders.clear()
            continue
        key = (here.st_dev, here.st_ino)
        if key in walked.seen:
            folders.clear()  # reached again through a link: its files are listed already
            continue
        walked.seen.add(key)
        # in name order: of two links to one folder, the first by name is the one kept
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in names:
            if not name.startswith(".") and name not in _NOT_CAPTURES:
                walked.add(Path(root, name))
    return walked


def _expand_found(walked: _Walk, found: Inputs) -> None:
    found.files.extend(rotation_order([str(p) for p in sorted(walked.files)]))
    found.skipped.extend(sorted(walked.skipped))


#: a rotated log's older files: ``x.log.1``, ``x.log.2.gz`` (logrotate, Python's
#: RotatingFileHandler) or, with logrotate's dateext, ``x.log-20261201.gz``
_ROTATED = re.compile(r"^(?P<base>.+?)(?:\.(?P<n>\d{1,6})|-(?P<date>\d{8}(?:\d{2,6})?))(?:\.gz)?$")


def rotation_order(paths: list[str]) -> list[str]:
    """``paths`` (in name order) with the files of each rotated log put oldest first.

    By name, a rotated log reads newest first: ``x.log`` (the file being written) sorts
    before ``x.log.1``, which holds what came just before it, and ``x.log.2.gz`` holds
    older messages still. Loaded in that order, a session that crossed a rotation would
    have its end before its start (responses before their requests). The files of a
    log (of one folder) are put in the order they were written: by the first time each
    file holds, when every one of them starts with a different one (so that parts
    numbered upwards, ``x.log.1`` then ``x.log.2``, are read as written too); else by
    the names' convention: dated ones by date, then numbered ones from the highest
    number, then the log's own file. They take the places the log's files had in
    ``paths``; every other file keeps its place.
    """
    families: dict[tuple[str, str], list[int]] = {}
    age: dict[int, tuple[int, str, int]] = {}
    for i, path in enumerate(paths):
        p = Path(path)
        m = _ROTATED.match(p.name)
        if m is not None:
            families.setdefault((str(p.parent), m["base"]), []).append(i)
            age[i] = (0, m["date"], 0) if m["date"] else (1, "", -int(m["n"]))
    for i, path in enumerate(paths):
        p = Path(path)
        family = families.get((str(p.parent), p.name.removesuffix(".gz")))
        if family is not None and i not in age:
            family.append(i)
            age[i] = (2, "", 0)
    out = list(paths)
    for members in families.values():
        if len(members) > 1:
            starts = {i: _first_time(paths[i]) for i in members}
            timed = {i: t for i, t in starts.items() if t is not None}
            if len(timed) == len(members) and len(set(timed.values())) == len(members):
                oldest_first = sorted(members, key=timed.__getitem__)
            else:
                oldest_first = sorted(members, key=age.__getitem__)
            for slot, i in zip(sorted(members), oldest_first, strict=True):
                out[slot] = paths[i]
    return out


#: an ISO 8601 / RFC 3339 time to the second (captures, Claude Desktop and VS Code logs)
_TIME = re.compile(rb"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?")
#: how much of a file's start is searched for its first time
_HEAD = 64 << 10


def _first_time(path: str) -> bytes | None:
    """The first time written in the first 64 KiB of ``path`` (decompressed when it is
    gzip), as it is written; None when there is none or the file cannot be read."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD)
        if head.startswith(b"\x1f\x8b"):
            head = zlib.decompressobj(wbits=47).decompress(head, _HEAD)
    except (OSError, zlib.error):
        return None
    found = _TIME.search(head)
    if found is None:
        return None
    # "2026-12-01 10:00:00", "2026-12-01T10:00:00.000" and "2026-12-01T10:00:00" are
    # one time (and compare as text, digit by digit, in the order of time)
    time = found[0].replace(b" ", b"T")
    return time.rstrip(b"0").rstrip(b".") if b"." in time else time
