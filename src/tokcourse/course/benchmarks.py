"""The measured numbers of the repository's ``benchmarks/`` (``make bench``), for chapter 13.

``benchmarks/run_all.py`` writes ``benchmarks/results.json`` (the measurements, in seconds and
bytes, with the machine they were taken on) and renders ``RESULTS.md`` from the same dict. This
module reads the JSON and hands out plain numbers; the chapter puts them into words.

The file lives in a clone of the repository, not in the installed package, so
:func:`load_results` returns ``None`` when there is none (a ``pip install`` on Colab).

>>> results = load_results()
>>> results is None or training_times(results)[0].label == "tokcourse fast (train_fast)"
True
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "SCHEMA",
    "EncodingSpeed",
    "TrainingTime",
    "default_path",
    "encoding_speeds",
    "load_results",
    "training_times",
]

#: The layout of ``results.json`` this module reads (``run_all.SCHEMA`` writes it).
SCHEMA = 1


def default_path() -> Path:
    """Where a clone keeps the file: ``benchmarks/results.json`` beside ``src/``."""
    return Path(__file__).resolve().parents[3] / "benchmarks" / "results.json"


def load_results(path: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """The dict ``benchmarks/run_all.py`` wrote, or ``None`` when the file is not there.

    A file of another layout (``schema``) is an error, not a silent misreading.

    Example: ``load_results()["machine"]  # {'cores': 2, 'python': '3.11.7', ...}``
    """
    file = default_path() if path is None else Path(path)
    if not file.is_file():
        return None
    results = json.loads(file.read_text(encoding="utf-8"))
    if not isinstance(results, dict) or results.get("schema") != SCHEMA:
        found = results.get("schema") if isinstance(results, dict) else type(results).__name__
        raise ValueError(f"{file}: schema {found!r}, this reader knows schema {SCHEMA}")
    return results


@dataclass(frozen=True)
class TrainingTime:
    """One trainer on the whole novel: ``seconds`` measured, or extrapolated when so marked."""

    label: str
    vocab_size: int
    seconds: float
    extrapolated: bool = False


def training_times(results: dict[str, Any]) -> list[TrainingTime]:
    """Every training time of the run: the fast trainer, the unique-chunks one (measured points
    and the extrapolation to the full vocabulary), Hugging Face ``tokenizers``, sentencepiece."""
    train, size = results["train"], results["vocab_size"]
    times = [TrainingTime("tokcourse fast (train_fast)", size, train["fast_s"])]
    times += [
        TrainingTime(f"unique chunks (train_on_chunks) to {n}", n, seconds)
        for n, seconds in train["naive_points"]
    ]
    slow = train["naive_extrapolated_s"]
    times.append(TrainingTime("unique chunks (train_on_chunks)", size, slow, True))
    if train.get("hf_s"):
        times.append(TrainingTime("HF tokenizers", train["hf_s"][1], train["hf_s"][0]))
    if train.get("sp_s"):
        times.append(TrainingTime("sentencepiece (bpe)", train["sp_s"][1], train["sp_s"][0]))
    return times


@dataclass(frozen=True)
class EncodingSpeed:
    """Encoding throughput on one text, MB/s: tiktoken, ours cold and warm, the reference."""

    text: str
    megabytes: float
    tiktoken: float
    fast_cold: float
    fast_warm: float
    reference: float
    split_share: float  # the regex split's share of the warm time


def encoding_speeds(results: dict[str, Any]) -> list[EncodingSpeed]:
    """Throughput (MB/s) of each encoder on each text of the run."""
    return [
        EncodingSpeed(
            text=row["name"],
            megabytes=row["mb"],
            tiktoken=row["mb"] / row["tiktoken_s"],
            fast_cold=row["mb"] / row["cold_s"],
            fast_warm=row["mb"] / row["warm_s"],
            reference=row["mb"] / row["reference_s"],
            split_share=row["split_s"] / row["warm_s"],
        )
        for row in results["encode"]["rows"]
    ]
