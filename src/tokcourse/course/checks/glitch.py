"""Glitch tokens (chapter 10): is_partial_utf8, is_reachable, rank_by_untrained.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine. The encodings the
``is_reachable`` check runs are tiny tiktoken encodings built here, so the check needs no
download and copies of its arguments are cheap.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import tiktoken

from tokcourse.course import glitch
from tokcourse.course.answers import BOOL, INT, list_of
from tokcourse.course.exercises import Case, Entry, Exercise, Names, Raised
from tokcourse.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN

RANKING = list_of(INT)

# --- is_partial_utf8 ---------------------------------------------------------------------------

#: Curated byte strings: whole characters, characters cut at either end, stray continuation
#: bytes, and the invalid forms a hand-written checker tends to let through.
PARTIAL_CASES = (
    b"",
    b"a",
    b" the",
    b"\xc3",  # the first byte of 'é'
    b"\xa9",  # its second byte
    b"\xc3\xa9",  # 'é', whole
    b" \xe2\x82",  # ' €' cut after two of its three bytes
    b" \xe2\x82\xac",  # ' €', whole
    b"\x82\xac",  # the end of '€': starts in the middle of a character
    b"\xa9 the",  # a continuation byte, then ordinary text
    b"\xf0\x9f\x99\x82",  # '🙂', whole
    b"\xf0\x9f\x99",  # '🙂' without its last byte
    b"\xef\xbf\xbd",  # U+FFFD, the replacement character itself: valid
    b"\xc0\x80",  # an overlong form of NUL
    b"\xe0\x80\xaf",  # an overlong '/'
    b"\xed\xa0\x80",  # an encoded surrogate (U+D800)
    b"\xf4\x90\x80\x80",  # above U+10FFFF
    b"\xff",  # a byte UTF-8 never uses
    b"\xe6\x97\xa5\xe6\x9c",  # '日' whole, then '本' cut
)


def _is_partial_utf8_cases() -> Iterator[Case]:
    for data in PARTIAL_CASES:
        yield Case((data,))
    rng = random.Random(10)
    text = "the café 日本語 🙂 naïve € x"
    encoded = text.encode("utf-8")
    for _ in range(40):  # random slices of real text: many cut characters at either end
        a = rng.randrange(len(encoded))
        b = rng.randrange(a + 1, min(len(encoded), a + 8) + 1)
        yield Case((encoded[a:b],))


def _valid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _partial_inverted_hint(case: Case, expected: Any, got: Any) -> str | None:
    (data,) = case.args
    if isinstance(got, bool) and got == _valid(data) and got != expected:
        return (
            "inverted? is_partial_utf8 is True when the bytes are NOT valid UTF-8 on their "
            f"own; {data!r} {'is' if _valid(data) else 'is not'} valid, so the answer is "
            f"{not _valid(data)}."
        )
    return None


def _partial_fffd_hint(case: Case, expected: Any, got: Any) -> str | None:
    (data,) = case.args
    if expected is False and got is True and "\ufffd" in data.decode("utf-8"):
        return (
            "U+FFFD (b'\\xef\\xbf\\xbd') is a real character, valid UTF-8: finding '\\ufffd' "
            "after decoding with errors='replace' does not mean the bytes were broken. Decode "
            "strictly and catch UnicodeDecodeError."
        )
    return None


def _partial_whole_hint(case: Case, expected: Any, got: Any) -> str | None:
    (data,) = case.args
    if expected is False and got is True and any(b >= 0x80 for b in data):
        return (
            f"{data!r} is whole characters (it decodes to {data.decode('utf-8')!r}): bytes "
            "above 0x7F are not partial by themselves, only a character cut short is."
        )
    return None


def _partial_invalid_form_hint(case: Case, expected: Any, got: Any) -> str | None:
    (data,) = case.args
    if expected is True and got is False and _looks_complete(data):
        return (
            f"{data!r} has lead and continuation bytes in the right places, but UTF-8 forbids "
            "it (an overlong form, a surrogate, or a code point above U+10FFFF). Let Python's "
            "strict decoder judge: bytes.decode('utf-8') raises UnicodeDecodeError."
        )
    return None


def _partial_start_hint(case: Case, expected: Any, got: Any) -> str | None:
    (data,) = case.args
    if expected is True and got is False and data and 0x80 <= data[0] < 0xC0:
        return (
            f"{data!r} starts with a continuation byte (0x80-0xBF): a token can begin in the "
            "middle of a character, not only end there. Check the whole token."
        )
    return None


def _partial_end_hint(case: Case, expected: Any, got: Any) -> str | None:
    (data,) = case.args
    if expected is True and got is False:
        return (
            f"{data!r} is not valid UTF-8 on its own (a character is cut short or a byte "
            "cannot occur in UTF-8): it is partial, so the answer is True."
        )
    return None


def _looks_complete(data: bytes) -> bool:
    """Every lead byte followed by the right number of continuation bytes (form errors aside)."""
    i = 0
    while i < len(data):
        b = data[i]
        if b < 0x80:
            i += 1
            continue
        n = 1 if 0xC0 <= b < 0xE0 else 2 if 0xE0 <= b < 0xF0 else 3 if 0xF0 <= b < 0xF8 else -1
        tail = data[i + 1 : i + 1 + n]
        if n < 0 or len(tail) != n or any(not 0x80 <= c < 0xC0 for c in tail):
            return False
        i += n + 1
    return True


# --- is_reachable ------------------------------------------------------------------------------


class TinyEncoding(tiktoken.Encoding):
    """A small tiktoken encoding for the check: equal to its copies, shown by its name."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TinyEncoding) and (
            (self.name, self._pat_str, self._mergeable_ranks, self._special_tokens)
            == (other.name, other._pat_str, other._mergeable_ranks, other._special_tokens)
        )

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"<{self.name}>"


EOT = "<|endoftext|>"

#: The merged tokens of the two tiny encodings, in rank order after the 256 single bytes.
TINY_TOKENS = {
    "tiny_gpt2": [
        b" t", b"he", b" the", b"a.", b"\xc3\xa9", b" \xc3", b"\xef\xbf", b"\xef\xbf\xbd",
        b"  ", b"x1", b"'s", b"\n\n", b" '", b" 's", b" caf\xc3\xa9",
    ],
    "tiny_cl100k": [
        b"12", b"123", b"1234", b" t", b"he", b" the", b"\n\n", b"  ", b" \n", b"'S", b"a.",
        b"\xe6\x97\xa5", b"\xe6\x97",
    ],
}  # fmt: skip
_PATTERNS = {"tiny_gpt2": GPT2_SPLIT_PATTERN, "tiny_cl100k": GPT4_SPLIT_PATTERN}
#: the special token's id leaves a gap of unused ids before it, as cl100k does
_SPECIAL_ID = 300


def tiny_encoding(name: str) -> TinyEncoding:
    """One of the check's small encodings: 256 bytes, a few merged tokens, ``<|endoftext|>``.

    >>> tiny_encoding("tiny_gpt2").encode_ordinary("a.")
    [97, 46]
    """
    ranks = {bytes([b]): b for b in range(256)}
    for token in TINY_TOKENS[name]:
        ranks[token] = len(ranks)
    return TinyEncoding(
        name, pat_str=_PATTERNS[name], mergeable_ranks=ranks, special_tokens={EOT: _SPECIAL_ID}
    )


def _is_reachable_cases() -> Iterator[Case]:
    for name in TINY_TOKENS:
        enc = tiny_encoding(name)
        n_merged = 256 + len(TINY_TOKENS[name])
        for i in [*range(256, n_merged), ord("a"), ord(" "), 0xC3, 0xFF, _SPECIAL_ID]:
            yield Case((i, enc))
        for i in (n_merged, _SPECIAL_ID - 1, _SPECIAL_ID + 1, -1):  # not tokens
            yield Case((i, enc))
    rng = random.Random(10)
    for _ in range(10):
        enc = tiny_encoding(rng.choice(list(TINY_TOKENS)))
        yield Case((rng.randrange(256), enc))


def _token_of(case: Case) -> bytes | None:
    token_id, enc = case.args
    try:
        return enc.decode_single_token_bytes(token_id)
    except (KeyError, OverflowError):
        return None


def _reachable_not_a_token_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(expected, Raised):
        return None
    token_id, enc = case.args
    if isinstance(got, (KeyError, OverflowError)):
        return (
            f"{token_id} is not a token of {enc.name}, and looking it up raised "
            f"{type(got).__name__}: catch it and raise ValueError naming the id instead."
        )
    if isinstance(got, bool):
        return (
            f"{token_id} is not a token of {enc.name} (a gap in the id space, or out of "
            "range): that is a mistake of the caller, raise ValueError naming the id rather "
            "than answer."
        )
    return None


def _reachable_special_hint(case: Case, expected: Any, got: Any) -> str | None:
    token_id, enc = case.args
    if got is True and token_id in enc._special_tokens.values():
        return (
            f"{token_id} is a special token: ordinary text never becomes it. Use "
            "encode_ordinary, which treats '<|endoftext|>' as plain text (not encode with "
            "allowed_special)."
        )
    return None


def _reachable_partial_hint(case: Case, expected: Any, got: Any) -> str | None:
    data = _token_of(case)
    if got is True and data is not None and not _valid(data):
        return (
            f"the token's bytes {data!r} are not valid UTF-8, so no str encodes to them: "
            "decode strictly (errors='strict', the default) and answer False on "
            "UnicodeDecodeError; errors='replace' turns them into another text."
        )
    return None


def _reachable_split_hint(case: Case, expected: Any, got: Any) -> str | None:
    data = _token_of(case)
    if got is True and expected is False and data is not None and _valid(data):
        token_id, enc = case.args
        ids = enc.encode_ordinary(data.decode("utf-8"))
        return (
            f"encode_ordinary({data.decode('utf-8')!r}) is {ids}, not [{token_id}]: the "
            "encoder splits the text with its pattern first. Run the encoder and compare its "
            "ids; looking the bytes up in the table (encode_single_token) skips that step."
        )
    return None


def _reachable_list_hint(case: Case, expected: Any, got: Any) -> str | None:
    if expected is True and got is False:
        token_id, enc = case.args
        text = _token_of(case).decode("utf-8")  # type: ignore[union-attr]
        return (
            f"encode_ordinary({text!r}) is exactly [{token_id}], so the token is reachable. "
            "encode_ordinary returns a list: compare it with [token_id], not with token_id."
        )
    return None


# --- rank_by_untrained -------------------------------------------------------------------------


def _exact_sq_distances(matrix: np.ndarray, refs: list[int]) -> list[Fraction]:
    rows = [[Fraction(float(x)) for x in row] for row in matrix]
    centre = [sum(rows[r][j] for r in refs) / len(refs) for j in range(matrix.shape[1])]
    return [sum((x - c) ** 2 for x, c in zip(row, centre, strict=True)) for row in rows]


def _fair(matrix: np.ndarray, refs: list[int]) -> bool:
    """Equal exact distances only between identical rows: no order hangs on rounding."""
    seen: dict[Fraction, tuple] = {}
    for row, d in zip(matrix.tolist(), _exact_sq_distances(matrix, refs), strict=True):
        if seen.setdefault(d, tuple(row)) != tuple(row):
            return False
    return True


def _matrix(rng: np.random.Generator, n: int, d: int, dtype: type = np.float64) -> np.ndarray:
    return rng.integers(-4, 5, size=(n, d)).astype(dtype)


def _rank_by_untrained_cases() -> Iterator[Case]:
    yield Case((np.array([[5.0], [0.0], [1.0], [-1.0]]), [1]))
    yield Case((np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]), [0]))
    yield Case((np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0], [9.0, 9.0]]), [0, 1]))  # the mean
    yield Case((np.array([[1.0], [1.0], [0.0], [1.0]]), [2]), rule="keep increasing id order")
    yield Case((np.array([[4.0, 0.0], [0.0, 1.0], [3.0, 0.0]]), [0, 2]))  # mean is no row
    yield Case((np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 0.0], [0.0, 1.0]], np.float32), [3]))
    yield Case((np.array([[3.0, 0.0], [-1.0, 0.0], [0.0, 1.0]]), [1]))  # cosine disagrees
    rng = np.random.default_rng(10)
    made = 0
    while made < 25:
        n, d = int(rng.integers(3, 12)), int(rng.integers(1, 4))
        matrix = _matrix(rng, n, d, np.float32 if rng.random() < 0.3 else np.float64)
        refs = sorted(int(i) for i in rng.choice(n, size=int(rng.choice([1, 2, 4][: n - 1])),
                                                  replace=False))  # fmt: skip
        if _fair(matrix, refs):
            yield Case((matrix, refs))
            made += 1
    # many equal rows, more than numpy's small-array sort handles: ties must stay in id order
    base = _matrix(rng, 4, 2)
    yield Case((base[rng.integers(0, 4, size=40)], [0, 1]))


def _as_list(answer: Any) -> Any:
    """An array of ids compares as its list (the type rule alone rejects an array)."""
    return answer.tolist() if isinstance(answer, np.ndarray) else answer


def _ranked(expected: Any, got: Any) -> bool:
    return isinstance(expected, list) and isinstance(got, list) and len(got) == len(expected)


def _rank_all_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, list) and isinstance(got, list) and len(got) != len(expected):
        return (
            f"the answer has {len(got)} ids for {len(expected)} rows: rank every row, the "
            "reference rows too (they should come first)."
        )
    return None


def _rank_reversed_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not _ranked(expected, got):
        return None
    distance = glitch.untrained_distance(*case.args)
    if [distance[i] for i in got] == sorted(distance.tolist(), reverse=True):
        return (
            "that is the farthest row first: the ranking starts with the rows *closest* to the "
            "reference (smallest distance), the ones that look untrained."
        )
    return None


def _rank_ties_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not _ranked(expected, got):
        return None
    distance = glitch.untrained_distance(*case.args)
    if sorted(got) == sorted(expected) and [distance[i] for i in got] == [
        distance[i] for i in expected
    ]:
        return (
            "the distances are in the right order, but rows at equal distance are not in "
            "increasing id order: use a stable sort (np.argsort(..., kind='stable') or "
            "sorted(), which is stable) and do not reverse it."
        )
    return None


def _rank_cosine_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not _ranked(expected, got):
        return None
    matrix, refs = case.args
    rows = matrix.astype(np.float64)
    centre = rows[refs].mean(axis=0)
    with np.errstate(all="ignore"):
        cosine = 1 - rows @ centre / (np.linalg.norm(rows, axis=1) * np.linalg.norm(centre))
    # a zero row or a zero mean has no angle: however an answer filled those in, say so
    orders = [np.argsort(np.nan_to_num(cosine, nan=fill), kind="stable").tolist()
              for fill in (0.0, np.inf, -np.inf)]  # fmt: skip
    if got in orders:
        return (
            "that is the order of cosine distance (angles only); the exercise ranks by "
            "Euclidean distance to the mean reference row, which also sees how long a row is."
        )
    return None


def _rank_centre_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not _ranked(expected, got):
        return None
    matrix, refs = case.args
    rows = matrix.astype(np.float64)
    for what, centre in (
        ("the mean of all rows", rows.mean(axis=0)),
        ("the sum of the reference rows", rows[refs].sum(axis=0)),
        ("the first reference row alone", rows[refs[0]]),
    ):
        distance = np.sqrt(((rows - centre) ** 2).sum(axis=1))
        if got == np.argsort(distance, kind="stable").tolist():
            return (
                f"that ranks by distance to {what}; the reference point is the mean of the "
                "reference rows: embeddings[reference_ids].mean(axis=0)."
            )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "is_partial_utf8": Entry(
        "is_partial_utf8(token_bytes) -> bool (not valid UTF-8 on its own)",
        lambda: Exercise(
            "is_partial_utf8",
            glitch.is_partial_utf8,
            _is_partial_utf8_cases,
            returns=BOOL,
            hints=(
                _partial_fffd_hint,
                _partial_whole_hint,
                _partial_invalid_form_hint,
                _partial_start_hint,
                _partial_end_hint,
                _partial_inverted_hint,  # last: any wrong answer is the inverse of one input
            ),
        ),
    ),
    "is_reachable": Entry(
        "is_reachable(token_id, encoding) -> bool (encode_ordinary(text) == [token_id])",
        lambda: Exercise(
            "is_reachable",
            glitch.is_reachable,
            _is_reachable_cases,
            returns=BOOL,
            names=Names("naming it", lambda case: [str(case.args[0])], "the id"),
            hints=(
                _reachable_not_a_token_hint,
                _reachable_special_hint,
                _reachable_partial_hint,
                _reachable_split_hint,
                _reachable_list_hint,
            ),
        ),
    ),
    "rank_by_untrained": Entry(
        "rank_by_untrained(embeddings, reference_ids) -> list of row ids, closest first",
        lambda: Exercise(
            "rank_by_untrained",
            glitch.rank_by_untrained,
            _rank_by_untrained_cases,
            normalize=_as_list,
            returns=RANKING,
            hints=(
                _rank_all_hint,
                _rank_centre_hint,
                _rank_reversed_hint,
                _rank_ties_hint,
                _rank_cosine_hint,
            ),
        ),
    ),
}
