"""Recomputation for memory: a long loop under a byte budget (binomial checkpointing).

    python -m inert.benchmarks.remat [--steps 100000] [--snapshots 20] [--backward]

A `fori_loop` of `tanh(w @ h)` steps on a 16-element carry, checkpointed with a budget of
the weight, one step's residual and `snapshots + 1` carries: prints the bytes its vjp
function keeps (measured by `reachable_array_bytes`, in carries), against the plain vjp's,
and with `--backward` the backward pass's time, peak memory (tracemalloc) and revolve's
forward-step count for (steps, snapshots).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from .. import checkpoint, checkpoint_policies, lax, vjp
from .. import numpy as inp
from ..interpreters.remat import min_forward_steps
from .memory import peak_bytes, reachable_array_bytes

N = 16


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m inert.benchmarks.remat")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--snapshots", type=int, default=20)
    parser.add_argument("--backward", action="store_true")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    w, h0 = rng.standard_normal((N, N)) * 0.1, rng.standard_normal(N)
    carry = h0.nbytes

    def f(h0):
        return inp.sum(lax.fori_loop(0, args.steps, lambda i, h: inp.tanh(w @ h), h0) ** 2)

    budget = w.nbytes + (args.snapshots + 1) * carry
    budgeted = checkpoint(f, policy=checkpoint_policies.memory_budget(budget))
    for name, fun in (("plain", f), ("budgeted", budgeted)):
        start = time.perf_counter()
        _, vjp_fn = vjp(fun, h0)
        seconds = time.perf_counter() - start
        kept = reachable_array_bytes(vjp_fn)
        print(f"{name:9} vjp: {seconds:6.2f} s, keeps {kept:,} bytes = {kept / carry:,.1f} carries")
    if args.backward:
        start = time.perf_counter()
        peak = peak_bytes(lambda: vjp_fn(1.0))
        print(f"budgeted backward: {time.perf_counter() - start:.1f} s (under tracemalloc), "
              f"peak {peak:,} bytes (Python's objects included); revolve recomputes "
              f"{min_forward_steps(args.steps, args.snapshots):,} forward steps")


if __name__ == "__main__":
    main()
