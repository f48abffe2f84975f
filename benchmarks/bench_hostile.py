"""Hostile inputs: does encoding time grow linearly with the input, as tiktoken's does?

Each row is one shape of text at two sizes, ``n`` and ``4n`` (GPT-4, ``cl100k_base``): runs
that make one enormous chunk (spaces, one letter, one emoji, one random a-z word with many
distinct merges, 62.5 KB at n) and lines of ``"\\n"`` (25,000 of them at n).
Columns: tiktoken's ``encode_ordinary``; our default ``Tokenizer.encode_ordinary``; a
``FastEncoder``; ``encode_iterable`` fed 4 KB pieces, and, for the newlines, one line at a
time. Every path starts from an empty chunk cache on every run (a warm cache would answer the
one big chunk in a lookup). Ids are checked equal to tiktoken's. The growth ratio is
time(4n) / time(n); for a linear algorithm it is about 4, for a quadratic one about 16.

A second table (``wordpiece_rows``) does the same for BERT's WordPiece (chapter 11) against
Hugging Face ``tokenizers`` (``BertWordPieceTokenizer`` over all-MiniLM-L6-v2's vocabulary) on
text whose normalization (NFD) is hostile: a letter and 1 MB at 4n of combining marks of
alternating classes (CPython's NFD sorts them with an insertion sort), a class-0 character that
decomposes into two marks (U+0F73), and plain accented letters as the control. Tokens are
checked equal to tokenizers'.
"""

from __future__ import annotations

import random

import tiktoken
from _timing import best_of  # noqa: E402

from tokcourse import GPT4Tokenizer
from tokcourse.course.data import corpora
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
    return {"rows": rows, "repeat": REPEAT, "piece": PIECE, "wordpiece_rows": wordpiece_rows()}


def wordpiece_shapes(scale: int) -> dict[str, str]:
    """``{row: text}`` for WordPiece; at ``scale`` 4 each text is about 1 MB of UTF-8."""
    n = 65_536 * scale
    return {
        "marks of alternating classes": "a" + "\u0301\u0316" * n,  # 4 bytes a pair
        "U+0F73 (decomposes to marks)": "\u0f73" * (n * 4 // 3),  # 3 bytes each
        "accented letters (control)": "\u00e9" * (n * 2),  # 2 bytes each
    }


def wordpiece_rows() -> list[dict]:
    from tokenizers import BertWordPieceTokenizer

    path = corpora.minilm_vocab_path()
    hf = BertWordPieceTokenizer(str(path), lowercase=True)
    ours = WordPiece.from_file(path)
    small, large = wordpiece_shapes(1), wordpiece_shapes(4)
    print(f"hostile normalization (BERT WordPiece), n and 4n, best of {REPEAT}")
    rows = []
    for name in small:
        row: dict = {"name": name, "size_n": describe(name, small[name]),
                     "size_4n": describe(name, large[name])}  # fmt: skip
        for size, text in (("n", small[name]), ("4n", large[name])):
            runs = {
                "tokenizers": lambda text=text: hf.encode(text, add_special_tokens=False).tokens,
                "WordPiece": lambda text=text: ours.tokenize(text),
            }
            assert runs["WordPiece"]() == runs["tokenizers"](), f"{name}: tokens differ"
            row[size] = {column: best_of(run, repeat=REPEAT) for column, run in runs.items()}
        rows.append(row)
        t_n, t_4n = row["n"], row["4n"]
        cells = ", ".join(
            f"{col} {t_4n[col]:.3f} s (x{t_4n[col] / t_n[col]:.1f}, "
            f"{t_4n[col] / t_4n['tokenizers']:.1f}x tokenizers)"
            for col in t_n
        )
        print(f"  {name}, {row['size_n']} -> {row['size_4n']}: {cells}", flush=True)
    return rows


if __name__ == "__main__":
    main()
