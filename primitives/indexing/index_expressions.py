"""Reading a numpy index: what `x[idx]` and `x.at[idx]` mean in terms of primitives.

`indexing.getitem` and `indexing.index_update` are built on this. Any numpy index
(ints, slices with any step, None, Ellipsis, integer arrays, concrete boolean masks)
is first normalised to one entry per item. Without integer arrays it is *basic*
indexing: a reverse, one strided slice and a reshape, which numpy runs as views and
whose transposes are cheap. Otherwise the whole index becomes one `gather` (or a
scatter, for updates) over a range of axes: the slices in that range become iotas,
and every index array is shaped to broadcast into its place in numpy's result, so
the region the primitive sees already has numpy's layout.

Traced integer scalars are index arrays of shape (): they need no concrete value
and wrap when negative as numpy's do. An index out of bounds is no error, as in JAX:
a concrete int out of bounds becomes an index array of shape () too, so that the
gather or scatter treats it as its mode says (`bounds`). Only an axis of size 0
refuses every index.
"""

from __future__ import annotations

import attrs
import numpy as np

from ...core.errors import IndexingError, ShapeError
from ...core.trace import Tracer, get_aval, user_source_info
from ..elementwise import add, mul
from ..shape import slicing as sl
from ..shape.structural import broadcast_in_dim, convert_element_type, iota, reshape, rev


def _index_error(message: str) -> IndexingError:
    return IndexingError(message).with_source(user_source_info())


def is_index_array(entry) -> bool:
    return isinstance(entry, (np.ndarray, Tracer))


# ---------------------------------------------------------------------------------
# Normalising an index


def normalize_index(idx, shape) -> list:
    """numpy's index as a list of entries: None, a slice, an int in range, or an
    integer array (numpy or traced). Ellipsis is expanded, `:` fills the axes left,
    and a boolean mask becomes the integer arrays of its nonzero positions. An
    Ellipsis of no axes stays, as `Ellipsis`, where there are index arrays: it
    separates them as anything else does (numpy's `x[:, [0], ..., 0]` puts the arrays'
    dimensions first even where the Ellipsis spans no axis; `index_plan`)."""
    items = [_index_item(item) for item in (idx if isinstance(idx, tuple) else (idx,))]
    n_axes = sum(_n_axes(item) for item in items)
    if n_axes > len(shape):
        raise _index_error(f"too many indices for an array of shape {shape}: "
                         f"{n_axes} axes are indexed")
    ellipses = [i for i, item in enumerate(items) if item is Ellipsis]
    if len(ellipses) > 1:
        raise _index_error("an index can only have a single ellipsis ('...')")
    at = ellipses[0] if ellipses else len(items)
    # the axes the Ellipsis spans, or the Ellipsis itself where it spans none
    spanned = [slice(None)] * (len(shape) - n_axes) or [Ellipsis] * bool(ellipses)
    items = items[:at] + spanned + items[at + 1:]
    entries, axis = [], 0
    for item in items:
        if _is_mask(item):
            entries += _mask_indices(item, shape, axis)
        elif isinstance(item, int):
            entries.append(_int_entry(item, shape[axis], axis))
        elif isinstance(item, np.ndarray):
            entries.append(_check_axis_not_empty(item, shape[axis], axis))
        else:
            entries.append(item)
        axis += _n_axes(item)
    if not any(is_index_array(e) for e in entries):  # basic indexing: nothing to separate
        entries = [e for e in entries if e is not Ellipsis]
    return entries


def _index_item(item):
    """One item of an index, with sequences as arrays and numpy integers as ints."""
    if item is None or item is Ellipsis or isinstance(item, slice):
        return item
    if isinstance(item, (bool, np.bool_)):
        raise _index_error("boolean scalar indices are not supported")
    if isinstance(item, (int, np.integer)):
        return int(item)
    if isinstance(item, Tracer):
        if item.dtype.kind in "iu":
            return item
        if item.dtype == np.bool_:
            return np.asarray(item.concrete_value(
                "boolean-mask indexing (its result's shape depends on the mask's values; "
                "use inert.numpy.where to select values instead)"))
        raise _index_error("arrays used as indices must be of integer or boolean type, "
                         f"got a traced {item.aval.str_short()}")
    array = np.asarray(item)
    if array.dtype.kind in "iu" or (array.dtype == np.bool_ and array.ndim > 0):
        return array
    if array.size == 0 and array.dtype == np.float64:  # `[]`, numpy's empty index
        return array.astype(np.intp)
    raise _index_error("only integers, slices, None, Ellipsis and integer or boolean arrays "
                     f"are valid indices (got {item!r:.60})")


def _is_mask(item) -> bool:
    return isinstance(item, np.ndarray) and item.dtype == np.bool_


def _n_axes(item) -> int:
    """How many axes of the indexed array an index item consumes."""
    if item is None or item is Ellipsis:
        return 0
    return item.ndim if _is_mask(item) else 1


def _mask_indices(mask: np.ndarray, shape, axis: int) -> list[np.ndarray]:
    axes_shape = tuple(shape[axis:axis + mask.ndim])
    if mask.shape != axes_shape:
        raise _index_error(f"a boolean index of shape {mask.shape} does not match the indexed "
                         f"axes of shape {axes_shape} (from axis {axis})")
    return list(np.nonzero(mask))


def _int_entry(i: int, n: int, axis: int):
    """An int in bounds indexes basically (wrapped); one out of bounds is an index
    array, for the primitive's mode to clamp, fill or drop."""
    if -n <= i < n:
        return i % n
    return _check_axis_not_empty(np.asarray(i, np.int64), n, axis)


def _check_axis_not_empty(index: np.ndarray, n: int, axis: int) -> np.ndarray:
    """Nothing to clamp to: an axis of size 0 takes no index, as in numpy and JAX."""
    if n == 0 and index.size:
        raise _index_error(f"index {index.flat[0]} is out of bounds for axis {axis} with size 0")
    return index


def _slice_range(s: slice, n: int) -> tuple[int, int, int]:
    """(first index, count, step) of a slice of an axis of size `n`."""
    start, stop, step = s.indices(n)
    return start, len(range(start, stop, step)), step


# ---------------------------------------------------------------------------------
# Basic indexing


def basic_getitem(x, entries, shape):
    """Ints and slices: one strided slice (after reversing the axes sliced with a
    negative step), then a reshape that drops the int axes and adds the None ones."""
    starts, limits, strides, flipped, out_shape = [], [], [], [], []
    axis = 0
    for entry in entries:
        if entry is None:
            out_shape.append(1)
            continue
        if isinstance(entry, int):
            first, count, step = entry, 1, 1
        else:
            first, count, step = _slice_range(entry, shape[axis])
            out_shape.append(count)
        if step < 0:
            flipped.append(axis)
            first, step = shape[axis] - 1 - first, -step
        starts.append(first if count else 0)
        limits.append(first + (count - 1) * step + 1 if count else 0)
        strides.append(step)
        axis += 1
    sliced = sl.slice(rev(x, tuple(flipped)) if flipped else x, starts, limits, strides)
    if len(out_shape) == len(shape) and None not in entries:  # no int, no None: same rank
        return sliced
    return reshape(sliced, out_shape)


# ---------------------------------------------------------------------------------
# Advanced indexing


@attrs.frozen
class IndexPlan:
    """`x[entries]` is the region of `gather(x, *indices, axes=axes)`, whose shape is
    `region_shape`, reshaped to numpy's result `shape` (which has the None axes)."""

    indices: tuple
    axes: tuple[int, ...]
    shape: tuple[int, ...]
    region_shape: tuple[int, ...]


_GROUP = -1  # labels the result dimensions that come from the index arrays


def index_plan(entries, shape) -> IndexPlan:
    """Index arrays for the axes from the first to the last one not taken whole.

    Ints index like arrays of shape (), as in numpy. Each index array, and an iota
    for each slice in the range, is given trailing unit axes so that together they
    broadcast to exactly numpy's layout of the result.
    """
    entries = [np.asarray(e) if isinstance(e, int) else e for e in entries]
    axis_of = _axis_of_entries(entries)
    dims, in_front = _result_dims(entries, shape, axis_of)
    region = [(label, d) for label, d in dims if label == _GROUP or entries[label] is not None]
    shapes = (tuple(d for _, d in dims), tuple(d for _, d in region))
    touched = [axis_of[i] for i, e in enumerate(entries)
               if axis_of[i] is not None and not _takes_all(e, shape[axis_of[i]])]
    if not touched:
        return IndexPlan((), (), *shapes)
    first, last = (0 if in_front else min(touched)), max(touched)
    labels = [label for label, _ in region[first:len(region) - (len(shape) - 1 - last)]]
    indices = [_placed_index(e, shape[axis_of[i]], labels, i)
               for i, e in enumerate(entries)
               if axis_of[i] is not None and first <= axis_of[i] <= last]
    return IndexPlan(tuple(indices), tuple(range(first, last + 1)), *shapes)


def _result_dims(entries, shape, axis_of) -> tuple[list, bool]:
    """numpy's result dimensions as (label, size) pairs, labelled by the entry they
    come from, or `_GROUP` for those of the broadcast index arrays: numpy puts these
    in place of the arrays if the arrays are adjacent in the index, else in front
    (which is returned too)."""
    arrays = [i for i, e in enumerate(entries) if is_index_array(e)]
    group = _broadcast_index_shapes([get_aval(entries[i]).shape for i in arrays])
    dims = [(i, _slice_range(e, shape[axis_of[i]])[1] if isinstance(e, slice) else 1)
            for i, e in enumerate(entries) if not is_index_array(e) and e is not Ellipsis]
    in_front = bool(group) and arrays != list(range(arrays[0], arrays[-1] + 1))
    at = 0 if in_front or not arrays else sum(1 for i, _ in dims if i < arrays[0])
    dims[at:at] = [(_GROUP, d) for d in group]
    return dims, in_front


def _takes_all(entry, n: int) -> bool:
    return isinstance(entry, slice) and entry.indices(n) == (0, n, 1)


def _axis_of_entries(entries) -> list:
    """The axis of the indexed array each entry applies to (None for None and for an
    Ellipsis of no axes)."""
    axes, axis = [], 0
    for e in entries:
        spans = e is not None and e is not Ellipsis
        axes.append(axis if spans else None)
        axis += spans
    return axes


def _broadcast_index_shapes(shapes) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise _index_error("shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {' '.join(map(str, shapes))}") from None


def _placed_index(entry, n: int, labels: list, i: int):
    """The index array of entry `i` with trailing unit axes: it broadcasts into its
    place among the region dimensions `labels`. A slice's indices are an iota, which
    the backward pass recomputes instead of keeping."""
    if not is_index_array(entry):
        first, count, step = _slice_range(entry, n)
        index = iota(np.int64, (count, *[1] * (len(labels) - labels.index(i) - 1)), 0)
        index = mul(index, step) if step != 1 else index
        return add(index, first) if first else index
    if get_aval(entry).ndim == 0:
        return entry[()] if isinstance(entry, np.ndarray) else entry  # a literal if it can
    trailing = len(labels) - labels.index(_GROUP) - labels.count(_GROUP)
    new_shape = (*get_aval(entry).shape, *[1] * trailing)
    if isinstance(entry, np.ndarray):
        return entry.reshape(new_shape)
    return reshape(entry, new_shape)


def fit_updates(values, dtype, plan: IndexPlan):
    """`values` as the updates of the region: cast, broadcast to numpy's result shape
    (leading unit axes beyond it dropped, as numpy does) and reshaped to the region."""
    if isinstance(values, (list, tuple)):
        values = np.asarray(values)
    shape = given = get_aval(values).shape
    while len(shape) > len(plan.shape) and shape[0] == 1:
        shape = shape[1:]
    values = reshape(convert_element_type(values, dtype), shape)
    try:
        fits = np.broadcast_shapes(shape, plan.shape) == plan.shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"index_update: values of shape {given} cannot be "
                         f"broadcast to the indexed shape {plan.shape}"
                         ).with_source(user_source_info())
    if shape != plan.shape:
        n = len(plan.shape)
        values = broadcast_in_dim(values, plan.shape, tuple(range(n - len(shape), n)))
    return reshape(values, plan.region_shape)
