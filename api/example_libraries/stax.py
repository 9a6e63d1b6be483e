"""`inert.example_libraries.stax`: JAX's minimal neural-network library, on inert.

A layer is a pair `(init_fun, apply_fun)`: `init_fun(rng, input_shape)` returns the
output shape and the parameters (a pytree), `apply_fun(params, inputs, **kwargs)`
the outputs. Combinators (`serial`, `parallel`, `FanOut`, ...) build layers from
layers. The names, signatures and default layouts are JAX's: convolutions and
pooling take NHWC inputs and HWIO kernels unless told otherwise.

Keys: `rng` is a key as JAX's `random.PRNGKey(seed)` spells it (two uint32 words) or an
integer seed; parameters are drawn from numpy's Philox generator keyed by it, and
each layer's key is derived from it the same way.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...core.typing import ArrayLike, DTypeLike
from .. import lax, random
from .. import numpy as jnp
from ..nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)

logsoftmax = log_softmax  # stax's own name for it, as in JAX

# ---------------------------------------------------------------------------------
# Keys and initialisers


#: A layer: the pair `(init_fun, apply_fun)`.
Layer = tuple[Callable, Callable]

#: An initializer `init(key, shape, dtype)`, giving numpy arrays.
Initializer = Callable[..., np.ndarray]


def _generator(key) -> np.random.Generator:
    """Philox keyed by the key's 64 bits (an integer seed's, or two 32-bit words')."""
    words = np.asarray(key, np.uint64).reshape(-1)
    bits = int(words[0]) if words.size == 1 else int(words[0]) << 32 | int(words[1])
    return np.random.Generator(np.random.Philox(key=bits))


def _split(key, num: int = 2) -> np.ndarray:
    """`num` independent keys (an array of shape (num, 2)) derived from `key`."""
    return _generator(key).integers(0, 2**32, (num, 2), dtype=np.uint32)


def zeros(key: ArrayLike, shape: Sequence[int], dtype: DTypeLike = np.float64) -> np.ndarray:
    """An initializer: zeros of `shape` (the key is unused), as stax's."""
    return np.zeros(shape, dtype)


def ones(key: ArrayLike, shape: Sequence[int], dtype: DTypeLike = np.float64) -> np.ndarray:
    """An initializer: ones of `shape` (the key is unused), as stax's."""
    return np.ones(shape, dtype)


def normal(stddev: float = 1e-2) -> Initializer:
    """The initializer of normal numbers of standard deviation `stddev` (also `randn`), drawn
    from numpy's Philox keyed by the key: not JAX's numbers for the same key."""
    def init(key, shape, dtype=np.float64):
        return (_generator(key).standard_normal(shape) * stddev).astype(dtype)

    return init


def glorot_normal(in_axis: int = -2, out_axis: int = -1) -> Initializer:
    """Variance 2 / (fan_in + fan_out), the other axes being the receptive field."""

    def init(key, shape, dtype=np.float64):
        receptive = math.prod(shape) / (shape[in_axis] * shape[out_axis])
        fan_avg = (shape[in_axis] + shape[out_axis]) * receptive / 2
        return (_generator(key).standard_normal(shape) / np.sqrt(fan_avg)).astype(dtype)

    return init


randn = normal
glorot = glorot_normal
_DENSE_W, _DENSE_B, _CONV_B = glorot_normal(), normal(), normal(1e-6)  # JAX's defaults

# ---------------------------------------------------------------------------------
# Layers


def Dense(out_dim: int, W_init: Initializer = _DENSE_W,  # noqa: N802, N803
          b_init: Initializer = _DENSE_B) -> Layer:
    """A fully connected layer: `inputs @ W + b`."""

    def init_fun(rng, input_shape):
        k1, k2 = _split(rng)
        params = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return (*input_shape[:-1], out_dim), params

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers: tuple[str, str, str], out_chan: int,  # noqa: N802
                filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                padding: str | Sequence[tuple[int, int]] = "VALID",
                W_init: Initializer | None = None,  # noqa: N803
                b_init: Initializer = _CONV_B) -> Layer:
    """A convolution with a bias per output channel, in the given layouts."""
    one = (1,) * len(filter_shape)
    return _conv_layer(dimension_numbers, out_chan, filter_shape, strides or one, padding,
                       W_init, b_init, lax.conv_general_shape_tuple,
                       lambda x, W, strides: lax.conv_general_dilated(
                           x, W, strides, padding, one, one,
                           dimension_numbers=dimension_numbers))


def GeneralConvTranspose(dimension_numbers: tuple[str, str, str], out_chan: int,  # noqa: N802
                         filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                         padding: str | Sequence[tuple[int, int]] = "VALID",
                         W_init: Initializer | None = None,  # noqa: N803
                         b_init: Initializer = _CONV_B) -> Layer:
    """A transposed convolution (`lax.conv_transpose`) with a bias per channel."""
    return _conv_layer(dimension_numbers, out_chan, filter_shape,
                       strides or (1,) * len(filter_shape), padding, W_init, b_init,
                       lax.conv_transpose_shape_tuple,
                       lambda x, W, strides: lax.conv_transpose(
                           x, W, strides, padding, dimension_numbers=dimension_numbers))


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init,  # noqa: N803
                b_init, output_shape_of, convolve):
    """The (init_fun, apply_fun) pair both convolution layers share: a kernel in
    `dimension_numbers`' layout, a bias per output channel, and `convolve`."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, out_chan, input_shape[lhs_spec.index("C")],
                                     filter_shape)
        output_shape = output_shape_of(input_shape, kernel_shape, strides, padding,
                                       dimension_numbers)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = _split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return convolve(inputs, W, strides) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec, out_chan, in_chan, filter_shape) -> tuple:
    spatial = iter(filter_shape)
    return tuple(out_chan if c == "O" else in_chan if c == "I" else next(spatial)
                 for c in rhs_spec)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))


def BatchNorm(axis: int | Sequence[int] = (0, 1, 2), epsilon: float = 1e-5,  # noqa: N802
              center: bool = True, scale: bool = True, beta_init: Initializer = zeros,
              gamma_init: Initializer = ones) -> Layer:
    """Standardise over `axis` (the batch statistics), then scale and shift per
    feature."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = _split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        mean = jnp.mean(x, axis, keepdims=True)
        z = (x - mean) / jnp.sqrt(jnp.var(x, axis, keepdims=True) + epsilon)
        if scale:
            z = gamma[expand] * z
        return z + beta[expand] if center else z

    return init_fun, apply_fun


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """A layer without parameters applying `fun` to its input."""
    init_fun = lambda rng, input_shape: (input_shape, ())  # noqa: E731
    apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)  # noqa: E731
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape: Sequence[int], strides: Sequence[int] | None = None,  # noqa: N802
                     padding: str | Sequence[tuple[int, int]] = "VALID",
                     spec: str | None = None) -> Layer:
        """Pooling over the spatial axes (all but N and C; NHWC unless `spec`)."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (0, len(window_shape) + 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window_shape = (*window_shape[:i], 1, *window_shape[i:])
            strides = (*strides[:i], 1, *strides[i:])

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding) \
                if isinstance(padding, str) else padding
            return lax.reduce_window_shape_tuple(input_shape, window_shape, strides, pads), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    """Divide each window's sum by the number of input (not padding) elements in it."""

    def rescale(outputs, inputs, spec):
        non_spatial = (0, jnp.ndim(inputs) - 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        spatial = tuple(d for i, d in enumerate(jnp.shape(inputs)) if i not in non_spatial)
        counts = lax.reduce_window(np.ones(spatial), 0.0, lax.add, dims, strides, padding)
        for i in sorted(non_spatial):
            counts = np.expand_dims(counts, i)
        return outputs / counts

    return rescale


MaxPool = _pooling_layer(lax.max, -np.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _normalize_by_window_size)


def Dropout(rate: float, mode: str = "train") -> Layer:  # noqa: N802
    """JAX's stax.Dropout: in "train" mode each input is kept with probability `rate`
    (JAX's name for the *keep* rate) and scaled by 1/rate, drawn from `rng=` by
    `inert.random.bernoulli`; in any other mode the layer is the identity."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if mode != "train":
            return inputs
        if rng is None:
            raise ValueError("Dropout in train mode needs a key: apply_fun(params, inputs, "
                             "rng=key)")
        keep = random.bernoulli(rng, rate, jnp.shape(inputs))
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


def _flatten_shape(input_shape):
    return input_shape[0], math.prod(input_shape[1:])


Flatten = (lambda rng, input_shape: (_flatten_shape(input_shape), ()),
           lambda params, inputs, **kwargs: jnp.reshape(inputs, (jnp.shape(inputs)[0], -1)))
Identity = (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


def FanOut(num: int) -> Layer:  # noqa: N802
    """`num` copies of the input, for `parallel` layers."""
    init_fun = lambda rng, input_shape: ([input_shape] * num, ())  # noqa: E731
    apply_fun = lambda params, inputs, **kwargs: [inputs] * num  # noqa: E731
    return init_fun, apply_fun


def _fan_in_sum_shape(rng, input_shape):
    return input_shape[0], ()


FanInSum = (_fan_in_sum_shape, lambda params, inputs, **kwargs: sum(inputs[1:], inputs[0]))


def FanInConcat(axis: int = -1) -> Layer:  # noqa: N802
    """The inputs joined along `axis`."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        return (*input_shape[0][:ax], concat_size, *input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


# ---------------------------------------------------------------------------------
# Combinators


def serial(*layers: Layer) -> Layer:
    """The layers one after another; each gets its own key (`rng=` at apply time).

    Example:
        >>> stax = inert.example_libraries.stax
        >>> init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(1))
        >>> out_shape, params = init_fun(inert.random.PRNGKey(0), (-1, 3))
        >>> out_shape, apply_fun(params, np.ones((2, 3))).shape
        ((-1, 1), (2, 1))
    """
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = _split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers side by side: input i goes to layer i (see FanOut, FanInSum)."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = _split(rng, len(layers))
        shapes, params = zip(*(init(r, shape) for init, r, shape in
                               zip(init_funs, rngs, input_shape)))
        return list(shapes), list(params)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """A layer built, at init and at apply time, from the shape of its input."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(jnp.shape(inputs))[1](params, inputs, **kwargs)

    return init_fun, apply_fun


__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "elu", "gelu",
    "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones",
    "parallel", "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax",
    "softplus", "standardize", "zeros",
]


def __dir__():
    return __all__
