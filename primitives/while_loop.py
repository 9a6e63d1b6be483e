"""`while_loop` and `fori_loop`.

A while loop's trip count is data-dependent, so its iterations cannot be stacked for
a backward pass: it supports forward mode (the tangents ride along in the carry) and
refuses reverse mode with an error pointing to `scan`/`fori_loop`. `fori_loop` with
a trip count known while tracing is a `scan` over the loop index, so it is
reverse-differentiable; the index is an integer (inactive) scanned input that the
backward pass recomputes rather than saves.
"""

from __future__ import annotations

import numpy as np

from ..core.activity import Zero
from ..core.avals import tangent_aval
from ..core.errors import DTypeError, NonDifferentiableError
from ..core.ir import Jaxpr, JaxprEqn, Var
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import (
    Primitive,
    Tracer,
    abstract_eval_rules,
    get_aval,
    impl_rules,
    user_source_info,
)
from ..interpreters.ad import instantiate_zeros, jvp_jaxpr, jvp_rules
from ..interpreters.eval import eval_jaxpr
from ..interpreters.partial_eval import partial_eval_rules
from .control_flow import check_same_types, reorder, split_list, stage_body
from .scan import scan
from .structural import iota

while_p = Primitive("while", multiple_results=True)


def while_loop(cond_fun, body_fun, init_val):
    """`lax.while_loop`: `while cond_fun(val): val = body_fun(val)`."""
    leaves, tree = tree_flatten(init_val)
    avals = [get_aval(x).strong() for x in leaves]
    _, in_tree = tree_flatten((init_val,))
    cond = stage_body(cond_fun, in_tree, avals)
    body = stage_body(body_fun, in_tree, avals)
    out_avals = [v.aval for v in cond.jaxpr.outvars]
    if len(out_avals) != 1 or out_avals[0].shape != () or out_avals[0].dtype != np.bool_:
        raise DTypeError("while_loop: cond_fun must return a boolean scalar, got "
                         f"{[a.str_short() for a in out_avals]}").with_source(user_source_info())
    check_same_types("while_loop carry", avals, [v.aval.strong() for v in body.jaxpr.outvars],
                     tree)
    outs = while_p.bind(*cond.consts, *body.consts, *leaves, cond_jaxpr=cond.jaxpr,
                        body_jaxpr=body.jaxpr, cond_nconsts=len(cond.consts),
                        body_nconsts=len(body.consts))
    return tree_unflatten(tree, outs)


def while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = split_list(args, [cond_nconsts, body_nconsts])
    while eval_jaxpr(cond_jaxpr, (), [*cond_consts, *carry])[0]:
        carry = eval_jaxpr(body_jaxpr, (), [*body_consts, *carry])
    return carry


impl_rules[while_p] = while_impl


def while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    _, _, carry = split_list(avals, [cond_nconsts, body_nconsts])
    return [a.strong() for a in carry]


abstract_eval_rules[while_p] = while_abstract_eval


def while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_c, body_c, carry = split_list(primals, [cond_nconsts, body_nconsts])
    _, body_t, carry_t = split_list(tangents, [cond_nconsts, body_nconsts])
    body_c_nz = [type(t) is not Zero for t in body_t]
    carry_nz = [type(t) is not Zero for t in carry_t]
    while True:  # a carry is active if any iteration can make it so
        _, _, out_nz = jvp_jaxpr(body_jaxpr, [*body_c_nz, *carry_nz], carry_nz)
        grown = [a or b for a, b in zip(carry_nz, out_nz)]
        if grown == carry_nz:
            break
        carry_nz = grown
    body, consts, _ = jvp_jaxpr(body_jaxpr, [*body_c_nz, *carry_nz], carry_nz)
    n_k, n_c, n_carry = len(body.constvars), len(body_c), len(carry)
    k, p_c, p_carry, t_c, t_carry = split_list(range(n_k + len(body.invars)),
                                               [n_k, n_c, n_carry, sum(body_c_nz)])
    body = reorder(Jaxpr((), (*body.constvars, *body.invars), body.eqns, body.outvars),
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
    raise NonDifferentiableError(
        "while_loop: reverse-mode differentiation (grad, vjp, linearize) is not supported, "
        "because the number of iterations is only known at run time. Use inert.lax.scan, or "
        "inert.lax.fori_loop with a trip count known while tracing."
    ).with_source(eqn.source_info)


partial_eval_rules[while_p] = while_partial_eval


def fori_loop(lower, upper, body_fun, init_val):
    """`lax.fori_loop`: `val = body_fun(i, val)` for i in [lower, upper). With a trip
    count known while tracing it is a `scan` (reverse-differentiable)."""
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
