"""Repository hygiene: committed notebooks, one repository URL, lint, setup files."""

from __future__ import annotations

import ast
import inspect
import re
import shutil
import subprocess
import sys
import tomllib

import nbformat
import pytest
import yaml

from tests.conftest import NOTEBOOKS, ROOT
from tools import notebooks as nbtools
from tools import student, sync_repo_url

TOC_NOTEBOOKS = [
    entry["file"]
    for part in yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]
    for entry in part["chapters"]
    if entry["file"].startswith("notebooks/")
]


def test_there_are_chapters():
    assert NOTEBOOKS, "no notebooks found"


def test_toc_lists_every_notebook_and_only_existing_ones():
    on_disk = {f"notebooks/{p.stem}" for p in NOTEBOOKS}
    assert set(TOC_NOTEBOOKS) == on_disk


def test_toc_pages_exist():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [e["file"] for p in toc["parts"] for e in p["chapters"]]
    missing = [
        f for f in files if not any((ROOT / f).with_suffix(s).exists() for s in (".md", ".ipynb"))
    ]
    assert not missing


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_normalized(path):
    # No outputs, no execution counts, minimal metadata: `make format` fixes it.
    assert path.read_text(encoding="utf-8") == nbtools.committed_text(path), (
        f"{path.name} has outputs or unnormalized metadata; run `make format`"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_starts_with_title_colab_cell_and_setup(path):
    nb = nbformat.read(path, as_version=4)
    assert nb.cells[0].cell_type == "markdown"
    assert re.match(r"# \S", nb.cells[0].source), "first cell must be the chapter's H1 title"
    h1 = [
        line
        for c in nb.cells
        if c.cell_type == "markdown"
        for line in c.source.splitlines()
        if line.startswith("# ")
    ]
    assert len(h1) == 1, f"exactly one H1 per chapter, found {h1}"
    code = [c for c in nb.cells if c.cell_type == "code"]
    url = nbtools.repository_url()
    assert code[0].source == nbtools.colab_cell_source(url), (
        "first code cell must be the Colab install cell with _config.yml's URL; run `make sync-url`"
    )
    assert code[1].source == nbtools.SETUP_CELL
    for cell in code[:2]:
        assert "remove-cell" in cell.metadata.get("tags", [])


def test_check_tool_flags_a_notebook_with_outputs(tmp_path):
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    code.execution_count = 3
    dirty = tmp_path / "dirty.ipynb"
    nbformat.write(nb, dirty)
    assert nbtools.main(["check", str(dirty)]) == 1
    assert nbtools.main(["normalize", str(dirty)]) == 0
    assert nbtools.main(["check", str(dirty)]) == 0
    clean = nbformat.read(dirty, as_version=4)
    assert all(not c.get("outputs") for c in clean.cells if c.cell_type == "code")


def _copy_publishable(tmp_path):
    for name in ("_config.yml", "README.md", "CONTRIBUTING.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("_ext"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    return tmp_path


def test_repository_url_is_in_sync_everywhere(tmp_path):
    copy = _copy_publishable(tmp_path)
    assert sync_repo_url.sync(copy) == [], "run `make sync-url`"


def test_sync_url_publishes_a_fork(tmp_path):
    copy = _copy_publishable(tmp_path)
    config = copy / "_config.yml"
    config.write_text(
        config.read_text().replace(nbtools.repository_url(), "https://github.com/someone/fork")
    )
    changed = {p.name for p in sync_repo_url.sync(copy)}
    assert "README.md" in changed and all(f"{p.stem}.ipynb" in changed for p in NOTEBOOKS)
    readme = (copy / "README.md").read_text()
    assert "colab.research.google.com/github/someone/fork/blob/student/student/" in readme
    assert "mybinder.org/v2/gh/someone/fork/student?urlpath=lab/tree/student/" in readme
    assert "https://someone.github.io/fork/" in readme  # the published book
    assert "github.com/karpathy/minbpe" in readme  # other projects' links untouched
    assert "tokcourse/tokcourse" not in readme
    for path in (copy / "notebooks").glob("*.ipynb"):
        first = next(c for c in nbformat.read(path, 4).cells if c.cell_type == "code")
        assert "git+https://github.com/someone/fork" in first.source
    assert sync_repo_url.sync(copy) == []  # idempotent


def test_repository_url_rejects_a_non_github_value(tmp_path):
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://example.com/x\n")
    with pytest.raises(ValueError, match="example.com"):
        nbtools.repository_url(tmp_path)


def test_readme_badges_open_the_student_edition():
    readme = (ROOT / "README.md").read_text()
    repo = nbtools.repository_url()
    for nb in NOTEBOOKS:
        assert f"({student.colab_url(repo, nb.name)})" in readme, nb.name
        assert f"({student.binder_url(repo, nb.name)})" in readme, nb.name
    assert "blob/main/notebooks/" not in readme and "lab/tree/notebooks/" not in readme


def test_readme_shows_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make book" in readme and "make test" in readme
    assert re.search(r"^\s*make test\b", (ROOT / ".ci" / "run").read_text(), re.M)


def test_binder_environment_lists_every_runtime_dependency():
    def name(req: str) -> str:
        return re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].lower().replace("_", "-")

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    listed = {name(d) for d in env if isinstance(d, str)}
    listed |= {name(d) for d in env if isinstance(d, dict) for d in d.get("pip", [])}
    missing = {name(d) for d in deps} - listed
    assert not missing, f"environment.yml lacks {missing}"
    post = ROOT / "postBuild"
    assert post.stat().st_mode & 0o111 and "pip install" in post.read_text()


def test_no_third_party_data_is_tracked():
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    pattern = re.compile(
        r"\.tiktoken(\.gz)?$|botchan\.txt$|tokenizer\.model|\.po$|encoder\.json$|vocab\.bpe$|plotly\.min\.js$"
    )
    assert not [f for f in files if pattern.search(f)]


def test_ruff_is_clean_including_notebooks():
    for args in (["check", "."], ["format", "--check", "."]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stdout + result.stderr


def _exercise_blocks():
    """(notebook, stub index, cells) for every exercise stub in every chapter."""
    for path in NOTEBOOKS:
        cells = nbformat.read(path, as_version=4).cells
        for i, cell in enumerate(cells):
            if "exercise-stub" in cell.metadata.get("tags", []):
                yield pytest.param(path, i, cells, id=f"{path.stem}-cell{i}")


@pytest.mark.parametrize(("path", "i", "cells"), list(_exercise_blocks()))
def test_exercise_is_statement_stub_check_solution(path, i, cells):
    from pathlib import Path

    from tests.test_notebooks import stub_name
    from tokcourse import check

    stub = cells[i]
    name = stub_name(stub)
    assert name in check.exercise_names(), f"{name} has no check in tokcourse.course.checks"
    fn = next(n for n in ast.parse(stub.source).body if isinstance(n, ast.FunctionDef))
    assert ast.get_docstring(fn), "the stub keeps a docstring saying what to build"
    last = fn.body[-1]
    assert isinstance(last, ast.Raise) and "NotImplementedError" in ast.unparse(last)

    statement = next(c for c in reversed(cells[:i]) if c.cell_type == "markdown")
    label = re.search(r":::\{exercise\}\n:label: (\S+)", statement.source)
    assert label, "the markdown cell before a stub holds its {exercise} block"

    check_cell = next(c for c in cells[i + 1 :] if c.cell_type == "code")
    assert "exercise-check" in check_cell.metadata.get("tags", [])
    assert f"{name} = check.{name}({name})" in check_cell.source

    after = cells[cells.index(check_cell) + 1 :]
    solution = next(c for c in after if c.cell_type == "markdown")
    assert f":::{{solution}} {label[1]}\n:class: dropdown" in solution.source
    # The dropdown shows the package's own code: the same function the check compares with.
    shown = check.exercise(name).shown
    include = r"```\{literalinclude\} (\S+)\n(?:.*\n)*?:pyobject: (\S+)"
    includes = re.findall(include, solution.source)
    assert includes, "the solution literalincludes the reference from the package"
    source_file = Path(inspect.getsourcefile(shown)).resolve()
    # the reference itself is included (its helpers may come first)
    assert any(
        (path.parent / file).resolve() == source_file and obj == shown.__qualname__
        for file, obj in includes
    ), includes


def test_pages_have_no_mathjax_formulas():
    """The few formulas are written as text, so no page needs MathJax (a CDN) to read right."""
    math = re.compile(r"(?<![\\$])\$[^$\s][^$\n]*\$|\$\$|\{math\}|```\{math\}")
    pages = [
        (
            p,
            "\n".join(
                c.source for c in nbformat.read(p, as_version=4).cells if c.cell_type == "markdown"
            ),
        )
        for p in NOTEBOOKS
    ]
    pages += [(p, p.read_text()) for p in sorted((ROOT / "book").glob("*.md"))]
    found = {str(p.relative_to(ROOT)): math.findall(text) for p, text in pages}
    assert {p: hits for p, hits in found.items() if hits} == {}


def test_the_claims_page_lists_every_parity_claim_and_only_real_tests():
    """book/claims.md ("Exact, claim by claim") names a test file per claim: each exists, and
    every parity test file of the suite is named there."""
    claims = (ROOT / "book" / "claims.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_\w+\.py)`", claims))
    for name in sorted(named):
        assert (ROOT / "tests" / name).is_file(), f"book/claims.md names a missing {name}"
    parity_files = {p.name for p in (ROOT / "tests").glob("test_*parity*.py")}
    assert parity_files <= named, f"not on the claims page: {sorted(parity_files - named)}"
    chapters = set(re.findall(r"\{doc\}`chapter \d\d </notebooks/(\w+)>`", claims))
    assert chapters and all((ROOT / "notebooks" / f"{c}.ipynb").is_file() for c in chapters)
    landing = (ROOT / "book" / "index.md").read_text(encoding="utf-8")
    assert "{doc}`claims`" in landing  # the landing page links to it
