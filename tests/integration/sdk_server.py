"""A small stdio MCP server built with the official Python SDK (PyPI ``mcp``).

It is the real-traffic counterpart of the hand-written sample captures: whatever the
SDK puts on the wire for these features is what ``test_sdk_traffic.py`` records and
lints. Run it as ``python sdk_server.py``; it speaks both eras on stdio (the SDK picks
the era from the client's first request: ``initialize`` or a 2026-07-28 ``_meta``
envelope).

Deliberately tiny and deterministic: fixed names and texts, no clocks in results.
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

#: The marker line the server writes to stderr at start, which the recorder must keep.
READY = "sdk_server: ready"

# WARNING, not the SDK's INFO default: its INFO lines go through rich, whose line wrapping
# depends on the terminal, and the test wants stderr it can predict.
server = MCPServer("mcptrace-sdk-server", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def fail(reason: str) -> str:
    """Always fails: the SDK turns the exception into a result with isError: true."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress once per step, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}/{steps}")
    return f"counted to {steps}"


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Report that it started, then sleep, so that the client can cancel it while it runs.

    The progress notification is what the client waits for before cancelling: the call
    is then certainly running on the server, with no timing guesswork.
    """
    await ctx.report_progress(0, None, "started")
    await anyio.sleep(seconds)
    return "finished"


@server.resource("mcptrace://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed text resource."""
    return "hello from the sdk server"


@server.prompt()
def summarize(topic: str) -> str:
    """A one-message prompt."""
    return f"Summarize what is known about {topic}."


if __name__ == "__main__":
    print(READY, file=sys.stderr, flush=True)
    server.run("stdio")
