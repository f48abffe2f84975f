"""Shared test setup: repository paths; the maintenance tools are importable as ``tools``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def execute_notebook(nb, path: Path, monkeypatch, **kernel) -> None:
    """Run every cell of ``nb`` as a student's Jupyter would, in ``path``'s folder; no errors.

    ``kernel``: how to start the kernel (``kernel_name=...``, or ``km=`` a KernelManager).
    """
    from nbclient import NotebookClient

    # Outside the book build: plotly keeps its normal renderer, as for a student in Jupyter.
    monkeypatch.delenv("TOKCOURSE_BOOK_BUILD", raising=False)
    client = NotebookClient(
        nb, timeout=600, resources={"metadata": {"path": str(path.parent)}}, **kernel
    )
    try:
        client.execute()  # a failing cell raises CellExecutionError with its source and traceback
    finally:
        # nbclient shuts down only a kernel it started itself: one handed in (km=) would stay
        # alive, holding its memory, until the test worker exits
        km = kernel.get("km")
        if km is not None and km.has_kernel:
            km.shutdown_kernel(now=True)
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    assert not errors


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium, offline, driven over the DevTools protocol (``tests/_cdp.py``); one per
    test module. (A module may define its own ``browser`` fixture instead.)"""
    from tests._cdp import Browser
    from tests._ci import missing_tool
    from tests.test_book import CHROMIUM

    if CHROMIUM is None:
        missing_tool("chromium not installed (apt-get install chromium; .ci/run does it)")
    with Browser(tmp_path_factory.mktemp("profile")) as b:
        yield b


def private_cache(paths, tmp_path: Path, monkeypatch) -> Path:
    """A private asset cache holding copies of ``paths``, so a test may damage or delete files."""
    import shutil

    directory = tmp_path / "cache"
    directory.mkdir()
    for p in paths:
        shutil.copy(p, directory / p.name)
    monkeypatch.setenv("TOKCOURSE_CACHE_DIR", str(directory))
    return directory


def refuse_downloads(monkeypatch) -> None:
    """Make any download of an asset fail loudly."""
    from tokcourse.course.data import store

    def refuse(source, progress, settings=None):
        raise AssertionError(f"unexpected download of {source.requirement}")

    monkeypatch.setattr(store, "_download_archive", refuse)
