"""Secret scanning: where a trace still holds credentials, without showing them.

:func:`scan_messages` runs the redactor of :mod:`mcptrace.redact` in report mode: the
same detectors and rules find the same secrets, so a trace that ``mcptrace redact``
wrote scans clean (placeholders are never reported). Each finding names the file,
line, column of the messages table and detector; the secret itself is never printed.
Its ``fingerprint`` is 12 hex digits of a BLAKE2b hash keyed with a random per-scan
salt: the same secret has the same fingerprint at every place in one scan, so one
leaked token reported at twenty lines is recognisably one token, but a fingerprint
cannot be checked against guessed secrets (short passwords included) and does not
correlate across scans. (Showing the first and last characters was rejected: for a
short password that is most of it.)

``structural`` findings are secret-looking values in protocol structure — a request
id, a tool name, an ``Mcp-*`` header, a session key — which ``redact`` keeps so the
trace still pairs and lints the same; ``--key Mcp-Session-Id`` redacts session ids.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from mcptrace.inputs import PathLike
from mcptrace.redact import RedactionPolicy, Redactor
from mcptrace.schema import Column, Table
from mcptrace.streaming import StreamStats, iter_messages

SECRETS = Table(
    "secrets",
    "One row per secret found by `mcptrace scan`, per line and detector, in capture order.",
    (
        Column("source", pl.String(), "capture file"),
        Column("line", pl.Int64(), "line in that file"),
        Column(
            "column",
            pl.String(),
            "messages columns holding it, comma-separated (message, raw, http_headers, ...)",
        ),
        Column("kind", pl.String(), "detector: jwt, github-token, secret-field, user-key, ..."),
        Column(
            "fingerprint",
            pl.String(),
            "keyed hash of the secret, salted per scan: equal within one scan, never reversible",
        ),
        Column(
            "structural",
            pl.Boolean(),
            "it sits in protocol structure (id, tool name, Mcp-* header, session key) that "
            "redaction keeps",
        ),
    ),
)

_COLUMN_ORDER = ("message", "raw", "http_headers", "parse_error", "server", "session")


def _findings(redactor: Redactor, messages: pl.DataFrame) -> pl.DataFrame:
    _, hits = redactor.redact(messages)
    if hits.is_empty():
        return SECRETS.empty()
    where = messages.select(
        row=pl.int_range(pl.len(), dtype=pl.Int64), ordinal="ordinal", source="source", line="line"
    )
    order = {name: i for i, name in enumerate(_COLUMN_ORDER)}
    located = hits.join(where, on="row", how="left").with_columns(
        _order=pl.col("column").replace_strict(order, default=len(order), return_dtype=pl.Int64)
    )
    keys = ["source", "line", "kind", "fingerprint", "structural"]
    grouped = (
        located.sort("ordinal", "_order")
        .group_by(keys, maintain_order=True)
        .agg(pl.col("column").unique(maintain_order=True).str.join(", "))
    )
    return SECRETS.conform(grouped)


def scan_messages(messages: pl.DataFrame, policy: RedactionPolicy | None = None) -> pl.DataFrame:
    """The secrets in a messages table, by location (see :data:`SECRETS`)."""
    return _findings(Redactor(policy), messages)


def scan_chunks(
    chunks: Iterable[pl.DataFrame], policy: RedactionPolicy | None = None
) -> pl.DataFrame:
    """The secrets in a stream of messages chunks; fingerprints agree across chunks."""
    redactor = Redactor(policy)
    found = [_findings(redactor, chunk) for chunk in chunks]
    found = [f for f in found if not f.is_empty()]
    return pl.concat(found) if found else SECRETS.empty()


def scan_paths(
    paths: PathLike | Iterable[PathLike],
    policy: RedactionPolicy | None = None,
    *,
    format: str | None = None,
    tz: str | None = None,
) -> tuple[pl.DataFrame, StreamStats]:
    """Scan capture files in a stream (memory bounded by the chunk size, plus findings);
    unreadable files are listed in the returned stats."""
    stats = StreamStats()
    found = scan_chunks(iter_messages(paths, format=format, tz=tz, stats=stats), policy)
    return found, stats
