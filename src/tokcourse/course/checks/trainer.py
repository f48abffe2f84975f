"""Chapter 02: the trainer (train) and its tie rule (most_frequent_pair).

``train`` accepts any most frequent pair at each step (``Exercise.accepts``): the check replays
the merges on the text and asks, step by step, that each one is a pair with the highest count
in the current sequence, minting 256, 257, ... ``most_frequent_pair`` is a tie rule of the
learner's design: any pair with the highest count is accepted, and the engine runs every input
again with ``stats`` in another insertion order, which is how a rule that depends on the order
of counting is caught. The reference and the shown solution are the course's rule (CS336's
greatest bytes, then the smaller ids).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tokcourse import bpe
from tokcourse.course import first_steps
from tokcourse.course.exercises import INT, PAIR, Case, Entry, Exercise, dict_of

# --- train -------------------------------------------------------------------------------------


def _times(n: int) -> str:
    return f"{n} time{'s' * (n != 1)}"


#: The rule the train check enforces at every step, in the exercise text's words.
_ANY_TOP = "any of them"


def _train_cases() -> Iterator[Case]:
    yield from (
        Case(("aaabdaaabac", 259), rule=_ANY_TOP),  # step 2 is a tie
        Case(("aaabdaaabac", 256)),
        Case(("ab", 257)),
        # every pair occurs once: each step is a tie, every choice is right
        Case(("abcd", 258), rule=_ANY_TOP),
        Case(("aaaa", 258)),
        Case(("aaaaaxbcbcbc", 258)),  # overlapping runs: aa is counted 4 times, merged twice
        Case(("hello world, hello moon", 265)),
        Case(("😀😀", 260)),
    )
    rng = random.Random(3)
    produced = 0
    while produced < 48:
        # half ASCII, half with characters of two, three and four UTF-8 bytes
        alphabet = "ab cd" if produced % 2 else "ab céд한👋"
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(2, 60)))
        vocab_size = 256 + rng.randrange(1, 12)
        try:
            bpe.train(text, vocab_size)
        except ValueError:  # not enough pairs for that many merges: not a fair question
            continue
        produced += 1
        yield Case((text, vocab_size))


def _as_items(merges: Any) -> list:
    return list(dict(merges).items())


@dataclass(frozen=True)
class _Step:
    """Where a list of merges first breaks the rules of training, and what was there."""

    problem: str  # "id", "not a pair", "absent", "not top", "count"
    step: int = 0  # 0 for the first merge
    pair: Any = None
    count: int = 0  # how often their pair occurred at that step
    top: int = 0  # the highest count at that step
    top_pairs: tuple = ()
    new_id: Any = None


def _first_wrong_step(text: str, vocab_size: int, items: list) -> _Step | None:
    """Replay ``items`` ((pair, id) in order) on the bytes of ``text``; the first broken rule.

    Each id must be 256 + its position, each pair a pair of ids that occurs in the current
    sequence with the highest count there, and there must be vocab_size - 256 of them.
    """
    ids = list(text.encode("utf-8"))
    for step, item in enumerate(items):
        pair, new_id = item
        if new_id != 256 + step:
            return _Step("id", step, pair, new_id=new_id)
        stats = bpe.get_stats(ids)
        if not (isinstance(pair, tuple) and len(pair) == 2):
            return _Step("not a pair", step, pair)
        top = max(stats.values(), default=0)
        tops = tuple(p for p, n in stats.items() if n == top)
        if pair not in stats:
            return _Step("absent", step, pair, 0, top, tops)
        if stats[pair] != top:
            return _Step("not top", step, pair, stats[pair], top, tops)
        ids = bpe.merge(ids, pair, new_id)
    if len(items) != vocab_size - 256:
        return _Step("count", len(items))
    return None


def _valid_training(case: Case, expected: Any, got: Any) -> bool:
    """Any most frequent pair at each step: the merges replay on the text, each a top pair."""
    text, vocab_size = case.args
    return _first_wrong_step(text, vocab_size, got) is None


def _wrong_step(case: Case, got: Any) -> _Step | None:
    if not isinstance(got, list):
        return None
    text, vocab_size = case.args
    return _first_wrong_step(text, vocab_size, got)


def _train_hint_ids(case: Case, expected: Any, got: Any) -> str | None:
    wrong = _wrong_step(case, got)
    if wrong is None or wrong.problem != "id":
        return None
    return (
        f"merge number {wrong.step} (counting from 0) minted the id {wrong.new_id!r}, and it "
        f"must be {256 + wrong.step}: ids 0-255 are the bytes, so merge number i mints 256 + i, "
        "and the merges come in the order they were learned."
    )


def _train_hint_same_pair(case: Case, expected: Any, got: Any) -> str | None:
    _, vocab_size = case.args
    if isinstance(got, list) and got and len(got) < vocab_size - 256 == got[-1][1] - 255:
        return (
            f"only {len(got)} merge(s), the last minting {got[-1][1]}: the same pair was chosen "
            "again and again, and each time the dict entry was overwritten. The sequence never "
            "changed: keep what merge returns, ids = merge(ids, pair, idx)."
        )
    return None


def _train_hint_code_points(case: Case, expected: Any, got: Any) -> str | None:
    text, _ = case.args
    if not isinstance(got, list) or text.isascii():
        return None
    minted = {i for _, i in got}
    if any(x > 255 and x not in minted for pair, _ in got for x in pair):
        return (
            "a merge uses an id above 255 that no merge made, so training did not start from "
            "bytes: begin with list(text.encode('utf-8')), not ord() of each character (a "
            "code point can be far above 255 and would collide with the merge ids)."
        )
    return None


def _code_point_merges(text: str, n: int) -> int | None:
    """How many merges a trainer that starts from code points makes before it runs out of
    pairs (``None`` if it makes all ``n``): what ``ord`` or ``list(text)`` meets."""
    ids: list = [ord(c) for c in text]
    for done in range(n):
        stats = bpe.get_stats(ids)
        if not stats:
            return done
        ids = bpe.merge(ids, max(stats, key=stats.__getitem__), 256 + done)
    return None


def _train_hint_characters(case: Case, expected: Any, got: Any) -> str | None:
    text, vocab_size = case.args
    if not isinstance(got, BaseException) or text.isascii():
        return None
    done = _code_point_merges(text, vocab_size - 256)
    if done is None:
        return None
    return (
        f"{text!r} is {len(text)} characters but {len(text.encode('utf-8'))} UTF-8 bytes. A "
        "trainer that starts from characters (ord(c), or list(text)) runs out of pairs after "
        f"{done} merge(s) here, and yours raised {type(got).__name__}; starting from the bytes "
        "allows all of them. Begin with list(text.encode('utf-8'))."
    )


def _train_hint_count(case: Case, expected: Any, got: Any) -> str | None:
    text, vocab_size = case.args
    wrong = _wrong_step(case, got)
    if wrong is None or wrong.problem != "count":
        return None
    return (
        f"{len(got)} merges instead of {vocab_size - 256}: a vocabulary of {vocab_size} "
        f"tokens is 256 bytes plus vocab_size - 256 = {vocab_size - 256} merges."
    )


def _counted_once(text: str, n: int) -> list:
    """What a trainer that counts the pairs once, before the loop, merges (for the hint)."""
    ids = list(text.encode("utf-8"))
    stats = bpe.get_stats(ids)
    out = []
    for idx in range(256, 256 + n):
        pair = max(stats, key=stats.__getitem__)
        ids = bpe.merge(ids, pair, idx)
        out.append((pair, idx))
        del stats[pair]
    return out


def _train_hint_not_top(case: Case, expected: Any, got: Any) -> str | None:
    wrong = _wrong_step(case, got)
    if wrong is None or wrong.problem not in ("absent", "not top"):
        return None
    text, _ = case.args
    step, pair = wrong.step, wrong.pair
    if step and got[step - 1][0] == pair:
        return (
            f"merge number {step} repeats the pair {pair} of merge number {step - 1}: after a "
            "merge the sequence must change, ids = merge(ids, pair, idx), and the next count "
            "is made on that new sequence."
        )
    seen = f"occurs {_times(wrong.count)}" if wrong.count else "does not occur at all"
    top = ", ".join(map(str, wrong.top_pairs[:3]))
    if step and [p for p, _ in got[: step + 1]] == [p for p, _ in _counted_once(text, step + 1)]:
        return (
            f"merge number {step}, {pair}, was chosen from counts made before the first merge: "
            f"in the current sequence it {seen}, while the most frequent pair ({top}) occurs "
            f"{wrong.top} times. Count the pairs again after every merge (get_stats on the "
            "current ids, inside the loop)."
        )
    return (
        f"merge number {step} is {pair}, which {seen} in the sequence at that step; the most "
        f"frequent pair there occurs {wrong.top} times ({top}). Merge a pair with the highest "
        "count of the current sequence: count, merge, and count again."
    )


# --- most_frequent_pair ------------------------------------------------------------------------

#: The rule the check enforces on a tie, in the exercise text's words: any pair with the highest
#: count is right, as long as the choice does not change with the order of ``stats``.
_ANY_FIXED = "any pair with the highest count"


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
    yield Case(({(97, 98): 1, (98, 99): 1, (99, 100): 1}, byte_vocab), rule=_ANY_FIXED)
    # the first halves are equal
    yield Case(({(97, 98): 3, (97, 99): 3, (97, 97): 3}, byte_vocab), rule=_ANY_FIXED)
    # a tie on the count, not on anything else: the count comes first
    yield Case(({(122, 122): 1, (97, 97): 2, (98, 98): 2}, byte_vocab), rule=_ANY_FIXED)
    # the walk-through's step 2: aa+a against a+b
    toy = _vocab_with(b"aa")
    yield Case(({(256, 97): 2, (97, 98): 2, (98, 100): 1, (100, 256): 1}, toy), rule=_ANY_FIXED)
    # two ids with the same bytes (b"ab" twice)
    twice = _vocab_with(b"ab", b"ab")
    yield Case(({(257, 99): 5, (256, 99): 5, (97, 98): 1}, twice), rule=_ANY_FIXED)
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


def _a_top_pair(case: Case, expected: Any, got: Any) -> bool:
    """Any pair of ``stats`` with the highest count (the order check runs separately)."""
    stats, _ = case.args
    return got in stats and stats[got] == max(stats.values())


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
EXERCISES: dict[str, Entry] = {
    "train": Entry(
        "train(text, vocab_size) -> merges",
        lambda: Exercise(
            "train",
            bpe.train,
            _train_cases,
            normalize=_as_items,
            returns=dict_of(PAIR, INT, "a dict {(a, b): new_id}, in the order learned"),
            accepts=_valid_training,
            solution=first_steps.train,
            hints=(
                _train_hint_code_points,
                _train_hint_characters,
                _train_hint_same_pair,
                _train_hint_ids,
                _train_hint_count,
                _train_hint_not_top,
            ),
        ),
    ),
    "most_frequent_pair": Entry(
        "most_frequent_pair(stats, vocab) -> (a, b)",
        lambda: Exercise(
            "most_frequent_pair",
            bpe.most_frequent_pair,
            _most_frequent_pair_cases,
            normalize=tuple,
            returns=PAIR,
            accepts=_a_top_pair,
            solution=first_steps.most_frequent_pair,
            hints=(_mfp_hint_not_in_stats, _mfp_hint_count_first),
        ),
    ),
}
