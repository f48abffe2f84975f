"""Reference solutions as standalone code: the source of a package function with the imports and
helpers it needs, for ``check.show_solution`` (Colab shows the book's dropdowns as plain text).
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import types
from collections.abc import Callable

# --- solutions -------------------------------------------------------------------------------


def _module_of(fn: Callable) -> types.ModuleType:
    return sys.modules[fn.__module__]


def _dependencies(
    fn: Callable, imported: frozenset = frozenset()
) -> tuple[list[str], list[Callable]]:
    """Import lines and same-module helper functions that ``fn`` needs to run on its own;
    a helper in ``imported`` is imported from the package rather than written out."""
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
            elif (
                getattr(obj, "__module__", None) == module.__name__
                and inspect.isfunction(obj)
                and obj not in imported
            ):
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


def _global_names(fn: Callable, tree: ast.AST | None = None) -> list[str]:
    """Module-level names that ``fn``'s source (or ``tree``, its syntax) reads, in order.

    Read off the syntax tree: ``inspect.getclosurevars`` would also report attribute names
    (``text.encode`` looks like a use of a global ``encode``) and would miss names in default
    values (``pattern=GPT4_SPLIT_PATTERN``), which are evaluated when the function is defined.
    """
    if tree is None:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    local = set(fn.__code__.co_varnames)
    names: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id not in local
            and node.id in fn.__globals__
            and node.id not in names
        ):
            names.append(node.id)
    return names


def solution_source(fn: Callable, imported: frozenset = frozenset()) -> str:
    """Standalone source of a reference solution: imports, ``fn``, then the helpers it calls.

    ``imported``: helpers to import from the package instead of writing them out (the course
    passes the other exercises' references: a student wrote those already, and a solution
    pasted into a stub cell must not define another exercise's function again).

    >>> from tokcourse.bpe import merge
    >>> print(solution_source(merge).splitlines()[0])
    from __future__ import annotations
    """
    imports, helpers = _dependencies(fn, imported)
    # only code with type hints needs the future import (hints that name later classes)
    annotated = any(getattr(f, "__annotations__", None) for f in (fn, *helpers))
    parts = ["from __future__ import annotations"] if annotated else []
    if imports:
        parts.append("\n".join(sorted(imports)))
    # The solution first, then the helpers it calls (Python finds them when the function runs);
    # a helper the definition itself needs (a default value, a decorator) goes before it.
    needed_now = _names_used_at_definition(fn)
    early = [h for h in helpers if h.__name__ in needed_now]
    late = [h for h in helpers if h not in early]
    parts += [inspect.getsource(h).rstrip() for h in early]
    parts.append(inspect.getsource(fn).rstrip())
    if late:
        parts.append("# The helpers it calls, from the same module:")
        parts += [inspect.getsource(h).rstrip() for h in late]
    return "\n\n\n".join(parts) + "\n"


def _names_used_at_definition(fn: Callable) -> set[str]:
    """Names that defining ``fn`` evaluates: its default values and decorators."""
    node = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    args = getattr(node, "args", None)
    evaluated = [*getattr(node, "decorator_list", [])]
    if args is not None:
        evaluated += [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    return {n.id for e in evaluated for n in ast.walk(e) if isinstance(n, ast.Name)}
