"""Vocabulary size (chapter 08): vocab_parameters, compression_ratio.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tokcourse.course import surgery, vocab_size
from tokcourse.course.answers import _instance
from tokcourse.course.exercises import Case, Entry, Exercise, Raised
from tokcourse.fast_encode import bpe_heap
from tokcourse.patterns import split

INT = _instance(
    int,
    "an int",
    advice="numpy arithmetic (np.prod, an array's sum) gives np.int64, not int: wrap it, int(...).",
)
FLOAT = _instance(
    float,
    "a float",
    advice="Divide with / (true division, always a float), not // (which rounds down to an int).",
)

# --- vocab_parameters --------------------------------------------------------------------------


def _vocab_parameters_cases() -> Iterator[Case]:
    for v, d in [(1, 1), (3, 2), (50_257, 768), (32_000, 4_096), (200_019, 3_072)]:
        yield Case((v, d))
        yield Case((v, d), {"tied": True})
        yield Case((v, d), {"tied": False})
    for v, d in [(0, 4), (5, 0), (-3, 2)]:  # no table has zero or fewer rows or columns
        yield Case((v, d))
    rng = random.Random(8)
    for _ in range(20):
        v, d = rng.randrange(1, 300_000), rng.randrange(1, 20_000)
        yield Case((v, d), {"tied": rng.random() < 0.5})


def _tied(case: Case) -> bool:
    return bool(case.kwargs.get("tied", False))


def _bad_size_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, Raised) and not isinstance(got, BaseException):
        v, d = case.args
        name, value = ("vocab_size", v) if v < 1 else ("d_model", d)
        return (
            f"{name}={value} cannot be the size of a table: raise ValueError naming the bad "
            "value instead of returning a count."
        )
    return None


def _tied_hint(case: Case, expected: Any, got: Any) -> str | None:
    if _tied(case) and isinstance(expected, int) and got == 2 * expected:
        return (
            "tied=True means the LM head *is* the embedding table (GPT-2 does this): one "
            "table of vocab_size x d_model, counted once."
        )
    return None


def _untied_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not _tied(case) and isinstance(expected, int) and 2 * got == expected:
        return (
            "untied (the default), the model has two tables, each vocab_size x d_model: the "
            "embedding and the LM head. Count both."
        )
    return None


def _sum_hint(case: Case, expected: Any, got: Any) -> str | None:
    v, d = case.args
    if isinstance(got, int) and got != expected and got == (v + d) * (1 if _tied(case) else 2):
        return (
            "you added the sizes: a table of vocab_size rows and d_model columns holds "
            "vocab_size * d_model numbers, one per cell."
        )
    return None


def _bias_hint(case: Case, expected: Any, got: Any) -> str | None:
    v = case.args[0]
    if isinstance(expected, int) and isinstance(got, int) and got - expected == v:
        return "count the weights of the two tables only: vocab_size x d_model each, no bias."
    return None


# --- compression_ratio -------------------------------------------------------------------------


class Utf8Bytes:
    """An ``encode`` for the check: one token per UTF-8 byte (ratio 1)."""

    def __call__(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def __repr__(self) -> str:
        return "utf8_bytes"

    def __eq__(self, other: object) -> bool:  # the check's copy equals the original
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class CodePoints(Utf8Bytes):
    """One token per character: bytes and characters differ as soon as a text leaves ASCII."""

    def __call__(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def __repr__(self) -> str:
        return "code_points"


class SmallBPE(Utf8Bytes):
    """A real (tiny) BPE tokenizer: GPT-4's split, then a few merges learned from English."""

    MERGES = {(116, 104): 256, (256, 101): 257, (32, 257): 258, (105, 110): 259,
              (32, 97): 260, (259, 103): 261, (101, 114): 262, (32, 115): 263}  # fmt: skip

    def __call__(self, text: str) -> list[int]:
        return [i for chunk in split(text) for i in bpe_heap(list(chunk.encode()), self.MERGES)]

    def __repr__(self) -> str:
        return "small_bpe"


TEXTS = ("", "a", "the", "hello world", "héllo wörld", "日本語", "🙂", "the thing is singing",
         "def f(x):\n    return x\n", "naïve café  ")  # fmt: skip


def _compression_ratio_cases() -> Iterator[Case]:
    for encode in (Utf8Bytes(), CodePoints(), SmallBPE()):
        for text in TEXTS:
            yield Case((text, encode))
    rng = random.Random(8)
    pieces = ["the", " thing", " a", "é", "日", "🙂", " ", "sing", "er", "\n", "x = 1"]
    for _ in range(30):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 8)))
        yield Case((text, rng.choice([CodePoints(), SmallBPE()])))


def _n_tokens(case: Case) -> int:
    text, encode = case.args
    return len(encode(text))


def _empty_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, Raised) and not isinstance(got, BaseException):
        return (
            "the empty text gives no tokens, and 0 bytes / 0 tokens is undefined: raise "
            "ValueError rather than return a number."
        )
    if isinstance(expected, Raised) and isinstance(got, ZeroDivisionError):
        return (
            "no tokens means a division by zero: test for an empty list of ids first and "
            "raise ValueError saying the text gave no tokens."
        )
    return None


_CHARACTERS = (
    "that is characters per token; the ratio counts UTF-8 bytes, len(text.encode('utf-8')), "
    "and 'é' is two bytes."
)
_ROUNDED = "rounded down to a whole number: use true division /, not //."


def _characters_or_rounded_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(expected, float) and isinstance(got, float)):
        return None
    text = case.args[0]
    characters = bool(text) and got == len(text) / _n_tokens(case)
    rounded = got == expected // 1
    if characters and rounded:  # this input cannot tell the two mistakes apart: name both
        return f"either {_CHARACTERS} Or it is the ratio {_ROUNDED}"
    return _CHARACTERS if characters else _ROUNDED if rounded else None


def _distinct_hint(case: Case, expected: Any, got: Any) -> str | None:
    text, encode = case.args
    if (
        isinstance(got, float)
        and text
        and got == len(text.encode("utf-8")) / len(set(encode(text)))
    ):
        return (
            "you divided by the number of *distinct* tokens (a set): every token of the "
            "encoding counts, repeats too. Divide by len(ids)."
        )
    return None


def _inverted_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, float) and isinstance(got, float) and abs(got * expected - 1) < 1e-9:
        return "that is tokens per byte, the inverse: the ratio is bytes / tokens."
    return None


def _close(answer: Any) -> Any:
    """Floats compared to 12 digits: bytes / tokens computed in another order may differ."""
    return round(answer, 12) if isinstance(answer, float) else answer


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "vocab_parameters": Entry(
        "vocab_parameters(vocab_size, d_model, *, tied=False) -> int",
        lambda: Exercise(
            "vocab_parameters",
            surgery.vocab_parameters,
            _vocab_parameters_cases,
            returns=INT,
            hints=(_bad_size_hint, _tied_hint, _untied_hint, _sum_hint, _bias_hint),
        ),
    ),
    "compression_ratio": Entry(
        "compression_ratio(text, encode) -> float (UTF-8 bytes per token)",
        lambda: Exercise(
            "compression_ratio",
            vocab_size.compression_ratio,
            _compression_ratio_cases,
            normalize=_close,
            returns=FLOAT,
            hints=(_empty_hint, _characters_or_rounded_hint, _distinct_hint, _inverted_hint),
        ),
    ),
}
