"""Unit and property tests of tokcourse.wordpiece and tokcourse.wordpiece_train."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse.wordpiece import (
    WordPiece,
    is_cjk,
    is_control,
    is_punctuation,
    is_whitespace,
    load_vocab,
    normalize,
    pre_tokenize,
    strip_accents,
    wordpiece_word,
)
from tokcourse.wordpiece_train import (
    join_pieces,
    likelihood_gain,
    pair_score,
    replay,
    split_word,
    train,
    word_counts,
)

VOCAB = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "a": 4, "##b": 5, "ab": 6, "[SEP]": 7}


def test_character_classes() -> None:
    assert is_control("\x00") and is_control("\ufffd") and is_control("\u200b")
    assert not is_control("\n") and not is_control("\u0378")  # unassigned code points stay
    assert is_whitespace("\u3000") and not is_whitespace("\x1c")
    assert is_cjk("\u4e00") and is_cjk("\U0002f800") and not is_cjk("\u3042")
    assert all(is_punctuation(c) for c in "!$+^~`。、「") and not is_punctuation("€")


def test_normalize_examples() -> None:
    assert normalize("") == ""
    assert normalize("ΣΊΣΥΦΟΣ") == "σισυφοσ"  # per character: no final sigma
    assert normalize("İ") == "i"  # NFD makes I + U+0307, a nonspacing mark: stripped first
    assert normalize("a\x0bb\x0cc\x85d") == "abcd"  # controls before whitespace
    assert normalize("東京") == " 東  京 "
    assert normalize("Ａ") == "ａ"  # no compatibility folding


def test_pre_tokenize_examples() -> None:
    assert pre_tokenize("") == [] and pre_tokenize("   ") == []
    assert pre_tokenize("a,b  c!!") == ["a", ",", "b", "c", "!", "!"]


def test_wordpiece_word_rules() -> None:
    assert wordpiece_word("unaffable", VOCAB) == ["un", "##aff", "##able"]
    assert wordpiece_word("abx", VOCAB) == ["[UNK]"]
    assert wordpiece_word("", VOCAB) == []
    assert wordpiece_word("a" * 101, {"a": 0, "##a": 1}) == ["[UNK]"]
    assert wordpiece_word("ab", VOCAB, max_piece_chars=3) == ["ab"]
    with pytest.raises(TypeError, match="bytes"):
        wordpiece_word(b"ab", VOCAB)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab", max_size=12), st.sets(st.sampled_from(
    ["a", "b", "ab", "ba", "aab", "##a", "##b", "##ab", "##ba", "##bb"])))  # fmt: skip
def test_the_length_bound_changes_nothing(word: str, entries: set[str]) -> None:
    vocab = dict.fromkeys(entries, 0)
    bound = max((len(e) for e in entries), default=1)
    assert wordpiece_word(word, vocab, max_piece_chars=bound) == wordpiece_word(word, vocab)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_strip_accents_is_idempotent_and_normalize_cleans(text: str) -> None:
    once = strip_accents(text)
    assert strip_accents(once) == once
    assert not any(is_control(c) or (is_whitespace(c) and c != " ") for c in normalize(text))


def test_wordpiece_class() -> None:
    wp = WordPiece(VOCAB)
    assert wp.tokenize("Unaffable [SEP] [sep]") == ["un", "##aff", "##able", "[SEP]", "[UNK]",
                                                    "[UNK]", "[UNK]"]  # fmt: skip
    assert wp.decode(wp.encode("unaffable ab")) == "unaffable ab"
    with pytest.raises(ValueError, match="99"):
        wp.decode([99])
    with pytest.raises(ValueError, match="unk_token"):
        WordPiece({"a": 0})
    with pytest.raises(ValueError, match="special"):
        WordPiece(VOCAB, special_tokens=["[CLS]"])
    with pytest.raises(TypeError, match="int"):
        wp.tokenize(3)  # type: ignore[arg-type]


def test_load_vocab(tmp_path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_text("[UNK]\nhello\n##s\n", encoding="utf-8")
    assert load_vocab(path) == {"[UNK]": 0, "hello": 1, "##s": 2}
    path.write_text("a\nb\na\n", encoding="utf-8")
    assert load_vocab(path) == {"a": 2, "b": 1}  # as tokenizers: the later line's id


def test_training_pieces() -> None:
    assert split_word("hug") == ["h", "##u", "##g"]
    assert join_pieces("##u", "##g") == "##ug"
    assert pair_score(4, 4, 4) == 0.25
    with pytest.raises(ValueError, match="0"):
        pair_score(1, 0, 3)
    with pytest.raises(ValueError, match="''"):
        split_word("")
    assert word_counts("A a, b") == {"a": 2, ",": 1, "b": 1}


def test_training_picks_by_score_or_count() -> None:
    counts = {"hug": 10, "pug": 5, "pun": 12, "bun": 4}
    by_count = train(counts, 3, by="count")
    assert [m.token for m in by_count] == ["pu", "pun", "hu"]
    assert by_count[0].count == 17
    by_score = train(counts, 3, by="ratio")
    assert by_score[0].score == pytest.approx(17 / (17 * 31))
    by_gain = train(counts, 3, by="gain")
    assert [m.token for m in by_gain] == ["pu", "hu", "hug"]
    assert len(train({"ab": 1}, 5, by="count")) == 1  # stops when no pair is left
    with pytest.raises(ValueError, match="'bytes'"):
        train(counts, 1, by="bytes")  # type: ignore[arg-type]


def _merged(splits: dict, pair: tuple[str, str]) -> dict:
    token = join_pieces(*pair)
    out = {}
    for w, pieces in splits.items():
        new, i = [], 0
        while i < len(pieces):
            if tuple(pieces[i : i + 2]) == pair:
                new.append(token)
                i += 2
            else:
                new.append(pieces[i])
                i += 1
        out[w] = new
    return out


def _log_likelihood(counts: dict, splits: dict) -> float:
    """sum(c * log(c / total)) over the pieces of a unigram model fitted to the splits."""
    pieces: dict = {}
    for w, n in counts.items():
        for p in splits[w]:
            pieces[p] = pieces.get(p, 0) + n
    total = sum(pieces.values())
    return sum(c * math.log(c / total) for c in pieces.values())


def test_likelihood_gain() -> None:
    # 'ab' four times: a and ##b (p = 1/2 each) become one piece ab (p = 1)
    assert likelihood_gain(("a", "##b"), 4, {"a": 4, "##b": 4}, 8) == pytest.approx(8 * math.log(2))
    # a pair of one piece with itself: 'aaaa' is a ##a ##a ##a; '##a ##a' merges once
    counts = {"aaaa": 1}
    splits = {"aaaa": split_word("aaaa")}
    want = _log_likelihood(counts, _merged(splits, ("##a", "##a"))) - _log_likelihood(
        counts, splits
    )
    assert likelihood_gain(("##a", "##a"), 1, {"a": 1, "##a": 3}, 4) == pytest.approx(want)
    with pytest.raises(ValueError):
        likelihood_gain(("##a", "##a"), 2, {"a": 1, "##a": 3}, 4)


def test_replay_reports_counts_whatever_the_tie_order() -> None:
    counts = word_counts("the cat sat on the mat; the hat; a bat that sat, that's that " * 3)
    merges = train(counts, 20, by="count")
    steps = replay(counts, [m.token for m in merges])
    assert [r.count for r in steps] == [m.count for m in merges]
    assert all(r.count == r.best for r in steps)
    # tied pairs in either order are both BPE orders; a rarer pair first is not
    tied = {"ab": 2, "cd": 2}
    for order in (["ab", "cd"], ["cd", "ab"]):
        steps = replay(tied, order)
        assert [(r.count, r.best, r.tied) for r in steps] == [(2, 2, 2), (2, 2, 1)]
    rare = replay({"ab": 3, "cd": 2}, ["cd"])[0]
    assert (rare.count, rare.best) == (2, 3)
    with pytest.raises(ValueError, match="'zz'"):
        replay(counts, ["zz"])


def test_training_matches_a_full_recount() -> None:
    """The incremental counts give the same merges as recounting every word each step."""
    counts = word_counts("the cat sat on the mat; the hat; a bat that sat, that's that " * 3)
    for by in ("count", "ratio", "gain"):
        merges = train(counts, 25, by=by)
        splits = {w: split_word(w) for w in counts}
        for m in merges:
            pairs: dict = {}
            pieces: dict = {}
            for w, n in counts.items():
                for p in splits[w]:
                    pieces[p] = pieces.get(p, 0) + n
                for pair in zip(splits[w], splits[w][1:], strict=False):
                    pairs[pair] = pairs.get(pair, 0) + n
            assert pairs[m.pair] == m.count
            if by == "count":
                assert m.count == max(pairs.values())
            elif by == "ratio":
                best = max(pair_score(n, pieces[a], pieces[b]) for (a, b), n in pairs.items())
                assert m.score == pytest.approx(best)
            else:  # the gain, from the log-likelihood recomputed after each possible merge
                before = _log_likelihood(counts, splits)
                best = max(
                    _log_likelihood(counts, _merged(splits, pair)) - before for pair in pairs
                )
                assert m.score == pytest.approx(best)
                assert _log_likelihood(counts, _merged(splits, m.pair)) - before == (
                    pytest.approx(m.score)
                )
            for w in splits:
                out, i = [], 0
                while i < len(splits[w]):
                    if tuple(splits[w][i : i + 2]) == m.pair:
                        out.append(m.token)
                        i += 2
                    else:
                        out.append(splits[w][i])
                        i += 1
                splits[w] = out
