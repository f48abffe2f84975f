"""Our pretrained tokenizers give tiktoken's ids, exactly: on corpora and on generated strings.

Default run: a few hundred Hypothesis strings per encoding and a bounded slice of the stdlib.
Big run (``make test-full``):

    TOKCOURSE_PARITY_EXAMPLES=50000 pytest tests/test_parity.py -m "slow or not slow" -n 2
"""

from __future__ import annotations

import time

import pytest
import tiktoken
from hypothesis import given, settings

from tokcourse import assets

from ._parity import (
    ENCODINGS,
    PARITY_EXAMPLES,
    any_text,
    code_points_that_differ,
    ours,
    require_slow,
    tiktoken_encoding,
    valid_text,
)

STDLIB_SLICE_BYTES = 300_000


def assert_same_ids(name: str, text: str, label: str) -> None:
    enc, tok = tiktoken_encoding(name), ours(name)
    want = enc.encode_ordinary(text)
    got = tok.encode_ordinary(text)
    if got != want:
        # show the first chunk that differs, not a million-id diff
        i = next(i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b)
        context = tok.decode(want[max(0, i - 5) : i + 5])
        pytest.fail(f"{name} on {label}: first difference at id {i}, around {context!r}")
    assert tok.decode(got) == enc.decode(want)


# ---------------------------------------------------------------------------- tables
@pytest.mark.parametrize("name", ENCODINGS)
def test_vocab_is_tiktokens(name: str) -> None:
    enc, tok = tiktoken_encoding(name), ours(name)
    assert tok.special_tokens == enc._special_tokens
    assert tok.n_vocab == enc.n_vocab
    assert len(tok.vocab) + len(tok.special_tokens) == len(enc._mergeable_ranks) + len(
        enc._special_tokens
    )
    assert len(tok.merges) == len(enc._mergeable_ranks) - 256
    assert tok.vocab == {rank: token for token, rank in enc._mergeable_ranks.items()}
    for idx in enc._special_tokens.values():
        assert tok.decode_bytes([idx]) == enc.decode_single_token_bytes(idx)


@pytest.mark.parametrize("name", ENCODINGS)
def test_byte_permutation(name: str) -> None:
    tok = ours(name)
    assert sorted(tok.byte_shuffle) == list(range(256))
    assert tok.byte_shuffle != tuple(range(256))  # GPT-2's printable-first order
    assert tok.byte_shuffle[ord("!")] == 0 and tok.byte_shuffle[0] == 188
    assert tok.encode("\x00!") == [188, 0]


def test_gpt2_is_r50k() -> None:
    try:
        gpt2 = tiktoken.get_encoding("gpt2")
    except Exception as err:  # not cached yet: run `python -m tokcourse.course.data.assets setup`
        pytest.skip(f"tiktoken 'gpt2' not available offline: {err!r:.80}")
    r50k = tiktoken_encoding("r50k_base")
    assert gpt2._mergeable_ranks == r50k._mergeable_ranks
    assert gpt2._special_tokens == r50k._special_tokens
    assert gpt2._pat_str == r50k._pat_str
    text = assets.botchan_text()[:50_000]
    assert ours("r50k_base").encode(text) == gpt2.encode(text)


def test_construction_is_cached_and_fresh() -> None:
    from tokcourse.pretrained import GPT4Tokenizer

    ours("cl100k_base")  # tables computed (at most once per process)
    start = time.perf_counter()
    a, b = GPT4Tokenizer(), GPT4Tokenizer()
    assert time.perf_counter() - start < 5  # copying cached tables, not recovering merges
    a.register_special_tokens({"<|im_start|>": 100264})
    assert "<|im_start|>" not in b.special_tokens  # each call builds a fresh tokenizer


# ---------------------------------------------------------------------------- corpora
@pytest.mark.parametrize("name", ENCODINGS)
def test_parity_botchan(name: str) -> None:
    assert_same_ids(name, assets.botchan_text(), "botchan")


@pytest.mark.parametrize("name", ENCODINGS)
def test_parity_stdlib_slice(name: str) -> None:
    assert_same_ids(name, assets.stdlib_code(max_bytes=STDLIB_SLICE_BYTES), "stdlib slice")


@pytest.mark.parametrize("name", ENCODINGS)
def test_parity_parallel_text(name: str) -> None:
    for lang, messages in assets.parallel_text().items():
        assert_same_ids(name, "\n".join(messages), f"parallel text [{lang}]")
        # message by message too: short texts end in places a long one never does
        enc, tok = tiktoken_encoding(name), ours(name)
        for message in messages:
            assert tok.encode_ordinary(message) == enc.encode_ordinary(message), message


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
def test_parity_full_stdlib(name: str, request: pytest.FixtureRequest) -> None:
    require_slow(request)
    assert_same_ids(name, assets.stdlib_code(), "the whole stdlib")


@pytest.mark.slow
@pytest.mark.parametrize("name", ENCODINGS)
def test_parity_every_code_point(name: str, request: pytest.FixtureRequest) -> None:
    """Each of the 1,112,064 code points in a few contexts (batched, bisected on failure)."""
    require_slow(request)
    enc, tok = tiktoken_encoding(name), ours(name)
    contexts = [
        "a{c}a",
        " {c}{c}",
        "1{c}1",
        "A{c}b",
        "{c}'s",
        "'{c}",
        "{c}\n",
        " {c} ",
        "{c}{c}{c}",
    ]

    def agree(text: str) -> bool:
        return tok.encode_ordinary(text) == enc.encode_ordinary(text)

    bad = code_points_that_differ(agree, contexts, end="|")
    assert bad == [], [f"U+{c:04X}" for c in bad[:50]]


# ---------------------------------------------------------------------------- generated
@pytest.mark.parametrize("name", ENCODINGS)
def test_parity_generated(name: str, record_property) -> None:
    """Hypothesis strings (surrogates included): same ids, same errors, same decode."""
    enc, tok = tiktoken_encoding(name), ours(name)
    seen = []

    @settings(max_examples=PARITY_EXAMPLES, deadline=None)
    @given(any_text)
    def check(text: str) -> None:
        seen.append(len(text))
        want = enc.encode_ordinary(text)
        assert tok.encode_ordinary(text) == want
        assert tok.encode(text, disallowed_special=()) == want
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
        assert tok.decode(want) == enc.decode(want)

    start = time.perf_counter()
    check()
    seconds = time.perf_counter() - start
    record_property("strings", len(seen))
    print(f"\n{name}: {len(seen)} generated strings ({sum(seen)} characters) in {seconds:.1f} s")
    assert len(seen) >= PARITY_EXAMPLES  # the run covered as many strings as it claims


@pytest.mark.parametrize("name", ENCODINGS)
def test_round_trip_pretrained(name: str) -> None:
    tok = ours(name)

    @settings(max_examples=max(50, PARITY_EXAMPLES // 3), deadline=None)
    @given(valid_text)
    def check(text: str) -> None:
        assert tok.decode(tok.encode(text, disallowed_special=())) == text
        assert tok.decode(tok.encode(text, allowed_special="all")) == text

    check()


# ---------------------------------------------------------------------------- surrogates
@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("\ud83d", "\ufffd"),  # a lone high surrogate becomes U+FFFD
        ("a\udc00 b", "a\ufffd b"),  # so does a lone low surrogate
        ("\ud83d\ude00", "\U0001f600"),  # a high+low pair becomes the character it encodes
        ("\ude00\ud83d", "\ufffd\ufffd"),  # in the wrong order: two replacements
        ("x\ud800\ud800y", "x\ufffd\ufffdy"),
    ],
)
def test_surrogates_like_tiktoken(name: str, text: str, decoded: str) -> None:
    enc, tok = tiktoken_encoding(name), ours(name)
    ids = tok.encode(text)
    assert ids == enc.encode(text)
    assert tok.decode(ids) == decoded


def test_the_code_point_search_finds_exactly_the_culprits() -> None:
    """The bisection used by the every-code-point parity runs (here and for sentencepiece)."""
    culprits = {"é", "😀", "\U0010ffff"}
    bad = code_points_that_differ(lambda text: not culprits & set(text), ["<{c}>"], end="|")
    assert bad == sorted(map(ord, culprits))
