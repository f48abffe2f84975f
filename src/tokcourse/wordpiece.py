"""WordPiece as BERT uses it (chapter 11): Hugging Face ``tokenizers``' exact tokens and ids.

BERT's tokenizer runs three stages, and this module writes each one out:

1. :func:`normalize`, the ``BertNormalizer``: drop control characters (and NUL and U+FFFD), turn
   every kind of whitespace into ``" "``, put spaces around CJK ideographs, strip accents (NFD,
   then drop the nonspacing marks, category Mn) and lower-case **one character at a time** (so a
   final capital sigma becomes ``σ``, never ``ς``);
2. :func:`pre_tokenize`, the ``BertPreTokenizer``: split on whitespace, then cut every
   punctuation character (ASCII punctuation or a Unicode ``P*`` category) into a word of its own;
3. :func:`wordpiece_word` per word: greedy **longest match first** from the left, pieces after the
   first one carry the ``##`` prefix, and a word that cannot be covered becomes one ``[UNK]``
   (so does a word of more than 100 characters).

:class:`WordPiece` puts them together over a ``vocab.txt``. The character classes follow the
Rust crates ``tokenizers`` 0.23 is built with, whose Unicode tables are not Python's: the
difference is carried as data (:mod:`tokcourse.wordpiece_tables`), and the parity tests compare
every code point.

>>> wordpiece_word("unaffable", {"un": 0, "##aff": 1, "##able": 2})
['un', '##aff', '##able']
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path

from tokcourse.wordpiece_tables import _EXTRA_PUNCT, _not_punctuation, _overrides

__all__ = [
    "WordPiece",
    "is_cjk",
    "is_control",
    "is_punctuation",
    "is_whitespace",
    "load_vocab",
    "nfd",
    "normalize",
    "pre_tokenize",
    "strip_accents",
    "wordpiece_word",
]

#: Unicode's White_Space characters, as Rust's ``char::is_whitespace`` knows them. The control
#: characters among them (U+000B, U+000C, U+0085) are dropped before this rule is asked.
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

#: The blocks BERT calls "Chinese characters" (CJK ideographs; not kana, not Hangul).
CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)  # fmt: skip


def is_control(ch: str) -> bool:
    """Whether BERT's cleaning drops ``ch``: NUL, U+FFFD, and categories Cc, Cf, Co, Cs.

    Tab, newline and carriage return are whitespace instead; unassigned code points (Cn) stay.

    >>> is_control("\\x07"), is_control("\\u200b"), is_control("\\t"), is_control("a")
    (True, True, False, False)
    """
    if ch in "\t\n\r":
        return False
    return ch in "\x00\ufffd" or unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")


def is_whitespace(ch: str) -> bool:
    """Whether ``ch`` is Unicode White_Space (what the cleaning turns into ``" "``).

    >>> is_whitespace("\\u3000"), is_whitespace("\\u200b")
    (True, False)
    """
    return ch in WHITESPACE


def is_cjk(ch: str) -> bool:
    """Whether ``ch`` is in one of BERT's CJK ideograph blocks (:data:`CJK_RANGES`).

    >>> is_cjk("後"), is_cjk("か"), is_cjk("한")
    (True, False, False)
    """
    c = ord(ch)
    return any(a <= c <= b for a, b in CJK_RANGES)


def is_punctuation(ch: str) -> bool:
    """Whether BERT's pre-tokenizer cuts ``ch`` off as a word of its own.

    ASCII punctuation (``$``, ``+``, ``^`` and ``~`` included, though Unicode calls them
    symbols) or a Unicode ``P*`` category, as tokenizers' tables have them.

    >>> is_punctuation("$"), is_punctuation("。"), is_punctuation("€")
    (True, True, False)
    """
    if ch in _EXTRA_PUNCT or (len(ch) == 1 and ch.isascii() and _ASCII_PUNCT.match(ch)):
        return True
    return unicodedata.category(ch).startswith("P") and ch not in _not_punctuation()


_ASCII_PUNCT = re.compile(r"[!-/:-@\[-`{-~]")


def strip_accents(text: str) -> str:
    """Decompose (NFD), then drop every nonspacing mark (category Mn).

    The textbook rule, with Python's Unicode tables; :func:`normalize` adds
    tokenizers' own.

    >>> strip_accents("Crème Brûlée"), strip_accents("ﬁ")
    ('Creme Brulee', 'ﬁ')
    """
    _check_text(text, "text")
    return "".join(ch for ch in nfd(text) if unicodedata.category(ch) != "Mn")


def nfd(text: str) -> str:
    """``unicodedata.normalize("NFD", text)`` in near-linear time (n log n at
    worst).

    CPython puts the combining marks after a starter in order with an
    insertion sort: quadratic in a long run of marks of alternating classes
    (``"a" + "\\u0301\\u0316" * n``). NFD cannot move a mark past a
    character whose decomposition starts with a starter, so the text is cut
    before such characters: pieces without a long run of marks go to
    CPython, and each long run (with the character before it) is decomposed
    one character at a time, then each run of marks sorted by combining
    class with a stable sort, as the standard defines.

    >>> nfd("e\\u0316\\u0301\\u0316") == "e\\u0316\\u0316\\u0301"
    True
    """
    if text.isascii():
        return text
    out: list[str] = []
    start = 0
    for run in _long_mark_run().finditer(text):
        # the character before the run brings its own marks
        cut = max(run.start() - 1, start)
        out += [
            unicodedata.normalize("NFD", text[start:cut]),
            _sorted_nfd(text[cut : run.end()]),
        ]
        start = run.end()
    out.append(unicodedata.normalize("NFD", text[start:]))
    return "".join(out)


def _sorted_nfd(text: str) -> str:
    combining = unicodedata.combining
    out: list[str] = []
    run: list[str] = []
    for ch in "".join([unicodedata.normalize("NFD", ch) for ch in text]):
        if combining(ch):
            run.append(ch)
            continue
        out += sorted(run, key=combining)
        out.append(ch)
        run = []
    # stable: marks of one class keep their order
    out += sorted(run, key=combining)
    return "".join(out)


_MARK_RUN = 32  # shorter runs go to CPython: at most _MARK_RUN**2 swaps for each


@functools.cache
def _long_mark_run() -> re.Pattern[str]:
    """Runs of ``_MARK_RUN`` or more characters NFD may reorder: combining marks, and the
    characters whose decomposition starts with one (U+0F73 is class 0 but becomes two marks)."""
    combining, normalize_ = unicodedata.combining, unicodedata.normalize
    marks = [c for c in range(0x110000)
             if combining(chr(c))
             or (not 0xD800 <= c <= 0xDFFF  # a canonical decomposition starting with a mark
                 and unicodedata.decomposition(chr(c))[:1] not in ("", "<")
                 and combining(normalize_("NFD", chr(c))[0]))]  # fmt: skip
    ranges: list[list[int]] = []
    for c in marks:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    members = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)
    return re.compile(f"[{members}]{{{_MARK_RUN},}}")


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _check_text(text: object, name: str) -> None:
    """Refuse what ``tokenizers`` refuses: a non-str, and a str with lone
    surrogates (it cannot become UTF-8): the same ``UnicodeEncodeError`` as
    ``normalize_str``."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, not {type(text).__name__}")
    if not text.isascii() and _SURROGATE.search(text):
        # raises: 'utf-8' codec can't encode character ... in position
        text.encode("utf-8")


@functools.lru_cache(maxsize=65_536)
def _clean_char(ch: str) -> str:
    """Cleaning and CJK padding of one character (no override applies to it)."""
    if is_control(ch):
        return ""
    if ch in WHITESPACE:
        return " "
    return f" {ch} " if is_cjk(ch) else ch


def _finish(segment: str) -> str:
    """Accent stripping, then lower case one character at a time (no final sigma)."""
    marks = _crate_marks()
    return "".join(ch.lower() for ch in strip_accents(segment) if ch not in marks)


@functools.cache
def _crate_marks() -> frozenset[str]:
    """The crate's Mn that Python does not call Mn (U+1734): NFD sorts them, then they go."""
    return frozenset(c for c, to in _overrides().items() if to == "" and unicodedata.combining(c))


def normalize(text: str) -> str:
    """BERT's normalizer (``BertNormalizer`` with lower-casing): clean, CJK, accents, lower.

    Characters Python's Unicode tables see differently from tokenizers' get tokenizers'
    answer; they are not decomposed with their neighbours (the crate sees no mark there).

    >>> normalize("Héllo\\tWORLD 東京 ΟΔΟΣ\\x07!")
    'hello world  東  京  οδοσ!'
    """
    _check_text(text, "text")
    if text.isascii():  # the common case, fast: no accents, no case subtleties, no CJK
        return text.translate(_ASCII_CLEAN).lower()
    overrides, marks = _overrides(), _crate_marks()
    out: list[str] = []
    segment: list[str] = []  # characters to clean, decompose and lower-case together
    for ch in text:
        fixed = overrides.get(ch)
        if fixed is None or ch in marks:  # such a mark is sorted by NFD first, then dropped
            segment.append(_clean_char(ch))
            continue
        out.append(_finish("".join(segment)))
        out.append(fixed)
        segment = []
    out.append(_finish("".join(segment)))
    return "".join(out)


#: ASCII cleaning: tab, newline and carriage return become spaces, other controls go
#: (vertical tab and form feed too: they are control characters before they are whitespace).
_ASCII_CLEAN = {c: (" " if chr(c) in "\t\n\r" else None) for c in [*range(32), 127]}


def pre_tokenize(normalized: str) -> list[str]:
    """BERT's pre-tokenizer: split on whitespace, then isolate each punctuation character.

    >>> pre_tokenize("don't stop... now")
    ['don', "'", 't', 'stop', '.', '.', '.', 'now']
    """
    _check_text(normalized, "normalized")
    words: list[str] = []
    punctuation = _punctuation_cache
    for chunk in normalized.translate(_SPACES).split(" "):
        start = 0
        for i, ch in enumerate(chunk):
            is_punct = punctuation.get(ch)
            if is_punct is None:
                is_punct = punctuation[ch] = is_punctuation(ch)
            if is_punct:
                if start < i:
                    words.append(chunk[start:i])
                words.append(ch)
                start = i + 1
        if start < len(chunk):
            words.append(chunk[start:])
    return words


_SPACES = {ord(ch): " " for ch in WHITESPACE}
_punctuation_cache: dict[str, bool] = {}


# The book shows this function, in a code column 79 characters wide: between
# "fmt: off" and "fmt: on" it keeps the line breaks written for it.
# fmt: off
def wordpiece_word(
    word: str,
    vocab: Mapping[str, int] | set[str] | frozenset[str],
    *,
    unk_token: str = "[UNK]",
    prefix: str = "##",
    max_chars: int = 100,
    max_piece_chars: int | None = None,
) -> list[str]:
    """Greedy longest-match-first WordPiece of one normalized word.

    From the left, take the longest piece in ``vocab`` (with ``prefix``
    after the first piece), then go on after it. If some position cannot be
    matched at all, the whole word becomes ``[unk_token]``: no partial
    pieces. So does a word longer than ``max_chars`` characters.
    ``max_piece_chars`` (the longest vocabulary entry, prefix included) only
    makes the search shorter; leaving it out gives the same answer.

    >>> wordpiece_word("playing", {"play": 0, "##ing": 1, "p": 2})
    ['play', '##ing']
    >>> wordpiece_word("playx", {"play": 0, "##ing": 1})
    ['[UNK]']
    """
    _check_text(word, "word")
    if len(word) > max_chars:
        return [unk_token]
    pieces: list[str] = []
    start = 0
    while start < len(word):
        end = len(word)
        if max_piece_chars is not None:
            end = min(
                end, start + max_piece_chars - (len(prefix) if start else 0)
            )
        while end > start:
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                break
            end -= 1
        else:
            # nothing matches here: the whole word is unknown
            return [unk_token]
        pieces.append(piece)
        start = end
    return pieces
# fmt: on


def load_vocab(path: str | Path) -> dict[str, int]:
    """Read a ``vocab.txt`` as ``tokenizers`` does (``WordPiece::read_file``): one token per
    line (split at ``"\\n"`` only), its id the line number from 0, white space at the end of a
    line trimmed (Rust's ``trim_end``: ``"\\r"``, tabs, U+3000...). A token on two lines keeps
    the later id. A line that is not UTF-8 is a ValueError naming the file and the line.

    Example: ``load_vocab(minilm_vocab_path())["[UNK]"]  # 100``
    """
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # a final newline ends the last line, it starts none
    vocab: dict[str, int] = {}
    for i, line in enumerate(lines):
        try:
            token = line.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = line[e.start : e.start + 4]
            raise ValueError(f"{path}: line {i + 1} is not UTF-8 (at byte {e.start + 1} of the "
                             f"line, {bad!r}: {e.reason})") from None  # fmt: skip
        vocab[token.rstrip(_RUST_WHITESPACE)] = i
    return vocab


_RUST_WHITESPACE = "".join(sorted(WHITESPACE))  # what Rust's trim_end removes


class WordPiece:
    """BERT's uncased WordPiece tokenizer over a vocabulary: tokens and ids as HF computes them.

    ``special_tokens`` (default: those of ``[PAD] [UNK] [CLS] [SEP] [MASK]`` that ``vocab``
    has) are matched in the raw text first, exactly as written, and never normalized: the text
    ``"[SEP]"`` is the token ``[SEP]``, while ``"[sep]"`` is cut at its brackets.

    >>> wp = WordPiece({"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "!": 4})
    >>> wp.tokenize("Unaffable!"), wp.encode("Unaffable!")
    (['un', '##aff', '##able', '!'], [1, 2, 3, 4])
    """

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        unk_token: str = "[UNK]",
        prefix: str = "##",
        max_chars: int = 100,
        special_tokens: Sequence[str] | None = None,
    ) -> None:
        if unk_token not in vocab:
            raise ValueError(f"unk_token {unk_token!r} is not in the vocabulary")
        self.vocab = dict(vocab)
        self.unk_token, self.prefix, self.max_chars = unk_token, prefix, max_chars
        self.max_piece_chars = max(len(t) for t in self.vocab)
        if special_tokens is None:
            special_tokens = [t for t in ("[PAD]", unk_token, "[CLS]", "[SEP]", "[MASK]")
                              if t in self.vocab]  # fmt: skip
        missing = [t for t in special_tokens if t not in self.vocab]
        if missing:
            raise ValueError(f"special tokens {missing} are not in the vocabulary")
        self.special_tokens = list(dict.fromkeys(special_tokens))
        longest_first = sorted(self.special_tokens, key=len, reverse=True)
        self._special_re = (re.compile("|".join(map(re.escape, longest_first)))
                            if longest_first else None)  # fmt: skip
        self._cache: dict[str, list[str]] = {}

    @classmethod
    def from_file(cls, path: str | Path, **kwargs) -> WordPiece:
        """A tokenizer over the ``vocab.txt`` at ``path`` (see :func:`load_vocab`)."""
        return cls(load_vocab(path), **kwargs)

    def tokenize_word(self, word: str) -> list[str]:
        """The pieces of one normalized, pre-tokenized word (cached)."""
        pieces = self._cache.get(word)
        if pieces is None:
            pieces = wordpiece_word(word, self.vocab, unk_token=self.unk_token,
                                    prefix=self.prefix, max_chars=self.max_chars,
                                    max_piece_chars=self.max_piece_chars)  # fmt: skip
            if len(self._cache) < 200_000:
                self._cache[word] = pieces
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``: special tokens, then normalize, pre-tokenize, WordPiece.

        A lone surrogate (``"a\\udfffb"``) is a TypeError naming it and its position, as
        ``tokenizers``' ``encode`` refuses it (``TextInputSequence must be str``)."""
        try:
            _check_text(text, "text")
        except UnicodeEncodeError as e:  # tokenizers: TypeError('TextInputSequence must be str')
            raise TypeError(f"text must be a str UTF-8 can encode: {e}") from e
        tokens: list[str] = []
        start = 0
        matches = self._special_re.finditer(text) if self._special_re else ()
        for match in matches:
            tokens += self._tokenize_ordinary(text[start : match.start()])
            tokens.append(match.group())
            start = match.end()
        tokens += self._tokenize_ordinary(text[start:])
        return tokens

    def _tokenize_ordinary(self, text: str) -> list[str]:
        return [p for word in pre_tokenize(normalize(text)) for p in self.tokenize_word(word)]

    def encode(self, text: str) -> list[int]:
        """The ids of :meth:`tokenize`'s tokens (no ``[CLS]``/``[SEP]`` added)."""
        return [self.vocab[t] for t in self.tokenize(text)]

    def decode(self, ids: Sequence[int]) -> str:
        """Tokens joined with spaces, ``##`` pieces glued to the one before (lossy: BERT
        lower-cased and dropped accents, so this is not the original text).

        >>> WordPiece({"[UNK]": 0, "un": 1, "##aff": 2}).decode([1, 2, 0])
        'unaff [UNK]'
        """
        inverse = {i: t for t, i in self.vocab.items()}
        out = ""
        for i in ids:
            if i not in inverse:
                raise ValueError(f"id {i!r} is not in the vocabulary (ids up to {max(inverse)})")
            token = inverse[i]
            if token.startswith(self.prefix) and out:
                out += token[len(self.prefix) :]
            else:
                out += (" " if out else "") + token
        return out
