"""Submissions a class might hand in, made from the student edition: for the grader's tests.

* :func:`answer_source`: a function as the code a student would paste into an exercise's stub
  cell: its imports, the helpers it calls, then the function under the exercise's name. It
  serves the course's solutions and the catalogued wrong answers of ``tests/exercise_bugs.py``
  alike (a catalogued bug is a decorated ``def _``: the decorator goes, the name changes).
* :func:`submit`: a student edition with some stubs replaced, written to a file.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
import types
from collections.abc import Callable
from pathlib import Path

from tokcourse.course.solutions import _global_names, solution_source


def _as_def(f: Callable) -> tuple[ast.FunctionDef, dict]:
    """``f`` as a ``def`` without decorators, and the values of the variables it closes over.

    A lambda (``bug(...)(lambda b: b)``, or one returned by a helper) is found in its module's
    syntax tree by its first line, and becomes ``def <lambda>(args): return body``.
    """
    closure = dict(inspect.getclosurevars(f).nonlocals)
    if f.__name__ != "<lambda>":
        node = ast.parse(textwrap.dedent(inspect.getsource(f))).body[0]
        assert isinstance(node, ast.FunctionDef), f
        node.decorator_list = []
        return node, closure
    module = ast.parse(inspect.getsource(inspect.getmodule(f)))
    found = [
        n
        for n in ast.walk(module)
        if isinstance(n, ast.Lambda) and n.lineno == f.__code__.co_firstlineno
    ]
    assert len(found) == 1, f"cannot tell the lambda at line {f.__code__.co_firstlineno} apart"
    lam = found[0]
    node = ast.FunctionDef(
        name="_lambda", args=lam.args, body=[ast.Return(lam.body)], decorator_list=[]
    )
    node.lineno = lam.lineno
    return ast.fix_missing_locations(node), closure


def _own_helpers(source: str, name: str) -> str:
    """``source`` with each helper it defines under another exercise's name renamed ``_name``.

    The course's ``train`` calls ``most_frequent_pair``, the exercise after it: its solution,
    written out, defines that helper. A student's own helper would not take the name of an
    exercise they write later, whose wrong answer (in a later cell) it would then call.
    """
    from tokcourse import check

    tree = ast.parse(source)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    clash = (defined - {name}) & set(check.exercise_names())
    if not clash:
        return source

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.Name:
            if node.id in clash:
                node.id = f"_{node.id}"
            return node

        def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
            if node.name in clash:
                node.name = f"_{node.name}"
            self.generic_visit(node)
            return node

    return ast.unparse(Rename().visit(tree)) + "\n"


def answer_source(fn: Callable, name: str) -> str:
    """``fn`` as a stub cell's code that defines ``name``: imports, helpers, then the function."""
    if fn.__module__.startswith("tokcourse."):
        return _own_helpers(solution_source(fn), name) + (
            f"\n\n{name} = {fn.__name__}\n" if fn.__name__ != name else ""
        )
    imports: list[str] = []
    helpers: list[str] = []
    seen: set[int] = set()

    def visit(f: Callable, rename: str | None) -> str:
        node, closure = _as_def(f)
        if rename:
            node.name = rename
        for used, value in closure.items():
            imports.append(f"{used} = {value!r}")
        for used in _global_names(f, node):
            obj = f.__globals__[used]
            if isinstance(obj, types.ModuleType):
                line = f"import {obj.__name__}" + (f" as {used}" if used != obj.__name__ else "")
            elif inspect.isfunction(obj) and obj.__module__ == f.__module__:
                if id(obj) not in seen:
                    seen.add(id(obj))
                    helpers.append(visit(obj, None))
                continue
            elif hasattr(obj, "__module__") and hasattr(obj, "__qualname__"):
                alias = f" as {used}" if used != obj.__qualname__ else ""
                line = f"from {obj.__module__} import {obj.__qualname__}{alias}"
            else:  # a constant: written out, so the cell needs nothing from the tests
                line = f"{used} = {obj!r}"
            if line not in imports:
                imports.append(line)
        return ast.unparse(node)

    main = visit(fn, name)
    parts = ["\n".join(sorted(imports, key=lambda x: (not x.startswith(("import", "from")), x)))]
    return "\n\n\n".join([p for p in parts if p] + helpers + [main]) + "\n"


def stub_index(nb: dict, name: str) -> int:
    """The index of the cell tagged ``exercise-stub`` that defines ``name``."""
    for i, cell in enumerate(nb["cells"]):
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if "exercise-stub" in cell.get("metadata", {}).get("tags", []) and (f"def {name}(" in text):
            return i
    raise KeyError(name)


def submit(
    edition: Path,
    target: Path,
    answers: dict[str, str],
    before: dict[str, str] | None = None,
    after_check: dict[str, str] | None = None,
) -> Path:
    """The student edition at ``edition`` with the stubs of ``answers`` replaced, at ``target``.

    ``before``: a new cell (a student's helper) inserted above an exercise's stub cell;
    ``after_check``: a new cell inserted below an exercise's check cell.
    """
    nb = json.loads(edition.read_text(encoding="utf-8"))
    # every stub found before any is replaced: an answer may define another exercise's
    # function as a helper (chapter 02's train defines most_frequent_pair)
    stubs = {name: stub_index(nb, name) for name in answers}
    for name, code in answers.items():
        nb["cells"][stubs[name]]["source"] = code
    for name, code in (after_check or {}).items():
        nb["cells"].insert(stub_index(nb, name) + 2, _new_cell(code))
    for name, code in (before or {}).items():
        nb["cells"].insert(stub_index(nb, name), _new_cell(code))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return target


def _new_cell(code: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": code, "outputs": [],
            "execution_count": None}  # fmt: skip
