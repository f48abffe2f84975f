"""SentencePiece-style BPE, read from a ``.model`` file: sentencepiece's exact ids (ch07).

>>> SPACE + "hello"
'▁hello'

SentencePiece does not split text into bytes first, as GPT-2 does: it runs BPE over Unicode
*characters* (code points), after a normalization step that turns every space into ``▁``
(U+2581) and, with ``add_dummy_prefix``, puts one ``▁`` in front of the text. A character no
piece covers is unknown: with ``byte_fallback`` it is spelled as the ``<0xNN>`` pieces of its
UTF-8 bytes, without it a whole run of unknown characters becomes one ``<unk>``.

The merge rule is not "lowest rank first" but "highest **score** first": every piece of a BPE
model carries a score (minus its merge order), and the encoder repeatedly joins the
neighbouring pair whose concatenation is the piece with the highest score, the leftmost pair
on a tie. :func:`merge_by_score` is that loop written plainly (quadratic); the tokenizer,
:class:`SentencePieceBPE`, does the same with a heap over a linked list of symbols, as
sentencepiece's ``bpe_model.cc`` does, so its cost grows as n log n.

A ``.model`` file is a protobuf (``ModelProto``): the pieces with their scores and types, a
``trainer_spec`` (how it was trained) and a ``normalizer_spec`` (how text is normalized before
encoding). We parse it as data with ``sentencepiece_model_pb2`` and refuse any model whose
normalization we do not implement (a precompiled character map such as ``nmt_nfkc``,
whitespace as a suffix, user-defined symbols), naming the field that made us refuse.
"""

from __future__ import annotations

import heapq
import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .model_file import check_sentencepiece_pieces, check_text, total_order_keys

#: The character that stands for a space inside pieces (U+2581 LOWER ONE EIGHTH BLOCK).
SPACE = "\u2581"
#: What sentencepiece decodes ``<unk>`` to when the model does not say (`` ⁇ ``, U+2047).
DEFAULT_UNK_SURFACE = " \u2047 "
REPLACEMENT = "\ufffd"

# ModelProto.SentencePiece.Type values (sentencepiece_model.proto)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
BPE_MODEL_TYPE = 2  # TrainerSpec.ModelType.BPE
#: How deep sentencepiece's BPE splits unused pieces again (``kMaxBpeResegmentDepth``,
#: bpe_model.cc): a piece deeper than this is output as it is, with its own id.
MAX_RESEGMENT_DEPTH = 100


# --- byte fallback ------------------------------------------------------------------------------


def byte_piece(byte: int) -> str:
    """The piece that stands for one byte: ``<0x`` two upper-case hex digits ``>``.

    >>> byte_piece(10)
    '<0x0A>'
    """
    if not isinstance(byte, int) or not 0 <= byte < 256:
        raise ValueError(f"a byte is an int in 0..255, not {byte!r}")
    return f"<0x{byte:02X}>"


def piece_byte(piece: str) -> int | None:
    """The byte a ``<0xNN>`` piece stands for, or None for any other piece.

    >>> piece_byte("<0xE2>"), piece_byte("<0xe2>"), piece_byte("▁the")
    (226, None, None)
    """
    hexdigits = "0123456789ABCDEF"
    if len(piece) == 6 and piece[:3] == "<0x" and piece[5] == ">":
        if piece[3] in hexdigits and piece[4] in hexdigits:
            return int(piece[3:5], 16)
    return None


def byte_fallback_pieces(text: str) -> list[str]:
    """Spell ``text`` as byte pieces, one ``<0xNN>`` per byte of its UTF-8 encoding.

    >>> byte_fallback_pieces("é!")
    ['<0xC3>', '<0xA9>', '<0x21>']
    """
    return [f"<0x{b:02X}>" for b in text.encode("utf-8")]


# The book shows this function, in a code column 79 characters wide: between
# "fmt: off" and "fmt: on" it keeps the line breaks written for it.
# fmt: off
def _utf8_char_length(data: bytes, i: int) -> int:
    """Length in bytes of the valid UTF-8 character at ``data[i]``, else 0."""
    lead = data[i]
    if lead < 0x80:
        return 1
    n = (2 if lead & 0xE0 == 0xC0 else 3 if lead & 0xF0 == 0xE0
         else 4 if lead & 0xF8 == 0xF0 else 0)
    if n == 0 or i + n > len(data):
        return 0
    try:  # strict: refuses overlong forms and surrogates, as sentencepiece
        data[i : i + n].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return n
# fmt: on


def decode_bytes(data: bytes) -> str:
    """Decode UTF-8 as sentencepiece decodes byte pieces: one U+FFFD per
    invalid **byte**.

    Python's ``errors="replace"`` replaces a broken sequence as a whole;
    sentencepiece checks one character at a time and, where none is valid,
    replaces a single byte.

    >>> decode_bytes(b"\\xe2\\x82!"), b"\\xe2\\x82!".decode("utf-8", "replace")
    ('��!', '�!')
    """
    out, i = [], 0
    while i < len(data):
        n = _utf8_char_length(data, i)
        if n:
            out.append(data[i : i + n].decode("utf-8"))
            i += n
        else:
            out.append(REPLACEMENT)
            i += 1
    return "".join(out)


def decode_byte_pieces(pieces: Sequence[str]) -> str:
    """Join byte pieces back into text, with sentencepiece's rule for invalid
    bytes.

    >>> decode_byte_pieces(['<0xC3>', '<0xA9>', '<0x21>'])
    'é!'
    >>> decode_byte_pieces(['<0xC3>', '<0x21>'])
    '�!'
    """
    data = []
    for piece in pieces:
        byte = piece_byte(piece)
        if byte is None:
            raise ValueError(f"{piece!r} is not a byte piece such as '<0x0A>'")
        data.append(byte)
    return decode_bytes(bytes(data))


# --- the merge loop -----------------------------------------------------------------------------


def merge_by_score(
    symbols: Sequence[str],
    scores: Mapping[str, float],
) -> list[str]:
    """Merge neighbours by piece score, highest first, the leftmost pair on a
    tie (quadratic).

    ``scores`` maps each mergeable piece to its score. The loop stops when no
    neighbouring pair makes a piece. This is the teaching version;
    :class:`SentencePieceBPE` runs the same rule with a heap.

    >>> merge_by_score(list("▁aab"), {"aa": -1.0, "ab": -2.0, "▁aa": -3.0})
    ['▁aa', 'b']
    """
    symbols = list(symbols)
    while True:
        best, where = None, -1
        for i in range(len(symbols) - 1):
            score = scores.get(symbols[i] + symbols[i + 1])
            # '>': leftmost wins ties
            if score is not None and (best is None or score > best):
                best, where = score, i
        if best is None:
            return symbols
        symbols[where : where + 2] = [symbols[where] + symbols[where + 1]]


# --- the model file -----------------------------------------------------------------------------


def parse_model(data: bytes) -> Any:
    """Parse the bytes of a ``.model`` file into a ``ModelProto`` (data only, nothing runs).

    >>> parse_model(b"").pieces
    []
    """
    from sentencepiece import sentencepiece_model_pb2 as pb  # protobuf: imported on first use

    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"parse_model reads the bytes of a .model file, not {type(data).__name__}")
    proto = pb.ModelProto()
    try:
        proto.ParseFromString(bytes(data))
    except Exception as err:  # google.protobuf.message.DecodeError
        raise ValueError(f"not a SentencePiece model ({len(data)} bytes): {err}") from None
    return proto


def add_dummy_prefix(data: bytes) -> bool:
    """Whether a model puts ``▁`` before the text: ``normalizer_spec.add_dummy_prefix``.

    The field is optional with default True, so an absent field means True.

    >>> add_dummy_prefix(b"")
    True
    """
    return bool(parse_model(data).normalizer_spec.add_dummy_prefix)


def _refusal(
    proto: Any, model_type: int = BPE_MODEL_TYPE, user_defined_ok: bool = False
) -> str | None:
    """Why we cannot encode exactly like sentencepiece with this model (None: we can)."""
    trainer, norm = proto.trainer_spec, proto.normalizer_spec
    if trainer.model_type != model_type:
        kind = type(trainer).ModelType.Name(trainer.model_type)
        want = type(trainer).ModelType.Name(model_type)
        return f"trainer_spec.model_type is {kind}; this class implements {want} models only"
    if norm.precompiled_charsmap:
        return (
            f"normalizer_spec uses the precompiled character map of rule {norm.name!r} "
            f"({len(norm.precompiled_charsmap)} bytes); only identity normalization is "
            "implemented (train with normalization_rule_name='identity')"
        )
    if proto.HasField("denormalizer_spec") and proto.denormalizer_spec.precompiled_charsmap:
        return "the model has a denormalizer (denormalizer_spec.precompiled_charsmap)"
    if trainer.treat_whitespace_as_suffix:
        return "trainer_spec.treat_whitespace_as_suffix is true; only prefixes are implemented"
    user = [p.piece for p in proto.pieces if p.type == USER_DEFINED]
    if user and not user_defined_ok:
        return f"the model has {len(user)} user-defined pieces (first {user[0]!r})"
    return None


class SentencePieceBPE:
    """A SentencePiece BPE model: encode and decode exactly as ``SentencePieceProcessor`` does.

    Build it from the bytes of a ``.model`` file (or :meth:`from_file`). ``encode`` gives the
    ids of ``sp.encode(text)`` with default options (no BOS/EOS, no sampling), ``decode`` the
    text of ``sp.decode(ids)``.

    >>> mistral = SentencePieceBPE.from_file("tokenizer.model")  # doctest: +SKIP
    >>> mistral.encode("Hello world")  # doctest: +SKIP
    [22557, 1526]
    """

    # what a subclass (tokcourse.unigram) changes: the model type, and user-defined pieces
    _MODEL_TYPE = BPE_MODEL_TYPE
    _USER_DEFINED_OK = False
    _ONE_TABLE = True  # normal and reserved pieces share one namespace (BPE only)

    def __init__(self, data: bytes) -> None:
        proto = parse_model(data)
        check_sentencepiece_pieces(proto)
        why = _refusal(proto, self._MODEL_TYPE, self._USER_DEFINED_OK)
        if why is not None:
            raise ValueError(f"cannot encode like sentencepiece: {why}")
        self.pieces: list[str] = [p.piece for p in proto.pieces]
        self.scores: list[float] = [p.score for p in proto.pieces]
        self.types: list[int] = [p.type for p in proto.pieces]
        norm, trainer = proto.normalizer_spec, proto.trainer_spec
        self.add_dummy_prefix: bool = norm.add_dummy_prefix
        self.remove_extra_whitespaces: bool = norm.remove_extra_whitespaces
        self.escape_whitespaces: bool = norm.escape_whitespaces
        self.byte_fallback: bool = trainer.byte_fallback
        self.unk_surface: str = (
            trainer.unk_surface if trainer.HasField("unk_surface") else DEFAULT_UNK_SURFACE
        )
        # sentencepiece keeps two tables: "normal" pieces (the ones merges may produce) and
        # reserved ones (unk, control, byte), looked up first by PieceToId
        self._normal: dict[str, int] = {}
        self._reserved: dict[str, int] = {}
        unk = [i for i, t in enumerate(self.types) if t == UNKNOWN]
        if len(unk) != 1:
            raise ValueError(f"a model needs exactly one <unk> piece, this one has {len(unk)}")
        self.unk_id: int = unk[0]
        for i, (piece, kind) in enumerate(zip(self.pieces, self.types, strict=True)):
            if piece == "\0" and kind == UNUSED:
                continue  # sentencepiece leaves it out of its tables: "\0" is unknown
            table = self._normal if kind in (NORMAL, USER_DEFINED, UNUSED) else self._reserved
            # sentencepiece's BPE keeps every piece in one table (InitializePieces with
            # use_reserved_id_map=false): a piece may not be both normal and reserved
            other = self._reserved if table is self._normal else self._normal
            if not piece or piece in table or (self._ONE_TABLE and piece in other):
                raise ValueError(f"piece {i} ({piece!r:.60}) is empty or already defined")
            table[piece] = i
        self._score_keys: list[int] = total_order_keys(self.scores)
        if self.byte_fallback:
            missing = [b for b in range(256) if byte_piece(b) not in self._reserved]
            if missing:
                raise ValueError(
                    f"byte_fallback is on but byte piece {byte_piece(missing[0])}"
                    f" is missing ({len(missing)} of 256 missing)"
                )

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> SentencePieceBPE:
        """Read a ``.model`` file (as data) and build the tokenizer.

        >>> SentencePieceBPE.from_file("no/such.model")
        Traceback (most recent call last):
        ...
        FileNotFoundError: [Errno 2] No such file or directory: 'no/such.model'
        """
        with open(path, "rb") as f:
            data = f.read()
        try:
            return cls(data)
        except ValueError as err:
            raise ValueError(f"{os.fspath(path)}: {err}") from None

    @property
    def vocab_size(self) -> int:
        """How many pieces the model has (ids ``0 .. vocab_size - 1``)."""
        return len(self.pieces)

    def __repr__(self) -> str:
        return f"SentencePieceBPE({len(self.pieces)} pieces, byte_fallback={self.byte_fallback})"

    def piece_to_id(self, piece: str) -> int:
        """sentencepiece's PieceToId: reserved pieces first, then normal ones, else ``<unk>``.

        Unknown strings give the ``<unk>`` id, as in sentencepiece (no error).
        """
        found = self._reserved.get(piece)
        if found is None:
            found = self._normal.get(piece, self.unk_id)
        return found

    def id_to_piece(self, idx: int) -> str:
        """The piece with id ``idx``; IndexError (naming it) outside ``0 .. vocab_size - 1``."""
        try:
            i = operator.index(idx)  # ints and numpy integers, not floats or strings
        except TypeError:
            raise TypeError(f"ids are ints, not {type(idx).__name__}: {idx!r}") from None
        if not 0 <= i < len(self.pieces):
            raise IndexError(f"id {idx!r} is out of range 0..{len(self.pieces) - 1}")
        return self.pieces[i]

    # --- encode ----------------------------------------------------------------------------

    def normalize(self, text: str) -> str:
        """Normalizer::Normalize for identity rules: spaces to ``▁``, the dummy prefix.

        With ``remove_extra_whitespaces`` leading and trailing spaces go and inner runs of
        spaces shrink to one (spaces ``' '`` only: tabs and newlines are kept as they are).
        """
        check_text(text)
        space = SPACE if self.escape_whitespaces else " "
        if self.remove_extra_whitespaces:
            text = text.lstrip(" ")
        if not text:
            return ""
        if self.remove_extra_whitespaces:
            while "  " in text:
                text = text.replace("    ", " ").replace("  ", " ")
        out = (space if self.add_dummy_prefix else "") + text.replace(" ", space)
        # sentencepiece strips trailing *escaped* spaces: a literal '▁' at the end goes too
        return out.rstrip(space) if self.remove_extra_whitespaces else out

    def encode_as_pieces(self, text: str) -> list[str]:
        """The pieces BPE leaves, before ids (unknown characters still as characters)."""
        return [piece for piece, _ in self._bpe_path(text)]

    def _bpe_path(self, text: str) -> list[tuple[str, int]]:
        """BPE over the normalized text: ``(piece, id)`` pairs, ``<unk>``'s id for unknowns."""
        symbols = list(self.normalize(text))
        n = len(symbols)
        prev = list(range(-1, n - 1))
        nxt = [*range(1, n), -1]
        normal, keys, types = self._normal, self._score_keys, self.types
        heap: list[tuple[int, int, int, int]] = []
        rev_merge: dict[str, tuple[str, str]] = {}

        def push(left: int, right: int) -> None:
            if left == -1 or right == -1:
                return
            piece = symbols[left] + symbols[right]
            idx = normal.get(piece)
            if idx is None:
                return
            # heapq pops the smallest: highest score first (in sentencepiece's order of
            # float32 bit patterns, see model_file.total_order_keys), then the leftmost symbol
            heapq.heappush(heap, (-keys[idx], left, right, len(piece)))
            if types[idx] == UNUSED:  # sentencepiece splits unused pieces again at the end
                rev_merge[piece] = (symbols[left], symbols[right])

        for i in range(1, n):
            push(i - 1, i)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            a, b = symbols[left], symbols[right]
            if not a or not b or len(a) + len(b) != size:
                continue  # stale: one side has been merged into something else since
            symbols[left], symbols[right] = a + b, ""
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            push(prev[left], left)
            push(left, nxt[left])

        out: list[tuple[str, int]] = []
        i = 0 if n else -1
        while i != -1:
            self._resegment(symbols[i], rev_merge, out)
            i = nxt[i]
        return out

    def _resegment(
        self, piece: str, rev_merge: Mapping[str, tuple[str, str]], out: list[tuple[str, int]]
    ) -> None:
        """Split an unused piece back into the pieces it was merged from, as bpe_model.cc's
        ``resegment`` does, with an explicit stack (a chain of unused pieces can be thousands
        deep): below ``MAX_RESEGMENT_DEPTH`` levels a piece is output as it is."""
        types, unk = self.types, self.unk_id
        stack = [(piece, 0)]
        while stack:
            w, depth = stack.pop()
            idx = self._normal.get(w)  # PieceToIdNoReserved: one table for every piece
            if idx is None:
                idx = self._reserved.get(w, unk)
            if depth > MAX_RESEGMENT_DEPTH:
                out.append((w, idx))
            elif idx == unk or types[idx] not in (NORMAL, USER_DEFINED, UNUSED):
                out.append((w, unk))
            elif types[idx] != UNUSED:
                out.append((w, idx))
            elif w not in rev_merge:
                out.append((w, unk))
            else:
                left, right = rev_merge[w]
                stack.append((right, depth + 1))
                stack.append((left, depth + 1))

    def encode(self, text: str) -> list[int]:
        """Encode ``text`` to ids exactly as ``sentencepiece`` does (no BOS/EOS).

        Unknown pieces become their ``<0xNN>`` byte pieces with byte fallback; without it,
        neighbouring unknown pieces become one ``<unk>``. A text with a lone surrogate (no
        UTF-8 form) is refused with ValueError, as sentencepiece refuses it.
        """
        return self._output_ids(self._bpe_path(text))

    def _output_ids(self, path: Iterable[tuple[str, int]]) -> list[int]:
        """``(piece, id)`` pairs to output ids: an unknown piece becomes the ``<0xNN>`` pieces of
        its bytes (byte fallback), else one ``<unk>`` stands for a whole run of unknowns."""
        ids: list[int] = []
        prev_unk = False
        for piece, idx in path:
            unk = self.types[idx] == UNKNOWN
            if unk and self.byte_fallback:
                ids.extend(self._reserved[byte_piece(b)] for b in piece.encode("utf-8"))
            elif not (unk and prev_unk):
                ids.append(idx)
            prev_unk = unk
        return ids

    def encode_many(self, texts: Iterable[str]) -> list[list[int]]:
        """:meth:`encode` on each text."""
        return [self.encode(t) for t in texts]

    # --- decode ----------------------------------------------------------------------------

    def decode(self, ids: Sequence[int]) -> str:
        """Decode ids as ``sp.decode(ids)``: bytes joined, the dummy prefix's ``▁`` removed.

        Control pieces (``<s>``, ``</s>``) decode to nothing, ``<unk>`` to the model's
        ``unk_surface``, runs of byte pieces to their UTF-8 text (one U+FFFD per invalid
        byte), ``▁`` to a space. Only the first piece of the text loses a leading ``▁``.
        """
        pieces = [self.id_to_piece(i) for i in ids]
        types = [self.types[self.piece_to_id(p)] for p in pieces]
        text: list[str] = []
        pending: list[int] = []  # bytes of the current run of byte pieces
        strip_prefix = self.add_dummy_prefix or self.remove_extra_whitespaces
        expect_bos_ws, bos_ws_seen, wrote = True, False, False
        for piece, kind in zip(pieces, types, strict=True):
            if kind == BYTE:
                pending.append(piece_byte(piece))  # type: ignore[arg-type]
                continue
            if pending:
                text.append(decode_bytes(bytes(pending)))
                pending.clear()
                wrote = True
            if bos_ws_seen or wrote:
                expect_bos_ws = False
            bos_ws_seen = False
            if kind == CONTROL:
                continue
            if kind == UNKNOWN:
                surface = self.unk_surface if piece == self.pieces[self.unk_id] else piece
            else:
                if expect_bos_ws and strip_prefix and piece.startswith(SPACE):
                    piece = piece[1:]
                    bos_ws_seen = not self.remove_extra_whitespaces
                surface = piece.replace(SPACE, " ")
            text.append(surface)
            wrote = wrote or bool(surface)
        if pending:
            text.append(decode_bytes(bytes(pending)))
        return "".join(text)
