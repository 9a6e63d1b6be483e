"""`inert.lax`: the jax.lax subset, on inert's primitives.

Each name is a primitive's bind wrapper with jax.lax's signature, so it stages
exactly one equation (no numpy-style broadcasting or promotion beyond what the
primitive itself does); plus the few jax.lax conveniences that are one primitive
with its arguments rearranged (`select`, `full`, `dot`, `broadcast`), and `div`, whose
integers round towards zero as JAX's do (three primitives: numpy's `//` floors).
"""

# ruff: noqa: F401 — this module is a namespace of re-exports

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.special as sc

from ...core.trace import get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives import elementwise
from ...primitives.collectives import all_gather, axis_index, pmax, pmean, pmin, psum
from ...primitives.control.cond import cond, switch
from ...primitives.control.scan import scan
from ...primitives.control.while_loop import fori_loop, while_loop
from ...primitives.elementwise import (
    RoundingMethod,
    abs,
    acos,
    acosh,
    add,
    and_,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cbrt,
    ceil,
    clamp,
    complex,
    conj,
    cos,
    cosh,
    eq,
    exp,
    exp2,
    expm1,
    floor,
    floor_divide,
    ge,
    gt,
    imag,
    integer_pow,
    is_finite,
    le,
    log,
    log1p,
    logistic,
    lt,
    max,
    min,
    mul,
    ne,
    neg,
    not_,
    or_,
    pow,
    real,
    rem,
    round,
    rsqrt,
    select_n,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    stop_gradient,
    sub,
    tan,
    tanh,
    xor,
)
from ...primitives.fft import FftType, fft
from ...primitives.indexing.dynamic_slices import dynamic_slice, dynamic_update_slice
from ...primitives.linalg import dot_general as contraction
from ...primitives.reductions import (
    argmax,
    argmin,
    cummax,
    cummin,
    cumprod,
    cumsum,
    reduce_and,
    reduce_max,
    reduce_min,
    reduce_or,
    reduce_prod,
)
from ...primitives.shape import structural
from ...primitives.shape.slicing import concatenate, pad, slice, slice_in_dim
from ...primitives.shape.structural import (
    broadcast_in_dim,
    convert_element_type,
    expand_dims,
    reduce_sum,
    reshape,
    rev,
    squeeze,
    transpose,
)
from ...primitives.special import betainc as regularized_incomplete_beta
from ...primitives.special import (
    digamma,
    erf,
    erfc,
    erfinv,
    igamma,
    igamma_grad_a,
    igammac,
    polygamma,
    zeta,
)
from ...primitives.special import gammaln as lgamma
from ..numpy._array import Array, derived_docstring, return_arrays_from
from ..numpy._precision import Precision, check_precision
from ..numpy._shape import take_along_axis
from ..numpy._sorting import argsort
from . import linalg
from ._convolution import (
    ConvDimensionNumbers,
    conv,
    conv_dimension_numbers,
    conv_general_dilated,
    conv_general_shape_tuple,
    conv_transpose,
    conv_transpose_shape_tuple,
    conv_with_general_padding,
    padtype_to_pads,
    reduce_window,
    reduce_window_shape_tuple,
)
from ._scans import associative_scan, map


def div(x: ArrayLike, y: ArrayLike) -> Array:
    """x / y element-wise, as jax.lax.div: integers rounded towards zero (C's division,
    `-7 / 2` is -3; numpy's `//` floors), floats divided truly. An integer division by
    zero gives 0 (JAX leaves its value to the backend)."""
    if get_aval(x).dtype.kind in "iu" and get_aval(y).dtype.kind in "iu":
        return floor_divide(sub(x, rem(x, y)), y)  # exact: x - rem(x, y) is a multiple of y
    return elementwise.div(x, y)


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """jax.lax.select: `select_n` with the cases in the other order."""
    return select_n(pred, on_false, on_true)


def full(shape: Sequence[int], fill_value: ArrayLike,
         dtype: DTypeLike | None = None) -> Array:
    """An array of `fill_value`, as a broadcast of one scalar."""
    dtype = get_aval(fill_value).dtype if dtype is None else np.dtype(dtype)
    return broadcast_in_dim(convert_element_type(fill_value, dtype), tuple(shape), ())


def full_like(x: ArrayLike, fill_value: ArrayLike, dtype: DTypeLike | None = None,
              shape: Sequence[int] | None = None) -> Array:
    """An array like `x` (its shape and dtype unless `shape` or `dtype` say otherwise) filled
    with `fill_value`, as a broadcast of one scalar."""
    aval = get_aval(x)
    return full(aval.shape if shape is None else shape, fill_value,
                aval.dtype if dtype is None else dtype)


def broadcast(operand: ArrayLike, sizes: Sequence[int]) -> Array:
    """Leading axes of `sizes` in front of `operand`'s."""
    ndim = get_aval(operand).ndim
    shape = (*sizes, *get_aval(operand).shape)
    return broadcast_in_dim(operand, shape, range(len(sizes), len(sizes) + ndim))


def dot_general(lhs: ArrayLike, rhs: ArrayLike, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: DTypeLike | None = None) -> Array:
    """jax.lax.dot_general; `precision` is checked and ignored (`Precision`)."""
    check_precision(precision, "dot_general")
    return contraction.dot_general(lhs, rhs, dimension_numbers, preferred_element_type)


def dot(lhs: ArrayLike, rhs: ArrayLike, precision: Any = None,
        preferred_element_type: DTypeLike | None = None) -> Array:
    """Vector/matrix products: the last axis of `lhs` with the first of `rhs`."""
    return dot_general(lhs, rhs, (((get_aval(lhs).ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def iota(dtype: DTypeLike, size: int) -> Array:
    """0, 1, ..., size - 1."""
    return structural.iota(dtype, (size,), 0)


broadcasted_iota = structural.iota


def dynamic_slice_in_dim(operand: ArrayLike, start_index: ArrayLike, slice_size: int,
                         axis: int = 0) -> Array:
    """`dynamic_slice` along one axis; the start clamped so the slice fits, as in JAX."""
    shape = get_aval(operand).shape
    starts = [start_index if i == axis else 0 for i in range(len(shape))]
    return dynamic_slice(operand, starts, [slice_size if i == axis else d
                                           for i, d in enumerate(shape)])


def dynamic_index_in_dim(operand: ArrayLike, index: ArrayLike, axis: int = 0,
                         keepdims: bool = True) -> Array:
    """The slice at `index` along `axis`, that axis kept (size 1) or dropped."""
    block = dynamic_slice_in_dim(operand, index, 1, axis)
    return block if keepdims else squeeze(block, (axis,))


def dynamic_update_slice_in_dim(operand: ArrayLike, update: ArrayLike, start_index: ArrayLike,
                                axis: int) -> Array:
    """`dynamic_update_slice` at `start_index` along `axis`, 0 along the others."""
    starts = [start_index if i == axis else 0 for i in range(get_aval(operand).ndim)]
    return dynamic_update_slice(operand, update, starts)


def top_k(operand: ArrayLike, k: int) -> tuple[Array, Array]:
    """jax.lax.top_k: the `k` largest entries along the last axis, largest first, and
    their indices; equal entries in their order in `operand` (a stable sort). The
    values are a gather of `operand`, so they are differentiable."""
    n = get_aval(operand).shape[-1]
    if not 0 <= k <= n:
        raise ValueError(f"top_k: k={k} must be between 0 and the last axis' size {n}")
    indices = slice_in_dim(argsort(operand, axis=-1, descending=True), 0, k, 1,
                           get_aval(operand).ndim - 1)
    return take_along_axis(operand, indices, -1), convert_element_type(indices, np.int32)

__all__ = [
    "ConvDimensionNumbers", "Precision", "conv", "conv_dimension_numbers", "conv_general_dilated",
    "conv_general_shape_tuple", "conv_transpose", "conv_transpose_shape_tuple",
    "conv_with_general_padding", "padtype_to_pads", "reduce_window", "reduce_window_shape_tuple",
    "FftType", "complex", "conj", "fft", "imag", "real",
    "RoundingMethod", "abs", "acos", "acosh", "add", "and_", "argmax", "argmin", "asin",
    "all_gather", "associative_scan", "axis_index", "dynamic_index_in_dim", "pmax", "pmean",
    "pmin", "psum", "dynamic_slice_in_dim",
    "dynamic_update_slice_in_dim", "map", "top_k",
    "asinh", "atan", "atan2", "atanh", "broadcast", "broadcast_in_dim", "broadcasted_iota",
    "cbrt", "ceil", "clamp", "concatenate", "cond", "convert_element_type", "cos", "cosh",
    "cummax", "cummin", "cumprod", "cumsum", "digamma", "div", "dot", "dot_general",
    "dynamic_slice", "dynamic_update_slice", "eq", "erf", "erfc", "erfinv", "exp", "exp2",
    "expand_dims", "expm1", "floor", "fori_loop", "full", "full_like", "ge", "gt", "igamma",
    "igamma_grad_a",
    "igammac", "integer_pow", "iota", "is_finite", "le", "lgamma", "linalg", "log", "log1p",
    "logistic", "lt", "max", "min", "mul", "ne", "neg", "not_", "or_", "pad", "polygamma",
    "pow", "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_prod",
    "reduce_sum", "regularized_incomplete_beta", "rem", "reshape", "rev", "round", "rsqrt",
    "scan", "select", "select_n", "sign", "sin", "sinh", "slice", "slice_in_dim", "sqrt",
    "square", "squeeze", "stop_gradient", "sub", "switch", "tan", "tanh", "transpose",
    "while_loop", "xor", "zeta",
]
# Eager results are immutable Arrays, as inert.numpy's are (see api/numpy/_array).
return_arrays_from(globals(), [name for name in __all__
                               if not isinstance(globals()[name], (type, types.ModuleType))])

# The elementwise functions are the primitives numpy's ufuncs implement: numpy's summary.
_NUMPY_NAMES = {
    "abs": "abs", "acos": "arccos", "acosh": "arccosh", "add": "add", "and_": "bitwise_and",
    "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan", "atanh": "arctanh", "cbrt": "cbrt",
    "ceil": "ceil", "cos": "cos", "cosh": "cosh", "eq": "equal", "exp": "exp", "exp2": "exp2",
    "expm1": "expm1", "floor": "floor", "ge": "greater_equal", "gt": "greater",
    "is_finite": "isfinite", "le": "less_equal", "log": "log", "log1p": "log1p", "lt": "less",
    "max": "maximum", "min": "minimum", "mul": "multiply", "ne": "not_equal", "neg": "negative",
    "not_": "invert", "or_": "bitwise_or", "sign": "sign", "sin": "sin", "sinh": "sinh",
    "sqrt": "sqrt", "square": "square", "sub": "subtract", "tan": "tan", "tanh": "tanh",
    "xor": "bitwise_xor",
}
_SCIPY_NAMES = {"digamma": "digamma", "erf": "erf", "erfinv": "erfinv", "polygamma": "polygamma"}
for _name, _scipy_name in _SCIPY_NAMES.items():
    globals()[_name].__doc__ = derived_docstring(getattr(sc, _scipy_name), f"jax.lax.{_name}",
                                                 f"computed as `scipy.special.{_scipy_name}`")
_REDUCED = "over the axes `axes` (a tuple), the lax primitive `jnp.{}` binds"
_CUMULATIVE = ("along `axis` (from the end with `reverse`): one primitive, differentiable, "
               "as JAX's")
_DOCS = {
    "convert_element_type": "`x` as an array of dtype `new_dtype` (the primitive every cast "
                            "is): floats to integers truncate, as numpy's astype.",
    "cumsum": f"The cumulative sum {_CUMULATIVE}.",
    "cumprod": f"The cumulative product {_CUMULATIVE}.",
    "cummax": f"The cumulative maximum {_CUMULATIVE}.",
    "cummin": f"The cumulative minimum {_CUMULATIVE}.",
    "reduce_sum": f"The sum {_REDUCED.format('sum')}.",
    "reduce_prod": f"The product {_REDUCED.format('prod')}.",
    "reduce_max": f"The maximum {_REDUCED.format('max')}.",
    "reduce_min": f"The minimum {_REDUCED.format('min')}.",
    "reduce_and": f"The logical and {_REDUCED.format('all')}.",
    "reduce_or": f"The logical or {_REDUCED.format('any')}.",
    "rsqrt": "1 / sqrt(x) element-wise.",
    "real": "The real part of a complex array, element-wise (a real array's is itself).",
    "imag": "The imaginary part of a complex array, element-wise (0 for a real one).",
    "conj": "The complex conjugate, element-wise.",
}
for _name, _doc in _DOCS.items():
    globals()[_name].__doc__ = _doc
_BINARY = {"add", "bitwise_and", "equal", "greater_equal", "greater", "less_equal", "less",
           "maximum", "minimum", "multiply", "not_equal", "bitwise_or", "subtract",
           "bitwise_xor"}
for _name, _numpy_name in _NUMPY_NAMES.items():
    if not globals()[_name].__doc__:
        globals()[_name].__doc__ = derived_docstring(
            getattr(np, _numpy_name), f"jax.lax.{_name}", f"computed as `numpy.{_numpy_name}`" +
            ("; unlike JAX's lax, which requires operands of one shape and dtype, it "
             "broadcasts and promotes them as `inert.numpy` does" if _numpy_name in _BINARY
             else ""))


def __dir__():
    return __all__
