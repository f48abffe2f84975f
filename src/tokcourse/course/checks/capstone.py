"""The capstone (chapter 12): merges_to_ranks, recover_merges.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine. The real rank tables are cut
to their first few thousand tokens (a prefix of a BPE rank table is one too), so a check takes
a fraction of a second even for a student's slower code.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from tokcourse import bpe, export, pretrained
from tokcourse.course.answers import BYTES, INT, PAIR, dict_of
from tokcourse.course.checks._rank_tables import _Ranks, _real_ranks
from tokcourse.course.checks.tiktoken_parity import (
    _TINY,
    _TINY_AB_CD,
    _TINY_BC,
    _cross_chunk_merges,
    _pattern_merges,
)
from tokcourse.course.exercises import Case, Entry, Exercise, Names, Raised
from tokcourse.patterns import split

RANKS = dict_of(BYTES, INT, "a dict {token bytes: rank}")
MERGES = dict_of(PAIR, INT, "a dict {(left id, right id): new id}")


# --- merges_to_ranks ---------------------------------------------------------------------------

#: Merge tables that make one byte string twice: no rank table can hold both.
DUPLICATES = (
    {(97, 98): 256, (256, 99): 257, (98, 99): 258, (97, 258): 259},  # abc = ab+c = a+bc
    {(97, 97): 256, (256, 97): 257, (97, 256): 258},  # aaa = aa+a = a+aa
)


def _random_merges(rng: random.Random) -> dict[tuple[int, int], int]:
    alphabet = rng.choice(["ab", "abc", "the cat", "aé日"])
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(8, 40)))
    chunks = split(text)
    for size in range(256 + rng.randrange(1, 15), 256, -1):
        try:
            return bpe.train_on_chunks(chunks, size)
        except ValueError:  # too few pairs for that many merges: ask for fewer
            continue
    return {}


def _merges_to_ranks_cases() -> Iterator[Case]:
    yield Case(({},))
    yield Case(({(97, 97): 256},))
    yield Case(({(97, 97): 256, (256, 97): 257},))
    yield Case(({(104, 105): 300, (300, 33): 301},))  # ids with a gap: the rank is the id
    yield Case(({(195, 169): 256, (99, 97): 257, (257, 102): 258, (258, 256): 259},))  # café
    yield from (Case((merges,), rule="the **same bytes**") for merges in DUPLICATES)
    yield Case((bpe.train("aaabdaaabac", 259),))
    yield Case((_cross_chunk_merges(),))
    yield Case((_pattern_merges(),))
    rng = random.Random(12)
    for _ in range(30):
        yield Case((_random_merges(rng),))


def _duplicate_ids(case: Case) -> list[str]:
    """The two ids whose merges make the same bytes first (in the order of the merges)."""
    (merges,) = case.args
    seen: dict[bytes, int] = {}
    for idx, token in bpe.build_vocab(merges).items():
        if token in seen:
            return [str(seen[token]), str(idx)]
        seen[token] = idx
    return []


def _as_vocab(merges: Mapping) -> dict[int, bytes] | None:
    try:
        return bpe.build_vocab(merges)
    except ValueError:
        return None


def _ranks_bytes_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, dict) and isinstance(got, dict) and len(got) < len(expected):
        if all(bytes([b]) not in got for b in range(256)):
            return (
                "the 256 single bytes are tokens too, with ranks 0..255 (their own values): "
                "tiktoken's table starts with them, then the merged tokens."
            )
    return None


def _ranks_duplicate_hint(case: Case, expected: Any, got: Any) -> str | None:
    if expected == Raised("ValueError") and isinstance(got, dict):
        return (
            "two merges of this table make the same bytes, and a dict keeps one rank per "
            "byte string: one merge would silently vanish. Refuse the table with a "
            "ValueError naming the two ids."
        )
    return None


def _ranks_halves_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, ValueError) and "range(0, 256)" in str(got):
        return (
            "bytes([a, b]) works only for two single bytes; a merge of merged tokens needs "
            "the bytes of each half: vocab[a] + vocab[b], with vocab built as you go."
        )
    (merges,) = case.args
    vocab = _as_vocab(merges)
    if vocab is None or not isinstance(got, dict):
        return None
    swapped = {bytes([b]): b for b in range(256)}
    for (a, b), idx in merges.items():
        swapped[vocab[b] + vocab[a]] = idx
    if got == swapped:
        return "each token is its left half's bytes, then its right half's: vocab[a] + vocab[b]."
    return None


def _ranks_position_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(expected, dict) and isinstance(got, dict)):
        return None
    if sorted(got) == sorted(expected) and sorted(got.values()) != sorted(expected.values()):
        return (
            "the right tokens with the wrong ranks: a token's rank is its id, the value the "
            "merge maps to (ids may have gaps), not its position in the table."
        )
    return None


# --- recover_merges ----------------------------------------------------------------------------


@cache
def _prefix(name: str, n: int) -> _Ranks:
    """The first ``n`` tokens of a real rank table: still a BPE table (ranks only look down)."""
    ranks = _real_ranks(name)
    return _Ranks(f"{name}[:{n}]", {t: r for t, r in ranks.items() if r < n})


#: Rank tables BPE cannot have made: a token no pair of lower-ranked tokens builds.
NOT_BPE = (
    _TINY | {b"abc": 4},  # no 'ab' or 'bc' below it
    {bytes([b]): b for b in range(256)} | {b"bc": 256, b"ab": 257, b"cd": 258, b"abcd": 259},
)


@cache
def _shuffled(name: str, n: int) -> _Ranks:
    """A real table's first ``n`` tokens, listed in a shuffled order (ranks unchanged)."""
    items = list(_prefix(name, n).items())
    random.Random(n).shuffle(items)
    return _Ranks(f"{name}[:{n}], shuffled", dict(items))


def _recover_merges_cases() -> Iterator[Case]:
    yield Case(({b"a": 0, b"b": 1},))
    yield Case((_TINY_BC,))
    yield Case((_TINY_AB_CD,))
    yield from (Case((ranks,)) for ranks in NOT_BPE)
    yield Case((export.merges_to_ranks(bpe.train("aaabdaaabac", 259)),))
    yield Case((export.merges_to_ranks(_pattern_merges()),))
    for name in ("r50k_base", "cl100k_base"):  # real tables: the bytes' ids are permuted
        yield Case((_prefix(name, 600),))
    yield Case((_prefix("cl100k_base", 3000),))
    # tables not listed in rank order (a dict keeps the order it was built in, such as one
    # read from a file sorted by bytes): the merges still come out by rank
    yield Case((dict(reversed(_TINY_BC.items())),), rule="in increasing rank")
    yield Case((dict(sorted(_TINY_AB_CD.items())),), rule="in increasing rank")
    yield Case((_shuffled("r50k_base", 600),))
    rng = random.Random(12)
    for _ in range(20):
        yield Case((export.merges_to_ranks(_random_merges(rng)),))
    for _ in range(5):
        items = list(export.merges_to_ranks(_random_merges(rng)).items())
        rng.shuffle(items)
        yield Case((dict(items),))


def _items(answer: Any) -> Any:
    """Merges compare with their order: it is the order they were learned in."""
    return list(answer.items()) if isinstance(answer, dict) else answer


def _merges_not_bpe_hint(case: Case, expected: Any, got: Any) -> str | None:
    if expected == Raised("ValueError") and isinstance(got, list):
        return (
            "this table is not a BPE merge list: one of its tokens cannot be built from two "
            "lower-ranked tokens. recover_merge raises ValueError for it; let that error "
            "through instead of skipping the token."
        )
    return None


def _merges_single_bytes_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, ValueError) and "single byte" in str(got):
        return (
            "the single-byte tokens are not merges: BPE starts from them. Skip tokens of length 1."
        )
    return None


def _merges_byte_ids_hint(case: Case, expected: Any, got: Any) -> str | None:
    (ranks,) = case.args
    if not (isinstance(expected, list) and isinstance(got, list) and len(got) == len(expected)):
        return None

    def raw(token: bytes) -> int:
        return token[0] if len(token) == 1 else ranks[token]

    pairs = pretrained.merge_pairs(ranks)
    if got == [((raw(a), raw(b)), ranks[a + b]) for a, b in pairs]:
        return (
            "a single byte's id is its rank in the table, not its value: in GPT's tables "
            "b'!' is 0 and b'a' is 64. Look both halves up in ranks, single bytes too."
        )
    return None


def _merges_order_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, list) and isinstance(got, list) and got != expected:
        if sorted(got) == sorted(expected):
            (ranks,) = case.args
            listed = list(ranks.values())
            if listed != sorted(listed):
                return (
                    "the right merges in the wrong order: this table is not listed in rank "
                    "order (a dict keeps the order it was built in), and you kept its order. "
                    "Go through the tokens sorted by rank: sorted(ranks.items(), key=lambda "
                    "item: item[1])."
                )
            return (
                "the right merges in the wrong order: list them by rank (the order BPE "
                "learned them), so that each merge comes after the merges of its halves."
            )
    return None


def _merges_swapped_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(expected, list) and isinstance(got, list) and got != expected):
        return None
    if got == [((b, a), idx) for (a, b), idx in expected]:
        return (
            "each key is (left id, right id): the id of the token's first part, then of its "
            "second, so that ranks[left + right] is the value. Yours has them swapped."
        )
    return None


def _merges_split_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(expected, list) and isinstance(got, list)):
        return None
    if [idx for _, idx in got] == [idx for _, idx in expected]:
        return (
            "some tokens got another pair than BPE's: both halves being tokens is not "
            "enough (b'abc' can be a + bc or ab + c). Use recover_merge on each token: it "
            "replays BPE with the tokens ranked below it."
        )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "merges_to_ranks": Entry(
        "merges_to_ranks(merges) -> {token bytes: rank}",
        lambda: Exercise(
            "merges_to_ranks",
            export.merges_to_ranks,
            _merges_to_ranks_cases,
            returns=RANKS,
            ordered=("merges",),
            names=Names("naming the two ids", _duplicate_ids, "the ids of the two merges"),
            hints=(
                _ranks_duplicate_hint,
                _ranks_bytes_hint,
                _ranks_halves_hint,
                _ranks_position_hint,
            ),
        ),
    ),
    "recover_merges": Entry(
        "recover_merges(ranks) -> {(left id, right id): id}",
        lambda: Exercise(
            "recover_merges",
            pretrained.recover_merges,
            _recover_merges_cases,
            normalize=_items,
            returns=MERGES,
            hints=(
                _merges_not_bpe_hint,
                _merges_single_bytes_hint,
                _merges_byte_ids_hint,
                _merges_order_hint,
                _merges_swapped_hint,
                _merges_split_hint,
            ),
        ),
    ),
}
