"""Discrete choices: integers in a range, categories, permutations and samples of a
population."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...core.trace import get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives.control.scan import scan
from ...primitives.random import keys as rk
from .. import numpy as jnp
from ..numpy._array import Array
from ..numpy._arrays import shape_error
from ._keys import check_key, count, dtype_error, output_shape, param_shape, shape_tuple
from ._samplers import gumbel

# ---------------------------------------------------------------------------------
# Discrete choices


def randint(key: ArrayLike, shape: int | Sequence[int], minval: ArrayLike, maxval: ArrayLike,
            dtype: DTypeLike = int) -> Array:
    """Integers uniform on [minval, maxval) (minval where maxval <= minval)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise dtype_error(f"random.randint: dtype must be an integer type, not {dtype}")
    shape = param_shape("randint", shape, minval, maxval)
    check_key("randint", key)
    lo, hi = jnp.astype(minval, np.int64), jnp.astype(maxval, np.int64)
    span = jnp.astype(jnp.where(hi > lo, hi - lo, 1), np.uint64)
    offset = jnp.remainder(rk.random_bits(key, shape, np.dtype(np.uint64)), span)
    return jnp.astype(lo + jnp.astype(offset, np.int64), dtype)


def categorical(key: ArrayLike, logits: ArrayLike, axis: int = -1,
                shape: int | Sequence[int] | None = None) -> Array:
    """Indices along `axis` drawn with probabilities softmax(logits): the argmax of
    logits plus Gumbel noise."""
    logits = jnp.moveaxis(jnp.asarray(logits), axis, -1)
    *batch, n = get_aval(logits).shape
    shape = output_shape("categorical", shape, tuple(batch))
    noise = gumbel(key, (*shape, n), get_aval(logits).dtype)
    return jnp.argmax(logits + noise, axis=-1)


def permutation(key: ArrayLike, x: ArrayLike, axis: int = 0, independent: bool = False) -> Array:
    """A random permutation of `arange(x)` (an integer `x`) or of `x` along `axis`
    (each slice on its own if `independent`)."""
    check_key("permutation", key)
    if get_aval(x).shape == ():
        return jnp.asarray(rk.random_permutation(key, count("permutation", x)))
    x = jnp.asarray(x)
    n = get_aval(x).shape[axis]
    if not independent:
        return jnp.take(x, rk.random_permutation(key, n), axis=axis)
    moved = jnp.moveaxis(x, axis, -1)
    perms = rk.random_permutation(rk.random_split(key, get_aval(moved).shape[:-1]), n)
    return jnp.moveaxis(jnp.take_along_axis(moved, perms, -1), -1, axis)


def choice(key: ArrayLike, a: ArrayLike, shape: int | Sequence[int] = (), replace: bool = True,
           p: ArrayLike | None = None, axis: int = 0) -> Array:
    """Elements of `a` along `axis` (or of `arange(a)` for an integer `a`), with or
    without replacement, uniformly or with probabilities `p`."""
    check_key("choice", key)
    shape = shape_tuple("choice", shape)
    population = get_aval(a).shape != ()
    n = get_aval(a).shape[axis] if population else count("choice", a)
    k = math.prod(shape)
    if not replace and k > n:
        raise shape_error(f"random.choice: cannot take {k} samples from {n} without "
                          "replacement")
    if p is not None and get_aval(p).shape != (n,):
        raise shape_error(f"random.choice: p must have shape ({n},), not "
                          f"{get_aval(p).shape}")
    if p is None:
        index = (randint(key, shape, 0, n) if replace else
                 jnp.reshape(rk.random_permutation(key, n)[:k], shape))
    else:
        logp = jnp.where(p > 0, jnp.log(jnp.where(p > 0, p, 1.0)), -np.inf)
        index = (categorical(key, logp, shape=shape) if replace else
                 jnp.reshape(_top_k_indices(logp + gumbel(key, (n,)), k), shape))
    return jnp.take(a, index, axis=axis) if population else index


def _top_k_indices(scores, k: int):
    """The indices of the `k` largest scores, largest first (Gumbel top-k sampling)."""

    def take_largest(s, _):
        i = jnp.argmax(s)
        return s.at[i].set(-np.inf), i

    return scan(take_largest, scores, None, length=k)[1]
