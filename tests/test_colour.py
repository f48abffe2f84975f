"""The colour maths (tokcourse.course.colour) and the token palette it checks (viz.PALETTE).

The palette must hold for every reader:

* WCAG AA: the token text, the whitespace marks, the inline ids and the hex bytes reach 4.5:1
  on every palette colour (and the special token's on its dark background).
* Neighbouring colours (i, i+1, and the last with the first: the palette is cycled over token
  positions) are at least ``MIN_NEIGHBOUR_DE`` = 10 apart in CIEDE2000, under normal vision and
  simulated protanopia, deuteranopia and tritanopia (Machado et al. 2009, severity 1.0: the
  complete forms, so milder ones are covered). Why 10: a just-noticeable difference is about 1
  in CIEDE2000 (about 2.3 in CIE76); two boxes a few times that apart can be told apart side
  by side, but token boxes are small, on a page, and read at a glance, so we ask for about ten
  times the JND. The old palette had 0.5 under deuteranopia between sky and lavender.
"""

from __future__ import annotations

import re

import pytest

from tokcourse.course import colour, viz
from tokcourse.course.colour import contrast, delta_e, neighbour_differences, simulate

MIN_NEIGHBOUR_DE = 10.0
MIN_PALETTE_DE = 5.0  # any two colours of the palette, normal vision: eight distinct colours
AA = 4.5

OLD_PALETTE = (
    "#ffd6d6",
    "#ffe6bf",
    "#fff3b0",
    "#d5f2c8",
    "#c8eeea",
    "#d3e2ff",
    "#e4d9ff",
    "#ffd8f0",
)
OLD_MARK = "#8a8a8a"


def palette_problems(palette, on_it) -> list[str]:
    """Everything wrong with ``palette`` for text coloured ``on_it`` (a name -> colour dict)."""
    problems = []
    for background in palette:
        for name, fg in on_it.items():
            ratio = contrast(fg, background)
            if ratio < AA:
                problems.append(f"{name} {fg} on {background}: {ratio:.2f}:1")
    for (i, j, vision), de in neighbour_differences(palette).items():
        if de < MIN_NEIGHBOUR_DE:
            problems.append(f"{palette[i]} next to {palette[j]} under {vision}: ΔE00 {de:.1f}")
    for i, a in enumerate(palette):
        for b in palette[i + 1 :]:
            if delta_e(a, b) < MIN_PALETTE_DE:
                problems.append(f"{a} and {b} look alike: ΔE00 {delta_e(a, b):.1f}")
    return problems


DRAWN_ON_TOKENS = {
    "text": viz.TEXT_COLOR,
    "mark": viz.MARK_COLOR,
    "id": viz.ID_COLOR,
    "hex bytes": viz.RAW_COLOR,
}


# --------------------------------------------------------------------------- the maths


# Sharma, Wu and Dalal (2005), Table 1: (Lab 1, Lab 2, ΔE00), pairs that exercise each branch.
SHARMA = [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, -1.3802, -84.2814), (50.0, 0.0, -82.7485), 1.0000),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0011), 7.2195),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((22.7233, 20.0904, -46.694), (23.0331, 14.973, -42.5619), 2.0373),
    ((90.8027, -2.0831, 1.441), (91.1528, -1.6435, 0.0447), 1.4441),
    ((2.0776, 0.0795, -1.135), (0.9033, -0.0636, -0.5514), 0.9082),
]


@pytest.mark.parametrize(("lab1", "lab2", "expected"), SHARMA)
def test_ciede2000_matches_sharmas_test_data(lab1, lab2, expected):
    assert colour.ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)
    assert colour.ciede2000(lab2, lab1) == pytest.approx(expected, abs=1e-4)


def test_lab_of_known_colours():
    assert colour.lab("#ffffff") == pytest.approx((100.0, 0.0, 0.0), abs=1e-3)
    assert colour.lab("#000000") == pytest.approx((0.0, 0.0, 0.0), abs=1e-6)
    # sRGB red in CIELAB (D65), as every colour library gives it
    assert colour.lab("#ff0000") == pytest.approx((53.24, 80.09, 67.20), abs=0.02)


def test_wcag_contrast_of_known_pairs():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the famous near miss
    assert contrast("#ffffff", "#767676") == pytest.approx(4.54, abs=0.01)
    assert colour.relative_luminance("#808080") == pytest.approx(0.2159, abs=1e-4)


def test_simulation_keeps_greys_and_merges_what_each_deficiency_confuses():
    for vision in colour.VISIONS:
        for grey in ("#000000", "#ffffff", "#808080"):
            assert delta_e(simulate(grey, vision), grey) < 1.0, (vision, grey)
    red, green, blue, yellow = "#ff0000", "#00a000", "#0000ff", "#ffff00"
    assert delta_e(red, green) > 60
    assert delta_e(red, green, "deuteranopia") < 30
    assert delta_e(red, green, "protanopia") < 40
    assert delta_e(red, green, "tritanopia") > 60  # tritans tell red from green
    # tritanopia confuses blue and green-blue: far less than under normal vision
    assert delta_e("#0050ff", "#00a0a0", "tritanopia") < delta_e("#0050ff", "#00a0a0") / 2
    assert delta_e(blue, yellow, "deuteranopia") > 50  # the axis red-green deficiencies keep
    # Machado et al. 2009, protanopia at severity 1.0 applied to linear RGB
    assert simulate(red, "protanopia") == colour.rgb_to_hex(
        [colour._encoded(v) for v in (0.152286, 0.114503, -0.003882)]
    )
    with pytest.raises(ValueError, match="unknown vision 'achromatopsia'"):
        simulate(red, "achromatopsia")  # type: ignore[arg-type]


def test_hex_parsing():
    assert colour.hex_to_rgb("#fff") == (1.0, 1.0, 1.0)
    assert colour.rgb_to_hex(colour.hex_to_rgb("#d3e2ff")) == "#d3e2ff"
    with pytest.raises(ValueError, match="not a #rrggbb colour"):
        colour.hex_to_rgb("#ggg000")


def test_neighbours_wrap_around():
    diffs = neighbour_differences(("#000000", "#808080", "#ffffff"))
    assert {(i, j) for i, j, _ in diffs} == {(0, 1), (1, 2), (2, 0)}
    assert len(diffs) == 3 * len(colour.VISIONS)


# --------------------------------------------------------------------------- the palette


def test_the_old_palette_fails_these_checks():
    """The checks can fail: the palette and marks before issue 26 break all three rules."""
    problems = palette_problems(OLD_PALETTE, {"mark": OLD_MARK})
    text = "\n".join(problems)
    assert "#d3e2ff next to #e4d9ff under deuteranopia: ΔE00 0.5" in text
    assert f"mark {OLD_MARK} on #ffd6d6: 2.60:1" in text
    assert sum("under" in p for p in problems) >= 3


def test_palette_is_readable_and_neighbours_differ_in_every_vision():
    assert len(viz.PALETTE) % 2 == 0  # light and mid tones alternate, across the wrap too
    assert palette_problems(viz.PALETTE, DRAWN_ON_TOKENS) == []


def test_special_token_text_is_readable():
    for fg in (viz.SPECIAL_COLOR, viz.SPECIAL_ID_COLOR):
        assert contrast(fg, viz.SPECIAL_BACKGROUND) >= AA
    for background in viz.PALETTE:  # a special token stands out from every ordinary one
        assert contrast(viz.SPECIAL_BACKGROUND, background) >= 3.0


def _rule_colour(page: str, selector: str) -> str:
    rule = re.search(re.escape(selector) + r"\{[^}]*?color:(#[0-9a-fA-F]{6})", page)
    assert rule, f"no colour for {selector}"
    return rule[1].lower()


def test_the_view_draws_with_the_checked_colours():
    """The HTML uses the colours checked above: marks, ids, hex bytes, the special token."""
    view = viz.show_tokens("a b\t\n\U0001f44b <|endoftext|> c", "cl100k_base", show_ids=True)
    page = view.to_html()
    scope = "." + re.search(r'class="(tkv-[0-9a-f]+)"', page)[1]
    assert _rule_colour(page, f"{scope} .tok") == viz.TEXT_COLOR
    assert _rule_colour(page, f"{scope} .ws") == viz.MARK_COLOR
    assert _rule_colour(page, f"{scope} .tid") == viz.ID_COLOR
    assert _rule_colour(page, f"{scope} .raw") == viz.RAW_COLOR
    assert _rule_colour(page, f"{scope} .tok.special .ws") == viz.SPECIAL_ID_COLOR
    assert _rule_colour(page, f"{scope} .tok.special .tid") == viz.SPECIAL_ID_COLOR
    backgrounds = re.findall(r'class="tok" style="background:(#[0-9a-f]{6})', page)
    assert backgrounds and set(backgrounds) <= set(viz.PALETTE)
    assert f"background:{viz.SPECIAL_BACKGROUND};color:{viz.SPECIAL_COLOR}" in page
    assert 'class="ws"' in page and 'class="raw"' in page
