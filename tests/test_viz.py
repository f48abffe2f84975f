"""Tests for the token visualizer (tokcourse.course.viz)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
import regex
import tiktoken

from tokcourse.course.chunks import alternatives, explain, show_chunks
from tokcourse.course.viz import (
    PALETTE,
    TokenView,
    show_tokens,
    token_spans,
    visible,
)
from tokcourse.patterns import GPT2_SPLIT_PATTERN, SPLIT_PATTERNS, split
from tokcourse.unicode_pin import pin_unicode

# "gpt2" needs the offline assets; r50k_base holds the same ranks and is always available.
ENCODINGS = ("r50k_base", "cl100k_base", "o200k_base")

HARD_TEXTS = [
    "",
    "Hello world",
    "hello ",
    "  leading and trailing  \n",
    "<script>alert('x')</script> &amp; \"quotes\" 'apostrophes'",
    "안녕하세요 👋 hello world 🤗",
    "def f(x):\n\tif x:\n        return 12345\r\n",
    "👨‍👩‍👧 zero\u200bwidth\u00a0nbsp \x00\x07 ctrl",
    "a <|endoftext|> b <|fim_prefix|>",
    "Ünïcödé ñ 中文字符 العربية हिन्दी",
    "x" * 300,
]


class _TokenCounter(HTMLParser):
    """Counts spans whose class list holds "tok"; collects their titles and styles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[dict[str, str | None]] = []
        self.open_tags: list[str] = []
        self.text: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag != "br":
            self.open_tags.append(tag)
        a = dict(attrs)
        if tag == "span" and "tok" in (a.get("class") or "").split():
            self.tokens.append(a)

    def handle_endtag(self, tag):
        assert self.open_tags and self.open_tags[-1] == tag, f"unbalanced </{tag}>"
        self.open_tags.pop()

    def handle_data(self, data):
        if "style" not in self.open_tags:
            self.text.append(data)


def _parse(view: TokenView) -> _TokenCounter:
    parser = _TokenCounter()
    parser.feed(view._repr_html_())
    parser.close()
    assert parser.open_tags == [], f"unclosed tags: {parser.open_tags}"
    return parser


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("text", HARD_TEXTS)
def test_spans_reassemble_bytes_and_match_tiktoken(text, name):
    enc = tiktoken.get_encoding(name)
    spans = token_spans(text, name)
    assert b"".join(s.bytes for s in spans) == text.encode("utf-8")
    assert [s.id for s in spans] == enc.encode(text, allowed_special="all")
    # offsets are contiguous and consistent with the bytes
    pos = 0
    for i, s in enumerate(spans):
        assert (s.index, s.start, s.end) == (i, pos, pos + len(s.bytes))
        assert s.bytes == enc.decode_single_token_bytes(s.id)
        pos = s.end
    # the display parts are the token's bytes, split into decodable text and stray bytes
    for s in spans:
        rebuilt = b"".join(p if isinstance(p, bytes) else p.encode("utf-8") for p in s.parts)
        assert rebuilt == s.bytes


def test_accepts_encoding_objects_and_names_alike():
    enc = tiktoken.get_encoding("cl100k_base")
    by_name = token_spans("Hello world!", "cl100k_base")
    by_object = token_spans("Hello world!", enc)
    assert by_name == by_object
    assert [s.id for s in by_name] == enc.encode("Hello world!")


def test_partial_utf8_tokens_are_shown_as_hex_bytes():
    # GPT-2 splits the waving hand (F0 9F 91 8B) into F0 9F 91 + 8B: neither half is valid UTF-8.
    spans = token_spans("👋", "r50k_base")
    assert [s.bytes for s in spans] == [b"\xf0\x9f\x91", b"\x8b"]
    assert [s.display for s in spans] == ["⟨F0 9F 91⟩", "⟨8B⟩"]
    assert all(s.is_partial for s in spans)
    assert all(s.chars == "👋" for s in spans)
    assert "U+1F44B" in spans[0].describe()
    # a token that mixes a space with a stray byte keeps both, in order
    mixed = token_spans(" 안", "r50k_base")[0]
    assert mixed.bytes == b" \xec" and mixed.parts == (" ", b"\xec")
    assert mixed.display == "·⟨EC⟩"
    # a whole character is text, not bytes
    whole = token_spans("안녕", "o200k_base")
    assert not any(s.is_partial for s in whole)


def test_partial_tokens_are_styled_differently_in_html():
    html = show_tokens("👋", "r50k_base")._repr_html_()
    assert html.count('class="raw"') == 2
    assert "⟨F0 9F 91⟩" in html and "⟨8B⟩" in html
    assert "\ufffd" not in html  # never the replacement character


def test_whitespace_markers():
    assert visible(" \t\n\r") == "·→↵\n␍"
    assert visible("a\u200bb\u00a0c") == "a⟨U+200B⟩b⟨U+00A0⟩c"
    spans = token_spans("hello \n\tworld", "cl100k_base")
    assert "".join(s.display for s in spans) == "hello·↵\n→world"
    html = show_tokens("a b\tc\nd", "cl100k_base")._repr_html_()
    assert '<span class="ws">·</span>' in html
    assert '<span class="ws">→</span>' in html
    assert '<span class="ws">↵</span><br>' in html  # newline marker, then a real line break
    # the plain-text view breaks the line after the marker too
    assert "↵\n" in repr(show_tokens("a\nb", "cl100k_base"))


def test_html_escapes_everything():
    text = '<script>alert(1)</script> &amp; "q" <|endoftext|>'
    view = show_tokens(text, ENCODINGS, allowed_special="none")
    parser = _parse(view)
    assert "script" not in parser.tags  # no live <script> element
    raw = view._repr_html_()
    assert "<script" not in raw and "&lt;" in raw
    # the text a browser shows (markers aside) holds the input literally, once per encoding
    shown = "".join(parser.text).replace("·", " ")
    assert shown.count(text) == len(ENCODINGS)
    for row in view.rows:
        assert "".join(s.display for s in row.spans).replace("·", " ") == text
    assert shown.count("&amp;") == len(ENCODINGS)
    # tooltips are escaped attributes that still carry the bytes
    titles = [t["title"] for t in parser.tokens]
    assert any("b'<'" in (t or "") or "b' <'" in (t or "") for t in titles)


@pytest.mark.parametrize("text", HARD_TEXTS)
def test_html_parses_with_one_span_per_token(text):
    view = show_tokens(text, ENCODINGS, show_ids=True)
    parser = _parse(view)
    expected = sum(len(row.spans) for row in view.rows)
    assert len(parser.tokens) == expected
    ids = [s.id for row in view.rows for s in row.spans]
    titles = [t["title"] or "" for t in parser.tokens]
    assert all(f"id {i} " in title for i, title in zip(ids, titles, strict=True))
    for row in view.rows:
        assert row.name in view._repr_html_()


def test_adjacent_tokens_have_different_colours():
    view = show_tokens("one two three four five six seven eight nine ten eleven", "cl100k_base")
    parser = _parse(view)
    colours = [
        re.search(r"background:(#[0-9a-f]{6})", t["style"] or "").group(1) for t in parser.tokens
    ]
    assert len(colours) == len(view.rows[0].spans) > len(PALETTE)
    assert all(a != b for a, b in zip(colours, colours[1:], strict=False))
    assert set(colours) <= set(PALETTE)


def test_special_tokens():
    text = "Hello <|endoftext|> world"
    spans = token_spans(text, "r50k_base")
    assert [s.id for s in spans] == [15496, 220, 50256, 995]
    assert [s.special for s in spans] == [False, False, True, False]
    assert spans[2].display == "<|endoftext|>"
    parser = _parse(show_tokens(text, "r50k_base"))
    classes = [t["class"] for t in parser.tokens]
    assert classes.count("tok special") == 1
    # not allowed: the same text is plain text, split into ordinary tokens
    plain = token_spans(text, "r50k_base", allowed_special="none")
    assert not any(s.special for s in plain)
    assert len(plain) > len(spans)
    enc = tiktoken.get_encoding("cl100k_base")
    only_fim = token_spans("<|endoftext|><|fim_prefix|>", enc, allowed_special={"<|fim_prefix|>"})
    assert [s.special for s in only_fim][-1] is True
    assert not any(s.special for s in only_fim[:-1])


def _luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a #rrggbb colour."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _css_colour(html_text: str, selector: str) -> str:
    rule = re.search(re.escape(selector) + r"\{[^}]*?color:(#[0-9a-fA-F]{6})", html_text)
    assert rule, f"no colour for {selector}"
    return rule.group(1)


def test_inline_ids_are_readable_on_every_token_background():
    """WCAG AA (4.5:1) for the ids that show_ids prints, on dark special tokens too."""
    view = show_tokens("a <|endoftext|> b", "cl100k_base", show_ids=True)
    page = view._repr_html_()
    scope = re.search(r'class="(tkv-[0-9a-f]+)"', page).group(1)
    special_bg = re.search(r'class="tok special" style="background:(#[0-9a-f]{6})', page)
    on_special = _css_colour(page, f".{scope} .tok.special .tid")
    on_ordinary = _css_colour(page, f".{scope} .tid")
    assert _contrast(on_special, special_bg.group(1)) >= 4.5
    for background in PALETTE:
        assert _contrast(on_ordinary, background) >= 4.5, background
    # the rule for special ids is more specific than the general one, so it wins
    assert f".{scope} .tok.special .tid" in page and 'class="tid"' in page
    assert _contrast("#555555", "#3b3b58") < 4.5  # the old grey on the dark box: unreadable


def test_bad_allowed_special_names_the_value():
    with pytest.raises(ValueError, match="'<|endoftext|>'"):
        token_spans("x", "r50k_base", allowed_special="<|endoftext|>")


def test_unknown_encoding_lists_valid_names():
    with pytest.raises(ValueError, match="'gtp2'") as err:
        show_tokens("x", ["cl100k_base", "gtp2"])
    assert "cl100k_base" in str(err.value) and "o200k_base" in str(err.value)
    with pytest.raises(TypeError, match="42"):
        token_spans("x", 42)
    with pytest.raises(ValueError, match="at least one"):
        show_tokens("x", [])


def test_counts_header_and_plain_repr():
    view = show_tokens("Hello world", ["r50k_base", "o200k_base"], show_ids=True)
    assert view.counts == {"r50k_base": 2, "o200k_base": 2}
    text = repr(view)
    assert text.splitlines()[0] == "r50k_base: 2 tokens, 5.50 chars/token"
    assert "Hello[15496]│·world[995]" in text
    assert "2 tokens" in view._repr_html_()
    empty = show_tokens("", "cl100k_base")
    assert empty.counts == {"cl100k_base": 0} and "(no tokens)" in empty._repr_html_()


def test_css_is_scoped_and_self_contained():
    html = show_tokens("Hello", "cl100k_base")._repr_html_()
    scope = re.match(r'<div class="(tkv-[0-9a-f]+)">', html).group(1)
    css = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    selectors = re.findall(r"([^{}]+)\{", css)
    assert selectors and all(sel.strip().startswith("." + scope) for sel in selectors)
    assert not re.search(r"https?://|<script|@import|url\(", html)
    # different content, different scope; same content, same html (stable builds)
    assert html == show_tokens("Hello", "cl100k_base")._repr_html_()
    assert scope not in show_tokens("Bye", "cl100k_base")._repr_html_()


class _ToyTokenizer:
    """The shape of the course's own tokenizers: vocab, special_tokens, and an ``encode`` with
    tiktoken's keyword-only special-token arguments (disallowed special text raises)."""

    def __init__(self) -> None:
        self.vocab = {i: bytes([i]) for i in range(256)}
        self.vocab[256] = b"ab"
        self.special_tokens = {"<|end|>": 300}
        self.calls: list[tuple[object, object]] = []

    def encode(self, text: str, *, allowed_special=frozenset(), disallowed_special="all"):
        self.calls.append((allowed_special, disallowed_special))
        allowed = allowed_special == "all" or "<|end|>" in allowed_special
        if not allowed and disallowed_special == "all" and "<|end|>" in text:
            raise ValueError("disallowed special token")
        out: list[int] = []
        for n, chunk in enumerate(text.split("<|end|>") if allowed else [text]):
            if n:
                out.append(300)
            data = chunk.encode()
            i = 0
            while i < len(data):
                if data[i : i + 2] == b"ab":
                    out.append(256)
                    i += 2
                else:
                    out.append(data[i])
                    i += 1
        return out


def test_own_tokenizer_with_vocab():
    tok = _ToyTokenizer()
    spans = token_spans("abc<|end|>é", tok)
    assert [s.id for s in spans] == [256, 99, 300, 0xC3, 0xA9]
    assert [s.special for s in spans] == [False, False, True, False, False]
    assert [s.display for s in spans] == ["ab", "c", "<|end|>", "⟨C3⟩", "⟨A9⟩"]
    assert tok.calls == [("all", ())]
    view = show_tokens("abc", [tok, "cl100k_base"])
    assert view.counts == {"_ToyTokenizer": 2, "cl100k_base": 1}
    plain = token_spans("x<|end|>", tok, allowed_special="none")  # ordinary text, no error
    assert tok.calls[-1] == (set(), ()) and len(plain) == 8 and not any(s.special for s in plain)


def test_tokens_that_do_not_reassemble_are_rejected():
    tok = _ToyTokenizer()
    tok.vocab[256] = b"xy"  # vocab disagrees with what encode produced
    with pytest.raises(ValueError, match="does not match the input"):
        token_spans("ab", tok)


def test_course_tokenizer_matches_tiktoken():
    pretrained = pytest.importorskip("tokcourse.pretrained")
    tok = pretrained.GPT2Tokenizer()
    text = "Hello <|endoftext|> 안녕 👋\n    x = 12345"
    for allowed in ("all", "none"):
        ours = token_spans(text, tok, allowed_special=allowed)
        theirs = token_spans(text, "r50k_base", allowed_special=allowed)
        assert ours == theirs


@pytest.mark.parametrize(
    "char", ["\x00", "\x7f", "\x80", "\u07ff", "\u0800", "\uffff", "\U00010000", "\U0010ffff"]
)
def test_split_utf8_keeps_every_valid_character_whole(char):
    from tokcourse.course.viz import _split_utf8

    data = ("a" + char + "b").encode()
    assert _split_utf8(data) == ("a" + char + "b",)
    # any strict prefix of a multi-byte character is stray bytes, not text
    raw = char.encode()
    for cut in range(1, len(raw)):
        assert _split_utf8(raw[:cut]) == (raw[:cut],)


@pytest.mark.parametrize(
    "data",
    [b"\xc0\x80", b"\xed\xa0\x80", b"\xf5\x80\x80\x80", b"\x80", b"\xf4\x90\x80\x80", b"\xff"],
)
def test_split_utf8_never_decodes_invalid_sequences(data):
    from tokcourse.course.viz import _split_utf8

    assert _split_utf8(b"x" + data + b"y") == ("x", data, "y")


def test_default_encodings_are_gpt2_gpt4_gpt4o():
    view = show_tokens("Hello world")
    assert list(view.counts) == ["gpt2", "cl100k_base", "o200k_base"]
    assert [s.id for s in view.rows[0].spans] == [15496, 995]


# --- show_chunks: the split before BPE (chapter 04) ------------------------------------------


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_alternatives_rebuild_the_pattern(name):
    parts = alternatives(SPLIT_PATTERNS[name])
    assert "|".join(parts) == SPLIT_PATTERNS[name]
    assert len(parts) == {"gpt2": 7, "cl100k_base": 8, "o200k_base": 7}[name]
    assert all(regex.compile(part) for part in parts)  # each one a regex on its own


def test_alternatives_ignore_bars_in_groups_classes_and_escapes():
    assert alternatives(r"a|(b|c)|[|]|\||d") == ["a", "(b|c)", "[|]", r"\|", "d"]
    assert alternatives(r"[]|]|[^]|]|(?:x|(y|z))") == ["[]|]", "[^]|]", "(?:x|(y|z))"]
    assert alternatives("abc") == ["abc"] and alternatives("a|") == ["a", ""]
    with pytest.raises(TypeError, match="must be a str"):
        alternatives(None)


@pytest.mark.parametrize("text", HARD_TEXTS)
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_explain_names_the_alternative_that_matched_each_chunk(text, name):
    found = explain(text, name)
    assert [chunk for _, chunk in found.chunks] == split(text, SPLIT_PATTERNS[name])
    pinned, position = pin_unicode(text), 0
    for number, chunk in found.chunks:
        tried = [regex.compile(a).match(pinned, position) for a in found.alternatives[:number]]
        assert all(m is None or m.end() == position for m in tried[:-1])  # earlier ones fail
        assert tried[-1].end() == position + len(chunk)  # the named one makes the chunk
        position += len(chunk)


def test_explain_counts_groups_inside_alternatives():
    found = explain("ab12 c", r"(a)(b)|(\d)+|\s|\w")
    assert found.chunks == ((1, "ab"), (2, "12"), (3, " "), (4, "c"))
    assert str(found).splitlines()[0] == "  1  'ab'"
    with pytest.raises(ValueError, match="skips"):
        explain("a!", r"a")


@pytest.mark.parametrize("text", HARD_TEXTS)
def test_chunks_are_the_split_and_one_span_each(text):
    names = ["gpt2", "cl100k_base", "o200k_base"]
    view = show_chunks(text, names)
    assert [label for label, _ in view.rows] == names
    for label, chunks in view.rows:
        assert list(chunks) == split(text, SPLIT_PATTERNS[label])
        assert "".join(chunks) == text
    parser = _parse(view)
    assert len(parser.tokens) == sum(view.counts.values())
    shown = "".join(parser.text)
    for char, marker in (" ", "·"), ("\n", "↵"), ("\t", "→"):
        assert (marker in shown) == (char in text)


def test_chunks_accept_names_patterns_and_labels():
    text = "a   b"
    assert show_chunks(text, "gpt2").counts == {"gpt2": 3}
    assert show_chunks(text, GPT2_SPLIT_PATTERN).counts == {"pattern": 3}
    by_label = show_chunks(text, {"GPT-2": "gpt2", "words": r"\S+|\s+"})
    assert by_label.rows == (("GPT-2", ("a", "  ", " b")), ("words", ("a", "   ", "b")))
    assert str(by_label).splitlines() == ["GPT-2: 3 chunks", "  a│··│·b", "words: 3 chunks",
                                          "  a│···│b"]  # fmt: skip


def test_chunks_refuse_bad_input_by_name():
    with pytest.raises(ValueError, match=r"skips 'b'"):
        show_chunks("ab", r"a")
    with pytest.raises(ValueError, match="patterns is empty"):
        show_chunks("ab", [])
    with pytest.raises(TypeError, match="a pattern must be a str"):
        show_chunks("ab", [None])
    with pytest.raises(TypeError, match="text must be a str"):
        show_chunks(b"ab", "gpt2")


def test_chunk_html_is_escaped_scoped_and_coloured():
    text = "<b>&amp;</b> one two three four five six seven eight nine ten"
    html = show_chunks(text, "gpt2")._repr_html_()
    assert "<b>" not in html.replace("<b>gpt2</b>", "") and "&lt;" in html and "&amp;" in html
    assert not re.search(r"https?://|<script|@import|url\(", html)
    parser = _parse(show_chunks(text, "gpt2"))
    colours = [re.search(r"background:(#[0-9a-f]{6})", t["style"]).group(1) for t in parser.tokens]
    assert len(colours) > len(PALETTE) and all(
        a != b for a, b in zip(colours, colours[1:], strict=False)
    )
    assert all(t["title"].startswith(f"chunk {i} · ") for i, t in enumerate(parser.tokens))
    assert html == show_chunks(text, "gpt2")._repr_html_()  # stable for the book's builds
