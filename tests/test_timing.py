"""Timings a chapter prints: CPU seconds, garbage collector paused, calls taken in turns."""

from __future__ import annotations

import gc
import time

import pytest

from tokcourse.course import timing
from tokcourse.course.timing import cpu_seconds, cpu_seconds_each, speedup


def test_cpu_seconds_counts_work_not_waiting():
    """Sleeping holds no core: wall-clock timing would say 0.2 s, CPU time says almost 0."""
    seconds, answer = cpu_seconds(lambda: time.sleep(0.2) or "done", repeat=1)
    assert answer == "done"
    assert seconds < 0.05


def test_cpu_seconds_pauses_the_collector_and_restores_it():
    seen = []
    cpu_seconds(lambda: seen.append(gc.isenabled()), repeat=2)
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        cpu_seconds(len, "x")
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


def test_cpu_seconds_keeps_the_best_run(monkeypatch):
    ticks = iter([0.0, 3.0, 10.0, 11.0, 20.0, 22.0])  # runs of 3, 1 and 2 seconds
    monkeypatch.setattr(timing.time, "process_time", lambda: next(ticks))
    assert cpu_seconds(len, "abc", repeat=3) == (1.0, 3)
    with pytest.raises(ValueError, match="at least 1"):
        cpu_seconds(len, "abc", repeat=0)


def test_speedup():
    assert speedup(slow=3.0, fast=0.5) == 6.0
    with pytest.raises(ValueError, match="positive"):
        speedup(slow=1.0, fast=0.0)


def test_cpu_seconds_each_takes_the_calls_in_turns(monkeypatch):
    order = []

    def fake(fn, *args, repeat):
        assert repeat == 1
        assert not gc.isenabled()  # paused while timing, as timeit does
        order.append(args[0])
        return float(len(order)), None

    monkeypatch.setattr(timing, "cpu_seconds", fake)
    times = cpu_seconds_each({"x": (len, "x"), "y": (len, "y")}, repeat=3)
    assert order == ["x", "y"] * 3  # one run of each per round
    assert times == {"x": 1.0, "y": 2.0}  # the best round of each
    assert gc.isenabled()  # and restored


def test_cpu_seconds_each_refuses_what_is_not_a_call():
    with pytest.raises(TypeError, match="function, \\*arguments"):
        cpu_seconds_each({"x": len})
    with pytest.raises(TypeError, match="'x'"):
        cpu_seconds_each({"x": ("len", "abc")})
    with pytest.raises(ValueError, match="at least 1"):
        cpu_seconds_each({"x": (len, "abc")}, repeat=0)
