"""Fast encoding: rank-based merging inside each chunk, and a cache of chunks already seen.

The reference ``bpe.encode`` recounts every pair after every merge and merges one pair id at
a time everywhere. Here, as in tiktoken, each chunk is a list of token ids; we look the
neighbour pairs up once, merge the pair with the lowest merge id (the earliest learned; the
leftmost on a tie), and look up only the two new neighbours of the merged token.

Two versions of that loop. ``bpe_ranked`` (with ``merge_lowest``, one step) keeps the ranks
in a list and scans it for the lowest on every merge: short and clear, but quadratic in the
chunk's length, and a chunk can be long (a megabyte of spaces is one chunk). ``bpe_heap``
keeps the candidate merges in a heap over a linked list of parts, so a chunk of ``n`` bytes
costs ``O(n log n)``; ``FastEncoder`` uses it for every chunk.

Why the result is the reference's: the reference merges every occurrence of the lowest pair
at once; merging them one at a time, leftmost first, gives the same tokens, because a token
made by a merge can only take part in *later* merges (its id is larger than its pair's).

Real text repeats its chunks (" the", " and", ...), so most chunks are answered from a
cache (``functools.lru_cache``, bounded, so memory stays flat on an endless stream).

>>> from tokcourse import GPT4Tokenizer
>>> enc = FastEncoder.from_tokenizer(GPT4Tokenizer())
>>> enc.encode_ordinary("hello world")
[15339, 1917]
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Protocol

import regex

from .patterns import GPT4_SPLIT_PATTERN, compile_pattern, split
from .unicode_pin import pin_unicode

__all__ = ["FastEncoder", "bpe_heap", "bpe_ranked", "encode_ordinary_cached", "merge_lowest"]

_INF = float("inf")


class _Trained(Protocol):
    """What :meth:`FastEncoder.from_tokenizer` reads from a tokenizer (any ``Tokenizer`` has it).

    A protocol rather than an import: ``tokenizer`` uses this module, so this module does not
    import ``tokenizer`` (dependencies point one way).
    """

    merges: Mapping[tuple[int, int], int]
    byte_shuffle: Sequence[int]
    _compiled: regex.Pattern[str] | None


def merge_lowest(
    ids: list[int],
    ranks: list[float],
    merges: Mapping[tuple[int, int], int],
) -> bool:
    """One step of rank-based BPE, in place; ``False`` (and no change) when
    nothing can merge.

    ``ranks[i]`` is the merge id of the pair ``(ids[i], ids[i + 1])``, or
    infinity when that pair was never merged. The step merges the pair with
    the lowest rank (the leftmost on a tie) into one token, whose id is that
    rank, and looks up only the two pairs the new token forms with its
    neighbours: every other pair, and so its rank, is unchanged.

    >>> ids, merges = [97, 97, 98], {(97, 97): 256, (256, 98): 257}
    >>> ranks = [256, float("inf")]
    >>> merge_lowest(ids, ranks, merges), ids, ranks
    (True, [256, 98], [257])
    >>> merge_lowest(ids, ranks, merges), merge_lowest(ids, ranks, merges)
    (True, False)
    >>> ids, ranks
    ([257], [])
    """
    best = min(ranks, default=_INF)
    if best == _INF:
        return False
    i = ranks.index(best)  # leftmost occurrence of the lowest rank
    ids[i : i + 2] = [best]
    del ranks[i]
    if i < len(ranks):
        ranks[i] = merges.get((best, ids[i + 1]), _INF)
    if i > 0:
        ranks[i - 1] = merges.get((ids[i - 1], best), _INF)
    return True


def bpe_ranked(
    ids: list[int],
    merges: Mapping[tuple[int, int], int],
) -> list[int]:
    """Merge ``ids`` in place by merge rank (lowest merge id first, leftmost
    on a tie).

    The ranks of the neighbour pairs are looked up once; then
    :func:`merge_lowest` merges one pair at a time and updates only the two
    ranks next to the new token.

    >>> bpe_ranked([97, 97, 97, 98], {(97, 97): 256, (256, 97): 257})
    [257, 98]
    """
    get = merges.get
    ranks = [get(pair, _INF) for pair in zip(ids, ids[1:], strict=False)]
    while merge_lowest(ids, ranks, merges):
        pass
    return ids


def bpe_heap(
    ids: Sequence[int],
    merges: Mapping[tuple[int, int], int],
) -> list[int]:
    """``bpe_ranked``'s ids in ``O(n log n)``: a heap of candidate merges
    over linked parts.

    The parts of the chunk form a doubly linked list (``nxt``, ``prv``:
    indices of the neighbouring live parts), so a merge unlinks one part in
    ``O(1)`` instead of shifting a list. ``rank[i]`` is the merge id of the
    pair starting at part ``i`` (``-1``: none). The heap holds
    ``(rank, position)`` for every pair that can merge, packed into one int
    (rank high, position low) because ints compare faster than tuples;
    popping gives the lowest rank, the leftmost on a tie, exactly
    ``merge_lowest``'s choice. A merge changes two pairs: we push their new
    ranks and leave the old entries in the heap (lazy deletion); an entry
    whose rank is no longer ``rank[i]`` is stale and skipped when it comes
    out.

    Why skipping by ``rank[i] != r`` is enough: every pair that can merge
    has an entry with its current rank, so the first entry that passes the
    test is the lowest current rank, leftmost on a tie; and an entry that
    passes is right to act on, since the pair at ``i`` now has rank ``r``,
    whichever push brought the entry. Each merge pushes at most two entries,
    so the heap never holds more than ``3n`` and the loop is
    ``O(n log n)``. Merge ids must be ints ``>= 0`` (``-1`` means "no
    merge"). Returns a new list.

    >>> bpe_heap([97, 97, 97, 98], {(97, 97): 256, (256, 97): 257})
    [257, 98]
    """
    n = len(ids)
    if n < 2:
        return list(ids)
    get = merges.get
    ids = list(ids)
    nxt = list(range(1, n + 1))  # nxt[i] == n: part i is the last one
    prv = list(range(-1, n - 1))  # prv[i] == -1: part i is the first one
    rank = [get(pair, -1) for pair in zip(ids, ids[1:], strict=False)]
    rank.append(-1)
    shift = n.bit_length()  # positions fit below this bit; ranks go above it
    low = (1 << shift) - 1
    heap = [(r << shift) | i for i, r in enumerate(rank) if r >= 0]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        entry = pop(heap)
        r, i = entry >> shift, entry & low
        if rank[i] != r:
            # stale: the pair at i changed since this entry was pushed
            continue
        j = nxt[i]  # part i absorbs its right neighbour j
        rank[j] = -1  # j is gone: its entries in the heap are stale now
        ids[i] = r
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
            r_right = rank[i] = get((r, ids[k]), -1)
            if r_right >= 0:
                push(heap, (r_right << shift) | i)
        else:
            rank[i] = -1
        h = prv[i]
        if h >= 0:
            r_left = rank[h] = get((ids[h], r), -1)
            if r_left >= 0:
                push(heap, (r_left << shift) | h)
    out = []
    i = 0
    while i < n:
        out.append(ids[i])
        i = nxt[i]
    return out


def encode_ordinary_cached(
    text: str,
    merges: Mapping[tuple[int, int], int],
    pattern: str | regex.Pattern = GPT4_SPLIT_PATTERN,
) -> list[int]:
    """Split ``text`` into chunks and encode each *distinct* chunk once, by
    rank.

    The same ids as ``tokenizer.encode_ordinary``: merges never cross a
    chunk boundary, so a chunk's ids depend on the chunk alone, and a dict
    from chunk to ids answers every repeat. (``FastEncoder`` does the same
    with a cache that outlives one call and has a size bound.)

    >>> # "e " crosses a chunk boundary
    >>> encode_ordinary_cached("the end", {(101, 32): 256})
    [116, 104, 101, 32, 101, 110, 100]
    """
    cache: dict[str, list[int]] = {}
    ids: list[int] = []
    for chunk in split(text, pattern):
        if chunk not in cache:
            cache[chunk] = bpe_ranked(list(chunk.encode("utf-8")), merges)
        ids.extend(cache[chunk])
    return ids


def _needs_pin(text: str) -> bool:
    """Whether ``pin_unicode`` would change ``text``, answered from its distinct characters.

    Why: ``pin_unicode`` searches the whole text with a huge character class (a quarter of
    the encoding time on 2 MB of code); ASCII never needs a stand-in, and for other text the
    few hundred distinct characters answer the same question.

    >>> _needs_pin("plain"), _needs_pin("\u0295")
    (False, True)
    """
    if text.isascii():
        return False
    distinct = "".join(set(text))
    return pin_unicode(distinct) is not distinct


class FastEncoder:
    """Encode ordinary text (no special tokens) fast, with the tables of a tokenizer.

    ``cache_size`` bounds the chunk cache (entries, not bytes; chunks are short).
    Use ``from_tokenizer`` to build one from any ``Tokenizer``.

    >>> FastEncoder({(104, 105): 256}, pattern=None).encode_ordinary("hi hi")
    [256, 32, 256]
    """

    def __init__(
        self,
        merges: Mapping[tuple[int, int], int],
        byte_ids: Sequence[int] | None = None,
        pattern: str | regex.Pattern | None = None,
        cache_size: int = 1 << 16,
    ) -> None:
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError(f"cache_size must be an int >= 0, got {cache_size!r}")
        self.merges = dict(merges)
        for pair, idx in self.merges.items():  # bpe_heap packs ids >= 0 into its heap entries
            if isinstance(idx, bool) or not isinstance(idx, int) or idx < 0:
                raise ValueError(f"merge {pair!r} has id {idx!r}; merge ids must be ints >= 0")
        byte_ids = tuple(range(256)) if byte_ids is None else tuple(byte_ids)
        if sorted(byte_ids) != list(range(256)):
            raise ValueError("byte_ids must be a permutation of 0..255")
        self._byte_table = bytes(byte_ids)  # a translate table: byte b -> id of the token b
        self._compiled = compile_pattern(pattern) if isinstance(pattern, str) else pattern
        self._cache_size = cache_size
        self._new_cache()

    def _new_cache(self) -> None:
        # per instance (not a module-level cache): the merges differ between encoders
        self._encode_chunk = functools.lru_cache(self._cache_size)(self._encode_chunk_uncached)

    def __getstate__(self) -> dict:
        # the cache wraps a bound method, which pickle cannot store: rebuild it on load
        state = self.__dict__.copy()
        del state["_encode_chunk"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._new_cache()

    @classmethod
    def from_tokenizer(cls, tokenizer: _Trained, cache_size: int = 1 << 16) -> FastEncoder:
        """A fast encoder with ``tokenizer``'s merges, byte order and split pattern."""
        return cls(tokenizer.merges, tokenizer.byte_shuffle, tokenizer._compiled, cache_size)

    def _encode_chunk_uncached(self, chunk: str) -> tuple[int, ...]:
        # the byte order is a permutation of 0..255, so bytes.translate maps it in C
        ids = list(chunk.encode("utf-8").translate(self._byte_table))
        if len(ids) < 2:
            return tuple(ids)
        # the heap also for short chunks: measured, it is no slower than bpe_ranked there
        return tuple(bpe_heap(ids, self.merges))

    def chunks(self, text: str) -> list[str]:
        """The chunks of ``text``: ``patterns.split``'s, computed faster when possible.

        >>> FastEncoder({}, pattern=r"\\w+|\\W").chunks("hi, you")
        ['hi', ',', ' ', 'you']
        """
        if self._compiled is None:
            return [text] if text else []
        # nothing to re-categorize and no capturing group: findall gives the chunks directly
        if self._compiled.groups == 0 and not _needs_pin(text):
            chunks = self._compiled.findall(text)
            # findall skips text no alternative matches; then let split raise its error
            if sum(map(len, chunks)) == len(text):
                return [c for c in chunks if c] if "" in chunks else chunks
        return split(text, self._compiled)

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of ``text``, with special-token names encoded as ordinary text.

        ``text`` must already be valid UTF-8 (``Tokenizer`` fixes surrogates first).

        >>> FastEncoder({(97, 97): 256}, pattern=r"\\w+|\\W").encode_ordinary("aaa a")
        [256, 97, 32, 97]
        """
        # map + chain: the loop over chunks runs in C; most chunks are cache hits
        return list(chain.from_iterable(map(self._encode_chunk, self.chunks(text))))

    def cache_info(self) -> functools._CacheInfo:
        """Hits, misses and size of the chunk cache (see ``functools.lru_cache``)."""
        return self._encode_chunk.cache_info()
