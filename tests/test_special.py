"""Special tokens behave exactly as in tiktoken: a matrix of (text, allowed, disallowed) cases."""

from __future__ import annotations

import itertools
import re

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse import special as special_module
from tokcourse.regex import RegexTokenizer
from tokcourse.special import find_specials, split_specials

from ._parity import ENCODINGS, PARITY_EXAMPLES, any_text, ours, tiktoken_encoding

TEXTS = [
    "",
    "hello world",
    "<|endoftext|>",
    "<|endoftext|><|endoftext|>",
    "hello<|endoftext|>world",
    "Hello <|endoftext|> world",
    "x   <|endoftext|>   y",
    "\n\n<|endoftext|>\n\n",
    "<|endoftext|",  # not quite
    "<|endoftext|>>",
    "<<|endoftext|>",
    "<|endoftext<|endoftext|>|>",
    "<|endoftext|> <|endoftext|>",
    "<|fim_prefix|>def f(<|fim_suffix|>):<|fim_middle|>",
    "<|endofprompt|>answer",
    "<|fim_prefix|><|endoftext|><|endofprompt|>",
    "<|im_start|>user<|im_end|>",  # chat markup: not a special token of these encodings
    "<|ENDOFTEXT|>",
    "endoftext",
    "a\ud800<|endoftext|>\ud83d\ude00",  # surrogates next to a special token
    "<|endoftext|>   ",
    "   <|endoftext|>",
    "don't<|endoftext|>'s",
    "12345<|endoftext|>678",
]

ALLOWED = [
    frozenset(),
    "all",
    {"<|endoftext|>"},
    {"<|fim_prefix|>", "<|fim_middle|>"},
    {"<|endofprompt|>"},
    {"<|im_start|>"},  # not a special token: ignored
]

DISALLOWED = [
    "all",
    (),
    set(),
    {"<|endoftext|>"},
    ["<|fim_prefix|>"],
    {"world"},  # any string may be disallowed, not only special tokens
]


def outcome(encode, text: str, allowed, disallowed) -> tuple:
    """("ids", ids) or ("ValueError", the token the message names)."""
    try:
        return ("ids", encode(text, allowed_special=allowed, disallowed_special=disallowed))
    except ValueError as err:
        named = re.search(r"special token ('.*?'|\".*?\")", str(err))
        return ("ValueError", named.group(1) if named else str(err))


@pytest.mark.parametrize("name", ENCODINGS)
def test_special_token_matrix(name: str) -> None:
    enc, tok = tiktoken_encoding(name), ours(name)
    cases = list(itertools.product(TEXTS, ALLOWED, DISALLOWED))
    mismatches = []
    for text, allowed, disallowed in cases:
        want = outcome(enc.encode, text, allowed, disallowed)
        got = outcome(tok.encode, text, allowed, disallowed)
        if got != want:
            mismatches.append((text, allowed, disallowed, want, got))
    assert mismatches == [], f"{len(mismatches)} of {len(cases)} cases differ: {mismatches[:5]}"


@pytest.mark.parametrize("name", ENCODINGS)
def test_special_tokens_generated(name: str) -> None:
    """Random texts around the encoding's special tokens, random allowed/disallowed sets."""
    enc, tok = tiktoken_encoding(name), ours(name)
    names = sorted(enc._special_tokens)
    near_misses = [n[:-1] for n in names] + [n[1:] for n in names] + ["<|", "|>", "zq"]
    pieces = st.one_of(st.sampled_from(names + near_misses), any_text)
    name_sets = st.sets(st.sampled_from([*names, "<|im_start|>", "zq"]))

    @settings(max_examples=max(100, PARITY_EXAMPLES // 3), deadline=None)
    @given(
        st.lists(pieces, max_size=8).map("".join),
        st.one_of(st.just("all"), name_sets),
        st.one_of(st.just("all"), st.just(()), name_sets),
    )
    def check(text: str, allowed, disallowed) -> None:
        want = outcome(enc.encode, text, allowed, disallowed)
        assert outcome(tok.encode, text, allowed, disallowed) == want

    check()


def test_matrix_covers_every_outcome() -> None:
    """The matrix is not vacuous: it has ids, errors, and special ids among its results."""
    enc = tiktoken_encoding("cl100k_base")
    kinds = set()
    for text, allowed, disallowed in itertools.product(TEXTS, ALLOWED, DISALLOWED):
        kind, value = outcome(enc.encode, text, allowed, disallowed)
        kinds.add(kind if kind == "ValueError" else ("special" if 100257 in value else "plain"))
    assert kinds == {"ValueError", "special", "plain"}


@pytest.mark.parametrize("name", ENCODINGS)
def test_default_refuses_special_text(name: str) -> None:
    tok = ours(name)
    with pytest.raises(ValueError) as info:
        tok.encode("Hello <|endoftext|>")
    message = str(info.value)
    assert "'<|endoftext|>'" in message
    assert "allowed_special={'<|endoftext|>'}" in message
    assert "disallowed_special=()" in message


@pytest.mark.parametrize("name", ENCODINGS)
def test_special_ids_decode(name: str) -> None:
    tok, enc = ours(name), tiktoken_encoding(name)
    for special, idx in enc._special_tokens.items():
        ids = tok.encode(f"a{special}b", allowed_special="all")
        assert idx in ids
        assert tok.decode(ids) == f"a{special}b" == enc.decode(ids)


def test_hello_endoftext_world_gpt2() -> None:
    # errata: the space before the special token is its own token
    assert ours("r50k_base").encode("Hello <|endoftext|> world", allowed_special="all") == [
        15496,
        220,
        50256,
        995,
    ]


# ---------------------------------------------------------------------------- overlaps
def chat_tokenizer() -> RegexTokenizer:
    """A small tokenizer with overlapping special tokens: one is a prefix of another."""
    tok = RegexTokenizer()
    tok.register_special_tokens({"<|a|>": 300, "<|a|>b": 301, "<|a": 302, "b<|a": 303})
    return tok


@pytest.mark.parametrize(
    ("text", "allowed", "pieces"),
    [
        ("x<|a|>bc", "all", ["x", "<|a|>b", "c"]),  # longest at the leftmost position
        ("x<|a|>c", "all", ["x", "<|a|>", "c"]),
        ("x<|ac", "all", ["x", "<|a", "c"]),
        ("b<|a|>b", "all", ["b<|a", "|>b"]),  # leftmost first, even if shorter
        ("x<|a|>bc", {"<|a|>"}, ["x", "<|a|>", "bc"]),
        ("x<|a|>bc", {"<|a|>b"}, ["x", "<|a|>b", "c"]),
        ("x<|a|>bc", {"<|a"}, ["x", "<|a", "|>bc"]),
    ],
)
def test_overlapping_specials_longest_wins(text: str, allowed, pieces: list[str]) -> None:
    tok = chat_tokenizer()
    ids = tok.encode(text, allowed_special=allowed, disallowed_special=())
    expected = []
    for piece in pieces:
        if piece in tok.special_tokens and (allowed == "all" or piece in allowed):
            expected.append(tok.special_tokens[piece])
        else:
            expected.extend(tok.encode_ordinary(piece))
    assert ids == expected
    assert tok.decode(ids) == text


def test_special_inside_a_longer_allowed_one_still_raises() -> None:
    """As in tiktoken, the disallowed check reads the raw text: '<|a|>' is in '<|a|>b'."""
    tok = chat_tokenizer()
    with pytest.raises(ValueError, match=re.escape("'<|a|>'")):
        tok.encode("x<|a|>b", allowed_special={"<|a|>b", "<|a", "b<|a"})
    base = tiktoken_encoding("cl100k_base")
    enc = tiktoken.Encoding(
        "overlap",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={"<|a|>": 100300, "<|a|>b": 100301},
    )
    with pytest.raises(ValueError, match=re.escape("'<|a|>'")):
        enc.encode("x<|a|>b", allowed_special={"<|a|>b"})


def test_tiktoken_overlap_behaviour_is_not_longest() -> None:
    """Why we do not copy tiktoken here (documented in special.py). If this starts failing,
    tiktoken changed its rule: re-check the docstring of tokcourse.special."""
    base = tiktoken_encoding("cl100k_base")
    specials = {"<|a|>": 100300, "<|a|>b": 100301, "<|a": 100302}
    enc = tiktoken.Encoding(
        "overlap", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
        special_tokens=specials,
    )  # fmt: skip
    # all allowed: tiktoken takes '<|a|>', neither the longest nor the shortest
    assert enc.encode("x<|a|>bc", allowed_special="all") == [87, 100300, 9081]
    # only the longest allowed: tiktoken does not find it at all
    only_long = enc.encode("x<|a|>bc", allowed_special={"<|a|>b"}, disallowed_special=())
    assert 100301 not in only_long
    tok = RegexTokenizer(base._pat_str)
    tok.merges, tok.byte_shuffle = ours("cl100k_base").merges, ours("cl100k_base").byte_shuffle
    tok.vocab = ours("cl100k_base").vocab
    tok.register_special_tokens(specials)
    assert tok.encode("x<|a|>bc", allowed_special="all") == [87, 100301, 66]


def test_find_and_split_specials() -> None:
    assert [m.group() for m in find_specials("<|a|>b<|a", ["<|a", "<|a|>b"])] == ["<|a|>b", "<|a"]
    assert split_specials("", {"<|a|>"}) == []
    assert split_specials("<|a|>", {"<|a|>"}) == ["<|a|>"]
    assert split_specials("ab", set()) == ["ab"]


def test_special_regex_is_built_once_per_set_of_names(monkeypatch) -> None:
    """With 5,000 special tokens, building the regex costs far more than the search.

    We count the names escaped into a regex: one build for all the calls below (the same
    names are disallowed, then allowed). Rebuilding on every call escapes them 40 times.
    """
    tok = RegexTokenizer()
    names = {f"<|tok{i}|>": 1000 + i for i in range(5000)}
    tok.register_special_tokens(names)
    escaped = []
    real_escape = special_module.regex.escape

    def counting_escape(name, *args, **kwargs):
        escaped.append(name)
        return real_escape(name, *args, **kwargs)

    monkeypatch.setattr(special_module.regex, "escape", counting_escape)
    special_module.special_regex.cache_clear()
    for _ in range(20):
        assert tok.encode("hi <|tok7|>", allowed_special="all") == [104, 105, 32, 1007]
        with pytest.raises(ValueError, match=r"'<\|tok7\|>', which is not allowed"):
            tok.encode("hi <|tok7|>")
    assert len(escaped) == 5000  # each name once


# ---------------------------------------------------------------------------- registering
def test_register_adds_and_checks() -> None:
    tok = RegexTokenizer()
    tok.register_special_tokens({"<|endoftext|>": 1000})
    tok.register_special_tokens({"<|im start|>": 1001})  # names may hold spaces
    assert tok.special_tokens == {"<|endoftext|>": 1000, "<|im start|>": 1001}
    tok.register_special_tokens({"<|endoftext|>": 1000})  # same again: fine
    assert tok.encode("<|im start|>", allowed_special="all") == [1001]
    assert tok.decode([1001, 104, 1000]) == "<|im start|>h<|endoftext|>"


def test_the_encode_with_specials_check_accepts_another_correct_way() -> None:
    """A scan with str.find instead of a regex passes the check (the matrix and the rest)."""
    from tokcourse import check
    from tokcourse.course.exercises import run_check

    def encode_with_specials(
        text,
        special_tokens,
        allowed_special=frozenset(),
        encode_ordinary=lambda piece: list(piece.encode("utf-8")),
        disallowed_special="all",
    ):
        allowed = set(special_tokens) if allowed_special == "all" else set(allowed_special)
        if disallowed_special == "all":
            disallowed = set(special_tokens) - allowed
        else:
            disallowed = set(disallowed_special)
        for name in disallowed:
            if name in text:
                raise ValueError(f"disallowed: {name!r}")
        allowed &= set(special_tokens)
        ids, start = [], 0
        while True:
            found = [(text.find(n, start), -len(n), n) for n in allowed if n in text[start:]]
            if not found:
                break
            at, _, name = min(found)
            if at > start:
                ids += encode_ordinary(text[start:at])
            ids.append(special_tokens[name])
            start = at + len(name)
        if start < len(text):
            ids += encode_ordinary(text[start:])
        return ids

    result = run_check(check.exercise("encode_with_specials"), encode_with_specials, quiet=True)
    assert result.passed, result.message
