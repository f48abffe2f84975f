"""Encoding throughput: GPT-4's tokenizer, our fast path vs tiktoken, on the novel and 2 MB of code.

Same text, same run, ids checked equal. "cold" starts from an empty chunk cache; "warm" is
a second pass (the cache holds the text's chunks). tiktoken runs ``encode_ordinary`` on one
thread. The reference path (``fast=False``) is timed on a slice, for scale.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time

import tiktoken
from _timing import best_of  # noqa: E402

from tokcourse import GPT4Tokenizer, assets
from tokcourse.fast_encode import FastEncoder

CODE_BYTES = 2_000_000
REFERENCE_SLICE = 50_000


def measure(name: str, text: str, tok: GPT4Tokenizer, enc: tiktoken.Encoding) -> dict:
    mb = len(text.encode("utf-8")) / 1e6
    fresh = FastEncoder.from_tokenizer(tok)
    start = time.perf_counter()
    ours = fresh.encode_ordinary(text)
    cold = time.perf_counter() - start
    warm = best_of(lambda: fresh.encode_ordinary(text))
    theirs = enc.encode_ordinary(text)
    assert ours == theirs, f"fast path and tiktoken disagree on {name}"
    tik = best_of(lambda: enc.encode_ordinary(text))
    piece = text[:REFERENCE_SLICE]
    ref = best_of(lambda: tok.encode_ordinary(piece, fast=False), repeat=1) * len(text) / len(piece)
    split = best_of(lambda: fresh.chunks(text))
    row = {
        "name": name,
        "mb": mb,
        "cold_s": cold,
        "warm_s": warm,
        "tiktoken_s": tik,
        "reference_s": ref,
        "split_s": split,
    }
    print(
        f"  {name:<8} {mb:5.2f} MB  tiktoken {mb / tik:6.2f} MB/s | "
        f"fast cold {mb / cold:5.2f} MB/s "
        f"({tik / cold:.2f} of tiktoken), warm {mb / warm:5.2f} MB/s ({tik / warm:.2f}) | "
        f"regex split alone {split / warm:.0%} of warm time | reference ~{mb / ref:.3f} MB/s"
    )
    return row


def profile(text: str, tok: GPT4Tokenizer) -> str:
    fresh = FastEncoder.from_tokenizer(tok)
    profiler = cProfile.Profile()
    profiler.enable()
    fresh.encode_ordinary(text)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(6)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[start : start + 7])


def main() -> dict:
    tok = GPT4Tokenizer()
    enc = tiktoken.get_encoding("cl100k_base")
    print("encoding throughput, GPT-4 (cl100k_base), ids checked equal")
    rows = [
        measure("botchan", assets.botchan_text(), tok, enc),
        measure("code", assets.stdlib_code(CODE_BYTES), tok, enc),
    ]
    prof = profile(assets.stdlib_code(CODE_BYTES), tok)
    print("  cProfile of a cold fast encode of the code (by own time):")
    print("\n".join("    " + line for line in prof.splitlines()))
    return {"rows": rows, "profile": prof}


if __name__ == "__main__":
    main()
