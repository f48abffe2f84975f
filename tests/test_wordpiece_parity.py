"""Our WordPiece gives Hugging Face ``tokenizers``' exact tokens and ids on BERT's vocabulary.

The reference is all-MiniLM-L6-v2's tokenizer (BERT uncased: ``BertNormalizer`` with
lower-casing, ``BertPreTokenizer``, WordPiece over the 30,522-entry ``vocab.txt``), loaded two
ways that must agree: from its ``tokenizer.json`` and as ``BertWordPieceTokenizer`` built from
``vocab.txt``. No ``[CLS]``/``[SEP]`` are added (``add_special_tokens=False``).

Default run: botchan line by line, the Python sources, every message of the 66 Sphinx
catalogues, hand-picked edge cases, a seeded fuzz and a couple of hundred Hypothesis strings.
Big run (``make test-full``): ``TOKCOURSE_PARITY_EXAMPLES`` Hypothesis strings and every code
point, alone and between letters:

    TOKCOURSE_PARITY_EXAMPLES=50000 pytest tests/test_wordpiece_parity.py -m "slow or not slow"
"""

from __future__ import annotations

import functools
import random
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import BertWordPieceTokenizer, Tokenizer

from tokcourse import assets
from tokcourse.course.data import corpora
from tokcourse.wordpiece import WordPiece, normalize, pre_tokenize, strip_accents

from ._parity import FRAGMENTS, PARITY_EXAMPLES, code_points_that_differ, require_slow


@functools.cache
def from_json() -> Tokenizer:
    tok = Tokenizer.from_file(str(corpora.minilm_tokenizer_json_path()))
    tok.no_padding()  # the file pads and truncates to 128 tokens: we compare whole encodings
    tok.no_truncation()
    return tok


@functools.cache
def from_vocab() -> BertWordPieceTokenizer:
    return BertWordPieceTokenizer(str(corpora.minilm_vocab_path()), lowercase=True)


@functools.cache
def ours() -> WordPiece:
    return WordPiece.from_file(corpora.minilm_vocab_path())


def theirs(texts: list[str]) -> list[list[int]]:
    """HF's ids for each text, from tokenizer.json; asserts vocab.txt's tokenizer agrees."""
    a = [e.ids for e in from_json().encode_batch(texts, add_special_tokens=False)]
    b = [e.ids for e in from_vocab().encode_batch(texts, add_special_tokens=False)]
    assert a == b, "tokenizer.json and vocab.txt give different tokenizers"
    return a


def mismatches(texts: list[str], tokenizer: WordPiece | None = None) -> list[str]:
    tokenizer = tokenizer or ours()
    want = theirs(texts)
    return [t for t, w in zip(texts, want, strict=True) if tokenizer.encode(t) != w]


# ---------------------------------------------------------------------------- corpora
def test_botchan_line_by_line() -> None:
    lines = assets.botchan_text().splitlines()
    assert len(lines) > 3000
    assert mismatches(lines) == []


def test_python_code() -> None:
    lines = corpora.python_code(max_bytes=400_000).splitlines()
    assert len(lines) > 10_000
    assert mismatches(lines) == []


@pytest.mark.slow
def test_python_code_whole() -> None:
    lines = corpora.python_code().splitlines()
    assert len(lines) > 70_000
    assert mismatches(lines) == []


def test_every_catalogue_message() -> None:
    catalogues = corpora.po_catalogues()
    assert len(catalogues) == 66
    texts = sorted({m for cat in catalogues.values() for pair in cat.items() for m in pair})
    assert mismatches(texts) == []


# ---------------------------------------------------------------------------- edge cases
EDGE_CASES = [
    "",
    " ",
    "Hello, World!",
    "unbelievable preprocessing",
    "Crème brûlée à la française; naïve café, Ångström",
    "e\u0301 a\u0308\u0304 \u0301 x\u0327\u0301",  # combining marks, alone and stacked
    "ΟΔΟΣ ΣΊΣΥΦΟΣ Σ ς σ",  # Greek final sigma: never produced by BERT's per-character lower
    "İstanbul ISTANBUL ı i̇",  # Turkish dotted and dotless i
    "ǅ ǈ ß ẞ ﬁ ﬃ Ⅻ ㎏ ①",  # titlecase, sharp s, ligatures, compatibility characters
    "東京は日本の首都です。北京、上海！",  # CJK padded, kana kept together, CJK punctuation
    "한국어 텍스트 안녕하세요",  # Hangul: NFD makes jamo
    "「引用」『二重』【括弧】〜・",
    "a\x00b\x01c\x07d\x1fe\x7ff\x85g\ufffdh",  # control characters, NUL, U+FFFD
    "zero\u200bwidth\u200cjoin\u200dner\u2060word\ufeffbom",
    "soft\xadhyphen left\u200eright\u200f",
    "tab\tnl\ncr\rvt\x0bff\x0cnel\x85nbsp\xa0ogham\u1680en\u2002em\u2003thin\u2009",
    "hair\u200aline\u2028para\u2029nnbsp\u202fmmsp\u205fideo\u3000end",
    "😀 👍🏽 👨‍👩‍👧‍👦 🇯🇵 1️⃣ ❤️ 🤗",
    "$5 + 3^2 ~ 10 | a_b `c` {d} <e> @f #g %h &i *j =k \\l",
    "€ £ ¥ © ® ™ ° ± × ÷ § ¶ • … ‰ ′ ″ — – ‐ « » ‹ › „ “ ” ‘ ’",
    "x" * 100,
    "x" * 101,  # longer than max_input_chars_per_word: one [UNK]
    "é" * 101,
    "a" * 99 + "é",
    "supercalifragilisticexpialidocious " * 3,
    "[CLS] hello [SEP] [MASK] [PAD] [UNK] [cls] [unused0] [SEP][SEP]",
    "ab[MASK]cd",
    "\U000e0001 \U0010fffd \ue000 \U000f0000",  # tag, private use
    "\u0378 \U0003ffff \U000e01ef",  # unassigned, variation selector supplement
    "Ꞌ ꟊ ꟃ Ᲊ \U00010d50 \U00016ea0 ᜴",  # letters Rust knows and Python may not
    "\u0e01\u0e34\u0e48 \u0915\u094d\u0937 \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",
    "\U0002a700 \U0002b740 \U0002b820 \U0002ceb0 \U00030000 \uf900 \U0002f800",  # CJK blocks
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ｶﾀｶﾅ",
    "𝐁𝐨𝐥𝐝 𝕯𝖔𝖚𝖇𝖑𝖊 ℌ ℍ",
    "don't won't I'm it's y'all rock'n'roll",
    "3.14159 1,000,000 10^6 2024-01-01 12:30:45",
    "https://example.com/path?q=1&r=2#frag user@mail.org",
    "def f(x):\n    return x  # ok\n",
]


def test_edge_cases() -> None:
    assert mismatches(EDGE_CASES) == []


def test_edge_cases_tokens() -> None:
    """Tokens (not only ids) agree, and a few that the chapter states."""
    for text in EDGE_CASES:
        want = from_json().encode(text, add_special_tokens=False).tokens
        assert ours().tokenize(text) == want, text
    assert ours().tokenize("x" * 101) == ["[UNK]"]
    assert ours().tokenize("ΟΔΟΣ") == ["ο", "##δ", "##ο", "##σ"]  # σ, never ς
    assert ours().tokenize("unbelievable preprocessing") == [
        "unbelievable", "prep", "##ro", "##ces", "##sing"
    ]  # fmt: skip


def test_seeded_fuzz() -> None:
    """Random mixes of the hostile fragments, edge cases and random code points (seed 11)."""
    rng = random.Random(11)
    pool = [*FRAGMENTS, *EDGE_CASES, " ", "  ", "##", "a", "ing", ".", "[SEP]"]
    texts = []
    for _ in range(3000):
        parts = [rng.choice(pool) for _ in range(rng.randrange(1, 8))]
        for _ in range(rng.randrange(3)):
            parts.insert(rng.randrange(len(parts) + 1), chr(rng.randrange(0x20, 0x30000)))
        text = "".join(parts)
        texts.append("".join(c for c in text if not 0xD800 <= ord(c) <= 0xDFFF))
    assert mismatches(texts) == []


# ---------------------------------------------------------------------------- Hypothesis
wp_piece = st.one_of(
    st.sampled_from([*FRAGMENTS, *EDGE_CASES]),
    st.text(st.characters(codec="utf-8"), max_size=8),
    st.text(st.characters(min_codepoint=0x300, max_codepoint=0x36F), min_size=1, max_size=3),
    st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=4),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12),
    st.text(alphabet=" \t\n\r\xa0\u3000\u200b", min_size=1, max_size=4),
    st.sampled_from(["the", " The", "ing", "##", "[SEP]", "Σ", "İ", "é", "ﬁ", "."]),
)
wp_text = st.lists(wp_piece, max_size=10).map("".join)
SMALL_FUZZ = min(PARITY_EXAMPLES, 200)


@settings(max_examples=SMALL_FUZZ, deadline=None)
@given(wp_text)
def test_hypothesis(text: str) -> None:
    assert mismatches([text]) == []


@pytest.mark.slow
def test_hypothesis_large(record_property) -> None:
    seen = []

    @settings(max_examples=PARITY_EXAMPLES, deadline=None)
    @given(wp_text)
    def check(text: str) -> None:
        seen.append(text)
        assert mismatches([text]) == []

    check()
    record_property("strings", len(seen))
    assert len(seen) >= PARITY_EXAMPLES


@pytest.mark.slow
def test_every_code_point() -> None:
    """Each of the 1,112,064 code points alone, between letters, and after an accented letter."""
    contexts = ["{c} ", "a{c}b ", "e\u0301{c}{c}x "]

    def agree(text: str) -> bool:
        return mismatches([text]) == []

    bad = code_points_that_differ(agree, contexts)
    assert bad == [], [f"U+{c:04X}" for c in bad[:50]]


# ---------------------------------------------------------------------------- the tests can fail
class PythonLower(WordPiece):
    """A plausible mistake: lower-case the whole text with str.lower (final sigma: ς)."""

    def _tokenize_ordinary(self, text: str) -> list[str]:
        lowered = strip_accents(text).lower()
        return [p for w in pre_tokenize(lowered) for p in self.tokenize_word(w)]


class NoAccentStripping(WordPiece):
    """Another: lower-case but keep the accents (BERT cased's rule, wrong for uncased)."""

    def _tokenize_ordinary(self, text: str) -> list[str]:
        lowered = "".join(c.lower() for c in text)
        return [p for w in pre_tokenize(lowered) for p in self.tokenize_word(w)]


@pytest.mark.parametrize("variant", [PythonLower, NoAccentStripping])
def test_wrong_variants_are_caught(variant: type[WordPiece]) -> None:
    wrong = variant(ours().vocab)
    assert mismatches(EDGE_CASES, wrong)


def test_a_mark_only_the_crate_calls_mn_is_sorted_then_stripped() -> None:
    """U+1734 is Mc to Python 3.11 and Mn (class 9) to the crate: NFD sorts it among its
    neighbours, then accent stripping drops it, so the marks around it are reordered."""
    text = "\U0001d16d\u1734\U0001d165"  # classes 226, 9, 216
    assert normalize(text) == from_json().normalizer.normalize_str(text) == "\U0001d165\U0001d16d"
    for context in ("a\u1734\u0301b", "\u0316\u1734\u0301", "x\u1734"):
        assert normalize(context) == from_json().normalizer.normalize_str(context)


def test_nfd_is_what_the_normalizer_uses() -> None:
    """A sanity check of the premise: BERT's accent stripping is NFD, then drop Mn."""
    assert unicodedata.normalize("NFD", "é") == "e\u0301"
    assert from_json().normalizer.normalize_str("Crème") == "creme"


@pytest.fixture(autouse=True)
def _slow_gate(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("slow"):
        require_slow(request)
