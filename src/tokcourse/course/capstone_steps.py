"""The capstone's stages (chapter 12): the methods of the tokenizer class a student builds.

Each function is one exercise of chapter 12 and the course's answer to it; the chapter's
class calls them (the student's versions once their checks pass):

* :func:`train_on_chunks`       BPE on the distinct chunks of the split, with their counts
* :func:`encode_chunk`          BPE on one chunk, its bytes first mapped to their token ids
* :func:`shuffled_vocab`        the bytes behind every id, one-byte tokens at their ids
* :func:`decode_with_specials`  ids back to text, special tokens included
* :func:`save_text`, :func:`load_text`  the tables as a plain-text model file, and back
* :func:`pieces_to_ids`         SentencePiece's pieces to ids, bytes for unknown pieces

GPT-4's one-byte tokens do not have their byte values as ids: ``byte_shuffle[b]`` is the id
of the one-byte token ``b``. :func:`encode_chunk` applies it (byte to id), :func:`shuffled_vocab`
undoes it (id to byte). Each solution calls earlier chapters' functions through their module
(``bpe.merge``), so pasting it into the chapter never replaces a student's own ``merge``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from tokcourse import bpe

__all__ = [
    "decode_with_specials",
    "encode_chunk",
    "load_text",
    "pieces_to_ids",
    "save_text",
    "shuffled_vocab",
    "train_on_chunks",
]


# The book shows some of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.
# fmt: off
def train_on_chunks(
    chunks: Mapping[str, int],
    vocab_size: int,
) -> dict[tuple[int, int], int]:
    """Learn ``vocab_size - 256`` merges from
    ``{chunk: how often it occurs}``.

    Pairs are counted inside each chunk, times the chunk's count; never
    across chunks.

    >>> train_on_chunks({"ab": 2, "ba": 1}, 257)
    {(97, 98): 256}
    """
    ids = {chunk: list(chunk.encode("utf-8")) for chunk in chunks}
    vocab = {i: bytes([i]) for i in range(256)}
    merges: dict[tuple[int, int], int] = {}
    for idx in range(256, vocab_size):
        stats: dict[tuple[int, int], int] = {}
        for chunk, count in chunks.items():
            for pair, n in bpe.get_stats(ids[chunk]).items():
                stats[pair] = stats.get(pair, 0) + n * count
        # the tie rule of chapter 02
        pair = bpe.most_frequent_pair(stats, vocab)
        ids = {
            chunk: bpe.merge(chunk_ids, pair, idx)
            for chunk, chunk_ids in ids.items()
        }
        merges[pair] = idx
        vocab[idx] = vocab[pair[0]] + vocab[pair[1]]
    return merges
# fmt: on


def encode_chunk(
    chunk: bytes,
    merges: Mapping[tuple[int, int], int],
    byte_shuffle: Sequence[int],
) -> list[int]:
    """The ids of one chunk: its bytes as one-byte token ids, then BPE,
    lowest merge id first.

    >>> encode_chunk(b"aab", {(97, 97): 256}, range(256))
    [256, 98]
    """
    ids = [byte_shuffle[b] for b in chunk]
    while len(ids) >= 2:
        pair = min(
            zip(ids, ids[1:], strict=False),
            key=lambda p: merges.get(p, float("inf")),
        )
        if pair not in merges:
            break  # no neighbouring pair is a merge
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


def shuffled_vocab(
    merges: Mapping[tuple[int, int], int],
    byte_shuffle: Sequence[int],
) -> dict[int, bytes]:
    """The bytes behind every id: one-byte token ``b`` at id
    ``byte_shuffle[b]``, then merges.

    >>> swap = [1, 0] + list(range(2, 256))
    >>> shuffled_vocab({(1, 0): 256}, swap)[256]
    b'\\x00\\x01'
    """
    vocab = {idx: bytes([b]) for b, idx in enumerate(byte_shuffle)}
    # in the order learned: both halves are known
    for (a, b), idx in merges.items():
        vocab[idx] = vocab[a] + vocab[b]
    return vocab


def decode_with_specials(
    ids: Sequence[int],
    vocab: Mapping[int, bytes],
    special_tokens: Mapping[str, int],
) -> str:
    """The text behind ``ids``; a special token's id gives its name; bad
    UTF-8 gives "�".

    >>> vocab = {104: b"h", 105: b"i"}
    >>> decode_with_specials([104, 105, 300], vocab, {"<|end|>": 300})
    'hi<|end|>'
    """
    names = {idx: name.encode("utf-8") for name, idx in special_tokens.items()}
    data = b"".join(vocab[i] if i in vocab else names[i] for i in ids)
    # join first: a character may span tokens
    return data.decode("utf-8", errors="replace")


# fmt: off
def save_text(
    pattern: str,
    byte_shuffle: Sequence[int],
    special_tokens: Mapping[str, int],
    merges: Mapping[tuple[int, int], int],
) -> str:
    """The tables as the text of a model file: one field or one table row
    per line.

    >>> text = save_text("\\w+", range(256), {"<|end|>": 257}, {(97, 98): 256})
    >>> text.splitlines()[2:]
    ['special 1', '"<|end|>" 257', 'merges 1', '97 98 256']
    """
    # JSON: a pattern may hold any character
    lines = ["pattern " + json.dumps(pattern)]
    lines.append("bytes " + " ".join(map(str, byte_shuffle)))
    lines.append(f"special {len(special_tokens)}")
    lines += [
        f"{json.dumps(name)} {idx}" for name, idx in special_tokens.items()
    ]
    lines.append(f"merges {len(merges)}")
    # in the order learned
    lines += [f"{a} {b} {idx}" for (a, b), idx in merges.items()]
    return "\n".join(lines) + "\n"
# fmt: on


# fmt: off
def load_text(
    text: str,
) -> tuple[str, tuple[int, ...], dict[str, int], dict[tuple[int, int], int]]:
    """``(pattern, byte_shuffle, special_tokens, merges)`` from the text of
    :func:`save_text`.

    >>> load_text(save_text("x", range(256), {}, {(97, 98): 256}))[3]
    {(97, 98): 256}
    """
    lines = iter(text.splitlines())
    pattern = json.loads(next(lines).removeprefix("pattern "))
    byte_shuffle = tuple(
        int(i) for i in next(lines).removeprefix("bytes ").split()
    )
    special_tokens = {}
    for _ in range(int(next(lines).removeprefix("special "))):
        # the name's JSON may hold spaces: split last
        name, idx = next(lines).rsplit(" ", 1)
        special_tokens[json.loads(name)] = int(idx)
    merges = {}
    for _ in range(int(next(lines).removeprefix("merges "))):
        a, b, idx = map(int, next(lines).split())
        merges[(a, b)] = idx
    return pattern, byte_shuffle, special_tokens, merges
# fmt: on


# fmt: off
def pieces_to_ids(
    pieces: Sequence[str],
    piece_ids: Mapping[str, int],
) -> list[int]:
    """The ids of SentencePiece pieces; a piece not in the vocabulary falls
    back to the ids of its UTF-8 bytes, the pieces ``<0x00>`` to ``<0xFF>``
    (byte fallback).

    >>> pieces_to_ids(["▁a", "é"], {"▁a": 5, "<0xC3>": 198, "<0xA9>": 172})
    [5, 198, 172]
    """
    ids = []
    for piece in pieces:
        if piece in piece_ids:
            ids.append(piece_ids[piece])
        else:
            # byte fallback: one id per UTF-8 byte, the hex digits in upper
            # case
            ids.extend(
                piece_ids[f"<0x{b:02X}>"] for b in piece.encode("utf-8")
            )
    return ids
# fmt: on
