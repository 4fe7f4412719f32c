"""The report's plots as PNG images embedded in the page.

The plots are rasterised rather than inlined as SVG: an SVG carries the capture's
text (tool names, session keys) into the page as markup, which would then depend on
Matplotlib escaping every string right; a PNG carries only pixels. Matplotlib is
imported here, on first use, so that loading :mod:`mcptrace.report` (and the command
line that registers ``mcptrace report``) does not pay for it.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Picture", "render"]

#: Pixels per inch of the PNG: 1.5 times the 96 CSS pixels per inch the page shows it
#: at, so text stays sharp on high-density screens and in print.
_DPI = 144
_CSS_PX_PER_INCH = 96


@dataclass(frozen=True)
class Picture:
    """A rendered plot: a ``data:`` URI and its display size in CSS pixels, or the reason
    it could not be drawn."""

    uri: str | None
    width: int
    height: int
    problem: str | None = None


def render(draw: Callable[[], Figure]) -> Picture:
    """Draw a figure and encode it as a PNG ``data:`` URI.

    A plot that fails is reported in the page instead of failing the whole report: a
    post-mortem is most needed when the capture is strange.
    """
    import matplotlib

    # capture text in titles and legends is text, never TeX: with math parsing on, a
    # tool name such as "$x^" makes Matplotlib raise while drawing
    with matplotlib.rc_context({"text.parse_math": False}):
        try:
            fig = draw()
            width, height = fig.get_size_inches()
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=_DPI, metadata={"Software": None})
        except Exception as exc:  # any drawing failure becomes a note in the page
            return Picture(None, 0, 0, f"{type(exc).__name__}: {exc}")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return Picture(
        f"data:image/png;base64,{data}",
        round(width * _CSS_PX_PER_INCH),
        round(height * _CSS_PX_PER_INCH),
    )
