"""More hints of chapter 00's ``get_stats`` and ``merge`` checks (:mod:`.bpe_training`):
the mistakes a merge makes that the first hints there do not name, and the probe that tells a
merge done in place from one that hands back the caller's list unchanged."""

from __future__ import annotations

from typing import Any

from tokcourse import bpe
from tokcourse.course.exercises import Case


def _short_ids(ids: list) -> str:
    return repr(ids) if len(ids) <= 8 else f"the {len(ids)} ids"


def _merge_by_replace(ids: list, pair: tuple, idx: int) -> list:
    """What merging with ``str.replace`` on ",a,b," in ",".join of the ids makes: the same as
    a merge that never merges right after a merge (the comma between them is used up)."""
    text = "," + ",".join(map(str, ids)) + ","
    text = text.replace(f",{pair[0]},{pair[1]},", f",{idx},")
    return [int(x) for x in text.strip(",").split(",") if x]


def _merge_hint_right_after(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if isinstance(got, list) and got == _merge_by_replace(ids, pair, idx) != expected:
        return (
            f"an occurrence of {pair} that comes right after a merged one was not merged: "
            f"in {_short_ids(ids)} the answer is {_short_ids(expected)}. After a merge, look "
            "for the pair again at the very next id. (str.replace on ',a,b,' makes the "
            "same mistake: two neighbouring occurrences share the comma between them, and "
            "the first match uses it up. Walk the list of ids instead.)"
        )
    return None


def _merge_hint_slice(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if isinstance(got, list) and got == list(ids) != expected:
        return (
            f"nothing was merged, though {pair} occurs in {_short_ids(ids)}. If you compare "
            "ids[i:i + 2] == pair: a slice is a list, and a list never equals a tuple "
            f"({list(pair)} == {pair} is False). Compare (ids[i], ids[i + 1]) == pair."
        )
    return None


def _merge_hint_last_id(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if isinstance(got, list) and ids and expected and got == expected[:-1]:
        return (
            f"the last id, {expected[-1]}, is missing: when the walk stops before the end "
            "(a loop over range(len(ids) - 1) or while i + 1 < len(ids)), an id left over at "
            "the end must still be copied to the new list."
        )
    return None


def _merge_either_order(ids: list, pair: tuple, idx: int) -> list:
    """What a merge that takes ``(b, a)`` for ``(a, b)`` too makes."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) in (pair, pair[::-1]):
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _merge_hint_either_order(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if isinstance(got, list) and got == _merge_either_order(ids, pair, idx) != expected:
        a, b = pair
        return (
            f"({b}, {a}) was merged too, but the pair is ({a}, {b}): the order of the two ids "
            f"matters. Merge only where ids[i] is {a} and ids[i + 1] is {b}."
        )
    return None


def _merge_hint_prefix(case: Case, expected: Any, got: Any) -> str | None:
    ids, pair, idx = case.args
    if not isinstance(got, list) or len(ids) < 4:
        return None
    for k in range(2, len(ids) - 1):
        if got == bpe.merge(ids[:k], pair, idx) + ids[k:]:
            return (
                f"{pair} was merged only near the start of the {len(ids)} ids, and the rest "
                "was copied as it was: walk the whole list to its end, however long it is."
            )
    return None


#: What the check says of a merge that changed the caller's list and handed it back.
_IN_PLACE = (
    "your merge changed ids itself and returned it: the caller's list is gone (here it "
    "looked unchanged only because nothing merged). The exercise asks for a new list and "
    "leaves ids as it was: build the answer in a new list (new_ids = [] and append)."
)


def _merges_in_place(fn: Any) -> bool:
    """Whether ``fn`` changes its list where the pair occurs and returns that list."""
    probe = [1, 2, 3, 1, 2]
    try:
        answer = fn(probe, (1, 2), 9)
    except Exception:
        return False
    return answer is probe and probe != [1, 2, 3, 1, 2]
