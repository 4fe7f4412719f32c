"""Captures saved as UTF-16 (Windows PowerShell's `>` and `Out-File` write UTF-16LE with a
byte order mark) are decoded, not refused as binary."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from factories import SAMPLES
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app
from mcptrace.linter import lint
from mcptrace.linter.shares import lint_in_shares

CAPTURE = SAMPLES / "capture" / "healthy-2025-11-25.jsonl"
#: what a file's rows are compared on: everything but the file they came from
SAME = pl.exclude("source")


def _utf16(path: Path, out: Path, encoding: str, bom: bytes) -> Path:
    # PowerShell also turns each line end into CRLF
    text = path.read_text(encoding="utf-8").replace("\n", "\r\n")
    out.write_bytes(bom + text.encode(encoding))
    return out


@pytest.mark.parametrize(
    ("encoding", "bom", "name"),
    [("utf-16-le", b"\xff\xfe", "UTF-16LE"), ("utf-16-be", b"\xfe\xff", "UTF-16BE")],
)
def test_a_utf16_capture_loads_as_its_utf8_original(
    tmp_path: Path, encoding: str, bom: bytes, name: str
) -> None:
    wide = _utf16(CAPTURE, tmp_path / "wide.jsonl", encoding, bom)
    original = mcptrace.load(CAPTURE)
    trace = mcptrace.load(wide)
    assert trace.errors.is_empty()
    assert trace.sources["format"][0] == "capture"
    assert f"decoded from {name}" in trace.sources["note"][0]
    assert trace.sources["truncated"][0] is False
    assert trace.messages.select(SAME).equals(original.messages.select(SAME))
    assert lint(trace).select(SAME).equals(lint(original).select(SAME))


def test_undecodable_utf16_is_replaced_and_said(tmp_path: Path) -> None:
    text = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":1,"result":{}}\n'
    data = bytearray(b"\xff\xfe" + text.encode("utf-16-le"))
    # a lone low surrogate in place of the `p` of "ping"
    at = 2 + 2 * text.index("ping")
    data[at : at + 2] = b"\x00\xdc"
    path = tmp_path / "broken.jsonl"
    path.write_bytes(bytes(data))
    trace = mcptrace.load(path)
    assert (
        "decoded from UTF-16LE (1 undecodable code unit replaced with U+FFFD)"
        in trace.sources["note"][0]
    )
    assert trace.messages["method"].to_list() == ["\ufffding", None]


def test_a_utf16_capture_is_linted_whole_not_in_shares(tmp_path: Path) -> None:
    # shares re-read the file from disk by byte offset, which UTF-16 does not allow
    wide = _utf16(CAPTURE, tmp_path / "wide.jsonl", "utf-16-le", b"\xff\xfe")
    assert lint_in_shares(wide, shares=2) is None
    result = CliRunner().invoke(app, ["lint", str(wide), "--partitions", "2"])
    plain = CliRunner().invoke(app, ["lint", str(CAPTURE)])
    assert result.exit_code == plain.exit_code
    assert result.output.replace(str(wide), "F") == plain.output.replace(str(CAPTURE), "F")
