"""``python -m tokcourse.grade``: a class graded with the course's checks, on each student's code.

One class is made from the student edition (``tests/_submissions.py``) and graded once, with two
jobs: for every chapter an untouched notebook and one with every course solution; every
catalogued wrong answer of ``tests/exercise_bugs.py`` (several chapters' bugs share a notebook,
one bug per exercise); and the hostile submissions of :data:`HOSTILE`. Then:

* every solution passes, every untouched stub is "not attempted", every catalogued bug fails,
  with the failing input the check itself reports for it (the grader agrees with the checks);
* each hostile submission gets the status and reason it should, and the good notebooks graded
  beside it are graded as usual;
* :func:`assert_verdicts` (which all of the above use) rejects a grader that trusts the outputs
  saved in the notebooks: shown on such a grader, with outputs a student could forge.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests._submissions import answer_source, stub_index, submit
from tests.conftest import NOTEBOOKS, ROOT
from tests.exercise_bugs import BUGS
from tokcourse import check
from tokcourse.course import grader
from tokcourse.course.chapters import CHAPTERS, chapter
from tokcourse.course.exercises import run_check
from tools import student

pytestmark = pytest.mark.notebooks

GRADED = {ex for ch in CHAPTERS for ex in ch.exercises}
FAILED_KINDS = {"failed", "wrong type", "mutated", "violation", "stuck", "error"}
FAILED_KINDS |= {"message", "order"}  # a message naming the wrong thing, an order-bound answer


def test_the_chapter_table_is_the_notebooks():
    found = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        stubs = [c for c in nb.cells if "exercise-stub" in c.metadata.get("tags", [])]
        names = tuple(next(line.split("(")[0][4:] for line in c.source.splitlines()
                           if line.startswith("def ")) for c in stubs)  # fmt: skip
        found.append((path.name, names))
    assert found == [(ch.filename, ch.exercises) for ch in CHAPTERS]


def solution(name: str) -> str:
    return answer_source(check.exercise(name).shown, name)


def below(code: str, name: str) -> str:
    """``code``, then the solution of ``name`` (whose ``__future__`` import could only be first,
    as Jupyter says too)."""
    return code + solution(name).replace("from __future__ import annotations\n", "")


# --- hostile submissions: (file, chapter, {exercise: code}) and what each must get -------------

LOOP_IN_FUNCTION = "def get_stats(ids):\n    while True:\n        pass\n"
HOSTILE = {
    "loops_at_top.ipynb": ("00", {"get_stats": below("while True:\n    pass\n", "get_stats")}),
    "loops_in_function.ipynb": ("00", {"get_stats": LOOP_IN_FUNCTION}),
    "exits_at_top.ipynb": ("00", {"get_stats": "import sys\nsys.exit(3)\n"}),
    "exits_in_function.ipynb": (
        "00",
        {"get_stats": "import sys\n\ndef get_stats(ids):\n    sys.exit(0)\n"},
    ),
    "os_exit_in_function.ipynb": (
        "00",
        {
            "get_stats": "import os\n\ndef get_stats(ids):\n    os._exit(0)\n",
        },
    ),
    "os_exit_at_top.ipynb": ("00", {"merge": "import os\nos._exit(1)\n"}),
    "prints_50mb.ipynb": (
        "00",
        {
            "get_stats": "print('x' * 50_000_000)\n\ndef get_stats(ids):\n"
            "    print('y' * 1_000_000)\n    counts = {}\n    for pair in zip(ids, ids[1:]):\n"
            "        counts[pair] = counts.get(pair, 0) + 1\n    return counts\n",
        },
    ),
    "eats_memory.ipynb": (
        "00",
        {
            "get_stats": "def get_stats(ids):\n    return [0] * 10**10\n",
        },
    ),
    "hands_in_the_course_function.ipynb": ("03", {"encode": "from tokcourse.bpe import encode\n"}),
    "wraps_the_course_function.ipynb": (
        "03",
        {
            "encode": "from tokcourse import bpe\n\ndef encode(text, merges):\n"
            "    return list(bpe.encode(text, merges))\n",
        },
    ),
    "patches_the_check.ipynb": (
        "03",
        {
            "count_spellings": "import tokcourse.course.exercises as e\n"
            "e._judge = lambda *args: None\n\ndef count_spellings(text, merges):\n    return 0\n",
        },
    ),
    "patches_the_reference.ipynb": (
        "03",
        {
            "count_spellings": "import tokcourse.bpe\n\ndef count_spellings(text, merges):\n"
            "    return 0\n\ntokcourse.bpe.count_spellings = count_spellings\n",
        },
    ),
    "patches_a_builtin.ipynb": (
        "03",
        {
            "count_spellings": below(
                "import builtins\nbuiltins.isinstance = lambda *a: True\n", "count_spellings"
            ),
        },
    ),
    "changes_the_package_files.ipynb": (
        "00",
        {
            "merge": below(
                "import pathlib, tokcourse.bpe\n"
                "pathlib.Path(tokcourse.bpe.__file__).write_text('# gone\\n')\n",
                "merge",
            ),
        },
    ),
    "does_not_compile.ipynb": ("03", {"encode": "def encode(text, merges)\n    return []\n"}),
    "partial_of_the_course_function.ipynb": (
        "03",
        {
            "encode": "import functools\nfrom tokcourse import bpe\n\n"
            "encode = functools.partial(bpe.encode)\n",
        },
    ),
    "course_function_in_a_thread.ipynb": (
        "03",
        {
            "encode": "from concurrent.futures import ThreadPoolExecutor\n"
            "from tokcourse import bpe\n\ndef encode(text, merges):\n"
            "    with ThreadPoolExecutor(1) as pool:\n"
            "        return pool.submit(bpe.encode, text, merges).result()\n",
        },
    ),
    "empties_the_cases.ipynb": (
        "03",
        {
            "count_spellings": "from tokcourse import check\n\n"
            "object.__setattr__(check.exercise('count_spellings'), 'cases', lambda: [])\n\n"
            "def count_spellings(text, merges):\n    return 0\n",
        },
    ),
    "uses_a_chapter_variable.ipynb": (
        "03",
        {
            "count_spellings": "def count_spellings(text, merges):\n    assert novel\n"
            "    return 0\n",
        },
    ),
    "forges_equality.ipynb": (
        "03",
        {
            "decode_stream": "class Anything(str):\n    def __eq__(self, other):\n"
            "        return True\n\n    def __ne__(self, other):\n        return False\n\n"
            "def decode_stream(ids, vocab):\n    yield Anything('')\n",
        },
    ),
    "turns_the_tracer_off.ipynb": (
        "03",
        {
            "encode": "import sys\nfrom tokcourse import bpe\n\ndef encode(text, merges):\n"
            "    p = sys.getprofile()\n    sys.setprofile(None)\n"
            "    try:\n        return bpe.encode(text, merges)\n    finally:\n"
            "        sys.setprofile(p)\n",
        },
    ),
    "course_function_in_a_raw_thread.ipynb": (
        "03",
        {
            "count_spellings": "import _thread, time\nfrom tokcourse import bpe\n\n"
            "def count_spellings(text, merges):\n"
            "    out = []\n    run = lambda: out.append(bpe.count_spellings(text, merges))\n"
            "    _thread.start_new_thread(run, ())\n"
            "    while not out:\n        time.sleep(0.001)\n    return out[0]\n",
        },
    ),
    "late_future_import.ipynb": (
        "03",
        {
            "encode": "x = 1\nfrom __future__ import annotations\n" + solution("encode"),
        },
    ),
    "return_at_the_top.ipynb": (
        "03",
        {
            "count_spellings": solution("count_spellings") + "\nreturn\n",
        },
    ),
    "slow_test_under_a_full_solution.ipynb": (
        "03",
        {
            "encode": solution("encode"),
            "count_spellings": solution("count_spellings").replace(
                "from __future__ import annotations", ""
            )
            + "\nimport time\nwhile True:\n    time.sleep(0.01)\n",
        },
    ),
    "saves_the_profiler_switch.ipynb": (
        "00",
        {
            "merge": "import sys\nfrom tokcourse import bpe\n\nSP = sys.setprofile\n\n"
            "def merge(ids, pair, idx):\n    p = sys.getprofile()\n    SP(None)\n"
            "    try:\n        return bpe.merge(ids, pair, idx)\n    finally:\n        SP(p)\n",
        },
    ),
    "course_function_in_a_child_process.ipynb": (
        "00",
        {
            "merge": "import json, subprocess, sys\n\ndef merge(ids, pair, idx):\n"
            "    code = 'import json, sys; from tokcourse.bpe import merge; '\\\n"
            "        'print(json.dumps(merge(*json.loads(sys.argv[1]))))'\n"
            "    arg = json.dumps([ids, list(pair), idx])\n"
            "    out = subprocess.run([sys.executable, '-c', code, arg], capture_output=True)\n"
            "    return json.loads(out.stdout)\n",
        },
    ),
    "error_before_the_def.ipynb": (
        "00",
        {"merge": "x = 1 / 0\n\n" + LOOP_IN_FUNCTION.replace("get_stats", "merge")},
    ),
    "own_thread_pool.ipynb": (
        "00",
        {
            "get_stats": "from concurrent.futures import ThreadPoolExecutor\n\n"
            "def get_stats(ids):\n    def count():\n        out = {}\n"
            "        for p in zip(ids, ids[1:]):\n            out[p] = out.get(p, 0) + 1\n"
            "        return out\n\n    with ThreadPoolExecutor(1) as pool:\n"
            "        return pool.submit(count).result()\n",
        },
    ),
    "annotation_never_imported.ipynb": (
        "03",
        {
            "count_spellings": "def count_spellings(text: str, merges: Mapping) -> int:\n"
            "    return 0\n",
        },
    ),
}
#: Work in the shapes a class hands in: (chapter, answers, cell above a stub, cell below a check).
COUNT_SPELLINGS = (
    "def count_spellings(text, merges):\n"
    "    data, vocab = text.encode(), build_vocab(merges)\n"
    "    ways = [1] + [0] * len(data)\n"
    "    for i in range(1, len(data) + 1):\n"
    "        for token in vocab.values():\n"
    "            if data.endswith(token, 0, i):\n"
    "                ways[i] += ways[i - len(token)]\n"
    "    return ways[-1]\n"
)
#: A trainer that calls the get_stats and merge of the chapter's cells: chapter 02 checks the
#: ones of chapter 00 again and goes on with the student's, or the course's.
TRAIN_WITH_THE_CHAPTERS_FUNCTIONS = (
    "def train(text, vocab_size, pick=None):\n"
    "    ids, merges = list(text.encode()), {}\n"
    "    vocab = {i: bytes([i]) for i in range(256)}\n"
    "    for idx in range(256, vocab_size):\n"
    "        stats = get_stats(ids)\n"
    "        pair = pick(stats, vocab) if pick else max(stats, key=stats.get)\n"
    "        ids = merge(ids, pair, idx)\n"
    "        merges[pair] = idx\n"
    "        vocab[idx] = vocab[pair[0]] + vocab[pair[1]]\n"
    "    return merges\n"
)
SHAPES = {
    "helper_cell_above.ipynb": ("00",
        {"get_stats": "def get_stats(ids):\n    return dict(Counter(PAIRS(ids)))\n"},
        {"get_stats": "from collections import Counter\n\nPAIRS = lambda ids: zip(ids, ids[1:])\n"},
        {},
    ),
    "wrong_encode_right_count_spellings.ipynb": ("03",
        {"encode": "def encode(text, merges):\n    return []\n",
         "count_spellings": COUNT_SPELLINGS},
        {}, {},
    ),
    "defined_after_the_check.ipynb": ("03", {}, {}, {"count_spellings": COUNT_SPELLINGS}),
    "train_calls_the_rechecked_functions.ipynb": ("02",
        {"train": TRAIN_WITH_THE_CHAPTERS_FUNCTIONS}, {}, {},
    ),
}  # fmt: skip
BROKEN_FILES = {
    "not_json.ipynb": "{ this is not json",
    "not_a_notebook.ipynb": json.dumps([1, 2, 3]),
    "no_chapter.ipynb": json.dumps(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('hello')")])
    ),  # fmt: skip
    "03_encode_decode_broken.ipynb": "\x00\x01 not text",
}


@pytest.fixture(scope="module")
def editions(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("student")
    return {p.name[:2]: p for p in student.write_all(out)}


def make_classroom(
    folder: Path, editions: dict[str, Path], chapters=CHAPTERS, hostile=True, grade=True
):
    """The class's folder, what each file's rows must say, and the rows the grader wrote."""
    expected: dict[tuple[str, str], tuple[str, str]] = {}  # (file, exercise): (status, input)
    for ch in chapters:
        edition = editions[ch.number]
        untouched = submit(edition, folder / "untouched" / ch.filename, {})
        solved = submit(edition, folder / "solved" / f"{ch.number}-all.ipynb",
                        {ex: solution(ex) for ex in ch.exercises})  # fmt: skip
        for ex in ch.exercises:
            expected[str(untouched), ex] = ("not attempted", "")
            expected[str(solved), ex] = ("passed", "")
        bugs = {ex: [b for b in BUGS if b.exercise == ex] for ex in ch.exercises}
        for round_ in range(max(len(v) for v in bugs.values())):
            answers, want = {}, {}
            for ex, found in bugs.items():
                if round_ < len(found):
                    bug = found[round_]
                    verdict = run_check(check.exercise(ex), bug.fn, quiet=True)
                    assert verdict.status in FAILED_KINDS, (bug.id, verdict.status)
                    answers[ex] = answer_source(bug.fn, ex)
                    # a bug bound to a set's order fails in every process, but on inputs
                    # that follow the hash seed: its verdict is compared, not its input
                    shown = verdict.case.call_repr(ex) if verdict.case and not bug.order else ""
                    want[ex] = ("failed", shown)
                else:
                    answers[ex], want[ex] = solution(ex), ("passed", "")
            path = submit(edition, folder / "bugs" / f"{ch.number}-round{round_}.ipynb", answers)
            expected.update({(str(path), ex): v for ex, v in want.items()})
    for name, (number, answers) in HOSTILE.items() if hostile else ():
        submit(editions[number], folder / "hostile" / name, answers)
    for name, (number, answers, before, after) in SHAPES.items() if hostile else ():
        submit(editions[number], folder / "hostile" / name, answers, before, after)
    for name, text in BROKEN_FILES.items() if hostile else ():
        (folder / "hostile" / name).write_text(text, encoding="utf-8")
    if not grade:
        return expected, []
    rows = grader.grade([folder], grader.Limits(timeout=8, notebook_timeout=120), jobs=2)
    return expected, rows


def assert_verdicts(rows, expected) -> None:
    """Every expected row is there with its status, and a failure with the check's input."""
    got = {(r.submission, r.exercise): r for r in rows}
    wrong = []
    for key, (status, failing) in expected.items():
        row = got.get(key)
        if row is None or row.status != status or (failing and row.input != failing):
            wrong.append((key, (status, failing), row and (row.status, row.input, row.detail)))
    assert not wrong, f"{len(wrong)} rows differ, e.g. {wrong[:3]}"


#: What each hostile or odd submission must get: (file, exercise, status, words of the detail).
HOSTILE_ROWS = [
    ("loops_at_top.ipynb", "get_stats", "error", "ran over"),
    ("loops_in_function.ipynb", "get_stats", "failed", "stuck"),
    ("exits_at_top.ipynb", "get_stats", "error", "sys.exit(3)"),
    ("exits_in_function.ipynb", "get_stats", "failed", "sys.exit(0)"),
    ("os_exit_in_function.ipynb", "get_stats", "error", "ended the grading process"),
    ("os_exit_in_function.ipynb", "merge", "not attempted", "NotImplementedError"),
    ("os_exit_at_top.ipynb", "merge", "error", "exit code 1"),
    ("os_exit_at_top.ipynb", "get_stats", "not attempted", "NotImplementedError"),
    ("prints_50mb.ipynb", "get_stats", "passed", "correct"),
    ("eats_memory.ipynb", "get_stats", "failed", "MemoryError"),
    ("hands_in_the_course_function.ipynb", "encode", "failed", "course's own function"),
    ("wraps_the_course_function.ipynb", "encode", "failed", "calls the course's own"),
    ("patches_the_check.ipynb", "count_spellings", "failed", "exercises._judge"),
    ("patches_the_check.ipynb", "encode", "failed", "changes the course's code"),
    ("patches_the_reference.ipynb", "count_spellings", "failed", "tokcourse.bpe.count_spellings"),
    ("patches_a_builtin.ipynb", "count_spellings", "failed", "builtins.isinstance"),
    ("changes_the_package_files.ipynb", "merge", "failed", "course's files"),
    ("does_not_compile.ipynb", "encode", "error", "SyntaxError"),
    ("does_not_compile.ipynb", "decode_stream", "not attempted", "NotImplementedError"),
    ("partial_of_the_course_function.ipynb", "encode", "failed", "course's own function"),
    ("course_function_in_a_thread.ipynb", "encode", "failed", "calls the course's own"),
    ("empties_the_cases.ipynb", "count_spellings", "failed", "exercise count_spellings.cases"),
    ("uses_a_chapter_variable.ipynb", "count_spellings", "error", "uses novel, from cell"),
    ("forges_equality.ipynb", "decode_stream", "failed", "expected"),
    ("turns_the_tracer_off.ipynb", "encode", "failed", "tracing off"),
    (
        "course_function_in_a_raw_thread.ipynb",
        "count_spellings",
        "failed",
        "calls the course's own",
    ),
    ("late_future_import.ipynb", "encode", "error", "SyntaxError"),
    ("return_at_the_top.ipynb", "count_spellings", "error", "SyntaxError"),
    ("slow_test_under_a_full_solution.ipynb", "count_spellings", "error", "ran over"),
    ("slow_test_under_a_full_solution.ipynb", "encode", "passed", "correct"),
    ("annotation_never_imported.ipynb", "count_spellings", "error", "'Mapping' is not defined"),
    ("helper_cell_above.ipynb", "get_stats", "passed", "correct"),
    ("wrong_encode_right_count_spellings.ipynb", "encode", "failed", "expected"),
    ("wrong_encode_right_count_spellings.ipynb", "count_spellings", "passed", "correct"),
    ("defined_after_the_check.ipynb", "count_spellings", "not attempted", "again after its"),
    ("train_calls_the_rechecked_functions.ipynb", "train", "passed", "correct"),
    ("not_json.ipynb", "", "error", "not JSON"),
    ("not_a_notebook.ipynb", "", "error", "not a Jupyter notebook"),
    ("no_chapter.ipynb", "", "error", "not a chapter of the course"),
    ("03_encode_decode_broken.ipynb", "encode", "error", "not a notebook"),
]


def test_a_class_is_graded_as_the_checks_say_and_hostile_notebooks_get_their_reason(
    editions, tmp_path
):
    """The whole class, graded once: solutions pass, stubs are not attempted, every catalogued
    bug fails on the input its check reports; each hostile notebook gets its status and reason;
    the good notebooks graded after a damaging one still pass (its package copy was replaced)."""
    folder = tmp_path / "class"
    expected, rows = make_classroom(folder, editions)
    assert len(expected) > 300
    assert_verdicts(rows, expected)
    for row in rows:
        assert row.status in grader.STATUSES and "\n" not in row.detail and row.detail, row
    got = {(Path(r.submission).name, r.exercise): r for r in rows if "/hostile/" in r.submission}
    wrong = []
    for name, exercise, status, reason in HOSTILE_ROWS:
        row = got.get((name, exercise))
        if row is None or row.status != status or reason not in row.detail:
            wrong.append((name, exercise, status, reason, row and (row.status, row.detail)))
    assert not wrong, "\n".join(map(str, wrong))
    solved = [r for r in rows if "/solved/" in r.submission]
    assert solved and all(r.status == "passed" for r in solved)


# --- the test above fails on a grader that trusts the notebook's saved outputs ----------------


def outputs_grader(paths: list[Path]) -> list[grader.Row]:
    """A grader that believes what the check cells printed when the student ran them."""
    rows = []
    for path in grader.find_submissions(paths):
        try:
            nb = json.loads(path.read_text(encoding="utf-8"))
            cells = nb["cells"]
        except Exception:
            continue
        number = nb.get("metadata", {}).get("tokcourse", {}).get("chapter", "")
        for cell in cells:
            if "exercise-check" not in cell.get("metadata", {}).get("tags", []):
                continue
            name = "".join(cell["source"]).split("check.")[-1].split("(")[0]
            text = "".join(o.get("text", "") for o in cell.get("outputs", []))
            status = "passed" if "✅" in text else "failed" if "❌" in text else "not attempted"
            rows.append(grader.Row(str(path), number, name, status, text[:80]))
    return rows


def forge(path: Path, target: Path) -> Path:
    """The notebook with every check cell's output forged to ✅."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if "exercise-check" in cell.get("metadata", {}).get("tags", []):
            cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "✅ ok\n"}]
    target.write_text(json.dumps(nb), encoding="utf-8")
    return target


def test_the_tests_reject_a_grader_that_trusts_saved_outputs(editions, tmp_path):
    # a small class (two chapters: untouched, solved, wrong), handed in after running it, with
    # every check cell's output forged to say ✅
    folder = tmp_path / "class"
    small = [chapter("00"), chapter("03")]
    expected, _ = make_classroom(folder, editions, small, hostile=False, grade=False)
    forged = {}
    for (path, exercise), verdict in expected.items():
        copy = tmp_path / "forged" / Path(path).relative_to(folder)
        copy.parent.mkdir(parents=True, exist_ok=True)
        if not copy.exists():
            forge(Path(path), copy)
        forged[str(copy), exercise] = verdict
    with pytest.raises(AssertionError, match="rows differ"):
        assert_verdicts(outputs_grader([tmp_path / "forged"]), forged)
    # and the real grader, on the same forged notebooks, is not fooled
    real = grader.grade([tmp_path / "forged"], grader.Limits(timeout=20), jobs=2)
    assert_verdicts(real, forged)


# --- the command line --------------------------------------------------------------------------


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tokcourse.grade", *args],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_the_command_line_writes_the_csv_json_and_a_summary(editions, tmp_path):
    ch = chapter("03")
    good = submit(editions["03"], tmp_path / "in" / "ana.ipynb",
                  {"encode": solution("encode")})  # fmt: skip
    wrong = [b for b in BUGS if b.id == "encode-max-not-min"][0]
    bad = submit(editions["03"], tmp_path / "in" / "sub" / "ben.ipynb",
                 {"encode": answer_source(wrong.fn, "encode")})  # fmt: skip
    done = run_cli("in", "--out", "report.csv", "--timeout", "30", "--jobs", "2",
                   "--json", "rows.json", "--totals", "totals.csv", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "report.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0] == "submission,chapter,exercise,status,detail"
    table = list(csv.DictReader(io.StringIO(text)))
    assert [(r["submission"], r["exercise"]) for r in table] == [
        (str(p.relative_to(tmp_path)), ex) for p in (good, bad) for ex in ch.exercises
    ]
    status = {(Path(r["submission"]).name, r["exercise"]): r["status"] for r in table}
    assert status["ana.ipynb", "encode"] == "passed" and status["ben.ipynb", "encode"] == "failed"
    assert status["ana.ipynb", "decode_stream"] == "not attempted"
    assert {r["chapter"] for r in table} == {"03"}
    as_json = json.loads((tmp_path / "rows.json").read_text(encoding="utf-8"))
    assert [r["status"] for r in as_json] == [r["status"] for r in table]
    totals = (tmp_path / "totals.csv").read_text(encoding="utf-8").splitlines()
    assert totals == [
        "submission,chapter,passed,failed,not attempted,error,exercises",
        f"{good.relative_to(tmp_path)},03,1,0,2,0,3",
        f"{bad.relative_to(tmp_path)},03,0,1,2,0,3",
    ]
    # the summary: per exercise, and the commonest failing input of encode
    line = next(x for x in done.stdout.splitlines() if x.split()[1:2] == ["encode"])
    assert line.split()[2:6] == ["1", "1", "0", "0"] and "encode(" in line


def test_json_to_standard_output_and_a_json_report(editions, tmp_path):
    submit(editions["00"], tmp_path / "x.ipynb", {})
    done = run_cli("x.ipynb", "--out", "r.json", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert rows == json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert {r["status"] for r in rows} == {"not attempted"} and len(rows) == 2


def test_a_missing_path_is_a_usage_error(tmp_path):
    done = run_cli("nowhere", "--out", "r.csv", cwd=tmp_path)
    assert done.returncode == 2 and "nowhere" in done.stderr
    assert not (tmp_path / "r.csv").exists()


def test_the_grader_renames_nothing_a_student_wrote(editions, tmp_path):
    # a stub cell keeps its tag and its def line in the edition, where a student finds it
    for number, path in editions.items():
        nb = json.loads(path.read_text(encoding="utf-8"))
        for ex in chapter(number).exercises:
            assert nb["cells"][stub_index(nb, ex)]["source"]


def test_the_instructors_page_shows_the_real_command():
    page = (ROOT / "book" / "instructors.md").read_text(encoding="utf-8")
    assert "python -m tokcourse.grade" in page and "--out report.csv" in page
    for status in grader.STATUSES:
        assert f"`{status}`" in page
