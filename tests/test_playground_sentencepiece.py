"""The playground's Mistral 7B v1 row: our JavaScript SentencePiece BPE gives sentencepiece's ids.

No built book: the data file is written here with ``book/_ext/playground_sentencepiece.py``
into a temporary folder, next to copies of ``core.js`` and ``sentencepiece.js``, a test page and
the test strings. Headless Chromium (no network) runs the page once (a module fixture); the page
writes what it found into the DOM as JSON, and the tests below compare it with the real
``sentencepiece`` library (``SentencePieceProcessor.encode``, no BOS), here in Python:

- ids, id for id: Botchan line by line and in one piece, Python code, the parallel messages,
  hard strings (spaces, tabs, ``\\r\\n``, NUL, U+FEFF, emoji, CJK, byte fallback, the parity
  suite's FRAGMENTS, lone surrogates: refused with the Python package's own message) and a
  seeded fuzz of at least 2,000 strings;
- offsets: every token's UTF-16 ``starts``/``ends`` equal the ones sentencepiece reports (its
  byte offsets, converted), and the text between them is the token's text;
- chunks: the whole text as one chunk gives the same ids as chunk by chunk; ``safeBoundary``
  is honest (random edits after ``b + 1`` never change the chunks before ``b``);
- the stepper: ``mergeSteps`` on every word of Botchan replays to ``encodeChunk``'s ids, and
  its steps are the teaching loop's (``merge_by_score``) on a sample;
- controls: the same encoder with the dummy prefix off, or the merge order reversed, disagrees
  with sentencepiece on many strings (the comparison can fail).
- what Mistral cannot show, on tiny models: tied scores, NaN/inf/signed-zero scores, chains of
  unused pieces (split again); and 100,000-character hostile texts, exact and under 2 s each
  (encode and mergeSteps: the heap keeps a long chunk n log n);
- the interface: the registry entry, tokenInfo, and the same ids from a Web Worker.

Speeds (100 KB of Botchan, browser vs sentencepiece) go to
``_build/test-artifacts/playground-sentencepiece.json``.
"""

from __future__ import annotations

import functools
import json
import math
import random
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests._cdp import as_javascript_holds
from tests._ci import missing_tool
from tests._parity import FRAGMENTS, hostile_texts
from tests.conftest import ROOT
from tests.test_book import CHROMIUM

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import playground_sentencepiece as psp  # noqa: E402

PLAYGROUND = ROOT / "book" / "_static" / "playground"
ARTIFACTS = ROOT / "_build" / "test-artifacts"
HOSTILE_CHARS = 100_000  # the hostile shapes (tests/_parity.py) at this size: n log n, not n^2
FUZZ_STRINGS = 2_400  # about 1 in 16 holds a lone surrogate: over 2,000 are well-formed
SPACE = "\u2581"


@functools.cache
def model_bytes() -> bytes:
    from tokcourse.course.data.store import path

    return path(psp.ASSET).read_bytes()


@functools.cache
def theirs():
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_proto=model_bytes())


@functools.cache
def ours():
    from tokcourse.sentencepiece_bpe import SentencePieceBPE

    return SentencePieceBPE(model_bytes())


def edited_model(change) -> bytes:
    """The Mistral model with ``change(proto)`` applied, serialized again."""
    from tokcourse.sentencepiece_bpe import parse_model

    proto = parse_model(model_bytes())
    change(proto)
    return proto.SerializeToString()


# ----------------------------------------------------------------------- the data writer


def test_no_piece_of_mistral_crosses_a_chunk_cut():
    assert psp.crossing_pieces(ours().pieces, ours().types) == []
    # the check sees such a piece, and sees only mergeable ones (normal 1, unused 5)
    assert psp.crossing_pieces(["▁a", "a▁", "▁▁b", "b▁c"], [1, 5, 1, 3]) == ["a▁"]


def load(script: str) -> dict:
    """The object a data file hands to addData (and nothing else is in the file)."""
    prefix, suffix = 'tokcoursePlayground.addData("mistral_v1", ', ");\n"
    assert script.startswith(prefix) and script.endswith(suffix) and script.isascii()
    return json.loads(script[len(prefix) : -len(suffix)])


def test_the_data_file_round_trips():
    text = psp.scripts()["mistral_v1"]
    data = load(text)
    pieces, scores, types = psp.unpack(data)
    sp = theirs()
    assert data["size"] == len(pieces) == sp.get_piece_size() == 32_000
    assert pieces == [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert scores == [sp.get_score(i) for i in range(sp.get_piece_size())]
    assert types == ours().types
    assert data["byteIds"] == [sp.piece_to_id(f"<0x{b:02X}>") for b in range(256)]
    assert data["unkId"] == sp.unk_id() == 0
    assert data["addDummyPrefix"] and data["escapeWhitespaces"] and data["byteFallback"]
    assert not data["removeExtraWhitespaces"]
    assert text == psp.script(psp.model_data(model_bytes()))


def test_a_damaged_or_unsupported_model_is_refused(tmp_path, monkeypatch):
    from tokcourse.course.data import store

    bad = tmp_path / "bad.model"
    monkeypatch.setattr(store, "path", lambda name: bad)
    for damaged, why in [
        (model_bytes()[:1000], "not a SentencePiece model"),
        (b"", "it has no pieces"),
        (b"\xff" * 64, "not a SentencePiece model"),
    ]:
        bad.write_bytes(damaged)
        with pytest.raises(ValueError, match=why):
            psp.scripts()

    def add_piece(piece: str):
        def change(proto):
            new = proto.pieces.add()
            new.piece, new.score, new.type = piece, -40_000.0, 1

        return change

    def setting(field: str, value):
        def change(proto):
            spec = "normalizer_spec" if hasattr(proto.normalizer_spec, field) else "trainer_spec"
            setattr(getattr(proto, spec), field, value)

        return change

    for change, why in [
        (add_piece("a▁b"), "1 pieces have '▁' right after another character \\(first 'a▁b'\\)"),
        (add_piece("x▁"), "first 'x▁'"),
        (setting("remove_extra_whitespaces", True), "remove_extra_whitespaces is true"),
        (setting("byte_fallback", False), "byte_fallback is false"),
        (setting("treat_whitespace_as_suffix", True), "treat_whitespace_as_suffix"),
        (setting("model_type", 1), "model_type is UNIGRAM"),
    ]:
        bad.write_bytes(edited_model(change))
        with pytest.raises(ValueError, match=why):
            psp.scripts()
    # a piece with "▁" after "▁" does not cross a cut: accepted
    bad.write_bytes(edited_model(add_piece("▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁")))
    assert psp.unpack(load(psp.scripts()["mistral_v1"]))[0][-1] == "▁" * 19


# ----------------------------------------------------------------------- the test inputs


def tiny_model(pieces: list[tuple[str, float, int]]) -> bytes:
    """A model like Mistral's settings (identity, dummy prefix, byte fallback): <unk>, <s>,
    </s>, the 256 byte pieces, "▁", "a", "b", "c", then ``pieces`` as (piece, score, type)."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    from tokcourse.sentencepiece_bpe import BPE_MODEL_TYPE, byte_piece

    proto = pb.ModelProto()
    proto.trainer_spec.model_type = BPE_MODEL_TYPE
    proto.trainer_spec.byte_fallback = True
    norm = proto.normalizer_spec
    norm.name, norm.add_dummy_prefix, norm.escape_whitespaces = "identity", True, True
    norm.remove_extra_whitespaces = False
    for piece, kind in [("<unk>", 2), ("<s>", 3), ("</s>", 3)]:
        proto.pieces.add(piece=piece, score=0.0, type=kind)
    for b in range(256):
        proto.pieces.add(piece=byte_piece(b), score=0.0, type=6)
    for i, c in enumerate("▁abc"):
        proto.pieces.add(piece=c, score=-1.0 - i, type=1)
    for piece, score, kind in pieces:
        proto.pieces.add(piece=piece, score=score, type=kind)
    return proto.SerializeToString()


def tiny_cases() -> list[tuple[dict, list[str]]]:
    """What Mistral cannot show (its scores are all different, it has no unused piece): tied
    scores (the leftmost pair first), NaN, infinite and signed-zero scores (sentencepiece's
    order of float32 bit patterns), chains of unused pieces (split again, 100 levels deep)."""
    import struct

    neg_nan = struct.unpack("<f", struct.pack("<I", 0xFFC00000))[0]
    pairs = ["ab", "bc", "ca", "ba", "cb", "▁a", "▁b", "▁c", "abc", "bca", "cab", "aa", "bb"]
    rng = random.Random(26)
    cases = []
    for scores in ([-5.0, -6.0], [math.nan, neg_nan, math.inf, -math.inf, 0.0, -0.0, -1.0]):
        for _ in range(30):
            model = tiny_model([(p, rng.choice(scores), 1) for p in pairs])
            texts = [
                "".join(rng.choice("abc d") for _ in range(rng.randint(1, 14))) for _ in range(30)
            ]
            cases.append((psp.model_data(model), texts))
    for length in (3, 100, 101, 150):
        chain = [("▁" + "a" * k, -float(k), 5) for k in range(2, length + 1)]
        model = tiny_model([("▁a", -0.5, 1), *chain])
        texts = ["a" * length, "a" * length + " " + "a" * 5, "a" * (length + 3), "ba"]
        cases.append((psp.model_data(model), texts))
    return cases


def fuzz_strings(n: int, seed: int = 7) -> list[str]:
    """``n`` seeded strings of words, white space, ``▁``, CJK, emoji, unknown code points."""
    rng = random.Random(seed)
    words = ["the", " the", "The", " THE", "hello", " world", "Hello", " don't", "n", "ing", "▁"]

    def code_point() -> str:
        c = rng.randrange(0x110000)
        return chr(0xFFFD if 0xD800 <= c <= 0xDFFF else c)

    def piece() -> str:
        kind = rng.randrange(12)
        if kind == 0:
            return rng.choice(FRAGMENTS)
        if kind in (1, 2):
            return rng.choice(words)
        if kind == 3:
            ws = " \t\n\r\u00a0\u3000\u2009\u2581\x00\ufeff"
            return "".join(rng.choice(ws) for _ in range(rng.randint(1, 12)))
        if kind == 4:
            return "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 8)))
        if kind == 5:
            return "".join(
                rng.choice("日本語漢字かなカナ한국어中文") for _ in range(rng.randint(1, 6))
            )
        if kind == 6:
            return "".join(chr(rng.randrange(0x20, 0x7F)) for _ in range(rng.randint(1, 10)))
        if kind == 7:
            return "".join(rng.choice("ÀéïõüçßøñÆœ") for _ in range(rng.randint(1, 5)))
        if kind == 8:
            return "".join(rng.choice(["\U0001f600", "\u200d", "\U0001f3fd", "\ufe0f", "❤"]))
        if kind == 9:
            return rng.choice(["\ud800", "\udfff", "\ud83d"]) if rng.random() < 0.25 else ""
        return "".join(code_point() for _ in range(rng.randint(1, 4)))  # mostly unknown: bytes

    return ["".join(piece() for _ in range(rng.randint(0, 14))) for _ in range(n)]


def hard_strings() -> list[str]:
    out = [
        "",
        " ",
        "  ",
        "   hello",
        "hello   ",
        "hello  world",
        " a  b   c    d ",
        "\t",
        "a\tb",
        "\t x",
        "hello\r\nworld\r\n",
        "a\rb\r",
        "\r\n\r\n",
        "a\nb",
        "\n\n\n",
        "\x00",
        "a\x00b",
        "\ufeff",
        "\ufeffhello",
        "x\ufeffy",
        "\u2581",
        "a\u2581b",
        "\u2581\u2581 x",
        "\u2581 \u2581",
        "a \u2581b",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "日本語のテキスト",
        "中文 和 English",
        "\U0001d11e",
        "\U000e0001",
        "\U0010ffff",
        "\u0378",
        "𒀀𒀁",
        "Hello world",
        "def f(x):\n    return x  # comment\n",
    ]
    for f in FRAGMENTS:
        out += [f, f"a{f}b", f * 3, f" {f} ", f"x{f}\n", f"  {f}", f"{f}  "]
    out += [  # lone surrogates: refused, as the Python package refuses them
        "\ud800",
        "a\udc00b",
        "\udfff\ud800",
        "\ud83d\ude00\ud83d",
        "\U0001f600 x \udbff",
    ]
    out += list(hostile_texts(2_000).values())
    return out


def corpora() -> dict[str, str]:
    from tokcourse.course.data import corpora as c

    texts = {"botchan": c.botchan_text(), "code": c.python_code(200_000)}
    for lang, messages in c.parallel_text().items():
        texts[f"parallel {lang}"] = "\n".join(messages)
    return texts


def all_strings() -> dict[str, list[str]]:
    """Every input, by group, each as the page sees it (see :func:`as_javascript_holds`)."""
    texts = corpora()
    groups = {
        "corpora": list(texts.values()),
        "botchan lines": texts["botchan"].split("\n"),
        "parallel messages": [
            m for k, v in texts.items() if k.startswith("parallel") for m in v.split("\n")
        ],
        "hard": hard_strings(),
        "fuzz": fuzz_strings(FUZZ_STRINGS),
    }
    return {k: [as_javascript_holds(s) for s in v] for k, v in groups.items()}


# ----------------------------------------------------------------------- the browser

RUNNER = Path(__file__).with_name("playground_sentencepiece_runner.js")

INFO_IDS = [0, 1, 2, 3, 13, 259, 28705, 22557, 31999]
WORKER_STRINGS = ["Hello world", "  x\u2581y \U0001f600\r\n", "日本語 text\x00"]


def step_samples() -> list[tuple[str, int, int]]:
    hello = "Hello world"
    return [(hello, 0, 5), (hello, 5, 11), ("x \U0001d11e!", 1, 5), ("", 0, 0)]


def run_page(tmp_path: Path, values: dict[str, object]) -> dict:
    """Write the site (data, JS, test page) into ``tmp_path`` and run it in Chromium once."""
    if CHROMIUM is None:
        missing_tool("chromium not installed (apt-get install chromium; .ci/run does it)")
    site = tmp_path / "site"
    (site / "playground" / "data").mkdir(parents=True)
    for file in ("core.js", "sentencepiece.js"):
        shutil.copy(PLAYGROUND / file, site / "playground" / file)
    for name, text in psp.scripts().items():
        (site / "playground" / "data" / f"{name}.js").write_text(text, encoding="utf-8")
    # json.dumps writes lone surrogates as \\udXXX escapes, which JavaScript reads back as such
    (site / "strings.js").write_text(
        "".join(f"const {k} = {json.dumps(v)};\n" for k, v in values.items()), encoding="utf-8"
    )
    shutil.copy(RUNNER, site / "runner.js")
    (site / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8">'
        '<script src="playground/core.js"></script>'
        '<script src="playground/sentencepiece.js"></script>'
        '<script src="strings.js"></script>'
        '</head><body><pre id="result">not run</pre><script src="runner.js"></script>'
        "</body></html>",
        encoding="utf-8",
    )
    from tests._cdp import page_result

    # Over the DevTools protocol, in real time (the page also waits for a Web Worker)
    result = page_result((site / "index.html").as_uri(), tmp_path / "profile")
    out = json.loads(result)
    assert "error" not in out, out["error"]
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> dict:
    """Everything the page found, with the inputs it got and the time the run took."""
    strings = all_strings()
    well_formed = [s for g in ("hard", "fuzz") for s in strings[g] if is_well_formed(s)]
    novel = strings["corpora"][0]
    speed_text = novel.encode("utf-8")[:100_000].decode("utf-8", "ignore")
    values = {
        "STRINGS": strings,
        "CONTROL_STRINGS": well_formed,
        "BOUNDARY_STRINGS": [*(s for s in well_formed if len(s) < 300), novel[:1500]],
        "BOTCHAN": novel,
        "SPEED_TEXT": speed_text,
        "STEP_SAMPLES": step_samples(),
        "INFO_IDS": INFO_IDS,
        "WORKER_STRINGS": WORKER_STRINGS,
        "HOSTILE": hostile_texts(HOSTILE_CHARS),
        "TINY": tiny_cases(),
    }
    t0 = time.perf_counter()
    out = run_page(tmp_path_factory.mktemp("sentencepiece"), values)
    out["inputs"] = values
    out["browser_run_s"] = time.perf_counter() - t0
    return out


def is_well_formed(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# ----------------------------------------------------------------------- offsets (the oracle)


def utf16_offsets(text: str) -> dict[int, int]:
    """UTF-8 byte offset -> UTF-16 offset, at every character boundary of ``text``."""
    table, b, u = {0: 0}, 0, 0
    for ch in text:
        b += len(ch.encode("utf-8"))
        u += 2 if ord(ch) > 0xFFFF else 1
        table[b] = u
    return table


def their_offsets(text: str) -> tuple[list[int], list[int], list[int]]:
    """ids, starts, ends as sentencepiece reports them (its byte offsets, in UTF-16 units).

    sentencepiece gives the bytes of one character except the last an empty span (begin ==
    end); each byte token here covers the character its bytes come from, as core.js asks.
    """
    pieces = theirs().encode(text, out_type="proto").pieces
    table = utf16_offsets(text)
    ids = [p.id for p in pieces]
    spans = [(p.begin, p.end) for p in pieces]
    byte = [ours().types[i] == 6 for i in ids]
    for i in range(len(spans) - 2, -1, -1):
        if byte[i] and byte[i + 1] and spans[i][0] == spans[i][1] == spans[i + 1][0]:
            spans[i] = spans[i + 1]
    return ids, [table[b] for b, _ in spans], [table[e] for _, e in spans]


def text_check(text: str, ids: list[int], starts: list[int], ends: list[int]) -> str | None:
    """Why the tokens' spans do not hold their text (None: they do): the spans tile the text;
    a piece is its span's text with spaces as "▁" (the dummy prefix aside); a run of byte
    tokens on one span is that span's UTF-8."""
    units = text.encode("utf-16-le")

    def span(s: int, e: int) -> str:
        return units[2 * s : 2 * e].decode("utf-16-le", "surrogatepass")

    pos, i = 0, 0
    while i < len(ids):
        s, e = starts[i], ends[i]
        if s != pos:
            return f"token {i} starts at {s}, the previous one ended at {pos}"
        piece = ours().pieces[ids[i]]
        if ours().types[ids[i]] == 6:
            j = i
            while j < len(ids) and (starts[j], ends[j]) == (s, e):
                j += 1
            got = bytes(int(ours().pieces[ids[k]][3:5], 16) for k in range(i, j))
            if got != span(s, e).encode("utf-8", "surrogatepass"):
                return f"byte tokens {i}..{j - 1}: {got!r} for {span(s, e)!r}"
            i = j
        else:
            want = span(s, e).replace(" ", SPACE)
            if piece != want and not (s == 0 and i == 0 and piece == SPACE + want):
                return f"token {i} {piece!r} spans {span(s, e)!r}"
            i += 1
        pos = e
    return None if pos == len(units) // 2 else f"the tokens end at {pos} of {len(units) // 2}"


# ----------------------------------------------------------------------- the browser tests


def test_ids_are_sentencepieces(browser):
    """Id for id against sentencepiece, and a lone surrogate refused as the package does."""
    sp = theirs()
    counts, bad = {}, []
    refused = 0
    for group, strings in browser["inputs"]["STRINGS"].items():
        got = browser["groups"][group]
        assert len(got) == len(strings)
        counts[group] = len(strings)
        for s, r in zip(strings, got, strict=True):
            if not is_well_formed(s):
                with pytest.raises(ValueError) as err:
                    ours().encode(s)
                with pytest.raises(RuntimeError):
                    sp.encode(s)
                assert r.get("error") == str(err.value), (repr(s), r)
                assert r["name"] == "LoneSurrogateError"
                refused += 1
            elif r.get("ids") != sp.encode(s):
                bad.append(s)
    assert not bad, [repr(s)[:120] for s in bad[:5]]
    assert sum(map(is_well_formed, browser["inputs"]["STRINGS"]["fuzz"])) >= 2_000
    assert refused > 100
    assert counts["botchan lines"] > 3_000 and counts["parallel messages"] > 3_000


def test_offsets_are_sentencepieces_and_hold_the_text(browser):
    bad = []
    for group, strings in browser["inputs"]["STRINGS"].items():
        for s, r in zip(strings, browser["groups"][group], strict=True):
            if "error" in r:
                continue
            ids, starts, ends = their_offsets(s)
            assert r["ids"] == ids
            if (r["starts"], r["ends"]) != (starts, ends):
                bad.append((repr(s)[:80], "not sentencepiece's offsets"))
            elif why := text_check(s, r["ids"], r["starts"], r["ends"]):
                bad.append((repr(s)[:80], why))
    assert not bad, bad[:5]


def test_the_whole_text_as_one_chunk_gives_the_same_ids(browser):
    assert browser["wholeDiffers"] == []


def test_safe_boundary_is_honest(browser):
    found = browser["boundary"]
    assert found["violationCount"] == 0, found["violations"][:3]
    assert found["checked"] > 5_000 and found["unsafe"] > 5_000


def test_long_hostile_texts_are_exact_and_quick(browser):
    """100,000 spaces, one letter, newlines, CJK ...: sentencepiece's ids, each in under 2 s
    (the heap keeps a long chunk n log n; a quadratic loop takes minutes here)."""
    for name, text in browser["inputs"]["HOSTILE"].items():
        got = browser["hostile"][name]
        assert got["ids"] == theirs().encode(text), name
        assert got["ms"] < 2_000, (name, got["ms"])
        # the stepper too: every merge of the first chunk, as quickly
        parts, steps, ids = got["steps"]
        assert got["steps_ids_ok"] and 0 < parts - steps <= ids, name  # bytes: more ids
        assert got["steps_ms"] < 2_000, (name, got["steps_ms"])


def test_ties_odd_scores_and_unused_pieces_as_sentencepiece(browser):
    import sentencepiece as spm

    tiny = browser["inputs"]["TINY"]
    assert len(browser["tiny"]) == len(tiny) == 64
    resegmented = 0
    for (data, texts), got in zip(tiny, browser["tiny"], strict=True):
        pieces, scores, types = psp.unpack(data)
        proto = tiny_model([(p, s, t) for p, s, t in zip(pieces, scores, types, strict=True)][263:])
        sp = spm.SentencePieceProcessor(model_proto=proto)
        assert got == [sp.encode(t) for t in texts], texts
        resegmented += 5 in types and any(len(ids) > 2 for ids in got)
    assert resegmented == 4


def test_merge_steps_replay_to_the_chunk_ids(browser):
    steps = browser["steps"]["botchan"]
    assert steps["failures"] == [] and steps["words"] > 40_000 and steps["steps"] > 100_000
    hello, world, clef, empty = browser["steps"]["samples"]
    assert hello["parts"] == list("▁Hello") and hello["ids"] == theirs().encode("Hello")
    assert world["parts"] == list("▁world") and world["ids"] == [1526]
    assert [s["id"] for s in hello["steps"]][-1] == 22557 and hello["note"] == ""
    assert clef["parts"] == ["▁", "\U0001d11e", "!"] and "U+1D11E" in clef["note"]
    assert "byte fallback" in clef["note"] and clef["ids"] == theirs().encode("x \U0001d11e!")[1:]
    assert empty == {"parts": [], "units": "characters", "steps": [], "ids": [], "note": ""}
    assert hello["units"] == "characters"  # the stepper draws the parts as text, not bytes
    assert browser["steps"]["surrogate"].startswith("text has no UTF-8 form: U+D800")


def teaching_steps(parts: list[str]) -> list[tuple[int, float]]:
    """``merge_by_score``'s loop (tokcourse.sentencepiece_bpe), recording (at, score)."""
    scores = {p: ours().scores[i] for p, i in ours()._normal.items()}
    parts, steps = list(parts), []
    while True:
        best, where = None, -1
        for i in range(len(parts) - 1):
            score = scores.get(parts[i] + parts[i + 1])
            if score is not None and (best is None or score > best):
                best, where = score, i
        if best is None:
            return steps
        steps.append((where, best))
        parts[where : where + 2] = [parts[where] + parts[where + 1]]


def test_merge_steps_are_the_teaching_loops(browser):
    for sample in browser["steps"]["samples"]:
        got = [(s["at"], s["score"]) for s in sample["steps"]]
        assert got == teaching_steps(sample["parts"])
        for s in sample["steps"]:
            assert s["score"] == ours().scores[s["id"]]


def control_wrong(browser: dict) -> dict[str, int]:
    """How many strings each control encoder gets wrong."""
    strings = browser["inputs"]["CONTROL_STRINGS"]
    return {
        name: sum(ids != theirs().encode(s) for s, ids in zip(strings, got, strict=True))
        for name, got in browser["control"].items()
    }


def test_controls_disagree(browser):
    """The comparison can fail: a wrong encoder disagrees with sentencepiece on many strings."""
    wrong = control_wrong(browser)
    strings = browser["inputs"]["CONTROL_STRINGS"]
    nonempty = sum(1 for s in strings if s)
    assert wrong["no dummy prefix"] > nonempty // 2, wrong
    assert wrong["merge order reversed"] > nonempty // 8, wrong


def test_the_interface(browser):
    assert browser["registered"] == {
        "label": "Mistral 7B v1",
        "files": ["mistral_v1"],
        "name": "mistral_v1",
        "vocabSize": 32_000,
    }
    info = dict(zip(INFO_IDS, browser["info"], strict=True))
    assert info[0] == {"bytes": "", "piece": "<unk>", "kind": "unknown"}
    assert info[1] == {"bytes": "", "piece": "<s>", "kind": "special"}
    assert info[3] == {"bytes": "\x00", "piece": "<0x00>", "kind": "byte"}
    assert info[13] == {"bytes": "\n", "piece": "<0x0A>", "kind": "byte"}
    assert info[259]["kind"] == "normal" and info[259]["piece"] == theirs().id_to_piece(259)
    assert info[28705] == {"bytes": " ", "piece": SPACE, "kind": "normal"}
    assert info[22557] == {"bytes": " Hello", "piece": "▁Hello", "kind": "normal"}
    last = theirs().id_to_piece(31999)
    assert info[31999]["bytes"] == last.replace(SPACE, " ").encode("utf-8").decode("latin-1")
    assert (
        browser["worker"] == browser["workerHere"] == [theirs().encode(s) for s in WORKER_STRINGS]
    )


def sentencepiece_ms(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        theirs().encode(text)
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def test_zz_record_the_speeds(browser):
    """Last (by name): the artifact, once the id tests above have passed."""
    speed_text = browser["inputs"]["SPEED_TEXT"]
    strings = browser["inputs"]["STRINGS"]
    report = {
        "generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "browser": browser["userAgent"],
        "strings": {
            "corpora": {k: len(v) for k, v in corpora().items()},
            **{g: len(v) for g, v in strings.items() if g != "corpora"},
            "fuzz well-formed": sum(map(is_well_formed, strings["fuzz"])),
        },
        "tokens": sum(len(r.get("ids", [])) for g in browser["groups"].values() for r in g),
        "mismatches": 0,
        "control: strings a wrong encoder gets wrong": control_wrong(browser),
        "control strings": len(browser["inputs"]["CONTROL_STRINGS"]),
        "safeBoundary edits checked": browser["boundary"]["checked"],
        "mergeSteps words of Botchan": browser["steps"]["botchan"]["words"],
        "speed text bytes": len(speed_text.encode("utf-8")),
        "timings": {**browser["timings"], "sentencepiece_ms": sentencepiece_ms(speed_text)},
        "hostile texts (chars): browser ms": {
            f"{k} ({len(v)})": round(browser["hostile"][k]["ms"], 1)
            for k, v in browser["inputs"]["HOSTILE"].items()
        },
        "browser run s": round(browser["browser_run_s"], 1),
        "data file bytes": len(psp.scripts()["mistral_v1"]),
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / "playground-sentencepiece.json"
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    assert report["timings"]["encode_warm_ms"] > 0
