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
_END, _X = "<|end|>", "<|x|>"
_LETTERS_OR_NOT = r"\p{L}+|[^\p{L}]+"  # another split: runs of letters and the rest


def _chunk_counts_cases() -> Iterator[Case]:
    for case in _chunk_counts_inputs():
        yield _TextCase(case.args, case.kwargs, case.rule)


def _chunk_counts_inputs() -> Iterator[Case]:
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
    # one special token starts another: at the same place the longer one is cut out
    yield Case((f"a{_END}{_X}b{_END}c", gpt2, [_END, _END + _X]), rule="the longer one")
    yield Case(("Hello, world! Hello.", _LETTERS_OR_NOT, []), rule="with `pattern`")
    rng = random.Random(21)
    pieces = [*_SPLIT_PIECES, _EOT, _EOT, _FIM, "|", "<", _END, _X]
    for _ in range(60):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9)))
        pattern = rng.choice([gpt2, gpt2, _LETTERS_OR_NOT])
        specials = rng.choice([[], [_EOT], [_EOT, _FIM], [_END, _END + _X]])
        yield Case((text, pattern, specials))


def _split_unescaped(text: str, pattern: str, specials: list[str]) -> dict[bytes, int]:
    """The chunks of a student who cut the text with the special tokens as a raw regex."""
    counts: dict[bytes, int] = {}
    for piece in regex.split("|".join(specials), text):
        for chunk in patterns.split(piece, pattern):
            counts[chunk.encode()] = counts.get(chunk.encode(), 0) + 1
    return counts


def _in_list_order(text: str, pattern: str, specials: list[str]) -> dict[bytes, int]:
    """The chunks of a student who cut at the special tokens in the order of the list, so that
    a shorter one listed first wins over a longer one that starts at the same place."""
    counts: dict[bytes, int] = {}
    found = "(" + "|".join(map(regex.escape, specials)) + ")"
    for piece in regex.split(found, text):
        if piece and piece not in specials:
            for chunk in patterns.split(piece, pattern):
                counts[chunk.encode()] = counts.get(chunk.encode(), 0) + 1
    return counts


def _chunk_counts_hint(case: Case, expected: Any, got: Any) -> str | None:
    text, pattern, specials = case.args
    if not isinstance(got, dict):
        return None
    nested = any(a != b and b.startswith(a) for a in specials for b in specials)
    if nested and got == _in_list_order(text, pattern, specials):
        return (
            "one special token starts another here ('<|end|>' and '<|end|><|x|>'): where two "
            "start at the same place, cut out the longer one, the course's rule (chapter 06). "
            "Try the special tokens longest first."
        )
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
    for stand_in in ("", "\n", " "):
        replaced = text
        for special in specials:
            replaced = replaced.replace(special, stand_in)
        if replaced == text or got != dict(fast_train.chunk_counts(replaced, pattern)):
            continue
        if not stand_in:
            return (
                "the pieces around a special token were joined back together, so a chunk "
                "runs across the place where the special token was: split each piece on its "
                "own."
            )
        return (
            f"each special token was replaced with {stand_in!r}, which then becomes a chunk "
            "or part of one: cut the text at the special "
            "tokens and drop them, with nothing in their place."
        )
    if got == dict(fast_train.chunk_counts(text, patterns.GPT2_SPLIT_PATTERN, specials)):
        return "split with the pattern you are given (`pattern`), not always GPT-2's."
    return None


def _counts_of_chunks(answer: Any) -> Any:
    return dict(answer)


def _chunk_counts_dict(text: str, pattern: str, special_tokens: list[str]) -> dict[bytes, int]:
    """The reference as the exercise asks for it: a plain dict (its report shows a dict)."""
    return dict(fast_train.chunk_counts(text, pattern, special_tokens))


class _TextCase(Case):
    """A chunk_counts input, sized by its text and special tokens: the pattern's length (GPT-2's
    is long, the other one short) must not decide which failing input is the smallest."""

    def size(self) -> int:
        text, _pattern, specials = self.args
        return len(repr(text)) + len(repr(specials))


# --- split_fixed (GPT-2's pattern with its contraction bugs fixed) ------------------------------

_FIXED_PIECES = (
    *_SCAN_PIECES,
    "DON'T",
    "WE'LL",
    "don’t",
    "I’M",
    "it’s",
    "We'Ll",
    "‘s",
    "’",
    "'",
    "'sure",
    "'Red",
    "x",
    "1",
    "\n",
    "!",
)


#: A text of every kind: both apostrophes in all cases, numbers, code, white space, Greek
#: written with combining marks (NFD), other scripts, emoji.
_VARIED_TEXT = (
    "‘DON’T,’ she said. We'Ll SEE—it’s 3.14, isn't it?\n"
    "def f(x):\n    return x  +  1\t# done\r\n"
    "\u1f60\u0313\u0345\u03b4\u03b7\u0301 \u03c4\u03c9\u0345 \u03bb\u03cc\u03b3\u03c9\u0345, "
    "naïve café — l’été 😀 नमस्ते 日本語\u00a0½ Ⅻ\u3000end  "
)


def _split_fixed_cases() -> Iterator[Case]:
    yield Case(("DON'T",), rule="in any case")
    yield Case(("We'Ll",), rule="mixed case")
    yield Case(("don’t",), rule="U+2019")
    yield Case(("‘sup",), rule="not after the opening quote")
    yield Case(("'sure'",), rule="only right after a letter")
    yield Case(("'Red Shirt'",), rule="only right after a letter")
    yield Case(("he said\n'Sure.'",), rule="only right after a letter")
    yield Case(("1'm 90's",), rule="not after a digit")
    yield Case(("x'sure",), rule="not right before a letter")
    yield Case(("O'Donnell O'Malley",), rule="not right before a letter")
    yield Case((" 's !'s",), rule="as GPT-2's pattern splits it")
    # a global (?i) changes the other alternatives too: U+0345 (a combining mark that folds to
    # the letter ι) is then neither a letter nor "other" to the pattern, and findall skips it
    yield Case(("a\u0345b",), rule="every character of the text")
    yield Case((_VARIED_TEXT,), rule="every character of the text")
    for text in ("I’M HERE", "they’re we’ve it’s", "’tis ’’s", "it's", *_GPT2_TEXTS):
        yield Case((text,))
    rng = random.Random(8)
    for _ in range(120):
        yield Case(("".join(rng.choice(_FIXED_PIECES) for _ in range(rng.randrange(1, 8))),))


_AFTER_LETTER = r"(?<=\p{L})"
_NO_LETTER_AFTER = r"(?!\p{L})"
_CONTRACTION = "'(?:[sdmt]|ll|ve|re)"
#: the letter tests around a contraction: both, only the one before, only the one after, none
_CONTEXTS = (
    (_AFTER_LETTER, _NO_LETTER_AFTER),
    (_AFTER_LETTER, ""),
    ("", _NO_LETTER_AFTER),
    ("", ""),
)


def _variant(text: str, contraction: str) -> list[list[str] | None]:
    """GPT-2's chunks of text with this contraction alternative, in each of the four contexts
    of :data:`_CONTEXTS`."""
    gpt2 = patterns.GPT2_SPLIT_PATTERN
    return [
        _split_or_none(text, gpt2.replace(_CONTRACTION, before + contraction + after))
        for before, after in _CONTEXTS
    ]


def _split_fixed_flag_hint(case: Case, expected: Any, got: Any) -> str | None:
    """A global (?i) at the front of the pattern: right on every contraction, but it changes
    the other alternatives too, and findall then skips U+0345."""
    (text,) = case.args
    if not isinstance(got, list):
        return None
    gpt2 = patterns.GPT2_SPLIT_PATTERN
    for before, after in _CONTEXTS:
        fixed = gpt2.replace(_CONTRACTION, before + "['’](?:[sdmt]|ll|ve|re)" + after)
        if got == regex.findall("(?i)" + fixed, text) != _split_or_none(text, fixed):
            return (
                "a global (?i) makes the whole pattern case-insensitive, not only the "
                "contractions: under it U+0345 (a combining mark that folds to the letter ι) "
                "is matched by no alternative, and regex.findall skips it. Scope the flag to "
                "the contraction with (?i:...)."
            )
    return None


def _split_fixed_hint(case: Case, expected: Any, got: Any) -> str | None:
    (text,) = case.args
    right = "['’](?i:[sdmt]|ll|ve|re)"
    gpt2 = patterns.GPT2_SPLIT_PATTERN
    digit = r"(?<=[\p{L}\p{N}])" + right + _NO_LETTER_AFTER
    if got == _split_or_none(text, gpt2.replace(_CONTRACTION, digit)):
        return (
            "only right after a letter: after a digit (1'm, 90's) the apostrophe is no contraction."
        )
    missing = {
        1: "a letter right after the suffix means the apostrophe is no contraction "
        "(x'sure, O'Donnell): ask for no letter after it, for example with a negative "
        "lookahead (?!\\p{L}).",
        2: "an apostrophe that opens a quotation ('sure', 'Red Shirt', at the start of a line) "
        "is cut as a contraction: accept a contraction only right after a letter, for "
        "example with a lookbehind (?<=\\p{L}) in front of it.",
    }
    missing[3] = missing[2]
    variants = (  # the most specific mistake first
        (
            "['’](?:[sdmtSDMT]|ll|LL|ve|VE|re|RE)",
            "contractions in mixed case too ('Ll, 'rE): make the group case-insensitive "
            "with (?i:...) instead of listing cases.",
        ),
        (
            "'(?i:[sdmt]|ll|ve|re)",
            "’ (U+2019) starts a contraction too, not only the ASCII apostrophe '.",
        ),
        (
            "['’](?:[sdmt]|ll|ve|re)",
            "the case is not fixed: 'T and 'LL are contractions too "
            "(in any case, mixed case included).",
        ),
        (
            "['’‘](?i:[sdmt]|ll|ve|re)",
            "‘ (U+2018) is an opening quote, not an apostrophe: only ' and ’ start a contraction.",
        ),
    )
    # the mistakes as made with both letter tests, then a missing test, then mistakes without
    right_ones = _variant(text, right)
    for context in range(len(_CONTEXTS)):
        said = [say for c, say in variants if got == _variant(text, c)[context]]
        if said:  # an input can show two mistakes the same way
            return " Or: ".join(said[:2])
        if context == 0:
            for lacks in (1, 2, 3):
                if got == right_ones[lacks]:
                    return missing[lacks]
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
            hints=(
                re_module_hint,
                _split_fixed_flag_hint,
                _split_hint_coverage,
                _split_fixed_hint,
            ),
        ),
    ),
    "chunk_counts": Entry(
        "chunk_counts(text, pattern, special_tokens) -> {chunk bytes: count}",
        lambda: Exercise(
            "chunk_counts",
            _chunk_counts_dict,
            _chunk_counts_cases,
            normalize=_counts_of_chunks,
            returns=dict_of(BYTES, INT, "a dict {chunk bytes: count}"),
            hints=(re_module_hint, _chunk_counts_hint),
            solution=fast_train.chunk_counts,
        ),
    ),
}
