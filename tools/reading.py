"""The reading budgets of a chapter (CONTRIBUTING.md, "Writing a chapter"), from its notebook.

    python tools/reading.py notebooks/*.ipynb     # one line per chapter, problems listed

What the reader sees is the notebook minus the cells its tags hide: ``remove-cell`` and
``remove-input`` take the code off the page, ``hide-input`` and ``hide-cell`` fold it into a
dropdown. This tool counts on the visible code and the markdown; ``tests/test_reading.py`` runs
it on every chapter and checks the same budgets once more on the built HTML.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

HIDDEN = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
MAX_VISIBLE_ASSERTS = 5
#: The headings every chapter has, in this order (the build sections go between the 2nd and 3rd).
RHYTHM = ["What you will learn", "Why this matters", "What to remember", "Further reading"]
BULLETS = {"What you will learn": (3, 5), "What to remember": (3, 6)}
LECTURE = "**In the lecture:**"
LECTURE_LINK = re.compile(r"https://www\.youtube\.com/watch\?v=zduSFxRajkE&t=(\d+)s")
PRAGMA = re.compile(r"#\s*fmt:\s*(skip|off|on)")
ASSERT = re.compile(r"^\s*assert\b", re.M)
STUB, CHECK = "exercise-stub", "exercise-check"


@dataclass
class Reading:
    """What one chapter shows a reader, and what breaks the rules."""

    path: Path
    visible_asserts: int = 0
    pragmas: int = 0
    headings: list[str] = field(default_factory=list)
    lecture_times: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def tags(cell) -> set[str]:
    return set(cell.metadata.get("tags", []))


def visible_code(cell) -> bool:
    return cell.cell_type == "code" and not tags(cell) & HIDDEN


def _bullets_after(markdown: str, heading: str) -> int:
    """Top-level bullets of the section ``## heading`` (up to the next heading)."""
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^#|\Z)", markdown, re.M | re.S)
    return len(re.findall(r"^[-*] ", match.group(1), re.M)) if match else 0


def read(path: Path) -> Reading:
    nb = nbformat.read(path, as_version=4)
    result = Reading(path)
    markdown = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for cell in nb.cells:
        if visible_code(cell):
            result.visible_asserts += len(ASSERT.findall(cell.source))
            result.pragmas += len(PRAGMA.findall(cell.source))
    result.headings = re.findall(r"^## (.+?)\s*$", markdown, re.M)
    result.lecture_times = [int(t) for t in LECTURE_LINK.findall(markdown)]
    p = result.problems

    if result.visible_asserts > MAX_VISIBLE_ASSERTS:
        p.append(f"{result.visible_asserts} visible assert lines (at most {MAX_VISIBLE_ASSERTS})")
    if result.pragmas:
        p.append(f"{result.pragmas} formatter pragmas (# fmt: ...) in visible code")
    found = [h for h in result.headings if h in RHYTHM]
    if found != RHYTHM:
        p.append(f"rhythm headings {found}, expected {RHYTHM} in this order")
    elif result.headings[0] != RHYTHM[0]:
        p.append(f"the first section is {result.headings[0]!r}, not {RHYTHM[0]!r}")
    elif result.headings[-1] != RHYTHM[-1]:
        p.append(f"the last section is {result.headings[-1]!r}, not {RHYTHM[-1]!r}")
    for heading, (low, high) in BULLETS.items():
        n = _bullets_after(markdown, heading)
        if not low <= n <= high and heading in result.headings:
            p.append(f"'{heading}' has {n} bullets ({low} to {high})")
    if LECTURE not in markdown:
        p.append(f"no {LECTURE} line")
    if re.search(r"\bExercise \d", markdown):
        p.append("an exercise number written by hand (the book numbers them)")
    p.extend(_exercise_order(nb))
    p.extend(_names_from_hidden_cells(nb))
    return result


def _exercise_order(nb) -> list[str]:
    """Each exercise's stub and check come before any visible cell uses the course's solution.

    "Uses" is read off the code: a visible cell before the stub that imports the name from the
    package (``from tokcourse.bpe import merge``) or calls it through a package module it
    imported (``bpe.merge`` after ``from tokcourse import bpe``). Methods of other objects
    (``gpt2.encode``, ``text.encode``) are not the course's solution.
    """
    problems = []
    cells = nb.cells
    for i, cell in enumerate(cells):
        if STUB not in tags(cell):
            continue
        name = _defined(cell.source)
        if name is None:
            continue
        before = [c for c in cells[:i] if c.cell_type == "code" and STUB not in tags(c)]
        modules = set()
        for c in before:  # hidden cells import too: their names reach the visible ones
            modules |= _package_modules(c.source)
        modules.discard("check")  # check.merge(merge) checks the student's merge
        via_module = rf"\b(?:{'|'.join(sorted(modules))})\.{name}\b" if modules else None
        imported = re.compile(rf"from\s+tokcourse[\w.]*\s+import\s+[^\n]*\b{name}\b")
        for earlier in before:
            if not visible_code(earlier):
                continue
            if imported.search(earlier.source) or (
                via_module and re.search(via_module, earlier.source)
            ):
                problems.append(f"the course's {name} is used before its exercise")
                break
    return problems


def _package_modules(source: str) -> set[str]:
    """Names that a cell binds to a module of the package: ``bpe`` in ``from tokcourse import
    bpe``, ``tc`` in ``import tokcourse as tc``, ``pretrained`` in ``import tokcourse.pretrained``.
    """
    names = set()
    for match in re.finditer(r"from\s+tokcourse(?:\.[\w.]+)?\s+import\s+\(?([^)\n]+)", source):
        for part in match.group(1).split(","):
            bound = part.split(" as ")[-1].strip()
            if bound.isidentifier():
                names.add(bound)
    for match in re.finditer(r"^\s*import\s+(tokcourse[\w.]*)(?:\s+as\s+(\w+))?", source, re.M):
        names.add(match.group(2) or match.group(1).split(".")[0])
    return names


def _scoped(node: ast.AST) -> bool:
    return isinstance(
        node,
        (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
        + (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp),
    )


def _walk_module_level(tree: ast.AST):
    """Nodes of a cell's own scope: not inside a function, class body or comprehension."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        yield node
        if not _scoped(node):
            todo.extend(ast.iter_child_nodes(node))


def _bound_and_loaded(source: str) -> tuple[set[str], set[str]]:
    code = "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!")))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(), set()
    bound, loaded = set(), set()
    for node in _walk_module_level(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else loaded).add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
    return bound, loaded


def _names_from_hidden_cells(nb) -> list[str]:
    """A visible cell must not use a name that only a hidden cell defines: the reader of the
    page would meet a name that comes from nowhere."""
    shown, hidden_only, problems = set(), set(), {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        bound, loaded = _bound_and_loaded(cell.source)
        if not tags(cell) & {"remove-cell", "remove-input"}:  # folded code is there to read
            for name in sorted((loaded & hidden_only) - shown - bound):
                problems[f"visible code uses {name!r}, defined only in a hidden cell"] = None
            shown |= bound
            hidden_only -= bound
        else:
            hidden_only |= bound - shown
    return list(problems)


def _defined(source: str) -> str | None:
    match = re.search(r"^def (\w+)\(", source, re.M)
    return match.group(1) if match else None


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    bad = 0
    for arg in argv:
        r = read(Path(arg))
        status = "ok" if not r.problems else "; ".join(r.problems)
        bad += bool(r.problems)
        print(f"{Path(arg).stem:<28} asserts {r.visible_asserts:>2}  {status}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
