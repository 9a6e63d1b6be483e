"""`inert.flatten_util`: `ravel_pytree`, a pytree of arrays as one flat vector."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import get_aval
from ...core.typing import ArrayLike
from .. import numpy as jnp
from ..numpy._array import Array, returned, returning_arrays
from ..numpy._arrays import shape_error


def ravel_pytree(pytree: Any) -> tuple[Array, Callable[[ArrayLike], Any]]:
    """`(flat, unravel)`: the leaves raveled and concatenated into one 1-D array (in
    their promoted dtype), and the function that rebuilds the pytree from such a
    vector (each leaf in its own shape and dtype). Both are compositions of inert.numpy
    operations, so derivatives flow through `unravel` as through the raveling.

    Example:
        >>> flat, unravel = inert.flatten_util.ravel_pytree({"w": np.ones((2, 2)),
        ...                                                  "b": np.zeros(2)})
        >>> flat  # "b" first: a dict's leaves come in the order of its sorted keys
        Array([0., 0., 1., 1., 1., 1.])
        >>> unravel(flat)["w"].shape
        (2, 2)
    """
    leaves, treedef = tree_flatten(pytree)
    avals = [get_aval(x) for x in leaves]
    dtype = np.result_type(*(a.dtype for a in avals)) if avals else np.dtype(np.float64)
    flat = (jnp.concatenate([jnp.ravel(jnp.astype(x, dtype)) for x in leaves]) if leaves
            else jnp.zeros(0, dtype))
    sizes = [math.prod(a.shape) for a in avals]
    ends = np.cumsum(sizes).tolist()

    def unravel(vector):
        aval = get_aval(vector)
        if aval.shape != (sum(sizes),):
            raise shape_error(f"unravel: expected a vector of shape ({sum(sizes)},) like the "
                              f"one ravel_pytree returned, not {aval.str_short()}")
        parts = [jnp.reshape(vector[end - size:end], a.shape) for end, size, a in
                 zip(ends, sizes, avals)]
        return tree_unflatten(treedef, [jnp.astype(p, a.dtype) for p, a in zip(parts, avals)])

    return returned(flat, leaves), returning_arrays(unravel)


__all__ = ["ravel_pytree"]


def __dir__():
    return __all__
