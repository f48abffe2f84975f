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

import unicodedata
from collections.abc import Iterator

import regex

from .unicode_pin import pin_unicode

__all__ = [
    "GPT2_FIXED_PATTERN",
    "GPT2_SPLIT_PATTERN",
    "GPT4_SPLIT_PATTERN",
    "GPT4O_SPLIT_PATTERN",
    "KNOWN_PATTERNS",
    "SPLIT_PATTERNS",
    "TimedPattern",
    "compile_pattern",
    "compile_trusted",
    "expanded_size",
    "WHITE_SPACE",
    "first_split_difference",
    "scan_gpt2",
    "split",
    "split_fixed",
    "whitespace_chunks",
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
"""GPT-2's split pattern: the pattern of tiktoken's ``gpt2`` and ``r50k_base`` encodings.

Known bugs it keeps on purpose: only the ASCII apostrophe starts a contraction, and only in
lower case (``"DON'T"`` splits into ``DON``, ``'``, ``T``).
"""

GPT2_FIXED_PATTERN = GPT2_SPLIT_PATTERN.replace(
    "'(?:[sdmt]|ll|ve|re)", r"(?<=\p{L})(?:'|’)(?i:[sdmt]|ll|ve|re)(?!\p{L})"
)
"""GPT-2's pattern with its contraction bugs fixed: contractions in any case, after the ASCII
apostrophe ' or the typographic ’ (U+2019), only right after a letter and not before one, so
that neither ``'sure'`` nor ``O'Donnell`` is cut as one. Chapter 04's exercise.
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


KNOWN_PATTERNS: frozenset[str | None] = frozenset(
    {GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, GPT4O_SPLIT_PATTERN, None}
)
"""The patterns a ``.model`` file may name without being trusted (``None``: no split).

Their matching time is linear (possessive quantifiers, no nested repeats), so loading them is
safe. Any other pattern is code a file asks us to run: see ``compile_trusted``.
"""


# The book shows some of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.
# fmt: off
def compile_pattern(pattern: str) -> regex.Pattern:
    """Compile a split pattern, or raise an error that names it.

    >>> compile_pattern(r"\\p{L}+|\\s+").findall("hi there")
    ['hi', ' ', 'there']
    """
    if not isinstance(pattern, str):
        raise TypeError(
            "a split pattern must be a str, "
            f"got {type(pattern).__name__}: {pattern!r}"
        )
    if pattern == "":
        raise ValueError(
            "the split pattern is empty; use None (BasicTokenizer) "
            "for 'no split'"
        )
    try:
        return regex.compile(pattern)
    except regex.error as err:
        raise ValueError(
            f"invalid split pattern {pattern!r:.200}: {err}"
        ) from None
    except RecursionError:
        raise ValueError(
            f"split pattern {pattern!r:.80} is nested too deeply to compile"
        ) from None
# fmt: on


MAX_TRUSTED_SIZE = 100_000
"""The most pattern elements a trusted pattern may expand to (see ``expanded_size``)."""


def expanded_size(pattern: str) -> int:
    """An upper bound on the elements the regex compiler makes of ``pattern``, without compiling.

    Subtle: the compiler copies a counted repeat ``x{1000}`` 1000 times, so nesting three of
    them (``(?:(?:a{1000}){1000}){1000}``, 27 characters) asks for 10**9 copies: gigabytes
    before any text is matched. We walk the pattern once: every atom counts 1, a group counts
    its contents, and ``{m,n}`` multiplies the atom before it by its larger bound.

    >>> expanded_size("ab")
    2
    >>> expanded_size("(?:(?:a{1000}){1000}){1000}")
    1000000000
    """
    totals, last = [0], 0  # totals: size of each open group; last: size of the previous atom
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "(":
            totals.append(0)
            last, i = 0, i + 1
            if pattern[i : i + 1] == "?":  # (?:  (?i:  (?=  (?<!  (?P<name>  (?i)
                while i < n and pattern[i] not in ":=!>)":
                    i += 1
                i += pattern[i : i + 1] != ")"
            continue
        if c == ")" and len(totals) > 1:
            last = totals.pop()
            totals[-1] += last
            i += 1
            continue
        if c == "{":
            bounds = regex.match(r"\{(\d{0,12})(?:,(\d{0,12}))?\}", pattern[i:])
            if bounds and any(bounds.groups()):
                times = max(int(b) for b in bounds.groups() if b)
                totals[-1] += last * (times - 1) if times else -last
                last *= times
                i += bounds.end()
                continue
        if c == "\\":
            i += 2
            if i < n and pattern[i - 1] in "pPNxuUgk" and pattern[i] == "{":
                close = pattern.find("}", i)
                i = n if close < 0 else close + 1  # \p{L}, \x{41}: braces, not a repeat
        elif c == "[":
            i += 2 if pattern[i + 1 : i + 2] == "]" else 1  # "[]...]": a first ] is literal
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
        elif c in "?*+|^$":  # quantifiers and anchors copy nothing
            i += 1
            continue
        else:
            i += 1
        last = 1
        totals[-1] += 1
    return sum(totals)


class TimedPattern:
    """A compiled split pattern whose every match runs with a time limit.

    For patterns we did not write (a trusted ``.model`` file's): a pattern with nested
    repeats such as ``(a|aa)+c`` can take exponential time on a short text. The limit is
    ``seconds + per_char * len(text)`` per call, generous for any sane pattern (ours match
    millions of characters a second). Exceeding it raises ``TimeoutError`` naming the pattern.

    >>> TimedPattern(regex.compile(r"\\w+|\\W")).findall("hi there")
    ['hi', ' ', 'there']
    """

    def __init__(self, compiled: regex.Pattern, seconds: float = 1.0, per_char: float = 1e-5):
        self.compiled, self.seconds, self.per_char = compiled, seconds, per_char
        self.pattern, self.groups = compiled.pattern, compiled.groups

    def _limit(self, text: str) -> float:
        return self.seconds + self.per_char * len(text)

    def _timed_out(self, text: str) -> TimeoutError:
        return TimeoutError(
            f"split pattern {self.pattern!r:.200} took more than {self._limit(text):.2f} s on "
            f"{len(text):,} characters and was stopped: it backtracks catastrophically on this "
            "text. Use one of the package's patterns (tokcourse.patterns) or fix the pattern."
        )

    def findall(self, text: str) -> list:
        try:
            return self.compiled.findall(text, timeout=self._limit(text))
        except TimeoutError:
            raise self._timed_out(text) from None

    def finditer(self, text: str) -> Iterator[regex.Match]:
        try:
            yield from self.compiled.finditer(text, timeout=self._limit(text))
        except TimeoutError:
            raise self._timed_out(text) from None


def compile_trusted(pattern: str) -> TimedPattern:
    """Compile a pattern from a file the caller trusts: bounded size, time-limited matching.

    >>> compile_trusted("(?:(?:a{1000}){1000}){1000}|.")
    Traceback (most recent call last):
    ...
    ValueError: split pattern '(?:(?:a{1000}){1000}){1000}|.' would expand to 1,000,000,001 \
elements when compiled (at most 100,000); refused even from a trusted file
    """
    if isinstance(pattern, str) and expanded_size(pattern) > MAX_TRUSTED_SIZE:
        raise ValueError(
            f"split pattern {pattern!r:.200} would expand to {expanded_size(pattern):,} "
            f"elements when compiled (at most {MAX_TRUSTED_SIZE:,}); refused even from a "
            "trusted file"
        )
    return TimedPattern(compile_pattern(pattern))


# fmt: off
def split(
    text: str,
    pattern: str | regex.Pattern | TimedPattern = GPT4_SPLIT_PATTERN,
) -> list[str]:
    """Cut ``text`` into the chunks that BPE will see, exactly as tiktoken
    would.

    Two subtleties. First, ``regex.findall`` silently skips characters that
    no part of the pattern matches, and a tokenizer built on such a pattern
    would silently drop text (a corrupted GPT-4 pattern that circulates
    online does exactly that); so we require the chunks to tile the text.
    Second, what counts as a letter depends on the Unicode version; we
    match with tiktoken's (see ``unicode_pin.py``) and cut the original
    text.

    >>> split("I'm 12345 years old")
    ['I', "'m", ' ', '123', '45', ' years', ' old']
    >>> split("DON'T", GPT2_SPLIT_PATTERN)
    ['DON', "'", 'T']
    """
    if not isinstance(text, str):
        raise TypeError(
            f"text must be a str, got {type(text).__name__}: {text!r:.80}"
        )
    compiled = (
        compile_pattern(pattern) if isinstance(pattern, str) else pattern
    )
    chunks = []
    end = 0
    for match in compiled.finditer(pin_unicode(text)):
        start = match.start()
        if start != end:
            raise ValueError(
                f"split pattern {compiled.pattern!r} skips "
                f"{text[end:start]!r} at position {end} of the text; "
                "a split pattern must match every character"
            )
        if match.end() > start:  # an empty match contributes nothing
            chunks.append(text[start : match.end()])
        end = match.end()
    if end != len(text):
        raise ValueError(
            f"split pattern {compiled.pattern!r} skips {text[end:]!r:.40} "
            f"at position {end} of the text; a split pattern must match "
            "every character"
        )
    return chunks
# fmt: on


WHITE_SPACE: frozenset[str] = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(map(chr, range(0x2000, 0x200B)))
)
"""The 25 characters of Unicode's White_Space property: what ``\\s`` matches in ``regex``.

Not ``str.isspace()``, which also says yes to U+001C to U+001F (the information separators);
so does ``\\s`` in Python's ``re``. To ``regex`` and tiktoken those four are not white space.
"""


def _kind(c: str) -> str:
    """The kind of ``c``: ``" "`` white space, ``"L"`` letter, ``"N"``
    number, ``"P"`` other."""
    if c in WHITE_SPACE:
        return " "
    category = unicodedata.category(c)[0]
    return category if category in "LN" else "P"


# fmt: off
def scan_gpt2(text: str) -> list[str]:
    """GPT-2's split written as a scanner, without a regular expression.

    At each position, the pattern's alternatives in order: a lower-case
    ASCII contraction; else an optional space and a run of letters, of
    numbers or of other characters (never white space); else white space:
    the whole run at the end of the text, otherwise the run minus its last
    character, which the next chunk may take (the lookahead
    ``\\s+(?!\\S)``). Letters and numbers are Unicode categories L and N;
    the same as ``split(text, GPT2_SPLIT_PATTERN)`` wherever Python's
    Unicode tables agree with tiktoken's (16.0).

    >>> scan_gpt2("I'm   here, DON'T!")
    ['I', "'m", '  ', ' here', ',', ' DON', "'", 'T', '!']
    """
    if not isinstance(text, str):
        raise TypeError(
            f"text must be a str, got {type(text).__name__}: {text!r:.80}"
        )
    kinds = [_kind(c) for c in text]
    chunks, i, n = [], 0, len(text)
    while i < n:
        end = None
        # 1. a contraction: 's 'd 'm 't 'll 've 're, lower case only
        if text[i] == "'":
            for ending in ("s", "d", "m", "t", "ll", "ve", "re"):
                if text.startswith(ending, i + 1):
                    end = i + 1 + len(ending)
                    break
        # 2.-4. " ?" then a run of letters, numbers or other characters
        if end is None:
            first = i + (text[i] == " " and i + 1 < n and kinds[i + 1] != " ")
            end = first + 1
            while end < n and kinds[end] == kinds[first]:
                end += 1
            # 5.-7. white space before something else: the last character
            # is left to the next chunk
            if kinds[first] == " " and end < n:
                end = max(i + 1, end - 1)
        chunks.append(text[i:end])
        i = end
    return chunks
# fmt: on


def first_split_difference(
    text: str,
    pattern_a: str = GPT2_SPLIT_PATTERN,
    pattern_b: str = GPT4_SPLIT_PATTERN,
) -> int | None:
    """The first position where two patterns cut ``text`` differently, or
    ``None``.

    A split is the set of positions (character offsets) where its chunks
    end. The answer is the smallest offset that ends a chunk under one
    pattern and not under the other, i.e. where the two chunk lists first
    part ways. GPT-2's and GPT-4's patterns by default.

    >>> # GPT-2: ' 12345'; GPT-4: ' ', '123', '45'
    >>> first_split_difference("say 12345")
    4
    >>> first_split_difference("hello world") is None
    True
    """
    ends = []
    for pattern in (pattern_a, pattern_b):
        cuts, offset = set(), 0
        for chunk in split(text, pattern):
            offset += len(chunk)
            cuts.add(offset)
        ends.append(cuts)
    differ = ends[0] ^ ends[1]
    return min(differ) if differ else None


# fmt: off
def whitespace_chunks(run: str, following: str = "") -> list[str]:
    """The chunks GPT-2's pattern makes of a run of white space, computed
    without a lookahead.

    ``run`` is one or more white-space characters; ``following`` is the
    character after it, which is not white space (``""`` when the run ends
    the text). Subtle: ``\\s+(?!\\S)`` matches the run minus its last
    character, which is left for the next chunk; the word, number or
    punctuation alternatives take it only if it is a plain space
    (`` ?``), so any other last character (a newline, a tab) becomes a
    chunk of its own (``\\s``). A run that ends the text stays whole:
    no non-space follows it (``\\s++$`` takes it, and
    ``\\s+(?!\\S)`` would take the same run).

    >>> # the third space goes with the word: ' w'
    >>> whitespace_chunks("   ", "w")
    ['  ']
    >>> whitespace_chunks("  \\n", "w")
    ['  ', '\\n']
    >>> whitespace_chunks("   ")
    ['   ']
    """
    if not isinstance(run, str) or not regex.fullmatch(r"\s+", run):
        raise ValueError(
            "run must be one or more white-space characters, "
            f"got {run!r:.60}"
        )
    if (
        not isinstance(following, str)
        or len(following) > 1
        or regex.match(r"\s", following)
    ):
        raise ValueError(
            "following must be one character that is not white space, "
            f"or '', got {following!r:.60}"
        )
    if not following:
        # nothing follows, so the lookahead gives nothing back: whole run
        return [run]
    body, last = run[:-1], run[-1]
    chunks = [body] if body else []  # \s+(?!\S): all but the last character
    if last != " ":
        # only a plain space can join the next chunk; the rest is \s
        chunks.append(last)
    return chunks
# fmt: on


# fmt: off
def split_fixed(text: str) -> list[str]:
    """GPT-2's chunks of ``text``, with contractions in any case after '
    or ’ (U+2019), between a letter and a non-letter; the rest as GPT-2's.

    >>> split_fixed("DON’T")
    ['DON', '’T']
    >>> split_fixed("'sure' O'Donnell")
    ["'", 'sure', "'", ' O', "'", 'Donnell']
    """
    # (?<=\p{L}) a letter before, (?!\p{L}) no letter after: an opening
    # quote or a name is no contraction. (?:'|’) takes either apostrophe;
    # (?i:...) ignores case inside the group only
    fixed = GPT2_SPLIT_PATTERN.replace(
        "'(?:[sdmt]|ll|ve|re)",
        r"(?<=\p{L})(?:'|’)(?i:[sdmt]|ll|ve|re)(?!\p{L})",
    )
    return split(text, fixed)
# fmt: on
