"""Execute the chapters into the book's execution cache, several at a time.

    python tools/prebuild.py            # one chapter per core
    python tools/prebuild.py --jobs 1   # one after another

``jupyter-book build`` (``execute_notebooks: cache`` in ``_config.yml``) runs every chapter
whose code is not in ``_build/.jupyter_cache`` yet, but one chapter after another. This tool
runs those same chapters first, in parallel, exactly as the build would (same kernel, the
chapter's folder as working directory, the timeout of ``_config.yml``, errors not allowed, the
environment the book's extension sets), and
stores each result in the cache the way the build does. The build then finds every chapter
there and executes nothing. ``make book`` and the test suite's book build call this first.

A chapter that fails stops the build here, once: the report names the chapter, the failing cell
(its number, its lines, the line that raised marked) and the error; a guard written with
``tokcourse.course.prose.claim`` quotes the sentence of the page it backs. The exit status is 1
and ``make book`` does not go on to run the chapter a second time inside Sphinx.

A chapter with a cell tagged ``timed`` prints timings. It runs after the others, alone, so no
other chapter competes with it for the CPU (its timings are CPU seconds of its own process as
well, ``tokcourse.course.timing``, so that a test run beside it cannot inflate them either).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "_build" / ".jupyter_cache"


def chapters(root: Path = ROOT) -> list[Path]:
    """The notebooks the book's table of contents lists, in book order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    found: list[Path] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            file = node.get("file")
            if isinstance(file, str) and (root / f"{file}.ipynb").is_file():
                found.append(root / f"{file}.ipynb")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return found


TIMED = "timed"


def is_timed(path: Path) -> bool:
    """Whether a chapter prints timings: a cell of it is tagged ``timed``."""
    nb = nbformat.read(path, as_version=4)
    return any(TIMED in cell.metadata.get("tags", []) for cell in nb.cells)


def timeout_seconds(root: Path = ROOT) -> int:
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return int(config.get("execute", {}).get("timeout", 600))


def _execute(path: str, timeout: int) -> tuple[str, nbformat.NotebookNode | None, float, str]:
    """Run one chapter as the build's cache mode does; (path, executed or None, seconds, error)."""
    from jupyter_cache.executors.utils import single_nb_execution

    nb = nbformat.read(path, as_version=4)
    result = single_nb_execution(
        nb, cwd=str(Path(path).parent), allow_errors=False, timeout=timeout, meta_override=True
    )
    if result.err is not None:
        return path, None, result.time, failure_report(path, nb, result.err)
    return path, nb, result.time, ""


ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: Lines of a long failing cell shown on each side of the line that raised.
CONTEXT = 6


def failure_report(path: str | Path, executed: nbformat.NotebookNode, err: BaseException) -> str:
    """What a reader of the build log needs: chapter, cell, the failing line, the error.

    ``executed`` is the notebook as far as it ran (its failing cell holds the error output).
    """
    chapter = Path(path)
    try:
        chapter = chapter.resolve().relative_to(ROOT)
    except ValueError:
        pass
    code_cells = [c for c in executed.cells if c.cell_type == "code"]
    failing = [
        (number, cell, output)
        for number, cell in enumerate(code_cells, start=1)
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    if not failing:  # no cell holds the error (a timeout, a dead kernel): say what nbclient said
        text = ANSI.sub("", str(err)).strip().splitlines()
        return f"{chapter} failed: " + (text[-1] if text else type(err).__name__)
    number, cell, error = failing[0]
    frames = "\n".join(ANSI.sub("", line) for line in error.get("traceback", []))
    # IPython names the cell's own frame "Cell In[7], line 4": the first such frame is the
    # line of the cell that raised (later frames are inside the functions it called)
    where = re.search(r"Cell In\[\d+\], line (\d+)", frames)
    bad = int(where.group(1)) if where else None
    lines = cell.source.splitlines()
    first, last = 1, len(lines)
    if bad is not None and len(lines) > 2 * CONTEXT + 1:
        first, last = max(1, bad - CONTEXT), min(len(lines), bad + CONTEXT)
    at = f", line {bad}" if bad is not None else ""
    out = [f"{chapter} failed in code cell {number} of {len(code_cells)}{at}:"]
    if first > 1:
        out.append("      | ...")
    for i in range(first, last + 1):
        mark = "-->" if i == bad else "   "
        out.append(f"  {mark} {i:3d} | {lines[i - 1]}")
    if last < len(lines):
        out.append("      | ...")
    evalue = error.get("evalue", "")
    out.append(f"{error.get('ename', 'Error')}: {evalue}" if evalue else error.get("ename", ""))
    if error.get("ename") == "ClaimFailed":
        out.append("The computation no longer supports that sentence of the page: fix the "
                   "chapter's code or rewrite the sentence.")  # fmt: skip
    return "\n".join(out)


def _store(cache, outcome, done: int, total: int, *, alone: bool) -> list[str]:
    """Put one executed chapter into the cache as myst-nb's cache mode would; [name] if failed."""
    from jupyter_cache.base import CacheBundleIn

    path, executed, seconds, error = outcome
    name = Path(path).stem
    if executed is None:
        print(f"[{done}/{total}] {name}: FAILED after {seconds:.1f} s", flush=True)
        print(error, "\n", sep="", flush=True)
        return [name]
    record = cache.add_nb_to_project(path)
    cache.cache_notebook_bundle(
        CacheBundleIn(executed, record.uri, data={"execution_seconds": seconds}),
        check_validity=False,
        overwrite=True,
    )
    how = " (alone: it prints timings)" if alone else ""
    print(f"[{done}/{total}] {name}: executed in {seconds:.1f} s{how}", flush=True)
    return []


def cached_outputs(path: Path) -> nbformat.NotebookNode | None:
    """The chapter at ``path`` with the outputs of its run in the cache, or None if not there."""
    from jupyter_cache import get_cache

    if not CACHE.is_dir():
        return None
    try:
        _, merged = get_cache(str(CACHE)).merge_match_into_notebook(
            nbformat.read(path, as_version=4)
        )
    except KeyError:
        return None
    return merged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="chapters at once")
    parser.add_argument(
        "only",
        nargs="*",
        type=Path,
        help="these notebooks only (default: every chapter of _toc.yml)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")

    from tokcourse.course.plotting import BOOK_BUILD_ENV

    # What the book's extension sets before any chapter runs (book/_ext): the kernels inherit it
    # and draw plotly figures as the static page needs them. The cache key does not see it.
    # Restored afterwards: the student edition's tool calls this in its own process.
    before = os.environ.get(BOOK_BUILD_ENV)
    os.environ[BOOK_BUILD_ENV] = "1"
    try:
        return _prebuild(args.only, args.jobs)
    finally:
        if before is None:
            del os.environ[BOOK_BUILD_ENV]
        else:
            os.environ[BOOK_BUILD_ENV] = before


def _prebuild(only: list[Path], jobs_wanted: int) -> int:
    from jupyter_cache import get_cache

    CACHE.parent.mkdir(exist_ok=True)
    cache = get_cache(str(CACHE))
    todo = []
    for path in [Path(p) for p in only] or chapters():
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            todo.append(path)
    total = len(only) or len(chapters())
    print(f"prebuild: {total - len(todo)} of {total} chapters already in the execution cache")
    if not todo:
        return 0

    start, failed = time.perf_counter(), []
    timed = [p for p in todo if is_timed(p)]
    shared = [p for p in todo if p not in timed]
    # the chapters that print no timings share the cores; each timed one then runs alone
    batches = [(shared, jobs_wanted, False)] + [([p], 1, True) for p in timed]
    done = 0
    for batch, jobs, alone in batches:
        if not batch:
            continue
        with ProcessPoolExecutor(max_workers=min(jobs, len(batch))) as pool:
            futures = [pool.submit(_execute, str(p), timeout_seconds()) for p in batch]
            for future in as_completed(futures):
                done += 1
                failed += _store(cache, future.result(), done, len(todo), alone=alone)
    elapsed = time.perf_counter() - start
    ran = len(todo) - len(failed)
    print(f"prebuild: {ran} chapter{'s' * (ran != 1)} in {elapsed:.0f} s with {jobs_wanted} jobs")
    if failed:
        print(
            f"prebuild: {', '.join(failed)} failed (above); nothing was built. Fix "
            f"{'it' if len(failed) == 1 else 'them'} and run `make book` again."
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
