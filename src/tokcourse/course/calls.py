"""Calling a student's function safely: on copies of the arguments, with a time limit, with
what it prints captured (the check engine, :mod:`tokcourse.course.exercises`, judges the call).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import io
import os
import signal
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class _TimeLimit(Exception):
    pass


#: What a call prints is kept up to this many characters (and counted beyond): a function that
#: prints megabytes in a loop must not fill the memory of the check, or of the grader.
KEEP_PRINTED = 100_000


class _Capture(io.TextIOBase):
    """A text stream that keeps the first ``KEEP_PRINTED`` characters and counts them all."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.kept = self.chars = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        n = len(text)
        self.chars += n
        if self.kept < KEEP_PRINTED:
            piece = text[: KEEP_PRINTED - self.kept]
            self.parts.append(piece)
            self.kept += len(piece)
        return n

    def getvalue(self) -> str:
        return "".join(self.parts)


@dataclass
class _Call:
    """One call of a function on one input: its answer or exception, what it printed."""

    answer: Any = None
    error: BaseException | None = None
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    printed: str = ""  # the first KEEP_PRINTED characters printed
    printed_chars: int = 0  # all of them


def _call_with_limit(
    call: Callable | None,
    fn: Callable,
    args: tuple,
    kwargs: dict,
    seconds: float | None,
    prepare: Callable[[tuple, dict], tuple[tuple, dict]] | None = None,
) -> _Call:
    """Call ``fn`` on copies of ``args`` and ``kwargs``, capturing what it prints.

    ``call`` is the exercise's own way to call (``Exercise.call``), or ``None`` for ``fn(*args,
    **kwargs)``. ``prepare`` changes the copies before the call (the check's second run puts
    dicts and sets in another order there).

    With ``seconds``, interrupt it after that long (raising ``_TimeLimit``). The interruption
    uses SIGALRM, so it only works in the main thread on Unix (Jupyter and Colab kernels run
    cells there); elsewhere the call simply has no time limit.
    """
    args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
    if prepare is not None:
        args, kwargs = prepare(args, kwargs)
    out = _Call(args=args, kwargs=kwargs)
    run = call or (lambda f, a, k: f(*a, **k))
    can_alarm = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    buffer = _Capture()

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
        out.printed, out.printed_chars = buffer.getvalue(), buffer.chars
    return out


def is_course_code(fn: Any, exercise: Any = None) -> bool:
    """Whether ``fn`` is the course's own code rather than a student's.

    >>> from tokcourse import bpe
    >>> import functools
    >>> is_course_code(bpe.merge), is_course_code(functools.partial(bpe.merge))
    (True, True)
    >>> is_course_code(lambda ids: ids)
    False
    """
    if exercise is not None and fn in (exercise.reference, exercise.shown):
        return True
    while isinstance(fn, functools.partial) or inspect.ismethod(fn):  # partial(bpe.encode)
        fn = fn.func if isinstance(fn, functools.partial) else fn.__func__
    if exercise is not None and fn in (exercise.reference, exercise.shown):
        return True
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return False
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tokcourse/
    return os.path.abspath(code.co_filename).startswith(package + os.sep)
