"""What a user installing inert sees of the package: its version, licence and metadata,
and what the REPL shows of a staged program."""

import importlib.metadata
import os
import subprocess
import sys
import tomllib

import numpy as np

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
