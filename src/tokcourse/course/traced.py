"""Chapter 02's trainer with a record of every step, fast enough for a whole novel.

``train_traced`` runs the loop chapter 02 asks for (count the pairs of the current sequence,
merge a most frequent one, repeat) with numpy doing the counting and the merging, and records
after each merge what the chapter plots: the length of the sequence, the count of the merged
pair and how many pairs shared the top count. The choice among the most frequent pairs is an
argument, ``choose(stats, vocab)``, called with only the pairs that share the top count, in
the order ``get_stats`` would have met them (first occurrence in the sequence). By default it
is ``bpe.most_frequent_pair``, and ``train_traced`` learns what :func:`tokcourse.bpe.train`
learns.

>>> from tokcourse import bpe
>>> traced = train_traced("aaabdaaabac", 259)
>>> traced.merges == bpe.train("aaabdaaabac", 259)
True
>>> traced.lengths, traced.counts, traced.n_top
([11, 9, 7, 5], [4, 2, 2], [1, 2, 1])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from tokcourse import bpe

Pair = tuple[int, int]
Choose = Callable[[Mapping[Pair, int], Mapping[int, bytes]], Pair]


@dataclass
class Trace:
    """What ``train_traced`` learned, and what it saw at each step."""

    merges: dict[Pair, int] = field(default_factory=dict)
    vocab: dict[int, bytes] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)  # after 0, 1, 2, ... merges
    counts: list[int] = field(default_factory=list)  # of each merged pair, when merged
    n_top: list[int] = field(default_factory=list)  # pairs sharing the top count


def _merge(ids: np.ndarray, pair: Pair, idx: int) -> np.ndarray:
    """Every occurrence of ``pair`` becomes ``idx``, leftmost first (as ``bpe.merge``)."""
    a, b = pair
    hits = np.flatnonzero((ids[:-1] == a) & (ids[1:] == b))
    if a == b and len(hits) > 1:  # overlapping runs: the leftmost of two overlapping hits
        keep, last = [], -2
        for i in hits.tolist():
            if i != last + 1:
                keep.append(i)
                last = i
        hits = np.array(keep, dtype=np.int64)
    out = ids.copy()
    out[hits] = idx
    return np.delete(out, hits + 1)


def train_traced(text: str | bytes, vocab_size: int, choose: Choose | None = None) -> Trace:
    """Learn ``vocab_size - 256`` merges from ``text``, choosing among ties with ``choose``
    (by default the course's tie rule, ``bpe.most_frequent_pair``)."""
    choose = bpe.most_frequent_pair if choose is None else choose
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    ids = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
    trace = Trace(vocab={i: bytes([i]) for i in range(256)}, lengths=[len(ids)])
    for idx in range(256, vocab_size):
        if len(ids) < 2:
            raise ValueError(f"the text has no pairs left after {idx - 256} merges")
        codes = ids[:-1] * vocab_size + ids[1:]
        counts = np.bincount(codes)
        top = int(counts.max())
        tied = np.flatnonzero(counts == top)
        first = [int(np.argmax(codes == code)) for code in tied]
        stats = {
            (int(code) // vocab_size, int(code) % vocab_size): top
            for _, code in sorted(zip(first, tied.tolist(), strict=True))
        }
        pair = choose(stats, trace.vocab)
        ids = _merge(ids, pair, idx)
        trace.merges[pair] = idx
        trace.vocab[idx] = trace.vocab[pair[0]] + trace.vocab[pair[1]]
        trace.lengths.append(len(ids))
        trace.counts.append(top)
        trace.n_top.append(len(stats))
    return trace


def trace_merges(text: str | bytes, merges: Mapping[Pair, int]) -> Trace:
    """Replay ``merges`` (learned from ``text``, in order) on ``text`` and record what training
    saw at each step: the lengths, the count of each merged pair and how many pairs shared the
    top count. What :func:`train_traced` records, for merges some other trainer learned.

    >>> traced = trace_merges("aaabdaaabac", {(97, 97): 256, (256, 97): 257, (257, 98): 258})
    >>> traced.lengths, traced.counts, traced.n_top
    ([11, 9, 7, 5], [4, 2, 2], [1, 2, 1])
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    ids = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
    trace = Trace(vocab={i: bytes([i]) for i in range(256)}, lengths=[len(ids)])
    size = max([255, *merges.values()]) + 1
    for pair, idx in merges.items():
        codes = ids[:-1] * size + ids[1:]
        counts = np.bincount(codes)
        top = int(counts.max())
        ids = _merge(ids, pair, idx)
        trace.merges[pair] = idx
        trace.vocab[idx] = trace.vocab[pair[0]] + trace.vocab[pair[1]]
        trace.lengths.append(len(ids))
        trace.counts.append(int(counts[pair[0] * size + pair[1]]))
        trace.n_top.append(int((counts == top).sum()))
    return trace


def replay(text: str | bytes, merges: Mapping[Pair, int]) -> list[int]:
    """The ids of ``text`` after applying ``merges`` in order, each once over the whole
    sequence (chapter 02's ``apply_merges``, with numpy doing the merging).

    >>> replay("aaabdaaabac", {(97, 97): 256, (256, 97): 257})
    [257, 98, 100, 257, 98, 97, 99]
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    ids = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
    for pair, idx in merges.items():
        ids = _merge(ids, pair, idx)
    return ids.tolist()
