"""Small language models the book trains itself, and how to score them (chapters 08-10).

No pretrained model is available offline, so where the book says how a model behaves it trains
one on text cut by its own tokenizer and measures it. Two models, one interface:

* :class:`NGramLM`, a count model: interpolated Kneser-Ney smoothing over token ids, the
  standard smoothing for n-grams (Chen and Goodman, "An Empirical Study of Smoothing
  Techniques for Language Modeling", 1998). Fits a million tokens in a fraction of a second.
* :class:`~tokcourse.course.neural_lm.NeuralLM`, a tiny neural model in numpy (Bengio et al.,
  2003), with tied or untied input and output embeddings (:mod:`.neural_lm`).

Both give ``log2_probs(ids, context)`` (one log-probability per token of ``ids``, each given
``context`` and the ids before it) and ``next_distribution(context)`` (probabilities over the
whole vocabulary). :func:`evaluate` turns the first into *bits per byte*: the total surprise of
held-out text divided by its size in UTF-8 bytes, a score that does not depend on how the text
was cut into tokens, so it compares models with different vocabularies (:func:`bits_per_byte`).

>>> lm = NGramLM(vocab_size=3, order=2).fit([0, 1, 2, 0, 1, 2, 0, 1])
>>> round(float(lm.next_distribution([0]).sum()), 12)
1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from tokcourse.course.neural_lm import NeuralLM, as_ids, as_sequences, check_vocab_size

__all__ = ["Evaluation", "NGramLM", "NeuralLM", "bits_per_byte", "evaluate"]


def _codes(symbols: np.ndarray, width: int, base: int) -> np.ndarray:
    """The code of every window of ``width`` symbols: sum of symbol * base**place (int64)."""
    n = len(symbols) - width + 1
    code = np.zeros(n, dtype=np.int64)
    for j in range(width):
        code = code * base + symbols[j : j + n]
    return code


@dataclass
class _Level:
    """The counts of one order k: n-grams (context, word) and their contexts, codes sorted."""

    keys: np.ndarray  # codes of the k-grams seen, sorted
    counts: np.ndarray  # their counts (raw at the top order, continuation counts below)
    contexts: np.ndarray  # codes of the distinct (k-1)-symbol contexts, sorted
    totals: np.ndarray  # sum of counts per context
    types: np.ndarray  # number of distinct words per context, N1+(h .)
    discount: float


class NGramLM:
    """An n-gram model over token ids with interpolated Kneser-Ney smoothing.

    At order ``k`` with context ``h`` (the last ``k - 1`` ids) and counts ``c``::

        P_k(w | h) = max(c(h, w) - D_k, 0) / c(h) + D_k * N1+(h .) / c(h) * P_{k-1}(w | h')

    where ``c(h)`` sums ``c(h, .)``, ``N1+(h .)`` is how many distinct words follow ``h``, and
    ``h'`` is ``h`` without its first id; an unseen context gives ``P_{k-1}`` unchanged. At the
    top order ``c`` is the raw count; below it, Kneser-Ney's *continuation count*, the number of
    distinct ids seen just before the n-gram. The bottom, ``P_0``, is uniform over the
    vocabulary, so every token, even one the training text never contains, gets some
    probability, and each ``P_k`` sums to exactly 1. ``D_k = n1 / (n1 + 2 n2)`` from the
    numbers of n-grams of order ``k`` counted once and twice (Ney, Essen and Kneser, 1994;
    0.5 where nothing is counted once).

    A text starts after ``order - 1`` copies of a start symbol (id ``vocab_size``, never
    predicted): the first tokens of a text are scored as first tokens. ``fit`` takes one
    sequence of ids or several (documents); n-grams never cross from one to the next.
    Codes of n-grams are int64, so ``(vocab_size + 1) ** order`` must stay below 2**63
    (order 4 up to a vocabulary of 50,000).

    >>> lm = NGramLM(vocab_size=4, order=3).fit([[0, 1, 2], [0, 1, 3]])
    >>> lm.next_distribution([0, 1]).round(3).tolist()  # 2 and 3 share what follows "0 1"
    [0.083, 0.083, 0.417, 0.417]
    """

    def __init__(self, vocab_size: int, order: int = 3) -> None:
        self.vocab_size = check_vocab_size(vocab_size)
        if isinstance(order, bool) or not isinstance(order, int) or order < 1:
            raise ValueError(f"order must be an int >= 1 (1: unigram), got {order!r}")
        self.order = order
        self.base = self.vocab_size + 1  # one more symbol: the start of a text
        if self.base**order >= 2**63:
            raise ValueError(
                f"order {order} with a vocabulary of {vocab_size} is too large: n-gram codes "
                f"need (vocab_size + 1) ** order < 2**63"
            )
        self.levels: list[_Level] = []

    @property
    def bos(self) -> int:
        """The start symbol's id: one past the last token id."""
        return self.vocab_size

    def fit(self, data: Sequence[int] | Sequence[Sequence[int]] | np.ndarray) -> NGramLM:
        """Count the n-grams of ``data`` (one sequence of ids or several) and return ``self``."""
        seqs = as_sequences(data, self.vocab_size)
        n, base = self.order, self.base
        pad = np.full(n - 1, self.bos, dtype=np.int64)
        top = np.concatenate([_codes(np.concatenate([pad, s]), n, base) for s in seqs if len(s)])
        keys, counts = np.unique(top, return_counts=True)
        levels = [self._level(keys, counts)]
        for k in range(n - 1, 0, -1):
            # continuation count of (h, w): how many distinct ids x precede it, i.e. how many
            # distinct (k+1)-grams (x, h, w) were seen. Dropping x is taking the code mod base**k.
            keys, counts = np.unique(keys % base**k, return_counts=True)
            levels.append(self._level(keys, counts))
        self.levels = levels[::-1]  # levels[k - 1] is order k
        return self

    def _level(self, keys: np.ndarray, counts: np.ndarray) -> _Level:
        contexts, first, types = np.unique(keys // self.base, return_index=True, return_counts=True)
        totals = np.add.reduceat(counts, first)
        n1, n2 = int((counts == 1).sum()), int((counts == 2).sum())
        discount = n1 / (n1 + 2 * n2) if n1 else 0.5
        return _Level(keys, counts, contexts, totals, types, discount)

    def _check_fitted(self) -> None:
        if not self.levels:
            raise RuntimeError("the model has no counts yet: call fit(ids) first")

    def _history(self, context: Sequence[int] | np.ndarray) -> np.ndarray:
        """The last ``order - 1`` symbols before the next token (start symbols if too short)."""
        ctx = as_ids(context, self.vocab_size, "context")
        pad = np.full(self.order - 1, self.bos, dtype=np.int64)
        return np.concatenate([pad, ctx])[len(ctx) :] if self.order > 1 else ctx[:0]

    def next_distribution(self, context: Sequence[int] | np.ndarray = ()) -> np.ndarray:
        """Probabilities of every id as the next token after ``context`` (float64, sums to 1).

        Only the last ``order - 1`` ids of ``context`` matter; a shorter context is the start
        of a text.
        """
        self._check_fitted()
        hist = self._history(context)
        p = np.full(self.vocab_size, 1.0 / self.vocab_size)
        for k, lv in enumerate(self.levels, start=1):
            h = 0
            for s in hist[len(hist) - (k - 1) :] if k > 1 else ():
                h = h * self.base + int(s)
            i = np.searchsorted(lv.contexts, h)
            if i == len(lv.contexts) or lv.contexts[i] != h:
                continue  # unseen context: the lower order's distribution as it is
            lo, hi = np.searchsorted(lv.keys, [h * self.base, (h + 1) * self.base])
            total, d = float(lv.totals[i]), lv.discount
            p = p * (d * float(lv.types[i]) / total)
            p[lv.keys[lo:hi] % self.base] += (lv.counts[lo:hi] - d) / total
        return p

    def log2_probs(
        self, ids: Sequence[int] | np.ndarray, context: Sequence[int] | np.ndarray = ()
    ) -> np.ndarray:
        """log2 P(id | everything before it) for each id of ``ids``, after ``context``.

        An empty ``context`` means ``ids`` starts a text.
        """
        self._check_fitted()
        ids = as_ids(ids, self.vocab_size, "ids")
        full = np.concatenate([self._history(context), ids])  # order - 1 symbols, then ids
        p = np.full(len(ids), 1.0 / self.vocab_size)
        for k, lv in enumerate(self.levels, start=1):
            codes = _codes(full[self.order - k :], k, self.base)
            h = codes // self.base
            i = np.minimum(np.searchsorted(lv.contexts, h), len(lv.contexts) - 1)
            seen_h = lv.contexts[i] == h
            j = np.minimum(np.searchsorted(lv.keys, codes), len(lv.keys) - 1)
            c = np.where(lv.keys[j] == codes, lv.counts[j], 0)
            total = np.where(seen_h, lv.totals[i], 1)
            d = lv.discount
            smoothed = (np.maximum(c - d, 0) + d * lv.types[i] * p) / total
            p = np.where(seen_h, smoothed, p)
        return np.log2(p)


class LanguageModel(Protocol):
    def log2_probs(
        self, ids: Sequence[int] | np.ndarray, context: Sequence[int] | np.ndarray = ()
    ) -> np.ndarray: ...


def bits_per_byte(total_log2_loss: float, n_bytes: int) -> float:
    """Bits per UTF-8 byte: the total surprise (``-sum log2 p``, in bits) over the text's size.

    >>> bits_per_byte(800.0, 100)  # 8 bits for every byte: no better than knowing nothing
    8.0
    """
    if isinstance(n_bytes, bool) or not isinstance(n_bytes, (int, np.integer)) or n_bytes <= 0:
        raise ValueError(f"n_bytes must be a positive int (the text's UTF-8 size), got {n_bytes!r}")
    loss = float(total_log2_loss)
    if not math.isfinite(loss) or loss < 0:
        raise ValueError(f"total_log2_loss must be a finite number of bits >= 0, got {loss!r}")
    return loss / int(n_bytes)


@dataclass(frozen=True)
class Evaluation:
    """A model's score on held-out text."""

    bits: float  # total surprise of the held-out ids, -sum log2 p
    n_tokens: int
    n_bytes: int

    @property
    def bits_per_token(self) -> float:
        return self.bits / self.n_tokens

    @property
    def bits_per_byte(self) -> float:
        return bits_per_byte(self.bits, self.n_bytes)


def evaluate(
    model: LanguageModel,
    ids: Sequence[int] | np.ndarray,
    n_bytes: int | str,
    context: Sequence[int] | np.ndarray = (),
) -> Evaluation:
    """Score ``model`` on held-out ``ids``: every id is scored, given ``context`` before them.

    ``n_bytes`` is the UTF-8 size of the text the ids encode, or that text itself (a str).
    The neural model needs at least its ``context_size`` ids of ``context``.

    >>> lm = NGramLM(vocab_size=256, order=1).fit(list(b"abab"))
    >>> round(evaluate(lm, list(b"ab"), "ab").bits_per_byte, 3)
    1.411
    """
    if isinstance(n_bytes, str):
        n_bytes = len(n_bytes.encode("utf-8"))
    logp = model.log2_probs(ids, context)
    if not len(logp):
        raise ValueError("no held-out ids to score")
    return Evaluation(float(-logp.sum()), len(logp), n_bytes)
