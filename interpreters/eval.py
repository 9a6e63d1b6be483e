"""The eval interpreter: run a jaxpr.

Each equation is *bound*, not run directly, so evaluating a jaxpr under another
transformation (a jaxpr's values may be tracers) applies that transformation to it.
With plain numpy values `bind` goes straight to the primitive's impl. One loop over
the equations, no recursion: a 100k-equation program evaluates in linear time.
"""

from __future__ import annotations

from ..core.ir import ClosedJaxpr, Jaxpr, Literal
from ..core.trace import bind


def eval_jaxpr(jaxpr: Jaxpr, consts, args) -> list:
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    for eqn in jaxpr.eqns:
        values = [a.val if type(a) is Literal else env[a] for a in eqn.inputs]
        out = bind(eqn.primitive, values, eqn.params, eqn.source_info)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outputs, out))
        else:
            env[eqn.outputs[0]] = out
    return [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]


def eval_closed_jaxpr(closed: ClosedJaxpr, args) -> list:
    return eval_jaxpr(closed.jaxpr, closed.consts, args)
