"""Training botchan to 8,192 tokens, GPT-4 pattern: the fast trainer vs the chunk trainer, HF,
sentencepiece.

Every timing comes from this one run on the same text. The names are chapter 13's: the
*fast trainer* is ``fast_train.train_fast``; the *chunk trainer* is ``bpe.train_on_chunks``
(chapter 02's loop on each distinct chunk, weighted by its count; the *naive trainer*, which
loops over every chunk of the text, is slower still and not timed here). The chunk trainer is
timed on small vocabularies and extrapolated linearly (seconds per merge of its largest run x
7,936 merges): an over-estimate, since later merges work on shorter chunks, so the ratio is
approximate.
"""

from __future__ import annotations

import os
import tempfile
import time

from _timing import best_of  # noqa: E402

from tokcourse import assets, bpe
from tokcourse.fast_train import count_chunks, train_fast
from tokcourse.patterns import GPT4_SPLIT_PATTERN

VOCAB_SIZE = 8192
CHUNK_SIZES = (256 + 64, 256 + 128, 256 + 256)
CURVE_SIZES = (512, 1024, 2048, 4096, 8192)


def fast_seconds(text: str, vocab_size: int = VOCAB_SIZE) -> tuple[float, int]:
    merges: dict = {}

    def run() -> None:
        nonlocal merges
        merges = train_fast(count_chunks(text, GPT4_SPLIT_PATTERN), vocab_size)

    return best_of(run, repeat=3), len(merges)


def chunk_seconds(text: str) -> tuple[float, list[tuple[int, float]]]:
    chunks = count_chunks(text, GPT4_SPLIT_PATTERN)
    points = []
    for size in CHUNK_SIZES:
        start = time.perf_counter()
        bpe.train_on_chunks(chunks, size)
        points.append((size, time.perf_counter() - start))
    size, seconds = points[-1]
    per_merge = seconds / (size - 256)
    return per_merge * (VOCAB_SIZE - 256), points


def hf_seconds(text: str, vocab_size: int = VOCAB_SIZE) -> tuple[float, int] | None:
    try:
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:
        return None

    def run() -> None:
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(GPT4_SPLIT_PATTERN), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator([text], trainer=trainer)
        sizes.append(tok.get_vocab_size())

    sizes: list[int] = []
    return best_of(run, repeat=3), sizes[-1]


def sentencepiece_seconds(text: str) -> tuple[float, int] | None:
    try:
        import sentencepiece as spm
    except ImportError:
        return None
    lines = [line for line in text.splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:

        def run() -> None:
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(lines),
                model_prefix=os.path.join(tmp, "sp"),
                model_type="bpe",
                vocab_size=VOCAB_SIZE,
                hard_vocab_limit=False,
                byte_fallback=True,
                character_coverage=1.0,
                num_threads=os.cpu_count() or 1,
                minloglevel=2,
            )

        seconds = best_of(run, repeat=3)
        size = spm.SentencePieceProcessor(model_file=os.path.join(tmp, "sp.model")).get_piece_size()
        return seconds, size


def main() -> dict:
    text = assets.botchan_text()
    fast, n_merges = fast_seconds(text)
    chunk, points = chunk_seconds(text)
    hf = hf_seconds(text)
    sp = sentencepiece_seconds(text)
    # time against vocabulary size, for chapter 13's figure (benchmarks/train_curve.json)
    curve = {"vocab_size": list(CURVE_SIZES), "fast_s": [], "hf_s": []}
    for size in CURVE_SIZES:
        curve["fast_s"].append(fast_seconds(text, size)[0])
        hf_point = hf_seconds(text, size)
        curve["hf_s"].append(None if hf_point is None else hf_point[0])
    curve["chunk_measured"] = [[size, seconds] for size, seconds in points]
    big = text + assets.stdlib_code(2_000_000)
    big_fast, _ = fast_seconds(big)
    big_hf = hf_seconds(big)
    result = {
        "curve": curve,
        "big_bytes": len(big.encode("utf-8")),
        "big_fast_s": big_fast,
        "big_hf_s": big_hf,
        "text_bytes": len(text.encode("utf-8")),
        "fast_s": fast,
        "fast_merges": n_merges,
        "chunk_points": points,
        "chunk_extrapolated_s": chunk,
        "hf_s": hf,
        "sp_s": sp,
    }
    print(
        f"training botchan ({result['text_bytes']:,} bytes) to {VOCAB_SIZE} tokens, GPT-4 pattern"
    )
    print(f"  fast trainer           {fast:8.3f} s  ({n_merges} merges, pre-tokenization included)")
    for size, seconds in points:
        print(f"  chunk trainer to {size:<5} {seconds:8.3f} s  (measured)")
    print(
        f"  chunk trainer to {VOCAB_SIZE}  {chunk:8.1f} s  (extrapolated) -> the fast trainer is "
        f"{chunk / fast:,.0f}x faster"
    )
    if hf is not None:
        print(
            f"  HF tokenizers         {hf[0]:8.3f} s  ({hf[1]} tokens) -> fast / HF = "
            f"{fast / hf[0]:.1f}x"
        )
    if sp is not None:
        print(
            f"  sentencepiece (bpe)   {sp[0]:8.3f} s  ({sp[1]} pieces) -> fast / sp = "
            f"{fast / sp[0]:.1f}x"
        )
    print(f"  larger corpus (novel + 2 MB of code, {result['big_bytes']:,} bytes):")
    print(f"    fast trainer        {big_fast:8.3f} s")
    if big_hf is not None:
        print(
            f"    HF tokenizers       {big_hf[0]:8.3f} s  "
            f"-> fast / HF = {big_fast / big_hf[0]:.1f}x"
        )
    return result


if __name__ == "__main__":
    main()
