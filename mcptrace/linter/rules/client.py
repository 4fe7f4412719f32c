"""Rules on sampling message content (tool use and results), roots.

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

from collections.abc import Callable
from typing import Any

import polars as pl

from mcptrace import _json
from mcptrace.linter.context import ENVELOPE, LintContext
from mcptrace.linter.rule import ALL_REVISIONS, findings, rule, since
from mcptrace.linter.rules.results import _mrtr_retries

_SAMPLING = "sampling/createMessage"
_ROOTS = "roots/list"
#: the input requests these rules read: one search finds the texts with either
_INPUT_METHODS = (_SAMPLING, _ROOTS)
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


def _input_required_with(ctx: LintContext, literal: str) -> pl.DataFrame:
    """ordinal and message of the readable ``input_required`` results sent by the server
    whose text has ``literal`` (a method of :data:`_INPUT_METHODS`): a search in their
    texts only, which costs far less than parsing their ``inputRequests``."""
    rows = ctx.memo("client.input_required", _build_input_required)
    return rows.filter(pl.col("message").str.contains(literal, literal=True))


def _build_input_required(ctx: LintContext) -> pl.DataFrame:
    # the mask from the typed columns, then a filter of the two columns kept: a filter
    # moves every column it is given
    mask = (
        ctx.part("responses", "result_type", "kind", "direction", "parse_error")
        .select(
            (pl.col("result_type") == "input_required")
            & (pl.col("kind") == "response")
            & (pl.col("direction") != "c2s")
            & pl.col("parse_error").is_null()
        )
        .to_series()
        .fill_null(False)
    )
    return (
        ctx.part("responses", "ordinal", "message")
        .filter(mask)
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
        ctx.part("requests", "ordinal", "method", "parse_error", "message")
        .filter(pl.col("method") == _SAMPLING, pl.col("parse_error").is_null())
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
        _mrtr_retries(ctx)
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
