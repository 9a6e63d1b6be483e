"""What every elementwise primitive shares: numpy's broadcasting and type promotion,
applied to avals, to tangents and to cotangents.

An elementwise primitive behaves like a numpy ufunc: operands broadcast together and
the result dtype is numpy's (Python scalars weakly typed, NEP 50). Its derivative
rules must undo both effects exactly, in one place each:

* a jvp contribution is computed from one operand's tangent, so it can have that
  operand's smaller shape or narrower dtype (`x: f32[4]` plus `y: f64[3,4]`);
  `defjvp_elementwise` broadcasts and casts it to the output's tangent type;
* a transpose receives the output's cotangent and must return one of each operand's
  shape and dtype: `unbroadcast_cotangent` sums broadcast axes away and casts back;
* a batched operand must still broadcast against the others lane by lane:
  `defbroadcasting` puts the batch axes where numpy's alignment of trailing axes
  cannot mistake them for data axes.
"""

from __future__ import annotations

import functools

import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray, canonical, concrete_aval, tangent_aval, tangent_dtype
from ...core.errors import DTypeError, ShapeError
from ...core.trace import Primitive, Tracer, get_aval
from ...interpreters.ad import defjvp
from ...interpreters.batching import batch_rules
from ..shape.structural import (
    batch_axis_first,
    broadcast_in_dim,
    convert_element_type,
    unbroadcast_to,
)


def broadcast_shapes(name: str, avals) -> tuple[int, ...]:
    """numpy's broadcast shape of the operands, or a ShapeError naming `name`."""
    shape = avals[0].shape if avals else ()
    if all(a.shape == shape for a in avals):
        return shape
    try:
        return np.broadcast_shapes(*(a.shape for a in avals))
    except ValueError:
        raise ShapeError(f"{name}: operand shapes {', '.join(str(a.shape) for a in avals)} "
                         "do not broadcast together") from None


@functools.lru_cache(maxsize=4096)
def _resolve_dtype(ufunc: np.ufunc, operand_types: tuple) -> np.dtype:
    return ufunc.resolve_dtypes((*operand_types, None))[-1]


def ufunc_abstract_eval(ufunc: np.ufunc, name: str | None = None):
    """Abstract eval of a numpy ufunc: broadcast shapes, numpy's result dtype."""
    name = name or ufunc.__name__

    @functools.lru_cache(maxsize=4096)  # programs repeat a handful of operand types
    def abstract_eval(*avals: ShapedArray) -> ShapedArray:
        shape = broadcast_shapes(name, avals)
        # a weak Python scalar resolves as its type (int, float); numpy takes no `bool`
        # there, and a weak boolean promotes like numpy's anyway
        operand_types = tuple(type(a.dtype.type(0).item()) if a.weak_type and
                              a.dtype != np.bool_ else a.dtype for a in avals)
        try:
            dtype = _resolve_dtype(ufunc, operand_types)
        except TypeError:
            raise DTypeError(f"{name}: not defined for operand dtypes "
                             f"{', '.join(a.dtype.name for a in avals)}") from None
        # a comparison of Python scalars is a bool, never weak (nor is Python's bool)
        return canonical(ShapedArray(shape, dtype,
                                     dtype != np.bool_ and all(a.weak_type for a in avals)))

    return abstract_eval


def zero_scalar(x):
    """A scalar zero of `x`'s tangent dtype: it broadcasts wherever a zero tangent is
    needed, so an inactive operand never becomes an array of zeros."""
    return tangent_dtype(get_aval(x).dtype).type(0)


def fit_tangent(t, out):
    """Broadcast and cast a tangent contribution to the tangent type of `out`."""
    return _fitted_to(t, get_aval(out))


def _fitted_to(t, out_aval: ShapedArray):
    if type(t) is Zero:
        return t
    have = t.aval if isinstance(t, Tracer) else concrete_aval(t)  # get_aval, inline: hot
    if have is out_aval and not have.weak_type and have.dtype.kind in "fc":
        return t  # the usual case: a float output is its own tangent type (`tangent_aval`)
    want = tangent_aval(out_aval)
    if have is want or have.strong() == want:  # a weak tangent needs no conversion
        return t
    t = convert_element_type(t, want.dtype)  # first: the transpose sums in the wider type
    if have.shape != want.shape:
        t = broadcast_in_dim(t, want.shape, range(want.ndim - have.ndim, want.ndim))
    return t


def defjvp_elementwise(prim: Primitive, *operand_rules) -> None:
    """`defjvp` for a broadcasting, promoting primitive: each operand's contribution is
    fitted to the output's tangent type, so a rule reads as the math does (`t * y`).

    Weakly typed operands (Python scalars) reach the rule already in the output's
    dtype: evaluated on its own, arithmetic on Python scalars (`y - 1` in pow's rule)
    gives a float64 numpy scalar that would promote a float32 tangent, while the
    staged program, weakly typed, says float32. NEP 50 casts them to that dtype anyway.
    """

    def fitted(rule):
        if rule is None:
            return None

        def contribution(t, out, *primals, **params):
            out_aval = out.aval if isinstance(out, Tracer) else concrete_aval(out)
            dtype = out_aval.dtype
            for p in primals:  # strongly typed already (the usual case): nothing to build
                aval = p.aval if isinstance(p, Tracer) else concrete_aval(p)
                if aval.weak_type and aval.dtype != dtype:
                    primals = [_strongly_typed(p, dtype) for p in primals]
                    break
            return _fitted_to(rule(t, out, *primals, **params), out_aval)

        return contribution

    defjvp(prim, *map(fitted, operand_rules))


def _strongly_typed(x, dtype):
    """A weak operand in the output's dtype; a complex one of a real output (`abs`)
    keeps its imaginary part, in the complex dtype of the output's width."""
    aval = x.aval if isinstance(x, Tracer) else concrete_aval(x)  # get_aval, inline: hot
    if not aval.weak_type or aval.dtype == dtype:
        return x
    if aval.dtype.kind == "c" and dtype.kind != "c":
        dtype = np.result_type(dtype, np.complex64)
    return convert_element_type(x, dtype)


def unbroadcast_cotangent(ct, aval: ShapedArray):
    """The cotangent of an operand of aval `aval` from the broadcast, promoted `ct`:
    sum the broadcast axes away, then cast back (summing in the wider type)."""
    have = ct.aval if isinstance(ct, Tracer) else concrete_aval(ct)  # get_aval, inline: hot
    if (have is aval or have == aval) and not have.weak_type and have.dtype.kind in "fc":
        return ct  # the usual case: nothing was broadcast or promoted
    return convert_element_type(unbroadcast_to(ct, aval), tangent_dtype(aval.dtype))


def defbroadcasting(prim: Primitive) -> None:
    """Batching for a primitive whose operands broadcast like numpy's: numpy aligns
    trailing axes, so an unbatched operand of lower rank would meet the batch axis of
    a batched one. If every batched operand has the full rank and its batch axis at
    the same place, left of every unbatched operand's axes, they line up already;
    otherwise batch axes go first and batched operands of lower rank get unit axes
    after it, so the unbatched operands, unchanged, align with the data axes."""

    def rule(vals, dims, **params):
        ranks = [get_aval(v).ndim - (d is not None) for v, d in zip(vals, dims)]
        rank = max(ranks)
        batched = {d for d in dims if d is not None}
        dim = batched.pop() if len(batched) == 1 else None
        if dim is not None and all(r == rank if d is not None else r <= rank - dim
                                   for r, d in zip(ranks, dims)):
            return [prim.bind(*vals, **params)], [dim]
        vals = [v if d is None else batch_axis_first(v, d, rank) for v, d in zip(vals, dims)]
        return [prim.bind(*vals, **params)], [0]

    batch_rules[prim] = rule
