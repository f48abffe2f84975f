"""The playground as a person types it: one character at a time, every row its library's.

After each keystroke the widget's worker re-encodes incrementally (engine.js): it keeps the
chunks before a boundary the tokenizer calls safe, and cuts again from there. A rule that
forgets how far past its end a chunk looks (GPT-2's ``'re``, GPT-4o's word that takes the
contraction after it) leaves wrong ids that stay, and only edits of one character at a time
show it: a paste, or keystrokes that the debounce merges, re-encode more than the chunk.

What is checked:
- the engine, driven in the page through thousands of single-character edits: every prefix of
  hard strings (contractions in every case, digits, CRLF, spaces before letters, special
  tokens) typed at the end, typed into the middle of a text, deleted again; and random
  single-character insertions and deletions in long texts. After every edit every row's ids
  equal the library's (tiktoken, sentencepiece, Hugging Face tokenizers) and its offsets equal
  encoding the whole text. The control: the same engine trusting each tokenizer's rule with the
  whole text known (the old one-character rule) gets some of these edits wrong;
- the widget itself, typed into one key at a time, slower than its debounce;
- a token that has the keyboard focus keeps it when the row is drawn again.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from tests.test_book import CHROMIUM
from tests.test_playground_widget import (
    ALL,
    BOX,
    open_widget,
    painted,
    reference_ids,
    rows,
    write_site,
)

# ----------------------------------------------------------------------- the texts

# Strings whose every prefix is typed: where a chunk looks past its end, or a later chunk can
# join an earlier one, or a boundary is easy to get wrong.
HARD = [
    # contractions, every case and every tail; a contraction typed before its word ends
    "We're sure it's fine.",
    "WE'RE SURE IT'S FINE.",
    "we'Re We'rE wE'RE",
    "I'll I'LL i'Ll",
    "they've THEY'VE they'Ve",
    "don't DON'T Don'T",
    "you're you'd YOU'D",
    "I'm I'M she's She'S it'd IT'D",
    "y'all'd've",
    "'re 're 'll 've 's",
    "''re x''ll",
    "rock'n'roll O'Reilly's",
    "a'a'a'a'a's",
    "ſ's 'ſ x'ſ",  # ſ folds to s in GPT-4's and GPT-4o's case-insensitive contractions
    "it’s don‘t",  # not ASCII apostrophes: no contraction
    "naïve café's 中文's 👋'll",
    "HTTPServer's camelCase'LL ÉCOLE'S",
    # GPT-4o: a word can give back capitals to end at a caseless letter or a mark, having read
    # the capitals after it; one lower-case letter typed after them joins them all
    "中ABCdef 中AB'S",
    "a 天天中彩票APPs",  # " 天天中彩票", "APP" until the "s": then one chunk, other ids
    "A\u0301BCde xʰYZw",
    # digits: GPT-2 takes a run, GPT-4 and GPT-4o groups of three
    "1234567 89",
    "3.14159 and 2,718,281,828",
    "x123y 0x1F ١٢٣٤٥",
    # line ends and white space before letters
    "a\r\nb\r\n\r\nc",
    "line\r\n  indented\r\n\r",
    "   hello  world",
    "x \t y  \n  z",
    "word   's  're",
    # special tokens of each tokenizer, whole and in pieces
    "<|endoftext|>",
    "a<|endoftext|>b <|endoftext|> ",
    "<|endofprompt|>'s <|fim_prefix|>",
    "[CLS] x [SEP] [MASK]'s",
    "▁▁x ▁y",
]
LEFT, RIGHT = "Hello there, ", " and that's all."


def typing_runs() -> list[list[str]]:
    """Sequences of texts, each one character (code point) from the one before."""
    runs = []
    for hard in HARD:
        n = len(hard)
        typed = [hard[:j] for j in range(n + 1)]
        runs.append(typed + typed[-2::-1])  # typed at the end, then deleted from the end
        runs.append([LEFT + hard[:j] + RIGHT for j in range(n + 1)])  # typed in the middle
        runs.append([LEFT + hard[j:] + RIGHT for j in range(n + 1)])  # deleted forwards
        runs.append([hard[n - j :] for j in range(n + 1)])  # typed backwards, at the start
    return runs


ALPHABET = list("'''''sstrelvdmRELVDSMABCʰ     \n\r\t1234xaWwI<|>.!,é中👋▁\u0301ſ’")


def random_runs(seed: int, edits: int) -> list[list[str]]:
    """Random single-character insertions and deletions in two long texts, often next to an
    apostrophe (where the contraction rules bite)."""
    from tokcourse.course.data import corpora

    rng = random.Random(seed)
    bases = [
        corpora.botchan_text()[:3000] + " I'll say they've gone, we're done. ",
        "We're 12,345 items\r\n  <|endoftext|> they'VE said I'm x'll y're.\r\n" * 30,
    ]
    runs = []
    for text in bases:
        states = [text]
        for _ in range(edits):
            quotes = [i for i, ch in enumerate(text) if ch == "'"]
            if quotes and rng.random() < 0.5:
                at = max(0, min(len(text), rng.choice(quotes) + rng.randint(-2, 3)))
            else:
                at = rng.randint(0, len(text))
            if text and rng.random() < 0.4:
                at = min(at, len(text) - 1)
                text = text[:at] + text[at + 1 :]  # one character deleted
            else:
                text = text[:at] + rng.choice(ALPHABET) + text[at:]  # one typed
            states.append(text)
        runs.append(states)
    return runs


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def as_edits(states: list[str]) -> list[list]:
    """Each step as the edit [at, deleted, inserted] (offsets in UTF-16 units, as in JavaScript)."""
    edits = []
    for a, b in zip(states, states[1:], strict=False):
        p = 0
        while p < min(len(a), len(b)) and a[p] == b[p]:
            p += 1
        s = 0
        while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
            s += 1
        edits.append([utf16(a[:p]), utf16(a[p : len(a) - s]), b[p : len(b) - s]])
    return edits


def fingerprint(ids: list[int]) -> list[int]:
    """[count, FNV-1a hash] of a list of ids, as EDIT_RUNNER computes it."""
    h = 2166136261
    for i in ids:
        h = ((h ^ i) * 16777619) & 0xFFFFFFFF
    return [len(ids), h]


# ----------------------------------------------------------------------- the engine

EDIT_RUNNER = """(async (runs) => {
  // runs: [{start, edits: [[at, deleted, inserted], ...], want: {name: [[count, hash], ...]}}]
  const api = tokcoursePlayground, out = {};
  const fingerprint = (ids) => {
    let h = 2166136261;
    for (const id of ids) h = Math.imul(h ^ id, 16777619) >>> 0;
    return [ids.length, h];
  };
  const same = (a, b) => a[0] === b[0] && a[1] === b[1];
  for (const name of api.TOKENIZERS) {
    const tok = await api.tokenizer(name);
    // the control: the same rule, told that the whole text is known (how far a chunk looks
    // past its end is then never a reason to go back): the old one-character rule
    const forgetful = Object.create(tok);
    forgetful.safeBoundary = (text, b) => tok.safeBoundary(text, b, Infinity);
    const r = out[name] = {edits: 0, wrong: 0, offsets: 0, control: 0, examples: []};
    for (const run of runs) {
      const engine = new api.Incremental(tok), control = new api.Incremental(forgetful);
      let text = run.start;
      engine.update(text); control.update(text);
      run.edits.forEach(([at, deleted, inserted], e) => {
        text = text.slice(0, at) + inserted + text.slice(at + deleted);
        engine.update(text); control.update(text);
        r.edits++;
        const want = run.want[name][e + 1];
        if (!same(fingerprint(engine.ids), want)) {
          r.wrong++;
          if (r.examples.length < 3) r.examples.push({text, ids: [...engine.ids]});
        }
        if (!same(fingerprint(control.ids), want)) r.control++;
        if (run.offsets && (e + 1) % run.offsets === 0) {  // every run.offsets-th edit
          const whole = api.encodeWhole(tok, text);
          const ok = whole.ids.length === engine.ids.length && whole.ids.every((id, k) =>
            whole.starts[k] === engine.starts[k] && whole.ends[k] === engine.ends[k]);
          if (!ok) r.offsets++;
        }
      });
      r.final = text.length;
    }
  }
  return out;
})"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if CHROMIUM is None:
        pytest.skip("chromium not installed")
    folder = tmp_path_factory.mktemp("typing")
    return write_site(
        folder,
        '<div class="tokcourse-playground" data-text="Typed:&#13;&#10;"></div>',
    )


def run_edits(page, runs: list[list[str]], offsets: int) -> dict:
    """Drive the engine through ``runs`` in the page; offsets checked every ``offsets``-th edit."""
    payload = [
        {
            "start": states[0],
            "edits": as_edits(states),
            "want": {name: [fingerprint(reference_ids(name, t)) for t in states] for name in ALL},
            "offsets": offsets,
        }
        for states in runs
    ]
    return page.evaluate(f"{EDIT_RUNNER}({json.dumps(payload)})", timeout=900)


def check(out: dict, runs: list[list[str]]) -> None:
    edits = sum(len(states) - 1 for states in runs)
    assert set(out) == set(ALL)
    for name, r in out.items():
        assert r["edits"] == edits, (name, r["edits"])
        for example in r["examples"]:  # the first wrong ones, against the library
            example["library"] = reference_ids(name, example["text"])
        assert r["wrong"] == 0, (name, r["wrong"], r["examples"])
        assert r["offsets"] == 0, (name, r["offsets"])
    # the control: forgetting how far a chunk looks past its end is caught
    assert out["r50k_base"]["control"] > 0 and out["o200k_base"]["control"] > 0, {
        name: r["control"] for name, r in out.items()
    }


def test_every_prefix_of_hard_strings_typed_and_deleted(browser, site):
    runs = typing_runs()
    out = run_edits(open_widget(browser, site), runs, offsets=1)
    check(out, runs)


def test_random_single_character_edits_in_long_texts(browser, site):
    runs = random_runs(38, 1000)
    out = run_edits(open_widget(browser, site), runs, offsets=10)
    check(out, runs)


# ----------------------------------------------------------------------- the widget


def key(page, name: str, code: int, **extra) -> None:
    for kind in ("keyDown", "keyUp"):
        page.send(
            "Input.dispatchKeyEvent",
            type=kind,
            key=name,
            code=name,
            windowsVirtualKeyCode=code,
            **extra,
        )


TYPED = "We're sure it's fine, I'll say they've WE'RE don't 12345 <|endoftext|>'s"


def test_typing_one_key_at_a_time_slower_than_the_debounce(browser, site):
    """Keys 60 ms apart (the debounce is 25 ms): each keystroke is encoded on its own, and after
    each one every row equals its library, at the end of the text and in its middle."""
    page = open_widget(browser, site)
    assert page.evaluate(f"{BOX}.model.text") == "Typed:\r\n"
    page.evaluate(
        "(() => { const t = document.querySelector('textarea'); t.focus();"
        " t.setSelectionRange(t.value.length, t.value.length); })()"
    )
    wrong = []

    def type_one(ch: str) -> None:
        version = page.evaluate(f"{BOX}.version")
        page.send("Input.insertText", text=ch)
        painted(page, version + 1)
        time.sleep(0.06)
        text = page.evaluate(f"{BOX}.model.text")
        drawn = rows(page)
        for name in ALL:
            if drawn[name]["ids"] != reference_ids(name, text):
                wrong.append((name, text))

    for ch in TYPED:
        type_one(ch)
    # back into the middle: after "We" (7 = "Typed:\n" in the box, then "We")
    page.evaluate("document.querySelector('textarea').setSelectionRange(9, 9)")
    for ch in "'ve it'll":
        type_one(ch)
    text = page.evaluate(f"{BOX}.model.text")
    assert text == "Typed:\r\nWe've it'll're sure" + TYPED[len("We're sure") :]
    # every keystroke went to the worker on its own, none merged by the debounce
    sent = page.evaluate(f"{BOX}.timings.filter((t) => t.sent !== undefined).length")
    assert sent >= len(TYPED) + len("'ve it'll")
    assert wrong == [], wrong[:5]
    assert page.errors() == []


def test_a_focused_token_keeps_the_focus_across_a_redraw(browser, site):
    """A key typed, then Tab within the debounce: the focus lands on a token that the redraw
    replaces; it must stay on the token at that place, not fall to the page."""
    for attempt in range(3):
        page = open_widget(browser, site)
        page.evaluate("document.querySelector('textarea').focus()")
        version = page.evaluate(f"{BOX}.version")
        page.send("Input.insertText", text="x")
        key(page, "Tab", 9)  # well within the 25 ms debounce
        assert "tok" in page.evaluate("document.activeElement.className"), attempt
        painted(page, version + 1)
        focused = page.evaluate(
            "(() => { const a = document.activeElement;"
            " return [a.className, a.closest('.row') && a.closest('.row').dataset.encoding,"
            " a.getAttribute('aria-selected'), a.tabIndex]; })()"
        )
        assert focused == ["tok", ALL[0], "true", 0], (attempt, focused)
        # the keyboard goes on from there
        key(page, "ArrowRight", 39)
        assert "token 2 of" in page.evaluate("document.querySelector('.tkp-details').textContent")
    # a row that refuses the new text (Mistral, a lone surrogate) keeps the focus on itself,
    # and hands it to a token when it has tokens again
    mistral = ".row[data-encoding=mistral_v1] .txt"
    for text, where in (("a\ud800", "txt"), ("back", "tok")):
        page.evaluate(
            f"(document.querySelector('{mistral} .tok') || document.querySelector('{mistral}'))"
            ".focus()"
        )
        version = page.evaluate(f"{BOX}.version")
        page.evaluate(f"{BOX}.replaceAll({json.dumps(text)})")
        painted(page, version + 1)
        assert page.evaluate(
            "(() => { const a = document.activeElement;"
            " return [a.className, a.closest('.row').dataset.encoding]; })()"
        ) == [where, "mistral_v1"], ascii(text)
