/*
 * tokcourse playground core: what every other playground file builds on. Loaded first.
 *
 * 1. A module registry. Each tokenizer file (encoder.js, sentencepiece.js, wordpiece.js, ...)
 *    is written as
 *        tokcoursePlaygroundModule("name", function (api) { ... api.X = ...; });
 *    The body runs at once on the page, and `moduleSource()` gives the JavaScript that runs the
 *    same bodies again inside the Web Worker that does the encoding (a worker made from a Blob:
 *    a page opened from disk, file://, may not start a worker from a file). So a module body
 *    must not touch `document` or `window`: only `api` and the globals a worker has too.
 * 2. Data loading. A data file `data/<file>.js` (written when the book is built) calls
 *    `tokcoursePlayground.addData("<file>", {...})`; `loadData("<file>")` injects it with a
 *    <script> tag (fetch() is refused on file:// pages) and resolves with that object.
 * 3. A tokenizer registry. `registerTokenizer(name, spec)` with spec = {label, files, create,
 *    steps}: `create(...datas)` makes the tokenizer from the objects of `files`, in that order;
 *    `steps: true` says it has `mergeSteps` (the merge stepper offers it before its data loads).
 *    `tokenizer(name)` loads the files and resolves with the tokenizer.
 *
 * Shared helpers for the modules: fixSurrogates, utf8, utf8Width, MinHeap, Counter.
 *
 * Every tokenizer has the same small interface, which the worker's incremental encoder uses:
 *
 *   tok.name, tok.label
 *   tok.nextChunkEnd(text, start) -> end        the chunk that starts at boundary `start`
 *       ends at `end` (> start). The chunks cover the text without gaps; the chunks from a
 *       boundary on depend only on text.slice(start) and on whether start is 0.
 *   tok.safeBoundary(text, b, known = b + 1) -> boolean    true if the chunks before boundary
 *       b (0 < b < known) depend only on text.slice(0, known): an edit at or after `known`
 *       cannot change them. The engine passes where an edit begins. A chunk may read past its
 *       own end (GPT-2's "'re", GPT-4o's word before "'re" or before capitals): each tokenizer
 *       says how far, from its pattern, where it defines this method.
 *   tok.encodeChunk(text, start, end, out)      append the chunk's tokens to out.ids,
 *       out.starts, out.ends (plain arrays): the id, and the UTF-16 offsets in `text` of the
 *       first and past the last character the token's bytes come from (a token that covers
 *       no character, like SentencePiece's dummy-prefix "▁" alone, has start == end).
 *   tok.encode(text) -> {ids, starts, ends}     the whole text: every chunk in turn.
 *   tok.tokenInfo(id) -> {bytes, piece, kind}   bytes: the token's bytes as a binary string
 *       (one char 0-255 per byte); piece: the vocabulary's own spelling ("▁the", "##ing",
 *       "<0x0A>"; for byte-level BPE the bytes themselves); kind: "normal", "byte" (a
 *       byte-fallback piece), "special", "unknown" ([UNK], <unk>).
 *   tok.vocabSize
 *   tok.loneSurrogates = "refuse"   (optional) the tokenizer sees the text as typed and throws
 *       on a lone surrogate, as its library does (sentencepiece); any other tokenizer gets
 *       the text with lone surrogates as U+FFFD, as tiktoken's Python API reads it.
 *   tok.mergeSteps(text, start, end)   (BPE tokenizers) {parts, steps: [{at, rank | score, id}],
 *       ids, note, units}: each step joins parts[at] and parts[at + 1]; units "characters"
 *       when the parts are characters (SentencePiece), bytes otherwise.
 */
(function core(global) {
  "use strict";

  const api = (global.tokcoursePlayground = global.tokcoursePlayground || {});
  if (api.moduleSource) return; // loaded twice: keep the first

  // ------------------------------------------------------------------ 1. modules

  const modules = [];

  global.tokcoursePlaygroundModule = function (name, body) {
    modules.push([name, body]);
    body(api);
  };

  /** JavaScript that re-creates this core and every module in a worker (`self`). */
  api.moduleSource = function () {
    const parts = [`(${core.toString()})(self);`];
    for (const [name, body] of modules) {
      parts.push(`tokcoursePlaygroundModule(${JSON.stringify(name)}, ${body.toString()});`);
    }
    return parts.join("\n");
  };

  // ------------------------------------------------------------------ shared helpers

  /** `text` with every lone surrogate replaced by U+FFFD, like tiktoken's Python `encode`. */
  api.fixSurrogates = function (text) {
    if (typeof text.toWellFormed === "function") return text.toWellFormed();
    return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  };

  /** UTF-8 bytes of well-formed `text` as a "binary string": one char (0-255) per byte. */
  api.utf8 = function (text) {
    let out = "";
    for (const ch of text) {
      const c = ch.codePointAt(0);
      if (c < 0x80) out += ch;
      else if (c < 0x800) out += String.fromCharCode(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000)
        out += String.fromCharCode(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else
        out += String.fromCharCode(
          0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return out;
  };

  /** Length of the UTF-8 sequence a lead byte announces; 0 if it cannot start one. */
  api.utf8Width = function (lead) {
    if (lead < 0x80) return 1;
    if (lead >= 0xc2 && lead <= 0xdf) return 2;
    if (lead >= 0xe0 && lead <= 0xef) return 3;
    if (lead >= 0xf0 && lead <= 0xf4) return 4;
    return 0;
  };

  /** A binary min-heap of numbers (each packs a merge order and a position into one number). */
  api.MinHeap = class MinHeap {
    constructor() { this.a = []; }
    get size() { return this.a.length; }
    push(x) {
      const a = this.a;
      let i = a.push(x) - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (a[p] <= x) break;
        a[i] = a[p];
        i = p;
      }
      a[i] = x;
    }
    pop() {
      const a = this.a, top = a[0], last = a.pop();
      if (a.length) {
        let i = 0;
        for (;;) {
          let k = 2 * i + 1;
          if (k >= a.length) break;
          if (k + 1 < a.length && a[k + 1] < a[k]) k += 1;
          if (a[k] >= last) break;
          a[i] = a[k];
          i = k;
        }
        a[i] = last;
      }
      return top;
    }
  };

  /** Counts of live items before a position (a Fenwick tree): a merge stepper's `at`. */
  api.Counter = class Counter {
    constructor(n) { this.t = new Int32Array(n + 1); }
    add(i, d) { for (i++; i < this.t.length; i += i & -i) this.t[i] += d; }
    before(i) { let s = 0; for (; i > 0; i -= i & -i) s += this.t[i]; return s; }
    /** The position of the k-th live item (k >= 1), or -1 if there are fewer. */
    kth(k) {
      let pos = 0;
      for (let step = 1 << (31 - Math.clz32(this.t.length - 1)); step; step >>= 1) {
        if (pos + step < this.t.length && this.t[pos + step] < k) { pos += step; k -= this.t[pos]; }
      }
      return pos + 1 < this.t.length ? pos : -1;
    }
  };

  // ------------------------------------------------------------------ 2. data

  const data = {}; // file -> object handed to addData
  const waiting = {}; // file -> [resolve, reject] callbacks

  api.addData = function (file, object) {
    data[file] = object;
    (waiting[file] || []).forEach(([resolve]) => resolve(object));
    delete waiting[file];
  };

  /** Where the data files are: data/ next to this script (set before loading to override). */
  if (!api.dataUrl && global.document && global.document.currentScript) {
    api.dataUrl = new URL("data/", global.document.currentScript.src).href;
  }

  const requested = new Set();

  /** Promise of the object `data/<file>.js` hands to addData. Page only (not in the worker). */
  api.loadData = function (file) {
    if (data[file]) return Promise.resolve(data[file]);
    return new Promise((resolve, reject) => {
      (waiting[file] = waiting[file] || []).push([resolve, reject]);
      if (requested.has(file)) return;
      requested.add(file);
      const tag = global.document.createElement("script");
      tag.src = (api.dataUrl || "data/") + file + ".js";
      tag.onerror = () => {
        requested.delete(file);
        const err = new Error(`could not load ${tag.src}`);
        (waiting[file] || []).forEach(([, rej]) => rej(err));
        delete waiting[file];
      };
      global.document.head.appendChild(tag);
    });
  };

  // ------------------------------------------------------------------ 3. tokenizers

  const specs = {}; // name -> {label, files, create}
  api.TOKENIZERS = []; // names, in the order they were registered

  api.registerTokenizer = function (name, spec) {
    if (!specs[name]) api.TOKENIZERS.push(name);
    specs[name] = spec;
  };

  api.tokenizerSpec = function (name) {
    const spec = specs[name];
    if (!spec) throw new Error(`unknown tokenizer ${JSON.stringify(name)}; known: ${api.TOKENIZERS.join(", ")}`);
    return spec;
  };

  /** Make tokenizer `name` from its data objects (in the worker, the page posts them). */
  api.createTokenizer = function (name, datas) {
    const spec = api.tokenizerSpec(name);
    const t0 = Date.now();
    const tok = spec.create(...datas);
    tok.buildMs = Date.now() - t0;
    return tok;
  };

  /** Every token of `text` under `tok`, chunk by chunk: {ids, starts, ends}. */
  api.encodeWhole = function (tok, text) {
    const out = { ids: [], starts: [], ends: [] };
    for (let start = 0; start < text.length;) {
      const end = tok.nextChunkEnd(text, start);
      if (!(end > start)) throw new Error(`${tok.name}: no chunk at ${start}`);
      tok.encodeChunk(text, start, end, out);
      start = end;
    }
    return out;
  };

  const made = {}; // name -> Promise<tokenizer>

  /** Promise of tokenizer `name` on the page, loading its data the first time. */
  api.tokenizer = function (name) {
    if (!made[name]) {
      const spec = api.tokenizerSpec(name);
      made[name] = Promise.all(spec.files.map(api.loadData)).then((datas) => api.createTokenizer(name, datas));
    }
    return made[name];
  };
})(typeof self !== "undefined" ? self : window);
