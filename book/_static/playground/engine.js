/*
 * tokcourse playground engine: encode a text that changes one keystroke at a time, re-encoding
 * only what the change can reach. Runs in the playground's Web Worker (and in tests on the page).
 *
 * Every tokenizer cuts text into chunks and encodes each chunk on its own (core.js's interface).
 * After an edit, the chunks before the edit stay as they were, back to a boundary b the
 * tokenizer calls safe given the text before the edit (a chunk may read past its own end: GPT-2
 * and GPT-4o join a contraction to what is before it; see encoder.js); from there we cut and
 * encode again until a new chunk boundary lands on an old one past the edit: what follows a
 * boundary depends only on the text after it (and on whether it is 0: SentencePiece's dummy
 * prefix), so every later chunk is the old one, shifted. A keystroke in a megabyte of text costs
 * a few chunks, plus copying the arrays of offsets.
 */
tokcoursePlaygroundModule("engine", function (api) {
  "use strict";

  /** The first index i with a[i] > x in the sorted a[lo, hi), or hi. */
  function upperBound(a, x, lo, hi) {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  /** The index of `x` in the sorted a[lo, hi), or -1. */
  function indexOf(a, x, lo, hi) {
    const i = upperBound(a, x, lo, hi) - 1;
    return i >= lo && a[i] === x ? i : -1;
  }

  class Incremental {
    constructor(tok) {
      this.tok = tok;
      this.text = "";
      this.chunks = new Int32Array([0]); // chunk starts, then text.length
      this.first = new Int32Array([0]); // index of each chunk's first token, then the count
      this.ids = new Int32Array(0);
      this.starts = new Int32Array(0);
      this.ends = new Int32Array(0);
      this.reencoded = 0; // characters encoded again by the last update (for the tests)
    }

    /** Bring the tokens up to date with `text` (well-formed: lone surrogates already replaced). */
    update(text) {
      const old = this.text, oldLen = old.length, newLen = text.length;
      if (text === old) { this.reencoded = 0; return; }
      // the edit: old[p, oldLen - s) became text[p, newLen - s)
      let p = 0;
      const most = Math.min(oldLen, newLen);
      while (p < most && old.charCodeAt(p) === text.charCodeAt(p)) p++;
      let s = 0;
      while (s < most - p && old.charCodeAt(oldLen - 1 - s) === text.charCodeAt(newLen - 1 - s)) s++;
      // never cut a surrogate pair: move the edit's edges out of one
      if (p > 0 && (text.charCodeAt(p - 1) & 0xfc00) === 0xd800) p--;
      if (s > 0 && (text.charCodeAt(newLen - s) & 0xfc00) === 0xdc00) s--;
      const delta = newLen - oldLen, newEditEnd = newLen - s;
      const nChunks = this.chunks.length - 1;
      // restart at a boundary b <= p - 1 whose chunks before it read only text[0, p), which
      // the edit left as it was (or at 0)
      let k = p === 0 ? 0 : upperBound(this.chunks, p - 1, 0, nChunks) - 1;
      while (k > 0 && !this.tok.safeBoundary(text, this.chunks[k], p)) k--;
      const b = this.chunks[k];
      // cut and encode again from b until a boundary past the edit is an old one
      const fresh = [], out = { ids: [], starts: [], ends: [] };
      let pos = b, j = -1;
      while (pos < newLen) {
        const end = this.tok.nextChunkEnd(text, pos);
        if (!(end > pos)) throw new Error(`${this.tok.name}: no chunk at ${pos}`);
        fresh.push(pos, out.ids.length);
        this.tok.encodeChunk(text, pos, end, out);
        pos = end;
        if (pos >= newEditEnd && pos < newLen) {
          // pos > 0: never the old chunk at 0, which was encoded as the first (a dummy prefix)
          j = indexOf(this.chunks, pos - delta, Math.max(k, 1), nChunks);
          if (j >= 0) break;
        }
      }
      if (pos >= newLen) j = nChunks;
      this.reencoded = pos - b;
      // splice: chunks [0, k) + fresh + old chunks [j, ...) shifted by delta
      const nFresh = fresh.length / 2, tailChunks = nChunks - j;
      const chunks = new Int32Array(k + nFresh + tailChunks + 1);
      const first = new Int32Array(chunks.length);
      chunks.set(this.chunks.subarray(0, k));
      first.set(this.first.subarray(0, k));
      const before = this.first[k], after = this.first[j];
      for (let i = 0; i < nFresh; i++) {
        chunks[k + i] = fresh[2 * i];
        first[k + i] = before + fresh[2 * i + 1];
      }
      const count = before + out.ids.length + (this.first[nChunks] - after);
      const shiftTokens = before + out.ids.length - after;
      for (let i = 0; i <= tailChunks; i++) {
        chunks[k + nFresh + i] = this.chunks[j + i] + delta;
        first[k + nFresh + i] = this.first[j + i] + shiftTokens;
      }
      chunks[chunks.length - 1] = newLen;
      first[first.length - 1] = count;
      const ids = new Int32Array(count), starts = new Int32Array(count), ends = new Int32Array(count);
      ids.set(this.ids.subarray(0, before));
      starts.set(this.starts.subarray(0, before));
      ends.set(this.ends.subarray(0, before));
      ids.set(out.ids, before);
      starts.set(out.starts, before);
      ends.set(out.ends, before);
      const tail = before + out.ids.length;
      ids.set(this.ids.subarray(after), tail);
      for (let i = after, t = tail; i < this.ids.length; i++, t++) {
        starts[t] = this.starts[i] + delta;
        ends[t] = this.ends[i] + delta;
      }
      Object.assign(this, { text, chunks, first, ids, starts, ends });
    }

    /** The chunk [start, end) that holds text offset `at`. */
    chunkAt(at) {
      const n = this.chunks.length - 1;
      const k = Math.max(0, Math.min(n - 1, upperBound(this.chunks, at, 0, n) - 1));
      return [this.chunks[k], this.chunks[k + 1]];
    }
  }

  /** Number of characters (code points) of `text`. */
  function codePoints(text) {
    let n = text.length;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if ((c & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n--; i++; }
    }
    return n;
  }

  /**
   * What the page draws of one tokenizer's tokens: those that overlap the characters
   * [from, to), at most `max`, with each distinct id's bytes, vocabulary piece and kind, and the
   * chunk each token belongs to (for the merge stepper).
   */
  function windowOf(state, from, to, max) {
    const { ids, starts, ends, chunks, first } = state, n = ids.length, tok = state.tok;
    const i0 = from === 0 ? 0 : upperBound(ends, from, 0, n);
    let i1 = i0;
    while (i1 < n && starts[i1] < to) i1++;
    if (i1 === i0 && i0 < n && from === to) i1 = i0;
    const shown = Math.min(i1 - i0, max);
    const win = { from, to, i0, ids: [], starts: [], ends: [], chunkOf: [], infos: {}, more: i1 - i0 - shown,
      steps: typeof tok.mergeSteps === "function" };
    const nChunks = chunks.length - 1;
    for (let i = i0; i < i0 + shown; i++) {
      const id = ids[i];
      win.ids.push(id); win.starts.push(starts[i]); win.ends.push(ends[i]);
      const c = Math.max(0, upperBound(first, i, 0, nChunks) - 1);
      win.chunkOf.push([chunks[c], chunks[c + 1]]);
      if (!win.infos[id]) {
        const info = tok.tokenInfo(id);
        const entry = { bytes: info.bytes, piece: info.piece, kind: info.kind };
        if (info.kind !== "byte" && info.piece !== info.bytes) entry.display = info.piece;
        win.infos[id] = entry;
      }
    }
    return win;
  }

  /**
   * The worker's side of the playground: messages from the page are
   *   {type: "init", name, datas}                          make tokenizer `name` from its data
   *   {type: "text", box, version, text, names, window, max}   tokens of `text` under `names`
   *   {type: "window", box, version, names, window, max}   the same text, another window
   * and the answers
   *   {type: "ready", name, buildMs} | {type: "error", name, message}
   *   {type: "tokens", box, version, name, count, chars, ms, reencoded, length, win}
   */
  function serve(scope) {
    const tokenizers = {}, states = {}, chars = {};
    scope.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === "init") {
        try {
          tokenizers[msg.name] = api.createTokenizer(msg.name, msg.datas);
          scope.postMessage({ type: "ready", name: msg.name, buildMs: tokenizers[msg.name].buildMs });
        } catch (err) {
          scope.postMessage({ type: "error", name: msg.name, message: String((err && err.message) || err) });
        }
        return;
      }
      const text = msg.type === "text" ? api.fixSurrogates(msg.text) : null;
      if (text !== null) chars[msg.box] = codePoints(text);
      for (const name of msg.names) {
        const tok = tokenizers[name];
        const key = msg.box + "\u0000" + name;
        let ms = 0, reencoded = 0;
        try {
          if (!tok) throw new Error(`${name} is not loaded`);
          if (!states[key]) states[key] = new Incremental(tok);
          const state = states[key];
          if (text !== null) {
            const t0 = performance.now();
            // lone surrogates become U+FFFD (tiktoken's Python API) unless the tokenizer refuses
            // them as its library does (sentencepiece): then it sees the text as typed
            state.update(tok.loneSurrogates === "refuse" ? msg.text : text);
            ms = performance.now() - t0;
            reencoded = state.reencoded;
          }
          const [from, to] = msg.window;
          const win = windowOf(state, from, Math.min(to, state.text.length), msg.max || 3000);
          scope.postMessage({ type: "tokens", box: msg.box, version: msg.version, name, count: state.ids.length,
            chars: chars[msg.box], ms, reencoded, length: state.text.length, win });
        } catch (err) {
          states[key] = null;
          scope.postMessage({ type: "error", box: msg.box, version: msg.version, name,
            message: String((err && err.message) || err) });
        }
      }
    };
  }

  api.windowOf = windowOf;
  api.Incremental = Incremental;
  api.upperBound = upperBound;
  api.codePoints = codePoints;
  api.serveWorker = serve;
});
