"""The playground widget in a real browser: right ids while typing, faithful bytes, never frozen.

The page is assembled in a temporary folder exactly as the book ships it: the data files written
by ``book/_ext/tokcourse_playground.py``, the scripts of ``book/_static/playground`` in the order
``tokcourse_book.PLAYGROUND_SCRIPTS`` loads them, and a ``<div class="tokcourse-playground">``.
No book build is needed; ``tests/test_playground.py`` checks the built pages themselves.

Chromium is driven over the DevTools protocol (``tests/_cdp.py``): the widget encodes in a Web
Worker, and its speed targets are real milliseconds, which ``--dump-dom`` cannot measure.

What is checked:
- every row's ids (chunk by chunk, as the worker does) equal the library's, with offsets that
  point at the characters each token's bytes come from;
- the incremental engine gives the whole-text encoding after every one of hundreds of random
  edits, for every tokenizer; a tokenizer that lies about its safe boundaries is caught;
- pasted text is kept byte for byte (``\\r\\n``, ``\\r``, U+FEFF), drawn visibly, and typing after a
  paste keeps it; a token that wraps stays one box;
- accessibility of the widget: a visible label, counts in a live region, tokens reachable by
  keyboard with their id and bytes in text, a code point label where no font draws a character;
- speed: keystroke to repaint with 100 KB and 1 MB in the box, the longest main-thread task while
  typing, and pasting 100,000 line breaks or spaces, recorded for ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import pytest

from tests._cdp import as_javascript_holds, well_formed
from tests._ci import missing_tool
from tests._parity import tiktoken_encoding
from tests.conftest import ROOT
from tests.test_book import CHROMIUM

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import tokcourse_book  # noqa: E402
import tokcourse_playground as playground  # noqa: E402

ARTIFACTS = ROOT / "_build" / "test-artifacts"
SOURCES = ROOT / "book" / "_static" / "playground"
START = "Hello world! I'm here.\n  x <|endoftext|>"


def write_site(folder: Path, body: str, stepper: bool = False) -> Path:
    """A page with the playground's scripts and data, as the book ships them (and the merge
    stepper's, with ``stepper``)."""
    static = folder / "_static"
    if not (static / "playground" / "data").is_dir():
        playground.write_data(static)
        playground.copy_sources(SOURCES, static)
    scripts = "".join(
        f'<script src="_static/playground/{name}"></script>'
        for name in (*tokcourse_book.PLAYGROUND_SCRIPTS, *(["stepper.js"] if stepper else []))
        if (SOURCES / name).is_file()
    )
    if stepper:
        scripts += '<link rel="stylesheet" href="_static/playground/stepper.css">'
    page = folder / "page.html"
    page.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>playground</title>'
        '<link rel="stylesheet" href="_static/playground/playground.css">'
        f"{scripts}</head><body><main>{body}</main></body></html>",
        encoding="utf-8",
    )
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if CHROMIUM is None:
        missing_tool("chromium not installed (apt-get install chromium; .ci/run does it)")
    folder = tmp_path_factory.mktemp("widget")
    return write_site(
        folder,
        f'<div class="tokcourse-playground" data-text="{START.replace("<", "&lt;")}"></div>',
    )


def open_widget(browser, site: Path, width: int = 1200):
    page = browser.open(site.as_uri(), width=width)
    page.wait_for("document.querySelector('.tokcourse-playground').dataset.ready === 'yes'")
    return page


BOX = "[...tokcoursePlayground.boxes.values()].at(-1)"
PASTE = """((text, all) => {
  const t = document.querySelector('textarea'); t.focus();
  if (all) t.setSelectionRange(0, t.value.length);
  const data = new DataTransfer(); data.setData('text/plain', text);
  const init = {clipboardData: data, bubbles: true, cancelable: true};
  t.dispatchEvent(new ClipboardEvent('paste', init));
  return [performance.now(), BOX.version];
})""".replace("BOX", BOX)


def paste(page, text: str, replace_all: bool = True) -> tuple[float, int]:
    return page.evaluate(f"{PASTE}({json.dumps(text)}, {json.dumps(replace_all)})")


def painted(page, version: int, timeout: float = 120) -> float:
    """When the widget finished drawing `version` of its text (page clock, ms)."""
    return page.wait_for(
        f"(() => {{ const b = {BOX}; if (!(b.painted >= {version})) return 0;"
        f" const t = b.timings.find((t) => t.version === {version});"
        " return t ? t.painted : 1; })()",
        timeout=timeout,
    )


def rows(page) -> dict[str, dict]:
    """Each row's count and the tokens it drew: ids, offsets, text."""
    return page.evaluate(
        f"""(() => {{ const b = {BOX}, out = {{}};
        for (const name of b.names) {{ const r = b.rows[name], d = r.data;
          if (!d) {{ out[name] = null; continue; }}
          out[name] = {{count: d.count, ids: d.win.ids, starts: d.win.starts, ends: d.win.ends,
                       from: d.win.from, to: d.win.to, more: d.win.more,
                       drawn: r.txt.textContent, boxes: r.txt.querySelectorAll('.tok').length}}; }}
        return out; }})()"""
    )


def utf16_slice(text: str, start: int, end: int) -> str:
    """``text[start:end]`` counted in UTF-16 code units, as JavaScript offsets are."""
    return text.encode("utf-16-le", "surrogatepass")[2 * start : 2 * end].decode(
        "utf-16-le", "surrogatepass"
    )


def reference_ids(name: str, text: str) -> list[int] | None:
    """The real library's ids for ``text`` (None: the library refuses it), as each row shows:
    tiktoken with every special token allowed, sentencepiece without BOS, Hugging Face
    ``tokenizers`` without [CLS]/[SEP]."""
    if name == "mistral_v1":
        from tests.test_playground_sentencepiece import theirs

        joined = as_javascript_holds(text)
        if any(0xD800 <= ord(c) <= 0xDFFF for c in joined):
            return None  # sentencepiece refuses a lone surrogate
        return theirs().encode(joined)
    if name == "bert_uncased":
        from tests.test_wordpiece_parity import from_json

        return from_json().encode(well_formed(text), add_special_tokens=False).ids
    return tiktoken_encoding(name).encode(well_formed(text), allowed_special="all")


ALL = [*playground.ENCODINGS, "mistral_v1", "bert_uncased"]


# ----------------------------------------------------------------------- ids and offsets


FAITHFUL = [
    "a\r\nb\r\n",  # Windows line ends: [64, 319, 65, 319] in cl100k, not [64, 198, 65, 198]
    "old Mac\rline ends\r\r",
    "x\ufeffy",  # U+FEFF inside a word
    "\ufeffstarts with a BOM",
    "zero\u200bwidth\u200d and\u2028separators\u00a0\u3000",
    "tab\there\r\n\r\n  <|endoftext|> and <|endofprompt|>",
    "👋🏽 naïve café 안녕하세요 中文",
]


@pytest.mark.parametrize("text", FAITHFUL, ids=repr)
def test_pasted_text_is_tokenized_byte_for_byte(browser, site, text):
    page = open_widget(browser, site)
    _, version = paste(page, text)
    painted(page, version)
    assert page.evaluate(f"{BOX}.model.text") == text
    drawn = rows(page)
    for name in ALL:
        assert drawn[name]["ids"] == reference_ids(name, text), name
    for name in playground.ENCODINGS:
        row = drawn[name]
        assert row["count"] == len(row["ids"])
        # each token's offsets cover the characters its bytes come from
        enc = tiktoken_encoding(name)
        rebuilt = b"".join(enc.decode_single_token_bytes(i) for i in row["ids"])
        assert rebuilt == text.encode("utf-8")
        for i, (a, b) in enumerate(zip(row["starts"], row["ends"], strict=True)):
            piece = enc.decode_single_token_bytes(row["ids"][i])
            chars = utf16_slice(text, a, b)
            assert piece in chars.encode("utf-8"), (name, i, piece, chars)
    # every invisible character is drawn; "\r" as ␍
    shown = drawn["cl100k_base"]["drawn"]
    # (␍, or its code point where no font on the machine has the ␍ glyph)
    assert shown.count("␍") + shown.count("⟨U+000D⟩") == text.count("\r")
    assert shown.count("⟨U+FEFF⟩") == text.count("\ufeff")
    assert shown.count("⟨U+200B⟩") == text.count("\u200b")
    assert page.errors() == []


def test_typing_after_a_paste_keeps_the_carriage_returns(browser, site):
    page = open_widget(browser, site)
    _, version = paste(page, "a\r\nb\r\nc")
    painted(page, version)
    page.evaluate("document.querySelector('textarea').setSelectionRange(2, 2)")  # before "b"
    page.send("Input.insertText", text="X")
    painted(page, version + 1)
    text = page.evaluate(f"{BOX}.model.text")
    assert text == "a\r\nXb\r\nc"
    assert rows(page)["cl100k_base"]["ids"] == reference_ids("cl100k_base", text)
    page.send(
        "Input.dispatchKeyEvent",
        type="keyDown",
        key="Backspace",
        code="Backspace",
        windowsVirtualKeyCode=8,
    )
    page.send(
        "Input.dispatchKeyEvent",
        type="keyUp",
        key="Backspace",
        code="Backspace",
        windowsVirtualKeyCode=8,
    )
    painted(page, version + 2)
    assert page.evaluate(f"{BOX}.model.text") == "a\r\nb\r\nc"


def test_a_wrapped_token_is_one_box(browser, site):
    page = open_widget(browser, site, width=480)
    _, version = paste(page, "word " * 30 + " " * 300 + "x")
    painted(page, version)
    widths = page.evaluate(
        """[...document.querySelectorAll('.row[data-encoding=cl100k_base] .tok')]
           .map((t) => [t.getClientRects().length, t.textContent.length, t.offsetHeight])"""
    )
    assert all(rects == 1 for rects, _, _ in widths)
    # the long white-space token is taller than a line: it wrapped, inside its own box
    longest = max(widths, key=lambda w: w[1])
    assert longest[1] >= 100 and longest[2] > 2 * min(w[2] for w in widths)


def test_the_widget_draws_with_the_visualizers_colours():
    """The palette and marks of viz.py, whose contrast and colour-blind checks are test_colour's."""
    import re

    from tokcourse.course import viz

    script = (SOURCES / "playground.js").read_text(encoding="utf-8")
    palette = re.search(r"const PALETTE = \[([^\]]*)\]", script)[1]
    assert tuple(re.findall(r'"(#[0-9a-f]{6})"', palette)) == viz.PALETTE
    css = (SOURCES / "playground.css").read_text(encoding="utf-8")
    assert f".ws {{ color: {viz.MARK_COLOR}; }}" in css
    assert f"color: {viz.RAW_COLOR};" in css
    assert f"background: {viz.SPECIAL_BACKGROUND}; color: {viz.SPECIAL_COLOR};" in css


# ----------------------------------------------------------------------- the engine


ENGINE_RUNNER = """(async (seed, base, snippets, edits) => {
  const api = tokcoursePlayground, out = {};
  let state = seed >>> 0;
  const rand = (n) => { state = (Math.imul(state, 1664525) + 1013904223) >>> 0; return state % n; };
  for (const name of api.TOKENIZERS) {
    const tok = await api.tokenizer(name);
    const liar = Object.create(tok);
    liar.safeBoundary = () => true;  // the control: claims every boundary is safe
    const engines = [new api.Incremental(tok), new api.Incremental(liar)];
    let text = base, bad = [0, 0], reencoded = 0;
    for (let e = 0; e < edits; e++) {
      const at = rand(text.length + 1), cut = rand(4) === 0 ? rand(12) : 0;
      const add = rand(3) === 0 ? "" : snippets[rand(snippets.length)];
      text = api.fixSurrogates(text.slice(0, at) + add + text.slice(at + cut));
      const whole = api.encodeWhole(tok, text);
      engines.forEach((engine, i) => {
        engine.update(text);
        const same = engine.ids.length === whole.ids.length
          && whole.ids.every((id, k) => id === engine.ids[k]
            && whole.starts[k] === engine.starts[k] && whole.ends[k] === engine.ends[k]);
        if (!same) bad[i]++;
        if (i === 0) reencoded += engine.reencoded;
      });
    }
    out[name] = {bad: bad[0], liarBad: bad[1], meanReencoded: reencoded / edits,
                 length: text.length};
  }
  return out;
})"""

SNIPPETS = [
    " ",
    "  ",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "a",
    "x",
    "The",
    " the",
    "'s",
    "'LL",
    "’",
    "1",
    "234",
    "!",
    "?!",
    "...",
    "<|endoftext|>",
    "<|",
    "|>",
    "endoftext",
    "<|endofprompt",
    "é",
    "\u0301",
    "👋",
    "🏽",
    "\u200d",
    "\ufeff",
    "안녕",
    "中文",
    "\ud83d",
    "\ude00",
    "HTTPServer",
    "camelCase",
    "    ",
    "\n\n\n",
    " \n ",
    "a" * 40,
    " " * 40,
]


def test_the_incremental_engine_equals_encoding_the_whole_text(browser, site):
    from tokcourse.course.data import corpora

    page = open_widget(browser, site)
    base = corpora.botchan_text()[:3000] + "\r\n <|endoftext|> 12345 don't\n\n  "
    out = page.evaluate(
        f"{ENGINE_RUNNER}(26, {json.dumps(base)}, {json.dumps(SNIPPETS)}, 400)", timeout=600
    )
    assert set(out) == set(ALL)
    for name, result in out.items():
        assert result["bad"] == 0, (name, result)
        # local: an edit re-encodes a few chunks, not the text
        assert result["meanReencoded"] < result["length"] / 10, (name, result)
    # the control: trusting every boundary gets some edits wrong, so the check can fail
    assert sum(r["liarBad"] for r in out.values()) > 0, out


# ----------------------------------------------------------------------- accessibility


def test_label_live_region_and_keyboard(browser, site):
    page = open_widget(browser, site)
    label = page.evaluate(
        "(() => { const t = document.querySelector('textarea');"
        " return [t.labels.length && t.labels[0].textContent, t.labels[0].offsetHeight > 0]; })()"
    )
    assert label == ["Text to tokenize", True]
    status = page.evaluate(
        "(() => { const s = document.querySelector('.tkp-status');"
        " return [s.getAttribute('role'), s.getAttribute('aria-live'), s.textContent]; })()"
    )
    assert status[:2] == ["status", "polite"]
    n = len(reference_ids("cl100k_base", START))
    assert f"GPT-4: {n}" in status[2]
    # Tab from the textarea reaches the first row's first token; arrows move; Enter is harmless
    page.evaluate("document.querySelector('textarea').focus()")
    page.send(
        "Input.dispatchKeyEvent", type="keyDown", key="Tab", code="Tab", windowsVirtualKeyCode=9
    )
    page.send(
        "Input.dispatchKeyEvent", type="keyUp", key="Tab", code="Tab", windowsVirtualKeyCode=9
    )
    focused = page.evaluate("document.activeElement.className")
    assert "tok" in focused
    for _ in range(2):
        page.send(
            "Input.dispatchKeyEvent",
            type="keyDown",
            key="ArrowRight",
            code="ArrowRight",
            windowsVirtualKeyCode=39,
        )
    details = page.evaluate("document.querySelector('.tkp-details').textContent")
    first_row = page.evaluate(f"{BOX}.names[0]")
    ids = reference_ids(first_row, START)
    enc = tiktoken_encoding(first_row)
    assert f"token 3 of {len(ids)}" in details and f"id {ids[2]}" in details
    assert repr(enc.decode_single_token_bytes(ids[2])) in details
    assert page.evaluate("document.activeElement.getAttribute('aria-selected')") == "true"
    assert page.evaluate("document.activeElement.getAttribute('aria-label')").startswith(
        "token 3 of"
    )
    # a click selects too
    page.evaluate("document.querySelectorAll('.row')[1].querySelectorAll('.tok')[1].click()")
    assert "token 2 of" in page.evaluate("document.querySelector('.tkp-details').textContent")


def test_characters_without_a_font_show_their_code_point(browser, site):
    page = open_widget(browser, site)
    text = "中 안 é ж 👋"
    _, version = paste(page, text)
    painted(page, version)
    drawn = page.evaluate(
        """(() => { const row = document.querySelector('.row[data-encoding=o200k_base] .txt');
          const labels = [...row.querySelectorAll('.nofont')].map((n) => n.textContent);
          return [row.textContent, labels]; })()"""
    )
    shown, labels = drawn
    for ch in "中안éж":
        label = f"⟨U+{ord(ch):04X}⟩"
        assert (ch in shown) != (label in labels), (ch, shown, labels)
    assert "é" in shown and "ж" in shown  # the book's fonts cover these


CONTRAST_TEXTS = [
    # BERT's gaps and marks, raw bytes, a special token, [UNK], no font, a refused row
    "a  b\t\u200bc\n 👋🏽 <|endoftext|> \U00013000 \u0378 x\ud800",
    " \n\t  ",  # white space alone: BERT's "(no tokens)", drawn between no boxes
]


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_every_mark_reaches_aa_contrast_in_the_book_theme(browser, tmp_path, mode):
    """In the book's theme, light and dark: every text the widget draws (marks, gaps, notes,
    code point labels, raw bytes) reaches 4.5:1 on what is behind it."""
    from tests.test_playground_stepper import CONTRAST_JS, theme_css

    links = "".join(f'<link rel="stylesheet" href="{css.as_uri()}">' for css in theme_css())
    body = (
        f'<script>document.documentElement.dataset.theme = "{mode}";'
        f'document.documentElement.dataset.mode = "{mode}";</script>{links}'
        '<div class="bd-container"><main class="bd-main"><div class="bd-article-container">'
        '<article class="bd-article"><section><h2>Tokenizer playground</h2>'
        '<div class="tokcourse-playground" data-text="x"></div>'
        "</section></article></div></main></div>"
    )
    page = open_widget(browser, write_site(tmp_path / f"theme-{mode}", body))
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == ("rgb(255, 255, 255)" if mode == "light" else "rgb(18, 18, 18)")
    page.evaluate(f"window.__contrast = (() => {{ {CONTRAST_JS}; return contrast; }})(); 1")
    seen = set()
    for text in CONTRAST_TEXTS:
        _, version = paste(page, text)
        painted(page, version)
        worst = page.evaluate("window.__contrast(document.querySelector('.tokcourse-playground'))")
        assert worst[0] >= 4.5, (mode, text, worst)
        seen |= set(
            page.evaluate(
                "[...document.querySelectorAll('.tokcourse-playground .txt *')]"
                ".flatMap((n) => [...n.classList])"
            )
        )
    # every kind of mark was on the page when it was measured
    assert {"gap", "ws", "empty", "raw", "special", "unknown"} <= seen, seen


def test_positions_and_lengths_are_whole_characters(browser, site):
    """The text box's part and the rows' window say where they are in characters (code points,
    as the status line counts them), whole numbers, for one long line and for many lines."""
    import re

    numbers = re.compile(r"characters ([\d,.]+)–([\d,.]+) of ([\d,.]+)")
    for text in (
        ("We're 👋 here. " * 70_000)[:1_000_000],
        "".join(f"line {i} 👋 é\n" for i in range(60_000)),
    ):
        page = open_widget(browser, site)
        _, version = paste(page, text)
        painted(page, version)
        status = page.wait_for(
            f"(() => {{ const s = document.querySelector('.tkp-status').textContent;"
            f" return s.startsWith({json.dumps(f'{len(text):,} characters')}) && s; }})()",
            timeout=30,
        )
        assert status
        shown = page.evaluate(
            f"(() => {{ const b = {BOX}; return [b.partWhere.textContent, b.where.textContent,"
            " document.querySelector('textarea').value, b.model.ea, b.model.eb]; })()"
        )
        part, where, box, ea, eb = shown
        assert isinstance(ea, int) and isinstance(eb, int), (ea, eb)
        for sentence in (part, where):
            found = numbers.search(sentence)
            assert found, sentence
            assert "." not in "".join(found.groups()), sentence
            first, last, total = (int(g.replace(",", "")) for g in found.groups())
            assert total == len(text), sentence  # one unit: the status line's
            assert 1 <= first <= last <= total
        first, last, _ = (int(g.replace(",", "")) for g in numbers.search(part).groups())
        assert text[first - 1 : last] == box  # the box holds exactly those characters
        first, last, _ = (int(g.replace(",", "")) for g in numbers.search(where).groups())
        row = rows(page)["cl100k_base"]
        assert isinstance(row["from"], int) and isinstance(row["to"], int)
        assert text[first - 1 : last] == utf16_slice(text, row["from"], row["to"])
        assert page.errors() == []


# ----------------------------------------------------------------------- speed


TYPE_AT = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.8, 0.6]


def keystrokes(page, length: int) -> tuple[list[float], list[float], list[dict]]:
    """Type one character at each of TYPE_AT's places.

    Returns the ms from each keystroke to its repaint, the long main-thread tasks meanwhile, and
    where each keystroke's time went (textarea, debounce, worker round trip, drawing).
    """
    page.evaluate(
        "window.__long = []; new PerformanceObserver((l) => { for (const e of l.getEntries())"
        " window.__long.push(e.duration); }).observe({type: 'longtask'}); 1"
    )
    times, phases = [], []
    for where in TYPE_AT:
        caret = page.evaluate(
            f"(() => {{ const t = document.querySelector('textarea');"
            f" const at = Math.floor(t.value.length * {where}); t.setSelectionRange(at, at);"
            f" return at; }})()"
        )
        assert caret >= 0
        time.sleep(0.1)
        version = page.evaluate(f"{BOX}.version")
        page.send("Input.insertText", text="x")
        done = painted(page, version + 1)
        entry = page.evaluate(f"{BOX}.timings.find((t) => t.version === {version + 1})")
        times.append(done - entry["at"])
        phases.append(
            {
                "textarea": entry["input"] - entry["at"],
                "debounce": entry["sent"] - entry["input"],
                "worker": entry["received"] - entry["sent"],
                "paint": entry["painted"] - entry["received"],
            }
        )
    return times, page.evaluate("window.__long"), phases


def test_speed_in_the_browser(browser, site):
    """Record the widget's speed; the targets are judged in benchmarks/RESULTS.md.

    Only a freeze fails here (ten times a target), so a slow shared machine does not flake.
    """
    from tokcourse.course.data import corpora

    novel = corpora.botchan_text()
    report: dict[str, dict] = {}
    for label, text in (
        ("100 KB", novel.encode("utf-8")[:100_000].decode("utf-8", "ignore")),
        ("1 MB", (novel * 5).encode("utf-8")[:1_000_000].decode("utf-8", "ignore")),
        ("100k line breaks", "\n" * 100_000),
        ("100k spaces", " " * 100_000),
    ):
        page = open_widget(browser, site)
        t0, version = paste(page, text)
        pasted = painted(page, version) - t0
        times, long_tasks, phases = keystrokes(page, len(text))
        report[label] = {
            "characters": len(text),
            "paste ms": round(pasted, 1),
            "keystroke ms": [round(t, 1) for t in times],
            "phases ms (median)": {
                k: round(statistics.median(p[k] for p in phases), 1) for k in phases[0]
            },
            "keystroke median ms": round(statistics.median(times), 1),
            "keystroke max ms": round(max(times), 1),
            "longest task while typing ms": round(max(long_tasks, default=0), 1),
            "counts": {name: row["count"] for name, row in rows(page).items()},
        }
        final = page.evaluate(f"{BOX}.model.text")
        for name in ALL:  # right, not only fast
            assert report[label]["counts"][name] == len(reference_ids(name, final))
    report["browser"] = {"version": browser.send("Browser.getVersion", {})["product"]}
    report["generated"] = {"utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "playground-widget.json").write_text(json.dumps(report, indent=1) + "\n")
    assert report["100 KB"]["keystroke max ms"] < 1_000, report
    assert report["1 MB"]["keystroke max ms"] < 10_000, report
    for label in ("100k line breaks", "100k spaces"):
        assert report[label]["paste ms"] < 20_000, report


def test_the_page_is_offline_and_quiet(browser, site):
    page = open_widget(browser, site)
    assert page.errors() == []
    assert page.evaluate(f"{BOX}.names") == [
        n for n in page.evaluate("tokcoursePlayground.TOKENIZERS")
    ]


def test_a_damaged_data_file_is_reported_not_fatal(browser, site, tmp_path):
    folder = tmp_path / "site"
    shutil.copytree(site.parent / "_static", folder / "_static")
    (folder / "_static" / "playground" / "data" / "cl100k_base.js").write_text(
        'tokcoursePlayground.addData("cl100k_base", {"size": 3, "special": {}, '
        '"lengths": "AQE=", "bytes": "YWI="});\n'
    )
    page = browser.open(
        write_site(folder, '<div class="tokcourse-playground" data-text="hi"></div>').as_uri()
    )
    page.wait_for("document.querySelector('.tokcourse-playground').dataset.ready === 'yes'")
    stats = page.evaluate(
        "document.querySelector('.row[data-encoding=cl100k_base] .stats').textContent"
    )
    assert "could not load" in stats and "damaged" in stats
    assert rows(page)["o200k_base"]["ids"] == reference_ids("o200k_base", "hi")


def test_random_texts_match(browser, site):
    """A seeded fuzz through the widget itself (paste, worker, window)."""
    rng = random.Random(7)
    alphabet = list(" \n\r\tab'sT1é👋\u200d\ufeff中<|>▁")
    alphabet += ["<|endoftext|>", "don't", "  ", "\ud800"]
    page = open_widget(browser, site)
    for _ in range(25):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        _, version = paste(page, text)
        painted(page, version)
        drawn = rows(page)
        for name in ALL:
            want = reference_ids(name, text)
            if want is None:  # refused: the row says so, with no ids
                assert drawn[name] is None, (name, text)
                assert "refuses this text" in page.evaluate(
                    f"document.querySelector('.row[data-encoding={name}] .txt').textContent"
                )
            else:
                assert drawn[name]["ids"] == want, (name, text)


def test_select_all_in_a_long_text_means_all_of_it(browser, site):
    page = open_widget(browser, site)
    text = "".join(f"line {i}: some words here\r\n" for i in range(6000))  # 6,000 lines
    _, version = paste(page, text)
    painted(page, version)
    assert page.evaluate(f"{BOX}.model.whole") is False  # the box holds a part
    # Ctrl+A, then Backspace: the whole text goes, not only the part in the box
    page.evaluate(
        "(() => { const t = document.querySelector('textarea'); t.focus();"
        " t.dispatchEvent(new KeyboardEvent('keydown', {key: 'a', ctrlKey: true, bubbles: true}));"
        " t.select(); })()"
    )
    backspace = {"key": "Backspace", "code": "Backspace", "windowsVirtualKeyCode": 8}
    page.send("Input.dispatchKeyEvent", type="keyDown", **backspace)
    page.send("Input.dispatchKeyEvent", type="keyUp", **backspace)
    painted(page, version + 1)
    assert page.evaluate(f"{BOX}.model.text") == ""
    assert rows(page)["cl100k_base"]["count"] == 0
    # the counts reach the live region once typing pauses
    page.wait_for(
        "document.querySelector('.tkp-status').textContent.startsWith('0 characters')", timeout=10
    )
    # Clear all empties a long text too
    _, version = paste(page, text)
    painted(page, version)
    page.evaluate(f"{BOX}.clearButton.click()")
    painted(page, version + 1)
    assert page.evaluate(f"{BOX}.model.text") == ""


def test_mistral_in_the_stepper_from_a_selected_token(browser, tmp_path):
    from tests.test_playground_sentencepiece import theirs

    text = "naïve café"
    body = (
        f'<div class="tokcourse-playground" data-text="{text}"></div>'
        '<div class="tokcourse-bpe-stepper" data-encoding="cl100k_base" data-text="x"></div>'
    )
    page = open_widget(browser, write_site(tmp_path / "stepper-site", body, stepper=True))
    # ▁ (a space inside SentencePiece pieces) is drawn as a mark
    marks = page.evaluate(
        "[...document.querySelectorAll('.row[data-encoding=mistral_v1] .ws')]"
        ".map((m) => m.textContent).join('')"
    )
    assert "▁" in marks
    # the Mistral row's last token (" café"'s chunk), selected by keyboard; Enter opens it
    page.evaluate("document.querySelector('.row[data-encoding=mistral_v1] .tok').focus()")
    page.send(
        "Input.dispatchKeyEvent", type="keyDown", key="End", code="End", windowsVirtualKeyCode=35
    )
    page.send(
        "Input.dispatchKeyEvent",
        type="keyDown",
        key="Enter",
        code="Enter",
        windowsVirtualKeyCode=13,
    )
    box = "document.querySelector('.tokcourse-bpe-stepper')"
    page.wait_for(f"{box}.dataset.steps !== undefined")
    sentence = page.evaluate(f"{box}.querySelector('[aria-live]').textContent")
    assert "characters, one part each" in sentence and "score" in sentence
    parts = page.evaluate(f"{box}.querySelector('.tkbs-parts').textContent")
    assert "é" in parts and "⟨E9⟩" not in parts and "⟨2581⟩" not in parts
    # the keyboard follows the view: focus is on the stepper's title
    assert page.evaluate("document.activeElement.className") == "tkbs-title"
    # at the last step, the chunk's ids are sentencepiece's for " café" after "naïve"
    page.evaluate(f"{box}.querySelector('button[aria-label=\"last step\"]').click()")
    ids = [int(i) for i in page.evaluate(f"{box}.dataset.ids").split()]
    whole = theirs().encode(text)
    assert ids == whole[len(whole) - len(ids) :]
    assert page.errors() == []


def test_the_stepper_takes_a_long_chunk(browser, tmp_path):
    """A chunk of 30,000 bytes: every merge replayed, a window of parts and rows drawn."""
    text = " " * 30_000 + "x"  # GPT-4: one chunk of 29,999 spaces, then " x"
    body = '<div class="tokcourse-bpe-stepper" data-encoding="cl100k_base" data-text="x"></div>'
    page = open_widget_page(browser, write_site(tmp_path / "long-site", body, stepper=True))
    box = "document.querySelector('.tokcourse-bpe-stepper')"
    started = page.evaluate(
        f"(async () => {{ const t0 = performance.now();"
        f" await tokcoursePlayground.showMerges('cl100k_base', {json.dumps(text)}, 0, 29999);"
        f" return performance.now() - t0; }})()"
    )
    steps = int(page.evaluate(f"{box}.dataset.steps"))
    enc = tiktoken_encoding("cl100k_base")
    want = enc.encode(" " * 29_999)
    assert steps == 29_999 - len(want)  # each merge joins two parts into one
    drawn = page.evaluate(f"{box}.querySelectorAll('.tkbs-part').length")
    assert drawn <= 400 and "parts after" in page.evaluate(
        f"{box}.querySelector('.tkbs-parts').textContent"
    )
    assert page.evaluate(f"{box}.querySelectorAll('tbody tr').length") <= 200
    # the middle step by the slider, then the last: the final ids are tiktoken's
    page.evaluate(
        f"(() => {{ const s = {box}.querySelector('input[type=range]'); s.value = {steps // 2};"
        " s.dispatchEvent(new Event('input', {bubbles: true})); })()"
    )
    assert page.evaluate(f"{box}.dataset.step") == str(steps // 2)
    assert f"▶ {steps // 2}" in page.evaluate(f"{box}.querySelector('tbody').textContent")
    page.evaluate(f"{box}.querySelector('button[aria-label=\"last step\"]').click()")
    assert [int(i) for i in page.evaluate(f"{box}.dataset.ids").split()] == want
    assert started < 10_000  # loaded in seconds at most, never a frozen page
    assert page.errors() == []


def open_widget_page(browser, site: Path):
    page = browser.open(site.as_uri())
    page.wait_for("document.querySelector('.tokcourse-bpe-stepper').dataset.ready === 'yes'")
    return page
