"""The rule of chapter 01's exercises: UTF-8 by hand, no codec.

The checks read the student's function's code (and the code of the functions of its own
module it calls) before calling it, and refuse ``.encode``, ``.decode``, the ``codecs`` module
and a codec's name such as ``"utf-8"``: any string Python's codec registry resolves to UTF-8
(``"UTF8"``, ``"cp65001"``...), written in the code or read from a module-level variable
(:class:`~tokcourse.course.exercises.Violation`, the "work" rule of the bug catalogue).
"""

from __future__ import annotations

import ast
import codecs
import dis
import inspect
import textwrap
import types
from collections.abc import Callable
from typing import Any

from tokcourse.course.exercises import Violation

# --- no codec -------------------------------------------------

#: Names whose use means Python's codec does the work: ``str.encode``, ``bytes.decode``, the
#: ``codecs`` module.
_CODEC_NAMES = frozenset({"encode", "decode", "codecs"})

_NO_CODEC = (
    "the exercise asks you to move the bits yourself, without Python's codec (str.encode, "
    "bytes.decode, bytes(text, 'utf-8') or the codecs module): build each byte with >>, & "
    "and |, or with strings of binary digits."
)


def _reject(what: str, hint: str) -> None:
    """Fail a call whose answer may be right but whose way is not what the exercise teaches."""
    raise Violation(what, hint)


def _is_codec_string(value: object) -> bool:
    """Whether ``value`` names UTF-8 for Python's codec registry: ``"utf-8"`` and every alias
    of it (``"UTF8"``, ``"u8"``, ``"cp65001"``...)."""
    if not isinstance(value, str) or not 0 < len(value) <= 40:
        return False
    try:
        return codecs.lookup(value).name == "utf-8"
    except (LookupError, ValueError, TypeError):
        return False


def _message_strings(fn: Callable) -> set[str] | None:
    """The codec names in ``fn``'s source that are only ever part of a message: of the exception
    a ``raise`` builds (``raise ValueError("UTF-8")``) or of an ``assert``, and the names of the
    variables read only there. ``None`` when the source cannot be read (then every codec name
    counts)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    in_message: set[int] = set()
    for node in ast.walk(tree):
        messages: list[ast.AST] = []
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            messages = [*node.exc.args, *(k.value for k in node.exc.keywords)]
        elif isinstance(node, ast.Assert) and node.msg is not None:
            messages = [node.msg]
        for message in messages:
            # a message is a string, an f-string or a sum of them, never a call
            if any(isinstance(n, ast.Call) for n in ast.walk(message)):
                continue
            in_message |= {id(n) for n in ast.walk(message)}
    used, quoted = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and _is_codec_string(node.value):
            (quoted if id(node) in in_message else used).add(node.value)
        elif isinstance(node, ast.Name):
            (quoted if id(node) in in_message else used).add(node.id)
    return quoted - used


def _globals_read(code: types.CodeType) -> set[str]:
    """The global names ``code`` reads (not attribute names, which share ``co_names``)."""
    return {
        ins.argval
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str)
    }


def _codec_uses(fn: Callable) -> list[str]:
    """What in ``fn``'s code (its nested functions, and the functions of its own module that
    it calls) hands the work to Python's codec: names such as ``encode``, or "utf-8"."""
    found: list[str] = []
    seen: set[int] = set()
    todo = [fn]
    while todo:
        f = todo.pop()
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        allowed = _message_strings(f) or set()
        codes = [code]
        while codes:
            c = codes.pop()
            found += sorted(_CODEC_NAMES & set(c.co_names))
            for const in c.co_consts:
                if isinstance(const, types.CodeType):
                    codes.append(const)
                elif _is_codec_string(const) and const not in allowed:
                    found.append(repr(const))
            glob = getattr(f, "__globals__", {})
            for name in c.co_names:
                g = glob.get(name)
                if isinstance(g, types.FunctionType) and g.__module__ == f.__module__:
                    todo.append(g)
            for name in sorted(_globals_read(c)):
                g = glob.get(name)
                if _is_codec_string(g) and name not in allowed:
                    found.append(f"{name} = {g!r}")
    return list(dict.fromkeys(found))


def _without_codec(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Call ``fn``, refusing it first if its code uses Python's codec."""
    uses = _codec_uses(fn)
    if uses:
        _reject(f"your code uses {', '.join(uses)}", _NO_CODEC)
    return fn(*args, **kwargs)
