"""The public API's type hints: present on the transforms and the other functions at
`inert.` and on every public function of every namespace (`inert.numpy` and its
`linalg` and `fft`, `inert.lax`, `inert.nn`, `inert.random`, `inert.scipy.*`, the tree
utilities, `example_libraries`, ...), bar numpy's own functions re-exported as they are;
resolvable (a hint naming something never imported fails only when a type checker or
`typing.get_type_hints` reads it), and shipped (`py.typed`, PEP 561)."""

import functools
import inspect
import os
import tomllib
import typing
from collections.abc import Sequence

import pytest
from test_docstrings import public_names  # the walk over the public namespaces

import inert

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

@pytest.mark.parametrize("value", [
    inert.config.update, inert.Inactive, inert.custom_jvp, inert.custom_vjp,
], ids=lambda v: v.__qualname__)
def test_the_hints_of_the_classes_and_config_resolve(value):
    """What the walk over the namespaces' functions (below) leaves out: the constructors
    of the public classes with hints, and `inert.config.update`."""
    target = value.__init__ if inspect.isclass(value) else inspect.unwrap(value)
    assert typing.get_type_hints(target)


def test_py_typed_ships_in_the_package():
    assert os.path.isfile(os.path.join(os.path.dirname(inert.__file__), "py.typed"))
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        package_data = tomllib.load(f)["tool"]["setuptools"]["package-data"]
    assert "py.typed" in package_data["inert"]


PUBLIC = public_names()

# numpy's own functions, which `inert.numpy` re-exports as they are (their results made
# `inert.Array`s): their signatures are numpy's, which carries no hints at run time.
# Giving them hints would mean a wrapper per function restating numpy's signature.
NUMPY_OWN_FUNCTIONS = frozenset(f"inert.numpy.{name}" for name in (
    "bartlett", "blackman", "can_cast", "diag_indices", "geomspace", "get_printoptions",
    "hamming", "hanning", "histogram_bin_edges", "indices", "issubdtype", "iterable", "ix_",
    "kaiser", "logspace", "mask_indices", "printoptions", "promote_types", "result_type",
    "set_printoptions", "tri", "tril_indices", "triu_indices"))

#: Every namespace with public functions: `inert`, `inert.numpy`, `inert.lax`, ...
NAMESPACES = sorted({name.rpartition(".")[0] for name, value in PUBLIC.items()
                     if not inspect.isclass(value)})


def namespace_functions(namespace: str) -> dict[str, object]:
    """The public functions of `namespace` (not its classes: scalar types, result
    tuples, errors), less numpy's own."""
    return {name: value for name, value in PUBLIC.items()
            if name.rpartition(".")[0] == namespace and not inspect.isclass(value)
            and name not in NUMPY_OWN_FUNCTIONS}


def unannotated(value) -> list[str]:
    """The named parameters of `value` without a hint, and "return" if its result has none."""
    signature = inspect.signature(value)
    missing = [p.name for p in signature.parameters.values()
               if p.annotation is inspect.Parameter.empty]
    return missing + (["return"] if signature.return_annotation is inspect.Signature.empty
                      else [])


def hinted_function(value):
    """The function whose hints `value` shows: a wrapper's original, a partial's function."""
    value = inspect.unwrap(value)
    return value.func if isinstance(value, functools.partial) else value


def test_the_walk_reaches_the_array_namespaces():
    assert {"inert", "inert.numpy", "inert.numpy.linalg", "inert.numpy.fft", "inert.lax",
            "inert.lax.linalg", "inert.nn", "inert.nn.initializers", "inert.random",
            "inert.scipy.special", "inert.scipy.linalg", "inert.scipy.stats.norm",
            "inert.example_libraries.stax", "inert.tree_util"} <= set(NAMESPACES)
    assert sum(map(len, map(namespace_functions, NAMESPACES))) > 800


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_function_is_annotated(namespace):
    missing = {name: gaps for name, value in namespace_functions(namespace).items()
               if (gaps := unannotated(value))}
    assert missing == {}


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_public_functions_hints_resolve(namespace):
    unresolved = {}
    for name, value in namespace_functions(namespace).items():
        try:
            typing.get_type_hints(hinted_function(value))
        except Exception as e:  # a NameError, or a TypeError from a malformed hint
            unresolved[name] = repr(e)
    assert unresolved == {}


def test_the_numpy_exemptions_are_numpy_functions_still_without_hints():
    for name in NUMPY_OWN_FUNCTIONS:
        original = inspect.unwrap(PUBLIC[name])
        assert getattr(original, "__module__", "").partition(".")[0] == "numpy", name
    assert [n for n in sorted(NUMPY_OWN_FUNCTIONS) if not unannotated(PUBLIC[n])] == [], (
        "annotated now: take them off")


def kinds(hint) -> set:
    """The types a union hint admits, with `Sequence[int]` as `Sequence`."""
    return {typing.get_origin(h) or h for h in typing.get_args(hint) or (hint,)}


def test_the_hints_describe_what_the_functions_take_and_give():
    """Spot checks that the hints are the right ones, not only present: an axis that may
    be several axes, a dtype, a shape, the tuples that the decompositions return."""
    hints = {name: typing.get_type_hints(inspect.unwrap(value)) for name, value in
             [("sum", inert.numpy.sum), ("cumsum", inert.numpy.cumsum),
              ("split", inert.numpy.split), ("eigh", inert.numpy.linalg.eigh),
              ("sin", inert.numpy.sin), ("normal", inert.nn.initializers.normal)]}
    assert kinds(hints["sum"]["axis"]) == {int, Sequence, type(None)}
    assert kinds(hints["cumsum"]["axis"]) == {int, type(None)}  # one axis only
    assert hints["split"]["return"] == list[inert.Array]
    assert hints["eigh"]["return"] is inert.numpy.linalg.EighResult  # a named pair of Arrays
    assert set(typing.get_type_hints(inert.numpy.linalg.EighResult).values()) == {inert.Array}
    assert hints["sin"]["args"] == inert.typing.ArrayLike  # the elementwise template's
    assert typing.get_origin(hints["normal"]["return"]) is typing.get_origin(
        typing.Callable[..., inert.Array])
