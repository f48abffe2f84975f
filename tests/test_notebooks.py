"""Every chapter executes top to bottom in both modes.

* student mode: the notebook as committed, stubs untouched. Every check says "not implemented
  yet" and the chapter runs to its end on the reference implementations.
* solution mode: every stub replaced by the package's reference solution (exactly what
  ``show_solution`` prints). Every check must report success.
"""

from __future__ import annotations

import ast

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import NOTEBOOKS
from tokcourse import check
from tokcourse.exercises import solution_source

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
    # Outside the book build: plotly keeps its normal renderer, as for a student in Jupyter.
    monkeypatch.delenv("TOKCOURSE_BOOK_BUILD", raising=False)
    client = NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # a failing cell raises CellExecutionError with its source and traceback
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert not errors


def output_text(cell) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_student_mode(path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    execute(nb, path, monkeypatch)
    for cell in tagged(nb, CHECK):
        assert "not implemented yet" in output_text(cell), cell.source


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
