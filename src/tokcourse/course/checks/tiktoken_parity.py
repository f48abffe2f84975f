"""tiktoken and GPT-4 (chapter 05): encode_ordinary.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from typing import Any

from tokcourse import bpe, patterns, tokenizer
from tokcourse.course.exercises import INT, Case, Entry, Exercise, list_of

# --- encode_ordinary (regex split, then BPE per chunk) -----------------------------------------


@cache
def _cross_chunk_merges() -> dict[tuple[int, int], int]:
    # Trained WITHOUT a split, so it holds merges across word boundaries, such as "e " or ". ".
    return bpe.train("the cat. the dog! the end. the cat sat. the dog ate. " * 3, 280)


# " t", " th", " the", "g.", "e ": the last two cross GPT-4's chunk boundaries
_ACROSS = {(32, 116): 256, (256, 104): 257, (257, 101): 258, (103, 46): 259, (101, 32): 260}


@cache
def _pattern_merges() -> dict[tuple[int, int], int]:
    """Merges where GPT-2's and GPT-4's splits part ways: digit runs, upper-case contractions,
    spaces before a newline. Trained without a split, so they cross every boundary."""
    text = "DON'T 12345 WON'T 2024 I'M 1234567 YOU'RE  \n  x 99999 SHE'LL  \r\n"
    return bpe.train(text * 4, 300)


def _encode_ordinary_cases() -> Iterator[Case]:
    for text in ("the dog.", "a the", "dog. the end"):
        yield Case((text, _ACROSS))
    merges = _cross_chunk_merges()
    for text in ("", "the", "the end", "dog. dog!", "the cat sat. the dog ate."):
        yield Case((text, merges))
    for text in ("12345", "DON'T", "I'M 2024", "x  \n  x", "1234567 YOU'RE"):
        yield Case((text, _pattern_merges()))
    rng = random.Random(8)
    words = ["the", " the", " cat", " dog", ".", "!", " ", "end", " sat", "\n", "12", "'s"]
    words += [" DON'T", "'T", "12345", " 2024", "  \n", "I'M"]
    for i in range(60):
        chosen = merges if i % 2 else _pattern_merges()
        yield Case(("".join(rng.choice(words) for _ in range(rng.randrange(1, 10))), chosen))


def _encode_ordinary_hint_chunks(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if got == tokenizer.encode_ordinary(text, merges, patterns.GPT2_SPLIT_PATTERN):
        return (
            "those are the chunks of GPT-2's pattern. Split with GPT-4's "
            "(tokcourse.patterns.GPT4_SPLIT_PATTERN): numbers in groups of up to three "
            "digits, contractions in any case, whitespace before a newline kept with it."
        )
    if got == bpe.encode(text, merges):
        return (
            "merges were applied across chunk boundaries. Split the text with the pattern "
            "first, encode each chunk on its own, and concatenate the ids."
        )
    if got == [i for word in text.split(" ") for i in bpe.encode(word, merges) + [32]][:-1]:
        return (
            "splitting at spaces loses what the pattern keeps: GPT-4's chunks carry the "
            "space in front of a word (' the'), so merges such as ' t' can apply. Split with "
            "tokcourse.patterns.split(text)."
        )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "encode_ordinary": Entry(
        "encode_ordinary(text, merges) -> ids",
        lambda: Exercise(
            "encode_ordinary",
            tokenizer.encode_ordinary,
            _encode_ordinary_cases,
            normalize=list,
            returns=list_of(INT),
            hints=(_encode_ordinary_hint_chunks,),
        ),
    ),
}
