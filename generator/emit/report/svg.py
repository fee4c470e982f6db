"""Small helpers for SVG and HTML built in Python: escaping, compact numbers, a root element.

Drawings are strings assembled from plan data; these helpers keep the markup compact (the
2,048-node report draws every rack) and every drawing accessible: a ``<title>`` and a
``<desc>`` that say in words what the picture shows.
"""

from __future__ import annotations

from html import escape


def esc(text: object) -> str:
    """Text and attribute values, escaped for HTML and SVG."""
    return escape(str(text), quote=True)


def num(x: float) -> str:
    """A coordinate with at most one decimal, without trailing zeros (``12``, ``4.5``)."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def svg_root(
    key: str, width: float, height: float, title: str, desc: str, body: str, cls: str = ""
) -> str:
    """An inline ``<svg>`` that scales to its container, labelled for screen readers.

    ``key`` makes the title/desc ids unique in the page.
    """
    klass = f' class="{esc(cls)}"' if cls else ""
    return (
        f'<svg{klass} viewBox="0 0 {num(width)} {num(height)}" width="{num(width)}" '
        f'height="{num(height)}" role="img" aria-labelledby="{key}-t {key}-d" '
        f'xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{key}-t">{esc(title)}</title><desc id="{key}-d">{esc(desc)}</desc>'
        f"{body}</svg>"
    )


def text(x: float, y: float, content: str, cls: str = "", anchor: str = "") -> str:
    """A ``<text>`` element; ``anchor`` is middle or end when not start."""
    klass = f' class="{cls}"' if cls else ""
    anc = f' text-anchor="{anchor}"' if anchor else ""
    return f'<text x="{num(x)}" y="{num(y)}"{klass}{anc}>{esc(content)}</text>'


def rect(x: float, y: float, w: float, h: float, cls: str = "", extra: str = "") -> str:
    """A ``<rect>`` element."""
    klass = f' class="{cls}"' if cls else ""
    return (
        f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}"{klass}{extra}/>'
    )


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 rack``, ``3 racks``, ``2 switches``, ``2,048 nodes``."""
    if n == 1:
        return f"1 {word}"
    if many is None:
        many = word + ("es" if word.endswith(("ch", "sh", "s", "x")) else "s")
    return f"{n:,} {many}"
