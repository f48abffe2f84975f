"""The unigram teaching functions and the small trainer (tokcourse.unigram, unigram_train)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse.unigram import log_sum_exp, segmentations, viterbi
from tokcourse.unigram_train import (
    corpus_log_likelihood,
    em_step,
    forward_backward,
    prune,
    seed_pieces,
    train_unigram,
    word_counts,
)

# log-probabilities that are multiples of 0.5: sums are exact, so ties are real ties
vocabularies = st.dictionaries(
    st.text("abc", min_size=2, max_size=4), st.integers(-12, -1).map(lambda k: k / 2), max_size=8
).flatmap(
    lambda extra: st.fixed_dictionaries(
        {c: st.integers(-12, -1).map(lambda k: k / 2) for c in "abc"}
    ).map(lambda singles: {**singles, **extra})
)
texts = st.text("abc", max_size=9)


def brute_best(text: str, log_probs: dict[str, float]) -> list[str]:
    """The best segmentation by enumeration, with the documented tie rule: the longest last
    piece, then the longest piece before it, and so on."""
    every = segmentations(text, log_probs, alpha=1.0)
    totals = {seg: sum(log_probs[p] for p in seg) for seg in every}
    top = max(totals.values())
    tied = [seg for seg, total in totals.items() if total == top]
    return list(max(tied, key=lambda seg: [len(p) for p in reversed(seg)]))


@settings(max_examples=300, deadline=None)
@given(texts, vocabularies)
def test_viterbi_is_the_best_segmentation_with_the_tie_rule(text, log_probs) -> None:
    if not text:
        assert viterbi(text, log_probs) == []
        return
    assert viterbi(text, log_probs) == brute_best(text, log_probs)


def test_viterbi_examples_and_errors() -> None:
    assert viterbi("", {}) == []
    assert viterbi("aaa", {"a": -1.0, "aa": -2.0}) == ["a", "aa"]
    assert viterbi("abcd", {"a": -2, "b": -2, "c": -2, "d": -2, "abc": -1.5, "ab": -1,
                            "cd": -1}) == ["ab", "cd"]  # fmt: skip
    with pytest.raises(ValueError, match="position 2 \\('x'\\)"):
        viterbi("abx", {"a": -1.0, "b": -1.0})
    with pytest.raises(ValueError, match="position 0"):
        viterbi("ab", {"b": -1.0})
    with pytest.raises(ValueError, match="position 1 \\('b'\\)"):  # 'abc' starts but runs over
        viterbi("ab", {"a": -1.0, "abc": -1.0})


def test_segmentations_and_log_sum_exp() -> None:
    probs = segmentations("abc", {"a": 0.0, "b": 0.0, "c": 0.0, "ab": 0.0, "bc": 0.0})
    assert len(probs) == 3 and all(math.isclose(p, 1 / 3) for p in probs.values())
    assert segmentations("ab", {"a": -1.0}) == {}
    with pytest.raises(ValueError, match="more than 10"):
        segmentations("a" * 12, {"a": -1.0, "aa": -1.0}, limit=10)
    assert log_sum_exp([]) == -math.inf and log_sum_exp([-math.inf]) == -math.inf
    assert math.isclose(log_sum_exp([1000.0, 1000.0]), 1000 + math.log(2))


@settings(max_examples=200, deadline=None)
@given(st.text("abc", min_size=1, max_size=8), vocabularies)
def test_forward_backward_agrees_with_enumeration(word, log_probs) -> None:
    log_z, expected = forward_backward(word, log_probs)
    every = segmentations(word, log_probs)
    totals = [sum(log_probs[p] for p in seg) for seg in every]
    assert math.isclose(log_z, log_sum_exp(totals), rel_tol=1e-12, abs_tol=1e-12)
    counts: dict[str, float] = {}
    for seg, prob in every.items():
        for piece in seg:
            counts[piece] = counts.get(piece, 0.0) + prob
    assert set(expected) == set(counts)
    assert all(math.isclose(expected[p], counts[p], abs_tol=1e-9) for p in counts)
    # the expected number of characters covered is the word's length
    assert math.isclose(sum(len(p) * c for p, c in expected.items()), len(word))


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text("abc", min_size=1, max_size=6), st.integers(1, 5), min_size=1,
                       max_size=5), vocabularies)  # fmt: skip
def test_em_never_lowers_the_likelihood(counts, log_probs) -> None:
    before = dict(log_probs)
    start = em_step(counts, log_probs)  # normalized from here on
    assert log_probs == before  # arguments unchanged
    assert math.isclose(sum(math.exp(v) for v in start.values()), 1.0)
    after = em_step(counts, start)
    assert corpus_log_likelihood(counts, after) >= corpus_log_likelihood(counts, start) - 1e-9


def test_em_step_contract() -> None:
    assert em_step({}, {"a": -1.0}) == {}
    new = em_step({"ab": 1}, {"a": -1.0, "b": -1.0, "ab": -1.0, "zz": -1.0})
    assert set(new) == {"a", "b", "ab"}  # 'zz' is in no segmentation: dropped
    with pytest.raises(ValueError, match="'cd'"):
        em_step({"ab": 1, "cd": 1}, {"a": -1.0, "b": -1.0})


def test_seed_pieces_and_word_counts() -> None:
    assert word_counts(" the  cat\nthe ") == {"▁the": 2, "▁cat": 1}
    seeds = seed_pieces({"▁abab": 3, "▁ab": 1}, size=2)
    assert set(seeds) == {"▁", "a", "b", "ab", "▁abab"}  # count x length: ▁abab 15, ab 14
    assert math.isclose(sum(math.exp(v) for v in seeds.values()), 1.0)


def test_prune_keeps_characters_and_the_costliest_pieces() -> None:
    counts = {"▁abab": 5, "▁cd": 1}
    log_probs = {"▁": -3.0, "a": -3.0, "b": -3.0, "c": -3.0, "d": -3.0, "ab": -1.0,
                 "▁ab": -1.5, "cd": -2.0, "ba": -9.0}  # fmt: skip
    kept = prune(counts, log_probs, keep=7)
    assert set(kept) == {"▁", "a", "b", "c", "d", "ab", "▁ab"}  # ba unused, cd used once
    assert prune(counts, log_probs, keep=0).keys() == {"▁", "a", "b", "c", "d"}
    # a piece that some word cannot do without is kept whatever its loss
    no_d = {k: v for k, v in log_probs.items() if k != "d"}
    assert "cd" in prune(counts, no_d, keep=6)


def test_train_unigram_small() -> None:
    text = "the cat sat on the mat with the hat " * 20 + "a bat and a rat"
    run = train_unigram(text, vocab_size=20, seed_size=60)
    chars = set(text.replace(" ", "")) | {"▁"}
    assert chars <= set(run.log_probs)
    assert len(run.log_probs) <= max(20, len(chars))
    sizes = [r.vocab_size for r in run.history]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == len(run.log_probs)
    assert viterbi("▁the", run.log_probs) == ["▁the"]
    messages: list[str] = []
    train_unigram(text, vocab_size=30, verbose=True, log=messages.append)
    assert messages and messages[0].startswith("step 1:")
    with pytest.raises(ValueError, match="0"):
        train_unigram(text, vocab_size=0)
    with pytest.raises(ValueError, match="1.5"):
        train_unigram(text, vocab_size=10, shrink=1.5)
