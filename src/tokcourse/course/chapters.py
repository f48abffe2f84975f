"""The chapters of the book and their exercises, in book order: what the grader grades.

The notebooks are the source; this table is what an installed package knows of them (the
notebooks are not installed with it). ``tests/test_grade.py`` keeps the two in step: the same
chapters, the same exercises, in the same order.

>>> chapter("03").exercises[:2]
('encode', 'decode_stream')
>>> chapter_of_exercise("merge").number
'00'
"""

from __future__ import annotations

from typing import NamedTuple


class Chapter(NamedTuple):
    """A chapter: its two-digit ``number``, its file's ``slug`` and its exercises in order."""

    number: str
    slug: str
    title: str
    exercises: tuple[str, ...]

    @property
    def filename(self) -> str:
        return f"{self.number}_{self.slug}.ipynb"


CHAPTERS: tuple[Chapter, ...] = (
    Chapter("00", "introduction", "Introduction: why tokenization matters", ("get_stats", "merge")),
    Chapter(
        "01",
        "unicode_utf8",
        "Strings, Unicode and UTF-8",
        ("utf8_encode", "byte_kind", "utf8_decode"),
    ),
    Chapter("02", "bpe", "Byte Pair Encoding", ("train", "most_frequent_pair", "train_with")),
    Chapter(
        "03",
        "encode_decode",
        "Encoding and decoding",
        ("encode", "decode_stream", "count_spellings"),
    ),
    Chapter(
        "04",
        "regex_pretokenization",
        "Regex pre-tokenization",
        ("whitespace_chunks", "split_fixed", "chunk_counts", "scan_gpt2"),
    ),
    Chapter(
        "05",
        "tiktoken_gpt4",
        "tiktoken and GPT-4",
        ("first_split_difference", "encode_with_ranks", "recover_merge", "byte_rank"),
    ),
    Chapter("06", "special_tokens", "Special tokens", ("encode_with_specials", "render_chat")),
    Chapter(
        "07",
        "sentencepiece",
        "SentencePiece",
        ("covered_characters", "best_pair", "decode_byte_pieces", "merge_by_score"),
    ),
    Chapter("08", "vocab_size", "Vocabulary size", ("flops_per_byte",)),
    Chapter(
        "09", "tokenization_bites", "When tokenization bites", ("unstable_prefixes", "format_costs")
    ),
    Chapter(
        "10",
        "glitch_tokens",
        "Glitch tokens",
        ("is_partial_utf8", "is_reachable", "rank_by_untrained"),
    ),
    Chapter(
        "11",
        "subword_algorithms",
        "Other subword algorithms",
        ("strip_accents", "wordpiece_word", "viterbi", "em_step"),
    ),
    Chapter(
        "12",
        "capstone",
        "Capstone: build your own GPT-4 tokenizer",
        (
            "train_on_chunks",
            "encode_chunk",
            "shuffled_vocab",
            "decode_with_specials",
            "save_text",
            "load_text",
            "merges_to_ranks",
            "recover_merges",
            "pieces_to_ids",
        ),
    ),
    Chapter(
        "13",
        "fast_bpe",
        "Making BPE fast",
        ("apply_merge", "merge_lowest", "encode_ordinary_cached"),
    ),
)


def chapter(number: str) -> Chapter:
    """The chapter numbered ``number`` ("03"); ``ValueError`` naming the numbers if none."""
    for ch in CHAPTERS:
        if ch.number == number:
            return ch
    raise ValueError(f"no chapter {number!r}; the chapters are {[c.number for c in CHAPTERS]}")


def chapter_of_exercise(name: str) -> Chapter:
    """The chapter whose exercise ``name`` is; ``ValueError`` if no chapter has it."""
    for ch in CHAPTERS:
        if name in ch.exercises:
            return ch
    raise ValueError(f"no chapter has an exercise {name!r}")
