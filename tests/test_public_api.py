"""The public API is what `mcptrace.__all__` lists: pinned, so changes are deliberate."""

from __future__ import annotations

import mcptrace

PUBLIC = [
    "CALLS", "FORMATS", "MESSAGES", "SESSIONS", "SOURCES",
    "CaptureError", "McpTraceError", "Trace", "UnknownFormatError", "UsageError",
    "__version__", "analysis", "lint", "lint_file", "load", "message_list", "plots",
]  # fmt: skip


def test_public_names() -> None:
    assert sorted(mcptrace.__all__, key=str.lower) == sorted(PUBLIC, key=str.lower)
    for name in mcptrace.__all__:
        assert getattr(mcptrace, name) is not None


def test_lint_file_is_the_share_by_share_linter() -> None:
    import mcptrace.linter.shares

    assert mcptrace.lint_file is mcptrace.linter.shares.lint_file


def test_lint_is_the_function_and_the_package_is_linter() -> None:
    import mcptrace.linter

    assert callable(mcptrace.lint)
    assert mcptrace.lint is mcptrace.linter.lint


def test_select_and_ignore_take_one_selector_or_a_list() -> None:
    import pytest

    from mcptrace.linter.registry import select_rules

    # a lone string is one selector: iterated, "JR" would also select every R... rule
    assert select_rules("JR") == select_rules(["JR"])
    assert {r.code[:2] for r in select_rules("JR")} == {"JR"}
    assert select_rules(ignore="JR") == select_rules(ignore=["JR"])
    with pytest.raises(mcptrace.UsageError, match="not 5"):
        select_rules(["JR", 5])  # type: ignore[list-item]
