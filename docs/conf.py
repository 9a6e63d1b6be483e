"""Sphinx configuration of inert's documentation: the API reference, the design doc and
the benchmark notes.

Build it with `python -m sphinx -W -b html docs docs/_build/html` (the `docs` extra
installs what it needs). `tests/test_docs.py` builds it with warnings as errors.

intersphinx links numpy, scipy and JAX names to their documentation, whose inventories
it downloads. With `INERT_DOCS_OFFLINE=1` (set by the test, since the machines running
CI may have no network) it is given no inventories: the build then fetches nothing,
and those names render as code without a link.
"""

import inspect
import os

import inert

project = "inert"
author = "The inert developers"
copyright = "the inert developers, Apache-2.0"
release = version = inert.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.intersphinx",
              "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
root_doc = "index"

# The docstrings write code in single backticks, as Markdown does: make that a reference
# to the Python object where one exists, and code either way.
default_role = "py:obj"

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
# No autodoc_type_aliases: Sphinx 9 prints an alias inside a union (`DTypeLike | None`) as
# `TypeAliasForwardRef(...)`; the signatures show the unions the aliases stand for.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = ["Differences from JAX"]

# Not Python's own inventory: the docstrings' bare `sum` and `max` would link to builtins.
intersphinx_mapping = {} if os.environ.get("INERT_DOCS_OFFLINE") else {
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "jax": ("https://docs.jax.dev/en/latest", None),
}

myst_heading_anchors = 3
html_theme = "alabaster"
html_title = f"inert {release}"


def from_numpy(value) -> bool:
    """numpy's own objects that `inert.numpy` re-exports as they are (`finfo`, `ndarray`,
    `hamming`): they are documented by numpy, not here."""
    module = getattr(value, "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] == "numpy"


def skip_numpy_members(app, what, name, value, skip, options):
    """Leave numpy's objects out of a namespace's members (their docstrings are numpy's,
    written for numpy's documentation and its labels); `list_numpy_members` names them."""
    return True if what == "module" and from_numpy(value) else None


def list_numpy_members(app, what, name, module, options, lines):
    """End a namespace's docstring with the numpy names it re-exports unchanged."""
    if what != "module" or not getattr(options, "members", None):
        return
    names = [n for n in getattr(module, "__all__", ()) if from_numpy(getattr(module, n))
             and not inspect.ismodule(getattr(module, n))]
    if names:
        lines += ["", "numpy's own names, re-exported unchanged: "
                  + ", ".join(f"`numpy.{n}`" for n in names) + "."]


def setup(app):
    app.connect("autodoc-skip-member", skip_numpy_members)
    app.connect("autodoc-process-docstring", list_numpy_members)
