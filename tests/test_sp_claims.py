"""tokcourse.course.sp_parity: the counts behind chapter 07's parity lines, and that they can fail.

(The parity itself, on large inputs, is ``test_sentencepiece_parity.py``.)
"""

from __future__ import annotations

import functools

import sentencepiece as spm

from tokcourse import assets
from tokcourse.course import sp_parity
from tokcourse.course.sp_parity import DecodeParity, Parity
from tokcourse.sentencepiece_bpe import SentencePieceBPE


@functools.cache
def mistral() -> tuple[SentencePieceBPE, spm.SentencePieceProcessor]:
    data = assets.mistral_model_path().read_bytes()
    return SentencePieceBPE(data), spm.SentencePieceProcessor(model_proto=data)


class OffByOne:
    """Ours, with every encoding one id short and every decode shouting."""

    def __init__(self, inner: SentencePieceBPE) -> None:
        self.inner = inner

    def encode(self, text: str) -> list[int]:
        return self.inner.encode(text)[:-1]

    def decode(self, ids: list[int]) -> str:
        return self.inner.decode(ids).upper()


def test_parity_counts_texts_ids_and_nothing_else_on_the_real_model() -> None:
    ours, theirs = mistral()
    texts = ["Hello world", "안녕하세요 🤗", "", "  two  spaces"]
    result = sp_parity.parity(ours, theirs, texts)
    assert result == Parity(4, sum(len(theirs.encode(t)) for t in texts), 0, 0)
    assert result.exact
    assert result.line("strings").startswith("identical ids to sentencepiece on 4 strings (")


def test_parity_counts_every_mismatch() -> None:
    ours, theirs = mistral()
    texts = ["Hello world", "abc", ""]
    result = sp_parity.parity(OffByOne(ours), theirs, texts)
    assert result.id_mismatches == 2  # the empty text has no id to lose
    assert result.decode_mismatches == 2  # nor letters to shout
    assert not result.exact
    assert "2 of 3 give other ids" in result.line("strings")


def test_decode_parity_counts_every_mismatch() -> None:
    ours, theirs = mistral()
    lists = sp_parity.random_id_lists(200, 32_000, [28705, 259])
    assert sp_parity.decode_parity(ours, theirs, lists).mismatches == 0
    lists = [[22557], [3 + 0x61], []]  # '▁Hello', the byte piece of 'a', nothing
    bad = sp_parity.decode_parity(OffByOne(ours), theirs, lists)
    assert bad == DecodeParity(lists=3, ids=2, mismatches=2)
    assert "2 of 3" in bad.line()


def test_parities_add_up_and_tabulate() -> None:
    total = Parity(1, 2, 0, 1) + Parity(3, 4, 5, 0)
    assert total == Parity(4, 6, 5, 1) == sp_parity.total([Parity(1, 2, 0, 1), Parity(3, 4, 5, 0)])
    assert sp_parity.total([]) == Parity(0, 0, 0, 0)
    lines = sp_parity.table({"a": Parity(1, 2, 0, 1), "bb": Parity(3, 4, 5, 0)}).splitlines()
    assert len(lines) == 3 and lines[1].split() == ["a", "1", "2", "0", "1"]


def test_generated_inputs_are_seeded_and_valid() -> None:
    fuzz = sp_parity.fuzz_strings(500)
    assert fuzz == sp_parity.fuzz_strings(500) != sp_parity.fuzz_strings(500, seed=8)
    for s in fuzz:
        s.encode("utf-8")  # no surrogates: this would raise
    assert any(f in s for s in fuzz for f in sp_parity.FRAGMENTS)
    lists = sp_parity.random_id_lists(500, 1000, [999])
    assert lists == sp_parity.random_id_lists(500, 1000, [999])
    ids = [i for ids in lists for i in ids]
    assert all(0 <= i < 1000 for i in ids) and 999 in ids
    assert sum(i < 259 for i in ids) > len(ids) / 3  # heavy in byte pieces
    assert all(len(ids) < 12 for ids in lists)
