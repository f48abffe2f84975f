"""Chapter 02's tie-rule check (most_frequent_pair): cases and hints. Registered by
:mod:`tokcourse.course.checks.trainer`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tokcourse import bpe
from tokcourse.course.exercises import Case


def _times(n: int) -> str:
    return f"{n} time{'s' * (n != 1)}"


#: The rule the train check enforces at every step, in the exercise text's words.


# --- most_frequent_pair ------------------------------------------------------------------------

#: The rules the check enforces on a tie, in the exercise text's words.
_GREATER = "the lexicographically greater pair"
_SAME_BYTES = "the pair with the smaller ids"


def _vocab_with(*tokens: bytes) -> dict[int, bytes]:
    """The 256 byte tokens, then ``tokens`` as ids 256, 257, ..."""
    return bpe.build_vocab({}) | {256 + i: t for i, t in enumerate(tokens)}


def _most_frequent_pair_cases() -> Iterator[Case]:
    byte_vocab = bpe.build_vocab({})
    yield Case(({(97, 98): 1}, byte_vocab))
    yield Case(({(97, 98): 1, (98, 99): 2}, byte_vocab))
    yield Case(({(97, 98): 2, (98, 99): 1}, byte_vocab))
    yield Case(({}, byte_vocab))  # nothing to choose from
    # "abcd": three pairs, one each
    yield Case(({(97, 98): 1, (98, 99): 1, (99, 100): 1}, byte_vocab), rule=_GREATER)
    # the first halves are equal
    yield Case(({(97, 98): 3, (97, 99): 3, (97, 97): 3}, byte_vocab), rule=_GREATER)
    # a tie on the count, not on anything else: the count comes first
    yield Case(({(122, 122): 1, (97, 97): 2, (98, 98): 2}, byte_vocab), rule=_GREATER)
    # the walk-through's step 2: aa+a against a+b
    toy = _vocab_with(b"aa")
    yield Case(({(256, 97): 2, (97, 98): 2, (98, 100): 1, (100, 256): 1}, toy), rule=_GREATER)
    # a pair of halves against the bytes joined: (ab, c) > (a, z) as pairs, b"abc" < b"az"
    ab = _vocab_with(b"ab")
    yield Case(({(97, 122): 3, (256, 99): 3, (98, 98): 1}, ab), rule=_GREATER)
    # the ids and the bytes disagree: 256 spells b"ab", which is smaller than b"x"
    yield Case(({(120, 97): 2, (256, 97): 2}, ab), rule=_GREATER)
    # two ids with the same bytes (b"ab" twice)
    twice = _vocab_with(b"ab", b"ab")
    yield Case(({(257, 99): 5, (256, 99): 5, (97, 98): 1}, twice), rule=_SAME_BYTES)
    # the same bytes and the same first id: the smaller second id decides
    bc_twice = _vocab_with(b"bc", b"bc")
    yield Case(({(97, 257): 5, (97, 256): 5}, bc_twice), rule=_SAME_BYTES)
    # the same bytes, (256, 259) against (257, 257): the first id decides before the second,
    # and neither the sum of the ids nor the second id first gives the pair the text asks for
    ab_four = _vocab_with(b"ab", b"ab", b"ab", b"ab")
    yield Case(({(257, 257): 5, (256, 259): 5}, ab_four), rule=_SAME_BYTES)
    # a token holding a NUL byte: (a\0, a) > (a, b) as pairs; joined with a NUL byte between
    # the halves, b"a\0\0a" < b"a\0b", so a separator cannot stand in for the pair
    nul = _vocab_with(b"a\0")
    yield Case(({(97, 98): 2, (256, 97): 2, (98, 0): 1}, nul), rule=_GREATER)
    # the second halves disagree with the first: (b, a) > (a, z), and a longer pair loses
    yield Case(({(97, 122): 4, (98, 97): 4, (256, 256): 4}, _vocab_with(b"aaa")), rule=_GREATER)
    # real counts from the middle of training small texts
    rng = random.Random(12)
    for _ in range(40):
        alphabet = rng.choice(["ab ", "abc d", "ab céд👋"])
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(4, 50)))
        ids = list(text.encode("utf-8"))
        vocab = bpe.build_vocab({})
        for idx in range(256, 256 + rng.randrange(0, 6)):
            stats = bpe.get_stats(ids)
            if len(stats) < 2:
                break
            pair = bpe.most_frequent_pair(stats, vocab)
            ids = bpe.merge(ids, pair, idx)
            vocab[idx] = vocab[pair[0]] + vocab[pair[1]]
        stats = bpe.get_stats(ids)
        if stats:
            yield Case((stats, vocab))


def _spelled(pair: Any, vocab: Any) -> tuple:
    return (vocab[pair[0]], vocab[pair[1]])


def _mfp_hint_ids(case: Case, expected: Any, got: Any) -> str | None:
    stats, vocab = case.args
    if not (isinstance(got, tuple) and got in stats and got != expected):
        return None
    if stats[got] != stats[expected] or _spelled(got, vocab) == _spelled(expected, vocab):
        return None
    tied = [p for p in stats if stats[p] == stats[got]]
    if got != max(tied) or _spelled(got, vocab) > _spelled(expected, vocab):
        return None
    return (
        f"{got} has the greater ids, but CS336's rule compares what the ids spell: {got} spells "
        f"{_spelled(got, vocab)} and {expected} spells {_spelled(expected, vocab)}, the greater "
        "pair of byte strings. Compare (vocab[a], vocab[b]), not (a, b)."
        + (
            " Nor by length: length is not part of CS336's rule."
            if _longest(stats, vocab) == got
            else ""
        )
    )


def _mfp_hint_same_bytes(case: Case, expected: Any, got: Any) -> str | None:
    stats, vocab = case.args
    if not (isinstance(got, tuple) and got in stats and got != expected):
        return None
    if stats[got] != stats[expected] or _spelled(got, vocab) != _spelled(expected, vocab):
        return None
    return (
        f"{got} and {expected} spell the same bytes, {_spelled(got, vocab)}: two ids can spell "
        "the same bytes, and CS336's rule cannot tell such pairs apart. The exercise adds one "
        "level for that case, the pair with the smaller ids: the smaller first id, then the "
        f"smaller second id, {expected}."
    )


def _tied_wrong(case: Case, expected: Any, got: Any) -> bool:
    stats, _ = case.args
    return (
        isinstance(got, tuple)
        and got in stats
        and got != expected
        and (stats[got] == stats[expected])
    )


def _mfp_hint_separator(case: Case, expected: Any, got: Any) -> str | None:
    stats, vocab = case.args
    if not _tied_wrong(case, expected, got):
        return None
    tied = [p for p in stats if stats[p] == stats[got]]
    if got != max(tied, key=lambda p: (vocab[p[0]] + b"\0" + vocab[p[1]], -p[0], -p[1])):
        return None
    return (
        f"{got} is the greatest pair when the halves are joined with a NUL byte between them, "
        f"but a token can hold any of the 256 byte values, NUL too: here {expected} spells "
        f"{_spelled(expected, vocab)}. No separator byte stands in for the pair; compare the "
        "halves as a pair of byte strings, (vocab[a], vocab[b])."
    )


def _second_first(stats: Any, vocab: Any) -> Any:
    """The most frequent pair with the greater bytes, second halves compared first."""
    top = max(stats.values())
    tied = [p for p in stats if stats[p] == top]
    return max(tied, key=lambda p: (vocab[p[1]], vocab[p[0]], -p[0], -p[1]))


def _mfp_hint_second_first(case: Case, expected: Any, got: Any) -> str | None:
    stats, vocab = case.args
    if not _tied_wrong(case, expected, got):
        return None
    if got != _second_first(stats, vocab):
        return None
    return (
        f"{got} spells {_spelled(got, vocab)}, the greatest when the second halves are compared "
        f"first; a pair compares like a word, its first half first: {expected} spells "
        f"{_spelled(expected, vocab)}, whose first half is the greater."
    )


def _longest(stats: Any, vocab: Any) -> Any:
    """The most frequent pair that spells the most bytes (then the greater bytes)."""
    top = max(stats.values())
    tied = [p for p in stats if stats[p] == top]
    return max(tied, key=lambda p: (len(vocab[p[0]] + vocab[p[1]]), vocab[p[0]], vocab[p[1]]))


def _mfp_hint_length(case: Case, expected: Any, got: Any) -> str | None:
    stats, vocab = case.args
    if not _tied_wrong(case, expected, got):
        return None
    if got != _longest(stats, vocab) or len(vocab[got[0]] + vocab[got[1]]) <= len(
        vocab[expected[0]] + vocab[expected[1]]
    ):
        return None
    return (
        f"{got} spells {_spelled(got, vocab)}, longer than {_spelled(expected, vocab)}, but "
        "length is not part of CS336's rule: byte strings compare byte by byte, and a longer "
        f"one wins only when the shorter is its beginning. {expected} is the greater pair."
    )


def _mfp_hint_joined(case: Case, expected: Any, got: Any) -> str | None:
    stats, vocab = case.args
    if not (isinstance(got, tuple) and got in stats and got != expected):
        return None
    if stats[got] != stats[expected]:
        return None
    joined = vocab[got[0]] + vocab[got[1]], vocab[expected[0]] + vocab[expected[1]]
    if not joined[0] > joined[1]:
        return None
    return (
        f"{got} spells {joined[0]!r} and {expected} {joined[1]!r}, and joined like that yours "
        f"is greater; but CS336 compares the pairs, and as a pair of halves "
        f"{_spelled(expected, vocab)} is greater than {_spelled(got, vocab)}. Joined bytes and "
        "pairs of byte strings do not always order the same way."
        + (
            " Nor the second halves first: a pair compares like a word, its first half first."
            if got == _second_first(stats, vocab)
            else ""
        )
    )


def _mfp_hint_tie(case: Case, expected: Any, got: Any) -> str | None:
    stats, vocab = case.args
    if not (isinstance(got, tuple) and got in stats and got != expected):
        return None
    if stats[got] != stats[expected]:
        return None
    return (
        f"{got} and {expected} both occur {_times(stats[got])}: a tie, which the exercise "
        f"breaks by CS336's rule, {_GREATER}, comparing the bytes the ids spell, not the ids: "
        f"{got} spells {_spelled(got, vocab)}, {expected} spells {_spelled(expected, vocab)}."
    )


def _mfp_hint_count_first(case: Case, expected: Any, got: Any) -> str | None:
    stats, _ = case.args
    if isinstance(got, tuple) and got in stats and stats[got] < stats[expected]:
        return (
            f"{got} occurs {_times(stats[got])} and {expected} {_times(stats[expected])}: the "
            "count comes first, the tie rule only chooses among the pairs with the highest count."
        )
    return None


def _mfp_hint_not_in_stats(case: Case, expected: Any, got: Any) -> str | None:
    stats, _ = case.args
    if isinstance(got, tuple) and stats and got not in stats:
        return f"{got} is not a pair of stats: return one of its keys."
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
