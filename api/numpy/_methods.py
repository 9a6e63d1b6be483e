"""Operators and array methods on tracers, so traced code reads like numpy code.

They are installed on `core.trace.Tracer` from here because they call the user-facing
numpy functions, which the core must not import. `x.at[idx].set(v)` is JAX's
functional index update: traced arrays are immutable. numpy's own functions on
tracers dispatch to inert.numpy through `_dispatch`.
"""

from __future__ import annotations

from ...core.avals import AbstractRef
from ...core.trace import Tracer
from ...primitives.indexing import gather_scatter as ix
from .. import numpy as inp
from .. import ref as ref_api
from ._array import IndexUpdateHelper
from ._dispatch import array_function, array_ufunc


def _swap(f):
    return lambda x, y: f(y, x)


def _shape_args(args: tuple):
    """`x.reshape(2, 3)` and `x.reshape((2, 3))` mean the same, as in numpy."""
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def _getitem(x, idx):
    if type(x.aval) is AbstractRef:
        return ref_api.get(x, idx)
    return ix.getitem(x, idx)


def _setitem(x, idx, value):
    """Only refs are written in place; a traced array is immutable, as in JAX."""
    if type(x.aval) is not AbstractRef:
        raise TypeError(f"a traced array {x.aval.str_short()} is immutable: use "
                        "x.at[idx].set(value), or a mutable ref (inert.new_ref)")
    ref_api.set(x, idx, value)


def _iter(x):
    if not x.shape:
        raise TypeError("iteration over a 0-d array")
    return (x[i] for i in range(x.shape[0]))


_OPERATORS = {
    "__neg__": inp.negative,
    "__pos__": inp.positive,
    "__abs__": inp.abs,
    "__invert__": inp.invert,
    "__round__": inp.round,
    "__add__": inp.add,
    "__radd__": _swap(inp.add),
    "__sub__": inp.subtract,
    "__rsub__": _swap(inp.subtract),
    "__mul__": inp.multiply,
    "__rmul__": _swap(inp.multiply),
    "__truediv__": inp.divide,
    "__rtruediv__": _swap(inp.divide),
    "__floordiv__": inp.floor_divide,
    "__rfloordiv__": _swap(inp.floor_divide),
    "__mod__": inp.remainder,
    "__rmod__": _swap(inp.remainder),
    "__pow__": inp.power,
    "__rpow__": _swap(inp.power),
    "__matmul__": inp.matmul,
    "__rmatmul__": _swap(inp.matmul),
    "__and__": inp.bitwise_and,
    "__rand__": _swap(inp.bitwise_and),
    "__or__": inp.bitwise_or,
    "__ror__": _swap(inp.bitwise_or),
    "__xor__": inp.bitwise_xor,
    "__rxor__": _swap(inp.bitwise_xor),
    "__eq__": inp.equal,
    "__ne__": inp.not_equal,
    "__lt__": inp.less,
    "__le__": inp.less_equal,
    "__gt__": inp.greater,
    "__ge__": inp.greater_equal,
    "__getitem__": _getitem,
    "__setitem__": _setitem,
    "__iter__": _iter,
}

_NUMPY_PROTOCOLS = {  # numpy's own functions on tracers (see _dispatch)
    "__array_function__": array_function,
    "__array_ufunc__": array_ufunc,
}

_METHODS = {
    "sum": inp.sum,
    "prod": inp.prod,
    "mean": inp.mean,
    "var": inp.var,
    "std": inp.std,
    "max": inp.max,
    "min": inp.min,
    "argmax": inp.argmax,
    "argmin": inp.argmin,
    "any": inp.any,
    "all": inp.all,
    "cumsum": inp.cumsum,
    "cumprod": inp.cumprod,
    "astype": inp.astype,
    "clip": inp.clip,
    "round": inp.round,
    "dot": inp.dot,
    "squeeze": inp.squeeze,
    "ravel": inp.ravel,
    "flatten": inp.ravel,
    "swapaxes": inp.swapaxes,
    "take": inp.take,
    "diagonal": inp.diagonal,
    "trace": inp.trace,
    "reshape": lambda self, *shape: inp.reshape(self, _shape_args(shape)),
    "transpose": lambda self, *axes: inp.transpose(self, _shape_args(axes) or None),
}

_PROPERTIES = {
    "T": inp.transpose,
    "mT": lambda self: inp.swapaxes(self, -1, -2),
    "at": IndexUpdateHelper,
}

for _name, _fn in {**_OPERATORS, **_NUMPY_PROTOCOLS, **_METHODS}.items():
    setattr(Tracer, _name, _fn)
for _name, _fn in _PROPERTIES.items():
    setattr(Tracer, _name, property(_fn))
