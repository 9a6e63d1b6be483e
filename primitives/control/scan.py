"""`scan`: a loop with a carry, stacked inputs and stacked outputs.

Operands are `consts` (loop-invariant values the body closes over), the initial
`carry`, and `xs` (scanned along their leading axis); outputs are the final carry
and the stacked `ys`. Reverse mode is where activity pays most here: partial
evaluation splits the body into a known loop (run forwards) and an unknown one (the
tangent loop, transposed into the backward loop), and decides per residual how to
keep it:

* a known *const* (a weight read at every step) is passed to the backward loop
  once, by reference — never stacked;
* a value the body computes from consts only (loop-invariant) is computed once,
  outside the loop;
* a carry read by the backward pass, whose next value is itself saved (an RNN's
  hidden state, which is also the `tanh` output of the step), is not stacked again:
  it is rebuilt from the initial carry and the saved outputs, shifted by one step;
* anything else that changes per step is stacked, one slice per iteration.

Integer counters are inactive by type, so they never reach the backward loop.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs
import numpy as np

from ...core.activity import Zero
from ...core.avals import ShapedArray, tangent_aval
from ...core.errors import ShapeError, TypeMismatchError
from ...core.ir import Jaxpr, JaxprEqn, Var, does_io
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.staging import stage
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules, user_source_info
from ...interpreters.ad import add_tangents, instantiate_zeros, jvp_jaxpr, jvp_rules, zeros
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.dce import dce_jaxpr, dce_rules
from ...interpreters.eval import compiled
from ...interpreters.fusion_loops import defnative_loop, in_place_sums
from ...interpreters.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ...interpreters.transpose import backward_pass, is_linear, transpose_rules
from ...interpreters.vector_math import allocation
from ..shape.slicing import concatenate, slice_in_dim
from ..shape.structural import expand_dims, matchaxis, moveaxis, reshape
from .common import (
    batch_jaxpr,
    carry_fixpoint,
    carry_out_avals,
    check_same_types,
    inline_jaxpr,
    reorder,
    split_list,
    stage_body,
    stage_with_promoted_carry,
    staged_eqns,
    with_consts_as_invars,
)

scan_p = Primitive("scan", multiple_results=True)


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False) -> tuple[Any, Any]:
    """`lax.scan`: `carry, y = f(carry, x)` over the leading axis of `xs`; returns the
    final carry and the stacked ys. Pytrees in and out.

    Example:
        A running sum, and each step's product with the carry:

        >>> carry, ys = inert.lax.scan(lambda c, x: (c + x, c * x), 0.0, np.arange(4.0))
        >>> print(carry, ys)
        6.0 [0. 0. 2. 9.]
    """
    init_leaves, init_tree = tree_flatten(init)
    xs_leaves, xs_tree = tree_flatten(xs)
    length = _scan_length(xs_leaves, length)
    x_avals = [ShapedArray(get_aval(x).shape[1:], get_aval(x).dtype) for x in xs_leaves]
    _, in_tree = tree_flatten((init, xs))
    n_carry = len(init_leaves)

    def stage_for(carry_avals):
        body = stage_body(f, in_tree, [*carry_avals, *x_avals], "scan")
        return (body, carry_avals), [v.aval for v in body.jaxpr.outvars[:n_carry]]

    init_leaves, (body, carry_avals) = stage_with_promoted_carry(init_leaves, stage_for)
    carry_out_tree = body.out_tree.children[0] if body.out_tree.children else None
    check_same_types("scan carry", carry_avals,
                     [v.aval.strong() for v in body.jaxpr.outvars[:n_carry]], init_tree)
    if carry_out_tree != init_tree:
        raise TypeMismatchError(f"scan: the body returns a carry of structure "
                                f"{carry_out_tree}, but the initial carry has {init_tree}"
                                ).with_source(user_source_info())
    jaxpr, read, written = body.loop_form()  # the refs it writes are carried first
    outs = scan_p.bind(*body.consts, *body.ref_contents(read), *body.ref_contents(written),
                       *init_leaves, *xs_leaves, jaxpr=jaxpr,
                       num_consts=len(body.consts) + len(read),
                       num_carry=len(written) + n_carry, length=length, reverse=bool(reverse))
    body.write_back(outs[:len(written)], written)
    outs = outs[len(written):]
    return (tree_unflatten(init_tree, outs[:n_carry]),
            tree_unflatten(body.out_tree.children[1], outs[n_carry:]))


def _scan_length(xs_leaves, length) -> int:
    lengths = {get_aval(x).shape[0] if get_aval(x).shape else None for x in xs_leaves}
    if None in lengths:
        raise ShapeError("scan: every leaf of xs needs a leading axis to scan over")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ShapeError(f"scan: xs leading axes and length disagree: {sorted(lengths)}"
                         if lengths else "scan: give xs or length")
    return lengths.pop()


def scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse):
    """Each step's ys are written into their stacked outputs at once, allocated up
    front, so a step's outputs die with the step (no list of them, no stacking copy)."""
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    step = compiled(jaxpr)  # the body runs `length` times: compile it once
    stacked = [np.empty((length, *v.aval.shape), v.aval.dtype)
               for v in jaxpr.outvars[num_carry:]]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = step((), [*consts, *carry, *(x[i] for x in xs)])
        carry = outs[:num_carry]
        for ys, y in zip(stacked, outs[num_carry:]):
            ys[i] = y
    return [*carry, *stacked]


impl_rules[scan_p] = scan_impl


def scan_native(fn, eqn, operands, *, jaxpr, num_consts, num_carry, length, reverse):
    """The loop as a native `for` (jit's numba backend): the carries are variables of
    the compiled function, each stacked output is allocated once and written by row."""
    consts, carry, xs = split_list(operands, [num_consts, num_carry])
    stacks = fn.assign([allocation((length, *v.aval.shape), v.aval.dtype)
                        for v in jaxpr.outvars[num_carry:]], "s")
    sums = in_place_sums(jaxpr, num_consts, num_carry)
    summed = {s.position for s in sums}  # their buffers are the loop's own: copies, or
    # zeros made for the loop alone
    carry = fn.assign([f"{c}.copy()" if k in summed and not fn.owns(c) else c
                       for k, c in enumerate(carry)], "c")
    i = fn.fresh("i")
    steps = f"range({length - 1}, -1, -1)" if reverse else f"range({length})"
    with fn.block(f"for {i} in {steps}:"):
        x = fn.assign([f"{x}[{i}]" for x in xs], "x")
        rows = {num_carry + k: f"{ys}[{i}]" for k, ys in enumerate(stacks)}
        outs = fn.loop_body(jaxpr, [*consts, *carry, *x], carry, num_consts, sums, rows)
        if carry:
            fn.line(f"{', '.join(carry)} = {', '.join(outs[:num_carry])}")
    return [*carry, *stacks]


defnative_loop(scan_p, scan_native)


def scan_abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = split_list(avals, [num_consts, num_carry])
    expected = [*consts, *carry, *(ShapedArray(x.shape[1:], x.dtype) for x in xs)]
    if any(x.shape[:1] != (length,) for x in xs):
        raise ShapeError(f"scan: xs {[x.str_short() for x in xs]} do not all have leading "
                         f"axis {length}")
    check_same_types("scan operands", [v.aval.strong() for v in jaxpr.invars],
                     [a.strong() for a in expected])
    return [*carry_out_avals(carry, jaxpr.outvars[:num_carry]),
            *(ShapedArray((length, *v.aval.shape), v.aval.dtype)
              for v in jaxpr.outvars[num_carry:])]


abstract_eval_rules[scan_p] = scan_abstract_eval

# ---------------------------------------------------------------------------------
# jvp: the body's jvp as the body, carry activity found by a fixed point


def scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse):
    n_ys = len(jaxpr.outvars) - num_carry
    nonzero = [type(t) is not Zero for t in tangents]
    const_nz, carry_nz, xs_nz = split_list(nonzero, [num_consts, num_carry])
    def jvp_of_body(carry_nz):
        body, consts, out_nz = jvp_jaxpr(jaxpr, [*const_nz, *carry_nz, *xs_nz],
                                         [*carry_nz, *[False] * n_ys])
        return out_nz[:num_carry], (body, consts, out_nz)

    carry_nz, (body, body_consts, out_nz) = carry_fixpoint(carry_nz, jvp_of_body)
    n = len(jaxpr.invars)
    k, p, t = split_list(range(len(body.constvars) + len(body.invars)),
                         [len(body.constvars), n])
    p_c, p_carry, p_xs = split_list(p, [num_consts, num_carry])
    t_c, t_carry, t_xs = split_list(t, [sum(const_nz), sum(carry_nz)])
    ys_nz = out_nz[num_carry:]
    po_carry, po_ys, to_carry, to_ys = split_list(range(len(body.outvars)),
                                                  [num_carry, n_ys, sum(carry_nz)])
    body = reorder(with_consts_as_invars(body),
                   [*k, *p_c, *t_c, *p_carry, *t_carry, *p_xs, *t_xs],
                   [*po_carry, *to_carry, *po_ys, *to_ys])
    consts, carry, xs = split_list(primals, [num_consts, num_carry])
    tc, tcarry, txs = split_list(tangents, [num_consts, num_carry])
    operands = [*body_consts, *consts, *(x for x, nz in zip(tc, const_nz) if nz),
                *carry, *(instantiate_zeros(x) for x, nz in zip(tcarry, carry_nz) if nz),
                *xs, *(x for x, nz in zip(txs, xs_nz) if nz)]
    outs = scan_p.bind(*operands, jaxpr=body, num_consts=len(body_consts) + num_consts +
                       sum(const_nz), num_carry=num_carry + sum(carry_nz), length=length,
                       reverse=reverse)
    out_carry, t_out_carry, ys, t_ys = split_list(outs, [num_carry, sum(carry_nz), n_ys])
    t_carry_it, t_ys_it = iter(t_out_carry), iter(t_ys)
    carry_tangents = [next(t_carry_it) if nz else Zero(tangent_aval(get_aval(c)))
                      for c, nz in zip(out_carry, carry_nz)]
    ys_tangents = [next(t_ys_it) if nz else Zero(tangent_aval(get_aval(y)))
                   for y, nz in zip(ys, ys_nz)]
    return [*out_carry, *ys], [*carry_tangents, *ys_tangents]


jvp_rules[scan_p] = scan_jvp

# ---------------------------------------------------------------------------------
# Partial evaluation: a known loop and an unknown loop, each residual kept as cheaply
# as the module docstring says


def scan_partial_eval(eqn: JaxprEqn, unknown_inputs: list[bool]):
    p = eqn.params
    jaxpr, num_consts, num_carry = p["jaxpr"], p["num_consts"], p["num_carry"]
    const_uk, carry_uk, xs_uk = split_list(unknown_inputs, [num_consts, num_carry])
    n_ys = len(jaxpr.outvars) - num_carry
    def split_body(carry_uk):
        split = partial_eval_jaxpr(jaxpr, [*const_uk, *carry_uk, *xs_uk],
                                   [*carry_uk, *[False] * n_ys])
        return split.out_unknowns[:num_carry], split

    carry_uk, split = carry_fixpoint(carry_uk, split_body)
    uk = [*const_uk, *carry_uk, *xs_uk]
    known_in = [a for a, u in zip(eqn.inputs, uk) if not u]
    unknown_in = [a for a, u in zip(eqn.inputs, uk) if u]
    ways = _residual_ways(split, jaxpr, num_consts, num_carry, p["length"], const_uk,
                          carry_uk)
    stacked_res = [v for v, (way, _) in zip(split.residuals, ways) if way == "stacked"]
    known_eqn, stacked = _known_scan(eqn, split, known_in, stacked_res, const_uk, carry_uk)
    known_eqns, res_consts, res_xs = [known_eqn], [], []
    carry = eqn.inputs[num_consts:num_consts + num_carry]
    for var, (way, detail) in zip(split.residuals, ways):
        if way == "invariant":  # computed once, outside the loop
            eqns, (atom,) = inline_jaxpr(_restricted(split.known, [var], io=False), known_in)
            known_eqns[:0] = eqns
            res_consts.append(atom)
        elif way == "xs":  # a known scanned input: the backward loop scans it again
            res_xs.append(eqn.inputs[detail])
        elif way == "shifted":
            eqns, (atom,) = staged_eqns(lambda init, ys: [_shift(init, ys, p["reverse"])],
                                        [carry[detail], stacked[jaxpr.outvars[detail]]])
            known_eqns += eqns
            res_xs.append(atom)
        else:
            res_xs.append(stacked[var])
    unknown_eqn = _unknown_scan(eqn, split, ways, res_consts, res_xs, unknown_in,
                                const_uk, carry_uk)
    return (_final_carries_from_stacks(known_eqns, known_eqn, eqn, stacked, carry_uk),
            [unknown_eqn])


partial_eval_rules[scan_p] = scan_partial_eval


def _final_carries_from_stacks(known_eqns: list, loop: JaxprEqn, eqn: JaxprEqn,
                               stacked: dict, carry_uk):
    """A known final carry whose every value is stacked anyway is the stack's last row:
    defined so, by cheap equations, the backward pass can read it without keeping a
    copy. The known loop's (`loop`, among `known_eqns`) own output for it is renamed and
    left unused."""
    p = eqn.params
    jaxpr, num_carry = p["jaxpr"], p["num_carry"]
    if p["length"] == 0:
        return known_eqns
    rest = []
    renamed = {}
    for i, final in enumerate(eqn.outputs[:num_carry]):
        stack = stacked.get(jaxpr.outvars[i])
        if carry_uk[i] or stack is None:
            continue
        eqns, _ = staged_eqns(lambda ys: [_last_row(ys, p["reverse"])], [stack])
        rest += [*eqns[:-1], attrs.evolve(eqns[-1], outputs=(final,))]
        renamed[final] = Var(final.aval)
    outputs = tuple(renamed.get(v, v) for v in loop.outputs)
    return [attrs.evolve(e, outputs=outputs) if e is loop else e for e in known_eqns] + rest


def _last_row(ys, reverse: bool):
    length = get_aval(ys).shape[0]
    row = slice_in_dim(ys, 0, 1) if reverse else slice_in_dim(ys, length - 1, length)
    return reshape(row, get_aval(ys).shape[1:])


def _residual_ways(split, jaxpr: Jaxpr, num_consts: int, num_carry: int, length: int,
                   const_uk, carry_uk):
    """How each residual is kept: ("invariant", None) if computed from known consts
    only, ("xs", operand index) for a known scanned input, ("shifted", i) for known
    carry i whose next value the body computes and stacks anyway (a loop of at least
    one step), ("stacked", None) otherwise."""
    invariant = set(split.known.invars[:sum(not u for u in const_uk)])
    for e in split.known.eqns:  # (a callback's results differ from call to call)
        if not does_io(e) and all(type(a) is not Var or a in invariant for a in e.inputs):
            invariant.update(e.outputs)
    carry_in = jaxpr.invars[num_consts:num_consts + num_carry]
    next_value = {v: jaxpr.outvars[i] for i, v in enumerate(carry_in) if not carry_uk[i]}
    xs_operand = {v: num_consts + num_carry + i
                  for i, v in enumerate(jaxpr.invars[num_consts + num_carry:])}
    residuals, body_inputs = set(split.residuals), set(jaxpr.invars)
    ways = []
    for var in split.residuals:
        if var in invariant:
            ways.append(("invariant", None))
        elif var in xs_operand:
            ways.append(("xs", xs_operand[var]))
        elif length and var in next_value and next_value[var] in residuals and \
                next_value[var] not in invariant and next_value[var] not in body_inputs:
            ways.append(("shifted", carry_in.index(var)))
        else:
            ways.append(("stacked", None))
    return ways


def _restricted(jaxpr: Jaxpr, outvars: list[Var], io: bool = True) -> Jaxpr:
    """`jaxpr` computing only `outvars`, from the same inputs; without `io`, without
    the equations that call back into Python (a value computed once outside the loop
    must not run the body's callbacks: the loop runs them, once per step)."""
    eqns = jaxpr.eqns if io else tuple(e for e in jaxpr.eqns if not does_io(e))
    pruned = Jaxpr(jaxpr.constvars, jaxpr.invars, eqns, tuple(outvars))
    return dce_jaxpr(pruned, [True] * len(outvars))[0]


def _known_scan(eqn: JaxprEqn, split, known_in, stacked_res, const_uk, carry_uk):
    """The known loop: the known outputs, plus one stacked output per stacked residual."""
    p = eqn.params
    n_known_out = len(split.known.outvars) - len(split.residuals)
    body = _restricted(split.known, [*split.known.outvars[:n_known_out], *stacked_res])
    stacked = {v: Var(ShapedArray((p["length"], *v.aval.shape), v.aval.dtype))
               for v in stacked_res}
    known_outs = [v for v, u in zip(eqn.outputs, split.out_unknowns) if not u]
    params = dict(p, jaxpr=body, num_consts=sum(not u for u in const_uk),
                  num_carry=sum(not u for u in carry_uk))
    return JaxprEqn(scan_p, tuple(known_in), (*known_outs, *stacked.values()), params,
                    eqn.source_info), stacked


def _shift(init, ys, reverse: bool):
    """The carry entering each step, from the initial carry and the stacked carries
    leaving each step."""
    length = get_aval(ys).shape[0]
    first = expand_dims(init, (0,))
    if reverse:
        return concatenate([slice_in_dim(ys, 1, length), first], 0)
    return concatenate([first, slice_in_dim(ys, 0, length - 1)], 0)


def _unknown_scan(eqn: JaxprEqn, split, ways, res_consts, res_xs, unknown_in, const_uk,
                  carry_uk):
    """The unknown loop: invariant residuals as consts, per-step ones as xs."""
    p = eqn.params
    n_res = len(split.residuals)
    res_idx, uk_idx = split_list(range(len(split.unknown.invars)), [n_res])
    inv_idx = [i for i, (way, _) in zip(res_idx, ways) if way == "invariant"]
    step_idx = [i for i, (way, _) in zip(res_idx, ways) if way != "invariant"]
    n_uk_consts, n_uk_carry = sum(const_uk), sum(carry_uk)
    c_idx, k_idx, x_idx = split_list(uk_idx, [n_uk_consts, n_uk_carry])
    body = reorder(split.unknown, [*inv_idx, *c_idx, *k_idx, *step_idx, *x_idx],
                   range(len(split.unknown.outvars)))
    uk_consts, uk_carry, uk_xs = split_list(unknown_in, [n_uk_consts, n_uk_carry])
    unknown_outs = [v for v, u in zip(eqn.outputs, split.out_unknowns) if u]
    params = dict(p, jaxpr=body, num_consts=len(res_consts) + n_uk_consts,
                  num_carry=n_uk_carry)
    return JaxprEqn(scan_p, (*res_consts, *uk_consts, *uk_carry, *res_xs, *uk_xs),
                    tuple(unknown_outs), params, eqn.source_info)


# ---------------------------------------------------------------------------------
# Transpose: the backward loop runs the other way, accumulating the consts' cotangents


def scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    """A carry whose initial value is known (not linear) is a zero tangent that the
    transposer evaluated (`zeros`, the only known value a linear program can start a
    linear carry with): the loop is still linear in it, and it gets no cotangent."""
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    const_lin = [is_linear(c) for c in consts]
    xs_lin = [is_linear(x) for x in xs]
    ct_carry, ct_ys = split_list(cts, [num_carry])
    ys_nz = [type(ct) is not Zero for ct in ct_ys]
    known_consts = [c for c, lin in zip(consts, const_lin) if not lin]
    known_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
    lin_const_avals = [c.aval for c, lin in zip(consts, const_lin) if lin]
    body, closed_over = _transposed_body(jaxpr, num_consts, num_carry, const_lin, xs_lin, ys_nz)
    known_consts = [*closed_over, *known_consts]
    operands = [*known_consts, *(zeros(a) for a in lin_const_avals),
                *(instantiate_zeros(ct) for ct in ct_carry), *known_xs,
                *(ct for ct in ct_ys if type(ct) is not Zero)]
    outs = scan_p.bind(*operands, jaxpr=body, num_consts=len(known_consts),
                       num_carry=len(lin_const_avals) + num_carry, length=length,
                       reverse=not reverse)
    ct_consts, ct_carry_init, ct_xs = split_list(outs, [len(lin_const_avals), num_carry])
    ct_consts, ct_xs = iter(ct_consts), iter(ct_xs)
    return [*(next(ct_consts) if lin else None for lin in const_lin),
            *(ct if is_linear(c) else None for c, ct in zip(carry, ct_carry_init)),
            *(next(ct_xs) if lin else None for lin in xs_lin)]


transpose_rules[scan_p] = scan_transpose


def _transposed_body(jaxpr: Jaxpr, num_consts, num_carry, const_lin, xs_lin, ys_nz
                     ) -> tuple[Jaxpr, list]:
    """(known consts; const cotangent sums, carry cotangents; known xs, ys cotangents)
    -> (updated sums, carry cotangents of the step before, xs cotangents), with what
    the transposed step closes over (a rule's constant, such as a custom rule's value
    of a Python number the program closed over) as its first known consts."""
    consts_in, carry_in, xs_in = split_list(jaxpr.invars, [num_consts, num_carry])
    linear_mask = [*const_lin, *[True] * num_carry, *xs_lin]
    carry_out, ys_out = split_list(jaxpr.outvars, [num_carry])
    n_known_c, n_lin_c = const_lin.count(False), const_lin.count(True)
    n_known_x = xs_lin.count(False)

    def step(*args):
        known_c, sums, ct_carry, known_x, ct_ys = split_list(
            args, [n_known_c, n_lin_c, num_carry, n_known_x])
        ct_ys = iter(ct_ys)
        cts_out = [*ct_carry, *(next(ct_ys) if nz else Zero(tangent_aval(v.aval))
                                for v, nz in zip(ys_out, ys_nz))]
        cts_in = backward_pass(jaxpr, (), [*known_c, *known_x], linear_mask, cts_out)
        ct_c, ct_k, ct_x = split_list([instantiate_zeros(c) for c in cts_in],
                                      [n_lin_c, num_carry])
        return [*(add_tangents(s, c) for s, c in zip(sums, ct_c)), *ct_k, *ct_x]

    avals = [*(v.aval for v, lin in zip(consts_in, const_lin) if not lin),
             *(tangent_aval(v.aval) for v, lin in zip(consts_in, const_lin) if lin),
             *(tangent_aval(v.aval) for v in carry_in),
             *(v.aval for v, lin in zip(xs_in, xs_lin) if not lin),
             *(tangent_aval(v.aval) for v, nz in zip(ys_out, ys_nz) if nz)]
    body, consts = stage(step, avals)
    return with_consts_as_invars(body), consts


# ---------------------------------------------------------------------------------
# Batching: the body batched as a program, carry batching found by a fixed point


def scan_batch(vals, dims, *, jaxpr, num_consts, num_carry, length, reverse):
    """Batched carries keep their lanes on axis 0 through every step; a batched xs
    keeps the scanned axis first, so its lanes are never on axis 0 (moved to 1)."""
    size = batch_size(vals, dims)
    consts, carry, xs = split_list(vals, [num_consts, num_carry])
    const_dims, carry_dims, xs_dims = split_list(dims, [num_consts, num_carry])
    xs = [moveaxis(x, 0, 1) if d == 0 else x for x, d in zip(xs, xs_dims)]
    x_dims = [None if d is None else max(d, 1) - 1 for d in xs_dims]  # in one step's slice
    n_ys = len(jaxpr.outvars) - num_carry
    carry_batched = [d is not None for d in carry_dims]
    def batch_body(carry_batched):
        step_dims = [0 if b else None for b in carry_batched]
        body, consts, out_dims = batch_jaxpr(
            jaxpr, size, [*const_dims, *step_dims, *x_dims], [*step_dims, *[None] * n_ys])
        return [d is not None for d in out_dims[:num_carry]], (body, consts, out_dims)

    carry_batched, (body, body_consts, out_dims) = carry_fixpoint(carry_batched, batch_body)
    step_dims = [0 if b else None for b in carry_batched]
    carry = [matchaxis(c, d, 0, size) if b else c
             for c, d, b in zip(carry, carry_dims, carry_batched)]
    outs = scan_p.bind(*body_consts, *consts, *carry, *xs, jaxpr=with_consts_as_invars(body),
                       num_consts=len(body_consts) + num_consts, num_carry=num_carry,
                       length=length, reverse=reverse)
    ys_dims = [None if d is None else d + 1 for d in out_dims[num_carry:]]
    return outs, [*step_dims, *ys_dims]


batch_rules[scan_p] = scan_batch

# ---------------------------------------------------------------------------------
# Dead-code elimination: unused outputs, and the carries and inputs only they need


def scan_dce(used_outputs: list[bool], eqn: JaxprEqn):
    p = eqn.params
    jaxpr, num_consts, num_carry = p["jaxpr"], p["num_consts"], p["num_carry"]
    used_carry, used_ys = split_list(used_outputs, [num_carry])
    def prune_body(used_carry):
        body, used_in = dce_jaxpr(jaxpr, [*used_carry, *used_ys])
        return used_in[num_consts:num_consts + num_carry], (body, used_in)

    used_carry, (body, used_in) = carry_fixpoint(used_carry, prune_body)
    used_c, _, used_x = split_list(used_in, [num_consts, num_carry])
    keep_in = [*used_c, *used_carry, *used_x]
    body = Jaxpr((), tuple(v for v, k in zip(body.invars, keep_in) if k), body.eqns,
                 body.outvars)
    outputs = tuple(v for v, k in zip(eqn.outputs, [*used_carry, *used_ys]) if k)
    new = JaxprEqn(scan_p, tuple(a for a, k in zip(eqn.inputs, keep_in) if k), outputs,
                   dict(p, jaxpr=body, num_consts=sum(used_c), num_carry=sum(used_carry)),
                   eqn.source_info)
    return keep_in, new


dce_rules[scan_p] = scan_dce
