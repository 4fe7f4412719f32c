"""Capture text made safe to print on one terminal line.

Captures are untrusted: a method name, a session id or an invalid line may hold
newlines, which break line-oriented output (and let a crafted capture forge lines of a
report), and control characters, which a terminal or a CI log viewer acts on (an escape
sequence recolours the screen, retitles the window or moves the cursor). Whatever
mcptrace prints from a capture goes through :func:`one_line`.
"""

from __future__ import annotations

import re

#: C0 controls but tab, DEL, and the C1 controls (U+0080 to U+009F: U+009B is the
#: eight-bit CSI, which some terminals honour like ESC [)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def without_controls(text: str) -> str:
    """``text`` with its control characters but tab, CR and LF shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def one_line(text: str) -> str:
    """``text`` on a single line: CR and LF shown as ``\\r`` and ``\\n``, other control
    characters as ``\\xNN``."""
    return without_controls(text.replace("\r", "\\r").replace("\n", "\\n"))
