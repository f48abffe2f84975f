"""Checks for the exercises: ``merge = check.merge(merge)`` in a chapter's check cell.

Each check runs the student's function against the package's reference on curated edge cases
plus seeded random inputs, prints a verdict (with the smallest failing input, expected vs got,
and a hint when something is wrong), and returns the function the chapter should use from then
on: the student's if it passed, else the reference.

>>> from tokcourse import check
>>> from tokcourse.bpe import merge
>>> check.merge(merge) is merge  # doctest: +ELLIPSIS
✅ merge: correct on all ... test inputs (edge cases and random ones).
   The chapter uses your merge from here on.
True

``check.show_solution("merge")`` prints the reference as standalone code (for Colab, where the
book's solution dropdowns show as plain text).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from tokcourse import bpe, patterns, special, tokenizer, utf8
from tokcourse.exercises import Case, CheckResult, Exercise, Raised, run_check, show_solution

__all__ = [
    "EXERCISE_NAMES",
    "build_vocab",
    "byte_kind",
    "decode",
    "encode",
    "encode_ordinary",
    "encode_with_specials",
    "exercise",
    "get_stats",
    "is_canonical",
    "merge",
    "result",
    "show_solution",
    "split",
    "train",
    "utf8_decode",
    "utf8_encode",
]

_last: dict[str, CheckResult] = {}


def result(name: str) -> CheckResult:
    """The full result of the last check of exercise ``name`` (for tests and curious students)."""
    return _last[name]


def _run(name: str, fn: Any) -> Callable:
    outcome = run_check(exercise(name), fn)
    _last[name] = outcome
    return outcome.fn


# --- get_stats ---------------------------------------------------------------------------------


def _get_stats_cases() -> Iterator[Case]:
    for ids in ([], [7], [7, 7], [7, 7, 7], [1, 2, 3, 1, 2], [1, 2, 1, 2, 1], [300, 5, 300, 5]):
        yield Case((ids,))
    rng = random.Random(1)
    for _ in range(80):
        n = rng.randrange(0, 30)
        alphabet = rng.choice([3, 6, 600])
        yield Case(([rng.randrange(alphabet) for _ in range(n)],))


def _get_stats_hint_missing_pair(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, dict) and sum(got.values()) == sum(expected.values()) - 1:
        return (
            "one pair is missing: a list of n ids has n - 1 neighbouring pairs, "
            "(ids[0], ids[1]) up to (ids[-2], ids[-1]); zip(ids, ids[1:]) walks them all."
        )
    return None


def _get_stats_hint_short(case: Case, expected: Any, got: Any) -> str | None:
    if len(case.args[0]) < 2 and isinstance(got, BaseException):
        return "a list with fewer than two ids has no pairs at all: return an empty dict."
    return None


def _get_stats_hint_counts(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, dict) and set(got) == set(expected):
        return "the right pairs, wrong counts: add 1 each time a pair occurs (overlaps count too)."
    return None


# --- merge -------------------------------------------------------------------------------------


def _merge_cases() -> Iterator[Case]:
    yield from (
        Case(([], (1, 2), 9)),
        Case(([1], (1, 2), 9)),
        Case(([1, 2], (1, 2), 9)),
        Case(([2, 1], (1, 2), 9)),
        Case(([3, 1], (1, 2), 9)),  # the last id starts the pair: no ids[i + 1] to compare
        Case(([5, 5, 5], (5, 5), 6)),
        Case(([5, 5, 5, 5], (5, 5), 6)),
        Case(([1, 2, 3, 1, 2], (1, 2), 4)),
        Case(([1, 2, 2, 1], (2, 1), 256)),
    )
    rng = random.Random(2)
    for _ in range(100):
        ids = [rng.randrange(3) for _ in range(rng.randrange(0, 25))]
        yield Case((ids, (rng.randrange(3), rng.randrange(3)), 256 + rng.randrange(10)))


def _merge_hint_bounds(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, IndexError):
        return (
            "at the last position there is no ids[i + 1]: test i + 1 < len(ids) before "
            "comparing the pair."
        )
    return None


def _merge_hint_overlap(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, _ = case.args
    if pair[0] == pair[1] and isinstance(got, list):
        return (
            f"overlapping occurrences: in {ids} the pair {pair} overlaps itself, and only the "
            "leftmost of two overlapping pairs can merge. After a merge, jump past both ids "
            "(i += 2); otherwise move on by one."
        )
    return None


# --- utf8_encode -------------------------------------------------------------------------------

# The edges of the four forms, characters from the chapter, the last code point.
_UTF8_EDGES = (0, 0x41, 0x7F, 0x80, 0xE9, 0x7FF, 0x800, 0x20AC, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF)
_UTF8_EDGES += (0x10000, 0x1F917, 0x10FFFF)
# Not encodable: the surrogates' edges, and values outside Unicode. The answer is ValueError.
_UTF8_REFUSED = (0xD800, 0xDBFF, 0xDC00, 0xDFFF, -1, 0x110000)


def _random_scalar(rng: random.Random, first: int, last: int) -> int:
    """A random code point in first..last that is not a surrogate."""
    while True:
        cp = rng.randint(first, last)
        if not 0xD800 <= cp <= 0xDFFF:
            return cp


def _utf8_encode_cases() -> Iterator[Case]:
    for cp in _UTF8_EDGES + _UTF8_REFUSED:
        yield Case((cp,))
    rng = random.Random(11)
    for plane in range(17):  # every plane, the empty ones too: UTF-8 does not care
        for _ in range(3):
            yield Case((_random_scalar(rng, plane << 16, (plane << 16) + 0xFFFF),))
    for first, last, _ in utf8.LAYOUT:
        for _ in range(8):
            yield Case((_random_scalar(rng, first, last),))


def _utf8_encode_hint_type(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, (list, tuple, bytearray)) and isinstance(expected, bytes):
        return "return a bytes object: bytes([b1, b2, ...]) turns a list of ints into one."
    return None


def _utf8_encode_hint_refuse(case: Case, expected: Any, got: Any) -> str | None:
    (cp,) = case.args
    if expected != Raised("ValueError"):
        return None
    if isinstance(got, ValueError):  # a subclass, such as UnicodeEncodeError
        return (
            f"raise ValueError itself, not {type(got).__name__} (the check compares the "
            "exception's type; and the point is to build the bytes without Python's codec)."
        )
    if 0xD800 <= cp <= 0xDFFF:
        return (
            f"{cp:#x} is a surrogate (U+D800..U+DFFF): a code point reserved for UTF-16's "
            "pairs, never a character. UTF-8 must refuse it: raise ValueError, as "
            "chr(cp).encode() does."
        )
    return (
        f"{cp} is not a code point: Unicode runs from 0 to 0x10FFFF. Raise ValueError for "
        "anything outside that range."
    )


def _utf8_encode_hint_four_bytes(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, bytes) and len(expected) == 4 and not _is_4_bytes(got):
        return (
            f"U+{case.args[0]:04X} is above U+FFFF, so it needs the 4-byte form "
            "11110xxx 10xxxxxx 10xxxxxx 10xxxxxx (21 payload bits): a 3-byte form only has 16."
        )
    return None


def _is_4_bytes(value: Any) -> bool:
    return isinstance(value, bytes) and len(value) == 4


def _utf8_encode_hint_range(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, bytes) and isinstance(got, ValueError) and "256" in str(got):
        return (
            "a byte holds 0..255, so some value you passed to bytes() was too big. Keep only "
            "6 bits in each continuation byte (& 0b111111), and make sure the code point fits "
            "the form you chose."
        )
    return None


def _utf8_encode_hint_length(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, bytes) and isinstance(got, bytes) and len(got) != len(expected):
        return (
            f"U+{case.args[0]:04X} needs {len(expected)} byte(s), you gave {len(got)}. The "
            "forms end at 0x7F (1 byte), 0x7FF (2), 0xFFFF (3) and 0x10FFFF (4), all "
            "inclusive: check <= against < at each boundary."
        )
    return None


def _utf8_encode_hint_markers(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(got, bytes) and isinstance(expected, bytes) and len(got) == len(expected)):
        return None
    if any(b >> 6 != 0b10 for b in got[1:]):
        return (
            "every byte after the first must look like 10xxxxxx: OR the 6 payload bits with "
            "0b10000000 (the continuation marker)."
        )
    if got[0] >> (7 - len(got)) != expected[0] >> (7 - len(got)):
        return (
            "the first byte of an n-byte form starts with n ones and a zero: 110xxxxx, "
            "1110xxxx or 11110xxx (a lone ASCII byte starts with 0)."
        )
    return None


def _utf8_encode_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, bytes) and isinstance(expected, bytes) and len(got) == len(expected):
        return (
            "the markers are right but the payload bits are not in order. The first byte "
            "carries the highest bits (code_point >> 6 * (n - 1)), each next byte the next "
            "6, the last byte the lowest 6 (code_point & 0b111111)."
        )
    return None


# --- byte_kind ---------------------------------------------------------------------------------


def _byte_kind_cases() -> Iterator[Case]:
    for b in range(256):
        yield Case((b,))


def _byte_kind_hint(case: Case, expected: Any, got: Any) -> str | None:
    (b,) = case.args
    if got not in ("ascii", "continuation", "lead", "invalid"):
        return 'return one of the strings "ascii", "continuation", "lead" or "invalid".'
    if expected == "invalid" and got == "lead":
        return (
            f"{b:#04x} = {b:08b} looks like a lead byte, but it never occurs in valid UTF-8: "
            "0xC0 and 0xC1 could only start an overlong form of an ASCII character, 0xF5 and "
            "up would start a code point beyond U+10FFFF (or fit no pattern at all). Call "
            "those 13 bytes invalid."
        )
    if expected == "lead":
        return (
            f"{b:#04x} = {b:08b} starts a character. Only 0xC0, 0xC1 and 0xF5..0xFF are "
            "invalid; 0xC2..0xF4 are lead bytes."
        )
    return (
        f"{b:#04x} = {b:08b}: look at the top bits. 0xxxxxxx (b >> 7 == 0) is ASCII, "
        "10xxxxxx (b >> 6 == 0b10) a continuation, 11xxxxxx leads a character (or is invalid)."
    )


# --- utf8_decode -------------------------------------------------------------------------------

_UTF8_INVALID = (
    b"\x80",  # a continuation byte with nothing before it
    b"\xff",  # a byte that never occurs in UTF-8
    b"\xc3",  # a lead byte, then the end
    b"\xe2\x82",  # the first two bytes of "€"
    b"\xf0\x9f\xa4",  # the first three bytes of "🤗"
    b"\xe2\x82A",  # a lead byte followed by ASCII, not a continuation
    b"A\xbfB",
    b"\xc0\xaf",  # "/" in two bytes: overlong
    b"\xe0\x80\xaf",  # "/" in three bytes: overlong
    b"\xf0\x82\x82\xac",  # "€" in four bytes: overlong
    b"\xed\xa0\x80",  # the surrogate U+D800
    b"\xed\xbf\xbf",  # the surrogate U+DFFF
    b"\xf4\x90\x80\x80",  # U+110000, one past the end of Unicode
    b"\xf8\x88\x80\x80\x80",  # an old 5-byte form
)


def _utf8_decode_cases() -> Iterator[Case]:
    yield Case((b"",))
    for text in ("A", "hello", "é", "€", "🤗", "\x00", "\x7f\x80", "\u07ff\u0800", "\uffff"):
        yield Case((text.encode(),))
    yield Case(("\U00010000\U0010ffff".encode(),))
    yield Case(("안녕하세요 👋 hello world 🤗".encode(),))
    for data in _UTF8_INVALID:
        yield Case((data,))
    rng = random.Random(12)
    for _ in range(30):  # valid text with characters of every length
        first, last, _ = rng.choice(utf8.LAYOUT)
        text = "".join(chr(_random_scalar(rng, first, last)) for _ in range(rng.randrange(1, 5)))
        yield Case((text.encode(),))
    for _ in range(20):  # the same, cut short or with one byte broken
        data = bytearray(
            "".join(chr(_random_scalar(rng, 0x80, 0x10FFFF)) for _ in range(3)).encode()
        )
        if rng.random() < 0.5:
            del data[-rng.randrange(1, 3) :]
        else:
            data[rng.randrange(len(data))] = rng.randrange(256)
        yield Case((bytes(data),))


def _utf8_decode_hint_error_type(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, ValueError) and type(got) is not ValueError:
        return (
            f"raise ValueError itself, not {type(got).__name__} (the check compares the "
            "exception's type; and the point is to read the bits without Python's codec)."
        )
    return None


def _utf8_decode_hint_accepted(case: Case, expected: Any, got: Any) -> str | None:
    if not (expected == Raised("ValueError") and isinstance(got, list)):
        return None
    why = ""
    try:
        utf8.utf8_decode(case.args[0])
    except ValueError as err:
        why = str(err)
    rules = {
        "overlong": "A character must use the shortest form that fits it: compare the decoded "
        "value with the smallest code point of its length (0x80, 0x800, 0x10000).",
        "surrogate": "U+D800..U+DFFF are surrogates, not characters: refuse them.",
        "above": "Unicode ends at U+10FFFF: refuse anything larger.",
        "truncated": "A lead byte promises more bytes: refuse data that ends before them.",
        "should continue": "Every byte after a lead byte must look like 10xxxxxx: check it.",
        "unexpected": "A character starts with an ASCII byte or a lead byte, never 10xxxxxx.",
        "pattern": "Bytes 0xF8..0xFF fit none of the four patterns.",
    }
    rule = next((text for key, text in rules.items() if key in why), "")
    return f"this is not valid UTF-8 ({why}); raise ValueError. {rule}"


def _utf8_decode_hint_index(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, IndexError):
        return (
            "you read past the end of the data: a lead byte promises 1 to 3 continuation "
            "bytes, so check they are there first (and raise ValueError if not)."
        )
    return None


def _utf8_decode_hint_bits(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, list) and isinstance(got, list):
        return (
            "wrong code points: keep the x bits of the lead byte (110xxxxx: & 0b11111, "
            "1110xxxx: & 0b1111, 11110xxx: & 0b111), then for each continuation byte shift "
            "left by 6 and add its low 6 bits: cp = (cp << 6) | (b & 0b111111)."
        )
    return None


# --- train -------------------------------------------------------------------------------------


def _train_cases() -> Iterator[Case]:
    yield from (
        Case(("aaabdaaabac", 259)),
        Case(("aaabdaaabac", 256)),
        Case(("ab", 257)),
        Case(("abcd", 258)),  # every pair occurs once: the tie rule decides everything
        Case(("dcba", 258)),
        Case(("aaaa", 258)),
        Case(("hello world, hello moon", 265)),
        Case(("😀😀", 260)),
    )
    rng = random.Random(3)
    produced = 0
    while produced < 40:
        text = "".join(rng.choice("ab cd") for _ in range(rng.randrange(2, 60)))
        vocab_size = 256 + rng.randrange(1, 12)
        try:
            bpe.train(text, vocab_size)
        except ValueError:  # not enough pairs for that many merges: not a fair question
            continue
        produced += 1
        yield Case((text, vocab_size))


def _as_items(merges: Any) -> list:
    return list(dict(merges).items())


def _train_hint_ids(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and [p for p, _ in got] == [p for p, _ in expected]:
        first = got[0][1] if got else None
        return (
            f"the right pairs with the wrong new ids (your first is {first}): ids 0-255 are the "
            "bytes, so merge number i (counting from 0) mints 256 + i."
        )
    return None


def _train_hint_ties(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, list):
        return None
    text, _ = case.args
    ids = list(text.encode("utf-8"))
    vocab = {i: bytes([i]) for i in range(256)}
    for (want, idx), theirs in zip(expected, got, strict=False):
        stats = bpe.get_stats(ids)
        their_pair = theirs[0] if isinstance(theirs, tuple) and len(theirs) == 2 else None
        if their_pair != want:
            if their_pair in stats and stats[their_pair] == stats[want]:
                return (
                    f"{their_pair} and {want} are equally frequent here ({stats[want]}x). "
                    "The tie rule: take the pair whose bytes (vocab[a], vocab[b]) are "
                    "lexicographically greatest, not whichever pair max() meets first."
                )
            return None
        ids = bpe.merge(ids, want, idx)
        vocab[idx] = vocab[want[0]] + vocab[want[1]]
    return None


# --- build_vocab -------------------------------------------------------------------------------


@cache
def _trained_merges() -> tuple[dict[tuple[int, int], int], ...]:
    """A few real merge tables, trained on small texts (cached: checks run them many times)."""
    texts = [
        "aaabdaaabac",
        "the cat sat on the mat. the end! the end?",
        "hello hello hello world, héllo wörld 👋👋",
        "abab cdcd abab cdcd ab cd",
    ]
    rng = random.Random(4)
    texts += ["".join(rng.choice("ab c") for _ in range(80)) for _ in range(4)]
    return tuple(bpe.train(t, 256 + min(20, len(t) // 3)) for t in texts)


def _build_vocab_cases() -> Iterator[Case]:
    yield Case(({},))
    yield Case(({(97, 97): 256},))
    yield Case(({(97, 97): 256, (256, 97): 257},))
    yield Case(({(100, 100): 256, (97, 256): 257},))  # sorted by pair, (97, 256) comes first
    for merges in _trained_merges():
        yield Case((merges,))


def _build_vocab_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, (KeyError, IndexError)) or (
        isinstance(got, dict) and len(got) == len(expected)
    ):
        return (
            "a merge can use a token made by an earlier merge, so visit the merges in the "
            "order they were learned (the dict's own order), not sorted by pair."
        )
    return None


def _build_vocab_hint_bytes(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, dict) and len(got) != len(expected):
        return (
            "the vocabulary holds the 256 single bytes ({i: bytes([i]) for i in range(256)}) "
            "plus one token per merge."
        )
    return None


# --- decode ------------------------------------------------------------------------------------


def _decode_cases() -> Iterator[Case]:
    plain = bpe.build_vocab({})
    merged = bpe.build_vocab(_trained_merges()[2])
    yield from (
        Case(([], plain)),
        Case(([104, 105], plain)),
        Case(([226, 130, 172], plain)),  # "€"
        Case(([226], plain)),  # the first byte of "€" alone is not valid UTF-8
        Case(([128], plain)),  # a continuation byte with nothing before it
        Case(([104, 255, 105], plain)),
        Case(([256, 257], merged)),
    )
    rng = random.Random(5)
    ids_pool = sorted(merged)
    for _ in range(60):
        yield Case(([rng.choice(ids_pool) for _ in range(rng.randrange(0, 12))], merged))


def _decode_hint_strict(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, UnicodeDecodeError):
        return (
            "ids can spell invalid UTF-8 (a model may emit half a character). Decode with "
            "errors='replace', so such bytes become '\ufffd' instead of crashing."
        )
    return None


# --- encode ------------------------------------------------------------------------------------

_E_SPACE = {(101, 32): 256}  # "e "
_AAA = {(97, 97): 256, (256, 97): 257}
_MIN_NOT_MAX = {(97, 97): 256, (97, 98): 257}  # "aab": merge 256 first, not 257


def _encode_cases() -> Iterator[Case]:
    yield from (
        Case(("", _AAA)),
        Case(("a", _AAA)),
        Case(("e ", _E_SPACE)),  # one merge leaves a single token: no pair to look at
        Case(("aab", _MIN_NOT_MAX)),
        Case(("abcabab", {(98, 99): 256, (97, 98): 257})),  # rank order, not frequency
        Case(("aaab", _AAA)),
        Case(("aaaab", _AAA)),
        Case(("€", _AAA)),
    )
    rng = random.Random(6)
    for merges in _trained_merges():
        for _ in range(8):
            text = "".join(rng.choice("ab cthe.!👋é") for _ in range(rng.randrange(0, 30)))
            yield Case((text, merges))


def _encode_hint_guard(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, ValueError) and "empty" in str(got):
        return (
            "min() got no pairs: when fewer than two tokens are left there is nothing to merge. "
            "Test len(ids) >= 2 in the while condition, so it is checked after every merge."
        )
    return None


def _encode_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and got != expected:
        return (
            "apply merges in the order they were learned: at each step take the pair with the "
            "lowest merge id (min over merges.get(pair, inf)), not the highest and not the "
            "most frequent."
        )
    return None


# --- split (GPT-4's pattern) -------------------------------------------------------------------

_SPLIT_PIECES = [
    "hello",
    " world",
    "I'm",
    "DON'T",
    "you'RE",
    "I’m",
    "'s",
    " 's",
    "12345",
    "7",
    "   ",
    "  ",
    "\n",
    "\n\n",
    "\r\n",
    "\t",
    "!!",
    "$",
    "...",
    "Ünïcödé",
    "안녕",
    "👋",
    "def",
    "():",
    "    return",
    "x",
    "A",
    "_",
    "é",
    "ß",
]


def _split_cases() -> Iterator[Case]:
    for text in (
        "",
        "hello world",
        "I'm here",
        "DON'T",
        "you'RE sure",
        "I’m",
        "12345 and 1234567",
        "a   b",
        "x  ",
        "a\n\n\nb",
        "line\r\nnext",
        "hi  \n  there",
        "def f():\n    return 1\n",
        "안녕하세요 👋 Ünïcödé",
        "$$$ !!! ...",
    ):
        yield Case((text,))
    rng = random.Random(7)
    for _ in range(120):
        yield Case(("".join(rng.choice(_SPLIT_PIECES) for _ in range(rng.randrange(1, 8))),))


def _split_hint_coverage(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and all(isinstance(c, str) for c in got):
        if "".join(got) != case.args[0]:
            return (
                "the chunks must add up to the whole text: regex.findall silently skips "
                "characters that no part of the pattern matches."
            )
    return None


def _split_hint_gpt2(case: Case, expected: Any, got: Any) -> str | None:
    from tokcourse.patterns import GPT2_SPLIT_PATTERN, split

    if got == split(case.args[0], GPT2_SPLIT_PATTERN):
        return (
            "that is how GPT-2 splits. GPT-4's pattern makes contractions case-insensitive "
            "((?i:'s|'t|...)), cuts numbers into groups of one to three digits (\\p{N}{1,3}) "
            "and treats newlines differently; take it from tiktoken: "
            "tiktoken.get_encoding('cl100k_base')._pat_str."
        )
    return None


# --- encode_ordinary (regex split, then BPE per chunk) -----------------------------------------


@cache
def _cross_chunk_merges() -> dict[tuple[int, int], int]:
    # Trained WITHOUT a split, so it holds merges across word boundaries, such as "e " or ". ".
    return bpe.train("the cat. the dog! the end. the cat sat. the dog ate. " * 3, 280)


# " t", " th", " the", "g.", "e ": the last two cross GPT-4's chunk boundaries
_ACROSS = {(32, 116): 256, (256, 104): 257, (257, 101): 258, (103, 46): 259, (101, 32): 260}


def _encode_ordinary_cases() -> Iterator[Case]:
    for text in ("the dog.", "a the", "dog. the end"):
        yield Case((text, _ACROSS))
    merges = _cross_chunk_merges()
    for text in ("", "the", "the end", "dog. dog!", "the cat sat. the dog ate."):
        yield Case((text, merges))
    rng = random.Random(8)
    words = ["the", " the", " cat", " dog", ".", "!", " ", "end", " sat", "\n", "12", "'s"]
    for _ in range(50):
        yield Case(("".join(rng.choice(words) for _ in range(rng.randrange(1, 10))), merges))


def _encode_ordinary_hint_chunks(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if got == bpe.encode(text, merges):
        return (
            "merges were applied across chunk boundaries. Split the text with the pattern "
            "first, encode each chunk on its own, and concatenate the ids."
        )
    return None


# --- encode_with_specials ----------------------------------------------------------------------

_SPECIALS = {"<|endoftext|>": 300, "<|fim_prefix|>": 301}


def _encode_with_specials_cases() -> Iterator[Case]:
    eot, fim = "<|endoftext|>", "<|fim_prefix|>"
    for text, allowed in (
        ("", frozenset()),
        ("hello", frozenset()),
        ("hi<|endoftext|>", frozenset()),  # user text that spells a special token: refuse
        ("hi<|endoftext|>", frozenset({eot})),
        ("hi<|endoftext|>", "all"),
        ("<|endoftext|><|endoftext|>", "all"),
        ("a<|fim_prefix|>b", frozenset({eot})),  # fim is not allowed: refuse
        ("a<|fim_prefix|>b<|endoftext|>", frozenset({fim, eot})),
        ("<|endoftext", frozenset()),  # not a special token: ordinary text
        ("é<|endoftext|>é", "all"),
    ):
        yield Case((text, dict(_SPECIALS), allowed))
    rng = random.Random(9)
    pieces = ["a", " b", "é", eot, fim, "<|", "|>", "endoftext"]
    allowed_choices = [frozenset(), frozenset({eot}), frozenset({fim}), "all"]
    for _ in range(40):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 6)))
        yield Case((text, dict(_SPECIALS), rng.choice(allowed_choices)))


def _specials_hint_default(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, Raised) and isinstance(got, list):
        return (
            "this text contains a special token that is not allowed. It must raise ValueError "
            "(naming the token), never turn into the special id: otherwise any user can end "
            "the document or fake a chat turn by typing it."
        )
    return None


def _specials_hint_allowed(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and isinstance(expected, list):
        return (
            'an allowed special token (or any, with allowed_special="all") becomes its own id; '
            "the text around it is encoded as UTF-8 bytes."
        )
    return None


# --- is_canonical ------------------------------------------------------------------------------


def _is_canonical_cases() -> Iterator[Case]:
    merges = {(97, 97): 256, (256, 97): 257, (98, 99): 258}
    for ids in ([], [256], [97, 97], [257], [97, 256], [256, 97], [258], [98, 99], [226]):
        yield Case((ids, merges))
    rng = random.Random(10)
    for trained in _trained_merges()[:4]:
        vocab_ids = sorted(bpe.build_vocab(trained))
        for _ in range(10):
            text = "".join(rng.choice("ab cthe") for _ in range(rng.randrange(0, 12)))
            yield Case((bpe.encode(text, trained), trained))  # canonical by construction
            yield Case(([rng.choice(vocab_ids) for _ in range(rng.randrange(1, 6))], trained))


def _is_canonical_hint(case: Case, expected: Any, got: Any) -> str | None:
    if got is True and expected is False:
        return (
            "many id sequences spell the same text and encode makes only one of them, so "
            "encode(decode(ids)) == ids does not always hold. Decode, encode again, compare."
        )
    return None


# --- the registry ------------------------------------------------------------------------------


@cache
def exercise(name: str) -> Exercise:
    """The :class:`~tokcourse.exercises.Exercise` called ``name``.

    >>> exercise("merge").reference_name
    'tokcourse.bpe.merge'
    """
    if name not in EXERCISE_NAMES:
        raise ValueError(f"unknown exercise {name!r}; the exercises are {sorted(EXERCISE_NAMES)}")
    return EXERCISE_NAMES[name]()


EXERCISE_NAMES: dict[str, Callable[[], Exercise]] = {
    "get_stats": lambda: Exercise(
        "get_stats",
        bpe.get_stats,
        _get_stats_cases,
        normalize=dict,
        hints=(_get_stats_hint_short, _get_stats_hint_missing_pair, _get_stats_hint_counts),
    ),
    "merge": lambda: Exercise(
        "merge",
        bpe.merge,
        _merge_cases,
        normalize=list,
        hints=(_merge_hint_bounds, _merge_hint_overlap),
    ),
    "utf8_encode": lambda: Exercise(
        "utf8_encode",
        utf8.utf8_encode,
        _utf8_encode_cases,
        hints=(
            _utf8_encode_hint_type,
            _utf8_encode_hint_refuse,
            _utf8_encode_hint_four_bytes,
            _utf8_encode_hint_range,
            _utf8_encode_hint_length,
            _utf8_encode_hint_markers,
            _utf8_encode_hint_order,
        ),
    ),
    "byte_kind": lambda: Exercise(
        "byte_kind", utf8.byte_kind, _byte_kind_cases, hints=(_byte_kind_hint,)
    ),
    "utf8_decode": lambda: Exercise(
        "utf8_decode",
        utf8.utf8_decode,
        _utf8_decode_cases,
        normalize=list,
        hints=(
            _utf8_decode_hint_error_type,
            _utf8_decode_hint_accepted,
            _utf8_decode_hint_index,
            _utf8_decode_hint_bits,
        ),
    ),
    "train": lambda: Exercise(
        "train",
        bpe.train,
        _train_cases,
        normalize=_as_items,
        hints=(_train_hint_ids, _train_hint_ties),
    ),
    "build_vocab": lambda: Exercise(
        "build_vocab",
        bpe.build_vocab,
        _build_vocab_cases,
        normalize=dict,
        hints=(_build_vocab_hint_bytes, _build_vocab_hint_order),
    ),
    "decode": lambda: Exercise(
        "decode", bpe.decode, _decode_cases, normalize=str, hints=(_decode_hint_strict,)
    ),
    "encode": lambda: Exercise(
        "encode",
        bpe.encode,
        _encode_cases,
        normalize=list,
        hints=(_encode_hint_guard, _encode_hint_order),
    ),
    "split": lambda: Exercise(
        "split",
        patterns.split,
        _split_cases,
        normalize=list,
        hints=(_split_hint_coverage, _split_hint_gpt2),
    ),
    "encode_ordinary": lambda: Exercise(
        "encode_ordinary",
        tokenizer.encode_ordinary,
        _encode_ordinary_cases,
        normalize=list,
        hints=(_encode_ordinary_hint_chunks,),
    ),
    "encode_with_specials": lambda: Exercise(
        "encode_with_specials",
        special.encode_with_specials,
        _encode_with_specials_cases,
        normalize=list,
        hints=(_specials_hint_default, _specials_hint_allowed),
    ),
    "is_canonical": lambda: Exercise(
        "is_canonical",
        bpe.is_canonical,
        _is_canonical_cases,
        normalize=bool,
        hints=(_is_canonical_hint,),
    ),
}


def get_stats(fn: Any) -> Callable:
    """Check ``get_stats(ids) -> {pair: count}``; returns the function to use from here on."""
    return _run("get_stats", fn)


def merge(fn: Any) -> Callable:
    """Check ``merge(ids, pair, idx) -> new ids``; returns the function to use from here on."""
    return _run("merge", fn)


def utf8_encode(fn: Any) -> Callable:
    """Check ``utf8_encode(code_point) -> bytes``; returns the function to use from here on."""
    return _run("utf8_encode", fn)


def byte_kind(fn: Any) -> Callable:
    """Check ``byte_kind(b) -> "ascii" | "continuation" | "lead" | "invalid"``."""
    return _run("byte_kind", fn)


def utf8_decode(fn: Any) -> Callable:
    """Check ``utf8_decode(data) -> code points``; returns the function to use from here on."""
    return _run("utf8_decode", fn)


def train(fn: Any) -> Callable:
    """Check ``train(text, vocab_size) -> merges``; returns the function to use from here on."""
    return _run("train", fn)


def build_vocab(fn: Any) -> Callable:
    """Check ``build_vocab(merges) -> {id: bytes}``; returns the function to use from here on."""
    return _run("build_vocab", fn)


def decode(fn: Any) -> Callable:
    """Check ``decode(ids, vocab) -> str``; returns the function to use from here on."""
    return _run("decode", fn)


def encode(fn: Any) -> Callable:
    """Check ``encode(text, merges) -> ids``; returns the function to use from here on."""
    return _run("encode", fn)


def split(fn: Any) -> Callable:
    """Check ``split(text) -> chunks`` (GPT-4's pattern); returns the function to use."""
    return _run("split", fn)


def encode_ordinary(fn: Any) -> Callable:
    """Check ``encode_ordinary(text, merges) -> ids`` (split, then BPE per chunk)."""
    return _run("encode_ordinary", fn)


def encode_with_specials(fn: Any) -> Callable:
    """Check ``encode_with_specials(text, special_tokens, allowed_special) -> ids``."""
    return _run("encode_with_specials", fn)


def is_canonical(fn: Any) -> Callable:
    """Check ``is_canonical(ids, merges) -> bool``; returns the function to use from here on."""
    return _run("is_canonical", fn)
