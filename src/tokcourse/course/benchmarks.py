"""The measured numbers of the repository's ``benchmarks/`` (``make bench``), for chapter 13.

``benchmarks/run_all.py`` writes ``benchmarks/results.json`` (the measurements, in seconds and
bytes, with the machine they were taken on) and renders ``RESULTS.md`` from the same dict. This
module reads the JSON and hands out plain numbers; the chapter puts them into words.

The file lives in a clone of the repository, not in the installed package, so
:func:`load_results` returns ``None`` when there is none (a ``pip install`` on Colab).

The trainers have chapter 13's names: the *fast trainer* (``train_fast``) and the *chunk
trainer* (``bpe.train_on_chunks``, chapter 02's loop on each distinct chunk with its count),
beside Hugging Face ``tokenizers`` and sentencepiece.

>>> results = load_results()
>>> results is None or training_times(results)[0].label == "fast trainer (train_fast)"
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
    "figure",
    "load_results",
    "summary",
    "training_times",
]

FAST, CHUNK = "fast trainer (train_fast)", "chunk trainer (train_on_chunks)"

#: The layout of ``results.json`` this module reads (``run_all.SCHEMA`` writes it).
SCHEMA = 3


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
    """Every training time of the run: the fast trainer, the chunk trainer (measured points
    and the extrapolation to the full vocabulary), Hugging Face ``tokenizers``, sentencepiece."""
    train, size = results["train"], results["vocab_size"]
    times = [TrainingTime(FAST, size, train["fast_s"])]
    times += [TrainingTime(CHUNK, n, seconds) for n, seconds in train["chunk_points"]]
    times.append(TrainingTime(CHUNK, size, train["chunk_extrapolated_s"], True))
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


def summary(results: dict[str, Any]) -> str:
    """The headline numbers of a run as a few lines of text: training, then encoding."""
    machine = results["machine"]
    times = training_times(results)
    lines = [
        f"make bench, {results['generated']}: {machine['cores']} cores, Python {machine['python']}",
        "",
        "training the whole novel (seconds):",
    ]
    for t in times:
        note = " (extrapolated)" if t.extrapolated else ""
        lines.append(
            f"  {t.label + ' to ' + format(t.vocab_size, ','):<44} {t.seconds:>8.2f}{note}"
        )
    slow = next(t for t in times if t.extrapolated)
    lines.append(  # a ratio to an extrapolated time is an extrapolation too: say so
        f"  the fast trainer is {slow.seconds / times[0].seconds:,.0f}x faster than the "
        f"{slow.label.split(' (')[0]} to {slow.vocab_size:,} (extrapolated)"
    )
    lines += ["", "encoding, MB/s (and x tiktoken's speed):"]
    for s in encoding_speeds(results):
        lines.append(
            f"  {s.text:<8} tiktoken {s.tiktoken:6.2f} | cold {s.fast_cold:5.2f} "
            f"({s.fast_cold / s.tiktoken:.2f}) | warm {s.fast_warm:5.2f} "
            f"({s.fast_warm / s.tiktoken:.2f}) | regex split {s.split_share:.0%} of warm time"
        )
    return "\n".join(lines)


def figure(results: dict[str, Any]) -> Any:
    """A plotly figure of the run: training time per trainer (log scale), encoding speed."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    size = results["vocab_size"]
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=(f"training to {size:,} tokens", "encoding throughput")
    )
    trainers = training_times(results)
    fig.add_trace(
        go.Bar(
            x=[t.seconds for t in trainers],
            y=[
                f"{t.label} to {t.vocab_size:,}" + (" (extrapolated)" if t.extrapolated else "")
                for t in trainers
            ],
            orientation="h",
            hovertemplate="%{y}<br>%{x:.3f} s<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    speeds = encoding_speeds(results)
    for field, name in [
        ("tiktoken", "tiktoken"),
        ("fast_cold", "fast, cold cache"),
        ("fast_warm", "fast, warm cache"),
        ("reference", "reference (chapter 03)"),
    ]:
        fig.add_trace(
            go.Bar(
                x=[s.text for s in speeds],
                y=[getattr(s, field) for s in speeds],
                name=name,
                hovertemplate="%{x}: %{y:.2f} MB/s<extra>" + name + "</extra>",
            ),
            row=1,
            col=2,
        )
    fig.update_xaxes(type="log", title_text="seconds (log scale)", row=1, col=1)
    fig.update_yaxes(title_text="MB/s", row=1, col=2)
    machine = results["machine"]
    fig.update_layout(
        height=480,
        title=f"make bench, {results['generated']}: {machine['cores']} cores, "
        f"Python {machine['python']}",
        legend={"orientation": "h"},
    )
    return fig
