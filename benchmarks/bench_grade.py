"""How long ``python -m tokcourse.grade`` takes for a class of 100 notebooks.

    python benchmarks/bench_grade.py            # writes benchmarks/grade.json

The class is made from the student edition (``tools/student.py``), seeded: 100 notebooks, the
chapters in turn, each exercise answered with the course's solution (half of them), with a
catalogued wrong answer of ``tests/exercise_bugs.py`` (three in ten) or left untouched. It is
graded with one job and with two, on this machine; the file records the wall time of each,
seconds per notebook, and that both runs gave the same rows.
"""

from __future__ import annotations

import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests._submissions import answer_source, submit  # noqa: E402
from tests.exercise_bugs import BUGS  # noqa: E402
from tokcourse import check  # noqa: E402
from tokcourse.course import grader  # noqa: E402
from tokcourse.course.chapters import CHAPTERS  # noqa: E402
from tools import student  # noqa: E402

N = 100


def make_class(folder: Path) -> None:
    rng = random.Random(0)
    editions = {p.name[:2]: p for p in student.write_all(folder / "editions")}
    for i in range(N):
        ch = CHAPTERS[i % len(CHAPTERS)]
        answers = {}
        for ex in ch.exercises:
            roll = rng.random()
            bugs = [b for b in BUGS if b.exercise == ex]
            if roll < 0.5:
                answers[ex] = answer_source(check.exercise(ex).shown, ex)
            elif roll < 0.8 and bugs:
                answers[ex] = answer_source(rng.choice(bugs).fn, ex)
        submit(editions[ch.number], folder / "class" / f"student{i:03d}-{ch.filename}", answers)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_class(folder)
        runs = {}
        rows = {}
        for jobs in (1, 2):
            start = time.perf_counter()
            rows[jobs] = grader.grade([folder / "class"], grader.Limits(), jobs)
            runs[jobs] = time.perf_counter() - start
    same = [r.as_dict() for r in rows[1]] == [r.as_dict() for r in rows[2]]
    counts = {s: sum(r.status == s for r in rows[2]) for s in grader.STATUSES}
    result = {
        "notebooks": N,
        "rows": len(rows[2]),
        "statuses": counts,
        "seconds": {f"jobs={j}": round(t, 1) for j, t in runs.items()},
        "seconds_per_notebook": {f"jobs={j}": round(t / N, 2) for j, t in runs.items()},
        "same_rows_both_runs": same,
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        },
        "date": time.strftime("%Y-%m-%d"),
    }
    (Path(__file__).parent / "grade.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
