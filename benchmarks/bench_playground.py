"""The playground's speed in the browser, for ``RESULTS.md``.

Two browser tests measure it:

- ``tests/test_playground.py``: headless Chromium loads each encoding's data and encodes the
  first 100,000 bytes of the novel with our JavaScript encoder, while the same test times
  tiktoken on the same text in Python (report: ``_build/test-artifacts/playground-speed.json``);
- ``tests/test_playground_widget.py``: the widget itself, typed into as a reader types, with
  100 KB and 1 MB in the box, and 100,000 line breaks or spaces pasted
  (report: ``_build/test-artifacts/playground-widget.json``).

    python benchmarks/bench_playground.py

keeps them as ``benchmarks/playground.json`` and ``benchmarks/playground-widget.json`` (refused
unless every id matched) and re-renders ``RESULTS.md``, whose last section :func:`section` draws
from those files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPORT = HERE.parent / "_build" / "test-artifacts" / "playground-speed.json"
STORED = HERE / "playground.json"
PORT_REPORTS = {
    "mistral_v1": HERE.parent / "_build" / "test-artifacts" / "playground-sentencepiece.json",
    "bert_uncased": HERE.parent / "_build" / "test-artifacts" / "playground-wordpiece.json",
}
PORTS_STORED = HERE / "playground-ports.json"
WIDGET_REPORT = HERE.parent / "_build" / "test-artifacts" / "playground-widget.json"
WIDGET_STORED = HERE / "playground-widget.json"

#: The widget's targets: (what, report key, measure, bound in ms). A keystroke's repaint is
#: judged on the median of the eight keystrokes typed (the maximum is shown: one slow keystroke
#: on a shared machine is noise, a slow median is not); tasks and pastes on their worst.
WIDGET_TARGETS = (
    ("keystroke to repaint, 100 KB in the box", "100 KB", "keystroke median ms", 100),
    ("keystroke to repaint, 1 MB in the box", "1 MB", "keystroke median ms", 1000),
    ("longest main-thread task, typing in 100 KB", "100 KB", "longest task while typing ms", 200),
    ("longest main-thread task, typing in 1 MB", "1 MB", "longest task while typing ms", 200),
    ("paste 100,000 line breaks, to repaint", "100k line breaks", "paste ms", 2000),
    ("paste 100,000 spaces, to repaint", "100k spaces", "paste ms", 2000),
)
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


def ports_section(data: dict | None) -> list[str]:
    """The markdown lines of the SentencePiece and WordPiece ports (none without data)."""
    if not data:
        return []
    sp, wp = data["mistral_v1"], data["bert_uncased"]
    lines = [
        "",
        "### Mistral 7B v1 and BERT uncased in the browser",
        "",
        "Measured by `tests/test_playground_sentencepiece.py` and "
        "`tests/test_playground_wordpiece.py` (headless Chromium, no network): ids compared with "
        "the libraries' on the corpora, hard strings and a seeded fuzz; encode time of the first "
        "100 KB of the novel, the library timed in Python in the same run.",
        "",
        "| tokenizer | compared with | tokens compared | mismatches | control caught "
        "| data file | encode cold / warm ms | library ms |",
        "|---|---|---:|---:|---|---:|---:|---:|",
    ]
    t = sp["timings"]
    caught = ", ".join(
        f"{k}: {v:,}" for k, v in sp["control: strings a wrong encoder gets wrong"].items()
    )
    lines.append(
        f"| Mistral 7B v1 (`sentencepiece.js`) | sentencepiece | {sp['tokens']:,} | "
        f"{sp['mismatches']} | {caught} of {sp['control strings']:,} strings | "
        f"{sp['data file bytes'] / 1e6:.2f} MB | {t['encode_cold_ms']:.0f} / "
        f"{t['encode_warm_ms']:.0f} | {t['sentencepiece_ms']:.0f} |"
    )
    t = wp["timings"]
    wrong = wp["control (browser's own Unicode tables): strings wrong"]
    lines.append(
        f"| BERT uncased (`wordpiece.js`) | Hugging Face `tokenizers` | "
        f"{wp['tokens compared']:,} | {wp['mismatches']} | browser's own Unicode tables: "
        f"{wrong:,} strings | "
        f"{wp['data file bytes'] / 1e6:.2f} MB | {t['encode_cold_ms']:.0f} / "
        f"{t['encode_warm_ms']:.0f} | {t['tokenizers_python_ms']:.0f} |"
    )
    return lines


def stored_ports() -> dict | None:
    """The kept reports of the two ports, or None."""
    if not PORTS_STORED.is_file():
        return None
    return json.loads(PORTS_STORED.read_text(encoding="utf-8"))


def widget_section(data: dict | None) -> list[str]:
    """The markdown lines of the widget's targets (none without data)."""
    if not data:
        return []
    lines = [
        "",
        "### The widget: typing and pasting",
        "",
        f"Measured by `tests/test_playground_widget.py` on {data['generated']['utc']} "
        f"(`{data['browser']['version']}`, headless, driven over the DevTools protocol): the text "
        "pasted into the box, then one character typed at eight places; a keystroke's time runs "
        "from the browser's `beforeinput` event to the end of the repaint that shows it (the "
        "textarea's own work, the debounce, the worker's incremental encoding and the drawing). "
        "Long tasks: the browser's Long Tasks API (tasks over 50 ms) while typing.",
        "",
        "| target | bound | measured | met |",
        "|---|---:|---:|:---:|",
    ]
    for what, key, measure, bound in WIDGET_TARGETS:
        row = data[key]
        value = row[measure]
        shown = f"{value:,.0f} ms"
        if measure == "longest task while typing ms" and value == 0:
            shown = "none over 50 ms"
        if measure == "keystroke median ms":
            shown = f"median {value:,.0f} ms (max {row['keystroke max ms']:,.0f})"
        lines.append(f"| {what} | ≤ {bound:,} ms | {shown} | {'yes' if value <= bound else 'no'} |")
    phases = data["100 KB"].get("phases ms (median)")
    if phases:
        lines += [
            "",
            "Where a keystroke's time goes with 100 KB in the box (medians, ms): "
            + ", ".join(f"{k} {v:.0f}" for k, v in phases.items())
            + ".",
        ]
    return lines


def stored_widget() -> dict | None:
    """The kept widget report, or None."""
    if not WIDGET_STORED.is_file():
        return None
    return json.loads(WIDGET_STORED.read_text(encoding="utf-8"))


def stored() -> dict | None:
    """The kept report, or None."""
    return json.loads(STORED.read_text(encoding="utf-8")) if STORED.is_file() else None


def main() -> None:
    data = json.loads(REPORT.read_text(encoding="utf-8"))
    if data["mismatches"] != 0:
        sys.exit(f"{REPORT} reports {data['mismatches']} mismatches; not keeping it")
    STORED.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    ports = {
        name: json.loads(path.read_text(encoding="utf-8")) for name, path in PORT_REPORTS.items()
    }
    if any(report["mismatches"] for report in ports.values()):
        sys.exit(f"a port's report has mismatches: {ports}; not keeping it")
    PORTS_STORED.write_text(json.dumps(ports, indent=1) + "\n", encoding="utf-8")
    if WIDGET_REPORT.is_file():
        widget = json.loads(WIDGET_REPORT.read_text(encoding="utf-8"))
        WIDGET_STORED.write_text(json.dumps(widget, indent=1) + "\n", encoding="utf-8")
    sys.path.insert(0, str(HERE))
    import run_all

    results = json.loads((HERE / "results.json").read_text(encoding="utf-8"))
    (HERE / "RESULTS.md").write_text(run_all.render_markdown(results), encoding="utf-8")
    print(f"wrote {STORED} and {HERE / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
