"""MyST Markdown turned into the Markdown that Jupyter, JupyterLab and Colab render.

The book's chapters are written for Jupyter Book: ``:::{exercise}`` boxes, ``{solution}``
dropdowns whose code is a ``{literalinclude}`` of the package, admonitions, ``{ref}`` and
``{doc}`` roles, glued numbers. A notebook front end shows all of that as raw text. This module
rewrites one markdown cell at a time (``tools/student.py`` drives it for a whole chapter):

* ``{exercise}``: an anchor and a block quote titled "Exercise 3.2" (numbered per chapter, as
  the book numbers them);
* ``{solution}``: a collapsed ``<details>`` block titled "Solution to Exercise 3.2", with the
  code that ``{literalinclude}`` shows in the book inlined;
* ``{literalinclude}`` anywhere: a fenced code block holding the lines it names;
* admonitions (``note``, ``warning``, ``tip``, ``admonition`` and the like): a titled block
  quote, or a ``<details>`` block when their class is ``dropdown``;
* ``(label)=`` targets: an HTML anchor; ``{ref}`` and ``{doc}``: links to the other student
  notebooks or to the published book; ``{term}``: the plain word; ``{glue}`` roles: the value
  the executed chapter glued.

Anything else that looks like MyST (an unknown directive or role) raises ``MystError``: a new
construct must be taught here before a chapter can use it, never shown raw to a student.
"""

from __future__ import annotations

import ast
import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
}

FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
DIRECTIVE_INFO = re.compile(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")
TARGET = re.compile(r"^\((?P<label>[\w.:-]+)\)=\s*$")
# A role, or a code span (which may contain "{L}`" and is left alone), whichever starts first.
INLINE = re.compile(
    r"(?P<role>\{(?P<name>[a-z][\w:-]*)\}(?P<ticks>`+)(?P<content>.+?)(?P=ticks)(?!`))"
    r"|(?P<code>(?P<cticks>`+).+?(?P=cticks)(?!`))",
    re.S,
)
RELATIVE_LINK = re.compile(r"\]\((?P<target>(?![a-z][\w+.-]*:|#|/)[^)\s]+)\)")
SIBLING_NOTEBOOK = re.compile(r"^\d\d_[\w-]+\.ipynb(#.*)?$")


#: The sentence of an exercise that says how to print its solution.
SHOW_SOLUTION = re.compile(
    r"\s*(?:In Colab, Binder or any\s+Jupyter, )?`check\.show_solution\(\"\w+\"\)`\s+prints\s+"
    r"(?:the|its)\s[^.]*\."
)


class MystError(ValueError):
    """A MyST construct the student edition cannot render (named in the message)."""


@dataclass
class Context:
    """What a conversion needs to know beyond the cell: set up by ``tools/student.py``.

    ``chapter``: the chapter's number (``3`` for ``03_encode_decode``); ``folder``: the
    notebook's folder, for the paths of ``{literalinclude}``; ``labels``: every label of the
    book, ``{label: (href, text)}``; ``book_url``: the published book, to link pages that are
    not notebooks; ``repo_url``: the repository, to link any other file; ``glue``: the values the
    executed chapter glued, ``{name: {mime type: data}}``; ``exercises``: filled in as the
    exercises of the chapter are met, ``{label: number in the chapter}``.
    """

    chapter: int
    folder: Path
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)
    book_url: str = ""
    repo_url: str = ""
    repo_root: Path | None = None
    glue: dict[str, dict[str, str]] = field(default_factory=dict)
    exercises: dict[str, int] = field(default_factory=dict)
    filename: str = ""
    #: ``{exercise label: the function it asks for}``, and that function's reference solution
    #: as code that runs on its own (imports and helpers included): a solution shows it first.
    solution_names: dict[str, str] = field(default_factory=dict)
    solution_code: Callable[[str], str] | None = None
    solutions: bool = True

    def exercise_title(self, label: str) -> str:
        if label not in self.exercises:
            raise MystError(f"a solution refers to exercise {label!r}, not met before it")
        return f"Exercise {self.chapter}.{self.exercises[label]}"


# --- block structure ---------------------------------------------------------------------------


@dataclass
class Block:
    """A fenced block: a directive (``name`` set) or plain code (``name`` None)."""

    fence: str
    info: str
    lines: list[str]
    name: str | None = None
    arg: str = ""
    options: dict[str, str] = field(default_factory=dict)


def _closes(line: str, fence: str) -> bool:
    stripped = line.rstrip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]} and fence[0] in "`~:"


def parse(lines: list[str]) -> list[str | Block]:
    """Split markdown lines into text lines and fenced blocks (nested blocks stay inside)."""
    out: list[str | Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None or (match["fence"][0] == ":" and not match["info"].startswith("{")):
            out.append(lines[i])
            i += 1
            continue
        fence, info = match["fence"], match["info"].strip()
        end = _block_end(lines, i + 1, fence)
        block = Block(fence, info, lines[i + 1 : end])
        directive = DIRECTIVE_INFO.match(info)
        if directive:
            block.name, block.arg = directive["name"], directive["arg"].strip()
            body = block.lines
            while body and (option := OPTION.match(body[0])):
                block.options[option["key"]] = option["value"].strip()
                body = body[1:]
            block.lines = body
        out.append(block)
        i = end + 1
    return out


def _block_end(lines: list[str], start: int, fence: str) -> int:
    """The index of the line closing a block opened with ``fence`` (nested blocks skipped)."""
    i = start
    while i < len(lines):
        if _closes(lines[i], fence):
            return i
        nested = FENCE.match(lines[i])
        if (
            nested
            and nested["info"].strip()
            and not (nested["fence"][0] == ":" and not nested["info"].strip().startswith("{"))
        ):
            i = _block_end(lines, i + 1, nested["fence"]) + 1
            continue
        i += 1
    raise MystError(f"a block opened with {fence!r} is never closed")


# --- rendering ---------------------------------------------------------------------------------


def convert(source: str, ctx: Context) -> str:
    """One markdown cell of a chapter, as plain Markdown (see the module's docstring)."""
    return "\n".join(_render(parse(source.split("\n")), ctx)).strip("\n")


def _render(items: list[str | Block], ctx: Context) -> list[str]:
    out: list[str] = []
    text: list[str] = []

    def flush() -> None:
        if text:
            out.extend(_inline("\n".join(text), ctx).split("\n"))
            text.clear()

    for item in items:
        if isinstance(item, str):
            target = TARGET.match(item)
            if target:
                flush()
                out.append(f'<a id="{target["label"]}"></a>')
            else:
                text.append(item)
            continue
        flush()
        out.extend(_block(item, ctx))
    flush()
    return out


def _trim(lines: list[str]) -> list[str]:
    """Without the blank lines at either end."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _quote(lines: list[str]) -> list[str]:
    return [f"> {line}" if line.strip() else ">" for line in lines]


def _details(summary: str, body: list[str]) -> list[str]:
    # Markdown is not read inside <summary>: its code spans become <code>. The blank lines let
    # Jupyter and Colab render the Markdown of the body inside the HTML block.
    summary = re.sub(r"`([^`]+)`", lambda m: f"<code>{html.escape(m[1])}</code>", summary)
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def _block(block: Block, ctx: Context) -> list[str]:
    if block.name is None:  # plain code: kept exactly
        return [f"{block.fence}{block.info}", *block.lines, block.fence]
    body = lambda: _trim(_render(parse(block.lines), ctx))  # noqa: E731 (rendered on demand)
    name, klass = block.name, block.options.get("class", "").split()
    _no_unknown_options(block)
    if name == "exercise":
        label = block.options.get("label")
        if not label:
            raise MystError("an exercise without a :label:")
        ctx.exercises[label] = len(ctx.exercises) + 1
        title = ctx.exercise_title(label) + (f": {_inline(block.arg, ctx)}" if block.arg else "")
        lines = body()
        if not ctx.solutions:  # an edition for graded work does not point at the answer
            lines = SHOW_SOLUTION.sub("", "\n".join(lines)).rstrip().split("\n")
        return [f'<a id="{label}"></a>', "", *_quote([f"**{title}**", "", *lines])]
    if name == "solution":
        title = f"Solution to {ctx.exercise_title(block.arg)}"
        if not ctx.solutions:
            return []
        items = _runnable_solution(parse(block.lines), block.arg, ctx)
        return _details(title, _trim(_render(items, ctx)))
    if name == "literalinclude":
        return _literalinclude(block, ctx)
    if name == "admonition" or name in ADMONITIONS:
        title = _inline(block.arg, ctx) if name == "admonition" else ADMONITIONS[name]
        if name == "admonition" and not title:
            raise MystError("an admonition without a title")
        if "dropdown" in klass:
            return _details(title, body())
        return _quote([f"**{title}**", "", *body()])
    raise MystError(f"unknown directive {{{name}}}: teach tools/myst.py to render it")


KNOWN_OPTIONS = {
    "exercise": {"label", "class", "nonumber"},
    "solution": {"label", "class"},
    "literalinclude": {"language", "pyobject", "lines", "dedent"},
}


def _no_unknown_options(block: Block) -> None:
    known = KNOWN_OPTIONS.get(block.name or "", {"class", "name"})
    unknown = set(block.options) - known
    if unknown:
        raise MystError(f"{{{block.name}}} option(s) {sorted(unknown)} not supported here")


def _runnable_solution(items: list[str | Block], label: str, ctx: Context) -> list[str | Block]:
    """A solution's code as code a student can paste and run: the first ``literalinclude``
    becomes the standalone solution (its imports and helpers, then the function); a later one
    stays only if it shows an object the standalone code does not define."""
    name = ctx.solution_names.get(label)
    if name is None or ctx.solution_code is None:
        return items
    code = ctx.solution_code(name).rstrip("\n")
    out: list[str | Block] = []
    placed = False
    for item in items:
        if isinstance(item, Block) and item.name == "literalinclude":
            if not placed:
                out.append(Block("```", "python", code.split("\n")))
                placed = True
            shown = item.options.get("pyobject", "").split(".")[-1]
            if shown and re.search(rf"^(async def|def|class) {re.escape(shown)}\b", code, re.M):
                continue
        out.append(item)
    return out


def _literalinclude(block: Block, ctx: Context) -> list[str]:
    path = (ctx.folder / block.arg).resolve()
    if not path.is_file():
        raise MystError(f"literalinclude: no file {block.arg} (from {ctx.folder})")
    lines = path.read_text(encoding="utf-8").split("\n")
    if "pyobject" in block.options:
        lines = pyobject_lines(lines, block.options["pyobject"], path)
    if "lines" in block.options:
        lines = _select_lines(lines, block.options["lines"])
    language = block.options.get("language", "")
    while lines and not lines[-1].strip():
        lines.pop()
    return [f"```{language}", *lines, "```"]


def pyobject_lines(lines: list[str], name: str, path: Path) -> list[str]:
    """The lines of function or class ``name`` (``Class.method`` too), decorators included."""
    tree = ast.parse("\n".join(lines))
    scope: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in name.split("."):
        node = next(
            (
                n
                for n in scope
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and n.name == part
            ),
            None,
        )
        if node is None:
            raise MystError(f"literalinclude: {path.name} has no {name}")
        scope = node.body  # type: ignore[attr-defined]
    assert node is not None and node.end_lineno is not None
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return lines[first - 1 : node.end_lineno]


def _select_lines(lines: list[str], spec: str) -> list[str]:
    keep: list[str] = []
    for part in spec.split(","):
        start, _, end = part.strip().partition("-")
        a = int(start)
        b = a if not _ else (int(end) if end else len(lines))
        keep.extend(lines[a - 1 : b])
    return keep


# --- inline ------------------------------------------------------------------------------------


def _inline(text: str, ctx: Context) -> str:
    """Roles replaced, relative links made to work from the student edition; code spans kept."""

    def replace(match: re.Match) -> str:
        if match["code"]:
            return match["code"]
        return _role(match["name"], match["content"], ctx)

    return _links(INLINE.sub(replace, text), ctx)


ROLE_WITH_TARGET = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


def _role(name: str, content: str, ctx: Context) -> str:
    roles: dict[str, Callable[[str, Context], str]] = {
        "ref": _ref,
        "doc": _doc,
        "term": lambda c, _: _split_target(c)[0],
        "glue": _glue,
        "glue:": _glue,
        "glue:text": _glue_text,
        "glue:md": _glue_md,
    }
    if name not in roles:
        raise MystError(f"unknown role {{{name}}}: teach tools/myst.py to render it")
    return roles[name](content, ctx)


def _split_target(content: str) -> tuple[str, str]:
    match = ROLE_WITH_TARGET.match(content)
    if match and match["text"]:
        return match["text"], match["target"]
    return content, content


def _ref(content: str, ctx: Context) -> str:
    text, label = _split_target(content)
    if label not in ctx.labels:
        raise MystError(f"{{ref}} to unknown label {label!r}")
    href, default = ctx.labels[label]
    if ctx.filename and href.startswith(f"{ctx.filename}#"):  # within this notebook
        href = href[len(ctx.filename) :]
    return f"[{text if text != label else default}]({href})"


def _doc(content: str, ctx: Context) -> str:
    text, target = _split_target(content)
    target = target.removesuffix(".md").removesuffix(".ipynb")
    name = target.rsplit("/", 1)[-1]
    if target.startswith("/notebooks/") or re.match(r"^\d\d_", name):
        href = f"{name}.ipynb"
    else:
        page = target.lstrip("/") if target.startswith("/") else f"book/{target}"
        href = f"{ctx.book_url}{page}.html"
    return f"[{text if text != target else name}]({href})"


def _glued(name: str, ctx: Context) -> dict[str, str]:
    if name not in ctx.glue:
        raise MystError(f"no glued value {name!r} in the executed chapter")
    return ctx.glue[name]


def _glue(content: str, ctx: Context) -> str:
    return _glued(content, ctx).get("text/plain", "")


def _glue_md(content: str, ctx: Context) -> str:
    data = _glued(content, ctx)
    return data.get("text/markdown", data.get("text/plain", ""))


def _glue_text(content: str, ctx: Context) -> str:
    name, _, spec = content.partition(":")
    text = _glued(name, ctx).get("text/plain", "")
    if not spec:
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError) as err:
        raise MystError(f"glued {name!r} = {text} cannot take the format {spec!r}") from err
    return format(value, spec)


def _links(text: str, ctx: Context) -> str:
    """``](../book/page.md)`` and the like, as absolute links; sibling notebooks stay."""

    def replace(match: re.Match) -> str:
        target = match["target"]
        if SIBLING_NOTEBOOK.match(target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = (ctx.folder / path).resolve()
        root = ctx.repo_root or ctx.folder.parent
        try:
            relative = resolved.relative_to(root.resolve()).as_posix()
        except ValueError as err:
            raise MystError(f"link {target!r} points outside the repository") from err
        if relative.startswith("book/") and relative.endswith(".md"):
            href = f"{ctx.book_url}{relative.removesuffix('.md')}.html"
        else:
            href = f"{ctx.repo_url}/blob/main/{relative}"
        return f"]({href}{'#' + anchor if anchor else ''})"

    return RELATIVE_LINK.sub(replace, text)
