"""The RS rules' shared frames (mcptrace/linter/rules/results.py) beyond their cases."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import mcptrace
from mcptrace.linter import lint
from mcptrace.linter.context import LintContext
from mcptrace.linter.rules import results

CASES = Path(__file__).parent / "cases"
#: the rules that read the retries (results.mrtr_retries)
RETRY_RULES = ("RS006", "RS007", "RS008", "RS013")


def _cases() -> list[tuple[str, dict[str, Any]]]:
    return [
        (code, case)
        for code in RETRY_RULES
        for case in tomllib.loads((CASES / f"{code}.toml").read_text())["case"]
    ]


@pytest.mark.parametrize(
    ("code", "case"), _cases(), ids=[f"{code}-{case['name']}" for code, case in _cases()]
)
def test_retries_when_every_call_group_shares_one_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, case: dict[str, Any]
) -> None:
    # the retry is found by the number of its group (session, method, target); with one
    # number for all groups, the next request of another group is found first and the
    # key's columns must decide
    monkeypatch.setattr(results, "key_hash", lambda *columns: pl.lit(0, pl.UInt64))
    path = tmp_path / "case.jsonl"
    path.write_text(case["capture"].strip() + "\n")
    found = lint(mcptrace.load(path), select=[code], revision=case.get("revision"))
    assert sorted(found["line"].to_list()) == sorted(case["expect"])


def test_retry_found_past_another_group_sharing_its_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a fresh call of another tool comes between the input_required result and the retry
    # (which reuses the id: RS006); as the next request of the shared number it is no
    # retry, and the retry of book_trip is found by the key itself
    meta = (
        '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}'
    )
    lines = [
        '{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        f'"params":{{"name":"book_trip",{meta}}}}}}}',
        '{"dir":"s2c","msg":{"jsonrpc":"2.0","id":1,'
        '"result":{"resultType":"input_required","requestState":"s1"}}}',
        '{"dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/call",'
        f'"params":{{"name":"forecast",{meta}}}}}}}',
        '{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        f'"params":{{"name":"book_trip","requestState":"s1",{meta}}}}}}}',
    ]
    path = tmp_path / "case.jsonl"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(results, "key_hash", lambda *columns: pl.lit(0, pl.UInt64))
    found = lint(mcptrace.load(path), select=["RS006"], revision="2026-07-28")
    assert found["line"].to_list() == [4]


def test_retry_answers_read_as_their_texts_say(tmp_path: Path) -> None:
    # the retries' inputResponses are parsed once per text with the requestStates blanked:
    # answers that hold a requestState of their own (the same blanked text twice) are read
    # from each retry's own text
    meta = (
        '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}'
    )
    ask = (
        '"inputRequests":{"ok":{"method":"elicitation/create","params":{"mode":"form",'
        '"message":"Go?","requestedSchema":{"type":"object","properties":{}}}}}'
    )

    def call(id_: int, extra: str = "") -> str:
        return (
            f'{{"jsonrpc":"2.0","id":{id_},"method":"tools/call",'
            f'"params":{{"name":"book",{extra}{meta}}}}}'
        )

    def asked(id_: int, state: str) -> str:
        return (
            f'{{"jsonrpc":"2.0","id":{id_},"result":{{"resultType":"input_required",'
            f'{ask},"requestState":"{state}"}}}}'
        )

    def answer(id_: int, said: str, state: str) -> str:
        return call(
            id_,
            f'"inputResponses":{{"ok":{{"action":"accept","content":{{"requestState":"{said}"}}}}}},'
            f'"requestState":"{state}",',
        )

    lines = [call(1), asked(1, "s1"), answer(2, "x", "s1")]
    lines += [call(3), asked(3, "s2"), answer(4, "y", "s2"), answer(5, "z", "s3")]
    path = tmp_path / "case.jsonl"
    path.write_text("\n".join(lines) + "\n")
    ctx = LintContext(mcptrace.load(path, format="stdio"), revision_override="2026-07-28")
    retries = results.mrtr_retries(ctx)
    assert retries["_inputs"].to_list() == [
        '{"ok":{"action":"accept","content":{"requestState":"x"}}}',
        '{"ok":{"action":"accept","content":{"requestState":"y"}}}',
    ]
    assert retries["state"].to_list() == ["s1", "s2"]
