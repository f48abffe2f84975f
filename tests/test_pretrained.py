"""Chapter 05's reference functions: recover_merge, encode_with_ranks, byte_rank."""

from __future__ import annotations

import unicodedata

import pytest

from tokcourse.course.data.gpt2_files import byte_rank, bytes_to_unicode
from tokcourse.patterns import SPLIT_PATTERNS
from tokcourse.pretrained import encode_with_ranks, merge_pairs, recover_merge

from ._parity import ENCODINGS, FRAGMENTS, tiktoken_encoding

TINY = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}


def test_recover_merge_follows_the_ranks_not_any_split():
    assert recover_merge(b"abc", TINY) == (b"a", b"bc")  # ab + c are tokens too
    assert recover_merge(b"ab", TINY) == (b"a", b"b")
    assert merge_pairs(TINY) == [(b"b", b"c"), (b"a", b"b"), (b"a", b"bc")]


@pytest.mark.parametrize(
    ("token", "ranks", "message"),
    [
        (b"a", TINY, "single byte"),
        (b"zz", TINY, "not a token"),
        (b"abc", {b"a": 0, b"b": 1, b"c": 2, b"abc": 3}, "cannot be built"),
    ],
)
def test_recover_merge_refuses_what_is_not_a_merge(token, ranks, message):
    with pytest.raises(ValueError, match=message):
        recover_merge(token, ranks)


@pytest.mark.parametrize("name", ENCODINGS)
def test_recover_merge_on_real_tokens_gives_lower_ranked_halves(name):
    ranks = tiktoken_encoding(name)._mergeable_ranks
    for token, rank in list(ranks.items())[256:5000:37]:
        left, right = recover_merge(token, ranks)
        assert left + right == token and max(ranks[left], ranks[right]) < rank


@pytest.mark.parametrize("name", ENCODINGS)
def test_byte_rank_is_tiktokens_order_of_the_single_bytes(name):
    ranks = tiktoken_encoding(name)._mergeable_ranks
    assert [byte_rank(b) for b in range(256)] == [ranks[bytes([b])] for b in range(256)]
    assert list(bytes_to_unicode()) == sorted(range(256), key=byte_rank)


@pytest.mark.parametrize("name", ENCODINGS)
def test_encode_with_ranks_is_tiktokens_encode_ordinary(name):
    enc = tiktoken_encoding(name)
    text = "".join(FRAGMENTS) + " DON'T 12345 \r\n\n  x  \t HTTPServer naïve 日本語 "
    got = encode_with_ranks(text, enc._mergeable_ranks, SPLIT_PATTERNS[name])
    assert got == enc.encode_ordinary(text)


def test_encode_with_ranks_check_expects_tiktokens_ids_on_real_ranks():
    """Passing the exercise means matching GPT-4: on cl100k cases it expects tiktoken's ids."""
    from tokcourse.course.checks.tiktoken_parity import _encode_with_ranks_cases

    enc = tiktoken_encoding("cl100k_base")
    real = [c for c in _encode_with_ranks_cases() if len(c.args[1]) == len(enc._mergeable_ranks)]
    assert len(real) >= 20
    names = {unicodedata.name(ch, "?").split()[0] for c in real for ch in c.args[0]}
    assert {"CYRILLIC", "GREEK", "DEVANAGARI", "CJK", "HANGUL", "KATAKANA"} <= names
    for case in real:
        text, ranks = case.args
        assert encode_with_ranks(text, ranks) == enc.encode_ordinary(text)
