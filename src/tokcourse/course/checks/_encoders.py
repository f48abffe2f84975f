"""Small ``encode`` functions the checks hand to a student's function (chapter 09's checks).

Each is a class so that the check's copy of an argument equals the original, and so that a
failing case prints a short name instead of a function's address.
"""

from __future__ import annotations

from tokcourse.fast_encode import bpe_heap
from tokcourse.patterns import split


class Utf8Bytes:
    """One token per UTF-8 byte."""

    def __call__(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def __repr__(self) -> str:
        return "utf8_bytes"

    def __eq__(self, other: object) -> bool:  # the check's copy equals the original
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class SmallBPE(Utf8Bytes):
    """A real (tiny) BPE tokenizer: GPT-4's split, then a few merges learned from English."""

    MERGES = {
        (116, 104): 256,
        (256, 101): 257,
        (32, 257): 258,
        (105, 110): 259,
        (32, 97): 260,
        (259, 103): 261,
        (101, 114): 262,
        (32, 115): 263,
    }

    def __call__(self, text: str) -> list[int]:
        return [i for chunk in split(text) for i in bpe_heap(list(chunk.encode()), self.MERGES)]

    def __repr__(self) -> str:
        return "small_bpe"
