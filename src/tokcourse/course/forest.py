"""Merge trees: how each token was built from two earlier ones, laid out and drawn.

:func:`merge_tree_layout` is the pure-data step (node positions, edges); :func:`merge_forest`
draws it with matplotlib. Token labels use the same honest display as :mod:`tokcourse.course.viz`
(bytes that are not valid UTF-8 on their own are shown as hex).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from tokcourse.course.viz import _split_utf8, _visible_part

__all__ = ["ForestLayout", "ForestNode", "merge_forest", "merge_tree_layout", "token_label"]


@dataclass(frozen=True)
class ForestNode:
    """One box of a merge-forest drawing: a token, where it sits and how it is labelled.

    ``x`` is the centre of the box in character widths, ``y`` its height on the drawing (its
    ``level`` plus the height of its band), ``width`` the label's width in characters.
    """

    token: int
    bytes: bytes
    label: str
    x: float
    y: float
    width: float
    tree: int  # index into the roots the layout was made for
    level: int  # 0 for a byte, 1 + the higher of the two halves otherwise

    @property
    def is_leaf(self) -> bool:
        """True for a token no merge made: a single byte at the bottom of a tree."""
        return self.level == 0


@dataclass(frozen=True)
class ForestLayout:
    """Where to draw every node and edge of a merge forest (pure data, no plotting).

    ``edges`` are ``(parent, child)`` indices into ``nodes``: each token has exactly two,
    to its left and right halves, left first.
    """

    nodes: tuple[ForestNode, ...]
    edges: tuple[tuple[int, int], ...]
    roots: tuple[int, ...]  # index of each tree's root in ``nodes``

    @property
    def width(self) -> float:
        """Total width in characters (the widest band)."""
        if not self.nodes:
            return 0.0
        return max(n.x + n.width / 2 for n in self.nodes) - min(
            n.x - n.width / 2 for n in self.nodes
        )


def token_label(data: bytes) -> str:
    """A token's bytes as one line of readable text: spaces as ``·``, newlines as ``↵``,
    bytes that are not valid UTF-8 on their own as hex.

    >>> token_label(b" the"), token_label(b".\\n"), token_label("é".encode()[:1])
    ('·the', '.↵', '⟨C3⟩')
    """
    return "".join(_visible_part(p) for p in _split_utf8(data)).replace("\n", "")


def merge_tree_layout(
    merges: Mapping[tuple[int, int], int],
    roots: Iterable[int],
    vocab: Mapping[int, bytes] | None = None,
    *,
    max_width: float | None = None,
    pad: float = 1.0,
    tree_gap: float = 3.0,
    band_gap: float = 1.5,
) -> ForestLayout:
    """Lay out the merge trees of ``roots``: bytes at the bottom, each token above its halves.

    Each root is unfolded into a binary tree (a token that occurs twice is drawn twice).
    Every subtree gets a horizontal slot at least as wide as its label plus ``pad``; the two
    halves sit side by side inside their parent's slot, so boxes on one level never overlap
    and the leaves spell the token from left to right. Trees go left to right, ``tree_gap``
    apart; with ``max_width`` (in characters) a tree that would overflow starts a new band
    below. ``vocab`` defaults to the one ``merges`` builds from single bytes.

    >>> layout = merge_tree_layout({(97, 97): 256, (256, 98): 257}, [257])
    >>> [(n.token, n.label, n.level) for n in layout.nodes]
    [(257, 'aab', 2), (256, 'aa', 1), (97, 'a', 0), (97, 'a', 0), (98, 'b', 0)]
    >>> layout.edges
    ((0, 1), (0, 4), (1, 2), (1, 3))
    """
    from tokcourse.bpe import build_vocab  # local: bpe never imports viz, keep it that way

    vocab = build_vocab(merges) if vocab is None else vocab
    halves = {idx: pair for pair, idx in merges.items()}
    roots = list(roots)
    for r in roots:
        if r not in vocab:
            raise ValueError(f"token {r} is not in the vocabulary (ids 0..{max(vocab)})")

    @cache
    def level(t: int) -> int:
        return 0 if t not in halves else 1 + max(level(halves[t][0]), level(halves[t][1]))

    @cache
    def slot(t: int) -> float:  # width of the subtree's slot
        own = len(token_label(vocab[t])) + pad
        return own if t not in halves else max(own, slot(halves[t][0]) + slot(halves[t][1]))

    # 1. put the trees into bands (rows), left to right
    bands: list[list[int]] = [[]]
    used = 0.0
    for r in roots:
        w = slot(r)
        if bands[-1] and max_width is not None and used + tree_gap + w > max_width:
            bands.append([])
            used = 0.0
        used += (tree_gap if bands[-1] else 0.0) + w
        bands[-1].append(r)

    nodes: list[ForestNode] = []
    edges: list[tuple[int, int]] = []
    root_index: list[int] = []

    def place(t: int, left: float, base: float, tree: int) -> int:
        w = slot(t)
        label = token_label(vocab[t])
        here = len(nodes)
        lvl = level(t)
        nodes.append(
            ForestNode(t, vocab[t], label, left + w / 2, base + lvl, len(label), tree, lvl)
        )
        if t in halves:
            a, b = halves[t]
            inner = slot(a) + slot(b)
            start = left + (w - inner) / 2  # centre the halves under a wider parent
            edges.append((here, place(a, start, base, tree)))
            edges.append((here, place(b, start + slot(a), base, tree)))
        return here

    base = 0.0
    tree = 0
    for k, band in enumerate(bands):
        if k:  # each band sits below the previous one
            base -= max((level(r) for r in band), default=0) + 1 + band_gap
        left = 0.0
        for r in band:
            root_index.append(place(r, left, base, tree))
            left += slot(r) + tree_gap
            tree += 1
    # edges were appended depth-first; sort so each parent's two edges are adjacent
    return ForestLayout(tuple(nodes), tuple(sorted(edges)), tuple(root_index))


def merge_forest(
    merges: Mapping[tuple[int, int], int],
    roots: Iterable[int],
    vocab: Mapping[int, bytes] | None = None,
    *,
    ax: Any = None,
    max_width: float | None = 90,
    show_ids: bool = True,
    fontsize: float = 9,
    title: str | None = None,
) -> Any:
    """Draw the merge trees of ``roots`` with matplotlib; returns the Axes.

    Bytes sit at the bottom (grey), tokens made by merges above their two halves (blue), the
    roots on top (orange); with ``show_ids`` each merged token carries its id underneath. Pass
    ``ax`` to draw into an existing Axes (the figure is then not resized).
    See :func:`merge_tree_layout` for the layout.

    Example: ``merge_forest(train("aaabdaaabac", 259), [258])``
    """
    import matplotlib.pyplot as plt

    layout = merge_tree_layout(merges, roots, vocab, max_width=max_width)
    if not layout.nodes:
        raise ValueError("roots is empty: pass at least one token id to draw")
    xs = [n.x for n in layout.nodes]
    ys = [n.y for n in layout.nodes]
    x0 = min(n.x - n.width / 2 for n in layout.nodes) - 1
    x1 = max(n.x + n.width / 2 for n in layout.nodes) + 1
    y0, y1 = min(ys) - 0.8, max(ys) + 0.6
    if ax is None:
        char_in = fontsize * 0.6 / 72 * 1.35  # a monospace character plus breathing room
        fig_w = min(max((x1 - x0) * char_in, 4.0), 16.0)
        fig_h = min(max((y1 - y0) * 0.6, 1.6), 16.0)
        _, ax = plt.subplots(figsize=(fig_w, fig_h))
    below = 0.5 if show_ids else 0.2  # an edge leaves a box under its id, not through it
    for p, c in layout.edges:
        ax.plot([xs[p], xs[c]], [ys[p] - below, ys[c] + 0.2], color="#9a9a9a", lw=0.9, zorder=1)
    roots_set = set(layout.roots)
    for i, n in enumerate(layout.nodes):
        colour = "#ffd8a8" if i in roots_set else ("#e9e9e9" if n.is_leaf else "#cfe2ff")
        ax.text(
            n.x,
            n.y,
            n.label,
            ha="center",
            va="center",
            family="monospace",
            fontsize=fontsize,
            zorder=2,
            bbox={"boxstyle": "round,pad=0.25", "fc": colour, "ec": "#777777", "lw": 0.6},
        )
        if show_ids and not n.is_leaf:  # a byte's label already is its value
            ax.text(
                n.x,
                n.y - 0.36,
                str(n.token),
                ha="center",
                va="center",
                fontsize=fontsize * 0.7,
                color="#777777",
                zorder=2,
            )
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax
