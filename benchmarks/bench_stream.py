"""Peak memory of streaming a 100 MB file through ``GPT4Tokenizer.encode_iterable``.

The file is generated in a temporary directory from the offline corpora (the novel and
stdlib code, repeated with a counter so the text is not one block over and over). A child
process loads the tokenizer, warms it up on a small text, records its RSS, then streams
the file in 64 KB blocks and samples its RSS (psutil) every 64 blocks; we report the
growth of the peak over the warmed-up baseline, and ``ru_maxrss`` for comparison.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from tokcourse import assets

SIZE_MB = int(os.environ.get("TOKCOURSE_STREAM_MB", "100"))

CHILD = r"""
import gc, json, resource, sys, time
import psutil
from tokcourse import GPT4Tokenizer, assets

path = sys.argv[1]
tok = GPT4Tokenizer()
process = psutil.Process()
list(tok.encode_iterable([assets.botchan_text()[:100_000], assets.stdlib_code(100_000)]))
gc.collect()
baseline = process.memory_info().rss
maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
peak = baseline
n_ids = 0
start = time.perf_counter()
with open(path, encoding="utf-8") as f:
    blocks = iter(lambda: f.read(1 << 16), "")

    def sampled():
        global peak
        for i, piece in enumerate(blocks):
            if i % 64 == 0:
                peak = max(peak, process.memory_info().rss)
            yield piece

    for _ in tok.encode_iterable(sampled()):
        n_ids += 1
seconds = time.perf_counter() - start
peak = max(peak, process.memory_info().rss)
maxrss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({
    "baseline": baseline, "peak": peak, "ids": n_ids, "seconds": seconds,
    "maxrss_before": maxrss_before, "maxrss_after": maxrss_after,
    "cache": tok.fast_encoder().cache_info().currsize,
}))
"""


def make_file(path: str, size_mb: int) -> int:
    parts = [assets.botchan_text(), assets.stdlib_code(2_000_000)]
    written = 0
    target = size_mb * 1_000_000
    with open(path, "w", encoding="utf-8", newline="") as f:
        copy = 0
        while written < target:
            for part in parts:
                text = f"\n# copy {copy}\n" + part
                f.write(text)
                written += len(text.encode("utf-8"))
            copy += 1
    return written


def main() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stream.txt")
        size = make_file(path, SIZE_MB)
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", CHILD, path], check=True, capture_output=True, text=True
        )
        wall = time.perf_counter() - start
    result = json.loads(out.stdout)
    result["bytes"] = size
    result["wall"] = wall
    growth = (result["peak"] - result["baseline"]) / 1e6
    maxrss_growth = (result["maxrss_after"] - result["maxrss_before"]) / 1e6
    result["growth_mb"] = growth
    result["maxrss_growth_mb"] = maxrss_growth
    print(f"streaming {size / 1e6:.0f} MB through GPT4Tokenizer.encode_iterable (64 KB blocks)")
    print(
        f"  baseline RSS {result['baseline'] / 1e6:.0f} MB, peak {result['peak'] / 1e6:.0f} MB: "
        f"growth {growth:.1f} MB (ru_maxrss growth {maxrss_growth:.1f} MB); "
        f"{result['ids']:,} ids in {result['seconds']:.1f} s "
        f"({size / 1e6 / result['seconds']:.2f} MB/s); chunk cache {result['cache']} entries"
    )
    return result


if __name__ == "__main__":
    main()
