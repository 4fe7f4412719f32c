"""Sessions' identity: which evidence decides the revision."""

from __future__ import annotations

from factories import WriteLines, initialize, rec, req, res

import mcptrace


def test_only_sessions_without_stronger_evidence_are_judged_by_fingerprint(
    write_lines: WriteLines,
) -> None:
    """A fingerprint (a method only one revision has) decides only where nothing
    stronger (initialize, meta, a header) does; the other sessions keep theirs."""
    path = write_lines(
        [
            rec(req(1, "tasks/get", {"taskId": "t"}), session="tasks"),
            rec(initialize("2025-06-18"), session="legacy"),
            rec(req(1, "tasks/get", {"taskId": "t"}), session="legacy"),
            rec(req(1, "tools/list"), session="plain"),
            rec(req(7, "elicitation/create", {}), dir="s2c", session="elicit"),
            rec(res(1, {"tools": []}), dir="s2c", session="tasks"),
        ]
    )
    got = mcptrace.load(path).identity.select("session", "revision", "revision_source").rows()
    assert got == [
        ("tasks", "2025-11-25", "fingerprint"),
        ("legacy", "2025-06-18", "initialize"),
        ("plain", None, "unknown"),
        ("elicit", "2025-06-18", "fingerprint"),
    ]


def test_every_session_judged_by_fingerprint(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            rec(req(1, "tools/list"), session="plain"),
            rec(req(1, "tasks/list"), session="tasks"),
            rec(req(2, "server/discover"), session="plain"),
        ]
    )
    got = mcptrace.load(path).identity.select("session", "revision", "revision_source").rows()
    assert got == [
        ("plain", "2026-07-28", "fingerprint"),
        ("tasks", "2025-11-25", "fingerprint"),
    ]


def test_transport_is_the_most_named_and_of_a_tie_the_first(write_lines: WriteLines) -> None:
    """A session's transport is the one most of its messages name; of two named as often,
    the one named first, on every run (a mode's tied values come in no set order)."""
    lines = []
    for i in range(40):
        first, second = ("http", "stdio") if i % 2 else ("stdio", "http")
        lines += [
            rec(req(1, "ping"), session=f"tie-{i}", transport=first),
            rec(res(1, {}), dir="s2c", session=f"tie-{i}", transport=second),
        ]
    lines += [
        rec(req(1, "ping"), session="most", transport="stdio"),
        rec(req(2, "ping"), session="most", transport="http"),
        rec(req(3, "ping"), session="most", transport="http"),
    ]
    path = write_lines(lines)
    expected = [(f"tie-{i}", "http" if i % 2 else "stdio") for i in range(40)]
    for _ in range(3):
        got = mcptrace.load(path).sessions.select("session", "transport").rows()
        assert got == [*expected, ("most", "http")]
