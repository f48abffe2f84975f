"""SentencePiece's BPE merge loop, as ``bpe_model_trainer.cc`` runs it (ch07).

Every sentence (or word) is a row of symbols, one per character at first. A *pair symbol*
stands for two neighbouring symbols; it knows its frequency (the summed weight of the places
it occurs, overlapping places included: ``aaa`` holds ``aa`` twice) and those places. Each
step takes the best pair and merges it wherever both halves are still in place, left to
right, then updates only the pairs around each merged place: the pairs it broke lose that
weight, the pairs it made gain it (``AcceptSymbol``). This is chapter 13's incremental
trainer, with sentencepiece's rules:

- **best pair**: highest frequency, then the *shorter* piece (in characters), then the
  smaller piece in code point order (``QueueEntryComparator``, bpe_model_trainer.h);
- a pair is a candidate only if its piece is valid (``is_valid``) and holds no ``▅``;
- a piece already learned through another pair (``aa``+``a`` and ``a``+``aa`` both spell
  ``aaa``) is dropped when its second pair comes up, without taking a slot;
- a learned pair is forgotten: if its halves meet again later, it is a new candidate that
  will be dropped as a repeat;
- frequencies go down but never get the pair off the heap: once nothing occurs any more, the
  loop goes on merging pairs of frequency 0, shortest first, until the slots are full.

The heap holds stale entries, skipped when popped ("lazy invalidation", as in
``tokcourse.fast_train``). When two different pairs spell the same piece with the same
frequency, sentencepiece's choice depends on its heap's layout; we take the older pair.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Mapping, Sequence

__all__ = ["best_pair", "learn_merges", "unicode_script"]

_COMMON, _INHERITED, _HAN = "Common", "Inherited", "Han"


@functools.cache
def _script_pattern():  # type: ignore[no-untyped-def]
    import regex
    from regex import _regex_core  # the script names the installed `regex` knows

    names: dict[int, str] = {}
    for name, value in _regex_core.PROPERTIES["SCRIPT"][1].items():
        names.setdefault(value, name)
    groups = "|".join(rf"(?P<{n}>\p{{Script={n}}})" for n in names.values() if n != "UNKNOWN")
    return regex.compile(groups)


@functools.cache
def _script(char: str) -> str:
    match = _script_pattern().match(char)
    name = match.lastgroup if match else "COMMON"  # unassigned: Common in sentencepiece
    if name in ("HIRAGANA", "KATAKANA") or char == "\u30fc":
        return _HAN  # sentencepiece merges Hiragana and Katakana (and ー) into Han
    return {"COMMON": _COMMON, "INHERITED": _INHERITED}.get(name, name.title())


def unicode_script(char: str, previous: object) -> object:
    """The script sentencepiece gives ``char``; a combining mark takes ``previous``'s.

    >>> unicode_script("a", None), unicode_script("ア", None), unicode_script("\u0301", "x")
    ('Latin', 'Han', 'x')
    """
    script = _script(char)
    return previous if script == _INHERITED else script


def best_pair(freqs: Mapping[tuple[str, str], int]) -> tuple[str, str]:
    """The pair sentencepiece merges next: the highest frequency, then the
    shorter piece in characters, then the smaller piece (``left + right``)
    in code point order.

    This is the order of the heap in :func:`learn_merges`
    (``QueueEntryComparator``).

    >>> best_pair({("t", "h"): 5, ("▁", "t"): 5, ("h", "e"): 4})
    ('t', 'h')
    """
    return min(
        freqs,
        key=lambda pair: (
            -freqs[pair],
            len(pair[0] + pair[1]),
            pair[0] + pair[1],
        ),
    )


def learn_merges(
    sentences: Sequence[tuple[str, int]],
    max_merges: int,
    is_valid: Callable[[str], bool],
    unk_char: str,
) -> list[tuple[str, int]]:
    """Up to ``max_merges`` pieces in the order they are learned, with their frequencies.

    ``sentences`` are ``(text, weight)`` pairs; ``is_valid(piece)`` says whether a merge may
    make ``piece``; ``unk_char`` marks characters that no pair may contain.

    >>> learn_merges([("abab", 1), ("ab", 2)], 3, lambda p: True, "?")
    [('ab', 4), ('abab', 1), ('ba', 0)]
    """
    piece: list[str] = []  # per symbol: its text, length in characters, halves, frequency...
    length: list[int] = []
    halves: list[tuple[int, int]] = []
    freq: list[int] = []
    active: list[bool] = []
    stale: list[bool] = []  # sentencepiece's needs_recomputation
    places: list[list[tuple[int, int, int]]] = []
    chars: dict[str, int] = {}
    pairs: dict[tuple[int, int], int] = {}  # the live pair symbols (symbols_cache_)
    invalid: set[tuple[int, int]] = set()
    unk: set[int] = set()

    def new_symbol(text: str, size: int, left: int = -1, right: int = -1) -> int:
        piece.append(text)
        length.append(size)
        halves.append((left, right))
        freq.append(0)
        active.append(True)
        stale.append(True)
        places.append([])
        return len(piece) - 1

    def char_symbol(char: str) -> int:
        if char not in chars:
            chars[char] = new_symbol(char, 1)
            if char == unk_char:
                unk.add(chars[char])
        return chars[char]

    def pair_symbol(left: int, right: int) -> int | None:
        key = (left, right)
        if key in pairs:
            return pairs[key]
        if left in unk or right in unk or key in invalid:
            return None
        text = piece[left] + piece[right]
        if not is_valid(text):
            invalid.add(key)
            return None
        pairs[key] = new_symbol(text, length[left] + length[right], left, right)
        return pairs[key]

    rows = [[char_symbol(c) for c in text] for text, _ in sentences]
    weights = [w for _, w in sentences]
    pending: list[int] = []
    queued: set[int] = set()

    def add_pair(sid: int, left: int, right: int) -> None:  # AddNewPair
        s = pair_symbol(rows[sid][left], rows[sid][right])
        if s is not None:
            places[s].append((sid, left, right))
            freq[s] += weights[sid]
            if s not in queued:
                queued.add(s)
                pending.append(s)

    def lose_pair(sid: int, left: int, right: int, best: int) -> None:  # ResetFreq
        s = pair_symbol(rows[sid][left], rows[sid][right])
        if s is not None and s != best:
            freq[s] -= weights[sid]
            stale[s] = True

    def refresh(s: int) -> None:  # ComputeFreq: forget the places of a pair gone to 0
        if stale[s]:
            if freq[s] == 0:
                places[s] = []
            stale[s] = False

    def retire(s: int) -> None:
        pairs.pop(halves[s], None)
        active[s] = False
        places[s] = []

    for sid, row in enumerate(rows):
        for i in range(1, len(row)):
            add_pair(sid, i - 1, i)
    heap: list[tuple[int, int, str, int]] = []

    def push_pending() -> None:
        for s in pending:
            queued.discard(s)
            if active[s]:
                refresh(s)
                heapq.heappush(heap, (-freq[s], length[s], piece[s], s))
        pending.clear()

    push_pending()
    merges: list[tuple[str, int]] = []
    learned: set[str] = set()
    while len(merges) < max_merges:
        best = None
        while heap:
            neg, _, _, s = heap[0]
            if not active[s]:
                heapq.heappop(heap)
            elif stale[s]:
                heapq.heappop(heap)
                refresh(s)
                heapq.heappush(heap, (-freq[s], length[s], piece[s], s))
            elif -neg != freq[s]:
                heapq.heappop(heap)
            else:
                best = heapq.heappop(heap)[3]
                break
        if best is None:
            break  # no pair left at all
        if piece[best] in learned:
            retire(best)
            continue
        learned.add(piece[best])
        merges.append((piece[best], freq[best]))
        left_half, right_half = halves[best]
        for sid, left, right in places[best]:
            row = rows[sid]
            if row[left] != left_half or row[right] != right_half:
                continue  # this place was changed by an earlier merge
            after = right + 1
            while after < len(row) and row[after] < 0:
                after += 1
            before = left - 1
            while before >= 0 and row[before] < 0:
                before -= 1
            if before >= 0:
                lose_pair(sid, before, left, best)
            if after < len(row):
                lose_pair(sid, right, after, best)
            row[left], row[right] = best, -1
            if before >= 0:
                add_pair(sid, before, left)
            if after < len(row):
                add_pair(sid, left, after)
        retire(best)
        push_pending()
    return merges
