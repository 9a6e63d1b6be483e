"""`inert.scipy.integrate`: `odeint`, JAX's adaptive ODE solver, with its reverse mode
by the adjoint method.

`odeint(func, y0, t, *args)` solves `dy/dt = func(y, t, *args)` (y a pytree) with the
Dormand–Prince 5(4) pair (`_dopri`) and returns y at the increasing times t, stacked
on a leading axis.

Reverse mode is a `custom_vjp`: the backward pass solves the adjoint system
a' = -a ∂f/∂y, g' = -a ∂f/∂args backwards from each requested time to the previous
one, together with y itself (restarted from the stored solution at each requested
time). So the backward pass keeps only the solution at the requested times, the
times and the arguments, never the solver's internal steps. As in JAX, `fwd` and each
backward interval call the adjoint solver itself, so an outer derivative of the
solution or of the adjoint solve goes through the adjoint method again: grad of grad
works. Being a custom_vjp, this
version refuses forward mode, as JAX's does; `odeint(..., differentiation="forward")`
is the solver itself, whose jvp differentiates it through its loops (forward mode,
jacfwd), and which refuses reverse mode (a while loop keeps no history).

A value to differentiate must reach `func` through `args`: JAX converts closures,
inert raises a NonDifferentiableError for a closed-over value being differentiated
(its cotangent would be lost).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.avals import is_float
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.trace import Tracer, get_aval
from ...core.typing import ArrayLike
from ...primitives.control.custom_vjp import custom_vjp
from ...primitives.control.scan import scan
from .. import numpy as inp
from ..numpy._array import Array
from ..transforms import vjp
from ..vmap import vmap
from ._dopri import solve


def _ravel(tree):
    """(flat float vector, its inverse) for a pytree of arrays."""
    leaves, treedef = tree_flatten(tree)
    leaves = [inp.asarray(x) for x in leaves]
    shapes = [get_aval(x).shape for x in leaves]
    dtype = np.result_type(*(get_aval(x).dtype for x in leaves), np.float32)
    sizes = [int(np.prod(s)) for s in shapes]
    flat = inp.concatenate([inp.ravel(inp.astype(x, dtype)) for x in leaves]) if leaves \
        else np.zeros(0, dtype)

    def unravel(vector):
        parts = inp.split(vector, np.cumsum(sizes)[:-1]) if len(sizes) > 1 else [vector]
        return tree_unflatten(treedef, [inp.reshape(p, s) for p, s in zip(parts, shapes)])

    return flat, unravel


def odeint(func: Callable[..., Any], y0: ArrayLike, t: ArrayLike, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = np.inf, hmax: float = np.inf,
           differentiation: str = "adjoint") -> Array:
    """`y(t)` for `dy/dt = func(y, t, *args)`, `y(t[0]) = y0`, at the increasing times `t`.

    `differentiation`: "adjoint" (reverse mode by the adjoint method, as JAX) or
    "forward" (forward mode through the solver)."""
    if differentiation not in ("adjoint", "forward"):
        raise ValueError(f"odeint: differentiation must be 'adjoint' or 'forward', got "
                         f"{differentiation!r}")
    y_flat, unravel = _ravel(y0)
    dtype = get_aval(y_flat).dtype
    t = inp.astype(t, dtype)  # the solver's clock runs in the state's precision
    if not isinstance(t, Tracer) and np.any(np.diff(t) < 0):
        raise ValueError("odeint: the times t must be increasing")
    options = (rtol, atol, mxstep, hmax)

    def fun(y, t, *args):  # in y's dtype, so that the solver's loop carries one type
        return inp.astype(_ravel(func(unravel(y), t, *args))[0], dtype)

    if differentiation == "adjoint":
        ys = _adjoint_solver(fun, options)(y_flat, t, *args)
    else:
        ys = solve(lambda y, s: fun(y, s, *args), y_flat, t, *options)
    return vmap(unravel)(ys)


def _adjoint_solver(fun, options):
    """`(y0, t, *args) -> ys` as a custom_vjp whose backward pass is the adjoint solve."""

    def forward_solve(y0, t, *args):
        return solve(lambda y, s: fun(y, s, *args), y0, t, *options)

    def fwd(y0, t, *args):  # the adjoint solver again (an outer derivative of ys goes
        ys = _adjoint_solver(fun, options)(y0, t, *args)  # through bwd too): a new one, as
        return ys, (ys, t, args)  # `solver` itself would make a reference cycle with fwd

    def bwd(residuals, ct):
        ys, t, args = residuals
        return _adjoint(fun, options, ys, t, args, ct)

    solver = custom_vjp(forward_solve)
    solver.defvjp(fwd, bwd)
    return solver


def _adjoint(fun, options, ys, t, args, ct):
    """The cotangents of (y0, t, *args) given those of the solution ys at the times t:
    the adjoint a and the argument gradient g, integrated backwards between
    consecutive times together with y (s = -t, so that time increases). Each interval
    is solved by the adjoint solver again, its arguments passed as arguments: so the
    backward pass has a backward pass of its own, and grad of grad works (as in JAX)."""
    leaves, args_tree = tree_flatten(args)
    floats = [i for i, x in enumerate(leaves) if is_float(get_aval(x).dtype)]
    params, unravel_params = _ravel([leaves[i] for i in floats])
    n, m = get_aval(ys).shape[1], get_aval(params).shape[0]

    def augmented(z, s, *args):
        leaves = tree_flatten(args)[0]

        def with_params(p):
            full = list(leaves)
            for i, x in zip(floats, unravel_params(p)):
                full[i] = x
            return tree_unflatten(args_tree, full)

        y, a = z[:n], z[n:2 * n]
        f, pullback = vjp(lambda y, p: fun(y, -s, *with_params(p)), y,
                          _ravel([leaves[i] for i in floats])[0])
        ct_y, ct_p = pullback(a)
        return inp.concatenate([-f, ct_y, ct_p])

    backwards = _adjoint_solver(augmented, options)

    def interval(carry, x):
        a, g = carry
        y_end, ct_end, t_end, t_start = x
        a = a + ct_end
        z = backwards(inp.concatenate([y_end, a, g]), inp.stack([-t_end, -t_start]),
                      *args)[1]
        t_ct = inp.vdot(ct_end, fun(y_end, t_end, *args))
        return (z[n:2 * n], z[2 * n:]), t_ct

    zeros = inp.zeros(n + m, get_aval(ys).dtype)
    (a, g), t_cts = scan(interval, (zeros[:n], zeros[n:]),
                         (ys[1:], ct[1:], t[1:], t[:-1]), reverse=True)
    t0_ct = -inp.vdot(a, fun(ys[0], t[0], *args))
    param_cts = iter(unravel_params(g))
    leaf_cts = [next(param_cts) if i in floats else None for i in range(len(leaves))]
    return (a + ct[0], inp.concatenate([t0_ct[None], t_cts]),
            *tree_unflatten(args_tree, leaf_cts))


__all__ = ["odeint"]


def __dir__():
    return __all__
