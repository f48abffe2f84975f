"""Figures that work everywhere: Jupyter, Colab, and the static book built offline.

Plotly's default renderer emits a mime type (``application/vnd.plotly.v1+json``) that a
static Jupyter Book cannot show, so the figure silently disappears from the page. When the
book is being built, the book's Sphinx extension sets ``TOKCOURSE_BOOK_BUILD=1`` and serves
``plotly.min.js`` from ``_static``; :func:`setup_notebook` then switches plotly to plain HTML
that expects that script to be on the page (``include_plotlyjs=False``). Everywhere else
(Jupyter, Colab, VS Code) plotly keeps its normal renderer.

Call ``setup_notebook()`` once, in a chapter's setup cell.
"""

from __future__ import annotations

import os
from typing import Any

BOOK_BUILD_ENV = "TOKCOURSE_BOOK_BUILD"
BOOK_RENDERER = "tokcourse_book"


def in_book_build() -> bool:
    """True while the notebook is executed by the book build.

    >>> isinstance(in_book_build(), bool)
    True
    """
    return os.environ.get(BOOK_BUILD_ENV, "") not in ("", "0")


def _book_renderer() -> Any:
    # Imported lazily: importing plotly is slow and the package must stay cheap to import.
    from plotly.io import to_html
    from plotly.io.base_renderers import MimetypeRenderer

    class BookHtmlRenderer(MimetypeRenderer):
        """Plain ``text/html`` with no embedded plotly.js and no CDN: the page provides it."""

        def to_mimebundle(self, fig_dict: dict) -> dict[str, str]:
            html = to_html(
                fig_dict,
                include_plotlyjs=False,
                include_mathjax=False,
                full_html=False,
                validate=False,
                # Plotly's default "100%" collapses inside an auto-height output cell;
                # a figure that sets layout.height keeps its own.
                default_height="460px",
                config={"displaylogo": False, "responsive": True},
            )
            return {"text/html": html}

    return BookHtmlRenderer()


def setup_notebook() -> str:
    """Configure plotting for wherever this notebook runs; returns the plotly mode chosen.

    Returns ``"book"`` during the book build (static HTML, plotly.js served locally) and
    ``"default"`` elsewhere, leaving plotly's own choice (Colab, JupyterLab, …) untouched.

    >>> setup_notebook() in {"book", "default"}
    True
    """
    if not in_book_build():
        return "default"
    import plotly.io as pio

    pio.renderers[BOOK_RENDERER] = _book_renderer()
    pio.renderers.default = BOOK_RENDERER
    return "book"
