"""The benchmark's JAX column: `jax.jit(jax.value_and_grad(f))` of a workload, where
jax is importable (it is not a dependency: without it the column says n/a).

A workload's JAX port is its own function with `inert.numpy`, `inert.lax` and
`inert.scipy.linalg` swapped for JAX's, which is how users port programs the other
way; those using what JAX lacks (refs, stax) have none. JAX runs in float64 on one
thread, as numpy does here: XLA's thread pool would otherwise time several cores
against one.
"""

from __future__ import annotations

import importlib.util
import os
import time
import types
from typing import Callable

import numpy as np

PORTED = ("W1", "W2", "W2-all", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "W10", "W11", "W12",
          "FFT")
_XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


def jax_available() -> bool:
    return importlib.util.find_spec("jax") is not None


def jax_module():
    """jax, configured for the benchmark (before it makes any array)."""
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_XLA_ONE_THREAD}".strip()
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def jax_port(f: Callable, **namespaces) -> Callable:
    """`f` reading JAX's namespaces where it reads inert's: its nested functions too
    (they share its globals), and the functions of its module it calls by name;
    `namespaces` replace some of them."""
    jax = jax_module()
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl

    names = {"inp": jnp, "lax": jax.lax, "isl": jsl, "jacfwd": jax.jacfwd, **namespaces}
    scope = {**f.__globals__, **{k: v for k, v in names.items() if k in f.__globals__}}
    for name, value in scope.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is f.__globals__:
            scope[name] = _in_scope(value, scope)
    return _in_scope(f, scope)


def _in_scope(f: Callable, scope: dict) -> Callable:
    return types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__)


def jax_gradient(f: Callable, plain_args: tuple, argnums: tuple, has_aux: bool) -> Callable:
    """A call of JAX's jitted value and gradient of `f` at `plain_args` (already on
    JAX's device, so no transfer is timed), waiting for its result."""
    jax = jax_module()
    g = jax.jit(jax.value_and_grad(jax_port(f), argnums=argnums, has_aux=has_aux))
    args = [jax.device_put(a) for a in plain_args]
    return lambda: jax.block_until_ready(g(*args))


def jax_call(key: str, f: Callable, plain_args: tuple, argnums: tuple,
             has_aux: bool) -> tuple[Callable, float] | None:
    """JAX's jitted value and gradient of workload `key` as a call to time, and the
    seconds of its first call (tracing and XLA's compile); None where jax is absent or
    the workload unported."""
    if key not in PORTED or not jax_available():
        return None
    call = jax_gradient(f, plain_args, argnums, has_aux)
    start = time.perf_counter()
    call()
    return call, time.perf_counter() - start


def jax_first_call(f: Callable, x, *static) -> float | None:
    """Seconds of the first call of `jax.jit(jax.grad(f))` at `x` (`static` fixed), or
    None without jax."""
    if not jax_available():
        return None
    jax = jax_module()
    port = jax_port(f)
    g = jax.jit(jax.grad(lambda x: port(x, *static)))
    start = time.perf_counter()
    jax.block_until_ready(g(x))
    return time.perf_counter() - start


def jax_checkpointed_bytes(f: Callable, plain_args: tuple, *static) -> int | None:
    """The bytes JAX's vjp of `f` at `plain_args` (`static` fixed) keeps, its
    `saved_residuals`, when each scan body is wrapped in `jax.checkpoint`; None without
    jax."""
    if not jax_available():
        return None
    jax = jax_module()
    from jax._src.ad_checkpoint import saved_residuals

    def scan(body, *args, **kwargs):
        return jax.lax.scan(jax.checkpoint(body), *args, **kwargs)

    port = jax_port(f, lax=types.SimpleNamespace(**{**vars(jax.lax), "scan": scan}))
    return sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize
               for a, _ in saved_residuals(lambda *a: port(*a, *static), *plain_args))
