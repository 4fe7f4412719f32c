"""Redaction: no seeded secret survives in any output format, while the protocol
skeleton — and so lint findings and call statistics — stays exactly as it was."""

from __future__ import annotations

import base64
import string
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from factories import SAMPLES, WriteLines, err, initialize, initialize_result, note, rec, req, res
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import mcptrace
from mcptrace import analysis
from mcptrace.cli import app
from mcptrace.errors import UsageError
from mcptrace.loaders import chunked
from mcptrace.redact import (
    PLACEHOLDER,
    RedactionPolicy,
    Redactor,
    redact_chunks,
    redact_messages,
    redact_trace,
    write_redacted,
)
from mcptrace.schema import MESSAGES
from mcptrace.streaming import iter_messages

runner = CliRunner()

# ---------------------------------------------------------------------------
# The seeded secrets: one of every kind, each unique in the capture
# ---------------------------------------------------------------------------

OPENAI = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
ANTHROPIC = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-dCbA_98765"
GITHUB = "ghp_" + "Ab1" * 12
GITHUB_OAUTH = "gho_" + "Zq7" * 12
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzAB"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AWS_ID_2 = "ASIAY34FZKBOKMUTVV7A"
AWS_SECRET_2 = "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_WEBHOOK = "https://hooks.slack.com/services/T0000AAAA/B0000BBBB/XXXXyyyyZZZZwwww"
GOOGLE = "AIzaSy" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
STRIPE = "sk_live_51H8xYzAbCdEfGhIjKlMnOp"
STRIPE_RK = "rk_live_99Zz88Yy77Xx66Ww55Vv"
JWT = (
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
)
PEM_BODY = ("MIIEpAIBAAKCAQEA7bq98s3Xk0ZdQw", "AbCdEfGhIjKlMnOpQrStUvWxYz0123")
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n-----END RSA PRIVATE KEY-----"
PEM_2_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
PEM_2 = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_2_BODY}\n-----END OPENSSH PRIVATE KEY-----"
BEARER = "Zm9vYmFyYmF6cXV4.opaque-TOKEN_123"
BEARER_TEXT = "opaque7.Bearer.Token~xyz"
COOKIE = "s3ss10nC00kieV4lue"
SET_COOKIE = "srvC00kie-77aa"
X_API_KEY = "xapi-9f8e7d6c5b4a"
PASSWORD = "hunter2-PW-secret"
CLIENT_SECRET = "cs_9a8b7c6d5e4f3g2h"
REFRESH = "rt-0987zyxw-nested"
DB_PASSWORD = "Db-P4ss-w0rd"
BASIC = base64.b64encode(b"alice:s3cr3t-basic").decode()
FLAG_VALUE = "flagval-77x"
PAIR_VALUE = "pairval-88y"
ENV_TOKEN = "envtok-1234abcd"
TRUNCATED_PW = "trunc-PW-1"
LOG_PASSWORD = "logPass-42"
ERROR_TOKEN = "errtok-5566"
NUMBER_SECRET = 918273645
SSN = "123-45-6789"
PIN = 5081726
CUSTOMER = "CUST-55501234"
EMAIL = "alice.smith@example.com"
IPV4 = "10.20.30.40"
IPV6 = "2001:db8::8a2e:370:7334"

#: redacted by the default policy
DEFAULT_SECRETS = [
    OPENAI, ANTHROPIC, GITHUB, GITHUB_OAUTH, GITHUB_PAT, AWS_ID, AWS_SECRET, AWS_ID_2,
    AWS_SECRET_2, SLACK, SLACK_WEBHOOK, GOOGLE, STRIPE, STRIPE_RK, JWT, *PEM_BODY, PEM_2_BODY,
    BEARER, BEARER_TEXT, COOKIE, SET_COOKIE, X_API_KEY, PASSWORD, CLIENT_SECRET, REFRESH,
    DB_PASSWORD, BASIC, FLAG_VALUE, PAIR_VALUE, ENV_TOKEN, TRUNCATED_PW, LOG_PASSWORD,
    ERROR_TOKEN, str(NUMBER_SECRET),
]  # fmt: skip
#: redacted only when asked: --path, --key, --regex, --emails, --ips
OPTIONAL_SECRETS = [SSN, str(PIN), CUSTOMER, EMAIL, IPV4, IPV6]
ALL_SECRETS = DEFAULT_SECRETS + OPTIONAL_SECRETS
FULL_POLICY: dict[str, Any] = {
    "keys": ["pin"],
    "paths": ["$.params.arguments.ssn"],
    "regexes": [r"CUST-\d+"],
    "emails": True,
    "ips": True,
}
FULL_ARGS = [
    "--key", "pin", "--path", "$.params.arguments.ssn", "--regex", r"CUST-\d+", "--emails",
    "--ips",
]  # fmt: skip

HEADERS_C2S = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
    "Mcp-Session-Id": "sess-42",
    "Authorization": f"Bearer {BEARER}",
    "Cookie": f"session={COOKIE}; theme=dark",
    "X-Api-Key": X_API_KEY,
}
HEADERS_S2C = {
    "Content-Type": "application/json",
    "Mcp-Session-Id": "sess-42",
    "Set-Cookie": f"id={SET_COOKIE}; Path=/; HttpOnly",
}


def _ts(i: int) -> str:
    return f"2026-08-01T10:00:{i:02d}.250000Z"


def seeded_records() -> list[tuple[dict[str, Any] | str, list[str]]]:
    """(capture line, secrets on that line). Line n of the file is element n - 1."""
    http_c2s = {"method": "POST", "headers": HEADERS_C2S}
    http_s2c = {"status": 200, "headers": HEADERS_S2C}
    init = initialize("2025-11-25", client=("desk", "1.0"))
    init_res = initialize_result("2025-11-25", server=("vault", "2.0"))
    arguments = {
        "api_key": OPENAI,
        "password": PASSWORD,
        "nested": {"deep": {"client_secret": CLIENT_SECRET, "list": [{"token": GITHUB}]}},
        "ssn": SSN,
        "pin": PIN,
        "session_secret": NUMBER_SECRET,
        "note": f"contact {EMAIL} from {IPV4} or [{IPV6}] about {CUSTOMER}",
        "db": f"postgres://admin:{DB_PASSWORD}@db.internal:5432/app",
        "aws": {"AccessKeyId": AWS_ID, "value": AWS_SECRET},
        "config": orjson.dumps({"refresh_token": REFRESH, "region": "eu"}).decode(),
        "command": ["server", "--api-token", FLAG_VALUE, "--verbose"],
        "env": [{"name": "DB_PASSWORD", "value": PAIR_VALUE}, {"name": "HOME", "value": "/h"}],
        "key_file": PEM,
    }
    call = req(
        5,
        "tools/call",
        {"name": "deploy", "arguments": arguments, "_meta": {"progressToken": "tok-abc"}},
    )
    call_secrets = [
        OPENAI, PASSWORD, CLIENT_SECRET, GITHUB, SSN, str(PIN), str(NUMBER_SECRET), EMAIL, IPV4,
        IPV6, CUSTOMER, DB_PASSWORD, AWS_ID, AWS_SECRET, REFRESH, FLAG_VALUE, PAIR_VALUE,
        *PEM_BODY, BEARER, COOKIE, X_API_KEY,
    ]  # fmt: skip
    progress = note(
        "notifications/progress", {"progressToken": "tok-abc", "progress": 1, "total": 2}
    )
    result = res(
        5,
        {
            "content": [{"type": "text", "text": f"deployed with {JWT} and {ANTHROPIC}"}],
            "structuredContent": {"authorization": f"Basic {BASIC}"},
            "isError": False,
        },
    )
    string_call = req("5", "tools/call", {"name": "lookup", "arguments": {"q": GOOGLE}})
    string_error = err("5", -32602, f"invalid key {STRIPE} for {SLACK}")
    string_error["error"]["data"] = {"hint": f"token={ERROR_TOKEN}", "restricted": STRIPE_RK}
    listing = req(7, "tools/list")
    listing_res = res(
        7,
        {
            "tools": [
                {
                    "name": "deploy",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"password": {"type": "string"}, "token": {"type": "string"}},
                        "required": ["password"],
                    },
                }
            ]
        },
    )
    cancelled_call = req(8, "tools/call", {"name": "slow", "arguments": {"x": 1}})
    cancel = note("notifications/cancelled", {"requestId": 8, "reason": "user"})
    wire = (
        '{"jsonrpc": "2.0",  "id": 9, "method": "tools/call", '
        f'"params": {{"name": "pat", "arguments": {{"github": "{GITHUB_PAT}"}}}}}}'
    )
    pat_call = req(9, "tools/call", {"name": "pat", "arguments": {"github": GITHUB_PAT}})
    truncated = (
        '{"ts": "2026-08-01T10:00:30Z", "dir": "c2s", "session": "s1", "msg": {"jsonrpc": "2.0", '
        f'"id": 10, "method": "tools/call", "params": {{"arguments": {{"password": "{TRUNCATED_PW}"'
    )
    return [
        (rec(init, ts=_ts(1), http=http_c2s, transport="http"), [BEARER, COOKIE, X_API_KEY]),
        (rec(init_res, dir="s2c", ts=_ts(2), http=http_s2c, transport="http"), [SET_COOKIE]),
        (rec(note("notifications/initialized"), ts=_ts(3)), []),
        (rec(call, ts=_ts(4), http=http_c2s, transport="http"), call_secrets),
        (rec(progress, dir="s2c", ts=_ts(5)), []),
        (rec(result, dir="s2c", ts=_ts(6)), [JWT, ANTHROPIC, BASIC]),
        (rec(string_call, ts=_ts(7)), [GOOGLE]),
        (rec(string_error, dir="s2c", ts=_ts(8)), [STRIPE, SLACK, ERROR_TOKEN, STRIPE_RK]),
        (
            rec(
                f"loaded key {PEM_2}; GITHUB_TOKEN={GITHUB_OAUTH} Authorization: Bearer "
                f"{BEARER_TEXT}",
                dir="stderr",
                ts=_ts(9),
            ),
            [PEM_2_BODY, GITHUB_OAUTH, BEARER_TEXT],
        ),
        (
            rec(
                f"export AWS_ACCESS_KEY_ID={AWS_ID_2} AWS_SECRET_ACCESS_KEY={AWS_SECRET_2} "
                f"password: {LOG_PASSWORD} webhook {SLACK_WEBHOOK} API_TOKEN='{ENV_TOKEN}'",
                dir="log",
                ts=_ts(10),
            ),
            [AWS_ID_2, AWS_SECRET_2, LOG_PASSWORD, SLACK_WEBHOOK, ENV_TOKEN],
        ),
        (rec(listing, ts=_ts(11)), []),
        (rec(listing_res, dir="s2c", ts=_ts(12)), []),
        (rec(cancelled_call, ts=_ts(13)), []),
        (rec(cancel, ts=_ts(14)), []),
        (rec(pat_call, ts=_ts(15), raw=wire), [GITHUB_PAT]),
        (rec(res(9), dir="s2c", ts=_ts(16)), []),
        (truncated, [TRUNCATED_PW]),
    ]


@pytest.fixture
def seeded(write_lines: WriteLines) -> Path:
    return write_lines([line for line, _ in seeded_records()], "seeded.jsonl")


def _all_text(df: pl.DataFrame) -> str:
    """Every string cell of a table, joined (for containment checks)."""
    cols = [c for c, t in df.schema.items() if t == pl.String or isinstance(t, pl.Enum)]
    return "\n".join(str(v) for c in cols for v in df[c].cast(pl.String).to_list() if v is not None)


def _assert_clean(blob: str | bytes, secrets: list[str]) -> None:
    text = blob.decode("utf-8", "replace") if isinstance(blob, bytes) else blob
    left = [s for s in secrets if s in text]
    assert not left, f"secrets survived: {left}"


def test_seeded_capture_really_holds_every_secret(seeded: Path) -> None:
    text = _all_text(mcptrace.load(seeded).messages)
    missing = [s for s in ALL_SECRETS if s not in text]
    assert not missing
    # and each one only where the test says it is
    for lineno, (_, on_line) in enumerate(seeded_records(), 1):
        raw = seeded.read_text().splitlines()[lineno - 1]
        assert all(s in raw or s.replace("/", "\\/") in raw for s in on_line if s != PEM), lineno


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
def test_no_secret_survives_in_any_output_format(seeded: Path, tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"redacted{suffix}"
    result = runner.invoke(app, ["redact", str(seeded), "-o", str(out), *FULL_ARGS])
    assert result.exit_code == 0, result.output
    assert "secret(s) replaced" in result.output
    _assert_clean(out.read_bytes(), ALL_SECRETS)
    if suffix == ".parquet":
        # Parquet pages are compressed: read every string column back
        df = pl.read_parquet(out)
        assert df.columns == MESSAGES.names
        _assert_clean(_all_text(df), ALL_SECRETS)
    elif suffix == ".csv":
        _assert_clean(_all_text(pl.read_csv(out, infer_schema=False)), ALL_SECRETS)
    else:
        _assert_clean(_all_text(mcptrace.load(out).messages), ALL_SECRETS)
        assert PLACEHOLDER.search(out.read_text())


def test_default_policy_keeps_optional_data_and_structure(seeded: Path) -> None:
    trace = mcptrace.load(seeded)
    redacted = redact_messages(trace.messages)
    text = _all_text(redacted)
    _assert_clean(text, DEFAULT_SECRETS)
    # e-mails, IPs, user keys/paths/regexes are only redacted when asked for
    for kept in (EMAIL, IPV4, IPV6, SSN, CUSTOMER, str(PIN)):
        assert kept in text
    # the protocol skeleton is untouched, types and all
    for col in ("id", "id_type", "method", "target", "progress_token", "cancel_id", "kind"):
        assert redacted[col].equals(trace.messages[col]), col
    assert redacted["id"].to_list()[6:8] == ['"5"', '"5"']
    assert redacted.filter(pl.col("id") == "5").height == 2  # the request and its result
    assert redacted["progress_token"].drop_nulls().to_list() == ['"tok-abc"', '"tok-abc"']


def _stats(trace: mcptrace.Trace) -> tuple[Any, ...]:
    calls = trace.calls.select("id", "id_type", "method", "target", "outcome", "latency_ms")
    return (
        calls.rows(),
        analysis.latency(trace).rows(),
        analysis.error_rate(trace).rows(),
        analysis.latency_coverage(trace).rows(),
        trace.sessions.select("session", "revision", "client_name", "server_name").rows(),
    )


def _lint(trace: mcptrace.Trace) -> list[tuple[str, int, str]]:
    f = mcptrace.lint(trace)
    names = [Path(s).name for s in f["source"]]
    return list(zip(f["code"], f["line"], names, strict=True))


def test_lint_and_statistics_are_unchanged(seeded: Path, tmp_path: Path) -> None:
    trace = mcptrace.load(seeded)
    redacted = redact_trace(trace, RedactionPolicy(**FULL_POLICY))
    _assert_clean(_all_text(redacted.messages), ALL_SECRETS)
    _assert_clean(_all_text(redacted.calls), ALL_SECRETS)
    _assert_clean(_all_text(redacted.sessions), ALL_SECRETS)
    assert _stats(redacted) == _stats(trace)
    findings = _lint(trace)
    assert findings, "the seeded capture should give the linter something to say"
    assert [(c, n) for c, n, _ in _lint(redacted)] == [(c, n) for c, n, _ in findings]
    # and through the files: a plain copy and a redacted copy lint and measure alike
    plain, red = tmp_path / "plain.jsonl", tmp_path / "red.jsonl"
    assert runner.invoke(app, ["convert", str(seeded), "-o", str(plain)]).exit_code == 0
    assert runner.invoke(app, ["redact", str(seeded), "-o", str(red), *FULL_ARGS]).exit_code == 0
    before, after = mcptrace.load(plain), mcptrace.load(red)
    assert [(c, n) for c, n, _ in _lint(after)] == [(c, n) for c, n, _ in _lint(before)]
    assert _stats(after) == _stats(before)
    assert after.messages["id"].to_list() == before.messages["id"].to_list()


def test_placeholders_are_stable_within_a_run_and_differ_across_runs(seeded: Path) -> None:
    trace = mcptrace.load(seeded)
    policy = RedactionPolicy()
    first = redact_messages(trace.messages, policy)
    again = redact_messages(trace.messages, policy)
    assert first.equals(again)
    other = redact_messages(trace.messages, RedactionPolicy())
    assert not first["message"].equals(other["message"])
    # the same secret gets the same placeholder in message, raw and headers
    redactor = Redactor(RedactionPolicy(salt=b"fixed-salt-16byt"))
    expected = redactor.placeholder(GITHUB_PAT, "github-token")
    out, _ = redactor.redact(trace.messages)
    row = out.row(14, named=True)
    assert expected in row["message"] and expected in row["raw"]
    assert redactor.placeholder(BEARER, "authorization") in out["http_headers"][0]
    assert out["http_headers"][0].count("[REDACTED:") == 4
    assert "Bearer [REDACTED:" in out["http_headers"][0]
    assert (
        "session=[REDACTED:cookie:" in out["http_headers"][0]
        and "theme=[" in out["http_headers"][0]
    )


def test_structure_kept_json_types_and_schemas(seeded: Path) -> None:
    trace = mcptrace.load(seeded)
    out = redact_messages(trace.messages, RedactionPolicy(**FULL_POLICY))
    call = orjson.loads(out["message"][3])
    assert call["jsonrpc"] == "2.0" and call["id"] == 5 and call["method"] == "tools/call"
    assert call["params"]["name"] == "deploy"
    assert call["params"]["_meta"] == {"progressToken": "tok-abc"}
    args = call["params"]["arguments"]
    # numbers stay numbers; zero tells nothing
    assert args["pin"] == 0 and args["session_secret"] == 0
    assert args["password"].startswith("[REDACTED:secret-field:")
    assert args["api_key"].startswith("[REDACTED:openai-key:")
    assert args["ssn"].startswith("[REDACTED:user-path:")
    assert args["db"].startswith("postgres://admin:[REDACTED:url-password:")
    assert args["db"].endswith("@db.internal:5432/app")
    assert args["aws"]["AccessKeyId"].startswith("[REDACTED:aws-access-key-id:")
    assert args["aws"]["value"].startswith("[REDACTED:aws-secret-key:")
    assert orjson.loads(args["config"])["region"] == "eu"
    assert args["command"][:2] == ["server", "--api-token"] and args["command"][3] == "--verbose"
    assert args["env"][0]["name"] == "DB_PASSWORD" and args["env"][1]["value"] == "/h"
    assert args["key_file"].startswith("[REDACTED:private-key:")
    # a JSON Schema's property named "password" is a definition, not a secret
    listing = orjson.loads(out["message"][11])
    schema = listing["result"]["tools"][0]["inputSchema"]
    assert schema["properties"] == {"password": {"type": "string"}, "token": {"type": "string"}}
    # wire formatting is kept byte for byte outside the secret
    assert out["message"][14].startswith('{"jsonrpc": "2.0",  "id": 9,')
    error = orjson.loads(out["message"][7])
    assert error["error"]["code"] == -32602 and error["id"] == "5"
    assert out["error_message"][7] == error["error"]["message"]
    assert out["error_message"][7].startswith("invalid key [REDACTED:stripe-key:")


def test_redaction_is_idempotent(seeded: Path) -> None:
    trace = mcptrace.load(seeded)
    policy = RedactionPolicy(**FULL_POLICY)
    once = redact_messages(trace.messages, policy)
    twice, hits = Redactor(RedactionPolicy(**FULL_POLICY)).redact(once)
    assert twice.equals(once)
    assert hits.filter(~pl.col("structural")).is_empty()


def test_user_rules_and_errors() -> None:
    with pytest.raises(UsageError, match="protocol structure"):
        RedactionPolicy(paths=["$.id"])
    with pytest.raises(UsageError, match="protocol structure"):
        RedactionPolicy(paths=["$.params.name"])
    with pytest.raises(UsageError, match="must start with"):
        RedactionPolicy(paths=["params.x"])
    with pytest.raises(UsageError, match="bad regular expression"):
        RedactionPolicy(regexes=["("])
    with pytest.raises(UsageError, match="empty string"):
        RedactionPolicy(regexes=["x*"])
    r = Redactor(
        RedactionPolicy(
            keys=["Account-Number"],
            paths=["$..iban", "$.params.arguments.cards[*].cvv", "$.result.rows[1]"],
            regexes=[r"order (?P<secret>\d{6})"],
        )
    )
    msg = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "pay",
            "arguments": {
                "account_number": "AC-1",
                "deep": {"x": {"iban": "DE89370400440532013000"}},
                "cards": [{"cvv": 123}, {"cvv": "456"}],
                "memo": "order 123456 shipped",
            },
        },
    }
    hits: list[Any] = []
    out = orjson.loads(r.cell(orjson.dumps(msg).decode(), "message", hits))
    args = out["params"]["arguments"]
    assert args["account_number"].startswith("[REDACTED:user-key:")
    assert args["deep"]["x"]["iban"].startswith("[REDACTED:user-path:")
    assert args["cards"] == [{"cvv": 0}, {"cvv": args["cards"][1]["cvv"]}]
    assert args["cards"][1]["cvv"].startswith("[REDACTED:user-path:")
    assert args["memo"].startswith("order [REDACTED:user-regex:") and "123456" not in args["memo"]
    rows = {"jsonrpc": "2.0", "id": 1, "result": {"rows": ["a", "b", "c"]}}
    out = orjson.loads(r.cell(orjson.dumps(rows).decode(), "message", hits))
    assert out["result"]["rows"][0] == "a" and out["result"]["rows"][1].startswith("[REDACTED:")


def test_mcp_session_id_is_kept_unless_asked(write_lines: WriteLines) -> None:
    headers = {"Mcp-Session-Id": JWT, "Authorization": f"Bearer {BEARER}"}
    path = write_lines(
        [
            rec(req(1, "ping"), session=JWT, http={"method": "POST", "headers": headers}),
            rec(res(1), dir="s2c", session=JWT, http={"status": 200, "headers": headers}),
        ]
    )
    trace = mcptrace.load(path)
    kept, hits = Redactor().redact(trace.messages)
    assert JWT in kept["http_headers"][0] and kept["session"].to_list() == [JWT, JWT]
    assert BEARER not in kept["http_headers"][0]
    assert hits.filter(pl.col("structural"))["column"].unique().sort().to_list() == [
        "http_headers",
        "raw",
        "session",
    ]
    asked = redact_trace(trace, RedactionPolicy(keys=["mcp-session-id"]))
    _assert_clean(_all_text(asked.messages), [JWT, BEARER])
    header_value = orjson.loads(asked.messages["http_headers"][0])["Mcp-Session-Id"]
    assert asked.messages["session"].to_list() == [header_value, header_value]
    assert asked.calls["outcome"].to_list() == ["ok"]


def test_streaming_chunks_share_placeholders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_lines: WriteLines
) -> None:
    lines = []
    for i in range(400):
        lines.append(rec(req(i, "tools/call", {"name": "t", "arguments": {"token": GITHUB}})))
        lines.append(rec(res(i, {"content": [{"type": "text", "text": f"ok {i}"}]}), dir="s2c"))
    path = write_lines(lines)
    monkeypatch.setattr(chunked, "CHUNK_BYTES", 8 * 1024)
    chunks = list(iter_messages(path))
    assert len(chunks) > 3
    redacted = pl.concat(list(redact_chunks(iter(chunks))))
    tokens = (
        redacted.filter(pl.col("kind") == "request")["message"]
        .str.extract(r"(\[REDACTED:[^\]]+\])")
        .unique()
    )
    assert tokens.len() == 1 and GITHUB not in _all_text(redacted)
    out = tmp_path / "streamed.parquet"
    stats = write_redacted(path, out, "parquet")
    assert stats.rows == 800 and stats.replaced == 400 and len(stats.fingerprints) == 1
    assert pl.read_parquet(out).height == 800


def test_other_formats_redact_raw_lines_too(tmp_path: Path) -> None:
    claude = tmp_path / "mcp-server-vault.log"
    msg = orjson.dumps(
        req(1, "tools/call", {"name": "x", "arguments": {"password": PASSWORD, "k": OPENAI}})
    ).decode()
    claude.write_text(
        "2026-01-12T09:41:03.517Z [vault] [info] Initializing server...\n"
        f"2026-01-12T09:41:03.560Z [vault] [info] Message from client: {msg}"
        " { metadata: undefined }\n"
        f"server stderr: using token={ENV_TOKEN} and {GITHUB}\n"
    )
    stdio = tmp_path / "server.ndjson"
    stdio.write_text(msg + "\n" + orjson.dumps(res(1, {"token": JWT})).decode() + "\n")
    trace = mcptrace.load([claude, stdio])
    assert set(trace.sources["format"]) == {"claude-desktop", "stdio"}
    redacted = redact_trace(trace)
    _assert_clean(_all_text(redacted.messages), [PASSWORD, OPENAI, ENV_TOKEN, GITHUB, JWT])
    assert redacted.messages["kind"].equals(trace.messages["kind"])
    raw = redacted.messages.filter(pl.col("format") == "claude-desktop")["raw"][1]
    assert raw.startswith("2026-01-12T09:41:03.560Z [vault] [info] Message from client: {")
    assert raw.endswith(" { metadata: undefined }")


def test_sample_traces_lint_the_same_when_redacted() -> None:
    trace = mcptrace.load(SAMPLES)
    redacted = redact_trace(trace, RedactionPolicy(emails=True, ips=True))
    assert _lint(redacted) == _lint(trace)
    assert _stats(redacted) == _stats(trace)


def test_convert_redact(seeded: Path, tmp_path: Path) -> None:
    for table, suffix in (("messages", ".jsonl"), ("calls", ".csv"), ("sessions", ".parquet")):
        out = tmp_path / f"{table}{suffix}"
        result = runner.invoke(
            app, ["convert", str(seeded), "-o", str(out), "--table", table, "--redact"]
        )
        assert result.exit_code == 0, result.output
        data = out.read_bytes()
        if suffix == ".parquet":
            data = _all_text(pl.read_parquet(out)).encode()
        _assert_clean(data, DEFAULT_SECRETS)
    plain = tmp_path / "plain.csv"
    runner.invoke(app, ["convert", str(seeded), "-o", str(plain), "--table", "calls"])
    assert STRIPE in plain.read_text()  # the error message of the string-id call


def test_redact_cli_errors(seeded: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["redact", str(seeded), "-o", str(seeded)])
    assert result.exit_code == 2 and "also an input" in result.output
    result = runner.invoke(app, ["redact", str(seeded), "-o", str(tmp_path / "x.txt")])
    assert result.exit_code == 2
    result = runner.invoke(
        app, ["redact", str(seeded), "-o", str(tmp_path / "x.jsonl"), "--path", "$.id"]
    )
    assert result.exit_code == 2 and "protocol structure" in result.output
    missing = tmp_path / "missing.jsonl"
    result = runner.invoke(
        app, ["redact", str(seeded), str(missing), "-o", str(tmp_path / "y.jsonl")]
    )
    assert result.exit_code == 2 and "missing.jsonl" in result.output
    assert (tmp_path / "y.jsonl").exists()


# ---------------------------------------------------------------------------
# Property: tokens of every pattern, anywhere in random JSON, never survive
# ---------------------------------------------------------------------------

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "_-"


def _chars(alphabet: str, lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=lo, max_size=hi)


TOKENS: dict[str, st.SearchStrategy[str]] = {
    "openai": st.builds(lambda s: f"sk-proj-{s}9Q", _chars(B64URL, 20, 60)),
    "anthropic": st.builds(lambda s: f"sk-ant-api03-{s}", _chars(B64URL, 20, 90)),
    "github": st.builds(
        lambda p, s: f"{p}_{s}", st.sampled_from(["ghp", "gho", "ghu", "ghs", "ghr"]),
        _chars(ALNUM, 36, 60),
    ),
    "github-pat": st.builds(lambda s: f"github_pat_{s}", _chars(ALNUM + "_", 22, 80)),
    "aws-id": st.builds(
        lambda p, s: p + s, st.sampled_from(["AKIA", "ASIA"]),
        _chars(string.ascii_uppercase + string.digits, 16, 16),
    ),
    "slack": st.builds(
        lambda c, s: f"xox{c}-{s}", st.sampled_from("baprs"), _chars(ALNUM + "-", 10, 60)
    ),
    "google": st.builds(lambda s: f"AIza{s}", _chars(B64URL, 35, 35)),
    "stripe": st.builds(
        lambda p, m, s: f"{p}_{m}_{s}", st.sampled_from(["sk", "rk"]),
        st.sampled_from(["live", "test"]), _chars(ALNUM, 16, 40),
    ),
    "jwt": st.builds(
        lambda a, b, c: f"eyJ{a}.eyJ{b}.{c}", _chars(B64URL, 4, 40), _chars(B64URL, 4, 80),
        _chars(B64URL, 0, 60),
    ),
    "pem": st.builds(
        lambda kind, lines: f"-----BEGIN {kind}PRIVATE KEY-----\n" + "\n".join(lines)
        + f"\n-----END {kind}PRIVATE KEY-----",
        st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]),
        st.lists(_chars(ALNUM + "+/", 16, 64), min_size=1, max_size=4),
    ),
    "bearer": st.builds(lambda s: f"Bearer {s}.7", _chars(B64URL + "~+/", 8, 60)),
    "url-password": st.builds(
        lambda u, p: f"https://{u}:{p}Q9@host.example/x", _chars(ALNUM, 1, 12),
        _chars(ALNUM + "!$%*", 8, 30),
    ),
}  # fmt: skip


def _secret_parts(kind: str, token: str) -> list[str]:
    """What must not survive of a token (its secret part; for PEM each key line)."""
    if kind == "pem":
        return [line for line in token.splitlines()[1:-1] if len(line) >= 16]
    if kind == "bearer":
        return [token.removeprefix("Bearer ")]
    if kind == "url-password":
        return [token.split(":", 2)[2].split("@", maxsplit=1)[0]]
    return [token]


json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text()
)
random_json = st.recursive(
    json_leaf,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
filler = st.text(alphabet=string.ascii_letters + string.digits + " .,:;!?()", max_size=20)


_SKELETON_NAMES = frozenset({"jsonrpc", "id", "method", "params", "result", "error"})


@st.composite
def embedded(draw: st.DrawFn) -> tuple[str, list[str], Any]:
    """A random JSON value with a token somewhere inside (in a string with text around)."""
    kind = draw(st.sampled_from(sorted(TOKENS)))
    token = draw(TOKENS[kind])
    value: Any = draw(filler) + " " + token + " " + draw(filler)
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            siblings = draw(st.lists(random_json, max_size=3))
            siblings.insert(draw(st.integers(0, len(siblings))), value)
            value = siblings
        else:
            # JSON-RPC member names make a document look like a message, whose skeleton
            # values are kept by design (and reported as structural by `scan`)
            names = st.text(max_size=8).filter(lambda k: k not in _SKELETON_NAMES)
            members = draw(st.dictionaries(names, random_json, max_size=3))
            key = draw(names.filter(bool))
            members[key] = value
            value = members
    parts = _secret_parts(kind, token)
    # a random sibling that happens to spell the secret is not a leak: skip such draws
    doc = orjson.dumps(value).decode()
    assume(all(doc.count(p) == token.count(p) for p in parts))
    return kind, parts, value


@settings(max_examples=300, deadline=None)
@given(embedded())
def test_random_tokens_in_random_json_never_survive(case: tuple[str, list[str], Any]) -> None:
    kind, parts, value = case
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "t", "arguments": {"data": value}}}  # fmt: skip
    text = orjson.dumps(message).decode()
    record = orjson.dumps({"dir": "c2s", "session": "s", "msg": message}).decode()
    redactor = Redactor()
    # inside a message's arguments, and in a capture record around it: always redacted
    for cell, mode in ((text, "message"), (record, "json")):
        hits: list[Any] = []
        out = redactor.cell(cell, mode, hits)
        for part in parts:
            assert part not in out, (kind, part, out)
        parsed = orjson.loads(out)  # still JSON, skeleton intact
        msg = parsed if mode == "message" else parsed["msg"]
        assert msg["id"] == 1 and msg["params"]["name"] == "t" and msg["jsonrpc"] == "2.0"
        assert hits and not any(structural for _, _, structural in hits)
    # the random document on its own may itself look like a message ({"jsonrpc": token}):
    # then the token is protocol structure, kept, and reported as such
    hits = []
    out = redactor.cell(orjson.dumps(value).decode(), "json", hits)
    if any(part in out for part in parts):
        assert any(structural for _, _, structural in hits)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(embedded(), min_size=1, max_size=4))
def test_random_tokens_never_reach_written_files(cases: list[tuple[str, list[str], Any]]) -> None:
    import tempfile

    # as in embedded(), across the cases: another case's text that happens to spell this
    # case's secret (a PEM body of zeros inside another's filler) is not a leak
    docs = [orjson.dumps(value).decode() for _, _, value in cases]
    for i, (_, parts, _) in enumerate(cases):
        for j, (_, others, _) in enumerate(cases):
            assume(i == j or all(p in others or p not in docs[j] for p in parts))

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.jsonl"
        lines = []
        for i, (_, _, value) in enumerate(cases):
            lines.append(
                orjson.dumps(rec(req(i, "tools/call", {"name": "t", "arguments": {"v": value}})))
            )
            lines.append(
                orjson.dumps(rec(f"stderr says {orjson.dumps(value).decode()}", dir="stderr"))
            )
        src.write_bytes(b"\n".join(lines) + b"\n")
        out = Path(tmp) / "out.jsonl"
        write_redacted(src, out, "jsonl")
        data = out.read_text()
        for _, parts, _ in cases:
            for part in parts:
                assert part not in data


def test_report_redact(seeded: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    result = runner.invoke(app, ["report", str(seeded), "-o", str(page), "--redact"])
    assert result.exit_code == 0, result.output
    _assert_clean(page.read_bytes(), DEFAULT_SECRETS)
    assert "[REDACTED:" in page.read_text()


def test_raw_envelopes_around_text_and_json(tmp_path: Path) -> None:
    """mcpsnoop keeps stderr text inside a JSON string and messages as JSON objects: the
    envelope around either is redacted, and raw agrees with the redacted message."""
    session = "server-vault-4242-aa11bb22cc33"
    envelope: dict[str, Any] = {"session_id": session, "server_label": "vault", "seq": 1}
    lines = [
        {**envelope, "direction": "meta", "raw": {"command": ["vault", "--token", FLAG_VALUE]}},
        {**envelope, "seq": 2, "direction": "c2s", "raw": req(1, "tools/call", {
            "name": "unlock", "arguments": {"password": PASSWORD}})},
        {**envelope, "seq": 3, "direction": "stderr", "text": f"vault unlocked with {GITHUB}"},
        {**envelope, "seq": 4, "direction": "stderr", "text": "ok",
         "note": f"api_key={ENV_TOKEN}"},
    ]  # fmt: skip
    path = tmp_path / "session-vault.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    trace = mcptrace.load(path)
    assert set(trace.messages["format"]) == {"mcpsnoop"}
    out = redact_trace(trace).messages
    _assert_clean(_all_text(out), [FLAG_VALUE, PASSWORD, GITHUB, ENV_TOKEN])
    for row in out.iter_rows(named=True):
        raw = orjson.loads(row["raw"])  # every envelope is still JSON
        assert raw["session_id"] == session  # the session key is structure
        if row["kind"] == "request":
            assert orjson.dumps(raw["raw"]).decode() == row["message"]
        if row["kind"] == "stderr":
            assert raw["text"] == row["message"]
    assert out["session"].to_list() == [session] * 4
