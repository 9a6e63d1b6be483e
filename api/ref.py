"""`inert.ref`: JAX's ref functions (`get`, `set`, `swap`, `addupdate`), and `new_ref`,
`empty_ref`, `freeze` (also at `inert.`), on the primitives of `primitives.state`.

An index is any numpy index, as for `x.at[idx]`: ints, slices, None, Ellipsis and
integer arrays (numpy or traced). `ref[idx]` reads, `ref[idx] = v` writes and
`ref[idx] += v` reads then writes, on a `Ref` as on a traced ref; this module installs
those operators on `Ref` (the tracers' ones dispatch here, see `numpy._methods`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..core.avals import Ref, ShapedArray
from ..core.trace import Tracer, get_aval
from ..core.typing import ArrayLike, DTypeLike
from ..interpreters.ad import zeros
from ..primitives.indexing.index_expressions import fit_updates, index_plan, normalize_index
from ..primitives.shape.structural import reshape
from ..primitives.state import refs as state
from .numpy._array import Array, returned


def new_ref(init_val: ArrayLike) -> Ref:
    """A new mutable ref holding a copy of `init_val`: JAX's `jax.new_ref`, which
    transformations see through (its reads and writes are staged and differentiated).

    Example:
        >>> def f(x):
        ...     total = inert.new_ref(0.0)
        ...     for i in range(3):
        ...         total[...] += x * i
        ...     return total[...]
        >>> print(f(2.0), inert.grad(f)(2.0))
        6.0 3.0
    """
    if not isinstance(init_val, (Tracer, np.ndarray, np.generic)):
        init_val = np.asarray(init_val)
    return state.new_ref(init_val)


def empty_ref(shape: int | Sequence[int], dtype: DTypeLike = np.float64) -> Ref:
    """A new ref of the given shape and dtype (holding zeros).

    Example:
        >>> inert.freeze(inert.empty_ref((2,), np.int32))
        Array([0, 0], dtype=int32)
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return state.new_ref(zeros(ShapedArray(shape, np.dtype(dtype))))


def freeze(ref: Ref) -> Array:
    """The ref's contents as an array (a copy: the ref stays usable).

    Example:
        >>> ref = inert.new_ref(np.zeros(2))
        >>> ref[0] = 5.0
        >>> inert.freeze(ref)
        Array([5., 0.])
    """
    return returned(state.freeze(ref))


def _plan(ref, idx):
    shape = get_aval(ref).shape
    return index_plan(normalize_index(() if idx is None else idx, shape), shape)


def _as_result(region, plan):
    if get_aval(region).shape != plan.shape:
        region = reshape(region, plan.shape)
    return returned(region)


def get(ref: Ref, idx: Any = None) -> Array:
    """`ref[idx]`: a copy of the indexed part of the ref's contents."""
    plan = _plan(ref, idx)
    return _as_result(state.get(ref, *plan.indices, axes=plan.axes), plan)


def swap(ref: Ref, idx: Any, value: ArrayLike) -> Array:
    """Write `value` at `ref[idx]` (broadcast and cast as numpy's `x[idx] = value`);
    returns what was there."""
    plan = _plan(ref, idx)
    updates = fit_updates(value, get_aval(ref).dtype, plan)
    return _as_result(state.swap(ref, updates, *plan.indices, axes=plan.axes), plan)


def set(ref: Ref, idx: Any, value: ArrayLike) -> None:  # noqa: A001 — JAX's name
    """`ref[idx] = value`."""
    plan = _plan(ref, idx)
    state.swap(ref, fit_updates(value, get_aval(ref).dtype, plan), *plan.indices,
               axes=plan.axes)


def addupdate(ref: Ref, idx: Any, x: ArrayLike) -> None:
    """`ref[idx] += x` as one write (duplicate indices accumulate, as np.add.at)."""
    plan = _plan(ref, idx)
    state.addupdate(ref, fit_updates(x, get_aval(ref).dtype, plan), *plan.indices,
                    axes=plan.axes)


def _ref_repr(ref: Ref) -> str:
    return f"Ref({ref.buffer!r})"


for _name, _fn in {"__getitem__": get, "__setitem__": set, "__repr__": _ref_repr,
                   "__len__": lambda r: len(r.buffer)}.items():
    setattr(Ref, _name, _fn)
for _name in ("shape", "dtype", "ndim", "size"):
    setattr(Ref, _name, property(lambda r, name=_name: getattr(r.aval, name)))

__all__ = ["Ref", "addupdate", "empty_ref", "freeze", "get", "new_ref", "set", "swap"]


def __dir__():
    return __all__
