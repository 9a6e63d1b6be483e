"""Common-subexpression elimination: an equation repeating an earlier one (the same
primitive, params and inputs) is dropped, and its outputs are the earlier one's.

Partial evaluation recomputes cheap values in the backward pass instead of saving
them (a slice, `1 - a`), which is what keeps residuals at their minimum when the
passes run apart. When both passes are one compiled program (a replayed gradient),
the recomputation is the same work twice, and this removes it. Only pure primitives
qualify; an operation on a ref never does.
"""

from __future__ import annotations

import attrs

from ..core.ir import Jaxpr, Var


def cse_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    first: dict = {}  # an equation's key -> the earlier equation with it
    renamed: dict[Var, Var] = {}
    eqns = []
    for eqn in jaxpr.eqns:
        if renamed:
            eqn = attrs.evolve(eqn, inputs=tuple(renamed.get(a, a) for a in eqn.inputs))
        key = _key(eqn)
        earlier = first.get(key) if key is not None else None
        if earlier is not None:
            renamed.update(zip(eqn.outputs, earlier.outputs))
            continue
        if key is not None:
            first[key] = eqn
        eqns.append(eqn)
    outvars = tuple(renamed.get(a, a) for a in jaxpr.outvars)
    return attrs.evolve(jaxpr, eqns=tuple(eqns), outvars=outvars)


def _key(eqn) -> tuple | None:
    """What makes two equations the same computation, or None (an effect, a param
    that cannot be a key). Literals by type and value, and `repr` for the sign of a
    zero; params by type and value (`0` is not `False`)."""
    if eqn.primitive.effect is not None:
        return None
    key = (eqn.primitive,
           tuple(a if type(a) is Var else (type(a.val), repr(a.val)) for a in eqn.inputs),
           tuple((name, type(v), v) for name, v in eqn.params.items()))
    try:
        hash(key)
    except TypeError:  # an array param
        return None
    return key

