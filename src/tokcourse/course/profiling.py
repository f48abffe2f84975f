"""Where a function spends its time (chapter 13).

Timing lives in :mod:`tokcourse.course.timing` (``cpu_seconds``, ``cpu_seconds_each``); this
module answers the other question, *where* the time goes: :func:`profile_function` runs a call
under cProfile in a fresh Python process.

A profiler should watch only the program under study. A notebook's kernel runs helper threads
of its own (they send output, save the history, answer the browser), and since Python 3.12
``cProfile`` is built on ``sys.monitoring``, which reports the calls of every thread: a
profile taken inside the kernel mixes their calls in and can credit their time to the wrong
function. So :func:`profile_function` does what one does for a script, ``python -m cProfile
script.py``: it runs the function in a new Python process, reads the statistics file that
process writes, and keeps the function and everything it calls, directly or not (``pstats``
records who called each function). Starting Python and loading the input are left out.

The function travels by name when it can be imported, by its source otherwise (a function
defined in a notebook), together with the modules and importable objects its code names. Its
arguments travel by ``pickle``.

>>> from tokcourse import bpe
>>> report = profile_function(bpe.train_on_chunks, ["abab", "ab"], 258)
>>> report.function, report.share("train_on_chunks")
('train_on_chunks', 1.0)
>>> "get_stats" in report.names()
True
"""

from __future__ import annotations

import inspect
import pickle
import pstats
import subprocess
import sys
import tempfile
import textwrap
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Profile", "Row", "profile_function"]


@dataclass(frozen=True)
class Row:
    """One function of a profile: how often it was called, and its time in seconds.

    ``own`` excludes the functions it called, ``total`` includes them.
    """

    function: str
    calls: int
    own: float
    total: float


@dataclass(frozen=True)
class Profile:
    """The profile of one call: the function, its time, and every function under it."""

    function: str
    seconds: float  # the function's own call, everything it called included
    rows: tuple[Row, ...]  # the function and all it called, most own time first

    def names(self) -> list[str]:
        """The functions of the profile, most own time first."""
        return [row.function for row in self.rows]

    def share(self, *names: str) -> float:
        """The part of the run spent in ``names``, the calls they make included.

        Give functions that do not call each other (their times would count twice).
        """
        unknown = set(names) - set(self.names())
        if unknown:
            raise ValueError(f"not in the profile: {sorted(unknown)}; it has {self.names()}")
        return sum(row.total for row in self.rows if row.function in names) / self.seconds

    def table(self, top: int = 6) -> str:
        """The ``top`` functions by own time: calls, own share, share with their callees.

        >>> print(Profile("f", 2.0, (Row("len", 10, 1.5, 1.5), Row("f", 1, 0.5, 2.0))).table())
            calls  own time  with calls  function
               10       75%         75%  len
                1       25%        100%  f
        """
        lines = [f"{'calls':>9} {'own time':>9} {'with calls':>11}  function"]
        for row in self.rows[:top]:
            lines.append(
                f"{row.calls:>9,} {row.own / self.seconds:>9.0%} "
                f"{row.total / self.seconds:>11.0%}  {row.function}"
            )
        return "\n".join(lines)


_PROGRAM = """\
import cProfile, pickle, sys
sys.path[:0] = {path!r}
{imports}
{definition}
with open(sys.argv[1], "rb") as file:
    args, kwargs = pickle.load(file)
profiler = cProfile.Profile()
profiler.runcall({name}, *args, **kwargs)
profiler.dump_stats(sys.argv[2])
"""


def profile_function(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Profile:
    """Profile ``fn(*args, **kwargs)`` in a fresh Python process; the calls under ``fn``.

    ``fn`` is imported there by name, or (defined in a notebook or inside a function) rebuilt
    from its source with the modules and objects it names. Arguments must pickle.

    Example: ``print(profile_function(train_naive, chunks, 290).table())``
    """
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise TypeError(f"profile_function needs a Python function, got {fn!r}")
    imports, definition = _shipping(fn)
    with tempfile.TemporaryDirectory() as tmp:
        inputs, stats_file = Path(tmp, "args.pickle"), Path(tmp, "fn.prof")
        inputs.write_bytes(pickle.dumps((args, kwargs)))
        program = _PROGRAM.format(
            path=[p for p in sys.path if p],
            imports=imports,
            definition=definition,
            name=fn.__name__,
        )
        run = subprocess.run(
            [sys.executable, "-c", program, str(inputs), str(stats_file)],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            raise RuntimeError(f"profiling {fn.__name__} failed:\n{run.stderr[-2000:]}")
        stats = pstats.Stats(str(stats_file)).stats  # type: ignore[attr-defined]
    return _under(stats, fn.__name__)


def _shipping(fn: Callable[..., Any]) -> tuple[str, str]:
    """(import lines, definition) that make ``fn`` exist under its name in a new process."""
    module, qualname = fn.__module__, fn.__qualname__
    if module not in (None, "__main__") and "<locals>" not in qualname and "." not in qualname:
        return f"from {module} import {qualname}", ""
    if fn.__code__.co_freevars:
        raise ValueError(
            f"{fn.__name__} uses {', '.join(fn.__code__.co_freevars)} from the function around "
            "it, which a new process cannot see; define it at the top level"
        )
    source = textwrap.dedent(inspect.getsource(fn))
    lines = []
    for name in sorted(_global_names(fn.__code__)):
        if name not in fn.__globals__:
            continue  # a builtin, or a name the function defines itself
        value = fn.__globals__[name]
        if isinstance(value, types.ModuleType):
            lines.append(f"import {value.__name__} as {name}")
            continue
        home = getattr(value, "__module__", None)
        own = getattr(value, "__qualname__", None)
        if home in (None, "__main__") or own is None or "." in own or "<" in own:
            raise ValueError(
                f"{fn.__name__} uses {name!r}, which a new process cannot import; define it "
                "in a module, or pass it as an argument"
            )
        lines.append(f"from {home} import {own} as {name}")
    return "\n".join(lines), source


def _global_names(code: types.CodeType) -> set[str]:
    """The global names a code object and the code nested in it (comprehensions) use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _label(function: tuple[str, int, str]) -> str:
    """pstats' ``(file, line, name)`` as a short name: ``merge``, ``len``, ``dict.get``."""
    name = function[2]
    if name.startswith("<built-in method "):
        return name.removeprefix("<built-in method ").removesuffix(">").split(".")[-1]
    if name.startswith("<method '"):  # <method 'get' of 'dict' objects>
        method, _, rest = name.removeprefix("<method '").partition("' of '")
        return f"{rest.split(chr(39))[0]}.{method}"
    return name


def _under(stats: dict, name: str) -> Profile:
    """The profile of ``name`` and every function it called, directly or not."""
    candidates = [f for f in stats if f[2] == name and f[0] != "~"]
    if not candidates:
        raise ValueError(f"{name} is not in the profile")
    root = max(candidates, key=lambda f: stats[f][3])
    callees: dict[tuple, set[tuple]] = {}
    for function, (*_, callers) in stats.items():
        for caller in callers:
            callees.setdefault(caller, set()).add(function)
    seen, todo = {root}, [root]
    while todo:
        for function in callees.get(todo.pop(), set()) - seen:
            seen.add(function)
            todo.append(function)
    rows = sorted(
        (Row(_label(f), stats[f][1], stats[f][2], stats[f][3]) for f in seen),
        key=lambda row: row.own,
        reverse=True,
    )
    return Profile(name, stats[root][3], tuple(rows))
