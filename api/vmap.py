"""`vmap`: the pytree-level API of the batching interpreter.

It sits with the primitives, not with the interpreters, because placing the outputs'
batch axes at `out_axes` moves and stacks arrays, which needs the structural
primitives (see `interpreters.batching`). The semantics are JAX's: `in_axes` and
`out_axes` are an int, None, or a pytree prefix of the arguments (a tuple with one
entry per positional argument) or of the output; negative axes count from the end;
the batch size is read off the mapped arguments, which must agree.

`Inactive(x)` is not a transformation's marker for vmap, which differentiates
nothing: it is unwrapped to map `x` (the marker is transparent to `in_axes`) and put
back around the batched `x`, so a `grad` inside the vmapped function still sees it
and treats `x` as inactive: `vmap(grad(f), in_axes=(0, None))(xs, Inactive(c))`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Hashable

from ..core.pytree import PyTreeDef, tree_flatten, tree_unflatten
from ..core.trace import get_aval
from ..core.traceback_util import api_boundary
from ..interpreters.batching import lane_aval, vmap_flat
from ..primitives.shape.structural import matchaxis
from .arguments import flatten_args, recording_untraced
from .numpy._array import returned_leaves
from .replaying import transformed


def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Hashable | None = None,
         axis_size: int | None = None, spmd_axis_name: Any = None) -> Callable:
    """`f` mapped over an axis of its arguments, its outputs stacked: a loop over the
    axis, run as one program whose primitives take the whole batch.

    Args:
        f: the function to map.
        in_axes: the mapped axis of each argument: an int for all of them, or a tuple
            with one entry per argument (an int, `None` for an unmapped argument, or a
            pytree prefix of the argument).
        out_axes: where the mapped axis goes in each output, likewise (`None`: an
            output that does not depend on the mapped axis, unstacked).
        axis_name: names the mapped axis for the collectives inside `f` (`lax.psum`,
            `pmean`, `pmax`, `pmin`, `all_gather`, `axis_index`).
        axis_size: must match the mapped arguments' (inert maps at least one).
        spmd_axis_name: accepted for JAX's signature; it has no effect.

    Returns:
        The mapped function.

    Example:
        >>> print(inert.vmap(jnp.dot)(np.ones((2, 3)), np.arange(6.0).reshape(2, 3)))
        [ 3. 12.]
        >>> inert.vmap(jnp.matmul, in_axes=(0, None))(np.ones((4, 3)), np.ones((3, 2))).shape
        (4, 2)
    """
    del spmd_axis_name
    if isinstance(in_axes, list):  # as JAX: a list can only mean one entry per argument
        in_axes = tuple(in_axes)

    @api_boundary
    @functools.wraps(f)
    def vmapped(*args):
        flat = flatten_args(args)
        plain = tuple(flat.unflatten(flat.leaves))
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap: in_axes has {len(in_axes)} entries, but the function "
                             f"was called with {len(args)} positional arguments")
        args_tree = tree_flatten(plain)[1]
        paths = _leaf_paths(args_tree, "args")
        axes = _axes_per_leaf(in_axes, args_tree, "in_axes")
        axes = [_normalized_in_axis(a, x, p) for a, x, p in zip(axes, flat.leaves, paths)]
        size = _axis_size(flat.leaves, axes, paths)
        if axis_size is not None and axis_size != size:
            raise ValueError(f"vmap: axis_size={axis_size}, but the mapped axes have size "
                             f"{size}")
        out_prefix = tree_flatten(out_axes, is_leaf=lambda a: a is None)
        # a named axis is found by collectives only while vmap runs: never replayed
        params = None if axis_name is not None else (tuple(axes), tuple(out_prefix[0]),
                                                     out_prefix[1])
        outs, _, (out_tree, _, _) = transformed(
            "vmap", params, f, flat, False, _mapped(axes, axis_name, out_axes, size),
            active=[a is not None for a in axes], markers=True,
            lanes=[x if a is None else lane_aval(get_aval(x), a)
                   for x, a in zip(flat.leaves, axes)])
        return tree_unflatten(out_tree, returned_leaves(outs, flat.leaves))

    return vmapped


def _mapped(axes: list, axis_name, out_axes, size: int):
    """vmap's `apply` (`api.replaying`): the outputs with their batch axes at
    `out_axes`. Arrays the function returns as they are stay the user's
    (`recording_untraced`)."""

    def apply(fun, leaves, extras, out_store):
        untraced: list = []
        outs, dims = vmap_flat(recording_untraced(fun, untraced), leaves, axes, axis_name)
        out_tree = out_store[0]
        wanted = _axes_per_leaf(out_axes, out_tree, "out_axes")
        placed = [_place_output(o, d, w, size, p) for o, d, w, p in
                  zip(outs, dims, wanted, _leaf_paths(out_tree, "output"))]
        return returned_leaves(placed, untraced), None

    return apply


def _axes_per_leaf(prefix, tree: PyTreeDef, what: str) -> list:
    """One entry of the pytree prefix `prefix` (of ints and Nones) per leaf of `tree`."""
    prefix_leaves, prefix_tree = tree_flatten(prefix, is_leaf=lambda a: a is None)
    for a in prefix_leaves:
        if a is not None and (not isinstance(a, int) or isinstance(a, bool)):
            raise TypeError(f"vmap: {what} must be ints or None, got {a!r}")
    it = iter(prefix_leaves)
    return _broadcast_prefix(prefix_tree, it, tree, what)


def _broadcast_prefix(prefix: PyTreeDef, it, full: PyTreeDef, what: str) -> list:
    if prefix.node_type is None:
        return [next(it)] * full.num_leaves
    if (prefix.node_type, prefix.node_data, len(prefix.children)) != (
            full.node_type, full.node_data, len(full.children)):
        raise ValueError(f"vmap: {what} has structure {prefix}, which is not a prefix of "
                         f"the structure {full} it applies to")
    return [a for p, c in zip(prefix.children, full.children)
            for a in _broadcast_prefix(p, it, c, what)]


def _leaf_paths(tree: PyTreeDef, path: str) -> list[str]:
    """Names for the leaves in error messages: `args[1]['w']`, `output[0]`."""
    if tree.node_type is None:
        return [path]
    keys = tree.node_data if tree.node_type is dict else range(len(tree.children))
    return [p for k, c in zip(keys, tree.children) for p in _leaf_paths(c, f"{path}[{k!r}]")]


def _normalized_in_axis(axis: int | None, x, path: str) -> int | None:
    if axis is None:
        return None
    shape = get_aval(x).shape
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"vmap: in_axes maps {path} along axis {axis}, but it has shape "
                         f"{shape} (rank {len(shape)})")
    return axis % len(shape)


def _axis_size(leaves, axes, paths) -> int:
    mapped = [(p, get_aval(x).shape, a) for x, a, p in zip(leaves, axes, paths) if a is not None]
    if not mapped:
        raise ValueError("vmap: in_axes maps no argument (every entry is None), so the "
                         "batch size is unknown")
    sizes = {shape[a] for _, shape, a in mapped}
    if len(sizes) > 1:
        lines = "".join(f"\n  {p} of shape {shape} has size {shape[a]} along axis {a}"
                        for p, shape, a in mapped)
        raise ValueError(f"vmap: the mapped axes have different sizes:{lines}")
    return sizes.pop()


def _place_output(out, dim: int | None, wanted: int | None, size: int, path: str):
    """The output with its batch axis at `wanted` (stacked there if it has none)."""
    if wanted is None:
        if dim is not None:
            raise ValueError(f"vmap: out_axes is None for {path}, but it depends on the "
                             "mapped axis (it differs between lanes)")
        return out
    ndim = get_aval(out).ndim + (dim is None)
    if not -ndim <= wanted < ndim:
        raise ValueError(f"vmap: out_axes puts the batch axis of {path} at {wanted}, but "
                         f"it has rank {ndim} with it")
    return matchaxis(out, dim, wanted % ndim, size)
