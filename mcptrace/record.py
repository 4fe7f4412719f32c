"""Record a stdio MCP server's traffic while relaying it: a transparent man in the middle.

:func:`record_stdio` runs the server command as a child process and sits between
it and whoever started us (the MCP client)::

    client --stdin--> recorder --stdin--> server
    client <-stdout-- recorder <-stdout-- server
                      recorder <-stderr-- server   (also passed on to our stderr)

Every line in either direction, and every stderr line of the server, is appended
to a capture file in the mcptrace capture format (:mod:`mcptrace.loaders.capture`)
before it is relayed, so the recording survives a crash of the recorder, the
client or the server up to the last line that was delivered.

Relaying works on bytes with ``os.read``/``os.write`` rather than Python's
buffered streams: a line is forwarded as soon as its newline arrives (an MCP
client waits for each response before it sends the next request, so any
read-ahead buffering would deadlock it), invalid UTF-8 passes through untouched,
and a relay thread still blocked in a read at exit holds no interpreter-level
lock that could stall shutdown.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import IO, Any

from mcptrace import _json

#: How long to wait, after the server exited, for its stdout/stderr readers to
#: reach end of file. A grandchild that inherited the pipes can keep them open
#: forever; the recording must still end.
_DRAIN_TIMEOUT_S = 5.0

_CHUNK = 65536


class _Clock:
    """RFC 3339 UTC timestamps that never go backwards within one recording.

    The wall clock is read once; later times add the monotonic clock's progress,
    so an NTP step during a recording cannot produce negative latencies.
    """

    def __init__(self) -> None:
        self._wall = datetime.now(UTC)
        self._mono = time.monotonic_ns()

    def now(self) -> datetime:
        return self._wall + timedelta(microseconds=(time.monotonic_ns() - self._mono) // 1000)

    def stamp(self) -> str:
        return self.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _CaptureWriter:
    """Appends capture records to one file: one lock, one ``write(2)`` per record.

    The file is opened ``O_APPEND`` and a record goes out in a single unbuffered write,
    so nothing sits in a user-space buffer when a process dies, and several recorders
    (one per server of a multi-server client) can append to the same file without
    tearing each other's lines.
    """

    def __init__(self, fd: int, clock: _Clock, session: str, server: str | None) -> None:
        self._fd = fd
        self._clock = clock
        self._session = session
        self._server = server
        self._lock = threading.Lock()
        self._closed = False

    def write(self, direction: str, line: bytes) -> None:
        """Record one line, stamped now: called as soon as the line was read."""
        # "ts" first for readers of the file; its value is set under the lock below
        rec: dict[str, Any] = {"ts": "", "dir": direction, "session": self._session}
        if self._server is not None:
            rec["server"] = self._server
        rec["transport"] = "stdio"
        if direction == "stderr":
            # stderr is free-form log text; a trailing CR is line-ending noise, not content
            rec["msg"] = line.rstrip(b"\r").decode("utf-8", errors="backslashreplace")
        else:
            rec.update(_message_fields(line))
        with self._lock:
            if self._closed:  # a late stdin line after the recording ended
                return
            # Stamped under the lock, microseconds after the read: the three relay threads
            # then write in time order, so file order and timestamps always agree.
            rec["ts"] = self._clock.stamp()
            _write_all(self._fd, _json.dumpb(rec) + b"\n")

    def close(self) -> None:
        with self._lock:
            self._closed = True


def _message_fields(line: bytes) -> dict[str, Any]:
    """``msg`` (and ``raw`` when needed) for one protocol line, without its ``\\n``."""
    try:
        msg = _json.loads(line)
    except _json.JSONDecodeError:
        # Not JSON (a log line on stdout, a torn write, invalid UTF-8): keep the text, which
        # the loader reports as an invalid line. Undecodable bytes become \\xNN escapes, the
        # closest a JSON string can get to them.
        return {"msg": line.decode("utf-8", errors="backslashreplace")}
    text = line.decode()  # orjson accepted it, so it is valid UTF-8
    if _json.dumps(msg) == text:
        return {"msg": msg}
    # Whitespace, key order, number spelling, a CR before the LF: the linter needs the exact
    # bytes for framing rules, and the parsed message alone cannot give them back.
    return {"msg": msg, "raw": text}


def _lines(src: int | IO[bytes]) -> Iterator[tuple[bytes, bytes]]:
    """(line, terminator) for each line read from ``src``, as soon as it is complete.

    The line keeps no ``\\n``; the terminator is ``b"\\n"``, or ``b""`` for a last line
    that ended without one (a server that died mid-write), so relaying ``line +
    terminator`` reproduces the stream byte for byte. A pipe is passed as its file
    object, so this thread's reference keeps its fd from being closed and reused while
    it still reads.
    """
    # the pieces of an unfinished line: joined once when its newline arrives, so a
    # multi-megabyte line read in 64 KiB chunks costs linear time
    pending: list[bytes] = []
    while True:
        try:
            chunk = os.read(src if isinstance(src, int) else src.fileno(), _CHUNK)
        except (OSError, ValueError):  # closed under us, or never valid (no stdin): end of input
            chunk = b""
        if not chunk:
            if pending:
                yield b"".join(pending), b""
            return
        if b"\n" not in chunk:
            pending.append(chunk)
            continue
        first, *rest = chunk.split(b"\n")
        pending.append(first)
        yield b"".join(pending), b"\n"
        *complete, tail = rest
        for line in complete:
            yield line, b"\n"
        pending = [tail] if tail else []


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _fd_sink(fd: int) -> Callable[[bytes], None]:
    return lambda data: _write_all(fd, data)


def _relay(
    src: int | IO[bytes],
    sink: Callable[[bytes], None] | None,
    direction: str,
    writer: _CaptureWriter,
    on_eof: Callable[[], None] | None = None,
) -> None:
    """Record each line from ``src``, then pass it on to ``sink``.

    Recording before relaying keeps the file in causal order: a response can only be
    read after its request was delivered, so its record always comes later.
    """
    try:
        for line, end in _lines(src):
            writer.write(direction, line)
            if sink is None:
                continue
            try:
                sink(line + end)
            except (OSError, ValueError):
                # the reader went away (client closed its end, server died): keep recording
                # what still arrives, but stop relaying
                sink = None
    finally:
        if on_eof is not None:
            on_eof()


def _default_session(command: list[str], pid: int) -> str:
    started = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{Path(command[0]).name}-{started}-{pid}"


@contextlib.contextmanager
def _forward_signals(child: subprocess.Popen[bytes]) -> Iterator[None]:
    """Pass termination signals on to the server while the recording runs.

    SIGTERM and SIGHUP are forwarded so that ``kill <recorder>`` shuts the server down
    and the recorder still records its last words. SIGINT is ignored: on a terminal it
    reaches the whole foreground process group, server included, and when the server
    exits the recording ends by itself. Only the main thread may install handlers.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            child.send_signal(signum)

    wanted: dict[int, Callable[[int, FrameType | None], Any] | int] = {
        signal.SIGINT: signal.SIG_IGN,
        signal.SIGTERM: forward,
    }
    if hasattr(signal, "SIGHUP"):
        wanted[signal.SIGHUP] = forward
    previous = {signum: signal.signal(signum, handler) for signum, handler in wanted.items()}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def record_stdio(
    command: list[str],
    output: Path,
    *,
    session: str | None = None,
    server: str | None = None,
) -> int:
    """Run ``command`` as a stdio MCP server, relay our stdin/stdout to it, record to ``output``.

    Appends one capture record per line: ``c2s`` for lines read from our stdin, ``s2c``
    for the server's stdout, ``stderr`` for its stderr (whose text is also copied to our
    stderr). ``session`` defaults to ``<command>-<UTC start>-<pid>``, unique per run, so
    several runs can share one file. Returns the server's exit code (negative: killed by
    that signal, as :attr:`subprocess.Popen.returncode`).

    Raises :class:`OSError` when ``output`` cannot be opened or ``command`` cannot be
    started; nothing is written to stdout in that case.
    """
    if not command:
        raise ValueError("no server command given")
    clock = _Clock()
    # os.open makes the fd non-inheritable (PEP 446): the server never holds the capture open
    fd = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        )
        assert child.stdin is not None and child.stdout is not None and child.stderr is not None
        writer = _CaptureWriter(fd, clock, session or _default_session(command, child.pid), server)
        child_stdin = child.stdin

        def to_child(data: bytes) -> None:
            # Through the file object, not a saved fd number: once it is closed this raises
            # instead of writing into whatever file later reuses the number.
            _write_all(child_stdin.fileno(), data)

        def close_child_stdin() -> None:
            # EOF from the client is the spec's shutdown signal for the server: pass it on
            with contextlib.suppress(OSError):
                child_stdin.close()

        # Our own streams as fds 0/1/2: the client's pipes, whatever sys.std* were replaced by.
        readers = [
            threading.Thread(
                target=_relay,
                args=(child.stdout, _fd_sink(1), "s2c", writer),
                name="mcptrace-record-s2c",
                daemon=True,
            ),
            threading.Thread(
                target=_relay,
                args=(child.stderr, _fd_sink(2), "stderr", writer),
                name="mcptrace-record-stderr",
                daemon=True,
            ),
        ]
        # Daemon and never joined: it blocks on our stdin, which the client may keep open
        # after the server exited, and must not keep the process alive.
        stdin_reader = threading.Thread(
            target=_relay,
            args=(0, to_child, "c2s", writer, close_child_stdin),
            name="mcptrace-record-c2s",
            daemon=True,
        )
        # Handlers go in only after the spawn: an ignored SIGINT would be inherited by the server.
        with _forward_signals(child):
            for thread in [*readers, stdin_reader]:
                thread.start()
            returncode = child.wait()
            deadline = time.monotonic() + _DRAIN_TIMEOUT_S
            for thread in readers:
                thread.join(max(0.0, deadline - time.monotonic()))
        writer.close()
    finally:
        os.close(fd)
    return returncode
