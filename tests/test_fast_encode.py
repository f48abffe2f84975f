"""The fast encoder gives the reference path's ids and tiktoken's, on corpora and generated text."""

from __future__ import annotations

import functools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse import assets, bpe
from tokcourse.bpe import encode
from tokcourse.fast_encode import FastEncoder, bpe_heap, bpe_ranked
from tokcourse.regex import RegexTokenizer
from tokcourse.tokenizer import Tokenizer

from ._parity import (
    ENCODINGS,
    PARITY_EXAMPLES,
    any_text,
    hostile_texts,
    ours,
    tiktoken_encoding,
    valid_text,
)


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpora_match_tiktoken(name: str) -> None:
    enc, tok = tiktoken_encoding(name), ours(name)
    for text in (assets.botchan_text()[:60_000], assets.stdlib_code(60_000)):
        want = enc.encode_ordinary(text)
        assert tok.encode_ordinary(text) == want
        assert tok.encode_ordinary(text) == want  # again, from the cache


@pytest.mark.parametrize("name", ENCODINGS)
def test_generated_text_matches_tiktoken_and_reference(name: str) -> None:
    enc, tok = tiktoken_encoding(name), ours(name)

    @settings(max_examples=PARITY_EXAMPLES, deadline=None)
    @given(any_text)
    def check(text: str) -> None:
        got = tok.encode(text, allowed_special="all")
        assert got == enc.encode(text, allowed_special="all")
        assert tok.encode_ordinary(text) == tok.encode_ordinary(text, fast=False)

    check()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(97, 99), max_size=20), st.integers(0, 20))
def test_bpe_ranked_is_reference_encode(ids: list[int], n_merges: int) -> None:
    tok = RegexTokenizer(r"[\s\S]+")
    tok.train("abcabcaabbccaaabbbcccabacbc" * 3, 256 + n_merges)
    assert bpe_ranked(list(ids), tok.merges) == encode(bytes(ids), tok.merges)
    assert bpe_heap(ids, tok.merges) == encode(bytes(ids), tok.merges)


@functools.cache
def _merges_on_abcd(n_merges: int) -> dict[tuple[int, int], int]:
    rng = random.Random(n_merges)
    text = "".join(rng.choice("aaabbcd") for _ in range(400))
    return bpe.train(text, 256 + n_merges)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(97, 100), max_size=80), st.integers(0, 40))
def test_bpe_heap_is_bpe_ranked_on_long_runs(ids: list[int], n_merges: int) -> None:
    # long inputs over a tiny alphabet: many equal ranks, overlapping pairs, stale entries
    merges = _merges_on_abcd(n_merges)
    before = list(ids)
    assert bpe_heap(ids, merges) == bpe_ranked(list(ids), merges)
    assert ids == before  # bpe_heap returns a new list, its argument is left alone


@pytest.mark.parametrize("name", ENCODINGS)
def test_bpe_heap_on_unsplit_text_is_ranked_and_reference(name: str) -> None:
    """Whole texts as one chunk, with a real tokenizer's merges: long chunks, real ranks."""
    tok = ours(name)

    @settings(max_examples=max(50, PARITY_EXAMPLES // 3), deadline=None)
    @given(valid_text)
    def check(text: str) -> None:
        ids = [tok.byte_shuffle[b] for b in text.encode("utf-8")]
        got = bpe_heap(ids, tok.merges)
        assert got == bpe_ranked(list(ids), tok.merges)
        assert got == encode(text, tok.merges, tok.byte_shuffle)

    check()


@pytest.mark.parametrize("name", ENCODINGS)
def test_hostile_shapes_match_tiktoken(name: str) -> None:
    """One long chunk (or many hard ones): the default path, the fast encoder and streaming
    give tiktoken's ids; the heap gives the rescanning merge's and the reference's ids."""
    enc, tok = tiktoken_encoding(name), ours(name)
    for shape, text in hostile_texts(20_000).items():
        want = enc.encode_ordinary(text)
        assert tok.encode_ordinary(text) == want, shape
        assert FastEncoder.from_tokenizer(tok).encode_ordinary(text) == want, shape
        pieces = [text[i : i + 4096] for i in range(0, len(text), 4096)]
        assert list(tok.encode_iterable(pieces)) == want, shape
    for shape, text in hostile_texts(1_500, seed=1).items():
        ids = [tok.byte_shuffle[b] for b in text.encode("utf-8")]
        got = bpe_heap(ids, tok.merges)
        assert got == bpe_ranked(list(ids), tok.merges), shape
        assert got == encode(text, tok.merges, tok.byte_shuffle), shape
        if name != "r50k_base":  # cl100k and o200k keep these shapes in one chunk
            if shape in ("spaces", "one letter", "random word"):
                assert tok.encode_ordinary(text) == enc.encode_ordinary(text) == got, shape


def test_trained_tokenizer_fast_equals_reference() -> None:
    tok = RegexTokenizer()
    tok.train(assets.botchan_text()[:40_000], 600, fast=True)
    text = assets.botchan_text()[40_000:80_000]
    assert tok.encode(text) == tok.encode(text, fast=False)


def test_fast_encoder_follows_new_tables() -> None:
    tok = RegexTokenizer()
    first = tok.fast_encoder()
    assert tok.fast_encoder() is first
    tok.train("hello hello hello", 258, fast=True)
    assert tok.fast_encoder() is not first
    assert tok.encode("hello") == tok.encode("hello", fast=False)
    tok.pattern = r"\S+|\s+"
    assert tok.encode("hello world") == tok.encode("hello world", fast=False)


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
        Tokenizer().encode_ordinary(b"abc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="merge ids must be ints >= 0"):
        FastEncoder({(97, 97): -1})


def test_pickle_and_copy_after_fast_use() -> None:
    import copy
    import pickle

    tok = RegexTokenizer()
    tok.train("hello hello world", 260, fast=True)
    want = tok.encode("hello world", fast=False)
    assert tok.encode("hello world") == want
    for clone in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok)):
        assert clone.encode("hello world") == want
    enc = pickle.loads(pickle.dumps(tok.fast_encoder()))
    assert enc.encode_ordinary("hello world") == want
