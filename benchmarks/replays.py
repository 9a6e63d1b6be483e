"""Transformations called repeatedly (issue 28): `python -m inert.benchmarks --only replays`.

Each line is a ratio of medians measured in the same run:

* `grad` through a `custom_vjp` whose `bwd` is the analytic gradient, against the
  replayed plain `grad` of the same function (the MLP loss of W2, and softplus on a
  vector: a few operations, where a call's fixed costs show);
* a repeated `jvp(grad(f))` Hessian-vector product on a 600-op scalar chain, against
  the replayed `grad(f)`;
* a repeated `jacrev` of the MLP's per-example losses and `hessian` in its first bias,
  per row of the result, against the replayed `grad` of the loss;
* W7's first call (the plain path: `functools.partial` is never replayed) against the
  hand-written numpy gradient of the same chain.
"""

from __future__ import annotations

import functools

import numpy as np

import inert
import inert.numpy as inp

from .jax_column import jax_available, jax_module, jax_port
from .workloads import mlp_args, mlp_loss, w7, w7_numpy


def _chain(x, n=600):
    for i in range(n):
        x = inp.sin(x) if i % 3 == 0 else (x * 0.999 if i % 3 == 1 else x + 0.001)
    return x


def _softplus_loss(x):
    return inp.sum(inp.logaddexp(x, 0.0))


@inert.custom_vjp
def _custom_softplus_loss(x):
    return inp.sum(inp.logaddexp(x, 0.0))


_custom_softplus_loss.defvjp(lambda x: (inp.sum(inp.logaddexp(x, 0.0)), x),
                             lambda x, ct: (ct / (1.0 + inp.exp(-x)),))


@inert.custom_vjp
def _custom_mlp_loss(W1, b1, W2, b2, W3, b3, X, Y):  # noqa: N803 — the workload's names
    return mlp_loss(W1, b1, W2, b2, W3, b3, X, Y)


def _mlp_fwd(W1, b1, W2, b2, W3, b3, X, Y):  # noqa: N803
    h1 = inp.tanh(X @ W1 + b1)
    h2 = inp.tanh(h1 @ W2 + b2)
    diff = (h2 @ W3 + b3 - Y) / X.shape[0]
    return 0.5 * X.shape[0] * inp.sum(diff ** 2), (W1, W2, W3, X, h1, h2, diff)


def _mlp_bwd(res, ct):
    W1, W2, W3, X, h1, h2, diff = res  # noqa: N806
    d_out = ct * diff
    d_h2 = (d_out @ W3.T) * (1 - h2 ** 2)
    d_h1 = (d_h2 @ W2.T) * (1 - h1 ** 2)
    return (X.T @ d_h1, d_h1.sum(0), h1.T @ d_h2, d_h2.sum(0), h2.T @ d_out, d_out.sum(0),
            None, None)


_custom_mlp_loss.defvjp(_mlp_fwd, _mlp_bwd)


def _per_example_losses(W1, b1, W2, b2, W3, b3, X, Y):  # noqa: N803
    h1 = inp.tanh(X @ W1 + b1)
    h2 = inp.tanh(h1 @ W2 + b2)
    return 0.5 * inp.sum((h2 @ W3 + b3 - Y) ** 2, axis=1)


def replay_lines(median_times, repeat: int, scale: float) -> list[str]:
    """The lines of the module docstring, timed by `median_times(fs, repeat)`."""
    rng = np.random.default_rng(0)
    args = mlp_args(rng, max(8, int(64 * scale)), 32, 8)
    x = rng.standard_normal(max(10, int(1000 * scale)))
    lines = []
    for what, plain, custom, call_args in [
            ("the MLP loss", mlp_loss, _custom_mlp_loss, args),
            (f"softplus of {x.size:,} values", _softplus_loss, _custom_softplus_loss, (x,))]:
        t_plain, t_custom = median_times(
            [functools.partial(inert.grad(plain), *call_args),
             functools.partial(inert.grad(custom), *call_args)], repeat)
        lines.append(f"grad through a custom_vjp of {what} (its bwd the analytic gradient): "
                     f"{t_custom / t_plain:.2f}x the replayed plain grad (target ≤ 1.3x)")
    g = inert.grad(_chain)
    t_grad, t_hvp = median_times([lambda: g(0.3), lambda: inert.jvp(g, (0.3,), (1.0,))],
                                 repeat)
    lines.append(f"jvp(grad) Hessian-vector product, 600-op scalar chain: {t_hvp / t_grad:.2f}x "
                 "the replayed grad (target ≤ 4x)")
    lines += _jacobian_lines(median_times, repeat, args)
    lines.append(_first_call_line(median_times, repeat))
    lines.append(_jax_line(median_times, repeat, args))
    return lines


def _jacobian_lines(median_times, repeat: int, args) -> list[str]:
    grad_loss = inert.grad(mlp_loss)
    jac = inert.jacrev(_per_example_losses)
    hess = inert.hessian(lambda b1: mlp_loss(args[0], b1, *args[2:]))
    t_grad, t_jac, t_hess = median_times(
        [lambda: grad_loss(*args), lambda: jac(*args), lambda: hess(args[1])], repeat)
    rows, b1_size = args[6].shape[0], args[1].size
    return [f"jacrev of the MLP's {rows} per-example losses: {t_jac / t_grad / rows:.3f}x the "
            f"replayed grad of the loss per row ({t_jac / t_grad:.2f}x in all; target ≤ 4x "
            "per row)",
            f"hessian of the MLP loss in b1 ({b1_size} rows): "
            f"{t_hess / t_grad / b1_size:.3f}x the replayed grad per row "
            f"({t_hess / t_grad:.2f}x in all; target ≤ 4x per row)"]


def _first_call_line(median_times, repeat: int) -> str:
    x = np.float64(0.3)
    first = inert.grad(functools.partial(w7))  # no code object: never replayed
    t_first, t_numpy = median_times([lambda: first(x), lambda: w7_numpy(x)],
                                    max(3, repeat // 2))
    return (f"W7's first call (the plain path): {t_first / t_numpy:.0f}x the hand-written "
            f"numpy gradient ({t_first / 2000 * 1e6:.1f} µs per op; target ≤ 80x)")


def _jax_line(median_times, repeat: int, args) -> str:
    """The same ratios of `jax.jit`'s programs (one thread), where jax is installed."""
    if not jax_available():
        return "JAX: n/a (jax is not installed)"
    jax = jax_module()
    chain, loss, losses = jax_port(_chain), jax_port(mlp_loss), jax_port(_per_example_losses)
    args = [jax.device_put(a) for a in args]
    grad_chain = jax.jit(jax.grad(chain))
    hvp = jax.jit(lambda x, v: jax.jvp(jax.grad(chain), (x,), (v,)))
    grad_loss, jac = jax.jit(jax.grad(loss)), jax.jit(jax.jacrev(losses))
    hess = jax.jit(jax.hessian(lambda b1: loss(args[0], b1, *args[2:])))
    t_grad, t_hvp, t_loss, t_jac, t_hess = median_times(
        [lambda: jax.block_until_ready(grad_chain(0.3)),
         lambda: jax.block_until_ready(hvp(0.3, 1.0)),
         lambda: jax.block_until_ready(grad_loss(*args)),
         lambda: jax.block_until_ready(jac(*args)),
         lambda: jax.block_until_ready(hess(args[1]))], repeat)
    rows, b1_size = args[6].shape[0], args[1].size
    return (f"JAX jit, same run: jvp(grad) {t_hvp / t_grad:.2f}x grad on the chain; "
            f"jacrev {t_jac / t_loss / rows:.3f}x and hessian {t_hess / t_loss / b1_size:.3f}x "
            "grad per row on the MLP")
