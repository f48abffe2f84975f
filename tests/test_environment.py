"""Where the course runs: the pinned toolchain, JupyterLab locally, Binder, a plain pip install.

Cheap, static checks plus a few dry runs (``make -n``, the Binder scripts with a stand-in
``python``); the real installs are what ``make setup`` and Binder do.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

from tests.conftest import NOTEBOOKS, ROOT
from tokcourse import assets

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONSTRAINTS = ROOT / "constraints.txt"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^=\s;]+)$")
MAKE = shutil.which("make")
IN_MAKE_VENV = Path(sys.prefix).resolve() == (ROOT / ".venv").resolve()


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> str:
    return canonical(re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0])


def pins() -> dict[str, str]:
    result = {}
    for line in CONSTRAINTS.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        m = PIN.match(line)
        assert m, f"constraints.txt: not a name==version pin: {line!r}"
        name = canonical(m[1])
        assert name not in result, f"constraints.txt pins {name} twice"
        result[name] = m[2]
    return result


def make_dry_run(tmp_path: Path, target: str, *, stale: str | None = None) -> str:
    """``make -n target`` in a copy of the build files, with the install stamp up to date.

    ``stale`` names a file to make newer than the stamp, as an edit would.
    """
    work = tmp_path / f"{target}-{stale}"
    work.mkdir()
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, work / name)
    stamp = work / ".venv" / ".tokcourse-installed"
    stamp.parent.mkdir()
    stamp.touch()
    past = stamp.stat().st_mtime - 100
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        os.utime(work / name, (past, past))
    if stale:
        os.utime(work / stale, None)
        os.utime(stamp, (past + 50, past + 50))
    result = subprocess.run(
        [MAKE, "-n", target], cwd=work, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


# ----------------------------------------------------------------------------- the lock file


def test_constraints_pin_every_requirement_and_not_the_package():
    pinned = pins()
    assert "tokcourse" not in pinned
    header = CONSTRAINTS.read_text().splitlines()[0]
    assert header.startswith("#") and "make lock" in CONSTRAINTS.read_text()[:400]
    extras = PYPROJECT["project"]["optional-dependencies"]
    wanted = [*PYPROJECT["project"]["dependencies"], *(r for reqs in extras.values() for r in reqs)]
    names = {requirement_name(r) for r in wanted} - {"tokcourse"}
    assert names - set(pinned) == set(), "run `make lock`"
    assert "jupyter-book" in pinned and "jupyterlab" in pinned and "sphinx" in pinned


@pytest.mark.skipif(MAKE is None, reason="needs make")
def test_setup_installs_from_the_constraints_and_redoes_it_when_they_change(tmp_path):
    install = "pip install --quiet -c constraints.txt -e '.[dev]'"
    assert install not in make_dry_run(tmp_path, "setup")  # stamp up to date: nothing to do
    for edited in ("constraints.txt", "pyproject.toml"):
        assert install in make_dry_run(tmp_path, "setup", stale=edited), edited


@pytest.mark.skipif(MAKE is None, reason="needs make")
def test_make_lock_regenerates_from_a_fresh_venv(tmp_path):
    out = make_dry_run(tmp_path, "lock")
    assert "-m venv" in out and "pip install --quiet -e '.[dev]'" in out
    assert "-c constraints.txt" not in out  # resolves the newest releases, not the old pins
    assert "pip freeze --exclude-editable --exclude tokcourse" in out
    assert "constraints.txt.tmp" in out and "mv constraints.txt.tmp constraints.txt" in out


@pytest.mark.skipif(not IN_MAKE_VENV, reason="only the venv `make setup` builds is locked")
def test_the_venv_has_the_pinned_versions():
    installed = {
        canonical(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()
    }
    wrong = {
        name: (version, installed[name])
        for name, version in pins().items()
        if name in installed and installed[name] != version
    }
    assert not wrong, f"(pinned, installed) differ; run `make setup`: {wrong}"


# ----------------------------------------------------------------------------- JupyterLab


def test_jupyterlab_is_in_the_lab_extra_and_make_setup_installs_it():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert any(requirement_name(r) == "jupyterlab" for r in extras["lab"])
    self_refs = [r for r in extras["dev"] if requirement_name(r) == "tokcourse"]
    assert any("lab" in re.findall(r"\w+", r.partition("[")[2]) for r in self_refs)


@pytest.mark.skipif(MAKE is None, reason="needs make")
def test_make_lab_sets_up_then_starts_jupyterlab_on_the_student_edition(tmp_path):
    out = make_dry_run(tmp_path, "lab")
    lines = out.splitlines()
    setup = next(i for i, ln in enumerate(lines) if "tokcourse.course.data.assets setup" in ln)
    edition = next(i for i, ln in enumerate(lines) if "tools/student.py" in ln)
    lab = next(i for i, ln in enumerate(lines) if ln.startswith(".venv/bin/jupyter lab "))
    assert setup < edition < lab and lines[lab].endswith(" _build/student/")


@pytest.mark.skipif(MAKE is None or not IN_MAKE_VENV, reason="needs make and the make venv")
def test_make_labs_command_starts_a_server_that_answers(tmp_path):
    """The command `make lab` runs (as root too: a container's user) serves JupyterLab."""
    import socket
    import time
    import urllib.error
    import urllib.request

    out = make_dry_run(tmp_path, "lab")
    command = next(ln for ln in out.splitlines() if ln.startswith(".venv/bin/jupyter lab "))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        ["bash", "-c", f"{command} --no-browser --ServerApp.port={port} --ServerApp.ip=127.0.0.1"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        status, deadline = None, time.monotonic() + 90
        while status is None and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=5) as r:
                    status = r.status
            except urllib.error.HTTPError as e:
                status = e.code
            except OSError:
                time.sleep(0.5)
        assert server.poll() is None, server.stderr.read().decode()[-2000:]
        assert status == 200  # the login page or the lab itself, after redirects
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)


@pytest.mark.skipif(not IN_MAKE_VENV, reason="checks the venv `make setup` builds")
def test_the_documented_jupyter_lab_command_exists_after_setup():
    assert importlib.util.find_spec("jupyterlab") is not None
    assert (Path(sys.executable).parent / "jupyter-lab").is_file()


def test_readme_and_setup_page_document_make_lab_and_make_lock():
    readme = (ROOT / "README.md").read_text()
    setup = (ROOT / "book" / "setup.md").read_text()
    for text in (readme, setup):
        assert "make lab" in text and "make lock" in text and "constraints.txt" in text
    # the page's command without make opens the folder the Makefile's lab target opens
    lab = re.search(r"^lab:.*\n\t(.*)$", (ROOT / "Makefile").read_text(), re.M)[1]
    assert lab.endswith(" _build/student/") and ".venv/bin/jupyter lab _build/student/" in setup


# ----------------------------------------------------------------------------- Binder


def test_binder_scripts_are_executable():
    for name in ("postBuild", "start"):
        assert (ROOT / name).stat().st_mode & 0o111, name
    lines = [ln for ln in (ROOT / "start").read_text().splitlines() if ln.strip()]
    assert lines[0].startswith("#!") and lines[-1] == 'exec "$@"'


def test_postbuild_installs_then_prefetches_into_the_runtime_cache_dirs(tmp_path):
    # postBuild with a stand-in `python` that records what it is asked to do and where the
    # caches are; then `start`, as Binder runs it at launch, with the real Python.
    bin_dir, home, log = tmp_path / "bin", tmp_path / "home", tmp_path / "calls"
    bin_dir.mkdir()
    fake = bin_dir / "python"
    fake.write_text(
        '#!/bin/sh\necho "$* | $TOKCOURSE_CACHE_DIR | $TIKTOKEN_CACHE_DIR" >> "$CALLS"\n'
    )
    fake.chmod(0o755)
    env = dict(os.environ, HOME=str(home), CALLS=str(log))
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    for var in ("TOKCOURSE_CACHE_DIR", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        env.pop(var, None)
    subprocess.run(["bash", str(ROOT / "postBuild")], env=env, check=True, cwd=tmp_path)
    calls = [line.split(" | ") for line in log.read_text().splitlines()]
    assert [c[0] for c in calls] == [
        "-m pip install --no-cache-dir -e .",
        assets.SETUP_COMMAND.removeprefix("python "),
    ]
    build_dirs = calls[1][1:]

    show = "from tokcourse import assets; print(assets.cache_dir(), assets.tiktoken_cache_dir())"
    env["PATH"] = os.environ["PATH"]
    run = subprocess.run(
        ["bash", str(ROOT / "start"), sys.executable, "-c", show],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.split() == build_dirs
    assert all(Path(d).is_relative_to(home) for d in build_dirs)  # in the image, not /tmp


# ----------------------------------------------------------------------------- a plain install


def _third_party_imports() -> set[str]:
    """Top-level modules outside the standard library that the package and the chapters import."""
    sources = [p.read_text() for p in (ROOT / "src" / "tokcourse").glob("*.py")]
    for path in NOTEBOOKS:
        cells = nbformat.read(path, as_version=4).cells
        sources += [c.source for c in cells if c.cell_type == "code"]
    modules = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                modules |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - {"tokcourse"}


def test_a_plain_pip_install_brings_everything_the_chapters_import():
    runtime = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    providers = importlib.metadata.packages_distributions()
    # Every Jupyter kernel has IPython (ipykernel depends on it); nothing else may be assumed.
    missing = {
        module
        for module in _third_party_imports()
        if not {canonical(d) for d in providers.get(module, [])} & (runtime | {"ipython"})
    }
    assert not missing, f"imported by the package or a chapter but not a dependency: {missing}"
    # Imported at run time by a dependency: plotly's notebook renderer (every chapter's
    # fig.show()) raises "Mime type rendering requires nbformat" without it.
    assert "nbformat" in runtime


def test_no_runtime_dependency_is_only_data():
    # Sphinx was a dependency only for its message catalogues, which now come from a pinned wheel.
    runtime = {requirement_name(r) for r in PYPROJECT["project"]["dependencies"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    listed = {requirement_name(d) for d in env if isinstance(d, str)}
    listed |= {requirement_name(d) for d in env if isinstance(d, dict) for d in d.get("pip", [])}
    assert "sphinx" not in runtime and "sphinx" not in listed
