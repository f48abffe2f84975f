"""What a check prints: the ❌ report, its hints, the first difference of long answers.

Used by :mod:`tokcourse.course.exercises`, the engine; nothing here runs a student's code.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tokcourse.course.answers import (
    _short,
    _size,
    first_difference,
    plain,
)
from tokcourse.course.cases import CheckResult, Exercise, Raised, _Failure
from tokcourse.course.plotting import in_book_build

__all__ = ["BOOK_PAGE_NOTE"]

#: At most this many characters of what a student's function printed are quoted in a report.
QUOTE_CHARS = 600


QUOTE_LINES = 8


def _normalized(exercise: Exercise, answer: Any) -> Any:
    try:
        return exercise.normalize(answer)
    except Exception:  # an answer of the wrong shape is compared as it is, and differs
        return answer


def _quote(printed: str) -> list[str]:
    """A few lines of what a function printed, each prefixed for the report."""
    text = printed[:QUOTE_CHARS]
    lines = text.splitlines()[:QUOTE_LINES]
    more = len(printed) > len("\n".join(lines)) + 1
    return [f"   | {line}" for line in lines] + (["   | …"] if more else [])


def _printed_note(name: str, total: int, failure: _Failure | None) -> list[str]:
    if not total:
        return []
    if failure is None or not failure.printed:
        return [f"   ({name} printed {total:,} characters while it was checked; not shown.)"]
    return [
        f"   ({name} printed {total:,} characters while it was checked. "
        "On the input above it printed:)",
        *_quote(failure.printed),
    ]


BOOK_PAGE_NOTE = "In your copy this cell checks your {name}; here the course's solution runs."


def _stub_message(exercise: Exercise) -> str:  # in the rendered book every stub is untouched
    if in_book_build():
        return BOOK_PAGE_NOTE.format(name=exercise.name)
    return (
        f"⏳ {exercise.name}: not implemented yet (the stub raises NotImplementedError).\n"
        f"   No problem: the chapter carries on with {exercise.reference_name}.\n"
        f"   Write yours in the cell above, then run this cell again."
    )


_HEADLINES = {
    "stuck": "stuck on test input {n}:",
    "wrong type": "returned the wrong type on {k} of {n} test inputs. The smallest one:",
    "mutated": "changed its arguments on {k} of {n} test inputs. The smallest one:",
    "violation": "the right answer the wrong way on {k} of {n} test inputs. The smallest one:",
    "message": (
        "the right error, but its message does not name what the exercise asks, on {k} of "
        "{n} test inputs. The smallest one:"
    ),
    "order": (
        "the answer depends on the order of a dict or set argument, on {k} of {n} test "
        "inputs. The smallest one:"
    ),
}


def _report(
    exercise: Exercise,
    failure: _Failure,
    k: int,
    n: int,
    time_limit: float,
    printed: int,
    fallback: str,
) -> CheckResult:
    name, case, kind = exercise.name, failure.case, failure.kind
    headline = _HEADLINES.get(kind, "wrong on {k} of {n} test inputs. The smallest one:")
    lines = [f"❌ {name}: " + headline.format(k=k, n=n), f"   {case.call_repr(name)}"]
    difference = _difference(exercise, failure.expected, failure.got) if kind == "failed" else None
    one_of = ""
    if exercise.accepts is not None and not isinstance(failure.expected, Raised):
        # several answers are right: the reference's is one, not the one to copy
        difference, one_of = None, " (one right answer; the hint says what is wrong)"
    if kind == "mutated":
        lines.append(f"   expected: the arguments unchanged, and {_short(failure.expected)}")
    elif kind == "message" and exercise.names is not None:
        lines.append(f"   expected: {_short(failure.expected)} {exercise.names.expected(case)}")
    elif kind == "violation" and getattr(failure.got, "expected", None):
        lines.append(f"   expected: {failure.got.expected}")  # what the rule allows
    elif difference or (kind == "order" and _long(failure.expected)):
        lines.append(f"   expected: {_size(failure.expected)}")
    else:
        lines.append(f"   expected: {_short(failure.expected)}{one_of}")
    if kind == "stuck":
        lines.append(f"   got:      no answer within {time_limit:g} s (an endless loop?)")
    elif kind in ("error", "message"):
        lines.append(f"   got:      {type(failure.got).__name__}: {failure.got}")
    elif kind == "mutated":
        lines.append(f"   got:      {_short(failure.got)}, and {failure.detail}")
    elif kind in ("violation", "order"):
        lines.append(f"   got:      {failure.detail}")
    elif difference:
        lines.append(f"   got:      {_size(failure.got)}, {difference}")
    else:
        lines.append(f"   got:      {_short(failure.got)}")
    hint = failure.hint or _first_hint(exercise, failure) or _generic_hint(exercise, failure)
    if kind == "order":  # what the exercise's own hints make of the answer in the other order
        other = _first_hint(exercise, dataclasses.replace(failure, case=failure.other or case))
        hint += f" With that order: {other}" if other else ""
    if hint:
        lines.append(f"   hint: {hint}")
    lines += _printed_note(name, printed, failure)
    lines.append(fallback)
    return CheckResult(
        name, kind, exercise.reference, "\n".join(lines), n, case, failure.expected,
        failure.got, printed,
    )  # fmt: skip


#: Answers whose repr is longer than this are summed up, with the first difference shown.
SHORT_ANSWER = 120


def _long(value: Any) -> bool:
    """A dict, list or tuple too long to show whole in a report line."""
    return isinstance(value, (dict, list, tuple)) and len(_short(value, 10_000)) > SHORT_ANSWER


def _difference(exercise: Exercise, expected: Any, got: Any) -> str | None:
    """For a long dict or list answer, where it first differs from the expected one.

    The difference is found in the compared form (``normalize``): a dict compared with its
    order shows the position of the first differing item, a plain dict its first differing key.
    ``None`` for short answers (shown whole) and for anything else.
    """
    containers = (dict, list, tuple)
    if not (isinstance(expected, containers) and isinstance(got, containers)):
        return None
    if isinstance(expected, dict) != isinstance(got, dict):
        return None
    if not (_long(expected) or _long(got)):
        return None
    compared_expected = _normalized(exercise, expected)
    compared_got = _normalized(exercise, plain(got))
    found = first_difference(compared_expected, compared_got)
    if found and isinstance(expected, dict) and isinstance(compared_expected, list):
        # compared as its items in order: say so
        found = found.replace("at index", "at position").replace(
            "expected", "in the dict's order, expected", 1
        )
    return found


def _generic_hint(exercise: Exercise, failure: _Failure) -> str | None:
    """A hint when no hint of the exercise recognises the mistake, for the two cases every
    exercise shares: an error where the text asks for a value, and a value where it asks for
    an error."""
    expected, got = failure.expected, failure.got
    if failure.kind == "failed" and isinstance(expected, Raised):
        return (
            f"on this input the course's {exercise.name} raises {expected.error}, and yours "
            f"returned {_short(got, 80)}. The exercise text says which inputs to refuse: "
            f"this is one of them, so raise {expected.error} instead of returning a value."
        )
    if failure.kind == "error" and not isinstance(expected, Raised):
        return (
            f"this input is one the exercise does not refuse: the course's {exercise.name} "
            f"returns {_short(expected, 80)} here. Find where yours raised "
            f"{type(got).__name__} (the traceback of a direct call shows the line)."
        )
    return None


def _first_hint(exercise: Exercise, failure: _Failure) -> str | None:
    """The first of the exercise's hints that recognises this mistake.

    Hints see the answers in compared form (``normalize``): a wrong answer has the right type
    here, since a wrong type is reported by the type rule's own hint.
    """

    def compared(value: Any) -> Any:
        if isinstance(value, (Raised, BaseException)):
            return value
        return _normalized(exercise, value)

    expected, got = compared(failure.expected), compared(failure.got)
    for hint in exercise.hints:
        try:
            text = hint(failure.case, expected, got)
        except Exception:  # a hint must never turn a clear report into a crash
            text = None
        if text:
            return text
    return None
