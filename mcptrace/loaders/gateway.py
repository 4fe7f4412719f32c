"""mcpproxy-go activity exports (``mcpproxy activity export``): one record per line.

    {"id": "01JRZ8W4Q1...", "type": "tool_call", "source": "mcp", "server_name": "github",
     "tool_name": "create_issue", "status": "success", "duration_ms": 245,
     "timestamp": "2026-04-09T14:03:11.842113Z", "session_id": "mcp-session-3f1c...",
     "request_id": "a1b2...", "metadata": {"client_name": "claude-code"},
     "has_sensitive_data": false}

Sources (``smart-mcp-proxy/mcpproxy-go``): the export endpoint
``handleExportActivity`` in ``internal/httpapi/activity.go`` (JSON Lines of
``contracts.ActivityRecord``, ``internal/contracts/activity.go``; newest first);
the stored record ``storage.ActivityRecord`` and its type and status vocabularies
in ``internal/storage/activity_models.go``; how records are made in
``internal/runtime/activity_service.go`` and ``internal/runtime/event_bus.go``;
the command and its example output in ``docs/cli/activity-commands.md``.

These are call records, not protocol messages: the proxy writes one when a call
it forwarded (or refused) is over. So this loader returns no message rows for
them but call records (:attr:`LoadResult.calls`), in the calls table's schema:

* ``tool_call`` (a ``tools/call`` mcpproxy sent upstream), ``prompt_get``
  (``prompts/get``; ``tool_name`` is the prompt) and ``internal_tool_call``
  (a ``tools/call`` of one of mcpproxy's own tools, e.g. ``retrieve_tools``; server
  ``mcpproxy``). ``internal_tool_call`` records of ``call_tool_*`` only mirror the
  ``tool_call`` record of the same dispatch, so they are ``log`` rows, not calls.
* session: ``session_id`` (the MCP transport session between the client and the
  proxy), else ``work_session_id``, else the server; client:
  ``metadata.client_name``, except ``mcpproxy`` for the calls mcpproxy's
  ``code_execution`` made itself (``parent_id`` names that call); server
  ``server_name``; target ``tool_name``.
* times: ``timestamp`` is taken when the call completed (``newEvent`` in
  ``internal/runtime/events.go``), so it is the response time; the request time is
  ``timestamp - duration_ms``. ``duration_ms`` is dropped by Go's ``omitempty``
  when it is 0, so a record without it took 0 ms (e.g. refused before dispatch).
* outcome: ``success`` is ok; ``error`` covers both failed calls and upstream
  answers with ``isError: true``: it is ``tool_error`` when the exported
  ``response`` (with ``--include-bodies``) is a result with ``isError: true``,
  else ``error``; ``blocked`` (policy) and ``rejected`` (concurrency limit) are
  ``error`` with the reason as the message.
* ``request_source``/``request_line`` (and the response ones) point at the record.

Every other line is a message row: other record types (``system_start``,
``policy_decision``, ``config_change``, ...) are ``log`` rows (in session
``mcpproxy`` unless they name one), blank lines ``blank``, bad lines ``invalid``.
The CSV export (``--format csv``) is not read.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.loaders.base import MAX_DURATION_MS, Head, LoadContext, LoadResult, line_list
from mcptrace.loaders.reader import Content
from mcptrace.loaders.rows import Envelope, RowBuilder, decode_raw, json_type
from mcptrace.schema import CALLS, Timestamp

NAME = "mcpproxy-activity"
DESCRIPTION = "mcpproxy-go `activity export` JSONL: tool-call records with status and duration_ms"

#: record types that are calls, and the method they stand for
_CALL_METHODS = {
    "tool_call": "tools/call",
    "internal_tool_call": "tools/call",
    "prompt_get": "prompts/get",
}
_TYPES = frozenset(
    {
        *_CALL_METHODS,
        "policy_decision",
        "quarantine_change",
        "server_change",
        "system_start",
        "system_stop",
        "config_change",
        "tool_quarantine_change",
        "security_scan",
        "credential_broker",
        "preflight",
    }
)
_STATUSES = {"success", "error", "blocked", "rejected"}
_PROXY = "mcpproxy"
_MIRROR_PREFIX = "call_tool_"


def _is_record(o: dict[str, Any]) -> bool:
    if "timestamp" not in o or "id" not in o:
        return False
    t = o.get("type")
    if type(t) is str and t in _TYPES:
        return True
    # a type from a newer mcpproxy: still recognisably an activity record
    return type(t) is str and "status" in o and ("server_name" in o or "tool_name" in o)


def sniff(head: Head) -> int:
    objs = head.json_objects()
    if not objs:
        return 0
    hits = sum(1 for o in objs if _is_record(o))
    return 95 if hits == len(objs) else (70 if hits * 2 > len(objs) else 0)


def _dict(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def _str(value: Any) -> str | None:
    return value if type(value) is str and value else None


def _outcome(rec: dict[str, Any]) -> tuple[str, str | None]:
    status = rec.get("status")
    message = _str(rec.get("error_message"))
    if status == "success":
        return "ok", message
    if status == "error":
        response = rec.get("response")
        if type(response) is str and response.lstrip().startswith("{"):
            try:
                body = _json.loads(response)
            except _json.JSONDecodeError:
                body = None
            if type(body) is dict and body.get("isError") is True:
                return "tool_error", message
        return "error", message
    meta = _dict(rec.get("metadata"))
    if status == "blocked":
        return "error", message or "blocked by an mcpproxy policy"
    if status == "rejected":
        reason = _str(meta.get("rejection_reason"))
        return "error", message or (
            f"rejected by mcpproxy ({reason})" if reason else "rejected by mcpproxy"
        )
    return "error", message or f"mcpproxy status {_json.dumps(status)}"


def _session(rec: dict[str, Any], server: str | None) -> str:
    return _str(rec.get("session_id")) or _str(rec.get("work_session_id")) or server or _PROXY


def _log_text(rec: dict[str, Any]) -> str:
    parts = [str(rec.get("type"))]
    for key in ("status", "server_name", "tool_name"):
        value = _str(rec.get(key))
        if value:
            parts.append(value)
    error = _str(rec.get("error_message"))
    if error:
        parts.append(f"({error})")
    return " ".join(parts)


def load(content: Content, ctx: LoadContext) -> LoadResult:
    rows = RowBuilder(source=ctx.source, tz=ctx.tz, format=NAME, default_session=_PROXY)
    n_lines = len(content.lines)
    calls: dict[str, list[Any]] = {
        name: []
        for name in (
            "session",
            "server",
            "client",
            "method",
            "target",
            "request_line",
            "ts",
            "duration",
            "outcome",
            "error_message",
        )
    }
    mirrors = sub_calls = 0
    unknown_status: set[str] = set()
    bad_durations: list[int] = []
    incomplete_last = False
    for lineno, data in enumerate(content.lines, 1):
        raw, utf8_problem = decode_raw(data)
        if not raw.strip():
            rows.add_other(lineno, raw, "blank", Envelope(session=_PROXY), utf8_problem)
            continue
        try:
            rec = _json.loads(data)
        except _json.JSONDecodeError as exc:
            problem = utf8_problem or _json.describe_error(exc)
            if lineno == n_lines and not content.data.endswith(b"\n"):
                incomplete_last = True
                problem = f"incomplete last record: {problem}"
            rows.add_invalid(lineno, raw, f"activity record is not valid JSON: {problem}")
            continue
        if type(rec) is not dict or "type" not in rec:
            what = "without a `type`" if type(rec) is dict else f"a JSON {json_type(rec)}"
            rows.add_invalid(lineno, raw, f"activity record is {what}")
            continue
        kind = rec.get("type")
        tool = _str(rec.get("tool_name"))
        method = _CALL_METHODS.get(kind) if type(kind) is str else None
        server: str | None
        if kind == "internal_tool_call":
            server = _PROXY
            if tool is not None and tool.startswith(_MIRROR_PREFIX):
                mirrors += 1
                method = None
        else:
            server = _str(rec.get("server_name"))
        ts = rec.get("timestamp")
        if method is None:
            env = Envelope(
                ts_text=ts if type(ts) is str else None,
                session=_str(rec.get("session_id")) or _PROXY,
                server=server,
            )
            note = (
                "mirrors the tool_call record of the same dispatch"
                if kind == "internal_tool_call"
                else None
            )
            rows.add_other(lineno, raw, "log", env, note, text=_log_text(rec))
            continue
        status = rec.get("status")
        if type(status) is not str or status not in _STATUSES:
            unknown_status.add(_json.dumps(status))
        outcome, message = _outcome(rec)
        meta = _dict(rec.get("metadata"))
        duration = rec.get("duration_ms", 0)
        calls["session"].append(_session(rec, server))
        calls["server"].append(server)
        if type(rec.get("parent_id")) is str:
            # a call mcpproxy's code_execution made itself (2026-08): not the agent's
            sub_calls += 1
            calls["client"].append(_PROXY)
        else:
            calls["client"].append(_str(meta.get("client_name")))
        calls["method"].append(method)
        calls["target"].append(tool)
        calls["request_line"].append(lineno)
        calls["ts"].append(ts if type(ts) is str else None)
        if isinstance(duration, int | float) and type(duration) is not bool:
            if 0 <= duration <= MAX_DURATION_MS:
                calls["duration"].append(float(duration))
            else:
                calls["duration"].append(None)
                bad_durations.append(lineno)
        else:
            calls["duration"].append(None)
        calls["outcome"].append(outcome)
        calls["error_message"].append(message)

    notes: list[str] = []
    if sub_calls:
        notes.append(
            f"{sub_calls} call(s) made by mcpproxy's code_execution (with a `parent_id`): "
            "their client is mcpproxy, and they ran inside that call"
        )
    if calls["session"]:
        notes.append(
            f"{len(calls['session'])} call record(s): no protocol messages; request times "
            "are the completion time minus duration_ms"
        )
    if mirrors:
        notes.append(
            f"{mirrors} internal call_tool_* record(s) mirror tool_call records: kept as log "
            "rows, not counted as calls"
        )
    if bad_durations:
        notes.append(
            f"{len(bad_durations)} call record(s) with a negative or impossibly long "
            f"duration_ms (line {line_list(bad_durations)}): their latency is unknown"
        )
    if unknown_status:
        notes.append(f"unknown status value(s) {', '.join(sorted(unknown_status))}: read as error")
    if incomplete_last:
        notes.append("the last record is incomplete (the export was cut off)")
    return LoadResult(
        messages=rows.frame(),
        lines=n_lines,
        truncated=incomplete_last,
        notes=notes,
        calls=_calls_frame(calls, ctx.source),
    )


def _calls_frame(calls: dict[str, list[Any]], source: str) -> pl.DataFrame:
    n = len(calls["session"])
    df = pl.DataFrame(
        {
            "session": pl.Series(calls["session"], dtype=pl.String),
            "server": pl.Series(calls["server"], dtype=pl.String),
            "client": pl.Series(calls["client"], dtype=pl.String),
            "method": pl.Series(calls["method"], dtype=pl.String),
            "target": pl.Series(calls["target"], dtype=pl.String),
            "request_line": pl.Series(calls["request_line"], dtype=pl.Int64),
            "ts": pl.Series(calls["ts"], dtype=pl.String),
            "latency_ms": pl.Series(calls["duration"], dtype=pl.Float64),
            "outcome": pl.Series(calls["outcome"], dtype=pl.String),
            "error_message": pl.Series(calls["error_message"], dtype=pl.String),
        }
    )
    response_ts = (
        pl.col("ts")
        .str.to_datetime("%+", time_zone="UTC", strict=False, time_unit="us")
        .cast(Timestamp)
    )
    lat = pl.col("latency_ms")
    df = df.with_columns(
        direction=pl.lit("c2s"),
        request_source=pl.lit(source),
        response_source=pl.lit(source),
        response_line=pl.col("request_line"),
        response_ts=response_ts,
        request_ts=response_ts - pl.duration(microseconds=(lat * 1000).round().cast(pl.Int64)),
        cancelled=pl.lit(False),
    ).with_columns(
        # no time, no latency: the duration alone cannot be placed
        latency_ms=pl.when(pl.col("response_ts").is_null()).then(None).otherwise(lat)
    )
    return CALLS.conform(df) if n else CALLS.empty()
