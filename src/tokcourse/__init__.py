"""tokcourse: the reference package of the course, its answer key.

>>> from tokcourse import RegexTokenizer
>>> tok = RegexTokenizer()
>>> tok.train("hello hello hello world", 260)
>>> tok.decode(tok.encode("hello world"))
'hello world'

The package has two floors. This folder holds the tokenizer, one idea per module, each short
enough to read after the chapter that builds it (dependencies point down this list's reverse:
a module imports only modules listed before it):

* ``utf8``        UTF-8 by hand: encode, decode, byte kinds; surrogates fixed as tiktoken does
* ``unicode_pin`` pins the Unicode version the ``regex`` module uses, so splits never drift
* ``patterns``    the GPT-2 / GPT-4 / GPT-4o split patterns and ``split``
* ``special``     special-token rules: find them, allow or refuse them
* ``bpe``         pairs, merges, the naive trainer, encode/decode with a merges table (ch02-03)
* ``model_file``  the ``.model`` file format (save/load), read as data
* ``fast_encode`` ranked and heap BPE, the chunk cache: encoding fast (ch13)
* ``stream``      encoding an iterable of text pieces chunk by chunk (ch13); decoding ids as they
  come, holding back an unfinished character (ch03)
* ``tokenizer``   the base class: vocab, encode, decode, save/load
* ``fast_train``  the incremental trainer: pair counts updated per merge (ch13)
* ``basic``       the byte-level tokenizer; ``regex`` the one that splits first
* ``llama``       Llama 3 and 4's split patterns and special tokens
* ``rank_bpe``    tiktoken's encoder on rank tables that are not merge lists (Llama 3), Meta's cuts
* ``pretrained``  GPT-2, GPT-4, GPT-4o, Llama 3 and 4 from their ranks; merge recovery
* ``sentencepiece_bpe``  SentencePiece BPE from a ``.model`` file: sentencepiece's exact ids (ch07)
* ``sentencepiece_merge``  SentencePiece's BPE merge loop: its candidate and tie rules (ch07)
* ``sentencepiece_train``  a SentencePiece BPE trainer: the model ``spm_train`` writes (ch07)
* ``unigram``     unigram segmentation: Viterbi, n-best, sampling; sentencepiece's exact ids (ch11)
* ``unigram_train``  a small unigram trainer: seed pieces, one EM step, pruning (ch11)
* ``unigram_spm_steps``  sentencepiece's M-step and pruning round written out, for comparison
  (ch11)
* ``wordpiece``   BERT's WordPiece: normalizer, pre-tokenizer, greedy longest match; HF's exact
  tokens (ch11)
* ``wordpiece_train``  WordPiece training: count, likelihood gain, ratio score; replay (ch11)
* ``export``      a trained tokenizer's merges as tiktoken's ranks, and a ``tiktoken.Encoding``
  that encodes the same (ch12)

:mod:`tokcourse.course` holds the course machinery a learner does not need to read: offline
assets, exercise checks, display helpers, benchmark results (its docstring lists its modules).
Notebooks keep short imports: ``from tokcourse import check`` (also ``assets``, ``viz``,
``forest``, ``plotting``, ``benchmarks``) loads that module from :mod:`tokcourse.course` on
first use; nothing of it is imported with the tokenizer.

A chapter's exercises are one new file, ``tokcourse/course/checks/<topic>.py``, holding their
cases, hints and an ``EXERCISES`` table; ``check`` discovers it (see that package's docstring).
"""

import importlib
from types import ModuleType

from tokcourse import pretrained
from tokcourse.basic import BasicTokenizer
from tokcourse.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, GPT4O_SPLIT_PATTERN
from tokcourse.pretrained import (
    GPT2Tokenizer,
    GPT4oTokenizer,
    GPT4Tokenizer,
    Llama3Tokenizer,
    Llama4Tokenizer,
    PretrainedTokenizer,
)
from tokcourse.regex import RegexTokenizer
from tokcourse.tokenizer import Tokenizer

__version__ = "0.1.0"

#: Course modules reachable as ``tokcourse.<name>`` (imported on first use, see the docstring).
_COURSE_MODULES = {
    "assets": "tokcourse.course.data.assets",
    "benchmarks": "tokcourse.course.benchmarks",
    "check": "tokcourse.course.check",
    "forest": "tokcourse.course.forest",
    "plotting": "tokcourse.course.plotting",
    "viz": "tokcourse.course.viz",
}


def _pinned_rank_file(name: str) -> str:
    """Llama 3 or 4's rank file: the course's pinned copy (fetched and hash-checked once)."""
    assets = importlib.import_module("tokcourse.course.data.assets")
    return str(assets.path(f"{name}_ranks", fetch_missing=True))


pretrained.default_rank_file = _pinned_rank_file


def __getattr__(name: str) -> ModuleType:
    if name in _COURSE_MODULES:
        return importlib.import_module(_COURSE_MODULES[name])
    raise AttributeError(f"module 'tokcourse' has no attribute {name!r}")


__all__ = [
    "GPT2_SPLIT_PATTERN",
    "GPT4O_SPLIT_PATTERN",
    "GPT4_SPLIT_PATTERN",
    "BasicTokenizer",
    "GPT2Tokenizer",
    "GPT4Tokenizer",
    "GPT4oTokenizer",
    "Llama3Tokenizer",
    "Llama4Tokenizer",
    "PretrainedTokenizer",
    "RegexTokenizer",
    "Tokenizer",
]
