"""Where Hugging Face ``tokenizers`` sees characters differently from Python (chapter 11).

BERT's normalizer and pre-tokenizer in ``tokenizers`` 0.23 classify characters with Rust crates
whose Unicode tables are not Python's. :mod:`tokcourse.wordpiece` follows tokenizers, and takes
the difference from here, as data read off the library itself: the characters it keeps although
Python would drop them (``_KEPT``), the ones it maps elsewhere (``_MAPPED``), and the ones that
are punctuation to one side only (``_NOT_PUNCT``, ``_EXTRA_PUNCT``).
"""

from __future__ import annotations

import functools

from tokcourse.unicode_pin import parse_ranges

# ``tokenizers`` asks the crate ``unicode_categories`` (old Unicode tables) whether a character
# is a control, a nonspacing mark or punctuation, ``unicode-normalization-alignments`` for NFD,
# and Rust's std for whitespace and lower case (the tables of the compiler that built the wheel:
# the installed 0.23.3 wheel lower-cases letters of Unicode 16 and 17). Python 3.11-3.13 know
# Unicode 14.0-15.1. The tables below were read off tokenizers 0.23.3 itself, code point by code
# point, under each of those Pythons; ``tests/test_wordpiece_parity.py`` re-derives them.
# Hex ranges of characters the normalizer leaves as they are although Python's tables would
# drop them (marks and format characters the crate does not know):
_KEPT = """
07FD 0890-0891 0898-089F 08CA-08E2 09FE 0AFA-0AFF 0B55 0C04 0C3C 0D00 0D3B-0D3C 0D81 0EBA 0ECE
180F 1885-1886 1ABF-1ACE 1DF6-1DFB A82C A8C5 A8FF A9BD 10D24-10D27 10EAB-10EAC 10EFD-10EFF
10F46-10F50 10F82-10F85 11070 11073-11074 110C2 110CD 111C9 111CF 1123E 11241 1133B 11438-1143F
11442-11444 11446 1145E 1182F-11837 11839-1183A 11938 1193B-1193C 1193E 11943 119D4-119D7
119DA-119DB 119E0 11A01-11A0A 11A33-11A38 11A3B-11A3E 11A47 11A51-11A56 11A59-11A5B 11A8A-11A96
11A98-11A99 11C30-11C36 11C38-11C3D 11C3F 11C92-11CA7 11CAA-11CB0 11CB2-11CB3 11CB5-11CB6
11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 11D90-11D91 11D95 11D97 11EF3-11EF4 11F00-11F01
11F36-11F3A 11F40 11F42 13430-13440 13447-13455 16F4F 16FE4 1CF00-1CF2D 1CF30-1CF46 1E000-1E006
1E008-1E018 1E01B-1E021 1E023-1E024 1E026-1E02A 1E08F 1E130-1E136 1E2AE 1E2EC-1E2EF 1E4EC-1E4EF
1E944-1E94A
"""
_NOT_PUNCT = """
061D 09FD 0A76 0C77 0C84 1B7D-1B7E 2E43-2E4F 2E52-2E5D 10EAD 10F55-10F59 10F86-10F89
1144B-1144F 1145A-1145B 1145D 11660-1166C 116B9 1183B 11944-11946 119E2 11A3F-11A46 11A9A-11A9C
11A9E-11AA2 11B00-11B09 11C41-11C45 11C70-11C71 11EF7-11EF8 11F43-11F4F 11FFF 12FF1-12FF2
16E97-16E9A 16FE2 1E95E-1E95F
"""
_MAPPED = """
1734> 1C89>1C8A A7CB>0264 A7CC>A7CD A7CE>A7CF A7D2>A7D3 A7D4>A7D5 A7DA>A7DB A7DC>019B
10D50-10D65>10D70 16EA0-16EB8>16EBB
"""
# (``_MAPPED``: ``A-B>C`` maps A..B onto C.., ``A>`` deletes A: Rust lower-cases letters of
# Unicode 16 and 17 that Python does not know yet; U+1734 is a Mn to it: :func:`_crate_marks`.)
_EXTRA_PUNCT = "\U000111c9\u166d"  # punctuation to the crate, no longer P* to Python


@functools.cache
def _overrides() -> dict[str, str]:
    """{character: what BERT's normalizer makes of it} where Python's tables disagree."""
    table = {chr(c): chr(c) for a, b in parse_ranges(_KEPT) for c in range(a, b + 1)}
    for item in _MAPPED.split():
        source, _, target = item.partition(">")
        ((a, b),) = parse_ranges(source)
        for c in range(a, b + 1):
            table[chr(c)] = chr(int(target, 16) + c - a) if target else ""
    return table


@functools.cache
def _not_punctuation() -> frozenset[str]:
    return frozenset(chr(c) for a, b in parse_ranges(_NOT_PUNCT) for c in range(a, b + 1))
