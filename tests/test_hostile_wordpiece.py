"""WordPiece on hostile input: vocab files (issue 25).

Every answer is checked against Hugging Face ``tokenizers`` run on the same input: where it
loads, we load the same vocabulary; where it refuses, we refuse. The near-linear work of the
normalizing paths is counted, never timed (see ``tests/test_linear_work.py``).
"""

from __future__ import annotations

import functools

import pytest
from tokenizers import Tokenizer, normalizers, pre_tokenizers
from tokenizers.models import WordPiece as HFWordPiece

from tokcourse.course import corpora
from tokcourse.wordpiece import (
    WordPiece,
    load_vocab,
)


def hf_from_vocab(path) -> Tokenizer:
    """BERT uncased over ``path``, as ``BertWordPieceTokenizer`` builds it (no [SEP] needed)."""
    tok = Tokenizer(HFWordPiece.from_file(str(path), unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


@functools.cache
def minilm() -> tuple[WordPiece, Tokenizer]:
    path = corpora.minilm_vocab_path()
    return WordPiece.from_file(path), hf_from_vocab(path)


# ---------------------------------------------------------------------------- 1. vocab lines
VOCAB_FILES = {
    "trailing spaces": b"[UNK]\nhello \nworld  \n##s \n",
    "CRLF": b"[UNK]\r\nhello\r\nworld\r\n##s\r\n",
    "tabs and U+3000": "[UNK]\t\nhello\t \nworld\u3000\n##s\u2003\n".encode(),
    "no final newline": b"[UNK]\nhello\nworld\n##s",
    "lone CR inside a line": b"[UNK]\nhel\rlo\nhello\r\rworld\n\n##s",
    "not white space to Rust": "[UNK]\nhello\x1c\nworld\x85\n\u200b##s\u200b\n".encode(),
    "leading space kept": b"[UNK]\n hello\nhello\nworld\n##s\n",
    "duplicates after trimming": b"[UNK]\nhello\nhello \nworld\nhello\t\n##s\n",
    "empty lines": b"\n[UNK]\n\nhello\nworld\n\n##s\n",
    "byte-order mark kept": b"\xef\xbb\xbfhello\n[UNK]\nworld\n##s\n",
}


@pytest.mark.parametrize("name", VOCAB_FILES)
def test_vocab_lines_load_as_tokenizers_loads_them(name: str, tmp_path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_bytes(VOCAB_FILES[name])
    hf = hf_from_vocab(path)
    assert load_vocab(path) == hf.get_vocab()
    text = "Hello worlds, HELLO\tworld!"
    want = hf.encode(text, add_special_tokens=False).tokens
    assert WordPiece.from_file(path).tokenize(text) == want


def test_trailing_white_space_no_longer_makes_every_token_unknown(tmp_path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_bytes(VOCAB_FILES["trailing spaces"])
    assert WordPiece.from_file(path).tokenize("hello worlds") == ["hello", "world", "##s"]


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"[UNK]\nab\n\xff\xfe\nc\n", 3),
        (b"[UNK]\nok\nlatin-1 caf\xe9\n", 3),
        (b"\xe9t\xe9\n[UNK]\n", 1),
        (b"[UNK]\n\xed\xa0\x80\n", 2),  # an encoded surrogate is not UTF-8 either
        (b"[UNK]\nx\n\xe2\x82", 3),  # cut inside a character
    ],
)
def test_a_vocab_that_is_not_utf8_is_a_value_error_naming_file_and_line(
    data: bytes, line: int, tmp_path
) -> None:
    path = tmp_path / "bad vocab.txt"
    path.write_bytes(data)
    with pytest.raises(Exception, match="valid UTF-8"):  # tokenizers refuses it too
        HFWordPiece.from_file(str(path))
    with pytest.raises(ValueError, match=rf"bad vocab\.txt: line {line} is not UTF-8"):
        load_vocab(path)
    with pytest.raises(ValueError, match=f"line {line}"):
        WordPiece.from_file(path)
