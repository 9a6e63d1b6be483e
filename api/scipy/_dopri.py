"""The Dormand–Prince 5(4) integrator behind `odeint`, on one flat state vector.

Each interval between two requested times is a `while_loop` of attempted steps,
clipped to land exactly on the interval's end; the loop over intervals is a `scan`
that carries the state, its derivative (first-same-as-last) and the step size. The
step-size control (the error ratio and the next step) is a constant for
differentiation (`stop_gradient`): forward mode through the solver differentiates the
Runge–Kutta formulas along the accepted steps, the derivative of the numerical
solution.
"""

from __future__ import annotations

import numpy as np

from ...primitives.control.scan import scan
from ...primitives.control.while_loop import while_loop
from .. import numpy as inp

# The Dormand–Prince tableau: nodes, stage weights, 5th-order weights (which are the
# last stage's, so the derivative at the new point is the 7th stage: FSAL), and the
# difference between the 5th- and embedded 4th-order weights (the error estimate).
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
)
_B5 = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_E = tuple(b5 - b4 for b5, b4 in zip((*_B5, 0.0), _B4))
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0


def _combine(weights, ks):
    total = 0.0
    for w, k in zip(weights, ks):
        if w:
            total = total + w * k
    return total


def _rms(x):
    return inp.sqrt(inp.mean(inp.square(x)))


def _step(fun, y, f, t, h):
    """One Dormand–Prince step: (y_new, f_new, error estimate)."""
    ks = [f]
    for c, a in zip(_C[1:], _A[1:]):
        ks.append(fun(y + h * _combine(a, ks), t + c * h))
    y_new = y + h * _combine(_B5, ks)
    f_new = fun(y_new, t + h)
    return y_new, f_new, h * _combine(_E, [*ks, f_new])


def _error_ratio(error, y, y_new, rtol, atol):
    scale = atol + rtol * inp.maximum(inp.abs(y), inp.abs(y_new))
    return _rms(error / scale)


def initial_step(fun, y0, t0, f0, rtol, atol):
    """Hairer, Nørsett and Wanner's starting step for a 5th-order method."""
    scale = atol + inp.abs(y0) * rtol
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    tiny = inp.logical_or(d0 < 1e-5, d1 < 1e-5)
    h0 = inp.where(tiny, 1e-6, 0.01 * d0 / inp.where(tiny, 1.0, d1))
    f1 = fun(y0 + h0 * f0, t0 + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    largest = inp.maximum(d1, d2)
    flat = largest <= 1e-15
    h1 = inp.where(flat, inp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / inp.where(flat, 1.0, largest)) ** (1 / 5))
    return inp.stop_gradient(inp.minimum(100 * h0, h1))


def solve(fun, y0, ts, rtol, atol, mxstep, hmax):
    """The solution of y' = fun(y, t) at the increasing times `ts`, from y(ts[0]) = y0
    (stacked on a leading axis); nan from an interval that needs more than `mxstep`
    steps on."""
    f0 = fun(y0, ts[0])
    h0 = initial_step(fun, y0, ts[0], f0, rtol, atol)

    def interval(carry, target):
        def unfinished(state):
            _, _, t, _, n = state
            return inp.logical_and(t < target, n < mxstep)

        def attempt(state):
            y, f, t, h, n = state
            remaining = target - t
            h = inp.minimum(inp.minimum(h, remaining), hmax)
            y_new, f_new, error = _step(fun, y, f, t, h)
            ratio = inp.stop_gradient(_error_ratio(error, y, y_new, rtol, atol))
            accept = ratio <= 1.0
            factor = inp.where(ratio == 0, _MAX_FACTOR, _SAFETY * inp.where(
                ratio == 0, 1.0, ratio) ** -0.2)
            h_next = inp.stop_gradient(h * inp.clip(factor, _MIN_FACTOR, _MAX_FACTOR))
            t_new = inp.where(h == remaining, target, t + h)
            return (inp.where(accept, y_new, y), inp.where(accept, f_new, f),
                    inp.where(accept, t_new, t), h_next, n + 1)

        y, f, t, h = carry
        y, f, t, h, _ = while_loop(unfinished, attempt, (y, f, t, h, 0))
        return (y, f, t, h), inp.where(t < target, np.nan, y)

    _, ys = scan(interval, (y0, f0, ts[0], h0), ts[1:])
    return inp.concatenate([y0[None], ys])
