"""UTF-8 by hand: how a code point becomes one to four bytes, and how the bytes become it again.

Python does all of this inside ``str.encode("utf-8")`` and ``bytes.decode("utf-8")``; the
functions here spell it out bit by bit, so that chapter 01 can show (and check) every step.
The layout (RFC 3629; table 3-6 of the Unicode standard):

=====================  =====  =========================================
code points            bytes  bit pattern (x: bits of the code point)
=====================  =====  =========================================
U+0000 .. U+007F       1      ``0xxxxxxx``
U+0080 .. U+07FF       2      ``110xxxxx 10xxxxxx``
U+0800 .. U+FFFF       3      ``1110xxxx 10xxxxxx 10xxxxxx``
U+10000 .. U+10FFFF    4      ``11110xxx 10xxxxxx 10xxxxxx 10xxxxxx``
=====================  =====  =========================================

The surrogates U+D800..U+DFFF are code points but not characters: UTF-16 uses them in pairs to
reach beyond U+FFFF, and UTF-8 must not encode them. Everything here is strict, like Python's
codec: surrogates, code points above U+10FFFF and overlong forms (a character spelled with
more bytes than it needs) are refused with a ``ValueError`` that names the bad value.

>>> utf8_encode(ord("€"))
b'\\xe2\\x82\\xac'
>>> [byte_kind(b) for b in b"\\xe2\\x82\\xac"]
['lead', 'continuation', 'continuation']
>>> [hex(cp) for cp in utf8_decode(b"\\xe2\\x82\\xac")]
['0x20ac']
"""

from __future__ import annotations

# The book shows some of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.

__all__ = [
    "LAYOUT",
    "MAX_CODE_POINT",
    "bit_layout",
    "byte_kind",
    "utf8_decode",
    "utf8_encode",
    "utf8_length",
]

MAX_CODE_POINT = 0x10FFFF
"""The largest code point Unicode will ever assign (the limit UTF-16 can reach)."""

LAYOUT: tuple[tuple[int, int, str], ...] = (
    (0x0000, 0x007F, "0xxxxxxx"),
    (0x0080, 0x07FF, "110xxxxx 10xxxxxx"),
    (0x0800, 0xFFFF, "1110xxxx 10xxxxxx 10xxxxxx"),
    (0x10000, 0x10FFFF, "11110xxx 10xxxxxx 10xxxxxx 10xxxxxx"),
)
"""``(first, last, pattern)`` for the 1-, 2-, 3- and 4-byte forms of UTF-8."""


def utf8_length(code_point: int) -> int:
    """How many bytes UTF-8 spends on ``code_point``: 1, 2, 3 or 4.

    >>> [utf8_length(ord(c)) for c in "aé€🤗"]
    [1, 2, 3, 4]
    """
    for n, (first, last, _) in enumerate(LAYOUT, start=1):
        if first <= code_point <= last:
            return n
    raise ValueError(f"code point {code_point!r} is outside Unicode's range 0..0x10FFFF")


# fmt: off
def utf8_encode(code_point: int) -> bytes:
    """The UTF-8 bytes of one code point, built bit by bit (like
    ``chr(code_point).encode()``).

    Raises ``ValueError`` for a surrogate (U+D800..U+DFFF) or a value
    outside 0..0x10FFFF, as Python's codec does (its ``UnicodeEncodeError``
    is a kind of ``ValueError``).

    >>> utf8_encode(0x41), utf8_encode(0xE9)
    (b'A', b'\\xc3\\xa9')
    >>> utf8_encode(0x20AC), utf8_encode(0x1F917)
    (b'\\xe2\\x82\\xac', b'\\xf0\\x9f\\xa4\\x97')
    >>> utf8_encode(0xD800)
    Traceback (most recent call last):
    ...
    ValueError: U+D800 is a surrogate: UTF-8 cannot encode it
    """
    if not 0 <= code_point <= 0x10FFFF:
        raise ValueError(
            f"code point {code_point!r} is outside Unicode's range "
            "0..0x10FFFF"
        )
    if 0xD800 <= code_point <= 0xDFFF:
        raise ValueError(
            f"U+{code_point:04X} is a surrogate: UTF-8 cannot encode it"
        )
    if code_point <= 0x7F:  # 0xxxxxxx: ASCII is its own encoding
        return bytes([code_point])
    if code_point <= 0x7FF:  # 110xxxxx 10xxxxxx: 5 + 6 = 11 bits
        return bytes(
            [
                0b11000000 | (code_point >> 6),
                0b10000000 | (code_point & 0b111111),
            ]
        )
    # 1110xxxx 10xxxxxx 10xxxxxx: 4 + 6 + 6 = 16 bits
    if code_point <= 0xFFFF:
        return bytes(
            [
                0b11100000 | (code_point >> 12),
                0b10000000 | ((code_point >> 6) & 0b111111),
                0b10000000 | (code_point & 0b111111),
            ]
        )
    # 11110xxx 10xxxxxx 10xxxxxx 10xxxxxx: 3 + 6 + 6 + 6 = 21 bits
    return bytes(
        [
            0b11110000 | (code_point >> 18),
            0b10000000 | ((code_point >> 12) & 0b111111),
            0b10000000 | ((code_point >> 6) & 0b111111),
            0b10000000 | (code_point & 0b111111),
        ]
    )
# fmt: on


def byte_kind(b: int) -> str:
    """What a byte can be in UTF-8: "ascii", "continuation", "lead" or
    "invalid".

    By bit pattern, ``0xxxxxxx`` is ASCII, ``10xxxxxx`` continues a
    character and ``11xxxxxx`` leads one. But 13 of the lead patterns never
    occur in valid UTF-8, so they are "invalid": 0xC0 and 0xC1 could only
    start an overlong 2-byte form of an ASCII character, 0xF5..0xF7 would
    start a code point above U+10FFFF, and 0xF8..0xFF fit no pattern at
    all.

    >>> [byte_kind(b) for b in (0x41, 0x82, 0xE2, 0xC0, 0xFF)]
    ['ascii', 'continuation', 'lead', 'invalid', 'invalid']
    """
    if not 0 <= b <= 0xFF:
        raise ValueError(f"a byte is 0..255, got {b!r}")
    if b >> 7 == 0b0:  # 0xxxxxxx
        return "ascii"
    if b >> 6 == 0b10:  # 10xxxxxx
        return "continuation"
    # 11xxxxxx, but never in valid UTF-8
    if b in (0xC0, 0xC1) or b >= 0xF5:
        return "invalid"
    return "lead"  # 110xxxxx, 1110xxxx or 11110xxx


# fmt: off
def utf8_decode(data: bytes) -> list[int]:
    """The code points spelled by the UTF-8 bytes ``data``; ``ValueError``
    if it is not UTF-8.

    Strict like ``data.decode("utf-8")``: a stray continuation byte, a
    missing one, an overlong form, a surrogate or a value above U+10FFFF is
    an error that says where it is.

    >>> utf8_decode("hé€🤗".encode())
    [104, 233, 8364, 129303]
    >>> try:
    ...     utf8_decode(b"\\xe2\\x82")
    ... except ValueError as err:
    ...     print(err)
    truncated character: 0xe2 at position 0 needs 3 bytes, only 2 left
    """
    code_points = []
    i = 0
    while i < len(data):
        lead = data[i]
        kind = byte_kind(lead)
        if kind == "ascii":
            code_points.append(lead)
            i += 1
            continue
        if kind == "continuation":
            raise ValueError(
                f"unexpected continuation byte {lead:#04x} at position {i}"
            )
        if kind == "invalid":
            why = (
                "it could only start an overlong form of an ASCII character"
                if lead in (0xC0, 0xC1)
                else "it would start a code point above U+10FFFF"
                if lead <= 0xF7
                else "it fits no UTF-8 pattern"
            )
            raise ValueError(
                f"byte {lead:#04x} at position {i} never occurs in UTF-8 "
                f"({why})"
            )
        n = 2 if lead < 0b11100000 else 3 if lead < 0b11110000 else 4
        if i + n > len(data) and all(
            byte_kind(b) == "continuation" for b in data[i + 1 :]
        ):
            raise ValueError(
                f"truncated character: {lead:#04x} at position {i} "
                f"needs {n} bytes, only {len(data) - i} left"
            )
        # the x bits of the lead byte
        code_point = lead & (0b11111, 0b1111, 0b111)[n - 2]
        for j in range(i + 1, i + n):
            if byte_kind(data[j]) != "continuation":
                raise ValueError(
                    f"byte {data[j]:#04x} at position {j} should continue "
                    f"the character started at position {i} (10xxxxxx)"
                )
            # append 6 more bits
            code_point = (code_point << 6) | (data[j] & 0b111111)
        # the smallest code point of n bytes
        if code_point < (0x80, 0x800, 0x10000)[n - 2]:
            raise ValueError(
                f"overlong form at position {i}: "
                f"U+{code_point:04X} in {n} bytes"
            )
        if 0xD800 <= code_point <= 0xDFFF:
            raise ValueError(
                f"surrogate U+{code_point:04X} at position {i} is not allowed"
            )
        if code_point > 0x10FFFF:
            raise ValueError(
                f"U+{code_point:X} at position {i} is above U+10FFFF"
            )
        code_points.append(code_point)
        i += n
    return code_points
# fmt: on


def bit_layout(code_point: int) -> list[tuple[str, str]]:
    """Each UTF-8 byte of ``code_point`` as (marker bits, payload bits), read off its encoding.

    The marker bits say what the byte is (``0``, ``10``, ``110``, ``1110``, ``11110``); the
    payload bits, read left to right across the bytes, spell the code point in binary.

    >>> bit_layout(ord("€"))
    [('1110', '0010'), ('10', '000010'), ('10', '101100')]
    >>> int("".join(payload for _, payload in bit_layout(ord("€"))), 2) == ord("€")
    True
    """
    encoded = utf8_encode(code_point)
    marker_width = 1 if len(encoded) == 1 else len(encoded) + 1
    out = []
    for i, b in enumerate(encoded):
        bits = f"{b:08b}"
        width = marker_width if i == 0 else 2
        out.append((bits[:width], bits[width:]))
    return out


def _fix_surrogates(text: str) -> str:
    """Make ``text`` encodable as UTF-8 exactly the way tiktoken does.

    A Python str may hold surrogate code points (U+D800..U+DFFF), which UTF-8 cannot encode.
    tiktoken then round-trips the text through UTF-16: a high+low surrogate pair becomes the
    character it stands for ("\\ud83d\\ude00" -> "😀"), a lone surrogate becomes U+FFFD "�".
    We do the same, so our ids match tiktoken's.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
