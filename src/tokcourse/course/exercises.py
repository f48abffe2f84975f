"""The exercise machinery: run a student's function against the reference, explain failures.

An exercise is a statement, a stub raising ``NotImplementedError``, a check cell such as
``merge = check.merge(merge)`` and a solution dropdown. The checks live in
:mod:`tokcourse.course.checks` (one module per topic); this is the engine they share:

* :func:`run_check` calls the student's function and the reference on the same inputs (curated
  edge cases first, then seeded random ones), each on its own fresh copy of the arguments, and
  judges every answer four ways: it must not raise (unless the reference refuses the input
  too), it must have the right **type** (``Exercise.returns``: a list of ints, not a tuple or
  a generator), it must leave the **arguments unchanged** (``Exercise.pure``), and it must
  equal the reference's answer.
* On a stub it says "not implemented yet", calmly (in the book build, one neutral line). On a
  wrong answer it shows the *smallest* failing input, expected and got (as ``repr``), and a
  hint aimed at the mistake made. What the function prints is captured and quoted, from the
  failing input only.
* It returns the function the chapter uses next: the student's when it passed, else the
  reference, so a notebook with untouched stubs runs to its end. Handed the course's own
  function (a check cell run again after a failure), it says so and never reports success.
* :func:`show_solution` prints a reference solution as standalone code, for Colab.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tokcourse.course.answers import (
    BOOL,
    BYTES,
    INT,
    PAIR,
    STR,
    Returns,
    _a,
    _same,
    _short,
    _type_advice,
    dict_of,
    list_of,
    plain,
)
from tokcourse.course.calls import _Call, _call_with_limit, _TimeLimit, is_course_code
from tokcourse.course.plotting import in_book_build
from tokcourse.course.solutions import solution_source

__all__ = [
    "BOOL",
    "BYTES",
    "INT",
    "PAIR",
    "STR",
    "Case",
    "CheckResult",
    "Entry",
    "Exercise",
    "Observed",
    "Raised",
    "Returns",
    "Violation",
    "dict_of",
    "list_of",
    "run_check",
    "show_solution",
    "solution_source",
]

#: Seconds one call of a student's function may take before we call it stuck.
TIME_LIMIT = 10.0
#: At most this many characters of what a student's function printed are quoted in a report.
QUOTE_CHARS = 600
QUOTE_LINES = 8


@dataclass(frozen=True)
class Case:
    """One input: positional arguments for the function under test.

    >>> Case(([1, 2, 3], (1, 2), 256)).call_repr("merge")
    'merge([1, 2, 3], (1, 2), 256)'
    """

    args: tuple
    kwargs: dict = field(default_factory=dict)

    def call_repr(self, name: str) -> str:
        parts = [_short(a) for a in self.args]
        parts += [f"{k}={_short(v)}" for k, v in self.kwargs.items()]
        return f"{name}({', '.join(parts)})"

    def size(self) -> int:
        """How big the input is, to find the smallest failing one (length of its repr)."""
        return len(repr(self.args)) + len(repr(self.kwargs))


Hint = Callable[[Case, Any, Any], "str | None"]


@dataclass(frozen=True)
class Observed:
    """What a call did, for exercises whose answer is a change made in place.

    ``returned`` is the function's return value (the type rule applies to it), ``state`` the
    arguments as the call left them, by name. Two observations are equal when both are.

    >>> Observed(True, {"ids": [256]})
    returned True, then ids = [256]
    """

    returned: Any
    state: dict

    def __repr__(self) -> str:
        after = ", ".join(f"{name} = {_short(value, 200)}" for name, value in self.state.items())
        return f"returned {_short(self.returned, 200)}, then {after}"


class Violation(Exception):
    """Raised by an exercise's ``call`` when the answer is right but the way is not.

    For example a "fast" exercise that visits every word where only a few hold the pair.
    ``what`` goes on the report's ``got:`` line, ``hint`` on its ``hint:`` line.
    """

    def __init__(self, what: str, hint: str) -> None:
        super().__init__(what)
        self.what, self.hint = what, hint


@dataclass
class Exercise:
    """What a check needs to know about one exercise.

    ``cases`` returns the inputs (edge cases then random ones, deterministic for a seed).
    ``returns`` is the type rule every answer must satisfy (``None``: no rule).
    ``pure``: the function must leave its arguments unchanged.
    ``normalize`` maps an answer to the form that is compared with the reference's, once its
    type is right (default: unchanged).
    ``call(fn, args, kwargs)`` runs a function on one input and returns what is compared;
    the default is ``fn(*args, **kwargs)``. An exercise whose answer is a change made in
    place returns the changed state from here, and may raise :class:`Violation`.
    ``hints`` are tried in order on the smallest wrong answer or unexpected exception; each
    returns a hint or ``None``.
    ``solution`` is the package function shown as the solution (defaults to ``reference``).
    """

    name: str
    reference: Callable
    cases: Callable[[], Iterable[Case]]
    normalize: Callable[[Any], Any] = lambda answer: answer
    hints: Sequence[Hint] = ()
    solution: Callable | None = None
    returns: Returns | None = None
    pure: bool = True
    call: Callable[[Callable, tuple, dict], Any] | None = None

    @property
    def shown(self) -> Callable:
        return self.solution or self.reference

    @property
    def reference_name(self) -> str:
        fn = self.shown
        return f"{fn.__module__}.{fn.__qualname__}"

    def arg_names(self) -> list[str]:
        """The parameter names of the reference, to say which argument was changed."""
        try:
            return list(inspect.signature(self.reference).parameters)
        except (TypeError, ValueError):
            return []


@dataclass
class CheckResult:
    """The outcome of one check; ``fn`` is what the chapter should use from here on.

    ``status``: "passed", "not implemented", "course code", "not callable", or for a wrong
    function "failed", "error", "wrong type", "mutated", "violation" (right answer, wrong way)
    or "stuck" (no answer within the time limit).
    """

    exercise: str
    status: str
    fn: Callable
    message: str
    n_cases: int = 0
    case: Case | None = None
    expected: Any = None
    got: Any = None
    printed: int = 0  # characters the student's function printed during the check

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def run_check(
    exercise: Exercise, fn: Any, *, quiet: bool = False, time_limit: float = TIME_LIMIT
) -> CheckResult:
    """Check ``fn`` against ``exercise.reference``; print the verdict and return the result.

    >>> ex = Exercise("double", lambda x: 2 * x, lambda: [Case((1,)), Case((5,))])
    >>> run_check(ex, lambda x: x + x, quiet=True).status
    'passed'
    >>> run_check(ex, lambda x: x * x, quiet=True).case
    Case(args=(1,), kwargs={})
    """
    result = _evaluate(exercise, fn, time_limit)
    if not quiet:
        print(result.message)
    return result


@dataclass(frozen=True)
class Raised:
    """The outcome "raised an exception of this type", comparable like any answer."""

    error: str

    def __repr__(self) -> str:
        return f"raises {self.error}"


def _normalized(exercise: Exercise, answer: Any) -> Any:
    try:
        return exercise.normalize(answer)
    except Exception:  # an answer of the wrong shape is compared as it is, and differs
        return answer


@dataclass
class _Failure:
    case: Case
    kind: str
    expected: Any  # the reference's answer as it came back, or Raised
    got: Any  # the student's answer as it came back, or the exception
    hint: str | None = None
    printed: str = ""
    detail: str = ""  # for "got:" when it is not simply the answer

    # When two failures are equally small, report the more basic mistake first.
    ORDER = ("stuck", "error", "wrong type", "failed", "mutated", "violation")

    def key(self) -> tuple[int, int]:
        return self.case.size(), self.ORDER.index(self.kind)


def _changed_arguments(exercise: Exercise, case: Case, call: _Call) -> str | None:
    """Which argument the call changed, as "ids: [1, 2] became [9]", or None."""
    names = exercise.arg_names()
    for i, (before, after) in enumerate(zip(case.args, call.args, strict=True)):
        if not _same(before, after):
            name = names[i] if i < len(names) else f"argument {i + 1}"
            return f"{name}: {_short(before, 120)} became {_short(after, 120)}"
    for name, before in case.kwargs.items():
        if not _same(before, call.kwargs.get(name)):
            return f"{name}: {_short(before, 120)} became {_short(call.kwargs.get(name), 120)}"
    return None


def _judge(exercise: Exercise, case: Case, expected_raw: Any, call: _Call) -> _Failure | None:
    """The failure on this input, if any (``call.error`` is not a NotImplementedError stub)."""
    name = exercise.name
    expected = (
        expected_raw if isinstance(expected_raw, Raised) else _normalized(exercise, expected_raw)
    )
    if isinstance(call.error, Violation):
        return _Failure(case, "violation", expected_raw, call.error, call.error.hint,
                        call.printed, call.error.what)  # fmt: skip
    if call.error is not None:
        if expected == Raised(type(call.error).__name__):
            return None
        return _Failure(case, "error", expected_raw, call.error, printed=call.printed)
    got = call.answer
    if isinstance(expected, Raised):
        return _Failure(case, "failed", expected_raw, got, printed=call.printed)
    rule = exercise.returns
    returned = got.returned if isinstance(got, Observed) else got
    problem = rule.problem(returned) if rule else None
    if rule and problem:
        hint = f"{name} must return {rule.describe}; yours returned {problem}."
        advice = _type_advice(returned, rule) or (f" {rule.advice}" if rule.advice else "")
        hint += advice
        return _Failure(case, "wrong type", expected_raw, got, hint, call.printed)
    if exercise.pure:
        changed = _changed_arguments(exercise, case, call)
        if changed:
            hint = (
                f"{name} changed its input ({changed.split(':')[0]}). The exercise asks for a "
                "new result and leaves the arguments alone: the caller may still need them "
                "(copy first, or build a new list as you go)."
            )
            return _Failure(case, "mutated", expected_raw, got, hint, call.printed, changed)
    if _normalized(exercise, plain(got)) != expected:  # plain: no __eq__ of the student's
        return _Failure(case, "failed", expected_raw, got, printed=call.printed)
    return None


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


def _evaluate(exercise: Exercise, fn: Any, time_limit: float) -> CheckResult:
    name, ref = exercise.name, exercise.reference
    fallback = (
        f"   Meanwhile the chapter carries on with {exercise.reference_name}.\n"
        f"   Fix yours and run this cell again."
    )
    if not callable(fn):
        return CheckResult(
            name,
            "not callable",
            ref,
            f"❌ {name}: expected a function, got {_a(fn)}.\n"
            f"   Run the cell that defines `def {name}(...)` first.\n{fallback}",
        )
    if is_course_code(fn, exercise):
        where = f"{fn.__module__}.{getattr(fn, '__qualname__', name)}"
        return CheckResult(
            name,
            "course code",
            ref,
            f"↩️ {name}: this is the course's {name} ({where}), not yours, so there is "
            "nothing to check.\n"
            f"   The last check handed it back because yours was missing or wrong. Run the cell "
            f"with your\n   `def {name}(...)` first, then this cell again.",
        )
    failures: list[_Failure] = []
    n = printed = 0
    for case in exercise.cases():
        n += 1
        reference = _call_with_limit(exercise.call, ref, case.args, case.kwargs, None)
        expected = reference.answer
        if reference.error is not None:  # some inputs must be refused: the refusal is the answer
            expected = Raised(type(reference.error).__name__)
        try:
            call = _call_with_limit(exercise.call, fn, case.args, case.kwargs, time_limit)
        except _TimeLimit:
            # One endless loop is enough to know; waiting out every case would take minutes.
            failures = [_Failure(case, "stuck", expected, None)]
            break
        printed += call.printed_chars
        if isinstance(call.error, NotImplementedError) and n == 1:
            return CheckResult(
                name, "not implemented", ref, _stub_message(exercise), printed=printed
            )
        failure = _judge(exercise, case, expected, call)
        if failure:
            failures.append(failure)
    if not failures:
        lines = [
            f"✅ {name}: correct on all {n} test inputs (edge cases and random ones).",
            f"   The chapter uses your {name} from here on.",
            *_printed_note(name, printed, None),
        ]
        return CheckResult(name, "passed", fn, "\n".join(lines), n_cases=n, printed=printed)
    worst = min(failures, key=_Failure.key)
    return _report(exercise, worst, len(failures), n, time_limit, printed, fallback)


_HEADLINES = {
    "stuck": "stuck on test input {n}:",
    "wrong type": "returned the wrong type on {k} of {n} test inputs. The smallest one:",
    "mutated": "changed its arguments on {k} of {n} test inputs. The smallest one:",
    "violation": "the right answer the wrong way on {k} of {n} test inputs. The smallest one:",
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
    if kind == "mutated":
        lines.append(f"   expected: the arguments unchanged, and {_short(failure.expected)}")
    else:
        lines.append(f"   expected: {_short(failure.expected)}")
    if kind == "stuck":
        lines.append(f"   got:      no answer within {time_limit:g} s (an endless loop?)")
    elif kind == "error":
        lines.append(f"   got:      {type(failure.got).__name__}: {failure.got}")
    elif kind == "mutated":
        lines.append(f"   got:      {_short(failure.got)}, and {failure.detail}")
    elif kind == "violation":
        lines.append(f"   got:      {failure.detail}")
    else:
        lines.append(f"   got:      {_short(failure.got)}")
    hint = failure.hint or _first_hint(exercise, failure)
    if hint:
        lines.append(f"   hint: {hint}")
    lines += _printed_note(name, printed, failure)
    lines.append(fallback)
    return CheckResult(
        name, kind, exercise.reference, "\n".join(lines), n, case, failure.expected,
        failure.got, printed,
    )  # fmt: skip


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


def show_solution(exercise: Exercise) -> None:
    """Print the reference solution of an exercise, as code you could paste into a cell.

    Notebooks call ``check.show_solution("merge")``, which looks the exercise up by name.

    >>> show_solution(Exercise("double", lambda x: 2 * x, list, solution=solution_source))
    ... # doctest: +ELLIPSIS
    # Reference solution for `double` (tokcourse.course.solutions.solution_source)
    ...
    """
    print(f"# Reference solution for `{exercise.name}` ({exercise.reference_name})")
    print(solution_source(exercise.shown))


class Entry(NamedTuple):
    """One exercise in a topic module's ``EXERCISES`` table.

    ``call`` is how the student's function is called and what it returns (shown in the check's
    help), ``build`` makes the :class:`Exercise` (called once, on first use: building one may
    train a few small tokenizers for the cases).
    """

    call: str
    build: Callable[[], Exercise]
