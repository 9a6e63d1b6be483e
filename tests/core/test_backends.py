"""The conformance tables of every primitive family, run on other array libraries:
on Dask arrays under a scheduler that refuses to compute (so an impl that converts to
numpy, computing the graph, fails), and on `array_api_strict` arrays (so an impl that
reaches for numpy-only behaviour fails, unless the primitive is listed as numpy-only)."""

from __future__ import annotations

import importlib.util
import os

import array_api_compat
import array_api_strict as xps
import dask
import dask.array as da
import numpy as np
import pytest

import inert
import inert.numpy as jnp
from inert.errors import BackendError
from inert.primitives.linalg.dot_general import dot_general

_TESTS = os.path.dirname(os.path.dirname(__file__))


def _table(path: str):
    """A family's test module, loaded for its table (not collected a second time)."""
    spec = importlib.util.spec_from_file_location(
        "_table_" + path.replace("/", "_")[:-3], os.path.join(_TESTS, "primitives", path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _conformance_cases() -> list[tuple[str, object, tuple]]:
    """(name, function, numpy operands) for each row of each family's table."""
    rng = np.random.default_rng(0)
    ew = _table("elementwise/test_elementwise.py")
    dg = _table("linalg/test_dot_general.py")
    ix = _table("indexing/test_indexing.py")
    sp = _table("test_special.py")
    cases = [(c.name, c.fn, c.args(rng)) for c in ew.CASES]
    cases += [(f"dot_general-{c.name}", lambda x, y, d=c.dims: dot_general(x, y, d),
               c.operands(rng)) for c in dg.CASES]
    for module in (_table("test_reductions.py"), _table("shape/test_structural.py")):
        cases += [(name, module.apply(prim, params), tuple(args))
                  for name, prim, params, args, _ in module.CASES]
    cases += [(c.name, c.fn, c.operands) for c in ix.CASES]
    cases += [(c.name, c.fn, tuple(c.sample(rng))) for c in sp.CASES]
    return cases


SPECIAL = {c.name for c in _table("test_special.py").CASES}
"""scipy.special's functions: for numpy (and, by dispatch, Dask and CuPy) only."""
CASES = [c for c in _conformance_cases()  # rows with an array operand a backend can own
         if any(isinstance(a, np.ndarray) for a in c[2])]
IDS = [c[0] for c in CASES]


def _refuse_to_compute(*args, **kwargs):
    raise AssertionError("a dask graph was computed while building it")


def _row_chunked(a):
    """A dask array chunked along its first axis, as data sets are."""
    a = np.asarray(a)
    return da.from_array(a, chunks=(2, *a.shape[1:]) if a.ndim else ())


def _lift(to_backend, args):
    """Array operands as the backend's arrays; Python scalars stay."""
    return tuple(to_backend(a) if isinstance(a, (np.ndarray, np.generic)) else a
                 for a in args)


def _without(prefixes: tuple[str, ...]) -> set[str]:
    return {name for name in IDS if name.startswith(prefixes)}


DASK_ONLY_MISSING = {"reshape"}
DASK_MISSING = DASK_ONLY_MISSING | _without((
    "cummax", "cummin", "pad", "dynamic_", "gather", "scatter", "polygamma", "zeta", "sinc"))
"""Rows whose primitive has no Dask implementation yet: numpy's function of them has
no dask counterpart (ufunc.accumulate, polygamma, sinc) or the impl writes into a numpy
array (pad, gather, scatter), or dask cannot do it (a reshape that neither merges nor
splits dimensions, across chunk boundaries). Each raises BackendError, never computing silently."""

STRICT_MISSING = (DASK_MISSING - DASK_ONLY_MISSING) | SPECIAL | _without((
    "logistic",  # scipy.special.expit
    # no Array-API spelling yet (fmod, cbrt, exp2; integer powers and rounding modes;
    # boolean extrema; the scans and arg-reductions)
    "exp2", "rsqrt", "cbrt", "integer_pow", "round", "rem", "clamp",
    "arg", "reduce_and", "reduce_or", "cum"))
"""Rows whose primitive has no Array-API implementation (so none on array_api_strict)."""


DASK_ROWS = [c for c in CASES if c[0] not in DASK_MISSING]
DASK_MISSING_ROWS = [c for c in CASES if c[0] in DASK_MISSING]


@pytest.mark.parametrize("name, fn, args", DASK_ROWS, ids=[c[0] for c in DASK_ROWS])
def test_conformance_on_dask(name, fn, args):
    """Each primitive builds a dask graph without computing it, equal to numpy's."""
    want = fn(*args)
    with dask.config.set(scheduler=_refuse_to_compute):
        got = fn(*_lift(_row_chunked, args))
    for g, w in zip(*(o if isinstance(o, (list, tuple)) else [o] for o in (got, want))):
        assert isinstance(g, da.Array), type(g)
        computed = g.compute(scheduler="sync")
        assert computed.dtype == np.asarray(w).dtype
        np.testing.assert_allclose(computed, w, rtol=1e-6)


@pytest.mark.parametrize("name, fn, args", DASK_MISSING_ROWS,
                         ids=[c[0] for c in DASK_MISSING_ROWS])
def test_missing_implementations_raise_backend_error_on_dask(name, fn, args):
    lifted = _lift(_row_chunked, args)
    with pytest.raises(BackendError, match=r"primitive \w+ .*dask"):
        fn(*lifted)


@pytest.mark.parametrize("name, fn, args", CASES, ids=IDS)
def test_conformance_on_array_api_strict(name, fn, args):
    """Each primitive runs through the Array-API namespace alone, equal to numpy's;
    only the listed numpy-only ones refuse, with an error naming them."""
    want = fn(*args)
    lifted = _lift(lambda a: xps.asarray(np.asarray(a)), args)
    if name in STRICT_MISSING:
        with pytest.raises(BackendError, match=r"primitive \w+ .*array_api_strict"):
            fn(*lifted)
        return
    got = fn(*lifted)
    for g, w in zip(*(o if isinstance(o, (list, tuple)) else [o] for o in (got, want))):
        assert array_api_compat.is_array_api_strict_namespace(array_api_compat.array_namespace(g))
        np.testing.assert_allclose(np.asarray(g._array), w, rtol=1e-6)


def test_aval_of_a_dask_array_from_its_metadata():
    x = da.ones((6, 4), chunks=(3, 4), dtype=np.float32)
    with dask.config.set(scheduler=_refuse_to_compute):
        jaxpr = inert.make_jaxpr(lambda x: jnp.sum(x * 2.0))(x)
    assert str(jaxpr.jaxpr.invars[0].aval) == "f32[6,4]"


def test_mixed_libraries_raise_backend_error():
    with pytest.raises(BackendError, match="more than one array library"):
        jnp.add(da.ones(3), xps.ones(3))
