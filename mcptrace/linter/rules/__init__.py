"""Every rule module, imported explicitly so the registry is complete and greppable.

Families (code prefix: module):

* JR: envelope -- JSON-RPC version, ids, result/error shape, batches
* PR: pairing -- id reuse, orphan and duplicate responses, unanswered requests
* LC: lifecycle -- initialize handshake, version negotiation, ping, era fallback
* SC: schema -- whole messages against the official JSON Schemas (--schema-dir)
* MT: meta -- `_meta` fields, key names, trace context, version negotiation
* RS: results -- resultType, multi round-trip requests, caching hints, completion size
* ER: errors -- error codes per revision (reserved ranges, forbidden and renumbered codes)
* SB: subscriptions -- 2026 subscriptions/listen streams and their notifications
* PG: progress -- progress tokens, increasing progress, progress after completion
* CN: cancellation -- notifications/cancelled: what it names, late responses, HTTP
* LG: logging -- notifications/message levels, 2026 request-scoped logging
* HT: transport -- Streamable HTTP headers and status codes
* ST: stdio -- stdio stream pollution, UTF-8
* MD: methods -- methods and directions per revision, 2026 one-way requests, deprecations
* CP: capabilities -- requests, notifications and input requests against declared capabilities
* CF: client -- sampling message content (tool use and results), roots
* TL: tools -- tool definitions in tools/list and the results of tools/call
* TK: tasks -- 2025-11-25 task-augmented requests: statuses, cancellation, related-task metadata
"""

from __future__ import annotations

from mcptrace.linter.rules import (
    cancellation,
    capabilities,
    client,
    envelope,
    errors,
    lifecycle,
    logging,
    meta,
    methods,
    pairing,
    progress,
    results,
    schema,
    stdio,
    subscriptions,
    tasks,
    tools,
    transport,
)

__all__ = [
    "capabilities",
    "envelope",
    "errors",
    "lifecycle",
    "meta",
    "methods",
    "pairing",
    "results",
    "schema",
    "subscriptions",
]
__all__ += ["cancellation", "logging", "progress", "stdio", "transport"]
__all__ += ["client", "tasks", "tools"]
