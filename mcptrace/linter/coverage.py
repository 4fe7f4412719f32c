"""How the rules cover the catalogue of checkable spec rules the project started from.

``SPEC_RULES.md`` §4 (the shared design material, not shipped with the package) lists
145 checkable rules of the MCP specification, ``R001``..``R145``, each with its keyword,
revisions and a quoted spec sentence. :data:`CATALOGUE` says, for each, which mcptrace
rules check it: **covered** (the whole obligation), **partial** (the note says what is
not checked) or **uncovered** (the note says why: not visible in a capture, or not
implemented yet). :data:`BEYOND` lists the rules with no catalogue entry and why they
exist. ``docs/coverage.md`` is generated from both; a test compares it, and checks the
table against the catalogue's index when the shared material is at hand. Regenerate::

    python -m mcptrace.linter.coverage > docs/coverage.md
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

from mcptrace.linter.docs import anchor, publish
from mcptrace.linter.registry import RULES

Status = Literal["covered", "partial", "uncovered"]


@dataclass(frozen=True)
class Entry:
    """One catalogue rule and the mcptrace rules that check it."""

    ref: str
    #: the catalogue's kebab-case label
    label: str
    status: Status
    codes: tuple[str, ...]
    #: what is not checked (partial), why not (uncovered), or a remark
    note: str


#: One catalogue rule a line: ``R-id label status codes[ : note]``, codes comma-separated
#: (``-`` for none); an indented line continues the note above it.
_TABLE = """
R001 jsonrpc-2-0 covered JR001,JR014
R002 params-is-object covered JR002
R003 request-id-type covered JR003,MD007 : MD007 covers a request method sent with no id
R004 request-id-not-null covered JR004
R005 request-id-never-reused covered PR001
R006 request-id-unique-in-flight covered PR002
R007 notification-has-no-id covered JR005
R008 response-matches-request covered PR003,PR004 : orphan and second responses both
    flagged
R009 no-response-to-notification covered PR003,PR005 : seen on the wire as an id-less or
    orphan response
R010 result-xor-error covered JR006,JR014 : JR014 catches objects with neither result nor
    error
R011 result-is-object covered JR007
R012 error-code-integer covered JR008
R013 error-code-and-message covered JR009
R014 error-id-required-unless-unreadable covered PR005
R015 batch-not-allowed covered JR010
R016 batch-2024-unmodelled covered JR011 : reported as info rather than warning
R017 batch-receive-support covered JR015 : the error is tied to the batch as the other
    side's next message, with every request of the batch left unanswered
R018 batch-no-initialize covered JR012
R019 batch-homogeneous covered JR013,JR014 : empty array is reported by JR014
R020 initialize-first covered LC001,LC017 : dual-era probe before initialize is exempted;
    LC017 notes a second handshake
R021 initialize-required-fields covered LC002
R022 initialized-notification-sent covered LC003,LC014 : duplicate or premature
    notifications/initialized not flagged
R023 client-waits-for-initialize-result covered LC004
R024 server-waits-for-initialized covered LC005
R025 initialize-version-negotiation covered LC009,LC006 : only decidable across sessions of
    the same server or for unknown version strings
R026 initialize-not-cancelled covered LC010
R027 negotiated-capabilities-only covered CP001,CP002,CP006,CP007 : CP002 is the SHOULD-era
    variant
R028 ping-empty-result covered LC011 : promptness not measured
R029 meta-required-fields covered MT001
R030 meta-missing-rejected covered MT002 : HTTP 400 status for this case not checked
R031 meta-client-info covered MT004
R032 result-server-info covered MT005,MT015 : MT005 flags results missing it from a server
    that sends it elsewhere; MT015 reports a server that never sends it, as info (it may be
    configured not to)
R033 missing-client-capability-error covered MT013,HT006 : HT006 checks the 400 status on
    HTTP
R034 server-no-capability-inference covered CP005,CF006,CF007,CF008,MT013,MT002 : every
    input request is judged by the clientCapabilities of the very request it answers
    (the catalogue's lintable consequence); reliance on an earlier request's identity or
    version leaves no trace in the traffic
R035 unsupported-version-error covered MT006,MT014,HT006 : data.requested not cross-checked
    against the request's version
R036 version-retry-from-supported covered MT007
R037 server-discover-implemented covered MT008
R038 discover-result-shape covered MT014,RS001,RS009
R039 loglevel-valid covered MT009
R040 extension-id-format covered MT010
R041 result-type-required covered RS001
R042 result-type-known covered RS002 : results of requests declaring extensions are skipped
R043 input-required-only-on-supported-methods covered RS003
R044 input-required-nonempty covered RS004
R045 input-request-types covered RS005 : duplicate map keys are not detected
R046 input-request-capability covered CP005 : top-level capabilities only; url-mode and
    sampling.tools sub-capabilities not checked
R047 mrtr-echo-request-state covered RS007
R048 mrtr-no-unsolicited-request-state covered RS008
R049 mrtr-retry-new-id covered RS006
R050 mrtr-inputs-before-retry covered RS013 : checks that every key is answered, not the
    kind of each answer
R051 mrtr-no-cross-request-use covered RS014 : linked through requestState; cross-used
    inputResponses without a state not detected
R052 elicitation-mode-supported covered CF006,CP001,CP005 : CP001/CP005 the base
    capability, CF006 the url/form mode; a client's -32602 answer is not required
R053 sampling-tools-capability covered CF007,CP001,CP005
R054 sampling-include-context covered CF008,MD006 : CF008 the sampling.context gate;
    MD006 reports any 2026 use of the deprecated values as info
R055 sampling-tool-result-only covered CF001
R056 sampling-tool-use-balanced covered CF002 : a tool use ending the message list is
    accepted (nothing follows it yet)
R057 elicitation-url-valid covered CF005 : a scheme must open the URL; only http(s) URLs are
    parsed further (host, port)
R058 roots-file-uri covered CF003
R059 no-server-initiated-requests covered MD004
R060 no-client-responses covered MD005
R061 method-direction-allowed covered MD003
R062 method-known-in-revision covered MD001
R063 deprecated-feature-used covered MD006 : deprecated capability declarations and
    HTTP+SSE/DCR are not reported
R064 forbidden-legacy-error-codes covered ER004
R065 reserved-range-undefined-code covered ER001,MT006,MT013 : use of -32020 outside HTTP
    header validation not checked
R066 legacy-range-discouraged covered ER002,ER003
R067 app-codes-outside-jsonrpc-range covered ER005 : ER006 gives the legacy-revision
    counterpart
R068 resource-not-found-code covered ER007,ER008 : not-found recognised from code -32002 or
    message wording only
R069 url-elicitation-required-error-shape covered ER009
R070 elicitation-complete-known-id covered CF004 : a session with no earlier URL elicitation
    (a capture started late) is not judged
R071 listen-only-requested-types covered SB004
R072 listen-ack-first covered SB003
R073 listen-ack-subset covered SB007 : later notifications are checked against the request
    filter, not the ack
R074 listen-notification-has-subscription-id covered SB001
R075 subscription-id-matches-listen-id covered SB002
R076 listen-close-carries-subscription-id covered SB005
R077 server-cancel-only-for-listen covered SB006
R078 no-messages-after-cancel covered CN006 : cancels over Streamable HTTP are left out
    (stream close is the signal)
R079 progress-token-type covered PG001
R080 progress-token-unique covered PG002
R081 progress-token-active covered PG003,PG005,CN007 : CN007 for progress after a cancel
R082 progress-increasing covered PG004
R083 progress-stops-after-completion covered PG005 : task-augmented requests skipped
R084 cancel-references-issued-request covered CN001,CN002
R085 no-response-after-cancel covered CN003,CN006
R086 cancel-request-id-present covered CN004
R087 tasks-cancel-not-notification covered TK001
R088 http-no-cancel-notification covered CN005 : info rather than warning
R089 log-only-when-requested covered LG001
R090 log-request-scoped-stream covered LG002
R091 log-level-threshold covered LG003
R092 logging-capability-declared covered CP006 : needs handshake or discover result in the
    capture
R093 server-feature-declared covered CP003,CP004
R094 list-changed-needs-capability covered CP007
R095 resource-updated-needs-subscription covered CP008
R096 tool-errors-in-result covered TL006 : 2025-11-25 only (2026's schema example answers
    invalid arguments with -32602): -32602 to a well-formed call of a listed tool; other
    codes are not judged (a -32603 may be the server's own failure)
R097 structured-content-conforms covered TL001 : schemas that do not compile or refer to
    other documents are skipped
R098 tool-input-schema-object covered TL005 : validity against the schema's dialect
    (draft-04 to 2020-12); unknown dialects and remote references are not fetched
R099 tool-name-format covered RS016 : the same name on two pages of a paginated list is
    not detected
R100 tools-deterministic-order covered TL002 : each list is compared with the one before
R101 x-mcp-header-constraints covered TL003 : judged on the server's tools/list; whether a
    client then leaves the tool alone is not
R102 cursor-opaque covered RS017 : a session with no earlier result of that list (a capture
    started mid-listing) is not judged
R103 invalid-cursor-error covered RS018 : a cursor is known to be bad when no earlier result
    returned it, or when the error's message blames it
R104 cacheable-hints-required covered RS009
R105 ttl-non-negative covered RS010
R106 cache-scope-consistent-across-pages covered RS015
R107 input-required-no-cache-hints covered RS012
R108 completion-max-values covered RS011
R109 task-augmentation-needs-capability covered TK005,TK007,TK008,TK009 : TK007 the
    per-tool taskSupport, TK008 the server's -32601 for a required one, TK009 the SHOULD
    -32601 for a forbidden one
R110 task-create-result covered TK006 : a plain answer for a tool whose taskSupport is
    absent or forbidden is not flagged (the client should not have asked)
R111 task-status-transitions covered TK002 : statuses leaving a terminal one; "begin in
    working" and the timestamps tasks must carry are not checked
R112 task-cancel-terminal-rejected covered TK003
R113 task-result-related-meta covered TK004 : the related-task metadata of other
    task messages is not checked
R114 tasks-are-extension-in-2026 covered MD001 : tasks/* flagged in 2026 regardless of a
    declared tasks extension
R115 meta-key-format covered MT011 : grammar only; unknown keys under reserved prefixes not
    flagged
R116 otel-trace-context-format covered MT012 : the size limits of Baggage are not checked
R117 stdio-no-embedded-newlines covered ST001,ST002 : a message split over lines shows as
    non-MCP lines
R118 stdio-stdout-only-mcp covered ST001,ST002
R119 utf8-encoding covered ST003
R120 http-accept-header covered HT008 : Accept on legacy GET requests not checked
R121 http-202-for-notification-or-response covered HT007 : needs the HTTP status recorded
    on the client row
R122 http-request-content-type covered HT010
R123 http-get-stream-no-responses covered HT016 : a GET whose request headers were not
    captured is not judged (a resumption cannot be told apart)
R124 http-no-broadcast covered HT018 : HAR captures only (an entry is a stream); exchanges
    without a session id and replays on resumed streams are not judged
R125 http-session-id-echo covered HT012 : HAR captures name sessions after the id, so a
    request without it lands in another session
R126 http-session-id-charset covered HT011
R127 http-session-404-reinitialize covered HT014 : the server's 404 for a terminated session
    is not checked
R128 http-protocol-version-header covered HT001
R129 http-bad-protocol-version-400 covered HT013 : only version strings that name no
    revision; 401, 403, 404 and 405 are accepted as answers another MUST may demand
R130 http-origin-403 covered HT021 : only with --allowed-origin (allowed-origins in the
    configuration): which origins are invalid is the server's configuration
R131 http-sse-endpoint-event covered HT019 : HAR captures only; a GET stream whose session
    never negotiated (no endpoint, so no initialize) is judged only with --revision
R132 http26-single-message-body covered MD005,JR010 : client responses and batches flagged
    on any transport
R133 http26-protocol-version-header covered HT001
R134 http26-version-header-matches-meta covered HT002
R135 http26-standard-headers covered HT003
R136 http26-header-body-match covered HT004,HT017 : HT004 the client's request, HT017 the
    server that did not reject it
R137 http26-base64-header-encoding covered HT015,TL004
R138 http26-mcp-param-headers covered TL004 : a header sent for an absent or null argument
    is not flagged
R139 http26-error-status-codes covered HT006 : 400 for missing required _meta (-32602) not
    checked
R140 http26-no-server-requests-on-sse covered MD004
R141 http26-sse-notifications-related covered HT020,PG003,LG002 : HT020 on HAR captures
    (a POST's stream is its entry): progress, cancellation, subscription and log
    notifications; other notifications name no request
R142 http26-no-sessions covered HT005 : 405 for GET/DELETE not checked
R143 modern-server-initialize-error-lists-versions covered LC015 : the server is taken as
    modern-only from the session's revision or the error code (-32601, -32022)
R144 no-fallback-after-modern-reply covered LC013
R145 dual-era-probe-first covered LC016 : HTTP sessions are left alone (there the spec lets
    a client try a modern request first)
"""


def _parse(table: str) -> tuple[Entry, ...]:
    entries: list[list[str]] = []
    for line in table.strip("\n").splitlines():
        if line.startswith(" "):
            entries[-1][4] += " " + line.strip()
            continue
        head, _, note = line.partition(" : ")
        ref, label, status, codes = head.split()
        entries.append([ref, label, status, codes, note.strip()])
    parsed = []
    for ref, label, status, codes, note in entries:
        if status not in ("covered", "partial", "uncovered"):
            raise ValueError(f"{ref}: unknown status {status!r}")
        chosen = () if codes == "-" else tuple(codes.split(","))
        parsed.append(Entry(ref, label, cast(Status, status), chosen, note))
    return tuple(parsed)


CATALOGUE: tuple[Entry, ...] = _parse(_TABLE)

#: rules with no catalogue entry: code -> why the rule exists
BEYOND: dict[str, str] = {
    "CP009": "capability negotiation: a declared feature refused as Method not found (a note)",
    "ER006": "JSON-RPC itself reserves -32768..-32000; a note on legacy codes there",
    "ER010": "prompts error handling: -32602 for an invalid prompt name (a SHOULD)",
    "ER011": "prompts error handling: -32602 for a missing required argument (a SHOULD)",
    "HT009": "the request side of the Content-Type rule the catalogue states for responses",
    "JR016": "RFC 8259 §8.2: a lone surrogate escape, which strict JSON parsers refuse",
    "LC007": "revision detection (catalogue §5): an initialize naming no published revision",
    "LC008": "revision detection (catalogue §5): the server counter-offered a version",
    "LC012": "revision detection (catalogue §5): a session whose revision is unknown",
    "LG004": "the schema's LoggingLevel enumeration",
    "MD002": "methods no revision defines (extensions or typos)",
    "MT003": "revision detection (catalogue §5): a 2026 request naming no published revision",
    "PR006": "JSON-RPC: every request gets a response; the receiver went on without answering",
    "PR007": "the same, lower: the capture ended while the request was pending",
    "SC001": "official schema validation (catalogue §6), with --schema-dir",
    "SC002": "official schema validation (catalogue §6), with --schema-dir",
    "SC003": "official schema validation (catalogue §6), with --schema-dir",
    "SC004": "official schema validation (catalogue §6), with --schema-dir",
    "TK010": "tasks: requestors SHOULD respect the pollInterval (2025-11-25)",
}

HEADER = (
    "# Coverage of the spec rule catalogue\n\n"
    "Generated by `python -m mcptrace.linter.coverage`; do not edit by hand. For each of the\n"
    "checkable rules in `SPEC_RULES.md` §4 (the catalogue this project started from, with a\n"
    "quoted spec sentence for each), the mcptrace rules that check it. **covered**: the whole\n"
    "obligation is checked; **partial**: the note says what is not; **uncovered**: the note\n"
    "says why (not visible in a capture, or not implemented yet). Rule codes link to\n"
    "[rules.md](rules.md).\n"
)


def entries_of(code: str) -> list[Entry]:
    """The catalogue rules that the mcptrace rule ``code`` checks (wholly or in part)."""
    return [e for e in CATALOGUE if code in e.codes]


def catalogue_text(code: str) -> str:
    """The lines ``mcptrace rule CODE`` ends with: which catalogue rules ``code`` checks."""
    entries = entries_of(code)
    if entries:
        listed = "; ".join(f"{e.ref} {e.label} ({e.status})" for e in entries)
        return f"Catalogue (docs/coverage.md): {listed}\n"
    if code in BEYOND:
        return f"Catalogue (docs/coverage.md): none; {BEYOND[code]}\n"
    return ""


def _codes(entry: Entry) -> str:
    return ", ".join(f"[{c}](rules.md#{anchor(RULES[c])})" for c in entry.codes) or "-"


def coverage_markdown() -> str:
    """The coverage page: counts, the catalogue table, then the rules beyond it."""
    counts = Counter(e.status for e in CATALOGUE)
    used = {c for e in CATALOGUE for c in e.codes}
    summary = (
        f"{len(CATALOGUE)} catalogue rules: {counts['covered']} covered, "
        f"{counts['partial']} partial, {counts['uncovered']} uncovered. "
        f"{len(used)} of the {len(RULES)} mcptrace rules check catalogue rules; "
        f"{len(BEYOND)} check things the catalogue does not list.\n"
    )
    lines = ["| catalogue | label | status | mcptrace rules | note |", "|---|---|---|---|---|"]
    for e in CATALOGUE:
        note = e.note.replace("|", "\\|")
        lines.append(f"| {e.ref} | `{e.label}` | {e.status} | {_codes(e)} | {note} |")
    beyond = ["| rule | name | why |", "|---|---|---|"]
    for code, why in BEYOND.items():
        rule = RULES[code]
        beyond.append(f"| [{code}](rules.md#{anchor(rule)}) | `{rule.name}` | {why} |")
    return "\n".join(
        [
            HEADER,
            summary,
            "\n".join(lines) + "\n",
            "## Rules beyond the catalogue\n",
            "\n".join(beyond) + "\n",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcptrace.linter.coverage", description=__doc__)
    parser.add_argument("--check", metavar="FILE", help="exit 1 if FILE is not up to date")
    args = parser.parse_args(argv)
    return publish(coverage_markdown(), args.check, "mcptrace.linter.coverage")


if __name__ == "__main__":  # pragma: no cover - documentation generator
    raise SystemExit(main())
