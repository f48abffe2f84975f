"""WordPiece training by likelihood scores, next to BPE's counts (chapter 11).

Both trainers start from the characters of each word, pieces after the first one carrying the
``##`` prefix (``"hug"`` is ``h ##u ##g``), and merge one pair of adjacent pieces at a time. They
differ in the pair they pick:

* **BPE** takes the most frequent pair: ``count(ab)``;
* **WordPiece**, as the BERT paper's authors describe it (and Hugging Face's course teaches it),
  takes the pair with the highest ``count(ab) / (count(a) * count(b))``: how much more often
  ``a`` and ``b`` occur together than their own frequencies predict. A pair of rare pieces that
  always go together beats a pair of common pieces that often meet by chance.

(Hugging Face ``tokenizers``' own ``WordPieceTrainer`` does *not* do this: it runs its BPE
trainer with the ``##`` prefix and keeps the vocabulary; only encoding is WordPiece's.)

The trainer updates pair counts incrementally (only the words that contain the merged pair are
re-split), so a few hundred merges over a novel's words take a second or two.

>>> [m.token for m in train({"hug": 10, "pug": 5, "hugs": 5}, 2, by="count")]
['##ug', 'hug']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from tokcourse.bpe import merge
from tokcourse.wordpiece import normalize, pre_tokenize

__all__ = ["Merge", "join_pieces", "pair_score", "split_word", "train", "word_counts"]

PREFIX = "##"


def word_counts(text: str) -> Counter[str]:
    """How often each word of BERT's pre-tokenization occurs (normalized: lower case, no accents).

    >>> word_counts("The cat. THE DOG!")
    Counter({'the': 2, 'cat': 1, '.': 1, 'dog': 1, '!': 1})
    """
    return Counter(pre_tokenize(normalize(text)))


def split_word(word: str) -> list[str]:
    """A word as its characters, every one after the first with the ``##`` prefix.

    >>> split_word("hug")
    ['h', '##u', '##g']
    """
    if not isinstance(word, str) or not word:
        raise ValueError(f"word must be a non-empty str, got {word!r}")
    return [word[0], *(PREFIX + ch for ch in word[1:])]


def join_pieces(first: str, second: str) -> str:
    """The piece that merging ``first`` and ``second`` makes: ``second`` loses its ``##``.

    >>> join_pieces("h", "##u"), join_pieces("##u", "##g")
    ('hu', '##ug')
    """
    return first + second.removeprefix(PREFIX)


def pair_score(pair_count: int, first_count: int, second_count: int) -> float:
    """WordPiece's likelihood score of a pair: ``count(ab) / (count(a) * count(b))``.

    >>> pair_score(4, 4, 4), pair_score(4, 100, 8)
    (0.25, 0.005)
    """
    if first_count <= 0 or second_count <= 0:
        raise ValueError(f"piece counts must be positive, got {first_count}, {second_count}")
    return pair_count / (first_count * second_count)


@dataclass(frozen=True)
class Merge:
    """One training step: the pair merged, the new piece, its pair count and its score."""

    pair: tuple[str, str]
    token: str
    count: int
    score: float


def _pairs(pieces: list[str]) -> Iterable[tuple[str, str]]:
    return zip(pieces, pieces[1:], strict=False)


def train(
    counts: Mapping[str, int], n_merges: int, *, by: Literal["likelihood", "count"]
) -> list[Merge]:
    """Learn ``n_merges`` merges over words with counts, picking pairs ``by`` likelihood or count.

    Ties go to the higher pair count, then to the pair counted first (at the start: words in
    ``counts`` order, left to right; later, new pairs in the order they appear). Training
    stops early when no pair is left.

    >>> [m.token for m in train({"hug": 10, "pug": 5, "pun": 12, "bun": 4}, 3, by="count")]
    ['pu', 'pun', 'hu']
    >>> [m.token for m in train({"hug": 10, "pug": 5, "pun": 12, "bun": 4}, 3, by="likelihood")]
    ['pu', 'hu', 'bu']
    """
    if by not in ("likelihood", "count"):
        raise ValueError(f"by must be 'likelihood' or 'count', not {by!r}")
    if n_merges < 0:
        raise ValueError(f"n_merges must be >= 0, got {n_merges}")
    splits = {word: split_word(word) for word in counts}
    piece_counts: Counter[str] = Counter()
    pair_counts: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[str]] = {}  # pair -> the words that contain it

    def add(word: str, sign: int) -> None:
        n = counts[word] * sign
        for piece in splits[word]:
            piece_counts[piece] += n
        for pair in _pairs(splits[word]):
            pair_counts[pair] += n
            if sign > 0:
                where.setdefault(pair, set()).add(word)

    for word in counts:
        add(word, +1)
    merges: list[Merge] = []
    for _ in range(n_merges):
        live = [(p, c) for p, c in pair_counts.items() if c > 0]
        if not live:
            break
        if by == "count":
            pair, count = max(live, key=lambda pc: pc[1])
            score = float(count)
        else:

            def key(pc: tuple[tuple[str, str], int]) -> tuple[float, int]:
                (a, b), n = pc
                return pair_score(n, piece_counts[a], piece_counts[b]), n

            pair, count = max(live, key=key)
            score = pair_score(count, piece_counts[pair[0]], piece_counts[pair[1]])
        token = join_pieces(*pair)
        merges.append(Merge(pair, token, count, score))
        for word in sorted(where.pop(pair, ())):  # sorted: new pairs enter in a fixed order
            add(word, -1)
            splits[word] = merge(splits[word], pair, token)  # chapter 02's merge, on strings
            add(word, +1)
        pair_counts.pop(pair, None)
    return merges
