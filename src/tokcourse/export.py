"""Our merge tables as tiktoken's ranks and back: export a trained tokenizer to tiktoken.

We store a tokenizer as merges, ``{(left id, right id): new id}``, and encode by applying the
merge with the lowest id among the neighbouring *pairs*. tiktoken stores ``mergeable_ranks``,
``{token bytes: rank}``, and merges the neighbouring pair whose *concatenated bytes* have the
lowest rank. :func:`merges_to_ranks` writes one table as the other (the rank of a token is its
id); :func:`~tokcourse.pretrained.recover_merges` (chapter 05) reads ranks back as merges.

Subtle: the two rules agree only on tables where the bytes say everything. If two merges make
the same bytes, or if a token's bytes, merged by rank, take another path than the pair that
made it, tiktoken can merge where we do not (``a`` + ``bc`` is ``abc``, a token, even if the
merge that made ``abc`` was ``ab`` + ``c``). :func:`to_tiktoken` refuses such tables, naming
the token, instead of returning an encoding that disagrees with ours.

>>> merges = {(104, 101): 256, (256, 108): 257}  # "he", "hel"
>>> merges_to_ranks(merges)[b"hel"]
257
>>> to_tiktoken(merges).encode_ordinary("hello")
[257, 108, 111]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .bpe import build_vocab
from .patterns import GPT4_SPLIT_PATTERN
from .pretrained import recover_merges

if TYPE_CHECKING:  # tiktoken is imported when an encoding is built, not on import
    import tiktoken

__all__ = ["export_problem", "merges_to_ranks", "to_tiktoken"]


def merges_to_ranks(merges: Mapping[tuple[int, int], int]) -> dict[bytes, int]:
    """tiktoken's ``mergeable_ranks`` for our merges: ``{token bytes: id}``, the 256 bytes first.

    Each merge's bytes are the bytes of its two halves joined, built in the order the merges
    were learned (``build_vocab``); the id of a token is its rank. Two merges that make the
    same bytes cannot both be ranks (a dict has one value per key): that is refused, naming
    both.

    >>> merges_to_ranks({(97, 97): 256, (256, 98): 257})[b"aab"]
    257
    """
    vocab = build_vocab(merges)
    ranks: dict[bytes, int] = {}
    for idx, token in vocab.items():
        if token in ranks:
            raise ValueError(
                f"tokens {ranks[token]} and {idx} are both {token!r}: tiktoken's ranks hold "
                "each byte string once, so these merges cannot be exported"
            )
        ranks[token] = idx
    return ranks


def export_problem(merges: Mapping[tuple[int, int], int], ranks: Mapping[bytes, int]) -> str | None:
    """Why ``ranks`` would not encode like ``merges`` (``None``: they agree token by token).

    Every token must be rebuilt, by rank, from exactly the pair that made it
    (:func:`~tokcourse.pretrained.recover_merges`); otherwise tiktoken's rule, which looks
    only at bytes, would take another path.

    >>> export_problem({(98, 99): 256, (97, 98): 257, (257, 99): 258},
    ...                merges_to_ranks({(98, 99): 256, (97, 98): 257, (257, 99): 258}))
    "token 258 b'abc' was made as b'ab' + b'c', but by rank its bytes merge as b'a' + b'bc'"
    """
    vocab = {idx: token for token, idx in ranks.items()}
    try:
        recovered = recover_merges(ranks)
    except ValueError as err:
        return str(err)
    made_by = {idx: pair for pair, idx in merges.items()}
    for pair, idx in recovered.items():
        if made_by.get(idx) != pair:
            wanted = made_by.get(idx)
            made = " + ".join(repr(vocab[i]) for i in wanted) if wanted else "no merge"
            got = " + ".join(repr(vocab[i]) for i in pair)
            return (
                f"token {idx} {vocab[idx]!r} was made as {made}, "
                f"but by rank its bytes merge as {got}"
            )
    return None


def to_tiktoken(
    merges: Mapping[tuple[int, int], int],
    pattern: str = GPT4_SPLIT_PATTERN,
    special_tokens: Mapping[str, int] | None = None,
    name: str = "mine",
) -> tiktoken.Encoding:
    """A ``tiktoken.Encoding`` that encodes exactly as our merges do (split, then BPE).

    Refuses (``ValueError``) merges whose ranks would encode differently
    (:func:`export_problem`) and special tokens whose ids are ordinary tokens.

    >>> to_tiktoken({(104, 105): 256}, special_tokens={"<|end|>": 257}).encode(
    ...     "hi<|end|>", allowed_special="all")
    [256, 257]
    """
    import tiktoken

    ranks = merges_to_ranks(merges)
    problem = export_problem(merges, ranks)
    if problem is not None:
        raise ValueError(f"tiktoken would encode these merges differently: {problem}")
    specials = dict(special_tokens or {})
    taken = set(ranks.values())
    for token, idx in specials.items():
        if idx < 0 or idx in taken:
            raise ValueError(
                f"special token {token!r} has id {idx}, which is negative or an ordinary token; "
                f"use ids from {max(taken) + 1} up"
            )
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
