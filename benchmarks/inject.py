"""Seeded injection of labelled spec violations into a generated capture.

    python benchmarks/inject.py IN OUT --seed 0 [--kinds null-request-id,batch-in-legacy]

:func:`inject_violations` reads a clean capture written by ``generate.py``, gives
each requested kind of violation a session of its own (chosen at random among the
sessions that have what the kind needs), rewrites or inserts a handful of lines of
that session, and writes the result. It returns one :class:`Label` per rule that
must fire: the kind, the rule code and the exact 1-based line of the output the
finding points at, plus the session. Sessions no kind touched are listed on the
result (``.untouched``), so a test can demand that they stay free of errors.

Rules of the game:

* one kind, one session: a session is never given two kinds, so findings can be
  told apart, and every other session stays as the generator wrote it;
* each injection is local: at most a few lines of its session are rewritten,
  inserted or deleted, and inserted lines take the timestamp of the line they
  follow (or a later one, when a rule needs time to pass), so the capture stays in
  timestamp order;
* where no session has what a kind needs (a revision, a transport, a multi
  round-trip exchange ...), a tiny clean session is generated with the generator's
  own session model and merged into the capture by timestamp, and the violation is
  injected there; where a kind needs context the generator never produces (a 2026
  server declaring ``logging``), the injection adds that context too;
* everything is drawn from ``random.Random(seed)``: one seed, one output.

Each kind lists the codes it labels. A kind labels a second code only where the
violation cannot exist without it; the kind's note says why. ``--list`` prints
the kinds. This file is a script like ``generate.py``, not part of ``mcptrace``.
"""

from __future__ import annotations

import argparse
import bisect
import calendar
import importlib.util
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from random import Random
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson


def _sibling(name: str) -> ModuleType:
    """``benchmarks/<name>.py``, whether this file runs as a script or was loaded by path.

    Tests load the benchmark scripts by path under private names (``benchmarks`` is not
    a package); the generator's private name is shared with ``tests/factories.py``.
    """
    path = Path(__file__).resolve().with_name(f"{name}.py")
    private = f"mcptrace_bench_{name}"
    for candidate in (name, private):
        module = sys.modules.get(candidate)
        if module is not None and Path(getattr(module, "__file__", "") or "").resolve() == path:
            return module
    spec = importlib.util.spec_from_file_location(private, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[private] = module
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    import generate as gen
else:
    gen = _sibling("generate")

Json = dict[str, Any]

MODERN = gen.MODERN
LEGACY = gen.LEGACY
_PV = gen._PV
_CAPS = gen._CAPS
_SINFO = gen._SINFO
C2S, S2C = "c2s", "s2c"
_FLIP = {C2S: S2C, S2C: C2S}


class Label(NamedTuple):
    """A finding that must appear: rule ``code`` at output ``line`` (1-based)."""

    kind: str
    code: str
    line: int
    session: str


class Injection(list[Label]):
    """The labels, plus which sessions were touched and which were left alone."""

    def __init__(
        self, labels: Iterable[Label], sessions: dict[str, str], untouched: frozenset[str]
    ) -> None:
        super().__init__(labels)
        #: kind -> the session it was injected into
        self.sessions = sessions
        #: sessions of the input capture that no kind touched
        self.untouched = untouched


# ---------------------------------------------------------------------------
# Timestamps (the generator's format: RFC 3339, UTC, microseconds)
# ---------------------------------------------------------------------------


_SECONDS: dict[str, int] = {}


def _us(text: str) -> int:
    sec = _SECONDS.get(text[:19])
    if sec is None:
        sec = _SECONDS[text[:19]] = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    return sec * 1_000_000 + int(text[20:26])


def _ts(us: int) -> str:
    sec, micros = divmod(us, 1_000_000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(sec))}.{micros:06d}Z"


def _key(value: Any) -> bytes:
    """An id or token as JSON text: ``5`` and ``"5"`` stay different."""
    return orjson.dumps(value)


# ---------------------------------------------------------------------------
# The capture: lines, sessions, calls
# ---------------------------------------------------------------------------


@dataclass
class _Line:
    data: bytes  # as read (no newline); rewritten lines are re-serialised from ``rec``
    rec: Json
    us: int


@dataclass
class _Call:
    """A request and what the generator did with it, by base line index."""

    method: str
    direction: str
    id: Any
    request: int
    response: int | None = None
    outcome: str = "unanswered"  # result | error | input_required | unanswered
    token: Any = None
    progress: list[int] = field(default_factory=list)
    cancel: int | None = None
    retry: bool = False  # a 2026 multi round-trip retry (carries inputResponses)


class _View:
    """One session of the capture: its lines (base indices, in order) and its calls."""

    def __init__(self, sid: str, lines: list[_Line], idx: list[int]) -> None:
        self.sid = sid
        self.lines = lines
        self.idx = idx
        first = lines[idx[0]].rec
        self.server: str = first.get("server", "")
        self.transport: str = first.get("transport", "")
        self._plain: dict[tuple[str | None, int], list[_Call]] = {}
        self.modern = any(
            self.msg(i).get("method") == "server/discover"
            or _PV in ((self.msg(i).get("params") or {}).get("_meta") or {})
            for i in idx[:3]
        )

    def msg(self, i: int) -> Json:
        msg: Json = self.lines[i].rec["msg"]
        return msg

    def direction(self, i: int) -> str:
        d: str = self.lines[i].rec["dir"]
        return d

    @cached_property
    def calls(self) -> list[_Call]:
        calls: list[_Call] = []
        open_: dict[tuple[str, bytes], _Call] = {}
        tokens: dict[bytes, _Call] = {}
        for i in self.idx:
            msg, d = self.msg(i), self.direction(i)
            method = msg.get("method")
            if method is not None and "id" in msg:
                params = msg.get("params") or {}
                call = _Call(method, d, msg["id"], i, retry="inputResponses" in params)
                token = (params.get("_meta") or {}).get("progressToken")
                if token is not None:
                    call.token = token
                    tokens[_key(token)] = call
                open_[(d, _key(msg["id"]))] = call
                calls.append(call)
            elif method is None:
                found = open_.pop((_FLIP[d], _key(msg.get("id"))), None)
                if found is not None:
                    found.response = i
                    result = msg.get("result")
                    if "error" in msg:
                        found.outcome = "error"
                    elif isinstance(result, dict) and result.get("resultType") == "input_required":
                        found.outcome = "input_required"
                    else:
                        found.outcome = "result"
            elif method == "notifications/progress":
                owner = tokens.get(_key((msg.get("params") or {}).get("progressToken")))
                if owner is not None:
                    owner.progress.append(i)
            elif method == "notifications/cancelled":
                named = (msg.get("params") or {}).get("requestId")
                for call in reversed(calls):
                    if call.direction == d and _key(call.id) == _key(named):
                        call.cancel = i
                        break
        return calls

    def first(self, method: str, direction: str | None = None) -> int | None:
        for i in self.idx:
            if self.msg(i).get("method") == method and direction in (None, self.direction(i)):
                return i
        return None

    @cached_property
    def handshake_call(self) -> _Call | None:
        """The ``initialize`` (legacy) or ``server/discover`` (2026) call, answered."""
        method = "server/discover" if self.modern else "initialize"
        for call in self.calls:
            if call.method == method and call.outcome == "result":
                return call
        return None

    @cached_property
    def server_caps(self) -> Json:
        call = self.handshake_call
        if call is None or call.response is None:
            return {}
        caps: Json = self.msg(call.response)["result"].get("capabilities") or {}
        return caps

    @cached_property
    def request_meta(self) -> Json:
        """The ``_meta`` of the session's 2026 client requests, without a progress token."""
        for call in self.calls:
            meta = (self.msg(call.request).get("params") or {}).get("_meta")
            if call.direction == C2S and meta and _PV in meta:
                return {k: v for k, v in meta.items() if k != "progressToken"}
        return {_PV: MODERN, _CAPS: {}}

    @cached_property
    def result_meta(self) -> Json:
        for call in self.calls:
            if call.response is not None and call.outcome == "result":
                meta = self.msg(call.response)["result"].get("_meta")
                if meta:
                    return dict(meta)
        return {}

    def plain(self, method: str | None = "tools/call", *, min_gap_us: int = 0) -> list[_Call]:
        """Client calls answered by one plain success result: no progress, no cancel,
        no multi round-trip on either end, answered at least ``min_gap_us`` later."""
        key = (method, min_gap_us)
        cached = self._plain.get(key)
        if cached is not None:
            return cached
        out = self._plain[key] = []
        for call in self.calls:
            if (
                call.direction == C2S
                and (method is None or call.method == method)
                and call.outcome == "result"
                and call.response is not None
                and call.token is None
                and call.cancel is None
                and not call.retry
                and self.lines[call.response].us - self.lines[call.request].us >= min_gap_us
            ):
                out.append(call)
        return out

    @cached_property
    def last_s2c(self) -> int:
        """Base index of the session's last server line (-1 when there is none)."""
        return max((i for i in self.idx if self.direction(i) == S2C), default=-1)

    def later(self, i: int, direction: str | None = None) -> list[int]:
        """Session lines after base line ``i`` (of one direction, if given)."""
        pos = bisect.bisect_right(self.idx, i)
        return [j for j in self.idx[pos:] if direction in (None, self.direction(j))]

    def middle(self, rng: Random) -> int:
        """A line of the session's middle half: both sides still talk after it."""
        n = len(self.idx)
        return self.idx[rng.randrange(n // 4, max(n // 4 + 1, 3 * n // 4))]

    @cached_property
    def used_ids(self) -> set[bytes]:
        return {_key(self.msg(i)["id"]) for i in self.idx if "id" in self.msg(i)}

    def fresh_id(self, rng: Random) -> int | str:
        """An id this session never used: an integer if the client uses integers."""
        ints = [c.id for c in self.calls if c.direction == C2S and type(c.id) is int]
        while True:
            candidate: int | str = (
                max(ints) + rng.randint(100, 999) if ints else f"x-{rng.getrandbits(24):06x}"
            )
            if _key(candidate) not in self.used_ids:
                self.used_ids.add(_key(candidate))
                return candidate


def _views(lines: list[_Line]) -> dict[str, _View]:
    by_session: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        by_session.setdefault(line.rec["session"], []).append(i)
    return {sid: _View(sid, lines, idx) for sid, idx in by_session.items()}


@dataclass
class _Item:
    """An inserted line: a record, or raw bytes (a line that is not a record)."""

    rec: Json | None
    raw: bytes | None = None
    labels: list[tuple[str, str, str]] = field(default_factory=list)  # kind, code, session

    def encode(self) -> bytes:
        return self.raw if self.raw is not None else orjson.dumps(self.rec)


class _Edits:
    """Rewrites, insertions and deletions against the base lines, resolved on write."""

    def __init__(self, lines: list[_Line]) -> None:
        self.lines = lines
        self.us = [line.us for line in lines]
        self.dirty: set[int] = set()
        self.deleted: set[int] = set()
        self.before: dict[int, list[_Item]] = {}
        self.after: dict[int, list[_Item]] = {}
        self.labels: dict[int, list[tuple[str, str, str]]] = {}

    def touch(self, i: int) -> Json:
        """The record of base line ``i``, to edit in place."""
        self.dirty.add(i)
        return self.lines[i].rec

    def delete(self, i: int) -> None:
        self.deleted.add(i)

    def insert(self, i: int, item: _Item, *, before: bool = False, first: bool = False) -> _Item:
        where = self.before if before else self.after
        bucket = where.setdefault(i, [])
        if first:
            bucket.insert(0, item)
        else:
            bucket.append(item)
        return item

    def at_time(self, us: int, not_before: int) -> int:
        """The base line after which a line stamped ``us`` keeps timestamp order."""
        return max(not_before, bisect.bisect_right(self.us, us) - 1)

    def write(self, path: Path) -> list[Label]:
        """Write the edited capture; the labels, with their output lines."""
        found: list[Label] = []
        out: list[bytes] = []

        def emit(data: bytes, labels: list[tuple[str, str, str]]) -> None:
            out.append(data)
            found.extend(Label(kind, code, len(out), sid) for kind, code, sid in labels)

        for i, line in enumerate(self.lines):
            for item in self.before.get(i, ()):
                emit(item.encode(), item.labels)
            if i not in self.deleted:
                data = orjson.dumps(line.rec) if i in self.dirty else line.data
                emit(data, self.labels.get(i, []))
            for item in self.after.get(i, ()):
                emit(item.encode(), item.labels)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join(out) + b"\n" if out else b"")
        return found


# ---------------------------------------------------------------------------
# Kinds
# ---------------------------------------------------------------------------


class _Ctx:
    """What an injection works with: the edits, its session, its rng and its kind."""

    def __init__(self, edits: _Edits, view: _View, rng: Random, kind: str) -> None:
        self.edits = edits
        self.view = view
        self.rng = rng
        self.kind = kind

    def label(self, target: int | _Item, code: str) -> None:
        label = (self.kind, code, self.view.sid)
        if isinstance(target, _Item):
            target.labels.append(label)
        else:
            self.edits.labels.setdefault(target, []).append(label)

    def record(self, direction: str, msg: Any, us: int) -> Json:
        """A capture record of this session, shaped like the generator's."""
        v = self.view
        return {
            "ts": _ts(us),
            "dir": direction,
            "session": v.sid,
            "server": v.server,
            "transport": v.transport,
            "msg": msg,
        }

    def add(
        self,
        after: int,
        direction: str,
        msg: Any,
        *,
        us: int | None = None,
        code: str | None = None,
        before: bool = False,
    ) -> _Item:
        """Insert a message of this session after (or before) base line ``after``, stamped
        with that line's time, or placed by ``us`` (never before ``after``)."""
        anchor = after
        if us is None:
            us = self.edits.lines[after].us
        elif not before:
            anchor = self.edits.at_time(us, after)
        item = self.edits.insert(anchor, _Item(self.record(direction, msg, us)), before=before)
        if code is not None:
            self.label(item, code)
        return item

    def msg(self, i: int) -> Json:
        msg: Json = self.edits.touch(i)["msg"]
        return msg

    def pick(self, items: Sequence[Any]) -> Any:
        return items[self.rng.randrange(len(items))]

    # message builders in the session's style

    def request(self, rid: Any, method: str, params: Json | None = None) -> Json:
        if self.view.modern:
            params = {"_meta": dict(self.view.request_meta), **(params or {})}
        msg: Json = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        return msg

    def result(self, rid: Any, body: Json | None = None) -> Json:
        body = dict(body or {})
        if self.view.modern:
            body = {"resultType": "complete", **body, "_meta": dict(self.view.result_meta)}
        return {"jsonrpc": "2.0", "id": rid, "result": body}

    @staticmethod
    def error(rid: Any, code: Any, message: str | None) -> Json:
        err: Json = {"code": code}
        if message is not None:
            err["message"] = message
        return {"jsonrpc": "2.0", "id": rid, "error": err}

    @staticmethod
    def note(method: str, params: Json | None = None) -> Json:
        msg: Json = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return msg

    def answer_with_error(self, call: _Call, code: Any, message: str | None) -> int:
        """Turn the response of ``call`` into an error; returns its line."""
        assert call.response is not None
        rec = self.edits.touch(call.response)
        rec["msg"] = self.error(call.id, code, message)
        return call.response

    def add_token(self, call: _Call) -> Any:
        """Give ``call`` a fresh progress token (in ``params._meta``); returns it."""
        token = f"{self.view.sid[-6:]}-t{self.rng.getrandbits(24):06x}"
        params = self.msg(call.request).setdefault("params", {})
        params["_meta"] = {**(params.get("_meta") or {}), "progressToken": token}
        return token


Predicate = Callable[[_View], bool]
Apply = Callable[[_Ctx], None]


@dataclass(frozen=True)
class Kind:
    """A kind of violation: what it needs from a session, and how it is injected."""

    name: str
    codes: tuple[str, ...]  # every code the kind labels
    summary: str
    era: str | None  # "modern", "legacy" or None (any revision)
    transport: str | None  # "http", "stdio" or None
    eligible: Predicate
    apply: Apply
    note: str = ""  # why a second code is labelled, when it is


KINDS: dict[str, Kind] = {}


def _kind(
    name: str,
    codes: str,
    summary: str,
    *,
    era: str | None = None,
    transport: str | None = None,
    eligible: Predicate = lambda v: True,
    note: str = "",
) -> Callable[[Apply], Apply]:
    def wrap(fn: Apply) -> Apply:
        KINDS[name] = Kind(name, tuple(codes.split()), summary, era, transport, eligible, fn, note)
        return fn

    return wrap


def _has_plain(method: str | None = "tools/call", gap: int = 0) -> Predicate:
    return lambda v: bool(v.plain(method, min_gap_us=gap))


# -- JSON-RPC envelope -----------------------------------------------------------


@_kind(
    "wrong-jsonrpc-version",
    "JR001",
    'a request whose `jsonrpc` is not the string "2.0"',
    eligible=_has_plain(),
)
def _wrong_version(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    c.msg(call.request)["jsonrpc"] = c.pick(["1.0", 2.0, "2"])
    c.label(call.request, "JR001")


@_kind(
    "null-request-id",
    "JR004",
    "a request with a null id (the server answers -32600)",
    eligible=lambda v: len(v.idx) >= 8,
)
def _null_id(c: _Ctx) -> None:
    at = c.view.middle(c.rng)
    c.add(at, C2S, c.request(None, "tools/list"), code="JR004")
    c.add(at, S2C, c.error(None, -32600, "Invalid Request: id must not be null"))


@_kind(
    "request-id-wrong-type",
    "JR003",
    "a call whose id is a fraction, a boolean or an object",
    eligible=_has_plain(),
)
def _id_type(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    rid = c.pick([call.id + 0.5 if type(call.id) is int else 7.5, True, {"n": call.id}])
    c.msg(call.request)["id"] = rid
    assert call.response is not None
    c.msg(call.response)["id"] = rid
    c.label(call.request, "JR003")


@_kind(
    "notification-with-id",
    "JR005",
    "a client notifications/cancelled carrying an id of its own",
    eligible=_has_plain(),
)
def _notification_with_id(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    params: Json = {"requestId": call.id, "reason": "User requested cancellation"}
    if c.view.modern:
        # the client stamps its usual _meta on it: MT001 reads a notification that
        # carries an id as a 2026 request and would also flag a missing _meta
        params = {"_meta": dict(c.view.request_meta), **params}
    msg = {
        "jsonrpc": "2.0",
        "id": c.view.fresh_id(c.rng),
        **c.note("notifications/cancelled", params),
    }
    c.add(call.request, C2S, msg, code="JR005")


@_kind(
    "result-and-error",
    "JR006",
    "a response carrying both `result` and `error`",
    eligible=_has_plain(),
)
def _result_and_error(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    c.msg(call.response)["error"] = {"code": -32603, "message": "Internal error"}
    c.label(call.response, "JR006")


@_kind(
    "error-code-not-integer",
    "JR008",
    'an error whose code is "-32603" or -32603.0',
    eligible=_has_plain(),
)
def _code_not_int(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    c.label(c.answer_with_error(call, c.pick(["-32603", -32603.0]), "Internal error"), "JR008")


@_kind("error-without-message", "JR009", "an error object without `message`", eligible=_has_plain())
def _error_without_message(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    c.label(c.answer_with_error(call, -32603, None), "JR009")


@_kind(
    "batch-in-legacy",
    "JR010",
    "a request sent as a one-element JSON-RPC batch",
    era="legacy",
    eligible=_has_plain(),
)
def _batch(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    rec = c.edits.touch(call.request)
    rec["msg"] = [rec["msg"]]
    c.label(call.request, "JR010")


@_kind(
    "invalid-json-line",
    "JR014",
    "a capture line cut off mid-record (not JSON)",
    eligible=lambda v: len(v.idx) >= 8,
)
def _invalid_json(c: _Ctx) -> None:
    at = c.view.middle(c.rng)
    data = orjson.dumps(
        c.record(C2S, c.request(c.view.fresh_id(c.rng), "tools/list"), c.edits.lines[at].us)
    )
    cut = c.rng.randrange(len(data) // 3, len(data) - 2)
    # placed right after a line of its session, so the line (which has no session of its
    # own) is attributed to that session
    item = c.edits.insert(at, _Item(None, raw=data[:cut]), first=True)
    c.label(item, "JR014")


# -- pairing ------------------------------------------------------------------------


@_kind(
    "id-reused-in-flight",
    "PR002 PR006",
    "a 2026 client re-sends a call under the id of the one still in flight",
    era="modern",
    eligible=_has_plain(),
    note="Two requests, one id, one response: pairing by id gives the response to the "
    "later request, so the first is never answered (PR006). Answering both instead "
    "makes the second answer a duplicate (PR004), an error.",
)
def _reuse_in_flight(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    params = {k: v for k, v in c.view.msg(call.request)["params"].items() if k != "_meta"}
    c.add(call.request, C2S, c.request(call.id, "tools/call", params), code="PR002")
    c.label(call.request, "PR006")


@_kind(
    "id-reused-legacy",
    "PR001",
    "a legacy request reusing the id of an answered call",
    era="legacy",
    eligible=_has_plain(),
)
def _reuse_legacy(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    at = c.pick(c.view.later(call.response) or [call.response])
    c.add(at, C2S, c.request(call.id, "ping"), code="PR001")
    c.add(at, S2C, c.result(call.id))


@_kind(
    "orphan-response",
    "PR003",
    "a response to an id no request used",
    eligible=lambda v: len(v.idx) >= 8,
)
def _orphan(c: _Ctx) -> None:
    at = c.view.middle(c.rng)
    body = {"content": [{"type": "text", "text": "done"}], "isError": False}
    c.add(at, S2C, c.result(c.view.fresh_id(c.rng), body), code="PR003")


@_kind("duplicate-response", "PR004", "a response sent twice", eligible=_has_plain())
def _duplicate(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    c.add(call.response, S2C, c.view.msg(call.response), code="PR004")


def _followed_by_server(v: _View) -> list[_Call]:
    return [c for c in v.plain() if c.response is not None and c.response < v.last_s2c]


@_kind(
    "unanswered-request",
    "PR006",
    "a call whose response is gone while the server keeps talking",
    eligible=lambda v: bool(_followed_by_server(v)),
)
def _unanswered(c: _Ctx) -> None:
    call = c.pick(_followed_by_server(c.view))
    assert call.response is not None
    c.edits.delete(call.response)
    c.label(call.request, "PR006")


# -- lifecycle --------------------------------------------------------------------


def _legacy_handshake(v: _View) -> bool:
    init = v.handshake_call
    return init is not None and v.first("notifications/initialized") is not None


def _initialized_then_request(v: _View) -> bool:
    return _legacy_handshake(v) and _first_request_after_init(v) is not None


def _first_request_after_init(v: _View) -> int | None:
    init = v.handshake_call
    if init is None or init.response is None:
        return None
    for call in v.calls:
        if call.direction == C2S and call.request > init.response and call.method != "ping":
            return call.request
    return None


@_kind(
    "initialize-not-first",
    "LC001",
    "a tools/list (answered with an error) before the initialize request",
    era="legacy",
    eligible=_legacy_handshake,
)
def _init_not_first(c: _Ctx) -> None:
    init = c.view.handshake_call
    assert init is not None
    rid = c.view.fresh_id(c.rng)
    c.add(init.request, C2S, c.request(rid, "tools/list"), before=True, code="LC001")
    c.add(init.request, S2C, c.error(rid, -32600, "Server not initialized"), before=True)


@_kind(
    "request-before-initialized",
    "LC014",
    "notifications/initialized sent after the first tools/list",
    era="legacy",
    eligible=_initialized_then_request,
)
def _before_initialized(c: _Ctx) -> None:
    initialized = c.view.first("notifications/initialized")
    first = _first_request_after_init(c.view)
    assert initialized is not None and first is not None
    c.edits.delete(initialized)
    c.add(first, C2S, c.view.msg(initialized))
    c.label(first, "LC014")


@_kind(
    "initialized-missing",
    "LC003",
    "no notifications/initialized at all",
    era="legacy",
    eligible=_initialized_then_request,
)
def _initialized_missing(c: _Ctx) -> None:
    initialized = c.view.first("notifications/initialized")
    first = _first_request_after_init(c.view)
    assert initialized is not None and first is not None
    c.edits.delete(initialized)
    c.label(first, "LC003")


# -- methods ------------------------------------------------------------------------


@_kind(
    "ping-in-modern",
    "MD001",
    "a 2026 client sends ping (answered -32601)",
    era="modern",
    eligible=lambda v: len(v.idx) >= 8,
)
def _ping_modern(c: _Ctx) -> None:
    at = c.view.middle(c.rng)
    rid = c.view.fresh_id(c.rng)
    c.add(at, C2S, c.request(rid, "ping"), code="MD001")
    c.add(at, S2C, c.error(rid, -32601, "Method not found: ping"))


@_kind(
    "discover-in-legacy",
    "MD001",
    "a 2025-11-25 client sends server/discover after the handshake (answered -32601)",
    era="legacy",
    eligible=lambda v: _legacy_handshake(v) and len(v.idx) >= 8,
)
def _discover_legacy(c: _Ctx) -> None:
    initialized = c.view.first("notifications/initialized")
    assert initialized is not None
    at = c.pick(c.view.later(initialized) or [initialized])
    rid = c.view.fresh_id(c.rng)
    c.add(at, C2S, c.request(rid, "server/discover"), code="MD001")
    c.add(at, S2C, c.error(rid, -32601, "Method not found: server/discover"))


@_kind(
    "wrong-direction",
    "MD003",
    "a client sends notifications/tools/list_changed",
    era="legacy",
    eligible=lambda v: len(v.idx) >= 8,
)
def _wrong_direction(c: _Ctx) -> None:
    c.add(c.view.middle(c.rng), C2S, c.note("notifications/tools/list_changed"), code="MD003")


@_kind(
    "server-request-in-modern",
    "MD004 PR006",
    "a 2026 server sends elicitation/create as a request (the client does not answer)",
    era="modern",
    eligible=lambda v: len(v.idx) >= 8,
    note="A 2026 client cannot answer it (a client response is MD005), and it keeps "
    "sending, so the request is also unanswered (PR006, a warning).",
)
def _server_request_modern(c: _Ctx) -> None:
    params = {
        "message": "Allow the tool to proceed?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    }
    msg = {
        "jsonrpc": "2.0",
        "id": c.rng.randint(1, 9),
        "method": "elicitation/create",
        "params": params,
    }
    item = c.add(c.view.middle(c.rng), S2C, msg, code="MD004")
    c.label(item, "PR006")


# -- capabilities ------------------------------------------------------------------


def _undeclared_request(v: _View) -> tuple[str, Json | None] | None:
    caps = v.server_caps
    if "prompts" not in caps:
        return "prompts/list", None
    if "resources" not in caps:
        return "resources/list", None
    if "completions" not in caps:
        return "completion/complete", {
            "ref": {"type": "ref/prompt", "name": "x"},
            "argument": {"name": "a", "value": ""},
        }
    if not (caps.get("resources") or {}).get("subscribe"):
        return "resources/subscribe", {"uri": "file:///README.md"}
    return None


@_kind(
    "capability-not-negotiated",
    "CP001",
    "a legacy client calls a feature the server did not declare (answered -32601)",
    era="legacy",
    eligible=lambda v: (
        _legacy_handshake(v) and _undeclared_request(v) is not None and len(v.idx) >= 8
    ),
)
def _undeclared(c: _Ctx) -> None:
    found = _undeclared_request(c.view)
    assert found is not None
    method, params = found
    rid = c.view.fresh_id(c.rng)
    at = c.view.middle(c.rng)
    c.add(at, C2S, c.request(rid, method, params), code="CP001")
    c.add(at, S2C, c.error(rid, -32601, f"Method not found: {method}"))


@_kind(
    "log-without-capability",
    "CP006",
    "a legacy server without `logging` sends notifications/message",
    era="legacy",
    eligible=lambda v: (
        v.handshake_call is not None and "logging" not in v.server_caps and len(v.idx) >= 8
    ),
)
def _log_without_capability(c: _Ctx) -> None:
    params = {"level": "info", "logger": c.view.server, "data": "cache warmed (412 entries)"}
    c.add(c.view.middle(c.rng), S2C, c.note("notifications/message", params), code="CP006")


@_kind(
    "list-changed-without-capability",
    "CP007",
    "a legacy server sends notifications/prompts/list_changed without prompts.listChanged",
    era="legacy",
    eligible=lambda v: (
        v.handshake_call is not None
        and not (v.server_caps.get("prompts") or {}).get("listChanged")
        and len(v.idx) >= 8
    ),
)
def _list_changed(c: _Ctx) -> None:
    c.add(c.view.middle(c.rng), S2C, c.note("notifications/prompts/list_changed"), code="CP007")


# -- 2026 _meta and results --------------------------------------------------------


@_kind(
    "meta-missing",
    "MT001",
    "a 2026 request without protocolVersion or clientCapabilities in _meta (answered -32602)",
    era="modern",
    eligible=_has_plain(),
)
def _meta_missing(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    key = c.pick([_PV, _CAPS])
    del c.msg(call.request)["params"]["_meta"][key]
    c.answer_with_error(call, -32602, f"Invalid params: _meta lacks {key}")
    c.label(call.request, "MT001")


@_kind(
    "server-info-missing",
    "MT005",
    "one 2026 result without serverInfo from a server that sends it elsewhere",
    era="modern",
    eligible=lambda v: bool(v.result_meta) and len(v.plain()) >= 2,
)
def _server_info_missing(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    result = c.msg(call.response)["result"]
    meta = {k: v for k, v in (result.get("_meta") or {}).items() if k != _SINFO}
    if meta:
        result["_meta"] = meta
    else:
        result.pop("_meta", None)
    c.label(call.response, "MT005")


@_kind(
    "result-type-missing",
    "RS001",
    "a 2026 tools/call result without resultType",
    era="modern",
    eligible=_has_plain(),
)
def _result_type_missing(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    del c.msg(call.response)["result"]["resultType"]
    c.label(call.response, "RS001")


@_kind(
    "result-type-unknown",
    "RS002",
    'a 2026 result with resultType "partial" or the like',
    era="modern",
    eligible=_has_plain(),
)
def _result_type_unknown(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    c.msg(call.response)["result"]["resultType"] = c.pick(["partial", "done", "Complete"])
    c.label(call.response, "RS002")


@_kind(
    "input-required-without-inputs",
    "RS004",
    "an input_required result with neither inputRequests nor requestState",
    era="modern",
    eligible=_has_plain(),
)
def _input_required_empty(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    result: Json = {"resultType": "input_required"}
    if c.rng.random() < 0.5:
        result["inputRequests"] = {}
    result["_meta"] = dict(c.view.result_meta)
    c.msg(call.response)["result"] = result
    c.label(call.response, "RS004")


def _target(v: _View, call: _Call) -> Any:
    """What the request acts on: tool or prompt name, resource URI."""
    params = v.msg(call.request).get("params") or {}
    return params.get("name", params.get("uri"))


def _mrtr(v: _View) -> list[tuple[_Call, _Call]]:
    """(original, retry) pairs of plain 2026 multi round-trip exchanges: the retry is the
    next request with the same method and target, as the linter pairs them (parallel calls
    of other tools may come in between)."""
    out = []
    for call in v.calls:
        if call.outcome != "input_required" or call.response is None:
            continue
        target = _target(v, call)
        for retry in v.calls:
            if (
                retry.request > call.response
                and retry.method == call.method
                and _target(v, retry) == target
            ):
                if retry.retry and retry.outcome == "result":
                    out.append((call, retry))
                break
    return out


@_kind(
    "retry-reuses-id",
    "RS006",
    "a multi round-trip retry reusing the original id",
    era="modern",
    eligible=lambda v: bool(_mrtr(v)),
)
def _retry_reuses_id(c: _Ctx) -> None:
    original, retry = c.pick(_mrtr(c.view))
    assert retry.response is not None
    c.msg(retry.request)["id"] = original.id
    c.msg(retry.response)["id"] = original.id
    c.label(retry.request, "RS006")


@_kind(
    "request-state-not-echoed",
    "RS007",
    "a multi round-trip retry omitting requestState",
    era="modern",
    eligible=lambda v: bool(_mrtr(v)),
)
def _state_not_echoed(c: _Ctx) -> None:
    _, retry = c.pick(_mrtr(c.view))
    del c.msg(retry.request)["params"]["requestState"]
    c.label(retry.request, "RS007")


@_kind(
    "input-responses-incomplete",
    "RS013",
    "a multi round-trip retry that answers none of the inputs the result asked for",
    era="modern",
    eligible=lambda v: bool(_mrtr(v)),
)
def _inputs_unanswered(c: _Ctx) -> None:
    # the retry keeps its requestState, so it is still a retry, with no answer in it
    _, retry = c.pick(_mrtr(c.view))
    c.msg(retry.request)["params"]["inputResponses"] = {}
    c.label(retry.request, "RS013")


@_kind(
    "request-state-cross-use",
    "RS014",
    "a request of another tool carrying the requestState of an input_required result",
    era="modern",
    eligible=lambda v: bool(_mrtr(v)),
)
def _state_cross_use(c: _Ctx) -> None:
    original, retry = c.pick(_mrtr(c.view))
    params = c.msg(retry.request)["params"]
    if original.method == "tools/call":
        params["name"] = f"{params.get('name', 'tool')}_other"
    else:  # prompts/get names a prompt, resources/read a resource
        key = "name" if "name" in params else "uri"
        params[key] = f"{params.get(key, 'x')}_other"
    c.label(retry.request, "RS014")


def _cacheable(v: _View) -> list[_Call]:
    cacheable = ("server/discover", "tools/list", "resources/list", "prompts/list")
    return [c for c in v.plain(None) if c.method in cacheable]


@_kind(
    "cache-hints-missing",
    "RS009",
    "a 2026 tools/list (or similar) result without ttlMs/cacheScope",
    era="modern",
    eligible=lambda v: bool(_cacheable(v)),
)
def _cache_hints(c: _Ctx) -> None:
    call = c.pick(_cacheable(c.view))
    assert call.response is not None
    result = c.msg(call.response)["result"]
    for key in c.pick([("ttlMs",), ("cacheScope",), ("ttlMs", "cacheScope")]):
        result.pop(key, None)
    c.label(call.response, "RS009")


def _paged(v: _View) -> list[tuple[_Call, _Call]]:
    """Two answered list calls of one method, the second asked after the first's answer."""
    lists = [c for c in _cacheable(v) if c.method.endswith("/list") and c.response is not None]
    return [
        (a, b)
        for i, a in enumerate(lists)
        for b in lists[i + 1 :]
        if b.method == a.method and a.response is not None and b.request > a.response
    ][:20]


def _tool_lists(v: _View) -> list[_Call]:
    """Answered tools/list calls whose result lists tools."""
    return [
        call
        for call in v.plain("tools/list")
        if call.response is not None and v.msg(call.response)["result"].get("tools")
    ]


@_kind(
    "tool-name-format",
    "RS016",
    "a tools/list result naming a tool with a space and a bang",
    eligible=lambda v: bool(_tool_lists(v)),
)
def _tool_name(c: _Ctx) -> None:
    call = c.pick(_tool_lists(c.view))
    assert call.response is not None
    tool = c.pick(c.msg(call.response)["result"]["tools"])
    tool["name"] = c.pick(["get weather!", "read file", "résumé"])
    c.label(call.response, "RS016")


@_kind(
    "tool-input-schema-invalid",
    "TL005",
    "a 2026 tools/list result with a tool whose inputSchema is null or not a schema",
    era="modern",
    eligible=lambda v: bool(_tool_lists(v)),
)
def _tool_input_schema(c: _Ctx) -> None:
    call = c.pick(_tool_lists(c.view))
    assert call.response is not None
    tool = c.pick(c.msg(call.response)["result"]["tools"])
    tool["inputSchema"] = c.pick(
        [None, {"type": "string"}, {"type": "object", "properties": 5}, "object"]
    )
    c.label(call.response, "TL005")


@_kind(
    "sampling-tools-not-declared",
    "CF007",
    "a 2026 input_required asking for tool-enabled sampling of a client without sampling.tools",
    era="modern",
    eligible=_has_plain(),
)
def _sampling_tools(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    params = c.msg(call.request).setdefault("params", {})
    meta = params.setdefault("_meta", dict(c.view.request_meta))
    # the client can sample, but not with tools
    meta[_CAPS] = {"sampling": {}}
    sampling = {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Which city?"}}],
            "maxTokens": 100,
            "tools": [{"name": "lookup", "inputSchema": {"type": "object"}}],
        },
    }
    c.msg(call.response)["result"] = {
        "resultType": "input_required",
        "inputRequests": {"city": sampling},
        "_meta": dict(c.view.result_meta),
    }
    c.label(call.response, "CF007")


def _server_results(v: _View) -> list[int]:
    """Lines of the session's success results sent by the server, in capture order."""
    return [i for i in v.idx if v.direction(i) == S2C and isinstance(v.msg(i).get("result"), dict)]


@_kind(
    "server-info-never-sent",
    "MT015",
    "a 2026 session whose server names itself on none of its results",
    era="modern",
    eligible=lambda v: bool(v.result_meta) and bool(_server_results(v)),
)
def _server_info_never(c: _Ctx) -> None:
    results = _server_results(c.view)
    for i in results:
        result = c.msg(i)["result"]
        meta = {k: v for k, v in (result.get("_meta") or {}).items() if k != _SINFO}
        if meta:
            result["_meta"] = meta
        else:
            result.pop("_meta", None)
    c.label(results[0], "MT015")


@_kind(
    "cursor-not-issued",
    "RS017",
    "a list request whose cursor no earlier result of that list returned",
    eligible=lambda v: bool(_paged(v)),
)
def _cursor_forged(c: _Ctx) -> None:
    _, second = c.pick(_paged(c.view))
    params = c.msg(second.request).setdefault("params", {})
    params["cursor"] = f"page-{c.rng.randrange(2, 99)}"
    c.label(second.request, "RS017")


@_kind(
    "cursor-wrong-error",
    "RS017 RS018",
    "a forged list cursor answered with -32603 instead of -32602",
    eligible=lambda v: bool(_paged(v)),
    note="RS017: the forged cursor itself",
)
def _cursor_wrong_error(c: _Ctx) -> None:
    _, second = c.pick(_paged(c.view))
    assert second.response is not None
    c.msg(second.request).setdefault("params", {})["cursor"] = f"page-{c.rng.randrange(2, 99)}"
    answer = c.msg(second.response)
    answer.pop("result", None)
    answer["error"] = {"code": -32603, "message": "internal error"}
    c.label(second.request, "RS017")
    c.label(second.response, "RS018")


@_kind(
    "cache-scope-differs-across-pages",
    "RS015",
    "the second page of a 2026 list result with another cacheScope than the first",
    era="modern",
    eligible=lambda v: bool(_paged(v)),
)
def _pages_differ(c: _Ctx) -> None:
    first, second = c.pick(_paged(c.view))
    assert first.response is not None and second.response is not None
    page1, page2 = c.msg(first.response)["result"], c.msg(second.response)["result"]
    page1["nextCursor"] = "page-2"
    c.msg(second.request).setdefault("params", {})["cursor"] = "page-2"
    for page, scope in ((page1, "private"), (page2, "public")):
        page.setdefault("ttlMs", 60000)
        page["cacheScope"] = scope
    c.label(second.response, "RS015")


def _discovered(v: _View) -> bool:
    call = v.handshake_call
    return call is not None and call.method == "server/discover" and call.response is not None


@_kind(
    "discover-result-incomplete",
    "MT014",
    "a server/discover result without supportedVersions",
    era="modern",
    eligible=_discovered,
)
def _discover_incomplete(c: _Ctx) -> None:
    call = c.view.handshake_call
    assert call is not None and call.response is not None
    del c.msg(call.response)["result"]["supportedVersions"]
    c.label(call.response, "MT014")


def _declaring(v: _View) -> list[_Call]:
    """Plain stdio tool calls whose request declares some client capability."""
    if v.transport != "stdio":  # over HTTP the error also needs status 400 (HT006)
        return []
    return [
        c
        for c in v.plain()
        if ((v.msg(c.request).get("params") or {}).get("_meta") or {}).get(_CAPS)
    ]


@_kind(
    "missing-capability-error-invalid",
    "MT013",
    "a -32021 error naming a capability the request declared",
    era="modern",
    eligible=lambda v: bool(_declaring(v)),
)
def _missing_capability_declared(c: _Ctx) -> None:
    call = c.pick(_declaring(c.view))
    assert call.response is not None
    declared = c.msg(call.request)["params"]["_meta"][_CAPS]
    name = c.pick(sorted(declared))
    message = c.msg(call.response)
    message.pop("result", None)
    message["error"] = {
        "code": -32021,
        "message": f"This request requires the {name} capability",
        "data": {"requiredCapabilities": {name: declared[name]}},
    }
    c.label(call.response, "MT013")


# -- error codes ---------------------------------------------------------------------


def _error_kind(name: str, code: str, summary: str, codes: Callable[[Random], int]) -> None:
    @_kind(name, code, summary, era="modern", eligible=_has_plain())
    def apply(c: _Ctx) -> None:
        call = c.pick(c.view.plain())
        c.label(c.answer_with_error(call, codes(c.rng), "Server error"), code)


_error_kind(
    "reserved-code-undefined",
    "ER001",
    "a 2026 error code in -32023..-32099 (not -32042)",
    lambda r: r.choice([n for n in range(-32099, -32022) if n != -32042]),
)
_error_kind(
    "legacy-range-code",
    "ER002",
    "a 2026 error code in -32000..-32019 (not -32001..-32004)",
    lambda r: r.choice([-32000, *range(-32019, -32004)]),
)
_error_kind("retired-resource-code", "ER004", "a 2026 server answers -32002", lambda r: -32002)
_error_kind(
    "reserved-range-app-code",
    "ER005",
    "a 2026 application code in -32599..-32100",
    lambda r: r.randint(-32599, -32100),
)


# -- progress ----------------------------------------------------------------------


@_kind(
    "progress-unknown-token",
    "PG003",
    "progress for a token no request carried",
    eligible=lambda v: len(v.idx) >= 8,
)
def _progress_unknown(c: _Ctx) -> None:
    params = {
        "progressToken": f"{c.view.sid[-6:]}-u{c.rng.getrandbits(24):06x}",
        "progress": 50,
        "total": 100,
    }
    c.add(c.view.middle(c.rng), S2C, c.note("notifications/progress", params), code="PG003")


@_kind(
    "progress-not-increasing",
    "PG004",
    "a progress value not above the previous one",
    eligible=_has_plain(),
)
def _progress_down(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    token = c.add_token(call)
    high = c.rng.randint(40, 80)
    for value in (high, high - c.rng.randint(0, 30)):
        params = {"progressToken": token, "progress": value, "total": 100}
        item = c.add(call.request, S2C, c.note("notifications/progress", params))
    c.label(item, "PG004")


@_kind(
    "progress-after-completion",
    "PG005",
    "progress sent 5 ms after the call's response",
    eligible=_has_plain(),
)
def _progress_late(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    token = c.add_token(call)
    params = {"progressToken": token, "progress": 50, "total": 100}
    c.add(call.request, S2C, c.note("notifications/progress", params))
    late = {"progressToken": token, "progress": 100, "total": 100}
    us = c.edits.lines[call.response].us + 5000
    c.add(call.response, S2C, c.note("notifications/progress", late), us=us, code="PG005")


# -- cancellation -------------------------------------------------------------------


@_kind(
    "cancel-unknown-request",
    "CN001",
    "a cancel naming an id the client never used",
    eligible=lambda v: len(v.idx) >= 8,
)
def _cancel_unknown(c: _Ctx) -> None:
    params = {"requestId": c.view.fresh_id(c.rng), "reason": "Request timed out"}
    c.add(c.view.middle(c.rng), C2S, c.note("notifications/cancelled", params), code="CN001")


@_kind(
    "response-after-cancel",
    "CN003",
    "a call answered more than 100 ms after the client cancelled it",
    era="legacy",
    eligible=_has_plain(gap=300_000),
)
def _response_after_cancel(c: _Ctx) -> None:
    _answer_after_cancel(c, "CN003")


def _answer_after_cancel(c: _Ctx, code: str) -> None:
    """A cancel right after a request whose answer came at least 300 ms later."""
    call = c.pick(c.view.plain(min_gap_us=300_000))
    assert call.response is not None
    params = {"requestId": call.id, "reason": "User requested cancellation"}
    c.add(call.request, C2S, c.note("notifications/cancelled", params))
    c.label(call.response, code)


@_kind(
    "message-after-cancel",
    "CN006",
    "a 2026 stdio call answered more than 100 ms after the client cancelled it",
    era="modern",
    # over HTTP the cancel is closing the stream: a cancel notification there binds nothing
    eligible=lambda v: v.transport == "stdio" and _has_plain(gap=300_000)(v),
)
def _message_after_cancel(c: _Ctx) -> None:
    _answer_after_cancel(c, "CN006")


@_kind(
    "progress-after-cancel",
    "CN007",
    "a legacy call still reporting progress 200 ms after the client cancelled it",
    era="legacy",
    eligible=_has_plain(gap=300_000),
)
def _progress_after_cancel(c: _Ctx) -> None:
    call = c.pick(c.view.plain(min_gap_us=300_000))
    assert call.response is not None
    token = c.add_token(call)
    params = {"requestId": call.id, "reason": "User requested cancellation"}
    c.add(call.request, C2S, c.note("notifications/cancelled", params))
    # the cancel is stamped with the request's time; the answer comes >= 300 ms later
    us = c.edits.lines[call.request].us + 200_000
    late = {"progressToken": token, "progress": 60, "total": 100}
    c.add(call.request, S2C, c.note("notifications/progress", late), us=us, code="CN007")


# -- logging ----------------------------------------------------------------------


@_kind(
    "log-not-requested",
    "LG001",
    "a 2026 log message during a call that asked for no logLevel (server declares logging)",
    era="modern",
    eligible=lambda v: v.handshake_call is not None and bool(v.plain()),
)
def _log_not_requested(c: _Ctx) -> None:
    # context: 2026 servers here never declare `logging`; without it this is CP006
    discover = c.view.handshake_call
    assert discover is not None and discover.response is not None
    c.msg(discover.response)["result"]["capabilities"]["logging"] = {}
    call = c.pick(c.view.plain())
    params = {"level": "info", "logger": c.view.server, "data": "query plan cached"}
    c.add(call.request, S2C, c.note("notifications/message", params), code="LG001")


# -- HTTP ---------------------------------------------------------------------------


def _http_request(c: _Ctx, call: _Call, changes: dict[str, str | None] | None = None) -> None:
    """Record the HTTP POST of ``call`` with correct 2026 headers, then apply ``changes``
    (a header value, or None to drop the header)."""
    msg = c.view.msg(call.request)
    headers: dict[str, str] = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": msg["method"],
    }
    params = msg.get("params") or {}
    if msg["method"] == "tools/call":
        headers["Mcp-Name"] = params["name"]
    for name, value in (changes or {}).items():
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    _with_http(c.edits.touch(call.request), {"method": "POST", "headers": headers})


def _with_http(rec: Json, http: Json) -> None:
    msg = rec.pop("msg")
    rec["http"] = http
    rec["msg"] = msg


def _http_response(c: _Ctx, call: _Call, extra: dict[str, str] | None = None) -> None:
    """Record the HTTP answer to ``call``: 200, JSON, plus ``extra`` headers."""
    assert call.response is not None
    headers = {"Content-Type": "application/json", **(extra or {})}
    _with_http(c.edits.touch(call.response), {"status": 200, "headers": headers})


@_kind(
    "http-version-header-missing",
    "HT001",
    "a 2026 POST without MCP-Protocol-Version",
    era="modern",
    transport="http",
    eligible=_has_plain(),
)
def _ht_missing(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    _http_request(c, call, {"MCP-Protocol-Version": None})
    _http_response(c, call)
    c.label(call.request, "HT001")


@_kind(
    "http-version-header-mismatch",
    "HT002",
    "a 2026 POST whose MCP-Protocol-Version header says 2025-11-25",
    era="modern",
    transport="http",
    eligible=_has_plain(),
)
def _ht_mismatch(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    _http_request(c, call, {"MCP-Protocol-Version": LEGACY})
    _http_response(c, call)
    c.label(call.request, "HT002")


@_kind(
    "http-header-body-mismatch",
    "HT004 HT017",
    "a 2026 POST whose Mcp-Method or Mcp-Name lies, answered with a result",
    era="modern",
    transport="http",
    eligible=_has_plain(),
)
def _ht_body(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    if c.rng.random() < 0.5:
        _http_request(c, call, {"Mcp-Method": "tools/list"})
    else:
        _http_request(c, call, {"Mcp-Name": "delete_everything"})
    _http_response(c, call)
    c.label(call.request, "HT004")
    # the server processed it instead of rejecting it with 400 and HeaderMismatch
    c.label(call.response, "HT017")


@_kind(
    "http-session-id-in-modern",
    "HT005",
    "a 2026 HTTP response with Mcp-Session-Id",
    era="modern",
    transport="http",
    eligible=_has_plain(),
)
def _ht_session(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    assert call.response is not None
    _http_request(c, call)
    _http_response(c, call, {"Mcp-Session-Id": f"{c.rng.getrandbits(128):032x}"})
    c.label(call.response, "HT005")


def _legacy_http(c: _Ctx, call: _Call, changes: dict[str, str | None]) -> None:
    """Record ``call`` as a legacy-revision HTTP exchange (no 2026 routing headers)."""
    legacy: dict[str, str | None] = {
        "MCP-Protocol-Version": LEGACY,
        "Mcp-Method": None,
        "Mcp-Name": None,
    }
    _http_request(c, call, {**legacy, **changes})
    _http_response(c, call)


@_kind(
    "http-session-id-not-visible-ascii",
    "HT011",
    "a legacy POST whose Mcp-Session-Id has a space in it",
    era="legacy",
    transport="http",
    eligible=_has_plain(),
)
def _ht_session_charset(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    _legacy_http(c, call, {"Mcp-Session-Id": f"sess {c.rng.randrange(1000)}"})
    c.label(call.request, "HT011")


@_kind(
    "http-unknown-version-accepted",
    "HT013",
    "a legacy POST naming no revision in MCP-Protocol-Version, answered 200",
    era="legacy",
    transport="http",
    eligible=_has_plain(),
)
def _ht_unknown_version(c: _Ctx) -> None:
    call = c.pick(c.view.plain())
    _legacy_http(c, call, {"MCP-Protocol-Version": c.pick(["1999-01-01", "latest", "2.0"])})
    c.label(call.request, "HT013")


# -- stdio --------------------------------------------------------------------------


@_kind(
    "stdout-pollution",
    "ST001",
    "a log line on a stdio server's stdout",
    transport="stdio",
    eligible=lambda v: len(v.idx) >= 8,
)
def _stdout(c: _Ctx) -> None:
    text = c.pick(
        [
            f"{c.view.server} MCP server running on stdio",
            "Connected to upstream (pool size 5)",
            "DEBUG cache warmed: 412 entries",
        ]
    )
    c.add(c.view.middle(c.rng), S2C, text, code="ST001")


# ---------------------------------------------------------------------------
# Choosing sessions, synthesising missing ones, writing the result
# ---------------------------------------------------------------------------


def _fits(kind: Kind, v: _View) -> bool:
    if kind.era is not None and v.modern != (kind.era == "modern"):
        return False
    if kind.transport is not None and v.transport != kind.transport:
        return False
    return kind.eligible(v)


def _synthesise(kind: Kind, rng: Random, world: Any, start_us: int, taken: set[str]) -> list[_Line]:
    """A tiny clean session (the generator's model) that ``kind`` can be injected into."""
    for _ in range(200):
        srng = Random(rng.getrandbits(64))
        modern = kind.era == "modern" if kind.era else srng.random() < 0.5
        srv = gen._pick(srng, world.servers)
        sid = f"{srv.spec.name}-{srng.getrandbits(48):012x}"
        session = gen._Session(
            world, srng, srv=srv, sid=sid, modern=modern, start_us=start_us, budget=60
        )
        if kind.transport is not None:
            session.transport = kind.transport
        lines = []
        for us, direction, _, msg in session.events():
            rec = {
                "ts": _ts(us),
                "dir": direction,
                "session": sid,
                "server": session.server,
                "transport": session.transport,
                "msg": msg,
            }
            lines.append(_Line(orjson.dumps(rec), rec, us))
        view = _View(sid, lines, list(range(len(lines))))
        if sid not in taken and _fits(kind, view):
            return lines
    raise RuntimeError(f"could not synthesise a session for {kind.name}")


def _read(path: Path) -> list[_Line]:
    lines = []
    for data in path.read_bytes().splitlines():
        rec = orjson.loads(data)
        lines.append(_Line(data, rec, _us(rec["ts"])))
    return lines


def inject_violations(
    path_in: str | Path,
    path_out: str | Path,
    *,
    seed: int,
    kinds: Iterable[str] | None = None,
) -> Injection:
    """Inject one violation of each kind (default: all of :data:`KINDS`) into its own
    session of the capture at ``path_in``; write ``path_out``; return the labels."""
    names = list(KINDS) if kinds is None else list(dict.fromkeys(kinds))
    unknown = [n for n in names if n not in KINDS]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}: see --list")
    rng = Random(seed)
    lines = _read(Path(path_in))
    views = _views(lines)
    original = list(views)
    chosen: dict[str, str] = {}
    synthetic: list[list[_Line]] = []
    world = None
    for name in names:
        kind = KINDS[name]
        free = [sid for sid in original if sid not in chosen.values() and _fits(kind, views[sid])]
        if free:
            chosen[name] = free[rng.randrange(len(free))]
            continue
        if world is None:
            world = gen._World(Random(seed))
        start = lines[rng.randrange(len(lines))].us if lines else gen._EPOCH_US
        taken = set(views) | {s[0].rec["session"] for s in synthetic}
        extra = _synthesise(kind, rng, world, start, taken)
        synthetic.append(extra)
        chosen[name] = extra[0].rec["session"]
    if synthetic:
        merged = lines + [line for extra in synthetic for line in extra]
        # stable: generated lines first at equal times, each session in its own order
        lines = sorted(merged, key=lambda line: line.us)
        views = _views(lines)
    edits = _Edits(lines)
    for name in names:
        KINDS[name].apply(_Ctx(edits, views[chosen[name]], rng, name))
    labels = edits.write(Path(path_out))
    labels.sort(key=lambda label: (label.line, label.code))
    touched = set(chosen.values())
    return Injection(labels, chosen, frozenset(s for s in original if s not in touched))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("input", type=Path, nargs="?", help="a capture written by generate.py")
    parser.add_argument("output", type=Path, nargs="?")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=None, help="comma-separated kinds (default: all)")
    parser.add_argument("--list", action="store_true", help="list the kinds and exit")
    args = parser.parse_args(argv)
    if args.list:
        for kind in KINDS.values():
            where = " ".join(x for x in (kind.era, kind.transport) if x)
            print(
                f"{kind.name:<34} {' '.join(kind.codes):<12} {kind.summary}"
                + (f" [{where}]" if where else "")
            )
            if kind.note:
                print(f"{'':<47} note: {kind.note}")
        return 0
    if args.input is None or args.output is None:
        parser.error("input and output are required")
    kinds = args.kinds.split(",") if args.kinds else None
    result = inject_violations(args.input, args.output, seed=args.seed, kinds=kinds)
    for label in result:
        print(orjson.dumps(label._asdict()).decode())
    print(f"{len(result)} labels, {len(result.untouched)} untouched sessions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
