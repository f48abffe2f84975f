"""Download one pinned file from a Python package index; nothing in it is opened or run first.

Why not ``pip download``: for a source archive (sdist) pip prepares the package's metadata,
which runs the archive's build code (its ``setup.py`` or build backend). Hash-checking mode
(``--require-hashes``) does check the download first, but then builds a *matching* archive all
the same, and so does ``--no-build-isolation`` (both checked: a local index serving an sdist
whose ``setup.py`` writes a file; the file appears). We only ever read one data file out of
these archives, so no code of theirs should run, pinned or not.

So this module speaks the simple repository API (PEP 503) itself, with the standard library
only: it asks pip for its settings (index-url, extra-index-url, find-links, no-index, cert,
proxy, trusted-host, timeout: whatever ``pip download`` would use, from pip's config files,
``PIP_*`` variables and defaults), finds the link whose file name is the pinned one, downloads
the bytes into memory and compares their sha256 with the pinned one. An index that advertises
another sha256 for the file is refused before downloading. The caller gets bytes only when they
match, so a tampered archive is never unpacked, imported or built. Every index pip would use is
tried in order (``file://`` indexes and find-links folders too); which one serves the file does
not matter, since the pinned hash decides.

Nothing here touches the disk or the network on import.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

# The largest archive we pin is ~84 MB (the MiniLM wheel); anything far bigger is not the
# pinned file.
MAX_BYTES = 256 * 1024 * 1024
_CHUNK = 1 << 16
_ATTEMPTS = 3  # per URL, for connection errors and 5xx answers


class DownloadError(RuntimeError):
    """The file could not be found or downloaded from any configured index."""


class HashMismatch(DownloadError):
    """An index offered bytes (or advertised a hash) other than the pinned ones."""


@dataclass(frozen=True)
class IndexSettings:
    """Where and how ``pip download`` would look for packages.

    ``index_urls``: the index URL, then the extra index URLs (empty with ``--no-index``).
    """

    index_urls: tuple[str, ...]
    find_links: tuple[str, ...] = ()
    cert: str | None = None
    proxy: str | None = None
    trusted_hosts: tuple[str, ...] = ()
    timeout: float = 15.0
    extra_ca_bundle: str | None = None  # pip's own CA bundle, trusted besides the system's


# Run in a subprocess by the Python that will use the files, so a learner's own pip decides.
# pip has no public API for its settings; its option parser is the only thing that applies its
# config files, PIP_* variables and defaults exactly as `pip download` does.
_PIP_SETTINGS_SCRIPT = """
import json
from pip._internal.commands import create_command
o, _ = create_command("download").parse_args([])
try:
    from pip._vendor import certifi
    bundle = certifi.where()
except Exception:
    bundle = None
print(json.dumps({
    "index_urls": [] if o.no_index else [o.index_url, *o.extra_index_urls],
    "find_links": list(o.find_links or []),
    "cert": o.cert or None,
    "proxy": o.proxy or None,
    "trusted_hosts": list(getattr(o, "trusted_hosts", None) or []),
    "timeout": o.timeout,
    "extra_ca_bundle": bundle,
}))
"""


def pip_settings(python: str = sys.executable) -> IndexSettings:
    """The index settings ``python -m pip download`` would use here.

    Example: ``pip_settings().index_urls[0]  # the configured index URL``
    """
    try:
        result = subprocess.run(
            [python, "-c", _PIP_SETTINGS_SCRIPT],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DownloadError(f"could not ask pip for its index settings: {e}") from e
    try:
        raw = json.loads(result.stdout) if result.returncode == 0 else None
    except json.JSONDecodeError:
        raw = None
    if not isinstance(raw, dict):
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        raise DownloadError(
            f"could not read pip's index settings with {python} (is pip installed? "
            f"`{python} -m ensurepip` installs it). The downloads go through the package index "
            f"pip is configured to use.\n{tail}"
        )
    return IndexSettings(
        index_urls=tuple(u for u in raw["index_urls"] if u),
        find_links=tuple(u for u in raw["find_links"] if u),
        cert=raw["cert"],
        proxy=raw["proxy"],
        trusted_hosts=tuple(raw["trusted_hosts"]),
        timeout=float(raw["timeout"] or 15.0),
        extra_ca_bundle=raw.get("extra_ca_bundle"),
    )


def normalize(project: str) -> str:
    """A project name as the simple API spells it (PEP 503).

    Example: ``normalize("Mistral_Common")  # 'mistral-common'``
    """
    return re.sub(r"[-_.]+", "-", project).lower()


@dataclass(frozen=True)
class Link:
    """A file offered by an index: its URL and the sha256 the index advertises, if any."""

    url: str
    sha256: str | None


class _Anchors(HTMLParser):
    """Collects ``<a href>`` targets and a ``<base href>`` from a simple-API page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []
        self.base: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if href is None:
            return
        if tag == "a":
            self.hrefs.append(href)
        elif tag == "base" and self.base is None:
            self.base = href


def links_in_page(html: str, page_url: str) -> dict[str, Link]:
    """File name -> link, for every anchor of a simple-API (or find-links) page.

    Example: ``links_in_page('<a href="f-1.whl#sha256=ab">f-1.whl</a>', u)["f-1.whl"].sha256``
    """
    parser = _Anchors()
    parser.feed(html)
    base = urllib.parse.urljoin(page_url, parser.base) if parser.base else page_url
    links: dict[str, Link] = {}
    for href in parser.hrefs:
        url, _, fragment = urllib.parse.urljoin(base, href).partition("#")
        name = urllib.parse.unquote(urllib.parse.urlsplit(url).path.rpartition("/")[2])
        digests = urllib.parse.parse_qs(fragment)
        sha = digests.get("sha256", [None])[0]
        links.setdefault(name, Link(url, sha.lower() if sha else None))
    return links


class _NotFound(Exception):
    """The page or file does not exist there (HTTP 404/410, a missing local path)."""


# Credentials are kept per host as pip keeps them (pip/_internal/network/auth.py,
# MultiDomainBasicAuth): a request uses the credentials in its own URL, else those of the
# configured index on the same netloc (the longest common path wins), else any met before on
# that netloc. So an index's file links on the same host are fetched with the index's
# credentials. On a redirect the Authorization header is dropped when requests' rebuild_auth
# drops it (should_strip_auth: another host, port or scheme, except http->https on the
# standard ports); the new host then gets only its own configured credentials (as pip's
# handle_401 retries with them), never the old host's. netrc and keyring are not read.
Credentials = tuple[str, str]
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _split_credentials(url: str) -> tuple[str, Credentials | None]:
    """``url`` without ``user:password@``, and those credentials (unquoted) if it had them."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url, None
    user = urllib.parse.unquote(parts.username)
    return _without_credentials(url), (user, urllib.parse.unquote(parts.password or ""))


def _basic(credentials: Credentials) -> str:
    token = base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode()
    return f"Basic {token}"


def should_strip_auth(old_url: str, new_url: str) -> bool:
    """Whether a redirect from ``old_url`` to ``new_url`` must drop the Authorization header.

    The rule of requests' ``Session.should_strip_auth``, which pip's downloads follow.

    Example: ``should_strip_auth("https://a/x", "https://b/x")  # True``
    """
    old, new = urllib.parse.urlsplit(old_url), urllib.parse.urlsplit(new_url)
    if old.hostname != new.hostname:
        return True
    if old.scheme == "http" and old.port in (80, None):
        if new.scheme == "https" and new.port in (443, None):
            return False
    changed_port, changed_scheme = old.port != new.port, old.scheme != new.scheme
    default = (_DEFAULT_PORTS.get(old.scheme), None)
    if not changed_scheme and old.port in default and new.port in default:
        return False
    return changed_port or changed_scheme


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects, deciding the Authorization of each new request (see above)."""

    def __init__(self, client: _Client) -> None:
        self.client = client

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        bare, embedded = _split_credentials(newurl)
        new = super().redirect_request(req, fp, code, msg, headers, bare)
        if new is None:
            return None
        new.remove_header("Authorization")
        old = req.get_header("Authorization")
        if embedded is not None:
            auth: str | None = _basic(embedded)
        elif old is not None and not should_strip_auth(req.full_url, bare):
            auth = old
        else:
            found = self.client.configured_credentials(bare)
            auth = _basic(found) if found is not None else None
        if auth is not None:
            new.add_unredirected_header("Authorization", auth)
        return new


class _HTTPS(urllib.request.HTTPSHandler):
    """Checks certificates except on pip's trusted hosts, decided per request (redirects too)."""

    def __init__(self, context: ssl.SSLContext, trusted: tuple[str, ...]) -> None:
        super().__init__(context=context)
        self.trusted, self.unverified = trusted, ssl._create_unverified_context()

    def https_open(self, req):
        parts = urllib.parse.urlsplit(req.full_url)
        trusted = parts.hostname in self.trusted or parts.netloc in self.trusted
        context = self.unverified if trusted else self._context
        return self.do_open(http.client.HTTPSConnection, req, context=context)


@dataclass
class _Client:
    settings: IndexSettings
    opener: urllib.request.OpenerDirector = field(init=False)
    passwords: dict[str, Credentials] = field(init=False, default_factory=dict)

    def configured_credentials(self, url: str) -> Credentials | None:
        """The credentials of the configured index (or find-links URL) on ``url``'s netloc."""
        target = urllib.parse.urlsplit(_without_credentials(url))
        best: tuple[int, Credentials] | None = None
        for index in (*self.settings.index_urls, *self.settings.find_links):
            bare, credentials = _split_credentials(index)
            where = urllib.parse.urlsplit(bare)
            if credentials is None or where.netloc != target.netloc:
                continue
            common = len(os.path.commonpath([target.path or "/", where.path or "/"]))
            if best is None or common > best[0]:
                best = (common, credentials)
        return best[1] if best is not None else None

    def credentials(self, url: str) -> Credentials | None:
        """What pip would send to ``url``: its own, its index's, or its host's credentials."""
        bare, credentials = _split_credentials(url)
        credentials = credentials or self.configured_credentials(bare)
        netloc = urllib.parse.urlsplit(bare).netloc
        if credentials is None:
            return self.passwords.get(netloc)
        self.passwords[netloc] = credentials
        return credentials

    def __post_init__(self) -> None:
        context = ssl.create_default_context(cafile=self.settings.cert)
        if self.settings.cert is None and self.settings.extra_ca_bundle:
            # pip trusts its own bundle too (a Python without system certificates, e.g. some
            # macOS installs, reaches the index with pip but not with the default context).
            try:
                context.load_verify_locations(self.settings.extra_ca_bundle)
            except OSError:
                pass
        handlers: list[urllib.request.BaseHandler] = []
        if self.settings.proxy:
            proxy = self.settings.proxy
            handlers.append(urllib.request.ProxyHandler({"http": proxy, "https": proxy}))
        https = _HTTPS(context, self.settings.trusted_hosts)
        self.opener = urllib.request.build_opener(*handlers, https, _Redirects(self))

    def read(self, url: str, *, accept: str | None = None) -> tuple[bytes, str]:
        """The bytes at ``url`` (at most MAX_BYTES) and the final URL after redirects."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme == "file" or not parts.scheme:
            return self._read_local(url), url
        if parts.scheme not in ("http", "https"):
            raise DownloadError(f"unsupported URL scheme in {url!r}")
        headers = {"User-Agent": "tokcourse-assets"}
        if accept:
            headers["Accept"] = accept
        credentials = self.credentials(url)  # sent as basic auth, never forwarded blindly
        url = _without_credentials(url)
        for attempt in range(1, _ATTEMPTS + 1):
            request = urllib.request.Request(url, headers=headers)
            if credentials is not None:  # kept off redirects; _Redirects decides those
                request.add_unredirected_header("Authorization", _basic(credentials))
            try:
                with self.opener.open(request, timeout=self.settings.timeout) as response:
                    return _read_capped(response, url), response.geturl()
            except urllib.error.HTTPError as e:
                if e.code in (404, 410):
                    raise _NotFound(url) from None
                if e.code < 500 or attempt == _ATTEMPTS:
                    raise DownloadError(f"{url}: HTTP {e.code} {e.reason}") from None
            except (urllib.error.URLError, OSError) as e:
                if attempt == _ATTEMPTS:
                    reason = getattr(e, "reason", e)
                    raise DownloadError(f"{url}: {reason}") from None
            time.sleep(0.5 * attempt)
        raise AssertionError("unreachable")

    @staticmethod
    def _read_local(url: str) -> bytes:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme == "file":
            local = Path(urllib.request.url2pathname(parts.path))
        else:
            local = Path(url)
        if local.is_dir():
            local = local / "index.html"  # a file:// index: one folder per project
        try:
            with local.open("rb") as f:
                return _read_capped(f, url)
        except (FileNotFoundError, NotADirectoryError):
            raise _NotFound(url) from None
        except OSError as e:
            raise DownloadError(f"{url}: {e}") from None


def _read_capped(stream, url: str) -> bytes:
    data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise DownloadError(f"{url} is larger than {MAX_BYTES} bytes; not the pinned file")
    return data


_HTML = "application/vnd.pypi.simple.v1+html, text/html;q=0.9"


def find_link(client: _Client, project: str, filename: str, places: list[str]) -> Link | None:
    """The first link to ``filename`` on the configured indexes, then find-links; else None.

    Every page looked at is appended to ``places`` (for the error message).
    """
    for index in client.settings.index_urls:
        page = f"{index.rstrip('/')}/{normalize(project)}/"
        places.append(page)
        try:
            html, final = client.read(page, accept=_HTML)
        except _NotFound:
            continue
        link = links_in_page(html.decode("utf-8", "replace"), final).get(filename)
        if link is not None:
            return link
    for location in client.settings.find_links:
        places.append(location)
        parts = urllib.parse.urlsplit(location)
        local = None
        if parts.scheme == "file":
            local = Path(urllib.request.url2pathname(parts.path))
        elif not parts.scheme:
            local = Path(location)
        if local is not None and local.is_dir():  # a folder of archives
            if (local / filename).is_file():
                return Link((local / filename).resolve().as_uri(), None)
            continue
        try:
            html, final = client.read(location, accept="text/html")
        except _NotFound:
            continue
        link = links_in_page(html.decode("utf-8", "replace"), final).get(filename)
        if link is not None:
            return link
    return None


def fetch_pinned(
    project: str,
    filename: str,
    sha256: str,
    *,
    label: str | None = None,
    settings: IndexSettings | None = None,
    log: Callable[[str], None] | None = None,
) -> bytes:
    """The bytes of ``filename`` from ``project`` on pip's configured indexes, if they hash right.

    Raises HashMismatch if the index advertises, or serves, other bytes than the pinned ones,
    DownloadError if no configured index has the file or it cannot be downloaded. Nothing is
    written to disk; the bytes are returned only after the check.

    Example: ``fetch_pinned("sphinx", "sphinx-7.4.7-py3-none-any.whl", "c241...")``
    """
    label = label or filename
    client = _Client(settings if settings is not None else pip_settings())
    places: list[str] = []
    link = find_link(client, project, filename, places)
    if link is None:
        looked = "\n".join(f"  {p}" for p in places) or "  (none: pip is set to --no-index)"
        raise DownloadError(
            f"{filename} ({label}) is on none of the package indexes pip is configured to use; "
            f"looked in:\n{looked}\nCheck `pip config list` (index-url, extra-index-url, "
            "find-links) or PIP_INDEX_URL: the file is published on PyPI."
        )
    shown = _without_credentials(link.url)
    if link.sha256 is not None and link.sha256 != sha256:
        raise HashMismatch(
            f"sha256 mismatch for {filename} ({label}) as listed at {shown}: expected "
            f"{sha256}, actual {link.sha256}. It is not the pinned release, so it was not "
            "downloaded, opened or run."
        )
    if log is not None:
        log(f"downloading {filename} from {shown} ...")
    data, _ = client.read(link.url)
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise HashMismatch(
            f"sha256 mismatch for {filename} ({label}) downloaded from {shown}: expected "
            f"{sha256}, actual {actual}. It is not the pinned release, so it was not opened, "
            "unpacked or run."
        )
    return data


def _without_credentials(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url
    host = parts.hostname or ""
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


__all__ = [
    "MAX_BYTES",
    "DownloadError",
    "HashMismatch",
    "IndexSettings",
    "Link",
    "fetch_pinned",
    "find_link",
    "links_in_page",
    "normalize",
    "pip_settings",
    "should_strip_auth",
]
