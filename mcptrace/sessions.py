"""Sessions: who talked, which protocol revision they spoke, and how we know.

The revision of a session is determined, most trustworthy first (SPEC_RULES §5):

1. ``initialize``: the ``protocolVersion`` of the InitializeResult (the agreed
   revision); if the capture has only the request, the client's proposal;
2. ``meta``: the 2026-07-28 per-request ``_meta`` protocol version (the most
   frequent one, since a client may retry with another after -32022);
3. ``http_header``: the ``MCP-Protocol-Version`` request header;
4. ``fingerprint``: features only one revision has (``resultType``,
   ``server/discover``, ``subscriptions/listen`` -> 2026-07-28; ``tasks/*`` ->
   2025-11-25; ``elicitation/create`` -> 2025-06-18 or later, ...);
5. ``unknown``.

A 2026-07-28 session (by ``meta``, header or fingerprint; no ``initialize``) whose
requests are ``server/discover`` probes the server only refused over HTTP (every
answer a ``4xx``/``5xx`` status, no success, no JSON-RPC error delivered normally and no
modern error -32020..-32022) speaks no revision the capture can tell: that is how a
legacy server answers a 2026-07-28 request ("Anything else identifies a legacy server",
versioning.mdx), and the client then falls back to ``initialize`` in a new HTTP session.
Its revision is ``unknown`` rather than the 2026-07-28 of its requests, which the server
never spoke.

Only the few handshake rows are parsed here (with Polars JSON paths); the
messages table already carries every per-row fact this needs.
"""

from __future__ import annotations

from collections.abc import Collection

import polars as pl

from mcptrace.schema import MESSAGES, SESSIONS

_META = "io.modelcontextprotocol"

#: (method or feature test, revision) in order of preference; weak evidence only
_FINGERPRINTS: tuple[tuple[pl.Expr, str], ...] = (
    (pl.col("result_type").is_not_null(), "2026-07-28"),
    (pl.col("method").is_in(["server/discover", "subscriptions/listen"]), "2026-07-28"),
    (pl.col("method").str.starts_with("tasks/"), "2025-11-25"),
    (pl.col("method") == "notifications/elicitation/complete", "2025-11-25"),
    (pl.col("method") == "elicitation/create", "2025-06-18"),
    (pl.col("batched"), "2025-03-26"),
)


def _path(expr: str) -> pl.Expr:
    return pl.col("message").str.json_path_match(expr)


def _json_at(expr: str) -> pl.Expr:
    """The JSON text at a path (objects come back as JSON text)."""
    return pl.col("message").str.json_path_match(expr)


def _first(expr: pl.Expr, name: str) -> pl.Expr:
    return expr.drop_nulls().first().alias(name)


def _with_text(rows: pl.DataFrame, texts: pl.Series) -> pl.DataFrame:
    """``rows`` (with ``_row``, a position in ``texts``) plus their ``message``."""
    return rows.with_columns(texts.gather(rows["_row"]).alias("message"))


def _first_per_session(
    rows: pl.DataFrame, firsts: pl.DataFrame, texts: pl.Series, *needles: str
) -> pl.DataFrame:
    """The first row per session of ``rows`` (session and ``_row``, a position in
    ``texts``) whose message text contains every needle: session and message.
    ``firsts``: the first row per session of ``rows`` (session and ``_row``, in order of
    first appearance), with its message."""
    has = pl.lit(True)
    for needle in needles:
        has &= pl.col("message").str.contains(needle, literal=True)
    # usually a session's first row already has them: test those first, and scan the
    # text of every row only in the sessions where it does not. The rows carry no text
    # (~0.2 GB for the results and requests of 10^6 messages): only those tested get it
    hits = firsts.filter(has)
    misses = firsts.filter(~has.fill_null(False))["session"]
    if misses.is_empty():
        return hits.select("session", "message")
    rest = _with_text(rows.filter(pl.col("session").is_in(misses.implode())), texts)
    found = rest.filter(has).filter(pl.col("session").is_first_distinct())
    return pl.concat([hits.select("session", "message"), found.select("session", "message")])


def _firsts(rows: pl.DataFrame, texts: pl.Series) -> pl.DataFrame:
    """The first row per session of ``rows`` (see :func:`_first_per_session`), with its
    message. (A mask of first rows, not unique(): a hash of the session column alone)"""
    return _with_text(rows.filter(pl.col("session").is_first_distinct()), texts)


def _telemetry(call_records: pl.DataFrame | None) -> pl.DataFrame:
    """Revision and client per session as call-level records (spans) state them."""
    schema = {"session": pl.String, "telemetry_revision": pl.String, "telemetry_client": pl.String}
    if call_records is None or call_records.is_empty():
        return pl.DataFrame(schema=schema)
    return call_records.group_by("session", maintain_order=True).agg(
        pl.col("revision").drop_nulls().mode().sort().last().alias("telemetry_revision"),
        pl.col("client").drop_nulls().first().alias("telemetry_client"),
    )


def _fingerprinted(ident: pl.DataFrame, messages: pl.LazyFrame, sessions: int) -> pl.DataFrame:
    """``ident`` plus ``fp_revision``: the revision of the first fingerprint test (in order
    of preference) any message of the session passes (``sessions``: how many sessions
    have messages).

    Only a session without stronger evidence (initialize, meta, header or telemetry) is
    judged by its fingerprint (the revision and the refused-probe test take the stronger
    first), so only its messages are tested: usually none, where testing every message
    cost a quarter of the identity at 10^6 messages."""
    stronger = (
        "agreed_revision",
        "requested_revision",
        "meta_revision",
        "header_revision",
        "telemetry_revision",
    )
    needy = ident.filter(pl.all_horizontal(pl.col(stronger).is_null()))["session"]
    if needy.is_empty():
        return ident.with_columns(fp_revision=pl.lit(None, pl.String))
    if needy.len() < sessions:  # else test every message (a needless test changes nothing)
        messages = messages.filter(pl.col("session").is_in(needy.implode(), nulls_equal=True))
    # per row the first test it passes, then the smallest per session
    first_test: pl.Expr = pl.lit(None, pl.Int8)
    for index, (test, _) in reversed(list(enumerate(_FINGERPRINTS))):
        first_test = pl.when(test).then(pl.lit(index, pl.Int8)).otherwise(first_test)
    fingerprint = (
        messages.select("session", _fp=first_test)
        .group_by("session")
        .agg(pl.col("_fp").min())
        .select(
            "session",
            fp_revision=pl.col("_fp").replace_strict(
                {i: rev for i, (_, rev) in enumerate(_FINGERPRINTS)},
                default=None,
                return_dtype=pl.String,
            ),
        )
        .collect()
    )
    return ident.join(fingerprint, on="session", how="left", maintain_order="left")


def identify(messages: pl.DataFrame, call_records: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per session: revision (and how it was known), client and server identity.

    Returns columns session, revision, revision_source, requested_revision,
    revisions_seen, client_name, client_version, server_name, server_version,
    client_capabilities, server_capabilities, client.
    """
    # only the columns used here: filters and group-bys then move far less data. (No
    # rechunk: loaded tables are chunked alike already, and rechunking the message text
    # would copy it)
    messages = messages.select(
        "session",
        "kind",
        "method",
        "direction",
        "batched",
        "result_type",
        "protocol_version",
        "http_headers",
        "http_status",
        "error_code",
        "message",
    )
    lazy = messages.lazy()
    init_req_query = (
        lazy.filter((pl.col("method") == "initialize") & (pl.col("kind") == "request"))
        .group_by("session", maintain_order=True)
        .agg(
            _first(pl.col("protocol_version"), "requested_revision"),
            _first(_path("$.params.clientInfo.name"), "init_client_name"),
            _first(_path("$.params.clientInfo.version"), "init_client_version"),
            _first(_json_at("$.params.capabilities"), "init_client_caps"),
        )
    )
    init_res_query = (
        lazy.filter((pl.col("kind") == "response") & pl.col("protocol_version").is_not_null())
        .group_by("session", maintain_order=True)
        .agg(
            pl.col("protocol_version").last().alias("agreed_revision"),
            pl.col("message")
            .last()
            .str.json_path_match("$.result.serverInfo.name")
            .alias("init_server_name"),
            pl.col("message")
            .last()
            .str.json_path_match("$.result.serverInfo.version")
            .alias("init_server_version"),
            pl.col("message")
            .last()
            .str.json_path_match("$.result.capabilities")
            .alias("init_server_caps"),
        )
    )
    # 2026 identity travels on every request and result: parse only the first one per
    # session that carries it (a cheap substring test finds it), not all of them. The
    # rows are kept as positions, not with their text (see _first_per_session)
    texts = messages["message"]
    modern_req = (
        lazy.with_row_index("_row")
        .filter(
            (pl.col("kind") == "request")
            & (pl.col("method") != "initialize")
            & pl.col("protocol_version").is_not_null()
        )
        .select("session", "protocol_version", "_row")
        .collect()
    )
    # per session the revision most of these requests name, and the first of them (the
    # group-by finds it: no second hash of the session column)
    meta_revision = modern_req.group_by("session", maintain_order=True).agg(
        pl.col("protocol_version").mode().sort().last().alias("meta_revision"),
        pl.col("_row").first(),
    )
    meta_client = _first_per_session(
        modern_req,
        _with_text(meta_revision.select("session", "_row"), texts),
        texts,
        f"{_META}/clientCapabilities",
        f"{_META}/clientInfo",
    ).select(
        "session",
        meta_client_name=_path(f'$.params._meta["{_META}/clientInfo"].name'),
        meta_client_version=_path(f'$.params._meta["{_META}/clientInfo"].version'),
        meta_client_caps=_json_at(f'$.params._meta["{_META}/clientCapabilities"]'),
    )
    results = (
        lazy.with_row_index("_row")
        .filter(pl.col("result_type").is_not_null())
        .select("session", "_row")
        .collect()
    )
    first_results = _firsts(results, texts)
    server_meta = _first_per_session(results, first_results, texts, f"{_META}/serverInfo").select(
        "session",
        meta_server_name=_path(f'$.result._meta["{_META}/serverInfo"].name'),
        meta_server_version=_path(f'$.result._meta["{_META}/serverInfo"].version'),
    )
    discover_result = _first_per_session(results, first_results, texts, "supportedVersions").select(
        "session",
        disc_server_name=_path("$.result.serverInfo.name"),
        disc_server_version=_path("$.result.serverInfo.version"),
        disc_server_caps=pl.when(_path("$.result.supportedVersions").is_not_null()).then(
            _json_at("$.result.capabilities")
        ),
    )
    discover = server_meta.join(discover_result, on="session", how="full", coalesce=True)
    header_query = (
        lazy.filter(pl.col("http_headers").is_not_null() & (pl.col("direction") == "c2s"))
        .with_columns(
            _h=pl.coalesce(
                pl.col("http_headers").str.json_path_match("$['MCP-Protocol-Version']"),
                pl.col("http_headers").str.json_path_match("$['mcp-protocol-version']"),
                pl.col("http_headers").str.json_path_match("$['Mcp-Protocol-Version']"),
            )
        )
        .group_by("session", maintain_order=True)
        .agg(pl.col("_h").drop_nulls().mode().sort().last().alias("header_revision"))
    )
    answers = pl.col("kind").is_in(["response", "error"])
    refused = (pl.col("http_status") >= 400).fill_null(False)
    # only sessions with a refusal are looked at (a cheap test of an integer column first):
    # most captures have none, and then there is no query to run
    with_refusal = lazy.filter(refused).select("session").unique().collect()
    server_side = (pl.col("direction") == "s2c") & pl.col("kind").is_in(
        ["response", "error", "transport"]
    )
    client_requests = (pl.col("direction") == "c2s") & (pl.col("kind") == "request")
    refused_query = (
        lazy.join(with_refusal.lazy(), on="session", how="semi")
        .filter(server_side | client_requests)
        .group_by("session", maintain_order=True)
        .agg(
            refused_only=(server_side & refused).any()
            & ~(server_side & answers & ~refused).any()
            & ~pl.col("error_code").is_between(-32022, -32020).fill_null(False).any()
            # only the era probe: a refused tools/list is more likely a broken request
            # (a missing header, a wrong Accept) to a modern server, judged as 2026
            & (pl.col("method").filter(client_requests) == "server/discover").all()
        )
    )
    seen_query = (
        lazy.filter(pl.col("protocol_version").is_not_null())
        .select("session", "protocol_version")
        # each revision of a session once (in order of first appearance) before the
        # group-by: it then gathers a few rows per session, not every versioned message
        .unique(maintain_order=True)
        .group_by("session", maintain_order=True)
        .agg(pl.col("protocol_version").alias("revisions_seen"))
    )
    # every session, in order of first appearance (on the column itself: a lazy query's
    # unique cost half as much again)
    found = messages["session"].unique(maintain_order=True).to_frame()
    # the queries over every message run side by side, as one batch
    queries = [
        init_req_query,
        init_res_query,
        header_query,
        seen_query,
    ]
    if not with_refusal.is_empty():
        queries.append(refused_query)
    init_req, init_res, header, seen, *judged = pl.collect_all(queries)
    refusals = (
        judged[0]
        if judged
        else pl.DataFrame(schema={"session": pl.String, "refused_only": pl.Boolean})
    )
    meta = meta_revision.drop("_row").join(meta_client, on="session", how="left")
    found = found.join(seen, on="session", how="left", maintain_order="left").with_columns(
        pl.col("revisions_seen").fill_null(pl.lit([], dtype=pl.List(pl.String)))
    )

    telemetry = _telemetry(call_records)
    # sessions known only from call records still need a row here
    ident = pl.concat(
        [found, telemetry.select("session").join(found, on="session", how="anti")],
        how="diagonal_relaxed",
    )
    for part in (init_req, init_res, meta, discover, header, telemetry, refusals):
        ident = ident.join(part, on="session", how="left")
    ident = _fingerprinted(ident, lazy, found.height)
    # a refused session's 2026 evidence is the client's alone (see the module doc)
    unspoken = (
        pl.col("refused_only").fill_null(False)
        & pl.col("agreed_revision").is_null()
        & pl.col("requested_revision").is_null()
        & (pl.coalesce("meta_revision", "header_revision", "fp_revision") >= "2026-07-28")
    )
    ident = ident.with_columns(
        [
            pl.when(unspoken).then(None).otherwise(pl.col(name)).alias(name)
            for name in ("meta_revision", "header_revision", "fp_revision")
        ]
    )
    ident = ident.with_columns(
        revision=pl.coalesce(
            "agreed_revision",
            "requested_revision",
            "meta_revision",
            "header_revision",
            "telemetry_revision",
            "fp_revision",
        ),
        revision_source=pl.when(
            pl.col("agreed_revision").is_not_null() | pl.col("requested_revision").is_not_null()
        )
        .then(pl.lit("initialize"))
        .when(pl.col("meta_revision").is_not_null())
        .then(pl.lit("meta"))
        .when(pl.col("header_revision").is_not_null())
        .then(pl.lit("http_header"))
        .when(pl.col("telemetry_revision").is_not_null())
        .then(pl.lit("telemetry"))
        .when(pl.col("fp_revision").is_not_null())
        .then(pl.lit("fingerprint"))
        .otherwise(pl.lit("unknown")),
        client_name=pl.coalesce("init_client_name", "meta_client_name", "telemetry_client"),
        client_version=pl.coalesce("init_client_version", "meta_client_version"),
        server_name=pl.coalesce("init_server_name", "disc_server_name", "meta_server_name"),
        server_version=pl.coalesce(
            "init_server_version", "disc_server_version", "meta_server_version"
        ),
        client_capabilities=pl.coalesce("init_client_caps", "meta_client_caps"),
        server_capabilities=pl.coalesce("init_server_caps", "disc_server_caps"),
    )
    return ident.select(
        "session",
        "revision",
        pl.col("revision_source").cast(SESSIONS.schema["revision_source"]),
        "requested_revision",
        "revisions_seen",
        "client_name",
        "client_version",
        "server_name",
        "server_version",
        "client_capabilities",
        "server_capabilities",
        pl.col("client_name").alias("client"),
    )


def build_sessions(
    messages: pl.DataFrame,
    calls: pl.DataFrame,
    identity: pl.DataFrame,
    *,
    truncated_sources: Collection[str] = (),
    source_formats: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per session, in order of first appearance; sessions known only from call
    records (spans) follow. ``source_formats`` (source, format) names their formats."""
    MESSAGES.validate(messages)
    kind = pl.col("kind")
    quality_rank = pl.col("ts_quality").to_physical()
    truncated = (
        pl.col("source").is_in(list(truncated_sources)).any()
        if truncated_sources
        else pl.lit(False)  # nothing to test per row
    )
    narrow = messages.select(
        "session", "source", "format", "server", "transport", "ts", "ts_quality", "kind"
    ).rechunk()
    base = narrow.group_by("session", maintain_order=True).agg(
        pl.col("source").first(),
        pl.col("format").first(),
        pl.col("server").drop_nulls().first(),
        pl.col("transport")
        .filter(pl.col("transport") != "unknown")
        .mode()
        .first()
        .alias("transport"),
        pl.col("ts").min().alias("first_ts"),
        pl.col("ts").max().alias("last_ts"),
        pl.col("ts_quality").sort_by(quality_rank).last().alias("ts_quality"),
        pl.len().cast(pl.Int64).alias("messages"),
        (kind == "request").sum().cast(pl.Int64).alias("requests"),
        (kind == "notification").sum().cast(pl.Int64).alias("notifications"),
        (kind == "response").sum().cast(pl.Int64).alias("responses"),
        (kind == "error").sum().cast(pl.Int64).alias("errors"),
        (kind == "invalid").sum().cast(pl.Int64).alias("invalid"),
        kind.is_in(["stderr", "log", "transport", "blank"]).sum().cast(pl.Int64).alias("other"),
        truncated.alias("truncated"),
    )
    call_only = (
        calls.select("session", "request_source", "server", "request_ts", "response_ts")
        # sessions without messages: a null session matches none, as in an anti join
        .filter((~pl.col("session").is_in(base["session"].implode())).fill_null(True))
        .group_by("session", maintain_order=True)
        .agg(
            pl.col("request_source").drop_nulls().first().alias("source"),
            pl.col("server").drop_nulls().first(),
            pl.min_horizontal(pl.col("request_ts").min(), pl.col("response_ts").min()).alias(
                "first_ts"
            ),
            pl.max_horizontal(pl.col("request_ts").max(), pl.col("response_ts").max()).alias(
                "last_ts"
            ),
            pl.len().cast(pl.Int64).alias("requests"),
        )
        .with_columns(
            ts_quality=pl.when(pl.col("first_ts").is_null())
            .then(pl.lit("none"))
            .otherwise(pl.lit("exact")),
            messages=pl.lit(0, pl.Int64),
            truncated=pl.col("source").is_in(list(truncated_sources)),
        )
    )
    if not call_only.is_empty():
        if source_formats is not None:
            call_only = call_only.join(source_formats, on="source", how="left")
        base = pl.concat([base, call_only], how="diagonal_relaxed")
    call_counts = (
        calls.select("session", "outcome")
        .group_by("session")
        .agg(
            pl.col("outcome")
            .is_in(["unanswered", "cancelled"])
            .sum()
            .cast(pl.Int64)
            .alias("unanswered"),
            (pl.col("outcome") == "orphan").sum().cast(pl.Int64).alias("orphans"),
            (pl.col("outcome") != "orphan").sum().cast(pl.Int64).alias("calls"),
        )
    )
    sessions = (
        base.join(call_counts, on="session", how="left")
        .join(identity.drop("client"), on="session", how="left")
        .with_columns(
            pl.col(
                "unanswered",
                "orphans",
                "calls",
                "notifications",
                "responses",
                "errors",
                "invalid",
                "other",
            ).fill_null(0),
            duration_s=(pl.col("last_ts") - pl.col("first_ts")).dt.total_microseconds() / 1e6,
            transport=pl.col("transport").fill_null("unknown"),
            revision_source=pl.col("revision_source").fill_null("unknown"),
        )
    )
    return SESSIONS.conform(sessions)
