"""`inert.typing`: the types in inert's public signatures, as `jax.typing` names them.

A transform's function runs on tracers, which stand in for arrays while it is traced;
a static type checker sees the user's code pass and get arrays, so the signatures
name arrays. The functions' results are `inert.Array` objects (`api.numpy._array`), which
are numpy arrays: `ArrayLike` takes them as `np.ndarray`. The namespaces' functions
say so (they return `Array`), except the primitives' bind wrappers that `inert.lax`
re-exports: they live below `api/`, which defines `Array`, so they name their results
`np.ndarray`, which an `Array` is (`inert.lax` makes them `Array` objects).
"""

from __future__ import annotations

from typing import Union

import numpy as np

__all__ = ["ArrayLike", "DTypeLike"]

#: The arrays the functions of `inert.numpy` and the transforms take, as JAX's
#: `ArrayLike`: an `inert.Array` or another numpy array, a numpy scalar, or a Python
#: number or bool. As in JAX, a list is not one: the functions take lists, as numpy's
#: do, but a type checker flags them; `jnp.array` and `jnp.asarray` take any object.
ArrayLike = Union[np.ndarray, np.generic, bool, int, float, complex]

#: A dtype or a name of one (`np.float32`, `"float32"`, `float`).
DTypeLike = Union[str, type, np.dtype]
