"""Every line of code a reader sees fits the book's code column: at most 79 columns.

At 1280 px the column shows about 79 characters of code; a longer line scrolls sideways. Code a
reader sees:

* the input of every code cell of a chapter, except cells tagged ``remove-cell`` or
  ``remove-input`` (``hide-input`` and ``hide-cell`` cells open with a click, so they count);
* fenced code blocks in the chapters' markdown cells and in ``book/*.md``;
* the package code those pages include (``{literalinclude}`` of a function), and every
  exercise's reference solution as the student edition and ``check.show_solution`` give it.

Checked twice: on the sources (fast, no build) and on the built HTML, every ``pre`` of a code
block that is not a cell's output (what the browser actually lays out). Width is counted in
terminal columns, as ruff's E501 counts it: a wide East Asian character or an emoji takes two
columns, a combining mark none. ``notebooks/ruff.toml`` holds every cell (hidden guards too) to
the same 79, so ``make lint`` catches a long line before the book is built.
"""

from __future__ import annotations

import html as html_lib
import re
import types
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from sphinx.directives.code import LiteralIncludeReader

from tests.conftest import NOTEBOOKS, ROOT
from tests.test_book import HTML, build_log  # noqa: F401  (the fixture: one build per run)

LIMIT = 79
BOOK_PAGES = sorted((ROOT / "book").glob("*.md"))
HIDDEN = {"remove-cell", "remove-input"}

#: A fence that shows its content as code: no info, a language, or a code directive.
CODE_DIRECTIVES = {"code", "code-block", "sourcecode", "code-cell"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
DIRECTIVE = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")


def width(line: str) -> int:
    """Terminal columns of ``line``: 2 for a wide character, 0 for a combining mark.

    >>> width("abc"), width("東京"), width("e\\u0301"), width("\\U0001f600")
    (3, 4, 1, 2)
    """
    columns = 0
    for c in line:
        if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf"):
            continue
        columns += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return columns


def too_wide(lines, where: str) -> list[str]:
    """``where, line N (C columns): text`` for every line of ``lines`` over the limit."""
    return [
        f"{where}, line {n} ({width(line)} columns): {line}"
        for n, line in enumerate(lines, 1)
        if width(line) > LIMIT
    ]


# --- the sources ---------------------------------------------------------------------------


def fenced_blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """``(first line, info, lines)`` of every block a MyST text shows as code.

    Directive fences (``:::{exercise}``, ````{admonition}``) are looked into: the code blocks
    inside them count. A ``{literalinclude}`` is returned with its option lines, for
    :func:`included_lines`. The indentation of the fence (a list item's) is not shown.
    """
    blocks: list[tuple[int, str, list[str]]] = []
    stack: list[tuple[str, str, str]] = []  # (fence, info, indentation) of the open blocks
    body: list[str] = []
    start = 0
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if stack and _is_code(stack[-1][1]):
            fence, info, indent = stack[-1]
            if m and not m["info"].strip() and _closes(m["fence"], fence):
                blocks.append((start, info, body))
                stack.pop()
            else:
                body.append(line.removeprefix(indent))
            continue
        if not m:
            continue
        if stack and not m["info"].strip() and _closes(m["fence"], stack[-1][0]):
            stack.pop()
            continue
        info = m["info"].strip()
        if not info and m["fence"][0] == ":":
            continue  # a line of colons, not a fence
        stack.append((m["fence"], info, m["indent"]))
        body, start = [], n + 1
    return blocks


def _closes(candidate: str, fence: str) -> bool:
    return candidate[0] == fence[0] and len(candidate) >= len(fence)


def _is_code(info: str) -> bool:
    directive = DIRECTIVE.match(info)
    if directive is None:
        return True  # plain ``` or ```python
    return directive["name"] in CODE_DIRECTIVES or directive["name"] == "literalinclude"


def included_lines(info: str, options: list[str], folder: Path) -> list[str]:
    """The lines a ``{literalinclude}`` shows, read as Sphinx reads them."""
    settings: dict[str, object] = {}
    for line in filter(None, options):
        m = re.match(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$", line)
        assert m, f"literalinclude takes options only, got {line!r}"
        settings[m["key"]] = m["value"]
    if "dedent" in settings:
        settings["dedent"] = int(settings["dedent"] or 0)
    path = folder / DIRECTIVE.match(info)["arg"]
    config = types.SimpleNamespace(source_encoding="utf-8")
    text, _ = LiteralIncludeReader(str(path), settings, config).read()
    return text.rstrip("\n").split("\n")


def markdown_code(text: str, folder: Path, where: str) -> list[str]:
    """The lines over the limit in the code blocks of a MyST text."""
    problems = []
    for start, info, lines in fenced_blocks(text):
        directive = DIRECTIVE.match(info)
        if directive and directive["name"] == "literalinclude":
            shown = included_lines(info, lines, folder)
            name = "".join(re.findall(r"^:pyobject:\s*(\S+)", "\n".join(lines), re.M))
            problems += too_wide(shown, f"{where}: {directive['arg']} {name}".rstrip())
        else:
            problems += [
                f"{where}, line {start + n - 1} ({width(line)} columns): {line}"
                for n, line in enumerate(lines, 1)
                if width(line) > LIMIT
            ]
    return problems


def notebook_problems(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    problems = []
    for i, cell in enumerate(nb.cells):
        where = f"{path.name} cell {i}"
        if cell.cell_type == "code" and not HIDDEN & set(cell.metadata.get("tags", [])):
            problems += too_wide(cell.source.split("\n"), f"{where} (code)")
        elif cell.cell_type == "markdown":
            problems += markdown_code(cell.source, path.parent, f"{where} (markdown)")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_chapters_visible_code_fits_the_column(path):
    problems = notebook_problems(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", BOOK_PAGES, ids=lambda p: p.stem)
def test_a_pages_code_blocks_fit_the_column(path):
    text = path.read_text(encoding="utf-8")
    problems = markdown_code(text, path.parent, f"book/{path.name}")
    assert not problems, "\n".join(problems)


def _exercise_names() -> list[str]:
    from tokcourse.course.check import _registry

    return sorted(_registry())


@pytest.mark.parametrize("name", _exercise_names())
def test_every_shown_solution_fits_the_column(name):
    """What ``check.show_solution`` prints and the student edition inlines: the function, its
    imports and the helpers it calls."""
    from tokcourse import check

    problems = too_wide(check.solution_code(name).split("\n"), f"solution of {name}")
    assert not problems, "\n".join(problems)


# --- the checker itself ----------------------------------------------------------------------

MYST = """\
Prose may run on for as long as it likes: it is wrapped by the browser, so a line of the source
that is long is fine.

```python
short = 1
{long}
```

::::{{admonition}} A box
:class: tip

````
{long}
````
::::

:::{{exercise}}
:label: ex-x

```{{literalinclude}} {source}
:language: python
:pyobject: wide
```
:::
"""


def test_the_source_checker_finds_a_long_line_in_every_kind_of_block(tmp_path):
    long = "x = " + "9" * 76  # 80 columns
    assert width(long) == LIMIT + 1
    (tmp_path / "mod.py").write_text(f"def wide():\n    {long}\n\n\ndef other():\n    {long}\n")
    text = MYST.format(long=long, source="mod.py")
    problems = markdown_code(text, tmp_path, "page")
    assert problems == [
        f"page, line 6 (80 columns): {long}",
        f"page, line 13 (80 columns): {long}",
        f"page: mod.py wide, line 2 (84 columns):     {long}",
    ]
    fits = MYST.format(long="y = 1", source="mod.py").replace(":pyobject: wide", "")
    (tmp_path / "mod.py").write_text("def wide():\n    return 1\n")
    assert markdown_code(fits, tmp_path, "page") == []


# --- the built book --------------------------------------------------------------------------


class CodeBlocks(HTMLParser):
    """The text of every ``pre`` inside a ``div.highlight`` that is not a cell's output."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, set[str]]] = []
        self.blocks: list[str] = []
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag not in ("div", "pre"):
            return
        classes = set((dict(attrs).get("class") or "").split())
        self.stack.append((tag, classes))
        if tag == "pre" and self._is_code():
            self._text = []

    def handle_endtag(self, tag):
        if tag not in ("div", "pre"):
            return
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag == tag:
                break
        if tag == "pre" and self._text is not None:
            self.blocks.append("".join(self._text))
            self._text = None

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)

    def _is_code(self) -> bool:
        classes = [c for _, cs in self.stack[:-1] for c in cs]
        in_output = any(c == "cell_output" or c.startswith("output") for c in classes)
        return "highlight" in classes and not in_output


def html_code_blocks(html: str) -> list[str]:
    parser = CodeBlocks()
    parser.feed(html)
    parser.close()
    return parser.blocks


def html_problems(page: Path) -> list[str]:
    problems = []
    where = page.relative_to(HTML)
    for i, block in enumerate(html_code_blocks(page.read_text(encoding="utf-8")), 1):
        problems += too_wide(block.rstrip("\n").split("\n"), f"{where}, code block {i}")
    return problems


HTML_SAMPLE = """\
<div class="cell docutils container"><div class="cell_input docutils container">
<div class="highlight-ipython3 notranslate"><div class="highlight"><pre><span></span>
<span class="n">x</span> <span class="o">=</span> &quot;{long}&quot;
</pre></div></div></div>
<div class="cell_output docutils container">
<div class="output stream highlight-myst-ansi notranslate"><div class="highlight"><pre>{long}
</pre></div></div></div></div>
<div class="highlight-python notranslate"><div class="highlight"><pre>ok = 1
</pre></div></div>
"""


def test_the_html_checker_reads_code_and_skips_outputs():
    long = "a" * (LIMIT - 5)  # with x = "..." around it: 80 columns
    blocks = html_code_blocks(HTML_SAMPLE.format(long=long))
    assert blocks == [f'\nx = "{long}"\n', "ok = 1\n"]
    assert width(blocks[0].split("\n")[1]) == LIMIT + 1


def built_pages() -> list[Path]:
    pages = [HTML / "notebooks" / f"{p.stem}.html" for p in NOTEBOOKS]
    return pages + [HTML / "book" / f"{p.stem}.html" for p in BOOK_PAGES]


def test_every_code_line_of_the_built_book_fits_the_column(build_log):  # noqa: F811
    problems = []
    for page in built_pages():
        assert page.is_file(), f"{page} was not built"
        problems += html_problems(page)
    assert not problems, "\n".join(problems)


def test_the_built_pages_show_code(build_log):  # noqa: F811
    """The checker reads something: every chapter page has code blocks, and the text of one."""
    for page in built_pages()[: len(NOTEBOOKS)]:
        assert html_code_blocks(page.read_text(encoding="utf-8")), page
    intro = html_code_blocks((HTML / "notebooks" / "00_introduction.html").read_text("utf-8"))
    assert any("def merge(ids" in html_lib.unescape(b) for b in intro)
