"""get_stats, merge, the tie rule and the two trainers in tokcourse.bpe."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse.bpe import get_stats, merge, most_frequent_pair, train, train_on_chunks

BYTES_VOCAB = {i: bytes([i]) for i in range(256)}
ids_lists = st.lists(st.integers(0, 5), max_size=30)


# ---------------------------------------------------------------------------- get_stats
def test_get_stats() -> None:
    assert get_stats([]) == {}
    assert get_stats([7]) == {}
    assert get_stats([1, 2, 3, 1, 2]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    assert get_stats([5, 5, 5]) == {(5, 5): 2}  # overlapping occurrences both count


def test_get_stats_accumulates_with_weight() -> None:
    counts = get_stats([1, 2])
    assert get_stats([1, 2, 3], counts, weight=10) is counts
    assert counts == {(1, 2): 11, (2, 3): 10}


@given(ids_lists)
def test_get_stats_counts_every_neighbour_pair(ids: list[int]) -> None:
    assert sum(get_stats(ids).values()) == max(0, len(ids) - 1)


# ---------------------------------------------------------------------------- merge
@pytest.mark.parametrize(
    ("ids", "pair", "expected"),
    [
        ([], (1, 2), []),
        ([1], (1, 2), [1]),
        ([1, 2], (1, 2), [9]),
        ([1, 2, 3, 1, 2], (1, 2), [9, 3, 9]),
        ([2, 1], (1, 2), [2, 1]),
        ([5, 5, 5], (5, 5), [9, 5]),  # leftmost occurrence first
        ([5, 5, 5, 5], (5, 5), [9, 9]),
        ([3, 1, 2], (1, 2), [3, 9]),  # a pair at the very end
    ],
)
def test_merge(ids: list[int], pair: tuple[int, int], expected: list[int]) -> None:
    assert merge(ids, pair, 9) == expected


@given(ids_lists, st.tuples(st.integers(0, 5), st.integers(0, 5)))
def test_merge_removes_the_pair_and_can_be_undone(ids: list[int], pair: tuple[int, int]) -> None:
    merged = merge(ids, pair, 99)
    assert pair not in get_stats(merged)
    undone = [x for i in merged for x in (pair if i == 99 else (i,))]
    assert undone == ids
    assert merge(ids, pair, 99) == merged and ids == undone  # the input is not modified


# ---------------------------------------------------------------------------- tie rule
def test_most_frequent_pair_tie_rule() -> None:
    stats = {(97, 98): 2, (98, 99): 2, (120, 121): 1}
    assert most_frequent_pair(stats, BYTES_VOCAB) == (98, 99)  # b"b" > b"a"
    assert most_frequent_pair({(97, 98): 1, (97, 99): 1}, BYTES_VOCAB) == (97, 99)
    assert most_frequent_pair({(97, 98): 1, (97, 99): 2}, BYTES_VOCAB) == (97, 99)
    vocab = {**BYTES_VOCAB, 256: b"ab", 257: b"a"}  # two ids may spell the same bytes
    assert most_frequent_pair({(256, 99): 3, (97, 99): 3}, vocab) == (256, 99)  # b"ab" > b"a"
    assert most_frequent_pair({(257, 99): 3, (97, 99): 3}, vocab) == (97, 99)  # same: smaller id


@given(st.dictionaries(st.tuples(st.integers(0, 255), st.integers(0, 255)), st.integers(1, 3)))
def test_tie_rule_ignores_dict_order(stats: dict[tuple[int, int], int]) -> None:
    if not stats:
        return
    items = list(stats.items())
    random.Random(0).shuffle(items)
    assert most_frequent_pair(dict(items), BYTES_VOCAB) == most_frequent_pair(stats, BYTES_VOCAB)
    assert most_frequent_pair(dict(reversed(items)), BYTES_VOCAB) == most_frequent_pair(
        stats, BYTES_VOCAB
    )


# ---------------------------------------------------------------------------- trainers
def test_train_aaabdaaabac() -> None:
    merges = train("aaabdaaabac", 259)
    assert merges == {(97, 97): 256, (256, 97): 257, (257, 98): 258}
    ids = list(b"aaabdaaabac")
    for pair, idx in merges.items():
        ids = merge(ids, pair, idx)
    assert ids == [258, 100, 258, 97, 99]


def test_train_all_ties_goes_to_greatest_bytes() -> None:
    assert train("abcd", 257) == {(99, 100): 256}  # every pair once: b"c", b"d" is greatest
    assert train(b"abcd", 259) == {(99, 100): 256, (98, 256): 257, (97, 257): 258}


def test_train_zero_merges() -> None:
    assert train("x", 256) == {}
    assert train_on_chunks(["x"], 256) == {}


def test_train_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    train("aaab", 257, verbose=True)
    assert "merge 1/1: (97, 97) -> 256 b'aa' (2x)" in capsys.readouterr().out
    train_on_chunks(["aa", "aa"], 257, verbose=True)
    assert "(2x)" in capsys.readouterr().out


def reference_train_on_chunks(chunks: list[bytes], vocab_size: int) -> dict:
    """minbpe's loop over every chunk (no counting of equal chunks), with our tie rule."""
    ids = [list(c) for c in chunks]
    vocab = dict(BYTES_VOCAB)
    merges = {}
    for idx in range(256, vocab_size):
        stats: dict = {}
        for chunk in ids:
            get_stats(chunk, stats)
        pair = most_frequent_pair(stats, vocab)
        ids = [merge(chunk, pair, idx) for chunk in ids]
        merges[pair] = idx
        vocab[idx] = vocab[pair[0]] + vocab[pair[1]]
    return merges


small_chunks = st.binary(min_size=1, max_size=6).map(lambda b: bytes(x % 4 + 97 for x in b))
chunk_lists = st.lists(small_chunks, min_size=1, max_size=25)  # 'a'..'d': many equal counts


@settings(max_examples=150, deadline=None)
@given(chunk_lists, st.integers(0, 12), st.randoms())
def test_train_on_chunks_matches_reference_and_ignores_order(
    chunks: list[bytes], num_merges: int, rnd: random.Random
) -> None:
    try:
        want = reference_train_on_chunks(chunks, 256 + num_merges)
    except ValueError:  # ran out of pairs
        with pytest.raises(ValueError, match="only allows"):
            train_on_chunks(chunks, 256 + num_merges)
        return
    assert train_on_chunks(chunks, 256 + num_merges) == want
    shuffled = list(chunks)
    rnd.shuffle(shuffled)
    assert train_on_chunks(shuffled, 256 + num_merges) == want  # order does not matter
    counted: dict[bytes, int] = {}
    for c in shuffled:
        counted[c] = counted.get(c, 0) + 1
    assert train_on_chunks(counted, 256 + num_merges) == want  # nor does counting


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=1, max_size=40), st.integers(0, 8))
def test_train_is_train_on_one_chunk(data: bytes, num_merges: int) -> None:
    try:
        want = train(data, 256 + num_merges)
    except ValueError:
        return
    assert train_on_chunks([data], 256 + num_merges) == want
