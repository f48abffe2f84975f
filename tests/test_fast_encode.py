"""The fast encoder gives the reference path's ids and tiktoken's, on corpora and generated text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse import assets
from tokcourse.bpe import encode
from tokcourse.fast_encode import FastEncoder, bpe_ranked
from tokcourse.regex import RegexTokenizer
from tokcourse.tokenizer import Tokenizer

from ._parity import ENCODINGS, PARITY_EXAMPLES, any_text, ours, tiktoken_encoding


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpora_match_tiktoken(name: str) -> None:
    enc, tok = tiktoken_encoding(name), ours(name)
    for text in (assets.botchan_text()[:60_000], assets.stdlib_code(60_000)):
        want = enc.encode_ordinary(text)
        assert tok.encode_ordinary(text, fast=True) == want
        assert tok.encode_ordinary(text, fast=True) == want  # again, from the cache


@pytest.mark.parametrize("name", ENCODINGS)
def test_generated_text_matches_tiktoken_and_reference(name: str) -> None:
    enc, tok = tiktoken_encoding(name), ours(name)

    @settings(max_examples=PARITY_EXAMPLES, deadline=None)
    @given(any_text)
    def check(text: str) -> None:
        got = tok.encode(text, allowed_special="all", fast=True)
        assert got == enc.encode(text, allowed_special="all")
        assert tok.encode_ordinary(text, fast=True) == tok.encode_ordinary(text)

    check()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(97, 99), max_size=20), st.integers(0, 20))
def test_bpe_ranked_is_reference_encode(ids: list[int], n_merges: int) -> None:
    tok = RegexTokenizer(r"[\s\S]+")
    tok.train("abcabcaabbccaaabbbcccabacbc" * 3, 256 + n_merges)
    assert bpe_ranked(list(ids), tok.merges) == encode(bytes(ids), tok.merges)


def test_trained_tokenizer_fast_equals_reference() -> None:
    tok = RegexTokenizer()
    tok.train(assets.botchan_text()[:40_000], 600, fast=True)
    text = assets.botchan_text()[40_000:80_000]
    assert tok.encode(text, fast=True) == tok.encode(text)


def test_fast_encoder_follows_new_tables() -> None:
    tok = RegexTokenizer()
    first = tok.fast_encoder()
    assert tok.fast_encoder() is first
    tok.train("hello hello hello", 258, fast=True)
    assert tok.fast_encoder() is not first
    assert tok.encode("hello", fast=True) == tok.encode("hello")
    tok.pattern = r"\S+|\s+"
    assert tok.encode("hello world", fast=True) == tok.encode("hello world")


def test_cache_is_bounded() -> None:
    enc = FastEncoder({}, pattern=r"\S+|\s+", cache_size=8)
    enc.encode_ordinary(" ".join(f"w{i}" for i in range(100)))
    assert enc.cache_info().currsize <= 8


def test_skipping_pattern_raises_like_split() -> None:
    enc = FastEncoder({}, pattern=r"\w+")
    with pytest.raises(ValueError, match="skips"):
        enc.encode_ordinary("a b")


def test_capturing_group_pattern() -> None:
    enc = FastEncoder({}, pattern=r"(\w)+|\W")
    assert enc.encode_ordinary("ab c") == list(b"ab c")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="cache_size"):
        FastEncoder({}, cache_size=-1)
    with pytest.raises(ValueError, match="permutation"):
        FastEncoder({}, byte_ids=[0] * 256)
    with pytest.raises(TypeError, match="must be a str"):
        Tokenizer().encode_ordinary(b"abc", fast=True)  # type: ignore[arg-type]


def test_pickle_and_copy_after_fast_use() -> None:
    import copy
    import pickle

    tok = RegexTokenizer()
    tok.train("hello hello world", 260, fast=True)
    want = tok.encode("hello world")
    assert tok.encode("hello world", fast=True) == want
    for clone in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok)):
        assert clone.encode("hello world", fast=True) == want
    enc = pickle.loads(pickle.dumps(tok.fast_encoder()))
    assert enc.encode_ordinary("hello world") == want
