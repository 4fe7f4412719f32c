"""A tiny HTML builder in which capture text cannot become markup.

Everything in a capture is untrusted: tool names, session keys, error messages, raw
lines and file names are chosen by whoever produced the traffic. The report is
therefore never assembled by pasting strings into markup. Markup is an :class:`Html`
value, made only by :func:`el` (elements), :func:`raw_markup` (the report's own
constant CSS, script and data URIs) and :func:`join`; every plain ``str`` handed to
them is escaped with :func:`html.escape`, attribute values included. A forgotten
escape thus shows up as visible ``&lt;`` in the page, not as an injected element.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

__all__ = ["Child", "Html", "el", "join", "raw_markup", "text"]


class Html(str):
    """A string of markup that is safe to insert as is."""

    __slots__ = ()


#: What an element may contain: markup, text (escaped), numbers, nothing, or a sequence.
Child = Html | str | int | float | None | Iterable["Child"]

#: Elements without content or end tag.
_VOID = frozenset({"br", "hr", "img", "meta", "wbr", "col"})


def text(value: object) -> Html:
    """``value`` as escaped text (quotes too, so it is also safe inside an attribute)."""
    return Html(html.escape(str(value), quote=True))


def raw_markup(markup: str) -> Html:
    """Trust ``markup`` as is: only for the report's own constants, never capture data."""
    return Html(markup)


def join(children: Iterable[Child], sep: str = "") -> Html:
    """Children as one piece of markup; ``sep`` is escaped like any text."""
    return Html(text(sep).join(_render(c) for c in children))


def _render(child: Child) -> Html:
    if child is None:
        return Html("")
    if isinstance(child, Html):
        return child
    if isinstance(child, str | int | float):
        return text(child)
    return join(child)


def el(tag: str, *children: Child, **attrs: str | int | float | bool | None) -> Html:
    """The element ``<tag attrs>children</tag>``.

    ``tag`` and attribute names come from this package's code; attribute values are
    escaped. A trailing underscore is dropped (``class_``) and other underscores become
    hyphens (``aria_label``); ``None`` and ``False`` leave the attribute out, ``True``
    writes it bare (``open``).
    """
    parts = [tag]
    for name, value in attrs.items():
        if value is None or value is False:
            continue
        key = name.rstrip("_").replace("_", "-")
        parts.append(key if value is True else f'{key}="{text(value)}"')
    start = f"<{' '.join(parts)}>"
    if tag in _VOID:
        return Html(start)
    return Html(f"{start}{join(children)}</{tag}>")
