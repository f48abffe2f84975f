"""Vocabulary size (chapter 08): what a bigger vocabulary buys and what it costs.

What it buys is compression, UTF-8 bytes per token (:func:`compression_ratio`). What it costs
lives in the two token-indexed tables of a model
(:func:`tokcourse.course.surgery.vocab_parameters`), in the LM head's work for every token
(:func:`flops_per_byte` weighs it against the compression) and in how often each of their
rows is ever seen (:func:`token_counts`).

BPE training is deterministic and greedy: the tokenizer trained to ``vocab_size`` N starts
with exactly the merges of every smaller one. So one training run gives the whole curve, by
keeping its first merges (:func:`merges_up_to`, :func:`tokenizer_from_merges`).

>>> compression_ratio("héllo", lambda text: list(text.encode("utf-8")))  # one byte per token
1.0
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from tokcourse.bpe import build_vocab
from tokcourse.fast_encode import bpe_heap
from tokcourse.patterns import GPT4_SPLIT_PATTERN
from tokcourse.regex import RegexTokenizer

__all__ = [
    "compression_ratio",
    "flops_per_byte",
    "merges_up_to",
    "token_counts",
    "tokenizer_from_merges",
]

Merges = Mapping[tuple[int, int], int]


def compression_ratio(text: str, encode: Callable[[str], Sequence[int]]) -> float:
    """UTF-8 bytes per token: how many bytes of ``text`` one token of ``encode`` covers on average.

    ``encode`` turns a str into a list of token ids. Bytes, not characters: ``"é"`` is two
    bytes. The ratio is undefined when there are no tokens (the empty text): ``ValueError``.

    >>> compression_ratio("héllo", lambda text: [ord(c) for c in text])  # 6 bytes, 5 tokens
    1.2
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
    n_tokens = len(encode(text))
    if n_tokens == 0:
        raise ValueError(
            f"encode gave no tokens for the text {text!r:.60}: bytes per token is undefined "
            "(0 / 0 for the empty text)"
        )
    return len(text.encode("utf-8")) / n_tokens


# The book shows some of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.
# fmt: off
def _count(value: object, name: str, smallest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{name} must be an int, "
            f"got {type(value).__name__}: {value!r:.40}"
        )
    if value < smallest:
        raise ValueError(f"{name} must be at least {smallest}, got {value}")
    return int(value)
# fmt: on


# fmt: off
def flops_per_byte(
    body_params: int, d_model: int, vocab_size: int, bytes_per_token: float
) -> float:
    """Floating-point operations of one forward pass per UTF-8 byte of text.

    Per token, the body (every layer between the embedding and the LM head)
    costs 2 operations per parameter (a multiply and an add), and the LM
    head ``2 * d_model * vocab_size`` (one logit per token id); the
    embedding lookup copies a row and costs none. A tokenizer that covers
    ``bytes_per_token`` bytes with each token divides that cost per byte.
    The part of attention that grows with the context is left out.

    >>> flops_per_byte(1_000, 8, 100, 4.0)  # (2 * 1,000 + 2 * 8 * 100) / 4
    900.0
    """
    body = _count(body_params, "body_params", 0)
    d = _count(d_model, "d_model", 1)
    vocab = _count(vocab_size, "vocab_size", 1)
    if isinstance(bytes_per_token, bool) or not isinstance(
        bytes_per_token, (int, float, np.integer, np.floating)
    ):
        raise TypeError(
            f"bytes_per_token must be a number, got {bytes_per_token!r:.40}"
        )
    if not (math.isfinite(bytes_per_token) and bytes_per_token > 0):
        raise ValueError(
            "bytes_per_token must be a positive number, "
            f"got {bytes_per_token!r}"
        )
    per_token = 2 * body + 2 * d * vocab
    return per_token / float(bytes_per_token)
# fmt: on


def _check_merges(merges: object) -> dict[tuple[int, int], int]:
    if not isinstance(merges, Mapping):
        raise TypeError(f"merges must be a dict {{(a, b): id}}, got {type(merges).__name__}")
    ids = sorted(merges.values())
    if ids != list(range(256, 256 + len(ids))):
        raise ValueError("merges must use the ids 256, 257, ... without gaps (a trained table)")
    return dict(merges)


def merges_up_to(merges: Merges, vocab_size: int) -> dict[tuple[int, int], int]:
    """The first ``vocab_size - 256`` merges: the tokenizer training would give at that size.

    >>> merges_up_to({(97, 97): 256, (256, 97): 257, (257, 98): 258}, 257)
    {(97, 97): 256}
    """
    table = _check_merges(merges)
    if isinstance(vocab_size, bool):
        raise TypeError(f"vocab_size must be an int, got the bool {vocab_size!r}")
    vocab_size = operator.index(vocab_size)
    if not 256 <= vocab_size <= 256 + len(table):
        raise ValueError(
            f"vocab_size={vocab_size} is outside 256..{256 + len(table)}: these merges make "
            f"tokenizers of {256} to {256 + len(table)} tokens"
        )
    return {pair: idx for pair, idx in table.items() if idx < vocab_size}


def tokenizer_from_merges(merges: Merges, pattern: str = GPT4_SPLIT_PATTERN) -> RegexTokenizer:
    """A ``RegexTokenizer`` holding ``merges`` (trained on raw bytes) and split ``pattern``.

    >>> tokenizer_from_merges({(104, 105): 256}).encode("hi hi")
    [256, 32, 256]
    """
    tok = RegexTokenizer(pattern)
    tok.merges = _check_merges(merges)
    tok.vocab = build_vocab(tok.merges)
    return tok


def token_counts(chunk_counts: Mapping[bytes, int], merges: Merges) -> np.ndarray:
    """How often each id occurs when the pre-tokenized text ``chunk_counts`` is encoded.

    ``chunk_counts`` is ``{chunk bytes: how often}`` (``fast_train.count_chunks(text)``);
    each distinct chunk is encoded once. The result has one entry per id,
    ``256 + len(merges)`` of them; a zero is a token the text never produces.

    >>> token_counts({b"aab": 2, b"b": 1}, {(97, 97): 256})[[97, 98, 256]].tolist()
    [0, 3, 2]
    """
    table = _check_merges(merges)
    counts = np.zeros(256 + len(table), dtype=np.int64)
    for chunk, n in chunk_counts.items():
        if not isinstance(chunk, bytes):
            raise TypeError(f"chunks must be bytes (count_chunks gives them), got {chunk!r:.40}")
        ids = np.array(bpe_heap(list(chunk), table), dtype=np.int64)
        np.add.at(counts, ids, n)
    return counts
