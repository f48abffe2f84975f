"""Shared timing helper for the benchmark scripts."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(
    fn: Callable[[], object], repeat: int = 3, clock: Callable[[], float] = time.perf_counter
) -> float:
    """The fastest of ``repeat`` runs of ``fn``, in seconds of ``clock`` (the least disturbed).

    Wall-clock by default; ``clock=time.process_time`` counts this process's CPU seconds, which
    other work on the machine does not inflate (for code that runs on one thread).
    """
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best
