"""The exercise machinery: run a student's function against the reference, explain failures.

Each exercise in a chapter is four cells: a statement, a stub that raises
``NotImplementedError``, a check cell such as ``merge = check.merge(merge)``, and a solution
dropdown. The concrete checks live in :mod:`tokcourse.check`; this module holds what they share:

* :func:`run_check` calls the student's function and the reference on the same inputs (curated
  edge cases first, then seeded random ones), on fresh copies so that neither can spoil the
  other's input, and compares the answers.
* On a stub it says "not implemented yet", calmly. On a wrong answer or an exception it shows
  the *smallest* failing input, what was expected, what came back, and a hint aimed at the
  likely mistake.
* It always returns a function the rest of the chapter can use: the student's when it passed,
  otherwise the reference, with a one-line notice. A notebook with untouched stubs still runs
  to its end.
* :func:`show_solution` prints a reference solution as standalone code (with the imports and
  helpers it needs), for Colab where the book's solution dropdowns show as plain text.
"""

from __future__ import annotations

import ast
import copy
import inspect
import signal
import sys
import textwrap
import threading
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Case",
    "CheckResult",
    "Exercise",
    "Raised",
    "run_check",
    "show_solution",
    "solution_source",
]

#: Seconds one call of a student's function may take before we call it stuck.
TIME_LIMIT = 10.0


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


@dataclass
class Exercise:
    """What a check needs to know about one exercise.

    ``cases`` returns the inputs (edge cases then random ones, deterministic for a seed).
    ``normalize`` maps an answer to the form that is compared (default: unchanged).
    ``hints`` are tried in order on the smallest failure; each returns a hint or ``None``.
    ``solution`` is the package function shown as the solution (defaults to ``reference``).
    """

    name: str
    reference: Callable
    cases: Callable[[], Iterable[Case]]
    normalize: Callable[[Any], Any] = lambda answer: answer
    hints: Sequence[Hint] = ()
    solution: Callable | None = None
    what: str = ""

    @property
    def shown(self) -> Callable:
        return self.solution or self.reference

    @property
    def reference_name(self) -> str:
        fn = self.shown
        return f"{fn.__module__}.{fn.__qualname__}"


@dataclass
class CheckResult:
    """The outcome of one check; ``fn`` is what the chapter should use from here on."""

    exercise: str
    status: str  # "passed", "not implemented", "failed", "error", "stuck", "not callable"
    fn: Callable
    message: str
    n_cases: int = 0
    case: Case | None = None
    expected: Any = None
    got: Any = None

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
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 15] + f"… ({len(text)} chars)"


def _call_with_limit(fn: Callable, case: Case, seconds: float) -> Any:
    """Call ``fn`` on copies of the case's arguments, interrupting it after ``seconds``.

    The interruption uses SIGALRM, so it only works in the main thread on Unix (Jupyter and
    Colab kernels run cells there); elsewhere the call simply has no time limit.
    """
    args, kwargs = copy.deepcopy(case.args), copy.deepcopy(case.kwargs)
    can_alarm = (
        hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )
    if not can_alarm:
        return fn(*args, **kwargs)

    def on_alarm(signum: int, frame: types.FrameType | None) -> None:
        raise _TimeLimit

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_check(
    exercise: Exercise, fn: Any, *, quiet: bool = False, time_limit: float = TIME_LIMIT
) -> CheckResult:
    """Check ``fn`` against ``exercise.reference``; print the verdict and return the result.

    >>> from tokcourse import bpe
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


def _outcome(exercise: Exercise, answer: Any) -> Any:
    try:
        return exercise.normalize(answer)
    except Exception:  # an answer of the wrong shape is compared as it is, and differs
        return answer


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
            f"❌ {name}: expected a function, got {type(fn).__name__} {_short(fn, 80)}.\n"
            f"   Run the cell that defines `def {name}(...)` first.\n{fallback}",
        )
    failures: list[tuple[Case, str, Any, Any]] = []
    n = 0
    for case in exercise.cases():
        n += 1
        try:
            expected = _outcome(
                exercise, ref(*copy.deepcopy(case.args), **copy.deepcopy(case.kwargs))
            )
        except Exception as exc:  # some inputs must be refused: the refusal is the answer
            expected = Raised(type(exc).__name__)
        try:
            got = _outcome(exercise, _call_with_limit(fn, case, time_limit))
        except _TimeLimit:
            # One endless loop is enough to know; waiting out every case would take minutes.
            failures = [(case, "stuck", expected, None)]
            break
        except Exception as exc:  # a student's function may raise anything
            if isinstance(exc, NotImplementedError) and n == 1:
                return CheckResult(
                    name,
                    "not implemented",
                    ref,
                    f"⏳ {name}: not implemented yet (the stub raises NotImplementedError).\n"
                    f"   No problem: the chapter carries on with {exercise.reference_name}.\n"
                    f"   Write yours in the cell above, then run this cell again.",
                )
            if expected != Raised(type(exc).__name__):
                failures.append((case, "error", expected, exc))
            continue
        if got != expected:
            failures.append((case, "failed", expected, got))
    if not failures:
        return CheckResult(
            name,
            "passed",
            fn,
            f"✅ {name}: correct on all {n} test inputs (edge cases and random ones).\n"
            f"   The chapter uses your {name} from here on.",
            n_cases=n,
        )
    case, kind, expected, got = min(failures, key=lambda f: f[0].size())
    if kind == "stuck":
        lines = [f"❌ {name}: stuck on test input {n}:"]
    else:
        lines = [f"❌ {name}: wrong on {len(failures)} of {n} test inputs. The smallest one:"]
    lines.append(f"   {case.call_repr(name)}")
    lines.append(f"   expected: {_short(expected)}")
    if kind == "stuck":
        lines.append(f"   got:      no answer within {time_limit:g} s (an endless loop?)")
    elif kind == "error":
        lines.append(f"   got:      {type(got).__name__}: {got}")
    else:
        lines.append(f"   got:      {_short(got)}")
    hint = _first_hint(exercise, case, expected, got)
    if hint:
        lines.append(f"   hint: {hint}")
    lines.append(fallback)
    return CheckResult(name, kind, ref, "\n".join(lines), n, case, expected, got)


def _first_hint(exercise: Exercise, case: Case, expected: Any, got: Any) -> str | None:
    for hint in exercise.hints:
        try:
            text = hint(case, expected, got)
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


def show_solution(exercise: str | Exercise) -> None:
    """Print the reference solution of an exercise, as code you could paste into a cell.

    >>> show_solution("merge")  # doctest: +ELLIPSIS
    # Reference solution for `merge` (tokcourse.bpe.merge)
    ...
    """
    if isinstance(exercise, str):
        from tokcourse import check

        exercise = check.exercise(exercise)
    print(f"# Reference solution for `{exercise.name}` ({exercise.reference_name})")
    print(solution_source(exercise.shown))
