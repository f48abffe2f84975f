"""Build-time data of the tokenizer playground (``book/playground.md``, ``_static/playground``).

The playground encodes text in the browser with our own JavaScript (``playground.js``). It needs
two kinds of data, written here into the built site's ``_static/playground/data``:

1. **Rank tables** of r50k_base (GPT-2), cl100k_base (GPT-4) and o200k_base (GPT-4o), read from
   the hash-verified asset cache (``tokcourse.course.data.store.path``: the same ``.tiktoken`` files
   tiktoken loads). Compact form: the tokens' bytes concatenated in rank order, plus one byte
   per token giving its length, both base64, inside a ``.js`` file that calls
   ``tokcoursePlayground.addData(...)`` (``core.js``). A script, not JSON: Chromium refuses
   ``fetch`` of ``file://`` pages, but runs an injected ``<script src>``, so the book works
   opened from disk.
2. **Character classes** (``\\p{L}``, ``\\p{N}``, ``\\s``, ...) as tiktoken knows them (Unicode
   16.0), so the browser's own Unicode tables, older or newer, never change a split. They are
   read off the ``regex`` module through :func:`tokcourse.unicode_pin.pin_unicode`, which the
   package's tests prove equal to tiktoken's tables, code point by code point.
3. **The other tokenizers' data**: Mistral 7B v1's pieces (``playground_sentencepiece.py``) and
   BERT's vocabulary with the Unicode tables of its normalizer (``playground_wordpiece.py``),
   each module's ``scripts()``.

Files we read are data: a ``.tiktoken`` line is ``base64 rank`` and nothing else is accepted.
"""

from __future__ import annotations

import base64
import gzip
import importlib
import json
from pathlib import Path

ENCODINGS = ("r50k_base", "cl100k_base", "o200k_base")
"""The tiktoken encodings the playground shows, in display order."""

PORTS = ("playground_sentencepiece", "playground_wordpiece")
"""Modules (next to this one) whose ``scripts()`` write the other tokenizers' data files."""

SPECIAL_TOKENS: dict[str, dict[str, int]] = {
    "r50k_base": {"<|endoftext|>": 50256},
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}
"""tiktoken 0.14's special tokens of each encoding (``tests/test_playground.py`` checks them)."""

CLASSES = {
    "L": r"\p{L}",
    "Lu": r"\p{Lu}",
    "Ll": r"\p{Ll}",
    "Lt": r"\p{Lt}",
    "Lm": r"\p{Lm}",
    "Lo": r"\p{Lo}",
    "M": r"\p{M}",
    "N": r"\p{N}",
    "S": r"\s",
}
"""The character classes the three split patterns use, by the name ``playground.js`` uses."""


def rank_table(name: str) -> list[bytes]:
    """The tokens of encoding ``name`` in rank order, from the verified asset cache.

    >>> rank_table("r50k_base")[:2]
    [b'!', b'"']
    """
    from tokcourse.course.data.store import path

    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; the playground knows {', '.join(ENCODINGS)}")
    tokens: dict[int, bytes] = {}
    for number, line in enumerate(path(name).read_bytes().splitlines(), 1):
        if not line:
            continue
        fields = line.split(b" ")
        if len(fields) != 2 or not fields[1].isdigit():
            raise ValueError(f"{name}: line {number} is not 'base64 rank': {line[:60]!r}")
        tokens[int(fields[1])] = base64.b64decode(fields[0], validate=True)
    if sorted(tokens) != list(range(len(tokens))):
        raise ValueError(f"{name}: the ranks are not 0..{len(tokens) - 1} without gaps")
    return [tokens[rank] for rank in range(len(tokens))]


def encoding_script(name: str) -> str:
    """The ``.js`` file that hands encoding ``name``'s ranks to the playground.

    >>> encoding_script("r50k_base")[:46]
    'tokcoursePlayground.addData("r50k_base", {"s'
    """
    tokens = rank_table(name)
    too_long = [t for t in tokens if len(t) > 255]
    if too_long:
        raise ValueError(f"{name}: token {too_long[0][:20]!r}... is longer than 255 bytes")
    data = {
        "size": len(tokens),
        "special": SPECIAL_TOKENS[name],
        "lengths": base64.b64encode(bytes(len(t) for t in tokens)).decode("ascii"),
        "bytes": base64.b64encode(b"".join(tokens)).decode("ascii"),
    }
    return f"tokcoursePlayground.addData({json.dumps(name)}, {json.dumps(data)});\n"


def _class_body(ranges: list[tuple[int, int]]) -> str:
    r"""The inside of a JavaScript ``[...]`` (flag ``u``) holding ``ranges``: ``\u{41}-\u{5a}``."""

    def one(c: int) -> str:
        return f"\\u{{{c:x}}}"

    return "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in ranges)


def unicode_classes() -> dict[str, list[tuple[int, int]]]:
    """Code point ranges of each class in :data:`CLASSES`, with tiktoken's Unicode 16.0 tables.

    Surrogates are left out: the playground replaces lone surrogates before it splits.

    >>> unicode_classes()["N"][0]
    (48, 57)
    """
    import regex

    from tokcourse.unicode_pin import pin_unicode

    # every code point but the surrogates, one character each, then with 16.0's properties
    text = pin_unicode(
        "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))
    )

    def code_point(i: int) -> int:
        return i if i < 0xD800 else i + 0x800

    out = {}
    for name, cls in CLASSES.items():
        out[name] = [
            (code_point(m.start()), code_point(m.end() - 1))
            for m in regex.finditer(cls + "+", text)
        ]
    return out


def classes_script() -> str:
    """The ``.js`` file that hands the character classes to the playground."""
    from tokcourse.unicode_pin import UNICODE_VERSION

    bodies = {name: _class_body(ranges) for name, ranges in unicode_classes().items()}
    data = {"unicode": UNICODE_VERSION, "classes": bodies}
    return f'tokcoursePlayground.addData("classes", {json.dumps(data)});\n'


def write_data(static: Path) -> dict[str, tuple[int, int]]:
    """Write every data file under ``static/playground/data``; return ``{file: (raw, gzipped)}``.

    Files whose content is unchanged are not rewritten (a rebuild stays quick to serve).
    """
    folder = static / "playground" / "data"
    folder.mkdir(parents=True, exist_ok=True)
    files = {f"{name}.js": encoding_script(name) for name in ENCODINGS}
    files["classes.js"] = classes_script()
    for module in PORTS:
        for name, script in importlib.import_module(module).scripts().items():
            files[f"{name}.js"] = script
    sizes = {}
    for file, text in files.items():
        raw = text.encode("utf-8")
        target = folder / file
        if not target.is_file() or target.read_bytes() != raw:
            tmp = target.with_suffix(".tmp")
            tmp.write_bytes(raw)
            tmp.replace(target)
        sizes[file] = (len(raw), len(gzip.compress(raw, 9)))
    return sizes


def copy_sources(source: Path, static: Path) -> None:
    """Copy the playground's own JS and CSS (``book/_static/playground``) into ``static``."""
    target = static / "playground"
    target.mkdir(parents=True, exist_ok=True)
    for file in sorted(source.glob("*")):
        if file.suffix in (".js", ".css"):
            (target / file.name).write_bytes(file.read_bytes())
