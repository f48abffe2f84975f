"""The playground's BERT uncased row: our JavaScript WordPiece gives Hugging Face's ids and offsets.

``book/_static/playground/wordpiece.js`` ports ``tokcourse.wordpiece`` (chapter 11) with the
Unicode tables ``book/_ext/playground_wordpiece.py`` writes at build time. No built book here:
the data file is written with ``scripts()`` into a temporary folder, next to ``core.js``,
``wordpiece.js`` and a test page, and headless Chromium (no network) runs it once for the
module. The reference is the real ``tokenizers`` library on all-MiniLM-L6-v2's
``tokenizer.json`` (``add_special_tokens=False``), as ``tests/test_wordpiece_parity.py`` loads it.

Inputs: Botchan line by line, 200 KB of Python code line by line, the parallel messages, hard
strings (the parity suite's edge cases and FRAGMENTS in contexts, the characters whose tables
tokenizers has differently from Python, long words, lone surrogates) and a seeded fuzz of
``max(3000, TOKCOURSE_PARITY_EXAMPLES)`` strings. Checked: ids, offsets (HF's code points turned
into UTF-16), the normalizer on every code point and on every string, chunk by chunk against the
whole text in one chunk, ``safeBoundary`` against random edits, the Web Worker copy, and a
control (the same port with the browser's own Unicode tables must get some strings wrong).
Speeds go to ``_build/test-artifacts/playground-wordpiece.json``.
"""

from __future__ import annotations

import functools
import json
import random
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests._cdp import well_formed
from tests._ci import missing_tool
from tests._parity import FRAGMENTS, PARITY_EXAMPLES
from tests.conftest import ROOT, private_cache
from tests.test_book import CHROMIUM
from tests.test_wordpiece_parity import EDGE_CASES, from_json

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import playground_wordpiece as pw  # noqa: E402

STATIC = ROOT / "book" / "_static" / "playground"
ARTIFACTS = ROOT / "_build" / "test-artifacts"
FUZZ_STRINGS = max(3_000, PARITY_EXAMPLES)


# ----------------------------------------------------------------------- build-time data


def parse_script(text: str) -> dict:
    prefix, suffix = 'tokcoursePlayground.addData("bert_uncased", ', ");\n"
    assert text.startswith(prefix) and text.endswith(suffix)
    assert text.isascii()  # loaded by a <script> tag whatever the page's charset
    return json.loads(text[len(prefix) : -len(suffix)])


def test_the_vocabulary_round_trips():
    from tokcourse.course.data import corpora
    from tokcourse.wordpiece import load_vocab

    scripts = pw.scripts()
    assert list(scripts) == ["bert_uncased"]
    data = parse_script(scripts["bert_uncased"])
    tokens = data["vocab"].split("\n")
    assert data["size"] == len(tokens) == 30_522
    assert {t: i for i, t in enumerate(tokens)} == load_vocab(corpora.minilm_vocab_path())
    assert data["special"] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert (data["unk"], data["prefix"], data["max_chars"]) == ("[UNK]", "##", 100)
    model = json.loads(corpora.minilm_tokenizer_json_path().read_text(encoding="utf-8"))
    assert model["model"]["vocab"] == {t: i for i, t in enumerate(tokens)}
    assert model["model"]["max_input_chars_per_word"] == 100
    added = {t["content"] for t in model["added_tokens"] if t["special"]}
    assert added == set(data["special"])


def _ranges(text: str) -> set[int]:
    from tokcourse.unicode_pin import parse_ranges

    return {c for a, b in parse_ranges(text) for c in range(a, b + 1)}


def _mapping(text: str) -> dict[int, str]:
    out = {}
    for item in text.split():
        source, _, target = item.partition(">")
        out[int(source, 16)] = "".join(chr(int(h, 16)) for h in target.split(".") if h)
    return out


def test_the_unicode_tables_round_trip():
    """Read back, every table is the package's function on every code point."""
    import unicodedata

    from tokcourse import wordpiece as wp

    tables = parse_script(pw.script())["tables"]
    sets = {k: _ranges(tables[k]) for k in ("drop", "white", "cjk", "punct", "mn", "kept")}
    overrides = {c: chr(c) for c in sets["kept"]} | _mapping(tables["mapped"])
    decomp = _mapping(tables["decomp"])
    lower = _mapping(tables["lower_long"])
    for item in tables["lower"].split():
        span, delta = item.split(":")
        span, _, step = span.partition("/")
        ((a, b),) = [(min(r), max(r)) for r in [sorted(_ranges(span))]]
        for c in range(a, b + 1, int(step or 1)):
            lower[c] = chr(c + int(delta, 16))
    ccc = {}
    for item in tables["ccc"].split():
        span, n = item.split(":")
        ccc |= dict.fromkeys(_ranges(span), int(n))
    crate_mn = {0x1734}  # deleted by the crate as a mark of class 9: Mn, not an override
    assert {ord(k): v for k, v in wp._overrides().items() if ord(k) not in crate_mn} == overrides
    assert all(wp._overrides()[chr(c)] == "" and unicodedata.combining(chr(c)) for c in crate_mn)
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        assert (c in sets["drop"]) == wp.is_control(ch), hex(c)
        assert (c in sets["white"]) == wp.is_whitespace(ch), hex(c)
        assert (c in sets["cjk"]) == wp.is_cjk(ch), hex(c)
        assert (c in sets["punct"]) == wp.is_punctuation(ch), hex(c)
        assert (c in sets["mn"]) == (unicodedata.category(ch) == "Mn" or c in crate_mn), hex(c)
        assert ccc.get(c, 0) == unicodedata.combining(ch), hex(c)
        assert lower.get(c, ch) == ch.lower(), hex(c)
        if not 0xAC00 <= c <= 0xD7A3:  # Hangul syllables: wordpiece.js computes them
            assert decomp.get(c, ch) == unicodedata.normalize("NFD", ch), hex(c)
    assert tables["unicode"] == unicodedata.unidata_version


def test_a_damaged_vocabulary_is_refused(tmp_path, monkeypatch):
    from tokcourse.course.data import corpora
    from tokcourse.course.data.store import AssetError

    good = corpora.minilm_vocab_path().read_bytes()
    cache = private_cache([corpora.minilm_vocab_path()], tmp_path, monkeypatch)
    (cache / corpora.minilm_vocab_path().name).write_bytes(good.replace(b"[UNK]", b"[UNQ]"))
    with pytest.raises(AssetError):  # the store's pinned hash
        pw.vocab_tokens()
    cases = {
        b"[PAD]\n[UNK]\nthe\nthe\n": "line 4 repeats 'the' of line 3",
        b"[UNK]\n\xff\xfe\n": "line 2 is not UTF-8",
        b"[UNK]\n\nx\n": "line 2 is empty",
        b"[PAD]\na\n": "no \\[UNK\\] token",
    }
    for data, message in cases.items():
        with pytest.raises(ValueError, match=message):
            pw.vocab_tokens(data)
    # white space at a line's end is trimmed, as load_vocab (Rust's trim_end) does
    assert pw.vocab_tokens("[UNK]\r\na \t\n##b\u3000".encode()) == ["[UNK]", "a", "##b"]


# ----------------------------------------------------------------------- the test inputs


def override_strings() -> list[str]:
    """Every character tokenizers' tables see differently from Python's, between letters."""
    from tokcourse.wordpiece import _overrides

    chars = sorted(_overrides())
    return [" ".join(f"a{ch}b" for ch in chars[i : i + 40]) for i in range(0, len(chars), 40)]


def hard_strings() -> list[str]:
    out = list(EDGE_CASES)
    for f in FRAGMENTS:
        out += [f, f"a{f}b", f * 3, f" {f} ", f"x{f}\n", f"{f}s", f"[SEP]{f}"]
    out += [
        "Crème Brûlée, naïve café, Ångström, Ærø, øre, Łódź, Škoda",
        "ΟΔΟΣ ὈΔΥΣΣΕΎΣ ΣΑΣ σας",  # final sigma: BERT lower-cases one character at a time
        "İSTANBUL İi Iı i\u0307",  # dotted İ
        "中文字符 日本語のテキスト 한국어 \U00020000\U0002a700 ab\U00020000cd \uf900\uf901",
        "a\x00b\x07c\x1bd\x7fe\x9ff\u200bg\u200ch\u200di\u2060j\ufeffk\u00adl\ufffdm",
        "\ufeff\ufeffBOM at the start \ufeff",
        "windows\r\nline\r\nends\r\n\r\n\rand\rcr",
        "x" * 100,
        "x" * 101,
        "a\u0301" * 100,  # 200 code points, 100 after accent stripping: not [UNK]
        "a\u0301" * 101,
        "\u200b".join("abcdefghij" * 11),  # long once the zero-width spaces are dropped
        "supercalifragilisticexpialidocious" * 3 + " word",
        "a\u0316\u0301\u0316\u0301 e\u0301\u0316 x\U0001d16d\U0001d165y z\u0f73\u0f75",
        "\u1e9b\u0323 \u01d5\u0316 \u0344 \u0f77 \ufb2c \u2126 \u212b \u1f80",
        "x\u0345\u0301" * 40,  # a long run of marks of alternating classes
        # U+1734: the crate's Mn of class 9, sorted with its neighbours before it goes
        # (tokcourse.wordpiece.normalize makes it a barrier: other order, same ids)
        "\U0001d16d\u1734\U0001d165 x \U0001d165\u1734 a\u0301\u0302\U0001d165",
        "[CLS][SEP] [MASK]x[PAD]y[UNK]z [sep] [ SEP ] [[SEP]] [SEP",
        "a\ud800b \udc00 \ud83d\ude00 x\udfff\ud800y",  # lone surrogates (JSON keeps them)
        "\U0001f600\U0001f44d\U0001f3fd \u2764\ufe0f 1\ufe0f\u20e3",
        "   leading  and  trailing   ",
        "\t\n\x0b\x0c\r\x85\xa0\u1680\u2000\u2028\u2029\u202f\u205f\u3000",
        "a\x0bb a\x0cb a\x85b",  # control characters among the white space: dropped, no cut
        "",
    ]
    out += override_strings()
    return out


def fuzz_strings(n: int, seed: int = 26) -> list[str]:
    """Seeded mixes of fragments, words, marks, CJK (astral too), white space and any code
    point, surrogates included."""
    rng = random.Random(seed)
    pool = [*FRAGMENTS, *EDGE_CASES, " ", "  ", "##", "ing", ".", "[SEP]", "[MASK]", "İ", "Σ"]
    words = ["the", "The", "unbelievable", "preprocessing", "tokenizer", "naïve", "ΟΔΟΣ"]

    def piece() -> str:
        kind = rng.randrange(9)
        if kind == 0:
            return rng.choice(pool)
        if kind == 1:
            return rng.choice(words)
        if kind == 2:
            return "".join(chr(rng.randrange(0x300, 0x370)) for _ in range(rng.randint(1, 5)))
        if kind == 3:
            return "".join(
                rng.choice(" \t\n\r\xa0\u3000\x0b\x85") for _ in range(rng.randint(1, 4))
            )
        if kind == 4:
            return chr(rng.choice([0x4E00, 0x3400, 0x20000, 0x2A700, 0xF900]) + rng.randrange(200))
        if kind == 5:
            return chr(rng.randrange(0x20, 0x30000))
        if kind == 6:
            return chr(rng.randrange(0x110000))  # surrogates too
        if kind == 7:
            return "".join(
                rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 12))
            )
        return rng.choice(["\ud800", "\udc00", "\ud840\udc00", "\U0001d165", "\u0f73", "\ufeff"])

    return ["".join(piece() for _ in range(rng.randint(0, 12))) for _ in range(n)]


def corpus_strings() -> dict[str, list[str]]:
    from tokcourse.course.data import corpora

    out = {
        "botchan lines": corpora.botchan_text().splitlines(),
        "python code lines": corpora.python_code(max_bytes=200_000).splitlines(),
    }
    out["parallel messages"] = [m for msgs in corpora.parallel_text().values() for m in msgs]
    return out


def speed_text() -> str:
    from tokcourse.course.data import corpora

    return corpora.botchan_text().encode("utf-8")[:100_000].decode("utf-8", "ignore")


# ----------------------------------------------------------------------- the browser

RUNNER = r"""
const api = tokcoursePlayground, out = {};

// A seeded PRNG (mulberry32): the edits are the same every run.
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The chunks of text: [start, end, ids...] each, through the interface. */
function chunks(tok, text) {
  const list = [];
  for (let start = 0; start < text.length; ) {
    const end = tok.nextChunkEnd(text, start);
    if (!(end > start)) throw new Error(`empty chunk at ${start} of ${JSON.stringify(text)}`);
    const r = {ids: [], starts: [], ends: []};
    tok.encodeChunk(text, start, end, r);
    list.push(JSON.stringify([start, end, r.ids, r.starts, r.ends]));
    start = end;
  }
  return list;
}

/** The control: the same port with the browser's own Unicode tables (no overrides). */
function nativeTables(shipped) {
  const ranges = (pred) => {
    const parts = [];
    let a = -1, last = -1;
    for (let c = 0; c < 0x110000; c++) {
      if (c === 0xd800) c = 0xe000;
      if (pred(String.fromCodePoint(c), c)) {
        if (a < 0) a = c;
        last = c;
      } else if (a >= 0) {
        parts.push(a === last ? a.toString(16) : `${a.toString(16)}-${last.toString(16)}`);
        a = -1;
      }
    }
    if (a >= 0) parts.push(a === last ? a.toString(16) : `${a.toString(16)}-${last.toString(16)}`);
    return parts.join(" ");
  };
  const hex = (s) => [...s].map((x) => x.codePointAt(0).toString(16)).join(".");
  const decomp = [], lower = [], lowerLong = [];
  for (let c = 0; c < 0x110000; c++) {
    if (c === 0xd800) c = 0xe000;
    const ch = String.fromCodePoint(c);
    const d = ch.normalize("NFD");
    if (d !== ch && !(c >= 0xac00 && c <= 0xd7a3)) decomp.push(`${c.toString(16)}>${hex(d)}`);
    const l = ch.toLowerCase();
    if (l !== ch && [...l].length === 1) {
      const delta = l.codePointAt(0) - c;
      lower.push(`${c.toString(16)}:${delta < 0 ? "-" : "+"}${Math.abs(delta).toString(16)}`);
    } else if (l !== ch) lowerLong.push(`${c.toString(16)}>${hex(l)}`);
  }
  return {
    unicode: "browser",
    drop: ranges((ch, c) => c === 0 || c === 0xfffd ||
      (!"\t\n\r".includes(ch) && /[\p{Cc}\p{Cf}\p{Co}\p{Cs}]/u.test(ch))),
    white: ranges((ch) => /\s/u.test(ch)),
    cjk: shipped.cjk,
    punct: ranges((ch) => /[!-\/:-@\[-`{-~]|\p{P}/u.test(ch)),
    mn: ranges((ch) => /\p{Mn}/u.test(ch)),
    kept: "", mapped: "", decomp: decomp.join(" "),
    ccc: shipped.ccc, // the browser has no combining classes to offer
    lower: lower.join(" "), lower_long: lowerLong.join(" "),
  };
}

(async () => {
  try {
    let t0 = performance.now();
    const tok = await api.tokenizer("bert_uncased");
    out.load_ms = performance.now() - t0;
    out.build_ms = tok.buildMs;
    out.vocab_size = tok.vocabSize;
    out.info = [100, 101, 102, 1996, 2075, 29722].map((id) => tok.tokenInfo(id));
    out.registered = api.TOKENIZERS.includes("bert_uncased")
      && api.tokenizerSpec("bert_uncased").label;

    t0 = performance.now();
    const speed = tok.encode(SPEED_TEXT);
    out.encode_cold_ms = performance.now() - t0;
    out.encode_warm_ms = Infinity;
    for (let k = 0; k < 3; k++) {
      t0 = performance.now();
      tok.encode(SPEED_TEXT);
      out.encode_warm_ms = Math.min(out.encode_warm_ms, performance.now() - t0);
    }
    out.speed = [speed.ids, speed.starts, speed.ends];

    // the same module in a Web Worker made from a Blob (what the page does on file://),
    // started first: the checks below keep the main thread busy (headless Chromium's virtual
    // time does not run on while a script runs) until its answer is awaited at the end
    const data = await api.loadData("bert_uncased");
    const src = api.moduleSource() + `
      self.onmessage = (e) => {
        const tok = tokcoursePlayground.createTokenizer("bert_uncased", [e.data.data]);
        self.postMessage(e.data.strings.map((s) => tok.encode(s)));
      };`;
    const worker = new Worker(URL.createObjectURL(new Blob([src], {type: "text/javascript"})));
    const some = STRINGS.slice(-300); // fuzz: surrogates, marks, CJK
    const fromWorkerPromise = new Promise((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error("worker: " + e.message));
      worker.postMessage({data, strings: some});
    });

    out.results = STRINGS.map((s) => {
      const r = tok.encode(s);
      return [r.ids, r.starts, r.ends];
    });
    out.normalized = STRINGS.map((s) => tok.normalize(s));

    // chunk by chunk == the whole text as one chunk; the chunks from a boundary on depend on
    // the text from there on only
    out.chunk_mismatches = [];
    out.chunk_count = 0;
    const r1 = rng(1);
    for (const s of [...STRINGS, SPEED_TEXT]) {
      const whole = {ids: [], starts: [], ends: []};
      tok.encodeChunk(s, 0, s.length, whole);
      const parts = tok.encode(s);
      if (JSON.stringify(whole) !== JSON.stringify(parts)) out.chunk_mismatches.push(s);
      const list = chunks(tok, s);
      out.chunk_count += list.length;
      if (list.length > 1) {
        const k = 1 + Math.floor(r1() * (list.length - 1));
        const b = JSON.parse(list[k])[0];
        const tail = chunks(tok, s.slice(b)).map((c) => {
          const [st, en, ids, starts, ends] = JSON.parse(c);
          const shift = (xs) => xs.map((x) => x + b);
          return JSON.stringify([st + b, en + b, ids, shift(starts), shift(ends)]);
        });
        if (tail.join() !== list.slice(k).join()) out.chunk_mismatches.push("tail: " + s);
      }
    }

    // safeBoundary: an edit at or after b + 1 never changes the chunks before a safe b
    const r2 = rng(2);
    const inserts = ["", "x", " ", "\u0301", "\ud840\udc00", "\ud840", "\udc00", "[SEP]", "東",
                     "\u3000", "SEP]", "a\u0316", "\u0f73", "\x0b"];
    out.edits = 0; out.unsafe = 0; out.safe = 0; out.edit_failures = [];
    for (const s of EDIT_STRINGS) {
      const list = chunks(tok, s);
      for (let k = 1; k < list.length; k++) {
        const b = JSON.parse(list[k])[0];
        if (!tok.safeBoundary(s, b)) { out.unsafe++; continue; }
        out.safe++;
        for (let e = 0; e < 3; e++) {
          const p = b + 1 + Math.floor(r2() * (s.length - b));
          const cut = Math.floor(r2() * 3);
          const insert = inserts[Math.floor(r2() * inserts.length)];
          const edited = s.slice(0, p) + insert + s.slice(p + cut);
          out.edits++;
          const before = chunks(tok, edited).filter((c) => JSON.parse(c)[1] <= b);
          if (before.join() !== list.slice(0, k).join() ||
              (before.length && JSON.parse(before[before.length - 1])[1] !== b)) {
            out.edit_failures.push([s, b, edited]);
          }
        }
      }
    }
    // an unsafe boundary is unsafe: the chunk before an astral CJK ideograph after a word
    const u = "ab\ud840\udc00cd";
    out.unsafe_example = [tok.safeBoundary(u, 2), chunks(tok, u).length,
                          chunks(tok, "ab\ud840xcd").length];

    // the normalizer on every code point alone
    const norm = [];
    for (let c = 0; c < 0x110000; c++) {
      if (c === 0xd800) c = 0xe000;
      const ch = String.fromCodePoint(c), n = tok.normalize(ch);
      const hex = [...n].map((x) => x.codePointAt(0).toString(16)).join(".");
      if (n !== ch) norm.push(c.toString(16) + ":" + hex);
    }
    out.every_code_point = norm.join(" ");

    // the control
    const native = api.wordpiece.create({...data, tables: nativeTables(data.tables)});
    out.native = STRINGS.map((s) => native.encode(s).ids);

    const fromWorker = await fromWorkerPromise.catch((err) => String(err));
    out.worker_same = JSON.stringify(fromWorker) === JSON.stringify(some.map((s) => tok.encode(s)));
    out.worker_strings = some.length;
    out.worker_error = typeof fromWorker === "string" ? fromWorker : null;
    out.userAgent = navigator.userAgent;
  } catch (err) {
    out.error = String(err) + "\n" + err.stack;
  }
  document.getElementById("result").textContent = JSON.stringify(out);
})();
"""


def run_in_browser(tmp_path: Path, strings: list[str], edit_strings: list[str], speed: str) -> dict:
    if CHROMIUM is None:
        missing_tool("chromium not installed (apt-get install chromium; .ci/run does it)")
    site = tmp_path / "site"
    (site / "data").mkdir(parents=True)
    for name in ("core.js", "wordpiece.js"):
        shutil.copy(STATIC / name, site / name)
    for stem, text in pw.scripts().items():
        (site / "data" / f"{stem}.js").write_text(text, encoding="utf-8")
    (site / "strings.js").write_text(
        f"const STRINGS = {json.dumps(strings)};\nconst EDIT_STRINGS = {json.dumps(edit_strings)};"
        f"\nconst SPEED_TEXT = {json.dumps(speed)};\n",
        encoding="utf-8",
    )
    (site / "runner.js").write_text(RUNNER, encoding="utf-8")
    (site / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><title>wordpiece</title>'
        '<script src="core.js"></script><script src="wordpiece.js"></script>'
        '<script src="strings.js"></script></head><body><pre id="result">not run</pre>'
        '<script src="runner.js"></script></body></html>',
        encoding="utf-8",
    )
    from tests._cdp import page_result

    # Over the DevTools protocol, in real time: the runner waits for a Web Worker, which
    # --dump-dom's virtual clock does not wait for on a busy machine.
    t0 = time.perf_counter()
    result = page_result((site / "index.html").as_uri(), tmp_path / "profile")
    out = json.loads(result)
    assert "error" not in out, out["error"]
    out["browser_s"] = time.perf_counter() - t0
    return out


@functools.cache
def inputs() -> dict[str, list[str]]:
    groups = corpus_strings()
    groups["hard strings"] = hard_strings()
    groups["fuzz"] = fuzz_strings(FUZZ_STRINGS)
    return groups


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> dict:
    groups = inputs()
    strings = [s for group in groups.values() for s in group]
    edit_strings = groups["hard strings"] + groups["fuzz"]
    return run_in_browser(tmp_path_factory.mktemp("wordpiece"), strings, edit_strings, speed_text())


def utf16_offsets(text: str, offsets: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """HF's offsets (code points of ``text``) as UTF-16 offsets."""
    at = [0]
    for ch in text:
        at.append(at[-1] + (2 if ord(ch) > 0xFFFF else 1))
    return [at[a] for a, _ in offsets], [at[b] for _, b in offsets]


@functools.cache
def hf_all() -> tuple:
    """HF's ids and UTF-16 offsets of every input string (computed once)."""
    return tuple(hf([well_formed(s) for group in inputs().values() for s in group]))


def control_wrong(browser) -> list[str]:
    strings = [s for group in inputs().values() for s in group]
    want = [w[0] for w in hf_all()]
    return [s for s, ids, w in zip(strings, browser["native"], want, strict=True) if ids != w]


def mismatches(browser) -> int:
    return sum(tuple(got) != tuple(w) for got, w in zip(browser["results"], hf_all(), strict=True))


def hf(texts: list[str]) -> list[tuple[list[int], list[int], list[int]]]:
    out = []
    encodings = from_json().encode_batch(texts, add_special_tokens=False)
    for text, enc in zip(texts, encodings, strict=True):
        out.append((enc.ids, *utf16_offsets(text, enc.offsets)))
    return out


def test_ids_and_offsets_are_hugging_faces(browser):
    groups = inputs()
    strings = [s for group in groups.values() for s in group]
    assert len(browser["results"]) == len(strings)
    want = hf_all()
    bad_ids, bad_offsets = {}, {}
    i = 0
    for name, group in groups.items():
        for s in group:
            got = tuple(browser["results"][i])
            if got[0] != want[i][0]:
                bad_ids.setdefault(name, []).append(repr(s)[:120])
            elif got != tuple(want[i]):
                bad_offsets.setdefault(name, []).append((repr(s)[:120], got[1:], want[i][1:]))
            i += 1
    assert not bad_ids, {k: (len(v), v[:3]) for k, v in bad_ids.items()}
    assert not bad_offsets, {k: (len(v), v[:2]) for k, v in bad_offsets.items()}
    assert len(groups["fuzz"]) >= 2_000 and len(groups["botchan lines"]) > 3_000
    assert sum(map(len, (r[0] for r in browser["results"]))) > 150_000  # tokens compared


def test_the_long_text_is_hugging_faces(browser):
    """100 KB of the novel in one go: ids and offsets over thousands of chunks."""
    (want,) = hf([speed_text()])
    assert tuple(browser["speed"]) == want


def test_the_normalizer_is_tokenizers(browser):
    """On every string, and on every code point alone: ``BertNormalizer.normalize_str``."""
    normalizer = from_json().normalizer
    strings = [s for group in inputs().values() for s in group]
    bad = [s for s, n in zip(strings, browser["normalized"], strict=True)
           if normalizer.normalize_str(well_formed(s)) != n]  # fmt: skip
    assert not bad, [repr(s)[:120] for s in bad[:5]]
    want = []
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        n = normalizer.normalize_str(chr(c))
        if n != chr(c):
            want.append(f"{c:x}:" + ".".join(f"{ord(x):x}" for x in n))
    got = browser["every_code_point"].split(" ")
    assert len(got) == len(want) > 200_000
    assert got == want, next((g, w) for g, w in zip(got, want, strict=True) if g != w)


def test_lone_surrogates_read_as_u_fffd(browser):
    """The page cannot refuse a lone surrogate: it is U+FFFD, which BERT's cleaning drops."""
    strings = [s for group in inputs().values() for s in group]
    i = strings.index("a\ud800b \udc00 \ud83d\ude00 x\udfff\ud800y")
    ids, starts, ends = browser["results"][i]
    assert [ids, starts, ends] == list(hf(["a\ufffdb \ufffd \U0001f600 x\ufffd\ufffdy"])[0])
    assert ids[0] == from_json().token_to_id("ab") and (starts[0], ends[0]) == (0, 3)
    assert (starts[-2:], ends[-2:]) == ([9, 12], [10, 13])  # "x", "##y": the two U+FFFD fall
    # between pieces (HF's own offsets for "x\ufffd\ufffdy")


def test_chunks_are_independent(browser):
    assert browser["chunk_mismatches"] == []
    assert browser["chunk_count"] > 50_000


def test_safe_boundaries_are_safe(browser):
    assert browser["edit_failures"] == [], browser["edit_failures"][:3]
    assert browser["edits"] > 10_000 and browser["safe"] > 3_000
    assert browser["unsafe"] > 0  # the astral CJK ideographs after a word
    assert browser["unsafe_example"] == [False, 3, 1]


def test_the_control_shows_the_comparison_can_fail(browser):
    """The same port with the browser's own Unicode tables gets strings wrong (characters
    tokenizers' crates do not know as marks, among others): the shipped tables are needed."""
    wrong = control_wrong(browser)
    assert wrong, "the control agrees with tokenizers: the comparison shows nothing"
    assert set(override_strings()) & set(wrong)


def test_the_worker_copy_is_the_same(browser):
    assert browser["worker_same"] is True, browser["worker_error"]
    assert browser["worker_strings"] == 300


def test_the_interface(browser):
    assert browser["registered"] == "BERT uncased" and browser["vocab_size"] == 30_522
    info = browser["info"]
    assert info[0] == {"bytes": "[UNK]", "piece": "[UNK]", "kind": "unknown"}
    assert info[1]["kind"] == info[2]["kind"] == "special"  # [CLS] [SEP]
    assert info[3] == {"bytes": "the", "piece": "the", "kind": "normal"}
    assert info[4] == {"bytes": "ing", "piece": "##ing", "kind": "normal"}
    assert info[5] == {"bytes": "\xce\xb4", "piece": "##δ", "kind": "normal"}  # UTF-8, binary


def test_speed_is_recorded(browser):
    groups = inputs()
    text = speed_text()
    tok = from_json()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        tok.encode(text, add_special_tokens=False)
        best = min(best, time.perf_counter() - t0)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = {
        "what": "BERT uncased (WordPiece): wordpiece.js in headless Chromium vs tokenizers",
        "user agent": browser["userAgent"],
        "strings": {k: len(v) for k, v in groups.items()},
        "tokens compared": sum(len(r[0]) for r in browser["results"]) + len(browser["speed"][0]),
        "mismatches": mismatches(browser),
        "control (browser's own Unicode tables): strings wrong": len(control_wrong(browser)),
        "chunks checked": browser["chunk_count"],
        "edits checked (safeBoundary)": browser["edits"],
        "speed text bytes": len(text.encode("utf-8")),
        "speed text tokens": len(browser["speed"][0]),
        "timings": {
            "load_ms": round(browser["load_ms"], 1),
            "build_ms": browser["build_ms"],
            "encode_cold_ms": round(browser["encode_cold_ms"], 1),
            "encode_warm_ms": round(browser["encode_warm_ms"], 1),
            "tokenizers_python_ms": round(best * 1000, 1),
        },
        "data file bytes": len(pw.script().encode("utf-8")),
        "browser run s": round(browser["browser_s"], 1),
    }
    (ARTIFACTS / "playground-wordpiece.json").write_text(json.dumps(report, indent=2) + "\n")
    assert report["mismatches"] == 0 and browser["encode_warm_ms"] < 2_000
