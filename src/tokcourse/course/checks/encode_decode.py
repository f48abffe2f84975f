"""Chapter 03: encoding and decoding with merges (encode, decode_stream, count_spellings).

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import codecs
import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tokcourse import bpe, stream
from tokcourse.course.checks import _no_codec
from tokcourse.course.checks.bpe_training import _trained_merges
from tokcourse.course.exercises import (
    INT,
    Case,
    Entry,
    Exercise,
    Violation,
    list_of,
)

# --- decode_stream -----------------------------------------------------------------------------

# tokens that end inside a character, as real byte-level vocabularies have them: the space and
# first three bytes of an emoji, the first two bytes of "’" and its last, a whole Hangul
# syllable, the end of one syllable glued to the start of the next
_PARTIAL_TOKENS = [b" \xf0\x9f\x91", b"\xe2\x80", b"\x99", "안".encode(), b"\x88\xeb", b"hi"]


def _stream_vocab() -> dict[int, bytes]:
    return bpe.build_vocab({}) | {256 + i: t for i, t in enumerate(_PARTIAL_TOKENS)}


class _Ids(list):
    """The ids of a case, shown as what decode_stream receives: an iterator (no len, no
    indexing), read one id at a time."""

    def __repr__(self) -> str:
        return f"iter({list.__repr__(self)})"


def _decode_stream_cases() -> Iterator[Case]:
    vocab = _stream_vocab()
    for ids in (
        [],
        [104, 105],
        list("€".encode()),
        list("👋 안녕".encode()),
        [256, 0x8B, 33],  # " 👋!"
        [257, 258],  # "’"
        [128],  # a continuation byte with nothing before it: broken at once
        [226],  # the stream ends inside "€"
        [104, 226, 130],
        [0xE2, 0x82, 65],  # a broken character, then "A"
        [0xED, 0xA0, 0x80, 65],  # an encoded surrogate: the decoder holds ED A0 back
        [0xFF, 65],
        [0xF0, 0x9F],
        [258, 105],
        [259, 260, 0x85, 0x95],  # "안녕"
        [261, 257],
    ):
        yield Case((_Ids(ids), vocab))
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
            yield Case((_Ids(ids), table))


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
    if isinstance(answer, (list, tuple)):
        raise Violation(
            f"returned a {type(answer).__name__} of {len(answer)} pieces, not a generator",
            f"a {type(answer).__name__} exists only once every id has been read, so nothing "
            "comes out while the ids arrive. Make decode_stream a generator: `yield` each piece "
            "as soon as it is complete, instead of appending it to a list and returning it.",
        )
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


#: Codec names a student may reach for that are not UTF-8 at all.
_OTHER_CODECS = frozenset({"latin-1", "latin1", "latin_1", "iso-8859-1", "iso8859-1", "cp1252"})

_STREAM_BY_HAND = (
    "the exercise asks you to decide yourself, with byte_kind, where an unfinished character "
    "starts: your code may not use Python's codec (bytes.decode, str.encode, the codecs module "
    "and its incremental decoders, or a codec's name such as 'utf-8'), nor call anything named "
    "decode (the chapter's, or a StreamDecoder's), which would decide for you. Hold back the bytes "
    "from the last lead byte that still lacks continuation bytes, and turn the bytes before "
    "it into text with utf8_text(data)."
)


def _strings_in(fn: Callable) -> set[str]:
    """The string constants of ``fn``'s code and of the code nested in it, lowercased."""
    found: set[str] = set()
    codes = [getattr(fn, "__code__", None)]
    while codes:
        code = codes.pop()
        if code is None:
            continue
        for const in code.co_consts:
            if isinstance(const, str):
                found.add(const.lower())
            elif hasattr(const, "co_consts"):
                codes.append(const)
    return found


def _run_decode_stream_by_hand(fn: Callable, args: tuple, kwargs: dict) -> list[_Piece]:
    """Refuse a decoder whose code hands the work to Python's codec (the "work" rule of
    chapter 01), then feed it the ids one at a time (:func:`_run_decode_stream`)."""
    latin = sorted(_OTHER_CODECS & _strings_in(fn))
    if latin:
        _no_codec._reject(
            f"your code names the codec {latin[0]!r}",
            f"{latin[0]} maps every byte to one character, so a character of several UTF-8 "
            "bytes comes out as several wrong ones ('é' as 'Ã©'), and it never gives '\ufffd'. "
            "The ids spell UTF-8: " + _STREAM_BY_HAND,
        )
    uses = _no_codec._codec_uses(fn)
    if uses:
        _no_codec._reject(f"your code uses {', '.join(uses)}", _STREAM_BY_HAND)
    return _run_decode_stream(fn, args, kwargs)


def _when(pieces: list[_Piece]) -> list[int]:
    """For each character of the stream's text, how many ids had been read when it came out."""
    return [piece.after for piece in pieces for _ in piece.text]


def _pythons_pieces(ids: list[int], vocab: dict) -> list[_Piece]:
    """What Python's own incremental UTF-8 decoder lets out, and when: the earliest the check
    accepts (it lets some starts that no byte can complete, such as E0 80, out at once)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    out = [_Piece(decoder.decode(vocab[idx]), i + 1) for i, idx in enumerate(ids)]
    out.append(_Piece(decoder.decode(b"", final=True), len(ids)))
    return [piece for piece in out if piece.text]


def _stream_in_time(case: Case, expected: Any, got: Any) -> bool:
    """The right text, each character out no later than the rule of the text lets it out
    (the reference's timing) and no earlier than Python's incremental decoder lets it out."""
    if not isinstance(got, list) or not all(isinstance(p, _Piece) for p in got):
        return False
    ids, vocab = case.args
    text = "".join(piece.text for piece in expected)
    if "".join(piece.text for piece in got) != text:
        return False
    earliest, latest = _when(_pythons_pieces(ids, vocab)), _when(expected)
    return all(a <= t <= b for a, t, b in zip(earliest, _when(got), latest, strict=True))


def _held_after(ids: list[int], vocab: dict, n: int) -> bytes:
    """The bytes the rule holds back after reading ``n`` ids."""
    data = b"".join(vocab[idx] for idx in ids[:n])
    return data[stream.unfinished(data) :]


def _cut_by_bit_patterns(data: bytes) -> int:
    """Where an unfinished character starts, for a decoder that takes every 11xxxxxx byte
    for a lead byte (for the hints)."""
    for back in range(1, min(3, len(data)) + 1):
        b = data[-back]
        if b >> 6 == 0b10:
            continue
        if b >> 6 == 0b11 and back < (2 if b < 0xE0 else 3 if b < 0xF0 else 4):
            return len(data) - back
        break
    return len(data)


def _held_non_ascii(data: bytes) -> int:
    """Where the trailing run of bytes 0x80 to 0xFF starts: a decoder that holds back every
    non-ASCII byte (for the hint)."""
    cut = len(data)
    while cut and data[cut - 1] >= 0x80:
        cut -= 1
    return cut


def _counting_everything(ids: Iterable[int], vocab: dict) -> Iterator[str]:
    """A decoder that, after a lead byte, waits for as many more bytes as it announces,
    whatever they are (for the hint)."""
    held, needs = b"", 0
    for idx in ids:
        for b in vocab[idx]:
            held += bytes([b])
            if needs:
                needs -= 1
            elif 0xC2 <= b <= 0xF4:
                needs = 1 if b < 0xE0 else 2 if b < 0xF0 else 3
        if not needs:
            yield bpe.utf8_text(held)
            held = b""
    yield bpe.utf8_text(held)


def _holding(cut_at: Callable) -> Callable:
    """A decoder that holds back the bytes from ``cut_at(data)`` on (for the hints)."""

    def decode_stream(ids: Iterable[int], vocab: dict) -> Iterator[str]:
        held = b""
        for idx in ids:
            data = held + vocab[idx]
            held = data[cut_at(data) :]
            yield bpe.utf8_text(data[: cut_at(data)])
        yield bpe.utf8_text(held)

    return decode_stream


def _behaves_like(case: Case, got: list[_Piece], fn: Callable) -> bool:
    try:
        return _run_decode_stream(fn, case.args, {}) == got
    except Exception:
        return False


def _decode_stream_timing(case: Case, expected: list[_Piece], got: list[_Piece]) -> str:
    """The right text at the wrong time: say which way, early or late, and where."""
    ids, vocab = case.args
    if _behaves_like(case, got, _counting_everything):
        return (
            "the text comes out late: after a lead byte your decoder waits for as many more "
            "bytes as it announces, whatever they are. Only continuation bytes (10xxxxxx) "
            "continue a character: a lead byte followed by any other byte is broken at once, "
            "and no later byte can complete it. Let it out ('\ufffd') with the text after it."
        )
    non_ascii = _behaves_like(case, got, _holding(_held_non_ascii))
    if non_ascii and not _behaves_like(case, got, _holding(_cut_by_bit_patterns)):
        return (
            "the text comes out late: your decoder holds back every byte from 0x80 up, so a "
            "complete character (or a broken byte) waits for the next ASCII byte. Hold back "
            "only an unfinished character at the end, a lead byte followed by fewer "
            "continuation bytes than it announces; a complete character goes out at once."
        )
    text = "".join(piece.text for piece in expected)
    earliest = _when(_pythons_pieces(ids, vocab))
    latest = _when(expected)
    for i, (a, t, b) in enumerate(zip(earliest, _when(got), latest, strict=True)):
        if t < a:
            held = _held_after(ids, vocab, t)
            return (
                f"{text[i]!r} came out after {t} id{'s' * (t != 1)}, too early: the bytes read "
                f"so far end with {held!r}, a lead byte followed by fewer continuation bytes "
                "than it announces, which the next id may complete. Hold such bytes back and "
                "decode them with the bytes that come next."
            )
        if t > b:
            data = b"".join(vocab[idx] for idx in ids[:b])
            never = [x for x in data[-4:] if x in (0xC0, 0xC1) or x >= 0xF5]
            if text[i] == "\ufffd" and never:
                return (
                    f"'\ufffd' came out after {t} ids, later than it was complete (after {b}): "
                    f"the byte {never[-1]:#04X} was held back as if it began a character, but "
                    "only the bytes C2 to F4 can begin one (byte_kind calls C0, C1 and F5 to FF "
                    "'invalid': no byte that follows makes them a character). A byte that "
                    "cannot begin a character is broken at once: let utf8_text turn it into "
                    "'\ufffd' right away."
                ) + (
                    " Nor hold back a complete character: a decoder that holds every byte from "
                    "0x80 up does both; a complete character goes out at once."
                    if non_ascii
                    else ""
                )
            return (
                f"{text[i]!r} came out after {t} ids, later than it was complete (after {b}): "
                "yield after each id the text it completes, before reading the next id, and "
                "hold back only an unfinished character (a lead byte followed by fewer "
                "continuation bytes than it announces), not complete ones."
            )
    return "the text comes out at the right moments, but in other pieces"


def _decode_stream_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, TypeError) and ("len()" in str(got) or "subscriptable" in str(got)):
        return (
            f"TypeError ({got}): ids is an iterator, as the ids of a model arrive one at a "
            "time; it has no len() and no indexing (ids[i]). Read it with `for idx in ids:` "
            "and keep what you need (the bytes held back) in your own variables."
        )
    if isinstance(got, ValueError):  # UnicodeDecodeError, or chapter 01's utf8_decode
        return (
            "ids can end inside a character, or spell bytes that are not UTF-8, and a strict "
            f"decoder raises on them ({type(got).__name__}): turn bytes into text with "
            "utf8_text(data), which puts '\ufffd' where they are broken (errors='replace')."
        )
    if not isinstance(got, list) or not isinstance(expected, list):
        return None
    text = "".join(piece.text for piece in got)
    want = "".join(piece.text for piece in expected)
    if text == want:
        return _decode_stream_timing(case, expected, got)
    ids, vocab = case.args
    held = _held_after(ids, vocab, len(ids))
    if held and want.startswith(text) and want[len(text) :] == bpe.utf8_text(held):
        return (
            "the end of the stream is missing: the bytes of an unfinished character are still "
            "held back when the ids run out. After the loop, yield utf8_text(held), which "
            "turns them into '\ufffd' (dropping them would lose the mark)."
        )
    if text.count("\ufffd") > want.count("\ufffd"):
        return (
            "a character split across tokens became '\ufffd': hold back the bytes of an "
            "unfinished character (a lead byte followed by fewer continuation bytes than it "
            "announces: 110xxxxx two bytes in all, 1110xxxx three, 11110xxx four) and decode "
            "them together with the bytes of the next ids, never each token on its own."
        )
    if text.count("\ufffd") < want.count("\ufffd"):
        return (
            "bytes that are not UTF-8 vanished (as errors='ignore' drops them): let utf8_text "
            "turn them into '\ufffd', so the reader sees where the text was broken."
        )
    return None


# --- encode ------------------------------------------------------------------------------------

_E_SPACE = {(101, 32): 256}  # "e "
_AAA = {(97, 97): 256, (256, 97): 257}
_MIN_NOT_MAX = {(97, 97): 256, (97, 98): 257}  # "aab": merge 256 first, not 257


#: The lowest merge id first, on inputs where each wrong choice gives its own answer: the
#: highest id, the most frequent pair, the smallest pair (by its ids), the leftmost pair.
_LOWEST_ID = "as training would have cut it"
_WRONG_CHOICES = (
    ("aab", _MIN_NOT_MAX),
    ("baab", {(97, 98): 256, (97, 97): 257, (98, 97): 258}),
    ("aabab", {(97, 97): 256, (97, 98): 257, (98, 97): 258}),
    ("abbba", {(97, 98): 256, (98, 97): 257, (98, 98): 258}),
    # a merge makes a pair with a lower id than one still waiting: ab, then (ab)c, not cd
    ("abcd", {(97, 98): 256, (256, 99): 257, (99, 100): 258}),
)

#: The cost rule: a large table and a short text; the merges looked at are counted.
_NOT_THE_TABLE = "does not grow with the size of the merge table"
_LARGE = 1_000  # a table at least this large is handed over counted
_SHORT_TEXT = "the quick brown fox jumps"


def _large_table() -> dict[tuple[int, int], int]:
    """Thousands of merges: every pair of lower-case letters and space (in a seeded order),
    then pairs of the first of those tokens."""
    symbols = [32, *range(97, 123)]
    pairs = [(a, b) for a in symbols for b in symbols]
    random.Random(21).shuffle(pairs)
    merges = {pair: 256 + i for i, pair in enumerate(pairs)}
    first = list(merges.values())[:60]
    for a in first:
        for b in first:
            merges[a, b] = 256 + len(merges)
    return merges


def _allowed(n_bytes: int) -> int:
    """How many merges an encode may look at for a text of ``n_bytes`` bytes: a few per pair
    of neighbours and step, far more than the loop that picks the lowest id needs."""
    return 4 * max(n_bytes, 2) ** 2


class _CountedMerges(Mapping):
    """A read-only view of a merges dict that counts the merges looked at: each lookup
    (``[]``, ``in``, ``get``) and each pair met when walking it (``for``, ``items()``...)."""

    def __init__(self, merges: dict) -> None:
        self._merges = merges
        self.looked_at = 0

    def __getitem__(self, pair: Any) -> int:
        self.looked_at += 1
        return self._merges[pair]

    def __contains__(self, pair: object) -> bool:
        self.looked_at += 1
        return pair in self._merges

    def __iter__(self) -> Iterator:
        for pair in self._merges:
            self.looked_at += 1
            yield pair

    def __len__(self) -> int:
        return len(self._merges)

    def __repr__(self) -> str:
        return f"<{len(self._merges):,} merges>"


def _run_encode(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Call ``encode``; on a large table, count the merges it looks at and refuse an encode
    that walks the table (the "work" rule)."""
    text, merges = args
    if len(merges) < _LARGE:
        return fn(*args, **kwargs)
    counted = _CountedMerges(merges)
    answer = fn(text, counted, **kwargs)
    n_bytes = len(text.encode("utf-8"))
    if counted.looked_at > _allowed(n_bytes):
        _no_codec._reject(
            f"your encode looked at {counted.looked_at:,} merges for a text of {n_bytes} "
            f"bytes: it walks the whole table of {len(merges):,}",
            "replaying the merges (one pass per merge, or any loop over merges.items()) does "
            "work for every merge of the table, 50,000 of them for GPT-2, whether or not its "
            "pair occurs in the text. Start from the pairs of neighbours in the text and look "
            "up only those: which of them would training have merged first?",
        )
    return answer


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
        Case((_SHORT_TEXT, _large_table()), rule=_NOT_THE_TABLE),
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
    ways = [
        what
        for what, choose in _CHOICES
        if got == _encode_choosing(text, merges, lambda c, ids, f=choose: f(c, ids, merges))
    ]
    once = [
        what
        for what, choose in _CHOICES
        if got
        == _encode_choosing(text, merges, lambda c, ids, f=choose: f(c, ids, merges), once=True)
    ]
    if not ways and once:
        ways = [f"{once[0]}, at its leftmost occurrence only"]
    if not ways:
        return None
    did = ways[0] if len(ways) == 1 else ", ".join(ways[:-1]) + " or " + ways[-1]
    alike = " (this input cannot tell these apart)" if len(ways) > 1 else ""
    return (
        f"your ids are what encoding gives when each step merges {did}{alike}. Apply merges "
        "in the order they were learned: at each step take the pair with the lowest merge id "
        f"(min over merges.get(pair, inf)). Here the first merge is {first} -> "
        f"{merges[first]}, the lowest id among the pairs of {text!r}."
    )


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
            call=_run_encode,
            normalize=list,
            returns=list_of(INT),
            hints=(
                _encode_hint_guard,
                _encode_hint_no_stop,
                _encode_hint_zero_default,
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
            returns=INT,
            hints=(_count_spellings_hint,),
            ordered=("merges",),
        ),
    ),
}
