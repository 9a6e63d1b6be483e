"""The examples in inert's docstrings (`>>>`) run and print what they show.

Every module of the package is searched, each object in the module that defines it
(`doctest.DocTestFinder`), so an example written anywhere runs: in the public names'
docstrings that the API reference shows, and in the internals'. As JAX's examples assume
`jax` and `jnp`, each example starts with `np` (numpy), `inert` and `jnp` (inert.numpy)
imported, and runs under numpy's default print options, so that a test which changed
them cannot change what an example prints.

`test_the_most_used_names_have_examples` holds the names whose docstrings must show one:
every function and class at `inert.`, and the most used of the namespaces'.
"""

import doctest
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import inert

SUBPACKAGES = ("core", "interpreters", "primitives", "api")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
NUMPY_DEFAULTS = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False,
                      nanstr="nan", infstr="inf", sign="-", floatmode="maxprec", legacy=False)


def package_modules() -> list[str]:
    """The names of inert's modules (not `inert.benchmarks`, whose import runs nothing
    documented, nor `inert.__main__`, the tour)."""
    names = ["inert"]
    for sub in SUBPACKAGES:
        package = importlib.import_module(f"inert.{sub}")
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, f"inert.{sub}.")]
    return names


def doctests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder()
    found = []
    for name in package_modules():
        module = importlib.import_module(name)
        found += [t for t in finder.find(module, name, globs={"np": np, "inert": inert,
                                                               "jnp": inert.numpy})
                  if t.examples]
    return sorted(found, key=lambda t: t.name)


DOCTESTS = doctests()


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples_print_what_they_show(test):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    with np.printoptions(**NUMPY_DEFAULTS):
        runner.run(test, out=lambda report: pytest.fail(report, pytrace=False))
    assert runner.tries == len(test.examples) > 0


AT_INERT = sorted(name for name in inert.__all__ if callable(getattr(inert, name))
                  and not inspect.ismodule(getattr(inert, name)))
MOST_USED = [
    *AT_INERT, "config.update",
    "numpy.sum", "numpy.mean", "numpy.where", "numpy.dot", "numpy.matmul", "numpy.einsum",
    "numpy.array", "numpy.Array", "numpy.zeros", "numpy.ones", "numpy.reshape",
    "numpy.concatenate", "numpy.stack",
    "lax.scan", "lax.cond", "lax.switch", "lax.fori_loop", "lax.while_loop",
    "random.PRNGKey", "random.split", "random.normal", "random.uniform", "random.bernoulli",
    "tree_util.tree_map", "tree_util.tree_flatten", "flatten_util.ravel_pytree",
    "nn.relu", "nn.softmax", "nn.one_hot", "example_libraries.stax.serial",
    "example_libraries.optimizers.adam", "example_libraries.optimizers.sgd",
    "scipy.special.logsumexp", "debug.print",
]


@pytest.mark.parametrize("name", MOST_USED)
def test_the_most_used_names_have_examples(name):
    value = inert
    for part in name.split("."):
        value = getattr(value, part)
    assert ">>>" in (inspect.getdoc(value) or ""), f"inert.{name}'s docstring shows no example"
