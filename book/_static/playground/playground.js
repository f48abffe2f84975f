/*
 * tokcourse playground widget: fills every <div class="tokcourse-playground"> of the page with a
 * labelled text box and, for each tokenizer, the text as coloured token boxes (as the notebook
 * visualizer tokcourse/course/viz.py draws them), with the token count and characters per token.
 *
 * How it stays responsive with a megabyte of text in the box:
 * - the encoding runs in a Web Worker (engine.js), made from the tokenizer modules' own source
 *   (core.js), so it works from a book opened from disk; after a keystroke only the chunks the
 *   edit can reach are encoded again;
 * - input is debounced, and at most one request per box is in flight: a reader typing faster
 *   than the worker answers gets the newest text next, never a queue;
 * - only a window of the text is drawn (about WINDOW characters around the cursor, or a page the
 *   reader moves to): what is on screen, not the whole document; the counts cover everything.
 *
 * Faithful to the bytes: a <textarea> turns "\r\n" and "\r" into "\n", so the widget keeps the
 * text itself (TextModel): a paste or a drop is read from the event and inserted as it is, and a
 * typed edit is mapped back onto the kept text. "\r" shows as ␍ in the token rows.
 *
 * Options on the div: data-text (the starting text), data-encodings (space-separated tokenizer
 * names; default: every registered tokenizer), data-compact (a smaller box). Whatever the div
 * holds is replaced: put a note there for readers without the book's JavaScript (Jupyter, Colab).
 */
(function (global) {
  "use strict";

  const api = global.tokcoursePlayground;
  const document = global.document;
  // viz.PALETTE (tests/test_playground_widget.py keeps them equal): neighbours stay apart under
  // protanopia, deuteranopia and tritanopia, and dark text and the marks reach 4.5:1 on each
  const PALETTE = ["#d9f7e7", "#6bcde6", "#fbf3b4", "#a5c7ba", "#dcc4fe", "#bedba1", "#8cf7fe", "#dabd86"];
  const MARKERS = { " ": "·", "\t": "→", "\n": "↵", "\r": "␍" };
  // viz._INVISIBLE_CATEGORIES (display only: the browser's own Unicode tables decide)
  const INVISIBLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
  const WINDOW = 1200; // characters drawn at a time
  const MAX_TOKENS = 3000; // tokens drawn per row at most (a window of emoji in byte tokens)
  const DEBOUNCE_MS = 25;
  const STATUS_DELAY_MS = 1000; // the counts' live region waits for a pause in typing

  function hex(n, width) {
    return n.toString(16).toUpperCase().padStart(width, "0");
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // ------------------------------------------------------------------ bytes to what we draw

  const utf8Width = api.utf8Width; // length of the UTF-8 sequence a lead byte announces

  // ignoreBOM: without it a decoder swallows a leading U+FEFF, and the reader's BOM vanishes
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  /** A token's bytes as runs of text {text} and runs of stray bytes {bytes} (viz._split_utf8). */
  function splitUtf8(bytes) {
    const parts = [];
    for (let i = 0; i < bytes.length;) {
      let width = utf8Width(bytes.charCodeAt(i)), part = null;
      if (width && i + width <= bytes.length) {
        try {
          const seq = Uint8Array.from(bytes.slice(i, i + width), (ch) => ch.charCodeAt(0));
          part = { text: decoder.decode(seq) };
        } catch (err) {
          part = null;
        }
      }
      if (!part) { part = { bytes: bytes[i] }; width = 1; }
      const last = parts[parts.length - 1];
      if (last && ("text" in last) === ("text" in part)) {
        if ("text" in part) last.text += part.text; else last.bytes += part.bytes;
      } else parts.push(part);
      i += width;
    }
    return parts;
  }

  /** Python's repr() of a bytes object, as the visualizer shows it. */
  function bytesRepr(bytes) {
    const quote = bytes.includes("'") && !bytes.includes('"') ? '"' : "'";
    let out = "b" + quote;
    for (const ch of bytes) {
      const b = ch.charCodeAt(0);
      if (ch === "\\" || ch === quote) out += "\\" + ch;
      else if (ch === "\t") out += "\\t";
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (b < 0x20 || b >= 0x7f) out += "\\x" + b.toString(16).padStart(2, "0");
      else out += ch;
    }
    return out + quote;
  }

  // ------------------------------------------------------------------ characters

  const SURROGATE = /[\uD800-\uDFFF]/;

  /**
   * For each UTF-16 offset i of `offsets` (ascending), the number of characters in text[0, i):
   * code points, as the status line and Python's len count them. The page gives every position
   * and length in characters, never in the UTF-16 units JavaScript's offsets count (an emoji is
   * one character and two units). Before the first surrogate, found natively, a unit is a
   * character; after it, one pass counts the pairs.
   */
  function charsAt(text, offsets) {
    const first = text.search(SURROGATE);
    let k = Math.max(first, 1), pairs = 0; // pairs: low surrogates after a high one in text[0, k)
    return offsets.map((i) => {
      if (first < 0 || i <= first) return i;
      for (; k < i; k++) {
        if ((text.charCodeAt(k) & 0xfc00) === 0xdc00 && (text.charCodeAt(k - 1) & 0xfc00) === 0xd800) pairs++;
      }
      return i - pairs;
    });
  }

  /** Characters [from, to) of text as the page says it: "3–17 of 20" (counted from 1). */
  function span(text, from, to) {
    const [a, b, n] = charsAt(text, [from, to, text.length]), f = (x) => x.toLocaleString("en");
    return `${f(a + 1)}–${f(b)} of ${f(n)}`;
  }

  // ------------------------------------------------------------------ missing fonts

  /**
   * Whether the machine has a glyph for `ch` in the token font: a character no font covers is
   * drawn as the font's "missing" box (.notdef), the same for every such character, so we draw
   * it once for a code point that is surely unassigned and compare the pixels.
   */
  const glyphs = new Map();
  let probe = null;
  function hasGlyph(ch, family) {
    if (ch.codePointAt(0) < 0x370) return true;
    let known = glyphs.get(ch);
    if (known !== undefined) return known;
    if (!probe) {
      const canvas = document.createElement("canvas");
      canvas.width = canvas.height = 32;
      const ctx = canvas.getContext("2d", { willReadFrequently: true });
      probe = { ctx, family: null, missing: null };
    }
    const draw = (c) => {
      probe.ctx.clearRect(0, 0, 32, 32);
      probe.ctx.fillText(c, 4, 24);
      return probe.ctx.getImageData(0, 0, 32, 32).data;
    };
    if (probe.family !== family) {
      probe.family = family;
      probe.ctx.font = `20px ${family}`;
      probe.ctx.fillStyle = "#000";
      probe.missing = [draw("\u0378"), draw("\uFFFF")];
      glyphs.clear();
    }
    const pixels = draw(ch);
    const same = (a) => a.every((v, i) => v === pixels[i]);
    known = !probe.missing.some(same);
    glyphs.set(ch, known);
    return known;
  }

  // ------------------------------------------------------------------ the text, byte for byte

  /**
   * The text the reader gave, and the part of it the textarea shows.
   *
   * A textarea cannot hold "\r": it shows "\r\n" and "\r" as "\n". `at` lists the display
   * offsets of such a "\n" and `size` how many characters of the text it stands for (2 for
   * "\r\n", 1 for "\r").
   *
   * A browser's textarea slows down with its length: with 100,000 lines every keystroke takes
   * seconds in Chromium, whatever the page does. So a long text is edited through an excerpt:
   * the textarea holds text[ea, eb), at most EXCERPT_CHARS characters and EXCERPT_LINES lines
   * cut at line starts (LONG_LINE characters when a line is longer); the counts and the tokens
   * cover the whole text.
   */
  const EXCERPT_CHARS = 100000;
  const EXCERPT_LINES = 2000;
  const LONG_LINE = 10000;

  class TextModel {
    constructor(text) { this.setText(text, 0); }

    /** A new text; the excerpt is placed around text offset `around`. */
    setText(text, around) {
      this.text = text;
      this.place(around);
    }

    get whole() { return this.ea === 0 && this.eb === this.text.length; }

    /** Choose the excerpt around text offset `around` and draw it into `display`. */
    place(around) {
      const text = this.text;
      if (text.length <= EXCERPT_CHARS && this.lines(0, text.length, EXCERPT_LINES + 1) <= EXCERPT_LINES
          && this.longestLine(0, text.length) <= LONG_LINE) {
        this.ea = 0; this.eb = text.length;
      } else {
        this.cut(around, EXCERPT_CHARS);
        // one very long line is as slow to edit as many lines: hold less of it
        if (this.longestLine(this.ea, this.eb) > LONG_LINE) this.cut(around, LONG_LINE);
      }
      this.draw();
    }

    /** The excerpt: whole lines around `around`, at most `limit` characters, EXCERPT_LINES lines. */
    cut(around, limit) {
      const text = this.text, third = Math.floor(limit / 3); // offsets are whole numbers
      // start a third of the way back from `around`, at a line start, and take whole lines
      let ea = this.lineStart(Math.max(0, around - third), limit);
      let back = 0;
      while (ea > 0 && back < EXCERPT_LINES / 3 && around - ea < third) { ea = this.lineStart(ea - 1, limit); back++; }
      let eb = ea, lines = 0;
      while (eb < text.length && lines < EXCERPT_LINES && eb - ea < limit) {
        const nl = text.indexOf("\n", eb);
        const next = nl < 0 ? text.length : nl + 1;
        if (next - ea > limit) { eb = Math.max(eb, ea + limit); break; }
        eb = next; lines++;
      }
      eb = Math.min(eb, text.length);
      if (eb > 0 && eb < text.length && (text.charCodeAt(eb - 1) & 0xfc00) === 0xd800) eb--;
      this.ea = ea; this.eb = eb;
    }

    longestLine(from, to) {
      let longest = 0, start = from;
      for (let i = this.text.indexOf("\n", from); i >= 0 && i < to; i = this.text.indexOf("\n", i + 1)) {
        longest = Math.max(longest, i - start);
        start = i + 1;
      }
      return Math.max(longest, to - start);
    }

    lines(from, to, most) {
      let n = 0;
      for (let i = this.text.indexOf("\n", from); i >= 0 && i < to && n < most; i = this.text.indexOf("\n", i + 1)) n++;
      return n;
    }

    lineStart(t, limit) {
      if (t <= 0) return 0;
      const nl = this.text.lastIndexOf("\n", t - 1);
      let start = nl + 1;
      if (t - start > Math.floor(limit / 3)) start = t; // a very long line: cut inside it
      if (start > 0 && (this.text.charCodeAt(start) & 0xfc00) === 0xdc00) start--;
      return start;
    }

    /** The excerpt as the textarea shows it, and where its "\n"s stand for "\r\n" or "\r". */
    draw() {
      const part = this.text.slice(this.ea, this.eb);
      this.at = []; this.size = [];
      if (part.indexOf("\r") < 0) { this.display = part; return; }
      this.display = part.replace(/\r\n?/g, "\n");
      let shift = 0;
      for (let i = part.indexOf("\r"); i >= 0; i = part.indexOf("\r", i + 1)) {
        const pair = part.charCodeAt(i + 1) === 10;
        this.at.push(i - shift);
        this.size.push(pair ? 2 : 1);
        if (pair) { shift++; i++; }
      }
    }

    /** Offset in the text of display offset `d`. */
    toText(d) {
      let extra = 0;
      for (let i = 0; i < this.at.length && this.at[i] < d; i++) extra += this.size[i] - 1;
      return this.ea + d + extra;
    }

    /** Display offset of text offset `t` (clamped to the excerpt). */
    toDisplay(t) {
      t = Math.max(this.ea, Math.min(this.eb, t)) - this.ea;
      let extra = 0; // "\r\n" pairs wholly before t: one display character for two
      for (let i = 0; i < this.at.length; i++) {
        const textAt = this.at[i] + extra; // where this "\n" of the display starts in the text
        if (textAt >= t) break;
        if (this.size[i] === 2 && textAt + 1 < t) extra += 1;
      }
      return t - extra;
    }

    /** The textarea changed from `display` to `shown` by typing: apply the same edit. */
    typed(shown) {
      const old = this.display;
      let p = 0;
      const most = Math.min(old.length, shown.length);
      while (p < most && old.charCodeAt(p) === shown.charCodeAt(p)) p++;
      let s = 0;
      while (s < most - p && old.charCodeAt(old.length - 1 - s) === shown.charCodeAt(shown.length - 1 - s)) s++;
      const from = this.toText(p), to = this.toText(old.length - s), inserted = shown.slice(p, shown.length - s);
      this.text = this.text.slice(0, from) + inserted + this.text.slice(to);
      this.eb += inserted.length - (to - from);
      if (this.at.length) this.draw(); else this.display = shown;
    }

    /** Replace display range [start, end) by `data` exactly as given; text offset after it. */
    insert(start, end, data) {
      const from = this.toText(start), to = this.toText(end);
      this.setText(this.text.slice(0, from) + data + this.text.slice(to), from + data.length);
      return from + data.length;
    }

    /** Move the excerpt by about its length (direction -1 or +1); false if it cannot move. */
    move(direction) {
      if (direction < 0 && this.ea === 0) return false;
      if (direction > 0 && this.eb >= this.text.length) return false;
      const around = direction < 0 ? this.ea - EXCERPT_CHARS / 3 : this.eb + EXCERPT_CHARS / 3;
      this.place(Math.max(0, Math.min(this.text.length, Math.round(around))));
      return true;
    }
  }

  // ------------------------------------------------------------------ the worker

  let worker = null;
  const ready = {}; // tokenizer name -> Promise (resolves when the worker has built it)
  const readyCallbacks = {};
  const boxes = new Map(); // box id -> Box

  function getWorker() {
    if (worker) return worker;
    const source = api.moduleSource() + "\ntokcoursePlayground.serveWorker(self);\n";
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    worker = new Worker(url);
    worker.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === "ready" || (msg.type === "error" && msg.box === undefined)) {
        const cb = readyCallbacks[msg.name];
        if (cb) msg.type === "ready" ? cb[0](msg) : cb[1](new Error(msg.message));
        return;
      }
      const box = boxes.get(msg.box);
      if (box) box.received(msg);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      for (const box of boxes.values()) box.failed(event.message || "the worker stopped");
    };
    return worker;
  }

  /** Promise that tokenizer `name` is ready in the worker (its data loaded on the page once). */
  function prepare(name) {
    if (!ready[name]) {
      const spec = api.tokenizerSpec(name);
      ready[name] = Promise.all(spec.files.map(api.loadData)).then((datas) => new Promise((resolve, reject) => {
        readyCallbacks[name] = [resolve, reject];
        getWorker().postMessage({ type: "init", name, datas });
      }));
    }
    return ready[name];
  }

  // ------------------------------------------------------------------ one box

  let boxCount = 0;

  class Box {
    constructor(div) {
      this.div = div;
      this.id = ++boxCount;
      boxes.set(this.id, this);
      const available = api.TOKENIZERS;
      this.names = (div.dataset.encodings ? div.dataset.encodings.split(/\s+/).filter(Boolean) : available)
        .filter((n) => available.includes(n));
      const start = div.dataset.text !== undefined ? div.dataset.text : "Hello world! Type here.";
      this.model = new TextModel(start);
      this.version = 0; // of the text
      this.sent = 0; // the version last sent to the worker
      this.inFlight = false;
      this.follow = true; // the window follows the cursor
      this.windowStart = 0;
      this.rows = {};
      this.timings = []; // for the tests: {version, sentAt, paintedAt}
      this.build();
      this.textarea.value = this.model.display;
      this.listen();
      this.div.dataset.ready = "loading";
      Promise.allSettled(this.names.map((name) => prepare(name).then(
        () => { this.rows[name].ready = true; },
        (err) => { this.rows[name].stats.textContent = `could not load: ${err.message}`; },
      ))).then(() => { this.request(true); });
    }

    build() {
      const div = this.div, id = `tkp-${this.id}`;
      div.replaceChildren();
      const label = el("label", "tkp-label", "Text to tokenize");
      label.htmlFor = `${id}-input`;
      const input = (this.textarea = el("textarea", "tkp-input"));
      input.id = `${id}-input`;
      const lines = this.model.display.split("\n").length;
      input.rows = Math.min(Math.max(2, lines), div.dataset.compact !== undefined ? 4 : 10);
      input.spellcheck = false;
      input.setAttribute("autocomplete", "off");
      this.status = el("p", "tkp-status", "Loading the tokenizers…");
      this.status.id = `${id}-status`;
      this.status.setAttribute("role", "status");
      this.status.setAttribute("aria-live", "polite");
      const nav = (this.nav = el("div", "tkp-nav"));
      this.where = el("span", "tkp-where");
      this.earlier = el("button", "tkp-button", "◀ Earlier");
      this.later = el("button", "tkp-button", "Later ▶");
      this.earlier.setAttribute("aria-label", "Token rows: earlier characters");
      this.later.setAttribute("aria-label", "Token rows: later characters");
      this.earlier.type = this.later.type = "button";
      nav.append(el("b", "", "Token rows: "), this.where, " ", this.earlier, " ", this.later);
      nav.hidden = true;
      const part = (this.part = el("div", "tkp-nav"));
      this.partWhere = el("span", "tkp-where");
      this.partEarlier = el("button", "tkp-button", "◀ Earlier part");
      this.partLater = el("button", "tkp-button", "Later part ▶");
      const clear = (this.clearButton = el("button", "tkp-button", "Clear all"));
      clear.type = "button";
      this.partEarlier.type = this.partLater.type = "button";
      part.append(el("b", "", "Text box: "), this.partWhere, " ", this.partEarlier, " ", this.partLater, " ", clear);
      part.hidden = true;
      div.append(label, part, input, this.status, nav);
      for (const name of this.names) {
        const spec = api.tokenizerSpec(name);
        const row = el("div", "row");
        row.dataset.encoding = name;
        const hdr = el("div", "hdr");
        const title = el("b", "", spec.label || name);
        title.id = `${id}-${name}-title`;
        hdr.append(title, " ", el("code", "tkp-name", name), " ", el("span", "stats", "loading…"));
        const txt = el("div", "txt");
        txt.setAttribute("role", "listbox");
        txt.setAttribute("aria-labelledby", title.id);
        txt.setAttribute("aria-orientation", "horizontal");
        row.append(hdr, txt);
        div.appendChild(row);
        this.rows[name] = { name, row, txt, stats: hdr.querySelector(".stats"), data: null, ready: false, focus: -1,
          drawn: new Map() }; // id -> the token's drawn box, to copy
      }
      this.details = el("div", "tkp-details");
      this.details.textContent = "Select a token (click it, or Tab to a row and use the arrow keys) to read its id and bytes.";
      div.appendChild(this.details);
    }

    listen() {
      const input = this.textarea;
      // Select all (Ctrl/Cmd+A) in a long text means all of it, not the part in the box: then
      // typing, deleting, pasting, copying and cutting act on the whole text.
      const everything = () => this.wholeSelected && !this.model.whole
        && input.selectionStart === 0 && input.selectionEnd === input.value.length;
      input.addEventListener("keydown", (event) => {
        if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "a") this.wholeSelected = true;
      });
      input.addEventListener("select", () => { // the browser's own "Select all" (its menu)
        if (input.selectionStart === 0 && input.selectionEnd === input.value.length) this.wholeSelected = true;
      });
      input.addEventListener("mousedown", () => { this.wholeSelected = false; });
      const copyAll = (event, cut) => {
        if (!everything()) return;
        event.preventDefault();
        event.clipboardData.setData("text/plain", this.model.text);
        if (cut) this.replaceAll("");
      };
      input.addEventListener("copy", (event) => copyAll(event, false));
      input.addEventListener("cut", (event) => copyAll(event, true));
      this.clearButton.addEventListener("click", () => { this.replaceAll(""); input.focus(); });
      // when a keystroke starts (before the textarea itself changes), for the speed tests
      input.addEventListener("beforeinput", () => {
        this.keyAt = performance.now();
        this.replacing = everything();
      });
      input.addEventListener("input", () => {
        if (this.replacing) {
          this.replacing = this.wholeSelected = false;
          this.replaceAll(input.value); // what was typed over the whole text (no "\r" typed)
          return;
        }
        this.model.typed(input.value);
        this.changed();
      });
      const take = (event, data) => {
        if (data === null || data === undefined) return;
        event.preventDefault();
        if (everything()) { this.wholeSelected = false; this.replaceAll(data); return; }
          const after = this.model.insert(input.selectionStart, input.selectionEnd, data);
        input.value = this.model.display;
        const caret = this.model.toDisplay(after);
        input.setSelectionRange(caret, caret);
        this.changed();
      };
      // read pasted and dropped text ourselves: the textarea would turn "\r\n" into "\n"
      input.addEventListener("paste", (event) => take(event, event.clipboardData && event.clipboardData.getData("text/plain")));
      input.addEventListener("drop", (event) => {
        const data = event.dataTransfer && event.dataTransfer.getData("text/plain");
        if (data) { input.focus(); take(event, data); }
      });
      const moved = () => {
        if (!this.follow) this.follow = true;
        this.schedule(false);
      };
      input.addEventListener("keyup", moved);
      input.addEventListener("click", moved);
      const movePart = (direction) => {
        if (!this.model.move(direction)) return;
        input.value = this.model.display;
        input.setSelectionRange(0, 0);
        this.follow = true;
        this.showPart();
        this.request(false, true);
      };
      this.partEarlier.addEventListener("click", () => movePart(-1));
      this.partLater.addEventListener("click", () => movePart(+1));
      this.earlier.addEventListener("click", () => this.page(-1));
      this.later.addEventListener("click", () => this.page(+1));
      for (const name of this.names) this.listenRow(this.rows[name]);
    }

    listenRow(row) {
      const tokens = () => row.txt.querySelectorAll(".tok");
      row.txt.addEventListener("keydown", (event) => {
        const all = tokens();
        if (!all.length) return;
        let i = row.focus;
        const keys = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
        if (event.key in keys) i = Math.max(0, Math.min(all.length - 1, i + keys[event.key]));
        else if (event.key === "Home") i = 0;
        else if (event.key === "End") i = all.length - 1;
        else if (event.key === "Enter" || event.key === " ") { this.watch(row, i); event.preventDefault(); return; }
        else return;
        event.preventDefault();
        this.select(row, i, true);
      });
      row.txt.addEventListener("focusin", (event) => {
        const tok = event.target.closest(".tok");
        if (tok && Number(tok.dataset.k) !== row.focus) this.select(row, Number(tok.dataset.k), false);
      });
      row.txt.addEventListener("click", (event) => {
        const tok = event.target.closest(".tok");
        if (!tok) return;
        this.select(row, Number(tok.dataset.k), true);
      });
      row.txt.addEventListener("dblclick", (event) => {
        const tok = event.target.closest(".tok");
        if (tok) this.watch(row, Number(tok.dataset.k));
      });
    }

    // -------------------------------------------------- asking the worker

    /** Replace the whole text (select all in a long text, Clear all). */
    replaceAll(text) {
      this.model.setText(text, text.length);
      this.textarea.value = this.model.display;
      const caret = this.model.toDisplay(text.length);
      this.textarea.setSelectionRange(caret, caret);
      this.changed();
    }

    /** Say which part of a long text the box holds. */
    showPart() {
      const m = this.model;
      this.part.hidden = m.whole;
      if (m.whole) return;
      this.partWhere.textContent = `This text is long: the box holds characters ${span(m.text, m.ea, m.eb)} ` +
        "for editing. Counts and tokens cover all of it.";
      this.partEarlier.disabled = m.ea === 0;
      this.partLater.disabled = m.eb >= m.text.length;
    }

    changed() {
      this.showPart();
      this.version++;
      this.follow = true;
      this.timings.push({ version: this.version, at: this.keyAt || performance.now(), input: performance.now() });
      this.keyAt = 0;
      if (this.timings.length > 200) this.timings.splice(0, 100);
      this.schedule(true);
    }

    schedule(textChanged) {
      this.dirtyText = this.dirtyText || textChanged;
      if (this.timer) return;
      this.timer = setTimeout(() => { this.timer = null; this.request(false); }, DEBOUNCE_MS);
    }

    /** The window to draw: around the cursor when following it. */
    window() {
      const length = this.model.text.length;
      if (length <= WINDOW * 1.5) return [0, length];
      if (this.follow) {
        const caret = this.model.toText(this.textarea.selectionEnd);
        this.windowStart = Math.max(0, Math.min(length - WINDOW, caret - Math.floor(WINDOW / 3)));
      }
      return [this.windowStart, Math.min(length, this.windowStart + WINDOW)];
    }

    page(direction) {
      const length = this.model.text.length;
      this.follow = false;
      this.windowStart = Math.max(0, Math.min(Math.max(0, length - WINDOW), this.windowStart + direction * WINDOW));
      this.request(false, true);
    }

    request(initial, windowOnly) {
      if (this.inFlight) { this.pending = true; return; }
      const names = this.names.filter((n) => this.rows[n].ready);
      if (!names.length) return;
      const withText = initial || this.dirtyText || this.sent !== this.version;
      this.dirtyText = false;
      this.inFlight = true;
      this.waiting = new Set(names);
      this.sent = this.version;
      const message = { box: this.id, version: this.version, names, window: this.window(), max: MAX_TOKENS };
      const entry = this.timings.find((t) => t.version === this.version);
      if (entry && entry.sent === undefined) entry.sent = performance.now();
      if (withText && !windowOnly) getWorker().postMessage({ type: "text", text: this.model.text, ...message });
      else getWorker().postMessage({ type: "window", ...message });
      this.shownWindow = message.window;
    }

    received(msg) {
      const row = this.rows[msg.name];
      if (msg.type === "error") {
        row.data = null;
        row.error = msg.message;
      } else {
        row.data = msg;
        row.error = null;
      }
      this.waiting.delete(msg.name);
      if (this.waiting.size) return;
      this.inFlight = false;
      const entry = this.timings.find((t) => t.version === msg.version);
      if (entry && entry.received === undefined) entry.received = performance.now();
      this.paint(msg.version);
      if (this.pending || this.sent !== this.version) { this.pending = false; this.request(false); }
    }

    failed(message) {
      this.status.textContent = `The playground stopped: ${message}`;
      this.inFlight = false;
    }

    // -------------------------------------------------- drawing

    paint(version) {
      const paintStart = performance.now();
      const [wa, wb] = this.shownWindow;
      const text = this.model.text;
      const counts = [];
      if (!this.family) this.family = getComputedStyle(this.rows[this.names[0]].txt).fontFamily;
      const family = this.family;
      for (const name of this.names) {
        const row = this.rows[name], d = row.data;
        if (row.error) {
          // the library refuses this text (sentencepiece and a lone surrogate): say so, no ids
          row.stats.textContent = "refused";
          const focused = row.txt.contains(document.activeElement);
          row.txt.replaceChildren(el("span", "empty", `${api.tokenizerSpec(name).label} refuses this text: ${row.error}`));
          row.txt.tabIndex = -1;
          if (focused) row.txt.focus(); // the keyboard stays in the row, not on the page
          delete row.row.dataset.count;
          counts.push(`${api.tokenizerSpec(name).label}: refused`);
          continue;
        }
        if (!d) continue;
        this.drawRow(row, d, text, family);
        const n = d.count;
        const ratio = n ? `, ${(d.chars / n).toFixed(2)} chars/token` : "";
        row.stats.textContent = `${n.toLocaleString("en")} token${n !== 1 ? "s" : ""}${ratio}`;
        row.row.dataset.count = n;
        row.row.dataset.ms = d.ms.toFixed(2);
        counts.push(`${api.tokenizerSpec(name).label}: ${n.toLocaleString("en")}`);
      }
      const any = this.names.map((n) => this.rows[n].data).find((d) => d);
      const chars = any ? any.chars : 0;
      const summary = `${chars.toLocaleString("en")} character${chars !== 1 ? "s" : ""}. Tokens: ${counts.join(", ")}.`;
      // the live region speaks: say the counts once typing pauses, not after every keystroke
      clearTimeout(this.statusTimer);
      if (!this.spoken) { this.status.textContent = summary; this.spoken = true; }
      else if (this.status.textContent !== summary) {
        this.statusTimer = setTimeout(() => { this.status.textContent = summary; }, STATUS_DELAY_MS);
      }
      const whole = wa === 0 && wb === text.length;
      this.nav.hidden = whole;
      if (!whole) {
        this.where.textContent = `Showing characters ${span(text, wa, wb)}${this.follow ? ", around the cursor" : ""}.`;
        this.earlier.disabled = wa === 0;
        this.later.disabled = wb >= text.length;
      }
      const now = performance.now();
      this.paintMs = now - paintStart;
      for (const t of this.timings) if (t.version <= version && t.painted === undefined) t.painted = now;
      this.painted = version;
      this.div.dataset.painted = version;
      this.div.dataset.ready = "yes";
    }

    drawRow(row, d, text, family) {
      // A token with the keyboard focus is about to be replaced (a Tab right after a keystroke
      // lands on a token before the redraw): give the focus to the token at the same place in
      // the row (its number in the whole text), or to the row, never let it fall to the page.
      const active = document.activeElement;
      const focused = row.txt.contains(active) ? (active.dataset.k !== undefined ? row.i0 + Number(active.dataset.k) : -1) : null;
      const w = d.win, frag = document.createDocumentFragment();
      let prevEnd = w.from;
      const n = w.ids.length;
      for (let k = 0; k < n; k++) {
        const start = w.starts[k], end = w.ends[k];
        if (start > prevEnd) frag.appendChild(this.gap(text.slice(prevEnd, start)));
        frag.appendChild(this.tokenSpan(row, w, k, text, family));
        if (end > prevEnd) prevEnd = end;
      }
      if (w.to > prevEnd) frag.appendChild(this.gap(text.slice(prevEnd, w.to)));
      if (w.more) frag.appendChild(el("span", "empty", ` … (${w.more.toLocaleString("en")} more tokens in this window not drawn)`));
      if (!n && d.count === 0) frag.appendChild(el("span", "empty", "(no tokens)"));
      row.txt.replaceChildren(frag);
      row.focus = -1;
      row.i0 = w.i0;
      const first = row.txt.querySelector(".tok");
      if (first) first.tabIndex = 0;
      else row.txt.tabIndex = -1;
      if (focused === null) return;
      if (first) this.select(row, Math.max(0, focused - w.i0), true);
      else row.txt.focus();
    }

    /** Text no token covers (BERT drops white space): drawn faintly, outside any box. */
    gap(text) {
      const span = el("span", "gap");
      span.setAttribute("aria-hidden", "true");
      this.appendText(span, text, this.family);
      return span;
    }

    /** `text` into `span`, invisible characters as marks; `piece`: a vocabulary spelling. */
    appendText(span, text, family, piece) {
      let plain = "";
      const flush = () => { if (plain) { span.appendChild(document.createTextNode(plain)); plain = ""; } };
      for (const ch of text) {
        // SentencePiece's ▁ stands for a space: drawn as a mark, as · is
        if (piece && ch === "\u2581") { flush(); span.appendChild(el("span", "ws", "▁")); continue; }
        if (ch === "\n") { flush(); span.appendChild(el("span", "ws", "↵")); span.appendChild(el("br")); }
        else if (MARKERS[ch]) {
          flush();
          // ␍ is missing from many fonts: then the code point, like any undrawable character
          const mark = !family || hasGlyph(MARKERS[ch], family) ? MARKERS[ch] : `⟨U+${hex(ch.codePointAt(0), 4)}⟩`;
          span.appendChild(el("span", "ws", mark));
        }
        else if (INVISIBLE.test(ch)) { flush(); span.appendChild(el("span", "ws", `⟨U+${hex(ch.codePointAt(0), 4)}⟩`)); }
        else if (family && !hasGlyph(ch, family)) {
          flush();
          const label = el("span", "nofont", `⟨U+${hex(ch.codePointAt(0), 4)}⟩`);
          label.title = `${ch} (no font on this machine draws it)`;
          span.appendChild(label);
        } else plain += ch;
      }
      flush();
    }

    /** The box of token k of window w: a copy of that id's drawing, coloured by its place. */
    tokenSpan(row, w, k, text, family) {
      const id = w.ids[k];
      let template = row.drawn.get(id);
      if (!template) {
        template = this.drawToken(w.infos[id], family);
        if (row.drawn.size > 20000) row.drawn.clear();
        row.drawn.set(id, template);
      }
      const span = template.cloneNode(true);
      if (span.className === "tok") span.style.background = PALETTE[(w.i0 + k) % PALETTE.length];
      span.dataset.k = k;
      return span;
    }

    /** A token's box, drawn from its bytes (or its vocabulary spelling: ##ing, ▁the). */
    drawToken(info, family) {
      const special = info.kind === "special";
      const span = el("span", special ? "tok special" : info.kind === "unknown" ? "tok unknown" : "tok");
      span.tabIndex = -1;
      span.setAttribute("role", "option");
      span.setAttribute("aria-selected", "false");
      if (info.display !== undefined) {
        this.appendText(span, info.display, family, true);
        return span;
      }
      const parts = special ? [{ text: decoder.decode(Uint8Array.from(info.bytes, (c) => c.charCodeAt(0))) }] : splitUtf8(info.bytes);
      for (const part of parts) {
        if ("text" in part) { this.appendText(span, part.text, family); continue; }
        const hexed = [...part.bytes].map((c) => hex(c.charCodeAt(0), 2)).join(" ");
        span.appendChild(el("span", "raw", `⟨${hexed}⟩`));
      }
      return span;
    }

    /** What a token is: its place, id, bytes and the characters they come from. */
    describe(row, w, k, text, partial, short) {
      const id = w.ids[k], info = w.infos[id], n = info.bytes.length;
      const chars = text.slice(w.starts[k], w.ends[k]);
      const parts = [`token ${(w.i0 + k + 1).toLocaleString("en")} of ${row.data.count.toLocaleString("en")}`, `id ${id}`];
      if (info.piece !== info.bytes) parts.push(`piece ${JSON.stringify(info.piece)}`);
      parts.push(`${n} byte${n !== 1 ? "s" : ""} ${bytesRepr(info.bytes)}`);
      if (info.kind !== "normal") parts.push(info.kind === "byte" ? "byte fallback" : `${info.kind} token`);
      if (partial) parts.push(`not valid UTF-8 alone: bytes of ${[...chars].map((c) => `U+${hex(c.codePointAt(0), 4)}`).join(" ")}`);
      else if (!short && chars) parts.push(`from the text ${JSON.stringify(chars)}`);
      return parts.join(", ");
    }

    select(row, k, focus) {
      const all = row.txt.querySelectorAll(".tok");
      if (!all.length) return;
      k = Math.max(0, Math.min(all.length - 1, k));
      if (row.focus >= 0 && all[row.focus]) {
        all[row.focus].tabIndex = -1;
        all[row.focus].setAttribute("aria-selected", "false");
      } else {
        all.forEach((t) => { t.tabIndex = -1; });
      }
      row.focus = k;
      const tok = all[k];
      tok.tabIndex = 0;
      tok.setAttribute("aria-selected", "true");
      const partial0 = tok.querySelector(".raw") !== null;
      tok.setAttribute("aria-label", this.describe(row, row.data.win, k, this.model.text, partial0, true));
      if (focus) tok.focus();
      const w = row.data.win, label = api.tokenizerSpec(row.name).label;
      const partial = tok.querySelector(".raw") !== null;
      this.details.replaceChildren(el("b", "", `${label}: `), this.describe(row, w, k, this.model.text, partial, false));
      const [cs, ce] = w.chunkOf[k];
      if (w.steps && typeof api.showMerges === "function" && document.querySelector(".tokcourse-bpe-stepper")) {
        const button = el("button", "tkp-button", "Watch BPE merge this chunk");
        button.type = "button";
        button.addEventListener("click", () => this.watch(row, k));
        this.details.append(" ", button);
      }
      this.details.dataset.chunk = JSON.stringify([cs, ce]);
    }

    /** Open the merge stepper (stepper.js) on the chunk of token k. */
    watch(row, k) {
      const w = row.data && row.data.win;
      if (!w || !w.steps || typeof api.showMerges !== "function" || !w.chunkOf[k]) return;
      const [cs, ce] = w.chunkOf[k];
      api.showMerges(row.name, api.fixSurrogates(this.model.text), cs, ce);
    }
  }

  function init(div) {
    if (div.dataset.ready) return;
    new Box(div); // eslint-disable-line no-new
  }

  function initAll() {
    document.querySelectorAll(".tokcourse-playground").forEach(init);
  }

  api.initAll = initAll;
  api.hasGlyph = hasGlyph; // the merge stepper labels undrawable characters the same way
  api.TextModel = TextModel;
  api.boxes = boxes;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})(window);
