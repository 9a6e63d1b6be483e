"""Windowed reductions: `reduce_window_sum`, `reduce_window_max`, `reduce_window_min`
(lax's pooling), and what their derivatives are made of.

Every primitive here reduces each window of its operand, one window per output
element, with the same parameters: `window_dimensions`, `window_strides`, `padding`
(`(low, high)` per axis), `base_dilation` (holes between operand elements) and
`window_dilation` (holes between window elements), one entry per axis. Batching adds
an axis with a window of one element.

* The sum is linear; its transpose is a pad-and-sum: the cotangent dilated by the
  strides and padded, summed over windows `base_dilation` apart.
* The derivative of the maximum (minimum) is the tangent of one element per window:
  the first maximum in the window's row-major order, which is the element XLA's
  `select_and_scatter_add` chooses (its `ge` selection keeps an earlier element on
  ties). The jvp is `window_gather(t, reduce_window_argmax(x))`: what the backward
  pass keeps is the index of that element within its window, one small integer per
  output element (int8 for windows of up to 127 elements), not the operand.
  `window_gather` and its transpose `window_scatter_add` are linear in the tangent.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.avals import ShapedArray
from ...core.errors import DTypeError, ShapeError
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import defjvp, defjvp_zero, deflinear
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.transpose import transpose_rules
from ..shape.slicing import pad
from ..shape.structural import checked_impl, inserted, matchaxis
from .geometry import (
    check_positive,
    dilate_and_pad,
    dilated_size,
    transpose_padding,
    window_view,
    windowed_shape,
)

WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                 "window_dilation")


def window_params(ndim: int, window_dimensions, window_strides, padding, base_dilation=None,
                  window_dilation=None) -> dict:
    """The params of a windowed primitive as hashable tuples (dilations default to 1)."""
    ones = (1,) * ndim
    return {"window_dimensions": tuple(int(w) for w in window_dimensions),
            "window_strides": tuple(int(s) for s in window_strides),
            "padding": tuple((int(lo), int(hi)) for lo, hi in padding),
            "base_dilation": ones if base_dilation is None else tuple(map(int, base_dilation)),
            "window_dilation": ones if window_dilation is None else
            tuple(map(int, window_dilation))}


def _check_window(name: str, x: ShapedArray, window_dimensions, window_strides, padding,
                  base_dilation, window_dilation) -> tuple[int, ...]:
    """The output shape, after checking every param has one entry per axis."""
    for what, values in (("window_dimensions", window_dimensions),
                         ("window_strides", window_strides), ("base_dilation", base_dilation),
                         ("window_dilation", window_dilation)):
        check_positive(f"{name} of {x.str_short()}", what, values, x.ndim)
    if len(padding) != x.ndim:
        raise ShapeError(f"{name}: padding {padding} needs one (low, high) pair per axis "
                         f"of {x.str_short()}")
    return windowed_shape(x.shape, window_dimensions, window_strides, padding, base_dilation,
                          window_dilation)


def _window_elements(x, fill, *, window_dimensions, window_strides, padding, base_dilation,
                     window_dilation):
    """For each element of a window, in row-major order, that element of every
    window of `x` (dilated and padded with `fill`): views of the output's shape.

    The impls loop over these, one whole-array operation per window element, rather
    than reduce over the window axes of one strided view, which numpy does an
    element at a time."""
    x = dilate_and_pad(x, fill, 0, base_dilation, padding)
    windows = window_view(x, 0, window_dimensions, window_strides, window_dilation)
    return [windows[(Ellipsis, *offset)] for offset in np.ndindex(*window_dimensions)]


def _reduce_elements(ufunc, elements):
    out = elements[0].copy()
    for element in elements[1:]:
        ufunc(out, element, out=out)
    return out


def _batched_params(params: dict, d: int) -> dict:
    """The params with an axis at `d` whose window is one element."""
    unit = {"window_dimensions": 1, "window_strides": 1, "padding": (0, 0),
            "base_dilation": 1, "window_dilation": 1}
    return {k: inserted(v, d, unit[k]) if k in unit else v for k, v in params.items()}


def _window_batch(prim: Primitive):
    """One operand: its batch axis is one more axis, with a one-element window."""

    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        return [prim.bind(x, **_batched_params(params, d))], [d]

    return rule


# ---------------------------------------------------------------------------------
reduce_window_sum_p = Primitive("reduce_window_sum")


def reduce_window_sum(x, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    params = window_params(get_aval(x).ndim, window_dimensions, window_strides, padding,
                           base_dilation, window_dilation)
    return reduce_window_sum_p.bind(x, **params)


def reduce_window_sum_impl(x, **params):
    x = np.asarray(x)
    out_shape = windowed_shape(x.shape, *(params[k] for k in WINDOW_PARAMS))
    if 0 in out_shape or 0 in x.shape:
        return np.zeros(out_shape, x.dtype)
    return _reduce_elements(np.add, _window_elements(x, 0, **params))


def reduce_window_sum_abstract_eval(x, **params):
    if x.dtype == np.bool_:
        raise DTypeError(f"reduce_window_sum: operand {x.str_short()} must be numeric")
    return ShapedArray(_check_window("reduce_window_sum", x, **params), x.dtype, x.weak_type)


abstract_eval_rules[reduce_window_sum_p] = reduce_window_sum_abstract_eval
impl_rules[reduce_window_sum_p] = checked_impl(reduce_window_sum_impl,
                                               abstract_eval_rules[reduce_window_sum_p])
deflinear(reduce_window_sum_p)


def reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding,
                                base_dilation, window_dilation):
    """Each operand element receives the cotangent of every window it is in: pad the
    cotangent (dilated by the strides) and sum it over the windows, flipped, which
    are the same windows since all their weights are one."""
    pads = transpose_padding(x.aval.shape, window_dimensions, window_strides,
                             get_aval(ct).shape, padding, base_dilation, window_dilation)
    padded = pad(ct, 0, [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)])
    ones = (1,) * len(pads)
    return [reduce_window_sum(padded, window_dimensions, base_dilation, ((0, 0),) * len(pads),
                              ones, window_dilation)]


transpose_rules[reduce_window_sum_p] = reduce_window_sum_transpose
batch_rules[reduce_window_sum_p] = _window_batch(reduce_window_sum_p)


# ---------------------------------------------------------------------------------
# The index of each window's extremum, and the linear maps that use it


def index_dtype(window_dimensions) -> np.dtype:
    """The smallest signed integer type indexing every element of a window."""
    size = math.prod(window_dimensions)
    return next(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)
                if size <= np.iinfo(t).max)


def lowest(dtype: np.dtype, largest: bool):
    """The padding value of a max (`largest`) or min: its identity."""
    if np.issubdtype(dtype, np.floating):
        return -np.inf if largest else np.inf
    if dtype == np.bool_:
        return not largest
    info = np.iinfo(dtype)
    return info.min if largest else info.max


def def_window_argextremum(name: str, largest: bool) -> Primitive:
    """`reduce_window_argmax`/`argmin`: per window, the row-major index within it of
    its first maximum (minimum); integer-valued, so its derivative is zero."""
    prim = Primitive(name)
    better, keep = (np.greater, np.maximum) if largest else (np.less, np.minimum)

    def impl(x, **params):
        x = np.asarray(x)
        elements = _window_elements(x, lowest(x.dtype, largest), **params)
        best = elements[0].copy()
        index = np.zeros(best.shape, index_dtype(params["window_dimensions"]))
        for k, candidate in enumerate(elements[1:], start=1):
            wins = better(candidate, best)  # strictly: an earlier equal element stays
            keep(best, candidate, out=best)
            np.putmask(index, wins, k)
        return index

    def abstract_eval(x, **params):
        shape = _check_window(name, x, **params)
        if x.dtype == np.bool_:
            raise DTypeError(f"{name}: operand {x.str_short()} must be numeric")
        if 0 in x.shape or 0 in shape:
            raise ShapeError(f"{name}: needs at least one window of elements, not {shape} "
                             f"windows of {x.str_short()}")
        return ShapedArray(shape, index_dtype(params["window_dimensions"]))

    abstract_eval_rules[prim] = abstract_eval
    impl_rules[prim] = checked_impl(impl, abstract_eval)
    defjvp_zero(prim)
    # transpose: none, an index is not linear in anything
    batch_rules[prim] = _window_batch(prim)
    return prim


reduce_window_argmax_p = def_window_argextremum("reduce_window_argmax", largest=True)
reduce_window_argmin_p = def_window_argextremum("reduce_window_argmin", largest=False)


window_gather_p = Primitive("window_gather", operand_names=("operand", "index"))


def window_gather(x, index, **params):
    """The element `index[w]` of each window w of `x` (zero where that is padding)."""
    return window_gather_p.bind(x, index, **params)


def window_gather_impl(x, index, **params):
    x = np.asarray(x)
    out = np.zeros(np.shape(index), x.dtype)
    if out.size:
        for k, element in enumerate(_window_elements(x, 0, **params)):
            np.copyto(out, element, where=index == k)
    return out


def window_gather_abstract_eval(x, index, **params):
    shape = _check_window("window_gather", x, **params)
    if index.shape != shape or index.dtype.kind not in "iu":
        raise ShapeError(f"window_gather: index {index.str_short()} must be integers of "
                         f"the output shape {shape} of windows of {x.str_short()}")
    return ShapedArray(shape, x.dtype, x.weak_type)


impl_rules[window_gather_p] = window_gather_impl
abstract_eval_rules[window_gather_p] = window_gather_abstract_eval
defjvp(window_gather_p, lambda t, out, x, index, **params: window_gather(t, index, **params),
       None)
transpose_rules[window_gather_p] = lambda ct, x, index, **params: [
    window_scatter_add(ct, index, operand_shape=x.aval.shape, **params), None]


def _index_batch(prim: Primitive, shape_param: str | None):
    """Both operands batched along one axis (an unbatched one is broadcast), which
    gets a one-element window (and, for the scatter, a place in the operand shape)."""

    def rule(vals, dims, **params):
        size = batch_size(vals, dims)
        d = next(d for d in dims if d is not None)
        vals = [matchaxis(v, vd, d, size) for v, vd in zip(vals, dims)]
        params = _batched_params(params, d)
        if shape_param:
            params[shape_param] = inserted(params[shape_param], d, size)
        return [prim.bind(*vals, **params)], [d]

    return rule


batch_rules[window_gather_p] = _index_batch(window_gather_p, None)

# ---------------------------------------------------------------------------------
window_scatter_add_p = Primitive("window_scatter_add", operand_names=("source", "index"))


def window_scatter_add(ct, index, *, operand_shape, **params):
    """Each `ct[w]` added at the element `index[w]` of window w of an operand of
    `operand_shape` (the transpose of `window_gather`)."""
    return window_scatter_add_p.bind(ct, index, operand_shape=tuple(operand_shape), **params)


def window_scatter_add_impl(ct, index, *, operand_shape, window_dimensions, window_strides,
                            padding, base_dilation, window_dilation):
    """Into a zero operand, dilated and padded (a negative padding as none, the
    windows then starting further in), add each window element's share: the
    windows at one element never overlap, so each addition is one array operation."""
    ct = np.asarray(ct)
    grown = [max(lo, 0) + dilated_size(n, bd) + max(hi, 0)
             for n, (lo, hi), bd in zip(operand_shape, padding, base_dilation)]
    out = np.zeros(grown, ct.dtype)
    if ct.size:
        inner = out[tuple(slice(max(-lo, 0), g - max(-hi, 0))
                          for g, (lo, hi) in zip(grown, padding))]
        windows = window_view(inner, 0, window_dimensions, window_strides, window_dilation,
                              writeable=True)
        disjoint = all(dilated_size(w, d) <= s for w, d, s in
                       zip(window_dimensions, window_dilation, window_strides))
        for k, offset in enumerate(np.ndindex(*window_dimensions)):
            target = windows[(Ellipsis, *offset)]
            if disjoint:  # pooling: each element is in one window, written once
                np.multiply(ct, index == k, out=target)
            else:
                np.add(target, np.where(index == k, ct, 0), out=target)
    return out[tuple(slice(max(lo, 0), max(lo, 0) + dilated_size(n, bd), bd)
                     for n, (lo, _), bd in zip(operand_shape, padding, base_dilation))].copy()


def window_scatter_add_abstract_eval(ct, index, *, operand_shape, **params):
    operand = ShapedArray(operand_shape, ct.dtype)
    shape = _check_window("window_scatter_add", operand, **params)
    if ct.shape != shape or index.shape != shape or index.dtype.kind not in "iu":
        raise ShapeError(f"window_scatter_add: source {ct.str_short()} and index "
                         f"{index.str_short()} must have the shape {shape} of the windows "
                         f"of {operand.str_short()}")
    return ShapedArray(operand_shape, ct.dtype, ct.weak_type)


impl_rules[window_scatter_add_p] = window_scatter_add_impl
abstract_eval_rules[window_scatter_add_p] = window_scatter_add_abstract_eval
defjvp(window_scatter_add_p,
       lambda t, out, ct, index, **params: window_scatter_add(t, index, **params), None)
transpose_rules[window_scatter_add_p] = lambda ct, source, index, *, operand_shape, **params: [
    window_gather(ct, index, **params), None]
batch_rules[window_scatter_add_p] = _index_batch(window_scatter_add_p, "operand_shape")


# ---------------------------------------------------------------------------------
def def_window_extremum(name: str, reduce, argprim: Primitive, largest: bool) -> Primitive:
    """`reduce_window_max`/`min`: numpy's `maximum`/`minimum` over the window
    elements; the derivative is the tangent at each window's first extremum
    (`argprim`)."""
    prim = Primitive(name)

    def impl(x, **params):
        x = np.asarray(x)
        return _reduce_elements(reduce, _window_elements(x, lowest(x.dtype, largest), **params))

    abstract_eval_rules[prim] = argprim_value_abstract_eval(name, argprim)
    impl_rules[prim] = checked_impl(impl, abstract_eval_rules[prim])
    defjvp(prim, lambda t, out, x, **params: window_gather(t, argprim.bind(x, **params),
                                                           **params))
    # transpose: none, a maximum is not linear
    batch_rules[prim] = _window_batch(prim)
    return prim


def argprim_value_abstract_eval(name: str, argprim: Primitive):
    """The extremum's aval: the operand's dtype, on the index's checks and shape."""

    def abstract_eval(x, **params):
        try:
            index = abstract_eval_rules[argprim](x, **params)
        except (ShapeError, DTypeError) as e:
            raise type(e)(str(e).replace(argprim.name, name)) from None
        return ShapedArray(index.shape, x.dtype, x.weak_type)

    return abstract_eval


reduce_window_max_p = def_window_extremum("reduce_window_max", np.maximum,
                                          reduce_window_argmax_p, largest=True)
reduce_window_min_p = def_window_extremum("reduce_window_min", np.minimum,
                                          reduce_window_argmin_p, largest=False)


def reduce_window_max(x, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    params = window_params(get_aval(x).ndim, window_dimensions, window_strides, padding,
                           base_dilation, window_dilation)
    return reduce_window_max_p.bind(x, **params)


def reduce_window_min(x, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    params = window_params(get_aval(x).ndim, window_dimensions, window_strides, padding,
                           base_dilation, window_dilation)
    return reduce_window_min_p.bind(x, **params)
