"""Hostile inputs: does encoding time grow linearly with the input, as tiktoken's does?

Each row is one shape of text at two sizes, ``n`` and ``4n`` (GPT-4, ``cl100k_base``): runs
that make one enormous chunk (spaces, one letter, one emoji, one random a-z word with many
distinct merges, 62.5 KB at n) and lines of ``"\\n"`` (25,000 of them at n).
Columns: tiktoken's ``encode_ordinary``; our default ``Tokenizer.encode_ordinary``; a
``FastEncoder``; ``encode_iterable`` fed 4 KB pieces, and, for the newlines, one line at a
time. Every path starts from an empty chunk cache on every run (a warm cache would answer the
one big chunk in a lookup). Ids are checked equal to tiktoken's. The growth ratio is
time(4n) / time(n); for a linear algorithm it is about 4, for a quadratic one about 16.

Then one table per other tokenizer the package ships (``tables``), each against its library
where there is one, output checked equal: GPT-2 and GPT-4o (``GPT2Tokenizer``,
``GPT4oTokenizer``) and a ``RegexTokenizer`` trained here against tiktoken; a
``BasicTokenizer`` (no split: every text is one chunk) on its own; ``SentencePieceBPE`` on
Mistral 7B v1's model and ``SentencePieceUnigram`` on a model trained here against
sentencepiece; and BERT's ``WordPiece`` against Hugging Face ``tokenizers`` on text whose
normalization (NFD) is hostile: a letter and 1 MB at 4n of combining marks of alternating
classes (CPython's NFD sorts them with an insertion sort), a class-0 character that decomposes
into two marks (U+0F73), and plain accented letters as the control.
"""

from __future__ import annotations

import io
import random
import time
from collections.abc import Callable

import tiktoken
from _timing import best_of  # noqa: E402

from tokcourse import (
    GPT2_SPLIT_PATTERN,
    BasicTokenizer,
    GPT2Tokenizer,
    GPT4oTokenizer,
    GPT4Tokenizer,
    Llama3Tokenizer,
    Llama4Tokenizer,
    RegexTokenizer,
)
from tokcourse.course.data import corpora
from tokcourse.export import to_tiktoken
from tokcourse.sentencepiece_bpe import SentencePieceBPE
from tokcourse.unigram import SentencePieceUnigram
from tokcourse.wordpiece import WordPiece

REPEAT = 5
PIECE = 4096


def shapes(scale: int) -> dict[str, tuple[str, list[str] | None]]:
    """``{row: (text, lines or None)}`` at ``scale`` 1 (size n) or 4 (size 4n)."""
    rng = random.Random(0)
    mb = 250_000 * scale  # characters; 4n is 1 MB (the emoji: 4 bytes each)
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(62_500 * scale))
    lines = ["\n"] * (25_000 * scale)
    return {
        "spaces": (" " * mb, None),
        "one letter": ("a" * mb, None),
        "one emoji": ("\U0001f600" * (mb // 4), None),
        "random a-z word": (word, None),
        'lines of "\\n", line by line': ("".join(lines), lines),
    }


def describe(row: str, text: str) -> str:
    size = len(text.encode("utf-8"))
    return f"{size / 1e6:.2f} MB" if size >= 200_000 else f"{size / 1e3:.1f} KB"


def measure_one(text: str, lines: list[str] | None, tok, enc) -> dict[str, float]:
    fast = tok.fast_encoder()
    want = enc.encode_ordinary(text)
    pieces = [text[i : i + PIECE] for i in range(0, len(text), PIECE)]
    runs = {
        "tiktoken": lambda: enc.encode_ordinary(text),
        "default": lambda: tok.encode_ordinary(text),
        "FastEncoder": lambda: fast.encode_ordinary(text),
        "stream 4 KB": lambda: list(tok.encode_iterable(pieces)),
    }
    if lines is not None:
        runs["stream line by line"] = lambda: list(tok.encode_iterable(lines))
    times = {}
    for column, run in runs.items():
        fast._new_cache()  # an empty chunk cache for this check and for each timed run
        assert run() == want, f"{column} disagrees with tiktoken"

        def cold(run=run):
            fast._new_cache()
            return run()

        times[column] = best_of(cold, repeat=REPEAT)
    return times


def main() -> dict:
    enc = tiktoken.get_encoding("cl100k_base")
    tok = GPT4Tokenizer()
    small, large = shapes(1), shapes(4)
    rows = []
    print(f"hostile inputs (cl100k_base), n and 4n, best of {REPEAT}, cold cache every run")
    for name in small:
        t_n = measure_one(*small[name], tok, enc)
        t_4n = measure_one(*large[name], tok, enc)
        row = {
            "name": name,
            "size_n": describe(name, small[name][0]),
            "size_4n": describe(name, large[name][0]),
            "n": t_n,
            "4n": t_4n,
        }
        rows.append(row)
        cells = ", ".join(
            f"{col} {t_4n[col]:.3f} s (x{t_4n[col] / t_n[col]:.1f}, "
            f"{t_4n[col] / t_4n['tiktoken']:.1f}x tiktoken)"
            for col in t_n
        )
        print(f"  {name}, {row['size_n']} -> {row['size_4n']}: {cells}", flush=True)
    return {"rows": rows, "repeat": REPEAT, "piece": PIECE, "tables": tables()}


def wordpiece_shapes(scale: int) -> dict[str, str]:
    """``{row: text}`` for WordPiece; at ``scale`` 4 each text is about 1 MB of UTF-8."""
    n = 65_536 * scale
    return {
        "marks of alternating classes": "a" + "\u0301\u0316" * n,  # 4 bytes a pair
        "U+0F73 (decomposes to marks)": "\u0f73" * (n * 4 // 3),  # 3 bytes each
        "accented letters (control)": "\u00e9" * (n * 2),  # 2 bytes each
    }


def common_shapes(scale: int) -> dict[str, str]:
    """``{row: text}`` for the other tokenizers: 250,000 characters at 4n."""
    rng = random.Random(0)
    n = 62_500 * scale
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
    return {
        "spaces": " " * n,
        "one letter": "a" * n,
        "one emoji": "\U0001f600" * (n // 4),
        "random a-z word": word,
        "random words": " ".join(word[i : i + 7] for i in range(0, n, 8)),
        'lines of "\\n"': "\n" * n,
        "marks of alternating classes": "a" + "\u0301\u0316" * (n // 4),
    }


Run = Callable[[str], object]


def table(title: str, tokenizer: str, columns: dict[str, Run], shapes: Callable) -> dict:
    """Time every column on every shape at n and 4n; the first column is the reference.

    Every column's output is checked equal to the first one's before it is timed.
    """
    small, large = shapes(1), shapes(4)
    reference = next(iter(columns))
    print(f"{title}, n and 4n, best of {REPEAT}")
    rows = []
    for name in small:
        row: dict = {"name": name, "size_n": describe(name, small[name])}
        row["size_4n"] = describe(name, large[name])
        for size, text in (("n", small[name]), ("4n", large[name])):
            want = columns[reference](text)
            for column, run in columns.items():
                assert run(text) == want, f"{tokenizer}, {name}: {column} differs from {reference}"
            row[size] = {
                # CPU seconds: every library here encodes one text on one thread
                column: best_of(lambda run=run, text=text: run(text), REPEAT, time.process_time)
                for column, run in columns.items()
            }
        rows.append(row)
        t_n, t_4n = row["n"], row["4n"]
        cells = ", ".join(f"{col} {t_4n[col]:.3f} s (x{t_4n[col] / t_n[col]:.1f})" for col in t_n)
        print(f"  {name}, {row['size_n']} -> {row['size_4n']}: {cells}", flush=True)
    return {"title": title, "tokenizer": tokenizer, "reference": reference, "rows": rows}


def _cold(tok) -> Run:
    """``tok.encode_ordinary`` from an empty chunk cache, every call."""

    def run(text: str) -> list[int]:
        tok.fast_encoder()._new_cache()  # the encoder the default path uses, cache emptied
        return tok.encode_ordinary(text)

    return run


def _unigram_model() -> bytes:
    """A unigram model (4,000 pieces, byte fallback) trained on Botchan, as the tests do."""
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpora.botchan_text().splitlines()),
        model_writer=out,
        model_type="unigram",
        vocab_size=4000,
        character_coverage=1.0,
        normalization_rule_name="identity",
        byte_fallback=True,
        num_threads=1,
        minloglevel=2,
    )
    return out.getvalue()


def llama_tables() -> list[dict]:
    """Llama 3 and Llama 4 (``RankEncoder`` inside) against a ``tiktoken.Encoding`` built as
    Meta's code builds it, fed the pieces of Meta's cuts (``rank_bpe.cut_long_runs``)."""
    from tokcourse import llama, rank_bpe

    found = []
    for cls, pattern in (
        (Llama3Tokenizer, llama.LLAMA3_SPLIT_PATTERN),
        (Llama4Tokenizer, llama.LLAMA4_SPLIT_PATTERN),
    ):
        tok = cls()
        ranks = {t: r for r, t in tok.vocab.items()}
        enc = tiktoken.Encoding(
            cls.__name__, pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
        )

        def meta(text: str, enc: tiktoken.Encoding = enc) -> list[int]:
            return [i for p in rank_bpe.cut_long_runs(text) for i in enc.encode_ordinary(p)]

        found.append(
            table(
                f"{cls.__name__} against tiktoken with Meta's cuts",
                cls.__name__,
                {"tiktoken": meta, "ours": _cold(tok)},
                common_shapes,
            )
        )
    return found


def tables() -> list[dict]:
    """One table per other tokenizer the package ships."""
    import sentencepiece as spm
    from tokenizers import BertWordPieceTokenizer

    found = []
    for cls, encoding in ((GPT2Tokenizer, "gpt2"), (GPT4oTokenizer, "o200k_base")):
        enc = tiktoken.get_encoding(encoding)
        found.append(
            table(
                f"{cls.__name__} against tiktoken's `{encoding}`",
                cls.__name__,
                {"tiktoken": enc.encode_ordinary, "ours": _cold(cls())},
                common_shapes,
            )
        )
    found += llama_tables()
    trained = RegexTokenizer(GPT2_SPLIT_PATTERN)
    trained.train(corpora.botchan_text(), 1024, fast=True)
    exported = to_tiktoken(trained.merges, GPT2_SPLIT_PATTERN)
    found.append(
        table(
            "RegexTokenizer (GPT-2 pattern, 1,024 tokens trained on Botchan) against its "
            "tiktoken export",
            "RegexTokenizer",
            {"tiktoken": exported.encode_ordinary, "ours": _cold(trained)},
            common_shapes,
        )
    )
    basic = BasicTokenizer()
    basic.train(corpora.botchan_text()[:50_000], 512)
    found.append(
        table(
            "BasicTokenizer (no split: each text is one chunk; 512 tokens trained on Botchan)",
            "BasicTokenizer",
            {"ours": _cold(basic)},
            common_shapes,
        )
    )
    path = corpora.mistral_model_path()
    mistral = spm.SentencePieceProcessor(model_file=str(path))
    found.append(
        table(
            "SentencePieceBPE (Mistral 7B v1) against sentencepiece",
            "SentencePieceBPE",
            {"sentencepiece": mistral.encode, "ours": SentencePieceBPE.from_file(path).encode},
            common_shapes,
        )
    )
    model = _unigram_model()
    unigram = spm.SentencePieceProcessor(model_proto=model)
    found.append(
        table(
            "SentencePieceUnigram (4,000 pieces trained on Botchan, byte fallback) against "
            "sentencepiece",
            "SentencePieceUnigram",
            {"sentencepiece": unigram.encode, "ours": SentencePieceUnigram(model).encode},
            common_shapes,
        )
    )
    vocab = corpora.minilm_vocab_path()
    hf = BertWordPieceTokenizer(str(vocab), lowercase=True)
    found.append(
        table(
            "WordPiece (BERT uncased, all-MiniLM-L6-v2) against Hugging Face tokenizers, "
            "hostile normalization",
            "WordPiece",
            {
                "tokenizers": lambda text: hf.encode(text, add_special_tokens=False).tokens,
                "ours": WordPiece.from_file(vocab).tokenize,
            },
            wordpiece_shapes,
        )
    )
    return found


if __name__ == "__main__":
    main()
