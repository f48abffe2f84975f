"""What Meta's Llama 3 and Llama 4 tokenizers add to their ranks: split patterns, special tokens.

Both ship as tiktoken-format rank files (llama-models' ``llama3/tokenizer.model``, 128,000
tokens, and ``llama4/tokenizer.model``, 200,000). Meta's ``Tokenizer`` class builds a
``tiktoken.Encoding`` from each with the pattern and the special tokens below; the classes in
:mod:`tokcourse.pretrained` run our own encoder on them (:mod:`tokcourse.rank_bpe`).

>>> specials = llama3_special_tokens(128_000)
>>> specials["<|begin_of_text|>"], specials["<|eot_id|>"], len(specials)
(128000, 128009, 256)
>>> len(llama4_special_tokens(200_000))
2048
"""

from __future__ import annotations

from .patterns import GPT4O_SPLIT_PATTERN

__all__ = [
    "LLAMA3_SPLIT_PATTERN",
    "LLAMA4_SPLIT_PATTERN",
    "llama3_special_tokens",
    "llama4_special_tokens",
]

# Llama 3's split pattern: GPT-4's alternatives without possessive quantifiers, the contractions
# written out, a run of line breaks taken whole, and "\s+" (not "\s") for white space left over.
_LLAMA3_PARTS = [
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",  # contractions, in any case
    r"[^\r\n\p{L}\p{N}]?\p{L}+",  # a word, after at most one non-letter
    r"\p{N}{1,3}",  # numbers in groups of 1 to 3 digits
    r" ?[^\s\p{L}\p{N}]+[\r\n]*",  # punctuation run (+ optional space before, newlines after)
    r"\s*[\r\n]+",  # white space up to and including a run of line breaks
    r"\s+(?!\S)",  # a run of white space, minus the last space if a word follows
    r"\s+",  # any white space left over
]
LLAMA3_SPLIT_PATTERN = "|".join(_LLAMA3_PARTS)
"""Llama 3's split pattern (llama-models' ``llama3/tokenizer.py``)."""

LLAMA4_SPLIT_PATTERN = GPT4O_SPLIT_PATTERN
"""Llama 4's split pattern: GPT-4o's, character for character."""


def llama3_special_tokens(first_id: int) -> dict[str, int]:
    """Llama 3's 256 special tokens, numbered from ``first_id`` (the number of ranks)."""
    named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",  # end of message (a tool call follows)
        "<|eot_id|>",  # end of turn
        "<|python_tag|>",
        "<|image|>",
    ]
    names = named + [f"<|reserved_special_token_{i}|>" for i in range(2, 256 - len(named) + 2)]
    return {name: first_id + i for i, name in enumerate(names)}


def _reserved(kind: str, count: int, start: int) -> list[str]:
    return [f"<|{kind}_reserved_special_token_{i}|>" for i in range(start, start + count)]


def llama4_special_tokens(first_id: int) -> dict[str, int]:
    """Llama 4's 2,048 special tokens, numbered from ``first_id`` (the number of ranks)."""
    basic = ["<|begin_of_text|>", "<|end_of_text|>"]
    basic += ["<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    text = ["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
    text += _reserved("text_post_train", 6, 0)
    text += ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"]
    text += _reserved("text_post_train", 61, 8)
    vision = ["<|image_start|>", "<|image_end|>"] + _reserved("vision", 2, 0)
    vision += ["<|tile_x_separator|>", "<|tile_y_separator|>"] + _reserved("vision", 4, 2)
    vision += ["<|image|>", *_reserved("vision", 1, 6), "<|patch|>", *_reserved("vision", 1041, 7)]
    reasoning = _reserved("reasoning", 8, 0)
    reasoning += ["<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    names = basic + text + vision + reasoning
    names += [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(names))]
    return {name: first_id + i for i, name in enumerate(names)}
