"""The options of sentencepiece's BPE trainer: their names, defaults and ranges (ch07).

:data:`DEFAULTS` lists every option :func:`tokcourse.sentencepiece_train.train_bpe` implements,
with sentencepiece's own default; :func:`check_options` fills in the defaults and refuses an
unknown name, a value of the wrong type or one outside the range sentencepiece's ``VerifySpec``
accepts, as the trainer would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULTS", "check_options"]

#: Every option we implement, with sentencepiece's default (sentencepiece_model.proto).
DEFAULTS: dict[str, Any] = {
    "model_type": "bpe",
    "vocab_size": 8000,
    "character_coverage": 0.9995,
    "byte_fallback": False,
    "split_by_whitespace": True,
    "split_by_unicode_script": True,
    "split_by_number": True,
    "split_digits": False,
    "treat_whitespace_as_suffix": False,
    "allow_whitespace_only_pieces": False,
    "max_sentencepiece_length": 16,
    "max_sentence_length": 4192,
    "user_defined_symbols": (),
    "control_symbols": (),
    "unk_id": 0,
    "bos_id": 1,
    "eos_id": 2,
    "pad_id": -1,
    "unk_piece": "<unk>",
    "bos_piece": "<s>",
    "eos_piece": "</s>",
    "pad_piece": "<pad>",
    "input_sentence_size": 0,
    "num_threads": 16,
    "normalization_rule_name": "nmt_nfkc",
    "add_dummy_prefix": True,
    "remove_extra_whitespaces": True,
}
_NORMALIZER_FIELDS = ("add_dummy_prefix", "remove_extra_whitespaces")
# the ranges sentencepiece's VerifySpec accepts (trainer_interface.cc)
_RANGES = {
    "vocab_size": (1, 2**31 - 1),
    "character_coverage": (0.98, 1.0),
    "max_sentencepiece_length": (1, 512),
    "max_sentence_length": (10, 1073741824),
    "num_threads": (1, 1024),
}


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """All options (defaults filled in) after checking names, types and ranges.

    >>> check_options({"vocab_size": 0})
    Traceback (most recent call last):
    ...
    ValueError: vocab_size must be in [1, 2147483647], not 0
    """
    opts = dict(DEFAULTS)
    for name, value in options.items():
        if name not in DEFAULTS:
            raise ValueError(f"unknown option {name!r}; supported: {', '.join(DEFAULTS)}")
        default = DEFAULTS[name]
        if isinstance(default, tuple):
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise ValueError(f"{name} must be a list of non-empty strings, not {value!r}")
            value = tuple(value)
        elif isinstance(default, bool) or isinstance(value, bool):
            if not isinstance(value, bool) or not isinstance(default, bool):
                raise ValueError(f"{name} must be a {type(default).__name__}, not {value!r}")
        elif isinstance(default, float):
            if not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, not {value!r}")
        elif not isinstance(value, type(default)) or (isinstance(value, str) and not value):
            raise ValueError(f"{name} must be a non-empty {type(default).__name__}: {value!r}")
        if name in _RANGES and not _RANGES[name][0] <= value <= _RANGES[name][1]:
            low, high = _RANGES[name]
            raise ValueError(f"{name} must be in [{low}, {high}], not {value}")
        opts[name] = value
    if opts["model_type"] != "bpe":
        raise ValueError(
            f"model_type must be 'bpe' (this is a BPE trainer), not {opts['model_type']!r}"
        )
    if opts["normalization_rule_name"] != "identity":
        raise ValueError(
            f"normalization_rule_name={opts['normalization_rule_name']!r} needs sentencepiece's "
            "compiled normalization tables; only 'identity' is implemented (pass it explicitly)"
        )
    if opts["input_sentence_size"] != 0:
        raise ValueError(
            "input_sentence_size must be 0 (use every sentence); sampling is not implemented"
        )
    return opts
