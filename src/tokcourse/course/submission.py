"""A submitted notebook, read as data: which chapter it is and what its code defines.

``python -m tokcourse.grade`` (:mod:`tokcourse.grade`) reads every submission here, in its own
process, before any of its code runs. Nothing here executes a student's code: it parses.

* :func:`read_notebook` refuses, with a reason, a file that is not JSON or not a notebook.
* :func:`identify` says which chapter a notebook is: by the exercises its check cells name
  (``encode = check.encode(encode)``; on a tie, the later chapter, which checks again what the
  earlier taught), else by ``metadata.tokcourse.chapter`` (the student
  edition writes it), else by the file's name (``03_encode_decode.ipynb``, ``alice-03_...``).
* :func:`plan` says what the grader runs of each code cell. The student edition marks each of
  the chapter's own code cells with a fingerprint of its source (:func:`course_mark`). From
  such a cell, unchanged, the grader takes only the *definitions*: imports, functions, classes,
  literal constants and the check of an earlier chapter's exercise (which defines the function
  the chapter goes on with), not the chapter's computations (training a tokenizer, drawing a
  figure; nor its imports of drawing libraries, :data:`DRAWING`). Every other cell is the
  student's: an exercise's stub cell, a cell the student added or changed, a cell that
  defines one of the chapter's exercises. From those it runs every statement, as Run All
  would. Shell and magic lines (``!pip``, ``%time``) are left out.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from tokcourse.course.chapters import CHAPTERS, Chapter, chapter

#: A notebook larger than this is not read (a class's notebooks are far smaller).
MAX_BYTES = 64 * 1024 * 1024
CHECK_CALL = re.compile(r"\bcheck\.(\w+)\s*\(")
NAME_NUMBER = re.compile(r"(?<![0-9])([0-9]{2})_([a-z0-9_]+?)(?:[^a-z0-9_]|$)")
MAGIC = re.compile(r"^(?P<indent>[ \t]*)[%!].*$", re.M)
DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: Every exercise of the course. A chapter may check again an earlier chapter's exercise
#: (chapter 02 checks the get_stats and merge of chapter 00): that check line defines the
#: function the chapter goes on with (the student's if it passes, else the course's), so the
#: grader runs it like a definition.
EVERY_EXERCISE = tuple(name for ch in CHAPTERS for name in ch.exercises)
#: Libraries the chapters import only to draw: a chapter cell's import of one is not run (it
#: costs more than the rest of a notebook's grading); a student's cell imports what it uses.
DRAWING = {"matplotlib", "plotly", "IPython", "pandas"}


def course_mark(text: str) -> str:
    """The fingerprint of a chapter cell's source, kept in the cell's ``tokcourse`` metadata.

    >>> course_mark("x = 1  ") == course_mark("x = 1")
    True
    """
    return hashlib.sha256(text.rstrip().encode("utf-8")).hexdigest()[:16]


def is_course_cell(cell: dict) -> bool:
    """A chapter cell the student left as it was: its mark matches its source."""
    metadata = cell.get("metadata")
    mark = metadata.get("tokcourse", {}) if isinstance(metadata, dict) else {}
    return isinstance(mark, dict) and mark.get("course") == course_mark(source(cell))


class NotANotebook(ValueError):
    """The file cannot be graded as a notebook; the message says why, in one line."""


def read_notebook(path: Path) -> dict:
    """The notebook at ``path`` as a dict with a list of cells, or :class:`NotANotebook`."""
    try:
        size = path.stat().st_size
    except OSError as err:
        raise NotANotebook(f"cannot read the file: {err.strerror}") from err
    if size > MAX_BYTES:
        raise NotANotebook(f"the file is {size:,} bytes, over the {MAX_BYTES:,} a notebook may be")
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as err:
        raise NotANotebook(f"not a notebook: not UTF-8 text (byte {err.start})") from err
    except json.JSONDecodeError as err:
        raise NotANotebook(f"not a notebook: not JSON ({err.msg}, line {err.lineno})") from err
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise NotANotebook("not a Jupyter notebook: JSON without a list of cells")
    return data


def source(cell: dict) -> str:
    """A cell's source as one string (notebooks store it as a string or a list of lines)."""
    text = cell.get("source", "")
    if isinstance(text, list):
        return "".join(x for x in text if isinstance(x, str))
    return text if isinstance(text, str) else ""


def tags(cell: dict) -> list[str]:
    metadata = cell.get("metadata")
    found = metadata.get("tags", []) if isinstance(metadata, dict) else []
    return [t for t in found if isinstance(t, str)] if isinstance(found, list) else []


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c.get("cell_type") == "code"]


def identify(nb: dict, filename: str) -> tuple[Chapter | None, str]:
    """The chapter of a notebook, and how it was recognised (or why not)."""
    named = [m for c in code_cells(nb) for m in CHECK_CALL.findall(source(c))]
    votes = {ch.number: sum(n in ch.exercises for n in named) for ch in CHAPTERS}
    # a chapter may check again what an earlier one taught (02 checks the get_stats and merge
    # of chapter 00), never a later chapter's exercises: on a tie, the later chapter is it
    best = max(votes, key=lambda k: (votes[k], k))
    if votes[best]:
        return chapter(best), "by its check cells"
    meta = nb.get("metadata", {})
    number = meta.get("tokcourse", {}).get("chapter") if isinstance(meta, dict) else None
    if isinstance(number, str) and any(ch.number == number for ch in CHAPTERS):
        return chapter(number), "by its metadata"
    for match in NAME_NUMBER.finditer(Path(filename).name.lower()):
        for ch in CHAPTERS:
            if ch.number == match[1] and match[2].startswith(ch.slug[:6]):
                return ch, "by its file name"
    return None, (
        "not a chapter of the course: no check cell names an exercise, no chapter in its "
        "metadata, and its file name is not NN_slug.ipynb"
    )


@dataclass
class Statement:
    """One top-level statement to run: its code, the names it defines, where it came from."""

    code: ast.Module
    defines: set[str]
    line: int


@dataclass
class CellPlan:
    """What the grader runs of one code cell, in order, and which exercises it checks."""

    index: int
    filename: str
    text: str
    statements: list[Statement] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    syntax_error: str = ""
    answer: bool = False  # the student's cell: every statement runs
    answers: set[str] = field(default_factory=set)  # the exercises this cell answers
    not_run: set[str] = field(default_factory=set)  # names its skipped statements assign
    where: str = ""  # "cell 12 ('def encode(text, merges):')": its place among all the cells


def _defined_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _is_constant(stmt: ast.stmt) -> bool:
    value = getattr(stmt, "value", None)
    if not isinstance(stmt, ast.Assign | ast.AnnAssign) or value is None:
        return False
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def plan(nb: dict, exercises: tuple[str, ...]) -> list[CellPlan]:
    """What to run of each code cell (see the module's docstring); ``exercises``: the chapter's."""
    plans = []
    positions = [k for k, c in enumerate(nb["cells"]) if c.get("cell_type") == "code"]
    for i, cell in enumerate(code_cells(nb)):
        text = MAGIC.sub(lambda m: f"{m['indent']}pass", source(cell))
        cell_plan = CellPlan(i, f"<submission cell {i + 1}>", text)
        first = next((x.strip() for x in source(cell).splitlines() if x.strip()), "")
        cell_plan.where = f"cell {positions[i] + 1} ({first[:48]!r})"
        cell_plan.checks = [n for n in CHECK_CALL.findall(text) if n in exercises]
        try:
            tree = ast.parse(text, cell_plan.filename)
            # what only the compiler finds (a late __future__ import, a top-level return):
            # the cell as a whole, as Jupyter compiles it
            compile(tree, cell_plan.filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, MemoryError, RecursionError) as err:
            where = f" (line {err.lineno})" if getattr(err, "lineno", None) else ""
            cell_plan.syntax_error = f"{type(err).__name__}: {getattr(err, 'msg', err)}{where}"
            plans.append(cell_plan)
            continue
        defined = {
            s.name for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        cell_plan.answer = (
            "exercise-stub" in tags(cell)
            or bool(defined & set(exercises))
            or not (is_course_cell(cell) or cell_plan.checks)
        )
        for stmt in tree.body:
            if cell_plan.checks and _is_check_line(stmt, exercises):
                continue  # the grader runs the checks itself
            if (
                cell_plan.answer
                or _is_check_line(stmt, EVERY_EXERCISE)  # an earlier chapter's, checked again
                or (isinstance(stmt, DEFINITIONS) and not _imports_drawing(stmt))
                or _is_constant(stmt)
            ):
                module = ast.Module(body=[stmt], type_ignores=[])
                cell_plan.statements.append(Statement(module, _defined_names(stmt), stmt.lineno))
            else:
                cell_plan.not_run |= _defined_names(stmt)
        plans.append(cell_plan)
    _answered(plans, nb, exercises)
    return plans


def _answered(plans: list[CellPlan], nb: dict, exercises: tuple[str, ...]) -> None:
    """Which exercises each answer cell answers: a stub cell (tagged ``exercise-stub``), the
    exercise of the next check cell (even if its ``def`` was deleted); another cell, the
    exercises it defines whose check comes after it (a solution that redefines an exercise
    already checked above, as a helper, does not answer that one again)."""
    cells = code_cells(nb)
    checked_at = {}
    for p in plans:
        for name in p.checks:
            checked_at.setdefault(name, p.index)
    for i, cell_plan in enumerate(plans):
        if "exercise-stub" in tags(cells[i]):
            nxt = next((p for p in plans[i + 1 :] if p.checks), None)
            cell_plan.answers = set(nxt.checks[:1]) if nxt else set()
        else:
            cell_plan.answers = {
                n
                for n in exercises
                if defines_in_text(cell_plan.text, n) and checked_at.get(n, len(plans)) > i
            }


def _imports_drawing(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import):
        return all(a.name.split(".")[0] in DRAWING for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return (stmt.module or "").split(".")[0] in DRAWING and not stmt.level
    return False


def _is_check_line(stmt: ast.stmt, exercises: tuple[str, ...]) -> bool:
    """``name = check.name(name)`` and ``check.name(name)``."""
    value = stmt.value if isinstance(stmt, ast.Assign | ast.Expr) else None
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "check"
        and value.func.attr in exercises
    )


def defines_in_text(text: str, name: str) -> bool:
    """Whether unparsable cell text looks like it defines ``name`` (``def name(``)."""
    return re.search(rf"^\s*def\s+{re.escape(name)}\s*\(", text, re.M) is not None
