"""Model surgery for new tokens: grow the two tables of a model that are indexed by token id.

A language model meets its vocabulary in two places (chapter 06):

- the **embedding table**, one row per token id: row ``i`` is the vector the model reads when
  token ``i`` comes in;
- the **LM head**, the last layer, one row per token id too in the convention used here
  (PyTorch's ``nn.Linear(d_model, vocab_size).weight`` has shape ``(vocab_size, d_model)``;
  the logits are ``h @ lm_head.T``). In the ``h @ W`` convention, ``W`` is
  ``(d_model, vocab_size)`` and a new token is a new *column*; it is the same numbers.

Adding special tokens to a trained model means adding rows to both, one per new id, and
choosing their first values. We use the mean of the existing rows: a new embedding then looks
like an average token rather than noise, and a new LM-head row gives the new token the
*average* of the old logits, so it can never take more than a share ``1 / (n + 1)`` of the
probability before fine-tuning teaches it (``exp`` is convex: Jensen's inequality).

>>> import numpy as np
>>> emb = np.array([[1.0, 2.0], [3.0, 4.0]])
>>> new_emb, new_head = add_token_rows(emb, emb.copy(), 1)
>>> new_emb
array([[1., 2.],
       [3., 4.],
       [2., 3.]])
"""

from __future__ import annotations

import operator

import numpy as np

__all__ = ["add_token_rows", "vocab_parameters"]


def _table(value: object, name: str) -> np.ndarray:
    """Validate one ``(vocab_size, d_model)`` table of floats."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(value).__name__}")
    if value.ndim != 2:
        raise ValueError(f"{name} must be 2-D (vocab_size, d_model), got shape {value.shape}")
    if value.shape[0] == 0:
        raise ValueError(f"{name} has no rows: there is no mean to start new tokens from")
    if not np.issubdtype(value.dtype, np.floating):
        raise TypeError(f"{name} must hold floats (trained weights), got dtype {value.dtype}")
    return value


def add_token_rows(
    embedding: np.ndarray, lm_head: np.ndarray, n_new: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return new tables with ``n_new`` more rows, each the mean of the table's old rows.

    Both tables are ``(vocab_size, d_model)``; the new tokens get the ids ``vocab_size``,
    ``vocab_size + 1``, ... The inputs are left untouched and the results keep their dtype.

    >>> import numpy as np
    >>> emb, head = np.zeros((4, 3), np.float32), np.ones((4, 3), np.float32)
    >>> new_emb, new_head = add_token_rows(emb, head, 2)
    >>> new_emb.shape, new_head.shape, new_head.dtype, new_head[-1].tolist()
    ((6, 3), (6, 3), dtype('float32'), [1.0, 1.0, 1.0])
    """
    embedding, lm_head = _table(embedding, "embedding"), _table(lm_head, "lm_head")
    if embedding.shape != lm_head.shape:
        raise ValueError(
            f"embedding {embedding.shape} and lm_head {lm_head.shape} must have the same shape "
            "(vocab_size, d_model); an lm_head stored as (d_model, vocab_size) is lm_head.T"
        )
    if isinstance(n_new, bool):
        raise TypeError(f"n_new must be an int, got the bool {n_new!r}")
    n_new = operator.index(n_new)
    if n_new < 0:
        raise ValueError(f"n_new must be at least 0, got {n_new}")
    grown = []
    for table in (embedding, lm_head):
        mean = table.mean(axis=0, keepdims=True)  # one row: the average token
        new_rows = np.repeat(mean, n_new, axis=0).astype(table.dtype)
        grown.append(np.concatenate([table, new_rows], axis=0))
    return grown[0], grown[1]


def vocab_parameters(vocab_size: int, d_model: int, *, tied: bool = False) -> int:
    """How many parameters the token-indexed tables hold: embedding plus LM head.

    ``tied=True``: the LM head *is* the embedding table (GPT-2 does this), counted once.

    >>> vocab_parameters(50_257, 768, tied=True)
    38597376
    """
    for name, value in (("vocab_size", vocab_size), ("d_model", d_model)):
        if isinstance(value, bool) or operator.index(value) < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    return vocab_size * d_model * (1 if tied else 2)
