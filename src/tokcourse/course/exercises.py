"""The exercise machinery: run a student's function against the reference, explain failures.

Each exercise in a chapter is four cells: a statement, a stub that raises
``NotImplementedError``, a check cell such as ``merge = check.merge(merge)``, and a solution
dropdown. The concrete checks live in :mod:`tokcourse.check`; this module holds what they share:

* :func:`run_check` calls the student's function and the reference on the same inputs (curated
  edge cases first, then seeded random ones), each on its own fresh copy of the arguments, and
  judges every answer four ways: it must not raise (unless the reference refuses the input
  too), it must have the right **type** (``Exercise.returns``: a list of ints, not a tuple or
  a generator), it must leave the **arguments unchanged** (``Exercise.pure``), and it must
  equal the reference's answer.
* On a stub it says "not implemented yet", calmly. On a wrong answer it shows the *smallest*
  failing input, what was expected and what came back (both as ``repr``), and a hint aimed at
  the mistake actually made. What the function prints while it is checked is captured: the
  report quotes a few lines of it, from the failing input only.
* It always returns a function the rest of the chapter can use: the student's when it passed,
  otherwise the reference, with a one-line notice. A notebook with untouched stubs still runs
  to its end. Handed the course's own function (a check cell run again after a failure, when
  the name already points to the reference), it says so and never reports success.
* :func:`show_solution` prints a reference solution as standalone code (with the imports and
  helpers it needs), for Colab where the book's solution dropdowns show as plain text.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import inspect
import io
import os
import signal
import sys
import textwrap
import threading
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BOOL",
    "BYTES",
    "INT",
    "PAIR",
    "STR",
    "Case",
    "CheckResult",
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


# --- what an answer must be: type rules --------------------------------------------------------


@dataclass(frozen=True)
class Returns:
    """A type rule: ``describe`` says what the answer must be, ``problem`` what is wrong with one.

    ``problem(value)`` is ``None`` when the value fits, else a phrase naming the first thing
    that does not ("a tuple (1, 2)", "a list whose item 0 is a str 'a'").

    >>> list_of(INT).problem((1, 2))
    'a tuple (1, 2)'
    >>> list_of(INT).problem([1, "2"])
    "a list whose item 1 is a str '2'"
    >>> list_of(INT).describe
    'a list of ints'
    """

    describe: str
    problem: Callable[[Any], str | None]
    advice: str = ""  # what usually fixes an answer of the wrong type, for the hint


def _a(value: Any) -> str:
    """``value`` with its type in words: "None", "a tuple (1, 2)", "a generator"."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, (types.GeneratorType, map, filter, zip, reversed, enumerate)):
        return f"a {type(value).__name__} object"
    name = type(value).__name__
    name = "bytes object" if name == "bytes" else name
    article = "an" if name[0] in "aeiouAEIOU" else "a"
    return f"{article} {name} {_short(value, 60)}"


def _instance(
    kinds: type | tuple[type, ...], describe: str, *, exact_bool: bool = False, advice: str = ""
) -> Returns:
    def problem(value: Any) -> str | None:
        if isinstance(value, bool) and not exact_bool:  # True is an int to Python, not to us
            return _a(value)
        return None if isinstance(value, kinds) else _a(value)

    return Returns(describe, problem, advice)


INT = _instance(int, "an int")
STR = _instance(str, "a str")
BYTES = _instance(
    bytes, "a bytes object", advice="bytes([b1, b2, ...]) turns a list of ints into bytes."
)
BOOL = _instance(
    bool,
    "a bool (True or False)",
    exact_bool=True,
    advice="A comparison such as a == b is already a bool: return it.",
)


def _pair_problem(value: Any) -> str | None:
    if isinstance(value, tuple) and len(value) == 2 and all(INT.problem(x) is None for x in value):
        return None
    return _a(value)


PAIR = Returns("a pair of ints (a, b)", _pair_problem)


def list_of(item: Returns) -> Returns:
    """A list (not a tuple, not a generator) whose items all fit ``item``."""

    def problem(value: Any) -> str | None:
        if not isinstance(value, list):
            return _a(value)
        for i, x in enumerate(value):
            if item.problem(x) is not None:
                return f"a list whose item {i} is {_a(x)}"
        return None

    plural = item.describe.split(" ", 1)[1] + "s" if " " in item.describe else item.describe
    return Returns(f"a list of {plural}", problem)


def dict_of(key: Returns, value: Returns, describe: str = "") -> Returns:
    """A dict (a subclass such as ``Counter`` is a dict too) from ``key`` to ``value``.

    >>> dict_of(PAIR, INT, "a dict {(a, b): count}").problem({(1, 2): "3"})
    "a dict whose value for (1, 2) is a str '3'"
    """

    def problem(answer: Any) -> str | None:
        if not isinstance(answer, dict):
            return _a(answer)
        for k, v in answer.items():
            if key.problem(k) is not None:
                return f"a dict with the key {_a(k)}"
            if value.problem(v) is not None:
                return f"a dict whose value for {_short(k, 40)} is {_a(v)}"
        return None

    return Returns(describe or f"a dict {{{key.describe}: {value.describe}}}", problem)


def _type_advice(got: Any) -> str:
    """What usually fixes an answer of this type."""
    if got is None:
        return " Did a path through your function end without `return`?"
    if isinstance(got, (types.GeneratorType, map, filter, zip, reversed, enumerate)):
        return (
            " An iterator can be read only once and has no len(): collect the items in a "
            "list (list(...) or a list comprehension)."
        )
    if isinstance(got, tuple):
        return " Build a list ([...] or list(...)), not a tuple."
    return ""


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

    ``status`` is one of "passed", "not implemented", "course code", "not callable", and for
    a wrong function "failed" (wrong answer), "error" (an exception the reference does not
    raise), "wrong type", "mutated" (changed its arguments), "violation" (right answer, wrong
    way) or "stuck" (no answer within the time limit).
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


class _TimeLimit(Exception):
    pass


def _is_byte_vocab(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and len(value) >= 256
        and all(value.get(b) == bytes([b]) for b in range(256))
    )


def _short(value: Any, limit: int = 300) -> str:
    if _is_byte_vocab(value):  # 256 lines of b'\x00', b'\x01'... would hide what matters
        merged = {k: v for k, v in value.items() if not (isinstance(k, int) and 0 <= k < 256)}
        return f"vocab(256 single bytes + {_short(merged, limit - 30)})"
    try:
        text = repr(value)
    except Exception as exc:  # a student's object with a broken __repr__
        text = f"<{type(value).__name__} whose repr raised {type(exc).__name__}>"
    return text if len(text) <= limit else text[: limit - 15] + f"… ({len(text)} chars)"


@dataclass
class _Call:
    """One call of a function on one input: its answer or exception, what it printed."""

    answer: Any = None
    error: BaseException | None = None
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    printed: str = ""


def _call_with_limit(exercise: Exercise, fn: Callable, case: Case, seconds: float | None) -> _Call:
    """Call ``fn`` on copies of the case's arguments, capturing what it prints.

    With ``seconds``, interrupt it after that long (raising ``_TimeLimit``). The interruption
    uses SIGALRM, so it only works in the main thread on Unix (Jupyter and Colab kernels run
    cells there); elsewhere the call simply has no time limit.
    """
    args, kwargs = copy.deepcopy(case.args), copy.deepcopy(case.kwargs)
    out = _Call(args=args, kwargs=kwargs)
    run = exercise.call or (lambda f, a, k: f(*a, **k))
    can_alarm = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    buffer = io.StringIO()

    def on_alarm(signum: int, frame: types.FrameType | None) -> None:
        raise _TimeLimit

    previous = signal.signal(signal.SIGALRM, on_alarm) if can_alarm else None
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            if can_alarm:
                signal.setitimer(signal.ITIMER_REAL, seconds)
            try:
                out.answer = run(fn, args, kwargs)
            except _TimeLimit:
                raise
            except Exception as exc:  # a student's function may raise anything
                out.error = exc
            finally:
                if can_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        if can_alarm:
            signal.signal(signal.SIGALRM, previous)
        out.printed = buffer.getvalue()
    return out


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


def is_course_code(fn: Any, exercise: Exercise | None = None) -> bool:
    """Whether ``fn`` is the course's own code rather than a student's.

    >>> from tokcourse import bpe
    >>> is_course_code(bpe.merge), is_course_code(lambda ids: ids)
    (True, False)
    """
    if exercise is not None and fn in (exercise.reference, exercise.shown):
        return True
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return False
    package = os.path.dirname(os.path.abspath(__file__))
    return os.path.abspath(code.co_filename).startswith(package + os.sep)


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
        try:
            same = before == after
        except Exception:
            same = False
        if not same:
            name = names[i] if i < len(names) else f"argument {i + 1}"
            return f"{name}: {_short(before, 120)} became {_short(after, 120)}"
    for name, before in case.kwargs.items():
        if before != call.kwargs.get(name):
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
        advice = _type_advice(returned) or (f" {rule.advice}" if rule.advice else "")
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
    if _normalized(exercise, got) != expected:
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
        reference = _call_with_limit(exercise, ref, case, None)
        expected = reference.answer
        if reference.error is not None:  # some inputs must be refused: the refusal is the answer
            expected = Raised(type(reference.error).__name__)
        try:
            call = _call_with_limit(exercise, fn, case, time_limit)
        except _TimeLimit:
            # One endless loop is enough to know; waiting out every case would take minutes.
            failures = [_Failure(case, "stuck", expected, None)]
            break
        printed += len(call.printed)
        if isinstance(call.error, NotImplementedError) and n == 1:
            return CheckResult(
                name,
                "not implemented",
                ref,
                f"⏳ {name}: not implemented yet (the stub raises NotImplementedError).\n"
                f"   No problem: the chapter carries on with {exercise.reference_name}.\n"
                f"   Write yours in the cell above, then run this cell again.",
                printed=printed,
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


# --- solutions -------------------------------------------------------------------------------


def _module_of(fn: Callable) -> types.ModuleType:
    return sys.modules[fn.__module__]


def _dependencies(fn: Callable) -> tuple[list[str], list[Callable]]:
    """Import lines and same-module helper functions that ``fn`` needs to run on its own."""
    imports: list[str] = []
    helpers: list[Callable] = []
    seen: set[int] = set()

    def visit(f: Callable) -> None:
        if id(f) in seen:
            return
        seen.add(id(f))
        module = _module_of(f)
        used = {name: f.__globals__[name] for name in _global_names(f)}
        for name, obj in used.items():
            if isinstance(obj, types.ModuleType):
                line = f"import {obj.__name__}" + (f" as {name}" if name != obj.__name__ else "")
            elif getattr(obj, "__module__", None) == module.__name__ and inspect.isfunction(obj):
                visit(obj)
                if obj not in helpers:
                    helpers.append(obj)
                continue
            elif hasattr(obj, "__module__") and hasattr(obj, "__qualname__"):
                alias = f" as {name}" if name != obj.__qualname__ else ""
                line = f"from {obj.__module__} import {obj.__qualname__}{alias}"
            else:  # a constant such as a pattern string: import it from where f found it
                line = f"from {module.__name__} import {name}"
            if line not in imports:
                imports.append(line)

    visit(fn)
    return imports, helpers


def _global_names(fn: Callable) -> list[str]:
    """Module-level names that ``fn``'s source reads, in order of first use.

    Read off the syntax tree: ``inspect.getclosurevars`` would also report attribute names
    (``text.encode`` looks like a use of a global ``encode``) and would miss names in default
    values (``pattern=GPT4_SPLIT_PATTERN``), which are evaluated when the function is defined.
    """
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    local = set(fn.__code__.co_varnames)
    names: list[str] = []
    for node in ast.walk(tree.body[0]):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id not in local
            and node.id in fn.__globals__
            and node.id not in names
        ):
            names.append(node.id)
    return names


def solution_source(fn: Callable) -> str:
    """Standalone source of a reference solution: imports, helpers it calls, then ``fn``.

    >>> from tokcourse.bpe import merge
    >>> print(solution_source(merge).splitlines()[0])
    from __future__ import annotations
    """
    imports, helpers = _dependencies(fn)
    parts = ["from __future__ import annotations"]
    if imports:
        parts.append("\n".join(sorted(imports)))
    parts += [inspect.getsource(h).rstrip() for h in helpers]
    parts.append(inspect.getsource(fn).rstrip())
    return "\n\n\n".join(parts) + "\n"


def show_solution(exercise: Exercise) -> None:
    """Print the reference solution of an exercise, as code you could paste into a cell.

    Notebooks call ``check.show_solution("merge")``, which looks the exercise up by name.

    >>> show_solution(Exercise("double", lambda x: 2 * x, list, solution=solution_source))
    ... # doctest: +ELLIPSIS
    # Reference solution for `double` (tokcourse.exercises.solution_source)
    ...
    """
    print(f"# Reference solution for `{exercise.name}` ({exercise.reference_name})")
    print(solution_source(exercise.shown))
