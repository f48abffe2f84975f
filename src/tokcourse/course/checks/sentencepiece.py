"""SentencePiece (chapter 07): covered_characters, best_pair, decode_byte_pieces,
merge_by_score.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from tokcourse import bpe, sentencepiece_merge
from tokcourse import sentencepiece_bpe as spb
from tokcourse import sentencepiece_train as spt
from tokcourse.course.answers import tuple_of
from tokcourse.course.exercises import INT, STR, Case, Entry, Exercise, dict_of, list_of

# --- decode_byte_pieces -------------------------------------------------------------------------


def _decode_byte_pieces_cases() -> Iterator[Case]:
    def pieces(data: bytes) -> list[str]:
        return [spb.byte_piece(b) for b in data]

    for data in (
        b"",
        b"hi",
        "é!".encode(),
        "안녕".encode(),
        "🤗".encode(),
        b"\xe2\x82!",  # a truncated character: two bad bytes, two U+FFFD
        b"\xe2\x82",
        b"\x80",
        b"\xc3",
        b"\xf0\x9f\xa4",
        b"\xed\xa0\x80",  # a surrogate spelled in UTF-8: invalid
        b"\xc0\xaf",  # overlong
        "\ufffd".encode(),
        b"a\xffb",
    ):
        yield Case((pieces(data),))
    rng = random.Random(8)
    chunks = [b"a", b" ", "é".encode(), "€".encode(), "🤗".encode(), b"\x80", b"\xe2", b"\xf0\x9f"]
    for _ in range(40):
        yield Case((pieces(b"".join(rng.choice(chunks) for _ in range(rng.randrange(0, 7)))),))


def _decode_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, UnicodeDecodeError):
        return (
            "byte pieces can spell invalid UTF-8 (a model may emit half a character): "
            "sentencepiece puts U+FFFD where a byte is invalid instead of failing."
        )
    if not isinstance(got, str):
        return None
    data = bytes(spb.piece_byte(p) or 0 for p in case.args[0])
    if got == data.decode("utf-8", "replace"):
        return (
            "Python's errors='replace' swaps a whole broken sequence for one U+FFFD; "
            "sentencepiece checks one character at a time and puts one U+FFFD per invalid "
            "byte (b'\\xe2\\x82!' gives '\ufffd\ufffd!')."
        )
    if got == data.decode("utf-8", "ignore"):
        return "invalid bytes vanished (errors='ignore'): sentencepiece shows each as U+FFFD."
    if got == "".join(bytes([b]).decode("utf-8", "replace") for b in data):
        return (
            "each byte was decoded on its own: join the bytes first, one character spans several."
        )
    return None


# --- merge_by_score -----------------------------------------------------------------------------

_TIE = {"aa": -1.0}
# after the first 'ab' merge, 'aba' beats the second 'ab': ['aba', 'b'], not ['ab', 'ab']
_BLOCK = {"ab": -1.0, "aba": 0.0, "bab": 0.0}


def _merge_cases() -> Iterator[Case]:
    yield from (
        Case(([], {"ab": 0.0})),
        Case((["a"], {"ab": 0.0})),
        Case((list("ab"), {})),
        Case((list("ab"), {"ab": -3.0})),
        Case((list("aaa"), dict(_TIE)), rule="the leftmost such pair on a tie"),
        Case((list("abc"), {"ab": -1.0, "bc": -1.0})),
        Case((list("abc"), {"ab": -2.0, "bc": -1.0})),  # highest score, not first in the text
        Case((list("abc"), {"bc": -2.0, "ab": -1.0})),
        Case((list("abab"), dict(_BLOCK))),  # one merge at a time, then look again
        Case((list("▁aab"), {"aa": -1.0, "ab": -2.0, "▁aa": -3.0})),
        Case((list("▁▁▁▁▁"), {"▁▁": -1e9, "▁▁▁▁": -1e9})),
    )
    rng = random.Random(9)
    vocab = ["ab", "ba", "aa", "bb", "abb", "aab", "bab", "abab", "▁a", "▁ab", "▁b", "bba"]
    for _ in range(60):
        chosen = rng.sample(vocab, rng.randrange(1, len(vocab)))
        scores = {p: float(-rng.randrange(0, 4)) for p in chosen}  # few values: many ties
        text = "▁" * rng.randrange(0, 2) + "".join(
            rng.choice("ab") for _ in range(rng.randrange(0, 12))
        )
        yield Case((list(text), scores))


def _merge_variant(symbols: list[str], scores: dict, *, right: bool = False, low: bool = False,
                   every: bool = False) -> list[str]:  # fmt: skip
    """The classic wrong merge loops: ties to the right, lowest score, every occurrence at once."""
    symbols = list(symbols)
    while True:
        pairs = enumerate(pairwise(symbols))
        found = [(scores[a + b], i) for i, (a, b) in pairs if a + b in scores]
        if not found:
            return symbols
        pick = min if low else max
        best = pick(s for s, _ in found)
        where = [i for s, i in found if s == best]
        if every:  # chapter 02's merge: every occurrence of the pair, left to right
            a, b = symbols[where[0]], symbols[where[0] + 1]
            symbols = bpe.merge(symbols, (a, b), a + b)
            continue
        i = where[-1] if right else where[0]
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]


def _merge_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, list):
        return None
    symbols, scores = case.args
    if got == _merge_variant(symbols, scores, right=True):
        return (
            "on a tie (two pairs with the same score) sentencepiece merges the leftmost pair: "
            "keep the first best you find (compare with >, not >=)."
        )
    if got == _merge_variant(symbols, scores, every=True):
        return (
            "merge one pair at a time, then look at the new neighbours again: after one "
            "merge a better pair may appear that uses a symbol of the next occurrence."
        )
    low = got == _merge_variant(symbols, scores, low=True)
    one_pass = got == _one_pass(symbols, scores)
    if low and one_pass:  # this input cannot tell the two apart: name what both get wrong
        return (
            "the highest score wins, wherever the pair is: every step merges the pair with "
            "the highest score in the whole list (-1.0 before -3.0), not the first mergeable "
            "pair from the left and not the lowest score."
        )
    if low:
        return (
            "the highest score wins: scores are negative merge orders, so -1.0 is merged "
            "before -3.0 (take the max, not the min)."
        )
    if one_pass:
        return (
            "one pass from left to right is not enough: after every merge look at all the "
            "pairs again and merge the one with the highest score, wherever the pair is."
        )
    return None


def _one_pass(symbols: list[str], scores: dict) -> list[str]:
    """The greedy wrong loop: merge into the previous symbol whenever the pair is a piece."""
    out: list[str] = []
    for s in symbols:
        if out and out[-1] + s in scores:
            out[-1] += s
        else:
            out.append(s)
    return out


# --- covered_characters ------------------------------------------------------------------------

#: Small counts, where a share and the coverage are never within a float32 step of each other
#: unless they are equal, so plain Python floats give sentencepiece's answer.
_COVERAGES = (0.5, 0.6, 0.75, 0.8, 0.9, 0.98, 0.99, 1.0)


def _covered_cases() -> Iterator[Case]:
    yield from (
        Case(({"a": 1}, 0.98)),
        Case(({"c": 1, "b": 3, "a": 6}, 0.9)),  # 'b' reaches 0.9 exactly: 'c' is not needed
        Case(({"a": 3, "b": 1}, 0.75)),
        Case(({"b": 2, "a": 2}, 0.5), rule="on equal counts the smaller character first"),
        Case(({"z": 5, "y": 5, "x": 5, "▁": 40, "e": 20}, 0.9)),  # the tie crosses the line
        Case(({"a": 96, "b": 1, "c": 1, "d": 1, "e": 1}, 0.98)),
        Case(({"a": 50, "b": 30, "c": 20}, 1.0)),
        Case(({"a": 90, "b": 5, "c": 3, "d": 2}, 0.98)),
        Case(({"한": 4, "a": 4, "é": 4, "🤗": 4, " ": 4}, 0.6)),
    )
    rng = random.Random(11)
    alphabet = "abcdexyz▁é안🤗"
    for _ in range(60):
        chars = rng.sample(alphabet, rng.randrange(1, len(alphabet)))
        counts = {c: rng.choice((1, 1, 2, 3, 5, 8, 13, 40)) for c in chars}
        yield Case((counts, rng.choice(_COVERAGES)))


def _by_count_only(counts: dict, coverage: float) -> dict:
    """Most frequent first, ties in the dict's order (no code point tie-break)."""
    total, kept, covered = sum(counts.values()), {}, 0
    for char, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        if covered / total >= coverage:
            break
        kept[char] = n
        covered += n
    return kept


def _covered_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, dict):
        return None
    counts, coverage = case.args
    distinct = sorted(counts, key=lambda c: (-counts[c], c))
    if set(got) == set(distinct[: math.ceil(coverage * len(counts))]) != set(expected):
        return (
            "the coverage is a share of the occurrences (every time a character appears), not "
            "of the distinct characters: a character seen 96 times weighs 96 times as much."
        )
    if len(got) == len(expected) + 1 and set(expected) < set(got):
        return (
            "one character too many: stop as soon as the covered share reaches the coverage "
            "(covered / total >= coverage), before adding the next character."
        )
    if len(got) + 1 == len(expected) and set(got) < set(expected):
        return (
            "one character too few: the character whose count makes the share reach the "
            "coverage is kept. Test the share before adding each character."
        )
    if len(got) == len(expected) and set(got) == set(_by_count_only(counts, coverage)):
        return (
            "on equal counts sentencepiece takes the smaller character first (code point "
            "order): sort by (-count, character)."
        )
    return None


# --- best_pair ----------------------------------------------------------------------------------


def _best_pair_cases() -> Iterator[Case]:
    yield from (
        Case(({("a", "b"): 1},)),
        Case(({("a", "b"): 2, ("b", "c"): 3},)),
        Case(({("a", "b"): 3, ("b", "c"): 3},), rule="then the smaller piece"),
        Case(({("c", "d"): 3, ("a", "b"): 3},)),  # ... wherever it is in the dict
        Case(({("ab", "c"): 4, ("x", "y"): 4},), rule="on a tie, the shorter piece"),
        Case(({("é", "é"): 2, ("a", "bc"): 2},)),  # 'éé': two characters, four bytes
        Case(({("ab", "d"): 2, ("a", "ce"): 2},)),  # the piece 'abd' < 'ace', the pair is not
        Case(({("▁", "t"): 5, ("t", "h"): 5, ("h", "e"): 4},)),
        Case(({("z", "z"): 0, ("▁▁", "▁"): 0, ("a", "a"): 0},)),  # all 0: still the shortest
    )
    rng = random.Random(12)
    parts = ["a", "b", "c", "é", "▁", "ab", "▁t", "he", "안", "🤗", "xyz"]
    for _ in range(60):
        freqs: dict[tuple[str, str], int] = {}
        for _ in range(rng.randrange(1, 7)):
            pair = (rng.choice(parts), rng.choice(parts))
            if all(a + b != pair[0] + pair[1] for a, b in freqs):  # one pair per piece
                freqs[pair] = rng.randrange(0, 4)
        yield Case((freqs,))


def _best_pair_hint(case: Case, expected: Any, got: Any) -> str | None:
    freqs = case.args[0]
    if not isinstance(got, tuple) or got not in freqs or got == expected:
        return None
    if freqs[got] < freqs[expected]:
        return "the highest frequency wins first; length and order only break ties."
    a, b = got[0] + got[1], expected[0] + expected[1]
    if len(a.encode()) < len(b.encode()) and len(a) >= len(b):
        return (
            "length in characters (code points), not UTF-8 bytes: 'éé' is two characters "
            "(sentencepiece's char_len), though it is four bytes."
        )
    if len(a) > len(b):
        return "on equal frequency the *shorter* piece (fewer characters) goes first."
    if len(a) == len(b) and got < expected and a > b:
        return (
            "compare the pieces the pairs make (left + right), not the pairs: ('ab', 'd') "
            "makes 'abd', which comes before 'ace'."
        )
    if len(a) == len(b) and a > b:
        return (
            "on equal frequency and length, the *smaller* piece in code point order goes first "
            "(min, not max; not the first one in the dict)."
        )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "decode_byte_pieces": Entry(
        "decode_byte_pieces(pieces) -> text",
        lambda: Exercise(
            "decode_byte_pieces",
            spb.decode_byte_pieces,
            _decode_byte_pieces_cases,
            returns=STR,
            hints=(_decode_hint,),
        ),
    ),
    "merge_by_score": Entry(
        "merge_by_score(symbols, scores) -> merged symbols",
        lambda: Exercise(
            "merge_by_score",
            spb.merge_by_score,
            _merge_cases,
            normalize=list,
            returns=list_of(STR),
            hints=(_merge_hint,),
        ),
    ),
    "covered_characters": Entry(
        "covered_characters(counts, coverage) -> {character: count} kept",
        lambda: Exercise(
            "covered_characters",
            spt.covered_characters,
            _covered_cases,
            normalize=dict,
            returns=dict_of(STR, INT),
            hints=(_covered_hint,),
        ),
    ),
    "best_pair": Entry(
        "best_pair(freqs) -> the pair merged next",
        lambda: Exercise(
            "best_pair",
            sentencepiece_merge.best_pair,
            _best_pair_cases,
            normalize=tuple,
            returns=tuple_of(STR, STR),
            hints=(_best_pair_hint,),
        ),
    ),
}
