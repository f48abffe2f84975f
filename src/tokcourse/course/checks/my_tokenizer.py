"""The capstone's tokenizer class (chapter 12): train_on_chunks, encode_chunk, shuffled_vocab,
decode_with_specials, save_text, load_text, pieces_to_ids.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine. The references are in
:mod:`tokcourse.course.capstone_steps`. GPT-4's byte order comes from the first tokens of
``cl100k_base`` (a prefix of a BPE rank table is one too), so each check stays fast.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

from tokcourse import bpe, pretrained
from tokcourse.course import capstone_steps as steps
from tokcourse.course.answers import BYTES, INT, PAIR, STR, dict_of, list_of
from tokcourse.course.checks._rank_tables import _real_ranks
from tokcourse.course.exercises import Case, Entry, Exercise
from tokcourse.patterns import GPT4_SPLIT_PATTERN, split

MERGES = dict_of(PAIR, INT, "a dict {(left id, right id): new id}")
VOCAB = dict_of(INT, BYTES, "a dict {id: token bytes}")
IDENTITY = tuple(range(256))
TEXTS = ("the cat sat on the mat", "aaabdaaabac", "Hello, world! 12345 it's", "café, naïve, 日本語")


@cache
def gpt4_tables(n: int = 600) -> tuple[tuple[int, ...], dict[tuple[int, int], int]]:
    """GPT-4's byte order and the merges of its first ``n`` tokens."""
    ranks = {t: r for t, r in _real_ranks("cl100k_base").items() if r < n}
    return tuple(ranks[bytes([b])] for b in range(256)), pretrained.recover_merges(ranks)


def _trained(text: str, n: int) -> dict[tuple[int, int], int]:
    for size in range(256 + n, 256, -1):
        try:
            return bpe.train_on_chunks(split(text), size)
        except ValueError:  # too few pairs for that many merges: ask for fewer
            continue
    return {}


def _random_text(rng: random.Random) -> str:
    alphabet = rng.choice(["ab", "abc ", "the cat ", "aé日 ", "x1. "])
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6, 50)))


def _random_shuffle(rng: random.Random) -> tuple[int, ...]:
    shuffle = list(range(256))
    rng.shuffle(shuffle)
    return tuple(shuffle)


def _items(answer: Any) -> Any:
    """Merges and vocabularies compare with their order: the order they were learned in."""
    return list(answer.items()) if isinstance(answer, dict) else answer


# --- train_on_chunks ---------------------------------------------------------------------------


def _train_cases() -> Iterator[Case]:
    yield Case(({"ab": 1, "ba": 2}, 257))
    yield Case(({"cd": 1, "ab": 3}, 257))  # the count decides
    yield Case(({"ab": 1, "cd": 1}, 257), rule="chapter 02's rule")  # a tie: b"cd" is greater
    yield Case(({"b": 3, "a": 3, "ab": 1}, 257))  # no pair across chunks
    yield Case(({"aaa": 2, " a": 1}, 258))  # overlapping pairs in a chunk
    yield Case(({"the": 3, " cat": 2, " the": 1, ".": 4}, 262))  # never across chunks
    yield Case(({"café": 2, "日本": 1}, 260))  # multi-byte characters
    rng = random.Random(12)
    for _ in range(25):
        chunks = dict(Counter(split(_random_text(rng))))
        # as many merges as these chunks allow, up to the number drawn: the text lets the
        # student assume there are always enough pairs (as chapter 02's does)
        for n in range(rng.randrange(1, 12), 0, -1):
            try:
                steps.train_on_chunks(chunks, 256 + n)
            except ValueError:
                continue
            yield Case((chunks, 256 + n))
            break


def _train_counts_hint(case: Case, expected: Any, got: Any) -> str | None:
    chunks, vocab_size = case.args
    if isinstance(got, list) and got == _items(bpe.train_on_chunks(list(chunks), vocab_size)):
        return (
            "every chunk counted once: a chunk that occurs 3 times adds each of its pairs 3 "
            "times. Multiply get_stats' counts by the chunk's count."
        )
    return None


def _train_joined_hint(case: Case, expected: Any, got: Any) -> str | None:
    chunks, vocab_size = case.args
    try:
        joined = bpe.train("".join(Counter(chunks).elements()), vocab_size)
    except ValueError:
        return None
    if isinstance(got, list) and got == _items(joined):
        return "pairs were counted across chunks: count and merge inside each chunk only."
    return None


def _train_tie_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and isinstance(expected, list) and len(got) == len(expected):
        return (
            "a tie between equally frequent pairs: pick the greatest (vocab[a], vocab[b]), "
            "then the smaller ids, as bpe.most_frequent_pair does (chapter 02's rule)."
        )
    return None


# --- encode_chunk ------------------------------------------------------------------------------


def _encode_chunk_cases() -> Iterator[Case]:
    merges = _trained(" ".join(TEXTS), 30)
    yield Case((b"", merges, IDENTITY))
    yield Case((b"a", merges, IDENTITY))
    yield Case((b"aab", {(97, 97): 256}, IDENTITY))
    yield Case((b"abc", {(98, 99): 256, (97, 98): 257}, IDENTITY))  # the lower id first
    for text in TEXTS:
        for chunk in split(text):
            yield Case((chunk.encode(), merges, IDENTITY))
    shuffle, gpt4 = gpt4_tables()
    for text in (*TEXTS, " hello world", "    indented"):
        for chunk in split(text):
            yield Case((chunk.encode(), gpt4, shuffle))


def _shuffle_ignored_hint(case: Case, expected: Any, got: Any) -> str | None:
    chunk, merges, shuffle = case.args
    if tuple(shuffle) != IDENTITY and isinstance(got, list):
        if got == steps.encode_chunk(chunk, merges, IDENTITY) or got == list(chunk)[: len(got)]:
            return (
                "the bytes were used as ids: in GPT-4's table the one-byte token b is "
                "byte_shuffle[b] (b'a' is 64). Map every byte through byte_shuffle first."
            )
    return None


def _merge_order_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, list) and isinstance(expected, list) and got != expected:
        return (
            "merges apply in the order they were learned, the lowest id first, again and "
            "again until no neighbouring pair is a merge (chapter 03's encode)."
        )
    return None


# --- shuffled_vocab ----------------------------------------------------------------------------


def _vocab_cases() -> Iterator[Case]:
    yield Case(({}, IDENTITY))
    yield Case(({(97, 97): 256, (256, 97): 257}, IDENTITY))
    swapped = (1, 0, *range(2, 256))
    yield Case(({(1, 0): 256}, swapped))
    yield Case(({(0, 1): 256, (256, 0): 257}, tuple(reversed(range(256)))))
    shuffle, gpt4 = gpt4_tables()
    yield Case(({}, shuffle))
    yield Case((gpt4, shuffle))
    rng = random.Random(12)
    for _ in range(10):
        yield Case((_trained(_random_text(rng), rng.randrange(1, 12)), _random_shuffle(rng)))


def _vocab_direction_hint(case: Case, expected: Any, got: Any) -> str | None:
    merges, shuffle = case.args
    if isinstance(got, dict) and tuple(shuffle) != IDENTITY:
        if all(got.get(b) == bytes([shuffle[b]]) for b in range(256)):
            return (
                "the shuffle goes the other way: byte_shuffle[b] is the id of byte b, so "
                "vocab[byte_shuffle[b]] = bytes([b])."
            )
        if got.get(0) == b"\x00" != expected.get(0):
            return "the one-byte tokens sit at their byte values: put byte b at byte_shuffle[b]."
    return None


# --- decode_with_specials ----------------------------------------------------------------------


def _decode_cases() -> Iterator[Case]:
    vocab = bpe.build_vocab(_trained(" ".join(TEXTS), 30))
    specials = {"<|endoftext|>": 300, "<|fim prefix|>": 301}
    yield Case(([], vocab, specials))
    yield Case(([104, 105], vocab, {}))
    yield Case(([104, 105, 300], vocab, specials))
    yield Case(([301, 104, 300, 300], vocab, specials))
    yield Case(([0xE6, 0x97, 0xA5], vocab, specials))  # one character in three tokens
    yield Case(([104, 0xE6, 300], vocab, specials))  # half a character: "�"
    shuffle, gpt4 = gpt4_tables()
    gpt4_vocab = steps.shuffled_vocab(gpt4, shuffle)
    gpt4_specials = {"<|endoftext|>": 100257, "<|endofprompt|>": 100276}
    for text in TEXTS:
        ids = [
            i for chunk in split(text) for i in steps.encode_chunk(chunk.encode(), gpt4, shuffle)
        ]
        yield Case((ids + [100257], gpt4_vocab, gpt4_specials))


def _decode_per_token_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, str) and isinstance(expected, str) and got.count("�") > expected.count("�"):
        return (
            "a character can span several tokens: join all the bytes first, then decode "
            "them once (errors='replace')."
        )
    return None


def _decode_specials_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, KeyError) or (isinstance(got, str) and "<|" in expected and "<|" not in got):
        return (
            "special tokens are not in vocab: look their ids up in special_tokens "
            "(inverted: {id: name}) and put their names, as UTF-8, in the text."
        )
    return None


def _decode_strict_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, UnicodeDecodeError):
        return "a model may emit half a character: decode with errors='replace'."
    return None


# --- save_text and load_text -------------------------------------------------------------------


def _tables() -> Iterator[tuple]:
    yield ("\\w+", IDENTITY, {}, {})
    yield ("\\w+", IDENTITY, {"<|end|>": 257}, {(97, 98): 256})
    yield (GPT4_SPLIT_PATTERN, IDENTITY, {"<|endoftext|>": 300}, _trained(" ".join(TEXTS), 30))
    specials = {"<|fim prefix|>": 900, 'a "quoted" name': 901, "<|é|>": 902}
    yield (GPT4_SPLIT_PATTERN, IDENTITY, specials, _trained("the cat sat " * 3, 5))
    shuffle, gpt4 = gpt4_tables(400)
    yield (GPT4_SPLIT_PATTERN, shuffle, {"<|endoftext|>": 100257}, gpt4)
    rng = random.Random(12)
    for _ in range(10):
        merges = _trained(_random_text(rng), rng.randrange(1, 12))
        names = rng.sample(["<|end|>", "<|a b|>", "<s>", "[MASK]", "<|日本|>"], rng.randrange(3))
        specials = {name: 256 + len(merges) + i for i, name in enumerate(names)}
        yield (rng.choice(["\\w+", GPT4_SPLIT_PATTERN]), _random_shuffle(rng), specials, merges)


def _save_cases() -> Iterator[Case]:
    yield from (Case(tables) for tables in _tables())


def _load_cases() -> Iterator[Case]:
    yield from (Case((steps.save_text(*tables),)) for tables in _tables())


def _as_tables(answer: Any) -> Any:
    """A loaded model compared by content: tuples of the four tables, merges in order (the
    order they were learned); the special tokens as a dict (no order is asked for)."""
    if isinstance(answer, tuple) and len(answer) == 4:
        pattern, shuffle, specials, merges = answer
        if isinstance(specials, dict) and isinstance(merges, dict):
            return (pattern, tuple(shuffle), dict(specials), list(merges.items()))
    return answer


def _parsed(text: Any) -> Any:
    """A saved file compared by what it says (JSON may escape a character or not)."""
    try:
        return _as_tables(steps.load_text(text))
    except Exception:
        return text


def _save_json_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, str) and isinstance(expected, tuple):
        return (
            "the file does not read back: write the pattern and each special token's name "
            "with json.dumps (a name may hold spaces or quotes), the lines in the order of "
            "the format."
        )
    return None


def _save_tables_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, tuple) and isinstance(expected, tuple) and len(got) == 4:
        for i, what in enumerate(("pattern", "byte order", "special tokens", "merges")):
            if got[i] != expected[i]:
                return (
                    f"the file reads back with other {what}: write every table whole, the "
                    "merges in the order they were learned."
                )
    return None


def _load_bytes_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, tuple) and isinstance(expected, tuple) and len(got) == 4:
        if got[1] != expected[1]:
            return "read the byte order from the 'bytes' line: 256 ids, byte_shuffle[b] for b."
    return None


def _load_order_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(got, ValueError) or (
        isinstance(got, tuple)
        and isinstance(expected, tuple)
        and len(got) == 4
        and got[2] != expected[2]
    ):
        return (
            "a special token's name is JSON and may hold spaces: split its line at the "
            "last space, then json.loads the name."
        )
    if isinstance(got, tuple) and isinstance(expected, tuple) and len(got) == 4:
        if got[3] != expected[3] and sorted(got[3]) == sorted(expected[3]):
            return "keep the merges in file order: it is the order they were learned in."
    return None


# --- pieces_to_ids -----------------------------------------------------------------------------


def _piece_ids() -> dict[str, int]:
    ids = {"<unk>": 0, "<s>": 1, "</s>": 2}
    ids |= {f"<0x{b:02X}>": 3 + b for b in range(256)}
    for piece in ("▁", "▁a", "a", "b", "▁the", "é", "▁café", "日", "<", "0x41>"):
        ids[piece] = len(ids)
    return ids


def _pieces_cases() -> Iterator[Case]:
    ids = _piece_ids()
    for pieces in (
        [],
        ["▁the"],
        ["▁a", "b", "a"],
        ["é"],
        ["ç"],  # not a piece: two bytes
        ["▁", "日", "本"],  # 本 is three bytes
        ["▁café", "!"],
        ["😀"],
        ["<", "0x41>"],
        ["▁the", "ÿ", "▁a"],
        ["Ω", "ω", "a"],
    ):
        yield Case((pieces, ids))


def _pieces_hint(case: Case, expected: Any, got: Any) -> str | None:
    if not isinstance(got, list) or not isinstance(expected, list):
        return None
    if len(got) < len(expected):
        return (
            "a piece not in the vocabulary becomes one id per UTF-8 byte (piece.encode()), "
            "not one per character, nor the id of <unk>."
        )
    return "a byte's piece is '<0x' plus two upper-case hex digits plus '>': f'<0x{b:02X}>'."


#: The exercises of this topic, found by :mod:`tokcourse.course.check`.
EXERCISES: dict[str, Entry] = {
    "train_on_chunks": Entry(
        "train_on_chunks(chunks, vocab_size) -> {(a, b): new_id}",
        lambda: Exercise(
            "train_on_chunks",
            steps.train_on_chunks,
            _train_cases,
            normalize=_items,
            returns=MERGES,
            hints=(_train_counts_hint, _train_joined_hint, _train_tie_hint),
        ),
    ),
    "encode_chunk": Entry(
        "encode_chunk(chunk, merges, byte_shuffle) -> ids",
        lambda: Exercise(
            "encode_chunk",
            steps.encode_chunk,
            _encode_chunk_cases,
            returns=list_of(INT),
            hints=(_shuffle_ignored_hint, _merge_order_hint),
        ),
    ),
    "shuffled_vocab": Entry(
        "shuffled_vocab(merges, byte_shuffle) -> {id: token bytes}",
        lambda: Exercise(
            "shuffled_vocab",
            steps.shuffled_vocab,
            _vocab_cases,
            normalize=dict,
            returns=VOCAB,
            ordered=("merges",),
            hints=(_vocab_direction_hint,),
        ),
    ),
    "decode_with_specials": Entry(
        "decode_with_specials(ids, vocab, special_tokens) -> str",
        lambda: Exercise(
            "decode_with_specials",
            steps.decode_with_specials,
            _decode_cases,
            returns=STR,
            hints=(_decode_strict_hint, _decode_specials_hint, _decode_per_token_hint),
        ),
    ),
    "save_text": Entry(
        "save_text(pattern, byte_shuffle, special_tokens, merges) -> str",
        lambda: Exercise(
            "save_text",
            steps.save_text,
            _save_cases,
            normalize=_parsed,
            returns=STR,
            ordered=("merges",),
            hints=(_save_json_hint, _save_tables_hint),
        ),
    ),
    "load_text": Entry(
        "load_text(text) -> (pattern, byte_shuffle, special_tokens, merges)",
        lambda: Exercise(
            "load_text",
            steps.load_text,
            _load_cases,
            normalize=_as_tables,
            hints=(_load_order_hint, _load_bytes_hint),
        ),
    ),
    "pieces_to_ids": Entry(
        "pieces_to_ids(pieces, piece_ids) -> ids",
        lambda: Exercise(
            "pieces_to_ids",
            steps.pieces_to_ids,
            _pieces_cases,
            returns=list_of(INT),
            hints=(_pieces_hint,),
        ),
    ),
}
