"""``mcptrace lint``: revision-aware MCP spec rules over a trace.

The public entry points are :func:`lint` (a trace in, the findings table out),
:data:`RULES` (every rule by code) and :func:`get_rule`.
"""

from __future__ import annotations

from mcptrace.linter.engine import lint
from mcptrace.linter.registry import RULES, get_rule, select_rules
from mcptrace.linter.rule import Rule

__all__ = ["RULES", "Rule", "get_rule", "lint", "select_rules"]
