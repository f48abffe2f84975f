"""Our SentencePiece BPE trainer writes the model sentencepiece's trainer writes, byte for byte.

Each test trains the same lines twice: with ``spm.SentencePieceTrainer.train`` (``model_type=
"bpe"``, ``normalization_rule_name="identity"``, ``num_threads=1``) and with
``tokcourse.sentencepiece_train.train_bpe`` and the same options, then compares the whole piece
list (piece, score as a float32, type) and the serialized bytes.

Default run: *Botchan* at 1,000, 4,000 and 8,000 pieces; Japanese, Chinese and Korean Sphinx
catalogues with ``character_coverage`` below 1, with and without byte fallback; Python source
with the whitespace options; split digits; user-defined and control symbols; whitespace as a
suffix; other ids; short pieces and lines; a seeded fuzz of small corpora with random options
(the same model, or the same refusal). Big run (``make test-full``): the fuzz at 1,500 corpora,
every catalogue, and the standard library.

    pytest tests/test_sentencepiece_train.py -m "slow or not slow"
"""

from __future__ import annotations

import functools
import io
import random
import struct

import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

from tokcourse import sentencepiece_merge
from tokcourse import sentencepiece_train as spt
from tokcourse.course.data import corpora
from tokcourse.sentencepiece_bpe import SentencePieceBPE
from tokcourse.sentencepiece_train import (
    UNK_CHAR,
    is_valid_piece,
    normalize,
    required_characters,
    split_into_words,
    train_bpe,
)

from ._parity import require_slow

BASE = {"model_type": "bpe", "normalization_rule_name": "identity", "num_threads": 1}


@pytest.fixture(autouse=True)
def _slow_gate(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("slow"):
        require_slow(request)


def theirs(lines: list[str], **options: object) -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, minloglevel=2, **(BASE | options)
    )
    return out.getvalue()


def ours(lines: list[str], **options: object) -> bytes:
    return train_bpe(lines, **(BASE | options)).model.SerializeToString()


def piece_list(model: bytes) -> list[tuple[str, bytes, int]]:
    return [
        (p.piece, struct.pack("<f", p.score), p.type)
        for p in pb.ModelProto.FromString(model).pieces
    ]


def assert_same_model(lines: list[str], **options: object) -> bytes:
    want, got = theirs(lines, **options), ours(lines, **options)
    want_pieces, got_pieces = piece_list(want), piece_list(got)
    first = next(
        (i for i, (a, b) in enumerate(zip(want_pieces, got_pieces, strict=False)) if a != b), None
    )
    assert (len(want_pieces), first) == (len(got_pieces), None), (
        f"first difference at id {first}: sentencepiece {want_pieces[first : first + 3]}, "
        f"ours {got_pieces[first : first + 3] if first is not None else ''}"
    )
    assert got == want  # the trainer_spec and normalizer_spec too
    return got


@functools.cache
def botchan() -> list[str]:
    return corpora.botchan_text().splitlines()


@functools.cache
def catalogue(lang: str) -> list[str]:
    return [msg for msg in corpora.po_catalogues()[lang].values() if msg]


@functools.cache
def code() -> list[str]:
    return corpora.python_code(200_000).splitlines()


# ---------------------------------------------------------------------------- parity
@pytest.mark.parametrize("vocab_size", [1000, 4000, 8000])
def test_botchan(vocab_size: int) -> None:
    assert_same_model(botchan(), vocab_size=vocab_size)


CJK = {
    "ja, coverage 0.9995": ("ja", {"vocab_size": 3000}),
    "ja, coverage 0.98, byte fallback": (
        "ja",
        {"vocab_size": 3000, "character_coverage": 0.98, "byte_fallback": True},
    ),
    "zh_CN, coverage 0.99": ("zh_CN", {"vocab_size": 3000, "character_coverage": 0.99}),
    "zh_CN, coverage 0.99, byte fallback": (
        "zh_CN",
        {"vocab_size": 3000, "character_coverage": 0.99, "byte_fallback": True},
    ),
    "ko, coverage 0.985, byte fallback": (
        "ko",
        {"vocab_size": 2000, "character_coverage": 0.985, "byte_fallback": True},
    ),
}


@pytest.mark.parametrize("case", sorted(CJK))
def test_cjk_catalogues(case: str) -> None:
    lang, options = CJK[case]
    trained = train_bpe(catalogue(lang), **(BASE | options))
    assert trained.dropped_chars  # the coverage leaves characters out
    assert_same_model(catalogue(lang), **options)


WHITESPACE = {
    "kept, whitespace-only pieces, no split": {
        "remove_extra_whitespaces": False,
        "allow_whitespace_only_pieces": True,
        "split_by_whitespace": False,
    },
    "kept, whitespace-only pieces": {
        "remove_extra_whitespaces": False,
        "allow_whitespace_only_pieces": True,
    },
    "kept, no split": {"remove_extra_whitespaces": False, "split_by_whitespace": False},
    "no number or script split": {"split_by_number": False, "split_by_unicode_script": False},
    "suffix, whitespace-only pieces": {
        "treat_whitespace_as_suffix": True,
        "allow_whitespace_only_pieces": True,
        "remove_extra_whitespaces": False,
    },
}


@pytest.mark.parametrize("case", sorted(WHITESPACE))
def test_python_code(case: str) -> None:
    assert_same_model(code(), vocab_size=2000, **WHITESPACE[case])


OPTIONS = {
    "split digits": {"split_digits": True},
    "digits join letters": {"split_by_number": False},
    "symbols": {
        "user_defined_symbols": ["the", "<sep>", "ing"],
        "control_symbols": ["<ctl>", "<s>"],
    },
    "suffix": {"treat_whitespace_as_suffix": True},
    "suffix, no split": {"treat_whitespace_as_suffix": True, "split_by_whitespace": False},
    "ids": {
        "unk_id": 3,
        "bos_id": -1,
        "eos_id": 0,
        "pad_id": 1,
        "pad_piece": "[PAD]",
        "unk_piece": "[UNK]",
    },
    "short": {"max_sentencepiece_length": 4, "max_sentence_length": 200, "add_dummy_prefix": False},
    "byte fallback": {"byte_fallback": True, "character_coverage": 0.99},
}


@pytest.mark.parametrize("case", sorted(OPTIONS))
def test_botchan_options(case: str) -> None:
    assert_same_model(botchan()[:2500], vocab_size=2000, **OPTIONS[case])


def test_hostile_lines() -> None:
    lines = botchan()[:300] + [
        "x" * 5000,
        "a\x00b",
        "\x00",
        "\u2585 reserved",
        "   ",
        "",
        "e\u0301\u0301",
        "日本語\r\n",
        "<s> and </s>",
        "tab\there",
    ]
    assert_same_model(lines, vocab_size=600)
    trained = train_bpe(lines, **BASE, vocab_size=600)
    assert (trained.too_long, trained.reserved) == (1, 1)  # shown, not silently dropped
    assert UNK_CHAR not in trained.required_chars and "\x00" not in trained.required_chars


def test_the_model_loads_everywhere(tmp_path) -> None:
    model = assert_same_model(botchan(), vocab_size=2000)
    path = tmp_path / "botchan.model"
    path.write_bytes(model)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = SentencePieceBPE.from_file(path)
    assert all(tok.encode(line) == sp.encode(line) for line in botchan()[:500])


# ---------------------------------------------------------------------------- fuzz
ALPHABET = [
    "aa",
    "ab",
    "ba",
    "b a",
    "aaa",
    "a",
    "b",
    "c",
    "a",
    " ",
    " ",
    "  ",
    "1",
    "2",
    "é",
    "ア",
    "あ",
    "漢",
    "\u0301",
    ".",
    ",",
    "▁",
    "\t",
    "\x00",
    "<s>",
    "\n",
    "Ω",
    "😀",
    "ー",
    "ｱ",
    "１",
]
CHOICES = {
    "byte_fallback": [True, False],
    "split_by_whitespace": [True, False],
    "split_by_unicode_script": [True, False],
    "split_by_number": [True, False],
    "split_digits": [True, False],
    "treat_whitespace_as_suffix": [True, False],
    "allow_whitespace_only_pieces": [True, False],
    "add_dummy_prefix": [True, False],
    "remove_extra_whitespaces": [True, False],
    "max_sentencepiece_length": [1, 2, 3, 16],
    "character_coverage": [0.98, 0.99, 1.0],
    "max_sentence_length": [10, 20, 4192],
    "user_defined_symbols": [["ab"], ["a", "<x>"]],
    "control_symbols": [["<c>"]],
}
SAME_REFUSAL = ["smaller than required_chars", "too high", "already defined"]


def fuzz(seed: int, trials: int) -> tuple[int, int]:
    rng = random.Random(seed)
    same = refused = 0
    for _ in range(trials):
        lines = [
            "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
            for _ in range(rng.randint(1, 30))
        ]
        options = {k: rng.choice(v) for k, v in CHOICES.items() if rng.random() < 0.3}
        options["vocab_size"] = rng.choice([20, 30, 40, 60, 100])
        try:
            want = theirs(lines, **options)
        except RuntimeError as err:
            with pytest.raises(ValueError) as ours_err:
                ours(lines, **options)
            kind = [k for k in SAME_REFUSAL if k in str(err)]
            assert not kind or kind[0] in str(ours_err.value), (lines, options, err)
            refused += 1
            continue
        assert ours(lines, **options) == want, (lines, options)
        same += 1
    return same, refused


def test_fuzz() -> None:
    same, refused = fuzz(0, 150)
    assert same > 40 and refused > 10


@pytest.mark.slow
def test_fuzz_big() -> None:
    same, refused = fuzz(1, 1500)
    assert same > 400


@pytest.mark.slow
@pytest.mark.parametrize("lang", sorted(corpora.po_catalogues()))
def test_every_catalogue(lang: str) -> None:
    """The same model, or the same refusal (a small catalogue runs out of pairs to merge)."""
    options = {"vocab_size": 1000, "character_coverage": 0.995, "byte_fallback": True}
    try:
        theirs(catalogue(lang), **options)
    except RuntimeError as err:
        with pytest.raises(ValueError, match="too high|empty"):
            ours(catalogue(lang), **options)
        assert "too high" in str(err) or "sentences_.empty()" in str(err)
        return
    assert_same_model(catalogue(lang), **options)


@pytest.mark.slow
def test_stdlib() -> None:
    lines = corpora.stdlib_code(2_000_000).splitlines()
    assert_same_model(
        lines, vocab_size=8000, remove_extra_whitespaces=False, allow_whitespace_only_pieces=True
    )


# ---------------------------------------------------------------------------- the test can fail
def test_a_wrong_tie_break_gives_another_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: prefer the *longer* piece on a tie (sentencepiece prefers the shorter)."""
    import heapq

    class LongerFirst:
        heappop = staticmethod(heapq.heappop)

        @staticmethod
        def heappush(heap, entry):
            neg_freq, length, piece, symbol = entry
            heapq.heappush(heap, (neg_freq, -length, piece, symbol))

    monkeypatch.setattr(sentencepiece_merge, "heapq", LongerFirst)
    with pytest.raises(AssertionError, match="first difference at id"):
        assert_same_model(botchan(), vocab_size=1000)


# ---------------------------------------------------------------------------- the steps
def test_steps() -> None:
    opts = train_bpe.__globals__["check_options"](BASE)
    assert normalize("  a  b ", opts) == "▁a▁b"
    assert normalize("a ▁", opts) == "▁a"  # trailing ▁ go too, even one from the text
    assert split_into_words("▁a▁▁b", suffix=True) == ["▁", "a▁", "▁", "b"]
    assert not is_valid_piece("a.", opts) and is_valid_piece("カタ漢ひ", opts)
    assert not is_valid_piece("▁" * 2, opts)
    required, dropped = required_characters([("a" * 99 + "b", 1)], 0.98)
    assert (required, dropped) == ({"a": 99}, {"b": 1})


# ---------------------------------------------------------------------------- refusals
REFUSED = {
    "unknown option": ({"vocabsize": 10}, "unknown option 'vocabsize'"),
    "vocab_size 0": ({"vocab_size": 0}, "vocab_size must be in"),
    "vocab_size str": ({"vocab_size": "8000"}, "vocab_size must be"),
    "coverage": ({"character_coverage": 0.5}, "character_coverage must be in"),
    "piece length": ({"max_sentencepiece_length": 513}, "max_sentencepiece_length must be in"),
    "sentence length": ({"max_sentence_length": 5}, "max_sentence_length must be in"),
    "threads": ({"num_threads": 0}, "num_threads must be in"),
    "bool": ({"byte_fallback": 1}, "byte_fallback must be a bool"),
    "symbols": ({"user_defined_symbols": "ab"}, "user_defined_symbols must be a list"),
    "model type": ({"model_type": "unigram"}, "model_type must be 'bpe'"),
    "rule": ({"normalization_rule_name": "nmt_nfkc"}, "normalization_rule_name='nmt_nfkc'"),
    "sampling": ({"input_sentence_size": 1000}, "input_sentence_size must be 0"),
    "unk id": ({"unk_id": 10, "vocab_size": 10}, "unk_id=10"),
    "same id": ({"bos_id": 2}, "eos_id=2"),
    "no unk": ({"unk_id": -1}, "must be defined unless byte_fallback"),
    "twice": ({"user_defined_symbols": ["x", "x"]}, "'x' is defined twice"),
    "unk symbol": ({"control_symbols": ["<unk>"]}, "'<unk>' is defined twice (or is the unk"),
    "same piece": ({"eos_piece": "<s>"}, "'<s>' is already defined"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals(case: str) -> None:
    options, message = REFUSED[case]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        train_bpe(botchan()[:50], **(BASE | {"vocab_size": 300} | options))
    if case not in (
        "vocab_size str",
        "bool",
        "symbols",
        "model type",
        "rule",
        "threads",
        "sampling",
    ):
        with pytest.raises(RuntimeError):  # sentencepiece refuses it too
            theirs(botchan()[:50], **({"vocab_size": 300} | options))


def test_refusals_of_the_corpus() -> None:
    cases = [
        ([], {}, "the corpus is empty"),
        (["", "\n"], {}, "the corpus is empty"),
        (["\x00"], {"add_dummy_prefix": False}, "no characters"),
        (
            botchan()[:50],
            {"vocab_size": 20},
            "Vocabulary size is smaller than required_chars. 20 vs",
        ),
        (
            ["ab"],
            {"vocab_size": 100},
            r"Vocabulary size too high \(100\). Please set it to a value <= 9",
        ),
    ]
    for lines, options, message in cases:
        with pytest.raises(ValueError, match=message):
            train_bpe(lines, **(BASE | {"vocab_size": 300} | options))
        with pytest.raises(RuntimeError):
            theirs(lines, **({"vocab_size": 300} | options))
    with pytest.raises(ValueError, match="line 2 has no UTF-8 form"):
        train_bpe(["ok", "a\ud800b"], **BASE)
    with pytest.raises(TypeError, match="line 1 is a bytes"):
        train_bpe([b"ab"], **BASE)


def test_covered_characters_is_the_coverage_rule_of_required_characters():
    counts = {"c": 1, "b": 3, "a": 6}
    assert spt.covered_characters(counts, 0.9) == {"a": 6, "b": 3}  # the share reaches 0.9
    assert spt.covered_characters(counts, 0.91) == {"a": 6, "b": 3, "c": 1}
    assert spt.covered_characters({"b": 2, "a": 2}, 0.5) == {"a": 2}  # ties: code point order
    required, dropped = required_characters([("aabbc", 1)], 0.8)
    assert required == spt.covered_characters({"a": 2, "b": 2, "c": 1}, 0.8) == {"a": 2, "b": 2}
    assert dropped == {"c": 1}


def test_best_pair_is_the_first_merge_learned():
    words = [("▁the", 3), ("▁that", 2), ("▁hat", 1)]
    pairs: dict[tuple[str, str], int] = {}
    for word, n in words:
        for a, b in zip(word, word[1:], strict=False):
            pairs[a, b] = pairs.get((a, b), 0) + n
    first = sentencepiece_merge.learn_merges(words, 1, lambda p: True, UNK_CHAR)
    assert first == [("".join(sentencepiece_merge.best_pair(pairs)), max(pairs.values()))]
    assert sentencepiece_merge.best_pair({("é", "é"): 2, ("a", "bc"): 2}) == ("é", "é")
