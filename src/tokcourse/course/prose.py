"""Numbers the prose cannot get wrong, and guards that quote the sentence they back.

A page states a number a cell computed through myst-nb's ``glue``: the cell calls
``glue("n_merges", n)`` and the text says ``{glue:text}`n_merges:,```. A mistyped or stale
number cannot be published: the page shows what the cell computed, and a glue name the text
uses but no cell defines fails the build (``-W``).

A qualitative sentence ("more than", "none", "the same ids") is backed by a guard::

    claim("GPT-4 spends fewer tokens than GPT-2 on every language", all(...), detail)

which raises :class:`ClaimFailed` quoting the sentence when it no longer holds, so a failing
build says which sentence of the page broke (``tools/prebuild.py`` prints it with the chapter
and the cell).

Outside the book build (a student's Jupyter, Colab) ``glue`` shows nothing and needs no
myst-nb: the student edition prints the glued values as text (``tools/student.py``).
"""

from __future__ import annotations

from typing import Any

from tokcourse.course.plotting import in_book_build

__all__ = ["ClaimFailed", "claim", "glue"]


class ClaimFailed(AssertionError):
    """A sentence of the page that the computation no longer supports."""

    def __init__(self, sentence: str, detail: str = "") -> None:
        message = f'this sentence of the page no longer holds: "{sentence}"'
        if detail:
            message += f"\n  what the cell found: {detail}"
        super().__init__(message)
        self.sentence, self.detail = sentence, detail


def _truth(holds: Any) -> bool:
    # A guard must state a yes or no: a list or a count would make "non-empty" the claim.
    if type(holds).__name__ in ("bool", "bool_"):
        return bool(holds)
    raise TypeError(f"claim(...) needs True or False, got {type(holds).__name__}: {holds!r}")


def claim(sentence: str, holds: Any, detail: object = "") -> None:
    """Raise :class:`ClaimFailed`, quoting ``sentence``, unless ``holds`` is True.

    >>> claim("two is even", 2 % 2 == 0)
    >>> claim("three is even", 3 % 2 == 0, "3 % 2 == 1")
    Traceback (most recent call last):
    ...
    tokcourse.course.prose.ClaimFailed: this sentence of the page no longer holds: "three is even"
      what the cell found: 3 % 2 == 1
    >>> claim("a list is a yes or no", [1])
    Traceback (most recent call last):
    ...
    TypeError: claim(...) needs True or False, got list: [1]
    """
    if not sentence.strip():
        raise ValueError("claim(...) needs the sentence of the page it backs")
    if not _truth(holds):
        raise ClaimFailed(sentence, str(detail) if detail != "" else "")


def glue(name: str, value: Any) -> Any:
    """Hand ``value`` to the page under ``name`` (book build only); return ``value``.

    In the book build this is myst-nb's ``glue(name, value, display=False)``: the cell shows
    nothing and ``{glue:text}`name``` in the text shows the value. Anywhere else it does
    nothing.

    >>> glue("answer", 42)
    42
    """
    if not name.isidentifier():
        raise ValueError(f"a glue name is a Python identifier, not {name!r}")
    if in_book_build():
        from myst_nb import glue as myst_glue

        myst_glue(name, value, display=False)
    return value
