"""The book builds with zero warnings, and its pages work offline.

The build runs exactly as `make book` does (``-W -n --keep-going``), into ``_build`` so that the
execution cache is shared: an unchanged chapter is not re-run.
"""

from __future__ import annotations

import fcntl
import filecmp
import html as html_lib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import plotly
import pytest

from tests._ci import missing_tool
from tests.conftest import NOTEBOOKS, ROOT
from tools import notebooks as nbtools
from tools import student

HTML = ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def build_book(timeout: int = 1800, again: bool = False) -> subprocess.CompletedProcess:
    """Build exactly as `make book` does (tools/prebuild.py, then jupyter-book).

    Under pytest-xdist (`make test` runs one worker per core) several workers may need the book:
    a lock makes them build one at a time, and within one test run (xdist's run id) the book is
    built once: a later caller gets the first build's result. ``again=True`` builds anyway.
    """
    jb = Path(sys.executable).with_name("jupyter-book")
    (ROOT / "_build").mkdir(exist_ok=True)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    done = ROOT / "_build" / f".tests-build-{run}.json" if run and not again else None
    with open(ROOT / "_build" / ".tests-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done is not None and done.is_file():
            kept = json.loads(done.read_text(encoding="utf-8"))
            return subprocess.CompletedProcess(kept["args"], kept["returncode"], *kept["out"])
        # as `make book`: the chapters run in parallel into the execution cache first
        prebuild = subprocess.run(
            [sys.executable, str(ROOT / "tools" / "prebuild.py")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if prebuild.returncode != 0:  # as `make book`: a failing chapter stops it there
            result = prebuild
        else:
            result = subprocess.run(
                [str(jb), "build", ".", "-W", "-n", "--keep-going"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            result.stdout = prebuild.stdout + result.stdout
        if done is not None:
            for old in (ROOT / "_build").glob(".tests-build-*.json"):
                old.unlink()
            record = {"args": result.args, "returncode": result.returncode}
            done.write_text(json.dumps(record | {"out": [result.stdout, result.stderr]}))
        return result


@pytest.fixture(scope="module")
def build_log() -> str:
    result = build_book()
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    return log


def page(name: str) -> str:
    return (HTML / f"{name}.html").read_text(encoding="utf-8")


def test_build_has_zero_warnings(build_log):
    warnings = [
        line for line in build_log.splitlines() if re.search(r"WARNING:|ERROR:|CRITICAL:", line)
    ]
    assert not warnings, "\n".join(warnings)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_chapter_page_is_built(build_log, path):
    assert (HTML / "notebooks" / f"{path.stem}.html").is_file()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_launch_buttons_open_the_student_edition(build_log, path):
    html = page(f"notebooks/{path.stem}")
    repo = nbtools.repository_url()
    assert f'href="{student.colab_url(repo, path.name)}"' in html
    assert f'href="{student.binder_url(repo, path.name).replace("&", "&amp;")}"' in html
    assert "blob/main/notebooks/" not in html and "lab/tree/notebooks/" not in html


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_student_edition_numbers_exercises_as_the_book_does(build_log, path, tmp_path):
    shown = re.findall(r"Exercise (\d+\.\d+)", page(f"notebooks/{path.stem}"))
    book = list(dict.fromkeys(x for x in shown))  # each number in order of first appearance
    edition = nbformat.read(student.write_all(tmp_path, [path])[0], as_version=4)
    boxes = re.findall(r"^> \*\*Exercise (\d+\.\d+)", "\n".join(
        c.source for c in edition.cells if c.cell_type == "markdown"), re.M)  # fmt: skip
    assert boxes == [x for x in book if x.startswith(f"{int(path.name[:2])}.")]


def test_every_link_keeps_its_query_parameters(build_log):
    """A lecture link ``…watch?v=…&t=896s`` starts the video at its time: in the HTML the ``&``
    is written ``&amp;`` once, never ``&amp;amp;`` (which a browser reads as ``&amp;t=``)."""
    pages = sorted(HTML.rglob("*.html"))
    timed = 0
    for path in pages:
        hrefs = re.findall(r'href="([^"]*)"', path.read_text(encoding="utf-8"))
        assert not [h for h in hrefs if "&amp;amp;" in h], path.name
        timed += sum(bool(re.search(r"youtube\.com/watch\?v=\w+&amp;t=\d+s$", h)) for h in hrefs)
    assert timed > 40  # the chapters' and the references' links to the lecture


def test_plotly_js_is_served_locally(build_log):
    served = HTML / "_static" / "plotly.min.js"
    installed = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    assert served.is_file() and filecmp.cmp(served, installed, shallow=False)


def test_pages_with_figures_load_local_plotly_and_no_cdn(build_log):
    with_figures = 0
    for html_file in HTML.rglob("*.html"):
        html = html_file.read_text(encoding="utf-8")
        assert "cdn.plot.ly" not in html, html_file
        assert "application/vnd.plotly" not in html, html_file
        has_figure = "plotly-graph-div" in html
        loads_plotly = re.search(r'<script src="[./]*_static/plotly\.min\.js', html) is not None
        assert has_figure == loads_plotly, html_file  # only where needed, always where needed
        with_figures += has_figure
    assert with_figures >= 1


def test_introduction_has_the_token_visualizer(build_log):
    # (its one plotly figure, the context window, moved to chapter 08: the plotly figures of
    # every page are drawn offline in test_every_plotly_figure_is_drawn_offline)
    html = page("notebooks/00_introduction")
    assert re.search(r"class=\"tkv-[0-9a-f]{10}\"", html)  # the token visualizer


def test_exercises_render_statement_stub_and_solution_from_the_package(build_log):
    html = page("notebooks/00_introduction")
    statements = re.findall(r'<div class="exercise admonition" id="([^"]+)">', html)
    assert statements, "no exercise block on the page"
    # each solution, from its dropdown up to the end of its code block
    solutions = re.findall(r'<div class="solution dropdown admonition".*?</pre>', html, re.S)
    assert len(solutions) == len(statements)
    assert html.count("tag_exercise-stub") == len(statements)
    assert "NotImplementedError" in html
    # The dropdown holds the package's code, e.g. the reference merge's overlap handling.
    texts = [html_lib.unescape(re.sub(r"<[^>]+>", "", s)) for s in solutions]
    merge_solution = next(t for t in texts if "def merge(ids" in t)
    assert "i += 2" in merge_solution


@pytest.fixture(scope="session")
def chromium() -> str:
    """The browser, or a skip (a failure under CI=true: CI must look at the rendered pages)."""
    if CHROMIUM is None:
        missing_tool("chromium not installed (apt-get install chromium; .ci/run does it)")
    return CHROMIUM


def headless_chromium(
    url: str,
    profile: Path,
    *extra: str,
    budget: int = 15_000,
    timeout: int = 180,
    binary: str | None = None,
) -> str:
    """Headless Chromium on ``url`` with no network at all; its stdout (the DOM with
    ``--dump-dom``). ``budget``: milliseconds of virtual time the page's scripts get."""
    cmd = [
        binary or CHROMIUM or "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--virtual-time-budget={budget}",
        *extra,
        url,
    ]
    if shutil.which("unshare"):  # a private network namespace: the page truly has no network
        cmd = ["unshare", "--net", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout


def offline_dom(chromium: str, html_file: Path, profile: Path) -> str:
    """The page's DOM after headless Chromium ran its scripts, with no network at all."""
    return headless_chromium(html_file.as_uri(), profile, "--dump-dom", binary=chromium)


def test_introduction_renders_offline_in_a_browser(chromium, build_log, tmp_path):
    """The token visualizer shows, solutions are collapsed."""
    dom = offline_dom(chromium, HTML / "notebooks" / "00_introduction.html", tmp_path)
    assert re.search(r"class=\"tkv-[0-9a-f]{10}\"", dom), "token visualizer missing"
    assert dom.count(' title="') > 100  # token spans with their ids on hover
    # Solutions start collapsed (sphinx-togglebutton ran) and open on a click.
    solutions = re.findall(r'<div class="solution dropdown admonition([^"]*)"', dom)
    assert solutions and all("toggle-hidden" in classes for classes in solutions)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_plotly_figure_is_drawn_offline(chromium, build_log, path, tmp_path):
    html_file = HTML / "notebooks" / f"{path.stem}.html"
    figures = re.findall(r'<div id="([^"]+)" class="plotly-graph-div"', html_file.read_text())
    if not figures:
        pytest.skip("no plotly figure on this page")
    dom = offline_dom(chromium, html_file, tmp_path)
    # plotly marks a div it has drawn into with the class js-plotly-plot
    undrawn = [f for f in figures if f'id="{f}" class="plotly-graph-div js-plotly-plot"' not in dom]
    assert not undrawn, f"{len(undrawn)} of {len(figures)} figures were not drawn"


def test_the_build_executes_nothing_after_the_prebuild(build_log):
    """tools/prebuild.py ran every chapter into the cache, so the build itself ran none. The
    front pages (book/*.md notebooks with ``execution_mode: force``) run at every build, by
    design, whenever Sphinx reads them: they read their numbers from files the cache's key does
    not see (tools/pages.py)."""
    assert "prebuild: " in build_log
    assert "FAILED" not in build_log
    executed = [line for line in build_log.splitlines() if "Executing notebook" in line]
    assert all("/book/" in line for line in executed), executed


def test_unchanged_chapters_are_not_re_executed(build_log):
    """After a build every chapter is in the execution cache: the prebuild finds them all there
    and runs none (the build itself then runs none: the test above)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "prebuild.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    n = len(NOTEBOOKS)
    assert f"prebuild: {n} of {n} chapters already in the execution cache" in result.stdout
    assert "executed in" not in result.stdout


def test_executed_copies_hold_each_stream_once(build_log):
    """The copies in _build/jupyter_execute hold the outputs (every chapter comes from the
    execution cache), each stream's text once (book/_ext explains both)."""
    for path in NOTEBOOKS:
        executed = nbformat.read(ROOT / "_build" / "jupyter_execute" / "notebooks" / path.name, 4)
        code = [c for c in executed.cells if c.cell_type == "code"]
        with_output = [c for c in code if c.get("outputs")]
        assert len(with_output) > len(code) / 2, f"{path.name}: {len(with_output)} of {len(code)}"
        for i, cell in enumerate(executed.cells):
            streams = [o for o in cell.get("outputs", []) if o.output_type == "stream"]
            for k, later in enumerate(streams):
                for earlier in streams[:k]:
                    repeated = later.name == earlier.name and later.text.strip() in earlier.text
                    assert not (later.text.strip() and repeated), (path.name, i, earlier.text)
