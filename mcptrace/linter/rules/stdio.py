"""ST: stdio framing and encoding (what travels on the server's stdin and stdout).

These rules look at `invalid` rows, which the other families leave alone: a line
that is not a JSON-RPC message at all. On a stdio transport such a line is stream
pollution when it carries text that was on the wire. Rows whose problem lies with
the capture rather than the wire are not pollution: an envelope record that is not
JSON, or a message the capture tool cut (Claude Desktop's `...[N chars
truncated]...`, mcpsnoop's 16 MiB cap). Invalid UTF-8 has its own rule (ST003).

Embedded newlines (a message pretty-printed over several lines) cannot be told
apart from several polluting lines once the capture is split into lines, so they
surface as ST001/ST002 findings on each fragment.
"""

from __future__ import annotations

import polars as pl

from mcptrace._format import fmt
from mcptrace.linter.context import LintContext
from mcptrace.linter.rule import ALL_REVISIONS, findings, rule, since

#: loader problems meaning "the wire text is not a JSON-RPC message"
_NOT_MCP = r"invalid JSON|not a JSON-RPC message|wrote a line to stdout"
#: loader problems meaning the capture tool cut the line, not the peer: mcpsnoop's
#: capture cap, Claude Desktop's cut middles, a log stopped while writing its last line,
#: a VS Code log line damaged
_CUT_BY_CAPTURE = r"\bcut\b|truncated|incomplete last (?:record|entry|event)"
#: loader problems that are the capture's fault, not the peer's
_CAPTURE_FAULT = rf"^(?:capture|mcpsnoop) record|{_CUT_BY_CAPTURE}"
_BAD_UTF8 = "invalid UTF-8"
_BOM = "byte order mark"


def cut_by_capture() -> pl.Expr:
    """Invalid rows the capture tool cut (see :data:`_CUT_BY_CAPTURE`), and the HAR
    loader's transport rows of a response whose content the HAR lost (a body not saved,
    a stream unfinished or broken off): what the peer sent was whole, so they say nothing
    about the traffic. Reads ``kind``, ``parse_error`` and ``message`` (see
    :func:`capture_cuts`, which filters the kinds first)."""
    from mcptrace.loaders.har import LOST_CONTENT

    invalid = (pl.col("kind") == "invalid") & pl.col("parse_error").fill_null("").str.contains(
        _CUT_BY_CAPTURE
    )
    lost = (pl.col("kind") == "transport") & pl.col("message").fill_null("").str.contains(
        LOST_CONTENT, literal=True
    )
    return invalid | lost


def capture_cuts(ctx: LintContext) -> pl.DataFrame:
    """session, direction, ordinal of the rows :func:`cut_by_capture` picks: the lines a
    capture lost, after which the other side's orphans are not judged."""
    return ctx.memo(
        "stdio.capture_cuts",
        lambda ctx: (
            ctx.messages.select("session", "direction", "ordinal", "kind", "parse_error", "message")
            # the kinds first: the test scans the text of every row it is given
            .filter(pl.col("kind").is_in(["invalid", "transport"]))
            .filter(cut_by_capture())
            .select("session", "direction", "ordinal")
        ),
    )


def first_cuts(ctx: LintContext) -> pl.DataFrame:
    """Per session and direction, the ordinal (``_first_cut``) of the first line the
    capture lost (see :func:`capture_cuts`)."""
    return (
        capture_cuts(ctx).group_by("session", "direction").agg(_first_cut=pl.col("ordinal").min())
    )


def is_pollution() -> pl.Expr:
    """Invalid stdio rows holding wire text that is not a JSON-RPC message: the rows the
    ST rules report (the generic JR014 leaves them to these more specific rules)."""
    problem = pl.col("parse_error").fill_null("")
    return (
        (pl.col("kind") == "invalid")
        & (pl.col("transport") == "stdio")
        & pl.col("message").is_not_null()
        & ~pl.col("batched")
        & problem.str.contains(_NOT_MCP)
        & ~problem.str.contains(_CAPTURE_FAULT)
        & ~problem.str.contains(_BAD_UTF8, literal=True)
    )


def _pollution(ctx: LintContext) -> pl.DataFrame:
    return ctx.memo(
        "stdio.pollution",
        lambda ctx: (
            ctx.messages.select(
                "ordinal", "kind", "transport", "direction", "batched", "parse_error", "message"
            )
            .filter(pl.col("kind") == "invalid")
            .filter(is_pollution())
        ),
    )


def _shown(text: pl.Expr) -> pl.Expr:
    """The start of a line, for a message."""
    short = text.str.slice(0, 60)
    return pl.when(text.str.len_chars() > 60).then(fmt("{}…", short)).otherwise(short)


@rule(
    code="ST001",
    name="stdio-stdout-pollution",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="transport",
)
def stdio_stdout_pollution(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a line on a stdio server's stdout that is not a JSON-RPC message.

    Lines of a stdio stream whose direction is unknown count as stdout. Typical
    pollution: log text, a banner, a progress bar, a structured-log JSON object, a
    message split over several lines.

    ## Why is this bad?
    stdout is the protocol channel. The client parses every line as a message; a stray
    line is at best dropped with a parse error, and with some clients it closes the
    connection or desynchronises the stream. Logs belong on stderr, which the server
    may use freely.

    ## Example
    ```text
    Server listening on stdio
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
     "serverInfo": {"name": "docs", "version": "1.0"}}}
    ```

    Use instead: write `Server listening on stdio` to stderr; stdout carries only
    ```json
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
     "serverInfo": {"name": "docs", "version": "1.0"}}}
    ```

    ## Reference
    "The server MUST NOT write anything to its `stdout` that is not a valid MCP message."
    — basic/transports/stdio.mdx (2026-07-28); basic/transports.mdx#stdio (2024-11-05 to
    2025-11-25).
    """
    bad = _pollution(ctx).filter(pl.col("direction").is_in(["s2c", "unknown"]))
    where = (
        pl.when(pl.col("direction") == "s2c")
        .then(pl.lit("server stdout"))
        .otherwise(pl.lit("stdio stream"))
    )
    return findings(bad, fmt('non-MCP line on the {}: "{}"', where, _shown(pl.col("message"))))


@rule(
    code="ST002",
    name="stdio-stdin-pollution",
    severity="error",
    revisions=ALL_REVISIONS,
    scope="transport",
)
def stdio_stdin_pollution(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a line the client wrote to a stdio server's stdin that is not a JSON-RPC
    message.

    ## Why is this bad?
    The server reads stdin as a stream of messages. Anything else (a shell prompt, a
    debug echo, a pretty-printed message split over lines) fails to parse; servers
    answer with a parse error, skip it, or exit.

    ## Example
    ```text
    hello?
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    ```

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    ```

    ## Reference
    "The client MUST NOT write anything to the server's `stdin` that is not a valid MCP
    message." — basic/transports/stdio.mdx (2026-07-28); basic/transports.mdx#stdio
    (2024-11-05 to 2025-11-25).
    """
    bad = _pollution(ctx).filter(pl.col("direction") == "c2s")
    return findings(bad, fmt('non-MCP line on the server stdin: "{}"', _shown(pl.col("message"))))


@rule(
    code="ST003",
    name="message-not-utf8",
    severity="error",
    revisions=since("2025-03-26"),
    scope="transport",
)
def message_not_utf8(ctx: LintContext) -> pl.DataFrame:
    """## What it does
    Flags a message line that is not valid UTF-8, on any transport and in either direction.

    Typical causes: Latin-1 or Windows-1252 text, a stray binary byte. The capture
    shows the bad bytes as `\\xNN` in `raw`. A raw stdio capture that starts with a
    byte order mark is reported too: JSON text sent over a network must not carry one
    (RFC 8259, section 8.1).

    ## Why is this bad?
    Receivers decode the stream as UTF-8. An invalid byte makes a strict decoder reject
    the whole message, and a lenient one silently replaces characters, so names, paths
    and arguments arrive changed.

    ## Example
    ```text
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "open",
     "arguments": {"path": "caf\\xe9.txt"}}}
    ```
    (the byte E9, Latin-1 "é")

    Use instead:
    ```json
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "open",
     "arguments": {"path": "café.txt"}}}
    ```
    (é encoded as the UTF-8 bytes C3 A9)

    ## Reference
    "JSON-RPC messages MUST be UTF-8 encoded." — basic/transports.mdx (2025-03-26 to
    2025-11-25), basic/transports/index.mdx#messages (2026-07-28).
    """
    problem = pl.col("parse_error").fill_null("")
    bad_bytes = problem.str.contains(_BAD_UTF8, literal=True) & ~problem.str.contains(
        r"^(?:capture|mcpsnoop) record"
    )
    # only a raw stdio capture is the byte stream itself; other files' BOMs are the tool's
    bom = (pl.col("format") == "stdio") & problem.str.contains(_BOM, literal=True)
    bad = (
        ctx.messages.select("ordinal", "kind", "format", "parse_error")
        # both tests need a loader problem: only those few rows are read
        .filter(pl.col("parse_error").is_not_null())
        .filter(
            pl.col("kind").is_in(["request", "notification", "response", "error", "invalid"])
            & (bad_bytes | bom)
        )
    )
    where = problem.str.extract(r"invalid UTF-8 at byte (\d+)", 1)
    return findings(
        bad,
        pl.when(where.is_not_null())
        .then(fmt("line is not valid UTF-8 (first bad byte at offset {})", where))
        .when(bad_bytes)
        .then(pl.lit("line is not valid UTF-8"))
        .otherwise(pl.lit("the stream starts with a UTF-8 byte order mark")),
    )
