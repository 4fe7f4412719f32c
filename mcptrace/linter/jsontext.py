"""JSON text helpers the rules share: a vectorised tokenizer, JSON paths of the message.

:func:`json_tokens` lets the MT, RS, ER and SB rules walk the keys of an object or the
elements of an array for every row at once, without decoding JSON row by row in Python.
"""

from __future__ import annotations

import polars as pl

#: One JSON token: a string literal, a structural character, or a bare scalar.
_TOKEN = r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^{}\[\]:,"\s]+'


def json_tokens(frame: pl.DataFrame, text: str) -> pl.DataFrame:
    """Tokenize the JSON text in column ``text``: one row per token.

    Returns ``ordinal`` (of the input row), ``row`` (input row index), ``pos``
    (token index in the text), ``tok``, ``depth`` (containers open before the
    token: the members of a top-level object are at depth 1), ``is_key`` (a string
    followed by ``:``), ``value`` (for keys: the token after the colon, ``{`` or
    ``[`` when the value is a container) and ``member`` (the depth-1 key or
    depth-1 array element index the token belongs to, as text).
    Rows whose text is null produce no tokens. The text must be valid JSON.
    """
    toks = (
        frame.select("ordinal", pl.col(text).str.extract_all(_TOKEN).alias("tok"))
        .with_row_index("row")
        .explode("tok")
        .drop_nulls("tok")
        .with_columns(pos=pl.int_range(pl.len()).over("row"))
    )
    opens = pl.col("tok").is_in(["{", "["])
    closes = pl.col("tok").is_in(["}", "]"])
    delta = opens.cast(pl.Int32) - closes.cast(pl.Int32)
    toks = toks.with_columns(depth=(delta.cum_sum() - delta).over("row"))
    same_row_next = pl.col("row").shift(-1) == pl.col("row")
    toks = toks.with_columns(
        is_key=pl.col("tok").str.starts_with('"')
        & same_row_next
        & (pl.col("tok").shift(-1) == ":"),
        value=pl.when(pl.col("row").shift(-2) == pl.col("row")).then(pl.col("tok").shift(-2)),
    )
    # depth-1 member: an object's key, or an array element's index
    top_is_array = pl.col("tok").first().over("row") == "["
    element_start = (pl.col("depth") == 1) & ~pl.col("tok").is_in([",", "]", "}"])
    member = (
        pl.when(top_is_array & element_start)
        .then((element_start.cast(pl.Int32).cum_sum().over("row") - 1).cast(pl.String))
        .when(~top_is_array & (pl.col("depth") == 1) & pl.col("is_key"))
        .then(pl.col("tok"))
    )
    return toks.with_columns(member=member.forward_fill().over("row"))


def unquote(expr: pl.Expr) -> pl.Expr:
    """A JSON string token without its quotes (escapes other than ``\\/`` kept)."""
    return (
        expr.str.strip_prefix('"').str.strip_suffix('"').str.replace_all(r"\\/", "/", literal=True)
    )


def path(p: str) -> pl.Expr:
    """The value at JSON path ``p`` of the message (text; objects as compact JSON)."""
    return pl.col("message").str.json_path_match(p)


def content(frame: pl.DataFrame) -> pl.DataFrame:
    """Rows whose message body is available (not reconstructed or damaged)."""
    return frame.filter(pl.col("parse_error").is_null())
