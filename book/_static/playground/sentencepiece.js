/*
 * tokcourse playground: Mistral 7B v1, a SentencePiece BPE model with byte fallback, in the
 * browser, giving exactly sentencepiece's ids. A port of tokcourse/sentencepiece_bpe.py
 * (chapter 07): read it next to that file, function by function.
 *
 *   encode(text)                                                 Python (sentencepiece_bpe.py)
 *   1. a lone surrogate (no UTF-8 form) is refused: an Error     model_file.check_text
 *      with the Python package's own message (see below)
 *   2. normalization: every space becomes "▁" (U+2581), and      SentencePieceBPE.normalize
 *      the text gets one "▁" in front (the dummy prefix)
 *   3. BPE over the normalized *characters* (code points, not    SentencePieceBPE._bpe_path
 *      bytes): join the neighbouring pair whose concatenation
 *      is the piece with the highest score, the leftmost pair on
 *      a tie; a heap over a linked list keeps it n log n
 *   4. an "unused" piece left at the end is split back into      SentencePieceBPE._resegment
 *      the pieces it was merged from (Mistral has none)
 *   5. a character no piece covers is spelled as the <0xNN>      SentencePieceBPE._output_ids
 *      pieces of its UTF-8 bytes (byte fallback)
 *
 * Chunks. SentencePiece has no pre-tokenizer: BPE runs over the whole text. But a merge only
 * makes a piece of the vocabulary, and no piece of this one has a "▁" right after another
 * character (the build checks it and refuses a model where that fails: book/_ext/
 * playground_sentencepiece.py). So no merge ever crosses the point before a space (or a
 * literal "▁", which normalizes to the same character) that follows a character that is
 * neither: we cut the text there, and encoding chunk by chunk gives the ids of the whole text.
 * Only the chunk at 0 gets the dummy prefix, which covers no character of the text.
 *
 * Lone surrogates. A JavaScript string (a textarea's value) can hold a lone surrogate, which
 * has no UTF-8 form. sentencepiece's Python binding refuses such a str (RuntimeError "Unable to
 * cast Python instance of type <class 'str'> to C++ type"), and tokcourse refuses it with
 * ValueError "text has no UTF-8 form: U+D800 (a lone surrogate) at position 0" (the position
 * in code points). We do the same: encode, encodeChunk and mergeSteps throw an Error with that
 * message (err.name "LoneSurrogateError", err.index its UTF-16 offset); no ids are made up.
 *
 * Data: data/mistral_v1.js, written at build time from the hash-verified model file through
 * the package's own parser; see book/_ext/playground_sentencepiece.py for its fields.
 */
tokcoursePlaygroundModule("sentencepiece", function (api) {
  "use strict";

  const SPACE = "\u2581"; // what a space becomes inside pieces (sentencepiece_bpe.SPACE)
  // ModelProto.SentencePiece.Type
  const NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6;
  const MAX_RESEGMENT_DEPTH = 100; // sentencepiece_bpe.MAX_RESEGMENT_DEPTH (bpe_model.cc)

  // ------------------------------------------------------------------ small helpers

  function base64Bytes(text) {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  const { utf8, MinHeap, Counter } = api; // core.js's helpers

  /** UTF-16 offset of the first lone surrogate in text[start, end), or -1. */
  function loneSurrogate(text, start, end) {
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c < 0xd800 || c > 0xdfff) continue;
      if (c <= 0xdbff && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) { i++; continue; } // a pair: one code point
      }
      return i;
    }
    return -1;
  }

  /** model_file.check_text: refuse a lone surrogate with the Python package's message. */
  function checkText(text, start, end) {
    const at = loneSurrogate(text, start, end);
    if (at < 0) return;
    let position = 0; // Python counts code points
    for (let i = 0; i < at; i++, position++) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < at) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) i++;
      }
    }
    const hex = text.charCodeAt(at).toString(16).toUpperCase();
    const err = new Error(`text has no UTF-8 form: U+${hex} (a lone surrogate) at position ${position}`);
    err.name = "LoneSurrogateError";
    err.index = at;
    throw err;
  }

  /**
   * sentencepiece's merge order (model_file.total_order_keys): scores compared as the integers
   * their float32 bit patterns spell, negative ones reversed (IEEE totalOrder). Returns, for
   * each piece, its place among the distinct keys, highest key first: 0 merges first.
   */
  function mergeOrder(scoreBytes, size) {
    const view = new DataView(scoreBytes.buffer, scoreBytes.byteOffset, scoreBytes.byteLength);
    const keys = new Float64Array(size);
    for (let i = 0; i < size; i++) {
      const bits = view.getInt32(4 * i, true);
      keys[i] = bits >= 0 ? bits : -(bits & 0x7fffffff) - 1;
    }
    const distinct = [...new Set(keys)].sort((a, b) => b - a);
    const place = new Map(distinct.map((k, i) => [k, i]));
    return Int32Array.from(keys, (k) => place.get(k));
  }

  // ------------------------------------------------------------------ the tokenizer

  class SentencePieceBPE {
    /** `data`: the object data/mistral_v1.js hands to addData (see playground_sentencepiece.py). */
    constructor(data, name = "mistral_v1", label = "Mistral 7B v1") {
      this.loneSurrogates = "refuse"; // the engine hands this tokenizer the text as typed
      this.name = name;
      this.label = label;
      const size = (this.vocabSize = data.size);
      const lengths = base64Bytes(data.lengths);
      const scoreBytes = base64Bytes(data.scores);
      if (lengths.length !== size || scoreBytes.length !== 4 * size || data.types.length !== size) {
        throw new Error(`${name}: the data's lengths, scores and types do not hold ${size} pieces`);
      }
      this.pieces = new Array(size);
      this.types = new Uint8Array(size);
      let pos = 0;
      for (let i = 0; i < size; i++) {
        this.pieces[i] = data.pieces.slice(pos, pos + lengths[i]);
        pos += lengths[i];
        this.types[i] = data.types.charCodeAt(i) - 48;
      }
      if (pos !== data.pieces.length) throw new Error(`${name}: the piece lengths do not add up`);
      const view = new DataView(scoreBytes.buffer);
      this.scores = Float64Array.from({ length: size }, (_, i) => view.getFloat32(4 * i, true));
      this.order = mergeOrder(scoreBytes, size);
      this.addDummyPrefix = !!data.addDummyPrefix;
      this.space = data.escapeWhitespaces ? SPACE : " ";
      if (data.removeExtraWhitespaces) throw new Error(`${name}: remove_extra_whitespaces is not implemented`);
      this.byteFallback = !!data.byteFallback;
      this.unkId = data.unkId;
      this.byteIds = data.byteIds;
      // The package's two tables (SentencePieceBPE.__init__): pieces a merge may make, and
      // reserved ones (unknown, control, byte). A "\0" unused piece is in neither.
      this.normal = new Map();
      this.reserved = new Map();
      this.longest = 0; // UTF-16 units of the longest mergeable piece: longer pairs are not looked up
      for (let i = 0; i < size; i++) {
        const piece = this.pieces[i], kind = this.types[i];
        if (piece === "\0" && kind === UNUSED) continue;
        const mergeable = kind === NORMAL || kind === USER_DEFINED || kind === UNUSED;
        if (!piece || this.normal.has(piece) || this.reserved.has(piece)) {
          throw new Error(`${name}: piece ${i} (${JSON.stringify(piece)}) is empty or already defined`);
        }
        (mergeable ? this.normal : this.reserved).set(piece, i);
        if (mergeable) this.longest = Math.max(this.longest, piece.length);
      }
      if (this.types[this.unkId] !== UNKNOWN) throw new Error(`${name}: unkId is not the <unk> piece`);
    }

    // -------------------------------------------------------------- chunks

    /** Does this UTF-16 unit normalize to the space symbol ("▁")? */
    spaceLike(c) {
      return c === 32 || (this.space === SPACE && c === 0x2581);
    }

    /** A chunk ends before a space (or literal "▁") that follows any other character. */
    nextChunkEnd(text, start) {
      for (let i = start + 1; i < text.length; i++) {
        if (this.spaceLike(text.charCodeAt(i)) && !this.spaceLike(text.charCodeAt(i - 1))) return i;
      }
      return text.length;
    }

    /**
     * True at a cut; false elsewhere. A cut at b is decided by text[b - 1] and text[b] alone,
     * and so is every cut before it: a chunk reads only up to the space that ends it, and no
     * later chunk joins an earlier one (no merge crosses a cut). So text.slice(0, b + 1)
     * decides the chunks before b, whatever `known` (>= b + 1) the engine passes. (Only the
     * chunk at 0 has the dummy prefix: the engine never reuses an old chunk at 0 after 0.)
     */
    safeBoundary(text, b) {
      return b > 0 && b < text.length &&
        this.spaceLike(text.charCodeAt(b)) && !this.spaceLike(text.charCodeAt(b - 1));
    }

    // -------------------------------------------------------------- normalize + BPE

    /** SentencePieceBPE.normalize on one chunk: spaces to "▁", the dummy prefix at 0 only. */
    normalizeChunk(text, start, end) {
      const prefix = this.addDummyPrefix && start === 0 && end > start ? this.space : ""; // "" stays ""
      let body = text.slice(start, end);
      if (this.space !== " ") body = body.replaceAll(" ", this.space);
      return { norm: prefix + body, pre: prefix.length };
    }

    /**
     * SentencePieceBPE._bpe_path's merge loop over `norm`. A symbol is named by the UTF-16
     * offset of its first character and spans norm[i, nxt[i]). pair[i] is the merge order of
     * symbol i joined with the next one (-1: not a mergeable piece). The heap holds
     * order * (n + 1) + i, so it pops the highest score first, the leftmost on a tie; an entry
     * whose pair has changed since (pair[i] differs) is skipped. `onMerge(left, right, id)` is
     * told each merge (for the stepper). Returns {nxt, revMerge}.
     */
    merge(norm, onMerge) {
      const n = norm.length, width = n + 1;
      const nxt = new Int32Array(n), prv = new Int32Array(n), pair = new Int32Array(n).fill(-1);
      const heap = new MinHeap(), revMerge = new Map();
      const { normal, types, order, longest } = this;
      // the linked list of characters (a surrogate pair is one character)
      let last = -1;
      for (let i = 0; i < n; i++) {
        const c = norm.charCodeAt(i);
        if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
          const b = norm.charCodeAt(i - 1);
          if (b >= 0xd800 && b <= 0xdbff) continue;
        }
        prv[i] = last;
        if (last >= 0) nxt[last] = i;
        last = i;
      }
      if (last >= 0) nxt[last] = n;
      const push = (left) => { // the pair (left, nxt[left]), if it makes a mergeable piece
        if (left < 0) return;
        pair[left] = -1;
        const right = nxt[left];
        if (right >= n) return;
        const end = nxt[right];
        if (end - left > longest) return;
        const piece = norm.slice(left, end);
        const id = normal.get(piece);
        if (id === undefined) return;
        pair[left] = order[id];
        heap.push(order[id] * width + left);
        // sentencepiece splits unused pieces again at the end: remember this split (the
        // last one pushed wins, as in the package's dict)
        if (types[id] === UNUSED) revMerge.set(piece, [norm.slice(left, right), norm.slice(right, end)]);
      };
      for (let i = 0; i < n; i = nxt[i]) push(i);
      while (heap.size) {
        const key = heap.pop();
        const left = key % width, o = (key - left) / width;
        if (pair[left] !== o) continue; // stale
        const right = nxt[left], end = nxt[right];
        if (onMerge) onMerge(left, right, normal.get(norm.slice(left, end)));
        nxt[left] = end; // left swallows right
        if (end < n) prv[end] = left;
        pair[right] = -1;
        push(prv[left]);
        push(left);
      }
      return { nxt, revMerge };
    }

    /**
     * SentencePieceBPE._resegment: split an unused piece back into the pieces it was merged
     * from. Yields [piece, id, offset] (offset: UTF-16, in norm) through `emit`.
     */
    resegment(piece, at, revMerge, emit) {
      const { types, unkId } = this;
      const stack = [[piece, at, 0]];
      while (stack.length) {
        const [w, pos, depth] = stack.pop();
        let id = this.normal.get(w);
        if (id === undefined) id = this.reserved.has(w) ? this.reserved.get(w) : unkId;
        const kind = types[id];
        if (depth > MAX_RESEGMENT_DEPTH) emit(w, id, pos);
        else if (id === unkId || !(kind === NORMAL || kind === USER_DEFINED || kind === UNUSED)) emit(w, unkId, pos);
        else if (kind !== UNUSED) emit(w, id, pos);
        else if (!revMerge.has(w)) emit(w, unkId, pos);
        else {
          const [a, b] = revMerge.get(w);
          stack.push([b, pos + a.length, depth + 1]);
          stack.push([a, pos, depth + 1]);
        }
      }
    }

    /** The token list of chunk text[start, end): {pieces, ids, starts, ends, unknown, split}. */
    run(text, start, end, onMerge) {
      checkText(text, start, end);
      const { norm, pre } = this.normalizeChunk(text, start, end);
      const { nxt, revMerge } = this.merge(norm, onMerge);
      // offset q in norm is text offset start + q - pre (the dummy prefix covers nothing)
      const at = (q) => (q < pre ? start : start + q - pre);
      const res = { ids: [], starts: [], ends: [], unknown: [], split: [] };
      let prevUnk = false;
      const emit = (w, id, pos) => {
        // SentencePieceBPE._output_ids
        const unk = this.types[id] === UNKNOWN;
        if (unk && this.byteFallback) {
          res.unknown.push(w);
          let q = pos;
          for (const ch of w) { // each character's bytes cover that character
            for (const byte of utf8(ch)) {
              res.ids.push(this.byteIds[byte.charCodeAt(0)]);
              res.starts.push(at(q));
              res.ends.push(at(q + ch.length));
            }
            q += ch.length;
          }
        } else if (unk && prevUnk) {
          res.ends[res.ends.length - 1] = at(pos + w.length); // one <unk> for the whole run
        } else {
          res.ids.push(id);
          res.starts.push(at(pos));
          res.ends.push(at(pos + w.length));
        }
        prevUnk = unk;
      };
      for (let i = 0; i < norm.length; i = nxt[i]) {
        const piece = norm.slice(i, nxt[i]);
        const id = this.normal.get(piece);
        if (id !== undefined && this.types[id] !== UNUSED) emit(piece, id, i); // the usual case
        else {
          if (id !== undefined) res.split.push(piece);
          this.resegment(piece, i, revMerge, emit);
        }
      }
      return res;
    }

    // -------------------------------------------------------------- the interface (core.js)

    encodeChunk(text, start, end, out) {
      const res = this.run(text, start, end);
      for (let i = 0; i < res.ids.length; i++) {
        out.ids.push(res.ids[i]);
        out.starts.push(res.starts[i]);
        out.ends.push(res.ends[i]);
      }
      return out;
    }

    encode(text) {
      checkText(text, 0, text.length); // the whole text's first lone surrogate, as Python
      const out = { ids: [], starts: [], ends: [] };
      for (let start = 0; start < text.length;) {
        const end = this.nextChunkEnd(text, start);
        this.encodeChunk(text, start, end, out);
        start = end;
      }
      return out;
    }

    /**
     * bytes: what the token stands for in text, as UTF-8 (a binary string): "▁" as a space, a
     * byte piece its byte; control pieces (<s>, </s>) and <unk> stand for no text ("").
     */
    tokenInfo(id) {
      const piece = this.pieces[id], kind = this.types[id];
      if (kind === BYTE) return { bytes: String.fromCharCode(parseInt(piece.slice(3, 5), 16)), piece, kind: "byte" };
      if (kind === CONTROL) return { bytes: "", piece, kind: "special" };
      if (kind === UNKNOWN) return { bytes: "", piece, kind: "unknown" };
      return { bytes: utf8(piece.replaceAll(SPACE, " ")), piece, kind: "normal" };
    }

    /**
     * The merges of chunk text[start, end), for the "watch BPE" stepper. parts: the
     * normalized characters (the dummy prefix "▁" first in the chunk at 0); steps: each merge in
     * the order it happens, {at, score, id}: join parts[at] and parts[at + 1] of the current
     * list into piece `id` (its score). ids: the chunk's ids, as encodeChunk gives them;
     * note: what happens after the last merge ("" if nothing).
     */
    mergeSteps(text, start, end) {
      const { norm } = this.normalizeChunk(text, start, end);
      const parts = Array.from(norm);
      const live = new Counter(norm.length);
      for (let i = 0, k = 0; k < parts.length; i += parts[k].length, k++) live.add(i, 1);
      const steps = [];
      const res = this.run(text, start, end, (left, right, id) => {
        steps.push({ at: live.before(left), score: this.scores[id], id });
        live.add(right, -1);
      });
      const notes = [];
      if (res.split.length) {
        notes.push(`unused piece${res.split.length > 1 ? "s" : ""} ${res.split.map((p) => JSON.stringify(p)).join(", ")}: split back into the pieces they were merged from`);
      }
      if (res.unknown.length) {
        const shown = res.unknown.map((w) => `${JSON.stringify(w)} (${[...w].map((c) => "U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")).join(" ")})`);
        notes.push(`unknown character${res.unknown.length > 1 ? "s" : ""} ${shown.join(", ")}: no piece covers ${res.unknown.length > 1 ? "them" : "it"}, spelled as UTF-8 bytes <0xNN> (byte fallback)`);
      }
      // parts are characters (SentencePiece merges characters, not bytes)
      return { parts, units: "characters", steps, ids: res.ids, note: notes.join("; ") };
    }
  }

  api.SentencePieceBPE = SentencePieceBPE;

  api.registerTokenizer("mistral_v1", {
    label: "Mistral 7B v1",
    files: ["mistral_v1"],
    steps: true, // mergeSteps: the merge stepper (stepper.js) offers it
    create: (data) => new SentencePieceBPE(data),
  });
});
