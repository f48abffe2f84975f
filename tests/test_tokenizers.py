"""BasicTokenizer, RegexTokenizer and the pretrained GPT tokenizers: behaviour and invariants."""

from __future__ import annotations

import doctest
import importlib
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse.basic import BasicTokenizer
from tokcourse.bpe import merge
from tokcourse.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, split
from tokcourse.pretrained import GPT2Tokenizer, GPT4oTokenizer, GPT4Tokenizer, recover_merges
from tokcourse.regex import RegexTokenizer
from tokcourse.tokenizer import Tokenizer, render_token

from ._parity import FRAGMENTS, any_text, ours, valid_text

MODULES = [
    "bpe",
    "basic",
    "regex",
    "patterns",
    "special",
    "tokenizer",
    "model_file",
    "pretrained",
    "unicode_pin",
]

TRAINING_TEXT = (
    "The tokenizer is a separate stage of the pipeline, with its own training set. "
    "It turns text into tokens and tokens back into text. Tokens are the atoms of an LLM. "
    "Don't forget: 12345 + 678 = 13023! Ünïcödé, 日本語, 한국어, emoji 👋🏽 and\ttabs\n\n"
) * 3 + "".join(FRAGMENTS)


@pytest.fixture(scope="module")
def basic() -> BasicTokenizer:
    tok = BasicTokenizer()
    tok.train(TRAINING_TEXT, 256 + 120)
    return tok


@pytest.fixture(scope="module")
def regex_tok() -> RegexTokenizer:
    tok = RegexTokenizer()
    tok.train(TRAINING_TEXT, 256 + 120)
    tok.register_special_tokens({"<|endoftext|>": 1000})
    return tok


@pytest.mark.parametrize("module", MODULES)
def test_doctests(module: str) -> None:
    mod = importlib.import_module(f"tokcourse.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_import_has_no_side_effects() -> None:
    """Importing the modules reads no file, starts no network, builds no tables."""
    code = (
        "import sys, builtins, socket\n"
        "opened = []\n"
        "real_open = builtins.open\n"
        "builtins.open = lambda *a, **k: opened.append(a[0]) or real_open(*a, **k)\n"
        "socket.socket = None\n"
        "import tokcourse.bpe, tokcourse.basic, tokcourse.regex, tokcourse.patterns\n"
        "import tokcourse.special, tokcourse.tokenizer, tokcourse.pretrained\n"
        "import tokcourse.unicode_pin\n"
        "assert not opened, opened\n"
        "assert 'tiktoken' not in sys.modules\n"
        "assert tokcourse.pretrained._tables.cache_info().currsize == 0\n"
        "assert tokcourse.unicode_pin._finder.cache_info().currsize == 0\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------- basic
def test_basic_training(basic: BasicTokenizer) -> None:
    assert len(basic.merges) == 120
    assert sorted(basic.merges.values()) == list(range(256, 376))
    assert len(basic.vocab) == 376
    assert basic.pattern is None
    ids = basic.encode(TRAINING_TEXT)
    assert len(ids) < 0.6 * len(TRAINING_TEXT.encode("utf-8"))  # it compresses
    assert basic.decode(ids) == TRAINING_TEXT


def apply_merges_in_order(tok: Tokenizer, data: bytes) -> list[int]:
    ids = [tok.byte_shuffle[b] for b in data]
    for pair, idx in sorted(tok.merges.items(), key=lambda item: item[1]):
        ids = merge(ids, pair, idx)
    return ids


@settings(max_examples=100, deadline=None)
@given(valid_text)
def test_basic_round_trip_and_encode_is_merges_in_order(basic: BasicTokenizer, text: str) -> None:
    ids = basic.encode(text, disallowed_special=())
    assert basic.decode(ids) == text
    assert ids == apply_merges_in_order(basic, text.encode("utf-8"))


def test_basic_splits_nothing(basic: BasicTokenizer) -> None:
    # with no pattern, a merge may glue across a space: some token holds a letter and a space
    assert any(b" " in t.strip(b" ") for t in basic.vocab.values() if len(t) > 2)


# ---------------------------------------------------------------------------- regex
def test_regex_training(regex_tok: RegexTokenizer) -> None:
    assert regex_tok.pattern == GPT4_SPLIT_PATTERN
    assert len(regex_tok.merges) == 120
    # no token crosses a chunk boundary of the pattern
    for token in regex_tok.vocab.values():
        text = token.decode("utf-8", errors="ignore")
        assert len(split(text)) <= 1 or not text.isprintable() or len(text) < len(token), token


@settings(max_examples=100, deadline=None)
@given(valid_text)
def test_regex_round_trip_and_chunkwise_merges(regex_tok: RegexTokenizer, text: str) -> None:
    ids = regex_tok.encode(text, disallowed_special=())
    assert regex_tok.decode(ids) == text
    want = [i for chunk in split(text) for i in apply_merges_in_order(regex_tok, chunk.encode())]
    assert ids == want
    assert regex_tok.decode(regex_tok.encode(text, allowed_special="all")) == text


@settings(max_examples=100, deadline=None)
@given(any_text)
def test_regex_never_crashes_on_any_str(regex_tok: RegexTokenizer, text: str) -> None:
    ids = regex_tok.encode_ordinary(text)
    fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert regex_tok.decode(ids) == fixed


def test_train_is_deterministic_under_shuffling() -> None:
    """Equally frequent pairs: the result depends on counts only, not on text order."""
    words = [" low", " lower", " newest", " widest", " new", " wide", " slow", " snow"] * 3
    results = set()
    for seed in range(5):
        random.Random(seed).shuffle(words)
        tok = RegexTokenizer()
        tok.train("".join(words), 256 + 20)  # as many as the text allows
        results.add(tuple(tok.merges.items()))
    assert len(results) == 1


def test_retraining_replaces_merges() -> None:
    tok = RegexTokenizer()
    tok.train("aaaa", 257)
    tok.train("bbbb", 257)
    assert tok.merges == {(98, 98): 256}
    assert tok.vocab[256] == b"bb"


def test_gpt2_pattern_tokenizer_keeps_spaces_apart() -> None:
    tok = RegexTokenizer(GPT2_SPLIT_PATTERN)
    tok.train("a    b    c    d", 256 + 5)
    assert all(not t.endswith(b" ") or set(t) == {32} for t in tok.vocab.values())


def test_training_text_with_special_text_and_surrogates() -> None:
    tok = RegexTokenizer()
    tok.train("<|endoftext|>x\ud800", 260)  # special text is ordinary here; \ud800 -> U+FFFD
    assert tok.decode(tok.encode("<|endoftext|>", disallowed_special=())) == "<|endoftext|>"


# ---------------------------------------------------------------------------- pretrained
def test_pretrained_classes() -> None:
    for cls, name in [(GPT2Tokenizer, "r50k_base"), (GPT4Tokenizer, "cl100k_base")]:
        tok = cls()
        assert isinstance(tok, RegexTokenizer)
        assert tok.encoding_name == name
        assert tok.merges == ours(name).merges
    assert GPT4oTokenizer().encode("hello world") == [24912, 2375]


@pytest.mark.parametrize(
    ("name", "text", "ids"),
    [
        ("r50k_base", "hello world", [31373, 995]),
        ("r50k_base", "127", [16799]),
        ("cl100k_base", "hello world", [15339, 1917]),
        ("cl100k_base", " O", [507]),
        ("cl100k_base", " Oh", [8840]),
        ("cl100k_base", "12345", [4513, 1774]),
    ],
)
def test_known_ids(name: str, text: str, ids: list[int]) -> None:
    assert ours(name).encode(text) == ids


def test_gpt4_first_merges() -> None:
    vocab = ours("cl100k_base").vocab
    assert (vocab[256], vocab[258], vocab[259]) == (b"  ", b"in", b" t")


def test_recover_merges_small() -> None:
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"abc": 257, b"bc": 258})
    assert recover_merges(ranks) == {(97, 98): 256, (256, 99): 257, (98, 99): 258}
    ranks[b"xyz"] = 259  # BPE stops at x, y, z: no pair of them is a token
    with pytest.raises(ValueError, match=r"b'xyz' \(rank 259\) cannot be built"):
        recover_merges(ranks)


def test_render_token() -> None:
    assert render_token(b"hello") == "hello"
    assert render_token(b" \n\t") == " \\n\\t"
    assert render_token(b"\xe2\x82") == "\\xe2\\x82"
    assert render_token("é\u200b".encode()) == "é\\u200b"


def test_base_tokenizer_without_training() -> None:
    tok = Tokenizer()
    data = "héllo 👋".encode()
    assert tok.encode("héllo 👋") == list(data)
    assert tok.decode_bytes(list(data)) == data
    assert tok.n_vocab == 256
    tok.register_special_tokens({"<|x|>": 5000})
    assert tok.n_vocab == 5001


@given(st.lists(st.integers(0, 255), max_size=20))
def test_decode_replaces_invalid_utf8(ids: list[int]) -> None:
    tok = Tokenizer()
    assert tok.decode(ids) == bytes(ids).decode("utf-8", errors="replace")
