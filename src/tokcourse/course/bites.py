"""When tokenization bites (chapter 09): unstable prefixes, digit groups, formats and their cost.

The chapter measures odd behaviours of real tokenizers; the pieces worth keeping live here:

- :func:`unstable_prefixes`: where cutting a text leaves a token that the whole text would
  not use (why a prompt should not end in the middle of a token, or in a space);
- :func:`digit_groups`: how a tokenizer cuts a number into pieces, written ``"1+3"``;
- :func:`digit_counter`, :func:`boundaries` and :func:`misaligned`: whether the operands and
  the sum of an addition have their token boundaries at the same place values;
- :func:`render_records` and :func:`format_costs`: the same records as JSON, compact JSON,
  YAML and CSV, and what each costs in tokens;
- :func:`bootstrap_ratio`: how far a ratio of two sums (a language's tokens over English's)
  could move if other messages had been sampled.

Every function takes ``encode``, any function from a str to a list of token ids (for example
``tiktoken.get_encoding("cl100k_base").encode_ordinary``), so it works for any tokenizer.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "FORMATS",
    "bootstrap_ratio",
    "boundaries",
    "digit_counter",
    "digit_groups",
    "format_costs",
    "misaligned",
    "render_records",
    "unstable_prefixes",
]

Encode = Callable[[str], list[int]]

#: The formats of :func:`render_records`, in the order :func:`format_costs` reports them.
FORMATS: tuple[str, ...] = ("json", "compact_json", "yaml", "csv")


# The book shows some of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.
# fmt: off
def unstable_prefixes(text: str, encode: Encode) -> list[int]:
    """Every prefix length k (in characters) whose encoding is not a prefix
    of the text's.

    For k = 1 .. len(text), compare ``encode(text[:k])`` with
    ``encode(text)``: the prefix is *unstable* when its ids are not the
    first ids of the full encoding, that is when a prompt cut after k
    characters ends in a token the full text does not contain there
    (usually the last one: a word cut in half, or a space the next word
    would have carried). The full text itself is always stable, and so is
    the empty prefix, which is not listed. Lengths come in increasing order.

    >>> unstable_prefixes("aa", lambda s: [len(s)])  # "a" -> [1], "aa" -> [2]
    [1]
    """
    if not isinstance(text, str):
        raise TypeError(
            f"text must be a str, not {type(text).__name__}: {text!r}"
        )
    full = list(encode(text))
    unstable = []
    for k in range(1, len(text) + 1):
        ids = list(encode(text[:k]))
        # subtle: a longer prefix can encode to *more* ids than the full
        # text near a cut
        if ids != full[: len(ids)]:
            unstable.append(k)
    return unstable
# fmt: on


def digit_groups(number: str, decode: Callable[[int], bytes], ids: Sequence[int]) -> str:
    """How the tokens ``ids`` cut the digits of ``number``, as digit counts joined by ``+``.

    ``decode`` maps one id to its bytes (tiktoken's ``decode_single_token_bytes``). Characters
    that are not digits (a SentencePiece ``▁``) are not counted; a token holding none is left
    out. Raises ValueError when the tokens do not spell ``number``.

    >>> digit_groups("1234", {0: b"123", 1: b"4"}.__getitem__, [0, 1])
    '3+1'
    """
    pieces = [decode(i).decode("utf-8", errors="replace") for i in ids]
    if "".join(c for p in pieces for c in p if c.isdigit()) != number:
        raise ValueError(f"the tokens {pieces!r} do not spell the number {number!r}")
    sizes = [sum(c.isdigit() for c in p) for p in pieces]
    return "+".join(str(n) for n in sizes if n)


def digit_counter(decode: Callable[[int], bytes | str]) -> Callable[[int], int]:
    """A cached function: the number of ASCII digits in the token with a given id.

    ``decode`` maps one id to its bytes (tiktoken's ``decode_single_token_bytes``) or to its
    text (SentencePiece's ``id_to_piece``).

    >>> digit_counter({0: b"12", 1: "\u25811"}.__getitem__)(1)  # a piece "▁1"
    1
    """

    @functools.cache
    def n_digits(token_id: int) -> int:
        token = decode(token_id)
        if isinstance(token, bytes):
            return sum(c in b"0123456789" for c in token)
        return sum(c in "0123456789" for c in token)

    return n_digits


def boundaries(ids: Sequence[int], n_digits: Callable[[int], int], n_places: int = 3) -> set[int]:
    """Place values (digits from the right) where one token ends and the next begins.

    ``n_digits`` gives the number of digits in a token (see :func:`digit_counter`). Only the
    boundaries at place values 1 to ``n_places`` are kept: those of a 4-digit operand.

    >>> sorted(boundaries([0, 1], {0: 3, 1: 1}.__getitem__))  # "123" + "4"
    [1]
    """
    sizes = [n_digits(i) for i in ids]
    ends, total = set(), sum(sizes)
    for size in sizes:
        total -= size
        if 0 < total <= n_places:
            ends.add(total)
    return ends


def misaligned(texts: Sequence[str], encode: Encode, n_digits: Callable[[int], int]) -> float:
    """The share of additions whose operands and sum differ in their token boundaries.

    ``texts`` holds three blocks of equal length: the first operands, the second operands,
    the sums (``texts[i] + texts[n + i] = texts[2n + i]``). An addition is misaligned when
    the three numbers do not have the same :func:`boundaries`.

    >>> one_token = lambda s: [len(s)]  # every number is one token
    >>> misaligned(["5", "6", "11"], one_token, lambda i: i)
    0.0
    """
    if not texts or len(texts) % 3:
        raise ValueError(f"texts must hold three blocks of equal length, got {len(texts)} texts")
    marks = [boundaries(encode(t), n_digits) for t in texts]
    n = len(texts) // 3
    return float(np.mean([not (marks[i] == marks[i + n] == marks[i + 2 * n]) for i in range(n)]))


# fmt: off
def _check_records(records: Sequence[dict]) -> list[str]:
    """The shared keys of ``records``; ValueError naming the first record
    that differs."""
    if (
        not isinstance(records, Sequence)
        or isinstance(records, str | bytes)
        or not records
    ):
        raise ValueError(
            f"records must be a non-empty list of dicts, got {records!r}"
        )
    keys = list(records[0])
    for i, record in enumerate(records):
        if not isinstance(record, dict) or list(record) != keys:
            raise ValueError(
                f"record {i} ({record!r}) does not have the keys {keys} "
                "in order"
            )
        for key, value in record.items():
            if (
                not isinstance(value, str | int | float)
                or isinstance(value, bool)
            ):
                raise ValueError(
                    f"record {i}: value {value!r} of {key!r} "
                    "is not a str or number"
                )
    return keys
# fmt: on


# fmt: off
def render_records(records: Sequence[dict], fmt: str) -> str:
    """The records (dicts with the same keys in the same order) written in
    format ``fmt``.

    - ``"json"``: ``json.dumps(records, indent=2, ensure_ascii=False)``;
    - ``"compact_json"``: ``json.dumps(records, separators=(",", ":"),
      ensure_ascii=False)``;
    - ``"yaml"``: one line per key, ``"- key: value"`` for a record's first
      key and ``"  key: value"`` for the others, the value written by
      ``json.dumps(value, ensure_ascii=False)`` (strings in double quotes,
      valid YAML), lines joined by ``"\\n"``;
    - ``"csv"``: ``csv.writer`` with ``lineterminator="\\n"``: a header row
      of the keys, then one row per record.

    Raises ValueError for an unknown format, an empty list, records whose
    keys differ, or a value that is not a str, int or float.

    >>> print(render_records([{"a": 1, "b": "x"}], "yaml"))
    - a: 1
      b: "x"
    """
    keys = _check_records(records)
    if fmt == "json":
        return json.dumps(list(records), indent=2, ensure_ascii=False)
    if fmt == "compact_json":
        return json.dumps(
            list(records), separators=(",", ":"), ensure_ascii=False
        )
    if fmt == "yaml":
        return "\n".join(
            f"{'- ' if j == 0 else '  '}{key}: "
            f"{json.dumps(record[key], ensure_ascii=False)}"
            for record in records
            for j, key in enumerate(keys)
        )
    if fmt == "csv":
        out = io.StringIO()
        # csv's default ends rows in "\r\n"
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(keys)
        writer.writerows([record[key] for key in keys] for record in records)
        return out.getvalue()
    raise ValueError(
        f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}"
    )
# fmt: on


def format_costs(records: Sequence[dict], encode: Encode) -> dict[str, int]:
    """Tokens of ``records`` in each of :data:`FORMATS`:
    {format: len(encode(text))}.

    The texts are :func:`render_records`'s, keys in the order of
    :data:`FORMATS`.

    >>> one_per_byte = lambda s: list(s.encode())
    >>> format_costs([{"a": 1}], one_per_byte)
    {'json': 22, 'compact_json': 9, 'yaml': 6, 'csv': 4}
    """
    return {fmt: len(encode(render_records(records, fmt))) for fmt in FORMATS}


def bootstrap_ratio(
    numerators: Sequence[float],
    denominators: Sequence[float],
    *,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """A percentile bootstrap interval for ``sum(numerators) / sum(denominators)``.

    The items are pairs (a message's tokens in a language, the same message's tokens in
    English). Each of ``n_resamples`` rounds draws as many pairs as there are, with
    replacement, and takes the ratio of the sums; the interval holds the central ``level`` of
    those ratios. The same ``seed`` gives the same interval.

    >>> bootstrap_ratio([2, 2, 2], [1, 1, 1])  # every pair has ratio 2: no spread
    (2.0, 2.0)
    """
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    if num.ndim != 1 or num.shape != den.shape or not len(num):
        raise ValueError("numerators and denominators must be two non-empty lists of one length")
    if (den < 0).any() or den.sum() <= 0:
        raise ValueError("denominators must be >= 0 with a positive sum")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level!r}")
    rng = np.random.default_rng(seed)
    ratios = np.empty(n_resamples)
    for r in range(n_resamples):  # one round at a time: memory stays that of one sample
        pick = rng.integers(0, len(num), size=len(num))
        ratios[r] = num[pick].sum() / max(den[pick].sum(), 1e-300)
    low, high = np.quantile(ratios, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)
