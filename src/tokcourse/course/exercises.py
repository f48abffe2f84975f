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
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import re
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
    _size,
    _type_advice,
    dict_of,
    first_difference,
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
    #: The words of the exercise text that state the rule this input tests ("the longest",
    #: "leftmost on a tie"); the suite finds them in the text, so a check never enforces a
    #: rule the text does not state.
    rule: str = field(default="", repr=False, compare=False)

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


Spelling = str | tuple[str, ...]


@dataclass(frozen=True)
class Names:
    """What an error message must name, because the exercise text asks for it.

    ``sentence`` is the text's own words ("naming the furthest position"): the suite finds
    them in the exercise's text, and finds no text asking for a name without a declaration.
    ``values(case)`` lists what the message must name on that input (a tuple gives several
    spellings of one value, any of which will do); each must appear in ``str(error)`` as a
    whole token, not inside a longer word or number. All of them must, or with ``any_of``
    one of them. ``describe`` says what they are, for the report.

    >>> names = Names("naming it", lambda case: [str(case.args[0])], "the id")
    >>> names.missing(Case((7,)), ValueError("7 is no token")), names.missing(
    ...     Case((7,)), ValueError("17 is no token"))
    ([], ['7'])
    """

    sentence: str
    values: Callable[[Case], Sequence[Spelling]]
    describe: str
    any_of: bool = False

    def missing(self, case: Case, error: BaseException) -> list[str]:
        """The values the message of ``error`` does not name (``[]``: it names enough)."""
        try:
            message = str(error)
        except Exception:  # a student's exception whose __str__ raises names nothing
            message = ""
        wanted = [(v,) if isinstance(v, str) else tuple(v) for v in self._values(case)]
        absent = [v[0] for v in wanted if not any(_names(message, s) for s in v)]
        if self.any_of and len(absent) < len(wanted):
            return []
        return absent

    def shown(self, case: Case) -> list[str]:
        """The values, as a report shows them: numbers bare, text quoted."""
        return [_show(v if isinstance(v, str) else v[0]) for v in self._values(case)]

    def _values(self, case: Case) -> Sequence[Spelling]:
        try:
            return self.values(case)
        except Exception:  # an input the declaration does not cover asks for no name
            return []

    def expected(self, case: Case) -> str:
        """What the message must name on this input, in words: "naming 3", "naming 257 and 259"."""
        joined = (" or " if self.any_of else " and ").join(self.shown(case))
        return f"naming {joined} ({self.describe})"


def _show(value: str) -> str:
    """A value to name, for a report: a number as it is, anything else quoted."""
    return value if re.fullmatch(r"-?\d+(\.\d*)?(e-?\d+)?", value) else repr(value)


def _names(message: str, value: str) -> bool:
    """Whether ``value`` occurs in ``message`` as a whole token: '7' is in 'id 7.', not 'id 17'."""
    return re.search(rf"(?<![\w.]){re.escape(value)}(?!\w|\.\d)", message) is not None


def reordered(value: Any) -> Any:
    """``value`` with every dict, set and frozenset in it rebuilt in another insertion order.

    A dict is rebuilt in reverse insertion order. A set iterates in the order of its items'
    hashes, and only items whose hashes collide follow their insertion order, so it is
    rebuilt in whichever insertion order changes its iteration (reverse, or as it iterates),
    where one does. Lists and tuples are rebuilt around their items; anything else (a rank
    table, a numpy array, an encoding) is the same object. Equal to ``value``.

    >>> reordered({"a": 1, "b": [{2: 3, 4: 5}]})
    {'b': [{4: 5, 2: 3}], 'a': 1}
    >>> list({3, 11}) != list(reordered({3, 11}))  # 3 and 11 share a slot of a small table
    True
    """
    kind = type(value)
    if kind is dict:
        return {reordered(k): reordered(v) for k, v in reversed(list(value.items()))}
    if kind in (set, frozenset):
        items = list(value)
        for order in (items[::-1], items):
            other = kind(reordered(v) for v in order)
            if list(other) != items:
                return other
        return kind(reordered(v) for v in items[::-1])
    if kind in (list, tuple):
        return kind(reordered(v) for v in value)
    return value


def _order_matters(value: Any) -> bool:
    """Whether :func:`reordered` iterates ``value`` (or something in it) in another order."""
    kind = type(value)
    if kind is dict:
        return len(value) > 1 or any(_order_matters(k) or _order_matters(v)
                                     for k, v in value.items())  # fmt: skip
    if kind in (set, frozenset):
        return list(reordered(value)) != list(value) or any(_order_matters(v) for v in value)
    if kind in (list, tuple):
        return any(_order_matters(v) for v in value)
    return False


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
    ``names``: what the message of an expected error must name (:class:`Names`), when the
    text asks for it.
    ``ordered``: the parameters whose dict order is part of the input, because the text gives
    it a meaning ("the merges in the order they were learned"). Every other dict or set
    argument is also tried in another insertion order: the answer must not change.
    ``accepts(case, expected, got)``: for an exercise with more than one right answer, whether
    ``got`` is one of them on ``case`` (``expected`` is the reference's answer; both in compared
    form, ``got`` of the right type). Default: ``got == expected``.
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
    names: Names | None = None
    ordered: tuple[str, ...] = ()
    accepts: Callable[[Case, Any, Any], bool] | None = None

    def right(self, case: Case, expected: Any, got: Any) -> bool:
        """Whether ``got`` (in compared form) is a right answer on ``case``."""
        if self.accepts is None:
            return bool(got == expected)
        try:
            return bool(self.accepts(case, expected, got))
        except Exception:  # an answer of a shape the rule cannot read is not right
            return False

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

    def unordered(self, case: Case) -> list[str]:
        """The arguments of ``case`` whose order :func:`reordered` changes, by name, minus the
        ``ordered`` ones: those the check also tries in another insertion order.

        Judged on copies, as the function receives them (a set copied is a set rebuilt).
        """
        names = self.arg_names()
        found = [
            names[i] if i < len(names) else f"argument {i + 1}"
            for i, value in enumerate(case.args)
            if _order_matters(_as_received(value))
        ]
        found += [n for n, value in case.kwargs.items() if _order_matters(_as_received(value))]
        return [name for name in found if name not in self.ordered]

    def reorder(self, args: tuple, kwargs: dict, which: Sequence[str]) -> tuple[tuple, dict]:
        """``args`` and ``kwargs`` with the arguments ``which`` (by name) :func:`reordered`."""
        names = self.arg_names()
        args = tuple(
            reordered(value) if (names[i] if i < len(names) else f"argument {i + 1}") in which
            else value
            for i, value in enumerate(args)
        )  # fmt: skip
        return args, {k: reordered(v) if k in which else v for k, v in kwargs.items()}

    def call_reordered(
        self, fn: Callable, case: Case, which: Sequence[str], seconds: float | None
    ) -> _Call:
        """Call ``fn`` on copies of ``case``'s arguments, ``which`` of them reordered after
        copying (a copy of a set may iterate in another order than the set)."""
        return _call_with_limit(
            self.call, fn, case.args, case.kwargs, seconds,
            prepare=lambda args, kwargs: self.reorder(args, kwargs, which),
        )  # fmt: skip


def _as_received(value: Any) -> Any:
    """``value`` as a function receives it: a copy, when it holds a set (copied, a set is
    rebuilt, and its iteration order can change)."""
    return copy.deepcopy(value) if _holds_a_set(value) else value


def _holds_a_set(value: Any) -> bool:
    kind = type(value)
    if kind in (set, frozenset):
        return True
    if kind is dict:
        return any(_holds_a_set(v) for v in value.values())
    if kind in (list, tuple):
        return any(_holds_a_set(v) for v in value)
    return False


@dataclass
class CheckResult:
    """The outcome of one check; ``fn`` is what the chapter should use from here on.

    ``status``: "passed", "not implemented", "course code", "not callable", or for a wrong
    function "failed", "error", "wrong type", "mutated", "violation" (right answer, wrong way),
    "message" (the right error, but its message does not name what the text asks), "order"
    (the answer changed with the order of a dict or set argument) or "stuck" (no answer
    within the time limit).
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
    other: Case | None = None  # for "order": the input in the other order, which got answers

    # When two failures are equally small, report the more basic mistake first.
    ORDER = ("stuck", "error", "wrong type", "failed", "message", "mutated", "violation", "order")

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
    call = exercise.call_reordered(fn, case, which, time_limit)
    printed = call.printed_chars
    if _judge(exercise, case, expected, call) is None:  # equal to case's arguments, any order
        return None, printed
    culprits = which
    if len(which) > 1:  # which argument's order was it? Try them one at a time.
        for name in which:
            again = exercise.call_reordered(fn, case, [name], time_limit)
            printed += again.printed_chars
            if _judge(exercise, case, expected, again) is not None:
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
    detail = (
        f"{'that error' if first.error is not None else 'that answer'} as given; with "
        f"{' and '.join(culprits)} in another insertion order: {second}"
    )
    other = Case(*exercise.reorder(case.args, case.kwargs, which), case.rule)  # for the hints
    return _Failure(case, "order", expected, got, hint, call.printed, detail, other), printed


def _argument(exercise: Exercise, case: Case, name: str) -> Any:
    names = exercise.arg_names()
    if name in case.kwargs:
        return case.kwargs[name]
    i = names.index(name) if name in names else int(name.split()[-1]) - 1
    return case.args[i]


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
