"""tokcourse.course.bites: unstable prefixes, digit groups, records in four formats."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse.course.bites import (
    FORMATS,
    bootstrap_ratio,
    boundaries,
    digit_counter,
    digit_groups,
    format_costs,
    misaligned,
    render_records,
    unstable_prefixes,
)

CL100K = tiktoken.get_encoding("cl100k_base")


def test_a_cut_word_is_unstable_and_the_whole_text_never_is():
    text = "Hello world"
    found = unstable_prefixes(text, CL100K.encode_ordinary)
    assert len(text) not in found and found == sorted(found)
    assert 6 in found  # "Hello " ends in a space token that " world" would have carried


def test_one_token_per_byte_has_no_unstable_prefix():
    assert unstable_prefixes("héllo wörld", lambda s: list(s.encode())) == []
    assert unstable_prefixes("", CL100K.encode_ordinary) == []


def test_unstable_prefixes_refuses_bytes():
    with pytest.raises(TypeError, match="b'ab'"):
        unstable_prefixes(b"ab", CL100K.encode_ordinary)


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet="ab c1é日\n", max_size=12))
def test_stable_means_a_prefix_of_the_full_encoding(text):
    full = CL100K.encode_ordinary(text)
    unstable = set(unstable_prefixes(text, CL100K.encode_ordinary))
    for k in range(1, len(text) + 1):
        ids = CL100K.encode_ordinary(text[:k])
        assert (k in unstable) == (full[: len(ids)] != ids)


def test_digit_groups_per_encoding():
    assert digit_groups("12345", CL100K.decode_single_token_bytes, CL100K.encode("12345")) == "3+2"
    pieces = {0: "▁".encode(), 1: b"4", 2: b"2"}
    assert digit_groups("42", pieces.__getitem__, [0, 1, 2]) == "1+1"
    with pytest.raises(ValueError, match="'43'"):
        digit_groups("43", pieces.__getitem__, [0, 1, 2])


RECORDS = [{"id": 1, "text": 'a, "b"'}, {"id": 2, "text": "café"}]


def test_boundaries_are_place_values_of_token_ends():
    n_digits = digit_counter(CL100K.decode_single_token_bytes)
    assert boundaries(CL100K.encode_ordinary("1234"), n_digits) == {1}  # 123 + 4
    assert boundaries(CL100K.encode_ordinary("10245"), n_digits) == {2}  # 102 + 45
    assert boundaries(CL100K.encode_ordinary("999"), n_digits) == set()
    assert boundaries(CL100K.encode_ordinary("1,234"), n_digits) == {3}  # 1 , 234


def test_digit_counter_reads_bytes_and_pieces():
    assert digit_counter({0: b"12a", 1: b" "}.__getitem__)(0) == 2
    assert digit_counter({0: "\u258112"}.__getitem__)(0) == 2  # a SentencePiece piece


def test_misaligned_counts_additions_whose_boundaries_move():
    n_digits = digit_counter(CL100K.decode_single_token_bytes)
    a, b = [1234, 9000], [1111, 1000]
    texts = [str(x) for x in a + b + [x + y for x, y in zip(a, b, strict=True)]]
    # 1234 + 1111 = 2345 keeps 3+1; 9000 + 1000 = 10000 becomes 3+2
    assert misaligned(texts, CL100K.encode_ordinary, n_digits) == 0.5
    with pytest.raises(ValueError, match="three blocks"):
        misaligned(texts[:-1], CL100K.encode_ordinary, n_digits)


def test_the_formats_are_what_the_docstring_says():
    assert render_records(RECORDS, "json") == json.dumps(RECORDS, indent=2, ensure_ascii=False)
    assert (
        render_records(RECORDS, "compact_json")
        == '[{"id":1,"text":"a, \\"b\\""},{"id":2,"text":"café"}]'
    )
    assert (
        render_records(RECORDS, "yaml") == '- id: 1\n  text: "a, \\"b\\""\n- id: 2\n  text: "café"'
    )
    assert render_records(RECORDS, "csv") == 'id,text\n1,"a, ""b"""\n2,café\n'
    assert list(csv.reader(io.StringIO(render_records(RECORDS, "csv"))))[1] == ["1", 'a, "b"']


def test_format_costs_counts_tokens_of_each_format():
    costs = format_costs(RECORDS, CL100K.encode_ordinary)
    assert list(costs) == list(FORMATS)
    assert costs == {f: len(CL100K.encode_ordinary(render_records(RECORDS, f))) for f in FORMATS}
    assert costs["compact_json"] < costs["json"]


@pytest.mark.parametrize(
    ("records", "match"),
    [([], r"\[\]"), ([{"a": 1}, {"b": 2}], "record 1"), ([{"a": True}], "True"), ("ab", "'ab'")],
)
def test_bad_records_are_named(records, match):
    with pytest.raises(ValueError, match=match):
        render_records(records, "json")


def test_unknown_format_is_named():
    with pytest.raises(ValueError, match="'xml'"):
        render_records(RECORDS, "xml")


def test_bootstrap_ratio_brackets_the_ratio_and_is_repeatable():
    rng = np.random.default_rng(1)
    den = rng.integers(5, 20, size=300)
    num = den * 2 + rng.integers(-3, 4, size=300)
    low, high = bootstrap_ratio(num, den, seed=3)
    assert low < num.sum() / den.sum() < high and high - low < 0.1
    assert bootstrap_ratio(num, den, seed=3) == (low, high)
    wider = bootstrap_ratio(num, den, seed=3, level=0.99)
    assert wider[0] <= low and wider[1] >= high


@pytest.mark.parametrize(
    ("num", "den", "match"),
    [([], [], "non-empty"), ([1, 2], [1], "one length"), ([1], [0], "positive sum")],
)
def test_bootstrap_ratio_refuses_bad_input(num, den, match):
    with pytest.raises(ValueError, match=match):
        bootstrap_ratio(num, den)
