"""The C scanner (mcptrace._scan) against the pure-Python path: same rows, always.

The scanner only takes lines it can reproduce exactly and leaves every other line
to orjson; these tests feed both paths the same chunks -- hand-picked edge cases,
every bundled sample, and random documents in random spellings (whitespace,
escapes, number forms, duplicate members, broken bytes) -- and compare the frames.
Other tests check that the scanner does take the common lines, so that a scanner
declining everything (which would also be "equal") fails.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from mcptrace.loaders import FORMATS, accel, chunked
from mcptrace.loaders.base import LoadContext

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"

pytestmark = pytest.mark.skipif(
    accel._scan is None, reason="C scanner not built (no C compiler at install time)"
)


def test_scanner_is_built_where_a_compiler_exists() -> None:
    if shutil.which("cc") or shutil.which("gcc"):
        assert accel._scan is not None, "a C compiler is present but mcptrace._scan is not built"


def test_scanner_is_not_older_than_its_source() -> None:
    """The build is optional, so a failed rebuild after editing _scan.c would silently
    leave the old module in place (editable installs build next to the source)."""
    assert accel._scan is not None and accel._scan.__file__ is not None
    built = Path(accel._scan.__file__)
    source = built.parent / "_scan.c"
    if source.exists():
        assert built.stat().st_mtime >= source.stat().st_mtime, "rebuild: pip install -e ."


def _both(
    fmt: str, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> tuple[pl.DataFrame, pl.DataFrame]:
    module = FORMATS[fmt]
    ctx = LoadContext(source="t.jsonl", tz=None)
    monkeypatch.delenv("MCPTRACE_PURE_PYTHON", raising=False)
    fast = module.parse_chunk(data, 7, ctx)  # type: ignore[attr-defined]
    monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1")
    pure = module.parse_chunk(data, 7, ctx)  # type: ignore[attr-defined]
    monkeypatch.delenv("MCPTRACE_PURE_PYTHON")
    return fast, pure


def _assert_same(fmt: str, data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, pure = _both(fmt, data, monkeypatch)
    assert_frame_equal(fast, pure)


def _slow_lines(fmt: str, data: bytes) -> list[tuple[int, int, int]]:
    assert accel._scan is not None
    mode = accel._scan.CAPTURE if fmt == "capture" else accel._scan.STDIO
    _columns, _lines, slow = accel._scan.scan(data, 1, mode)
    return list(slow)


def spell(value: object, style: int) -> bytes:
    """One JSON text of ``value``: orjson's compact form, or the json module's spellings."""
    if style == 0:
        try:
            return orjson.dumps(value)
        except TypeError:  # an integer beyond 64 bits: the closest compact spelling
            return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    if style == 1:
        return json.dumps(value).encode()  # ", " and ": " separators
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode()


def env(msg: object, **extra: object) -> bytes:
    record = {"ts": "2026-08-01T10:00:00.123456Z", "dir": "c2s", "session": "s1", **extra}
    record["msg"] = msg
    return spell(record, 0)


# -- the common lines are taken --------------------------------------------------------

COMMON = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    },
    {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": "r-2",
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"text": 'a\nb "q" é 😀'},
            "_meta": {"progressToken": 7, "io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        },
    },
    {
        "jsonrpc": "2.0",
        "id": "r-2",
        "result": {
            "content": [{"type": "text", "text": "x"}],
            "isError": True,
            "resultType": "complete",
        },
    },
    {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "t1", "progress": 0.5, "total": 1.0},
    },
    {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 3, "reason": "user"},
    },
    {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32601, "message": "Method not found", "data": None},
    },
    {"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "file:///a.txt"}},
    {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "completion/complete",
        "params": {
            "ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "a", "value": "b"},
        },
    },
    {"jsonrpc": "2.0", "id": 7, "method": "prompts/get", "params": {"name": "greet"}},
    {
        "jsonrpc": "2.0",
        "id": 8,
        "result": {"latitude": 37.7749, "longitude": -122.4194, "n": -3, "z": 0.0},
    },
]


def test_common_capture_lines_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"".join(env(m, server="srv", transport="http") + b"\n" for m in COMMON)
    assert _slow_lines("capture", data) == []
    _assert_same("capture", data, monkeypatch)


def test_common_stdio_lines_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"".join(orjson.dumps(m) + b"\r\n" for m in COMMON)
    assert _slow_lines("stdio", data) == []
    _assert_same("stdio", data, monkeypatch)


def test_http_capture_lines_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # a Streamable HTTP capture has the HTTP exchange on every line: before the scanner
    # read `http`, every such line took the Python path (10^5 lines: 3 s instead of 0.2 s)
    http = {
        "method": "POST",
        "status": 200,
        "headers": {"Accept": "application/json, text/event-stream", "Mcp-Method": "x"},
    }
    data = b"".join(env(m, transport="http", http=http) + b"\n" for m in COMMON)
    assert _slow_lines("capture", data) == []
    _assert_same("capture", data, monkeypatch)
    scanned = accel.scan(data, 1, "capture", source="t", format="capture")
    assert scanned is not None
    row = scanned[0].row(0, named=True)
    assert (row["http_method"], row["http_status"]) == ("POST", 200)
    assert row["http_headers"] == orjson.dumps(http["headers"]).decode()


def test_fast_rows_carry_the_protocol_columns() -> None:
    data = b"".join(env(m) + b"\n" for m in COMMON)
    scanned = accel.scan(data, 1, "capture", source="t", format="capture")
    assert scanned is not None
    frame, slow = scanned
    assert not slow
    call = frame.row(3, named=True)
    assert (call["kind"], call["id"], call["id_type"], call["method"], call["target"]) == (
        "request",
        '"r-2"',
        "string",
        "tools/call",
        "echo",
    )
    assert (call["progress_token"], call["protocol_version"]) == ("7", "2026-07-28")
    assert call["message"] == orjson.dumps(COMMON[3]).decode()
    assert call["raw"] == data.split(b"\n")[3].decode()
    error = frame.row(7, named=True)
    assert (error["kind"], error["error_code"], error["error_code_is_int"]) == (
        "error",
        -32601,
        True,
    )
    assert frame.row(4, named=True)["tool_error"] is True


# -- hand-picked edge cases: each is taken or declined, never misread ----------------------

EDGE_LINES = [
    b"",
    b"   ",
    b"not json",
    b'{"ts":"2026-08-01T10:00:00Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}',
    b'{"ts":"2026-08-01T10:00:00Z","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}} x',
    b'{"ts":"2026-08-01T10:00:00Z","dir":"c2s","msg":{"jsonrpc":"2.0", "id":1,"method":"ping"}}',
    b'{"ts": "2026-08-01T10:00:00Z", "dir": "c2s", "msg": {"jsonrpc":"2.0","id":1,"method":"ping"}}  ',  # noqa: E501
    b'{"ts":"2026-08-01T10:00:00+02:00","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"ts":"2026-08-01T10:00:00.1234567Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"ts":"2026-08-01 10:00:00Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"ts":"2024-02-29T23:59:59.5-05:30","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"ts":"2023-02-29T00:00:00Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"ts":"2026-13-01T00:00:00Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"ts":"2026-08-01T24:00:00Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"ts":"2026-08-01T10:00:60Z","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"ts":null,"dir":"c2s","session":null,"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"ts":5,"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":"c2s","session":["x"],"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":"c2s","server":5,"transport":{"a":1},"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":"c2s","transport":"carrier-pigeon","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":["c2s"],"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":"stderr","msg":"some text"}',
    b'{"dir":"s2c","kind":"transport","msg":"HTTP 202 Accepted (no body)"}',
    # numbers orjson refuses as infinite, and big ones it reads
    b'{"jsonrpc":"2.0","method":"x","params":[null,-10,-1e51000]}',
    b'{"jsonrpc":"2.0","method":"x","params":[1e308,1e309,123e290,1e-999,0e99999]}',
    b'{"jsonrpc":"2.0","method":"x","params":{"n":' + b"9" * 310 + b"}}",
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"x","params":[1e400]}}',
    b'{"dir":"c2s","msg":"{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"method\\":\\"ping\\"}"}',
    b'{"dir":"c2s","raw":"{\\"id\\":1}","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":"c2s","http":{"method":"POST","status":200},"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":"c2s","msg":[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}}',
    b'{"dir":"c2s","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1,"a":2}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","i\\u0064":1,"method":"ping"}}',
    b'{"d\\u0069r":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"a\\u0041","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"a\\u001f","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"a\\u001F","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"a\\/b","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"\\ud83d\\ude00","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"\xff","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"\xc3\xa9\xf0\x9f\x98\x80","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":"a\tb","method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":-0,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":007,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1.0,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1.50,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1e3,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":0.0001,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":0.00001,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":123456789012345678,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1234567890123456789,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":null,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":true,"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":{"a":[1,{}]},"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":[],"method":"ping"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":null,"result":{}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":5}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"a\\nb"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1}}',
    b'{"dir":"c2s","msg":{}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"error":{"code":-32000.0,"message":"m"}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":5}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"error":"boom"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"error":{"message":"say \\"hi\\""}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"result":{"isError":1,"resultType":5}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"result":[1,2]}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"name":"","uri":"u"}}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"name":0,"uri":"u"}}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"name":[1],"uri":"u"}}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"uri":"u"}}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5,"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{"progressToken":1},"progressToken":{"k":[]}}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x","params":{"a":'
    + b"[" * 300
    + b"]" * 300
    + b"}}}",
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x","params":{'
    + b",".join(b'"k%d":%d' % (i, i) for i in range(40))
    + b"}}}",
    b"\xef\xbb\xbf" + env({"jsonrpc": "2.0", "method": "x"}),
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x","params":{"v":[1,]}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x","params":{"v":tru}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x","params":{"v":NaN}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x","params":{"v":"\x00"}}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x","params":{"v":"\\x"}}}',
    b'[{"dir":"c2s","msg":{"jsonrpc":"2.0","method":"x"}}]',
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
    # the `http` member: of every type, with members of every type and spelling
    b'{"dir":"c2s","http":null,"msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","http":[],"transport":"stdio","msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","http":{},"transport":"other","msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","http":{"method":7,"status":"200","headers":[]},"msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"s2c","http":{"status":200.0},"msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"dir":"s2c","http":{"status":2e2},"msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"dir":"s2c","http":{"status":true},"msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"dir":"s2c","http":{"status":-0},"msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    b'{"dir":"s2c","http":{"status":99999999999999999999},"msg":{"jsonrpc":"2.0","id":1,"result":{}}}',
    rb'{"dir":"c2s","http":{"method":"P\u004fST"},"msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","http":{"headers":{"A": "b"}},"msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","http":{"headers":{"A":"b","A":"c"}},"msg":{"jsonrpc":"2.0","method":"x"}}',
    rb'{"dir":"c2s","http":{"headers":{"A":"\u00e9"}},"msg":{"jsonrpc":"2.0","method":"x"}}',
    rb'{"dir":"c2s","http":{"headers":{"A":"\/"}},"msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","http":{"headers":{"n":1.50}},"msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","http":{"method":"POST","status":200,"headers":{"A":"b"},"extra":[1]},'
    b'"msg":{"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","http":{"method":"POST"},"http":{"status":1},"msg":{"jsonrpc":"2.0","method":"x"}}',
    # the scanner finds a line's end as it scans: a value that goes on past it, blanks
    # and carriage returns before it
    b'{"ts": "2026-08-01T10:00:00Z",\n "dir": "c2s", "msg": {"jsonrpc":"2.0","method":"x"}}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}\n}',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}} \r\t\r',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}\r\r',
    b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}\r',
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r \n\r\n{"jsonrpc":"2.0","id":2,"method":"ping"}',
]


@pytest.mark.parametrize("fmt", ["capture", "stdio"])
def test_edge_cases_match_the_python_path(fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for line in EDGE_LINES:
        _assert_same(fmt, line + b"\n", monkeypatch)
    # and all of them in one chunk, interleaved with fast lines: merged in line order
    common = env(COMMON[3])
    data = b"".join(line + b"\n" + common + b"\n" for line in EDGE_LINES)
    _assert_same(fmt, data, monkeypatch)
    _assert_same(fmt, data.replace(b"\n", b"\r\n"), monkeypatch)
    _assert_same(fmt, data.rstrip(b"\n"), monkeypatch)


@pytest.mark.parametrize(
    "path",
    sorted(
        p
        for d in ("capture", "stdio", "stdio-pair")
        for p in (SAMPLES / d).glob("*")
        if p.is_file()
    ),
    ids=lambda p: p.name,
)
def test_bundled_samples_match_the_python_path(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = "capture" if path.parent.name == "capture" else "stdio"
    if path.suffix not in (".jsonl", ".ndjson", ".log", ".txt"):
        pytest.skip("not a line capture")
    _assert_same(fmt, path.read_bytes(), monkeypatch)


# -- random documents in random spellings ---------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
ids = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.text(max_size=6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.none(),
    st.booleans(),
    json_values,
)
methods = st.sampled_from(
    [
        "initialize",
        "tools/call",
        "prompts/get",
        "resources/read",
        "completion/complete",
        "notifications/progress",
        "notifications/cancelled",
        "ping",
    ]
) | st.text(max_size=6)
params = st.fixed_dictionaries(
    {},
    optional={
        "name": json_values,
        "uri": json_values,
        "ref": st.fixed_dictionaries({}, optional={"name": json_values, "uri": json_values}),
        "_meta": st.fixed_dictionaries(
            {},
            optional={
                "progressToken": ids,
                "io.modelcontextprotocol/protocolVersion": json_values,
            },
        ),
        "protocolVersion": json_values,
        "progressToken": ids,
        "requestId": ids,
        "extra": json_values,
    },
)
messages = st.one_of(
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "method": methods},
        optional={"id": ids, "params": params | json_values},
    ),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": ids,
            "result": json_values
            | st.fixed_dictionaries(
                {},
                optional={
                    "resultType": json_values,
                    "isError": json_values,
                    "protocolVersion": json_values,
                    "serverInfo": json_values,
                    "content": json_values,
                },
            ),
        },
    ),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "id": ids,
            "error": json_values
            | st.fixed_dictionaries(
                {}, optional={"code": ids, "message": json_values, "data": json_values}
            ),
        },
    ),
    json_values,
)
times = st.one_of(
    st.none(),
    st.datetimes().map(lambda d: d.isoformat() + "Z"),
    st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S") + "+05:30"),
    # without a zone: read as a local wall-clock time
    st.datetimes().map(lambda d: d.isoformat()),
    st.sampled_from(
        [
            "2026-08-01T10:00:00Z",
            "2026-08-01 10:00:00.25",
            "2026-08-01T10:00:00.5-01:00",
            "2026-08-01T10:00:00.123456789Z",
            "bogus",
            "",
        ]
    ),
)
envelopes = st.fixed_dictionaries(
    {"dir": st.sampled_from(["c2s", "s2c", "stderr", "x"]), "msg": messages},
    optional={
        "ts": times,
        "session": st.text(max_size=4) | st.none(),
        "server": json_values,
        "transport": st.sampled_from(["stdio", "http", "other"]) | json_values,
        # the HTTP exchange of a Streamable HTTP line, well formed or not
        "http": st.fixed_dictionaries(
            {},
            optional={
                "method": st.sampled_from(["POST", "GET", "DELETE"]) | json_values,
                "status": st.sampled_from([200, 202, 404]) | json_values,
                "headers": st.dictionaries(
                    st.sampled_from(["Accept", "Mcp-Session-Id", "mcp-method", "X"])
                    | st.text(max_size=4),
                    st.text(max_size=6) | json_values,
                    max_size=4,
                )
                | json_values,
            },
        )
        | json_values,
    },
)
#: byte strings spliced into a line at a random place: most break it, some keep it valid
#: but spelt differently from orjson's output
splices = st.sampled_from(
    [
        b" ",
        b"\t",
        b"\\u0041",
        b"\\/",
        b"\\u001F",
        b"\xff",
        b"\xc3\xa9",
        b'"',
        b",",
        b"}",
        b"\x00",
        b"1e5",
        b"-0",
        b".0",
        b"\\ud800",
        b"\n",
        b"\r",
        b" \r",
    ]
)


#: documents, each with the spelling style of :func:`spell`
spelled_docs = st.lists(st.tuples(envelopes, st.integers(0, 2)), min_size=1, max_size=6)
#: (line, position, splice) edits for :func:`_spliced`
mutations_of_lines = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 10_000), splices), max_size=3
)


def _spliced(lines: list[bytes], mutations: list[tuple[int, int, bytes]]) -> bytes:
    """The lines with each splice inserted (line index, offset, bytes), as one chunk."""
    for which, where, splice in mutations:
        i = which % len(lines)
        at = where % (len(lines[i]) + 1)
        lines[i] = lines[i][:at] + splice + lines[i][at:]
    return b"\n".join(lines) + b"\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=spelled_docs,
    mutations=mutations_of_lines,
)
def test_random_captures_match_the_python_path(
    docs: list[tuple[dict[str, object], int]], mutations: list[tuple[int, int, bytes]]
) -> None:
    data = _spliced([spell(doc, style) for doc, style in docs], mutations)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _assert_same("capture", data, monkeypatch)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(st.tuples(messages, st.integers(0, 2)), min_size=1, max_size=6),
    mutations=mutations_of_lines,
)
def test_random_stdio_streams_match_the_python_path(
    docs: list[tuple[object, int]], mutations: list[tuple[int, int, bytes]]
) -> None:
    data = _spliced([spell(doc, style) for doc, style in docs], mutations)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _assert_same("stdio", data, monkeypatch)


@settings(max_examples=100, deadline=None)
@given(docs=st.lists(messages.filter(lambda m: isinstance(m, dict)), min_size=1, max_size=5))
def test_orjson_written_messages_are_mostly_taken(docs: list[dict[str, object]]) -> None:
    """orjson's own output is canonical: the scanner declines such a line only for a reason
    the Python path must word (not JSON-RPC, an escaped value, a shape left to Python)."""
    data = b"".join(env(doc) + b"\n" for doc in docs)
    slow = {line for line, _, _ in _slow_lines("capture", data)}
    for line, doc in enumerate(docs, 1):
        simple = (
            isinstance(doc.get("method"), str)
            and doc.get("method") != "completion/complete"  # ref.name truthiness: Python's
            and not _has_float_or_big_int(doc)
            and "\\" not in spell(doc, 0).decode()
        )
        if simple:
            assert line not in slow, orjson.dumps(doc)


def _has_float_or_big_int(value: object) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) >= 10**17
    if isinstance(value, dict):
        return len(value) > 32 or any(_has_float_or_big_int(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_float_or_big_int(v) for v in value)
    return False


# -- threads over chunks: same trace as one pass -----------------------------------------------


@pytest.mark.parametrize("fmt", ["capture", "stdio"])
def test_threaded_chunks_match_a_single_pass(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks the scanner reads itself, on threads, give the rows of one pure-Python pass."""
    if fmt == "capture":
        lines = [env(m, session=f"s{i % 3}") for i in range(40) for m in COMMON]
    else:
        lines = [orjson.dumps(m) for _ in range(40) for m in COMMON]
    lines[17] = b"garbage"
    lines[300] = b""
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    module = FORMATS[fmt]
    ctx = LoadContext(source=str(path), tz=None)
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(chunked, "SCANNER_CHUNK_BYTES", 4096)
    threaded = chunked.load_path(module, str(path), ctx, parallel=True)  # type: ignore[arg-type]
    monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1")
    single = chunked.load_path(module, str(path), ctx, parallel=False)  # type: ignore[arg-type]
    assert threaded.lines == single.lines == len(lines)
    assert_frame_equal(threaded.messages, single.messages)
    assert threaded.messages["line"].to_list() == list(range(1, len(lines) + 1))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=spelled_docs,
    mutations=mutations_of_lines,
    picks=st.lists(st.integers(0, 2), min_size=6, max_size=6),
)
def test_selected_lines_give_the_rows_of_those_lines(
    docs: list[tuple[dict[str, object], int]],
    mutations: list[tuple[int, int, bytes]],
    picks: list[int],
) -> None:
    """Scanning with a line selector (how a share of a big capture is loaded) gives
    exactly the rows of the selected lines, with the scanner and without it."""
    data = _spliced([spell(doc, style) for doc, style in docs], mutations)
    select = bytes(picks[: len(data.split(b"\n")) - 1])
    ctx = LoadContext(source="t.jsonl", tz=None)
    whole = FORMATS["capture"].parse_chunk(data, 7, ctx)  # type: ignore[attr-defined]
    chosen = [7 + i for i, p in enumerate(select) if p == 1]
    expected = whole.filter(pl.col("line").is_in(chosen))
    with pytest.MonkeyPatch.context() as monkeypatch:
        for pure in ("0", "1"):
            monkeypatch.setenv("MCPTRACE_PURE_PYTHON", pure)
            got = FORMATS["capture"].parse_chunk(data, 7, ctx, select=select, wanted=1)  # type: ignore[attr-defined]
            assert_frame_equal(got, expected)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=spelled_docs,
    mutations=mutations_of_lines,
)
def test_light_session_pass_agrees_with_the_loader(
    docs: list[tuple[dict[str, object], int]], mutations: list[tuple[int, int, bytes]]
) -> None:
    """Where the light pass, exact or quick, is sure and the line is valid JSON (naming
    its session once: see test_quick_light_pass_reads_a_whole_line_up_to_its_message),
    it reads the session the loader reads. (On lines orjson rejects it may be wrong:
    loading a share checks every row and gives up, see test_shares.)"""
    data = _spliced([spell(doc, style) for doc, style in docs], mutations)
    lines = data.split(b"\n")[:-1]
    for quick in (False, True):
        _agrees(accel.sessions(data, quick), lines)


def _agrees(passed: tuple[bytes, bytes], lines: list[bytes]) -> None:
    from mcptrace.loaders.partition import own_session

    states, hashes = passed
    assert len(states) == len(lines) and len(hashes) == 8 * len(lines)
    for i, line in enumerate(lines):
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        session = own_session(line)
        if states[i] == 0:
            assert session is None, line
        elif states[i] == 1:
            assert session is not None, line
            assert int.from_bytes(hashes[8 * i : 8 * i + 8], sys.byteorder) == (
                accel.session_hash(session)
            ), line


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=64)
    | st.lists(st.sampled_from([b"a", b"\n", b"\r", b"{}"])).map(b"".join)
)
def test_line_count_without_the_gil_counts_as_split_lines_cuts(data: bytes) -> None:
    expected = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    assert accel.lines(data) == expected
    assert chunked.line_count(data) == expected


# -- chunks read by the scanner: its columns keep them instead of a copy ----------------


@pytest.mark.skipif(not hasattr(accel._scan, "read"), reason="no pread on this platform")
def test_read_chunk_gives_the_files_bytes_read_only(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"0123456789" * 10)
    with open(path, "rb") as f:
        middle = accel.read(f.fileno(), 5, 20)
        past_the_end = accel.read(f.fileno(), 90, 50)
        empty = accel.read(f.fileno(), 200, 10)
    assert middle is not None and past_the_end is not None and empty is not None
    assert bytes(middle) == (b"0123456789" * 10)[5:25]
    assert bytes(past_the_end) == b"0123456789"  # the file ends first: fewer bytes
    assert bytes(empty) == b""
    assert middle.readonly
    with pytest.raises(TypeError):
        middle[0] = 1  # type: ignore[index]
    with pytest.raises(OSError):
        accel.read(-1, 0, 10)


def _lines_of(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@pytest.mark.skipif(not hasattr(accel._scan, "read"), reason="no pread on this platform")
@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"\n", b"\r", b"{}", b"x" * 40])).map(b"".join),
    start=st.integers(0, 3),
)
def test_a_read_chunk_has_its_lines_counted_as_its_bytes(data: bytes, start: int) -> None:
    """read() counts the lines of what it reads, for scan() and lines() to skip a pass
    of their own: the count must be that of the bytes, also of a part of the chunk."""
    import tempfile

    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        chunk = accel.read(f.fileno(), start, len(data))
    assert chunk is not None
    got = bytes(chunk)
    assert accel.lines(chunk) == accel.lines(got) == _lines_of(got)
    assert accel.lines(chunk[1:]) == _lines_of(got[1:])
    assert accel._scan.scan(chunk, 1, accel._scan.CAPTURE)[1] == _lines_of(got)


@pytest.mark.skipif(not hasattr(accel._scan, "read"), reason="no pread on this platform")
def test_a_chunk_read_in_blocks_has_its_lines_counted(tmp_path: Path) -> None:
    """Lines across read()'s 1 MiB blocks, and a last line without its newline."""
    path = tmp_path / "c.jsonl"
    data = b"".join(b"%d\n" % i + b"y" * (i % 97) for i in range(60_000))
    assert len(data) > 3 << 20 and not data.endswith(b"\n")
    path.write_bytes(data)
    with open(path, "rb") as f:
        chunk = accel.read(f.fileno(), 0, len(data))
        tail = accel.read(f.fileno(), (1 << 20) - 5, 1 << 20)
    assert chunk is not None and tail is not None
    assert accel.lines(chunk) == _lines_of(data)
    assert accel.lines(tail) == _lines_of(data[(1 << 20) - 5 : (2 << 20) - 5])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=spelled_docs,
    mutations=mutations_of_lines,
)
def test_a_chunk_read_from_the_file_scans_as_its_bytes(
    docs: list[tuple[dict[str, object], int]], mutations: list[tuple[int, int, bytes]]
) -> None:
    """Rows scanned from a chunk the scanner read itself (and keeps, uncopied) are those
    of the same bytes given as ``bytes``, slow lines (sliced from the chunk) included."""
    import tempfile

    data = _spliced([spell(doc, style) for doc, style in docs], mutations)
    ctx = LoadContext(source="t.jsonl", tz=None)
    expected = FORMATS["capture"].parse_chunk(data, 3, ctx)  # type: ignore[attr-defined]
    with tempfile.TemporaryFile() as f:
        f.write(b"xx" + data)
        f.flush()
        chunk = accel.read(f.fileno(), 2, len(data))
    assert chunk is not None
    got = FORMATS["capture"].parse_chunk(chunk, 3, ctx)  # type: ignore[attr-defined]
    assert_frame_equal(got, expected)


def test_columns_outlive_the_chunk_and_the_file(tmp_path: Path) -> None:
    """The text columns point into the chunk the scanner read: they keep it alive after
    the chunk object, the file and the loader's frames are gone."""
    import gc

    path = tmp_path / "c.jsonl"
    lines = [env(m, session="s") for m in COMMON]
    path.write_bytes(b"\n".join(lines) + b"\n")
    module = FORMATS["capture"]
    span = chunked.Span(0, path.stat().st_size, 1)
    data = chunked.read_chunk(module, str(path), span)  # type: ignore[arg-type]
    frame = module.parse_chunk(data, 1, LoadContext(source=str(path), tz=None))  # type: ignore[attr-defined]
    raw = frame["raw"].filter(frame["raw"].str.len_bytes() > 12)
    del data, frame
    path.unlink()
    gc.collect()
    assert raw.to_list() == [line.decode() for line in lines if len(line) > 12]


def test_a_byte_order_mark_is_dropped_from_a_chunk_the_scanner_reads(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    lines = [env(m, session="s") for m in COMMON]
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n")
    module = FORMATS["capture"]
    span = chunked.Span(0, path.stat().st_size, 1)
    data = chunked.read_chunk(module, str(path), span)  # type: ignore[arg-type]
    assert bytes(data) == chunked.read_span(str(path), span) == b"\n".join(lines) + b"\n"


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from(['\\"', "\\\\", "{", "}", "[", "]", '"', "x" * 7, "\\n", "é", ","]),
        max_size=40,
    ),
    pad=st.integers(0, 70),
    nested=st.integers(0, 3),
    after=st.booleans(),
)
def test_light_pass_skips_long_messages_block_by_block(
    pieces: list[str], pad: int, nested: int, after: bool
) -> None:
    """The light pass skips `msg` 64 bytes at a time: escapes, quotes and brackets inside
    strings, at every offset and across block edges, must not change the session it
    reads, nor hide a session member written after `msg`."""
    text = "".join(pieces)
    value: object = {"jsonrpc": "2.0", "method": "x", "params": {"p" * pad: text, "q": [text]}}
    for _ in range(nested):
        value = {"a": [value, text]}
    record = {"ts": "t", "session": "before", "msg": value}
    if after:
        record["session"] = "after"  # moved last: read after skipping msg
        record = {"ts": "t", "msg": value, "session": "after"}
    line = orjson.dumps(record)
    states, hashes = accel.sessions(line + b"\n")
    assert states[0] == 1
    assert int.from_bytes(hashes[:8], sys.byteorder) == accel.session_hash(
        "after" if after else "before"
    )


def test_quick_light_pass_reads_a_whole_line_up_to_its_message() -> None:
    """Once a line that looks whole has given its session, the quick light pass does not
    follow `msg` through: a session named again after it, or a line broken inside it,
    is misread (loading a share catches both and plans again exactly, see test_shares).
    A line without its newline (one still being written) is followed to its end, as
    every line is by the exact pass."""
    from mcptrace.loaders.partition import own_session

    twice = b'{"session":"a","msg":{"id":1},"session":"b"}'
    broken = b'{"session":"a","msg":{"id":{}}'
    data = twice + b"\n" + broken + b"\n" + broken
    states, hashes = accel.sessions(data, quick=True)
    assert list(states) == [1, 1, 2]
    assert hashes[:8] == hashes[8:16] == accel.session_hash("a").to_bytes(8, sys.byteorder)
    assert own_session(twice) == "b" and own_session(broken) is None
    # the exact pass: the last session member; the broken lines left to the Python path
    exact, exact_hashes = accel.sessions(data)
    assert list(exact) == [1, 2, 2]
    assert exact_hashes[:8] == accel.session_hash("b").to_bytes(8, sys.byteorder)
    # not ending in a brace (cut inside a string, say): followed through
    states, _ = accel.sessions(b'{"session":"a","msg":{"id":"x\n', quick=True)
    assert list(states) == [2]
    # a well-formed line reads alike either way
    line = b'{"ts":"t","session":"s","msg":{"jsonrpc":"2.0","method":"ping"}}\n'
    assert accel.sessions(line, quick=True) == accel.sessions(line)


_LIGHT_PASS_OF_FILE = """
import pathlib, sys
from mcptrace.loaders import accel
states, hashes = accel.sessions(pathlib.Path(sys.argv[1]).read_bytes())
pathlib.Path(sys.argv[2]).write_bytes(states + hashes)
"""


def test_light_pass_reads_the_same_with_and_without_avx2(tmp_path: Path) -> None:
    """The light pass skips containers with AVX2 where the processor has it and SSE2 (or
    bytes) elsewhere: both read every line alike. Lines with long strings, escapes,
    nesting and damage, so that whole vectors and their edges are crossed."""
    import random
    import subprocess

    rng = random.Random(11)
    pieces = [b'"', b"\\", b"{", b"}", b"[", b"]", b'\\"', b",", b":", b"\n", b"x" * 70]
    lines = []
    for sample in sorted(Path("sample_traces/capture").glob("*.jsonl")):
        for line in sample.read_bytes().splitlines():
            lines.append(line)
            for _ in range(3):
                cut = rng.randrange(len(line) + 1)
                lines.append(line[:cut] + rng.choice(pieces) + line[cut:])
    nested = b'{"session":"s","msg":{"a":[' + b'{"k":"' + b"\\\\" * 40 + b'"},' * 30 + b"1]}}"
    lines += [nested, nested[:-3], b'{"msg":"' + b"y" * 200 + b'","session":"late"}']
    data = tmp_path / "lines.jsonl"
    data.write_bytes(b"\n".join(lines) + b"\n")
    outputs = []
    for no_avx2 in ("0", "1"):
        out = tmp_path / f"light-{no_avx2}.bin"
        env = {**os.environ, "MCPTRACE_NO_AVX2": no_avx2}
        subprocess.run(
            [sys.executable, "-c", _LIGHT_PASS_OF_FILE, str(data), str(out)], check=True, env=env
        )
        outputs.append(out.read_bytes())
    states, hashes = accel.sessions(data.read_bytes())
    assert outputs[0] == outputs[1] == states + hashes
    assert len(states) == data.read_bytes().count(b"\n") and 0 < states.count(1) < len(states)


# -- text blocks kept for the next share's load ------------------------------------------


@pytest.mark.skipif(
    not hasattr(accel._scan, "read") or not sys.platform.startswith("linux"),
    reason="text blocks are kept on Linux only",
)
def test_freed_text_is_kept_only_while_asked_and_refills_to_any_size(tmp_path: Path) -> None:
    """A text block freed while keep_freed is on is kept (and not otherwise), the next
    read takes it whether it needs less (the rest is given back) or more (it grows),
    and the bytes read into it are the file's."""
    size = 1 << 20  # blocks this big are mapped, not taken from the heap
    data = bytes(range(256)) * (size // 256 * 2)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert accel.drop_kept() == 0

    def read(length: int) -> memoryview:
        with open(path, "rb") as f:
            chunk = accel.read(f.fileno(), 0, length)
        assert chunk is not None
        return chunk

    def freed_while_kept(length: int) -> None:
        accel.keep_freed(True)
        try:
            chunk = read(length)
            del chunk
        finally:
            accel.keep_freed(False)

    chunk = read(size)
    del chunk
    assert accel.drop_kept() == 0  # freed while not asked: given back at once

    freed_while_kept(size)
    smaller = read(size // 2)  # takes the kept block: nothing is left to drop
    assert accel.drop_kept() == 0
    assert bytes(smaller) == data[: size // 2]
    del smaller
    assert accel.drop_kept() == 0  # keeping is off again

    freed_while_kept(size // 2)
    bigger = read(2 * size)  # takes the kept block, grown
    assert accel.drop_kept() == 0
    assert bytes(bigger) == data[: 2 * size]
    del bigger

    freed_while_kept(size)
    assert accel.drop_kept() >= size
    assert accel.drop_kept() == 0


@pytest.mark.skipif(
    not hasattr(accel._scan, "read") or not sys.platform.startswith("linux"),
    reason="blocks are kept on Linux only",
)
def test_kept_column_blocks_come_back_zeroed_for_other_columns_nulls() -> None:
    """A share's column blocks are kept for the next share's columns: a column full in
    the first (every request has a method) and mostly null in the second (responses)
    reads as if its block were fresh."""
    import orjson as json

    ctx = LoadContext(source="kept.jsonl")
    parse = FORMATS["capture"].parse_chunk  # type: ignore[attr-defined]

    def lines(make: Callable[[int], dict[str, object]]) -> bytes:
        return b"".join(
            json.dumps({"ts": "2026-01-01T00:00:00Z", "dir": "c2s", "session": "s", "msg": make(i)})
            + b"\n"
            for i in range(20_000)
        )

    requests = lines(lambda i: {"jsonrpc": "2.0", "id": i, "method": f"tools/call-{i}"})
    responses = lines(lambda i: {"jsonrpc": "2.0", "id": i, "result": {"n": i}})
    fresh = parse(responses, 1, ctx)
    assert accel.drop_kept() == 0
    accel.keep_freed(True)
    try:
        first = parse(requests, 1, ctx)
        assert first["method"].null_count() == 0
        del first
    finally:
        accel.keep_freed(False)
    columns = accel.kept(text=False)
    assert columns > 20_000 * 16  # the views of full columns, at least
    again = parse(responses, 1, ctx)  # takes the kept blocks
    assert accel.kept(text=False) < columns
    accel.drop_kept()
    assert again["method"].null_count() == again.height
    assert_frame_equal(again, fresh)


# -- file text mapped, guarded against a cut file ----------------------------------------

needs_mapping = pytest.mark.skipif(
    not hasattr(accel._scan, "map"), reason="files are mapped on Linux only"
)


def _run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter: a guard that fails kills that one, not the tests."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_mapping
def test_a_mapped_file_gives_its_bytes_as_read_does(tmp_path: Path) -> None:
    data = b'{"a": 1}\n' * 5000 + b"last line without a newline"
    path = tmp_path / "m.jsonl"
    path.write_bytes(data)
    with open(path, "rb") as f:
        whole = accel.map_file(f.fileno(), 0, len(data))
        middle = accel.map_file(f.fileno(), 4097, 10_000)  # not at a page boundary
        past_the_end = accel.map_file(f.fileno(), len(data) - 5, 50)
        read = accel.read(f.fileno(), 4097, 10_000)
    assert whole is not None and middle is not None and past_the_end is not None
    assert bytes(whole) == data and bytes(middle) == data[4097:14097] == bytes(read or b"")
    assert bytes(past_the_end) == data[-5:]  # the file ends first: fewer bytes
    assert whole.readonly
    assert accel.lines(whole) == data.count(b"\n") + 1
    # the scanner takes a mapped chunk as it takes a read one
    assert accel._scan.scan(middle, 1, accel._scan.CAPTURE)[1] == _lines_of(data[4097:14097])


@needs_mapping
def test_pages_cut_from_a_mapped_file_read_as_zeros_and_are_counted(tmp_path: Path) -> None:
    """A log truncated by its rotation while its mapped text is read: the reader gets
    zeros where the cut pages were, and the cut is counted, where the process used to
    be killed by SIGBUS."""
    code = """
import os, sys
from mcptrace.loaders import accel
path, page = sys.argv[1], os.sysconf("SC_PAGE_SIZE")
data = bytes(range(1, 256)) * (4 * page // 255 + 1)
data = data[: 4 * page]
with open(path, "wb") as f:
    f.write(data)
with open(path, "rb") as f:
    chunk = accel.map_file(f.fileno(), 0, len(data))
before = accel.cut_faults()
os.truncate(path, page + 10)  # the second page is cut in the middle: it stays
got = bytes(chunk)
assert got[: 2 * page] == data[: page + 10] + bytes(page - 10), "the kept pages"
assert got[2 * page :] == bytes(2 * page), "the cut pages read as zeros"
assert accel.cut_faults() - before == 2, accel.cut_faults() - before
print("read on")
"""
    done = _run_python(code, str(tmp_path / "cut.jsonl"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "read on"


@needs_mapping
def test_a_sigbus_not_from_a_mapped_file_goes_where_it_went_before(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(b"{}\n" * 10_000)
    mapped = """
import os, signal, sys
from mcptrace.loaders import accel
with open(sys.argv[1], "rb") as f:
    chunk = accel.map_file(f.fileno(), 0, 30_000)
assert chunk is not None  # the guard is in place
"""
    # to the program's own handler
    handled = _run_python(
        'import signal; signal.signal(signal.SIGBUS, lambda *_: print("its own handler"))\n'
        + mapped
        + "os.kill(os.getpid(), signal.SIGBUS)\n",
        str(path),
    )
    assert handled.returncode == 0, handled.stderr
    assert handled.stdout.strip() == "its own handler"
    # or, with none, the default: the process is killed
    killed = _run_python(
        mapped + "os.kill(os.getpid(), signal.SIGBUS)\nprint('alive')\n", str(path)
    )
    assert killed.returncode == -signal.SIGBUS and "alive" not in killed.stdout


# -- whole numbers between bytes and columns -----------------------------------------------


@given(values=st.lists(st.integers(0, 255), max_size=300), cut=st.integers(0, 5))
def test_bytes_become_a_column_and_back(values: list[int], cut: int) -> None:
    column = accel.numbers(bytes(values), 1)
    assert column.dtype == pl.UInt8 and column.to_list() == values
    assert accel.bytes_of(column) == bytes(values)
    # several chunks and an offset into the first
    chunked = pl.concat([column, column], rechunk=False).slice(cut)
    assert accel.bytes_of(chunked) == (bytes(values) * 2)[cut:]


@given(values=st.lists(st.integers(0, 2**64 - 1), max_size=100))
def test_eight_byte_numbers_become_a_column(values: list[int]) -> None:
    data = b"".join(v.to_bytes(8, sys.byteorder) for v in values)
    column = accel.numbers(data, 8)
    assert column.dtype == pl.UInt64 and column.to_list() == values


def test_only_bytes_come_out_of_a_byte_column() -> None:
    with pytest.raises(ValueError, match="nulls"):
        accel.bytes_of(pl.Series([1, None], dtype=pl.UInt8))
    with pytest.raises(ValueError, match="8-bit"):
        accel.bytes_of(pl.Series([1, 2], dtype=pl.Int64))
    with pytest.raises(ValueError, match="width"):
        accel.numbers(b"123", 8)
