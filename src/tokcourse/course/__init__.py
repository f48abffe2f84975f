"""The course machinery: everything the book needs that is not itself a tokenizer idea.

The tokenizer lives one floor up (``tokcourse.bpe``, ``tokcourse.tokenizer``, ...) and never
imports anything from here; these modules import the tokenizer, never the other way round.
Kept apart so a learner opening ``src/tokcourse/`` sees the tokenizer first, and so no module
grows with every chapter: a chapter's exercises are one new file in :mod:`.checks`.

Offline data lives in its own room, :mod:`tokcourse.course.data` (pinned files, the verified
cache, the download from pip's index, the corpora; ``assets`` is its front door and command line).

Exercise checks (``from tokcourse import check``; ``check.merge(merge)``):

* ``exercises``      the engine: run a function against the reference, judge, report
* ``answers``        type rules for answers (``list_of(INT)``) and how values are shown
* ``calls``          calling a function safely: argument copies, time limit, output captured
* ``solutions``      a reference solution as standalone code (``check.show_solution``)
* ``first_steps``    chapter 00's get_stats and merge and chapter 02's train, the short
  solutions they show
* ``encoding_steps`` chapter 03's encode, decode_stream and count_spellings, the short
  solutions it shows
* ``check``          the front door: finds every exercise in ``checks``, one function each
* ``checks/``        one module per chapter topic, each with an ``EXERCISES`` table

Grading a class (``python -m tokcourse.grade``, the command line of ``grader``):

* ``chapters``       the chapters and their exercises, in book order
* ``submission``     a submitted notebook read as data: its chapter, what the grader runs of it
* ``grading``        one submission in its own process: its definitions, then the checks
* ``grader``         the class: every submission in a process of its own, limits, the report

Display and results:

* ``viz``            token spans as coloured HTML, for one or more encodings
* ``chunks``         a split pattern's chunks as coloured HTML, its alternatives, and which
  alternative made each chunk (chapters 04 and 05)
* ``split_cost``     training with and without a split pattern: held-out characters per token
  across vocabulary sizes, crossing tokens, copies of one word (chapter 04)
* ``forest``         merge trees: layout and drawing
* ``traced``         chapter 02's training loop with a record of each step and a pluggable
  tie rule, numpy-fast for a whole novel
* ``merge_order``    encoding by four candidate rules for the next merge (chapter 03 runs them
  before its ``encode`` exercise)
* ``plotting``       plotly set-up for notebooks and the static book
* ``benchmarks``     the measured numbers of ``benchmarks/`` (``results.json``) for chapter 13
* ``timing``         timings a chapter prints: CPU seconds of the kernel, best of a few runs
* ``sp_parity``      our SentencePiece BPE against the sentencepiece library: the counts behind
  chapter 07's one-line parity claims, its generated strings and id lists
* ``profiling``      where a function spends its time: cProfile in a fresh process (chapter 13)

Models, in miniature:

* ``surgery``        growing a model's embedding table and LM head for new tokens (chapter 06)
* ``vocab_size``     compression ratio, a trained tokenizer cut to a smaller vocabulary, how
  often each token occurs (chapter 08)
* ``bites``          unstable prefixes, digit groups, records as JSON / YAML / CSV and their
  token cost (chapter 09)
* ``glitch``         glitch-token candidates: unreachable and partial-UTF-8 tokens,
  near-duplicates, and rows ranked by distance to untrained embeddings (chapter 10)
* ``lm``             the language models the book trains: a Kneser-Ney n-gram model, bits per
  byte on held-out text (chapters 08-10)
* ``neural_lm``      a tiny neural LM in numpy with tied or untied embeddings, trained by
  hand-written backpropagation and Adam (chapters 08-10)
"""
