"""tiktoken's own cache, filled from our verified assets, and :func:`setup` / :func:`verify`.

After :func:`setup`, plain ``tiktoken.get_encoding("cl100k_base")`` works with no network.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

from tokcourse.course.data import sources
from tokcourse.course.data.sources import SETUP_COMMAND, TIKTOKEN_BLOB_URLS, AssetError
from tokcourse.course.data.store import (
    _cache_path,
    _log,
    _make_dir,
    _read_checked,
    _read_verified,
    _writable_dir,
    _write_atomic,
    fetch,
    path,
)

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
        asset = sources.ASSETS[name]
        expected = installed.get(url)
        if expected != asset.sha256:
            raise AssetError(
                f"the installed tiktoken expects {url} to have sha256 {expected}, but tokcourse "
                f"pins {asset.sha256} for {name!r}; tokcourse.course.data.sources needs updating "
                "for this tiktoken version"
            )
    _make_dir(target, _tiktoken_cache_var())
    for name, url in TIKTOKEN_BLOB_URLS.items():
        _, data = _read_verified(name)  # copy the bytes that were checked, not a reopened file
        dest = target / hashlib.sha1(url.encode()).hexdigest()
        if _blob_problem(name, dest) is None:
            continue
        _write_atomic(dest, data, _tiktoken_cache_var())
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
        count = len(sources.ASSET_NAMES)
        problems.append(
            f"the cache folder {directory} does not exist, so none of the {count} "
            f"assets is there; run `{SETUP_COMMAND}`"
        )
    elif directory is not None:
        for name in sources.ASSET_NAMES:
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
        elif (problem := _blob_problem(name, p)) is not None:
            problems.append(f"tiktoken cache: {problem}")
    return problems


def _blob_problem(name: str, p: Path) -> str | None:
    """Why tiktoken's cached copy ``p`` of asset ``name`` is not the pinned file, or None.

    Size first, then the hash of a bounded read: a huge or sparse file is refused unread.
    """
    try:
        _read_checked(sources.ASSETS[name], p)
    except FileNotFoundError:
        return f"{p} (asset {name!r}) is missing"
    except AssetError as e:
        return str(e)
    return None
