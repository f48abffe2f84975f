"""Vocabulary size (chapter 08): flops_per_byte.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

from tokcourse.course import vocab_size
from tokcourse.course.answers import _instance
from tokcourse.course.exercises import Case, Entry, Exercise, Names, Raised

FLOAT = _instance(
    float,
    "a float",
    advice="Divide with / (true division, always a float), not // (which rounds down to an int).",
)

# --- flops_per_byte ----------------------------------------------------------------------------

GPT2_SMALL_BODY = 12 * (4 * 768 * 768 + 2 * 768 * 3_072)


def _flops_per_byte_cases() -> Iterator[Case]:
    yield Case((1_000, 8, 100, 4.0))
    yield Case((0, 4, 10, 1.0))  # a model that is only its tables: the head is all the work
    yield Case((100, 1, 1, 1.0))
    yield Case((GPT2_SMALL_BODY, 768, 50_257, 3.84))
    yield Case((GPT2_SMALL_BODY, 768, 200_019, 4.03))
    yield Case((6_476_005_376, 4_096, 32_000, 3.63))
    yield Case((10, 2, 3, 2))  # bytes_per_token may be an int
    bad = [(1_000, 8, 100, 0.0), (1_000, 8, 100, -2.5), (1_000, 0, 100, 4.0), (1_000, 8, 0, 4.0)]
    for args in [*bad, (-5, 8, 100, 4.0)]:  # no such model, no such tokenizer
        yield Case(args)
    rng = random.Random(8)
    for _ in range(30):
        d = rng.randrange(1, 8_192)
        yield Case(
            (
                rng.randrange(0, 10**10),
                d,
                rng.randrange(1, 300_000),
                round(rng.uniform(1.0, 6.0), rng.choice([0, 2, 3])),
            )
        )


def _close(a: Any, b: float) -> bool:
    return isinstance(a, float) and math.isclose(a, b, rel_tol=1e-9)


def _parts(case: Case) -> tuple[float, float, float]:
    """(the body's FLOPs, the head's, bytes per token) of one token."""
    body, d, vocab, r = case.args
    return 2 * body, 2 * d * vocab, float(r)


def _bad_values(case: Case) -> list[tuple[str, str]]:
    """(name, value) of each size no model or tokenizer can have, in the argument order."""
    body, d, vocab, r = case.args
    checks = [
        ("body_params", body, body >= 0),
        ("d_model", d, d >= 1),
        ("vocab_size", vocab, vocab >= 1),
        ("bytes_per_token", r, r > 0),
    ]
    return [(name, value) for name, value, ok in checks if not ok]


def _bad_value_spellings(case: Case) -> list[tuple[str, ...]]:
    """The bad value, as str() or repr() writes it (0.0 may also be written 0)."""
    spellings = []
    for _, value in _bad_values(case):
        forms = (repr(value), str(value), f"{value:g}")
        spellings.append(tuple(dict.fromkeys(forms)))
    return spellings


def _bad_value_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, Raised) and not isinstance(got, BaseException):
        name, value = _bad_values(case)[0]
        return (
            f"{name}={value!r} is not a size a model or a tokenizer can have: raise ValueError "
            "naming it."
        )
    return None


def _per_token_hint(case: Case, expected: Any, got: Any) -> str | None:
    body, head, r = _parts(case)
    if r != 1 and _close(got, body + head):
        return (
            "that is the cost of one token. One token covers bytes_per_token bytes: divide by "
            "bytes_per_token to get the cost of one byte."
        )
    if r != 1 and _close(got, (body + head) * r):
        return (
            "you multiplied by bytes_per_token. A token that covers more bytes makes each byte "
            "cheaper: per byte = per token / bytes_per_token."
        )
    return None


def _head_hint(case: Case, expected: Any, got: Any) -> str | None:
    body, head, r = _parts(case)
    if head and _close(got, (body + 2 * head) / r):
        return (
            "you counted the embedding table as a matrix product too. Reading row i of the "
            "embedding is a copy, no arithmetic: only the LM head computes with the vocabulary."
        )
    if head and _close(got, (body + head / 2) / r):
        return (
            "each of the LM head's d_model x vocab_size weights costs a multiply and an add: "
            "2 * d_model * vocab_size per token."
        )
    if head and _close(got, body / r):
        return (
            "the LM head is missing: it computes one logit per token id, "
            "2 * d_model * vocab_size operations per token."
        )
    if body and _close(got, (body / 2 + head) / r):
        return "the body costs 2 operations per parameter (a multiply and an add), not 1."
    return None


def _close_enough(answer: Any) -> Any:
    """Floats compared to 12 significant digits: the same sum in another order may differ."""
    return float(f"{answer:.12g}") if isinstance(answer, float) else answer


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "flops_per_byte": Entry(
        "flops_per_byte(body_params, d_model, vocab_size, bytes_per_token) -> float",
        lambda: Exercise(
            "flops_per_byte",
            vocab_size.flops_per_byte,
            _flops_per_byte_cases,
            normalize=_close_enough,
            returns=FLOAT,
            names=Names("naming the bad value", _bad_value_spellings, "the impossible size"),
            hints=(_bad_value_hint, _per_token_hint, _head_hint),
        ),
    ),
}
