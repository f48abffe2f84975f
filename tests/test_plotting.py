"""Plotly renders as offline HTML in the book build and is left alone everywhere else."""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from tokcourse import plotting


@pytest.fixture
def restore_renderer():
    before = pio.renderers.default
    yield
    pio.renderers.default = before


def test_outside_the_book_plotly_is_untouched(monkeypatch, restore_renderer):
    monkeypatch.delenv(plotting.BOOK_BUILD_ENV, raising=False)
    before = pio.renderers.default
    assert plotting.setup_notebook() == "default"
    assert pio.renderers.default == before


@pytest.mark.parametrize("value", ["", "0"])
def test_falsy_env_values_mean_not_a_book_build(monkeypatch, value):
    monkeypatch.setenv(plotting.BOOK_BUILD_ENV, value)
    assert not plotting.in_book_build()


def test_book_build_renders_plain_html_without_plotly_js(monkeypatch, restore_renderer):
    monkeypatch.setenv(plotting.BOOK_BUILD_ENV, "1")
    assert plotting.setup_notebook() == "book"
    assert pio.renderers.default == plotting.BOOK_RENDERER
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    bundle = pio.renderers[plotting.BOOK_RENDERER].to_mimebundle(fig.to_dict())
    # Only text/html: the book skips plotly's own mime type, and the figure would vanish.
    assert set(bundle) == {"text/html"}
    html = bundle["text/html"]
    assert "plotly-graph-div" in html and "Plotly.newPlot" in html
    # No CDN and no embedded copy of plotly.js (several MB): the page serves it.
    assert "cdn.plot.ly" not in html and "cdn.jsdelivr" not in html
    assert len(html) < 50_000
    assert "460px" in html  # an explicit height, not a 100% that collapses in a cell


def test_figure_height_is_kept(monkeypatch, restore_renderer):
    monkeypatch.setenv(plotting.BOOK_BUILD_ENV, "1")
    plotting.setup_notebook()
    fig = go.Figure(go.Bar(x=["a"], y=[1]), layout={"height": 300})
    html = pio.renderers[plotting.BOOK_RENDERER].to_mimebundle(fig.to_dict())["text/html"]
    assert "300px" in html and "460px" not in html
