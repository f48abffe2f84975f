r"""Our merge tables as tiktoken's ranks and back: export a trained tokenizer to tiktoken.

We store a tokenizer as merges, ``{(left id, right id): new id}``, and encode by applying the
merge with the lowest id among the neighbouring *pairs*. tiktoken stores ``mergeable_ranks``,
``{token bytes: rank}``, and merges the neighbouring pair whose *concatenated bytes* have the
lowest rank. :func:`merges_to_ranks` writes one table as the other (the rank of a token is its
id); :func:`~tokcourse.pretrained.recover_merges` (chapter 05) reads ranks back as merges.

Subtle: the two rules agree only on tables where the bytes say everything. If two merges make
the same bytes, or if a token's bytes, merged by rank, take another path than the pair that
made it, tiktoken can merge where we do not (``a`` + ``bc`` is ``abc``, a token, even if the
merge that made ``abc`` was ``ab`` + ``c``). :func:`to_tiktoken` refuses such tables, naming
the token, instead of returning an encoding that disagrees with ours.

The same rule holds for everything else tiktoken is handed (``src/lib.rs``, tiktoken 0.14):
ids are ``u32`` ranks, and rank ``2**32 - 1`` means "no merge", so a merge may not have it;
a special token must have a name (tiktoken's encoder loops forever on an empty one) and an id
of its own; and no special token may be a prefix of another, because tiktoken tries them in
its hash map's order, which depends on all the names and not on their length, where we take
the longest. Each is refused, naming the token, before tiktoken is called: ``ValueError``, or
``TypeError`` for a value of the wrong type. So is a split pattern that can match the empty
string (``\s*``, ``x?``, a lone lookahead): we skip an empty match, tiktoken's encoder panics on
it (``pyo3_runtime.PanicException``, which ``except Exception`` does not catch).

Where we still differ: a pattern that matches no part of some text (``(?<=a)b`` on ``"hi"``).
tiktoken drops that text without a word; our tokenizer raises ``ValueError`` naming it
(:func:`~tokcourse.patterns.split`). Whether a pattern covers every text cannot be read off it
in general, so the export cannot refuse it in advance; the patterns this package ships cover
every text.

>>> merges = {(104, 101): 256, (256, 108): 257}  # "he", "hel"
>>> merges_to_ranks(merges)[b"hel"]
257
>>> to_tiktoken(merges).encode_ordinary("hello")
[257, 108, 111]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import pairwise
from typing import TYPE_CHECKING

from .bpe import build_vocab
from .patterns import GPT4_SPLIT_PATTERN
from .pretrained import recover_merges
from .tokenizer import MAX_TOKEN_ID, _check_special, _token_id

if TYPE_CHECKING:  # tiktoken is imported when an encoding is built, not on import
    import tiktoken

__all__ = ["export_problem", "merges_to_ranks", "special_tokens_problem", "to_tiktoken"]

NO_MERGE = MAX_TOKEN_ID  # tiktoken's Rank::MAX: a pair of that rank is never merged (src/lib.rs)


def merges_to_ranks(
    merges: Mapping[tuple[int, int], int],
) -> dict[bytes, int]:
    """tiktoken's ``mergeable_ranks`` for our merges: ``{token bytes: id}``,
    the 256 bytes first.

    Each merge's bytes are the bytes of its two halves joined, built in the
    order the merges were learned (``build_vocab``); the id of a token is
    its rank. Two merges that make the same bytes cannot both be ranks (a
    dict has one value per key): that is refused, naming both.

    >>> merges_to_ranks({(97, 97): 256, (256, 98): 257})[b"aab"]
    257
    """
    vocab = build_vocab(merges)
    ranks: dict[bytes, int] = {}
    for idx, token in vocab.items():
        if token in ranks:
            raise ValueError(
                f"tokens {ranks[token]} and {idx} are both {token!r}: "
                "tiktoken's ranks hold each byte string once, so these "
                "merges cannot be exported"
            )
        ranks[token] = idx
    return ranks


def export_problem(merges: Mapping[tuple[int, int], int], ranks: Mapping[bytes, int]) -> str | None:
    """Why ``ranks`` would not encode like ``merges`` (``None``: they agree token by token).

    Every token must be rebuilt, by rank, from exactly the pair that made it
    (:func:`~tokcourse.pretrained.recover_merges`); otherwise tiktoken's rule, which looks
    only at bytes, would take another path.

    >>> export_problem({(98, 99): 256, (97, 98): 257, (257, 99): 258},
    ...                merges_to_ranks({(98, 99): 256, (97, 98): 257, (257, 99): 258}))
    "token 258 b'abc' was made as b'ab' + b'c', but by rank its bytes merge as b'a' + b'bc'"
    """
    vocab = {idx: token for token, idx in ranks.items()}
    try:
        recovered = recover_merges(ranks)
    except ValueError as err:
        return str(err)
    made_by = {idx: pair for pair, idx in merges.items()}
    for pair, idx in recovered.items():
        if made_by.get(idx) != pair:
            wanted = made_by.get(idx)
            made = " + ".join(repr(vocab[i]) for i in wanted) if wanted else "no merge"
            got = " + ".join(repr(vocab[i]) for i in pair)
            return (
                f"token {idx} {vocab[idx]!r} was made as {made}, "
                f"but by rank its bytes merge as {got}"
            )
    return None


def _plain_merges(merges: object) -> dict[tuple[int, int], int]:
    """``merges`` with plain int ids, or refused: not ``{(id, id): id}``, or an id out of u32."""
    if not isinstance(merges, Mapping):
        raise TypeError(f"merges must be a dict {{(id, id): id}}, got {type(merges).__name__}")
    plain = {}
    for pair, idx in merges.items():
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"merges must map pairs (id, id) to ids, got the key {pair!r:.80}")
        a, b = (_token_id(part, f" in merge {pair!r}") for part in pair)
        idx = _token_id(idx, f" for merge {pair!r}")
        if not 0 <= idx < NO_MERGE:
            raise ValueError(
                f"merge {pair!r} -> {idx}: tiktoken's ranks are 0 .. {NO_MERGE - 1} "
                f"(unsigned 32-bit, and {NO_MERGE} = 2**32 - 1 means 'no merge' there)"
            )
        if (a, b) in plain:
            raise ValueError(f"merge ({a}, {b}) is given twice, as {plain[a, b]} and {idx}")
        plain[a, b] = idx
    return plain


def special_tokens_problem(special_tokens: Mapping[str, int]) -> str | None:
    """Why tiktoken could cut text at ``special_tokens`` otherwise than we do (``None``: it can't).

    tiktoken finds special tokens with one alternation of their names in the order of its
    ``FxHashMap`` (``CoreBPE::new`` in ``src/lib.rs``), and an alternation takes the first
    name that matches: where two names match at the same place, the winner depends on every
    name in the table (adding an unrelated one can flip it), where we take the longest. And
    when it finds a name that is not allowed it moves on one character, so it misses an
    allowed name starting at the same place. Two names match at the same place only if one is
    a prefix of the other; no order makes those agree, so they are refused. A name inside
    another (not at its start) is safe: both sides take the leftmost match, where only one
    name fits.

    Subtle: in sorted order, a name's longer extensions come right after it, so comparing
    neighbours finds every prefix in ``O(n log n)``.

    >>> special_tokens_problem({"<|a|>": 300, "<|b|>": 301}) is None
    True
    >>> special_tokens_problem({"<a>": 264, "<a>b": 265}).split(":")[0]
    "special token '<a>' (264) is a prefix of '<a>b' (265)"
    """
    for short, long in pairwise(sorted(special_tokens)):
        if long.startswith(short):
            return (
                f"special token {short!r} ({special_tokens[short]}) is a prefix of {long!r} "
                f"({special_tokens[long]}): on the text {long!r} we give the longest, "
                f"[{special_tokens[long]}], but tiktoken tries special tokens in its hash map's "
                f"order, which depends on all the names, so it may give {special_tokens[short]} "
                f"and encode the rest as text (and with only {short!r} allowed it can miss "
                f"{short!r}); rename one of them"
            )
    return None


def _check_specials(special_tokens: object, ranks: Mapping[bytes, int]) -> dict[str, int]:
    """Refuse special tokens tiktoken would not encode and decode as we do; return them."""
    if special_tokens is None:
        return {}
    if not isinstance(special_tokens, Mapping):
        raise TypeError(
            f"special_tokens must be a dict {{name: id}}, got {type(special_tokens).__name__}"
        )
    vocab = {idx: token for token, idx in ranks.items()}
    specials: dict[str, int] = {}
    for name, idx in special_tokens.items():
        try:  # the rules of register_special_tokens: a name, an id of its own, within u32
            specials[name] = _check_special(name, idx, vocab, specials)
        except ValueError as err:
            raise ValueError(f"cannot export this special token to tiktoken: {err}") from None
    problem = special_tokens_problem(specials)
    if problem is not None:
        raise ValueError(f"tiktoken could cut text at these special tokens otherwise: {problem}")
    return specials


# Python's own regex parser reads the pattern's structure; ``\p{..}`` (which it lacks) becomes
# ``\w``: either way one character, which is all that matters for matching the empty string.
_PROPERTY = re.compile(r"\\(?:[pP](\{[^}]*\}|[A-Za-z])|.)", re.DOTALL)


def _nullable(items: object) -> bool:
    """Can this parsed (sub)pattern match the empty string? Lookarounds count as succeeding."""
    from re import _constants as c

    def one(op: object, av: object) -> bool:
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT, c.GROUPREF):
            return True  # zero width (a group may have matched nothing)
        if op in (c.SUBPATTERN, c.ATOMIC_GROUP):
            return _nullable(av[-1] if op is c.SUBPATTERN else av)
        if op is c.BRANCH:
            return any(_nullable(alt) for alt in av[1])
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            return av[0] == 0 or _nullable(av[2])
        if op is c.GROUPREF_EXISTS:
            return _nullable(av[1]) or av[2] is None or _nullable(av[2])
        return False  # a literal, a class, any character: exactly one character

    return all(one(op, av) for op, av in items)


def pattern_problem(pattern: str) -> str | None:
    r"""Why tiktoken cannot run ``pattern`` as our tokenizer does (``None``: it can).

    A pattern that can match the empty string is refused: where it does, our split skips the
    empty match and tiktoken's encoder panics. The check is conservative: lookarounds are taken
    to succeed, so a pattern is refused if any text could make it match nothing.

    >>> pattern_problem(GPT4_SPLIT_PATTERN) is None
    True
    >>> pattern_problem("x+|y*").split(";")[0]
    "split pattern 'x+|y*' can match the empty string"
    """
    from re import _parser

    if not isinstance(pattern, str):
        return f"the split pattern must be a str, got {type(pattern).__name__}"
    plain = _PROPERTY.sub(lambda m: r"\w" if m.group(1) else m.group(0), pattern)
    try:
        parsed = _parser.parse(plain)
    except (re.error, RecursionError, OverflowError) as err:
        return (
            f"cannot read split pattern {pattern!r:.80} to check that it never matches the empty "
            f"string ({err}); the export accepts the syntax Python's re shares with tiktoken's "
            "engine, plus \\p{..}"
        )
    if _nullable(parsed):
        return (
            f"split pattern {pattern!r:.80} can match the empty string; our split skips an empty "
            "match, tiktoken's encoder panics on it: make every alternative consume a character "
            "(x+ rather than x*)"
        )
    return None


def to_tiktoken(
    merges: Mapping[tuple[int, int], int],
    pattern: str = GPT4_SPLIT_PATTERN,
    special_tokens: Mapping[str, int] | None = None,
    name: str = "mine",
) -> tiktoken.Encoding:
    """A ``tiktoken.Encoding`` that encodes exactly as our merges do (split, then BPE).

    Refuses (``ValueError``, before tiktoken is called) merges whose ranks would encode
    differently (:func:`export_problem`) or whose ids are not tiktoken ranks, a split pattern
    that can match the empty string (:func:`pattern_problem`), and special tokens that
    :meth:`~tokcourse.tokenizer.Tokenizer.register_special_tokens` refuses (no
    name, an id taken or out of range) or that overlap (:func:`special_tokens_problem`).

    >>> to_tiktoken({(104, 105): 256}, special_tokens={"<|end|>": 257}).encode(
    ...     "hi<|end|>", allowed_special="all")
    [256, 257]
    """
    import tiktoken

    merges = _plain_merges(merges)
    ranks = merges_to_ranks(merges)
    problem = export_problem(merges, ranks)
    if problem is not None:
        raise ValueError(f"tiktoken would encode these merges differently: {problem}")
    specials = _check_specials(special_tokens, ranks)
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, got {type(pattern).__name__}")
    problem = pattern_problem(pattern)
    if problem is not None:
        raise ValueError(f"cannot export this split pattern to tiktoken: {problem}")
    try:
        return tiktoken.Encoding(
            name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials
        )
    except ValueError as err:  # its regex engine (fancy-regex) cannot compile the pattern
        raise ValueError(f"tiktoken cannot compile split pattern {pattern!r:.80}: {err}") from None
