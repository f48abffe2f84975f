"""encode_iterable gives encode's ids however the text is cut, and keeps its buffer small."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse import assets
from tokcourse.fast_encode import FastEncoder
from tokcourse.stream import encode_iterable

from ._parity import ENCODINGS, FRAGMENTS, PARITY_EXAMPLES, any_text, ours

# the hard places to cut: CRLF, white space runs, special tokens, emoji and combining sequences
HARD = (
    "a\r\nb \r\n\r\n  x\t \n\n   \n  y    z  \u3000\u00a0w  "
    "<|endoftext|><|endoftext|> <|fim_prefix|>x<|endofprompt|>"
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 e\u0301\u0301 \u0915\u094d\u0937 "
    "don't DON'T they'll 'll' '''ve 12345 HTTPServer camelCase.\n\n.\n\n/\n \ud83d\ude00\ud800."
)


def pieces_at(text: str, cuts: list[int]) -> list[str]:
    cuts = sorted(set(cuts))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


@pytest.mark.parametrize("name", ENCODINGS)
def test_every_single_cut_of_the_hard_text(name: str) -> None:
    tok = ours(name)
    want = tok.encode(HARD, allowed_special="all")
    for cut in range(len(HARD) + 1):
        got = list(tok.encode_iterable(pieces_at(HARD, [cut]), allowed_special="all"))
        assert got == want, f"cut at {cut}: {HARD[max(0, cut - 5) : cut]!r}|{HARD[cut:][:5]!r}"


@pytest.mark.parametrize("name", ENCODINGS)
def test_one_character_pieces(name: str) -> None:
    tok = ours(name)
    text = HARD + assets.botchan_text()[:3_000] + assets.stdlib_code(3_000)
    for allowed in ("all", ()):
        kwargs = {"allowed_special": allowed, "disallowed_special": ()}
        assert list(tok.encode_iterable(list(text), **kwargs)) == tok.encode(text, **kwargs)


@pytest.mark.parametrize("name", ENCODINGS)
def test_random_cuts_on_corpora(name: str) -> None:
    tok = ours(name)
    text = "<|endoftext|>".join(
        [HARD, assets.botchan_text()[:20_000], assets.stdlib_code(20_000), HARD]
    )
    want = tok.encode(text, allowed_special="all")
    rng = random.Random(name)
    for n_cuts in (1, 5, 50, 500, 5_000):
        pieces = pieces_at(text, rng.sample(range(len(text)), n_cuts))
        assert list(tok.encode_iterable(pieces, allowed_special="all")) == want


@pytest.mark.parametrize("name", ENCODINGS)
def test_generated_text_random_cuts(name: str) -> None:
    tok = ours(name)
    texts = st.lists(st.one_of(any_text, st.sampled_from(FRAGMENTS)), max_size=6).map("".join)

    @settings(max_examples=PARITY_EXAMPLES, deadline=None)
    @given(texts, st.lists(st.integers(0, 200), max_size=12))
    def check(text: str, cuts: list[int]) -> None:
        pieces = pieces_at(text, [c for c in cuts if c <= len(text)])
        got = list(tok.encode_iterable(pieces, allowed_special="all"))
        assert got == tok.encode(text, allowed_special="all")

    check()


def test_disallowed_special_split_across_pieces_raises() -> None:
    tok = ours("cl100k_base")
    with pytest.raises(ValueError, match="not allowed"):
        list(tok.encode_iterable(["hello <|endof", "text|> world"]))
    # allowed: recognized across the cut; disallowed_special=(): ordinary text
    assert list(
        tok.encode_iterable(["a<|endof", "text|>"], allowed_special={"<|endoftext|>"})
    ) == tok.encode("a<|endoftext|>", allowed_special={"<|endoftext|>"})
    pieces = ["a<|endof", "text|>"]
    assert list(tok.encode_iterable(pieces, disallowed_special=())) == tok.encode(
        "a<|endoftext|>", disallowed_special=()
    )


def test_buffer_stays_small() -> None:
    # a generator that never holds the text: the buffer must not grow with it
    enc = FastEncoder({}, pattern=ours("cl100k_base").pattern)
    seen = []

    def lines():
        for i in range(2_000):
            line = f"line {i}: some words here, and more\n"
            seen.append(len(line))
            yield line

    stream = encode_iterable(enc, lines())
    frame_sizes = []
    total = 0
    for total, _ in enumerate(stream, 1):  # noqa: B007 - we count the ids
        frame = stream.gi_frame
        if frame is not None and total % 500 == 0:
            frame_sizes.append(frame.f_locals["held"])  # characters held back
    assert total == sum(seen)  # no merges: one id per byte
    assert max(frame_sizes) < 200


def test_bad_arguments() -> None:
    tok = ours("cl100k_base")
    with pytest.raises(TypeError, match="not one str"):
        list(tok.encode_iterable("hello"))
    with pytest.raises(TypeError, match="piece 1 must be a str"):
        list(tok.encode_iterable(["a", b"b"]))  # type: ignore[list-item]
    with pytest.raises(ValueError, match="lookahead"):
        list(encode_iterable(tok.fast_encoder(), ["a"], lookahead=0))
