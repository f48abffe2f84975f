"""Chapter 03's cost rule for ``encode``: its work must not grow with the size of the merge table.

The check hands ``encode`` a table of thousands of merges with a short text, as a
:class:`_CountedMerges`: a real ``dict`` that counts the merges ``encode`` looks at.

* A lookup (``merges[pair]``, ``pair in merges``, ``merges.get(pair)``) counts one.
* Walking the table counts one for every merge met: ``for pair in merges``, ``.items()``,
  ``.values()``, a copy made with ``dict(merges)`` (which looks up every merge: its report
  names the copy).
* The pairs of the table are a subclass of ``tuple`` that counts each time one is hashed or
  compared, so a walk through ``merges.keys()`` that does anything with the pairs it meets
  (``pair in stats``, ``merge(ids, pair, idx)``) counts too.

What is cheap stays cheap: ``get_stats(ids).keys() & merges.keys()`` is computed by CPython
over the smaller of the two views, looking each pair of the text up in the table, and counts
only the pairs it finds, as on a plain dict.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, ItemsView, Iterator, ValuesView
from typing import Any

from tokcourse.course.checks import _no_codec
from tokcourse.course.exercises import Violation

#: The words of the exercise text for the cost rule.
NOT_THE_TABLE = "does not grow with the size of the merge table"
#: A table at least this large is handed to ``encode`` counted.
LARGE = 1_000
SHORT_TEXT = "the quick brown fox jumps"


class LargeTable(dict):
    """A merge table too large to print: a report shows its size, not its 4,000 pairs."""

    def __repr__(self) -> str:
        return f"<a table of {len(self):,} merges>"


def large_table() -> LargeTable:
    """Thousands of merges: every pair of lower-case letters and space (in a seeded order),
    then pairs of the first of those tokens."""
    symbols = [32, *range(97, 123)]
    pairs = [(a, b) for a in symbols for b in symbols]
    random.Random(21).shuffle(pairs)
    merges = {pair: 256 + i for i, pair in enumerate(pairs)}
    first = list(merges.values())[:60]
    for a in first:
        for b in first:
            merges[a, b] = 256 + len(merges)
    return LargeTable(merges)


def allowed(n_bytes: int) -> int:
    """How many merges an encode may look at for a text of ``n_bytes`` bytes: a few per pair
    of neighbours and step, far more than the loop that picks the lowest id needs."""
    return 4 * max(n_bytes, 2) ** 2


class _Count:
    """How many merges have been looked at."""

    def __init__(self) -> None:
        self.n = 0


def _counting_pair(count: _Count) -> type:
    """A ``tuple`` that adds one to ``count`` each time it is hashed or compared."""

    class Pair(tuple):
        __slots__ = ()

        def __hash__(self) -> int:
            count.n += 1
            return tuple.__hash__(self)

        def __eq__(self, other: object) -> bool:
            count.n += 1
            return tuple.__eq__(self, other)

        def __ne__(self, other: object) -> bool:
            count.n += 1
            return tuple.__ne__(self, other)

    return Pair


#: The code that reads ``merges[pair]`` for ``.items()`` and ``.values()``.
_VIEWS = (ItemsView.__iter__.__code__, ValuesView.__iter__.__code__)


class _CountedMerges(dict):
    """The merges, counting the merges looked at (see the module docstring)."""

    def __init__(self, merges: dict) -> None:
        self.count = _Count()
        pair = _counting_pair(self.count)
        super().__init__((pair(p), idx) for p, idx in merges.items())
        self.count.n = 0  # building the table is not encode's work
        self.got = 0  # merges[pair] from encode's code: a copy looks up every merge

    @property
    def looked_at(self) -> int:
        return self.count.n

    def __getitem__(self, pair: Any) -> int:
        self.count.n += 1
        if sys._getframe(1).f_code not in _VIEWS:
            self.got += 1  # not through .items() or .values()
        return super().__getitem__(pair)

    def __contains__(self, pair: object) -> bool:
        self.count.n += 1
        return super().__contains__(pair)

    def get(self, pair: Any, default: Any = None) -> Any:
        self.count.n += 1
        return super().get(pair, default)

    def __iter__(self) -> Iterator:
        for pair in super().__iter__():
            self.count.n += 1
            yield pair

    def items(self) -> ItemsView:  # type: ignore[override]
        return ItemsView(self)

    def values(self) -> ValuesView:  # type: ignore[override]
        return ValuesView(self)

    def __repr__(self) -> str:
        return f"<a table of {len(self):,} merges>"


def run_encode(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Call ``encode``; on a large table, count the merges it looks at and refuse an encode
    that walks the table (the "work" rule)."""
    text, merges = args
    if len(merges) < LARGE:
        return fn(*args, **kwargs)
    counted = _CountedMerges(merges)
    answer = fn(text, counted, **kwargs)
    n_bytes = len(text.encode("utf-8"))
    bound = allowed(n_bytes)
    if counted.looked_at > bound:
        try:
            if counted.got >= len(merges):
                _no_codec._reject(
                    f"{counted.looked_at:,} merges looked at: your encode reads every merge of "
                    f"the table of {len(merges):,}, as a copy of it does",
                    "a copy of the table (ranks = dict(merges), {**merges}, or a loop over "
                    "merges.items() that fills a new dict) reads every merge, 50,000 of them "
                    "for GPT-2, before the first pair of the text is looked at. merges already "
                    "is the table of ranks: look up the pairs of neighbours of the text in it "
                    "directly (merges.get(pair, float('inf'))).",
                )
            _no_codec._reject(
                f"{counted.looked_at:,} merges looked at (lookups, and merges met while "
                f"walking the table): it walks the whole table of {len(merges):,}",
                "walking the table (replaying it, one pass per merge, or looping over it to "
                "find the pairs the text has) does work for every merge, 50,000 of them for "
                "GPT-2, whether or not its pair occurs in the text. Start from the pairs of "
                "neighbours in the text and look up only those: which of them would training "
                "have merged first?",
            )
        except Violation as violation:
            violation.expected = (
                f"at most {bound:,} merges looked at for a text of {n_bytes} bytes (4 × "
                f"{n_bytes}²: a few lookups per pair of neighbours and step)"
            )
            raise
    return answer
