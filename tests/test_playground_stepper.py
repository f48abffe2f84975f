"""The merge stepper ("BPE you can watch", ``book/_static/playground/stepper.js``), in a browser.

No book build: the data writer (``book/_ext/tokcourse_playground.py``) writes the rank tables
into a temporary site, the playground's JS and CSS are copied next to them, and headless
Chromium (no network) runs a small test page. The page writes what it saw into the DOM as JSON;
we check it here against tiktoken and against a plain Python replay of the merges.

1. The merges: for every distinct chunk of the first 20,000 characters of Botchan, of 20 KB of
   the Python code corpus and of the playground's hard strings, under GPT-2, GPT-4 and GPT-4o,
   the steps ``mergeSteps`` gives replay, on its parts, into tiktoken's ids for that chunk.
2. The widget: a reader picks a chunk with a click and the arrow keys, steps with the buttons,
   sees the sentence and the parts of each step, the final ids at the end; a long chunk is
   refused; ``showMerges`` loads a chunk; every text has AA contrast; focus is visible.
3. The book: pages with a stepper load it, the playground page has one, chapters 03 and 05
   link to it.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import sys
from pathlib import Path

import pytest

from tests._ci import missing_tool
from tests._parity import tiktoken_encoding
from tests.conftest import ROOT
from tests.test_book import CHROMIUM, headless_chromium
from tests.test_playground import hard_strings

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import tokcourse_book  # noqa: E402
import tokcourse_playground as playground  # noqa: E402

ENCODINGS = list(playground.ENCODINGS)
SOURCES = ROOT / "book" / "_static" / "playground"
MAX_BYTES = 50_000  # stepper.js refuses longer chunks


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder with ``playground/`` (the JS and CSS sources) and ``playground/data``."""
    if CHROMIUM is None:
        missing_tool("chromium not installed (apt-get install chromium; .ci/run does it)")
    folder = tmp_path_factory.mktemp("stepper-site")
    playground.copy_sources(SOURCES, folder)
    playground.write_data(folder)
    return folder


# Collects every uncaught error of the page; finish(out) reports them. (From file:// pages each
# script is its own origin: Chromium reports their errors as "Script error.", and their unhandled
# rejections not at all, so the stepper ends every promise chain in a catch.)
HARNESS = """
const pageErrors = [];
addEventListener("error", (e) => pageErrors.push(String(e.message)));
addEventListener("unhandledrejection", (e) => pageErrors.push(String(e.reason)));
function finish(out) {
  out["page errors"] = pageErrors;
  document.getElementById("result").textContent = JSON.stringify(out);
}
"""


def run_page(site: Path, tmp_path: Path, name: str, body: str, script: str) -> dict:
    """Open ``body`` + ``script`` (which fills ``#result`` with JSON) in headless Chromium."""
    (site / f"{name}.js").write_text(script, encoding="utf-8")
    page = site / f"{name}.html"
    page.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>stepper test</title>'
        f"<script>{HARNESS}</script>"
        '<link rel="stylesheet" href="playground/stepper.css">'
        '<script src="playground/core.js"></script>'
        '<script src="playground/encoder.js"></script>'
        '<script src="playground/stepper.js"></script>'
        f'</head><body>{body}<pre id="result">not run</pre>'
        f'<script src="{name}.js"></script></body></html>',
        encoding="utf-8",
    )
    dom = headless_chromium(
        page.as_uri(), tmp_path / "profile", "--dump-dom", budget=120_000, timeout=600
    )
    match = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    assert match, dom[-3000:]
    out = json.loads(html_lib.unescape(match[1]))
    assert "error" not in out, out["error"]
    assert out.pop("page errors") == []  # nothing thrown
    return out


# ----------------------------------------------------------------------- 1. the merges

MERGES_RUNNER = """
const api = tokcoursePlayground, out = {merges: {}};
const hex = (s) => [...s].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
(async () => {
  try {
    for (const name of api.ENCODINGS) {
      const tok = await api.tokenizer(name), seen = new Set(), rows = [];
      for (const raw of TEXTS) {
        const text = api.fixSurrogates(raw);
        for (let s = 0; s < text.length;) {
          const e = tok.nextChunkEnd(text, s), chunk = text.slice(s, e);
          if (!seen.has(chunk)) {
            seen.add(chunk);
            const m = tok.mergeSteps(text, s, e);
            rows.push([chunk, m.parts.map(hex), m.steps.map((x) => [x.at, x.rank, x.id]),
                       m.ids, m.note]);
          }
          s = e;
        }
      }
      out.merges[name] = rows;
    }
  } catch (err) {
    out.error = String(err) + "\\n" + err.stack;
  }
  finish(out);
})();
"""


def stepper_texts() -> list[str]:
    from tokcourse.course.data import corpora

    code = corpora.python_code(None).encode("utf-8")[:20_000].decode("utf-8", "ignore")
    return [corpora.botchan_text()[:20_000], code, *hard_strings()]


def check_merges(name: str, rows: list) -> dict[str, int]:
    """Replay each chunk's steps in Python; compare with tiktoken. Returns what it counted."""
    enc = tiktoken_encoding(name)
    ranks = enc._mergeable_ranks
    special = playground.SPECIAL_TOKENS[name]
    counts = {"chunks": 0, "steps": 0, "whole-chunk lookups": 0, "special": 0}
    for chunk, parts_hex, steps, ids, note in rows:
        counts["chunks"] += 1
        parts = [bytes.fromhex(p) for p in parts_hex]
        where = f"{name} {chunk[:60]!r}"
        if chunk in special:
            assert (parts, steps, ids) == ([chunk.encode()], [], [special[chunk]]), where
            assert note, where
            counts["special"] += 1
            continue
        assert parts == [bytes([b]) for b in chunk.encode("utf-8")], where  # step 0: the bytes
        expected = enc._encode_single_piece(chunk.encode("utf-8"))  # tiktoken, this chunk
        assert ids == expected, where
        previous = -1
        for at, rank, token_id in steps:
            pairs = [ranks.get(a + b) for a, b in zip(parts, parts[1:], strict=False)]
            lowest = min(r for r in pairs if r is not None)
            # the pair merged is the one with the lowest rank, the leftmost on a tie
            assert (rank, token_id, at) == (lowest, lowest, pairs.index(lowest)), where
            # Ranks never decrease: a trained table adds a token after the tokens it joins, so
            # a token's rank is above its parts' ranks. Merging the lowest pair (rank r) makes
            # new pairs with the new token (r) inside: each, if a token, ranks above r; every
            # other pair was already at r or above. Equal ranks: the same pair again ("aa aa").
            assert rank >= previous, where
            previous = rank
            parts[at : at + 2] = [parts[at] + parts[at + 1]]
        counts["steps"] += len(steps)
        merged = [ranks[p] for p in parts]  # every part after the last step is a token
        # tiktoken took the whole chunk at once: one token, which the merges miss. No chunk here
        # needs it: every token of the three tables is reached by its own merges.
        if note:
            assert "whole chunk" in note and len(ids) == 1 and merged != ids, where
            assert ranks[chunk.encode("utf-8")] == ids[0], where
            counts["whole-chunk lookups"] += 1
        else:
            assert merged == ids, where
    return counts


def test_the_merges_replay_into_tiktokens_ids(site, tmp_path):
    texts = stepper_texts()
    (site / "texts.js").write_text("const TEXTS = " + json.dumps(texts) + ";\n", "utf-8")
    out = run_page(site, tmp_path, "merges", '<script src="texts.js"></script>', MERGES_RUNNER)
    counts = {name: check_merges(name, out["merges"][name]) for name in ENCODINGS}
    for name, count in counts.items():
        assert count["chunks"] > 2_000 and count["steps"] > 10_000, (name, count)
        assert count["special"] >= 1, (name, count)
    print(counts)


# ----------------------------------------------------------------------- 2. the widget


def label(data: bytes) -> str:
    """A part as the stepper shows it: the notebook visualizer's marks, on one line."""
    from tokcourse.course.viz import _split_utf8, _visible_part

    return "".join(_visible_part(p) for p in _split_utf8(data)).replace("↵\n", "↵")


def merge_steps(chunk: str, ranks: dict[bytes, int]) -> list[tuple[list[bytes], int, int]]:
    """Plain BPE on one chunk: (parts before, at, rank) of every merge, lowest rank first."""
    parts, steps = [bytes([b]) for b in chunk.encode("utf-8")], []
    while True:
        pairs = [ranks.get(a + b) for a, b in zip(parts, parts[1:], strict=False)]
        if not any(r is not None for r in pairs):
            return steps + [(parts, -1, -1)]
        rank = min(r for r in pairs if r is not None)
        at = pairs.index(rank)
        steps.append((parts, at, rank))
        parts = parts[:at] + [parts[at] + parts[at + 1]] + parts[at + 2 :]


def sentence(states, k: int) -> str:
    """stepper.js's sentence for step k (k >= 1) of a chunk with some merges."""
    n = len(states) - 1
    parts, at, rank = states[k - 1]
    a, b = parts[at], parts[at + 1]
    out = f"Step {k} of {n}: merge '{label(a)}' + '{label(b)}' → '{label(a + b)}', "
    out += f"rank {rank} (id {rank})."
    if k == n:
        out += " No adjacent pair is a token any more: these are the tokens."
    return out


def chunks_of(text: str, name: str) -> list[str]:
    import regex

    return regex.findall(tiktoken_encoding(name)._pat_str, text)


# The lowest contrast of any text in a box, against the first opaque background behind it.
CONTRAST_JS = r"""
function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const rgba = (s) => (s.match(/[\d.]+/g) || []).map(Number);
function background(node) {
  for (; node; node = node.parentElement) {
    const c = rgba(getComputedStyle(node).backgroundColor);
    if (c.length >= 3 && (c.length === 3 || c[3] > 0)) return c.slice(0, 3);
  }
  return [255, 255, 255];
}
/** The lowest contrast of any text in the stepper: [ratio, the text, its classes]. */
function contrast(box) {
  let worst = [99, "", ""];
  for (const node of box.querySelectorAll("*")) {
    const own = [...node.childNodes].filter((c) => c.nodeType === 3);
    const text = own.map((c) => c.data).join("").trim();
    if (!text && !(node.tagName === "OPTION" || node.tagName === "TEXTAREA")) continue;
    const fg = luminance(rgba(getComputedStyle(node).color).slice(0, 3));
    const bg = luminance(background(node));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < worst[0]) worst = [ratio, text.slice(0, 30) || node.tagName, node.className];
  }
  return worst;
}
"""

UI_TEXT = "We tokenize words: naïve café 👋 ok"
UI_RUNNER = (
    CONTRAST_JS
    + r"""
const api = tokcoursePlayground, out = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(test) { for (let i = 0; i < 500 && !test(); i++) await sleep(20); }
const box = document.querySelector(".tokcourse-bpe-stepper");
const $ = (sel) => box.querySelector(sel);
const click = (node) => node.dispatchEvent(new MouseEvent("click", {bubbles: true}));
const key = (node, k) => node.dispatchEvent(new KeyboardEvent("keydown", {key: k, bubbles: true}));
function snap() {
  const all = (sel) => [...box.querySelectorAll(sel)];
  const pressed = all(".tkbs-chunk").filter((b) => b.getAttribute("aria-pressed") === "true");
  const current = [...box.querySelectorAll("tbody tr[aria-current=step]")];
  return {
    sentence: $(".tkbs-sentence").textContent,
    parts: all(".tkbs-part").map((p) => p.querySelector(".tkbs-bytes").textContent),
    tags: all(".tkbs-part").map((p) => (p.querySelector(".tkbs-tag") || {}).textContent || ""),
    step: box.dataset.step ?? null, steps: box.dataset.steps ?? null, ids: box.dataset.ids ?? null,
    final: [...box.querySelectorAll(".tkbs-token .tkbs-id")].map((n) => n.textContent),
    note: $(".tkbs-note").textContent, title: $(".tkbs-title").textContent,
    pressed: pressed.map((b) => b.dataset.index),
    focused: document.activeElement.dataset.index || null,
    current: current.map((r) => r.firstChild.textContent),
    encoding: $(".tkbs-enc").value, field: $(".tkbs-text").value.slice(0, 50),
    disabled: [...box.querySelectorAll(".tkbs-btn")].map((b) => b.disabled),
    refused: box.dataset.refused || null,
  };
}
(async () => {
  try {
    await until(() => box.dataset.ready === "yes");
    out.options = [...$(".tkbs-enc").options].map((o) => o.value);
    out.chunks = [...box.querySelectorAll(".tkbs-chunk")].map((b) => b.textContent);
    out.initial = snap();
    click(box.querySelectorAll(".tkbs-chunk")[PICK]);      // a click picks a chunk
    out.clicked = snap();
    key(document.activeElement, "ArrowRight");              // the arrow keys move along the row
    out.keyed = snap();
    const next = $("button[aria-label='next step']");
    out.byStep = [snap()];
    for (let k = 1; k <= STEPS; k++) { click(next); out.byStep.push(snap()); }
    $(".tkbs-table").open = true;
    out.contrastMiddle = contrast(box);
    click($("button[aria-label='last step']")); out.last = snap();
    click($("button[aria-label='previous step']")); out.previous = snap();
    click($("button[aria-label='first step']")); out.first = snap();
    out.contrastFirst = contrast(box);
    next.focus();
    const style = getComputedStyle(next);
    out.focus = [document.activeElement === next, style.outlineStyle, style.outlineWidth];
    // a long chunk is refused, at once
    const field = $(".tkbs-text");
    field.value = "x" + " ".repeat(100000) + "y";
    field.dispatchEvent(new Event("input", {bubbles: true}));
    await until(() => box.querySelectorAll(".tkbs-chunk").length === 3);
    let t0 = performance.now();
    click(box.querySelectorAll(".tkbs-chunk")[1]);
    out.refused = snap();
    out.refusedMs = performance.now() - t0;
    // showMerges: another tokenizer, another text, a chunk in the middle
    out.shown = await api.showMerges("o200k_base", SHOW_TEXT, SHOW_START, SHOW_END);
    out.showMerges = snap();
    click($("button[aria-label='last step']")); out.showMergesLast = snap();
    t0 = performance.now();
    out.shownLong = await api.showMerges("r50k_base", "a".repeat(100000), 0, 100000);
    out.showLong = snap();
    out.showLongMs = performance.now() - t0;
  } catch (err) {
    out.error = String(err) + "\n" + err.stack;
  }
  finish(out);
})();
"""
)

SHOW_TEXT = "First line.\nThe stepper shows tokenization here."


def test_a_reader_steps_through_the_merges_of_a_chunk(site, tmp_path):
    name, pick, steps = "cl100k_base", 3, 3
    ranks = tiktoken_encoding(name)._mergeable_ranks
    chunks = chunks_of(UI_TEXT, name)
    chosen = chunks[pick + 1]  # clicked chunk `pick`, then ArrowRight
    states = merge_steps(chosen, ranks)
    n = len(states) - 1
    assert n > steps + 1, chosen
    show_chunk = " tokenization"
    show_start = SHOW_TEXT.index(show_chunk)
    script = (
        UI_RUNNER.replace("PICK", str(pick))
        .replace("STEPS", str(steps))
        .replace("SHOW_TEXT", json.dumps(SHOW_TEXT))
        .replace("SHOW_START", str(show_start))
        .replace("SHOW_END", str(show_start + len(show_chunk)))
    )
    body = (
        f'<div class="tokcourse-bpe-stepper" data-encoding="{name}" '
        f'data-text="{html_lib.escape(UI_TEXT)}"><p>needs JavaScript</p></div>'
    )
    out = run_page(site, tmp_path, "ui", body, script)

    assert out["options"] == ENCODINGS  # every tokenizer with mergeSteps, nothing else
    assert out["chunks"] == [label(c.encode()) for c in chunks]
    assert out["initial"]["pressed"] == ["0"]  # the first chunk, until the reader picks one
    assert out["clicked"]["pressed"] == [str(pick)]
    assert out["clicked"]["title"].startswith(f"Merges of '{label(chunks[pick].encode())}'")
    assert out["keyed"]["pressed"] == [str(pick + 1)] and out["keyed"]["focused"] == str(pick + 1)

    for k, seen in enumerate(out["byStep"]):
        parts = states[k][0]
        assert seen["parts"] == [label(p) for p in parts], k
        assert (seen["step"], seen["steps"]) == (str(k), str(n))
        assert seen["ids"] is None and seen["final"] == []  # the tokens only at the end
        at = states[k][1]
        tags = [""] * len(parts)
        if k:  # the part just made, and the pair merged next: a word, not only a colour
            tags[states[k - 1][1]] = "merged"
        tags[at] = (tags[at] + ", next").lstrip(", ")
        tags[at + 1] = (tags[at + 1] + ", next").lstrip(", ")
        assert seen["tags"] == tags, k
        if k:
            assert seen["sentence"] == sentence(states, k)
            assert seen["current"] == [f"▶ {k}"]  # the table marks the step with a sign
        else:
            first_pair = f"'{label(parts[at])}' + '{label(parts[at + 1])}'"
            assert seen["sentence"].startswith(f"Step 0 of {n}: the chunk's {len(parts)} bytes")
            assert f"Next: merge {first_pair}, rank {states[0][2]}." in seen["sentence"]
            assert seen["current"] == [] and seen["disabled"] == [True, True, False, False]

    ids = tiktoken_encoding(name).encode(chosen)
    last = out["last"]
    assert last["parts"] == [label(p) for p in states[-1][0]]
    tags = [""] * len(states[-1][0])
    tags[states[-2][1]] = "merged"  # and nothing "next": no merge is left
    assert last["tags"] == tags
    assert last["sentence"] == sentence(states, n) and last["current"] == [f"▶ {n}"]
    assert last["ids"] == " ".join(map(str, ids)) and last["final"] == [f"id {i}" for i in ids]
    assert last["disabled"] == [False, False, True, True]
    assert out["previous"]["sentence"] == sentence(states, n - 1)
    assert out["first"]["step"] == "0" and out["first"]["parts"] == out["byStep"][0]["parts"]

    # every text at AA contrast (4.5:1), at step 0 (disabled buttons) and mid-way (marks)
    for worst in (out["contrastFirst"], out["contrastMiddle"]):
        assert worst[0] >= 4.5, worst
    assert out["focus"] == [True, "solid", "3px"]  # a visible focus ring

    refused = out["refused"]
    assert refused["sentence"] == (
        "This chunk has 99,999 bytes; pick a shorter one "
        f"(the stepper shows chunks of at most {MAX_BYTES:,} bytes)."
    )
    assert refused["refused"] == "yes" and refused["parts"] == [] and refused["steps"] is None
    assert out["refusedMs"] < 100

    shown = out["showMerges"]
    o200k = tiktoken_encoding("o200k_base")
    show_states = merge_steps(show_chunk, o200k._mergeable_ranks)
    assert out["shown"] is True and shown["encoding"] == "o200k_base"
    assert shown["field"] == SHOW_TEXT[:50]
    show_chunks = chunks_of(SHOW_TEXT, "o200k_base")
    assert shown["pressed"] == [str(show_chunks.index(show_chunk))]
    assert shown["parts"] == [label(bytes([b])) for b in show_chunk.encode()]
    assert shown["steps"] == str(len(show_states) - 1)
    assert out["showMergesLast"]["final"] == [f"id {i}" for i in o200k.encode(show_chunk)]

    assert out["shownLong"] is True and out["showLong"]["encoding"] == "r50k_base"
    assert out["showLong"]["sentence"].startswith("This chunk has 100,000 bytes; pick a shorter")
    assert out["showLongMs"] < 1_000  # refused at once, never merged


# ----------------------------------------------------------------------- 3. the book


class FakeApp:
    def __init__(self):
        self.js, self.css = [], []

    def add_js_file(self, file, priority=500):
        self.js.append((file, priority))

    def add_css_file(self, file):
        self.css.append(file)


@pytest.mark.parametrize(
    ("body", "js", "css"),
    [
        ("<p>a chapter</p>", [], []),
        (
            '<div class="tokcourse-bpe-stepper" data-text="x">',
            [*(f for f in tokcourse_book.PLAYGROUND_SCRIPTS if f != "playground.js"), "stepper.js"],
            ["stepper.css"],
        ),
        (
            '<div class="tokcourse-playground"></div><div class="tokcourse-bpe-stepper">',
            [*tokcourse_book.PLAYGROUND_SCRIPTS, "stepper.js"],
            ["playground.css", "stepper.css"],
        ),
    ],
)
def test_pages_load_the_stepper_only_where_it_is(body, js, css):
    app = FakeApp()
    tokcourse_book._add_playground_where_needed(app, "page", "page.html", {"body": body}, None)
    loaded = [file for file, _ in sorted(app.js, key=lambda f: f[1])]
    assert loaded == [f"playground/{f}" for f in js]
    assert app.css == [f"playground/{f}" for f in css]


def test_the_playground_page_has_a_stepper_and_chapters_03_and_05_link_to_it():
    import nbformat

    page = (ROOT / "book" / "playground.md").read_text(encoding="utf-8")
    section = page.index("(watch-bpe-merge-a-chunk)=\n## Watch BPE merge a chunk\n")
    assert section < page.index("## How it works")
    div = re.search(r'<div class="tokcourse-bpe-stepper" data-encoding="(\w+)"', page)
    assert div and div[1] in ENCODINGS and div.start() > section
    for stem in ("03_encode_decode", "05_tiktoken_gpt4"):
        cells = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4).cells
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        assert len(re.findall(r"\{ref\}`[^`<]+<watch-bpe-merge-a-chunk>`", text)) == 1, stem


SCORE_RUNNER = r"""
const api = tokcoursePlayground, out = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(test) { for (let i = 0; i < 500 && !test(); i++) await sleep(20); }
(async () => {
  try {
    const box = document.querySelector(".tokcourse-bpe-stepper");
    await until(() => box.dataset.ready === "yes");
    out.options = [...box.querySelectorAll(".tkbs-enc option")].map((o) => o.value);
    out.sentence = box.querySelector(".tkbs-sentence").textContent;
    out.header = [...box.querySelectorAll("thead th")].map((th) => th.textContent);
    box.querySelector("button[aria-label='last step']").click();
    out.last = box.querySelector(".tkbs-sentence").textContent;
    out.final = [...box.querySelectorAll(".tkbs-token .tkbs-id")].map((n) => n.textContent);
    out.note = box.querySelector(".tkbs-note").textContent;
    out.unknown = await api.showMerges("no_such_tokenizer", "x", 0, 1);
    out.unknownSays = box.querySelector(".tkbs-sentence").textContent;
  } catch (err) {
    out.error = String(err) + "\n" + err.stack;
  }
  finish(out);
})();
"""

# A SentencePiece-like tokenizer (as the Mistral port will be): steps carry a score, not a rank.
# Registered with `steps: true`; a WordPiece-like one without it must not be offered.
FAKE_TOKENIZERS = """<script>
const pieces = {7: "\\u2581a", 9: "\\u2581ab"};
tokcoursePlayground.registerTokenizer("fake_sp", {label: "Fake SP", files: [], steps: true,
  create: () => ({name: "fake_sp", label: "Fake SP",
    nextChunkEnd: (text, start) => text.length,
    mergeSteps: () => ({parts: ["\\xe2\\x96\\x81", "a", "b"], ids: [9], note: "a test note",
                        steps: [{at: 0, score: -1.5, id: 7}, {at: 0, score: -3.25, id: 9}]}),
    tokenInfo: (id) => ({bytes: unescape(encodeURIComponent(pieces[id])), kind: "normal"})})});
tokcoursePlayground.registerTokenizer("fake_sp2", {label: "SP 2", files: ["never"], steps: true,
  create: () => null});
tokcoursePlayground.registerTokenizer("fake_wp", {label: "Fake WP", files: [],
  create: () => ({name: "fake_wp", nextChunkEnd: (text, start) => text.length})});
</script>"""


def test_a_tokenizer_with_scores_shows_scores(site, tmp_path):
    body = (
        FAKE_TOKENIZERS
        + '<div class="tokcourse-bpe-stepper" data-encoding="fake_sp" data-text="ab"></div>'
    )
    out = run_page(site, tmp_path, "scores", body, SCORE_RUNNER)
    # offered: a spec that says `steps: true`, before its data is loaded; fake_wp has no merges
    assert out["options"] == [*ENCODINGS, "fake_sp", "fake_sp2"]
    assert out["header"] == ["step", "score", "pair", "result", "id"]
    assert out["sentence"] == (
        "Step 0 of 2: the chunk's 3 starting parts. Next: merge '▁' + 'a', score -1.5."
    )
    assert out["last"] == (
        "Step 2 of 2: merge '▁a' + 'b' → '▁ab', score -3.25 (id 9)."
        " No adjacent pair is a token any more: these are the tokens."
    )
    assert out["final"] == ["id 9"] and out["note"] == "Note: a test note."
    assert out["unknown"] is False
    assert out["unknownSays"].startswith("Could not load no_such_tokenizer: unknown tokenizer")


THEME_RUNNER = (
    CONTRAST_JS
    + r"""
const out = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  try {
    const box = document.querySelector(".tokcourse-bpe-stepper");
    for (let i = 0; i < 500 && box.dataset.ready !== "yes"; i++) await sleep(20);
    out.mode = getComputedStyle(document.body).backgroundColor;
    box.querySelectorAll(".tkbs-chunk")[4].click();
    box.querySelector("button[aria-label='next step']").click();
    box.querySelector(".tkbs-table").open = true;
    out.middle = contrast(box);
    box.querySelector("button[aria-label='last step']").click();
    out.last = contrast(box);
  } catch (err) {
    out.error = String(err) + "\n" + err.stack;
  }
  finish(out);
})();
"""
)


def theme_css() -> list[Path]:
    """The book theme's style sheets, as the built pages load them (from the installed theme)."""
    import pydata_sphinx_theme
    import sphinx_book_theme

    pydata = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
    book = Path(sphinx_book_theme.__file__).parent / "theme" / "sphinx_book_theme"
    return [
        pydata / "static" / "styles" / "theme.css",
        pydata / "static" / "styles" / "pydata-sphinx-theme.css",
        book / "static" / "styles" / "sphinx-book-theme.css",
    ]


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_the_stepper_keeps_its_contrast_in_the_book_theme(site, tmp_path, mode):
    """Inside the theme's article, light and dark: the theme's heading and text colours
    (light grey on dark in dark mode) must not reach the stepper's white background."""
    links = "".join(f'<link rel="stylesheet" href="{css.as_uri()}">' for css in theme_css())
    body = (
        f'<script>document.documentElement.dataset.theme = "{mode}";'
        f'document.documentElement.dataset.mode = "{mode}";</script>{links}'
        '<div class="bd-container"><main class="bd-main"><div class="bd-article-container">'
        '<article class="bd-article"><section><h2>Watch BPE merge a chunk</h2>'
        f'<div class="tokcourse-bpe-stepper" data-encoding="o200k_base" '
        f'data-text="{html_lib.escape(UI_TEXT)}"></div></section></article></div></main></div>'
    )
    out = run_page(site, tmp_path, f"theme-{mode}", body, THEME_RUNNER)
    assert out["mode"] == ("rgb(255, 255, 255)" if mode == "light" else "rgb(18, 18, 18)")
    for worst in (out["middle"], out["last"]):
        assert worst[0] >= 4.5, worst
