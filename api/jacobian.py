"""Jacobians and Hessians: `jacfwd`, `jacrev`, `hessian`.

They sit with the primitives, not with the interpreters, because assembling a
Jacobian stacks arrays, which needs the structural primitives (and must stay
traceable: `hessian` stacks the tracers of an outer jvp). Both are one vmapped
transformation: `jacfwd` one jvp vmapped over the basis tangents of the inputs;
`jacrev` one linearization, whose transpose is vmapped over the basis cotangents of
the outputs, so the forward pass and its residuals are shared by every row.
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

import attrs
import numpy as np

from ..core.activity import Zero
from ..core.avals import float0, tangent_aval
from ..core.pytree import tree_unflatten
from ..core.trace import get_aval
from ..core.traceback_util import api_boundary
from ..interpreters.ad import instantiate_zeros, jvp_flat
from ..interpreters.batching import vmap_flat
from ..interpreters.linearize import linearize_flat
from ..primitives.shape.slicing import slice_in_dim
from ..primitives.shape.structural import matchaxis, reshape, transpose
from .arguments import (
    FlatArgs,
    check_argnums,
    check_differentiated_inputs,
    check_differentiated_outputs,
    flatten_args,
    recording_untraced,
    with_keywords,
)
from .numpy._array import returned, returned_leaves
from .replaying import transformed
from .transforms import RefArgs


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian by forward mode: one jvp vmapped over a basis of the differentiated
    inputs (real ones, unless `holomorphic`). Cheaper than
    `jacrev` when there are fewer inputs than outputs.

    Args:
        f: the function to differentiate.
        argnums: the position, or positions, of the arguments to differentiate.
        has_aux: whether `f` returns `(output, aux)`.
        holomorphic: differentiate a complex function of complex inputs, as JAX's.

    Returns:
        A function of `f`'s arguments returning the Jacobian: for each output leaf,
        an array of shape `output.shape + input.shape` (a tuple of them over a
        sequence of `argnums`); with `has_aux`, `(jacobian, aux)`.

    Example:
        >>> f = lambda x: jnp.array([x[0] * x[1], jnp.sin(x[0])])
        >>> print(inert.jacfwd(f)(np.array([0.0, 2.0])))
        [[2. 0.]
         [1. 0.]]
    """
    return _jacobian(f, argnums, has_aux, _jacobian_columns_fwd, "jacfwd", holomorphic)


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable:
    """The Jacobian by reverse mode: one linearization, its transpose vmapped over a
    basis of the outputs (real ones, unless `holomorphic`), so every row shares the
    forward pass and its residuals. Cheaper than `jacfwd` when there are fewer outputs
    than inputs. `inert.jacobian` is this function, as `jax.jacobian` is `jacrev`.

    Args:
        f: the function to differentiate.
        argnums: the position, or positions, of the arguments to differentiate.
        has_aux: whether `f` returns `(output, aux)`.
        holomorphic: differentiate a complex function of complex inputs, as JAX's.

    Returns:
        As `jacfwd`: for each output leaf an array of shape `output.shape +
        input.shape`; with `has_aux`, `(jacobian, aux)`.

    Example:
        >>> f = lambda x: jnp.array([x[0] * x[1], jnp.sin(x[0])])
        >>> print(inert.jacrev(f)(np.array([0.0, 2.0])))
        [[2. 0.]
         [1. 0.]]
    """
    return _jacobian(f, argnums, has_aux, _jacobian_rows_rev, "jacrev", holomorphic)


jacobian = jacrev  # jax.jacobian is jacrev


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable:
    """The Hessian of a scalar function, forward-over-reverse: `jacfwd(jacrev(f))`.

    Args:
        f: the function to differentiate.
        argnums: the position, or positions, of the arguments to differentiate.
        has_aux: whether `f` returns `(output, aux)`.
        holomorphic: differentiate a complex function of complex inputs, as JAX's.

    Returns:
        A function of `f`'s arguments returning the Hessian, of shape `x.shape +
        x.shape` for an argument `x`; with `has_aux`, `(hessian, aux)`.

    Example:
        >>> print(inert.hessian(lambda x: jnp.sum(x ** 3))(np.array([1.0, 2.0])))
        [[ 6.  0.]
         [ 0. 12.]]
    """
    return jacfwd(jacrev(f, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


def _jacobian(f, argnums, has_aux, blocks_of, name: str, holomorphic: bool):
    argnums_t = argnums if isinstance(argnums, (tuple, list)) else (argnums,)

    @api_boundary
    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        nums = check_argnums(tuple(argnums_t), len(args))
        call, args = with_keywords(f, args, kwargs)
        flat = flatten_args(args, nums, floats_only=True, keep_static=True)
        check_differentiated_inputs(name, flat, holomorphic)
        outs, n_outs, (out_tree, aux_tree, n_out) = transformed(
            name, (), call, flat, has_aux, _blocks(flat, blocks_of))
        outs, per_out = returned_leaves(outs[:n_outs], flat.leaves), iter(outs[n_outs:])
        check_differentiated_outputs(name, [get_aval(o).dtype for o in outs[:n_out]], holomorphic)
        n_active = sum(flat.active)
        blocks = [[next(per_out) for _ in range(n_active)] for _ in range(n_out)]
        jac = _assemble(args, nums, flat, outs[:n_out], blocks, out_tree,
                        isinstance(argnums, (tuple, list)))
        aux = tree_unflatten(aux_tree, outs[n_out:]) if has_aux else None
        return returned((jac, aux) if has_aux else jac, flat.leaves)

    return jac_f


def _blocks(flat: FlatArgs, blocks_of):
    """jacfwd's and jacrev's `apply` (`api.replaying`): the outputs, then the Jacobian's
    blocks (of each differentiated output, one per active leaf), and how many outputs
    there are. Arrays the function returns as they are stay the user's
    (`recording_untraced`)."""
    refs = RefArgs.of(flat)

    def apply(fun, leaves, extras, out_store):
        untraced: list = []
        fun = refs.wrap(recording_untraced(fun, untraced))
        outs, blocks = blocks_of(fun, attrs.evolve(flat, leaves=refs.contents(leaves)),
                                 lambda: out_store[2])
        outs = returned_leaves(refs.write_back(outs), untraced)
        return [*outs, *(b for row in blocks for b in row)], len(outs)

    return apply


def _jacobian_columns_fwd(fun, flat: FlatArgs, n_out):
    """blocks[i][j]: d out_i / d active input j, shaped out_i.shape + in_j.shape. The
    columns are the jvps of the basis tangents of all active inputs: one jvp, vmapped."""
    active = [j for j, a in enumerate(flat.active) if a]
    inputs = [flat.leaves[j] for j in active]
    zero_tangents = [Zero(tangent_aval(get_aval(x))) for x in flat.leaves]

    def pushforward(*basis):
        tangents = list(zero_tangents)
        for j, t in zip(active, basis):
            tangents[j] = t
        outs, out_t = jvp_flat(fun, flat.leaves, tangents, "jacfwd")
        return [*outs, *(instantiate_zeros(t) for t in out_t[:n_out()])]

    basis = _Basis([tangent_aval(get_aval(x)) for x in inputs])
    if not basis.size:  # no input element to differentiate by
        outs = fun(*flat.leaves)
        return outs, [[_zeros_block(out, x, last=True) for x in inputs]
                      for out in outs[:n_out()]]
    results, dims = vmap_flat(pushforward, basis.lanes(), [0] * len(inputs))
    n_outs = len(results) - n_out()  # the primal outputs (unbatched), then the columns
    return results[:n_outs], [
        [_block(out, x, basis.rows(c, d, k), last=True) for k, x in enumerate(inputs)]
        for out, c, d in zip(results, results[n_outs:], dims[n_outs:])]


def _jacobian_rows_rev(fun, flat: FlatArgs, n_out):
    """blocks[i][j], from the transposes of the basis cotangents of all (float) outputs:
    one linearization, its transpose vmapped. Integer outputs have no derivative."""
    outs, linear = linearize_flat(fun, flat.leaves, flat.active, n_out, name="jacrev")
    inputs = [x for x, a in zip(flat.leaves, flat.active) if a]
    diff = [i for i, a in enumerate(linear.out_avals) if a.dtype != float0]

    def pullback(*basis):
        cts = [Zero(a) for a in linear.out_avals]
        for i, ct in zip(diff, basis):
            cts[i] = ct
        return [instantiate_zeros(c) for c in linear.transpose(cts)]

    blocks = [[_zeros_block(out, x, last=False) for x in inputs] for out in outs[:n_out()]]
    basis = _Basis([linear.out_avals[i] for i in diff])
    if basis.size:
        rows, dims = vmap_flat(pullback, basis.lanes(), [0] * len(diff))
        for k, i in enumerate(diff):
            blocks[i] = [_block(outs[i], x, basis.rows(r, d, k), last=False)
                         for x, r, d in zip(inputs, rows, dims)]
    return outs, blocks


class _Basis:
    """The standard basis of a product of tangent spaces, as vmap lanes: lane k is 1 at
    element k of the spaces laid end to end."""

    def __init__(self, avals):
        self.avals = avals
        self.ends = np.cumsum([0, *(a.size for a in avals)])
        self.size = int(self.ends[-1])

    def lanes(self) -> list:
        """One array per space, its lanes along axis 0."""
        eye = np.eye(self.size)
        return [eye[:, lo:hi].astype(a.dtype).reshape(-1, *a.shape)
                for a, lo, hi in zip(self.avals, self.ends, self.ends[1:])]

    def rows(self, out, dim, k: int):
        """The lanes of space k in a vmapped result `out` (batched along `dim`)."""
        lanes_first = matchaxis(out, dim, 0, self.size)
        return slice_in_dim(lanes_first, int(self.ends[k]), int(self.ends[k + 1]))


def _block(out, x, rows, last: bool):
    """One Jacobian block, shaped out.shape + x.shape, from the jvps of x's basis
    (each out-shaped, stacked: `last`) or the cotangents of out's basis (each x-shaped)."""
    out_shape, x_shape = get_aval(out).shape, get_aval(x).shape
    if tangent_aval(get_aval(out)).dtype == float0:
        return _zeros_block(out, x, last)
    if not last:
        return reshape(rows, (*out_shape, *x_shape))
    rows = reshape(rows, (*x_shape, *out_shape))
    n = len(x_shape)
    return transpose(rows, (*range(n, n + len(out_shape)), *range(n)))


def _zeros_block(out, x, last: bool):
    """The block of an empty input or output, or of an integer output (float0)."""
    out_aval, x_aval = get_aval(out), get_aval(x)
    dtype = tangent_aval(out_aval if last else x_aval).dtype
    if tangent_aval(out_aval).dtype == float0:
        dtype = float0
    return np.zeros((*out_aval.shape, *x_aval.shape), dtype)


def _assemble(args, nums, flat: FlatArgs, outs, blocks, out_tree, tuple_argnums: bool):
    """Per output leaf, the Jacobian blocks arranged like the differentiated args."""
    per_out = []
    for i in range(len(outs)):
        it = iter(blocks[i])
        leaf_blocks = [next(it) if a else None for a in flat.active]
        arg_cts = flat.cotangents(leaf_blocks)
        selected = tuple(arg_cts[n] for n in nums)
        per_out.append(selected if tuple_argnums else selected[0])
    return tree_unflatten(out_tree, per_out)

