"""A catalogue of buggy solutions: every check must reject each one that targets it.

Add a bug when a chapter adds an exercise (or when a student finds a new way to be wrong):
decorate a function with ``@bug("exercise", "id", "what is wrong")``. ``CLASSIC`` lists the
mistakes the course promises to catch; ``tests/test_exercises.py`` checks they are all here.

``rule=`` names the one rule of the check that rejects the bug on its own, because its answers
are otherwise right: "type" (``Exercise.returns``), "pure" (arguments left unchanged) or
"work" (a check of *how*: words visited, merge lookups made, no codec in chapter 01). The tests
switch that rule off and require the bug to pass, so each rule is shown to be needed.
``hint=`` is text the report must contain (the hint aimed at that mistake): make it the part
that says the right thing (the direction, the missing error, the key), not just any part.
``order=True`` marks a bug whose answer depends on the order of a dict or set (on the hash
seed, for a set of strings): the tests run those under two hash seeds and require the same
verdict.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import regex

from tokcourse import (
    bpe,
    fast_encode,
    fast_train,
    pretrained,
    special,
    stream,
    unigram,
    unigram_train,
    utf8,
)
from tokcourse import sentencepiece_bpe as tokenizer_sp
from tokcourse.course import glitch
from tokcourse.course import vocab_size as vocab_size_course
from tokcourse.patterns import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, split


@dataclass(frozen=True)
class Bug:
    exercise: str
    id: str
    what: str
    fn: Callable
    rule: str | None = None
    hint: str | None = None
    order: bool = False


BUGS: list[Bug] = []
RULES = ("type", "pure", "work")


def bug(
    exercise: str,
    id: str,
    what: str,
    *,
    rule: str | None = None,
    hint: str | None = None,
    order: bool = False,
) -> Callable[[Callable], Callable]:
    assert rule is None or rule in RULES, rule

    def register(fn: Callable) -> Callable:
        BUGS.append(Bug(exercise, id, what, fn, rule, hint, order))
        return fn

    return register


# The classic tokenizer bugs the exercise checks promise to catch.
CLASSIC = {
    "merge-no-bounds-check",
    "merge-overlap-both",
    "merge-overlap-step-one",
    "train-off-by-one-id",
    "spellings-sorted-merges",
    "decode-stream-strict",
    "encode-no-guard",
    "encode-guard-outside-loop",
    "encode-max-not-min",
    "encode-rounds",
    "encode-ordinary-across-chunks",
    "split-gpt2-pattern",
    "specials-accepted-by-default",
    "tie-first-seen",
    "spellings-listed-one-by-one",
    "decode-stream-per-token",
}


def _pairs(ids):
    counts = {}
    for pair in zip(ids, ids[1:], strict=False):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


# --- get_stats ---------------------------------------------------------------------------------


@bug("get_stats", "get-stats-misses-last-pair", "range(len(ids) - 2) drops the last pair",
     hint="the last pair (7, 7) is missing")  # fmt: skip
def _(ids):
    counts = {}
    for i in range(len(ids) - 2):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    return counts


@bug("get_stats", "get-stats-sets-not-counts", "records pairs but not how often")
def _(ids):
    return {pair: 1 for pair in zip(ids, ids[1:], strict=False)}


@bug("get_stats", "get-stats-unordered-pairs", "treats (a, b) and (b, a) as the same pair",
     hint="(a, b) and (b, a) are different pairs")  # fmt: skip
def _(ids):
    counts = {}
    for a, b in zip(ids, ids[1:], strict=False):
        pair = (min(a, b), max(a, b))
        counts[pair] = counts.get(pair, 0) + 1
    return counts


@bug("get_stats", "get-stats-skips-repeats", "i += 2 after a pair of two equal ids: no overlaps",
     hint="Overlapping pairs count")  # fmt: skip
def _(ids):
    counts, i = {}, 0
    while i + 1 < len(ids):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
        i += 2 if ids[i] == ids[i + 1] else 1
    return counts


@bug("get_stats", "get-stats-merge-style", "counts like merge: jumps past every repeated pair",
     hint="Overlapping pairs count")  # fmt: skip
def _(ids):
    counts, i, last = {}, 0, None
    while i + 1 < len(ids):
        pair = (ids[i], ids[i + 1])
        if pair == last and pair[0] == pair[1]:
            last = None  # shares its first id with the pair just counted
        else:
            counts[pair] = counts.get(pair, 0) + 1
            last = pair
        i += 1
    return counts


@bug("get_stats", "get-stats-mutable-default", "counts={} as a default: calls share one dict",
     hint="every call shares it")  # fmt: skip
def _(ids, counts={}):  # noqa: B006 (the mistake under test)
    for pair in pairwise(ids):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


@bug("get_stats", "get-stats-first-40", "counts the pairs of the first 40 ids only",
     hint="the first 40 ids only")  # fmt: skip
def _(ids):
    return _pairs(ids[:40])


# --- merge -------------------------------------------------------------------------------------


@bug("merge", "merge-string-replace", "str.replace on ',a,b,': neighbours share a comma",
     hint="share the comma")  # fmt: skip
def _(ids, pair, idx):
    text = "," + ",".join(map(str, ids)) + ","
    text = text.replace(f",{pair[0]},{pair[1]},", f",{idx},")
    return [int(x) for x in text.strip(",").split(",") if x]


@bug("merge", "merge-string-replace-digits",
     "str.replace on ' '.join(ids): '1 2' matches inside '11 2'",
     hint="matched digits, not ids")  # fmt: skip
def _(ids, pair, idx):
    text = " ".join(map(str, ids)).replace(f"{pair[0]} {pair[1]}", str(idx))
    return [int(x) for x in text.split()]


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


@bug("merge", "merge-overlap-step-one", "after a merge moves on by one instead of two",
     hint="i += 2")  # fmt: skip
def _(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
        else:
            out.append(ids[i])
        i += 1
    return out


@bug("merge", "merge-right-to-left", "reads ids from the right: aaa -> a X",
     hint="the leftmost one merges")  # fmt: skip
def _(ids, pair, idx):
    out, i = [], len(ids) - 1
    while i >= 0:
        if i > 0 and (ids[i - 1], ids[i]) == pair:
            out.append(idx)
            i -= 2
        else:
            out.append(ids[i])
            i -= 1
    return out[::-1]


@bug("merge", "merge-first-only", "replaces only the first occurrence",
     hint="only the first occurrence of (1, 2) was merged")  # fmt: skip
def _(ids, pair, idx):
    ids = list(ids)
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == pair:
            return ids[:i] + [idx] + ids[i + 2 :]
    return ids


@bug("merge", "merge-break-after-first", "a for loop over a copy that breaks after one merge",
     hint="a return or break inside the loop")  # fmt: skip
def _(ids, pair, idx):
    out = list(ids)
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == pair:
            out[i : i + 2] = [idx]
            break
    return out


@bug("merge", "merge-same-list-when-nothing-merges",
     "returns ids itself when the pair does not occur", rule="work",
     hint="returned ids itself")  # fmt: skip
def _(ids, pair, idx):
    if pair not in zip(ids, ids[1:], strict=False):
        return ids
    return bpe.merge(ids, pair, idx)


@bug("merge", "merge-alternating", "never merges right after a merge (a flag it forgets to clear)",
     hint="right after a merged one was not merged")  # fmt: skip
def _(ids, pair, idx):
    out, i, just_merged = [], 0, False
    while i < len(ids):
        if not just_merged and i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
            i, just_merged = i + 2, True
        else:
            out.append(ids[i])
            i, just_merged = i + 1, False
    return out


@bug("merge", "merge-in-place-returns-ids", "merges in ids itself and returns it",
     hint="changed ids itself and returned it")  # fmt: skip
def _(ids, pair, idx):
    i = 0
    while i + 1 < len(ids):
        if (ids[i], ids[i + 1]) == pair:
            ids[i : i + 2] = [idx]
        i += 1
    return ids


@bug("merge", "merge-slice-vs-tuple", "ids[i:i + 2] == pair: a list never equals a tuple",
     hint="a list never equals a tuple")  # fmt: skip
def _(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if ids[i : i + 2] == pair:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


@bug("merge", "merge-drops-last-id", "while i + 1 < len(ids): the last id is never copied",
     hint="the last id, 1, is missing")  # fmt: skip
def _(ids, pair, idx):
    out, i = [], 0
    while i + 1 < len(ids):
        if (ids[i], ids[i + 1]) == pair:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


@bug("merge", "merge-either-order", "merges (b, a) as well as (a, b)",
     hint="the order of the two ids matters")  # fmt: skip
def _(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) in (pair, pair[::-1]):
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


@bug("merge", "merge-first-40", "walks the first 40 ids only, copies the rest",
     hint="merged only near the start of the")  # fmt: skip
def _(ids, pair, idx):
    return bpe.merge(ids[:40], pair, idx) + list(ids[40:])


# --- train -------------------------------------------------------------------------------------


def _train_with(text, vocab_size, choose, first_id=256, pick=None):
    ids = list(text.encode("utf-8"))
    vocab = bpe.build_vocab({})
    merges = {}
    for i in range(vocab_size - 256):
        stats = _pairs(ids)
        pair = pick(stats, vocab) if pick else choose(stats)
        ids = bpe.merge(ids, pair, first_id + i)
        merges[pair] = first_id + i
        vocab[first_id + i] = vocab[pair[0]] + vocab[pair[1]]
    return merges


@bug("train", "train-off-by-one-id", "the first merge mints 257, not 256", hint="256 + i")
def _(text, vocab_size, pick=None):
    return _train_with(text, vocab_size, lambda s: max(s, key=s.get), first_id=257, pick=pick)


@bug("train", "train-one-merge-short", "range(vocab_size - 257): one merge too few",
     hint="0 merges instead of 1")  # fmt: skip
def _(text, vocab_size, pick=None):
    merges = bpe.train(text, vocab_size, pick=pick)
    return dict(list(merges.items())[:-1])


@bug("train", "train-counts-once", "counts the pairs once, before the loop, and never again",
     hint="Count the pairs again after every merge")  # fmt: skip
def _(text, vocab_size, pick=None):
    ids = list(text.encode("utf-8"))
    stats = _pairs(ids)
    merges = {}
    for idx in range(256, vocab_size):
        pair = max(stats, key=stats.get)
        ids = bpe.merge(ids, pair, idx)
        merges[pair] = idx
        del stats[pair]
    return merges


@bug("train", "train-ids-never-change", "merges, but throws the new sequence away",
     hint="ids = merge(ids, pair, idx)")  # fmt: skip
def _(text, vocab_size, pick=None):
    ids = list(text.encode("utf-8"))
    merges = {}
    for idx in range(256, vocab_size):
        stats = _pairs(ids)
        pair = max(stats, key=stats.get)
        bpe.merge(ids, pair, idx)
        merges[pair] = idx
    return merges


@bug("train", "train-one-merge-too-many", "range(256, vocab_size + 1): one merge too many",
     hint="range(256, vocab_size + 1) is an off-by-one")  # fmt: skip
def _(text, vocab_size, pick=None):
    ids = list(text.encode("utf-8"))
    merges = {}
    for idx in range(256, vocab_size + 1):
        stats = _pairs(ids)
        pair = max(stats, key=stats.get)  # raises once no pair is left
        ids = bpe.merge(ids, pair, idx)
        merges[pair] = idx
    return merges


@bug("train", "train-merged-ids-discarded", "new_ids = merge(...), but counts on the old ids",
     hint="keep what merge returns")  # fmt: skip
def _(text, vocab_size, pick=None):
    ids = list(text.encode("utf-8"))
    merges = {}
    for idx in range(256, vocab_size):
        stats = _pairs(ids)
        pair = max((p for p in stats if p not in merges), key=stats.get)
        new_ids = bpe.merge(ids, pair, idx)  # noqa: F841 - the bug: never used
        merges[pair] = idx
    return merges


@bug("train", "train-least-frequent", "min instead of max: merges the rarest pair",
     hint="the most frequent pair there occurs")  # fmt: skip
def _(text, vocab_size, pick=None):
    return _train_with(text, vocab_size, lambda s: min(s, key=s.get))


@bug("train", "train-counts-on-bytes", "recounts on the original bytes, not the merged sequence",
     hint="does not occur at all")  # fmt: skip
def _(text, vocab_size, pick=None):
    data = list(text.encode("utf-8"))
    ids, merges, seen = data, {}, set()
    for idx in range(256, vocab_size):
        stats = {p: n for p, n in _pairs(data).items() if p not in seen}
        pair = max(stats, key=stats.get)
        seen.add(pair)
        ids = bpe.merge(ids, pair, idx)
        merges[pair] = idx
    return merges


@bug("train", "train-within-words", "splits the text on spaces and counts pairs within words",
     hint="only within words")  # fmt: skip
def _(text, vocab_size, pick=None):
    pick = pick or (lambda s, v: max(s, key=s.get))
    words = [list(w.encode("utf-8")) for w in text.split(" ")]
    vocab = bpe.build_vocab({})
    merges = {}
    for idx in range(256, vocab_size):
        stats = {}
        for w in words:
            for pair in zip(w, w[1:], strict=False):
                stats[pair] = stats.get(pair, 0) + 1
        pair = pick(stats, vocab)  # raises once no pair is left
        words = [bpe.merge(w, pair, idx) for w in words]
        merges[pair] = idx
        vocab[idx] = vocab[pair[0]] + vocab[pair[1]]
    return merges


@bug("train", "train-numpy-ints", "counts with numpy and returns numpy.int64 ids", rule="type",
     hint="numpy.int64")  # fmt: skip
def _(text, vocab_size, pick=None):
    import numpy as np

    merges = bpe.train(text, vocab_size, pick=pick)
    return {(np.int64(a), np.int64(b)): idx for (a, b), idx in merges.items()}


# --- train_with --------------------------------------------------------------------------------


def _train_with_rule(text, vocab_size, pick, *, spell=None, ask=None, first_id=256):
    ids = list(text.encode("utf-8"))
    vocab = bpe.build_vocab({})
    merges = {}
    for i in range(vocab_size - 256):
        stats = _pairs(ids)
        pair = ask(stats, vocab) if ask else pick(stats, vocab)
        ids = bpe.merge(ids, pair, first_id + i)
        merges[pair] = first_id + i
        vocab[first_id + i] = (spell or (lambda v, a, b: v[a] + v[b]))(vocab, *pair)
    return merges


@bug("train_with", "with-without-pick", "def train_with(text, vocab_size): no pick parameter",
     hint="def train_with(text, vocab_size, pick)")  # fmt: skip
def _(text, vocab_size):
    return bpe.train(text, vocab_size)


@bug("train_with", "with-ignores-pick", "takes max(stats, key=stats.get) whatever pick is",
     hint="pair = pick(stats, vocab)")  # fmt: skip
def _(text, vocab_size, pick):
    return _train_with_rule(text, vocab_size, pick, ask=lambda s, v: max(s, key=s.get))


@bug("train_with", "with-pick-one-argument", "calls pick(stats), without the vocab",
     hint="it takes two arguments")  # fmt: skip
def _(text, vocab_size, pick):
    return _train_with_rule(text, vocab_size, pick, ask=lambda s, v: pick(s))


@bug("train_with", "with-vocab-not-updated", "passes the 256 byte tokens as vocab, never the new "
     "ones", hint="vocab[idx] = vocab[a] + vocab[b]")  # fmt: skip
def _(text, vocab_size, pick):
    ids = list(text.encode("utf-8"))
    vocab = bpe.build_vocab({})
    merges = {}
    for idx in range(256, vocab_size):
        pair = pick(_pairs(ids), vocab)
        ids = bpe.merge(ids, pair, idx)
        merges[pair] = idx
    return merges


@bug("train_with", "with-vocab-holds-pairs", "records vocab[idx] = pair, not the bytes",
     hint="not the pair")  # fmt: skip
def _(text, vocab_size, pick):
    return _train_with_rule(text, vocab_size, pick, spell=lambda v, a, b: (a, b))


@bug("train_with", "with-halves-swapped", "records vocab[idx] = vocab[b] + vocab[a]",
     hint="the first half first")  # fmt: skip
def _(text, vocab_size, pick):
    return _train_with_rule(text, vocab_size, pick, spell=lambda v, a, b: v[b] + v[a])


@bug("train_with", "with-off-by-one-id", "the first merge mints 257, not 256", hint="256 + i")
def _(text, vocab_size, pick):
    return _train_with_rule(text, vocab_size, pick, first_id=257)


@bug("train_with", "with-top-pair-only", "asks pick only among the most frequent pairs",
     hint="merge what it returns")  # fmt: skip
def _(text, vocab_size, pick):
    def ask(stats, vocab):
        top = max(stats.values())
        return pick({p: n for p, n in stats.items() if n == top}, vocab)

    return _train_with_rule(text, vocab_size, pick, ask=ask)


# --- most_frequent_pair ------------------------------------------------------------------------


@bug("most_frequent_pair", "tie-smallest-ids", "ties to the smallest ids (Hugging Face's rule)",
     hint="comparing the bytes the ids spell, not the ids")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], -p[0], -p[1]))


@bug("most_frequent_pair", "tie-joined-bytes", "compares vocab[a] + vocab[b], the joined bytes",
     hint="Joined bytes and pairs of byte strings")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], vocab[p[0]] + vocab[p[1]], -p[0], -p[1]))


@bug("most_frequent_pair", "tie-bytes-only", "the greater bytes, with nothing for two ids that "
     "spell the same bytes", hint="spell the same bytes")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], vocab[p[0]], vocab[p[1]]))


@bug("most_frequent_pair", "tie-first-seen", "max(stats, key=stats.get): ties go to the pair "
     "counted first, so the dict's order decides", hint="CS336's rule")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=stats.get)


@bug("most_frequent_pair", "tie-last-seen", "ties go to the last top pair the dict holds",
     hint="CS336's rule")  # fmt: skip
def _(stats, vocab):
    top = max(stats.values())
    return [p for p in stats if stats[p] == top][-1]


@bug("most_frequent_pair", "tie-least-frequent", "min instead of max: the rarest pair",
     hint="the count comes first")  # fmt: skip
def _(stats, vocab):
    return min(stats, key=lambda p: (stats[p], vocab[p[0]], vocab[p[1]]))


@bug("most_frequent_pair", "tie-bytes-before-count", "the bytes first, the count only after",
     hint="the count comes first")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (vocab[p[0]], vocab[p[1]], stats[p]))


@bug("most_frequent_pair", "tie-none-when-empty", "returns None on empty stats, no ValueError",
     hint="raise ValueError")  # fmt: skip
def _(stats, vocab):
    if not stats:
        return None
    return bpe.most_frequent_pair(stats, vocab)


@bug("most_frequent_pair", "tie-pops-stats", "removes the chosen pair from stats", rule="pure",
     hint="changed its input (stats)")  # fmt: skip
def _(stats, vocab):
    pair = bpe.most_frequent_pair(stats, vocab)
    del stats[pair]
    return pair


@bug("most_frequent_pair", "tie-returns-list", "returns [a, b], not (a, b)", rule="type",
     hint="must return a pair of ints")  # fmt: skip
def _(stats, vocab):
    return list(bpe.most_frequent_pair(stats, vocab))


@bug("most_frequent_pair", "tie-ids-not-bytes", "max(stats, key=lambda p: (stats[p], p)): the "
     "greater ids, not the greater bytes",
     hint="Compare (vocab[a], vocab[b]), not (a, b)")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], p))


@bug("most_frequent_pair", "tie-first-id-only", "the greater bytes, then only the smaller first "
     "id", hint="spell the same bytes", order=True)  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], vocab[p[0]], vocab[p[1]], -p[0]))


@bug("most_frequent_pair", "tie-sum-of-ids", "the greater bytes, then the smaller sum of the ids",
     hint="the smaller first id, then the smaller second id")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], vocab[p[0]], vocab[p[1]], -(p[0] + p[1])))


@bug("most_frequent_pair", "tie-second-id-first", "the greater bytes, then the smaller second id "
     "before the first", hint="the smaller first id, then the smaller second id")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], vocab[p[0]], vocab[p[1]], -p[1], -p[0]))


@bug("most_frequent_pair", "tie-nul-separator", "compares vocab[a] + b'\\0' + vocab[b]: a "
     "separator byte in place of the pair", hint="No separator byte stands in")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], vocab[p[0]] + b"\0" + vocab[p[1]], -p[0], -p[1]))


@bug("most_frequent_pair", "tie-second-half-first", "compares the second halves before the first",
     hint="its first half first")  # fmt: skip
def _(stats, vocab):
    return max(stats, key=lambda p: (stats[p], vocab[p[1]], vocab[p[0]], -p[0], -p[1]))


@bug("most_frequent_pair", "tie-longer-first", "the longer pair first, then the greater bytes",
     hint="length is not part of CS336's rule")  # fmt: skip
def _(stats, vocab):
    def key(p):
        return (stats[p], len(vocab[p[0]] + vocab[p[1]]), vocab[p[0]], vocab[p[1]], -p[0], -p[1])

    return max(stats, key=key)


# --- decode_stream -----------------------------------------------------------------------------
# By hand: the exercise refuses Python's codec ("work" rule), so these turn bytes into text with
# stream.utf8_text, as the text asks, and go wrong elsewhere.


def _decode_stream_holding(ids, vocab, cut_at, end=True):
    """A by-hand stream decoder: ``cut_at(data)`` says where the held-back bytes start."""
    held = b""
    for i in ids:
        data = held + vocab[i]
        cut = cut_at(data)
        held = data[cut:]
        yield stream.utf8_text(data[:cut])
    if end:
        yield stream.utf8_text(held)


@bug(
    "decode_stream",
    "decode-stream-per-token",
    "decodes each token on its own: breaks characters split across tokens",
    hint="hold back the bytes of an unfinished character",
)
def _decode_stream_per_token(ids, vocab):
    for i in ids:
        yield stream.utf8_text(vocab[i])


@bug(
    "decode_stream",
    "decode-stream-no-flush",
    "never ends the stream: an unfinished character at the end vanishes",
    hint="the end of the stream is missing",
)
def _decode_stream_no_flush(ids, vocab):
    return _decode_stream_holding(ids, vocab, stream.unfinished, end=False)


@bug(
    "decode_stream",
    "decode-stream-collects",
    "reads every id before yielding: right text, but not streamed",
    hint="later than it was complete",
)
def _decode_stream_collects(ids, vocab):
    yield stream.utf8_text(b"".join(vocab[i] for i in ids))


@bug(
    "decode_stream",
    "decode-stream-strict",
    "decodes with chapter 01's strict utf8_decode: crashes on a broken character",
    hint="utf8_text(data), which puts",
)
def _decode_stream_strict(ids, vocab):
    held = b""
    for i in ids:
        data = held + vocab[i]
        cut = stream.unfinished(data)
        held = data[cut:]
        yield "".join(map(chr, utf8.utf8_decode(data[:cut])))
    yield "".join(map(chr, utf8.utf8_decode(held)))


@bug(
    "decode_stream",
    "decode-stream-held-alone",
    "holds the unfinished bytes back, then decodes them on their own, not with what follows",
    hint="never each token on its own",
)
def _decode_stream_held_alone(ids, vocab):
    held = b""
    for i in ids:
        data = vocab[i]
        cut = stream.unfinished(data)
        yield stream.utf8_text(held) + stream.utf8_text(data[:cut])
        held = data[cut:]
    yield stream.utf8_text(held)


@bug("decode_stream", "decode-stream-ignore", "drops '\ufffd', as errors='ignore' would: "
     "broken bytes vanish silently", hint="as errors='ignore' drops them")  # fmt: skip
def _decode_stream_ignore(ids, vocab):
    for piece in _decode_stream_holding(ids, vocab, stream.unfinished):
        yield piece.replace("\ufffd", "")


@bug(
    "decode_stream",
    "decode-stream-returns-str",
    "returns the whole text as one str instead of yielding pieces",
    hint="generator",
)
def _decode_stream_returns_str(ids, vocab):
    return stream.utf8_text(b"".join(vocab[i] for i in ids))


@bug(
    "decode_stream",
    "decode-stream-returns-list",
    "collects the pieces in a list and returns it, instead of yielding them",
    hint="Make decode_stream a generator",
)
def _decode_stream_returns_list(ids, vocab):
    pieces = []
    held = b""
    for i in ids:
        data = held + vocab[i]
        cut = stream.unfinished(data)
        held = data[cut:]
        pieces.append(stream.utf8_text(data[:cut]))
    pieces.append(stream.utf8_text(held))
    return pieces


@bug(
    "decode_stream",
    "decode-stream-latin-1",
    "decodes with latin-1: every byte one character, 'é' comes out as 'Ã©'",
    hint="latin-1 maps every byte to one character",
)
def _decode_stream_latin_1(ids, vocab):
    for i in ids:
        yield vocab[i].decode("latin-1")


@bug(
    "decode_stream",
    "decode-stream-incremental-codec",
    "hands the holding back to Python's incremental decoder (codecs): right, but not by hand",
    rule="work",
    hint="may not use Python's codec",
)
def _decode_stream_incremental_codec(ids, vocab):
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for i in ids:
        yield decoder.decode(vocab[i])
    yield decoder.decode(b"", final=True)


def _cut_by_hand(data):
    """Where an unfinished character starts, from the bit patterns (as the exercise asks)."""
    for back in range(1, min(3, len(data)) + 1):
        b = data[-back]
        if b >> 6 == 0b10:
            continue
        if 0xC2 <= b <= 0xF4 and back < (2 if b < 0xE0 else 3 if b < 0xF0 else 4):
            return len(data) - back
        break
    return len(data)


def _cut_by_bit_patterns(data):
    """Where an unfinished character starts, taking every 11xxxxx byte for a lead byte."""
    for back in range(1, min(3, len(data)) + 1):
        b = data[-back]
        if b >> 6 == 0b10:
            continue
        if b >> 6 == 0b11 and back < (2 if b < 0xE0 else 3 if b < 0xF0 else 4):
            return len(data) - back
        break
    return len(data)


@bug(
    "decode_stream",
    "decode-stream-any-lead-pattern",
    "holds back C0, C1 and F5 to F7 as lead bytes (the bit patterns alone): they can never "
    "begin a character, so their '\ufffd' comes out late",
    hint="only the bytes C2 to F4 can begin one",
)
def _decode_stream_any_lead_pattern(ids, vocab):
    return _decode_stream_holding(ids, vocab, _cut_by_bit_patterns)


def _cut_non_ascii(data):
    """Hold back the trailing run of bytes 0x80 to 0xFF, complete characters too."""
    cut = len(data)
    while cut and data[cut - 1] >= 0x80:
        cut -= 1
    return cut


@bug(
    "decode_stream",
    "decode-stream-holds-non-ascii",
    "holds back every byte from 0x80 up until an ASCII byte: complete characters come out late",
    hint="a complete character goes out at once",
)
def _decode_stream_holds_non_ascii(ids, vocab):
    return _decode_stream_holding(ids, vocab, _cut_non_ascii)


@bug(
    "decode_stream",
    "decode-stream-counts-everything",
    "after a lead byte, waits for as many more bytes as it announces, whatever they are",
    hint="Only continuation bytes (10xxxxxx) continue a character",
)
def _decode_stream_counts_everything(ids, vocab):
    held, needs = b"", 0
    for idx in ids:
        for b in vocab[idx]:
            held += bytes([b])
            if needs:
                needs -= 1
            elif 0xC2 <= b <= 0xF4:
                needs = 1 if b < 0xE0 else 2 if b < 0xF0 else 3
        if not needs:
            yield stream.utf8_text(held)
            held = b""
    yield stream.utf8_text(held)


@bug(
    "decode_stream",
    "decode-stream-len",
    "a right decoder for a list: uses len(ids) and ids[i], which an iterator does not have",
    hint="ids is an iterator",
)
def _decode_stream_len(ids, vocab):
    held = b""
    for i in range(len(ids)):
        data = held + vocab[ids[i]]
        cut = stream.unfinished(data)
        held = data[cut:]
        yield stream.utf8_text(data[:cut])
    yield stream.utf8_text(held)


@bug(
    "decode_stream",
    "decode-stream-bytes-decode",
    "holds back by hand, then calls bytes.decode itself instead of utf8_text: the answers are "
    "right, but the code could hand the holding back to the codec",
    rule="work",
    hint="may not use Python's codec",
)
def _decode_stream_bytes_decode(ids, vocab):
    held = b""
    for i in ids:
        data = held + vocab[i]
        cut = _cut_by_hand(data)
        held = data[cut:]
        yield data[:cut].decode("utf-8", errors="replace")
    yield held.decode("utf-8", errors="replace")


def _flushing(ids, vocab, flush):
    held = b""
    for i in ids:
        data = held + vocab[i]
        cut = stream.unfinished(data)
        held = data[cut:]
        yield stream.utf8_text(data[:cut])
    if held:
        yield flush(held)


@bug(
    "decode_stream",
    "decode-stream-flush-fffd-per-byte",
    "ends the stream with one '\ufffd' per held byte, not as decode turns them",
    hint="yield utf8_text(held), which decodes the held bytes",
)
def _decode_stream_flush_fffd_per_byte(ids, vocab):
    return _flushing(ids, vocab, lambda held: "\ufffd" * len(held))


@bug(
    "decode_stream",
    "decode-stream-flush-one-fffd",
    "ends the stream with a single '\ufffd' for whatever is held",
    hint="yield utf8_text(held), which decodes the held bytes",
)
def _decode_stream_flush_one_fffd(ids, vocab):
    return _flushing(ids, vocab, lambda held: "\ufffd")


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


@bug("encode", "encode-most-frequent", "merges the most frequent pair of this text first",
     hint="the most frequent pair")  # fmt: skip
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        stats = {p: c for p, c in _pairs(ids).items() if p in merges}
        if not stats:
            break
        pair = max(stats, key=stats.get)
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


@bug("encode", "encode-replay", "chapter 02's apply_merges: replays every merge of the table, "
     "one pass each, right but its work grows with the table", rule="work",
     hint="it walks the whole table")  # fmt: skip
def _(text, merges):
    ids = list(text.encode("utf-8"))
    for pair, idx in merges.items():
        ids = bpe.merge(ids, pair, idx)
    return ids


@bug("encode", "encode-get-zero", "merges.get(p, 0): a pair without a merge ranks first, so the "
     "loop stops early", hint="merges.get(pair, float('inf'))")  # fmt: skip
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        stats = _pairs(ids)
        pair = min(stats, key=lambda p: merges.get(p, 0))
        if pair not in merges:
            break
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


@bug("encode", "encode-rounds", "applies every pair present, by id, before counting again: "
     "misses a pair that a merge makes with a lower id than one still waiting",
     hint="before it looks at the pairs again")  # fmt: skip
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        present = sorted((p for p in _pairs(ids) if p in merges), key=merges.get)
        if not present:
            break
        for pair in present:
            ids = bpe.merge(ids, pair, merges[pair])
    return ids


@bug("encode", "encode-get-none", "key=merges.get with no default: min compares None with an "
     "id (TypeError)", hint="merges.get(pair, float('inf'))")  # fmt: skip
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = min(_pairs(ids), key=merges.get)
        if pair not in merges:
            break
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


@bug("encode", "encode-leftmost-once", "merges the leftmost pair that has a merge, one "
     "occurrence per step", hint="at its leftmost occurrence only")  # fmt: skip
def _(text, merges):
    ids = list(text.encode("utf-8"))
    i = 0
    while i < len(ids) - 1:
        if (ids[i], ids[i + 1]) in merges:
            ids[i : i + 2] = [merges[ids[i], ids[i + 1]]]
            i = 0
        else:
            i += 1
    return ids


@bug("encode", "encode-longest-match", "greedy longest match from the left, as WordPiece "
     "encodes: a token of the vocabulary that training would not have cut here",
     hint="what greedy longest match gives")  # fmt: skip
def _(text, merges):
    token_id = {token: idx for idx, token in bpe.build_vocab(merges).items()}
    data, ids, i = text.encode("utf-8"), [], 0
    while i < len(data):
        j = max(j for j in range(i + 1, len(data) + 1) if data[i:j] in token_id)
        ids.append(token_id[data[i:j]])
        i = j
    return ids


@bug("encode", "encode-leftmost-pair", "merges the leftmost pair that has a merge, everywhere",
     hint="the leftmost pair that has a merge")  # fmt: skip
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        candidates = [p for p in _pairs(ids) if p in merges]
        if not candidates:
            break
        ids = bpe.merge(ids, candidates[0], merges[candidates[0]])
    return ids


@bug("encode", "encode-code-points", "starts from the code points (ord), not the UTF-8 bytes",
     hint="start from list(text.encode('utf-8'))")  # fmt: skip
def _(text, merges):
    ids = [ord(c) for c in text]
    while len(ids) >= 2:
        pair = _lowest(_pairs(ids), merges)
        if pair not in merges:
            break
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


@bug("encode", "encode-no-stop", "no stop when the best pair was never merged (KeyError)")
def _(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = _lowest(_pairs(ids), merges)
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


_ENCODED = {}  # text -> ids: a cache that forgets which table made them


@bug("encode", "encode-cache-by-text", "caches the ids by text alone: another table gets the "
     "first table's ids", hint="the ids depend on the merges too")  # fmt: skip
def _(text, merges):
    if text not in _ENCODED:
        ids = list(text.encode("utf-8"))
        while len(ids) >= 2:
            stats = _pairs(ids)
            pair = _lowest(stats, merges)
            if pair not in merges:
                break
            ids = bpe.merge(ids, pair, merges[pair])
        _ENCODED[text] = ids
    return list(_ENCODED[text])


@bug("encode", "encode-copies-table", "ranks = dict(merges): a copy reads every merge of the "
     "table", rule="work", hint="a copy of the table (ranks = dict(merges)")  # fmt: skip
def _(text, merges):
    ranks = dict(merges)
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = min(_pairs(ids), key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = bpe.merge(ids, pair, ranks[pair])
    return ids


# --- split -------------------------------------------------------------------------------------


@bug("encode_with_ranks", "split-gpt2-pattern", "splits with GPT-2's pattern: case-sensitive "
     "'s 't, unlimited digit runs", hint="GPT-2's pattern")  # fmt: skip
def _(text, ranks):
    return _ranks_ids(regex.findall(GPT2_SPLIT_PATTERN, text), ranks)


@bug("encode_with_ranks", "split-case-sensitive-contractions", "GPT-4's pattern without (?i:...)")
def _(text, ranks):
    return _ranks_ids(regex.findall(GPT4_SPLIT_PATTERN.replace("(?i:", "(?:"), text), ranks)


@bug("encode_with_ranks", "split-digits-unbounded", r"\p{N}+ instead of \p{N}{1,3}")
def _(text, ranks):
    pattern = GPT4_SPLIT_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}+")
    return _ranks_ids(regex.findall(pattern, text), ranks)


@bug("encode_with_ranks", "split-with-re", "Python's re instead of regex: 'bad escape \\p'",
     hint="Use the regex module")  # fmt: skip
def _(text, ranks):
    return _ranks_ids(re.findall(GPT4_SPLIT_PATTERN, text), ranks)


@bug("encode_with_ranks", "split-on-whitespace", "str.split(): drops the spaces")
def _(text, ranks):
    return _ranks_ids(text.split(), ranks)


# --- scan_gpt2 ---------------------------------------------------------------------------------


_CONTRACTIONS = ("'s", "'d", "'m", "'t", "'ll", "'ve", "'re")


def _scanner(
    text,
    *,
    is_space=str.isspace,
    is_number=None,
    give_back=True,
    contractions=_CONTRACTIONS,
    ignore_case=False,
    stop_before_contraction=False,
    space_before_number=True,
    space_before_contraction=False,
    marks_as_letters=False,
):
    """A hand-written GPT-2 scanner, with knobs for the usual mistakes."""
    import unicodedata

    def kind(c):
        if is_space(c):
            return " "
        if is_number is not None and is_number(c):
            return "N"
        category = unicodedata.category(c)[0]
        if marks_as_letters and category == "M":
            return "L"
        if is_number is not None and category == "N":
            return "P"
        return category if category in "LN" else "P"

    kinds = [kind(c) for c in text]
    chunks, i, n = [], 0, len(text)
    while i < n:
        end = None
        folded = text.lower() if ignore_case else text
        at = i + (space_before_contraction and text[i] == " ")
        for c in contractions:
            if folded.startswith(c, at):
                end = at + len(c)
                break
        if end is None:
            first = i + (text[i] == " " and i + 1 < n and kinds[i + 1] != " ")
            if not space_before_number and first > i and kinds[first] == "N":
                first = i  # the space stays behind, a chunk of its own
            end = first + 1
            while end < n and kinds[end] == kinds[first]:
                if stop_before_contraction and any(text.startswith(c, end) for c in contractions):
                    break
                end += 1
            if give_back and kinds[first] == " " and end < n:
                end = max(i + 1, end - 1)
        chunks.append(text[i:end])
        i = end
    return chunks


@bug("scan_gpt2", "scan-gpt2-isspace", "str.isspace() for white space: U+001C-U+001F",
     hint="not str.isspace()")  # fmt: skip
def _(text):
    return _scanner(text)


_WHITE = frozenset(c for c in map(chr, range(0x3001)) if regex.match(r"\s", c))


@bug("scan_gpt2", "scan-gpt2-no-give-back", "takes a white-space run whole before a word",
     hint=r"\s+(?!\S)")  # fmt: skip
def _(text):
    return _scanner(text, is_space=_WHITE.__contains__, give_back=False)


@bug("scan_gpt2", "scan-gpt2-any-case", "contractions in any case ('T, 'LL)",
     hint="lower case only")  # fmt: skip
def _(text):
    return _scanner(text, is_space=_WHITE.__contains__, ignore_case=True)


@bug("scan_gpt2", "scan-gpt2-isdigit", "str.isdigit() for numbers: misses ½ and Ⅻ",
     hint="Unicode category N")  # fmt: skip
def _(text):
    return _scanner(text, is_space=_WHITE.__contains__, is_number=str.isdigit)


@bug("scan_gpt2", "scan-gpt2-curly-apostrophe", "’ accepted as a contraction apostrophe",
     hint="ASCII apostrophe ' only")  # fmt: skip
def _(text):
    both = _CONTRACTIONS + tuple("’" + c[1:] for c in _CONTRACTIONS)
    return _scanner(text, is_space=_WHITE.__contains__, contractions=both)


@bug("scan_gpt2", "scan-gpt2-stop-before-contraction", "a punctuation run stops before 's",
     hint="does not stop before an apostrophe")  # fmt: skip
def _(text):
    return _scanner(text, is_space=_WHITE.__contains__, stop_before_contraction=True)


@bug("scan_gpt2", "scan-gpt2-no-space-before-number", "no space in front of a number",
     hint="front of a number too")  # fmt: skip
def _(text):
    return _scanner(text, is_space=_WHITE.__contains__, space_before_number=False)


@bug("scan_gpt2", "scan-gpt2-space-before-contraction", "a space in front of a contraction",
     hint="no space in front")  # fmt: skip
def _(text):
    return _scanner(text, is_space=_WHITE.__contains__, space_before_contraction=True)


@bug("scan_gpt2", "scan-gpt2-marks-as-letters", "combining marks counted as letters",
     hint="combining marks")  # fmt: skip
def _(text):
    return _scanner(text, is_space=_WHITE.__contains__, marks_as_letters=True)


# --- first_split_difference ----------------------------------------------------------------------


def _cut_lists(text):
    return split(text, GPT2_SPLIT_PATTERN), split(text, GPT4_SPLIT_PATTERN)


@bug("first_split_difference", "first-difference-chunk-index", "index of the differing chunk",
     hint="index of the first differing chunk")  # fmt: skip
def _(text):
    a, b = _cut_lists(text)
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)


@bug("first_split_difference", "first-difference-chunk-start", "start of the differing chunks",
     hint="shorter of the two chunks")  # fmt: skip
def _(text):
    a, b = _cut_lists(text)
    offset = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            return offset
        offset += len(x)
    return None


@bug("first_split_difference", "first-difference-end-of-first", "end of GPT-2's chunk, not min",
     hint="the earlier end")  # fmt: skip
def _(text):
    a, b = _cut_lists(text)
    offset = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            return offset + len(x)
        offset += len(x)
    return None


@bug("first_split_difference", "first-difference-bytes", "offsets in UTF-8 bytes",
     hint="UTF-8 bytes")  # fmt: skip
def _(text):
    a, b = _cut_lists(text)
    offset = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            return offset + min(len(x.encode()), len(y.encode()))
        offset += len(x.encode())
    return None


@bug("first_split_difference", "first-difference-minus-one", "returns -1 when nothing differs",
     hint="return None")  # fmt: skip
def _(text):
    a, b = _cut_lists(text)
    offset = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            return offset + min(len(x), len(y))
        offset += len(x)
    return -1


# --- whitespace_chunks ---------------------------------------------------------------------------


@bug("whitespace_chunks", "whitespace-whole-run", r"the whole run, as \s+ would",
     hint="left for what follows")  # fmt: skip
def _(run, following):
    return [run]


@bug("whitespace_chunks", "whitespace-always-drop-last", "drops the last character, even '\\n'",
     hint="chunk of its own")  # fmt: skip
def _(run, following):
    return [run[:-1]] if following and len(run) > 1 else ([] if following else [run])


@bug("whitespace_chunks", "whitespace-empty-chunk", "returns [''] for a single space",
     hint="empty chunk")  # fmt: skip
def _(run, following):
    if not following:
        return [run]
    return [run[:-1]] + ([] if run[-1] == " " else [run[-1]])


@bug("whitespace_chunks", "whitespace-ignores-end", "treats the end of the text like a word",
     hint="nothing follows the run")  # fmt: skip
def _(run, following):
    chunks = [run[:-1]] if len(run) > 1 else []
    return chunks + ([] if run[-1] == " " else [run[-1]])


@bug("whitespace_chunks", "whitespace-last-space-own-chunk", "the last space as a chunk of its own",
     hint="not a chunk of the run")  # fmt: skip
def _(run, following):
    if not following:
        return [run]
    return [run[:-1], run[-1]] if len(run) > 1 else [run]


@bug("whitespace_chunks", "whitespace-isspace-regex", "regex.findall with GPT-2 on the run alone")
def _(run, following):
    return regex.findall(GPT2_SPLIT_PATTERN, run)


# --- chunk_counts --------------------------------------------------------------------------------


def _pieces(text, specials):
    """The text between the special tokens, found with str.find (the right way)."""
    pieces, start = [], 0
    while specials:
        found = [(text.find(n, start), n) for n in specials if text.find(n, start) >= 0]
        if not found:
            break
        at, special = min(found, key=lambda f: (f[0], -len(f[1])))
        pieces.append(text[start:at])
        start = at + len(special)
    return [*pieces, text[start:]]


@bug("chunk_counts", "chunk-counts-specials-not-cut", "splits the special tokens like text",
     hint="cut the text at each special token first")  # fmt: skip
def _(text, pattern, special_tokens):
    return Counter(c.encode() for c in regex.findall(pattern, text))


@bug("chunk_counts", "chunk-counts-special-counted", "keeps each special token as a chunk",
     hint="cut it out and drop it")  # fmt: skip
def _(text, pattern, special_tokens):
    counts = Counter(
        c.encode() for piece in _pieces(text, special_tokens) for c in regex.findall(pattern, piece)
    )
    for name in special_tokens:
        if text.count(name):
            counts[name.encode()] += text.count(name)
    return counts


@bug("chunk_counts", "chunk-counts-list-order", "tries the special tokens in the list's order",
     hint="cut out the longer one")  # fmt: skip
def _(text, pattern, special_tokens):
    found = "|".join(map(regex.escape, special_tokens))  # in the list's order
    pieces = regex.split(found, text) if special_tokens else [text]
    return Counter(c.encode() for piece in pieces for c in regex.findall(pattern, piece))


@bug("chunk_counts", "chunk-counts-joined", "deletes the special tokens, then splits the rest",
     hint="split each piece on its own")  # fmt: skip
def _(text, pattern, special_tokens):
    for name in special_tokens:
        text = text.replace(name, "")
    return Counter(c.encode() for c in regex.findall(pattern, text))


@bug("chunk_counts", "chunk-counts-unescaped", "regex.split on the raw special-token strings",
     hint="regex.escape(special)")  # fmt: skip
def _(text, pattern, special_tokens):
    pieces = regex.split("|".join(special_tokens), text) if special_tokens else [text]
    return Counter(c.encode() for p in pieces for c in regex.findall(pattern, p))


@bug("chunk_counts", "chunk-counts-always-gpt2", "ignores pattern: always GPT-2's split",
     hint="split with the pattern you are given")  # fmt: skip
def _(text, pattern, special_tokens):
    pieces = _pieces(text, special_tokens)
    return Counter(c.encode() for p in pieces for c in regex.findall(GPT2_SPLIT_PATTERN, p))


@bug("chunk_counts", "chunk-counts-newline-for-special", "puts a newline where each special was",
     hint="replaced with '\\n'")  # fmt: skip
def _(text, pattern, special_tokens):
    for name in special_tokens:
        text = text.replace(name, "\n")
    return Counter(c.encode() for c in regex.findall(pattern, text))


@bug("chunk_counts", "chunk-counts-every-chunk", "a list of every chunk, not counts")
def _(text, pattern, special_tokens):
    return [c.encode() for p in _pieces(text, special_tokens) for c in regex.findall(pattern, p)]


@bug("chunk_counts", "chunk-counts-str-keys", "str chunks, not their UTF-8 bytes")
def _(text, pattern, special_tokens):
    return Counter(c for p in _pieces(text, special_tokens) for c in regex.findall(pattern, p))


# --- split_fixed -------------------------------------------------------------------------------

_CONTRACTION = "'(?:[sdmt]|ll|ve|re)"
_LETTER = r"(?<=\p{L})"  # the fixed contraction only right after a letter
_NO_LETTER = r"(?!\p{L})"  # and not right before one


@bug("split_fixed", "split-fixed-case-only", "(?i:...) but the ASCII apostrophe only",
     hint="’ (U+2019) starts a contraction too")  # fmt: skip
def _(text):
    fixed = _LETTER + "'(?i:[sdmt]|ll|ve|re)" + _NO_LETTER
    return regex.findall(GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-apostrophe-only", "['’] but lower case only",
     hint="the case is not fixed")  # fmt: skip
def _(text):
    fixed = _LETTER + "['’](?:[sdmt]|ll|ve|re)" + _NO_LETTER
    return regex.findall(GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-listed-cases", "lists lower and upper case: misses 'Ll",
     hint="mixed case")  # fmt: skip
def _(text):
    fixed = _LETTER + "['’](?:[sdmtSDMT]|ll|LL|ve|VE|re|RE)" + _NO_LETTER
    return regex.findall(GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-any-quote", "takes the opening quote ‘ as an apostrophe",
     hint="opening quote")  # fmt: skip
def _(text):
    fixed = _LETTER + "['’‘](?i:[sdmt]|ll|ve|re)" + _NO_LETTER
    return regex.findall(GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-global-flag", "a global (?i) in front of the whole pattern",
     hint="Scope the flag to the contraction with (?i:...)")  # fmt: skip
def _(text):
    fixed = _LETTER + "['’](?:[sdmt]|ll|ve|re)" + _NO_LETTER
    return regex.findall("(?i)" + GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-opening-quote", "['’](?i:...) anywhere: 'sure' is cut",
     hint="only right after a letter")  # fmt: skip
def _(text):
    fixed = "['’](?i:[sdmt]|ll|ve|re)" + _NO_LETTER
    return regex.findall(GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-after-digit", "a letter or a digit in front: 1'm",
     hint="after a digit")  # fmt: skip
def _(text):
    fixed = r"(?<=[\p{L}\p{N}])['’](?i:[sdmt]|ll|ve|re)" + _NO_LETTER
    return regex.findall(GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-letter-after", "a letter may follow: O'Donnell is cut",
     hint="a letter right after the suffix")  # fmt: skip
def _(text):
    fixed = _LETTER + "['’](?i:[sdmt]|ll|ve|re)"
    return regex.findall(GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-no-context", "case and ’ fixed, no letter tested around",
     hint="an apostrophe that opens a quotation")  # fmt: skip
def _(text):
    fixed = "['’](?i:[sdmt]|ll|ve|re)"
    return regex.findall(GPT2_SPLIT_PATTERN.replace(_CONTRACTION, fixed), text)


@bug("split_fixed", "split-fixed-unchanged", "GPT-2's pattern unchanged")
def _(text):
    return regex.findall(GPT2_SPLIT_PATTERN, text)


@bug("split_fixed", "split-fixed-gpt4", "GPT-4's pattern, which fixes the case only")
def _(text):
    return regex.findall(GPT4_SPLIT_PATTERN, text)


# --- encode_ordinary_cached: merges chunk by chunk ----------------------------------------------


def _cached(chunks, encode_chunk):
    """Each distinct chunk encoded once (a cache made in the call): the bugs below are wrong
    in their split or their merges only, not in the work the exercise counts."""
    cache = {}
    for chunk in chunks:
        if chunk not in cache:
            cache[chunk] = encode_chunk(chunk)
    return [i for chunk in chunks for i in cache[chunk]]


@bug("encode_ordinary_cached", "encode-ordinary-across-chunks", "BPE on the whole text, no split",
     hint="across chunk boundaries")  # fmt: skip
def _(text, merges):  # a cache per line: the lines are not GPT-4's chunks
    return _cached(text.splitlines(keepends=True), lambda line: bpe.encode(line, merges))


@bug("encode_ordinary_cached", "encode-ordinary-words-only",
     "splits on spaces instead of the pattern")  # fmt: skip
def _(text, merges):
    words = [word for word in re.split(r"(\s+)", text) if word]
    return _cached(words, lambda word: bpe.encode(word, merges))


def _highest_first(chunk, merges):
    part = list(chunk.encode())
    while True:
        found = [p for p in zip(part, part[1:], strict=False) if p in merges]
        if not found:
            return part
        pair = max(found, key=lambda p: merges[p])
        part = bpe.merge(part, pair, merges[pair])


@bug("encode_ordinary_cached", "encode-ordinary-highest-id", "where two merges apply at once, "
     "takes the one with the highest id", hint="LOWEST merge id first")  # fmt: skip
def _(text, merges):
    return _cached(split(text), lambda chunk: _highest_first(chunk, merges))


# --- byte_rank ---------------------------------------------------------------------------------


def _rank_in(order):
    return lambda b: order.index(b)


_VISIBLE = [*range(33, 127), *range(161, 173), *range(174, 256)]
_MOVED = [b for b in range(256) if b not in _VISIBLE]

bug("byte_rank", "byte-rank-value", "the byte's value is its id", hint="not its value")(lambda b: b)
bug(
    "byte_rank", "byte-rank-soft-hyphen", "counts 0xAD (soft hyphen) as visible", hint="soft hyphen"
)(
    _rank_in(
        [
            *range(33, 127),
            *range(161, 256),
            *[  # fmt: skip
                b for b in range(256) if not (33 <= b < 127 or b >= 161)
            ],
        ]
    )
)
bug("byte_rank", "byte-rank-moved-first", "numbers the moved bytes first",
    hint="visible bytes come first")(_rank_in(_MOVED + _VISIBLE))  # fmt: skip
bug(
    "byte_rank",
    "byte-rank-ascii-only",
    "only printable ASCII counts as visible",
    hint="comes after all 188 visible bytes",
)(_rank_in([*range(33, 127), *[b for b in range(256) if not 33 <= b < 127]]))


# --- recover_merge -----------------------------------------------------------------------------


def _bpe_parts(token, ranks, max_rank, choose=min):
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        found = [
            (ranks[parts[i] + parts[i + 1]], i)
            for i in range(len(parts) - 1)
            if ranks.get(parts[i] + parts[i + 1], max_rank) < max_rank
        ]
        if not found:
            break
        _, i = choose(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


@bug("recover_merge", "recover-first-split", "the first split whose two halves are tokens",
     hint="BPE reached this token by one path")  # fmt: skip
def _(token, ranks):
    for i in range(1, len(token)):
        if token[:i] in ranks and token[i:] in ranks:
            return token[:i], token[i:]
    return token[:1], token[1:]


@bug("recover_merge", "recover-longest-prefix", "the longest prefix that is a token, then the rest",
     hint="ranked after the token itself")  # fmt: skip
def _(token, ranks):
    for i in range(len(token) - 1, 0, -1):
        if token[:i] in ranks and token[i:] in ranks:
            return token[:i], token[i:]
    return token[:1], token[1:]


@bug("recover_merge", "recover-highest-rank-first", "replays BPE with the highest rank first")
def _(token, ranks):
    parts = _bpe_parts(token, ranks, ranks[token], choose=max)
    return (parts[0], b"".join(parts[1:])) if len(parts) > 2 else tuple(parts)


@bug(
    "recover_merge",
    "recover-no-rank-limit",
    "replays BPE with every token, the token's own too",
    hint="the token itself",
)
def _(token, ranks):
    parts = _bpe_parts(token, ranks, math.inf)
    return (parts[0], b"".join(parts[1:])) if len(parts) != 1 else (token, b"")


@bug("recover_merge", "recover-lowest-ranked-halves", "the split whose worse half ranks lowest",
     hint="BPE reached this token by one path")  # fmt: skip
def _(token, ranks):
    splits = [(token[:i], token[i:]) for i in range(1, len(token))]
    splits = [s for s in splits if s[0] in ranks and s[1] in ranks]
    return min(splits, key=lambda s: max(ranks[s[0]], ranks[s[1]]))


@bug("recover_merge", "recover-rightmost-tie", "a tie between equal pairs (b'000') goes to the "
     "rightmost one", hint="LEFTMOST one first")  # fmt: skip
def _(token, ranks):
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best = None
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1], ranks[token])
            if rank < ranks[token] and (best is None or rank <= best[0]):  # <=: the last tie
                best = (rank, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts[0], b"".join(parts[1:])


@bug("recover_merge", "recover-returns-list", "returns [left, right]", rule="type")
def _(token, ranks):
    return list(pretrained.bpe_parts(token, ranks, ranks[token]))


# --- encode_with_ranks -------------------------------------------------------------------------


def _ranks_ids(chunks, ranks, choose=min):
    return [
        ranks[p] for chunk in chunks for p in _bpe_parts(chunk.encode(), ranks, math.inf, choose)
    ]


@bug("encode_with_ranks", "ranks-no-split", "BPE on the whole text, no split",
     hint="across chunk boundaries")  # fmt: skip
def _(text, ranks):
    return _ranks_ids([text] if text else [], ranks)


_CHUNK_CACHE = {}  # the bug below keeps it between calls, whatever the table


@bug("encode_with_ranks", "ranks-shared-chunk-cache",
     "caches each chunk's ids at module level, keyed by the chunk alone: another table's ids",
     hint="a cache kept between calls")  # fmt: skip
def _(text, ranks):
    ids = []
    for chunk in split(text):
        if chunk not in _CHUNK_CACHE:
            _CHUNK_CACHE[chunk] = _ranks_ids([chunk], ranks)
        ids += _CHUNK_CACHE[chunk]
    return ids


@bug("encode_with_ranks", "ranks-byte-values", "an unmerged byte keeps its value as its id",
     hint="its own rank")  # fmt: skip
def _(text, ranks):
    return [
        ranks[p] if len(p) > 1 else p[0]
        for chunk in split(text)
        for p in _bpe_parts(chunk.encode(), ranks, math.inf)
    ]


@bug(
    "encode_with_ranks",
    "ranks-highest-first",
    "merges the highest-ranked pair first",
    hint="highest-ranked pair first",
)
def _(text, ranks):
    return _ranks_ids(split(text), ranks, choose=max)


@bug(
    "encode_with_ranks",
    "ranks-longest-match",
    "greedy longest token from the left",
    hint="longest token from the left is not BPE",
)
def _(text, ranks):
    ids = []
    for chunk in split(text):
        data = chunk.encode()
        while data:
            n = max(i for i in range(1, len(data) + 1) if data[:i] in ranks)
            ids.append(ranks[data[:n]])
            data = data[n:]
    return ids


# --- encode_with_specials ----------------------------------------------------------------------


def _specials_split(text, names):
    if not names:
        return [text] if text else []
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return [p for p in re.split(f"({alternation})", text) if p]


def _utf8(piece):
    return list(piece.encode())


def _specials_encode(text, special_tokens, allowed, disallowed, encode_ordinary=_utf8):
    """tiktoken's rules with the allowed and disallowed sets already resolved (bugs vary them)."""
    for name in _specials_split(text, disallowed):
        if name in disallowed:
            raise ValueError(f"disallowed special token {name!r}")
    ids = []
    for piece in _specials_split(text, allowed & special_tokens.keys()):
        ids += [special_tokens[piece]] if piece in allowed else encode_ordinary(piece)
    return ids


def _resolve(special_tokens, allowed_special, disallowed_special):
    allowed = set(special_tokens) if allowed_special == "all" else set(allowed_special)
    if disallowed_special == "all":
        return allowed, set(special_tokens) - allowed
    return allowed, set(disallowed_special or ())


@bug("encode_with_specials", "specials-accepted-by-default", "special text in input is accepted")
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    ids = []
    for piece in _specials_split(text, special_tokens):
        ids += [special_tokens[piece]] if piece in special_tokens else encode_ordinary(piece)
    return ids


@bug("encode_with_specials", "specials-never-allowed", "ignores allowed_special altogether")
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    for name in special_tokens:
        if name in text:
            raise ValueError(f"special token {name!r} in text")
    return encode_ordinary(text)


@bug("encode_with_specials", "specials-all-string", "treats allowed_special='all' as a set",
     hint="'all' is a string")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    allowed = set(allowed_special)  # "all" becomes {"a", "l"}
    if disallowed_special == "all":
        disallowed = set(special_tokens) - allowed
    else:
        disallowed = set(disallowed_special)
    return _specials_encode(text, special_tokens, allowed, disallowed, encode_ordinary)


@bug("encode_with_specials", "specials-ignores-disallowed", "always refuses every special token "
     "not allowed, whatever disallowed_special says", hint="replaces the default")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    allowed, _ = _resolve(special_tokens, allowed_special, "all")
    return _specials_encode(text, special_tokens, allowed, set(special_tokens) - allowed,
                            encode_ordinary)  # fmt: skip


@bug("encode_with_specials", "specials-allowed-beats-disallowed", "takes the allowed tokens out "
     "of an explicit disallowed_special (tiktoken checks every name in it)")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    allowed, disallowed = _resolve(special_tokens, allowed_special, disallowed_special)
    return _specials_encode(text, special_tokens, allowed, disallowed - allowed, encode_ordinary)


@bug("encode_with_specials", "specials-disallowed-only-specials", "ignores disallowed strings "
     "that are not special tokens (any string may be disallowed)")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    allowed, disallowed = _resolve(special_tokens, allowed_special, disallowed_special)
    return _specials_encode(text, special_tokens, allowed, disallowed & special_tokens.keys(),
                            encode_ordinary)  # fmt: skip


@bug("encode_with_specials", "specials-ignores-encode-ordinary", "encodes the ordinary pieces "
     "as UTF-8 whatever encode_ordinary is", hint="through encode_ordinary")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    allowed, disallowed = _resolve(special_tokens, allowed_special, disallowed_special)
    return _specials_encode(text, special_tokens, allowed, disallowed)


@bug("encode_with_specials", "specials-first-listed-name", "overlapping names: the alternation "
     "in table order, so '<|a|>' wins over '<|a|>b'", hint="take the longest",
     order=True)  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    allowed, disallowed = _resolve(special_tokens, allowed_special, disallowed_special)
    for name in disallowed:
        if name in text:
            raise ValueError(f"disallowed special token {name!r}")
    names = [n for n in special_tokens if n in allowed]  # table order, not longest first
    pieces = re.split("(" + "|".join(map(re.escape, names)) + ")", text) if names else [text]
    ids = []
    for piece in pieces:
        if piece:
            ids += [special_tokens[piece]] if piece in allowed else encode_ordinary(piece)
    return ids


@bug("encode_with_specials", "specials-allowed-outside-table",
     "looks up every allowed name in special_tokens: KeyError for a name the table lacks",
     hint="not in special_tokens")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    allowed, disallowed = _resolve(special_tokens, allowed_special, disallowed_special)
    for name in _specials_split(text, disallowed):
        if name in disallowed:
            raise ValueError(f"disallowed special token {name!r}")
    ids = []
    for piece in _specials_split(text, allowed):  # not intersected with the table
        ids += [special_tokens[piece]] if piece in allowed else encode_ordinary(piece)
    return ids


@bug("encode_with_specials", "specials-allowed-set-in-place",
     "keeps the caller's set (no copy) and drops the names outside the table from it",
     rule="pure", hint="changed its input (allowed_special)")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    if allowed_special == "all":
        allowed = set(special_tokens)
    elif isinstance(allowed_special, set):
        allowed = allowed_special  # "a set already": but it is the caller's set
    else:
        allowed = set(allowed_special)
    allowed.intersection_update(special_tokens)
    return special.encode_with_specials(
        text, special_tokens, allowed, encode_ordinary, disallowed_special
    )


# --- render_chat -------------------------------------------------------------------------------

IM_START, IM_END = special.IM_START, special.IM_END


def _chatml(messages):
    turns = "".join(f"{IM_START}{role}\n{content}{IM_END}\n" for role, content in messages)
    return turns + f"{IM_START}assistant\n"


@bug("render_chat", "chat-render-allow-all", "renders the ChatML text, then encodes it with "
     'allowed_special="all": the user\'s <|im_end|> becomes the marker',
     hint="became a special id")  # fmt: skip
def _(messages, enc):
    return enc.encode(_chatml(messages), allowed_special="all")


@bug("render_chat", "chat-render-allow-markers", "renders the text, allows only the two markers: "
     "the user's markers still become ids", hint="became a special id")  # fmt: skip
def _(messages, enc):
    return enc.encode(_chatml(messages), allowed_special={IM_START, IM_END})


@bug("render_chat", "chat-render-default-encode", "markers by id, but message text through "
     "enc.encode with its defaults: special text in a message raises",
     hint="refused special text")  # fmt: skip
def _(messages, enc):
    start, end = enc.encode_single_token(IM_START), enc.encode_single_token(IM_END)
    ids = []
    for role, content in messages:
        ids += [start, *enc.encode(f"{role}\n{content}"), end, *enc.encode("\n")]
    return ids + [start, *enc.encode("assistant\n")]


@bug("render_chat", "chat-render-strip-markers", "removes special-token text from the messages "
     "(sanitizing): the user's text is changed", hint="nothing removed or escaped")  # fmt: skip
def _(messages, enc):
    def clean(text):
        for name in (IM_START, IM_END, "<|endoftext|>"):
            text = text.replace(name, "")
        return text

    return special.render_chat([(clean(r), clean(c)) for r, c in messages], enc)


@bug("render_chat", "chat-render-role-apart", "encodes role + newline and content as two pieces",
     hint="as one piece")  # fmt: skip
def _(messages, enc):
    start, end = enc.encode_single_token(IM_START), enc.encode_single_token(IM_END)
    ids = []
    for role, content in messages:
        ids += [start, *enc.encode_ordinary(role + "\n"), *enc.encode_ordinary(content), end]
        ids += enc.encode_ordinary("\n")
    return ids + [start, *enc.encode_ordinary("assistant\n")]


@bug("render_chat", "chat-render-no-reply-header", "stops after the last turn: no "
     "<|im_start|>assistant\\n for the reply",
     hint="where the assistant's reply begins")  # fmt: skip
def _(messages, enc):
    start, end = enc.encode_single_token(IM_START), enc.encode_single_token(IM_END)
    ids = []
    for role, content in messages:
        ids += [start, *enc.encode_ordinary(f"{role}\n{content}"), end, *enc.encode_ordinary("\n")]
    return ids


@bug("render_chat", "chat-render-chapter-ids", "uses the chapter's marker ids (100277, 100278), "
     "not enc's", hint="which enc does not have")  # fmt: skip
def _(messages, enc):
    ids = []
    for role, content in messages:
        ids += [100277, *enc.encode_ordinary(f"{role}\n{content}"), 100278]
        ids += enc.encode_ordinary("\n")
    return ids + [100277, *enc.encode_ordinary("assistant\n")]


@bug("render_chat", "chat-render-markers-as-text", "encodes the whole ChatML text as ordinary "
     "text: no marker is special", hint="add the markers by id")  # fmt: skip
def _(messages, enc):
    return enc.encode_ordinary(_chatml(messages))


@bug("render_chat", "chat-render-returns-tuple", "returns a tuple of ids", rule="type")
def _(messages, enc):
    return tuple(special.render_chat(messages, enc))


# --- count_spellings --------------------------------------------------------------------------


def _spelling_tokens(merges):
    return list(bpe.build_vocab(merges).values())


@bug("count_spellings", "spellings-listed-one-by-one", "recursion over every spelling, with no "
     "table: fine on short texts, never ends on long ones",
     hint="no program can list them one by one")  # fmt: skip
def _(text, merges):
    data, tokens = text.encode("utf-8"), _spelling_tokens(merges)

    def spellings(i):
        if i == len(data):
            return 1
        return sum(spellings(i + len(t)) for t in tokens if data.startswith(t, i))

    return spellings(0)


def _ways(data, tokens, first=1):
    ways = [first] + [0] * len(data)
    for i in range(1, len(data) + 1):
        for token in tokens:
            if data.endswith(token, 0, i):
                ways[i] += ways[i - len(token)]
    return ways[-1]


@bug("count_spellings", "spellings-ascii-bytes", "a vocabulary of the bytes 0 to 127 only: "
     "characters of several bytes lose their byte-by-byte spellings",
     hint="has all 256 single bytes")  # fmt: skip
def _(text, merges):
    tokens = [t for t in _spelling_tokens(merges) if len(t) > 1 or t[0] < 0x80]
    return _ways(text.encode("utf-8"), tokens)


@bug("count_spellings", "spellings-empty-is-zero", "ways[0] = 0: the empty text has no spelling, "
     "and then nothing has one", hint="the empty text has exactly one spelling")  # fmt: skip
def _(text, merges):
    if not text:
        return 0
    return bpe.count_spellings(text, merges)


@bug("count_spellings", "spellings-characters", "cuts the text into characters, not bytes: "
     "tokens that hold part of a character never fit",
     hint="the UTF-8 bytes of the text")  # fmt: skip
def _(text, merges):
    tokens = []
    for token in _spelling_tokens(merges):
        try:
            tokens.append(token.decode("utf-8"))
        except UnicodeDecodeError:
            continue  # not text on its own
    return _ways(text, tokens)


@bug("count_spellings", "spellings-two-bytes-at-most", "looks back at most two bytes: tokens "
     "of three bytes or more never fit",
     hint="your count looks only at tokens of up to 2 bytes")  # fmt: skip
def _(text, merges):
    data = text.encode("utf-8")
    tokens = set(_spelling_tokens(merges))
    ways = [1] + [0] * len(data)
    for i in range(1, len(data) + 1):
        for j in range(max(0, i - 2), i):
            if data[j:i] in tokens:
                ways[i] += ways[j]
    return ways[-1]


@bug("count_spellings", "spellings-sorted-merges", "builds the vocabulary from the merges sorted "
     "by pair", hint="in the order they were learned")  # fmt: skip
def _(text, merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), idx in sorted(merges.items()):
        vocab[idx] = vocab[a] + vocab[b]
    return _ways(text.encode("utf-8"), list(vocab.values()))


# --- utf8_encode: the 2-byte form, the first a learner writes by hand ------------------------


def _two_bytes_wrong(cp, two_bytes):
    """A correct encoder whose 2-byte form is built by ``two_bytes``: the classic mistakes of the
    first form a learner writes by hand."""
    if 0x80 <= cp <= 0x7FF:
        return bytes(two_bytes(cp))
    return utf8.utf8_encode(cp)


@bug("utf8_encode", "two-bytes-no-markers", "the 2-byte form: the bits without 110 and 10",
     hint="none of the markers")  # fmt: skip
def _(cp):
    return _two_bytes_wrong(cp, lambda cp: [cp >> 6, cp & 0b111111])


@bug("utf8_encode", "two-bytes-swapped", "the 2-byte form: the low 6 bits in the first byte",
     hint="the last byte the lowest 6")  # fmt: skip
def _(cp):
    return _two_bytes_wrong(cp, lambda cp: [0b11000000 | (cp & 0b111111), 0b10000000 | (cp >> 6)])


@bug("utf8_encode", "two-bytes-split-6-5", "the 2-byte form: 6 bits in the lead, 5 in the other",
     hint="carries exactly 6 bits")  # fmt: skip
def _(cp):
    return _two_bytes_wrong(
        cp, lambda cp: [0b11000000 | ((cp >> 5) & 0b11111), 0b10000000 | (cp & 0b11111)]
    )


@bug("utf8_encode", "two-bytes-no-mask", "the 2-byte form: forgets to keep only the low 6 bits",
     hint="Keep only 6 bits in each continuation byte")  # fmt: skip
def _(cp):
    return _two_bytes_wrong(cp, lambda cp: [0b11000000 | (cp >> 6), 0b10000000 | cp])


@bug("utf8_encode", "two-bytes-three-byte-marker", "the 2-byte form: lead byte starts with 1110",
     hint="starts with n ones and a zero")  # fmt: skip
def _(cp):
    return _two_bytes_wrong(cp, lambda cp: [0b11100000 | (cp >> 6), 0b10000000 | (cp & 0b111111)])


@bug("utf8_encode", "two-bytes-ten-digits", "the 2-byte form: pads the code point to 10 digits",
     hint="pad the code point to the form's full width")  # fmt: skip
def _(cp):
    def two(cp):
        bits = f"{cp:010b}"
        return [int("110" + bits[:4], 2), int("10" + bits[4:], 2)]

    return _two_bytes_wrong(cp, two)


@bug("utf8_encode", "two-bytes-marker-one-bit-short", "the 2-byte lead marker as 0b1100000",
     hint="its marker sits one bit too far right")  # fmt: skip
def _(cp):
    return _two_bytes_wrong(cp, lambda cp: [0b1100000 | (cp >> 6), 0b10000000 | (cp & 0b111111)])


@bug("utf8_encode", "two-bytes-mask-0xff", "the 2-byte form: keeps 8 bits in the continuation",
     hint="carries only 6 bits")  # fmt: skip
def _(cp):
    return _two_bytes_wrong(cp, lambda cp: [0b11000000 | (cp >> 6), 0b10000000 | (cp & 0xFF)])


@bug("utf8_encode", "utf8-encode-no-lower-bound",
     "no check for negative integers: bytes([-1]) raises a ValueError by luck",
     hint="does not name it: test 0 <= code_point <= 0x10FFFF")  # fmt: skip
def _(cp):
    if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        raise ValueError(f"{cp:#x} has no UTF-8 encoding")
    if cp < 0x80:
        return bytes([cp])
    return utf8.utf8_encode(cp)


@bug("utf8_encode", "utf8-encode-unnamed-error", "raises ValueError without naming the integer",
     hint="naming the integer")  # fmt: skip
def _(cp):
    if not 0 <= cp <= 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        raise ValueError("no UTF-8 encoding")
    return utf8.utf8_encode(cp)


@bug("utf8_encode", "utf8-encode-codec", "chr(cp).encode(), its error turned into ValueError",
     rule="work", hint="move the bits yourself")  # fmt: skip
def _(cp):
    try:
        return chr(cp).encode()
    except ValueError as err:  # chr's for a negative cp, or the codec's
        raise ValueError(f"{cp}: {err}") from None


@bug("utf8_encode", "utf8-encode-codec-bytes", "bytes(chr(cp), 'utf-8'): the codec by name",
     rule="work", hint="move the bits yourself")  # fmt: skip
def _(cp):
    try:
        return bytes(chr(cp), "utf-8")
    except ValueError as err:  # chr's for a negative cp, or the codec's
        raise ValueError(f"{cp}: {err}") from None


@bug("utf8_encode", "utf8-encode-own-error-class", "raises its own subclass of ValueError",
     hint="you raised NotUTF8Error, a subclass of ValueError")  # fmt: skip
def _(cp):
    class NotUTF8Error(ValueError):  # a student's own kind of ValueError
        pass

    if not 0 <= cp <= 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        raise NotUTF8Error(f"{cp:#x} has no UTF-8 encoding")
    return utf8.utf8_encode(cp)


@bug("utf8_encode", "utf8-encode-unicode-error", "raises UnicodeEncodeError, the codec's error",
     hint="the error of Python's codec")  # fmt: skip
def _(cp):
    if not 0 <= cp <= 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        raise UnicodeEncodeError("utf-8", "?", 0, 1, "no UTF-8 encoding")
    return utf8.utf8_encode(cp)


@bug("utf8_encode", "utf8-encode-refuses-noncharacters", "refuses U+FFFF and the other 65",
     hint="still a valid code point")  # fmt: skip
def _(cp):
    if 0xFDD0 <= cp <= 0xFDEF or (0 <= cp <= 0x10FFFF and cp & 0xFFFE == 0xFFFE):
        raise ValueError(f"U+{cp:04X} is a noncharacter")
    return utf8.utf8_encode(cp)


@bug("utf8_encode", "two-bytes-bytes-reversed", "the 2-byte form: right bytes, reverse order",
     hint="the right bytes in the wrong order")  # fmt: skip
def _(cp):
    return _two_bytes_wrong(cp, lambda cp: [0b10000000 | (cp & 0b111111), 0b11000000 | (cp >> 6)])


@bug("utf8_encode", "utf8-encode-codec-alias", "bytes(chr(cp), 'cp65001'): UTF-8 by an alias",
     rule="work", hint="move the bits yourself")  # fmt: skip
def _(cp):
    try:
        return bytes(chr(cp), "cp65001")
    except ValueError as err:  # chr's for a negative cp, or the codec's
        raise ValueError(f"{cp}: {err}") from None


#: A codec's name kept in a module-level variable, read by the bug below.
_ENCODING = "utf-8"


@bug("utf8_encode", "utf8-encode-codec-global", "bytes(chr(cp), ENC), ENC = 'utf-8' a global",
     rule="work", hint="move the bits yourself")  # fmt: skip
def _(cp):
    try:
        return bytes(chr(cp), _ENCODING)
    except ValueError as err:  # chr's for a negative cp, or the codec's
        raise ValueError(f"{cp}: {err}") from None


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


@bug("utf8_encode", "utf8-encode-no-continuation-marker", "forgets the 10xxxxxx marker",
     hint="holds its 6 payload bits but not its marker")  # fmt: skip
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
    data,
    *,
    overlong=True,
    surrogates=True,
    limit=True,
    truncation=True,
    continuation=True,
    minimums=(0x80, 0x800, 0x10000),
):
    """A UTF-8 decoder whose checks can be switched off one by one (``minimums``: the smallest
    code point each of the 2-, 3- and 4-byte forms may spell)."""
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
        if overlong and cp < minimums[n - 2]:
            raise ValueError("overlong")
        if surrogates and 0xD800 <= cp <= 0xDFFF:
            raise ValueError("surrogate")
        if limit and cp > 0x10FFFF:
            raise ValueError("above U+10FFFF")
        out.append(cp)
        i += n
    return out


@bug("utf8_decode", "utf8-decode-codec", "bytes.decode, its error turned into ValueError",
     rule="work", hint="move the bits yourself")  # fmt: skip
def _(data):
    try:
        return [ord(ch) for ch in data.decode("utf-8")]
    except UnicodeDecodeError as err:
        raise ValueError(str(err)) from None


@bug("utf8_decode", "utf8-decode-replaces", "puts U+FFFD for bad bytes instead of raising",
     hint="must raise ValueError, not return [0xFFFD]")  # fmt: skip
def _(data):
    out, i = [], 0
    while i < len(data):
        for n in (1, 2, 3, 4):
            try:
                cps = utf8.utf8_decode(data[i : i + n])
            except ValueError:
                continue
            out += cps
            i += n
            break
        else:
            out.append(0xFFFD)
            i += 1
    return out


@bug("byte_kind", "byte-kind-c0-c1-lead", "calls C0 and C1 lead bytes (overlong forms only)",
     hint="a character takes the shortest form that holds it")  # fmt: skip
def _(b):
    if b < 0x80:
        return "ascii"
    if b < 0xC0:
        return "continuation"
    return "invalid" if b >= 0xF5 else "lead"


@bug("byte_kind", "byte-kind-e0-f0-invalid", "calls E0, F0 and F4 invalid (they start overlongs)",
     hint="so the byte does start characters")  # fmt: skip
def _(b):
    if b < 0x80:
        return "ascii"
    if b < 0xC0:
        return "continuation"
    bad = b in (0xC0, 0xC1, 0xE0, 0xF0, 0xF4) or b >= 0xF5
    return "invalid" if bad else "lead"


@bug("utf8_decode", "utf8-decode-accepts-overlong", "accepts overlong forms such as C0 AF")
def _(data):
    return _decode_utf8_with(data, overlong=False)


@bug("utf8_decode", "utf8-decode-overlong-3-byte-min-0x80",
     "the 3-byte form's minimum taken as 0x80: E0 9F BF passes as U+07FF",
     hint="the smallest code point of its length")  # fmt: skip
def _(data):
    return _decode_utf8_with(data, minimums=(0x80, 0x80, 0x10000))


@bug("utf8_decode", "utf8-decode-overlong-4-byte-min-0x800",
     "the 4-byte form's minimum taken as 0x800: F0 8F BF BF passes as U+FFFF",
     hint="the smallest code point of its length")  # fmt: skip
def _(data):
    return _decode_utf8_with(data, minimums=(0x80, 0x800, 0x800))


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


# --- answers of the wrong type: right values, wrong container ------------------------------------


@bug("get_stats", "get-stats-sorted-list", "a sorted list of (pair, count)", rule="type",
     hint="must return a dict")  # fmt: skip
def _(ids):
    return sorted(Counter(pairwise(ids)).items())


@bug("get_stats", "get-stats-set-of-pairs", "Counter(set(...)): each pair counted once",
     hint="a set holds each pair once")  # fmt: skip
def _(ids):
    return Counter(set(pairwise(ids)))


@bug("merge", "merge-generator", "yields the new ids instead of returning a list", rule="type",
     hint="can be read only once")  # fmt: skip
def _(ids, pair, idx):
    yield from bpe.merge(ids, pair, idx)


@bug("merge", "merge-tuple", "returns a tuple", rule="type", hint="not a tuple")
def _(ids, pair, idx):
    return tuple(bpe.merge(ids, pair, idx))


@bug("merge", "merge-in-place",
     "changes ids in place and returns it: where nothing merges, that is ids itself",
     hint="changed ids itself and returned it")  # fmt: skip
def _(ids, pair, idx):
    ids[:] = bpe.merge(ids, pair, idx)
    return ids


@bug("merge", "merge-pops-ids", "empties ids as it reads them (ids.pop(0)) into a new list",
     rule="pure", hint="changed its input (ids)")  # fmt: skip
def _(ids, pair, idx):
    out = []
    while ids:
        if len(ids) >= 2 and (ids[0], ids[1]) == pair:
            out.append(idx)
            del ids[:2]
        else:
            out.append(ids.pop(0))
    return out


@bug("train", "train-list-of-items", "returns a list of (pair, id)", rule="type",
     hint="must return a dict")  # fmt: skip
def _(text, vocab_size, pick=None):
    return list(bpe.train(text, vocab_size, pick=pick).items())


@bug("train", "train-code-points", "starts from code points (ord), not UTF-8 bytes",
     hint="start from bytes")  # fmt: skip
def _(text, vocab_size, pick=None):
    ids = [ord(c) for c in text]
    vocab = {i: chr(i).encode() for i in set(ids) | set(range(256))}
    merges = {}
    for i in range(vocab_size - 256):
        stats = _pairs(ids)
        if not stats:
            break
        pair = max(stats, key=lambda p: (stats[p], vocab[p[0]], vocab[p[1]]))
        ids = bpe.merge(ids, pair, 256 + i)
        vocab[256 + i] = vocab[pair[0]] + vocab[pair[1]]
        merges[pair] = 256 + i
    return merges


@bug("train", "train-characters", "counts pairs of characters, list(text), not of UTF-8 bytes",
     hint="starts from characters (ord(c), or list(text))")  # fmt: skip
def _(text, vocab_size, pick=None):
    return _train_with_symbols(list(text), vocab_size)


@bug("train", "train-code-points-raises", "starts from ord() of each character and runs out of "
     "pairs on emoji", hint="Begin with list(text.encode('utf-8'))")  # fmt: skip
def _(text, vocab_size, pick=None):
    return _train_with_symbols([ord(c) for c in text], vocab_size)


def _train_with_symbols(ids, vocab_size):
    merges = {}
    for idx in range(256, vocab_size):
        stats = _pairs(ids)
        pair = max(stats, key=stats.get)  # raises once no pair is left
        ids = bpe.merge(ids, pair, idx)
        merges[pair] = idx
    return merges


@bug("encode", "encode-tuple", "returns a tuple of ids", rule="type", hint="not a tuple")
def _(text, merges):
    return tuple(bpe.encode(text, merges))


@bug("utf8_encode", "utf8-encode-bytearray", "returns a bytearray", rule="type",
     hint="bytes([b1, b2, ...])")  # fmt: skip
def _(cp):
    return bytearray(_encode_utf8_with(cp))


@bug("utf8_decode", "utf8-decode-four-byte-lead-mask", "keeps 2 bits of a 4-byte lead, not 3",
     hint="11110xxx: & 0b111")  # fmt: skip
def _(data):
    out, i = [], 0
    while i < len(data):
        lead = data[i]
        n = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if n < 4:
            out += _decode_utf8_with(data[i : i + n])
        else:  # every check made, but on a value built with the wrong mask
            if lead >= 0xF8 or i + 4 > len(data):
                raise ValueError("bad 4-byte sequence")
            cp = lead & 0b11
            for b in data[i + 1 : i + 4]:
                if b >> 6 != 0b10:
                    raise ValueError("not a continuation byte")
                cp = (cp << 6) | (b & 0x3F)
            if not 0x10000 <= cp <= 0x10FFFF:
                raise ValueError("overlong or too large")
            out.append(cp)
        i += n
    return out


@bug("encode_ordinary_cached", "encode-ordinary-gpt2-pattern", "splits with GPT-2's pattern",
     hint="GPT-2's pattern")  # fmt: skip
def _(text, merges):
    return _cached(split(text, GPT2_SPLIT_PATTERN), lambda chunk: bpe.encode(chunk, merges))


@bug("encode_with_specials", "specials-deletes-disallowed", "removes tokens from special_tokens",
     rule="pure", hint="changed its input (special_tokens)")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), **kwargs):
    ids = special.encode_with_specials(text, special_tokens, allowed_special, **kwargs)
    if allowed_special != "all":
        for name in list(special_tokens):
            if name not in allowed_special:
                del special_tokens[name]
    return ids


# --- chapter 13: right answers, slow ways (rule "work") and plain mistakes ----------------------


@bug("apply_merge", "apply-merge-recount", "merges, then recounts every pair of every word",
     rule="work", hint="revisits only the words")  # fmt: skip
def _(pair, idx, words, weights, counts, where):
    before = dict(counts)
    for i in where.pop(pair, ()):
        words[i] = bpe.merge(words[i], pair, idx)
    counts.clear()
    where.clear()
    for i, word in enumerate(words):
        for p in pairwise(word):
            counts[p] = counts.get(p, 0) + weights[i]
            where.setdefault(p, set()).add(i)
    return {p: counts.get(p, 0) for p in before.keys() | counts.keys()
            if before.get(p) != counts.get(p)}  # fmt: skip


@bug("apply_merge", "apply-merge-every-word", "tries the merge in every word, not where[pair]",
     rule="work", hint="revisits only the words")  # fmt: skip
def _(pair, idx, words, weights, counts, where):
    where[pair] = set(range(len(words)))
    return fast_train.apply_merge(pair, idx, words, weights, counts, where)


@bug("apply_merge", "apply-merge-forgets-where", "never adds the new pairs to where",
     hint="does not list")  # fmt: skip
def _(pair, idx, words, weights, counts, where):
    kept = {p: set(s) for p, s in where.items() if p != pair}
    changed = fast_train.apply_merge(pair, idx, words, weights, counts, where)
    where.clear()
    where.update(kept)
    return changed


@bug("apply_merge", "apply-merge-weight-one", "counts every word once, ignoring its weight",
     hint="subtract weight")  # fmt: skip
def _(pair, idx, words, weights, counts, where):
    return fast_train.apply_merge(pair, idx, words, [1] * len(weights), counts, where)


def _merge_lowest_with(ids, ranks, merges, *, rightmost=False, left=True, recompute=False):
    """One rank-based step with knobs for the classic mistakes."""
    best = min(ranks, default=math.inf)
    if best == math.inf:
        return False
    i = len(ranks) - 1 - ranks[::-1].index(best) if rightmost else ranks.index(best)
    ids[i : i + 2] = [best]
    if recompute:
        ranks[:] = [merges.get(p, math.inf) for p in pairwise(ids)]
        return True
    del ranks[i]
    if i < len(ranks):
        ranks[i] = merges.get((best, ids[i + 1]), math.inf)
    if i > 0 and left:
        ranks[i - 1] = merges.get((ids[i - 1], best), math.inf)
    return True


@bug("merge_lowest", "merge-lowest-recompute", "recomputes every rank after the merge",
     rule="work", hint="only two pairs are new")  # fmt: skip
def _(ids, ranks, merges):
    return _merge_lowest_with(ids, ranks, merges, recompute=True)


@bug("merge_lowest", "merge-lowest-rightmost", "merges the rightmost of equal ranks",
     hint="leftmost")  # fmt: skip
def _(ids, ranks, merges):
    return _merge_lowest_with(ids, ranks, merges, rightmost=True)


@bug("merge_lowest", "merge-lowest-no-left-update", "forgets the rank left of the new token",
     hint="ranks[i - 1]")  # fmt: skip
def _(ids, ranks, merges):
    return _merge_lowest_with(ids, ranks, merges, left=False)


@bug("encode_ordinary_cached", "encode-cached-no-cache", "encodes every chunk, repeats too",
     rule="work", hint="a cache answers every repeat")  # fmt: skip
def _(text, merges):
    return [
        i for chunk in split(text) for i in fast_encode.bpe_ranked(list(chunk.encode()), merges)
    ]


_SHARED_CACHE: dict = {}


@bug("encode_ordinary_cached", "encode-cached-ignores-merges", "one cache for every merges table",
     hint="keyed by the merges")  # fmt: skip
def _(text, merges):
    ids = []
    for chunk in split(text):
        if chunk not in _SHARED_CACHE:
            _SHARED_CACHE[chunk] = fast_encode.bpe_ranked(list(chunk.encode()), merges)
        ids += _SHARED_CACHE[chunk]
    return ids


# --- chapter 08: vocabulary size ---------------------------------------------------------------


def _sizes_ok(body_params, d_model, vocab_size, bytes_per_token):
    if body_params < 0 or d_model < 1 or vocab_size < 1 or not bytes_per_token > 0:
        raise ValueError("not a model or not a tokenizer")


@bug("flops_per_byte", "flops-per-byte-per-token", "forgets to divide: the cost of a token",
     hint="divide by bytes_per_token")  # fmt: skip
def _(body_params, d_model, vocab_size, bytes_per_token):
    _sizes_ok(body_params, d_model, vocab_size, bytes_per_token)
    return float(2 * body_params + 2 * d_model * vocab_size)


@bug("flops_per_byte", "flops-per-byte-times", "multiplies by bytes_per_token",
     hint="you multiplied by bytes_per_token")  # fmt: skip
def _(body_params, d_model, vocab_size, bytes_per_token):
    _sizes_ok(body_params, d_model, vocab_size, bytes_per_token)
    return (2 * body_params + 2 * d_model * vocab_size) * float(bytes_per_token)


@bug("flops_per_byte", "flops-per-byte-embedding-product", "counts the embedding as a product",
     hint="embedding table as a matrix product")  # fmt: skip
def _(body_params, d_model, vocab_size, bytes_per_token):
    _sizes_ok(body_params, d_model, vocab_size, bytes_per_token)
    return (2 * body_params + 2 * 2 * d_model * vocab_size) / bytes_per_token


@bug("flops_per_byte", "flops-per-byte-head-once", "counts the head's weights once, not twice",
     hint="a multiply and an add")  # fmt: skip
def _(body_params, d_model, vocab_size, bytes_per_token):
    _sizes_ok(body_params, d_model, vocab_size, bytes_per_token)
    return (2 * body_params + d_model * vocab_size) / bytes_per_token


@bug("flops_per_byte", "flops-per-byte-no-checks", "returns a number for 0 bytes per token",
     hint="raise ValueError")  # fmt: skip
def _(body_params, d_model, vocab_size, bytes_per_token):
    if bytes_per_token == 0:
        return math.inf
    return (2 * body_params + 2 * d_model * vocab_size) / bytes_per_token


# --- chapter 07: SentencePiece ------------------------------------------------------------------


def _piece_bytes(pieces):
    return bytes(int(p[3:5], 16) for p in pieces)


@bug("decode_byte_pieces", "decode-bytes-python-replace", "Python's errors='replace'",
     hint="one U+FFFD per invalid")  # fmt: skip
def _(pieces):
    return _piece_bytes(pieces).decode("utf-8", errors="replace")


@bug("decode_byte_pieces", "decode-bytes-strict", "decodes strictly: raises on invalid bytes",
     hint="instead of failing")  # fmt: skip
def _(pieces):
    return _piece_bytes(pieces).decode("utf-8")


@bug("decode_byte_pieces", "decode-bytes-ignore", "drops invalid bytes", hint="vanished")
def _(pieces):
    return _piece_bytes(pieces).decode("utf-8", errors="ignore")


@bug("decode_byte_pieces", "decode-bytes-one-by-one", "decodes each byte piece on its own",
     hint="join the bytes first")  # fmt: skip
def _(pieces):
    return "".join(bytes([int(p[3:5], 16)]).decode("utf-8", "replace") for p in pieces)


def _merge_score_loop(symbols, scores, better):
    symbols = list(symbols)
    while True:
        best, where = None, -1
        for i in range(len(symbols) - 1):
            score = scores.get(symbols[i] + symbols[i + 1])
            if score is not None and (best is None or better(score, best)):
                best, where = score, i
        if best is None:
            return symbols
        symbols[where : where + 2] = [symbols[where] + symbols[where + 1]]


@bug("merge_by_score", "merge-score-ties-right", "on a tie merges the rightmost pair (>=)",
     hint="leftmost")  # fmt: skip
def _(symbols, scores):
    return _merge_score_loop(symbols, scores, lambda a, b: a >= b)


@bug("merge_by_score", "merge-score-lowest", "merges the lowest score first",
     hint="highest score wins")  # fmt: skip
def _(symbols, scores):
    return _merge_score_loop(symbols, scores, lambda a, b: a < b)


@bug("merge_by_score", "merge-score-every-occurrence", "merges every occurrence of the best pair",
     hint="one pair at a time")  # fmt: skip
def _(symbols, scores):
    symbols = list(symbols)
    while True:
        found = [(scores[a + b], a + b) for a, b in pairwise(symbols) if a + b in scores]
        if not found:
            return symbols
        piece = max(found, key=lambda f: f[0])[1]
        out, i = [], 0
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] + symbols[i + 1] == piece:
                out.append(piece)
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        symbols = out


@bug("merge_by_score", "merge-score-one-pass", "one left-to-right pass, never looks again",
     hint="wherever the pair is")  # fmt: skip
def _(symbols, scores):
    out = []
    for s in symbols:
        if out and out[-1] + s in scores:
            out[-1] += s
        else:
            out.append(s)
    return out


@bug("merge_by_score", "merge-score-in-place", "merges in the caller's list", rule="pure")
def _(symbols, scores):
    merged = tokenizer_sp.merge_by_score(symbols, scores)
    symbols[:] = merged
    return symbols


def _coverage_loop(counts, coverage, *, key=lambda kv: (-kv[1], kv[0]), stop=lambda s, c: s >= c):
    total, kept, covered = sum(counts.values()), {}, 0
    for char, n in sorted(counts.items(), key=key):
        if stop(covered / total, coverage):
            break
        kept[char] = n
        covered += n
    return kept


@bug("covered_characters", "coverage-strict", "stops only once the share is above the coverage",
     hint="one character too many")  # fmt: skip
def _(counts, coverage):
    return _coverage_loop(counts, coverage, stop=lambda share, c: share > c)


@bug("covered_characters", "coverage-drops-crossing", "drops the character that reaches the "
     "coverage", hint="one character too few")  # fmt: skip
def _(counts, coverage):
    total, kept, covered = sum(counts.values()), {}, 0
    for char, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        covered += n
        if covered / total > coverage:
            break
        kept[char] = n
    return kept


@bug("covered_characters", "coverage-distinct", "a share of the distinct characters, not of "
     "the occurrences", hint="share of the occurrences")  # fmt: skip
def _(counts, coverage):
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return dict(ranked[: math.ceil(coverage * len(counts))])


@bug("covered_characters", "coverage-ties-unordered", "ties in the dict's order",
     hint="smaller character first", order=True)  # fmt: skip
def _(counts, coverage):
    return _coverage_loop(counts, coverage, key=lambda kv: -kv[1])


@bug("covered_characters", "coverage-items", "returns a list of (character, count) pairs",
     rule="type")  # fmt: skip
def _(counts, coverage):
    return list(_coverage_loop(counts, coverage).items())


@bug("covered_characters", "coverage-pops", "pops the counts it keeps", rule="pure")
def _(counts, coverage):
    kept = _coverage_loop(counts, coverage)
    for char in kept:
        counts.pop(char)
    return kept


@bug("best_pair", "best-pair-first-max", "max by frequency: the first in the dict on a tie",
     hint="not the first one in the dict", order=True)  # fmt: skip
def _(freqs):
    return max(freqs, key=freqs.get)


@bug("best_pair", "best-pair-longer", "on a tie, the longer piece", hint="*shorter*")
def _(freqs):
    return min(freqs, key=lambda p: (-freqs[p], -len(p[0] + p[1]), p[0] + p[1]))


@bug("best_pair", "best-pair-bytes", "length in UTF-8 bytes", hint="not UTF-8 bytes")
def _(freqs):
    return min(freqs, key=lambda p: (-freqs[p], len((p[0] + p[1]).encode()), p[0] + p[1]))


@bug("best_pair", "best-pair-tuple-order", "compares the pairs, not the pieces they make",
     hint="not the pairs")  # fmt: skip
def _(freqs):
    return min(freqs, key=lambda p: (-freqs[p], len(p[0] + p[1]), p))


@bug("best_pair", "best-pair-larger", "on a tie, the larger piece", hint="*smaller* piece")
def _(freqs):
    return max(freqs, key=lambda p: (freqs[p], -len(p[0] + p[1]), p[0] + p[1]))


@bug("best_pair", "best-pair-list", "returns a list [left, right]", rule="type")
def _(freqs):
    return list(min(freqs, key=lambda p: (-freqs[p], len(p[0] + p[1]), p[0] + p[1])))


# --- chapter 09: when tokenization bites --------------------------------------------------------


@bug("unstable_prefixes", "unstable-prefixes-stable", "lists the stable lengths instead",
     hint="those are the stable lengths")  # fmt: skip
def _(text, encode):
    full = encode(text)
    return [k for k in range(1, len(text) + 1) if encode(text[:k]) == full[: len(encode(text[:k]))]]


@bug("unstable_prefixes", "unstable-prefixes-index", "the index of the last character, not k",
     hint="off by one")  # fmt: skip
def _(text, encode):
    full = encode(text)
    out = []
    for i in range(len(text)):
        ids = encode(text[: i + 1])
        if ids != full[: len(ids)]:
            out.append(i)
    return out


@bug("unstable_prefixes", "unstable-prefixes-bytes", "prefixes of the UTF-8 bytes",
     hint="counted in characters")  # fmt: skip
def _(text, encode):
    data, full = text.encode("utf-8"), encode(text)
    out = []
    for k in range(1, len(data) + 1):
        ids = encode(data[:k].decode("utf-8", errors="ignore"))
        if ids != full[: len(ids)]:
            out.append(k)
    return out


@bug("unstable_prefixes", "unstable-prefixes-ignores-last", "compares all but the last token",
     hint="the last token of the prefix")  # fmt: skip
def _(text, encode):
    full = encode(text)
    out = []
    for k in range(1, len(text) + 1):
        ids = encode(text[:k])
        if ids[:-1] != full[: len(ids) - 1]:
            out.append(k)
    return out


@bug("unstable_prefixes", "unstable-prefixes-last-id-only", "compares only the last id of the "
     "prefix with the full text's id there", hint="only the last id")  # fmt: skip
def _(text, encode):
    full = encode(text)
    out = []
    for k in range(1, len(text) + 1):
        ids = encode(text[:k])
        if len(ids) > len(full) or ids[-1] != full[len(ids) - 1]:
            out.append(k)
    return out


@bug("unstable_prefixes", "unstable-prefixes-first-k-ids", "compares with full[:k]: k ids, "
     "although k counts characters", hint="full[:k] takes the first k *ids*")  # fmt: skip
def _(text, encode):
    full = encode(text)
    return [k for k in range(1, len(text) + 1) if encode(text[:k]) != full[:k]]


@bug("unstable_prefixes", "unstable-prefixes-subset", "tests membership, not position",
     hint="occur somewhere")  # fmt: skip
def _(text, encode):
    full = set(encode(text))
    return [k for k in range(1, len(text) + 1) if not set(encode(text[:k])) <= full]


def _records_json(records, **options):
    import json

    if not records:
        raise ValueError("no records")
    return json.dumps(records, **options)


def _rows(records, header=True):
    keys = list(records[0])
    return ([keys] if header else []) + [[r[k] for k in keys] for r in records]


def _csv(records, **options):
    import csv
    import io

    out = io.StringIO()
    csv.writer(out, **options).writerows(_rows(records))
    return out.getvalue()


def _yaml(records, show):
    keys = list(records[0])
    lines = [
        f"{'- ' if j == 0 else '  '}{k}: {show(r[k])}" for r in records for j, k in enumerate(keys)
    ]
    return "\n".join(lines)


def _costs(encode, **texts):
    return {name: len(encode(text)) for name, text in texts.items()}


def _right_yaml(value):
    import json

    return json.dumps(value, ensure_ascii=False)


@bug("format_costs", "format-costs-ascii", "json.dumps's default ensure_ascii=True",
     hint="ensure_ascii=False")  # fmt: skip
def _(records, encode):
    import json

    return _costs(
        encode,
        json=_records_json(records, indent=2),
        compact_json=_records_json(records, separators=(",", ":")),
        yaml=_yaml(records, json.dumps),
        csv=_csv(records, lineterminator="\n"),
    )


@bug("format_costs", "format-costs-crlf", "csv.writer's default line terminator",
     hint="lineterminator")  # fmt: skip
def _(records, encode):
    return _costs(
        encode,
        json=_records_json(records, indent=2, ensure_ascii=False),
        compact_json=_records_json(records, separators=(",", ":"), ensure_ascii=False),
        yaml=_yaml(records, _right_yaml),
        csv=_csv(records),
    )


@bug("format_costs", "format-costs-joined-csv", "CSV by joining values with commas",
     hint="csv.writer quotes those")  # fmt: skip
def _(records, encode):
    _records_json(records)  # no records: ValueError
    csv_text = "".join(",".join(map(str, row)) + "\n" for row in _rows(records))
    return _costs(
        encode,
        json=_records_json(records, indent=2, ensure_ascii=False),
        compact_json=_records_json(records, separators=(",", ":"), ensure_ascii=False),
        yaml=_yaml(records, _right_yaml),
        csv=csv_text,
    )


@bug("format_costs", "format-costs-plain-yaml", "YAML strings without quotes",
     hint="strings in double quotes")  # fmt: skip
def _(records, encode):
    return _costs(
        encode,
        json=_records_json(records, indent=2, ensure_ascii=False),
        compact_json=_records_json(records, separators=(",", ":"), ensure_ascii=False),
        yaml=_yaml(records, str),
        csv=_csv(records, lineterminator="\n"),
    )


@bug("format_costs", "format-costs-default-separators", "compact JSON with the default separators",
     hint="separators=(',', ':')")  # fmt: skip
def _(records, encode):
    return _costs(
        encode,
        json=_records_json(records, indent=2, ensure_ascii=False),
        compact_json=_records_json(records, ensure_ascii=False),
        yaml=_yaml(records, _right_yaml),
        csv=_csv(records, lineterminator="\n"),
    )


@bug("format_costs", "format-costs-characters", "counts characters, not tokens",
     hint="length of the text in characters")  # fmt: skip
def _(records, encode):
    texts = {
        "json": _records_json(records, indent=2, ensure_ascii=False),
        "compact_json": _records_json(records, separators=(",", ":"), ensure_ascii=False),
        "yaml": _yaml(records, _right_yaml),
        "csv": _csv(records, lineterminator="\n"),
    }
    return {name: len(text) for name, text in texts.items()}


@bug("format_costs", "format-costs-empty-brackets", "costs '[]' for no records",
     hint="empty list of records")  # fmt: skip
def _(records, encode):
    if not records:
        return {name: len(encode("[]")) for name in ("json", "compact_json", "yaml", "csv")}
    return _costs(
        encode,
        json=_records_json(records, indent=2, ensure_ascii=False),
        compact_json=_records_json(records, separators=(",", ":"), ensure_ascii=False),
        yaml=_yaml(records, _right_yaml),
        csv=_csv(records, lineterminator="\n"),
    )


# --- chapter 10: glitch tokens -------------------------------------------------------------------


@bug("is_partial_utf8", "partial-utf8-replacement-char", "looks for U+FFFD after errors='replace'",
     hint="U+FFFD (b'\\xef\\xbf\\xbd') is a real character")  # fmt: skip
def _(token_bytes):
    return "\ufffd" in token_bytes.decode("utf-8", errors="replace")


@bug("is_partial_utf8", "partial-utf8-non-ascii", "calls every non-ASCII token partial",
     hint="are not partial by themselves")  # fmt: skip
def _(token_bytes):
    return any(b >= 0x80 for b in token_bytes)


@bug("is_partial_utf8", "partial-utf8-bit-patterns", "checks lead/continuation bits only",
     hint="UTF-8 forbids it")  # fmt: skip
def _(token_bytes):
    i = 0
    while i < len(token_bytes):
        b = token_bytes[i]
        if b < 0x80:
            i += 1
            continue
        n = 1 if 0xC0 <= b < 0xE0 else 2 if 0xE0 <= b < 0xF0 else 3 if 0xF0 <= b < 0xF8 else -1
        tail = token_bytes[i + 1 : i + 1 + n]
        if n < 0 or len(tail) != n or any(not 0x80 <= c < 0xC0 for c in tail):
            return True
        i += n + 1
    return False


@bug("is_partial_utf8", "partial-utf8-last-byte", "looks only at the end of the token",
     hint="starts with a continuation byte")  # fmt: skip
def _(token_bytes):
    if not token_bytes:
        return False
    # walk back over continuation bytes to the last lead byte and see if its character fits
    i = len(token_bytes) - 1
    while i > 0 and 0x80 <= token_bytes[i] < 0xC0:
        i -= 1
    try:
        token_bytes[i:].decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


@bug("is_partial_utf8", "partial-utf8-inverted", "answers 'is valid' instead",
     hint="inverted")  # fmt: skip
def _(token_bytes):
    try:
        token_bytes.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@bug("is_partial_utf8", "partial-utf8-int", "returns 1/0 instead of True/False", rule="type")
def _(token_bytes):
    try:
        token_bytes.decode("utf-8")
    except UnicodeDecodeError:
        return 1
    return 0


def _token_text(token_id, encoding):
    try:
        data = encoding.decode_single_token_bytes(token_id)
    except (KeyError, OverflowError):
        raise ValueError(f"not a token: {token_id}") from None
    return data


@bug("is_reachable", "reachable-table-lookup", "looks the bytes up instead of encoding",
     hint="skips that step")  # fmt: skip
def _(token_id, encoding):
    data = _token_text(token_id, encoding)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return encoding.encode_single_token(text) == token_id


@bug("is_reachable", "reachable-allowed-special", "encodes with allowed_special='all'",
     hint="ordinary text never becomes it")  # fmt: skip
def _(token_id, encoding):
    data = _token_text(token_id, encoding)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return encoding.encode(text, allowed_special="all") == [token_id]


@bug("is_reachable", "reachable-replace-one-token", "decodes with errors='replace', one token",
     hint="decode strictly")  # fmt: skip
def _(token_id, encoding):
    text = _token_text(token_id, encoding).decode("utf-8", errors="replace")
    return len(encoding.encode_ordinary(text)) == 1


@bug("is_reachable", "reachable-key-error", "lets decode_single_token_bytes' KeyError out",
     hint="catch it and raise ValueError")  # fmt: skip
def _(token_id, encoding):
    try:
        text = encoding.decode_single_token_bytes(token_id).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return encoding.encode_ordinary(text) == [token_id]


@bug("is_reachable", "reachable-unknown-false", "answers False for an id that is no token",
     hint="raise ValueError naming the id rather")  # fmt: skip
def _(token_id, encoding):
    try:
        text = encoding.decode_single_token_bytes(token_id).decode("utf-8")
    except (KeyError, OverflowError, UnicodeDecodeError):
        return False
    return encoding.encode_ordinary(text) == [token_id]


@bug("is_reachable", "reachable-compare-int", "compares the list of ids with the id",
     hint="compare it with [token_id]")  # fmt: skip
def _(token_id, encoding):
    data = _token_text(token_id, encoding)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return encoding.encode_ordinary(text) == token_id


def _distances(embeddings, reference_ids):
    rows = np.asarray(embeddings, dtype=np.float64)
    centre = rows[list(reference_ids)].mean(axis=0)
    return np.sqrt(((rows - centre) ** 2).sum(axis=1))


@bug("rank_by_untrained", "rank-untrained-farthest-first", "sorts the farthest rows first",
     hint="farthest row first")  # fmt: skip
def _(embeddings, reference_ids):
    d = _distances(embeddings, reference_ids)
    return sorted(range(len(d)), key=lambda i: d[i], reverse=True)


@bug("rank_by_untrained", "rank-untrained-reversed-ties", "similarity sorted then reversed",
     hint="increasing id order")  # fmt: skip
def _(embeddings, reference_ids):
    similarity = -_distances(embeddings, reference_ids)
    return np.argsort(similarity, kind="stable")[::-1].tolist()


@bug("rank_by_untrained", "rank-untrained-cosine", "ranks by cosine distance",
     hint="cosine distance")  # fmt: skip
def _(embeddings, reference_ids):
    rows = np.asarray(embeddings, dtype=np.float64)
    centre = rows[list(reference_ids)].mean(axis=0)
    with np.errstate(all="ignore"):
        cosine = 1 - rows @ centre / (np.linalg.norm(rows, axis=1) * np.linalg.norm(centre))
    return np.argsort(np.nan_to_num(cosine), kind="stable").tolist()


@bug("rank_by_untrained", "rank-untrained-sum", "uses the sum of the reference rows",
     hint="the sum of the reference rows")  # fmt: skip
def _(embeddings, reference_ids):
    rows = np.asarray(embeddings, dtype=np.float64)
    centre = rows[list(reference_ids)].sum(axis=0)
    return np.argsort(np.sqrt(((rows - centre) ** 2).sum(axis=1)), kind="stable").tolist()


@bug("rank_by_untrained", "rank-untrained-skip-reference", "leaves the reference rows out",
     hint="rank every row")  # fmt: skip
def _(embeddings, reference_ids):
    d = _distances(embeddings, reference_ids)
    return [int(i) for i in np.argsort(d, kind="stable") if i not in set(reference_ids)]


@bug("rank_by_untrained", "rank-untrained-array", "returns the numpy array", rule="type")
def _(embeddings, reference_ids):
    return np.argsort(_distances(embeddings, reference_ids), kind="stable")


@bug("rank_by_untrained", "rank-untrained-in-place", "centres the caller's matrix in place",
     rule="pure")  # fmt: skip
def _(embeddings, reference_ids):
    embeddings -= embeddings[list(reference_ids)].mean(axis=0)
    d = np.sqrt((embeddings.astype(np.float64) ** 2).sum(axis=1))
    return np.argsort(d, kind="stable").tolist()


# --- chapter 12: merges_to_ranks, recover_merges -------------------------------------------------


@bug("merges_to_ranks", "ranks-no-bytes", "leaves out the 256 single bytes",
     hint="the 256 single bytes are tokens too")  # fmt: skip
def _(merges):
    vocab = bpe.build_vocab(merges)
    return {vocab[idx]: idx for idx in merges.values()}


@bug("merges_to_ranks", "ranks-pair-bytes", "bytes([a, b]) for every pair",
     hint="works only for two single bytes")  # fmt: skip
def _(merges):
    ranks = {bytes([b]): b for b in range(256)}
    for (a, b), idx in merges.items():
        ranks[bytes([a, b])] = idx
    return ranks


@bug("merges_to_ranks", "ranks-swapped-halves", "joins the right half before the left",
     hint="its left half's bytes, then its right half's")  # fmt: skip
def _(merges):
    vocab = {b: bytes([b]) for b in range(256)}
    for (a, b), idx in merges.items():
        vocab[idx] = vocab[b] + vocab[a]
    return {token: idx for idx, token in vocab.items()}


@bug("merges_to_ranks", "ranks-position", "ranks by position in the table, not by id",
     hint="its position in the table")  # fmt: skip
def _(merges):
    vocab = bpe.build_vocab(merges)
    ranks = {bytes([b]): b for b in range(256)}
    for i, idx in enumerate(merges.values()):
        ranks[vocab[idx]] = 256 + i
    return ranks


@bug("merges_to_ranks", "ranks-silent-duplicate", "lets a duplicate byte string overwrite",
     hint="one merge would silently vanish")  # fmt: skip
def _(merges):
    return {token: idx for idx, token in bpe.build_vocab(merges).items()}


@bug("merges_to_ranks", "ranks-numpy-ids", "ranks are numpy integers", rule="type")
def _(merges):
    from tokcourse import export

    ranks = export.merges_to_ranks(merges)
    return dict(zip(ranks, np.array(list(ranks.values())), strict=True))


@bug("merges_to_ranks", "ranks-consumes-merges", "empties the caller's merges as it goes",
     rule="pure")  # fmt: skip
def _(merges):
    vocab = {b: bytes([b]) for b in range(256)}
    while merges:
        (a, b), idx = next(iter(merges.items()))
        del merges[(a, b)]
        made = {token: i for i, token in vocab.items()}
        if vocab[a] + vocab[b] in made:
            raise ValueError(f"ids {made[vocab[a] + vocab[b]]} and {idx} both make the same bytes")
        vocab[idx] = vocab[a] + vocab[b]
    return {token: idx for idx, token in vocab.items()}


@bug("recover_merges", "recover-merges-byte-values", "uses a byte's value as its id",
     hint="not its value")  # fmt: skip
def _(ranks):
    out = {}
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) > 1:
            a, b = pretrained.recover_merge(token, ranks)
            out[(ranks[a] if len(a) > 1 else a[0], ranks[b] if len(b) > 1 else b[0])] = rank
    return out


@bug("recover_merges", "recover-merges-first-split", "splits where both halves are tokens",
     hint="both halves being tokens is not")  # fmt: skip
def _(ranks):
    out = {}
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        for i in range(1, len(token)):
            a, b = token[:i], token[i:]
            if ranks.get(a, rank) < rank and ranks.get(b, rank) < rank:
                out[(ranks[a], ranks[b])] = rank
                break
    return out


@bug("recover_merges", "recover-merges-by-bytes", "lists the merges in byte order",
     hint="the right merges in the wrong order")  # fmt: skip
def _(ranks):
    out = {}
    for token in sorted(t for t in ranks if len(t) > 1):
        a, b = pretrained.recover_merge(token, ranks)
        out[(ranks[a], ranks[b])] = ranks[token]
    return out


@bug("recover_merges", "recover-merges-single-bytes", "asks recover_merge about single bytes",
     hint="Skip tokens of length 1")  # fmt: skip
def _(ranks):
    out = {}
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        a, b = pretrained.recover_merge(token, ranks)
        out[(ranks[a], ranks[b])] = rank
    return out


@bug("recover_merges", "recover-merges-skip-unbuildable", "skips tokens it cannot build",
     hint="let that error through")  # fmt: skip
def _(ranks):
    out = {}
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) > 1:
            try:
                a, b = pretrained.recover_merge(token, ranks)
            except ValueError:
                continue
            out[(ranks[a], ranks[b])] = rank
    return out


@bug("recover_merges", "recover-merges-table-order", "goes through the table in its own order, "
     "not by rank", hint="not listed in rank order", order=True)  # fmt: skip
def _(ranks):
    merges = {}
    for token, rank in ranks.items():  # the table's order, which need not be the ranks'
        if len(token) > 1:
            left, right = pretrained.recover_merge(token, ranks)
            merges[(ranks[left], ranks[right])] = rank
    return merges


@bug("recover_merges", "recover-merges-swapped-key", "keys (right id, left id)",
     hint="Yours has them swapped")  # fmt: skip
def _(ranks):
    return {(b, a): idx for (a, b), idx in pretrained.recover_merges(ranks).items()}


@bug("recover_merges", "recover-merges-list", "returns a list of (pair, id)", rule="type")
def _(ranks):
    return list(pretrained.recover_merges(ranks).items())


# --- chapter 11: WordPiece -----------------------------------------------------------------------


def _longest_from(word, start, vocab, prefix="##"):
    """The longest vocabulary piece starting at ``start`` (with ## after the first), or None."""
    for end in range(len(word), start, -1):
        piece = word[start:end] if start == 0 else prefix + word[start:end]
        if piece in vocab:
            return piece, end
    return None


@bug("wordpiece_word", "wordpiece-shortest-match", "takes the shortest matching piece",
     hint="*longest*")  # fmt: skip
def _(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(start + 1, len(word) + 1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
        else:
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


@bug("wordpiece_word", "wordpiece-no-prefix", "looks up later pieces without '##'",
     hint="*with* '##' in front")  # fmt: skip
def _(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        found = _longest_from(word, start, vocab, prefix="")
        if found is None:
            return ["[UNK]"]
        pieces.append(found[0] if start == 0 else "##" + found[0])
        start = found[1]
    return pieces


@bug("wordpiece_word", "wordpiece-partial-unk", "emits [UNK] for the stuck character and goes on",
     hint="the *whole word* becomes one")  # fmt: skip
def _(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        found = _longest_from(word, start, vocab)
        if found is None:
            pieces.append("[UNK]")
            start += 1
            continue
        pieces.append(found[0])
        start = found[1]
    return pieces


@bug("wordpiece_word", "wordpiece-from-right", "takes the longest match from the right end",
     hint="from the *right* end")  # fmt: skip
def _(word, vocab):
    pieces, end = [], len(word)
    while end > 0:
        for start in range(end):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
        else:
            return ["[UNK]"]
        pieces.insert(0, piece)
        end = start
    return pieces


@bug("wordpiece_word", "wordpiece-off-by-one", "never tries a one-character piece",
     hint="down to a single character")  # fmt: skip
def _(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start + 1:  # off by one: stops before the single character
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
            end -= 1
        else:
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


@bug("wordpiece_word", "wordpiece-backtracks", "backtracks to a shorter piece when stuck",
     hint="never backtracks")  # fmt: skip
def _(word, vocab):
    def search(start):
        if start == len(word):
            return []
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                rest = search(end)
                if rest is not None:
                    return [piece, *rest]
        return None

    pieces = search(0)
    return ["[UNK]"] if pieces is None else pieces


@bug("wordpiece_word", "wordpiece-slice-end", "slices one character short of the end tried",
     hint="down to a single character")  # fmt: skip
def _(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start : end - 1] if start == 0 else "##" + word[start : end - 1]
            if piece in vocab and end - 1 > start:
                pieces.append(piece)
                start = end
                break
        else:
            return ["[UNK]"]
    return pieces


@bug("strip_accents", "strip-accents-nfkd", "decomposes with NFKD", hint="NFKD")
def _(text):
    import unicodedata

    nfkd = unicodedata.normalize("NFKD", text)
    return "".join(c for c in nfkd if unicodedata.category(c) != "Mn")


@bug("strip_accents", "strip-accents-all-marks", "drops every mark, Mc and Me too",
     hint="only nonspacing marks")  # fmt: skip
def _(text):
    import unicodedata

    nfd = unicodedata.normalize("NFD", text)
    return "".join(c for c in nfd if not unicodedata.category(c).startswith("M"))


@bug("strip_accents", "strip-accents-combining-class", "drops characters with a combining class",
     hint="combining *class*")  # fmt: skip
def _(text):
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


@bug("strip_accents", "strip-accents-recompose", "composes the result again with NFC",
     hint="do not compose it again")  # fmt: skip
def _(text):
    import unicodedata

    nfd = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in nfd if unicodedata.category(c) != "Mn"))


@bug("strip_accents", "strip-accents-no-decomposition", "drops marks without decomposing first",
     hint="normalize with 'NFD' first")  # fmt: skip
def _(text):
    import unicodedata

    return "".join(c for c in text if unicodedata.category(c) != "Mn")


@bug("strip_accents", "strip-accents-ascii", "encodes to ASCII, ignoring errors",
     hint="deletes every non-Latin letter")  # fmt: skip
def _(text):
    import unicodedata

    return unicodedata.normalize("NFD", text).encode("ascii", "ignore").decode()


# --- chapter 11: unigram ------------------------------------------------------------------------


def _unigram_viterbi(text, log_probs, *, score=lambda total, lp: total + lp, better=None):
    """A forward Viterbi with a pluggable way to combine and compare totals (for the bugs)."""
    better = better or (lambda new, old: new > old)
    longest = max(map(len, log_probs), default=0)
    best, back = [0.0] + [None] * len(text), [0] * (len(text) + 1)
    for end in range(1, len(text) + 1):
        for start in range(max(0, end - longest), end):
            lp = log_probs.get(text[start:end])
            if lp is None or best[start] is None:
                continue
            total = score(best[start], lp)
            if best[end] is None or better(total, best[end]):
                best[end], back[end] = total, start
    if best[-1] is None:
        reached = max(j for j, total in enumerate(best) if total is not None)
        raise ValueError(f"cannot segment {text!r} beyond position {reached}")
    pieces, end = [], len(text)
    while end > 0:
        pieces.append(text[back[end] : end])
        end = back[end]
    return pieces[::-1]


@bug("viterbi", "viterbi-greedy", "greedy longest match instead of Viterbi",
     hint="greedy longest match")  # fmt: skip
def _(text, log_probs):
    out, i = [], 0
    while i < len(text):
        j = next((j for j in range(len(text), i, -1) if text[i:j] in log_probs), None)
        if j is None:
            raise ValueError(f"no piece at {i}")
        out.append(text[i:j])
        i = j
    return out


@bug("viterbi", "viterbi-last-only", "compares the last pieces' scores, not the totals",
     hint="plus its own log-probability")  # fmt: skip
def _(text, log_probs):
    return _unigram_viterbi(text, log_probs, score=lambda total, lp: lp)


@bug("viterbi", "viterbi-fewest", "takes the fewest pieces",
     hint="the fewest pieces")  # fmt: skip
def _(text, log_probs):
    return _unigram_viterbi(text, log_probs, score=lambda total, lp: total - 1)


@bug("viterbi", "viterbi-ties", "replaces on equal totals (>=): the shortest last piece wins ties",
     hint="use >, not >=")  # fmt: skip
def _(text, log_probs):
    return _unigram_viterbi(text, log_probs, better=lambda new, old: new >= old)


@bug("viterbi", "viterbi-reversed", "forgets to reverse the back-pointer walk",
     hint="reverse the list")  # fmt: skip
def _(text, log_probs):
    return _unigram_viterbi(text, log_probs)[::-1]


@bug("viterbi", "viterbi-unknown-as-piece", "lets an unknown character through as a piece",
     hint="no piece matches at position 2")  # fmt: skip
def _(text, log_probs):
    return _unigram_viterbi(text, {**log_probs, **{c: -100.0 for c in text}})


@bug("viterbi", "viterbi-tuple", "returns a tuple", rule="type")
def _(text, log_probs):
    return tuple(_unigram_viterbi(text, log_probs))


@bug("viterbi", "viterbi-adds-unknown", "adds a piece for each unknown character to log_probs",
     rule="pure")  # fmt: skip
def _(text, log_probs):
    pieces = _unigram_viterbi(text, log_probs)
    log_probs.setdefault("", 0.0)
    return pieces


def _unigram_em(word_counts, log_probs, *, weight=True, hard=False, uniform=False,
                normalize=True, logs=True, drop=True):  # fmt: skip
    """One EM step by enumerating segmentations, with switches for the catalogued bugs."""
    from tokcourse.unigram import segmentations, viterbi

    totals = {p: 0.0 for p in log_probs} if not drop else {}
    for word, count in word_counts.items():
        if hard:
            segs = {tuple(viterbi(word, log_probs)): 1.0}
        else:
            segs = segmentations(word, log_probs, alpha=0.0 if uniform else 1.0)
        if not segs:
            raise ValueError(f"cannot segment {word!r}")
        for seg, prob in segs.items():
            for piece in seg:
                totals[piece] = totals.get(piece, 0.0) + (count if weight else 1) * prob
    grand = sum(totals.values()) if normalize else 1.0
    out = {}
    for piece, c in totals.items():
        if c == 0:
            out[piece] = -math.inf
        else:
            out[piece] = math.log(c / grand) if logs else c / grand
    return out


@bug("em_step", "em-unweighted", "forgets to weight words by their count",
     hint="its count in word_counts")  # fmt: skip
def _(word_counts, log_probs):
    return _unigram_em(word_counts, log_probs, weight=False)


@bug("em_step", "em-hard", "counts the pieces of the best segmentation only",
     hint="hard EM")  # fmt: skip
def _(word_counts, log_probs):
    return _unigram_em(word_counts, log_probs, hard=True)


@bug("em_step", "em-uniform", "weighs every segmentation equally",
     hint="every segmentation counted equally")  # fmt: skip
def _(word_counts, log_probs):
    return _unigram_em(word_counts, log_probs, uniform=True)


@bug("em_step", "em-not-normalized", "returns the log of the raw expected counts",
     hint="do not sum to 1")  # fmt: skip
def _(word_counts, log_probs):
    return _unigram_em(word_counts, log_probs, normalize=False)


@bug("em_step", "em-probabilities", "returns probabilities, not log-probabilities",
     hint="look like probabilities")  # fmt: skip
def _(word_counts, log_probs):
    return _unigram_em(word_counts, log_probs, logs=False)


@bug("em_step", "em-keeps-unused", "keeps unused pieces with -inf",
     hint="used in no segmentation")  # fmt: skip
def _(word_counts, log_probs):
    return _unigram_em(word_counts, log_probs, drop=False)


@bug("em_step", "em-skips-unsegmentable", "skips words it cannot segment",
     hint="raise ValueError naming the word")  # fmt: skip
def _(word_counts, log_probs):
    from tokcourse.unigram import segmentations

    kept = {w: c for w, c in word_counts.items() if segmentations(w, log_probs)}
    return _unigram_em(kept, log_probs)


@bug("em_step", "em-in-place", "writes the new values into log_probs", rule="pure")
def _(word_counts, log_probs):
    new = _unigram_em(word_counts, log_probs)
    log_probs.clear()
    log_probs.update(new)
    return new


@bug("em_step", "em-pairs", "returns a list of (piece, log-prob) pairs", rule="type")
def _(word_counts, log_probs):
    return sorted(_unigram_em(word_counts, log_probs).items())


# --- chapter 12: the tokenizer class (train_on_chunks ... load_text) ----------------------------


def _class_train(chunks, vocab_size, *, weighted=True, tie=True):
    ids = {chunk: list(chunk.encode()) for chunk in chunks}
    vocab = {i: bytes([i]) for i in range(256)}
    merges = {}
    for idx in range(256, vocab_size):
        stats = {}
        for chunk, count in chunks.items():
            for pair, n in _pairs(ids[chunk]).items():
                stats[pair] = stats.get(pair, 0) + n * (count if weighted else 1)
        pair = bpe.most_frequent_pair(stats, vocab) if tie else max(stats, key=stats.get)
        ids = {chunk: bpe.merge(i, pair, idx) for chunk, i in ids.items()}
        merges[pair] = idx
        vocab[idx] = vocab[pair[0]] + vocab[pair[1]]
    return merges


@bug("train_on_chunks", "chunks-counted-once", "counts each distinct chunk once",
     hint="every chunk counted once")  # fmt: skip
def _(chunks, vocab_size):
    return _class_train(chunks, vocab_size, weighted=False)


@bug("train_on_chunks", "chunks-joined", "joins the chunks and counts pairs across them",
     hint="counted across chunks")  # fmt: skip
def _(chunks, vocab_size):
    return bpe.train("".join(Counter(chunks).elements()), vocab_size)


@bug("train_on_chunks", "chunks-ties-by-dict-order", "breaks ties by the order pairs were seen",
     hint="a tie between equally frequent pairs", order=True)  # fmt: skip
def _(chunks, vocab_size):
    return _class_train(chunks, vocab_size, tie=False)


def _class_encode(chunk, merges, byte_ids):
    ids = [byte_ids[b] for b in chunk]
    while len(ids) >= 2:
        pair = min(zip(ids, ids[1:], strict=False), key=lambda p: merges.get(p, math.inf))
        if pair not in merges:
            break
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


@bug("encode_chunk", "chunk-ignores-shuffle", "uses each byte's value as its id",
     hint="Map every byte through byte_shuffle")  # fmt: skip
def _(chunk, merges, byte_shuffle):
    return _class_encode(chunk, merges, range(256))


@bug("encode_chunk", "chunk-inverse-shuffle", "maps the bytes through the inverse shuffle")
def _(chunk, merges, byte_shuffle):
    inverse = [0] * 256
    for b, idx in enumerate(byte_shuffle):
        inverse[idx] = b
    return _class_encode(chunk, merges, inverse)


@bug("encode_chunk", "chunk-max-not-min", "applies the merge with the highest id first",
     hint="the lowest id first")  # fmt: skip
def _(chunk, merges, byte_shuffle):
    ids = [byte_shuffle[b] for b in chunk]
    while True:
        pairs = [p for p in zip(ids, ids[1:], strict=False) if p in merges]
        if not pairs:
            return ids
        pair = max(pairs, key=merges.get)
        ids = bpe.merge(ids, pair, merges[pair])


@bug("shuffled_vocab", "vocab-ignores-shuffle", "puts byte b at id b",
     hint="sit at their byte values")  # fmt: skip
def _(merges, byte_shuffle):
    vocab = {b: bytes([b]) for b in range(256)}
    for (a, b), idx in merges.items():
        vocab[idx] = vocab[a] + vocab[b]
    return vocab


@bug("shuffled_vocab", "vocab-shuffle-backwards", "gives id b the byte byte_shuffle[b]",
     hint="the other way")  # fmt: skip
def _(merges, byte_shuffle):
    vocab = {b: bytes([byte_shuffle[b]]) for b in range(256)}
    for (a, b), idx in merges.items():
        vocab[idx] = vocab[a] + vocab[b]
    return vocab


@bug("decode_with_specials", "decode-specials-per-token", "decodes each token on its own",
     hint="a character can span several tokens")  # fmt: skip
def _(ids, vocab, special_tokens):
    names = {idx: name for name, idx in special_tokens.items()}
    return "".join(names[i] if i in names else vocab[i].decode(errors="replace") for i in ids)


@bug("decode_with_specials", "decode-specials-keyerror", "looks special ids up in vocab",
     hint="special tokens are not in vocab")  # fmt: skip
def _(ids, vocab, special_tokens):
    return b"".join(vocab[i] for i in ids).decode(errors="replace")


@bug("decode_with_specials", "decode-specials-strict", "decodes with errors='strict'",
     hint="half a character")  # fmt: skip
def _(ids, vocab, special_tokens):
    names = {idx: name.encode() for name, idx in special_tokens.items()}
    return b"".join(names[i] if i in names else vocab[i] for i in ids).decode()


def _class_save(pattern, byte_shuffle, special_tokens, merges, quote=json.dumps):
    lines = ["pattern " + quote(pattern), "bytes " + " ".join(map(str, byte_shuffle))]
    lines.append(f"special {len(special_tokens)}")
    lines += [f"{quote(name)} {idx}" for name, idx in special_tokens.items()]
    lines.append(f"merges {len(merges)}")
    lines += [f"{a} {b} {idx}" for (a, b), idx in merges.items()]
    return "\n".join(lines) + "\n"


@bug("save_text", "save-raw-names", "writes the pattern and names without JSON",
     hint="does not read back")  # fmt: skip
def _(pattern, byte_shuffle, special_tokens, merges):
    return _class_save(pattern, byte_shuffle, special_tokens, merges, quote=str)


@bug("save_text", "save-sorted-merges", "writes the merges sorted by pair")
def _(pattern, byte_shuffle, special_tokens, merges):
    return _class_save(pattern, byte_shuffle, special_tokens, dict(sorted(merges.items())))


@bug("save_text", "save-no-specials", "leaves the special tokens out")
def _(pattern, byte_shuffle, special_tokens, merges):
    return _class_save(pattern, byte_shuffle, {}, merges)


def _class_load(text, *, split_name=lambda line: line.rsplit(" ", 1), order=list):
    lines = iter(text.splitlines())
    pattern = json.loads(next(lines).removeprefix("pattern "))
    byte_shuffle = tuple(map(int, next(lines).removeprefix("bytes ").split()))
    special_tokens = {}
    for _ in range(int(next(lines).removeprefix("special "))):
        name, idx = split_name(next(lines))
        special_tokens[json.loads(name)] = int(idx)
    rows = [next(lines).split() for _ in range(int(next(lines).removeprefix("merges ")))]
    merges = {(int(a), int(b)): int(idx) for a, b, idx in order(rows)}
    return pattern, byte_shuffle, special_tokens, merges


@bug("load_text", "load-name-first-space", "splits a special token's line at its first space",
     hint="split its line at the last space")  # fmt: skip
def _(text):
    return _class_load(text, split_name=lambda line: line.split(" ", 1))


@bug("load_text", "load-merges-sorted", "sorts the merges", hint="keep the merges in file order")
def _(text):
    return _class_load(text, order=sorted)


@bug("load_text", "load-identity-bytes", "ignores the byte order")
def _(text):
    pattern, _, special_tokens, merges = _class_load(text)
    return pattern, tuple(range(256)), special_tokens, merges


@bug("pieces_to_ids", "pieces-unknown-is-unk", "gives an unknown piece the id of <unk>",
     hint="one id per UTF-8 byte")  # fmt: skip
def _(pieces, piece_ids):
    return [piece_ids.get(piece, piece_ids["<unk>"]) for piece in pieces]


@bug("pieces_to_ids", "pieces-code-points", "falls back to one byte piece per character",
     hint="one id per UTF-8 byte")  # fmt: skip
def _(pieces, piece_ids):
    ids = []
    for piece in pieces:
        if piece in piece_ids:
            ids.append(piece_ids[piece])
        else:
            ids.extend(piece_ids[f"<0x{piece.encode()[0]:02X}>"] for _ in piece)
    return ids


@bug("pieces_to_ids", "pieces-lower-hex", "writes the byte pieces in lower-case hex",
     hint="upper-case hex")  # fmt: skip
def _(pieces, piece_ids):
    ids = []
    for piece in pieces:
        if piece in piece_ids:
            ids.append(piece_ids[piece])
        else:
            ids.extend(piece_ids.get(f"<0x{b:02x}>", 0) for b in piece.encode())
    return ids


# --- errors whose message names the wrong thing (the texts say what it names) -----------------


@bug("encode_with_specials", "specials-error-names-nothing",
     "refuses a disallowed special token without saying which",
     hint="ValueError naming it. On this input that is '<|a|>b'")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), **kwargs):
    try:
        return special.encode_with_specials(text, special_tokens, allowed_special, **kwargs)
    except ValueError:
        raise ValueError("disallowed special token in the text") from None


@bug("encode_with_specials", "specials-error-names-allowed",
     "names the first name of the table, not the disallowed string found",
     hint="ValueError naming it")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), **kwargs):
    try:
        return special.encode_with_specials(text, special_tokens, allowed_special, **kwargs)
    except ValueError:
        raise ValueError(f"special token {sorted(special_tokens)[-1]!r} not allowed") from None


@bug("viterbi", "viterbi-error-constant", "an error message with a made-up position",
     hint="On this input that is 2")  # fmt: skip
def _(text, log_probs):
    try:
        return unigram.viterbi(text, log_probs)
    except ValueError:
        raise ValueError("no piece matches at position 999") from None


@bug("viterbi", "viterbi-error-first-unreachable",
     "names the first position no segmentation reaches, not the furthest one reached",
     hint="On this input that is 2")  # fmt: skip
def _(text, log_probs):
    try:
        return unigram.viterbi(text, log_probs)
    except ValueError:
        reached = [True] + [False] * len(text)
        for end in range(1, len(text) + 1):
            reached[end] = any(reached[s] and text[s:end] in log_probs for s in range(end))
        raise ValueError(f"position {reached.index(False)} cannot be reached") from None


@bug("merges_to_ranks", "ranks-error-names-bytes", "names the bytes made twice, not the two ids",
     hint="On this input those are 257 and 258")  # fmt: skip
def _(merges):
    vocab = bpe.build_vocab(merges)
    seen = set()
    for token in vocab.values():
        if token in seen:
            raise ValueError(f"{token!r} is made twice")
        seen.add(token)
    return {token: idx for idx, token in vocab.items()}


@bug("merges_to_ranks", "ranks-error-names-one-id", "names only the second of the two ids",
     hint="those are 257 and 258 (the ids of the two merges), and your message "
     "does not show 257")  # fmt: skip
def _(merges):
    vocab = bpe.build_vocab(merges)
    seen = set()
    for idx, token in vocab.items():
        if token in seen:
            raise ValueError(f"merge {idx} repeats an earlier token")
        seen.add(token)
    return {token: idx for idx, token in vocab.items()}


@bug("flops_per_byte", "flops-error-names-nothing",
     "refuses an impossible size without naming it",
     hint="ValueError naming the bad value. On this input that is 0")  # fmt: skip
def _(body_params, d_model, vocab_size, bytes_per_token):
    try:
        return vocab_size_course.flops_per_byte(body_params, d_model, vocab_size, bytes_per_token)
    except ValueError:
        raise ValueError("impossible sizes") from None


@bug("is_reachable", "reachable-error-names-nothing", "refuses an id without naming it",
     hint="ValueError naming it. On this input that is -1")  # fmt: skip
def _(token_id, encoding):
    try:
        return glitch.is_reachable(token_id, encoding)
    except ValueError:
        raise ValueError("not a token of this encoding") from None


@bug("em_step", "em-error-names-nothing", "refuses a word without naming it",
     hint="On this input that is 'cd'")  # fmt: skip
def _(word_counts, log_probs):
    try:
        return unigram_train.em_step(word_counts, log_probs)
    except ValueError:
        raise ValueError("a word cannot be segmented") from None


# --- hints that must point the right way -------------------------------------------------------


@bug("utf8_decode", "utf8-decode-drops-truncated",
     "drops a character cut short by the end of the data, with no error",
     hint="Refuse it instead of dropping the unfinished character")  # fmt: skip
def _(data):
    try:
        return utf8.utf8_decode(data)
    except ValueError as err:
        if "truncated" not in str(err):
            raise
        cut = len(data)
        while cut and 0x80 <= data[cut - 1] < 0xC0:
            cut -= 1
        return utf8.utf8_decode(data[: max(cut - 1, 0)])


@bug("decode_stream", "decode-stream-last-byte-only", "holds back a lead byte only when it is "
     "the very last byte, not a lead followed by too few continuation bytes",
     hint="became '\ufffd': hold back the bytes of an unfinished character")  # fmt: skip
def _(ids, vocab):
    def cut_at(data):
        return len(data) - 1 if data and utf8.byte_kind(data[-1]) == "lead" else len(data)

    return _decode_stream_holding(ids, vocab, cut_at)


@bug("decode_stream", "decode-stream-every-lead-needs-three", "counts 3 bytes for every lead "
     "byte: a 4-byte character comes out broken", hint="11110xxx four")  # fmt: skip
def _(ids, vocab):
    def cut_at(data):
        for back in range(1, min(3, len(data)) + 1):
            kind = utf8.byte_kind(data[-back])
            if kind == "lead":
                return len(data) - back if back < 3 else len(data)
            if kind != "continuation":
                break
        return len(data)

    return _decode_stream_holding(ids, vocab, cut_at)


@bug("decode_stream", "decode-stream-until-no-replacement", "holds back while the decoded text "
     "ends with '\ufffd' (Hugging Face's DecodeStream): a U+FFFD in the text comes out late",
     hint="as Hugging Face's DecodeStream does")  # fmt: skip
def _(ids, vocab):
    held = b""
    for idx in ids:
        held += vocab[idx]
        text = stream.utf8_text(held)
        if text and not text.endswith("\ufffd"):
            yield text
            held = b""
    yield stream.utf8_text(held)


@bug("count_spellings", "spellings-product-of-encode", "multiplies the spellings of each token "
     "of encode(text): misses the spellings whose tokens cross encode's token boundaries",
     hint="cross the boundaries between encode's tokens")  # fmt: skip
def _(text, merges):
    vocab, tokens = bpe.build_vocab(merges), _spelling_tokens(merges)
    product = 1
    for idx in bpe.encode(text, merges):
        product *= _ways(vocab[idx], tokens)  # the spellings of this token's bytes
    return product


@bug("decode_stream", "decode-stream-holds-non-ascii", "holds back every non-ASCII byte at the "
     "end (up to three), complete characters too", hint="later than it was complete")  # fmt: skip
def _(ids, vocab):
    def cut_at(data):
        cut = len(data)
        while cut and data[cut - 1] >= 0x80 and len(data) - cut < 3:
            cut -= 1
        return cut

    return _decode_stream_holding(ids, vocab, cut_at)


def _encode_choosing(text, merges, choose):
    ids = list(text.encode())
    while len(ids) >= 2:
        candidates = [p for p in bpe.get_stats(ids) if p in merges]
        if not candidates:
            break
        pair = choose(candidates, ids)
        ids = bpe.merge(ids, pair, merges[pair])
    return ids


def _smallest(candidates, ids):
    return min(candidates)


def _most_frequent(candidates, ids):
    stats = bpe.get_stats(ids)
    return max(candidates, key=stats.__getitem__)


def _leftmost(candidates, ids):
    return candidates[0]


@bug("encode", "encode-smallest-pair", "merges the smallest mergeable pair (by its ids) first",
     hint="merges the smallest pair (comparing the ids themselves).")  # fmt: skip
def _(text, merges):
    return _encode_choosing(text, merges, _smallest)


@bug("encode", "encode-most-frequent", "merges the most frequent mergeable pair first",
     hint="merges the most frequent pair.")  # fmt: skip
def _(text, merges):
    return _encode_choosing(text, merges, _most_frequent)


@bug("encode", "encode-leftmost-mergeable", "merges the leftmost pair that has a merge",
     hint="the leftmost pair that has a merge")  # fmt: skip
def _(text, merges):
    return _encode_choosing(text, merges, _leftmost)


@bug("merges_to_ranks", "ranks-id-plus-one", "ranks each merged token one past its id",
     hint="first difference at key b'aa': expected 256, got 257")  # fmt: skip
def _(merges):
    return {token: idx if idx < 256 else idx + 1 for idx, token in bpe.build_vocab(merges).items()}


# --- answers that depend on an order: the same verdict under any hash seed ---------------------


@bug("encode_with_specials", "specials-earliest-over-set", "the earliest match of a loop over "
     "the set of allowed names: where names overlap, the set's order picks", order=True,
     hint="take the longest")  # fmt: skip
def _(text, special_tokens, allowed_special=frozenset(), encode_ordinary=_utf8,
      disallowed_special="all"):  # fmt: skip
    allowed, disallowed = _resolve(special_tokens, allowed_special, disallowed_special)
    allowed &= special_tokens.keys()
    for name in disallowed:
        if name in text:
            raise ValueError(f"disallowed special token {name!r}")
    ids = []
    while text:
        best = None
        for name in allowed:
            i = text.find(name)
            if i >= 0 and (best is None or i < best[0]):
                best = (i, name)
        if best is None:
            return ids + encode_ordinary(text)
        i, name = best
        ids += encode_ordinary(text[:i]) if i else []
        ids.append(special_tokens[name])
        text = text[i + len(name) :]
    return ids


@bug("wordpiece_word", "wordpiece-first-in-vocab", "takes the first entry of the vocabulary "
     "that matches, not the longest", order=True)  # fmt: skip
def _(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        prefix = "##" if start else ""
        found = next((p for p in vocab if p.startswith(prefix) and p != prefix
                      and word.startswith(p[len(prefix):], start)), None)  # fmt: skip
        if found is None:
            return ["[UNK]"]
        pieces.append(found)
        start += len(found) - len(prefix)
    return pieces


@bug("wordpiece_word", "wordpiece-first-in-set", "takes the first entry of set(vocab) that "
     "matches: the hash seed picks", order=True)  # fmt: skip
def _(word, vocab):
    entries, pieces, start = set(vocab), [], 0
    while start < len(word):
        prefix = "##" if start else ""
        found = next((p for p in entries if p.startswith(prefix) and p != prefix
                      and word.startswith(p[len(prefix):], start)), None)  # fmt: skip
        if found is None:
            return ["[UNK]"]
        pieces.append(found)
        start += len(found) - len(prefix)
    return pieces
