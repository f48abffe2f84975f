"""Run the chapters under another Python, in an environment made the way Colab makes it.

Colab runs Python 3.12, and the first code cell of every chapter installs the course there with
``pip install`` of the repository, next to the ``ipykernel`` Colab already has. This module
builds the same thing here: a venv from the requested interpreter, ``pip install`` of a copy of
the checkout plus ``ipykernel``, nothing from the development extras, and a Jupyter kernel
spec that starts that venv's interpreter.

    python -m tools.pythons 3.13     # create or refresh .venv-py3.13; print its interpreter

The venv lives in ``.venv-py<version>/`` (git-ignored) and is reused between runs: it is
rebuilt from scratch when ``pyproject.toml`` or the interpreter changes, and only the package
is reinstalled when the package's sources change. ``tests/test_colab_python.py`` uses it, and
``make test-python PY=3.13`` runs that test for any version.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COLAB_PYTHON = "3.12"  # the Python version Colab runs; CI executes every chapter under it
# Colab has these already; installing them is fair. Nothing else from the dev extras.
COLAB_PREINSTALLED = ("ipykernel",)


@dataclass(frozen=True)
class PythonEnv:
    """A ready venv: its interpreter, and a kernel spec (``kernel_name`` in ``kernel_dir``)."""

    version: str
    directory: Path
    python: Path
    kernel_dir: Path
    kernel_name: str


def _version_re(version: str) -> re.Pattern[str]:
    if not re.fullmatch(r"3\.\d+", version):
        raise ValueError(f"expected a Python version like '3.12', got {version!r}")
    return re.compile(rf"{re.escape(version)}(\.\d+)*")


def _reports(python: Path | str, version: str) -> str | None:
    """The full version (``3.12.1``) if ``python`` runs and is ``version``, else None."""
    try:
        out = subprocess.run(
            [str(python), "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    full = out.stdout.strip()
    return full if out.returncode == 0 and _version_re(version).fullmatch(full) else None


def search_places(version: str) -> list[str]:
    """Where :func:`find_python` looks, for error messages."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    return [f"{pyenv}/versions/{version}.*/bin/python{version}", f"python{version} on PATH"]


def find_python(version: str) -> Path | None:
    """An interpreter of ``version`` (e.g. ``"3.12"``): pyenv's newest patch release, else PATH.

    Each candidate is run to check its version (a pyenv shim on PATH may exist and refuse).

    Example: ``find_python("3.12")  # PosixPath('/root/.pyenv/versions/3.12.1/bin/python3.12')``
    """
    pattern = _version_re(version)
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    candidates: list[Path | str] = []
    if (pyenv / "versions").is_dir():
        releases = [d for d in (pyenv / "versions").iterdir() if pattern.fullmatch(d.name)]
        releases.sort(key=lambda d: tuple(int(x) for x in d.name.split(".")), reverse=True)
        candidates += [d / "bin" / f"python{version}" for d in releases]
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(on_path)
    for candidate in candidates:
        if _reports(candidate, version):
            return Path(candidate)
    return None


def env_dir(version: str) -> Path:
    """Where the venv for ``version`` lives: ``.venv-py<version>`` in the repository."""
    _version_re(version)
    return ROOT / f".venv-py{version}"


def _checkout_files() -> list[Path]:
    """The checkout as a fresh clone would have it: tracked and untracked, not ignored."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: take the package
        return [p.relative_to(ROOT) for p in (ROOT / "src").rglob("*") if p.is_file()] + [
            Path(name) for name in ("pyproject.toml", "README.md", "LICENSE")
        ]
    names = [Path(n) for n in listed.decode().split("\0") if n]
    return [n for n in names if (ROOT / n).is_file()]  # a deleted tracked file is not there


def _builds_package(rel: Path) -> bool:
    """Whether a file can change what ``pip install .`` installs: top-level files and src/."""
    return len(rel.parts) == 1 or rel.parts[0] == "src"


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for rel in sorted(paths):
        h.update(rel.as_posix().encode() + b"\0" + (ROOT / rel).read_bytes() + b"\0")
    return h.hexdigest()


def _run(cmd: list[str], what: str, **kwargs) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {result.returncode}): {' '.join(cmd)}\n"
            f"{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )


def _pip_install_checkout(python: Path, *extra: str, deps: bool = True) -> None:
    """``pip install .`` of a copy of the checkout, so the build leaves nothing in the tree."""
    with tempfile.TemporaryDirectory(prefix="tokcourse-checkout-") as tmp:
        for rel in _checkout_files():
            (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, Path(tmp) / rel)
        flags = [] if deps else ["--no-deps", "--force-reinstall"]
        cmd = [str(python), "-m", "pip", "install", "--quiet", *flags, tmp, *extra]
        _run(cmd, "pip install of the checkout")


def _write_kernel_spec(directory: Path, python: Path, version: str) -> tuple[Path, str]:
    name = f"tokcourse-py{version}"
    spec_dir = directory / "kernels" / name
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        # The venv's own path, not the resolved interpreter: that is what activates the venv.
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": f"Python {version} (Colab-like venv)",
        "language": "python",
        "env": {"PYTHONNOUSERSITE": "1"},  # no packages from ~/.local
        "metadata": {"debugger": False},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
    return directory / "kernels", name


def ensure_env(version: str, interpreter: Path, *, log=None) -> PythonEnv:
    """Create or refresh the venv for ``version`` from ``interpreter``; return it, ready to run.

    Safe to call from several processes at once (pytest-xdist workers): a file lock serializes
    them, and all but the first find the venv up to date. After installing, the offline assets
    are set up with the venv's own ``tokcourse`` (a no-op when the shared cache is filled), so
    tiktoken works without a network exactly as in the main venv.

    Example: ``ensure_env("3.12", find_python("3.12")).python``
    """
    say = log or (lambda message: None)
    directory = env_dir(version)
    python = directory / "bin" / "python"
    full_version = _reports(interpreter, version)
    if full_version is None:
        raise RuntimeError(f"{interpreter} does not run as Python {version}")
    env_key = hashlib.sha256(
        (ROOT / "pyproject.toml").read_bytes()
        + f"\0{interpreter}\0{full_version}\0{COLAB_PREINSTALLED}".encode()
    ).hexdigest()
    lock_path = directory.with_name(directory.name + ".lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env_stamp, package_stamp = directory / ".env-stamp", directory / ".package-stamp"
        fresh = not (python.is_file() and env_stamp.is_file() and env_stamp.read_text() == env_key)
        if fresh:
            say(f"creating {directory.name} from {interpreter} (Python {full_version})")
            shutil.rmtree(directory, ignore_errors=True)
            _run([str(interpreter), "-m", "venv", str(directory)], "venv creation")
            _run([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], "pip")
        package_key = _digest([f for f in _checkout_files() if _builds_package(f)])
        if fresh or not package_stamp.is_file() or package_stamp.read_text() != package_key:
            say(f"pip install . into {directory.name}")
            if fresh:
                _pip_install_checkout(python, *COLAB_PREINSTALLED)
                env_stamp.write_text(env_key)
            else:  # same dependencies: reinstall only the course package
                _pip_install_checkout(python, deps=False)
            _run(
                [str(python), "-m", "tokcourse.course.data.assets", "setup"],
                "tokcourse.course.data.assets setup",
            )
            package_stamp.write_text(package_key)
        kernel_dir, kernel_name = _write_kernel_spec(directory, python, version)
    return PythonEnv(version, directory, python, kernel_dir, kernel_name)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(f"usage: python -m tools.pythons VERSION   (e.g. {COLAB_PYTHON})", file=sys.stderr)
        return 2
    version = args[0]
    interpreter = find_python(version)
    if interpreter is None:
        print(f"Python {version} not found; looked at: {search_places(version)}", file=sys.stderr)
        return 1
    env = ensure_env(version, interpreter, log=lambda m: print(m, file=sys.stderr))
    print(env.python)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
