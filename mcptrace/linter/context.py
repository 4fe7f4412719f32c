"""What rules see: the trace's tables, prepared once and shared by every rule.

Rules are short Polars queries over these frames. Anything several rules need
(the revision of each message, its era, the request a response answers) is
computed here once, not rebuilt inside each rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import polars as pl

from mcptrace.trace import Trace


@dataclass
class LintContext:
    """Frames for the rules; ``messages`` has extra columns, documented on the property."""

    trace: Trace
    revision_override: str | None = None
    #: folder with the official schemas as ``<revision>/schema.json`` (--schema-dir)
    schema_dir: Path | None = None
    _memo: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)

    def memo(self, key: str, build: Callable[[LintContext], pl.DataFrame]) -> pl.DataFrame:
        """A frame several rules of one family share, built once per lint run."""
        if key not in self._memo:
            self._memo[key] = build(self)
        return self._memo[key]

    @cached_property
    def session_revisions(self) -> pl.DataFrame:
        """session, revision (after --revision), revision_source."""
        s = self.trace.sessions.select("session", "revision", "revision_source")
        if self.revision_override is not None:
            s = s.with_columns(
                revision=pl.lit(self.revision_override), revision_source=pl.lit("override")
            )
        return s

    @cached_property
    def messages(self) -> pl.DataFrame:
        """The messages table plus ``revision`` (of the session, or --revision) and
        ``modern`` (revision is 2026-07-28 or later)."""
        revs = self.session_revisions.select("session", "revision")
        return self.trace.messages.join(revs, on="session", how="left").with_columns(
            modern=pl.col("revision").fill_null("") >= "2026-07-28"
        )

    @cached_property
    def calls(self) -> pl.DataFrame:
        """The calls table with ``revision`` replaced by the judged revision."""
        revs = self.session_revisions.select("session", "revision")
        return self.trace.calls.drop("revision").join(revs, on="session", how="left")

    @cached_property
    def sessions(self) -> pl.DataFrame:
        return self.trace.sessions

    @cached_property
    def protocol(self) -> pl.DataFrame:
        """Only JSON-RPC rows (requests, notifications, responses, errors)."""
        return self.messages.filter(
            pl.col("kind").is_in(["request", "notification", "response", "error"])
        )

    @cached_property
    def requests(self) -> pl.DataFrame:
        return self.messages.filter(pl.col("kind") == "request")

    @cached_property
    def notifications(self) -> pl.DataFrame:
        return self.messages.filter(pl.col("kind") == "notification")

    @cached_property
    def responses(self) -> pl.DataFrame:
        """Success and error responses, with the answered request's ``request_method``
        and ``request_ordinal`` (null for orphans)."""
        answered = self.calls.filter(pl.col("response_ordinal").is_not_null()).select(
            ordinal="response_ordinal", request_method="method", request_ordinal="request_ordinal"
        )
        return self.messages.filter(pl.col("kind").is_in(["response", "error"])).join(
            answered, on="ordinal", how="left"
        )

    @cached_property
    def locator(self) -> pl.DataFrame:
        """ordinal -> source, line, session, revision: where a finding points."""
        return self.messages.select("ordinal", "source", "line", "session", "revision")
