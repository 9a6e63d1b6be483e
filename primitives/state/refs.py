"""The primitives on mutable references (refs).

A ref is a value of type `AbstractRef` (printed `Ref{f64[3]}`); outside any
transformation it is a `Ref`, a numpy buffer that its impls mutate. Reads and writes
address a *region* described as `gather`'s is (`indexing.gather_scatter`): integer
index arrays, one per axis in `axes`, every other axis taken whole; `axes=()` is the
whole ref. `api.ref` turns numpy indices into regions.

* `new_ref` (effect "new") is bound at the innermost transformation in progress, so
  a ref belongs to every transformation whose function creates it: a jvp gives it a
  tangent ref (zeros to start with), a vmap one value per lane (once one is needed).
* `get` and `freeze` read ("read"); `swap` and `addupdate` write ("write").

No rule transposes them: reverse mode sees refs *discharged* into functional programs
(`discharge_rules`, applied by the staging trace while linearizing, and by
`discharge.discharge_jaxpr` for control-flow bodies), whose reads are gathers of the
current contents and whose writes are scatters into them.
"""

from __future__ import annotations

import numpy as np

from ...core.activity import Zero
from ...core.avals import AbstractRef, Ref, is_float, tangent_aval
from ...core.errors import DTypeError, ShapeError
from ...core.staging import discharge_rules
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules, user_source_info
from ...interpreters.ad import instantiate_zeros, jvp_rules
from ...interpreters.batching import batch_rules, batch_size, ref_broadcast_rules
from ..elementwise import add
from ..indexing.gather_scatter import (
    full_index,
    gather,
    gather_p,
    index_dims_start,
    index_rank,
    region_aval,
    scatter,
    scatter_add,
    scatter_add_p,
    scatter_p,
)
from ..shape.structural import matchaxis, moveaxis


def _ref_aval(name: str, ref) -> AbstractRef:
    if type(ref) is not AbstractRef:
        raise DTypeError(f"{name}: operand 0 must be a ref (made by inert.new_ref), got an "
                         f"array {ref.str_short()}")
    return ref


def _region(name: str, ref, indices, axes):
    return region_aval(name, _ref_aval(name, ref).inner, indices, axes)


def _written_region(name: str, ref, updates, indices, axes):
    region = _region(name, ref, indices, axes)
    if updates.shape != region.shape or updates.dtype != region.dtype:
        raise ShapeError(f"{name}: the values written, {updates.str_short()}, do not have the "
                         f"type {region.str_short()} of the region of {ref.str_short()} they "
                         "are written to")
    return region


def _shifted(axes) -> tuple[int, ...]:
    return tuple(a + 1 for a in axes)


def _lanes_in_region(axes, indices) -> int:
    """Where the lanes of a ref batched along axis 0 land in a region read with the same
    indices in every lane: in front, unless the index dimensions go there (numpy puts
    them first when the indexed axes are not consecutive)."""
    if not axes or index_dims_start(_shifted(axes)):
        return 0
    return index_rank(indices, [None] * len(indices))


# ---------------------------------------------------------------------------------
new_ref_p = Primitive("new_ref", effect="new")


def new_ref(x):
    """A new ref holding a copy of `x`."""
    return new_ref_p.bind(x)


impl_rules[new_ref_p] = lambda x: Ref(np.array(x, copy=True), user_source_info())


def new_ref_abstract_eval(x):
    if type(x) is AbstractRef:
        raise DTypeError("new_ref: the initial value is a ref, not an array")
    return AbstractRef(x.strong(), user_source_info())


abstract_eval_rules[new_ref_p] = new_ref_abstract_eval


def new_ref_jvp(primals, tangents):
    """Created at this level, the ref is active here: its tangent ref starts at the
    initial value's tangent (zeros for a constant). Integer refs are inactive by type."""
    (x,), (t,) = primals, tangents
    ref = new_ref(x)
    t_aval = tangent_aval(get_aval(ref))
    if not is_float(t_aval.dtype):
        return [ref], [Zero(t_aval)]
    return [ref], [new_ref(instantiate_zeros(t))]


jvp_rules[new_ref_p] = new_ref_jvp
# transpose: none, refs are discharged before transposition (module docstring)


def new_ref_batch(vals, dims):
    """Created inside a vmap, the ref has a value per lane (along axis 0) if its initial
    value has; else it gets them when a value per lane is written into it."""
    (x,), (d,) = vals, dims
    if d is None:
        return [new_ref(x)], [None]
    return [new_ref(moveaxis(x, d, 0))], [0]


batch_rules[new_ref_p] = new_ref_batch
ref_broadcast_rules[new_ref_p] = lambda ref, size: new_ref(matchaxis(freeze(ref), None, 0, size))

# ---------------------------------------------------------------------------------
get_p = Primitive("get", effect="read", operand_names=("ref",))


def get(ref, *indices, axes=()):
    """The region of the ref's contents (a copy: later writes do not change it)."""
    return get_p.bind(ref, *indices, axes=tuple(axes))


def get_impl(ref, *indices, axes):
    return np.array(ref.buffer[full_index(ref.buffer.ndim, axes, indices)], copy=True)


impl_rules[get_p] = get_impl
abstract_eval_rules[get_p] = lambda ref, *indices, axes: _region("get", ref, indices, axes)


def get_jvp(primals, tangents, *, axes):
    (ref, *indices), t_ref = primals, tangents[0]
    return [get(ref, *indices, axes=axes)], [get(t_ref, *indices, axes=axes)]


jvp_rules[get_p] = get_jvp
# transpose: none (module docstring)


def get_discharge(contents, *indices, axes):
    return contents, [gather(contents, *indices, axes=axes) if axes else contents]


discharge_rules[get_p] = get_discharge


def get_batch(vals, dims, *, axes):
    """Indices the same for every lane and a ref batched along axis 0: one read of every
    lane's region. Otherwise a read of the whole contents, then a batched gather."""
    (ref, *indices), (dr, *index_dims) = vals, dims
    if dr == 0 and all(d is None for d in index_dims):
        return [get(ref, *indices, axes=_shifted(axes))], [_lanes_in_region(axes, indices)]
    return batch_rules[gather_p]([get(ref), *indices], [dr, *index_dims], axes=axes,
                                 mode="clip", fill_value=None)


batch_rules[get_p] = get_batch

# ---------------------------------------------------------------------------------
swap_p = Primitive("swap", effect="write", operand_names=("ref", "values"))


def swap(ref, updates, *indices, axes=()):
    """Write `updates` into the region (of duplicate indices the last wins); returns
    what the region held before."""
    return swap_p.bind(ref, updates, *indices, axes=tuple(axes))


def swap_impl(ref, updates, *indices, axes):
    index = full_index(ref.buffer.ndim, axes, indices)
    old = np.array(ref.buffer[index], copy=True)
    ref.buffer[index] = updates
    return old


impl_rules[swap_p] = swap_impl
abstract_eval_rules[swap_p] = lambda ref, updates, *indices, axes: _written_region(
    "swap", ref, updates, indices, axes)


def swap_jvp(primals, tangents, *, axes):
    """The tangent ref gets the value's tangent: zeros for an inactive value, so an
    overwritten slot has no derivative from then on. (The trace has checked that the
    ref is active here if the value is.)"""
    (ref, updates, *indices), (t_ref, t_updates) = primals, tangents[:2]
    old = swap(ref, updates, *indices, axes=axes)
    return [old], [swap(t_ref, instantiate_zeros(t_updates), *indices, axes=axes)]


jvp_rules[swap_p] = swap_jvp
# transpose: none (module docstring)


def swap_discharge(contents, updates, *indices, axes):
    if not axes:
        return updates, [contents]
    return scatter(contents, updates, *indices, axes=axes), [gather(contents, *indices,
                                                                    axes=axes)]


discharge_rules[swap_p] = swap_discharge


def swap_batch(vals, dims, *, axes):
    (ref, updates, *indices), (dr, du, *index_dims) = vals, dims
    size = batch_size(vals, dims)
    if dr == 0 and all(d is None for d in index_dims):
        at = _lanes_in_region(axes, indices)
        return [swap(ref, matchaxis(updates, du, at, size), *indices, axes=_shifted(axes))], [at]
    whole = get(ref)
    (old,), (old_dim,) = batch_rules[gather_p]([whole, *indices], [dr, *index_dims], axes=axes,
                                               mode="clip", fill_value=None)
    (new,), (new_dim,) = batch_rules[scatter_p]([whole, updates, *indices],
                                                [dr, du, *index_dims], axes=axes, mode="drop")
    swap(ref, matchaxis(new, new_dim, dr, size))
    return [old], [old_dim]


batch_rules[swap_p] = swap_batch

# ---------------------------------------------------------------------------------
addupdate_p = Primitive("addupdate", multiple_results=True, effect="write",
                        operand_names=("ref", "values"))


def addupdate(ref, updates, *indices, axes=()):
    """Add `updates` into the region (duplicate indices accumulate)."""
    addupdate_p.bind(ref, updates, *indices, axes=tuple(axes))


def addupdate_impl(ref, updates, *indices, axes):
    np.add.at(ref.buffer, full_index(ref.buffer.ndim, axes, indices), updates)
    return []


impl_rules[addupdate_p] = addupdate_impl


def addupdate_abstract_eval(ref, updates, *indices, axes):
    _written_region("addupdate", ref, updates, indices, axes)
    return []


abstract_eval_rules[addupdate_p] = addupdate_abstract_eval


def addupdate_jvp(primals, tangents, *, axes):
    (ref, updates, *indices), (t_ref, t_updates) = primals, tangents[:2]
    addupdate(ref, updates, *indices, axes=axes)
    if type(t_updates) is not Zero:
        addupdate(t_ref, t_updates, *indices, axes=axes)
    return [], []


jvp_rules[addupdate_p] = addupdate_jvp
# transpose: none (module docstring)


def addupdate_discharge(contents, updates, *indices, axes):
    if not axes:
        return add(contents, updates), []
    return scatter_add(contents, updates, *indices, axes=axes), []


discharge_rules[addupdate_p] = addupdate_discharge


def addupdate_batch(vals, dims, *, axes):
    (ref, updates, *indices), (dr, du, *index_dims) = vals, dims
    size = batch_size(vals, dims)
    if dr == 0 and all(d is None for d in index_dims):
        at = _lanes_in_region(axes, indices)
        addupdate(ref, matchaxis(updates, du, at, size), *indices, axes=_shifted(axes))
        return [], []
    whole = get(ref)
    (new,), (new_dim,) = batch_rules[scatter_add_p]([whole, updates, *indices],
                                                    [dr, du, *index_dims], axes=axes,
                                                    mode="drop")
    swap(ref, matchaxis(new, new_dim, dr, size))
    return [], []


batch_rules[addupdate_p] = addupdate_batch

# ---------------------------------------------------------------------------------
freeze_p = Primitive("freeze", effect="read", operand_names=("ref",))


def freeze(ref):
    """The ref's contents, as an array (a copy: the ref stays usable)."""
    return freeze_p.bind(ref)


impl_rules[freeze_p] = lambda ref: ref.buffer.copy()
abstract_eval_rules[freeze_p] = lambda ref: _ref_aval("freeze", ref).inner
jvp_rules[freeze_p] = lambda primals, tangents: ([freeze(primals[0])], [freeze(tangents[0])])
# transpose: none (module docstring)
discharge_rules[freeze_p] = lambda contents: (contents, [contents])
batch_rules[freeze_p] = lambda vals, dims: ([freeze(vals[0])], [dims[0]])
