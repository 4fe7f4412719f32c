"""The 2024-11-05 HTTP+SSE transport as a HAR records it: one session, in a causal order.

That transport splits a session over many HTTP exchanges: the client opens a ``GET``
stream, whose first event (``event: endpoint``) names the URL to ``POST`` to (with the
server's session id in its query, e.g. ``/messages?sessionId=5f0c1a``); each client
message is then a ``POST`` there, answered ``202 Accepted``, and every server message,
responses included, arrives as an event on the stream. A HAR holds the stream as one
entry, listed at its start, with every event in its body and no time per event.

Read entry by entry, such a capture would split in two sessions (the stream's URL and
the ``POST`` URL) and put every response before its request. The HAR loader keys the
stream and the ``POST`` requests to the URL it announced by that URL, and
:func:`interleave` then moves the stream's events among the ``POST`` exchanges: a
response right after the exchange that carried its request, and any other event as
late as the stream's order allows (just before the next placed event), but before the
``POST`` that answers it when it is a server request, and before the first ``POST``
when it is the endpoint event (the client needs the URL before it can post). An event
that nothing bounds after the stream's last response stays right after it.

Moved events have no time (``ts`` null, ``ts_quality`` none): each happened between
the exchange it now follows and the end of the stream, and neither bound is its time.
Giving them one would make up the latency of every call (the end of the ``POST`` that
answered ``202`` says nothing of when the response came).
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

import polars as pl

#: the transport row the HAR loader writes for an SSE `endpoint` event
ENDPOINT_EVENT_PREFIX = "SSE event `endpoint`"


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
    """The rows ``first`` (the ``GET`` request) to ``end`` (excluded) of a frame: an
    HTTP+SSE stream of session ``session``, its events after the request row."""

    session: str
    first: int
    end: int


#: no bound: the event may go as late as the stream's order allows
_UNBOUNDED = 1 << 62


def interleave(frame: pl.DataFrame, streams: list[Stream]) -> pl.DataFrame:
    """``frame`` (a HAR's rows in entry order) with the events of ``streams`` moved
    among their session's ``POST`` exchanges, as the module docstring says."""
    if not streams:
        return frame
    n = frame.height
    session = frame["session"].to_list()
    kind = frame["kind"].cast(pl.String).to_list()
    direction = frame["direction"].cast(pl.String).to_list()
    ids = frame["id"].to_list()
    line = frame["line"].to_list()
    message = frame["message"].to_list()
    in_stream = [False] * n
    for s in streams:
        for r in range(s.first + 1, s.end):
            in_stream[r] = True
    wanted = {s.session for s in streams}
    posts: dict[str, list[int]] = defaultdict(list)
    for r in range(n):
        if session[r] in wanted and not in_stream[r] and direction[r] == "c2s":
            posts[session[r]].append(r)
    # per session: where each exchange's rows begin and end (rows of one entry share
    # its line), the exchanges carrying each request id, and those answering each id
    last_of: dict[int, int] = {}
    first_of: dict[int, int] = {}
    for r in range(n):
        if session[r] in wanted and not in_stream[r]:
            first_of.setdefault(line[r], r)
            last_of[line[r]] = r
    carried: dict[str, dict[str, deque[int]]] = defaultdict(lambda: defaultdict(deque))
    answering: dict[str, dict[str, deque[int]]] = defaultdict(lambda: defaultdict(deque))
    for name, rows in posts.items():
        for r in rows:
            if ids[r] is None:
                continue
            if kind[r] == "request":
                carried[name][ids[r]].append(last_of[line[r]])
            elif kind[r] in ("response", "error"):
                answering[name][ids[r]].append(first_of[line[r]])

    after = list(range(n))  # the row each row is placed after (itself when unmoved)
    moved = [False] * n
    for s in streams:
        events = range(s.first + 1, s.end)
        first_post = posts[s.session][0] if posts[s.session] else None
        low: list[int] = []
        high: list[int] = []
        for r in events:
            request_rows = carried[s.session].get(ids[r]) if ids[r] is not None else None
            answer_rows = answering[s.session].get(ids[r]) if ids[r] is not None else None
            if kind[r] in ("response", "error") and request_rows:
                anchor = request_rows.popleft()
                low.append(anchor)
                high.append(anchor)
                continue
            low.append(s.first)
            if kind[r] == "request" and answer_rows:
                high.append(answer_rows.popleft() - 1)
            elif (
                first_post is not None
                and kind[r] == "transport"
                and (message[r] or "").startswith(ENDPOINT_EVENT_PREFIX)
            ):
                high.append(first_post - 1)
            else:
                high.append(_UNBOUNDED)
        # no event before an earlier one of the stream, each as late as the later ones
        # allow; a lower bound (a response after its request) wins over an upper one
        running = s.first
        lows = []
        for value in low:
            running = max(running, value)
            lows.append(running)
        bound = _UNBOUNDED
        highs = [0] * len(high)
        for i in range(len(high) - 1, -1, -1):
            bound = min(bound, high[i])
            highs[i] = bound
        for r, lo, hi in zip(events, lows, highs, strict=True):
            after[r] = lo if hi == _UNBOUNDED else max(lo, hi)
            moved[r] = True
    order = sorted(range(n), key=lambda r: (after[r], moved[r], r))
    shifted = pl.Series([moved[r] for r in order])
    return frame[order].with_columns(
        ts=pl.when(shifted).then(None).otherwise(pl.col("ts")),
        ts_quality=pl.when(shifted)
        .then(pl.lit("none"))
        .otherwise(pl.col("ts_quality"))
        .cast(frame.schema["ts_quality"]),
    )
