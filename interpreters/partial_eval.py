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
3. before that, a residual that cheap equations compute from values whose extra
   bytes are no more than its own is replaced by those values: `tanh`'s output
   rather than `1 - tanh²` (the same bytes, but a value other rules, like the next
   step's matmul in a recurrence, can then share), or the initial carry instead of
   a whole shifted copy of a scan's stacked outputs; or, when that is fewer bytes in
   all, the sources of every candidate together.

A checkpoint's *policy* (`interpreters.remat`) replaces steps 2 and 3 inside its body:
JAX's per-equation policies, as JAX's `partial_eval_jaxpr_custom`, or a byte budget.

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

from ..core.check import check_jaxpr, checks_enabled
from ..core.ir import Jaxpr, JaxprEqn, Literal, Var
from ..core.rules import RuleTable
from ..core.trace import Primitive
from .ad import zeros_p
from .dce import dce_eqns, dce_jaxpr
from .remat import ResidualPolicy

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
                       instantiate: list[bool], known_defs: dict | None = None,
                       policy: ResidualPolicy | None = None) -> Split:
    """Split `jaxpr`; outputs flagged in `instantiate` are unknown even if computable
    from known values (the caller needs them on the unknown side).

    `known_defs` is given for a jaxpr the staging trace recorded while computing its
    known values (known variable -> index of its equation): its equations were split
    by their rules already and classified as they were recorded, and `Split.known` is
    None since the caller has the known values. `policy`, a checkpoint's, chooses the
    residuals and what is recomputed instead of steps 2 and 3 (`interpreters.remat`).
    """
    online = known_defs is not None
    unknown = {v for v, u in zip(jaxpr.invars, unknown_inputs) if u}
    if online:
        known_eqns, unknown_eqns, defining = _classified(jaxpr.eqns, unknown, known_defs)
    else:
        known_eqns, unknown_eqns, defining = _classify(jaxpr.eqns, unknown)
    out_unknowns = [(type(v) is Var and v in unknown) or inst
                    for v, inst in zip(jaxpr.outvars, instantiate)]
    unknown_outvars = [v for v, u in zip(jaxpr.outvars, out_unknowns) if u]
    needed = dce_eqns(unknown_eqns, {v for v in unknown_outvars if type(v) is Var})
    candidates = _residual_candidates(needed, unknown_outvars, unknown)
    if policy is None:
        residuals, recompute = _choose_residuals(candidates, defining)
    else:
        residuals, recompute = policy.choose(candidates, defining,
                                             lambda: _choose_residuals(candidates, defining))
    if len(recompute) > 1:
        order = {id(e): i for i, e in enumerate(known_eqns or jaxpr.eqns)}
        recompute.sort(key=lambda e: order[id(e)])
    unknown_invars = [v for v, u in zip(jaxpr.invars, unknown_inputs) if u]
    unknown_jaxpr = Jaxpr((), (*residuals, *unknown_invars), (*recompute, *needed),
                          tuple(unknown_outvars))
    known_outvars = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u]
    known_invars = [v for v, u in zip(jaxpr.invars, unknown_inputs) if not u]
    known_jaxpr = None
    if not online:
        known_jaxpr = Jaxpr(jaxpr.constvars, tuple(known_invars), tuple(known_eqns),
                            (*known_outvars, *residuals))
        known_jaxpr, _ = dce_jaxpr(known_jaxpr, [True] * len(known_jaxpr.outvars))
    if checks_enabled():
        for checked in (known_jaxpr, unknown_jaxpr):
            if checked is not None:
                check_jaxpr(checked)
    return Split(known_jaxpr, unknown_jaxpr, out_unknowns, residuals)


def unknown_vars(jaxpr: Jaxpr, unknown_inputs: list[bool]) -> set[Var]:
    """The variables of `jaxpr` partial evaluation finds unknown (by the rules)."""
    unknown = {v for v, u in zip(jaxpr.invars, unknown_inputs) if u}
    _classify(jaxpr.eqns, unknown)
    return unknown


def _classified(eqns, unknown: set, known_defs: dict) -> tuple[list, list, dict]:
    """`_classify` of equations the staging trace classified as it recorded them (so
    no pass reads every equation's inputs). A linearization records no equation
    without outputs (its refs are discharged), so each known one is in `known_defs`."""
    known_index = set(known_defs.values())
    unknown_eqns = [e for i, e in enumerate(eqns) if i not in known_index]
    for e in unknown_eqns:
        unknown.update(e.outputs)
    return [], unknown_eqns, {v: eqns[i] for v, i in known_defs.items()}


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


def _residual_candidates(needed: list, unknown_outvars: list, unknown: set) -> list[Var]:
    reads = [a for e in needed for a in e.inputs] + list(unknown_outvars)
    return list(dict.fromkeys(a for a in reads if type(a) is Var and a not in unknown))


def _choose_residuals(candidates: list[Var], defining: dict) -> tuple[list[Var], list]:
    """Save the cheapest sources of the candidates, drop every saved value that cheap
    equations recompute from literals and the values that stay saved; return the
    residuals kept and the equations recomputing the rest of what is read."""
    saved = _sources_to_save(candidates, defining)
    recomputed: dict[Var, JaxprEqn] = {}
    for var in list(saved):
        del saved[var]
        if not _add_recipe(var, saved, recomputed, defining):
            saved[var] = None
    for var in candidates:
        found = _add_recipe(var, saved, recomputed, defining)
        assert found, "a candidate is recomputable from the sources saved for it"
    return list(saved), list(dict.fromkeys(recomputed.values()))


def _sources_to_save(candidates: list[Var], defining: dict) -> dict:
    """For each candidate, itself or the values cheap equations compute it from,
    whichever adds fewer bytes to what is saved already; or every candidate's sources,
    if those are fewer bytes in all: one at a time, a mask and a coefficient computed
    from the same two inputs each look cheaper to save than both inputs."""
    saved: dict[Var, None] = {}
    everyone: dict[Var, None] = {}
    pending = set(candidates)
    for var in candidates:
        sources = _cheap_sources(var, defining, _RECOMPUTE_DEPTH) or {var: None}
        everyone.update(sources)
        extra = sum(s.aval.nbytes for s in sources if s not in saved and s not in pending)
        saved.update(sources if extra <= var.aval.nbytes else {var: None})
    return everyone if _nbytes(everyone) < _nbytes(saved) else saved


def _nbytes(values) -> int:
    return sum(v.aval.nbytes for v in values)


def _add_recipe(var: Var, saved: dict, recomputed: dict, defining: dict) -> bool:
    recipe = _recipe(var, saved, recomputed, defining, _RECOMPUTE_DEPTH)
    if recipe is not None:
        recomputed.update((v, e) for e in recipe for v in e.outputs)
    return recipe is not None


def _cheap_sources(var: Var, defining: dict, depth: int) -> dict[Var, None] | None:
    """The first values behind `var` not computed by cheap equations, in order (None
    past the depth)."""
    eqn = defining.get(var)
    if eqn is None or eqn.primitive not in _recomputable:
        return {var: None}
    if depth == 0:
        return None
    sources: dict[Var, None] = {}
    for atom in eqn.inputs:
        if type(atom) is Var:
            sub = _cheap_sources(atom, defining, depth - 1)
            if sub is None:
                return None
            sources.update(sub)
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
