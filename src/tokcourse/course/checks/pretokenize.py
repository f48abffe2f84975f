"""Regex pre-tokenization (chapter 04): split.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tokcourse import patterns
from tokcourse.course.exercises import STR, Case, Entry, Exercise, list_of

# --- split (GPT-4's pattern) -------------------------------------------------------------------

_SPLIT_PIECES = [
    "hello",
    " world",
    "I'm",
    "DON'T",
    "you'RE",
    "I’m",
    "'s",
    " 's",
    "12345",
    "7",
    "   ",
    "  ",
    "\n",
    "\n\n",
    "\r\n",
    "\t",
    "!!",
    "$",
    "...",
    "Ünïcödé",
    "안녕",
    "👋",
    "def",
    "():",
    "    return",
    "x",
    "A",
    "_",
    "é",
    "ß",
]


def _split_cases() -> Iterator[Case]:
    for text in (
        "",
        "hello world",
        "I'm here",
        "DON'T",
        "you'RE sure",
        "I’m",
        "12345 and 1234567",
        "a   b",
        "x  ",
        "a\n\n\nb",
        "line\r\nnext",
        "hi  \n  there",
        "def f():\n    return 1\n",
        "안녕하세요 👋 Ünïcödé",
        "$$$ !!! ...",
    ):
        yield Case((text,))
    rng = random.Random(7)
    for _ in range(120):
        yield Case(("".join(rng.choice(_SPLIT_PIECES) for _ in range(rng.randrange(1, 8))),))


def _split_hint_coverage(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and all(isinstance(c, str) for c in got):
        if "".join(got) != case.args[0]:
            return (
                "the chunks must add up to the whole text: regex.findall silently skips "
                "characters that no part of the pattern matches."
            )
    return None


def _split_hint_variants(case: Case, expected: Any, got: Any) -> str | None:
    (text,) = case.args
    gpt4 = patterns.GPT4_SPLIT_PATTERN
    if got == patterns.split(text, gpt4.replace("(?i:", "(?:")):
        return (
            "contractions must match in any case: GPT-4's pattern wraps them in (?i:...), so "
            '"DON\'T" splits as "DON", "\'T" just like "don\'t".'
        )
    if got == patterns.split(text, gpt4.replace(r"\p{N}{1,3}", r"\p{N}+")):
        return (
            'numbers are cut into groups of at most three digits (\\p{N}{1,3}): "12345" is '
            '"123", "45".'
        )
    return None


def _split_hint_gpt2(case: Case, expected: Any, got: Any) -> str | None:
    if got == patterns.split(case.args[0], patterns.GPT2_SPLIT_PATTERN):
        return (
            "that is how GPT-2 splits. GPT-4's pattern makes contractions case-insensitive "
            "((?i:'s|'t|...)), cuts numbers into groups of one to three digits (\\p{N}{1,3}) "
            "and treats newlines differently; take it from tiktoken: "
            "tiktoken.get_encoding('cl100k_base')._pat_str."
        )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "split": Entry(
        "split(text) -> chunks",
        lambda: Exercise(
            "split",
            patterns.split,
            _split_cases,
            normalize=list,
            returns=list_of(STR),
            hints=(_split_hint_coverage, _split_hint_variants, _split_hint_gpt2),
        ),
    ),
}
