"""Build-time data of the playground's BERT uncased row (``_static/playground/wordpiece.js``).

``wordpiece.js`` ports :class:`tokcourse.wordpiece.WordPiece` (chapter 11) to the browser. It
needs two things, written here into one data file, ``data/bert_uncased.js``, that calls
``tokcoursePlayground.addData("bert_uncased", {...})``:

1. **The vocabulary**: all-MiniLM-L6-v2's ``vocab.txt`` (BERT uncased, 30,522 entries), the
   hash-verified asset ``minilm_vocab`` the chapter reads, parsed exactly as
   :func:`tokcourse.wordpiece.load_vocab` parses it, one token per line, id = line number.
   A file that would not give ids 0..n-1 without holes (a token on two lines, a line that is
   not UTF-8, an empty token, no ``[UNK]``) is refused.
2. **Every Unicode table the normalizer and the pre-tokenizer ask**, read off the Python
   package's own functions (which give ``tokenizers``' Rust answers, not Python's nor the
   browser's): control characters (dropped), white space, CJK blocks, punctuation, category Mn
   (stripped accents), canonical decompositions (Hangul syllables are computed), canonical
   combining classes, lower case, and the package's overrides (characters the crate sees
   differently from Python's tables, see ``_overrides`` in ``tokcourse/wordpiece_tables.py``).
   Compactly: hex ranges ``A-B`` as ``tokcourse.unicode_pin.parse_ranges`` reads them, and
   only the code points that are not identity.

The lead's ``tokcourse_playground.write_data`` calls :func:`scripts`.
"""

from __future__ import annotations

import functools
import json
import unicodedata

ASSET = "minilm_vocab"
"""The hash-verified asset (``tokcourse.course.data.sources``) chapter 11 tokenizes with."""

FILE = "bert_uncased"
"""The data file's name (``data/bert_uncased.js``) and the tokenizer's name in the playground."""

SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
"""BERT's special tokens, matched in the raw text before normalizing (as WordPiece does)."""

_HANGUL = (0xAC00, 0xD7A3)  # syllables: wordpiece.js decomposes them arithmetically
_RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)  # what Rust's trim_end removes (tokcourse.wordpiece.WHITESPACE)


def vocab_tokens(data: bytes | None = None) -> list[str]:
    """The vocabulary in id order, from the verified asset (or ``data``, a ``vocab.txt``).

    Parsed as ``load_vocab`` parses it (lines split at ``"\\n"`` only, Rust white space trimmed
    at the end of a line); refused unless every id 0..n-1 has its own token.

    >>> vocab_tokens()[100], len(vocab_tokens())
    ('[UNK]', 30522)
    """
    if data is None:
        from tokcourse.course.data.store import path

        data = path(ASSET).read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # a final newline ends the last line, it starts none
    tokens: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        try:
            token = line.decode("utf-8").rstrip(_RUST_WHITESPACE)
        except UnicodeDecodeError as e:
            raise ValueError(f"{ASSET}: line {number} is not UTF-8 ({e.reason})") from None
        if not token:
            raise ValueError(f"{ASSET}: line {number} is empty")
        if token in seen:
            raise ValueError(
                f"{ASSET}: line {number} repeats {token!r} of line {seen[token] + 1} "
                "(its first id would be a hole)"
            )
        seen[token] = len(tokens)
        tokens.append(token)
    if "[UNK]" not in seen:
        raise ValueError(f"{ASSET}: no [UNK] token")
    return tokens


# ---------------------------------------------------------------------------- Unicode tables


def _code_points() -> range:
    return range(0x110000)


def _ranges(members) -> str:
    """Sorted code points as hex ranges ``"41-5A 2B"`` (what ``parse_ranges`` reads)."""
    out: list[list[int]] = []
    for c in members:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return " ".join(f"{a:X}" if a == b else f"{a:X}-{b:X}" for a, b in out)


def _runs(mapping: dict[int, int]) -> str:
    """``{c: c + d}`` as ``"A-B/S:D"`` runs (every S-th code point from A to B moves by D;
    ``/1`` is left out, a single code point is ``A:D``), D in hex with its sign."""
    items = sorted(mapping.items())
    out: list[str] = []
    i = 0
    while i < len(items):
        a, target = items[i]
        delta = target - a
        step, j = 0, i + 1
        if j < len(items) and items[j][1] - items[j][0] == delta and items[j][0] - a <= 2:
            step = items[j][0] - a
            while (
                j < len(items)
                and items[j][0] == items[j - 1][0] + step
                and items[j][1] - items[j][0] == delta
            ):
                j += 1
        b = items[j - 1][0]
        sign = "-" if delta < 0 else "+"
        span = f"{a:X}" if a == b else f"{a:X}-{b:X}" + (f"/{step}" if step != 1 else "")
        out.append(f"{span}:{sign}{abs(delta):X}")
        i = j
    return " ".join(out)


def _hex(text: str) -> str:
    return ".".join(f"{ord(ch):X}" for ch in text)


@functools.cache
def unicode_tables() -> dict[str, str]:
    """The normalizer's and pre-tokenizer's character tables, from ``tokcourse.wordpiece``.

    Keys (hex code points; ``A-B`` a range):

    - ``drop``: removed by the cleaning (``is_control``);  ``white``: white space
      (``is_whitespace``; the cleaning makes it ``" "`` unless it is a control, the
      pre-tokenizer splits at it);  ``cjk``: padded with spaces (``is_cjk``);  ``punct``: cut
      off by the pre-tokenizer (``is_punctuation``);
    - ``kept`` / ``mapped``: the overrides, characters the Rust crates see differently from
      Python's tables: ``kept`` stay as they are, ``mapped`` is ``"C>X.Y"`` (C becomes X Y,
      ``"C>"`` nothing); either way no neighbour is decomposed with them (but a deleted mark
      is written into ``mn`` instead: see below);
    - ``decomp``: ``"C>X.Y.Z"`` full canonical decomposition (NFD of C alone), Hangul syllables
      left out;  ``ccc``: ``"A-B:n"`` canonical combining class (decimal n), nonzero only;
    - ``mn``: category Mn (what accent stripping drops after NFD);
    - ``lower``: ``"A-B/S:+D"`` one-character lower case (``str.lower``); ``lower_long``:
      ``"C>X.Y"`` where the lower case is longer.
    """
    from tokcourse import wordpiece as wp

    overrides = wp._overrides()
    surrogate = range(0xD800, 0xE000)
    drop, white, cjk, punct, mn, kept = [], [], [], [], [], []
    mapped, decomp, lower_long = [], [], []
    ccc: dict[int, int] = {}
    lower: dict[int, int] = {}
    for c in _code_points():
        if c in surrogate:
            continue
        ch = chr(c)
        fixed = overrides.get(ch)
        # An override that deletes a mark (U+1734, class 9) is the crate's Mn: it strips it
        # after NFD, and before that NFD sorts it among its neighbours. Written as Mn, not as
        # an override (as normalize() does: wordpiece._crate_marks).
        crate_mn = fixed == "" and unicodedata.combining(ch) != 0
        if crate_mn:
            fixed = None
        if fixed == ch:
            kept.append(c)
        elif fixed is not None:
            mapped.append(f"{c:X}>{_hex(fixed)}")
        if wp.is_control(ch):
            drop.append(c)
        if wp.is_whitespace(ch):
            white.append(c)
        if wp.is_cjk(ch):
            cjk.append(c)
        if wp.is_punctuation(ch):
            punct.append(c)
        if unicodedata.category(ch) == "Mn" or crate_mn:
            mn.append(c)
        if n := unicodedata.combining(ch):
            ccc[c] = n
        decomposed = unicodedata.normalize("NFD", ch)
        if decomposed != ch and not _HANGUL[0] <= c <= _HANGUL[1]:
            decomp.append(f"{c:X}>{_hex(decomposed)}")
        low = ch.lower()
        if len(low) == 1 and low != ch:
            lower[c] = ord(low)
        elif len(low) > 1:
            lower_long.append(f"{c:X}>{_hex(low)}")
    ccc_runs = []
    for c in sorted(ccc):
        if ccc_runs and ccc_runs[-1][1] == c - 1 and ccc_runs[-1][2] == ccc[c]:
            ccc_runs[-1][1] = c
        else:
            ccc_runs.append([c, c, ccc[c]])
    return {
        "unicode": unicodedata.unidata_version,
        "drop": _ranges(drop),
        "white": _ranges(white),
        "cjk": _ranges(cjk),
        "punct": _ranges(punct),
        "kept": _ranges(kept),
        "mapped": " ".join(mapped),
        "decomp": " ".join(decomp),
        "ccc": " ".join((f"{a:X}" if a == b else f"{a:X}-{b:X}") + f":{n}" for a, b, n in ccc_runs),
        "mn": _ranges(mn),
        "lower": _runs(lower),
        "lower_long": " ".join(lower_long),
    }


def data(tokens: list[str] | None = None) -> dict:
    """The object ``data/bert_uncased.js`` hands to ``addData``."""
    tokens = vocab_tokens() if tokens is None else tokens
    bad = [t for t in tokens if "\n" in t]
    if bad:  # cannot come from a vocab.txt; the joined form below depends on it
        raise ValueError(f"{ASSET}: token {bad[0]!r} holds a line break")
    return {
        "name": FILE,
        "asset": ASSET,
        "size": len(tokens),
        "unk": "[UNK]",
        "prefix": "##",
        "max_chars": 100,
        "special": [t for t in SPECIAL if t in tokens],
        "vocab": "\n".join(tokens),
        "tables": unicode_tables(),
    }


def script(tokens: list[str] | None = None) -> str:
    """The text of ``data/bert_uncased.js``: one ``addData`` call, ASCII only.

    >>> script()[:45]
    'tokcoursePlayground.addData("bert_uncased", {'
    """
    body = json.dumps(data(tokens), separators=(",", ":"))
    return f"tokcoursePlayground.addData({json.dumps(FILE)}, {body});\n"


def scripts() -> dict[str, str]:
    """``{file stem: text}`` of the data files this row needs (for ``write_data``)."""
    return {FILE: script()}
