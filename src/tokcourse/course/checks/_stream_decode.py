"""Chapter 03's stream decoder check (decode_stream): cases, the by-hand rule, the timing
rule and hints. Registered by :mod:`tokcourse.course.checks.encode_decode`.
"""

from __future__ import annotations

import codecs
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tokcourse import bpe, stream
from tokcourse.course.checks import _no_codec
from tokcourse.course.checks.bpe_training import _trained_merges
from tokcourse.course.exercises import (
    Case,
    Violation,
)

# --- decode_stream -----------------------------------------------------------------------------

# tokens that end inside a character, as real byte-level vocabularies have them: the space and
# first three bytes of an emoji, the first two bytes of "’" and its last, a whole Hangul
# syllable, the end of one syllable glued to the start of the next; and U+FFFD itself, a
# complete character (GPT-2 has it as one token)
_PARTIAL_TOKENS = [
    b" \xf0\x9f\x91",
    b"\xe2\x80",
    b"\x99",
    "안".encode(),
    b"\x88\xeb",
    b"hi",
    "\ufffd".encode(),
]


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
        [0xC0, 0x80, 65],  # C0, C1, F5: never lead bytes, so broken at once
        [0xC1, 65],
        [0xF5, 0x80, 65],
        [0xE0, 0x80, 65],  # after E0 only A0 to BF: broken at once, or when 65 arrives
        [0xE0, 0xA0, 0x80],  # U+0800: after E0, A0 begins a character
        [0xED, 0xA0],  # the stream ends in two broken pieces: decode gives two '\ufffd'
        [0xF0, 0x9F],
        [258, 105],
        [259, 260, 0x85, 0x95],  # "안녕"
        [261, 257],
        [259, 9],  # a whole character, then a tab: out at once
        [262, 9],  # U+FFFD in the text, a complete character: out at once too
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
    """What Python's own incremental UTF-8 decoder lets out, and when: it lets some starts that
    no byte can complete out at once (E0 80), others later than Unicode allows (ED A0)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    out = [_Piece(decoder.decode(vocab[idx]), i + 1) for i, idx in enumerate(ids)]
    out.append(_Piece(decoder.decode(b"", final=True), len(ids)))
    return [piece for piece in out if piece.text]


#: The Unicode Standard's Table 3-7 (well-formed UTF-8 byte sequences): for each lead byte, the
#: range of the byte that may follow it; every later byte is 80 to BF.
_SECOND_BYTE = {
    **{b: (0x80, 0xBF) for b in range(0xC2, 0xE0)},
    0xE0: (0xA0, 0xBF),
    **{b: (0x80, 0xBF) for b in range(0xE1, 0xED)},
    0xED: (0x80, 0x9F),
    0xEE: (0x80, 0xBF),
    0xEF: (0x80, 0xBF),
    0xF0: (0x90, 0xBF),
    0xF1: (0x80, 0xBF),
    0xF2: (0x80, 0xBF),
    0xF3: (0x80, 0xBF),
    0xF4: (0x80, 0x8F),
}


def _can_complete(tail: bytes) -> bool:
    """Whether some later bytes can make ``tail`` a character (Table 3-7): it is a lead byte
    and the bytes that follow it so far are allowed, and fewer than it announces."""
    if not tail or tail[0] not in _SECOND_BYTE:
        return False
    lead = tail[0]
    needs = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    if len(tail) >= needs:
        return False
    if len(tail) > 1:
        low, high = _SECOND_BYTE[lead]
        if not low <= tail[1] <= high:
            return False
    return all(0x80 <= b <= 0xBF for b in tail[2:])


def _unicode_cut(data: bytes) -> int:
    """Where the bytes that a later byte can still complete start (``len(data)`` if none):
    the earliest moment Unicode allows to let the rest out."""
    for back in range(1, min(3, len(data)) + 1):
        if _can_complete(data[-back:]):
            return len(data) - back
    return len(data)


def _unicodes_pieces(ids: list[int], vocab: dict) -> list[_Piece]:
    """What a decoder that follows Unicode lets out, and when: everything but a tail that a
    later byte can still complete (it lets ED A0 out at once: no byte completes a surrogate)."""
    out, data, sent = [], b"", 0
    for i, idx in enumerate(ids):
        data += vocab[idx]
        cut = _unicode_cut(data)
        if cut > sent:
            out.append(_Piece(bpe.utf8_text(data[sent:cut]), i + 1))
            sent = cut
    if sent < len(data):
        out.append(_Piece(bpe.utf8_text(data[sent:]), len(ids)))
    return [piece for piece in out if piece.text]


def _earliest(ids: list[int], vocab: dict) -> list[int]:
    """For each character, the earliest moment the check accepts: when no later byte can
    complete it (Unicode), or Python's incremental decoder's moment if that is earlier."""
    python = _when(_pythons_pieces(ids, vocab))
    unicode = _when(_unicodes_pieces(ids, vocab))
    if len(unicode) != len(python):
        return python
    return [min(a, b) for a, b in zip(python, unicode, strict=True)]


def _stream_in_time(case: Case, expected: Any, got: Any) -> bool:
    """The right text, each character out no later than the rule of the text lets it out
    (the reference's timing) and no earlier than no later byte can complete it (Unicode's
    Table 3-7; Python's incremental decoder lets some out later, which is accepted too)."""
    if not isinstance(got, list) or not all(isinstance(p, _Piece) for p in got):
        return False
    ids, vocab = case.args
    text = "".join(piece.text for piece in expected)
    if "".join(piece.text for piece in got) != text:
        return False
    earliest, latest = _earliest(ids, vocab), _when(expected)
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


def _until_no_replacement(ids: Iterable[int], vocab: dict) -> Iterator[str]:
    """A decoder that holds back while the decoded text ends with U+FFFD, as Hugging Face's
    DecodeStream does (for the hint)."""
    held = b""
    for idx in ids:
        held += vocab[idx]
        text = bpe.utf8_text(held)
        if text and not text.endswith("\ufffd"):
            yield text
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
    # on some inputs these decoders behave alike: each hint needs its own decoder alone
    bit_patterns = _behaves_like(case, got, _holding(_cut_by_bit_patterns))
    # everything at the end: reading every id first looks the same, so no guess which
    everything_at_the_end = len(got) == 1 and got[0].after == len(ids)
    non_ascii = (
        not bit_patterns
        and not everything_at_the_end
        and _behaves_like(case, got, _holding(_held_non_ascii))
    )
    if not bit_patterns and _behaves_like(case, got, _until_no_replacement):
        return (
            "the text comes out late: your decoder holds back while the decoded text ends with "
            "'\ufffd' (as Hugging Face's DecodeStream does). That is a test on the text, not "
            "on the bytes: it also holds back a U+FFFD that the text really contains, a "
            "complete character, and a broken byte that no later byte can complete. Decide "
            "from the bytes: hold back only a lead byte followed by fewer continuation bytes "
            "than it announces."
        )
    if non_ascii:
        return (
            "the text comes out late: your decoder holds back every byte from 0x80 up, so a "
            "complete character (or a broken byte) waits for the next ASCII byte. Hold back "
            "only an unfinished character at the end, a lead byte followed by fewer "
            "continuation bytes than it announces; a complete character goes out at once."
        )
    text = "".join(piece.text for piece in expected)
    earliest = _earliest(ids, vocab)
    latest = _when(expected)
    for i, (a, t, b) in enumerate(zip(earliest, _when(got), latest, strict=True)):
        if t < a:
            held = _held_after(ids, vocab, t)
            return (
                f"{text[i]!r} came out after {t} id{'s' * (t != 1)}, too early: the bytes read "
                f"so far end with {held!r}, a lead byte followed by fewer continuation bytes "
                "than it announces, which a later byte can still complete. Hold such bytes "
                "back and decode them with the bytes that come next."
            )
        if t > b:
            data = b"".join(vocab[idx] for idx in ids[:b])
            never = [x for x in data[-4:] if x in (0xC0, 0xC1) or x >= 0xF5]
            if text[i] == "\ufffd" and never:
                return (
                    f"'\ufffd' came out after {t} ids, later than it was complete (after {b}): "
                    f"the byte 0x{never[-1]:02X} was held back as if it began a character, but "
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
                "continuation bytes than it announces): a complete character goes out at once."
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
    flushed = bpe.utf8_text(held)
    if held and want.startswith(text) and want[len(text) :] == flushed:
        return (
            "the end of the stream is missing: the bytes of an unfinished character are still "
            "held back when the ids run out. After the loop, yield utf8_text(held), which "
            "turns them into '\ufffd' (dropping them would lose the mark)."
        )
    before = want[: len(want) - len(flushed)]
    if held and text in (before + "\ufffd" * len(held), before + "\ufffd"):
        return (
            f"the end of the stream is wrong: when the ids run out, the held bytes {held!r} "
            f"came out as {text[len(before) :]!r}, where decode gives {flushed!r}. Do not "
            "write the '\ufffd' yourself: yield utf8_text(held), which decodes the held bytes "
            "with errors='replace' as decode does (one '\ufffd' for each broken piece)."
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
