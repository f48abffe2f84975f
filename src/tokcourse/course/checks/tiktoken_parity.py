"""tiktoken and GPT-4 (chapter 05): byte_rank, recover_merge, encode_with_ranks.

The cases and hints of encoding with merges chunk by chunk are here too: chapter 13's
``encode_ordinary_cached`` uses them.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from tokcourse import bpe, patterns, pretrained, tokenizer
from tokcourse.course.answers import Returns, _a, re_module_hint
from tokcourse.course.checks._rank_tables import _Ranks, _real_ranks, _small_ranks
from tokcourse.course.data import gpt2_files
from tokcourse.course.exercises import INT, Case, Entry, Exercise, list_of

# --- encode_ordinary (regex split, then BPE per chunk) -----------------------------------------


@cache
def _cross_chunk_merges() -> dict[tuple[int, int], int]:
    # Trained WITHOUT a split, so it holds merges across word boundaries, such as "e " or ". ".
    return bpe.train("the cat. the dog! the end. the cat sat. the dog ate. " * 3, 280)


# " t", " th", " the", "g.", "e ": the last two cross GPT-4's chunk boundaries
_ACROSS = {(32, 116): 256, (256, 104): 257, (257, 101): 258, (103, 46): 259, (101, 32): 260}


@cache
def _pattern_merges() -> dict[tuple[int, int], int]:
    """Merges where GPT-2's and GPT-4's splits part ways: digit runs, upper-case contractions,
    spaces before a newline. Trained without a split, so they cross every boundary."""
    text = "DON'T 12345 WON'T 2024 I'M 1234567 YOU'RE  \n  x 99999 SHE'LL  \r\n"
    return bpe.train(text * 4, 300)


# "ab" (256) and "bc" (257) both apply to "abc": the lowest id, learned first, wins (ab + c)
_TWO_AT_ONCE = {(97, 98): 256, (98, 99): 257, (99, 100): 258, (257, 100): 259}


def _encode_ordinary_cases() -> Iterator[Case]:
    for text in ("the dog.", "a the", "dog. the end"):
        yield Case((text, _ACROSS))
    for text in ("abc", "bcd", " abcd", "abc bcd", "cab abc"):
        yield Case((text, _TWO_AT_ONCE))
    merges = _cross_chunk_merges()
    for text in ("", "the", "the end", "dog. dog!", "the cat sat. the dog ate."):
        yield Case((text, merges))
    for text in ("12345", "DON'T", "I'M 2024", "x  \n  x", "1234567 YOU'RE"):
        yield Case((text, _pattern_merges()))
    rng = random.Random(8)
    words = ["the", " the", " cat", " dog", ".", "!", " ", "end", " sat", "\n", "12", "'s"]
    words += [" DON'T", "'T", "12345", " 2024", "  \n", "I'M"]
    for i in range(60):
        chosen = merges if i % 2 else _pattern_merges()
        yield Case(("".join(rng.choice(words) for _ in range(rng.randrange(1, 10))), chosen))
    for _ in range(10):
        text = "".join(rng.choice(["a", "b", "c", "d", " "]) for _ in range(rng.randrange(2, 9)))
        yield Case((text, _TWO_AT_ONCE))


def _encode_highest_first(text: str, merges: dict[tuple[int, int], int]) -> list[int]:
    """GPT-4's chunks, each encoded by applying the merge with the HIGHEST id first (wrong)."""
    ids: list[int] = []
    for chunk in patterns.split(text):
        part = list(chunk.encode())
        while True:
            found = [p for p in zip(part, part[1:], strict=False) if p in merges]
            if not found:
                break
            pair = max(found, key=merges.__getitem__)
            part = bpe.merge(part, pair, merges[pair])
        ids += part
    return ids


def _encode_ordinary_hint_chunks(case: Case, expected: Any, got: Any) -> str | None:
    text, merges = case.args
    if got == _encode_highest_first(text, merges):
        return (
            "where two merges apply at once you chose the one with the highest id. Merges "
            "must be replayed in the order they were learned: apply the pair with the LOWEST "
            "merge id first (min, not max)."
        )
    if got == tokenizer.encode_ordinary(text, merges, patterns.GPT2_SPLIT_PATTERN):
        return (
            "those are the chunks of GPT-2's pattern. Split with GPT-4's "
            "(tokcourse.patterns.GPT4_SPLIT_PATTERN): numbers in groups of up to three "
            "digits, contractions in any case, whitespace before a newline kept with it."
        )
    if got == bpe.encode(text, merges):
        return (
            "merges were applied across chunk boundaries. Split the text with the pattern "
            "first, encode each chunk on its own, and concatenate the ids."
        )
    if got == [i for word in text.split(" ") for i in bpe.encode(word, merges) + [32]][:-1]:
        return (
            "splitting at spaces loses what the pattern keeps: GPT-4's chunks carry the "
            "space in front of a word (' the'), so merges such as ' t' can apply. Split with "
            "tokcourse.patterns.split(text)."
        )
    return None


# --- byte_rank ---------------------------------------------------------------------------------


def _byte_rank_cases() -> Iterator[Case]:
    for b in [ord("!"), 0, ord(" "), ord("a"), 0xAD, 0xFF, *range(256)]:
        yield Case((b,))


def _byte_rank_hint(case: Case, expected: Any, got: Any) -> str | None:
    (b,) = case.args
    if not isinstance(got, int) or not isinstance(expected, int):
        return None
    if got == b:
        return (
            "a byte's id is not its value, and the visible bytes come first: '!' is 0, "
            "byte 0 is 188. Build GPT-2's order (bytes_to_unicode's) and find b's place in it."
        )
    if expected >= 188 and got == expected + 1:
        return (
            "byte 0xAD is the soft hyphen, an invisible character: GPT-2's visible ranges are "
            "'!'..'~', '¡'..'¬' and '®'..'ÿ' (0xAD is the gap between the last two)."
        )
    if expected >= 188:
        return (
            f"byte {b} is not visible, so it comes after all 188 visible bytes ('!'..'~', "
            "'¡'..'¬', '®'..'ÿ'): the moved bytes take the ids 188..255, in byte order."
        )
    return (
        f"byte {b} ({chr(b)!r}) is visible, so its id is its place among the visible bytes "
        "'!'..'~', '¡'..'¬', '®'..'ÿ', counted from '!' = 0."
    )


# --- recover_merge -----------------------------------------------------------------------------


def _bytes_pair_problem(value: Any) -> str | None:
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(x, bytes) for x in value):
        return None
    return _a(value)


BYTES_PAIR = Returns(
    "a pair of bytes objects (left, right)",
    _bytes_pair_problem,
    "Return the two parts as a tuple: (parts[0], parts[1]).",
)

# "abc": BPE meets "bc" (rank 3) before "ab" (rank 4), so abc = a + bc, although ab + c are
# both tokens too. "abcd": ab (3) first, then cd (4): abcd = ab + cd, not abc + d.
_TINY = {b"a": 0, b"b": 1, b"c": 2, b"d": 3}
_TINY_BC = _TINY | {b"bc": 4, b"ab": 5, b"abc": 6}
_TINY_AB_CD = _TINY | {b"ab": 4, b"cd": 5, b"abc": 6, b"abcd": 7}


# a run of one byte: the pair b"00" occurs twice in b"000", a tie BPE breaks to the left
_LEFTMOST = "the leftmost"
_TINY_RUN = _TINY | {b"0": 4, b"00": 5, b"000": 6, b"0000": 7}
_RUNS = (b"000", b"...", b"   ", b"----", b"\n\n\n", b"=====")


def _recover_merge_cases() -> Iterator[Case]:
    yield Case((b"ab", _TINY_BC))
    yield Case((b"abc", _TINY_BC))
    yield Case((b"abcd", _TINY_AB_CD))
    yield Case((b"abc", _TINY_AB_CD))
    yield Case((b"000", _TINY_RUN), rule=_LEFTMOST)
    yield Case((b"0000", _TINY_RUN), rule=_LEFTMOST)
    for name in ("r50k_base", "cl100k_base"):
        ranks = _real_ranks(name)
        yield from (Case((run, ranks)) for run in _RUNS if run in ranks)
    rng = random.Random(11)
    for name in ("r50k_base", "cl100k_base"):
        ranks = _real_ranks(name)
        by_rank = {rank: token for token, rank in ranks.items()}
        ids = [256, 257, 258, 300, 1000] + rng.sample(range(256, len(by_rank)), 40)
        longest = max(ranks, key=len)
        for token in [by_rank[i] for i in ids if i in by_rank] + [longest]:
            yield Case((token, ranks))


def _replay_rightmost(token: bytes, ranks: Mapping[bytes, int]) -> tuple[bytes, ...]:
    """BPE on the token's bytes below its rank, a tie going to the RIGHTMOST pair (wrong)."""
    limit = ranks[token]
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        pairs = enumerate(zip(parts, parts[1:], strict=False))
        found = [(ranks.get(a + b, limit), -i) for i, (a, b) in pairs]
        rank, i = min(found)
        if rank >= limit:
            break
        parts[-i : -i + 2] = [parts[-i] + parts[-i + 1]]
    return tuple(parts)


def _recover_merge_hint(case: Case, expected: Any, got: Any) -> str | None:
    token, ranks = case.args
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(expected, tuple)):
        return None
    left, right = got
    if token in (left, right):
        return (
            "one of your parts is the token itself: BPE with every token of the table goes all "
            "the way to the token. Use only the tokens ranked below ranks[token]."
        )
    if isinstance(left, bytes) and isinstance(right, bytes) and left + right != token:
        return f"the two parts must spell the token: {left!r} + {right!r} is not {token!r}."
    if left in ranks and right in ranks:
        too_late = max(ranks[left], ranks[right]) >= ranks[token]
        first_split = next(
            (token[:i], token[i:])
            for i in range(1, len(token))
            if token[:i] in ranks and token[i:] in ranks
        )
        tie = not too_late and got == _replay_rightmost(token, ranks)
        if tie and got == first_split:  # this input cannot tell the two mistakes apart
            return (
                "both of your halves are tokens, but BPE reached this token by one path only. "
                "Replay BPE on the token's bytes with the tokens ranked below it: always the "
                "lowest-ranked pair first, and on a tie (the same pair twice, as in b'000') "
                "the LEFTMOST one first. Stop when two parts are left."
            )
        if tie:
            return (
                f"{token!r} holds the same lowest-ranked pair more than once: on such a tie "
                "BPE merges the LEFTMOST one first (min over (rank, position)), so a run "
                "such as b'000' is b'00' + b'0'."
            )
        if too_late:
            return (
                "one of your parts is ranked after the token itself, so it did not exist yet "
                "when the token was made: use only tokens ranked below the token."
            )
        return (
            "both of your halves are tokens, but BPE reached this token by one path only. "
            "Replay BPE on the token's bytes with the tokens ranked below it (always the "
            "lowest-ranked pair first) and stop when two parts are left."
        )
    return None


# --- encode_with_ranks -------------------------------------------------------------------------


def _corpus_pieces() -> list[str]:
    """Real text in pieces a naive encoder handles in milliseconds: prose, code, many scripts."""
    from tokcourse.course.data import corpora

    novel = corpora.botchan_text()
    start = novel.index("CHAPTER I")
    pieces = [novel[start + i * 5000 : start + i * 5000 + 700] for i in range(4)]
    code = corpora.python_code(max_bytes=4000)
    pieces += [code[:700], code[2000:2700]]
    parallel = corpora.parallel_text()
    for lang in ("ru", "el", "hi", "ja", "zh_CN", "ko"):
        pieces.append("\n".join(parallel[lang][:6]))
    return pieces


_HARD = [
    "DON'T stop, I'M here; YOU'RE it. She'll, they've, we'D",
    "'Sup.  here",  # an upper-case contraction cut from the letters after it
    "1 12 123 1234 12345 1234567 3.14159 2024-05-13",
    "line one\r\nline two  \n\n   indented\tand\ttabbed   ",
    "x    =   1\n\n\n    return  x  ",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 e\u0301 \u00e9 \U0001f44d\U0001f3fd",
    "...!!! ??? --- (hello) [world] {x: 1}",
]


#: Bytes and one merged token, b"aa": in the chunk "aaa" the pair occurs twice, at 0 and 1.
_RUN_RANKS = _Ranks("bytes and aa", {bytes([b]): b for b in range(256)} | {b"aa": 256})


def _encode_with_ranks_cases() -> Iterator[Case]:
    for text in ("aaa", "aaaaa"):  # a tie: the leftmost pair merges first, [aa, a]
        yield Case((text, _RUN_RANKS), rule=_LEFTMOST)
    small = _small_ranks(_cross_chunk_merges())
    for text in ("", "the", "the end", "dog. dog!", "the cat sat. the dog ate."):
        yield Case((text, small))
    pattern_ranks = _small_ranks(_pattern_merges())
    for text in ("12345", "DON'T", "I'M 2024", "x  \n  x", "1234567 YOU'RE"):
        yield Case((text, pattern_ranks))
    cl100k = _real_ranks("cl100k_base")
    for text in ["hello world", "!", " \xff\u00e9", *_HARD, *_corpus_pieces()]:
        yield Case((text, cl100k))


def _bpe_by(text: str, ranks: Mapping[bytes, int], choose: Any) -> list[int]:
    """BPE on each GPT-4 chunk that merges the pair ``choose`` picks (``max``: a wrong order)."""
    ids = []
    for chunk in patterns.split(text):
        parts = [bytes([b]) for b in chunk.encode()]
        while True:
            found = [
                (ranks[parts[i] + parts[i + 1]], i)
                for i in range(len(parts) - 1)
                if parts[i] + parts[i + 1] in ranks
            ]
            if not found:
                break
            _, i = choose(found)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        ids += [ranks[p] for p in parts]
    return ids


def _longest_match(text: str, ranks: Mapping[bytes, int]) -> list[int]:
    """Greedy longest-prefix tokenization of each GPT-4 chunk (not BPE)."""
    ids = []
    for chunk in patterns.split(text):
        data = chunk.encode()
        while data:
            n = max(i for i in range(1, min(len(data), 128) + 1) if data[:i] in ranks)
            ids.append(ranks[data[:n]])
            data = data[n:]
    return ids


def _stale_chunks(text: str, ranks: Mapping[bytes, int], got: list) -> bool:
    """Whether ``got`` is each chunk encoded with this table or another table of the check,
    another one at least once: what a chunk cache kept across calls gives."""
    tables = [_small_ranks(_cross_chunk_merges()), _small_ranks(_pattern_merges())]
    tables += [_real_ranks("cl100k_base")]
    others = [t for t in tables if t is not ranks and t != ranks]
    pos, stale = 0, False
    for chunk in patterns.split(text):
        data = chunk.encode()
        for i, table in enumerate([ranks, *others]):
            ids = [table[p] for p in pretrained.bpe_parts(data, table)]
            if got[pos : pos + len(ids)] == ids:
                pos, stale = pos + len(ids), stale or i > 0
                break
        else:
            return False
    return stale and pos == len(got)


_STALE = (
    "these ids come from another rank table for some chunks: a cache kept between calls "
    "(a dict at module level, or a default argument) still holds a chunk's ids from an "
    "earlier call with another table. Key the cache by the table too, or make it inside "
    "the function."
)


def _raw_byte_ids(text: str, ranks: Mapping[bytes, int]) -> list[int]:
    """BPE with ranks, but an unmerged byte keeps its value as its id (wrong)."""
    return [
        ranks[p] if len(p) > 1 else p[0]
        for c in patterns.split(text)
        for p in pretrained.bpe_parts(c.encode(), ranks)
    ]


def _encode_with_ranks_hint(case: Case, expected: Any, got: Any) -> str | None:
    text, ranks = case.args
    if not isinstance(got, list):
        return None
    stale = _stale_chunks(text, ranks, got)
    if stale and got != _raw_byte_ids(text, ranks):
        return _STALE[0].upper() + _STALE[1:]

    def ids(chunks: list[str]) -> list[int]:
        return [ranks[p] for c in chunks for p in pretrained.bpe_parts(c.encode(), ranks)]

    if got == ids(patterns.split(text, patterns.GPT2_SPLIT_PATTERN)):
        return (
            "those are the chunks of GPT-2's pattern. Split with GPT-4's "
            "(tokcourse.patterns.split(text) uses it by default): numbers in groups of up to "
            "three digits, contractions in any case, whitespace before a newline kept with it."
        )
    if got == ids(text.split()):
        return (
            "str.split() drops the white space, and a tokenizer keeps every character: split "
            "with GPT-4's pattern (tokcourse.patterns.split(text)), which keeps each space "
            "with the chunk after it."
        )
    if got == ids([text] if text else []):
        return (
            "merges were applied across chunk boundaries. Split the text with the pattern "
            "first, run BPE on each chunk on its own, and concatenate the ids."
        )
    right = got == _bpe_by(text, ranks, lambda found: min(found, key=lambda f: (f[0], -f[1])))
    if right and got == _bpe_by(text, ranks, max):
        return (
            "you merged the highest-ranked pair first, or the right-hand one of two equal "
            "pairs (this input cannot tell these apart). BPE merges the pair with the LOWEST "
            "rank first, and of two equal pairs (b'aa' twice in 'aaa') the leftmost."
        )
    if right:
        return (
            "where the lowest-ranked pair occurs twice in a chunk (as b'aa' in 'aaa'), you "
            "merged the right-hand one. BPE merges the leftmost of equal pairs first: "
            "min over (rank, position)."
        )
    if got == _bpe_by(text, ranks, max):
        return (
            "you merged the highest-ranked pair first. Ranks are the order of training: "
            "always merge the neighbouring pair whose concatenation has the LOWEST rank."
        )
    if got == _longest_match(text, ranks):
        return (
            "taking the longest token from the left is not BPE: it can cut a chunk where "
            "training never did. Merge neighbouring pairs, lowest rank first."
        )
    if got == _raw_byte_ids(text, ranks):
        hint = (
            "a byte left unmerged is a token too, with its own rank: in GPT's tables b'!' is "
            "0 and b'a' is 64, not 33 and 97. Look every part up in ranks, single bytes too."
        )
        if stale:  # this input cannot tell the two apart
            hint += " If yours looks the bytes up already, then " + _STALE[0].lower() + _STALE[1:]
        return hint
    return None


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "byte_rank": Entry(
        "byte_rank(b) -> id",
        lambda: Exercise(
            "byte_rank",
            gpt2_files.byte_rank,
            _byte_rank_cases,
            returns=INT,
            hints=(_byte_rank_hint,),
        ),
    ),
    "recover_merge": Entry(
        "recover_merge(token, ranks) -> (left, right)",
        lambda: Exercise(
            "recover_merge",
            pretrained.recover_merge,
            _recover_merge_cases,
            normalize=tuple,
            returns=BYTES_PAIR,
            hints=(_recover_merge_hint,),
        ),
    ),
    "encode_with_ranks": Entry(
        "encode_with_ranks(text, ranks) -> ids",
        lambda: Exercise(
            "encode_with_ranks",
            pretrained.encode_with_ranks,
            _encode_with_ranks_cases,
            normalize=list,
            returns=list_of(INT),
            hints=(re_module_hint, _encode_with_ranks_hint),
        ),
    ),
}
