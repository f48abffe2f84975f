"""The fast BPE trainer: the same merges as ``bpe.train_on_chunks``, without recounting.

Chapter 13's names: the *naive trainer* runs chapter 02's loop over every chunk of the text;
the *chunk trainer* (``bpe.train_on_chunks``) runs it once per distinct chunk, weighted by its
count; both recount every pair for every merge. This *fast trainer* learns the same merges:

1. pre-tokenize once and keep each distinct chunk once, with how often it occurs;
2. count the pairs once, and remember *which chunks* hold each pair (``where``);
3. after a merge, revisit only the chunks that held the merged pair, and apply the
   difference (pairs that disappeared, pairs that appeared) to the counts;
4. find the best pair with a heap instead of a scan over all pairs. Counts change all the
   time, so the heap holds stale entries; we skip an entry when popped if its count is no
   longer the pair's count ("lazy invalidation"), and push a fresh entry for every pair
   whose count a merge changed.

**The tie rule**, exactly ``bpe.most_frequent_pair``'s: highest count, then the
lexicographically greatest ``(vocab[a], vocab[b])``, then the smaller ids. ``heapq`` is a
min-heap, so each entry's key must sort *smallest first* in that order: ``-count`` for the
count, and for the bytes a string that sorts in the reverse order of the bytes (see
``_reversed_key``), then ``a`` and ``b`` as they are.

>>> train_fast({b"aaabdaaabac": 1}, 259)
{(97, 97): 256, (256, 97): 257, (257, 98): 258}
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from . import bpe
from .patterns import GPT4_SPLIT_PATTERN, compile_pattern, split
from .special import split_specials
from .utf8 import _fix_surrogates

if TYPE_CHECKING:
    import regex

    from .patterns import TimedPattern

__all__ = ["apply_merge", "chunk_counts", "count_chunks", "index_words", "train_fast"]

Pair = tuple[int, int]


def _reversed_key(token: bytes) -> str:
    """A string that sorts in the *reverse* order of ``token`` among all
    byte strings.

    Byte ``x`` becomes the character ``255 - x`` (greater byte, smaller
    character), and a terminator ``chr(256)``, greater than any of them,
    ends the string. Why the terminator: a prefix is *smaller* than the
    longer string (``b"ab" < b"abc"``), so reversed it must come *after* it;
    at the position where the prefix ends, ``chr(256)`` beats any byte. It
    also makes the keys prefix-free, so ``key(a) + key(b)`` compares like
    the tuple ``(a, b)``.

    >>> _reversed_key(b"abc") < _reversed_key(b"ab") < _reversed_key(b"aa")
    True
    """
    return "".join(chr(255 - x) for x in token) + chr(256)


def _check_special_names(special_tokens: Collection[str]) -> frozenset[str]:
    """The special-token strings to cut training text at; each must be a non-empty str."""
    if isinstance(special_tokens, str) or not isinstance(special_tokens, Iterable):
        raise TypeError(
            "special_tokens must be a collection of str such as ['<|endoftext|>'], got "
            f"{type(special_tokens).__name__}: {special_tokens!r:.80}"
        )
    names = list(special_tokens)
    for position, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(
                f"special_tokens[{position}] must be a str, got {type(name).__name__}: {name!r:.80}"
            )
        if not name:
            raise ValueError(
                f"special_tokens[{position}] is the empty string, which occurs between every "
                "two characters: the text would be cut into single characters. Remove it."
            )
    return frozenset(names)


# fmt: off
def chunk_counts(
    text: str, pattern: str | None, special_tokens: Collection[str] = ()
) -> Counter[bytes]:
    """What BPE training with a split sees: ``{chunk bytes: how often}``.

    The special tokens are cut out first: never counted, and no chunk
    runs across the place where one was. Then each piece is split with
    ``pattern`` (``None``: the piece stays whole; a compiled pattern works
    too).

    >>> from tokcourse.patterns import GPT2_SPLIT_PATTERN
    >>> chunk_counts("hi hi<|end|>hi", GPT2_SPLIT_PATTERN, ["<|end|>"])
    Counter({b'hi': 2, b' hi': 1})
    """
    pieces = split_specials(text, special_tokens) if special_tokens else [text]
    counts: Counter[bytes] = Counter()
    for piece in pieces:
        if piece in special_tokens:
            continue  # a special token gets its own id; it is never merged
        chunks = [piece] if pattern is None else split(piece, pattern)
        counts.update(chunk.encode("utf-8") for chunk in chunks)
    return counts
# fmt: on


def count_chunks(
    text: str,
    pattern: str | regex.Pattern | TimedPattern | None = GPT4_SPLIT_PATTERN,
    special_tokens: Collection[str] = (),
) -> Counter[bytes]:
    """Pre-tokenize ``text`` once: ``{chunk bytes: how often}``.

    ``special_tokens`` are hard boundaries: the text is cut at each of them first, and the
    special tokens themselves are dropped (never counted, never merged across).
    ``pattern=None`` keeps each piece whole (a basic tokenizer).

    >>> count_chunks("hi hi<|end|>hi", special_tokens=["<|end|>"])
    Counter({b'hi': 2, b' hi': 1})
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
    specials = _check_special_names(special_tokens)
    compiled = compile_pattern(pattern) if isinstance(pattern, str) else pattern
    return chunk_counts(_fix_surrogates(text), compiled, specials)


def index_words(
    chunks: Mapping[bytes, int],
) -> tuple[list[list[int]], list[int], dict[Pair, int], dict[Pair, set[int]]]:
    """The trainer's state before the first merge: ``words, weights, counts, where``.

    ``words[i]`` is the i-th distinct chunk as byte ids, ``weights[i]`` how often it occurs,
    ``counts`` the weighted pair counts and ``where[pair]`` the words that hold each pair.

    >>> words, weights, counts, where = index_words({b"aab": 2, b"ba": 1})
    >>> words, weights, counts, where
    ([[97, 97, 98], [98, 97]], [2, 1], {(97, 97): 2, (97, 98): 2, (98, 97): 1}, \
{(97, 97): {0}, (97, 98): {0}, (98, 97): {1}})
    """
    words = [list(data) for data in chunks]
    weights = list(chunks.values())
    counts: dict[Pair, int] = {}
    where: dict[Pair, set[int]] = {}
    for i, word in enumerate(words):
        w = weights[i]
        for pair in pairwise(word):
            counts[pair] = counts.get(pair, 0) + w
            where.setdefault(pair, set()).add(i)
    return words, weights, counts, where


def apply_merge(
    pair: Pair,
    idx: int,
    words: list[list[int]],
    weights: Sequence[int],
    counts: dict[Pair, int],
    where: dict[Pair, set[int]],
) -> dict[Pair, int]:
    """One incremental merge step, in place: ``pair`` becomes ``idx`` in
    every word holding it.

    ``words[i]`` is a distinct chunk as ids and ``weights[i]`` how often it
    occurs; ``counts[p]`` is the weighted count of pair ``p`` over all
    words, and ``where[p]`` the indices of the words that hold ``p``
    (possibly more: an index can go stale when an earlier merge used up the
    pair in that word). Only the words in ``where[pair]`` are visited; in
    each, the old pairs are subtracted and the new ones added, so only pairs
    next to a merge change. Pairs whose count drops to 0 leave ``counts``,
    and ``pair`` leaves both ``counts`` and ``where``.

    Returns ``{p: new count}`` for every pair whose count changed (0 when it
    is gone), so a caller with a heap knows what to push.

    >>> words, weights = [[97, 97, 98], [98, 97, 97]], [2, 1]
    >>> counts = {(97, 97): 3, (97, 98): 2, (98, 97): 1}
    >>> where = {(97, 97): {0, 1}, (97, 98): {0}, (98, 97): {1}}
    >>> apply_merge((97, 97), 256, words, weights, counts, where)
    {(97, 97): 0, (97, 98): 0, (256, 98): 2, (98, 97): 0, (98, 256): 1}
    >>> words, counts
    ([[256, 98], [98, 256]], {(256, 98): 2, (98, 256): 1})
    """
    changed: dict[Pair, int] = {}
    for i in where.pop(pair, ()):
        word = words[i]
        new = bpe.merge(word, pair, idx)
        if len(new) == len(word):
            # stale index: an earlier merge already consumed the pair here
            continue
        w = weights[i]
        # subtract the old pairs and add the new: only the pairs next to a
        # merge change
        for p in pairwise(word):
            changed[p] = changed.get(p, 0) - w
        for p in pairwise(new):
            changed[p] = changed.get(p, 0) + w
            where.setdefault(p, set()).add(i)
        words[i] = new
    new_counts: dict[Pair, int] = {}
    for p, delta in changed.items():
        if delta == 0:
            continue
        c = counts.get(p, 0) + delta
        if c > 0:
            counts[p] = c
        else:
            counts.pop(p, None)
        new_counts[p] = max(c, 0)
    counts.pop(pair, None)
    return new_counts


# The book shows this function, in a code column 79 characters wide: between
# "fmt: off" and "fmt: on" it keeps the line breaks written for it.
# fmt: off
def train_fast(
    chunks: Iterable[str | bytes] | Mapping[str | bytes, int],
    vocab_size: int,
    *,
    progress: bool = False,
) -> dict[tuple[int, int], int]:
    """Learn ``vocab_size - 256`` merges from chunks: exactly
    ``bpe.train_on_chunks``'s merges.

    ``chunks`` is an iterable of chunks or a mapping ``{chunk: how_often}``
    (for instance ``count_chunks(text)``). ``progress=True`` shows a tqdm
    progress bar.

    >>> train_fast(["ab", "ab", "ba"], 257)
    {(97, 98): 256}
    >>> # "ug" (20x), then "hug" (15x)
    >>> train_fast({"hug": 10, "pug": 5, "hugs": 5}, 258)
    {(117, 103): 256, (104, 256): 257}
    """
    num_merges = bpe._check_vocab_size(vocab_size)
    counted = bpe._distinct_chunks(chunks)

    words, weights, counts, where = index_words(counted)

    # reversed bytes of each id
    rkey = {i: _reversed_key(bytes([i])) for i in range(256)}
    heap = [(-c, rkey[a] + rkey[b], a, b) for (a, b), c in counts.items()]
    heapq.heapify(heap)

    merges: dict[Pair, int] = {}
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=num_merges, desc="BPE merges", unit="merge")
    try:
        for step in range(num_merges):
            # pop until an entry is current: its count is the pair's count
            # right now
            while heap:
                neg, _, a, b = heap[0]
                if counts.get((a, b)) == -neg:
                    break
                heapq.heappop(heap)
            else:
                raise bpe._too_few_pairs(vocab_size, step)
            heapq.heappop(heap)
            pair = (a, b)
            idx = 256 + step
            merges[pair] = idx
            # reversed key of the concatenated bytes
            rkey[idx] = rkey[a][:-1] + rkey[b]

            for p, c in apply_merge(
                pair, idx, words, weights, counts, where
            ).items():
                if c > 0:
                    heapq.heappush(
                        heap, (-c, rkey[p[0]] + rkey[p[1]], p[0], p[1])
                    )
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return merges
# fmt: on
