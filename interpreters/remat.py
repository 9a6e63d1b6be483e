"""Recomputation: what it costs, and the residual policies of checkpointed bodies.

Cost: equations and an estimate of floating-point operations.

`checkpoint` trades memory for recomputation, so `print_saved_residuals` reports what
the backward pass computes again, and a memory budget plans by it. An equation costs
one flop per output element unless its primitive registers a better estimate in
`flop_rules` (`dot_general`: two per multiply-add); an equation with sub-programs
costs theirs, times a scan's length (a `cond` its dearest branch, a `while` one trip:
its count is not known).

Revolve: reversing a loop by binomial checkpointing (the last section).

Rule signature::

    flop_rules[prim](eqn) -> int
"""

from __future__ import annotations

import itertools
import math
from math import comb
from typing import Callable, Iterator

import attrs
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from ..core.errors import MemoryBudgetError
from ..core.ir import Jaxpr, JaxprEqn, Var, sub_jaxprs
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
    bodies = list(sub_jaxprs(eqn))
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
            total = total + nonlinear_cost(body, reads).times(_body_runs(eqn))
    return total


def _body_runs(eqn: JaxprEqn) -> int:
    """How often the backward pass runs an equation's body: a scan's length; a loop
    reversed by revolve (`snapshots`) each step once for its residuals, and revolve's
    count of forward steps besides."""
    length, snapshots = eqn.params.get("length", 1), eqn.params.get("snapshots")
    return length if snapshots is None else length + min_forward_steps(length, snapshots)


def _size(var) -> int:
    return math.prod(var.aval.shape)


# ---------------------------------------------------------------------------------
# Residual policies: what a checkpointed body saves, and what it recomputes


class ResidualPolicy:
    """Chooses, inside a checkpointed body, the residuals and the known equations the
    backward pass runs again (`choose(candidates, defining, unchecked) -> (residuals,
    eqns)`: `candidates` are the known values the tangent program reads, `defining` maps
    each known variable to its equation, a variable without one being an input;
    `unchecked()` is the plan partial evaluation makes outside a checkpoint)."""

    def choose(self, candidates: list[Var], defining: dict, unchecked: Callable
               ) -> tuple[list[Var], list]:
        raise NotImplementedError


@attrs.frozen
class EquationPolicy(ResidualPolicy):
    """JAX's policies: `saveable(eqn)` says whether an equation's outputs may be saved."""

    saveable: Callable[[JaxprEqn], bool]

    def choose(self, candidates, defining, unchecked):
        return walk_back(candidates, defining, lambda v: self.saveable(defining[v]))


def walk_back(candidates: list[Var], defining: dict, keep: Callable[[Var], bool]
              ) -> tuple[list[Var], list]:
    """Save each candidate `keep` accepts (and every input reached); recompute the
    others, walking back through their equations to kept values and inputs."""
    saved: dict[Var, None] = {}
    recomputed: dict[Var, JaxprEqn] = {}
    pending = list(reversed(candidates))
    while pending:
        var = pending.pop()
        if var in saved or var in recomputed:
            continue
        eqn = defining.get(var)
        if eqn is None or keep(var):
            saved[var] = None
        else:
            recomputed.update((v, eqn) for v in eqn.outputs)
            pending.extend(a for a in reversed(eqn.inputs) if type(a) is Var)
    return list(saved), list(dict.fromkeys(recomputed.values()))


@attrs.frozen
class MemoryBudget(ResidualPolicy):
    """Keep at most `nbytes` of residuals, recomputing what costs least to recompute.

    The smallest feasible plan is a minimum vertex cut between the inputs and the values
    the tangent program reads, each value weighing its bytes (a max-flow, exact). If the
    plan of an unchecked function fits (the analytic minimum, cheap values recomputed),
    it is the plan: a budget never keeps more than no checkpoint would. Otherwise the
    plan grows from the cut, greedily adding the value that saves the most recomputed
    flops per byte while the budget holds (exact planning under a budget is a knapsack
    over cuts)."""

    nbytes: int

    def choose(self, candidates, defining, unchecked):
        plain = unchecked()
        if _nbytes(plain[0]) <= self.nbytes:
            return plain
        keep = min_cut(candidates, defining)
        plan = walk_back(candidates, defining, keep.__contains__)
        if _nbytes(plan[0]) > self.nbytes:
            smallest = _nbytes(plan[0])
            raise MemoryBudgetError(
                f"checkpoint: a memory budget of {self.nbytes:,} bytes is below what any "
                f"plan keeps; the smallest feasible budget is {smallest:,} bytes", smallest)
        return self._grow(candidates, defining, set(keep), plan)

    def _grow(self, candidates, defining, keep: set, plan):
        while True:
            cost, size = eqns_cost(plan[1]).flops, _nbytes(plan[0])
            best, best_score = None, 0.0
            for var in dict.fromkeys(v for e in plan[1] for v in e.outputs):  # stable ties
                trial = walk_back(candidates, defining, (keep | {var}).__contains__)
                extra = _nbytes(trial[0]) - size
                saved_flops = cost - eqns_cost(trial[1]).flops
                if _nbytes(trial[0]) <= self.nbytes and saved_flops > 0:
                    score = saved_flops / max(extra, 1)
                    if score > best_score:
                        best, best_score = (var, trial), score
            if best is None:
                return plan
            keep.add(best[0])
            plan = best[1]


def _nbytes(values) -> int:
    return sum(v.aval.nbytes for v in values)


def min_cut(candidates: list[Var], defining: dict) -> set[Var]:
    """The values of fewest bytes whose saving lets every candidate be recomputed: a
    minimum cut of the graph in which each value is an edge `in -> out` weighing its
    bytes, inputs hang from the source, candidates lead to the sink and an equation
    joins its operands' `out` to its results' `in`. scipy's max-flow takes int32
    capacities, so large programs weigh bytes in coarser units."""
    region = _region(candidates, defining)
    index = {v: i for i, v in enumerate(region)}
    n = len(region)
    source, sink = 2 * n, 2 * n + 1
    unit = max(1, -(-_nbytes(region) // 2 ** 24))
    infinite = _nbytes(region) // unit + 1
    edges = {(2 * i, 2 * i + 1): max(1, v.aval.nbytes // unit) for i, v in enumerate(region)}
    for v in region:
        eqn = defining.get(v)
        if eqn is None:
            edges[source, 2 * index[v]] = infinite
        else:
            for a in eqn.inputs:
                if type(a) is Var:
                    edges[2 * index[a] + 1, 2 * index[v]] = infinite
    for c in candidates:
        edges[2 * index[c] + 1, sink] = infinite
    rows, cols = zip(*edges)
    capacity = csr_matrix((np.array(list(edges.values()), np.int32), (rows, cols)),
                          shape=(2 * n + 2, 2 * n + 2))
    flow = maximum_flow(capacity, source, sink).flow
    residual = (capacity - flow).tocsr()
    residual.data[residual.data < 0] = 0
    residual.eliminate_zeros()
    reached = set(breadth_first_order(residual, source, return_predecessors=False).tolist())
    return {v for i, v in enumerate(region) if 2 * i in reached and 2 * i + 1 not in reached}


def _region(candidates: list[Var], defining: dict) -> list[Var]:
    """The known values the candidates are computed from, the candidates included."""
    found: dict[Var, None] = {}
    pending = list(candidates)
    while pending:
        var = pending.pop()
        if var in found:
            continue
        found[var] = None
        eqn = defining.get(var)
        if eqn is not None:
            pending.extend(a for a in eqn.inputs if type(a) is Var)
    return list(found)


# ---------------------------------------------------------------------------------
# Binomial checkpointing (revolve, Griewank and Walther): reversing a loop of `T` steps
# with `c` carry snapshots, recomputing as few forward steps as possible.
#
# A *snapshot* holds one carry (the first holds the loop's initial carry); reversing a
# step needs its input carry, which is advanced to from the nearest snapshot. With `c`
# snapshots the fewest forward steps are (Griewank 1992; Griewank and Walther,
# *Evaluating Derivatives*, ch. 12)
#
#     t(T, c) = r*T - beta(c + 1, r - 1),   beta(c, r) = C(c + r, c),
#
# where `r` is the least number of times a step is repeated that `beta(c, r) >= T`. The
# optimal schedule splits the `T` steps at `m`: advance `m` steps from the first snapshot,
# store the carry there, reverse the last `T - m` steps with `c - 1` snapshots, then the
# first `m` with `c`; `optimal_split` finds an `m` reaching `t` from the closed form, so the
# schedule is built without the O(T^2 c) dynamic programme (which the tests check it
# against for small `T` and `c`).
#
# `schedule(T, c)` lists the actions: `("advance", i, j)` steps the carry from step `i` to
# step `j`, `("store", i)` keeps it in a snapshot, `("reverse", i)` takes step `i` with its
# derivative and runs its backward, `("drop", i)` frees a snapshot.


def beta(c: int, r: int) -> int:
    return comb(c + r, c)


def repetitions(steps: int, snapshots: int) -> int:
    """The least `r` with `beta(snapshots, r) >= steps`."""
    r = 0
    while beta(snapshots, r) < steps:
        r += 1
    return r


def min_forward_steps(steps: int, snapshots: int) -> int:
    """Forward steps (besides the one taped per reversed step) an optimal reversal of
    `steps` steps with `snapshots` snapshots recomputes."""
    if steps <= 1:
        return 0
    r = repetitions(steps, snapshots)
    return r * steps - beta(snapshots + 1, r - 1)


def optimal_split(steps: int, snapshots: int) -> int:
    """A first part `m` of an optimal split, `1 <= m < steps` (`snapshots >= 2`)."""
    best = min_forward_steps(steps, snapshots)
    r = repetitions(steps, snapshots)
    guess = steps - min(beta(snapshots - 1, r - 1) + 1, steps - 1)
    for m in itertools.chain((guess,), range(1, steps)):
        if 1 <= m < steps and m + min_forward_steps(steps - m, snapshots - 1) + \
                min_forward_steps(m, snapshots) == best:
            return m
    raise AssertionError("no split reaches the optimum")


def schedule(steps: int, snapshots: int) -> Iterator[tuple]:
    """The actions reversing `steps` steps, the initial carry in snapshot 0, generated
    as they are played (a list of them would outweigh a small carry's snapshots)."""
    if snapshots < 1:
        raise ValueError("revolve needs at least one snapshot (the initial carry)")
    yield ("store", 0)
    yield from _reverse(0, steps, snapshots)
    yield ("drop", 0)


def _reverse(start: int, steps: int, snapshots: int) -> Iterator[tuple]:
    """Reverse steps `start .. start+steps-1`, the carry at `start` in a snapshot."""
    while steps > 0:
        if steps == 1:
            yield ("reverse", start)
            return
        if snapshots == 1:
            yield ("advance", start, start + steps - 1)
            yield ("reverse", start + steps - 1)
            steps -= 1
            continue
        m = optimal_split(steps, snapshots)
        yield ("advance", start, start + m)
        yield ("store", start + m)
        yield from _reverse(start + m, steps - m, snapshots - 1)
        yield ("drop", start + m)
        steps = m
