"""Rules on sampling message content (tool use and results), roots, URL-mode elicitation,
and the client capabilities that elicitation modes and sampling options need.

Where these messages travel depends on the revision:

* before 2026-07-28 the server asks the client with its own requests: the sampling
  conversation is in the ``params.messages`` of a ``sampling/createMessage`` request and
  the roots are in the client's result to ``roots/list``;
* in 2026-07-28 servers send no requests: the same requests are embedded in the
  ``result.inputRequests`` map of an ``input_required`` result, and the client's answers
  come back in the ``params.inputResponses`` map of its retry, under the same keys.

Few captures hold either, so each rule first narrows the rows by their typed columns
(method, request_method, result_type) and a literal in the text, and parses only the
distinct texts left, in Python.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import ALL_REVISIONS, findings, rule, shown, since
from mcptrace.linter.rules.results import mrtr_retries
from mcptrace.message_text import ENVELOPE
from mcptrace.protocol import CLIENT_CAPABILITIES_KEY, has_capability

_SAMPLING = "sampling/createMessage"
_ROOTS = "roots/list"
_ELICIT = "elicitation/create"
_ELICIT_COMPLETE = "notifications/elicitation/complete"
#: the input requests these rules read: one search finds the texts with any of them
_INPUT_METHODS = (_SAMPLING, _ROOTS, _ELICIT)
_TOOL_REVISIONS = since("2025-11-25")

#: (label, messages) of each sampling conversation found in one text
_Conversations = list[tuple[str, list[Any]]]


def _load(text: str) -> Any:
    try:
        return _json.loads(text)
    except _json.JSONDecodeError:
        return None


def _blocks(content: Any) -> list[dict[str, Any]]:
    """The content blocks of a sampling message: ``content`` is one block or an array."""
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def _types(message: Any) -> list[Any]:
    if not isinstance(message, dict):
        return []
    return [b.get("type") for b in _blocks(message.get("content"))]


def _asked(ctx: LintContext) -> pl.DataFrame:
    """The readable ``elicitation/create`` and ``sampling/createMessage`` requests, whoever
    sent them: session, ordinal, method, direction and message. CF001, CF004, CF005 and
    CF006 read them: one test of every request's method serves them all."""
    return ctx.memo("client.asked", _build_asked)


def _build_asked(ctx: LintContext) -> pl.DataFrame:
    columns = ("session", "ordinal", "method", "direction")
    return (
        ctx.part("requests", *columns, "parse_error", "message")
        .filter(pl.col("method").is_in([_ELICIT, _SAMPLING]), pl.col("parse_error").is_null())
        .select(*columns, "message")
    )


def _input_required_with(ctx: LintContext, literal: str) -> pl.DataFrame:
    """ordinal and message of the readable ``input_required`` results sent by the server
    whose text has ``literal`` (a method of :data:`_INPUT_METHODS`): a search in their
    texts only, which costs far less than parsing their ``inputRequests``. (The shared
    frame also keeps the ``request_ordinal`` each result answers.)"""
    rows = ctx.memo("client.input_required", _build_input_required)
    return rows.filter(pl.col("message").str.contains(literal, literal=True)).select(
        "ordinal", "message"
    )


def _build_input_required(ctx: LintContext) -> pl.DataFrame:
    # the context's readable input_required results (found once for every rule that
    # reads them: no test of every response here), the server's only. Their texts are
    # copied side by side (stripping a leading \x01, which no JSON text starts with, writes
    # each anew): merely filtered, they would still lie scattered through the buffers of
    # every message's text, and each search through them (this one, and each rule's
    # own) would wait on memory far more than it compares bytes (at 10^6 messages, ~4 ms
    # a search instead of ~0.5 ms)
    return (
        ctx.input_required.filter((pl.col("kind") == "response") & (pl.col("direction") != "c2s"))
        .select("ordinal", "request_ordinal", pl.col("message").str.strip_prefix("\x01"))
        .filter(pl.col("message").str.contains("|".join(_INPUT_METHODS)))
    )


def _bodies(rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` with ``message`` replaced by _text: the message without its ``jsonrpc``
    and ``id`` members, so that repeated bodies are parsed once."""
    if rows.is_empty():  # the pattern is not even compiled then
        return rows.rename({"message": "_text"})
    return rows.with_columns(pl.col("message").str.replace(ENVELOPE, "{")).rename(
        {"message": "_text"}
    )


def _sampling_texts(ctx: LintContext) -> pl.DataFrame:
    """Messages that hold sampling conversations with tool blocks: ordinal, _text (see
    :func:`_bodies`) and _kind ("request": a ``sampling/createMessage`` request;
    "result": an ``input_required`` result)."""
    return ctx.memo("client.sampling_texts", _build_sampling_texts)


def _build_sampling_texts(ctx: LintContext) -> pl.DataFrame:
    requests = (
        _asked(ctx)
        .filter(pl.col("method") == _SAMPLING)
        .select("ordinal", "message", _kind=pl.lit("request"))
    )
    results = _input_required_with(ctx, _SAMPLING).with_columns(_kind=pl.lit("result"))
    text = pl.col("message")
    tools = text.str.contains('"tool_use"', literal=True) | text.str.contains(
        '"tool_result"', literal=True
    )
    return _bodies(pl.concat([requests, results]).filter(tools))


def _conversations(text: str, kind: str) -> _Conversations:
    """The sampling conversations in one text of :func:`_sampling_texts`."""
    value = _load(text)
    if not isinstance(value, dict):
        return []
    if kind == "request":
        params = value.get("params")
        messages = params.get("messages") if isinstance(params, dict) else None
        return [("", messages)] if isinstance(messages, list) else []
    result = value.get("result")
    inputs = result.get("inputRequests") if isinstance(result, dict) else None
    if not isinstance(inputs, dict):
        return []
    found: _Conversations = []
    for key, request in inputs.items():
        if not isinstance(request, dict) or request.get("method") != _SAMPLING:
            continue
        params = request.get("params")
        messages = params.get("messages") if isinstance(params, dict) else None
        if isinstance(messages, list):
            found.append((f"input request {_json.dumps(key)}: ", messages))
    return found


def _sampling_findings(
    ctx: LintContext, problems: Callable[[list[Any]], list[str]]
) -> pl.DataFrame:
    """One finding per text of :func:`_sampling_texts` whose conversations have
    ``problems`` (all of them, joined)."""
    rows = _sampling_texts(ctx)
    if rows.is_empty():
        return findings(rows, "")
    verdicts: dict[tuple[str, str], str | None] = {}
    for text, kind in rows.select("_text", "_kind").unique().iter_rows():
        said = [
            label + problem
            for label, messages in _conversations(text, kind)
            for problem in problems(messages)
        ]
        verdicts[(text, kind)] = "; ".join(said) if said else None
    verdict = pl.DataFrame(
        [(text, kind, said) for (text, kind), said in verdicts.items() if said is not None],
        schema={"_text": pl.String, "_kind": pl.String, "_said": pl.String},
        orient="row",
    )
    bad = rows.join(verdict, on=["_text", "_kind"], maintain_order="left")
    return findings(bad, pl.col("_said"))


def _mixed_tool_results(messages: list[Any]) -> list[str]:
    problems = []
    for i, message in enumerate(messages):
        if _role(message) != "user":
            continue
        types = _types(message)
        if "tool_result" not in types:
            continue
        others = sorted({_json.dumps(t) for t in types if t != "tool_result"})
        if others:
            problems.append(
                f"user message messages[{i}] mixes tool_result blocks with {', '.join(others)}"
            )
    return problems


@rule(
    code="CF001",
    name="sampling-tool-result-mixed",
    severity="error",
    revisions=_TOOL_REVISIONS,
    scope="message",
)
def sampling_tool_result_mixed(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a sampling request whose `messages` hold a user message with a `tool_result`
    block next to a block of any other type (text, image, audio, tool use).

    The conversation is read in `sampling/createMessage` requests and, in 2026-07-28, in
    the `sampling/createMessage` entries of an `input_required` result's `inputRequests`.
    `content` may be one block or an array of blocks.

    ## Why is this bad?
    Several model APIs carry tool results in a dedicated message (a "tool" or "function"
    role) that cannot also hold text, so a client cannot translate such a message
    faithfully; it is expected to reject the request with -32602 (Invalid params).

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage",
      "params": {
        "maxTokens": 200,
        "messages": [
          {"role": "assistant",
           "content": {"type": "tool_use", "id": "t1", "name": "f", "input": {}}},
          {"role": "user", "content": [
            {"type": "tool_result", "toolUseId": "t1", "content": []},
            {"type": "text", "text": "Now summarise."}
          ]}
        ]
      }
    }
    ```

    Use instead: send the tool results alone; the text can follow in a later user
    message once the model has answered.
    ```json
    {"role": "user", "content": [{"type": "tool_result", "toolUseId": "t1", "content": []}]}
    ```

    ## Reference
    "When a user message contains tool results (type: "tool_result"), it MUST contain
    ONLY tool results." — docs/specification/2026-07-28/client/sampling.mdx#tool-result-messages
    (2026-07-28; the same sentence in docs/specification/2025-11-25/client/sampling.mdx).
    """
    return _sampling_findings(ctx, _mixed_tool_results)


def _unanswered_tool_uses(messages: list[Any]) -> list[str]:
    problems = []
    # the last message has nothing after it: no other message came before its results
    for i, message in enumerate(messages[:-1]):
        if _role(message) != "assistant":
            continue
        blocks = _blocks(message.get("content"))
        ids = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        if not ids:
            continue
        following = messages[i + 1]
        if _role(following) != "user":
            role = _role(following)
            what = f"role {_json.dumps(role)}" if isinstance(role, str) else "no role"
            problems.append(
                f"the tool uses of messages[{i}] are followed by messages[{i + 1}] with {what}"
            )
            continue
        results = [b for b in _blocks(following.get("content")) if b.get("type") == "tool_result"]
        if not results:
            problems.append(
                f"the tool uses of messages[{i}] are followed by a user message "
                "without tool_result blocks"
            )
            continue
        answered = {b.get("toolUseId") for b in results}
        missing = [_json.dumps(x) for x in ids if isinstance(x, str) and x not in answered]
        if missing:
            problems.append(
                f"messages[{i + 1}] has no tool_result for the tool use "
                f"{', '.join(missing)} of messages[{i}]"
            )
    return problems


@rule(
    code="CF002",
    name="sampling-tool-use-unanswered",
    severity="error",
    revisions=_TOOL_REVISIONS,
    scope="message",
)
def sampling_tool_use_unanswered(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a sampling request whose `messages` hold an assistant message with `tool_use`
    blocks not directly followed by a user message with a `tool_result` for each of them.

    The next message must be a user message of `tool_result` blocks with, for every tool
    use, one whose `toolUseId` is that tool use's `id`.

    The conversation is read in `sampling/createMessage` requests and, in 2026-07-28, in
    the `sampling/createMessage` entries of an `input_required` result's `inputRequests`.
    An assistant message with tool uses that ends the list is not flagged: no other
    message comes before its results. Other blocks mixed into the tool results are left
    to CF001, and tool results naming no tool use of the previous message are not
    flagged.

    ## Why is this bad?
    Model APIs require every tool call to be resolved before the conversation goes on; a
    history with an unanswered tool use is refused by the provider (or makes the model
    guess at the missing result), so the client cannot serve the request and is expected
    to answer -32602 (Invalid params).

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage",
      "params": {
        "maxTokens": 200,
        "messages": [
          {"role": "user", "content": {"type": "text", "text": "Weather in Paris and Oslo?"}},
          {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "b", "name": "weather", "input": {"city": "Oslo"}}
          ]},
          {"role": "user", "content": {"type": "tool_result", "toolUseId": "a", "content": []}}
        ]
      }
    }
    ```

    Use instead: answer every tool use in the next message.
    ```json
    {"role": "user", "content": [
      {"type": "tool_result", "toolUseId": "a", "content": []},
      {"type": "tool_result", "toolUseId": "b", "content": []}
    ]}
    ```

    ## Reference
    "When using tool use in sampling, every assistant message containing `ToolUseContent`
    blocks MUST be followed by a user message that consists entirely of
    `ToolResultContent` blocks, with each tool use (e.g. with `id: $id`) matched by a
    corresponding tool result (with `toolUseId: $id`), before any other message." —
    docs/specification/2026-07-28/client/sampling.mdx#tool-use-and-result-balance
    (2026-07-28; the same sentence in docs/specification/2025-11-25/client/sampling.mdx).
    """
    return _sampling_findings(ctx, _unanswered_tool_uses)


def _bad_root_uris(roots: Any) -> list[str]:
    """JSON texts of the string ``uri``s of ``roots`` that are not ``file://`` URIs."""
    if not isinstance(roots, list):
        return []
    uris = (r.get("uri") for r in roots if isinstance(r, dict))
    return [_json.dumps(u) for u in uris if isinstance(u, str) and not u.startswith("file://")]


def _roots_results(ctx: LintContext) -> pl.DataFrame:
    """ordinal and _text (the message without its ``jsonrpc`` and ``id`` members) of the
    results to ``roots/list`` that may hold a root that is not a ``file://`` URI: those
    where some compact ``"uri":`` member is not followed by ``"file://`` (a text with
    spaces there is parsed; nearly every capture holds compact JSON)."""
    rows = ctx.part(
        "responses", "ordinal", "kind", "request_method", "parse_error", "message"
    ).filter(
        pl.col("request_method") == _ROOTS,
        pl.col("kind") == "response",
        pl.col("parse_error").is_null(),
    )
    text = pl.col("message")
    return _bodies(
        rows.filter(
            text.str.count_matches('"uri":', literal=True)
            != text.str.count_matches('"uri":"file://', literal=True)
        ).select("ordinal", "message")
    )


def _roots_retries(ctx: LintContext) -> pl.DataFrame:
    """ordinal and _said (what is wrong) of 2026 retries whose ``inputResponses`` answer a
    ``roots/list`` input request with roots that are not ``file://`` URIs."""
    schema = pl.Schema({"ordinal": pl.Int64, "_said": pl.String})
    if _input_required_with(ctx, _ROOTS).is_empty():
        return pl.DataFrame(schema=schema)
    pairs = (
        mrtr_retries(ctx)
        .filter(pl.col("ir_inputs").str.contains(_ROOTS, literal=True))
        .filter(pl.col("_inputs").is_not_null())
        .select("ordinal", "ir_inputs", "_inputs")
    )
    said: dict[tuple[str, str], str | None] = {}
    for asks, answers in pairs.select("ir_inputs", "_inputs").unique().iter_rows():
        requests, responses = _load(asks), _load(answers)
        if not isinstance(requests, dict) or not isinstance(responses, dict):
            said[(asks, answers)] = None
            continue
        problems = []
        for key, request in requests.items():
            if not isinstance(request, dict) or request.get("method") != _ROOTS:
                continue
            answer = responses.get(key)
            uris = _bad_root_uris(answer.get("roots") if isinstance(answer, dict) else None)
            if uris:
                problems.append(
                    f"input response {_json.dumps(key)} has roots whose uri is not a "
                    f"file:// URI: {', '.join(uris)}"
                )
        said[(asks, answers)] = "; ".join(problems) if problems else None
    verdict = pl.DataFrame(
        [(a, b, s) for (a, b), s in said.items() if s is not None],
        schema={"ir_inputs": pl.String, "_inputs": pl.String, "_said": pl.String},
        orient="row",
    )
    # a retry that is the candidate of several results (parallel calls) is judged once
    bad = pairs.join(verdict, on=["ir_inputs", "_inputs"]).unique("ordinal", keep="first")
    return bad.select("ordinal", "_said").cast(schema)


@rule(
    code="CF003",
    name="root-not-file-uri",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="message",
)
def root_not_file_uri(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags roots whose `uri` does not start with `file://`.

    Roots are read in the client's result to a `roots/list` request and, in 2026-07-28,
    in the `inputResponses` entry with which the client's retry answers a `roots/list`
    input request of an `input_required` result.

    A `uri` that is not a string is left to the schema checks, and a 2026 retry is judged
    only when the capture holds the `input_required` result it answers.

    ## Why is this bad?
    Roots tell the server which parts of the file system it may work in. A server reads
    them as file paths; an `https:` or `git:` URI, or a bare path, gives it no usable
    boundary, so it may refuse to work or guess at a location outside what the user
    shared.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": "r1", "result": {"roots": [{"uri": "https://example.com/repo"}]}}
    ```

    Use instead:
    ```json
    {
      "jsonrpc": "2.0", "id": "r1",
      "result": {"roots": [{"uri": "file:///home/user/repo", "name": "repo"}]}
    }
    ```

    ## Reference
    "This MUST be a `file://` URI in the current specification." (of `Root.uri`) —
    docs/specification/2026-07-28/client/roots.mdx#root (2026-07-28; the same sentence in
    the client/roots.mdx of every earlier revision). Schema: `Root.uri` ("This *must*
    start with `file://` for now.").
    """
    legacy = _roots_results(ctx)
    if legacy.is_empty():  # the usual case: no result to judge nor frames to join
        return findings(_roots_retries(ctx), pl.col("_said"))
    verdicts = []
    for text in legacy["_text"].unique():
        value = _load(text)
        result = value.get("result") if isinstance(value, dict) else None
        uris = _bad_root_uris(result.get("roots") if isinstance(result, dict) else None)
        if uris:
            verdicts.append((text, f"roots whose uri is not a file:// URI: {', '.join(uris)}"))
    verdict = pl.DataFrame(verdicts, schema={"_text": pl.String, "_said": pl.String}, orient="row")
    legacy_bad = legacy.join(verdict, on="_text", maintain_order="left").select(
        pl.col("ordinal").cast(pl.Int64), "_said"
    )
    bad = pl.concat([legacy_bad, _roots_retries(ctx)])
    return findings(bad, pl.col("_said"))


#: an RFC 3986 scheme and its colon, at the start of the text
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
#: what no URL may hold: ASCII space and the C0, DEL and C1 control characters
_NOT_IN_URL = re.compile(r"[\x00-\x20\x7f-\x9f]")
_PORT = re.compile(r"[0-9]*")


def _host_problem(rest: str) -> str | None:
    """What is wrong with the host and port of an ``http``/``https`` URL whose text after
    ``scheme:`` is ``rest`` (None: nothing). Leading slashes are skipped, as browsers do
    (``https:example.com`` and ``https:///example.com`` open https://example.com/)."""
    authority = re.split(r"[/\\?#]", rest.lstrip("/\\"), maxsplit=1)[0]
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        host, bracket, after = hostport[1:].partition("]")
        if not bracket:
            return "has an IPv6 host without its closing ]"
        if after and not after.startswith(":"):
            return "has text after the ] of its IPv6 host"
        port = after[1:]
    else:
        host, _, port = hostport.partition(":")
    if not host:
        return "has no host"
    if not _PORT.fullmatch(port):
        return f"has a port that is not a number: {_json.dumps(port)}"
    return None


def _url_problem(url: str) -> str | None:
    """Why ``url`` is not a valid absolute URL (None: it may be one). Deliberately
    lenient: see CF005's documentation."""
    if not url:
        return "is empty"
    bad = _NOT_IN_URL.search(url)
    if bad:
        what = "a space" if bad.group() == " " else f"control character U+{ord(bad.group()):04X}"
        return f"has {what} at position {bad.start()}"
    scheme = _SCHEME.match(url)
    if scheme is None:
        return "has no scheme (an absolute URL starts with one, such as https:)"
    if scheme.group().lower() in ("http:", "https:"):
        return _host_problem(url[scheme.end() :])
    return None


def _url_elicitations(text: str, kind: str) -> list[tuple[str, Any]]:
    """(label, url) of each URL-mode elicitation request in one text: a request
    (``kind`` "request") or the ``inputRequests`` of an ``input_required`` result."""
    value = _load(text)
    if not isinstance(value, dict):
        return []
    if kind == "request":
        asked = [("", value)]
    else:
        result = value.get("result")
        inputs = result.get("inputRequests") if isinstance(result, dict) else None
        if not isinstance(inputs, dict):
            return []
        asked = [
            (f"input request {_json.dumps(key)}: ", request)
            for key, request in inputs.items()
            if isinstance(request, dict) and request.get("method") == _ELICIT
        ]
    found = []
    for label, request in asked:
        params = request.get("params")
        if isinstance(params, dict) and params.get("mode") == "url" and "url" in params:
            found.append((label, params["url"]))
    return found


@rule(
    code="CF005",
    name="elicitation-url-invalid",
    severity="error",
    revisions=since("2025-11-25"),
    scope="message",
)
def elicitation_url_invalid(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a URL-mode elicitation request (`"mode": "url"`) whose `url` is not a valid
    absolute URL.

    The request is read in `elicitation/create` requests and, in 2026-07-28, in the
    `elicitation/create` entries of an `input_required` result's `inputRequests`.

    The test is deliberately lenient, to flag only URLs that no client can open. A `url`
    is flagged when it is empty; when it holds a space or a control character (U+0000 to
    U+001F, U+007F to U+009F), which neither RFC 3986 nor the WHATWG URL standard allows
    in a URL; when it does not start with a scheme as RFC 3986 defines it (a letter, then
    letters, digits, `+`, `-` or `.`, then `:`), as in a relative reference (`/connect`),
    a bare host (`www.example.com`) or prose; and, for `http:` and `https:`, when the
    host is empty or the port is not a number. Everything else passes: other schemes,
    non-ASCII characters (IRIs), unusual punctuation and malformed percent escapes. A
    `url` that is not a string, or missing, is left to the schema checks; `https` and the
    absence of user data or credentials in the URL are other requirements (one a SHOULD)
    that this rule does not judge.

    ## Why is this bad?
    The URL is the whole request: the client shows it to the user for consent and then
    opens it in a browser. A text that is not an absolute URL cannot be opened (or is
    resolved against something the server never meant), so the out-of-band interaction
    (a sign-in, a payment, an API key form) never happens and the operation that needed
    it stalls.

    ## Example
    ```json
    {
      "jsonrpc": "2.0", "id": 3, "method": "elicitation/create",
      "params": {
        "mode": "url", "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
        "url": "/ui/set_api_key", "message": "Please provide your API key to continue."
      }
    }
    ```

    Use instead: send the absolute URL.
    ```json
    {
      "jsonrpc": "2.0", "id": 3, "method": "elicitation/create",
      "params": {
        "mode": "url", "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
        "url": "https://mcp.example.com/ui/set_api_key",
        "message": "Please provide your API key to continue."
      }
    }
    ```

    ## Reference
    "The `url` parameter MUST contain a valid URL." —
    docs/specification/2026-07-28/client/elicitation.mdx#url-mode-elicitation-requests
    (2026-07-28; the same sentence in docs/specification/2025-11-25/client/elicitation.mdx).
    Schema: `ElicitRequestURLParams.url` (`"format": "uri"`).
    """
    requests = (
        _asked(ctx)
        .filter(pl.col("method") == _ELICIT)
        .select("ordinal", "message", _kind=pl.lit("request"))
    )
    results = _input_required_with(ctx, _ELICIT).with_columns(_kind=pl.lit("result"))
    # a URL-mode request has `"url"` in its text twice: as the mode and as the member
    rows = _bodies(
        pl.concat([requests, results]).filter(pl.col("message").str.contains('"url"', literal=True))
    )
    if rows.is_empty():
        return findings(rows, "")
    verdicts = []
    for text, kind in rows.select("_text", "_kind").unique().iter_rows():
        said = []
        for label, url in _url_elicitations(text, kind):
            problem = _url_problem(url) if isinstance(url, str) else None
            if problem is not None:
                said.append(f"{label}URL-mode elicitation url {_json.dumps(url)} {problem}")
        if said:
            verdicts.append((text, kind, "; ".join(said)))
    verdict = pl.DataFrame(
        verdicts,
        schema={"_text": pl.String, "_kind": pl.String, "_said": pl.String},
        orient="row",
    )
    bad = rows.join(verdict, on=["_text", "_kind"], maintain_order="left")
    return findings(bad, pl.col("_said"))


def _established_ids(ctx: LintContext) -> pl.DataFrame:
    """session, ordinal and elicitation_id of each ``elicitationId`` a server handed out
    in 2025-11-25: in a URL-mode ``elicitation/create`` request, or in an elicitation of
    a -32042 (URL elicitation required) error's ``data.elicitations``."""
    schema = pl.Schema({"session": pl.UInt32, "ordinal": pl.Int64, "elicitation_id": pl.String})
    columns = ("session", "ordinal", "direction", "parse_error", "message")
    sent = (pl.col("direction") != "c2s") & pl.col("parse_error").is_null()
    requests = (
        _asked(ctx)
        .filter(pl.col("method") == _ELICIT, pl.col("direction") != "c2s")
        .select("session", "ordinal", "message", _kind=pl.lit("request"))
    )
    errors = (
        ctx.part("responses", "kind", "error_code", *columns)
        .filter(pl.col("kind") == "error", pl.col("error_code") == -32042, sent)
        .select("session", "ordinal", "message", _kind=pl.lit("error"))
    )
    rows = _bodies(
        pl.concat([requests, errors]).filter(
            pl.col("message").str.contains('"elicitationId"', literal=True)
        )
    )
    pairs = []
    for text, kind in rows.select("_text", "_kind").unique().iter_rows():
        value = _load(text)
        if not isinstance(value, dict):
            continue
        if kind == "request":
            params = value.get("params")
            given = [params] if isinstance(params, dict) and params.get("mode") == "url" else []
        else:
            error = value.get("error")
            data = error.get("data") if isinstance(error, dict) else None
            listed = data.get("elicitations") if isinstance(data, dict) else None
            given = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
        for elicitation in given:
            eid = elicitation.get("elicitationId")
            if isinstance(eid, str):
                pairs.append((text, kind, eid))
    known = pl.DataFrame(
        pairs,
        schema={"_text": pl.String, "_kind": pl.String, "elicitation_id": pl.String},
        orient="row",
    )
    joined = rows.join(known, on=["_text", "_kind"])
    return joined.select("session", "ordinal", "elicitation_id").cast(schema)


@rule(
    code="CF004",
    name="elicitation-complete-unknown-id",
    severity="error",
    revisions=("2025-11-25",),
    scope="session",
)
def elicitation_complete_unknown_id(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a server's `notifications/elicitation/complete` whose `elicitationId` no
    earlier URL-mode elicitation of the same session established.

    An `elicitationId` is established by the server's URL-mode `elicitation/create`
    request (`params.elicitationId`) and also by an elicitation listed in a -32042 (URL
    elicitation required) error's `data.elicitations`, since a client may wait for the
    notification to retry the request that received that error.

    A session is judged only from its first such request or error on: a notification
    before it (or in a session without any) is not flagged, since a capture started
    late may have missed the request. An `elicitationId` that is not a string is left to
    the schema checks, and a second notification for an ID already completed is not
    flagged. The notification exists in 2025-11-25 only: 2026-07-28 removed it.

    ## Why is this bad?
    The notification lets the client resume what waited on the out-of-band interaction
    (retry the request, update its interface). The client must ignore an ID it does not
    know, so a notification with a wrong or invented ID is lost: the client keeps
    waiting, or the user has to retry by hand.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {"mode": "url",
     "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
     "url": "https://mcp.example.com/ui/set_api_key", "message": "Provide your API key."}}
    {"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
     "params": {"elicitationId": "set_api_key"}}
    ```

    Use instead: complete the elicitation under the ID its request gave.
    ```json
    {"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
     "params": {"elicitationId": "550e8400-e29b-41d4-a716-446655440000"}}
    ```

    ## Reference
    "Servers sending notifications: [...] MUST include the `elicitationId` established in
    the original `elicitation/create` request." —
    docs/specification/2025-11-25/client/elicitation.mdx#completion-notifications-for-url-mode-elicitation
    (2025-11-25 only; docs/specification/2026-07-28/changelog.mdx, item 11: "Remove the
    `notifications/elicitation/complete` notification and the `elicitationId` field of
    URL mode elicitation requests, both introduced in `2025-11-25`.").
    """
    notes = ctx.part(
        "notifications", "session", "ordinal", "method", "direction", "parse_error", "message"
    ).filter(
        pl.col("method") == _ELICIT_COMPLETE,
        pl.col("direction") != "c2s",
        pl.col("parse_error").is_null(),
    )
    if notes.is_empty():
        return findings(notes, "")
    known = _established_ids(ctx)
    # judged from the session's first established ID on
    first = known.group_by("session").agg(_first=pl.col("ordinal").min())
    notes = notes.join(first, on="session", maintain_order="left").filter(
        pl.col("ordinal") > pl.col("_first")
    )
    if notes.is_empty():
        return findings(notes, "")
    notes = _bodies(notes.select("session", "ordinal", "message"))
    ids = []
    for text in notes["_text"].unique():
        value = _load(text)
        params = value.get("params") if isinstance(value, dict) else None
        eid = params.get("elicitationId") if isinstance(params, dict) else None
        if isinstance(eid, str):
            ids.append((text, eid, _json.dumps(eid)))
    noted = notes.join(
        pl.DataFrame(
            ids,
            schema={"_text": pl.String, "elicitation_id": pl.String, "_quoted": pl.String},
            orient="row",
        ),
        on="_text",
        maintain_order="left",
    )
    earliest = known.group_by("session", "elicitation_id").agg(_given=pl.col("ordinal").min())
    bad = noted.join(
        earliest, on=["session", "elicitation_id"], how="left", maintain_order="left"
    ).filter(pl.col("_given").is_null() | (pl.col("_given") > pl.col("ordinal")))
    return findings(
        bad,
        fmt(
            "elicitation complete notification for elicitationId {}, which no earlier URL-mode "
            "elicitation/create request or -32042 error of this session established",
            "_quoted",
        ),
    )


#: CF006, CF007 and CF008 judge the same messages (the server's elicitation and sampling
#: requests, legacy or embedded) against the same capabilities: one frame serves all three
_CAPABILITY_CODES = ("CF006", "CF007", "CF008")
_CONTEXT_VALUES = ("thisServer", "allServers")
_LEGACY_SOURCE = "the client's initialize declared"
_MODERN_SOURCE = "the request's clientCapabilities declare"
#: result texts that may hold a request needing a sub-capability: a URL-mode elicitation,
#: tool-enabled sampling, sampling with context ("thisServer", "allServers")
_SUBCAPABILITY_HINT = r'"(?:url|tools|toolChoice)"|Servers?"'
#: a request text that may declare URL-mode elicitation: an `elicitation` object with a
#: `url` member (after members whose values nest objects at most two levels deep)
_URL_ELICITATION = r'"elicitation"\s*:\s*\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*"url"'


def _elicitation_problem(caps: dict[str, Any], params: dict[str, Any], source: str) -> str | None:
    """Why an elicitation request with ``params`` uses a mode ``caps`` does not support."""
    if not has_capability(caps, "elicitation"):
        return None  # the whole capability is missing: CP001/CP005 report that
    url = has_capability(caps, "elicitation.url")
    # `{}` (and any declaration naming no mode) stands for form mode only; once `url`
    # is declared, form mode needs its own `form`
    form = has_capability(caps, "elicitation.form") or not url
    mode = params.get("mode", "form")
    if mode == "url" and not url:
        supported = "form mode only"
    elif mode == "form" and not form:
        supported = "url mode only"
    else:
        return None  # a supported mode, or one the schema checks reject
    asked = "mode" if "mode" in params else "mode (no mode given)"
    declared = shown(caps["elicitation"])
    return (
        f"elicitation/create in {mode} {asked}, but {source} elicitation {declared} ({supported})"
    )


def _sampling_problems(
    caps: dict[str, Any], params: dict[str, Any], source: str
) -> list[tuple[str, str]]:
    """(code, problem) for each sampling sub-capability a request with ``params`` needs
    and ``caps`` does not declare."""
    if not has_capability(caps, "sampling"):
        return []  # the whole capability is missing: CP001/CP005 report that
    declared = shown(caps["sampling"])
    problems = []
    # a member given as null is read as omitted, as most JSON libraries write it
    tool_members = [name for name in ("tools", "toolChoice") if params.get(name) is not None]
    if tool_members and not has_capability(caps, "sampling.tools"):
        problems.append(
            (
                "CF007",
                f"sampling/createMessage with {' and '.join(tool_members)}, but {source} "
                f"sampling {declared} without tools",
            )
        )
    context = params.get("includeContext")
    if context in _CONTEXT_VALUES and not has_capability(caps, "sampling.context"):
        problems.append(
            (
                "CF008",
                f"sampling/createMessage with includeContext {_json.dumps(context)}, but "
                f"{source} sampling {declared} without context",
            )
        )
    return problems


def _request_problems(
    caps: dict[str, Any], request: Any, source: str, label: str = ""
) -> list[tuple[str, str]]:
    """(code, problem) for each capability ``caps`` lacks that ``request`` (an
    ``elicitation/create`` or ``sampling/createMessage`` request) needs. Malformed
    params are left to the schema checks."""
    if not isinstance(request, dict):
        return []
    params = request.get("params")
    if not isinstance(params, dict):
        return []
    method = request.get("method")
    if method == _ELICIT:
        problem = _elicitation_problem(caps, params, source)
        return [("CF006", label + problem)] if problem is not None else []
    if method == _SAMPLING:
        return [(code, label + said) for code, said in _sampling_problems(caps, params, source)]
    return []


def _missing_subcapabilities(caps: Any) -> tuple[bool, bool, bool, bool]:
    """Which requests a client with capabilities ``caps`` can be wrongly sent: (form-mode
    elicitations, URL-mode elicitations, tool-enabled sampling, sampling with context).
    All false when ``caps`` is unknown or lacks the whole capability (CP001's case)."""
    if not isinstance(caps, dict):
        return (False, False, False, False)
    elicit = has_capability(caps, "elicitation")
    url = has_capability(caps, "elicitation.url")
    form = has_capability(caps, "elicitation.form") or not url
    sampling = has_capability(caps, "sampling")
    return (
        elicit and not form,
        elicit and not url,
        sampling and not has_capability(caps, "sampling.tools"),
        sampling and not has_capability(caps, "sampling.context"),
    )


def _legacy_capability_asks(ctx: LintContext) -> pl.DataFrame:
    """ordinal, _text (see :func:`_bodies`) and _caps (the session's client capabilities,
    JSON text) of the server's ``elicitation/create`` and ``sampling/createMessage``
    requests that may need a capability the client did not declare in its initialize."""
    requests = _asked(ctx).filter(pl.col("direction") != "c2s")
    empty = pl.DataFrame(schema={"ordinal": pl.Int64, "_text": pl.String, "_caps": pl.String})
    if requests.is_empty():
        return empty
    # 2026 sessions have no initialize: their client capabilities are per request
    sessions = (
        ctx.sessions.select("session", _caps="client_capabilities")
        .join(ctx.session_revisions.select("session", "revision"), on="session", how="left")
        .filter(pl.col("_caps").is_not_null() & (pl.col("revision").fill_null("") < "2026-07-28"))
        .select("session", "_caps")
    )
    gaps = pl.DataFrame(
        [(text, *_missing_subcapabilities(_load(text))) for text in sessions["_caps"].unique()],
        schema={
            "_caps": pl.String,
            "_no_form": pl.Boolean,
            "_no_url": pl.Boolean,
            "_no_tools": pl.Boolean,
            "_no_context": pl.Boolean,
        },
        orient="row",
    )
    text = pl.col("message")
    # the texts that can hold a request the client's gaps forbid: every elicitation to a
    # client without form mode, else only texts with the member or value concerned
    possible = (
        pl.when(pl.col("method") == _ELICIT)
        .then(pl.col("_no_form") | (pl.col("_no_url") & text.str.contains('"url"', literal=True)))
        .otherwise(
            (
                pl.col("_no_tools")
                & (
                    text.str.contains('"tools"', literal=True)
                    | text.str.contains('"toolChoice"', literal=True)
                )
            )
            | (pl.col("_no_context") & text.str.contains('Servers?"'))
        )
    )
    rows = (
        requests.join(sessions, on="session", maintain_order="left")
        .join(gaps, on="_caps", maintain_order="left")
        .filter(possible)
        .select("ordinal", "message", "_caps")
    )
    return _bodies(rows).select(pl.col("ordinal").cast(pl.Int64), "_text", "_caps")


def _modern_capability_asks(ctx: LintContext) -> pl.DataFrame:
    """ordinal, _text (see :func:`_bodies`) and _caps (the answered request's
    clientCapabilities, JSON text) of the ``input_required`` results whose elicitation or
    sampling input requests may need a capability the client did not declare."""
    empty = pl.DataFrame(schema={"ordinal": pl.Int64, "_text": pl.String, "_caps": pl.String})
    rows = ctx.memo("client.input_required", _build_input_required)
    if rows.is_empty():
        return empty
    # the answered requests' texts, gathered once (that costs about what one more search
    # through the results would): a form-mode elicitation, which no literal in the result
    # marks, is wrong only for a client whose `elicitation` names `url`
    rows = (
        ctx.lookup(rows, "request_ordinal", _request="message")
        .with_columns(
            _hinted=pl.col("message").str.contains(_SUBCAPABILITY_HINT),
            _url=pl.col("_request").str.contains(_URL_ELICITATION),
        )
        .filter(pl.col("_hinted") | pl.col("_url"))
    )
    if rows.is_empty():  # the usual case: no capabilities parsed
        return empty
    caps_path = f'$.params._meta["{CLIENT_CAPABILITIES_KEY}"]'
    rows = rows.with_columns(_caps=pl.col("_request").str.json_path_match(caps_path))

    def mode(name: str) -> pl.Expr:
        return pl.col("_caps").str.json_path_match(f"$.elicitation.{name}")

    # URL mode only: `url` given (a `false` or `"false"` is parsed, to be told apart) and
    # `form` absent or false
    url_only = mode("url").is_not_null() & mode("form").fill_null("false").eq("false")
    rows = rows.filter(pl.col("_caps").str.starts_with("{") & (pl.col("_hinted") | url_only))
    return _bodies(rows.select("ordinal", "message", "_caps")).select(
        pl.col("ordinal").cast(pl.Int64), "_text", "_caps"
    )


#: the columns of :func:`_capability_findings`
_CAPABILITY_FINDINGS = pl.Schema({"ordinal": pl.Int64, "code": pl.String, "message": pl.String})


def _capability_findings(ctx: LintContext) -> pl.DataFrame:
    """ordinal, code (of :data:`_CAPABILITY_CODES`) and message of every elicitation or
    sampling request that needs a sub-capability the client did not declare."""
    return ctx.memo("client.capability_findings", _build_capability_findings)


def _build_capability_findings(ctx: LintContext) -> pl.DataFrame:
    said: list[tuple[str, str, str, str, str]] = []
    capabilities: dict[str, Any] = {}

    def parsed(text: str) -> Any:
        if text not in capabilities:
            capabilities[text] = _load(text)
        return capabilities[text]

    legacy = _legacy_capability_asks(ctx)
    modern = _modern_capability_asks(ctx)
    if legacy.is_empty() and modern.is_empty():  # the usual case: nothing to judge
        return pl.DataFrame(schema=_CAPABILITY_FINDINGS)
    rows = pl.concat(
        [legacy.with_columns(_kind=pl.lit("request")), modern.with_columns(_kind=pl.lit("result"))]
    )
    for text, caps_text, kind in rows.select("_text", "_caps", "_kind").unique().iter_rows():
        caps = parsed(caps_text)
        if not isinstance(caps, dict):
            continue
        value = _load(text)
        if kind == "request":
            problems = _request_problems(caps, value, _LEGACY_SOURCE)
        else:
            result = value.get("result") if isinstance(value, dict) else None
            inputs = result.get("inputRequests") if isinstance(result, dict) else None
            asked = inputs.items() if isinstance(inputs, dict) else []
            problems = [
                problem
                for key, request in asked
                for problem in _request_problems(
                    caps, request, _MODERN_SOURCE, f"input request {_json.dumps(key)}: "
                )
            ]
        for code in _CAPABILITY_CODES:
            mine = [problem for found, problem in problems if found == code]
            if mine:
                said.append((text, caps_text, kind, code, "; ".join(mine)))
    verdict = pl.DataFrame(
        said,
        schema={
            "_text": pl.String,
            "_caps": pl.String,
            "_kind": pl.String,
            "code": pl.String,
            "message": pl.String,
        },
        orient="row",
    )
    return rows.join(verdict, on=["_text", "_caps", "_kind"], maintain_order="left").select(
        "ordinal", "code", "message"
    )


def _capability_rule_findings(ctx: LintContext, code: str) -> pl.DataFrame:
    found = _capability_findings(ctx)
    if found.is_empty():  # the usual case: no query
        return findings(found, "")
    return findings(found.filter(pl.col("code") == code), pl.col("message"))


@rule(
    code="CF006",
    name="elicitation-mode-not-declared",
    severity="error",
    revisions=_TOOL_REVISIONS,
    scope="pairing",
)
def elicitation_mode_not_declared(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags an elicitation request in a mode the client's `elicitation` capability does not
    declare.

    That is URL mode (`"mode": "url"`) without `elicitation.url`, or form mode (`"mode":
    "form"`, or no `mode`) to a client that declared `url` but not `form`. An
    `elicitation` object that names no mode (`{}`, or a value that is not an object)
    stands for form mode only. Legacy requests (`elicitation/create` from the server) are
    judged against the client capabilities of the session's `initialize`; in 2026-07-28
    the `elicitation/create` entries of an `input_required` result's `inputRequests` are
    judged against the `io.modelcontextprotocol/clientCapabilities` of the very request
    the result answers, and the finding points at that result.

    Not judged: sessions whose `initialize` is not in the capture and answered requests
    without `clientCapabilities` (unknown capabilities); a client that did not declare
    `elicitation` at all (CP001 and CP005 report that); requests whose `params` are not
    an object or whose `mode` is neither `form` nor `url` (the schema checks).

    ## Why is this bad?
    A client supports only the modes it declared: it must reject another with -32602
    (Invalid params), so the user is never asked and the operation waiting for the
    answer fails. A form-only client cannot open the URL the server counted on, and a
    URL-only client has no form to show.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {"elicitation": {}}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {"mode": "url",
     "elicitationId": "e1", "url": "https://mcp.example.com/ui/set_api_key",
     "message": "Please provide your API key to continue."}}
    ```

    Use instead: send URL-mode requests only to a client that declared `url` (in
    2026-07-28, otherwise answer -32021 with the capability in `requiredCapabilities`).
    ```json
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {"elicitation": {"form": {}, "url": {}}},
     "clientInfo": {"name": "host", "version": "1.0"}}}
    ```

    ## Reference
    "Servers MUST NOT send elicitation requests with modes that are not supported by the
    client." and "For backwards compatibility, an empty capabilities object is equivalent
    to declaring support for `form` mode only" —
    docs/specification/2026-07-28/client/elicitation.mdx#capabilities (2026-07-28; the
    same sentences in docs/specification/2025-11-25/client/elicitation.mdx#capabilities).
    """
    return _capability_rule_findings(ctx, "CF006")


@rule(
    code="CF007",
    name="sampling-tools-not-declared",
    severity="error",
    revisions=_TOOL_REVISIONS,
    scope="pairing",
)
def sampling_tools_not_declared(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a tool-enabled sampling request (its `params` have `tools` or `toolChoice`) to a
    client that did not declare `sampling.tools`.

    Legacy `sampling/createMessage` requests are judged against the client capabilities of
    the session's `initialize`; in 2026-07-28 the `sampling/createMessage` entries of an
    `input_required` result's `inputRequests` are judged against the
    `io.modelcontextprotocol/clientCapabilities` of the very request the result answers,
    and the finding points at that result. `tools` or `toolChoice` given as `null` counts
    as omitted.

    Not judged: sessions whose `initialize` is not in the capture and answered requests
    without `clientCapabilities` (unknown capabilities); a client that did not declare
    `sampling` at all (CP001 and CP005 report that); requests whose `params` are not an
    object (the schema checks).

    ## Why is this bad?
    A client that did not declare tool use must answer such a request with an error, so
    the sampling (and whatever the server needed it for) fails; a client that ignored
    the tools instead would run a generation that cannot call them, and the server's
    tool loop would not work as intended.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {"sampling": {}}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {
     "messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}}],
     "maxTokens": 200, "tools": [{"name": "get_weather",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}}
    ```

    Use instead: send tools only to a client that declared `sampling.tools`, or sample
    without them.
    ```json
    {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {
     "messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}}],
     "maxTokens": 200}}
    ```

    ## Reference
    "Servers MUST NOT send tool-enabled sampling requests to Clients that have not declared
    support for tool use via the `sampling.tools` capability." —
    docs/specification/2026-07-28/client/sampling.mdx#tools-in-sampling (2026-07-28; the
    same sentence in docs/specification/2025-11-25/client/sampling.mdx#tools-in-sampling).
    Schema: `CreateMessageRequestParams.tools` ("The client MUST return an error if this
    field is provided but ClientCapabilities.sampling.tools is not declared.").
    """
    return _capability_rule_findings(ctx, "CF007")


@rule(
    code="CF008",
    name="sampling-context-not-declared",
    severity="warning",
    revisions=_TOOL_REVISIONS,
    scope="pairing",
)
def sampling_context_not_declared(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a sampling request with `includeContext` `"thisServer"` or `"allServers"` to a
    client that did not declare `sampling.context`.

    Legacy `sampling/createMessage` requests are judged against the client capabilities of
    the session's `initialize`; in 2026-07-28 the `sampling/createMessage` entries of an
    `input_required` result's `inputRequests` are judged against the
    `io.modelcontextprotocol/clientCapabilities` of the very request the result answers,
    and the finding points at that result. `"none"` and an omitted `includeContext` pass.

    Not judged: sessions whose `initialize` is not in the capture and answered requests
    without `clientCapabilities` (unknown capabilities); a client that did not declare
    `sampling` at all (CP001 and CP005 report that); requests whose `params` are not an
    object (the schema checks). In 2026-07-28 MD006 also reports, as information, any use
    of these deprecated values; this rule is about the other obligation, the missing
    capability, and the two findings are kept apart on purpose.

    ## Why is this bad?
    A client that did not declare context inclusion has no way to honour the request: it
    quietly samples without the context, and the server gets an answer built on less
    than it asked for. The values are deprecated besides, and may be removed.

    ## Example
    ```json
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
     "capabilities": {"sampling": {}}, "clientInfo": {"name": "host", "version": "1.0"}}}
    {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {
     "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise."}}],
     "maxTokens": 200, "includeContext": "allServers"}}
    ```

    Use instead: omit `includeContext` (it defaults to `"none"`) and put what the model
    needs in `messages`.
    ```json
    {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {
     "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise."}}],
     "maxTokens": 200}}
    ```

    ## Reference
    "Servers SHOULD avoid using these values (e.g. can just omit `includeContext` since it
    defaults to `"none"`), and SHOULD NOT use them unless the client declares
    `sampling.context` capability." —
    docs/specification/2026-07-28/client/sampling.mdx#capabilities (2026-07-28; the same
    sentence in docs/specification/2025-11-25/client/sampling.mdx#capabilities).
    """
    return _capability_rule_findings(ctx, "CF008")
