"""What recomputation costs: equations and an estimate of floating-point operations.

`checkpoint` trades memory for recomputation, so `print_saved_residuals` reports what
the backward pass computes again, and a memory budget plans by it. An equation costs
one flop per output element unless its primitive registers a better estimate in
`flop_rules` (`dot_general`: two per multiply-add); an equation with sub-programs
costs theirs, times a scan's length (a `cond` its dearest branch, a `while` one trip:
its count is not known).

Rule signature::

    flop_rules[prim](eqn) -> int
"""

from __future__ import annotations

import math

import attrs

from ..core.ir import Jaxpr, JaxprEqn, Var
from ..core.rules import RuleTable

flop_rules = RuleTable("flop estimate")


@attrs.frozen
class Cost:
    """Equations run and their estimated floating-point operations."""

    eqns: int = 0
    flops: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.eqns + other.eqns, self.flops + other.flops)

    def times(self, n: int) -> Cost:
        return Cost(self.eqns * n, self.flops * n)


def eqns_cost(eqns) -> Cost:
    total = Cost()
    for eqn in eqns:
        total = total + eqn_cost(eqn)
    return total


def eqn_cost(eqn: JaxprEqn) -> Cost:
    bodies = _sub_jaxprs(eqn)
    if not bodies:
        rule = flop_rules.get(eqn.primitive)
        return Cost(1, rule(eqn) if rule else sum(_size(v) for v in eqn.outputs))
    dearest = max((eqns_cost(b.eqns) for b in bodies), key=lambda c: c.flops)
    return dearest.times(eqn.params.get("length", 1))


def nonlinear_cost(jaxpr: Jaxpr, linear: list[bool]) -> Cost:
    """The cost of the equations of a linear program that read no linear value, as its
    evaluation computes them from the residuals (a checkpointed body's recomputation),
    counted inside bodies whose inputs are the equation's (checkpoint, scan) too."""
    linear_vars = {v for v, lin in zip(jaxpr.invars, linear) if lin}
    total = Cost()
    for eqn in jaxpr.eqns:
        reads = [type(a) is Var and a in linear_vars for a in eqn.inputs]
        if not any(reads):
            total = total + eqn_cost(eqn)
            continue
        linear_vars.update(eqn.outputs)
        body = eqn.params.get("jaxpr")
        if isinstance(body, Jaxpr) and len(body.invars) == len(eqn.inputs):
            total = total + nonlinear_cost(body, reads).times(eqn.params.get("length", 1))
    return total


def _sub_jaxprs(eqn: JaxprEqn) -> list[Jaxpr]:
    found = []
    for value in eqn.params.values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, Jaxpr):
                found.append(item)
    return found


def _size(var) -> int:
    return math.prod(var.aval.shape)
