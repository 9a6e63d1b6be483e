"""`inert.nn.initializers`: jax.nn.initializers, each a function `init(key, shape,
dtype)` built on inert.random, so it is jit-able and a pure function of its key.

`variance_scaling` underlies the named schemes: weights of variance `scale / fan`,
where `fan` is the fan-in, the fan-out or their mean (`mode`), computed as JAX does
(the axes other than `in_axis`, `out_axis` and `batch_axis` form the receptive
field), drawn from a truncated normal (within two standard deviations, rescaled to
keep the variance), a normal or a uniform (`distribution`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ...core.typing import ArrayLike, DTypeLike
from .. import numpy as jnp
from .. import random
from ..numpy._array import Array, return_arrays_from, returning_arrays
from ..numpy._arrays import shape_error

#: What the factories below return, as `jax.nn.initializers.Initializer`: a function
#: `init(key, shape, dtype)` giving the weights.
Initializer = Callable[..., Array]

_TRUNCATED_STD = 0.87962566103423978  # std of a standard normal truncated to (-2, 2)


def zeros(key: ArrayLike, shape: int | Sequence[int], dtype: DTypeLike = float) -> Array:
    """An initializer (key, shape, dtype) -> zeros of that shape; the key is unused."""
    del key
    return jnp.zeros(shape, dtype)


def ones(key: ArrayLike, shape: int | Sequence[int], dtype: DTypeLike = float) -> Array:
    """An initializer (key, shape, dtype) -> ones of that shape; the key is unused."""
    del key
    return jnp.ones(shape, dtype)


def constant(value: ArrayLike, dtype: DTypeLike = float) -> Initializer:
    """The initializer giving arrays filled with `value` (the key is unused)."""
    def init(key, shape, dtype=dtype):
        del key
        return jnp.full(shape, value, dtype)

    return returning_arrays(init)


def normal(stddev: float = 1e-2, dtype: DTypeLike = float) -> Initializer:
    """The initializer giving normal numbers of standard deviation `stddev` from its key."""
    def init(key, shape, dtype=dtype):
        return random.normal(key, shape, dtype) * stddev

    return returning_arrays(init)


def uniform(scale: ArrayLike = 1e-2, dtype: DTypeLike = float) -> Initializer:
    """Uniform on [0, scale), as in JAX."""
    def init(key, shape, dtype=dtype):
        return random.uniform(key, shape, dtype, maxval=scale)

    return returning_arrays(init)


def _fans(shape, in_axis, out_axis, batch_axis) -> tuple[float, float]:
    if len(shape) < 2:
        raise shape_error(f"variance_scaling: a weight has at least 2 axes, not shape {shape}")
    ndim = len(shape)
    batch = {a % ndim for a in ((batch_axis,) if isinstance(batch_axis, int) else batch_axis)}
    special = {in_axis % ndim, out_axis % ndim} | batch
    receptive = math.prod(d for i, d in enumerate(shape) if i not in special)
    return shape[in_axis] * receptive, shape[out_axis] * receptive


def variance_scaling(scale: ArrayLike, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: Sequence[int] = (), dtype: DTypeLike = float) -> Initializer:
    """The initializer of variance scale / fan, as JAX's: `mode` picks the fan (fan_in, fan_out
    or their mean, the axes other than in, out and batch being the receptive field),
    `distribution` the shape (a normal truncated at two standard deviations, rescaled to
    that variance; a normal; a uniform)."""
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"variance_scaling: mode must be fan_in, fan_out or fan_avg, not "
                         f"{mode!r}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"variance_scaling: distribution must be truncated_normal, normal "
                         f"or uniform, not {distribution!r}")

    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = scale / fan
        if distribution == "truncated_normal":
            std = math.sqrt(variance) / _TRUNCATED_STD
            return random.truncated_normal(key, -2.0, 2.0, shape, dtype) * std
        if distribution == "normal":
            return random.normal(key, shape, dtype) * math.sqrt(variance)
        bound = math.sqrt(3 * variance)
        return random.uniform(key, shape, dtype, minval=-bound, maxval=bound)

    return returning_arrays(init)


def orthogonal(scale: ArrayLike = 1.0, column_axis: int = -1,
               dtype: DTypeLike = float) -> Initializer:
    """Weights whose matrix (`column_axis` against the rest) has orthonormal rows or
    columns, times `scale`: the Q of a normal matrix's QR, signs fixed by R."""
    def init(key, shape, dtype=dtype):
        shape = tuple(shape)
        if len(shape) < 2:
            raise shape_error(f"orthogonal: a weight has at least 2 axes, not shape {shape}")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        tall = (max(n_rows, n_cols), min(n_rows, n_cols))
        q, r = jnp.linalg.qr(random.normal(key, tall, dtype))
        q = q * jnp.sign(jnp.diagonal(r))
        if n_rows < n_cols:
            q = q.T
        rest = tuple(d for i, d in enumerate(shape) if i != column_axis % len(shape))
        return scale * jnp.moveaxis(jnp.reshape(q, (*rest, n_cols)), -1, column_axis)

    return returning_arrays(init)


def _scheme(scale, mode, distribution, doc):
    def make(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
             batch_axis: Sequence[int] = (), dtype: DTypeLike = float) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    make.__doc__ = doc
    return make


glorot_normal = _scheme(1.0, "fan_avg", "truncated_normal", "Glorot (Xavier): variance 1/fan_avg.")
glorot_uniform = _scheme(1.0, "fan_avg", "uniform", "Glorot (Xavier), uniform.")
he_normal = _scheme(2.0, "fan_in", "truncated_normal", "He (Kaiming): variance 2/fan_in.")
he_uniform = _scheme(2.0, "fan_in", "uniform", "He (Kaiming), uniform.")
lecun_normal = _scheme(1.0, "fan_in", "truncated_normal", "LeCun: variance 1/fan_in.")
lecun_uniform = _scheme(1.0, "fan_in", "uniform", "LeCun, uniform.")
xavier_normal, xavier_uniform = glorot_normal, glorot_uniform
kaiming_normal, kaiming_uniform = he_normal, he_uniform

__all__ = [
    "constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
    "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
    "orthogonal",
    "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]

return_arrays_from(globals(), ["zeros", "ones"])


def __dir__():
    return __all__
