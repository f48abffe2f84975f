"""Byte Pair Encoding, the algorithm: count pairs, merge the most frequent, repeat.

Everything here works on lists of integer ids. Training starts from the UTF-8 bytes of the
text (ids 0..255) and each merge mints the next id: the first merge makes 256, the next 257...

>>> merges = train("aaabdaaabac", 259)
>>> merges
{(97, 97): 256, (256, 97): 257, (257, 98): 258}

**The tie rule.** When several pairs are equally frequent, ``train`` merges the pair whose
bytes are lexicographically greatest: it compares ``(vocab[a], vocab[b])`` as a tuple of byte
strings (and, in the freak case of two pairs with identical bytes, prefers the smaller ids).
The result depends only on the counts, never on the order in which pairs were first seen.
(minbpe takes the first pair that ``max`` meets, so its merges depend on dict insertion order.)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise

# The book shows most of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.

__all__ = [
    "build_vocab",
    "count_spellings",
    "decode",
    "encode",
    "get_stats",
    "is_canonical",
    "merge",
    "most_frequent_pair",
    "train",
    "train_on_chunks",
    "utf8_text",
]


def get_stats(
    ids: Sequence[int],
    counts: dict[tuple[int, int], int] | None = None,
    *,
    weight: int = 1,
) -> dict[tuple[int, int], int]:
    """Count how often each pair of neighbours occurs in ``ids``.

    Pass ``counts`` to keep adding to an existing tally (one call per chunk
    of text), and ``weight`` to count a chunk that occurs several times in
    the text in one go.

    >>> get_stats([1, 2, 3, 1, 2])
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    >>> get_stats([1, 2], {(1, 2): 5}, weight=3)
    {(1, 2): 8}
    """
    counts = {} if counts is None else counts
    for pair in pairwise(ids):  # (ids[0], ids[1]), (ids[1], ids[2]), ...
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def merge(ids: Sequence[int], pair: tuple[int, int], idx: int) -> list[int]:
    """Replace every occurrence of ``pair`` in ``ids`` by the new id ``idx``,
    left to right.

    Subtle: occurrences may overlap (``a a a`` holds ``(a, a)`` twice);
    scanning left to right and jumping past each replacement merges the
    leftmost one, which is what BPE does.

    >>> merge([1, 2, 3, 1, 2], (1, 2), 4)
    [4, 3, 4]
    >>> merge([5, 5, 5], (5, 5), 6)
    [6, 5]
    """
    new_ids = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            new_ids.append(idx)
            i += 2
        else:
            new_ids.append(ids[i])
            i += 1
    return new_ids


# fmt: off
def most_frequent_pair(
    stats: Mapping[tuple[int, int], int], vocab: Mapping[int, bytes]
) -> tuple[int, int]:
    """The pair to merge next: the most frequent one, ties broken by the tie
    rule.

    Ties go to the pair whose bytes ``(vocab[a], vocab[b])`` are
    lexicographically greatest; if even those are equal (possible only in a
    hand-made vocab: no two ids that ``train`` makes spell the same bytes),
    to the smaller ids.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> stats = {(97, 98): 2, (98, 99): 2, (120, 121): 1}
    >>> most_frequent_pair(stats, vocab)  # b'bc' > b'ab'
    (98, 99)
    """
    if not stats:
        raise ValueError(
            "there are no pairs to choose from: stats is empty"
        )
    return max(
        stats,
        key=lambda p: (stats[p], vocab[p[0]], vocab[p[1]], -p[0], -p[1]),
    )
# fmt: on


MAX_VOCAB_SIZE = 2**32
"""Ids must fit in an unsigned 32-bit integer (as in tiktoken): at most 2**32 tokens."""


# fmt: off
def _check_vocab_size(vocab_size: int) -> int:
    """Validate ``vocab_size`` (an int, or a numpy integer); return the
    number of merges."""
    if (
        isinstance(vocab_size, bool)
        or not hasattr(type(vocab_size), "__index__")
    ):
        raise TypeError(
            f"vocab_size must be an int, got {type(vocab_size).__name__}"
        )
    # np.int64(300) -> 300; np.bool_ has no __index__
    vocab_size = operator.index(vocab_size)
    if vocab_size < 256:
        raise ValueError(
            "vocab_size must be at least 256 (one token per byte value), "
            f"got {vocab_size}"
        )
    if vocab_size > MAX_VOCAB_SIZE:
        raise ValueError(
            "vocab_size must be at most 2**32 "
            f"(ids are unsigned 32-bit integers), got {vocab_size}"
        )
    return vocab_size - 256
# fmt: on


# fmt: off
def _as_bytes(text: str | bytes, what: str = "text") -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray)):
        return bytes(text)
    raise TypeError(
        f"{what} must be a str or bytes, "
        f"got {type(text).__name__}: {text!r:.80}"
    )
# fmt: on


def _too_few_pairs(vocab_size: int, done: int) -> ValueError:
    return ValueError(
        f"vocab_size={vocab_size} needs {vocab_size - 256} merges, "
        f"but the training text only allows {done}: after {done} merges "
        f"every chunk is a single token. Use vocab_size <= {256 + done} "
        "or more text."
    )


# fmt: off
def train(
    text: str | bytes,
    vocab_size: int,
    verbose: bool = False,
    *,
    pick: Callable[
        [Mapping[tuple[int, int], int], Mapping[int, bytes]], tuple[int, int]
    ] | None = None,
) -> dict[tuple[int, int], int]:
    """The naive trainer: learn ``vocab_size - 256`` merges from one
    sequence of bytes.

    Returns the merges in the order they were learned,
    ``{(a, b): new_id}``. Each merge is the pair ``pick(stats, vocab)``
    chooses, by default :func:`most_frequent_pair`: ties between equally
    frequent pairs follow the tie rule (see the module docstring).

    >>> train("aaabdaaabac", 257)
    {(97, 97): 256}
    """
    num_merges = _check_vocab_size(vocab_size)
    data = _as_bytes(text)
    if not data:
        raise ValueError("cannot train on empty text")
    ids = list(data)
    vocab = {i: bytes([i]) for i in range(256)}
    merges: dict[tuple[int, int], int] = {}
    for i in range(num_merges):
        stats = get_stats(ids)
        if not stats:
            raise _too_few_pairs(vocab_size, i)
        pair = (pick or most_frequent_pair)(stats, vocab)
        idx = 256 + i
        ids = merge(ids, pair, idx)
        merges[pair] = idx
        vocab[idx] = vocab[pair[0]] + vocab[pair[1]]
        if verbose:
            print(
                f"merge {i + 1}/{num_merges}: {pair} -> {idx} "
                f"{vocab[idx]!r} ({stats[pair]}x)"
            )
    return merges
# fmt: on


def _distinct_chunks(
    chunks: Iterable[str | bytes] | Mapping[str | bytes, int],
) -> dict[bytes, int]:
    """``{chunk bytes: count}`` from a list of chunks or a mapping, empty chunks dropped."""
    if isinstance(chunks, (str, bytes, bytearray)):
        raise TypeError("chunks must be a list of chunks, not one str/bytes; did you mean train()?")
    counted: dict[bytes, int] = {}
    items = chunks.items() if isinstance(chunks, Mapping) else ((c, 1) for c in chunks)
    for chunk, count in items:
        data = _as_bytes(chunk, "each chunk")
        count = operator.index(count)
        if data and count > 0:
            counted[data] = counted.get(data, 0) + count
    if not counted:
        raise ValueError("cannot train on empty text")
    return counted


def train_on_chunks(
    chunks: Iterable[str | bytes] | Mapping[str | bytes, int],
    vocab_size: int,
    verbose: bool = False,
) -> dict[tuple[int, int], int]:
    """Learn merges from many chunks; pairs are never counted across a chunk boundary.

    ``chunks`` is an iterable of chunks or a mapping ``{chunk: how_often}``. Equal chunks
    always merge the same way, so each distinct chunk is stored once with its count: same
    merges as looping over every chunk, much less work.

    >>> train_on_chunks(["ab", "ab", "ba"], 257)
    {(97, 98): 256}
    """
    num_merges = _check_vocab_size(vocab_size)
    counted = _distinct_chunks(chunks)
    # one id list per distinct chunk, with its weight
    chunk_ids = [list(data) for data in counted]
    weights = list(counted.values())
    vocab = {i: bytes([i]) for i in range(256)}
    merges: dict[tuple[int, int], int] = {}
    for i in range(num_merges):
        stats: dict[tuple[int, int], int] = {}
        for ids, weight in zip(chunk_ids, weights, strict=True):
            get_stats(ids, stats, weight=weight)
        if not stats:
            raise _too_few_pairs(vocab_size, i)
        pair = most_frequent_pair(stats, vocab)
        idx = 256 + i
        chunk_ids = [merge(ids, pair, idx) if len(ids) > 1 else ids for ids in chunk_ids]
        merges[pair] = idx
        vocab[idx] = vocab[pair[0]] + vocab[pair[1]]
        if verbose:
            print(f"merge {i + 1}/{num_merges}: {pair} -> {idx} {vocab[idx]!r} ({stats[pair]}x)")
    return merges


# fmt: off
def build_vocab(
    merges: Mapping[tuple[int, int], int],
    byte_ids: Sequence[int] | None = None,
) -> dict[int, bytes]:
    """The bytes behind every token: the 256 single bytes, then one token
    per merge.

    Subtle: merges are visited in the order they were learned (``dict``
    keeps insertion order), so both halves of a pair already have their
    bytes. Sorting them first breaks that. ``byte_ids[b]`` is the id of the
    one-byte token ``b`` (default ``b`` itself; GPT-2 and GPT-4 number their
    byte tokens differently, see chapter 05).

    >>> vocab = build_vocab({(97, 97): 256, (256, 97): 257})
    >>> vocab[257]
    b'aaa'
    """
    vocab = {
        idx: bytes([b])
        for b, idx in enumerate(range(256) if byte_ids is None else byte_ids)
    }
    for (a, b), idx in merges.items():
        if a not in vocab or b not in vocab:
            raise ValueError(
                f"merge ({a}, {b}) -> {idx} uses an id not defined before it"
            )
        if idx in vocab:
            raise ValueError(f"merge ({a}, {b}) -> {idx} reuses id {idx}")
        vocab[idx] = vocab[a] + vocab[b]
    return vocab
# fmt: on


def encode(
    text: str | bytes,
    merges: Mapping[tuple[int, int], int],
    byte_ids: Sequence[int] | None = None,
) -> list[int]:
    """Encode text with BPE: start from bytes, apply the earliest-learned
    merge, repeat.

    Why ``min`` over the merge ids: a merge can only use tokens made before
    it, so merges are replayed in the order they were learned, never by how
    frequent a pair is in this text. The ``len(ids) >= 2`` test sits in the
    loop: after a merge one token may be all that's left.

    >>> merges = {(97, 97): 256, (256, 97): 257}
    >>> encode("aaab", merges)  # aa a b -> aaa b
    [257, 98]
    >>> encode("aaaab", merges)  # aa aa b: (256, 97) never occurs
    [256, 256, 98]
    >>> encode("", merges)
    []
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    ids = list(data) if byte_ids is None else [byte_ids[b] for b in data]
    while len(ids) >= 2:
        stats = get_stats(ids)
        pair = min(stats, key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break  # no pair left that was ever merged
        ids = merge(ids, pair, merges[pair])
    return ids


# fmt: off
def decode(ids: Iterable[int], vocab: Mapping[int, bytes]) -> str:
    """Turn ids back into text; bytes that are not valid UTF-8 become
    "\ufffd".

    Why ``errors="replace"``: a model may emit any sequence of ids, for
    instance a token holding only the first byte of a multi-byte character;
    decoding must not crash on it.

    >>> decode([104, 105, 226], build_vocab({}))
    'hi\ufffd'
    """
    return b"".join(vocab[idx] for idx in ids).decode(
        "utf-8", errors="replace"
    )
# fmt: on


def utf8_text(data: bytes) -> str:
    """``data`` decoded as UTF-8, each broken stretch replaced by "\ufffd"
    (``errors="replace"``): what :func:`decode` does with the joined bytes.

    >>> utf8_text(b"hi\\xe2\\x82"), utf8_text("€".encode())
    ('hi\ufffd', '€')
    """
    return data.decode("utf-8", errors="replace")


# fmt: off
def is_canonical(
    ids: Sequence[int], merges: Mapping[tuple[int, int], int]
) -> bool:
    """True when ``ids`` is exactly what ``encode`` produces for the text
    they decode to.

    ``decode(encode(s)) == s`` holds for every string, but
    ``encode(decode(ids)) == ids`` does not: many id sequences spell the
    same text, and ``encode`` makes only one of them. Ids holding invalid
    UTF-8 do not even decode to the same bytes (they become "\ufffd").

    >>> merges = {(97, 97): 256}
    >>> is_canonical([256], merges), is_canonical([97, 97], merges)
    (True, False)
    >>> is_canonical([226], merges)
    False
    """
    return encode(decode(ids, build_vocab(merges)), merges) == list(ids)
# fmt: on


# fmt: off
def count_spellings(
    text: str, merges: Mapping[tuple[int, int], int]
) -> int:
    """How many sequences of token ids spell ``text``: ids of the vocab
    built from ``merges`` whose bytes, joined, are the UTF-8 bytes of
    ``text``. Two ids with the same bytes (a hand-made table can have them;
    ``train`` never makes them) make two different sequences.

    Counted, never listed (there can be astronomically many):
    ``ways[i]``, the number of spellings of the first ``i`` bytes, is the
    sum of ``ways[j]`` over the tokens that spell exactly ``data[j:i]``.

    >>> count_spellings("aaa", {(97, 97): 256})  # a a a, aa a, a aa
    3
    >>> count_spellings("", {})  # one spelling: no ids at all
    1
    """
    data = text.encode("utf-8")
    ids_of = {}  # bytes -> how many ids spell them
    for token in build_vocab(merges).values():
        ids_of[token] = ids_of.get(token, 0) + 1
    longest = max(map(len, ids_of))
    ways = [1] + [0] * len(data)  # ways[i]: spellings of data[:i]
    for i in range(1, len(data) + 1):
        for j in range(max(0, i - longest), i):
            ways[i] += ways[j] * ids_of.get(data[j:i], 0)
    return ways[-1]
# fmt: on
