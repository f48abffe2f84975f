"""Training a unigram model, small and readable (ch11): seed pieces, EM steps, pruning.

>>> new = em_step({"ab": 1}, {"a": math.log(0.5), "b": math.log(0.5), "ab": math.log(0.5)})
>>> {piece: round(math.exp(lp), 6) for piece, lp in new.items()}
{'a': 0.25, 'ab': 0.5, 'b': 0.25}

The trainer works on **words** (text split on white space, each word with a ``▁`` in front,
as sentencepiece sees them) and their counts:

1. :func:`seed_pieces`: every character, plus the most frequent substrings of the words;
   their relative frequencies are the first log-probabilities.
2. :func:`em_step`: the E-step runs forward-backward over each word's lattice to get the
   *expected* number of times each piece is used (over all segmentations, weighted by their
   probability and by the word's count); the M-step turns those counts into new
   log-probabilities, ``log(count / total)``. A piece whose expected count is exactly 0 (it
   occurs in no segmentation of any word) is dropped.
3. :func:`prune`: each multi-character piece gets a *loss*, how much the corpus log-likelihood
   of the best segmentations falls if it is removed; the pieces with the largest loss stay.
   Single characters always stay, so every word can still be segmented.
4. :func:`train_unigram`: seed, then rounds of two EM steps and a pruning to ``shrink`` of
   the vocabulary, until the vocabulary is small enough; two last EM steps.

How this differs from sentencepiece's ``unigram_model_trainer.cc``:

* seeds: sentencepiece finds frequent substrings with a suffix array over the whole corpus
  (up to ``seed_sentencepiece_size``, a million by default, scored by frequency times length,
  up to 16 characters); we count the substrings of each distinct word directly, up to
  ``max_piece_len`` characters, with the same score (count times length);
* M-step: sentencepiece uses a Bayesian estimate, ``digamma(count) - digamma(total)``, and
  drops pieces whose expected count is below 0.5; we use the maximum-likelihood
  ``log(count / total)`` and drop only pieces with an expected count of 0;
* pruning: sentencepiece (``PruneSentencePieces``) first removes every piece no Viterbi
  segmentation uses, characters included, then estimates a piece's loss from its frequency
  in the Viterbi segmentations and from the second-best segmentation of the piece on its own
  (an approximation; ``unigram_spm_steps.spm_prune_rows`` computes it); we recompute, for
  each word whose best segmentation uses the piece, the best score without it
  (:func:`removal_losses`: exact for Viterbi segmentations, slower) and always keep the
  characters;
* stopping: sentencepiece prunes after each pair of EM steps and stops at 1.1 times the
  vocabulary size, removes the pieces a split of their own beats, then keeps the required
  characters (putting back missing ones at the lowest score) and the highest-scoring pieces,
  and adds ``<unk>``, ``<s>``, ``</s>``; we stop at ``vocab_size`` pieces after two EM steps,
  put back missing characters the same way and add no special pieces. Its scores are
  float32, ours float64.

:mod:`tokcourse.unigram_spm_steps` writes sentencepiece's M-step and pruning out, for
comparison; the trainer does not use them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tokcourse.sentencepiece_bpe import SPACE
from tokcourse.unigram import log_sum_exp

__all__ = [
    "Round",
    "UnigramTraining",
    "corpus_log_likelihood",
    "em_step",
    "expected_counts",
    "forward_backward",
    "prune",
    "removal_losses",
    "seed_pieces",
    "train_unigram",
    "word_counts",
]


def word_counts(text: str) -> Counter[str]:
    """The words of ``text`` (split on white space), each with ``▁`` in front, counted.

    >>> word_counts("the cat the")
    Counter({'▁the': 2, '▁cat': 1})
    """
    return Counter(SPACE + w for w in text.split())


def seed_pieces(counts: Mapping[str, int], size: int, max_piece_len: int = 8) -> dict[str, float]:
    """Every character of the words, plus the ``size`` best longer substrings.

    A substring (2 to ``max_piece_len`` characters, seen at least twice) is scored by its
    count times its length, ties by the substring itself. The log-probabilities are the
    relative counts.

    >>> sorted(seed_pieces({"abab": 3}, size=1))
    ['a', 'ab', 'b']
    """
    chars: Counter[str] = Counter()
    subs: Counter[str] = Counter()
    for word, count in counts.items():
        for i in range(len(word)):
            chars[word[i]] += count
            for j in range(i + 2, min(len(word), i + max_piece_len) + 1):
                subs[word[i:j]] += count
    best = sorted((p for p in subs if subs[p] > 1), key=lambda p: (-subs[p] * len(p), p))
    freq = {**chars, **{p: subs[p] for p in best[:size]}}
    total = sum(freq.values())
    return {p: math.log(f / total) for p, f in sorted(freq.items())}


# The book shows this function, in a code column 79 characters wide: between
# "fmt: off" and "fmt: on" it keeps the line breaks written for it.
# fmt: off
def forward_backward(
    word: str, log_probs: Mapping[str, float], longest: int | None = None
) -> tuple[float, dict[str, float]]:
    """``log Z`` (the log of the summed probability of every segmentation of
    ``word``) and the expected count of each piece in one segmentation
    drawn with those probabilities.

    ``longest`` is the length of the longest piece (computed if not given).
    ValueError if ``word`` has no segmentation.

    >>> half = math.log(0.5)
    >>> z, counts = forward_backward("ab", {"a": half, "b": half, "ab": half})
    >>> round(math.exp(z), 6), {p: round(c, 6) for p, c in counts.items()}
    (0.75, {'a': 0.333333, 'ab': 0.666667, 'b': 0.333333})
    """
    if longest is None:
        longest = max(map(len, log_probs), default=0)
    n = len(word)
    # (start, log-prob) of the pieces ending at each position
    ending: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
    # (end, log-prob) of the pieces starting at each position
    starting: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
    for e in range(1, n + 1):
        for s in range(max(0, e - longest), e):
            lp = log_probs.get(word[s:e])
            if lp is not None:
                ending[e].append((s, lp))
                starting[s].append((e, lp))
    # log-prob of every segmentation of word[:j]
    forward = [0.0] + [-math.inf] * n
    for e in range(1, n + 1):
        forward[e] = log_sum_exp([forward[s] + lp for s, lp in ending[e]])
    if forward[n] == -math.inf:
        raise ValueError(
            f"the word {word!r} cannot be segmented with these pieces"
        )
    # log-prob of every segmentation of word[j:]
    backward = [-math.inf] * n + [0.0]
    for s in range(n - 1, -1, -1):
        backward[s] = log_sum_exp([lp + backward[e] for e, lp in starting[s]])
    expected: dict[str, float] = {}
    for e in range(1, n + 1):
        for s, lp in ending[e]:
            share = math.exp(forward[s] + lp + backward[e] - forward[n])
            expected[word[s:e]] = expected.get(word[s:e], 0.0) + share
    return forward[n], expected
# fmt: on


def em_step(
    word_counts: Mapping[str, int],
    log_probs: Mapping[str, float],
) -> dict[str, float]:
    """One EM step: new log-probabilities from the expected piece counts.

    E-step: for each word, the expected count of each piece over all
    segmentations of the word (probability of a segmentation ∝ product of
    its pieces' probabilities), times the word's count. M-step:
    ``log(count / sum of all counts)``. Pieces with an expected count of
    exactly 0 are dropped. ValueError names a word no segmentation covers.
    The arguments are not changed.

    >>> em_step({"ab": 1}, {"a": -1.0, "b": -1.0, "ab": -9.0})["ab"] < -5
    True
    """
    longest = max(map(len, log_probs), default=0)
    totals: dict[str, float] = {}
    for word, count in word_counts.items():
        # E: this word's counts
        _, expected = forward_backward(word, log_probs, longest)
        for piece, share in expected.items():
            # weighted by the word's count
            totals[piece] = totals.get(piece, 0.0) + count * share
    # M: relative expected counts, as log-probabilities
    grand = sum(totals.values())
    return {p: math.log(c / grand) for p, c in sorted(totals.items()) if c > 0}


def corpus_log_likelihood(word_counts: Mapping[str, int], log_probs: Mapping[str, float]) -> float:
    """``sum(count * log Z(word))``: the log-probability the model gives the whole corpus.

    >>> round(corpus_log_likelihood({"a": 2}, {"a": math.log(0.5)}), 6)
    -1.386294
    """
    longest = max(map(len, log_probs), default=0)
    total = 0.0
    for word, count in word_counts.items():
        n = len(word)
        forward = [0.0] + [-math.inf] * n  # the forward half of forward_backward
        for e in range(1, n + 1):
            forward[e] = log_sum_exp(
                [
                    forward[s] + log_probs[word[s:e]]
                    for s in range(max(0, e - longest), e)
                    if word[s:e] in log_probs
                ]
            )
        if forward[n] == -math.inf:
            raise ValueError(f"the word {word!r} cannot be segmented with these pieces")
        total += count * forward[n]
    return total


def _best_score(
    word: str, log_probs: Mapping[str, float], longest: int, skip: str | None = None
) -> tuple[float, list[str]]:
    """The best segmentation's score and pieces (:func:`viterbi`'s), ``skip`` left out."""
    n = len(word)
    best = [0.0] + [-math.inf] * n
    back = [0] * (n + 1)
    for e in range(1, n + 1):
        for s in range(max(0, e - longest), e):
            lp = log_probs.get(word[s:e])
            if lp is not None and best[s] + lp > best[e] and word[s:e] != skip:
                best[e], back[e] = best[s] + lp, s
    if best[n] == -math.inf:
        raise ValueError(f"the word {word!r} cannot be segmented with these pieces")
    pieces, e = [], n
    while e > 0:
        pieces.append(word[back[e] : e])
        e = back[e]
    return best[n], pieces[::-1]


def removal_losses(
    word_counts: Mapping[str, int], log_probs: Mapping[str, float]
) -> dict[str, float]:
    """For each multi-character piece, how much ``sum(count * best segmentation score)``
    falls when it alone is removed (the other pieces keep their log-probabilities).

    Only the words whose best segmentation uses the piece change; a piece no best
    segmentation uses loses 0, and a piece without which some word cannot be segmented at
    all (possible once EM has dropped a character) loses ``inf``.

    >>> removal_losses({"ab": 2}, {"a": -2.0, "b": -2.0, "ab": -1.5})
    {'ab': 5.0}
    """
    longest = max(map(len, log_probs), default=0)
    users: dict[str, list[str]] = {}  # piece -> the words whose best segmentation uses it
    best: dict[str, float] = {}
    for word in word_counts:
        best[word], pieces = _best_score(word, log_probs, longest)
        for piece in set(pieces):
            users.setdefault(piece, []).append(word)
    loss: dict[str, float] = {}
    for piece in log_probs:
        if len(piece) == 1:
            continue
        try:
            loss[piece] = sum(
                word_counts[w] * (best[w] - _best_score(w, log_probs, longest, piece)[0])
                for w in users.get(piece, [])
            )
        except ValueError:  # a word cannot be segmented without it (EM dropped a character)
            loss[piece] = math.inf
    return loss


def prune(
    word_counts: Mapping[str, int], log_probs: Mapping[str, float], keep: int
) -> dict[str, float]:
    """Keep the ``keep`` pieces whose removal would cost the most (single characters always).

    A multi-character piece's loss is :func:`removal_losses`'s. Pieces no best segmentation
    uses lose nothing and go first; ties go by the piece. The kept log-probabilities are
    returned unnormalized (the next EM step normalizes).

    >>> sorted(prune({"ab": 5, "cd": 1}, {"a": -2.0, "b": -2.0, "c": -2.0, "d": -2.0,
    ...                                   "ab": -1.0, "cd": -1.0}, keep=5))
    ['a', 'ab', 'b', 'c', 'd']
    """
    loss = removal_losses(word_counts, log_probs)
    singles = [p for p in log_probs if len(p) == 1]
    ranked = sorted(loss, key=lambda p: (-loss[p], p))
    kept = set(singles) | set(ranked[: max(0, keep - len(singles))])
    return {p: lp for p, lp in log_probs.items() if p in kept}


def expected_counts(
    word_counts: Mapping[str, int], log_probs: Mapping[str, float]
) -> dict[str, float]:
    """The E-step alone: each piece's expected count over the corpus (:func:`em_step`'s
    ``totals``), pieces in the order of ``log_probs``, 0.0 for a piece no segmentation uses.

    >>> expected_counts({"ab": 3}, {"a": math.log(0.5), "b": math.log(0.5), "ab": math.log(0.5)})
    {'a': 1.0, 'b': 1.0, 'ab': 2.0}
    """
    longest = max(map(len, log_probs), default=0)
    totals = dict.fromkeys(log_probs, 0.0)
    for word, count in word_counts.items():
        for piece, share in forward_backward(word, log_probs, longest)[1].items():
            totals[piece] += count * share
    return totals


@dataclass(frozen=True)
class Round:
    """One EM step of a training run: the pieces after it and the corpus log-likelihood."""

    step: int
    vocab_size: int
    log_likelihood: float


@dataclass
class UnigramTraining:
    """What :func:`train_unigram` returns: the final pieces and the history of the run."""

    log_probs: dict[str, float]
    history: list[Round] = field(default_factory=list)


def train_unigram(
    text: str,
    vocab_size: int,
    *,
    seed_size: int | None = None,
    max_piece_len: int = 8,
    shrink: float = 0.75,
    em_steps: int = 2,
    verbose: bool = False,
    log: Callable[[str], None] = print,
) -> UnigramTraining:
    """Train a unigram model on the words of ``text``: seed, then EM and pruning rounds.

    ``seed_size`` longer substrings join the characters at the start (default: 4 times
    ``vocab_size``); each round runs ``em_steps`` EM steps, then keeps ``shrink`` of the
    pieces (never fewer than ``vocab_size``), until at most ``vocab_size`` remain. EM can
    drop a character no word needs (every word using it has a likelier segmentation), its
    probability shrinking to 0; at the end such characters come back at the lowest score,
    in place of the lowest-scoring longer pieces, so every word of the text can be
    segmented. There are more than ``vocab_size`` pieces only if the text has more
    characters than that.

    >>> model = train_unigram("low lower lowest " * 5, vocab_size=12)
    >>> len(model.log_probs) <= 12, "▁lowest" in model.log_probs
    (True, True)
    """
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be at least 1, not {vocab_size!r}")
    if not 0 < shrink < 1:
        raise ValueError(
            f"shrink is the fraction of pieces a round keeps, in (0, 1), not {shrink!r}"
        )
    counts = word_counts(text)
    log_probs = seed_pieces(
        counts, 4 * vocab_size if seed_size is None else seed_size, max_piece_len
    )
    run = UnigramTraining(log_probs)
    while True:
        for _ in range(em_steps):
            log_probs = em_step(counts, log_probs)
            likelihood = corpus_log_likelihood(counts, log_probs)
            run.history.append(Round(len(run.history), len(log_probs), likelihood))
            if verbose:
                log(
                    f"step {len(run.history)}: {len(log_probs)} pieces, "
                    f"log-likelihood {likelihood:.1f}"
                )
        if len(log_probs) <= vocab_size or all(len(p) == 1 for p in log_probs):
            break
        log_probs = prune(counts, log_probs, max(vocab_size, int(len(log_probs) * shrink)))
    run.log_probs = _with_every_character(log_probs, counts, vocab_size)
    return run


def _with_every_character(
    log_probs: dict[str, float], counts: Mapping[str, int], vocab_size: int
) -> dict[str, float]:
    """Put back the characters EM dropped, at the lowest score, making room for them by
    removing the lowest-scoring longer pieces (sentencepiece's finalization does the same)."""
    missing = sorted({c for word in counts for c in word} - set(log_probs))
    if not missing:
        return log_probs
    floor = min(log_probs.values(), default=0.0)
    longer = sorted((p for p in log_probs if len(p) > 1), key=lambda p: (log_probs[p], p))
    extra = len(log_probs) + len(missing) - vocab_size
    dropped = set(longer[: max(0, extra)])
    kept = {p: lp for p, lp in log_probs.items() if p not in dropped}
    return dict(sorted({**kept, **dict.fromkeys(missing, floor)}.items()))
