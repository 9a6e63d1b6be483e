"""Vectorization: the batching interpreter behind `vmap`.

Rule signature::

    batch_rules[prim](vals: list, dims: list[int | None], **params)
        -> (outs: list, out_dims: list[int | None])

`vals` are the operands with their batch axis still in them, `dims[i]` says where it
is in `vals[i]` (None: operand i is the same for every lane, i.e. not batched). A rule
returns the outputs and where their batch axis is; it may put it wherever is cheapest,
so most rules only rewrite params (a reduction's axes, a slice's bounds) and never move
data. The trace binds an equation with no batched operand directly, without a rule, so
a rule always has at least one batched operand to read the batch size from.

Why the helpers that *move* batch axes are not here: moving an axis is a `transpose`,
and materialising one a `broadcast_in_dim`, which are primitives, and primitives import
the interpreters (core <- interpreters <- primitives). So `moveaxis`/`matchaxis` live
with the structural family (`primitives.shape.structural`), every rule that needs them lives
with its primitive, and the pytree-level `vmap`, which moves the outputs' axes to
`out_axes`, is `api.vmap` (as `jacfwd` is `api.jacobian`). This module
only tracks where the axes are: `defvectorized` and `defreducer` need no moves. For
the same reason `add_any`'s rule, which must align its operands, is registered by
`primitives.shape.structural` next to `matchaxis`; `zeros`' rule is here.

A value from an outer transformation (or a constant) is unbatched here: it is the same
for every lane, and rules see it with dim None. Nested `vmap`s therefore compose, and
`vmap` commutes with `jvp`/`grad` at any nesting.

A vmap may name its axis (`vmap(f, axis_name="i")`, `AxisData`): the collectives
(`psum`, `pmax`, `all_gather` ...) name the axis they reduce over, and their rules
(`collective_rules`, `rule(axis: AxisData, vals, dims, **params)`) are asked by every
vmap between: the named one reduces over its lanes (an operand without its batch axis
is the same in every lane), the others map the collective lane by lane, one level down.

Refs: a ref created while this vmap runs (a `BatchRef`) starts unbatched if its
initial value is, and gets one value per lane (along axis 0) when a value that
differs between lanes is first written into it (`ref_broadcast_rules`); so the primal
ref of a `jacfwd` stays one array. A ref from outside is the same for every lane, so
writing a batched value into it raises `ActivityError`, as for an inactive ref under
a jvp.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..core.avals import AbstractRef, ShapedArray
from ..core.errors import ConcretizationError
from ..core.rules import RuleTable
from ..core.trace import (
    MainTrace,
    Primitive,
    Trace,
    Tracer,
    full_lower,
    get_aval,
    new_main,
    quietly,
    trace_stack,
    user_source_info,
)
from .ad import inactive_ref_write, zeros_p

batch_rules = RuleTable("batching")
collective_rules = RuleTable("collective")

ref_broadcast_rules = RuleTable("ref broadcast")
"""`broadcast(ref, size) -> ref`, keyed by the primitive that created the ref: a new
ref holding `size` copies of the contents of `ref` (unbatched), stacked on axis 0."""


def batched_axis(axis: int, dim: int) -> int:
    """Where axis `axis` of the unbatched value is, once a batch axis sits at `dim`."""
    return axis + (axis >= dim)


def batch_size(vals, dims) -> int:
    """The number of lanes, read off the first batched operand."""
    return next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def batched_aval(aval: ShapedArray, dim: int | None, size: int) -> ShapedArray:
    """The aval of `size` lanes of `aval` stacked along `dim` (None: `aval` itself)."""
    if dim is None:
        return aval
    shape = list(aval.shape)
    shape.insert(dim, size)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def defvectorized(prim: Primitive) -> None:
    """Operations that act on each element (or each lane) alike with one operand
    (`sin`, `convert_element_type`, `integer_pow`): the batch axis stays in place."""

    def rule(vals, dims, **params):
        return [prim.bind(*vals, **params)], list(dims)

    batch_rules[prim] = rule


def defreducer(prim: Primitive, axes_param: str = "axes") -> None:
    """Operations that remove the axes listed in a param (the reductions, `squeeze`):
    the axes are renumbered around the batch axis, which stays, shifted left by the
    removed axes before it."""

    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        axes = params[axes_param]
        params[axes_param] = tuple(batched_axis(a, d) for a in axes)
        return [prim.bind(x, **params)], [d - sum(a < d for a in axes)]

    batch_rules[prim] = rule


def defnullary(prim: Primitive) -> None:
    """Operations without operands (`zeros`, `iota`): with no operand batched, the
    trace binds them directly; their rule says the same, one value for every lane."""
    batch_rules[prim] = lambda vals, dims, **params: ([prim.bind(**params)], [None])


# `add_any`'s rule aligns its operands' batch axes, so it needs the structural
# primitives: `primitives.shape.structural` registers it. `zeros` needs nothing:
defnullary(zeros_p)


# ---------------------------------------------------------------------------------
# Tracer and trace


class BatchTracer(Tracer):
    """`val` holds every lane, stacked along `batch_dim`; None marks a value lifted into
    this trace (a constant or an outer tracer), which lowers back to itself."""

    __slots__ = ("val", "batch_dim")

    def __init__(self, trace, val, batch_dim: int | None):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval, d = get_aval(self.val), self.batch_dim
        if d is None:
            return aval
        if type(aval) is AbstractRef:  # a ref of one lane's contents
            return AbstractRef(lane_aval(aval.inner, d), aval.source)
        return lane_aval(aval, d)


    def full_lower(self):
        return full_lower(self.val) if self.batch_dim is None else self

    def concrete_value(self, why: str, lossy: bool = False):
        raise mapped_value_error(why, self.aval)


def mapped_value_error(why: str, aval: ShapedArray) -> ConcretizationError:
    """Python asked for the value of a mapped array (one lane's aval)."""
    return ConcretizationError(
        f"{why} needs one concrete value, but under vmap this array "
        f"{aval.str_short()} has one value per lane. Use inert.numpy.where for "
        "a data-dependent choice, inert.lax.cond for a branch, and "
        "inert.lax.while_loop for a loop: vmap batches those."
    ).with_source(user_source_info())


def lane_aval(aval: ShapedArray, d: int) -> ShapedArray:
    """One lane's aval of a value mapped along axis `d`."""
    return ShapedArray(aval.shape[:d] + aval.shape[d + 1:], aval.dtype, aval.weak_type)


@attrs.frozen
class AxisData:
    """A vmap's axis: its name (None: unnamed) and how many lanes it has (None: a vmap
    of nothing batched, as a loop's rule may run)."""

    name: Any
    size: int | None


def named_axis(name) -> MainTrace:
    """The innermost vmap in progress whose axis is `name`; NameError if none is, as
    JAX's collectives raise outside their vmap."""
    for main in reversed(trace_stack()):
        if main.trace_type is BatchTrace and main.global_data.name == name:
            return main
    raise NameError(f"unbound axis name: {name!r} (no vmap in progress names its axis so; "
                    "pass vmap(..., axis_name=...))")


class BatchTrace(Trace):
    __slots__ = ()

    def lift(self, val) -> BatchTracer:
        return BatchTracer(self, val, None)

    def process_primitive(self, prim, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.batch_dim for t in tracers]
        if prim.effect == "new":  # a ref of this level
            outs, out_dims = batch_rules[prim](vals, dims, **params)
            return [BatchRef(self, o, d, prim) for o, d in zip(outs, out_dims)]
        collective = collective_rules.get(prim)
        if collective is not None:
            outs, out_dims = collective(self.main.global_data, vals, dims, **params)
            return [o if d is None else BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]
        if all(d is None for d in dims):
            out = prim.bind(*vals, **params)  # the same for every lane
            return out if prim.multiple_results else [out]
        if prim.effect == "write" and dims[0] is None:
            vals[0], dims[0] = self._lanes_of(tracers[0], batch_size(vals, dims))
        outs, out_dims = batch_rules[prim](vals, dims, **params)
        return [o if d is None else BatchTracer(self, o, d) for o, d in zip(outs, out_dims)]


    def _lanes_of(self, ref, size: int):
        """An unbatched ref written with values that differ between lanes: one value
        per lane from now on if it is this level's own; an error if it is not."""
        if type(ref) is not BatchRef:
            raise inactive_ref_write(self.main, get_aval(ref.val),
                                     "maps the value written here (it differs between lanes)",
                                     "mapped")
        ref.val = ref_broadcast_rules[ref.created_by](ref.val, size)  # one level down
        ref.batch_dim = 0
        return ref.val, 0


class BatchRef(BatchTracer):
    """A ref created at this level: never lowered, so that a write that batches it
    reaches every holder (`BatchTrace._lanes_of`)."""

    __slots__ = ("created_by",)

    def __init__(self, trace, val, batch_dim: int | None, created_by: Primitive):
        super().__init__(trace, val, batch_dim)
        self.created_by = created_by

    def full_lower(self):
        return self


# ---------------------------------------------------------------------------------
# Flat API


def vmap_flat(fun, vals: list, dims: list, axis_name=None) -> tuple[list, list]:
    """Run `fun` once on all lanes: input i batched along `dims[i]` (None: the same
    for every lane). Returns the outputs and where their batch axes are (None for an
    output that is the same for every lane). No floating-point warnings (`quietly`)."""
    return quietly(_vmap_flat, fun, vals, dims, axis_name)


def _vmap_flat(fun, vals: list, dims: list, axis_name) -> tuple[list, list]:
    axis = AxisData(axis_name, next((get_aval(v).shape[d] for v, d in zip(vals, dims)
                                     if d is not None), None))
    with new_main(BatchTrace, axis, name="vmap") as main:
        tracers = [v if d is None else BatchTracer(main.trace, v, d) for v, d in zip(vals, dims)]
        pairs = [_val_and_dim(main, o) for o in fun(*tracers)]
        return [v for v, _ in pairs], [d for _, d in pairs]


def _val_and_dim(main, out):
    if isinstance(out, BatchTracer) and out._trace.main is main:
        return out.val, out.batch_dim
    return out, None
