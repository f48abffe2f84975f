"""The numbers the book's front pages state, read from the files that decide them.

The landing page (``book/index.md``), ``book/setup.md`` and ``book/claims.md`` are executed
MyST notebooks: a hidden cell of each calls these functions and glues the results into the
prose (``tokcourse.course.prose.glue``), so no number on those pages is typed by hand. Each
function reads one source of truth: the table of contents, ``pyproject.toml``,
``constraints.txt``, the ``Makefile``, the chapters, or a test file of the suite (read as
Python source, never imported: a test module's constants are the sizes of the run that
``make test`` does, whatever the environment of the build says).

    >>> python_floor()
    '3.11'
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

#: The reading speed of the estimate: myst-parser's own (``MdParserConfig.words_per_minute``),
#: read at run time by :func:`words_per_minute`; this is only its documented default.
DEFAULT_WORDS_PER_MINUTE = 200
#: Minutes allowed for one exercise in the time estimate: an allowance, not a measurement
#: (a short function takes less, a capstone stage more). The landing page says so.
MINUTES_PER_EXERCISE = 15

STUB_TAG = "exercise-stub"
HIDDEN = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


# ---------------------------------------------------------------------------- the book


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapters (notebooks) the table of contents lists, in book order."""
    from tools import prebuild

    return prebuild.chapters(root)


def parts(root: Path = ROOT) -> list[str]:
    """The captions of the table of contents' parts that hold chapters."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return [
        part["caption"]
        for part in toc.get("parts", [])
        if any(str(c.get("file", "")).startswith("notebooks/") for c in part.get("chapters", []))
    ]


def python_floor(root: Path = ROOT) -> str:
    """The oldest Python the package supports: ``requires-python = ">=3.11"`` gives "3.11"."""
    spec = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    match = re.fullmatch(r">=\s*(\d+\.\d+)", spec["project"]["requires-python"].strip())
    if match is None:
        raise ValueError(f"requires-python is not of the form >=X.Y: {spec['project']!r}")
    return match[1]


def extras(root: Path = ROOT) -> dict[str, list[str]]:
    """The package's optional dependency groups, as ``pyproject.toml`` declares them."""
    spec = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return spec["project"].get("optional-dependencies", {})


def pins(root: Path = ROOT) -> dict[str, str]:
    """``{package: version}`` of every line of ``constraints.txt`` (names lower-cased)."""
    found = {}
    for line in (root / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        if not sep:
            raise ValueError(f"constraints.txt: not a pin: {line!r}")
        found[re.sub(r"[-_.]+", "-", name.strip().lower())] = version.strip()
    return found


def binder_python(root: Path = ROOT) -> str:
    """The Python version ``environment.yml`` gives Binder: ``python=3.11`` gives "3.11"."""
    env = yaml.safe_load((root / "environment.yml").read_text(encoding="utf-8"))
    for dep in env["dependencies"]:
        if isinstance(dep, str) and re.fullmatch(r"python\s*=+\s*[\d.]+", dep):
            return re.split(r"=+", dep, maxsplit=1)[1].strip()
    raise ValueError("environment.yml names no python=X.Y")


def make_variable(name: str, root: Path = ROOT) -> str:
    """The default of a ``NAME ?= value`` (or ``NAME := value``) line of the ``Makefile``."""
    text = (root / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(name)}\s*[?:]?=\s*(\S+)", text, re.M)
    if match is None:
        raise ValueError(f"the Makefile sets no {name}")
    return match[1]


def make_env(target: str, variable: str, root: Path = ROOT) -> str:
    """The value a ``Makefile`` recipe gives an environment variable: ``VAR=value $(PYTEST)``."""
    text = (root / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    if recipe is None:
        raise ValueError(f"the Makefile has no target {target}")
    match = re.search(rf"\b{re.escape(variable)}=(\S+)", recipe[1])
    if match is None:
        raise ValueError(f"make {target} does not set {variable}")
    return match[1]


# ---------------------------------------------------------------------------- reading time


@dataclass(frozen=True)
class Chapter:
    """What a reader of one chapter reads and does."""

    path: Path
    words: int  # prose and visible code, whitespace-separated
    exercises: int

    @property
    def number(self) -> str:
        return self.path.name[:2]


_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_ROLE = re.compile(r"\{[\w:-]+\}`")
_DIRECTIVE_LINE = re.compile(r"^\s*(:{3,}|`{3,})\{?[\w-]*\}?.*$|^\s*:[\w-]+:.*$", re.M)


def visible_words(source: str) -> int:
    """Words a reader reads in a cell: no link targets, role names or directive markup."""
    text = _DIRECTIVE_LINE.sub(" ", source)
    text = _LINK_TARGET.sub("] ", _ROLE.sub("`", text))
    return len(text.split())


def chapter(path: Path) -> Chapter:
    """The words a reader sees in ``path`` (markdown and code not hidden) and its exercises."""
    nb = nbformat.read(path, as_version=4)
    words = exercises = 0
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if STUB_TAG in tags:
            exercises += 1
        if cell.cell_type == "markdown" or (cell.cell_type == "code" and not tags & HIDDEN):
            words += visible_words(cell.source)
    return Chapter(path, words, exercises)


def chapter_title(path: Path) -> str:
    """The title of a chapter: its first markdown cell's ``# heading``."""
    nb = nbformat.read(path, as_version=4)
    first = next(c.source for c in nb.cells if c.cell_type == "markdown")
    match = re.match(r"#\s+(.+)", first)
    if match is None:
        raise ValueError(f"{path.name} does not start with a # title")
    return match[1].strip()


def words_per_minute() -> int:
    """The reading speed myst-parser uses for its own reading-time estimate."""
    try:
        from myst_parser.config.main import MdParserConfig
    except ImportError:  # outside the book's toolchain
        return DEFAULT_WORDS_PER_MINUTE
    return int(MdParserConfig().words_per_minute)


# ---------------------------------------------------------------------------- the test suite


class NotFound(LookupError):
    """The test file no longer has what a page's sentence reads from it."""


def _tree(file: str | Path) -> tuple[Path, ast.Module]:
    path = file if isinstance(file, Path) else TESTS / file
    return path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _function(tree: ast.Module, name: str, path: Path) -> ast.FunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise NotFound(f"{path.name} has no function {name}")


def _assignment(body: Iterable[ast.stmt], name: str) -> ast.expr | None:
    for node in body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node.value
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id == name and node.value is not None:
                return node.value
    return None


def _imported_from(tree: ast.Module, name: str, path: Path) -> Path | None:
    """The test module a ``from ._parity import NAME`` (or ``tests._parity``) brings it from."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            module = (node.module or "").removeprefix("tests.").lstrip(".")
            if node.level or (node.module or "").startswith("tests."):
                return path.parent / f"{module.replace('.', '/')}.py"
    return None


_OPERATORS = {
    ast.Add: "__add__",
    ast.Sub: "__sub__",
    ast.Mult: "__mul__",
    ast.FloorDiv: "__floordiv__",
}
_FUNCTIONS = {"min": min, "max": max, "len": len, "int": int}


def _evaluate(node: ast.expr, path: Path, env: dict[str, str]) -> Any:
    """The value of a constant expression in a test file, the environment being ``env``."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    if isinstance(node, ast.Name):
        return constant(path, node.id, env=env)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left, path, env), _evaluate(node.right, path, env)
        return getattr(left, _OPERATORS[type(node.op)])(right)
    if isinstance(node, ast.Call) and not node.keywords:
        function = ast.unparse(node.func)
        if function in _FUNCTIONS:
            return _FUNCTIONS[function](*(_evaluate(a, path, env) for a in node.args))
        # os.environ.get("NAME", "300"): the run's setting, else the default
        if function == "os.environ.get" and len(node.args) == 2:
            return env.get(ast.literal_eval(node.args[0]), ast.literal_eval(node.args[1]))
    raise NotFound(f"{path.name}: not a constant expression: {ast.unparse(node)}")


def constant(
    file: str | Path, name: str, *, function: str | None = None, env: dict[str, str] | None = None
) -> Any:
    """The value ``name`` is assigned in a test file (at module level, or in ``function``).

    A name imported from another test module is followed there. ``os.environ.get(VAR,
    default)`` is ``env[VAR]`` if given, else the default: with no ``env``, the size of a plain
    ``make test`` run, whatever the environment of the caller.

    >>> constant("_parity.py", "ENCODINGS")
    ['r50k_base', 'cl100k_base', 'o200k_base']
    >>> constant("_parity.py", "PARITY_EXAMPLES", env={"TOKCOURSE_PARITY_EXAMPLES": "7"})
    7
    """
    env = {} if env is None else env
    path, tree = _tree(file)
    body = _function(tree, function, path).body if function else tree.body
    node = _assignment(body, name)
    if node is None and function is None:
        source = _imported_from(tree, name, path)
        if source is not None:
            return constant(source, name, env=env)
    if node is None:
        where = f"function {function}" if function else "module"
        raise NotFound(f"{path.name}: no assignment to {name} in its {where}")
    return _evaluate(node, path, env)


def call_argument(file: str | Path, function: str, callee: str, arg: int | str = 0) -> Any:
    """An argument of the first call to ``callee`` in ``function`` of a test file: by position,
    or by keyword (``max_bytes`` in ``python_code(max_bytes=400_000)``)."""
    path, tree = _tree(file)
    for node in ast.walk(_function(tree, function, path)):
        if not isinstance(node, ast.Call):
            continue
        name = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        if name != callee:
            continue
        if isinstance(arg, int) and arg < len(node.args):
            return _evaluate(node.args[arg], path, {})
        for keyword in node.keywords:
            if keyword.arg == arg:
                return _evaluate(keyword.value, path, {})
    raise NotFound(f"{path.name}: {function} has no call {callee}(...) with argument {arg!r}")


def parametrized(file: str | Path, function: str, argname: str) -> list[Any]:
    """The values of ``@pytest.mark.parametrize(argname, [...])`` on a test function."""
    path, tree = _tree(file)
    for decorator in _function(tree, function, path).decorator_list:
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("parametrize"):
            names, values = decorator.args[:2]
            if ast.literal_eval(names) == argname:
                return list(_evaluate(values, path, {}))
    raise NotFound(f"{path.name}: {function} is not parametrized over {argname}")


def tests_exist(*names: str) -> bool:
    """Every named test file (``test_parity.py``) is in ``tests/``."""
    return all((TESTS / name).is_file() for name in names)


def test_files_named(text: str) -> list[str]:
    """The test files a page names as code: ``test_parity.py`` in backquotes."""
    return re.findall(r"`(test_\w+\.py)`", text)


# ---------------------------------------------------------------------------- wording


def in_words(values: Iterable[Any], fmt: str = ",") -> str:
    """``[1000, 4000, 8000]`` as "1,000, 4,000 and 8,000"."""
    shown = [format(v, fmt) for v in values]
    if not shown:
        raise ValueError("nothing to list")
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
