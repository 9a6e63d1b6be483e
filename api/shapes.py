"""`eval_shape`: the shapes and dtypes a function returns, found by tracing it, without
computing anything; and `ShapeDtypeStruct`, the value that stands for an array there."""

from __future__ import annotations

import functools
from typing import Callable

import attrs
import numpy as np

from ..core.pytree import tree_map, tree_unflatten
from ..core.traceback_util import api_boundary
from .transforms import trace_to_closed_jaxpr


@attrs.frozen(repr=False)
class ShapeDtypeStruct:
    """jax.ShapeDtypeStruct: an array's shape and dtype, no data. `sharding` is accepted
    (inert has one device) and kept as given."""

    shape: tuple[int, ...] = attrs.field(converter=lambda s: tuple(int(d) for d in s))
    dtype: np.dtype = attrs.field(converter=np.dtype)
    weak_type: bool = False
    sharding: object = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


@api_boundary
def eval_shape(fun: Callable, *args, **kwargs):
    """jax.eval_shape: `fun`'s outputs as `ShapeDtypeStruct`s, at the shapes and dtypes
    of `args` (arrays, numbers, or anything with `.shape` and `.dtype`, such as a
    `ShapeDtypeStruct`). `fun` is traced, as `make_jaxpr` would, and nothing is
    evaluated: an abstract argument stands in as a zero-stride array of its shape,
    which holds one element whatever its shape."""
    concrete = tree_map(_stand_in, args, is_leaf=_is_abstract)
    closed, out_store = trace_to_closed_jaxpr(functools.partial(fun, **kwargs), concrete,
                                              frozenset())
    outs = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
    return tree_unflatten(out_store[0], outs)


def _is_abstract(x) -> bool:
    """Whether `x` describes an array without being one (a ShapeDtypeStruct is an attrs
    class, which would otherwise be flattened as a pytree)."""
    return not isinstance(x, (np.ndarray, np.generic)) and hasattr(x, "shape") and hasattr(
        x, "dtype")


def _stand_in(x):
    if not _is_abstract(x):
        return x
    return np.broadcast_to(np.zeros((), np.dtype(x.dtype)), tuple(x.shape))
