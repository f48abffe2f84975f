"""Every chapter executes top to bottom in both modes.

* student mode: the notebook as committed, stubs untouched. Every check says "not implemented
  yet" and the chapter runs to its end on the reference implementations; every check cell run
  a second time (it then holds the course's function) must not say ✅. That run happens under
  Colab's Python, in ``tests/test_colab_python.py`` (``student_mode`` and
  ``assert_student_mode`` below); under ours, the book build executes every chapter as
  committed and fails on any error (``tests/test_book.py``). One execution per Python, not two.
* solution mode: every stub replaced by the package's reference solution (exactly what
  ``show_solution`` prints). Every check must report success.

And running one exercise's cells alone in a fresh kernel, as after a restart.
"""

from __future__ import annotations

import ast

import nbformat
import pytest

from tests.conftest import NOTEBOOKS, execute_notebook
from tokcourse import check
from tokcourse.course.exercises import solution_source

pytestmark = pytest.mark.notebooks

STUB, CHECK = "exercise-stub", "exercise-check"


def stub_name(cell) -> str:
    """The exercise a stub cell belongs to: the name of the function it defines."""
    defs = [n for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]
    assert len(defs) == 1, f"a stub cell defines exactly one function:\n{cell.source}"
    return defs[0].name


def tagged(nb, tag):
    return [c for c in nb.cells if tag in c.metadata.get("tags", [])]


def execute(nb, path, monkeypatch):
    execute_notebook(nb, path, monkeypatch, kernel_name="python3")


def output_text(cell) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")


RERUN = "exercise-check-rerun"


def student_mode(nb):
    """The notebook as committed, with every check cell run twice, as a student who presses
    Shift+Enter on it again would."""
    for cell in tagged(nb, CHECK):
        again = nbformat.v4.new_code_cell(cell.source, metadata={"tags": [RERUN]})
        nb.cells.insert(nb.cells.index(cell) + 1, again)
    return nb


def assert_student_mode(nb) -> None:
    """After a student-mode run: every check was calm about the stub, no rerun said ✅."""
    for cell in tagged(nb, CHECK):
        assert "not implemented yet" in output_text(cell), cell.source
    for cell in tagged(nb, RERUN):
        out = output_text(cell)
        assert "✅" not in out and "not yours" in out, out


NOTEBOOKS_WITH_EXERCISES = [p for p in NOTEBOOKS if tagged(nbformat.read(p, as_version=4), STUB)]


@pytest.mark.parametrize("path", NOTEBOOKS_WITH_EXERCISES, ids=lambda p: p.stem)
def test_solution_mode(path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    for cell in tagged(nb, STUB):
        cell.source = solution_source(check.exercise(stub_name(cell)).shown)
    execute(nb, path, monkeypatch)
    checks = tagged(nb, CHECK)
    assert checks
    for cell in checks:
        out = output_text(cell)
        assert "✅" in out and "❌" not in out and "not implemented" not in out, out


def test_some_chapter_has_exercises():
    assert NOTEBOOKS_WITH_EXERCISES


def exercises_of(path):
    nb = nbformat.read(path, as_version=4)
    stubs, checks = tagged(nb, STUB), tagged(nb, CHECK)
    assert len(stubs) == len(checks)
    return [(path, stub_name(stub), stub, check) for stub, check in zip(stubs, checks, strict=True)]


def _once_each(exercises):
    """The same exercise with the same check cell in two chapters (chapter 12 reuses earlier
    ones) is the same test: keep its first chapter."""
    seen, out = set(), []
    for path, name, stub, check_cell in exercises:
        if (name, check_cell.source) not in seen:
            seen.add((name, check_cell.source))
            out.append((path, name, stub, check_cell))
    return out


EXERCISES = _once_each([e for p in NOTEBOOKS_WITH_EXERCISES for e in exercises_of(p)])


@pytest.mark.parametrize(
    ("path", "name", "stub", "check_cell"),
    EXERCISES,
    ids=[f"{path.stem[:2]}-{name}" for path, name, *_ in EXERCISES],
)
def test_an_exercise_alone_after_a_restart(path, name, stub, check_cell, monkeypatch):
    """A fresh kernel, the student's solution cell, then its check cell: nothing else."""
    solved = nbformat.v4.new_code_cell(solution_source(check.exercise(name).shown))
    again = nbformat.v4.new_code_cell(check_cell.source)
    nb = nbformat.v4.new_notebook(cells=[solved, again])
    execute(nb, path, monkeypatch)
    out = output_text(nb.cells[1])
    assert "✅" in out, out
