"""The data a check works with: inputs (:class:`Case`), outcomes and failures.

:class:`Case` is one input, :class:`Raised` the outcome "raised this error", :class:`Observed`
the outcome of an exercise that changes its arguments in place, :class:`Names` what an error
message must name, :func:`reordered` the same dict or set with its items inserted in another
order, :class:`CheckResult` a check's verdict. The engine is :mod:`tokcourse.course.exercises`,
which re-exports these.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tokcourse.course.answers import Returns, _short
from tokcourse.course.calls import _Call, _call_with_limit

__all__ = ["Case", "CheckResult", "Names", "Observed", "Raised", "Violation", "reordered"]


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
    ``what`` goes on the report's ``got:`` line, ``hint`` on its ``hint:`` line; ``expected``,
    when a check sets it, replaces the reference's answer on the ``expected:`` line (what the
    rule allows, such as a bound on the work).
    """

    def __init__(self, what: str, hint: str) -> None:
        super().__init__(what)
        self.what, self.hint = what, hint
        self.expected: str | None = None


# What a message may show for a value: one spelling, or several that each count.
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


@dataclass(frozen=True)
class Raised:
    """The outcome "raised an exception of this type", comparable like any answer."""

    error: str

    def __repr__(self) -> str:
        return f"raises {self.error}"


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
    ``used_later``: the chapter goes on with the student's function after the check (the
    passing message says so); ``False`` for an exercise whose function is not used again.
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
    used_later: bool = True

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
