"""Execute the chapters into the book's execution cache, several at a time.

    python tools/prebuild.py            # one chapter per core
    python tools/prebuild.py --jobs 1   # one after another

``jupyter-book build`` (``execute_notebooks: cache`` in ``_config.yml``) runs every chapter
whose code is not in ``_build/.jupyter_cache`` yet, but one chapter after another. This tool
runs those same chapters first, in parallel, exactly as the build would (same kernel, the
chapter's folder as working directory, the timeout of ``_config.yml``, errors not allowed, the
environment the book's extension sets), and
stores each result in the cache the way the build does. The build then finds every chapter
there and executes nothing. A chapter that fails here is left out of the cache: the build runs
it again and reports the error in its usual way. ``make book`` and the test suite's book build
call this first.

A chapter with a cell tagged ``timed`` prints timings. It runs after the others, alone, so no
other chapter competes with it for the CPU (its timings are CPU seconds of its own process as
well, ``tokcourse.course.timing``, so that a test run beside it cannot inflate them either).
"""

from __future__ import annotations

import argparse
import os
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
        return path, None, result.time, result.exc_string or repr(result.err)
    return path, nb, result.time, ""


def _store(cache, outcome, done: int, total: int, *, alone: bool) -> list[str]:
    """Put one executed chapter into the cache as myst-nb's cache mode would; [name] if failed."""
    from jupyter_cache.base import CacheBundleIn

    path, executed, seconds, error = outcome
    name = Path(path).stem
    if executed is None:
        last = error.strip().splitlines()[-1:] or ["?"]
        print(f"[{done}/{total}] {name}: FAILED after {seconds:.1f} s: {last[0]}")
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
    parser.add_argument("only", nargs="*", type=Path, help="these chapters only (default: all)")
    args = parser.parse_args(argv)
    wanted = {p.resolve() for p in args.only}
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")

    from jupyter_cache import get_cache

    from tokcourse.course.plotting import BOOK_BUILD_ENV

    # What the book's extension sets before any chapter runs (book/_ext): the kernels inherit it
    # and draw plotly figures as the static page needs them. The cache key does not see it.
    os.environ[BOOK_BUILD_ENV] = "1"

    CACHE.parent.mkdir(exist_ok=True)
    cache = get_cache(str(CACHE))
    todo = []
    for path in chapters():
        if wanted and path.resolve() not in wanted:
            continue
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            todo.append(path)
    total = len(wanted) if wanted else len(chapters())
    print(f"prebuild: {total - len(todo)} of {total} chapters already in the execution cache")
    if not todo:
        return 0

    start, failed = time.perf_counter(), []
    timed = [p for p in todo if is_timed(p)]
    shared = [p for p in todo if p not in timed]
    # the chapters that print no timings share the cores; each timed one then runs alone
    batches = [(shared, args.jobs, False)] + [([p], 1, True) for p in timed]
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
    print(f"prebuild: {ran} chapter{'s' * (ran != 1)} in {elapsed:.0f} s with {args.jobs} jobs")
    if failed:
        print(f"prebuild: left for the build to run and report: {', '.join(failed)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
