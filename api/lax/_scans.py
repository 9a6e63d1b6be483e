"""jax.lax's loops over an axis that are compositions of inert's primitives: `map` (a
`scan` without a carry) and `associative_scan` (a parallel prefix scan in slices)."""

from __future__ import annotations

from typing import Any, Callable

from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import get_aval
from ...primitives.control.scan import scan
from ...primitives.shape.slicing import concatenate, slice_in_dim
from ...primitives.shape.structural import reshape, rev
from ..vmap import vmap


def map(f: Callable, xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001 — jax.lax's name
    """jax.lax.map: `f` of each slice of `xs` along its leading axis, stacked; a `scan`
    with no carry. With `batch_size`, `f` is vmapped over batches of that many slices
    (the remainder in one last batch), as JAX does."""
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), None, xs)[1]
    leaves, treedef = tree_flatten(xs)
    n = get_aval(leaves[0]).shape[0]
    full = n - n % batch_size
    batches = [reshape(slice_in_dim(x, 0, full), (full // batch_size, batch_size,
                                                  *get_aval(x).shape[1:])) for x in leaves]
    mapped = map(vmap(f), tree_unflatten(treedef, batches)) if full else None
    mapped_leaves, out_tree = tree_flatten(mapped) if full else ([], None)
    outs = [reshape(y, (full, *get_aval(y).shape[2:])) for y in mapped_leaves]
    if full == n:
        return tree_unflatten(out_tree, outs)
    rest_leaves, rest_tree = tree_flatten(vmap(f)(tree_unflatten(
        treedef, [slice_in_dim(x, full, n) for x in leaves])))
    if not full:
        return tree_unflatten(rest_tree, rest_leaves)
    return tree_unflatten(out_tree, [concatenate([y, r], 0) for y, r in zip(outs, rest_leaves)])


def associative_scan(fn: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """jax.lax.associative_scan: the prefix combinations `e0, fn(e0, e1), fn(fn(e0, e1),
    e2), ...` of `elems` (a pytree of arrays) along `axis`, for an associative `fn` of
    two pytrees of `elems`' structure that works slice-wise. It combines neighbours,
    scans the pairs (half as many) and combines back: about 2n calls' worth of work in
    2 log2(n) calls of `fn` on slices, which is what makes it worth having over `scan`
    (the recursion is log2(n) deep)."""
    leaves, treedef = tree_flatten(elems)
    if not leaves:
        return elems
    ndim = get_aval(leaves[0]).ndim
    axis = axis + ndim if axis < 0 else axis
    lengths = {get_aval(x).shape[axis] for x in leaves}
    if len(lengths) != 1:
        raise ValueError(f"associative_scan: elems have different lengths along axis {axis}: "
                         f"{sorted(lengths)}")

    def combine(a: list, b: list) -> list:
        out, out_tree = tree_flatten(fn(tree_unflatten(treedef, a), tree_unflatten(treedef, b)))
        if out_tree != treedef:
            raise TypeError(f"associative_scan: fn returned the structure {out_tree}, not "
                            f"its inputs' {treedef}")
        return out

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    scanned = _prefix_scan(combine, leaves, axis)
    if reverse:
        scanned = [rev(x, (axis,)) for x in scanned]
    return tree_unflatten(treedef, scanned)


def _prefix_scan(combine: Callable, xs: list, axis: int) -> list:
    """out[2k + 1] is the scan of the pairs (e[2k], e[2k + 1]); out[2k] = out[2k - 1]
    combined with e[2k], and out[0] = e[0]."""
    n = get_aval(xs[0]).shape[axis]
    if n < 2:
        return xs
    evens = [slice_in_dim(x, 0, n, 2, axis) for x in xs]
    odds = [slice_in_dim(x, 1, n, 2, axis) for x in xs]
    pairs = combine([slice_in_dim(e, 0, n // 2, 1, axis) for e in evens], odds)
    odd_out = _prefix_scan(combine, pairs, axis)
    firsts = [slice_in_dim(e, 0, 1, 1, axis) for e in evens]
    if (n - 1) // 2:
        later = combine([slice_in_dim(o, 0, (n - 1) // 2, 1, axis) for o in odd_out],
                        [slice_in_dim(e, 1, (n + 1) // 2, 1, axis) for e in evens])
        firsts = [concatenate([f, r], axis) for f, r in zip(firsts, later)]
    return [_interleaved(e, o, axis) for e, o in zip(firsts, odd_out)]


def _interleaved(evens, odds, axis: int):
    """evens[0], odds[0], evens[1], ...: `evens` has as many elements as `odds` or one
    more; stacked on a new axis after `axis` and merged into it."""
    shape = get_aval(evens).shape
    n = shape[axis] + get_aval(odds).shape[axis]
    if shape[axis] > get_aval(odds).shape[axis]:  # pad odds with a copy of evens' last
        odds = concatenate([odds, slice_in_dim(evens, shape[axis] - 1, shape[axis], 1, axis)],
                           axis)
    stacked_shape = (*shape[:axis + 1], 1, *shape[axis + 1:])
    pair = concatenate([reshape(evens, stacked_shape), reshape(odds, stacked_shape)], axis + 1)
    merged = reshape(pair, (*shape[:axis], 2 * shape[axis], *shape[axis + 1:]))
    return slice_in_dim(merged, 0, n, 1, axis)
