"""See how a split pattern cuts text into chunks, the step before BPE (chapter 04).

One coloured span per chunk, white space made visible, for one or more patterns; plain,
self-contained HTML like :mod:`tokcourse.course.viz`'s token view (inline CSS, no script), so it
renders in Jupyter, Colab and the static book alike. Hover a chunk for its length and text.

    >>> print(show_chunks("Hi  there!", "gpt2"))
    gpt2: 4 chunks
      Hi│·│·there│!
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tokcourse.course.viz import PALETTE, _css, _visible_char, visible
from tokcourse.patterns import SPLIT_PATTERNS, split

__all__ = ["ChunkView", "show_chunks"]


@dataclass(frozen=True)
class ChunkView:
    """The chunks a text is cut into by one or more split patterns; renders as HTML or text.

    ``rows`` holds ``(label, chunks)`` pairs; the chunks of every row add up to ``text``.

    >>> view = show_chunks("a  b", {"mine": r"\\S+|\\s"})
    >>> view.counts, str(view).splitlines()[1]
    ({'mine': 4}, '  a│·│·│b')
    """

    text: str
    rows: tuple[tuple[str, tuple[str, ...]], ...]

    @property
    def counts(self) -> dict[str, int]:
        """Number of chunks per pattern label."""
        return {label: len(chunks) for label, chunks in self.rows}

    def __repr__(self) -> str:
        lines = []
        for label, chunks in self.rows:
            lines.append(f"{label}: {len(chunks)} chunk{'s' if len(chunks) != 1 else ''}")
            shown = "│".join(visible(c) for c in chunks)
            lines.extend("  " + line for line in shown.split("\n"))
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_html(self) -> str:
        """Self-contained HTML (inline CSS, no script): one coloured span per chunk."""
        esc = html.escape
        body = []
        for label, chunks in self.rows:
            spans = "".join(_chunk_html(i, c) for i, c in enumerate(chunks)) or (
                '<span class="empty">(no chunks)</span>'
            )
            n = len(chunks)
            body.append(
                f'<div class="row"><div class="hdr"><b>{esc(label)}</b> '
                f"<span>{n} chunk{'s' if n != 1 else ''}</span></div>"
                f'<div class="txt">{spans}</div></div>'
            )
        joined = "".join(body)
        scope = "tkv-" + hashlib.sha1(joined.encode("utf-8")).hexdigest()[:10]
        return f'<div class="{scope}">{_css(scope)}{joined}</div>'


def _chunk_html(index: int, chunk: str) -> str:
    inner = []
    for c in chunk:
        shown = _visible_char(c)
        if shown == c:
            inner.append(html.escape(c))
        elif c == "\n":
            inner.append('<span class="ws">↵</span><br>')
        else:
            inner.append(f'<span class="ws">{html.escape(shown)}</span>')
    n = len(chunk)
    title = html.escape(f"chunk {index} · {n} character{'s' if n != 1 else ''}\n{chunk!r}")
    style = f"background:{PALETTE[index % len(PALETTE)]}"
    return f'<span class="tok" style="{style}" title="{title}">{"".join(inner)}</span>'


def show_chunks(text: str, patterns: Any = ("gpt2", "cl100k_base")) -> ChunkView:
    """Show how split patterns cut ``text`` into chunks: one coloured row per pattern.

    ``patterns`` is a name of a tiktoken encoding whose pattern the course knows (``"gpt2"``,
    ``"r50k_base"``, ``"cl100k_base"``, ``"o200k_base"``), a pattern string, a sequence of
    those, or a ``{label: name or pattern}`` dict. Chunks are cut by
    :func:`tokcourse.patterns.split`, which refuses a pattern that skips characters.

    >>> show_chunks("I'm 12345", "cl100k_base").counts
    {'cl100k_base': 5}
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.60}")
    if isinstance(patterns, str) or not isinstance(patterns, Iterable):
        patterns = (patterns,)
    if isinstance(patterns, Mapping):
        labelled = list(patterns.items())
    else:
        labelled = [(p if p in SPLIT_PATTERNS else "pattern", p) for p in patterns]
    if not labelled:
        raise ValueError("patterns is empty: pass at least one, e.g. 'gpt2'")
    rows = []
    for label, pattern in labelled:
        if not isinstance(pattern, str):
            raise TypeError(
                f"a pattern must be a str (a name such as 'gpt2' or a regex), got "
                f"{type(pattern).__name__}: {pattern!r:.60}"
            )
        chunks = split(text, SPLIT_PATTERNS.get(pattern, pattern))
        rows.append((str(label), tuple(chunks)))
    return ChunkView(text, tuple(rows))
