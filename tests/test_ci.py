"""CI never passes by skipping: a missing browser or Python 3.12 skips locally, fails under CI."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import yaml

from tests._ci import missing_tool, on_ci
from tests.conftest import ROOT
from tools import pythons


@pytest.mark.parametrize("value", ["true", "TRUE", "1", "yes"])
def test_ci_is_on(value):
    assert on_ci({"CI": value})


@pytest.mark.parametrize("value", [None, "", "false", "False", "0", "no"])
def test_ci_is_off(value):
    assert not on_ci({} if value is None else {"CI": value})


def test_a_missing_tool_skips_locally(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no frobnicator"):
        missing_tool("no frobnicator")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        missing_tool("no frobnicator")


def test_a_missing_tool_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no frobnicator.*CI=true"):
        missing_tool("no frobnicator")


FAILED = {"failed", "error"}  # a fixture that fails makes an error: red all the same


def outcome(test_id: str, **env: str) -> str:
    """Run one test in a fresh pytest with a PATH where no browser or python3.x can be found."""
    environ = {k: v for k, v in os.environ.items() if k not in {"CI", "TOKCOURSE_TEST_PYTHON"}}
    environ |= {"PATH": "", "PYENV_ROOT": "/nonexistent"} | env
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", test_id],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = result.stdout.strip().splitlines()[-1]
    found = re.search(r"\b(passed|failed|skipped|error)\b", summary)
    assert found, result.stdout[-3000:] + result.stderr[-3000:]
    return found[1]


# The fixtures that find the browser and the interpreter run before anything slow (no book
# build, no venv), so these take seconds.
BROWSER_TEST = "tests/test_book.py::test_introduction_renders_offline_in_a_browser"
COLAB_PYTHON_TEST = (
    "tests/test_colab_python.py::test_chapter_runs_from_its_student_edition[00_introduction]"
)


@pytest.mark.parametrize("test_id", [BROWSER_TEST, COLAB_PYTHON_TEST])
def test_the_rule_applies_to_the_browser_and_colab_python_tests(test_id):
    assert outcome(test_id) == "skipped"
    assert outcome(test_id, CI="true") in FAILED


def test_a_python_asked_for_by_name_is_never_skipped():
    assert outcome(COLAB_PYTHON_TEST, TOKCOURSE_TEST_PYTHON="3.99") in FAILED


def test_ci_script_installs_chromium_when_missing_and_runs_make_test():
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"command -v chromium\b", script)
    assert re.search(
        r"DEBIAN_FRONTEND=noninteractive apt-get install -y\b.*\\\n\s*chromium", script
    )
    assert re.search(r"^make test$", script, re.M)


def test_github_ci_provides_colabs_python():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    steps = workflow["jobs"]["test"]["steps"]
    versions = [
        str(v)
        for step in steps
        if str(step.get("uses", "")).startswith("actions/setup-python")
        for v in str(step["with"]["python-version"]).split()
    ]
    assert pythons.COLAB_PYTHON in versions
