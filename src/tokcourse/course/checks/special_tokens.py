"""Special tokens (chapter 06): encode_with_specials, add_token_rows.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import regex

from tokcourse import special
from tokcourse.course import surgery
from tokcourse.course.answers import ARRAY, _array_repr, _same, tuple_of
from tokcourse.course.exercises import INT, Case, Entry, Exercise, Raised, Violation, list_of

# --- encode_with_specials ----------------------------------------------------------------------

EOT, FIM = "<|endoftext|>", "<|fim_prefix|>"
_SPECIALS = {EOT: 300, FIM: 301}

#: The matrix the check runs, every text against every argument combination (as chapter 06
#: draws it for GPT-4): ``allowed_special`` x ``disallowed_special`` ("all" is the default).
MATRIX_TEXTS = (
    "",
    "hello",
    "hi<|endoftext|>",
    "<|endoftext|><|endoftext|>",
    "a<|fim_prefix|>b<|endoftext|>",
    "<|endoftext",  # not a special token: ordinary text under every setting
    "é <|endoftext|>é",
    "say hello",  # "hello" may be disallowed too: any string can be
)
MATRIX_ALLOWED = (frozenset(), frozenset({EOT}), frozenset({FIM}), "all")
MATRIX_DISALLOWED = ("all", (), frozenset({EOT}), frozenset({FIM}), frozenset({"hello"}))


#: Names that overlap: "<|a|>" starts "<|a|>b" and ends "b<|a|>". At each position the
#: longest name wins, and the leftmost match comes first (tiktoken's regex, longest first).
OVERLAPPING = {"<|a|>": 310, "<|a|>b": 311, "b<|a|>": 312}
OVERLAP_TEXTS = ("<|a|>b", "b<|a|>b", "x<|a|><|a|>bb", "<|a|>")
#: A name the caller allows that is not in the table: ignored (tiktoken too), never looked up.
OUTSIDE = "<|unknown|>"


class CodePoints:
    """An ``encode_ordinary`` for the check: one id per code point (shows it is really used)."""

    def __call__(self, piece: str) -> list[int]:
        return [ord(c) for c in piece]

    def __repr__(self) -> str:
        return "code_points"

    def __eq__(self, other: object) -> bool:  # the check's copy equals the original
        return isinstance(other, CodePoints)

    def __hash__(self) -> int:
        return hash(CodePoints)


def _encode_with_specials_cases() -> Iterator[Case]:
    for text, allowed, disallowed in itertools.product(
        MATRIX_TEXTS, MATRIX_ALLOWED, MATRIX_DISALLOWED
    ):
        kwargs = {} if disallowed == "all" else {"disallowed_special": disallowed}
        yield Case((text, dict(_SPECIALS), allowed), kwargs)
    for text in ("é<|endoftext|>é", "x<|fim_prefix|>"):
        yield Case((text, dict(_SPECIALS), "all"), {"encode_ordinary": CodePoints()})
    for text in OVERLAP_TEXTS:
        for allowed in ("all", {"<|a|>"}, frozenset(OVERLAPPING)):
            yield Case((text, dict(OVERLAPPING), allowed))
        yield Case((text, dict(OVERLAPPING), frozenset()), {"disallowed_special": ()})
    # mutable sets, as a caller passes them: they must come back unchanged
    for text in ("a<|unknown|>b", f"hi{EOT}", f"{FIM}{OUTSIDE}{EOT}"):
        for allowed in ({OUTSIDE}, {EOT, OUTSIDE}, {EOT, FIM, OUTSIDE}):
            yield Case((text, dict(_SPECIALS), set(allowed)))
        yield Case((text, dict(_SPECIALS), {EOT}), {"disallowed_special": {FIM, OUTSIDE}})
    rng = random.Random(9)
    pieces = ["a", " b", "é", EOT, FIM, "<|", "|>", "endoftext"]
    allowed_choices = [*MATRIX_ALLOWED, [EOT]]
    for _ in range(40):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 6)))
        disallowed = rng.choice(MATRIX_DISALLOWED)
        kwargs = {} if disallowed == "all" else {"disallowed_special": disallowed}
        yield Case((text, dict(_SPECIALS), rng.choice(allowed_choices)), kwargs)


def _specials_hint_outside(case: Case, expected: Any, got: Any) -> str | None:
    _, special_tokens, allowed = case.args
    outside = sorted(set() if allowed == "all" else set(allowed) - special_tokens.keys())
    if outside and isinstance(expected, list) and not isinstance(got, list):
        return (
            f"allowed_special names {outside[0]!r}, which is not in special_tokens: it is no "
            "special token, so it has no id and stays ordinary text. Use only the allowed "
            "names that are in the table (allowed & special_tokens.keys()), as tiktoken does."
        )
    return None


def _first_listed_wins(case: Case, names: list[str]) -> list[int]:
    """The reference's answer with the alternation in the order ``names`` (not longest first)."""
    text, special_tokens, allowed_special = case.args
    allowed = allowed_special if allowed_special == "all" else set(allowed_special)
    allowed = set(special_tokens) if allowed == "all" else allowed & special_tokens.keys()
    order = [n for n in names if n in allowed]
    pieces = regex.split(f"({'|'.join(map(regex.escape, order))})", text) if order else [text]
    return [i for p in pieces if p for i in ([special_tokens[p]] if p in allowed else
                                                 list(p.encode()))]  # fmt: skip


def _specials_hint_overlap(case: Case, expected: Any, got: Any) -> str | None:
    special_tokens = case.args[1]
    names = list(special_tokens)
    overlap = any(a != b and a in b for a in names for b in names)
    wrong = [_first_listed_wins(case, order) for order in (names, sorted(names, key=len))]
    if overlap and isinstance(expected, list) and got in wrong:
        return (
            f"the special names {names} overlap: scan the text from the left and, where "
            "several names match at the same place, take the longest (put the names in the "
            "alternation longest first), as tiktoken does."
        )
    return None


def _specials_hint_default(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, Raised) and isinstance(got, list):
        if "disallowed_special" in case.kwargs:
            return (
                f"disallowed_special={case.kwargs['disallowed_special']!r}: each string it "
                "names must make encode raise ValueError when the text contains it, special "
                "token or not, allowed or not (tiktoken checks the raw text first)."
            )
        return (
            "this text contains a special token that is not allowed. It must raise ValueError "
            "(naming the token), never turn into the special id: otherwise any user can end "
            "the document or fake a chat turn by typing it."
        )
    return None


def _specials_hint_refused_allowed(case: Case, expected: Any, got: Any) -> str | None:
    text, _, allowed = case.args
    if isinstance(got, ValueError) and isinstance(expected, list):
        if "disallowed_special" in case.kwargs:
            return (
                f"disallowed_special={case.kwargs['disallowed_special']!r} replaces the default "
                '"all": only the strings it names make encode raise; any other special text is '
                "ordinary text unless it is allowed."
            )
        which = "every special token" if allowed == "all" else f"the tokens in {set(allowed)}"
        return (
            f"allowed_special={allowed!r} allows {which}: encode such a token as its id "
            "instead of refusing it (note that 'all' is a string, not a set of names)."
        )
    return None


def _specials_hint_ordinary(case: Case, expected: Any, got: Any) -> str | None:
    if "encode_ordinary" in case.kwargs and isinstance(got, list):
        return (
            "the text between special tokens must go through encode_ordinary (here it gives "
            "one id per code point), not straight to UTF-8 bytes."
        )
    return None


def _specials_hint_allowed(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and isinstance(expected, list):
        return (
            'an allowed special token (or any, with allowed_special="all") becomes its own id; '
            "special text that is neither allowed nor disallowed is encoded as ordinary text."
        )
    return None


# --- add_token_rows ----------------------------------------------------------------------------


class Tables:
    """An answer of ``add_token_rows`` in compared form: dtypes, shapes, values to rounding.

    Two ways of taking a mean (``mean(axis=0)``, ``sum / n``) differ in the last bits of a
    float, so values are compared with ``np.allclose``; dtypes and shapes exactly.
    """

    def __init__(self, answer: tuple) -> None:
        self.arrays = tuple(answer)
        if not all(isinstance(a, np.ndarray) for a in self.arrays):
            raise TypeError("not arrays")  # normalize keeps the raw answer then

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tables) or len(self.arrays) != len(other.arrays):
            return False
        return all(
            a.dtype == b.dtype and a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6)
            for a, b in zip(self.arrays, other.arrays, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return _array_repr(self.arrays)


def _tables(rng: np.random.Generator, vocab: int, d: int, dtype: type) -> tuple:
    # means well away from 0, and different for the two tables: zero init and swapped
    # tables both show
    emb = rng.normal(0.5, 1.0, (vocab, d)).round(2).astype(dtype)
    head = rng.normal(-1.0, 1.0, (vocab, d)).round(2).astype(dtype)
    return emb, head


def _add_token_rows_cases() -> Iterator[Case]:
    rng = np.random.default_rng(6)
    for vocab, d, n_new, dtype in [
        (2, 2, 1, np.float64),
        (1, 3, 2, np.float64),  # one row: the mean is that row
        (3, 2, 0, np.float64),  # nothing to add: equal copies
        (4, 3, 2, np.float32),  # the dtype must stay float32
        (3, 3, 3, np.float64),  # square: a wrong axis does not fail on shapes alone
    ]:
        yield Case((*_tables(rng, vocab, d, dtype), n_new))
    for _ in range(20):
        vocab, d, n_new = int(rng.integers(1, 7)), int(rng.integers(1, 6)), int(rng.integers(0, 4))
        dtype = np.float32 if rng.random() < 0.5 else np.float64
        yield Case((*_tables(rng, vocab, d, dtype), n_new))


def _call_rows(fn: Any, args: tuple, kwargs: dict) -> Any:
    """Call add_token_rows; returning an input array (or a view of one) is not a new table.

    An input changed in place is left to the purity rule, which reports it first.
    """
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    answer = fn(*args, **kwargs)
    if isinstance(answer, tuple) and all(_same(a, b) for a, b in zip(before, args, strict=True)):
        for name, mine, old in zip(("embedding", "lm_head"), answer, args[:2], strict=False):
            if isinstance(mine, np.ndarray) and np.shares_memory(mine, old):
                raise Violation(
                    f"new_{name} is the input {name} itself (or a view of it)",
                    "return new arrays, even when n_new == 0 adds no row: a caller who writes "
                    f"into new_{name} must not change {name} too. np.concatenate always makes "
                    "a new array (or return table.copy()).",
                )
    return answer


def _rows_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not (isinstance(expected, Tables) and isinstance(got, Tables)):
        return None
    emb, head, n_new = case.args
    inputs = (emb, head)
    for name, old, want, mine in zip(("embedding", "lm_head"), inputs, expected.arrays,
                                     got.arrays, strict=True):  # fmt: skip
        if mine.shape != want.shape:
            return (
                f"new {name} has shape {mine.shape}, expected {want.shape}: one new *row* per "
                "new token (axis 0), the width d_model stays the same."
            )
        if mine.dtype != want.dtype:
            return (
                f"new {name} has dtype {mine.dtype}, the input {old.dtype}: a float32 model "
                "must stay float32 (np.zeros(...) defaults to float64; pass dtype=, or .astype)."
            )
        if not np.allclose(mine[: len(old)], old):
            return f"the old rows of {name} changed: keep rows 0..{len(old) - 1} as they are."
    for name, old, mine in zip(("embedding", "lm_head"), inputs, got.arrays, strict=True):
        new_rows = mine[len(old) :]
        if new_rows.size and np.allclose(new_rows, 0):
            return (
                f"the new rows of {name} are zeros: start them at the mean of the existing "
                "rows, table.mean(axis=0), so a new token looks like an average one."
            )
        if new_rows.size and not np.allclose(new_rows, old.mean(axis=0)):
            return (
                f"the new rows of {name} must equal the mean of {name}'s own existing rows "
                "(table.mean(axis=0)): not random values, not the other table's mean."
            )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "encode_with_specials": Entry(
        "encode_with_specials(text, special_tokens, allowed_special, encode_ordinary, "
        "disallowed_special) -> ids",
        lambda: Exercise(
            "encode_with_specials",
            special.encode_with_specials,
            _encode_with_specials_cases,
            normalize=list,
            returns=list_of(INT),
            hints=(
                _specials_hint_outside,
                _specials_hint_overlap,
                _specials_hint_default,
                _specials_hint_refused_allowed,
                _specials_hint_ordinary,
                _specials_hint_allowed,
            ),
        ),
    ),
    "add_token_rows": Entry(
        "add_token_rows(embedding, lm_head, n_new) -> (new_embedding, new_lm_head)",
        lambda: Exercise(
            "add_token_rows",
            surgery.add_token_rows,
            _add_token_rows_cases,
            normalize=Tables,
            returns=tuple_of(
                ARRAY,
                ARRAY,
                describe="a tuple (new_embedding, new_lm_head) of numpy arrays",
                advice="Return both as a tuple, return new_embedding, new_lm_head; each one a "
                "numpy array (np.concatenate returns one).",
            ),
            hints=(_rows_hint,),
            call=_call_rows,
        ),
    ),
}
