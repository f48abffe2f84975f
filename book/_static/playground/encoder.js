/*
 * tokcourse playground encoder: GPT-2 (r50k_base), GPT-4 (cl100k_base) and GPT-4o (o200k_base)
 * in the browser, giving exactly tiktoken's ids. No framework, no tokenizer package: read it next
 * to the Python package, step by step.
 *
 *   encode(text)                                                  Python / chapter
 *   1. lone surrogates become U+FFFD, as tiktoken's Python API    tokcourse/utf8.py     ch. 03
 *      does (a JS string, like a textarea, can hold them)
 *   2. special tokens ("<|endoftext|>") cut the text first;       tokcourse/special.py  ch. 06
 *      each piece between them is encoded on its own
 *   3. the split pattern cuts a piece into chunks                 tokcourse/patterns.py ch. 04
 *   4. a chunk's UTF-8 bytes are merged by rank: the pair whose   tokcourse/pretrained.py ch. 05
 *      bytes have the lowest rank first, leftmost on a tie; a
 *      chunk that is itself a token is that token (tiktoken's
 *      shortcut, which we must take to give its ids)
 *   5. a heap of candidate merges keeps a long chunk (a page of   tokcourse/fast_encode.py ch. 13
 *      spaces) O(n log n) instead of quadratic
 *   6. token bytes that are not UTF-8 on their own are shown as   tokcourse/course/viz.py ch. 03
 *      hex by the widget (playground.js)
 *
 * Two things JavaScript's regex engine does differently from tiktoken's (Rust):
 * - it has no possessive quantifiers (x++, x?+): we write the atomic group (?=(x))\1, which
 *   matches what x matches first and never gives any of it back;
 * - its \p{L}, \s ... follow the browser's Unicode version. We use none of them: the character
 *   classes come from data/classes.js, written when the book is built from tiktoken's Unicode
 *   16.0 tables (book/_ext/tokcourse_playground.py, as tokcourse/unicode_pin.py does in Python).
 *   Case-insensitive contractions ('S, 'Ll) are spelled out too: [sSſ] ... (ſ folds to s).
 *
 * Data: data/<encoding>.js and data/classes.js, written at build time and loaded by core.js.
 * This file is a module of core.js: it also runs inside the playground's Web Worker.
 */
tokcoursePlaygroundModule("tiktoken", function (api) {
  "use strict";

  // ------------------------------------------------------------------ 1. text to UTF-8 bytes

  // lone surrogates to U+FFFD, and text to UTF-8 bytes: core.js's helpers
  const { fixSurrogates, utf8, MinHeap } = api;

  // ------------------------------------------------------------------ 3. split patterns

  /**
   * The split pattern of encoding `name` as JavaScript regex source (flag `u`), part by part,
   * as tokcourse/patterns.py writes tiktoken's `_pat_str`. `c` holds the class bodies
   * (c.L is the inside of [...] for \p{L}, c.S for \s, ...).
   */
  function patternParts(name, c) {
    let groups = 0;
    // x++ / x?+ / x{1,3}+ (possessive): match what x matches first, never give any back
    const possessive = (x) => `(?=(${x}))\\${++groups}`;
    const notSpace = `[^${c.S}]`;
    if (name === "r50k_base") {
      return [
        "'(?:[sdmt]|ll|ve|re)", // contractions: lower case, ASCII ' only
        " ?" + possessive(`[${c.L}]+`), // ' ?\p{L}++'  a word, at most one space in front
        " ?" + possessive(`[${c.N}]+`), // ' ?\p{N}++'  a number of any length
        " ?" + possessive(`[^${c.S}${c.L}${c.N}]+`), // ' ?[^\s\p{L}\p{N}]++'  punctuation run
        possessive(`[${c.S}]+`) + "$", // '\s++$'  white space that ends the text
        `[${c.S}]+(?!${notSpace})`, // '\s+(?!\S)'  white space, minus the last before a word
        `[${c.S}]`, // '\s'
      ];
    }
    if (name === "cl100k_base") {
      return [
        "'(?:[sSſdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])", // "'(?i:[sdmt]|ll|ve|re)"
        possessive(`[^\\r\\n${c.L}${c.N}]?`) + possessive(`[${c.L}]+`), // '[^\r\n\p{L}\p{N}]?+\p{L}++'
        possessive(`[${c.N}]{1,3}`), // '\p{N}{1,3}+'  numbers in groups of 1 to 3 digits
        " ?" + possessive(`[^${c.S}${c.L}${c.N}]+`) + possessive("[\\r\\n]*"), // ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
        possessive(`[${c.S}]+`) + "$", // '\s++$'
        `[${c.S}]*[\\r\\n]`, // '\s*[\r\n]'  white space up to and including a line break
        `[${c.S}]+(?!${notSpace})`, // '\s+(?!\S)'
        `[${c.S}]`, // '\s'
      ];
    }
    if (name === "o200k_base") {
      const upper = `[${c.Lu}${c.Lt}${c.Lm}${c.Lo}${c.M}]`; // cased upper, or caseless
      const lower = `[${c.Ll}${c.Lm}${c.Lo}${c.M}]`; // cased lower, or caseless
      const prefix = `[^\\r\\n${c.L}${c.N}]?`;
      // "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
      const contraction = "(?:'[sSſtTmMdD]|'[rR][eE]|'[vV][eE]|'[lL][lL])?";
      return [
        prefix + upper + "*" + lower + "+" + contraction, // "Hello", " don't"
        prefix + upper + "+" + lower + "*" + contraction, // "HELLO", "HTTPServer" -> "HTTPS"...
        `[${c.N}]{1,3}`, // '\p{N}{1,3}'
        ` ?[^${c.S}${c.L}${c.N}]+[\\r\\n/]*`, // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
        `[${c.S}]*[\\r\\n]+`, // '\s*[\r\n]+'
        `[${c.S}]+(?!${notSpace})`, // '\s+(?!\S)'
        `[${c.S}]+`, // '\s+'
      ];
    }
    throw new Error(`unknown encoding ${JSON.stringify(name)}: use r50k_base, cl100k_base or o200k_base`);
  }

  // ------------------------------------------------------------------ 4-5. rank-based BPE

  /**
   * The ids of one chunk (`piece`: a binary string of UTF-8 bytes), merged by rank.
   *
   * The parts of the chunk form a linked list (nxt/prv hold the start of the neighbouring
   * part; a part is named by its first byte). rank[i] is the rank of the bytes of part i and
   * the part after it together (-1: not a token, cannot merge). The heap holds rank * (n + 1)
   * + i for every pair that can merge, so it pops the lowest rank, leftmost on a tie, which is
   * tiktoken's choice. A merge changes two pairs; their new ranks are pushed and the old
   * entries left in the heap, skipped when they come out (their rank is no longer rank[i]).
   */
  function bytePairMerge(piece, ranks) {
    const n = piece.length;
    const nxt = new Int32Array(n), prv = new Int32Array(n), rank = new Float64Array(n);
    const heap = new MinHeap(), width = n + 1;
    const rankOf = (a, b) => { const r = ranks.get(piece.slice(a, b)); return r === undefined ? -1 : r; };
    for (let i = 0; i < n; i++) { nxt[i] = i + 1; prv[i] = i - 1; }
    for (let i = 0; i + 1 < n; i++) {
      rank[i] = rankOf(i, i + 2);
      if (rank[i] >= 0) heap.push(rank[i] * width + i);
    }
    rank[n - 1] = -1;
    while (heap.size) {
      const key = heap.pop();
      const i = key % width, r = (key - i) / width;
      if (rank[i] !== r) continue; // stale: this pair changed since it was pushed
      const j = nxt[i], k = j < n ? nxt[j] : n; // part i swallows part j
      nxt[i] = k;
      if (k < n) prv[k] = i;
      rank[j] = -1;
      rank[i] = k < n ? rankOf(i, nxt[k]) : -1; // the new pair (i, k)
      if (rank[i] >= 0) heap.push(rank[i] * width + i);
      const p = prv[i];
      if (p >= 0) { // the new pair (p, i)
        rank[p] = rankOf(p, k);
        if (rank[p] >= 0) heap.push(rank[p] * width + p);
      }
    }
    const ids = [];
    for (let i = 0; i < n; i = nxt[i]) ids.push(ranks.get(piece.slice(i, nxt[i])));
    return ids;
  }

  // ------------------------------------------------------------------ the encoder

  function escapeRegex(s) {
    return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }

  const CACHE_LIMIT = 65536;
  const LABELS = { r50k_base: "GPT-2", cl100k_base: "GPT-4", o200k_base: "GPT-4o" };

  class Encoder {
    /** `data`: the object data/<name>.js hands over; `classes`: data/classes.js's. */
    constructor(name, data, classes) {
      this.name = name;
      this.label = LABELS[name] || name;
      const lengths = atob(data.lengths), all = atob(data.bytes);
      this.size = this.vocabSize = data.size;
      this.tokens = new Array(data.size); // rank -> bytes (binary string)
      this.ranks = new Map(); // bytes -> rank
      let pos = 0;
      for (let r = 0; r < data.size; r++) {
        const token = all.slice(pos, pos + lengths.charCodeAt(r));
        pos += token.length;
        this.tokens[r] = token;
        this.ranks.set(token, r);
      }
      if (pos !== all.length || lengths.length !== data.size)
        throw new Error(`${name}: the rank table is damaged (${pos} of ${all.length} bytes read)`);
      this.special = new Map(Object.entries(data.special)); // text -> id
      this.specialBytes = new Map([...this.special].map(([s, id]) => [id, utf8(s)]));
      const names = [...this.special.keys()].map(escapeRegex).join("|");
      this.specialPattern = names ? new RegExp(names, "g") : null;
      const source = patternParts(name, classes.classes).join("|");
      this.pattern = new RegExp(source, "gu");
      this.sticky = new RegExp(source, "yu"); // matches exactly at lastIndex (chunk by chunk)
      this.notSpace = new RegExp(`[^${classes.classes.S}]`, "u");
      const c = classes.classes; // GPT-4o's [upper]: a run a word may read and give back
      this.upperRun = name === "o200k_base" ? new RegExp(`[${c.Lu}${c.Lt}${c.Lm}${c.Lo}${c.M}]*`, "yu") : null;
      this.cache = new Map();
      this.piece = null; // the piece (text between special tokens) nextChunkEnd is in
    }

    /** Split `text` into chunks (step 3). Every character lands in a chunk. */
    split(text) {
      const chunks = [];
      this.pattern.lastIndex = 0;
      for (let m; (m = this.pattern.exec(text)) !== null;) {
        if (m[0] === "") { this.pattern.lastIndex += 1; continue; } // never happens with ours
        chunks.push(m[0]);
      }
      return chunks;
    }

    /** The ids of one chunk (steps 4-5), from the cache when it was seen before. */
    chunkIds(chunk) {
      let ids = this.cache.get(chunk);
      if (ids === undefined) {
        const piece = utf8(chunk);
        const whole = this.ranks.get(piece);
        ids = whole !== undefined ? [whole] : bytePairMerge(piece, this.ranks);
        if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
        this.cache.set(chunk, ids);
      }
      return ids;
    }

    /** Ids of `text` with special-token text treated as ordinary text. */
    encodeOrdinary(text) {
      const ids = [];
      for (const chunk of this.split(fixSurrogates(text))) {
        for (const id of this.chunkIds(chunk)) ids.push(id);
      }
      return ids;
    }

    /** Ids of `text`, every special token recognised (tiktoken's allowed_special="all"). */
    encodeIds(text) {
      text = fixSurrogates(text);
      if (!this.specialPattern) return this.encodeOrdinary(text);
      const ids = [];
      let start = 0;
      this.specialPattern.lastIndex = 0;
      for (let m; (m = this.specialPattern.exec(text)) !== null;) {
        for (const id of this.encodeOrdinary(text.slice(start, m.index))) ids.push(id);
        ids.push(this.special.get(m[0]));
        start = m.index + m[0].length;
      }
      for (const id of this.encodeOrdinary(text.slice(start))) ids.push(id);
      return ids;
    }

    // -------------------------------------------------- core.js's interface, chunk by chunk

    /** The special token that starts at `start` in `text`, or undefined. */
    specialAt(text, start) {
      if (!this.specialPattern || text.charCodeAt(start) !== 60) return undefined; // "<"
      for (const name of this.special.keys()) if (text.startsWith(name, start)) return name;
      return undefined;
    }

    /**
     * End of the chunk that starts at `start`: a special token is a chunk of its own; other
     * text is cut into pieces at the special tokens, and each piece by the split pattern, as
     * tiktoken does (so `$` in the pattern is the end of the piece).
     */
    nextChunkEnd(text, start) {
      const special = this.specialAt(text, start);
      if (special !== undefined) return start + special.length;
      let piece = this.piece;
      if (!piece || piece.text !== text || start < piece.start || start >= piece.end) {
        let end = text.length;
        if (this.specialPattern) {
          this.specialPattern.lastIndex = start;
          const m = this.specialPattern.exec(text);
          if (m) end = m.index;
        }
        piece = this.piece = { text, start, end, str: text.slice(start, end) };
      }
      this.sticky.lastIndex = start - piece.start;
      const m = this.sticky.exec(piece.str);
      if (!m || !m[0]) return start + (text.codePointAt(start) > 0xffff ? 2 : 1); // never happens
      return piece.start + this.sticky.lastIndex;
    }

    /**
     * Whether the chunks before boundary b are the same in every text that begins with
     * text.slice(0, known) (known > b: the engine passes where an edit begins; by default b + 1).
     *
     * Why. A piece is cut from left to right: at each start the first alternative of the
     * pattern that matches there is the chunk. Which alternative wins, and how far it reaches,
     * depends only on the characters the regex engine reads while it tries the alternatives in
     * order (and on where the piece ends); the same characters give the same chunk. So the
     * chunks before b stand if none of them reads a character at or past `known`, and no
     * special token is still open at b. What does a chunk [s, e) read past its end e?
     *
     * In all three patterns:
     * - a run (`\p{L}++`, `\p{N}++`, `[^\s\p{L}\p{N}]++`, `[\r\n/]*` ...) reads the one character
     *   that stops it, e; `\p{N}{1,3}` reads at most its three digits;
     * - an alternative that fails at s reads s and at most s + 1 (an optional space or prefix,
     *   then one character of the class after it), except the contractions below;
     * - white space (`\s++$`, `\s+(?!\S)`, `\s*[\r\n]`) reads its whole run and the character
     *   after it, however far that is: a boundary after white space is never safe. (White space
     *   that ends before b - 1 reads at most b - 1: text[b - 1] is not white space.)
     * - a special token ends a piece, and `$` and the look-aheads see that end: one that could
     *   begin at or before b and end past it is not decided yet. One that begins after b
     *   changes no read: past b a chunk only looks for a contraction's letters or (GPT-4o) for
     *   [upper] below, and a special token begins with "<", which is neither, as the end of a
     *   piece is neither.
     * Where the three differ:
     * - GPT-2 (r50k_base) tries `'(?:[sdmt]|ll|ve|re)` first at every start, in lower case. At
     *   an apostrophe before l, v or r it reads one more character for "ll", "ve", "re"; when
     *   that fails, the apostrophe alone is a punctuation chunk that ends at e and has read
     *   e + 1. So a later chunk can join an earlier one: "We'r" is "We", "'", "r", and one "e"
     *   more makes "'re" of "'" and "r". Rule: b after "'" and before l, v, r needs b + 2 known.
     * - GPT-4 (cl100k_base) tries `'(?i:[sdmt]|ll|ve|re)` first too, but an apostrophe before a
     *   letter is never a chunk alone: `[^\r\n\p{L}\p{N}]?+\p{L}++` takes it with its letters
     *   ("'r"), so the contraction's second look falls inside the chunk or on its end. No chunk
     *   reads past its end but white space: b needs b + 1 known, as the engine always has.
     * - GPT-4o (o200k_base) has two ways for a later chunk to join an earlier one.
     *   (1) Both word alternatives end with an optional contraction,
     *   `(?i:'s|'t|'re|'ve|'m|'ll|'d)?`: a word that ends at e before an apostrophe has read
     *   e + 1 and, after r, v or l, e + 2. "We'r" is "We", "'r"; the "e" makes "We're".
     *   (2) Its words are not possessive. `[upper]*[lower]+` first takes the whole run of
     *   [upper] (Lu Lt Lm Lo M) and then gives characters back until [lower] (Ll Lm Lo M)
     *   can match. The caseless letters and marks are in both classes, so a word can end at one
     *   of them having read every capital after it, and the character after those: " 天天中彩票APP"
     *   is " 天天中彩票", "APP"; an "s" after it makes one chunk of all (other ids, too).
     *   Otherwise a word reads only the character after it, as a run does.
     *   Rule: b before "'" needs b + 3 known; b before a run of [upper] that ends at u (the
     *   first character that is not [upper]) needs u + 1 known. The run is read only up to
     *   `known`; it cannot hold many boundaries (a word takes all of it, or all but its last
     *   capitals, which the next chunk takes), so the engine reads each run at most twice.
     * Only the chunk that ends at b can read past b. A GPT-4o word that ends at b - 1 before
     * "'" reads b + 1 only when text[b] is r, v or l, and then the next chunk is "'" with its
     * letters, which covers b: b is no boundary. Chunks that end before b - 1 read at most two
     * characters past their ends, but for a GPT-4o word before a run of [upper] that goes on
     * past b: then the chunk that ends at b lies in that run too and reads it to the same end.
     */
    safeBoundary(text, b, known = b + 1) {
      if (b <= 0) return true;
      const last = text.codePointAt(b - 1) >= 0xdc00 && b >= 2 ? text.slice(b - 2, b) : text[b - 1];
      if (!this.notSpace.test(last)) return false;
      let reads = b + 1; // text.slice(0, reads): all that the chunks before b may read
      if (this.name === "r50k_base" && last === "'" && /^[lvr]$/.test(text[b] || "")) reads = b + 2;
      if (this.upperRun && text[b] === "'") reads = b + 3;
      else if (this.upperRun) { // GPT-4o: through the run of [upper] at b, up to `known`
        // (to known + 1: a character that begins before `known` is read whole)
        const run = this.upperRun, ahead = text.slice(b, known + 1);
        run.lastIndex = 0;
        run.exec(ahead);
        if (run.lastIndex > 0) reads = b + run.lastIndex + 1;
      }
      if (reads > known) return false;
      for (const name of this.special.keys()) {
        for (let q = Math.max(0, b - name.length + 1); q <= b; q++) {
          if (name.startsWith(text.slice(q, b + 1))) return false;
        }
      }
      return true;
    }

    /** Append the tokens of chunk text[start, end) to out (ids, starts, ends). */
    encodeChunk(text, start, end, out) {
      const chunk = text.slice(start, end);
      const special = this.special.get(chunk);
      if (special !== undefined && this.specialAt(text, start) === chunk) {
        out.ids.push(special); out.starts.push(start); out.ends.push(end);
        return;
      }
      const ids = this.chunkIds(chunk);
      // token bytes -> the characters they come from (a token may hold part of a character):
      // character [c, c + units) holds the chunk's bytes [byte, byte + width)
      const units = (i) => (text.codePointAt(i) > 0xffff ? 2 : 1);
      const width = (i) => { const cp = text.codePointAt(i); return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; };
      let c = start, byte = 0, w = width(start), pos = 0;
      for (const id of ids) {
        const n = this.tokens[id].length;
        while (pos >= byte + w) { byte += w; c += units(c); w = width(c); }
        let c2 = c, byte2 = byte, w2 = w;
        while (pos + n > byte2 + w2) { byte2 += w2; c2 += units(c2); w2 = width(c2); }
        out.ids.push(id); out.starts.push(c); out.ends.push(c2 + units(c2));
        pos += n;
      }
    }

    /** Every token of `text` with its offsets: {ids, starts, ends}. */
    encode(text) {
      return api.encodeWhole(this, fixSurrogates(text));
    }

    /** The bytes of token `id` as a binary string. */
    tokenBytes(id) {
      const b = id < this.size ? this.tokens[id] : this.specialBytes.get(id);
      if (b === undefined) throw new Error(`${this.name}: no token has id ${id}`);
      return b;
    }

    isSpecial(id) {
      return this.specialBytes.has(id);
    }

    tokenInfo(id) {
      const bytes = this.tokenBytes(id);
      return { bytes, piece: bytes, kind: this.isSpecial(id) ? "special" : "normal" };
    }

    /**
     * The merges of chunk text[start, end), one at a time, in rank order (chapter 05): the
     * chunk's bytes, then at each step the adjacent pair whose joined bytes have the lowest
     * rank (leftmost on a tie), until no pair is a token. Each step is {at, rank, id}: it joins
     * parts[at] and parts[at + 1] of the list as it is then. The same heap as bytePairMerge
     * picks the pairs; a Fenwick tree of live part starts turns a byte position into `at`, so a
     * long chunk costs n log n, not n squared.
     */
    mergeSteps(text, start, end) {
      const chunk = text.slice(start, end);
      const ids = [];
      this.encodeChunk(text, start, end, { ids, starts: [], ends: [] });
      if (this.specialAt(text, start) === chunk) {
        return { parts: [utf8(chunk)], steps: [], ids, note: "a special token: never merged, one id" };
      }
      const piece = utf8(chunk), n = piece.length, ranks = this.ranks;
      const live = new api.Counter(n); // 1 at each byte where a part starts
      for (let i = 0; i < n; i++) live.add(i, 1);
      const nxt = new Int32Array(n), prv = new Int32Array(n), rank = new Float64Array(n);
      const heap = new MinHeap(), width = n + 1, steps = [];
      const rankOf = (a, b) => { const r = ranks.get(piece.slice(a, b)); return r === undefined ? -1 : r; };
      for (let i = 0; i < n; i++) { nxt[i] = i + 1; prv[i] = i - 1; }
      for (let i = 0; i + 1 < n; i++) {
        rank[i] = rankOf(i, i + 2);
        if (rank[i] >= 0) heap.push(rank[i] * width + i);
      }
      if (n) rank[n - 1] = -1;
      while (heap.size) {
        const key = heap.pop();
        const i = key % width, r = (key - i) / width;
        if (rank[i] !== r) continue; // stale
        steps.push({ at: live.before(i), rank: r, id: r }); // parts that start before byte i
        const j = nxt[i], k = j < n ? nxt[j] : n;
        live.add(j, -1);
        nxt[i] = k;
        if (k < n) prv[k] = i;
        rank[j] = -1;
        rank[i] = k < n ? rankOf(i, nxt[k]) : -1;
        if (rank[i] >= 0) heap.push(rank[i] * width + i);
        const p = prv[i];
        if (p >= 0) {
          rank[p] = rankOf(p, k);
          if (rank[p] >= 0) heap.push(rank[p] * width + p);
        }
      }
      const merged = [];
      for (let i = 0; i < n; i = nxt[i]) merged.push(ranks.get(piece.slice(i, nxt[i])));
      let note = "";
      if (merged.join() !== ids.join()) {
        note = `the whole chunk is itself a token (id ${ids[0]}): tiktoken looks it up first and ` +
          "takes it, where the merges alone would stop at the parts above";
      }
      return { parts: [...piece], steps, ids, note };
    }
  }

  // ------------------------------------------------------------------ registration

  for (const name of ["r50k_base", "cl100k_base", "o200k_base"]) {
    api.registerTokenizer(name, {
      label: LABELS[name],
      files: ["classes", name],
      steps: true, // mergeSteps: the merge stepper (stepper.js) offers it
      create: (classes, data) => new Encoder(name, data, classes),
    });
  }

  api.ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base"];
  api.load = api.tokenizer; // the name older pages and tests use
  api.Encoder = Encoder;
  api.bytePairMerge = bytePairMerge;
  api.patternParts = patternParts;
});
