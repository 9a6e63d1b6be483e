"""`inert.numpy.linalg`: the norms. Decompositions (det, inv, solve, svd) need
primitives inert does not have yet.
"""

from __future__ import annotations

import numpy as np

from ...core.avals import is_float
from ...core.trace import get_aval
from ...primitives import elementwise as ew
from . import _reductions as nr
from ._array import return_arrays_from
from ._arrays import cast, normalize_axes, operand, shape_error
from ._shape import squeeze


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 — numpy's signature
    """numpy.linalg.norm: a vector norm over one axis, a matrix norm over two (the
    Frobenius norm by default). Integer inputs are converted to float64 first."""
    x = operand(x)
    if not is_float(get_aval(x).dtype):
        x = cast(x, np.float64)
    ndim = get_aval(x).ndim
    if axis is None and ord is None:
        return ew.sqrt(nr.sum(ew.mul(x, x), None, keepdims=keepdims))
    axes = normalize_axes(axis, ndim, "norm")
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise shape_error(f"norm: a norm is over one axis or two, not {axes}")


def _vector_norm(x, ord, axes, keepdims: bool):  # noqa: A002
    if ord is None or ord == 2:
        return ew.sqrt(nr.sum(ew.mul(x, x), axes, keepdims=keepdims))
    if ord == np.inf:
        return nr.max(ew.abs(x), axes, keepdims=keepdims)
    if ord == -np.inf:
        return nr.min(ew.abs(x), axes, keepdims=keepdims)
    if ord == 0:
        return cast(nr.count_nonzero(x, axes, keepdims=keepdims), get_aval(x).dtype)
    if ord == 1:
        return nr.sum(ew.abs(x), axes, keepdims=keepdims)
    powers = ew.pow(ew.abs(x), float(ord))
    return ew.pow(nr.sum(powers, axes, keepdims=keepdims), 1.0 / ord)


_MATRIX_NORMS = {
    # ord: (the absolute sums, the reduction of the sums, which of the two axes is summed)
    1: (nr.sum, nr.max, 0),
    -1: (nr.sum, nr.min, 0),
    np.inf: (nr.sum, nr.max, 1),
    -np.inf: (nr.sum, nr.min, 1),
}


def _matrix_norm(x, ord, axes, keepdims: bool):  # noqa: A002
    """Frobenius, or the max/min absolute column (ord ±1) or row (ord ±inf) sum."""
    if ord is None or ord == "fro":
        return ew.sqrt(nr.sum(ew.mul(x, x), axes, keepdims=keepdims))
    if ord not in _MATRIX_NORMS:
        raise NotImplementedError(f"norm: matrix norm ord={ord!r} needs a singular value "
                                  "decomposition, which inert has no primitive for")
    inner, outer, summed = _MATRIX_NORMS[ord]
    sums = inner(ew.abs(x), axes[summed], keepdims=True)
    out = outer(sums, axes[1 - summed], keepdims=True)
    return out if keepdims else squeeze(out, axes)

__all__ = [
    "norm",
]
return_arrays_from(globals(), __all__)


def __dir__():
    return __all__
