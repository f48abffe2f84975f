"""Build-time data of the playground's Mistral 7B v1 row (``_static/playground/sentencepiece.js``).

The browser encodes with our own port of :class:`tokcourse.sentencepiece_bpe.SentencePieceBPE`
(chapter 07). It needs the model's pieces, scores and types, the normalizer's settings and the
ids of the 256 byte pieces. They are read here from the hash-verified asset cache
(``tokcourse.course.data.store.path("mistral_v1_model")``: the same ``tokenizer.model.v1`` the
chapter loads) **through the package's own parser**, which refuses any model whose
normalization or model type it does not implement, naming the field.

The data goes into ``data/mistral_v1.js``, a script that calls
``tokcoursePlayground.addData("mistral_v1", {...})`` (a script, not JSON: Chromium refuses
``fetch`` on ``file://`` pages but runs an injected ``<script src>``). Compact form:

- ``pieces``: every piece, concatenated in id order, one string; ``lengths``: base64, one
  byte per piece, its length in UTF-16 code units (the unit JavaScript strings count in);
- ``scores``: base64 of the scores as little-endian float32, exactly the model's values (the
  merge order compares their float32 bit patterns, see ``model_file.total_order_keys``);
- ``types``: one digit per piece, the ``ModelProto.SentencePiece.Type`` (1 normal, 2 unknown,
  3 control, 5 unused, 6 byte);
- the normalizer and trainer settings the encoder follows.

The port cuts a text into chunks before every space (or literal ``▁``) that follows a character
that is neither, and encodes each chunk alone. That gives exactly the ids of the whole text
only if no piece a merge can produce has a ``▁`` right after another character: merges then
never cross such a cut. :func:`crossing_pieces` checks it and :func:`model_data` refuses a
model where it fails, and any setting the port does not follow (``remove_extra_whitespaces``
makes the normalization of a chunk depend on its neighbours; without ``byte_fallback`` a run
of unknown characters across a cut would be one ``<unk>``).
"""

from __future__ import annotations

import base64
import json
from array import array

FILE = "mistral_v1"
"""The data file's name (``data/mistral_v1.js``) and the tokenizer's name in the registry."""

ASSET = "mistral_v1_model"
"""The asset (``tokcourse.course.data.sources``) the data is read from."""


def crossing_pieces(pieces: list[str], types: list[int], space: str = "\u2581") -> list[str]:
    """The mergeable pieces that have ``space`` right after another character.

    Only normal and unused pieces (types 1, 5) can come out of a merge. A piece such as ``a▁b``
    would let a merge cross the cut the port makes before ``▁b``.

    >>> crossing_pieces(["▁the", "▁▁", "a▁b", "<0x20>", "x▁"], [1, 1, 1, 6, 5])
    ['a▁b', 'x▁']
    """
    return [
        p
        for p, t in zip(pieces, types, strict=True)
        if t in (1, 5) and any(p[j] == space and p[j - 1] != space for j in range(1, len(p)))
    ]


def model_data(model: bytes) -> dict:
    """What ``sentencepiece.js`` needs from a ``.model`` file, in the compact form above.

    Parsed by :class:`~tokcourse.sentencepiece_bpe.SentencePieceBPE` (ValueError for a model
    it refuses), then checked for what the port's chunking needs.

    >>> model_data(b"")
    Traceback (most recent call last):
    ...
    ValueError: not a SentencePiece model: it has no pieces (an empty or truncated file?); \
sentencepiece refuses it too ('unk is not defined.')
    """
    from tokcourse.sentencepiece_bpe import SPACE, SentencePieceBPE, byte_piece

    sp = SentencePieceBPE(model)  # the package's parser: refuses what it does not implement
    if sp.remove_extra_whitespaces:
        raise ValueError(
            "normalizer_spec.remove_extra_whitespaces is true: a chunk's normalization would "
            "depend on its neighbours; the playground's port implements only false"
        )
    if not sp.byte_fallback:
        raise ValueError(
            "trainer_spec.byte_fallback is false: the playground's port implements only "
            "byte-fallback models (a run of <unk> must not cross a chunk)"
        )
    space = SPACE if sp.escape_whitespaces else " "
    crossing = crossing_pieces(sp.pieces, sp.types, space)
    if crossing:
        raise ValueError(
            f"{len(crossing)} pieces have {space!r} right after another character "
            f"(first {crossing[0]!r}): merges could cross the chunks the playground cuts"
        )
    lengths = [len(p.encode("utf-16-le")) // 2 for p in sp.pieces]
    if max(lengths) > 255:
        raise ValueError(f"piece {lengths.index(max(lengths))} is longer than 255 UTF-16 units")
    scores = array("f", sp.scores)
    if scores.itemsize != 4:  # pragma: no cover - every platform Python runs on
        raise RuntimeError("array('f') is not float32 here")
    if array("H", [1]).tobytes() != b"\x01\x00":  # pragma: no cover - big-endian machine
        scores.byteswap()
    return {
        "size": len(sp.pieces),
        "pieces": "".join(sp.pieces),
        "lengths": base64.b64encode(bytes(lengths)).decode("ascii"),
        "scores": base64.b64encode(scores.tobytes()).decode("ascii"),
        "types": "".join(str(t) for t in sp.types),
        "addDummyPrefix": sp.add_dummy_prefix,
        "escapeWhitespaces": sp.escape_whitespaces,
        "removeExtraWhitespaces": sp.remove_extra_whitespaces,
        "byteFallback": sp.byte_fallback,
        "unkId": sp.unk_id,
        "byteIds": [sp.piece_to_id(byte_piece(b)) for b in range(256)],
    }


def unpack(data: dict) -> tuple[list[str], list[float], list[int]]:
    """The pieces, scores and types back from :func:`model_data`'s compact form (for tests).

    >>> unpack({"pieces": "ab▁c", "lengths": "AQIB", "scores": "AAAAAAAAgL8AAADA",
    ...         "types": "211"})
    (['a', 'b▁', 'c'], [0.0, -1.0, -2.0], [2, 1, 1])
    """
    lengths = base64.b64decode(data["lengths"])
    units = data["pieces"].encode("utf-16-le")
    pieces, pos = [], 0
    for n in lengths:
        pieces.append(units[2 * pos : 2 * (pos + n)].decode("utf-16-le"))
        pos += n
    if 2 * pos != len(units):
        raise ValueError(f"lengths cover {pos} UTF-16 units, pieces has {len(units) // 2}")
    scores = array("f")
    scores.frombytes(base64.b64decode(data["scores"]))
    if array("H", [1]).tobytes() != b"\x01\x00":  # pragma: no cover - big-endian machine
        scores.byteswap()
    return pieces, scores.tolist(), [int(t) for t in data["types"]]


def script(data: dict, name: str = FILE) -> str:
    """The ``.js`` data file that hands ``data`` to the playground.

    >>> script({"size": 0})
    'tokcoursePlayground.addData("mistral_v1", {"size":0});\\n'
    """
    # ASCII only (\u2581 ...): the file reads the same whatever charset the page declares
    text = json.dumps(data, separators=(",", ":"))
    return f"tokcoursePlayground.addData({json.dumps(name)}, {text});\n"


def scripts() -> dict[str, str]:
    """``{"mistral_v1": <the text of data/mistral_v1.js>}``, from the verified asset cache.

    ``tokcourse_playground.write_data`` writes each value to ``data/<key>.js``.
    """
    from tokcourse.course.data.store import path

    return {FILE: script(model_data(path(ASSET).read_bytes()))}
