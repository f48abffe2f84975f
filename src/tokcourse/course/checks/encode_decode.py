"""Chapter 03: decoding and encoding with merges (decode, decode_stream, encode, is_canonical).

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import codecs
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tokcourse import bpe, stream
from tokcourse.course.checks.bpe_training import _trained_merges
from tokcourse.course.exercises import (
    BOOL,
    INT,
    STR,
    Case,
    Entry,
    Exercise,
    Violation,
    list_of,
)

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


# --- decode_stream -----------------------------------------------------------------------------

# tokens that end inside a character, as real byte-level vocabularies have them: the space and
# first three bytes of an emoji, the first two bytes of "’" and its last, a whole Hangul
# syllable, the end of one syllable glued to the start of the next
_PARTIAL_TOKENS = [b" \xf0\x9f\x91", b"\xe2\x80", b"\x99", "안".encode(), b"\x88\xeb", b"hi"]


def _stream_vocab() -> dict[int, bytes]:
    return bpe.build_vocab({}) | {256 + i: t for i, t in enumerate(_PARTIAL_TOKENS)}


def _decode_stream_cases() -> Iterator[Case]:
    vocab = _stream_vocab()
    for ids in (
        [],
        [104, 105],
        list("€".encode()),
        list("👋 안녕".encode()),
        [256, 0x8B, 33],  # " 👋!"
        [257, 258],  # "’"
        [226],  # the stream ends inside "€"
        [104, 226, 130],
        [0xE2, 0x82, 65],  # a broken character, then "A"
        [0xED, 0xA0, 0x80, 65],  # an encoded surrogate: the decoder holds ED A0 back
        [128],
        [0xFF, 65],
        [0xF0, 0x9F],
        [258, 105],
        [259, 260, 0x85, 0x95],  # "안녕"
        [261, 257],
    ):
        yield Case((ids, vocab))
    merged = bpe.build_vocab(_trained_merges()[2])  # trained on text with "é" and "👋"
    rng = random.Random(11)
    for table in (vocab, merged):
        pool = sorted(table)
        hard = [0x80, 0x9F, 0xBF, 0xC2, 0xE0, 0xE2, 0xED, 0xF0, 0xF4, 0xFF, 65]
        for _ in range(30):
            ids = [
                rng.choice(hard) if rng.random() < 0.3 else rng.choice(pool)
                for _ in range(rng.randrange(0, 12))
            ]
            yield Case((ids, table))


@dataclass(frozen=True)
class _Piece:
    """Text that came out of a stream, and how many ids had been read when it did."""

    text: str
    after: int

    def __repr__(self) -> str:
        return f"{self.text!r} after {self.after} id{'s' * (self.after != 1)}"


def _run_decode_stream(fn: Callable, args: tuple, kwargs: dict) -> list[_Piece]:
    """Feed the ids one at a time; the text that came out, with how many ids had been read.

    Pieces that came out together (between two reads) are joined and empty ones dropped, so
    any correct way to yield passes; reading ahead, or holding text back, does not.
    """
    ids, vocab = args
    read = 0

    def one_at_a_time() -> Iterator[int]:
        nonlocal read
        for idx in ids:
            read += 1
            yield idx

    answer = fn(one_at_a_time(), vocab)
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Iterable):
        raise Violation(
            f"returned a {type(answer).__name__}, not an iterator of text pieces",
            "decode_stream is a generator: yield each piece of text as it becomes complete "
            "(a function with `yield` in it returns an iterator).",
        )
    out: list[_Piece] = []
    for piece in answer:
        if not isinstance(piece, str):
            raise Violation(
                f"yielded a {type(piece).__name__}: {piece!r:.60}",
                "yield str pieces (decoded text), not bytes or ids.",
            )
        if piece and out and out[-1].after == read:
            out[-1] = _Piece(out[-1].text + piece, read)
        elif piece:
            out.append(_Piece(piece, read))
    return out


def _when(pieces: list[_Piece]) -> list[int]:
    """For each character of the stream's text, how many ids had been read when it came out."""
    return [piece.after for piece in pieces for _ in piece.text]


def _decode_stream_timing(case: Case, expected: list[_Piece], got: list[_Piece]) -> str:
    """The right text at the wrong time: say which way, early or late, and where."""
    text = "".join(piece.text for piece in expected)
    i, theirs, ours = next(
        (i, a, b) for i, (a, b) in enumerate(zip(_when(got), _when(expected), strict=True))
        if a != b
    )  # fmt: skip
    ids, vocab = case.args
    if theirs < ours:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        for idx in ids[:theirs]:
            decoder.decode(vocab[idx])
        held = decoder.getstate()[0]
        return (
            f"{text[i]!r} came out after {theirs} id{'s' * (theirs != 1)}, earlier than "
            f"Python's incremental decoder lets it out (after {ours}): at that point the "
            f"decoder still holds {held!r}, waiting for the next byte (it waits after ED "
            "A0..BF, the start of an encoded surrogate, too). The check follows that decoder: "
            "feed each token's bytes to one codecs.getincrementaldecoder('utf-8')"
            "(errors='replace') and yield what it returns."
        )
    return (
        f"{text[i]!r} came out after {theirs} ids, later than it was complete (after {ours}): "
        "yield after each id the text it completes, before reading the next id (do not "
        "collect the ids or the text first)."
    )


def _decode_stream_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, UnicodeDecodeError):
        return (
            "ids can end inside a character, or spell bytes that are not UTF-8: create the "
            "incremental decoder with errors='replace'."
        )
    if not isinstance(got, list) or not isinstance(expected, list):
        return None
    text = "".join(piece.text for piece in got)
    want = "".join(piece.text for piece in expected)
    if text == want:
        return _decode_stream_timing(case, expected, got)
    if want.startswith(text) and set(want[len(text) :]) == {"\ufffd"}:
        return (
            "the end of the stream is missing: bytes of an unfinished character are still held "
            "when the ids run out. After the loop, call decode(b'', final=True) and yield what "
            "it returns."
        )
    if text.count("\ufffd") > want.count("\ufffd"):
        return (
            "a character split across tokens became '\ufffd': decode with one incremental "
            "decoder for the whole stream (codecs.getincrementaldecoder('utf-8')), which keeps "
            "an unfinished character's bytes until the rest arrives; never decode each token "
            "on its own, and do not pass final=True before the end."
        )
    return None


# --- encode ------------------------------------------------------------------------------------

_E_SPACE = {(101, 32): 256}  # "e "
_AAA = {(97, 97): 256, (256, 97): 257}
_MIN_NOT_MAX = {(97, 97): 256, (97, 98): 257}  # "aab": merge 256 first, not 257


#: The lowest merge id first, on inputs where each wrong choice gives its own answer: the
#: highest id, the most frequent pair, the smallest pair (by its ids), the leftmost pair.
_LOWEST_ID = "lowest merge id"
_WRONG_CHOICES = (
    ("aab", _MIN_NOT_MAX),
    ("baab", {(97, 98): 256, (97, 97): 257, (98, 97): 258}),
    ("aabab", {(97, 97): 256, (97, 98): 257, (98, 97): 258}),
    ("abbba", {(97, 98): 256, (98, 97): 257, (98, 98): 258}),
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


#: Wrong ways to choose the next pair, in words, with how to compute each.
_CHOICES: tuple[tuple[str, Callable], ...] = (
    ("the pair with the highest merge id", lambda c, ids, m: max(c, key=m.get)),
    ("the most frequent pair", lambda c, ids, m: max(c, key=lambda p: bpe.get_stats(ids)[p])),
    ("the smallest pair (comparing the ids themselves)", lambda c, ids, m: min(c)),
    ("the leftmost pair that has a merge", lambda c, ids, m: c[0]),
)


def _encode_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if not isinstance(got, list) or got == expected:
        return None
    ways = [
        what
        for what, choose in _CHOICES
        if got == _encode_choosing(text, merges, lambda c, ids, f=choose: f(c, ids, merges))
    ]
    if not ways:
        return None
    ids = list(text.encode("utf-8"))
    first = min((p for p in bpe.get_stats(ids) if p in merges), key=merges.__getitem__)
    did = ways[0] if len(ways) == 1 else ", ".join(ways[:-1]) + " or " + ways[-1]
    alike = " (this input cannot tell these apart)" if len(ways) > 1 else ""
    return (
        f"your ids are what encoding gives when each step merges {did}{alike}. Apply merges "
        "in the order they were learned: at each step take the pair with the lowest merge id "
        f"(min over merges.get(pair, inf)). Here the first merge is {first} -> "
        f"{merges[first]}, the lowest id among the pairs of {text!r}."
    )


def _encode_hint_no_stop(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, KeyError):
        return (
            "the pair with the lowest rank may have no rank at all (no pair of this text was "
            "ever merged): stop when it is not in merges, instead of looking it up."
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


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "decode": Entry(
        "decode(ids, vocab) -> str",
        lambda: Exercise(
            "decode",
            bpe.decode,
            _decode_cases,
            normalize=str,
            returns=STR,
            hints=(_decode_hint_strict, _decode_hint_joined),
        ),
    ),
    "decode_stream": Entry(
        "decode_stream(ids, vocab) -> iterator of str",
        lambda: Exercise(
            "decode_stream",
            stream.decode_stream,
            _decode_stream_cases,
            call=_run_decode_stream,
            hints=(_decode_stream_hint,),
        ),
    ),
    "encode": Entry(
        "encode(text, merges) -> ids",
        lambda: Exercise(
            "encode",
            bpe.encode,
            _encode_cases,
            normalize=list,
            returns=list_of(INT),
            hints=(_encode_hint_guard, _encode_hint_no_stop, _encode_hint_order),
        ),
    ),
    "is_canonical": Entry(
        "is_canonical(ids, merges) -> bool",
        lambda: Exercise(
            "is_canonical",
            bpe.is_canonical,
            _is_canonical_cases,
            normalize=bool,
            returns=BOOL,
            hints=(_is_canonical_hint,),
            ordered=("merges",),
        ),
    ),
}
