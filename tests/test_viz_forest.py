"""Tests for the merge forest: tokcourse.course.forest, merge_tree_layout (data), merge_forest."""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict

import matplotlib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokcourse import bpe
from tokcourse.course.forest import ForestLayout, merge_forest, merge_tree_layout, token_label

matplotlib.use("Agg")

TEXT = (
    "the cat sat on the mat. the dog sat on the log.\n"
    "héllo wörld, héllo again 👋👋 tab\there  \x00\x00 café café"
)
MERGES = bpe.train(TEXT, 300)
VOCAB = bpe.build_vocab(MERGES)
ALL_TOKENS = sorted(VOCAB)[256:]


def check_invariants(layout: ForestLayout, merges, vocab, roots) -> None:
    nodes = layout.nodes
    halves = {idx: pair for pair, idx in merges.items()}
    children = defaultdict(list)
    for p, c in layout.edges:
        children[p].append(c)

    # one tree per root, in order
    assert [nodes[i].token for i in layout.roots] == list(roots)
    assert [nodes[i].tree for i in layout.roots] == list(range(len(roots)))

    for i, node in enumerate(nodes):
        assert node.bytes == vocab[node.token]
        assert node.label == token_label(node.bytes)
        assert node.width == len(node.label)
        kids = children.get(i, [])
        if node.token in halves:
            # every merged token has exactly two edges, to its halves, left half on the left
            assert [nodes[c].token for c in kids] == list(halves[node.token])
            left, right = (nodes[c] for c in kids)
            assert left.x < node.x < right.x or left.x < right.x
            assert left.bytes + right.bytes == node.bytes
            assert node.level == 1 + max(left.level, right.level)
            assert not node.is_leaf
        else:
            assert kids == [] and node.is_leaf and node.level == 0

    # parents above children
    for p, c in layout.edges:
        assert nodes[p].y > nodes[c].y
        assert nodes[p].tree == nodes[c].tree
        assert nodes[p].y - nodes[p].level == nodes[c].y - nodes[c].level  # same band

    # the leaves of each tree spell its root, left to right, on one line
    for t, r in enumerate(layout.roots):
        leaves = sorted((n for n in nodes if n.tree == t and n.is_leaf), key=lambda n: n.x)
        assert b"".join(n.bytes for n in leaves) == nodes[r].bytes
        assert len({n.y for n in leaves}) == 1

    assert_no_overlap(layout)


def assert_no_overlap(layout: ForestLayout) -> None:
    """No two boxes on the same line overlap (or even touch)."""
    rows = defaultdict(list)
    for n in layout.nodes:
        rows[n.y].append(n)
    for row in rows.values():
        row.sort(key=lambda n: n.x)
        for a, b in zip(row, row[1:], strict=False):
            assert a.x + a.width / 2 < b.x - b.width / 2, (a, b)


def test_docstring_tree_exactly():
    layout = merge_tree_layout({(97, 97): 256, (256, 98): 257}, [257])
    assert [(n.token, n.level) for n in layout.nodes] == [
        (257, 2),
        (256, 1),
        (97, 0),
        (97, 0),
        (98, 0),
    ]
    a1, a2, b = layout.nodes[2:]
    assert a1.x < a2.x < b.x  # the leaves spell "aab"
    assert layout.nodes[1].x == pytest.approx((a1.x + a2.x) / 2)  # "aa" sits over its bytes


def test_every_learned_token_at_once():
    layout = merge_tree_layout(MERGES, ALL_TOKENS)
    check_invariants(layout, MERGES, VOCAB, ALL_TOKENS)


@pytest.mark.parametrize("max_width", [20, 60, 200])
def test_bands_wrap_and_stack(max_width):
    roots = sorted(ALL_TOKENS, key=lambda t: -len(VOCAB[t]))[:12]
    layout = merge_tree_layout(MERGES, roots, max_width=max_width)
    check_invariants(layout, MERGES, VOCAB, roots)
    bases = {}  # tree -> the y of its bytes
    for n in layout.nodes:
        if n.is_leaf:
            bases[n.tree] = n.y
    # bands go downwards and never overlap vertically
    band_of = sorted(set(bases.values()), reverse=True)
    assert len(band_of) > 1 or max_width == 200
    for upper, lower in zip(band_of, band_of[1:], strict=False):
        top_of_lower = max(n.y for n in layout.nodes if bases[n.tree] == lower)
        assert top_of_lower < upper - 1
    # a band is no wider than max_width unless it holds a single tree
    for base in band_of:
        band = [n for n in layout.nodes if bases[n.tree] == base]
        width = max(n.x + n.width / 2 for n in band) - min(n.x - n.width / 2 for n in band)
        assert width <= max_width or len({n.tree for n in band}) == 1


def test_a_wide_parent_centres_its_narrow_halves():
    # Real vocabularies never label a token wider than its halves; a made-up one can.
    vocab = {0: b"a", 1: b"b", 2: b"a much longer label", 3: b"c", 4: b"long label + c"}
    layout = merge_tree_layout({(0, 1): 2, (2, 3): 4}, [4, 2], vocab)
    assert_no_overlap(layout)
    wide, a, b = layout.nodes[1:4]
    assert wide.token == 2 and (a.x + b.x) / 2 == pytest.approx(wide.x)


@pytest.mark.parametrize(
    ("data", "label"),
    [
        (b" the", "·the"),
        (b"e\n", "e↵"),
        (b"\t", "→"),
        ("é".encode(), "é"),
        ("é".encode()[:1], "⟨C3⟩"),
        ("👋".encode()[:2], "⟨F0 9F⟩"),
        (b"\x00", "⟨U+0000⟩"),
        (b"\x80abc", "⟨80⟩abc"),
    ],
)
def test_labels_are_readable(data, label):
    assert token_label(data) == label


def test_labels_never_hold_invisible_characters():
    for t in range(256, max(VOCAB) + 1):
        text = re.sub(r"⟨[0-9A-F ]+⟩|⟨U\+[0-9A-F]+⟩", "", token_label(VOCAB[t]))  # hex is fine
        for c in text:
            assert not c.isspace() and unicodedata.category(c)[0] not in "CZ", (t, c)


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet="ab c\né", min_size=4, max_size=40), st.integers(1, 8))
def test_invariants_on_random_training(text, n_merges):
    try:
        merges = bpe.train(text, 256 + n_merges)
    except ValueError:  # too short for that many merges
        return
    vocab = bpe.build_vocab(merges)
    roots = sorted(merges.values())
    check_invariants(merge_tree_layout(merges, roots, max_width=25), merges, vocab, roots)


def test_unknown_root_is_named():
    with pytest.raises(ValueError, match="999"):
        merge_tree_layout(MERGES, [999])


def test_drawing_has_a_box_per_node_and_a_line_per_edge():
    roots = ALL_TOKENS[-3:]
    layout = merge_tree_layout(MERGES, roots)
    ax = merge_forest(MERGES, roots, title="forest")
    labels = [t.get_text() for t in ax.texts]
    ids = [str(n.token) for n in layout.nodes if not n.is_leaf]
    assert sorted(labels) == sorted([n.label for n in layout.nodes] + ids)
    assert len(ax.lines) == len(layout.edges)
    assert ax.get_title() == "forest"
    quiet = merge_forest(MERGES, roots, show_ids=False)
    assert len(quiet.texts) == len(layout.nodes)
    matplotlib.pyplot.close("all")


def test_drawing_nothing_is_an_error():
    with pytest.raises(ValueError, match="roots is empty"):
        merge_forest(MERGES, [])
