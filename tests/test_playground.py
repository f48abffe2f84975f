"""The tokenizer playground: our JavaScript encoder gives tiktoken's ids, in a real browser.

The browser tests build the book (as ``tests/test_book.py`` does, sharing its lock and the
execution cache), copy the BUILT ``_static/playground`` files into a temporary folder next to
a test page and a generated ``strings.js``, and let headless Chromium (no network at all) encode
every string with every encoding. The page writes the ids and its timings into the DOM as
JSON; we compare the ids with tiktoken's here.

Inputs: the corpora (the whole novel, 200 KB of Python code, the parallel messages of every
language), the parity suite's hard strings (``tests/_parity.py``: FRAGMENTS alone and in
contexts, hostile shapes, lone surrogates, special tokens), every code point whose class
(letter, digit, white space, ...) in the browser's own Unicode tables differs from tiktoken's,
and a seeded fuzz of at least 2,000 strings (``TOKCOURSE_PARITY_EXAMPLES`` if larger).
Speeds go to ``_build/test-artifacts/playground-speed.json`` (``benchmarks/RESULTS.md``
quotes them); the playground page's screenshot to ``_build/test-artifacts/playground.png``.
"""

from __future__ import annotations

import base64
import html as html_lib
import json
import random
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests._ci import missing_tool
from tests._parity import (
    APOSTROPHES,
    CONTRACTION_TAILS,
    FRAGMENTS,
    PARITY_EXAMPLES,
    hostile_texts,
    require_slow,
    tiktoken_encoding,
)
from tests.conftest import NOTEBOOKS, ROOT
from tests.test_book import CHROMIUM, HTML, build_book, headless_chromium

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import tokcourse_playground as playground  # noqa: E402

ENCODINGS = list(playground.ENCODINGS)
ARTIFACTS = ROOT / "_build" / "test-artifacts"
FUZZ_STRINGS = max(2_000, PARITY_EXAMPLES)
PLAYGROUND_DIV = re.compile(r'<div class="tokcourse-playground"[^>]*>')


# ----------------------------------------------------------------------- build-time data


def test_special_tokens_are_tiktokens():
    for name in ENCODINGS:
        assert playground.SPECIAL_TOKENS[name] == tiktoken_encoding(name)._special_tokens


def test_rank_tables_are_tiktokens():
    for name in ENCODINGS:
        ranks = tiktoken_encoding(name)._mergeable_ranks
        assert {t: r for r, t in enumerate(playground.rank_table(name))} == ranks


def test_encoding_script_holds_the_table_compactly():
    script = playground.encoding_script("r50k_base")
    prefix, suffix = 'tokcoursePlayground.addData("r50k_base", ', ");\n"
    assert script.startswith(prefix) and script.endswith(suffix)
    data = json.loads(script[len(prefix) : -len(suffix)])
    lengths, blob = base64.b64decode(data["lengths"]), base64.b64decode(data["bytes"])
    tokens, pos = [], 0
    for n in lengths:
        tokens.append(blob[pos : pos + n])
        pos += n
    assert pos == len(blob) and tokens == playground.rank_table("r50k_base")
    assert data["size"] == len(tokens) and data["special"] == {"<|endoftext|>": 50256}


def test_a_damaged_rank_file_is_refused(tmp_path, monkeypatch):
    from tokcourse.course.data import store

    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"IQ== 0\nIg== 2\n")
    monkeypatch.setattr(store, "path", lambda name: bad)
    with pytest.raises(ValueError, match="not 0..1 without gaps"):
        playground.rank_table("r50k_base")
    bad.write_bytes(b"IQ== 0\nprint('hi')\n")
    with pytest.raises(ValueError, match="line 2 is not 'base64 rank'"):
        playground.rank_table("r50k_base")
    with pytest.raises(ValueError, match="unknown encoding 'gpt5'"):
        playground.rank_table("gpt5")


def test_unicode_classes_are_tiktokens_16_0():
    classes = playground.unicode_classes()

    def has(name, ch):
        return any(a <= ord(ch) <= b for a, b in classes[name])

    assert has("Ll", "\u0295") and not has("Lo", "\u0295")  # ʕ: Ll in 16.0, Lo later
    assert not has("L", "\U000323b0")  # CJK Extension J (Unicode 17.0): unassigned in 16.0
    assert has("S", "\x85") and has("S", "\u3000") and not has("S", "\ufeff")
    assert not has("S", "\x1c")  # Python's str.isspace says yes; Unicode White_Space says no
    assert has("N", "\u2460") and has("M", "\u0301") and has("Lt", "\u01c5")


def test_every_notebook_box_has_a_note_for_jupyter():
    """Where no script runs (Jupyter, Colab), the box's own text tells the reader what to do."""
    import nbformat

    boxes = 0
    for path in NOTEBOOKS:
        cells = nbformat.read(path, as_version=4).cells
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        for match in PLAYGROUND_DIV.finditer(text):
            boxes += 1
            inside = text[match.end() : text.index("</div>", match.end())]
            assert "show_tokens" in inside, path.name
    assert boxes >= 3


# ----------------------------------------------------------------------- the test inputs


def fuzz_strings(n: int, seed: int = 16) -> list[str]:
    """``n`` seeded strings built like ``tests/_parity.py``'s ``any_text`` (surrogates too)."""
    rng = random.Random(seed)
    words = ["the", " the", "The", " THE", "hello", " world", "tokenizer", " don", "n", "t", "s"]
    surrogates = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", "\ude00"]

    def code_point(any_at_all: bool) -> str:
        c = rng.randrange(0x110000)
        if not any_at_all and 0xD800 <= c <= 0xDFFF:
            c = 0xFFFD
        return chr(c)

    def piece() -> str:
        kind = rng.randrange(10)
        if kind == 0:
            return rng.choice(FRAGMENTS)
        if kind == 1:
            return rng.choice(words)
        if kind == 2:
            return rng.choice(APOSTROPHES) + rng.choice(CONTRACTION_TAILS)
        if kind == 3:
            return "".join(
                rng.choice(" \t\n\r\u00a0\u3000\u2009") for _ in range(rng.randint(1, 24))
            )
        if kind == 4:
            return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 12)))
        if kind == 5:
            return "".join(rng.choice("'\u2019sStTdDmMlLvVeErR ") for _ in range(rng.randint(1, 8)))
        if kind == 6:
            return code_point(any_at_all=False)
        if kind == 7:
            return code_point(any_at_all=True)
        if kind == 8:
            return rng.choice(surrogates)
        return "".join(code_point(rng.random() < 0.1) for _ in range(rng.randint(0, 6)))

    return ["".join(piece() for _ in range(rng.randint(0, 16))) for _ in range(n)]


def hard_strings() -> list[str]:
    """The parity suite's hard strings, alone and in contexts, plus what the browser adds."""
    out = []
    for f in FRAGMENTS:
        out += [f, f"a{f}b", f * 3, f" {f} ", f"x{f}\n", f"'{f}", f"{f}s", f"1{f}2"]
    out += [a + t + tail for a in APOSTROPHES for t in CONTRACTION_TAILS for tail in ("", "a")]
    out += [
        w + a + t
        for w in ("don", "DON", "we", "I")
        for a in ("'", "\u2019")
        for t in CONTRACTION_TAILS
    ]
    out += [
        "hello\r\nworld\r\n",
        "a  \r\n  b\r\r\n\n c",
        "   \n\t  x",
        "x   ",
        "  \u00a0\u3000 y",
        "1234567890123",
        "\ud800",  # lone surrogates, as a textarea can hold them
        "a\udc00b",
        "\udfff\ud800",
        "\ud83d\ude00\ud83d",
        "<|endoftext|>",
        "a<|endoftext|>b <|endoftext|>",
        "<|fim_prefix|>x<|fim_middle|>y<|fim_suffix|>z<|endofprompt|>",
        "<|endoftext",
        "<|endoftext|><|endoftext|>",
        "",
    ]
    out += list(hostile_texts(2_000).values())
    return out


def corpora(*, full: bool = False) -> dict[str, str]:
    from tokcourse.course.data import corpora as c

    texts = {"botchan": c.botchan_text(), "code": c.python_code(None if full else 200_000)}
    for lang, messages in c.parallel_text().items():
        texts[f"parallel {lang}"] = "\n".join(messages)
    return texts


# ----------------------------------------------------------------------- the browser


def built_for_the_browser() -> Path:
    """The built book's HTML, after a build exactly as ``make book`` (test_book's lock), for
    tests that open it in Chromium."""
    if CHROMIUM is None:
        missing_tool("chromium not installed (apt-get install chromium; .ci/run does it)")
    result = build_book()
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
    return HTML


@pytest.fixture(scope="module")
def built() -> Path:
    """The built book's ``_static/playground``, after a build exactly as ``make book``."""
    static = built_for_the_browser() / "_static" / "playground"
    assert (static / "data" / "o200k_base.js").is_file()
    return static


def chromium(url: str, profile: Path, *extra: str, budget: int = 60_000) -> str:
    """Headless Chromium on ``url`` with no network (test_book's), with time for big runs."""
    return headless_chromium(url, profile, *extra, budget=budget, timeout=600)


RUNNER = """
const api = tokcoursePlayground, out = {timings: {}, ids: {}, classes: {}, differ: []};
// Code points the browser's own Unicode tables class differently from tiktoken's (16.0).
function differing(classes) {
  const names = {L: "L", Lu: "Lu", Ll: "Ll", Lt: "Lt", Lm: "Lm", Lo: "Lo", M: "M", N: "N", S: null};
  const found = new Set();
  for (const [name, prop] of Object.entries(names)) {
    const theirs = new RegExp(prop ? `^\\\\p{${prop}}$` : "^\\\\s$", "u");
    const ours = new RegExp(`^[${classes[name]}]$`, "u");
    let n = 0;
    for (let c = 0; c < 0x110000; c++) {
      if (c === 0xd800) c = 0xe000;
      const ch = String.fromCodePoint(c);
      if (theirs.test(ch) !== ours.test(ch)) { found.add(c); n++; }
    }
    out.classes[name] = n;
  }
  return [...found].sort((a, b) => a - b);
}
(async () => {
  try {
    for (const name of api.ENCODINGS) {
      const t0 = performance.now();
      const enc = await api.load(name);
      const t = out.timings[name] = {load_ms: performance.now() - t0, build_ms: enc.buildMs};
      let t1 = performance.now();
      enc.encodeIds(SPEED_TEXT);
      t.encode_cold_ms = performance.now() - t1;
      t1 = performance.now();
      enc.encodeIds(SPEED_TEXT);
      t.encode_warm_ms = performance.now() - t1;
      out.ids[name] = STRINGS.map((s) => enc.encodeIds(s));
      // the same, chunk by chunk with offsets, as the widget's worker encodes
      out.ids[name + " chunks"] = STRINGS.map((s) => enc.encode(s).ids);
    }
    out.differ = differing(CLASSES);
    const texts = [];
    for (let i = 0; i < out.differ.length; i += 50) {
      texts.push(out.differ.slice(i, i + 50).map(DIFFER_TEXT).join(""));
    }
    // The control: the same encoder with the browser's own \\p{L}, \\s ... must get some wrong.
    const NATIVE = {L: "\\p{L}", Lu: "\\p{Lu}", Ll: "\\p{Ll}", Lt: "\\p{Lt}", Lm: "\\p{Lm}",
                    Lo: "\\p{Lo}", M: "\\p{M}", N: "\\p{N}", S: "\\s"};
    for (const name of api.ENCODINGS) {
      const enc = await api.load(name);
      out.ids[name + " differ"] = texts.map((s) => enc.encodeIds(s));
      const naive = Object.create(enc);
      naive.pattern = new RegExp(api.patternParts(name, NATIVE).join("|"), "gu");
      naive.cache = new Map();
      out.ids[name + " native"] = texts.map((s) => naive.encodeIds(s));
    }
    // encoder.js writes x++ as (?=(x+))\\1: atomic, it gives nothing back (a plain x+ does)
    out.atomic = [/^(?=(a+))\\1a/.test("aaa"), /^a+a/.test("aaa")];
    out.userAgent = navigator.userAgent;
  } catch (err) {
    out.error = String(err) + "\\n" + err.stack;
  }
  document.getElementById("result").textContent = JSON.stringify(out);
})();
"""

# A code point in the contexts where its class decides a split (Python twin below).
DIFFER_TEXT_JS = (
    "(c) => { const x = String.fromCodePoint(c); "
    "return `a${x}${x}b ${x}1 A${x}a '${x}x\\n${x} ${x}'s`; }"
)


def differ_text(c: int) -> str:
    x = chr(c)
    return f"a{x}{x}b {x}1 A{x}a '{x}x\n{x} {x}'s"


def run_in_browser(static: Path, tmp_path: Path, strings: list[str], speed_text: str) -> dict:
    site = tmp_path / "site"
    shutil.copytree(static, site / "playground")
    (site / "strings.js").write_text(
        "const STRINGS = "
        + json.dumps(strings)
        + ";\nconst SPEED_TEXT = "
        + json.dumps(speed_text)
        + ";\nconst DIFFER_TEXT = "
        + DIFFER_TEXT_JS
        + ";\n",
        encoding="utf-8",
    )
    classes = (site / "playground" / "data" / "classes.js").read_text(encoding="utf-8")
    prefix = 'tokcoursePlayground.addData("classes", '
    (site / "classes-for-test.js").write_text(
        "const CLASSES = " + classes[len(prefix) : -3] + ".classes;\n", encoding="utf-8"
    )
    (site / "runner.js").write_text(RUNNER, encoding="utf-8")
    (site / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8">'
        '<script src="playground/core.js"></script><script src="playground/encoder.js"></script>'
        '<script src="strings.js"></script><script src="classes-for-test.js"></script>'
        '</head><body><pre id="result">not run</pre><script src="runner.js"></script>'
        "</body></html>",
        encoding="utf-8",
    )
    dom = chromium((site / "index.html").as_uri(), tmp_path / "profile", "--dump-dom")
    match = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    assert match, dom[-2000:]
    out = json.loads(html_lib.unescape(match[1]))
    assert "error" not in out, out["error"]
    assert out["atomic"] == [False, True]
    return out


def mismatches(out: dict, strings: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    texts = []
    for i in range(0, len(out["differ"]), 50):
        texts.append("".join(differ_text(c) for c in out["differ"][i : i + 50]))
    for name in ENCODINGS:
        enc = tiktoken_encoding(name)
        keyed = ((name, strings), (name + " chunks", strings), (name + " differ", texts))
        for key, inputs in keyed:
            got = out["ids"][key]
            assert len(got) == len(inputs)
            bad = [
                s
                for s, ids in zip(inputs, got, strict=True)
                if ids != enc.encode(s, allowed_special="all")
            ]
            if bad:
                found[key] = bad
        native = out["ids"][name + " native"]
        found[name + " native (control)"] = [
            s for s, ids in zip(texts, native, strict=True) if ids != enc.encode(s)
        ]
    return found


def tiktoken_ms(text: str, name: str) -> float:
    enc = tiktoken_encoding(name)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        enc.encode(text, allowed_special="all")
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def test_browser_ids_are_tiktokens(built, tmp_path):
    texts = corpora()
    hard, fuzz = hard_strings(), fuzz_strings(FUZZ_STRINGS)
    strings = list(texts.values()) + hard + fuzz
    novel = texts["botchan"]
    speed_text = novel.encode("utf-8")[:100_000].decode("utf-8", "ignore")
    out = run_in_browser(built, tmp_path, strings, speed_text)
    found = mismatches(out, strings)
    controls = {k: len(found.pop(k)) for k in list(found) if k.endswith("(control)")}
    assert not found, {k: [repr(s)[:200] for s in v[:3]] for k, v in found.items()}
    # The browser's own Unicode tables would get texts wrong: the pinned classes are needed.
    if out["differ"]:
        assert sum(controls.values()) > 0, controls

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for file in sorted((built / "data").glob("*.js")):
        raw = file.read_bytes()
        import gzip

        sizes[file.name] = {"raw": len(raw), "gzip": len(gzip.compress(raw, 9))}
    report = {
        "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "browser": out["userAgent"],
        "strings": {
            "corpora": {k: len(v) for k, v in texts.items()},
            "hard": len(hard),
            "fuzz": len(fuzz),
            "differing code points": len(out["differ"]),
            "per class": out["classes"],
            "total per encoding": len(strings) + len(range(0, len(out["differ"]), 50)),
        },
        "control: texts the browser's own classes get wrong": controls,
        "tokens per encoding": {n: sum(map(len, out["ids"][n])) for n in ENCODINGS},
        "speed text bytes": len(speed_text.encode("utf-8")),
        "timings": {
            n: {**out["timings"][n], "tiktoken_ms": tiktoken_ms(speed_text, n)} for n in ENCODINGS
        },
        "data sizes": sizes,
        "mismatches": 0,
    }
    (ARTIFACTS / "playground-speed.json").write_text(json.dumps(report, indent=2) + "\n")


@pytest.mark.slow
def test_browser_ids_are_tiktokens_on_the_full_corpora(built, tmp_path, request):
    require_slow(request)
    full = corpora(full=True)
    strings = [full["code"], *hostile_texts(20_000).values()]
    out = run_in_browser(built, tmp_path, strings, full["botchan"][:1000])
    found = mismatches(out, strings)
    assert not [k for k in found if not k.endswith("(control)")]


# ----------------------------------------------------------------------- the shipped pages


def drawn_rows(page_file: Path, tmp_path: Path, typed: str | None = None):
    """(tokenizer, token count) of every row the widget drew on a built page, opened offline,
    and the widget's HTML.

    Chromium is driven over the DevTools protocol (``tests/_cdp.py``): the widget encodes in a Web
    Worker, which ``--dump-dom`` does not wait for. ``typed``: text typed into the box first.
    """
    from tests._cdp import Browser

    box = "[...tokcoursePlayground.boxes.values()][0]"
    with Browser(tmp_path / "profile") as browser:
        page = browser.open(page_file.as_uri())
        page.wait_for("document.querySelector('.tokcourse-playground').dataset.ready === 'yes'")
        if typed is not None:
            page.evaluate(
                "(() => { const t = document.querySelector('.tokcourse-playground textarea');"
                " t.focus(); t.select(); })()"
            )
            page.send("Input.insertText", text=typed)
            version = page.evaluate(f"{box}.version")
            page.wait_for(f"{box}.painted >= {version}")
        rows = page.evaluate(
            "[...document.querySelectorAll('.tokcourse-playground .row')]"
            ".map((r) => [r.dataset.encoding, Number(r.dataset.count)])"
        )
        assert page.errors() == []
        html = page.evaluate("document.querySelector('.tokcourse-playground').outerHTML")
    return [tuple(r) for r in rows], html


def expected_rows(text: str) -> list[tuple[str, int]]:
    return [(n, len(tiktoken_encoding(n).encode(text, allowed_special="all"))) for n in ENCODINGS]


def test_the_playground_page_works_offline(built, tmp_path):
    page = HTML / "book" / "playground.html"
    source = page.read_text(encoding="utf-8")
    assert "playground/core.js" in source and "playground/playground.js" in source
    start = re.search(r'class="tokcourse-playground" data-text="([^"]*)"', source)
    text = html_lib.unescape(start[1])
    rows, html = drawn_rows(page, tmp_path)
    assert rows[: len(ENCODINGS)] == expected_rows(text)
    assert html.count('class="tok"') > 100 and 'class="tok special"' in html
    assert "chars/token" in html and 'role="listbox"' in html
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "playground.png"
    shot.unlink(missing_ok=True)
    from tests._cdp import Browser

    with Browser(tmp_path / "profile2") as browser:
        tab = browser.open(page.as_uri(), width=1200, height=1400)
        tab.wait_for("document.querySelector('.tokcourse-playground').dataset.painted")
        png = tab.send("Page.captureScreenshot", format="png")["data"]
        shot.write_bytes(base64.b64decode(png))
    assert shot.is_file() and shot.stat().st_size > 10_000


@pytest.mark.parametrize("stem", ["00_introduction", "05_tiktoken_gpt4", "09_tokenization_bites"])
def test_chapter_boxes_work_offline(built, tmp_path, stem):
    page = HTML / "notebooks" / f"{stem}.html"
    source = page.read_text(encoding="utf-8")
    assert len(PLAYGROUND_DIV.findall(source)) == 1
    text = html_lib.unescape(re.search(r'data-text="([^"]*)"', source)[1])
    rows, _ = drawn_rows(page, tmp_path)
    names = re.search(r'data-encodings="([^"]*)"', source)
    if names is None:
        assert rows[: len(ENCODINGS)] == expected_rows(text)
    else:
        assert rows == [r for r in expected_rows(text) if r[0] in names[1].split()]


def test_pages_without_a_box_do_not_load_the_playground(built):
    for page in HTML.rglob("*.html"):
        source = page.read_text(encoding="utf-8")
        has_box = PLAYGROUND_DIV.search(source) is not None
        assert has_box == ("playground/encoder.js" in source), page


def test_results_md_quotes_the_kept_browser_measurement():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_playground
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    data = bench_playground.stored()
    assert data is not None and data["mismatches"] == 0 and data["strings"]["fuzz"] >= 2_000
    lines = bench_playground.section(data)
    results_md = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    assert "\n".join(lines[1:]) in results_md
    widget = bench_playground.stored_widget()
    assert widget is not None and set(widget) >= {"100 KB", "1 MB", "100k spaces"}
    assert "\n".join(bench_playground.widget_section(widget)[1:]) in results_md
    ports = bench_playground.stored_ports()
    assert ports is not None and all(p["mismatches"] == 0 for p in ports.values())
    assert "\n".join(bench_playground.ports_section(ports)[1:]) in results_md


TYPED = "Typed text:\n  we'RE 2025 \U0001f44b\U0001f3fd <|endofprompt|> naïve\t"


def test_the_playground_page_updates_as_you_type(built, tmp_path):
    """The shipped page: text typed into its box, as a reader types it."""
    rows, html = drawn_rows(HTML / "book" / "playground.html", tmp_path, typed=TYPED)
    assert rows[: len(ENCODINGS)] == expected_rows(TYPED)
    assert "→" in html  # the tab, drawn as its mark
