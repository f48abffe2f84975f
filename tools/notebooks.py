"""Notebook hygiene: the committed form of a chapter, and the cells every chapter starts with.

    python tools/notebooks.py normalize notebooks/*.ipynb   # strip outputs, fix metadata
    python tools/notebooks.py check notebooks/*.ipynb       # exit 1 if any would change

Committed notebooks carry no outputs or execution counts, the same minimal notebook metadata,
and cell metadata limited to tags. The first code cell installs the package on Colab only; its
repository URL must be the one in ``_config.yml`` (``make sync-url`` rewrites it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent

NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}
KEPT_CELL_METADATA = ("tags",)

COLAB_CELL = """\
# On Colab, install the course package first (this does nothing elsewhere).
import sys

if "google.colab" in sys.modules:
    import subprocess

    package = "tokcourse @ git+{url}"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", package], check=True
    )"""

SETUP_CELL = """\
from tokcourse.course.plotting import setup_notebook

setup_notebook()"""


def repository_url(root: Path = ROOT) -> str:
    """The repository URL from ``_config.yml``, the single place that names it."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"].rstrip("/")
    if not url.startswith("https://github.com/") or url.count("/") != 4:
        raise ValueError(f"repository.url must be https://github.com/<org>/<repo>, got {url!r}")
    return url


def colab_cell_source(url: str) -> str:
    return COLAB_CELL.format(url=url)


def normalize(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Return ``nb`` in committed form (modified in place)."""
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = nbformat.from_dict(NOTEBOOK_METADATA)
    for cell in nb.cells:
        cell.metadata = nbformat.from_dict(
            {k: cell.metadata[k] for k in KEPT_CELL_METADATA if cell.metadata.get(k)}
        )
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def committed_text(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return nbformat.writes(normalize(nb)) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in {"normalize", "check"}:
        print(__doc__)
        return 2
    command, paths = argv[0], [Path(p) for p in argv[1:]]
    dirty = []
    for path in paths:
        text = committed_text(path)
        if path.read_text(encoding="utf-8") != text:
            dirty.append(path)
            if command == "normalize":
                path.write_text(text, encoding="utf-8")
    verb = "normalized" if command == "normalize" else "would change"
    for path in dirty:
        print(f"{verb}: {path}")
    return 1 if (dirty and command == "check") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
