"""Our SentencePiece BPE gives sentencepiece's ids and text, exactly, on the Mistral 7B v1 model.

Default run: botchan line by line, every translated message of every Sphinx catalogue, and a
couple of hundred Hypothesis strings and id lists. Big run (``make test-full``): botchan in one
piece, every code point in a few contexts, and ``TOKCOURSE_PARITY_EXAMPLES`` Hypothesis strings
and id lists:

    TOKCOURSE_PARITY_EXAMPLES=50000 pytest tests/test_sentencepiece_parity.py -m "slow or not slow"
"""

from __future__ import annotations

import functools

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st
from sentencepiece import sentencepiece_model_pb2 as pb

from tokcourse import assets
from tokcourse.course.data import corpora
from tokcourse.sentencepiece_bpe import (
    SPACE,
    SentencePieceBPE,
    byte_fallback_pieces,
    byte_piece,
    decode_byte_pieces,
    merge_by_score,
    piece_byte,
)

from ._parity import (
    FRAGMENTS,
    PARITY_EXAMPLES,
    code_points_that_differ,
    hostile_texts,
    require_slow,
)


@functools.cache
def model_bytes() -> bytes:
    return assets.mistral_model_path().read_bytes()


@functools.cache
def theirs() -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_proto=model_bytes())


@functools.cache
def ours() -> SentencePieceBPE:
    return SentencePieceBPE(model_bytes())


def assert_same(text: str, label: str) -> None:
    want, got = theirs().encode(text), ours().encode(text)
    if got != want:
        i = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), None)
        i = min(len(got), len(want)) if i is None else i
        pytest.fail(
            f"{label}: first difference at id {i} in {text!r:.200}: {got[i : i + 5]} "
            f"!= {want[i : i + 5]}"
        )
    assert ours().decode(got) == theirs().decode(want), label


# ---------------------------------------------------------------------------- corpora
def test_botchan_line_by_line() -> None:
    lines = assets.botchan_text().splitlines()
    mismatched = [line for line in lines if ours().encode(line) != theirs().encode(line)]
    assert mismatched == []
    assert len(lines) > 3000


def test_botchan_whole() -> None:
    assert_same(assets.botchan_text()[:60_000], "botchan, first 60,000 characters")


def test_parallel_text_every_language() -> None:
    catalogues = corpora.po_catalogues()
    assert len(catalogues) > 50
    texts = {msgid for cat in catalogues.values() for msgid in cat}  # the English too
    texts |= {msg for cat in catalogues.values() for msg in cat.values()}
    bad = [t for t in sorted(texts) if ours().encode(t) != theirs().encode(t)]
    assert bad == []


@pytest.mark.slow
def test_botchan_in_one_piece(request: pytest.FixtureRequest) -> None:
    require_slow(request)
    assert_same(assets.botchan_text(), "botchan, whole")


# ---------------------------------------------------------------------------- fuzz
SP_FRAGMENTS = [
    *FRAGMENTS,
    SPACE,
    SPACE * 3,
    " " + SPACE,
    "<0x41>",
    "<s>",
    "</s>",
    "<unk>",
    "\u2047",
    "\ua66e",  # a rare letter: byte fallback
    "\U00013000",  # an Egyptian hieroglyph
    "\U000e0001",  # a tag character
    "\U0010fffd",  # the last private-use plane
    "\x01\x1f",
    "          ",
]
sp_piece = st.one_of(
    st.sampled_from(SP_FRAGMENTS),
    st.text(alphabet=" \t\n\r", min_size=1, max_size=12),  # whitespace runs
    st.text(alphabet=".*-=!a", min_size=3, max_size=10),  # runs with equal-score pairs: ties
    st.characters(codec="utf-8"),
    st.text(st.characters(codec="utf-8"), max_size=6),
    st.text(st.characters(min_codepoint=0x300, max_codepoint=0x36F), min_size=1, max_size=3),
    st.text(st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3), min_size=1, max_size=5),
    st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=5),
    st.text(st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF), min_size=1, max_size=3),
    st.sampled_from(["\u200d", "\ufe0f", "\U0001f3fd"]),  # ZWJ, variation selector, skin tone
    st.sampled_from(["the", " the", "Hello", " world", "ing", "1234", "3.14"]),
)
sp_text = st.lists(sp_piece, max_size=14).map("".join)

ids = st.lists(
    st.one_of(
        st.integers(0, 31_999),
        st.integers(0, 2),  # <unk>, <s>, </s>
        st.integers(3, 258),  # byte pieces: runs of them must decode like sentencepiece's
        st.sampled_from([28705, 259, 22557, 1526, 13]),  # '▁', '▁▁', '▁Hello', '▁world', bytes
    ),
    max_size=20,
)


SMALL_FUZZ = min(PARITY_EXAMPLES, 200)


@settings(max_examples=SMALL_FUZZ, deadline=None)
@given(sp_text)
def test_fuzz_encode(text: str) -> None:
    assert_same(text, "fuzz")


@settings(max_examples=SMALL_FUZZ, deadline=None)
@given(ids)
def test_fuzz_decode(id_list: list[int]) -> None:
    assert ours().decode(id_list) == theirs().decode(id_list)


@pytest.mark.slow
def test_fuzz_encode_large(record_property) -> None:
    seen = []

    @settings(max_examples=PARITY_EXAMPLES, deadline=None)
    @given(sp_text)
    def check(text: str) -> None:
        seen.append(len(text))
        assert_same(text, "large fuzz")

    check()
    record_property("strings", len(seen))
    assert len(seen) >= PARITY_EXAMPLES  # the run covered as many strings as it claims


@pytest.mark.slow
def test_fuzz_decode_large() -> None:
    seen = []

    @settings(max_examples=PARITY_EXAMPLES, deadline=None)
    @given(ids)
    def check(id_list: list[int]) -> None:
        seen.append(len(id_list))
        assert ours().decode(id_list) == theirs().decode(id_list)

    check()
    assert len(seen) >= PARITY_EXAMPLES


@pytest.mark.slow
def test_every_code_point() -> None:
    """Each of the 1,112,064 code points in a few contexts (batched, bisected on failure)."""
    contexts = ["a{c}a", " {c}{c}", "{c}\n", "{c}  {c}"]

    def agree(text: str) -> bool:
        return ours().encode(text) == theirs().encode(text)

    bad = code_points_that_differ(agree, contexts)
    assert bad == [], [f"U+{c:04X}" for c in bad[:50]]


@pytest.fixture(autouse=True)
def _slow_gate(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("slow"):
        require_slow(request)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "   ",
        "\n",
        " hello",
        "hello ",
        "a  b",
        "안녕하세요",
        "🤗",
        "\U0001f468\u200d\U0001f469",
        "ꙮ",
        "\x00",
        "e\u0301",
        "<s>",
        SPACE,
        "▁▁▁▁▁▁▁▁▁",
        "12345",
        "\ufffd",
        "......",  # ties: '..' + '..' twice; the leftmost goes first ('▁', '....', '..')
        ".....",
        "*****",
    ],
)
def test_edge_cases(text: str) -> None:
    assert_same(text, "edge case")


def test_decode_edge_cases() -> None:
    tok = ours()
    cases = [
        [],
        [1, 28705, 2, 28705, 22557],  # control pieces are invisible but do not eat the prefix
        [0, 0, 28705],  # <unk> shows as the model's unk_surface
        [231, 130, 33, 28705],  # an incomplete UTF-8 sequence: one U+FFFD per bad byte
        [3 + 0xED, 3 + 0xA0, 3 + 0x80],  # a UTF-8-encoded surrogate: invalid
        [3 + 0xEF, 3 + 0xBF, 3 + 0xBD],  # U+FFFD itself: valid
        [3 + 0x41, 22557],  # bytes first: the later '▁Hello' keeps its space
        [28705],
        [259, 259],
    ]
    for case in cases:
        assert tok.decode(case) == theirs().decode(case), case


# ---------------------------------------------------------------------------- pieces
def test_byte_pieces_round_trip() -> None:
    assert [byte_piece(b) for b in (0, 10, 255)] == ["<0x00>", "<0x0A>", "<0xFF>"]
    assert all(piece_byte(byte_piece(b)) == b for b in range(256))
    assert piece_byte("<0x0a>") is None and piece_byte("<0x0A") is None
    text = "안녕 🤗 ꙮ"
    assert decode_byte_pieces(byte_fallback_pieces(text)) == text
    pieces = ["<0xE2>", "<0x82>", "<0x21>"]
    assert decode_byte_pieces(pieces) == theirs().decode([theirs().piece_to_id(p) for p in pieces])


def test_byte_pieces_are_the_models() -> None:
    tok = ours()
    assert [tok.piece_to_id(byte_piece(b)) for b in range(256)] == list(range(3, 259))


def test_merge_by_score_matches_the_model() -> None:
    tok = ours()
    scores = {p: s for p, s, t in zip(tok.pieces, tok.scores, tok.types, strict=True) if t == 1}
    for text in ["Hello world", "     spaces", "unbelievable tokenization", "ab" * 40]:
        assert merge_by_score(list(tok.normalize(text)), scores) == tok.encode_as_pieces(text)


def test_merge_by_score_ties_go_left() -> None:
    assert merge_by_score(list("aaa"), {"aa": 0.0}) == ["aa", "a"]
    assert merge_by_score(list("abc"), {"ab": -1.0, "bc": -1.0}) == ["ab", "c"]
    assert merge_by_score(list("abc"), {"ab": -2.0, "bc": -1.0}) == ["a", "bc"]


# ---------------------------------------------------------------------------- errors
def _mistral_variant(edit) -> bytes:
    proto = pb.ModelProto()
    proto.ParseFromString(model_bytes())
    edit(proto)
    return proto.SerializeToString()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda p: setattr(p.trainer_spec, "model_type", 1), "UNIGRAM"),
        (lambda p: setattr(p.normalizer_spec, "precompiled_charsmap", b"xx"), "character map"),
        (lambda p: setattr(p.trainer_spec, "treat_whitespace_as_suffix", True), "suffix"),
        (lambda p: setattr(p.pieces[300], "type", 4), "user-defined"),
        (lambda p: setattr(p.pieces[3], "piece", "<0xZZ>"), "<0x00>"),
        (lambda p: setattr(p.pieces[0], "type", 1), "<unk>"),
        (lambda p: setattr(p.pieces[400], "piece", p.pieces[401].piece), "already defined"),
    ],
)
def test_refuses_models_it_cannot_match(edit, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SentencePieceBPE(_mistral_variant(edit))


def test_errors_name_the_bad_value() -> None:
    tok = ours()
    with pytest.raises(ValueError, match="not a SentencePiece model"):
        SentencePieceBPE(b"\xff\xff\xff")
    with pytest.raises(TypeError, match="not str"):
        SentencePieceBPE("tokenizer.model")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not bytes"):
        tok.encode(b"hello")  # type: ignore[arg-type]
    with pytest.raises(IndexError, match="32000"):
        tok.decode([32_000])
    with pytest.raises(IndexError, match="-1"):
        tok.decode([-1])
    with pytest.raises(TypeError, match="not float"):
        tok.decode([1.0])  # type: ignore[list-item]
    import numpy as np

    assert tok.decode(np.array([22557, 1526])) == "Hello world"
    with pytest.raises(ValueError, match="256"):
        byte_piece(256)
    with pytest.raises(ValueError, match="'▁a'"):
        decode_byte_pieces(["<0x41>", "▁a"])


# ---------------------------------------------------------------------------- work
class CountingScores(dict):
    """A score table that counts lookups: the work of a merge loop, never timed."""

    lookups = 0

    def get(self, key, default=None):
        CountingScores.lookups += 1
        return super().get(key, default)


def _heap_pushes(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    import heapq

    count = 0
    real = heapq.heappush

    def counting(heap, item):
        nonlocal count
        count += 1
        real(heap, item)

    monkeypatch.setattr(heapq, "heappush", counting)
    ours().encode(text)
    monkeypatch.undo()
    return count


@pytest.mark.parametrize("shape", sorted(hostile_texts(10)))
def test_encode_does_near_linear_work(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    small = _heap_pushes(hostile_texts(2_000, seed=1)[shape], monkeypatch)
    large = _heap_pushes(hostile_texts(8_000, seed=1)[shape], monkeypatch)
    assert large <= 4 * small * 1.25 + 50, (shape, small, large)


def test_the_work_measure_sees_a_quadratic_loop() -> None:
    tok = ours()
    scores = CountingScores(zip(tok.pieces, tok.scores, strict=True))

    def lookups(n: int) -> int:
        CountingScores.lookups = 0
        merge_by_score(list(tok.normalize("ab" * n)), scores)
        return CountingScores.lookups

    assert lookups(400) > 10 * lookups(100)  # the plain loop rescans: four times the text,
    # far more than four times the lookups (it would fail the linear test above)


# ---------------------------------------------------------------------------- other settings
@functools.cache
def trained(variant: str) -> bytes:
    """A small model trained on botchan with identity normalization and one setting changed."""
    import io

    options = dict(
        model_type="bpe", vocab_size=600, character_coverage=1.0, byte_fallback=True,
        normalization_rule_name="identity", add_dummy_prefix=True,
        remove_extra_whitespaces=False, allow_whitespace_only_pieces=True, split_digits=True,
        num_threads=1, minloglevel=2,
    )  # fmt: skip
    changes = {
        "no byte fallback": {"byte_fallback": False},
        "remove extra whitespaces": {"remove_extra_whitespaces": True},
        "no dummy prefix": {"add_dummy_prefix": False},
        "spaces not escaped": {},
    }[variant]
    out = io.BytesIO()
    lines = assets.botchan_text().splitlines()[:1500] + ["안녕 하세요", "  🤗  ", "a\tb"]
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, **(options | changes)
    )
    if variant != "spaces not escaped":
        return out.getvalue()
    proto = pb.ModelProto.FromString(out.getvalue())
    proto.normalizer_spec.escape_whitespaces = False
    return proto.SerializeToString()


VARIANTS = ["no byte fallback", "remove extra whitespaces", "no dummy prefix", "spaces not escaped"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_other_settings(variant: str) -> None:
    data = trained(variant)
    sp, tok = spm.SentencePieceProcessor(model_proto=data), SentencePieceBPE(data)
    texts = ["", " ", "   a  b   ", "\t x \n", "안녕하세요 🤗 ꙮ", "ꙮꙮ ꙮ", "▁x▁", " ▁", "▁ "]
    texts += assets.botchan_text().splitlines()[1500:1800]
    for text in texts:
        assert tok.encode(text) == sp.encode(text), (variant, text)
        assert tok.decode(sp.encode(text)) == sp.decode(sp.encode(text)), (variant, text)

    @settings(max_examples=SMALL_FUZZ // 2, deadline=None)
    @given(sp_text, st.lists(st.integers(0, sp.vocab_size() - 1), max_size=12))
    def check(text: str, id_list: list[int]) -> None:
        assert tok.encode(text) == sp.encode(text)
        assert tok.decode(id_list) == sp.decode(id_list)

    check()
