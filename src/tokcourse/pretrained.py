"""GPT-2, GPT-4 and GPT-4o as our own RegexTokenizers, rebuilt from tiktoken's ranks.

tiktoken ships a tokenizer as ``mergeable_ranks``: ``{token bytes: rank}``, where the rank is
also the token id. It stores no merge pairs: tiktoken's encoder looks the bytes of a candidate
pair up directly. To run *our* encoder we recover the pair behind each token, by replaying
BPE on the token's own bytes using only lower-ranked tokens: it ends with exactly two parts.

Two more things to get right:

- **The byte permutation.** Token ids 0..255 are the 256 single bytes, but not in byte order:
  GPT-2 numbered the printable bytes first (id 0 is ``b"!"``, byte 0 is id 188). Our tables
  record it in ``byte_shuffle``; encode starts from those ids, decode reads ``vocab``.
- **Special tokens**, which are not in the ranks at all: registered from tiktoken.

>>> gpt4 = GPT4Tokenizer()
>>> gpt4.encode("hello world")
[15339, 1917]
>>> gpt4.byte_shuffle[:3]  # the ids of the bytes 0, 1, 2
(188, 189, 190)

Building the tables takes up to a few seconds (GPT-4o's 200k tokens); they are computed on
the first use in a process and cached (nothing happens at import time).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Literal

from . import llama, rank_bpe
from .patterns import GPT4_SPLIT_PATTERN, SPLIT_PATTERNS, split
from .regex import RegexTokenizer
from .tokenizer import Tokenizer
from .utf8 import _fix_surrogates

if TYPE_CHECKING:  # tiktoken is imported lazily: importing this module costs nothing
    import tiktoken

__all__ = [
    "GPT2Tokenizer",
    "GPT4Tokenizer",
    "GPT4oTokenizer",
    "Llama3Tokenizer",
    "Llama4Tokenizer",
    "PretrainedTokenizer",
    "bpe_parts",
    "encode_with_ranks",
    "merge_pairs",
    "recover_merge",
    "recover_merges",
    "unreachable_tokens",
]


# The book shows some of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.
# fmt: off
def bpe_parts(
    token: bytes,
    ranks: Mapping[bytes, int],
    max_rank: int | None = None,
) -> list[bytes]:
    """Run tiktoken-style BPE on ``token``, using only tokens ranked below
    ``max_rank``.

    Repeatedly merge the adjacent pair whose concatenation has the lowest
    rank (leftmost on a tie), until no pair ranks below ``max_rank``.

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4}
    >>> bpe_parts(b"abc", ranks, max_rank=4)
    [b'ab', b'c']
    """
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best_rank, best_i = None, -1
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best_rank is None or rank < best_rank):
                best_rank, best_i = rank, i
        if best_rank is None or (
            max_rank is not None and best_rank >= max_rank
        ):
            break
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
    return parts
# fmt: on


# fmt: off
def recover_merge(
    token: bytes,
    ranks: Mapping[bytes, int],
) -> tuple[bytes, bytes]:
    """The two tokens BPE merged to make ``token``: ``(left, right)``.

    Replay BPE on the token's own bytes with only the tokens ranked *below*
    it (lowest rank first, as encoding does). Just before ``token`` itself
    could be used, exactly two parts are left: those are its merge. Both
    halves being tokens is not enough: ``b"abc"`` could be ``a + bc`` or
    ``ab + c``, and only the ranks say which pair BPE actually met.

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}
    >>> recover_merge(b"abc", ranks)
    (b'a', b'bc')
    """
    if token not in ranks:
        raise ValueError(f"{token!r} is not a token of these ranks")
    rank = ranks[token]
    if len(token) < 2:
        raise ValueError(
            f"{token!r} (rank {rank}) is a single byte, not a merge"
        )
    parts = bpe_parts(token, ranks, max_rank=rank)
    if len(parts) != 2:
        raise ValueError(
            f"token {token!r} (rank {rank}) cannot be built by merging two "
            f"lower-ranked tokens (BPE stops at {parts}); "
            "these ranks are not a BPE merge list"
        )
    return parts[0], parts[1]
# fmt: on


# fmt: off
def merge_pairs(
    mergeable_ranks: Mapping[bytes, int],
) -> list[tuple[bytes, bytes]]:
    """The merges behind tiktoken's ranks, as byte pairs in rank order (the
    order BPE learned them).

    Each pair is :func:`recover_merge` of one token: what BPE makes of its
    bytes just before the token itself may be used. A token that BPE could
    never produce (more than two parts) is an error, since a pair-based
    encoder could not produce it either. This is the one merge-recovery
    algorithm of the package: :func:`recover_merges` turns its pairs into
    ids, and the course rebuilds GPT-2's ``vocab.bpe`` from them.

    >>> merge_pairs({b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4})
    [(b'a', b'b'), (b'ab', b'c')]
    """
    return [
        recover_merge(token, mergeable_ranks)
        for token, _ in sorted(
            mergeable_ranks.items(), key=lambda item: item[1]
        )
        if len(token) > 1  # the 256 byte tokens are not merges
    ]
# fmt: on


def unreachable_tokens(ranks: Mapping[bytes, int]) -> dict[bytes, list[bytes]]:
    """The tokens BPE cannot build from their own bytes: ``{token: where BPE stops}``.

    For each token longer than a byte, BPE on its bytes with only the lower-ranked tokens must
    end in exactly two parts (its merge); these end in more. Empty for a merge list.

    >>> unreachable_tokens({b"a": 0, b"b": 1, b"ba": 2, b"abab": 3})
    {b'abab': [b'a', b'ba', b'b']}
    """
    out: dict[bytes, list[bytes]] = {}
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) > 1:
            parts = bpe_parts(token, ranks, max_rank=rank)
            if len(parts) != 2:
                out[token] = parts
    return out


def recover_merges(
    mergeable_ranks: Mapping[bytes, int],
) -> dict[tuple[int, int], int]:
    """The merge pairs behind tiktoken's ranks, as ids:
    ``{(left id, right id): token id}``.

    :func:`merge_pairs` with each byte string replaced by its rank, in the
    same (rank) order.

    >>> recover_merges({b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4})
    {(0, 1): 3, (3, 2): 4}
    """
    ranks = mergeable_ranks
    return {(ranks[a], ranks[b]): ranks[a + b] for a, b in merge_pairs(ranks)}


# fmt: off
def encode_with_ranks(
    text: str,
    ranks: Mapping[bytes, int],
    pattern: str = GPT4_SPLIT_PATTERN,
) -> list[int]:
    """tiktoken's ``encode_ordinary``, in plain Python: split, then BPE on
    bytes with ranks.

    Cut ``text`` into chunks with ``pattern`` (GPT-4's by default); in each
    chunk start from its UTF-8 bytes and keep merging the neighbouring pair
    whose concatenation has the lowest rank; the ranks of the final parts
    are the ids. No merge table is needed: the ranks of the merged bytes say
    everything. With ``cl100k_base``'s ranks this gives tiktoken's ids.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"he": 256}
    >>> encode_with_ranks("he hehe", ranks)  # chunks "he", " hehe"
    [256, 32, 256, 256]
    """
    ids: list[int] = []
    for chunk in split(text, pattern):
        ids.extend(
            ranks[part] for part in bpe_parts(chunk.encode("utf-8"), ranks)
        )
    return ids
# fmt: on


@functools.cache
def _tables(encoding_name: str) -> tuple[str, tuple[int, ...], tuple, tuple]:
    """Pattern, byte order, merges and specials of a tiktoken encoding, as immutable tuples.

    Cached per process: every tokenizer built afterwards copies these in milliseconds.
    """
    import tiktoken

    enc = tiktoken.get_encoding(encoding_name)
    pattern = SPLIT_PATTERNS.get(encoding_name, enc._pat_str)
    return _tables_of(enc, pattern)


def _tables_of(enc: tiktoken.Encoding, pattern: str) -> tuple[str, tuple[int, ...], tuple, tuple]:
    ranks = enc._mergeable_ranks
    byte_ids = []
    for b in range(256):
        if bytes([b]) not in ranks:
            raise ValueError(f"encoding {enc.name!r} has no token for the byte {b}")
        byte_ids.append(ranks[bytes([b])])
    if sorted(byte_ids) != list(range(256)):
        raise ValueError(f"encoding {enc.name!r} does not give the 256 bytes the ids 0..255")
    merges = tuple(recover_merges(ranks).items())
    specials = tuple(sorted(enc._special_tokens.items(), key=lambda item: item[1]))
    return pattern, tuple(byte_ids), merges, specials


class PretrainedTokenizer(RegexTokenizer):
    """A RegexTokenizer whose tables come from a tiktoken encoding (name or ``Encoding``).

    >>> PretrainedTokenizer("cl100k_base").decode([15339, 1917])
    'hello world'
    """

    encoding_name: str = ""

    def __init__(self, encoding: str | tiktoken.Encoding | None = None) -> None:
        import tiktoken

        encoding = self.encoding_name if encoding is None else encoding
        if isinstance(encoding, str):
            if not encoding:
                raise TypeError("PretrainedTokenizer needs a tiktoken encoding name")
            pattern, byte_shuffle, merges, specials = _tables(encoding)
            self.encoding_name = encoding
        elif isinstance(encoding, tiktoken.Encoding):
            pattern, byte_shuffle, merges, specials = _tables_of(encoding, encoding._pat_str)
            self.encoding_name = encoding.name
        else:
            raise TypeError(
                "PretrainedTokenizer needs a tiktoken encoding name such as 'cl100k_base' or a "
                f"tiktoken.Encoding, got {type(encoding).__name__}: {encoding!r:.80}"
            )
        super().__init__(pattern)
        self.byte_shuffle = byte_shuffle
        self.merges = dict(merges)
        self.vocab = self._build_vocab()
        self.register_special_tokens(dict(specials))
        # what encoding_name stands for (shared tuples, no copy): see load
        self._named_tables = (pattern, byte_shuffle, merges, specials)

    def byte_value_merges(self) -> dict[tuple[int, int], int]:
        """The merges with each byte token written as the byte's own value (0..255) instead
        of the encoding's id for it, in the same order; merged tokens keep their ids. An
        encoder that starts from ``list(text.encode())`` runs them as they are.

        >>> GPT2Tokenizer().byte_value_merges()[104, 101]  # "h" + "e"
        258
        """
        byte_of = {idx: b for b, idx in enumerate(self.byte_shuffle)}
        return {(byte_of.get(a, a), byte_of.get(b, b)): idx for (a, b), idx in self.merges.items()}

    def from_byte_values(self, ids: Iterable[int]) -> list[int]:
        """``ids`` encoded with :meth:`byte_value_merges`, as the encoding numbers them: each
        byte token (below 256) becomes the encoding's id for that byte."""
        return [self.byte_shuffle[i] if i < 256 else i for i in ids]

    def train(self, text: str, vocab_size: int, verbose: bool = False) -> None:
        raise NotImplementedError(
            f"{type(self).__name__} is pretrained; to train, start from a RegexTokenizer"
        )

    def load(self, model_file: str | os.PathLike, *, trust_pattern: bool = False) -> Tokenizer:
        """Load a ``.model`` file (see ``Tokenizer.load``). ``encoding_name`` stays only if
        the file holds exactly that encoding's tables; otherwise it becomes ``""``: the
        tokenizer no longer is that encoding, and its name must not say it is."""
        super().load(model_file, trust_pattern=trust_pattern)
        specials = tuple(sorted(self.special_tokens.items(), key=lambda item: item[1]))
        now = (self.pattern, self.byte_shuffle, tuple(self.merges.items()), specials)
        if now != getattr(self, "_named_tables", None):
            self.encoding_name = ""
        return self


class GPT2Tokenizer(PretrainedTokenizer):
    """GPT-2's tokenizer (tiktoken ``r50k_base``, the same ranks as ``gpt2``); 50,257 tokens.

    >>> GPT2Tokenizer().encode("hello world")
    [31373, 995]
    """

    encoding_name = "r50k_base"


class GPT4Tokenizer(PretrainedTokenizer):
    """GPT-4's tokenizer (tiktoken ``cl100k_base``).

    >>> GPT4Tokenizer().encode("hello world")
    [15339, 1917]
    """

    encoding_name = "cl100k_base"


class GPT4oTokenizer(PretrainedTokenizer):
    """GPT-4o's tokenizer (tiktoken ``o200k_base``).

    >>> GPT4oTokenizer().encode("hello world")
    [24912, 2375]
    """

    encoding_name = "o200k_base"


#: Where a Llama class reads its rank file when it is given none: ``f(name) -> path`` for
#: ``name`` "llama3" or "llama4". ``tokcourse/__init__.py`` sets it to the course's pinned copy,
#: fetched and hash-checked by ``tokcourse.course.data`` (this floor never imports the course).
default_rank_file: Callable[[str], str | os.PathLike] | None = None


@functools.cache
def _llama_tables(name: str, file: str) -> tuple[dict[bytes, int], tuple, tuple, tuple]:
    """Ranks, byte order, merges (the tokens BPE builds) and specials of Meta's rank file."""
    with open(file, "rb") as f:
        ranks = rank_bpe.parse_tiktoken_ranks(f.read(), file)
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise ValueError(f"{file}: the ranks are not the numbers 0..{len(ranks) - 1}")
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ValueError(f"{file}: no token for the byte {missing[0]}")
    byte_ids = tuple(ranks[bytes([b])] for b in range(256))
    merges = []  # the tokens that are a merge: BPE on their bytes ends in two parts
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) > 1 and len(parts := bpe_parts(token, ranks, max_rank=rank)) == 2:
            merges.append(((ranks[parts[0]], ranks[parts[1]]), rank))
    special = llama.llama3_special_tokens if name == "llama3" else llama.llama4_special_tokens
    specials = tuple(special(len(ranks)).items())
    return ranks, byte_ids, tuple(merges), specials


class _LlamaTokenizer(PretrainedTokenizer):
    """Meta's tokenizer from its ranks: tiktoken's encoder (``rank_bpe``) and Meta's cuts.

    ``merges`` holds the tokens BPE builds from their own bytes; ``extra_tokens`` the others
    (Llama 3 has 678, Llama 4 none), which only tiktoken's whole-chunk lookup and joins of any
    two neighbours produce; ``vocab`` is every token of the ranks. Encoding cuts the text as
    Meta's ``Tokenizer.encode`` does (:func:`~tokcourse.rank_bpe.cut_long_runs`), then follows
    tiktoken's special-token rules.
    Its ids are Meta's ``encode(text, bos=False, eos=False)`` with ``disallowed_special=()``
    (Meta's default: special-token text is plain text), and with ``allowed_special="all"``.
    """

    _name = ""
    _pattern_str = ""

    def __init__(self, model_file: str | os.PathLike | None = None) -> None:
        """``model_file``: Meta's ``tokenizer.model`` (default: the course's pinned copy)."""
        if model_file is None:
            if default_rank_file is None:
                raise TypeError(f"{type(self).__name__} needs the path of Meta's tokenizer.model")
            model_file = default_rank_file(self._name)
        ranks, byte_shuffle, merges, specials = _llama_tables(self._name, os.fspath(model_file))
        RegexTokenizer.__init__(self, self._pattern_str)
        self.encoding_name = self._name
        self.byte_shuffle = byte_shuffle
        self.merges = dict(merges)
        made = {idx for _, idx in merges} | set(byte_shuffle)
        self.extra_tokens = {r: t for t, r in ranks.items() if r not in made}
        self.vocab = {r: t for t, r in ranks.items()}
        self.register_special_tokens(dict(specials))
        self._ranks = ranks
        self._named_tables = None

    def fast_encoder(self) -> rank_bpe.RankEncoder:
        """tiktoken's rules on the ranks (built on first use)."""
        if getattr(self, "_fast", None) is None:
            self._fast = ((), rank_bpe.RankEncoder(self._ranks, self._compiled))
        return self._fast[1]

    def encode_ordinary(self, text: str, *, fast: bool = True) -> list[int]:
        """Ids with special-token text as plain text, cut as Meta cuts it. ``fast=False``
        runs ``rank_bpe.encode_chunk_with_ranks`` on each chunk (the same ids, slow)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
        ids: list[int] = []
        for piece in rank_bpe.cut_long_runs(text):
            if fast:
                ids += self.fast_encoder().encode_ordinary(_fix_surrogates(piece))
            else:
                for chunk in split(_fix_surrogates(piece), self._compiled):
                    ids += rank_bpe.encode_chunk_with_ranks(chunk.encode("utf-8"), self._ranks)
        return ids

    def encode(
        self,
        text: str,
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
        fast: bool = True,
    ) -> list[int]:
        """``Tokenizer.encode``'s special-token rules on each of Meta's pieces."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
        ids: list[int] = []
        for piece in rank_bpe.cut_long_runs(text):
            ids += Tokenizer.encode(
                self,
                piece,
                allowed_special=allowed_special,
                disallowed_special=disallowed_special,
                fast=fast,
            )
        return ids

    def encode_iterable(
        self,
        pieces: Iterable[str],
        *,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = "all",
    ) -> Iterator[int]:
        """``encode("".join(pieces))`` lazily, one of Meta's 400,000-character windows at a
        time (each window is cut and encoded on its own, so the ids are the same)."""
        buffer = ""
        for piece in pieces:
            if not isinstance(piece, str):
                raise TypeError(f"pieces must be str, got {type(piece).__name__}")
            buffer += piece
            while len(buffer) >= rank_bpe.WINDOW:
                window, buffer = buffer[: rank_bpe.WINDOW], buffer[rank_bpe.WINDOW :]
                yield from self.encode(
                    window, allowed_special=allowed_special, disallowed_special=disallowed_special
                )
        if buffer:
            yield from self.encode(
                buffer, allowed_special=allowed_special, disallowed_special=disallowed_special
            )

    def save(self, file_prefix: str | os.PathLike) -> None:
        raise NotImplementedError(
            f"{type(self).__name__} cannot be saved as a .model file: a .model file holds a "
            "merge list and a split pattern, not Meta's cuts or tiktoken's whole-chunk lookup"
        )

    def load(self, model_file: str | os.PathLike, *, trust_pattern: bool = False) -> Tokenizer:
        raise NotImplementedError(
            f"{type(self).__name__} is Meta's tokenizer; load a .model file into a "
            "RegexTokenizer instead"
        )


class Llama3Tokenizer(_LlamaTokenizer):
    """Llama 3's tokenizer (Meta, 2024; also Llama 3.1, 3.2 and 3.3): 128,000 ranks whose
    first 100,256 are GPT-4's, 256 special tokens.

    >>> Llama3Tokenizer().encode("a.:.:b")  # b'.:.:' is a token BPE cannot build
    [64, 100421, 65]
    """

    _name = "llama3"
    _pattern_str = llama.LLAMA3_SPLIT_PATTERN


class Llama4Tokenizer(_LlamaTokenizer):
    """Llama 4's tokenizer (Meta, 2025): 200,000 ranks, GPT-4o's split pattern, 2,048 special
    tokens.

    >>> Llama4Tokenizer().encode("hello world")
    [25681, 3817]
    """

    _name = "llama4"
    _pattern_str = llama.LLAMA4_SPLIT_PATTERN
