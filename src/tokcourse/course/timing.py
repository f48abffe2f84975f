"""Timings a chapter prints: CPU seconds of this process, best of a few runs.

A chapter that prints how long something took must print a number the reader gets too. Wall
clock time is not that number when the book is built: chapters run two at a time, next to the
test suite, and a function that waits for a core looks several times slower than it is. The CPU
time of the kernel's own process (``time.process_time``) counts only the work done, so it does
not grow when another program takes the core; the best of a few runs removes the rest of the
noise (a cache miss, a garbage collection).

>>> seconds, answer = cpu_seconds(sum, range(1000))
>>> answer, seconds >= 0
(499500, True)
>>> speedup(slow=2.0, fast=0.5)
4.0

Comparing several calls: on a shared machine the CPU time of a process still grows when the load
does (a busy neighbour on the same physical core, the caches, a virtual machine's stolen time),
and a load that comes and goes between two timings taken one after the other spoils their
ratio. :func:`cpu_seconds_each` takes the calls in turns, one run of each per round, best of a
few rounds, so such a load hits all of them alike. Both functions pause the garbage collector
while they time, as ``timeit`` does: a notebook that has imported plotly holds a few hundred
thousand objects, and the collections a call's allocations trigger walk all of them, a cost of
the notebook rather than of the call (it can double the time of chapter 13's naive trainer).

>>> times = cpu_seconds_each({"short": (sum, range(10)), "long": (sum, range(100_000))})
>>> list(times), times["short"] < times["long"]
(['short', 'long'], True)

Work done in another process (a subprocess, a thread pool of a Rust library) is not in this
count: time such work with the wall clock, and only where the chapter runs alone.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["cpu_seconds", "cpu_seconds_each", "speedup"]

T = TypeVar("T")


def cpu_seconds(
    fn: Callable[..., T], *args: Any, repeat: int = 3, **kwargs: Any
) -> tuple[float, T]:
    """Run ``fn(*args, **kwargs)`` ``repeat`` times; (fewest CPU seconds of one run, its answer).

    >>> cpu_seconds(len, "abc", repeat=1)[1]
    3
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat!r}")
    best, answer = float("inf"), None
    with _no_collections():
        for _ in range(repeat):
            start = time.process_time()
            answer = fn(*args, **kwargs)
            best = min(best, time.process_time() - start)
    return best, answer  # type: ignore[return-value]


@contextmanager
def _no_collections() -> Iterator[None]:
    """The garbage collector paused, then restored as it was (``timeit`` does the same)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def cpu_seconds_each(
    calls: Mapping[Hashable, Sequence[Any]], repeat: int = 3
) -> dict[Hashable, float]:
    """Fewest CPU seconds of each call ``(fn, *args)``, the calls taken in turns.

    Each of ``repeat`` rounds runs every call once, in order; a call's time is its best
    round. Interleaving is what keeps the ratios between the calls steady on a busy machine.

    >>> cpu_seconds_each({"a": (len, "abc")}, repeat=2)["a"] >= 0
    True
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat!r}")
    for name, call in calls.items():
        if not isinstance(call, (tuple, list)) or not call or not callable(call[0]):
            raise TypeError(f"{name!r}: give a call as (function, *arguments), not {call!r:.80}")
    best = {name: float("inf") for name in calls}
    with _no_collections():
        for _ in range(repeat):
            for name, (fn, *args) in calls.items():
                best[name] = min(best[name], cpu_seconds(fn, *args, repeat=1)[0])
    return best


def speedup(*, slow: float, fast: float) -> float:
    """How many times faster ``fast`` is than ``slow`` (both in seconds).

    >>> round(speedup(slow=1.0, fast=0.25), 2)
    4.0
    """
    if slow <= 0 or fast <= 0:
        raise ValueError(f"times must be positive, got slow={slow!r}, fast={fast!r}")
    return slow / fast
