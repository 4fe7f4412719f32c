"""Running rules over a trace: the findings table.

For each selected rule the engine runs its check once over the whole trace,
keeps the findings on messages whose revision the rule applies to (sessions of
unknown revision get only the rules that apply to every revision), and stamps
code, name, severity, scope, location and revision on each.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import polars as pl

from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.registry import select_rules
from mcptrace.linter.rule import ALL_REVISIONS, PLACE_CLOSE, PLACE_OPEN, Rule
from mcptrace.loaders.chunked import workers
from mcptrace.protocol import is_known_revision
from mcptrace.schema import FINDINGS, Related
from mcptrace.trace import Trace

#: Rules run several at a time (families side by side: see :func:`lint`): Polars releases
#: the GIL in each query, so one rule's Python runs while another's query does. One
#: thread more than there are cores (at most this many) keeps them busy through the many
#: small queries: on two cores a third thread took ~0.05 s (a tenth) off the lint of a
#: 5*10^5-message share, for ~20 MiB more at its peak; a fourth added no more.
RULE_THREADS = 3


def _run(rule: Rule, ctx: LintContext) -> pl.DataFrame:
    if rule.revisions != ALL_REVISIONS and ctx.judged_revisions.isdisjoint(rule.revisions):
        # no session speaks a revision the rule applies to: whatever it found would be
        # dropped below, so it is not run (most captures speak one revision)
        return FINDINGS.empty()
    found = rule.check(ctx)
    if found.is_empty():
        return FINDINGS.empty()
    # where each finding points: gathered by position, not joined with every message
    located = ctx.lookup(
        found.select(pl.col("ordinal").cast(pl.Int64), "message"),
        "ordinal",
        inner=True,
        source="source",
        line="line",
        ts="ts",
        session="session",
        revision="revision",
    )
    revision = pl.col("revision")
    applies = revision.is_in(list(rule.revisions))
    if rule.revisions == ALL_REVISIONS:
        applies = applies | revision.is_null() | ~revision.is_in(list(ALL_REVISIONS))
    rows = located.filter(applies)
    # stamped in one query (a query a step cost ~1.5 ms a rule with a few findings)
    columns = {
        **{column: pl.col(column) for column in ("ordinal", "message", "source", "line", "ts")},
        "revision": revision,
        "session": pl.lit(ctx.session_names).gather(pl.col("session")),
        "code": pl.lit(rule.code),
        "name": pl.lit(rule.name),
        "severity": pl.lit(rule.severity),
        "scope": pl.lit(rule.scope),
    }
    if found["message"].str.contains(PLACE_OPEN, literal=True).any():
        return FINDINGS.conform(spelled_places(rows.select(**columns), ctx))
    # no message names another (the usual case): as spelled_places would leave them,
    # conformed in the same query
    columns["related"] = pl.lit([], Related)
    return rows.select(columns[c.name].cast(c.dtype).alias(c.name) for c in FINDINGS.columns)


_PLACED = rf"^(-?\d+){PLACE_CLOSE}"


def _folder(source: str) -> pl.Expr:
    """The folder part of a source path (empty for a bare name)."""
    return pl.col(source).str.replace(r"[^/\\]*$", "")


def spelled_places(found: pl.DataFrame, ctx: LintContext) -> pl.DataFrame:
    """``found`` (with each finding's ``source``) with the other messages its messages
    name (see :func:`~mcptrace.linter.rule.line_of`) spelled ``line N``, or ``line N of
    FILE`` when that message is in another file than the finding's: FILE is the file's
    name when both files are in one folder (as a rotated log's are: the message then
    reads the same wherever the folder is, which baselines rely on), else its path.
    Adds ``related``: those messages' files and lines, in the message's order."""
    marked = found["message"].str.contains(PLACE_OPEN, literal=True).fill_null(False)
    if not marked.any():
        return found.with_columns(related=pl.lit([], Related))
    found = found.with_row_index("_row")
    # each message cut at its placeholders: piece 0 is text, each later piece starts
    # with an ordinal and the closing mark
    pieces = (
        found.filter(marked)
        .select(
            "_row",
            "source",
            _piece=pl.col("message").str.split(PLACE_OPEN),
        )
        .with_columns(_i=pl.int_ranges(pl.col("_piece").list.len()))
        .explode("_piece", "_i")
        .with_columns(
            _at=pl.when(pl.col("_i") > 0).then(pl.col("_piece").str.extract(_PLACED)),
            _rest=pl.when(pl.col("_i") > 0)
            .then(pl.col("_piece").str.replace(_PLACED, ""))
            .otherwise(pl.col("_piece")),
        )
        .with_columns(pl.col("_at").cast(pl.Int64))
    )
    pieces = ctx.lookup(pieces, "_at", _at_source="source", _at_line="line")
    line = fmt("line {}", "_at_line")
    place = (
        pl.when(pl.col("_at").is_null())
        .then(pl.lit(""))
        .when(pl.col("_at_line").is_null())
        .then(pl.lit("a message not in the capture"))
        .when(pl.col("_at_source").eq_missing(pl.col("source")))
        .then(line)
        .when(_folder("_at_source").eq_missing(_folder("source")))
        .then(fmt("{} of {}", line, pl.col("_at_source").str.extract(r"([^/\\]*)$")))
        .otherwise(fmt("{} of {}", line, "_at_source"))
    )
    named = pl.struct(source="_at_source", line="_at_line")
    spelled = pieces.group_by("_row", maintain_order=True).agg(
        message=pl.concat_str(place, pl.col("_rest")).str.join(""),
        related=named.filter(pl.col("_at_line").is_not_null()).unique(maintain_order=True),
    )
    rest = found.filter(~marked).with_columns(related=pl.lit([], Related))
    done = found.filter(marked).drop("message").join(spelled, on="_row", maintain_order="left")
    return pl.concat([rest, done], how="diagonal").sort("_row").drop("_row")


def lint(
    trace: Trace,
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    revision: str | None = None,
    schema_dir: str | Path | None = None,
    allowed_origins: Iterable[str] | None = None,
) -> pl.DataFrame:
    """Lint a trace; returns the findings table (see :data:`mcptrace.schema.FINDINGS`).

    ``select``/``ignore`` take rule codes, code prefixes (``JR``, ``JR0``) or names;
    ``revision`` judges every session by that revision instead of the detected one;
    ``schema_dir`` (layout ``DIR/<revision>/schema.json``) turns on validation against the
    official JSON Schemas (the SC rules); ``allowed_origins`` (serialized origins such as
    ``https://app.example.com``) turns on HT021, which needs to know which `Origin`
    headers the servers should accept. A time window cut with :meth:`Trace.filter` is
    judged with the whole capture around it: the findings are those on its messages.
    """
    if revision is not None and not is_known_revision(revision):
        from mcptrace.errors import UsageError

        raise UsageError(f"unknown revision {revision!r}")
    if trace.window_of is not None:
        # a window cut by Trace.filter: judged with the whole capture around it, else
        # a window starting mid-session would lack its handshake
        whole, since, until = trace.window_of
        found = lint(
            whole,
            select=select,
            ignore=ignore,
            revision=revision,
            schema_dir=schema_dir,
            allowed_origins=allowed_origins,
        )
        return findings_in_window(found, since, until)
    ctx = LintContext(
        trace,
        revision_override=revision,
        schema_dir=Path(schema_dir) if schema_dir else None,
        allowed_origins=tuple(allowed_origins) if allowed_origins is not None else None,
    )
    rules = select_rules(select, ignore)
    cores = workers()
    threads = min(RULE_THREADS, cores + 1 if cores > 1 else 1, len(rules))
    if threads <= 1:
        return merge_findings([_run(rule, ctx) for rule in rules])
    parts = [FINDINGS.empty()] * len(rules)
    schedule = _Schedule(rules)

    def work(prepare: Callable[[], object]) -> None:
        prepare()
        mine = schedule.queue()
        while (i := schedule.next(mine)) is not None:
            parts[i] = _run(rules[i], ctx)

    # One thread pairs the calls while the others find the sessions' identity (the trace
    # does that on a thread of its own meanwhile), build the frames every rule reads
    # and start on the rules that seldom need the calls (EARLY_FAMILIES): with the
    # frames built first, a core idled while the pairing ended. A rule that asks for the
    # calls before they are paired waits for them (they are a once_property: paired
    # once, whichever thread asks first).
    with ThreadPoolExecutor(max_workers=threads) as pool:
        started = [pool.submit(work, ctx.prepare_calls)]
        started += [pool.submit(work, ctx.prepare_frames) for _ in range(threads - 1)]
        for future in started:
            future.result()
    # in the rules' order, so the findings are the same as one by one
    return merge_findings(parts)


#: Families (rule code prefixes) whose rules read the calls only in rare cases (JR: a
#: rejected batch), run first, while the calls are paired. (A test checks that they read
#: none on ordinary traffic; a rule that does read them only waits for the pairing.)
EARLY_FAMILIES = ("JR", "ST")


class _Schedule:
    """The order in which threads take rules. The rules of a family (one module) share
    its memos: a thread takes a whole family, where its first rule builds them and the
    others find them built. (Rules of one family run side by side mostly met at the same
    memo, and one waited while the other built it.) :data:`EARLY_FAMILIES` first, then
    big families, so that the last to end are short; a thread that finds no family left
    takes the last rule of the family with the most rules left, so that the threads end
    together."""

    def __init__(self, rules: list[Rule]) -> None:
        families: dict[str, deque[int]] = {}
        for i, rule in enumerate(rules):
            families.setdefault(rule.family, deque()).append(i)
        early = [families.pop(name) for name in EARLY_FAMILIES if name in families]
        self._waiting = deque([*early, *sorted(families.values(), key=len, reverse=True)])
        self._queues: list[deque[int]] = []
        self._lock = threading.Lock()

    def queue(self) -> deque[int]:
        """A thread's queue: the rules left of the family it took."""
        with self._lock:
            self._queues.append(deque())
            return self._queues[-1]

    def next(self, mine: deque[int]) -> int | None:
        """The next rule for the thread of queue ``mine``, or None when every rule is taken."""
        with self._lock:
            if not mine and self._waiting:
                mine.extend(self._waiting.popleft())
            if mine:
                return mine.popleft()
            busiest = max(self._queues, key=len)
            return busiest.pop() if busiest else None


def findings_in_window(
    findings: pl.DataFrame, since: datetime | None, until: datetime | None
) -> pl.DataFrame:
    """The findings on messages captured between ``since`` and ``until`` (inclusive);
    untimed ones are left out."""
    inside = pl.col("ts").is_not_null()
    if since is not None:
        inside &= pl.col("ts") >= since
    if until is not None:
        inside &= pl.col("ts") <= until
    return findings.filter(inside)


def merge_findings(parts: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """Findings tables as one, in capture order (by ordinal, then code), each finding once."""
    found = [p for p in parts if not p.is_empty()]
    if not found:
        return FINDINGS.empty()
    return (
        pl.concat(found)
        .unique(["code", "ordinal", "message"], maintain_order=True)
        .sort("ordinal", "code", maintain_order=True)
    )
