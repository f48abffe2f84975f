"""tokcourse.course.prose: glued numbers reach the page only in the book build."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tokcourse.course.plotting import BOOK_BUILD_ENV
from tokcourse.course.prose import ClaimFailed, claim, glue


def _run(monkeypatch, build: bool) -> list:
    if build:
        monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    else:
        monkeypatch.delenv(BOOK_BUILD_ENV, raising=False)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    code = "from tokcourse.course.prose import glue\nn = glue('n_tokens', 1234)\nprint(n)"
    nb.cells = [nbformat.v4.new_code_cell(code)]
    NotebookClient(nb, timeout=120).execute()
    return nb.cells[0].outputs


@pytest.mark.notebooks
def test_glue_hands_the_value_to_myst_nb_in_the_book_build(monkeypatch):
    outputs = _run(monkeypatch, build=True)
    glued = [o for o in outputs if o.output_type == "display_data"]
    assert len(glued) == 1
    # myst-nb's own record: hidden mime type, the name under "scrapbook"
    assert glued[0].data["application/papermill.record/text/plain"] == "1234"
    assert glued[0].metadata["scrapbook"]["name"] == "n_tokens"
    assert [o.text for o in outputs if o.output_type == "stream"] == ["1234\n"]


@pytest.mark.notebooks
def test_glue_shows_nothing_in_a_students_notebook(monkeypatch):
    outputs = _run(monkeypatch, build=False)
    assert [o.output_type for o in outputs] == ["stream"]  # only the print


def test_claim_quotes_its_sentence_and_wants_a_yes_or_no():
    claim("one is odd", 1 % 2 == 1)
    with pytest.raises(ClaimFailed, match='no longer holds: "two is odd"') as failed:
        claim("two is odd", 2 % 2 == 1, "2 % 2 == 0")
    assert failed.value.sentence == "two is odd" and failed.value.detail == "2 % 2 == 0"
    assert isinstance(failed.value, AssertionError)  # a guard, as `assert` was
    import numpy as np

    claim("numpy says yes", np.bool_(True))
    for not_a_truth in ([1], 0, "yes", None):
        with pytest.raises(TypeError, match="needs True or False"):
            claim("a value is not a claim", not_a_truth)
    with pytest.raises(ValueError, match="the sentence"):
        claim("  ", True)
    with pytest.raises(ValueError, match="identifier"):
        glue("two words", 1)
