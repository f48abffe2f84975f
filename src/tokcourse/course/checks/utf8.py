"""Chapter 01: UTF-8 by hand (utf8_encode, byte_kind, utf8_decode).

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tokcourse import utf8
from tokcourse.course.checks._no_codec import _without_codec
from tokcourse.course.checks._utf8_decode_check import (
    _hint_subclass,
    _random_scalar,
    _utf8_decode_cases,
    _utf8_decode_hint_accepted,
    _utf8_decode_hint_bits,
    _utf8_decode_hint_error_type,
    _utf8_decode_hint_index,
    _utf8_decode_hint_replaced,
)
from tokcourse.course.exercises import (
    BYTES,
    INT,
    STR,
    Case,
    Entry,
    Exercise,
    Names,
    Raised,
    list_of,
)

_NO_MASK = (
    "a continuation byte carries only 6 bits of the code point: with more, the higher bits "
    "land on top of its 10 marker. Keep the low 6 bits first (code_point & 0b111111), then "
    "put 0b10000000 in front."
)


_NO_CONTINUATION_MARKER = (
    "a continuation byte holds its 6 payload bits but not its marker: every byte after the "
    "first must look like 10xxxxxx, so OR the 6 bits with 0b10000000 (0x80)."
)


def _lead_one_bit_short(got: bytes, expected: bytes) -> bool:
    """Whether the lead byte carries its marker one place too far right (``0b1100000 | ...``
    instead of ``0b11000000 | ...``), the rest of it right."""
    n = len(expected)
    payload = expected[0] & (0x7F >> n)
    return n > 1 and got[0] == ((expected[0] - payload) >> 1) | payload


def _spellings(cp: int) -> tuple[str, ...]:
    """Ways to write the integer ``cp`` in an error message: decimal, or hex with ``0x`` or
    ``U+`` in front, in either case, with or without leading zeros (up to 8 digits).

    >>> all(s in _spellings(0xD800) for s in ("55296", "U+d800", "0XD800", "0x00d800"))
    True
    >>> "-0x1" in _spellings(-1), "0x1" in _spellings(-1)
    (True, False)
    """
    sign, magnitude = ("-", -cp) if cp < 0 else ("", cp)
    digits = f"{magnitude:x}"
    hexes = {
        prefix + case(digits.zfill(width))
        for prefix in ("0x", "0X", "U+", "u+")
        for case in (str.lower, str.upper)
        for width in range(len(digits), 9)
    }
    return (f"{cp}", *sorted(sign + h for h in hexes))


#: What the ValueError of utf8_encode must name: the integer it was given, in any spelling.
_NAMES_CODE_POINT = Names(
    "naming the integer",
    lambda case: [_spellings(case.args[0])],
    "the integer you were given, in decimal or in hex. A ValueError that Python raises for "
    "you, such as bytes([...])'s for a byte outside 0..255, does not name it: test "
    "0 <= code_point <= 0x10FFFF yourself",
)


# --- utf8_encode -------------------------------------------------------------------------------

# The edges of the four forms, characters from the chapter, the last code point.
_UTF8_EDGES = (0, 0x41, 0x7F, 0x80, 0xE9, 0x7FF, 0x800, 0x20AC, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF)
_UTF8_EDGES += (0x10000, 0x1F917, 0x10FFFF)
# noncharacters: never assigned, still encodable
_UTF8_EDGES += (0xFDD0, 0xFFFE, 0x1FFFF)
# Not encodable: the surrogates' edges, and values outside Unicode. The answer is ValueError.
_UTF8_REFUSED = (0xD800, 0xDBFF, 0xDC00, 0xDFFF, -1, -0x41, 0x110000)


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
        return _hint_subclass(got, "build the bytes")
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


def _is_noncharacter(cp: int) -> bool:
    return 0xFDD0 <= cp <= 0xFDEF or (0 <= cp <= 0x10FFFF and cp & 0xFFFE == 0xFFFE)


def _utf8_encode_hint_noncharacter(case: Case, expected: Any, got: Any) -> str | None:
    (cp,) = case.args
    if isinstance(expected, bytes) and isinstance(got, BaseException) and _is_noncharacter(cp):
        return (
            f"U+{cp:04X} is a noncharacter: Unicode never assigns it to a character, but it is "
            "still a valid code point and not a surrogate, so UTF-8 encodes it like any other "
            f"(chr({cp:#x}).encode() works). Refuse only the surrogates and what lies outside "
            "0..0x10FFFF."
        )
    return None


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
    if len(got) > 1 and got == expected[::-1]:
        return (
            "the right bytes in the wrong order: the lead byte (110xxxxx, 1110xxxx or "
            "11110xxx) comes first and announces the character; the continuation bytes, "
            "10xxxxxx, follow it."
        )
    tails = list(zip(got[1:], expected[1:], strict=True))
    lead_payload = expected[0] & (0x7F >> len(got))
    if len(got) > 1 and got[0] == lead_payload and all(g == e & 0x3F for g, e in tails):
        return (
            "the bytes hold the right payload bits but none of the markers: the lead byte "
            "needs n ones and a zero in front (0b11000000 | ... for 2 bytes, 0b11100000 | ... "
            "for 3, 0b11110000 | ... for 4), every continuation byte 10 (0b10000000 | ...)."
        )
    if got[0] == expected[0] and any(g != e and g == e & 0x3F for g, e in tails):
        return _NO_CONTINUATION_MARKER
    if got[0] == expected[0] and any(g >> 6 != 0b10 and g & 0x3F == e & 0x3F for g, e in tails):
        return _NO_MASK
    if _lead_one_bit_short(got, expected) and got[1:] == expected[1:]:
        return (
            f"your lead byte is {got[0]:08b}: its marker sits one bit too far right, so the "
            "byte starts with 0 and reads as ASCII. The marker has 8 binary digits, "
            "0b11000000 (0xC0), 0b11100000 (0xE0) or 0b11110000 (0xF0), not 0b1100000. Built "
            "from a string of binary digits, pad the code point to the form's full width "
            "first (11, 16 or 21 digits: f'{code_point:011b}')."
        )
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
            "the markers are right but the payload bits are not where they belong. Each "
            "continuation byte carries exactly 6 bits: the last byte the lowest 6 "
            "(code_point & 0b111111), the one before it the next 6; the first byte carries "
            "the highest bits, what is left above them (code_point >> 6 * (n - 1))."
        )
    return None


# --- byte_kind ---------------------------------------------------------------------------------


def _byte_kind_cases() -> Iterator[Case]:
    for b in range(256):
        yield Case((b,))


def _lead_range(b: int) -> tuple[int, int, int]:
    """For a byte 11xxxxxx: the length n of the form it starts (5 for 11111xxx, no form) and the
    smallest and largest value its payload bits can spell in n bytes."""
    n = 2 if b < 0xE0 else 3 if b < 0xF0 else 4 if b < 0xF8 else 5
    payload = b & (0x7F >> n)
    low = payload << 6 * (n - 1)
    return n, low, low | ((1 << 6 * (n - 1)) - 1)


def _byte_kind_hint(case: Case, expected: Any, got: Any) -> str | None:
    (b,) = case.args
    if got not in ("ascii", "continuation", "lead", "invalid"):
        return 'return one of the strings "ascii", "continuation", "lead" or "invalid".'
    if b >= 0xC0 and got in ("lead", "invalid") and got != expected:
        n, low, high = _lead_range(b)
        if n == 5:
            return (
                f"{b:#04x} = {b:08b}: which of the four patterns of the layout table does it "
                "fit? A byte that fits none never occurs in UTF-8."
            )
        spelled = (
            f"{b:#04x} = {b:08b} would start a {n}-byte form whose payload spells "
            f"U+{low:04X}..U+{high:04X}."
        )
        if got == "lead":
            return (
                f"{spelled} Check that range against the two rules the table does not show: "
                "a character takes the shortest form that holds it, and Unicode ends at "
                "U+10FFFF. If no character can start with this byte, it is invalid."
            )
        return (
            f"{spelled} Some of those are characters that need exactly {n} bytes and lie "
            "at or below U+10FFFF, so the byte does start characters: a lead byte (what "
            "follows it decides the rest)."
        )
    return (
        f"{b:#04x} = {b:08b}: look at the top bits. 0xxxxxxx (b >> 7 == 0) is ASCII, "
        "10xxxxxx (b >> 6 == 0b10) a continuation, 11xxxxxx leads a character (or is invalid)."
    )


EXERCISES: dict[str, Entry] = {
    "utf8_encode": Entry(
        "utf8_encode(code_point) -> bytes",
        lambda: Exercise(
            "utf8_encode",
            utf8.utf8_encode,
            _utf8_encode_cases,
            call=_without_codec,
            normalize=bytes,
            returns=BYTES,
            names=_NAMES_CODE_POINT,
            hints=(
                _utf8_encode_hint_refuse,
                _utf8_encode_hint_noncharacter,
                _utf8_encode_hint_four_bytes,
                _utf8_encode_hint_range,
                _utf8_encode_hint_length,
                _utf8_encode_hint_markers,
                _utf8_encode_hint_order,
            ),
        ),
    ),
    "byte_kind": Entry(
        'byte_kind(b) -> "ascii" | "continuation" | "lead" | "invalid"',
        lambda: Exercise(
            "byte_kind",
            utf8.byte_kind,
            _byte_kind_cases,
            call=_without_codec,
            returns=STR,
            hints=(_byte_kind_hint,),
        ),
    ),
    "utf8_decode": Entry(
        "utf8_decode(data) -> code points",
        lambda: Exercise(
            "utf8_decode",
            utf8.utf8_decode,
            _utf8_decode_cases,
            call=_without_codec,
            normalize=list,
            returns=list_of(INT),
            hints=(
                _utf8_decode_hint_error_type,
                _utf8_decode_hint_replaced,
                _utf8_decode_hint_accepted,
                _utf8_decode_hint_index,
                _utf8_decode_hint_bits,
            ),
        ),
    ),
}
