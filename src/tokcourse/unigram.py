"""Unigram tokenization (ch11): the best segmentation under piece log-probabilities.

>>> viterbi("hugs", {"h": -3.0, "u": -3.0, "g": -3.0, "s": -3.0, "hug": -4.0, "ugs": -4.5})
['hug', 's']

A unigram model is a vocabulary of pieces, each with a log-probability (its *score*). A
segmentation of a text into pieces has the probability of the product of its pieces', so its
log-probability is the **sum** of their scores; encoding picks the segmentation with the
largest sum. :func:`viterbi` finds it by dynamic programming over end positions: the best
segmentation of ``text[:j]`` is the best of (best of ``text[:i]``) + ``text[i:j]``, for every
piece ``text[i:j]``. :func:`segmentations` lists every segmentation with its probability
(exponential: for short words and for tests).

:class:`SentencePieceUnigram` reads a sentencepiece ``.model`` of type UNIGRAM (as data, with
the parser and normalization of :mod:`tokcourse.sentencepiece_bpe`) and encodes exactly as
``sentencepiece``'s optimized encoder (``unigram_model.cc``, ``EncodeOptimized``, as released
in sentencepiece 0.2.3, the version ``constraints.txt`` pins) does:

* scores and running totals are float32: every sum is rounded to float32 before it is
  compared, as the C++ ``float`` totals are. This decides exact ties (``'▁-----'`` with
  pieces ``'-'`` and ``'--'``: float64 sums tie and the tie rule picks another answer);
* **score reset**: when the best total at a start position falls below -100,000 (or rises
  above 100,000), that total is subtracted from every total already set from there to the
  furthest end reached, so the sums stay small enough for float32 to tell near-ties apart.
  Without it, the whole of botchan as one string (70,435 tokens, totals down to -436,000)
  first differs from sentencepiece at token 23,036;
* a character that no piece of one character covers gets an ``<unk>`` node scored
  ``min_score - 10`` (the lowest NORMAL score minus ``kUnkPenalty``);
* a user-defined piece scores ``0.1 * (length - 1)``, its length counted in UTF-8 bytes by the
  optimized encoder (in characters in the lattice that n-best and sampling use): never below
  a normal piece's log-probability, so it always wins, the longer the better;
* unused pieces are never chosen;
* ties: the candidates for an end position are tried from the leftmost start (the longest
  last piece) onward and a later one replaces the best only if its sum is strictly greater;
* unknown nodes then become byte pieces (``byte_fallback``) or, run by run, one ``<unk>``.

It also gives the n best segmentations (exact k-best dynamic programming) and samples a
segmentation with probability proportional to ``exp(alpha * score)`` (forward filtering,
backward sampling), as ``sp.encode(..., enable_sampling=True, nbest_size=-1)`` does with its
own random generator.
"""

from __future__ import annotations

import heapq
import math
import random
from array import array
from collections.abc import Mapping
from typing import Any

from tokcourse.sentencepiece_bpe import (
    NORMAL,
    UNUSED,
    USER_DEFINED,
    SentencePieceBPE,
)

__all__ = [
    "UNIGRAM_MODEL_TYPE",
    "UNK_PENALTY",
    "SentencePieceUnigram",
    "log_sum_exp",
    "segmentations",
    "viterbi",
]

UNIGRAM_MODEL_TYPE = 1  # TrainerSpec.ModelType.UNIGRAM
#: sentencepiece's ``kUnkPenalty``: an unknown character scores the lowest score minus this.
UNK_PENALTY = 10.0
#: The smallest positive normal float32 (C's FLT_MIN): where sentencepiece's max_score starts.
FLT_MIN = 1.1754943508222875e-38
#: ``kScoreResetThreshold``: a best total beyond +-this is shifted back to 0 (see above).
SCORE_RESET = 100_000.0


def user_defined_score(length: int) -> float:
    """sentencepiece's score of a user-defined piece of ``length`` units, as a float32.

    >>> user_defined_score(1), round(user_defined_score(4), 6)
    (0.0, 0.3)
    """
    out = array("f", [0.1 * (length - 1)])
    return out[0]


def log_sum_exp(values: list[float]) -> float:
    """``log(sum(exp(v)))`` without overflow; ``-inf`` for no values.

    >>> round(log_sum_exp([math.log(1), math.log(3)]), 12) == round(math.log(4), 12)
    True
    """
    if not values:
        return -math.inf
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(sum(math.exp(v - top) for v in values))


# --- the teaching version -----------------------------------------------------------------------


# The book shows this function, in a code column 79 characters wide: between
# "fmt: off" and "fmt: on" it keeps the line breaks written for it.
# fmt: off
def viterbi(text: str, log_probs: Mapping[str, float]) -> list[str]:
    """The segmentation of ``text`` into pieces of ``log_probs`` with the
    largest total score.

    ``log_probs`` maps each piece (a non-empty str) to its log-probability.
    The answer is a list of pieces that join to ``text``; ``[]`` for ``""``.
    Ties go as in sentencepiece: for each end position, the candidate with
    the leftmost start (the longest last piece) is kept unless a later one
    is strictly better. If no segmentation exists, ValueError names the
    furthest position a segmentation reaches (where no piece matches).

    >>> # three ways score -3: the longest last piece wins
    >>> viterbi("aaa", {"a": -1.0, "aa": -2.0})
    ['a', 'aa']
    """
    longest = max(map(len, log_probs), default=0)
    n = len(text)
    # best total score of text[:j]
    best: list[float | None] = [0.0] + [None] * n
    # where the last piece of that best segmentation starts
    back = [0] * (n + 1)
    for end in range(1, n + 1):
        for start in range(max(0, end - longest), end):
            score = log_probs.get(text[start:end])
            before = best[start]
            if score is None or before is None:
                continue
            total = before + score
            if (
                best[end] is None
                or total > best[end]  # type: ignore[operator]
            ):
                best[end], back[end] = total, start
    if best[n] is None:
        reached = max(j for j in range(n + 1) if best[j] is not None)
        raise ValueError(
            f"no piece matches at position {reached} ({text[reached]!r}): "
            f"{text!r} cannot be segmented with these pieces"
        )
    pieces: list[str] = []
    end = n
    while end > 0:
        pieces.append(text[back[end] : end])
        end = back[end]
    return pieces[::-1]
# fmt: on


def segmentations(
    text: str, log_probs: Mapping[str, float], alpha: float = 1.0, limit: int = 100_000
) -> dict[tuple[str, ...], float]:
    """Every segmentation of ``text`` with its probability ``∝ exp(alpha * total score)``.

    Exponential in the length of ``text``: for short words (ValueError past ``limit``
    segmentations). The probabilities sum to 1.

    >>> probs = segmentations("ab", {"a": math.log(0.5), "b": math.log(0.5), "ab": math.log(0.5)})
    >>> {k: round(p, 6) for k, p in probs.items()}
    {('a', 'b'): 0.333333, ('ab',): 0.666667}
    """
    found: dict[tuple[str, ...], float] = {}

    def walk(start: int, pieces: tuple[str, ...], total: float) -> None:
        if start == len(text):
            found[pieces] = total
            if len(found) > limit:
                raise ValueError(f"{text!r} has more than {limit} segmentations")
            return
        for end in range(start + 1, len(text) + 1):
            score = log_probs.get(text[start:end])
            if score is not None:
                walk(end, (*pieces, text[start:end]), total + alpha * score)

    walk(0, (), 0.0)
    z = log_sum_exp(list(found.values()))
    return {k: math.exp(v - z) for k, v in sorted(found.items())}


# --- sentencepiece's unigram model --------------------------------------------------------------


class SentencePieceUnigram(SentencePieceBPE):
    """A SentencePiece unigram model: ids exactly as ``SentencePieceProcessor.encode``.

    Normalization, ``piece_to_id``, ``decode`` and the refusals are those of
    :class:`~tokcourse.sentencepiece_bpe.SentencePieceBPE` (identity normalization only);
    user-defined pieces are supported here.

    >>> sp = SentencePieceUnigram.from_file("unigram.model")  # doctest: +SKIP
    >>> sp.encode_as_pieces("Hello world")  # doctest: +SKIP
    ['▁Hello', '▁world']
    """

    _MODEL_TYPE = UNIGRAM_MODEL_TYPE
    _USER_DEFINED_OK = True
    _ONE_TABLE = False  # unigram keeps reserved pieces apart (use_reserved_id_map=true)

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        for i, score in enumerate(self.scores):
            if not math.isfinite(score):  # unigram_model.cc refuses the model
                raise ValueError(
                    f"pieces[{i}].score is {score} ({self.pieces[i]!r:.40}); sentencepiece "
                    "refuses a unigram model with a NaN or infinite score ('score is NaN or Inf.')"
                )
        normal = [s for s, t in zip(self.scores, self.types, strict=True) if t == NORMAL]
        f32 = array("f", [0.0])
        f32[0] = min(normal, default=3.4028234663852886e38)
        self.min_score: float = f32[0]
        self.max_score: float = max([FLT_MIN, *normal])
        f32[0] = self.min_score - UNK_PENALTY
        self.unk_score: float = f32[0]
        self._longest = max((len(p) for p in self._normal), default=0)
        # a trie of the pieces, one dict per character (key "" holds a piece's id): a scan
        # from a start stops where no piece continues, and memory grows with the total length
        # of the pieces (a set of every prefix would grow with the square of the longest)
        self._trie: dict[str, Any] = {}
        for piece, idx in self._normal.items():
            node = self._trie
            for ch in piece:
                node = node.setdefault(ch, {})
            node[""] = idx
        # the score each trie piece gets in the optimized encoder (user-defined: a bonus)
        self._node_score: dict[int, float] = {}
        for piece, idx in self._normal.items():
            if self.types[idx] == USER_DEFINED:  # the optimized encoder counts bytes
                self._node_score[idx] = user_defined_score(len(piece.encode("utf-8")))
            elif self.types[idx] != UNUSED:
                self._node_score[idx] = self.scores[idx]

    def __repr__(self) -> str:
        return (
            f"SentencePieceUnigram({len(self.pieces)} pieces, byte_fallback={self.byte_fallback})"
        )

    def best_path(self, normalized: str) -> list[tuple[str, int]]:
        """Viterbi over an already normalized text: ``(piece, id)`` pairs, ``<unk>`` per char.

        Linear in ``len(normalized)`` times the longest piece's length: the scan from a start
        walks the trie of pieces and stops where no piece continues, and candidates come in
        the trie's order, shortest first.
        """
        n = len(normalized)
        best = array("f", bytes(4 * (n + 1)))  # float32 best total of normalized[:end]
        start_of = [-1] * (n + 1)  # where its last piece starts (-1: none yet)
        id_of = [-1] * (n + 1)  # and that piece's id
        f32 = array("f", [0.0])  # rounds a sum to float32
        types, node_score, trie = self.types, self._node_score, self._trie
        frontier = 0  # the furthest end position any node has reached
        for start in range(n):
            before = best[start]
            if not -SCORE_RESET <= before <= SCORE_RESET:  # shift totals back towards 0
                for i in range(start, frontier + 1):
                    if i == start or start_of[i] != -1:
                        best[i] -= before  # rounded to float32 on the way in
                before = 0.0
            has_single = False
            node = trie
            for end in range(start + 1, min(n, start + self._longest) + 1):
                node = node.get(normalized[end - 1])
                if node is None:
                    break
                idx = node.get("")
                if idx is None or types[idx] == UNUSED:
                    continue
                frontier = max(frontier, end)
                f32[0] = node_score[idx] + before
                total = f32[0]
                if start_of[end] == -1 or total > best[end]:  # '>': the first found keeps ties
                    best[end], start_of[end], id_of[end] = total, start, idx
                has_single = has_single or end == start + 1
            if not has_single:  # an unknown character: one <unk> node of one character
                frontier = max(frontier, start + 1)
                f32[0] = self.unk_score + before
                total = f32[0]
                if start_of[start + 1] == -1 or total > best[start + 1]:
                    best[start + 1], start_of[start + 1] = total, start
                    id_of[start + 1] = self.unk_id
        out: list[tuple[str, int]] = []
        end = n
        while end > 0:
            out.append((normalized[start_of[end] : end], id_of[end]))
            end = start_of[end]
        return out[::-1]

    def encode_as_pieces(self, text: str) -> list[str]:
        """The Viterbi pieces of the normalized text (unknown characters still as characters)."""
        return [piece for piece, _ in self.best_path(self.normalize(text))]

    def encode(self, text: str) -> list[int]:
        """Encode ``text`` to ids exactly as ``sentencepiece`` does (no BOS/EOS, no sampling).

        >>> SentencePieceUnigram.encode  # doctest: +ELLIPSIS
        <function SentencePieceUnigram.encode at ...>
        """
        return self._output_ids(self.best_path(self.normalize(text)))

    # --- the lattice: n-best and sampling ---------------------------------------------------

    def lattice(self, normalized: str) -> list[list[tuple[int, float, int]]]:
        """For each end position, the nodes ending there: ``(start, score, id)``.

        As ``PopulateNodes`` builds it: every piece (unused ones left out), a user-defined
        piece scored ``user_defined_score(len(piece in characters))``, and an ``<unk>`` node of
        one character where no one-character piece starts.
        """
        n = len(normalized)
        ends: list[list[tuple[int, float, int]]] = [[] for _ in range(n + 1)]
        for start in range(n):
            has_single = False
            node = self._trie
            for end in range(start + 1, min(n, start + self._longest) + 1):
                node = node.get(normalized[end - 1])
                if node is None:
                    break
                idx = node.get("")
                if idx is None or self.types[idx] == UNUSED:
                    continue
                score = self.scores[idx]
                if self.types[idx] == USER_DEFINED:
                    score = user_defined_score(end - start)
                ends[end].append((start, score, idx))
                has_single = has_single or end == start + 1
            if not has_single:
                ends[start + 1].append((start, self.unk_score, self.unk_id))
        return ends

    def nbest(self, text: str, n: int) -> list[tuple[list[str], float]]:
        """The ``n`` best segmentations of the normalized ``text``, best first, with scores.

        Exact k-best dynamic programming (sentencepiece runs an A* search; the two agree
        except in the order of segmentations with exactly equal scores).
        """
        if n < 1:
            raise ValueError(f"n is the number of segmentations wanted, at least 1, not {n!r}")
        normalized = self.normalize(text)
        ends = self.lattice(normalized)
        # kbest[j]: up to n (score, start, rank at start, id) for text[:j], best first
        kbest: list[list[tuple[float, int, int, int]]] = [[(0.0, -1, -1, -1)]]
        for end in range(1, len(normalized) + 1):
            candidates = (
                (kbest[start][r][0] + score, start, r, idx)
                for start, score, idx in ends[end]
                for r in range(len(kbest[start]))
            )
            kbest.append(heapq.nlargest(n, candidates, key=lambda c: c[0]))
        out = []
        for total, start, rank, _ in kbest[-1]:
            pieces, end = [], len(normalized)
            while start >= 0:
                pieces.append(normalized[start:end])
                end, (_, start, rank, _) = start, kbest[start][rank]
            out.append((pieces[::-1], total))
        return out

    def sample(self, text: str, alpha: float, rng: random.Random) -> list[str]:
        """One segmentation of the normalized ``text``, drawn with probability
        ``∝ exp(alpha * total score)``: forward filtering, then backward sampling.

        >>> SentencePieceUnigram.sample  # doctest: +ELLIPSIS
        <function SentencePieceUnigram.sample at ...>
        """
        normalized = self.normalize(text)
        ends = self.lattice(normalized)
        forward = [0.0]  # log of the summed weight of every segmentation of text[:j]
        for end in range(1, len(normalized) + 1):
            forward.append(log_sum_exp([forward[s] + alpha * sc for s, sc, _ in ends[end]]))
        pieces, end = [], len(normalized)
        while end > 0:
            nodes = ends[end]
            weights = [math.exp(forward[s] + alpha * sc - forward[end]) for s, sc, _ in nodes]
            start = rng.choices(nodes, weights=weights)[0][0]
            pieces.append(normalized[start:end])
            end = start
        return pieces[::-1]

    def log_probs(self) -> dict[str, float]:
        """The NORMAL pieces and their scores, as a ``{piece: log-prob}`` dict."""
        return {
            p: s
            for p, s, t in zip(self.pieces, self.scores, self.types, strict=True)
            if t == NORMAL
        }
