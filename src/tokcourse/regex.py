"""RegexTokenizer: split the text with a pattern first, then byte-level BPE inside each chunk.

Merges never cross a chunk boundary, so with the GPT-4 pattern no token mixes letters with
digits or glues a word to the punctuation after it.

>>> tok = RegexTokenizer()
>>> tok.train("hello hello world", 258)
>>> [tok.decode([i]) for i in tok.encode("hello world")]
['h', 'e', 'llo', ' ', 'w', 'o', 'r', 'l', 'd']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection

from . import bpe
from .fast_train import count_chunks, train_fast
from .patterns import GPT4_SPLIT_PATTERN, split
from .tokenizer import Tokenizer
from .utf8 import _fix_surrogates

__all__ = ["RegexTokenizer"]


class RegexTokenizer(Tokenizer):
    """Byte-level BPE inside the chunks of a split pattern (GPT-4's by default)."""

    def __init__(self, pattern: str = GPT4_SPLIT_PATTERN) -> None:
        if pattern is None:
            raise TypeError("RegexTokenizer needs a split pattern; for no split use BasicTokenizer")
        super().__init__(pattern)

    def train(
        self,
        text: str,
        vocab_size: int,
        verbose: bool = False,
        *,
        fast: bool = False,
        special_tokens: Collection[str] = (),
    ) -> None:
        """Learn ``vocab_size - 256`` merges from the chunks of ``text``.

        Pairs are counted inside chunks only. Ties between equally frequent pairs go to the
        lexicographically greater pair of byte strings (see ``tokcourse.bpe``). Special-token
        text in ``text`` is treated as ordinary text, except the strings in
        ``special_tokens``: hard boundaries, never counted, never merged across.
        ``fast=True`` uses ``tokcourse.fast_train`` (the same merges, far faster; ``verbose``
        then shows a progress bar).

        >>> tok = RegexTokenizer()
        >>> tok.train("the cat, the hat", 257)
        >>> tok.vocab[256]  # 'th', 'he' and 'at' occur twice each; b'th' is the greatest
        b'th'
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
        self._check_specials_fit(vocab_size)
        if isinstance(special_tokens, str):
            raise TypeError(f"special_tokens must be a collection of str, not {special_tokens!r}")
        if special_tokens:
            chunks = count_chunks(text, self._compiled, special_tokens)
        else:
            # equal chunks merge the same way: count them, and let BPE see each one once
            chunks = Counter(
                chunk.encode("utf-8") for chunk in split(_fix_surrogates(text), self._compiled)
            )
        if fast:
            merges = train_fast(chunks, vocab_size, progress=verbose)
        else:
            merges = bpe.train_on_chunks(chunks, vocab_size, verbose=verbose)
        self._use_trained_merges(merges)

    def _check_loaded_pattern(self, pattern: str | None) -> None:
        if pattern is None:
            raise ValueError(
                "this model has no split pattern; load it with BasicTokenizer (or Tokenizer)"
            )
