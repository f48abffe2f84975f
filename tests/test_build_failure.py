"""A chapter that fails stops the build once, naming the chapter, the cell and the sentence.

``tools/prebuild.py`` runs the chapters before ``jupyter-book`` (``make book``, the suite's
book build): a failing chapter ends it there with a report, and exit status 1. Run directly,
``jupyter-book`` fails on the warning (``-W``) without Sphinx's "please report this bug".
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from tests.conftest import ROOT
from tools import prebuild

SENTENCE = "The first merge joins two spaces."


def _notebook(path: Path, *code: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# A chapter\n\n{SENTENCE}")]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in code]
    nbformat.write(nb, path)
    return path


GUARD = (
    "from tokcourse.course.prose import claim\n"
    "\n"
    "first = (101, 32)\n"
    f"claim({SENTENCE!r}, first == (32, 32), f'the first merge is {{first}}')\n"
    "print('not reached')"
)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """prebuild's execution cache, in a temporary folder."""
    where = tmp_path / "_build" / ".jupyter_cache"
    monkeypatch.setattr(prebuild, "CACHE", where)
    return where


def _cached(where: Path) -> int:
    from jupyter_cache import get_cache

    return len(get_cache(str(where)).list_cache_records())


@pytest.mark.notebooks
def test_a_failing_guard_stops_the_prebuild_once_quoting_its_sentence(tmp_path, cache, capsys):
    bad = _notebook(tmp_path / "02_bad.ipynb", "x = 1", GUARD)
    good = _notebook(tmp_path / "03_good.ipynb", "print(1 + 1)")
    status = prebuild.main(["--jobs", "1", str(bad), str(good)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "02_bad.ipynb failed in code cell 2 of 2, line 4:" in out
    assert "-->   4 | claim(" in out  # the line that raised, marked
    assert "      3 | first = (101, 32)" in out  # and the cell around it
    assert f'ClaimFailed: this sentence of the page no longer holds: "{SENTENCE}"' in out
    assert "what the cell found: the first merge is (101, 32)" in out
    assert "02_bad failed (above); nothing was built" in out
    assert out.count("failed in code cell") == 1  # reported once
    assert "Traceback" not in out and "\x1b[" not in out  # no colour codes, no stack
    assert _cached(cache) == 1  # the good chapter is in the cache, the failing one is not


@pytest.mark.notebooks
def test_a_plain_assert_is_reported_with_its_line(tmp_path, cache, capsys):
    lines = [f"v{i} = {i}" for i in range(30)]
    lines[20] = "assert v3 == 4, 'v3 is four'"
    bad = _notebook(tmp_path / "bad.ipynb", "\n".join(lines))
    assert prebuild.main(["--jobs", "1", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "bad.ipynb failed in code cell 1 of 1, line 21:" in out
    assert "-->  21 | assert v3 == 4, 'v3 is four'" in out
    assert "AssertionError: v3 is four" in out
    # a long cell is shown around the failing line only
    assert "     15 | v14 = 14" in out and "v13 = 13" not in out and "v28 = 28" not in out
    assert "ClaimFailed" not in out
    assert _cached(cache) == 0


def test_prebuild_leaves_the_environment_as_it_found_it(tmp_path, cache, monkeypatch):
    from tokcourse.course.plotting import BOOK_BUILD_ENV

    monkeypatch.delenv(BOOK_BUILD_ENV, raising=False)
    ok = _notebook(tmp_path / "ok.ipynb", "1")
    cache.parent.mkdir(parents=True)
    prebuild.main(["--jobs", "1", str(ok)])
    import os

    assert BOOK_BUILD_ENV not in os.environ


def test_make_book_stops_when_the_prebuild_fails():
    """The recipe runs the prebuild first, on its own line: make stops at its exit status."""
    recipe = re.search(r"^book:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert recipe, "no book target in the Makefile"
    lines = recipe.group(1).splitlines()
    assert lines[0].strip() == "$(BIN)/python tools/prebuild.py"
    assert lines[1].strip() == "$(BUILD)"


@pytest.mark.notebooks
def test_jupyter_book_alone_fails_without_asking_for_a_sphinx_bug_report(tmp_path):
    """Without the prebuild, the book's own execute settings: one clean failure."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    small = {"title": "t", "execute": config["execute"], "only_build_toc_files": True}
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(small), encoding="utf-8")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: chapter\n", encoding="utf-8")
    _notebook(tmp_path / "chapter.ipynb", "x = 1", GUARD)
    jb = Path(sys.executable).with_name("jupyter-book")
    run = subprocess.run(
        [str(jb), "build", ".", "-W", "-n", "--keep-going"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = run.stdout + run.stderr
    assert run.returncode != 0, log[-3000:]
    assert f'this sentence of the page no longer holds: "{SENTENCE}"' in log
    assert log.count("Executing notebook failed") == 1
    assert "Exception occurred" not in log and "bug report" not in log, log[-3000:]
