"""Collectives over a named `vmap` axis (`vmap(f, axis_name="i")`): `psum`, `pmax`,
`pmin`, `all_gather`, and `axis_index`, as `jax.lax`'s.

Each names the axis it reduces over. The vmap of that name reduces over its lanes
(`collective_rules`, asked by every vmap between the collective and it): a sum, a max
or a gather of the lanes, the same for every lane, so unbatched. An operand that does
not vary along the named axis never reaches that vmap: its impl reads the axis size
(`named_axis`): the sum of n equal lanes is n times one. A vmap of another name maps the
collective lane by lane. Outside every vmap of that name it is JAX's NameError.

`psum` is linear, and its transpose is `psum` again: each lane's output is the sum of
all lanes' inputs, so a cotangent reaches every input from every lane (what
`grad` of a function of the `vmap`ped outputs needs). Differentiated from outside the
vmap, `pmax`/`pmin` are the vmap's `reduce_max`/`reduce_min` and have their derivative;
a jvp inside the vmap (vmap of grad) has none for them here. `all_gather` is linear,
transposing to the sum of the cotangents at this lane's index.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable

import numpy as np

from ..core.avals import ShapedArray
from ..core.trace import Primitive, abstract_eval_rules, current_dynamic, impl_rules
from ..core.typing import ArrayLike
from ..interpreters.ad import defjvp, deflinear
from ..interpreters.batching import BatchTracer, collective_rules, named_axis
from ..interpreters.transpose import transpose_rules
from .indexing.dynamic_slices import dynamic_slice
from .reductions import reduce_max, reduce_min
from .shape.structural import iota, moveaxis, reduce_sum, squeeze


def _reducing(name: str) -> Primitive:
    prim = Primitive(name, operand_names=("x",))
    abstract_eval_rules[prim] = lambda x, *, axis_name: x
    return prim


psum_p, pmax_p, pmin_p = _reducing("psum"), _reducing("pmax"), _reducing("pmin")
_REDUCERS = {psum_p: reduce_sum, pmax_p: reduce_max, pmin_p: reduce_min}


def psum(x: ArrayLike, axis_name: Hashable) -> np.ndarray:
    """The sum of `x` over the lanes of the vmap named `axis_name`, in every lane."""
    return psum_p.bind(x, axis_name=axis_name)


def pmean(x: ArrayLike, axis_name: Hashable) -> np.ndarray:
    """The mean of `x` over the lanes of the vmap named `axis_name`."""
    return psum(x, axis_name) / float(named_axis(axis_name).global_data.size)


def pmax(x: ArrayLike, axis_name: Hashable) -> np.ndarray:
    """The maximum of `x` over the lanes of the vmap named `axis_name`, in every lane."""
    return pmax_p.bind(x, axis_name=axis_name)


def pmin(x: ArrayLike, axis_name: Hashable) -> np.ndarray:
    """The minimum of `x` over the lanes of the vmap named `axis_name`, in every lane."""
    return pmin_p.bind(x, axis_name=axis_name)


impl_rules[psum_p] = lambda x, *, axis_name: np.asarray(x) * named_axis(
    axis_name).global_data.size  # n equal lanes (a lane-varying x is the vmap's rule's)
impl_rules[pmax_p] = impl_rules[pmin_p] = lambda x, *, axis_name: np.asarray(x)  # n equal
deflinear(psum_p)
transpose_rules[psum_p] = lambda ct, x, *, axis_name: [psum(ct, axis_name)]
defjvp(pmax_p, None)
defjvp(pmin_p, None)


def reduction_collective(axis, vals, dims, *, prim, axis_name):
    (x,), (d,) = vals, dims
    if axis_name != axis.name:
        return [prim.bind(x, axis_name=axis_name)], [d]  # another vmap's: lane by lane
    if d is None:
        return [prim.bind(x, axis_name=axis_name)], [None]  # (its impl: n equal lanes)
    return [_REDUCERS[prim](x, (d,))], [None]


for _prim in _REDUCERS:
    collective_rules[_prim] = functools.partial(reduction_collective, prim=_prim)

# ---------------------------------------------------------------------------------
all_gather_p = Primitive("all_gather", operand_names=("x",))


def all_gather(x: ArrayLike, axis_name: Hashable, *, axis: int = 0,
               tiled: bool = False) -> np.ndarray:
    """Every lane's `x`, stacked along a new axis `axis` (of the vmap's size), in every
    lane; `tiled` concatenates along `axis` instead."""
    if tiled:
        raise NotImplementedError("all_gather: tiled=True is not supported")
    return all_gather_p.bind(x, axis_name=axis_name, axis=int(axis))


def all_gather_abstract_eval(x, *, axis_name, axis):
    size = named_axis(axis_name).global_data.size
    return ShapedArray(x.shape[:axis] + (size,) + x.shape[axis:], x.dtype, x.weak_type)


def all_gather_impl(x, *, axis_name, axis):
    shape = np.shape(x)
    out = all_gather_abstract_eval(ShapedArray(shape, np.asarray(x).dtype), axis_name=axis_name,
                                   axis=axis)
    return np.broadcast_to(np.expand_dims(x, axis), out.shape).copy()


abstract_eval_rules[all_gather_p] = all_gather_abstract_eval
impl_rules[all_gather_p] = all_gather_impl
deflinear(all_gather_p)


def all_gather_transpose(ct, x, *, axis_name, axis):
    """This lane's slice of the cotangents' sum over the lanes."""
    summed = psum(ct, axis_name)
    shape = summed.shape
    starts = [axis_index(axis_name) if i == axis else 0 for i in range(len(shape))]
    sizes = [1 if i == axis else n for i, n in enumerate(shape)]
    return [squeeze(dynamic_slice(summed, starts, sizes), (axis,))]


transpose_rules[all_gather_p] = all_gather_transpose


def all_gather_collective(axis_data, vals, dims, *, axis_name, axis):
    (x,), (d,) = vals, dims
    if d is None:
        return [all_gather_p.bind(x, axis_name=axis_name, axis=axis)], [None]
    x = moveaxis(x, d, 0)
    if axis_name != axis_data.name:
        return [all_gather_p.bind(x, axis_name=axis_name, axis=axis + 1)], [0]
    return [moveaxis(x, 0, axis)], [None]


collective_rules[all_gather_p] = all_gather_collective


def axis_index(axis_name: Hashable) -> np.ndarray:
    """This lane's index along the vmap named `axis_name`: a value of that vmap itself,
    so not inside a function staged above it (`jit`, or `grad`, inside the vmap), whose
    program would keep it as a constant beyond the call."""
    main = named_axis(axis_name)
    if current_dynamic().level > main.level:
        raise NotImplementedError(
            f"axis_index({axis_name!r}) inside a function staged inside that vmap (jit, grad): "
            "take the index outside it and pass it in as an argument")
    size = main.global_data.size
    return BatchTracer(main.trace, iota(np.int32, (size,), 0), 0)

