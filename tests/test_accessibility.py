"""Every page of the built book passes axe-core (WCAG 2.1 A and AA) and logs no error.

Each page is opened as a reader would open it, from ``file://`` with no network at all, in
headless Chromium. The page is a copy in a temporary folder with a ``<base href>`` to its
folder in the built book (so its own scripts, styles and images load as usual) and three
injected scripts: first of all in ``<head>`` a catcher that records ``window.onerror``, failed
loads, unhandled rejections and every ``console.error``/``console.warn`` call; then, at the end
of ``<body>``, axe-core (a pinned npm release, hash-checked: ``tests/_axe.py``) and a runner that
waits for the page's own scripts (plotly, the playground), runs axe with the WCAG 2.0/2.1 A and
AA rules and writes the results into the DOM, which Chromium dumps.

A page passes with no violation of impact "serious" or "critical" and nothing caught.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests import _axe
from tests._ci import missing_tool
from tests.conftest import NOTEBOOKS
from tests.test_book import CHROMIUM

BOOK_PAGES = [
    "index",
    "how_to_use",
    "playground",
    "setup",
    "instructors",
    "claims",
    "glossary",
    "references",
    "acknowledgements",
]
PAGES = [f"book/{name}" for name in BOOK_PAGES] + [f"notebooks/{p.stem}" for p in NOTEBOOKS]
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = {"serious", "critical"}

# Runs before anything else on the page; keeps what it catches in window.__tokcourseCaught.
CATCHER = """<script>(() => {
  const caught = window.__tokcourseCaught = [];
  const text = (x) => {
    if (x instanceof Error) return `${x.name}: ${x.message}`;
    if (typeof x === "object") { try { return JSON.stringify(x); } catch (e) { return String(x); } }
    return String(x);
  };
  for (const level of ["error", "warn"]) {
    const original = console[level].bind(console);
    console[level] = (...args) => { caught.push(`console.${level}: ${args.map(text).join(" ")}`);
                                    original(...args); };
  }
  window.addEventListener("error", (e) => {
    const t = e.target;
    if (t && t !== window && (t.src || t.href)) caught.push(`failed to load ${t.src || t.href}`);
    else caught.push(`error: ${e.message} at ${e.filename}:${e.lineno}:${e.colno}`);
  }, true);
  window.addEventListener("unhandledrejection", (e) => {
    caught.push(`unhandled rejection: ${text(e.reason)}`);
  });
})();</script>"""

# Runs axe once the page's own scripts are done (plotly drawn, every playground box painted).
AUDIT = """(async () => {
  const boxes = [...document.querySelectorAll(".tokcourse-playground")];
  for (let i = 0; i < 600 && !boxes.every((b) => b.dataset.painted); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const out = {caught: [...window.__tokcourseCaught],  // the page's, not axe's own
               boxes: boxes.map((b) => b.dataset.painted || null)};
  const r = await axe.run(document, {runOnly: {type: "tag", values: TAGS}, preload: false,
                                     resultTypes: ["violations"]});
  out.violations = r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.join(" "), impact: n.impact,
                                summary: n.failureSummary}))}));
  return out;
})()"""


def audited_copy(page: Path, folder: Path) -> Path:
    """A copy of the built ``page`` in ``folder``: its own files from the book, a catcher first."""
    source = page.read_text(encoding="utf-8")
    assert source.count("<head>") == 1 and source.count("</body>") == 1, page
    base = f'<base href="{page.parent.as_uri()}/">'
    copy = source.replace("<head>", "<head>" + base + CATCHER, 1)
    out = folder / page.name
    out.write_text(copy, encoding="utf-8")
    return out


def audit(page: Path, tmp_path: Path, axe_js: Path, browser=None) -> dict:
    """axe's violations and everything the page logged, opened offline.

    Chromium is driven over the DevTools protocol (``tests/_cdp.py``), so the audit waits for the
    playground's Web Worker, and errors the page logs are seen twice: by the catcher inside the
    page and by the browser's own console events.
    """
    from tests._cdp import Browser

    copy = audited_copy(page, tmp_path)
    if browser is None:
        with Browser(tmp_path / "profile") as own:
            return audit(page, tmp_path, axe_js, own)
    tab = browser.open(copy.as_uri(), width=1280, height=900)
    tab.evaluate("new Promise((r) => setTimeout(r, 300))")  # plotly's figures draw after load
    tab.evaluate(axe_js.read_text(encoding="utf-8") + "; 1")
    out = tab.evaluate(AUDIT.replace("TAGS", json.dumps(TAGS)), timeout=300)
    # the catcher sees console calls; the browser also reports exceptions and failed loads
    out["caught"] += [f"browser: {e}" for e in tab.errors(("exception", "log"))]
    tab.send("Page.close")
    return out


def blocking(violations: list[dict]) -> list[dict]:
    return [v for v in violations if v["impact"] in BLOCKING]


def readable(violations: list[dict], nodes: int = 4) -> str:
    """One paragraph per rule: id, impact, help, and the first few offending elements."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']}")
        for n in v["nodes"][:nodes]:
            summary = " ".join((n.get("summary") or "").split())[:160]
            lines.append(f"    {n['target']}  {summary}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def built() -> Path:
    """The built book's HTML, after a build exactly as ``make book`` (test_book's lock)."""
    from tests.test_playground import built_for_the_browser

    return built_for_the_browser()


@pytest.fixture(scope="module")
def axe_js(tmp_path_factory) -> Path:
    """``axe.min.js`` of the pinned release, checked, written where the test pages load it."""
    script = tmp_path_factory.mktemp("axe") / "axe.min.js"
    script.write_text(_axe.axe_script(), encoding="utf-8")
    return script


@pytest.mark.parametrize("name", PAGES)
def test_page_is_accessible_and_logs_no_error(built, axe_js, browser, tmp_path, name):
    page = built / f"{name}.html"
    started = time.perf_counter()
    out = audit(page, tmp_path, axe_js, browser)
    assert all(out["boxes"]), f"{name}: a playground box never finished drawing"
    seconds = time.perf_counter() - started
    found = blocking(out["violations"])
    assert not found, f"{name} ({seconds:.1f} s): axe found\n{readable(found)}"
    assert not out["caught"], f"{name}: the page logged\n" + "\n".join(out["caught"])


def test_every_built_page_is_audited(built):
    """A page added to the book without being added here fails this test."""
    pages = {
        str(p.relative_to(built).with_suffix(""))
        for p in built.glob("*/*.html")
        if not p.parent.name.startswith("_")  # _static holds the theme's template snippets
    }
    assert pages == set(PAGES)


# ------------------------------------------------- the fixes, on a small book built here

SMALL_CONF = """
import sys
from pathlib import Path
from jupyter_book.config import get_final_config

ROOT = Path({root!r})
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "book" / "_ext")]
import tokcourse_book  # noqa: E402

tokcourse_book._write_playground = lambda app, exception: None  # no playground in this book
config, _ = get_final_config(
    user_yaml=ROOT / "_config.yml", cli_config={{"latex_individualpages": False}},
    sourcedir=ROOT,
)
globals().update(config)
external_toc_path = "_toc.yml"
exclude_patterns = ["_build"]
templates_path = [str(ROOT / p) for p in globals().get("templates_path", [])]
html_logo = str(ROOT / html_logo)
nb_execution_mode = "off"
"""

SMALL_TOC = "format: jb-book\nroot: index\nchapters:\n  - file: chapter\n"
SMALL_INDEX = """# A small book

```{note}
A link in a note: [the chapter](chapter.ipynb), on the note's tinted background.
```
"""


def small_notebook() -> str:
    """A chapter with a hidden-input cell whose output is the token visualizer."""
    import nbformat

    from tokcourse.course.viz import show_tokens

    view = show_tokens("Hi there,\tworld!\n\U0001f44b <|endoftext|>", "cl100k_base")
    cell = nbformat.v4.new_code_cell(
        "show_tokens(text)",
        metadata={"tags": ["hide-input"]},
        outputs=[
            nbformat.v4.new_output(
                "display_data", data={"text/html": view.to_html(), "text/plain": str(view)}
            )
        ],
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Chapter"), cell])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    return nbformat.writes(nb)


@pytest.fixture(scope="module")
def small_book(tmp_path_factory) -> Path:
    """A two-page book built with the book's own configuration and extension (a few seconds)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    src = tmp_path_factory.mktemp("small-book")
    (src / "conf.py").write_text(SMALL_CONF.format(root=str(ROOT)), encoding="utf-8")
    (src / "_toc.yml").write_text(SMALL_TOC, encoding="utf-8")
    (src / "index.md").write_text(SMALL_INDEX, encoding="utf-8")
    (src / "chapter.ipynb").write_text(small_notebook(), encoding="utf-8")
    out = src / "_build" / "html"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return out


def test_small_book_declares_the_thebe_config_once(small_book):
    for page in ("index", "chapter"):
        html = (small_book / f"{page}.html").read_text(encoding="utf-8")
        assert html.count("const THEBE_JS_URL") == 1, page
        assert html.index("const THEBE_JS_URL") < html.index("sphinx-thebe.js")


def test_small_book_names_buttons_by_their_text(small_book):
    html = (small_book / "chapter.html").read_text(encoding="utf-8")
    assert "<summary>\n<p" in html and 'aria-label="Toggle hidden content"' not in html
    search = re.search(r'<button class="btn search-button-field[^>]*>', html)[0]
    assert "aria-label" not in search
    assert 'data-default-mode="auto"' in html
    assert "_static/tokcourse.css" in html and (small_book / "_static/tokcourse.css").is_file()


def test_small_book_is_accessible_and_logs_no_error(small_book, axe_js, tmp_path):
    if CHROMIUM is None:
        missing_tool("chromium not installed (apt-get install chromium; .ci/run does it)")
    for page in ("index", "chapter"):
        (tmp_path / page).mkdir()
        out = audit(small_book / f"{page}.html", tmp_path / page, axe_js)
        found = blocking(out["violations"])
        assert not found, f"{page}: axe found\n{readable(found)}"
        assert not out["caught"], f"{page}: the page logged\n" + "\n".join(out["caught"])


# ------------------------------------------------------------- the pinned axe-core


def test_axe_tarball_is_checked_before_use(tmp_path):
    """A tampered or truncated tarball is refused, from the registry or from the cache."""
    from tokcourse.course.data.download import HashMismatch

    good = _axe.tarball()  # the real one (downloaded once, then cached and re-checked)
    assert _axe.integrity(good) == _axe.INTEGRITY
    tampered = bytearray(good)
    tampered[len(good) // 2] ^= 1
    for bad in (bytes(tampered), good[:-100], b""):
        with pytest.raises(HashMismatch, match="not the pinned release"):
            _axe.tarball(tmp_path / "fresh", fetch=lambda url, bad=bad: bad)
        assert not (tmp_path / "fresh" / _axe.TARBALL).exists()  # nothing kept
    # a damaged cached copy is not used: it is replaced by a checked download
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / _axe.TARBALL).write_bytes(good[:1000])
    urls = []
    assert _axe.tarball(cache, fetch=lambda url: urls.append(url) or good) == good
    assert urls == [_axe.URL] and (cache / _axe.TARBALL).read_bytes() == good
    assert "axe.run" in _axe.axe_script(cache, fetch=lambda url: pytest.fail("cached"))
