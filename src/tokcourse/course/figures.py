"""The chapters' figures and tables, so that a page shows one call instead of the plotting code.

Each function takes what the chapter computed and returns a figure (plotly or matplotlib) or
an HTML table; the chapter's own cells keep the measuring, which is what a learner reads.

>>> fig = window_bars({("text", "gpt2"): [10, 12]}, 1024)
>>> fig.layout.yaxis.title.text
'characters in the first 1024 tokens'
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "bit_boxes",
    "bytes_per_char_bars",
    "encode_steps_figure",
    "hex_bytes",
    "html_table",
    "layout_table",
    "main_scripts",
    "planes_figure",
    "window_bars",
]


def window_bars(fits: Mapping[tuple[str, str], Sequence[int]], n_ctx: int) -> Any:
    """A plotly bar chart of how much text fits in ``n_ctx`` tokens, per text and encoding.

    ``fits[text, encoding]`` holds one number per slice of the text (characters in the first
    ``n_ctx`` tokens); a bar shows the median slice, its whiskers the smallest and the largest.
    """
    import plotly.graph_objects as go

    texts = list(dict.fromkeys(label for label, _ in fits))
    names = list(dict.fromkeys(name for _, name in fits))
    fig = go.Figure()
    for name in names:
        values = [fits[label, name] for label in texts]
        middle = [statistics.median(v) for v in values]
        fig.add_bar(
            name=name,
            x=texts,
            y=middle,
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [max(v) - m for v, m in zip(values, middle, strict=True)],
                "arrayminus": [m - min(v) for v, m in zip(values, middle, strict=True)],
            },
            customdata=[(min(v), max(v), len(v)) for v in values],
            hovertemplate="%{x}: median %{y:,} characters"
            "<br>%{customdata[2]} slices: %{customdata[0]:,} to %{customdata[1]:,}"
            "<extra>" + name + "</extra>",
        )
    fig.update_layout(
        barmode="group",
        title=f"How much text fits in a {n_ctx}-token context",
        yaxis_title=f"characters in the first {n_ctx} tokens",
        legend_title="encoding",
        height=420,
    )
    return fig


def html_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Any:
    """A small HTML table (an IPython ``HTML`` object); cells may hold markup, so escape plain
    text first. Every cell is padded, so that neighbouring values never run together.

    >>> html_table(["a", "b"], [[1, 2]]).data.count("<td")
    2
    """
    from IPython.display import HTML

    pad = "style='padding: 0.2em 0.9em; text-align: left'"
    head = "".join(f"<th {pad}>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td {pad}>{c}</td>" for c in row) + "</tr>" for row in rows)
    return HTML(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def hex_bytes(data: bytes) -> str:
    """``data`` as hex digits in a ``<code>`` element: ``<code>c3 a9</code>``."""
    return f"<code>{data.hex(' ')}</code>"


#: The marker bits in the book theme's muted text colour (readable in light and dark mode),
#: else a grey that reads at 7:1 on white.
GREY = "var(--pst-color-text-muted, #595959)"


def colored_bits(code_point: int) -> str:
    """The UTF-8 bytes of a code point as HTML: marker bits grey, payload bits bold."""
    from tokcourse import utf8

    return (
        "<code>"
        + " ".join(
            f"<span style='color:{GREY}'>{marker}</span><b>{payload}</b>"
            for marker, payload in utf8.bit_layout(code_point)
        )
        + "</code>"
    )


def layout_table(examples: Sequence[str], hidden_row: int | None = None) -> Any:
    """UTF-8's bit layout table (RFC 3629), one example character per row, its bits filled in.

    ``hidden_row``: the number of bytes of a row whose filled-in bits are left to the reader.
    """
    from tokcourse import utf8

    rows = []
    for (first, last, pattern), ch in zip(utf8.LAYOUT, examples, strict=True):
        n_bits = pattern.count("x")
        n_bytes = len(pattern.split())
        rows.append(
            [
                f"U+{first:04X} to U+{last:04X}",
                n_bytes,
                n_bits,
                f"<code>{pattern}</code>",
                f"{ch} U+{ord(ch):04X} = <code>{ord(ch):0{n_bits}b}</code>",
                colored_bits(ord(ch)) if n_bytes != hidden_row else "your turn, below",
            ]
        )
    return html_table(["code points", "bytes", "x bits", "pattern", "example", "its UTF-8"], rows)


def planes_figure(
    per_plane: Mapping[tuple[int, str], int], groups: Sequence[str], version: str
) -> Any:
    """A plotly stacked bar chart of what each of the 17 planes holds, by category group."""
    import plotly.graph_objects as go

    # fixed colours for the "not a character" groups; surrogates in black
    colors = {"private use": "#c7b8e6", "surrogates": "#000000", "unassigned": "#e4e4e4"}
    fig = go.Figure()
    for name in groups:
        fig.add_bar(
            name=name,
            x=[f"plane {p}" for p in range(17)],
            y=[per_plane.get((p, name), 0) for p in range(17)],
            hovertemplate="%{x}: %{y:,} " + name + "<extra></extra>",
            marker_color=colors.get(name),
        )
    fig.update_layout(
        barmode="stack",
        title=f"What the 17 planes hold (Unicode {version})",
        yaxis_title="code points",
        legend_title="category",
        height=460,
    )
    return fig


def bytes_per_char_bars(
    texts: Mapping[str, str], bytes_per_char: Mapping[str, Mapping[str, float]]
) -> Any:
    """A plotly bar chart of bytes per character of each text, one bar per encoding."""
    import plotly.graph_objects as go

    fig = go.Figure()
    labels = list(texts)
    non_ascii = [sum(ord(c) >= 128 for c in texts[label]) / len(texts[label]) for label in labels]
    for e, per_text in bytes_per_char.items():
        fig.add_bar(
            name=e.removesuffix("-le").upper(),
            x=labels,
            y=[per_text[label] for label in labels],
            customdata=[
                (len(texts[label]), share) for label, share in zip(labels, non_ascii, strict=True)
            ],
            hovertemplate="%{x}: %{y:.2f} bytes per character"
            "<br>%{customdata[0]:,} characters, "
            "%{customdata[1]:.0%} of them non-ASCII<extra>" + e + "</extra>",
        )
    fig.update_layout(
        barmode="group",
        title="Bytes per character of the same messages, by encoding",
        yaxis_title="bytes per character",
        legend_title="encoding",
        height=460,
    )
    return fig


def bit_boxes(examples: Sequence[str]) -> None:
    """Draw (matplotlib) the UTF-8 bytes of each character as a row of bit boxes, marker bits
    grey, the code point's bits blue, each byte's value under it."""
    import unicodedata

    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from tokcourse import utf8

    _, ax = plt.subplots(figsize=(9, 3.8))
    for row, ch in enumerate(examples):
        y = 1.3 * (len(examples) - 1 - row)
        # no emoji in the font
        label = ch if ord(ch) < 0x10000 else unicodedata.name(ch).lower()
        ax.text(-0.6, y + 0.4, f"{label}  U+{ord(ch):04X}", ha="right", va="center", fontsize=10)
        for i, (marker, payload) in enumerate(utf8.bit_layout(ord(ch))):
            x0 = i * 9
            for k, bit in enumerate(marker + payload):
                is_marker = k < len(marker)
                color = "#bbbbbb" if is_marker else "#4c78a8"
                ax.add_patch(Rectangle((x0 + k, y), 1, 0.8, facecolor=color, edgecolor="white"))
                text_color = "black" if is_marker else "white"
                ax.text(
                    x0 + k + 0.47,
                    y + 0.4,
                    bit,
                    ha="center",
                    va="center",
                    color=text_color,
                    fontsize=9,
                )
            value = int(marker + payload, 2)
            ax.text(x0 + 4, y - 0.2, f"0x{value:02X}", ha="center", va="center", fontsize=8)
    ax.set_xlim(-9, 36)
    ax.set_ylim(-0.5, 1.3 * len(examples) - 0.3)
    ax.axis("off")
    ax.set_title(
        "UTF-8 bytes of four characters: grey = marker bits, blue = bits of the code point"
    )
    plt.tight_layout()
    plt.show()


#: The Unicode scripts chapter 01 looks for in its parallel texts.
UNICODE_SCRIPTS = (
    "Latin",
    "Cyrillic",
    "Greek",
    "Arabic",
    "Devanagari",
    "Georgian",
    "Hangul",
    "Hiragana",
    "Katakana",
    "Han",
    "Thai",
    "Hebrew",
    "Armenian",
    "Bengali",
)


def main_scripts(text: str, share: float = 0.05) -> set[str]:
    """The Unicode scripts (regex's ``\\p{Script=...}``) of at least ``share`` of the letters of
    ``text``, among :data:`UNICODE_SCRIPTS`.

    >>> sorted(main_scripts("Привет, world! 안녕"))
    ['Cyrillic', 'Hangul', 'Latin']
    """
    import regex

    letters = regex.findall(r"\p{L}", text)
    found = set()
    for script in UNICODE_SCRIPTS:
        pattern = regex.compile(rf"\p{{Script={script}}}")
        n = sum(1 for c in letters if pattern.match(c))
        if n >= share * len(letters):
            found.add(script)
    return found


def encode_steps_figure(
    text: str, steps: Sequence[tuple[Any, list[int]]], merges: Mapping, vocab: Mapping
) -> Any:
    """A matplotlib figure of ``encode``'s steps, one row per step: the tokens as boxes, the
    token each merge creates highlighted. ``steps`` holds ``(pair, ids)``, ``pair`` ``None``
    for the bytes at the start."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    from tokcourse.course.viz import visible

    fig, ax = plt.subplots(figsize=(8, 0.55 * len(steps) + 0.6))
    for row, (pair, row_ids) in enumerate(steps):
        y = len(steps) - 1 - row
        new_id = None if pair is None else merges[pair]
        x = 0.0
        for idx in row_ids:
            label = visible(vocab[idx].decode("utf-8"))
            width = 0.32 + 0.16 * len(label)
            colour = "#ffcc80" if idx == new_id else "#e3f2fd"
            box = FancyBboxPatch(
                (x, y - 0.32),
                width,
                0.64,
                boxstyle="round,pad=0.02",
                facecolor=colour,
                edgecolor="#555555",
                linewidth=0.8,
            )
            ax.add_patch(box)
            ax.text(
                x + width / 2, y, label, ha="center", va="center", fontsize=10, family="monospace"
            )
            x += width + 0.08
        note = "bytes" if pair is None else f"merge {new_id}"
        ax.text(-0.2, y, note, ha="right", va="center", fontsize=9, color="#333333")
    ax.set_xlim(-1.6, 6.2)
    ax.set_ylim(-0.7, len(steps) - 0.3)
    ax.axis("off")
    ax.set_title(f"Encoding {text!r}: always the earliest-learned merge first (· is a space)")
    fig.tight_layout()
    return fig
