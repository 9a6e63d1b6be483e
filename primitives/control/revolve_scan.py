"""`revolve_scan`: the tangent map of a `scan` whose backward pass recomputes its steps
by binomial checkpointing (`interpreters.remat`) instead of keeping stacked residuals;
`revolve_backward`, that backward pass.

Inside a `checkpoint` with a `memory_budget`, a scan whose per-step residuals, stacked
over its length, do not fit the budget is split (`revolving_scans`) into its known loop
(the known outputs, nothing stacked) and a `revolve_scan` equation reading all its
inputs and giving its unknown outputs. Its impl (a forward evaluation, as `linearize`
runs it) is the whole loop, and forward mode and vmap treat it as the scan it is.

Its transpose is one `revolve_backward` equation, not the schedule unrolled: under
`jit` the traced backward pass then holds one equation whatever the loop's length, and
the schedule plays when it runs. It keeps at most `snapshots` known carries (the first
the initial one) and one step's residuals, advances the known carry from the nearest
snapshot, and takes each step's derivative in reverse order, linearizing that one step.
vmap batches the step as a program (one schedule for every lane). Differentiated again
(grad of grad) it is the plain scan's backward pass, residuals stacked, whose own rules
then apply: revolve bounds the memory of the outermost reverse pass only.
"""

from __future__ import annotations

import functools

import attrs
import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray
from ...core.ir import Jaxpr, JaxprEqn, Var
from ...core.staging import stage
from ...core.trace import Primitive, abstract_eval_rules, impl_rules
from ...interpreters.ad import instantiate_zeros, jvp_flat, jvp_rules
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.dce import dce_jaxpr
from ...interpreters.eval import compiled, eval_jaxpr
from ...interpreters.partial_eval import partial_eval_jaxpr, unknown_vars
from ...interpreters.remat import schedule
from ...interpreters.transpose import backward_pass, is_linear, transpose_rules
from ..shape.structural import matchaxis, moveaxis
from .common import batch_jaxpr, carry_fixpoint, split_list, with_consts_as_invars
from .scan import scan_batch, scan_impl, scan_jvp, scan_p

_SCAN_PARAMS = ("jaxpr", "num_consts", "num_carry", "length", "reverse")


def _scan_params(params) -> dict:
    return {k: params[k] for k in _SCAN_PARAMS}


def _unknown_outputs(params, outs) -> list:
    return [o for o, u in zip(outs, params["out_unknown"]) if u]


def _stacked(aval, length: int) -> ShapedArray:
    return ShapedArray((length, *aval.shape), aval.dtype)


def _scan_out_avals(params) -> list:
    jaxpr, num_carry = params["jaxpr"], params["num_carry"]
    return [v.aval for v in jaxpr.outvars[:num_carry]] + \
        [_stacked(v.aval, params["length"]) for v in jaxpr.outvars[num_carry:]]


def _scan_in_avals(params) -> list:
    fixed = params["num_consts"] + params["num_carry"]
    return [v.aval if i < fixed else _stacked(v.aval, params["length"])
            for i, v in enumerate(params["jaxpr"].invars)]


revolve_scan_p = Primitive("revolve_scan", multiple_results=True)


def revolve_scan_impl(*args, **params):
    return _unknown_outputs(params, scan_impl(*args, **_scan_params(params)))


impl_rules[revolve_scan_p] = revolve_scan_impl


def revolve_scan_abstract_eval(*avals, **params):
    return _unknown_outputs(params, _scan_out_avals(params))


abstract_eval_rules[revolve_scan_p] = revolve_scan_abstract_eval


def revolve_scan_jvp(primals, tangents, **params):
    """Forward mode keeps nothing to reverse: the tangent of the scan it stands for."""
    outs, tangents_out = scan_jvp(primals, tangents, **_scan_params(params))
    return _unknown_outputs(params, outs), _unknown_outputs(params, tangents_out)


jvp_rules[revolve_scan_p] = revolve_scan_jvp


def revolve_scan_transpose(cts, *args, **params):
    known = [a for a, u in zip(args, params["unknown"]) if not u]
    return _per_operand(args, params["unknown"], revolve_backward(known, cts, **params))


def _per_operand(args, unknown, cts) -> list:
    """A cotangent per linear operand; an unknown operand the transposer evaluated (a
    carry's `zeros` tangent) gets none."""
    it = iter(cts)
    return [(ct if is_linear(a) else None) for a, ct in
            zip(args, [next(it) if u else None for u in unknown])]


transpose_rules[revolve_scan_p] = revolve_scan_transpose


def revolve_scan_batch(vals, dims, **params):
    outs, out_dims = scan_batch(vals, dims, **_scan_params(params))
    return _unknown_outputs(params, outs), _unknown_outputs(params, out_dims)


batch_rules[revolve_scan_p] = revolve_scan_batch


# ---------------------------------------------------------------------------------
# The backward pass: revolve's schedule over the known carries

revolve_backward_p = Primitive("revolve_backward", multiple_results=True)


def revolve_backward(known_args, cts, **params) -> list:
    """The cotangents of a `revolve_scan`'s unknown inputs (consts, carries, stacked
    xs, each an array), given its known inputs and its outputs' cotangents (`Zero`s
    are left out of the operands, `ct_nonzero` says where they were)."""
    nonzero = tuple(type(ct) is not Zero for ct in cts)
    return revolve_backward_p.bind(*known_args, *(ct for ct in cts if type(ct) is not Zero),
                                   ct_nonzero=nonzero, **params)


def _step_split(params):
    """One step split into its known part and its linear part (carry masks as found)."""
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    carry_uk = list(params["unknown"][num_consts:num_consts + num_carry])
    return partial_eval_jaxpr(params["jaxpr"], list(params["unknown"]),
                              carry_uk + [False] * (len(params["jaxpr"].outvars) - num_carry))


def _all_cts(params, nonzero_cts) -> list:
    """The outputs' cotangents, `Zero` where `ct_nonzero` left one out."""
    it = iter(nonzero_cts)
    avals = _unknown_outputs(params, _scan_out_avals(params))
    return [next(it) if nz else Zero(a) for a, nz in zip(avals, params["ct_nonzero"])]


def revolve_backward_impl(*operands, **p):
    """Revolve's schedule over the known carries; each step reversed by one compiled
    program (`_reversal`), its known part and its transpose."""
    num_consts, num_carry, length = p["num_consts"], p["num_carry"], p["length"]
    unknown = list(p["unknown"])
    split = _step_split(p)
    const_uk, carry_uk, xs_uk = split_list(unknown, [num_consts, num_carry])
    known, cts = split_list(list(operands), [unknown.count(False)])
    known_consts, initial, known_xs = split_list(known, [const_uk.count(False),
                                                         carry_uk.count(False)])
    advance_body, _ = dce_jaxpr(split.known, [True] * len(initial) +
                                [False] * (len(split.known.outvars) - len(initial)))
    advance, reverse = compiled(advance_body), _reversal(split, p)
    row = (lambda k: length - 1 - k) if p["reverse"] else (lambda k: k)

    def known_inputs(k, carry_k):
        return [*known_consts, *carry_k, *(x[row(k)] for x in known_xs)]

    n_consts, n_carry = sum(const_uk), sum(carry_uk)
    ct_carry, ct_ys = split_list(_all_cts(p, cts), [n_carry])
    ct_carry = [instantiate_zeros(ct) for ct in ct_carry]  # (a carry out's aval is its in's)
    ct_ys = [ct for ct in ct_ys if type(ct) is not Zero]
    uk_avals = [a for a, u in zip(_scan_in_avals(p), unknown) if u]
    ct_consts = [np.zeros(a.shape, a.dtype) for a in uk_avals[:n_consts]]
    ct_xs = [np.zeros(a.shape, a.dtype) for a in uk_avals[n_consts + n_carry:]]
    snapshots, current = {}, None
    for kind, *at in schedule(length, p["snapshots"]):
        if kind == "store":
            snapshots[at[0]] = initial if at[0] == 0 else current
        elif kind == "drop":
            del snapshots[at[0]]
        elif kind == "advance":
            current = snapshots[at[0]]
            for k in range(at[0], at[1]):
                current = advance((), known_inputs(k, current))
        else:
            k = at[0]
            grads = reverse([*known_inputs(k, snapshots.get(k, current)), *ct_carry,
                             *(ct[row(k)] for ct in ct_ys)])
            g_consts, ct_carry, g_xs = split_list(grads, [n_consts, n_carry])
            ct_consts = [a + b for a, b in zip(ct_consts, g_consts)]
            for stack, g in zip(ct_xs, g_xs):
                stack[row(k)] = g
    return [*ct_consts, *ct_carry, *ct_xs]


def _reversal(split, params):
    """One step reversed as one compiled program, staged once per backward pass: its
    known part for its residuals, then its linear part transposed. It reads the step's
    known inputs, its carries' cotangents and its nonzero outputs' cotangents, and gives
    every unknown input's cotangent (zeros where none)."""
    n_known_out = len(split.known.outvars) - len(split.residuals)
    n_known_in, num_carry = len(split.known.invars), params["num_carry"]
    out_avals = _unknown_outputs(params, [v.aval for v in params["jaxpr"].outvars])
    n_carry_cts = sum(params["out_unknown"][:num_carry])
    nonzero = [True] * n_carry_cts + list(params["ct_nonzero"][n_carry_cts:])
    linear = [False] * len(split.residuals) + [True] * sum(params["unknown"])

    def reverse(*args):
        known_in, cts = split_list(list(args), [n_known_in])
        residuals = eval_jaxpr(split.known, (), known_in)[n_known_out:]
        cts = iter(cts)
        step_cts = [next(cts) if nz else Zero(a) for a, nz in zip(out_avals, nonzero)]
        return [instantiate_zeros(g)
                for g in backward_pass(split.unknown, (), residuals, linear, step_cts)]

    in_avals = [*(v.aval for v in split.known.invars),
                *(a for a, nz in zip(out_avals, nonzero) if nz)]
    jaxpr, consts = stage(reverse, in_avals)
    step = compiled(jaxpr)
    return lambda args: step(consts, args)


impl_rules[revolve_backward_p] = revolve_backward_impl


def revolve_backward_abstract_eval(*avals, **params):
    return [a for a, u in zip(_scan_in_avals(params), params["unknown"]) if u]


abstract_eval_rules[revolve_backward_p] = revolve_backward_abstract_eval


def revolve_backward_jvp(primals, tangents, **params):
    """Differentiated again, the backward pass is the plain scan's (its residuals
    stacked), which scan's rules differentiate, transpose and batch once more."""
    outs, tangents_out = jvp_flat(functools.partial(_stacked_backward, params), list(primals),
                                  list(tangents))
    return outs, [Zero(t.aval) if type(t) is Zero else t for t in tangents_out]


def _stacked_backward(params, *operands) -> list:
    """What `revolve_backward` computes, as the plain scan's transpose computes it."""
    unknown = list(params["unknown"])
    known, cts = split_list(list(operands), [unknown.count(False)])
    loop = _loop_jaxpr(params)
    split = partial_eval_jaxpr(loop, unknown, [True] * len(loop.outvars))
    residuals = eval_jaxpr(split.known, (), known)
    grads = backward_pass(split.unknown, (), residuals,
                          [False] * len(split.residuals) + [True] * sum(unknown),
                          _all_cts(params, cts))
    return [instantiate_zeros(g) for g in grads]


def _loop_jaxpr(params) -> Jaxpr:
    """The scan a `revolve_scan` stands for: a program of all its inputs giving its
    unknown outputs."""
    invars = tuple(Var(a) for a in _scan_in_avals(params))
    outvars = tuple(Var(a) for a in _scan_out_avals(params))
    eqn = JaxprEqn(scan_p, invars, outvars, _scan_params(params))
    return Jaxpr((), invars, (eqn,), tuple(_unknown_outputs(params, outvars)))


jvp_rules[revolve_backward_p] = revolve_backward_jvp
# No transpose: linear in its cotangents, but a program transposed twice differentiates
# it first (the jvp above), which leaves only scan's rules to transpose.


def revolve_backward_batch(vals, dims, **params):
    """One schedule for every lane: the step batched as a program, as `scan_batch` does.
    The unknown inputs (whose cotangents differ per lane) and the outputs whose
    cotangents are given are batched along 0, a known carry where the fixed point
    batches it; stacked xs and their cotangents keep the scanned axis first."""
    p = params
    size = batch_size(vals, dims)
    num_consts, num_carry = p["num_consts"], p["num_carry"]
    unknown = list(p["unknown"])
    n_known = unknown.count(False)
    known_dims = iter(dims[:n_known])
    const_d, carry_d, xs_d = split_list([0 if u else next(known_dims) for u in unknown],
                                        [num_consts, num_carry])
    xs_step = [None if d is None else max(d, 1) - 1 for d in xs_d]
    ys_dims = [0 if u else None for u in p["out_unknown"][num_carry:]]

    def batch_body(carry_batched):
        step = [0 if b else None for b in carry_batched]
        body, consts, out_dims = batch_jaxpr(p["jaxpr"], size, [*const_d, *step, *xs_step],
                                             [*step, *ys_dims])
        return [d is not None for d in out_dims[:num_carry]], (body, consts)

    carry_batched, (body, body_consts) = carry_fixpoint([d is not None for d in carry_d],
                                                         batch_body)
    known = [_batched_operand(x, d, i - num_consts, carry_batched, size) for x, d, i in
             zip(vals[:n_known], dims[:n_known], (i for i, u in enumerate(unknown) if not u))]
    n_carry_cts = sum(p["ct_nonzero"][:sum(p["out_unknown"][:num_carry])])
    cts = [matchaxis(ct, d, 0 if k < n_carry_cts else 1, size)
           for k, (ct, d) in enumerate(zip(vals[n_known:], dims[n_known:]))]
    outs = revolve_backward_p.bind(
        *body_consts, *known, *cts, **{**p, "jaxpr": with_consts_as_invars(body),
                                       "num_consts": len(body_consts) + num_consts,
                                       "unknown": (False,) * len(body_consts) + tuple(unknown)})
    n_xs = sum(unknown[num_consts + num_carry:])
    return outs, [0] * (len(outs) - n_xs) + [1] * n_xs


def _batched_operand(x, d, carry_index: int, carry_batched: list[bool], size: int):
    """A known operand as the batched step reads it: a carry along 0 where batched, an
    xs with its lanes off the scanned axis (`carry_index` past the carries)."""
    if 0 <= carry_index < len(carry_batched):
        return matchaxis(x, d, 0, size) if carry_batched[carry_index] else x
    if carry_index >= len(carry_batched) and d == 0:
        return moveaxis(x, 0, 1)
    return x


batch_rules[revolve_backward_p] = revolve_backward_batch


# ---------------------------------------------------------------------------------
# Where a budget asks for it: scans whose stacked residuals do not fit


def revolving_scans(jaxpr, unknown_inputs: list[bool], budget: int):
    """`jaxpr` with each scan whose per-step residuals, stacked, exceed what `budget`
    leaves besides the loop's known inputs (which recomputing it reads) split
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
    carry_bytes = sum(v.aval.nbytes for v, u in zip(body.invars[num_consts:], carry_uk) if not u)
    inputs_bytes = sum(a.aval.nbytes for a, u in zip(eqn.inputs, mask)
                       if not u and type(a) is Var and a not in free)
    if step_bytes * length <= budget - inputs_bytes or length < 2:
        return [eqn]
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
