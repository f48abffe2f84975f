"""Colour maths for the token views: contrast, colour-blindness simulation, colour difference.

Three questions decide whether a palette of token backgrounds works for every reader:

* Can the text on it be read? :func:`contrast` is the WCAG 2.x contrast ratio (AA asks for
  4.5:1 for normal text), from :func:`relative_luminance`.
* Do neighbouring tokens look different to someone with a colour-vision deficiency?
  :func:`simulate` shows a colour as a dichromat sees it, with the matrices of Machado, Oliveira
  and Fernandes (2009), "A Physiologically-based Model for Simulation of Color Vision
  Deficiency", IEEE TVCG 15(6), at severity 1.0 (protanopia, deuteranopia, tritanopia),
  applied to linear RGB.
* How different do two colours look? :func:`delta_e` is CIEDE2000 (Sharma, Wu and Dalal 2005,
  "The CIEDE2000 Color-Difference Formula: Implementation Notes ...") between CIELAB colours
  (D65 white), from :func:`lab`.

    >>> round(contrast("#000000", "#ffffff"), 1)
    21.0
    >>> round(delta_e("#d3e2ff", "#e4d9ff", "deuteranopia"), 1)
    0.5

Standard library only; nothing here touches the disk or the network.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

__all__ = [
    "MACHADO_2009",
    "VISIONS",
    "Vision",
    "contrast",
    "delta_e",
    "hex_to_rgb",
    "lab",
    "neighbour_differences",
    "relative_luminance",
    "rgb_to_hex",
    "simulate",
]

Vision = Literal["normal", "protanopia", "deuteranopia", "tritanopia"]
VISIONS: tuple[Vision, ...] = ("normal", "protanopia", "deuteranopia", "tritanopia")
RGB = tuple[float, float, float]

#: Machado et al. (2009), Table 1, severity 1.0: linear RGB in, linear RGB out.
MACHADO_2009: dict[str, tuple[RGB, RGB, RGB]] = {
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}


def hex_to_rgb(colour: str) -> RGB:
    """``"#rrggbb"`` or ``"#rgb"`` as sRGB components in 0..1.

    >>> hex_to_rgb("#f80")
    (1.0, 0.5333333333333333, 0.0)
    """
    h = colour.strip().lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    if len(h) != 6 or any(c not in "0123456789abcdefABCDEF" for c in h):
        raise ValueError(f"not a #rrggbb colour: {colour!r}")
    r, g, b = (int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return r, g, b


def rgb_to_hex(rgb: Sequence[float]) -> str:
    """sRGB components in 0..1 (clipped) as ``"#rrggbb"``."""
    return "#" + "".join(f"{round(min(1.0, max(0.0, c)) * 255):02x}" for c in rgb)


def _linear(c: float) -> float:
    """sRGB component to linear light (IEC 61966-2-1)."""
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _encoded(c: float) -> float:
    """Linear light to sRGB component."""
    c = min(1.0, max(0.0, c))
    return 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def relative_luminance(colour: str) -> float:
    """WCAG 2.x relative luminance, 0 (black) to 1 (white)."""
    r, g, b = (_linear(c) for c in hex_to_rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2.x contrast ratio of two colours, 1 to 21 (the order does not matter)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def simulate(colour: str, vision: Vision) -> str:
    """``colour`` as seen with ``vision`` (Machado et al. 2009, severity 1.0)."""
    if vision == "normal":
        return rgb_to_hex(hex_to_rgb(colour))
    try:
        matrix = MACHADO_2009[vision]
    except KeyError:
        raise ValueError(f"unknown vision {vision!r}; valid: {', '.join(VISIONS)}") from None
    lin = [_linear(c) for c in hex_to_rgb(colour)]
    out = [sum(m * c for m, c in zip(row, lin, strict=True)) for row in matrix]
    return rgb_to_hex([_encoded(c) for c in out])


# sRGB (D65) linear RGB to CIE XYZ, and the D65 white point (Y = 1).
_TO_XYZ = (
    (0.4124564, 0.3575761, 0.1804375),
    (0.2126729, 0.7151522, 0.0721750),
    (0.0193339, 0.1191920, 0.9503041),
)
_WHITE = (0.95047, 1.0, 1.08883)


def lab(colour: str) -> RGB:
    """CIELAB (L*, a*, b*) of an sRGB colour, D65 white."""
    lin = [_linear(c) for c in hex_to_rgb(colour)]
    xyz = [sum(m * c for m, c in zip(row, lin, strict=True)) for row in _TO_XYZ]

    def f(t: float) -> float:
        return t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29

    fx, fy, fz = (f(v / w) for v, w in zip(xyz, _WHITE, strict=True))
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def ciede2000(lab1: Sequence[float], lab2: Sequence[float]) -> float:
    """CIEDE2000 colour difference of two CIELAB colours (kL = kC = kH = 1)."""
    l1, a1, b1 = lab1
    l2, a2, b2 = lab2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1p, a2p = a1 * (1 + g), a2 * (1 + g)
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0

    dl, dc = l2 - l1, c2p - c1p
    if c1p * c2p == 0:
        dh = 0.0
    elif abs(h2p - h1p) <= 180:
        dh = h2p - h1p
    elif h2p - h1p > 180:
        dh = h2p - h1p - 360
    else:
        dh = h2p - h1p + 360
    d_big_h = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))

    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_mean = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_mean = (h1p + h2p) / 2
    elif h1p + h2p < 360:
        h_mean = (h1p + h2p + 360) / 2
    else:
        h_mean = (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_mean - 30))
        + 0.24 * math.cos(math.radians(2 * h_mean))
        + 0.32 * math.cos(math.radians(3 * h_mean + 6))
        - 0.20 * math.cos(math.radians(4 * h_mean - 63))
    )
    d_theta = 30 * math.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_mean**7 / (cp_mean**7 + 25**7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * cp_mean
    s_h = 1 + 0.015 * cp_mean * t
    r_t = -math.sin(math.radians(2 * d_theta)) * r_c
    return math.sqrt(
        (dl / s_l) ** 2
        + (dc / s_c) ** 2
        + (d_big_h / s_h) ** 2
        + r_t * (dc / s_c) * (d_big_h / s_h)
    )


def delta_e(a: str, b: str, vision: Vision = "normal") -> float:
    """CIEDE2000 difference of two sRGB colours as seen with ``vision``."""
    return ciede2000(lab(simulate(a, vision)), lab(simulate(b, vision)))


def neighbour_differences(palette: Sequence[str]) -> dict[tuple[int, int, Vision], float]:
    """ΔE2000 of every pair of neighbours (i, i+1, and the last with the first) per vision.

    A palette cycled over token positions puts colour i next to colour i+1, and the last next
    to the first when the cycle restarts.
    """
    n = len(palette)
    return {
        (i, (i + 1) % n, v): delta_e(palette[i], palette[(i + 1) % n], v)
        for i in range(n)
        for v in VISIONS
    }
