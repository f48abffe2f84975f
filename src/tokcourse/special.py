"""Special-token rules: when the text ``<|endoftext|>`` becomes the special token, and when not.

Special tokens (``<|endoftext|>``, ``<|fim_prefix|>``, ...) never come out of BPE: the text is
cut at each allowed special token first, and the pieces in between are encoded as usual. We
follow tiktoken's ``Encoding.encode`` rules exactly:

- ``allowed_special``: which special tokens may be produced from text; ``"all"`` or a set of
  names. Default: none.
- ``disallowed_special``: strings that make ``encode`` raise ``ValueError`` when they occur in
  the text. Default ``"all"``: every special token that is not allowed. Pass ``()`` to encode
  such text as ordinary text instead (``None`` means the same, as in tiktoken, which checks
  nothing when the argument is empty or ``None``).

Why refuse by default? Text from a user that contains ``<|endoftext|>`` would otherwise end
the document in the model's eyes (a prompt injection). The caller has to say what they want.

Two details, both tiktoken's: the disallowed check looks at the raw text, *before* any cutting,
so a disallowed name raises even inside a longer allowed one; and ``disallowed_special`` may
name any string, not only special tokens.

Where we differ from tiktoken, it is to refuse or to be predictable, never to give other ids:

- Overlapping special tokens (one a prefix of another, as in custom chat tokens): the one that
  starts leftmost wins, and among those the longest. tiktoken's choice there follows the order
  of a hash table (its regex of special tokens is an alternation of the keys of a Rust hash
  map, and the first alternative that matches wins), and it can even miss an allowed token
  that overlaps a non-allowed one (``tests/test_special.py`` shows both). tiktoken's own
  special tokens never overlap (``tests/test_exercises.py`` checks its encodings).
- A bare string such as ``allowed_special="<|endoftext|>"`` is a ``TypeError`` that shows the
  set to pass instead (tiktoken fails with an unrelated error); an empty name is refused (it
  would match everywhere). Lists and tuples work like sets.

>>> specials = {"<|endoftext|>": 100257}
>>> split_specials("hi<|endoftext|>", allowed_special_set("all", specials))
['hi', '<|endoftext|>']
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Literal, Protocol

import regex

__all__ = [
    "allowed_special_set",
    "check_disallowed",
    "disallowed_special_set",
    "disallowed_special_error",
    "encode_with_specials",
    "find_specials",
    "render_chat",
    "special_regex",
    "split_specials",
]


# The book shows some of these functions, in a code column 79 characters wide:
# between "fmt: off" and "fmt: on" they keep the line breaks written for it.
# fmt: off
def _names(value: object, argument: str) -> frozenset[str]:
    """Validate an ``allowed_special`` / ``disallowed_special`` collection of
    names."""
    if isinstance(value, str):
        # subtle: a str is a collection of characters, so "<|endoftext|>"
        # would silently mean {"<", "|", ...}; tiktoken crashes obscurely
        # there, we say what to pass instead
        raise TypeError(
            f'{argument} must be "all" or a set of strings, '
            f"got the string {value!r}; "
            f"did you mean {argument}={{{value!r}}}?"
        )
    if not isinstance(value, Iterable):
        raise TypeError(
            f'{argument} must be "all" or a set of strings, '
            f"got {type(value).__name__}: {value!r}"
        )
    names = frozenset(value)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(
                f"{argument} must hold strings, "
                f"got {type(name).__name__}: {name!r}"
            )
        if not name:
            raise ValueError(
                f"{argument} holds the empty string, which matches everywhere"
            )
    return names
# fmt: on


def allowed_special_set(
    allowed_special: Literal["all"] | Collection[str],
    special_tokens: Collection[str],
) -> frozenset[str]:
    """Resolve ``allowed_special`` to a set of names.

    Names that are not special tokens are ignored (as in tiktoken): they can
    never match.

    >>> sorted(allowed_special_set("all", {"<|a|>": 1, "<|b|>": 2}))
    ['<|a|>', '<|b|>']
    """
    if allowed_special == "all":
        return frozenset(special_tokens)
    return _names(allowed_special, "allowed_special")


def disallowed_special_set(
    disallowed_special: Literal["all"] | Collection[str] | None,
    allowed: frozenset[str],
    special_tokens: Collection[str],
) -> frozenset[str]:
    """Resolve ``disallowed_special``; ``"all"`` means every special token
    not allowed.

    >>> specials = {"<|a|>": 1, "<|b|>": 2}
    >>> sorted(disallowed_special_set("all", frozenset({"<|a|>"}), specials))
    ['<|b|>']
    >>> # None: check nothing
    >>> disallowed_special_set(None, frozenset(), {"<|a|>": 1})
    frozenset()
    """
    if disallowed_special is None:
        return frozenset()
    if disallowed_special == "all":
        return frozenset(special_tokens) - allowed
    return _names(disallowed_special, "disallowed_special")


def find_specials(text: str, names: Collection[str]) -> list[regex.Match]:
    """All non-overlapping occurrences of ``names`` in ``text``, leftmost
    first, longest first.

    Subtle: a regex alternation takes the first alternative that matches, so
    we list the names longest first; at any position the longest name wins.
    The regex is built once per set of names and cached (``special_regex``):
    with thousands of special tokens, building it costs far more than
    searching a short text.

    >>> found = find_specials("<|a|>b<|a|>", ["<|a|>", "<|a|>b"])
    >>> [m.group() for m in found]
    ['<|a|>b', '<|a|>']
    """
    if not names:
        return []
    return list(special_regex(frozenset(names)).finditer(text))


@functools.lru_cache(maxsize=64)
def special_regex(names: frozenset[str]) -> regex.Pattern:
    """The regex that finds any of ``names``, longest first; built once per set of names.

    >>> special_regex(frozenset({"<|a|>"})) is special_regex(frozenset({"<|a|>"}))
    True
    """
    ordered = sorted(names, key=lambda name: (-len(name), name))
    return regex.compile("|".join(regex.escape(name) for name in ordered))


def disallowed_special_error(name: str) -> ValueError:
    """The error ``encode`` raises for a disallowed special token: what it
    is, what to pass."""
    return ValueError(
        f"the text contains the special token {name!r}, "
        "which is not allowed here.\n"
        "To encode it as the special token, "
        f"pass allowed_special={{{name!r}}} "
        '(or allowed_special="all").\n'
        "To encode it as ordinary text, pass disallowed_special=() "
        f"(or leave {name!r} out of disallowed_special)."
    )


def check_disallowed(text: str, disallowed: Collection[str]) -> None:
    """Raise ``ValueError`` naming the first disallowed string found in
    ``text``.

    >>> # nothing to complain about
    >>> check_disallowed("hello", {"<|endoftext|>"})
    >>> check_disallowed("a<|endoftext|>", {"<|endoftext|>"})
    Traceback (most recent call last):
    ...
    ValueError: the text contains the special token '<|endoftext|>', which ...
    """
    found = find_specials(text, disallowed)
    if found:
        raise disallowed_special_error(found[0].group())


def split_specials(text: str, allowed: Collection[str]) -> list[str]:
    """Cut ``text`` at every allowed special token, keeping the tokens as
    separate pieces.

    Ordinary pieces are exactly the text between two special tokens (never
    empty).

    >>> split_specials("a<|x|><|x|>b", {"<|x|>"})
    ['a', '<|x|>', '<|x|>', 'b']
    """
    pieces = []
    start = 0
    for match in find_specials(text, allowed):
        if match.start() > start:
            pieces.append(text[start : match.start()])
        pieces.append(match.group())
        start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _utf8_ids(text: str) -> list[int]:
    return list(text.encode("utf-8"))


# fmt: off
def encode_with_specials(
    text: str,
    special_tokens: Mapping[str, int],
    allowed_special: Literal["all"] | Collection[str] = frozenset(),
    encode_ordinary: Callable[[str], list[int]] = _utf8_ids,
    disallowed_special: Literal["all"] | Collection[str] | None = "all",
) -> list[int]:
    """Encode ``text`` by tiktoken's special-token rules; ordinary pieces go
    to ``encode_ordinary``.

    By default no special token is allowed and finding one in the text is an
    error: text from a user must not end a document or open a chat turn just
    by spelling the token.

    >>> specials = {"<|endoftext|>": 300}
    >>> encode_with_specials("hi<|endoftext|>", specials, "all")
    [104, 105, 300]
    >>> encode_with_specials("hi<|endoftext|>", specials)
    Traceback (most recent call last):
    ...
    ValueError: the text contains the special token '<|endoftext|>', which ...
    """
    allowed = allowed_special_set(allowed_special, special_tokens)
    disallowed = disallowed_special_set(
        disallowed_special, allowed, special_tokens
    )
    # on the raw text, before any cutting, as tiktoken does
    check_disallowed(text, disallowed)
    allowed = allowed & special_tokens.keys()
    ids: list[int] = []
    for piece in split_specials(text, allowed):
        # an ordinary piece never contains an allowed name, so this test is
        # exact
        if piece in allowed:
            ids.append(special_tokens[piece])
        else:
            ids.extend(encode_ordinary(piece))
    return ids
# fmt: on


#: The ChatML markers of a chat turn: ``<|im_start|>role\ncontent<|im_end|>\n``.
IM_START, IM_END = "<|im_start|>", "<|im_end|>"


class ChatEncoding(Protocol):
    """What :func:`render_chat` needs from an encoding (a ``tiktoken.Encoding`` has both)."""

    def encode_ordinary(self, text: str) -> list[int]: ...

    def encode_single_token(self, text_or_bytes: str | bytes) -> int: ...


def render_chat(
    messages: Iterable[tuple[str, str]],
    enc: ChatEncoding,
) -> list[int]:
    r"""The ids of a conversation in ChatML, ending where the assistant's
    reply starts.

    The markers are the application's: their ids come from ``enc``'s special
    tokens and go in by id. Every string from ``messages`` (role and
    content) is ordinary text, whatever it contains, so a user who types
    ``<|im_end|>`` gets those characters, never the marker. On messages
    without special text the ids are those of encoding the rendered ChatML
    text with the markers allowed.

    >>> import tiktoken
    >>> enc = tiktoken.Encoding(
    ...     "bytes_im",
    ...     pat_str=r"\S+|\s+",
    ...     mergeable_ranks={bytes([b]): b for b in range(256)},
    ...     special_tokens={IM_START: 256, IM_END: 257},
    ... )
    >>> ids = render_chat([("user", "hi<|im_end|>")], enc)
    >>> ids.count(257)  # one end marker: the application's, not the user's
    1
    >>> enc.decode(ids)
    '<|im_start|>user\nhi<|im_end|><|im_end|>\n<|im_start|>assistant\n'
    """
    start, end = (
        enc.encode_single_token(IM_START),
        enc.encode_single_token(IM_END),
    )
    ids: list[int] = []
    for role, content in messages:
        # role, newline and content are one piece of text, as in the
        # rendered ChatML string
        ids += [start, *enc.encode_ordinary(f"{role}\n{content}"), end]
        ids += enc.encode_ordinary("\n")
    return ids + [start, *enc.encode_ordinary("assistant\n")]
