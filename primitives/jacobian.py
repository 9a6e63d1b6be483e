"""Jacobians and Hessians: `jacfwd`, `jacrev`, `hessian`.

They sit with the primitives, not with the interpreters, because assembling a
Jacobian stacks arrays, which needs the structural primitives (and must stay
traceable: `hessian` stacks the tracers of an outer jvp). `jacfwd` pushes one basis
tangent per input element; `jacrev` linearizes once and transposes once per output
element, so the forward pass and its residuals are shared by every row.
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from ..core.activity import Zero
from ..core.avals import float0, tangent_aval
from ..core.pytree import tree_unflatten
from ..core.trace import get_aval
from ..interpreters.ad import instantiate_zeros, jvp_flat
from ..interpreters.api import FlatArgs, check_argnums, check_grad_inputs, flat_fun, flatten_args
from ..interpreters.linearize import linearize_flat
from .structural import concatenate, reshape, transpose


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The Jacobian by forward mode: one jvp per element of the differentiated inputs."""
    return _jacobian(f, argnums, has_aux, _jacobian_columns_fwd)


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """The Jacobian by reverse mode: one linearization, one transpose per output element."""
    return _jacobian(f, argnums, has_aux, _jacobian_rows_rev)


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False):
    """Forward-over-reverse: the Jacobian of the gradient."""
    return jacfwd(jacrev(f, argnums, has_aux), argnums, has_aux)


def _jacobian(f, argnums, has_aux, blocks_of):
    argnums_t = argnums if isinstance(argnums, (tuple, list)) else (argnums,)

    @functools.wraps(f)
    def jac_f(*args):
        nums = check_argnums(tuple(argnums_t), len(args))
        check_grad_inputs(args, nums)
        flat = flatten_args(args, nums)
        out_store: list = []
        fun = flat_fun(f, flat, out_store, has_aux)
        outs, blocks = blocks_of(fun, flat, lambda: out_store[2])
        out_tree, aux_tree, n_out = out_store
        jac = _assemble(args, nums, flat, outs[:n_out], blocks, out_tree,
                        isinstance(argnums, (tuple, list)))
        return (jac, tree_unflatten(aux_tree, outs[n_out:])) if has_aux else jac

    return jac_f


def _jacobian_columns_fwd(fun, flat: FlatArgs, n_out):
    """blocks[i][j]: d out_i / d active input j, shaped out_i.shape + in_j.shape."""
    active = [j for j, a in enumerate(flat.active) if a]
    columns = {j: [] for j in active}
    outs = None
    for j in active:
        for basis in _one_hot(tangent_aval(get_aval(flat.leaves[j]))):
            tangents = [Zero(tangent_aval(get_aval(x))) for x in flat.leaves]
            tangents[j] = basis
            outs, out_t = jvp_flat(fun, flat.leaves, tangents)
            columns[j].append([instantiate_zeros(t) for t in out_t[:n_out()]])
    if outs is None:
        outs = fun(*flat.leaves)
    return outs, [[_block(outs[i], flat.leaves[j], [c[i] for c in columns[j]], last=True)
                   for j in active] for i in range(n_out())]


def _jacobian_rows_rev(fun, flat: FlatArgs, n_out):
    outs, linear = linearize_flat(fun, flat.leaves, flat.active, n_out)
    active = [j for j, a in enumerate(flat.active) if a]
    blocks = []
    for i, out in enumerate(outs[:n_out()]):
        rows = []
        for basis in _one_hot(tangent_aval(get_aval(out))):
            cts = [Zero(a) for a in linear.out_avals]
            cts[i] = basis
            rows.append([instantiate_zeros(c) for c in linear.transpose(cts)])
        blocks.append([_block(out, flat.leaves[j], [r[n] for r in rows], last=False)
                       for n, j in enumerate(active)])
    return outs, blocks


def _one_hot(aval):
    """The standard basis of a tangent space, one array per element (none for the
    float0 tangents of integer values: they have no derivative)."""
    if aval.dtype == float0:
        return
    for k in range(aval.size):
        basis = np.zeros(aval.size, aval.dtype)
        basis[k] = 1
        yield basis.reshape(aval.shape)


def _block(out, x, pieces: list, last: bool):
    """One Jacobian block, shaped out.shape + x.shape, from the jvps of x's basis
    (each out-shaped: `last`) or the cotangents of out's basis (each x-shaped)."""
    out_aval, x_aval = get_aval(out), get_aval(x)
    shape = (*out_aval.shape, *x_aval.shape)
    if not pieces:  # an empty input or output, or an integer output
        dtype = tangent_aval(out_aval if last else x_aval).dtype
        return np.zeros(shape, float0 if tangent_aval(out_aval).dtype == float0 else dtype)
    piece_shape = out_aval.shape if last else x_aval.shape
    stacked = concatenate([reshape(p, (1, *piece_shape)) for p in pieces], 0)
    if last:
        stacked = transpose(stacked, (*range(1, len(piece_shape) + 1), 0))
    return reshape(stacked, shape)


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

