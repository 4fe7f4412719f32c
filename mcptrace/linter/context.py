"""What rules see: the trace's tables, prepared once and shared by every rule.

Rules are short Polars queries over these frames. Anything several rules need
(the revision of each message, its era, the request a response answers) is
computed here once, not rebuilt inside each rule.

Speed matters on big captures (10^6 messages, ~0.5 GB of message text). What keeps
the rules fast:

* take only the columns a rule reads (:meth:`LintContext.part`) before filtering:
  a filter moves every column it is given;
* look rows up by ordinal with :meth:`LintContext.lookup` and
  :meth:`LintContext.call_lookup` (a gather by position, since ordinals are row
  positions in every loaded trace), not by joining with a frame of every message;
* filter on the typed columns first and touch ``message`` (the JSON text) only on
  the rows that can matter: scanning or parsing the text of every row is what costs.
  One scan finds the texts with any of the :data:`RARE_MARKERS`; :func:`settle`
  takes a cheap test for the compact JSON most captures hold (a prefix: a search
  through the text costs several times more) before a costly one;
  :func:`computed_where` parses only where a value can be;
  :func:`~mcptrace.message_text.json_paths` parses each distinct body once;
* give rows a value of their session (a first ordinal, a bound) with
  :meth:`LintContext.of_session`, a gather by session code, not a join on session;
* share derived frames between rules with :meth:`LintContext.memo`;
* ``session`` is a small integer code in every frame here (see
  :attr:`LintContext.session_names`): rules join, group and sort by it all the time.

The engine runs two rules at a time on threads (Polars releases the GIL in each
query), so whatever a rule builds for others goes through :meth:`LintContext.memo`,
which builds each frame once.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import polars as pl

from mcptrace._once import once_property
from mcptrace.trace import Trace

#: the row kinds of :attr:`LintContext.protocol`, ``requests``, ...
Part = Literal["protocol", "requests", "notifications", "responses"]
_PART_KINDS: dict[Part, tuple[str, ...]] = {
    "protocol": ("request", "notification", "response", "error"),
    "requests": ("request",),
    "notifications": ("notification",),
    "responses": ("response", "error"),
}


#: Literals some rules look for in message texts and ordinary traffic seldom has. One
#: scan of every text (:attr:`LintContext.part` column ``rare``) tells which messages
#: have any of them; a rule then looks for its own literal in those few texts only.
RARE_MARKERS = (
    r'"(?:ttlMs|cacheScope|completion|extensions|traceparent|tracestate|baggage|task|requestState)"'
    r"|/(?:logLevel|subscriptionId)"
)


def settle(frame: pl.DataFrame, quick: pl.Expr, full: pl.Expr) -> pl.Series:
    """The boolean ``full`` on every row of ``frame``, evaluated only where ``quick`` is not
    true. ``quick`` must imply ``full``: a cheap test (the first bytes of the text) that
    settles most rows of a costly one (a scan or a parse of the whole text)."""
    known = frame.select(quick.fill_null(False).alias("settled")).to_series()
    rest = ~known
    if not rest.any():
        return known
    values = frame.filter(rest).select(full.alias("settled")).to_series()
    return known.scatter(rest.arg_true(), values)


def computed_where(frame: pl.DataFrame, needed: pl.Expr, **columns: pl.Expr) -> pl.DataFrame:
    """``frame`` plus ``columns``, evaluated only on the rows where ``needed`` holds (or is
    null) and null on the others. For expressions known to be null where ``needed`` is
    false, such as a JSON path whose key the text does not contain: the parse then runs
    only on the rows that can have a value."""
    mask = frame.select(needed.fill_null(True)).to_series()
    values = frame.filter(mask).select(**columns)
    where = mask.arg_true()
    return frame.with_columns(
        pl.repeat(None, frame.height, dtype=values[name].dtype, eager=True)
        .scatter(where, values[name])
        .alias(name)
        for name in values.columns
    )


def _aligned(df: pl.DataFrame) -> bool:
    """Whether every column of ``df`` is cut into the same chunks."""
    lengths = {tuple(s.chunk_lengths()) for s in df.iter_columns()}
    return len(lengths) <= 1


def _cut_as(series: pl.Series, lengths: list[int]) -> pl.Series:
    """``series`` cut into chunks of ``lengths`` (slices of one chunk: nothing is copied
    unless ``series`` is cut otherwise already)."""
    if series.chunk_lengths() == lengths or not lengths:
        return series
    whole = series.rechunk()
    starts = list(itertools.accumulate(lengths, initial=0))[:-1]
    return pl.concat(
        [whole.slice(start, n) for start, n in zip(starts, lengths, strict=True)], rechunk=False
    )


def _realigned(df: pl.DataFrame, like: str) -> pl.DataFrame:
    """``df`` with every column cut into the chunks of column ``like``: aligned, without
    copying ``like`` (the message text, ~0.5 GiB at 10^6 messages) as a rechunk would."""
    lengths = df[like].chunk_lengths()
    return pl.DataFrame([_cut_as(column, lengths) for column in df.iter_columns()])


@dataclass
class LintContext:
    """Frames for the rules; ``messages`` has extra columns, documented on the property."""

    trace: Trace
    revision_override: str | None = None
    #: folder with the official schemas as ``<revision>/schema.json`` (--schema-dir)
    schema_dir: Path | None = None
    #: the origins the servers accept (--allowed-origin); None when not given: whether a
    #: request's `Origin` is valid depends on the server's configuration, not on the wire
    allowed_origins: tuple[str, ...] | None = None
    _memo: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)
    _part_columns: dict[tuple[Part, str], pl.Series] = field(default_factory=dict, repr=False)
    _locks: dict[object, threading.Lock] = field(default_factory=dict, repr=False)
    _locks_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _lock(self, key: object) -> threading.Lock:
        """The lock that lets one thread build the shared value ``key`` while the others
        wait. Memos and part columns never wait on each other in a cycle: a part column
        needs no memo, and a memo needing itself would recurse forever anyway."""
        with self._locks_lock:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
            return lock

    def prepare(self) -> None:
        """Build the frames every rule reads before rules run side by side (the engine
        runs several at a time): each is then built once, and no rule waits on another's.
        The calls come first: the trace finds the sessions' identity, which
        :attr:`messages` needs, while it pairs them."""
        self.prepare_calls()
        self.prepare_frames()

    def prepare_calls(self) -> None:
        """Build :attr:`calls` (the pairing: the part of :meth:`prepare` that takes longest)."""
        _ = self.calls

    def prepare_frames(self) -> None:
        """Build the frames of :meth:`prepare` other than :attr:`calls`: they need the
        sessions' identity but not the calls, so one thread can build them (and run rules
        that need no calls) while another pairs the calls."""
        _ = self.messages, self.sessions, self._dense, self._part_masks
        _ = self.unordered_sessions, self.placed, self.judged_revisions

    def memo(self, key: str, build: Callable[[LintContext], pl.DataFrame]) -> pl.DataFrame:
        """A frame several rules share, built once per lint run (by the first rule that
        asks; a rule asking meanwhile on another thread waits for it)."""
        if key not in self._memo:
            with self._lock(key):
                if key not in self._memo:
                    self._memo[key] = build(self)
        return self._memo[key]

    @once_property
    def session_names(self) -> pl.Series:
        """The sessions' names, by code: in every frame here ``session`` is a UInt32 code,
        the position of the session's name in this series. Rules join, group and sort by
        session all the time; hashing a small integer costs far less than hashing text."""
        return self.trace.identity["session"]

    @once_property
    def unordered_sessions(self) -> pl.Series:
        """Codes of the sessions whose two directions have no common order (a capture
        of per-direction files): compare with ``pl.col("session").is_in(x.implode())``."""
        names = self.session_names
        chosen = names.is_in(
            pl.Series(sorted(self.trace.unordered_sessions), dtype=pl.String).implode()
        )
        return chosen.arg_true().cast(pl.UInt32).alias("session")

    @once_property
    def placed(self) -> pl.Series:
        """Ordinals of the messages whose place the capture does not record, in sessions
        that otherwise keep their order: a HAR's server stream events, placed between
        the messages they must follow and precede (see
        :mod:`mcptrace.loaders.har_streams`). Usually empty."""
        messages = self.trace.messages
        if not messages["unordered"].any():
            return pl.Series("ordinal", [], dtype=pl.Int64)
        whole = pl.Series(sorted(self.trace.unordered_sessions), dtype=pl.String)
        return messages.filter(pl.col("unordered") & ~pl.col("session").is_in(whole.implode()))[
            "ordinal"
        ]

    def in_place(self) -> pl.Expr:
        """True for rows (column ``ordinal``) whose place in the capture is recorded, not
        chosen by mcptrace (see :attr:`placed`): rules that judge a message by what came
        before or after it judge only these."""
        if self.placed.is_empty():
            return pl.lit(True)  # the usual case: nothing to test per row
        return ~pl.col("ordinal").is_in(self.placed.implode())

    def session_code(self) -> pl.Expr:
        """The code (see :attr:`session_names`) of the session named in ``session``."""
        names = self.session_names
        if names.null_count() == 0 and names.n_unique() == names.len():
            # an Enum's codes are the names' positions. A cast keeps the column's chunks,
            # where replace_strict may cut a chunk in two: the frame's columns would then
            # be cut differently, and realigning them copies the whole frame
            return (
                pl.col("session").cast(pl.Enum(names), strict=False).to_physical().cast(pl.UInt32)
            )
        return pl.col("session").replace_strict(
            names, pl.int_range(names.len(), dtype=pl.UInt32, eager=True), default=None
        )

    def of_session(
        self, frame: pl.DataFrame, column: str, *, missing: object | None = None
    ) -> pl.Expr:
        """``column`` of ``frame`` (at most one row per session code) for the session whose
        code is in column ``session`` (null for sessions ``frame`` lacks, or ``missing``
        when given, which also stands for a null ``column``): a gather by code, which over
        a frame of every message costs less than a join on session. The column it makes
        is one chunk (see :attr:`messages`)."""
        known = frame.filter(pl.col("session").is_not_null())
        by_code = pl.repeat(
            None, self.session_names.len(), dtype=frame[column].dtype, eager=True
        ).scatter(known["session"], known[column])
        if missing is not None:
            # a stand-in value where a comparison wants a number: a gather from numbers
            # without nulls costs a fraction of one with them
            by_code = by_code.fill_null(missing)
        code = pl.col("session")
        if not by_code.has_nulls() or not by_code.dtype.is_numeric():
            return pl.lit(by_code).gather(code)
        # a gather from numbers with nulls costs several times one from numbers without:
        # the numbers (nulls filled) and whether each is known are gathered instead
        return pl.when(pl.lit(by_code.is_not_null()).gather(code)).then(
            pl.lit(by_code.fill_null(0)).gather(code)
        )

    def _revision_of_session(self) -> pl.Expr:
        """The judged revision of the session whose code is in column ``session``."""
        # by code: the column is written once, not once per revision as a chain of
        # when/then would
        return self.of_session(self.session_revisions, "revision")

    def _modern_session(self) -> pl.Expr:
        """Whether the judged revision of the session whose code is in column ``session`` is
        2026-07-28 or later (false without one): by code, not a test of a million revision
        texts."""
        modern = self.session_revisions.select(
            "session", modern=(pl.col("revision") >= "2026-07-28").fill_null(False)
        )
        return self.of_session(modern, "modern").fill_null(False)

    @once_property
    def judged_revisions(self) -> frozenset[str]:
        """The revisions some session is judged by (after --revision)."""
        return frozenset(self.session_revisions["revision"].drop_nulls().to_list())

    @once_property
    def session_revisions(self) -> pl.DataFrame:
        """session (code), revision (after --revision), revision_source."""
        s = self.trace.identity.select(
            pl.int_range(pl.len(), dtype=pl.UInt32).alias("session"), "revision", "revision_source"
        )
        if self.revision_override is not None:
            s = s.with_columns(
                revision=pl.lit(self.revision_override), revision_source=pl.lit("override")
            )
        return s

    @once_property
    def messages(self) -> pl.DataFrame:
        """The messages table plus ``revision`` (of the session, or --revision) and
        ``modern`` (revision is 2026-07-28 or later). Columns no rule reads (``raw``,
        ``ts_quality``, ``direction_inferred``, ``unordered``) are left out: every
        filter would carry them along."""
        # per-row lookups, not joins: the frame must be aligned (every filter and gather
        # below is much slower over chunks that differ between columns), and a rechunk
        # would copy ~0.6 GiB at 10^6 messages. A column that comes out as one chunk (the
        # revision, gathered by session code) is cut as the table is, not the table copied
        loaded = self.trace.messages.drop("raw", "ts_quality", "direction_inferred", "unordered")
        frame = loaded.with_columns(session=self.session_code()).with_columns(
            revision=self._revision_of_session(), modern=self._modern_session()
        )
        if _aligned(frame):
            return frame
        return _realigned(frame, "message") if _aligned(loaded) else frame.rechunk()

    @once_property
    def _dense(self) -> bool:
        """Ordinals are row positions (0, 1, 2, ...): true for every loaded trace; a
        :meth:`Trace.filter` result keeps the original ordinals and is not dense."""
        ordinal = self.messages["ordinal"]
        return bool(
            ordinal.null_count() == 0
            and (ordinal == pl.int_range(0, ordinal.len(), eager=True)).all()
        )

    def positions(self, ordinals: pl.Series) -> pl.Series:
        """Row positions in :attr:`messages` of ``ordinals`` (null where no row has it)."""
        n = self.messages.height
        if self._dense:
            ok = ordinals.is_not_null() & (ordinals >= 0) & (ordinals < n)
            return pl.select(pl.when(ok).then(ordinals).cast(pl.Int64)).to_series()
        rows = self.messages.select("ordinal", _pos=pl.int_range(pl.len(), dtype=pl.Int64))
        keyed = pl.DataFrame({"ordinal": ordinals.cast(pl.Int64)})
        return keyed.join(rows, on="ordinal", how="left", maintain_order="left")["_pos"]

    def lookup(
        self, frame: pl.DataFrame, /, on: str, *, inner: bool = False, **columns: str
    ) -> pl.DataFrame:
        """``frame`` plus message columns (``alias=column``) of the row whose ordinal is in
        column ``on``: a left join on ordinal (nulls where there is no such row; with
        ``inner``, such rows are dropped) that keeps ``frame``'s order, without joining a
        frame of every message."""
        pos = self.positions(frame[on])
        source = self.messages
        at = pl.lit(pos)
        # the gathers in one query (each column's own gather was a query of its own). An
        # eager one: a lazy query's common subexpressions took the gathers from two
        # all-null columns for one
        out = frame.with_columns(
            pl.lit(source[column]).gather(at).alias(alias) for alias, column in columns.items()
        )
        return out.filter(pos.is_not_null()) if inner else out

    @once_property
    def _call_rows(self) -> pl.Series:
        """By message position: the row of :attr:`calls` whose request is that message
        (null for other messages). Each request has exactly one calls row."""
        calls = self.calls
        pos = self.positions(calls["request_ordinal"])
        rows = pl.int_range(calls.height, dtype=pl.Int64, eager=True)
        known = pos.is_not_null()
        empty = pl.repeat(None, self.messages.height, dtype=pl.Int64, eager=True)
        return empty.scatter(pos.filter(known), rows.filter(known))

    def call_lookup(self, frame: pl.DataFrame, on: str, **columns: str) -> pl.DataFrame:
        """``frame`` plus :attr:`calls` columns (``alias=column``) of the call whose
        ``request_ordinal`` is in column ``on``: a left join on the request's ordinal
        that keeps ``frame``'s order, done by position."""
        if not columns:
            return frame
        if not self._dense:
            right = self.calls.select(
                pl.col("request_ordinal").alias(on),
                *[pl.col(column).alias(alias) for alias, column in columns.items()],
            ).filter(pl.col(on).is_not_null())
            return frame.join(right, on=on, how="left", maintain_order="left")
        rows = self._call_rows.gather(self.positions(frame[on]))
        calls = self.calls
        return frame.with_columns(
            calls[column].gather(rows).alias(alias) for alias, column in columns.items()
        )

    @once_property
    def calls(self) -> pl.DataFrame:
        """The calls table with ``revision`` replaced by the judged revision."""
        loaded = self.trace.calls
        at = None
        if self._dense and self.trace.call_records.is_empty():
            # every call was paired from these messages: its session is that of its
            # request (of its response, for an orphan), whose code is gathered by
            # position rather than found again from a name on every call. A window's
            # calls may name a request it left out (one without time): then by name
            at = self.positions(
                loaded.select(pl.coalesce("request_ordinal", "response_ordinal")).to_series()
            )
        if at is not None and not at.has_nulls():
            code = self.messages["session"].gather(at)
        else:
            code = loaded.select(self.session_code()).to_series()
        calls = loaded.with_columns(code).with_columns(revision=self._revision_of_session())
        # the revision (and a gathered session) comes out as one chunk: a table of several
        # (call records appended, a window's filter) is cut alike again, as messages is
        return calls if _aligned(calls) else _realigned(calls, "request_ordinal")

    @once_property
    def sessions(self) -> pl.DataFrame:
        """Per session: revision, identity and declared capabilities (the identity columns
        of the sessions table; the counts and times there are not needed to lint)."""
        return self.trace.identity.with_columns(session=pl.int_range(pl.len(), dtype=pl.UInt32))

    @once_property
    def _part_masks(self) -> dict[Part, pl.Series]:
        kind = self.messages["kind"]
        return {name: kind.is_in(kinds) for name, kinds in _PART_KINDS.items()}

    @once_property
    def _answered_by(self) -> pl.DataFrame:
        """By row of the responses part (:attr:`responses` order): ``request_method`` and
        ``request_ordinal`` of the request a response answers (null for orphans), for a
        dense trace. Every response is in the calls table once (answer or orphan), so they
        are scattered, not joined."""
        mask = self._part_masks["responses"]
        answered = self.calls.select("response_ordinal", "method", "request_ordinal").filter(
            pl.col("response_ordinal").is_not_null()
        )
        pos = self.positions(answered["response_ordinal"])
        known = pos.is_not_null()
        # the answered call's row by message position, then by part row (the part's
        # rows are those of the mask), then its columns gathered by it: scattering into
        # a column of null strings costs more, and so does finding each response's part
        # row (a cumulative count gathered)
        rows = (
            pl.repeat(None, self.messages.height, dtype=pl.UInt32, eager=True)
            .scatter(
                pos.filter(known),
                pl.int_range(answered.height, dtype=pl.UInt32, eager=True).filter(known),
            )
            .filter(mask)
        )
        return pl.DataFrame(
            [
                answered["method"].gather(rows).alias("request_method"),
                answered["request_ordinal"].gather(rows).alias("request_ordinal"),
            ]
        )

    @once_property
    def _rare(self) -> pl.Series:
        """By message: the text has one of :data:`RARE_MARKERS` (null without text)."""
        return self.messages.select(pl.col("message").str.contains(RARE_MARKERS).alias("rare"))[
            "rare"
        ]

    def _part_column(self, name: Part, column: str) -> pl.Series:
        """Column ``column`` of part ``name``, filtered once and kept for the other rules."""
        key = (name, column)
        if key in self._part_columns:
            return self._part_columns[key]
        with self._lock(key):
            if key in self._part_columns:
                return self._part_columns[key]
            if column == "rare":
                self._part_columns[key] = self._rare.filter(self._part_masks[name])
            elif name == "responses" and column in ("request_method", "request_ordinal"):
                # cut as the part's other columns are (slices, no copy): a frame of
                # columns cut differently is copied whole by every filter over it
                lengths = self._part_column(name, "ordinal").chunk_lengths()
                self._part_columns[key] = _cut_as(self._answered_by[column], lengths)
            else:
                self._part_columns[key] = self.messages[column].filter(self._part_masks[name])
        return self._part_columns[key]

    def part(self, name: Part, *columns: str) -> pl.DataFrame:
        """Only ``columns`` of :attr:`protocol`, :attr:`requests`, :attr:`notifications`
        or :attr:`responses`, so that the rule's own filters move only those. Column
        ``rare`` says whether the text has one of :data:`RARE_MARKERS`: a text without
        it has none of them.

        On a loaded (dense) trace each column is filtered on its own, once, the first
        time a rule asks for it: the parts then hold only the columns rules read (a
        filtered column of text is 16 bytes a row, so whole parts cost ~0.3 GiB at
        10^6 messages)."""
        if not self._dense:
            frame: pl.DataFrame = getattr(self, name)
            if "rare" in columns:
                frame = frame.with_columns(
                    frame.select(pl.col("message").str.contains(RARE_MARKERS).alias("rare"))
                )
            return frame.select(columns)
        return pl.DataFrame([self._part_column(name, column) for column in columns])

    def modern_marked(self, name: Part, literal: str, not_sent: str, *columns: str) -> pl.DataFrame:
        """Readable rows of part ``name`` in 2026-07-28 sessions, not sent ``not_sent``
        (a direction), whose text spells ``literal``, one of the :data:`RARE_MARKERS`:
        only the texts the one scan for the markers picked are searched. The frame has
        ``columns`` and then those of the tests not among them."""
        tested = ("modern", "direction", "parse_error", "rare", "message")
        return (
            self.part(name, *columns, *(c for c in tested if c not in columns))
            .filter(
                pl.col("modern"),
                pl.col("direction") != not_sent,
                pl.col("rare"),
                pl.col("parse_error").is_null(),  # as content(): the body is the message
            )
            .filter(pl.col("message").str.contains(literal, literal=True))
        )

    def keyed_notifications(self, method: str, key: str, alias: str, *extra: str) -> pl.DataFrame:
        """Readable notifications of ``method`` that carry ``key`` (e.g. the progress token
        or the cancelled request id): session, direction (as text), ordinal, line, ts,
        modern, the ``extra`` columns, and ``key`` renamed ``alias``."""
        where = ("session", "direction", "ordinal", "line", "ts", "modern", *extra)
        return (
            self.part("notifications", "method", key, "parse_error", *where)
            .filter(
                (pl.col("method") == method)
                & pl.col(key).is_not_null()
                & pl.col("parse_error").is_null()
            )
            .select(*where, pl.col(key).alias(alias))
            .with_columns(pl.col("direction").cast(pl.String))
        )

    @once_property
    def protocol(self) -> pl.DataFrame:
        """Only JSON-RPC rows (requests, notifications, responses, errors)."""
        return self.messages.filter(self._part_masks["protocol"])

    @once_property
    def requests(self) -> pl.DataFrame:
        return self.messages.filter(self._part_masks["requests"])

    @once_property
    def notifications(self) -> pl.DataFrame:
        return self.messages.filter(self._part_masks["notifications"])

    @once_property
    def responses(self) -> pl.DataFrame:
        """Success and error responses, with the answered request's ``request_method``
        and ``request_ordinal`` (null for orphans)."""
        responses = self.messages.filter(self._part_masks["responses"])
        if not self._dense:
            answered = self.calls.filter(pl.col("response_ordinal").is_not_null()).select(
                ordinal="response_ordinal",
                request_method="method",
                request_ordinal="request_ordinal",
            )
            return responses.join(answered, on="ordinal", how="left", maintain_order="left")
        return responses.with_columns(self._answered_by)

    @once_property
    def input_required(self) -> pl.DataFrame:
        """Readable ``input_required`` results (some columns of :attr:`responses`) with ``inputs``:
        the JSON text of their ``result.inputRequests`` (null when absent)."""
        columns = (
            "ordinal",
            "session",
            "line",
            "kind",
            "direction",
            "modern",
            "result_type",
            "parse_error",
            "request_method",
            "request_ordinal",
            "message",
        )
        # each text parsed, not each distinct body (json_paths): the requests a server
        # asks for are the call's own, so the bodies are mostly distinct, and finding
        # them (a unique and a join of the texts) cost more than it saved
        return (
            self.part("responses", *columns)
            .filter((pl.col("result_type") == "input_required") & pl.col("parse_error").is_null())
            .with_columns(inputs=pl.col("message").str.json_path_match("$.result.inputRequests"))
        )
