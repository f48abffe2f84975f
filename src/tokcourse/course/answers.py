"""Type rules for exercise answers: what an answer must be (``Exercise.returns``).

>>> list_of(INT).problem([1, "2"])
"a list whose item 1 is a str '2'"
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# --- how a value is shown in a report -----------------------------------------------------


def _is_byte_vocab(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and len(value) >= 256
        and all(value.get(b) == bytes([b]) for b in range(256))
    )


def _short(value: Any, limit: int = 300) -> str:
    if _is_byte_vocab(value):  # 256 lines of b'\x00', b'\x01'... would hide what matters
        merged = {k: v for k, v in value.items() if not (isinstance(k, int) and 0 <= k < 256)}
        return f"vocab(256 single bytes + {_short(merged, limit - 30)})"
    try:
        text = _array_repr(value)
    except Exception as exc:  # a student's object with a broken __repr__
        text = f"<{type(value).__name__} whose repr raised {type(exc).__name__}>"
    return text if len(text) <= limit else text[: limit - 15] + f"… ({len(text)} chars)"


def _size(value: Any) -> str:
    """A container in a few words, for a report line: "a dict of 258 items"."""
    n = len(value)
    return f"{_a(value).split(' ')[0]} {type(value).__name__} of {n:,} item{'s' * (n != 1)}"


def _same_item(a: Any, b: Any) -> bool:
    """Whether two items of an answer agree (floats to within 1e-9, as answers are compared)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    try:
        return bool(a == b)
    except Exception:  # a student's object whose == raises differs
        return False


def first_difference(expected: Any, got: Any) -> str | None:
    """Where two dicts, or two lists (tuples), first differ: the key or index and both items.

    Keys are visited in the order of ``expected``; ``None`` when neither a pair of dicts nor a
    pair of sequences, or when no item differs.

    >>> first_difference({1: "a", 2: "b"}, {1: "a", 2: "c"})
    "first difference at key 2: expected 'b', got 'c'"
    >>> first_difference([1, 2, 3], [1, 5])
    'first difference at index 1: expected 2, got 5 (3 items expected, 2 came back)'
    >>> first_difference([1, 2], [1, 2, 7])[:60]
    'first difference at index 2: expected nothing (the list ends'
    """
    if isinstance(expected, dict) and isinstance(got, dict):
        for key, value in expected.items():
            where = f"first difference at key {_short(key, 80)}"
            if key not in got:
                return f"{where}: expected {_short(value, 120)}, got no such key"
            if not _same_item(value, got[key]):
                return f"{where}: expected {_short(value, 120)}, got {_short(got[key], 120)}"
        for key, value in got.items():
            if key not in expected:
                where = f"first difference at key {_short(key, 80)}"
                return f"{where}: expected no such key, got {_short(value, 120)}"
        return None
    sequences = (list, tuple)
    if not (isinstance(expected, sequences) and isinstance(got, sequences)):
        return None
    lengths = (
        f" ({len(expected):,} items expected, {len(got):,} came back)"
        if len(expected) != len(got)
        else ""
    )
    for i in range(max(len(expected), len(got))):
        if i >= len(expected):
            kind = type(expected).__name__
            return (
                f"first difference at index {i}: expected nothing (the {kind} ends), got "
                f"{_short(got[i], 120)}{lengths}"
            )
        if i >= len(got):
            kind = type(got).__name__
            return (
                f"first difference at index {i}: expected {_short(expected[i], 120)}, got "
                f"nothing (yours ends){lengths}"
            )
        if not _same_item(expected[i], got[i]):
            return (
                f"first difference at index {i}: expected {_short(expected[i], 120)}, got "
                f"{_short(got[i], 120)}{lengths}"
            )
    return None


def _array_repr(value: Any) -> str:
    """``repr``, with numpy arrays (alone or in a tuple or list) on one line, floats rounded.

    >>> import numpy as np
    >>> _array_repr((np.array([[0.1, 2.0]], np.float32), 3))
    '(array([[0.1, 2.0]], float32), 3)'
    """

    def rounded(x: Any) -> Any:
        return [rounded(y) for y in x] if isinstance(x, list) else round(x, 6)

    if _is_array(value):
        return f"array({rounded(value.tolist())!r}, {value.dtype})"
    if isinstance(value, (tuple, list)) and any(_is_array(x) for x in value):
        inner = ", ".join(_array_repr(x) for x in value)
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    return repr(value)


# --- what an answer must be: type rules --------------------------------------------------------


@dataclass(frozen=True)
class Returns:
    """A type rule: ``describe`` says what the answer must be, ``problem`` what is wrong with one.

    ``problem(value)`` is ``None`` when the value fits, else a phrase naming the first thing
    that does not ("a tuple (1, 2)", "a list whose item 0 is a str 'a'").

    >>> list_of(INT).problem((1, 2))
    'a tuple (1, 2)'
    >>> list_of(INT).problem([1, "2"])
    "a list whose item 1 is a str '2'"
    >>> list_of(INT).describe
    'a list of ints'
    """

    describe: str
    problem: Callable[[Any], str | None]
    advice: str = ""  # what usually fixes an answer of the wrong type, for the hint


def _a(value: Any) -> str:
    """``value`` with its type in words: "None", "a tuple (1, 2)", "a generator"."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, (types.GeneratorType, map, filter, zip, reversed, enumerate)):
        return f"a {type(value).__name__} object"
    name = type(value).__name__
    name = "bytes object" if name == "bytes" else name
    article = "an" if name[0] in "aeiouAEIOU" else "a"
    return f"{article} {name} {_short(value, 60)}"


def _instance(
    kinds: type | tuple[type, ...], describe: str, *, exact_bool: bool = False, advice: str = ""
) -> Returns:
    def problem(value: Any) -> str | None:
        if isinstance(value, bool) and not exact_bool:  # True is an int to Python, not to us
            return _a(value)
        return None if isinstance(value, kinds) else _a(value)

    return Returns(describe, problem, advice)


INT = _instance(int, "an int")
STR = _instance(str, "a str")
BYTES = _instance(
    bytes, "a bytes object", advice="bytes([b1, b2, ...]) turns a list of ints into bytes."
)
BOOL = _instance(
    bool,
    "a bool (True or False)",
    exact_bool=True,
    advice="A comparison such as a == b is already a bool: return it.",
)


def _pair_problem(value: Any) -> str | None:
    if isinstance(value, tuple) and len(value) == 2 and all(INT.problem(x) is None for x in value):
        return None
    return _a(value)


PAIR = Returns("a pair of ints (a, b)", _pair_problem)


def list_of(item: Returns) -> Returns:
    """A list (not a tuple, not a generator) whose items all fit ``item``."""

    def problem(value: Any) -> str | None:
        if not isinstance(value, list):
            return _a(value)
        for i, x in enumerate(value):
            if item.problem(x) is not None:
                return f"a list whose item {i} is {_a(x)}"
        return None

    plural = item.describe.split(" ", 1)[1] + "s" if " " in item.describe else item.describe
    return Returns(f"a list of {plural}", problem)


def dict_of(key: Returns, value: Returns, describe: str = "") -> Returns:
    """A dict (a subclass such as ``Counter`` is a dict too) from ``key`` to ``value``.

    >>> dict_of(PAIR, INT, "a dict {(a, b): count}").problem({(1, 2): "3"})
    "a dict whose value for (1, 2) is a str '3'"
    """

    def problem(answer: Any) -> str | None:
        if not isinstance(answer, dict):
            return _a(answer)
        for k, v in answer.items():
            if key.problem(k) is not None:
                return f"a dict with the key {_a(k)}"
            if value.problem(v) is not None:
                return f"a dict whose value for {_short(k, 40)} is {_a(v)}"
        return None

    return Returns(describe or f"a dict {{{key.describe}: {value.describe}}}", problem)


def _type_advice(got: Any, rule: Returns | None = None) -> str:
    """What usually fixes an answer of this type (``rule``: what the answer must be)."""
    if got is None:
        return " Did a path through your function end without `return`?"
    if isinstance(got, (types.GeneratorType, map, filter, zip, reversed, enumerate)):
        return (
            " An iterator can be read only once and has no len(): collect the items in a "
            "list (list(...) or a list comprehension)."
        )
    if isinstance(got, tuple) and (rule is None or rule.describe.startswith("a list")):
        return " Build a list ([...] or list(...)), not a tuple."
    numpy_int = _numpy_scalar(got)
    if numpy_int is not None:
        return (
            f" Your numbers are numpy.{type(numpy_int).__name__}, not Python ints (numpy "
            "arrays hand out their own scalar types): convert with int(), e.g. "
            "(int(a), int(b))."
        )
    return ""


def _numpy_scalar(value: Any, depth: int = 3) -> Any:
    """The first numpy integer in ``value`` (looking into dicts, lists and tuples), or None."""
    if type(value).__module__ == "numpy" and "int" in type(value).__name__:
        return value
    if depth == 0:
        return None
    if isinstance(value, dict):
        items: Any = [x for kv in list(value.items())[:50] for x in kv]
    elif isinstance(value, (list, tuple)):
        items = list(value)[:50]
    else:
        return None
    for item in items:
        found = _numpy_scalar(item, depth - 1)
        if found is not None:
            return found
    return None


def _is_array(value: Any) -> bool:
    """A numpy array, recognised without importing numpy (the checks stay cheap to load)."""
    return type(value).__module__ == "numpy" and type(value).__name__ == "ndarray"


def plain(value: Any) -> Any:
    """``value`` with every subclass of a built-in type turned into that built-in type.

    Answers are compared as plain data: a ``Counter`` is compared as the dict it is, and a str
    subclass whose ``__eq__`` says yes to everything is compared as the text it holds. The
    base type's own methods read the data (``str.__getitem__``, ``dict.items``), never the
    subclass's. Other objects (numpy arrays, generators) are left as they are.

    >>> from collections import Counter
    >>> plain(Counter("aab")) == {"a": 2, "b": 1}, type(plain(Counter("ab")))
    (True, <class 'dict'>)
    """
    kind = type(value)
    if kind in _EXACT:
        if kind in (list, tuple, set, frozenset):
            return kind(plain(v) for v in value)
        if kind is dict:
            return {plain(k): plain(v) for k, v in value.items()}
        return value
    for base, copy in _COPIES:
        if isinstance(value, base):
            return plain(copy(value))
    return value


_EXACT = {bool, int, float, complex, str, bytes, type(None), list, tuple, set, frozenset, dict}
_COPIES: tuple[tuple[type, Callable[[Any], Any]], ...] = (
    (bool, bool.__bool__),
    (int, int.__pos__),
    (float, float.__pos__),
    (str, lambda s: str.__getitem__(s, slice(None))),
    (bytes, lambda b: bytes.__getitem__(b, slice(None))),
    (dict, lambda d: dict(dict.items(d))),
    (list, lambda x: list(list.__iter__(x))),
    (tuple, lambda x: tuple(tuple.__iter__(x))),
    (frozenset, lambda x: frozenset(frozenset.__iter__(x))),
    (set, lambda x: set(set.__iter__(x))),
)


def _same(before: Any, after: Any) -> bool:
    """Whether an argument is unchanged by a call; numpy arrays by dtype, shape and values.

    >>> _same([1, 2], [1, 2]), _same([1, 2], [9])
    (True, False)
    """
    try:
        if _is_array(before) or _is_array(after):
            return (
                _is_array(before)
                and _is_array(after)
                and (before.dtype, before.shape) == (after.dtype, after.shape)
                and bool((before == after).all())
            )
        return bool(before == after)
    except Exception:  # a student's object whose == raises is not "unchanged"
        return False


ARRAY = Returns(
    "a numpy array",
    lambda value: None if _is_array(value) else _a(value),
    advice="np.concatenate, np.vstack and np.repeat return arrays; np.asarray(x) converts.",
)


def tuple_of(*items: Returns, describe: str = "", advice: str = "") -> Returns:
    """A tuple of exactly ``len(items)`` answers, item ``i`` fitting ``items[i]``.

    >>> tuple_of(ARRAY, ARRAY).problem(([1.0], [2.0]))
    'a tuple whose item 0 is a list [1.0]'
    """

    def problem(value: Any) -> str | None:
        if not isinstance(value, tuple) or len(value) != len(items):
            return _a(value)
        for i, (x, rule) in enumerate(zip(value, items, strict=True)):
            if rule.problem(x) is not None:
                return f"a tuple whose item {i} is {_a(x)}"
        return None

    what = describe or f"a tuple of {len(items)}: ({', '.join(i.describe for i in items)})"
    return Returns(what, problem, advice)


def re_module_hint(case: Any, expected: Any, got: Any) -> str | None:
    """A hint for a split written with Python's ``re``: it has no Unicode property classes.

    Shared by every exercise that splits with GPT's patterns, whose ``\\p{L}`` makes ``re``
    raise "bad escape \\p" (the statements say to use the ``regex`` module).
    """
    if isinstance(got, Exception) and "bad escape \\p" in str(got):
        return (
            're has no \\p{...} classes ("bad escape \\p"): the split patterns use Unicode '
            "properties such as \\p{L} (any letter). Use the regex module instead: import "
            "regex; regex.findall(pattern, text), or tokcourse.patterns.split(text)."
        )
    return None
