"""Checks for the exercises: ``merge = check.merge(merge)`` in a chapter's check cell.

Each check runs the student's function against the package's reference on curated edge cases
plus seeded random inputs, prints a verdict (with the smallest failing input, expected vs got,
and a hint when something is wrong), and returns the function the chapter should use from then
on: the student's if it passed, else the reference.

>>> from tokcourse import check
>>> def merge(ids, pair, idx):
...     out, i = [], 0
...     while i < len(ids):
...         if ids[i : i + 2] == list(pair):
...             out.append(idx)
...             i += 2
...         else:
...             out.append(ids[i])
...             i += 1
...     return out
>>> check.merge(merge) is merge  # doctest: +ELLIPSIS
✅ merge: correct on all ... test inputs (edge cases and random ones).
   The chapter uses your merge from here on.
True

Handed the course's own function (as happens when a check cell is run again after it handed
the reference back), a check says so instead of congratulating anyone:

>>> from tokcourse import bpe
>>> check.merge(bpe.merge) is bpe.merge  # doctest: +ELLIPSIS
↩️ merge: this is the course's merge (tokcourse.bpe.merge), not yours, ...
True

``check.show_solution("merge")`` prints the reference as standalone code (for Colab, where the
book's solution dropdowns show as plain text).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cache
from typing import Any

from tokcourse.course import checks
from tokcourse.course.exercises import CheckResult, Entry, Exercise, run_check
from tokcourse.course.solutions import solution_source

__all__ = ["exercise", "exercise_names", "result", "show_solution", "solution_code"]

_last: dict[str, CheckResult] = {}


@cache
def _registry() -> dict[str, Entry]:
    """Every exercise, from the ``EXERCISES`` table of each module in ``tokcourse.course.checks``.

    Modules are read in name order; a name two modules register is an error, not an override.
    """
    found: dict[str, Entry] = {}
    owner: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(checks.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{checks.__name__}.{info.name}")
        table = getattr(module, "EXERCISES", None)
        if not isinstance(table, dict):
            raise TypeError(f"{module.__name__} has no EXERCISES table (a dict name -> Entry)")
        for name, entry in table.items():
            if name in found:
                raise ValueError(
                    f"exercise {name!r} is in both {owner[name]} and {module.__name__}"
                )
            if not isinstance(entry, Entry):
                raise TypeError(f"{module.__name__}.EXERCISES[{name!r}] is not an Entry")
            found[name], owner[name] = entry, module.__name__
    return found


def exercise_names() -> list[str]:
    """The names of all exercises, sorted.

    >>> "merge" in exercise_names()
    True
    """
    return sorted(_registry())


@cache
def exercise(name: str) -> Exercise:
    """The :class:`~tokcourse.course.exercises.Exercise` called ``name``.

    >>> exercise("merge").reference_name
    'tokcourse.course.first_steps.merge'
    """
    registry = _registry()
    if name not in registry:
        raise ValueError(f"unknown exercise {name!r}; the exercises are {sorted(registry)}")
    built = registry[name].build()
    if built.name != name:  # the table's key is how students call it; reports use built.name
        raise ValueError(f"EXERCISES[{name!r}] builds an exercise called {built.name!r}")
    return built


def result(name: str) -> CheckResult:
    """The full result of the last check of exercise ``name`` (for tests and curious students)."""
    return _last[name]


def solution_code(name: str) -> str:
    """The reference solution of exercise ``name`` as code that runs on its own: imports, the
    function, then the helpers it calls. The functions of the other exercises are imported from
    the package, not written out (a student has written them already).

    >>> "from tokcourse.bpe import get_stats" in solution_code("encode")
    True
    """
    others = frozenset(
        f for n in _registry() if n != name for f in (exercise(n).reference, exercise(n).shown)
    )
    source = solution_source(exercise(name).shown, imported=others - {exercise(name).shown})
    return _yours_first(source, {exercise(n).shown.__name__ for n in _registry() if n != name})


def _yours_first(source: str, exercise_functions: set[str]) -> str:
    """``source`` with each import of another exercise's function made conditional: pasted into
    a notebook that defines it (the student's own), the import leaves it alone; pasted alone,
    it imports the course's (see ``show_solution("train")``)."""
    lines = source.split("\n")
    mine = [
        line
        for line in lines
        if line.startswith("from ") and line.split()[-1] in exercise_functions
    ]
    if not mine:
        return source
    names = ", ".join(line.split()[-1] for line in mine)
    guarded = [
        f"try:  # your own {names}, if this notebook defines them",
        f"    {names}",
        "except NameError:  # pasted alone: the course's",
        *(f"    {line}" for line in mine),
    ]
    rest = [line for line in lines if line not in mine]
    starts = ("import ", "from ")
    at = max((i for i, line in enumerate(rest) if line.startswith(starts)), default=-1) + 1
    return "\n".join(rest[:at] + guarded + rest[at:])


def show_solution(name: str) -> None:
    """Print the reference solution of exercise ``name`` as code you could paste into a cell.

    >>> show_solution("merge")  # doctest: +ELLIPSIS
    # Reference solution for `merge` (tokcourse.course.first_steps.merge)
    ...
    """
    print(f"# Reference solution for `{name}` ({exercise(name).reference_name})")
    print(solution_code(name))


def _checker(name: str) -> Callable[[Any], Callable]:
    def check(fn: Any) -> Callable:
        outcome = run_check(exercise(name), fn)
        _last[name] = outcome
        return outcome.fn

    check.__name__ = check.__qualname__ = name
    check.__module__ = __name__
    check.__doc__ = f"Check ``{_registry()[name].call}``; returns the function to use from here on."
    return check


@cache
def _cached_checker(name: str) -> Callable[[Any], Callable]:
    return _checker(name)


def __getattr__(name: str) -> Callable[[Any], Callable]:
    """``check.merge`` and the like: the check of the exercise of that name."""
    if not name.startswith("_") and name in _registry():
        return _cached_checker(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_registry()))
