"""Copy ``repository.url`` from ``_config.yml`` everywhere else it has to appear.

Publishing your own copy of the course: change ``repository.url`` in ``_config.yml``, then run
``make sync-url``. This rewrites the Colab install cell of every notebook (Colab cannot read
``_config.yml`` before the package is installed) and every GitHub, Colab and Binder link to the
repository in the README and the book pages. ``tests/test_repo.py`` fails until they agree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tools.notebooks import ROOT, colab_cell_source, normalize, repository_url  # noqa: E402

# The places a link names the repository as <org>/<repo>.
LINK = re.compile(
    r"(?P<prefix>https://github\.com/|https://colab\.research\.google\.com/github/"
    r"|https://mybinder\.org/v2/gh/|git\+https://github\.com/)"
    r"(?P<slug>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)"
)
# The published book: https://<org>.github.io/<repo>/
PAGES = re.compile(r"https://(?P<org>[A-Za-z0-9_.-]+)\.github\.io/(?P<repo>[A-Za-z0-9_.-]+)")
INSTALLED = re.compile(r"git\+https://github\.com/(?P<slug>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)")


def text_files(root: Path) -> list[Path]:
    return [root / "README.md", root / "CONTRIBUTING.md", *sorted((root / "book").glob("*.md"))]


def rewrite_links(text: str, old_slug: str, new_slug: str) -> str:
    """Point links to ``old_slug`` at ``new_slug``; links to other projects stay as they are."""
    text = LINK.sub(lambda m: m["prefix"] + new_slug if m["slug"] == old_slug else m[0], text)
    org, repo = new_slug.split("/")
    return PAGES.sub(
        lambda m: (
            f"https://{org}.github.io/{repo}" if f"{m['org']}/{m['repo']}" == old_slug else m[0]
        ),
        text,
    )


def _first_code_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.cell_type == "code")


def sync(root: Path = ROOT) -> list[Path]:
    url = repository_url(root)
    slug = url.removeprefix("https://github.com/")
    notebooks = sorted((root / "notebooks").glob("*.ipynb"))
    # The slug the copy was last synced to: whatever the notebooks install from.
    old_slugs = {slug}
    for path in notebooks:
        m = INSTALLED.search(_first_code_cell(nbformat.read(path, as_version=4)).source)
        if m:
            old_slugs.add(m["slug"])
    changed = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        first_code = _first_code_cell(nb)
        new = colab_cell_source(url)
        if first_code.source != new:
            first_code.source = new
            path.write_text(nbformat.writes(normalize(nb)) + "\n", encoding="utf-8")
            changed.append(path)
    for path in text_files(root):
        old = path.read_text(encoding="utf-8")
        new = old
        for old_slug in old_slugs - {slug}:
            new = rewrite_links(new, old_slug, slug)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    for p in sync():
        print(f"updated {p.relative_to(ROOT)}")
