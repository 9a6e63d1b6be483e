"""`revolve_scan`: the tangent map of a `scan` whose backward pass recomputes its steps
by binomial checkpointing (`interpreters.revolve`) instead of keeping stacked residuals.

Inside a `checkpoint` with a `memory_budget`, a scan whose per-step residuals, stacked
over its length, do not fit the budget is split (`revolving_scans`) into its known loop
(the known outputs, nothing stacked) and a `revolve_scan` equation reading all its
inputs and giving its unknown outputs. Its transpose plays revolve's schedule: it keeps
at most `snapshots` known carries (the first the initial one) and one step's residuals,
advances the known carry from the nearest snapshot, and takes each step's derivative in
reverse order, linearizing that one step. Its impl (a forward evaluation, as
`linearize` runs it) is the whole loop.

It exists only between partial evaluation and transposition, inside a linear program:
it has no jvp or batching rule (differentiating or mapping a budgeted backward pass
again is not supported), as `custom_lin`.
"""

from __future__ import annotations

import attrs
import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray
from ...core.ir import JaxprEqn, Var
from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...interpreters.ad import add_tangents
from ...interpreters.dce import dce_jaxpr
from ...interpreters.eval import compiled
from ...interpreters.partial_eval import partial_eval_jaxpr, unknown_vars
from ...interpreters.remat import schedule
from ...interpreters.transpose import backward_pass, is_linear, transpose_rules
from .common import carry_fixpoint, split_list
from .scan import scan_impl, scan_p

revolve_scan_p = Primitive("revolve_scan", multiple_results=True)


def _step_split(params):
    """One step split into its known part and its linear part (carry masks as found)."""
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    carry_uk = list(params["unknown"][num_consts:num_consts + num_carry])
    return partial_eval_jaxpr(params["jaxpr"], list(params["unknown"]),
                              carry_uk + [False] * (len(params["jaxpr"].outvars) - num_carry))


def revolve_scan_impl(*args, **params):
    outs = scan_impl(*args, **{k: params[k] for k in
                               ("jaxpr", "num_consts", "num_carry", "length", "reverse")})
    return [o for o, u in zip(outs, params["out_unknown"]) if u]


impl_rules[revolve_scan_p] = revolve_scan_impl


def revolve_scan_abstract_eval(*avals, **params):
    jaxpr, num_carry, length = params["jaxpr"], params["num_carry"], params["length"]
    out = [v.aval for v in jaxpr.outvars[:num_carry]] + \
        [ShapedArray((length, *v.aval.shape), v.aval.dtype) for v in jaxpr.outvars[num_carry:]]
    return [a for a, u in zip(out, params["out_unknown"]) if u]


abstract_eval_rules[revolve_scan_p] = revolve_scan_abstract_eval


def revolve_scan_transpose(cts, *args, **params):
    """Revolve's schedule over the known carries; each step reversed by linearizing it."""
    p = params
    num_consts, num_carry, length = p["num_consts"], p["num_carry"], p["length"]
    unknown = list(p["unknown"])
    split = _step_split(p)
    n_res = len(split.residuals)
    known_body = split.known
    n_known_out = len(known_body.outvars) - n_res
    const_uk, carry_uk, xs_uk = split_list(unknown, [num_consts, num_carry])
    consts, carry, xs = split_list(list(args), [num_consts, num_carry])
    known_consts = [c for c, u in zip(consts, const_uk) if not u]
    known_xs = [x for x, u in zip(xs, xs_uk) if not u]
    n_known_carry = carry_uk.count(False)
    advance_body, _ = dce_jaxpr(known_body, [True] * n_known_carry +
                                [False] * (len(known_body.outvars) - n_known_carry))
    advance, step_known = compiled(advance_body), compiled(known_body)
    row = (lambda k: length - 1 - k) if p["reverse"] else (lambda k: k)

    def known_inputs(k, carry_k):
        return [*known_consts, *carry_k, *(x[row(k)] for x in known_xs)]

    n_uk_consts, n_uk_carry = sum(const_uk), sum(carry_uk)
    ct_carry, ct_ys = split_list(list(cts), [n_uk_carry])
    ct_consts = [Zero(v.aval) for v, u in zip(p["jaxpr"].invars[:num_consts], const_uk) if u]
    uk_xs_avals = [v.aval for v, u in zip(p["jaxpr"].invars[num_consts + num_carry:], xs_uk)
                   if u]
    ct_xs = [np.zeros((length, *a.shape), a.dtype) for a in uk_xs_avals]
    snapshots = {}
    current = None
    for action in schedule(length, p["snapshots"]):
        kind, *at = action
        if kind == "store":
            snapshots[at[0]] = [c for c, u in zip(carry, carry_uk) if not u] if at[0] == 0 \
                else current
        elif kind == "drop":
            del snapshots[at[0]]
        elif kind == "advance":
            current = snapshots[at[0]]
            for k in range(at[0], at[1]):
                current = advance((), known_inputs(k, current))
        else:
            k = at[0]
            carry_k = snapshots[k] if k in snapshots else current
            residuals = step_known((), known_inputs(k, carry_k))[n_known_out:]
            step_cts = [*ct_carry, *(ct if type(ct) is Zero else ct[row(k)] for ct in ct_ys)]
            grads = backward_pass(split.unknown, (), residuals,
                                  [False] * n_res + [True] * (len(unknown) - unknown.count(False)),
                                  step_cts)
            g_consts, g_carry, g_xs = split_list(grads, [n_uk_consts, n_uk_carry])
            ct_consts = [add_tangents(a, b) for a, b in zip(ct_consts, g_consts)]
            ct_carry = list(g_carry)
            for stack, g in zip(ct_xs, g_xs):
                if type(g) is not Zero:
                    stack[row(k)] = g
    return _per_operand(args, unknown, [*ct_consts, *ct_carry, *ct_xs])


def _per_operand(args, unknown, cts) -> list:
    """A cotangent per linear operand; an unknown operand the transposer evaluated (a
    carry's `zeros` tangent) gets none."""
    it = iter(cts)
    return [(ct if is_linear(a) else None) for a, ct in
            zip(args, [next(it) if u else None for u in unknown])]


transpose_rules[revolve_scan_p] = revolve_scan_transpose


# ---------------------------------------------------------------------------------
# Where a budget asks for it: scans whose stacked residuals do not fit


def revolving_scans(jaxpr, unknown_inputs: list[bool], budget: int):
    """`jaxpr` with each scan whose per-step residuals, stacked, exceed `budget` split
    into its known loop and a `revolve_scan` with as many snapshots as the budget holds
    besides one step's residuals and the loop's other known inputs (at least one)."""
    unknown = unknown_vars(jaxpr, unknown_inputs)
    free = {v for e in jaxpr.eqns if not any(type(a) is Var for a in e.inputs)
            for v in e.outputs}  # recomputed from nothing (a fori_loop's counter iota)
    eqns = []
    for eqn in jaxpr.eqns:
        mask = [type(a) is Var and a in unknown for a in eqn.inputs]
        if eqn.primitive is scan_p and any(mask) and not all(mask):
            eqns += _revolving(eqn, mask, budget, free)
        else:
            eqns.append(eqn)
    return attrs.evolve(jaxpr, eqns=tuple(eqns))


def _revolving(eqn: JaxprEqn, mask: list[bool], budget: int, free: set) -> list[JaxprEqn]:
    p = eqn.params
    body, num_consts, num_carry, length = p["jaxpr"], p["num_consts"], p["num_carry"], \
        p["length"]
    const_uk, carry_uk, xs_uk = split_list(mask, [num_consts, num_carry])
    n_ys = len(body.outvars) - num_carry

    def split_body(carry_uk):
        split = partial_eval_jaxpr(body, [*const_uk, *carry_uk, *xs_uk],
                                   [*carry_uk, *[False] * n_ys])
        return split.out_unknowns[:num_carry], split

    carry_uk, split = carry_fixpoint(carry_uk, split_body)
    consts = set(body.invars[:num_consts])  # kept once, counted with the inputs
    step_bytes = sum(v.aval.nbytes for v in split.residuals if v not in consts)
    if step_bytes * length <= budget or length < 2:
        return [eqn]
    carry_bytes = sum(v.aval.nbytes for v, u in zip(body.invars[num_consts:], carry_uk) if not u)
    inputs_bytes = sum(a.aval.nbytes for a, u in zip(eqn.inputs, mask)
                       if not u and type(a) is Var and a not in free)
    room = budget - step_bytes - inputs_bytes + carry_bytes  # the initial carry is one
    snapshots = int(min(max(1, room // max(carry_bytes, 1)), length))
    unknown = (*const_uk, *carry_uk, *xs_uk)
    out_uk = tuple(split.out_unknowns)
    n_known_out = len(split.known.outvars) - len(split.residuals)
    known_body, _ = dce_jaxpr(attrs.evolve(split.known, outvars=split.known.outvars[:n_known_out]),
                              [True] * n_known_out)
    known = JaxprEqn(scan_p, tuple(a for a, u in zip(eqn.inputs, unknown) if not u),
                     tuple(v for v, u in zip(eqn.outputs, out_uk) if not u),
                     dict(p, jaxpr=known_body, num_consts=const_uk.count(False),
                          num_carry=carry_uk.count(False)), eqn.source_info)
    revolving = JaxprEqn(revolve_scan_p, eqn.inputs,
                         tuple(v for v, u in zip(eqn.outputs, out_uk) if u),
                         dict(p, unknown=unknown, out_unknown=out_uk, snapshots=snapshots),
                         eqn.source_info)
    return [known, revolving]
