"""Hostile SentencePiece models and texts: we refuse where sentencepiece refuses, else we agree.

Each model here is built with the protobuf (``sentencepiece_model_pb2``) and loaded by both
``spm.SentencePieceProcessor`` (0.2.3, the version ``constraints.txt`` pins) and our readers.
"""

from __future__ import annotations

import math
import random
import struct
import tracemalloc

import pytest
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

from tokcourse.model_file import MAX_PIECE_BYTES
from tokcourse.sentencepiece_bpe import (
    BYTE,
    CONTROL,
    MAX_RESEGMENT_DEPTH,
    NORMAL,
    UNKNOWN,
    UNUSED,
    USER_DEFINED,
    SentencePieceBPE,
    byte_piece,
)
from tokcourse.unigram import SentencePieceUnigram

BPE, UNIGRAM = 2, 1
CLASSES = {BPE: SentencePieceBPE, UNIGRAM: SentencePieceUnigram}


def _proto(model_type: int, pieces, byte_fallback: bool = False) -> pb.ModelProto:
    """A model with identity normalization: <unk>, <s>, </s>, byte pieces if asked, then
    ``pieces`` as ``(piece, score, type)``."""
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = model_type
    proto.trainer_spec.byte_fallback = byte_fallback
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.escape_whitespaces = True
    proto.normalizer_spec.remove_extra_whitespaces = True
    proto.pieces.add(piece="<unk>", score=0.0, type=UNKNOWN)
    proto.pieces.add(piece="<s>", score=0.0, type=CONTROL)
    proto.pieces.add(piece="</s>", score=0.0, type=CONTROL)
    if byte_fallback:
        for b in range(256):
            proto.pieces.add(piece=byte_piece(b), score=0.0, type=BYTE)
    for piece, score, kind in pieces:
        proto.pieces.add(piece=piece, score=score, type=kind)
    return proto


def _letters(model_type: int, byte_fallback: bool = False, extra=()) -> bytes:
    pieces = [(c, -1.0 - i, NORMAL) for i, c in enumerate("▁abc")]
    return _proto(model_type, [*pieces, *extra], byte_fallback).SerializeToString()


def _sp(data: bytes) -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_proto=data)


def _sp_refusal(data: bytes) -> str:
    with pytest.raises(RuntimeError) as err:
        _sp(data)
    return str(err.value)


# ---------------------------------------------------------------------------- 1. invalid UTF-8
PLACEHOLDER, INVALID = "QXQ", b"\xff\xfeQ"  # same length: the protobuf stays well formed


@pytest.mark.parametrize("model_type", [BPE, UNIGRAM])
@pytest.mark.parametrize("kind", [NORMAL, USER_DEFINED, UNUSED, CONTROL])
def test_a_piece_that_is_not_utf8_is_refused_at_load(model_type: int, kind: int) -> None:
    data = _letters(model_type, extra=[(PLACEHOLDER, -9.0, kind)])
    data = data.replace(PLACEHOLDER.encode(), INVALID)
    with pytest.raises(ValueError, match=r"pieces\[7\]\.piece is not valid UTF-8: b'\\xff\\xfeQ'"):
        CLASSES[model_type](data)
    # sentencepiece loads it, and fails when a decode meets it (a CONTROL piece decodes to '')
    sp = _sp(data)
    if kind != CONTROL:
        with pytest.raises(UnicodeDecodeError):
            sp.decode([7])


@pytest.mark.parametrize("model_type", [BPE, UNIGRAM])
def test_an_unk_surface_that_is_not_utf8_is_refused_at_load(model_type: int) -> None:
    proto = pb.ModelProto.FromString(_letters(model_type))
    proto.trainer_spec.unk_surface = PLACEHOLDER
    data = proto.SerializeToString().replace(PLACEHOLDER.encode(), INVALID)
    with pytest.raises(ValueError, match=r"trainer_spec\.unk_surface is not valid UTF-8"):
        CLASSES[model_type](data)
    with pytest.raises(UnicodeDecodeError):
        _sp(data).decode([0])


@pytest.mark.parametrize("model_type", [BPE, UNIGRAM])
def test_nul_characters_in_pieces_as_sentencepiece(model_type: int) -> None:
    for piece, kind in [("a\0b", NORMAL), ("\0", NORMAL), ("\0", CONTROL)]:
        data = _letters(model_type, extra=[(piece, -3.0, kind)])
        assert "null character" in _sp_refusal(data)
        with pytest.raises(ValueError, match=r"pieces\[7\]\.piece .* has a NUL character"):
            CLASSES[model_type](data)
    # a lone "\0" that is UNUSED loads (twice, even): sentencepiece leaves it out of its tables
    data = _letters(model_type, extra=[("\0", -3.0, UNUSED), ("\0", -4.0, UNUSED)])
    sp, ours = _sp(data), CLASSES[model_type](data)
    for text in ["a\0b", "\0", "ab\0\0c"]:
        assert ours.encode(text) == sp.encode(text), text
    for ids in ([7], [4, 7, 5]):
        assert ours.decode(ids) == sp.decode(ids), ids


def test_a_file_error_names_the_file(tmp_path) -> None:
    path = tmp_path / "bad.model"
    path.write_bytes(_letters(BPE, extra=[(PLACEHOLDER, -9.0, NORMAL)]).replace(b"QXQ", INVALID))
    with pytest.raises(ValueError, match=r"bad\.model: pieces\[7\]\.piece is not valid UTF-8"):
        SentencePieceBPE.from_file(path)


# ---------------------------------------------------------------------------- 2. empty file
@pytest.mark.parametrize("cls", [SentencePieceBPE, SentencePieceUnigram])
def test_an_empty_file_has_no_pieces(cls, tmp_path) -> None:
    path = tmp_path / "empty.model"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.model: .*no pieces"):
        cls.from_file(path)
    with pytest.raises(ValueError, match="no pieces") as err:
        cls(b"")
    assert "model_type" not in str(err.value)
    with pytest.raises(RuntimeError, match="unk is not defined"):
        spm.SentencePieceProcessor(model_file=str(path))


# ---------------------------------------------------------------------------- 3. unused chains
def _unused_chain(length: int) -> bytes:
    """'▁a', '▁aa', ... '▁' + 'a' * length, all UNUSED: 'aaa...' merges into the longest,
    which sentencepiece splits again, one level per piece, down to MAX_RESEGMENT_DEPTH."""
    chain = [("▁" + "a" * k, -float(k), UNUSED) for k in range(1, length + 1)]
    return _proto(BPE, [("▁", -0.5, NORMAL), ("a", -0.5, NORMAL), *chain]).SerializeToString()


@pytest.mark.parametrize("length", [3, 99, 100, 101, 102, 150, 3000])
def test_a_chain_of_unused_pieces_resegments_as_sentencepiece(length: int) -> None:
    data = _unused_chain(length)
    sp, ours = _sp(data), SentencePieceBPE(data)
    for text in ["a" * length, "a" * length + " " + "a" * 5, "a" * (length + 3)]:
        assert ours.encode(text) == sp.encode(text), (length, text[:20])
    if length == 3000:  # the old recursive split raised RecursionError here
        ids = ours.encode("a" * length)
        assert len(ids) == MAX_RESEGMENT_DEPTH + 2  # the piece left at depth 101, then 'a's
        assert ours.id_to_piece(ids[0]) == "▁" + "a" * (length - MAX_RESEGMENT_DEPTH - 1)


def test_a_reserved_piece_is_unknown_to_bpe() -> None:
    """A character that is only a CONTROL piece is <unk> in BPE output; a piece both normal
    and reserved is refused ("already defined"), as in sentencepiece's single BPE table."""
    data = _proto(BPE, [("▁", -1.0, NORMAL), ("a", -1.0, NORMAL), ("c", 0.0, CONTROL)])
    data = data.SerializeToString()
    sp, ours = _sp(data), SentencePieceBPE(data)
    for text in ["ac", "c", "a c a"]:
        assert ours.encode(text) == sp.encode(text), text
    twice = _proto(BPE, [("a", -1.0, NORMAL), ("a", 0.0, CONTROL)]).SerializeToString()
    assert "already defined" in _sp_refusal(twice)
    with pytest.raises(ValueError, match="already defined"):
        SentencePieceBPE(twice)


# ---------------------------------------------------------------------------- 4. long pieces
@pytest.mark.parametrize("model_type", [BPE, UNIGRAM])
def test_a_piece_of_8000_bytes_is_refused_as_sentencepiece_refuses_it(model_type: int) -> None:
    emoji = _letters(model_type, extra=[("🤗" * 40_000, -5.0, NORMAL)])  # 160 KB
    assert "piece is too long" in _sp_refusal(emoji)
    with pytest.raises(ValueError, match=r"pieces\[7\]\.piece is too long: 160000 bytes"):
        CLASSES[model_type](emoji)
    at_limit = _letters(model_type, extra=[("é" * (MAX_PIECE_BYTES // 2), -5.0, NORMAL)])
    assert "piece is too long" in _sp_refusal(at_limit)
    with pytest.raises(ValueError, match="8000 bytes"):
        CLASSES[model_type](at_limit)
    below = _letters(model_type, extra=[("a" * (MAX_PIECE_BYTES - 1), -5.0, NORMAL)])
    sp, ours = _sp(below), CLASSES[model_type](below)
    for text in ["abc", "a" * 50, "cab ba"]:
        assert ours.encode(text) == sp.encode(text), text


def test_loading_long_unigram_pieces_takes_linear_memory() -> None:
    """Three pieces of 7,999 characters: a set of every prefix held 96 MB; a trie holds a
    node per character."""
    pieces = [(c * (MAX_PIECE_BYTES - 1), -5.0, NORMAL) for c in "abc"]
    data = _letters(UNIGRAM, extra=pieces)
    tracemalloc.start()
    try:
        tok = SentencePieceUnigram(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 30_000_000, peak
    assert tok.encode("abc cab") == _sp(data).encode("abc cab")


# ---------------------------------------------------------------------------- 5. NaN and inf
@pytest.mark.parametrize("score", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("where", [3, 4, 0])  # a normal piece, the first letter, <unk>
def test_a_unigram_score_that_is_nan_or_inf_is_refused(score: float, where: int) -> None:
    proto = pb.ModelProto.FromString(_letters(UNIGRAM))
    proto.pieces[where].score = score
    data = proto.SerializeToString()
    assert "score is NaN or Inf" in _sp_refusal(data)
    with pytest.raises(ValueError, match=rf"pieces\[{where}\]\.score is {score}.*NaN or Inf"):
        SentencePieceUnigram(data)


NEG_NAN = struct.unpack("<f", struct.pack("<I", 0xFFC00000))[0]  # a NaN with the sign bit


def test_bpe_merges_nan_inf_and_signed_zero_scores_in_sentencepiece_order() -> None:
    """sentencepiece's BPE loads any score and orders float32 bit patterns (IEEE totalOrder):
    -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN. Float comparisons tie -0.0 and
    +0.0 and cannot order NaN."""
    scores = [math.nan, NEG_NAN, math.inf, -math.inf, 0.0, -0.0, -1.0]
    pairs = ["ab", "bc", "ca", "ba", "cb", "▁a", "▁b", "▁c", "abc", "bca", "cab", "aa", "bb"]
    rng = random.Random(25)
    for trial in range(40):
        extra = [(p, rng.choice(scores), NORMAL) for p in pairs]
        data = _letters(BPE, extra=extra)
        sp, ours = _sp(data), SentencePieceBPE(data)
        for _ in range(25):
            text = "".join(rng.choice("abc ") for _ in range(rng.randrange(1, 12)))
            assert ours.encode(text) == sp.encode(text), (trial, text, extra)
    signed_zero = _letters(BPE, extra=[("ab", -0.0, NORMAL), ("bc", 0.0, NORMAL)])
    assert SentencePieceBPE(signed_zero).encode_as_pieces("abc") == ["▁", "a", "bc"]
    assert _sp(signed_zero).encode("abc", out_type=str) == ["▁", "a", "bc"]


# ---------------------------------------------------------------------------- 6. surrogates
SURROGATE_TEXTS = ["\ud800", "a\udfffb", "\udc80", "\ud83d\ude00", "ok \udbff", "é\ud800"]


@pytest.mark.parametrize("model_type", [BPE, UNIGRAM])
@pytest.mark.parametrize("byte_fallback", [False, True])
def test_a_lone_surrogate_is_refused_as_sentencepiece_refuses_it(
    model_type: int, byte_fallback: bool
) -> None:
    data = _letters(model_type, byte_fallback)
    sp, ours = _sp(data), CLASSES[model_type](data)
    for text in SURROGATE_TEXTS:
        with pytest.raises(RuntimeError, match="Unable to cast"):
            sp.encode(text)
        position = next(i for i, c in enumerate(text) if 0xD800 <= ord(c) < 0xE000)
        with pytest.raises(ValueError, match=rf"lone surrogate\) at position {position}"):
            ours.encode(text)
        with pytest.raises(ValueError, match="lone surrogate"):
            ours.encode_as_pieces(text)
    assert ours.encode("abc é") == sp.encode("abc é")  # the check refuses surrogates only
