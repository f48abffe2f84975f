"""Chapter 01's strict decoder check (utf8_decode): cases and hints. Registered by
:mod:`tokcourse.course.checks.utf8`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tokcourse import utf8
from tokcourse.course.exercises import (
    Case,
    Raised,
)


def _hint_subclass(got: ValueError, work: str) -> str:
    """The hint for an exception that is a ValueError, but not ValueError itself."""
    name = type(got).__name__
    if isinstance(got, UnicodeError):  # raised by Python's codec, or copied from it
        return (
            f"you raised {name}, the error of Python's codec: raise ValueError itself (the "
            f"check compares the exception's type), and {work} yourself, without the codec."
        )
    return (
        f"you raised {name}, a subclass of ValueError: the check compares the exception's "
        "type, so raise ValueError itself."
    )


def _random_scalar(rng: random.Random, first: int, last: int) -> int:
    """A random code point in first..last that is not a surrogate."""
    while True:
        cp = rng.randint(first, last)
        if not 0xD800 <= cp <= 0xDFFF:
            return cp


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
    # overlong, yet above the smaller forms' own minimums: only the right minimum refuses them
    b"\xe0\x9f\xbf",  # U+07FF, the last 2-byte code point, in three bytes
    b"\xe0\x82\xac",  # U+00AC in three bytes
    b"\xf0\x8f\xbf\xbf",  # U+FFFF, the last 3-byte code point, in four bytes
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
        return _hint_subclass(got, "read the bits")
    return None


def _lenient_utf8(data: bytes) -> list[int]:
    """The code points a decoder that only reads the bit patterns gives, checking nothing and
    dropping what it cannot read: a stray continuation byte, a character cut short."""
    out, i = [], 0
    while i < len(data):
        lead = data[i]
        n = 1 if lead < 0x80 else 2 if 0xC0 <= lead < 0xE0 else 3 if lead < 0xF0 else 4
        if 0x80 <= lead < 0xC0 or lead >= 0xF8 or i + n > len(data):
            i += 1
            continue
        cp = lead & (0x7F, 0x1F, 0x0F, 0x07)[n - 1]
        for b in data[i + 1 : i + n]:
            cp = (cp << 6) | (b & 0x3F)
        out.append(cp)
        i += n
    return out


def _utf8_decode_hint_replaced(case: Case, expected: Any, got: Any) -> str | None:
    if not (expected == Raised("ValueError") and isinstance(got, list) and 0xFFFD in got):
        return None
    if b"\xef\xbf\xbd" in case.args[0]:
        return None
    return (
        'you put U+FFFD where the bad bytes were, as errors="replace" does: this decoder is '
        "strict. utf8_decode(b'\\x80') must raise ValueError, not return [0xFFFD]."
    )


def _utf8_decode_hint_accepted(case: Case, expected: Any, got: Any) -> str | None:
    if not (expected == Raised("ValueError") and isinstance(got, list)):
        return None
    if got and got != _lenient_utf8(case.args[0]):
        return None  # not only a missing rule: the bits are wrong too (see the next hint)
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
        "truncated": "A lead byte promises more bytes: when the data ends before them, the "
        "character is cut short. Refuse it instead of dropping the unfinished character.",
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


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
