"""sentencepiece's unigram training steps, as written in tokcourse.unigram_train (ch11)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse.unigram import segmentations
from tokcourse.unigram_spm_steps import (
    bayesian_m_step,
    digamma,
    spm_prune,
    spm_prune_rows,
    two_best,
)
from tokcourse.unigram_train import em_step, expected_counts, removal_losses

EULER = 0.5772156649015329


def test_digamma_is_sentencepieces_series() -> None:
    assert math.isclose(digamma(1.0), -EULER, abs_tol=1e-9)
    assert math.isclose(digamma(0.5), -EULER - 2 * math.log(2), abs_tol=1e-9)
    for x in (0.5, 1.3, 6.9, 7.0, 40.0):  # the recurrence digamma(x + 1) = digamma(x) + 1/x
        assert math.isclose(digamma(x + 1), digamma(x) + 1 / x, abs_tol=1e-9)


def test_bayesian_m_step_drops_counts_below_a_half() -> None:
    new = bayesian_m_step({"a": 3.0, "b": 1.0, "c": 0.49, "d": 0.5})
    assert set(new) == {"a", "b", "d"}
    total = digamma(4.5)
    assert new == {"a": digamma(3.0) - total, "b": digamma(1.0) - total, "d": digamma(0.5) - total}


def test_expected_counts_are_em_steps_counts() -> None:
    counts = {"▁ab": 3, "▁abab": 2, "▁b": 1}
    log_probs = {"▁": -2.0, "a": -2.5, "b": -2.0, "ab": -1.5, "▁ab": -3.0, "zz": -1.0}
    expected = expected_counts(counts, log_probs)
    assert list(expected) == list(log_probs) and expected["zz"] == 0.0
    total = sum(expected.values())
    new = em_step(counts, log_probs)
    assert all(math.isclose(new[p], math.log(c / total)) for p, c in expected.items() if c)


@settings(max_examples=200, deadline=None)
@given(
    st.text("abc", min_size=1, max_size=7),
    st.dictionaries(st.text("abc", min_size=1, max_size=3), st.integers(-40, -1), min_size=1),
)
def test_two_best_are_the_two_best_segmentations(text, ints) -> None:
    log_probs = {p: k / 7 + len(p) / 1000 for p, k in ints.items()}  # few exact ties
    every = segmentations(text, log_probs)
    scores = sorted((sum(log_probs[p] for p in seg) for seg in every), reverse=True)
    got = two_best(text, log_probs)
    assert len(got) == min(2, len(scores))
    for (score, pieces), want in zip(got, scores, strict=False):
        assert "".join(pieces) == text and math.isclose(score, want)
        assert math.isclose(score, sum(log_probs[p] for p in pieces))
    if len(got) == 2:
        assert got[0][1] != got[1][1]


def test_spm_loss_is_sentencepieces_formula() -> None:
    counts = {"▁ab": 3, "▁a": 1, "▁abc": 2}
    log_probs = {"▁": -1.0, "a": -2.0, "b": -2.0, "c": -2.5, "ab": -1.5, "▁ab": -2.0, "bc": -9.0}
    rows = {r.piece: r for r in spm_prune_rows(counts, log_probs)}
    # Viterbi: ▁ab -> ▁ab (-2.0 beats ▁ ab -2.5), ▁a -> ▁ a, ▁abc -> ▁ab c
    freq = {"▁": 1, "a": 1, "b": 0, "c": 2, "ab": 0, "▁ab": 5, "bc": 0}
    assert {p: r.freq for p, r in rows.items()} == freq
    total = sum(freq.values())  # 9
    # ▁ab alone: best ▁ab (-2.0), second best ▁ ab (-2.5)
    assert rows["▁ab"].alternative == ("▁", "ab") and rows["▁ab"].fate == "loss"
    f = 5
    logprob_sp = math.log(f / total)
    logsum_alt = math.log(total + f * (2 - 1))
    logprob_alt = (math.log(1 + f) - logsum_alt) + (math.log(0 + f) - logsum_alt)
    assert math.isclose(rows["▁ab"].loss, f / total * (logprob_sp - logprob_alt), rel_tol=1e-12)
    assert rows["bc"].fate == "split"  # b c (-4.5) beats bc (-9)
    assert rows["ab"].fate == "unused" and rows["b"].fate == "unused"  # characters too
    assert rows["a"].fate == "kept" and rows["a"].alternative == ()
    assert set(spm_prune(counts, log_probs, keep=4)) == {"▁", "a", "c", "▁ab"}
    assert set(spm_prune(counts, log_probs, keep=3)) == {"▁", "a", "c"}  # the cut bites
    # as in sentencepiece: once more pieces are always kept than asked for, every candidate stays
    assert set(spm_prune(counts, log_probs, keep=2)) == {"▁", "a", "c", "▁ab"}


def test_removal_losses_are_exact() -> None:
    counts = {"▁abab": 5, "▁cd": 1}
    log_probs = {
        "▁": -3.0,
        "a": -3.0,
        "b": -3.0,
        "c": -3.0,
        "d": -3.0,
        "ab": -1.0,
        "▁ab": -1.5,
        "cd": -2.0,
        "ba": -9.0,
    }
    loss = removal_losses(counts, log_probs)
    # ▁abab = ▁ab ab (-2.5); without ab: ▁ab a b (-7.5); without ▁ab: ▁ ab ab (-5.0)
    assert loss == {"ab": 25.0, "▁ab": 12.5, "cd": 4.0, "ba": 0}
