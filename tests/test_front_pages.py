"""The front pages state no number by hand, and show the numbers their cells computed.

``book/index.md``, ``book/setup.md`` and ``book/claims.md`` are executed MyST notebooks: hidden
cells compute every number (``tools/pages.py``) and glue it into the text. Here:

* a lint of their source: a digit in the prose, outside code, glue roles, link targets and a
  short allowlist of names, is a number typed by hand, and fails naming its line;
* ``tools/pages.py`` reads what the pages say it reads (the test files' own run sizes);
* the built pages (the suite's one book build, ``tests/test_book.py``) show each glued value,
  with no Colab or Binder button (the pages are Markdown, not notebooks a student opens);
* at 1280 px in headless Chromium: nothing is wider than the book's column, and the landing
  page's sections come early.
"""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

import pytest
import tiktoken

from tests.conftest import ROOT
from tests.test_book import HTML, build_log  # noqa: F401  (the fixture: one build per run)
from tools import pages

FRONT_PAGES = ["index", "setup", "claims"]

# Digits that are part of a name, not a quantity. Keep this list short: anything else with a
# digit in the prose of a front page must be glued from a cell.
ALLOWED = re.compile(
    "|".join(
        [
            r"\bchapters? \d\d\b",  # a chapter's name: "chapter 00", as its link text says
            r"\bGPT-[234]o?\b",  # the models' names
            r"\bLlama \d\b",
            r"\bMistral 7B v1\b",
            r"\ball-MiniLM-L6-v2\b",
            r"\bUTF-8\b",  # the encoding
            r"\bSHA-256\b",  # the hash
        ]
    ),
    re.I,
)
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
NAMED_ROLE = re.compile(r"\{(?:doc|ref|term)\}`([^`<]*)(?:<[^>]*>)?`")  # its link text is prose
OTHER_ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")  # {glue:text}`name:,` and the like: no prose
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
URL = re.compile(r"https?://\S+")


def hand_typed_numbers(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line whose prose holds a digit that no cell computed."""
    lines = text.split("\n")
    found = []
    start = 0
    if lines and lines[0].strip() == "---":  # the front matter: configuration, not prose
        start = next(i for i in range(1, len(lines)) if lines[i].strip() == "---") + 1
    fence = None
    for number, line in enumerate(lines[start:], start=start + 1):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match[1]
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
            continue
        if re.match(r"^\s*(%|\(\S+\)=\s*$|:[\w-]+:)", line):  # comment, target, option
            continue
        prose = NAMED_ROLE.sub(r"\1", line)
        prose = OTHER_ROLE.sub(" ", prose)
        prose = CODE_SPAN.sub(" ", prose)
        prose = LINK_TARGET.sub("]", URL.sub(" ", prose))
        prose = ALLOWED.sub(" ", prose)
        if re.search(r"\d", prose):
            found.append((number, line))
    return found


def source(name: str) -> str:
    return (ROOT / "book" / f"{name}.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------- the lint


@pytest.mark.parametrize("name", FRONT_PAGES)
def test_no_number_in_the_prose_is_typed_by_hand(name):
    found = hand_typed_numbers(source(name))
    assert not found, (
        f"book/{name}.md: numbers typed by hand (glue them from a cell):\n"
        + "\n".join(f"  line {n}: {line.strip()}" for n, line in found)
    )


@pytest.mark.parametrize("name", FRONT_PAGES)
def test_a_number_typed_into_the_page_is_caught_with_its_line(name):
    lines = source(name).split("\n")
    last = max(i for i, line in enumerate(lines) if line.startswith("## "))
    lines.insert(last + 2, "It takes about 12 hours, more or less.")
    assert hand_typed_numbers("\n".join(lines)) == [
        (last + 3, "It takes about 12 hours, more or less.")
    ]


@pytest.mark.parametrize(
    "line",
    [
        "The {glue:text}`n_chapters` chapters of 3 parts.",
        "A number after a role: {doc}`chapter 05 </notebooks/05_x>` in 2 hours.",
        "A version typed by hand: Python 3.11 or newer.",
        "A number in link text: [14 chapters](https://example.org/1).",
        "- 45 exercises",
        "Heading with a count, ## 7 hours",
    ],
)
def test_the_lint_sees_digits_next_to_what_it_skips(line):
    assert hand_typed_numbers(f"Some prose.\n{line}\n") == [(2, line)]


@pytest.mark.parametrize(
    "line",
    [
        "Python {glue:text}`python_floor` or newer, {glue:text}`n:,` files.",
        "Run `make test-full` or `python3.11 -m venv .venv`.",
        "See {doc}`chapter 00: why tokenization matters </notebooks/00_introduction>`.",
        "[the lecture](https://www.youtube.com/watch?v=zduSFxRajkE&t=896s)",
        "GPT-2, GPT-4 and GPT-4o; Llama 2 and Mistral 7B v1; all-MiniLM-L6-v2; UTF-8, SHA-256.",
        "(watch-bpe-merge-a-chunk-2)=",
        ":class: tip",
    ],
)
def test_the_lint_leaves_code_glue_links_and_names_alone(line):
    assert hand_typed_numbers(f"Some prose.\n{line}\n") == []


def test_the_lint_skips_code_blocks_and_the_front_matter_only():
    text = "---\nmystnb:\n  timeout: 600\n---\n```bash\nmake lab  # 3 minutes\n```\n"
    assert hand_typed_numbers(text) == []
    assert hand_typed_numbers(text + "Then 3 minutes.\n") == [(8, "Then 3 minutes.")]
    cell = "```{code-cell} python\n:tags: [remove-cell]\nglue('x', 2 + 2)\n```\nAfter 4.\n"
    assert hand_typed_numbers(cell) == [(5, "After 4.")]
    assert hand_typed_numbers("````markdown\n```\n1\n```\n2\n````\n") == []


# ------------------------------------------------------------------ what the pages read


def test_the_run_sizes_are_read_from_the_tests(tmp_path):
    """The values the claims page glues are the tests' own, and a changed test changes them."""
    assert pages.constant("_parity.py", "PARITY_EXAMPLES") == 300
    full = {"TOKCOURSE_PARITY_EXAMPLES": pages.make_env("test-full", "TOKCOURSE_PARITY_EXAMPLES")}
    assert pages.constant("_parity.py", "PARITY_EXAMPLES", env=full) == 50_000
    assert pages.constant("test_sentencepiece_parity.py", "SMALL_FUZZ") == 200  # min(300, 200)
    assert pages.constant("test_playground.py", "FUZZ_STRINGS", env=full) == 50_000
    assert pages.parametrized("test_sentencepiece_train.py", "test_botchan", "vocab_size") == [
        1000,
        4000,
        8000,
    ]
    assert pages.call_argument("test_sentencepiece_train.py", "test_fuzz", "fuzz", 1) == 150
    assert pages.call_argument("test_wordpiece_parity.py", "test_seeded_fuzz", "range", 0) == 3000
    fake = tmp_path / "test_fake.py"
    fake.write_text(
        "import os\nN = int(os.environ.get('X', '7'))\nM = max(2, N) * 3\n"
        "def test_a():\n    contexts = ['{c}', 'a{c}']\n    run(n=40)\n"
    )
    assert pages.constant(fake, "M") == 21 and pages.constant(fake, "M", env={"X": "5"}) == 15
    assert pages.constant(fake, "contexts", function="test_a") == ["{c}", "a{c}"]
    assert pages.call_argument(fake, "test_a", "run", "n") == 40
    with pytest.raises(pages.NotFound, match="no assignment to GONE"):
        pages.constant(fake, "GONE")
    with pytest.raises(pages.NotFound, match="no call run"):
        pages.call_argument(fake, "test_a", "run", 0)


def test_what_the_landing_page_counts():
    chapters = pages.chapters()
    assert [p.stem[:2] for p in chapters] == [f"{i:02d}" for i in range(len(chapters))]
    assert len(pages.parts()) == 3
    counted = pages.chapter(ROOT / "notebooks" / "02_bpe.ipynb")
    assert counted.exercises == 3 and 3000 < counted.words < 10_000
    assert pages.visible_words("See [the lecture](https://x.org/a b c) {doc}`it <x>`.") == 5
    assert pages.in_words([1000, 4000, 8000]) == "1,000, 4,000 and 8,000"
    assert pages.python_floor() == "3.11" and pages.pins()["tiktoken"]


# ----------------------------------------------------------------------- the built pages


def built(name: str) -> str:
    return (HTML / "book" / f"{name}.html").read_text(encoding="utf-8")


def pasted(html: str) -> list[str]:
    return [
        html_lib.unescape(t) for t in re.findall(r'<span class="pasted-text">([^<]*)</span>', html)
    ]


@pytest.mark.parametrize("name", FRONT_PAGES)
def test_every_glued_number_is_on_the_built_page(build_log, name):  # noqa: F811
    roles = re.findall(r"\{glue:text\}`", source(name))
    shown = pasted(built(name))
    assert roles and len(shown) == len(roles)
    assert all(value.strip() for value in shown)


def test_the_landing_page_shows_what_its_cells_computed(build_log):  # noqa: F811
    shown = pasted(built("index"))
    gpt2, gpt4 = tiktoken.get_encoding("gpt2"), tiktoken.get_encoding("cl100k_base")
    for value in (
        gpt2.encode(" SolidGoldMagikarp")[0],
        gpt2.encode("127")[0],
        gpt2.encode(" 127")[0],
        gpt4.encode(" 127")[0],
        gpt4.encode("127")[0],
        len(pages.chapters()),
        pages.python_floor(),
    ):
        assert str(value) in shown, value


def test_setup_shows_the_pins_and_python(build_log):  # noqa: F811
    shown = pasted(built("setup"))
    pins = pages.pins()
    assert str(len(pins)) in shown and pins["tiktoken"] in shown
    assert pages.python_floor() in shown and pages.binder_python() in shown
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", built("setup")))
    assert "pip install tokcourse" not in text and 'pip install "tokcourse[' not in text
    assert 'pip install "tokcourse @ git+' in text


@pytest.mark.parametrize("name", FRONT_PAGES)
def test_the_front_pages_have_no_launch_buttons(build_log, name):  # noqa: F811
    """They are executed, but they are Markdown: Colab and Binder could not open them."""
    html = built(name)
    assert "colab.research.google.com/github" not in html and "mybinder.org/v2" not in html


# --------------------------------------------------------------- the pages in a browser

MEASURE = """(() => {
  const article = document.querySelector("article.bd-article");
  const column = article.getBoundingClientRect();
  const over = [...article.querySelectorAll("table, pre, dl, .admonition, img")].filter(
    (e) => e.getBoundingClientRect().right > column.right + 1 || e.scrollWidth > e.clientWidth + 1
  ).map((e) => `${e.tagName} ${e.textContent.trim().slice(0, 60)}`);
  const sections = Object.fromEntries([...article.querySelectorAll("h2")].map(
    (h) => [h.textContent.replace("#", "").trim(), h.getBoundingClientRect().top + scrollY]));
  return {over, sections, tables: article.querySelectorAll("table").length,
          height: document.documentElement.scrollHeight};
})()"""


@pytest.fixture(scope="module")
def measured(build_log, browser) -> dict:  # noqa: F811
    out = {}
    for name in FRONT_PAGES:
        tab = browser.open(Path(HTML / "book" / f"{name}.html").as_uri(), width=1280, height=900)
        out[name] = tab.evaluate(MEASURE)
        tab.send("Page.close")
    return out


@pytest.mark.parametrize("name", FRONT_PAGES)
def test_nothing_is_wider_than_the_column_at_1280_px(measured, name):
    assert measured[name]["over"] == []


def test_the_claims_are_sections_not_a_wide_table(measured):
    """One section per claim (each names its test file once), and no table."""
    assert measured["claims"]["tables"] == 0
    named = re.findall(r"`(test_\w+\.py)`", source("claims"))
    assert len(named) == len(set(named)) == len(measured["claims"]["sections"])


def test_the_landing_page_fits_a_first_minute(measured):
    """Every section a newcomer needs is within the first screens at 1280 px."""
    sections = measured["index"]["sections"]
    assert sections["Ways to use it"] < 2400, sections
    assert measured["index"]["height"] < 4500, measured["index"]["height"]


def test_the_executed_pages_are_read_again_on_every_build():
    """Their numbers come from files Sphinx does not track: an incremental build re-reads them."""
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import tokcourse_book

    class Env:  # what the handler reads of Sphinx's BuildEnvironment
        found_docs = {f"book/{name}" for name in FRONT_PAGES} | {"book/glossary"}
        found_docs |= {"notebooks/00_introduction"}

        @staticmethod
        def doc2path(docname):
            suffix = ".ipynb" if docname.startswith("notebooks/") else ".md"
            return str(ROOT / f"{docname}{suffix}")

    expected = sorted(f"book/{name}" for name in FRONT_PAGES)
    assert tokcourse_book.executed_pages(Env) == expected  # not glossary, not a chapter
    again = tokcourse_book._read_executed_pages_again(None, Env, {"book/setup"}, set(), set())
    assert again == ["book/claims", "book/index"]  # setup is read anyway: it changed
