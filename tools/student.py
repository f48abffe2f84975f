"""The student edition: every chapter as a notebook that Jupyter, JupyterLab and Colab render.

    python tools/student.py                 # every chapter -> _build/student/NN_slug.ipynb
    python tools/student.py --out DIR       # somewhere else
    python tools/student.py notebooks/03_encode_decode.ipynb
    python tools/student.py --no-solutions --out DIR    # for graded work: no solution boxes

The chapters in ``notebooks/`` are written for the book (Jupyter Book): guard cells hidden with
``remove-cell``, exercises and solutions as MyST directives. A student opens a notebook, not the
book, so ``make student`` derives from each chapter the notebook a student works in:

* no guard cell (a code cell tagged ``remove-cell``), except the two cells every chapter starts
  with: the Colab install cell, kept exactly, and the plotting setup;
* every MyST construct rendered as Markdown (``tools/myst.py``): numbered exercise boxes, each
  solution collapsed with the reference code inlined as code that runs when pasted (what
  ``check.show_solution`` prints: the imports and helpers it needs, then the function), links
  that work, glued numbers as text;
* no outputs, no execution counts; cell metadata only what a notebook front end or the grader
  uses: the tags ``exercise-stub`` and ``exercise-check`` (the grader and the tests find
  exercises by them), ``jupyter.source_hidden`` / ``outputs_hidden`` where the book hides a
  cell's input or output, and on each of the chapter's own code cells ``tokcourse.course``, a
  fingerprint of its source: ``python -m tokcourse.grade`` runs only the definitions of such a
  cell while it is unchanged, and every line of the student's cells;
* notebook metadata: the kernel, and ``tokcourse.chapter`` (its two-digit number) so that
  ``python -m tokcourse.grade`` knows which chapter a submission is.

The chapters stay the single source: the edition is generated, never edited or committed. The
deploy workflow (``.github/workflows/ci.yml``) publishes it to the repository's ``student``
branch, where the Colab and Binder badges open it (``colab_url`` and ``binder_url`` below).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tokcourse.course.submission import course_mark  # noqa: E402
from tools import myst  # noqa: E402
from tools.notebooks import (  # noqa: E402
    NOTEBOOK_METADATA,
    ROOT,
    SETUP_CELL,
    colab_cell_source,
    repository_url,
)

OUT = ROOT / "_build" / "student"
#: Where the deploy workflow publishes the edition: this branch, this folder.
BRANCH, FOLDER = "student", "student"
STUB_TAG = "exercise-stub"
KEPT_TAGS = (STUB_TAG, "exercise-check")
HIDE_INPUT = {"hide-input", "remove-input", "hide-cell"}
HIDE_OUTPUT = {"hide-output", "remove-output", "hide-cell"}
CHAPTER_FILE = re.compile(r"^(\d\d)_[\w-]+\.ipynb$")


def book_url(repo: str) -> str:
    """The published book of ``https://github.com/org/repo``: ``https://org.github.io/repo/``."""
    org, name = repo.removeprefix("https://github.com/").split("/")
    return f"https://{org}.github.io/{name}/"


def colab_url(repo: str, notebook: str) -> str:
    """Where Colab opens the student edition of chapter file ``notebook`` (a name)."""
    slug = repo.removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{slug}/blob/{BRANCH}/{FOLDER}/{notebook}"


def binder_url(repo: str, notebook: str) -> str:
    """Where Binder opens the student edition of chapter file ``notebook`` (a name)."""
    slug = repo.removeprefix("https://github.com/")
    return f"https://mybinder.org/v2/gh/{slug}/{BRANCH}?urlpath=lab/tree/{FOLDER}/{notebook}"


def chapter_files(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / "notebooks").glob("*.ipynb") if CHAPTER_FILE.match(p.name))


def labels(root: Path = ROOT) -> dict[str, tuple[str, str]]:
    """Every label a ``{ref}`` can name: ``{label: (href from a student notebook, text)}``.

    Exercise labels read "Exercise 3.2" and link to the exercise's anchor; section labels
    (``(name)=`` before a heading) read as that heading; labels in the book's pages link to
    the published page.
    """
    found: dict[str, tuple[str, str]] = {}
    for path in chapter_files(root):
        chapter = int(path.name[:2])
        nb = nbformat.read(path, as_version=4)
        k = 0
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            lines = cell.source.split("\n")
            for i, line in enumerate(lines):
                if re.match(r"^:{3,}\{exercise\}", line):
                    k += 1
                    label = next(
                        (m[1] for m in map(re.compile(r"^:label:\s*(\S+)").match, lines[i:]) if m),
                        None,
                    )
                    if label:
                        found[label] = (f"{path.name}#{label}", f"Exercise {chapter}.{k}")
                target = myst.TARGET.match(line)
                if target:
                    heading = next((x for x in lines[i + 1 :] if x.strip()), "")
                    text = heading.lstrip("#").strip() or target["label"]
                    found[target["label"]] = (f"{path.name}#{target['label']}", text)
    url = book_url(repository_url(root))
    for page in sorted((root / "book").glob("*.md")):
        lines = page.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            target = myst.TARGET.match(line)
            if target:
                heading = next((x for x in lines[i + 1 :] if x.strip()), "")
                text = heading.lstrip("#").strip() or target["label"]
                href = f"{url}book/{page.stem}.html#{target['label']}"
                found[target["label"]] = (href, text)
    return found


def glued_values(nb: nbformat.NotebookNode) -> dict[str, dict[str, str]]:
    """``{name: {mime type: data}}`` of every value an executed notebook glued (myst-nb)."""
    values: dict[str, dict[str, str]] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook", {})
            if scrapbook.get("name"):
                # glue(..., display=False) files the value under a prefixed mime type
                prefix = scrapbook.get("mime_prefix", "")
                values[scrapbook["name"]] = {
                    key.removeprefix(prefix): data for key, data in output.get("data", {}).items()
                }
    return values


GLUE_ROLE = re.compile(r"\{glue(:\w*)?\}`")


def needs_glue(nb: nbformat.NotebookNode) -> bool:
    return any(c.cell_type == "markdown" and GLUE_ROLE.search(c.source) for c in nb.cells)


def executed(path: Path) -> nbformat.NotebookNode:
    """The chapter with the outputs of its run in the book's execution cache (run it if not)."""
    from tools import prebuild

    nb = nbformat.read(path, as_version=4)
    for attempt in range(2):
        merged = prebuild.cached_outputs(path)
        if merged is not None:
            return merged
        if attempt == 0:
            prebuild.main(["--jobs", "1", str(path)])
    raise RuntimeError(f"{path.name} failed to run (the report is above); fix it first")
    return nb  # pragma: no cover


def student_edition(
    path: Path,
    *,
    root: Path = ROOT,
    all_labels: dict[str, tuple[str, str]] | None = None,
    glue: dict[str, dict[str, str]] | None = None,
    solutions: bool = True,
) -> nbformat.NotebookNode:
    """The student edition of the chapter at ``path`` (see the module's docstring)."""
    match = CHAPTER_FILE.match(path.name)
    if match is None:
        raise ValueError(f"{path.name} is not a chapter file (NN_slug.ipynb)")
    source = nbformat.read(path, as_version=4)
    repo = repository_url(root)
    if glue is None:
        glue = glued_values(executed(path)) if needs_glue(source) else {}
    ctx = myst.Context(
        filename=path.name,
        solution_names=solution_names(source),
        solution_code=_solution_code,
        solutions=solutions,
        chapter=int(match[1]),
        folder=path.parent,
        labels=labels(root) if all_labels is None else all_labels,
        book_url=book_url(repo),
        repo_url=repo,
        repo_root=root,
        glue=glue,
    )
    keep_always = {colab_cell_source(repo), SETUP_CELL}
    cells = []
    for cell in source.cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type == "code":
            if "remove-cell" in tags and cell.source not in keep_always:
                continue
            new = nbformat.v4.new_code_cell(cell.source)
            kept = [t for t in KEPT_TAGS if t in tags]
            if kept:
                new.metadata["tags"] = kept
            if STUB_TAG not in tags:  # the chapter's own code: the grader runs only its defs
                new.metadata["tokcourse"] = {"course": course_mark(cell.source)}
            hidden = {
                key: True
                for key, names in (("source_hidden", HIDE_INPUT), ("outputs_hidden", HIDE_OUTPUT))
                if tags & names
            }
            if hidden:
                new.metadata["jupyter"] = hidden
        elif cell.cell_type == "markdown":
            if "remove-cell" in tags:
                continue
            box = PLAYGROUND_BOX.search(cell.source)
            if box:  # the web page's live tokenizer box: a cell to edit and run instead
                cells += try_it(box)
                continue
            try:
                new = nbformat.v4.new_markdown_cell(myst.convert(cell.source, ctx))
            except myst.MystError as err:
                raise myst.MystError(f"{path.name}: {err}") from err
        else:
            new = nbformat.v4.new_raw_cell(cell.source)
        cells.append(new)
    edition = nbformat.v4.new_notebook(cells=cells)
    edition.metadata = nbformat.from_dict(
        {**NOTEBOOK_METADATA, "tokcourse": {"chapter": match[1], "edition": "student"}}
    )
    _number_cell_ids(edition, match[1])
    return edition


def solution_names(nb: nbformat.NotebookNode) -> dict[str, str]:
    """``{exercise label: function name}``: each exercise's label, and the ``def`` of the first
    stub cell after it."""
    found: dict[str, str] = {}
    pending: list[str] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            pending += re.findall(r"^:{3,}\{exercise\}.*\n(?::[\w-]+:.*\n)*?:label:\s*(\S+)",
                                  cell.source, re.M)  # fmt: skip
        elif STUB_TAG in cell.metadata.get("tags", []) and pending:
            name = re.search(r"^def (\w+)\(", cell.source, re.M)
            if name:
                found[pending.pop(0)] = name[1]
    return found


def _solution_code(name: str) -> str:
    from tokcourse import check

    return check.solution_code(name)


#: A chapter's live tokenizer box (``book/_ext/tokcourse_playground.py`` makes it work on the
#: web page; a notebook front end shows nothing of it).
PLAYGROUND_BOX = re.compile(
    r'<div class="tokcourse-playground"[^>]*?data-encodings="(?P<encodings>[^"]+)"'
    r'[^>]*?data-text="(?P<text>[^"]*)"[^>]*>.*?</div>',
    re.S,
)


def try_it(box: re.Match) -> list[nbformat.NotebookNode]:
    """The box as a paragraph and a code cell that shows the same text's tokens, to edit."""
    import html

    text = html.unescape(box["text"])
    names = [ENCODING_NAMES.get(e, e) for e in box["encodings"].split()]
    intro = (
        f"**Try it.** Change the text in the next cell and run it: its tokens under "
        f"{', '.join(names[:-1])} and {names[-1]}, one row each (hover a token for its id "
        "and bytes). Try a word and its capitalised form, a long number, indented code, a "
        "trailing space."
    )
    code = (
        "from tokcourse.course.viz import show_tokens\n\n"
        f"text = {text!r}\n"
        f"show_tokens(text, {tuple(box['encodings'].split())!r})"
    )
    cell = nbformat.v4.new_code_cell(code)
    cell.metadata["tokcourse"] = {"course": course_mark(code)}
    return [nbformat.v4.new_markdown_cell(intro), cell]


ENCODING_NAMES = {"r50k_base": "GPT-2", "cl100k_base": "GPT-4", "o200k_base": "GPT-4o"}


def _number_cell_ids(nb: nbformat.NotebookNode, chapter: str) -> None:
    """Stable cell ids, so that generating the edition twice gives the same file."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"ch{chapter}-{i:03d}"


def write_all(
    out: Path = OUT, paths: list[Path] | None = None, root: Path = ROOT, solutions: bool = True
) -> list[Path]:
    """Write the student edition of each chapter (default: all) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    all_labels = labels(root)
    written = []
    for path in paths or chapter_files(root):
        target = out / path.name
        edition = student_edition(path, root=root, all_labels=all_labels, solutions=solutions)
        text = nbformat.writes(edition) + "\n"
        tmp = target.with_suffix(".ipynb.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)  # atomic: a reader never sees half a notebook
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", type=Path, help="chapter notebooks (default all)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder (default {OUT})")
    parser.add_argument(
        "--no-solutions",
        action="store_true",
        help="leave the solution boxes out (for graded work; the package still holds the code)",
    )
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.chapters] or None
    written = write_all(args.out, paths, solutions=not args.no_solutions)
    where = args.out.resolve()
    print(f"student edition: {len(written)} chapters in {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
