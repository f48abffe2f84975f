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

Work done in another process (a subprocess, a thread pool of a Rust library) is not in this
count: time such work with the wall clock, and only where the chapter runs alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["cpu_seconds", "speedup"]

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
    for _ in range(repeat):
        start = time.process_time()
        answer = fn(*args, **kwargs)
        best = min(best, time.process_time() - start)
    return best, answer  # type: ignore[return-value]


def speedup(*, slow: float, fast: float) -> float:
    """How many times faster ``fast`` is than ``slow`` (both in seconds).

    >>> round(speedup(slow=1.0, fast=0.25), 2)
    4.0
    """
    if slow <= 0 or fast <= 0:
        raise ValueError(f"times must be positive, got slow={slow!r}, fast={fast!r}")
    return slow / fast
