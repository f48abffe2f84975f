"""Every chapter executes top to bottom, as committed (student mode), with no error."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import NOTEBOOKS

pytestmark = pytest.mark.notebooks


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path, monkeypatch):
    # Outside the book build: plotly keeps its normal renderer, as for a student in Jupyter.
    monkeypatch.delenv("TOKCOURSE_BOOK_BUILD", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    # A failing cell raises CellExecutionError with the cell source and traceback.
    client.execute()
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert not errors
