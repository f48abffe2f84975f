"""The ``.model`` file format: written by ``Tokenizer.save``, read by ``Tokenizer.load``.

A ``.model`` file is plain UTF-8 text, one field per line::

    tokcourse v1                 the format line
    pattern "..."                the split pattern, a JSON string, or null (no split)
    bytes identity               or "bytes" and the 256 byte ids (GPT tokenizers reorder them)
    special 1                    how many special tokens follow
    "<|endoftext|>" 300          a JSON string and an id per line
    merges 2                     how many merges follow
    97 97 256                    "a b new_id", in the order they were learned: ids rise
    256 97 257

A file is data, never a program. So reading one:

- only parses JSON strings and decimal integers; ids are bounded by ``MAX_TOKEN_ID`` (the
  largest id tiktoken accepts: its ids are unsigned 32-bit integers);
- accepts only the split patterns in ``patterns.KNOWN_PATTERNS`` unless the caller trusts
  the file (``trust_pattern=True``): a pattern is a regex, and a hostile regex can take
  gigabytes to compile or hours to match. Even a trusted pattern is size-checked before it
  is compiled and runs with a time limit (``patterns.compile_trusted``);
- raises ``ValueError`` naming the file and the line for anything else.

The end of this module holds the checks our SentencePiece readers (``sentencepiece_bpe``,
``unigram``) make on a sentencepiece ``.model`` (a protobuf, another format): pieces that are
not UTF-8, too long or hold NUL, texts with no UTF-8 form, and the order of BPE scores.

Writing is atomic (``write_atomic``): a temporary file next to the target, then a rename, so a
failure never leaves a half-written ``.model`` file where a good one was.

>>> data = parse_model('tokcourse v1\\npattern null\\nbytes identity\\nspecial 0\\nmerges 1\\n'
...                    '104 105 256\\n', "hi.model")
>>> data.pattern, data.merges
(None, {(104, 105): 256})
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .patterns import KNOWN_PATTERNS

__all__ = [
    "FORMAT_VERSION",
    "MAX_PIECE_BYTES",
    "MAX_TOKEN_ID",
    "ModelData",
    "check_sentencepiece_pieces",
    "check_text",
    "model_text",
    "parse_model",
    "read_model",
    "render_token",
    "total_order_keys",
    "vocab_text",
    "write_atomic",
]

FORMAT_VERSION = "tokcourse v1"
"""First line of every ``.model`` file; bump it when the format changes."""

MAX_TOKEN_ID = 2**32 - 1
"""The largest token id we accept anywhere: tiktoken stores ids as unsigned 32-bit integers
(``type Rank = u32`` in its Rust core) and refuses a larger one with ``OverflowError``."""

_IDENTITY = tuple(range(256))
_MAX_DIGITS = len(str(MAX_TOKEN_ID))  # check the length before int(): no 5,000-digit numbers


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


@dataclass
class ModelData:
    """What a ``.model`` file holds, parsed and checked line by line (not yet a tokenizer)."""

    path: str
    pattern: str | None
    byte_shuffle: tuple[int, ...]
    specials: dict[str, tuple[int, int]] = field(default_factory=dict)  # name: (id, line)
    merges: dict[tuple[int, int], int] = field(default_factory=dict)

    def fail(self, line: int, message: str) -> NoReturn:
        raise ValueError(f"{self.path}, line {line}: {message}")


def _is_number(text: str) -> bool:
    # isascii: "²".isdigit() is True, but int("²") fails; the length bounds int()'s work
    return text.isascii() and text.isdigit() and len(text) <= _MAX_DIGITS


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
        except RecursionError:  # e.g. 100,000 nested "[": JSON arrays inside arrays
            self.fail(f"{key} is nested too deeply to be a JSON string: {value!r:.80}")

    def count(self, key: str) -> int:
        value = self.field(key)
        if not _is_number(value) or int(value) > MAX_TOKEN_ID:  # refuses signs, spaces, "1e3"
            self.fail(f"expected '{key} <count>' (at most {MAX_TOKEN_ID}), got {key} {value!r:.80}")
        return int(value)

    def ids(self, n: int, what: str) -> list[int]:
        line = self.next(what)
        fields = line.split(" ")
        if len(fields) != n or not all(map(_is_number, fields)):
            self.fail(f"expected {what} ({n} non-negative integers), got {line!r:.80}")
        ids = [int(f) for f in fields]
        if max(ids) > MAX_TOKEN_ID:
            self.fail(f"id {max(ids)} is above the largest token id {MAX_TOKEN_ID} (2**32 - 1)")
        return ids

    def byte_order(self) -> tuple[int, ...]:
        value = self.field("bytes")
        if value == "identity":
            return _IDENTITY
        fields = value.split(" ")
        order = [int(f) for f in fields if f.isascii() and f.isdigit() and len(f) <= 3]
        if sorted(order) != list(_IDENTITY) or len(order) != len(fields):
            self.fail("expected 'bytes identity' or 'bytes' and a permutation of 0..255")
        return tuple(order)

    def special_token(self) -> tuple[str, int]:
        line = self.next("a special token line '\"name\" id'")
        name_json, _, idx = line.rpartition(" ")
        try:
            name = json.loads(name_json)
        except (json.JSONDecodeError, RecursionError):
            name = None
        if not isinstance(name, str) or not _is_number(idx):
            self.fail(f"expected a special token '\"name\" id', got {line!r:.80}")
        if int(idx) > MAX_TOKEN_ID:
            self.fail(f"special token {name!r}: id {idx} is above the largest id {MAX_TOKEN_ID}")
        return name, int(idx)

    def expect_end(self) -> None:
        if self.lineno < len(self.lines):
            self.lineno += 1
            self.fail(f"unexpected extra line {self.lines[self.lineno - 1]!r:.80}")


_MERGE_LINES = re.compile(r"(?:[0-9]{1,10} [0-9]{1,10} [0-9]{1,10}(?:\n|\Z))*")


def _merge_lines(reader: _LineReader, count: int) -> Iterable[tuple[int, int, int]]:
    """The ``count`` merge lines as ``(a, b, new_id)``; syntax errors name their line.

    Fast path: one regex checks the syntax of every line at once (200k merges for GPT-4o),
    then ``int`` runs in C; a file it refuses is read line by line to find the bad line.
    """
    block = reader.lines[reader.lineno : reader.lineno + count]
    if len(block) == count and _MERGE_LINES.fullmatch(joined := "\n".join(block)):
        numbers = list(map(int, joined.split())) if count else []
        if not numbers or max(numbers) <= MAX_TOKEN_ID:
            reader.lineno += count
            return zip(numbers[0::3], numbers[1::3], numbers[2::3], strict=True)
    return (reader.ids(3, "a merge 'a b new_id'") for _ in range(count))


def parse_model(text: str, path: str, *, trust_pattern: bool = False) -> ModelData:
    """Parse and check the text of a ``.model`` file; errors name ``path`` and the line.

    The pattern is only compared with the known patterns here, never compiled: an unknown
    one is refused unless ``trust_pattern`` (then ``Tokenizer.load`` compiles it, bounded).
    """
    reader = _LineReader(path, text.split("\n"))
    if reader.next("the format line") != FORMAT_VERSION:
        reader.fail(f"expected {FORMAT_VERSION!r} (is this a tokcourse .model file?)")
    pattern = reader.json_field("pattern")
    if pattern is not None and not isinstance(pattern, str):
        reader.fail(f"a split pattern must be a str, got {type(pattern).__name__}: {pattern!r:.80}")
    if not trust_pattern and pattern not in KNOWN_PATTERNS:
        reader.fail(
            f"unknown split pattern {pattern!r:.200}. A pattern is a regex that would run on "
            "your text, so only the GPT-2, GPT-4 and GPT-4o patterns (or null) load by default. "
            "If you trust this file, load it with trust_pattern=True."
        )
    data = ModelData(path, pattern, reader.byte_order())
    for _ in range(reader.count("special")):
        name, idx = reader.special_token()
        if name in data.specials:
            reader.fail(f"special token {name!r} appears twice")
        data.specials[name] = (idx, reader.lineno)
    known = set(data.byte_shuffle)
    previous = max(known)
    count = reader.count("merges")
    first = reader.lineno  # merge k is on line first + k + 1
    for k, (a, b, idx) in enumerate(_merge_lines(reader, count)):
        reader.lineno = first + k + 1
        if a not in known or b not in known:
            reader.fail(f"merge ({a}, {b}) uses an id not defined on an earlier line")
        if idx in known:
            reader.fail(f"merge ({a}, {b}) -> {idx} reuses id {idx}")
        if (a, b) in data.merges:
            reader.fail(f"the pair ({a}, {b}) is merged twice")
        if idx < previous:
            # encoders apply merges by id: a file out of id order has no single meaning
            reader.fail(
                f"merge ({a}, {b}) -> {idx} comes after id {previous}: merge ids must rise "
                "in file order (the order the merges were learned)"
            )
        data.merges[(a, b)] = previous = idx
        known.add(idx)
    reader.expect_end()
    return data


def read_model(path: str | os.PathLike, *, trust_pattern: bool = False) -> ModelData:
    """Read and parse the ``.model`` file at ``path`` (see ``parse_model``)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")  # any line ends, as open() reads
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise ValueError(
            f"{path}, line {line}: byte {raw[err.start]:#04x} is not valid UTF-8 "
            "(a .model file is UTF-8 text; is this a tokcourse .model file?)"
        ) from None
    return parse_model(text, path, trust_pattern=trust_pattern)


def model_text(
    pattern: str | None,
    byte_shuffle: tuple[int, ...],
    special_tokens: Mapping[str, int],
    merges: Mapping[tuple[int, int], int],
) -> str:
    """The text of the ``.model`` file for these tables (see the module docstring)."""
    lines = [FORMAT_VERSION, "pattern " + json.dumps(pattern, ensure_ascii=False)]
    if tuple(byte_shuffle) == _IDENTITY:
        lines.append("bytes identity")
    else:
        lines.append("bytes " + " ".join(map(str, byte_shuffle)))
    lines.append(f"special {len(special_tokens)}")
    lines.extend(f"{json.dumps(n, ensure_ascii=False)} {i}" for n, i in special_tokens.items())
    lines.append(f"merges {len(merges)}")
    lines.extend(f"{a} {b} {idx}" for (a, b), idx in merges.items())
    return "\n".join(lines) + "\n"


def vocab_text(
    vocab: Mapping[int, bytes],
    merges: Mapping[tuple[int, int], int],
    special_tokens: Mapping[str, int],
) -> str:
    """The human-readable ``.vocab`` file: one token per line, with the merge that made it."""
    parents = {idx: pair for pair, idx in merges.items()}
    lines = []
    for idx, token in vocab.items():
        if idx in parents:
            a, b = parents[idx]
            left, right = render_token(vocab[a]), render_token(vocab[b])
            lines.append(f"[{left}][{right}] -> [{render_token(token)}] {idx}\n")
        else:
            lines.append(f"[{render_token(token)}] {idx}\n")
    for name, idx in special_tokens.items():
        lines.append(f"special [{render_token(name.encode('utf-8'))}] {idx}\n")
    return "".join(lines)


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` as UTF-8, all or nothing.

    The text is encoded first (an unencodable string fails before any file is touched), then
    written to a temporary file in the same directory and renamed over ``path``: a rename
    within a directory is atomic, so a reader sees the old file or the new one, never half.
    """
    data = text.encode("utf-8")
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o777  # keep the old file's permissions
    except FileNotFoundError:
        umask = os.umask(0o022)  # read the umask (the only way is to set it), then restore it
        os.umask(umask)
        mode = 0o666 & ~umask  # what open(path, "w") would have given
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)  # mkstemp makes the file private (0600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# --- SentencePiece .model files (protobuf): checks every reader makes -----------------------

#: sentencepiece refuses a piece of this many UTF-8 bytes or more ("piece is too long.",
#: ``kMaxPieceSize`` in ``InitializePieces``, model_interface.cc).
MAX_PIECE_BYTES = 8000


def check_sentencepiece_pieces(proto: Any) -> None:
    """Refuse what sentencepiece refuses in every piece, or what we cannot represent.

    An empty file parses as a model with no pieces (sentencepiece: "unk is not defined.").
    A piece of ``MAX_PIECE_BYTES`` bytes or more is refused as sentencepiece refuses it. A
    piece (or ``unk_surface``) that is not valid UTF-8 comes out of protobuf as ``bytes``:
    sentencepiece loads it and fails with ``UnicodeDecodeError`` when it decodes it; we refuse
    at load, naming the field and the piece.
    """
    if not proto.pieces:
        raise ValueError(
            "not a SentencePiece model: it has no pieces (an empty or truncated file?); "
            "sentencepiece refuses it too ('unk is not defined.')"
        )
    for i, p in enumerate(proto.pieces):
        piece = p.piece
        if not isinstance(piece, str):
            raise ValueError(f"pieces[{i}].piece is not valid UTF-8: {bytes(piece)[:40]!r}")
        if len(piece) * 4 >= MAX_PIECE_BYTES and len(piece.encode("utf-8")) >= MAX_PIECE_BYTES:
            raise ValueError(
                f"pieces[{i}].piece is too long: {len(piece.encode('utf-8'))} bytes of UTF-8; "
                f"sentencepiece refuses a piece of {MAX_PIECE_BYTES} bytes or more "
                "('piece is too long.')"
            )
    for i, p in enumerate(proto.pieces):
        # a piece "\0" of type UNUSED (5) is skipped by sentencepiece; any other NUL refused
        if "\0" in p.piece and not (p.piece == "\0" and p.type == 5):
            raise ValueError(
                f"pieces[{i}].piece {p.piece!r:.60} has a NUL character; sentencepiece "
                "refuses it ('piece must not include null character.')"
            )
    trainer = proto.trainer_spec
    if trainer.HasField("unk_surface") and not isinstance(trainer.unk_surface, str):
        surface = bytes(trainer.unk_surface)[:40]
        raise ValueError(f"trainer_spec.unk_surface is not valid UTF-8: {surface!r}")


def check_text(text: str) -> None:
    """Refuse a str that has no UTF-8 form (a lone surrogate), as sentencepiece refuses it.

    sentencepiece's Python binding raises RuntimeError ("Unable to cast Python instance of
    type <class 'str'> to C++ type") for such a text, byte fallback or not.

    >>> check_text("\\ud800")
    Traceback (most recent call last):
    ...
    ValueError: text has no UTF-8 form: U+D800 (a lone surrogate) at position 0
    """
    if not isinstance(text, str):
        raise TypeError(f"encode takes a str, not {type(text).__name__}: {text!r:.60}")
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        code = ord(text[err.start])
        raise ValueError(
            f"text has no UTF-8 form: U+{code:04X} (a lone surrogate) at position {err.start}"
        ) from None


def total_order_keys(scores: Sequence[float]) -> list[int]:
    """Each score as the int that orders it as sentencepiece's BPE heap does.

    ``SymbolPairComparator`` compares the float32 bit patterns as integers: negative floats
    in reverse, so -0.0 < +0.0, -inf is below every number, a NaN with the sign bit below
    -inf and one without above +inf (IEEE totalOrder). NaN and infinite scores are legal in
    a BPE model: sentencepiece loads them and merges by this order.
    """
    bits = array("i", array("f", scores).tobytes())
    return [b if b >= 0 else -(b & 0x7FFFFFFF) - 1 for b in bits]
