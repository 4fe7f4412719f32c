"""The compact-text fast path of the LG rules' `params.level` against the parse it stands for."""

from __future__ import annotations

import polars as pl

from mcptrace.linter.rules.logging import _with_level

_HEAD = '{"jsonrpc":"2.0","method":"notifications/message","params":'


def test_compact_levels_read_as_the_parse_reads_them() -> None:
    texts = [
        _HEAD + '{"level":"info","logger":"db","data":"a \\"quoted\\" \\\\ line\\n"}}',
        _HEAD + '{"level":"warning"}}',
        _HEAD + '{"level":"","data":"x"}}',
        _HEAD + '{"level":"caf\u00e9 \u6771"}}',
        # left to the parse: a `\u` escape (here one spelling the key a second time)
        _HEAD + '{"level":"info","data":"x","le\\u0076el":"debug"}}',
        _HEAD + '{"level":"info","data":"\\u00e9"}}',
        # left to the parse: another member, a level with escapes, a level not a string
        _HEAD + '{"level":"info","level":"error"}}',
        _HEAD + '{"level":"info","data":{"level":"error"}}}',
        _HEAD + '{"level":"in\\"fo"}}',
        _HEAD + '{"level":3}}',
        _HEAD + '{"level":"info"},"params":{"level":"error"}}',
        _HEAD + '{"level":"info","data":"x"}} ',
        '{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}',
    ]
    rows = pl.DataFrame({"message": texts})
    expected = rows.select(pl.col("message").str.json_path_match("$.params.level")).to_series()
    assert _with_level(rows)["level"].to_list() == expected.to_list()
    assert expected.to_list()[:4] == ["info", "warning", "", "caf\u00e9 \u6771"]
