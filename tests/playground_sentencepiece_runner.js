// The test page's script for tests/test_playground_sentencepiece.py (read that file first).
// It gets its inputs as globals from strings.js (STRINGS, CONTROL_STRINGS, ...) and writes
// what it found into <pre id="result"> as JSON; the comparisons with sentencepiece are in Python.
const api = tokcoursePlayground;
const out = {groups: {}, control: {}, boundary: {}, steps: {}, timings: {}, worker: null};

function mulberry32(seed) {  // a small seeded PRNG: the edits are the same on every run
  return function () {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function encodeOrError(tok, s) {
  try { return tok.encode(s); } catch (err) { return {error: err.message, name: err.name, index: err.index}; }
}

/** The chunks of text that end at or before b, with their ids; and whether b is a chunk end. */
function chunksUpTo(tok, text, b) {
  const chunks = [];
  let start = 0;
  while (start < b) {
    const end = tok.nextChunkEnd(text, start);
    if (end > b) return {chunks, atEnd: false};
    const o = tok.encodeChunk(text, start, end, {ids: [], starts: [], ends: []});
    chunks.push(JSON.stringify([start, end, o.ids, o.starts, o.ends]));
    start = end;
  }
  return {chunks, atEnd: start === b};
}

function withData(data, change) {
  const copy = Object.assign({}, data);
  change(copy);
  return copy;
}

function reversedScores(b64) {  // every score negated: the lowest score merges first
  const bin = atob(b64), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < bytes.length; i += 4) view.setFloat32(i, -view.getFloat32(i, true), true);
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

/**
 * Wait for `promise` while keeping the page busy. Headless Chromium's --virtual-time-budget
 * fast-forwards an idle page: while only a worker is working, the budget runs out at once and
 * the DOM is dumped before the answer comes. Short busy tasks in a row keep the clock honest.
 */
function keepBusyUntil(promise) {
  let done = false;
  promise.then(() => { done = true; }, () => { done = true; });
  return new Promise((resolve) => {
    const pump = () => {
      if (done) return resolve(promise);
      const t0 = Date.now();
      for (let i = 0; i < 1e7 && Date.now() - t0 < 5; i++);
      setTimeout(pump, 0);
    };
    pump();
  });
}

function inWorker(data, strings) {  // the module bodies again, in a Web Worker made from a Blob
  const code = api.moduleSource() + `
    self.onmessage = (e) => {
      const tok = tokcoursePlayground.createTokenizer("mistral_v1", [e.data.data]);
      self.postMessage(e.data.strings.map((s) => tok.encode(s).ids));
    };`;
  const worker = new Worker(URL.createObjectURL(new Blob([code], {type: "text/javascript"})));
  return new Promise((resolve, reject) => {
    worker.onmessage = (e) => { resolve(e.data); worker.terminate(); };
    worker.onerror = (e) => reject(new Error("worker: " + e.message));
    worker.postMessage({data, strings});
  });
}

(async () => {
  try {
    let t0 = performance.now();
    const tok = await api.tokenizer("mistral_v1");
    out.timings.load_ms = performance.now() - t0;
    out.timings.build_ms = tok.buildMs;
    out.registered = {label: api.tokenizerSpec("mistral_v1").label, files: api.tokenizerSpec("mistral_v1").files,
                      name: tok.name, vocabSize: tok.vocabSize};
    t0 = performance.now(); tok.encode(SPEED_TEXT); out.timings.encode_cold_ms = performance.now() - t0;
    t0 = performance.now(); tok.encode(SPEED_TEXT); out.timings.encode_warm_ms = performance.now() - t0;
    out.timings.speed_tokens = tok.encode(SPEED_TEXT).ids.length;
    out.hostile = {};
    for (const [name, text] of Object.entries(HOSTILE)) {
      t0 = performance.now();
      const ids = tok.encode(text).ids;
      out.hostile[name] = {ms: performance.now() - t0, ids};
      // the stepper on the text's first chunk (the whole text but for "spaces then a word")
      const end = tok.nextChunkEnd(text, 0);
      t0 = performance.now();
      const ms = tok.mergeSteps(text, 0, end);
      out.hostile[name].steps_ms = performance.now() - t0;
      out.hostile[name].steps = [ms.parts.length, ms.steps.length, ms.ids.length];
      const chunk = tok.encodeChunk(text, 0, end, {ids: [], starts: [], ends: []}).ids;
      out.hostile[name].steps_ids_ok = JSON.stringify(ms.ids) === JSON.stringify(chunk);
    }

    // 1. ids and offsets of every string; the whole text as one chunk gives the same ids
    const wholeDiffers = [];
    for (const [group, strings] of Object.entries(STRINGS)) {
      out.groups[group] = strings.map((s, i) => {
        const r = encodeOrError(tok, s);
        if (!r.error && s.length) {
          const one = tok.encodeChunk(s, 0, s.length, {ids: [], starts: [], ends: []});
          if (JSON.stringify(one) !== JSON.stringify(r)) wholeDiffers.push([group, i]);
        }
        return r;
      });
    }
    out.wholeDiffers = wholeDiffers;

    // 2. controls: the same encoder, dummy prefix off / merge order reversed
    const data = await api.loadData("mistral_v1");
    const controls = {
      "no dummy prefix": withData(data, (d) => { d.addDummyPrefix = false; }),
      "merge order reversed": withData(data, (d) => { d.scores = reversedScores(d.scores); }),
    };
    for (const [name, d] of Object.entries(controls)) {
      const bad = api.createTokenizer("mistral_v1", [d]);
      out.control[name] = CONTROL_STRINGS.map((s) => bad.encode(s).ids);
    }

    out.tiny = TINY.map(([d, texts]) => {
      const small = api.createTokenizer("mistral_v1", [d]);
      return texts.map((s) => small.encode(s).ids);
    });

    // 3. safeBoundary: at every b it calls safe, random edits after b + 1 keep the chunks before b
    const rand = mulberry32(26);
    const alphabet = [" ", "  ", "\u2581", "a", "x", "\n", "\u00e9", "\ud83d\ude00", "\t", "the", "\ufeff"];
    let checked = 0, unsafe = 0, violationCount = 0;
    const violations = [];
    for (const text of BOUNDARY_STRINGS) {
      for (let b = 1; b < text.length; b++) {
        if (!tok.safeBoundary(text, b)) { unsafe++; continue; }
        const before = chunksUpTo(tok, text, b);
        for (let k = 0; k < 2; k++) {
          let tail = "";
          for (let n = Math.floor(rand() * 6); n > 0; n--) tail += alphabet[Math.floor(rand() * alphabet.length)];
          const edited = text.slice(0, b + 1) + tail;
          const after = chunksUpTo(tok, edited, b);
          checked++;
          if (!before.atEnd || !after.atEnd || JSON.stringify(before.chunks) !== JSON.stringify(after.chunks)) {
            if (violations.length < 20) violations.push([text, b, edited]);
            violationCount++;
          }
        }
      }
    }
    out.boundary = {checked, unsafe, violations, violationCount};

    // 4. mergeSteps on every chunk ("word") of Botchan: replay the steps, compare the ids
    const novel = BOTCHAN;
    let words = 0, stepsTotal = 0;
    const stepFailures = [];
    for (let start = 0; start < novel.length;) {
      const end = tok.nextChunkEnd(novel, start);
      const ms = tok.mergeSteps(novel, start, end);
      const ids = tok.encodeChunk(novel, start, end, {ids: [], starts: [], ends: []}).ids;
      const parts = ms.parts.slice();
      let ok = JSON.stringify(ms.ids) === JSON.stringify(ids);
      for (const step of ms.steps) {
        const joined = parts[step.at] + parts[step.at + 1];
        if (step.at + 1 >= parts.length || tok.pieces[step.id] !== joined || tok.scores[step.id] !== step.score) ok = false;
        parts.splice(step.at, 2, joined);
      }
      // after the last merge the parts are the tokens (Botchan has a few unknown characters)
      const spelled = ids.map((i) => tok.pieces[i]);
      if (!ms.note && JSON.stringify(parts) !== JSON.stringify(spelled)) ok = false;
      if (ms.note && !/byte fallback|split back/.test(ms.note)) ok = false;
      if (!ok && stepFailures.length < 10) stepFailures.push([start, end, ms]);
      words++; stepsTotal += ms.steps.length;
      start = end;
    }
    out.steps.botchan = {words, steps: stepsTotal, failures: stepFailures};
    out.steps.samples = STEP_SAMPLES.map(([t, s, e]) => tok.mergeSteps(t, s, e));
    try { tok.mergeSteps("a\ud800", 0, 2); out.steps.surrogate = "no error"; }
    catch (err) { out.steps.surrogate = err.message; }

    // 5. the interface: tokenInfo, and the same ids from a Web Worker
    out.info = INFO_IDS.map((i) => tok.tokenInfo(i));
    out.worker = await keepBusyUntil(inWorker(data, WORKER_STRINGS));
    out.workerHere = WORKER_STRINGS.map((s) => tok.encode(s).ids);
    out.userAgent = navigator.userAgent;
  } catch (err) {
    out.error = String(err) + "\n" + err.stack;
  }
  document.getElementById("result").textContent = JSON.stringify(out);
})();
