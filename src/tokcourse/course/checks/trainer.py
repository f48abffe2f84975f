"""Chapter 02: the trainer (train), its tie rule (most_frequent_pair) and the trainer that a
rule drives (train_with).

``train`` accepts any most frequent pair at each step (``Exercise.accepts``): the check replays
the merges on the text and asks, step by step, that each one is a pair with the highest count
in the current sequence, minting 256, 257, ... ``most_frequent_pair`` is CS336's tie rule (the
lexicographically greater pair, comparing the bytes of the two halves as a tuple) with the
course's extra level (on equal bytes, the smaller ids); the engine also runs every input again
with ``stats`` in another insertion order. ``train_with(text, vocab_size, pick)`` must merge
exactly the pair ``pick(stats, vocab)`` returns at each step. The rules the check passes as
``pick`` never depend on the order of ``stats`` (the text does not say in which order a
``get_stats`` lists its pairs), and one of them does not even take a most frequent pair.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tokcourse import bpe
from tokcourse.course import first_steps
from tokcourse.course.checks._tie_rule import (
    _mfp_hint_count_first,
    _mfp_hint_ids,
    _mfp_hint_joined,
    _mfp_hint_length,
    _mfp_hint_not_in_stats,
    _mfp_hint_same_bytes,
    _mfp_hint_second_first,
    _mfp_hint_separator,
    _mfp_hint_tie,
    _most_frequent_pair_cases,
    _times,
)
from tokcourse.course.checks._train_with import (
    _random_texts,
    _train_with_cases,
    _train_with_reference,
    _with_hint_call,
    _with_hint_ids,
    _with_hint_key_error,
    _with_hint_other,
    _with_hint_own_choice,
    _with_hint_swapped,
)
from tokcourse.course.exercises import INT, PAIR, Case, Entry, Exercise, dict_of

# --- train -------------------------------------------------------------------------------------


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
    for text, vocab_size in _random_texts(3, 48):
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


def _started_from_characters(error: BaseException, vocab_size: int) -> bool:
    """Whether the student's code, where it raised, held a sequence of characters or of code
    points: a list of one-character strings, or of ints above 255 that no merge minted."""
    tb = error.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in frames:
        if "tokcourse" in frame.f_code.co_filename:
            continue
        for value in list(frame.f_locals.values()):
            if isinstance(value, list):
                symbols = value[:1000]
            elif isinstance(value, dict):  # the merges so far, or the counts
                keys = list(value)[:1000]
                symbols = [x for k in keys if isinstance(k, tuple) for x in k]
            else:
                continue
            if any(isinstance(x, str) and len(x) == 1 for x in symbols):
                return True
            if any(isinstance(x, int) and x >= vocab_size for x in symbols):
                return True
    return False


def _train_hint_characters(case: Case, expected: Any, got: Any) -> str | None:
    text, vocab_size = case.args
    if not isinstance(got, BaseException) or text.isascii():
        return None
    done = _code_point_merges(text, vocab_size - 256)
    if done is None or not _started_from_characters(got, vocab_size):
        return None
    return (
        f"{text!r} is {len(text)} characters but {len(text.encode('utf-8'))} UTF-8 bytes. A "
        "trainer that starts from characters (ord(c), or list(text)) runs out of pairs after "
        f"{done} merge(s) here, and yours raised {type(got).__name__}; starting from the bytes "
        "allows all of them. Begin with list(text.encode('utf-8'))."
    )


def _within_words(text: str, n: int) -> tuple[list, bool]:
    """What a trainer that splits the text on spaces and counts pairs within each word merges,
    and whether it ran out of pairs before ``n`` merges (for the hint)."""
    words = [list(w.encode("utf-8")) for w in text.split(" ")]
    out = []
    for idx in range(256, 256 + n):
        stats: dict = {}
        for w in words:
            for pair in zip(w, w[1:], strict=False):
                stats[pair] = stats.get(pair, 0) + 1
        if not stats:
            return out, True
        pair = max(stats, key=stats.__getitem__)
        words = [bpe.merge(w, pair, idx) for w in words]
        out.append((pair, idx))
    return out, False


def _train_hint_words(case: Case, expected: Any, got: Any) -> str | None:
    text, vocab_size = case.args
    if " " not in text or "pick" in case.kwargs:
        return None
    mine, ran_out = _within_words(text, vocab_size - 256)
    wrong = _wrong_step(case, got)
    by_words = (isinstance(got, BaseException) and ran_out) or (
        wrong is not None
        and wrong.problem in ("absent", "not top")
        and [p for p, _ in got[: wrong.step + 1]] == [p for p, _ in mine[: wrong.step + 1]]
    )
    if not by_words:
        return None
    return (
        "your merges are those of a trainer that splits the text on spaces and counts pairs "
        "only within words. Here the text is one sequence: count every pair of neighbours, "
        "the ones with a space too (e.g. e followed by a space), with get_stats on the whole "
        "ids. Splitting into words first is a later chapter's idea (pre-tokenization)."
    )


def _one_too_many(vocab_size: int, last: int) -> str:
    return (
        f"a vocabulary of {vocab_size} tokens holds the ids 0 to {vocab_size - 1}, so the last "
        f"merge mints vocab_size - 1 = {vocab_size - 1}, and yours went on to {last}. "
        "range(256, vocab_size) stops there; range(256, vocab_size + 1) is an off-by-one."
    )


def _train_hint_ran_out(case: Case, expected: Any, got: Any) -> str | None:
    text, vocab_size = case.args
    if not isinstance(got, ValueError) or "empty" not in str(got):
        return None
    try:
        bpe.train(text, vocab_size + 1)
    except ValueError:  # the text allows exactly the merges asked for, not one more
        return (
            f"yours raised {got!r}: it looked for a pair when none was left. {text!r} allows "
            f"exactly the {vocab_size - 256} merge(s) asked for, and yours tried one more: "
            + _one_too_many(vocab_size, vocab_size)
        )
    return None


def _train_hint_count(case: Case, expected: Any, got: Any) -> str | None:
    text, vocab_size = case.args
    wrong = _wrong_step(case, got)
    if wrong is None or wrong.problem != "count":
        return None
    if len(got) == vocab_size - 255:
        return f"{len(got)} merges, one too many: " + _one_too_many(vocab_size, got[-1][1])
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
            f"merge number {step}, {pair}, was chosen from counts of the text before the first "
            f"merge: in the current sequence it {seen}, while the most frequent pair ({top}) "
            f"occurs {wrong.top} times. Either the pairs were counted once, before the loop, or "
            "they were counted again on ids that never changed because what merge returned was "
            "discarded. Count the pairs again after every merge, on the current ids: keep what "
            "merge returns, ids = merge(ids, pair, idx), and call get_stats inside the loop."
        )
    return (
        f"merge number {step} is {pair}, which {seen} in the sequence at that step; the most "
        f"frequent pair there occurs {wrong.top} times ({top}). Merge a pair with the highest "
        "count of the current sequence: count, merge, and count again."
    )


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
                _train_hint_words,
                _train_hint_same_pair,
                _train_hint_ids,
                _train_hint_count,
                _train_hint_ran_out,
                _train_hint_not_top,
            ),
        ),
    ),
    "train_with": Entry(
        "train_with(text, vocab_size, pick) -> merges",
        lambda: Exercise(
            "train_with",
            _train_with_reference,
            _train_with_cases,
            normalize=_as_items,
            returns=dict_of(PAIR, INT, "a dict {(a, b): new_id}, in the order learned"),
            solution=first_steps.train_with,
            hints=(
                _with_hint_call,
                _with_hint_ids,
                _with_hint_key_error,
                _with_hint_swapped,
                _with_hint_own_choice,
                _with_hint_other,
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
            solution=first_steps.most_frequent_pair,
            hints=(
                _mfp_hint_not_in_stats,
                _mfp_hint_count_first,
                _mfp_hint_ids,
                _mfp_hint_same_bytes,
                _mfp_hint_separator,
                _mfp_hint_joined,
                _mfp_hint_second_first,
                _mfp_hint_length,
                _mfp_hint_tie,
            ),
        ),
    ),
}
