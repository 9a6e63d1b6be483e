"""Common-subexpression elimination: an equation repeating an earlier one (the same
primitive, params and inputs) is dropped, and its outputs are the earlier one's; so is
one whose `simplify_rules` say its output is one of its inputs (`x * 1`).

Partial evaluation recomputes cheap values in the backward pass instead of saving
them (a slice, `1 - a`): that keeps residuals at their minimum when the passes run
apart, and lowers the peak when they run as one program. There, the recomputation is
the same work twice; merging it is free in memory when the earlier value is still
alive where the repeat stands (no value then lives where none did), and cheap when
the values are small, where time counts and memory does not. Only pure primitives
qualify; an operation on a ref never does.
"""

from __future__ import annotations

import attrs

from ..core.ir import Jaxpr, Var, does_io
from ..core.rules import RuleTable

SMALL = 1 << 16  # bytes: a value this small may live longer to save its recomputation

simplify_rules = RuleTable("simplify")
"""`simplify(eqn, producers) -> Var | None`: the input `eqn`'s one output equals
exactly (bit for bit, for every value), or None; `producers` maps a variable to the
earlier equation that makes it. The value then lives longer in place of the output,
which is never larger."""


def cse_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    last_use = _last_uses(jaxpr)
    first: dict = {}  # an equation's key -> the earlier equation with it
    renamed: dict[Var, Var] = {}
    producers: dict[Var, object] = {}
    eqns = []
    for i, eqn in enumerate(jaxpr.eqns):
        if renamed and not renamed.keys().isdisjoint(eqn.inputs):
            eqn = attrs.evolve(eqn, inputs=tuple(renamed.get(a, a) for a in eqn.inputs))
        same = simplify_rules[eqn.primitive](eqn, producers) \
            if eqn.primitive in simplify_rules else None
        if same is not None:
            (out,) = eqn.outputs
            renamed[out] = same
            last_use[same] = max(last_use.get(same, -1), last_use.get(out, -1))
            continue
        key = _key(eqn)
        earlier = first.get(key) if key is not None else None
        if earlier is not None and all(last_use.get(v, -1) >= i or v.aval.nbytes <= SMALL
                                       for v in earlier.outputs):
            for v, repeat in zip(earlier.outputs, eqn.outputs):
                renamed[repeat] = v
                last_use[v] = max(last_use.get(v, -1), last_use.get(repeat, -1))
            continue
        if key is not None:
            first[key] = eqn
        producers.update(dict.fromkeys(eqn.outputs, eqn))
        eqns.append(eqn)
    outvars = tuple(renamed.get(a, a) for a in jaxpr.outvars)
    return attrs.evolve(jaxpr, eqns=tuple(eqns), outvars=outvars)


def _last_uses(jaxpr: Jaxpr) -> dict[Var, int]:
    """Each variable's last reader (the outputs' is past the last equation)."""
    last: dict[Var, int] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.inputs:
            if type(a) is Var:
                last[a] = i
    for a in jaxpr.outvars:
        if type(a) is Var:
            last[a] = len(jaxpr.eqns)
    return last


def _key(eqn) -> tuple | None:
    """What makes two equations the same computation, or None (an effect, its own or
    a sub-program's: a loop that prints; a param that cannot be a key). Literals by
    type and value, and `repr` for the sign of a zero; params by type and value (`0`
    is not `False`)."""
    if eqn.primitive.effect is not None or does_io(eqn):
        return None
    key = (eqn.primitive,
           tuple(a if type(a) is Var else (type(a.val), repr(a.val)) for a in eqn.inputs),
           tuple((name, type(v), v) for name, v in eqn.params.items()))
    try:
        hash(key)
    except TypeError:  # an array param
        return None
    return key

