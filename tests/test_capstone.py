"""Chapter 12: the tokenizer class's stages, exporting merges to tiktoken, and the capstone's
pipeline check."""

from __future__ import annotations

from collections import Counter

import nbformat
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.exercise_bugs import BUGS
from tests.test_notebooks import stub_name
from tokcourse import bpe, check, export, pretrained, tokenizer
from tokcourse.course import capstone
from tokcourse.course import capstone_steps as steps
from tokcourse.course.checks.capstone import DUPLICATES, NOT_BPE
from tokcourse.patterns import GPT4_SPLIT_PATTERN, split
from tokcourse.regex import RegexTokenizer

# --- the class's stages (capstone_steps) --------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab c1.\né日", min_size=2, max_size=80), st.integers(1, 25))
def test_the_stages_agree_with_the_package(text, n_merges):
    """The class's stage answers are the package's trainer, encoder and vocabulary."""
    chunks = Counter(split(text))
    try:
        expected = bpe.train_on_chunks(chunks, 256 + n_merges)
    except ValueError:  # too few pairs in the text for that many merges
        return
    merges = steps.train_on_chunks(chunks, 256 + n_merges)
    assert list(merges.items()) == list(expected.items())
    shuffle = tuple(reversed(range(256)))
    vocab = steps.shuffled_vocab(merges, shuffle)
    assert vocab == bpe.build_vocab(merges, shuffle)
    for chunk in chunks:
        ids = steps.encode_chunk(chunk.encode(), merges, shuffle)
        assert ids == bpe.encode(chunk, merges, shuffle)
        assert steps.decode_with_specials(ids + [999], vocab, {"<|x|>": 999}) == chunk + "<|x|>"


def test_gpt4s_tables_save_and_load_back():
    cl100k = tiktoken.get_encoding("cl100k_base")
    shuffle, merges = capstone._cl100k_prefix()
    tables = (GPT4_SPLIT_PATTERN, shuffle, cl100k._special_tokens, merges)
    pattern, byte_shuffle, specials, loaded = steps.load_text(steps.save_text(*tables))
    assert (pattern, byte_shuffle, specials) == tables[:3]
    assert list(loaded.items()) == list(merges.items())


# --- export ------------------------------------------------------------------------------------


def test_ranks_are_the_bytes_then_each_merge_at_its_id():
    ranks = export.merges_to_ranks({(104, 105): 300, (300, 33): 301})
    assert list(ranks.items())[:2] == [(b"\x00", 0), (b"\x01", 1)]
    assert ranks[b"hi"] == 300 and ranks[b"hi!"] == 301 and len(ranks) == 258


@pytest.mark.parametrize("merges", DUPLICATES)
def test_two_merges_making_the_same_bytes_are_refused_by_name(merges):
    vocab = bpe.build_vocab(merges)
    twice = [i for i in vocab if list(vocab.values()).count(vocab[i]) > 1]
    with pytest.raises(ValueError, match=rf"tokens {twice[0]} and {twice[1]} are both"):
        export.merges_to_ranks(merges)


def test_a_table_tiktoken_would_encode_differently_is_refused_naming_the_token():
    handmade = {(98, 99): 256, (97, 98): 257, (257, 99): 258}  # bc, ab, abc = ab + c
    ranks = export.merges_to_ranks(handmade)
    enc = tiktoken.Encoding(
        "toy", pat_str=GPT4_SPLIT_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )
    assert enc.encode_ordinary("xabc") != tokenizer.encode_ordinary("xabc", handmade)
    with pytest.raises(ValueError, match=r"token 258 b'abc' was made as b'ab' \+ b'c'"):
        export.to_tiktoken(handmade)


def test_a_special_token_on_an_ordinary_id_is_refused():
    with pytest.raises(ValueError, match=r"'<\|x\|>' would take id 256, already the ordinary"):
        export.to_tiktoken({(97, 98): 256}, special_tokens={"<|x|>": 256})
    with pytest.raises(ValueError, match="negative id -1"):
        export.to_tiktoken({(97, 98): 256}, special_tokens={"<|x|>": -1})


def test_an_exported_tokenizer_encodes_like_ours_on_held_out_text():
    text, held_out = capstone.train_and_held_out(capstone.corpus("botchan"))
    tok = RegexTokenizer()
    tok.train(text, 2048, fast=True)
    tok.register_special_tokens({"<|endoftext|>": 2048})
    enc = export.to_tiktoken(tok.merges, tok.pattern, tok.special_tokens)
    doc = "\n".join(held_out) + "<|endoftext|>"
    assert enc.encode(doc, allowed_special="all") == tok.encode(doc, allowed_special="all")
    assert len(held_out) > 800


def test_not_bpe_tables_cannot_be_read_back_as_merges():
    for ranks in NOT_BPE:
        with pytest.raises(ValueError, match="cannot be built"):
            pretrained.recover_merges(ranks)


@settings(max_examples=150, deadline=None)
@given(
    st.text(alphabet="ab c1.\né", min_size=2, max_size=60),
    st.integers(1, 30),
    st.text(alphabet="ab c1.\né", max_size=40),
)
def test_trained_tables_export_exactly(text, n_merges, other):
    """Any table our trainer makes reads back as itself and encodes alike in tiktoken."""
    try:
        merges = bpe.train_on_chunks(split(text), 256 + n_merges)
    except ValueError:  # too few pairs in the text for that many merges
        return
    ranks = export.merges_to_ranks(merges)
    assert list(pretrained.recover_merges(ranks).items()) == list(merges.items())
    enc = export.to_tiktoken(merges)
    for sample in (text, other, text + other):
        assert enc.encode_ordinary(sample) == tokenizer.encode_ordinary(sample, merges)


# --- corpus ------------------------------------------------------------------------------------


def test_corpus_names_its_choices():
    with pytest.raises(ValueError, match="'botchan', 'python' or a language code"):
        capstone.corpus("klingon")
    with pytest.raises(TypeError, match="must be a str"):
        capstone.corpus(None)  # type: ignore[arg-type]
    assert len(capstone.corpus("ja")) > 10_000 and "def " in capstone.corpus("python")


def test_held_out_lines_are_not_in_the_training_part():
    train, held = capstone.train_and_held_out("one\ntwo\nthree\nfour\nfive\n")
    assert train.endswith("\n") and not set(train.splitlines()) & set(held)
    with pytest.raises(ValueError, match="between 0 and 1"):
        capstone.train_and_held_out("abc", 1.0)


# --- the pipeline ------------------------------------------------------------------------------


def _students_copy(fn):
    def mine(*args, **kwargs):
        return fn(*args, **kwargs)

    return mine


def _correct():
    return {name: _students_copy(check.exercise(name).reference) for name in capstone.FUNCTIONS}


def _stage_of(name: str) -> int:
    return next(i for i, s in enumerate(capstone.STAGES, 1) if name in s.exercises)


def test_correct_functions_pass_every_stage(capsys):
    report = capstone.run_pipeline(**_correct())
    out = capsys.readouterr().out
    assert report.passed and report.first_failure is None
    assert out.count("✅") == len(capstone.STAGES) == 7 and "you built it" in out


def test_stubs_are_not_implemented_yet_calmly():
    def stub(*args, **kwargs):
        raise NotImplementedError

    report = capstone.run_pipeline(quiet=True, **{n: stub for n in capstone.FUNCTIONS})
    assert {s.status for s in report.stages} == {"not implemented"}
    assert report.first_failure.number == 1 and "❌" not in str(report)


def test_in_the_book_build_the_pipeline_prints_a_neutral_summary(capsys, monkeypatch):
    """The rendered page describes the stages where a student sees ⏳ or ↩️ on each."""
    course = {name: check.exercise(name).reference for name in capstone.FUNCTIONS}
    monkeypatch.setenv("TOKCOURSE_BOOK_BUILD", "1")
    report = capstone.run_pipeline(**course)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == capstone.BOOK_PAGE_NOTE.format(n=7)
    assert lines[0].startswith("In your copy this cell runs the 7 stages with your functions")
    assert len(lines) == 1 + len(capstone.STAGES)
    assert lines[1] == "  stage 1, train: checks train_on_chunks."
    assert "then compares your encoder with tiktoken" in lines[5]
    assert not any(mark in "\n".join(lines) for mark in ("⏳", "↩️", "✅", "❌"))
    assert {s.status for s in report.stages} == {"course code"}  # the report itself is kept
    monkeypatch.setenv("TOKCOURSE_BOOK_BUILD", "0")
    capstone.run_pipeline(**course)
    assert capsys.readouterr().out.count("↩️") == len(capstone.STAGES)


def test_in_the_book_build_a_students_code_still_gets_its_report(capsys, monkeypatch):
    monkeypatch.setenv("TOKCOURSE_BOOK_BUILD", "1")
    capstone.run_pipeline(**_correct())
    assert capsys.readouterr().out.count("✅") == len(capstone.STAGES)


def test_the_course_code_is_never_congratulated():
    course = {name: check.exercise(name).reference for name in capstone.FUNCTIONS}
    report = capstone.run_pipeline(quiet=True, **course)
    assert {s.status for s in report.stages} == {"course code"} and "✅" not in str(report)


def test_the_joint_stages_refuse_to_run_the_course_encode_chunk():
    functions = _correct() | {"encode_chunk": check.exercise("encode_chunk").reference}
    report = capstone.run_pipeline(quiet=True, **functions)
    assert [s.number for s in report.stages if not s.passed] == [2, 3, 5, 6]
    assert "the course's encode_chunk" in report.stages[2].message


def _one_bug_per_exercise():
    seen = {}
    for bug in BUGS:
        if bug.exercise in capstone.FUNCTIONS and bug.rule is None:
            seen.setdefault(bug.exercise, bug)
    return list(seen.values())


@pytest.mark.parametrize("bug", _one_bug_per_exercise(), ids=lambda b: b.id)
def test_a_wrong_function_is_the_first_failing_stage(bug):
    report = capstone.run_pipeline(quiet=True, **(_correct() | {bug.exercise: bug.fn}))
    first = report.first_failure
    assert first.number == _stage_of(bug.exercise) and first.status == "failed", str(report)
    assert f"{bug.exercise} is wrong" in first.message
    assert f"First stage to work on: stage {first.number}" in str(report)


def test_a_wrong_end_to_end_result_fails_its_stage(monkeypatch):
    """Functions that pass their checks but do not fit together fail the joint test."""
    functions = _correct()
    real = functions["merges_to_ranks"]

    def shifted(merges):  # right on the check's tables, wrong once more merges are trained
        ranks = real(merges)
        return {t: r + 1 if r >= 256 + 150 else r for t, r in ranks.items()}

    functions["merges_to_ranks"] = shifted
    monkeypatch.setattr(capstone, "run_check", _pass_all)
    report = capstone.run_pipeline(quiet=True, **functions)
    assert report.first_failure.number == 5 and "end-to-end test failed" in str(report)


def _pass_all(exercise, fn, *, quiet=False):
    from tokcourse.course.exercises import CheckResult

    return CheckResult(exercise.name, "passed", fn, "✅")


def test_a_missing_function_is_named():
    functions = _correct()
    del functions["encode_chunk"]
    with pytest.raises(TypeError, match=r"missing \['encode_chunk'\]"):
        capstone.run_pipeline(**functions)


def test_pasting_a_solution_keeps_the_students_other_functions() -> None:
    """In chapter 12 every solution may be pasted into one notebook: none may bind a name that
    another exercise of the chapter defines to the course's function (encode_ordinary's once
    imported the course's ``split``, and the pipeline then saw it instead of the student's)."""
    from tokcourse.course.exercises import is_course_code, solution_source

    nb = nbformat.read(ROOT / "notebooks" / "12_capstone.ipynb", as_version=4)
    names = [stub_name(c) for c in nb.cells if "exercise-stub" in c.metadata.get("tags", [])]
    for name in names:
        namespace = {other: object() for other in names if other != name}
        before = dict(namespace)
        exec(solution_source(check.exercise(name).shown), namespace)
        # a helper the solution defines (train's get_stats) is pasted code, like the student's;
        # an import of the course's own function is not
        rebound = [n for n in before if namespace[n] is not before[n]]
        imported = [n for n in rebound if is_course_code(namespace[n])]
        assert imported == [], f"the solution of {name} imports the course's {imported}"
