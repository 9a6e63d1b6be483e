"""numpy's own functions on traced values: `np.sum(x)`, `np.sin(x)`, `np.where(c, x, y)`.

numpy hands a call with a traced operand to the tracer through its two dispatch
protocols (NEP 13 `__array_ufunc__` for ufuncs, NEP 18 `__array_function__` for the
rest). A numpy function that `inert.numpy` covers runs as the `inert.numpy` function
of the same name; any other, and any keyword argument the inert function lacks
(`out=`, `where=`), is refused with a TypeError naming it, instead of numpy
converting the tracer to an array (which would lose it). Installed on
`core.trace.Tracer` by `_methods`, with the operators.
"""

from __future__ import annotations

import functools
import inspect
import threading

import numpy as np

from ...core.errors import NumpyFunctionError
from ...core.trace import user_source_info
from .. import numpy as inp


def _covered(numpy_namespace, inert_namespace, prefix: str = "") -> dict:
    """numpy's functions (not ufuncs, not types) that inert covers: function -> inert's."""
    return {getattr(numpy_namespace, name): (prefix + name, getattr(inert_namespace, name))
            for name in inert_namespace.__all__
            if callable(getattr(numpy_namespace, name, None))
            and not isinstance(getattr(numpy_namespace, name), (type, np.ufunc))}


_FUNCTIONS = {**_covered(np, inp), **_covered(np.linalg, inp.linalg, "linalg.")}
_UFUNCS = {ufunc: (ufunc.__name__, getattr(inp, ufunc.__name__))
           for ufunc in vars(np).values()
           if isinstance(ufunc, np.ufunc) and ufunc.__name__ in inp.__all__}


class _Running(threading.local):
    def __init__(self):
        self.functions: set = set()  # the numpy functions whose inert version is running


_running = _Running()


def array_function(self, func, types, args, kwargs):
    """NEP 18: `np.<func>(..., tracer, ...)` runs inert.numpy's `func`. An inert
    function that is numpy's own on its arguments (`linspace`, a constant) runs
    numpy's code, rather than itself again."""
    name, fn = _FUNCTIONS.get(func, (None, None))
    if fn is None:
        raise _not_covered(f"{func.__module__}.{func.__name__}")
    if func in _running.functions:
        return func._implementation(*args, **kwargs)
    kwargs = _keywords(name, fn, kwargs)
    _running.functions.add(func)
    try:
        return fn(*args, **kwargs)
    finally:
        _running.functions.discard(func)


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NEP 13: `np.<ufunc>(tracer, ...)` (and `ndarray + tracer`) runs inert.numpy's."""
    name, fn = _UFUNCS.get(ufunc, (ufunc.__name__, None))
    if fn is None or method != "__call__":
        raise _not_covered(f"numpy.{name}" + ("" if method == "__call__" else f".{method}"))
    return fn(*inputs, **_keywords(name, fn, kwargs))


def _not_covered(what: str) -> NumpyFunctionError:
    return NumpyFunctionError(
        f"{what} was called on a traced value, which inert.numpy does not cover: write "
        "the computation with inert.numpy functions (numpy's own would need the value "
        "itself, which a transformation does not know)").with_source(user_source_info())


def _keywords(name: str, fn, kwargs: dict) -> dict:
    """The keyword arguments for inert's `fn`: one it lacks is refused by name, unless
    it is None (numpy's "not given": `out=None`, `dtype=None`)."""
    if kwargs.get("out") is not None:
        raise NumpyFunctionError(
            f"numpy.{name}(..., out=...) on a traced value: inert arrays are immutable, so "
            f"nothing can be written into `out`; use the result of inert.numpy.{name}"
        ).with_source(user_source_info())
    parameters = _parameters(fn)
    unknown = sorted(k for k, v in kwargs.items() if k not in parameters and v is not None)
    if unknown:
        raise NumpyFunctionError(
            f"numpy.{name} on a traced value runs inert.numpy.{name}, which has no keyword "
            f"argument {', '.join(unknown)}").with_source(user_source_info())
    return {k: v for k, v in kwargs.items() if k in parameters}


@functools.cache
def _parameters(fn) -> frozenset[str]:
    return frozenset(inspect.signature(fn).parameters)
