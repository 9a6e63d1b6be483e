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
from ..core.avals import tangent_aval
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
        aval = get_aval(flat.leaves[j])
        for k in range(aval.size):
            basis = np.zeros(aval.size, aval.dtype)
            basis[k] = 1
            tangents = [Zero(tangent_aval(get_aval(x))) for x in flat.leaves]
            tangents[j] = basis.reshape(aval.shape)
            outs, out_t = jvp_flat(fun, flat.leaves, tangents)
            columns[j].append([instantiate_zeros(t) for t in out_t[:n_out()]])
    if outs is None:
        outs = fun(*flat.leaves)
    return outs, [[_stack_last(outs[i], [c[i] for c in columns[j]], flat.leaves[j])
                   for j in active] for i in range(n_out())]


def _jacobian_rows_rev(fun, flat: FlatArgs, n_out):
    outs, linear = linearize_flat(fun, flat.leaves, flat.active, n_out)
    active = [j for j, a in enumerate(flat.active) if a]
    blocks = []
    for i, out in enumerate(outs[:n_out()]):
        aval = tangent_aval(get_aval(out))
        rows = []
        for k in range(aval.size):
            basis = np.zeros(aval.size, aval.dtype)
            basis[k] = 1
            cts = [Zero(a) for a in linear.out_avals]
            cts[i] = basis.reshape(aval.shape)
            rows.append([instantiate_zeros(c) for c in linear.transpose(cts)])
        blocks.append([_stack_first(out, [r[n] for r in rows], flat.leaves[j])
                       for n, j in enumerate(active)])
    return outs, blocks


def _stack_last(out, columns: list, x):
    """Columns (each out-shaped) for the elements of `x`: out.shape + x.shape."""
    out_shape, x_shape = get_aval(out).shape, get_aval(x).shape
    if not columns:
        return np.zeros(out_shape + x_shape)
    stacked = concatenate([reshape(c, (1, *out_shape)) for c in columns], 0)
    perm = (*range(1, len(out_shape) + 1), 0)
    return reshape(transpose(stacked, perm), out_shape + x_shape)


def _stack_first(out, rows: list, x):
    """Rows (each x-shaped) for the elements of `out`: out.shape + x.shape."""
    out_shape, x_shape = get_aval(out).shape, get_aval(x).shape
    if not rows:
        return np.zeros(out_shape + x_shape)
    stacked = concatenate([reshape(r, (1, *x_shape)) for r in rows], 0)
    return reshape(stacked, out_shape + x_shape)


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

