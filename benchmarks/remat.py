"""Memory below the minimum: workloads under `checkpoint_policies.memory_budget`, beside
JAX's `jax.checkpoint` on the scan body (`python -m inert.benchmarks --only remat`).

* **W4** (the tanh RNN scan, all active) and the **MLP** (W2-all) and **CNN** workloads,
  under budgets that are fractions of their analytic minimum. First the smallest budget
  any plan reaches (the planner's `MemoryBudgetError` names it): recomputation reads
  inputs the minimum does not (W4's xs, the MLP's first weight), which the caller holds
  anyway but `reachable_array_bytes` counts, so a fraction of the whole minimum can be
  below every plan. Then runs at that fraction of the minimum where it is feasible, else
  at that fraction of the way from the smallest budget to the minimum, else (W4, whose
  smallest budget is its minimum) at `inputs + fraction x the residuals the minimum
  allocates` (what is not an input held by reference): the bytes the vjp function holds
  against that budget, the gradient's peak (tracemalloc) against the unbudgeted one, the
  recomputation (print_saved_residuals'
  equations and flops; revolve's forward steps), the gradient's largest difference from
  the unbudgeted one relative to its largest entry, and the gradient time as a ratio to
  the unbudgeted (medians, interleaved).
* **A long ODE integration**: 10^5 steps (times `--scale`) of a chain of damped
  pendulums, a 1 KiB carry, with c = 20 snapshots: carries the vjp holds, and the forward
  steps its backward pass ran (a callback in the step counts them) against revolve's
  optimum for (T, c), that pass's peak and time.
* **memory_profile**'s peak against tracemalloc's peak of the gradient.

Each target of docs/benchmarks.md a line checks is marked `ok` where it is met and
`targets.MISS` (✗) where it is missed, the mark the other benchmarks' tables use.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from .. import (
    checkpoint,
    checkpoint_policies,
    debug,
    grad,
    lax,
    memory_profile,
    saved_residuals,
    value_and_grad,
    vjp,
)
from .. import numpy as inp
from ..core.errors import MemoryBudgetError
from ..core.ir import Jaxpr, sub_jaxprs
from ..interpreters.remat import min_forward_steps
from .jax_column import jax_checkpointed_bytes
from .memory import peak_bytes, reachable_array_bytes
from .targets import MISS
from .workloads import Workload, _unwrap, active_argnums, workloads

# ---------------------------------------------------------------------------------
# Measuring one budget


def budgeted(f: Callable, nbytes: int) -> Callable:
    return checkpoint(f, policy=checkpoint_policies.memory_budget(nbytes))


def smallest_budget(f: Callable, args) -> int:
    """The smallest budget any plan of `f` reaches, as the planner's error names it."""
    try:
        saved_residuals(budgeted(f, 0), *args)
    except MemoryBudgetError as e:
        return e.smallest
    return 0


def allocated_bytes(f: Callable, args) -> int:
    """The residuals of `f`'s vjp that are not inputs held by reference."""
    return sum(r.nbytes for r in saved_residuals(f, *args) if not r.origin.startswith("input"))


def inputs_bytes(args) -> int:
    return sum(np.asarray(a).nbytes for a in _unwrap(args))


def revolve_snapshots(jaxpr: Jaxpr) -> list[tuple[int, int]]:
    """(steps, snapshots) of each budgeted loop the backward pass reverses."""
    found, pending = [], [jaxpr]
    while pending:
        for eqn in pending.pop().eqns:
            if eqn.primitive.name == "revolve_scan":
                found.append((eqn.params["length"], eqn.params["snapshots"]))
            pending.extend(sub_jaxprs(eqn))
    return found


def compare(f: Callable, args, nbytes: int, median_times, repeat: int) -> dict:
    """`f` under a budget of `nbytes` against `f`: held bytes, backward peaks, the
    recomputation, the gradient's difference and the time ratio."""
    g = budgeted(f, nbytes)
    argnums = active_argnums(args)
    _, budget_fn = vjp(g, *args)
    plain_grad, budget_grad = value_and_grad(f, argnums), value_and_grad(g, argnums)
    want, got = plain_grad(*args)[1], budget_grad(*args)[1]
    scale = max(float(np.max(np.abs(w))) for w in want)
    t_plain, t_budget = median_times([lambda: plain_grad(*args), lambda: budget_grad(*args)],
                                     repeat)
    recomputed = saved_residuals(g, *args).recomputed
    return {
        "held": reachable_array_bytes(budget_fn), "budget": nbytes,
        "peak_plain": peak_bytes(lambda: plain_grad(*args)),
        "peak": peak_bytes(lambda: budget_grad(*args)),
        "eqns": recomputed.eqns, "flops": recomputed.flops,
        "revolve": revolve_snapshots(budget_fn.linear.jaxpr),
        "error": max(float(np.max(np.abs(a - b))) for a, b in zip(got, want)) / scale,
        "time": t_budget / t_plain,
    }


def _ok(passed: bool) -> str:
    """A checked target's mark: `ok` when met, else the tables' mark of a miss (`MISS`)."""
    return "ok" if passed else MISS


def format_run(name: str, fraction: float, r: dict, time_target: float | None,
               slack: int = 0) -> str:
    """One run's line; `slack` is what the held bytes may exceed the budget by (one
    step's residuals, for a loop)."""
    steps = "; ".join(f"revolve over {t:,} steps with c = {c}: {min_forward_steps(t, c):,} "
                      "forward steps recomputed" for t, c in r["revolve"])
    time = f"time {r['time']:.2f}x unbudgeted" + (
        f" (target ≤ {time_target:g}x: {_ok(r['time'] <= time_target)})" if time_target else "")
    return (f"{name}, {fraction:.0%} budget ({r['budget']:,} B): vjp holds {r['held']:,} B "
            f"({_ok(r['held'] <= r['budget'] + slack)}); gradient's peak {r['peak_plain']:,} -> "
            f"{r['peak']:,} B; recomputes {r['eqns']:,} equations, ~{r['flops']:,} flops"
            f"{'; ' + steps if steps else ''}; gradient differs by {r['error']:.1e} "
            f"({_ok(r['error'] <= 1e-12)}); {time}")


def budget_lines(name: str, w: Workload, fractions, median_times, repeat: int,
                 time_target: Callable[[float], float | None], slack: Callable = None
                 ) -> list[str]:
    """The smallest budget of workload `w`, then a run per fraction: of its minimum
    where that is feasible, else of the way from the smallest budget to the minimum,
    else (the smallest is the minimum) of what the minimum allocates, the inputs counted
    in full."""
    args = w.make_args()
    minimum, smallest = w.minimum_bytes(args), smallest_budget(w.f, args)
    inputs, allocated = inputs_bytes(args), allocated_bytes(w.f, args)
    lines = [f"{name}: minimum {minimum:,} B; smallest feasible budget {smallest:,} B = "
             f"{smallest / minimum:.2f}x the minimum: "
             + ", ".join(f"{f:.0%} of the minimum is "
                         + ("feasible" if f * minimum >= smallest else f"infeasible ({MISS})")
                         for f in fractions)
             + f"; the inputs are {inputs:,} B, the minimum allocates {allocated:,} B"]
    for fraction in fractions:
        nbytes = int(fraction * minimum)
        if nbytes < smallest < minimum:  # that fraction of the way from smallest to minimum
            nbytes = smallest + int(fraction * (minimum - smallest))
        elif nbytes < smallest:  # no plan keeps less than the minimum: what it allocates
            nbytes = inputs + int(fraction * allocated)
        r = compare(w.f, args, nbytes, median_times, repeat)
        lines.append(format_run(name, fraction, r, time_target(fraction),
                                slack(args) if slack else 0))
    return lines


# ---------------------------------------------------------------------------------
# A long integration: revolve's count at 10^5 steps

DT, DAMPING = 1e-3, 0.1


def pendulums(y0, v0, steps: int, count: Callable | None = None):
    """Semi-implicit Euler steps of damped pendulums coupled to their neighbours; `count`
    is called back at every step run."""
    def step(carry, _):
        y, v = carry
        if count is not None:
            debug.callback(count)
        coupling = inp.roll(y, 1) + inp.roll(y, -1) - 2.0 * y
        v = v + DT * (-inp.sin(y) + coupling - DAMPING * v)
        return (y + DT * v, v), None

    (y, v), _ = lax.scan(step, (y0, v0), length=steps)
    return inp.sum(y ** 2) + inp.sum(v ** 2)


def budget_for_snapshots(f: Callable, args, carry: int, snapshots: int) -> int:
    """The least budget, in quarter carries from `snapshots` carries, that gives the loop of
    `f` that many snapshots (the planner reserves one step's residuals first)."""
    nbytes = snapshots * carry
    while revolve_snapshots(vjp(budgeted(f, nbytes), *args)[1].linear.jaxpr)[0][1] < snapshots:
        nbytes += carry // 4
    return nbytes


def long_scan_lines(scale: float, snapshots: int = 20) -> list[str]:
    steps, n = max(50, int(10 ** 5 * scale)), 64
    rng = np.random.default_rng(3)
    args = rng.standard_normal(n), np.zeros(n)
    carry = sum(a.nbytes for a in args)
    nbytes = budget_for_snapshots(lambda y, v: pendulums(y, v, 200), args, carry, snapshots)
    r = budgeted_backward(steps, args, nbytes)
    _, plain_fn = vjp(lambda y, v: pendulums(y, v, steps), *args)
    start = time.perf_counter()
    want = plain_fn(1.0)
    seconds = time.perf_counter() - start
    plain_peak = peak_bytes(lambda: plain_fn(1.0))
    error = max(float(np.max(np.abs(a - b))) for a, b in zip(r["got"], want))
    jax_bytes = jax_checkpointed_bytes(pendulums, args, steps)
    optimum = min_forward_steps(steps, snapshots)
    return [
        f"{steps:,}-step pendulum integration, {carry:,} B carry, budget {nbytes:,} B "
        f"(c = {snapshots}): vjp holds {r['held'] / carry:.1f} carries (target ≤ 22: "
        f"{_ok(r['held'] <= 22 * carry)}), plain {reachable_array_bytes(plain_fn) / carry:,.1f}"
        ", JAX's checkpointed body "
        + (f"{jax_bytes / carry:,.1f}" if jax_bytes is not None else "n/a (no jax)")
        + f"; the backward pass peaks at {r['peak'] / carry:,.1f} carries above them "
        f"(snapshots, one step's residuals, the cotangents; plain {plain_peak / carry:,.1f}), "
        f"takes {r['seconds']:.1f} s (plain {seconds:.1f} s) and ran {r['recomputed']:,} "
        f"forward steps besides the {steps:,} reversed, revolve's t(T, c) = {optimum:,} "
        f"({_ok(r['recomputed'] == optimum)}); gradient differs by {error:.1e}"]


def budgeted_backward(steps: int, args, nbytes: int) -> dict:
    """The budgeted vjp of the integration, each step counted as it runs: the bytes it
    holds, its backward pass's result and time, the forward steps that pass ran besides
    one per reversed step, and its peak (tracemalloc, a second run)."""
    runs = [0]

    def count():
        runs[0] += 1

    _, fn = vjp(budgeted(lambda y, v: pendulums(y, v, steps, count), nbytes), *args)
    runs[0] = 0
    start = time.perf_counter()
    got = fn(1.0)
    seconds = time.perf_counter() - start
    recomputed = runs[0] - steps
    return {"held": reachable_array_bytes(fn), "got": got, "seconds": seconds,
            "recomputed": recomputed, "peak": peak_bytes(lambda: fn(1.0))}


# ---------------------------------------------------------------------------------
# memory_profile against tracemalloc


def profile_line(name: str, w: Workload) -> str:
    args = w.make_args()
    argnums = active_argnums(args)
    gradient = grad(w.f, argnums=argnums)
    gradient(*args)
    measured = peak_bytes(lambda: gradient(*args))
    profiled = memory_profile(w.f, *args).peak.peak_bytes
    ratio = profiled / measured
    return (f"memory_profile of {name}: peak {profiled:,} B, tracemalloc's peak of its "
            f"gradient {measured:,} B: {ratio:.3f} (target within 10%: "
            f"{_ok(abs(ratio - 1) <= 0.1)})")


# ---------------------------------------------------------------------------------


def remat_lines(median_times, repeat: int, scale: float) -> list[str]:
    """Every line of this benchmark (`median_times(functions, repeat)` as run.py's)."""
    by_key = {w.key: w for w in workloads(scale)}
    w4 = by_key["W4"]
    args = w4.make_args()
    jax_bytes = jax_checkpointed_bytes(w4.f, args)
    lines = budget_lines("W4", w4, (0.25,), median_times, repeat, lambda f: 2.0,
                         slack=lambda a: 2 * np.asarray(a[1]).nbytes)
    lines.append("W4, JAX's checkpoint on the scan body keeps "
                 + (f"{jax_bytes:,} B" if jax_bytes is not None else "n/a (no jax)")
                 + f"; inert's unbudgeted vjp {reachable_array_bytes(vjp(w4.f, *args)[1]):,} B")
    for name, key in (("MLP (W2-all)", "W2-all"), ("CNN", "CNN")):
        lines += budget_lines(name, by_key[key], (0.5, 0.25), median_times, repeat,
                              lambda f: 1.5 if f == 0.5 else None)
    lines += long_scan_lines(scale)
    lines += [profile_line("W4", w4), profile_line("MLP (W2-all)", by_key["W2-all"])]
    return lines
