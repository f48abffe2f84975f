"""Chapter 13: the fast algorithms, checked for what makes them fast
(apply_merge, merge_lowest, encode_ordinary_cached).

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

from tokcourse import bpe, fast_encode, fast_train, patterns
from tokcourse.course import exercises
from tokcourse.course.answers import re_module_hint
from tokcourse.course.checks.bpe_training import _trained_merges
from tokcourse.course.checks.tiktoken_parity import (
    _ACROSS,
    _cross_chunk_merges,
    _encode_ordinary_cases,
    _encode_ordinary_hint_chunks,
    _pattern_merges,
)
from tokcourse.course.exercises import (
    BOOL,
    INT,
    PAIR,
    Case,
    Entry,
    Exercise,
    Violation,
    dict_of,
    list_of,
)

# --- chapter 13: the fast algorithms, checked for what makes them fast ---------------------------


def _reject(what: str, hint: str) -> None:
    """Fail a call whose answer may be right but whose way is not what the exercise teaches."""
    raise Violation(what, hint)


class _WatchedWords(list):
    """The trainer's list of words, noting which ones a function reads."""

    def __init__(self, words: list) -> None:
        super().__init__(words)
        self.read: set[int] = set()
        self.scanned = False  # iterated over, sliced or copied: every word read
        self.watching = True

    def __getitem__(self, index: Any) -> Any:
        if self.watching:
            if isinstance(index, slice):
                self.scanned = True
            else:
                self.read.add(range(len(self))[index])
        return super().__getitem__(index)

    def __iter__(self) -> Iterator:
        if self.watching:
            self.scanned = True
        return super().__iter__()

    def copy(self) -> list:
        self.scanned = self.scanned or self.watching
        return list(super().__iter__())


_INCREMENTAL = (
    "an incremental merge revisits only the words that where[pair] lists (for i in "
    "where.pop(pair): ...); reading every word is the full recount this chapter replaces."
)


def _where_gaps(words: list, where: dict) -> list[tuple[tuple[int, int], int]]:
    """Pairs that a word holds but ``where`` does not point to from that pair."""
    return sorted(
        (pair, i)
        for i, word in enumerate(words)
        for pair in set(pairwise(word))
        if i not in where.get(pair, ())
    )


def _run_apply_merge(fn: Callable, args: tuple, kwargs: dict) -> exercises.Observed:
    pair, idx, words, weights, counts, where = args
    listed = set(where.get(pair, ()))
    watched = _WatchedWords(words)
    returned = fn(pair, idx, watched, weights, counts, where)
    watched.watching = False
    if watched.scanned:
        _reject("went through the whole list of words", _INCREMENTAL)
    extra = watched.read - listed
    if extra:
        _reject(f"read words[{min(extra)}], which where[{pair}] does not list", _INCREMENTAL)
    after = [list(word) for word in watched]
    return exercises.Observed(
        returned,
        {
            "words": after,
            "counts": {p: c for p, c in counts.items() if c},
            "pairs missing from where": _where_gaps(after, where),
        },
    )


def _as_many_merges_as_possible(chunks: Counter, most: int) -> dict:
    for n in range(most, 0, -1):
        try:
            return fast_train.train_fast(chunks, 256 + n)
        except ValueError:  # fewer merges possible than n
            continue
    return {}


def _apply_merge_cases() -> Iterator[Case]:
    texts = [
        "aaabdaaabac",
        "aaaa aaaa aa",
        "the cat sat on the mat, the hat",
        "hello hello héllo wörld 👋👋 hello",
    ]
    rng = random.Random(14)
    texts += ["".join(rng.choice("ab c") for _ in range(60)) for _ in range(3)]
    texts += ["".join(rng.choice("ab céд👋") for _ in range(80)) for _ in range(3)]
    for text in texts:
        chunks = fast_train.count_chunks(text)
        merges = _as_many_merges_as_possible(chunks, 6)
        words, weights, counts, where = fast_train.index_words(chunks)
        for pair, idx in merges.items():  # the state before each merge of a real training run
            yield Case(copy.deepcopy((pair, idx, words, weights, counts, where)))
            fast_train.apply_merge(pair, idx, words, weights, counts, where)


def _apply_merge_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(got, exercises.Observed) and isinstance(expected, exercises.Observed)):
        return None
    if got.state["pairs missing from where"]:
        (pair, i), *_ = got.state["pairs missing from where"]
        return (
            f"words[{i}] now holds the pair {pair}, but where[{pair}] does not list {i}: add "
            "each new pair's word to where, or a later merge will never visit it."
        )
    if got.state["words"] != expected.state["words"]:
        return "merge the pair in each word the way merge() does: left to right, no overlaps."
    if got.state["counts"] != expected.state["counts"] or (
        isinstance(got.returned, dict) and set(got.returned) == set(expected.returned)
    ):
        return (
            "the counts are off: for each word you change, subtract weight for every old pair "
            "and add weight for every new pair (a word that occurs 5 times holds its pairs 5 "
            "times; overlapping pairs such as (a, a) in 'aaa' count as often as get_stats "
            "counts them)."
        )
    return (
        "return {pair: new count} for every pair whose count changed, with 0 for a pair that "
        "disappeared (the merged pair too)."
    )


class _CountingMerges(dict):
    """A merges dict that counts the lookups made in it (reading it all counts as one each)."""

    def __init__(self, merges: dict) -> None:
        super().__init__(merges)
        self.looked_up: list = []

    def get(self, key: Any, default: Any = None) -> Any:
        self.looked_up.append(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.looked_up.append(key)
        return super().__getitem__(key)

    def __contains__(self, key: Any) -> bool:
        self.looked_up.append(key)
        return super().__contains__(key)

    def _all(self) -> None:
        self.looked_up.extend(super().keys())

    def __iter__(self) -> Iterator:
        self._all()
        return super().__iter__()

    def keys(self) -> Any:
        self._all()
        return super().keys()

    def items(self) -> Any:
        self._all()
        return super().items()

    def values(self) -> Any:
        self._all()
        return super().values()

    def copy(self) -> dict:
        self._all()
        return dict(super().items())


def _run_merge_lowest(fn: Callable, args: tuple, kwargs: dict) -> exercises.Observed:
    ids, ranks, merges = args
    counted = _CountingMerges(merges)
    returned = fn(ids, ranks, counted)
    distinct = set(counted.looked_up)
    if len(distinct) > 3:
        _reject(
            f"looked up {len(distinct)} different pairs in merges",
            "after a merge only two pairs are new: the new token with its left neighbour and "
            "with its right one. Update those two ranks; every other rank still holds.",
        )
    return exercises.Observed(returned, {"ids": ids, "ranks": ranks})


def _ranks(ids: list[int], merges: dict) -> list[float]:
    return [merges.get(pair, float("inf")) for pair in pairwise(ids)]


def _merge_lowest_cases() -> Iterator[Case]:
    aaab = {(97, 97): 256, (256, 97): 257, (256, 98): 258}
    for ids in ([], [97], [97, 98], [97, 97], [98, 97, 97], [97, 97, 97, 97], [97, 97, 98]):
        tie = ids == [97, 97, 97, 97]  # three pairs (97, 97): the leftmost merges
        yield Case((ids, _ranks(ids, aaab), aaab), rule="the leftmost one on a tie" if tie else "")
    rng = random.Random(15)
    for trained in _trained_merges() * 3:
        text = "".join(rng.choice("abcdeh t") for _ in range(rng.randrange(12, 40)))
        ids = list(text.encode())
        ranks = _ranks(ids, trained)
        yield Case((list(ids), list(ranks), trained))
        while fast_encode.merge_lowest(ids, ranks, trained):  # and part-way through
            if rng.random() < 0.5:
                yield Case((list(ids), list(ranks), trained))


def _merge_lowest_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(got, exercises.Observed) and isinstance(expected, exercises.Observed)):
        return None
    ids, ranks, _ = case.args
    if got.state["ids"] != expected.state["ids"]:
        lowest = min(ranks, default=None)
        if ranks.count(lowest) > 1:
            return (
                f"the rank {lowest} occurs {ranks.count(lowest)} times: merge the leftmost one "
                "(ranks.index(lowest)), as the reference encoder does."
            )
        return "merge the pair with the lowest rank: ids[i : i + 2] = [rank]."
    if len(got.state["ranks"]) != len(got.state["ids"]) - 1:
        return "ranks has one entry per neighbour pair: after a merge, delete the merged one."
    return (
        "after merging at i, ranks[i - 1] is the rank of (ids[i - 1], new) and ranks[i] the "
        "rank of (new, ids[i + 1]), when those neighbours exist; float('inf') if never merged."
    )


def _encode_cached_hint_stale(case: Case, expected: Any, got: Any) -> str | None:
    """A cache kept between calls and keyed by the chunk alone: ids of other merges come back."""
    text, merges = case.args
    if not isinstance(got, list) or got == expected:
        return None
    tables = [_ACROSS, _cross_chunk_merges(), _pattern_merges()]
    ends = {0}  # positions in got where the chunks so far can end
    for chunk in patterns.split(text):
        options = {tuple(bpe.encode(chunk, m)) for m in tables}
        ends = {e + len(o) for e in ends for o in options if tuple(got[e : e + len(o)]) == o}
    if len(got) in ends:
        return (
            "some chunks came back with the ids of another merges table: a cache kept between "
            "calls must be keyed by the merges too. Simplest: a new dict in every call."
        )
    return None


def _run_encode_cached(fn: Callable, args: tuple, kwargs: dict) -> list[int]:
    text, merges = args
    answer = fn(text, merges)
    once, six = text + "\n", (text + "\n") * 6
    split = patterns.split
    if set(split(once, patterns.GPT4_SPLIT_PATTERN)) == set(
        split(six, patterns.GPT4_SPLIT_PATTERN)
    ):
        lookups = []
        for sample in (once, six):
            counted = _CountingMerges(merges)
            fn(sample, counted)
            lookups.append(len(counted.looked_up))
        if lookups[0] and lookups[1] > 2 * lookups[0]:
            _reject(
                f"{lookups[1]:,} merge lookups for six copies of a text that took "
                f"{lookups[0]:,} once",
                "six copies hold the same distinct chunks, so a cache answers every repeat: "
                "keep a dict from chunk to ids, and encode a chunk only when it is not in it.",
            )
    return answer


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "apply_merge": Entry(
        "apply_merge(pair, idx, words, weights, counts, where) -> {pair: new count}",
        lambda: Exercise(
            "apply_merge",
            fast_train.apply_merge,
            _apply_merge_cases,
            returns=dict_of(PAIR, INT, "a dict {(a, b): new count}"),
            pure=False,
            call=_run_apply_merge,
            hints=(_apply_merge_hint,),
        ),
    ),
    "merge_lowest": Entry(
        "merge_lowest(ids, ranks, merges) -> bool",
        lambda: Exercise(
            "merge_lowest",
            fast_encode.merge_lowest,
            _merge_lowest_cases,
            returns=BOOL,
            pure=False,
            call=_run_merge_lowest,
            hints=(_merge_lowest_hint,),
        ),
    ),
    "encode_ordinary_cached": Entry(
        "encode_ordinary_cached(text, merges) -> ids",
        lambda: Exercise(
            "encode_ordinary_cached",
            fast_encode.encode_ordinary_cached,
            _encode_ordinary_cases,
            normalize=list,
            returns=list_of(INT),
            call=_run_encode_cached,
            hints=(re_module_hint, _encode_ordinary_hint_chunks, _encode_cached_hint_stale),
        ),
    ),
}
