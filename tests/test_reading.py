"""Every chapter reads as a course: one rhythm, machinery out of sight (CONTRIBUTING.md).

Counted twice: on the notebook (``tools/reading.py``: headings, bullets, exercise order, the
lecture line) and on the built HTML, which is what a reader gets (visible asserts, formatter
pragmas, ⏳ placeholders, exercise numbers). Guards a chapter hides still run in the build:
``test_book`` fails on any error.
"""

from __future__ import annotations

import html as html_lib
import re

import nbformat
import pytest

from tests.conftest import NOTEBOOKS, ROOT
from tests.test_book import HTML, build_log  # noqa: F401  (the fixture: one build per run)
from tools import reading

LECTURE_TABLE = ROOT / "book" / "references.md"


def lecture_times() -> dict[int, str]:
    """{seconds: the lecture's chapter title} from the references page's table."""
    text = LECTURE_TABLE.read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| \[[\d:]+\]\(https://www\.youtube\.com/watch\?v=zduSFxRajkE&t=(\d+)s\) \| (.+?) \|",
        text,
        re.M,
    )
    return {int(t): title for t, title in rows}


def test_the_references_page_lists_the_lectures_own_chapters():
    times = lecture_times()
    assert len(times) == 25
    assert times[350] == "tokenization by example in a Web UI (tiktokenizer)"
    assert times[5128] == "minbpe exercise time! write your own GPT-4 tokenizer"
    # each link's seconds are its shown h:mm:ss
    text = LECTURE_TABLE.read_text(encoding="utf-8")
    for shown, seconds in re.findall(
        r"\[([\d:]+)\]\(https://www\.youtube\.com/watch\?v=zduSFxRajkE&t=(\d+)s\)", text
    ):
        parts = [int(p) for p in shown.split(":")]
        assert sum(p * 60**k for k, p in enumerate(reversed(parts))) == int(seconds), shown


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapter_follows_the_rhythm(path):
    assert reading.read(path).problems == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_lecture_links_use_the_lectures_own_timestamps(path):
    found = reading.read(path)
    known = lecture_times()
    assert set(found.lecture_times) <= set(known), sorted(set(found.lecture_times) - set(known))
    markdown = "\n".join(
        c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"
    )
    line = next(ln for ln in markdown.splitlines() if ln.startswith(reading.LECTURE))
    assert LECTURE_LINK_OR_BEYOND.search(line), line


LECTURE_LINK_OR_BEYOND = re.compile(r"zduSFxRajkE&t=\d+s|not covered")


def test_the_budget_tool_catches_what_it_should(tmp_path):
    """tools/reading.py is only worth having if it fails on a page that breaks the rules."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 99 A chapter\n\n**In the lecture:** not covered."),
        nbformat.v4.new_markdown_cell("## Why this matters\n\nSee Exercise 3."),
        nbformat.v4.new_code_cell("x = 1  # fmt: skip\n" + "assert x\n" * 6),
        nbformat.v4.new_code_cell("from tokcourse import bpe\n\nbpe.get_stats([1, 2])"),
        nbformat.v4.new_code_cell("from tokcourse.bpe import merge\n\nids = gpt2.encode('x')"),
        nbformat.v4.new_code_cell(
            "def encode(text):\n    raise NotImplementedError",
            metadata={"tags": ["exercise-stub"]},
        ),
        nbformat.v4.new_code_cell(
            "def get_stats(ids):\n    raise NotImplementedError",
            metadata={"tags": ["exercise-stub"]},
        ),
        nbformat.v4.new_code_cell(
            "def merge(ids, pair, idx):\n    raise NotImplementedError",
            metadata={"tags": ["exercise-stub"]},
        ),
        nbformat.v4.new_markdown_cell("## What to remember\n\n- one\n\n## Further reading\n"),
    ]
    path = tmp_path / "99_bad.ipynb"
    nbformat.write(nb, path)
    problems = " | ".join(reading.read(path).problems)
    for expected in [
        "6 visible assert lines",
        "formatter pragmas",
        "rhythm headings",
        "exercise number written by hand",
        "the course's merge is used before its exercise",
        "the course's get_stats is used before its exercise",
    ]:
        assert expected in problems, problems
    # a name the page never shows being defined
    nb.cells.insert(2, nbformat.v4.new_code_cell("secret = 42", metadata={"tags": ["remove-cell"]}))
    nb.cells.insert(3, nbformat.v4.new_code_cell("for k in range(secret):\n    print(k)"))
    nbformat.write(nb, path)
    problems = " | ".join(reading.read(path).problems)
    assert "visible code uses 'secret', defined only in a hidden cell" in problems, problems
    assert "'k'" not in problems  # bound by the cell that uses it
    # a method of another object is not the course's function
    assert "the course's encode" not in problems
    # hidden guards do not count
    nb.cells[4].metadata["tags"] = ["remove-cell"]
    nbformat.write(nb, path)
    assert "visible assert" not in " | ".join(reading.read(path).problems)


# --- on the built pages ------------------------------------------------------------------------

CELL = re.compile(
    r'<div class="cell( [^"]*)? docutils container">(.*?)(?=<div class="cell[ "]|\Z)', re.S
)
INPUT = re.compile(r'<div class="cell_input docutils container">(.*?)</pre>', re.S)


def visible_code(html: str) -> list[str]:
    """The code of every cell input a reader sees unfolded (hide-input/hide-cell fold it)."""
    shown = []
    for classes, body in CELL.findall(html):
        if "tag_hide-input" in classes or "tag_hide-cell" in classes:
            continue
        for code in INPUT.findall(body):
            shown.append(html_lib.unescape(re.sub(r"<[^>]+>", "", code)))
    return shown


def chapter_page(path) -> str:
    return (HTML / "notebooks" / f"{path.stem}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_rendered_page_shows_at_most_five_asserts_and_no_machinery(build_log, path):  # noqa: F811
    html = chapter_page(path)
    code = "\n".join(visible_code(html))
    asserts = re.findall(r"^\s*assert\b.*$", code, re.M)
    assert len(asserts) <= reading.MAX_VISIBLE_ASSERTS, asserts
    assert not reading.PRAGMA.search(code)
    assert "⏳" not in html and "not implemented yet" not in html


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercise_numbers_restart_in_each_chapter(build_log, path):  # noqa: F811
    html = chapter_page(path)
    numbers = re.findall(r'<span class="caption-number">Exercise (\d+)\.(\d+) </span>', html)
    chapter = int(path.stem[:2])
    assert [(int(c), int(k)) for c, k in numbers] == [
        (chapter, k) for k in range(1, len(numbers) + 1)
    ]


def test_the_landing_page_says_where_to_start_above_the_fold(build_log):  # noqa: F811
    """The first thing after the opening paragraph is a link to chapter 00 (before any
    section)."""
    html = (HTML / "book" / "index.html").read_text(encoding="utf-8")
    main = html[re.search(r'<h1>[^<]*<a class="headerlink"', html).start() :]  # the page's title
    start = main.index("Start with chapter 00")
    assert 'href="../notebooks/00_introduction.html"' in main[start - 300 : start]
    assert start < main.index("<h2")
    assert start < 3500, "the start link is more than a short paragraph down the page"
