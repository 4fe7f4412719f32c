"""Tool calls that hosts log as lines of text, not as messages (Claude Code, Cursor).

Such logs say when a tool was called and how the call ended, not the JSON-RPC
messages: each call becomes a call record (:attr:`LoadResult.calls`) in the calls
table's schema, method ``tools/call``, direction ``c2s``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from mcptrace.schema import CALLS, Timestamp

#: ``MCP error -32000: Connection closed`` in a host's failure text. A code of up to 18
#: digits fits the table's 64-bit column; a longer one stays in the message as written
MCP_ERROR = re.compile(r"MCP error (?P<code>-?\d{1,18}): (?P<msg>.*)$", re.S)


@dataclass
class ToolCall:
    """One logged tool call; times in microseconds since the epoch (UTC)."""

    session: str
    server: str | None
    tool: str
    #: the request id as JSON text, when the log names one
    id: str | None = None
    request_line: int | None = None
    request_ts: int | None = None
    response_line: int | None = None
    response_ts: int | None = None
    latency_ms: float | None = None
    outcome: str = "unanswered"
    error_code: int | None = None
    error_message: str | None = None
    #: the request time was derived from the response's time and a logged duration
    derived_request: bool = False

    def failed(self, why: str) -> None:
        """The call ended with an error whose text is ``why`` (its code read if there)."""
        self.outcome = "error"
        self.error_message = why
        code = MCP_ERROR.search(why)
        if code is not None:
            self.error_code = int(code["code"])
            self.error_message = code["msg"]


def calls_frame(calls: list[ToolCall], source: str, client: str) -> pl.DataFrame:
    """The calls as call records of ``source``, by the line they were requested at."""
    if not calls:
        return CALLS.empty()
    calls = sorted(calls, key=lambda c: c.request_line or c.response_line or 0)
    ts = pl.Series([c.request_ts for c in calls], dtype=pl.Int64)
    rts = pl.Series([c.response_ts for c in calls], dtype=pl.Int64)
    ids = [c.id for c in calls]
    df = pl.DataFrame(
        {
            "session": [c.session for c in calls],
            "server": [c.server for c in calls],
            "client": [client] * len(calls),
            "direction": ["c2s"] * len(calls),
            "id": pl.Series(ids, dtype=pl.String),
            "id_type": pl.Series(["string" if i is not None else None for i in ids]),
            "method": ["tools/call"] * len(calls),
            "target": [c.tool for c in calls],
            "request_source": [source] * len(calls),
            "request_line": pl.Series([c.request_line for c in calls], dtype=pl.Int64),
            "request_ts": pl.from_epoch(ts, time_unit="us").dt.replace_time_zone("UTC"),
            "response_source": [source if c.response_line else None for c in calls],
            "response_line": pl.Series([c.response_line for c in calls], dtype=pl.Int64),
            "response_ts": pl.from_epoch(rts, time_unit="us").dt.replace_time_zone("UTC"),
            "latency_ms": pl.Series([c.latency_ms for c in calls], dtype=pl.Float64),
            "outcome": [c.outcome for c in calls],
            "error_code": pl.Series([c.error_code for c in calls], dtype=pl.Int64),
            "error_message": pl.Series([c.error_message for c in calls], dtype=pl.String),
            "cancelled": [False] * len(calls),
        }
    )
    return CALLS.conform(df.with_columns(pl.col("request_ts", "response_ts").cast(Timestamp)))
