"""benchmarks/results.json, RESULTS.md, and the reader chapter 13 uses (course.benchmarks)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from tokcourse.course import benchmarks

ROOT = Path(__file__).resolve().parents[1]
RESULTS_JSON = ROOT / "benchmarks" / "results.json"
RESULTS_MD = ROOT / "benchmarks" / "RESULTS.md"


def run_all():
    spec = importlib.util.spec_from_file_location("run_all", ROOT / "benchmarks" / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def section(markdown: str, heading: str) -> str:
    """The text of the ``## heading...`` section, up to the next ``## ``."""
    match = re.search(rf"^## {re.escape(heading)}.*?(?=^## |\Z)", markdown, re.M | re.S)
    assert match, heading
    return match[0]


def test_the_committed_results_load():
    results = benchmarks.load_results()
    assert results is not None and results["schema"] == benchmarks.SCHEMA
    assert benchmarks.default_path() == RESULTS_JSON


def test_results_md_and_results_json_come_from_the_same_run():
    text = RESULTS_JSON.read_text(encoding="utf-8")
    # no machine-specific paths: the file renders the same in every clone
    assert not re.search(r"/\S*/src/tokcourse/", text)
    results = json.loads(text)
    rendered = run_all().render_markdown(results)
    committed = RESULTS_MD.read_text(encoding="utf-8")
    assert rendered.splitlines()[2] == committed.splitlines()[2]  # date and machine
    for heading in ("Training", "Encoding"):  # what chapter 13 draws
        assert section(rendered, heading) == section(committed, heading)


def test_the_helpers_give_the_numbers_of_the_tables():
    results = benchmarks.load_results()
    times = {t.label: t for t in benchmarks.training_times(results)}
    md = RESULTS_MD.read_text(encoding="utf-8")
    fast = float(re.search(r"\| the fast trainer .*? \| ([\d.]+) \|", md)[1])
    assert times[benchmarks.FAST].seconds == pytest.approx(fast, abs=5e-4)
    chunk = [t for t in benchmarks.training_times(results) if t.label == benchmarks.CHUNK]
    assert [t.extrapolated for t in chunk] == [False] * (len(chunk) - 1) + [True]
    extrapolated = float(
        re.search(r"\| the chunk trainer to \d+ \(\*\*extrapolated.*? \| ([\d.]+) \|", md)[1]
    )
    assert chunk[-1].seconds == pytest.approx(extrapolated, abs=0.05)
    for speed in benchmarks.encoding_speeds(results):
        row = re.search(rf"^\| {speed.text} \| [\d.]+ \| ([\d.]+) \| ([\d.]+)", md, re.M)
        assert speed.tiktoken == pytest.approx(float(row[1]), abs=5e-3)
        assert speed.fast_cold == pytest.approx(float(row[2]), abs=5e-3)


def test_a_missing_file_is_none_and_another_schema_an_error(tmp_path):
    assert benchmarks.load_results(tmp_path / "nothing.json") is None
    other = tmp_path / "results.json"
    other.write_text(json.dumps({"schema": benchmarks.SCHEMA + 1}))
    with pytest.raises(ValueError, match="schema"):
        benchmarks.load_results(other)


def test_the_summary_and_the_figure_use_the_chapter_names():
    results = benchmarks.load_results()
    text = benchmarks.summary(results)
    assert "fast trainer (train_fast) to 8,192" in text
    assert "chunk trainer (train_on_chunks) to 8,192" in text and "(extrapolated)" in text
    assert "unique" not in text and "naive" not in text
    (ratio,) = [line for line in text.splitlines() if "faster than" in line]
    assert ratio.endswith("to 8,192 (extrapolated)")  # the ratio rests on an extrapolated time
    fig = benchmarks.figure(results)
    bars = fig.data[0]
    assert len(bars.x) == len(benchmarks.training_times(results))
    assert any("extrapolated" in label for label in bars.y)


def test_the_json_keys_name_the_chunk_trainer():
    results = json.loads(RESULTS_JSON.read_text(encoding="utf-8"))
    assert "naive" not in json.dumps(results["train"])
    assert {"chunk_points", "chunk_extrapolated_s"} <= set(results["train"])
    curve = json.loads((ROOT / "benchmarks" / "train_curve.json").read_text(encoding="utf-8"))
    assert "chunk_measured" in curve and "naive_measured" not in curve


def test_results_md_has_no_trace_of_how_it_was_made():
    md = RESULTS_MD.read_text(encoding="utf-8")
    assert not re.search(r"\bissue \d+", md), "describe a target by what it is"
    assert "unique chunks" not in md


def shipped_tokenizers() -> set[str]:
    """Every public class of the tokenizer floor that encodes, but the abstract bases."""
    import importlib
    import inspect
    import pkgutil

    import tokcourse

    found = set()
    for info in pkgutil.iter_modules(tokcourse.__path__):
        if info.name == "course":
            continue
        module = importlib.import_module(f"tokcourse.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            protocol = getattr(cls, "_is_protocol", False)  # a type to check against
            if cls.__module__ == module.__name__ and not name.startswith("_") and not protocol:
                if any(hasattr(cls, m) for m in ("encode", "encode_ordinary", "tokenize")):
                    found.add(name)
    # the bases encode through a subclass; FastEncoder is a column of the GPT-4 table, and
    # RankEncoder the encoder of the Llama tables
    return found - {"Tokenizer", "PretrainedTokenizer", "FastEncoder", "RankEncoder"}


def test_the_hostile_benchmark_covers_every_tokenizer_the_package_ships():
    results = benchmarks.load_results()
    covered = {"GPT4Tokenizer"} | {t["tokenizer"] for t in results["hostile"]["tables"]}
    assert shipped_tokenizers() - covered == set()
    assert {"SentencePieceBPE", "SentencePieceUnigram", "WordPiece"} <= covered
    rendered = run_all().render_markdown(results)
    committed = RESULTS_MD.read_text(encoding="utf-8")
    heading = "Hostile inputs: every other tokenizer the package ships"
    assert section(rendered, heading) == section(committed, heading)
    for table in results["hostile"]["tables"]:
        assert f"### {table['title']}" in committed
        assert f"- {table['tokenizer']}, " in committed  # its growth targets
