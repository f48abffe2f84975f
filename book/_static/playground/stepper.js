/*
 * tokcourse playground: "BPE you can watch". Fills every
 *     <div class="tokcourse-bpe-stepper" data-encoding="cl100k_base" data-text="...">
 * with a short text cut into its chunks (one button per chunk), and steps through the merges of
 * the chunk the reader picks, one at a time, in the order the encoder applies them:
 *
 *   step 0        the chunk's UTF-8 bytes, one part each                       chapter 03
 *   step k        the adjacent pair whose joined bytes have the lowest rank    chapter 05
 *                 (leftmost on a tie) becomes one part: encode() of chapter 03,
 *                 with ranks as the merge order of chapter 05
 *   last step     no adjacent pair is a token any more: the parts are the tokens
 *
 * The steps come from the tokenizer's `mergeSteps(text, start, end)` (encoder.js for GPT-2,
 * GPT-4 and GPT-4o; a SentencePiece port gives the same shape with `score` for `rank`):
 * {parts, steps: [{at, rank | score, id}], ids, note}. Each step joins parts[at] and
 * parts[at + 1] of the current list; `ids` are the encoder's own ids for the chunk; `note` says
 * why they differ from the merges (tiktoken takes a chunk that is itself a token at once).
 *
 * A plain page script, loaded after core.js and encoder.js (not a core.js module: it draws).
 * `tokcoursePlayground.showMerges(name, text, start, end)` loads chunk text[start, end) under
 * tokenizer `name` into the page's first stepper and scrolls it into view (the playground
 * widget calls it when a reader activates a token).
 *
 * Which tokenizers it offers: those whose spec says `steps: true` (core.js registerTokenizer;
 * known before their data loads: GPT-2, GPT-4, GPT-4o, Mistral), plus the one a div or
 * showMerges names.
 */
(function (global) {
  "use strict";

  const api = global.tokcoursePlayground;
  const MAX_BYTES = 50000; // longer chunks are refused: their merges would hold up the page
  const SHOWN_PARTS = 400; // parts drawn around the current pair (a long chunk has more)
  const SHOWN_ROWS = 200; // rows of the table of steps drawn around the current step
  const MAX_FIELD = 4000; // characters of a showMerges text put in the text field
  const MAX_CHUNKS = 300; // chunk buttons drawn (the rest are named, not drawn)
  const MARKERS = { " ": "·", "\t": "→", "\n": "↵", "\r": "␍" };
  // Display only (never an id): invisible characters show as their code point, as viz.py does.
  const INVISIBLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  // ------------------------------------------------------------------ bytes as the playground shows them

  function hex(n, width) {
    return n.toString(16).toUpperCase().padStart(width, "0");
  }

  // core.js's helpers: the UTF-8 sequence length of a lead byte, bytes as a binary string, and
  // lone surrogates as U+FFFD (as the encoders read them)
  const { utf8Width, utf8, fixSurrogates: wellFormed } = api;

  /** UTF-8 byte count of `text` (well formed), without building the bytes. */
  function utf8Length(text) {
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) { n += 4; i += 1; }
      else n += 3;
    }
    return n;
  }

  /**
   * A part's bytes (binary string) as display segments [{text, kind}]: kind "" for printable
   * text, "ws" for a marked invisible character (· → ↵ ␍ ⟨U+200D⟩), "raw" for bytes that are
   * not a whole UTF-8 character inside this part, in hex (⟨E2 80⟩): viz._split_utf8's rules.
   */
  let family = null;
  /** The font family parts are drawn in (for the missing-glyph check). */
  function fontFamily() {
    if (!family) {
      const probe = document.querySelector(".tokcourse-bpe-stepper") || document.body;
      family = getComputedStyle(probe).fontFamily;
    }
    return family;
  }

  function segments(bytes) {
    const out = [];
    const push = (text, kind) => {
      const last = out[out.length - 1];
      if (last && last.kind === kind && kind === "") last.text += text;
      else out.push({ text, kind });
    };
    let stray = [];
    const flush = () => { if (stray.length) { push(`⟨${stray.join(" ")}⟩`, "raw"); stray = []; } };
    for (let i = 0; i < bytes.length;) {
      const width = utf8Width(bytes.charCodeAt(i));
      let ch = null;
      if (width && i + width <= bytes.length) {
        try {
          ch = decoder.decode(Uint8Array.from(bytes.slice(i, i + width), (c) => c.charCodeAt(0)));
        } catch (err) {
          ch = null;
        }
      }
      if (ch === null) { stray.push(hex(bytes.charCodeAt(i), 2)); i += 1; continue; }
      flush();
      if (MARKERS[ch]) push(MARKERS[ch], "ws");
      else if (INVISIBLE.test(ch)) push(`⟨U+${hex(ch.codePointAt(0), 4)}⟩`, "ws");
      else if (api.hasGlyph && !api.hasGlyph(ch, fontFamily())) push(`⟨U+${hex(ch.codePointAt(0), 4)}⟩`, "ws");
      else push(ch, "");
      i += width;
    }
    flush();
    return out;
  }

  /** A part's display text, one string ("·tok", "⟨E2 80⟩"). */
  function label(bytes) {
    return segments(bytes).map((s) => s.text).join("");
  }

  /** Display text of a piece of the (JavaScript string) text: its UTF-8 bytes, labelled. */
  function textLabel(text) {
    return label(utf8(text));
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** A <span> holding a part's bytes as display segments. */
  function partNode(tag, cls, bytes) {
    const node = el(tag, cls);
    for (const s of segments(bytes)) {
      if (s.kind) node.appendChild(el("span", s.kind, s.text));
      else node.appendChild(document.createTextNode(s.text));
    }
    return node;
  }

  // ------------------------------------------------------------------ the merges, replayed

  /**
   * The merges replayed once, so that any step can be shown at once, however long the chunk.
   * The boundary b lies between starting parts b - 1 and b; a step removes one boundary. For
   * step s: the removed boundary mid[s], and the starting parts left[s] .. right[s] its two
   * parts cover; removedAt[b]: the step (1-based) that removed boundary b (steps + 1: never).
   */
  function replay(merges) {
    if (merges.replayed) return merges.replayed;
    const m = merges.parts.length, n = merges.steps.length;
    const live = new api.Counter(m + 1);
    for (let b = 1; b < m; b++) live.add(b, 1);
    const removedAt = new Int32Array(m + 1).fill(n + 1);
    const left = new Int32Array(n), mid = new Int32Array(n), right = new Int32Array(n);
    for (let s = 0; s < n; s++) {
      const at = merges.steps[s].at; // parts[at] and parts[at + 1] join
      left[s] = at === 0 ? 0 : live.kth(at);
      mid[s] = live.kth(at + 1);
      const end = live.kth(at + 2);
      right[s] = end < 0 ? m : end;
      live.add(mid[s], -1);
      removedAt[mid[s]] = s + 1;
    }
    merges.replayed = { removedAt, left, mid, right };
    return merges.replayed;
  }

  /** The starting parts [i, j) joined: one part's bytes. */
  function span(merges, i, j) {
    return merges.parts.slice(i, j).join("");
  }

  /** The parts after the first `k` steps (each step joins parts[at] and parts[at + 1]). */
  function partsAt(merges, k) {
    const { removedAt } = replay(merges), m = merges.parts.length, parts = [];
    let start = 0;
    for (let b = 1; b <= m; b++) {
      if (b === m || removedAt[b] > k) { parts.push(span(merges, start, b)); start = b; }
    }
    return m ? parts : [];
  }

  /** The two parts step s (0-based) joins. */
  function pairOf(merges, s) {
    const { left, mid, right } = replay(merges);
    return [span(merges, left[s], mid[s]), span(merges, mid[s], right[s])];
  }

  /** "rank" or "score": whichever the steps carry. */
  function orderName(merges) {
    const first = merges.steps[0];
    if (!first) return merges.units === "characters" ? "score" : "rank"; // no steps: by tokenizer
    return first.rank === undefined && first.score !== undefined ? "score" : "rank";
  }

  function order(step) {
    return step.rank !== undefined ? step.rank : step.score;
  }

  /** The sentence for step k: "Step 3 of 11: merge '·t' + 'ok' → '·tok', rank 450 (id 450)." */
  function sentence(merges, k, parts) {
    const n = merges.steps.length, what = orderName(merges);
    if (n === 0) {
      const one = merges.parts.length === 1 ? "one part" : `${merges.parts.length} parts`;
      return `No merges: the chunk is ${one}, and no adjacent pair is a token.`;
    }
    if (k === 0) {
      const next = merges.steps[0];
      const count = merges.parts.length;
      let start = `the chunk's ${count} starting parts`;
      if (merges.units === "characters") start = `the chunk's ${count} characters, one part each`; // SentencePiece
      else if (merges.parts.every((p) => p.length === 1)) start = `the chunk's ${count} bytes, one part each`;
      return `Step 0 of ${n}: ${start}. ` +
        `Next: merge '${label(parts[next.at])}' + '${label(parts[next.at + 1])}', ${what} ${order(next)}.`;
    }
    const step = merges.steps[k - 1], [a, b] = pairOf(merges, k - 1);
    let out = `Step ${k} of ${n}: merge '${label(a)}' + '${label(b)}' → '${label(a + b)}', ` +
      `${what} ${order(step)} (id ${step.id}).`;
    if (k === n) out += " No adjacent pair is a token any more: these are the tokens.";
    return out;
  }

  // ------------------------------------------------------------------ which tokenizers

  const made = {}; // name -> tokenizer, once loaded

  function offers(name) {
    let spec = null;
    try { spec = api.tokenizerSpec(name); } catch (err) { return false; }
    return spec.steps === true;
  }

  function load(name) {
    return Promise.resolve(name).then(api.tokenizer).then((tok) => { // an unknown name rejects
      made[name] = tok;
      if (typeof tok.mergeSteps !== "function") throw new Error(`${tok.label || name} has no merges to show`);
      return tok;
    });
  }

  function tokLabel(name) {
    if (made[name]) return made[name].label || name;
    try { return api.tokenizerSpec(name).label || name; } catch (err) { return name; }
  }

  // ------------------------------------------------------------------ one stepper

  let counter = 0;

  function Stepper(box) {
    const n = ++counter, id = (s) => `tkbs-${n}-${s}`;
    box.replaceChildren();
    box.dataset.ready = "loading";

    // the text and its chunks
    const textLabelNode = el("label", "tkbs-label", "Text, cut into chunks by the split pattern");
    textLabelNode.htmlFor = id("text");
    const field = el("textarea", "tkbs-text");
    field.id = id("text");
    field.rows = 2;
    field.spellcheck = false;
    field.value = box.dataset.text !== undefined ? box.dataset.text : "Tokenizers merge bytes.";
    const encLabel = el("label", "tkbs-label", "Tokenizer");
    encLabel.htmlFor = id("enc");
    const select = el("select", "tkbs-enc");
    select.id = id("enc");
    const head = el("div", "tkbs-head");
    const encWrap = el("span", "tkbs-encwrap");
    encWrap.append(encLabel, " ", select);
    head.append(textLabelNode, encWrap);

    const chunksLabel = el("p", "tkbs-label", "Pick a chunk (click it, or use the arrow keys in this row):");
    chunksLabel.id = id("chunks-label");
    const chunkRow = el("div", "tkbs-chunks");
    chunkRow.setAttribute("role", "group");
    chunkRow.setAttribute("aria-labelledby", chunksLabel.id);
    const chunkNote = el("p", "tkbs-small");

    // the merges of the chosen chunk
    const stage = el("section", "tkbs-stage");
    stage.setAttribute("aria-labelledby", id("title"));
    const title = el("h3", "tkbs-title", "Merges");
    title.tabIndex = -1; // showMerges moves the focus here, so keyboard users land with the view
    title.id = id("title");
    const live = el("p", "tkbs-sentence");
    live.setAttribute("aria-live", "polite");
    const partsRow = el("div", "tkbs-parts");
    partsRow.setAttribute("aria-label", "the chunk's parts at this step");
    partsRow.setAttribute("role", "list");
    const controls = el("div", "tkbs-controls");
    const button = (text, aria) => {
      const b = el("button", "tkbs-btn", text);
      b.type = "button";
      b.setAttribute("aria-label", aria);
      controls.appendChild(b);
      return b;
    };
    const first = button("« First", "first step");
    const prev = button("◀ Previous", "previous step");
    const next = button("Next ▶", "next step");
    const last = button("Last »", "last step");
    const sliderLabel = el("label", "tkbs-label", "Step");
    sliderLabel.htmlFor = id("slider");
    const slider = el("input", "tkbs-slider");
    slider.type = "range";
    slider.id = id("slider");
    slider.min = "0";
    slider.step = "1";
    const sliderWrap = el("span", "tkbs-sliderwrap");
    sliderWrap.append(sliderLabel, " ", slider);
    controls.appendChild(sliderWrap);
    const result = el("div", "tkbs-result");
    const note = el("p", "tkbs-note");
    const details = el("details", "tkbs-table");
    const summary = el("summary", "", "Every step");
    const table = el("table");
    details.append(summary, table);
    stage.append(title, live, partsRow, controls, result, note, details);
    box.append(head, field, chunksLabel, chunkRow, chunkNote, stage);

    const state = { name: null, tok: null, text: "", chunks: [], chosen: -1, merges: null, k: 0, source: null };

    // ---- the tokenizer list
    const fillSelect = () => {
      const names = (api.TOKENIZERS || []).filter(offers);
      const want = state.name || box.dataset.encoding || names[0];
      if (want && !names.includes(want)) names.unshift(want);
      select.replaceChildren(...names.map((name) => {
        const o = el("option", "", `${tokLabel(name)} (${name})`);
        o.value = name;
        return o;
      }));
      if (want) select.value = want;
    };

    // ---- chunks of the text field
    const cut = (text) => {
      const chunks = [];
      for (let s = 0; s < text.length;) {
        const e = state.tok.nextChunkEnd(text, s);
        if (!(e > s)) break;
        chunks.push([s, e]);
        s = e;
      }
      return chunks;
    };

    const drawChunks = () => {
      const frag = document.createDocumentFragment();
      state.chunks.slice(0, MAX_CHUNKS).forEach(([s, e], i) => {
        const piece = state.text.slice(s, e);
        const shown = piece.length > 40 ? textLabel(piece.slice(0, 30)) + "…" : textLabel(piece);
        const b = el("button", "tkbs-chunk", shown);
        b.type = "button";
        b.dataset.index = i;
        b.dataset.start = s;
        b.dataset.end = e;
        const bytes = utf8Length(piece);
        b.setAttribute("aria-label", `chunk ${i + 1} of ${state.chunks.length}: ${shown} (${bytes} byte${bytes === 1 ? "" : "s"})`);
        frag.appendChild(b);
      });
      chunkRow.replaceChildren(frag);
      markChosen();
      const more = state.chunks.length - MAX_CHUNKS;
      chunkNote.textContent = more > 0 ? `… and ${more.toLocaleString("en")} more chunks (not shown).` : "";
    };

    /** aria-pressed on the chosen chunk; it alone is in the Tab order (the first if none). */
    const markChosen = () => {
      let any = false;
      for (const b of chunkRow.children) {
        const on = Number(b.dataset.index) === state.chosen;
        b.setAttribute("aria-pressed", on ? "true" : "false");
        b.tabIndex = on ? 0 : -1;
        any = any || on;
      }
      if (!any && chunkRow.firstChild) chunkRow.firstChild.tabIndex = 0;
    };

    // ---- the merges
    const clear = (message) => {
      state.merges = null;
      state.k = 0;
      title.textContent = "Merges";
      live.textContent = message;
      partsRow.replaceChildren();
      result.replaceChildren();
      note.textContent = "";
      table.replaceChildren();
      details.hidden = true;
      for (const b of [first, prev, next, last, slider]) b.disabled = true;
      delete box.dataset.step;
      delete box.dataset.steps;
      delete box.dataset.ids;
    };

    /**
     * The merges as bytes: a tokenizer that merges characters (SentencePiece: units
     * "characters") hands over its parts as text; the stepper draws parts from their bytes.
     */
    const asBytes = (merges) => {
      if (merges.units !== "characters") return merges;
      return { ...merges, parts: merges.parts.map((p) => utf8(p)) };
    };

    /** Load the merges of text[start, end) (the source may be longer than the field). */
    const choose = (text, start, end) => {
      const piece = text.slice(start, end);
      const bytes = utf8Length(piece);
      state.source = { text, start, end };
      if (bytes > MAX_BYTES) {
        clear(`This chunk has ${bytes.toLocaleString("en")} bytes; pick a shorter one ` +
          `(the stepper shows chunks of at most ${MAX_BYTES.toLocaleString("en")} bytes).`);
        box.dataset.refused = "yes";
        title.textContent = `Merges of a chunk of ${bytes.toLocaleString("en")} bytes`;
        return;
      }
      delete box.dataset.refused;
      try {
        state.merges = asBytes(state.tok.mergeSteps(text, start, end));
      } catch (err) {
        clear(`Could not compute the merges of this chunk: ${err.message}`);
        return;
      }
      title.textContent = `Merges of '${textLabel(piece)}' (${bytes} byte${bytes === 1 ? "" : "s"}, ${state.tok.label || state.name})`;
      drawTable();
      show(0);
    };

    /** The table of steps: every step, or for a long chunk the SHOWN_ROWS around step k. */
    const drawTable = (k = 0) => {
      const m = state.merges, what = orderName(m), n = m.steps.length;
      const lo = n <= SHOWN_ROWS ? 0 : Math.max(0, Math.min(n - SHOWN_ROWS, k - SHOWN_ROWS / 2));
      const hi = Math.min(n, lo + SHOWN_ROWS);
      state.rows = [lo, hi];
      table.replaceChildren();
      details.hidden = n === 0;
      const shown = lo === 0 && hi === n ? "" : `; steps ${lo + 1}–${hi} shown`;
      const cap = el("caption", "", `The ${n.toLocaleString("en")} merges, in order (▶ marks the current step${shown})`);
      const thead = el("thead"), tr = el("tr");
      for (const h of ["step", what, "pair", "result", "id"]) {
        const th = el("th", "", h);
        th.scope = "col";
        tr.appendChild(th);
      }
      thead.appendChild(tr);
      const tbody = el("tbody");
      for (let i = lo; i < hi; i++) {
        const step = m.steps[i], [a, b] = pairOf(m, i);
        const row = el("tr");
        row.dataset.step = i + 1;
        const th = el("th", "", String(i + 1));
        th.scope = "row";
        row.appendChild(th);
        row.appendChild(el("td", "num", String(order(step))));
        const pair = el("td");
        pair.append(partNode("span", "tkbs-mini", a), " + ", partNode("span", "tkbs-mini", b));
        row.appendChild(pair);
        const res = el("td");
        res.appendChild(partNode("span", "tkbs-mini", a + b));
        row.appendChild(res);
        row.appendChild(el("td", "num", String(step.id)));
        tbody.appendChild(row);
      }
      table.append(cap, thead, tbody);
    };

    /** Draw step k: the parts, the sentence, the controls, the table's mark, the result. */
    const show = (k) => {
      const m = state.merges;
      if (!m) return;
      const n = m.steps.length;
      k = Math.max(0, Math.min(n, k));
      state.k = k;
      const parts = partsAt(m, k);
      const justMerged = k > 0 ? m.steps[k - 1].at : -1;
      const upcoming = k < n ? m.steps[k].at : -1;
      const frag = document.createDocumentFragment();
      // a long chunk: the SHOWN_PARTS parts around the pair, the rest counted
      const focus = Math.max(justMerged, upcoming, 0);
      const from = parts.length <= SHOWN_PARTS ? 0 : Math.max(0, Math.min(parts.length - SHOWN_PARTS, focus - SHOWN_PARTS / 2));
      const to = Math.min(parts.length, from + SHOWN_PARTS);
      const more = (text) => { const item = el("span", "tkbs-more", text); item.setAttribute("role", "listitem"); return item; };
      if (from > 0) frag.appendChild(more(`… ${from.toLocaleString("en")} parts before `));
      parts.slice(from, to).forEach((p, shownAt) => {
        const i = from + shownAt;
        const cls = ["tkbs-part"];
        let tag = "";
        if (i === justMerged) { cls.push("merged"); tag = "merged"; }
        if (upcoming >= 0 && (i === upcoming || i === upcoming + 1)) { cls.push("next"); tag = tag ? tag + ", next" : "next"; }
        const item = el("span", cls.join(" "));
        item.setAttribute("role", "listitem");
        item.appendChild(partNode("span", "tkbs-bytes", p));
        if (tag) item.appendChild(el("span", "tkbs-tag", tag));
        frag.appendChild(item);
      });
      if (to < parts.length) frag.appendChild(more(` … ${(parts.length - to).toLocaleString("en")} parts after`));
      partsRow.replaceChildren(frag);
      if (state.rows && k > 0 && (k - 1 < state.rows[0] || k > state.rows[1])) drawTable(k);
      live.textContent = sentence(m, k, parts);
      slider.max = String(n);
      slider.value = String(k);
      slider.setAttribute("aria-valuetext", `step ${k} of ${n}`);
      first.disabled = prev.disabled = k === 0;
      next.disabled = last.disabled = k === n;
      slider.disabled = n === 0;
      for (const row of table.querySelectorAll("tbody tr")) {
        const on = Number(row.dataset.step) === k;
        row.classList.toggle("current", on);
        if (on) row.setAttribute("aria-current", "step"); else row.removeAttribute("aria-current");
        row.firstChild.textContent = (on ? "▶ " : "") + row.dataset.step;
      }
      result.replaceChildren();
      if (k === n) {
        result.appendChild(el("p", "tkbs-label", `The tokens (${state.tok.label || state.name}'s ids):`));
        const list = el("ol", "tkbs-final");
        m.ids.forEach((tid) => {
          const li = el("li", "tkbs-token");
          const info = state.tok.tokenInfo(tid);
          li.appendChild(partNode("span", "tkbs-bytes", info.bytes));
          li.appendChild(el("span", "tkbs-id", `id ${tid}`));
          list.appendChild(li);
        });
        result.appendChild(list);
        box.dataset.ids = m.ids.join(" ");
      } else delete box.dataset.ids;
      note.textContent = m.note && k === n ? `Note: ${m.note}.` : "";
      box.dataset.step = k;
      box.dataset.steps = n;
    };

    const pick = (i, focus) => {
      if (!state.tok || i < 0 || i >= state.chunks.length) return;
      state.chosen = i;
      markChosen();
      if (focus && chunkRow.children[i]) chunkRow.children[i].focus();
      const [s, e] = state.chunks[i];
      choose(state.text, s, e);
    };

    /** Cut the field's text; keep the chosen chunk where one starts at the same offset. */
    const recut = (keepStart) => {
      state.text = wellFormed(field.value);
      state.chunks = cut(state.text);
      const i = state.chunks.findIndex(([s]) => s === keepStart);
      state.chosen = i >= 0 ? i : 0;
      drawChunks();
      if (state.chunks.length) pick(state.chosen, false);
      else clear("The text is empty: type something to cut into chunks.");
    };

    /** Switch to tokenizer `name`, then run `then`. Resolves true, or false if it failed. */
    const useTokenizer = (name, then) => {
      state.name = name;
      state.tok = null;
      box.dataset.ready = "loading";
      clear(`Loading ${tokLabel(name)}…`);
      return load(name).then((tok) => {
        if (state.name !== name) return false; // the reader chose another meanwhile
        state.tok = tok;
        fillSelect();
        then();
        box.dataset.ready = "yes";
        return true;
      }).catch((err) => {
        clear(`Could not load ${name}: ${err.message}`);
        box.dataset.ready = "error";
        return false;
      });
    };

    // ---- events
    chunkRow.addEventListener("click", (ev) => {
      const b = ev.target.closest(".tkbs-chunk");
      if (b) pick(Number(b.dataset.index), true);
    });
    chunkRow.addEventListener("keydown", (ev) => {
      const b = ev.target.closest(".tkbs-chunk");
      if (!b) return;
      const i = Number(b.dataset.index), shown = chunkRow.children.length;
      const to = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: shown - 1 }[ev.key];
      if (to === undefined) return;
      ev.preventDefault();
      pick(Math.max(0, Math.min(shown - 1, to)), true);
    });
    first.addEventListener("click", () => show(0));
    prev.addEventListener("click", () => show(state.k - 1));
    next.addEventListener("click", () => show(state.k + 1));
    last.addEventListener("click", () => show(Infinity));
    slider.addEventListener("input", () => show(Number(slider.value)));
    let timer = 0;
    field.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { if (state.tok) recut(state.source ? state.source.start : 0); }, 150);
    });
    select.addEventListener("change", () => {
      const keep = state.source ? state.source.start : 0;
      useTokenizer(select.value, () => recut(keep));
    });

    fillSelect();
    const name = box.dataset.encoding || select.value;
    if (name) useTokenizer(name, () => recut(0));
    else clear("No tokenizer with merges is registered on this page.");

    /** Load chunk text[start, end) under tokenizer `name` (showMerges): Promise<boolean>. */
    this.load = (name, text, start, end) => {
      text = wellFormed(text);
      const go = () => {
        if (text.length <= MAX_FIELD) {
          field.value = state.text = text;
          state.chunks = cut(text);
          state.chosen = state.chunks.findIndex(([s, e]) => s === start && e === end);
        } else {
          // a long text: the field shows a stretch from the chunk on; the merges come from
          // the whole text (a chunk may depend on what precedes it)
          field.value = state.text = text.slice(start, Math.min(text.length, start + MAX_FIELD));
          state.chunks = cut(state.text);
          state.chosen = state.chunks.length && state.chunks[0][1] === end - start ? 0 : -1;
        }
        drawChunks();
        choose(text, start, end);
        return true;
      };
      return name === state.name && state.tok ? Promise.resolve(go()) : useTokenizer(name, go);
    };
    this.box = box;
    this.title = title;
  }

  // ------------------------------------------------------------------ the page

  const steppers = [];

  function initAll() {
    document.querySelectorAll(".tokcourse-bpe-stepper").forEach((box) => {
      if (!box.dataset.ready) steppers.push(new Stepper(box));
    });
  }

  /**
   * Load chunk text[start, end) of tokenizer `name` into the page's first stepper and scroll
   * it into view. Resolves true when shown (or refused as too long), false if the page has no
   * stepper or the tokenizer could not be loaded.
   */
  api.showMerges = function (name, text, start, end) {
    initAll();
    const stepper = steppers[0];
    if (!stepper) return Promise.resolve(false);
    return stepper.load(name, text, start, end).then((shown) => {
      if (shown && stepper.box.scrollIntoView) {
        const still = global.matchMedia && global.matchMedia("(prefers-reduced-motion: reduce)").matches;
        stepper.box.scrollIntoView({ behavior: still ? "auto" : "smooth", block: "start" });
        stepper.title.focus({ preventScroll: true }); // the keyboard follows the view
      }
      return shown;
    });
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})(window);
