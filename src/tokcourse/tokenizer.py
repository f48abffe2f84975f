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

import json
import operator
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, NoReturn

import regex

from . import special
from .bpe import build_vocab, encode
from .patterns import GPT4_SPLIT_PATTERN, compile_pattern, split

if TYPE_CHECKING:
    from .fast_encode import FastEncoder

__all__ = ["FORMAT_VERSION", "Tokenizer", "encode_ordinary", "render_token"]

FORMAT_VERSION = "tokcourse v1"
"""First line of every ``.model`` file; bump it when the format changes."""

_IDENTITY = tuple(range(256))


def render_token(token: bytes) -> str:
    """Show a token's bytes readably: UTF-8 where valid, escapes for control characters.

    >>> render_token(b"hi\\n\\xe2\\x82")
    'hi\\\\n\\\\xe2\\\\x82'
    """
    text = token.decode("utf-8", errors="backslashreplace")
    out = []
    for ch in text:
        # control characters (category C*) would break lines in the .vocab file
        if ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "".join(out)


def _fix_surrogates(text: str) -> str:
    """Make ``text`` encodable as UTF-8 exactly the way tiktoken does.

    A Python str may hold surrogate code points (U+D800..U+DFFF), which UTF-8 cannot encode.
    tiktoken then round-trips the text through UTF-16: a high+low surrogate pair becomes the
    character it stands for ("\\ud83d\\ude00" -> "😀"), a lone surrogate becomes U+FFFD "�".
    We do the same, so our ids match tiktoken's.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


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


def _check_special(name: object, idx: object, vocab: Mapping[int, bytes], known: dict) -> int:
    """Refuse a special token that is unnamed, or whose id is not free; return the id."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a special token name must be a non-empty str, got {name!r}")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"special token {name!r} is not valid Unicode") from None
    idx = _token_id(idx, f" for special token {name!r}")
    if idx < 0:
        raise ValueError(f"special token {name!r} has a negative id {idx}")
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


def encode_ordinary(
    text: str,
    merges: Mapping[tuple[int, int], int],
    pattern: str | regex.Pattern | None = GPT4_SPLIT_PATTERN,
    byte_ids: Sequence[int] | None = None,
) -> list[int]:
    """Split ``text`` with ``pattern``, then run BPE on each chunk on its own.

    Merges never cross a chunk boundary: ``"dog."`` and ``"dog!"`` both start with the token
    ``"dog"``. ``pattern=None`` means no split (a basic tokenizer).

    >>> merges = {(101, 32): 256}  # "e " (only a tokenizer trained without a split has it)
    >>> encode_ordinary("the end", merges, pattern=None)
    [116, 104, 256, 101, 110, 100]
    >>> encode_ordinary("the end", merges)  # GPT-4's split: "the", " end"
    [116, 104, 101, 32, 101, 110, 100]
    """
    chunks = ([text] if text else []) if pattern is None else split(text, pattern)
    ids: list[int] = []
    for chunk in chunks:
        ids.extend(encode(chunk, merges, byte_ids))
    return ids


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
        if isinstance(vocab_size, int) and not isinstance(vocab_size, bool):
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
        from .fast_encode import FastEncoder

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
        from .stream import encode_iterable

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

        >>> Tokenizer().decode_bytes([226, 130])      # half of "€": not valid UTF-8 alone
        b'\\xe2\\x82'
        """
        if isinstance(ids, (str, bytes, bytearray)) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be a list of ints, got {type(ids).__name__}: {ids!r:.80}")
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
        the merges (``a b new_id`` per line, in the order they were learned).

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
        file_prefix = os.fspath(file_prefix)
        lines = [FORMAT_VERSION, "pattern " + json.dumps(self.pattern, ensure_ascii=False)]
        if self.byte_shuffle == _IDENTITY:
            lines.append("bytes identity")
        else:
            lines.append("bytes " + " ".join(map(str, self.byte_shuffle)))
        lines.append(f"special {len(self.special_tokens)}")
        for name, idx in self.special_tokens.items():
            lines.append(f"{json.dumps(name, ensure_ascii=False)} {idx}")
        lines.append(f"merges {len(self.merges)}")
        lines.extend(f"{a} {b} {idx}" for (a, b), idx in self.merges.items())
        with open(file_prefix + ".model", "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")

        parents = {idx: pair for pair, idx in self.merges.items()}
        with open(file_prefix + ".vocab", "w", encoding="utf-8", newline="\n") as f:
            for idx, token in self.vocab.items():
                if idx in parents:
                    a, b = parents[idx]
                    left, right = render_token(self.vocab[a]), render_token(self.vocab[b])
                    f.write(f"[{left}][{right}] -> [{render_token(token)}] {idx}\n")
                else:
                    f.write(f"[{render_token(token)}] {idx}\n")
            for name, idx in self.special_tokens.items():
                f.write(f"special [{render_token(name.encode('utf-8'))}] {idx}\n")

    def load(self, model_file: str | os.PathLike) -> Tokenizer:
        """Read a ``.model`` file written by ``save`` into this tokenizer, and return it.

        Only parses text (JSON strings and integers); nothing in the file is executed. A
        corrupt or truncated file raises ``ValueError`` naming the file and the line.
        """
        model_file = os.fspath(model_file)
        with open(model_file, encoding="utf-8") as f:
            reader = _LineReader(model_file, f.read().split("\n"))

        if reader.next("the format line") != FORMAT_VERSION:
            reader.fail(f"expected {FORMAT_VERSION!r} (is this a tokcourse .model file?)")
        pattern = reader.json_field("pattern")
        try:
            if pattern is not None:
                compile_pattern(pattern)  # type: ignore[arg-type]
            self._check_loaded_pattern(pattern)  # type: ignore[arg-type]
        except (TypeError, ValueError) as err:
            reader.fail(str(err))
        byte_shuffle = reader.byte_order()
        special_lines = {}
        for _ in range(reader.count("special")):
            name, idx = reader.special_token()
            if name in special_lines:
                reader.fail(f"special token {name!r} appears twice")
            special_lines[name] = (idx, reader.lineno)
        merges: dict[tuple[int, int], int] = {}
        known = set(byte_shuffle)
        for _ in range(reader.count("merges")):
            a, b, idx = reader.ints(3, "a merge 'a b new_id'")
            if a not in known or b not in known:
                reader.fail(f"merge ({a}, {b}) uses an id not defined on an earlier line")
            if idx in known:
                reader.fail(f"merge ({a}, {b}) -> {idx} reuses id {idx}")
            if (a, b) in merges:
                reader.fail(f"the pair ({a}, {b}) is merged twice")
            merges[(a, b)] = idx
            known.add(idx)
        reader.expect_end()

        # everything parsed: now build the tables, and only then replace ours
        loaded = Tokenizer(pattern)  # type: ignore[arg-type]
        loaded.byte_shuffle, loaded.merges = byte_shuffle, merges
        loaded.vocab = loaded._build_vocab()
        specials: dict[str, int] = {}
        for name, (idx, lineno) in special_lines.items():
            try:
                _check_special(name, idx, loaded.vocab, specials)
            except ValueError as err:
                raise ValueError(f"{model_file}, line {lineno}: {err}") from None
            specials[name] = idx
        self.pattern = loaded.pattern
        self.byte_shuffle, self.merges, self.vocab = byte_shuffle, merges, loaded.vocab
        self.special_tokens = specials
        return self

    def _check_loaded_pattern(self, pattern: str | None) -> None:
        """Hook for subclasses that only accept some patterns (BasicTokenizer: none)."""


class _LineReader:
    """Reads a .model file line by line; every error names the file and the line number."""

    def __init__(self, path: str, lines: list[str]) -> None:
        if lines and lines[-1] == "":
            lines = lines[:-1]  # the file ends with a newline
        self.path, self.lines, self.lineno = path, lines, 0

    def fail(self, message: str) -> NoReturn:
        raise ValueError(f"{self.path}, line {self.lineno}: {message}")

    def next(self, what: str) -> str:
        if self.lineno >= len(self.lines):
            self.lineno += 1
            self.fail(f"the file ends here, expected {what} (truncated file?)")
        self.lineno += 1
        return self.lines[self.lineno - 1]

    def field(self, key: str) -> str:
        line = self.next(f"'{key} ...'")
        if not line.startswith(key + " "):
            self.fail(f"expected a line starting with {key!r}, got {line!r:.80}")
        return line[len(key) + 1 :]

    def json_field(self, key: str) -> object:
        value = self.field(key)
        try:
            return json.loads(value)
        except json.JSONDecodeError as err:
            self.fail(f"{key} is not valid JSON ({err}): {value!r:.80}")

    def count(self, key: str) -> int:
        value = self.field(key)
        if not value.isdigit():  # isdigit: also refuses signs, spaces and "1e3"
            self.fail(f"expected '{key} <count>', got {key} {value!r:.80}")
        return int(value)

    def ints(self, n: int, what: str) -> list[int]:
        line = self.next(what)
        fields = line.split(" ")
        if len(fields) != n or not all(f.isascii() and f.isdigit() for f in fields):
            self.fail(f"expected {what} ({n} non-negative integers), got {line!r:.80}")
        return [int(f) for f in fields]

    def byte_order(self) -> tuple[int, ...]:
        value = self.field("bytes")
        if value == "identity":
            return _IDENTITY
        fields = value.split(" ")
        order = [int(f) for f in fields if f.isascii() and f.isdigit()]
        if sorted(order) != list(_IDENTITY) or len(order) != len(fields):
            self.fail("expected 'bytes identity' or 'bytes' and a permutation of 0..255")
        return tuple(order)

    def special_token(self) -> tuple[str, int]:
        line = self.next("a special token line '\"name\" id'")
        name_json, _, idx = line.rpartition(" ")
        try:
            name = json.loads(name_json)
        except json.JSONDecodeError:
            name = None
        if not isinstance(name, str) or not (idx.isascii() and idx.isdigit()):
            self.fail(f"expected a special token '\"name\" id', got {line!r:.80}")
        return name, int(idx)

    def expect_end(self) -> None:
        if self.lineno < len(self.lines):
            self.lineno += 1
            self.fail(f"unexpected extra line {self.lines[self.lineno - 1]!r:.80}")
