"""Where reverse mode's time goes: `python -m inert.benchmarks --only phases`.

For W1 and W7, CPU time per call (process time, medians) of each phase of
`inert.grad` and `inert.value_and_grad`: tracing + jvp, partial evaluation, the
forward pass, the backward pass. The phases are the functions `linearize_flat` itself
calls in turn (`trace_jvp`, `split_known`, `run_forward`, then the linear function's
`transpose`), called here one at a time on the flattened arguments, so the library
carries no timing hooks. "rest" is the whole transformation's time (timed
separately, interleaved) minus the phases: flattening, checks, output wrapping.
"""

from __future__ import annotations

import time

import numpy as np

import inert
from inert.api.transforms import flat_fun, flatten_args
from inert.core.staging import cyclic_gc_paused
from inert.interpreters.linearize import run_forward, split_known, trace_jvp

from .workloads import workloads

PHASES = ("trace+jvp", "partial eval", "forward", "transpose")


def phase_times(w, value: bool) -> dict[str, float]:
    """One gradient call of workload `w`, phase by phase: CPU seconds of each."""
    args = w.make_args()
    flat = flatten_args(args)
    out_store: list = []
    fun = flat_fun(w.f, flat, out_store, w.has_aux)
    clock = time.process_time
    with cyclic_gc_paused():
        t0 = clock()
        traced = trace_jvp(fun, flat.leaves, flat.active, lambda: out_store[2], "grad")
        t1 = clock()
        split = split_known(traced)
        t2 = clock()
        _, linear = run_forward(traced, split, value)
        t3 = clock()
        linear.transpose([np.float64(1.0)])
        t4 = clock()
    return dict(zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)))


def total_time(w, value: bool) -> float:
    args = w.make_args()
    argnums = tuple(i for i, a in enumerate(args) if not isinstance(a, inert.Inactive))
    transform = inert.value_and_grad if value else inert.grad
    g = transform(w.f, argnums=argnums, has_aux=w.has_aux)
    start = time.process_time()
    g(*args)
    return time.process_time() - start


def phase_lines(repeat: int, scale: float) -> list[str]:
    lines = []
    for w in workloads(scale):
        if w.key not in ("W1", "W7"):
            continue
        for value in (False, True):
            for _ in range(2):  # warm-up: caches, the allocator
                phase_times(w, value), total_time(w, value)
            runs = [(phase_times(w, value), total_time(w, value)) for _ in range(repeat)]
            medians = {k: float(np.median([r[k] for r, _ in runs])) for k in PHASES}
            total = float(np.median([t for _, t in runs]))
            medians["rest"] = max(0.0, total - sum(medians.values()))
            name = "value_and_grad" if value else "grad"
            lines.append(f"{w.key} {name}: total {total * 1e3:.2f} ms CPU; " + ", ".join(
                f"{k} {v * 1e3:.2f}" for k, v in medians.items()))
    return lines
