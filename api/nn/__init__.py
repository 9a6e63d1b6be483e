"""`inert.nn`: jax.nn's activations and normalisations, on inert.numpy.

Each is a composition with JAX's derivative at its kinks: the branch taken at a kink
is the one whose derivative JAX gives (`relu'(0) = 0`, `leaky_relu'(0) = 1`,
`hard_tanh'(±1) = 1`). Exponentials never see a large argument: `softplus` is
`logaddexp(x, 0)`, `log_softmax` subtracts the (constant) maximum before `exp`, and
the negative branch of `elu`/`celu`/`selu` reads its operand through a second
`where`, so the branch not taken produces no overflow and no NaN derivative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...core.typing import ArrayLike, DTypeLike
from ...primitives import elementwise as ew
from .. import numpy as jnp
from ..numpy._array import Array, return_arrays_from
from ..numpy._arrays import shape_error
from ..scipy import special as _special
from . import initializers

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def relu(x: ArrayLike) -> Array:
    """`max(x, 0)`, with gradient 0 at 0 (as JAX's).

    Example:
        >>> print(inert.nn.relu(np.array([-1.0, 2.0])), inert.grad(inert.nn.relu)(0.0))
        [0. 2.] 0.0
    """
    x = jnp.asarray(x)
    return jnp.where(x > 0, x, jnp.zeros_like(x))


def relu6(x: ArrayLike) -> Array:
    """min(max(x, 0), 6), with derivative 0 at both kinks (JAX's)."""
    x = jnp.asarray(x)
    return jnp.where(x > 0, jnp.where(x < 6, x, jnp.full_like(x, 6)), jnp.zeros_like(x))


def hard_sigmoid(x: ArrayLike) -> Array:
    """relu6(x + 3) / 6."""
    return relu6(jnp.asarray(x) + 3.0) / 6.0


def hard_silu(x: ArrayLike) -> Array:
    """x * hard_sigmoid(x) (also `hard_swish`): a piecewise-quadratic silu."""
    x = jnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 0.01) -> Array:
    """x where x >= 0, else negative_slope * x."""
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def _expm1_of_negative_part(x):
    """expm1(x) where x <= 0, 0 elsewhere: the branch of the ELUs below zero."""
    return jnp.expm1(jnp.where(x > 0, jnp.zeros_like(x), x))


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """x where x > 0, else alpha * (exp(x) - 1); the untaken branch never overflows."""
    x = jnp.asarray(x)
    return jnp.where(x > 0, x, alpha * _expm1_of_negative_part(x))


def selu(x: ArrayLike) -> Array:
    """scale * elu(x, alpha) with the self-normalising constants of Klambauer et al."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Array:
    """x where x > 0, else alpha * (exp(x / alpha) - 1)."""
    x = jnp.asarray(x)
    return jnp.where(x > 0, x, alpha * _expm1_of_negative_part(x / alpha))


def gelu(x: ArrayLike, approximate: bool = True) -> Array:
    """x Phi(x), or its tanh approximation (JAX's default)."""
    x = jnp.asarray(x)
    if approximate:
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + jnp.tanh(inner))
    return 0.5 * x * (1 + _special.erf(x / math.sqrt(2.0)))


def sigmoid(x: ArrayLike) -> Array:
    """`1 / (1 + exp(-x))`, the `logistic` primitive: no overflow for large `|x|`."""
    return jnp.asarray(ew.logistic(jnp.asarray(x)))


def silu(x: ArrayLike) -> Array:
    """x * sigmoid(x) (also `swish`)."""
    x = jnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def softplus(x: ArrayLike) -> Array:
    """`log(1 + exp(x))`, stable for large `|x|`."""
    return jnp.logaddexp(x, 0.0)


def mish(x: ArrayLike) -> Array:
    """x * tanh(softplus(x))."""
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Array:
    """(x + sqrt(x^2 + b)) / 2, a smooth relu."""
    x = jnp.asarray(x)
    return (x + jnp.sqrt(x * x + b)) / 2


def log_sigmoid(x: ArrayLike) -> Array:
    """`log(sigmoid(x)) = -softplus(-x)`, accurate for large `|x|`."""
    return -softplus(-jnp.asarray(x))


def soft_sign(x: ArrayLike) -> Array:
    """`x / (|x| + 1)`."""
    x = jnp.asarray(x)
    return x / (jnp.abs(x) + 1)


def hard_tanh(x: ArrayLike) -> Array:
    """x clipped to [-1, 1]."""
    x = jnp.asarray(x)
    return jnp.where(x > 1, jnp.ones_like(x), jnp.where(x < -1, -jnp.ones_like(x), x))


def glu(x: ArrayLike, axis: int = -1) -> Array:
    """The first half of `x` along `axis`, gated by the sigmoid of the second half."""
    x = jnp.asarray(x)
    if jnp.shape(x)[axis] % 2:
        raise shape_error(f"glu: axis {axis} of {jnp.shape(x)} must have even size")
    a, b = jnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def softmax(x: ArrayLike, axis: int | Sequence[int] = -1) -> Array:
    """`exp(x) / sum(exp(x))` along `axis`, computed shifted by the maximum (as scipy's).

    Example:
        >>> inert.nn.softmax(np.array([0.0, np.log(3.0)]))
        Array([0.25, 0.75])
    """
    return _special.softmax(x, axis=axis)


def log_softmax(x: ArrayLike, axis: int | Sequence[int] = -1) -> Array:
    """x - logsumexp(x) along `axis`."""
    return _special.log_softmax(x, axis=axis)


logsumexp = _special.logsumexp


def one_hot(x: ArrayLike, num_classes: int, *, dtype: DTypeLike = float, axis: int = -1) -> Array:
    """`x`'s integers as one-hot vectors along a new axis `axis` (all zero out of range).

    Example:
        >>> inert.nn.one_hot(np.array([0, 2]), 3)
        Array([[1., 0., 0.],
               [0., 0., 1.]])
    """
    x = jnp.asarray(x)
    classes = jnp.arange(num_classes)
    hot = jnp.expand_dims(x, -1) == classes
    return jnp.moveaxis(jnp.astype(hot, np.dtype(dtype)), -1, axis)


def standardize(x: ArrayLike, axis: int | Sequence[int] = -1, mean: ArrayLike | None = None,
                variance: ArrayLike | None = None, epsilon: ArrayLike = 1e-5) -> Array:
    """(x - mean) / sqrt(variance + epsilon), the moments over `axis` unless given."""
    x = jnp.asarray(x)
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True)
    if variance is None:
        variance = jnp.var(x, axis=axis, keepdims=True)
    return (x - mean) / jnp.sqrt(variance + epsilon)


__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "initializers", "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "mish",
    "one_hot", "relu", "relu6", "selu", "sigmoid", "silu", "soft_sign", "softmax", "softplus",
    "squareplus", "standardize", "swish",
]

return_arrays_from(globals(), [n for n in __all__ if n != "initializers"])


def __dir__():
    return __all__
