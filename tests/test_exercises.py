"""The exercise checks: accept the reference, reject every catalogued bug, explain, fall back."""

from __future__ import annotations

import pytest

from tests.exercise_bugs import BUGS, CLASSIC
from tokcourse import check
from tokcourse.exercises import Case, Exercise, run_check, show_solution, solution_source

NAMES = sorted(check.EXERCISE_NAMES)


def _stub(*args, **kwargs):
    raise NotImplementedError


@pytest.mark.parametrize("name", NAMES)
def test_reference_passes(name):
    result = run_check(check.exercise(name), check.exercise(name).reference, quiet=True)
    assert result.passed, result.message
    assert result.fn is check.exercise(name).reference
    assert result.n_cases >= 10


@pytest.mark.parametrize("bug", BUGS, ids=lambda b: b.id)
def test_every_catalogued_bug_is_rejected(bug):
    exercise = check.exercise(bug.exercise)
    result = run_check(exercise, bug.fn, quiet=True)
    assert not result.passed, f"{bug.exercise} accepted a buggy version: {bug.what}"
    assert result.fn is exercise.reference  # the chapter carries on with the reference
    assert result.case is not None
    assert "smallest" in result.message or "stuck" in result.message


def test_the_classic_bugs_are_all_in_the_catalogue():
    assert CLASSIC <= {b.id for b in BUGS}


@pytest.mark.parametrize("name", NAMES)
def test_every_exercise_has_bugs_it_rejects(name):
    assert any(b.exercise == name for b in BUGS), f"no buggy variant targets {name}"


@pytest.mark.parametrize("name", NAMES)
def test_a_stub_is_not_implemented_yet_calmly(name, capsys):
    returned = getattr(check, name)(_stub)
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "❌" not in out
    assert returned is check.exercise(name).reference
    assert check.result(name).status == "not implemented"


@pytest.mark.parametrize("name", NAMES)
def test_a_passing_function_is_returned_and_used(name, capsys):
    def mine(*args, **kwargs):
        return check.exercise(name).reference(*args, **kwargs)

    assert getattr(check, name)(mine) is mine
    assert "✅" in capsys.readouterr().out


def test_not_a_function():
    result = run_check(check.exercise("merge"), None, quiet=True)
    assert result.status == "not callable" and "def merge" in result.message


@pytest.mark.parametrize(
    ("bug_id", "smallest", "hint"),
    [
        ("merge-no-bounds-check", "merge([1], (1, 2), 9)", "ids[i + 1]"),
        ("merge-overlap-both", "merge([5, 5, 5], (5, 5), 6)", "overlap"),
        ("encode-guard-outside-loop", "encode('e ', {(101, 32): 256})", "len(ids) >= 2"),
        ("encode-max-not-min", "encode('aab',", "lowest merge id"),
        ("train-ties-by-dict-order", "train('abcd', 258)", "tie rule"),
        ("train-off-by-one-id", "train('ab', 257)", "256 + i"),
        ("decode-strict", "decode([226],", "errors='replace'"),
        ("build-vocab-sorted", "build_vocab({(100, 100): 256, (97, 256): 257})", "order"),
        ("split-gpt2-pattern", "split(", "GPT-2"),
        ("encode-ordinary-across-chunks", "encode_ordinary(", "chunk"),
        ("specials-accepted-by-default", "encode_with_specials(", "must raise ValueError"),
        ("canonical-assumes-roundtrip", "is_canonical(", "encode(decode(ids))"),
    ],
)
def test_report_shows_smallest_input_expected_got_and_hint(bug_id, smallest, hint):
    bug = next(b for b in BUGS if b.id == bug_id)
    result = run_check(check.exercise(bug.exercise), bug.fn, quiet=True)
    lines = result.message.splitlines()
    assert lines[1].strip().startswith(smallest), result.message
    assert lines[2].strip().startswith("expected:") and lines[3].strip().startswith("got:")
    assert hint in result.message, result.message


def test_the_smallest_failing_input_is_reported():
    # wrong only on inputs longer than 5 ids: the report must show the shortest of those
    def merge(ids, pair, idx):
        return check.exercise("merge").reference(ids, pair, idx) if len(ids) <= 5 else []

    result = run_check(check.exercise("merge"), merge, quiet=True)
    failing = [c for c in check.exercise("merge").cases() if len(c.args[0]) > 5]
    assert result.case.size() == min(c.size() for c in failing)


def test_an_exception_is_reported_with_its_input(capsys):
    def get_stats(ids):
        if 7 in ids:
            raise RuntimeError("boom")
        return check.exercise("get_stats").reference(ids)

    assert check.get_stats(get_stats) is check.exercise("get_stats").reference
    out = capsys.readouterr().out
    assert "RuntimeError: boom" in out and "get_stats([7])" in out


def test_an_endless_loop_is_stopped_quickly():
    def stuck(ids):
        while True:
            pass

    result = run_check(check.exercise("get_stats"), stuck, quiet=True, time_limit=0.2)
    assert result.status == "stuck" and "endless loop" in result.message


def test_inputs_are_copied_so_a_mutating_function_cannot_spoil_the_reference():
    def merge(ids, pair, idx):
        out = check.exercise("merge").reference(ids, pair, idx)
        ids.clear()  # vandalise the caller's list
        ids.extend(out)
        return ids

    assert run_check(check.exercise("merge"), merge, quiet=True).passed


def test_expected_exceptions_are_compared_like_answers():
    ex = Exercise("inverse", lambda x: 1 / x, lambda: [Case((0,)), Case((2,))])
    assert run_check(ex, lambda x: 1 / x, quiet=True).passed
    result = run_check(ex, lambda x: 0 if x == 0 else 1 / x, quiet=True)
    assert not result.passed and "raises ZeroDivisionError" in result.message


@pytest.mark.parametrize("name", NAMES)
def test_solution_source_runs_on_its_own_and_passes(name):
    """What show_solution prints is standalone code a student could paste and run."""
    exercise = check.exercise(name)
    namespace: dict = {}
    exec(compile(solution_source(exercise.shown), f"<solution {name}>", "exec"), namespace)
    fn = namespace[exercise.shown.__name__]
    assert run_check(exercise, fn, quiet=True).passed


def test_show_solution_prints_the_reference(capsys):
    show_solution("merge")
    out = capsys.readouterr().out
    assert out.startswith("# Reference solution for `merge` (tokcourse.bpe.merge)")
    assert "def merge(ids" in out


def test_unknown_exercise_names_the_valid_ones():
    with pytest.raises(ValueError, match="merge"):
        check.exercise("mrege")


def test_solution_source_includes_only_what_the_code_uses():
    # `text.encode(...)` and `type(x).__name__` are attributes, not uses of the module's
    # `encode` function or of `__name__` (inspect.getclosurevars confuses the two).
    source = solution_source(check.exercise("train").shown)
    assert "import __name__" not in source
    assert "def encode(" not in source
    assert "def most_frequent_pair(" in source and "def merge(" in source
    # names in default values are imported (evaluated when the function is defined)
    assert "GPT4_SPLIT_PATTERN" in solution_source(check.exercise("encode_ordinary").shown)
