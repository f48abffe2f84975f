"""Every chapter runs as committed under Colab's Python, installed the way Colab installs it.

Colab runs Python 3.12, and a chapter's first code cell installs the course there with
``pip install`` of the repository, next to the ``ipykernel`` Colab already has. So here: a venv
from Python 3.12 with ``pip install .`` of the checkout plus ``ipykernel`` and nothing from the
development extras (``tools/pythons.py`` builds it in ``.venv-py3.12`` and reuses it), and
every chapter's *student edition* (``tools/student.py``: what the Colab badge opens) executed
in student mode (stubs untouched, each check cell run twice) by a kernel running that venv's
interpreter.

``make test-python PY=3.13`` runs this file for another version (``TOKCOURSE_TEST_PYTHON``).
Without the interpreter the tests skip; under ``CI=true`` they fail.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from tests._ci import missing_tool
from tests.conftest import NOTEBOOKS, execute_notebook
from tests.test_notebooks import assert_student_mode, student_mode
from tools import pythons, student

pytestmark = pytest.mark.notebooks

REQUESTED = os.environ.get("TOKCOURSE_TEST_PYTHON", "")
VERSION = REQUESTED or pythons.COLAB_PYTHON

# Appended to each notebook: which interpreter and which tokcourse the kernel really ran.
PROBE = """\
import json, sys, sysconfig, tokcourse
print("PROBE " + json.dumps({
    "version": list(sys.version_info[:3]),
    "prefix": sys.prefix,
    "purelib": sysconfig.get_path("purelib"),
    "tokcourse": tokcourse.__file__,
    "looks_like_colab": "google.colab" in sys.modules,
}))"""


@pytest.fixture(scope="session")
def python_env() -> pythons.PythonEnv:
    interpreter = pythons.find_python(VERSION)
    if interpreter is None:
        reason = (
            f"Python {VERSION} not found (looked at {', '.join(pythons.search_places(VERSION))})"
        )
        if REQUESTED:  # asked for by name (make test-python PY=...): never a silent skip
            pytest.fail(reason, pytrace=False)
        missing_tool(reason)
    return pythons.ensure_env(VERSION, interpreter)


def probe(nb) -> dict:
    text = "".join(out.get("text", "") for out in nb.cells[-1].outputs)
    line = next(line for line in text.splitlines() if line.startswith("PROBE "))
    return json.loads(line.removeprefix("PROBE "))


@pytest.fixture(scope="module")
def editions(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("student")
    return {p.name: p for p in student.write_all(out)}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_runs_from_its_student_edition(python_env, editions, path, monkeypatch):
    """Student mode (see ``tests/test_notebooks.py``): stubs untouched, check cells run twice."""
    path = editions[path.name]
    nb = student_mode(nbformat.read(path, as_version=4))
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    specs = KernelSpecManager(kernel_dirs=[str(python_env.kernel_dir)])
    km = KernelManager(kernel_name=python_env.kernel_name, kernel_spec_manager=specs)
    execute_notebook(nb, path, monkeypatch, km=km)
    assert not km.is_alive()  # one kernel per chapter, shut down after it, not fourteen at once
    assert_student_mode(nb)

    ran = probe(nb)
    assert ".".join(map(str, ran["version"][:2])) == VERSION, ran
    assert Path(ran["prefix"]) == python_env.directory, ran
    # the installed package, not the checkout's src/
    assert Path(ran["tokcourse"]).is_relative_to(ran["purelib"]), ran
    assert not ran["looks_like_colab"]
