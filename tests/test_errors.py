"""Bad input gets a clear error that names the bad value, never a wrong answer.

One table: (what is called, the exception, a regex its message must match).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tokcourse import bpe
from tokcourse.basic import BasicTokenizer
from tokcourse.pretrained import GPT4Tokenizer, PretrainedTokenizer
from tokcourse.regex import RegexTokenizer
from tokcourse.tokenizer import Tokenizer


def trained() -> RegexTokenizer:
    tok = RegexTokenizer()
    tok.train("hello hello world", 260)
    return tok


def with_special(idx: int) -> Callable[[], None]:
    def call() -> None:
        tok = BasicTokenizer()
        tok.register_special_tokens({"<|endoftext|>": idx})
        tok.train("aaaa bbbb", 258)

    return call


def register(mapping) -> Callable[[], None]:
    def call() -> None:
        tok = trained()
        tok.register_special_tokens({"<|endoftext|>": 1000})
        tok.register_special_tokens(mapping)

    return call


ERRORS = [
    # --- ids given to decode
    (
        "negative id",
        lambda: trained().decode([104, -1]),
        ValueError,
        r"unknown token id -1 at position 1",
    ),
    (
        "id out of range",
        lambda: trained().decode([260]),
        ValueError,
        r"unknown token id 260 .*0\.\.259",
    ),
    (
        "huge id",
        lambda: Tokenizer().decode([10**30]),
        ValueError,
        r"unknown token id 1000000000000000000000000000000",
    ),
    ("bool id", lambda: trained().decode([True]), TypeError, r"got the bool True at position 0"),
    ("float id", lambda: trained().decode([104.0]), TypeError, r"got float 104\.0 at position 0"),
    ("str id", lambda: trained().decode(["104"]), TypeError, r"got str '104'"),
    ("None id", lambda: trained().decode([None]), TypeError, r"got NoneType None"),
    (
        "ids is a str",
        lambda: trained().decode("hello"),
        TypeError,
        r"ids must be a list of ints, got str",
    ),
    ("ids is bytes", lambda: trained().decode_bytes(b"hi"), TypeError, r"got bytes"),
    ("ids is None", lambda: trained().decode(None), TypeError, r"got NoneType"),
    ("ids is an int", lambda: trained().decode(104), TypeError, r"got int"),
    (
        "ids is a set",
        lambda: trained().decode({104, 105}),
        TypeError,
        r"got set, which has no order",
    ),
    (
        "ids is a frozenset",
        lambda: trained().decode_bytes(frozenset({104})),
        TypeError,
        r"ordered sequence of ints .* got frozenset",
    ),
    (
        "ids is a dict",
        lambda: trained().decode({104: 1}),
        TypeError,
        r"got dict, which has no order",
    ),
    (
        "strict decode of half a char",
        lambda: Tokenizer().decode([226], errors="strict"),
        UnicodeDecodeError,
        r"can't decode byte 0xe2",
    ),
    (
        "unknown errors handler",
        lambda: Tokenizer().decode([226], errors="bogus"),
        LookupError,
        r"bogus",
    ),
    # --- text given to encode
    ("bytes text", lambda: trained().encode(b"hello"), TypeError, r"text must be a str, got bytes"),
    ("None text", lambda: trained().encode(None), TypeError, r"text must be a str, got NoneType"),
    ("int text ordinary", lambda: trained().encode_ordinary(5), TypeError, r"got int: 5"),
    ("list text", lambda: BasicTokenizer().encode(["a"]), TypeError, r"got list"),
    # --- special-token arguments
    (
        "allowed_special is a str",
        lambda: trained().encode("x", allowed_special="<|endoftext|>"),
        TypeError,
        r"did you mean allowed_special=\{'<\|endoftext\|>'\}",
    ),
    (
        "disallowed_special='none'",
        lambda: trained().encode("x", disallowed_special="none"),
        TypeError,
        r"disallowed_special must be \"all\" or a set",
    ),
    (
        "allowed_special holds an int",
        lambda: trained().encode("x", allowed_special={1}),
        TypeError,
        r"must hold strings, got int: 1",
    ),
    (
        "allowed_special is an int",
        lambda: trained().encode("x", allowed_special=1),
        TypeError,
        r"got int: 1",
    ),
    (
        "disallowed empty string",
        lambda: trained().encode("x", disallowed_special={""}),
        ValueError,
        r"empty string",
    ),
    (
        "disallowed text present",
        lambda: GPT4Tokenizer().encode("a<|fim_middle|>"),
        ValueError,
        r"'<\|fim_middle\|>', which is not allowed",
    ),
    # --- training
    (
        "empty training text",
        lambda: BasicTokenizer().train("", 300),
        ValueError,
        r"cannot train on empty text",
    ),
    (
        "empty training text regex",
        lambda: RegexTokenizer().train("", 256),
        ValueError,
        r"cannot train on empty text",
    ),
    (
        "vocab_size below 256",
        lambda: BasicTokenizer().train("abc", 255),
        ValueError,
        r"at least 256 .* got 255",
    ),
    ("vocab_size negative", lambda: RegexTokenizer().train("abc", -1), ValueError, r"got -1"),
    (
        "vocab_size too big basic",
        lambda: BasicTokenizer().train("abc", 259),
        ValueError,
        r"needs 3 merges, but the training text only allows 2.*vocab_size <= 258",
    ),
    (
        "vocab_size too big regex",
        lambda: RegexTokenizer().train("a b c", 259),
        ValueError,
        r"only allows 2",
    ),
    (
        "vocab_size float",
        lambda: BasicTokenizer().train("abc", 257.0),
        TypeError,
        r"vocab_size must be an int, got float",
    ),
    ("vocab_size bool", lambda: BasicTokenizer().train("abc", True), TypeError, r"got bool"),
    ("vocab_size str", lambda: RegexTokenizer().train("abc", "300"), TypeError, r"got str"),
    (
        "vocab_size above 2**32",
        lambda: RegexTokenizer().train("abc", 2**32 + 1),
        ValueError,
        r"at most 2\*\*32 .* got 4294967297",
    ),
    (
        "training special empty",
        lambda: RegexTokenizer().train("a b c", 257, special_tokens=["<|x|>", ""]),
        ValueError,
        r"special_tokens\[1\] is the empty string.*cut into single characters",
    ),
    (
        "training special None",
        lambda: RegexTokenizer().train("a b c", 257, special_tokens=[None]),
        TypeError,
        r"special_tokens\[0\] must be a str, got NoneType: None",
    ),
    (
        "training specials not a collection",
        lambda: RegexTokenizer().train("a b c", 257, special_tokens=5),
        TypeError,
        r"special_tokens must be a collection of str .* got int: 5",
    ),
    (
        "training text bytes",
        lambda: BasicTokenizer().train(b"abc", 257),
        TypeError,
        r"text must be a str, got bytes",
    ),
    ("training text None", lambda: RegexTokenizer().train(None, 257), TypeError, r"got NoneType"),
    (
        "special id in training range",
        with_special(257),
        ValueError,
        r"\{'<\|endoftext\|>': 257\} use ids that training",
    ),
    ("base cannot train", lambda: Tokenizer().train("abc", 300), NotImplementedError, r"use Basic"),
    (
        "pretrained cannot train",
        lambda: GPT4Tokenizer().train("abc", 300),
        NotImplementedError,
        r"start from a RegexTokenizer",
    ),
    ("bpe.train empty", lambda: bpe.train(b"", 300), ValueError, r"empty"),
    ("bpe.train int", lambda: bpe.train(123, 300), TypeError, r"str or bytes, got int"),
    (
        "bpe.train_on_chunks str",
        lambda: bpe.train_on_chunks("abc", 300),
        TypeError,
        r"not one str/bytes",
    ),
    (
        "bpe.train_on_chunks empty",
        lambda: bpe.train_on_chunks(["", b""], 300),
        ValueError,
        r"empty",
    ),
    ("no pair to pick", lambda: bpe.most_frequent_pair({}, {}), ValueError, r"no pairs"),
    # --- patterns
    (
        "invalid pattern",
        lambda: RegexTokenizer("(?P<x"),
        ValueError,
        r"invalid split pattern '\(\?P<x'",
    ),
    ("empty pattern", lambda: RegexTokenizer(""), ValueError, r"empty"),
    ("pattern not a str", lambda: RegexTokenizer(123), TypeError, r"must be a str, got int: 123"),
    ("pattern None for regex", lambda: RegexTokenizer(None), TypeError, r"use BasicTokenizer"),
    (
        "pattern set to invalid",
        lambda: setattr(RegexTokenizer(), "pattern", "[a-"),
        ValueError,
        r"invalid split pattern '\[a-'",
    ),
    (
        "pattern skips text on encode",
        lambda: RegexTokenizer(r"\p{L}+").encode("ab cd"),
        ValueError,
        r"skips ' ' at position 2",
    ),
    (
        "pattern skips text on train",
        lambda: RegexTokenizer(r"\p{L}+").train("ab cd", 257),
        ValueError,
        r"skips ' ' at position 2",
    ),
    # --- special tokens
    ("special name empty", register({"": 2000}), ValueError, r"non-empty str, got ''"),
    ("special name not str", register({5: 2000}), ValueError, r"non-empty str, got 5"),
    (
        "special id of a byte",
        register({"<|x|>": 65}),
        ValueError,
        r"'<\|x\|>' would take id 65, already the ordinary token b'A'",
    ),
    (
        "special id of a merge",
        register({"<|x|>": 256}),
        ValueError,
        r"id 256, already the ordinary token",
    ),
    ("special id negative", register({"<|x|>": -5}), ValueError, r"negative id -5"),
    (
        "special id bool",
        register({"<|x|>": True}),
        TypeError,
        r"bool True for special token '<\|x\|>'",
    ),
    ("special id str", register({"<|x|>": "1001"}), TypeError, r"got str '1001'"),
    (
        "special id taken",
        register({"<|x|>": 1000}),
        ValueError,
        r"id 1000 is already '<\|endoftext\|>'",
    ),
    (
        "special renumbered",
        register({"<|endoftext|>": 1001}),
        ValueError,
        r"already has id 1000, not 1001",
    ),
    ("specials not a dict", register([("<|x|>", 2000)]), TypeError, r"must be a dict .* got list"),
    ("special lone surrogate", register({"<|\ud800|>": 2000}), ValueError, r"not valid Unicode"),
    (
        "special id above 2**32-1",
        register({"<|x|>": 10**40}),
        ValueError,
        r"'<\|x\|>' has the id 10{40}, above the largest token id 4294967295",
    ),
    (
        "pattern lone surrogate",
        lambda: RegexTokenizer("\ud800|."),
        ValueError,
        r"split pattern .* lone surrogate '\\ud800' at position 0",
    ),
    (
        "pattern set to lone surrogate",
        lambda: setattr(RegexTokenizer(), "pattern", "a|\udc00"),
        ValueError,
        r"not valid Unicode",
    ),
    # --- pretrained and files
    ("unknown encoding", lambda: PretrainedTokenizer("gpt5_base"), ValueError, r"gpt5_base"),
    (
        "pretrained from an int",
        lambda: PretrainedTokenizer(5),
        TypeError,
        r"needs a tiktoken encoding name such as 'cl100k_base' or a tiktoken\.Encoding, got int: 5",
    ),
    (
        "trust_pattern not a bool",
        lambda: RegexTokenizer().load("x.model", trust_pattern="yes"),
        TypeError,
        r"trust_pattern must be True or False, got 'yes'",
    ),
    (
        "missing model file",
        lambda: RegexTokenizer().load("/nonexistent/x.model"),
        FileNotFoundError,
        r"x\.model",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [pytest.param(call, error, message, id=name) for name, call, error, message in ERRORS],
)
def test_error_table(call: Callable[[], object], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert re.search(message, str(info.value), re.DOTALL), str(info.value)
    assert type(info.value) is error or error is LookupError


def test_table_ids_are_unique() -> None:
    names = [name for name, *_ in ERRORS]
    assert len(names) == len(set(names))


def test_numpy_integers_are_ids() -> None:
    np = pytest.importorskip("numpy")
    tok = trained()
    ids = tok.encode("hello")
    assert tok.decode(np.array(ids)) == "hello"
    with pytest.raises(TypeError, match="bool"):
        tok.decode([np.bool_(True)])


@pytest.mark.parametrize("cls", [BasicTokenizer, RegexTokenizer])
def test_numpy_integers_are_vocab_sizes(cls) -> None:
    """Wherever an id is accepted as a numpy integer, so is a vocab_size (bools never)."""
    np = pytest.importorskip("numpy")
    expected = cls()
    expected.train("hello hello world", 260)
    for size in (np.int64(260), np.uint16(260), np.int32(260)):
        tok = cls()
        tok.train("hello hello world", size)
        assert tok.merges == expected.merges
    tok = cls()
    tok.register_special_tokens({"<|x|>": np.int64(300)})
    tok.train("hello hello world", np.int64(260))  # the clash check handles numpy too
    with pytest.raises(ValueError, match=r"use ids that training"):
        tok.train("hello hello world", np.int64(301))
    with pytest.raises(TypeError, match="vocab_size must be an int, got bool"):
        cls().train("hello", np.bool_(True))
    for bad in (260.0, np.float64(260)):
        with pytest.raises(TypeError, match="vocab_size must be an int, got float"):
            cls().train("hello", bad)


def test_disallowed_special_none_checks_nothing_as_in_tiktoken() -> None:
    tiktoken = pytest.importorskip("tiktoken")
    text = "a<|endoftext|> b<|fim_prefix|>"
    expected = tiktoken.get_encoding("cl100k_base").encode(text, disallowed_special=None)
    gpt4 = GPT4Tokenizer()
    assert gpt4.encode(text, disallowed_special=None) == expected
    assert gpt4.encode(text, disallowed_special=()) == expected
    assert list(gpt4.encode_iterable([text], disallowed_special=None)) == expected
    allowed = tiktoken.get_encoding("cl100k_base").encode(
        text, allowed_special={"<|endoftext|>"}, disallowed_special=None
    )
    assert gpt4.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=None) == allowed


def test_decode_takes_ordered_iterables() -> None:
    """tiktoken takes only sequences; we also take other ordered iterables, never sets."""
    tok = trained()
    ids = tok.encode("hello")
    assert tok.decode(tuple(ids)) == tok.decode(iter(ids)) == tok.decode(i for i in ids) == "hello"


def test_failed_calls_leave_the_tokenizer_unchanged() -> None:
    tok = trained()
    merges, vocab, specials = dict(tok.merges), dict(tok.vocab), dict(tok.special_tokens)
    for bad in [lambda: tok.train("", 300), lambda: tok.train("abc", 400)]:
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(ValueError):
        tok.register_special_tokens({"<|a|>": 5000, "<|b|>": 65})  # second one is bad
    assert (tok.merges, tok.vocab, tok.special_tokens) == (merges, vocab, specials)
