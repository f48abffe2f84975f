"""Unigram (chapter 11): viterbi, em_step.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine. The random vocabularies use
log-probabilities that are multiples of 0.5, so equal totals are exactly equal however they
are summed, and the tie rule is tested for real.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping
from typing import Any

from tokcourse import unigram, unigram_train
from tokcourse.course.answers import STR, _instance, dict_of, list_of
from tokcourse.course.exercises import Case, Entry, Exercise, Names, Raised

FLOAT = _instance(float, "a float", advice="math.log returns a float; keep the values floats.")
LOG_PROBS = dict_of(STR, FLOAT, "a dict {piece: log-probability}")

# --- viterbi -------------------------------------------------------------------------------

SINGLES = {"a": -2.0, "b": -2.0, "c": -2.0, "d": -2.0}
UNUSED = {"xxxxxxxxxx": -9.0, "yyyyyyyyyy": -9.0, "zzzzzzzzzz": -9.0, "wwwwwwwwww": -9.0}
VITERBI_CASES: tuple[tuple[str, dict[str, float]], ...] = (
    ("", {"a": -1.0}),
    ("a", {"a": -1.0}),
    ("abc", SINGLES),  # single characters only
    ("abc", {**SINGLES, "abc": -1.0}),  # the whole text is one piece, and the best
    ("abc", {**SINGLES, "abc": -7.0, "bc": -9.5, "cd": -9.5}),  # whole text worse than three
    ("abcd", {"a": -1.0, "b": -1.0, "c": -1.0, "d": -1.0, "abc": -9.0, "bcd": -9.0}),
    ("abcd", {**SINGLES, "abc": -1.5, "ab": -1.0, "cd": -1.0}),  # longest first is not best
    ("abcd", {**SINGLES, "ab": -3.0, "bcd": -1.0}),
    # the best last piece on its own is not the best total
    ("abc", {"a": -5.0, "b": -1.0, "c": -1.0, "ab": -1.5, "bc": -0.5, "dd": -9.0, "ddd": -9.0}),
    # ties (and pieces that do not occur, which make these inputs come after the others when
    # the check looks for the smallest failing input: a tie is wrong in many ways at once)
    ("aaa", {"a": -1.0, "aa": -2.0, **UNUSED}),
    ("ab", {"a": -1.0, "b": -1.0, "ab": -2.0, **UNUSED}),
    ("abab", {"a": -1.0, "b": -1.0, "ab": -2.0, "ba": -2.0, **UNUSED}),
    ("abc", {"ab": -1.0, "a": -1.0, "bc": -1.0}),  # 'ab' is a dead end: nothing covers 'c'
    ("abx", {"a": -1.0, "b": -1.0}),  # an unknown character: ValueError
    ("xab", {"a": -1.0, "b": -1.0, "ab": -1.0}),
    ("ab", {"a": -1.0, "abc": -1.0}),  # no piece for 'b'
    ("▁the▁cat", {"▁": -3.0, "t": -3.0, "h": -3.0, "e": -3.0, "c": -3.0, "a": -3.0,
                   "▁the": -2.5, "▁t": -2.0, "he": -2.0, "▁cat": -4.0, "at": -1.0}),
)  # fmt: skip


def _random_vocab(rng: random.Random, alphabet: str) -> dict[str, float]:
    vocab = {c: -rng.randrange(2, 9) / 2 for c in alphabet}
    for _ in range(rng.randrange(2, 12)):
        piece = "".join(rng.choice(alphabet) for _ in range(rng.randrange(2, 5)))
        vocab[piece] = -rng.randrange(1, 12) / 2
    return vocab


def _furthest(case: Case) -> list[str]:
    """The furthest position a segmentation of the text reaches (where no piece matches)."""
    text, log_probs = case.args
    reached = [True] + [False] * len(text)
    for end in range(1, len(text) + 1):
        reached[end] = any(reached[s] and text[s:end] in log_probs for s in range(end))
    return [str(max(j for j, ok in enumerate(reached) if ok))]


def _viterbi_cases() -> Iterator[Case]:
    for text, log_probs in VITERBI_CASES:
        tie = text in ("aaa", "ab", "abab") and "xxxxxxxxxx" in log_probs
        yield Case((text, log_probs), rule="unless a later one is strictly better" if tie else "")
    rng = random.Random(11)
    for i in range(60):
        vocab = _random_vocab(rng, "ab" if i % 2 else "abc")
        text = "".join(rng.choice("abc") for _ in range(rng.randrange(1, 11)))
        if i % 10 == 9:
            vocab.pop(text[rng.randrange(len(text))], None)  # sometimes a character is missing
        yield Case((text, vocab))


def _score(pieces: list[str], log_probs: Mapping[str, float]) -> float | None:
    try:
        return sum(log_probs[p] for p in pieces)
    except (KeyError, TypeError):
        return None


def _variant(text: str, log_probs: Mapping[str, float], how: str) -> list[str] | None:
    """The answer of a known wrong way, to name it in a hint (None: no segmentation)."""
    if how == "greedy":
        out, i = [], 0
        while i < len(text):
            j = next((j for j in range(len(text), i, -1) if text[i:j] in log_probs), None)
            if j is None:
                return None
            out.append(text[i:j])
            i = j
        return out
    longest = max(map(len, log_probs), default=0)
    best: list[float | None] = [0.0] + [None] * len(text)
    back = [0] * (len(text) + 1)
    for end in range(1, len(text) + 1):
        for start in range(max(0, end - longest), end):
            lp, before = log_probs.get(text[start:end]), best[start]
            if lp is None or before is None:
                continue
            total = {"fewest": before - 1, "last only": lp}.get(how, before + lp)
            old = best[end]
            if old is None or total > old or (how == ">=" and total == old):
                best[end], back[end] = total, start
    if best[-1] is None:
        return None
    pieces, end = [], len(text)
    while end > 0:
        pieces.append(text[back[end] : end])
        end = back[end]
    return pieces[::-1]


_VITERBI_HINTS = {
    "greedy": (
        "that is greedy longest match: the longest piece first is not always best. "
        "Keep, for every end position, the best total of any segmentation ending there."
    ),
    "last only": (
        "you compared the last pieces' log-probabilities alone: a candidate's total is the "
        "best total of the text before it plus its own log-probability."
    ),
    "fewest": (
        "your answer is the segmentation with the fewest pieces: the score of a segmentation "
        "is the sum of its pieces' log-probabilities, not their number."
    ),
    ">=": (
        "ties: keep, for each end position, the first candidate found scanning starts from "
        "the left (the longest last piece); replace it only by a strictly better total "
        "(use >, not >=)."
    ),
}


def _viterbi_hint(case: Case, expected: Any, got: Any) -> str | None:
    text, log_probs = case.args
    if isinstance(expected, Raised):
        return (
            f"{text!r} cannot be segmented: no piece matches at position {_furthest(case)[0]}, "
            "the furthest a segmentation reaches. The exercise asks to raise ValueError naming "
            "that position, not to return pieces."
        )
    if isinstance(got, BaseException):
        if _variant(text, log_probs, "greedy") is None:
            return (
                f"greedy longest match gets stuck on {text!r}: the longest first piece can "
                "leave a rest no piece covers. Keep, for every end position, the best total "
                "of any segmentation ending there."
            )
        return f"{text!r} can be segmented (the expected answer is one way): do not raise here."
    if not isinstance(got, list) or not all(isinstance(p, str) for p in got):
        return None
    if "".join(got) != text or (got[::-1] == expected and got != expected):
        if "".join(reversed(got)) == text:
            return (
                "your pieces come out last-first: following the back-pointers from the end "
                "of the text gives the last piece first; reverse the list."
            )
        return f"the pieces must join to the text: {''.join(got)!r} is not {text!r}."
    mine, best = _score(got, log_probs), _score(expected, log_probs)
    if mine is None:
        return "every piece of the answer must be a key of log_probs."
    if best is not None and mine == best:  # a tie, broken the wrong way
        if got == _variant(text, log_probs, "greedy") != _variant(text, log_probs, ">="):
            return _VITERBI_HINTS["greedy"]
        return _VITERBI_HINTS[">="]
    for how, hint in _VITERBI_HINTS.items():
        if got == _variant(text, log_probs, how):
            return hint
    return (
        f"your segmentation totals {mine}, the best one {best}: the total is the sum of the "
        "log-probabilities (the log of the product of probabilities)."
    )


# --- em_step -------------------------------------------------------------------------------

_HALF = math.log(0.5)
EM_CASES: tuple[tuple[dict[str, int], dict[str, float]], ...] = (
    ({}, {"a": -1.0}),
    ({"a": 1}, {"a": -1.0}),
    ({"ab": 1}, {"a": _HALF, "b": _HALF, "ab": _HALF}),
    ({"ab": 3, "a": 1}, {"a": _HALF, "b": _HALF, "ab": _HALF}),  # counts weigh the words
    ({"abc": 2}, {"a": -1.0, "b": -1.0, "c": -1.0}),  # single characters only
    ({"ab": 1}, {"a": -1.0, "b": -1.0, "ab": -1.0, "zz": -1.0}),  # 'zz' occurs nowhere
    ({"ab": 1}, {"a": 0.0, "b": 0.0, "ab": 0.0}),  # scores not normalized: still works
    ({"abab": 2, "ba": 5}, {"a": -2.0, "b": -2.0, "ab": -1.0, "ba": -1.5, "aba": -3.0}),
    ({"ab": 1, "cd": 1}, {"a": -1.0, "b": -1.0, "ab": -0.5}),  # 'cd' cannot be segmented
)


def _unsegmentable(case: Case) -> list[str]:
    """The words that no segmentation covers: the error names one of them."""
    word_counts, log_probs = case.args
    return [w for w in word_counts if not unigram.segmentations(w, log_probs)]


def _em_step_cases() -> Iterator[Case]:
    for counts, log_probs in EM_CASES:
        yield Case((counts, log_probs))
    rng = random.Random(12)
    for _ in range(30):
        vocab = {c: -rng.uniform(0.5, 4.0) for c in "ab▁"}
        for _ in range(rng.randrange(1, 8)):
            piece = "".join(rng.choice("ab▁") for _ in range(rng.randrange(2, 4)))
            vocab[piece] = -rng.uniform(0.5, 4.0)
        words = {}
        for _ in range(rng.randrange(1, 6)):
            word = "".join(rng.choice("ab▁") for _ in range(rng.randrange(1, 7)))
            words[word] = rng.randrange(1, 6)
        yield Case((words, vocab))


class _Close(dict):
    """A dict of floats that equals another with the same keys and values within 1e-9."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, dict) or set(self) != set(other):
            return False
        try:
            return all(math.isclose(self[k], other[k], rel_tol=1e-9, abs_tol=1e-9) for k in self)
        except TypeError:
            return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


def _close(answer: Any) -> Any:
    return _Close(dict(answer))  # pairs too: the type rule, not the comparison, rejects them


def _segments_expected(counts: Mapping[str, int], log_probs: Mapping[str, float], how: str) -> Any:
    """A variant E-step (uniform segmentations, the best one only, or unweighted) + M-step."""
    totals: dict[str, float] = {}
    for word, count in counts.items():
        weight = 1 if how == "unweighted" else count
        if how == "viterbi":
            shares = {}
            for p in unigram.viterbi(word, log_probs):
                shares[p] = shares.get(p, 0.0) + 1.0
        else:
            probs = unigram.segmentations(word, log_probs, alpha=0.0 if how == "uniform" else 1.0)
            shares = {}
            for seg, prob in probs.items():
                for p in seg:
                    shares[p] = shares.get(p, 0.0) + prob
        for p, share in shares.items():
            totals[p] = totals.get(p, 0.0) + weight * share
    grand = sum(totals.values())
    return _Close({p: math.log(c / grand) for p, c in totals.items() if c > 0})


def _em_step_hint(case: Case, expected: Any, got: Any) -> str | None:
    counts, log_probs = case.args
    if isinstance(expected, Raised):
        return (
            "a word that no segmentation covers: the exercise asks to raise ValueError naming "
            "the word (forward_backward does), not to skip it."
        )
    if not isinstance(got, dict) or not isinstance(expected, dict):
        return None
    extra = set(got) - set(expected)
    if extra and set(expected) <= set(got):
        piece = sorted(extra)[0]
        return (
            f"{piece!r} is used in no segmentation of any word (expected count 0): drop it "
            "from the answer instead of keeping it with an old or infinite value."
        )
    values = [v for v in got.values() if isinstance(v, float)]
    if values and all(0.0 <= v <= 1.0 for v in values) and any(v > 0 for v in values):
        return "those look like probabilities: return log-probabilities, math.log(count / total)."
    if values and not math.isclose(sum(math.exp(min(v, 700.0)) for v in values), 1.0):
        return (
            "the new probabilities do not sum to 1: divide each expected count by the sum of "
            "all expected counts (over every piece), then take the log."
        )
    for how, hint in (
        ("unweighted", "weight each word's expected counts by how often the word occurs "
                       "(its count in word_counts)."),
        ("viterbi", "you counted the pieces of the best segmentation only (hard EM): the "
                    "E-step counts pieces over *all* segmentations, each weighted by its "
                    "probability."),
        ("uniform", "every segmentation counted equally: weight each by its probability, the "
                    "product of its pieces' probabilities, normalized over the word's "
                    "segmentations."),
    ):  # fmt: skip
        try:
            if _segments_expected(counts, log_probs, how) == got:
                return hint
        except ValueError:
            continue
    return None


# --- the table ---------------------------------------------------------------------------------

#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "viterbi": Entry(
        "viterbi(text, log_probs) -> list of pieces (the best segmentation)",
        lambda: Exercise(
            "viterbi",
            unigram.viterbi,
            _viterbi_cases,
            normalize=list,
            returns=list_of(STR),
            names=Names(
                "naming the furthest position", _furthest, "where a segmentation gets stuck"
            ),
            hints=(_viterbi_hint,),
        ),
    ),
    "em_step": Entry(
        "em_step(word_counts, log_probs) -> new {piece: log-probability}",
        lambda: Exercise(
            "em_step",
            unigram_train.em_step,
            _em_step_cases,
            normalize=_close,
            returns=LOG_PROBS,
            names=Names(
                "naming the word", _unsegmentable, "a word no segmentation covers", any_of=True
            ),
            hints=(_em_step_hint,),
        ),
    ),
}
