"""SentencePiece (chapter 07): byte_fallback_pieces, decode_byte_pieces, merge_by_score,
add_dummy_prefix.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from tokcourse import bpe
from tokcourse import sentencepiece_bpe as spb
from tokcourse.course.exercises import BOOL, STR, Case, Entry, Exercise, Raised, list_of

# --- byte_fallback_pieces -----------------------------------------------------------------------

_TEXTS = ("", "a", "\n", "\x00", "é", "€", "안", "🤗", "ꙮ", "a b", "\x7f\xff", "👨\u200d👩")


#: Lone surrogates (half of a UTF-16 pair, as a JSON "\\ud83d" decodes): a str Python allows
#: but that has no UTF-8 bytes. text.encode("utf-8") refuses it, and so does sentencepiece.
_SURROGATES = ("\ud800", "a\udfffb", "\ud83d", "\ud83d\ude00", "🤗\udc80")


def _byte_fallback_cases() -> Iterator[Case]:
    yield from (Case((text,)) for text in _TEXTS)
    yield from (Case((text,)) for text in _SURROGATES)
    rng = random.Random(7)
    alphabet = "ab \n\t€é안녕🤗ꙮ\x00\x1f\u0301"
    for _ in range(40):
        yield Case(("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 8))),))


def _byte_fallback_hint(case: Case, expected: Any, got: Any) -> str | None:
    text = case.args[0]
    if isinstance(expected, Raised) and any("\ud800" <= c <= "\udfff" for c in text):
        return (
            f"{text!r} holds a lone surrogate (U+D800..U+DFFF, half of a UTF-16 pair): it has "
            "no UTF-8 bytes, so there are no byte pieces to give. text.encode('utf-8') raises "
            "UnicodeEncodeError, as sentencepiece refuses such a str; do not hide it with "
            "errors='surrogatepass', 'replace' or 'ignore', nor encode the code point by hand."
        )
    if not isinstance(got, list) or not all(isinstance(p, str) for p in got):
        return None
    byte_like = [p for p in got if p.startswith("<0x") and p.endswith(">")]
    if len(got) == len(text) != len(expected):
        return (
            "one piece per character: byte fallback spells the UTF-8 *bytes* of the text, "
            "text.encode('utf-8'), and '안' is three of them."
        )
    if any(p[3:-1] != p[3:-1].upper() for p in byte_like):
        return "the hex digits are upper case in sentencepiece's pieces: '<0x0A>', format :02X."
    if any(len(p) != 6 for p in byte_like):
        return "every byte piece has exactly two hex digits: '<0x0A>', not '<0xA>' (use :02X)."
    return None


# --- decode_byte_pieces -------------------------------------------------------------------------


def _decode_byte_pieces_cases() -> Iterator[Case]:
    def pieces(data: bytes) -> list[str]:
        return [spb.byte_piece(b) for b in data]

    for data in (
        b"",
        b"hi",
        "é!".encode(),
        "안녕".encode(),
        "🤗".encode(),
        b"\xe2\x82!",  # a truncated character: two bad bytes, two U+FFFD
        b"\xe2\x82",
        b"\x80",
        b"\xc3",
        b"\xf0\x9f\xa4",
        b"\xed\xa0\x80",  # a surrogate spelled in UTF-8: invalid
        b"\xc0\xaf",  # overlong
        "\ufffd".encode(),
        b"a\xffb",
    ):
        yield Case((pieces(data),))
    rng = random.Random(8)
    chunks = [b"a", b" ", "é".encode(), "€".encode(), "🤗".encode(), b"\x80", b"\xe2", b"\xf0\x9f"]
    for _ in range(40):
        yield Case((pieces(b"".join(rng.choice(chunks) for _ in range(rng.randrange(0, 7)))),))


def _decode_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, UnicodeDecodeError):
        return (
            "byte pieces can spell invalid UTF-8 (a model may emit half a character): "
            "sentencepiece puts U+FFFD where a byte is invalid instead of failing."
        )
    if not isinstance(got, str):
        return None
    data = bytes(spb.piece_byte(p) or 0 for p in case.args[0])
    if got == data.decode("utf-8", "replace"):
        return (
            "Python's errors='replace' swaps a whole broken sequence for one U+FFFD; "
            "sentencepiece checks one character at a time and puts one U+FFFD per invalid "
            "byte (b'\\xe2\\x82!' gives '\ufffd\ufffd!')."
        )
    if got == data.decode("utf-8", "ignore"):
        return "invalid bytes vanished (errors='ignore'): sentencepiece shows each as U+FFFD."
    if got == "".join(bytes([b]).decode("utf-8", "replace") for b in data):
        return (
            "each byte was decoded on its own: join the bytes first, one character spans several."
        )
    return None


# --- merge_by_score -----------------------------------------------------------------------------

_TIE = {"aa": -1.0}
# after the first 'ab' merge, 'aba' beats the second 'ab': ['aba', 'b'], not ['ab', 'ab']
_BLOCK = {"ab": -1.0, "aba": 0.0, "bab": 0.0}


def _merge_cases() -> Iterator[Case]:
    yield from (
        Case(([], {"ab": 0.0})),
        Case((["a"], {"ab": 0.0})),
        Case((list("ab"), {})),
        Case((list("ab"), {"ab": -3.0})),
        Case((list("aaa"), dict(_TIE))),  # a tie: the leftmost pair goes first
        Case((list("abc"), {"ab": -1.0, "bc": -1.0})),
        Case((list("abc"), {"ab": -2.0, "bc": -1.0})),  # highest score, not first in the text
        Case((list("abc"), {"bc": -2.0, "ab": -1.0})),
        Case((list("abab"), dict(_BLOCK))),  # one merge at a time, then look again
        Case((list("▁aab"), {"aa": -1.0, "ab": -2.0, "▁aa": -3.0})),
        Case((list("▁▁▁▁▁"), {"▁▁": -1e9, "▁▁▁▁": -1e9})),
    )
    rng = random.Random(9)
    vocab = ["ab", "ba", "aa", "bb", "abb", "aab", "bab", "abab", "▁a", "▁ab", "▁b", "bba"]
    for _ in range(60):
        chosen = rng.sample(vocab, rng.randrange(1, len(vocab)))
        scores = {p: float(-rng.randrange(0, 4)) for p in chosen}  # few values: many ties
        text = "▁" * rng.randrange(0, 2) + "".join(
            rng.choice("ab") for _ in range(rng.randrange(0, 12))
        )
        yield Case((list(text), scores))


def _merge_variant(symbols: list[str], scores: dict, *, right: bool = False, low: bool = False,
                   every: bool = False) -> list[str]:  # fmt: skip
    """The classic wrong merge loops: ties to the right, lowest score, every occurrence at once."""
    symbols = list(symbols)
    while True:
        pairs = enumerate(pairwise(symbols))
        found = [(scores[a + b], i) for i, (a, b) in pairs if a + b in scores]
        if not found:
            return symbols
        pick = min if low else max
        best = pick(s for s, _ in found)
        where = [i for s, i in found if s == best]
        if every:  # chapter 02's merge: every occurrence of the pair, left to right
            a, b = symbols[where[0]], symbols[where[0] + 1]
            symbols = bpe.merge(symbols, (a, b), a + b)
            continue
        i = where[-1] if right else where[0]
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]


def _merge_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, list):
        return None
    symbols, scores = case.args
    if got == _merge_variant(symbols, scores, right=True):
        return (
            "on a tie (two pairs with the same score) sentencepiece merges the leftmost pair: "
            "keep the first best you find (compare with >, not >=)."
        )
    if got == _merge_variant(symbols, scores, every=True):
        return (
            "merge one pair at a time, then look at the new neighbours again: after one "
            "merge a better pair may appear that uses a symbol of the next occurrence."
        )
    low = got == _merge_variant(symbols, scores, low=True)
    one_pass = got == _one_pass(symbols, scores)
    if low and one_pass:  # this input cannot tell the two apart: name what both get wrong
        return (
            "the highest score wins, wherever the pair is: every step merges the pair with "
            "the highest score in the whole list (-1.0 before -3.0), not the first mergeable "
            "pair from the left and not the lowest score."
        )
    if low:
        return (
            "the highest score wins: scores are negative merge orders, so -1.0 is merged "
            "before -3.0 (take the max, not the min)."
        )
    if one_pass:
        return (
            "one pass from left to right is not enough: after every merge look at all the "
            "pairs again and merge the one with the highest score, wherever the pair is."
        )
    return None


def _one_pass(symbols: list[str], scores: dict) -> list[str]:
    """The greedy wrong loop: merge into the previous symbol whenever the pair is a piece."""
    out: list[str] = []
    for s in symbols:
        if out and out[-1] + s in scores:
            out[-1] += s
        else:
            out.append(s)
    return out


# --- add_dummy_prefix ---------------------------------------------------------------------------


@functools.cache
def _model(
    dummy: bool | None, remove: bool | None, allow_ws: bool | None, more: tuple = ()
) -> bytes:
    """A small ModelProto with the three booleans set (None: the field left out).

    ``more``: extra pieces, which make a case bigger than the classic mistakes' own cases.
    """
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    for piece, kind in (("<unk>", 2), ("<s>", 3), ("▁a", 1), *((p, 1) for p in more)):
        proto.pieces.add(piece=piece, score=0.0, type=kind)
    proto.normalizer_spec.name = "identity"
    if dummy is not None:
        proto.normalizer_spec.add_dummy_prefix = dummy
    if remove is not None:
        proto.normalizer_spec.remove_extra_whitespaces = remove
    if allow_ws is not None:
        proto.trainer_spec.allow_whitespace_only_pieces = allow_ws
    return proto.SerializeToString()


@functools.cache
def _bare_model() -> bytes:
    """A ModelProto with pieces but no normalizer_spec at all: every normalizer default."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    for piece, kind in (("<unk>", 2), ("<s>", 3), *(("▁" + c, 1) for c in "abcdefgh")):
        proto.pieces.add(piece=piece, score=0.0, type=kind)
    proto.trainer_spec.allow_whitespace_only_pieces = False
    return proto.SerializeToString()


def _dummy_prefix_cases() -> Iterator[Case]:
    # The first three are each the smallest input one classic mistake fails on, chosen so
    # the hint can tell which mistake it was (see _dummy_prefix_hint).
    yield Case((_model(None, True, True),))  # absent: the default True; HasField says False
    yield Case((_model(True, True, False),))  # allow_whitespace_only_pieces (TrainerSpec 26)
    yield Case((_model(True, False, True),))  # remove_extra_whitespaces (NormalizerSpec 4)
    for dummy in (False, True):
        for remove in (False, True):
            for allow_ws in (False, True):
                yield Case((_model(dummy, remove, allow_ws),))
    # Bigger than the cases above, so those stay the smallest each classic mistake fails on.
    yield Case((_bare_model(),))  # no normalizer_spec at all: its defaults, True (as for b"")
    # a model without the field right after one that sets it False: a ModelProto kept between
    # calls and filled with MergeFromString still holds the False (the last case sets True)
    for dummy in (False, None, False, None, True):
        yield Case((_model(dummy, False, False, ("▁b", "▁c", "▁d", "▁e")),))


def _dummy_prefix_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, bool):
        return None
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto.FromString(case.args[0])
    allow = proto.trainer_spec.allow_whitespace_only_pieces
    present = proto.normalizer_spec.HasField("add_dummy_prefix")
    remove = proto.normalizer_spec.remove_extra_whitespaces
    if got == allow and got != present and got != remove:
        return (
            "field 26 of TrainerSpec is allow_whitespace_only_pieces; add_dummy_prefix is "
            "field 3 of NormalizerSpec (proto.normalizer_spec.add_dummy_prefix)."
        )
    if got == present and got != allow and got != remove:
        return (
            "HasField says whether the field is written in the file, not its value; an "
            "absent add_dummy_prefix means its default, True. Read the attribute itself."
        )
    if got == remove and got != allow and got != present:
        return "that is remove_extra_whitespaces (field 4), the field after add_dummy_prefix."
    if not present and got is False and expected is True:
        if not proto.HasField("normalizer_spec"):
            return (
                "this model has no normalizer_spec at all, so every field of it is at its "
                "default: add_dummy_prefix is True, by the same rule that makes the docstring's "
                "add_dummy_prefix(b'') True. Read the field from a parsed proto; do not test "
                "for b'' or for the message being there."
            )
        return (
            "add_dummy_prefix is absent from this model, so it is True. If your function says "
            "True for this model on its own, it kept a value from the previous call: a "
            "ModelProto made once (at module level) and filled with MergeFromString keeps "
            "every field an earlier model set. Make a new pb.ModelProto() in each call, or use "
            "ParseFromString, which clears it first."
        )
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "byte_fallback_pieces": Entry(
        "byte_fallback_pieces(text) -> pieces such as ['<0xC3>', '<0xA9>']",
        lambda: Exercise(
            "byte_fallback_pieces",
            spb.byte_fallback_pieces,
            _byte_fallback_cases,
            normalize=list,
            returns=list_of(STR),
            hints=(_byte_fallback_hint,),
        ),
    ),
    "decode_byte_pieces": Entry(
        "decode_byte_pieces(pieces) -> text",
        lambda: Exercise(
            "decode_byte_pieces",
            spb.decode_byte_pieces,
            _decode_byte_pieces_cases,
            returns=STR,
            hints=(_decode_hint,),
        ),
    ),
    "merge_by_score": Entry(
        "merge_by_score(symbols, scores) -> merged symbols",
        lambda: Exercise(
            "merge_by_score",
            spb.merge_by_score,
            _merge_cases,
            normalize=list,
            returns=list_of(STR),
            hints=(_merge_hint,),
        ),
    ),
    "add_dummy_prefix": Entry(
        "add_dummy_prefix(model_bytes) -> bool",
        lambda: Exercise(
            "add_dummy_prefix",
            spb.add_dummy_prefix,
            _dummy_prefix_cases,
            returns=BOOL,
            hints=(_dummy_prefix_hint,),
        ),
    ),
}
