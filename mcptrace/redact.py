"""Redaction: traces with their secrets replaced, safe to share.

**What is found.** Built-in detectors (on by default) recognise credentials by their
shape wherever they occur — private key blocks (PEM), JWTs, Anthropic, OpenAI, GitHub,
Slack, Google and Stripe keys, AWS access key ids and the secret keys next to them,
Slack webhooks, passwords inside URLs (``scheme://user:pw@host``), ``Bearer`` and
``Basic`` credentials — and by their *name*: values of JSON members and ``key=value``
text whose key means a secret (password, passwd, passphrase, secret, token, api key,
access key, private key, auth, authorization, cookie, credential, jwt, signature ...;
case-insensitive, with or without ``-``/``_``), HTTP headers named like a credential
(``Authorization``, ``Proxy-Authorization``, ``Cookie``, ``Set-Cookie``, ``X-Api-Key``
and any header with auth, token, secret, key, cookie, password, credential, session or
signature in its name), the ``value`` of ``{"name": ..., "value": ...}`` pairs named
so, and the argument after a ``--password``-style flag. A :class:`RedactionPolicy`
adds keys, JSON paths (``$.params.arguments.ssn``) and regular expressions of the
user's, and optionally masks e-mail and IP addresses (off by default).

**What replaces it.** A string secret becomes ``[REDACTED:<kind>:<id>:<length>]``,
e.g. ``[REDACTED:github-token:5d41402abc4b:33-64]``: the detector that fired, a
12-hex-digit id, and the power-of-two class of the secret's length. The id is a
BLAKE2b hash of the secret keyed with a random salt drawn once per policy (per run of
``mcptrace redact``) and never written anywhere: the same secret gets the same
placeholder everywhere in one run — in every column, every file, every chunk — so
request and response, subscription and update, header and session still match; but
the id cannot be reversed by guessing candidate secrets, nor linked across runs. Only
the secret part of a match is replaced: ``Bearer [REDACTED:...]``, cookie names, the
user in ``https://user:[REDACTED:...]@host``. A *number* under a secret key becomes
``0`` (``0.0`` for a fraction): the JSON type is kept, so schema checks judge the
trace the same way, and zero tells nothing — not even how many digits the number had.
Booleans and nulls are not secrets and stay.

**What is never touched.** Redaction edits only the string (and number) literals of
secrets inside the JSON text; whitespace, member order, number spellings and
everything else stay byte for byte. The protocol skeleton is exempt from every rule:
``jsonrpc``, ``id``, ``method``, ``error.code``, ``result.resultType``/``isError``/
``protocolVersion``, progress tokens, the ``requestId`` of cancellations, reserved
``_meta`` keys (``progressToken``, ``io.modelcontextprotocol/*``, trace context),
tool and prompt names (``params.name``, ``params.ref.name``, ``result.tools[].name``,
``result.prompts[].name``), ``params.level``, declared capabilities, client and server
name and version, and the ``Mcp-*`` HTTP headers (``Mcp-Session-Id``,
``MCP-Protocol-Version``, ...). A JSON object is a message (whose skeleton this is)
when it has ``jsonrpc``, a protocol-looking ``method``, or an ``id`` with ``result`` or
``error``; envelopes that embed a message (capture records, mcpsnoop, Inspector
entries, log lines) are handled the same way, and their session member (``session``,
``session_id``) is the session key. A message quoted *inside* another message's
content (a tool echoing JSON-RPC) is content, skeleton and all. Because of this, a
redacted trace lints and measures exactly as the original. A secret-looking value *in*
the skeleton is kept and reported as ``structural`` (``mcptrace scan`` lists it);
``--key Mcp-Session-Id`` asks for session ids to be redacted anyway, header, envelope
and session key alike.

**Columns of the messages table.** Content, redacted: ``message`` (JSON-aware when it
is JSON, as text otherwise), ``raw`` (the redacted message where raw is the message or
holds it verbatim, and the envelope or log line around it redacted the same way, JSON
walked as JSON, embedded JSON found in text), ``http_headers``
(header rules), ``parse_error`` and ``server`` (text); ``target`` and
``error_message`` are derived from the message and re-derived from the redacted one.
Structure, kept: ``source`` (the file name given), ``format``, ``id``, ``method``,
``protocol_version``, ``result_type``, ``progress_token``, ``cancel_id``,
``http_method`` — their values sit in the skeleton of the message — and ``session``
(a join key; redacted only when ``Mcp-Session-Id`` is asked for). The other columns
are numbers, times, booleans and enumerations.

Detection is vectorised: Polars regexes find the rows whose columns may hold a secret
at all (a superset: a literal search over every row, then a finer one over the rows it
passes), and only those are walked in Python, once per distinct value. Names count
where a value follows them (``token=``, ``"token":``, ``--token``), so prose that
merely mentions tokens stays in Rust.

Limits: detection is by shape and name. A secret in prose with no telling name next
to it (``my password is hunter2``) is not found; a name with more than one separator
inside a compound word (``api__key``) is not recognised in text; values inside
base64 payloads (images, HAR bodies) are not decoded.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.errors import UsageError
from mcptrace.inputs import PathLike
from mcptrace.loaders.rows import rpc_fields
from mcptrace.protocol.meta import RESERVED_META_KEYS, has_reserved_prefix
from mcptrace.schema import MESSAGES, PROTOCOL_KINDS
from mcptrace.streaming import StreamStats, iter_messages, write_frames
from mcptrace.trace import Trace
from mcptrace.writers import OutputFormat

# ---------------------------------------------------------------------------
# Placeholders
# ---------------------------------------------------------------------------

#: a placeholder this module wrote; detectors skip them, so redaction is idempotent
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{12}:[0-9]+(?:-[0-9]+|\+)\]")
_PLACEHOLDER_SPLIT = re.compile(f"({PLACEHOLDER.pattern})")
_AUTH_SCHEME = re.compile(
    r"(?i)^((?:bearer|basic|digest|token|bot|apikey|negotiate|ntlm|dpop|aws4-hmac-sha256)"
    r"[ \t]+)(.+)$",
    re.DOTALL,
)
_ESCAPES = re.compile(r"\\+([\"/\\nrt])")
_UNESCAPED = {"n": "\n", "r": "\r", "t": "\t"}


def _canonical(value: str) -> str:
    """The secret behind one spelling of it: JSON escapes (however deeply nested) undone,
    so a PEM block hashes alike with real newlines and as ``\\n`` inside a raw line."""
    if "\\" not in value:
        return value
    return _ESCAPES.sub(lambda m: _UNESCAPED.get(m.group(1), m.group(1)), value)


def _length_class(n: int) -> str:
    """Power-of-two class of a length: 1-8, 9-16, 17-32, ... 2049-4096, 4097+."""
    upper = 8
    while upper < n and upper < 4096:
        upper *= 2
    if n > 4096:
        return "4097+"
    return f"{1 if upper == 8 else upper // 2 + 1}-{upper}"


#: what other tools leave where a secret was: nothing to redact (nor to report)
_MASKED = re.compile(
    r"(?i)[<\[({]?(?:redacted|hidden|masked|removed|filtered|omitted)[>\])}]?"
    r"|[*xX\u2022.]{3,}"
)


def is_redacted(value: str) -> bool:
    """True when ``value`` holds nothing but placeholders (and an auth scheme), or is an
    obvious mask left by another tool (``<redacted>``, ``****``)."""
    rest = PLACEHOLDER.sub("", value).strip()
    scheme = _AUTH_SCHEME.match(rest)
    if scheme is not None:
        rest = scheme.group(2).strip()
    elif rest.lower() in {"bearer", "basic", "digest", "token", "bot", "apikey"} and (
        rest != value.strip()
    ):
        return True
    return not rest or _MASKED.fullmatch(rest) is not None


# ---------------------------------------------------------------------------
# Detectors
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Detector:
    """A credential recognised by its shape: ``group`` of each match is the secret."""

    kind: str
    pattern: re.Pattern[str]
    description: str
    group: int | str = 0
    check: Callable[[str], bool] | None = None
    #: literals every match contains (in lowercase text when ``anchors_ci``): a text
    #: without any of them is not searched at all; None means always search
    anchors: tuple[str, ...] | None = None
    anchors_ci: bool = False


def _mixed(token: str) -> bool:
    # kebab-case words ("sk-learn-...") are not keys: a key has a digit or a capital
    return any(c.isdigit() or c.isupper() for c in token)


def _opaque(token: str) -> bool:
    # "Bearer authentication" in prose is not a credential; a token has a digit or symbol
    return any(c.isdigit() or c in "._~+/-=" for c in token)


def _secret_like(value: str) -> bool:
    """A value after ``key:`` in prose that looks like a credential, not a word: a digit, a
    symbol or mixed case in 4+ characters, or simply long."""
    if len(value) < 4:
        return False
    if len(value) >= 16:
        return True
    mixed_case = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return mixed_case or any(not c.isalpha() for c in value)


def _basic_credentials(token: str) -> bool:
    try:
        return b":" in base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return False


_EDGE = r"(?<![A-Za-z0-9_-])"
_AWS_ID = r"(?:AKIA|ASIA)[A-Z0-9]{16}"
_PEM_LABEL = r"-----(?:BEGIN|END)[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"

#: in application order: a detector never sees what an earlier one replaced
BUILTIN_DETECTORS: tuple[Detector, ...] = (
    Detector(
        "private-key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            # the whole block up to its END line, or (truncated) as far as key text goes;
            # never past a quote, so a block cut short cannot swallow the JSON around it
            r'(?:[^"]*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----'
            r"|(?:[A-Za-z0-9+/=:,.\s-]|\\+[nrt/])*)"
        ),
        "PEM private key block (RSA, EC, OpenSSH, PKCS#8, PGP), also cut short",
        anchors=("PRIVATE KEY",),
    ),
    Detector(
        "aws-secret-key",
        re.compile(
            rf"(?<![A-Z0-9]){_AWS_ID}(?![A-Z0-9])[^\n]{{0,100}}?"
            r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        "AWS secret access key: 40 base64 characters after an access key id",
        anchors=("AKIA", "ASIA"),
        group="secret",
    ),
    Detector(
        "jwt",
        re.compile(rf"{_EDGE}eyJ[A-Za-z0-9_-]{{4,}}\.eyJ[A-Za-z0-9_-]{{4,}}\.[A-Za-z0-9_-]*"),
        "JSON Web Token (eyJ....eyJ....signature)",
        anchors=("eyJ",),
    ),
    Detector(
        "anthropic-key",
        re.compile(rf"{_EDGE}sk-ant-[A-Za-z0-9_-]{{20,}}"),
        "Anthropic API key (sk-ant-...)",
        anchors=("sk-ant-",),
    ),
    Detector(
        "openai-key",
        re.compile(rf"{_EDGE}sk-(?!ant-)[A-Za-z0-9_-]{{20,}}"),
        "OpenAI-style secret key (sk-..., sk-proj-...)",
        anchors=("sk-",),
        check=_mixed,
    ),
    Detector(
        "github-token",
        re.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"
        ),
        "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
        anchors=("gh", "github_pat_"),
    ),
    Detector(
        "aws-access-key-id",
        re.compile(rf"(?<![A-Za-z0-9]){_AWS_ID}(?![A-Za-z0-9])"),
        "AWS access key id (AKIA..., ASIA...)",
        anchors=("AKIA", "ASIA"),
    ),
    Detector(
        "slack-token",
        re.compile(rf"{_EDGE}xox[abprs]-[A-Za-z0-9-]{{10,}}"),
        "Slack token (xoxb-, xoxa-, xoxp-, xoxr-, xoxs-)",
        anchors=("xox",),
    ),
    Detector(
        "slack-webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/-]+"),
        "Slack incoming webhook URL",
        anchors=("hooks.slack.com",),
    ),
    Detector(
        "google-api-key",
        re.compile(rf"{_EDGE}AIza[0-9A-Za-z_-]{{35}}(?![0-9A-Za-z_-])"),
        "Google API key (AIza...)",
        anchors=("AIza",),
    ),
    Detector(
        "stripe-key",
        re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
        "Stripe secret or restricted key (sk_live_, rk_live_, ..._test_)",
        anchors=("k_live_", "k_test_"),
    ),
    Detector(
        "url-password",
        re.compile(
            r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/?#@:\"'<>\\]+:"
            r"(?P<secret>[^\s/?#@\"'<>\\]+)@"
        ),
        "password in a URL (scheme://user:password@host)",
        anchors=("://",),
        anchors_ci=True,
        group="secret",
    ),
    Detector(
        "bearer",
        re.compile(r"(?i:\bbearer)[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{8,}=*)"),
        "Bearer token (RFC 6750) in any text",
        anchors=("bearer",),
        anchors_ci=True,
        group="secret",
        check=_opaque,
    ),
    Detector(
        "basic-auth",
        re.compile(r"(?i:\bbasic)[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        "HTTP Basic credentials (base64 of user:password)",
        anchors=("basic",),
        anchors_ci=True,
        group="secret",
        check=_basic_credentials,
    ),
)

EMAIL_DETECTOR = Detector(
    "email",
    re.compile(
        r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"
    ),
    "e-mail address (--emails)",
    anchors=("@",),
)
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    # "::" and "a::b" are more often punctuation or code than addresses
    return text == "::1" or sum(1 for g in text.split(":") if g) >= 2


IP_DETECTORS = (
    Detector(
        "ip",
        re.compile(rf"(?<![0-9.]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9]|\.[0-9])"),
        "IPv4 address (--ips)",
        anchors=(".",),
    ),
    Detector(
        "ip",
        re.compile(r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Za-z:])"),
        "IPv6 address (--ips)",
        check=_ipv6,
        anchors=(":",),
    ),
)

# ---------------------------------------------------------------------------
# Secret names
# ---------------------------------------------------------------------------

_SEPARATORS = re.compile(r"[-_. ]")
#: a JSON key or text key is secret when, lowercased without - _ . and spaces, it
#: contains one of these ...
_NAME_CONTAINS = ("password", "passwd", "secret", "apikey", "privatekey", "credential")
#: ... or ends with one of these ...
_NAME_SUFFIXES = (
    "token",
    "pwd",
    "passphrase",
    "auth",
    "authorization",
    "cookie",
    "accesskey",
    "secretkey",
    "jwt",
    "bearer",
    "signature",
)
#: ... and is not one of these protocol keys
_NAME_NOT_SECRET = frozenset({"progresstoken"})
#: HTTP header names holding credentials contain one of these (lowercased)
_HEADER_CONTAINS = (
    "auth",
    "token",
    "secret",
    "key",
    "cookie",
    "password",
    "passwd",
    "credential",
    "session",
    "signature",
)
#: named like a credential but protocol: auth challenges point at metadata, not secrets
_HEADER_NOT_SECRET = frozenset(
    {"www-authenticate", "proxy-authenticate", ":authority", "authority"}
)
#: keys whose members are property names of a JSON Schema, not data
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
#: every secret name contains one of these (lowercased; compound words with at most one
#: separator)
_NAME_FRAGMENT = (
    r"passw|passph|pwd|secret|token|api[-_. ]?key|access[-_. ]?key|private[-_. ]?key|auth"
    r"|cookie|credential|jwt|bearer|signature"
)
#: the same gates for the Polars prefilter: case-sensitive literals, then the rest
_SHAPE_ANCHORS_CS = (
    r"sk-|[sr]k_(?:live|test)_|gh[pousr]_|github_pat_|AKIA|ASIA|xox[abprs]-|hooks\.slack\.com"
    r"|AIza|eyJ|PRIVATE KEY"
)
_SHAPE_ANCHORS_CI = r"bearer|basic|://[^\s/]*@"


#: characters of a lowercased key or flag name (``api_token``, ``--api-key``)
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


def normalise_name(name: str) -> str:
    """A key as compared: lowercase, without ``-``, ``_``, ``.`` and spaces."""
    return _SEPARATORS.sub("", name.lower())


def _fuzzy(word: str) -> str:
    """A regex for ``word`` with any separators between its letters (user keys: the key
    ``account_number`` is also ``Account-Number`` and ``accountNumber``)."""
    return "[-_. ]*".join(re.escape(c) for c in normalise_name(word) or word)


def _builtin_name_kind(norm: str) -> str | None:
    if norm in _NAME_NOT_SECRET:
        return None
    if norm.endswith("authorization"):
        return "authorization"
    if norm.endswith("cookie"):
        return "cookie"
    if any(c in norm for c in _NAME_CONTAINS) or norm.endswith(_NAME_SUFFIXES):
        return "secret-field"
    return None


# ---------------------------------------------------------------------------
# The protocol skeleton
# ---------------------------------------------------------------------------

_SKELETON_PATHS = frozenset(
    {
        ("jsonrpc",),
        ("id",),
        ("method",),
        ("error", "code"),
        ("result", "resultType"),
        ("result", "isError"),
        ("result", "protocolVersion"),
        ("params", "protocolVersion"),
        ("params", "progressToken"),
        ("params", "requestId"),
        ("params", "name"),
        ("params", "ref", "type"),
        ("params", "ref", "name"),
        ("params", "level"),
        ("params", "clientInfo", "name"),
        ("params", "clientInfo", "version"),
        ("result", "serverInfo", "name"),
        ("result", "serverInfo", "version"),
    }
)
_SKELETON_SUBTREES = frozenset({("params", "capabilities"), ("result", "capabilities")})
_PROTOCOL_METHOD = re.compile(r"^(?:[a-z]+/[A-Za-z/_]+|initialize|ping)$")


def is_skeleton_path(path: tuple[str | int, ...]) -> bool:
    """True for a path (relative to a JSON-RPC message) that redaction never changes."""
    if path in _SKELETON_PATHS or path[:2] in _SKELETON_SUBTREES:
        return True
    return (
        len(path) == 4
        and path[0] == "result"
        and path[1] in ("tools", "prompts")
        and isinstance(path[2], int)
        and path[3] == "name"
    )


def _protocol_meta_key(key: str) -> bool:
    return (
        key in RESERVED_META_KEYS
        or has_reserved_prefix(key, "2025-06-18")
        or has_reserved_prefix(key, "2025-11-25")
    )


def _is_message(node: Any) -> bool:
    """A JSON-RPC message, whatever envelope holds it."""
    if type(node) is not dict:
        return False
    if "jsonrpc" in node:
        return True
    method = node.get("method")
    if type(method) is str and _PROTOCOL_METHOD.match(method):
        return True
    return "id" in node and ("result" in node or "error" in node)


# ---------------------------------------------------------------------------
# JSON paths given by the user
# ---------------------------------------------------------------------------

_PATH_STEP = re.compile(
    r"""\.\.(?P<deep>[^.\[\]]+)|\.(?P<key>[^.\[\]]+)"""
    r"""|\[(?:(?P<index>[0-9]+)|(?P<star>\*)|'(?P<sq>[^']*)'|"(?P<dq>[^"]*)")\]"""
)
_ANY = object()


@dataclass(frozen=True)
class JsonPath:
    """``$.a.b``, ``$.a[0]``, ``$.a[*].b``, ``$.a.*``, ``$['a-b']``, ``$..ssn`` (any depth),
    relative to a JSON-RPC message."""

    text: str
    #: ("key", name) | ("index", n) | ("any", None) | ("deep", name or _ANY)
    steps: tuple[tuple[str, Any], ...]

    @classmethod
    def parse(cls, text: str) -> JsonPath:
        if not text.startswith("$"):
            raise UsageError(f"JSON path {text!r} must start with $ (e.g. $.params.arguments.x)")
        steps: list[tuple[str, Any]] = []
        pos = 1
        while pos < len(text):
            m = _PATH_STEP.match(text, pos)
            if m is None:
                raise UsageError(f"cannot read JSON path {text!r} at character {pos + 1}")
            if m.group("deep") is not None:
                deep = m.group("deep")
                steps.append(("deep", _ANY if deep == "*" else deep))
            elif m.group("key") is not None:
                key = m.group("key")
                steps.append(("any", None) if key == "*" else ("key", key))
            elif m.group("index") is not None:
                steps.append(("index", int(m.group("index"))))
            elif m.group("star") is not None:
                steps.append(("any", None))
            else:
                steps.append(("key", m.group("sq") if m.group("sq") is not None else m.group("dq")))
            pos = m.end()
        if not steps:
            raise UsageError(f"JSON path {text!r} names the whole message")
        path = cls(text, tuple(steps))
        literal = tuple(v for k, v in steps if k in ("key", "index"))
        if len(literal) == len(steps) and is_skeleton_path(literal):
            raise UsageError(
                f"JSON path {text!r} is protocol structure (ids, methods, tool names, ...), "
                "which redaction never changes"
            )
        return path

    @property
    def anchor(self) -> str | None:
        """A key every match of the path has in its text (the last one it names)."""
        for kind, value in reversed(self.steps):
            if kind in ("key", "deep") and isinstance(value, str):
                return value
        return None

    def matches(self, path: tuple[str | int, ...]) -> bool:
        return _match_steps(self.steps, 0, path, 0)


def _step_ok(kind: str, value: Any, part: str | int) -> bool:
    if kind == "any" or value is _ANY:
        return True
    if kind == "index":
        return bool(part == value)
    return isinstance(part, str) and part == value


def _match_steps(
    steps: tuple[tuple[str, Any], ...], i: int, path: tuple[str | int, ...], j: int
) -> bool:
    if i == len(steps):
        return j == len(path)
    kind, value = steps[i]
    if kind == "deep":
        return any(
            _step_ok("key", value, path[k]) and _match_steps(steps, i + 1, path, k + 1)
            for k in range(j, len(path))
        )
    if j == len(path) or not _step_ok(kind, value, path[j]):
        return False
    return _match_steps(steps, i + 1, path, j + 1)


# ---------------------------------------------------------------------------
# Policy
# ---------------------------------------------------------------------------


@dataclass
class RedactionPolicy:
    """What to redact. The built-in detectors are on unless ``builtin=False``.

    ``keys`` are extra secret names (JSON members, ``key=value`` text, HTTP headers;
    compared case-insensitively without ``-``/``_``); ``paths`` are JSON paths relative
    to a JSON-RPC message (``$.params.arguments.ssn``, ``$..ssn``); ``regexes`` are
    Python regular expressions whose matches are secrets (only the group named
    ``secret``, or else group 1, when the expression has groups). ``salt`` keys the
    placeholder ids; it is random per policy, so one policy object is one "run".
    """

    keys: Sequence[str] = ()
    paths: Sequence[str] = ()
    regexes: Sequence[str] = ()
    emails: bool = False
    ips: bool = False
    builtin: bool = True
    salt: bytes = field(default_factory=lambda: secrets.token_bytes(16), repr=False)

    def __post_init__(self) -> None:
        # one string is one key, not a sequence of one-letter keys
        self.keys = (self.keys,) if isinstance(self.keys, str) else tuple(self.keys)
        self.paths = (self.paths,) if isinstance(self.paths, str) else tuple(self.paths)
        self.regexes = (self.regexes,) if isinstance(self.regexes, str) else tuple(self.regexes)
        for key in self.keys:
            if not normalise_name(key):
                raise UsageError(f"secret key {key!r} is empty")
        self.json_paths = tuple(JsonPath.parse(p) for p in self.paths)
        compiled = []
        for text in self.regexes:
            try:
                compiled.append(re.compile(text))
            except re.error as exc:
                raise UsageError(f"bad regular expression {text!r}: {exc}") from exc
            if compiled[-1].search(""):
                raise UsageError(f"regular expression {text!r} matches the empty string")
        self.compiled_regexes: tuple[re.Pattern[str], ...] = tuple(compiled)

    def detectors(self) -> tuple[Detector, ...]:
        """The shape detectors in application order (names are handled separately)."""
        out = list(BUILTIN_DETECTORS) if self.builtin else []
        for regex in self.compiled_regexes:
            group: int | str = 0
            if "secret" in regex.groupindex:
                group = "secret"
            elif regex.groups:
                group = 1
            out.append(Detector("user-regex", regex, f"--regex {regex.pattern}", group=group))
        if self.emails:
            out.append(EMAIL_DETECTOR)
        if self.ips:
            out.extend(IP_DETECTORS)
        return tuple(out)


#: one found secret: (kind, fingerprint, structural)
Hit = tuple[str, str, bool]


@dataclass
class RedactStats(StreamStats):
    """A streaming redaction: what was read, and how many secrets were replaced."""

    replaced: int = 0
    #: secret-looking values left in protocol structure (ids, tool names, Mcp-* headers)
    kept: int = 0
    fingerprints: set[str] = field(default_factory=set)


# ---------------------------------------------------------------------------
# The JSON walker
# ---------------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_FLAG = re.compile(r"^--?([A-Za-z][A-Za-z0-9_.-]*)$")
_AWS_ID_FULL = re.compile(_AWS_ID)
_AWS_SECRET_FULL = re.compile(r"[A-Za-z0-9/+]{40}")
_MAX_NESTING = 4
#: envelope members that hold the session key (capture "session", mcpsnoop "session_id")
_SESSION_KEYS = frozenset({"session", "sessionid", "mcpsessionid"})
#: stands in for the message inside its raw envelope while the envelope is redacted:
#: nothing any rule looks at
_SENTINEL = "mcptrace-redact-message-6d1f0e4c"


class _WalkError(Exception):
    """The text is not the JSON orjson accepted (should not happen): treat it as text."""


@dataclass(slots=True)
class _Ctx:
    """Where a JSON value sits."""

    #: path from the enclosing JSON-RPC message; None outside any message
    rel: tuple[str | int, ...] | None = None
    #: outside any message's content: envelope members (session) and messages are found
    envelope: bool = True
    #: kind of the secret rule covering the value (its whole subtree), if any
    sensitive: str | None = None
    #: the name that made it secret (cookie values are redacted pair by pair)
    name: str = ""
    skeleton: bool = False
    #: the container is a map of HTTP header names (or a HAR list of name/value pairs)
    headers: bool = False
    meta: bool = False
    #: the container's keys are JSON Schema property names, not data
    schema_map: bool = False
    #: the container holds an AWS access key id: a 40-character sibling is its secret
    aws: bool = False
    #: for {"name": N, "value": V} pairs: the rule N names, for V
    pair: tuple[str, str] | None = None


@dataclass(slots=True)
class _Frame:
    is_object: bool
    ctx: _Ctx
    node: Any
    index: int = 0
    #: a list element was a --password-style flag: the next element is its secret
    flag: tuple[str, str] | None = None


# ---------------------------------------------------------------------------
# The redactor: one per run
# ---------------------------------------------------------------------------


class Redactor:
    """Applies a :class:`RedactionPolicy`; placeholders are stable for its lifetime."""

    def __init__(self, policy: RedactionPolicy | None = None) -> None:
        self.policy = policy if policy is not None else RedactionPolicy()
        self.detectors = self.policy.detectors()
        self.user_keys = frozenset(normalise_name(k) for k in self.policy.keys)
        self.paths = self.policy.json_paths
        #: Mcp-Session-Id values seen in asked-for headers -> their placeholder
        self.session_ids: dict[str, str] = {}
        self.asked_session = "mcpsessionid" in self.user_keys
        user_words = [*self.policy.keys]
        user_words += [p.anchor for p in self.paths if p.anchor is not None]
        words = [_NAME_FRAGMENT] if self.policy.builtin else []
        words += [_fuzzy(w) for w in user_words]
        words_re = "|".join(words) if words else "(?!)"
        self._fragment = re.compile(_NAME_FRAGMENT)
        # a name only matters where a value follows it (``token=x``, ``"token": x``) or it
        # is a flag (``--token x``): prose that merely mentions tokens is not searched
        hint = (
            rf"(?:{words_re})[^\"'=:\r\n]{{0,40}}?(?:\\*[\"'])?[ \t]*[:=]"
            rf"|--?[A-Za-z0-9_.\-]*(?:{words_re})"
        )
        # the same test in Python (see _names_in); every word pattern is lowercase
        self._words = re.compile(words_re)
        self._kv_tail = re.compile(r"[^\"'=:\r\n]{0,40}?(?:\\*[\"'])?[ \t]*[:=]")
        self._key_cache: dict[str, bool] = {}
        self._quoted_kv = re.compile(
            r'(?P<q>\\*")(?P<key>[^"\\\r\n]{1,100})(?P=q)[ \t]*:[ \t]*'
            r"(?:(?P=q)(?P<sval>(?:[^\"\\]|\\.)*?)(?P=q)"
            r"|(?P<nval>-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)(?![0-9.eE]))"
        )
        self._plain_kv = re.compile(
            rf"(?i)(?<![A-Za-z0-9_.\-/])(?P<key>[A-Za-z0-9_.\-]*(?:{words_re})[A-Za-z0-9_\-]*)"
            r"(?P<sep>['\"]?[ \t]*[:=][ \t]*)"
            r"(?P<val>(?:(?:bearer|basic|token|digest|bot|apikey)[ \t]+)?"
            r"(?:\"[^\"\r\n]*\"|'[^'\r\n]*'|[^\s\"',;&<>(){}\[\]]+))"
        )
        self._flag_kv = re.compile(
            r"(?<![A-Za-z0-9_-])--?(?P<key>[A-Za-z][A-Za-z0-9_.-]*)(?:[ \t]+|=)"
            r"(?P<val>\"[^\"\r\n]*\"|'[^'\r\n]*'|[^\s\"'-][^\s\"']*)"
        )
        # user regexes, and user paths ending in an index or wildcard, can match anything
        self._always = bool(self.policy.compiled_regexes) or any(
            p.anchor is None for p in self.paths
        )
        self._gated = tuple(d for d in self.detectors if d.anchors is not None)
        self._cs_anchors = tuple(
            dict.fromkeys(a for d in self._gated if not d.anchors_ci for a in d.anchors or ())
        )
        self._ci_anchors = tuple(
            dict.fromkeys(a for d in self._gated if d.anchors_ci for a in d.anchors or ())
        )
        self._name_cache: dict[str, str | None] = {}
        self._aws = False
        self._header_cache: dict[str, str | None] = {}
        # the Polars prefilters: supersets of the rows the Python side would change. The
        # rough one (literals) runs on every row, the full one only on the rows it passes
        shapes = [f"(?-i:{_SHAPE_ANCHORS_CS})", _SHAPE_ANCHORS_CI] if self.policy.builtin else []
        if self.policy.emails:
            shapes.append("@")
        if self.policy.ips:
            shapes.append(r"[0-9]\.[0-9]|:[0-9a-f]*:")
        shapes.append(r"\\u00[2-7]")  # escaped letters may spell a key
        self._prefilter = "(?i)" + (
            "." if self._always else "|".join(f"(?:{a})" for a in [*shapes, hint])
        )
        self._rough_filter = "(?i)" + (
            "." if self._always else "|".join(f"(?:{a})" for a in [*shapes, words_re])
        )
        self._header_prefilter = "(?i)key|session"

    # -- placeholders ----------------------------------------------------------

    def fingerprint(self, value: str) -> str:
        """12 hex digits: keyed BLAKE2b of the secret (salted per run, never written)."""
        data = _canonical(value).encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, key=self.policy.salt, digest_size=6).hexdigest()

    def placeholder(self, value: str, kind: str) -> str:
        canonical = _canonical(value)
        return f"[REDACTED:{kind}:{self.fingerprint(value)}:{_length_class(len(canonical))}]"

    def _classify(self, value: str, default: str) -> str:
        """The kind of a whole secret: the shape detector that matches it, else ``default``."""
        for det in self.detectors:
            if det.kind.startswith(("user-", "email", "ip")):
                continue
            m = det.pattern.fullmatch(value)
            if m is not None and det.group == 0:
                return det.kind
        return default

    # -- names -----------------------------------------------------------------

    def name_kind(self, name: str) -> str | None:
        """The rule a JSON key or text key falls under, if it names a secret."""
        kind = self._name_cache.get(name, "")
        if kind != "":
            return kind
        norm = normalise_name(name)
        if norm in self.user_keys:
            kind = "user-key"
        elif self.policy.builtin and self._fragment.search(name.lower()) is not None:
            kind = _builtin_name_kind(norm)
        else:
            kind = None
        if len(self._name_cache) > 65536:  # keys repeat; a flood of distinct ones must not grow
            self._name_cache.clear()
        self._name_cache[name] = kind
        return kind

    def header_kind(self, name: str) -> str | None:
        """The rule an HTTP header name falls under; None for ordinary (and Mcp-*) headers."""
        kind = self._header_cache.get(name, "")
        if kind != "":
            return kind
        norm = normalise_name(name)
        lower = name.lower().strip()
        if norm in self.user_keys:
            kind = "user-key"
        elif not self.policy.builtin or lower.startswith("mcp-") or lower in _HEADER_NOT_SECRET:
            kind = None
        elif norm.endswith("authorization"):
            kind = "authorization"
        elif norm.endswith("cookie"):
            kind = "cookie"
        else:
            kind = "header" if any(w in lower for w in _HEADER_CONTAINS) else None
        if len(self._header_cache) > 65536:
            self._header_cache.clear()
        self._header_cache[name] = kind
        return kind

    @staticmethod
    def header_structural(name: str) -> bool:
        """``Mcp-Session-Id``, ``MCP-Protocol-Version``, ``Mcp-Method``, ...: protocol."""
        return name.lower().strip().startswith("mcp-")

    # -- text ------------------------------------------------------------------

    def _record(self, hits: list[Hit], value: str, kind: str, structural: bool) -> None:
        hits.append((kind, self.fingerprint(value), structural))

    def _secret(self, value: str, kind: str, hits: list[Hit], keep: bool) -> str:
        """The replacement of one secret (``value`` itself when kept or already redacted)."""
        if not value or is_redacted(value):
            return value
        self._record(hits, value, kind, keep)
        return value if keep else self.placeholder(value, kind)

    def _outside_placeholders(self, text: str, fn: Callable[[str], str]) -> str:
        if "[REDACTED:" not in text:
            return fn(text)
        parts = _PLACEHOLDER_SPLIT.split(text)
        return "".join(p if i % 2 else fn(p) for i, p in enumerate(parts))

    def _apply_detector(self, det: Detector, text: str, hits: list[Hit], keep: bool) -> str:
        def one(m: re.Match[str]) -> str:
            secret = m.group(det.group)
            if not secret or (det.check is not None and not det.check(secret)):
                return m.group(0)
            new = self._secret(secret, det.kind, hits, keep)
            if new is secret:
                return m.group(0)
            start, end = m.span(det.group)
            whole = m.group(0)
            return whole[: start - m.start()] + new + whole[end - m.start() :]

        return self._outside_placeholders(text, lambda part: det.pattern.sub(one, part))

    def _whole_value(self, value: str, kind: str, name: str, hits: list[Hit], keep: bool) -> str:
        """Redact a value that is secret as a whole (it sits under a secret name)."""
        if not value or is_redacted(value):
            return value
        norm = normalise_name(name)
        if norm.endswith("cookie") and "=" in value:
            # keep the cookie names (structure): only the values are secret
            pairs = value.split(";")
            limit = 1 if norm.endswith("setcookie") else len(pairs)
            for i in range(min(limit, len(pairs))):
                cname, eq, cvalue = pairs[i].partition("=")
                if eq and cvalue.strip():
                    pairs[i] = f"{cname}={self._secret(cvalue, 'cookie', hits, keep)}"
            return ";".join(pairs)
        scheme = _AUTH_SCHEME.match(value)
        if scheme is not None and not is_redacted(scheme.group(2)):
            secret = scheme.group(2)
            return scheme.group(1) + self._secret(secret, self._classify(secret, kind), hits, keep)
        return self._secret(value, self._classify(value, kind), hits, keep)

    def _kv(self, text: str, hits: list[Hit], keep: bool) -> str:
        """``"password": "x"`` in broken JSON, ``password=x`` and ``--password x`` in text."""

        def quoted(m: re.Match[str]) -> str:
            kind = self.name_kind(m.group("key"))
            if kind is None:
                return m.group(0)
            group = "sval" if m.group("sval") is not None else "nval"
            value = m.group(group)
            if group == "nval":
                if float(value) == 0:
                    return m.group(0)
                self._record(hits, value, kind, keep)
                new = value if keep else ("0.0" if re.search(r"[.eE]", value) else "0")
            else:
                new = self._whole_value(value, kind, m.group("key"), hits, keep)
            start, end = m.span(group)
            return m.group(0)[: start - m.start()] + new + m.group(0)[end - m.start() :]

        def plain(m: re.Match[str]) -> str:
            kind = self.name_kind(m.group("key"))
            if kind is None:
                return m.group(0)
            value = m.group("val")
            quote = value[0] if value[:1] in ("'", '"') and value[-1:] == value[0] else ""
            inner = value[1:-1] if quote and len(value) >= 2 else value
            if "=" not in m.group("sep") and not quote and not _secret_like(inner):
                # "Auth: required", "OAuth: 4 sections" are prose, not credentials
                return m.group(0)
            new = self._whole_value(inner, kind, m.group("key"), hits, keep)
            return m.group(0)[: m.start("val") - m.start()] + quote + new + quote

        def flag(m: re.Match[str]) -> str:
            kind = self.name_kind(m.group("key"))
            if kind is None:
                return m.group(0)
            value = m.group("val")
            quote = value[0] if value[:1] in ("'", '"') and value[-1:] == value[0] else ""
            inner = value[1:-1] if quote and len(value) >= 2 else value
            new = self._whole_value(inner, kind, m.group("key"), hits, keep)
            return m.group(0)[: m.start("val") - m.start()] + quote + new + quote

        def run(part: str) -> str:
            if '"' in part:
                part = self._quoted_kv.sub(quoted, part)
            part = self._plain_kv.sub(plain, part)
            return self._flag_kv.sub(flag, part) if "-" in part else part

        return self._outside_placeholders(text, run)

    def text(
        self,
        text: str,
        hits: list[Hit],
        *,
        keep: bool = False,
        depth: int = 0,
        envelope: bool = True,
    ) -> str:
        """Redact free text: embedded JSON is walked, the rest goes through the detectors."""
        if not self.maybe(text) and "\\u" not in text:
            return text
        if depth < _MAX_NESTING and ("{" in text or "[" in text):
            stripped = text.strip()
            if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
                try:
                    parsed = _json.loads(text)
                except _json.JSONDecodeError:
                    pass
                else:
                    if type(parsed) in (dict, list):
                        return self.json(
                            text, parsed, hits, keep=keep, depth=depth + 1, envelope=envelope
                        )
            pieces = self._embedded_json(text)
            if len(pieces) > 1 or (pieces and pieces[0][0]):
                out = []
                for is_json, piece in pieces:
                    if is_json:
                        out.append(
                            self.json(
                                piece,
                                _json.loads(piece),
                                hits,
                                keep=keep,
                                depth=depth + 1,
                                envelope=envelope,
                            )
                        )
                    else:
                        out.append(self._detect(piece, hits, keep))
                return "".join(out)
        return self._detect(text, hits, keep)

    def _names_in(self, text: str) -> bool:
        """Might ``text`` hold a secret name followed by its value, or a ``--flag``? (The
        Polars prefilter's test, done as a search for the names plus a look after each:
        much faster in Python than the one regex.)"""
        lower = text.lower()
        for m in self._words.finditer(lower):
            if self._kv_tail.match(lower, m.end()) is not None:
                return True
            start = m.start()
            while start > 0 and lower[start - 1] in _KEY_CHARS:
                start -= 1
            if lower[start] == "-":
                return True
        return False

    def _shapes_in(self, text: str, lower: str) -> bool:
        return any(a in text for a in self._cs_anchors) or any(a in lower for a in self._ci_anchors)

    def maybe(self, text: str, *, names: bool = True) -> bool:
        """Cheap test: could ``text`` hold anything a detector or name rule finds?"""
        if self._always:
            return True
        lower = text.lower()
        return self._shapes_in(text, lower) or (names and self._names_in(text))

    def _detect(self, text: str, hits: list[Hit], keep: bool, *, names: bool = True) -> str:
        if not text:
            return text
        lower = text.lower()
        late = []
        for det in self.detectors:
            if det.anchors is not None and not any(
                a in (lower if det.anchors_ci else text) for a in det.anchors
            ):
                continue
            if det.kind in ("email", "ip"):
                late.append(det)  # after the names: "user@host" in a URL is its password's
                continue
            text = self._apply_detector(det, text, hits, keep)
        if names and (self._always or self._names_in(text)):
            text = self._kv(text, hits, keep)
        for det in late:
            text = self._apply_detector(det, text, hits, keep)
        return text

    @staticmethod
    def _embedded_json(text: str) -> list[tuple[bool, str]]:
        """``text`` cut into JSON objects/arrays (that parse) and the text between them."""
        pieces: list[tuple[bool, str]] = []
        pos = done = 0
        tries = 0
        while tries < 64:
            starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
            if not starts:
                break
            start = min(starts)
            tries += 1
            end = _balanced_end(text, start)
            if end is not None:
                try:
                    value = _json.loads(text[start:end])
                except _json.JSONDecodeError:
                    value = None
                if type(value) in (dict, list):
                    if start > done:
                        pieces.append((False, text[done:start]))
                    pieces.append((True, text[start:end]))
                    pos = done = end
                    continue
            pos = start + 1
        if done < len(text):
            pieces.append((False, text[done:]))
        return pieces

    # -- JSON ------------------------------------------------------------------

    def json(
        self,
        text: str,
        parsed: Any,
        hits: list[Hit],
        *,
        root: bool = False,
        headers: bool = False,
        keep: bool = False,
        depth: int = 1,
        envelope: bool = True,
    ) -> str:
        """Redact JSON ``text`` (already parsed as ``parsed``), editing only the literals of
        secrets. ``root``: the text is a JSON-RPC message; ``headers``: a header map;
        ``envelope``: the text is not inside a message's content (so it may hold one)."""
        outer_aws = self._aws
        # the AWS sibling rule looks at every container: only where a key id can be
        self._aws = "AKIA" in text or "ASIA" in text
        top = _Ctx(
            rel=() if root or (envelope and _is_message(parsed)) else None,
            envelope=envelope,
            headers=headers,
            skeleton=keep,
            aws=self._aws and _has_aws_id(parsed),
        )
        try:
            edits = self._walk(text, parsed, top, hits, depth)
        except (_WalkError, IndexError):
            return self._detect(text, hits, keep)
        finally:
            self._aws = outer_aws
        if not edits:
            return text
        out = []
        pos = 0
        for start, end, new in edits:
            out.append(text[pos:start])
            out.append(new)
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def _child(self, frame: _Frame, key: str | int) -> tuple[_Ctx, Any]:
        parent = frame.ctx
        node = frame.node
        child: Any = None
        if frame.is_object and type(node) is dict:
            child = node.get(key)
        elif type(node) is list and isinstance(key, int) and key < len(node):
            child = node[key]
        rel = (*parent.rel, key) if parent.rel is not None else None
        # a message inside an envelope has its skeleton; one inside a message's content
        # (a tool echoing JSON-RPC) is content like any other
        in_envelope = parent.envelope and parent.rel is None
        if in_envelope and parent.sensitive is None and _is_message(child):
            rel = ()
        ctx = _Ctx(rel=rel, sensitive=parent.sensitive, name=parent.name, envelope=in_envelope)
        is_key = isinstance(key, str)
        ctx.skeleton = (
            parent.skeleton
            or (rel is not None and rel != () and is_skeleton_path(rel))
            or (parent.meta and is_key and _protocol_meta_key(str(key)))
        )
        # an envelope's session member is the session key: kept, like the session column,
        # unless Mcp-Session-Id is asked for (then it gets the header's placeholder)
        envelope_session = (
            in_envelope
            and is_key
            and not parent.headers
            and parent.sensitive is None
            and normalise_name(str(key)) in _SESSION_KEYS
        )
        if envelope_session and not self.asked_session:
            ctx.skeleton = True
        if not ctx.skeleton and ctx.sensitive is None:
            kind: str | None = "user-key" if envelope_session else None
            if kind is None and is_key and not parent.schema_map:
                name = str(key)
                if parent.headers:
                    kind = self.header_kind(name)
                    if kind is None and self.header_structural(name):
                        ctx.skeleton = True
                else:
                    kind = self.name_kind(name)
                if kind is not None:
                    ctx.name = name
            if kind is None and parent.pair is not None and key == "value":
                kind, ctx.name = parent.pair
            if kind is None and frame.flag is not None:
                kind, ctx.name = frame.flag
            if kind is None and rel and self.paths and any(p.matches(rel) for p in self.paths):
                kind = "user-path"
            ctx.sensitive = kind
        if parent.aws and type(child) is str and _AWS_SECRET_FULL.fullmatch(child):
            ctx.sensitive = ctx.sensitive or "aws-secret-key"
        if type(child) in (dict, list):
            ctx.meta = key == "_meta"
            ctx.schema_map = key in _SCHEMA_MAPS
            ctx.headers = is_key and normalise_name(str(key)) == "headers"
            ctx.aws = self._aws and _has_aws_id(child)
        if type(child) is dict and type(child.get("name")) is str and "value" in child:
            pair_name = child["name"]
            in_headers = parent.headers or (parent.rel is None and frame.ctx.headers)
            pair_kind = self.header_kind(pair_name) if in_headers else self.name_kind(pair_name)
            if pair_kind is not None:
                ctx.pair = (pair_kind, pair_name)
        return ctx, child

    def _walk(
        self, text: str, parsed: Any, top: _Ctx, hits: list[Hit], depth: int
    ) -> list[tuple[int, int, str]]:
        edits: list[tuple[int, int, str]] = []
        stack: list[_Frame] = []
        ctx, node = top, parsed
        pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
        n = len(text)
        while True:
            # -- one value at pos, in ctx --
            if pos >= n:
                raise _WalkError
            c = text[pos]
            if c in "{[":
                frame = _Frame(c == "{", ctx, node)
                stack.append(frame)
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if text[pos] in "}]":
                    pos += 1
                    stack.pop()
                else:
                    if frame.is_object:
                        pos, ctx, node = self._member(text, pos, frame, hits, edits)
                    else:
                        ctx, node = self._child(frame, 0)
                    continue
            elif c == '"':
                m = _STRING.match(text, pos)
                if m is None:
                    raise _WalkError
                self._string_value(m, ctx, hits, edits, depth)
                if stack and not stack[-1].is_object:
                    flag = _FLAG.match(_json.loads(m.group(0))) if "-" in m.group(0) else None
                    kind = self.name_kind(flag.group(1)) if flag is not None else None
                    stack[-1].flag = (kind, flag.group(1)) if kind and flag else None
                pos = m.end()
            else:
                m = _SCALAR.match(text, pos)
                if m is None:
                    raise _WalkError
                literal = m.group(0)
                if (
                    ctx.sensitive is not None
                    and not ctx.skeleton
                    and literal[0] in "-0123456789"
                    and float(literal) != 0
                ):
                    self._record(hits, literal, ctx.sensitive, False)
                    zero = "0.0" if re.search(r"[.eE]", literal) else "0"
                    edits.append((m.start(), m.end(), zero))
                if stack and not stack[-1].is_object:
                    stack[-1].flag = None
                pos = m.end()
            # -- after a value: the next member or element, or close containers --
            while True:
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                if not stack:
                    if pos != n:
                        raise _WalkError
                    return edits
                frame = stack[-1]
                c = text[pos]
                if c == ",":
                    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                    if frame.is_object:
                        pos, ctx, node = self._member(text, pos, frame, hits, edits)
                    else:
                        frame.index += 1
                        ctx, node = self._child(frame, frame.index)
                    break
                if c in "}]":
                    stack.pop()
                    pos += 1
                    continue
                raise _WalkError

    def _member(
        self,
        text: str,
        pos: int,
        frame: _Frame,
        hits: list[Hit],
        edits: list[tuple[int, int, str]],
    ) -> tuple[int, _Ctx, Any]:
        """Read ``"key":`` at pos; returns the position of the value and its context."""
        m = _STRING.match(text, pos)
        if m is None:
            raise _WalkError
        key = _json.loads(m.group(0))
        if type(key) is not str:
            raise _WalkError
        # a key can be a secret too (an API key used as a map key): only its shape counts
        shaped = self._key_cache.get(key)
        if shaped is None:
            if len(self._key_cache) > 65536:
                self._key_cache.clear()
            shaped = self._key_cache[key] = self.maybe(key, names=False)
        if shaped:
            new = self._detect(key, hits, frame.ctx.skeleton, names=False)
            if new != key:
                edits.append((m.start(), m.end(), _json.dumps(new)))
        pos = _WS.match(text, m.end()).end()  # type: ignore[union-attr]
        if text[pos] != ":":
            raise _WalkError
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        ctx, node = self._child(frame, key)
        return pos, ctx, node

    def _string_value(
        self,
        m: re.Match[str],
        ctx: _Ctx,
        hits: list[Hit],
        edits: list[tuple[int, int, str]],
        depth: int,
    ) -> None:
        literal = m.group(0)
        # most strings hold nothing: a few substring tests over the literal settle it (a
        # literal with escapes is decoded first: "\/" may hide "://")
        if ctx.sensitive is None and "\\" not in literal and not self.maybe(literal):
            return
        value = _json.loads(literal)
        if ctx.skeleton:
            self.text(value, hits, keep=True, depth=depth, envelope=False)
            return
        if ctx.sensitive is not None:
            new = self._whole_value(value, ctx.sensitive, ctx.name, hits, keep=False)
        else:
            envelope = ctx.envelope and ctx.rel is None
            new = self.text(value, hits, depth=depth, envelope=envelope)
        if new != value:
            edits.append((m.start(), m.end(), _json.dumps(new)))

    # -- cells and frames --------------------------------------------------------

    def cell(self, text: str, mode: str, hits: list[Hit]) -> str:
        """Redact one cell. ``mode``: ``message`` (a JSON-RPC message), ``json`` (any text,
        JSON or not), ``headers`` (a header map), ``keep`` (report only)."""
        if mode == "keep":
            self.text(text, hits, keep=True)
            return text
        if mode in ("message", "headers"):
            try:
                parsed = _json.loads(text)
            except _json.JSONDecodeError:
                return self.text(text, hits)
            if type(parsed) in (dict, list):
                return self.json(
                    text, parsed, hits, root=mode == "message", headers=mode == "headers"
                )
        return self.text(text, hits)

    def prefilter(self, column: str, name: str | None = None) -> pl.Expr:
        """Rows of ``column`` (found as ``name`` in the frame, by default ``column``) that
        may hold a secret: a superset, decided in Rust."""
        # "progressToken" is in every progress-tracked message and names no secret: drop it
        # before the test, or the name fragment "token" would send them all to Python
        col = pl.col(name or column).str.replace_all("progressToken", "", literal=True)
        may = col.str.contains(self._prefilter)
        if column == "http_headers":
            may = may | col.str.contains(self._header_prefilter)
        if self.policy.builtin:
            # {"name": "DB_PASSWORD", "value": ...}: the name is not followed by ":"
            may = may | (
                col.str.contains(r'"value\\*"') & col.str.contains(f"(?i){_NAME_FRAGMENT}")
            )
        if column in ("message", "raw") and self.policy.builtin:
            # header maps embedded in envelopes: X-Session-Token, X-Api-Key, ...
            may = may | (
                col.str.contains(r"(?i)headers") & col.str.contains(self._header_prefilter)
            )
        return may.fill_null(False)

    def _rough(self, column: str) -> pl.Expr:
        """A cheaper superset of :meth:`prefilter` (literal searches), run first on every
        row so the full test only sees the rows that pass it."""
        col = pl.col(column)
        may = col.str.contains(self._rough_filter)
        if column == "http_headers":
            may = may | col.str.contains(self._header_prefilter)
        elif column in ("message", "raw") and self.policy.builtin:
            may = may | col.str.contains(r"(?i)headers")
        return may.fill_null(False)

    def redact(self, messages: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The redacted messages table and the secrets found: one row per secret with
        ``row`` (position in ``messages``), ``column``, ``kind``, ``fingerprint`` and
        ``structural`` (left in protocol structure)."""
        MESSAGES.validate(messages)
        found: list[pl.DataFrame] = []
        protocol = pl.col("kind").cast(pl.String).is_in(PROTOCOL_KINDS)
        headers, hits = self._column(messages, "http_headers", pl.lit("headers"))
        found.append(hits)
        message, message_hits = self._column(
            messages,
            "message",
            pl.when(protocol).then(pl.lit("message")).otherwise(pl.lit("json")),
        )
        found.append(message_hits)
        raw, hits = self._raw(messages, message, message_hits)
        found.append(hits)
        out = messages.with_columns(http_headers=headers, message=message, raw=raw)
        for column in ("parse_error", "server"):
            values, hits = self._column(messages, column, pl.lit("json"))
            found.append(hits)
            out = out.with_columns(values.alias(column))
        session_mode = pl.lit("json") if self.asked_session else pl.lit("keep")
        session = out["session"]
        if self.asked_session and self.session_ids:
            session = session.replace(self.session_ids)
        values, hits = self._column(out.with_columns(session), "session", session_mode)
        found.append(hits)
        out = self._rederive(out.with_columns(values.alias("session")), messages)
        return out, pl.concat(found)

    def _raw(
        self, messages: pl.DataFrame, message: pl.Series, message_hits: pl.DataFrame
    ) -> tuple[pl.Series, pl.DataFrame]:
        """The ``raw`` column, consistent with the redacted ``message``.

        Where raw *is* the message (stdio) it takes the redacted message. Where raw is an
        envelope or log line that may hold a secret and holds the message verbatim, the
        message is cut out (a sentinel string stands in), the rest is redacted, and the
        redacted message put back: raw agrees with the message by construction. Other rows
        are redacted on their own.
        """
        raw = messages["raw"].clone()
        same = (messages["raw"] == messages["message"]).fill_null(False)
        same_rows = same.arg_true()
        if len(same_rows):
            raw = raw.scatter(same_rows, message.gather(same_rows))
        # the message's own secrets are raw's too, wherever raw is the message
        hits = [
            message_hits.join(pl.DataFrame({"row": same_rows.cast(pl.Int64)}), on="row", how="semi")
        ]
        candidates = messages.select(
            row=pl.int_range(pl.len(), dtype=pl.Int64),
            raw="raw",
            message="message",
            keep=self._rough("raw") & ~pl.lit(same),
        ).filter("keep")
        candidates = candidates.filter(self.prefilter("raw"))
        if candidates.is_empty():
            return raw, pl.concat(hits).with_columns(column=pl.lit("raw"))
        rows = candidates["row"]
        # the message is cut out where it occurs exactly once (so the cut is the message,
        # never a coincidence inside a secret). A JSON message gives way to a JSON string
        # (the envelope stays JSON); text, which may sit inside a JSON string, to a bare word
        pieces = pl.col("raw").str.split(pl.col("message"))
        quoted = pl.col("message").str.contains(r"^\s*[\[{]")
        sentinel = pl.when(quoted).then(pl.lit(f'"{_SENTINEL}"')).otherwise(pl.lit(_SENTINEL))
        inside = (pl.col("message").str.len_bytes() > 0) & (pieces.list.len() == 2)
        parts = candidates.select(
            "raw",
            inside=inside.fill_null(False),
            quoted=quoted.fill_null(False),
            stub=pl.when(inside).then(
                pl.concat_str(pieces.list.first(), sentinel, pieces.list.last())
            ),
            new_message=message.gather(rows),
        )
        stubs, stub_hits = self._column(parts, "stub", pl.lit("json"), rules="raw")
        # the sentinel must come through untouched (it does, unless a rule took the value
        # around it): those rows get the redacted message back in its place
        ok = parts["inside"] & (stubs.str.count_matches(_SENTINEL, literal=True) == 1)
        ok = (
            ok & (~parts["quoted"] | stubs.str.contains(f'"{_SENTINEL}"', literal=True))
        ).fill_null(False)
        halves = pl.col("stub").str.splitn(_SENTINEL, 2).struct
        before, after = halves.field("field_0"), halves.field("field_1")
        rebuilt = (
            parts.with_columns(stub=stubs)
            .select(
                pl.when(pl.col("quoted"))
                .then(
                    pl.concat_str(
                        before.str.strip_suffix('"'),
                        "new_message",
                        after.str.strip_prefix('"'),
                    )
                )
                .otherwise(pl.concat_str(before, "new_message", after))
            )
            .to_series()
        )
        others, other_hits = self._column(parts, "raw", pl.lit("json"), skip=pl.lit(ok))
        raw = raw.scatter(rows, pl.select(pl.when(ok).then(rebuilt).otherwise(others)).to_series())
        local = pl.DataFrame({"local": pl.int_range(len(rows), eager=True), "row": rows})
        ok_rows = rows.filter(ok)
        hits.append(
            message_hits.join(pl.DataFrame({"row": ok_rows}), on="row", how="semi"),
        )
        for frame, keep in ((stub_hits, True), (other_hits, False)):
            located = frame.rename({"row": "local"}).join(local, on="local", how="left")
            located = located.join(
                pl.DataFrame({"row": ok_rows}), on="row", how="semi" if keep else "anti"
            )
            hits.append(located.select(frame.columns))
        return raw, pl.concat(hits).with_columns(column=pl.lit("raw"))

    def _column(
        self,
        df: pl.DataFrame,
        column: str,
        mode: pl.Expr,
        *,
        skip: pl.Expr | None = None,
        rules: str | None = None,
    ) -> tuple[pl.Series, pl.DataFrame]:
        """Redact ``df[column]`` (read by the rules of column ``rules``, by default the same
        column): the rows that pass the prefilters are redacted once per distinct value."""
        rules = rules or column
        rough = self._rough(column)
        if skip is not None:
            rough = rough & ~skip
        sub = (
            df.select(
                row=pl.int_range(pl.len(), dtype=pl.Int64),
                value=pl.col(column),
                mode=mode,
                candidate=rough,
            )
            .filter("candidate")
            .drop("candidate")
        )
        if not sub.is_empty():
            sub = sub.filter(self.prefilter(rules, "value"))
        series = df[column].clone()
        if sub.is_empty():
            return series, _empty_hits()
        distinct = sub.select("value", "mode").unique(maintain_order=True)
        new_values: list[str] = []
        hit_rows: list[tuple[str, str, str, str, bool]] = []
        for value, mode_name in distinct.iter_rows():
            hits: list[Hit] = []
            new = self.cell(value, mode_name, hits)
            if rules == "http_headers" and self.asked_session:
                self._note_session_ids(value, new)
            new_values.append(new)
            hit_rows.extend((value, mode_name, k, f, s) for k, f, s in hits)
        results = distinct.with_columns(new=pl.Series(new_values, dtype=pl.String))
        per_row = sub.join(results, on=["value", "mode"], how="left", maintain_order="left")
        changed = per_row.filter(pl.col("new") != pl.col("value"))
        if changed.height:
            series = series.scatter(changed["row"], changed["new"])
        if not hit_rows:
            return series, _empty_hits()
        hit_frame = pl.DataFrame(
            hit_rows,
            schema={
                "value": pl.String,
                "mode": pl.String,
                "kind": pl.String,
                "fingerprint": pl.String,
                "structural": pl.Boolean,
            },
            orient="row",
        )
        hits_out = sub.join(hit_frame, on=["value", "mode"], how="inner", maintain_order="left")
        return series, hits_out.select(
            "row",
            column=pl.lit(rules),
            kind="kind",
            fingerprint="fingerprint",
            structural="structural",
        )

    def _note_session_ids(self, before: str, after: str) -> None:
        """Remember the placeholder each asked-for Mcp-Session-Id got (for the session key)."""
        try:
            old, new = _json.loads(before), _json.loads(after)
        except _json.JSONDecodeError:
            return
        if type(old) is not dict or type(new) is not dict:
            return
        for name, value in old.items():
            if normalise_name(name) == "mcpsessionid" and type(value) is str:
                replaced = new.get(name)
                if type(replaced) is str and replaced != value:
                    self.session_ids[value] = replaced

    def _rederive(self, out: pl.DataFrame, before: pl.DataFrame) -> pl.DataFrame:
        """``target`` and ``error_message`` come from the message: take them from the
        redacted one wherever it changed (a secret in a resource URI, an error text)."""
        changed = (out["message"] != before["message"]).fill_null(False) & before["kind"].cast(
            pl.String
        ).is_in(PROTOCOL_KINDS)
        if not changed.any():
            return out
        rows = changed.arg_true()
        targets: list[str | None] = []
        errors: list[str | None] = []
        for text in out["message"].gather(rows).to_list():
            try:
                fields = rpc_fields(_json.loads(text))
            except _json.JSONDecodeError:
                targets.append(None)
                errors.append(None)
                continue
            targets.append(fields[4])
            errors.append(fields[7])
        target = out["target"].clone().scatter(rows, pl.Series(targets, dtype=pl.String))
        error = out["error_message"].clone().scatter(rows, pl.Series(errors, dtype=pl.String))
        return out.with_columns(target=target, error_message=error)

    def redact_calls(self, calls: pl.DataFrame) -> pl.DataFrame:
        """Call records of span and gateway formats: their free-text columns as text."""
        out = calls
        for column in ("target", "error_message", "server", "client"):
            if column not in calls.columns:
                continue
            values, _ = self._column(calls, column, pl.lit("json"))
            out = out.with_columns(values.alias(column))
        return out


def _has_aws_id(node: Any) -> bool:
    values = node.values() if type(node) is dict else node if type(node) is list else ()
    return any(type(v) is str and _AWS_ID_FULL.fullmatch(v) for v in values)


_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.DOTALL)


def _balanced_end(text: str, start: int) -> int | None:
    """End of the bracketed JSON value starting at ``start`` (strings skipped), if closed."""
    depth = 0
    for m in _BRACKETS.finditer(text, start):
        token = m.group(0)
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def _empty_hits() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "row": pl.Int64,
            "column": pl.String,
            "kind": pl.String,
            "fingerprint": pl.String,
            "structural": pl.Boolean,
        }
    )


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def redact_messages(messages: pl.DataFrame, policy: RedactionPolicy | None = None) -> pl.DataFrame:
    """The messages table with every secret replaced (see the module docstring).

    Placeholders are stable per ``policy`` object: pass the same policy to redact several
    tables consistently. Same rows, same columns, same protocol structure.
    """
    return Redactor(policy).redact(messages)[0]


def redact_chunks(
    chunks: Iterable[pl.DataFrame],
    policy: RedactionPolicy | None = None,
    *,
    stats: RedactStats | None = None,
) -> Iterator[pl.DataFrame]:
    """Redact a stream of messages chunks (from :func:`mcptrace.streaming.iter_messages`)
    with one redactor, so a secret gets the same placeholder in every chunk."""
    redactor = Redactor(policy)
    for chunk in chunks:
        out, hits = redactor.redact(chunk)
        if stats is not None:
            _count(stats, hits)
        yield out


def _count(stats: RedactStats, hits: pl.DataFrame) -> None:
    # one secret on one row counts once, whether it is in message, raw or both
    hits = hits.unique(["row", "kind", "fingerprint", "structural"])
    replaced = hits.filter(~pl.col("structural"))
    stats.replaced += replaced.height
    stats.kept += hits.height - replaced.height
    stats.fingerprints.update(replaced["fingerprint"].unique().to_list())


def redact_trace(trace: Trace, policy: RedactionPolicy | None = None) -> Trace:
    """A :class:`~mcptrace.trace.Trace` of the redacted messages (and call records); its
    calls and sessions are derived from them, so they hold no secret either."""
    redactor = Redactor(policy)
    messages, _ = redactor.redact(trace.messages)
    return Trace(
        messages=messages,
        sources=trace.sources,
        unordered_sessions=trace.unordered_sessions,
        call_records=redactor.redact_calls(trace.call_records),
    )


def write_redacted(
    paths: PathLike | Iterable[PathLike],
    output: str | Path,
    fmt: OutputFormat,
    policy: RedactionPolicy | None = None,
    *,
    format: str | None = None,
    tz: str | None = None,
) -> RedactStats:
    """Stream the captures to ``output`` redacted (capture JSONL, Parquet or CSV), with
    memory bounded by the chunk size, as :func:`mcptrace.streaming.write_messages`."""
    stats = RedactStats()
    chunks = redact_chunks(
        iter_messages(paths, format=format, tz=tz, stats=stats), policy, stats=stats
    )
    write_frames(chunks, output, fmt)
    return stats
