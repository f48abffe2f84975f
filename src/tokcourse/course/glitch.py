"""Glitch-token candidates (chapter 10): what the tokenizer alone reveals, and what embeddings add.

An *under-trained* token is a property of the weights: a token that was rarely or never an
input during training, so its input row was shaped by little or nothing but its start and,
with tied embeddings, by the softmax. A *glitch* token is a behaviour: the model misbehaves on
it. Under-training is the usual cause of the second. Two kinds of evidence point at candidates:

* from the **tokenizer alone**: tokens that no text can produce as themselves
  (:func:`is_reachable`), byte fragments that are not text (:func:`is_partial_utf8`, and
  :data:`NEVER_IN_UTF8`, bytes that no UTF-8 text contains), tokens that never occur on a
  corpus, and very long tokens;
* from the **embeddings**: rows that sit close to rows known never to have been an input
  (:func:`untrained_distance`, :func:`rank_by_untrained`), scored with :func:`auc` and
  :func:`held_out_auc`; and, on a model one trains, how far each row moved from its start
  (:func:`drift_summary`).

>>> is_partial_utf8(b"\\xc3"), is_partial_utf8("é".encode())
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import tiktoken

#: Byte values that never occur in valid UTF-8: 0xC0 and 0xC1 could only start an overlong
#: (non-shortest) encoding, and 0xF5..0xFF would start a code point above U+10FFFF.
NEVER_IN_UTF8: frozenset[int] = frozenset({0xC0, 0xC1, *range(0xF5, 0x100)})


# The book shows some of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.
# fmt: off
def is_partial_utf8(token_bytes: bytes) -> bool:
    """Whether a token's bytes are *not* valid UTF-8 on their own (a piece of
    a character).

    Strict UTF-8, as Python's decoder checks it: a character cut at either
    end, a stray continuation byte, an overlong form, an encoded surrogate
    or a byte that UTF-8 never uses all make the token partial. The empty
    byte string is valid (it decodes to ``""``).

    >>> # ' €' cut short, then whole
    >>> is_partial_utf8(b" \\xe2\\x82"), is_partial_utf8(b" \\xe2\\x82\\xac")
    (True, False)
    """
    if not isinstance(token_bytes, bytes):
        raise TypeError(
            f"token_bytes must be bytes, not {type(token_bytes).__name__}"
        )
    try:
        token_bytes.decode("utf-8")  # strict: any invalid sequence raises
    except UnicodeDecodeError:
        return True
    return False
# fmt: on


# fmt: off
def is_reachable(token_id: int, encoding: tiktoken.Encoding) -> bool:
    """Whether some text encodes to exactly this one token:
    ``encode_ordinary(text) == [id]``.

    The only candidate text is the token's own: its bytes decoded as
    (strict) UTF-8. A token whose bytes are not valid UTF-8 is unreachable
    (no ``str`` has those bytes), and so is one whose text the encoder cuts
    differently, for instance because the split pattern divides it. Special
    tokens are unreachable too: ordinary text never becomes a special id.
    Raises ValueError for an id that is not a token of ``encoding``.

    >>> import tiktoken
    >>> gpt2 = tiktoken.get_encoding("gpt2")
    >>> is_reachable(gpt2.encode(" hello")[0], gpt2), is_reachable(50256, gpt2)
    (True, False)
    """
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(
            "token_id must be an int, "
            f"not {type(token_id).__name__} {token_id!r}"
        )
    try:
        data = encoding.decode_single_token_bytes(token_id)
    except (KeyError, OverflowError):
        # a gap in the id space, or a negative or huge id
        raise ValueError(
            f"token_id {token_id} is not a token of {encoding.name!r}"
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return encoding.encode_ordinary(text) == [token_id]
# fmt: on


def ordinary_tokens(encoding: tiktoken.Encoding) -> dict[int, bytes]:
    """Every ordinary (non-special) token of ``encoding``: id -> bytes, in id order.

    Gaps in the id space (cl100k has unused ids) are skipped.

    >>> import tiktoken
    >>> len(ordinary_tokens(tiktoken.get_encoding("gpt2")))
    50256
    """
    specials = set(encoding.special_tokens_set)
    special_ids = {encoding.encode_single_token(s) for s in specials}
    out: dict[int, bytes] = {}
    for i in range(encoding.n_vocab):
        if i in special_ids:
            continue
        try:
            out[i] = encoding.decode_single_token_bytes(i)
        except KeyError:
            continue
    return out


def wordpiece_ruled_out(token: str, tokenizer: Any) -> bool:
    """Whether a BERT-style tokenizer can never produce ``token``: its own rules forbid it.

    WordPiece runs on the pieces its normalizer and pre-tokenizer leave. A vocabulary entry
    ``w`` (or ``##w``, the continuation of a word: tried after a letter, as ``"q" + w``) is
    ruled out when normalization changes that text (lower-casing, accents stripped) or the
    pre-tokenizer cuts it (punctuation and CJK characters always stand alone). ``False`` means
    only "not ruled out by those rules". Bracketed entries (``[CLS]``, ``[unused0]``) are
    special and never ruled out here. ``tokenizer`` is a Hugging Face ``tokenizers.Tokenizer``.

    >>> from tokenizers import Tokenizer
    >>> from tokcourse import assets
    >>> bert = Tokenizer.from_file(str(assets.minilm_tokenizer_json_path()))
    >>> wordpiece_ruled_out("##s", bert), wordpiece_ruled_out("##後", bert)
    (False, True)
    """
    if token.startswith("[") and token.endswith("]"):
        return False
    text = "q" + token[2:] if token.startswith("##") else token
    normalized = tokenizer.normalizer.normalize_str(text)
    pieces = [piece for piece, _ in tokenizer.pre_tokenizer.pre_tokenize_str(normalized)]
    return pieces != [text]


# fmt: off
def _check_embeddings(
    embeddings: np.ndarray,
    reference_ids: Iterable[int],
) -> list[int]:
    if not isinstance(embeddings, np.ndarray) or embeddings.ndim != 2:
        shape = getattr(embeddings, "shape", type(embeddings).__name__)
        raise ValueError(
            "embeddings must be a 2-D numpy array (tokens x dims), "
            f"got {shape}"
        )
    refs = list(reference_ids)
    if not refs:
        raise ValueError(
            "reference_ids is empty: "
            "at least one row must serve as the reference"
        )
    n = embeddings.shape[0]
    for r in refs:
        if (
            isinstance(r, bool)
            or not isinstance(r, (int, np.integer))
            or not 0 <= r < n
        ):
            raise ValueError(
                f"reference id {r!r} is not a row of embeddings (0..{n - 1})"
            )
    return [int(r) for r in refs]
# fmt: on


def untrained_distance(
    embeddings: np.ndarray,
    reference_ids: Sequence[int],
) -> np.ndarray:
    """Euclidean distance of every row to the mean of the reference rows
    (float64).

    The reference rows are tokens known to be untrained (BERT's
    ``[unused…]``); a small distance means "looks like them". Raises
    ValueError for a matrix that is not 2-D, an empty reference or a
    reference id out of range.

    >>> untrained_distance(np.array([[0.0, 0.0], [3.0, 4.0]]), [0]).tolist()
    [0.0, 5.0]
    """
    refs = _check_embeddings(embeddings, reference_ids)
    # a copy: the caller's matrix is never changed
    rows = embeddings.astype(np.float64)
    centre = rows[refs].mean(axis=0)
    return np.sqrt(((rows - centre) ** 2).sum(axis=1))


def rank_by_untrained(
    embeddings: np.ndarray,
    reference_ids: Sequence[int],
) -> list[int]:
    """Every row id, closest to the mean of the reference rows first
    (Euclidean distance).

    All rows are ranked, the reference rows included; equal distances keep
    the smaller id first. The result is a list of Python ints, a
    permutation of ``range(len(embeddings))``.

    >>> rank_by_untrained(np.array([[5.0], [0.0], [1.0], [-1.0]]), [1])
    [1, 2, 3, 0]
    """
    distance = untrained_distance(embeddings, reference_ids)
    # a stable sort: among equal distances, ids stay in increasing order
    return np.argsort(distance, kind="stable").tolist()


def auc(scores: np.ndarray, positive: np.ndarray, negative: np.ndarray) -> float:
    """P(a random positive row scores *lower* than a random negative one), ties counting half.

    The area under the ROC curve for a score where low means "looks untrained" (a distance,
    a norm): 1.0 separates perfectly, 0.5 is chance. ``positive`` and ``negative`` select
    rows of ``scores`` (boolean masks or id arrays); neither may be empty.

    >>> auc(np.array([0.1, 0.2, 0.9, 0.2]), np.array([0, 1]), np.array([2, 3]))
    0.875
    """
    scores = np.asarray(scores, dtype=np.float64)
    pos, neg = scores[np.asarray(positive)], np.sort(scores[np.asarray(negative)])
    if pos.size == 0 or neg.size == 0:
        raise ValueError("auc needs at least one positive and one negative row")
    above = np.searchsorted(neg, pos, side="right")  # negatives scoring <= each positive
    ties = above - np.searchsorted(neg, pos, side="left")
    wins = (neg.size - above) + 0.5 * ties
    return float(wins.sum() / (pos.size * neg.size))


def held_out_auc(
    embeddings: np.ndarray,
    reference_ids: Sequence[int],
    negative_ids: Sequence[int],
    *,
    seed: int = 0,
) -> float:
    """The distance indicator scored on rows it did not use: :func:`auc` on a held-out half.

    The reference rows are shuffled with ``numpy.random.default_rng(seed)`` and cut in two
    (the first half one row shorter when their number is odd); the mean of the first half is
    the reference, and the second half, against ``negative_ids``, is scored by their
    distance to it. Needs at least two reference rows.

    >>> e = np.array([[0.0], [0.1], [0.2], [5.0], [6.0]])
    >>> held_out_auc(e, [0, 1, 2], [3, 4])
    1.0
    """
    refs = _check_embeddings(embeddings, reference_ids)
    if len(refs) < 2:
        raise ValueError("held_out_auc needs at least two reference rows to split")
    shuffled = np.random.default_rng(seed).permutation(refs)
    half = len(shuffled) // 2
    distance = untrained_distance(embeddings, shuffled[:half].tolist())
    return auc(distance, shuffled[half:], np.asarray(list(negative_ids), dtype=np.int64))


def drift_summary(initial: np.ndarray, final: np.ndarray, rows: np.ndarray) -> dict[str, float]:
    """How the selected ``rows`` of an embedding moved in training, as medians (float).

    ``drift``: the distance of each row from its start; ``norm_before``, ``norm_after``: the
    rows' lengths; ``spread``: each row's distance to the mean of the selected rows (after
    training); ``cosine``: the mean cosine between the moves of two different rows (1.0: all
    in one direction; ``nan`` when fewer than two rows moved).

    >>> start = np.zeros((3, 2))
    >>> drift_summary(start, np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 5.0]]), np.array([0, 1]))
    {'drift': 1.5, 'norm_before': 0.0, 'norm_after': 1.5, 'spread': 0.5, 'cosine': 1.0}
    """
    before = np.asarray(initial, dtype=np.float64)[rows]
    after = np.asarray(final, dtype=np.float64)[rows]
    move = after - before
    length = np.linalg.norm(move, axis=1)
    moved = move[length > 0] / length[length > 0, None]
    n = len(moved)
    cosine = ((moved.sum(axis=0) ** 2).sum() - n) / (n * (n - 1)) if n > 1 else float("nan")
    return {
        "drift": float(np.median(length)),
        "norm_before": float(np.median(np.linalg.norm(before, axis=1))),
        "norm_after": float(np.median(np.linalg.norm(after, axis=1))),
        "spread": float(np.median(np.linalg.norm(after - after.mean(axis=0), axis=1))),
        "cosine": float(cosine),
    }
