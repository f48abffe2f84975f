"""WordPiece on hostile input: vocab files, quadratic NFD, lone surrogates (issue 25).

Every answer is checked against Hugging Face ``tokenizers`` run on the same input: where it
loads, we load the same vocabulary; where it refuses, we refuse. The near-linear work of the
normalizing paths is counted, never timed (see ``tests/test_linear_work.py``).
"""

from __future__ import annotations

import functools
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, normalizers, pre_tokenizers
from tokenizers.models import WordPiece as HFWordPiece

from tokcourse import wordpiece
from tokcourse.course.data import corpora
from tokcourse.wordpiece import (
    WordPiece,
    load_vocab,
    nfd,
    normalize,
    pre_tokenize,
    strip_accents,
    wordpiece_word,
)
from tokcourse.wordpiece_train import word_counts


def hf_from_vocab(path) -> Tokenizer:
    """BERT uncased over ``path``, as ``BertWordPieceTokenizer`` builds it (no [SEP] needed)."""
    tok = Tokenizer(HFWordPiece.from_file(str(path), unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


@functools.cache
def minilm() -> tuple[WordPiece, Tokenizer]:
    path = corpora.minilm_vocab_path()
    return WordPiece.from_file(path), hf_from_vocab(path)


# ---------------------------------------------------------------------------- 1. vocab lines
VOCAB_FILES = {
    "trailing spaces": b"[UNK]\nhello \nworld  \n##s \n",
    "CRLF": b"[UNK]\r\nhello\r\nworld\r\n##s\r\n",
    "tabs and U+3000": "[UNK]\t\nhello\t \nworld\u3000\n##s\u2003\n".encode(),
    "no final newline": b"[UNK]\nhello\nworld\n##s",
    "lone CR inside a line": b"[UNK]\nhel\rlo\nhello\r\rworld\n\n##s",
    "not white space to Rust": "[UNK]\nhello\x1c\nworld\x85\n\u200b##s\u200b\n".encode(),
    "leading space kept": b"[UNK]\n hello\nhello\nworld\n##s\n",
    "duplicates after trimming": b"[UNK]\nhello\nhello \nworld\nhello\t\n##s\n",
    "empty lines": b"\n[UNK]\n\nhello\nworld\n\n##s\n",
    "byte-order mark kept": b"\xef\xbb\xbfhello\n[UNK]\nworld\n##s\n",
}


@pytest.mark.parametrize("name", VOCAB_FILES)
def test_vocab_lines_load_as_tokenizers_loads_them(name: str, tmp_path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_bytes(VOCAB_FILES[name])
    hf = hf_from_vocab(path)
    assert load_vocab(path) == hf.get_vocab()
    text = "Hello worlds, HELLO\tworld!"
    want = hf.encode(text, add_special_tokens=False).tokens
    assert WordPiece.from_file(path).tokenize(text) == want


def test_trailing_white_space_no_longer_makes_every_token_unknown(tmp_path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_bytes(VOCAB_FILES["trailing spaces"])
    assert WordPiece.from_file(path).tokenize("hello worlds") == ["hello", "world", "##s"]


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"[UNK]\nab\n\xff\xfe\nc\n", 3),
        (b"[UNK]\nok\nlatin-1 caf\xe9\n", 3),
        (b"\xe9t\xe9\n[UNK]\n", 1),
        (b"[UNK]\n\xed\xa0\x80\n", 2),  # an encoded surrogate is not UTF-8 either
        (b"[UNK]\nx\n\xe2\x82", 3),  # cut inside a character
    ],
)
def test_a_vocab_that_is_not_utf8_is_a_value_error_naming_file_and_line(
    data: bytes, line: int, tmp_path
) -> None:
    path = tmp_path / "bad vocab.txt"
    path.write_bytes(data)
    with pytest.raises(Exception, match="valid UTF-8"):  # tokenizers refuses it too
        HFWordPiece.from_file(str(path))
    with pytest.raises(ValueError, match=rf"bad vocab\.txt: line {line} is not UTF-8"):
        load_vocab(path)
    with pytest.raises(ValueError, match=f"line {line}"):
        WordPiece.from_file(path)


# ---------------------------------------------------------------------------- 3. linear NFD
def nfd_unsafe() -> list[str]:
    """The characters NFD may reorder: combining marks, and those decomposing into one."""
    return [
        ch
        for c in range(0x110000)
        if not 0xD800 <= c <= 0xDFFF
        and (unicodedata.combining(ch := chr(c)) or unicodedata.combining(nfd(ch)[:1] or "a"))
    ]


def test_nfd_equals_unicodedata_around_every_mark_and_decomposable_character() -> None:
    unsafe = nfd_unsafe()
    assert {"\u0301", "\u0316", "\u0f73", "\u0f75", "\u0f81", "\u0344"} <= set(unsafe)
    decomposable = [chr(c) for c in range(0x110000)
                    if unicodedata.decomposition(chr(c))[:1] not in ("", "<")]  # fmt: skip
    for ch in unsafe + decomposable:
        for text in (
            "a" + ch * 40 + "\u0316\u0301" * 20 + ch,  # long runs: sorted by us
            ch + "\u0301\u0316" * 3 + ch + "b",  # short runs: CPython
            "\u1e09" + (ch + "\u0316") * 20 + "\uac00" + ch * 33,  # ḉ, a Hangul syllable
        ):
            assert nfd(text) == unicodedata.normalize("NFD", text), (f"U+{ord(ch):04X}", text)


MARKS = ["\u0301", "\u0316", "\u0327", "\u0334", "\u05b0", "\u0f71", "\u0f72", "\u0f74", "\u302a"]
MARKY = st.sampled_from(
    [*MARKS, "\u0f73", "\u0f75", "\u0f81", "\u0344", "a", "é", "\u1e09", "\uac00", "\u07fd", " "]
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.lists(MARKY, max_size=300).map("".join),
        st.lists(st.tuples(MARKY, st.lists(st.sampled_from(MARKS), max_size=90)), max_size=6).map(
            lambda runs: "".join(s + "".join(m) for s, m in runs)
        ),
    )
)
def test_nfd_equals_unicodedata_property(text: str) -> None:
    assert nfd(text) == unicodedata.normalize("NFD", text)
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        want = "".join(
            c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn"
        )
        assert strip_accents(text) == want


SHAPES = {
    "alternating marks": lambda n: "a" + "\u0301\u0316" * n,
    "class 0, decomposes to marks": lambda n: "\u0f73" * n,
    "accented letter, then marks": lambda n: "x\u1e09" + "\u0316\u0301\u0327" * n,
    "marks among kept characters": lambda n: ("\u0301\u0316" * 50 + "\u07fd") * (n // 50),
}


def test_the_hostile_marks_give_tokenizers_tokens() -> None:
    ours, hf = minilm()
    for shape in SHAPES.values():
        for text in (shape(3), shape(20_000), "Caf" + shape(5_000) + " ok"):
            assert ours.tokenize(text) == hf.encode(text, add_special_tokens=False).tokens


class CountingUnicodedata:
    """``unicodedata`` for the module under test, counting the work of its NFD.

    ``normalize`` is charged the length of its text plus, for each run of marks in its answer,
    the run's length squared: what CPython's insertion sort may do (it does on these shapes).
    ``combining`` (our own sort's key, and its scan) is charged one per call.
    """

    def __init__(self) -> None:
        self.work = 0

    def __getattr__(self, name: str):
        return getattr(unicodedata, name)

    def normalize(self, form: str, text: str) -> str:
        # the runs from a per-character decomposition: the real call may be quadratic
        out, run = [], []
        for ch in "".join(unicodedata.normalize(form, ch) for ch in text) + "a":
            if unicodedata.combining(ch):
                run.append(ch)
                continue
            self.work += len(run) ** 2
            out += sorted(run, key=unicodedata.combining)
            out.append(ch)
            run = []
        self.work += len(text)
        return "".join(out[:-1])  # NFD by its definition, without CPython's sort

    def combining(self, ch: str) -> int:
        self.work += 1
        return unicodedata.combining(ch)


def _tokenize(text: str) -> object:
    return WordPiece({"[UNK]": 0, "a": 1}).tokenize(text)


PATHS = {
    "nfd": nfd,
    "strip_accents": strip_accents,
    "normalize": normalize,
    "WordPiece.tokenize": _tokenize,
    "word_counts": word_counts,
}


def counted_work(monkeypatch: pytest.MonkeyPatch, path, text: str) -> int:
    counter = CountingUnicodedata()
    monkeypatch.setattr(wordpiece, "unicodedata", counter)
    path(text)
    monkeypatch.undo()
    return counter.work


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("shape", SHAPES)
def test_normalizing_work_is_near_linear(shape: str, path: str, monkeypatch) -> None:
    nfd("\u0301")  # build the table of marks outside the count
    small = counted_work(monkeypatch, PATHS[path], SHAPES[shape](3_000))
    large = counted_work(monkeypatch, PATHS[path], SHAPES[shape](12_000))
    print(f"{path} on {shape}: {small:,} -> {large:,} ({large / small:.2f}x)")
    assert large / small < 5, (small, large)  # n log n: 4x the input, under 5x the work
    assert large < 40 * len(SHAPES[shape](12_000)), large


def test_the_work_measure_sees_cpythons_quadratic_sort(monkeypatch) -> None:
    """The old path, NFD of the whole text in one call: 4x the marks, about 16x the work."""

    def whole(text: str) -> str:
        return wordpiece.unicodedata.normalize("NFD", text)

    small = counted_work(monkeypatch, whole, SHAPES["alternating marks"](3_000))
    large = counted_work(monkeypatch, whole, SHAPES["alternating marks"](12_000))
    assert large / small > 12, (small, large)


# ---------------------------------------------------------------------------- 4. surrogates
SURROGATE_TEXTS = [
    "a\udfffb",
    "\ud800",
    "x\udc00",
    "ab\ud83d",
    "\ud83d\ude00",  # a pair written as two code points: still not UTF-8
    "é\udfff",
    "[UNK]\udfff",  # after a special token
    "\udfff[UNK]",
    "hello " * 50 + "\udbff",
]


@pytest.mark.parametrize("text", SURROGATE_TEXTS)
def test_lone_surrogates_are_refused_as_tokenizers_refuses_them(text: str) -> None:
    ours, hf = minilm()
    with pytest.raises(TypeError, match="TextInputSequence must be str"):
        hf.encode(text, add_special_tokens=False)
    for call in (ours.tokenize, ours.encode):
        with pytest.raises(TypeError, match="surrogates not allowed") as refused:
            call(text)
        assert isinstance(refused.value.__cause__, UnicodeEncodeError)
    pairs = [
        (hf.normalizer.normalize_str, normalize),
        (hf.pre_tokenizer.pre_tokenize_str, pre_tokenize),
        (normalizers.StripAccents().normalize_str, strip_accents),
        (lambda t: [tok.value for tok in hf.model.tokenize(t)],
         lambda t: wordpiece_word(t, ours.vocab)),
    ]  # fmt: skip
    for theirs, our in pairs:
        with pytest.raises(UnicodeEncodeError) as want:
            theirs(text)
        with pytest.raises(UnicodeEncodeError) as got:
            our(text)
        assert got.value.args == want.value.args
    with pytest.raises(UnicodeEncodeError):
        word_counts(text)
