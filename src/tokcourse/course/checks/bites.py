"""When tokenization bites (chapter 09): unstable_prefixes, format_costs.

Cases (curated edge cases, then seeded random inputs) and hints for each exercise, and the
``EXERCISES`` table that registers them with the check engine.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterator
from typing import Any

from tokcourse.course import bites
from tokcourse.course.answers import INT, STR, dict_of, list_of
from tokcourse.course.checks._encoders import SmallBPE, Utf8Bytes
from tokcourse.course.exercises import Case, Entry, Exercise, Raised


class Tiktoken(Utf8Bytes):
    """A real tokenizer for the check: tiktoken's ``encode_ordinary`` of one encoding.

    Only the name is stored, so the check's copy of the argument is cheap; tiktoken keeps
    the loaded encoding in its own cache.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, text: str) -> list[int]:
        import tiktoken  # imported on first use: nothing is loaded when the checks are listed

        return tiktoken.get_encoding(self.name).encode_ordinary(text)

    def __repr__(self) -> str:
        return f"{self.name}.encode_ordinary"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tiktoken) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)


# --- unstable_prefixes -------------------------------------------------------------------------

TEXTS = ("", "a", "Hello", "Hello ", "Hello world", "strawberry", ".DefaultCellStyle", "1234567",
         "日本語", "héllo wörld", "    return x\n", "naïve café  ", "🙂🙂")  # fmt: skip


#: Texts where o200k's pattern cuts a prefix so that an EARLIER id changes while the last
#: one matches: "\t\r" encodes as [197, 201], the full "\t\r\n\r" as [7709, 201].
O200K_TEXTS = ("\t\r\n\r", " \r\n\r", "\xa0 \xa0 ", "\n\t\n\t", "\n\n  \n  \tx")


def _unstable_prefixes_cases() -> Iterator[Case]:
    for encode in (Tiktoken("gpt2"), Tiktoken("cl100k_base"), SmallBPE()):
        for text in TEXTS:
            yield Case((text, encode))
    for text in (*O200K_TEXTS, "Hello world", "日本語", "    return x\n"):
        yield Case((text, Tiktoken("o200k_base")))
    rng = random.Random(9)
    pieces = ["the", " thing", " a", "é", "日", " ", "sing", "er", "\n", "12", "ing", "!"]
    for _ in range(30):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 6)))
        yield Case((text, rng.choice([Tiktoken("gpt2"), Tiktoken("cl100k_base"), SmallBPE()])))


def _compared_like(case: Case, differs: Any) -> list[int]:
    """The lengths k a wrong comparison ``differs(ids, full, k)`` calls unstable."""
    text, encode = case.args
    full = list(encode(text))
    return [k for k in range(1, len(text) + 1) if differs(list(encode(text[:k])), full, k)]


def _first_k_ids_hint(case: Case, expected: Any, got: Any) -> str | None:
    if got != expected and got == _compared_like(case, lambda ids, full, k: ids != full[:k]):
        return (
            "full[:k] takes the first k *ids*, but k counts characters: the prefix text[:k] "
            "has len(ids) ids, usually fewer than k. Compare ids with full[: len(ids)]."
        )
    return None


def _last_id_only_hint(case: Case, expected: Any, got: Any) -> str | None:
    def last_only(ids: list[int], full: list[int], k: int) -> bool:
        return len(ids) > len(full) or bool(ids) and ids[-1] != full[len(ids) - 1]

    if got != expected and got == _compared_like(case, last_only):
        text, encode = case.args
        k = min(set(expected) ^ set(got))
        ids, full = list(encode(text[:k])), list(encode(text))
        return (
            f"you compared only the last id of the prefix, but a cut can change an earlier "
            f"token too: text[:{k}] is {ids}, while encode(text) starts {full[: len(ids)]}. "
            "Compare all the ids: ids != full[: len(ids)]."
        )
    return None


def _membership_hint(case: Case, expected: Any, got: Any) -> str | None:
    def membership(ids: list[int], full: list[int], k: int) -> bool:
        return not set(ids) <= set(full)

    if got != expected and got == _compared_like(case, membership):
        return (
            "you tested whether the prefix's ids occur somewhere in encode(text), not where: "
            "they must be its *first* ids, in order. Compare ids with full[: len(ids)]."
        )
    return None


def _stable_hint(case: Case, expected: Any, got: Any) -> str | None:
    text = case.args[0]
    if isinstance(got, list) and isinstance(expected, list):
        every = set(range(1, len(text) + 1))
        if set(got) == every - set(expected) and got != expected:
            return (
                "those are the stable lengths: list k when encode(text[:k]) is *not* the "
                "start of encode(text)."
            )
    return None


def _index_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, list) and expected and got == [k - 1 for k in expected]:
        return (
            "off by one: a prefix of length k is text[:k], which ends at index k - 1; return "
            "the lengths k, from 1 to len(text)."
        )
    return None


def _bytes_hint(case: Case, expected: Any, got: Any) -> str | None:
    text, encode = case.args
    data = text.encode("utf-8")
    if len(data) == len(text) or not isinstance(got, list):
        return None
    full = encode(text)
    by_bytes = []
    for k in range(1, len(data) + 1):
        ids = encode(data[:k].decode("utf-8", errors="ignore"))
        if ids != full[: len(ids)]:
            by_bytes.append(k)
    if got == by_bytes or any(isinstance(k, int) and k > len(text) for k in got):
        return (
            "lengths are counted in characters (prefixes text[:k] of the str), not in UTF-8 "
            f"bytes: {text!r} has {len(text)} characters and {len(data)} bytes."
        )
    return None


def _last_token_hint(case: Case, expected: Any, got: Any) -> str | None:
    text, encode = case.args
    full = encode(text)
    ignoring_last = []
    for k in range(1, len(text) + 1):
        ids = encode(text[:k])
        if ids[:-1] != full[: len(ids) - 1]:
            ignoring_last.append(k)
    if got == ignoring_last:
        return (
            "the last token of the prefix is the one a cut breaks: compare all of "
            "encode(text[:k]) with the first len(...) ids of encode(text)."
        )
    return None


# --- format_costs ------------------------------------------------------------------------------

RECORDS = (
    [{"a": 1}],
    [{"name": "Ada", "year": 1815}, {"name": "Alan", "year": 1912}],
    [{"word": "café", "lang": "fr"}, {"word": "日本", "lang": "ja"},
     {"word": "naïve", "lang": "en"}],
    [{"id": 1, "text": 'say "hi", then go'}, {"id": 2, "text": "a, b"}],
    [{"x": 1.5, "y": -2, "label": "point"}],
)  # fmt: skip


def _format_costs_cases() -> Iterator[Case]:
    for encode in (Utf8Bytes(), Tiktoken("cl100k_base"), SmallBPE()):
        for records in RECORDS:
            yield Case((records, encode))
    yield Case(([], Utf8Bytes()))  # no records: nothing to write
    rng = random.Random(9)
    words = ["tea", "café", "a, b", 'a "q"', "日本", "the thing", "", "x y z"]
    for _ in range(20):
        keys = rng.sample(["id", "name", "score", "city", "note"], rng.randrange(1, 4))
        values = lambda: rng.choice([rng.choice(words), rng.randrange(-50, 5000), 0.25])  # noqa: E731
        records = [{k: values() for k in keys} for _ in range(rng.randrange(1, 5))]
        yield Case((records, rng.choice([Utf8Bytes(), Tiktoken("gpt2"), SmallBPE()])))


def _render(records: list[dict], fmt: str, **change: Any) -> str:
    """A format written with one of the usual slips (``change``) instead of the definition."""
    ascii_ = change.get("ascii", False)
    if fmt == "json":
        return json.dumps(records, indent=change.get("indent", 2), ensure_ascii=ascii_)
    if fmt == "compact_json":
        seps = change.get("separators", (",", ":"))
        return json.dumps(records, separators=seps, ensure_ascii=ascii_)
    keys = list(records[0])
    if fmt == "yaml":

        def show(value: Any) -> str:
            return str(value) if change.get("plain") else json.dumps(value, ensure_ascii=ascii_)

        lines = [
            f"{'- ' if j == 0 else '  '}{k}: {show(r[k])}"
            for r in records
            for j, k in enumerate(keys)
        ]
        return "\n".join(lines)
    if change.get("joined"):
        rows = [keys] + [[r[k] for k in keys] for r in records]
        return "".join(",".join(map(str, row)) + "\n" for row in rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=change.get("lineterminator", "\n"))
    if change.get("header", True):
        writer.writerow(keys)
    writer.writerows([r[k] for k in keys] for r in records)
    return out.getvalue()


def _slip(change: dict, formats: tuple[str, ...]) -> Any:
    """A hint test: some format of ``formats`` is wrong and costs what the slip would."""

    def matches(case: Case, expected: Any, got: Any) -> bool:
        records, encode = case.args
        if not (isinstance(expected, dict) and isinstance(got, dict)):
            return False
        return any(
            got.get(f) != expected[f] and got.get(f) == len(encode(_render(records, f, **change)))
            for f in formats
        )

    return matches


def _hint(test: Any, text: str) -> Any:
    return lambda case, expected, got: text if test(case, expected, got) else None


def _empty_records_hint(case: Case, expected: Any, got: Any) -> str | None:
    if isinstance(expected, Raised) and not isinstance(got, ValueError):
        return "no records, nothing to compare: raise ValueError for an empty list of records."
    return None


def _characters_hint(case: Case, expected: Any, got: Any) -> str | None:
    records, encode = case.args
    if isinstance(expected, dict) and isinstance(got, dict):
        if any(
            got.get(f) == len(bites.render_records(records, f)) != expected[f] for f in expected
        ):
            return "that is the length of the text in characters: the cost is len(encode(text))."
    return None


FORMAT_HINTS = (
    _empty_records_hint,
    _hint(_slip({"ascii": True}, ("json", "compact_json", "yaml")),
          "json.dumps escapes every non-ASCII character ('é' becomes \\u00e9, six characters) "
          "unless you pass ensure_ascii=False, as the formats are defined."),
    _hint(_slip({"lineterminator": "\r\n"}, ("csv",)),
          "csv.writer ends rows in '\\r\\n' by default: pass lineterminator='\\n'."),
    _hint(_slip({"header": False}, ("csv",)),
          "the CSV starts with a header row of the keys, then one row per record."),
    _hint(_slip({"joined": True}, ("csv",)),
          "joining values with ',' breaks on a value holding a comma or a quote: csv.writer "
          "quotes those."),
    _hint(_slip({"plain": True}, ("yaml",)),
          "YAML values are written with json.dumps(value, ensure_ascii=False): strings in "
          "double quotes."),
    _hint(_slip({"separators": None}, ("compact_json",)),
          "compact JSON drops the spaces too: separators=(',', ':'); the default puts a space "
          "after each ',' and ':'."),
    _hint(_slip({"indent": 4}, ("json",)), "the JSON format is indented by 2 spaces: indent=2."),
    _characters_hint,
)  # fmt: skip


#: The exercises of this topic, found by :mod:`tokcourse.course.check` (see the package
#: docstring of :mod:`tokcourse.course.checks`).
EXERCISES: dict[str, Entry] = {
    "unstable_prefixes": Entry(
        "unstable_prefixes(text, encode) -> list of prefix lengths k whose encoding is not a "
        "prefix of encode(text)",
        lambda: Exercise(
            "unstable_prefixes",
            bites.unstable_prefixes,
            _unstable_prefixes_cases,
            returns=list_of(INT),
            hints=(
                _first_k_ids_hint,
                _last_id_only_hint,
                _membership_hint,
                _stable_hint,
                _index_hint,
                _bytes_hint,
                _last_token_hint,
            ),
        ),
    ),
    "format_costs": Entry(
        "format_costs(records, encode) -> {format: tokens} for json, compact_json, yaml, csv",
        lambda: Exercise(
            "format_costs",
            bites.format_costs,
            _format_costs_cases,
            returns=dict_of(STR, INT, "a dict {format name: token count}"),
            ordered=("records",),
            hints=FORMAT_HINTS,
        ),
    ),
}
