"""BasicTokenizer: byte-level BPE on the whole text, with no split pattern.

Merges may cross word boundaries and glue words to punctuation (``"dog."`` and ``"dog!"``
become different tokens); chapter 04 shows why real tokenizers split first.

>>> tok = BasicTokenizer()
>>> tok.train("aaabdaaabac", 259)
>>> tok.encode("aaabdaaabac")
[258, 100, 258, 97, 99]
>>> tok.decode([258, 100, 258, 97, 99])
'aaabdaaabac'
"""

from __future__ import annotations

from . import bpe
from .tokenizer import Tokenizer
from .utf8 import _fix_surrogates

__all__ = ["BasicTokenizer"]


class BasicTokenizer(Tokenizer):
    """Byte-level BPE without a split pattern (``pattern`` is ``None``)."""

    def __init__(self) -> None:
        super().__init__(pattern=None)

    def train(self, text: str, vocab_size: int, verbose: bool = False) -> None:
        """Learn ``vocab_size - 256`` merges from ``text`` (replacing any earlier merges).

        Ties between equally frequent pairs go to the lexicographically greater pair of byte
        strings (see ``tokcourse.bpe``), so the result never depends on dict order.

        >>> tok = BasicTokenizer()
        >>> tok.train("hello hello", 257)
        >>> tok.vocab[256]  # 'he', 'el', 'll', 'lo' occur twice each; b'lo' is the greatest
        b'lo'
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
        self._check_specials_fit(vocab_size)
        merges = bpe.train(_fix_surrogates(text), vocab_size, verbose=verbose)
        self._use_trained_merges(merges)

    def _check_loaded_pattern(self, pattern: str | None) -> None:
        if pattern is not None:
            raise ValueError(
                "this model has a split pattern, a BasicTokenizer has none; "
                "load it with RegexTokenizer (or Tokenizer)"
            )
