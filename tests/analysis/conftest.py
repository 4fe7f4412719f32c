"""A factory of captures made of calls with chosen latencies, outcomes and times.

Tests describe calls as keyword dicts (the fields of :class:`Call`), since a test
module cannot import this conftest by name:

    trace = make_trace([{"method": "tools/call", "target": "a", "ms": 12.5, "at": 3}])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from factories import WriteLines, err, note, rec, req, res, ts

import mcptrace
from mcptrace.trace import Trace


@dataclass
class Call:
    """One request and what became of it.

    ``at`` is the request time in seconds after 2026-08-01T10:00:00Z (None: no
    timestamps in the capture), ``ms`` the latency; ``outcome`` one of ok, error,
    tool_error, unanswered, cancelled (cancelled ``cancel_after`` seconds later).
    """

    method: str
    ms: float = 10.0
    target: str | None = None
    at: float | None = 0.0
    outcome: str = "ok"
    code: int = -32603
    session: str = "s1"
    dir: str = "c2s"
    server: str | None = None
    http: int | None = None
    cancel_after: float = 0.5
    extra: dict[str, Any] = field(default_factory=dict)


_TARGET_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_BACK = {"c2s": "s2c", "s2c": "c2s"}


def capture_records(
    specs: Sequence[dict[str, Any]], *, revisions: dict[str, str] | None = None, clients: Any = None
) -> list[dict[str, Any]]:
    """Capture records for ``calls``, in time order (line order when untimed)."""
    timed: list[tuple[float, int, dict[str, Any]]] = []
    order = 0

    def add(at: float | None, record: dict[str, Any]) -> None:
        nonlocal order
        timed.append((at if at is not None else 0.0, order, record))
        order += 1

    ids: dict[tuple[str, str], int] = {}
    for session, revision in (revisions or {}).items():
        client = (clients or {}).get(session, "host")
        init = req(
            0,
            "initialize",
            {
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1"},
            },
        )
        reply = res(
            0,
            {
                "protocolVersion": revision,
                "capabilities": {},
                "serverInfo": {"name": "srv", "version": "1"},
            },
        )
        add(-2.0, rec(init, session=session, ts="2026-08-01T09:59:58Z"))
        add(-1.0, rec(reply, dir="s2c", session=session, ts="2026-08-01T09:59:59Z"))
        ids[(session, "c2s")] = 1
    for c in (Call(**spec) for spec in specs):
        key = (c.session, c.dir)
        rid = ids.get(key, 1)
        ids[key] = rid + 1
        params: dict[str, Any] | None = None
        if c.target is not None:
            params = {_TARGET_PARAM.get(c.method, "uri"): c.target}
        stamp = None if c.at is None else ts(c.at)
        extra: dict[str, Any] = {} if c.server is None else {"server": c.server}
        add(c.at, rec(req(rid, c.method, params), dir=c.dir, session=c.session, ts=stamp, **extra))
        back = _BACK[c.dir]
        end = None if c.at is None else c.at + c.ms / 1000
        end_stamp = None if end is None else ts(end)
        http = {} if c.http is None else {"http": {"status": c.http}}
        if c.outcome == "ok":
            msg = res(rid)
        elif c.outcome == "tool_error":
            msg = res(rid, {"content": [], "isError": True})
        elif c.outcome == "error":
            msg = err(rid, c.code)
        elif c.outcome == "cancelled":
            cancel = note("notifications/cancelled", {"requestId": rid})
            when = None if c.at is None else c.at + c.cancel_after
            add(
                when,
                rec(cancel, dir=c.dir, session=c.session, ts=None if when is None else ts(when)),
            )
            continue
        elif c.outcome == "unanswered":
            if c.http is not None:
                # a request the server refused without a JSON-RPC body: status on its row
                timed[-1][2]["http"] = {"status": c.http}
            continue
        else:
            raise ValueError(c.outcome)
        add(end, rec(msg, dir=back, session=c.session, ts=end_stamp, **extra, **http))
    timed.sort(key=lambda t: (t[0], t[1]))
    return [r for _, _, r in timed]


MakeTrace = Callable[..., Trace]
CaptureFile = Callable[..., Path]


@pytest.fixture
def capture_file(write_lines: WriteLines) -> CaptureFile:
    """``capture_file(calls, revisions={"s1": "2025-11-25"})`` -> the path of a capture."""

    def make(calls: Sequence[dict[str, Any]], **kwargs: Any) -> Path:
        return write_lines(capture_records(calls, **kwargs))

    return make


@pytest.fixture
def make_trace(capture_file: CaptureFile) -> MakeTrace:
    """``make_trace(calls, revisions={"s1": "2025-11-25"})`` -> a loaded Trace."""

    def make(calls: Sequence[dict[str, Any]], **kwargs: Any) -> Trace:
        return mcptrace.load(capture_file(calls, **kwargs))

    return make
