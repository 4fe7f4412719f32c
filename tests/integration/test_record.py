"""``mcptrace record`` as a real process: byte-exact relaying, the records it writes, exit codes.

The "server" is a few lines of Python that echo stdin to stdout, so what the recorder
relays and records can be compared with what was sent, byte for byte.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from factories import ROOT

from mcptrace import _json

#: Echoes stdin to stdout line by line, logs to stderr, ends with an unterminated line.
ECHO_SERVER = """
import sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    out.write(line)
    out.flush()
sys.stderr.write("echo: stdin closed\\r\\n")
sys.stderr.flush()
out.write(b"\\nbye")
sys.exit(3)
"""

TIMEOUT_S = 30


def _record(
    tmp_path: Path, args: list[str], stdin: bytes = b"", output: Path | None = None
) -> tuple[subprocess.CompletedProcess[bytes], list[dict[str, Any]]]:
    output = output or tmp_path / "capture.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "mcptrace", "record", "-o", str(output), *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=TIMEOUT_S,
        check=False,
    )
    records = (
        [_json.loads(line) for line in output.read_bytes().splitlines()] if output.exists() else []
    )
    return done, records


def test_relays_bytes_exactly_and_records_every_line(tmp_path: Path) -> None:
    sent = (
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
        b'{ "jsonrpc": "2.0", "id": 2, "method": "ping" }\n'
        b'{"jsonrpc":"2.0","id":3,"method":"ping"}\r\n'
        b"Server listening on port 3000\n"
        b"\xe9t\xe9\n"
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}'  # no newline at EOF
    )
    # no `--`: everything from the first positional on belongs to the server (`-c` too)
    done, records = _record(
        tmp_path,
        ["--session", "s1", "--server", "echo", sys.executable, "-c", ECHO_SERVER],
        sent,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == sent + b"\nbye"
    assert b"echo: stdin closed" in done.stderr

    assert {(r["session"], r["server"], r["transport"]) for r in records} == {
        ("s1", "echo", "stdio")
    }
    c2s = [r for r in records if r["dir"] == "c2s"]
    s2c = [r for r in records if r["dir"] == "s2c"]
    stderr = [r for r in records if r["dir"] == "stderr"]
    ping = {"jsonrpc": "2.0", "method": "ping"}
    expected = [
        {"msg": {**ping, "id": 1}},
        {"msg": {**ping, "id": 2}, "raw": '{ "jsonrpc": "2.0", "id": 2, "method": "ping" }'},
        {"msg": {**ping, "id": 3}, "raw": '{"jsonrpc":"2.0","id":3,"method":"ping"}\r'},
        {"msg": "Server listening on port 3000"},
        {"msg": "\\xe9t\\xe9"},
        {"msg": {"jsonrpc": "2.0", "method": "notifications/initialized"}},
    ]
    assert [{k: r[k] for k in ("msg", "raw") if k in r} for r in c2s] == expected
    assert [{k: r[k] for k in ("msg", "raw") if k in r} for r in s2c] == [
        *expected,
        {"msg": "bye"},
    ]
    assert [r["msg"] for r in stderr] == ["echo: stdin closed"]
    stamps = [r["ts"] for r in records]
    assert stamps == sorted(stamps) and all(t.endswith("Z") and len(t) == 27 for t in stamps)


def test_appends_runs_with_distinct_default_sessions(tmp_path: Path) -> None:
    output = tmp_path / "capture.jsonl"
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    for _ in range(2):
        done, records = _record(tmp_path, ["--", sys.executable, "-c", ECHO_SERVER], line, output)
        assert done.returncode == 3
    sessions = [r["session"] for r in records]
    # per run: the ping each way, the server's "" and "bye" after EOF, its stderr line
    assert len(set(sessions)) == 2 and len(records) == 2 * 5
    assert all("server" not in r for r in records)


def test_exit_codes(tmp_path: Path) -> None:
    kill = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    done, _ = _record(tmp_path, ["--", sys.executable, "-c", kill])
    assert done.returncode == 128 + 15  # the shell's convention for a signal death
    done, _ = _record(tmp_path, ["--", str(tmp_path / "no-such-server")])
    assert done.returncode == 127 and b"no-such-server" in done.stderr
    done, records = _record(tmp_path, ["--", "true"], output=tmp_path / "missing" / "x.jsonl")
    assert done.returncode == 2 and records == [] and done.stdout == b""
