"""Partial evaluation: split a jaxpr into a known and an unknown part.

Given which inputs are unknown, an equation is unknown iff it reads an unknown value;
everything else is known and runs in the known part. Inactive values are known, so
all inactive work lands on the known (forward) side. *Residuals* are the known
values the unknown part reads, and choosing them is an optimisation:

1. the unknown part is first pruned to the outputs that are asked for (so work
   that only feeds, say, a `has_aux` output keeps nothing alive);
2. a residual that cheap equations can recompute from literals and from other
   residuals is recomputed in the unknown part instead of being saved (`zeros`,
   broadcasts, reshapes, `1 - y*y` from a saved `y`). This is a greedy form of the
   min-cut rematerialisation of functorch's partitioner: a residual is dropped only
   when that costs no new residual, so the bytes kept never grow;
3. a residual computed by cheap equations from a single value no larger than itself
   is replaced by that value (`tanh`'s output rather than `1 - tanh²`): the same
   bytes, but the value the forward pass made anyway, which other rules (the next
   step's matmul in a recurrence) can then share.

Rule signature (only for primitives with sub-jaxprs, e.g. control flow)::

    partial_eval_rules[prim](eqn, unknown_inputs: list[bool])
        -> (known_eqns: list[JaxprEqn], unknown_eqns: list[JaxprEqn])

called for an equation with both known and unknown inputs. The known equations read
only known values and define the known outputs; the unknown ones define the rest.
Variables the first define and the second read are the equation's residuals. Every
other primitive is handled by the default: all known or all unknown. The staging
trace applies the same rules online when linearizing (see `core.staging`).
"""

from __future__ import annotations

import attrs

from ..core.ir import Jaxpr, JaxprEqn, Literal, Var
from ..core.rules import RuleTable
from ..core.trace import Primitive
from .ad import zeros_p
from .dce import dce_jaxpr

partial_eval_rules = RuleTable("partial eval")

_recomputable: set[Primitive] = set()
_RECOMPUTE_DEPTH = 8


def is_recomputable(prim: Primitive) -> bool:
    return prim in _recomputable


def def_recomputable(*prims: Primitive) -> None:
    """Declare primitives cheap enough to recompute in the backward pass rather than
    keep their outputs alive between the passes (elementwise arithmetic, reshapes)."""
    _recomputable.update(prims)


def_recomputable(zeros_p)


@attrs.frozen
class Split:
    """The result of partial evaluation.

    `known`: (constvars; known inputs) -> known outputs + residuals.
    `unknown`: residuals + unknown inputs -> unknown outputs.
    `residuals` are variables of the original jaxpr, in the order both parts use.
    """

    known: Jaxpr | None
    unknown: Jaxpr
    out_unknowns: list[bool]
    residuals: list[Var]


def partial_eval_jaxpr(jaxpr: Jaxpr, unknown_inputs: list[bool],
                       instantiate: list[bool], build_known: bool = True) -> Split:
    """Split `jaxpr`; outputs flagged in `instantiate` are unknown even if computable
    from known values (the caller needs them on the unknown side). Without
    `build_known`, `Split.known` is None: the caller has the known values already."""
    unknown = {v for v, u in zip(jaxpr.invars, unknown_inputs) if u}
    known_eqns, unknown_eqns, defining = _classify(jaxpr.eqns, unknown)
    out_unknowns = [(type(v) is Var and v in unknown) or inst
                    for v, inst in zip(jaxpr.outvars, instantiate)]
    unknown_outvars = [v for v, u in zip(jaxpr.outvars, out_unknowns) if u]
    needed = _needed_eqns(unknown_eqns, unknown_outvars)
    candidates = _residual_candidates(needed, unknown_outvars, unknown)
    residuals, recompute = _choose_residuals(candidates, defining)
    order = {id(e): i for i, e in enumerate(jaxpr.eqns)}
    recompute.sort(key=lambda e: order[id(e)])
    unknown_invars = [v for v, u in zip(jaxpr.invars, unknown_inputs) if u]
    unknown_jaxpr = Jaxpr((), (*residuals, *unknown_invars), (*recompute, *needed),
                          tuple(unknown_outvars))
    known_outvars = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
    known_invars = [v for v, u in zip(jaxpr.invars, unknown_inputs) if not u]
    known_jaxpr = None
    if build_known:
        known_jaxpr = Jaxpr(jaxpr.constvars, tuple(known_invars), tuple(known_eqns),
                            (*known_outvars, *residuals))
        known_jaxpr, _ = dce_jaxpr(known_jaxpr, [True] * len(known_jaxpr.outvars))
    return Split(known_jaxpr, unknown_jaxpr, out_unknowns, residuals)


def _classify(eqns, unknown: set) -> tuple[list, list, dict]:
    """Known and unknown equations (adds unknown outputs to `unknown`), and the known
    equation defining each known variable."""
    known_eqns, unknown_eqns, defining = [], [], {}
    for eqn in eqns:
        unknown_inputs = [type(a) is Var and a in unknown for a in eqn.inputs]
        if not any(unknown_inputs):
            known, unknowns = [eqn], []
        elif all(unknown_inputs) or eqn.primitive not in partial_eval_rules:
            known, unknowns = [], [eqn]
        else:
            known, unknowns = partial_eval_rules[eqn.primitive](eqn, unknown_inputs)
        for e in known:
            known_eqns.append(e)
            defining.update((v, e) for v in e.outputs)
        for e in unknowns:
            unknown.update(e.outputs)
            unknown_eqns.append(e)
    return known_eqns, unknown_eqns, defining


def _needed_eqns(unknown_eqns: list, outvars: list) -> list[JaxprEqn]:
    """The unknown equations some requested output depends on, in order."""
    live = {v for v in outvars if type(v) is Var}
    needed = []
    for eqn in reversed(unknown_eqns):
        if any(v in live for v in eqn.outputs):
            needed.append(eqn)
            live.update(a for a in eqn.inputs if type(a) is Var)
    needed.reverse()
    return needed


def _residual_candidates(needed: list, unknown_outvars: list, unknown: set) -> list[Var]:
    reads = [a for e in needed for a in e.inputs] + list(unknown_outvars)
    return list(dict.fromkeys(a for a in reads if type(a) is Var and a not in unknown))


def _choose_residuals(candidates: list[Var], defining: dict) -> tuple[list[Var], list]:
    """Save the upstream value of each candidate, drop every saved value that cheap
    equations recompute from literals and the values that stay saved; return the
    residuals kept and the equations recomputing the rest of what is read."""
    saved = dict.fromkeys(_upstream(v, defining) for v in candidates)
    recomputed: dict[Var, JaxprEqn] = {}
    for var in list(saved):
        del saved[var]
        if not _add_recipe(var, saved, recomputed, defining):
            saved[var] = None
    for var in candidates:
        found = _add_recipe(var, saved, recomputed, defining)
        assert found, "an upstream residual recomputes its candidate"
    return list(saved), list(dict.fromkeys(recomputed.values()))


def _add_recipe(var: Var, saved: dict, recomputed: dict, defining: dict) -> bool:
    recipe = _recipe(var, saved, recomputed, defining, _RECOMPUTE_DEPTH)
    if recipe is not None:
        recomputed.update((v, e) for e in recipe for v in e.outputs)
    return recipe is not None


def _upstream(var: Var, defining: dict) -> Var:
    """The single value `var` is cheaply computed from, if no larger; else `var`."""
    sources = _cheap_sources(var, defining, _RECOMPUTE_DEPTH)
    if sources is None or len(sources) != 1:
        return var
    (source,) = sources
    return source if source.aval.nbytes <= var.aval.nbytes else var


def _cheap_sources(var: Var, defining: dict, depth: int) -> set[Var] | None:
    """The first non-cheaply-computed values behind `var` (None past the depth)."""
    eqn = defining.get(var)
    if eqn is None or eqn.primitive not in _recomputable:
        return {var}
    if depth == 0:
        return None
    sources: set[Var] = set()
    for atom in eqn.inputs:
        if type(atom) is Var:
            sub = _cheap_sources(atom, defining, depth - 1)
            if sub is None:
                return None
            sources |= sub
    return sources


def _recipe(var: Var, saved: dict, recomputed: dict, defining: dict, depth: int):
    """Equations recomputing `var` from saved values and literals, or None."""
    if var in saved or var in recomputed:
        return []
    eqn = defining.get(var)
    if eqn is None or eqn.primitive not in _recomputable or depth == 0:
        return None
    eqns = []
    for atom in eqn.inputs:
        if type(atom) is Literal:
            continue
        sub = _recipe(atom, saved, recomputed, defining, depth - 1)
        if sub is None:
            return None
        eqns += sub
    return eqns + [eqn]
