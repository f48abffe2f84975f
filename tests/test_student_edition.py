"""The student edition (``tools/student.py``, ``make student``): what a student opens.

For every chapter: no MyST left as text, no guard cell, every exercise a numbered box, every
solution collapsed with its code, every stub and check cell where it was, links that work, the
Colab install cell first, nothing but what a notebook front end uses in the metadata. The
MyST renderer (``tools/myst.py``) is tested on its own below, glued values included. Running
every chapter from its student edition is ``tests/test_colab_python.py`` (Colab's Python).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests.conftest import NOTEBOOKS, ROOT
from tokcourse import check
from tokcourse.course.chapters import chapter
from tokcourse.course.exercises import run_check
from tokcourse.course.submission import course_mark
from tools import myst, student
from tools import notebooks as nbtools

STUB, CHECK = "exercise-stub", "exercise-check"
TRY_IT = "from tokcourse.course.viz import show_tokens\n\ntext = "


@pytest.fixture(scope="module")
def editions(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("student")
    return {p.name: p for p in student.write_all(out)}


def read(editions, path: Path) -> nbformat.NotebookNode:
    return nbformat.read(editions[path.name], as_version=4)


def tagged(nb, tag):
    return [c for c in nb.cells if tag in c.metadata.get("tags", [])]


def prose(nb) -> str:
    """All markdown, without fenced code and code spans: where MyST would show as text."""
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    text = re.sub(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1\s*$", "", text, flags=re.S | re.M)
    return re.sub(r"(?<!\})(`+).+?\1", "", text, flags=re.S)  # a role's content stays


MYST_LEFT = [
    (r"^:{3,}", "a colon fence"),
    (r"^`{3,}\{", "a directive"),
    (r"\{[a-z][\w:-]*\}`", "a role"),
    (r"^\([\w.:-]+\)=\s*$", "a target"),
    (r"^:(label|class|language|pyobject|name):", "a directive option"),
]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_myst_is_left_as_text(editions, path):
    nb = read(editions, path)
    text = prose(nb)
    for pattern, what in MYST_LEFT:
        found = re.search(pattern, text, re.M)
        assert found is None, f"{what} left: {text[max(0, found.start() - 80) : found.end() + 80]}"
    assert "literalinclude" not in text


#: Phrases that make sense only on the book's web pages (a student reads a notebook).
WEB_ONLY = re.compile(
    r"this page|static book|folded cell|hidden cell|dropdown|the page below|click to show", re.I
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_sentence_needs_the_web_page(editions, path):
    found = WEB_ONLY.search(prose(read(editions, path)))
    assert found is None, found and found.string[found.start() - 100 : found.end() + 60]


def test_the_myst_detector_finds_raw_myst():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        ":::{exercise}\n:label: x\n\nSee {ref}`x`.\n:::")])  # fmt: skip
    found = [what for pattern, what in MYST_LEFT if re.search(pattern, prose(nb), re.M)]
    assert found == ["a colon fence", "a role", "a directive option"]


def test_these_checks_reject_the_book_notebooks_a_student_used_to_open():
    # the committed chapters, opened as they are, show MyST as text and run guard cells
    for path in NOTEBOOKS:
        book = nbformat.read(path, as_version=4)
        assert any(re.search(p, prose(book), re.M) for p, _ in MYST_LEFT), path.name
        assert any("remove-cell" in c.metadata.get("tags", []) for c in book.cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_guard_cell_and_nothing_hidden_runs(editions, path):
    book = nbformat.read(path, as_version=4)
    nb = read(editions, path)
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    kept = {nbtools.colab_cell_source(nbtools.repository_url()), nbtools.SETUP_CELL}
    guards = [c for c in book.cells if "remove-cell" in c.metadata.get("tags", [])]
    assert guards, "every chapter has guard cells in the book"
    for cell in guards:
        assert cell.cell_type != "code" or cell.source in kept or cell.source not in sources
    visible = [c for c in book.cells if c.cell_type == "code" and c not in guards]
    boxes = sum(bool(student.PLAYGROUND_BOX.search(c.source)) for c in book.cells)
    try_it = [x for x in sources if x.startswith(TRY_IT)]
    assert len(try_it) == boxes  # each live box of the web page: a cell to run instead
    assert [x for x in sources if x not in try_it] == [c.source for c in book.cells if (
        c.cell_type == "code" and (c in visible or c.source in kept))]  # fmt: skip


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_first_code_cell_installs_the_package_on_colab(editions, path):
    first = next(c for c in read(editions, path).cells if c.cell_type == "code")
    assert first.source == nbtools.colab_cell_source(nbtools.repository_url())


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_are_numbered_boxes_with_solutions_holding_code(editions, path):
    nb = read(editions, path)
    chapter = int(path.name[:2])
    stubs = tagged(nb, STUB)
    names = [re.search(r"^def (\w+)\(", c.source, re.M)[1] for c in stubs]
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    boxes = re.findall(rf"^> \*\*Exercise {chapter}\.(\d+)[*:]", text, re.M)
    assert [int(k) for k in boxes] == list(range(1, len(stubs) + 1))
    solutions = re.findall(r"<details>\n<summary>Solution to Exercise (\d+)\.(\d+)</summary>"
                           r"\n\n(.*?)\n\n</details>", text, re.S)  # fmt: skip
    assert [(int(c), int(k)) for c, k, _ in solutions] == [
        (chapter, k) for k in range(1, len(stubs) + 1)
    ]
    for name, (_, _, body) in zip(names, solutions, strict=True):
        assert re.search(r"```python\n(.*\n)*?(def|class) \w+.*\n(.*\n)*?```", body), body
        assert re.search(rf"^\s*def {name}\(", body, re.M), body


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_stub_keeps_its_tag_and_def_and_its_check_follows_unchanged(editions, path):
    book = nbformat.read(path, as_version=4)
    nb = read(editions, path)
    book_checks = [c.source for c in tagged(book, CHECK)]
    assert [c.source for c in tagged(nb, STUB)] == [c.source for c in tagged(book, STUB)]
    code = [c for c in nb.cells if c.cell_type == "code"]
    for stub, check_source in zip(tagged(nb, STUB), book_checks, strict=True):
        name = re.search(r"^def (\w+)\(", stub.source, re.M)[1]
        after = code[code.index(stub) + 1]
        assert CHECK in after.metadata["tags"] and after.source == check_source
        assert f"check.{name}({name})" in after.source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_plain_notebook_without_outputs_or_build_metadata(editions, path):
    nb = read(editions, path)
    nbformat.validate(nb)
    assert set(nb.metadata) == {"kernelspec", "language_info", "tokcourse"}
    assert nb.metadata["tokcourse"]["chapter"] == path.name[:2]
    for cell in nb.cells:
        assert set(cell.metadata) <= {"tags", "jupyter", "tokcourse"}
        assert set(cell.metadata.get("tags", [])) <= {STUB, CHECK}
        # the chapter's own code carries the fingerprint the grader reads; a stub does not
        mark = cell.metadata.get("tokcourse", {}).get("course")
        if cell.cell_type == "code":
            assert (mark is None) == (STUB in cell.metadata.get("tags", []))
            assert mark is None or mark == course_mark(cell.source)
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_links_reach_other_student_notebooks_and_their_anchors(editions, path):
    nb = read(editions, path)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z][\w+.-]*:", target):
            assert target.startswith(("https://", "mailto:")), target
            continue
        file, _, anchor = target.partition("#")
        other = read(editions, Path(file)) if file else nb
        if anchor:
            others = "\n".join(c.source for c in other.cells if c.cell_type == "markdown")
            assert f'<a id="{anchor}"></a>' in others, target


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_solution_runs_when_pasted_and_passes_its_check(editions, path):
    nb = read(editions, path)
    names = [re.search(r"^def (\w+)\(", c.source, re.M)[1] for c in tagged(nb, STUB)]
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    bodies = re.findall(r"<summary>Solution to Exercise [\d.]+</summary>\n(.*?)</details>",
                        text, re.S)  # fmt: skip
    for name, body in zip(names, bodies, strict=True):
        code = re.search(r"```python\n(.*?)\n```", body, re.S)[1]
        namespace: dict = {}
        exec(compile(code, f"<solution of {name}>", "exec", dont_inherit=True), namespace)
        assert run_check(check.exercise(name), namespace[name], quiet=True).passed, name


def test_an_edition_without_solutions_for_graded_work(tmp_path):
    nb = nbformat.read(student.write_all(tmp_path, [NOTEBOOKS[3]], solutions=False)[0], 4)
    text = "\n".join(c.source for c in nb.cells)
    # asides stay folded in <details>; no solution does
    assert "Solution to" not in text and "<summary>Solution" not in text
    assert "show_solution" not in text  # nor a pointer to it
    assert len(tagged(nb, STUB)) == len(tagged(nb, CHECK)) == len(chapter("03").exercises) == 3


def test_the_live_box_of_the_web_page_becomes_a_cell_to_run(editions):
    nb = read(editions, NOTEBOOKS[5])
    at = next(i for i, c in enumerate(nb.cells) if c.source.startswith("**Try it.**"))
    code = nb.cells[at + 1].source
    assert "tokcourse-playground" not in "".join(c.source for c in nb.cells)
    namespace: dict = {}
    exec(code, namespace)  # it runs: the same text, the same three encodings
    assert "DON'T stop" in namespace["text"] and "o200k_base" in code


def test_a_glossary_page_or_a_notebook_link_is_what_it_should_be(editions):
    chapter_04 = "\n".join(c.source for c in read(editions, NOTEBOOKS[4]).cells)
    # within the notebook: the anchor alone
    assert "[Exercise 4.1](#ex-ch04-whitespace-chunks)" in chapter_04
    text = "\n".join(c.source for c in read(editions, NOTEBOOKS[3]).cells)
    earlier = "\n".join(c.source for c in read(editions, NOTEBOOKS[2]).cells)
    assert "[Exercise 0.1](00_introduction.ipynb#ex-intro-get-stats)" in earlier
    book = student.book_url(nbtools.repository_url())
    assert f"]({book}book/playground.html#watch-bpe-merge-a-chunk)" in text


def test_the_edition_is_the_same_each_time_and_lands_in_build_student(tmp_path, editions):
    again = student.write_all(tmp_path, [NOTEBOOKS[3]])[0]
    assert again.read_bytes() == editions[NOTEBOOKS[3].name].read_bytes()
    assert student.OUT == ROOT / "_build" / "student"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^student: setup\n\t\$\(BIN\)/python tools/student.py$", makefile, re.M)


def test_badges_and_launch_buttons_open_the_published_edition():
    repo = "https://github.com/someone/fork"
    assert student.colab_url(repo, "03_x.ipynb") == (
        "https://colab.research.google.com/github/someone/fork/blob/student/student/03_x.ipynb"
    )
    assert student.binder_url(repo, "03_x.ipynb") == (
        "https://mybinder.org/v2/gh/someone/fork/student?urlpath=lab/tree/student/03_x.ipynb"
    )
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    assert "run: make student" in workflow and "path: _build/student" in workflow
    assert f"git checkout -B {student.BRANCH}" in workflow
    assert f"git add {student.FOLDER}" in workflow and f"path: {student.FOLDER}" in workflow


# --- tools/myst.py on its own ----------------------------------------------------------------


def ctx(**kw) -> myst.Context:
    return myst.Context(chapter=3, folder=ROOT / "notebooks", repo_root=ROOT, **kw)


def test_roles_in_code_spans_and_code_blocks_are_left_alone():
    text = "Letters are `\\p{L}`, see ``{ref}`x` ``.\n\n```python\n{ref}`y`\n```"
    assert myst.convert(text, ctx()) == text


def test_unknown_directives_and_roles_are_refused_by_name():
    with pytest.raises(myst.MystError, match="figure"):
        myst.convert("```{figure} x.png\n```", ctx())
    with pytest.raises(myst.MystError, match="math"):
        myst.convert("the {math}`x^2` term", ctx())
    with pytest.raises(myst.MystError, match="never closed"):
        myst.convert(":::{note}\nopen", ctx())
    with pytest.raises(myst.MystError, match="unknown label"):
        myst.convert("{ref}`nowhere`", ctx())


def test_admonitions_as_quotes_or_details():
    assert myst.convert("```{warning}\nCareful.\n```", ctx()) == "> **Warning**\n>\n> Careful."
    got = myst.convert(":::{admonition} Hint\n:class: dropdown\n\nTry `min`.\n:::", ctx())
    assert got == "<details>\n<summary>Hint</summary>\n\nTry `min`.\n\n</details>"


def test_an_exercise_and_its_solution_with_nested_code():
    source = (
        ":::{exercise}\n:label: ex-a\n\nWrite `f`.\n:::\n\n:::{solution} ex-a\n:class: dropdown\n\n"
        "```{literalinclude} ../src/tokcourse/bpe.py\n:language: python\n:pyobject: merge\n```\n:::"
    )
    c = ctx()
    got = myst.convert(source, c)
    assert got.startswith('<a id="ex-a"></a>\n\n> **Exercise 3.1**\n>\n> Write `f`.')
    assert "<summary>Solution to Exercise 3.1</summary>\n\n```python\ndef merge(" in got
    assert c.exercises == {"ex-a": 1}


def test_glued_values_come_from_the_executed_notebook(tmp_path):
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from myst_nb import glue\nglue('n', 1234567, display=False)\n"
        "glue('share', 0.4321, display=False)\nglue('who', 'GPT-4', display=False)")])  # fmt: skip
    NotebookClient(nb, kernel_name="python3").execute()
    values = student.glued_values(nb)
    got = myst.convert(
        "{glue:text}`n:,` tokens, {glue:text}`share:.1%`, {glue}`who`, `{glue}`n``",
        ctx(glue=values),
    )
    assert got == "1,234,567 tokens, 43.2%, 'GPT-4', `{glue}`n``"
    with pytest.raises(myst.MystError, match="no glued value 'm'"):
        myst.convert("{glue:text}`m`", ctx(glue=values))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_solution_code_renders_inside_the_collapsed_block(editions, path):
    """Jupyter renders Markdown as CommonMark, then keeps <details> and <summary> (JupyterLab's
    sanitizer allows both): a solution's code must land inside the closed block, under its
    summary, never in the open where a student would read it by accident."""
    from html.parser import HTMLParser

    from markdown_it import MarkdownIt

    class Where(HTMLParser):
        def __init__(self):
            super().__init__()
            self.open: list[str] = []
            self.pre_outside = 0
            self.summaries = 0

        def handle_starttag(self, tag, attrs):
            self.pre_outside += tag == "pre" and "details" not in self.open
            self.summaries += tag == "summary" and self.open == ["details"]
            self.open.append(tag)

        def handle_endtag(self, tag):
            if tag in self.open:
                del self.open[len(self.open) - self.open[::-1].index(tag) - 1 :]

    nb = read(editions, path)
    cells = [c.source for c in nb.cells if "<summary>Solution to" in c.source]
    assert len(cells) == len(tagged(nb, STUB))
    for source in cells:
        where = Where()
        where.feed(MarkdownIt("commonmark").render(source))
        assert where.pre_outside == 0 and where.summaries >= 1, source[:200]
