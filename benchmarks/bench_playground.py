"""The playground's speed in the browser, for ``RESULTS.md``.

``tests/test_playground.py`` measures it: headless Chromium loads each encoding's data and
encodes the first 100,000 bytes of the novel with our JavaScript encoder, while the same test
times tiktoken on the same text in Python. The test writes its report to
``_build/test-artifacts/playground-speed.json``;

    python benchmarks/bench_playground.py

keeps it as ``benchmarks/playground.json`` (refused unless every id matched tiktoken's) and
re-renders ``RESULTS.md``, whose last section :func:`section` draws from that file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "_build" / "test-artifacts" / "playground-speed.json"
STORED = HERE / "playground.json"
HEADING = "## In the browser: the playground's JavaScript encoder"


def section(data: dict | None) -> list[str]:
    """The markdown lines of the playground section (none without data)."""
    if not data:
        return []
    speed_kb = data["speed text bytes"] / 1000
    lines = [
        "",
        HEADING,
        "",
        f"Measured by `tests/test_playground.py` on {data['generated']}: headless Chromium "
        f"(`{data['browser'].split('HeadlessChrome/')[-1].split()[0]}`), the built book's files "
        "opened from disk, no network; tiktoken timed in Python in the same run, best of 3. "
        f"Text: the first {speed_kb:,.0f} KB of the novel. Load: from injecting the data "
        "`<script>` to a ready encoder (the first also loads the character classes); cold: the "
        "first encode after loading (empty chunk cache, and for the first encoding a cold JIT).",
        "",
        "| encoding | data file raw / gzipped | load ms (building the table) | encode cold ms | "
        "encode warm ms | tiktoken ms | cold x tiktoken | warm x tiktoken |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, t in data["timings"].items():
        size = data["data sizes"][f"{name}.js"]
        lines.append(
            f"| {name} | {size['raw'] / 1e6:.2f} MB / {size['gzip'] / 1e6:.2f} MB | "
            f"{t['load_ms']:.0f} ({t['build_ms']:.0f}) | {t['encode_cold_ms']:.1f} | "
            f"{t['encode_warm_ms']:.1f} | {t['tiktoken_ms']:.1f} | "
            f"{t['encode_cold_ms'] / t['tiktoken_ms']:.1f} | "
            f"{t['encode_warm_ms'] / t['tiktoken_ms']:.1f} |"
        )
    strings = data["strings"]
    classes = data["data sizes"]["classes.js"]
    lines += [
        "",
        f"Character classes (`classes.js`): {classes['raw'] / 1e3:.0f} KB, "
        f"{classes['gzip'] / 1e3:.0f} KB gzipped. Ids compared with tiktoken's in the same run: "
        f"{strings['total per encoding']:,} strings per encoding ({len(strings['corpora'])} "
        f"corpus texts, {strings['hard']:,} hard strings, {strings['fuzz']:,} fuzzed, and "
        f"{strings['differing code points']:,} code points whose class in the browser's Unicode "
        f"tables differs from tiktoken's, in batches of 50): **{data['mismatches']} mismatches**.",
    ]
    return lines


def stored() -> dict | None:
    """The kept report, or None."""
    return json.loads(STORED.read_text(encoding="utf-8")) if STORED.is_file() else None


def main() -> None:
    data = json.loads(REPORT.read_text(encoding="utf-8"))
    if data["mismatches"] != 0:
        sys.exit(f"{REPORT} reports {data['mismatches']} mismatches; not keeping it")
    STORED.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    sys.path.insert(0, str(HERE))
    import run_all

    results = json.loads((HERE / "results.json").read_text(encoding="utf-8"))
    (HERE / "RESULTS.md").write_text(run_all.render_markdown(results), encoding="utf-8")
    print(f"wrote {STORED} and {HERE / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
