"""Keys and the building blocks of every sampler: argument checks, shapes, and
uniform floats from a key's bits (`inert.random`'s module docstring says how)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...core.avals import is_float
from ...core.errors import DTypeError
from ...core.trace import get_aval, user_source_info
from ...core.typing import ArrayLike, DTypeLike
from ...primitives.random import keys as rk
from .. import numpy as jnp
from ..numpy._array import Array
from ..numpy._arrays import shape_error

SQRT2 = math.sqrt(2.0)


# ---------------------------------------------------------------------------------
# Argument checks: errors that point at the user's line


def dtype_error(message: str) -> DTypeError:
    return DTypeError(message).with_source(user_source_info())


# ---------------------------------------------------------------------------------
# Keys


def check_key(name: str, key, batched: bool = False):
    aval = get_aval(key)
    if aval.dtype != rk.KEY_DTYPE:
        raise dtype_error(f"random.{name}: key must be a uint32 array of shape (2,) made by "
                          f"inert.random.key or PRNGKey, not {aval.str_short()}")
    if batched and aval.shape[-1:] == (2,):
        return key
    if aval.shape != (2,):
        raise shape_error(f"random.{name}: key must have shape (2,), not {aval.str_short()}; "
                          "map over a batch of keys with vmap")
    return key


def key(seed: ArrayLike, *, impl: Any = None) -> Array:
    """A key from an integer seed: `[seed >> 32, seed & 0xFFFFFFFF]` of its 64 bits.
    `random.PRNGKey` is this function.

    Differences from JAX:
        A key is a uint32 array of shape `(2,)`, as JAX's raw keys are, but the numbers
        drawn from it come from numpy's Philox, not threefry: they differ from JAX's.

    Example:
        >>> inert.random.PRNGKey(0)
        Array([0, 0], dtype=uint32)
    """
    del impl  # one implementation: Philox
    aval = get_aval(seed)
    if aval.dtype.kind not in "iub" or aval.shape != ():
        raise dtype_error(f"random.key: seed must be an integer scalar, not {aval.str_short()}")
    bits = jnp.astype(jnp.astype(seed, np.int64), np.uint64)
    words = jnp.stack([jnp.floor_divide(bits, 2**32), jnp.remainder(bits, 2**32)])
    return jnp.astype(words, rk.KEY_DTYPE)


PRNGKey = key


def clone(key: ArrayLike) -> Array:
    """The key itself: inert's keys are values, never consumed."""
    return check_key("clone", key, batched=True)


def key_data(keys: ArrayLike) -> Array:
    """The keys' words, shape `(..., 2)` (a key is its words here)."""
    return check_key("key_data", keys, batched=True)


def wrap_key_data(key_bits_array: ArrayLike, *, impl: Any = None) -> Array:
    """Keys from their words: a `uint32` array of shape `(..., 2)`."""
    del impl
    return check_key("wrap_key_data", key_bits_array, batched=True)


def shape_tuple(name: str, shape) -> tuple[int, ...]:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
        raise shape_error(f"random.{name}: shape must be non-negative Python integers (a "
                          f"traced value cannot be a shape), not {shape}")
    return tuple(int(d) for d in shape)


def split(key: ArrayLike, num: int | Sequence[int] = 2) -> Array:
    """`num` new keys (shape `(num, 2)`; `num` may be a shape).

    Example:
        >>> key, subkey = inert.random.split(inert.random.PRNGKey(0))
        >>> key.shape, subkey.dtype
        ((2,), dtype('uint32'))
    """
    check_key("split", key)
    if isinstance(num, (int, np.integer)) and num < 0:
        raise shape_error(f"random.split: num must be non-negative, not {num}")
    return jnp.asarray(rk.random_split(key, shape_tuple("split", num)))


def fold_in(key: ArrayLike, data: ArrayLike) -> Array:
    """A new key from `key` and the integer `data` (taken modulo 2^32)."""
    check_key("fold_in", key)
    if get_aval(data).dtype.kind not in "iub":
        raise dtype_error(f"random.fold_in: data must be an integer, not "
                          f"{get_aval(data).str_short()}")
    return jnp.asarray(rk.random_fold_in(key, jnp.astype(data, rk.KEY_DTYPE)))


def bits(key: ArrayLike, shape: int | Sequence[int] = (), dtype: DTypeLike | None = None) -> Array:
    """Random unsigned integers, every bit uniform (uint32 by default)."""
    check_key("bits", key)
    dtype = np.dtype(np.uint32 if dtype is None else dtype)
    if dtype not in rk.BITS_DTYPES:
        raise dtype_error(f"random.bits: dtype must be an unsigned integer type, not {dtype}")
    return jnp.asarray(rk.random_bits(key, shape_tuple("bits", shape), dtype))


# ---------------------------------------------------------------------------------
# Uniform floats: the building block of every sampler


def float_dtype(name: str, dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if not is_float(dtype):
        raise dtype_error(f"random.{name}: dtype must be a float type, not {dtype}")
    return dtype


def mantissa(name, key, shape, dtype, drop: int):
    """Integers of `nmant + 1 - drop` random bits, the top bits of `dtype`'s width."""
    check_key(name, key)
    width = 8 * dtype.itemsize
    n = np.finfo(dtype).nmant + 1 - drop
    raw = rk.random_bits(key, shape_tuple(name, shape), np.dtype(f"uint{width}"))
    return jnp.astype(jnp.floor_divide(raw, 2 ** (width - n)), dtype), n


def unit(name, key, shape, dtype):
    """Uniform on [0, 1): every float of the form k 2^-(nmant+1)."""
    m, n = mantissa(name, key, shape, dtype, 0)
    return m * dtype.type(2.0 ** -n)


def open_unit(name, key, shape, dtype):
    """Uniform on (0, 1), symmetric about 1/2: (k + 1/2) 2^-nmant."""
    m, n = mantissa(name, key, shape, dtype, 1)
    return (m + dtype.type(0.5)) * dtype.type(2.0 ** -n)


def param_shape(name, shape, *params) -> tuple[int, ...]:
    """The output shape: `shape`, or the parameters' broadcast shape if None."""
    return output_shape(name, shape, *(get_aval(p).shape for p in params))


def output_shape(name, shape, *param_shapes) -> tuple[int, ...]:
    """`shape`, which the `param_shapes` must broadcast to; their broadcast if None."""
    if shape is None:
        return np.broadcast_shapes(*param_shapes)
    shape = shape_tuple(name, shape)
    try:
        fits = np.broadcast_shapes(shape, *param_shapes) == shape
    except ValueError:
        fits = False
    if not fits:
        raise shape_error(f"random.{name}: parameter shapes {list(param_shapes)} do not "
                          f"broadcast to shape {shape}")
    return shape


def count(name: str, n) -> int:
    """A population size given as an integer (concrete: it is a shape)."""
    if get_aval(n).dtype.kind not in "iu":
        raise dtype_error(f"random.{name}: expected an integer or an array, not "
                          f"{get_aval(n).str_short()}")
    return int(n)
