"""What the split costs and what it buys, measured (chapter 04).

:func:`split_sweep` trains two byte-level BPE tokenizers on the same lines of a text, one on
whole lines (no split), one on the chunks of a split pattern, with the fast trainer, and
measures held-out characters per token at several numbers of merges. The merges of a shorter
run are a prefix of a longer run's (BPE is greedy and deterministic), so each tokenizer is
trained once, to the largest size, and cut.

    >>> sweep = split_sweep("the cat sat on the mat.\\n" * 40, merges=(4, 8))
    >>> [row.merges for row in sweep.rows]
    [4, 8]

:func:`plot_sweep` draws the results of several texts; :func:`word_copies` counts the versions
of one word that a vocabulary holds (``dog.``, ``dog!``, ``dog?``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from tokcourse.bpe import build_vocab
from tokcourse.fast_encode import FastEncoder
from tokcourse.fast_train import count_chunks, train_fast
from tokcourse.patterns import GPT2_SPLIT_PATTERN, split

__all__ = [
    "Row",
    "Sweep",
    "crossing_tokens",
    "held_out_cost",
    "plot_sweep",
    "split_sweep",
    "word_copies",
]

Merges = dict[tuple[int, int], int]


@dataclass(frozen=True)
class Row:
    """Held-out characters per token at one number of merges, without and with the split."""

    merges: int
    whole: float
    split: float


@dataclass(frozen=True)
class Sweep:
    """The rows of a sweep, the merges of both tokenizers (largest size) and the texts."""

    rows: list[Row]
    whole_merges: Merges
    split_merges: Merges
    train_lines: list[str]
    held_out_lines: list[str]


def _prefix(merges: Mapping[tuple[int, int], int], n: int) -> Merges:
    return {pair: idx for pair, idx in merges.items() if idx < 256 + n}


def _chars_per_token(lines: Sequence[str], encoder: FastEncoder) -> float:
    n_tokens = sum(len(encoder.encode_ordinary(line)) for line in lines)
    return sum(map(len, lines)) / n_tokens


def split_sweep(
    text: str,
    merges: Sequence[int] = (400, 1024, 2048),
    pattern: str = GPT2_SPLIT_PATTERN,
    held_out_share: float = 0.2,
) -> Sweep:
    """Train on the first lines of ``text``, measure on the last ``held_out_share`` of them.

    The tokenizer without a split learns from each line whole (its newline included); the
    other from the chunks of ``pattern``. Both encode the held-out lines one at a time.
    """
    if not 0 < held_out_share < 1:
        raise ValueError(f"held_out_share must be between 0 and 1, got {held_out_share!r}")
    lines = text.splitlines(keepends=True)
    cut = round(len(lines) * (1 - held_out_share))
    train_lines, held_out = lines[:cut], lines[cut:]
    largest = 256 + max(merges)
    whole = train_fast(Counter(line.encode() for line in train_lines), largest)
    chunked = train_fast(count_chunks("".join(train_lines), pattern), largest)
    rows = []
    for n in sorted(merges):
        no_split = FastEncoder(_prefix(whole, n), pattern=None)
        with_split = FastEncoder(_prefix(chunked, n), pattern=pattern)
        rows.append(
            Row(
                n,
                _chars_per_token(held_out, no_split),
                _chars_per_token(held_out, with_split),
            )
        )
    return Sweep(rows, whole, chunked, train_lines, held_out)


def held_out_cost(
    text: str, pattern: str, merges: int = 1024, held_out_share: float = 0.2
) -> tuple[FastEncoder, int]:
    """Train on the first lines of ``text`` with ``pattern``; tokens for the last lines.

    Returns the trained encoder and the number of tokens it spends on the held-out lines.
    """
    lines = text.splitlines(keepends=True)
    cut = round(len(lines) * (1 - held_out_share))
    trained = train_fast(count_chunks("".join(lines[:cut]), pattern), 256 + merges)
    encoder = FastEncoder(trained, pattern=pattern)
    return encoder, len(encoder.encode_ordinary("".join(lines[cut:])))


def word_copies(merges: Mapping[tuple[int, int], int]) -> dict[str, list[bytes]]:
    """The tokens of each ASCII word that has more than one version in the vocabulary.

    A version is the word with anything around it: a space in front, punctuation or a
    space after it (``b" dog"``, ``b"dog. "``). Only tokens that hold exactly one word of
    two letters or more count; ``"The"`` and ``"the"`` are different words.

    >>> word_copies({(100, 111): 256, (256, 103): 257, (257, 46): 258})
    {'dog': [b'dog', b'dog.']}
    """
    found: defaultdict[str, list[bytes]] = defaultdict(list)
    vocab = build_vocab(merges)
    for idx in range(256, 256 + len(merges)):
        words = regex.findall(rb"[A-Za-z]+", vocab[idx])
        if len(words) == 1 and len(words[0]) > 1:
            found[words[0].decode()].append(vocab[idx])
    return {word: tokens for word, tokens in found.items() if len(tokens) > 1}


def crossing_tokens(merges: Mapping[tuple[int, int], int], pattern: str) -> list[bytes]:
    """The learned tokens that ``pattern`` would cut into more than one chunk."""
    vocab = build_vocab(merges)
    return [
        vocab[i]
        for i in range(256, 256 + len(merges))
        if len(split(vocab[i].decode("utf-8", "replace"), pattern)) > 1
    ]


def plot_sweep(
    sizes: Sequence[int], results: Mapping[str, tuple[Sequence[float], Sequence[float]]]
) -> Any:
    """Held-out characters per token against merges (plotly): for each text of ``results``
    (``{name: (without the split, with it)}``, one value per size), a line per tokenizer.

    >>> fig = plot_sweep((4, 8), {"toy": ([1.0, 1.5], [1.1, 1.4])})
    >>> [trace.name for trace in fig.data]
    ['toy, no split (whole lines)', "toy, GPT-2's split"]
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    colours = ("#1f77b4", "#d62728")  # one colour per tokenizer, one dash style per text
    for dash, (text, values) in zip(("solid", "dot", "dash"), results.items(), strict=False):
        for colour, label, ys in zip(
            colours, ("no split (whole lines)", "GPT-2's split"), values, strict=True
        ):
            name = f"{text}, {label}"
            fig.add_trace(
                go.Scatter(
                    x=list(sizes),
                    y=list(ys),
                    name=name,
                    mode="lines+markers",
                    line={"color": colour, "dash": dash},
                    hovertemplate="%{x} merges: %{y:.3f} characters per token<extra>"
                    + name
                    + "</extra>",
                )
            )
    fig.update_layout(
        height=380,
        title="Held-out characters per token (higher is better compression)",
        xaxis_title="merges",
        yaxis_title="characters per token",
    )
    return fig
