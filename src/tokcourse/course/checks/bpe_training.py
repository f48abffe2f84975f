"""BPE's two functions, get_stats and merge (chapter 00), and the small trained merge tables
that chapter 03's checks run on.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from tokcourse import bpe
from tokcourse.course import first_steps
from tokcourse.course.checks._merge_hints import (
    _IN_PLACE,
    _merge_by_replace,
    _merge_hint_either_order,
    _merge_hint_last_id,
    _merge_hint_prefix,
    _merge_hint_right_after,
    _merge_hint_slice,
    _merges_in_place,
    _short_ids,
)
from tokcourse.course.exercises import (
    INT,
    PAIR,
    Case,
    Entry,
    Exercise,
    Violation,
    dict_of,
    list_of,
)

#: Chapter 00's training text (the opening of tiny-shakespeare, lightly edited): its
#: character-level ids are the long input of both checks, as long as what the chapter runs on.
CHAPTER_TEXT = """First Citizen: we are all resolved rather to die
than to famish?
All: Resolved. resolved.
First Citizen: First, you know Caius Marcius is
chief enemy to the people."""


def chapter_ids() -> list[int]:
    """The chapter's text as character-level ids (sorted characters, as the chapter numbers them).

    >>> len(chapter_ids()) == len(CHAPTER_TEXT)
    True
    """
    chars = sorted(set(CHAPTER_TEXT))
    return [chars.index(c) for c in CHAPTER_TEXT]


# --- get_stats ---------------------------------------------------------------------------------


def _get_stats_cases() -> Iterator[Case]:
    for ids in ([], [7], [7, 7], [1, 2, 3, 1, 2], [1, 2, 1, 2, 1], [300, 5, 300, 5]):
        yield Case((ids,))
    yield Case(([7, 7, 7],), rule="every position i")
    yield Case((chapter_ids(),))  # long: a walk that stops early fails here
    rng = random.Random(1)
    for _ in range(80):
        n = rng.randrange(0, 30)
        alphabet = rng.choice([3, 6, 600])
        yield Case(([rng.randrange(alphabet) for _ in range(n)],))


def _get_stats_hint_leftover(case: Case, expected: Any, got: Any) -> str | None:
    (ids,) = case.args
    if not isinstance(got, dict):
        return None
    foreign = [p for p in got if p not in expected]
    if foreign:
        return (
            f"{foreign[0]} is not a pair of {_short_ids(ids)}: the dict still holds counts "
            "from an earlier call. A default value such as counts={} is made once, when def "
            "runs, and every call shares it: make a new dict inside the function (counts = {})."
        )
    return None


def _skip_after_repeat(ids: list) -> dict:
    """What a count that jumps past a pair of two equal ids makes (no overlapping repeats)."""
    counts: dict = {}
    i = 0
    while i + 1 < len(ids):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
        i += 2 if ids[i] == ids[i + 1] else 1
    return counts


def _get_stats_hint_no_overlap(case: Case, expected: Any, got: Any) -> str | None:
    (ids,) = case.args
    if not isinstance(got, dict):
        return None
    repeats = [p for p in expected if p[0] == p[1] and got.get(p, 0) < expected[p]]
    if repeats and (got == _skip_after_repeat(ids) or all(
        got.get(p, 0) == n for p, n in expected.items() if p[0] != p[1]
    )):  # fmt: skip
        pair, a = repeats[0], repeats[0][0]
        n = got.get(pair, 0)
        counted = {0: "not at all", 1: "once"}.get(n, f"{n} times")
        said = (
            f"the pair {pair} is counted {counted}, not {expected[pair]} times. Overlapping "
            f"pairs count: in [{a}, {a}, {a}] the pair ({a}, {a}) occurs twice, though the two "
            "share the middle id."
        )
        if all(v == 1 for v in got.values()):  # a set of pairs looks the same here
            return (
                f"{said} Two ways to count it once: a set of pairs (a set holds each pair "
                "once, however often it occurs), or jumping past a pair of equal ids (i += 2). "
                "Add 1 at every position i, and move on by one id each time."
            )
        return (
            f"{said} Counting is not merging: after every pair, move on by one id (i += 1), "
            "never by two."
        )
    return None


def _get_stats_hint_missing_pair(case: Case, expected: Any, got: Any) -> str | None:
    (ids,) = case.args
    if not isinstance(got, dict) or set(got) == set(expected):
        return None  # every pair is there: the counts are wrong, not the walk
    if got == _skip_after_repeat(ids):
        return None  # a pair lost to a jump past a repeat: the overlap hint's
    for end, kept in (("last", ids[:-1]), ("first", ids[1:])):
        if len(ids) >= 2 and got == bpe.get_stats(kept):
            a, b = (ids[-2], ids[-1]) if end == "last" else (ids[0], ids[1])
            return (
                f"the {end} pair ({a}, {b}) is missing: a list of n ids has n - 1 neighbouring "
                "pairs, (ids[0], ids[1]) up to (ids[-2], ids[-1]); zip(ids, ids[1:]) walks them "
                "all."
            )
    return None


def _get_stats_hint_short(case: Case, expected: Any, got: Any) -> str | None:
    if len(case.args[0]) < 2 and isinstance(got, BaseException):
        return "a list with fewer than two ids has no pairs at all: return an empty dict."
    return None


def _get_stats_hint_counts(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(got, dict) and set(got) == set(expected)):
        return None
    if all(n == 1 for n in got.values()):
        return (
            "every pair is counted once, however often it occurs: add 1 each time a pair "
            "occurs, e.g. counts[pair] = counts.get(pair, 0) + 1."
        )
    return "the right pairs, wrong counts: add 1 each time a pair occurs (overlaps count too)."


def _get_stats_hint_order(case: Case, expected: Any, got: Any) -> str | None:
    (ids,) = case.args
    unordered: dict = {}
    for a, b in zip(ids, ids[1:], strict=False):
        pair = (min(a, b), max(a, b))
        unordered[pair] = unordered.get(pair, 0) + 1
    if isinstance(got, dict) and got == unordered != expected:
        return (
            "(a, b) and (b, a) are different pairs: keep each pair in the order the ids come, "
            "(ids[i], ids[i + 1])."
        )
    return None


def _get_stats_hint_prefix(case: Case, expected: Any, got: Any) -> str | None:
    (ids,) = case.args
    if not isinstance(got, dict) or len(ids) < 4:
        return None
    for k in range(2, len(ids) - 1):
        if got == bpe.get_stats(ids[:k]):
            return (
                f"your counts are those of the first {k} ids only, and the list has "
                f"{len(ids)}: count every neighbouring pair up to the end of the list, "
                "(ids[-2], ids[-1]) included, however long it is."
            )
    return None


# --- merge -------------------------------------------------------------------------------------


#: Four ids holding the pair twice, side by side: the smallest inputs on which a merge that
#: stops after the first occurrence goes wrong, and on which str.replace of ",5,5," goes wrong
#: the same way ([6, 5, 5]).
_TWO_SIDE_BY_SIDE = Case(([5, 5, 5, 5], (5, 5), 6), rule="the leftmost one merges")


@dataclass(frozen=True)
class _ShownBeforeFourIds(Case):
    """An input the report shows before any input of four ids that fails too.

    The report shows the smallest failing input, and its hints see only that one. On
    ``[5, 5, 5, 5]`` a merge that stops after the first occurrence and a merge by str.replace
    give the same answer, so a hint could not tell the two mistakes apart; on this input they
    differ (``[4, 3, 1, 2]`` and the right ``[4, 3, 4]``), so a merge that stops early is
    shown here, with a hint of its own.
    """

    def size(self) -> int:
        return _TWO_SIDE_BY_SIDE.size() - 1


def _merge_cases() -> Iterator[Case]:
    yield from (
        Case(([], (1, 2), 9)),
        Case(([1], (1, 2), 9)),
        Case(([1, 2], (1, 2), 9)),
        Case(([2, 1], (1, 2), 9), rule="a new list"),  # nothing merges: still a new list
        Case(([3, 1], (1, 2), 9)),  # the last id starts the pair: no ids[i + 1] to compare
        # overlapping occurrences: the rules of the text leave one answer, [99, 7]
        Case(([7, 7, 7], (7, 7), 99), rule="the leftmost one merges"),
        _TWO_SIDE_BY_SIDE,
        _ShownBeforeFourIds(([1, 2, 3, 1, 2], (1, 2), 4)),
        Case(([1, 2, 2, 1], (2, 1), 256)),
        # ids of several digits: the pair (1, 2) is not in [11, 2] or [1, 22]
        Case(([11, 2], (1, 2), 9)),
        Case(([1, 22], (1, 2), 9)),
        Case(([11, 22, 1, 2], (1, 2), 99)),
    )
    long = chapter_ids()  # long: a walk that stops early fails here
    chars = sorted(set(CHAPTER_TEXT))
    e_space = (chars.index("e"), chars.index(" "))  # twice in the first 40 ids, and later
    yield Case((long, e_space, max(long) + 1))
    rng = random.Random(2)
    for _ in range(100):
        ids = [rng.randrange(3) for _ in range(rng.randrange(0, 25))]
        yield Case((ids, (rng.randrange(3), rng.randrange(3)), 256 + rng.randrange(10)))
    for _ in range(40):  # ids from 0 to 23: one digit and two
        ids = [rng.randrange(24) for _ in range(rng.randrange(0, 25))]
        pair = (rng.randrange(3), rng.randrange(3)) if ids else (1, 2)
        if ids and rng.random() < 0.5:  # a pair that occurs
            k = rng.randrange(len(ids))
            pair = (ids[k], ids[(k + 1) % len(ids)])
        yield Case((ids, pair, 256 + rng.randrange(10)))


def _merge_hint_bounds(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, IndexError):
        return (
            "at the last position there is no ids[i + 1]: test i + 1 < len(ids) before "
            "comparing the pair."
        )
    return None


def _merge_each_position(ids: list, pair: tuple, idx: int, *, step: int) -> list:
    """What a merge that does not skip both halves makes (``step=1``: moves on by one)."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
            i += step
        else:
            out.append(ids[i])
            i += 1
    return out


def _merge_hint_overlap(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if pair[0] != pair[1] or not isinstance(got, list):
        return None
    if got == _merge_each_position(ids, pair, idx, step=1) or got.count(idx) > expected.count(idx):
        return (
            f"overlapping occurrences: in {ids} the pair {pair} overlaps itself, and only the "
            "leftmost of two overlapping pairs can merge. After a merge, jump past both ids "
            "(i += 2); otherwise move on by one."
        )
    return None


def _merge_right_to_left(ids: list, pair: tuple, idx: int) -> list:
    """What a merge that reads ``ids`` from the right makes."""
    out, i = [], len(ids) - 1
    while i >= 0:
        if i > 0 and (ids[i - 1], ids[i]) == pair:
            out.append(idx)
            i -= 2
        else:
            out.append(ids[i])
            i -= 1
    return out[::-1]


def _merge_hint_right_to_left(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if got == _merge_right_to_left(ids, pair, idx) != expected:
        return (
            f"you merged the rightmost of two overlapping occurrences ({got}), but the "
            "leftmost one merges: walk ids from the left, and after a merge go on after both "
            "ids it used."
        )
    return None


def _merge_hint_step_one(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if pair[0] != pair[1] and got == _merge_each_position(ids, pair, idx, step=1):
        return (
            "after a merge the pair's second id was copied too: a merged pair uses up both "
            "ids, so jump past both (i += 2); only when nothing merges move on by one."
        )
    return None


def _merge_by_digits(ids: list, pair: tuple, idx: int) -> list:
    """What merging with ``str.replace`` of "a b" in " ".join of the ids makes."""
    text = " ".join(map(str, ids)).replace(f"{pair[0]} {pair[1]}", str(idx))
    return [int(x) for x in text.split()]


def _merge_hint_digits(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if isinstance(got, list) and got == _merge_by_digits(ids, pair, idx) != expected:
        a, b = pair
        return (
            f"str.replace matched digits, not ids: in {' '.join(map(str, ids))!r} the text "
            f"'{a} {b}' is found across parts of longer ids (as '1 2' is inside '11 2'), so "
            "ids that are not the pair were merged. Replacing text in a string of ids is "
            "fragile; walk the list of ids and compare whole ids instead."
        )
    return None


def _merge_first_only(ids: list, pair: tuple, idx: int) -> list:
    """What a merge that stops after the first occurrence makes."""
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == pair:
            return [*ids[:i], idx, *ids[i + 2 :]]
    return list(ids)


def _merge_hint_first_only(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if not isinstance(got, list) or got == _merge_by_replace(ids, pair, idx):
        return None  # on [5, 5, 5, 5] str.replace makes the same answer: that hint decides
    if got == _merge_first_only(ids, pair, idx) != expected:
        return (
            f"only the first occurrence of {pair} was merged, and the rest of the list was "
            "copied as it was: after a merge, keep looking for the pair to the end of the "
            "list (a return or break inside the loop stops too early)."
        )
    return None


#: What the check says of a merge that hands back the caller's own list.
_NEW_LIST = (
    "the exercise asks for a new list, and yours returned ids itself (the caller's own list "
    "object) when nothing merged. The caller then holds one list under two names: appending "
    "to the result would change ids too. Build a new list in every case (list(ids) copies "
    "one), and leave ids itself as it was."
)


def _merge_call(fn: Any, args: tuple, kwargs: dict) -> Any:
    """Call ``fn`` and refuse an answer that is the caller's own list, left as it was (a
    changed list is the "arguments unchanged" rule's, which names what changed)."""
    ids = args[0]
    before = list(ids)
    answer = fn(*args, **kwargs)
    if answer is ids and ids == before:
        if _merges_in_place(fn):
            _reject("ids itself, the caller's list object, changed in place", _IN_PLACE)
        _reject("ids itself, the caller's list object", _NEW_LIST)
    return answer


def _reject(what: str, hint: str) -> None:
    """Fail a call whose answer is right but is not the new list the exercise asks for."""
    raise Violation(what, hint)


# --- merge tables (for chapter 03's checks) --------------------------------------------------


@cache
def _trained_merges() -> tuple[dict[tuple[int, int], int], ...]:
    """A few real merge tables, trained on small texts (cached: checks run them many times)."""
    texts = [
        "aaabdaaabac",
        "the cat sat on the mat. the end! the end?",
        "hello hello hello world, héllo wörld 👋👋",
        "abab cdcd abab cdcd ab cd",
    ]
    rng = random.Random(4)
    texts += ["".join(rng.choice("ab c") for _ in range(80)) for _ in range(4)]
    return tuple(bpe.train(t, 256 + min(20, len(t) // 3)) for t in texts)


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "get_stats": Entry(
        "get_stats(ids) -> {pair: count}",
        lambda: Exercise(
            "get_stats",
            bpe.get_stats,
            _get_stats_cases,
            normalize=dict,
            returns=dict_of(PAIR, INT, "a dict {(a, b): count}"),
            solution=first_steps.get_stats,
            hints=(
                _get_stats_hint_order,
                _get_stats_hint_leftover,
                _get_stats_hint_short,
                _get_stats_hint_missing_pair,
                _get_stats_hint_prefix,
                _get_stats_hint_no_overlap,
                _get_stats_hint_counts,
            ),
        ),
    ),
    "merge": Entry(
        "merge(ids, pair, idx) -> new ids",
        lambda: Exercise(
            "merge",
            bpe.merge,
            _merge_cases,
            normalize=list,
            returns=list_of(INT),
            call=_merge_call,
            solution=first_steps.merge,
            hints=(
                _merge_hint_bounds,
                _merge_hint_right_to_left,
                _merge_hint_first_only,
                _merge_hint_right_after,
                _merge_hint_digits,
                _merge_hint_overlap,
                _merge_hint_step_one,
                _merge_hint_slice,
                _merge_hint_last_id,
                _merge_hint_either_order,
                _merge_hint_prefix,
            ),
        ),
    ),
}
