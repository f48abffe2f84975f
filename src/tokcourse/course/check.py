"""Checks for the exercises: ``merge = check.merge(merge)`` in a chapter's check cell.

Each check runs the student's function against the package's reference on curated edge cases
plus seeded random inputs, prints a verdict (with the smallest failing input, expected vs got,
and a hint when something is wrong), and returns the function the chapter should use from then
on: the student's if it passed, else the reference.

>>> from tokcourse import check
>>> def merge(ids, pair, idx):
...     out, i = [], 0
...     while i < len(ids):
...         if ids[i : i + 2] == list(pair):
...             out.append(idx)
...             i += 2
...         else:
...             out.append(ids[i])
...             i += 1
...     return out
>>> check.merge(merge) is merge  # doctest: +ELLIPSIS
✅ merge: correct on all ... test inputs (edge cases and random ones).
   The chapter uses your merge from here on.
True

Handed the course's own function (as happens when a check cell is run again after it handed
the reference back), a check says so instead of congratulating anyone:

>>> from tokcourse import bpe
>>> check.merge(bpe.merge) is bpe.merge  # doctest: +ELLIPSIS
↩️ merge: this is the course's merge (tokcourse.bpe.merge), not yours, ...
True

``check.show_solution("merge")`` prints the reference as standalone code (for Colab, where the
book's solution dropdowns show as plain text).
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from itertools import pairwise
from typing import Any

from tokcourse import bpe, exercises, fast_encode, fast_train, patterns, special, tokenizer, utf8
from tokcourse.exercises import (
    BOOL,
    BYTES,
    INT,
    PAIR,
    STR,
    Case,
    CheckResult,
    Exercise,
    Raised,
    Violation,
    dict_of,
    list_of,
    run_check,
)

__all__ = [
    "EXERCISE_NAMES",
    "apply_merge",
    "build_vocab",
    "byte_kind",
    "decode",
    "encode",
    "encode_ordinary",
    "encode_ordinary_cached",
    "encode_with_specials",
    "exercise",
    "get_stats",
    "is_canonical",
    "merge",
    "merge_lowest",
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
    (ids,) = case.args
    if not isinstance(got, dict) or set(got) == set(expected):
        return None  # every pair is there: the counts are wrong, not the walk
    for end, kept in (("last", ids[:-1]), ("first", ids[1:])):
        if len(ids) >= 2 and got == bpe.get_stats(kept):
            a, b = (ids[-2], ids[-1]) if end == "last" else (ids[0], ids[1])
            return (
                f"the {end} pair ({a}, {b}) is missing: a list of n ids has n - 1 neighbouring "
                "pairs, (ids[0], ids[1]) up to (ids[-2], ids[-1]); zip(ids, ids[1:]) walks them "
                "all."
            )
    return None


def _get_stats_hint_short(case: Case, expected: Any, got: Any) -> str | None:
    if len(case.args[0]) < 2 and isinstance(got, BaseException):
        return "a list with fewer than two ids has no pairs at all: return an empty dict."
    return None


def _get_stats_hint_counts(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(got, dict) and set(got) == set(expected)):
        return None
    if all(n == 1 for n in got.values()):
        return (
            "every pair is counted once, however often it occurs (a set of pairs?): add 1 "
            "each time a pair occurs, e.g. counts[pair] = counts.get(pair, 0) + 1."
        )
    return "the right pairs, wrong counts: add 1 each time a pair occurs (overlaps count too)."


def _get_stats_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, dict) and {tuple(sorted(p)) for p in expected} == set(got) != set(expected):
        return (
            "(a, b) and (b, a) are different pairs: keep each pair in the order the ids come, "
            "(ids[i], ids[i + 1])."
        )
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


def _merge_each_position(ids: list, pair: tuple, idx: int, *, step: int) -> list:
    """What a merge that does not skip both halves makes (``step=1``: moves on by one)."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
            i += step
        else:
            out.append(ids[i])
            i += 1
    return out


def _merge_hint_overlap(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if pair[0] != pair[1] or not isinstance(got, list):
        return None
    if got == _merge_each_position(ids, pair, idx, step=1) or got.count(idx) > expected.count(idx):
        return (
            f"overlapping occurrences: in {ids} the pair {pair} overlaps itself, and only the "
            "leftmost of two overlapping pairs can merge. After a merge, jump past both ids "
            "(i += 2); otherwise move on by one."
        )
    return None


def _merge_hint_step_one(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if pair[0] != pair[1] and got == _merge_each_position(ids, pair, idx, step=1):
        return (
            "after a merge the pair's second id was copied too: a merged pair uses up both "
            "ids, so jump past both (i += 2); only when nothing merges move on by one."
        )
    return None


def _merge_hint_first_only(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if isinstance(got, list) and 1 == got.count(idx) < expected.count(idx):
        return (
            "only the first occurrence was replaced: keep scanning to the end of the list "
            "after a merge, every occurrence of the pair becomes the new id."
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


def _lenient_utf8(data: bytes) -> list[int] | None:
    """The code points a decoder that only reads the bit patterns would give, checking nothing.

    ``None`` where even that is impossible (a continuation byte first, a cut-off sequence).
    """
    out, i = [], 0
    while i < len(data):
        lead = data[i]
        n = 1 if lead < 0x80 else 2 if 0xC0 <= lead < 0xE0 else 3 if lead < 0xF0 else 4
        if 0x80 <= lead < 0xC0 or lead >= 0xF8 or i + n > len(data):
            return None
        cp = lead & (0x7F, 0x1F, 0x0F, 0x07)[n - 1]
        for b in data[i + 1 : i + n]:
            cp = (cp << 6) | (b & 0x3F)
        out.append(cp)
        i += n
    return out


def _utf8_decode_hint_accepted(case: Case, expected: Any, got: Any) -> str | None:
    if not (expected == Raised("ValueError") and isinstance(got, list)):
        return None
    if got != _lenient_utf8(case.args[0]):
        return None  # not a missing rule: the bits are wrong too (see the next hint)
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


_LEAD_MASKS = {2: "110xxxxx: & 0b11111", 3: "1110xxxx: & 0b1111", 4: "11110xxx: & 0b111"}


def _utf8_decode_hint_bits(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, list):
        return None
    data = case.args[0]
    lengths = {2 if b < 0xE0 else 3 if b < 0xF0 else 4 for b in data if 0xC0 <= b < 0xF8}
    wrong = ""
    if isinstance(expected, list) and len(got) == len(expected):
        for cp, theirs in zip(expected, got, strict=True):
            if cp != theirs:
                n = len(chr(cp).encode())
                wrong = f"U+{cp:04X} is {n} bytes long, and you decoded it as {theirs:#x}. "
                lengths = {n}
                break
    masks = "; ".join(_LEAD_MASKS[n] for n in sorted(lengths) if n in _LEAD_MASKS)
    return (
        f"wrong code points. {wrong}Keep only the x bits of the lead byte "
        f"({masks or _LEAD_MASKS[2]}), then for each continuation byte shift left by 6 and add "
        "its low 6 bits: cp = (cp << 6) | (b & 0b111111)."
    )


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
    while produced < 48:
        # half ASCII, half with characters of two, three and four UTF-8 bytes
        alphabet = "ab cd" if produced % 2 else "ab céд한👋"
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(2, 60)))
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


def _train_hint_code_points(case: Case, expected: Any, got: Any) -> str | None:
    text, _ = case.args
    if not isinstance(got, list) or text.isascii():
        return None
    minted = {i for _, i in got}
    if any(x > 255 and x not in minted for pair, _ in got for x in pair):
        return (
            "a merge uses an id above 255 that no merge made, so training did not start from "
            "bytes: begin with list(text.encode('utf-8')), not ord() of each character (a "
            "code point can be far above 255 and would collide with the merge ids)."
        )
    return None


def _train_hint_count(case: Case, expected: Any, got: Any) -> str | None:
    text, vocab_size = case.args
    if isinstance(got, list) and len(got) != len(expected) and got == expected[: len(got)]:
        return (
            f"{len(got)} merges instead of {len(expected)}: a vocabulary of {vocab_size} "
            f"tokens is 256 bytes plus vocab_size - 256 = {vocab_size - 256} merges."
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


def _vocab_in_sorted_order(merges: dict) -> dict | BaseException:
    """What visiting the merges sorted by pair makes (or the error it runs into)."""
    vocab = {i: bytes([i]) for i in range(256)}
    try:
        for (a, b), idx in sorted(merges.items()):
            vocab[idx] = vocab[a] + vocab[b]
    except KeyError as err:
        return err
    return vocab


def _build_vocab_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    (merges,) = case.args
    if list(merges) == sorted(merges):
        return None  # sorting changes nothing here, so order cannot be the mistake
    sorted_way = _vocab_in_sorted_order(merges)
    if got == sorted_way or (isinstance(got, KeyError) and isinstance(sorted_way, KeyError)):
        return (
            "a merge can use a token made by an earlier merge, so visit the merges in the "
            "order they were learned (the dict's own order), not sorted by pair."
        )
    return None


def _build_vocab_hint_bytes(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, dict):
        return None
    if any(got.get(i) == bytes(i) != bytes([i]) for i in range(256)):
        return (
            "bytes(i) makes i zero bytes (bytes(3) == b'\\x00\\x00\\x00'); the one byte with "
            "value i is bytes([i])."
        )
    if not set(range(256)) <= set(got):
        return (
            "the vocabulary holds the 256 single bytes ({i: bytes([i]) for i in range(256)}) "
            "plus one token per merge."
        )
    return None


def _build_vocab_hint_swapped(case: Case, expected: Any, got: Any) -> str | None:
    (merges,) = case.args
    for (a, b), idx in merges.items():
        if isinstance(got, dict) and got.get(idx) not in (None, expected[idx]):
            if got[idx] == expected[b] + expected[a]:
                return (
                    f"token {idx} is the merge ({a}, {b}): its bytes are vocab[{a}] + "
                    f"vocab[{b}], left then right."
                )
            return None
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


def _decode_hint_joined(case: Case, expected: Any, got: Any) -> str | None:
    ids, vocab = case.args
    if not isinstance(got, str):
        return None
    pieces = [vocab[i] for i in ids]
    if got == "".join(piece.decode("utf-8", errors="replace") for piece in pieces):
        return (
            "each token was decoded on its own, but one character's bytes can be spread over "
            "several tokens: join all the bytes first (b''.join(...)), then decode once."
        )
    if got == b"".join(pieces).decode("utf-8", errors="ignore"):
        return (
            "invalid bytes vanished without a trace (errors='ignore'): use errors='replace', "
            "so the reader sees '\ufffd' where the text was broken."
        )
    return None


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


def _encode_choosing(text: str, merges: dict, choose: Callable) -> list[int]:
    """BPE that picks the next pair with ``choose(candidates, ids)``: for the wrong orders."""
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        candidates = [p for p in bpe.get_stats(ids) if p in merges]
        if not candidates:
            break
        pair = choose(candidates, ids)
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


def _encode_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if not isinstance(got, list) or got == expected:
        return None
    latest = _encode_choosing(text, merges, lambda c, ids: max(c, key=merges.get))
    frequent = _encode_choosing(
        text, merges, lambda c, ids: max(c, key=lambda p: bpe.get_stats(ids)[p])
    )
    if got in (latest, frequent):
        which = "the latest-learned merge" if got == latest else "the most frequent pair"
        if latest == frequent:
            which = "the most frequent pair (here also the latest-learned merge)"
        return (
            f"you applied {which} first. Apply merges in the order they were learned: at "
            "each step take the pair with the lowest merge id (min over "
            "merges.get(pair, inf)), not the highest and not the most frequent."
        )
    return None


def _encode_hint_no_stop(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, KeyError):
        return (
            "the pair with the lowest rank may have no rank at all (no pair of this text was "
            "ever merged): stop when it is not in merges, instead of looking it up."
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


def _split_hint_variants(case: Case, expected: Any, got: Any) -> str | None:
    (text,) = case.args
    gpt4 = patterns.GPT4_SPLIT_PATTERN
    if got == patterns.split(text, gpt4.replace("(?i:", "(?:")):
        return (
            "contractions must match in any case: GPT-4's pattern wraps them in (?i:...), so "
            '"DON\'T" splits as "DON", "\'T" just like "don\'t".'
        )
    if got == patterns.split(text, gpt4.replace(r"\p{N}{1,3}", r"\p{N}+")):
        return (
            'numbers are cut into groups of at most three digits (\\p{N}{1,3}): "12345" is '
            '"123", "45".'
        )
    return None


def _split_hint_gpt2(case: Case, expected: Any, got: Any) -> str | None:
    if got == patterns.split(case.args[0], patterns.GPT2_SPLIT_PATTERN):
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


@cache
def _pattern_merges() -> dict[tuple[int, int], int]:
    """Merges where GPT-2's and GPT-4's splits part ways: digit runs, upper-case contractions,
    spaces before a newline. Trained without a split, so they cross every boundary."""
    text = "DON'T 12345 WON'T 2024 I'M 1234567 YOU'RE  \n  x 99999 SHE'LL  \r\n"
    return bpe.train(text * 4, 300)


def _encode_ordinary_cases() -> Iterator[Case]:
    for text in ("the dog.", "a the", "dog. the end"):
        yield Case((text, _ACROSS))
    merges = _cross_chunk_merges()
    for text in ("", "the", "the end", "dog. dog!", "the cat sat. the dog ate."):
        yield Case((text, merges))
    for text in ("12345", "DON'T", "I'M 2024", "x  \n  x", "1234567 YOU'RE"):
        yield Case((text, _pattern_merges()))
    rng = random.Random(8)
    words = ["the", " the", " cat", " dog", ".", "!", " ", "end", " sat", "\n", "12", "'s"]
    words += [" DON'T", "'T", "12345", " 2024", "  \n", "I'M"]
    for i in range(60):
        chosen = merges if i % 2 else _pattern_merges()
        yield Case(("".join(rng.choice(words) for _ in range(rng.randrange(1, 10))), chosen))


def _encode_ordinary_hint_chunks(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if got == tokenizer.encode_ordinary(text, merges, patterns.GPT2_SPLIT_PATTERN):
        return (
            "those are the chunks of GPT-2's pattern. Split with GPT-4's "
            "(tokcourse.patterns.GPT4_SPLIT_PATTERN): numbers in groups of up to three "
            "digits, contractions in any case, whitespace before a newline kept with it."
        )
    if got == bpe.encode(text, merges):
        return (
            "merges were applied across chunk boundaries. Split the text with the pattern "
            "first, encode each chunk on its own, and concatenate the ids."
        )
    if got == [i for word in text.split(" ") for i in bpe.encode(word, merges) + [32]][:-1]:
        return (
            "splitting at spaces loses what the pattern keeps: GPT-4's chunks carry the "
            "space in front of a word (' the'), so merges such as ' t' can apply. Split with "
            "tokcourse.patterns.split(text)."
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


def _specials_hint_refused_allowed(case: Case, expected: Any, got: Any) -> str | None:
    text, _, allowed = case.args
    if isinstance(got, ValueError) and isinstance(expected, list):
        which = "every special token" if allowed == "all" else f"the tokens in {set(allowed)}"
        return (
            f"allowed_special={allowed!r} allows {which}: encode such a token as its id "
            "instead of refusing it (note that 'all' is a string, not a set of names)."
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


def _same_length_impostors(merges: dict, rng: random.Random, wanted: int) -> list[list[int]]:
    """Non-canonical id sequences exactly as long as the canonical ones for their text."""
    vocab = bpe.build_vocab(merges)
    ids_pool = sorted(vocab)
    found: list[list[int]] = []
    for _ in range(3000):
        ids = [rng.choice(ids_pool) for _ in range(rng.randrange(2, 6))]
        canonical = bpe.encode(bpe.decode(ids, vocab), merges)
        if len(canonical) == len(ids) and canonical != ids and ids not in found:
            found.append(ids)
            if len(found) == wanted:
                break
    return found


def _is_canonical_cases() -> Iterator[Case]:
    merges = {(97, 97): 256, (256, 97): 257, (98, 99): 258}
    for ids in ([], [256], [97, 97], [257], [97, 256], [256, 97], [258], [98, 99], [226]):
        yield Case((ids, merges))
    # "aaaa" is [256, 256]; [97, 257] and [257, 97] spell it in as many tokens, yet differ
    for ids in ([256, 256], [97, 257], [257, 97]):
        yield Case((ids, merges))
    rng = random.Random(10)
    for trained in _trained_merges()[:4]:
        vocab_ids = sorted(bpe.build_vocab(trained))
        for _ in range(10):
            text = "".join(rng.choice("ab cthe") for _ in range(rng.randrange(0, 12)))
            yield Case((bpe.encode(text, trained), trained))  # canonical by construction
            yield Case(([rng.choice(vocab_ids) for _ in range(rng.randrange(1, 6))], trained))
        for ids in _same_length_impostors(trained, rng, 4):
            yield Case((ids, trained))


def _is_canonical_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (got is True and expected is False):
        return None
    ids, merges = case.args
    canonical = bpe.encode(bpe.decode(ids, bpe.build_vocab(merges)), merges)
    if len(canonical) == len(ids):
        return (
            f"the same number of tokens is not enough: {ids} and {canonical} spell the same "
            "text in as many tokens, and only the second is what encode makes. Compare the "
            "ids themselves."
        )
    return (
        "many id sequences spell the same text and encode makes only one of them, so "
        "encode(decode(ids)) == ids does not always hold. Decode, encode again, compare."
    )


# --- chapter 13: the fast algorithms, checked for what makes them fast ---------------------------


def _reject(what: str, hint: str) -> None:
    """Fail a call whose answer may be right but whose way is not what the exercise teaches."""
    raise Violation(what, hint)


class _WatchedWords(list):
    """The trainer's list of words, noting which ones a function reads."""

    def __init__(self, words: list) -> None:
        super().__init__(words)
        self.read: set[int] = set()
        self.scanned = False  # iterated over, sliced or copied: every word read
        self.watching = True

    def __getitem__(self, index: Any) -> Any:
        if self.watching:
            if isinstance(index, slice):
                self.scanned = True
            else:
                self.read.add(range(len(self))[index])
        return super().__getitem__(index)

    def __iter__(self) -> Iterator:
        if self.watching:
            self.scanned = True
        return super().__iter__()

    def copy(self) -> list:
        self.scanned = self.scanned or self.watching
        return list(super().__iter__())


_INCREMENTAL = (
    "an incremental merge revisits only the words that where[pair] lists (for i in "
    "where.pop(pair): ...); reading every word is the full recount this chapter replaces."
)


def _where_gaps(words: list, where: dict) -> list[tuple[tuple[int, int], int]]:
    """Pairs that a word holds but ``where`` does not point to from that pair."""
    return sorted(
        (pair, i)
        for i, word in enumerate(words)
        for pair in set(pairwise(word))
        if i not in where.get(pair, ())
    )


def _run_apply_merge(fn: Callable, args: tuple, kwargs: dict) -> exercises.Observed:
    pair, idx, words, weights, counts, where = args
    listed = set(where.get(pair, ()))
    watched = _WatchedWords(words)
    returned = fn(pair, idx, watched, weights, counts, where)
    watched.watching = False
    if watched.scanned:
        _reject("went through the whole list of words", _INCREMENTAL)
    extra = watched.read - listed
    if extra:
        _reject(f"read words[{min(extra)}], which where[{pair}] does not list", _INCREMENTAL)
    after = [list(word) for word in watched]
    return exercises.Observed(
        returned,
        {
            "words": after,
            "counts": {p: c for p, c in counts.items() if c},
            "pairs missing from where": _where_gaps(after, where),
        },
    )


def _as_many_merges_as_possible(chunks: Counter, most: int) -> dict:
    for n in range(most, 0, -1):
        try:
            return fast_train.train_fast(chunks, 256 + n)
        except ValueError:  # fewer merges possible than n
            continue
    return {}


def _apply_merge_cases() -> Iterator[Case]:
    texts = [
        "aaabdaaabac",
        "aaaa aaaa aa",
        "the cat sat on the mat, the hat",
        "hello hello héllo wörld 👋👋 hello",
    ]
    rng = random.Random(14)
    texts += ["".join(rng.choice("ab c") for _ in range(60)) for _ in range(3)]
    texts += ["".join(rng.choice("ab céд👋") for _ in range(80)) for _ in range(3)]
    for text in texts:
        chunks = fast_train.count_chunks(text)
        merges = _as_many_merges_as_possible(chunks, 6)
        words, weights, counts, where = fast_train.index_words(chunks)
        for pair, idx in merges.items():  # the state before each merge of a real training run
            yield Case(copy.deepcopy((pair, idx, words, weights, counts, where)))
            fast_train.apply_merge(pair, idx, words, weights, counts, where)


def _apply_merge_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(got, exercises.Observed) and isinstance(expected, exercises.Observed)):
        return None
    if got.state["pairs missing from where"]:
        (pair, i), *_ = got.state["pairs missing from where"]
        return (
            f"words[{i}] now holds the pair {pair}, but where[{pair}] does not list {i}: add "
            "each new pair's word to where, or a later merge will never visit it."
        )
    if got.state["words"] != expected.state["words"]:
        return "merge the pair in each word the way merge() does: left to right, no overlaps."
    if got.state["counts"] != expected.state["counts"] or (
        isinstance(got.returned, dict) and set(got.returned) == set(expected.returned)
    ):
        return (
            "the counts are off: for each word you change, subtract weight for every old pair "
            "and add weight for every new pair (a word that occurs 5 times holds its pairs 5 "
            "times; overlapping pairs such as (a, a) in 'aaa' count as often as get_stats "
            "counts them)."
        )
    return (
        "return {pair: new count} for every pair whose count changed, with 0 for a pair that "
        "disappeared (the merged pair too)."
    )


class _CountingMerges(dict):
    """A merges dict that counts the lookups made in it (reading it all counts as one each)."""

    def __init__(self, merges: dict) -> None:
        super().__init__(merges)
        self.looked_up: list = []

    def get(self, key: Any, default: Any = None) -> Any:
        self.looked_up.append(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.looked_up.append(key)
        return super().__getitem__(key)

    def __contains__(self, key: Any) -> bool:
        self.looked_up.append(key)
        return super().__contains__(key)

    def _all(self) -> None:
        self.looked_up.extend(super().keys())

    def __iter__(self) -> Iterator:
        self._all()
        return super().__iter__()

    def keys(self) -> Any:
        self._all()
        return super().keys()

    def items(self) -> Any:
        self._all()
        return super().items()

    def values(self) -> Any:
        self._all()
        return super().values()

    def copy(self) -> dict:
        self._all()
        return dict(super().items())


def _run_merge_lowest(fn: Callable, args: tuple, kwargs: dict) -> exercises.Observed:
    ids, ranks, merges = args
    counted = _CountingMerges(merges)
    returned = fn(ids, ranks, counted)
    distinct = set(counted.looked_up)
    if len(distinct) > 3:
        _reject(
            f"looked up {len(distinct)} different pairs in merges",
            "after a merge only two pairs are new: the new token with its left neighbour and "
            "with its right one. Update those two ranks; every other rank still holds.",
        )
    return exercises.Observed(returned, {"ids": ids, "ranks": ranks})


def _ranks(ids: list[int], merges: dict) -> list[float]:
    return [merges.get(pair, float("inf")) for pair in pairwise(ids)]


def _merge_lowest_cases() -> Iterator[Case]:
    aaab = {(97, 97): 256, (256, 97): 257, (256, 98): 258}
    for ids in ([], [97], [97, 98], [97, 97], [98, 97, 97], [97, 97, 97, 97], [97, 97, 98]):
        yield Case((ids, _ranks(ids, aaab), aaab))
    rng = random.Random(15)
    for trained in _trained_merges() * 3:
        text = "".join(rng.choice("abcdeh t") for _ in range(rng.randrange(12, 40)))
        ids = list(text.encode())
        ranks = _ranks(ids, trained)
        yield Case((list(ids), list(ranks), trained))
        while fast_encode.merge_lowest(ids, ranks, trained):  # and part-way through
            if rng.random() < 0.5:
                yield Case((list(ids), list(ranks), trained))


def _merge_lowest_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(got, exercises.Observed) and isinstance(expected, exercises.Observed)):
        return None
    ids, ranks, _ = case.args
    if got.state["ids"] != expected.state["ids"]:
        lowest = min(ranks, default=None)
        if ranks.count(lowest) > 1:
            return (
                f"the rank {lowest} occurs {ranks.count(lowest)} times: merge the leftmost one "
                "(ranks.index(lowest)), as the reference encoder does."
            )
        return "merge the pair with the lowest rank: ids[i : i + 2] = [rank]."
    if len(got.state["ranks"]) != len(got.state["ids"]) - 1:
        return "ranks has one entry per neighbour pair: after a merge, delete the merged one."
    return (
        "after merging at i, ranks[i - 1] is the rank of (ids[i - 1], new) and ranks[i] the "
        "rank of (new, ids[i + 1]), when those neighbours exist; float('inf') if never merged."
    )


def _encode_cached_hint_stale(case: Case, expected: Any, got: Any) -> str | None:
    """A cache kept between calls and keyed by the chunk alone: ids of other merges come back."""
    text, merges = case.args
    if not isinstance(got, list) or got == expected:
        return None
    tables = [_ACROSS, _cross_chunk_merges(), _pattern_merges()]
    ends = {0}  # positions in got where the chunks so far can end
    for chunk in patterns.split(text):
        options = {tuple(bpe.encode(chunk, m)) for m in tables}
        ends = {e + len(o) for e in ends for o in options if tuple(got[e : e + len(o)]) == o}
    if len(got) in ends:
        return (
            "some chunks came back with the ids of another merges table: a cache kept between "
            "calls must be keyed by the merges too. Simplest: a new dict in every call."
        )
    return None


def _run_encode_cached(fn: Callable, args: tuple, kwargs: dict) -> list[int]:
    text, merges = args
    answer = fn(text, merges)
    once, six = text + "\n", (text + "\n") * 6
    split = patterns.split
    if set(split(once, patterns.GPT4_SPLIT_PATTERN)) == set(
        split(six, patterns.GPT4_SPLIT_PATTERN)
    ):
        lookups = []
        for sample in (once, six):
            counted = _CountingMerges(merges)
            fn(sample, counted)
            lookups.append(len(counted.looked_up))
        if lookups[0] and lookups[1] > 2 * lookups[0]:
            _reject(
                f"{lookups[1]:,} merge lookups for six copies of a text that took "
                f"{lookups[0]:,} once",
                "six copies hold the same distinct chunks, so a cache answers every repeat: "
                "keep a dict from chunk to ids, and encode a chunk only when it is not in it.",
            )
    return answer


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
        returns=dict_of(PAIR, INT, "a dict {(a, b): count}"),
        hints=(
            _get_stats_hint_short,
            _get_stats_hint_missing_pair,
            _get_stats_hint_order,
            _get_stats_hint_counts,
        ),
    ),
    "merge": lambda: Exercise(
        "merge",
        bpe.merge,
        _merge_cases,
        normalize=list,
        returns=list_of(INT),
        hints=(
            _merge_hint_bounds,
            _merge_hint_overlap,
            _merge_hint_step_one,
            _merge_hint_first_only,
        ),
    ),
    "utf8_encode": lambda: Exercise(
        "utf8_encode",
        utf8.utf8_encode,
        _utf8_encode_cases,
        normalize=bytes,
        returns=BYTES,
        hints=(
            _utf8_encode_hint_refuse,
            _utf8_encode_hint_four_bytes,
            _utf8_encode_hint_range,
            _utf8_encode_hint_length,
            _utf8_encode_hint_markers,
            _utf8_encode_hint_order,
        ),
    ),
    "byte_kind": lambda: Exercise(
        "byte_kind", utf8.byte_kind, _byte_kind_cases, returns=STR, hints=(_byte_kind_hint,)
    ),
    "utf8_decode": lambda: Exercise(
        "utf8_decode",
        utf8.utf8_decode,
        _utf8_decode_cases,
        normalize=list,
        returns=list_of(INT),
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
        returns=dict_of(PAIR, INT, "a dict {(a, b): new_id}, in the order learned"),
        hints=(_train_hint_code_points, _train_hint_count, _train_hint_ids, _train_hint_ties),
    ),
    "build_vocab": lambda: Exercise(
        "build_vocab",
        bpe.build_vocab,
        _build_vocab_cases,
        normalize=dict,
        returns=dict_of(INT, BYTES, "a dict {id: bytes}"),
        hints=(_build_vocab_hint_bytes, _build_vocab_hint_order, _build_vocab_hint_swapped),
    ),
    "decode": lambda: Exercise(
        "decode",
        bpe.decode,
        _decode_cases,
        normalize=str,
        returns=STR,
        hints=(_decode_hint_strict, _decode_hint_joined),
    ),
    "encode": lambda: Exercise(
        "encode",
        bpe.encode,
        _encode_cases,
        normalize=list,
        returns=list_of(INT),
        hints=(_encode_hint_guard, _encode_hint_no_stop, _encode_hint_order),
    ),
    "split": lambda: Exercise(
        "split",
        patterns.split,
        _split_cases,
        normalize=list,
        returns=list_of(STR),
        hints=(_split_hint_coverage, _split_hint_variants, _split_hint_gpt2),
    ),
    "encode_ordinary": lambda: Exercise(
        "encode_ordinary",
        tokenizer.encode_ordinary,
        _encode_ordinary_cases,
        normalize=list,
        returns=list_of(INT),
        hints=(_encode_ordinary_hint_chunks,),
    ),
    "encode_with_specials": lambda: Exercise(
        "encode_with_specials",
        special.encode_with_specials,
        _encode_with_specials_cases,
        normalize=list,
        returns=list_of(INT),
        hints=(_specials_hint_default, _specials_hint_refused_allowed, _specials_hint_allowed),
    ),
    "is_canonical": lambda: Exercise(
        "is_canonical",
        bpe.is_canonical,
        _is_canonical_cases,
        normalize=bool,
        returns=BOOL,
        hints=(_is_canonical_hint,),
    ),
    "apply_merge": lambda: Exercise(
        "apply_merge",
        fast_train.apply_merge,
        _apply_merge_cases,
        returns=dict_of(PAIR, INT, "a dict {(a, b): new count}"),
        pure=False,
        call=_run_apply_merge,
        hints=(_apply_merge_hint,),
    ),
    "merge_lowest": lambda: Exercise(
        "merge_lowest",
        fast_encode.merge_lowest,
        _merge_lowest_cases,
        returns=BOOL,
        pure=False,
        call=_run_merge_lowest,
        hints=(_merge_lowest_hint,),
    ),
    "encode_ordinary_cached": lambda: Exercise(
        "encode_ordinary_cached",
        fast_encode.encode_ordinary_cached,
        _encode_ordinary_cases,
        normalize=list,
        returns=list_of(INT),
        call=_run_encode_cached,
        hints=(_encode_ordinary_hint_chunks, _encode_cached_hint_stale),
    ),
}


def show_solution(name: str) -> None:
    """Print the reference solution of exercise ``name`` as code you could paste into a cell.

    >>> show_solution("merge")  # doctest: +ELLIPSIS
    # Reference solution for `merge` (tokcourse.bpe.merge)
    ...
    """
    exercises.show_solution(exercise(name))


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


def apply_merge(fn: Any) -> Callable:
    """Check ``apply_merge(pair, idx, words, weights, counts, where) -> {pair: new count}``."""
    return _run("apply_merge", fn)


def merge_lowest(fn: Any) -> Callable:
    """Check ``merge_lowest(ids, ranks, merges) -> bool`` (one rank-based step, in place)."""
    return _run("merge_lowest", fn)


def encode_ordinary_cached(fn: Any) -> Callable:
    """Check ``encode_ordinary_cached(text, merges) -> ids`` (each distinct chunk once)."""
    return _run("encode_ordinary_cached", fn)
