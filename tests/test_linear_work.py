"""The default encoders do near-linear *work* on hostile input: counted, never timed.

Timings flake on a shared machine, so we count the work an algorithm does instead:

- for the merge inside a chunk, the comparisons between ranks (merge ids), which is where
  a rescanning merge spends its time (``min`` over every rank, on every merge) and where a
  heap spends ``O(log n)`` per merge;
- for streaming, the characters handed to a resolve (split, special-token search, trailing
  white space), which a stream that re-splits its whole buffer on every piece repeats.

Each measure is shown able to fail: it sees the quadratic growth of the rescanning merge.
The wall-clock numbers are in ``benchmarks/bench_hostile.py``.
"""

from __future__ import annotations

import math

import pytest

from tokcourse import stream
from tokcourse.fast_encode import bpe_heap, bpe_ranked

from ._parity import hostile_texts, ours


class Rank(int):
    """A merge id that counts every comparison made with it (shifts keep it a Rank)."""

    compared = 0

    def _count(self) -> None:
        Rank.compared += 1

    def __lt__(self, other):
        self._count()
        return int.__lt__(self, other)

    def __le__(self, other):
        self._count()
        return int.__le__(self, other)

    def __gt__(self, other):
        self._count()
        return int.__gt__(self, other)

    def __ge__(self, other):
        self._count()
        return int.__ge__(self, other)

    def __eq__(self, other):
        self._count()
        return int.__eq__(self, other)

    def __ne__(self, other):
        self._count()
        return int.__ne__(self, other)

    __hash__ = int.__hash__

    # a heap may pack a rank with a position into one int: the packed key stays counted
    def __lshift__(self, other):
        return Rank(int(self) << other)

    def __rshift__(self, other):
        return Rank(int(self) >> other)

    def __or__(self, other):
        return Rank(int(self) | other)


@pytest.fixture(scope="module")
def counted_merges() -> tuple[dict, tuple[int, ...]]:
    tok = ours("cl100k_base")
    return {pair: Rank(idx) for pair, idx in tok.merges.items()}, tok.byte_shuffle


def comparisons(merge, text: str, counted_merges) -> int:
    merges, byte_ids = counted_merges
    ids = [byte_ids[b] for b in text.encode("utf-8")]
    Rank.compared = 0
    merge(ids, merges)
    return Rank.compared


SHAPES = ["spaces", "one letter", "one emoji", "random word", "ab repeated"]


@pytest.mark.parametrize("shape", SHAPES)
def test_heap_merge_work_is_near_linear(shape: str, counted_merges) -> None:
    small = comparisons(bpe_heap, hostile_texts(2_000)[shape], counted_merges)
    large = comparisons(bpe_heap, hostile_texts(8_000)[shape], counted_merges)
    n_large = len(hostile_texts(8_000)[shape].encode("utf-8"))
    # n log n: 4x the input costs 4 * (1 + log 4 / log n) < 5x the comparisons
    print(f"{shape}: {small:,} -> {large:,} comparisons ({large / small:.2f}x)")
    assert large / small < 5, (shape, small, large)
    # a heap pop and push compare O(log n) times per merge; a rescan would compare n times
    assert large < 6 * n_large * math.log2(n_large), (shape, large)


def test_the_work_measure_sees_a_quadratic_merge(counted_merges) -> None:
    """The same measure on the rescanning merge: 4x the spaces, about 16x the comparisons."""
    small = comparisons(bpe_ranked, hostile_texts(500)["spaces"], counted_merges)
    large = comparisons(bpe_ranked, hostile_texts(2_000)["spaces"], counted_merges)
    print(f"bpe_ranked on spaces: {small:,} -> {large:,} comparisons ({large / small:.2f}x)")
    assert large / small > 10, (small, large)


def resolved_characters(monkeypatch: pytest.MonkeyPatch, pieces: list[str]) -> int:
    """Characters handed to the stream's resolve step while streaming ``pieces``."""
    total = 0
    real = stream._resolve

    def counting(buffer: str, *args):
        nonlocal total
        total += len(buffer)
        return real(buffer, *args)

    monkeypatch.setattr(stream, "_resolve", counting)
    tok = ours("cl100k_base")
    got = list(tok.encode_iterable(pieces))
    assert got == tok.encode("".join(pieces))
    return total


def cut(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize(
    ("shape", "piece"),
    [
        ("spaces", 1024),
        ("one letter", 1024),
        ("one emoji", 256),
        ("random word", 1),
        ("newlines", 1),  # line by line: every line is "\n"
        ("mixed white space", 1),
        ("ab repeated", 7),
    ],
)
def test_streaming_work_is_linear_whatever_the_cut(
    shape: str, piece: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = {}
    for n in (3_000, 12_000):
        text = hostile_texts(n)[shape]
        work[n] = resolved_characters(monkeypatch, cut(text, piece))
        # each resolve reads at most twice the text that arrived since the previous one
        assert work[n] <= 3 * len(text) + 100, (shape, n, work[n])
    print(f"{shape} in pieces of {piece}: {work}")
    assert work[12_000] / work[3_000] < 5, (shape, work)


def test_encode_iterable_checks_its_arguments_at_the_call() -> None:
    tok = ours("cl100k_base")
    for bad in (None, 5, 3.5):
        with pytest.raises(TypeError, match="pieces must be an iterable of str"):
            tok.encode_iterable(bad)  # type: ignore[arg-type]  - no list(): at the call
    with pytest.raises(TypeError, match="not one str"):
        tok.encode_iterable("hello")
