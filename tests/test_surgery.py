"""Model surgery for new tokens: shapes, preserved rows, the mean init, errors that name values."""

from __future__ import annotations

import numpy as np
import pytest

from tokcourse.course.surgery import add_token_rows, vocab_parameters


def tables(vocab=5, d=3, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    emb = rng.normal(0.5, 1.0, (vocab, d)).astype(dtype)
    head = rng.normal(-0.5, 1.0, (vocab, d)).astype(dtype)
    return emb, head


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("n_new", [0, 1, 3])
def test_rows_are_added_with_the_mean_and_old_rows_kept(dtype, n_new):
    emb, head = tables(dtype=dtype)
    new_emb, new_head = add_token_rows(emb, head, n_new)
    for old, new in ((emb, new_emb), (head, new_head)):
        assert new.shape == (old.shape[0] + n_new, old.shape[1])
        assert new.dtype == old.dtype
        np.testing.assert_array_equal(new[: len(old)], old)
        for row in new[len(old) :]:
            np.testing.assert_allclose(row, old.mean(axis=0), rtol=1e-3)


def test_inputs_are_not_modified_and_results_are_new_arrays():
    emb, head = tables()
    before = emb.copy(), head.copy()
    new_emb, new_head = add_token_rows(emb, head, 0)
    new_emb[0, 0] = new_head[0, 0] = 99.0
    np.testing.assert_array_equal(emb, before[0])
    np.testing.assert_array_equal(head, before[1])


def test_each_table_gets_its_own_mean():
    emb, head = tables()
    new_emb, new_head = add_token_rows(emb, head, 1)
    assert not np.allclose(new_emb[-1], new_head[-1])


def test_a_mean_row_never_takes_more_than_its_share_of_probability():
    """The reason for the mean init: the new logit is the average logit (Jensen)."""
    emb, head = tables(vocab=50, d=8, dtype=np.float64)
    _, new_head = add_token_rows(emb, head, 1)
    hidden = np.random.default_rng(1).normal(size=(200, 8)) * 3
    logits = hidden @ new_head.T
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    assert (probs[:, -1] <= 1 / 51 + 1e-12).all()


@pytest.mark.parametrize(
    ("emb", "head", "n_new", "error", "message"),
    [
        ([[1.0]], np.ones((1, 1)), 1, TypeError, "embedding must be a numpy array, got list"),
        (np.ones(3), np.ones(3), 1, ValueError, r"2-D .* got shape \(3,\)"),
        (np.ones((0, 2)), np.ones((0, 2)), 1, ValueError, "no rows"),
        (np.ones((2, 2), int), np.ones((2, 2), int), 1, TypeError, "dtype int64"),
        (np.ones((2, 3)), np.ones((3, 2)), 1, ValueError, r"\(2, 3\) and lm_head \(3, 2\)"),
        (np.ones((2, 3)), np.ones((2, 3)), -1, ValueError, "at least 0, got -1"),
        (np.ones((2, 3)), np.ones((2, 3)), True, TypeError, "bool True"),
        (np.ones((2, 3)), np.ones((2, 3)), 1.5, TypeError, "float"),
    ],
)
def test_bad_inputs_are_refused_by_name(emb, head, n_new, error, message):
    with pytest.raises(error, match=message):
        add_token_rows(emb, head, n_new)


def test_vocab_parameters():
    assert vocab_parameters(10, 4) == 80
    assert vocab_parameters(10, 4, tied=True) == 40
    with pytest.raises(ValueError, match="d_model must be a positive int, got 0"):
        vocab_parameters(10, 0)
