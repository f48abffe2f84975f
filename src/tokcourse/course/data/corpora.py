"""The pinned corpora the chapters compute from: a novel, Sphinx's translated UI messages, Python
source code (and the local standard library, for tests only).
"""

from __future__ import annotations

import io
import os
import re
import sysconfig
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from tokcourse.course.data.sources import SETUP_COMMAND, AssetError
from tokcourse.course.data.store import _read_verified, path

# --------------------------------------------------------------------------------------------
# Corpora
# --------------------------------------------------------------------------------------------


def botchan_text() -> str:
    """The English novel *Botchan* (Project Gutenberg), fetched if missing: the novel only.

    Project Gutenberg's header and its licence are cut off at the standard
    ``*** START OF ... ***`` / ``*** END OF ... ***`` lines, as are the "Produced by" credit
    right after the first and the "End of Project Gutenberg's ..." line right before the second.
    The UTF-8 byte-order mark is dropped and CRLF line ends become ``\\n``. The whole file, header
    and licence included, stays available at ``path("botchan")``.

    Example: ``botchan_text()[:24]  # 'BOTCHAN (MASTER DARLING)'``
    """
    file, data = _read_verified("botchan", fetch_missing=True)  # the bytes that were checked
    text = data.decode("utf-8-sig").replace("\r\n", "\n")
    start = re.search(r"^\*\*\* ?START OF (?:THIS|THE) PROJECT GUTENBERG EBOOK.*\n", text, re.M)
    end = re.search(r"^\*\*\* ?END OF (?:THIS|THE) PROJECT GUTENBERG EBOOK", text, re.M)
    if start is None or end is None or end.start() < start.end():
        raise AssetError(
            f"{file} has no '*** START OF THIS PROJECT GUTENBERG EBOOK' line followed by an "
            f"'*** END OF THIS PROJECT GUTENBERG EBOOK' line, so the novel cannot be cut out "
            f"of it; delete the file and run `{SETUP_COMMAND}` to fetch the pinned copy again"
        )
    lines = text[start.end() : end.start()].splitlines(keepends=True)
    if lines and lines[0].startswith("Produced by"):
        lines = lines[1:]
    if lines and re.match(r"End of (?:the )?Project Gutenberg", lines[-1], re.I):
        lines = lines[:-1]
    return "".join(lines)


def mistral_model_path() -> Path:
    """Path of Mistral 7B v1's SentencePiece model (32,000 pieces), fetched if missing.

    Example: ``spm.SentencePieceProcessor(model_file=str(mistral_model_path()))``
    """
    return path("mistral_v1_model", fetch_missing=True)


def minilm_vocab_path() -> Path:
    """Path of all-MiniLM-L6-v2's ``vocab.txt`` (30,522 WordPiece entries), fetched if missing.

    Example: ``minilm_vocab_path().read_text().splitlines()[100]  # '[UNK]'``
    """
    return path("minilm_vocab", fetch_missing=True)


def minilm_tokenizer_json_path() -> Path:
    """Path of all-MiniLM-L6-v2's Hugging Face ``tokenizer.json``, fetched if missing.

    Example: ``json.loads(minilm_tokenizer_json_path().read_text())["model"]["type"]``
    """
    return path("minilm_tokenizer", fetch_missing=True)


def minilm_weights_path() -> Path:
    """Path of all-MiniLM-L6-v2's ``model.safetensors``, fetched if missing.

    Read it with ``safetensors.numpy`` (no torch, no pickle); :func:`minilm_word_embeddings`
    does that for the one matrix the course needs.

    Example: ``safe_open(str(minilm_weights_path()), framework="numpy").keys()``
    """
    return path("minilm_weights", fetch_missing=True)


def minilm_vocab() -> list[str]:
    """all-MiniLM-L6-v2's vocabulary: entry ``i`` is the token with id ``i`` (30,522 entries).

    Example: ``minilm_vocab()[:3]  # ['[PAD]', '[unused0]', '[unused1]']``
    """
    _, data = _read_verified("minilm_vocab", fetch_missing=True)
    return data.decode("utf-8").splitlines()


MINILM_EMBEDDINGS_TENSOR = "embeddings.word_embeddings.weight"


def minilm_word_embeddings():
    """all-MiniLM-L6-v2's word-embedding matrix as a float32 numpy array (30,522 x 384).

    The bytes are checked against their pinned sha256 and then parsed by ``safetensors.numpy``
    from exactly those bytes: a safetensors file is a JSON header and raw arrays, nothing in it
    is run (unlike a pickled ``.bin``). Row ``i`` belongs to the token on line ``i`` of
    :func:`minilm_vocab`.

    Example: ``minilm_word_embeddings().shape  # (30522, 384)``
    """
    from safetensors.numpy import load

    _, data = _read_verified("minilm_weights", fetch_missing=True)
    return load(data)[MINILM_EMBEDDINGS_TENSOR]


def _check_max_bytes(max_bytes: int | None) -> None:
    if max_bytes is not None and max_bytes < 0:
        raise ValueError(f"max_bytes must be >= 0 or None, got {max_bytes!r}")


def _join_sources(files: Iterable[bytes], max_bytes: int | None) -> str:
    """Concatenate UTF-8 source files in the order given, cut at a file boundary.

    Each file ends in a newline; files that are not valid UTF-8 are skipped. With ``max_bytes``,
    the result is the longest run of whole files whose UTF-8 size is at most ``max_bytes``
    (``files`` is consumed lazily, so later files are never read).
    """
    pieces: list[str] = []
    total = 0
    for raw in files:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not text.endswith("\n"):
            text += "\n"
        size = len(text.encode("utf-8"))
        if max_bytes is not None and total + size > max_bytes:
            break
        pieces.append(text)
        total += size
    return "".join(pieces)


def _sphinx_wheel() -> zipfile.ZipFile:
    """The pinned Sphinx wheel, opened from bytes checked against its sha256 (fetched if missing).

    Whatever Sphinx is installed, if any, is never looked at.
    """
    _, data = _read_verified("sphinx_wheel", fetch_missing=True)
    return zipfile.ZipFile(io.BytesIO(data))


def python_code(max_bytes: int | None = None) -> str:
    """Python source code from a pinned release: every ``.py`` module of Sphinx 7.4.7.

    The same text whatever Python runs it (unlike :func:`stdlib_code`): modern, type-hinted
    library code, read from the pinned wheel (``sphinx_wheel``, fetched if missing). Files come in
    sorted order of their path in the wheel (``sphinx/__init__.py`` first), each ending in a
    newline. With ``max_bytes``, the result is cut at a file boundary: the longest run of whole
    files whose UTF-8 size is at most ``max_bytes``.

    Example: ``"def " in python_code(max_bytes=20_000)  # True``
    """
    _check_max_bytes(max_bytes)
    with _sphinx_wheel() as zf:
        names = sorted(n for n in zf.namelist() if n.startswith("sphinx/") and n.endswith(".py"))
        return _join_sources((zf.read(name) for name in names), max_bytes)


_STDLIB_SKIP_DIRS = frozenset(
    {"site-packages", "dist-packages", "__pycache__", "test", "tests", "idle_test"}
)


def stdlib_code(max_bytes: int | None = None) -> str:
    """The running interpreter's standard library ``.py`` sources, concatenated.

    Files come in sorted order of their path relative to the stdlib directory, each ending in a
    newline; ``site-packages`` and test directories are skipped, as are files that are not valid
    UTF-8. With ``max_bytes``, the result is cut at a file boundary: the longest run of whole
    files whose UTF-8 size is at most ``max_bytes``. The text depends on the Python version, so
    the chapters use :func:`python_code` instead; tests use this one for variety.

    Example: ``len(stdlib_code(max_bytes=100_000).encode()) <= 100_000``
    """
    _check_max_bytes(max_bytes)
    root = Path(sysconfig.get_path("stdlib"))
    names = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _STDLIB_SKIP_DIRS and not d.startswith(".")]
        rel_dir = Path(dirpath).relative_to(root)
        names += [(rel_dir / f).as_posix() for f in filenames if f.endswith(".py")]

    def read() -> Iterable[bytes]:
        for rel in sorted(names):
            try:
                yield (root / rel).read_bytes()
            except OSError:
                continue

    return _join_sources(read(), max_bytes)


def parse_po(text: str | bytes) -> dict[str, str]:
    """Read a gettext ``.po`` catalogue into {msgid: msgstr}, translated entries only.

    The reading is Babel's (``babel.messages.pofile.read_po``: multi-line strings, escapes,
    flags, obsolete ``#~`` entries). Kept: entries with a translation. Skipped: the header
    (``msgid ""``), untranslated entries (empty msgstr), entries flagged ``#, fuzzy``, obsolete
    entries, entries with a context (``msgctxt``) and plural entries (``msgid_plural``), whose
    one msgid has several translations. A line Babel cannot place is a ValueError naming it
    (Babel is lenient with a malformed string itself; the catalogues we read are pinned by hash).

    >>> parse_po('msgid "Hello"\\nmsgstr "Hallo"\\n')
    {'Hello': 'Hallo'}
    """
    from babel.messages.pofile import PoFileError, read_po  # imported on use: Babel is large

    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        catalog = read_po(io.BytesIO(data), abort_invalid=True)
    except PoFileError as e:
        raise ValueError(f"line {e.lineno + 1}: {e}") from e  # Babel counts from 0
    return {
        message.id: message.string
        for message in catalog
        if message.id
        and isinstance(message.id, str)
        and isinstance(message.string, str)
        and message.string
        and not message.fuzzy
        and message.context is None
    }


_PO_MEMBER_RE = re.compile(r"sphinx/locale/([^/]+)/LC_MESSAGES/sphinx\.po")


def po_catalogues() -> dict[str, dict[str, str]]:
    """Sphinx 7.4.7's translated UI messages: language code -> {English msgid: translation}.

    Read from the pinned wheel (``sphinx/locale/<lang>/LC_MESSAGES/sphinx.po``, fetched if
    missing), never from an installed Sphinx, with :func:`parse_po` (Babel's reader), so only
    real, non-fuzzy translations appear. Directories with an encoding suffix (``zh_TW.Big5``)
    duplicate another language and are left out. Languages come in sorted order.

    Example: ``po_catalogues()["de"]["Search"]  # 'Suche'``
    """
    return _read_catalogues(None)


def _read_catalogues(langs: Sequence[str] | None) -> dict[str, dict[str, str]]:
    """Parse the named catalogues (all if None) out of the pinned wheel.

    Raises ValueError naming any language the wheel has no catalogue for.
    """
    with _sphinx_wheel() as zf:
        members = {
            m[1]: name
            for name in zf.namelist()
            if (m := _PO_MEMBER_RE.fullmatch(name)) and "." not in m[1]
        }
        wanted = sorted(members) if langs is None else list(langs)
        unknown = [lang for lang in wanted if lang not in members]
        if unknown:
            raise ValueError(
                f"unknown language(s) {unknown}; available: {', '.join(sorted(members))}"
            )
        return {lang: parse_po(zf.read(members[lang])) for lang in wanted}


# Ten well-translated catalogues covering nine writing systems: Latin (Spanish, French,
# Turkish), Cyrillic (Russian), Greek, Perso-Arabic (Persian), Devanagari (Hindi), Japanese kana
# and kanji, Chinese Han, Korean Hangul. In the pinned Sphinx 7.4.7 they share 330 fully
# translated messages (tests/test_assets.py checks it).
# German and Arabic are left out on purpose: only ~170 and ~110 of Sphinx's messages are
# translated there, and every language added can only shrink the common set.
DEFAULT_PARALLEL_LANGS: tuple[str, ...] = (
    "es",
    "fr",
    "tr",
    "ru",
    "el",
    "fa",
    "hi",
    "ja",
    "zh_CN",
    "ko",
)


def parallel_text(
    langs: Sequence[str] | None = None, *, min_messages: int = 100
) -> dict[str, list[str]]:
    """The same messages in several languages, aligned: ``out[lang][i]`` means ``out["en"][i]``.

    Only messages translated (non-fuzzy) in *every* chosen language are kept, in the order they
    appear in the first chosen language's catalogue; ``"en"`` holds the English msgids. Default
    languages: :data:`DEFAULT_PARALLEL_LANGS`. Raises ValueError for an unknown language, or if
    fewer than ``min_messages`` messages survive (a thin catalogue would silently shrink the set).

    Example: ``pt = parallel_text(["de", "ja"]); pt["en"][0], pt["ja"][0]``
    """
    if isinstance(langs, str):
        raise TypeError(f"langs must be a list of language codes, not the string {langs!r}")
    chosen = list(DEFAULT_PARALLEL_LANGS if langs is None else langs)
    chosen = [lang for lang in dict.fromkeys(chosen) if lang != "en"]
    if not chosen:
        raise ValueError("choose at least one language other than 'en'")
    catalogues = _read_catalogues(chosen)
    msgids = [m for m in catalogues[chosen[0]] if all(m in catalogues[lg] for lg in chosen)]
    if len(msgids) < min_messages:
        raise ValueError(
            f"only {len(msgids)} messages are translated in all of {chosen} "
            f"(min_messages={min_messages}); drop a thinly translated language"
        )
    out = {"en": msgids}
    out.update({lang: [catalogues[lang][m] for m in msgids] for lang in chosen})
    return out
