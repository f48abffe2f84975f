"""Special tokens (chapter 06): encode_with_specials.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from tokcourse import special
from tokcourse.course.exercises import INT, Case, Entry, Exercise, Raised, list_of

# --- encode_with_specials ----------------------------------------------------------------------

_SPECIALS = {"<|endoftext|>": 300, "<|fim_prefix|>": 301}


def _encode_with_specials_cases() -> Iterator[Case]:
    eot, fim = "<|endoftext|>", "<|fim_prefix|>"
    for text, allowed in (
        ("", frozenset()),
        ("hello", frozenset()),
        ("hi<|endoftext|>", frozenset()),  # user text that spells a special token: refuse
        ("hi<|endoftext|>", frozenset({eot})),
        ("hi<|endoftext|>", "all"),
        ("<|endoftext|><|endoftext|>", "all"),
        ("a<|fim_prefix|>b", frozenset({eot})),  # fim is not allowed: refuse
        ("a<|fim_prefix|>b<|endoftext|>", frozenset({fim, eot})),
        ("<|endoftext", frozenset()),  # not a special token: ordinary text
        ("é<|endoftext|>é", "all"),
    ):
        yield Case((text, dict(_SPECIALS), allowed))
    rng = random.Random(9)
    pieces = ["a", " b", "é", eot, fim, "<|", "|>", "endoftext"]
    allowed_choices = [frozenset(), frozenset({eot}), frozenset({fim}), "all"]
    for _ in range(40):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 6)))
        yield Case((text, dict(_SPECIALS), rng.choice(allowed_choices)))


def _specials_hint_default(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, Raised) and isinstance(got, list):
        return (
            "this text contains a special token that is not allowed. It must raise ValueError "
            "(naming the token), never turn into the special id: otherwise any user can end "
            "the document or fake a chat turn by typing it."
        )
    return None


def _specials_hint_refused_allowed(case: Case, expected: Any, got: Any) -> str | None:
    text, _, allowed = case.args
    if isinstance(got, ValueError) and isinstance(expected, list):
        which = "every special token" if allowed == "all" else f"the tokens in {set(allowed)}"
        return (
            f"allowed_special={allowed!r} allows {which}: encode such a token as its id "
            "instead of refusing it (note that 'all' is a string, not a set of names)."
        )
    return None


def _specials_hint_allowed(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and isinstance(expected, list):
        return (
            'an allowed special token (or any, with allowed_special="all") becomes its own id; '
            "the text around it is encoded as UTF-8 bytes."
        )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "encode_with_specials": Entry(
        "encode_with_specials(text, special_tokens, allowed_special) -> ids",
        lambda: Exercise(
            "encode_with_specials",
            special.encode_with_specials,
            _encode_with_specials_cases,
            normalize=list,
            returns=list_of(INT),
            hints=(_specials_hint_default, _specials_hint_refused_allowed, _specials_hint_allowed),
        ),
    ),
}
