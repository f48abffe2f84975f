"""Regex pre-tokenization (chapter 04): whitespace_chunks, scan_gpt2, first_split_difference.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Iterator
from typing import Any

from tokcourse import patterns
from tokcourse.course.answers import _a, re_module_hint
from tokcourse.course.exercises import (
    INT,
    STR,
    Case,
    Entry,
    Exercise,
    Returns,
    list_of,
)

# --- texts for the splits -------------------------------------------------------------------

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


def _split_hint_coverage(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and all(isinstance(c, str) for c in got):
        if "".join(got) != case.args[0]:
            return (
                "the chunks must add up to the whole text: regex.findall silently skips "
                "characters that no part of the pattern matches."
            )
    return None


# --- scan_gpt2 (GPT-2's split without a regex, chapter 04's exercise) ---------------------------

_GPT2_TEXTS = (
    "",
    "hello world",
    "I'm here, you're there",
    "she'll've",
    "DON'T",
    "I’m",
    "'sound 'tis",
    " 's !!'s",
    "1999 and 12345678",
    "1½ Ⅻ! ٣٤ x²",
    "a   b",
    "x  ",
    "a\n\n\nb",
    "  \tindented",
    "hi  \n  there",
    "line\r\nnext",
    "def f():\n    return 1\n",
    "안녕하세요 👋 Ünïcödé",
    "e\u0301t\u00e9",
    "$$$ !!! ... 'quoted'",
    "snake_case x2 3rd",
    "a\u00a0b \u3000c\u2028d\x85e",
    "a\x1cb \x1d\x1e\x1f c",
)
_SCAN_PIECES = (
    *_SPLIT_PIECES,
    "'s",
    "'ll",
    " '",
    "½",
    "Ⅻ",
    "²",
    "\x1c",
    "\x1f",
    "\x85",
    "\u2028",
    "\u3000",
    "\u00a0",
    "e\u0301",
)


def _scan_gpt2_cases() -> Iterator[Case]:
    for text in _GPT2_TEXTS:
        yield Case((text,))
    for text in ("!'s", "a 42", "x 's", "ne\u0301e"):  # each alone: one mistake each
        yield Case((text,))
    rng = random.Random(4)
    for _ in range(150):
        yield Case(("".join(rng.choice(_SCAN_PIECES) for _ in range(rng.randrange(1, 8))),))


def _ascii_letters(pattern: str) -> str:
    """``pattern`` with ASCII letters where it says ``\\p{L}`` (a classic mistake)."""
    return pattern.replace(r"\p{L}++", "[a-zA-Z]++").replace(r"\p{L}\p{N}", r"a-zA-Z\p{N}")


def _isspace(pattern: str) -> str:
    """``pattern`` with ``str.isspace()``'s white space: ``\\s`` plus U+001C to U+001F."""
    return (
        pattern.replace(r"[^\s", r"[^\s\x1c-\x1f")
        .replace(r"(?!\S)", r"(?![^\s\x1c-\x1f])")
        .replace(r"\s++$", r"[\s\x1c-\x1f]++$")
        .replace(r"\s+(", r"[\s\x1c-\x1f]+(")
        .removesuffix(r"|\s")
        + r"|[\s\x1c-\x1f]"
    )


def _decimal_numbers(pattern: str) -> str:
    """``pattern`` with numbers that are decimal digits only (``str.isdecimal``: Nd)."""
    return pattern.replace(r" ?\p{N}++", r" ?\p{Nd}++").replace(r"\p{L}\p{N}]", r"\p{L}\p{Nd}]")


def _split_or_none(text: str, pattern: str) -> list[str] | None:
    try:
        return patterns.split(text, pattern)
    except ValueError:  # the variant skips characters: not what the student did
        return None


def _scan_gpt2_hint_variants(case: Case, expected: Any, got: Any) -> str | None:
    (text,) = case.args
    gpt2 = patterns.GPT2_SPLIT_PATTERN
    variants = (  # (a pattern making this mistake, what to say when the answer matches it)
        (
            _isspace(gpt2),
            "white space is Unicode's White_Space (regex's \\s), not str.isspace(): the "
            "characters U+001C to U+001F are not white space to the pattern, they are 'other' "
            "characters (tokcourse.patterns.WHITE_SPACE holds the 25 that are).",
        ),
        (
            gpt2.replace("'(?:", "'(?i:"),
            'GPT-2\'s contractions are lower case only: "DON\'T" is "DON", "\'", "T" '
            "(case-insensitive contractions are GPT-4's fix).",
        ),
        (
            gpt2.replace(r"\s+(?!\S)|", r"\s+|"),
            "a run of white space before something else leaves its last character to the "
            "next chunk (the lookahead \\s+(?!\\S)): \"a   b\" is 'a', '  ', ' b'.",
        ),
        (
            _ascii_letters(gpt2),
            "letters are Unicode category L, the letters of every script, not a-z and A-Z: "
            'with ASCII letters only, "Ünïcödé" falls apart.',
        ),
        (
            _decimal_numbers(gpt2),
            "numbers are Unicode category N (Nd, Nl and No): '½', 'Ⅻ' and '²' are numbers "
            "too. str.isdecimal() and str.isdigit() miss some; use "
            "unicodedata.category(c).startswith('N').",
        ),
        (
            gpt2.replace("'(?:", "['’](?:"),
            'GPT-2\'s contractions start with the ASCII apostrophe \' only: "I’m" is "I", '
            '"’", "m". The typographic ’ is an \'other\' character.',
        ),
        (
            gpt2.replace(
                r" ?[^\s\p{L}\p{N}]++",
                r" ?[^\s\p{L}\p{N}](?:(?!'(?:[sdmt]|ll|ve|re))[^\s\p{L}\p{N}])*+",
            ),
            "a run of punctuation does not stop before an apostrophe: the contraction "
            'alternative is tried only where a chunk starts, so "!\'s" is "!\'", "s" (the '
            "punctuation run takes the apostrophe along).",
        ),
        (
            gpt2.replace(r" ?\p{N}++", r"\p{N}++"),
            "a space attaches to the front of a number too ( ?\\p{N}++): \"a 42\" is 'a', ' 42'.",
        ),
        (
            gpt2.replace("'(?:[sdmt]|ll|ve|re)", " ?'(?:[sdmt]|ll|ve|re)"),
            "a contraction takes no space in front: \"x 's\" is 'x', \" '\", 's' (the "
            "punctuation alternative takes the space and the apostrophe).",
        ),
        (
            gpt2.replace(r" ?\p{L}++", r" ?[\p{L}\p{M}]++").replace(
                r"[^\s\p{L}\p{N}]", r"[^\s\p{L}\p{M}\p{N}]"
            ),
            "combining marks (category M, such as U+0301) are not letters to the pattern: "
            "they are 'other' characters and cut the word (\"ne\\u0301e\" is 'ne', "
            "'\\u0301', 'e').",
        ),
        (
            patterns.GPT4_SPLIT_PATTERN,
            "that is GPT-4's split (cl100k_base), chapter 05's subject; this exercise is GPT-2's.",
        ),
    )
    said = [say for pattern, say in variants if got == _split_or_none(text, pattern)]
    if len(said) > 1 and said[-1] == variants[-1][1]:
        said = said[:-1]  # a smaller mistake explains the answer better than "GPT-4's split"
    return " Also: ".join(said) or None


def _scan_gpt2_hint_numbers(case: Case, expected: Any, got: Any) -> str | None:
    (text,) = case.args
    if any(unicodedata.category(c)[0] == "N" and not c.isdecimal() for c in text):
        return (
            "this text holds a number character that is not a decimal digit ('½', 'Ⅻ', '²'): "
            "numbers are every Unicode category N, unicodedata.category(c).startswith('N')."
        )
    return None


# --- first_split_difference ----------------------------------------------------------------------


def _optional_int_problem(value: Any) -> str | None:
    if value is None or INT.problem(value) is None:
        return None
    return _a(value)


OPTIONAL_INT = Returns("an int or None", _optional_int_problem)


def _first_difference_cases() -> Iterator[Case]:
    for text in (
        "",
        "hello world",
        "say 12345",
        "1234",
        "123",
        "DON'T",
        "don't",
        "a\n\nb",
        "hi\n",
        "x  \n y",
        "(hello)",
        "$hello",
        "Ünïcödé 안녕",
        "I'M 42",
    ):
        yield Case((text,))
    rng = random.Random(11)
    for _ in range(120):
        yield Case(("".join(rng.choice(_SPLIT_PIECES) for _ in range(rng.randrange(1, 7))),))


def _first_difference_hint(case: Case, expected: Any, got: Any) -> str | None:
    (text,) = case.args
    if expected is None and got is not None:
        return (
            "the two splits are identical here: return None when every chunk boundary is the "
            "same under both patterns."
        )
    if expected is not None and got is None:
        return "the splits differ here, so the answer is a position, not None."
    a = patterns.split(text, patterns.GPT2_SPLIT_PATTERN)
    b = patterns.split(text, patterns.GPT4_SPLIT_PATTERN)
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    if i is None or not isinstance(got, int):
        return None
    start = len("".join(a[:i]))
    if got == i == start:
        return (
            f"{got} is the index of the first differing chunk, and also where the differing "
            "chunks start, a cut both splits make. The first cut they disagree on is where "
            "the shorter of the two chunks ends (a character offset)."
        )
    if got == i:
        return (
            f"{got} is the index of the first differing chunk; the answer is a position in "
            "the text (a character offset)."
        )
    if got == start:
        return (
            f"{got} is where the first differing chunks start, and both splits cut there. "
            "The first cut they disagree on is where the shorter of the two chunks ends."
        )
    if got == len(text[:expected].encode("utf-8")):
        return "that is an offset in UTF-8 bytes; count characters of the str instead."
    if got in (start + len(a[i]), start + len(b[i])):
        return (
            f"{got} is where one of the two differing chunks ends. The first cut the splits "
            "disagree on is the earlier end: where the shorter of the two chunks ends."
        )
    return None


# --- whitespace_chunks ---------------------------------------------------------------------------

_WS = (" ", " ", " ", "\t", "\n", "\r", "\u00a0", "\u3000")
_FOLLOWING = ("", "w", "7", "!", "'", "é", "字")


def _whitespace_cases() -> Iterator[Case]:
    for run, following in (
        (" ", "w"),
        ("  ", "w"),
        ("   ", "w"),
        ("   ", ""),
        (" ", ""),
        ("\n", "w"),
        ("  \n", "w"),
        ("\n ", "w"),
        ("\t", "7"),
        ("\r\n", "!"),
        ("    ", "'"),
        (" \u00a0", "é"),
    ):
        yield Case((run, following))
    rng = random.Random(12)
    for _ in range(100):
        run = "".join(rng.choice(_WS) for _ in range(rng.randrange(1, 6)))
        yield Case((run, rng.choice(_FOLLOWING)))


def _whitespace_hint(case: Case, expected: Any, got: Any) -> str | None:
    run, following = case.args
    if not isinstance(got, list):
        return None
    if "" in got:
        return (
            "an empty chunk: a single space before a word belongs entirely to the word's chunk "
            "(' w'), so nothing of the run is left: return []."
        )
    if not following and got != [run]:
        return (
            "nothing follows the run (following is ''): the whole run is one chunk "
            "(with no non-space after it, \\s+(?!\\S) gives nothing back, and \\s++$ takes the "
            "same run)."
        )
    if following and got == [run] == [*expected, " "]:
        return (
            "the run's last character is left for what follows, and a final plain space "
            "joins the chunk after the run (' w'): it is not a chunk of the run."
        )
    if following and run[-1] == " " and got == [*expected, " "]:
        return (
            "a final plain space joins the chunk after the run (' w', ' 7', ' !'): it is not "
            "a chunk of the run."
        )
    if following and run[-1] != " " and got == expected[:-1]:
        return (
            f"the last character {run[-1]!r} is not a plain space, so ' ?\\p{{L}}' and friends "
            "cannot take it: it becomes a chunk of its own (the \\s alternative)."
        )
    if following and got == [run]:
        return (
            "the run's last character is left for what follows: \\s+(?!\\S) stops one "
            "character before a non-space."
        )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "scan_gpt2": Entry(
        "scan_gpt2(text) -> chunks",
        lambda: Exercise(
            "scan_gpt2",
            patterns.scan_gpt2,
            _scan_gpt2_cases,
            normalize=list,
            returns=list_of(STR),
            hints=(_split_hint_coverage, _scan_gpt2_hint_variants, _scan_gpt2_hint_numbers),
        ),
    ),
    "first_split_difference": Entry(
        "first_split_difference(text) -> position or None",
        lambda: Exercise(
            "first_split_difference",
            patterns.first_split_difference,
            _first_difference_cases,
            returns=OPTIONAL_INT,
            hints=(re_module_hint, _first_difference_hint),
        ),
    ),
    "whitespace_chunks": Entry(
        "whitespace_chunks(run, following) -> chunks",
        lambda: Exercise(
            "whitespace_chunks",
            patterns.whitespace_chunks,
            _whitespace_cases,
            normalize=list,
            returns=list_of(STR),
            hints=(re_module_hint, _whitespace_hint),
        ),
    ),
}
