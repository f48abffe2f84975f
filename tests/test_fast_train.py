"""The fast trainer gives exactly the chunk trainer's merges (differential tests).

Chapter 13's names: the *fast trainer* is ``train_fast``; the *chunk trainer* is
``bpe.train_on_chunks`` (chapter 02's loop on each distinct chunk, with its count), whose
merges are the *naive trainer*'s (the same loop over every chunk of the text, as minbpe's
``RegexTokenizer`` does; the chapter checks that equality on its sample).

Corpora: slices of the novel, of stdlib code, multilingual messages, and random Hypothesis
texts over tiny alphabets (many ties, so the tie rule is exercised on every merge).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse import assets, bpe
from tokcourse.fast_train import _reversed_key, count_chunks, train_fast
from tokcourse.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, GPT4O_SPLIT_PATTERN
from tokcourse.regex import RegexTokenizer


def corpora() -> dict[str, str]:
    parallel = assets.parallel_text(["de", "ja", "ru"])
    multilingual = "\n".join(m for lang in ("en", "de", "ja", "ru") for m in parallel[lang][:150])
    return {
        "botchan": assets.botchan_text()[20_000:45_000],
        "stdlib": assets.stdlib_code(25_000),
        "multilingual": multilingual[:25_000],
    }


@pytest.mark.parametrize("name", ["botchan", "stdlib", "multilingual"])
@pytest.mark.parametrize("pattern", [GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, GPT4O_SPLIT_PATTERN])
def test_same_merges_as_the_chunk_trainer_on_corpora(name: str, pattern: str) -> None:
    chunks = count_chunks(corpora()[name], pattern)
    for vocab_size in (260, 400):
        assert train_fast(chunks, vocab_size) == bpe.train_on_chunks(chunks, vocab_size)


def test_same_merges_many_merges() -> None:
    chunks = count_chunks(assets.botchan_text()[:60_000])
    assert train_fast(chunks, 900) == bpe.train_on_chunks(chunks, 900)


def test_no_split_same_as_train() -> None:
    text = assets.botchan_text()[:3_000]
    assert train_fast({text: 1}, 330) == bpe.train(text, 330)


ties = st.lists(st.text(alphabet="ab c", min_size=1, max_size=12), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(ties, st.integers(257, 300))
def test_random_chunks_with_ties(chunks: list[str], vocab_size: int) -> None:
    try:
        want = bpe.train_on_chunks(chunks, vocab_size)
    except ValueError as err:
        with pytest.raises(ValueError, match="needs"):
            train_fast(chunks, vocab_size)
        assert "needs" in str(err)
        return
    assert train_fast(chunks, vocab_size) == want


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.binary(min_size=1, max_size=10).map(lambda b: bytes(x % 4 + 250 for x in b)),
        st.integers(1, 5),
        min_size=1,
    )
)
def test_random_weighted_bytes(chunks: dict[bytes, int]) -> None:
    # bytes near 255 and prefixes of each other: the reversed-bytes key is tested hard here
    n = 256 + min(40, sum(max(len(c) - 1, 0) for c in chunks))
    try:
        want = bpe.train_on_chunks(chunks, n)
    except ValueError:
        return
    assert train_fast(chunks, n) == want


@given(st.binary(max_size=6), st.binary(max_size=6), st.binary(max_size=6), st.binary(max_size=6))
def test_reversed_key_reverses_pair_order(a: bytes, b: bytes, c: bytes, d: bytes) -> None:
    forward = (a, b) < (c, d)
    backward = _reversed_key(a) + _reversed_key(b) > _reversed_key(c) + _reversed_key(d)
    assert forward == backward


def test_identical_bytes_tie_goes_to_smaller_ids() -> None:
    # "ab"+"c" and "a"+"bc" can both exist; equal counts and equal bytes: smaller ids first
    chunks = {"abcab": 3, "bcabc": 3, "xabcx": 2, "abc": 4, "ab": 1, "bc": 1}
    for n in range(257, 266):
        try:
            want = bpe.train_on_chunks(chunks, n)
        except ValueError:
            with pytest.raises(ValueError, match="needs"):
                train_fast(chunks, n)
            break
        assert train_fast(chunks, n) == want


def test_errors_match_the_chunk_trainer() -> None:
    with pytest.raises(ValueError, match="vocab_size <= 257"):
        train_fast(["ab"], 300)
    with pytest.raises(ValueError, match="empty"):
        train_fast(["", ""], 300)
    with pytest.raises(TypeError, match="did you mean train"):
        train_fast("abc", 300)
    with pytest.raises(ValueError, match="at least 256"):
        train_fast(["ab"], 10)
    with pytest.raises(TypeError):
        train_fast({"ab": "3"}, 257)


def test_special_tokens_are_hard_boundaries() -> None:
    text = "ab<|end|>ab<|end|>" * 20 + "xy"
    counts = count_chunks(text, GPT4_SPLIT_PATTERN, ["<|end|>"])
    assert counts == {b"ab": 40, b"xy": 1}
    merges = train_fast(counts, 258)
    assert merges == {(97, 98): 256, (120, 121): 257}  # nothing from "<|end|>", nothing across it
    # without the boundary, the special token's text is trained on
    merges = train_fast(count_chunks(text), 260)
    assert any(pair[0] in b"<|>" or pair[1] in b"<|>" for pair in merges)


def test_regex_tokenizer_fast_and_chunk_trainers_agree() -> None:
    text = assets.botchan_text()[:30_000] + "<|endoftext|>" * 50
    for specials in ((), ["<|endoftext|>"]):
        chunk, fast = RegexTokenizer(), RegexTokenizer()  # train: the chunk trainer by default
        chunk.train(text, 320, special_tokens=specials)
        fast.train(text, 320, fast=True, special_tokens=specials)
        assert fast.merges == chunk.merges
        assert fast.vocab == chunk.vocab
    with pytest.raises(TypeError, match="collection of str"):
        RegexTokenizer().train(text, 300, special_tokens="<|endoftext|>")


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    chunks = count_chunks(assets.botchan_text()[:5_000])
    assert train_fast(chunks, 300, progress=True) == bpe.train_on_chunks(chunks, 300)
    assert "BPE merges" in capsys.readouterr().err


@pytest.mark.slow
def test_full_novel_to_2048_slow(request: pytest.FixtureRequest) -> None:
    """The whole novel, 1,792 merges: about 20 s for the chunk trainer (``-m slow``)."""
    from ._parity import require_slow

    require_slow(request)
    chunks = count_chunks(assets.botchan_text())
    assert train_fast(chunks, 2048) == bpe.train_on_chunks(chunks, 2048)
