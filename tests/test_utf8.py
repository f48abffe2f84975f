"""UTF-8 by hand (tokcourse.utf8) against Python's own codec, on every plane."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokcourse.utf8 import (
    LAYOUT,
    MAX_CODE_POINT,
    bit_layout,
    byte_kind,
    utf8_decode,
    utf8_encode,
    utf8_length,
)

SURROGATES = range(0xD800, 0xE000)
SCALARS = [cp for cp in range(MAX_CODE_POINT + 1) if cp not in SURROGATES]
scalar_values = st.integers(0, MAX_CODE_POINT).filter(lambda cp: cp not in SURROGATES)
# Random byte strings rarely contain valid multi-byte characters: mix in encoded characters,
# broken pieces of them and the bytes that never occur, so every error path gets exercised.
byte_chunks = st.one_of(
    st.binary(max_size=3),
    scalar_values.map(lambda cp: chr(cp).encode()),
    scalar_values.map(lambda cp: chr(cp).encode()[:-1]),
    st.sampled_from([b"\xc0\xaf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"]),
    st.integers(0xF5, 0xFF).map(lambda b: bytes([b])),
)
byte_strings = st.lists(byte_chunks, max_size=6).map(b"".join)


# ---------------------------------------------------------------------------- utf8_encode
@pytest.mark.parametrize(
    ("code_point", "expected"),
    [
        (0x0, b"\x00"),
        (0x7F, b"\x7f"),
        (0x80, b"\xc2\x80"),
        (0x7FF, b"\xdf\xbf"),
        (0x800, b"\xe0\xa0\x80"),
        (0xD7FF, b"\xed\x9f\xbf"),
        (0xE000, b"\xee\x80\x80"),
        (0xFFFF, b"\xef\xbf\xbf"),
        (0x10000, b"\xf0\x90\x80\x80"),
        (0x1F917, b"\xf0\x9f\xa4\x97"),  # 🤗
        (0x10FFFF, b"\xf4\x8f\xbf\xbf"),
    ],
)
def test_encode_boundaries(code_point: int, expected: bytes) -> None:
    assert utf8_encode(code_point) == expected == chr(code_point).encode("utf-8")


def test_encode_agrees_with_python_on_every_scalar_value() -> None:
    wrong = [cp for cp in SCALARS if utf8_encode(cp) != chr(cp).encode("utf-8")]
    assert wrong == []


@pytest.mark.parametrize("code_point", [0xD800, 0xDABC, 0xDFFF])
def test_encode_refuses_surrogates_like_python(code_point: int) -> None:
    with pytest.raises(UnicodeEncodeError):
        chr(code_point).encode("utf-8")
    with pytest.raises(ValueError, match=f"U\\+{code_point:04X} is a surrogate"):
        utf8_encode(code_point)


@pytest.mark.parametrize("code_point", [-1, MAX_CODE_POINT + 1, 2**32])
def test_encode_refuses_values_outside_unicode(code_point: int) -> None:
    with pytest.raises(ValueError, match="outside Unicode's range"):
        utf8_encode(code_point)
    with pytest.raises((ValueError, OverflowError)):  # chr refuses them too
        chr(code_point)


@given(scalar_values)
def test_encode_length_and_bit_layout(code_point: int) -> None:
    encoded = utf8_encode(code_point)
    assert len(encoded) == utf8_length(code_point)
    first, last, pattern = LAYOUT[len(encoded) - 1]
    assert first <= code_point <= last
    layout = bit_layout(code_point)
    assert " ".join(m + "x" * len(p) for m, p in layout) == pattern
    assert int("".join(p for _, p in layout), 2) == code_point
    assert bytes(int(m + p, 2) for m, p in layout) == encoded


@given(scalar_values, scalar_values)
def test_encoding_preserves_code_point_order(a: int, b: int) -> None:
    # sorting UTF-8 bytes sorts by code point: a property UTF-16 does not have
    assert (utf8_encode(a) < utf8_encode(b)) == (a < b)


def test_utf8_length_refuses_values_outside_unicode() -> None:
    with pytest.raises(ValueError, match="0x110000|1114112"):
        utf8_length(MAX_CODE_POINT + 1)


# ---------------------------------------------------------------------------- byte_kind
def test_byte_kind_on_all_256_values() -> None:
    kinds = [byte_kind(b) for b in range(256)]
    assert kinds[:0x80] == ["ascii"] * 0x80
    assert kinds[0x80:0xC0] == ["continuation"] * 0x40
    assert kinds[0xC2:0xF5] == ["lead"] * (0xF5 - 0xC2)
    assert [b for b, k in enumerate(kinds) if k == "invalid"] == [0xC0, 0xC1, *range(0xF5, 256)]


def test_invalid_bytes_are_exactly_the_ones_utf8_never_uses() -> None:
    used = set("".join(map(chr, SCALARS)).encode("utf-8"))
    assert {b for b in range(256) if byte_kind(b) == "invalid"} == set(range(256)) - used


@given(scalar_values)
def test_byte_kinds_of_an_encoded_character(code_point: int) -> None:
    kinds = [byte_kind(b) for b in chr(code_point).encode("utf-8")]
    assert kinds[0] == ("ascii" if code_point < 0x80 else "lead")
    assert kinds[1:] == ["continuation"] * (len(kinds) - 1)


@pytest.mark.parametrize("b", [-1, 256])
def test_byte_kind_refuses_non_bytes(b: int) -> None:
    with pytest.raises(ValueError, match=str(b)):
        byte_kind(b)


# ---------------------------------------------------------------------------- utf8_decode
def test_decode_every_scalar_value_at_once() -> None:
    assert utf8_decode("".join(map(chr, SCALARS)).encode("utf-8")) == SCALARS


@given(st.text())
def test_decode_inverts_encode(text: str) -> None:
    encoded = b"".join(utf8_encode(ord(ch)) for ch in text)
    assert encoded == text.encode("utf-8")
    assert utf8_decode(encoded) == [ord(ch) for ch in text]


@given(byte_strings)
@example(b"")
@example(b"\x80")
@example(b"\xc3")
@example(b"\xc3A")
@example(b"\xf0\x9f\xa4")
@settings(max_examples=400)
def test_decode_accepts_and_refuses_exactly_what_python_does(data: bytes) -> None:
    try:
        expected = [ord(ch) for ch in data.decode("utf-8")]
    except UnicodeDecodeError:
        with pytest.raises(ValueError):
            utf8_decode(data)
    else:
        assert utf8_decode(data) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x80", "unexpected continuation byte 0x80 at position 0"),
        (b"\xc1\xbf", "0xc1 at position 0 never occurs in UTF-8 (it could only start an overlong"),
        (b"\xf5\x80\x80\x80", "0xf5 at position 0 never occurs in UTF-8 (it would start a code"),
        (b"a\xff", "0xff at position 1 never occurs in UTF-8 (it fits no UTF-8 pattern)"),
        (b"\xe2\x82", "truncated character: 0xe2 at position 0 needs 3 bytes, only 2 left"),
        (b"\xe2A\xac", "0x41 at position 1 should continue the character started at position 0"),
        (b"\xe0\x80\xaf", "overlong form at position 0: U+002F in 3 bytes"),
        (b"\xed\xa0\x80", "surrogate U+D800 at position 0"),
        (b"\xf4\x90\x80\x80", "U+110000 at position 0 is above U+10FFFF"),
    ],
)
def test_decode_errors_say_what_and_where(data: bytes, message: str) -> None:
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        utf8_decode(data)
    assert type(err.value) is ValueError
