"""Chapter 02's train_with check: the rules passed as pick, the cases and the hints.
Registered by :mod:`tokcourse.course.checks.trainer`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tokcourse import bpe
from tokcourse.course.exercises import Case

#: The rules the train_with check enforces, in the exercise text's words.
_PICK = "the pair pick(stats, vocab) returns"
_WHATEVER = "even one that is not the most frequent"


class _Pick:
    """A picking rule with a readable name (it shows in the check's messages)."""

    def __init__(self, name: str, rule: Any) -> None:
        self.name, self.rule = name, rule

    def __call__(self, stats: Any, vocab: Any) -> Any:
        return self.rule(stats, vocab)

    def __repr__(self) -> str:
        return self.name

    def __deepcopy__(self, memo: dict) -> _Pick:  # a rule is not data: the check's copy is it
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Pick) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


GREATEST_BYTES = _Pick("greatest_bytes", bpe.most_frequent_pair)
SMALLEST_IDS = _Pick("smallest_ids", lambda s, v: max(s, key=lambda p: (s[p], -p[0], -p[1])))
RAREST = _Pick("rarest", lambda s, v: min(s, key=lambda p: (s[p], p)))


def _random_texts(seed: int, n: int) -> Iterator[tuple[str, int]]:
    """``n`` short texts with enough pairs for their number of merges: half ASCII, half with
    characters of two, three and four UTF-8 bytes."""
    rng = random.Random(seed)
    produced = 0
    while produced < n:
        alphabet = "ab cd" if produced % 2 else "ab céд한👋"
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(2, 60)))
        vocab_size = 256 + rng.randrange(1, 12)
        try:
            bpe.train(text, vocab_size)
        except ValueError:  # not enough pairs for that many merges: not a fair question
            continue
        produced += 1
        yield text, vocab_size


def _train_with_cases() -> Iterator[Case]:
    rules = (GREATEST_BYTES, SMALLEST_IDS, RAREST)
    yield from (
        # the walk-through's ties, decided by pick: each rule gives other merges
        Case(("aaabdaaabac", 260, GREATEST_BYTES), rule=_PICK),
        Case(("aaabdaaabac", 260, SMALLEST_IDS), rule=_PICK),
        Case(("aaabdaaabac", 259, RAREST), rule=_WHATEVER),
        Case(("hello world, hello moon", 265, GREATEST_BYTES), rule=_PICK),
        Case(("abcd", 258, RAREST)),
        Case(("😀😀", 260, GREATEST_BYTES)),
    )
    for i, (text, vocab_size) in enumerate(_random_texts(5, 30)):
        yield Case((text, vocab_size, rules[i % 3]))


def _train_with_reference(text: str, vocab_size: int, pick: Any) -> dict[tuple[int, int], int]:
    """:func:`tokcourse.bpe.train` with ``pick`` as the third argument."""
    return bpe.train(text, vocab_size, pick=pick)


def _replay_with(text: str, vocab_size: int, pick: Any, spell: Any) -> list:
    """The merges of a trainer whose vocab records ``spell(vocab, a, b)`` for each new id."""
    ids = list(text.encode("utf-8"))
    vocab = bpe.build_vocab({})
    out = []
    for idx in range(256, vocab_size):
        pair = pick(bpe.get_stats(ids), vocab)
        ids = bpe.merge(ids, pair, idx)
        vocab[idx] = spell(vocab, *pair)
        out.append((pair, idx))
    return out


def _with_hint_call(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, TypeError):
        return None
    message = str(got)
    pick = case.args[2]
    if "__call__()" in message:  # the course's pick, called with the wrong arguments
        return (
            f"pick={pick!r} was called the wrong way ({got}): it takes two arguments, the "
            "counts of the current sequence and the vocab so far: pair = pick(stats, vocab)."
        )
    if "positional argument" in message:  # train_with itself does not take three
        return (
            f"train_with was called with pick={pick!r} as its third argument and does not take "
            f"it ({got}): def train_with(text, vocab_size, pick)."
        )
    if "not supported between" in message and "tuple" in message:
        return (
            f"pick={pick!r} compared bytes with a tuple ({got}): vocab maps each id to the bytes "
            "it spells, so after each merge vocab[idx] = vocab[a] + vocab[b], not the pair."
        )
    return None


def _with_hint_ids(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, list):
        return None
    step = next((i for i, (_, idx) in enumerate(got) if idx != 256 + i), None)
    if step is None:
        return None
    return (
        f"merge number {step} (counting from 0) minted the id {got[step][1]!r}, and it must be "
        f"{256 + step}: ids 0-255 are the bytes, so merge number i mints 256 + i."
    )


def _with_hint_key_error(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, KeyError):
        return None
    return (
        f"pick={case.args[2]!r} raised KeyError {got}: it looks up the bytes of the pair's ids "
        "in vocab, so vocab must hold every id, the new ones too: after each merge, "
        "vocab[idx] = vocab[a] + vocab[b]."
    )


def _first_difference(expected: Any, got: Any) -> int | None:
    if not isinstance(got, list) or not isinstance(expected, list):
        return None
    return next(
        (i for i, (mine, theirs) in enumerate(zip(got, expected, strict=False)) if mine != theirs),
        None,
    )


def _with_hint_swapped(case: Case, expected: Any, got: Any) -> str | None:
    text, vocab_size, pick = case.args
    step = _first_difference(expected, got)
    if step is None:
        return None
    try:
        swapped = _replay_with(text, vocab_size, pick, lambda v, a, b: v[b] + v[a])
    except (KeyError, ValueError, TypeError):
        return None
    if swapped[: step + 1] != got[: step + 1]:
        return None
    return (
        f"merge number {step} is {got[step][0]}, what pick returns when each new token spells "
        "its halves the wrong way round: the token for (a, b) spells vocab[a] + vocab[b], "
        "the first half first."
    )


def _with_hint_own_choice(case: Case, expected: Any, got: Any) -> str | None:
    text, _, pick = case.args
    step = _first_difference(expected, got)
    if step is None:
        return None
    ids = list(text.encode("utf-8"))
    for pair, idx in expected[:step]:
        ids = bpe.merge(ids, pair, idx)
    stats = bpe.get_stats(ids)
    mine = got[step][0]
    if mine not in stats or stats[mine] != max(stats.values()):
        return None
    return (
        f"with pick={pick!r}, merge number {step} must be {expected[step][0]}, the pair pick "
        f"returns, and yours merged {mine}, a most frequent pair of your own choosing: call "
        "pair = pick(stats, vocab) with the current counts and the vocab so far, and merge "
        "what it returns."
    )


def _with_hint_other(case: Case, expected: Any, got: Any) -> str | None:
    step = _first_difference(expected, got)
    if step is None:
        return None
    return (
        f"with pick={case.args[2]!r}, merge number {step} must be {expected[step][0]}, the pair "
        f"pick returns, and yours merged {got[step][0]}: count the pairs of the current "
        "sequence, pass them to pick with the vocab so far (every id to the bytes it spells), "
        "and merge what it returns."
    )
