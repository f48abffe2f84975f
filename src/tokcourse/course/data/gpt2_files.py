"""GPT-2's ``vocab.bpe`` and ``encoder.json``, rebuilt byte for byte from tiktoken's r50k ranks.

The merge list comes from :func:`tokcourse.pretrained.merge_pairs`, the same merge-recovery
algorithm the pretrained tokenizers use.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from tokcourse.pretrained import merge_pairs
from tokcourse.rank_bpe import parse_tiktoken_ranks

# --------------------------------------------------------------------------------------------
# GPT-2's vocab.bpe and encoder.json, rebuilt from the r50k ranks
# --------------------------------------------------------------------------------------------


def read_tiktoken_ranks(file: str | os.PathLike[str]) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` file: one ``base64(token) rank`` per line.

    Example: ``read_tiktoken_ranks(path("r50k_base"))[b"hello"]  # 31373``
    """
    return parse_tiktoken_ranks(Path(file).read_bytes(), file)


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (used in vocab.bpe and
    encoder.json).

    Printable bytes map to themselves; the other 68 (space, control, ...)
    map to chr(256 + n) in byte order, so every byte sequence becomes a
    visible, whitespace-free string.

    Example: ``bytes_to_unicode()[ord(" ")]  # 'Ġ'``
    """
    visible = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table = {b: chr(b) for b in visible}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return table


def byte_rank(b: int) -> int:
    """The id of the one-byte token ``b`` in GPT-2's tables (GPT-4's and
    GPT-4o's too).

    It is the byte's place in :func:`bytes_to_unicode`'s order: the visible
    bytes first, in byte order (so ``"!"`` is 0), then the 68 moved ones, in
    byte order (so byte 0 is 188).

    >>> byte_rank(ord("!")), byte_rank(ord("a"))
    (0, 64)
    >>> byte_rank(0), byte_rank(ord(" "))
    (188, 220)
    """
    return list(bytes_to_unicode()).index(b)


def recover_merges(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Recover the merge list (in rank order) from tiktoken-style ``mergeable_ranks``.

    The algorithm is :func:`tokcourse.pretrained.merge_pairs`; here the ranks must also be a
    complete GPT-2-style table: exactly 0..n-1, with the 256 single bytes first.

    Example: ``recover_merges(ranks)[0]  # (b' ', b't'), GPT-2's first merge``
    """
    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    if [r for _, r in by_rank] != list(range(len(by_rank))):
        raise ValueError("ranks must be exactly 0..n-1")
    if sorted(t for t, _ in by_rank[:256]) != [bytes([b]) for b in range(256)]:
        raise ValueError("ranks 0..255 must be the 256 single bytes")
    return merge_pairs(ranks)


def gpt2_files_from_ranks(ranks: Mapping[bytes, int]) -> tuple[bytes, bytes]:
    """Rebuild GPT-2's ``vocab.bpe`` and ``encoder.json`` (as bytes) from the r50k ranks.

    ``vocab.bpe``: ``#version: 0.2`` then one ``left right`` line per merge, in rank order,
    written in :func:`bytes_to_unicode`'s alphabet. ``encoder.json``: every token (same alphabet)
    -> its id, plus ``<|endoftext|>`` -> 50256, dumped with ``json.dumps`` defaults. Both come
    out byte-identical to OpenAI's originals (the pinned hashes prove it).

    Example: ``vocab_bpe, encoder_json = gpt2_files_from_ranks(read_tiktoken_ranks(p))``
    """
    alphabet = bytes_to_unicode()

    def show(token: bytes) -> str:
        return "".join(alphabet[b] for b in token)

    lines = ["#version: 0.2"] + [f"{show(a)} {show(b)}" for a, b in recover_merges(ranks)]
    vocab_bpe = ("\n".join(lines) + "\n").encode("utf-8")
    encoder = {show(token): rank for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])}
    encoder["<|endoftext|>"] = len(encoder)
    encoder_json = json.dumps(encoder).encode("utf-8")
    return vocab_bpe, encoder_json
