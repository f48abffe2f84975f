"""Sphinx extension for the tokcourse book: offline plotly figures, clean executed copies.

1. Sets ``TOKCOURSE_BOOK_BUILD=1`` before any notebook runs. Kernels inherit the build's
   environment, so ``tokcourse.course.plotting.setup_notebook()`` switches plotly to plain HTML
   without an embedded or CDN copy of plotly.js.
2. Copies the installed ``plotly.min.js`` into ``_static`` and loads it only on pages that
   contain a plotly figure, so the book shows interactive figures with no network.
3. Keeps the executed copies under ``_build/jupyter_execute`` free of doubled output. With
   ``nb_merge_streams`` (``_config.yml``), myst-nb 1.x merges a cell's stream outputs with
   ``myst_nb.core.utils.coalesce_streams``, which appends the later streams' text *into the
   first stream output object* and returns a new list; the page is rendered from that list,
   but the notebook written to ``jupyter_execute`` still holds the old one: the first output,
   now with all the text, followed by the later outputs again. We hand it a copy instead.
   And a chapter found in the execution cache (``tools/prebuild.py`` puts every chapter
   there) gets its outputs merged into a *new* notebook object, while myst-nb 1.x writes the
   *original* one to ``jupyter_execute``: copies without a single output. We merge the cached
   outputs into the original instead.
4. The tokenizer playground (``book/playground.md``, ``book/_static/playground``): its scripts
   go only on pages with a ``<div class="tokcourse-playground">`` or a merge stepper,
   ``<div class="tokcourse-bpe-stepper">`` (``stepper.js``); its rank tables and
   character classes are written into ``_static/playground/data`` after the build
   (``tokcourse_playground.py``).
5. Numbers exercises per chapter: the third exercise of ``notebooks/04_*.ipynb`` is
   "Exercise 4.3". Sphinx numbers every enumerable node of the unnumbered table of contents
   with one counter for the whole book; we renumber after it, in document order.
6. Includes every inline script once. sphinx-thebe adds its configuration as an inline script
   (``app.add_js_file(None, body="const THEBE_JS_URL = ...")``) in ``env-before-read-docs``,
   after the HTML builder exists, so Sphinx 7 files it twice: in the builder's list as
   ``_JavaScript(None, ...)`` and in the registry, which ``prepare_writing`` copies into the
   same list as ``_JavaScript("", ...)``. The two do not compare equal (``None != ""``), so
   every page declared ``const THEBE_JS_URL`` twice: ``SyntaxError: Identifier 'THEBE_JS_URL'
   has already been declared``. We drop the later copy of any script before the page is
   written (the first keeps its place, so the launch buttons' config still precedes
   ``sphinx-thebe.js``).
7. ``book/_static/tokcourse.css`` (after the theme's styles, on every page): the theme's
   colours that fall below WCAG AA contrast. ``book/_templates`` (``_config.yml``) replaces two
   of the theme's buttons whose accessible name hid their visible text.
8. Code cells with hidden input: myst-nb writes ``<summary aria-label="Toggle hidden
   content">`` around "Show code cell source", so the name a screen reader announces is not
   the text a sighted reader sees (WCAG 2.5.3, label in name). We write the summary without
   the ``aria-label``: its name is its visible text.
9. The launch buttons of a chapter open its *student edition* (``tools/student.py``), which the
   deploy workflow publishes to the repository's ``student`` branch: sphinx-book-theme points
   Colab and Binder at ``notebooks/NN_slug.ipynb`` on ``main``, the book's own source, where a
   student would meet raw MyST and the guard cells. We rewrite those two URLs.
10. Links keep every query parameter: MyST-Parser 3 escapes a link's ``&`` once and docutils
    once more (``&amp;amp;t=896s``), which broke every timestamped link to the lecture; the
    URL is unescaped in the doctree.
11. The executed Markdown pages (front matter ``file_format: mystnb``: the landing page, Setup,
    the claims page) compute their numbers from files Sphinx does not track (``_toc.yml``,
    ``constraints.txt``, the chapters, the tests). Sphinx reads a page again only when its own
    source changed, so an incremental build would keep stale numbers: they are read again on
    every build.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import sys
from pathlib import Path

import tokcourse_playground
from sphinx.util import logging

from tokcourse.course.plotting import BOOK_BUILD_ENV

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # tools/ (the student edition's URLs) lives at the root
    sys.path.insert(0, str(ROOT))

from tools import student  # noqa: E402

PLOTLY_JS = "plotly.min.js"
BOOK_CSS = Path(__file__).resolve().parents[1] / "_static" / "tokcourse.css"
PLAYGROUND_SOURCES = Path(__file__).resolve().parents[1] / "_static" / "playground"
PLAYGROUND_CLASS = "tokcourse-playground"
STEPPER_CLASS = "tokcourse-bpe-stepper"
# In load order: the core, the tokenizers (each registers itself), the engine, the widget; the
# merge stepper, where a page has one, after them.
PLAYGROUND_SCRIPTS = (
    "core.js",
    "encoder.js",
    "sentencepiece.js",
    "wordpiece.js",
    "engine.js",
    "playground.js",
)

logger = logging.getLogger(__name__)

#: A chapter's document name, "notebooks/04_regex_pretokenization": group 1 is its number.
CHAPTER_DOC = re.compile(r"notebooks/(\d+)_")


def _plotly_js_source() -> Path:
    import plotly

    src = Path(plotly.__file__).parent / "package_data" / PLOTLY_JS
    if not src.is_file():
        raise FileNotFoundError(f"{src} is missing: reinstall plotly ('pip install plotly')")
    return src


def _add_plotly_where_needed(app, pagename, templatename, context, doctree) -> None:
    if "plotly-graph-div" in context.get("body", ""):
        # Per-page script (Sphinx >= 3.5). Loaded synchronously in <head>, so the inline
        # Plotly.newPlot(...) calls in the body find the global `Plotly`.
        app.add_js_file(PLOTLY_JS, priority=100)


def _copy_plotly_js(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_plotly_js_source(), static / PLOTLY_JS)


def _copy_book_css(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(BOOK_CSS, static / BOOK_CSS.name)


def _add_playground_where_needed(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body", "")
    box = f'class="{PLAYGROUND_CLASS}' in body
    stepper = f'class="{STEPPER_CLASS}' in body
    if box or stepper:  # the tokenizers (core.js first); the widget only where a box is
        for script in PLAYGROUND_SCRIPTS:
            if script == "playground.js" and not box:
                continue
            if (PLAYGROUND_SOURCES / script).is_file():
                app.add_js_file(f"playground/{script}", priority=110)
    if box:
        app.add_css_file("playground/playground.css")
    if stepper:
        app.add_css_file("playground/stepper.css")
        app.add_js_file("playground/stepper.js", priority=112)


def _write_playground(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    tokcourse_playground.copy_sources(PLAYGROUND_SOURCES, static)
    sizes = tokcourse_playground.write_data(static)
    for file, (raw, gzipped) in sizes.items():
        logger.info(f"playground data {file}: {raw:,} bytes, {gzipped:,} gzipped")


def _merge_streams_on_a_copy() -> None:
    from myst_nb.core import render

    merge = render.coalesce_streams
    if getattr(merge, "tokcourse_copy", False):
        return

    def coalesce_streams_copy(outputs):
        return merge(copy.deepcopy(outputs))

    coalesce_streams_copy.tokcourse_copy = True
    render.coalesce_streams = coalesce_streams_copy


def _script_key(script) -> tuple:
    """What makes two of a page's scripts the same script; ``None`` and ``""`` are no file."""
    filename = getattr(script, "filename", script)
    attributes = getattr(script, "attributes", {})
    return (filename or "", tuple(sorted(attributes.items())))


def _include_each_script_once(app, pagename, templatename, context, doctree) -> None:
    """Remove repeated scripts (same file or same inline body) from the page, keeping the first."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique  # in place: the builder restores its own list after each page


def _visit_hidden_input(self, node) -> None:
    """myst-nb's ``visit_HideCellInput`` without the ``aria-label`` that hid the summary text."""
    from html import escape

    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n')
    self.body.append("<summary>\n")
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n')
    self.body.append("</summary>\n")


def _label_hidden_input_by_its_text(app) -> None:
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_node(HideCodeCellNode, override=True, html=(_visit_hidden_input, depart_HideCellInput))


def _number_exercises_by_chapter(app, env) -> list[str]:
    """Exercise numbers restart in each chapter: (chapter, position in the chapter).

    Runs after Sphinx's own ``assign_figure_numbers`` (``env-get-updated``, priority 900), which
    gives the whole book one counter; the order within a page is kept.
    """
    for docname, by_type in env.toc_fignumbers.items():
        match = CHAPTER_DOC.match(docname)
        if match is None or "exercise" not in by_type:
            continue
        chapter = int(match.group(1))
        in_order = sorted(by_type["exercise"], key=by_type["exercise"].get)
        by_type["exercise"] = {node_id: (chapter, k) for k, node_id in enumerate(in_order, 1)}
    return []


def _unescape_link_ampersands(app, doctree, docname) -> None:
    """``[lecture](…watch?v=…&t=896s)`` must keep its ``&t=``: MyST-Parser 3 stores the URL
    HTML-escaped (``&amp;t=``) and docutils escapes it again when it writes the page
    (``&amp;amp;t=``), so every link lost its query after the first parameter and the lecture
    started at 0:00 (MyST-Parser issue 760). The URL goes back to what the source says."""
    from docutils import nodes

    for node in doctree.findall(nodes.reference):
        uri = node.get("refuri", "")
        if "&amp;" in uri:
            node["refuri"] = uri.replace("&amp;", "&")


def _launch_the_student_edition(app, pagename, templatename, context, doctree) -> None:
    """Colab and Binder buttons of a chapter page: the student edition, not the book's source."""
    match = CHAPTER_DOC.match(pagename)
    if match is None or "header_buttons" not in context:
        return
    repo = student.repository_url(ROOT)
    name = f"{pagename.split('/', 1)[1]}.ipynb"
    urls = {
        "colab.research.google.com": student.colab_url(repo, name),
        "mybinder.org": student.binder_url(repo, name),
    }

    def rewrite(buttons: list) -> None:
        for button in buttons:
            if not isinstance(button, dict):
                continue
            url = button.get("url", "")
            for host, new in urls.items():
                if isinstance(url, str) and f"//{host}/" in url:
                    button["url"] = new
            rewrite(button.get("buttons", []))

    rewrite(context["header_buttons"])


def _cached_outputs_in_the_original() -> None:
    from myst_nb.core.execute.cache import NotebookClientCache

    start = NotebookClientCache.start_client
    if getattr(start, "tokcourse_in_place", False):
        return

    def start_client(self):
        original = self._notebook
        start(self)
        if self._notebook is not original:  # a cache hit: outputs into the notebook written out
            original.cells, original.metadata = self._notebook.cells, self._notebook.metadata
            self._notebook = original

    start_client.tokcourse_in_place = True
    NotebookClientCache.start_client = start_client


def executed_pages(env) -> list[str]:
    """The docnames of the Markdown pages that run code (myst-nb text notebooks)."""
    pages = []
    for docname in sorted(env.found_docs):
        path = Path(env.doc2path(docname))
        if path.suffix != ".md":
            continue
        text = path.read_text(encoding="utf-8")
        front = text.split("\n---\n", 1)[0] if text.startswith("---\n") else ""
        if re.search(r"^file_format:\s*mystnb\s*$", front, re.M):
            pages.append(docname)
    return pages


def _read_executed_pages_again(app, env, added, changed, removed) -> list[str]:
    return [d for d in executed_pages(env) if d not in added and d not in changed]


def setup(app):
    os.environ[BOOK_BUILD_ENV] = "1"
    _merge_streams_on_a_copy()
    _cached_outputs_in_the_original()
    _plotly_js_source()  # fail early, with a clear message, if plotly is broken
    app.connect("html-page-context", _add_plotly_where_needed)
    app.connect("build-finished", _copy_plotly_js)
    app.add_css_file(BOOK_CSS.name, priority=900)  # after the theme's: its colours win
    app.connect("build-finished", _copy_book_css)
    app.connect("html-page-context", _add_playground_where_needed)
    app.connect("build-finished", _write_playground)
    app.connect("env-get-updated", _number_exercises_by_chapter, priority=900)
    app.connect("doctree-resolved", _unescape_link_ampersands)
    # after sphinx-book-theme's add_launch_buttons (priority 501)
    app.connect("html-page-context", _launch_the_student_edition, priority=800)
    # last, after every handler that adds a script to the page
    app.connect("html-page-context", _include_each_script_once, priority=1000)
    app.connect("builder-inited", _label_hidden_input_by_its_text)
    app.connect("env-get-outdated", _read_executed_pages_again)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
