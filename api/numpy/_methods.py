"""Operators and array methods on tracers, so traced code reads like numpy code.

They are installed on `core.trace.Tracer` from here because they call the user-facing
numpy functions, which the core must not import. `x.at[idx].set(v)` is JAX's
functional index update: traced arrays are immutable. numpy's own functions on
tracers dispatch to inert.numpy through `_dispatch`.
"""

from __future__ import annotations

import numpy as np

from ...core.avals import AbstractRef
from ...core.errors import ShapeError
from ...core.trace import Tracer
from ...core.traceback_util import ignoring_warnings, warn_at_user_line
from ...primitives.indexing import gather_scatter as ix
from .. import numpy as inp
from .. import ref as ref_api
from ._array import Array, IndexUpdateHelper, immutable_error
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
        raise immutable_error(f"'{type(x)}' object does not support item assignment: the "
                              f"traced array {x.aval.str_short()}", "x[idx] = y",
                              "x = x.at[idx].set(y)",
                              "a mutable ref, inert.new_ref, written in place")
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

# ---------------------------------------------------------------------------------
# Array's operators: numpy's, with inert's ShapeError for operands that do not fit

_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
            "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^",
            "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _shape_checked(name: str, symbol: str):
    """`np.ndarray`'s operator `name`, except that operands whose shapes do not fit
    raise inert's ShapeError (a ValueError, as numpy's) naming the operation, the
    shapes and the user's line: inert.numpy's function explains them. A warning is
    re-issued at the user's line (`core.traceback_util`)."""
    numpy_operator, explained_by = getattr(np.ndarray, name), _OPERATORS[name]

    def operator(x, y):
        try:
            return numpy_operator(x, y)
        except ValueError:
            pass
        except RuntimeWarning as warning:
            warn_at_user_line(warning)
            return ignoring_warnings(numpy_operator, x, y)
        try:  # on numpy arrays: inert.numpy's impls may use these very operators
            explained_by(_as_numpy(x), _as_numpy(y))
        except ShapeError as e:
            e.args = (f"`x {symbol} y`: {e.args[0]}",)
            raise e.with_traceback(None) from None
        return numpy_operator(x, y)  # numpy's own error, if inert found none

    operator.__name__ = operator.__qualname__ = name
    return operator


def _as_numpy(x):
    return x.view(np.ndarray) if isinstance(x, Array) else x


def _array_operators() -> dict:
    """The checked operators, reflected and in-place ones too (`x += y` rebinds `x`:
    Arrays are immutable)."""
    operators = {}
    for short, symbol in _SYMBOLS.items():
        forward = operators[f"__{short}__"] = _shape_checked(f"__{short}__", symbol)
        if short not in ("lt", "le", "gt", "ge"):
            operators[f"__r{short}__"] = _shape_checked(f"__r{short}__", symbol)
            operators[f"__i{short}__"] = forward
    return operators


for _name, _fn in _array_operators().items():
    setattr(Array, _name, _fn)
for _name, _fn in {**_OPERATORS, **_NUMPY_PROTOCOLS, **_METHODS}.items():
    setattr(Tracer, _name, _fn)
for _name, _fn in _PROPERTIES.items():
    setattr(Tracer, _name, property(_fn))
