"""WordPiece (chapter 11): wordpiece_word, strip_accents.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine. The ``wordpiece_word`` cases
include real words with the entries of BERT's ``vocab.txt`` they can use: greedy matching only
ever looks up pieces of the word itself, so that small slice of the vocabulary gives exactly
the answer the whole 30,522 entries give.
"""

from __future__ import annotations

import functools
import random
import unicodedata
from collections.abc import Iterator
from typing import Any

from tokcourse import wordpiece
from tokcourse.course.exercises import STR, Case, Entry, Exercise, list_of

UNK, PREFIX = "[UNK]", "##"

# --- wordpiece_word ------------------------------------------------------------------------------


def _vocab(*tokens: str) -> dict[str, int]:
    return {t: i for i, t in enumerate(tokens)}


#: Small made-up vocabularies, each aimed at one mistake (in the comment).
TOY_CASES = (
    ("unaffable", _vocab("un", "##aff", "##able", "u", "##n", "##a")),
    ("playing", _vocab("p", "play", "##i", "##n", "##g", "##ing", "##in")),  # longest first
    ("playing", _vocab("play", "ing", "##in", "##g")),  # 'ing' cannot continue a word
    ("ing", _vocab("##ing", "i", "##n", "##g")),  # '##ing' cannot start one
    ("abc", _vocab("a", "ab", "##b", "##bc", "##c")),  # left to right, not right to left
    ("abcd", _vocab("abc", "a", "##bcd")),  # greedy: 'abc' then stuck -> [UNK], no backtracking
    ("playx", _vocab("play", "##ing", "p", "##l", "##a", "##y")),  # one [UNK], not 'play' + [UNK]
    ("xplay", _vocab("play", "p", "##l", "##a", "##y")),
    ("a", _vocab("a")),
    ("a", _vocab("##a")),
    ("ab", _vocab("a", "##b")),
    ("aaaa", _vocab("a", "##a", "##aa")),
    ("aaaa", _vocab("a", "aa", "##a")),
    ("hello", _vocab("hello", "hell", "##o", "he", "##llo")),
    ("東", _vocab("東", "##東")),
    ("naive", _vocab("na", "##ive", "##i", "##ve", "n", "##a")),
)

#: Real words (normalized as BERT does), segmented with BERT's own vocabulary.
REAL_WORDS = (
    "unbelievable", "preprocessing", "tokenization", "tokenizers", "hugging", "embeddings",
    "playing", "unaffable", "botchan", "wordpiece", "supercalifragilisticexpialidocious",
    "transformers", "naive", "1918", "gpt", "σ", "東", "😀", "ᜀ", "xyzzy",
    "antidisestablishmentarianism", "bertology", "subword", "ς",
)  # fmt: skip


@functools.cache
def _bert_vocab() -> dict[str, int]:
    from tokcourse.course.data import corpora

    return wordpiece.load_vocab(corpora.minilm_vocab_path())


def relevant_vocab(word: str, vocab: dict[str, int]) -> dict[str, int]:
    """The entries of ``vocab`` greedy matching could look up for ``word``: its pieces.

    >>> relevant_vocab("ab", {"a": 0, "##b": 1, "c": 2, "ab": 3})
    {'a': 0, '##b': 1, 'ab': 3}
    """
    pieces = {word[i:j] for i in range(len(word)) for j in range(i + 1, len(word) + 1)}
    keep = pieces | {PREFIX + p for p in pieces}
    return {t: i for t, i in vocab.items() if t in keep}


def _wordpiece_word_cases() -> Iterator[Case]:
    for word, vocab in TOY_CASES:
        yield Case((word, vocab))
    bert = _bert_vocab()
    for word in REAL_WORDS:
        yield Case((word, relevant_vocab(word, bert)))
    rng = random.Random(11)
    for _ in range(40):  # random words over a small alphabet, random small vocabularies
        alphabet = "abc"
        entries = {"".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 4)))
                   for _ in range(rng.randrange(2, 9))}  # fmt: skip
        vocab = _vocab(*sorted(e if rng.random() < 0.5 else PREFIX + e for e in sorted(entries)))
        word = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 7)))
        yield Case((word, vocab))


def _greedy(word: str, vocab: dict[str, int], *, from_right: bool = False) -> list[str]:
    """Greedy longest match from the left (the exercise) or from the right (a mistake)."""
    if not from_right:
        return wordpiece.wordpiece_word(word, vocab)
    pieces: list[str] = []
    end = len(word)
    while end > 0:
        for start in range(end):
            piece = word[start:end] if start == 0 else PREFIX + word[start:end]
            if piece in vocab:
                break
        else:
            return [UNK]
        pieces.insert(0, piece)
        end = start
    return pieces


def _pieces(got: Any) -> list[str] | None:
    return got if isinstance(got, list) and all(isinstance(p, str) for p in got) else None


def _strip(piece: str) -> str:
    return piece.removeprefix(PREFIX)


def _ww_partial_unk_hint(case: Case, expected: Any, got: Any) -> str | None:
    got = _pieces(got)
    if got and UNK in got and len(got) > 1:
        return (
            f"{got} mixes pieces with {UNK!r}: when some position of the word cannot be "
            f"matched, the *whole word* becomes one {UNK!r}; return [{UNK!r}] and nothing else."
        )
    return None


def _ww_prefix_hint(case: Case, expected: Any, got: Any) -> str | None:
    got = _pieces(got)
    if not got or got == [UNK]:
        return None
    if got[0].startswith(PREFIX) or any(not p.startswith(PREFIX) for p in got[1:]):
        return (
            f"in {got}, the first piece starts the word and has no '##'; every later piece "
            "continues it and must be looked up *with* '##' in front ('##ing', not 'ing')."
        )
    return None


def _ww_backtrack_hint(case: Case, expected: Any, got: Any) -> str | None:
    got = _pieces(got)
    if expected == [UNK] and got and UNK not in got:
        word, _ = case.args
        return (
            f"WordPiece is greedy and never backtracks: from the left it takes the longest "
            f"piece, then is stuck somewhere in {word!r}, so the answer is [{UNK!r}] even "
            f"though {got} would cover the word."
        )
    return None


def _ww_unk_too_soon_hint(case: Case, expected: Any, got: Any) -> str | None:
    if _pieces(got) != [UNK] or expected == [UNK]:
        return None
    advice = []
    if any(p.startswith(PREFIX) for p in expected):
        advice.append("after the first piece, look each piece up *with* '##' in front")
    if any(len(_strip(p)) == 1 for p in expected):
        advice.append("try every end, from the end of the word down to a single character")
    if not advice:
        advice.append("take the longest piece in the vocabulary at each position")
    return f"the word can be covered ({expected}): " + "; ".join(advice) + "."


def _ww_right_hint(case: Case, expected: Any, got: Any) -> str | None:
    word, vocab = case.args
    if _pieces(got) == _greedy(word, vocab, from_right=True):
        return (
            "that is the longest match taken from the *right* end of the word; WordPiece "
            "starts at the left: the longest piece that begins the word, then the longest "
            "'##' piece that continues it, and so on."
        )
    return None


def _ww_shortest_hint(case: Case, expected: Any, got: Any) -> str | None:
    got = _pieces(got)
    if got and expected != [UNK] and UNK not in got and len(got) > len(expected):
        return (
            f"{got} has more pieces than {expected}: at each position take the *longest* "
            "piece in the vocabulary (start with the end of the word and shorten), not the "
            "first or shortest one that matches."
        )
    return None


def _ww_not_in_vocab_hint(case: Case, expected: Any, got: Any) -> str | None:
    word, vocab = case.args
    got = _pieces(got)
    if got and any(p not in vocab and p != UNK for p in got):
        bad = next(p for p in got if p not in vocab and p != UNK)
        return (
            f"{bad!r} is not in the vocabulary: every piece returned must be an entry "
            "(check the slice word[start:end] and the end of your loop)."
        )
    if got and "".join(_strip(p) for p in got) != word and UNK not in got:
        return (
            f"the pieces {got} without their '##' do not spell {word!r}: each piece must start "
            "where the previous one ended, and the last must reach the end of the word."
        )
    return None


# --- strip_accents --------------------------------------------------------------------------------

#: Text where the ways of stripping accents disagree (the comment says which).
ACCENT_CASES = (
    "",
    "ø",  # no decomposition, not ASCII: unchanged
    "cafe",
    "café",
    "Crème Brûlée",
    "naïve Ångström",
    "e\u0301",  # already decomposed
    "\u0301",  # a mark alone
    "ﬁ ﬃ ²",  # compatibility characters: NFKD would change them
    "Å",  # U+212B ANGSTROM SIGN: its canonical decomposition is A + ring
    "한국어",  # Hangul: NFD gives jamo (not marks): they stay decomposed
    "ø Ł đ ß æ",  # no decomposition: unchanged
    "Tiếng Việt",  # two marks on one letter
    "कुत्ता क्षत्रिय",  # Devanagari: Mn signs (one with combining class 0) go, Mc stay
    "किताब",  # U+093F is Mc: it stays
    "a\u20dd",  # an enclosing mark (Me): it stays
    "\u0391\u0345 ά",  # Greek ypogegrammeni (Mn) and tonos
    "مَرْحَبًا",  # Arabic harakat: Mn
    "İ ı",
    "Ǆ ǅ",
)


def _strip_accents_cases() -> Iterator[Case]:
    for text in ACCENT_CASES:
        yield Case((text,))
    rng = random.Random(11)
    alphabet = "aeéèêëAÉñçøßﬁ한ि\u0301\u0308\u20dd कुΆ "
    for _ in range(30):
        yield Case(("".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 8))),))


def _drop(text: str, keep: Any) -> str:
    return "".join(c for c in text if keep(c))


def _sa_hint_for(case: Case, got: Any, variants: list[tuple[Any, str]]) -> str | None:
    (text,) = case.args
    for make, hint in variants:
        if got == make(text):
            return hint
    return None


def _sa_nfkd_hint(case: Case, expected: Any, got: Any) -> str | None:
    def nfkd(t: str) -> str:
        return _drop(unicodedata.normalize("NFKD", t), lambda c: unicodedata.category(c) != "Mn")

    return _sa_hint_for(case, got, [(nfkd, (
        "that is NFKD, the *compatibility* decomposition: it also turns 'ﬁ' into 'fi' and '²' "
        "into '2'. BERT uses NFD, the canonical one, which only separates letters from marks."
    ))])  # fmt: skip


def _sa_all_marks_hint(case: Case, expected: Any, got: Any) -> str | None:
    def all_marks(t: str) -> str:
        nfd = unicodedata.normalize("NFD", t)
        return _drop(nfd, lambda c: not unicodedata.category(c).startswith("M"))

    return _sa_hint_for(case, got, [(all_marks, (
        "that drops every mark (M*); only nonspacing marks, category 'Mn', go. Spacing marks "
        "(Mc, such as Devanagari 'ि') and enclosing marks (Me) stay."
    ))])  # fmt: skip


def _sa_combining_hint(case: Case, expected: Any, got: Any) -> str | None:
    def combining(t: str) -> str:
        return _drop(unicodedata.normalize("NFD", t), lambda c: not unicodedata.combining(c))

    return _sa_hint_for(case, got, [(combining, (
        "unicodedata.combining() is the canonical combining *class*, not the category: some "
        "nonspacing marks have class 0 (Devanagari 'ु'). Test unicodedata.category(c) == 'Mn'."
    ))])  # fmt: skip


def _sa_recompose_hint(case: Case, expected: Any, got: Any) -> str | None:
    def recomposed(t: str) -> str:
        return unicodedata.normalize("NFC", wordpiece.strip_accents(t))

    return _sa_hint_for(case, got, [(recomposed, (
        "the result stays decomposed (NFD): do not compose it again with NFC afterwards. "
        "Hangul syllables, for instance, come out as their jamo."
    ))])  # fmt: skip


def _sa_nfc_hint(case: Case, expected: Any, got: Any) -> str | None:
    def no_decompose(t: str) -> str:
        return _drop(unicodedata.normalize("NFC", t), lambda c: unicodedata.category(c) != "Mn")

    return _sa_hint_for(case, got, [(no_decompose, (
        "'é' is one character until it is decomposed: normalize with 'NFD' first, so that "
        "the accent becomes a separate mark you can drop."
    )), (lambda t: _drop(t, lambda c: unicodedata.category(c) != "Mn"), (
        "'é' is one character until it is decomposed: normalize with 'NFD' first, so that "
        "the accent becomes a separate mark you can drop."
    ))])  # fmt: skip


def _sa_ascii_hint(case: Case, expected: Any, got: Any) -> str | None:
    def ascii_only(t: str) -> str:
        return unicodedata.normalize("NFD", t).encode("ascii", "ignore").decode()

    return _sa_hint_for(case, got, [(ascii_only, (
        "encoding to ASCII with errors='ignore' deletes every non-Latin letter too (Hangul, "
        "Greek, Devanagari); drop only the characters of category 'Mn'."
    ))])  # fmt: skip


#: The exercises of this topic, found by :mod:`tokcourse.course.check`.
EXERCISES: dict[str, Entry] = {
    "wordpiece_word": Entry(
        "wordpiece_word(word, vocab) -> list of pieces (greedy longest match, '##', [UNK])",
        lambda: Exercise(
            "wordpiece_word",
            wordpiece.wordpiece_word,
            _wordpiece_word_cases,
            returns=list_of(STR),
            hints=(
                _ww_partial_unk_hint,
                _ww_backtrack_hint,
                _ww_unk_too_soon_hint,
                _ww_right_hint,
                _ww_prefix_hint,
                _ww_shortest_hint,
                _ww_not_in_vocab_hint,
            ),
        ),
    ),
    "strip_accents": Entry(
        "strip_accents(text) -> text without nonspacing marks (NFD, then drop Mn)",
        lambda: Exercise(
            "strip_accents",
            wordpiece.strip_accents,
            _strip_accents_cases,
            returns=STR,
            hints=(
                _sa_nfkd_hint,
                _sa_all_marks_hint,
                _sa_combining_hint,
                _sa_recompose_hint,
                _sa_nfc_hint,
                _sa_ascii_hint,
            ),
        ),
    ),
}
