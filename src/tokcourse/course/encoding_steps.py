"""Chapter 03's ``encode``, ``decode_stream`` and ``count_spellings``, as short as the exercises
ask.

These are the solutions chapter 03 shows. The checks compare a student's functions with the
package's own, :func:`tokcourse.bpe.encode`, :func:`tokcourse.stream.decode_stream` and
:func:`tokcourse.bpe.count_spellings`, which give the same answers and add what later chapters
need (GPT-2's numbering of the byte tokens, type hints). They are written without type hints on
purpose: they read like the code of the chapter.
"""

from tokcourse.bpe import build_vocab, get_stats, merge, utf8_text
from tokcourse.utf8 import byte_kind


def encode(text, merges):
    """The ids of text, cut by merges as training would have cut it.

    >>> encode("aaab", {(97, 97): 256, (256, 97): 257})
    [257, 98]
    """
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:  # after a merge, one token may be all that is left
        stats = get_stats(ids)
        # the earliest-learned merge; pairs without one rank after every merge
        pair = min(stats, key=lambda p: merges.get(p, float("inf")))
        if pair not in merges:
            break  # no pair left that was ever merged
        ids = merge(ids, pair, merges[pair])
    return ids


def decode_stream(ids, vocab):
    """Yield the text of ids as soon as it is complete; hold back an
    unfinished character.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> list(decode_stream(iter([104, 226, 130, 172]), vocab))
    ['h', '€']
    """
    held = b""  # the start of a character whose other bytes are still to come
    for idx in ids:
        data = held + vocab[idx]
        cut = unfinished(data)  # everything before it is complete text
        held = data[cut:]
        if cut:
            yield utf8_text(data[:cut])
    if held:  # the ids ran out inside a character
        yield utf8_text(held)


def unfinished(data):
    """Where the unfinished character at the end of data starts (len(data)
    when there is none).

    >>> unfinished(b"a\\xe2\\x82"), unfinished("a€".encode())
    (1, 4)
    """
    for back in range(1, min(3, len(data)) + 1):  # the last three bytes
        b = data[-back]
        if byte_kind(b) == "lead":
            needs = 2 if b < 0xE0 else 3 if b < 0xF0 else 4  # bytes in all
            return len(data) - back if back < needs else len(data)
        if byte_kind(b) != "continuation":
            break  # ASCII or a byte that never begins a character
    return len(data)


def count_spellings(text, merges):
    """How many sequences of ids of the vocabulary of merges spell text.

    >>> count_spellings("aaa", {(97, 97): 256})  # a a a, aa a, a aa
    3
    """
    data = text.encode("utf-8")
    tokens = set(build_vocab(merges).values())
    longest = max(map(len, tokens))
    ways = [1] + [0] * len(data)  # ways[i]: the spellings of the first i bytes
    for i in range(1, len(data) + 1):
        for j in range(max(0, i - longest), i):
            if data[j:i] in tokens:  # a token ends at byte i
                ways[i] += ways[j]
    return ways[-1]
