"""What a test does when a tool it needs is missing: skip on a laptop, fail in CI.

A developer without Chromium or a second Python should still get a green `make test` for the
rest; CI must never pass by skipping what it was set up to check. CI services set ``CI=true``
(GitHub Actions does), and so can anyone: ``CI=true make test``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NoReturn

import pytest

_FALSE = {"", "0", "false", "no", "off"}


def on_ci(environ: Mapping[str, str] | None = None) -> bool:
    """True when ``CI`` is set to anything but an empty or false-like value."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() not in _FALSE


def missing_tool(reason: str) -> NoReturn:
    """Skip the calling test, or fail it under ``CI=true``; ``reason`` says what is missing."""
    if on_ci():
        pytest.fail(f"{reason}; CI=true, so this fails instead of skipping", pytrace=False)
    pytest.skip(reason)
