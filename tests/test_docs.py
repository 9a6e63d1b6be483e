"""The documentation builds with warnings as errors (`python -m sphinx -W`), as the README's
command does; CI builds the docs by running this test.

The build runs in a subprocess (Sphinx registers roles and directives process-wide),
with `INERT_DOCS_OFFLINE=1` so that intersphinx downloads no inventories: the machines
running the tests may have no network. It is skipped where the `docs` extra is absent.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), os.path.join(ROOT, "docs"), str(tmp_path / "html")],
        capture_output=True, text=True, env={**os.environ, "INERT_DOCS_OFFLINE": "1"})
    assert build.returncode == 0, build.stderr
    numpy_page = (tmp_path / "html" / "api" / "numpy.html").read_text()
    assert 'id="inert.numpy.sum"' in numpy_page and 'id="inert.grad"' in (
        tmp_path / "html" / "api" / "transforms.html").read_text()
