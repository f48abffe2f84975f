"""The book's small language models: the n-gram counts, the neural model's gradients, and the
tied/untied embedding claim chapter 10 makes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tokcourse.course.lm import NeuralLM, NGramLM, bits_per_byte, evaluate
from tokcourse.course.neural_lm import blas_thread_controls, one_blas_thread

# ---- n-gram ---------------------------------------------------------------------------------


def _zipf_ids(n: int, vocab: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.minimum(rng.zipf(1.5, n), vocab) - 1


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_ngram_distributions_sum_to_one(order):
    vocab = 50
    lm = NGramLM(vocab, order).fit([_zipf_ids(3000, vocab, 1), _zipf_ids(500, vocab, 2)])
    rng = np.random.default_rng(order)
    contexts = [rng.integers(0, vocab, size=n).tolist() for n in range(6)] * 5
    contexts += [_zipf_ids(3000, vocab, 1)[i : i + order - 1].tolist() for i in range(0, 60, 7)]
    for ctx in contexts:
        p = lm.next_distribution(ctx)
        assert p.shape == (vocab,)
        assert math.isclose(p.sum(), 1.0, abs_tol=1e-12)
        assert (p > 0).all()


def test_ngram_unseen_tokens_get_some_probability():
    lm = NGramLM(10, 3).fit([1, 2, 3, 1, 2, 3, 1, 2])  # ids 0 and 4..9 never occur
    p = lm.next_distribution([1, 2])
    assert p[3] > 0.5
    assert (p[[0, 4, 5, 6, 7, 8, 9]] > 0).all()
    assert np.isfinite(lm.log2_probs([9, 9, 0])).all()


def test_ngram_hand_computed_kneser_ney():
    # trigrams with two start symbols S: S S 0 (x2), S 0 1 (x2), 0 1 2, 0 1 3
    # order 3: n1 = 2, n2 = 2, D3 = 1/3. Context "0 1": count 2, 2 types.
    # order 2 (continuation counts): S0, 01, 12, 13 once each, D2 = 1: P2(w | 1) = P1(w).
    # order 1: 0, 1, 2, 3 once each, D1 = 1: P1 = uniform = 1/4.
    lm = NGramLM(vocab_size=4, order=3).fit([[0, 1, 2], [0, 1, 3]])
    assert [lv.discount for lv in lm.levels] == [1.0, 1.0, pytest.approx(1 / 3)]
    # P(2 | 0 1) = (1 - 1/3) / 2 + (1/3 * 2 / 2) * 1/4 = 5/12; P(0 | 0 1) = 1/12
    np.testing.assert_allclose(lm.next_distribution([0, 1]), [1 / 12, 1 / 12, 5 / 12, 5 / 12])
    # at the start: P(0) = (2 - 1/3) / 2 + (1/3 * 1 / 2) * P2(0 | S) = 5/6 + 1/6 * 1/4
    np.testing.assert_allclose(lm.next_distribution([]), [7 / 8, 1 / 24, 1 / 24, 1 / 24])
    # P(1 | S 0) = (2 - 1/3) / 2 + (1/3 * 1 / 2) * P2(1 | 0) = 5/6 + 1/6 * 1/4 = 7/8 too
    np.testing.assert_allclose(lm.log2_probs([0, 1, 2]), np.log2([7 / 8, 7 / 8, 5 / 12]))
    assert lm.log2_probs([2], context=[0, 1])[0] == pytest.approx(math.log2(5 / 12))


def test_ngram_lower_order_uses_continuation_counts():
    # Kneser-Ney's "San Francisco": 0 occurs 3 times, always after 1; 3 occurs twice, after
    # two different ids. Below the top order what counts is how many distinct ids came before.
    lm = NGramLM(vocab_size=5, order=2).fit([1, 0, 1, 0, 1, 0, 2, 3, 1, 3])
    # distinct bigrams S1 10 01 02 23 31 13: continuation counts 0:1 1:3 2:1 3:2, total 7,
    # 4 types; n1 = 2, n2 = 1, D1 = 1/2: P1(w) = (c(w) - 1/2) / 7 + (1/2 * 4 / 7) * 1/5
    # id 4 never occurs, so after it the model has only P1
    np.testing.assert_allclose(lm.next_distribution([4]), np.array([9, 29, 9, 19, 4]) / 70)


def test_ngram_log2_probs_match_next_distribution():
    vocab = 30
    train, held = _zipf_ids(4000, vocab, 3), _zipf_ids(40, vocab, 4)
    lm = NGramLM(vocab, 3).fit(train)
    ctx = [5, 7]
    got = lm.log2_probs(held, context=ctx)
    full = ctx + held.tolist()
    want = [math.log2(lm.next_distribution(full[: 2 + i])[t]) for i, t in enumerate(held)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_ngram_fits_documents_separately():
    # "1 2" never crosses from one document to the next
    joined = NGramLM(4, 2).fit([0, 1, 2, 3] * 3)
    apart = NGramLM(4, 2).fit([[0, 1], [2, 3]] * 3)
    assert joined.next_distribution([1])[2] > 0.5 > apart.next_distribution([1])[2]


def test_ngram_errors():
    with pytest.raises(ValueError, match=r"training ids\[2\] = 7"):
        NGramLM(5).fit([1, 2, 7])
    with pytest.raises(ValueError, match="-1"):
        NGramLM(5).fit([[1], [2, -1]])
    with pytest.raises(ValueError, match="empty"):
        NGramLM(5).fit([])
    with pytest.raises(ValueError, match="empty"):
        NGramLM(5).fit([[], []])
    with pytest.raises(ValueError, match="int token ids"):
        NGramLM(5).fit([1.0, 2.0])
    with pytest.raises(ValueError, match="order"):
        NGramLM(5, order=0)
    with pytest.raises(ValueError, match="2\\*\\*63"):
        NGramLM(100_000, order=4)
    with pytest.raises(RuntimeError, match="fit"):
        NGramLM(5).next_distribution([1])
    lm = NGramLM(5).fit([1, 2, 3])
    with pytest.raises(ValueError, match="context"):
        lm.next_distribution([1, 5])
    with pytest.raises(ValueError, match="ids"):
        lm.log2_probs([0, 9])


# ---- bits per byte --------------------------------------------------------------------------


def test_bits_per_byte_and_evaluate():
    assert bits_per_byte(800.0, 100) == 8.0
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_bytes"):
            bits_per_byte(10.0, bad)
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="total_log2_loss"):
            bits_per_byte(bad, 10)
    lm = NGramLM(256, 2).fit(list(b"abcabcabc"))
    text = "abcé"
    ids = list(text.encode())
    result = evaluate(lm, ids, text)
    assert result.n_bytes == 5 and result.n_tokens == 5
    assert result.bits == pytest.approx(-lm.log2_probs(ids).sum())
    assert result.bits_per_byte == pytest.approx(result.bits / 5)
    assert result.bits_per_token == pytest.approx(result.bits / 5)
    with pytest.raises(ValueError, match="no held-out"):
        evaluate(lm, [], 3)


# ---- the neural model -----------------------------------------------------------------------


def _tiny(tied: bool, **kw) -> NeuralLM:
    kw = {"dim": 3, "context_size": 2, "hidden": 4, "seed": 1, "dtype": np.float64} | kw
    return NeuralLM(7, tied=tied, **kw)


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_neural_gradients_match_finite_differences(tied):
    m = _tiny(tied)
    rng = np.random.default_rng(2)
    for p in m.params.values():  # non-zero biases, so their gradients are tested too
        p += 0.3 * rng.standard_normal(p.shape)
    X = np.array([[0, 1], [1, 1], [3, 0], [6, 6], [1, 0]])  # repeated ids: gradients add up
    Y = np.array([2, 1, 5, 0, 1])  # 6 is an input only, 5 a target only, 4 never appears
    _, grads = m.loss_and_grads(X, Y)
    assert (
        set(grads)
        == set(m.params)
        == {"E", "W1", "b1", "W2", "b2", "b"} | (set() if tied else {"U"})
    )
    eps = 1e-6
    for name, param in m.params.items():
        numeric = np.zeros_like(param)
        for i in np.ndindex(param.shape):
            keep = param[i]
            param[i] = keep + eps
            up = m.loss_and_grads(X, Y)[0]
            param[i] = keep - eps
            down = m.loss_and_grads(X, Y)[0]
            param[i] = keep
            numeric[i] = (up - down) / (2 * eps)
        np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8, err_msg=name)


def test_neural_same_seed_same_weights():
    data = _zipf_ids(2000, 20, 5)
    a = NeuralLM(20, dim=8, hidden=16, seed=3).fit(data, epochs=2, progress=False)
    b = NeuralLM(20, dim=8, hidden=16, seed=3).fit(data, epochs=2, progress=False)
    c = NeuralLM(20, dim=8, hidden=16, seed=4).fit(data, epochs=2, progress=False)
    for name in a.params:
        np.testing.assert_array_equal(a.params[name], b.params[name])
    assert a.history == b.history
    assert not np.array_equal(a.embedding, c.embedding)


def test_neural_tied_head_is_the_embedding():
    tied, untied = NeuralLM(9, dim=4, seed=0), NeuralLM(9, dim=4, seed=0, tied=False)
    assert tied.head is tied.embedding and "U" not in tied.params
    assert untied.head is untied.params["U"]
    assert not np.shares_memory(untied.head, untied.embedding)
    assert untied.initial_embedding is not untied.embedding
    np.testing.assert_array_equal(untied.initial_embedding, untied.embedding)


def test_unused_rows_move_only_when_tied():
    # ids 6..9 are in the vocabulary but never in the training text
    vocab, unused = 10, [6, 7, 8, 9]
    data = np.random.default_rng(0).integers(0, 6, size=3000)
    moved = {}
    for tied in (True, False):
        m = NeuralLM(vocab, dim=8, context_size=2, hidden=16, tied=tied, seed=0)
        m.fit(data, epochs=2, progress=False)
        moved[tied] = np.linalg.norm(m.embedding - m.initial_embedding, axis=1)
        if not tied:  # the output side of those tokens is trained all the same
            head_moved = np.linalg.norm(m.head - m.initial_head, axis=1)
            assert (head_moved[unused] > 0.1).all()
    assert (moved[False][unused] == 0).all()  # never an input: exactly the initial values
    assert (moved[False][:6] > 0.1).all()
    assert (moved[True][unused] > 0.1).all()  # tied: pushed through the softmax every step


def test_neural_learns_a_deterministic_sequence():
    vocab = 16
    data = [3, 1, 4, 1, 5, 9, 2, 6] * 100  # the next id is fixed by the last two
    m = NeuralLM(vocab, dim=8, context_size=2, hidden=16, seed=0)
    m.fit(data, epochs=20, batch_size=32, lr=1e-2, progress=False)
    bits = -m.log2_probs(data[2:40], context=data[:2]).mean()
    assert bits < 0.05 * math.log2(vocab)
    assert m.history[0] > 3.5 and m.history[-1] < 0.2
    assert m.next_distribution([3, 1]).argmax() == 4
    assert m.next_distribution([9, 1, 5]).argmax() == 9  # only the last two ids count


def test_neural_log2_probs_match_next_distribution():
    m = NeuralLM(12, dim=4, context_size=3, hidden=8, seed=2, dtype=np.float64)
    ids, ctx = [5, 0, 11, 3, 3], [1, 2, 3]
    full = ctx + ids
    want = [math.log2(m.next_distribution(full[i : i + 3])[t]) for i, t in enumerate(ids)]
    np.testing.assert_allclose(m.log2_probs(ids, context=ctx), want, rtol=1e-12)
    assert math.isclose(m.next_distribution(ctx).sum(), 1.0, abs_tol=1e-12)


def test_neural_errors():
    m = NeuralLM(5, dim=4, context_size=3, hidden=4)
    with pytest.raises(ValueError, match="too short"):
        m.next_distribution([1, 2])
    with pytest.raises(ValueError, match="too short"):
        m.log2_probs([1, 2], context=[0])
    with pytest.raises(ValueError, match=r"training ids\[1\] = 5"):
        m.fit([1, 5, 2, 3], progress=False)
    with pytest.raises(ValueError, match="empty"):
        m.fit([], progress=False)
    with pytest.raises(ValueError, match="no training examples"):
        m.fit([[1, 2, 3], [0, 1]], progress=False)
    with pytest.raises(ValueError, match="dim"):
        NeuralLM(5, dim=0)
    with pytest.raises(ValueError, match="lr"):
        m.fit([1, 2, 3, 4], lr=0, progress=False)
    assert m.steps == 0 and not m.history  # nothing was trained by the failed calls


def test_one_blas_thread_sets_and_restores_the_thread_count():
    a = np.arange(12.0).reshape(3, 4)
    before = [get() for get, _ in blas_thread_controls()]
    with one_blas_thread():
        assert (a @ a.T).shape == (3, 3)
        assert all(get() == 1 for get, _ in blas_thread_controls())
    assert [get() for get, _ in blas_thread_controls()] == before
