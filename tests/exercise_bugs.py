"""A catalogue of buggy solutions: every check must reject each one that targets it.

Add a bug when a chapter adds an exercise (or when a student finds a new way to be wrong):
decorate a function with ``@bug("exercise", "id", "what is wrong")``. ``CLASSIC`` lists the
mistakes the course promises to catch; ``tests/test_exercises.py`` checks they are all here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import regex

from tokcourse import bpe
from tokcourse.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN


@dataclass(frozen=True)
class Bug:
    exercise: str
    id: str
    what: str
    fn: Callable


BUGS: list[Bug] = []


def bug(exercise: str, id: str, what: str) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        BUGS.append(Bug(exercise, id, what, fn))
        return fn

    return register


# The classic tokenizer bugs the exercise checks promise to catch (issue 4).
CLASSIC = {
    "merge-no-bounds-check",
    "merge-overlap-both",
    "merge-overlap-step-one",
    "train-off-by-one-id",
    "build-vocab-sorted",
    "decode-strict",
    "encode-no-guard",
    "encode-guard-outside-loop",
    "encode-max-not-min",
    "encode-ordinary-across-chunks",
    "split-gpt2-pattern",
    "specials-accepted-by-default",
    "train-ties-by-dict-order",
    "canonical-assumes-roundtrip",
}


def _pairs(ids):
    counts = {}
    for pair in zip(ids, ids[1:], strict=False):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


# --- get_stats ---------------------------------------------------------------------------------


@bug("get_stats", "get-stats-misses-last-pair", "range(len(ids) - 2) drops the last pair")
def _(ids):
    counts = {}
    for i in range(len(ids) - 2):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    return counts


@bug("get_stats", "get-stats-sets-not-counts", "records pairs but not how often")
def _(ids):
    return {pair: 1 for pair in zip(ids, ids[1:], strict=False)}


@bug("get_stats", "get-stats-unordered-pairs", "treats (a, b) and (b, a) as the same pair")
def _(ids):
    counts = {}
    for a, b in zip(ids, ids[1:], strict=False):
        pair = (min(a, b), max(a, b))
        counts[pair] = counts.get(pair, 0) + 1
    return counts


# --- merge -------------------------------------------------------------------------------------


@bug("merge", "merge-no-bounds-check", "reads ids[i + 1] at the last position (IndexError)")
def _(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


@bug("merge", "merge-overlap-both", "merges both overlapping occurrences: aaa -> X X")
def _(ids, pair, idx):
    out = []
    for i, x in enumerate(ids):
        if i + 1 < len(ids) and (x, ids[i + 1]) == pair:
            out.append(idx)
        elif i > 0 and (ids[i - 1], x) == pair:
            continue
        else:
            out.append(x)
    return out


@bug("merge", "merge-overlap-step-one", "after a merge moves on by one instead of two")
def _(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
        else:
            out.append(ids[i])
        i += 1
    return out


@bug("merge", "merge-first-only", "replaces only the first occurrence")
def _(ids, pair, idx):
    ids = list(ids)
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == pair:
            return ids[:i] + [idx] + ids[i + 2 :]
    return ids


# --- train -------------------------------------------------------------------------------------


def _train_with(text, vocab_size, choose, first_id=256):
    ids = list(text.encode("utf-8"))
    merges = {}
    for i in range(vocab_size - 256):
        stats = _pairs(ids)
        pair = choose(stats)
        ids = bpe.merge(ids, pair, first_id + i)
        merges[pair] = first_id + i
    return merges


@bug("train", "train-off-by-one-id", "the first merge mints 257, not 256")
def _(text, vocab_size):
    return _train_with(text, vocab_size, lambda s: max(s, key=s.get), first_id=257)


@bug("train", "train-ties-by-dict-order", "max(stats, key=stats.get): ties go to the first seen")
def _(text, vocab_size):
    return _train_with(text, vocab_size, lambda s: max(s, key=s.get))


@bug("train", "train-ties-smallest-ids", "ties broken by the smallest pair of ids")
def _(text, vocab_size):
    return _train_with(text, vocab_size, lambda s: max(s, key=lambda p: (s[p], -p[0], -p[1])))


@bug("train", "train-one-merge-short", "range(vocab_size - 257): one merge too few")
def _(text, vocab_size):
    merges = bpe.train(text, vocab_size)
    return dict(list(merges.items())[:-1])


# --- build_vocab -------------------------------------------------------------------------------


@bug("build_vocab", "build-vocab-sorted", "visits merges sorted by pair, not in learned order")
def _(merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), idx in sorted(merges.items()):
        vocab[idx] = vocab[a] + vocab[b]
    return vocab


@bug("build_vocab", "build-vocab-no-bytes", "forgets the 256 single-byte tokens")
def _(merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), idx in merges.items():
        vocab[idx] = vocab[a] + vocab[b]
    return {k: v for k, v in vocab.items() if k >= 256}


@bug("build_vocab", "build-vocab-swapped", "joins the pair the wrong way round")
def _(merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), idx in merges.items():
        vocab[idx] = vocab[b] + vocab[a]
    return vocab


# --- decode ------------------------------------------------------------------------------------


@bug("decode", "decode-strict", "errors='strict': crashes on invalid UTF-8")
def _(ids, vocab):
    return b"".join(vocab[i] for i in ids).decode("utf-8")


@bug("decode", "decode-per-token", "decodes each token on its own: splits multi-byte characters")
def _(ids, vocab):
    return "".join(vocab[i].decode("utf-8", errors="replace") for i in ids)


@bug("decode", "decode-ignore", "errors='ignore': invalid bytes vanish silently")
def _(ids, vocab):
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="ignore")


# --- encode ------------------------------------------------------------------------------------


def _encode_loop(ids, merges, choose):
    while True:
        stats = _pairs(ids)
        pair = choose(stats, merges)
        if pair not in merges:
            return ids
        ids = bpe.merge(ids, pair, merges[pair])


def _lowest(stats, merges):
    return min(stats, key=lambda p: merges.get(p, float("inf")))


@bug("encode", "encode-no-guard", "no length guard at all: min() of no pairs on '' or 'a'")
def _(text, merges):
    return _encode_loop(list(text.encode("utf-8")), merges, _lowest)


@bug("encode", "encode-guard-outside-loop", "len(ids) < 2 tested once, before the loop")
def _(text, merges):
    ids = list(text.encode("utf-8"))
    if len(ids) < 2:
        return ids
    return _encode_loop(ids, merges, _lowest)


@bug("encode", "encode-max-not-min", "applies the latest-learned merge first (max)")
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        stats = _pairs(ids)
        candidates = [p for p in stats if p in merges]
        if not candidates:
            break
        pair = max(candidates, key=merges.get)
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


@bug("encode", "encode-most-frequent", "merges the most frequent pair of this text first")
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        stats = {p: c for p, c in _pairs(ids).items() if p in merges}
        if not stats:
            break
        pair = max(stats, key=stats.get)
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


@bug("encode", "encode-no-stop", "no stop when the best pair was never merged (KeyError)")
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = _lowest(_pairs(ids), merges)
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


# --- split -------------------------------------------------------------------------------------


@bug("split", "split-gpt2-pattern", "GPT-2's pattern: case-sensitive 's 't, unlimited digit runs")
def _(text):
    return regex.findall(GPT2_SPLIT_PATTERN, text)


@bug("split", "split-case-sensitive-contractions", "GPT-4's pattern without (?i:...)")
def _(text):
    return regex.findall(GPT4_SPLIT_PATTERN.replace("(?i:", "(?:"), text)


@bug("split", "split-digits-unbounded", r"\p{N}+ instead of \p{N}{1,3}")
def _(text):
    return regex.findall(GPT4_SPLIT_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}+"), text)


@bug("split", "split-on-whitespace", "str.split(): drops the spaces")
def _(text):
    return text.split()


# --- encode_ordinary ---------------------------------------------------------------------------


@bug("encode_ordinary", "encode-ordinary-across-chunks", "BPE on the whole text, no split")
def _(text, merges):
    return bpe.encode(text, merges)


@bug("encode_ordinary", "encode-ordinary-words-only", "splits on spaces instead of the pattern")
def _(text, merges):
    return [i for word in re.split(r"(\s+)", text) if word for i in bpe.encode(word, merges)]


# --- encode_with_specials ----------------------------------------------------------------------


def _specials_split(text, names):
    if not names:
        return [text] if text else []
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return [p for p in re.split(f"({alternation})", text) if p]


@bug("encode_with_specials", "specials-accepted-by-default", "special text in input is accepted")
def _(text, special_tokens, allowed_special=frozenset()):
    ids = []
    for piece in _specials_split(text, special_tokens):
        ids += [special_tokens[piece]] if piece in special_tokens else list(piece.encode())
    return ids


@bug("encode_with_specials", "specials-never-allowed", "ignores allowed_special altogether")
def _(text, special_tokens, allowed_special=frozenset()):
    for name in special_tokens:
        if name in text:
            raise ValueError(f"special token {name!r} in text")
    return list(text.encode())


@bug("encode_with_specials", "specials-all-string", "treats allowed_special='all' as a set")
def _(text, special_tokens, allowed_special=frozenset()):
    allowed = set(allowed_special)  # "all" becomes {"a", "l"}
    for name in special_tokens:
        if name in text and name not in allowed:
            raise ValueError(f"special token {name!r} in text")
    ids = []
    for piece in _specials_split(text, allowed & special_tokens.keys()):
        ids += [special_tokens[piece]] if piece in special_tokens else list(piece.encode())
    return ids


# --- is_canonical ------------------------------------------------------------------------------


@bug("is_canonical", "canonical-assumes-roundtrip", "assumes encode(decode(ids)) == ids")
def _(ids, merges):
    return True


@bug("is_canonical", "canonical-compares-text", "compares the decoded text, not the ids")
def _(ids, merges):
    vocab = bpe.build_vocab(merges)
    text = bpe.decode(ids, vocab)
    return bpe.decode(bpe.encode(text, merges), vocab) == text


# --- utf8_encode -------------------------------------------------------------------------------


def _encode_utf8_with(cp, *, limits=(0x7F, 0x7FF, 0xFFFF), marker=0b10000000, check=True):
    """A UTF-8 encoder with knobs for the classic mistakes."""
    if check and not 0 <= cp <= 0x10FFFF:
        raise ValueError(f"{cp} is not a code point")
    if check and 0xD800 <= cp <= 0xDFFF:
        raise ValueError(f"{cp:#x} is a surrogate")
    n = 1 if cp <= limits[0] else 2 if cp <= limits[1] else 3 if cp <= limits[2] else 4
    if n == 1:
        return bytes([cp])
    tail = [marker | ((cp >> 6 * k) & 0b111111) for k in reversed(range(n - 1))]
    lead = (0b11000000, 0b11100000, 0b11110000)[n - 2] | (cp >> 6 * (n - 1))
    return bytes([lead, *tail])


@bug("utf8_encode", "utf8-encode-boundary-exclusive", "cp < 0x7F, < 0x7FF, < 0xFFFF: off by one")
def _(cp):
    return _encode_utf8_with(cp, limits=(0x7E, 0x7FE, 0xFFFE))


@bug("utf8_encode", "utf8-encode-no-continuation-marker", "forgets the 10xxxxxx marker")
def _(cp):
    return _encode_utf8_with(cp, marker=0)


@bug("utf8_encode", "utf8-encode-four-as-three", "no 4-byte form: U+10000 and up as 3 bytes")
def _(cp):
    return _encode_utf8_with(cp, limits=(0x7F, 0x7FF, 0x10FFFF))


@bug("utf8_encode", "utf8-encode-low-bits-first", "continuation bytes in the wrong order")
def _(cp):
    encoded = _encode_utf8_with(cp)
    return encoded[:1] + encoded[1:][::-1]


@bug("utf8_encode", "utf8-encode-surrogates", "encodes surrogates instead of refusing them")
def _(cp):
    if 0xD800 <= cp <= 0xDFFF:
        return _encode_utf8_with(cp, check=False)
    return _encode_utf8_with(cp)


@bug("utf8_encode", "utf8-encode-no-upper-limit", "encodes 0x110000 and up as 4 bytes")
def _(cp):
    if cp > 0x10FFFF:
        return _encode_utf8_with(cp, check=False)
    return _encode_utf8_with(cp)


@bug("utf8_encode", "utf8-encode-list", "returns a list of ints, not bytes")
def _(cp):
    return list(_encode_utf8_with(cp))


# --- byte_kind ---------------------------------------------------------------------------------


@bug("byte_kind", "byte-kind-three-way", "calls every 11xxxxxx byte a lead byte")
def _(b):
    return "ascii" if b < 0x80 else "continuation" if b < 0xC0 else "lead"


@bug("byte_kind", "byte-kind-high-bit-first", "tests the top bit before the top two")
def _(b):
    if b < 0x80:
        return "ascii"
    if b & 0x80:
        return "continuation"
    return "lead"


@bug("byte_kind", "byte-kind-ascii-off-by-one", "b < 0x7F: DEL (0x7F) is not ASCII")
def _(b):
    if b < 0x7F:
        return "ascii"
    if b < 0xC0:
        return "continuation"
    return "invalid" if b in (0xC0, 0xC1) or b >= 0xF5 else "lead"


@bug("byte_kind", "byte-kind-f5-f7-lead", "11110xxx allows 0xF5..0xF7 as lead bytes")
def _(b):
    if b < 0x80:
        return "ascii"
    if b < 0xC0:
        return "continuation"
    return "invalid" if b in (0xC0, 0xC1) or b >= 0xF8 else "lead"


# --- utf8_decode -------------------------------------------------------------------------------


def _decode_utf8_with(
    data, *, overlong=True, surrogates=True, limit=True, truncation=True, continuation=True
):
    """A UTF-8 decoder whose checks can be switched off one by one."""
    out, i = [], 0
    while i < len(data):
        lead = data[i]
        if lead < 0x80:
            out.append(lead)
            i += 1
            continue
        if lead < 0xC0 or lead >= 0xF8:
            raise ValueError(f"byte {lead:#x} cannot start a character")
        n = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if truncation and i + n > len(data):
            raise ValueError("truncated")
        cp = lead & (0x1F, 0x0F, 0x07)[n - 2]
        for b in data[i + 1 : i + n]:
            if continuation and b >> 6 != 0b10:
                raise ValueError(f"byte {b:#x} is not a continuation byte")
            cp = (cp << 6) | (b & 0x3F)
        if not truncation and i + n > len(data):
            data[i + n - 1]  # reads past the end: IndexError
        if overlong and cp < (0x80, 0x800, 0x10000)[n - 2]:
            raise ValueError("overlong")
        if surrogates and 0xD800 <= cp <= 0xDFFF:
            raise ValueError("surrogate")
        if limit and cp > 0x10FFFF:
            raise ValueError("above U+10FFFF")
        out.append(cp)
        i += n
    return out


@bug("utf8_decode", "utf8-decode-accepts-overlong", "accepts overlong forms such as C0 AF")
def _(data):
    return _decode_utf8_with(data, overlong=False)


@bug("utf8_decode", "utf8-decode-accepts-surrogates", "accepts encoded surrogates (ED A0 80)")
def _(data):
    return _decode_utf8_with(data, surrogates=False)


@bug("utf8_decode", "utf8-decode-no-upper-limit", "accepts code points above U+10FFFF")
def _(data):
    return _decode_utf8_with(data, limit=False)


@bug("utf8_decode", "utf8-decode-reads-past-end", "no check that the continuation bytes exist")
def _(data):
    return _decode_utf8_with(data, truncation=False)


@bug("utf8_decode", "utf8-decode-no-continuation-check", "never checks for 10xxxxxx")
def _(data):
    return _decode_utf8_with(data, continuation=False)


@bug("utf8_decode", "utf8-decode-lead-mask", "keeps 6 bits of every lead byte (& 0x3F)")
def _(data):
    out = _decode_utf8_with(data)
    # redo the arithmetic with the wrong mask
    fixed, i = [], 0
    for cp in out:
        n = len(chr(cp).encode())
        lead = data[i]
        wrong = lead & 0x3F
        for b in data[i + 1 : i + n]:
            wrong = (wrong << 6) | (b & 0x3F)
        fixed.append(cp if n == 1 else wrong)
        i += n
    return fixed
