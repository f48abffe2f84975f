"""Training a SentencePiece BPE model: the pieces ``spm_train --model_type=bpe`` writes (ch07).

:func:`train_bpe` takes lines of text and sentencepiece's own option names and returns a
``ModelProto`` whose pieces, scores, types and order are those of sentencepiece 0.2.3's
trainer (``bpe_model_trainer.cc``, ``trainer_interface.cc``). One function per step:

1. :func:`meta_pieces`: ``<unk>``, ``<s>``, ``</s>``, control, user-defined and byte pieces
   take the first ids (``InitMetaPieces``);
2. :func:`load_sentences`: strip trailing ``\\r`` and ``\\n`` (as sentencepiece's Python
   ``sentence_iterator`` does), skip empty lines, lines longer than ``max_sentence_length`` UTF-8
   bytes and lines holding ``▅`` (U+2585, sentencepiece's unknown marker), counted in the
   result; :func:`normalize` each line (identity rule: spaces only) and replace every meta
   piece in it by a boundary character;
3. :func:`required_characters`: keep the most frequent characters until they cover
   ``character_coverage`` of all (:func:`covered_characters`); the rest become ``▅``, which
   no piece may contain (:func:`mark_unknown`);
4. :func:`count_words`: with ``split_by_whitespace``, cut at ``▁`` (:func:`split_into_words`)
   and count each distinct word;
5. :func:`learn_merges` (in :mod:`tokcourse.sentencepiece_merge`): the merge loop. A pair may
   merge only if :func:`is_valid_piece` accepts the piece it makes (its length, where ``▁``
   sits, one Unicode script, digits);
6. :func:`final_pieces`: merged pieces in merge order, then the required characters, scored
   0, -1, -2, ...; :func:`model_proto` puts meta pieces at their ids.

The ``ModelProto`` holds the pieces (normal pieces carry a score and no ``type`` field, meta
pieces ``type`` and score 0, as sentencepiece writes them), a ``trainer_spec`` with
``model_type=BPE`` and every trainer option passed to :func:`train_bpe`, and a
``normalizer_spec`` with ``name="identity"``, an empty ``precompiled_charsmap`` and the
normalizer options passed. Called with the same options, ``spm.SentencePieceTrainer.train``
writes the same bytes (``tests/test_sentencepiece_train.py``).

Only ``normalization_rule_name="identity"`` is implemented (other rules need sentencepiece's
compiled tables); ``input_sentence_size`` must be 0 (all sentences). Unicode scripts come from
``regex``; sentencepiece's own table (``unicode_script_map.h``) is Unicode 9.0, so a character
assigned or moved to another script since then may split differently.

>>> trained = train_bpe(["hello world", "hello there"], vocab_size=20,
...                     normalization_rule_name="identity")
>>> [p.piece for p in trained.model.pieces][:8]
['<unk>', '<s>', '</s>', 'he', 'll', 'llo', '▁he', '▁hello']
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .sentencepiece_bpe import BYTE, CONTROL, SPACE, UNKNOWN, USER_DEFINED, byte_piece
from .sentencepiece_merge import learn_merges, unicode_script
from .sentencepiece_options import _NORMALIZER_FIELDS, DEFAULTS, check_options

__all__ = [
    "BOUNDARY",
    "DEFAULTS",
    "UNK_CHAR",
    "Trained",
    "check_options",
    "count_words",
    "covered_characters",
    "final_pieces",
    "is_valid_piece",
    "learn_merges",
    "load_sentences",
    "mark_unknown",
    "meta_pieces",
    "model_proto",
    "normalize",
    "required_characters",
    "split_into_words",
    "train_bpe",
]

#: sentencepiece's unknown-character marker (kUNKChar, U+2585): a rare character becomes it.
UNK_CHAR = "\u2585"
#: What a meta piece found in the text becomes (kPretokenizationBoundaryChar, U+001F).
BOUNDARY = "\x1f"


def _f32(x: float) -> float:
    """``x`` rounded to a C ``float``, as sentencepiece stores and compares
    it."""
    return struct.unpack("f", struct.pack("f", x))[0]


def meta_pieces(opts: Mapping[str, Any]) -> dict[int, tuple[str, int]]:
    """The reserved pieces by id: ``{id: (piece, type)}`` (``InitMetaPieces``).

    >>> meta_pieces(dict(DEFAULTS, control_symbols=("<sep>",)))
    {0: ('<unk>', 2), 1: ('<s>', 3), 2: ('</s>', 3), 3: ('<sep>', 3)}
    """
    meta: dict[int, tuple[str, int]] = {}
    unk = opts["unk_piece"]
    for kind in ("unk", "bos", "eos", "pad"):
        i, piece = opts[f"{kind}_id"], opts[f"{kind}_piece"]
        if i < 0:
            continue
        if i >= opts["vocab_size"] or i in meta or (kind != "unk" and piece == unk):
            raise ValueError(
                f"{kind}_id={i} ({piece!r}) is taken, out of range or a second {unk!r}"
            )
        meta[i] = (piece, UNKNOWN if kind == "unk" else CONTROL)
    if opts["unk_id"] < 0 and not opts["byte_fallback"]:
        raise ValueError(f"unk_id=-1: {unk!r} must be defined unless byte_fallback is on")
    seen: set[str] = set()
    next_id = 0
    symbols = [(s, CONTROL) for s in opts["control_symbols"]]
    symbols += [(s, USER_DEFINED) for s in opts["user_defined_symbols"]]
    symbols += [(byte_piece(b), BYTE) for b in range(256)] if opts["byte_fallback"] else []
    for piece, kind in symbols:
        if piece in seen or piece == unk:
            raise ValueError(f"{piece!r} is defined twice (or is the unk piece) in the symbols")
        seen.add(piece)
        named = [
            k for k in ("bos", "eos", "pad") if opts[f"{k}_id"] >= 0 and piece == opts[f"{k}_piece"]
        ]
        if named:  # control_symbols=["<s>"] changes the type of <s>, keeping its id
            meta[opts[f"{named[0]}_id"]] = (piece, kind)
            continue
        while next_id in meta:
            next_id += 1
        meta[next_id] = (piece, kind)
    return meta


def normalize(line: str, opts: Mapping[str, Any]) -> str:
    """sentencepiece's identity normalizer: spaces become ``▁``, plus the dummy prefix.

    With ``remove_extra_whitespaces``, leading spaces go, runs of spaces become one, and
    trailing ``▁`` go (even ``▁`` that were in the text) before a suffix ``▁`` is added.

    >>> normalize("  hello   world ", DEFAULTS)
    '▁hello▁world'
    """
    suffix = opts["treat_whitespace_as_suffix"]
    if opts["remove_extra_whitespaces"]:
        line = re.sub(" +", " ", line.lstrip(" "))
    if not line:
        return ""
    text = line.replace(" ", SPACE)
    if opts["add_dummy_prefix"] and not suffix:
        text = SPACE + text
    if opts["remove_extra_whitespaces"]:
        text = text.rstrip(SPACE)
    if opts["add_dummy_prefix"] and suffix:
        text += SPACE
    return text


@dataclass
class Trained:
    """What :func:`train_bpe` returns: the model and what training left out."""

    model: Any  #: a ``sentencepiece_model_pb2.ModelProto``
    too_long: int  #: lines skipped: more than ``max_sentence_length`` UTF-8 bytes
    reserved: int  #: lines skipped: they hold ``▅`` (U+2585)
    required_chars: dict[str, int]  #: characters kept as pieces, with their counts
    dropped_chars: dict[str, int]  #: characters below the coverage: ``<unk>`` or bytes
    merges: list[tuple[str, int]]  #: merged pieces in order, with their frequency


def load_sentences(
    lines: Iterable[str], opts: Mapping[str, Any], meta: Iterable[str]
) -> tuple[list[tuple[str, int]], int, int]:
    """Normalized sentences with weight 1, and how many lines were too long or reserved."""
    sentences: list[tuple[str, int]] = []
    too_long = reserved = 0
    for number, line in enumerate(lines, 1):
        if not isinstance(line, str):
            raise TypeError(f"line {number} is a {type(line).__name__}, not a str")
        line = line.rstrip("\r\n")  # as sentencepiece's Python sentence_iterator does
        try:
            size = len(line.encode("utf-8"))
        except UnicodeEncodeError as err:
            raise ValueError(f"line {number} has no UTF-8 form (a lone surrogate): {err}") from None
        if not line:
            continue
        if size > opts["max_sentence_length"]:
            too_long += 1
        elif UNK_CHAR in line:
            reserved += 1
        else:
            sentences.append((line, 1))
    if not sentences:
        raise ValueError(
            "no sentences to train on: the corpus is empty (or every line was skipped)"
        )
    longest_first = sorted(set(meta), key=len, reverse=True)
    matcher = re.compile("|".join(map(re.escape, longest_first)))
    out = [(matcher.sub(BOUNDARY, normalize(s, opts)), w) for s, w in sentences]
    i = 0  # drop empty sentences as sentencepiece does: swap with the last one, pop
    while i < len(out):
        if out[i][0]:
            i += 1
        else:
            out[i] = out[-1]
            out.pop()
    return out, too_long, reserved


def covered_characters(
    counts: Mapping[str, int],
    coverage: float,
) -> dict[str, int]:
    """The most frequent characters (on a tie, the smaller code point
    first), taken until they cover ``coverage`` of all occurrences; the
    character that reaches it is kept.

    sentencepiece compares before adding each character, as C floats: it
    stops when ``float(covered / total) >= float(coverage)``.

    >>> covered_characters({"c": 1, "b": 3, "a": 6}, 0.9)
    {'a': 6, 'b': 3}
    """
    total = sum(counts.values())
    kept: dict[str, int] = {}
    covered = 0
    for char, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if _f32(covered / total) >= _f32(coverage):
            break
        kept[char] = n
        covered += n
    return kept


def required_characters(
    sentences: Iterable[tuple[str, int]], coverage: float
) -> tuple[dict[str, int], dict[str, int]]:
    """The characters kept (:func:`covered_characters` of their counts), and the rest.

    >>> required_characters([("aaab", 1)], 0.98)
    ({'a': 3, 'b': 1}, {})
    """
    counts: Counter[str] = Counter()
    for text, weight in sentences:
        for char, n in Counter(text).items():
            counts[char] += n * weight
    counts.pop("\0", None)  # never counted: NUL cannot be in a piece
    if not counts:
        raise ValueError("the corpus has no characters to count (after normalization)")
    kept = covered_characters(counts, coverage)  # a meta piece's boundary counts, is no piece
    required = {c: n for c, n in kept.items() if c != BOUNDARY}
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    dropped = {c: n for c, n in ranked if c not in kept and c != BOUNDARY}
    return required, dropped


def mark_unknown(sentences: list[tuple[str, int]], required: Mapping[str, int]) -> None:
    """Replace, in place, every character that is not required by ``▅``."""
    for i, (text, weight) in enumerate(sentences):
        sentences[i] = ("".join(c if c in required else UNK_CHAR for c in text), weight)


def split_into_words(text: str, suffix: bool = False, whitespace_only: bool = False) -> list[str]:
    """Cut ``text`` before each ``▁`` (after it, with ``suffix``); ``SplitIntoWords``.

    With ``whitespace_only`` (``allow_whitespace_only_pieces``) a run of ``▁`` stays together.

    >>> split_into_words("▁a▁▁b"), split_into_words("▁a▁▁b", whitespace_only=True)
    (['▁a', '▁', '▁b'], ['▁a', '▁▁b'])
    """
    words: list[str] = []
    if suffix:
        words = [""] if text else []
        in_run = False
        for i, char in enumerate(text):
            if char == SPACE:
                in_run = True
            elif in_run:
                if whitespace_only:
                    words.append("")
                in_run = False
            words[-1] += char
            if i + 1 < len(text) and char == SPACE and not whitespace_only:
                words.append("")
        return words
    in_run = False
    for i, char in enumerate(text):
        is_space = char == SPACE
        if i == 0 or (is_space and (not in_run or not whitespace_only)):
            words.append("")
            in_run = True
        if in_run and not is_space:
            in_run = False
        words[-1] += char
    return words


def count_words(
    sentences: Iterable[tuple[str, int]], opts: Mapping[str, Any]
) -> list[tuple[str, int]]:
    """Distinct words with their counts, most frequent first, then in code point order."""
    counts: Counter[str] = Counter()
    for text, weight in sentences:
        for word in split_into_words(
            text, opts["treat_whitespace_as_suffix"], opts["allow_whitespace_only_pieces"]
        ):
            counts[word] += weight
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _is_digit(char: str) -> bool:
    return "0" <= char <= "9" or "\uff10" <= char <= "\uff19"


def is_valid_piece(piece: str, opts: Mapping[str, Any]) -> bool:
    """Whether sentencepiece lets a merge make ``piece`` (``IsValidSentencePiece``).

    >>> opts = check_options({"normalization_rule_name": "identity"})
    >>> is_valid_piece("▁the", opts), is_valid_piece("the▁", opts), is_valid_piece("a,", opts)
    (True, False, False)
    """
    if not piece or len(piece) > opts["max_sentencepiece_length"]:
        return False
    any_script = -1
    prev = any_script
    last = len(piece) - 1
    by_space = opts["split_by_whitespace"]
    all_space = piece.count(SPACE) == len(piece)
    for pos, char in enumerate(piece):
        if char in (UNK_CHAR, "\0", BOUNDARY, " "):
            return False
        if char == SPACE:
            if not (opts["allow_whitespace_only_pieces"] and all_space):
                if opts["treat_whitespace_as_suffix"]:
                    if (by_space and pos < last) or (not by_space and pos < last and pos == 0):
                        return False
                elif (by_space and pos > 0) or (not by_space and pos > 0 and pos == last):
                    return False
            continue
        script = unicode_script(char, prev)
        if _is_digit(char):
            if not opts["split_by_number"]:
                script = any_script
            if opts["split_digits"] and len(piece) > 1:
                return False
        if opts["split_by_unicode_script"] and any_script not in (script, prev) and prev != script:
            return False
        prev = script
    return True


def final_pieces(
    merges: list[tuple[str, int]], required: Mapping[str, int]
) -> list[tuple[str, float]]:
    """Merged pieces, then required characters by count (then code point), scored 0, -1, ...

    >>> final_pieces([("ab", 3)], {"a": 3, "b": 3})
    [('ab', -0.0), ('a', -1.0), ('b', -2.0)]
    """
    chars = sorted(required.items(), key=lambda kv: (-kv[1], kv[0]))
    pieces = [piece for piece, _ in merges] + [char for char, _ in chars]
    return [(piece, -float(i)) for i, piece in enumerate(pieces)]


def model_proto(
    pieces: list[tuple[str, float]], meta: Mapping[int, tuple[str, int]], options: Mapping[str, Any]
) -> Any:
    """The ``ModelProto``: meta pieces at their ids, the others in order (``Serialize``)."""
    from sentencepiece import sentencepiece_model_pb2 as pb  # protobuf: imported on first use

    opts = check_options(options)
    size = opts["vocab_size"]
    if len(pieces) + len(meta) != size:
        raise ValueError(
            f"Vocabulary size too high ({size}). Please set it to a value <= "
            f"{len(pieces) + len(meta)}: the corpus has no more pairs to merge"
        )
    proto = pb.ModelProto()
    rest = iter(pieces)
    seen: set[str] = set()
    for i in range(size):
        entry = proto.pieces.add()
        if i in meta:
            entry.piece, entry.type, entry.score = meta[i][0], meta[i][1], 0.0
        else:
            entry.piece, entry.score = next(rest)
        if entry.piece in seen:
            raise ValueError(f"{entry.piece!r} is already defined (two pieces are equal)")
        seen.add(entry.piece)
    spec = proto.trainer_spec
    spec.model_type = pb.TrainerSpec.BPE
    spec.vocab_size = size
    for name, value in options.items():
        if name in _NORMALIZER_FIELDS:
            setattr(proto.normalizer_spec, name, value)
        elif isinstance(value, (list, tuple)):
            getattr(spec, name).extend(value)
        elif name not in ("model_type", "normalization_rule_name"):
            setattr(spec, name, value)
    proto.normalizer_spec.name = "identity"
    proto.normalizer_spec.precompiled_charsmap = b""
    return proto


def train_bpe(lines: Iterable[str], **options: Any) -> Trained:
    """Train a SentencePiece BPE model on ``lines`` (one sentence each) with sentencepiece's
    option names (see ``DEFAULTS``); ``normalization_rule_name="identity"`` is required.

    Raises ``ValueError`` naming the option or the problem: an unknown or out-of-range option,
    an empty corpus, fewer ids than required characters, a vocabulary larger than the corpus
    can fill, a line with a lone surrogate.
    """
    opts = check_options(options)
    meta = meta_pieces(opts)
    sentences, too_long, reserved = load_sentences(lines, opts, [p for p, _ in meta.values()])
    required, dropped = required_characters(sentences, opts["character_coverage"])
    if len(required) + len(meta) > opts["vocab_size"]:
        raise ValueError(
            f"Vocabulary size is smaller than required_chars. {opts['vocab_size']} vs "
            f"{len(required) + len(meta)}. Increase vocab_size or decrease character_coverage."
        )
    mark_unknown(sentences, required)
    if opts["split_by_whitespace"]:
        sentences = count_words(sentences, opts)
    budget = opts["vocab_size"] - len(meta) - len(required)
    merges = learn_merges(sentences, budget, lambda piece: is_valid_piece(piece, opts), UNK_CHAR)
    model = model_proto(final_pieces(merges, required), meta, options)
    return Trained(model, too_long, reserved, required, dropped, merges)
