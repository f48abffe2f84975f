"""Tests for tokcourse.course.glitch: partial UTF-8, reachability, ranking, AUC, drift."""

from __future__ import annotations

import numpy as np
import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

from tokcourse.course import glitch
from tokcourse.course.checks.glitch import tiny_encoding


@given(st.text(max_size=20))
def test_whole_text_is_never_partial(text):
    assert glitch.is_partial_utf8(text.encode("utf-8")) is False


@given(st.text(min_size=1, max_size=20).filter(lambda t: any(ord(c) > 0x7F for c in t)))
def test_a_character_cut_short_is_partial(text):
    data = text.encode("utf-8")
    last = max(i for i, c in enumerate(text) if ord(c) > 0x7F)
    start = len(text[:last].encode("utf-8"))
    assert glitch.is_partial_utf8(data[: start + 1]) is True  # its lead byte only


@pytest.mark.parametrize(
    "data, partial",
    [
        (b"", False),
        (b"\xef\xbf\xbd", False),  # U+FFFD itself is a character
        (b"\xc0\x80", True),  # overlong
        (b"\xed\xa0\x80", True),  # a surrogate
        (b"\xf4\x90\x80\x80", True),  # above U+10FFFF
        (b"\x80abc", True),
    ],
)
def test_is_partial_utf8_edge_cases(data, partial):
    assert glitch.is_partial_utf8(data) is partial


def test_is_partial_utf8_refuses_str():
    with pytest.raises(TypeError, match="str"):
        glitch.is_partial_utf8("é")


def test_never_in_utf8_bytes_are_exactly_the_ones_no_text_has():
    seen = set(
        "".join(chr(c) for c in range(0x10FFFF + 1) if not 0xD800 <= c < 0xE000).encode("utf-8")
    )
    assert glitch.NEVER_IN_UTF8 == set(range(256)) - seen
    assert len(glitch.NEVER_IN_UTF8) == 13


def test_is_reachable_on_a_tiny_encoding():
    enc = tiny_encoding("tiny_gpt2")
    rank = enc._mergeable_ranks
    assert glitch.is_reachable(rank[b" the"], enc) is True
    assert glitch.is_reachable(rank[b"a."], enc) is False  # the pattern cuts it: 'a', '.'
    assert glitch.is_reachable(rank[b" 's"], enc) is False  # " '" then "s"
    assert glitch.is_reachable(rank[b" \xc3"], enc) is False  # not text
    assert glitch.is_reachable(rank[b"\xef\xbf\xbd"], enc) is True  # U+FFFD is text
    assert glitch.is_reachable(300, enc) is False  # the special token
    for bad in (len(rank), 299, 301, -1, 10**12):  # a gap before the special id, out of range
        with pytest.raises(ValueError, match=str(bad)):
            glitch.is_reachable(bad, enc)
    with pytest.raises(TypeError):
        glitch.is_reachable(True, enc)


def test_is_reachable_on_gpt2_and_the_definition():
    gpt2 = tiktoken.get_encoding("gpt2")
    (magikarp,) = gpt2.encode(" SolidGoldMagikarp")
    assert glitch.is_reachable(magikarp, gpt2)
    assert not glitch.is_reachable(gpt2.eot_token, gpt2)
    assert not glitch.is_reachable(gpt2.encode_single_token(b"\xc3"), gpt2)


def test_ordinary_tokens_skip_specials_and_gaps():
    cl100k = tiktoken.get_encoding("cl100k_base")
    tokens = glitch.ordinary_tokens(cl100k)
    assert len(tokens) == len(cl100k.token_byte_values())
    assert 100256 not in tokens and 100257 not in tokens
    assert list(tokens) == sorted(tokens)


def test_untrained_distance_and_ranking():
    e = np.array([[1.0, 1.0], [3.0, 1.0], [2.0, 1.0], [2.0, 5.0], [2.0, 1.0]], np.float32)
    before = e.copy()
    d = glitch.untrained_distance(e, [0, 1])  # the mean of rows 0 and 1 is row 2
    assert d.dtype == np.float64 and d.tolist() == [1.0, 1.0, 0.0, 4.0, 0.0]
    assert glitch.rank_by_untrained(e, [0, 1]) == [2, 4, 0, 1, 3]  # ties: smaller id first
    assert (e == before).all() and e.dtype == np.float32
    assert all(type(i) is int for i in glitch.rank_by_untrained(e, np.array([0, 1])))


@pytest.mark.parametrize(
    "embeddings, refs, match",
    [
        (np.zeros(3), [0], "2-D"),
        ([[0.0]], [0], "2-D"),
        (np.zeros((3, 2)), [], "empty"),
        (np.zeros((3, 2)), [3], "reference id 3"),
        (np.zeros((3, 2)), [-1], "reference id -1"),
    ],
)
def test_ranking_errors_name_the_bad_value(embeddings, refs, match):
    with pytest.raises(ValueError, match=match):
        glitch.rank_by_untrained(embeddings, refs)


def test_wordpiece_ruled_out_on_berts_vocabulary():
    from tokenizers import Tokenizer

    from tokcourse import assets

    bert = Tokenizer.from_file(str(assets.minilm_tokenizer_json_path()))
    assert not glitch.wordpiece_ruled_out("##s", bert)
    assert not glitch.wordpiece_ruled_out("hello", bert)
    assert not glitch.wordpiece_ruled_out("[unused0]", bert)
    assert glitch.wordpiece_ruled_out("##後", bert)  # CJK characters stand alone
    assert glitch.wordpiece_ruled_out("...", bert)  # punctuation is cut one by one
    assert glitch.wordpiece_ruled_out("##é", bert)  # accents are stripped
    # and it agrees with the tokenizer itself: a ruled-out continuation is never produced
    for token in ("##後", "##é", "##s"):
        ids = bert.encode("q" + token[2:], add_special_tokens=False).ids
        assert (bert.token_to_id(token) in ids) != glitch.wordpiece_ruled_out(token, bert)


def _auc_by_pairs(scores, positive, negative):
    """The definition, pair by pair: a positive scoring lower wins 1, a tie 1/2."""
    wins = [(p < n) + 0.5 * (p == n) for p in scores[positive] for n in scores[negative]]
    return sum(wins) / len(wins)


@given(st.lists(st.integers(0, 5), min_size=2, max_size=30), st.randoms(use_true_random=False))
def test_auc_is_the_pairwise_probability(values, rnd):
    scores = np.array(values, dtype=np.float64)
    ids = list(range(len(values)))
    rnd.shuffle(ids)
    cut = rnd.randrange(1, len(ids))
    pos, neg = np.array(ids[:cut]), np.array(ids[cut:])
    assert glitch.auc(scores, pos, neg) == pytest.approx(_auc_by_pairs(scores, pos, neg))
    mask = np.zeros(len(values), bool)
    mask[pos] = True  # boolean masks select the same rows
    assert glitch.auc(scores, mask, ~mask) == pytest.approx(glitch.auc(scores, pos, neg))


def test_auc_extremes_and_errors():
    scores = np.array([0.0, 1.0, 2.0, 3.0])
    assert glitch.auc(scores, [0, 1], [2, 3]) == 1.0
    assert glitch.auc(scores, [2, 3], [0, 1]) == 0.0
    assert glitch.auc(np.ones(4), [0, 1], [2, 3]) == 0.5  # all tied: chance
    with pytest.raises(ValueError, match="positive and one negative"):
        glitch.auc(scores, np.array([], dtype=int), [1])


def test_held_out_auc_uses_only_half_of_the_reference():
    rng = np.random.default_rng(0)
    untrained = 0.05 * rng.standard_normal((20, 4))  # near 0
    trained = 1.0 + rng.standard_normal((50, 4))
    e = np.vstack([untrained, trained])
    refs, others = list(range(20)), list(range(20, 70))
    assert glitch.held_out_auc(e, refs, others) > 0.95
    assert glitch.held_out_auc(e, refs, others, seed=1) > 0.95
    # the reference half is chosen by the seed: the same seed, the same number
    assert glitch.held_out_auc(e, refs, others, seed=3) == glitch.held_out_auc(
        e, refs, others, seed=3
    )
    # a reference of random trained rows separates nothing held out from the rest
    assert 0.2 < glitch.held_out_auc(e, list(range(20, 45)), list(range(45, 70))) < 0.8
    with pytest.raises(ValueError, match="two reference rows"):
        glitch.held_out_auc(e, [0], others)


def test_drift_summary():
    start = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 3.0], [1.0, 1.0]])
    end = start + np.array([[2.0, 0.0], [2.0, 0.0], [0.0, 0.0], [-1.0, 0.0]])
    summary = glitch.drift_summary(start, end, np.array([0, 1]))
    assert summary["drift"] == 2.0 and summary["cosine"] == 1.0  # both moved by (2, 0)
    assert summary["norm_before"] == 1.0
    assert summary["norm_after"] == pytest.approx((9**0.5 + 5**0.5) / 2)
    assert summary["spread"] == pytest.approx(2**0.5 / 2)
    opposite = glitch.drift_summary(start, end, np.array([0, 3]))
    assert opposite["cosine"] == -1.0
    unmoved = glitch.drift_summary(start, end, np.array([2]))
    assert unmoved["drift"] == 0.0 and np.isnan(unmoved["cosine"])
