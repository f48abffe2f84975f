"""The split patterns are tiktoken's, and our split cuts text exactly where tiktoken's does."""

from __future__ import annotations

import pytest
import regex
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse import assets, patterns
from tokcourse.patterns import (
    GPT2_SPLIT_PATTERN,
    GPT4_SPLIT_PATTERN,
    GPT4O_SPLIT_PATTERN,
    SPLIT_PATTERNS,
    compile_pattern,
    split,
)
from tokcourse.unicode_pin import pin_unicode, unassigned_ranges

from ._parity import ENCODINGS, FRAGMENTS, PARITY_EXAMPLES, tiktoken_splits_like_us, valid_text

PATTERN_OF = {
    "r50k_base": GPT2_SPLIT_PATTERN,
    "cl100k_base": GPT4_SPLIT_PATTERN,
    "o200k_base": GPT4O_SPLIT_PATTERN,
}


@pytest.mark.parametrize("name", ENCODINGS)
def test_pattern_string_is_tiktokens(name: str) -> None:
    assert PATTERN_OF[name] == tiktoken.get_encoding(name)._pat_str
    assert SPLIT_PATTERNS[name] == PATTERN_OF[name]


def test_gpt2_encoding_has_the_r50k_pattern() -> None:
    try:
        enc = tiktoken.get_encoding("gpt2")
    except Exception as err:  # not cached yet: run `python -m tokcourse.course.data.assets setup`
        pytest.skip(f"tiktoken 'gpt2' not available offline: {err!r:.80}")
    assert enc._pat_str == SPLIT_PATTERNS["gpt2"]


@pytest.mark.parametrize(
    ("text", "pattern", "chunks"),
    [
        ("Hello world", GPT2_SPLIT_PATTERN, ["Hello", " world"]),
        ("DON'T do it", GPT2_SPLIT_PATTERN, ["DON", "'", "T", " do", " it"]),
        ("DON'T do it", GPT4_SPLIT_PATTERN, ["DON", "'T", " do", " it"]),
        ("don't", GPT4O_SPLIT_PATTERN, ["don't"]),
        ("12345", GPT2_SPLIT_PATTERN, ["12345"]),
        ("12345", GPT4_SPLIT_PATTERN, ["123", "45"]),
        ("a   b", GPT4_SPLIT_PATTERN, ["a", "  ", " b"]),
        ("a  \n\n b", GPT4_SPLIT_PATTERN, ["a", "  \n\n", " b"]),
        ("camelCase HTTPServer", GPT4O_SPLIT_PATTERN, ["camel", "Case", " HTTPServer"]),
        ("it\u2019s", GPT4_SPLIT_PATTERN, ["it", "\u2019s"]),
        ("x  ", GPT4_SPLIT_PATTERN, ["x", "  "]),
    ],
)
def test_known_splits(text: str, pattern: str, chunks: list[str]) -> None:
    assert split(text, pattern) == chunks


@pytest.mark.parametrize("name", ENCODINGS)
def test_fragments_split_like_tiktoken(name: str) -> None:
    texts = FRAGMENTS + ["".join(FRAGMENTS), " ".join(FRAGMENTS), "\n".join(FRAGMENTS)]
    assert tiktoken_splits_like_us(PATTERN_OF[name], texts) == []


@pytest.mark.parametrize("name", ENCODINGS)
def test_generated_strings_split_like_tiktoken(name: str) -> None:
    @settings(max_examples=max(100, PARITY_EXAMPLES // 3), deadline=None)
    @given(st.lists(valid_text, min_size=1, max_size=20))
    def check(texts: list[str]) -> None:
        assert tiktoken_splits_like_us(PATTERN_OF[name], texts) == []

    check()


@pytest.mark.parametrize("name", ENCODINGS)
def test_split_equals_plain_findall_on_tiktoken_pattern(name: str) -> None:
    """Without the Unicode pin, our split is just regex.findall with tiktoken's pattern."""
    text = "".join(f for f in FRAGMENTS if pin_unicode(f) == f)
    pat = tiktoken.get_encoding(name)._pat_str
    assert split(text, PATTERN_OF[name]) == regex.findall(pat, text)


def test_split_never_drops_text() -> None:
    # The corrupted "GPT-4 pattern" from the lecture transcript (see errata.md): no \s part.
    bad = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{2,}"
    with pytest.raises(ValueError, match=r"skips ' ' at position 5"):
        split("hello  world", bad)
    with pytest.raises(ValueError, match="skips '7'"):
        split("hello7", bad)


def test_compile_pattern_errors() -> None:
    with pytest.raises(ValueError, match=r"invalid split pattern '\(unclosed'"):
        compile_pattern("(unclosed")
    with pytest.raises(ValueError, match="empty"):
        compile_pattern("")
    with pytest.raises(TypeError, match="bytes"):
        compile_pattern(rb"\w+")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- Unicode pin
def _members(pattern: str, text: str) -> set[str]:
    """The characters of ``text`` that tiktoken's regex engine matches with ``pattern``.

    tiktoken keeps only what the pattern matches, so with a one-character pattern and a
    vocabulary of the 256 bytes, decode(encode(text)) is exactly the matching characters.
    """
    ranks = {bytes([b]): b for b in range(256)}
    enc = tiktoken.Encoding(
        "class-oracle", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
    )
    return set(enc.decode(enc.encode_ordinary(text)))


GENERAL_CATEGORIES = (
    "Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Co Cn"
).split()


def test_unicode_pin_gives_every_code_point_tiktokens_category() -> None:
    """For all 1,112,064 code points: category per regex-after-pin == category per tiktoken.

    If this fails after upgrading ``regex`` or tiktoken, the table in unicode_pin.py is stale;
    the failure lists the code points to add or remove.
    """
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    pinned = pin_unicode(every)
    assert len(pinned) == len(every)
    wrong = []
    for category in GENERAL_CATEGORIES:
        theirs = _members(rf"\p{{{category}}}", every)
        mine = {every[m.start()] for m in regex.finditer(rf"\p{{{category}}}", pinned)}
        wrong += [f"U+{ord(c):04X} {category}" for c in sorted(theirs ^ mine)]
    assert wrong == [], f"{len(wrong)} code points disagree, first: {wrong[:20]}"


@pytest.mark.parametrize(
    "pattern", [r"\s", r"\p{L}", r"\p{N}", r"(?i:[sdmt]|ll|ve|re)", r"[^\r\n\p{L}\p{N}]"]
)
def test_unicode_pin_pattern_classes(pattern: str) -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    pinned = pin_unicode(every)
    mine = {every[m.start()] for m in regex.finditer(pattern, pinned)}
    assert mine == _members(pattern, every)


def test_unicode_pin_table_is_sorted_and_disjoint() -> None:
    ranges = unassigned_ranges()
    assert all(a <= b for a, b in ranges)
    assert all(b1 < a2 - 1 for (_, b1), (a2, _) in zip(ranges, ranges[1:], strict=False))
    assert sum(b - a + 1 for a, b in ranges) == 17_810


def test_newer_unicode_letter_splits_like_tiktoken() -> None:
    # U+323B0 is a CJK ideograph (Unicode 17.0): a letter to `regex`, unassigned to tiktoken,
    # for which it is like "!": it may lead a word, it cannot be part of one.
    assert split("a\U000323b0b", GPT4_SPLIT_PATTERN) == ["a", "\U000323b0b"]
    assert regex.findall(GPT4_SPLIT_PATTERN, "a\U000323b0b") == ["a\U000323b0b"]


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpora_split_like_tiktoken(name: str) -> None:
    texts = [assets.botchan_text(), assets.stdlib_code(max_bytes=200_000)]
    texts += ["\n".join(messages) for messages in assets.parallel_text().values()]
    assert tiktoken_splits_like_us(PATTERN_OF[name], texts) == []
    pat = tiktoken.get_encoding(name)._pat_str
    for text in texts:  # these corpora hold no character newer than Unicode 16.0
        assert split(text, PATTERN_OF[name]) == regex.findall(pat, text)


def test_patterns_module_has_no_state() -> None:
    assert patterns.__all__  # importing it compiled nothing and read nothing


# ---------------------------------------------------------------------------- trusted patterns
@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("abc", 3),
        ("a{1000}", 1000),
        ("(?:ab){10}", 20),
        ("(?:(?:a{1000}){1000}){1000}|.", 10**9 + 1),
        (r"\p{L}{3}|\x{41}{2}", 5),  # braces after \p and \x are not repeats
        ("[a{1000}]{2}", 2),  # inside a class, braces are literal
        ("(?i)a{5}", 5),  # an inline flag group holds nothing
        ("(?P<x>a){4}|(?<=b)c", 6),
        ("a{,3}b{2,}", 5),
    ],
)
def test_expanded_size(pattern: str, size: int) -> None:
    assert patterns.expanded_size(pattern) == size


def test_known_patterns_are_small_and_known() -> None:
    assert {GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, GPT4O_SPLIT_PATTERN, None} == set(
        patterns.KNOWN_PATTERNS
    )
    for pattern in SPLIT_PATTERNS.values():
        assert patterns.expanded_size(pattern) < 100


def test_timed_pattern_splits_like_the_plain_one_and_stops_on_backtracking() -> None:
    timed = patterns.compile_trusted(r"\w+|\s+|.")
    text = "hello,  world" * 100
    assert split(text, timed) == split(text, r"\w+|\s+|.")
    assert timed.findall(text) == regex.findall(r"\w+|\s+|.", text)
    slow = patterns.TimedPattern(regex.compile("(a|aa)+c|."), seconds=0.05, per_char=0)
    with pytest.raises(TimeoutError, match=r"split pattern '\(a\|aa\)\+c\|\.' took more than"):
        split("a" * 38, slow)
    with pytest.raises(TimeoutError, match=r"on 38 characters"):
        slow.findall("a" * 38)
    assert slow._limit("x" * 10**6) == pytest.approx(0.05)
    assert patterns.TimedPattern(slow.compiled)._limit("x" * 10**6) == pytest.approx(11.0)


# --- chapter 04's exercises: scan_gpt2, first_split_difference, whitespace_chunks ----------------

_SCAN_ALPHABET = st.sampled_from(
    list("aZé字ß_x'’!.(7½Ⅻ²٣😀 \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u2028\u3000\u0301")
    + ["'s", "'S", "'ll", "'re", "’t"]
)


@given(st.lists(_SCAN_ALPHABET, max_size=14).map("".join))
@settings(max_examples=400, deadline=None)
def test_scan_gpt2_is_the_gpt2_split(text: str) -> None:
    assert patterns.scan_gpt2(text) == split(text, GPT2_SPLIT_PATTERN)


def test_scan_gpt2_on_the_corpora() -> None:
    for text in (assets.botchan_text(), assets.python_code(max_bytes=100_000)):
        assert patterns.scan_gpt2(text) == split(text, GPT2_SPLIT_PATTERN)


def test_white_space_is_regex_s() -> None:
    every = (chr(c) for c in range(0x110000))
    assert {c for c in every if regex.match(r"\s", c)} == patterns.WHITE_SPACE
    assert all(chr(c).isspace() and chr(c) not in patterns.WHITE_SPACE for c in range(0x1C, 0x20))


def _ends(chunks: list[str]) -> set[int]:
    return {len("".join(chunks[: i + 1])) for i in range(len(chunks))}


@given(valid_text)
@settings(max_examples=200, deadline=None)
def test_first_split_difference_is_the_first_cut_they_disagree_on(text: str) -> None:
    a, b = split(text, GPT2_SPLIT_PATTERN), split(text, GPT4_SPLIT_PATTERN)
    found = patterns.first_split_difference(text)
    if a == b:
        assert found is None
    else:
        assert found is not None and found in _ends(a) ^ _ends(b)
        # everything before the answer is cut the same way by both
        assert {e for e in _ends(a) if e < found} == {e for e in _ends(b) if e < found}


@pytest.mark.parametrize(
    ("text", "position"),
    [("", None), ("hello world", None), ("say 12345", 4), ("DON'T", 4), ("a\n\nb", 2)],
)
def test_first_split_difference_examples(text: str, position: int | None) -> None:
    assert patterns.first_split_difference(text) == position


def test_first_split_difference_takes_any_two_patterns() -> None:
    assert (
        patterns.first_split_difference("camelCase", GPT4_SPLIT_PATTERN, GPT4O_SPLIT_PATTERN) == 5
    )
    assert patterns.first_split_difference("x", GPT2_SPLIT_PATTERN, GPT2_SPLIT_PATTERN) is None


_WHITE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\u00a0", "\u2009", "\u3000"]
_AFTER = ["", "a", "Z", "7", "!", "'", "é", "字", "_", "👋"]


@given(st.lists(st.sampled_from(_WHITE), min_size=1, max_size=6), st.sampled_from(_AFTER))
@settings(max_examples=300, deadline=None)
def test_whitespace_chunks_are_the_lookahead_chunks(run: list[str], following: str) -> None:
    text = "".join(run)
    chunks = split(text + following, GPT2_SPLIT_PATTERN)
    if following:  # drop the chunk that holds the following character
        assert following in chunks[-1]
        chunks = chunks[:-1]
    assert patterns.whitespace_chunks(text, following) == chunks


@pytest.mark.parametrize(
    ("run", "following"),
    [("", "a"), ("a", ""), (" x", "a"), (" ", "ab"), (" ", " "), (" ", "\n"), (None, "")],
)
def test_whitespace_chunks_refuses_what_is_not_a_run(run, following) -> None:
    with pytest.raises(ValueError, match="run must be|following must be"):
        patterns.whitespace_chunks(run, following)
