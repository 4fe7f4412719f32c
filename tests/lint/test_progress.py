"""The compact-text fast path of PG004 against the parse it stands for."""

from __future__ import annotations

import polars as pl

from mcptrace.linter.rules.progress import _compact_progress

_HEAD = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":'


def test_compact_progress_reads_only_texts_it_copied_whole() -> None:
    # the copy strips trailing NULs: a text that loses one is no compact text, even
    # when what is left would be one, and is left to the parse
    texts = [
        _HEAD + '"p","progress":5,"total":10}}',
        _HEAD + '"p","progress":5,"total":10}}\x00',
        _HEAD + '"q","progress":5}}',  # another token than the row's
        _HEAD + '"p","progress":5,"extra":1}}',
    ]
    frame = pl.DataFrame({"token": ['"p"', '"p"', '"p"', '"p"'], "message": texts})
    assert _compact_progress(frame).to_list() == ["5", None, None, None]
