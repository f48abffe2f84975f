"""Changing and using a split (chapter 04): split_fixed, chunk_counts.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine. The texts and the split
helpers come from :mod:`.pretokenize`, the chapter's first topic.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import regex

from tokcourse import fast_train, patterns
from tokcourse.course.answers import re_module_hint
from tokcourse.course.checks.pretokenize import (
    _GPT2_TEXTS,
    _SCAN_PIECES,
    _SPLIT_PIECES,
    _split_hint_coverage,
    _split_or_none,
)
from tokcourse.course.exercises import BYTES, INT, STR, Case, Entry, Exercise, dict_of, list_of

# --- chunk_counts (what training with a split sees) ----------------------------------------------

_EOT = "<|endoftext|>"
_FIM = "<|fim_middle|>"
_LETTERS_OR_NOT = r"\p{L}+|[^\p{L}]+"  # another split: runs of letters and the rest


def _chunk_counts_cases() -> Iterator[Case]:
    gpt2 = patterns.GPT2_SPLIT_PATTERN
    yield Case(("", gpt2, []))
    yield Case(("hi hi hi", gpt2, []))
    yield Case(("the cat, the hat", gpt2, [_EOT]))  # a special token that never occurs
    yield Case((f"hi hi{_EOT}hi", gpt2, [_EOT]), rule="never counted")
    yield Case((f"a{_EOT}b", gpt2, [_EOT]), rule="no chunk runs across")
    yield Case((f"{_EOT}{_EOT}", gpt2, [_EOT]))
    yield Case((f" x{_EOT} x", gpt2, [_EOT]))
    yield Case((f"x{_FIM}y{_EOT}z y", gpt2, [_EOT, _FIM]))
    yield Case(("a|b <c> x|y", gpt2, [_EOT]))  # the special token's characters, apart
    yield Case(("café naïve 日本 café", gpt2, []))
    yield Case(("Hello, world! Hello.", _LETTERS_OR_NOT, []), rule="with `pattern`")
    rng = random.Random(21)
    pieces = [*_SPLIT_PIECES, _EOT, _EOT, _FIM, "|", "<"]
    for _ in range(60):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9)))
        pattern = rng.choice([gpt2, gpt2, _LETTERS_OR_NOT])
        specials = rng.choice([[], [_EOT], [_EOT, _FIM]])
        yield Case((text, pattern, specials))


def _split_unescaped(text: str, pattern: str, specials: list[str]) -> dict[bytes, int]:
    """The chunks of a student who cut the text with the special tokens as a raw regex."""
    counts: dict[bytes, int] = {}
    for piece in regex.split("|".join(specials), text):
        for chunk in patterns.split(piece, pattern):
            counts[chunk.encode()] = counts.get(chunk.encode(), 0) + 1
    return counts


def _chunk_counts_hint(case: Case, expected: Any, got: Any) -> str | None:
    text, pattern, specials = case.args
    if not isinstance(got, dict):
        return None
    keys = {k.decode("utf-8", "replace") for k in got if isinstance(k, bytes)}
    if any(special in keys for special in specials):
        return (
            "a special token was counted as a chunk: cut it out and drop it; it gets its "
            "own id and is never part of a merge."
        )
    if any(part in keys for part in ("<|", "|>", "endoftext")):
        return (
            "the special tokens were split like ordinary text: cut the text at each special "
            "token first, then split the pieces between them with the pattern."
        )
    if specials and got == dict(_split_unescaped(text, pattern, specials)):
        return (
            "the special tokens were used as a regular expression without escaping: in "
            "'<|endoftext|>' each | means 'or', so the text was cut at every '<' and '>'. "
            "Use regex.escape(special), or find the special tokens with str.find."
        )
    joined = text
    for special in specials:
        joined = joined.replace(special, "")
    if specials and joined != text and got == dict(fast_train.chunk_counts(joined, pattern)):
        return (
            "the pieces around a special token were joined back together, so a chunk runs "
            "across the place where the special token was: split each piece on its own."
        )
    if got == dict(fast_train.chunk_counts(text, patterns.GPT2_SPLIT_PATTERN, specials)):
        return "split with the pattern you are given (`pattern`), not always GPT-2's."
    return None


def _counts_of_chunks(answer: Any) -> Any:
    return dict(answer)


# --- split_fixed (GPT-2's pattern with its contraction bugs fixed) ------------------------------

_FIXED_PIECES = (*_SCAN_PIECES, "DON'T", "WE'LL", "don’t", "I’M", "it’s", "We'Ll", "‘s", "’", "'")


def _split_fixed_cases() -> Iterator[Case]:
    yield Case(("DON'T",), rule="in any case")
    yield Case(("We'Ll",), rule="mixed case")
    yield Case(("don’t",), rule="U+2019")
    yield Case(("‘sup",), rule="not after the opening quote")
    for text in ("I’M HERE", "they’re we’ve it’s", "’tis ’’s", "it's", *_GPT2_TEXTS):
        yield Case((text,))
    rng = random.Random(8)
    for _ in range(120):
        yield Case(("".join(rng.choice(_FIXED_PIECES) for _ in range(rng.randrange(1, 8))),))


def _split_fixed_hint(case: Case, expected: Any, got: Any) -> str | None:
    (text,) = case.args
    gpt2 = patterns.GPT2_SPLIT_PATTERN
    contraction = "'(?:[sdmt]|ll|ve|re)"
    variants = (  # the most specific mistake first
        (
            gpt2.replace(contraction, "['’](?:[sdmtSDMT]|ll|LL|ve|VE|re|RE)"),
            "contractions in mixed case too ('Ll, 'rE): make the group case-insensitive "
            "with (?i:...) instead of listing cases.",
        ),
        (
            gpt2.replace(contraction, "'(?i:[sdmt]|ll|ve|re)"),
            "’ (U+2019) starts a contraction too, not only the ASCII apostrophe '.",
        ),
        (
            gpt2.replace(contraction, "['’](?:[sdmt]|ll|ve|re)"),
            "the case is not fixed: 'T and 'LL are contractions too "
            "(in any case, mixed case included).",
        ),
        (
            gpt2.replace(contraction, "['’‘](?i:[sdmt]|ll|ve|re)"),
            "‘ (U+2018) is an opening quote, not an apostrophe: only ' and ’ start a contraction.",
        ),
    )
    said = [say for pattern, say in variants if got == _split_or_none(text, pattern)]
    if said:
        return said[0]
    if isinstance(got, list) and got == _split_or_none(text, patterns.GPT4_SPLIT_PATTERN):
        return (
            "that is GPT-4's split, which changes more than the contractions (chapter 05): "
            "change only the first alternative of GPT-2's pattern."
        )
    return (
        "only the contractions change: everything else must split exactly as GPT-2's "
        "pattern does. Change only its first alternative."
    )


#: The exercises of this topic, found by :mod:`tokcourse.course.check`.
EXERCISES: dict[str, Entry] = {
    "split_fixed": Entry(
        "split_fixed(text) -> chunks",
        lambda: Exercise(
            "split_fixed",
            patterns.split_fixed,
            _split_fixed_cases,
            normalize=list,
            returns=list_of(STR),
            hints=(re_module_hint, _split_hint_coverage, _split_fixed_hint),
            used_later=False,  # the chapter measures with the package's fixed pattern
        ),
    ),
    "chunk_counts": Entry(
        "chunk_counts(text, pattern, special_tokens) -> {chunk bytes: count}",
        lambda: Exercise(
            "chunk_counts",
            fast_train.chunk_counts,
            _chunk_counts_cases,
            normalize=_counts_of_chunks,
            returns=dict_of(BYTES, INT, "a dict {chunk bytes: count}"),
            hints=(re_module_hint, _chunk_counts_hint),
        ),
    ),
}
