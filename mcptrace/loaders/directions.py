"""Inferring who sent each message when the capture did not record it.

Evidence, strongest first:

1. a request or notification whose method only ever travels one way in every
   revision (``tools/call`` is client to server, ``roots/list`` server to client);
2. a response goes the opposite way of the latest earlier request with its id;
3. a progress notification goes the opposite way of the request that issued its
   token; a cancellation goes the same way as the request it cancels.

Rows that none of these settle (``ping`` both ways, unknown methods, responses
to such requests) stay ``unknown``; the summary counts them as ambiguous.
"""

from __future__ import annotations

import polars as pl

from mcptrace.schema import MESSAGES

_FLIP = {"c2s": "s2c", "s2c": "c2s", "unknown": "unknown"}


def _method_directions(methods: pl.Series) -> dict[str, str]:
    # imported here: only direction-less captures need the catalogue
    from mcptrace.protocol import any_revision_directions

    out: dict[str, str] = {}
    for method in methods.drop_nulls().unique().to_list():
        dirs = any_revision_directions(method)
        out[method] = next(iter(dirs)) if len(dirs) == 1 else "unknown"
    return out


def infer_directions(df: pl.DataFrame) -> pl.DataFrame:
    """Fill ``direction`` where it is ``unknown``; mark what was filled as inferred."""
    if df.is_empty() or not (df["direction"] == "unknown").any():
        return df
    mapping = _method_directions(df["method"])
    work = df.with_row_index("_i").with_columns(
        _d=pl.when(pl.col("direction") != "unknown")
        .then(pl.col("direction").cast(pl.String))
        .when(pl.col("kind").is_in(["request", "notification"]))
        .then(pl.col("method").replace_strict(mapping, default="unknown", return_dtype=pl.String))
        .otherwise(pl.lit("unknown"))
    )
    requests = work.filter((pl.col("kind") == "request") & (pl.col("_d") != "unknown")).select(
        "_i", "id", pl.col("_d").alias("_req_d"), "progress_token"
    )

    def latest_request(keyed: pl.DataFrame, left_on: str, right_on: str) -> pl.DataFrame:
        right = requests.filter(pl.col(right_on).is_not_null()).select(
            "_i", pl.col(right_on).alias(left_on), "_req_d"
        )
        return keyed.sort("_i").join_asof(
            right.sort("_i"), on="_i", by=left_on, strategy="backward", check_sortedness=False
        )

    responses = latest_request(
        work.filter(
            pl.col("kind").is_in(["response", "error"]) & pl.col("id").is_not_null()
        ).select("_i", "id"),
        "id",
        "id",
    ).select("_i", _resp=pl.col("_req_d").replace_strict(_FLIP, default="unknown"))
    progress = latest_request(
        work.filter(pl.col("method") == "notifications/progress").select("_i", "progress_token"),
        "progress_token",
        "progress_token",
    ).select("_i", _prog=pl.col("_req_d").replace_strict(_FLIP, default="unknown"))
    cancels = latest_request(
        work.filter(pl.col("method") == "notifications/cancelled").select(
            "_i", pl.col("cancel_id").alias("id")
        ),
        "id",
        "id",
    ).select("_i", _canc="_req_d")

    work = (
        work.join(responses, on="_i", how="left")
        .join(progress, on="_i", how="left")
        .join(cancels, on="_i", how="left")
        .with_columns(
            _d=pl.when(pl.col("_d") != "unknown")
            .then("_d")
            .otherwise(pl.coalesce("_resp", "_prog", "_canc", pl.lit("unknown")))
        )
        .sort("_i")
    )
    inferred = (pl.col("direction") == "unknown") & (pl.col("_d") != "unknown")
    return work.with_columns(
        direction_inferred=pl.col("direction_inferred") | inferred,
        direction=pl.col("_d").cast(MESSAGES.schema["direction"]),
    ).select(MESSAGES.names)
