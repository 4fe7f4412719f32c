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

from mcptrace.message_text import json_paths
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


def _parsed(rows: pl.DataFrame, texts: pl.Series, **paths: str) -> pl.DataFrame:
    """``rows`` (with ``_row``, a position in ``texts``) plus one column per JSON path
    (``name=path``) of their message text. Clients and servers of a capture send the
    same handshake to every session: each distinct body is parsed once (a parse per
    path and row cost a third of the identity at 10^6 messages)."""
    return json_paths(_with_text(rows, texts), **paths).drop("message")


def _first_per_session(
    rows: pl.LazyFrame, firsts: pl.DataFrame, texts: pl.Series, *needles: str
) -> pl.DataFrame:
    """The first row per session of ``rows`` (session and ``_row``, a position in
    ``texts``) whose message text contains every needle: session and ``_row``.
    ``firsts``: the first row per session of ``rows`` (session and ``_row``)."""
    has = pl.lit(True)
    for needle in needles:
        has &= pl.col("message").str.contains(needle, literal=True)
    # usually a session's first row already has them: test those first, and scan the
    # text of every row only in the sessions where it does not. The rows carry no text
    # (~0.2 GB for the results and requests of 10^6 messages): only those tested get it
    tested = _with_text(firsts, texts).with_columns(_has=has)
    hits = tested.filter(pl.col("_has")).select("session", "_row")
    misses = tested.filter(~pl.col("_has").fill_null(False))["session"]
    if misses.is_empty():
        return hits
    rest = rows.filter(pl.col("session").is_in(misses.implode())).select("session", "_row")
    found = _with_text(rest.collect(), texts).filter(has)
    return pl.concat(
        [hits, found.filter(pl.col("session").is_first_distinct()).select("session", "_row")]
    )


def _with_text(rows: pl.DataFrame, texts: pl.Series) -> pl.DataFrame:
    """``rows`` (with ``_row``, a position in ``texts``) plus their ``message``."""
    return rows.with_columns(texts.gather(rows["_row"]).alias("message"))


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
    texts = messages["message"]
    request = pl.col("kind") == "request"
    # the rows that name a revision (initialize requests and results, requests with a
    # 2026 _meta): a fifth of the messages at 10^6, most of them 2026 requests. One
    # group-by per session and revision of these rows finds the revisions seen, the
    # revision most 2026 requests name and the first of those requests. The rows are
    # kept as positions, not with their text (see _first_per_session)
    versioned = (
        lazy.with_row_index("_row")
        .filter(pl.col("protocol_version").is_not_null())
        .select(
            "_row",
            "session",
            "protocol_version",
            "kind",
            _modern=(request & (pl.col("method") != "initialize")).fill_null(False),
        )
        .collect()
    )
    by_revision = (
        versioned.with_columns(_first_modern=pl.when("_modern").then("_row"))
        .group_by("session", "protocol_version", maintain_order=True)
        .agg(pl.col("_modern").sum(), pl.col("_first_modern").min())
    )
    # each revision of a session once, in order of first appearance
    seen = by_revision.group_by("session", maintain_order=True).agg(
        pl.col("protocol_version").alias("revisions_seen")
    )
    # per session the revision most of its 2026 requests name (the latest of a tie: the
    # most frequent, then the greatest, comes last), and the first of those requests
    meta_revision = (
        by_revision.filter(pl.col("_modern") > 0)
        .sort("_modern", "protocol_version")
        .group_by("session")
        .agg(
            pl.col("protocol_version").last().alias("meta_revision"),
            pl.col("_first_modern").min().alias("_row"),
        )
    )
    # the agreed revision: the last initialize result's (the responses naming one)
    init_res = _parsed(
        versioned.filter(pl.col("kind") == "response")
        .group_by("session", maintain_order=True)
        .agg(pl.col("protocol_version").last().alias("agreed_revision"), pl.col("_row").last()),
        texts,
        init_server_name="$.result.serverInfo.name",
        init_server_version="$.result.serverInfo.version",
        init_server_caps="$.result.capabilities",
    ).drop("_row")
    # per session the first of each fact any initialize request states (one without a
    # revision may still name its client)
    init_req = (
        _parsed(
            lazy.with_row_index("_row")
            .filter((pl.col("method") == "initialize") & request)
            .select("session", "protocol_version", "_row")
            .collect(),
            texts,
            init_client_name="$.params.clientInfo.name",
            init_client_version="$.params.clientInfo.version",
            init_client_caps="$.params.capabilities",
        )
        .group_by("session", maintain_order=True)
        .agg(
            pl.col("protocol_version").drop_nulls().first().alias("requested_revision"),
            pl.col("init_client_name", "init_client_version", "init_client_caps")
            .drop_nulls()
            .first(),
        )
    )
    # 2026 identity travels on every request and result: parse only the first one per
    # session that carries it (a cheap substring test finds it), not all of them
    meta_client = _parsed(
        _first_per_session(
            versioned.lazy().filter("_modern"),
            meta_revision.select("session", "_row"),
            texts,
            f"{_META}/clientCapabilities",
            f"{_META}/clientInfo",
        ),
        texts,
        meta_client_name=f'$.params._meta["{_META}/clientInfo"].name',
        meta_client_version=f'$.params._meta["{_META}/clientInfo"].version',
        meta_client_caps=f'$.params._meta["{_META}/clientCapabilities"]',
    ).drop("_row")
    results = (
        lazy.with_row_index("_row")
        .filter(pl.col("result_type").is_not_null())
        .select("session", "_row")
        .collect()
    )
    # (a mask of first rows, not unique(): a hash of the session column alone)
    first_results = results.filter(pl.col("session").is_first_distinct())
    server_meta = _parsed(
        _first_per_session(results.lazy(), first_results, texts, f"{_META}/serverInfo"),
        texts,
        meta_server_name=f'$.result._meta["{_META}/serverInfo"].name',
        meta_server_version=f'$.result._meta["{_META}/serverInfo"].version',
    ).drop("_row")
    discover_result = _parsed(
        _first_per_session(results.lazy(), first_results, texts, "supportedVersions"),
        texts,
        disc_server_name="$.result.serverInfo.name",
        disc_server_version="$.result.serverInfo.version",
        _versions="$.result.supportedVersions",
        _caps="$.result.capabilities",
    ).select(
        "session",
        "disc_server_name",
        "disc_server_version",
        disc_server_caps=pl.when(pl.col("_versions").is_not_null()).then("_caps"),
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
    # every session, in order of first appearance (on the column itself: a lazy query's
    # unique cost half as much again)
    found = messages["session"].unique(maintain_order=True).to_frame()
    # the queries over every message run side by side, as one batch
    queries = [header_query]
    if not with_refusal.is_empty():
        queries.append(refused_query)
    header, *judged = pl.collect_all(queries)
    refusals = (
        judged[0]
        if judged
        else pl.DataFrame(schema={"session": pl.String, "refused_only": pl.Boolean})
    )
    meta = meta_revision.drop("_row").join(
        meta_client, on="session", how="left", maintain_order="left"
    )
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
        ident = ident.join(part, on="session", how="left", maintain_order="left")
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
    known = pl.col("transport").filter(pl.col("transport") != "unknown")
    narrow = messages.select(
        "session", "source", "format", "server", "transport", "ts", "ts_quality", "kind"
    ).rechunk()
    base = narrow.group_by("session", maintain_order=True).agg(
        pl.col("source").first(),
        pl.col("format").first(),
        pl.col("server").drop_nulls().first(),
        # the transport most of its messages name; of two named as often, the one named
        # first (mode() gives tied values in no set order)
        known.filter(known.is_in(known.mode().implode())).first().alias("transport"),
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
    # sessions without messages: a null session matches none, as in an anti join
    without_messages = (~pl.col("session").is_in(base["session"].implode())).fill_null(True)
    # usually there are none: the calls' sessions (a row each in call_counts) tell,
    # without a pass over every call
    if not call_counts.filter(without_messages).is_empty():
        call_only = (
            calls.select("session", "request_source", "server", "request_ts", "response_ts")
            .filter(without_messages)
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
        if source_formats is not None:
            call_only = call_only.join(
                source_formats, on="source", how="left", maintain_order="left"
            )
        base = pl.concat([base, call_only], how="diagonal_relaxed")
    sessions = (
        base.join(call_counts, on="session", how="left", maintain_order="left")
        .join(identity.drop("client"), on="session", how="left", maintain_order="left")
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
