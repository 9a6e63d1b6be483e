"""What a user installing inert sees of the package: its version, licence and metadata,
what the REPL shows of a staged program, and the built wheel and sdist: built from a copy
of the checkout (the build leaves its `build/` and egg-info there), the wheel from the
sdist as `python -m build` does, installed into a fresh virtualenv that sees this one's
packages (numpy, scipy, numba: nothing is downloaded), imported and run."""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest

import inert

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_version_is_the_installed_distributions_and_the_changelogs():
    assert inert.__version__ == importlib.metadata.version("inert")
    with open(os.path.join(ROOT, "CHANGELOG.md")) as f:
        assert f"## {inert.__version__} (" in f.read()


def test_python_dash_m_inert_dash_dash_version():
    out = subprocess.run([sys.executable, "-m", "inert", "--version"], capture_output=True,
                         text=True, check=True, cwd=os.path.dirname(ROOT)).stdout
    assert out.strip() == f"inert {inert.__version__}"


def test_the_licence_is_apache_2_in_the_file_and_the_metadata():
    with open(os.path.join(ROOT, "LICENSE")) as f:
        assert "Apache License" in f.read(2000)
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["license"] == "Apache-2.0" and project["classifiers"] and project["authors"]
    assert importlib.metadata.metadata("inert")["License-Expression"] == "Apache-2.0"


def test_a_jaxpr_at_the_repl_shows_its_program():
    closed = inert.make_jaxpr(lambda x: np.sin(x) * 2.0)(1.0)
    assert repr(closed) == str(closed) == str(closed.jaxpr) == repr(closed.jaxpr)
    assert repr(closed).startswith("{ lambda") and "sin" in repr(closed)


# ---------------------------------------------------------------------------------
# The built wheel and sdist

PACKAGE_FOLDERS = ("core", "interpreters", "primitives", "api", "benchmarks")


def _setuptools_builds_this() -> bool:
    """pyproject's licence expression (PEP 639) needs setuptools 77; the dev extra has it."""
    try:
        import setuptools
    except ImportError:
        return False
    return tuple(int(p) for p in re.findall(r"\d+", setuptools.__version__)[:2]) >= (77, 0)


def _run(*command, cwd, env=None) -> str:
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _in_the_venv(python: Path, *command, cwd) -> str:
    """Run in the virtualenv as a user would: no PYTHONPATH leading back to the checkout."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return _run(python, *command, cwd=cwd, env=env)


def _checkout_copy(to: Path) -> Path:
    """The files git would commit (tracked and not ignored), or the tree less its caches."""
    root = Path(ROOT)
    if shutil.which("git") and (root / ".git").exists():
        names = _run("git", "ls-files", "-co", "--exclude-standard", "-z", cwd=root).split("\0")
        for name in filter(None, names):
            if (root / name).is_file():
                (to / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / name, to / name)
    else:
        shutil.copytree(root, to, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".git", "__pycache__", "build", "*.egg-info", ".*_cache", ".hypothesis"))
    return to


def _modules() -> set[str]:
    """The package's modules as the wheel names them (`inert/core/ir.py`)."""
    root = Path(ROOT)
    return {"inert/" + p.relative_to(root).as_posix() for folder in PACKAGE_FOLDERS
            for p in (root / folder).rglob("*.py") if "__pycache__" not in p.parts} | {
        f"inert/{p.name}" for p in root.glob("*.py")}


def test_pyproject_lists_every_package_folder():
    """setuptools is given the packages by name (the root is the package `inert`), so a
    new folder must be added there, or the wheel lacks it."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    root = Path(ROOT)
    folders = {".".join(("inert", *p.parent.relative_to(root).parts))
               for folder in PACKAGE_FOLDERS for p in (root / folder).rglob("__init__.py")}
    assert folders <= listed, sorted(folders - listed)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """`(venv python, wheel, sdist)`: the sdist built from a copy of the checkout, the
    wheel from the sdist, installed with no index into a new virtualenv."""
    if not _setuptools_builds_this():
        pytest.skip("building inert needs setuptools>=77 (the dev extra installs it)")
    tmp = tmp_path_factory.mktemp("packaging")
    source = _checkout_copy(tmp / "checkout")
    dist = tmp / "dist"
    _run(sys.executable, "-c", "import sys; from setuptools import build_meta; "
         "build_meta.build_sdist(sys.argv[1])", dist, cwd=source)
    (sdist,) = dist.glob("inert-*.tar.gz")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", dist, sdist, cwd=tmp)
    (wheel,) = dist.glob("inert-*.whl")
    _run(sys.executable, "-m", "venv", "--system-site-packages", tmp / "venv", cwd=tmp)
    python = tmp / "venv" / ("Scripts" if os.name == "nt" else "bin") / "python"
    _run(python, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
         wheel, cwd=tmp)
    return python, wheel, sdist


def test_the_wheel_holds_every_module_the_licence_and_the_type_marker(installed):
    _, wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    assert _modules() <= names, sorted(_modules() - names)
    assert f"inert-{inert.__version__}.dist-info/licenses/LICENSE" in names
    assert "inert/py.typed" in names


def test_the_sdist_holds_what_the_wheel_is_built_from(installed):
    _, _, sdist = installed
    with tarfile.open(sdist) as archive:
        names = {n.partition("/")[2] for n in archive.getnames()}
    assert {"pyproject.toml", "README.md", "LICENSE"} <= names
    assert {m.removeprefix("inert/") for m in _modules()} <= names


def test_the_installed_wheel_imports_and_runs_the_readme_quick_start(installed, tmp_path):
    python = installed[0]
    where = _in_the_venv(python, "-c", "import inert; print(inert.__file__, inert.__version__)",
                         cwd=tmp_path).split()
    assert Path(where[0]).is_relative_to(python.parent.parent) and where[1] == inert.__version__
    with open(os.path.join(ROOT, "README.md")) as f:
        quick_start = re.search(r"## Quick start\n\n```python\n(.*?)```", f.read(), re.S)[1]
    printed = _in_the_venv(python, "-c", quick_start, cwd=tmp_path)
    assert printed == _run(sys.executable, "-c", quick_start, cwd=tmp_path)  # the checkout's
    assert "lambda" in printed and "bytes in total" in printed
