"""`inert.test_util`: `check_grads`, JAX's derivative check by finite differences.

Forward mode: the jvp along random tangents against central differences
`(f(x + eps t) - f(x - eps t)) / 2 eps`. Reverse mode: the vjp of a random cotangent
`u` against the same differences by the inner-product identity
`<u, J t> = <Jᵀ u, t>`. For `order > 1` both are applied again to the functions
`x -> jvp(f, x, t)` and `x -> vjp(f, x)(u)`. A failure names the mode, the order, the
output leaf and the index of the worst mismatch.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from ..core.avals import float0, is_float
from ..core.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_map
from ..core.trace import get_aval
from .transforms import jvp, vjp

_DEFAULT_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 1e-2,
                np.dtype(np.float16): 1e-1}


def _is_float_leaf(x) -> bool:
    return is_float(get_aval(x).dtype)


def _random_like(tree, rng):
    def draw(x):
        aval = get_aval(x)
        if not is_float(aval.dtype):
            return np.zeros(aval.shape, float0)
        return rng.standard_normal(aval.shape).astype(aval.dtype)

    return tree_map(draw, tree)


def _numerical_jvp(f, args, tangents, eps):
    def shifted(sign):
        return tuple(tree_map(lambda x, t: x + sign * eps * t if _is_float_leaf(x) else x, a, ta)
                     for a, ta in zip(args, tangents))

    return tree_map(lambda p, m: (np.asarray(p, np.float64) - m) / (2 * eps),
                    f(*shifted(1)), f(*shifted(-1)))


def _tolerance(tree, given):
    if given is not None:
        return given
    dtypes = [get_aval(x).dtype for x in tree_flatten(tree)[0] if _is_float_leaf(x)]
    return max((_DEFAULT_TOL.get(d, 1e-5) for d in dtypes), default=1e-5)


def _assert_close(what: str, got, want, atol, rtol) -> None:
    """Every leaf of `got` is within `atol + rtol |want|`, or the worst one is named."""
    worst = None
    got_leaves = tree_flatten(got)[0]
    for (path, w), g in zip(tree_flatten_with_path(want)[0], got_leaves):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        excess = np.abs(g - w) - (atol + rtol * np.abs(w))
        if excess.size and np.max(excess) > 0:
            index = np.unravel_index(np.argmax(excess), excess.shape)
            if worst is None or excess[index] > worst[0]:
                worst = (excess[index], keystr(path) or "output", index, g[index], w[index])
    if worst is not None:
        _, where, index, g, w = worst
        at = f" at index {tuple(int(i) for i in index)}" if index else ""
        raise AssertionError(f"check_grads: {what}: worst mismatch in {where}{at}: {g!r} "
                             f"versus finite differences {w!r} (atol={atol}, rtol={rtol})")


def _inner(a, b) -> float:
    return float(sum(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64))
                     for x, y in zip(tree_flatten(a)[0], tree_flatten(b)[0])
                     if x is not None and y is not None and np.asarray(x).dtype != float0
                     and np.asarray(y).dtype != float0))


def _check_jvp(f, args, *, atol=None, rtol=None, eps=1e-4, rng=None, order=1):
    rng = np.random.default_rng(0) if rng is None else rng
    tangents = _random_like(args, rng)
    _, got = jvp(f, args, tangents)
    want = _numerical_jvp(f, args, tangents, eps)
    tol_a, tol_r = _tolerance(args, atol), _tolerance(args, rtol)
    _assert_close(f"fwd (order {order}), the jvp", got, want, tol_a, tol_r)
    return tangents


def _check_vjp(f, args, *, atol=None, rtol=None, eps=1e-4, rng=None, order=1):
    rng = np.random.default_rng(1) if rng is None else rng
    out, f_vjp = vjp(f, *args)
    cotangent = _random_like(out, rng)
    tangents = _random_like(args, rng)
    reverse = _inner(f_vjp(cotangent), tangents)
    forward = _inner(cotangent, _numerical_jvp(f, args, tangents, eps))
    tol_a, tol_r = _tolerance(args, atol), _tolerance(args, rtol)
    _assert_close(f"rev (order {order}), <vjp(u), t> against <u, J t>", reverse, forward,
                  tol_a, tol_r)
    return cotangent


def check_grads(f: Callable, args: Sequence[Any], order: int,
                modes: str | Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Check f's jvp (`"fwd"`) and vjp (`"rev"`) against finite differences at `args`
    (a tuple of arguments), and theirs again up to `order`."""
    if isinstance(modes, str):
        modes = (modes,)
    if not set(modes) <= {"fwd", "rev"}:
        raise ValueError(f"check_grads: modes are 'fwd' and 'rev', not {modes}")
    eps = 1e-4 if eps is None else eps
    args = tuple(args)
    rngs = iter(np.random.default_rng(seed) for seed in itertools.count())
    fs = [f]
    for level in range(1, order + 1):
        next_fs = []
        for g in fs:
            if "fwd" in modes:
                t = _check_jvp(g, args, atol=atol, rtol=rtol, eps=eps, rng=next(rngs),
                              order=level)
                next_fs.append(lambda *xs, g=g, t=t: jvp(g, xs, t)[1])
            if "rev" in modes:
                u = _check_vjp(g, args, atol=atol, rtol=rtol, eps=eps, rng=next(rngs),
                              order=level)
                next_fs.append(lambda *xs, g=g, u=u: vjp(g, *xs)[1](u))
        fs = next_fs


__all__ = ["check_grads"]


def __dir__():
    return __all__
