"""The Tokenizer base class: vocabulary, encode, decode, special tokens, save and load.

A tokenizer is three tables and a rule:

- ``merges``: ``{(a, b): new_id}``, learned by BPE; a lower id means an earlier merge, and
  encoding applies merges in that order.
- ``vocab``: ``{id: bytes}``, derived from the merges (``vocab[new_id] = vocab[a] + vocab[b]``).
- ``special_tokens``: ``{name: id}``, tokens that never come out of BPE.
- ``pattern``: the split pattern (``None`` = the whole text is one chunk).

Subclasses (``BasicTokenizer``, ``RegexTokenizer``) add training; the pretrained GPT
tokenizers fill the tables from tiktoken. This class alone can encode, decode, save and load.

>>> tok = Tokenizer()                 # no merges yet: one token per byte
>>> tok.encode("hi!")
[104, 105, 33]
>>> tok.decode([104, 105, 33])
'hi!'
"""

from __future__ import annotations

import operator
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence, Set
from typing import Literal

import regex

from . import bpe, patterns, special
from .bpe import build_vocab
from .fast_encode import FastEncoder
from .model_file import (
    FORMAT_VERSION,
    MAX_TOKEN_ID,
    ModelData,
    model_text,
    parse_model,
    read_model,
    render_token,
    vocab_text,
    write_atomic,
)
from .patterns import GPT4_SPLIT_PATTERN, KNOWN_PATTERNS, compile_pattern, compile_trusted
from .stream import encode_iterable
from .utf8 import _fix_surrogates

__all__ = ["FORMAT_VERSION", "MAX_TOKEN_ID", "Tokenizer", "encode_ordinary", "render_token"]

_IDENTITY = tuple(range(256))


def _token_id(value: object, where: str = "") -> int:
    """Validate one token id. Subtle: ``True`` is an ``int`` in Python; we refuse it anyway,
    since a bool where an id belongs is a bug, not a request for token 1."""
    if isinstance(value, bool):
        raise TypeError(f"token ids must be ints, got the bool {value!r}{where}")
    try:
        return operator.index(value)  # int, numpy integer, ...
    except TypeError:
        raise TypeError(
            f"token ids must be ints, got {type(value).__name__} {value!r}{where}"
        ) from None


def _check_utf8(value: str, what: str) -> None:
    """Refuse a str that UTF-8 cannot encode (a lone surrogate): ``save`` could not write it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"{what} {value!r:.80} is not valid Unicode: it holds the lone surrogate "
            f"{value[err.start]!r} at position {err.start}, which a file cannot store"
        ) from None


def _check_special(name: object, idx: object, vocab: Mapping[int, bytes], known: dict) -> int:
    """Refuse a special token that is unnamed, or whose id is not free; return the id."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a special token name must be a non-empty str, got {name!r}")
    _check_utf8(name, "special token")
    idx = _token_id(idx, f" for special token {name!r}")
    if idx < 0:
        raise ValueError(f"special token {name!r} has a negative id {idx}")
    if idx > MAX_TOKEN_ID:
        raise ValueError(
            f"special token {name!r} has the id {idx}, above the largest token id "
            f"{MAX_TOKEN_ID} (2**32 - 1: ids are unsigned 32-bit integers, as in tiktoken)"
        )
    if idx in vocab:
        raise ValueError(
            f"special token {name!r} would take id {idx}, already the ordinary token "
            f"{vocab[idx]!r}; use an id of at least {max(vocab) + 1}"
        )
    if name in known and known[name] != idx:
        raise ValueError(f"special token {name!r} already has id {known[name]}, not {idx}")
    for other, other_idx in known.items():
        if other_idx == idx and other != name:
            raise ValueError(f"special token {name!r}: id {idx} is already {other!r}")
    return idx


# The book shows this function, in a code column 79 characters wide: between
# "fmt: off" and "fmt: on" it keeps the line breaks written for it.
# fmt: off
def encode_ordinary(
    text: str,
    merges: Mapping[tuple[int, int], int],
    pattern: str | regex.Pattern | None = GPT4_SPLIT_PATTERN,
    byte_ids: Sequence[int] | None = None,
) -> list[int]:
    """Split ``text`` with ``pattern``, then run BPE on each chunk on its
    own.

    Merges never cross a chunk boundary: ``"dog."`` and ``"dog!"`` both
    start with the token ``"dog"``. ``pattern=None`` means no split (a basic
    tokenizer).

    >>> # "e ": only a tokenizer trained without a split has it
    >>> merges = {(101, 32): 256}
    >>> encode_ordinary("the end", merges, pattern=None)
    [116, 104, 256, 101, 110, 100]
    >>> encode_ordinary("the end", merges)  # GPT-4's split: "the", " end"
    [116, 104, 101, 32, 101, 110, 100]
    """
    # module names, not bare split/encode: pasted as a solution (chapter 12),
    # this must not replace a student's own split or encode with the course's
    chunks = (
        ([text] if text else [])
        if pattern is None
        else patterns.split(text, pattern)
    )
    ids: list[int] = []
    for chunk in chunks:
        ids.extend(bpe.encode(chunk, merges, byte_ids))
    return ids
# fmt: on


class Tokenizer:
    """Base class: holds the tables and implements encode/decode/save/load on them."""

    def __init__(self, pattern: str | None = None) -> None:
        self.merges: dict[tuple[int, int], int] = {}
        self.special_tokens: dict[str, int] = {}
        # byte_shuffle[b] is the id of the one-byte token b. Ours is the identity; GPT tokenizers
        # number their 256 byte tokens in another order (see pretrained.py).
        self.byte_shuffle: tuple[int, ...] = _IDENTITY
        self.pattern = pattern  # validated and compiled by the property below
        self.vocab: dict[int, bytes] = self._build_vocab()
        self._fast: tuple | None = None  # (tables it was built from, FastEncoder), see fast_encoder

    def __getstate__(self) -> dict:
        """Pickle the tables, not the fast encoder (it is rebuilt on first use)."""
        state = self.__dict__.copy()
        state["_fast"] = None
        return state

    # ------------------------------------------------------------------ tables
    @property
    def pattern(self) -> str | None:
        """The split pattern (``None``: no split). Setting it compiles it, or raises."""
        return self._pattern

    @pattern.setter
    def pattern(self, pattern: str | None) -> None:
        if isinstance(pattern, str):
            _check_utf8(pattern, "split pattern")
        self._compiled = None if pattern is None else compile_pattern(pattern)
        self._pattern = pattern

    def _build_vocab(self) -> dict[int, bytes]:
        """``{id: bytes}`` for the 256 byte tokens and every merge (specials are separate)."""
        return build_vocab(self.merges, self.byte_shuffle)

    @property
    def n_vocab(self) -> int:
        """One more than the largest id, as in tiktoken: the rows an embedding table needs.

        Not always the number of tokens: GPT-4's ids have gaps (100256, 100261..100275).

        >>> Tokenizer().n_vocab
        256
        """
        return max([*self.vocab, *self.special_tokens.values()]) + 1

    def register_special_tokens(self, special_tokens: Mapping[str, int]) -> None:
        """Add special tokens ``{name: id}`` (unlike minbpe, existing ones are kept).

        Ids must not be taken by ordinary tokens or by another special token.

        >>> tok = Tokenizer()
        >>> tok.register_special_tokens({"<|endoftext|>": 256})
        >>> tok.encode("<|endoftext|>", allowed_special="all")
        [256]
        """
        if not isinstance(special_tokens, Mapping):
            raise TypeError(
                f"special_tokens must be a dict {{name: id}}, got {type(special_tokens).__name__}"
            )
        new = dict(self.special_tokens)
        for name, idx in special_tokens.items():
            new[name] = _check_special(name, idx, self.vocab, new)
        self.special_tokens = new

    def train(self, text: str, vocab_size: int, verbose: bool = False) -> None:
        """Learn merges from ``text``: see ``BasicTokenizer`` and ``RegexTokenizer``."""
        raise NotImplementedError(
            "the base Tokenizer does not train; use BasicTokenizer or RegexTokenizer"
        )

    def _check_specials_fit(self, vocab_size: object) -> None:
        """Training mints ids 256..vocab_size-1: no special token may hold one already."""
        if not isinstance(vocab_size, bool) and hasattr(type(vocab_size), "__index__"):
            vocab_size = operator.index(vocab_size)
            clash = {n: i for n, i in self.special_tokens.items() if 256 <= i < vocab_size}
            if clash:
                raise ValueError(
                    f"special tokens {clash} use ids that training to vocab_size={vocab_size} "
                    "gives to merges; train first, then register special tokens above the vocab"
                )

    def _use_trained_merges(self, merges: dict[tuple[int, int], int]) -> None:
        """Install freshly trained merges (trained on raw bytes: bytes keep their own ids)."""
        self.byte_shuffle = _IDENTITY
        self.merges = merges
        self.vocab = self._build_vocab()

    # ------------------------------------------------------------------ encode
    def fast_encoder(self) -> FastEncoder:
        """The fast encoder for the current tables (built on first use, rebuilt if they change).

        Subtle: we keep the merges dict itself in the key, so ``is`` detects a new table
        (train, load) and a freed dict's id can never be reused by a new one.

        >>> tok = Tokenizer()
        >>> tok.fast_encoder() is tok.fast_encoder()
        True
        """
        key = (self.merges, len(self.merges), self.byte_shuffle, self._pattern)
        cached = getattr(self, "_fast", None)
        if cached is None or not (cached[0][0] is key[0] and cached[0][1:] == key[1:]):
            cached = self._fast = (key, FastEncoder.from_tokenizer(self))
        return cached[1]

    def encode_ordinary(self, text: str, *, fast: bool = True) -> list[int]:
        """Encode ``text`` ignoring special tokens: their text is encoded like any other.

        By default each chunk is encoded by ``fast_encoder()`` (``tokcourse.fast_encode``:
        a heap of merges, ``O(n log n)`` in a chunk's length, and a chunk cache).
        ``fast=False`` runs chapter 03's reference ``bpe.encode`` on each chunk instead: the
        same ids, far slower, and superlinear on long chunks; it is there for teaching and
        for tests that compare the two.

        >>> Tokenizer().encode_ordinary("<|a|>")
        [60, 124, 97, 124, 62]
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
        if fast:
            return self.fast_encoder().encode_ordinary(_fix_surrogates(text))
        return encode_ordinary(
            _fix_surrogates(text), self.merges, self._compiled, self.byte_shuffle
        )

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        fast: bool = True,
    ) -> list[int]:
        """Encode ``text`` to ids, with tiktoken's special-token rules (see ``special.py``).

        The ordinary pieces go through ``fast_encoder()``; ``fast=False`` encodes them with
        the reference ``bpe.encode`` instead (same ids, slow; see ``encode_ordinary``).

        >>> tok = Tokenizer()
        >>> tok.register_special_tokens({"<|endoftext|>": 300})
        >>> tok.encode("a<|endoftext|>", allowed_special="all")
        [97, 300]
        >>> tok.encode("a<|endoftext|>", disallowed_special=())[:3]
        [97, 60, 124]
        >>> tok.encode("a<|endoftext|>")
        Traceback (most recent call last):
        ...
        ValueError: the text contains the special token '<|endoftext|>', which is not allowed here.
        ...
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
        return special.encode_with_specials(
            text,
            self.special_tokens,
            allowed_special,
            lambda piece: self.encode_ordinary(piece, fast=fast),
            disallowed_special,
        )

    def encode_iterable(
        self,
        pieces: Iterable[str],
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> Iterator[int]:
        """Yield the ids of ``"".join(pieces)`` lazily: a file, a generator of lines...

        Same ids as ``encode`` however the text is cut, with bounded memory; see
        ``tokcourse.stream`` for the rule that decides which chunks are final.

        >>> tok = Tokenizer()
        >>> list(tok.encode_iterable(["h", "i"]))
        [104, 105]
        """
        return encode_iterable(
            self.fast_encoder(),
            pieces,
            self.special_tokens,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )

    # ------------------------------------------------------------------ decode
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes that ``ids`` stand for (special tokens give their UTF-8 name).

        ``ids`` is a list, tuple, array or other ordered iterable of ints; a set or a dict is
        refused (``TypeError``), since it has no order to decode in (tiktoken refuses it too).

        >>> Tokenizer().decode_bytes([226, 130])      # half of "€": not valid UTF-8 alone
        b'\\xe2\\x82'
        """
        if isinstance(ids, (str, bytes, bytearray)) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a list of ints, got {type(ids).__name__}: {ids!r:.80}")
        if isinstance(ids, (Set, Mapping)):
            # a set has no order, so the text would be a shuffle; tiktoken refuses it too
            raise TypeError(
                f"ids must be an ordered sequence of ints (a list), got {type(ids).__name__}, "
                f"which has no order: {ids!r:.80}"
            )
        inverse_special = {idx: name for name, idx in self.special_tokens.items()}
        parts = []
        for position, value in enumerate(ids):
            idx = _token_id(value, f" at position {position}")
            if idx in self.vocab:
                parts.append(self.vocab[idx])
            elif idx in inverse_special:
                parts.append(inverse_special[idx].encode("utf-8"))
            else:
                raise ValueError(
                    f"unknown token id {idx} at position {position}: ordinary ids are "
                    f"{min(self.vocab)}..{max(self.vocab)}"
                    + (f", special ids {sorted(inverse_special)}" if inverse_special else "")
                )
        return b"".join(parts)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode ids to text. Invalid UTF-8 becomes "�" unless you pass ``errors="strict"``.

        Why "replace": a model may emit any sequence of ids, including half a character.

        >>> Tokenizer().decode([104, 105, 226])
        'hi�'
        """
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # ------------------------------------------------------------------ save / load
    def save(self, file_prefix: str | os.PathLike) -> None:
        """Write ``file_prefix.model`` (for ``load``) and ``file_prefix.vocab`` (for humans).

        The ``.model`` file is plain text: the format line, the pattern (a JSON string or
        ``null``), the byte order, the special tokens (a JSON string and an id per line) and
        the merges (``a b new_id`` per line, in the order they were learned); see
        ``tokcourse.model_file``. Tables that ``load`` would refuse (say, a special token
        edited in by hand with a lone surrogate) raise ``ValueError`` before any file is
        touched, and each file is replaced atomically: a failed save leaves the old one intact.

        >>> import pathlib, tempfile
        >>> tok = Tokenizer()
        >>> tok.register_special_tokens({"<|end of text|>": 256})
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     tok.save(f"{tmp}/toy")
        ...     print(pathlib.Path(f"{tmp}/toy.model").read_text())
        ...     print(Tokenizer().load(f"{tmp}/toy.model").special_tokens)
        tokcourse v1
        pattern null
        bytes identity
        special 1
        "<|end of text|>" 256
        merges 0
        <BLANKLINE>
        {'<|end of text|>': 256}
        """
        path = os.fspath(file_prefix) + ".model"
        try:
            if self.pattern is not None:
                _check_utf8(self.pattern, "split pattern")
            text = model_text(self.pattern, self.byte_shuffle, self.special_tokens, self.merges)
            # read it back before writing: never write a file that load would refuse
            self._tables_from(parse_model(text, path, trust_pattern=True), compile=False)
        except (TypeError, ValueError) as err:
            raise ValueError(f"cannot save this tokenizer to {path}: {err}") from None
        vocab = vocab_text(self.vocab, self.merges, self.special_tokens)
        write_atomic(path, text)
        write_atomic(os.fspath(file_prefix) + ".vocab", vocab)

    def load(self, model_file: str | os.PathLike, *, trust_pattern: bool = False) -> Tokenizer:
        """Read a ``.model`` file written by ``save`` into this tokenizer, and return it.

        The file is data: only JSON strings and integers are parsed, and the split pattern
        must be one of the package's (GPT-2, GPT-4, GPT-4o, or none), because a pattern is a
        regex that will run on your text. ``trust_pattern=True`` accepts any pattern from a
        file you trust; it is still refused if it would compile to an absurd size, and it
        matches with a time limit (``TimeoutError`` naming the pattern instead of a hang).

        Any problem raises ``ValueError`` naming the file and the line, and leaves this
        tokenizer unchanged.
        """
        if not isinstance(trust_pattern, bool):
            raise TypeError(f"trust_pattern must be True or False, got {trust_pattern!r}")
        data = read_model(model_file, trust_pattern=trust_pattern)
        pattern, compiled, vocab, specials = self._tables_from(data, compile=True)
        # everything checked: only now replace our tables, all together
        self._pattern, self._compiled = pattern, compiled
        self.byte_shuffle, self.merges, self.vocab = data.byte_shuffle, data.merges, vocab
        self.special_tokens = specials
        return self

    def _tables_from(self, data: ModelData, compile: bool) -> tuple:
        """Check parsed file data as this class would hold it; return its new tables.

        Returns ``(pattern, compiled pattern, vocab, special_tokens)``; raises ``ValueError``
        naming the file and line. A known pattern compiles as usual; any other (only here
        when trusted) is size-checked first and matched with a time limit.
        """
        compiled = None
        try:
            self._check_loaded_pattern(data.pattern)
            if compile and data.pattern is not None:
                if data.pattern in KNOWN_PATTERNS:
                    compiled = compile_pattern(data.pattern)
                else:
                    compiled = compile_trusted(data.pattern)
        except (TypeError, ValueError) as err:
            data.fail(2, str(err))  # the pattern is on line 2
        vocab = build_vocab(data.merges, data.byte_shuffle)
        specials: dict[str, int] = {}
        for name, (idx, lineno) in data.specials.items():
            try:
                specials[name] = _check_special(name, idx, vocab, specials)
            except (TypeError, ValueError) as err:
                data.fail(lineno, str(err))
        return data.pattern, compiled, vocab, specials

    def _check_loaded_pattern(self, pattern: str | None) -> None:
        """Hook for subclasses that only accept some patterns (BasicTokenizer: none)."""
