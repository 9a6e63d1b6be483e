"""`while_loop` and `fori_loop`.

A while loop's trip count is data-dependent, so its iterations cannot be stacked for
a backward pass: it supports forward mode (the tangents ride along in the carry),
linearization (the tangent program reruns the primal loop), and refuses transposing
(reverse mode) with an error pointing to `scan`/`fori_loop`, as JAX does. `fori_loop` with
a trip count known while tracing is a `scan` over the loop index, so it is
reverse-differentiable; the index is an integer (inactive) scanned input that the
backward pass recomputes rather than saves.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from ...core.activity import Zero
from ...core.avals import tangent_aval
from ...core.errors import DTypeError, NonDifferentiableError
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
from ...interpreters.ad import instantiate_zeros, jvp_jaxpr, jvp_rules
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.dce import dce_jaxpr
from ...interpreters.eval import eval_jaxpr
from ...interpreters.fusion_loops import defnative_loop
from ...interpreters.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ...interpreters.transpose import transpose_rules
from ..elementwise import select_n
from ..reductions import reduce_or
from ..shape.structural import batch_axis_first, iota, matchaxis
from .common import (
    batch_jaxpr,
    carry_fixpoint,
    carry_out_avals,
    check_same_types,
    over_refs,
    reorder,
    shared_refs,
    split_list,
    stage_body,
    stage_with_promoted_carry,
    with_consts_as_invars,
)
from .scan import scan

while_p = Primitive("while", multiple_results=True)


def while_loop(cond_fun: Callable[[Any], ArrayLike], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """`lax.while_loop`: `while cond_fun(val): val = body_fun(val)`. Forward mode
    differentiates it; reverse mode needs a trip count known while tracing
    (`fori_loop`, `scan`), as in JAX.

    Example:
        >>> print(inert.lax.while_loop(lambda c: c < 10, lambda c: c * 2, 1))
        16
    """
    leaves, tree = tree_flatten(init_val)
    _, in_tree = tree_flatten((init_val,))

    def stage_for(avals):
        body = stage_body(body_fun, in_tree, avals, "while_loop")
        return (body, avals), [v.aval for v in body.jaxpr.outvars[:body.n_out]]

    leaves, (body, avals) = stage_with_promoted_carry(leaves, stage_for)
    cond = stage_body(cond_fun, in_tree, avals, "while_loop")
    out_avals = [v.aval for v in cond.jaxpr.outvars[:cond.n_out]]
    if len(out_avals) != 1 or out_avals[0].shape != () or out_avals[0].dtype != np.bool_:
        raise DTypeError("while_loop: cond_fun must return a boolean scalar, got "
                         f"{[a.str_short() for a in out_avals]}").with_source(user_source_info())
    check_same_types("while_loop carry", avals,
                     [v.aval.strong() for v in body.jaxpr.outvars[:body.n_out]], tree)
    refs = shared_refs([cond, body])  # read by cond_fun, read or written by body_fun
    cond, body = over_refs(cond, refs), over_refs(body, refs)
    body_jaxpr, read, written = body.loop_form()  # the written refs are carried first
    cond_jaxpr = _reading_only(cond, [*read, *written])
    outs = while_p.bind(*cond.consts, *cond.ref_contents(read), *body.consts,
                        *body.ref_contents(read), *body.ref_contents(written), *leaves,
                        cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                        cond_nconsts=len(cond.consts) + len(read),
                        body_nconsts=len(body.consts) + len(read))
    body.write_back(outs[:len(written)], written)
    return tree_unflatten(tree, outs[len(written):])


def _reading_only(cond, order: list) -> Jaxpr:
    """cond_fun's jaxpr reading the refs' contents in `order` (the body's: those it only
    reads, then those it writes) and not returning them: it must not change them."""
    jaxpr, n = cond.jaxpr, len(cond.consts)
    contents = jaxpr.invars[n:n + len(cond.refs)]
    if any(out is not v for out, v in zip(jaxpr.outvars[cond.n_out:], contents)):
        raise TypeError(f"while_loop: cond_fun writes to a ref; only body_fun may (at "
                        f"{user_source_info()})")
    position = [next(i for i, r in enumerate(cond.refs) if r is ref) for ref in order]
    invars = (*jaxpr.invars[:n], *(contents[i] for i in position),
              *jaxpr.invars[n + len(cond.refs):])
    return Jaxpr((), invars, jaxpr.eqns, jaxpr.outvars[:cond.n_out])


def while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = split_list(args, [cond_nconsts, body_nconsts])
    while eval_jaxpr(cond_jaxpr, (), [*cond_consts, *carry])[0]:
        carry = eval_jaxpr(body_jaxpr, (), [*body_consts, *carry])
    return carry


impl_rules[while_p] = while_impl


def while_native(fn, eqn, operands, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """The loop as a native `while` (jit's numba backend), the carries its variables."""
    cond_c, body_c, carry = split_list(operands, [cond_nconsts, body_nconsts])
    carry = fn.assign(carry, "c")
    with fn.block("while True:"):
        (running,) = fn.jaxpr(cond_jaxpr, [*cond_c, *carry])
        with fn.block(f"if not {running}:"):
            fn.line("break")
        outs = fn.jaxpr(body_jaxpr, [*body_c, *carry])
        if carry:
            fn.line(f"{', '.join(carry)} = {', '.join(outs)}")
    return carry


defnative_loop(while_p, while_native)


def while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    _, _, carry = split_list(avals, [cond_nconsts, body_nconsts])
    return carry_out_avals(carry, body_jaxpr.outvars)


abstract_eval_rules[while_p] = while_abstract_eval


def while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_c, body_c, carry = split_list(primals, [cond_nconsts, body_nconsts])
    _, body_t, carry_t = split_list(tangents, [cond_nconsts, body_nconsts])
    body_c_nz = [type(t) is not Zero for t in body_t]
    carry_nz = [type(t) is not Zero for t in carry_t]
    def jvp_of_body(carry_nz):
        body, consts, out_nz = jvp_jaxpr(body_jaxpr, [*body_c_nz, *carry_nz], carry_nz)
        return out_nz, (body, consts)

    carry_nz, (body, consts) = carry_fixpoint(carry_nz, jvp_of_body)
    n_k, n_c, n_carry = len(body.constvars), len(body_c), len(carry)
    k, p_c, p_carry, t_c, t_carry = split_list(range(n_k + len(body.invars)),
                                               [n_k, n_c, n_carry, sum(body_c_nz)])
    body = reorder(with_consts_as_invars(body),
                   [*k, *p_c, *t_c, *p_carry, *t_carry], range(len(body.outvars)))
    n_t = sum(carry_nz)
    tangent_avals = [tangent_aval(get_aval(c)) for c, nz in zip(carry, carry_nz) if nz]
    cond = Jaxpr((), (*cond_jaxpr.invars, *(Var(a) for a in tangent_avals)),
                 cond_jaxpr.eqns, cond_jaxpr.outvars)
    outs = while_p.bind(*cond_c, *consts, *body_c, *(t for t in body_t if type(t) is not Zero),
                        *carry, *(instantiate_zeros(t) for t, nz in zip(carry_t, carry_nz)
                                  if nz),
                        cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=cond_nconsts,
                        body_nconsts=n_k + n_c + sum(body_c_nz))
    out_t = iter(outs[n_carry:n_carry + n_t])
    return outs[:n_carry], [next(out_t) if nz else Zero(tangent_aval(get_aval(c)))
                            for c, nz in zip(carry, carry_nz)]


jvp_rules[while_p] = while_jvp


def while_partial_eval(eqn: JaxprEqn, unknown_inputs: list[bool]):
    """Linearizing a while loop (JAX's approach): the known part is the loop over the
    known carries alone (the primal loop, whose trip count they decide); the unknown
    part is the whole loop again, reading the known inputs, so the tangent program
    recomputes the primal iterations as it goes (a checkpoint of the loop) and keeps
    only the loop's inputs. A predicate that reads an unknown value leaves the whole
    loop unknown. Only transposing the unknown part is refused (`while_transpose`)."""
    p = eqn.params
    cond_jaxpr, body_jaxpr = p["cond_jaxpr"], p["body_jaxpr"]
    cond_uk, body_c_uk, carry_uk = split_list(unknown_inputs,
                                              [p["cond_nconsts"], p["body_nconsts"]])
    carry_uk, _ = carry_fixpoint(carry_uk, lambda uk: (partial_eval_jaxpr(
        body_jaxpr, [*body_c_uk, *uk], [False] * len(uk)).out_unknowns, None))
    cond_reads = dce_jaxpr(cond_jaxpr, [True])[1]
    if all(carry_uk) or any(r and uk for r, uk in zip(cond_reads, [*cond_uk, *carry_uk])):
        return [], [eqn]
    known_body = _restricted(body_jaxpr, [not uk for uk in [*body_c_uk, *carry_uk]],
                             [not uk for uk in carry_uk])
    known_cond = _restricted(cond_jaxpr, [not uk for uk in [*cond_uk, *carry_uk]], [True])
    cond_c, body_c, carry = split_list(eqn.inputs, [p["cond_nconsts"], p["body_nconsts"]])
    known = JaxprEqn(while_p, (*(a for a, uk in zip(cond_c, cond_uk) if not uk),
                               *(a for a, uk in zip(body_c, body_c_uk) if not uk),
                               *(a for a, uk in zip(carry, carry_uk) if not uk)),
                     tuple(v for v, uk in zip(eqn.outputs, carry_uk) if not uk),
                     dict(p, cond_jaxpr=known_cond, body_jaxpr=known_body,
                          cond_nconsts=cond_uk.count(False), body_nconsts=body_c_uk.count(False)),
                     eqn.source_info)
    # the known outputs are the known loop's; the whole loop's copies of them are unread
    unknown = attrs.evolve(eqn, outputs=tuple(v if uk else Var(v.aval)
                                              for v, uk in zip(eqn.outputs, carry_uk)))
    return [known], [unknown]


def _restricted(jaxpr: Jaxpr, keep_in: list[bool], keep_out: list[bool]) -> Jaxpr:
    """`jaxpr` with only the kept inputs and outputs, pruned to the equations those
    outputs need (which read kept inputs only)."""
    pruned, used = dce_jaxpr(jaxpr, keep_out)
    assert not any(u and not k for u, k in zip(used, keep_in)), "reads a dropped input"
    return Jaxpr((), tuple(v for v, k in zip(jaxpr.invars, keep_in) if k), pruned.eqns,
                 pruned.outvars)


partial_eval_rules[while_p] = while_partial_eval


def while_transpose(cts, *operands, **params):
    raise NonDifferentiableError(
        "while_loop: reverse-mode differentiation (grad, vjp, jacrev) is not supported, "
        "because the number of iterations is only known at run time (forward mode, jvp "
        "and linearize, works). Use inert.lax.scan, or inert.lax.fori_loop with a trip "
        "count known while tracing.").with_source(user_source_info())


transpose_rules[while_p] = while_transpose


def while_batch(vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """Batched carries keep their lanes on axis 0. A predicate the same for every lane
    (it reads no batched value): one loop of the batched body. A predicate per lane:
    every carry is batched, the loop runs while any lane's predicate holds, and the
    body updates only the lanes whose predicate does (as JAX does)."""
    size = batch_size(vals, dims)
    cond_c, body_c, carry = split_list(vals, [cond_nconsts, body_nconsts])
    cond_c_dims, body_c_dims, carry_dims = split_list(dims, [cond_nconsts, body_nconsts])
    batched = [d is not None for d in carry_dims]
    def batch_loop(batched):
        step_dims = [0 if b else None for b in batched]
        cond, cond_consts, (pred_dim,) = batch_jaxpr(cond_jaxpr, size,
                                                     [*cond_c_dims, *step_dims], [None])
        body, body_consts, out_dims = batch_jaxpr(body_jaxpr, size,
                                                  [*body_c_dims, *step_dims], step_dims)
        grows = [pred_dim is not None or d is not None for d in out_dims]
        return grows, (cond, cond_consts, pred_dim, body, body_consts, out_dims)

    batched, (cond, cond_consts, pred_dim, body, body_consts, out_dims) = carry_fixpoint(
        batched, batch_loop)
    step_dims = [0 if b else None for b in batched]
    carry = [matchaxis(c, d, 0, size) if b else c for c, d, b in zip(carry, carry_dims, batched)]
    if pred_dim is not None:
        cond, cond_consts, body, body_consts = _update_running_lanes(
            cond, cond_consts, body, body_consts, [get_aval(c) for c in cond_c],
            [get_aval(c) for c in body_c], [get_aval(c) for c in carry])
        body_c = [*cond_c, *body_c]
    outs = while_p.bind(*cond_consts, *cond_c, *body_consts, *body_c, *carry,
                        cond_jaxpr=with_consts_as_invars(cond),
                        body_jaxpr=with_consts_as_invars(body),
                        cond_nconsts=len(cond_consts) + len(cond_c),
                        body_nconsts=len(body_consts) + len(body_c))
    return outs, step_dims


def _update_running_lanes(cond, cond_consts, body, body_consts, cond_c_avals, body_c_avals,
                          carry_avals):
    """From the batched cond (one predicate per lane, on axis 0) and body: a cond that
    holds while any lane runs, and a body (reading the cond's consts too) that leaves
    the stopped lanes' carries as they are."""
    n_cond_c, n_body_c = len(cond_c_avals), len(body_c_avals)

    def any_running(*args):
        (running,) = eval_jaxpr(cond, cond_consts, args)
        return [reduce_or(running, (0,))]

    def step(*args):
        cc, bc, carry = split_list(args, [n_cond_c, n_body_c])
        (running,) = eval_jaxpr(cond, cond_consts, [*cc, *carry])
        new = eval_jaxpr(body, body_consts, [*bc, *carry])
        return [select_n(batch_axis_first(running, 0, get_aval(c).ndim - 1), c, n)
                for c, n in zip(carry, new)]

    new_cond, new_cond_consts = stage(any_running, [*cond_c_avals, *carry_avals])
    new_body, new_body_consts = stage(step, [*cond_c_avals, *body_c_avals, *carry_avals])
    return new_cond, new_cond_consts, new_body, new_body_consts


batch_rules[while_p] = while_batch


def fori_loop(lower: ArrayLike, upper: ArrayLike, body_fun: Callable[[Any, Any], Any],
              init_val: Any) -> Any:
    """`lax.fori_loop`: `val = body_fun(i, val)` for i in [lower, upper). With a trip
    count known while tracing it is a `scan` (reverse-differentiable).

    Example:
        >>> print(inert.lax.fori_loop(0, 5, lambda i, total: total + i, 0))
        10
        >>> print(inert.grad(lambda x: inert.lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0))
        12.0
    """
    if isinstance(lower, Tracer) or isinstance(upper, Tracer):
        def cond_fun(state):
            return state[0] < upper

        def body(state):
            i, val = state
            return i + 1, body_fun(i, val)

        return while_loop(cond_fun, body, (lower, init_val))[1]
    lower, upper = int(lower), int(upper)
    indices = iota(np.int64, (max(upper - lower, 0),), 0)
    indices = indices + lower if lower else indices

    def step(val, i):
        return body_fun(i, val), None

    return scan(step, init_val, indices)[0]
