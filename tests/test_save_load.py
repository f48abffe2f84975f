"""save() writes a readable, versioned text file; load() restores it all or names the bad line."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
import regex
import tiktoken

from tokcourse.basic import BasicTokenizer
from tokcourse.patterns import (
    GPT2_SPLIT_PATTERN,
    GPT4_SPLIT_PATTERN,
    GPT4O_SPLIT_PATTERN,
    KNOWN_PATTERNS,
)
from tokcourse.pretrained import GPT4Tokenizer, PretrainedTokenizer
from tokcourse.regex import RegexTokenizer
from tokcourse.tokenizer import FORMAT_VERSION, Tokenizer

from ._parity import FRAGMENTS, ours

TEXT = "hello hello world, the tokenizer's tokens: 12345 6789!\n\n\tdone " * 4 + "".join(FRAGMENTS)
ODD_NAMES = {
    "<|endoftext|>": 5000,
    "<|im start|>": 5001,  # a space
    'say "hi"\\': 5002,  # quotes and a backslash
    "line\nbreak\r\u2028\x85": 5003,  # characters that end lines somewhere
    "▁ünï 🤗": 5004,
}


def roundtrip(tok: Tokenizer, tmp_path: Path, cls: type[Tokenizer] | None = None) -> Tokenizer:
    tok.save(tmp_path / "tok")
    loaded = (cls or type(tok))() if cls is not Tokenizer else Tokenizer()
    # a pattern of our own is code the file asks us to run: we wrote it, so we trust it
    trust = tok.pattern not in KNOWN_PATTERNS
    assert loaded.load(tmp_path / "tok.model", trust_pattern=trust) is loaded
    return loaded


def assert_same(a: Tokenizer, b: Tokenizer) -> None:
    assert a.pattern == b.pattern
    assert a.merges == b.merges and list(a.merges) == list(b.merges)
    assert a.vocab == b.vocab
    assert a.special_tokens == b.special_tokens
    assert a.byte_shuffle == b.byte_shuffle
    text = TEXT + "".join(a.special_tokens)
    assert a.encode(text, allowed_special="all") == b.encode(text, allowed_special="all")


def test_basic_round_trip(tmp_path: Path) -> None:
    tok = BasicTokenizer()
    tok.train(TEXT, 300)
    tok.register_special_tokens(ODD_NAMES)
    assert_same(tok, roundtrip(tok, tmp_path))


@pytest.mark.parametrize(
    "pattern", [GPT2_SPLIT_PATTERN, r"""\s+|[^\s"']+|["']""", "\\S+|\\s+|\n|\u2028"]
)
def test_regex_round_trip_restores_pattern(tmp_path: Path, pattern: str) -> None:
    tok = RegexTokenizer(pattern)
    tok.train(TEXT, 290)
    tok.register_special_tokens(ODD_NAMES)
    loaded = roundtrip(tok, tmp_path)
    assert_same(tok, loaded)
    assert loaded._compiled.pattern == pattern  # compiled, not just stored (minbpe forgets)


def test_pretrained_round_trip_keeps_byte_order(tmp_path: Path) -> None:
    gpt4 = ours("cl100k_base")
    loaded = roundtrip(gpt4, tmp_path, RegexTokenizer)
    assert type(loaded) is RegexTokenizer
    assert_same(gpt4, loaded)
    assert loaded.encode("<|endofprompt|> hi", allowed_special="all") == [100276, 15960]


def test_base_tokenizer_loads_either_kind(tmp_path: Path) -> None:
    basic = BasicTokenizer()
    basic.train(TEXT, 260)
    assert_same(basic, roundtrip(basic, tmp_path, Tokenizer))
    regex_tok = RegexTokenizer()
    regex_tok.train(TEXT, 260)
    assert_same(regex_tok, roundtrip(regex_tok, tmp_path, Tokenizer))


def test_file_format_is_readable(tmp_path: Path) -> None:
    tok = RegexTokenizer()
    tok.train("aaab aaab", 258)
    tok.register_special_tokens({"<|im start|>": 300})
    tok.save(str(tmp_path / "t"))
    lines = (tmp_path / "t.model").read_text(encoding="utf-8").splitlines()
    assert lines[0] == FORMAT_VERSION == "tokcourse v1"
    assert lines[1] == "pattern " + json.dumps(tok.pattern, ensure_ascii=False)
    assert lines[2:] == [
        "bytes identity",
        "special 1",
        '"<|im start|>" 300',
        "merges 2",
        "97 97 256",
        "256 97 257",
    ]
    vocab = (tmp_path / "t.vocab").read_text(encoding="utf-8").splitlines()
    assert "[a] 97" in vocab
    assert "[a][a] -> [aa] 256" in vocab
    assert "[aa][a] -> [aaa] 257" in vocab
    assert "special [<|im start|>] 300" in vocab
    assert "[\\n] 10" in vocab  # control characters escaped: one token per line


def test_pretrained_file_writes_the_byte_order(tmp_path: Path) -> None:
    ours("r50k_base").save(tmp_path / "gpt2")
    with open(tmp_path / "gpt2.model", encoding="utf-8") as f:
        lines = [next(f) for _ in range(5)]
    order = [int(x) for x in lines[2].split()[1:]]
    assert order[0] == 188 and order[ord("!")] == 0 and sorted(order) == list(range(256))
    assert lines[3:] == ["special 1\n", '"<|endoftext|>" 50256\n']


# ---------------------------------------------------------------------------- corrupt files
def good_lines() -> list[str]:
    tok = RegexTokenizer()
    tok.train("aaab aaab abab", 259)
    tok.register_special_tokens({"<|a b|>": 500, "<|c|>": 501})
    return [
        FORMAT_VERSION,
        "pattern " + json.dumps(tok.pattern),
        "bytes identity",
        "special 2",
        '"<|a b|>" 500',
        '"<|c|>" 501',
        "merges 3",
        *(f"{a} {b} {idx}" for (a, b), idx in tok.merges.items()),
    ]


def edit(line: int, new: str | None):
    def apply(lines: list[str]) -> list[str]:
        lines = list(lines)
        if new is None:
            del lines[line - 1]
        else:
            lines[line - 1] = new
        return lines

    return apply


CORRUPT = [
    ("empty file", lambda lines: [], 1, r"the file ends here, expected the format line"),
    ("other format", edit(1, "minbpe v1"), 1, r"expected 'tokcourse v1'"),
    ("future version", edit(1, "tokcourse v2"), 1, r"expected 'tokcourse v1'"),
    ("pattern missing", edit(2, "regex foo"), 2, r"starting with 'pattern'"),
    ("pattern not json", edit(2, "pattern \\p{L}+"), 2, r"pattern is not valid JSON"),
    ("pattern not a string", edit(2, "pattern 42"), 2, r"must be a str, got int"),
    ("pattern unknown", edit(2, 'pattern "(?<"'), 2, r"unknown split pattern .*trust_pattern=True"),
    ("pattern nested JSON", edit(2, "pattern " + "[" * 100_000), 2, r"nested too deeply"),
    ("pattern lone surrogate", edit(2, r'pattern "\ud800"'), 2, r"unknown split pattern"),
    (
        "pattern null for regex",
        edit(2, "pattern null"),
        2,
        r"no split pattern; load it with BasicTokenizer",
    ),  # fmt: skip
    ("bytes bad", edit(3, "bytes 1 2 3"), 3, r"permutation of 0\.\.255"),
    ("bytes missing", edit(3, None), 3, r"starting with 'bytes'"),
    ("special count not int", edit(4, "special two"), 4, r"expected 'special <count>'"),
    ("special count negative", edit(4, "special -1"), 4, r"expected 'special <count>'"),
    ("special name not json", edit(5, "<|a b|> 500"), 5, r"expected a special token"),
    ("special id missing", edit(5, '"<|a b|>"'), 5, r"expected a special token"),
    ("special id not int", edit(5, '"<|a b|>" five'), 5, r"expected a special token"),
    ("special id huge", edit(5, '"<|a b|>" ' + "9" * 5000), 5, r"expected a special token"),
    ("special id 10**40", edit(5, f'"<|a b|>" {10**40}'), 5, r"expected a special token"),
    ("special id 2**32", edit(5, f'"<|a b|>" {2**32}'), 5, r"above the largest id 4294967295"),
    ("special id superscript", edit(5, '"<|a b|>" 5²'), 5, r"expected a special token"),
    ("special count huge", edit(4, "special " + "9" * 5000), 4, r"expected 'special <count>'"),
    ("special twice", edit(6, '"<|a b|>" 501'), 6, r"appears twice"),
    ("special empty name", edit(6, '"" 501'), 6, r"non-empty str"),
    ("special id of a byte", edit(6, '"<|c|>" 65'), 6, r"id 65, already the ordinary token b'A'"),
    ("special id of a merge", edit(6, '"<|c|>" 257'), 6, r"id 257, already the ordinary token"),
    ("special ids clash", edit(6, '"<|c|>" 500'), 6, r"id 500 is already '<\|a b\|>'"),
    ("special count too high", edit(4, "special 3"), 7, r"expected a special token"),
    ("merges count missing", edit(7, "3"), 7, r"starting with 'merges'"),
    (
        "merge too few fields",
        edit(8, "97 97"),
        8,
        r"expected a merge 'a b new_id' \(3 non-negative",
    ),
    ("merge not ints", edit(8, "a a 256"), 8, r"3 non-negative integers"),
    ("merge negative", edit(8, "97 -1 256"), 8, r"3 non-negative integers"),
    ("merge id huge", edit(8, "97 98 " + "9" * 5000), 8, r"3 non-negative integers"),
    ("merge id 2**32", edit(8, f"97 98 {2**32}"), 8, r"above the largest token id 4294967295"),
    ("merges count huge", edit(7, "merges " + "9" * 5000), 7, r"expected 'merges <count>'"),
    (
        "merge ids out of order",
        lambda lines: [*lines[:7], "97 98 257", "97 257 256", "97 256 258"],
        9,
        r"-> 256 comes after id 257: merge ids must rise in file order",
    ),
    (
        "merge forward reference",
        edit(8, "97 257 256"),
        8,
        r"uses an id not defined on an earlier line",
    ),  # fmt: skip
    ("merge reuses an id", edit(9, "256 97 256"), 9, r"reuses id 256"),
    ("merge reuses a byte id", edit(9, "256 97 98"), 9, r"reuses id 98"),
    ("pair merged twice", edit(9, "97 98 257"), 9, r"the pair \(97, 98\) is merged twice"),
    (
        "truncated merges",
        lambda lines: lines[:-1],
        10,
        r"the file ends here, expected a merge .*truncated",
    ),
    ("extra line", lambda lines: [*lines, "1 2 3"], 11, r"unexpected extra line '1 2 3'"),
]


@pytest.mark.parametrize(
    ("corrupt", "line", "message"),
    [pytest.param(c, line, m, id=name) for name, c, line, m in CORRUPT],
)
def test_corrupt_file_names_the_line(tmp_path: Path, corrupt, line: int, message: str) -> None:
    path = tmp_path / "bad.model"
    lines = corrupt(good_lines())
    path.write_text("\n".join(lines) + "\n" if lines else "", encoding="utf-8")
    tok = RegexTokenizer()
    before = (tok.pattern, dict(tok.merges), dict(tok.special_tokens))
    with pytest.raises(ValueError) as info:
        tok.load(path)
    text = str(info.value)
    assert f"bad.model, line {line}: " in text, text
    assert re.search(message, text), text
    assert (tok.pattern, tok.merges, tok.special_tokens) == before  # nothing half-loaded


def test_merge_ids_may_have_gaps(tmp_path: Path) -> None:
    path = tmp_path / "gaps.model"
    lines = [*good_lines()[:7], "97 98 256", "97 256 300", "97 300 301"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tok = RegexTokenizer().load(path)
    assert list(tok.merges.values()) == [256, 300, 301]
    assert tok.encode("aaab") == tok.encode("aaab", fast=True) == [301]


def test_non_utf8_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.model"
    lines = good_lines()
    lines[4] = '"<|a b|>" 500'
    data = ("\n".join(lines) + "\n").encode("utf-8").replace(b"<|a b|>", b"<|a \xff|>")
    path.write_bytes(data)
    tok = RegexTokenizer()
    with pytest.raises(ValueError, match=r"bad\.model, line 5: byte 0xff is not valid UTF-8"):
        tok.load(path)
    assert tok.merges == {}


# ---------------------------------------------------------------------------- hostile patterns
BOMB = "(?:(?:a{1000}){1000}){1000}|."  # compiling it takes gigabytes
REDOS = "(a|aa)+c|."  # matching "a" * 38 backtracks for minutes


def pattern_file(tmp_path: Path, pattern: str) -> Path:
    path = tmp_path / "hostile.model"
    text = f"tokcourse v1\npattern {json.dumps(pattern)}\nbytes identity\nspecial 0\nmerges 0\n"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("cls", [Tokenizer, RegexTokenizer])
def test_hostile_pattern_refused_before_compiling(tmp_path: Path, cls) -> None:
    path = pattern_file(tmp_path, BOMB)
    assert path.stat().st_size == 87
    tok = cls()
    before = tok.pattern
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"hostile\.model, line 2: unknown split pattern"):
        tok.load(path)
    with pytest.raises(ValueError, match=r"line 2: .*would expand to 1,000,000,001 elements"):
        tok.load(path, trust_pattern=True)  # even trusted: refused before the compiler runs
    assert time.perf_counter() - start < 1  # generous: it takes milliseconds (never compiled)
    assert tok.pattern == before


def test_trusted_pattern_loads_and_runs_with_a_time_limit(tmp_path: Path) -> None:
    path = pattern_file(tmp_path, REDOS)
    with pytest.raises(ValueError, match=r"unknown split pattern '\(a\|aa\)\+c\|\.'"):
        RegexTokenizer().load(path)
    tok = RegexTokenizer().load(path, trust_pattern=True)
    assert tok.pattern == REDOS
    assert tok.encode("aac b") == [97, 97, 99, 32, 98]  # a sane text encodes as usual
    calls = [
        lambda: tok.encode("a" * 38),
        lambda: tok.encode("a" * 38, fast=True),
        lambda: list(tok.encode_iterable(["a" * 38])),
        lambda: tok.train("a" * 38, 257),
        lambda: tok.train("a" * 38, 257, special_tokens=["<|x|>"]),
    ]
    for call in calls:
        start = time.perf_counter()
        with pytest.raises(TimeoutError, match=r"split pattern '\(a\|aa\)\+c\|\.' took more"):
            call()
        assert time.perf_counter() - start < 30  # the limit is ~1 s; without it: minutes


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(?<", r"invalid split pattern"),
        ("(" * 100_000 + "a" + ")" * 100_000, r"nested too deeply|invalid split pattern"),
        ("", r"empty"),
    ],
)
def test_trusted_pattern_still_checked(tmp_path: Path, pattern: str, message: str) -> None:
    tok = RegexTokenizer()
    with pytest.raises(ValueError, match=r"line 2: .*" + message):
        tok.load(pattern_file(tmp_path, pattern), trust_pattern=True)
    assert tok.pattern == RegexTokenizer().pattern


def test_known_patterns_load_without_trust(tmp_path: Path) -> None:
    for pattern in (GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, GPT4O_SPLIT_PATTERN):
        tok = RegexTokenizer().load(pattern_file(tmp_path, pattern))
        assert tok.pattern == pattern and isinstance(tok._compiled, regex.Pattern)
    assert Tokenizer().load(pattern_file(tmp_path, None)).pattern is None
    with pytest.raises(TypeError, match="trust_pattern must be True or False"):
        Tokenizer().load(pattern_file(tmp_path, None), trust_pattern="yes")


def test_load_replaces_a_stale_encoding_name(tmp_path: Path) -> None:
    gpt4 = GPT4Tokenizer()
    gpt4.save(tmp_path / "gpt4")
    assert GPT4Tokenizer().load(tmp_path / "gpt4.model").encoding_name == "cl100k_base"
    other = RegexTokenizer()
    other.train(TEXT, 260)
    other.save(tmp_path / "other")
    loaded = GPT4Tokenizer().load(tmp_path / "other.model")
    assert loaded.encoding_name == "" and loaded.merges == other.merges
    # built from an Encoding object whose name tiktoken's registry may not know
    enc = tiktoken.get_encoding("r50k_base")
    custom = tiktoken.Encoding(
        "my_gpt2", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks, special_tokens={}
    )
    mine = PretrainedTokenizer(custom)
    mine.save(tmp_path / "mine")
    assert PretrainedTokenizer(custom).load(tmp_path / "mine.model").encoding_name == "my_gpt2"
    assert PretrainedTokenizer(custom).load(tmp_path / "gpt4.model").encoding_name == ""


# ---------------------------------------------------------------------------- atomic save
def test_failed_save_leaves_the_old_files_intact(tmp_path: Path) -> None:
    tok = RegexTokenizer()
    tok.train(TEXT, 260)
    tok.save(tmp_path / "t")
    old = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert sorted(old) == ["t.model", "t.vocab"]

    tok.special_tokens["<|\ud800|>"] = 999  # the tables are public: edited by hand
    with pytest.raises(ValueError, match=r"cannot save .*t\.model.*not valid Unicode"):
        tok.save(tmp_path / "t")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old
    del tok.special_tokens["<|\ud800|>"]

    tok._pattern = "\ud800|."  # as an old version of the setter allowed
    with pytest.raises(ValueError, match=r"cannot save .*split pattern .*not valid Unicode"):
        tok.save(tmp_path / "t")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old

    tok.pattern = GPT2_SPLIT_PATTERN
    tok.merges[(1, 2)] = 5  # reuses a byte id: load would refuse the file
    with pytest.raises(ValueError, match=r"cannot save .*reuses id 5"):
        tok.save(tmp_path / "t")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old


def test_save_is_atomic_when_the_write_fails(tmp_path: Path, monkeypatch) -> None:
    tok = RegexTokenizer()
    tok.train(TEXT, 260)
    tok.save(tmp_path / "t")
    old = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    tok.train(TEXT, 270)

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        tok.save(tmp_path / "t")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == old  # no temp file left
    monkeypatch.undo()
    tok.save(tmp_path / "t")
    assert RegexTokenizer().load(tmp_path / "t.model").merges == tok.merges


def test_save_keeps_the_file_permissions(tmp_path: Path) -> None:
    tok = Tokenizer()
    tok.save(tmp_path / "t")
    umask = os.umask(0o022)
    os.umask(umask)
    assert (tmp_path / "t.model").stat().st_mode & 0o777 == 0o666 & ~umask
    os.chmod(tmp_path / "t.model", 0o640)
    tok.save(tmp_path / "t")
    assert (tmp_path / "t.model").stat().st_mode & 0o777 == 0o640


def test_what_save_cannot_write_is_refused_up_front() -> None:
    with pytest.raises(ValueError, match=r"split pattern .*lone surrogate '\\ud800'"):
        RegexTokenizer("\ud800|.")
    tok = RegexTokenizer()
    with pytest.raises(ValueError, match=r"not valid Unicode"):
        tok.pattern = "a|\udfff|."
    assert tok.pattern == RegexTokenizer().pattern
    with pytest.raises(ValueError, match=r"not valid Unicode"):
        tok.register_special_tokens({"<|\udfff|>": 300})
    with pytest.raises(ValueError, match=r"above the largest token id 4294967295"):
        tok.register_special_tokens({"<|big|>": 10**40})
    tok.register_special_tokens({"<|max|>": 2**32 - 1})  # tiktoken's largest id is fine
    assert tok.n_vocab == 2**32


def test_good_lines_load(tmp_path: Path) -> None:
    path = tmp_path / "good.model"
    path.write_text("\n".join(good_lines()) + "\n", encoding="utf-8")
    tok = RegexTokenizer().load(path)
    assert tok.special_tokens == {"<|a b|>": 500, "<|c|>": 501}
    path.write_text("\r\n".join(good_lines()), encoding="utf-8")  # Windows line ends, no final
    assert RegexTokenizer().load(path).merges == tok.merges


def test_basic_refuses_a_pattern_file(tmp_path: Path) -> None:
    path = tmp_path / "good.model"
    path.write_text("\n".join(good_lines()) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: .*load it with RegexTokenizer"):
        BasicTokenizer().load(path)


def test_load_executes_nothing(tmp_path: Path) -> None:
    """A pattern or name that looks like code stays a string."""
    tok = RegexTokenizer(r"__import__\('os'\)|[\s\S]")
    tok.register_special_tokens({"__import__('os').system('false')": 400})
    tok.save(tmp_path / "x")
    loaded = RegexTokenizer().load(tmp_path / "x.model", trust_pattern=True)
    assert loaded.special_tokens == {"__import__('os').system('false')": 400}
    assert loaded.pattern == tok.pattern
