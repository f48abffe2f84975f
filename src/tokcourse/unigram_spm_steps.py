"""sentencepiece's unigram training steps written out, for comparison with the small trainer
(ch11): its Bayesian M-step and its pruning round, as in sentencepiece 0.2.3's
``unigram_model_trainer.cc`` (``Digamma``, ``RunMStep``, ``PruneSentencePieces``).

:mod:`tokcourse.unigram_train` does not use them; the chapter runs them on the same model
state as its own steps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from tokcourse.unigram_train import _best_score

__all__ = ["SpmPruneRow", "bayesian_m_step", "digamma", "spm_prune", "spm_prune_rows", "two_best"]


def digamma(x: float) -> float:
    """The digamma function as sentencepiece's trainer computes it (``Digamma`` in
    ``unigram_model_trainer.cc``: shift ``x`` up past 7, then an asymptotic series).

    >>> round(digamma(1.0), 6)  # -0.577216, minus the Euler-Mascheroni constant
    -0.577216
    """
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1 / 2
    xx = 1 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return (
        result
        + math.log(x)
        + (1 / 24) * xx2
        - (7 / 960) * xx4
        + (31 / 8064) * xx4 * xx2
        - (127 / 30720) * xx4 * xx4
    )


def bayesian_m_step(expected: Mapping[str, float]) -> dict[str, float]:
    """sentencepiece's M-step (``RunMStep``): pieces with an expected count below 0.5 are
    dropped, the others get ``digamma(count) - digamma(sum of the kept counts)``.

    >>> {p: round(v, 4) for p, v in bayesian_m_step({"a": 3.0, "b": 1.0, "c": 0.4}).items()}
    {'a': -0.3333, 'b': -1.8333}
    """
    kept = {p: c for p, c in expected.items() if c >= 0.5}
    total = digamma(sum(kept.values()))
    return {p: digamma(c) - total for p, c in kept.items()}


def two_best(text: str, log_probs: Mapping[str, float]) -> list[tuple[float, list[str]]]:
    """The best and second-best segmentations of ``text`` with their scores (fewer if
    ``text`` has fewer segmentations), best first.

    >>> two_best("ab", {"a": -1.0, "b": -1.5, "ab": -2.0})
    [(-2.0, ['ab']), (-2.5, ['a', 'b'])]
    """
    n = len(text)
    top: list[list[tuple[float, list[str]]]] = [[(0.0, [])]] + [[] for _ in range(n)]
    for e in range(1, n + 1):
        found = [
            (score + log_probs[text[s:e]], [*pieces, text[s:e]])
            for s in range(e)
            if text[s:e] in log_probs
            for score, pieces in top[s]
        ]
        top[e] = sorted(found, key=lambda sp: -sp[0])[:2]  # stable: earlier starts first
    return top[n]


@dataclass(frozen=True)
class SpmPruneRow:
    """One piece in sentencepiece's pruning (``PruneSentencePieces``).

    ``freq``: how often the piece occurs in the Viterbi segmentations of the corpus.
    ``alternative``: the second-best segmentation of the piece on its own, used in its place
    if it is removed (``()`` if it has none). ``loss``: sentencepiece's estimate of the fall
    in likelihood without the piece (``None`` if no loss is computed). ``fate``: ``"loss"``
    (ranked by its loss), ``"kept"`` (no alternative: always kept), ``"unused"`` (in no
    Viterbi segmentation: removed) or ``"split"`` (its own best segmentation is not the
    piece itself: removed).
    """

    piece: str
    freq: int
    alternative: tuple[str, ...]
    loss: float | None
    fate: str


def spm_prune_rows(
    word_counts: Mapping[str, int], log_probs: Mapping[str, float]
) -> list[SpmPruneRow]:
    """sentencepiece's pruning losses on one model state, in the order of ``log_probs``.

    With ``freq[p]`` the Viterbi frequencies, ``sum`` their total and ``alt`` the piece's
    alternative, the loss of ``p`` is ``F * (logprob_sp - logprob_alt)`` with ``F =
    freq[p] / sum``, ``logprob_sp = log(freq[p] / sum)`` and ``logprob_alt`` the sum over
    ``q`` in ``alt`` of ``log((freq[q] + freq[p]) / (sum + freq[p] * (len(alt) - 1)))``: the
    likelihood of one token if every use of ``p`` became ``alt``, the frequencies re-counted.
    Computed in float64 (sentencepiece stores float32).

    >>> rows = spm_prune_rows({"ab": 3, "a": 1}, {"a": -1.0, "b": -2.0, "ab": -1.5})
    >>> [(r.piece, r.freq, r.alternative, r.fate) for r in rows]
    [('a', 1, (), 'kept'), ('b', 0, (), 'unused'), ('ab', 3, ('a', 'b'), 'loss')]
    """
    longest = max(map(len, log_probs), default=0)
    freq = dict.fromkeys(log_probs, 0)
    for word, count in word_counts.items():
        for piece in _best_score(word, log_probs, longest)[1]:
            freq[piece] += count
    total = sum(freq.values())
    rows = []
    for piece in log_probs:
        best = two_best(piece, log_probs)
        alternative = tuple(best[1][1]) if len(best) == 2 else ()
        if len(best[0][1]) > 1:
            rows.append(SpmPruneRow(piece, freq[piece], alternative, None, "split"))
        elif freq[piece] == 0:
            rows.append(SpmPruneRow(piece, 0, alternative, None, "unused"))
        elif not alternative:
            rows.append(SpmPruneRow(piece, freq[piece], (), None, "kept"))
        else:
            f = freq[piece]
            logprob_sp = math.log(f) - math.log(total)
            logsum_alt = math.log(total + f * (len(alternative) - 1))
            logprob_alt = sum(math.log(freq[q] + f) - logsum_alt for q in alternative)
            loss = f / total * (logprob_sp - logprob_alt)
            rows.append(SpmPruneRow(piece, f, alternative, loss, "loss"))
    return rows


def spm_prune(
    word_counts: Mapping[str, int], log_probs: Mapping[str, float], keep: int
) -> dict[str, float]:
    """sentencepiece's pruning round: the ``"kept"`` pieces of :func:`spm_prune_rows`, then
    the ``"loss"`` pieces, largest loss first (ties in the order of ``log_probs``), until
    ``keep`` pieces are kept; ``"unused"`` and ``"split"`` pieces go, characters included.

    >>> sorted(spm_prune({"ab": 3, "a": 1}, {"a": -1.0, "b": -2.0, "ab": -1.5}, keep=2))
    ['a', 'ab']
    """
    rows = spm_prune_rows(word_counts, log_probs)
    kept = [r.piece for r in rows if r.fate == "kept"]
    order = {p: i for i, p in enumerate(log_probs)}
    ranked = sorted((r for r in rows if r.fate == "loss"), key=lambda r: (-r.loss, order[r.piece]))
    for row in ranked:
        if len(kept) == keep:  # as in sentencepiece: == , so an overfull start keeps them all
            break
        kept.append(row.piece)
    return {p: log_probs[p] for p in log_probs if p in set(kept)}
