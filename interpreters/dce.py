"""Dead-code elimination: drop the work no requested output needs.

Rule signature (only for primitives with sub-jaxprs, whose inner work can be pruned)::

    dce_rules[prim](used_outputs: list[bool], eqn) -> (used_inputs: list[bool], eqn | None)

Every other primitive is pure: it is kept iff one of its outputs is used. An operation
with an effect (`Primitive.effect`: on a ref, or "io", a debug callback) is always kept,
as is one whose sub-programs hold an "io" one (`does_io`): a write or a print has no
output anyone reads.
"""

from __future__ import annotations

import attrs

from ..core.ir import Jaxpr, JaxprEqn, Var, does_io
from ..core.rules import RuleTable

dce_rules = RuleTable("dce")


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: list[bool], prune_invars: bool = False
              ) -> tuple[Jaxpr, list[bool]]:
    """The jaxpr restricted to the used outputs, and which inputs it still reads.

    With `prune_invars` unused inputs are removed from the result's signature.
    """
    used: set[Var] = {v for v, u in zip(jaxpr.outvars, used_outputs) if u and type(v) is Var}
    kept = dce_eqns(jaxpr.eqns, used)
    used_inputs = [v in used for v in jaxpr.invars]
    invars = tuple(v for v, u in zip(jaxpr.invars, used_inputs) if u or not prune_invars)
    outvars = tuple(v for v, u in zip(jaxpr.outvars, used_outputs) if u)
    return attrs.evolve(jaxpr, invars=invars, eqns=tuple(kept), outvars=outvars), used_inputs


def dce_eqns(eqns, used: set[Var]) -> list[JaxprEqn]:
    """The equations (pruned by their rules) that the variables in `used` need, in
    order; `used` grows to everything they read."""
    kept: list[JaxprEqn] = []
    for eqn in reversed(eqns):
        if eqn.primitive.effect is None and eqn.primitive not in dce_rules:
            for v in eqn.outputs:  # pure, no rule: kept iff an output is used
                if v in used:
                    break
            else:
                if not does_io(eqn):
                    continue
        else:
            eqn = _dce_eqn(eqn, used)
            if eqn is None:
                continue
        kept.append(eqn)
        for a in eqn.inputs:
            if type(a) is Var:
                used.add(a)
    kept.reverse()
    return kept


def _dce_eqn(eqn: JaxprEqn, used: set) -> JaxprEqn | None:
    """An equation with an effect (kept) or a dce rule (pruned by it; kept whole if
    nothing reads it but it does io)."""
    if eqn.primitive.effect is not None:
        return eqn
    used_outputs = [v in used for v in eqn.outputs]
    if not any(used_outputs):
        return eqn if does_io(eqn) else None
    _, eqn = dce_rules[eqn.primitive](used_outputs, eqn)
    return eqn
