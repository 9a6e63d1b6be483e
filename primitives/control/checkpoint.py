"""`checkpoint` (alias `remat`): trade compute for memory; `checkpoint_name`.

`checkpoint(f)` runs `f` as one `checkpoint` equation around its staged body. Partial
evaluation splits it so that the forward pass computes only its outputs and keeps
nothing from inside it; the backward pass runs the body again, from its inputs, to
get what the derivative needs. So the residuals of a checkpointed function are (at
most) its inputs, whatever it computes inside. Activity analysis still applies: an
inactive input that no derivative inside reads is not kept either.

`checkpoint(f, policy=p)` keeps also the outputs of the body's equations that
`p(prim, *avals, **params)` calls saveable (JAX's policies, `api.checkpoint_policies`),
and recomputes only the rest. `checkpoint_name(x, name)` is an identity equation whose
`name` param the name-based policies test.
"""

from __future__ import annotations

import functools
from typing import Callable

import attrs

from ...core.activity import Zero
from ...core.avals import tangent_aval
from ...core.errors import MemoryBudgetError
from ...core.ir import JaxprEqn, Var
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import Primitive, abstract_eval_rules, get_aval, impl_rules
from ...interpreters.ad import jvp_jaxpr, jvp_rules
from ...interpreters.batching import batch_rules, batch_size
from ...interpreters.dce import dce_jaxpr, dce_rules
from ...interpreters.eval import compiled, eval_jaxpr
from ...interpreters.linearize import residual_origin, residual_origin_rules
from ...interpreters.partial_eval import partial_eval_jaxpr, partial_eval_rules
from ...interpreters.remat import EquationPolicy, MemoryBudget, ResidualPolicy
from ...interpreters.transpose import backward_pass, is_linear, transpose_rules
from .common import batch_jaxpr, no_refs, stage_body, with_consts_as_invars
from .revolve_scan import revolving_scans

checkpoint_p = Primitive("checkpoint", multiple_results=True)


def checkpoint(fun: Callable, *, policy: Callable | None = None, prevent_cse: bool = True,
               static_argnums: int | tuple[int, ...] = ()) -> Callable:
    """`fun`, whose intermediates the backward pass recomputes instead of keeping, except
    the outputs of equations `policy(prim, *avals, **params)` calls saveable.

    `prevent_cse` is JAX's flag, kept as a param: inert's common-subexpression pass
    never looks into a checkpoint body, so recomputation is never merged away.
    `static_argnums` are passed to `fun` as Python values, not traced."""
    static = _static_positions(static_argnums)

    @functools.wraps(fun)
    def checkpointed(*args):
        positions = {i % len(args) for i in static}
        dynamic = tuple(a for i, a in enumerate(args) if i not in positions)
        leaves, in_tree = tree_flatten(dynamic)
        body = no_refs(stage_body(_with_static(fun, args, positions), in_tree,
                                  [get_aval(x) for x in leaves], "checkpoint"), "checkpoint")
        outs = checkpoint_p.bind(*body.consts, *leaves, jaxpr=body.jaxpr, policy=policy,
                                 prevent_cse=prevent_cse)
        return tree_unflatten(body.out_tree, outs)

    return checkpointed


remat = checkpoint


def _static_positions(static_argnums) -> tuple[int, ...]:
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if not all(isinstance(i, int) for i in nums):
        raise TypeError(f"checkpoint: static_argnums must be ints, got {static_argnums!r}")
    return nums


def _with_static(fun: Callable, args: tuple, positions: set[int]) -> Callable:
    """`fun` of the dynamic arguments only, the static ones filled in where they were."""

    def dynamic_fun(*dynamic):
        it = iter(dynamic)
        return fun(*(a if i in positions else next(it) for i, a in enumerate(args)))

    return dynamic_fun


impl_rules[checkpoint_p] = lambda *args, jaxpr, policy, prevent_cse: compiled(jaxpr)((), args)
abstract_eval_rules[checkpoint_p] = \
    lambda *avals, jaxpr, policy, prevent_cse: [v.aval for v in jaxpr.outvars]


def checkpoint_jvp(primals, tangents, *, jaxpr, policy, prevent_cse):
    nonzero = [type(t) is not Zero for t in tangents]
    body, consts, out_nonzero = jvp_jaxpr(jaxpr, nonzero, [False] * len(jaxpr.outvars))
    outs = checkpoint_p.bind(*consts, *primals, *(t for t in tangents if type(t) is not Zero),
                             jaxpr=with_consts_as_invars(body), policy=policy,
                             prevent_cse=prevent_cse)
    n = len(jaxpr.outvars)
    tangents_out = iter(outs[n:])
    return outs[:n], [next(tangents_out) if nz else Zero(tangent_aval(v.aval))
                      for v, nz in zip(jaxpr.outvars, out_nonzero)]


jvp_rules[checkpoint_p] = checkpoint_jvp


def checkpoint_partial_eval(eqn: JaxprEqn, unknown_inputs: list[bool]):
    """The known part computes the known outputs and the residuals the policy saves
    (none without a policy); the unknown part recomputes the rest of what the derivative
    reads from those and the known inputs, which are residuals as they are.

    Which outputs are known is decided by partial evaluation of the body, with the
    rules of the control flow inside it: a jvp'd `scan` reads tangents, but its primal
    carry is known, and the enclosing linearization needs it known."""
    jaxpr, params = eqn.params["jaxpr"], eqn.params
    if isinstance(params["policy"], MemoryBudget):
        jaxpr = revolving_scans(jaxpr, unknown_inputs, params["policy"].nbytes)
    try:
        split = partial_eval_jaxpr(jaxpr, unknown_inputs, [False] * len(jaxpr.outvars),
                                   policy=_residual_policy(params["policy"]))
    except MemoryBudgetError as e:
        raise e.with_source(eqn.source_info) from None
    inputs = dict(zip(jaxpr.invars, eqn.inputs))
    computed = [r for r in split.residuals if r not in inputs]
    n_known_out = len(split.known.outvars) - len(split.residuals)
    known_body, used = dce_jaxpr(
        attrs.evolve(split.known, outvars=(*split.known.outvars[:n_known_out], *computed)),
        [True] * (n_known_out + len(computed)), prune_invars=True)
    known_inputs = [a for a, u in zip(eqn.inputs, unknown_inputs) if not u]
    residual_vars = {r: Var(r.aval) for r in computed}
    known = JaxprEqn(checkpoint_p, tuple(a for a, k in zip(known_inputs, used) if k),
                     (*(v for v, u in zip(eqn.outputs, split.out_unknowns) if not u),
                      *residual_vars.values()),
                     {**params, "jaxpr": known_body}, eqn.source_info)
    unknown = JaxprEqn(checkpoint_p,
                       (*({**inputs, **residual_vars}[r] for r in split.residuals),
                        *(a for a, u in zip(eqn.inputs, unknown_inputs) if u)),
                       tuple(v for v, u in zip(eqn.outputs, split.out_unknowns) if u),
                       {**params, "jaxpr": split.unknown}, eqn.source_info)
    return [known], [unknown]


def _residual_policy(policy) -> ResidualPolicy:
    """A budget plans itself; JAX's policy signature, `policy(prim, *avals, **params)`, is
    asked of each equation; no policy saves nothing."""
    if isinstance(policy, ResidualPolicy):
        return policy
    if policy is None:
        return EquationPolicy(lambda eqn: False)
    return EquationPolicy(lambda eqn: bool(
        policy(eqn.primitive, *(a.aval for a in eqn.inputs), **eqn.params)))


partial_eval_rules[checkpoint_p] = checkpoint_partial_eval


def checkpoint_residual_origin(eqn: JaxprEqn, index: int):
    """A value the policy saved is named by the body's equation that computed it."""
    body = eqn.params["jaxpr"]
    out = body.outvars[index]
    for inner in body.eqns:
        if out in inner.outputs:
            return residual_origin(inner, inner.outputs.index(out))
    return eqn.primitive.name, eqn.source_info


residual_origin_rules[checkpoint_p] = checkpoint_residual_origin


def checkpoint_transpose(cts, *operands, jaxpr, policy, prevent_cse):
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


def checkpoint_batch(vals, dims, *, jaxpr, policy, prevent_cse):
    body, consts, out_dims = batch_jaxpr(jaxpr, batch_size(vals, dims), dims,
                                         [None] * len(jaxpr.outvars))
    return checkpoint_p.bind(*consts, *vals, jaxpr=with_consts_as_invars(body), policy=policy,
                             prevent_cse=prevent_cse), out_dims


batch_rules[checkpoint_p] = checkpoint_batch


def checkpoint_dce(used_outputs: list[bool], eqn: JaxprEqn):
    body, used = dce_jaxpr(eqn.params["jaxpr"], used_outputs, prune_invars=True)
    pruned = JaxprEqn(checkpoint_p, tuple(a for a, u in zip(eqn.inputs, used) if u),
                      tuple(v for v, u in zip(eqn.outputs, used_outputs) if u),
                      {**eqn.params, "jaxpr": body}, eqn.source_info)
    return used, pruned


dce_rules[checkpoint_p] = checkpoint_dce



name_p = Primitive("name")


def checkpoint_name(x, name: str):
    """`x`, through an equation named `name` that checkpoint policies can save by name."""
    return name_p.bind(x, name=name)


impl_rules[name_p] = lambda x, *, name: x
abstract_eval_rules[name_p] = lambda aval, *, name: aval


def name_jvp(primals, tangents, *, name):
    """The tangent is not named (as in JAX): only known values are ever saved."""
    return [checkpoint_name(primals[0], name)], [tangents[0]]


jvp_rules[name_p] = name_jvp
transpose_rules[name_p] = lambda ct, x, *, name: [ct]
batch_rules[name_p] = lambda vals, dims, *, name: ([checkpoint_name(vals[0], name)], [dims[0]])
