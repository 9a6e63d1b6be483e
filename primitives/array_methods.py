"""Operators and array methods on tracers, so traced code reads like numpy code.

They are installed on `core.trace.Tracer` from here because they call the user-facing
numpy functions, which the core must not import.
"""

from __future__ import annotations

from ..core.trace import Tracer
from . import numpy_api as inp


def _swap(f):
    return lambda x, y: f(y, x)


_METHODS = {
    "__neg__": inp.negative,
    "__add__": inp.add,
    "__radd__": _swap(inp.add),
    "__sub__": inp.subtract,
    "__rsub__": _swap(inp.subtract),
    "__mul__": inp.multiply,
    "__rmul__": _swap(inp.multiply),
    "__truediv__": inp.divide,
    "__rtruediv__": _swap(inp.divide),
    "__gt__": inp.greater,
    "sum": inp.sum,
}

for _name, _fn in _METHODS.items():
    setattr(Tracer, _name, _fn)
