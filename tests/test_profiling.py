"""tokcourse.course.profiling: cProfile of one call, in a fresh Python process."""

from __future__ import annotations

import pytest

from tokcourse import bpe
from tokcourse.course.profiling import Profile, Row, profile_function


def test_an_importable_function_is_profiled_with_everything_it_calls():
    report = profile_function(bpe.train_on_chunks, ["abcab", "ab", "ba", "cabc"] * 20, 260)
    assert report.function == "train_on_chunks"
    assert report.share("train_on_chunks") == pytest.approx(1.0)
    names = report.names()
    assert {"get_stats", "merge", "most_frequent_pair"} <= set(names)
    assert "pickle" not in " ".join(names) and "load" not in names  # the set-up is left out
    calls = {row.function: row.calls for row in report.rows}
    assert calls["most_frequent_pair"] == 4  # once per merge
    assert 0 < report.share("get_stats", "merge") < 1
    own = [row.own for row in report.rows]
    assert own == sorted(own, reverse=True)


def test_a_function_defined_in_place_travels_by_its_source():
    def recount(chunks, merges):  # like a notebook's function: not importable by name
        ids = [list(chunk.encode()) for chunk in chunks]
        for i in range(merges):
            stats = {}
            for chunk_ids in ids:
                bpe.get_stats(chunk_ids, stats)
            pair = max(stats, key=stats.get)
            ids = [bpe.merge(chunk_ids, pair, 256 + i) for chunk_ids in ids]
        return ids

    report = profile_function(recount, ["hug", "pug", "hugs"] * 10, merges=3)
    assert report.function == "recount"
    calls = {row.function: row.calls for row in report.rows}
    assert calls["get_stats"] == 3 * 30 and calls["merge"] == 3 * 30


def test_a_function_naming_what_a_new_process_cannot_import_is_refused():
    def helper(x):
        return x

    def uses_helper(x):
        return helper(x)

    with pytest.raises(ValueError, match="helper"):
        profile_function(uses_helper, 1)
    with pytest.raises(TypeError, match="Python function"):
        profile_function(len, "abc")


def test_a_failing_function_reports_its_error():
    with pytest.raises(RuntimeError, match="ValueError: vocab_size=300"):
        profile_function(bpe.train_on_chunks, ["ab"], 300)  # raises ValueError: too few pairs


def test_the_table_and_share():
    report = Profile("f", 2.0, (Row("len", 10, 1.5, 1.5), Row("f", 1, 0.5, 2.0)))
    assert report.table(1).splitlines()[1].split() == ["10", "75%", "75%", "len"]
    assert report.share("len") == 0.75
    with pytest.raises(ValueError, match="not in the profile"):
        report.share("merge")
