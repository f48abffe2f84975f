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

__all__ = ["window_bars"]


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
