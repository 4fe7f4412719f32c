"""Pairing's fast paths fall back to the exact ones where their premises fail."""

from __future__ import annotations

import polars as pl
from factories import WriteLines, rec, req, res

import mcptrace
from mcptrace.calls import pair_calls


def test_requests_sharing_an_ordinal_are_paired_as_by_ordinal(write_lines: WriteLines) -> None:
    """Each response matched a request row of its own, but two of those requests have
    the same ordinal (a hand-built table: every loaded one numbers its rows): the
    response to the second is then not the first to answer that ordinal, and pairs
    with the earlier request of its id still waiting, as the ordinals say."""
    path = write_lines(
        [
            rec(req(1, "tools/list")),
            rec(req(2, "prompts/list")),
            rec(req(2, "resources/list")),
            rec(res(1), dir="s2c"),
            rec(res(2), dir="s2c"),
        ]
    )
    messages = mcptrace.load(path).messages.with_columns(ordinal=pl.Series([2, 1, 2, 3, 4]))
    calls = pair_calls(messages).select("method", "request_ordinal", "response_ordinal")
    assert calls.rows() == [
        ("prompts/list", 1, 4),
        ("tools/list", 2, 3),
        ("resources/list", 2, None),
    ]


def test_a_repeated_key_takes_the_latest_earlier_request(write_lines: WriteLines) -> None:
    """An id reused after completion (two requests with one key): each response pairs
    with the latest request before it, and a second response is a duplicate."""
    path = write_lines(
        [
            rec(req(1, "tools/list")),
            rec(req(2, "ping")),
            rec(res(1), dir="s2c"),
            rec(req(1, "prompts/list")),
            rec(res(2), dir="s2c"),
            rec(res(1), dir="s2c"),
            rec(res(1), dir="s2c"),
        ]
    )
    calls = mcptrace.load(path).calls
    assert calls.select("method", "response_ordinal", "duplicate").rows() == [
        ("tools/list", 2, None),
        ("ping", 4, None),
        ("prompts/list", 5, None),
        (None, 6, True),
    ]
