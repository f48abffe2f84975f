"""WordPiece training: three rules for the next merge, and a replay of a trained vocabulary.

Every trainer here starts from the characters of each word, pieces after the first one carrying
the ``##`` prefix (``"hug"`` is ``h ##u ##g``), and merges one pair of adjacent pieces at a
time. They differ in the pair they pick:

* ``by="count"``, **BPE's rule**: the most frequent pair, ``count(ab)``. Hugging Face
  ``tokenizers``' ``WordPieceTrainer`` is this rule: it runs its BPE trainer with the ``##``
  prefix and copies the vocabulary into a WordPiece model (``models/wordpiece/trainer.rs``);
* ``by="gain"``, **the likelihood gain**: the pair whose merge most increases the
  log-likelihood of the training words under a unigram model of pieces (each piece's
  probability its count over the total). Schuster and Nakajima (2012), who introduced
  WordPiece, describe its training in these words (add the unit that most increases the
  likelihood of the training data), without a formula; Google never published its trainer,
  and the BERT paper (Devlin et al., 2019) describes none;
* ``by="ratio"``, **the Hugging Face course's heuristic**: the pair with the highest
  ``count(ab) / (count(a) * count(b))``, how much more often ``a`` and ``b`` occur together
  than their own frequencies predict. The course presents it as its best guess at WordPiece's
  training. For a pair much rarer than its pieces the gain is about
  ``count(ab) * (log(total * ratio) - 1)``: the ratio ranks pairs by their gain per
  occurrence and leaves the count out, so a pair seen once whose pieces occur nowhere else
  scores highest.

The trainer updates pair counts incrementally (only the words that contain the merged pair are
re-split). :func:`replay` goes the other way: given the pieces a trainer added, in order, it
re-applies them and reports each merge's pair count against the highest count at that step.

>>> [m.token for m in train({"hug": 10, "pug": 5, "hugs": 5}, 2, by="count")]
['##ug', 'hug']
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tokcourse.bpe import merge
from tokcourse.wordpiece import normalize, pre_tokenize

__all__ = [
    "Merge",
    "Replayed",
    "join_pieces",
    "likelihood_gain",
    "pair_score",
    "replay",
    "split_word",
    "train",
    "word_counts",
]

PREFIX = "##"
RULES = ("count", "gain", "ratio")


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
    """The Hugging Face course's score of a pair: ``count(ab) / (count(a) * count(b))``.

    >>> pair_score(4, 4, 4), pair_score(4, 100, 8)
    (0.25, 0.005)
    """
    if first_count <= 0 or second_count <= 0:
        raise ValueError(f"piece counts must be positive, got {first_count}, {second_count}")
    return pair_count / (first_count * second_count)


def _xlogx(x: int) -> float:
    return x * math.log(x) if x > 0 else 0.0


def likelihood_gain(
    pair: tuple[str, str], merged: int, piece_counts: Mapping[str, int], total: int
) -> float:
    """How much merging ``merged`` occurrences of ``pair`` raises the log-likelihood of the words.

    The model is a unigram model of pieces: a piece's probability is its count over ``total``,
    the number of pieces, so the log-likelihood is ``sum(c * log(c / total))`` over the
    pieces' counts ``c``. A merge moves ``merged`` occurrences from each of the two pieces to
    the new one (which may exist already), and ``total`` falls by ``merged``.

    >>> round(likelihood_gain(("a", "##b"), 4, {"a": 4, "##b": 4}, 8), 3)  # 'ab' x4: 2 pieces -> 1
    5.545
    """
    first, second = pair
    if merged <= 0 or merged > total:
        raise ValueError(f"cannot merge {merged} occurrences of {pair} among {total} pieces")
    token = join_pieces(first, second)
    a, b, t = piece_counts.get(first, 0), piece_counts.get(second, 0), piece_counts.get(token, 0)
    if first == second:
        a_after, b_after, b = a - 2 * merged, 0, 0
    else:
        a_after, b_after = a - merged, b - merged
    if a_after < 0 or b_after < 0:
        raise ValueError(f"{pair} occurs too rarely to merge {merged} times")
    gain = _xlogx(a_after) - _xlogx(a) + _xlogx(b_after) - _xlogx(b)
    gain += _xlogx(t + merged) - _xlogx(t)
    return gain - (_xlogx(total - merged) - _xlogx(total))


@dataclass(frozen=True)
class Merge:
    """One training step: the pair merged, the new piece, its pair count and its score."""

    pair: tuple[str, str]
    token: str
    count: int
    score: float


def _pairs(pieces: list[str]) -> Iterable[tuple[str, str]]:
    return zip(pieces, pieces[1:], strict=False)


class _Words:
    """Words split into pieces, with piece and pair counts kept up to date merge by merge."""

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.counts = counts
        self.splits = {word: split_word(word) for word in counts}
        self.pieces: Counter[str] = Counter()
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.where: dict[tuple[str, str], set[str]] = {}  # pair -> the words that contain it
        for word in counts:
            self._add(word, +1)

    def _add(self, word: str, sign: int) -> None:
        n = self.counts[word] * sign
        for piece in self.splits[word]:
            self.pieces[piece] += n
        for pair in _pairs(self.splits[word]):
            self.pairs[pair] += n
            if sign > 0:
                self.where.setdefault(pair, set()).add(word)

    def live(self) -> list[tuple[tuple[str, str], int]]:
        return [(p, c) for p, c in self.pairs.items() if c > 0]

    def merged(self, pair: tuple[str, str]) -> int:
        """How many occurrences a merge replaces: the pair count, or fewer for ``x x`` runs."""
        if pair[0] != pair[1]:
            return self.pairs[pair]
        token = join_pieces(*pair)
        return sum(
            self.counts[w] * (len(self.splits[w]) - len(merge(self.splits[w], pair, token)))
            for w in self.where.get(pair, ())
        )

    def apply(self, pair: tuple[str, str]) -> str:
        token = join_pieces(*pair)
        for word in sorted(self.where.pop(pair, ())):  # sorted: new pairs enter in a fixed order
            self._add(word, -1)
            self.splits[word] = merge(self.splits[word], pair, token)  # chapter 02's merge
            self._add(word, +1)
        self.pairs.pop(pair, None)
        return token


def train(
    counts: Mapping[str, int], n_merges: int, *, by: Literal["count", "gain", "ratio"]
) -> list[Merge]:
    """Learn ``n_merges`` merges over words with counts, picking pairs ``by`` one of three rules.

    ``"count"``: the highest pair count (BPE); ``"gain"``: the highest :func:`likelihood_gain`;
    ``"ratio"``: the highest :func:`pair_score`. A merge's ``score`` is what the rule compared.
    Ties go to the higher pair count, then to the pair counted first (at the start: words in
    ``counts`` order, left to right; later, new pairs in the order they appear). Training stops
    early when no pair is left.

    >>> words = {"hug": 10, "pug": 5, "pun": 12, "bun": 4}
    >>> [[m.token for m in train(words, 3, by=rule)] for rule in ("count", "gain", "ratio")]
    [['pu', 'pun', 'hu'], ['pu', 'hu', 'hug'], ['pu', 'hu', 'bu']]
    """
    if by not in RULES:
        raise ValueError(f"by must be one of {RULES}, not {by!r}")
    if n_merges < 0:
        raise ValueError(f"n_merges must be >= 0, got {n_merges}")
    words = _Words(counts)
    merges: list[Merge] = []
    for _ in range(n_merges):
        live = words.live()
        if not live:
            break
        total = sum(words.pieces.values())
        scores = [_score(by, words, pair, n, total) for pair, n in live]
        best = max(range(len(live)), key=lambda i: (scores[i], live[i][1]))
        pair, count = live[best]
        merges.append(Merge(pair, join_pieces(*pair), count, scores[best]))
        words.apply(pair)
    return merges


def _score(by: str, words: _Words, pair: tuple[str, str], n: int, total: int) -> float:
    if by == "count":
        return float(n)
    if by == "ratio":
        return pair_score(n, words.pieces[pair[0]], words.pieces[pair[1]])
    return likelihood_gain(pair, words.merged(pair), words.pieces, total)


@dataclass(frozen=True)
class Replayed:
    """One replayed merge: the piece, its pair's count, the highest pair count at that step and
    how many pairs had that count."""

    token: str
    count: int
    best: int
    tied: int


def replay(counts: Mapping[str, int], tokens: Sequence[str]) -> list[Replayed]:
    """Re-apply the pieces a trainer added, in order, and report the count of each merge.

    For each token, the pair of current pieces that makes it (the most frequent one if several
    do) is merged; its count is reported with the highest pair count of that step, so a
    trainer that always merges a most frequent pair has ``count == best`` everywhere, however
    it breaks ties. Raises ``ValueError`` when no current pair makes a token.

    >>> [(r.token, r.count, r.best, r.tied) for r in replay({"hug": 10, "pug": 5}, ["##ug"])]
    [('##ug', 15, 15, 1)]
    """
    words = _Words(counts)
    out: list[Replayed] = []
    for token in tokens:
        live = words.live()
        makers = [(p, c) for p, c in live if join_pieces(*p) == token]
        if not makers:
            raise ValueError(f"no pair of current pieces makes {token!r}")
        pair, count = max(makers, key=lambda pc: pc[1])
        best = max(c for _, c in live)
        out.append(Replayed(token, count, best, sum(c == best for _, c in live)))
        words.apply(pair)
    return out
