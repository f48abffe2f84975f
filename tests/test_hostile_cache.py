"""Hostile inputs for the verified asset cache and the download code (issue 25).

A huge (sparse) file in the cache, a file swapped between its hash check and its use, a private
index with credentials (same-host links, cross-host redirects) and the temporaries a killed
process leaves behind. Everything runs offline: the indexes are HTTP servers on 127.0.0.1.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import os
import shutil
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.conftest import private_cache, refuse_downloads
from tokcourse.course.data import assets, download, sources, store
from tokcourse.course.data.assets import AssetError

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(scope="session")
def cached() -> dict[str, Path]:
    """The assets these tests copy, from the real cache (fetched once per machine)."""
    return assets.fetch(["botchan", "r50k_base"], progress=False)


@pytest.fixture
def cache(cached, tmp_path, monkeypatch) -> Path:
    """A private cache holding botchan and r50k; downloading is an error."""
    directory = private_cache(cached.values(), tmp_path, monkeypatch)
    refuse_downloads(monkeypatch)
    return directory


def run_python(code: str, env: dict[str, str], memory: int | None = None, timeout: int = 300):
    """Run ``code`` in a fresh interpreter (address space capped at ``memory`` bytes)."""

    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": str(SRC), **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=cap if memory else None,
        check=False,
    )


# ------------------------------------------------------------------ 1. sizes before hashing


def test_a_huge_sparse_cached_file_is_refused_by_its_size(tmp_path):
    """4 GiB of holes where botchan.txt should be: refused by size, nothing read into memory.

    Run under a 2 GiB address-space cap: reading the file whole (as before) is a MemoryError.
    """
    folder = tmp_path / "cache"
    folder.mkdir()
    with (folder / "botchan.txt").open("wb") as f:
        f.truncate(4 << 30)
    with (folder / "r50k_base.tiktoken").open("wb") as f:  # no pinned size: the cap applies
        f.truncate(download.MAX_BYTES + 1)
    result = run_python(
        """
        import dataclasses, types
        from tokcourse.course.data import assets, sources, store
        for problem in assets.verify():
            if "botchan" in problem or "r50k_base" in problem:
                print("VERIFY", problem)
        try:
            assets.path("botchan")
        except assets.AssetError as e:
            print("PATH", e)
        table = dict(sources.ASSETS)
        table["r50k_base"] = dataclasses.replace(table["r50k_base"], size=None)
        sources.ASSETS = types.MappingProxyType(table)
        try:
            assets.path("r50k_base")
        except assets.AssetError as e:
            print("UNPINNED", e)
        def refuse(*args, **kwargs):
            raise assets.AssetError("no download here")
        store._pip_settings = lambda: None
        store._download_archive = refuse
        try:
            assets.fetch(["botchan"], progress=False)
        except assets.AssetError as e:
            print("FETCH", e)
        """,
        {"TOKCOURSE_CACHE_DIR": str(folder), "PIP_CONFIG_FILE": os.devnull},
        memory=2 << 30,
    )
    assert "MemoryError" not in result.stderr, result.stderr[-2000:]
    out = result.stdout
    assert f"PATH {folder / 'botchan.txt'} (asset 'botchan') has 4,294,967,296 bytes" in out
    assert "pinned file (sha256 464bd53" in out and "has 278,779" in out
    assert "VERIFY" in out and "4,294,967,296 bytes" in out.split("VERIFY", 1)[1]
    assert f"UNPINNED {folder / 'r50k_base.tiktoken'}" in out
    assert f"at most {download.MAX_BYTES:,}" in out
    # the damaged copy is not reused: fetch goes for a new one (refused here), without reading it
    assert "FETCH no download here" in out, result.stderr[-2000:]


def test_a_huge_file_in_tiktokens_cache_is_refused_by_its_size(tmp_path):
    """tiktoken's cached cl100k replaced by 4 GiB of holes: verify names it, setup replaces it.

    Both run under a 2 GiB address-space cap, so neither may read the file whole.
    """
    assets.fetch(["r50k_base", "cl100k_base", "o200k_base"], progress=False)
    env = {"TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken"), "PIP_CONFIG_FILE": os.devnull}
    code = """
        import hashlib
        from tokcourse.course.data import assets, sources
        target = assets.install_tiktoken_cache()
        blob = target / hashlib.sha1(sources.TIKTOKEN_BLOB_URLS["cl100k_base"].encode()).hexdigest()
        with blob.open("r+b") as f:
            f.truncate(4 << 30)
        print("VERIFY", [p for p in assets.verify() if "tiktoken cache" in p])
        assets.install_tiktoken_cache()
        print("AFTER", [p for p in assets.verify() if "tiktoken cache" in p], blob.stat().st_size)
        """
    result = run_python(code, env, memory=2 << 30)
    assert result.returncode == 0, result.stderr[-2000:]
    verify, after = result.stdout.split("AFTER")
    assert "(asset 'cl100k_base') has 4,294,967,296 bytes" in verify, result.stdout
    assert "was not read" in verify
    size = sources.ASSETS["cl100k_base"].size
    assert after.strip() == f"[] {size}", after


def test_a_cached_file_of_the_wrong_size_is_fetched_again(cache, monkeypatch):
    botchan = cache / "botchan.txt"
    good = botchan.read_bytes()
    botchan.write_bytes(good + b"extra")
    fetched = []

    def serve(source, progress, settings=None):
        fetched.append(source.requirement)
        raise AssetError("stop here")

    monkeypatch.setattr(store, "_download_archive", serve)
    with pytest.raises(AssetError, match="stop here"):
        assets.fetch(["botchan"], progress=False)
    assert fetched == ["sentencepiece==0.2.3"]


def test_a_named_pipe_in_the_cache_is_refused_without_waiting(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    os.mkfifo(folder / "botchan.txt")
    result = run_python(
        """
        from tokcourse.course.data import assets, store
        try:
            assets.path("botchan")
        except assets.AssetError as e:
            print("PATH", e)
        print("REUSED", store._cached_ok(assets.ASSETS["botchan"]))
        """,
        {"TOKCOURSE_CACHE_DIR": str(folder)},
        timeout=30,
    )
    assert f"PATH {folder / 'botchan.txt'} (asset 'botchan') is not a regular file" in (
        result.stdout
    ), result.stderr[-2000:]
    assert "REUSED None" in result.stdout


# ------------------------------------------------------------ 2. the bytes checked are used


def test_gpt2_files_are_rebuilt_from_the_r50k_bytes_that_were_checked(cache, monkeypatch):
    """r50k swapped for garbage right after its hash matched: the checked bytes are used."""
    r50k = cache / "r50k_base.tiktoken"
    pinned = assets.ASSETS["r50k_base"].sha256
    real_sha256 = store._sha256

    def hash_then_swap(data: bytes) -> str:
        digest = real_sha256(data)
        if digest == pinned:
            r50k.write_bytes(b"not base64 at all 0\n" * 10)
        return digest

    monkeypatch.setattr(store, "_sha256", hash_then_swap)
    paths = assets.fetch(["gpt2_vocab_bpe", "gpt2_encoder_json"], progress=False)
    for name in ("gpt2_vocab_bpe", "gpt2_encoder_json"):
        digest = hashlib.sha256(paths[name].read_bytes()).hexdigest()
        assert digest == assets.ASSETS[name].sha256


def test_read_verified_hands_on_the_bytes_it_checked(cache, monkeypatch):
    botchan = cache / "botchan.txt"
    good = botchan.read_bytes()
    real_sha256 = store._sha256

    def hash_then_swap(data: bytes) -> str:
        digest = real_sha256(data)
        botchan.write_bytes(b"x" * len(good))
        return digest

    monkeypatch.setattr(store, "_sha256", hash_then_swap)
    assert store._read_verified("botchan")[1] == good


# -------------------------------------------------------------- 3. credentials, per host


class Host:
    """An HTTP server on 127.0.0.1 (its own port: its own host for credentials)."""

    def __init__(self, credentials: tuple[str, str] | None = None, tls: Path | None = None):
        self.routes: dict[str, bytes | str] = {}  # path -> body, or "->url" for a redirect
        self.seen: list[tuple[str, str | None]] = []  # (path, Authorization)
        expected = None
        if credentials is not None:
            token = base64.b64encode(":".join(credentials).encode()).decode()
            expected = f"Basic {token}"
        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                auth = self.headers.get("Authorization")
                host.seen.append((self.path, auth))
                body = host.routes.get(self.path)
                if expected is not None and auth != expected:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="index"')
                    self.end_headers()
                elif body is None:
                    self.send_error(404)
                elif isinstance(body, str):
                    self.send_response(302)
                    self.send_header("Location", body)
                    self.end_headers()
                else:
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

            def log_message(self, format, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        if tls is not None:  # a folder holding a self-signed cert.pem and key.pem
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls / "cert.pem", tls / "key.pem")
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.url = self.url.replace("http://", "https://")
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def page(self, path: str, filename: str, href: str) -> None:
        self.routes[path] = f'<html><body><a href="{href}">{filename}</a></body></html>'.encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hosts(monkeypatch):
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    made: list[Host] = []

    def make(credentials=None, tls=None) -> Host:
        made.append(Host(credentials, tls))
        return made[-1]

    yield make
    for host in made:
        host.close()


DATA = b"pinned bytes\n" * 100
SHA = hashlib.sha256(DATA).hexdigest()
FILE = "demo-1.0-py3-none-any.whl"


def fetch_from(*index_urls: str) -> bytes:
    settings = download.IndexSettings(index_urls=index_urls, timeout=5)
    return download.fetch_pinned("demo", FILE, SHA, settings=settings)


def with_credentials(url: str, user: str = "alice", password: str = "s3cret") -> str:
    return url.replace("http://", f"http://{user}:{password}@")


def test_same_host_file_links_are_fetched_with_the_index_credentials(hosts):
    index = hosts(("alice", "s3cret"))
    index.page("/simple/demo/", FILE, f"../../files/{FILE}#sha256={SHA}")
    index.routes[f"/files/{FILE}"] = DATA
    assert fetch_from(with_credentials(index.url + "/simple")) == DATA
    alice = "Basic " + base64.b64encode(b"alice:s3cret").decode()
    assert (f"/files/{FILE}", alice) in index.seen


@pytest.mark.parametrize("what", ["page", "file"])
def test_credentials_are_not_forwarded_to_another_host(hosts, what):
    index, other = hosts(("alice", "s3cret")), hosts()
    other.routes[f"/files/{FILE}"] = DATA
    if what == "page":  # the index sends its page elsewhere
        index.routes["/simple/demo/"] = f"{other.url}/simple/demo/"
        other.page("/simple/demo/", FILE, f"../../files/{FILE}")
    else:  # the file link points back to the index, which redirects to a file host
        index.page("/simple/demo/", FILE, f"/files/{FILE}")
        index.routes[f"/files/{FILE}"] = f"{other.url}/files/{FILE}"
    assert fetch_from(with_credentials(index.url + "/simple")) == DATA
    assert other.seen and all(auth is None for _, auth in other.seen), other.seen


def test_a_redirect_to_another_index_gets_that_index_credentials(hosts):
    index, mirror = hosts(("alice", "s3cret")), hosts(("bob", "other"))
    index.page("/simple/demo/", FILE, f"/files/{FILE}")
    index.routes[f"/files/{FILE}"] = f"{mirror.url}/files/{FILE}"
    mirror.routes[f"/files/{FILE}"] = DATA
    urls = (with_credentials(index.url + "/simple"), with_credentials(mirror.url, "bob", "other"))
    assert fetch_from(*urls) == DATA
    alice = "Basic " + base64.b64encode(b"alice:s3cret").decode()
    assert mirror.seen[-1][1] == "Basic " + base64.b64encode(b"bob:other").decode()
    assert all(auth != alice for _, auth in mirror.seen)


def test_a_same_host_redirect_keeps_the_credentials(hosts):
    index = hosts(("alice", "s3cret"))
    index.routes["/simple/demo/"] = "/moved/demo/"
    index.page("/moved/demo/", FILE, f"/files/{FILE}")
    index.routes[f"/files/{FILE}"] = DATA
    assert fetch_from(with_credentials(index.url + "/simple")) == DATA


def test_trust_in_a_host_does_not_follow_its_redirects(hosts, tmp_path):
    """pip's --trusted-host skips certificate checks for that host, not for where it sends us."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a self-signed certificate")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem")]
        + ["-subj", "/CN=127.0.0.1"],
        check=True,
        capture_output=True,
    )
    index, other = hosts(tls=tmp_path), hosts(tls=tmp_path)
    index.page("/simple/demo/", FILE, f"/files/{FILE}")
    index.routes[f"/files/{FILE}"] = f"{other.url}/files/{FILE}"
    other.routes[f"/files/{FILE}"] = DATA
    trusted = (index.url.removeprefix("https://"),)
    settings = download.IndexSettings((index.url + "/simple",), trusted_hosts=trusted, timeout=5)
    with pytest.raises(download.DownloadError, match="CERTIFICATE_VERIFY_FAILED"):
        download.fetch_pinned("demo", FILE, SHA, settings=settings)
    assert index.seen[:2] == [("/simple/demo/", None), (f"/files/{FILE}", None)]
    assert other.seen == []  # the handshake failed: nothing was asked of the other host
    index.routes[f"/files/{FILE}"] = DATA  # served by the trusted host itself: fine
    assert download.fetch_pinned("demo", FILE, SHA, settings=settings) == DATA


PAIRS = [
    ("https://a.example/x", "https://b.example/x"),
    ("https://a.example/x", "https://a.example/y"),
    ("http://a.example/x", "https://a.example/x"),
    ("http://a.example:8080/x", "https://a.example/x"),
    ("https://a.example/x", "http://a.example/x"),
    ("https://a.example:443/x", "https://a.example/x"),
    ("http://127.0.0.1:8000/x", "http://127.0.0.1:8001/x"),
    ("https://A.example/x", "https://a.example/x"),
]


@pytest.mark.parametrize(("old", "new"), PAIRS)
def test_should_strip_auth_is_requests_rule(old, new):
    from pip._vendor.requests import Session  # the requests pip downloads with

    assert download.should_strip_auth(old, new) == Session().should_strip_auth(old, new)


# ------------------------------------------------------------- 4. temporaries left behind


def test_a_killed_write_leaves_a_temporary_the_next_run_removes(cache):
    """A process killed between writing its temporary and renaming it: the stray goes later."""
    result = run_python(
        f"""
        import os
        from pathlib import Path
        from tokcourse.course.data import store
        os.replace = lambda *args: os._exit(9)  # killed right before the rename
        store._write_atomic(Path({str(cache / "vocab.bpe")!r}), b"half a file")
        """,
        {"TOKCOURSE_CACHE_DIR": str(cache)},
    )
    assert result.returncode == 9, result.stderr
    strays = [p for p in cache.iterdir() if p.name.startswith(".vocab.bpe.")]
    assert len(strays) == 1
    assets.fetch(["botchan"], progress=False)  # any use of the store
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]


def test_only_stale_temporaries_of_ours_are_removed(cache):
    host = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    hour_ago = time.time() - 3600

    def make(name: str, *, old: bool = False) -> Path:
        p = cache / name
        p.write_bytes(b"partial")
        if old:
            os.utime(p, (hour_ago, hour_ago))
        return p

    ours = f".botchan.txt.tokcourse-tmp-{os.getpid()}-{uuid.uuid4().hex}-{host}"
    elsewhere = f".botchan.txt.tokcourse-tmp-999999999-{uuid.uuid4().hex}-00000000"
    keep = [
        make(ours),  # a live write of this process
        make(elsewhere),  # fresh, from another machine sharing the folder: may be live
        make(f".botchan.txt.{uuid.uuid4().hex}.tmp"),  # fresh, older naming
        make(f"0123abcd.{uuid.uuid4()}.tmp", old=True),  # tiktoken's own, not ours
        make(".notes", old=True),
    ]
    gone = [
        make(f".botchan.txt.tokcourse-tmp-{os.getpid()}-{uuid.uuid4().hex}-{host}", old=True),
        make(elsewhere.replace("-00000000", "-11111111"), old=True),
        make(f".botchan.txt.{uuid.uuid4().hex}.tmp", old=True),
        make(".tokcourse-write-test-abc123", old=True),
    ]
    assets.fetch(["botchan"], progress=False)
    assert all(p.exists() for p in keep), [p.name for p in keep if not p.exists()]
    assert not [p.name for p in gone if p.exists()]
