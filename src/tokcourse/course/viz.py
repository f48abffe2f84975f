"""See how a tokenizer cuts text: coloured token spans, side by side for several encodings.

The view is plain, self-contained HTML (inline CSS, no JavaScript, no external files), so the
same object renders in Jupyter, Colab and the static book, where no kernel is running. Hover a
token to see its id and bytes; pass ``show_ids=True`` to print the ids inline as well.

    >>> view = show_tokens("Hello world", ["cl100k_base"])
    >>> view.counts
    {'cl100k_base': 2}
    >>> print(view)
    cl100k_base: 2 tokens, 5.50 chars/token
      Hello│·world

Two steps, each usable on its own:

* :func:`token_spans` is the pure-data step: one :class:`TokenSpan` per token, with its id,
  its bytes, where it sits in the text and how to display it honestly (bytes that are not valid
  UTF-8 on their own are shown as hex, e.g. ``⟨F0 9F⟩``).
* :func:`show_tokens` lays the spans of one or more encodings out as a :class:`TokenView`.

An "encoding" is any of: a tiktoken encoding name (``"gpt2"``, ``"cl100k_base"``,
``"o200k_base"``, ...), a ``tiktoken.Encoding`` (anything with ``encode`` and
``decode_single_token_bytes``), or one of the course's own tokenizers (anything with
``encode`` and a ``vocab: dict[int, bytes]``, optionally ``special_tokens: dict[str, int]``).

The chunks of a split pattern (the step before BPE) are drawn by :mod:`tokcourse.course.chunks`,
merge trees by :mod:`tokcourse.course.forest`.
"""

from __future__ import annotations

import hashlib
import html
import inspect
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "PALETTE",
    "SPECIAL_STYLE",
    "TokenSpan",
    "TokenRow",
    "TokenView",
    "token_spans",
    "show_tokens",
    "visible",
]

#: Token backgrounds, cycled over token positions: neighbours never share a colour. Light and
#: mid tones alternate, so two neighbours differ in lightness, which every colour vision sees,
#: as well as in hue. Checked by ``tests/test_colour.py`` with :mod:`tokcourse.course.colour`:
#: each neighbouring pair (the last with the first too) stays >= 10 apart in CIEDE2000 under
#: normal vision, protanopia, deuteranopia and tritanopia (Machado et al. 2009), and the text,
#: the whitespace marks, the inline ids and the hex bytes all reach WCAG AA (4.5:1) on every one.
PALETTE: tuple[str, ...] = (
    "#d9f7e7",  # mint
    "#6bcde6",  # sky
    "#fbf3b4",  # butter
    "#a5c7ba",  # sage
    "#dcc4fe",  # lavender
    "#bedba1",  # green
    "#8cf7fe",  # aqua
    "#dabd86",  # sand
)

#: Text of an ordinary token, and the colours drawn inside one: whitespace marks (· → ↵ ␍,
#: ⟨U+200D⟩), inline ids (``show_ids=True``) and bytes that are not UTF-8 alone (``⟨F0 9F⟩``).
#: Each keeps WCAG AA contrast (4.5:1) with every palette colour.
TEXT_COLOR = "#1a1a1a"
MARK_COLOR = "#4d4d4d"
ID_COLOR = MARK_COLOR
RAW_COLOR = "#7a3d00"
#: Background of a special token (e.g. ``<|endoftext|>``): dark, so it cannot pass for text.
SPECIAL_BACKGROUND = "#3b3b58"
#: Text of a special token, and its marks and inline id: light on the dark background.
SPECIAL_COLOR = "#ffffff"
SPECIAL_ID_COLOR = "#e6e6f5"
#: Inline style of a special token: light text on the dark background.
SPECIAL_STYLE = f"background:{SPECIAL_BACKGROUND};color:{SPECIAL_COLOR};font-weight:600"

# How invisible characters are drawn. Anything else that prints nothing (other Unicode spaces,
# control and format characters such as U+200D) is drawn as its code point, e.g. ⟨U+200D⟩.
_MARKERS = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍"}
_INVISIBLE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}

AllowedSpecial = Literal["all", "none"] | Collection[str]


# --------------------------------------------------------------------------- the data step


@dataclass(frozen=True)
class TokenSpan:
    """One token of an encoded text.

    ``start``/``end`` are offsets into ``text.encode("utf-8")``; ``parts`` splits the token's
    bytes into runs of decodable text (``str``) and runs of bytes that are not valid UTF-8 on
    their own (``bytes``), e.g. the first half of an emoji.

    >>> span = token_spans("hi", "cl100k_base")[0]
    >>> span.id, span.bytes, span.parts, span.is_partial
    (6151, b'hi', ('hi',), False)
    """

    index: int
    id: int
    bytes: bytes
    start: int
    end: int
    special: bool
    parts: tuple[str | bytes, ...]
    chars: str  # the characters of the input this token's bytes belong to (whole or in part)

    @property
    def is_partial(self) -> bool:
        """True if some of the token's bytes are not a complete UTF-8 character on their own."""
        return any(isinstance(p, bytes) for p in self.parts)

    @property
    def display(self) -> str:
        """The token as shown: whitespace visible, stray bytes as hex, e.g. ``'·⟨EC⟩'``."""
        return "".join(_visible_part(p) for p in self.parts)

    def describe(self) -> str:
        """Multi-line description used for the hover tooltip."""
        n = len(self.bytes)
        lines = [f"token {self.index} · id {self.id} · {n} byte{'s' if n != 1 else ''}"]
        if self.special:
            lines.append("special token")
        lines.append(repr(self.bytes))
        if self.is_partial:
            what = ", ".join(f"{c} (U+{ord(c):04X})" for c in self.chars)
            lines.append(f"not valid UTF-8 alone; bytes of {what}")
        return "\n".join(lines)


def _split_utf8(data: bytes) -> tuple[str | bytes, ...]:
    """Split ``data`` into runs of valid UTF-8 text and runs of stray bytes.

    >>> _split_utf8(" 👋".encode()[:3])
    (' ', b'\\xf0\\x9f')
    """
    parts: list[str | bytes] = []
    i = 0
    while i < len(data):
        width = _utf8_width(data[i])
        piece: str | bytes
        try:
            piece = data[i : i + width].decode("utf-8") if width else b""
        except UnicodeDecodeError:  # truncated or malformed sequence
            piece = b""
        if not piece:
            piece, width = data[i : i + 1], 1
        if parts and type(parts[-1]) is type(piece):
            parts[-1] = parts[-1] + piece  # type: ignore[operator]
        else:
            parts.append(piece)
        i += width
    return tuple(parts)


def _utf8_width(lead: int) -> int:
    """Length of the UTF-8 sequence a lead byte announces; 0 if it cannot start one."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0  # a continuation byte (0x80-0xBF) or a byte UTF-8 never uses


def visible(text: str) -> str:
    """Make whitespace and invisible characters visible (plain-text rendering).

    >>> visible("a b\\tc\\n")
    'a·b→c↵\\n'
    """
    return "".join(_visible_char(c) for c in text)


def _visible_char(c: str) -> str:
    if c in _MARKERS:
        return _MARKERS[c] + ("\n" if c == "\n" else "")
    if unicodedata.category(c) in _INVISIBLE_CATEGORIES:
        return f"⟨U+{ord(c):04X}⟩"
    return c


def _visible_part(part: str | bytes) -> str:
    if isinstance(part, bytes):
        return "⟨" + " ".join(f"{b:02X}" for b in part) + "⟩"
    return visible(part)


# ------------------------------------------------------------------------- encodings


@dataclass(frozen=True)
class _Encoder:
    """What the visualizer needs from any tokenizer, whatever its API."""

    name: str
    encode: Callable[[str, AllowedSpecial], list[int]]
    token_bytes: Callable[[int], bytes]
    special_ids: frozenset[int]


def _valid_names() -> list[str]:
    import tiktoken

    return sorted(tiktoken.list_encoding_names())


def _resolve(encoding: Any) -> _Encoder:
    """Turn a name, a tiktoken Encoding or one of our tokenizers into an :class:`_Encoder`."""
    if isinstance(encoding, _Encoder):
        return encoding
    if isinstance(encoding, str):
        names = _valid_names()
        if encoding not in names:
            raise ValueError(f"unknown encoding {encoding!r}; valid names are: {', '.join(names)}")
        import tiktoken

        label = encoding
        encoding = tiktoken.get_encoding(encoding)
        return _from_tiktoken(encoding, label)
    if hasattr(encoding, "decode_single_token_bytes") and hasattr(encoding, "encode"):
        return _from_tiktoken(encoding, str(getattr(encoding, "name", type(encoding).__name__)))
    if isinstance(getattr(encoding, "vocab", None), Mapping) and hasattr(encoding, "encode"):
        return _from_vocab(encoding)
    raise TypeError(
        f"cannot show tokens of {encoding!r} (type {type(encoding).__name__}): pass an encoding "
        "name such as 'gpt2', a tiktoken.Encoding, or a tokenizer with `encode` and `vocab`"
    )


def _from_tiktoken(enc: Any, label: str) -> _Encoder:
    names = getattr(enc, "special_tokens_set", set())
    special_ids = frozenset(enc.encode_single_token(s) for s in names)

    def encode(text: str, allowed: AllowedSpecial) -> list[int]:
        # Special text that is not allowed is encoded as ordinary text instead of raising.
        return list(enc.encode(text, allowed_special=allowed, disallowed_special=()))

    return _Encoder(label, encode, enc.decode_single_token_bytes, special_ids)


def _from_vocab(tok: Any) -> _Encoder:
    vocab: Mapping[int, bytes] = tok.vocab
    specials: Mapping[str, int] = dict(getattr(tok, "special_tokens", None) or {})
    special_bytes = {i: s.encode("utf-8") for s, i in specials.items()}
    params = inspect.signature(tok.encode).parameters

    def encode(text: str, allowed: AllowedSpecial) -> list[int]:
        kwargs: dict[str, Any] = {}
        if "allowed_special" in params:
            kwargs["allowed_special"] = allowed if allowed == "all" else set(allowed)
        if "disallowed_special" in params:
            kwargs["disallowed_special"] = ()  # special text not allowed is ordinary text
        return list(tok.encode(text, **kwargs))

    def token_bytes(i: int) -> bytes:
        if i in special_bytes:
            return special_bytes[i]
        try:
            return vocab[i]
        except KeyError:
            raise ValueError(f"token id {i} is not in the tokenizer's vocab") from None

    name = str(getattr(tok, "name", None) or type(tok).__name__)
    return _Encoder(name, encode, token_bytes, frozenset(special_bytes))


def _check_allowed(allowed_special: Any) -> AllowedSpecial:
    if isinstance(allowed_special, str):
        if allowed_special in ("all", "none"):
            return "all" if allowed_special == "all" else frozenset()
        raise ValueError(
            f"allowed_special={allowed_special!r}: pass 'all', 'none' or a set of special-token "
            f"strings such as {{{allowed_special!r}}}"
        )
    return frozenset(allowed_special)


def token_spans(
    text: str, encoding: Any = "cl100k_base", *, allowed_special: AllowedSpecial = "all"
) -> list[TokenSpan]:
    """Encode ``text`` and describe every token: id, bytes, byte offsets, display parts.

    ``allowed_special`` lists the special tokens recognised in the text (``"all"``, ``"none"``
    or a set of strings); special text that is not allowed is encoded as ordinary text.
    The spans' bytes always reassemble ``text.encode("utf-8")`` exactly.

    >>> [s.display for s in token_spans("hi 👋", "cl100k_base")]
    ['hi', '·⟨F0 9F 91⟩', '⟨8B⟩']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.60}")
    enc = _resolve(encoding)
    ids = enc.encode(text, _check_allowed(allowed_special))
    data = text.encode("utf-8")
    # Byte offset where each character starts, to map a token's bytes back to characters.
    char_starts: list[int] = []
    pos = 0
    for c in text:
        char_starts.append(pos)
        pos += len(c.encode("utf-8"))

    spans: list[TokenSpan] = []
    pos = 0
    for index, token_id in enumerate(ids):
        raw = enc.token_bytes(token_id)
        end = pos + len(raw)
        if data[pos:end] != raw:
            raise ValueError(
                f"{enc.name}: token {index} (id {token_id}, {raw!r}) does not match the input "
                f"bytes at offset {pos} ({data[pos:end]!r}); only byte-level tokenizers whose "
                "tokens reassemble the text can be shown"
            )
        first, last = bisect_right(char_starts, pos) - 1, bisect_left(char_starts, end)
        spans.append(
            TokenSpan(
                index=index,
                id=token_id,
                bytes=raw,
                start=pos,
                end=end,
                special=token_id in enc.special_ids,
                parts=(raw.decode("utf-8"),) if token_id in enc.special_ids else _split_utf8(raw),
                chars=text[first:last],
            )
        )
        pos = end
    if pos != len(data):
        raise ValueError(
            f"{enc.name}: tokens cover {pos} of the text's {len(data)} bytes; only byte-level "
            "tokenizers whose tokens reassemble the text can be shown"
        )
    return spans


# ---------------------------------------------------------------------------- the view


@dataclass(frozen=True)
class TokenRow:
    """The tokens of one encoding."""

    name: str
    spans: tuple[TokenSpan, ...]


@dataclass(frozen=True)
class TokenView:
    """Token spans of one text under one or more encodings; renders as HTML or plain text.

    >>> view = show_tokens("a b", ["cl100k_base"], show_ids=True)
    >>> view.counts, str(view).splitlines()[1]
    ({'cl100k_base': 2}, '  a[64]│·b[293]')
    """

    text: str
    rows: tuple[TokenRow, ...]
    show_ids: bool = False

    @property
    def counts(self) -> dict[str, int]:
        """Number of tokens per encoding name."""
        return {row.name: len(row.spans) for row in self.rows}

    def _stats(self, row: TokenRow) -> str:
        n = len(row.spans)
        ratio = f", {len(self.text) / n:.2f} chars/token" if n else ""
        return f"{n} token{'s' if n != 1 else ''}{ratio}"

    def __repr__(self) -> str:
        lines = []
        for row in self.rows:
            lines.append(f"{row.name}: {self._stats(row)}")
            shown = "│".join(s.display + (f"[{s.id}]" if self.show_ids else "") for s in row.spans)
            lines.extend("  " + line for line in shown.split("\n"))
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_html(self) -> str:
        """Self-contained HTML: inline CSS scoped to a class derived from the content."""
        body = "".join(self._row_html(row) for row in self.rows)
        scope = "tkv-" + hashlib.sha1(body.encode("utf-8")).hexdigest()[:10]
        return f'<div class="{scope}">{_css(scope)}{body}</div>'

    def _row_html(self, row: TokenRow) -> str:
        esc = html.escape
        tokens = "".join(_span_html(s, self.show_ids) for s in row.spans) or (
            '<span class="empty">(no tokens)</span>'
        )
        return (
            f'<div class="row"><div class="hdr"><b>{esc(row.name)}</b> '
            f"<span>{esc(self._stats(row))}</span></div>"
            f'<div class="txt">{tokens}</div></div>'
        )


def _span_html(span: TokenSpan, show_ids: bool) -> str:
    esc = html.escape
    if span.special:
        style, cls = SPECIAL_STYLE, "tok special"
    else:
        style, cls = f"background:{PALETTE[span.index % len(PALETTE)]}", "tok"
    inner = []
    for part in span.parts:
        if isinstance(part, bytes):
            inner.append(f'<span class="raw">{esc(_visible_part(part))}</span>')
            continue
        for c in part:
            shown = _visible_char(c)
            if shown == c:
                inner.append(esc(c))
            elif c == "\n":
                inner.append('<span class="ws">↵</span><br>')
            else:
                inner.append(f'<span class="ws">{esc(shown)}</span>')
    if show_ids:
        inner.append(f'<span class="tid">{span.id}</span>')
    title = esc(span.describe())
    return f'<span class="{cls}" style="{style}" title="{title}">{"".join(inner)}</span>'


def _css(scope: str) -> str:
    s = "." + scope
    return (
        "<style>"
        f"{s}{{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
        "font-size:0.9em;line-height:1.9;margin:0.4em 0}"
        f"{s} .row{{margin:0 0 0.6em 0}}"
        f"{s} .hdr{{font-family:inherit;font-size:0.85em;opacity:0.8;margin-bottom:0.1em}}"
        f"{s} .txt{{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-all}}"
        f"{s} .tok{{color:{TEXT_COLOR};border-radius:3px;padding:0.15em 0;margin-right:1px;"
        "box-decoration-break:clone;-webkit-box-decoration-break:clone}"
        f"{s} .tok:hover{{outline:2px solid #555}}"
        f"{s} .tok.special{{color:{SPECIAL_COLOR};padding:0.15em 0.2em}}"
        f"{s} .ws{{color:{MARK_COLOR}}}"
        f"{s} .tok.special .ws{{color:{SPECIAL_ID_COLOR}}}"
        f"{s} .raw{{color:{RAW_COLOR};font-size:0.8em;font-style:italic;white-space:nowrap;"
        f"border-bottom:1px dashed {RAW_COLOR}}}"
        f"{s} .tid{{font-size:0.65em;vertical-align:sub;color:{ID_COLOR};margin-left:1px}}"
        f"{s} .tok.special .tid{{color:{SPECIAL_ID_COLOR}}}"
        f"{s} .empty{{opacity:0.6;font-style:italic}}"
        "</style>"
    )


def show_tokens(
    text: str,
    encodings: Any = ("gpt2", "cl100k_base", "o200k_base"),
    *,
    allowed_special: AllowedSpecial = "all",
    show_ids: bool = False,
) -> TokenView:
    """Show how each encoding splits ``text``: one coloured row per encoding.

    ``encodings`` is one encoding or a sequence of them (names, tiktoken encodings or our
    tokenizers). Hover a token for its id and bytes; ``show_ids=True`` prints ids inline.
    Special tokens in ``allowed_special`` (default ``"all"``) are recognised and shown dark;
    other special-token text is tokenized as ordinary text.

    >>> show_tokens("Hello world", "cl100k_base").counts
    {'cl100k_base': 2}
    """
    if isinstance(encodings, str) or not isinstance(encodings, Iterable):
        encodings = (encodings,)
    rows = []
    for enc in encodings:
        resolved = _resolve(enc)
        spans = token_spans(text, resolved, allowed_special=allowed_special)
        rows.append(TokenRow(resolved.name, tuple(spans)))
    if not rows:
        raise ValueError("encodings is empty: pass at least one encoding, e.g. 'cl100k_base'")
    return TokenView(text, tuple(rows), show_ids)
