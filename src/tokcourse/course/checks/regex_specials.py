"""Regex splitting and special tokens (split, encode_ordinary, encode_with_specials),
for the chapters on GPT-2/GPT-4 patterns and special tokens.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from typing import Any

from tokcourse import bpe, patterns, special, tokenizer
from tokcourse.course.exercises import (
    INT,
    STR,
    Case,
    Entry,
    Exercise,
    Raised,
    list_of,
)

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


# --- encode_with_specials ----------------------------------------------------------------------

_SPECIALS = {"<|endoftext|>": 300, "<|fim_prefix|>": 301}


def _encode_with_specials_cases() -> Iterator[Case]:
    eot, fim = "<|endoftext|>", "<|fim_prefix|>"
    for text, allowed in (
        ("", frozenset()),
        ("hello", frozenset()),
        ("hi<|endoftext|>", frozenset()),  # user text that spells a special token: refuse
        ("hi<|endoftext|>", frozenset({eot})),
        ("hi<|endoftext|>", "all"),
        ("<|endoftext|><|endoftext|>", "all"),
        ("a<|fim_prefix|>b", frozenset({eot})),  # fim is not allowed: refuse
        ("a<|fim_prefix|>b<|endoftext|>", frozenset({fim, eot})),
        ("<|endoftext", frozenset()),  # not a special token: ordinary text
        ("é<|endoftext|>é", "all"),
    ):
        yield Case((text, dict(_SPECIALS), allowed))
    rng = random.Random(9)
    pieces = ["a", " b", "é", eot, fim, "<|", "|>", "endoftext"]
    allowed_choices = [frozenset(), frozenset({eot}), frozenset({fim}), "all"]
    for _ in range(40):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 6)))
        yield Case((text, dict(_SPECIALS), rng.choice(allowed_choices)))


def _specials_hint_default(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, Raised) and isinstance(got, list):
        return (
            "this text contains a special token that is not allowed. It must raise ValueError "
            "(naming the token), never turn into the special id: otherwise any user can end "
            "the document or fake a chat turn by typing it."
        )
    return None


def _specials_hint_refused_allowed(case: Case, expected: Any, got: Any) -> str | None:
    text, _, allowed = case.args
    if isinstance(got, ValueError) and isinstance(expected, list):
        which = "every special token" if allowed == "all" else f"the tokens in {set(allowed)}"
        return (
            f"allowed_special={allowed!r} allows {which}: encode such a token as its id "
            "instead of refusing it (note that 'all' is a string, not a set of names)."
        )
    return None


def _specials_hint_allowed(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and isinstance(expected, list):
        return (
            'an allowed special token (or any, with allowed_special="all") becomes its own id; '
            "the text around it is encoded as UTF-8 bytes."
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
    "encode_with_specials": Entry(
        "encode_with_specials(text, special_tokens, allowed_special) -> ids",
        lambda: Exercise(
            "encode_with_specials",
            special.encode_with_specials,
            _encode_with_specials_cases,
            normalize=list,
            returns=list_of(INT),
            hints=(_specials_hint_default, _specials_hint_refused_allowed, _specials_hint_allowed),
        ),
    ),
}
