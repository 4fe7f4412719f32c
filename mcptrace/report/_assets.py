"""The report's own style sheet, script and Content Security Policy.

Everything is inline so the report is one file that opens offline, from an e-mail
attachment or an incident ticket: no fonts, scripts or style sheets are fetched. The
Content Security Policy says so to the browser as well: nothing may be loaded except
``data:`` images (the plots), and only this exact style sheet and script may apply
(by their SHA-256), so even markup that slipped into the page could neither run
script nor reach the network.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["CSP", "OUTCOME_CSS_COLORS", "SCRIPT", "STYLE"]

#: Outcome colours of the tables' badges: the plots' palette
#: (:data:`mcptrace.plots.OUTCOME_COLORS`), repeated here because importing the plots
#: imports Matplotlib; a test keeps the two equal.
OUTCOME_CSS_COLORS: dict[str, str] = {
    "ok": "#009E73",
    "error": "#D55E00",
    "tool_error": "#E69F00",
    "input_required": "#56B4E9",
    "cancelled": "#CC79A7",
    "unanswered": "#7F7F7F",
}

_OUTCOME_RULES = "\n".join(
    f".outcome-{name}::before {{ background: {color}; }}"
    for name, color in OUTCOME_CSS_COLORS.items()
)

STYLE = (
    """
:root {
  color-scheme: light;
  --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #eef1f4; --bg: #f6f8fa;
  --accent: #0969da; --error: #cf222e; --warning: #9a6700; --info: #0969da;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono",
    "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
@media (prefers-reduced-motion: no-preference) { html { scroll-behavior: smooth; } }
body {
  margin: 0; color: var(--fg); background: var(--bg); line-height: 1.5;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    "Noto Sans", "DejaVu Sans", sans-serif;
}
a { color: var(--accent); }
code, .mono { font-family: var(--mono); font-size: 0.88em; overflow-wrap: break-word; }
.layout { display: grid; grid-template-columns: 13rem minmax(0, 1fr); min-height: 100vh; }
nav.toc {
  position: sticky; top: 0; align-self: start; height: 100vh; overflow-y: auto;
  padding: 1.25rem 1rem; background: #fff; border-right: 1px solid var(--line);
}
nav.toc .brand { font-weight: 700; font-size: 1.05rem; margin: 0 0 0.25rem; }
nav.toc .sub { color: var(--muted); font-size: 0.8rem; margin: 0 0 1rem; overflow-wrap: anywhere; }
nav.toc ol { list-style: none; margin: 0; padding: 0; }
nav.toc li a {
  display: flex; justify-content: space-between; gap: 0.5rem; padding: 0.3rem 0.5rem;
  border-radius: 6px; color: var(--fg); text-decoration: none;
}
nav.toc li a:hover, nav.toc li a:focus { background: var(--soft); }
nav.toc .count { color: var(--muted); font-variant-numeric: tabular-nums; }
nav.toc .count.bad { color: var(--error); font-weight: 600; }
nav.toc .controls { margin-top: 1rem; display: flex; gap: 0.4rem; flex-wrap: wrap; }
nav.toc button {
  font: inherit; font-size: 0.8rem; padding: 0.2rem 0.6rem; border: 1px solid var(--line);
  border-radius: 6px; background: var(--bg); cursor: pointer;
}
main { padding: 1.25rem 1.25rem 3rem; max-width: 84rem; }
header.page h1 { margin: 0 0 0.25rem; font-size: 1.6rem; overflow-wrap: anywhere; }
header.page p { margin: 0 0 1.25rem; color: var(--muted); }
.focus {
  border: 1px solid #54aeff; background: #ddf4ff; border-radius: 8px;
  padding: 0.6rem 0.9rem; margin: 0 0 1.25rem;
}
.alert {
  border: 1px solid #ff8182; background: #ffebe9; border-radius: 8px;
  padding: 0.6rem 0.9rem; margin: 0 0 1rem;
}
section.part {
  background: #fff; border: 1px solid var(--line); border-radius: 10px;
  padding: 0.5rem 1.1rem 1.1rem; margin: 0 0 1.25rem; scroll-margin-top: 1rem;
}
section.part > h2 {
  font-size: 1.3rem; margin: 0.75rem 0 0.5rem; padding-bottom: 0.4rem;
  border-bottom: 1px solid var(--soft);
}
h3 { font-size: 1.05rem; margin: 1.25rem 0 0.5rem; }
p.note, .muted { color: var(--muted); }
p.note { font-size: 0.88rem; margin: 0.4rem 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr));
  gap: 0.75rem; margin: 0.75rem 0 1rem; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 0.6rem 0.8rem; }
.card .label { color: var(--muted); font-size: 0.8rem; }
.card .value { font-size: 1.3rem; font-weight: 600; font-variant-numeric: tabular-nums;
  overflow-wrap: anywhere; }
.card .detail { color: var(--muted); font-size: 0.8rem; }
.card.bad .value { color: var(--error); }
ul.highlights { margin: 0.25rem 0 0.75rem; padding-left: 1.25rem; }
ul.highlights li { margin: 0.2rem 0; }
.table-wrap { overflow-x: auto; margin: 0.5rem 0 0.75rem; }
table { border-collapse: collapse; font-size: 0.88rem; }
caption { text-align: left; color: var(--muted); font-size: 0.85rem; padding: 0 0 0.3rem; }
th, td { padding: 0.3rem 0.5rem; text-align: left; vertical-align: top;
  border-bottom: 1px solid var(--soft); }
thead th { border-bottom: 2px solid var(--line); white-space: nowrap; font-weight: 600;
  background: #fff; }
tbody tr:hover { background: #f6f8fa; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.wrap { overflow-wrap: anywhere; min-width: 6rem; }
td.nowrap { white-space: nowrap; }
td .sub { display: block; color: var(--muted); font-size: 0.8rem; }
td.hot { color: var(--error); font-weight: 600; }
.badge {
  display: inline-block; padding: 0 0.45rem; border-radius: 999px; font-size: 0.78rem;
  font-weight: 600; line-height: 1.5; white-space: nowrap; border: 1px solid transparent;
}
.sev-error { color: #fff; background: var(--error); }
.sev-warning { color: #4d2d00; background: #ffd8a8; border-color: #d4a72c; }
.sev-info { color: #fff; background: var(--info); }
.outcome { white-space: nowrap; }
.outcome::before {
  content: ""; display: inline-block; width: 0.65em; height: 0.65em; border-radius: 2px;
  margin-right: 0.35em; vertical-align: baseline;
}
"""
    + _OUTCOME_RULES
    + """
figure { margin: 1rem 0; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--soft);
  border-radius: 6px; }
figcaption { color: var(--muted); font-size: 0.85rem; margin-top: 0.35rem; }
.plot-missing { color: var(--muted); border: 1px dashed var(--line); border-radius: 6px;
  padding: 1rem; }
article.finding {
  border: 1px solid var(--line); border-left: 4px solid var(--info); border-radius: 8px;
  padding: 0.5rem 1rem 0.75rem; margin: 0.75rem 0; scroll-margin-top: 1rem;
}
article.finding.sev-error-edge { border-left-color: var(--error); }
article.finding.sev-warning-edge { border-left-color: #d4a72c; }
article.finding:target { box-shadow: 0 0 0 3px #54aeff66; }
article.finding h3 { margin: 0.35rem 0; display: flex; gap: 0.5rem; align-items: baseline;
  flex-wrap: wrap; }
article.finding .rule-summary { margin: 0.2rem 0; }
article.finding .message { margin: 0.2rem 0 0.4rem; font-weight: 500; overflow-wrap: anywhere; }
p.where { margin: 0.2rem 0 0.4rem; font-size: 0.85rem; color: var(--muted); }
p.where code { color: var(--fg); }
dl.meta { display: grid; grid-template-columns: max-content minmax(0, 1fr);
  gap: 0.1rem 0.9rem; margin: 0.3rem 0 0.5rem; font-size: 0.88rem; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.raw-label { font-size: 0.8rem; color: var(--muted); margin: 0.5rem 0 0.1rem;
  font-family: var(--mono); overflow-wrap: anywhere; }
.raw-label .flag { color: var(--error); font-weight: 600; }
pre.raw {
  margin: 0 0 0.35rem; padding: 0.5rem 0.7rem; background: var(--bg);
  border: 1px solid var(--line); border-radius: 6px; font: 0.8rem/1.45 var(--mono);
  white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; max-height: 24rem;
  overflow-y: auto;
}
pre.raw.flagged { border-left: 3px solid var(--error); }
details { margin: 0.35rem 0; }
details > summary { cursor: pointer; color: var(--accent); font-size: 0.9rem; }
footer.page { color: var(--muted); font-size: 0.85rem; border-top: 1px solid var(--line);
  margin-top: 2rem; padding-top: 1rem; }
footer.page dl.meta { font-size: 0.85rem; }
@media (max-width: 960px) {
  .layout { display: block; }
  nav.toc { position: static; height: auto; border-right: 0;
    border-bottom: 1px solid var(--line); }
  nav.toc ol { display: flex; flex-wrap: wrap; gap: 0.25rem; }
  main { padding: 1rem; }
}
@media print {
  body { background: #fff; font-size: 11pt; }
  .layout { display: block; }
  nav.toc, nav.toc .controls { display: none; }
  main { padding: 0; max-width: none; }
  section.part { border: 0; padding: 0; margin: 0 0 1rem; }
  section.part > h2 { break-after: avoid; }
  figure, tr, article.finding, .card { break-inside: avoid; }
  pre.raw { max-height: none; overflow: visible; }
  a { color: inherit; text-decoration: none; }
  details::details-content { content-visibility: visible; display: contents; }
  details > summary { display: none; }
  tbody tr:hover { background: none; }
  .badge, .outcome::before, article.finding, pre.raw.flagged {
    -webkit-print-color-adjust: exact; print-color-adjust: exact;
  }
}
"""
)

#: Marks the page as scripted, shows the expand/collapse buttons (hidden without
#: script, where they could not work) and opens every collapsed block before printing.
SCRIPT = """
document.documentElement.classList.add("js");
(function () {
  function all(open) {
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  document.querySelectorAll("button[data-details]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () { all(b.getAttribute("data-details") === "open"); });
  });
  window.addEventListener("beforeprint", function () { all(true); });
})();
"""


def _sha256(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


CSP = (
    "default-src 'none'; img-src data:; "
    f"style-src {_sha256(STYLE)}; script-src {_sha256(SCRIPT)}; "
    "base-uri 'none'; form-action 'none'"
)
