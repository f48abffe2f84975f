/*
 * tokcourse playground: BERT uncased (WordPiece), giving exactly Hugging Face tokenizers' ids.
 * A port of tokcourse/wordpiece.py (chapter 11); read it next to the Python, step by step.
 *
 *   encode(text)                                                  Python (tokcourse/wordpiece.py)
 *   0. lone surrogates are read as U+FFFD (see below)             -
 *   1. special tokens ([CLS], [SEP], [MASK], ...) are matched in  WordPiece.tokenize
 *      the raw text first, longest first, and never normalized
 *   2. the normalizer, one character at a time:                   normalize / _clean_char
 *      drop control characters (and NUL, U+FFFD), white space     is_control, is_whitespace
 *      becomes " ", CJK ideographs get a space on each side       is_cjk
 *   3. accents stripped: NFD, then category Mn dropped; NFD's     strip_accents / nfd
 *      mark reordering sorts each run of combining marks by its
 *      combining class with a stable sort (n log n, never the
 *      quadratic insertion sort)
 *   4. lower case, one character at a time (a final capital       _finish
 *      sigma becomes σ, never ς)
 *   5. the pre-tokenizer cuts at white space and cuts every       pre_tokenize
 *      punctuation character into a word of its own
 *   6. greedy longest match first per word, "##" on the pieces    wordpiece_word
 *      after the first; a word with a position nothing matches,
 *      or of more than 100 characters, is one [UNK]
 *
 * Every Unicode question (is it a control? white space? punctuation? Mn? its decomposition,
 * combining class, lower case?) is answered from data/bert_uncased.js, written at build time
 * from the Python package's own functions (book/_ext/playground_wordpiece.py), which give the
 * answers of tokenizers' Rust tables. Never from the browser's \p{..}, normalize() or
 * toLowerCase(): its Unicode version is neither Python's nor the Rust crates'. Characters the
 * crates see differently from Python's tables ("overrides": marks the crate does not know,
 * letters Rust lower-cases and Python does not) are written out as they come out and are never
 * decomposed with a neighbour, as in normalize(). One exception: U+1734, which the crate strips
 * as a mark of class 9 (Python: Mc): the data file lists it as Mn, so it is sorted among its
 * neighbours first, then stripped, as tokenizers and normalize() do (tokenizers'
 * normalize_str("\u{1D16D}\u1734\u{1D165}") is "\u{1D165}\u{1D16D}").
 *
 * Offsets: each normalized character remembers the UTF-16 range of an original character: the
 * one it comes from (a decomposition's or a lower case's characters all remember the same one;
 * the spaces around a CJK ideograph too), except after NFD's mark sort, where the ranges stay
 * in place and the marks move (see flushRun: tokenizers does that). A token covers, from the
 * smallest to the largest, the ranges of the normalized characters it spells ([UNK]: its whole
 * word; "##ing": the characters of "ing"), exactly as Hugging Face's `offsets` (which count code
 * points; ours are UTF-16). White space, and characters dropped at a word's edge, are covered
 * by no token (gaps); characters dropped inside a piece are covered by it.
 *
 * Lone surrogates: the Python package (and tokenizers) refuse a str holding one; the page
 * cannot refuse what the reader pasted. So a lone surrogate is read as U+FFFD, as the tiktoken
 * rows do, and BERT's cleaning then drops U+FFFD: "a\uD800b" gives the tokens of "ab", the
 * surrogate covered by the token around it ("ab": 0-3), as tokenizers gives for "a\uFFFDb".
 *
 * Chunks (the interface of core.js): a chunk is [white space] then either one CJK ideograph or
 * a run of characters that are neither white space nor CJK, then the white space after it. The
 * chunks are independent (the tokens of a text are the tokens of its chunks, one after the
 * other), because across a white space character or before a CJK ideograph:
 *   - the cleaning, the accent dropping and the lower case look at one character at a time;
 *   - NFD decomposes one character at a time and reorders only runs of marks of nonzero
 *     combining class; the " " that white space becomes, and a CJK ideograph (or the unified
 *     ideograph a compatibility one decomposes to), are class 0 and decompose to no mark, so
 *     no mark moves across them (a mark after them stays after them);
 *   - no word spans them: the pre-tokenizer cuts at " ", and a CJK ideograph gets a space on
 *     each side;
 *   - special tokens hold neither white space nor CJK, so no match spans them.
 * The characters that cut chunks are those the cleaning makes " ": the control characters
 * among Unicode's white space (U+000B, U+000C, U+0085) are dropped instead and cut nothing
 * ("a\u000Bb" is the one word "ab"). tests/test_playground_wordpiece.py checks chunk by chunk
 * against the whole text.
 */
tokcoursePlaygroundModule("wordpiece", function (api) {
  "use strict";

  // ------------------------------------------------------------------ the Unicode tables

  // One 16-bit word of flags per code point (2.2 MB, filled in a few ms).
  const DROP = 1; // is_control: the cleaning removes it
  const WHITE = 2; // is_whitespace: " " after cleaning (unless DROP), the pre-tokenizer cuts
  const CJK = 4; // is_cjk: a space on each side
  const PUNCT = 8; // is_punctuation: a word of its own
  const MN = 16; // category Mn: dropped after NFD
  const OVERRIDE = 32; // tokenizers differs from Python's tables: see overrides
  const DECOMP = 64; // has a canonical decomposition (decomp), Hangul syllables aside
  const LOWER = 128; // lower case differs (lower)

  const HANGUL_S = 0xac00, HANGUL_L = 0x1100, HANGUL_V = 0x1161, HANGUL_T = 0x11a7;
  const HANGUL_COUNT = 11172, HANGUL_N = 588, HANGUL_TN = 28;

  /** Call fn(a, b) for each hex range "A-B" or "A" of `text` (as unicode_pin.parse_ranges). */
  function eachRange(text, fn) {
    for (const item of text.split(" ")) {
      if (!item) continue;
      const [a, b] = item.split("-");
      fn(parseInt(a, 16), parseInt(b === undefined ? a : b, 16));
    }
  }

  /** "C>X.Y" items as a Map C -> [X, Y] ("C>": C -> []). */
  function eachMapping(text, map) {
    for (const item of text.split(" ")) {
      if (!item) continue;
      const [from, to] = item.split(">");
      map.set(parseInt(from, 16), to ? to.split(".").map((h) => parseInt(h, 16)) : []);
    }
    return map;
  }

  function buildTables(t) {
    const flags = new Uint16Array(0x110000);
    const set = (text, bit) =>
      eachRange(text, (a, b) => {
        for (let c = a; c <= b; c++) flags[c] |= bit;
      });
    set(t.drop, DROP);
    set(t.white, WHITE);
    set(t.cjk, CJK);
    set(t.punct, PUNCT);
    set(t.mn, MN);
    // overrides: kept characters map to themselves
    const overrides = eachMapping(t.mapped, new Map());
    eachRange(t.kept, (a, b) => {
      for (let c = a; c <= b; c++) overrides.set(c, [c]);
    });
    for (const c of overrides.keys()) flags[c] |= OVERRIDE;
    const decomp = eachMapping(t.decomp, new Map());
    for (const c of decomp.keys()) flags[c] |= DECOMP;
    const ccc = new Uint8Array(0x110000);
    for (const item of t.ccc.split(" ")) {
      if (!item) continue;
      const [span, n] = item.split(":");
      eachRange(span, (a, b) => ccc.fill(Number(n), a, b + 1));
    }
    // lower: "A-B/S:+D": every S-th code point from A to B moves by D (hex)
    const lower = new Map();
    for (const item of t.lower.split(" ")) {
      if (!item) continue;
      const [span, delta] = item.split(":");
      const [range, step] = span.split("/");
      const d = parseInt(delta, 16); // parseInt reads the sign
      eachRange(range, (a, b) => {
        for (let c = a; c <= b; c += step ? Number(step) : 1) lower.set(c, [c + d]);
      });
    }
    eachMapping(t.lower_long, lower);
    for (const c of lower.keys()) flags[c] |= LOWER;
    return { flags, overrides, decomp, ccc, lower };
  }

  // ------------------------------------------------------------------ the tokenizer

  function create(data) {
    const { flags, overrides, decomp, ccc, lower } = buildTables(data.tables);
    const tokens = data.vocab.split("\n");
    if (tokens.length !== data.size) throw new Error(`bert_uncased: ${tokens.length} tokens, expected ${data.size}`);
    const vocab = new Map();
    let maxPiece = 0; // the longest entry in code points: bounds the search (same answer)
    tokens.forEach((t, id) => {
      vocab.set(t, id);
      maxPiece = Math.max(maxPiece, [...t].length);
    });
    const prefix = data.prefix, prefixChars = [...prefix].length, maxChars = data.max_chars;
    const unkId = vocab.get(data.unk);
    if (unkId === undefined) throw new Error("bert_uncased: no [UNK] in the vocabulary");
    const specialIds = new Set(data.special.map((t) => vocab.get(t)));
    // special tokens, longest first: leftmost match, then the longest (Python's re alternation)
    const specials = [...data.special].sort((a, b) => b.length - a.length);
    const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const specialRe = specials.length ? new RegExp(specials.map(escape).join("|"), "g") : null;

    /** The code point at text[i], a surrogate pair only if both halves are before `end`; a
     *  lone surrogate reads as U+FFFD. */
    function codePointAt(text, i, end) {
      const c = text.charCodeAt(i);
      if ((c & 0xf800) !== 0xd800) return c;
      if (c < 0xdc00 && i + 1 < end) {
        const d = text.charCodeAt(i + 1);
        if ((d & 0xfc00) === 0xdc00) return 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
      }
      return 0xfffd;
    }

    /** The cleaning's " ": the characters a chunk ends after. */
    const isSpace = (c) => (flags[c] & (WHITE | DROP | OVERRIDE)) === WHITE;
    const isCjk = (c) => (flags[c] & (CJK | OVERRIDE)) === CJK; // (no override is CJK)

    // --------------------------------------------------------------- chunks

    /** The end of the chunk that starts at `start` (see the top of this file). */
    function nextChunkEnd(text, start) {
      const n = text.length;
      let i = start;
      while (i < n && isSpace(text.charCodeAt(i))) i++; // no white space is astral
      if (i < n) {
        const c = codePointAt(text, i, n);
        if (isCjk(c)) i += c > 0xffff ? 2 : 1;
        else {
          while (i < n) {
            const d = codePointAt(text, i, n);
            if (isSpace(d) || isCjk(d)) break;
            i += d > 0xffff ? 2 : 1;
          }
        }
      }
      while (i < n && isSpace(text.charCodeAt(i))) i++;
      return i;
    }

    /**
     * Whether the chunks before boundary b depend only on text.slice(0, known) (known > b; by
     * default b + 1). A chunk reads its own characters and the code point after it, which ends
     * it (white space ended, or a CJK ideograph or a word begins); no later chunk can join an
     * earlier one. That code point is text[b] alone unless text[b] is a high surrogate. Then
     * the chunk before b depends on text[b + 1] only if it ends in a word: it ends there because
     * an astral CJK ideograph (U+20000...) begins, which an edit of text[b + 1] can undo. (The
     * engine never passes known = b + 1 there: an edit never begins inside a surrogate pair.)
     */
    function safeBoundary(text, b, known = b + 1) {
      if (b <= 0 || b >= text.length || known >= b + 2) return true;
      const c = text.charCodeAt(b);
      if (c < 0xd800 || c >= 0xdc00) return true;
      let p = text.charCodeAt(b - 1);
      if ((p & 0xfc00) === 0xdc00 && b >= 2 && (text.charCodeAt(b - 2) & 0xfc00) === 0xd800) {
        p = 0x10000 + ((text.charCodeAt(b - 2) - 0xd800) << 10) + (p - 0xdc00);
      } else if ((p & 0xf800) === 0xd800) p = 0xfffd;
      return isSpace(p) || isCjk(p);
    }

    // --------------------------------------------------------------- normalize + pre-tokenize
    // The normalizer streams: each original character goes through cleaning and NFD as it is
    // read; marks of nonzero combining class wait in `run` until a class-0 character (or the
    // end) closes the run, which is then sorted; each character that comes out is stripped
    // (Mn) and lower-cased (finish) and handed to the pre-tokenizer (emit), which builds the
    // current word. Every character carries [a, b): the original character's UTF-16 range.

    let out = null; // where encodeChunk appends (ids, starts, ends)
    let collect = null; // normalize(): the normalized text instead of words, when a string
    let word = "", wordN = 0; // the current word's text and its number of code points
    const wordA = [], wordB = [], wordPos = []; // per code point: original range, UTF-16 index
    // marks waiting for their canonical order: the mark, whether NFD inserted it (not the
    // first character of its decomposition), and the original range of the character read
    const runC = [], runIns = [], runA = [], runB = [];
    let runN = 0;
    let lastA = 0, lastB = 0; // the original range of the last character NFD consumed
    const order = [];

    /** Pre-tokenizer (pre_tokenize): cut at white space, punctuation alone. */
    function emit(y, a, b) {
      if (collect !== null) {
        collect += String.fromCodePoint(y);
        return;
      }
      const f = flags[y];
      if (f & WHITE) return endWord();
      if (f & PUNCT) {
        endWord();
        add(y, a, b);
        return endWord();
      }
      add(y, a, b);
    }

    function add(y, a, b) {
      wordPos[wordN] = word.length;
      wordA[wordN] = a;
      wordB[wordN] = b;
      wordN++;
      word += y > 0xffff ? String.fromCodePoint(y) : String.fromCharCode(y);
    }

    /** Accent stripping's filter and the lower case (_finish), one character at a time. */
    function finish(x, a, b) {
      const f = flags[x];
      if (f & MN) return;
      if (f & LOWER) for (const y of lower.get(x)) emit(y, a, b);
      else emit(x, a, b);
    }

    /**
     * The canonical ordering: a stable sort of the run of marks by combining class.
     *
     * The sorted marks do not take their original ranges along. tokenizers writes NFD as a
     * stream of (character, change): 0 for the first character of a decomposition (it reads
     * the next original character and takes its range), +1 for the others (inserted: they
     * take the range of the character read last). The sort moves the characters with their
     * change, and the ranges are then handed out in order: the n-th mark that reads takes the
     * range of the n-th original character the run read ("a\u0301\u0302\u{1D165}": the
     * surviving U+1D165, sorted first, gets the range of U+0301). Only marks move, and only
     * the few marks that are not Mn survive the stripping: the ids never depend on this, the
     * offsets of such a word's [UNK] do.
     */
    function flushRun() {
      if (runN === 1) {
        if (!runIns[0]) (lastA = runA[0]), (lastB = runB[0]);
        finish(runC[0], lastA, lastB);
      } else if (runN > 1) {
        order.length = runN;
        for (let k = 0; k < runN; k++) order[k] = k;
        order.sort((p, q) => ccc[runC[p]] - ccc[runC[q]] || p - q);
        let read = 0; // the next of the run's reading marks, in their original order
        for (let k = 0; k < runN; k++) {
          const m = order[k];
          if (!runIns[m]) {
            while (runIns[read]) read++;
            lastA = runA[read];
            lastB = runB[read];
            read++;
          }
          finish(runC[m], lastA, lastB);
        }
      }
      runN = 0;
    }

    /** One character of a decomposition into the canonical ordering (`ins`: not its first). */
    function ordered(x, a, b, ins) {
      if (ccc[x]) {
        runC[runN] = x;
        runIns[runN] = ins;
        runA[runN] = a;
        runB[runN] = b;
        runN++;
      } else {
        flushRun();
        // a class-0 character never moves: it reads its own character, or was inserted right
        // after the character its decomposition read (the same range)
        if (!ins) (lastA = a), (lastB = b);
        finish(x, a, b);
      }
    }

    /** NFD of one character: its full canonical decomposition (nfd). */
    function decompose(c, a, b) {
      if (flags[c] & DECOMP) {
        const d = decomp.get(c);
        for (let k = 0; k < d.length; k++) ordered(d[k], a, b, k > 0);
      } else if (c >= HANGUL_S && c < HANGUL_S + HANGUL_COUNT) {
        const s = c - HANGUL_S;
        ordered(HANGUL_L + Math.floor(s / HANGUL_N), a, b, false);
        ordered(HANGUL_V + Math.floor((s % HANGUL_N) / HANGUL_TN), a, b, true);
        if (s % HANGUL_TN) ordered(HANGUL_T + (s % HANGUL_TN), a, b, true);
      } else ordered(c, a, b, false);
    }

    /** normalize() of text[s:e], then pre_tokenize and WordPiece of each word. */
    function ordinary(text, s, e) {
      (lastA = s), (lastB = s); // (never read before a character sets them)
      for (let i = s; i < e; ) {
        const c = codePointAt(text, i, e);
        const j = i + (c > 0xffff ? 2 : 1);
        const f = flags[c];
        if (f & OVERRIDE) {
          flushRun(); // written as it comes: never decomposed with a neighbour
          (lastA = i), (lastB = j);
          for (const y of overrides.get(c)) emit(y, i, j);
        } else if (f & DROP) {
          // a control character (_clean_char): gone
        } else if (f & WHITE) ordered(0x20, i, j, false);
        else if (f & CJK) {
          ordered(0x20, i, j, false);
          decompose(c, i, j);
          ordered(0x20, i, j, false);
        } else decompose(c, i, j);
        i = j;
      }
      flushRun();
      endWord();
    }

    // --------------------------------------------------------------- WordPiece

    const cache = new Map(); // word -> [id, first, past-last code point, ...]

    /** Greedy longest match first (wordpiece_word) on the current word. */
    function wordpiece() {
      if (wordN > maxChars) return [unkId, 0, wordN];
      wordPos[wordN] = word.length;
      const pieces = [];
      for (let s = 0; s < wordN; ) {
        let e = Math.min(wordN, s + maxPiece - (s ? prefixChars : 0));
        let id;
        for (; e > s; e--) {
          const piece = word.slice(wordPos[s], wordPos[e]);
          id = vocab.get(s ? prefix + piece : piece);
          if (id !== undefined) break;
        }
        if (e === s) return [unkId, 0, wordN]; // nothing matches here: the whole word
        pieces.push(id, s, e);
        s = e;
      }
      return pieces;
    }

    function endWord() {
      if (!wordN) return;
      let pieces = cache.get(word);
      if (pieces === undefined) {
        pieces = wordpiece();
        if (cache.size < 200000) cache.set(word, pieces);
      }
      for (let k = 0; k < pieces.length; k += 3) {
        let start = Infinity, end = -Infinity;
        for (let m = pieces[k + 1]; m < pieces[k + 2]; m++) {
          if (wordA[m] < start) start = wordA[m];
          if (wordB[m] > end) end = wordB[m];
        }
        out.ids.push(pieces[k]);
        out.starts.push(start);
        out.ends.push(end);
      }
      word = "";
      wordN = 0;
    }

    // --------------------------------------------------------------- the interface

    /** The tokens of chunk text[start:end] onto out: special tokens first (tokenize). */
    function encodeChunk(text, start, end, into) {
      out = into;
      let s = start;
      if (specialRe) {
        // on the chunk alone: a search through the rest of the text per chunk is quadratic
        const chunk = text.slice(start, end);
        specialRe.lastIndex = 0;
        let m;
        while ((m = specialRe.exec(chunk)) !== null) {
          ordinary(text, s, start + m.index);
          out.ids.push(vocab.get(m[0]));
          out.starts.push(start + m.index);
          out.ends.push(start + m.index + m[0].length);
          s = start + specialRe.lastIndex;
        }
      }
      ordinary(text, s, end);
      out = null;
    }

    function encode(text) {
      const result = { ids: [], starts: [], ends: [] };
      for (let start = 0; start < text.length; ) {
        const end = nextChunkEnd(text, start);
        encodeChunk(text, start, end, result);
        start = end;
      }
      return result;
    }

    /** BERT's normalizer alone (normalize): the text the pre-tokenizer sees. */
    function normalize(text) {
      collect = "";
      ordinary(text, 0, text.length);
      const result = collect;
      collect = null;
      return result;
    }

    const utf8 = api.utf8; // UTF-8 as a binary string (core.js)

    const infos = new Map();

    /** bytes: UTF-8 of what the token spells ("ing" for "##ing"); piece: the entry itself. */
    function tokenInfo(id) {
      let info = infos.get(id);
      if (info === undefined) {
        const piece = tokens[id];
        if (piece === undefined) throw new Error(`bert_uncased: no token ${id}`);
        const kind = id === unkId ? "unknown" : specialIds.has(id) ? "special" : "normal";
        const spelled =
          kind === "normal" && piece.startsWith(prefix) && piece.length > prefix.length
            ? piece.slice(prefix.length)
            : piece;
        info = { bytes: utf8(spelled), piece, kind };
        infos.set(id, info);
      }
      return info;
    }

    return {
      name: data.name,
      label: "BERT uncased",
      vocabSize: tokens.length,
      unicodeVersion: data.tables.unicode,
      nextChunkEnd,
      safeBoundary,
      encodeChunk,
      encode,
      tokenInfo,
      normalize,
    };
  }

  api.wordpiece = { buildTables, create };
  api.registerTokenizer("bert_uncased", { label: "BERT uncased", files: ["bert_uncased"], create });
});
