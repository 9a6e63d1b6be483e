"""`inert.numpy`: the jax.numpy subset, on inert's primitives.

Functions take arrays, Python scalars or traced values, broadcast like numpy and
give numpy's dtypes (float64 by default). Each is a thin wrapper that turns numpy's
calling conventions (axis=None, keepdims, negative axes) into primitive params.
"""

from __future__ import annotations

import numpy as np

from ..core.trace import get_aval
from . import elementwise as ew
from . import structural as st

float64, float32, int64, int32, bool_ = np.float64, np.float32, np.int64, np.int32, np.bool_
pi, e, inf, nan = np.pi, np.e, np.inf, np.nan

sin, cos, exp, log, tanh = ew.sin, ew.cos, ew.exp, ew.log, ew.tanh
add, subtract, multiply, divide, negative = ew.add, ew.sub, ew.mul, ew.div, ew.neg
greater = ew.gt


def _axes(axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(int(a) % ndim if ndim else int(a) for a in axes)


def sum(a, axis=None, keepdims=False):  # noqa: A001 — numpy's name
    aval = get_aval(a)
    axes = _axes(axis, aval.ndim)
    out = st.reduce_sum(a, axes)
    if keepdims:
        out = st.reshape(out, [1 if i in axes else d for i, d in enumerate(aval.shape)])
    return out
