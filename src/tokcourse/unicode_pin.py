"""Split text with the Unicode tables tiktoken uses, whatever ``regex`` version is installed.

``\\p{L}`` ("is a letter") depends on the Unicode version the regex engine was built with.
tiktoken 0.14's Rust engine knows Unicode 16.0; the Python ``regex`` module we split with is
updated more often and may know characters assigned later (a new script's letters). Fed to
the same pattern, such a character is a letter to us and an unassigned code point to tiktoken,
and the split differs. (17,810 code points did with ``regex`` 2026.11.15, plus one character,
U+0295 ʕ, whose category moved from Ll to Lo.)

So before splitting we show the pattern each such character as a stand-in with its Unicode
16.0 properties, then cut the *original* text at the same positions:

- characters unassigned in 16.0 become U+FDD0, a noncharacter: unassigned in every version;
- U+0295 ʕ becomes U+0138 ĸ, like 16.0's ʕ a lower-case letter without an upper case.

The table below was read off tiktoken itself; ``tests/test_patterns.py`` re-derives it, code
point by code point, so it cannot silently go stale when ``regex`` or tiktoken is upgraded.

>>> pin_unicode("a\\U000323b0b") == "a\\ufdd0b"   # U+323B0: CJK Extension J, Unicode 17.0
True
"""

from __future__ import annotations

import functools

import regex

__all__ = ["UNICODE_VERSION", "parse_ranges", "pin_unicode"]

UNICODE_VERSION = "16.0"
"""The Unicode version of tiktoken 0.14's regex engine, which our splits reproduce."""

# Code points unassigned in Unicode 16.0 but assigned by the installed `regex` (hex ranges).
_UNASSIGNED_IN_16 = """
0558 058B-058C 05C8-05C9 088F 0B53-0B54 0C5C 0CDC 1ACF-1AF0 208F 209D-209F 20C1-20C4 2B96
2E60-2E63 A7CE-A7CF A7D2 A7D4 A7DD A7E2 A7F1 AB6C-AB6D FBC3-FBD2 FD90-FD91 FDC8-FDCE
107BB-107BF 10940-10959 10EC5-10EC7 10EC9-10EEE 10EF0-10EFB 11B0A 11B60-11B67 11DB0-11DDB
11DE0-11DE9 11DF0-11DF1 1246F 12475-1247F 12550-12686 16EA0-16EB8 16EBB-16ED3 16FF2-16FF6
187F8-187FF 18CD6-18CDA 18D09-18D20 18D80-18DF2 18E00-19191 191A0-191D2 1B123-1B128 1B168
1CCFA-1CCFC 1CEBA-1CED0 1CED2-1CED4 1CEDD-1CEFD 1D127-1D128 1D1EB-1D1FF 1D250-1D281 1D6A6
1DB00-1DB1C 1DF1F-1DF24 1DF2B-1DF81 1DF90-1DF96 1DFCD-1DFFF 1E6C0-1E6DE 1E6E0-1E6F5
1E6FE-1E6FF 1F1AE 1F6D8-1F6D9 1F777-1F77A 1F7DA-1F7DB 1F7F1-1F7FF 1F8D0-1F8D8 1FA54-1FA57
1FA8A-1FA8E 1FAC8 1FACC-1FACD 1FADD 1FAEA-1FAEB 1FAEF 1FAF9-1FAFA 1FBFA 2B73A-2B73F 2B81E
2CEA2-2CEAD 323B0-33479 3D000-3FC3F
"""
_UNASSIGNED_STAND_IN = "\ufdd0"

# Characters whose category changed after 16.0: {character: stand-in with the 16.0 category}.
_RECATEGORIZED = {"\u0295": "\u0138"}  # ʕ was Ll (now Lo); ĸ is a caseless Ll


def parse_ranges(table: str) -> list[tuple[int, int]]:
    """Code point ranges written as hex ``A-B`` or ``A``, separated by white space.

    >>> parse_ranges("41-5A 2B")
    [(65, 90), (43, 43)]
    """
    out = []
    for item in table.split():
        first, _, last = item.partition("-")
        out.append((int(first, 16), int(last or first, 16)))
    return out


@functools.lru_cache(maxsize=1)
def _finder() -> regex.Pattern:
    """One character class matching every character that needs a stand-in (built on first use)."""
    parts = [f"\\U{a:08x}-\\U{b:08x}" for a, b in parse_ranges(_UNASSIGNED_IN_16)]
    parts += [f"\\U{ord(ch):08x}" for ch in _RECATEGORIZED]
    return regex.compile("[" + "".join(parts) + "]")


def _stand_in(match: regex.Match) -> str:
    return _RECATEGORIZED.get(match.group(), _UNASSIGNED_STAND_IN)


def pin_unicode(text: str) -> str:
    """``text`` with every character replaced by a stand-in that has its Unicode 16.0 properties.

    One character in, one character out, so positions in the result are positions in ``text``.
    Most text has no such character and comes back unchanged (and fast).

    >>> pin_unicode("plain text")
    'plain text'
    >>> pin_unicode("\\u0295")
    'ĸ'
    """
    finder = _finder()
    if finder.search(text) is None:
        return text
    return finder.sub(_stand_in, text)


def unassigned_ranges() -> list[tuple[int, int]]:
    """The table as ``(first, last)`` code point ranges (for tests and the curious).

    >>> unassigned_ranges()[0]
    (1368, 1368)
    """
    return parse_ranges(_UNASSIGNED_IN_16)
