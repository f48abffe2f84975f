"""axe-core for the accessibility test: one pinned npm release, hash-checked, never committed.

The tarball comes from the npm registry (``npm view axe-core@VERSION dist``) the first time a
test needs it and is kept in ``_build/test-assets``. Its sha512 (npm's ``dist.integrity``) is
pinned here and checked on every use, cached or fresh, before anything is read out of it: a
damaged or truncated cached copy is fetched again, a download that does not match is refused.
Only ``package/axe.min.js`` is read, in memory: the archive is never unpacked to disk and none
of its code runs in Python (the script runs in the test's headless browser only).
"""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tests.conftest import ROOT
from tokcourse.course.data import download
from tokcourse.course.data.store import _write_atomic

VERSION = "4.14.1"
TARBALL = f"axe-core-{VERSION}.tgz"
URL = f"https://registry.npmjs.org/axe-core/-/{TARBALL}"
#: ``dist.integrity`` of axe-core 4.14.1 as the npm registry lists it.
INTEGRITY = (
    "sha512-"
    "FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
)
CACHE = ROOT / "_build" / "test-assets"
SCRIPT = "package/axe.min.js"


def integrity(data: bytes) -> str:
    """The Subresource-Integrity string npm lists for a tarball: ``sha512-<base64>``."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def check(data: bytes, where: str) -> bytes:
    """``data`` if it is the pinned tarball, else HashMismatch naming ``where``."""
    actual = integrity(data)
    if actual != INTEGRITY:
        raise download.HashMismatch(
            f"{TARBALL} from {where} ({len(data):,} bytes) is not the pinned release: expected "
            f"{INTEGRITY}, actual {actual}. It was not opened."
        )
    return data


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        data = response.read(download.MAX_BYTES + 1)
    if len(data) > download.MAX_BYTES:
        raise download.DownloadError(f"{url} is larger than {download.MAX_BYTES} bytes")
    return data


def tarball(cache: Path = CACHE, fetch: Callable[[str], bytes] = _download) -> bytes:
    """The pinned tarball's bytes: the cached copy if it checks out, else a checked download."""
    cached = cache / TARBALL
    if cached.is_file():
        try:
            return check(cached.read_bytes(), str(cached))
        except download.HashMismatch:
            cached.unlink()  # damaged or truncated: fetch a good copy
    data = check(fetch(URL), URL)
    _write_atomic(cached, data)
    return data


def axe_script(cache: Path = CACHE, fetch: Callable[[str], bytes] = _download) -> str:
    """The text of ``axe.min.js`` from the pinned, checked tarball."""
    with tarfile.open(fileobj=io.BytesIO(tarball(cache, fetch)), mode="r:gz") as archive:
        member = archive.extractfile(SCRIPT)
        if member is None:
            raise download.DownloadError(f"{TARBALL} has no {SCRIPT}")
        return member.read().decode("utf-8")
