"""The package's shape: dependencies point one way, no module is too long to read.

The import graph is read statically from every module's source: every ``import`` and
``from ... import`` anywhere in the file (at the top, inside functions, under
``if TYPE_CHECKING:``), plus the modules the package loads by name (``tokcourse.check`` and
friends via ``tokcourse.__getattr__``, the topic modules ``check`` discovers). A circle of
lazy imports is still a circle: it is what makes a module impossible to read or test alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "tokcourse"

#: No module over ~500 lines: the engine of the checks sits right at it.
MAX_LINES = 500


def module_files(src: Path, package: str = PACKAGE) -> dict[str, Path]:
    """{dotted module name: file} for every module of ``package`` under ``src``."""
    found = {}
    for file in sorted((src / package).rglob("*.py")):
        parts = file.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = file
    return found


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module name of ``from <node.module> import ...`` written in ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _dynamic_imports(name: str, tree: ast.Module, modules: dict[str, Path]) -> set[str]:
    """Modules loaded by name: ``tokcourse.__getattr__``'s table, ``check``'s discovery."""
    found: set[str] = set()
    for node in ast.walk(tree):
        # _COURSE_MODULES = {"assets": "tokcourse.course.data.assets", ...} in tokcourse/__init__.py
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_COURSE_MODULES" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            for value in node.value.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.add(value.value)
        # importlib.import_module("tokcourse.x") with a literal name
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(node.args[0].value)
    if name == f"{PACKAGE}.course.check":  # pkgutil discovery of every topic module
        found |= {m for m in modules if m.startswith(f"{PACKAGE}.course.checks.")}
    return found & set(modules)


def import_graph(src: Path = SRC, package: str = PACKAGE) -> dict[str, set[str]]:
    """{module: the package's modules it imports}, from every import statement in its source."""
    modules = module_files(src, package)
    graph: dict[str, set[str]] = {}
    for name, file in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
        is_package = file.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = alias.name
                    while target and target not in modules:
                        target = target.rpartition(".")[0]
                    if target:
                        edges.add(target)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:  # from tokcourse import bpe
                        edges.add(f"{base}.{alias.name}")
                    elif base in modules:  # from tokcourse.bpe import merge
                        edges.add(base)
        edges |= _dynamic_imports(name, tree, modules)
        edges.discard(name)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (``[a, b, ..., a]``), or None when the graph has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_package_has_no_import_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


#: ``python -m tokcourse.grade`` is the grader's command line (``tokcourse.course.grader``): it
#: sits on the tokenizer's floor only so that instructors type a short name.
COMMAND_LINES = {f"{PACKAGE}.grade"}


def test_the_tokenizer_never_imports_the_course_machinery():
    graph = import_graph()
    for name, edges in graph.items():
        if name.startswith(f"{PACKAGE}.course") or name == PACKAGE or name in COMMAND_LINES:
            continue
        course = sorted(e for e in edges if e.startswith(f"{PACKAGE}.course"))
        assert not course, f"{name} imports course machinery {course}"


DATA = f"{PACKAGE}.course.data"
DATA_MODULES = {"assets", "corpora", "download", "gpt2_files", "sources", "store", "tiktoken_cache"}


def test_the_data_layer_has_a_room_of_its_own():
    # Offline data (pinned files, the cache, the download, the corpora) is one subpackage: it uses
    # the tokenizer and itself, never a chapter helper, and no data module sits among the helpers.
    graph = import_graph()
    data = {name for name in graph if name.startswith(f"{DATA}.")}
    assert data == {f"{DATA}.{m}" for m in DATA_MODULES}
    assert not {f"{PACKAGE}.course.{m}" for m in DATA_MODULES} & set(graph)
    for name in data | {DATA}:
        helpers = sorted(
            e for e in graph[name] if e.startswith(f"{PACKAGE}.course") and not e.startswith(DATA)
        )
        assert not helpers, f"{name} imports course helpers {helpers}"


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    # top-level relative import, function-local import, the lazy tokcourse.check, discovery
    assert "tokcourse.bpe" in graph["tokcourse.basic"]
    assert "tokcourse.bpe" in graph["tokcourse.course.forest"]  # inside merge_tree_layout
    assert "tokcourse.course.check" in graph["tokcourse"]
    assert "tokcourse.course.data.assets" in graph["tokcourse"]
    assert "tokcourse.course.checks.fast" in graph["tokcourse.course.check"]


LAZY_CIRCLE = {
    # the shape of the old tokenizer <-> fast_encode <-> stream circle: lazy on one side
    "pkg/__init__.py": "",
    "pkg/tokenizer.py": (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .fast_encode import FastEncoder\n"
        "def encode_iterable(self):\n    from .stream import encode_iterable\n"
    ),
    "pkg/fast_encode.py": "import regex\n",
    "pkg/stream.py": "from .fast_encode import FastEncoder\nfrom .tokenizer import _fix\n",
}


def test_a_circle_through_a_function_local_import_is_found(tmp_path):
    for rel, text in LAZY_CIRCLE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    cycle = find_cycle(import_graph(tmp_path, "pkg"))
    assert cycle == ["pkg.stream", "pkg.tokenizer", "pkg.stream"]


@pytest.mark.parametrize("name", sorted(module_files(SRC)), ids=str)
def test_no_module_is_too_long_to_read(name):
    lines = len(module_files(SRC)[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most {MAX_LINES}): split it"
