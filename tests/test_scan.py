"""Secret scanning: every seeded secret is found at its line without being printed, and a
redacted capture scans clean."""

from __future__ import annotations

from pathlib import Path

import orjson
import polars as pl
import pytest
from factories import WriteLines, rec, req, res
from test_redact import (
    DEFAULT_SECRETS,
    FULL_ARGS,
    FULL_POLICY,
    GITHUB,
    JWT,
    OPTIONAL_SECRETS,
    PEM_2_BODY,
    PEM_BODY,
    seeded_records,
)
from typer.testing import CliRunner

import mcptrace
from mcptrace.cli import app
from mcptrace.redact import RedactionPolicy, Redactor, redact_messages
from mcptrace.scan import SECRETS, scan_messages, scan_paths

runner = CliRunner()


@pytest.fixture
def seeded(write_lines: WriteLines) -> Path:
    return write_lines([line for line, _ in seeded_records()], "seeded.jsonl")


def test_every_seeded_secret_is_found_at_its_line(seeded: Path) -> None:
    policy = RedactionPolicy(**FULL_POLICY, salt=b"0123456789abcdef")
    found = scan_messages(mcptrace.load(seeded).messages, policy)
    SECRETS.validate(found)
    # with the salt known, each secret's fingerprint can be checked at its line
    fingerprint = Redactor(policy).fingerprint
    located = set(zip(found["line"], found["fingerprint"], strict=True))
    for lineno, (_, on_line) in enumerate(seeded_records(), 1):
        for secret in on_line:
            if secret not in (*PEM_BODY, PEM_2_BODY):  # a PEM block is one secret, below
                assert (lineno, fingerprint(secret)) in located, (lineno, secret)
    by_line = {line: set(k) for line, k in found.group_by("line").agg("kind").iter_rows()}
    assert "private-key" in by_line[4] and "private-key" in by_line[9]
    assert {"jwt", "anthropic-key", "authorization"} <= by_line[6]
    assert {"slack-token", "stripe-key", "secret-field"} <= by_line[8]
    assert {"authorization", "cookie", "header"} <= by_line[1]
    assert {"user-key", "user-path", "user-regex", "email", "ip"} <= by_line[4]
    assert by_line[17] == {"secret-field"}  # the truncated, invalid line
    assert set(by_line) == {n for n, (_, s) in enumerate(seeded_records(), 1) if s}
    # nothing structural here: ids, tool names and Mcp-Session-Id hold no secret
    assert not found["structural"].any()


def test_findings_never_show_the_secret(seeded: Path) -> None:
    result = runner.invoke(app, ["scan", str(seeded), *FULL_ARGS])
    assert result.exit_code == 1, result.output
    for secret in DEFAULT_SECRETS + OPTIONAL_SECRETS:
        assert secret not in result.output
    first = result.output.splitlines()[0]
    assert first.startswith(f"{seeded}:1: ")
    assert "(raw, http_headers)" in result.output or "(http_headers" in result.output
    assert result.output.rstrip().endswith("in 1 file(s)")
    data = orjson.loads(runner.invoke(app, ["scan", str(seeded), "--format", "json"]).output)
    assert {"source", "line", "column", "kind", "fingerprint", "structural"} == set(data[0])
    assert all(len(row["fingerprint"]) == 12 for row in data)
    assert not any(s in orjson.dumps(data).decode() for s in DEFAULT_SECRETS)


def test_same_secret_same_fingerprint_within_a_scan(write_lines: WriteLines) -> None:
    path = write_lines(
        [
            rec(req(1, "tools/call", {"name": "t", "arguments": {"token": GITHUB}})),
            rec(res(1, {"content": [{"type": "text", "text": f"used {GITHUB}"}]}), dir="s2c"),
            rec(f"auth with {JWT}", dir="stderr"),
        ]
    )
    found, stats = scan_paths(path)
    assert stats.files == 1 and found["line"].to_list() == [1, 2, 3]
    assert found["fingerprint"][0] == found["fingerprint"][1] != found["fingerprint"][2]
    assert found["kind"].to_list() == ["github-token", "github-token", "jwt"]
    assert found["column"][2] == "message, raw"
    # a new scan salts anew: fingerprints cannot be linked across scans
    again, _ = scan_paths(path)
    assert again["fingerprint"][0] != found["fingerprint"][0]


def test_redacted_capture_scans_clean(seeded: Path, tmp_path: Path) -> None:
    out = tmp_path / "red.jsonl"
    assert runner.invoke(app, ["redact", str(seeded), "-o", str(out), *FULL_ARGS]).exit_code == 0
    result = runner.invoke(app, ["scan", str(out), *FULL_ARGS])
    assert result.exit_code == 0, result.output
    assert "no secrets found in 1 file(s)" in result.output
    # with the default policy the optional data (e-mails, IPs, ...) were left in and the
    # rest still scans clean
    default = tmp_path / "default.jsonl"
    assert runner.invoke(app, ["redact", str(seeded), "-o", str(default)]).exit_code == 0
    assert runner.invoke(app, ["scan", str(default)]).exit_code == 0
    assert runner.invoke(app, ["scan", str(default), "--emails"]).exit_code == 1
    # in memory too
    trace = mcptrace.load(seeded)
    policy = RedactionPolicy(**FULL_POLICY)
    assert scan_messages(redact_messages(trace.messages, policy), policy).is_empty()


def test_structural_values_are_reported_as_kept(write_lines: WriteLines) -> None:
    # a JWT used as a session id is protocol structure: kept, and said so
    path = write_lines(
        [
            rec(
                req(1, "ping"),
                session=JWT,
                http={"method": "POST", "headers": {"Mcp-Session-Id": JWT}},
            ),
            rec(req(GITHUB, "ping"), dir="c2s"),
        ]
    )
    found, _ = scan_paths(path)
    assert found["structural"].all()
    assert set(found["line"]) == {1, 2}
    result = runner.invoke(app, ["scan", str(path)])
    assert result.exit_code == 1 and "[protocol structure: redact keeps it]" in result.output
    out = path.with_name("red.jsonl")
    result = runner.invoke(app, ["redact", str(path), "-o", str(out)])
    assert result.exit_code == 0 and "kept in protocol structure" in result.output
    assert JWT in out.read_text() and GITHUB in out.read_text()
    # asked for, the session id goes (header and session key alike); the request id stays
    result = runner.invoke(app, ["redact", str(path), "-o", str(out), "--key", "Mcp-Session-Id"])
    assert result.exit_code == 0
    assert JWT not in out.read_text() and GITHUB in out.read_text()
    assert mcptrace.load(out).messages["id"][1] == orjson.dumps(GITHUB).decode()


def test_exit_codes(seeded: Path, tmp_path: Path, write_lines: WriteLines) -> None:
    clean = write_lines([rec(req(1, "ping")), rec(res(1), dir="s2c")])
    assert runner.invoke(app, ["scan", str(clean)]).exit_code == 0
    assert runner.invoke(app, ["scan", str(seeded)]).exit_code == 1
    missing = tmp_path / "missing.jsonl"
    result = runner.invoke(app, ["scan", str(clean), str(missing)])
    assert result.exit_code == 2 and "missing.jsonl" in result.output
    result = runner.invoke(app, ["scan", str(seeded), str(missing)])
    assert result.exit_code == 2  # an unreadable input outranks findings
    assert runner.invoke(app, ["scan", str(clean), "--regex", "("]).exit_code == 2
    assert runner.invoke(app, ["scan", str(missing)]).exit_code == 2


def test_scan_of_sample_traces_finds_only_the_known_credentials() -> None:
    from factories import SAMPLES

    found, stats = scan_paths(SAMPLES)
    assert not stats.errors
    # the samples carry credentials in HTTP headers (HAR, MCPJam) and nothing else: no
    # false alarm from prose, ids, progress tokens or tool names
    assert set(found["kind"]) <= {"authorization", "bearer", "jwt", "cookie", "header"}
    assert set(found["column"].str.split(", ").explode()) <= {"http_headers", "raw"}
    assert found.height and not found["structural"].any()


def test_empty_and_schema() -> None:
    empty = scan_messages(mcptrace.MESSAGES.empty())
    assert empty.is_empty() and empty.schema == SECRETS.schema
    assert SECRETS.names == ["source", "line", "column", "kind", "fingerprint", "structural"]
    assert pl.DataFrame(schema=SECRETS.schema).columns == SECRETS.names
