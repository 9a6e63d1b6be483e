"""inert's benchmark: `python -m inert.benchmarks [--scale S] [--repeat N]`.

Reports, for each workload of docs/benchmarks.md, the residual bytes the vjp
function holds as a ratio to the analytic minimum, the peak memory of one gradient
call and the gradient time as ratios to a hand-written numpy gradient measured in
the same run (medians), then the interpreter's own overheads:
eval vs direct numpy, tracing cost per equation from 1k to 100k equations, jvp vs
primal time, how many tangent equations inactive inputs cost, jit's dispatch on a tiny
input against JAX's, a jit-ted Adam step against numpy's, and the iLQR/MPC loop program
under jit against JAX's; then reverse mode by phase, the transformations called
repeatedly (`replays.py`), the default jit's calls over 5 s from a cold kernel cache and
W4's first numba call in new processes (`default_jit.py`). One thread: the BLAS thread
variables are set before numpy loads.
"""

from __future__ import annotations

import os

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_ONE_THREAD_FROM_THE_START = all(os.environ.get(v) == "1" for v in _THREAD_VARIABLES)
for _var in _THREAD_VARIABLES:
    os.environ[_var] = "1"

import argparse  # noqa: E402
import ctypes  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import inert  # noqa: E402
import inert.numpy as inp  # noqa: E402
from inert import lax  # noqa: E402
from inert.example_libraries import optimizers  # noqa: E402

from .cnn import conv_layer_timing  # noqa: E402
from .default_jit import cold_compile_lines, default_jit_lines, dispatch_line  # noqa: E402
from .ilqr import ilqr_line  # noqa: E402
from .jax_column import jax_call, jax_first_call  # noqa: E402
from .memory import peak_bytes, reachable_array_bytes  # noqa: E402
from .phases import phase_lines  # noqa: E402
from .progress import Progress  # noqa: E402
from .remat import remat_lines  # noqa: E402
from .replays import replay_lines  # noqa: E402
from .targets import TARGETS, against, legend, mark, miss  # noqa: E402
from .workloads import (  # noqa: E402
    Workload,
    _unwrap,
    active_argnums,
    rosenbrock,
    rosenbrock_hvp,
    workloads,
)


def median_time(f, repeat: int) -> float:
    return median_times([f], repeat)[0]


_WARMUP = 5  # the allocator settles on reusing memory only after a few calls


def median_times(fs: list, repeat: int) -> list[float]:
    """Median seconds of each function, their runs interleaved: on a shared machine
    whose speed drifts, both sides of a ratio then see the same conditions."""
    for _ in range(_WARMUP):
        for f in fs:
            f()
    times: list[list[float]] = [[] for _ in fs]
    for _ in range(repeat):
        for f, t in zip(fs, times):
            start = time.perf_counter()
            f()
            t.append(time.perf_counter() - start)
    return [float(np.median(t)) for t in times]


def residual_bytes(w: Workload, args) -> int:
    """The array bytes the vjp function the user gets really holds (which the tests
    check equal what saved_residuals reports)."""
    _, vjp_fn = inert.vjp(w.f, *args, has_aux=w.has_aux)[:2]
    return reachable_array_bytes(vjp_fn)


def peak_ratio(value_and_grad, args, numpy_grad, plain) -> float:
    """Peak traced allocation of one gradient call over the hand-written numpy
    gradient's, after a call of each (tracing caches, allocator warm-up)."""
    value_and_grad(*args)
    numpy_grad(*plain)
    return peak_bytes(lambda: value_and_grad(*args)) / peak_bytes(lambda: numpy_grad(*plain))


def gradient_row(w: Workload, repeat: int) -> dict:
    args = w.make_args()
    kept, minimum = residual_bytes(w, args), w.minimum_bytes(args)
    argnums = active_argnums(args)
    value_and_grad = inert.value_and_grad(w.f, argnums=argnums, has_aux=w.has_aux)
    plain = _unwrap(args)
    t_inert, t_numpy = median_times([lambda: value_and_grad(*args),
                                     lambda: w.numpy_grad(*plain)], repeat)
    row = {"key": w.key, "what": w.description, "kept": kept, "minimum": minimum,
           "ratio": kept / minimum if minimum else (1.0 if kept == 0 else float("inf")),
           "peak": peak_ratio(value_and_grad, args, w.numpy_grad, plain),
           "time": t_inert / t_numpy, "t_inert": t_inert}
    row.update(jit_columns(w, args, repeat))
    if w.key == "W7":
        row["us_per_op"] = t_inert / 2000 * 1e6
    if w.key == "W6":
        g = inert.grad(w.f)(*args)
        row["nan_free"] = bool(np.all(np.isfinite(g)))
    torch_grad = w.torch_grad(plain) if w.torch_grad else None
    if torch_grad is not None:
        t_inert, t_torch = median_times([lambda: value_and_grad(*args), torch_grad], repeat)
        row["time_torch"] = t_inert / t_torch
    if w.key == "W8":
        x = plain[0]
        v = np.ones_like(x)
        t_hvp, t_grad = median_times([lambda: rosenbrock_hvp(x, v),
                                      lambda: inert.grad(rosenbrock)(x)], repeat)
        row["hvp_over_grad"] = t_hvp / t_grad
    return row


def jit_columns(w: Workload, args, repeat: int) -> dict:
    """`jit(value_and_grad(f))` on each backend, and JAX's where installed: time against
    the hand-written numpy gradient, all four interleaved in one set of medians (the
    backends' differences are often smaller than the machine's drift), and the first
    call (tracing and compiling) in seconds."""
    argnums, plain = active_argnums(args), _unwrap(args)
    calls, columns = {}, {}
    for backend in ("numpy", "numba"):
        jitted = inert.jit(inert.value_and_grad(w.f, argnums=argnums, has_aux=w.has_aux),
                           backend=backend)
        start = time.perf_counter()
        jitted(*args)
        columns[f"first_{backend}"] = time.perf_counter() - start
        calls[backend] = lambda f=jitted: f(*args)
    jax = jax_call(w.key, w.f, plain, argnums, w.has_aux)
    if jax is not None:
        calls["jax"], columns["first_jax"] = jax
    *times, t_numpy = median_times([*calls.values(), lambda: w.numpy_grad(*plain)], repeat)
    columns.update((f"jit_{name}", t / t_numpy) for name, t in zip(calls, times))
    return columns


def format_gradient_rows(rows: list[dict]) -> str:
    lines = ["| key | workload | residual bytes | minimum | ratio | peak memory / numpy | "
             "grad time / numpy | jit numpy / numpy | jit numba / numpy | JAX jit / numpy | "
             "first call numpy / numba / JAX | notes |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        notes = []
        if "us_per_op" in r:
            numba_us = r["us_per_op"] * r["jit_numba"] / r["time"]
            numba_target = TARGETS["jit_numba_us_per_op"].get(r["key"])
            notes.append(f"{mark(r, 'us_per_op', '.1f')} µs per op; jit: "
                         f"{r['us_per_op'] * r['jit_numpy'] / r['time']:.3f} (numpy), "
                         f"{against(numba_us, numba_target, '.3f')} (numba)")
        if "nan_free" in r:
            notes.append("gradient finite at x=0" if r["nan_free"] else "NaN at x=0")
        if "time_torch" in r:
            notes.append(f"grad time / PyTorch {r['time_torch']:.2f}")
            if "us_per_op" in r:
                notes.append(f"PyTorch {r['us_per_op'] / r['time_torch']:.1f} µs per op")
        if "hvp_over_grad" in r:
            notes.append(f"hvp / grad time {r['hvp_over_grad']:.2f}")
        lines.append(f"| {r['key']} | {r['what']} | {r['kept']:,} | {r['minimum']:,} | "
                     f"{mark(r, 'ratio')} | {mark(r, 'peak')} | {mark(r, 'time')} | "
                     f"{r['jit_numpy']:.2f} | {mark(r, 'jit_numba')} | {_or_na(r, 'jit_jax')} | "
                     f"{r['first_numpy']:.2f} / {r['first_numba']:.2f} / "
                     f"{_or_na(r, 'first_jax', ' s')} | "
                     f"{'; '.join(notes)} |")
    return "\n".join(lines)


def _or_na(row: dict, key: str, unit: str = "") -> str:
    """A JAX figure, or n/a where jax is absent or the workload has no JAX port."""
    return f"{row[key]:.2f}{unit}" if key in row else "n/a"


# ---------------------------------------------------------------------------------
# The interpreter's own overheads


def _scalar_chain(x, n):
    for i in range(n):
        x = inp.sin(x) if i % 3 == 0 else (x * 0.999 if i % 3 == 1 else x + 0.001)
    return x


def _numpy_scalar_chain(x, n):
    for i in range(n):
        x = np.sin(x) if i % 3 == 0 else (np.multiply(x, 0.999) if i % 3 == 1 else
                                          np.add(x, 0.001))
    return x


def _array_program(x):
    return inp.sum(inp.tanh(x) * inp.sin(x) + x * x)


def _numpy_array_program(x):
    return np.sum(np.tanh(x) * np.sin(x) + x * x)


def overhead_lines(repeat: int, scale: float) -> list[str]:
    x = np.float64(0.3)
    closed = inert.make_jaxpr(lambda x: _scalar_chain(x, 1000))(x)
    t_eval, t_np = median_times([lambda: inert.eval_jaxpr(closed.jaxpr, closed.consts, [x]),
                                 lambda: _numpy_scalar_chain(x, 1000)], repeat)
    big = np.random.default_rng(1).standard_normal(max(10, int(10**6 * scale)))
    closed_big = inert.make_jaxpr(_array_program)(big)
    t_eval_big, t_np_big, t_jvp = median_times(
        [lambda: inert.eval_jaxpr(closed_big.jaxpr, closed_big.consts, [big]),
         lambda: _numpy_array_program(big),
         lambda: inert.jvp(_array_program, (big,), (big,))], repeat)
    lines = [
        f"eval_jaxpr, 1000-equation scalar chain: {t_eval / t_np:.2f}x direct numpy "
        f"({t_eval / 1000 * 1e6:.2f} µs per equation; target ≤ 3x){miss(t_eval / t_np, 3)}",
        f"eval_jaxpr, arrays of {big.size:,}: {t_eval_big / t_np_big:.3f}x direct numpy "
        f"(target ≤ 1.05x){miss(t_eval_big / t_np_big, 1.05, '.3f')}",
        f"jvp, arrays of {big.size:,}: {t_jvp / t_np_big:.2f}x the primal (target ≤ 3x)"
        f"{miss(t_jvp / t_np_big, 3)}",
    ]
    for n in (1_000, 10_000, 100_000):
        r = max(1, repeat // (n // 1000))
        t_trace = median_time(lambda n=n: inert.make_jaxpr(lambda x: _scalar_chain(x, n))(x), r)
        lines.append(f"make_jaxpr of {n:,} equations: {t_trace / n * 1e6:.2f} µs per equation")
    lines += _jit_compile_lines()
    lines.append(dispatch_line(repeat, median_times))
    lines.append(_inactive_tangent_count())
    conv_line = conv_layer_timing(median_times, repeat)
    if conv_line:
        lines.append(conv_line)
    lines += _long_scan_lines()
    lines.append(_adam_step_line(repeat, scale))
    lines.append(ilqr_line(median_times, repeat))
    return lines


def _jit_compile_lines() -> list[str]:
    """First-call time of `jit(grad)` of a 10,000-op scalar chain on each backend, and
    what a second process pays once numba's on-disk cache holds the kernels."""
    lines = []
    for backend in ("numpy", "numba"):
        g = inert.jit(inert.grad(lambda x: _scalar_chain(x, 10_000)), backend=backend)
        start = time.perf_counter()
        g(0.3)
        lines.append(f"jit(grad) of a 10,000-op chain, first call, {backend} backend: "
                     f"{time.perf_counter() - start:.2f} s")
    seconds = jax_first_call(_scalar_chain, 0.3, 10_000)
    lines.append("jax.jit(jax.grad) of the same chain, first call (XLA): " + (
        f"{seconds:.2f} s" if seconds is not None else "n/a (jax is not installed)"))
    return lines


def _long_scan_lines() -> list[str]:
    """A scan's residual memory and gradient time grow linearly with its length."""
    def loss(x, steps):
        return lax.scan(lambda c, _: (inp.sin(c) * 0.5 + 0.1, None), x, length=steps)[0]

    lines = []
    for steps in (1_000, 10_000, 100_000):
        def f(x, steps=steps):
            return loss(x, steps)

        kept = sum(r.nbytes for r in inert.saved_residuals(f, 0.3))
        seconds = median_time(lambda f=f: inert.grad(f)(0.3), 1)
        lines.append(f"grad of a {steps:,}-step scan: {kept:,} residual bytes, "
                     f"{seconds / steps * 1e6:.1f} µs per step")
    return lines


def _four_input_program(a, b, c, d):
    return inp.sum(inp.sin(a) * inp.exp(b) + inp.tanh(c) * d)


def _inactive_tangent_count() -> str:
    xs = [np.ones(3) for _ in range(4)]
    _, all_active = inert.vjp(_four_input_program, *xs)
    half = (xs[0], inert.Inactive(xs[1]), xs[2], inert.Inactive(xs[3]))
    _, half_active = inert.vjp(_four_input_program, *half)
    n_all = len(all_active.linear.jaxpr.eqns)
    n_half = len(half_active.linear.jaxpr.eqns)
    return (f"tangent equations, sin(a)*exp(b) + tanh(c)*d: {n_all} with all inputs active, "
            f"{n_half} with b and d Inactive")


def _adam_step_line(repeat: int, scale: float) -> str:
    """A jit-ted optimizer step runs at the speed of the numpy code it amounts to."""
    n = max(8, int(256 * scale ** 0.5))
    rng = np.random.default_rng(2)
    params = [rng.standard_normal((n, n)) for _ in range(4)]
    grads = [rng.standard_normal((n, n)) for _ in range(4)]
    init, update, _ = optimizers.adam(1e-3)
    step = inert.jit(update)
    state = step(0, grads, init(params))
    moments = [(p, np.zeros_like(p), np.zeros_like(p)) for p in params]

    def numpy_step(i=1):
        new = []
        for (x, m, v), g in zip(moments, grads):
            m, v = 0.1 * g + 0.9 * m, 0.001 * g * g + 0.999 * v
            m_hat, v_hat = m / (1 - 0.9 ** (i + 1)), v / (1 - 0.999 ** (i + 1))
            new.append((x - 1e-3 * m_hat / (np.sqrt(v_hat) + 1e-8), m, v))
        return new

    t_jit, t_np = median_times([lambda: step(1, grads, state), numpy_step], repeat)
    return (f"jit-ted optimizers.adam step, 4 parameters of {n}x{n}: {t_jit / t_np:.2f}x a "
            "hand-written numpy step")


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed large blocks for reuse instead of returning them to the
    OS. Its default adapts thresholds as the program runs, so whether an 8 MB array
    lands on memory already mapped or on fresh pages (each a page fault, several µs on
    a VM) depends on the incidental layout of the heap, which differs between the two
    sides of a ratio. This applies to both sides; `--default-malloc` skips it."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(libc.mallopt(m_trim_threshold, 1 << 30) and
                libc.mallopt(m_mmap_threshold, 1 << 26))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m inert.benchmarks",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="array sizes relative to docs/benchmarks.md's (1.0)")
    parser.add_argument("--repeat", type=int, default=7, help="runs per median")
    parser.add_argument("--default-malloc", action="store_true",
                        help="leave glibc's memory trimming as it is (see keep_freed_memory)")
    parser.add_argument("--only", help="run one workload (or 'overheads', or 'phases': reverse "
                        "mode's time by phase on W1 and W7, 'replays': transformations "
                        "called repeatedly, 'default-jit': the default backend's calls "
                        "over 5 s, from a cold kernel cache, 'cold-compile': W4's first "
                        "numba call in new processes, on a cold and a filled kernel cache, "
                        "'ilqr': the iLQR loop program under jit, or 'remat': memory "
                        "budgets) and print JSON")
    args = parser.parse_args(argv)
    if args.only and not _ONE_THREAD_FROM_THE_START:
        _restart_with_one_blas_thread(argv)
    if not args.default_malloc:
        keep_freed_memory()
    if args.only == "overheads":
        print(json.dumps(overhead_lines(args.repeat, args.scale)))
    elif args.only == "phases":
        print(json.dumps(phase_lines(args.repeat, args.scale)))
    elif args.only == "replays":
        print(json.dumps(replay_lines(median_times, args.repeat, args.scale)))
    elif args.only == "default-jit":
        print(json.dumps(default_jit_lines(args.scale, args.repeat, median_times)))
    elif args.only == "cold-compile":
        print(json.dumps(cold_compile_lines()))
    elif args.only == "ilqr":
        print(json.dumps([ilqr_line(median_times, args.repeat)]))
    elif args.only == "remat":
        print(json.dumps(remat_lines(median_times, args.repeat, args.scale)))
    elif args.only:
        (w,) = [w for w in workloads(args.scale) if w.key == args.only]
        print(json.dumps(gradient_row(w, args.repeat)))
    else:
        _run_each_in_its_own_process(args, argv)


def _restart_with_one_blas_thread(argv) -> None:
    """`-m inert.benchmarks` loads numpy (through inert) before this module can set the
    thread variables, and BLAS reads them when it loads: a measurement started from a
    shell starts again as a fresh process that has them."""
    env = {**os.environ, **{v: "1" for v in _THREAD_VARIABLES}}
    argv = list(argv if argv is not None else sys.argv[1:])
    os.execve(sys.executable, [sys.executable, "-m", "inert.benchmarks", *argv], env)


def _run_each_in_its_own_process(args, argv) -> None:
    """One process per workload: each starts from the same state of the Python heap and
    the allocator, whatever ran before it, so its ratios do not depend on the order."""
    print(f"glibc keeps freed memory for reuse: {not args.default_malloc}\n")
    passed = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--only"]
    steps = {w.key: f"{w.key}, {w.description}" for w in workloads(args.scale)}
    progress = Progress(len(steps) + 6)  # and the overheads, phases, replays, default jit,
    # cold compile, remat

    def run(key: str, **env):  # each process gets the thread variables from its environment
        with progress.step(steps.get(key, key)):
            out = subprocess.run([sys.executable, "-m", "inert.benchmarks", *passed, "--only",
                                  key], env={**os.environ, **{v: "1" for v in _THREAD_VARIABLES},
                                             **env},
                                 check=True, stdout=subprocess.PIPE, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    print(format_gradient_rows([run(key) for key in steps]))
    print(legend(args.scale))
    print()
    for line in run("overheads"):
        print("- " + line)
    print("\nReverse mode by phase, CPU ms per call (medians):")
    for line in run("phases"):
        print("- " + line)
    print("\nTransformations called repeatedly (medians, ratios in one run):")
    for line in run("replays"):
        print("- " + line)
    print("\nThe default jit over 5 s of calls, from a cold kernel cache:")
    with tempfile.TemporaryDirectory() as cold:
        for line in run("default-jit", INERT_CACHE_DIR=cold):
            print("- " + line)
    print("\nW4's first call from a new process (benchmarks/default_jit.py):")
    for line in run("cold-compile"):
        print("- " + line)
    print("\nMemory budgets (benchmarks/remat.py):")
    for line in run("remat"):
        print("- " + line)
    progress.done()


if __name__ == "__main__":
    main()
