"""Test factories: tiny captures built inline, the way each test needs them."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_traces"
SHARED_SPEC = ROOT.parent / "shared" / "spec"


def rec(
    msg: Any,
    *,
    dir: str = "c2s",
    session: str = "s1",
    ts: str | None = "2026-08-01T10:00:00Z",
    **extra: Any,
) -> dict[str, Any]:
    """One mcptrace capture record."""
    out: dict[str, Any] = {"dir": dir, "session": session, "msg": msg}
    if ts is not None:
        out["ts"] = ts
    out.update(extra)
    return out


def req(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        m["params"] = params
    return m


def res(id: Any, result: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result if result is not None else {}}


def err(id: Any, code: Any = -32603, message: str = "boom") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def note(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        m["params"] = params
    return m


def initialize(
    version: str,
    *,
    id: Any = 0,
    client: tuple[str, str] = ("agent", "1.0"),
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A legacy ``initialize`` request proposing ``version``."""
    name, client_version = client
    return req(
        id,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": capabilities if capabilities is not None else {},
            "clientInfo": {"name": name, "version": client_version},
        },
    )


def initialize_result(
    version: str,
    *,
    id: Any = 0,
    server: tuple[str, str] = ("srv", "1.0"),
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The answer to :func:`initialize`: ``version`` agreed, ``capabilities`` (tools by
    default) and the server's name and version."""
    name, server_version = server
    return res(
        id,
        {
            "protocolVersion": version,
            "capabilities": capabilities if capabilities is not None else {"tools": {}},
            "serverInfo": {"name": name, "version": server_version},
        },
    )


def ts(seconds: float) -> str:
    """An RFC 3339 UTC time ``seconds`` after 2026-08-01T10:00:00Z."""
    whole = int(seconds)
    micros = round((seconds - whole) * 1_000_000)
    return f"2026-08-01T10:{whole // 60:02d}:{whole % 60:02d}.{micros:06d}Z"


WriteLines = Callable[..., Path]


def _benchmark_module(name: str, filename: str) -> ModuleType:
    """``benchmarks/<filename>`` as a module (benchmarks is not a package), registered
    in ``sys.modules`` under a private name because its dataclasses need their module
    to be importable."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / filename)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_generator() -> ModuleType:
    """``benchmarks/generate.py`` as a module."""
    return _benchmark_module("mcptrace_bench_generate", "generate.py")


def load_injector() -> ModuleType:
    """``benchmarks/inject.py`` as a module (it reuses the generator module loaded under
    its private name)."""
    load_generator()
    return _benchmark_module("mcptrace_bench_inject", "inject.py")


def share_every_group(monkeypatch: Any, count: int) -> None:
    """Make the linter share every group of files, however small, in ``count`` shares
    (it leaves groups under 64 MiB whole): ``monkeypatch`` is pytest's fixture."""
    from mcptrace.linter import groups, shares

    monkeypatch.setattr(groups, "MIN_SHARED_BYTES", 0)
    monkeypatch.setattr(shares, "MIN_SHARED_BYTES", 0)
    monkeypatch.setattr(shares, "shares_for", lambda size, lines: count)


def with_batches(lines: list[bytes], every: int = 37) -> list[bytes]:
    """``lines`` with every ``every``-th request made a batch of three: itself twice
    (the same id in flight twice) and once as JSON-RPC 1.0, so that rows after a line's
    first draw findings."""
    out = []
    for i, line in enumerate(lines):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        msg = record.get("msg") if isinstance(record, dict) else None
        if i % every == 0 and isinstance(msg, dict) and "method" in msg and "id" in msg:
            record["msg"] = [msg, msg, {**msg, "jsonrpc": "1.0"}]  # type: ignore[index]
            out.append(orjson.dumps(record) + b"\n")
        else:
            out.append(line)
    return out
