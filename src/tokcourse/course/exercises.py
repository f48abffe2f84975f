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
* Where the exercise text says what an error message names ("raise ValueError naming the two
  ids"), the exercise declares it (:class:`Names`) and the check reads the message.
* An exercise with more than one right answer (``Exercise.accepts``: "any most frequent
  pair", "any moment between these two") is judged by the rule, not by equality with the
  reference; the report then shows the reference's answer as one right answer among others.
* A verdict never depends on luck: an input with a dict or set argument is run a second time
  with every such argument rebuilt in another insertion order (:func:`reordered`: a dict in
  reverse), except the arguments whose order the exercise gives a meaning
  (``Exercise.ordered``). An answer that changes is a ❌ of its own, naming the argument.
* It returns the function the chapter uses next: the student's when it passed, else the
  reference, so a notebook with untouched stubs runs to its end. Handed the course's own
  function (a check cell run again after a failure), it says so and never reports success.
* :func:`show_solution` prints a reference solution as standalone code, for Colab.

The data it works with (:class:`Exercise`, :class:`Case`, :class:`Names`, ...) is defined in
:mod:`tokcourse.course.cases`, what it prints in :mod:`tokcourse.course.reports`; both are
re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
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
    _size,
    _type_advice,
    dict_of,
    list_of,
    plain,
)
from tokcourse.course.calls import _Call, _call_with_limit, _TimeLimit, is_course_code
from tokcourse.course.cases import (
    Case,
    CheckResult,
    Exercise,
    Names,
    Observed,
    Raised,
    Violation,
    _Failure,
    _show,
    reordered,
)
from tokcourse.course.reports import (
    _difference,
    _normalized,
    _printed_note,
    _report,
    _stub_message,
)
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
    "Names",
    "Observed",
    "Raised",
    "Returns",
    "Violation",
    "dict_of",
    "list_of",
    "reordered",
    "run_check",
    "show_solution",
    "solution_source",
]

#: Seconds one call of a student's function may take before we call it stuck.
TIME_LIMIT = 10.0


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
            return _message_failure(exercise, case, expected_raw, call)
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
    # plain: no __eq__ of the student's
    if not exercise.right(case, expected, _normalized(exercise, plain(got))):
        return _Failure(case, "failed", expected_raw, got, printed=call.printed)
    return None


def _message_failure(
    exercise: Exercise, case: Case, expected: Raised, call: _Call
) -> _Failure | None:
    """The right error: its message must name what the exercise text asks (``Exercise.names``)."""
    names = exercise.names
    if names is None or call.error is None:
        return None
    missing = names.missing(case, call.error)
    if not missing:
        return None
    wanted = names.shown(case)
    joined = (" or " if names.any_of else " and ").join(wanted)
    several = len(wanted) > 1 and not names.any_of
    if len(missing) < len(wanted):  # some of them, not all
        lacks = f"does not show {' and '.join(map(_show, missing))}"
    else:
        lacks = "shows none of them" if several else "does not show it"
    hint = (
        f"the exercise asks for {expected.error} {names.sentence}. On this input "
        f"{'those are' if several else 'that is'} {joined} ({names.describe}), and your "
        f"message {lacks}: write {'them' if several else 'it'} into the message, e.g. "
        f'raise {expected.error}(f"... {{value}} ...").'
    )
    return _Failure(case, "message", expected, call.error, hint, call.printed)


def _order_failure(
    exercise: Exercise,
    fn: Callable,
    case: Case,
    expected: Any,
    first: _Call,
    time_limit: float,
) -> tuple[_Failure | None, int]:
    """Run ``fn`` again with the unordered dict and set arguments of ``case`` in another
    insertion order; a failure there (when the first run passed) is an answer that depends
    on that order. Returns the failure, if any, and the characters printed."""
    which = exercise.unordered(case)
    if not which:
        return None, 0

    def changed(again: _Call) -> bool:
        if _judge(exercise, case, expected, again) is not None:
            return True
        # with several right answers, any one will do, but the same one in any order
        return exercise.accepts is not None and _normalized(
            exercise, plain(first.answer)
        ) != _normalized(exercise, plain(again.answer))

    call = exercise.call_reordered(fn, case, which, time_limit)
    printed = call.printed_chars
    if not changed(call):  # equal to case's arguments, any order
        return None, printed
    culprits = which
    if len(which) > 1:  # which argument's order was it? Try them one at a time.
        for name in which:
            again = exercise.call_reordered(fn, case, [name], time_limit)
            printed += again.printed_chars
            if changed(again):
                culprits = [name]
                break
    got = call.error if call.error is not None else call.answer
    shown = [f"{name} ({_a(_argument(exercise, case, name)).split(' ')[1]})" for name in culprits]
    arguments = " and ".join(shown)
    sets = any(type(_argument(exercise, case, name)) in (set, frozenset) for name in culprits)
    hint = (
        f"your answer changed when {arguments} held the same items in another order (rebuilt "
        "in another insertion order), and nothing in the exercise depends on that order. Code "
        "that loops over a dict or a set and keeps the first match, or the first of equal "
        "maxima, lets the order decide: use the rule the exercise states instead."
    )
    if sets:
        hint += (
            " A set's order also changes from one Python process to the next (it follows "
            "the hash of its items), so such code passes or fails by luck."
        )
    if call.error is not None:
        second = f"raises {type(call.error).__name__}: {_short(str(call.error), 100)}"
    else:
        difference = _difference(exercise, expected, call.answer)
        second = f"{_size(call.answer)}, {difference}" if difference else _short(call.answer, 140)
    if first.error is not None:
        as_given = f"raises {type(first.error).__name__}: {_short(str(first.error), 100)}"
    else:
        as_given = _short(first.answer, 140)
    detail = (
        f"as given: {as_given}; with {' and '.join(culprits)} in another insertion order: {second}"
    )
    other = Case(*exercise.reorder(case.args, case.kwargs, which), case.rule)  # for the hints
    return _Failure(case, "order", expected, got, hint, call.printed, detail, other), printed


def _argument(exercise: Exercise, case: Case, name: str) -> Any:
    names = exercise.arg_names()
    if name in case.kwargs:
        return case.kwargs[name]
    i = names.index(name) if name in names else int(name.split()[-1]) - 1
    return case.args[i]


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
        if failure is None:  # right as given: the same when only the order differs?
            try:
                failure, more = _order_failure(exercise, fn, case, expected, call, time_limit)
            except _TimeLimit:
                failures = [_Failure(case, "stuck", expected, None)]
                break
            printed += more
        if failure:
            failures.append(failure)
    if not failures:
        lines = [
            f"✅ {name}: correct on all {n} test inputs (edge cases and random ones).",
            *([f"   The chapter uses your {name} from here on."] if exercise.used_later else []),
            *_printed_note(name, printed, None),
        ]
        return CheckResult(name, "passed", fn, "\n".join(lines), n_cases=n, printed=printed)
    worst = min(failures, key=_Failure.key)
    return _report(exercise, worst, len(failures), n, time_limit, printed, fallback)


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
