"""The capstone's pipeline check: every stage of the minbpe path, run with the student's code.

In chapter 12 the student builds a GPT-4-style tokenizer class, after minbpe's exercise:
train, encode, decode, save and load, export to tiktoken, GPT-4's tables loaded into it, and
Mistral 7B's SentencePiece ids.
Each method calls one stage function the student writes (:mod:`.capstone_steps` holds the
course's answers). :func:`run_pipeline` takes the student's functions, runs each stage's
exercise checks quietly, then (for the stages that join several functions) an end-to-end
test with them, and prints one line per stage:

* ✅ the stage passed with the student's own code;
* ⏳ a function is still a stub; ↩️ a function is the course's own (a check handed it back),
  which is never congratulated, not even by an end-to-end test that uses it;
* ❌ a check or the end-to-end test failed; the check's own report follows, indented.

Every stage runs, so one report shows all that is left to do; the last line names the first
stage that did not pass. The result is a :class:`PipelineReport`.

In the book build every function is untouched (a stub's check hands back the course's), so a
report would only say so at every stage: the cell prints a neutral summary instead, one line on
what the cell does in the reader's copy and one line per stage on what it checks
(:meth:`PipelineReport.book_summary`).
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tokcourse import bpe, patterns, pretrained
from tokcourse.course import check
from tokcourse.course.data import corpora
from tokcourse.course.exercises import is_course_code, run_check
from tokcourse.course.plotting import in_book_build
from tokcourse.patterns import GPT4_SPLIT_PATTERN

__all__ = [
    "FUNCTIONS",
    "STAGES",
    "PipelineReport",
    "Stage",
    "StageResult",
    "corpus",
    "run_pipeline",
    "train_and_held_out",
]

#: Merged tokens of the end-to-end tests: trained on a sample, or cut from cl100k's table.
TRAINED_MERGES = 200
STUDENT_MERGES = 40  # trained with the student's train_on_chunks: their speed, keep it small
IDENTITY = tuple(range(256))
CL100K_PREFIX = 3000


@dataclass(frozen=True)
class Stage:
    """One stage: the exercises it checks, and an optional end-to-end test of them together.

    ``joint(functions)`` returns ``(problem, summary)``: a problem is a sentence saying what
    went wrong (``None`` when all went right), the summary says what was compared. ``uses``
    names the functions the joint test runs that must be the student's own (beyond the
    stage's exercises, which its checks already judged). ``joint_does`` says in a few words
    what the joint test does, for the book's summary.
    """

    name: str
    exercises: tuple[str, ...]
    joint: Callable[[dict[str, Callable]], tuple[str | None, str]] | None = None
    uses: tuple[str, ...] = ()
    joint_does: str = ""

    def does(self) -> str:
        """What the stage checks, in words.

        >>> Stage("decode", ("shuffled_vocab", "decode_with_specials")).does()
        'checks shuffled_vocab and decode_with_specials'
        """
        names = list(self.exercises)
        parts = []
        if names:
            listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            parts.append(f"checks {listed}")
        if self.joint_does:
            parts.append(self.joint_does)
        return ", then ".join(parts)


@dataclass(frozen=True)
class StageResult:
    """How one stage went: ``status`` is "passed", "not implemented", "course code" or
    "failed"; ``message`` is the indented detail printed under its line."""

    number: int
    stage: Stage
    status: str
    message: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def untouched(self) -> bool:
        """The student's function is still a stub, or a name holds the course's."""
        return self.status in ("not implemented", "course code")

    def line(self) -> str:
        mark = {"passed": "✅", "not implemented": "⏳", "course code": "↩️"}.get(self.status, "❌")
        return f"{mark} stage {self.number}, {self.stage.name}: {self.message}"


@dataclass(frozen=True)
class PipelineReport:
    """Every stage's result, in order."""

    stages: tuple[StageResult, ...]

    @property
    def first_failure(self) -> StageResult | None:
        """The first stage that did not pass, or ``None`` when every stage did."""
        return next((s for s in self.stages if not s.passed), None)

    @property
    def passed(self) -> bool:
        return self.first_failure is None

    def book_summary(self) -> str:
        """What the rendered book shows: what the cell does in a reader's copy, stage by stage."""
        lines = [BOOK_PAGE_NOTE.format(n=len(self.stages))]
        lines += [f"  stage {s.number}, {s.stage.name}: {s.stage.does()}." for s in self.stages]
        return "\n".join(lines)

    def __str__(self) -> str:
        lines = [s.line() for s in self.stages]
        first = self.first_failure
        if first is None:
            lines.append(f"All {len(self.stages)} stages pass with your code: you built it.")
        else:
            lines.append(f"First stage to work on: stage {first.number}, {first.stage.name}.")
        return "\n".join(lines)


#: The first line of the book's summary (:meth:`PipelineReport.book_summary`).
BOOK_PAGE_NOTE = (
    "In your copy this cell runs the {n} stages with your functions and says which ones pass; "
    "here there is nothing of yours to check. The stages:"
)


# --- the corpus a student chooses -----------------------------------------------------------

#: How much of the Python sources ``corpus("python")`` reads (the whole release is 2.7 MB).
PYTHON_BYTES = 400_000


def corpus(name: str) -> str:
    """The text of a corpus: ``"botchan"`` (the novel), ``"python"`` (Sphinx's Python
    sources, the first :data:`PYTHON_BYTES`) or a language code of the parallel text (every
    message of Sphinx translated into it, one per line).

    >>> corpus("klingon")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown corpus 'klingon': use 'botchan', 'python' or a language code ...
    """
    if not isinstance(name, str):
        raise TypeError(f"the corpus name must be a str, got {type(name).__name__}: {name!r}")
    if name == "botchan":
        return corpora.botchan_text()
    if name == "python":
        return corpora.python_code(max_bytes=PYTHON_BYTES)
    try:
        return "\n".join(corpora.parallel_text([name], min_messages=1)[name])
    except (ValueError, KeyError, OSError):
        raise ValueError(
            f"unknown corpus {name!r}: use 'botchan', 'python' or a language code of the "
            f"parallel text such as {', '.join(corpora.DEFAULT_PARALLEL_LANGS)}"
        ) from None


def train_and_held_out(text: str, held_out_share: float = 0.2) -> tuple[str, list[str]]:
    r"""The first part of ``text`` to train on, and the rest as held-out non-empty lines.

    The cut falls at a line break, so no line is in both parts.

    >>> train_and_held_out("a\nb\nc\nd\ne", 0.4)
    ('a\nb\n', ['c', 'd', 'e'])
    """
    if not 0 < held_out_share < 1:
        raise ValueError(f"held_out_share must be between 0 and 1, got {held_out_share!r}")
    cut = text.rfind("\n", 0, round(len(text) * (1 - held_out_share))) + 1
    return text[:cut], [line for line in text[cut:].splitlines() if line]


# --- the samples the end-to-end tests use ------------------------------------------------------


@cache
def _samples() -> tuple[str, tuple[str, ...]]:
    """A training sample of the novel and held-out lines from a later chapter of it."""
    novel = corpora.botchan_text()
    start = novel.index("CHAPTER I")
    train = novel[start : start + 12_000]
    held_out = [line for line in novel[start + 60_000 : start + 75_000].splitlines() if line]
    return train, tuple(held_out)


def _compare(
    lines: Sequence[str], ours: Callable[[str], list[int]], theirs: Callable[[str], list[int]]
) -> tuple[str | None, int]:
    """The first line where two encoders differ (as a problem), and the tokens compared."""
    n_tokens = 0
    for line in lines:
        a, b = ours(line), theirs(line)
        if a != b:
            return f"on {line!r:.80} yours gives {a[:12]}..., the library {b[:12]}...", n_tokens
        n_tokens += len(b)
    return None, n_tokens


def _encoder(fns: dict[str, Callable], merges: dict, shuffle: Sequence[int]):
    """Your encoder: GPT-4's split, then your encode_chunk on each chunk."""

    def encode(line: str) -> list[int]:
        chunks = patterns.split(line)
        return [i for c in chunks for i in fns["encode_chunk"](c.encode("utf-8"), merges, shuffle)]

    return encode


def _round_trip_joint(fns: dict[str, Callable]) -> tuple[str | None, str]:
    """Train on the sample with your train_on_chunks, encode the held-out lines with your
    encode_chunk, and decode them back with your shuffled_vocab and decode_with_specials."""
    train, held_out = _samples()
    merges = fns["train_on_chunks"](Counter(patterns.split(train)), 256 + STUDENT_MERGES)
    expected = bpe.train_on_chunks(patterns.split(train), 256 + STUDENT_MERGES)
    if list(merges.items()) != list(expected.items()):
        return "your train_on_chunks learned other merges on the sample", ""
    encode = _encoder(fns, merges, IDENTITY)
    vocab = fns["shuffled_vocab"](merges, IDENTITY)
    specials = {"<|endoftext|>": 256 + STUDENT_MERGES}
    for line in held_out:
        ids = encode(line) + [256 + STUDENT_MERGES]
        got = fns["decode_with_specials"](ids, vocab, specials)
        if got != line + "<|endoftext|>":
            return f"encoding then decoding turned {line!r:.60} into {got!r:.60}", ""
    summary = f"{STUDENT_MERGES} merges trained with your code, {len(held_out)} lines"
    return None, summary + " encoded and decoded back"


def _save_load_joint(fns: dict[str, Callable]) -> tuple[str | None, str]:
    """Save GPT-4's first tokens with your save_text and read them back with your load_text."""
    shuffle, merges = _cl100k_prefix()
    tables = (GPT4_SPLIT_PATTERN, shuffle, {"<|endoftext|>": 100257}, merges)
    pattern, byte_shuffle, specials, loaded = fns["load_text"](fns["save_text"](*tables))
    got = (pattern, tuple(byte_shuffle), list(specials.items()), list(loaded.items()))
    if got != (tables[0], tables[1], list(tables[2].items()), list(merges.items())):
        return "saving GPT-4's first tokens and loading them back changed the tables", ""
    return None, f"cl100k_base's first {CL100K_PREFIX:,} tokens saved and loaded back"


def _export_joint(fns: dict[str, Callable]) -> tuple[str | None, str]:
    """Train on the sample, export with your merges_to_ranks, and compare your encoder with
    tiktoken running your ranks."""
    import tiktoken

    train, held_out = _samples()
    merges = bpe.train_on_chunks(patterns.split(train), 256 + TRAINED_MERGES)
    ranks = fns["merges_to_ranks"](merges)
    enc = tiktoken.Encoding(
        "capstone", pat_str=GPT4_SPLIT_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )
    problem, n = _compare(held_out, _encoder(fns, merges, IDENTITY), enc.encode_ordinary)
    return problem, f"{len(held_out)} held-out lines, {n:,} tokens, same ids as tiktoken"


@cache
def _cl100k_ranks() -> dict[bytes, int]:
    import tiktoken

    full = tiktoken.get_encoding("cl100k_base")._mergeable_ranks
    return {token: rank for token, rank in full.items() if rank < CL100K_PREFIX}


@cache
def _cl100k_prefix() -> tuple[tuple[int, ...], dict[tuple[int, int], int]]:
    """GPT-4's byte order and the merges of its first tokens (the course's recovery)."""
    ranks = _cl100k_ranks()
    return tuple(ranks[bytes([b])] for b in range(256)), pretrained.recover_merges(ranks)


def _load_joint(fns: dict[str, Callable]) -> tuple[str | None, str]:
    """Recover the merges of cl100k's first tokens with your recover_merges, and compare your
    encoder on them with tiktoken on the same ranks."""
    import tiktoken

    ranks = _cl100k_ranks()
    shuffle = tuple(ranks[bytes([b])] for b in range(256))
    merges = dict(fns["recover_merges"](ranks))
    enc = tiktoken.Encoding(
        "cl100k_prefix", pat_str=GPT4_SPLIT_PATTERN, mergeable_ranks=ranks, special_tokens={}
    )
    _, held_out = _samples()
    problem, n = _compare(held_out, _encoder(fns, merges, shuffle), enc.encode_ordinary)
    summary = f"cl100k's first {CL100K_PREFIX:,} tokens, {len(held_out)} lines, {n:,} tokens"
    return problem, summary + ", same ids as tiktoken"


def _mistral_joint(fns: dict[str, Callable]) -> tuple[str | None, str]:
    """Mistral 7B's model: the course's merge_by_score, then your pieces_to_ids, against the
    sentencepiece library on held-out lines of the novel and Japanese messages (byte fallback)."""
    import sentencepiece as spm

    from tokcourse.course.data import assets
    from tokcourse.sentencepiece_bpe import SentencePieceBPE, merge_by_score

    path = assets.mistral_model_path()
    model = SentencePieceBPE(path.read_bytes())
    library = spm.SentencePieceProcessor(model_file=str(path))
    kinds = zip(model.pieces, model.scores, model.types, strict=True)
    scores = {piece: score for piece, score, kind in kinds if kind == 1}  # normal pieces
    piece_ids = {piece: i for i, piece in enumerate(model.pieces)}
    _, held_out = _samples()
    lines = [*held_out[:100], *corpora.parallel_text(["ja"], min_messages=1)["ja"][:100]]

    def ours(line: str) -> list[int]:
        return fns["pieces_to_ids"](merge_by_score(list(model.normalize(line)), scores), piece_ids)

    problem, n = _compare(lines, ours, library.encode)
    return problem, f"{len(lines)} lines, {n:,} ids, the same as sentencepiece's"


STAGES: tuple[Stage, ...] = (
    Stage("train", ("train_on_chunks",)),
    Stage("encode", ("encode_chunk",)),
    Stage(
        "decode",
        ("shuffled_vocab", "decode_with_specials"),
        _round_trip_joint,
        ("train_on_chunks", "encode_chunk"),
        f"trains {STUDENT_MERGES} merges with train_on_chunks, encodes held-out lines with "
        "encode_chunk and decodes them back",
    ),
    Stage(
        "save and load",
        ("save_text", "load_text"),
        _save_load_joint,
        joint_does=f"saves and loads cl100k_base's first {CL100K_PREFIX:,} tokens",
    ),
    Stage(
        "export to tiktoken",
        ("merges_to_ranks",),
        _export_joint,
        ("encode_chunk",),
        "compares your encoder with tiktoken running the exported ranks",
    ),
    Stage(
        "GPT-4 in your class",
        ("recover_merges",),
        _load_joint,
        ("encode_chunk",),
        f"loads cl100k_base's first {CL100K_PREFIX:,} tokens and compares your encoder with "
        "tiktoken",
    ),
    Stage(
        "Mistral's tokenizer",
        ("pieces_to_ids",),
        _mistral_joint,
        joint_does="compares Mistral 7B's ids with sentencepiece's, byte fallback included",
    ),
)

#: The functions :func:`run_pipeline` needs, in stage order.
FUNCTIONS: tuple[str, ...] = tuple(name for stage in STAGES for name in stage.exercises)


_FALLBACK = ("Meanwhile the chapter carries on", "Fix yours and run this cell again")


def _indent(text: str) -> str:
    """A check's report under a stage's line, without the check's own note on what comes next."""
    kept = [line for line in text.splitlines() if not line.strip().startswith(_FALLBACK)]
    return textwrap.indent("\n".join(kept), "      ")


def _run_stage(number: int, stage: Stage, fns: dict[str, Callable]) -> StageResult:
    for name in stage.exercises:
        result = run_check(check.exercise(name), fns[name], quiet=True)
        if result.status in ("not implemented", "course code"):
            what = "a stub" if result.status == "not implemented" else "the course's, not yours"
            return StageResult(number, stage, result.status, f"{name} is still {what}.")
        if not result.passed:
            message = f"{name} is wrong.\n" + _indent(result.message)
            return StageResult(number, stage, "failed", message)
    for name in stage.uses:
        if is_course_code(fns[name], check.exercise(name)):
            said = f"its end-to-end test would run the course's {name}, not yours."
            return StageResult(number, stage, "course code", said)
    parts = [", ".join(stage.exercises) + " correct"] if stage.exercises else []
    if stage.joint is not None:
        try:
            problem, summary = stage.joint(fns)
        except NotImplementedError:
            return StageResult(number, stage, "not implemented", "a function it uses is a stub.")
        except Exception as err:  # the student's functions together raised: report, go on
            problem, summary = f"{type(err).__name__}: {err}", ""
        if problem is not None:
            message = "the end-to-end test failed:\n" + _indent(problem)
            return StageResult(number, stage, "failed", message)
        parts.append(f"end to end: {summary}")
    return StageResult(number, stage, "passed", "; ".join(parts) + ".")


def run_pipeline(*, quiet: bool = False, **functions: Any) -> PipelineReport:
    """Run every stage with the student's functions (by name, see :data:`FUNCTIONS`).

    Prints the report unless ``quiet``; returns it. A missing function is an error that
    names it; a function that is the course's own never passes. In the book build, where
    every function is untouched, it prints :meth:`PipelineReport.book_summary` instead.

    >>> from tokcourse import bpe
    >>> report = run_pipeline(quiet=True, **{n: getattr(bpe, n, print) for n in FUNCTIONS})
    >>> report.first_failure.number, report.first_failure.status
    (1, 'course code')
    """
    missing = [name for name in FUNCTIONS if name not in functions]
    unknown = sorted(set(functions) - set(FUNCTIONS))
    if missing or unknown:
        raise TypeError(
            f"run_pipeline needs exactly the functions {list(FUNCTIONS)}; "
            f"missing {missing}, unexpected {unknown}"
        )
    results = tuple(_run_stage(i, stage, functions) for i, stage in enumerate(STAGES, 1))
    report = PipelineReport(results)
    if not quiet:
        untouched = all(s.untouched for s in report.stages)
        print(report.book_summary() if in_book_build() and untouched else report)
    return report
