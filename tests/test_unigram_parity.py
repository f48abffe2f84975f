"""Our unigram encoder gives sentencepiece's ids and text, exactly, on unigram models we train.

The models are trained here, on botchan, with ``spm.SentencePieceTrainer.train``
(``model_type="unigram"``, ``normalization_rule_name="identity"``: we implement no other
normalization, ``num_threads=1``); training twice gives the same bytes (a test below).

Default run: botchan line by line and as one string (with and without its newlines), every
string of the Sphinx catalogues, edge cases, a few hundred Hypothesis strings and a seeded
fuzz, on the main model and on variants (byte fallback, no dummy prefix, split digits,
user-defined and control symbols, unused pieces). Big run (``make test-full``):
``TOKCOURSE_PARITY_EXAMPLES`` Hypothesis strings, every code point in a few contexts:

    TOKCOURSE_PARITY_EXAMPLES=50000 pytest tests/test_unigram_parity.py -m "slow or not slow"
"""

from __future__ import annotations

import functools
import io
import math
import random
from array import array
from collections import Counter

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from sentencepiece import sentencepiece_model_pb2 as pb

from tokcourse.course.data import corpora
from tokcourse.sentencepiece_bpe import UNUSED, SentencePieceBPE
from tokcourse.unigram import SentencePieceUnigram, segmentations

from . import test_sentencepiece_parity as bpe_parity
from ._parity import PARITY_EXAMPLES, code_points_that_differ, require_slow

BASE = dict(
    model_type="unigram", vocab_size=4000, character_coverage=1.0,
    normalization_rule_name="identity", num_threads=1, minloglevel=2,
)  # fmt: skip
VARIANTS = {
    "main": {},
    "byte fallback": {"byte_fallback": True},
    "no dummy prefix": {"add_dummy_prefix": False},
    "split digits": {"split_digits": True},
    "whitespace kept": {"remove_extra_whitespaces": False, "allow_whitespace_only_pieces": True},
    "user-defined": {"user_defined_symbols": ["<sep>", "USD", "ab", "the"]},
    "control": {"control_symbols": ["<ctl>"]},
}


@functools.cache
def lines() -> list[str]:
    return corpora.botchan_text().splitlines()


@functools.cache
def trained(variant: str) -> bytes:
    """A unigram model trained on botchan (the main one on all of it, variants on 2,000 lines)."""
    out = io.BytesIO()
    text = lines() if variant == "main" else lines()[:2000] + ["안녕 하세요", "  🤗  ", "a\tb"]
    options = BASE | VARIANTS[variant] | ({} if variant == "main" else {"vocab_size": 2000})
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_writer=out, **options)
    return out.getvalue()


@functools.cache
def theirs(variant: str = "main") -> spm.SentencePieceProcessor:
    return spm.SentencePieceProcessor(model_proto=trained(variant))


@functools.cache
def ours(variant: str = "main") -> SentencePieceUnigram:
    return SentencePieceUnigram(trained(variant))


def mismatches(texts, tok=None, sp=None) -> list[str]:
    tok, sp = tok or ours(), sp or theirs()
    return [t for t in texts if tok.encode(t) != sp.encode(t)]


@pytest.fixture(autouse=True)
def _slow_gate(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("slow"):
        require_slow(request)


# ---------------------------------------------------------------------------- the model
def test_training_is_deterministic() -> None:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines()), model_writer=out, **BASE)
    assert out.getvalue() == trained("main")
    proto = pb.ModelProto.FromString(trained("main"))
    assert proto.trainer_spec.model_type == 1 and len(proto.pieces) == 4000
    assert not proto.normalizer_spec.precompiled_charsmap  # identity: nothing to map


# ---------------------------------------------------------------------------- corpora
def test_botchan_line_by_line() -> None:
    assert len(lines()) > 3000
    assert mismatches(lines()) == []


def test_catalogues_every_language() -> None:
    catalogues = corpora.po_catalogues()
    texts = {msgid for cat in catalogues.values() for msgid in cat}
    texts |= {msg for cat in catalogues.values() for msg in cat.values()}
    assert len(texts) > 10_000
    assert mismatches(sorted(texts)) == []


EDGE_CASES = [
    "", " ", "   ", "\n", " hello", "hello ", "a  b", "안녕하세요", "🤗", "ꙮ", "\x00", "e\u0301",
    "<s>", "</s>", "<unk>", "▁", "▁▁▁", "12345", "\ufffd", "......", ".....", "-----", "!!!!",
    "aaaaaaaaaaaa", "the the the", "zzz", "Botchan", "I'm", "don't", "\t\t", "a\u00a0b",
]  # fmt: skip


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_edge_cases_and_held_out_lines(variant: str) -> None:
    tok, sp = ours(variant), theirs(variant)
    texts = [*EDGE_CASES, "<sep>x<sep>", "USD12345 dollars", "a<sep>b", "<ctl> x"]
    texts += lines()[2000:2400]
    assert mismatches(texts, tok, sp) == []
    for text in texts[:60]:
        assert tok.decode(sp.encode(text)) == sp.decode(sp.encode(text)), (variant, text)


def test_seeded_fuzz() -> None:
    rng = random.Random(11)
    alphabet = "abcdeghilmnorst  ..--!!'\"\n\t0123456789ABC▁éü안녕🤗ꙮ\x00\u0301"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(1500)]
    for variant in ("main", "byte fallback", "user-defined"):
        assert mismatches(texts, ours(variant), theirs(variant)) == [], variant


SMALL_FUZZ = min(PARITY_EXAMPLES, 200)


@settings(max_examples=SMALL_FUZZ, deadline=None)
@given(bpe_parity.sp_text)
def test_fuzz_encode(text: str) -> None:
    assert ours().encode(text) == theirs().encode(text)
    bf_ids = theirs("byte fallback").encode(text)
    assert ours("byte fallback").encode(text) == bf_ids
    assert ours("byte fallback").decode(bf_ids) == theirs("byte fallback").decode(bf_ids)


@pytest.mark.slow
def test_fuzz_encode_large(record_property) -> None:
    seen = []

    @settings(max_examples=PARITY_EXAMPLES, deadline=None)
    @given(bpe_parity.sp_text)
    def check(text: str) -> None:
        seen.append(len(text))
        for variant in ("main", "byte fallback"):
            assert ours(variant).encode(text) == theirs(variant).encode(text), variant

    check()
    record_property("strings", len(seen))
    assert len(seen) >= PARITY_EXAMPLES


def test_botchan_in_one_piece() -> None:
    """One string of 70,435 tokens (totals far beyond float32's exact range): the same ids, and
    the same again with the newlines, unknown to the model, replaced by spaces."""
    text = corpora.botchan_text()
    for label, whole in [("as is", text), ("no newlines", text.replace("\n", " "))]:
        want = theirs().encode(whole)
        assert _first_difference(ours().encode(whole), want) is None, label
    assert len(theirs().encode(text)) == 70_435


class NoScoreReset(SentencePieceUnigram):
    """The optimized encoder without sentencepiece 0.2.3's score reset."""

    def best_path(self, normalized: str) -> list[tuple[str, int]]:
        import tokcourse.unigram as module

        saved, module.SCORE_RESET = module.SCORE_RESET, float("inf")
        try:
            return super().best_path(normalized)
        finally:
            module.SCORE_RESET = saved


def test_without_the_score_reset_the_whole_novel_differs() -> None:
    """The reset is needed: without it float32 totals near -436,000 break near-ties otherwise."""
    text = corpora.botchan_text()
    got = NoScoreReset(trained("main")).encode(text)
    assert _first_difference(got, theirs().encode(text)) == 23_036


def _first_difference(got: list[int], want: list[int]) -> int | None:
    return next((i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b), None)


class Float64Totals(SentencePieceUnigram):
    """Totals in double precision: ties that float32 rounding breaks become exact ties."""

    def best_path(self, normalized: str) -> list[tuple[str, int]]:
        n = len(normalized)
        best, start_of, id_of = [0.0] * (n + 1), [-1] * (n + 1), [-1] * (n + 1)
        for start in range(n):
            nodes = [
                (end, self._normal[normalized[start:end]])
                for end in range(start + 1, min(n, start + self._longest) + 1)
                if normalized[start:end] in self._normal
                and self.types[self._normal[normalized[start:end]]] != UNUSED
            ]
            if not any(end == start + 1 for end, _ in nodes):
                nodes.append((start + 1, self.unk_id))
            for end, idx in nodes:
                score = self.unk_score if idx == self.unk_id else self._node_score[idx]
                total = best[start] + score
                if start_of[end] == -1 or total > best[end]:
                    best[end], start_of[end], id_of[end] = total, start, idx
        out, end = [], n
        while end > 0:
            out.append((normalized[start_of[end] : end], id_of[end]))
            end = start_of[end]
        return out[::-1]


def test_float64_totals_break_ties_differently() -> None:
    sp, wide = theirs("byte fallback"), Float64Totals(trained("byte fallback"))
    assert sp.encode("-----", out_type=str) == ["▁", "--", "--", "-"]
    assert ours("byte fallback").encode_as_pieces("-----") == ["▁", "--", "--", "-"]
    assert wide.encode_as_pieces("-----") == ["▁", "-", "--", "--"]  # an exact tie in float64


@pytest.mark.slow
def test_every_code_point() -> None:
    contexts = ["a{c}a", " {c}{c}", "{c}\n"]
    tok, sp = ours("byte fallback"), theirs("byte fallback")
    bad = code_points_that_differ(lambda t: tok.encode(t) == sp.encode(t), contexts)
    assert bad == [], [f"U+{c:04X}" for c in bad[:50]]


# ---------------------------------------------------------------------------- unused pieces
def _edited(edit, variant: str = "main") -> bytes:
    proto = pb.ModelProto.FromString(trained(variant))
    edit(proto)
    return proto.SerializeToString()


def _unuse_letters(proto) -> None:
    for piece in proto.pieces:
        if piece.piece in ("z", "q", "x", "j", "▁the"):
            piece.type = UNUSED


def test_unused_pieces_are_never_chosen() -> None:
    data = _edited(_unuse_letters)
    tok, sp = SentencePieceUnigram(data), spm.SentencePieceProcessor(model_proto=data)
    texts = [*lines()[:800], "zzz", "jazz quiz", "the xylophone", "▁the"]
    assert mismatches(texts, tok, sp) == []
    assert "▁the" not in tok.encode_as_pieces("the end")


# ---------------------------------------------------------------------------- it can fail
class TiesGoRight(SentencePieceUnigram):
    """The opposite tie-break: a later candidate with an equal total replaces the best."""

    def best_path(self, normalized: str) -> list[tuple[str, int]]:
        n = len(normalized)
        best, start_of, id_of = [0.0] * (n + 1), [-1] * (n + 1), [-1] * (n + 1)
        f32 = array("f", [0.0])
        for start in range(n):
            nodes = [
                (end, self._normal[normalized[start:end]])
                for end in range(start + 1, min(n, start + self._longest) + 1)
                if normalized[start:end] in self._normal
            ]
            nodes = [(end, i) for end, i in nodes if self.types[i] != UNUSED]
            if not any(end == start + 1 for end, _ in nodes):
                nodes.append((start + 1, self.unk_id))
            for end, idx in nodes:
                f32[0] = best[start] + (
                    self.unk_score if idx == self.unk_id else self._node_score[idx]
                )
                if start_of[end] == -1 or f32[0] >= best[end]:  # '>=': the bug
                    best[end], start_of[end], id_of[end] = f32[0], start, idx
        out, end = [], n
        while end > 0:
            out.append((normalized[start_of[end] : end], id_of[end]))
            end = start_of[end]
        return out[::-1]


def _tiny_model(unk_case: bool = True) -> bytes:
    """A hand-made unigram model where the unknown-character penalty decides the answer.

    'b' is unknown (no piece of its own). '▁ab' is '▁a' + <unk> or '▁' + 'ab'; with the
    penalty <unk> scores min - 10 = -18 and '▁' + 'ab' (-16) wins; without it <unk> scores
    -8 and '▁a' + <unk> (-9) wins.
    """
    proto = pb.ModelProto()
    proto.trainer_spec.model_type = 1
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.add_dummy_prefix = True
    proto.normalizer_spec.escape_whitespaces = True
    proto.normalizer_spec.remove_extra_whitespaces = True
    for piece, score, kind in [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3),
                               ("▁a", -1.0, 1), ("▁", -8.0, 1), ("ab", -8.0, 1),
                               ("a", -3.0, 1), ("c", -3.0, 1)]:  # fmt: skip
        proto.pieces.add(piece=piece, score=score, type=kind)
    return proto.SerializeToString()


def test_the_unknown_penalty_decides_a_hand_made_case() -> None:
    data = _tiny_model()
    sp, tok = spm.SentencePieceProcessor(model_proto=data), SentencePieceUnigram(data)
    assert sp.encode("ab", out_type=str) == ["▁", "ab"] == tok.encode_as_pieces("ab")
    assert tok.unk_score == -18.0
    no_penalty = SentencePieceUnigram(data)
    no_penalty.unk_score = no_penalty.min_score
    assert no_penalty.encode_as_pieces("ab") == ["▁a", "b"]  # wrong: <unk> for 'b'
    assert no_penalty.encode("ab") != sp.encode("ab")


def test_the_opposite_tie_break_is_caught() -> None:
    wrong = TiesGoRight(trained("main"))
    assert wrong.encode("hello world") == theirs().encode("hello world")  # mostly the same...
    assert mismatches(lines(), wrong) == [
        "about a castle-town of 250,000-koku Lord! Pity the fellows who get"
    ]  # ...one botchan line differs ('000' is '0' + '00' or '00' + '0')...
    runs = [c * k for c in "-e0." for k in range(2, 14)]
    assert len(mismatches(runs, wrong)) >= 15  # ...and runs of one character often do


# ---------------------------------------------------------------------------- refusals
def test_refusals_name_the_reason() -> None:
    with pytest.raises(ValueError, match="UNIGRAM"):
        SentencePieceBPE(trained("main"))
    bpe_model = bpe_parity.trained("no byte fallback")
    with pytest.raises(ValueError, match="model_type is BPE; this class implements UNIGRAM"):
        SentencePieceUnigram(bpe_model)
    nfkc = _edited(lambda p: setattr(p.normalizer_spec, "precompiled_charsmap", b"xx"))
    with pytest.raises(ValueError, match="character map"):
        SentencePieceUnigram(nfkc)
    suffix = _edited(lambda p: setattr(p.trainer_spec, "treat_whitespace_as_suffix", True))
    with pytest.raises(ValueError, match="suffix"):
        SentencePieceUnigram(suffix)


# ---------------------------------------------------------------------------- n-best, sampling
@functools.cache
def words() -> list[str]:
    return sorted({w for line in lines()[:400] for w in line.split()})[:300]


def test_nbest_matches_sentencepiece_up_to_the_order_of_equal_scores() -> None:
    tok, sp = ours(), theirs()
    same_order = 0
    for word in words():
        want = [tuple(p) for p in sp.nbest_encode_as_pieces(word, 10)]
        got = tok.nbest(word, 10)
        assert len(got) == len(want), word
        same_order += [tuple(p) for p, _ in got] == want
        scores = {tuple(p): s for p, s in got}
        last = got[-1][1]
        for pieces in want:  # each of theirs is ours, or ties with our last one
            assert pieces in scores or math.isclose(
                sum(tok.scores[tok.piece_to_id(p)] for p in pieces), last, abs_tol=1e-4
            ), (word, pieces)
    assert same_order >= len(words()) - 5, same_order  # 299 of 300 on this model


def _chi_square(counts: Counter, probs: dict, n: int) -> tuple[float, int]:
    """Pearson's statistic over the segmentations with an expected count of 5 or more
    (the rest pooled into one cell), and its degrees of freedom."""
    big = {k: p for k, p in probs.items() if p * n >= 5}
    rest_p = 1 - sum(big.values())
    stat = sum((counts[k] - p * n) ** 2 / (p * n) for k, p in big.items())
    rest = n - sum(counts[k] for k in big)
    if rest_p * n >= 5:
        stat += (rest - rest_p * n) ** 2 / (rest_p * n)
        return stat, len(big)
    return stat, len(big) - 1


def chi2_999(dof: int) -> float:
    """The chi-square quantile at p = 0.999, by Wilson-Hilferty (a little above the true
    one: 11.2 for 1 degree of freedom where it is 10.8, 33.1 for 12 where it is 32.9)."""
    z = 3.0902  # the normal quantile at 0.999
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


@pytest.mark.parametrize(("word", "alpha"), [("hello", 0.5), ("teacher", 0.2), ("Botchan", 1.0)])
def test_sampling_follows_the_exact_probabilities(word: str, alpha: float) -> None:
    tok = ours()
    exact = segmentations(tok.normalize(word), tok.log_probs(), alpha=alpha)
    assert math.isclose(sum(exact.values()), 1.0)
    n = 4000
    rng = random.Random(0)  # fixed: the test is deterministic
    counts = Counter(tuple(tok.sample(word, alpha, rng)) for _ in range(n))
    stat, dof = _chi_square(counts, exact, n)
    assert dof >= 1 and stat < chi2_999(dof), (stat, dof)
    spm.set_random_generator_seed(1)  # sentencepiece's sampler against the same probabilities
    theirs_counts = Counter(
        tuple(theirs().encode(word, out_type=str, enable_sampling=True, alpha=alpha,
                              nbest_size=-1))
        for _ in range(n)
    )  # fmt: skip
    stat, dof = _chi_square(theirs_counts, exact, n)
    assert stat < chi2_999(dof), (stat, dof)


def test_the_sampling_test_can_fail() -> None:
    tok = ours()
    exact = segmentations(tok.normalize("teacher"), tok.log_probs(), alpha=0.2)
    rng = random.Random(0)
    wrong = Counter(tuple(tok.sample("teacher", 0.4, rng)) for _ in range(4000))  # alpha off
    stat, dof = _chi_square(wrong, exact, 4000)
    assert stat > 10 * chi2_999(dof), (stat, dof)
