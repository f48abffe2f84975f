"""See how a split pattern cuts text into chunks, the step before BPE (chapters 04 and 05).

:func:`show_chunks` draws one coloured span per chunk, white space made visible, for one or more
patterns; plain, self-contained HTML like :mod:`tokcourse.course.viz`'s token view (inline CSS,
no script), so it renders in Jupyter, Colab and the static book alike. Hover a chunk for its
length and text.

    >>> print(show_chunks("Hi  there!", "gpt2"))
    gpt2: 4 chunks
      Hi│·│·there│!

:func:`alternatives` cuts a pattern at its top-level ``|``, and :func:`explain` says which of
those alternatives made each chunk.

    >>> print(explain("Hi  there!", "gpt2"))
      2  'Hi'
      6  ' '
      2  ' there'
      4  '!'
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

from tokcourse.course.viz import PALETTE, _css, _visible_char, visible
from tokcourse.patterns import SPLIT_PATTERNS, compile_pattern, split
from tokcourse.unicode_pin import pin_unicode

__all__ = ["ChunkView", "Explained", "alternatives", "explain", "show_chunks"]


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


def alternatives(pattern: str) -> list[str]:
    r"""The top-level alternatives of a regex: ``pattern`` cut at every ``|`` outside ``(...)``
    and ``[...]``. Joined with ``|`` they give the pattern back.

    A backslash protects the character after it, and a ``]`` right after ``[`` or ``[^`` is a
    literal, not the end of the class.

    >>> alternatives(r"'s|(?:a|b)+|[|\]]|\||x")
    ["'s", '(?:a|b)+', '[|\\]]', '\\|', 'x']
    >>> len(alternatives(SPLIT_PATTERNS["gpt2"]))
    7
    """
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, got {type(pattern).__name__}: {pattern!r:.60}")
    parts, depth, start, i, n = [], 0, 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2  # the escaped character is never a bar, a bracket or a parenthesis
            continue
        if c == "[":  # skip the whole class: a | or ( inside it is just a character
            i += 1 + (pattern[i + 1 : i + 2] == "^")
            i += pattern[i : i + 1] == "]"  # a first ] is a literal
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    return parts + [pattern[start:]]


@dataclass(frozen=True)
class Explained:
    """Each chunk of a text with the number (from 1) of the alternative that matched it.

    ``chunks`` holds ``(number, chunk)`` pairs; ``alternatives`` the pattern's alternatives, so
    that ``alternatives[number - 1]`` is the one that made a chunk.
    """

    alternatives: tuple[str, ...]
    chunks: tuple[tuple[int, str], ...]

    def __repr__(self) -> str:
        return "\n".join(f"  {number}  {chunk!r}" for number, chunk in self.chunks)

    __str__ = __repr__


def explain(text: str, pattern: str = SPLIT_PATTERNS["cl100k_base"]) -> Explained:
    """Which alternative of ``pattern`` made each chunk of ``text``.

    ``pattern`` is a regex or the name of a tiktoken encoding (``"gpt2"``, ``"cl100k_base"``,
    ``"o200k_base"``). Each alternative is wrapped in a capturing group; after a match, the
    group that took part is the alternative that won (the engine tries them left to right
    and keeps the first that matches). The chunks are exactly :func:`~tokcourse.patterns.split`'s.

    >>> explain("we've 12345", "cl100k_base").chunks
    ((2, 'we'), (1, "'ve"), (8, ' '), (3, '123'), (3, '45'))
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.60}")
    pattern = SPLIT_PATTERNS.get(pattern, pattern)
    parts = alternatives(pattern)
    first_group, group = [], 1  # the group number of each wrapper, after the groups before it
    for part in parts:
        first_group.append(group)
        group += 1 + compile_pattern(part).groups
    wrapped = regex.compile("|".join(f"({part})" for part in parts))
    found = []
    for match in wrapped.finditer(pin_unicode(text)):
        if match.end() > match.start():
            number = next(k for k, g in enumerate(first_group, 1) if match.start(g) >= 0)
            found.append((number, text[match.start() : match.end()]))
    if [chunk for _, chunk in found] != split(text, pattern):  # refuses a skipping pattern too
        raise ValueError(f"pattern {pattern!r:.80} matches differently once its parts are grouped")
    return Explained(tuple(parts), tuple(found))
