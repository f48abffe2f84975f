"""Our SentencePiece BPE against the sentencepiece library, counted: chapter 07's parity lines.

>>> Parity(texts=2, ids=5, id_mismatches=0, decode_mismatches=0).line("lines")
'identical ids to sentencepiece on 2 lines (5 ids), and the same text back'
>>> DecodeParity(lists=3, ids=7, mismatches=0).line()
"the same text as sentencepiece's decode on 3 random id lists (7 ids)"

:func:`same_model` compares our trainer with sentencepiece's, byte for byte.

The chapter prints one line per claim and folds the details (a row per language, samples of
the generated strings) into a dropdown. Both sides are duck-typed: anything with
``encode(str) -> list[int]`` and ``decode(list[int]) -> str``, such as
:class:`tokcourse.sentencepiece_bpe.SentencePieceBPE` and
``sentencepiece.SentencePieceProcessor``. The larger runs of the test suite are in
``tests/test_sentencepiece_parity.py``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FRAGMENTS",
    "DecodeParity",
    "Parity",
    "decode_parity",
    "fuzz_strings",
    "parity",
    "random_id_lists",
    "same_model",
    "table",
    "total",
]


@dataclass(frozen=True)
class Parity:
    """How many texts, how many of sentencepiece's ids, and how many texts differ."""

    texts: int
    ids: int
    id_mismatches: int
    decode_mismatches: int

    @property
    def exact(self) -> bool:
        """No text gives other ids, no id list decodes to another text."""
        return self.id_mismatches == self.decode_mismatches == 0

    def __add__(self, other: Parity) -> Parity:
        return Parity(
            self.texts + other.texts,
            self.ids + other.ids,
            self.id_mismatches + other.id_mismatches,
            self.decode_mismatches + other.decode_mismatches,
        )

    def line(self, what: str) -> str:
        """The claim in one line: ``what`` names the texts ("lines of Botchan")."""
        if self.exact:
            return (
                f"identical ids to sentencepiece on {self.texts:,} {what} ({self.ids:,} ids), "
                "and the same text back"
            )
        return (
            f"{what}: {self.id_mismatches:,} of {self.texts:,} give other ids than sentencepiece, "
            f"{self.decode_mismatches:,} decode to another text"
        )


@dataclass(frozen=True)
class DecodeParity:
    """How many id lists, how many ids, and how many decode to another text."""

    lists: int
    ids: int
    mismatches: int

    def line(self, what: str = "random id lists") -> str:
        if self.mismatches == 0:
            return (
                f"the same text as sentencepiece's decode on {self.lists:,} {what} "
                f"({self.ids:,} ids)"
            )
        return f"{what}: {self.mismatches:,} of {self.lists:,} decode to another text"


def parity(ours: Any, theirs: Any, texts: Iterable[str]) -> Parity:
    """Encode every text with both; decode sentencepiece's ids with both; count differences.

    >>> class Echo:  # a stand-in: one id per character
    ...     def encode(self, text): return [ord(c) for c in text]
    ...     def decode(self, ids): return "".join(map(chr, ids))
    >>> parity(Echo(), Echo(), ["ab", "c"])
    Parity(texts=2, ids=3, id_mismatches=0, decode_mismatches=0)
    """
    texts = list(texts)
    want = [theirs.encode(t) for t in texts]
    id_mismatches = sum(ours.encode(t) != ids for t, ids in zip(texts, want, strict=True))
    decode_mismatches = sum(ours.decode(ids) != theirs.decode(ids) for ids in want)
    return Parity(len(texts), sum(map(len, want)), id_mismatches, decode_mismatches)


def decode_parity(ours: Any, theirs: Any, id_lists: Iterable[Sequence[int]]) -> DecodeParity:
    """Decode every id list with both and count the lists whose text differs."""
    id_lists = [list(ids) for ids in id_lists]
    mismatches = sum(ours.decode(ids) != theirs.decode(ids) for ids in id_lists)
    return DecodeParity(len(id_lists), sum(map(len, id_lists)), mismatches)


def total(parities: Iterable[Parity]) -> Parity:
    """The counts of several corpora added up.

    >>> total([Parity(1, 2, 0, 0), Parity(3, 4, 1, 0)])
    Parity(texts=4, ids=6, id_mismatches=1, decode_mismatches=0)
    """
    result = Parity(0, 0, 0, 0)
    for p in parities:
        result += p
    return result


def table(parities: Mapping[str, Parity]) -> str:
    """One row per corpus: its name, texts, ids, and the texts that differ.

    >>> print(table({"fr": Parity(3, 40, 0, 0)}))
    corpus   texts        ids  id diffs  decode diffs
    fr           3         40         0             0
    """
    width = max([len("corpus"), *map(len, parities)])
    rows = [f"{'corpus':{width}} {'texts':>7} {'ids':>10} {'id diffs':>9} {'decode diffs':>13}"]
    for name, p in parities.items():
        rows.append(
            f"{name:{width}} {p.texts:7,} {p.ids:10,} {p.id_mismatches:9,} "
            f"{p.decode_mismatches:13,}"
        )
    return "\n".join(rows)


#: Pieces of hard text: emoji with zero-width joiners, CJK, Hangul, combining marks, runs of
#: spaces, tabs and newlines, control characters, literal ``▁``, ``<0x41>`` and ``<s>`` typed
#: as text, rare characters that need byte fallback, and runs such as ``......`` where two
#: candidate pairs have the same score.
FRAGMENTS = (
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0001f917",
    "\U0001f3f3\ufe0f\u200d\U0001f308",
    "漢字",
    "日本語の文",
    "안녕하세요",
    "e\u0301",
    "\u0915\u094d\u0937",
    " ",
    "  ",
    "   ",
    "\t",
    "\n",
    "\r\n",
    "\x00",
    "\x1b",
    "▁",
    "<0x41>",
    "<s>",
    "</s>",
    "ꙮ",
    "\U00013000",
    "\U000e0001",
    "......",
    "*****",
    "=====",
    "1234",
    " the",
    "Hello",
    " world",
    "ing",
    "\u200d",
    "\ufeff",
    "\ufffd",
)


def fuzz_strings(n: int, seed: int = 7) -> list[str]:
    """``n`` seeded strings of up to 9 parts: a fragment of :data:`FRAGMENTS` (7 in 10) or any
    code point but the surrogates, which UTF-8 cannot encode.

    >>> fuzz_strings(3) == fuzz_strings(3)
    True
    """
    rng = random.Random(seed)

    def one() -> str:
        parts = []
        for _ in range(rng.randrange(0, 10)):
            if rng.random() < 0.7:
                parts.append(rng.choice(FRAGMENTS))
            else:
                cp = rng.choice([rng.randrange(0x20, 0x3000), rng.randrange(0x10000, 0x110000)])
                parts.append(chr(cp) if not 0xD800 <= cp < 0xE000 else "x")
        return "".join(parts)

    return [one() for _ in range(n)]


def random_id_lists(
    n: int, vocab_size: int, favourites: Sequence[int] = (), seed: int = 8
) -> list[list[int]]:
    """``n`` seeded lists of up to 11 ids, each id one of: any id below ``vocab_size``, an id
    below 259 (``<unk>``, ``<s>``, ``</s>`` and the byte pieces of a Llama-style layout), or
    one of ``favourites`` (e.g. the ``▁`` pieces).

    >>> all(0 <= i < 100 for ids in random_id_lists(50, 100, [7]) for i in ids)
    True
    """
    rng = random.Random(seed)
    pools = [lambda: rng.randrange(vocab_size), lambda: rng.randrange(min(259, vocab_size))]
    if favourites:
        pools.append(lambda: rng.choice(list(favourites)))
    return [[rng.choice(pools)() for _ in range(rng.randrange(0, 12))] for _ in range(n)]


def same_model(lines: Sequence[str], **options: Any) -> bool:
    """Whether :func:`tokcourse.sentencepiece_train.train_bpe` and sentencepiece's trainer
    write the same ``.model`` bytes for ``lines`` and ``options`` (``model_type="bpe"``).

    >>> same_model(["hi there", "hi"], vocab_size=12, normalization_rule_name="identity")
    True
    """
    import io

    import sentencepiece as spm

    from tokcourse.sentencepiece_train import train_bpe

    options = {"model_type": "bpe", **options}
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=out, minloglevel=2, **options
    )
    return out.getvalue() == train_bpe(lines, **options).model.SerializeToString()
