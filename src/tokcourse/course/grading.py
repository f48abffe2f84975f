"""Grading one submission, inside the process the grader starts for it (untrusted code runs here).

    python -m tokcourse.course.grading JOB.json

:mod:`tokcourse.grade` writes the job (the notebook, its chapter, the exercises still to grade,
the limits) and reads the results, one JSON line per event, from the file the job names. This
process limits its own memory and the size of the files it writes, runs the submission's
definitions (:func:`tokcourse.course.submission.plan`), then runs the course's check of each
exercise on the student's function, quietly, and reports:

* ``passed``: the check passed on the student's own code;
* ``failed``: the check's verdict was wrong, wrong type, changed its arguments, stuck, raised;
  or the function is the course's own (or calls it), or the submission changed the course's
  code (the checks, a reference function, anything in ``tokcourse``, a builtin);
* ``not attempted``: the stub still raises ``NotImplementedError``, or there is no function;
* ``error``: the check could not run (the cell does not compile, the cell defining the function
  raised, the check itself crashed).

Every result line is written (and flushed) as soon as it is known: if the submission ends this
process (``os._exit``, a crash), the grader still has everything graded before.
"""

from __future__ import annotations

import _thread
import ast
import builtins
import contextlib
import dataclasses
import functools
import importlib
import io
import json
import linecache
import os
import pkgutil
import re
import resource
import signal
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

DETAIL_CHARS = 400
#: The builtins as Python made them: a submission that replaces one is caught by comparing with
#: this, and the builtins are put back before the grader runs another line of its own.
_BUILTINS = dict(vars(builtins))


_MISSING = object()


class _Budget(BaseException):
    """Raised by the alarm when one top-level statement of a submission runs too long."""


class _CappedText(io.TextIOBase):
    """A stream that keeps nothing and only counts: what a submission prints goes here."""

    def __init__(self) -> None:
        self.chars = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


def _limit_resources(memory_mb: int, file_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write fails, not the process


def _import_everything() -> list[str]:
    """Import every module of tokcourse now, so that the fingerprint covers all of them."""
    import tokcourse

    failed = []
    for info in pkgutil.walk_packages(tokcourse.__path__, "tokcourse."):
        if info.name.endswith("__main__") or info.name == __name__:
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # a module that needs an optional dependency: not ours to watch
            failed.append(info.name)
    return failed


def _ident(value: Any) -> tuple:
    if isinstance(value, types.FunctionType):
        return (id(value), id(value.__code__), id(value.__defaults__), id(value.__kwdefaults__))
    return (id(value),)


def fingerprint() -> dict[str, tuple]:
    """Who is who in tokcourse and builtins: every module attribute, every class attribute."""
    state: dict[str, tuple] = {}
    for name, module in list(sys.modules.items()):
        if name != "tokcourse" and not name.startswith("tokcourse."):
            continue
        state[name] = (id(module),)
        for attr, value in list(vars(module).items()):
            state[f"{name}.{attr}"] = _ident(value)
            if isinstance(value, type) and value.__module__ == name:
                for key, member in list(vars(value).items()):
                    state[f"{name}.{attr}.{key}"] = _ident(member)
    return state


def restore_builtins() -> list[str]:
    """Put back every builtin a submission replaced or deleted; their names, sorted."""
    current = builtins.__dict__
    patched = [k for k, v in _BUILTINS.items() if current.get(k, _MISSING) is not v]
    current.update(_BUILTINS)
    return sorted(f"builtins.{k}" for k in patched)


def changed(before: dict[str, tuple], exercises: dict[str, Any] | None = None) -> list[str]:
    """The names whose object was replaced or removed since ``before`` (builtins first, which
    are put back)."""
    patched = restore_builtins()
    after = fingerprint() | exercise_state(exercises or {})
    return patched + sorted(k for k, v in before.items() if after.get(k) != v)


def _one_line(message: str) -> str:
    """A check's report as one line: without its verdict mark and its closing advice."""
    lines = [line.strip() for line in message.splitlines()]
    keep = []
    for line in lines:
        if line.startswith(("Meanwhile the chapter", "Fix yours and run", "No problem:")):
            continue
        if line.startswith(("Write yours in the cell", "The chapter uses your")):
            continue
        keep.append(line)
    text = "; ".join(x for x in keep if x)
    text = re.sub(r" at 0x[0-9a-fA-F]+>", ">", text)  # the same report every run
    for mark in ("✅ ", "❌ ", "⏳ ", "↩️ "):
        text = text.replace(mark, "")
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"


class Grader:
    """Runs one submission's definitions, then the checks; writes results to ``out``.

    ``exercises``: the chapter's exercises, built before any of the submission's code runs
    (the grader keeps these objects and fingerprints their fields: a notebook that swaps a
    check's cases or its reference is caught).
    """

    def __init__(self, job: dict, out: io.TextIOBase, exercises: dict[str, Any]) -> None:
        self.job, self.out, self.exercises = job, out, exercises
        self.statement_seconds = float(job.get("statement_seconds", 10))
        self.ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        self.snapshots: dict[str, Any] = {}
        self.define_errors: dict[str, str] = {}
        self.cell_faults: dict[str, str] = dict(job.get("faults", {}))
        self.redefined: dict[str, str] = {}  # defined again after its check cell, in that cell
        self.not_run: dict[str, str] = {}  # assigned by a chapter cell whose code is not run
        # statements that ended the process in an earlier run: (cell, line) -> what they did
        self.skip = {(cell, line): why for cell, line, why in job.get("skip", [])}

    def emit(self, **event: Any) -> None:
        self.out.write(json.dumps(event, ensure_ascii=False) + "\n")
        self.out.flush()

    # --- running the submission's definitions ---------------------------------------------

    def _run_statement(self, cell, stmt) -> None:
        def on_alarm(signum, frame):
            raise _Budget

        # dont_inherit: the student's code is compiled as a notebook would compile it, not
        # under this module's ``from __future__ import annotations``
        code = compile(stmt.code, cell.filename, "exec", dont_inherit=True)
        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, self.statement_seconds)
        try:
            exec(code, self.ns)  # noqa: S102 (grading runs the student's code by design)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def run_definitions(self, plans) -> None:
        names = set(self.exercises)
        for cell in plans:
            lines = cell.text.splitlines(True)
            linecache.cache[cell.filename] = (len(cell.text), None, lines, cell.filename)
            for name in cell.not_run:
                self.not_run.setdefault(name, cell.where)
            if cell.syntax_error:
                for name in sorted(cell.answers - set(self.snapshots)):
                    self.define_errors[name] = (
                        f"{cell.where}, which defines {name}, does not compile: {cell.syntax_error}"
                    )
                continue
            for stmt in cell.statements:
                where = (cell.index, stmt.line)
                if where in self.skip:  # it ended the process last time
                    self._failed(cell, stmt, self.skip[where], True)
                    continue
                if cell.answer:  # if this statement ends the process, the grader knows which
                    self.emit(event="statement", cell=cell.index, line=stmt.line)
                try:
                    self._run_statement(cell, stmt)
                except _Budget:
                    self._failed(cell, stmt, f"ran over {self.statement_seconds:g} s", True)
                except SystemExit as err:
                    self._failed(cell, stmt, f"called sys.exit({err.code!r})", True)
                except MemoryError:
                    self._failed(cell, stmt, "ran out of memory", True)
                except BaseException as err:  # noqa: BLE001 (a student's code raises anything)
                    self._failed(cell, stmt, f"raised {type(err).__name__}: {err}")
                    if cell.answer and not _chapter_name(err, self.not_run):
                        break  # as in Jupyter, a cell stops at its first error; a line that
                        # failed only for a value of the chapter the grader skips, does not
                else:
                    for name in stmt.defines & names:
                        self.define_errors.pop(name, None)
                        imported = isinstance(stmt.code.body[0], ast.Import | ast.ImportFrom)
                        if name in self.snapshots and not imported:
                            self.redefined.setdefault(name, cell.where)
            for name in cell.checks:
                if name not in self.snapshots:
                    self.snapshots[name] = self.ns.get(name, _MISSING)

    def _failed(self, cell, stmt, what: str, fault: bool = False) -> None:
        where = f"{cell.where}, line {stmt.line}"
        for name in stmt.defines & set(self.exercises):
            self.define_errors[name] = f"defining {name} ({where}) {what}"[:DETAIL_CHARS]
        if fault:  # the cell of an exercise did not run as a cell should: it is not graded
            for name in cell.answers:
                self.cell_faults.setdefault(name, f"{where}, in the cell of {name}, {what}")

    # --- the checks ------------------------------------------------------------------------

    def function_of(self, name: str) -> Any:
        found = self.snapshots.get(name, _MISSING)
        return self.ns.get(name, _MISSING) if found is _MISSING else found

    def use_reference(self, name: str) -> None:
        """After a check that did not pass, as the check cell does: the chapter goes on with
        the course's function, so a later exercise that calls this one is judged on its own."""
        self.ns[name] = self.exercises[name].reference

    def grade(self, name: str, before: dict[str, tuple]) -> dict[str, str]:
        row = self._grade(name, before)
        if name in self.redefined and row["status"] != "passed":
            row["detail"] += (
                f" ({self.redefined[name]} defines {name} again after its check cell;"
                " the grader, like Run All, checks the one defined before the check)"
            )
        return row

    def _grade(self, name: str, before: dict[str, tuple]) -> dict[str, str]:
        from tokcourse.course.exercises import is_course_code, run_check

        if name in self.cell_faults:
            return {"status": "error", "detail": self.cell_faults[name][:DETAIL_CHARS]}
        fn = self.function_of(name)
        if fn is _MISSING:
            if name in self.define_errors:
                return {"status": "error", "detail": self.define_errors[name]}
            return {"status": "not attempted", "detail": f"no function {name} in the notebook"}
        if name in self.define_errors and not callable(fn):
            return {"status": "error", "detail": self.define_errors[name]}
        exercise = self.exercises[name]
        if callable(fn) and is_course_code(fn, exercise):
            inner = fn
            while isinstance(inner, functools.partial):
                inner = inner.func
            where = f"{getattr(inner, '__module__', '?')}.{getattr(inner, '__qualname__', name)}"
            return {
                "status": "failed",
                "detail": f"hands in the course's own function ({where}), not the student's",
            }
        calls: list[str] = []
        traced = dataclasses.replace(exercise, call=_traced(exercise, calls))
        limit = float(self.job.get("check_seconds", 10))
        result = run_check(traced, fn, quiet=True, time_limit=limit)
        tampered = changed(before, self.exercises)
        if tampered:
            return {"status": "failed", "detail": _tamper_detail(tampered)}
        detail = _one_line(result.message)
        if result.status == "passed" and not result.n_cases:
            return {"status": "error", "detail": "the check ran on no input at all"}
        if result.status == "passed" and calls:  # right, but by running the course's code
            what = calls[0]
            detail = (
                f"{name}: {what}; not graded as passed"
                if " (" in what
                else f"{name} calls the course's own {what}: it is not the student's work"
            )
            return {"status": "failed", "detail": detail}
        if result.status == "passed":
            return {"status": "passed", "detail": detail}
        if result.status == "not implemented":
            stub = "the stub still raises NotImplementedError"
            return {"status": "not attempted", "detail": stub}
        if result.status == "not callable":
            return {"status": "failed", "detail": f"{name} is not a function: {detail}"}
        missing = _chapter_name(result.got, self.not_run)
        if missing:
            variable, cell = missing
            return {
                "status": "error",
                "detail": (
                    f"{name} uses {variable}, from {cell}: a line of the chapter the grader "
                    "does not run (it runs the chapter's definitions, not its computations): "
                    f"define {variable} in the cell of {name}, or pass it in"
                ),
            }
        row = {"status": "failed", "detail": detail}
        if result.case is not None:
            row["input"] = result.case.call_repr(name)
        return row


def _chapter_name(got: Any, not_run: dict[str, str]) -> tuple[str, str] | None:
    """``(name, cell)`` when the student's function raised NameError for a name that a chapter
    cell assigns in a statement the grader did not run."""
    if isinstance(got, NameError) and getattr(got, "name", None) in not_run:
        return got.name, not_run[got.name]
    return None


def _tamper_detail(names: list[str]) -> str:
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"the notebook changes the course's code ({shown}): not graded as passed"


def _traced(exercise, calls: list[str]) -> Callable:
    """``exercise.call`` that records when the student's function makes the reference run:
    directly, through a wrapper, or in a thread it starts. While it runs, ``sys.setprofile``
    is the grader's (a student's call to it is recorded, not obeyed), and a thread started
    with ``_thread`` runs under the same watch."""
    original = exercise.call or (lambda f, a, k: f(*a, **k))
    watched = {
        getattr(f, "__code__", None) for f in (exercise.reference, exercise.shown) if f is not None
    } - {None}
    set_profile, start_thread = sys.setprofile, _thread.start_new_thread

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in watched:
            calls.append(frame.f_code.co_qualname)

    def refuse_setprofile(function):
        if function is profile:  # threading starting a thread sets the grader's own profile
            set_profile(profile)
        else:
            calls.append("sys.setprofile (it tried to turn the grader's tracing off)")

    def watched_thread(function, args, kwargs=None):
        def run(*a, **k):
            set_profile(profile)
            return function(*a, **k)

        return start_thread(run, args, kwargs or {})

    def call(fn, args, kwargs):
        if fn is exercise.reference:
            return original(fn, args, kwargs)
        set_profile(profile)
        threading.setprofile(profile)
        sys.setprofile, _thread.start_new_thread = refuse_setprofile, watched_thread
        _AUDIT.append(calls)
        try:
            return original(fn, args, kwargs)
        finally:
            _AUDIT.clear()
            sys.setprofile, _thread.start_new_thread = set_profile, start_thread
            if sys.getprofile() is not profile:
                calls.append("the profiler (it turned the grader's tracing off)")
            set_profile(None)
            threading.setprofile(None)  # type: ignore[arg-type]

    return call


#: While a student's function runs under a check, the list its audited events go to.
_AUDIT: list[list[str]] = []
_PROCESS_EVENTS = {"os.fork", "os.forkpty", "subprocess.Popen", "os.system", "os.posix_spawn",
                   "os.exec", "os.spawn", "pty.spawn"}  # fmt: skip


def _audit(event: str, args: tuple) -> None:
    """An audit hook (``sys.addaudithook``: a student's code cannot remove it). During a check
    it records a profiler switched by any name (``SP = sys.setprofile`` saved before the check)
    other than by ``threading`` starting a thread, and any process started: the course's code
    run there would not be seen."""
    if not _AUDIT:
        return
    if event == "sys.setprofile":
        caller = sys._getframe(1)
        if caller.f_code.co_filename not in (threading.__file__, __file__):
            _AUDIT[0].append("sys.setprofile (it turned the grader's tracing off)")
    elif event in _PROCESS_EVENTS:
        _AUDIT[0].append(f"{event} (it started another process, which the grader cannot watch)")


def exercise_state(exercises: dict[str, Any]) -> dict[str, tuple]:
    """Who is who in each exercise the grader holds: its cases, reference, rules."""
    return {
        f"exercise {name}.{f.name}": (id(getattr(ex, f.name)),)
        for name, ex in exercises.items()
        for f in dataclasses.fields(ex)
    }


def run(job: dict) -> int:
    from tokcourse.course.submission import plan, read_notebook

    out = open(job["results"], "a", encoding="utf-8")  # noqa: SIM115 (kept open to the end)
    sys.stdout = sys.stderr = _CappedText()
    package = job.get("package")
    import tokcourse

    if package and not Path(tokcourse.__file__).resolve().is_relative_to(Path(package).resolve()):
        out.write(json.dumps({"event": "fatal", "detail": tokcourse.__file__}) + "\n")
        return 1
    _import_everything()
    sys.addaudithook(_audit)
    from tokcourse import check

    names = tuple(job["chapter_exercises"])
    exercises = {name: check.exercise(name) for name in names}
    grader = Grader(job, out, exercises)
    for name in exercises:
        list(exercises[name].cases())  # build their inputs now, before any student code runs
    nb = read_notebook(Path(job["notebook"]))
    plans = plan(nb, names)
    before = fingerprint() | exercise_state(exercises)
    _limit_resources(int(job.get("memory_mb", 2048)), int(job.get("file_mb", 16)))
    grader.emit(event="start", exercise="")
    with contextlib.suppress(BaseException):
        grader.run_definitions(plans)
    for name in job.get("use_reference", []):
        grader.use_reference(name)
    tampered = changed(before, exercises)
    for name in job["exercises"]:
        grader.emit(event="start", exercise=name)
        if tampered:
            row = {"status": "failed", "detail": _tamper_detail(tampered)}
        else:
            try:
                row = grader.grade(name, before)
            except SystemExit as err:
                row = {"status": "failed", "detail": f"{name} called sys.exit({err.code!r})"}
            except BaseException as err:  # noqa: BLE001
                crash = f"the check crashed: {type(err).__name__}: {err}"
                row = {"status": "error", "detail": crash}
        if row["status"] != "passed":
            grader.use_reference(name)
        grader.emit(event="result", exercise=name, **row)
    grader.emit(event="done")
    out.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    os.chdir(job["workdir"])
    code = run(job)
    sys.stdout.flush()
    os._exit(code)  # no interpreter shutdown: a submission's atexit hooks do not run


if __name__ == "__main__":
    main()
