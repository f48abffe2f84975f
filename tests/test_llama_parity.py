"""Llama 3 and Llama 4 from our code against Meta's own tokenizer code, id for id.

The reference is llama-models' ``Tokenizer`` (``llama3/tokenizer.py``, ``llama4/tokenizer.py``),
read out of the pinned wheel (asset ``llama_models_wheel``, sha256-checked) into a temporary
folder and imported from there: nothing is installed from it, and it runs tiktoken, which the
course installs anyway. Meta's default ``encode(text, bos=False, eos=False)`` encodes special-token
text as plain text (ours: ``disallowed_special=()``); with ``allowed_special="all"`` both turn it
into special tokens.
"""

from __future__ import annotations

import functools
import importlib
import random
import sys
import zipfile

import pytest
from hypothesis import given, settings

from tokcourse import rank_bpe
from tokcourse.course.data import assets
from tokcourse.fast_encode import FastEncoder
from tokcourse.pretrained import Llama3Tokenizer, Llama4Tokenizer, unreachable_tokens

from ._parity import FRAGMENTS, PARITY_EXAMPLES, any_text

_MEMBERS = [
    "llama_models/__init__.py",
    "llama_models/tokenizer_utils.py",
    "llama_models/llama3/__init__.py",
    "llama_models/llama3/tokenizer.py",
    "llama_models/llama3/tokenizer.model",
    "llama_models/llama4/__init__.py",
    "llama_models/llama4/tokenizer.py",
    "llama_models/llama4/tokenizer.model",
]


@pytest.fixture(scope="module")
def meta(tmp_path_factory):
    """Meta's two tokenizers, imported from the unpacked, hash-checked wheel."""
    folder = tmp_path_factory.mktemp("llama_models")
    with zipfile.ZipFile(assets.path("llama_models_wheel", fetch_missing=True)) as wheel:
        for member in _MEMBERS:
            wheel.extract(member, folder)
    sys.path.insert(0, str(folder))
    try:
        t3 = importlib.import_module("llama_models.llama3.tokenizer")
        t4 = importlib.import_module("llama_models.llama4.tokenizer")
    finally:
        sys.path.remove(str(folder))
    root = folder / "llama_models"
    return {
        "llama3": t3.Tokenizer(root / "llama3" / "tokenizer.model"),
        "llama4": t4.Tokenizer(root / "llama4" / "tokenizer.model"),
        "cut": t3.Tokenizer._split_whitespaces_or_nonwhitespaces,
    }


@functools.cache
def ours(name: str):
    return Llama3Tokenizer() if name == "llama3" else Llama4Tokenizer()


NAMES = ["llama3", "llama4"]


def assert_same(name, meta, texts):
    ref, tok = meta[name], ours(name)
    for text in texts:
        want = ref.encode(text, bos=False, eos=False)
        assert tok.encode(text, disallowed_special=()) == want, text[:200]
        want_all = ref.encode(text, bos=False, eos=False, allowed_special="all")
        assert tok.encode(text, allowed_special="all") == want_all, text[:200]


# ------------------------------------------------------------------------------- the tables
@pytest.mark.parametrize("name", NAMES)
def test_tables_are_metas(name, meta):
    ref, tok = meta[name], ours(name)
    assert tok.special_tokens == ref.special_tokens
    assert tok.n_vocab == ref.n_words == ref.model.n_vocab
    assert tok.vocab == {r: t for t, r in ref.model._mergeable_ranks.items()}
    assert tok._compiled.pattern == ref.model._pat_str


def test_llama3_is_gpt4_plus_27744_tokens_and_678_no_merge_can_build():
    import tiktoken

    cl100k = tiktoken.get_encoding("cl100k_base")._mergeable_ranks
    tok = ours("llama3")
    assert all(tok.vocab[r] == t for t, r in cl100k.items())
    assert len(tok.vocab) - len(cl100k) == 27_744
    assert len(tok.extra_tokens) == 678 and tok.extra_tokens[100421] == b".:.:"
    assert unreachable_tokens({t: r for r, t in tok.vocab.items()})[b".:.:"] == [
        b".",
        b":.",
        b":",
    ]
    assert not ours("llama4").extra_tokens and len(ours("llama4").merges) == 199_744


# ------------------------------------------------------------------------------- encoding
@pytest.mark.parametrize("name", NAMES)
def test_corpora(name, meta):
    texts = [assets.botchan_text(), assets.python_code(max_bytes=300_000)]
    texts += ["\n".join(msgs) for msgs in assets.parallel_text().values()]
    assert_same(name, meta, texts)


@pytest.mark.parametrize("name", NAMES)
def test_hard_strings(name, meta):
    tok = ours(name)
    texts = list(FRAGMENTS) + ["a.:.:b", ".:.:", " .:.:.:.:", "x.:.:.:", "Việt Nam nhiều"]
    texts += [t.decode("utf-8", "replace") for t in tok.extra_tokens.values()]
    texts += ["<|begin_of_text|>hi<|eot_id|>", "<|eot|><|header_start|>x", "<|image|>" * 3]
    texts += [f"a{s}b" for s in list(tok.special_tokens)[:40:3]]
    assert_same(name, meta, texts)


@pytest.mark.parametrize("name", NAMES)
def test_metas_long_run_cuts(name, meta):
    # runs of white space and of non-white space just under, at and over 25,000 characters,
    # a cut inside a special token and inside a surrogate pair, and the 400,000 window
    n = rank_bpe.MAX_RUN
    texts = [" " * (n - 1) + "x", " " * n + "x", " " * (n + 1) + "x", "a" * (2 * n + 3)]
    texts += ["b" * (n - 5) + "<|begin_of_text|>", "\u2028" * (n + 2) + "\x1c" * 3]
    texts += ["x" * (n - 1) + "\ud83d\ude00" + "y", ".:" * n]
    words = "the cat sat on a mat ".split()
    rng = random.Random(7)
    long = " ".join(rng.choice(words) for _ in range(90_000))  # about 400,000 characters
    texts += [long[: rank_bpe.WINDOW + 5], "q" * (rank_bpe.WINDOW - 2) + "rs tu"]
    assert_same(name, meta, texts)
    # the cuts change ids: tiktoken alone, without them, gives others on these inputs
    plain, text = meta[name].model, "x" * (n - 1) + "yz"  # the cut falls between y and z
    assert plain.encode(text) != meta[name].encode(text, bos=False, eos=False)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=PARITY_EXAMPLES, deadline=None)
@given(text=any_text)
def test_any_string(name, meta, text):
    assert_same(name, meta, [text])


@pytest.mark.parametrize("name", NAMES)
def test_seeded_fuzz(name, meta):
    """Random mixtures of the letters, marks and punctuation the two tables merge most."""
    tok = ours(name)
    pieces = [t.decode("utf-8", "ignore") for t in list(tok.vocab.values())[::97]]
    pieces += [".", ":", " ", "\n", "'s", "'T", "ệ", "ı", "ğ", "ш", "日", "1", "23", "\t"]
    rng = random.Random(2026)
    texts = ["".join(rng.choices(pieces, k=rng.randint(1, 60))) for _ in range(3000)]
    assert_same(name, meta, texts)


@pytest.mark.parametrize("name", NAMES)
def test_slow_path_and_stream_give_the_same_ids(name):
    tok = ours(name)
    text = "Tôi làm việc ở Hà Nội. a.:.:b okuyabilmektedir DON'T предупреждение"
    assert tok.encode_ordinary(text, fast=False) == tok.encode_ordinary(text)
    long = ("héllo wörld .:.: " * 30_000)[: rank_bpe.WINDOW + 1234]
    pieces = [long[i : i + 7_777] for i in range(0, len(long), 7_777)]
    assert list(tok.encode_iterable(pieces)) == tok.encode(long)


# ------------------------------------------------------------------------------- the rules
def test_cut_long_runs_is_metas_cut(meta):
    rng = random.Random(3)
    for _ in range(2000):
        text = "".join(rng.choices("ab \t\u3000\x1c", k=rng.randint(0, 40)))
        max_run = rng.randint(1, 6)
        assert rank_bpe.cut_long_runs(text, max_run, window=10**9) == list(
            meta["cut"](text, max_run)
        )


def test_an_encoder_without_tiktokens_rules_is_wrong_on_llama3(meta):
    """A merge-list encoder (no whole-chunk lookup, no other joins) misses Llama 3's ids: the
    parity tests above would fail on it."""
    tok = ours("llama3")
    merge_list = FastEncoder(tok.merges, tok.byte_shuffle, tok._compiled)
    for text in ["a.:.:b", " việc"]:
        assert merge_list.encode_ordinary(text) != meta["llama3"].encode(text, bos=False, eos=False)
    # joins of any two neighbours without the whole-chunk lookup are not enough ...
    joins = FastEncoder(rank_bpe.rank_pairs(tok._ranks), tok.byte_shuffle, tok._compiled)
    assert joins.encode_ordinary(" việc") != [100769]
    assert joins.encode_ordinary("a.:.:b") == [64, 100421, 65]  # (.:. + : is a join)
    # ... and neither is the lookup without the joins
    word = " предупреждение"
    lookup = rank_bpe.RankEncoder(tok._ranks, tok._compiled)
    lookup.merges = dict(tok.merges)  # the merge list instead of every join
    assert lookup.encode_ordinary(word) != meta["llama3"].encode(word, bos=False, eos=False)


def test_rank_pairs_joins_any_split():
    ranks = {bytes([b]): b for b in range(256)} | {b"ba": 256, b"abab": 257, b"aba": 258}
    # BPE on b"abab" with the tokens below it stops at a, ba, b: no merge builds it
    assert unreachable_tokens(ranks) == {b"abab": [b"a", b"ba", b"b"]}
    enc = rank_bpe.RankEncoder(ranks)
    assert enc.encode_ordinary("abab") == [257]  # the whole chunk
    assert enc.encode_ordinary("ababc") == [257, 99]  # a+ba -> aba, then aba+b -> abab
    assert rank_bpe.encode_chunk_with_ranks(b"ababc", ranks) == [257, 99]
    merge_list = FastEncoder({(98, 97): 256, (97, 256): 258})
    assert merge_list.encode_ordinary("ababc") == [258, 98, 99]


@pytest.mark.parametrize("name", NAMES)
def test_llama_tokenizers_refuse_what_they_cannot_do(name, tmp_path):
    tok = ours(name)
    with pytest.raises(NotImplementedError, match="cannot be saved"):
        tok.save(tmp_path / "x")
    with pytest.raises(NotImplementedError, match="pretrained"):
        tok.train("text", 300)
    with pytest.raises(ValueError, match="special token"):
        tok.encode("<|begin_of_text|>")  # tiktoken's default: refuse special-token text
    assert tok.decode(tok.encode("<|end_of_text|>", allowed_special="all")) == "<|end_of_text|>"
