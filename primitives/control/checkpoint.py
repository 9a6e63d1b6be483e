"""`checkpoint` (alias `remat`): trade compute for memory.

`checkpoint(f)` runs `f` as one `checkpoint` equation around its staged body. Partial
evaluation splits it so that the forward pass computes only its outputs and keeps
nothing from inside it; the backward pass runs the body again, from its inputs, to
get what the derivative needs. So the residuals of a checkpointed function are (at
most) its inputs, whatever it computes inside. Activity analysis still applies: an
inactive input that no derivative inside reads is not kept either.
"""

from __future__ import annotations

import functools
from typing import Callable

from ...core.activity import Zero
from ...core.avals import tangent_aval
from ...core.ir import JaxprEqn
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import jvp_jaxpr, jvp_rules
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.dce import dce_jaxpr, dce_rules
from ...interpreters.eval import compiled, eval_jaxpr
from ...interpreters.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ...interpreters.transpose import backward_pass, is_linear, transpose_rules
from .common import batch_jaxpr, no_refs, stage_body, with_consts_as_invars

checkpoint_p = Primitive("checkpoint", multiple_results=True)


def checkpoint(fun: Callable) -> Callable:
    """`fun`, whose intermediates the backward pass recomputes instead of keeping."""

    @functools.wraps(fun)
    def checkpointed(*args):
        leaves, in_tree = tree_flatten(args)
        body = no_refs(stage_body(fun, in_tree, [get_aval(x) for x in leaves], "checkpoint"),
                       "checkpoint")
        outs = checkpoint_p.bind(*body.consts, *leaves, jaxpr=body.jaxpr)
        return tree_unflatten(body.out_tree, outs)

    return checkpointed


remat = checkpoint

impl_rules[checkpoint_p] = lambda *args, jaxpr: compiled(jaxpr)((), args)
abstract_eval_rules[checkpoint_p] = lambda *avals, jaxpr: [v.aval for v in jaxpr.outvars]


def checkpoint_jvp(primals, tangents, *, jaxpr):
    nonzero = [type(t) is not Zero for t in tangents]
    body, consts, out_nonzero = jvp_jaxpr(jaxpr, nonzero, [False] * len(jaxpr.outvars))
    outs = checkpoint_p.bind(*consts, *primals, *(t for t in tangents if type(t) is not Zero),
                             jaxpr=with_consts_as_invars(body))
    n = len(jaxpr.outvars)
    tangents_out = iter(outs[n:])
    return outs[:n], [next(tangents_out) if nz else Zero(tangent_aval(v.aval))
                      for v, nz in zip(jaxpr.outvars, out_nonzero)]


jvp_rules[checkpoint_p] = checkpoint_jvp


def checkpoint_partial_eval(eqn: JaxprEqn, unknown_inputs: list[bool]):
    """The known part computes the known outputs and nothing else; the unknown part is
    the whole body again, reading the known inputs: they are the only residuals.

    Which outputs are known is decided by partial evaluation of the body, with the
    rules of the control flow inside it: a jvp'd `scan` reads tangents, but its primal
    carry is known, and the enclosing linearization needs it known."""
    jaxpr = eqn.params["jaxpr"]
    out_unknown = partial_eval_jaxpr(jaxpr, unknown_inputs,
                                     [False] * len(jaxpr.outvars)).out_unknowns
    known_body, used = dce_jaxpr(jaxpr, [not u for u in out_unknown], prune_invars=True)
    assert not any(u for u, k in zip(unknown_inputs, used) if k), "known outputs read unknowns"
    known = JaxprEqn(checkpoint_p, tuple(a for a, k in zip(eqn.inputs, used) if k),
                     tuple(v for v, u in zip(eqn.outputs, out_unknown) if not u),
                     {"jaxpr": known_body}, eqn.source_info)
    unknown_body, used = dce_jaxpr(jaxpr, out_unknown, prune_invars=True)
    unknown = JaxprEqn(checkpoint_p, tuple(a for a, k in zip(eqn.inputs, used) if k),
                       tuple(v for v, u in zip(eqn.outputs, out_unknown) if u),
                       {"jaxpr": unknown_body}, eqn.source_info)
    return [known], [unknown]


partial_eval_rules[checkpoint_p] = checkpoint_partial_eval


def checkpoint_transpose(cts, *operands, jaxpr):
    """Recompute the body's nonlinear part from the kept inputs, then transpose.

    The body is split by partial evaluation first: an equation of it may be partly
    linear (a jvp'd `cond` or `scan` computes primal and tangent outputs at once), and
    only its linear part can be transposed."""
    mask = [is_linear(x) for x in operands]
    known = [x for x in operands if not is_linear(x)]
    split = partial_eval_jaxpr(jaxpr, mask, [True] * len(jaxpr.outvars))
    residuals = eval_jaxpr(split.known, (), known)
    n_res = len(split.residuals)
    cts_in = iter(backward_pass(split.unknown, (), residuals,
                                [False] * n_res + [True] * sum(mask), cts))
    return [next(cts_in) if lin else None for lin in mask]


transpose_rules[checkpoint_p] = checkpoint_transpose


def checkpoint_batch(vals, dims, *, jaxpr):
    body, consts, out_dims = batch_jaxpr(jaxpr, batch_size(vals, dims), dims,
                                         [None] * len(jaxpr.outvars))
    return checkpoint_p.bind(*consts, *vals, jaxpr=with_consts_as_invars(body)), out_dims


batch_rules[checkpoint_p] = checkpoint_batch


def checkpoint_dce(used_outputs: list[bool], eqn: JaxprEqn):
    body, used = dce_jaxpr(eqn.params["jaxpr"], used_outputs, prune_invars=True)
    pruned = JaxprEqn(checkpoint_p, tuple(a for a, u in zip(eqn.inputs, used) if u),
                      tuple(v for v, u in zip(eqn.outputs, used_outputs) if u),
                      {"jaxpr": body}, eqn.source_info)
    return used, pruned


dce_rules[checkpoint_p] = checkpoint_dce

