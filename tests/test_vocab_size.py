"""Chapter 08's helpers: compression ratio, FLOPs per byte, truncated merges, token counts;
errors name values."""

from __future__ import annotations

import pytest

from tokcourse import RegexTokenizer
from tokcourse.course.vocab_size import (
    compression_ratio,
    flops_per_byte,
    merges_up_to,
    token_counts,
    tokenizer_from_merges,
)
from tokcourse.fast_train import count_chunks, train_fast

TEXT = "the cat sat on the mat; the thing is singing. " * 5 + "naïve café 🙂"


def test_compression_ratio_is_utf8_bytes_per_token():
    assert compression_ratio("héllo", lambda t: list(t.encode())) == 1.0
    assert compression_ratio("héllo", lambda t: [ord(c) for c in t]) == 6 / 5
    assert isinstance(compression_ratio("ab", lambda t: [0]), float)


def test_compression_ratio_refuses_no_tokens_and_non_text():
    with pytest.raises(ValueError, match="no tokens"):
        compression_ratio("", lambda t: list(t.encode()))
    with pytest.raises(TypeError, match="bytes"):
        compression_ratio(b"abc", lambda t: [1])


def test_flops_per_byte_is_body_and_head_over_compression():
    # GPT-2 small's body and head: 2 per parameter, 2 * d_model * vocab_size for the head
    body = 12 * (4 * 768 * 768 + 2 * 768 * 3_072)
    per_token = 2 * body + 2 * 768 * 50_257
    assert flops_per_byte(body, 768, 50_257, 4.0) == per_token / 4
    assert flops_per_byte(0, 2, 3, 1) == 12.0
    assert isinstance(flops_per_byte(1, 1, 1, 2), float)
    # a bigger vocabulary costs more per token, and less per byte if it compresses enough
    assert flops_per_byte(0, 8, 200, 2.0) < flops_per_byte(0, 8, 100, 0.9)


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((10, 8, 100, 0.0), "bytes_per_token"),
        ((10, 8, 100, float("nan")), "bytes_per_token"),
        ((10, 0, 100, 4.0), "d_model"),
        ((10, 8, 0, 4.0), "vocab_size"),
        ((-1, 8, 100, 4.0), "body_params"),
    ],
)
def test_flops_per_byte_refuses_impossible_sizes(args, name):
    with pytest.raises(ValueError, match=name):
        flops_per_byte(*args)
    with pytest.raises(TypeError, match="d_model"):
        flops_per_byte(10, 8.0, 100, 4.0)


def test_a_smaller_tokenizer_is_a_prefix_of_the_larger_one():
    counts = count_chunks(TEXT)
    big = train_fast(counts, 290)
    for size in (256, 260, 275, 290):
        assert merges_up_to(big, size) == train_fast(counts, size)


def test_merges_up_to_names_the_bad_size():
    merges = train_fast(count_chunks(TEXT), 270)
    with pytest.raises(ValueError, match="vocab_size=271 is outside 256..270"):
        merges_up_to(merges, 271)
    with pytest.raises(ValueError, match="vocab_size=255"):
        merges_up_to(merges, 255)
    with pytest.raises(TypeError, match="bool"):
        merges_up_to(merges, True)
    with pytest.raises(ValueError, match="without gaps"):
        merges_up_to({(97, 98): 300}, 256)


def test_tokenizer_from_merges_equals_a_trained_tokenizer():
    trained = RegexTokenizer()
    trained.train(TEXT, 280)
    rebuilt = tokenizer_from_merges(trained.merges)
    assert rebuilt.encode(TEXT) == trained.encode(TEXT)
    assert rebuilt.decode(rebuilt.encode(TEXT)) == TEXT


def test_token_counts_equal_counting_the_encoded_text():
    merges = train_fast(count_chunks(TEXT), 280)
    counts = token_counts(count_chunks(TEXT), merges)
    ids = tokenizer_from_merges(merges).encode(TEXT)
    assert len(counts) == 280 and counts.sum() == len(ids)
    assert all(counts[i] == ids.count(i) for i in range(280))


def test_token_counts_refuses_str_chunks():
    with pytest.raises(TypeError, match="bytes"):
        token_counts({"ab": 1}, {})
