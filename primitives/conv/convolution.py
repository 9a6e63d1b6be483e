"""`conv_general_dilated`: lax's N-dimensional convolution, the one every convolution
(strided, padded, dilated, grouped, transposed) is written with.

Like XLA's, it is a *correlation*: `out[n, o, p] = sum_{c, k} x[n, c, p * stride +
k * rhs_dilation - low] * w[o, c, k]`, over an input dilated by `lhs_dilation` and
padded. `dimension_numbers` say where the batch, feature and spatial axes of each
operand are. With `feature_group_count = G` the input features and the output features
are cut into G groups (group-major), each convolved separately; with
`batch_group_count = B` the input batch is cut into B groups instead, group b making
the b-th group of output features (this is how a grouped convolution's kernel
cotangent is written).

Bilinear, so the derivative is two more convolutions: the input's cotangent is a
transposed convolution (the cotangent dilated by the strides, the kernel reversed
with its feature axes swapped) and the kernel's a convolution of the input with the
cotangent as the kernel. Batching folds the batch axis into the batch or feature
dimension (with one more group where both operands are batched).

The impl lays the operands out as (batch, feature, spatial...), takes the strided
view of the input's windows (`sliding_window_view`, no copy) and multiplies the
gathered patches with the kernel in one matmul per group.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ...core.avals import ShapedArray, result_dtype
from ...core.errors import DTypeError, ShapeError
from ...core.trace import (
    Primitive,
    abstract_eval_rules,
    get_aval,
    impl_rules,
    user_source_info,
)
from ...core.typing import ArrayLike, DTypeLike
from ...interpreters.ad import defjvp
from ...interpreters.batching import batch_rules
from ...interpreters.transpose import is_linear, transpose_rules
from ..shape.structural import checked_impl, convert_element_type, moveaxis, reshape, rev
from .correlation import correlate
from .geometry import (
    check_positive,
    dilated_size,
    explicit_padding,
    kernel_transpose_padding,
    padtype_to_pads,
    transpose_padding,
    windowed_shape,
)


class ConvDimensionNumbers(NamedTuple):
    """Where each operand's axes are: `lhs_spec = (batch, feature, *spatial)`,
    `rhs_spec = (out feature, in feature, *spatial)`, `out_spec = (batch, feature,
    *spatial)`, each a tuple of axis numbers."""

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """lax's spellings: None (NC..., OI..., NC...), a ConvDimensionNumbers, or three
    strings like `('NHWC', 'HWIO', 'NHWC')` whose spatial letters pair up by name."""
    ndim = len(lhs_shape)
    if dimension_numbers is None:
        default = tuple(range(ndim))
        return ConvDimensionNumbers(default, default, default)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
    if len(dimension_numbers) != 3 or not all(isinstance(s, str) for s in dimension_numbers):
        raise _spec_error(f"dimension_numbers must be None, a ConvDimensionNumbers or "
                          f"three strings, not {dimension_numbers!r}")
    lhs, rhs, out = dimension_numbers
    for spec, pair in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
        if len(spec) != ndim or len(set(spec)) != ndim or not set(pair) <= set(spec):
            raise _spec_error(f"dimension spec {spec!r} does not fit an operand of rank "
                              f"{ndim} (needs {pair[0]}, {pair[1]} and distinct spatial "
                              f"letters)")
    spatial = [c for c in rhs if c not in "OI"]
    if sorted(c for c in lhs if c not in "NC") != sorted(spatial) or \
            sorted(c for c in out if c not in "NC") != sorted(spatial):
        raise _spec_error(f"the spatial letters of {dimension_numbers} differ")
    return ConvDimensionNumbers(*(tuple(spec.index(c) for c in (*pair, *spatial))
                                  for spec, pair in ((lhs, "NC"), (rhs, "OI"), (out, "NC"))))


def _spec_error(message: str) -> ShapeError:
    return ShapeError(f"conv_general_dilated: {message}").with_source(user_source_info())


# ---------------------------------------------------------------------------------
conv_general_dilated_p = Primitive("conv_general_dilated", operand_names=("lhs", "rhs"))


def conv_general_dilated(lhs: ArrayLike, rhs: ArrayLike, window_strides: Sequence[int],
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                         feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: DTypeLike | None = None) -> np.ndarray:
    """jax.lax.conv_general_dilated (`precision` is accepted and has no effect). Its
    operands must have one dtype, as in JAX (`inert.numpy.convolve` promotes first)."""
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    if get_aval(lhs).dtype != get_aval(rhs).dtype:
        raise DTypeError(f"conv_general_dilated requires arguments of the same dtype, got "
                         f"{get_aval(lhs).str_short()} and {get_aval(rhs).str_short()}"
                         ).with_source(user_source_info())
    dims = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    ones = (1,) * n
    strides = tuple(int(s) for s in window_strides)
    lhs_dilation = ones if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rhs_dilation = ones if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    if isinstance(padding, str):
        in_spatial = [dilated_size(lhs_shape[a], d) for a, d in zip(dims.lhs_spec[2:],
                                                                    lhs_dilation)]
        window = [dilated_size(rhs_shape[a], d) for a, d in zip(dims.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads(in_spatial, window, strides, padding, "conv_general_dilated")
    else:
        padding = explicit_padding("conv_general_dilated", padding)
    if preferred_element_type is not None:
        preferred_element_type = np.dtype(preferred_element_type)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dims,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        preferred_element_type=preferred_element_type)


def _spatial(shape, spec) -> list[int]:
    return [shape[a] for a in spec[2:]]


def conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
              dimension_numbers, feature_group_count, batch_group_count,
              preferred_element_type):
    lspec, rspec, ospec = dimension_numbers
    dtype = np.result_type(lhs, rhs) if preferred_element_type is None else \
        preferred_element_type
    x = np.transpose(np.asarray(lhs, dtype), lspec)
    w = np.transpose(np.asarray(rhs, dtype), rspec)
    out = correlate(x, w, window_strides, padding, lhs_dilation, rhs_dilation,
                    feature_group_count, batch_group_count)
    return np.ascontiguousarray(np.transpose(out, np.argsort(ospec)))


def conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                       dimension_numbers, feature_group_count, batch_group_count,
                       preferred_element_type):
    name = "conv_general_dilated"
    _check_layout(lhs, rhs, dimension_numbers)
    n = lhs.ndim - 2
    for what, values in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                         ("rhs_dilation", rhs_dilation)):
        check_positive(name, what, values, n)
    if len(padding) != n:
        raise ShapeError(f"{name}: padding {padding} needs {n} (low, high) pairs")
    lspec, rspec, ospec = dimension_numbers
    batch, features = lhs.shape[lspec[0]], lhs.shape[lspec[1]]
    out_features, in_features = rhs.shape[rspec[0]], rhs.shape[rspec[1]]
    _check_groups(lhs, rhs, batch, features, out_features, in_features, feature_group_count,
                  batch_group_count)
    spatial = windowed_shape(_spatial(lhs.shape, lspec), _spatial(rhs.shape, rspec),
                             window_strides, padding, lhs_dilation, rhs_dilation)
    canonical = (batch // batch_group_count, out_features, *spatial)
    shape = [0] * lhs.ndim
    for axis, size in zip(ospec, canonical):
        shape[axis] = size
    if preferred_element_type is not None:
        return ShapedArray(tuple(shape), preferred_element_type)
    return ShapedArray(tuple(shape), result_dtype(lhs, rhs), lhs.weak_type and rhs.weak_type)


def _check_layout(lhs, rhs, dimension_numbers) -> None:
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ShapeError(f"conv_general_dilated: lhs {lhs.str_short()} and rhs "
                         f"{rhs.str_short()} need one rank, at least 2")
    for spec in dimension_numbers:
        if sorted(spec) != list(range(lhs.ndim)):
            raise ShapeError(f"conv_general_dilated: dimension numbers {dimension_numbers} "
                             f"are no permutations of the axes of {lhs.str_short()}")


def _check_groups(lhs, rhs, batch, features, out_features, in_features, groups,
                  batch_groups) -> None:
    name = "conv_general_dilated"
    shapes = f"lhs {lhs.str_short()}, rhs {rhs.str_short()}"
    if groups < 1 or batch_groups < 1 or (groups > 1 and batch_groups > 1):
        raise ShapeError(f"{name}: feature_group_count {groups} and batch_group_count "
                         f"{batch_groups} must be positive, at most one above 1")
    if features != in_features * groups:
        raise ShapeError(f"{name}: lhs features {features} must be rhs input features "
                         f"{in_features} times feature_group_count {groups} ({shapes})")
    for count, what in ((groups, "feature_group_count"), (batch_groups, "batch_group_count")):
        if out_features % count:
            raise ShapeError(f"{name}: rhs output features {out_features} must be a "
                             f"multiple of {what} {count} ({shapes})")
    if batch % batch_groups:
        raise ShapeError(f"{name}: lhs batch {batch} must be a multiple of "
                         f"batch_group_count {batch_groups} ({shapes})")


impl_rules[conv_general_dilated_p] = checked_impl(conv_impl, conv_abstract_eval)
abstract_eval_rules[conv_general_dilated_p] = conv_abstract_eval
defjvp(conv_general_dilated_p,
       lambda t, out, lhs, rhs, **params: conv_general_dilated_p.bind(t, rhs, **params),
       lambda t, out, lhs, rhs, **params: conv_general_dilated_p.bind(lhs, t, **params))


def _swap(spec) -> tuple:
    """A spec with its first two roles exchanged (batch <-> feature, out <-> in)."""
    return (spec[1], spec[0], *spec[2:])


def _split(x, axis: int, outer: int):
    """Axis `axis` cut into (outer, rest), the outer part first."""
    shape = get_aval(x).shape
    return reshape(x, (*shape[:axis], outer, shape[axis] // outer, *shape[axis + 1:]))


def _fold(x, src: int, dst: int):
    """Axis `src` merged into axis `dst` (numbered as if `src` were gone) as its
    major part."""
    x = moveaxis(x, src, dst)
    shape = get_aval(x).shape
    return reshape(x, (*shape[:dst], shape[dst] * shape[dst + 1], *shape[dst + 2:]))


def _group_axis_into_inputs(rhs, rspec, groups: int):
    """A kernel whose output features are cut into `groups` groups, with the group
    moved to its input features instead (major): the kernel of the transpose."""
    return _fold(_split(rhs, rspec[0], groups), rspec[0], rspec[1])


def conv_transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation,
                       rhs_dilation, dimension_numbers, feature_group_count,
                       batch_group_count):
    """The input's cotangent: the cotangent, dilated by the strides and padded so the
    reversed window reaches every input element once, convolved with the reversed
    kernel with its feature axes swapped."""
    lspec, rspec, ospec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    kernel = rhs if groups == 1 else _group_axis_into_inputs(rhs, rspec, groups)
    pads = transpose_padding(_spatial(lhs_aval.shape, lspec), _spatial(get_aval(rhs).shape, rspec),
                             window_strides, _spatial(get_aval(ct).shape, ospec), padding,
                             lhs_dilation, rhs_dilation)
    out = conv_general_dilated_p.bind(
        ct, rev(kernel, rspec[2:]), window_strides=lhs_dilation, padding=pads,
        lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(ospec, _swap(rspec), lspec),
        feature_group_count=groups, batch_group_count=1, preferred_element_type=None)
    if batch_group_count > 1:  # the batch groups came out as feature groups
        out = _fold(_split(out, lspec[1], batch_group_count), lspec[1], lspec[0])
    return out


def conv_transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                       rhs_dilation, dimension_numbers, feature_group_count,
                       batch_group_count):
    """The kernel's cotangent: the input convolved with the cotangent as the kernel
    (batch and feature roles swapped, so the batch is summed over); feature groups
    become batch groups and the other way round."""
    lspec, rspec, ospec = dimension_numbers
    pads = kernel_transpose_padding(_spatial(get_aval(lhs).shape, lspec),
                                    _spatial(rhs_aval.shape, rspec), window_strides,
                                    _spatial(get_aval(ct).shape, ospec), padding,
                                    lhs_dilation, rhs_dilation)
    return conv_general_dilated_p.bind(
        lhs, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(_swap(lspec), _swap(ospec), _swap(rspec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        preferred_element_type=None)


def conv_transpose(ct, lhs, rhs, *, preferred_element_type, **params):
    """Bilinear: the program is linear in one operand, the other is a known value."""
    if is_linear(lhs):
        return [convert_element_type(conv_transpose_lhs(ct, lhs.aval, rhs, **params),
                                     lhs.aval.dtype), None]
    return [None, convert_element_type(conv_transpose_rhs(ct, lhs, rhs.aval, **params),
                                       rhs.aval.dtype)]


transpose_rules[conv_general_dilated_p] = conv_transpose


def _fold_within_groups(x, src: int, dst: int, groups: int):
    """Axis `src` merged into axis `dst` (numbered as if `src` were gone) inside each
    of the `groups` groups `dst` is cut into: (groups, src, rest)."""
    x = moveaxis(x, src, 0)
    shape = get_aval(x).shape
    x = reshape(x, (*shape[:dst + 1], groups, shape[dst + 1] // groups, *shape[dst + 2:]))
    x = moveaxis(x, 0, dst + 1)
    shape = get_aval(x).shape
    return reshape(x, (*shape[:dst], math.prod(shape[dst:dst + 3]), *shape[dst + 3:]))


def _unfold_within_groups(x, axis: int, groups: int, size: int):
    """The inverse for an output axis: (groups, size, rest) at `axis` becomes a batch
    axis of `size` at `axis` in front of the (groups, rest) axis."""
    shape = get_aval(x).shape
    x = reshape(x, (*shape[:axis], groups, size, shape[axis] // (groups * size),
                    *shape[axis + 1:]))
    x = moveaxis(x, axis + 1, axis)
    shape = get_aval(x).shape
    return reshape(x, (*shape[:axis + 1], shape[axis + 1] * shape[axis + 2], *shape[axis + 3:]))


def conv_batch(vals, dims, *, dimension_numbers, feature_group_count, batch_group_count,
               **params):
    """Fold the batch axis into an operand axis: the input's batch (inside each batch
    group), or the kernel's output features (inside each group); both batched, it
    becomes more groups: of features, or of batches if there are batch groups."""
    (lhs, rhs), (dl, dr) = vals, dims
    lspec, rspec, ospec = dimension_numbers
    size = get_aval(lhs).shape[dl] if dl is not None else get_aval(rhs).shape[dr]
    groups = {"feature_group_count": feature_group_count, "batch_group_count": batch_group_count}
    if dl is not None and dr is not None:
        kind = "batch_group_count" if batch_group_count > 1 else "feature_group_count"
        lhs = _fold(lhs, dl, lspec[0] if batch_group_count > 1 else lspec[1])
        rhs = _fold(rhs, dr, rspec[0])
        groups[kind] *= size
    elif dl is not None:
        lhs = _fold_within_groups(lhs, dl, lspec[0], batch_group_count)
    else:
        rhs = _fold_within_groups(rhs, dr, rspec[0], feature_group_count * batch_group_count)
    out = conv_general_dilated_p.bind(lhs, rhs, dimension_numbers=dimension_numbers,
                                      **groups, **params)
    if dr is None:
        return [_split(out, ospec[0], size)], [ospec[0]]
    if dl is None:
        all_groups = feature_group_count * batch_group_count
        return [_unfold_within_groups(out, ospec[1], all_groups, size)], [ospec[1]]
    return [_split(out, ospec[1], size)], [ospec[1]]


batch_rules[conv_general_dilated_p] = conv_batch
