"""The exercise checks, one module per chapter topic.

=================== ========= ====================================================
module              chapter   exercises
=================== ========= ====================================================
``utf8``            01        utf8_encode, byte_kind, utf8_decode
``bpe_training``    00        get_stats, merge
``trainer``         02        train, most_frequent_pair
``encode_decode``   03        encode, decode_stream, count_spellings
``pretokenize``     04, 05    whitespace_chunks, scan_gpt2 (04),
                              first_split_difference (05)
``split_use``       04        split_fixed, chunk_counts
``tiktoken_parity`` 05        byte_rank, recover_merge, encode_with_ranks
``special_tokens``  06        encode_with_specials, render_chat
``sentencepiece``   07        covered_characters, best_pair, decode_byte_pieces,
                              merge_by_score
``vocab_size``      08        flops_per_byte
``bites``           09        unstable_prefixes, format_costs
``glitch``          10        is_partial_utf8, is_reachable, rank_by_untrained
``wordpiece``       11        wordpiece_word, strip_accents
``unigram``         11        viterbi, em_step
``capstone``        12        merges_to_ranks, recover_merges
``my_tokenizer``    12        train_on_chunks, encode_chunk, shuffled_vocab,
                              decode_with_specials, save_text, load_text,
                              pieces_to_ids
``fast``            13        apply_merge, merge_lowest, encode_ordinary_cached
=================== ========= ====================================================

Adding a chapter's exercises means adding one module here, nothing else. It holds the cases
and hints of each exercise and a table::

    EXERCISES: dict[str, Entry] = {
        "merge": Entry("merge(ids, pair, idx) -> new ids", lambda: Exercise("merge", ...)),
    }

:mod:`tokcourse.course.check` discovers every module of this package whose name does not
start with ``_`` (in name order), reads its ``EXERCISES`` and makes ``check.<name>`` for each;
a name registered twice is an error. The notebook then calls ``f = check.<name>(f)`` and
``check.show_solution("<name>")``; ``tests/test_exercises.py`` picks the new exercise up too
and asks for buggy implementations of it in ``tests/exercise_bugs.py``. A topic module may
import cases or helpers from an earlier topic (``fast`` reuses ``tiktoken_parity``' cases),
never from the check front door.

The text of the exercise and its check must say the same thing, and ``tests/test_exercises.py``
reads both: every error the reference raises on some input is named in the text; where the
text says what the error names ("raise ValueError naming the two ids"), the exercise declares
it (``Exercise(names=Names(...))``) and the check reads the message; an input that tests a
rule carries the text's words for it (``Case(..., rule="the leftmost one on a tie")``). Every
dict or set argument is also tried in another order, and the answer must not change: declare
``ordered=("merges",)`` for an argument whose order the text gives a meaning.
"""
