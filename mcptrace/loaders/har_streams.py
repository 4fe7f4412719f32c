"""Where a HAR's server streams go among its exchanges: a causal order for their events.

A HAR holds a ``GET`` stream (a ``text/event-stream`` response the server keeps open)
as one entry, listed when the stream started, with every event in its body and no time
per event. Read entry by entry, every event would sit right after the ``GET``, before
exchanges it came after: a ``notifications/resources/updated`` before the
``resources/subscribe`` that asked for it, an HTTP+SSE response before its request.
:func:`interleave` moves each event of such a stream among the other exchanges, keeping
the stream's own order:

* a response (the 2024-11-05 HTTP+SSE transport sends every server message on its
  stream) goes right after the exchange that carried its request;
* a server request goes before the ``POST`` that answers it, a progress notification
  after the request that carried its token and before that request's response, and
  the HTTP+SSE ``endpoint`` event before the first ``POST`` (the client needs the URL
  before it can post);
* the events that open a Streamable HTTP stream before any message (a priming event,
  which servers send at once) stay right after the ``GET``;
* any other event goes as late as the events after it allow: on a Streamable HTTP
  stream at most where the stream ended (after the last row timed by its end), on an
  HTTP+SSE stream right after the response before it.

Where the bounds disagree (a server that answered out of the order the requests came
in), the event stays after the ones before it in the stream and after its request.
Where they leave a choice (every event but an opening one and an HTTP+SSE response),
the place chosen is one the event may have had, not one it is known to have had: such
events are marked ``unordered``, and rules that judge order (a resource update after
its unsubscribe, a log below the level set meanwhile) leave them out, as calls leave
out their latency.

The session of an HTTP+SSE transport spans the stream and the ``POST`` requests to the
URL its ``endpoint`` event announced: the HAR loader keys them all by that URL (the
query carries the server's session id) and the ``Accepted`` bodies of the ``POST``
exchanges are transport rows. Times: Streamable HTTP events keep the time the stream
ended (what the HAR says of them); HTTP+SSE events, each a response whose latency
would otherwise be made up, have none (``ts`` null, ``ts_quality`` none).

The placement is one pass in Python over the rows, in linear time: pairing ids first
in, first out and bounding events in stream order are sequential, and the HAR loader
reads its entries one by one in Python anyway (the placement takes a tenth of the load
of a 113 MB HAR). It runs only when a HAR has a ``GET`` stream.
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict, deque
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urljoin, urlsplit, urlunsplit

import polars as pl

#: the transport row the HAR loader writes for an SSE `endpoint` event
ENDPOINT_EVENT_PREFIX = "SSE event `endpoint`"
#: no bound: the event may go as late as the stream's order allows
_UNBOUNDED = 1 << 62


def normalized_url(url: str, base: str | None = None) -> str | None:
    """``url`` (resolved against ``base`` when relative) in one spelling: scheme and host
    in lower case, no fragment; None when it cannot be read as a URL."""
    try:
        joined = urljoin(base, url) if base else url
        parts = urlsplit(joined)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or host is None:
        return None
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, ""))


@dataclass(frozen=True)
class Stream:
    """The rows ``first`` (the ``GET`` request) to ``end`` (excluded) of a frame: a server
    stream of session ``session``, its events after the request row; ``http_sse`` for
    the 2024-11-05 HTTP+SSE transport's stream."""

    session: str
    first: int
    end: int
    http_sse: bool = False


@dataclass
class _Rows:
    """The frame's columns as lists, and what the placement looks up in them."""

    session: list[str | None]
    kind: list[str]
    direction: list[str]
    ids: list[str | None]
    line: list[int]
    method: list[str | None]
    token: list[str | None]
    message: list[str | None]
    ts: list[datetime | None]
    moved: list[bool]

    @classmethod
    def of(cls, frame: pl.DataFrame, streams: list[Stream]) -> _Rows:
        moved = [False] * frame.height
        for s in streams:
            for r in range(s.first + 1, s.end):
                moved[r] = True
        return cls(
            session=frame["session"].to_list(),
            kind=frame["kind"].cast(pl.String).to_list(),
            direction=frame["direction"].cast(pl.String).to_list(),
            ids=frame["id"].to_list(),
            line=frame["line"].to_list(),
            method=frame["method"].to_list(),
            token=frame["progress_token"].to_list(),
            message=frame["message"].to_list(),
            ts=frame["ts"].to_list(),
            moved=moved,
        )


class _Exchanges:
    """The rows that stay in place, per session: each exchange's first and last row (the
    rows of one HAR entry share its line), the client's requests and answers by id, and
    the server's answers outside the streams."""

    def __init__(self, rows: _Rows, streams: list[Stream]) -> None:
        sessions = {s.session for s in streams}
        gets = {s.first for s in streams}
        self.first_of: dict[int, int] = {}
        self.last_of: dict[int, int] = {}
        #: session -> id -> rows of the client's requests with that id, in order
        self.requests: dict[str, dict[str, deque[int]]] = defaultdict(lambda: defaultdict(deque))
        #: session -> id -> first rows of the exchanges whose body answers a server request
        self.answers: dict[str, dict[str, deque[int]]] = defaultdict(lambda: defaultdict(deque))
        #: session -> progress token -> rows of the client's requests carrying it
        self.tokens: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        #: request row -> row of the server's answer to it outside the streams
        self.answered_at: dict[int, int] = {}
        #: the rows that stay and have a time, in order
        self.timed: list[int] = []
        times: list[datetime] = []
        #: per session, its client's first row other than a stream's GET
        self.first_post: dict[str, int] = {}
        waiting: dict[tuple[str, str], deque[int]] = defaultdict(deque)
        for r, name in enumerate(rows.session):
            if rows.moved[r]:
                continue
            self.first_of.setdefault(rows.line[r], r)
            self.last_of[rows.line[r]] = r
            at = rows.ts[r]
            if at is not None:
                self.timed.append(r)
                times.append(at)
            if name not in sessions:
                continue
            i, kind = rows.ids[r], rows.kind[r]
            if rows.direction[r] == "c2s":
                if r not in gets:
                    self.first_post.setdefault(name, r)
                if i is not None and kind == "request":
                    self.requests[name][i].append(r)
                    waiting[(name, i)].append(r)
                    token = rows.token[r]
                    if token is not None:
                        self.tokens[name][token].append(r)
                elif i is not None and kind in ("response", "error"):
                    self.answers[name][i].append(self.first_of[rows.line[r]])
            elif i is not None and kind in ("response", "error") and waiting[(name, i)]:
                self.answered_at[waiting[(name, i)].popleft()] = r
        # the earliest time from each timed row on: it never decreases, so the last row
        # timed by a moment is found by bisection (rows are not in time order: a
        # response row carries the end of its exchange)
        self.later_min = list(itertools.accumulate(reversed(times), min))[::-1]

    def last_by(self, start: int, end: datetime | None) -> int | None:
        """The last row after row ``start`` timed at ``end`` or before."""
        if end is None:
            return None
        k = bisect.bisect_right(self.later_min, end) - 1
        if k < 0 or self.timed[k] <= start:
            return None
        return self.timed[k]


def _bounds(s: Stream, rows: _Rows, ex: _Exchanges) -> tuple[list[int], list[int]]:
    """Per event of ``s``: the row it must follow and the row it must not pass."""
    requests, answers = ex.requests[s.session], ex.answers[s.session]
    tokens = ex.tokens[s.session]
    # the events of a Streamable HTTP stream carry the time it ended: none came later
    stream_end = None if s.http_sse else ex.last_by(s.first, rows.ts[s.end - 1])
    default_high = _UNBOUNDED if s.http_sse else s.first if stream_end is None else stream_end
    low: list[int] = []
    high: list[int] = []
    opening = True  # no JSON-RPC event yet: a priming event opens the stream
    carrier: dict[str, int | None] = {}  # progress token -> the request it belongs to
    for r in range(s.first + 1, s.end):
        i, kind = rows.ids[r], rows.kind[r]
        opening = opening and kind == "transport"
        if s.http_sse and kind in ("response", "error") and i is not None and requests.get(i):
            anchor = ex.last_of[rows.line[requests[i].popleft()]]
            low.append(anchor)
            high.append(anchor)
            continue
        lo, hi = s.first, default_high
        if kind == "request" and i is not None and answers.get(i):
            hi = min(hi, answers[i].popleft() - 1)
        elif rows.method[r] == "notifications/progress" and (token := rows.token[r]) is not None:
            # the first request with the token still waiting after the stream opened
            if token not in carrier:
                carrier[token] = next(
                    (
                        c
                        for c in tokens.get(token, [])
                        if ex.answered_at.get(c, _UNBOUNDED) > s.first
                    ),
                    None,
                )
            request = carrier[token]
            if request is not None:
                lo = max(lo, request)
                answered = ex.answered_at.get(request)
                if answered is not None:
                    hi = min(hi, answered - 1)
        elif (
            s.http_sse
            and kind == "transport"
            and (rows.message[r] or "").startswith(ENDPOINT_EVENT_PREFIX)
            and s.session in ex.first_post
        ):
            hi = min(hi, ex.first_post[s.session] - 1)
        elif opening and not s.http_sse:
            hi = s.first
        low.append(lo)
        high.append(hi)
    return low, high


def interleave(frame: pl.DataFrame, streams: list[Stream]) -> pl.DataFrame:
    """``frame`` (a HAR's rows in entry order) with the events of ``streams`` moved among
    the other exchanges, as the module docstring says."""
    if not streams:
        return frame
    n = frame.height
    rows = _Rows.of(frame, streams)
    ex = _Exchanges(rows, streams)
    after = list(range(n))  # the row each row is placed after (itself when unmoved)
    untimed = [False] * n
    # events whose bounds left a choice of place: their order against the client's
    # messages is not known (``unordered``), and rules that judge order leave them out
    chosen = [False] * n
    for s in streams:
        low, high = _bounds(s, rows, ex)
        # no event before an earlier one of the stream, each as late as the later ones
        # allow; a lower bound (a response after its request) wins over an upper one
        running = s.first
        lows = []
        for value in low:
            running = max(running, value)
            lows.append(running)
        bound = _UNBOUNDED
        highs = [0] * len(high)
        for k in range(len(high) - 1, -1, -1):
            bound = min(bound, high[k])
            highs[k] = bound
        placed = s.first
        for r, lo, hi in zip(range(s.first + 1, s.end), lows, highs, strict=True):
            # an unbounded event goes right after the events before it
            placed = max(placed, lo if hi == _UNBOUNDED else max(lo, hi))
            after[r] = placed
            untimed[r] = s.http_sse
            chosen[r] = lo < hi
    order = sorted(range(n), key=lambda r: (after[r], rows.moved[r], r))
    if order == list(range(n)) and not any(untimed) and not any(chosen):
        return frame
    no_time = pl.Series([untimed[r] for r in order])
    return frame[order].with_columns(
        ts=pl.when(no_time).then(None).otherwise(pl.col("ts")),
        ts_quality=pl.when(no_time)
        .then(pl.lit("none"))
        .otherwise(pl.col("ts_quality"))
        .cast(frame.schema["ts_quality"]),
        unordered=pl.col("unordered") | pl.Series([chosen[r] for r in order]),
    )


def placed_events(frame: pl.DataFrame) -> int:
    """How many rows of a HAR's frame :func:`interleave` placed between bounds."""
    return int(frame["unordered"].sum())
