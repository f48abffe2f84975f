"""Streaming: encode text that arrives in pieces, with memory that does not grow with it.

``encode_iterable(encoder, pieces)`` yields exactly the ids of encoding ``"".join(pieces)``,
however the text is cut. The difficulty: a chunk near the end of what we have seen may still
change when more text arrives ("hello" + "world" is one chunk; "\\r" + "\\n" is one chunk;
"  " + "x" moves a space onto the word; "<|endof" + "text|>" is a special token).

**The rule.** We keep a buffer and emit only what no future text can change:

1. *Special tokens.* A special token starting at position ``p`` is certain once the buffer
   holds ``p + longest name`` characters, so the last ``longest - 1`` characters stay
   unresolved. Text before a certain special token is a complete ordinary piece.
2. *Chunks.* For the rest ``T`` we split with the pattern and emit the chunks that end at
   least ``LOOKAHEAD`` (4) characters before ``T``'s trailing white space run. Why that is
   safe for the GPT-2/GPT-4/GPT-4o patterns: which chunk the pattern matches at a position
   depends only on the characters up to the end of the match plus at most three more (the
   contraction ``'ll`` after a word; one for the end of a letter, digit or symbol run), or,
   for white space, on the whole run and the character after it (``\\s+(?!\\S)``,
   ``\\s++$``, ``\\s*[\\r\\n]`` look at the run's end). A chunk ending 4 characters before
   the trailing run has seen all of that, and so have the chunks before it.
3. *Surrogates.* A high surrogate at the very end waits for the next piece (its low half
   may be there); surrogates are then fixed exactly as ``Tokenizer.encode`` does.

**Work.** Resolving means splitting the whole buffer, so resolving after every piece would
be quadratic when the buffer stays long: a chunk that never ends (a megabyte of white space,
or of one letter) is held until something ends it, and fed line by line or character by
character it would be re-split on every piece. So we resolve only when the buffer has at
least doubled since the last resolve left it (``_GROWTH``); until then pieces are only
collected. A resolve costs ``O(len(buffer))``, and at least half of that buffer is text that
arrived since the previous resolve, so the total work is ``O(n)`` for ``n`` characters,
however the text is cut. Resolving later never changes the ids: the rule above only ever
emits chunks that no future text can change, and whatever is held is resolved later.

Memory: the buffer holds the unresolved tail (a few chunks) plus at most as much again of
new pieces (and the current piece), and the encoder's chunk cache is bounded. What can make
the buffer grow is one chunk that never ends: it is held until something ends it.

Caveats: the disallowed-special check runs on the buffer as it goes, so a disallowed token
raises when it is reached, after earlier ids were yielded; special tokens are looked for
after surrogates are fixed (``encode`` looks before; only names holding surrogates or
astral characters could tell the difference). The rule is proven for the GPT-2,
GPT-4 and GPT-4o patterns (and tested with random cuts); a custom pattern whose decisions
look further ahead needs a larger ``lookahead``.

>>> from tokcourse import GPT4Tokenizer
>>> tok = GPT4Tokenizer()
>>> list(tok.encode_iterable(["hel", "lo wo", "rld"])) == tok.encode("hello world")
True

**Decoding a stream** is the mirror problem, and much simpler (chapter 03): a model emits ids
one at a time, and a token can end in the middle of a character. ``StreamDecoder`` hands out
text as soon as it is complete and holds back the bytes of an unfinished character: a lead
byte followed by fewer continuation bytes than it announces (:func:`unfinished`). The text it
hands out, joined, is ``bpe.decode(ids, vocab)`` however the ids are fed (``decode_stream`` is
the same as a generator): text is only ever cut just before a lead byte, where no character
of UTF-8 can straddle the cut, so decoding the pieces with ``errors="replace"`` replaces what
decoding the whole would.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Literal

import regex

from .bpe import utf8_text
from .fast_encode import FastEncoder
from .special import allowed_special_set, check_disallowed, disallowed_special_set, find_specials
from .utf8 import _fix_surrogates, byte_kind

__all__ = [
    "LOOKAHEAD",
    "StreamDecoder",
    "decode_stream",
    "encode_iterable",
    "unfinished",
    "utf8_text",
]

LOOKAHEAD = 4
"""Characters a chunk must end before the trailing white space run to be emitted."""

_GROWTH = 2
"""Resolve once the buffer is this many times as long as what the last resolve kept."""

# (?r): the regex module matches this one from the end of the text backwards, so finding the
# trailing run costs its length, not a search over the whole text
_TRAILING_SPACE = regex.compile(r"(?r)\s*\Z")


def _trailing_space_start(text: str) -> int:
    """Where the run of white space that ends ``text`` starts (``len(text)`` if none).

    >>> _trailing_space_start("ab \\n "), _trailing_space_start("ab")
    (2, 2)
    """
    return _TRAILING_SPACE.search(text).start()


def encode_iterable(
    encoder: FastEncoder,
    pieces: Iterable[str],
    special_tokens: Mapping[str, int] | None = None,
    *,
    allowed_special: Literal["all"] | Collection[str] = frozenset(),
    disallowed_special: Literal["all"] | Collection[str] = "all",
    lookahead: int = LOOKAHEAD,
) -> Iterator[int]:
    """Yield the ids of ``"".join(pieces)``, reading ``pieces`` lazily.

    Special-token rules are ``Tokenizer.encode``'s (see ``special.py``).

    Arguments are checked at the call, not when the first id is asked for.

    >>> enc = FastEncoder({(104, 105): 256}, pattern=r"\\w+|\\s+")
    >>> list(encode_iterable(enc, ["h", "i h", "i"]))
    [256, 32, 256]
    """
    if isinstance(pieces, str):
        raise TypeError(
            "pieces must be an iterable of str (e.g. a file or a list), not one str; "
            "for one string use encode(), or pass [text]"
        )
    if not isinstance(pieces, Iterable):
        raise TypeError(
            "pieces must be an iterable of str (e.g. a file, a list or a generator), "
            f"got {type(pieces).__name__}: {pieces!r:.80}"
        )
    if isinstance(lookahead, bool) or not isinstance(lookahead, int) or lookahead < 1:
        raise ValueError(f"lookahead must be an int >= 1, got {lookahead!r}")
    special_tokens = {} if special_tokens is None else dict(special_tokens)
    allowed = allowed_special_set(allowed_special, special_tokens)
    disallowed = disallowed_special_set(disallowed_special, allowed, special_tokens)
    allowed = allowed & special_tokens.keys()
    # the last `keep` characters may be the start of a special token: never resolve them early
    keep = max((len(name) for name in allowed | disallowed), default=1) - 1
    tables = (encoder, special_tokens, allowed, disallowed, keep, lookahead)
    return _stream(iter(pieces), tables)


def _stream(pieces: Iterator[str], tables: tuple) -> Iterator[int]:
    """The generator behind ``encode_iterable`` (its arguments already checked)."""
    # buffer: what the last resolve kept; new: pieces since then; held: len(buffer) + len(new)
    buffer, new, held = "", [], 0
    for position, piece in enumerate(pieces):
        if not isinstance(piece, str):
            raise TypeError(
                f"piece {position} must be a str, got {type(piece).__name__}: {piece!r:.80}"
            )
        new.append(piece)
        held += len(piece)
        if held < _GROWTH * len(buffer):
            continue  # not worth a resolve yet (see "Work" in the module docstring)
        buffer = buffer + "".join(new)
        hold = ""
        if buffer and "\ud800" <= buffer[-1] <= "\udbff":
            buffer, hold = buffer[:-1], buffer[-1]  # its low half may start the next piece
        buffer = _fix_surrogates(buffer)
        out: list[int] = []
        done = _resolve(buffer, False, out, *tables)
        buffer = buffer[done:] + hold
        new, held = [], len(buffer)
        yield from out
    buffer = _fix_surrogates(buffer + "".join(new))
    out = []
    _resolve(buffer, True, out, *tables)
    yield from out


def _resolve(
    buffer: str,
    final: bool,
    out: list[int],
    encoder: FastEncoder,
    special_tokens: Mapping[str, int],
    allowed: Collection[str],
    disallowed: Collection[str],
    keep: int,
    lookahead: int,
) -> int:
    """Append the ids of the certain part of ``buffer`` to ``out``; return where it ends."""
    encode_chunk = encoder._encode_chunk
    if disallowed:
        check_disallowed(buffer, disallowed)
    safe = len(buffer) if final else len(buffer) - keep
    pos = 0
    for match in find_specials(buffer, allowed):
        if match.start() >= safe:
            break  # a longer special token (or none) may start here: wait for more text
        for chunk in encoder.chunks(buffer[pos : match.start()]):
            out.extend(encode_chunk(chunk))
        out.append(special_tokens[match.group()])
        pos = match.end()
    if safe <= pos:
        return pos
    text = buffer[pos:safe]
    chunks = encoder.chunks(text)
    if final:
        for chunk in chunks:
            out.extend(encode_chunk(chunk))
        return len(buffer)
    limit = _trailing_space_start(text) - lookahead
    end = 0
    for chunk in chunks:
        if end + len(chunk) > limit:
            break
        out.extend(encode_chunk(chunk))
        end += len(chunk)
    return pos + end


# --- decoding -----------------------------------------------------------------------------------


# fmt: off
def unfinished(data: bytes) -> int:
    """Where the character that ``data`` leaves unfinished starts
    (``len(data)`` when its last character is complete).

    An unfinished character is a lead byte followed by fewer continuation
    bytes than its first bits announce: 110xxxxx two bytes in all, 1110xxxx
    three, 11110xxx four. Only the last three bytes can hold one.

    >>> unfinished(b"a\\xe2\\x82"), unfinished("a€".encode())
    (1, 4)
    """
    for back in range(1, min(3, len(data)) + 1):
        b = data[-back]
        kind = byte_kind(b)
        if kind == "lead":
            needs = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return len(data) - back if back < needs else len(data)
        if kind != "continuation":
            break  # ASCII or a byte UTF-8 never uses: nothing to wait for
    return len(data)
# fmt: on


class StreamDecoder:
    """Decode ids as they arrive: text comes out as soon as it is complete.

    A token may end in the middle of a character (GPT-2 spells an emoji with several tokens).
    ``decode`` returns the text that the ids fed so far complete, and holds back the bytes of
    an unfinished character (:func:`unfinished`) until the rest arrives. ``final=True`` ends
    the stream: bytes still held become "\ufffd", exactly as ``bpe.decode`` turns them
    (``errors="replace"``), and the decoder is ready for a new stream.

    However the ids are cut into calls, the pieces joined are ``bpe.decode(ids, vocab)``: the
    text is only cut before a lead byte (see the module docstring).

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> decoder = StreamDecoder(vocab)
    >>> [decoder.decode([i]) for i in "é!".encode()] + [decoder.decode([], final=True)]
    ['', 'é', '!', '']
    >>> decoder.decode([104, 105, 226]), decoder.decode([], final=True)  # stream cut short
    ('hi', '\ufffd')
    """

    def __init__(self, vocab: Mapping[int, bytes]) -> None:
        self.vocab = vocab
        self._held = b""

    def decode(self, ids: Iterable[int], final: bool = False) -> str:
        """The text completed by ``ids`` (an iterable of ids; ``[idx]`` for one id)."""
        if isinstance(ids, (int, str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(
                f"ids must be an iterable of token ids, e.g. [idx], got {type(ids).__name__}: "
                f"{ids!r:.80}"
            )
        data = [self._held]
        for idx in ids:  # look every id up before decoding: a bad id changes nothing
            if idx not in self.vocab:
                raise KeyError(f"token id {idx!r} is not in the vocabulary")
            data.append(self.vocab[idx])
        joined = b"".join(data)
        cut = len(joined) if final else unfinished(joined)
        self._held = joined[cut:]
        return joined[:cut].decode("utf-8", errors="replace")

    @property
    def pending(self) -> bytes:
        """The bytes held back: the start of a character whose other bytes have not come yet.

        >>> decoder = StreamDecoder({i: bytes([i]) for i in range(256)})
        >>> decoder.decode([0xE2, 0x82]), decoder.pending
        ('', b'\xe2\x82')
        """
        return self._held


# fmt: off
def decode_stream(
    ids: Iterable[int],
    vocab: Mapping[int, bytes],
) -> Iterator[str]:
    """Yield the text of ``ids`` as it becomes complete, reading ``ids``
    lazily.

    After each id, the text its bytes complete (nothing, when they end
    inside a character); at the end, whatever is still held back.
    ``"".join(decode_stream(ids, vocab))`` is ``bpe.decode(ids, vocab)``.

    >>> vocab = {i: bytes([i]) for i in range(256)}
    >>> list(decode_stream("a€".encode(), vocab))
    ['a', '€']
    >>> list(decode_stream([104, 226, 130], vocab))  # the stream ends inside
    ['h', '\ufffd']
    """
    held = b""  # the start of a character whose other bytes are still to come
    for idx in ids:
        data = held + vocab[idx]
        cut = unfinished(data)  # everything before it is complete text
        held = data[cut:]
        text = utf8_text(data[:cut])
        if text:
            yield text
    if held:  # the stream ends inside a character
        yield utf8_text(held)
# fmt: on
