"""Glitch-token candidates (chapter 10): what the tokenizer alone reveals, and what embeddings add.

A glitch token is a token the model has (almost) never seen in training, so its embedding row
is close to where it started. Two kinds of evidence point at candidates:

* from the **tokenizer alone**: tokens that no text can produce as themselves
  (:func:`is_reachable`), byte fragments that are not text (:func:`is_partial_utf8`, and
  :data:`NEVER_IN_UTF8`, bytes that no UTF-8 text contains), tokens that never occur on a
  corpus, very long tokens, and near-duplicates (:func:`near_duplicate_key`);
* from the **embeddings**: rows that sit close to rows known to be untrained
  (:func:`untrained_distance`, :func:`rank_by_untrained`).

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


def is_partial_utf8(token_bytes: bytes) -> bool:
    """Whether a token's bytes are *not* valid UTF-8 on their own (a piece of a character).

    Strict UTF-8, as Python's decoder checks it: a character cut at either end, a stray
    continuation byte, an overlong form, an encoded surrogate or a byte that UTF-8 never uses
    all make the token partial. The empty byte string is valid (it decodes to ``""``).

    >>> is_partial_utf8(b" \\xe2\\x82"), is_partial_utf8(b" \\xe2\\x82\\xac")  # ' €' cut, whole
    (True, False)
    """
    if not isinstance(token_bytes, bytes):
        raise TypeError(f"token_bytes must be bytes, not {type(token_bytes).__name__}")
    try:
        token_bytes.decode("utf-8")  # strict: any invalid sequence raises
    except UnicodeDecodeError:
        return True
    return False


def is_reachable(token_id: int, encoding: tiktoken.Encoding) -> bool:
    """Whether some text encodes to exactly this one token: ``encode_ordinary(text) == [id]``.

    The only candidate text is the token's own: its bytes decoded as (strict) UTF-8. A token
    whose bytes are not valid UTF-8 is unreachable (no ``str`` has those bytes), and so is one
    whose text the encoder cuts differently, for instance because the split pattern divides it.
    Special tokens are unreachable too: ordinary text never becomes a special id. Raises
    ValueError for an id that is not a token of ``encoding``.

    >>> import tiktoken
    >>> gpt2 = tiktoken.get_encoding("gpt2")
    >>> is_reachable(gpt2.encode(" hello")[0], gpt2), is_reachable(50256, gpt2)
    (True, False)
    """
    if isinstance(token_id, bool) or not isinstance(token_id, int):
        raise TypeError(f"token_id must be an int, not {type(token_id).__name__} {token_id!r}")
    try:
        data = encoding.decode_single_token_bytes(token_id)
    except (KeyError, OverflowError):  # a gap in the id space, or a negative or huge id
        raise ValueError(f"token_id {token_id} is not a token of {encoding.name!r}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return encoding.encode_ordinary(text) == [token_id]


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


def near_duplicate_key(text: str) -> str:
    """The form two near-duplicate tokens share: one leading space dropped, case folded.

    ``" The"``, ``"the"`` and ``"THE"`` all have the key ``"the"``.

    >>> near_duplicate_key(" SolidGold"), near_duplicate_key("solidgold")
    ('solidgold', 'solidgold')
    """
    return text.removeprefix(" ").casefold()


def near_duplicate_groups(tokens: dict[int, str]) -> dict[str, list[int]]:
    """Tokens grouped by :func:`near_duplicate_key`, only groups of two or more, ids sorted.

    >>> near_duplicate_groups({5: "the", 7: " The", 9: "dog"})
    {'the': [5, 7]}
    """
    groups: dict[str, list[int]] = {}
    for i in sorted(tokens):
        groups.setdefault(near_duplicate_key(tokens[i]), []).append(i)
    return {key: ids for key, ids in groups.items() if len(ids) > 1}


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


def _check_embeddings(embeddings: np.ndarray, reference_ids: Iterable[int]) -> list[int]:
    if not isinstance(embeddings, np.ndarray) or embeddings.ndim != 2:
        shape = getattr(embeddings, "shape", type(embeddings).__name__)
        raise ValueError(f"embeddings must be a 2-D numpy array (tokens x dims), got {shape}")
    refs = list(reference_ids)
    if not refs:
        raise ValueError("reference_ids is empty: at least one row must serve as the reference")
    n = embeddings.shape[0]
    for r in refs:
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 0 <= r < n:
            raise ValueError(f"reference id {r!r} is not a row of embeddings (0..{n - 1})")
    return [int(r) for r in refs]


def untrained_distance(embeddings: np.ndarray, reference_ids: Sequence[int]) -> np.ndarray:
    """Euclidean distance of every row to the mean of the reference rows (float64).

    The reference rows are tokens known to be untrained (BERT's ``[unused…]``); a small
    distance means "looks like them". Raises ValueError for a matrix that is not 2-D, an empty
    reference or a reference id out of range.

    >>> untrained_distance(np.array([[0.0, 0.0], [3.0, 4.0]]), [0]).tolist()
    [0.0, 5.0]
    """
    refs = _check_embeddings(embeddings, reference_ids)
    rows = embeddings.astype(np.float64)  # a copy: the caller's matrix is never changed
    centre = rows[refs].mean(axis=0)
    return np.sqrt(((rows - centre) ** 2).sum(axis=1))


def rank_by_untrained(embeddings: np.ndarray, reference_ids: Sequence[int]) -> list[int]:
    """Every row id, closest to the mean of the reference rows first (Euclidean distance).

    All rows are ranked, the reference rows included; equal distances keep the smaller id
    first. The result is a list of Python ints, a permutation of ``range(len(embeddings))``.

    >>> rank_by_untrained(np.array([[5.0], [0.0], [1.0], [-1.0]]), [1])
    [1, 2, 3, 0]
    """
    distance = untrained_distance(embeddings, reference_ids)
    # a stable sort: among equal distances, ids stay in increasing order
    return np.argsort(distance, kind="stable").tolist()
