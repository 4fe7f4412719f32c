"""Hostile but valid JSON where rules look inside values: linting must not crash.

orjson reads up to 1,024 levels of nesting. Rules read values with Polars' JSON paths,
which give up (null) below about 126 levels, and walk what they get in Python, which
must not recurse into a RecursionError at any depth.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from factories import WriteLines

import mcptrace
from mcptrace.linter import lint


def _nested(depth: int) -> str:
    return '{"x":' + '{"a":' * depth + "{}" + "}" * depth + "}"


def _capture(depth: int) -> list[str]:
    meta = (
        '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        f'"io.modelcontextprotocol/clientCapabilities":{_nested(depth)}}}'
    )
    inputs = '{"k":' + "[" * depth + "]" * depth + "}"
    return [
        # MT013 walks both capability objects
        f'{{"dir":"c2s","msg":{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t",{meta}}}}}}}',
        f'{{"dir":"s2c","msg":{{"jsonrpc":"2.0","id":1,"error":{{"code":-32021,"message":"m","data":{{"requiredCapabilities":{_nested(depth)}}}}}}}}}',
        # RS013 reads the keys of inputRequests and inputResponses
        f'{{"dir":"c2s","msg":{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"t",{meta}}}}}}}',
        f'{{"dir":"s2c","msg":{{"jsonrpc":"2.0","id":2,"result":{{"resultType":"input_required","inputRequests":{inputs},"requestState":"s"}}}}}}',
        f'{{"dir":"c2s","msg":{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"t","inputResponses":{inputs},"requestState":"s",{meta}}}}}}}',
    ]


@pytest.fixture(autouse=True)
def _default_recursion_limit() -> Iterator[None]:
    """Python's default limit, as the CLI runs with (test runners may raise it)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000)
    yield
    sys.setrecursionlimit(before)


@pytest.mark.parametrize("pure", [False, True], ids=["scanner", "pure-python"])
@pytest.mark.parametrize("depth", [120, 1_000])
def test_deep_values_in_the_places_rules_parse(
    write_lines: WriteLines, monkeypatch: pytest.MonkeyPatch, pure: bool, depth: int
) -> None:
    if pure:
        monkeypatch.setenv("MCPTRACE_PURE_PYTHON", "1")
    trace = mcptrace.load(write_lines(_capture(depth)))
    assert trace.messages["parse_error"].is_null().all()
    found = lint(trace)  # must return, whatever it finds this deep
    if depth == 120:
        # within reach of the JSON paths, the capability the error names was declared
        mt013 = found.filter(found["code"] == "MT013")
        assert mt013.select("line", "message").rows() == [
            (
                2,
                'MissingRequiredClientCapability error lists "x", which the request declared '
                "in its clientCapabilities",
            )
        ]
