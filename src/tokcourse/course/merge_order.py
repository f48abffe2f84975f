"""Four ways to choose the next merge when encoding, for chapter 03 to run before its exercise.

Encoding starts from the bytes of a text and applies merges until none applies. When several
pairs of neighbours have a merge, which goes first? :func:`encode_by` runs each candidate rule
so that a reader can compare them with what training did before writing ``encode``:

* ``"lowest id"``: the merge learned first (BPE's rule, ``tokcourse.bpe.encode``);
* ``"highest id"``: the merge learned last, whose tokens are the longest;
* ``"most frequent"``: the mergeable pair that occurs most often in this text, as training
  chose; on a tie, the lowest merge id (so that it fails only where frequency itself does);
* ``"longest match"``: no merges at all, but from the left the longest token of the
  vocabulary that the bytes start with (greedy longest match, as WordPiece encodes).

>>> merges = {(97, 97): 256, (97, 98): 257}
>>> [encode_by("aab", merges, rule) for rule in RULES]
[[256, 98], [97, 257], [256, 98], [256, 98]]
>>> encode_by("aaa", {(97, 97): 256, (97, 256): 257}, "longest match")  # a aa, not aa a
[257]
"""

from __future__ import annotations

from collections.abc import Mapping

from tokcourse.bpe import build_vocab, get_stats, merge

__all__ = ["RULES", "encode_by"]

RULES = ("lowest id", "highest id", "most frequent", "longest match")


def encode_by(text: str, merges: Mapping[tuple[int, int], int], rule: str) -> list[int]:
    """Encode ``text`` with ``merges``, choosing the next merge by ``rule`` (one of
    :data:`RULES`); stop when no pair of neighbours has a merge."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if rule == "longest match":
        return _longest_match(text, merges)
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        stats = get_stats(ids)
        candidates = [pair for pair in stats if pair in merges]
        if not candidates:
            break
        if rule == "lowest id":
            pair = min(candidates, key=merges.__getitem__)
        elif rule == "highest id":
            pair = max(candidates, key=merges.__getitem__)
        else:
            # on a tie, the lowest merge id: where this rule and the lowest id disagree,
            # the count alone made the difference
            pair = min(candidates, key=lambda p: (-stats[p], merges[p]))
        ids = merge(ids, pair, merges[pair])
    return ids


def _longest_match(text: str, merges: Mapping[tuple[int, int], int]) -> list[int]:
    """From the left, the longest token of the vocabulary of ``merges`` that the remaining
    bytes start with (every single byte is a token, so one always fits)."""
    token_id = {token: idx for idx, token in build_vocab(merges).items()}
    longest = max(map(len, token_id))
    data, ids, i = text.encode("utf-8"), [], 0
    while i < len(data):
        j = next(j for j in range(min(len(data), i + longest), i, -1) if data[i:j] in token_id)
        ids.append(token_id[data[i:j]])
        i = j
    return ids
