"""Split patterns: how GPT-2, GPT-4 and GPT-4o cut text into chunks before BPE.

BPE never merges across a chunk boundary, so the split pattern decides which tokens can exist
at all (no token of GPT-2 holds a letter and a digit, because letters and digits are never in
the same chunk). Each pattern is built from commented parts and joined with ``|``; the regex
engine tries the parts left to right at every position and takes the first that matches.

The three strings are *exactly* ``tiktoken.get_encoding(name)._pat_str`` for tiktoken 0.14
(``tests/test_patterns.py`` checks the strings and the splits they produce).

>>> split("Hello world!!  123456")
['Hello', ' world', '!!', ' ', ' ', '123', '456']
"""

from __future__ import annotations

import regex

from .unicode_pin import pin_unicode

__all__ = [
    "GPT2_SPLIT_PATTERN",
    "GPT4_SPLIT_PATTERN",
    "GPT4O_SPLIT_PATTERN",
    "SPLIT_PATTERNS",
    "compile_pattern",
    "split",
]

# Notation used below (all from the `regex` module, which knows Unicode properties):
#   \p{L} any letter, \p{N} any digit or number, \s any Unicode white space,
#   x++ / x?+ / x{1,3}+  "possessive": take as much as possible and never give any back.
# Possessive quantifiers change no split here; tiktoken adds them so that its Rust regex
# engine never backtracks (speed). We keep them so our strings are tiktoken's, byte for byte.

_GPT2_PARTS = [
    r"'(?:[sdmt]|ll|ve|re)",  # contractions 's 'd 'm 't 'll 've 're: lower case, ASCII ' only
    r" ?\p{L}++",  # a word, with at most one space glued to its front
    r" ?\p{N}++",  # a number of any length (GPT-2 has tokens for long digit strings)
    r" ?[^\s\p{L}\p{N}]++",  # a run of punctuation/symbols, optionally after one space
    r"\s++$",  # white space that runs to the end of the text
    r"\s+(?!\S)",  # a run of white space, minus the last space if a word follows
    r"\s",  # any single white space left over (e.g. the space before a word)
]
GPT2_SPLIT_PATTERN = "|".join(_GPT2_PARTS)
"""GPT-2's split pattern (tiktoken ``gpt2`` / ``r50k_base``).

Known bugs it keeps on purpose: only the ASCII apostrophe starts a contraction, and only in
lower case (``"DON'T"`` splits into ``DON``, ``'``, ``T``).
"""

_GPT4_PARTS = [
    r"'(?i:[sdmt]|ll|ve|re)",  # contractions, now in any case: 's 'S 'Ll ...
    r"[^\r\n\p{L}\p{N}]?+\p{L}++",  # a word, after at most one non-letter (space, '(' ...)
    r"\p{N}{1,3}+",  # numbers in groups of 1 to 3 digits: 12345 -> 123 45
    r" ?[^\s\p{L}\p{N}]++[\r\n]*+",  # punctuation run (+ optional space before, newlines after)
    r"\s++$",  # white space that runs to the end of the text
    r"\s*[\r\n]",  # white space up to and including a line break
    r"\s+(?!\S)",  # a run of white space, minus the last space if a word follows
    r"\s",  # any single white space left over
]
GPT4_SPLIT_PATTERN = "|".join(_GPT4_PARTS)
"""GPT-4's split pattern (tiktoken ``cl100k_base``)."""

# GPT-4o splits words at case changes ("camelCase" -> "camel", "Case"). A word is an optional
# run of "upper" letters followed by "lower" letters, or the other way round. Letters without
# case (Lm modifier letters, Lo e.g. CJK) and combining marks (M) count as both.
_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_CONTRACTION = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?"  # now glued to the word: "don't" -> "don't"
_PREFIX = r"[^\r\n\p{L}\p{N}]?"  # at most one non-letter, non-digit, non-newline in front

_GPT4O_PARTS = [
    _PREFIX + _UPPER + "*" + _LOWER + "+" + _CONTRACTION,  # "Hello", "hello", " don't"
    _PREFIX + _UPPER + "+" + _LOWER + "*" + _CONTRACTION,  # "HELLO", "HTTPServer" -> "HTTPS"...
    r"\p{N}{1,3}",  # numbers in groups of 1 to 3 digits
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",  # punctuation run, may take trailing newlines and slashes
    r"\s*[\r\n]+",  # white space up to and including a run of line breaks
    r"\s+(?!\S)",  # a run of white space, minus the last space if a word follows
    r"\s+",  # any white space left over
]
GPT4O_SPLIT_PATTERN = "|".join(_GPT4O_PARTS)
"""GPT-4o's split pattern (tiktoken ``o200k_base``)."""

SPLIT_PATTERNS: dict[str, str] = {
    "gpt2": GPT2_SPLIT_PATTERN,
    "r50k_base": GPT2_SPLIT_PATTERN,
    "cl100k_base": GPT4_SPLIT_PATTERN,
    "o200k_base": GPT4O_SPLIT_PATTERN,
}
"""The split pattern of each tiktoken encoding we reproduce, by tiktoken's name."""


def compile_pattern(pattern: str) -> regex.Pattern:
    """Compile a split pattern, or raise an error that names it.

    >>> compile_pattern(r"\\p{L}+|\\s+").findall("hi there")
    ['hi', ' ', 'there']
    """
    if not isinstance(pattern, str):
        raise TypeError(f"a split pattern must be a str, got {type(pattern).__name__}: {pattern!r}")
    if pattern == "":
        raise ValueError("the split pattern is empty; use None (BasicTokenizer) for 'no split'")
    try:
        return regex.compile(pattern)
    except regex.error as err:
        raise ValueError(f"invalid split pattern {pattern!r}: {err}") from None


def split(text: str, pattern: str | regex.Pattern = GPT4_SPLIT_PATTERN) -> list[str]:
    """Cut ``text`` into the chunks that BPE will see, exactly as tiktoken would.

    Two subtleties. First, ``regex.findall`` silently skips characters that no part of the
    pattern matches, and a tokenizer built on such a pattern would silently drop text (a
    corrupted GPT-4 pattern that circulates online does exactly that); so we require the
    chunks to tile the text. Second, what counts as a letter depends on the Unicode version;
    we match with tiktoken's (see ``unicode_pin.py``) and cut the original text.

    >>> split("I'm 12345 years old")
    ['I', "'m", ' ', '123', '45', ' years', ' old']
    >>> split("DON'T", GPT2_SPLIT_PATTERN)
    ['DON', "'", 'T']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
    compiled = compile_pattern(pattern) if isinstance(pattern, str) else pattern
    chunks = []
    end = 0
    for match in compiled.finditer(pin_unicode(text)):
        start = match.start()
        if start != end:
            raise ValueError(
                f"split pattern {compiled.pattern!r} skips {text[end:start]!r} at position "
                f"{end} of the text; a split pattern must match every character"
            )
        if match.end() > start:  # an empty match contributes nothing
            chunks.append(text[start : match.end()])
        end = match.end()
    if end != len(text):
        raise ValueError(
            f"split pattern {compiled.pattern!r} skips {text[end:]!r:.40} at position {end} of "
            "the text; a split pattern must match every character"
        )
    return chunks
