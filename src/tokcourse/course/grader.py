"""Grade a class: the course's checks run on each student's own code, one table for all.

    python -m tokcourse.grade PATH... --out report.csv [--timeout SECONDS] [--jobs N]
                              [--json [FILE]]

PATH is any mix of submitted notebooks and folders of them (searched recursively for
``*.ipynb``). The report has one row per exercise of each submission's chapter::

    submission,chapter,exercise,status,detail
    class/ana.ipynb,03,encode,failed,"encode('aa', {(97, 97): 256}); expected: [256]; got: …"

``status`` is ``passed``, ``failed``, ``not attempted`` or ``error`` and ``detail`` the check's
own one-line reason (:mod:`tokcourse.course.grading` says which is which). ``--out`` ending in
``.json`` writes JSON instead of CSV; ``--json`` also writes the rows as JSON, to FILE or, with
no FILE, to standard output; ``--totals FILE`` a CSV with one row per submission (how many of
its exercises passed, failed, were not attempted, had an error). A summary per exercise (how
many passed, the commonest failing input) closes the run.

Nothing is taken from a notebook's saved outputs. Each submission runs in its own process
(``python -m tokcourse.course.grading``) from a scratch folder, with a memory limit, a size limit
on the files it writes, its output discarded, a time limit per exercise (``--timeout``) and one
for the whole notebook, and a private copy of the tokcourse package, hashed before and after: a
submission that loops, exits, crashes or changes the course's files gets ``error`` or
``failed`` rows saying so, and every other submission is graded as usual.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tokcourse.course.chapters import CHAPTERS
from tokcourse.course.submission import NotANotebook, identify, read_notebook

HEADER = ("submission", "chapter", "exercise", "status", "detail")
STATUSES = ("passed", "failed", "not attempted", "error")
POLL = 0.05


@dataclass
class Row:
    submission: str
    chapter: str
    exercise: str
    status: str
    detail: str
    input: str = ""

    def as_dict(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in HEADER}


@dataclass
class Limits:
    timeout: float = 60.0  # seconds per exercise
    notebook_timeout: float = 600.0
    memory_mb: int = 3072
    file_mb: int = 16


@dataclass
class _Slot:
    """One worker's private copy of the package (a submission may damage its own copy only)."""

    root: Path
    digest: str = ""


def _digest(package: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.relative_to(package).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


def _package_source() -> Path:
    import tokcourse

    return Path(tokcourse.__file__).resolve().parent


def _fresh_copy(slot: _Slot) -> None:
    target = slot.root / "tokcourse"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(_package_source(), target)  # keeps mtimes: the compiled modules stay valid
    slot.digest = _digest(target)


def find_submissions(paths: list[Path]) -> list[Path]:
    """Every notebook named or inside a named folder, each once, in a stable order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                p for p in path.rglob("*.ipynb")
                if p.is_file() and ".ipynb_checkpoints" not in p.parts
            )  # fmt: skip
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    unique = list(dict.fromkeys(found))
    return unique


def grade_one(path: Path, slot: _Slot, limits: Limits) -> list[Row]:
    """The rows of one submission."""
    name = str(path)
    try:
        nb = read_notebook(path)
    except NotANotebook as err:
        ch, _ = identify({"cells": []}, path.name)
        if ch is None:
            return [Row(name, "", "", "error", str(err))]
        return [Row(name, ch.number, ex, "error", str(err)) for ex in ch.exercises]
    ch, how = identify(nb, path.name)
    if ch is None:
        return [Row(name, "", "", "error", how)]
    results = _run_worker(path, ch.exercises, slot, limits)  # the slot is this thread's alone
    damaged = _digest(slot.root / "tokcourse") != slot.digest
    if damaged:
        _fresh_copy(slot)
    rows = []
    for ex in ch.exercises:
        status, detail, failing = results.get(ex, ("error", "not graded", ""))
        if damaged and status == "passed":
            status, detail = "failed", "the notebook changes the course's files: not graded"
        rows.append(Row(name, ch.number, ex, status, detail, failing))
    return rows


def _run_worker(
    path: Path, exercises: tuple[str, ...], slot: _Slot, limits: Limits
) -> dict[str, tuple[str, str, str]]:
    """Run the worker until every exercise has a result, starting it again after a time-out or
    a crash: without the exercise being checked then, or the top-level statement running then
    (which the next run skips, and reports in the rows of its cell's exercises)."""
    results: dict[str, tuple[str, str, str]] = {}
    deadline = time.monotonic() + limits.notebook_timeout
    todo, skip = list(exercises), []
    for _ in range(len(exercises) + 5):
        if not todo:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            break
        context = {
            "use_reference": [ex for ex, (status, _, _) in results.items() if status != "passed"],
            "skip": skip,
        }
        got, stopped = _one_run(path, todo, exercises, slot, limits, left, context)
        results.update(got)
        todo = [ex for ex in todo if ex not in results]
        if not stopped or not todo:
            continue
        current, why, statement = stopped
        if current in todo:
            results[current] = ("error", why, "")
            todo.remove(current)
        elif statement is not None:  # a statement of a student's cell ended the run
            skip.append([*statement, why.replace("while running the notebook's definitions", "")])
        else:  # stopped before any check started, for no statement of the student's
            for ex in todo:
                results[ex] = ("error", why, "")
            todo = []
    for ex in todo:
        why = f"the notebook's time limit ({limits.notebook_timeout:g} s) ran out"
        results[ex] = ("error", why, "")
    return results


def _one_run(path, todo, exercises, slot, limits, left, context):
    with tempfile.TemporaryDirectory(prefix="tokcourse-grade-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        results_file = Path(tmp) / "results.jsonl"
        results_file.touch()
        job = {
            "notebook": str(path.resolve()),
            "exercises": todo,
            "chapter_exercises": list(exercises),
            "results": str(results_file),
            "workdir": str(work),
            "package": str(slot.root),
            "memory_mb": limits.memory_mb,
            "file_mb": limits.file_mb,
            "statement_seconds": min(10.0, limits.timeout / 2),
            "check_seconds": min(10.0, limits.timeout / 2),
            **context,
        }
        job_file = Path(tmp) / "job.json"
        job_file.write_text(json.dumps(job), encoding="utf-8")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(slot.root), os.environ.get("PYTHONPATH", "")]),
            "PYTHONDONTWRITEBYTECODE": "1",
            # the same report every time: a student's set-order-dependent code too
            "PYTHONHASHSEED": "0",
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MPLBACKEND": "Agg",
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "tokcourse.course.grading", str(job_file)],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        got: dict[str, tuple[str, str, str]] = {}
        current, started, stopped, statement = "", time.monotonic(), None, None
        run_deadline = time.monotonic() + left
        offset = 0
        while True:
            finished = proc.poll() is not None
            offset, events = _read_events(results_file, offset)
            for event in events:
                kind = event.get("event")
                if kind == "start":
                    current, started, statement = event.get("exercise", ""), time.monotonic(), None
                elif kind == "statement":
                    statement = (event.get("cell"), event.get("line"))
                elif kind == "result" and event.get("exercise") in todo:
                    got[event["exercise"]] = (
                        str(event.get("status")),
                        str(event.get("detail", "")),
                        str(event.get("input", "")),
                    )
            if finished:
                done = {ex for ex in todo if ex in got}
                if not stopped and (proc.returncode != 0 or len(done) < len(todo)):
                    stopped = (current, _death(proc.returncode, current), statement)
                break
            now = time.monotonic()
            if now - started > limits.timeout or now > run_deadline:
                what = f"checking {current}" if current else "running the notebook's definitions"
                over = limits.timeout if now - started > limits.timeout else left
                stopped = (current, f"timed out after {over:g} s while {what}", statement)
                _kill(proc)
                continue
            time.sleep(POLL)
        return got, stopped


def _death(code: int, current: str) -> str:
    what = f"while checking {current}" if current else "while running the notebook's definitions"
    if code < 0:
        import signal

        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else code
        return f"the grading process was killed by {name} {what} (memory limit?)"
    return f"the submission ended the grading process (exit code {code}) {what}"


def _kill(proc: subprocess.Popen) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _read_events(path: Path, offset: int) -> tuple[int, list[dict]]:
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read(1 << 20)
    end = data.rfind(b"\n") + 1
    events = []
    for line in data[:end].splitlines():
        try:
            event = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(event, dict):
            events.append(event)
    return offset + end, events


def grade(paths: list[Path], limits: Limits, jobs: int, progress: bool = False) -> list[Row]:
    """Grade every submission in ``paths``; rows in submission order, then chapter order."""
    submissions = find_submissions(paths)
    rows: dict[Path, list[Row]] = {}
    with tempfile.TemporaryDirectory(prefix="tokcourse-packages-") as tmp:
        slots = [_Slot(Path(tmp) / f"slot{i}") for i in range(max(1, jobs))]
        for slot in slots:
            slot.root.mkdir()
            _fresh_copy(slot)
        free = list(slots)
        free_lock = threading.Lock()

        def work(path: Path) -> list[Row]:
            with free_lock:
                slot = free.pop()
            try:
                return grade_one(path, slot, limits)
            finally:
                with free_lock:
                    free.append(slot)

        bar = _progress(len(submissions)) if progress else None
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(work, p): p for p in submissions}
            for future in futures:
                rows[futures[future]] = future.result()
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
    return [row for p in submissions for row in rows[p]]


def _progress(total: int):
    from tqdm import tqdm

    return tqdm(total=total, unit="notebook", desc="grading", file=sys.stderr)


def write_csv(rows: list[Row], target: io.TextIOBase) -> None:
    writer = csv.writer(target, lineterminator="\n")
    writer.writerow(HEADER)
    for row in rows:
        writer.writerow([getattr(row, k) for k in HEADER])


def write_totals(rows: list[Row], target: io.TextIOBase) -> None:
    """One row per submission: its chapter, then how many of its exercises have each status."""
    writer = csv.writer(target, lineterminator="\n")
    writer.writerow(["submission", "chapter", *STATUSES, "exercises"])
    by_submission: dict[str, list[Row]] = {}
    for row in rows:
        by_submission.setdefault(row.submission, []).append(row)
    for submission, group in by_submission.items():
        graded = [r for r in group if r.exercise]
        counts = [sum(r.status == s for r in graded) for s in STATUSES]
        writer.writerow([submission, group[0].chapter, *counts, len(graded)])


def as_json(rows: list[Row]) -> str:
    return json.dumps([r.as_dict() | ({"input": r.input} if r.input else {}) for r in rows],
                      ensure_ascii=False, indent=1)  # fmt: skip


def summary(rows: list[Row]) -> str:
    """A table: per exercise, how many of each status, and the commonest failing input."""
    by_exercise: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.exercise:
            by_exercise.setdefault((row.chapter, row.exercise), []).append(row)
    lines = [f"{'chapter':<8}{'exercise':<24}{'passed':>7}{'failed':>7}{'not att.':>9}{'error':>6}"
             "  commonest failing input"]  # fmt: skip
    for (chapter, exercise), group in sorted(by_exercise.items(), key=_book_order):
        counts = Counter(r.status for r in group)
        inputs = Counter(r.input for r in group if r.status == "failed" and r.input)
        common = ""
        if inputs:
            text, n = inputs.most_common(1)[0]
            common = f"{text[:60]} ({n}×)"
        lines.append(
            f"{chapter:<8}{exercise:<24}{counts['passed']:>7}{counts['failed']:>7}"
            f"{counts['not attempted']:>9}{counts['error']:>6}  {common}"
        )
    unknown = [r for r in rows if not r.exercise]
    if unknown:
        lines.append(f"{len(unknown)} file(s) not graded: not a notebook of a chapter")
    return "\n".join(lines)


def _book_order(item) -> tuple[int, int]:
    (chapter, exercise), _ = item
    for i, ch in enumerate(CHAPTERS):
        if exercise in ch.exercises:
            return i, ch.exercises.index(exercise)
    return len(CHAPTERS), 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tokcourse.grade",
        description="Grade submitted chapter notebooks with the course's checks.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="submitted notebooks, or folders of them")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True,
                        help="the report: CSV, or JSON if it ends in .json")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=Limits.timeout, metavar="SECONDS",
                        help="time limit per exercise (default %(default)g)")  # fmt: skip
    parser.add_argument("--notebook-timeout", type=float, default=None, metavar="SECONDS",
                        help="time limit per notebook (default 10 times --timeout)")  # fmt: skip
    parser.add_argument("--memory", type=int, default=Limits.memory_mb, metavar="MB",
                        help="memory limit per submission (default %(default)d)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="submissions graded at once (default: one per core)")  # fmt: skip
    parser.add_argument("--totals", type=Path, default=None, metavar="FILE",
                        help="also a CSV with one row per submission: its counts")  # fmt: skip
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE",
                        help="also write the rows as JSON, to FILE or standard output")  # fmt: skip
    args = parser.parse_args(argv)
    if args.timeout <= 0 or args.jobs < 1 or args.memory < 256:
        parser.error("--timeout must be positive, --jobs at least 1, --memory at least 256")
    limits = Limits(
        timeout=args.timeout,
        notebook_timeout=args.notebook_timeout or 10 * args.timeout,
        memory_mb=args.memory,
    )
    try:
        rows = grade(args.paths, limits, args.jobs, progress=sys.stderr.isatty())
    except FileNotFoundError as err:
        parser.error(str(err))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8", newline="") as f:
        if args.out.suffix.lower() == ".json":
            f.write(as_json(rows) + "\n")
        else:
            write_csv(rows, f)
    if args.totals:
        with args.totals.open("w", encoding="utf-8", newline="") as f:
            write_totals(rows, f)
    to_stdout = args.json == "-"
    if args.json and not to_stdout:
        Path(args.json).write_text(as_json(rows) + "\n", encoding="utf-8")
    elif to_stdout:
        print(as_json(rows))
    report = sys.stderr if to_stdout else sys.stdout
    n = len({r.submission for r in rows})
    print(summary(rows), file=report)
    print(f"\n{n} submission(s), {len(rows)} row(s) -> {args.out}", file=report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
