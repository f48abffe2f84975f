"""Chapter 03: encoding and decoding with merges (encode, decode_stream, count_spellings).

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from tokcourse import bpe, stream
from tokcourse.course import encoding_steps
from tokcourse.course.checks._encode_cost import (
    NOT_THE_TABLE,
    SHORT_TEXT,
    large_table,
    run_encode,
)
from tokcourse.course.checks._stream_decode import (
    _decode_stream_cases,
    _decode_stream_hint,
    _run_decode_stream_by_hand,
    _stream_in_time,
)
from tokcourse.course.checks.bpe_training import _trained_merges
from tokcourse.course.exercises import (
    INT,
    Case,
    Entry,
    Exercise,
    list_of,
)

# --- encode ------------------------------------------------------------------------------------

_E_SPACE = {(101, 32): 256}  # "e "
_AAA = {(97, 97): 256, (256, 97): 257}
_MIN_NOT_MAX = {(97, 97): 256, (97, 98): 257}  # "aab": merge 256 first, not 257


#: The lowest merge id first, on inputs where each wrong choice gives its own answer: the
#: highest id, the most frequent pair, the smallest pair (by its ids), the leftmost pair, the
#: longest token from the left.
_LOWEST_ID = "as training would have cut it"
_WRONG_CHOICES = (
    ("aab", _MIN_NOT_MAX),
    ("baab", {(97, 98): 256, (97, 97): 257, (98, 97): 258}),
    ("aabab", {(97, 97): 256, (97, 98): 257, (98, 97): 258}),
    ("abbba", {(97, 98): 256, (98, 97): 257, (98, 98): 258}),
    # a merge makes a pair with a lower id than one still waiting: ab, then (ab)c, not cd
    ("abcd", {(97, 98): 256, (256, 99): 257, (99, 100): 258}),
    # "aaa" is a token, but training cut a a a into aa a: the longest match is wrong
    ("aaa", {(97, 97): 256, (97, 256): 257}),
)


def _encode_cases() -> Iterator[Case]:
    yield from (
        Case(("", _AAA)),
        Case(("a", _AAA)),
        Case(("e ", _E_SPACE)),  # one merge leaves a single token: no pair to look at
    )
    for text, merges in _WRONG_CHOICES:
        yield Case((text, dict(merges)), rule=_LOWEST_ID)
    yield from (
        Case(("aaab", _AAA)),
        Case(("aaaab", _AAA)),
        Case(("€", _AAA)),
        Case((SHORT_TEXT, large_table()), rule=NOT_THE_TABLE),
        # the text of an earlier case, another table: the ids depend on both
        Case(("aaab", {(97, 97): 256})),
    )
    rng = random.Random(6)
    for merges in _trained_merges():
        for _ in range(8):
            text = "".join(rng.choice("ab cthe.!👋é") for _ in range(rng.randrange(0, 30)))
            yield Case((text, merges))


def _encode_hint_code_points(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if not isinstance(got, list) or text.isascii() or got == expected:
        return None
    ids = [ord(c) for c in text]
    while len(ids) >= 2:
        pairs = [p for p in bpe.get_stats(ids) if p in merges]
        if not pairs:
            break
        pair = min(pairs, key=merges.__getitem__)
        ids = bpe.merge(ids, pair, merges[pair])
    if got != ids:
        return None
    c = next(c for c in text if not c.isascii())
    return (
        f"your ids start from the code points of the text (ord({c!r}) is {ord(c)}), not from "
        f"its UTF-8 bytes ({list(c.encode('utf-8'))}). The merges join byte ids 0 to 255, and "
        "a code point above 255 is no byte: start from list(text.encode('utf-8'))."
    )


def _encode_hint_guard(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, ValueError) and "empty" in str(got):
        return (
            "min() got no pairs: when fewer than two tokens are left there is nothing to merge. "
            "Test len(ids) >= 2 in the while condition, so it is checked after every merge."
        )
    return None


def _merge_once(ids: list[int], pair: tuple[int, int], idx: int) -> list[int]:
    """``ids`` with only the leftmost occurrence of ``pair`` replaced by ``idx``."""
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == pair:
            return [*ids[:i], idx, *ids[i + 2 :]]
    return ids


def _encode_choosing(text: str, merges: dict, choose: Callable, once: bool = False) -> list[int]:
    """BPE that picks the next pair with ``choose(candidates, ids)``: for the wrong orders;
    ``once``: replace only its leftmost occurrence at each step."""
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        candidates = [p for p in bpe.get_stats(ids) if p in merges]
        if not candidates:
            break
        pair = choose(candidates, ids)
        ids = (_merge_once if once else bpe.merge)(ids, pair, merges[pair])
    return ids


def _encode_rounds(text: str, merges: dict) -> list[int]:
    """Every pair present, in the order of their ids, applied before the pairs are counted
    again: for the hint."""
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        present = sorted((p for p in bpe.get_stats(ids) if p in merges), key=merges.get)
        if not present:
            break
        for pair in present:
            ids = bpe.merge(ids, pair, merges[pair])
    return ids


#: Wrong ways to choose the next pair, in words, with how to compute each.
_CHOICES: tuple[tuple[str, Callable], ...] = (
    ("the pair with the highest merge id", lambda c, ids, m: max(c, key=m.get)),
    ("the most frequent pair", lambda c, ids, m: max(c, key=lambda p: bpe.get_stats(ids)[p])),
    ("the smallest pair (comparing the ids themselves)", lambda c, ids, m: min(c)),
    ("the leftmost pair that has a merge", lambda c, ids, m: c[0]),
)


def _encode_longest(text: str, merges: dict) -> list[int]:
    """Greedy longest match (as WordPiece encodes): from the left, the longest token of the
    vocabulary that the remaining bytes start with (for the hint)."""
    token_id = {token: idx for idx, token in bpe.build_vocab(merges).items()}
    longest = max(map(len, token_id))
    data, ids, i = text.encode("utf-8"), [], 0
    while i < len(data):
        j = next(j for j in range(min(len(data), i + longest), i, -1) if data[i:j] in token_id)
        ids.append(token_id[data[i:j]])
        i = j
    return ids


#: Greedy longest match, in words.
_LONGEST = "it takes the longest token of the vocabulary, from the left (greedy longest match)"


def _wrong_orders(text: str, merges: dict, got: list[int]) -> list[str]:
    """Every wrong rule that gives ``got`` on this input, one description per rule."""
    ways = []
    for what, choose in _CHOICES:
        pick = lambda c, ids, f=choose: f(c, ids, merges)  # noqa: E731
        if got == _encode_choosing(text, merges, pick):
            ways.append(f"each step merges {what}")
        elif got == _encode_choosing(text, merges, pick, once=True):
            ways.append(f"each step merges {what}, at its leftmost occurrence only")
    if got == _encode_longest(text, merges):
        ways.append(_LONGEST)
    return ways


def _encode_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if not isinstance(got, list) or got == expected:
        return None
    ids = list(text.encode("utf-8"))
    first = min((p for p in bpe.get_stats(ids) if p in merges), key=merges.__getitem__)
    if got == _encode_rounds(text, merges):
        return (
            "your ids are what encoding gives when it applies every pair present, in the "
            "order of their ids, before it looks at the pairs again: a merge makes new pairs, "
            "and one of them can have a lower id than a pair still waiting in your list. "
            f"Apply one merge, the lowest id ({first} -> {merges[first]} on {text!r}), then "
            "look at the pairs again."
        )
    ways = _wrong_orders(text, merges, got)
    if not ways:
        return None
    fix = (
        "Apply merges in the order they were learned: at each step take the pair with the "
        "lowest merge id (min over merges.get(pair, inf)). Here the first merge is "
        f"{first} -> {merges[first]}, the lowest id among the pairs of {text!r}."
    )
    if ways == [_LONGEST]:
        return (
            "your ids are what greedy longest match gives: at each position, the longest token "
            "of the vocabulary that the bytes start with (WordPiece's rule). A text that "
            "contains the bytes of a token is not always cut into that token: training merged "
            f"in the order of the ids, and on {text!r} that order gives {expected}. " + fix
        )
    did = "; or when ".join(ways)
    alike = " (this input gives the same ids for each of these)" if len(ways) > 1 else ""
    return f"your ids are what encoding gives when {did}{alike}. " + fix


def _encode_hint_other_table(case: Case, expected: Any, got: Any) -> str | None:
    """The ids of the same text under another table of the cases: a cache keyed by text."""
    text, merges = case.args
    if not isinstance(got, list) or got == expected:
        return None
    for other in _encode_cases():
        other_text, table = other.args
        if other_text == text and table != merges and len(table) < 100:
            if got == bpe.encode(text, table):
                return (
                    f"your ids are those of {text!r} under another table the check passed "
                    f"earlier, {table}: the ids depend on the merges too. A cache (or any "
                    "state kept between calls) keyed by the text alone hands back the other "
                    "table's ids; encode from the merges you are given, on every call."
                )
    return None


def _encode_zero_default(text: str, merges: dict) -> list[int]:
    """What encode gives with ``merges.get(pair, 0)``: a pair without a merge ranks first."""
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = min(bpe.get_stats(ids), key=lambda p: merges.get(p, 0))
        if pair not in merges:
            break
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


def _encode_hint_zero_default(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if not isinstance(got, list) or got == expected:
        return None
    if got == _encode_zero_default(text, merges):
        return (
            "your encode stops while pairs with a merge are left: a pair without a merge "
            "ranks first when it is looked up as merges.get(pair, 0), so min picks it and "
            "the loop ends. Rank pairs without a merge after every real merge: "
            "merges.get(pair, float('inf'))."
        )
    return None


def _encode_hint_no_stop(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, TypeError) and "NoneType" in str(got):
        return (
            f"TypeError ({got}): merges.get(pair) is None for a pair that was never merged, "
            "and min cannot compare None with a merge id. Give such pairs a rank after every "
            "real merge (merges.get(pair, float('inf'))), and stop when even the pair min "
            "picks has no merge: then no pair of the text can merge."
        )
    if isinstance(got, KeyError):
        return (
            "the pair with the lowest rank may have no rank at all (no pair of this text was "
            "ever merged): stop when it is not in merges, instead of looking it up."
        )
    return None


# --- count_spellings --------------------------------------------------------------------------

#: The words of the exercise text for the rules some inputs test.
_EMPTY_TEXT = "empty text has exactly one spelling"
_NOT_LISTED = "without listing them"
_BYTES_NOT_CHARACTERS = "of its UTF-8 bytes"


def _count_spellings_cases() -> Iterator[Case]:
    yield Case(("", {}), rule=_EMPTY_TEXT)
    yield Case(("", _AAA), rule=_EMPTY_TEXT)
    yield Case(("a", {}))
    yield Case(("ab", {}))
    yield Case(("aa", _AAA))
    yield Case(("aaa", {(97, 97): 256}))
    yield Case(("aaa", _AAA))
    yield Case(("aaab", _AAA))
    yield Case(("e ", _E_SPACE))
    yield Case(("é", {(195, 169): 256}), rule=_BYTES_NOT_CHARACTERS)
    yield Case(("€", {(226, 130): 256, (256, 172): 257}), rule=_BYTES_NOT_CHARACTERS)
    yield Case(("€a", {(226, 130): 256, (172, 97): 257}), rule=_BYTES_NOT_CHARACTERS)
    # far too many spellings to list: 200 a's with a, aa and aaa
    yield Case(("a" * 200, _AAA), rule=_NOT_LISTED)
    rng = random.Random(13)
    for merges in _trained_merges():
        for _ in range(5):
            text = "".join(rng.choice("ab cthe.👋é") for _ in range(rng.randrange(0, 25)))
            yield Case((text, merges))


def _spellings_without_high_bytes(text: str, merges: dict) -> int:
    """What counting gives when the single bytes 0x80 to 0xFF are left out (for the hint)."""
    data = text.encode("utf-8")
    tokens = [t for t in bpe.build_vocab(merges).values() if len(t) > 1 or t[0] < 0x80]
    ways = [1] + [0] * len(data)
    for i in range(1, len(data) + 1):
        ways[i] = sum(ways[i - len(t)] for t in tokens if data.endswith(t, 0, i))
    return ways[-1]


def _spellings_of_characters(text: str, merges: dict) -> int:
    """What counting cuts of the characters into the tokens that are text gives (for the
    hint)."""
    tokens = []
    for token in bpe.build_vocab(merges).values():
        try:
            tokens.append(token.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    ways = [1] + [0] * len(text)
    for i in range(1, len(text) + 1):
        ways[i] = sum(ways[i - len(t)] for t in tokens if text.endswith(t, 0, i))
    return ways[-1]


def _spellings_capped(text: str, merges: dict, cap: int) -> int:
    """What counting gives when only tokens of at most ``cap`` bytes are tried (for the
    hint)."""
    data = text.encode("utf-8")
    tokens = [t for t in bpe.build_vocab(merges).values() if len(t) <= cap]
    ways = [1] + [0] * len(data)
    for i in range(1, len(data) + 1):
        ways[i] = sum(ways[i - len(t)] for t in tokens if data.endswith(t, 0, i))
    return ways[-1]


def _spellings_per_encoded_token(text: str, merges: dict) -> int:
    """The product, over the tokens of ``encode(text)``, of the spellings of each token's
    bytes (for the hint)."""
    vocab = bpe.build_vocab(merges)
    tokens = list(vocab.values())
    product = 1
    for idx in bpe.encode(text, merges):
        data = vocab[idx]
        ways = [1] + [0] * len(data)
        for i in range(1, len(data) + 1):
            ways[i] = sum(ways[i - len(t)] for t in tokens if data.endswith(t, 0, i))
        product *= ways[-1]
    return product


def _count_spellings_hint(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if got is None and len(text) > 100:
        return (
            f"{text[:3]!r}... has {expected:.3g} spellings: no program can list them one by "
            "one. Count them instead: the spellings of the first i bytes are the sum, over the "
            "tokens that end exactly at byte i, of the spellings of what comes before the "
            "token (a list ways[0..n], filled from the left)."
        )
    if isinstance(got, KeyError):
        return (
            f"KeyError {got}: build the vocabulary from the merges in the order they were "
            "learned (the dict's own order; your build_vocab does), so that both halves of "
            "each merge are there before it."
        )
    if not isinstance(got, int):
        return None
    if got == _spellings_per_encoded_token(text, merges) != expected:
        return (
            "your count multiplies the spellings of each token of encode(text): that misses "
            "the spellings whose tokens cross the boundaries between encode's tokens (on "
            f"{text!r}, encode gives {bpe.encode(text, merges)}). Count over the bytes of the "
            "whole text: the spellings of the first i bytes are the sum, over the tokens that "
            "end exactly at byte i, of the spellings of what comes before the token."
        )
    if text == "" and got != 1:
        return (
            "the empty text has exactly one spelling, the empty sequence of ids: ways[0] = 1, "
            "which is also what makes the sums for the longer prefixes come out right."
        )
    high = got == _spellings_without_high_bytes(text, merges) != expected
    characters = got == _spellings_of_characters(text, merges) != expected
    all_bytes = (
        "the vocabulary has all 256 single bytes, 0x80 to 0xFF too: they are not text on "
        "their own, but every byte of a character is a token, so a character of several "
        "bytes can always be spelled byte by byte (build the vocabulary from range(256), "
        "then the merges)"
    )
    utf8_bytes = (
        "count over the UTF-8 bytes of the text, not its characters: a token may hold part "
        f"of a character (here text.encode('utf-8') is {list(text.encode('utf-8'))})"
    )
    if high and characters:
        return (
            "count the cuts of the UTF-8 bytes of the text into tokens of the whole vocabulary, "
            "which has all 256 single bytes: 0x80 to 0xFF are not text on their own, but each "
            "is a token, so a character of several bytes can also be spelled byte by byte "
            f"(here text.encode('utf-8') is {list(text.encode('utf-8'))})."
        )
    longest = max(map(len, bpe.build_vocab(merges).values()))
    for cap in range(1, longest):
        if got == _spellings_capped(text, merges, cap) != expected:
            return (
                f"your count looks only at tokens of up to {cap} byte{'s' * (cap > 1)}: a "
                "merge can join two merged tokens, so a token can be as long as the longest "
                f"in the vocabulary ({longest} bytes here). At each position, try every "
                "token length up to the longest."
            )
    if high:
        return all_bytes[0].upper() + all_bytes[1:] + "."
    if characters or (not text.isascii() and got < expected):
        return utf8_bytes[0].upper() + utf8_bytes[1:] + "."
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "decode_stream": Entry(
        "decode_stream(ids, vocab) -> iterator of str",
        lambda: Exercise(
            "decode_stream",
            stream.decode_stream,
            _decode_stream_cases,
            solution=encoding_steps.decode_stream,
            call=_run_decode_stream_by_hand,
            accepts=_stream_in_time,
            hints=(_decode_stream_hint,),
        ),
    ),
    "encode": Entry(
        "encode(text, merges) -> ids",
        lambda: Exercise(
            "encode",
            bpe.encode,
            _encode_cases,
            solution=encoding_steps.encode,
            call=run_encode,
            normalize=list,
            returns=list_of(INT),
            hints=(
                _encode_hint_guard,
                _encode_hint_code_points,
                _encode_hint_no_stop,
                _encode_hint_zero_default,
                _encode_hint_other_table,
                _encode_hint_order,
            ),
            ordered=("merges",),
        ),
    ),
    "count_spellings": Entry(
        "count_spellings(text, merges) -> int",
        lambda: Exercise(
            "count_spellings",
            bpe.count_spellings,
            _count_spellings_cases,
            solution=encoding_steps.count_spellings,
            returns=INT,
            hints=(_count_spellings_hint,),
            ordered=("merges",),
        ),
    ),
}
