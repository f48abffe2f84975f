"""tiktoken's encoder on tables that are not merge lists: Llama 3's, with Meta's long-run cuts.

tiktoken encodes a chunk in two steps. First it looks the chunk's bytes up in the ranks: a chunk
that is a token becomes that token. Otherwise it starts from the bytes and keeps joining the
neighbouring pair whose *concatenation* has the lowest rank. It keeps no list of pairs: any two
neighbours whose bytes together form a token may join.

For GPT-2, GPT-4 and GPT-4o both steps change nothing against an encoder with a merge list (one
pair per token, ``pretrained.recover_merges``): every token of theirs is what BPE makes of its
own bytes. Llama 3's ranks are different. 678 of its tokens are *not* what BPE makes of their
bytes (``b'.:.:'``: BPE with the lower-ranked tokens stops at ``[b'.', b':.', b':']``), so no
merge list can hold them, and only tiktoken's two rules produce them: the whole-chunk lookup,
and a join of two neighbours that happen to form one. This module is that encoder:
:class:`RankEncoder` (the fast one, ``FastEncoder`` with every pair that forms a token) and
:func:`encode_chunk_with_ranks` (the same rules in a few lines, slow).

Meta's ``Tokenizer.encode`` (llama-models) also cuts the text before tiktoken sees it, into
windows of 400,000 characters and then wherever a run of white space or of non-white space
(``str.isspace``) grows past 25,000 characters: :func:`cut_long_runs`. No chunk crosses a cut.

>>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abab": 257}
>>> encode_chunk_with_ranks(b"abab", ranks)  # the whole chunk is a token
[257]
>>> encode_chunk_with_ranks(b"ababa", ranks)  # ab + ab join: their bytes form 257
[257, 97]
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Mapping, Sequence

import regex

from .fast_encode import FastEncoder

__all__ = [
    "MAX_RUN",
    "WINDOW",
    "RankEncoder",
    "cut_long_runs",
    "encode_chunk_with_ranks",
    "parse_tiktoken_ranks",
    "rank_pairs",
]

MAX_RUN = 25_000
"""Meta's limit on a run of white space or of non-white space, in characters."""
WINDOW = 400_000
"""Meta's window: the text is cut every 400,000 characters first."""

# The characters str.isspace() accepts (Python's, which Meta's cut uses; not regex's \s).
_SPACE = regex.escape("".join(chr(c) for c in range(0x110000) if chr(c).isspace()))


@functools.cache
def _long_runs(max_run: int) -> regex.Pattern:
    """Runs of white space, or of anything else, longer than ``max_run`` characters."""
    return regex.compile(f"[{_SPACE}]{{{max_run + 1},}}|[^{_SPACE}]{{{max_run + 1},}}")


def cut_long_runs(text: str, max_run: int = MAX_RUN, window: int = WINDOW) -> list[str]:
    """Meta's cuts: windows of ``window`` characters, then in each window a cut every
    ``max_run`` characters inside any longer run of white space or of non-white space.

    A run is a maximal stretch of characters that are all ``str.isspace()`` or all not; the
    cuts inside a run of length ``n`` fall ``max_run``, ``2 * max_run``, ... characters after
    its start, while they are before its end. Empty text gives ``[""]``, as Meta's does.

    >>> cut_long_runs("ab  cdefg", max_run=3)
    ['ab  cde', 'fg']
    >>> [len(p) for p in cut_long_runs("x" * 7, max_run=3, window=5)]
    [3, 2, 2]
    """
    pieces: list[str] = []
    for start in range(0, max(len(text), 1), window):
        part = text[start : start + window]
        runs = _long_runs(max_run).finditer(part)
        cut = 0
        for run in runs:
            for at in range(run.start() + max_run, run.end(), max_run):
                pieces.append(part[cut:at])
                cut = at
        pieces.append(part[cut:])
    return pieces


def parse_tiktoken_ranks(data: bytes, where: object = "<bytes>") -> dict[bytes, int]:
    """The ranks of a ``.tiktoken`` file's bytes; ``where`` names the source in errors.

    >>> parse_tiktoken_ranks(b"aGVsbG8= 31373")
    {b'hello': 31373}
    """
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError as e:
            raise ValueError(f"bad line {lineno} in {where}: {line[:80]!r}") from e
    return ranks


def rank_pairs(ranks: Mapping[bytes, int]) -> dict[tuple[int, int], int]:
    """Every join tiktoken may make: ``(rank of a, rank of b) -> rank of a + b`` for each
    token split in two tokens ``a + b``, at every split point.

    >>> rank_pairs({b"a": 0, b"b": 1, b"ab": 2, b"abb": 3, b"bb": 4})
    {(0, 1): 2, (0, 4): 3, (2, 1): 3, (1, 1): 4}
    """
    get = ranks.get
    pairs: dict[tuple[int, int], int] = {}
    for token, rank in ranks.items():
        for i in range(1, len(token)):
            left, right = get(token[:i]), get(token[i:])
            if left is not None and right is not None:
                pairs[left, right] = rank
    return pairs


def encode_chunk_with_ranks(chunk: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """tiktoken's two rules on one chunk, in plain Python (quadratic: for teaching and tests).

    The whole chunk if it is a token; otherwise join the neighbours whose concatenation has the
    lowest rank (the leftmost on a tie) until no two neighbours form a token.
    """
    if chunk in ranks:
        return [ranks[chunk]]
    parts = [chunk[i : i + 1] for i in range(len(chunk))]
    while len(parts) > 1:
        joined = [ranks.get(a + b) for a, b in zip(parts, parts[1:], strict=False)]
        candidates = [(r, i) for i, r in enumerate(joined) if r is not None]
        if not candidates:
            break
        _, i = min(candidates)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[p] for p in parts]


class RankEncoder(FastEncoder):
    """``FastEncoder`` with tiktoken's rules: the whole-chunk lookup first, then joins of any
    two neighbours that form a token (``rank_pairs``). Exact for any ranks tiktoken accepts.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abab": 257}
    >>> RankEncoder(ranks, pattern=None).encode_ordinary("abab ababa")
    [257, 32, 257, 97]
    """

    def __init__(
        self,
        ranks: Mapping[bytes, int],
        pattern: str | regex.Pattern | None = None,
        cache_size: int = 1 << 16,
    ) -> None:
        missing = [b for b in range(256) if bytes([b]) not in ranks]
        if missing:
            raise ValueError(f"the ranks have no token for the byte {missing[0]}")
        byte_ids: Sequence[int] = [ranks[bytes([b])] for b in range(256)]
        super().__init__(rank_pairs(ranks), byte_ids, pattern, cache_size)
        self._ranks = dict(ranks)

    def _encode_chunk_uncached(self, chunk: str) -> tuple[int, ...]:
        whole = self._ranks.get(chunk.encode("utf-8"))
        if whole is not None:
            return (whole,)
        return super()._encode_chunk_uncached(chunk)
