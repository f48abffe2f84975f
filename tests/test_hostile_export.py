"""Hostile inputs to ``export.to_tiktoken``: the exported encoding gives our ids, or it is refused.

tiktoken (0.14, ``src/lib.rs``) holds ids as ``u32`` ranks, treats rank ``2**32 - 1`` as "no
merge", finds special tokens with an alternation built in hash-map order, and loops forever on
an empty special name. Every refusal here happens before tiktoken is called.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys

import pytest
import tiktoken

from tests.conftest import ROOT
from tokcourse import export, special, tokenizer
from tokcourse.tokenizer import Tokenizer

MERGES = {(97, 98): 256}  # "ab"


@pytest.fixture
def no_tiktoken(monkeypatch):
    """Make building a tiktoken Encoding fail loudly: a refusal must come before it."""

    def refuse(*args, **kwargs):
        raise AssertionError("tiktoken.Encoding was called")

    monkeypatch.setattr(tiktoken, "Encoding", refuse)


def ours(text, specials, allowed="all", disallowed="all", merges=MERGES):
    def ordinary(piece):
        return tokenizer.encode_ordinary(piece, merges)

    return special.encode_with_specials(text, specials, allowed, ordinary, disallowed)


# --- case 1: overlapping special tokens -----------------------------------------------------------


def test_tiktoken_picks_between_a_prefix_and_its_extension_by_hash_order():
    """The evidence for refusing: no rule of ours can follow tiktoken on overlapping names.

    Its alternation follows its hash map (FxHashMap: fixed for a table, but unrelated to
    length), so unrelated names change the winner; and a non-allowed longer name hides an
    allowed shorter one.
    """
    ranks = export.merges_to_ranks({})
    pair = {"<a>": 564, "<a>b": 565}
    answers, missed = set(), set()
    for extra in range(8):
        specials = pair | {f"<{chr(99 + i)}>": 600 + i for i in range(extra)}
        enc = tiktoken.Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=ranks,
                                special_tokens=specials)  # fmt: skip
        answers.add(tuple(enc.encode("<a>b", allowed_special="all")))
        missed.add(tuple(enc.encode("<a>b", allowed_special={"<a>"}, disallowed_special=())))
    assert ours("<a>b", pair) == [565] and ours("<a>b", pair, {"<a>"}, ()) == [564, 98]
    assert answers == {(565,), (564, 98)}  # the winner flips with unrelated names
    assert (60, 97, 62, 98) in missed  # '<a>' allowed, yet encoded as text


@pytest.mark.usefixtures("no_tiktoken")
@pytest.mark.parametrize(
    ("specials", "short", "long"),
    [
        ({"<a>": 300, "<a>b": 301}, "<a>", "<a>b"),
        ({"<a>b": 301, "<a>": 300}, "<a>", "<a>b"),  # order of the dict does not matter
        ({"<|x|>": 300, "<|x|>y": 301, "<|x|>z": 302}, "<|x|>", "<|x|>y"),
        ({"<a>": 300, "<b>": 301, "<b>a": 302, "<c>": 303}, "<b>", "<b>a"),
        ({"é": 300, "ép": 301}, "é", "ép"),
    ],
)
def test_a_special_token_that_is_a_prefix_of_another_is_refused_naming_both(specials, short, long):
    message = rf"special token '{short}' \(\d+\) is a prefix of '{long}' \(\d+\)"
    with pytest.raises(ValueError, match=message):
        export.to_tiktoken(MERGES, special_tokens=specials)


def test_a_special_token_inside_another_but_not_at_its_start_exports_exactly():
    """Not a prefix: both sides take the leftmost match, and only one name fits there."""
    specials = {"<a>": 300, "x<a>": 301, "a>b": 302}
    texts = ["x<a>", "<a>b", "xx<a>b<a>", "ab<a>x<a>b", "x<a>b"]
    names = [set(), {"<a>"}, {"x<a>"}, {"a>b"}, {"<a>", "a>b"}, "all"]
    for _ in range(5):  # a new hash order each time
        enc = export.to_tiktoken(MERGES, special_tokens=specials)
        for text in texts:
            for allowed in names:
                for disallowed in ("all", ()):
                    try:
                        want = ours(text, specials, allowed, disallowed)
                    except ValueError:
                        with pytest.raises(ValueError):
                            enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)
                        continue
                    got = enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)
                    assert got == want, (text, allowed, disallowed)


def test_random_special_tables_are_refused_or_export_exactly():
    """The whole class: any table of names over a tiny alphabet, any text, any allowed set."""
    rng = random.Random(25)
    alphabet = "<>ab"
    refused = exported = 0
    for _ in range(150):
        names = {"".join(rng.choices(alphabet, k=rng.randint(1, 4))) for _ in range(4)}
        specials = {name: 300 + i for i, name in enumerate(sorted(names))}
        try:
            enc = export.to_tiktoken(MERGES, special_tokens=specials)
        except ValueError as err:
            assert "is a prefix of" in str(err)
            refused += 1
            continue
        exported += 1
        for _ in range(20):
            text = "".join(rng.choices(alphabet, k=rng.randint(0, 10)))
            allowed = set(rng.sample(sorted(names), rng.randint(0, len(names))))
            got = enc.encode(text, allowed_special=allowed, disallowed_special=())
            assert got == ours(text, specials, allowed, ()), (specials, text, allowed)
    assert refused > 10 and exported > 10


# --- case 2: two special tokens on one id ---------------------------------------------------------


@pytest.mark.usefixtures("no_tiktoken")
def test_two_special_tokens_on_one_id_are_refused_naming_both():
    with pytest.raises(ValueError, match=r"special token '<b>': id 300 is already '<a>'"):
        export.to_tiktoken(MERGES, special_tokens={"<a>": 300, "<b>": 300})
    tok = Tokenizer()  # the same rule as register_special_tokens
    with pytest.raises(ValueError, match=r"special token '<b>': id 300 is already '<a>'"):
        tok.register_special_tokens({"<a>": 300, "<b>": 300})


# --- case 3: an empty special name ----------------------------------------------------------------

_EMPTY_NAME_CHILD = """
from tokcourse import export
try:
    enc = export.to_tiktoken({(97, 98): 256}, special_tokens={"": 300})
except ValueError as err:
    print("refused:", err)
else:
    print(enc.encode("hi", allowed_special="all"))  # tiktoken loops forever here
"""


def _limit_memory():  # the old code's endless loop also grows a list: cap it
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


def test_an_empty_special_name_is_refused_before_tiktoken_can_loop_forever():
    result = subprocess.run(
        [sys.executable, "-c", _EMPTY_NAME_CHILD],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
        preexec_fn=_limit_memory,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("refused:") and "non-empty str, got ''" in result.stdout


@pytest.mark.usefixtures("no_tiktoken")
def test_an_empty_special_name_is_refused_by_export_and_by_register():
    with pytest.raises(ValueError, match="non-empty str, got ''"):
        export.to_tiktoken(MERGES, special_tokens={"": 300})
    with pytest.raises(ValueError, match="non-empty str, got ''"):
        Tokenizer().register_special_tokens({"": 300})


# --- case 4: ids tiktoken cannot hold -------------------------------------------------------------


@pytest.mark.usefixtures("no_tiktoken")
@pytest.mark.parametrize("idx", [2**32, 2**64, 10**30])
def test_a_special_id_beyond_u32_is_a_value_error_naming_it(idx):
    with pytest.raises(ValueError, match=rf"'<a>' has the id {idx}, above the largest token id"):
        export.to_tiktoken(MERGES, special_tokens={"<a>": idx})


def test_the_largest_u32_special_id_exports_exactly():
    enc = export.to_tiktoken(MERGES, special_tokens={"<a>": 2**32 - 1})
    assert enc.encode("ab<a>", allowed_special="all") == ours("ab<a>", {"<a>": 2**32 - 1})
    assert enc.decode([2**32 - 1]) == "<a>"


def test_tiktoken_never_merges_a_pair_of_rank_u32_max():
    """The evidence: rank 2**32 - 1 is tiktoken's 'no merge' marker, so we refuse it."""
    ranks = export.merges_to_ranks({(97, 98): 2**32 - 1})
    enc = tiktoken.Encoding("x", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    assert enc.encode_ordinary("abc") == [97, 98, 99]
    assert tokenizer.encode_ordinary("abc", {(97, 98): 2**32 - 1}, None) == [2**32 - 1, 99]


@pytest.mark.usefixtures("no_tiktoken")
@pytest.mark.parametrize("idx", [-1, 2**32 - 1, 2**32, 2**70])
def test_a_merge_id_that_is_not_a_tiktoken_rank_is_a_value_error_naming_it(idx):
    with pytest.raises(ValueError, match=rf"merge \(97, 98\) -> {idx}: tiktoken's ranks are 0 "):
        export.to_tiktoken({(97, 98): idx})


# --- the same classes: other hostile names, ids and tables ----------------------------------------


@pytest.mark.usefixtures("no_tiktoken")
@pytest.mark.parametrize(
    ("specials", "error", "message"),
    [
        ({"<a>": -1}, ValueError, "'<a>' has a negative id -1"),
        ({"<a>": 256}, ValueError, r"'<a>' would take id 256, already the ordinary token b'ab'"),
        ({"<a>": 97}, ValueError, r"'<a>' would take id 97, already the ordinary token b'a'"),
        ({5: 300}, ValueError, "name must be a non-empty str, got 5"),
        ({b"<a>": 300}, ValueError, "name must be a non-empty str, got b'<a>'"),
        ({"\ud800": 300}, ValueError, "is not valid Unicode: it holds the lone surrogate"),
        ({"<a>": 300.0}, TypeError, "token ids must be ints, got float 300.0"),
        ({"<a>": True}, TypeError, "token ids must be ints, got the bool True"),
        ({"<a>": "300"}, TypeError, "token ids must be ints, got str '300'"),
        ([("<a>", 300)], TypeError, "special_tokens must be a dict {name: id}, got list"),
    ],
)
def test_hostile_special_tokens_are_refused_naming_the_problem(specials, error, message):
    with pytest.raises(error, match=message.replace("{", r"\{").replace("}", r"\}")):
        export.to_tiktoken(MERGES, special_tokens=specials)


@pytest.mark.usefixtures("no_tiktoken")
@pytest.mark.parametrize(
    ("merges", "error", "message"),
    [
        ({(97, 98): 300.0}, TypeError, r"must be ints, got float 300.0 for merge \(97, 98\)"),
        ({(97, 98): True}, TypeError, r"got the bool True for merge \(97, 98\)"),
        ({(97, "b"): 256}, TypeError, r"got str 'b' in merge \(97, 'b'\)"),
        ({97: 256}, TypeError, "merges must map pairs .id, id. to ids, got the key 97"),
        ({(97, 98, 99): 256}, TypeError, r"got the key \(97, 98, 99\)"),
        ([((97, 98), 256)], TypeError, "merges must be a dict .*, got list"),
        ({(97, 98): 100}, ValueError, r"merge \(97, 98\) -> 100 reuses id 100"),
    ],
)
def test_hostile_merges_are_refused_naming_the_problem(merges, error, message):
    with pytest.raises(error, match=message):
        export.to_tiktoken(merges)


def test_numpy_style_ids_export_as_plain_ints():
    class Index:  # any integer type with __index__ (numpy.int64, ...) is an id
        def __init__(self, value):
            self.value = value

        def __index__(self):
            return self.value

    enc = export.to_tiktoken({(97, 98): Index(256)}, special_tokens={"<a>": Index(300)})
    assert enc.encode("ab<a>", allowed_special="all") == [256, 300]


# ------------------------------------------------------------------ split patterns

EMPTY_MATCHING = [
    "",
    r"\s*",
    r"\w+|\s*",
    r"x?",
    r"(?=a)",
    r"\p{L}+|(?!\S)",
    r"(?:a|)+",
    r"[\p{L}]{0,3}",
    r"(a)|\1",
    r"(?i:'s|)",
    r"\b",
]


def test_tiktoken_panics_on_an_empty_match_so_such_patterns_are_refused():
    # The reason for the refusal: tiktoken's encoder panics (a BaseException) on an empty match.
    enc = tiktoken.Encoding(
        "raw",
        pat_str=r"\s*|\w+",
        mergeable_ranks={bytes([i]): i for i in range(256)},
        special_tokens={},
    )
    with pytest.raises(BaseException, match="out of range") as raised:
        enc.encode_ordinary("hi")
    assert not isinstance(raised.value, Exception)  # `except Exception` would not catch it


@pytest.mark.parametrize("pattern", EMPTY_MATCHING)
def test_a_pattern_that_can_match_the_empty_string_is_refused(pattern, no_tiktoken):
    with pytest.raises(ValueError, match="can match the empty string"):
        export.to_tiktoken(MERGES, pattern=pattern)


@pytest.mark.parametrize(
    "pattern", ["GPT2_SPLIT_PATTERN", "GPT4_SPLIT_PATTERN", "GPT4O_SPLIT_PATTERN"]
)
def test_the_shipped_patterns_export_and_split_as_ours(pattern):
    from tokcourse import patterns

    pat = getattr(patterns, pattern)
    assert export.pattern_problem(pat) is None
    text = "Hello world's 1234  \n\n\tcafé 😀 ok?!"
    enc = export.to_tiktoken(MERGES, pattern=pat)
    assert enc.encode_ordinary(text) == tokenizer.encode_ordinary(text, MERGES, pat)


def test_the_empty_match_check_misses_no_pattern_that_matches_empty():
    # Soundness, on random patterns from pieces of real split patterns: wherever the regex
    # engine finds an empty match on a probe text, the check refused the pattern. Also, it
    # accepts most patterns that always consume a character.
    import regex

    atoms = [
        r"a",
        r"\s",
        r"\p{L}",
        r"[^\r\n\p{L}\p{N}]",
        r"\d",
        r".",
        r"(?i:'s)",
        r"(?:a|)",
        r"[ab]",
        r"\p{N}{1,3}",
    ]
    zero_width = [r"(?=a)", r"(?!\S)", r"(?<=b)", r"^", r"$", r"\b"]
    quantifiers = ["", "?", "*", "+", "{0,3}", "{1,3}", "++", "?+", "*?", "{2}"]
    texts = ["", "a", "ab ba", "hello world  \n\n x", "b a", "123 abc's ÄÖ \t", " ", "\n"]
    rng = random.Random(1)
    accepted = 0
    for _ in range(1500):
        alternatives = []
        for _ in range(rng.randint(1, 3)):
            parts = [
                rng.choice(zero_width)
                if rng.random() < 0.15
                else rng.choice(atoms) + rng.choice(quantifiers)
                for _ in range(rng.randint(1, 3))
            ]
            alternatives.append("".join(parts))
        pattern = "|".join(alternatives)
        try:
            compiled = regex.compile(pattern)
        except regex.error:  # "multiple repeat": not a pattern at all
            continue
        empty = any(m.start() == m.end() for t in texts for m in compiled.finditer(t))
        problem = export.pattern_problem(pattern)
        assert problem is not None or not empty, pattern
        accepted += problem is None
    assert accepted > 300


@pytest.mark.parametrize(
    ("pattern", "error", "message"),
    [
        (b"\\w+", TypeError, "pattern must be a str"),
        (None, TypeError, "pattern must be a str"),
        ("[", ValueError, "cannot read split pattern"),
        ("(?V1)[[a-z]--[aeiou]]+", ValueError, "cannot read split pattern"),
    ],
)
def test_a_pattern_the_export_cannot_read_is_refused_naming_it(
    pattern, error, message, no_tiktoken
):
    with pytest.raises(error, match=message):
        export.to_tiktoken(MERGES, pattern=pattern)


def test_a_pattern_tiktoken_cannot_compile_is_a_value_error_naming_it():
    # re reads `\p{Foo}` as one character; tiktoken's engine rejects the unknown property
    with pytest.raises(ValueError, match="tiktoken cannot compile split pattern"):
        export.to_tiktoken(MERGES, pattern=r"\p{Foo}+")
