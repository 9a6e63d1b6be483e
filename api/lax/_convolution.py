"""jax.lax's convolutions and windowed reductions, on the `conv_general_dilated` and
`reduce_window_*` primitives: the conveniences that rearrange their arguments
(`conv`, `conv_with_general_padding`, `conv_transpose`), lax's generic
`reduce_window` for the monoids it has primitives for, and the shape helpers stax
uses to know a layer's output shape without running it."""

from __future__ import annotations

import builtins
import inspect
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...core.avals import ShapedArray
from ...core.trace import Tracer, get_aval
from ...core.typing import ArrayLike, DTypeLike
from ...primitives import elementwise as ew
from ...primitives.conv.convolution import (
    ConvDimensionNumbers,  # noqa: F401 — re-exported by inert.lax
    conv_abstract_eval,
    conv_dimension_numbers,
    conv_general_dilated,
)
from ...primitives.conv.geometry import (
    dilated_size,
    explicit_padding,
    padtype_to_pads,
    windowed_shape,
)
from ...primitives.conv.windowed import (
    lowest,
    reduce_window_max,
    reduce_window_min,
    reduce_window_sum,
)
from ...primitives.shape.structural import convert_element_type, rev, transpose
from .. import numpy as jnp
from ..numpy._array import Array


def conv(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
         padding: str | Sequence[tuple[int, int]], precision: Any = None,
         preferred_element_type: DTypeLike | None = None) -> Array:
    """An NC... by OI... convolution, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None,
                              precision: Any = None,
                              preferred_element_type: DTypeLike | None = None) -> Array:
    """`conv_general_dilated` with its default dimension numbers (NCHW, OIHW), as JAX's."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def _conv_transpose_padding(k: int, s: int, padding: str) -> tuple[int, int]:
    """The padding of the stride-dilated input that makes a transposed convolution's
    output `s` times the input (`SAME`) or the input's span plus the kernel's
    overhang (`VALID`), as lax.conv_transpose defines them."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total, low = k + s - 2 + max(k - s, 0), k - 1
    else:
        raise ValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or (low, high) "
                         f"pairs, not {padding!r}")
    return low, total - low


def conv_transpose(lhs: ArrayLike, rhs: ArrayLike, strides: Sequence[int],
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: DTypeLike | None = None) -> Array:
    """The "deconvolution": a convolution of the input dilated by `strides`. With
    `transpose_kernel` the kernel is flipped and its feature axes swapped, which
    makes it exactly the transpose of the strided convolution with that kernel."""
    ndim = get_aval(lhs).ndim
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError(f"conv_transpose: no default dimension_numbers for rank {ndim}")
        dimension_numbers = _TRANSPOSE_LAYOUTS[ndim]
    dims = conv_dimension_numbers(get_aval(lhs).shape, get_aval(rhs).shape, dimension_numbers)
    kernel_spatial = [get_aval(rhs).shape[a] for a in dims.rhs_spec[2:]]
    rhs_dilation = (1,) * (ndim - 2) if rhs_dilation is None else tuple(rhs_dilation)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(dilated_size(k, d), s, padding)
                   for k, d, s in zip(kernel_spatial, rhs_dilation, strides)]
    if transpose_kernel:
        perm = list(range(ndim))
        perm[dims.rhs_spec[0]], perm[dims.rhs_spec[1]] = dims.rhs_spec[1], dims.rhs_spec[0]
        rhs = transpose(rev(rhs, dims.rhs_spec[2:]), perm)
    return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), padding, strides, rhs_dilation,
                                dims, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int],
                             padding: str | Sequence[tuple[int, int]],
                             dimension_numbers: Any) -> tuple[int, ...]:
    """The output shape of `conv_general_dilated` (no dilation), without running it."""
    dims = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    if isinstance(padding, str):
        padding = padtype_to_pads([lhs_shape[a] for a in dims.lhs_spec[2:]],
                                  [rhs_shape[a] for a in dims.rhs_spec[2:]], window_strides,
                                  padding)
    aval = conv_abstract_eval(
        ShapedArray(tuple(lhs_shape), np.float64), ShapedArray(tuple(rhs_shape), np.float64),
        window_strides=tuple(window_strides), padding=tuple(map(tuple, padding)),
        lhs_dilation=(1,) * n, rhs_dilation=(1,) * n, dimension_numbers=dims,
        feature_group_count=1, batch_group_count=1, preferred_element_type=None)
    return aval.shape


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int],
                               padding: str | Sequence[tuple[int, int]],
                               dimension_numbers: Any) -> tuple[int, ...]:
    """The output shape of `conv_transpose`, without running it."""
    dims = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    kernel = [rhs_shape[a] for a in dims.rhs_spec[2:]]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(kernel, window_strides)]
    spatial = windowed_shape([lhs_shape[a] for a in dims.lhs_spec[2:]], kernel,
                             (1,) * len(kernel), padding, window_strides, (1,) * len(kernel))
    shape = [0] * len(lhs_shape)
    for axis, size in zip(dims.out_spec,
                          (lhs_shape[dims.lhs_spec[0]], rhs_shape[dims.rhs_spec[0]], *spatial)):
        shape[axis] = size
    return tuple(shape)


# ---------------------------------------------------------------------------------
_MONOIDS = {"add": reduce_window_sum, "max": reduce_window_max, "min": reduce_window_min}
_COMPUTATIONS = {"add": (ew.add, operator.add, np.add, jnp.add),
                 "max": (ew.max, builtins.max, np.maximum, jnp.maximum),
                 "min": (ew.min, builtins.min, np.minimum, jnp.minimum)}


def _monoid(computation) -> str | None:
    """Which of the reductions with a primitive `computation` is (lax's, numpy's,
    inert.numpy's or Python's spelling of it; the namespaces' wrappers of eager results
    are looked through)."""
    computation = inspect.unwrap(computation)
    for kind, functions in _COMPUTATIONS.items():
        if any(computation is inspect.unwrap(f) for f in functions):
            return kind
    return None


def reduce_window(operand: ArrayLike, init_value: ArrayLike,
                  computation: Callable[[Any, Any], Any], window_dimensions: Sequence[int],
                  window_strides: Sequence[int],
                  padding: str | Sequence[tuple[int, int]],
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Array:
    """jax.lax.reduce_window for `add`, `max` and `min` (lax's or numpy's). The
    padding holds `init_value`, which must be a concrete scalar: for `add`, 0."""
    kind = _monoid(computation)
    if kind is None:
        raise NotImplementedError(f"reduce_window: only add, max and min reductions are "
                                  f"supported, not {computation!r}")
    if isinstance(init_value, Tracer):
        raise NotImplementedError("reduce_window: init_value must be a concrete scalar")
    aval = get_aval(operand)
    identity = 0 if kind == "add" else lowest(aval.dtype, kind == "max")
    at_identity = bool(np.all(np.asarray(init_value) == identity))
    if kind == "add" and not at_identity:
        raise NotImplementedError("reduce_window: an add reduction needs init_value 0")
    if isinstance(padding, str):
        in_shape = [dilated_size(n, d) for n, d in
                    zip(aval.shape, base_dilation or (1,) * aval.ndim)]
        window = [dilated_size(w, d) for w, d in
                  zip(window_dimensions, window_dilation or (1,) * aval.ndim)]
        padding = padtype_to_pads(in_shape, window, window_strides, padding, "reduce_window")
    padding = explicit_padding("reduce_window", padding)
    out = _MONOIDS[kind](operand, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
    if at_identity:
        return out
    # the padding holds init_value, and every window includes it: one more extremum
    extremum = ew.max if kind == "max" else ew.min
    return extremum(out, convert_element_type(init_value, aval.dtype))


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The shape `reduce_window` gives for an operand of `operand_shape` with these windows,
    strides, padding and dilations."""
    ones = (1,) * len(operand_shape)
    return windowed_shape(operand_shape, window_dimensions, window_strides, padding,
                          base_dilation or ones, window_dilation or ones)

