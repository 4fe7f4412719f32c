"""Turning parsed lines into rows of the messages table.

Every loader, whatever its envelope, ends up with (a) where the line was, (b) the
envelope facts it knows (time, session, direction, ...) and (c) either a parsed
JSON-RPC message or a reason it has none. :class:`RowBuilder` collects those and
:func:`rpc_fields` extracts the typed JSON-RPC columns from an already-parsed
message, so the protocol is interpreted in exactly one place and every JSON
document is parsed exactly once.

This module never reads files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.schema import MESSAGES, Timestamp

_PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

#: params key naming the thing a request acts on (tool, prompt, resource)
_TARGET_KEYS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "resources/subscribe": "uri",
    "resources/unsubscribe": "uri",
    "notifications/resources/updated": "uri",
}

RpcFields = tuple[
    str,  # kind
    str | None,  # id json text
    str | None,  # id type
    str | None,  # method
    str | None,  # target
    int | None,  # error code
    bool | None,  # error code is int
    str | None,  # error message
    str | None,  # result type
    bool | None,  # tool error
    str | None,  # protocol version
    str | None,  # progress token json
    str | None,  # cancel id json
    str | None,  # problem (invalid rows)
]


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value, as used in ``id_type``."""
    t = type(value)
    if t is int:
        return "integer"
    if t is str:
        return "string"
    if value is None:
        return "null"
    if t is bool:
        return "boolean"
    if t is float:
        return "number"
    if t is dict:
        return "object"
    return "array"


def id_text(value: Any) -> str:
    """Exact JSON text of an id-like value (``5`` and ``"5"`` stay distinct)."""
    if type(value) is int:
        return str(value)
    return _json.dumps(value)


def _invalid(problem: str) -> RpcFields:
    return (
        "invalid",
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        problem,
    )


def rpc_fields(msg: Any) -> RpcFields:
    """Classify one parsed JSON value and extract the typed JSON-RPC columns.

    Classification is by keys, not by schema (SPEC_RULES §6, quirk 1): ``method``
    with ``id`` is a request, ``method`` alone a notification, ``error`` an error
    response, ``result`` a success response. Violations such as a wrong
    ``jsonrpc`` value or both ``result`` and ``error`` are left for the linter:
    the row keeps the message text.
    """
    if type(msg) is not dict:
        return _invalid(f"not a JSON-RPC message: a JSON {json_type(msg)}, not an object")
    has_id = "id" in msg
    if has_id:
        raw_id = msg["id"]
        mid: str | None = id_text(raw_id)
        mid_type: str | None = json_type(raw_id)
    else:
        mid = mid_type = None
    method = msg.get("method")
    if method is not None:
        if type(method) is not str:
            return _invalid(f"`method` is a JSON {json_type(method)}, not a string")
        kind = "request" if has_id else "notification"
        target = version = token = cancel = None
        params = msg.get("params")
        if type(params) is dict:
            key = _TARGET_KEYS.get(method)
            if key is not None:
                value = params.get(key)
                if type(value) is str:
                    target = value
            elif method == "completion/complete":
                ref = params.get("ref")
                if type(ref) is dict:
                    value = ref.get("name") or ref.get("uri")
                    if type(value) is str:
                        target = value
            meta = params.get("_meta")
            if type(meta) is dict:
                if "progressToken" in meta:
                    token = id_text(meta["progressToken"])
                v = meta.get(_PROTOCOL_VERSION_KEY)
                if type(v) is str:
                    version = v
            if method == "initialize":
                v = params.get("protocolVersion")
                if type(v) is str:
                    version = v
            elif method == "notifications/progress":
                if "progressToken" in params:
                    token = id_text(params["progressToken"])
            elif method == "notifications/cancelled" and "requestId" in params:
                cancel = id_text(params["requestId"])
        return (
            kind,
            mid,
            mid_type,
            method,
            target,
            None,
            None,
            None,
            None,
            None,
            version,
            token,
            cancel,
            None,
        )
    if "error" in msg:
        error = msg["error"]
        code: int | None = None
        code_is_int: bool | None = False
        message: str | None = None
        if type(error) is dict:
            raw_code = error.get("code")
            if type(raw_code) is int:
                code_is_int = True
                if _INT64_MIN <= raw_code <= _INT64_MAX:
                    code = raw_code
            elif type(raw_code) is float and raw_code.is_integer() and abs(raw_code) < 2**63:
                code = int(raw_code)
            m = error.get("message")
            if type(m) is str:
                message = m
        return (
            "error",
            mid,
            mid_type,
            None,
            None,
            code,
            code_is_int,
            message,
            None,
            None,
            None,
            None,
            None,
            None,
        )
    if "result" in msg:
        result = msg["result"]
        rtype = version = None
        tool_error: bool | None = None
        if type(result) is dict:
            r = result.get("resultType")
            if type(r) is str:
                rtype = r
            if result.get("isError") is True:
                tool_error = True
            # only an InitializeResult carries protocolVersion at the top level
            v = result.get("protocolVersion")
            if type(v) is str and ("serverInfo" in result or "capabilities" in result):
                version = v
        return (
            "response",
            mid,
            mid_type,
            None,
            None,
            None,
            None,
            None,
            rtype,
            tool_error,
            version,
            None,
            None,
            None,
        )
    return _invalid("not a JSON-RPC message: no `method`, `result` or `error` member")


_RPC_COLUMNS = (
    "kind",
    "id",
    "id_type",
    "method",
    "target",
    "error_code",
    "error_code_is_int",
    "error_message",
    "result_type",
    "tool_error",
    "protocol_version",
    "progress_token",
    "cancel_id",
)

#: columns a loader sets per row (the rest are per file or computed later)


def decode_raw(data: bytes) -> tuple[str, str | None]:
    """Decode a line for the ``raw`` column; report invalid UTF-8 with its byte offset."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return (
            data.decode("utf-8", errors="backslashreplace"),
            f"invalid UTF-8 at byte {exc.start}",
        )


@dataclass
class Envelope:
    """What a capture's envelope says about a line, beyond the message itself."""

    ts_text: str | None = None
    ts_us: int | None = None
    session: str | None = None
    server: str | None = None
    direction: str = "unknown"
    direction_inferred: bool = False
    #: the session's two directions were captured apart: their relative order is unknown
    unordered: bool = False
    transport: str | None = None
    http_method: str | None = None
    http_status: int | None = None
    http_headers: str | None = None
    #: the HTTP exchange (request and response) the row belongs to, where the capture
    #: keeps exchanges whole (a HAR entry's index)
    exchange: int | None = None


_NO_ENVELOPE = Envelope()
_ENV_SPARSE = (
    "ts_us",
    "server",
    "direction_inferred",
    "unordered",
    "transport",
    "http_method",
    "http_status",
    "http_headers",
    "exchange",
)


_NO_EXTRAS = (None,) * 9


def text_lines(data: bytes) -> pl.Series | None:
    """The lines of ``data`` (as :func:`~mcptrace.loaders.reader.split_lines` cuts them)
    as a String Series, split in Rust; None when ``data`` is not valid UTF-8."""
    if not data:
        return pl.Series("raw", [], dtype=pl.String)
    try:
        text = pl.Series("raw", [data], dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.ComputeError:
        return None
    lines = text.str.split("\n").explode()
    if data.endswith(b"\n"):
        lines = lines.slice(0, len(lines) - 1)
    if b"\r" in data:
        lines = lines.str.strip_suffix("\r")
    return lines


def fill_context(df: pl.DataFrame, default_session: str) -> pl.DataFrame:
    """Rows that carry no session of their own (bad JSON, stderr) belong to the session
    around them, and a file with no session at all gets ``default_session``; rows without
    a server name take their session's."""
    # skipped when there is nothing to fill: on a big capture each is a full pass
    if df["session"].null_count():
        df = df.with_columns(
            session=pl.col("session").forward_fill().backward_fill().fill_null(default_session)
        )
    return fill_servers(df)


def fill_servers(df: pl.DataFrame) -> pl.DataFrame:
    """Rows without a server name take their session's."""
    if 0 < df["server"].null_count() < df.height:
        df = df.with_columns(server=pl.col("server").forward_fill().backward_fill().over("session"))
    return df


#: columns nearly every row has a value for: kept as plain lists
_DENSE = (
    "line",
    "ts_text",
    "session",
    "direction",
    "kind",
    "id",
    "id_type",
    "method",
    "message",
    "raw",
)
#: columns most rows leave empty: kept as {row index: value}, so the hot path skips them
_SPARSE = (
    "ts_us",
    "server",
    "direction_inferred",
    "unordered",
    "transport",
    "batch_index",
    "target",
    "error_code",
    "error_code_is_int",
    "error_message",
    "result_type",
    "tool_error",
    "protocol_version",
    "progress_token",
    "cancel_id",
    "http_method",
    "http_status",
    "http_headers",
    "exchange",
    "parse_error",
)
_SPARSE_TYPES: dict[str, pl.DataType] = {
    "ts_us": pl.Int64(),
    "direction_inferred": pl.Boolean(),
    "unordered": pl.Boolean(),
    "batch_index": pl.Int32(),
    "error_code": pl.Int64(),
    "error_code_is_int": pl.Boolean(),
    "tool_error": pl.Boolean(),
    "http_status": pl.Int64(),
    "exchange": pl.Int64(),
}


@dataclass
class RowBuilder:
    """Accumulates message rows for one file; :meth:`frame` returns them as a table.

    ``ts_format`` is the strftime format of ``ts_text`` values (``"%+"`` for
    RFC 3339 with zone); ``ts_quality`` says how trustworthy parsed times are;
    ``tz`` names the zone of local wall-clock times (``None`` reads them as UTC).
    The few rows whose time is of another quality than the rest (e.g. a response
    time derived from its request's time) get it with :meth:`override_ts_quality`.

    Storage is split for speed: :data:`_DENSE` columns are lists appended for
    every row, :data:`_SPARSE` ones are dicts filled only where a row has a value.
    """

    source: str
    format: str
    default_session: str
    transport: str = "unknown"
    ts_format: str = "%+"
    ts_quality: str = "exact"
    tz: str | None = None
    #: the message text of most rows is the raw line itself (raw stdio): store it once
    message_is_raw: bool = False
    #: the chunk's lines as a Series (see :func:`text_lines`): ``raw`` is taken from it
    #: by line number, so the hot path passes ``raw=None`` and decodes nothing
    raw_lines: pl.Series | None = None
    first_line: int = 1
    cols: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in _DENSE})
    sparse: dict[str, dict[int, Any]] = field(default_factory=lambda: {c: {} for c in _SPARSE})
    #: row index -> ``ts_quality`` for rows that differ from the builder's (rare)
    ts_quality_rows: dict[int, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.cols["line"])

    def override_ts_quality(self, start: int, quality: str) -> None:
        """Give the rows added since ``start`` (an earlier ``len(self)``) their own
        ``ts_quality``; rows without a time still get ``none``."""
        for i in range(start, len(self)):
            self.ts_quality_rows[i] = quality

    # -- adding rows ------------------------------------------------------------

    def _append(
        self,
        line: int,
        env: Envelope,
        batch_index: int | None,
        fields: RpcFields,
        message: str | None,
        raw: str,
        problem: str | None,
    ) -> None:
        self.append_row(
            line, env.ts_text, env.session, env.direction, fields, message, raw, problem
        )
        i = len(self.cols["line"]) - 1
        sp = self.sparse
        for name in _ENV_SPARSE:
            value = getattr(env, name)
            if value is not None and value is not False:
                sp[name][i] = value
        if batch_index is not None:
            sp["batch_index"][i] = batch_index

    def append_row(
        self,
        line: int,
        ts_text: str | None,
        session: str | None,
        direction: str,
        fields: RpcFields,
        message: str | None,
        raw: str | None,
        problem: str | None,
    ) -> None:
        """The hot path: one row with only the common envelope facts."""
        c = self.cols
        i = len(c["line"])
        c["line"].append(line)
        c["ts_text"].append(ts_text)
        c["session"].append(session)
        c["direction"].append(direction)
        c["kind"].append(fields[0])
        c["id"].append(fields[1])
        c["id_type"].append(fields[2])
        c["method"].append(fields[3])
        c["message"].append(None if self.message_is_raw and message is raw else message)
        c["raw"].append(raw)
        if problem is not None:
            self.sparse["parse_error"][i] = problem
        # fields 4..12 are null for most rows; store only what is there
        extras = fields[4:13]
        if extras != _NO_EXTRAS:
            sparse = self.sparse
            for name, value in zip(_RPC_COLUMNS[4:], extras, strict=True):
                if value is not None:
                    sparse[name][i] = value

    def add_parsed(
        self,
        line: int,
        raw: str,
        msg: Any,
        message_text: str | None,
        env: Envelope = _NO_ENVELOPE,
        note: str | None = None,
    ) -> None:
        """Add a parsed JSON value; a JSON array becomes one row per element (a batch).

        ``message_text`` is the message as it appeared on the wire, when known;
        otherwise compact JSON is written. ``note`` is a warning kept in
        ``parse_error`` on a row that is otherwise valid (e.g. a BOM).
        """
        if type(msg) is list:
            if not msg:
                problem = "empty JSON array (batch)"
                self._append(line, env, None, _invalid(problem), message_text or "[]", raw, problem)
                return
            for i, element in enumerate(msg):
                fields = rpc_fields(element)
                self._append(line, env, i, fields, _json.dumps(element), raw, fields[13] or note)
            return
        fields = rpc_fields(msg)
        if message_text is None:
            message_text = _json.dumps(msg)
        if env is _NO_ENVELOPE:
            self.append_row(
                line, None, None, "unknown", fields, message_text, raw, fields[13] or note
            )
        else:
            self._append(line, env, None, fields, message_text, raw, fields[13] or note)

    def add_text(
        self,
        line: int,
        raw: str,
        text: str,
        env: Envelope = _NO_ENVELOPE,
        note: str | None = None,
    ) -> None:
        """Parse ``text`` as one JSON-RPC message (or batch); bad JSON becomes an invalid row."""
        try:
            msg, mended, mend_note = _json.loads_mending(text)
        except _json.JSONDecodeError as exc:
            problem = _json.describe_error(exc)
            if note:
                problem = f"{note}; {problem}"
            self._append(line, env, None, _invalid(problem), text, raw, problem)
            return
        if mended is not None:
            text = mended
            note = f"{note}; {mend_note}" if note else mend_note
        self.add_parsed(line, raw, msg, text, env, note)

    def add_invalid(
        self,
        line: int,
        raw: str,
        problem: str,
        env: Envelope = _NO_ENVELOPE,
        message: str | None = None,
    ) -> None:
        self._append(line, env, None, _invalid(problem), message, raw, problem)

    def add_other(
        self,
        line: int,
        raw: str,
        kind: str,
        env: Envelope = _NO_ENVELOPE,
        note: str | None = None,
        text: str | None = None,
    ) -> None:
        """A non-protocol row (``stderr``, ``log``, ``transport``, ``blank``); ``text`` is
        its content without the format's prefix, kept in ``message``."""
        fields: RpcFields = (
            kind,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        )
        self._append(line, env, None, fields, text, raw, note)

    # -- output -----------------------------------------------------------------

    def frame(self, *, fill: bool = True) -> pl.DataFrame:
        """The rows as a messages table (``ordinal`` is assigned later by the trace).

        ``fill=False`` leaves rows without a session or server empty, for a chunk of a
        file that :func:`fill_context` completes once all chunks are joined.
        """
        c = self.cols
        n = len(c["line"])
        sp = {name: self._sparse_series(name, n) for name in _SPARSE}
        if self.raw_lines is not None:
            index = pl.Series(c["line"], dtype=pl.Int64) - self.first_line
            raw = self.raw_lines.gather(index).alias("raw")
        else:
            raw = pl.Series("raw", c["raw"], dtype=pl.String)
        message = pl.Series("message", c["message"], dtype=pl.String)
        if self.message_is_raw:
            # sharing the raw column keeps one copy of every line in memory, not two
            message = raw if message.null_count() == n else message.fill_null(raw)
        ts, zoneless = self._timestamps(sp["ts_us"])
        if self.ts_quality_rows:
            per_row = [self.ts_quality] * n
            for i, q in self.ts_quality_rows.items():
                per_row[i] = q
            known = pl.lit(pl.Series(per_row, dtype=pl.String))
        else:
            known = pl.lit(self.ts_quality)
        untimed = pl.when(ts.is_null()).then(pl.lit("none"))
        quality = (
            untimed.when(pl.lit(zoneless)).then(pl.lit("local")).otherwise(known)
            if zoneless is not None
            else untimed.otherwise(known)
        )
        data: dict[str, Any] = {
            "source": _repeated(self.source, n),
            "format": _repeated(self.format, n),
            "line": c["line"],
            "ordinal": None,
            "ts": ts,
            "session": pl.Series(c["session"], dtype=pl.String),
            "server": sp["server"],
            "direction": c["direction"],
            "direction_inferred": sp["direction_inferred"].fill_null(False),
            "unordered": sp["unordered"].fill_null(False),
            "transport": sp["transport"].fill_null(self.transport),
            "batch_index": sp["batch_index"],
            "batched": sp["batch_index"].is_not_null(),
            **{name: c[name] for name in _RPC_COLUMNS[:4]},
            **{name: sp[name] for name in _RPC_COLUMNS[4:]},
            "http_method": sp["http_method"],
            "http_status": sp["http_status"],
            "http_headers": sp["http_headers"],
            "exchange": sp["exchange"],
            "message": message,
            "raw": raw,
            "parse_error": sp["parse_error"],
        }
        df = MESSAGES.from_columns({k: v for k, v in data.items() if k != "ts_quality"})
        df = df.with_columns(ts_quality=quality.cast(MESSAGES.schema["ts_quality"]))
        return fill_context(df, self.default_session) if fill else df

    def _sparse_series(self, name: str, n: int) -> pl.Series:
        dtype = _SPARSE_TYPES.get(name, pl.String())
        values = self.sparse[name]
        if len(values) == n or n <= _SMALL_FRAME:
            return pl.Series(name, [values.get(i) for i in range(n)], dtype=dtype, strict=False)
        if not values:
            return pl.repeat(None, n, dtype=dtype, eager=True).alias(name)
        idx = pl.Series(list(values.keys()), dtype=pl.UInt32)
        vals = pl.Series(list(values.values()), dtype=dtype, strict=False)
        return pl.repeat(None, n, dtype=dtype, eager=True).alias(name).scatter(idx, vals)

    def _timestamps(self, micros: pl.Series) -> tuple[pl.Series, pl.Series | None]:
        texts = pl.Series(self.cols["ts_text"], dtype=pl.String)
        return read_times(texts, micros, self.ts_format, self.tz)


#: rows up to which a column is built from a Python list: ``pl.repeat`` runs a query
#: (~0.2 ms), which a directory of small files pays some twenty times a file
_SMALL_FRAME = 4096


def _repeated(value: str, n: int) -> pl.Series:
    if n <= _SMALL_FRAME:
        return pl.Series([value] * n, dtype=pl.String)
    return pl.repeat(value, n, eager=True, dtype=pl.String)


#: ISO 8601 times without a zone, which some writers put where RFC 3339 is expected
_ZONELESS = ("%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f")


def read_times(
    texts: pl.Series,
    micros: pl.Series | None = None,
    ts_format: str = "%+",
    tz: str | None = None,
) -> tuple[pl.Series, pl.Series | None]:
    """:func:`parse_timestamps`, where an RFC 3339 time that lacks its zone is read as a
    wall-clock time in ``tz`` (UTC when None) rather than dropped; with the rows so read
    (None when there are none): their quality is ``local``, not ``exact``."""
    ts = parse_timestamps(texts, micros, ts_format, tz)
    if ts_format != "%+":
        return ts, None
    missing = ts.is_null() & texts.is_not_null()
    if not missing.any():
        return ts, None
    wall = texts.str.to_datetime(_ZONELESS[0], strict=False, time_unit="us")
    for fmt in _ZONELESS[1:]:
        wall = wall.fill_null(texts.str.to_datetime(fmt, strict=False, time_unit="us"))
    local = (
        wall.dt.replace_time_zone(tz or "UTC", ambiguous="earliest", non_existent="null")
        .dt.convert_time_zone("UTC")
        .cast(Timestamp)
    )
    read = missing & local.is_not_null()
    if not read.any():
        return ts, None
    return ts.fill_null(local).alias("ts"), read


_FIRST_TIME = datetime(1, 1, 1, tzinfo=UTC)
_LAST_TIME = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


def parse_timestamps(
    texts: pl.Series,
    micros: pl.Series | None = None,
    ts_format: str = "%+",
    tz: str | None = None,
) -> pl.Series:
    """The ``ts`` column from time texts in ``ts_format`` (``"%+"``: RFC 3339 with zone;
    otherwise wall-clock times in zone ``tz``, UTC when None), else from ``micros``
    (microseconds since the epoch)."""
    if ts_format == "%+":
        parsed = texts.str.to_datetime("%+", time_zone="UTC", strict=False, time_unit="us")
    else:
        # wall-clock times: read in the given zone (or UTC), then expressed in UTC
        parsed = texts.str.to_datetime(ts_format, strict=False, time_unit="us")
        parsed = parsed.dt.replace_time_zone(tz or "UTC", ambiguous="earliest", non_existent="null")
    parsed = parsed.dt.convert_time_zone("UTC")
    if micros is not None:
        from_epoch = pl.from_epoch(micros, time_unit="us").dt.replace_time_zone("UTC")
        parsed = parsed.fill_null(from_epoch)
    # a time outside years 1..9999 is corrupt (and no Python datetime holds it): unknown
    parsed = parsed.set(~parsed.is_between(_FIRST_TIME, _LAST_TIME).fill_null(True), None)
    return parsed.cast(Timestamp).alias("ts")
