"""Shared helpers for the tokenizer tests: tiktoken encodings, text strategies, split oracle.

Run sizes:
- ``TOKCOURSE_PARITY_EXAMPLES`` (default 300): Hypothesis strings per encoding in the parity
  tests. ``make test-full`` sets it to 50,000.
- Tests marked ``slow`` (full corpora, every code point) skip themselves unless the run selects
  them explicitly: ``pytest -m slow`` or ``-m "slow or not slow"`` (what ``make test-full`` does).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import pytest
import tiktoken
from hypothesis import strategies as st

from tokcourse.patterns import split
from tokcourse.pretrained import PretrainedTokenizer

ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base"]
PARITY_EXAMPLES = int(os.environ.get("TOKCOURSE_PARITY_EXAMPLES", "300"))


def require_slow(request: pytest.FixtureRequest) -> None:
    """Skip unless ``-m`` mentions ``slow`` (or ``TOKCOURSE_SLOW=1``)."""
    markexpr = request.config.getoption("markexpr", default="") or ""
    if "slow" not in markexpr and os.environ.get("TOKCOURSE_SLOW") != "1":
        pytest.skip('slow: select with -m slow (or -m "slow or not slow")')


@functools.cache
def tiktoken_encoding(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


@functools.cache
def ours(name: str) -> PretrainedTokenizer:
    """Our tokenizer for a tiktoken encoding (shared by tests that only read it)."""
    return PretrainedTokenizer(name)


# ---------------------------------------------------------------------------- text strategies
# Fragments that stress the split patterns, the byte-level BPE and tiktoken's str handling.
APOSTROPHES = ["'", "\u2019", "\u2018", "\u02bc", "\uff07", "`", "\u00b4", "\u2032", "\u02bb"]
CONTRACTION_TAILS = ["s", "t", "d", "m", "ll", "ve", "re", "S", "T", "LL", "Ve", "rE", "\u017f"]
FRAGMENTS = [
    # emoji, ZWJ sequences, skin tones, flags, keycaps, variation selectors
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    "\U0001f3f3\ufe0f\u200d\U0001f308",
    "\U0001f44d\U0001f3fd",
    "\U0001f1ef\U0001f1f5",
    "1\ufe0f\u20e3",
    "\u2764\ufe0f",
    "\U0001f917",
    # combining marks, precomposed vs decomposed
    "e\u0301",
    "\u00e9",
    "a\u0308\u0304",
    "\u0301",
    "\u0915\u094d\u0937",
    "\u0e01\u0e34\u0e48",
    # CJK, kana, Hangul (syllables and jamo)
    "\u6f22\u5b57",
    "\u65e5\u672c\u8a9e\u306e\u6587\u7ae0",
    "\u30ab\u30bf\u30ab\u30ca",
    "\uc548\ub155\ud558\uc138\uc694",
    "\u1100\u1161\u11a8",
    # right-to-left text and bidi controls
    "\u05e9\u05dc\u05d5\u05dd",
    "\u0645\u0631\u062d\u0628\u0627",
    "\u200f",
    "\u202e",
    # control characters, odd spaces, line separators
    "\x00",
    "\x07",
    "\x1b[0m",
    "\x7f",
    "\x85",
    "\x0b",
    "\x0c",
    "\u00a0",
    "\u3000",
    "\u2028",
    "\u2029",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\t",
    "\r\n",
    "\r",
    "\n",
    "\n\n",
    " \r\n ",
    # numbers
    "0123456789",
    "3.14159",
    "1,000,000",
    "\u0661\u0662\u0663",
    "\u2460",
    "\u216b",
    "\u00bd",
    # letters with case quirks
    "HTTPServer",
    "camelCase",
    "XMLHttpRequest",
    "\u01c5",
    "\u1f88",
    "\u212a",
    "\u0130",
    "\u00df",
    "\u0295",
    # code and markup
    "def f(x):\n    return x  # ok\n",
    "    ",
    "<|endoftext|>",
    "<|fim_prefix|>",
    "</s>",
    "{'a': [1, 2]}",
    "//",
    "http://example.com/a/b",
    # characters newer than tiktoken's Unicode 16.0, and one from 16.0
    "\U000323b0",
    "\U00010940",
    "\u1c89",
    "\ufdd0",
    # private use, noncharacters, replacement character, astral letters
    "\ue000",
    "\uffff",
    "\ufffd",
    "\U0001d400",
]
FRAGMENTS += [a + t for a in APOSTROPHES for t in CONTRACTION_TAILS[:6]]
FRAGMENTS += ["DON'T", "I'M", "we'LL", "they\u2019re", "it\u02bcs", "o'clock", "'''", "''s"]

WORDS = st.sampled_from(
    ["the", " the", "The", " THE", "hello", " world", "tokenizer", " don", "n", "t", "s", "ll"]
)
SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", "\ude00"])

piece = st.one_of(
    st.sampled_from(FRAGMENTS),
    WORDS,
    st.sampled_from(APOSTROPHES),
    st.text(alphabet=" \t\n\r\u00a0\u3000\u2009", min_size=1, max_size=24),  # whitespace runs
    st.text(alphabet="0123456789", min_size=1, max_size=12),  # digit runs
    st.text(alphabet="'\u2019sStTdDmMlLvVeErR ", min_size=1, max_size=8),  # contraction soup
    st.characters(codec="utf-8"),  # any code point that UTF-8 can encode
    st.characters(),  # any code point at all, surrogates included
    st.text(max_size=6),
)

valid_text = st.lists(
    piece.filter(lambda s: not any("\ud800" <= c <= "\udfff" for c in s)), max_size=16
).map("".join)
"""Strings without surrogates: decode(encode(s)) must give s back."""

any_text = st.lists(st.one_of(piece, SURROGATES), max_size=16).map("".join)
"""Any Python str, including lone surrogates and surrogate pairs."""


# ---------------------------------------------------------------------------- split oracle
def tiktoken_splits_like_us(pattern: str, texts: list[str]) -> list[str]:
    """Return the texts that tiktoken's own regex engine splits differently from ``split``.

    tiktoken does not expose its chunks, so we make them visible: we build a throwaway
    Encoding whose vocabulary holds the 256 bytes, every chunk our split produces, and every
    pair of neighbouring chunks. tiktoken looks a whole chunk up before running BPE, so if
    its chunks are ours it returns exactly one id per chunk of ours. A finer split cannot give
    those ids (a token never spans two chunks); a coarser one would hit a pair-of-chunks
    token or leave bytes unmerged. So equal ids <=> equal splits.
    """
    ranks = {bytes([b]): b for b in range(256)}
    expected = []
    for text in texts:
        chunks = [c.encode("utf-8") for c in split(text, pattern)]
        for token in chunks + [a + b for a, b in zip(chunks, chunks[1:], strict=False)]:
            ranks.setdefault(token, len(ranks))
        expected.append([ranks[c] for c in chunks])
    enc = tiktoken.Encoding(
        "split-oracle", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
    )
    return [t for t, want in zip(texts, expected, strict=True) if enc.encode_ordinary(t) != want]


# ---------------------------------------------------------------------------- hostile shapes
def hostile_texts(n: int, seed: int = 0) -> dict[str, str]:
    """Texts of about ``n`` characters that make one long chunk, or many chunks hard to cut.

    The shapes of the hostile-input benchmark (``benchmarks/bench_hostile.py``): a run of
    spaces, of one letter, of one emoji, one random a-z word (many distinct merges), newlines
    alone; plus a few relatives (alternating letters, digits, mixed white space, CJK).
    """
    import random

    rng = random.Random(seed)
    return {
        "spaces": " " * n,
        "one letter": "a" * n,
        "one emoji": "\U0001f600" * (n // 4),
        "random word": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n)),
        "newlines": "\n" * n,
        "ab repeated": "ab" * (n // 2),
        "digits": "".join(rng.choice("0123456789") for _ in range(n)),
        "mixed white space": "".join(rng.choice(" \t\n\r\u00a0") for _ in range(n)),
        "spaces then a word": " " * n + "x",
        "CJK": "\u6f22" * (n // 3),
    }


def code_points_that_differ(
    agree: Callable[[str], bool], contexts: list[str], end: str = ""
) -> list[int]:
    """Every code point (surrogates aside) on which ``agree(text)`` fails, ``text`` being the
    code point placed in each of ``contexts`` (format strings with ``{c}``), then ``end``.

    Checked 512 code points at a time; a batch that fails is halved until the culprits are
    single code points, so a clean run costs about 2,200 calls.
    """

    def text(cps: list[int]) -> str:
        return "".join(f.format(c=chr(c)) for c in cps for f in contexts) + end

    bad: list[int] = []

    def check(cps: list[int]) -> None:
        if agree(text(cps)):
            return
        if len(cps) == 1:
            bad.append(cps[0])
            return
        check(cps[: len(cps) // 2])
        check(cps[len(cps) // 2 :])

    cps = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for i in range(0, len(cps), 512):
        check(cps[i : i + 512])
    return bad
