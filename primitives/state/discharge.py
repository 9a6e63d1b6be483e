"""Discharging state: a program that uses refs as a functional program.

`discharge_jaxpr` evaluates a jaxpr under a staging trace that discharges refs
(`core.staging`): each ref input becomes its contents, each read an indexing of the
current contents, each write a functional update of them, and the final contents of
each ref input are extra outputs. Refs the jaxpr creates and drops leave nothing.

This is how control flow handles the refs its bodies close over (`control.common`):
they become carries (scan, while) or extra operands and outputs (cond), read before
the loop and written back after it, so the loop primitives and every interpreter
below them see functional bodies only.
"""

from __future__ import annotations

from ...core.avals import AbstractRef
from ...core.ir import Jaxpr
from ...core.staging import stage
from ...core.trace import REF_EFFECTS
from ...interpreters.dce import dce_jaxpr
from ...interpreters.eval import eval_jaxpr
from .refs import freeze, new_ref


def discharge_jaxpr(jaxpr: Jaxpr) -> tuple[Jaxpr, list]:
    """`jaxpr` (no constvars) with each ref input replaced by its contents and their
    final values as outputs after its own; returns it and the values of its constvars
    (constants the discharge rules introduced)."""
    is_ref = [type(v.aval) is AbstractRef for v in jaxpr.invars]

    def functional(*args):
        refs = [new_ref(a) if r else a for a, r in zip(args, is_ref)]
        outs = eval_jaxpr(jaxpr, (), refs)
        return [*outs, *(freeze(x) for x, r in zip(refs, is_ref) if r)]

    avals = [v.aval.inner if r else v.aval for v, r in zip(jaxpr.invars, is_ref)]
    functional_jaxpr, consts = stage(functional, avals, discharge=True)
    # the old values that writes return are mostly unread: drop their gathers
    return dce_jaxpr(functional_jaxpr, [True] * len(functional_jaxpr.outvars))[0], consts


def has_state(jaxpr: Jaxpr) -> bool:
    """Does the jaxpr create, read or write a ref?"""
    return any(e.primitive.effect in REF_EFFECTS for e in jaxpr.eqns) or any(
        type(v.aval) is AbstractRef for v in (*jaxpr.constvars, *jaxpr.invars))
