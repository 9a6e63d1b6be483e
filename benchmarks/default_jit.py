"""The default jit as a training loop meets it, and jit's dispatch on a tiny input.

`default_jit_lines`: `jit(value_and_grad(f))` with the default backend ("auto") called
for about 5 s (times `--scale`) on W3, W5, W6 and W8, from a cold kernel cache (the
benchmark runs it in a process of its own, with a fresh `$INERT_CACHE_DIR`). Numpy's
code runs first; the policy compiles numba's in a background thread and switches when
it is ready. Two ratios a row: the steady state at the end of the run over the numba
backend's (interleaved medians, after the run; target ≤ 1.2x), and the slowest call
after the third over the run's median call (target ≤ 5x: no call waits for the compile),
beside the same ratio of the numba backend's calls alone, a second long: what the
machine's own noise (preemption, the collector) does to the slowest call.

`dispatch_line`: one call of `jit(grad(f))` on 3 elements on each backend, against
`jax.jit(jax.grad(f))` in the same run, where jax is installed.

`cold_compile_lines` (`--only cold-compile`): the first call of W4's
`jit(value_and_grad(f), backend="numba")`, each in a new process with a new kernel
cache folder (numba imported, its compiler set up and the program compiled: target
≤ 3 s), median of `COLD_RUNS`; and the first call of another new process on the folder
the first one filled (the kernels loaded from disk).
"""

from __future__ import annotations

import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import inert
import inert.numpy as inp

from .jax_column import jax_available, jax_port
from .targets import miss
from .workloads import active_argnums, workloads

WORKLOADS = ("W3", "W5", "W6", "W8")
SECONDS = 5.0  # of calls, at scale 1
STEADY_TARGET, SLOWEST_TARGET = 1.2, 5.0


def default_jit_lines(scale: float, repeat: int, median_times) -> list[str]:
    by_key = {w.key: w for w in workloads(scale)}
    return [_default_jit_line(by_key[key], SECONDS * max(scale, 0.2), repeat, median_times)
            for key in WORKLOADS]


def _default_jit_line(w, seconds: float, repeat: int, median_times) -> str:
    args = w.make_args()
    argnums = active_argnums(args)

    def jitted(backend: str):
        return inert.jit(inert.value_and_grad(w.f, argnums=argnums, has_aux=w.has_aux),
                         backend=backend)

    default = jitted("auto")
    times = _call_for(lambda: default(*args), seconds)
    numba, numpy = jitted("numba"), jitted("numpy")
    numba(*args)  # its (synchronous) compile, before the timing
    floor = _call_for(lambda: numba(*args), seconds / 5)  # what the machine's noise does
    t_default, t_numba, t_numpy = median_times(
        [lambda: default(*args), lambda: numba(*args), lambda: numpy(*args)], 3 * repeat)
    steady, slowest = t_default / t_numba, max(times[3:]) / float(np.median(times))
    return (f"default jit, {w.key}, {len(times)} calls in {sum(times):.1f} s: steady state "
            f"{steady:.2f}x the numba backend's{_miss(steady, STEADY_TARGET)}, slowest call "
            f"after the third {slowest:.1f}x the median{_miss(slowest, SLOWEST_TARGET, '.1f')}, "
            f"{max(times[3:]) / t_numpy:.1f}x the numpy backend's median call (numpy's "
            f"calls are {t_numpy / t_numba:.1f}x numba's; the numba backend's calls alone, "
            f"{len(floor)} in {sum(floor):.1f} s: {max(floor[3:]) / float(np.median(floor)):.1f}x)")


def _call_for(call, seconds: float) -> list[float]:
    """The time of each call of `call`, called until `seconds` have passed."""
    times, end = [], time.perf_counter() + seconds
    while not times or time.perf_counter() < end:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def _miss(value: float, target: float, fmt: str = ".2f") -> str:
    """The target stated after a figure printed with `fmt`, marked if it misses it."""
    return f" (target ≤ {target:g}x){miss(value, target, fmt)}"


def _sum_of_sines(x):
    return inp.sum(inp.sin(x) * x)


def dispatch_line(repeat: int, median_times) -> str:
    """Per-call time of `jit(grad(f))` on a 3-element input on each backend (numba's is
    the default's steady state, numpy's what it runs for its first second), and
    `jax.jit(jax.grad(f))`'s in the same run, where jax is installed."""
    x = np.array([0.1, 0.2, 0.3])
    calls = {backend: functools.partial(inert.jit(inert.grad(_sum_of_sines), backend=backend), x)
             for backend in ("numba", "numpy")}
    if jax_available():
        port = jax_port(_sum_of_sines)  # (configures jax first)
        import jax

        jitted, on_device = jax.jit(jax.grad(port)), jax.device_put(x)
        calls["jax"] = lambda: jax.block_until_ready(jitted(on_device))
    for call in calls.values():
        call()
    n = 1000
    times = dict(zip(calls, median_times([_repeated(c, n) for c in calls.values()], repeat)))
    us = {name: t / n * 1e6 for name, t in times.items()}
    text = ", ".join(f"{name} {t:.2f} µs" for name, t in us.items())
    if "jax" not in us:
        return f"jit(grad) dispatch, 3 elements, a call: {text} (JAX: n/a)"
    ratio = us["numba"] / us["jax"]
    return (f"jit(grad) dispatch, 3 elements, a call: {text}; numba's / JAX's {ratio:.2f}x"
            f"{_miss(ratio, 1.0)}, numpy's / JAX's {us['numpy'] / us['jax']:.2f}x")


def _repeated(call, n: int):
    def calls():
        for _ in range(n):
            call()
    return calls


COLD_RUNS = 3
COLD_TARGET = 3.0  # seconds, W4's first call on a cold kernel cache
_FIRST_CALL = """
import time
import inert
from inert.benchmarks.workloads import active_argnums, workloads
(w,) = [w for w in workloads(1.0) if w.key == {key!r}]
args = w.make_args()
f = inert.jit(inert.value_and_grad(w.f, argnums=active_argnums(args), has_aux=w.has_aux),
              backend="numba")
start = time.perf_counter()
f(*args)
print(time.perf_counter() - start)
"""


def first_call_seconds(key: str, cache_dir: str) -> float:
    """The first call of workload `key`'s jitted gradient on the numba backend, in a
    new process (one BLAS thread) whose kernel cache is `cache_dir`."""
    env = {**os.environ, "INERT_CACHE_DIR": cache_dir, "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL.format(key=key)], env=env,
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    return float(out.split()[-1])


def cold_compile_lines(runs: int = COLD_RUNS, key: str = "W4",
                       first_call=first_call_seconds) -> list[str]:
    """`key`'s first call from a new kernel cache folder and from the folder a first
    process filled, `runs` times each, alternately; the medians."""
    cold, warm = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            cold.append(first_call(key, folder))
            warm.append(first_call(key, folder))
    cold_median, warm_median = statistics.median(cold), statistics.median(warm)
    spread = ", ".join(f"{t:.2f}" for t in cold)
    return [f"{key}'s first call, jit numba, a new process on a cold kernel cache: "
            f"{cold_median:.2f} s, median of {runs} ({spread}; target ≤ {COLD_TARGET:g} s)"
            f"{miss(cold_median, COLD_TARGET)}",
            f"{key}'s first call, jit numba, a new process on the disk cache the first "
            f"filled: {warm_median:.2f} s, median of {runs}"]
