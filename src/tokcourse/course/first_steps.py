"""Chapter 00's ``get_stats`` and ``merge`` and chapter 02's ``train``,
``most_frequent_pair`` and ``train_with``, as short as the exercises ask.

These are the solutions chapters 00 and 02 show. The checks compare a student's functions with the
package's own, :func:`tokcourse.bpe.get_stats` and :func:`tokcourse.bpe.merge`, which give the
same answers and add what later chapters need (counts added up over many chunks of text).
The ``train`` check accepts any most frequent pair at each step, so the short ``train``
below, which takes the first one ``max`` meets, passes it as :func:`tokcourse.bpe.train` does;
``train_with`` must merge what its ``pick`` chooses.
``most_frequent_pair`` is the course's tie rule, :func:`tokcourse.bpe.most_frequent_pair`
without the type hints.
They are written without type hints on purpose: they are what a learner writes on day one.
"""


def get_stats(ids):
    """Count how often each pair of neighbouring ids occurs.

    >>> get_stats([1, 2, 3, 1, 2])
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    """
    counts = {}
    for i in range(len(ids) - 1):
        pair = (ids[i], ids[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, idx):
    """Replace every occurrence of `pair` in `ids` by the new id `idx`,
    left to right.

    >>> merge([5, 6, 6, 7, 5, 6], (5, 6), 99)
    [99, 6, 7, 99]
    >>> merge([7, 7, 7], (7, 7), 99)
    [99, 7]
    """
    new_ids = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            new_ids.append(idx)
            i += 2  # a merge uses up both ids
        else:
            new_ids.append(ids[i])
            i += 1
    return new_ids


def top_pair(stats, vocab):
    """A most frequent pair: the first of them that max meets."""
    return max(stats, key=stats.get)


def train(text, vocab_size):
    """Learn vocab_size - 256 BPE merges from text: {(a, b): new_id}.

    >>> train("aaabdaaabac", 259)
    {(97, 97): 256, (256, 97): 257, (257, 98): 258}
    """
    ids = list(text.encode("utf-8"))  # start from the bytes: ids 0..255
    merges = {}
    for idx in range(256, vocab_size):
        stats = get_stats(ids)  # count on the sequence as it is now
        pair = max(stats, key=stats.get)  # a most frequent pair
        ids = merge(ids, pair, idx)
        merges[pair] = idx
    return merges


def train_with(text, vocab_size, pick):
    """train, with pick(stats, vocab) choosing each merge.

    >>> train_with("aaabdaaabac", 259, top_pair)
    {(97, 97): 256, (256, 97): 257, (257, 98): 258}
    """
    ids = list(text.encode("utf-8"))
    vocab = {i: bytes([i]) for i in range(256)}  # the bytes of every id
    merges = {}
    for idx in range(256, vocab_size):
        stats = get_stats(ids)
        pair = pick(stats, vocab)  # the rule decides
        ids = merge(ids, pair, idx)
        merges[pair] = idx
        vocab[idx] = vocab[pair[0]] + vocab[pair[1]]  # first half first
    return merges


def most_frequent_pair(stats, vocab):
    """The pair to merge next: the most frequent, ties broken by CS336's rule
    (the lexicographically greater pair), then the smaller ids.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> most_frequent_pair({(97, 98): 2, (120, 121): 1}, vocab)
    (97, 98)
    """
    if not stats:
        raise ValueError("stats is empty: there are no pairs to choose from")
    # the count first; among equal counts the greater bytes (CS336's rule),
    # compared as a tuple: the first halves, then the second; on equal bytes
    # (two ids can spell the same bytes) the smaller ids
    return max(
        stats,
        key=lambda p: (stats[p], vocab[p[0]], vocab[p[1]], -p[0], -p[1]),
    )
