"""encode_iterable gives encode's ids however the text is cut, and keeps its buffer small;
StreamDecoder gives decode's text however the ids are fed."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse import assets, bpe
from tokcourse.fast_encode import FastEncoder
from tokcourse.stream import StreamDecoder, decode_stream, encode_iterable

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


# --- StreamDecoder, decode_stream ---------------------------------------------------------------

# bytes that make UTF-8 hard: ASCII, continuation bytes at the edges of the ranges that lead
# bytes allow after them, two-, three- and four-byte leads (E0, ED, F0, F4 restrict the next
# byte), and bytes UTF-8 never uses
_HARD_BYTES = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED]
_HARD_BYTES += [0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF]
_BYTE_VOCAB = {i: bytes([i]) for i in range(256)}


def _feed(decoder: StreamDecoder, ids: list[int], cuts: list[int]) -> list[str]:
    """Feed ``ids`` cut at ``cuts``, then end the stream; every piece that came out."""
    return [decoder.decode(part) for part in pieces_at(ids, cuts)] + [
        decoder.decode([], final=True)
    ]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.binary(min_size=1, max_size=4), max_size=12),  # the merged tokens
    st.data(),
)
def test_any_ids_any_cuts_give_decode(tokens: list[bytes], data: st.DataObject) -> None:
    vocab = _BYTE_VOCAB | {256 + i: token for i, token in enumerate(tokens)}
    byte_ids = st.one_of(st.sampled_from(_HARD_BYTES), st.integers(0, 255))
    any_id = st.one_of(byte_ids, st.sampled_from(sorted(vocab))) if tokens else byte_ids
    ids = data.draw(st.lists(any_id, max_size=30))
    cuts = data.draw(st.lists(st.integers(0, len(ids)), max_size=8))
    want = bpe.decode(ids, vocab)
    decoder = StreamDecoder(vocab)
    assert "".join(_feed(decoder, ids, cuts)) == want
    assert decoder.pending == b""  # the end of the stream leaves nothing behind...
    assert "".join(_feed(decoder, ids, [])) == want  # ...so the decoder starts afresh
    assert "".join(decode_stream(iter(ids), vocab)) == want


def test_every_cut_of_every_short_hard_sequence() -> None:
    """Exhaustive on short inputs: the incremental decoder replaces as the one-shot one does."""
    for n in range(1, 4):
        for seq in itertools.product(_HARD_BYTES, repeat=n):
            ids = list(seq)
            want = bytes(ids).decode("utf-8", errors="replace")
            for mask in range(2 ** (n - 1)):
                cuts = [i + 1 for i in range(n - 1) if mask >> i & 1]
                assert "".join(_feed(StreamDecoder(_BYTE_VOCAB), ids, cuts)) == want, (ids, cuts)


def test_text_comes_out_as_soon_as_it_is_complete() -> None:
    tok = ours("r50k_base")  # GPT-2: "👋" is several tokens
    text = "Hi 👋 안녕"
    ids = tok.encode(text)
    decoder = StreamDecoder(tok.vocab)
    out = [decoder.decode([idx]) for idx in ids]
    assert decoder.decode([], final=True) == ""
    assert "".join(out) == text
    assert "" in out  # some token ended inside a character and was held back
    assert "\ufffd" not in "".join(out)
    # token by token without holding back: broken characters, as a naive chat client shows
    assert "".join(tok.decode([idx]) for idx in ids) != text
    # each piece is everything the ids so far complete: the longest valid prefix
    for k in range(len(ids) + 1):
        data = b"".join(tok.vocab[i] for i in ids[:k])
        complete = data.decode("utf-8", errors="ignore")
        assert "".join(out[:k]) == complete


def test_decode_stream_is_lazy() -> None:
    def ids():
        yield from [104, 105]
        raise RuntimeError("read too far")

    stream = decode_stream(ids(), _BYTE_VOCAB)
    assert next(stream) == "h" and next(stream) == "i"
    with pytest.raises(RuntimeError, match="read too far"):
        next(stream)


def test_stream_decoder_bad_arguments() -> None:
    decoder = StreamDecoder(_BYTE_VOCAB)
    assert decoder.decode([0xE2]) == "" and decoder.pending == b"\xe2"
    with pytest.raises(KeyError, match="token id 999 is not in the vocabulary"):
        decoder.decode([0x82, 999])
    assert decoder.pending == b"\xe2"  # the bad call changed nothing
    with pytest.raises(TypeError, match=r"e\.g\. \[idx\]"):
        decoder.decode(0x82)  # type: ignore[arg-type]
    assert decoder.decode([0x82, 0xAC], final=True) == "€"
