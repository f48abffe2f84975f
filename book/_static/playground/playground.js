/*
 * tokcourse playground widget: fills every <div class="tokcourse-playground"> of the page with a
 * text box and, for each encoding, the text as coloured token spans, as the notebook
 * visualizer tokcourse/course/viz.py draws them (same palette, whitespace markers, stray bytes
 * as hex, id and bytes on hover), with the token count and characters per token. It updates as
 * you type. The encoding itself is encoder.js (loaded before this file).
 *
 * Options on the div: data-text (the starting text), data-encodings (space-separated names),
 * data-compact (a smaller box). Whatever the div holds is replaced: put a note there for
 * readers without the book's JavaScript (Jupyter, Colab).
 */
(function (global) {
  "use strict";

  const api = global.tokcoursePlayground;
  const LABELS = { r50k_base: "GPT-2", cl100k_base: "GPT-4", o200k_base: "GPT-4o" };
  // viz.PALETTE and viz.SPECIAL_STYLE
  const PALETTE = ["#ffd6d6", "#ffe6bf", "#fff3b0", "#d5f2c8", "#c8eeea", "#d3e2ff", "#e4d9ff", "#ffd8f0"];
  const MARKERS = { " ": "·", "\t": "→", "\n": "↵", "\r": "␍" };
  // viz._INVISIBLE_CATEGORIES (display only: the browser's own Unicode tables decide)
  const INVISIBLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
  const MAX_SHOWN = 20000; // tokens drawn per row; the counts always cover the whole text

  function hex(n, width) {
    return n.toString(16).toUpperCase().padStart(width, "0");
  }

  /** Length of the UTF-8 sequence a lead byte announces; 0 if it cannot start one. */
  function utf8Width(lead) {
    if (lead < 0x80) return 1;
    if (lead >= 0xc2 && lead <= 0xdf) return 2;
    if (lead >= 0xe0 && lead <= 0xef) return 3;
    if (lead >= 0xf0 && lead <= 0xf4) return 4;
    return 0;
  }

  const decoder = new TextDecoder("utf-8", { fatal: true });

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

  /** Python's repr() of a bytes object, as the visualizer's tooltip shows it. */
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

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** The span of one token (viz._span_html). `chars`: the characters its bytes belong to. */
  function tokenSpan(index, id, bytes, special, chars) {
    const span = el("span", special ? "tok special" : "tok");
    if (!special) span.style.background = PALETTE[index % PALETTE.length];
    const parts = special ? [{ text: decoder.decode(Uint8Array.from(bytes, (c) => c.charCodeAt(0))) }] : splitUtf8(bytes);
    let partial = false;
    for (const part of parts) {
      if (!("text" in part)) {
        partial = true;
        const hexed = [...part.bytes].map((c) => hex(c.charCodeAt(0), 2)).join(" ");
        span.appendChild(el("span", "raw", `⟨${hexed}⟩`));
        continue;
      }
      let plain = "";
      const flush = () => { if (plain) { span.appendChild(document.createTextNode(plain)); plain = ""; } };
      for (const ch of part.text) {
        if (ch === "\n") { flush(); span.appendChild(el("span", "ws", "↵")); span.appendChild(el("br")); }
        else if (MARKERS[ch]) { flush(); span.appendChild(el("span", "ws", MARKERS[ch])); }
        else if (INVISIBLE.test(ch)) { flush(); span.appendChild(el("span", "ws", `⟨U+${hex(ch.codePointAt(0), 4)}⟩`)); }
        else plain += ch;
      }
      flush();
    }
    const n = bytes.length;
    const lines = [`token ${index} · id ${id} · ${n} byte${n !== 1 ? "s" : ""}`];
    if (special) lines.push("special token");
    lines.push(bytesRepr(bytes));
    if (partial) {
      const what = [...chars].map((c) => `${c} (U+${hex(c.codePointAt(0), 4)})`).join(", ");
      lines.push(`not valid UTF-8 alone; bytes of ${what}`);
    }
    span.title = lines.join("\n");
    span.dataset.id = id;
    return span;
  }

  /** Draw `text` under `encoder` into `row` (a .row element with .stats and .txt). */
  function drawRow(row, encoder, text) {
    const t0 = performance.now();
    const ids = encoder.encode(text);
    const ms = performance.now() - t0;
    text = api.fixSurrogates(text);
    const chars = [...text];
    // byte offset where each character starts, to name the characters of a partial token
    const starts = [];
    let offset = 0;
    for (const ch of chars) { starts.push(offset); offset += api.utf8(ch).length; }
    const txt = row.querySelector(".txt");
    const frag = document.createDocumentFragment();
    let pos = 0, c = 0;
    ids.forEach((id, index) => {
      const bytes = encoder.tokenBytes(id);
      if (index < MAX_SHOWN) {
        while (c + 1 < starts.length && starts[c + 1] <= pos) c++;
        let last = c;
        while (last < starts.length && starts[last] < pos + bytes.length) last++;
        frag.appendChild(tokenSpan(index, id, bytes, encoder.isSpecial(id), chars.slice(c, last).join("")));
      }
      pos += bytes.length;
    });
    if (ids.length > MAX_SHOWN) frag.appendChild(el("span", "empty", ` … (first ${MAX_SHOWN.toLocaleString("en")} tokens shown)`));
    if (!ids.length) frag.appendChild(el("span", "empty", "(no tokens)"));
    txt.replaceChildren(frag);
    const n = ids.length;
    const ratio = n ? `, ${(chars.length / n).toFixed(2)} chars/token` : "";
    row.querySelector(".stats").textContent = `${n} token${n !== 1 ? "s" : ""}${ratio}`;
    row.dataset.count = n;
    row.dataset.ms = ms.toFixed(2);
  }

  function init(box) {
    if (box.dataset.ready) return;
    box.dataset.ready = "loading";
    const names = (box.dataset.encodings || api.ENCODINGS.join(" ")).split(/\s+/).filter(Boolean);
    const start = box.dataset.text !== undefined ? box.dataset.text : "Hello world! Type here.";
    box.replaceChildren();
    const input = el("textarea", "tkp-input");
    input.value = start;
    const lines = start.split("\n").length;
    input.rows = Math.min(Math.max(2, lines), box.dataset.compact !== undefined ? 4 : 10);
    input.spellcheck = false;
    input.setAttribute("aria-label", "text to tokenize");
    box.appendChild(input);
    const rows = names.map((name) => {
      const row = el("div", "row");
      row.dataset.encoding = name;
      const hdr = el("div", "hdr");
      hdr.appendChild(el("b", "", `${LABELS[name] || name} (${name})`));
      hdr.appendChild(document.createTextNode(" "));
      hdr.appendChild(el("span", "stats", "loading…"));
      row.appendChild(hdr);
      row.appendChild(el("div", "txt"));
      box.appendChild(row);
      return row;
    });
    const encoders = {};
    let scheduled = false;
    const redraw = () => {
      scheduled = false;
      rows.forEach((row) => { const e = encoders[row.dataset.encoding]; if (e) drawRow(row, e, input.value); });
    };
    input.addEventListener("input", () => {
      if (!scheduled) { scheduled = true; setTimeout(redraw, 30); }
    });
    let done = 0;
    rows.forEach((row) => {
      const name = row.dataset.encoding;
      api.load(name).then((encoder) => {
        encoders[name] = encoder;
        drawRow(row, encoder, input.value);
      }).catch((err) => {
        row.querySelector(".stats").textContent = `could not load ${name}: ${err.message}`;
      }).finally(() => {
        if (++done === rows.length) box.dataset.ready = "yes";
      });
    });
  }

  function initAll() {
    document.querySelectorAll(".tokcourse-playground").forEach(init);
  }

  api.initAll = initAll;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})(window);
