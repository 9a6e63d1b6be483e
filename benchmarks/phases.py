"""Where reverse mode's time goes: `python -m inert.benchmarks --only phases`.

For W1 and W7, CPU time per call (process time, medians) of each phase of
`inert.grad` and `inert.value_and_grad`, on both of their paths:

* the first call's (the plain path): tracing + jvp, partial evaluation, the forward
  pass, the backward pass — the functions `linearize_flat` itself calls in turn
  (`trace_jvp`, `split_known`, `run_forward`, then the linear function's
  `transpose`);
* a later call's (the replayed path, `interpreters/replay.py`): running the user's
  function under the trace that checks it against the recording, then the compiled
  gradient.

The phases are called here one at a time on the flattened arguments, so the library
carries no timing hooks. "rest" is the whole call's time (timed separately,
interleaved) minus the phases: flattening, checks, output wrapping.
"""

from __future__ import annotations

import functools
import time

import numpy as np

import inert
from inert.api.arguments import flat_fun, flatten_args
from inert.api.gradients import gradient_apply
from inert.core.staging import cyclic_gc_paused
from inert.interpreters.linearize import run_forward, split_known, trace_jvp
from inert.interpreters.replay import record, transform_program

from .workloads import active_argnums, workloads

PHASES = ("trace+jvp", "partial eval", "forward", "transpose")
REPLAY_PHASES = ("replay", "compiled gradient")


def phase_times(w, value: bool) -> dict[str, float]:
    """One plain gradient call of workload `w`, phase by phase: CPU seconds of each."""
    flat, fun, out_store = _flat(w)
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


def replay_times(w, value: bool) -> dict[str, float]:
    """One replayed gradient call of `w` (recorded and compiled first, untimed)."""
    flat, fun, out_store = _flat(w)
    recording, *_ = record(fun, flat.leaves, flat.active, out_store, None)
    program = transform_program(recording, gradient_apply(flat, value), flat.leaves, [],
                                out_store)
    clock = time.process_time
    with cyclic_gc_paused():
        t0 = clock()
        _, matched, consts, _ = record(fun, flat.leaves, flat.active, out_store, recording)
        t1 = clock()
        program(consts, flat.leaves, [])
        t2 = clock()
    assert matched, "the workload did not repeat its recording"
    return dict(zip(REPLAY_PHASES, (t1 - t0, t2 - t1)))


def _flat(w):
    flat = flatten_args(w.make_args())
    out_store: list = []
    return flat, flat_fun(w.f, flat, out_store, w.has_aux), out_store


def total_time(w, value: bool, replayed: bool) -> float:
    """One call's CPU time; `functools.partial` (no code object) is never replayed."""
    args = w.make_args()
    argnums = active_argnums(args)
    transform = inert.value_and_grad if value else inert.grad
    g = transform(w.f if replayed else functools.partial(w.f), argnums=argnums,
                  has_aux=w.has_aux)
    start = time.process_time()
    g(*args)
    return time.process_time() - start


def phase_lines(repeat: int, scale: float) -> list[str]:
    lines = []
    for w in workloads(scale):
        if w.key not in ("W1", "W7"):
            continue
        for value in (False, True):
            name = "value_and_grad" if value else "grad"
            for path, phases, timed in [("first call", PHASES, phase_times),
                                        ("replayed", REPLAY_PHASES, replay_times)]:
                replayed = timed is replay_times
                for _ in range(3):  # warm-up: caches, the allocator, the recording
                    timed(w, value), total_time(w, value, replayed)
                runs = [(timed(w, value), total_time(w, value, replayed))
                        for _ in range(repeat)]
                medians = {k: float(np.median([r[k] for r, _ in runs])) for k in phases}
                total = float(np.median([t for _, t in runs]))
                medians["rest"] = max(0.0, total - sum(medians.values()))
                lines.append(f"{w.key} {name}, {path}: total {total * 1e3:.2f} ms CPU; " +
                             ", ".join(f"{k} {v * 1e3:.2f}" for k, v in medians.items()))
    return lines
