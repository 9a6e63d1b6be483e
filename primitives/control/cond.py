"""`cond` and `switch`: run one of several branches, chosen by an integer index.

All branches take the same operands (the consts every branch closes over, then the
user's operands) and return values of the same types. The index is an integer, so it
is inactive by type: only the operands carry derivatives.

When the index is known while linearizing (it usually is: it comes from primal
values), the jvp runs just the chosen branch inline, so the backward pass keeps that
branch's residuals only. When it is not (a cond inside a loop body), partial
evaluation splits every branch and each branch fills the other branches' residual
slots with zeros, as JAX does.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray, result_dtype, tangent_aval
from ...core.errors import ConcretizationError, DTypeError, TypeMismatchError
from ...core.ir import Jaxpr, JaxprEqn, Var
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.staging import stage
from ...core.trace import (
    Primitive,
    Tracer,
    abstract_eval_rules,
    get_aval,
    impl_rules,
    user_source_info,
)
from ...core.typing import ArrayLike
from ...interpreters.ad import instantiate_zeros, jvp_flat, jvp_jaxpr, jvp_rules, zeros
from ...interpreters.batching import batch_rules, batch_size, vmap_flat
from ...interpreters.dce import dce_jaxpr, dce_rules
from ...interpreters.eval import eval_jaxpr
from ...interpreters.fusion_loops import defnative_loop
from ...interpreters.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ...interpreters.transpose import is_linear, transpose_jaxpr, transpose_rules
from ..elementwise import clamp, select_n
from ..shape.structural import batch_axis_first, convert_element_type, matchaxis
from .common import (
    batch_jaxpr,
    check_same_types,
    over_refs,
    shared_refs,
    stage_body,
    with_consts_as_invars,
)

cond_p = Primitive("cond", multiple_results=True)


def switch(index: ArrayLike, branches: Sequence[Callable], *operands: Any) -> Any:
    """`lax.switch`: `branches[index](*operands)`, the index clamped into range.

    Example:
        >>> print(inert.lax.switch(1, [jnp.sin, jnp.cos, jnp.tan], 0.0))
        1.0
    """
    branches = list(branches)
    if not branches:
        raise ValueError("switch: needs at least one branch")
    if get_aval(index).dtype.kind not in "iub":
        raise DTypeError(f"switch: the index must be an integer, got {get_aval(index)}"
                         ).with_source(user_source_info())
    leaves, in_tree = tree_flatten(operands)
    bodies = _stage_branches(branches, in_tree, [get_aval(x) for x in leaves])
    if not isinstance(index, Tracer):  # a concrete index: run that branch's program
        return _run_branch(bodies[int(np.clip(int(np.asarray(index)), 0, len(branches) - 1))],
                           leaves)
    consts = [c for b in bodies for c in b.consts]
    # every branch reads the refs any branch uses, and returns those any branch writes
    written = [any(ws) for ws in zip(*(b.writes() for b in bodies))]
    jaxprs = _sharing_consts([b.returning(written) for b in bodies],
                             [len(b.consts) for b in bodies])
    index = convert_element_type(clamp(0, index, len(branches) - 1), np.int32)
    first = bodies[0]
    outs = cond_p.bind(index, *consts, *first.ref_contents(), *leaves, branches=tuple(jaxprs))
    first.write_back(outs[first.n_out:], [r for r, w in zip(first.refs, written) if w])
    return tree_unflatten(first.out_tree, outs[:first.n_out])


def _run_branch(body, leaves):
    """The staged branch evaluated on the operands (the refs it writes written back)."""
    outs = eval_jaxpr(body.jaxpr, (), [*body.consts, *body.ref_contents(), *leaves])
    written = body.writes()
    body.write_back([c for c, w in zip(outs[body.n_out:], written) if w],
                    [r for r, w in zip(body.refs, written) if w])
    return tree_unflatten(body.out_tree, outs[:body.n_out])


def _stage_branches(branches, in_tree, avals) -> list:
    """The staged branches, their outputs of one type: a weakly typed output (a Python
    scalar) takes the type the other branches give that output; two different strong
    dtypes are a TypeError, as in JAX (never a silent cast of the branch taken). Both
    branches are staged and checked even when the index is concrete."""
    bodies = [stage_body(b, in_tree, avals, "cond") for b in branches]
    for b in bodies[1:]:
        if b.out_tree != bodies[0].out_tree:
            raise TypeMismatchError(f"cond: branches return different structures "
                                    f"{bodies[0].out_tree} and {b.out_tree}"
                                    ).with_source(user_source_info())
    targets = [_joined(i, list(avals_i)) for i, avals_i in
               enumerate(zip(*([v.aval for v in b.jaxpr.outvars[:b.n_out]] for b in bodies)))]
    for i, (branch, body) in enumerate(zip(branches, bodies)):
        if any(v.aval.dtype != t.dtype for v, t in zip(body.jaxpr.outvars, targets)):
            bodies[i] = stage_body(_converted(branch, [t.dtype for t in targets]), in_tree,
                                   avals, "cond")
    refs = shared_refs(bodies)  # every branch reads and writes the contents of all
    bodies = [over_refs(b, refs) for b in bodies]
    for b in bodies[1:]:
        check_same_types("cond branch outputs", [v.aval.strong() for v in
                                                 bodies[0].jaxpr.outvars],
                         [v.aval.strong() for v in b.jaxpr.outvars])
    return bodies


def _joined(i: int, avals: list[ShapedArray]) -> ShapedArray:
    """The type branch outputs agree on, by promotion: weakly typed outputs may be
    converted to it, strongly typed ones never (that would silently cast the branch
    taken, `f64` to `i32`)."""
    joined = ShapedArray(avals[0].shape, result_dtype(*avals), all(a.weak_type for a in avals))
    if any(not a.weak_type and a.dtype != joined.dtype for a in avals):
        raise TypeMismatchError(f"cond branch outputs: value {i} has different dtypes in "
                                f"different branches: {', '.join(a.str_short() for a in avals)}"
                                ).with_source(user_source_info())
    return joined


def _converted(branch, dtypes):
    def converted(*args):
        leaves, tree = tree_flatten(branch(*args))
        return tree_unflatten(tree, [convert_element_type(x, d) for x, d in zip(leaves, dtypes)])

    return converted


def cond(pred: ArrayLike, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """`lax.cond`: `true_fun(*operands)` if `pred` else `false_fun(*operands)`. A
    traced `pred` stages both branches; only the chosen one runs.

    Example:
        >>> f = inert.jit(lambda p, x: inert.lax.cond(p, jnp.sin, jnp.cos, x))
        >>> print(f(True, 0.0), f(False, 0.0))
        0.0 1.0
    """
    if not isinstance(pred, Tracer):
        return switch(int(bool(pred)), [false_fun, true_fun], *operands)
    return switch(convert_element_type(pred, np.int32), [false_fun, true_fun], *operands)


def _sharing_consts(jaxprs: list[Jaxpr], n_consts: list[int]) -> list[Jaxpr]:
    """Branches whose inputs are every branch's consts, then the operands."""
    all_consts = [[Var(v.aval) for v in j.invars[:n]] for j, n in zip(jaxprs, n_consts)]
    out = []
    for i, (j, n) in enumerate(zip(jaxprs, n_consts)):
        invars = [*(v for k, cs in enumerate(all_consts) for v in
                    (j.invars[:n] if k == i else cs)), *j.invars[n:]]
        out.append(Jaxpr((), tuple(invars), j.eqns, j.outvars))
    return out


impl_rules[cond_p] = lambda index, *ops, branches: eval_jaxpr(
    branches[int(index)], (), ops)


def cond_native(fn, eqn, operands, *, branches):
    """An `if`/`elif` chain (jit's numba backend) assigning one set of variables; the
    index is already clamped into range, so the last branch is the `else`."""
    index, ops = operands[0], operands[1:]
    outs = [fn.fresh("b") for _ in eqn.outputs]
    for k, branch in enumerate(branches):
        header = ("else:" if k == len(branches) - 1 else
                  f"{'elif' if k else 'if'} {index} == {k}:")
        with fn.block(header if len(branches) > 1 else "if True:"):
            results = fn.jaxpr(branch, ops)
            if outs:
                fn.line(f"{', '.join(outs)} = {', '.join(results)}")
    return outs


defnative_loop(cond_p, cond_native)


def cond_abstract_eval(index, *ops, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise DTypeError(f"cond: the index must be an integer scalar, got {index.str_short()}")
    check_same_types("cond operands", [v.aval.strong() for v in branches[0].invars],
                     [a.strong() for a in ops])
    return [v.aval for v in branches[0].outvars]


abstract_eval_rules[cond_p] = cond_abstract_eval


def cond_jvp(primals, tangents, *, branches):
    index, ops, op_tangents = primals[0], primals[1:], tangents[1:]
    chosen = _known_index(index)
    if chosen is not None:  # linearizing with a known index: only that branch
        return jvp_flat(lambda *xs: eval_jaxpr(branches[chosen], (), xs), ops, op_tangents)
    nonzero = [type(t) is not Zero for t in op_tangents]
    out_nz = [False] * len(branches[0].outvars)
    for b in branches:
        out_nz = [a or c for a, c in zip(out_nz, jvp_jaxpr(b, nonzero, out_nz)[2])]
    jvps = [jvp_jaxpr(b, nonzero, out_nz) for b in branches]
    jaxprs = _sharing_consts(
        [with_consts_as_invars(j) for j, _, _ in jvps],
        [len(c) for _, c, _ in jvps])
    outs = cond_p.bind(index, *(c for _, cs, _ in jvps for c in cs), *ops,
                       *(t for t in op_tangents if type(t) is not Zero), branches=tuple(jaxprs))
    n_out = len(branches[0].outvars)
    out_tangents = iter(outs[n_out:])
    return outs[:n_out], [next(out_tangents) if nz else Zero(tangent_aval(v.aval))
                          for v, nz in zip(branches[0].outvars, out_nz)]


jvp_rules[cond_p] = cond_jvp


def _known_index(index) -> int | None:
    if not isinstance(index, Tracer):
        return int(index)
    try:
        return int(index.concrete_value("cond"))
    except ConcretizationError:
        return None


def cond_partial_eval(eqn: JaxprEqn, unknown_inputs: list[bool]):
    branches = eqn.params["branches"]
    ops_uk = unknown_inputs[1:]
    out_uk = [False] * len(branches[0].outvars)
    for b in branches:
        split = partial_eval_jaxpr(b, ops_uk, out_uk)
        out_uk = [a or c for a, c in zip(out_uk, split.out_unknowns)]
    splits = [partial_eval_jaxpr(b, ops_uk, out_uk) for b in branches]
    res_avals = [v.aval for s in splits for v in s.residuals]
    res_vars = [Var(a) for a in res_avals]
    known_ops = [a for a, uk in zip(eqn.inputs[1:], ops_uk) if not uk]
    known_outs = [v for v, uk in zip(eqn.outputs, out_uk) if not uk]
    known = JaxprEqn(cond_p, (eqn.inputs[0], *known_ops), (*known_outs, *res_vars),
                     {"branches": tuple(_known_branches(splits, res_avals))}, eqn.source_info)
    unknown_ops = [a for a, uk in zip(eqn.inputs[1:], ops_uk) if uk]
    unknown = JaxprEqn(cond_p, (eqn.inputs[0], *res_vars, *unknown_ops),
                       tuple(v for v, uk in zip(eqn.outputs, out_uk) if uk),
                       {"branches": tuple(_unknown_branches(splits, res_avals))},
                       eqn.source_info)
    return [known], [unknown]


def _known_branches(splits, res_avals: list[ShapedArray]) -> list[Jaxpr]:
    """Known branch i returns its known outputs, its residuals, zeros for the others'."""
    out = []
    offsets = np.cumsum([0] + [len(s.residuals) for s in splits])
    for i, s in enumerate(splits):
        def branch(*args, s=s, i=i):
            outs = eval_jaxpr(s.known, (), args)
            n_known = len(outs) - len(s.residuals)
            res = [zeros(a) for a in res_avals]
            res[offsets[i]:offsets[i + 1]] = outs[n_known:]
            return [*outs[:n_known], *res]

        jaxpr, consts = stage(branch, [v.aval for v in s.known.invars])
        assert not consts
        out.append(jaxpr)
    return out


def _unknown_branches(splits, res_avals) -> list[Jaxpr]:
    """Unknown branch i reads its own residuals out of everyone's."""
    offsets = np.cumsum([0] + [len(s.residuals) for s in splits])
    out = []
    for i, s in enumerate(splits):
        res = [Var(a) for a in res_avals]
        res[offsets[i]:offsets[i + 1]] = s.unknown.invars[:len(s.residuals)]
        out.append(Jaxpr((), (*res, *s.unknown.invars[len(s.residuals):]), s.unknown.eqns,
                         s.unknown.outvars))
    return out


partial_eval_rules[cond_p] = cond_partial_eval


def cond_transpose(cts, index, *ops, branches):
    linear = [is_linear(x) for x in ops]
    cts = [instantiate_zeros(ct) for ct in cts]
    transposed = [transpose_jaxpr(b, linear) for b in branches]
    jaxprs = _sharing_consts(
        [with_consts_as_invars(j) for j, _ in transposed],
        [len(c) for _, c in transposed])
    outs = iter(cond_p.bind(index, *(c for _, cs in transposed for c in cs),
                            *(x for x, lin in zip(ops, linear) if not lin), *cts,
                            branches=tuple(jaxprs)))
    return [None, *(next(outs) if lin else None for lin in linear)]


transpose_rules[cond_p] = cond_transpose


def cond_batch(vals, dims, *, branches):
    """An index the same for every lane: one cond of the batched branches, which put
    an output batched by any branch at axis 0 in all. An index per lane: every branch
    runs on every lane and each lane selects its branch's outputs (as JAX does)."""
    (index, *ops), (index_dim, *op_dims) = vals, dims
    size = batch_size(vals, dims)
    if index_dim is not None:
        return _select_branch_per_lane(index, branches, ops, op_dims, size)
    natural = [batch_jaxpr(b, size, op_dims, [None] * len(b.outvars)) for b in branches]
    want = [0 if any(d is not None for d in out_dims) else None
            for out_dims in zip(*(dims for _, _, dims in natural))]
    jaxprs = [batched if batched[2] == want else batch_jaxpr(b, size, op_dims, want)
              for b, batched in zip(branches, natural)]
    shared = _sharing_consts(
        [with_consts_as_invars(j) for j, _, _ in jaxprs],
        [len(c) for _, c, _ in jaxprs])
    outs = cond_p.bind(index, *(c for _, cs, _ in jaxprs for c in cs), *ops,
                       branches=tuple(shared))
    return outs, want


def _select_branch_per_lane(index, branches, ops, op_dims, size):
    per_branch = []
    for b in branches:
        outs, out_dims = vmap_flat(lambda *xs, b=b: eval_jaxpr(b, (), xs), ops, op_dims)
        per_branch.append([matchaxis(o, d, 0, size) for o, d in zip(outs, out_dims)])
    outs = [select_n(batch_axis_first(index, 0, get_aval(cases[0]).ndim - 1), *cases)
            for cases in zip(*per_branch)]
    return outs, [0] * len(outs)


batch_rules[cond_p] = cond_batch


def cond_dce(used_outputs: list[bool], eqn: JaxprEqn):
    branches = eqn.params["branches"]
    used_in = [False] * len(branches[0].invars)
    for b in branches:
        used_in = [a or c for a, c in zip(used_in, dce_jaxpr(b, used_outputs)[1])]
    pruned = []
    for b in branches:
        j, _ = dce_jaxpr(b, used_outputs)
        pruned.append(Jaxpr((), tuple(v for v, u in zip(j.invars, used_in) if u), j.eqns,
                            j.outvars))
    new = JaxprEqn(cond_p, (eqn.inputs[0], *(a for a, u in zip(eqn.inputs[1:], used_in) if u)),
                   tuple(v for v, u in zip(eqn.outputs, used_outputs) if u),
                   {"branches": tuple(pruned)}, eqn.source_info)
    return [True, *used_in], new


dce_rules[cond_p] = cond_dce

