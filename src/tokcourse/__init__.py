"""tokcourse: the reference package of the course, its answer key.

>>> from tokcourse import RegexTokenizer
>>> tok = RegexTokenizer()
>>> tok.train("hello hello hello world", 260)
>>> tok.decode(tok.encode("hello world"))
'hello world'

Modules, in the order the chapters build them: ``bpe`` (pairs, merges, the naive trainer),
``tokenizer`` (the base class) and ``model_file`` (its save/load format), ``basic`` and
``regex`` (trainable tokenizers), ``patterns`` (GPT-2/GPT-4/GPT-4o split patterns),
``special`` (special-token rules), ``pretrained`` (GPT-2, GPT-4, GPT-4o from tiktoken's
ranks), ``utf8`` (UTF-8 by hand), ``fast_train``,
``fast_encode`` and ``stream`` (the fast paths of chapter 13), ``assets`` (offline data),
``viz`` and ``plotting`` (display), ``check`` and ``exercises`` (the exercise checks).
"""

from tokcourse.basic import BasicTokenizer
from tokcourse.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, GPT4O_SPLIT_PATTERN
from tokcourse.pretrained import (
    GPT2Tokenizer,
    GPT4oTokenizer,
    GPT4Tokenizer,
    PretrainedTokenizer,
)
from tokcourse.regex import RegexTokenizer
from tokcourse.tokenizer import Tokenizer

__version__ = "0.1.0"

__all__ = [
    "GPT2_SPLIT_PATTERN",
    "GPT4O_SPLIT_PATTERN",
    "GPT4_SPLIT_PATTERN",
    "BasicTokenizer",
    "GPT2Tokenizer",
    "GPT4Tokenizer",
    "GPT4oTokenizer",
    "PretrainedTokenizer",
    "RegexTokenizer",
    "Tokenizer",
]
